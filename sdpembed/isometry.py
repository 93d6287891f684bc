"""Quality measures of a linear map Ψ on a point set or a secant set.

* :func:`secant_distortions` — ‖Ψv‖² / ‖v‖² − 1 for every secant (the data of NuMax Fig. 4);
* :func:`isometry_constants` — the empirical restricted-isometry constants of RIP (2): the
  smallest δ_lower, δ_upper with (1 − δ_lower)‖v‖² ≤ ‖Ψv‖² ≤ (1 + δ_upper)‖v‖², like the
  ``get_rip_constants`` routine of the NuMax code; δ = max of the two (Fig. 3(a));
* :func:`distortion_histogram` — counts of the distortions (Fig. 4);
* :func:`dimension_for_delta` — the smallest M at which a family of maps (PCA, Gaussian)
  reaches a given δ (the baselines of Fig. 3(a) and ADAGIO Table 3);
* :class:`SecantSet` — a fixed set of secants (all pairs of a point set, or given rows) with
  their norms cached, on which many maps are evaluated under either distortion measure:
  ``"rip"``, NuMax's RIP (2), ‖Ψv‖²/‖v‖² − 1, or ``"adagio"``, ADAGIO's distortion (2)–(3),
  ‖Ψv‖/‖v‖ − 1; the isometry constant is the largest absolute value, or with
  ``exclude_fraction`` the value met by all but that fraction of the secants (NuMax Fig. 3(a),
  "all but 1%").

numpy only, below the estimators: :mod:`sdpembed.linear` selects dimensions and δ by these
measures, and :mod:`sdpembed.validation` re-exports them.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the RIP (2), Fig. 3(a) and Fig. 4.
.. [2] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", Proceedings of the IEEE International Conference on Data Mining (ICDM), 2016.
   Implemented here: the distortion (2)–(3) and Table 3.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._validate import as_matrix, check_delta
from .secants import ZERO_SECANT_RTOL, iter_secant_blocks

__all__ = [
    "IsometryConstants",
    "secant_distortions",
    "isometry_constants",
    "distortion_histogram",
    "dimension_for_delta",
    "MEASURES",
    "SecantSet",
    "distortion_quantile",
    "check_measure",
]

#: Distortion measures: NuMax's RIP (2) on squared norms, ADAGIO's (2)–(3) on norms.
MEASURES = ("rip", "adagio")


@dataclass(frozen=True)
class IsometryConstants:
    """Empirical isometry constants of a map on a set of secants (RIP (2)).

    ``lower = 1 − min ‖Ψv‖²``, ``upper = max ‖Ψv‖² − 1`` over unit secants (each may be
    negative when the map is uniformly expanding or contracting); ``delta = max(lower,
    upper)``; ``n_secants`` counts the secants checked.
    """

    lower: float
    upper: float
    delta: float
    n_secants: int


def _check_map(Psi: np.ndarray, dim: int) -> np.ndarray:
    Psi = as_matrix(Psi, "Psi")
    if Psi.shape[1] != dim:
        raise ValueError(f"Psi must have {dim} columns (the data dimension), got shape {Psi.shape}")
    return Psi


def secant_distortions(Psi: np.ndarray, secants: np.ndarray) -> np.ndarray:
    """‖Ψv_i‖² / ‖v_i‖² − 1 for every row v_i of ``secants`` (nonzero rows)."""
    secants = as_matrix(secants, "secants")
    Psi = _check_map(Psi, secants.shape[1])
    norms2 = np.einsum("ij,ij->i", secants, secants)
    if np.any(norms2 == 0):
        raise ValueError("secants must not contain zero rows")
    projected = secants @ Psi.T
    return np.einsum("ij,ij->i", projected, projected) / norms2 - 1.0


def isometry_constants(
    Psi: np.ndarray,
    *,
    secants: np.ndarray | None = None,
    X: np.ndarray | None = None,
    block_size: int = 65536,
) -> IsometryConstants:
    """Empirical isometry constants of Ψ on ``secants`` or on all pairs of the points ``X``.

    With ``X``, the pairwise secants are streamed in blocks and never materialised.
    """
    if (secants is None) == (X is None):
        raise ValueError("give exactly one of secants or X")
    if secants is not None:
        blocks = [secants]
    else:
        X = as_matrix(X, "X", min_rows=2)
        _check_map(Psi, X.shape[1])
        blocks = (block for _, block in iter_secant_blocks(X, block_size))
    lo, hi, count = np.inf, -np.inf, 0
    for block in blocks:
        if len(block) == 0:
            continue
        d = secant_distortions(Psi, block)
        lo, hi, count = min(lo, float(d.min())), max(hi, float(d.max())), count + len(d)
    if count == 0:
        raise ValueError("no nonzero secants to evaluate")
    return IsometryConstants(lower=-lo, upper=hi, delta=max(-lo, hi), n_secants=count)


def distortion_histogram(
    Psi: np.ndarray, secants: np.ndarray, bins: int | np.ndarray = 50, value_range: tuple[float, float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Histogram (counts, bin_edges) of ‖Ψv‖²/‖v‖² − 1 over ``secants`` (NuMax Fig. 4)."""
    return np.histogram(secant_distortions(Psi, secants), bins=bins, range=value_range)


def dimension_for_delta(
    make_map: Callable[[int], np.ndarray],
    secants: np.ndarray,
    delta: float,
    *,
    max_dim: int | None = None,
) -> int | None:
    """Smallest M ≤ ``max_dim`` whose map ``make_map(M)`` has isometry constant ≤ δ on ``secants``.

    The search is linear in M (random maps are not monotone in M); None if no M works.
    """
    delta = check_delta(delta)
    secants = as_matrix(secants, "secants")
    max_dim = secants.shape[1] if max_dim is None else int(max_dim)
    for M in range(1, max_dim + 1):
        if isometry_constants(make_map(M), secants=secants).delta <= delta:
            return M
    return None


def check_measure(measure: object) -> str:
    """The distortion measure, one of :data:`MEASURES`."""
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}")
    return str(measure)


def check_exclude_fraction(exclude_fraction: object) -> float:
    """A fraction in [0, 1) of secants allowed to exceed the isometry constant."""
    if isinstance(exclude_fraction, bool) or not isinstance(exclude_fraction, (int, float, np.floating)):
        raise ValueError(f"exclude_fraction must be a real number in [0, 1), got {exclude_fraction!r}")
    value = float(exclude_fraction)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"exclude_fraction must lie in [0, 1), got {value}")
    return value


def distortion_quantile(distortions: np.ndarray, exclude_fraction: float = 0.0) -> float:
    """Smallest δ with at most ⌊f·S⌋ of the S distortions above it in absolute value.

    ``exclude_fraction`` f = 0 gives the isometry constant max |d|; f = 0.01 the constant met by
    all but 1% of the secants (NuMax Fig. 3(a)).
    """
    d = np.abs(np.asarray(distortions, dtype=np.float64).ravel())
    if d.size == 0:
        raise ValueError("distortions must not be empty")
    skip = int(np.floor(check_exclude_fraction(exclude_fraction) * d.size))
    index = d.size - 1 - skip
    return float(np.partition(d, index)[index])


#: Pairs whose squared distance falls below this fraction of ‖y_i‖² + ‖y_j‖² (after centring) are
#: recomputed from explicit differences; all others keep the Gram-matrix value, whose relative
#: error is then at most about N·ε_mach / 1e-4 (≈ 1e-9 for N = 1000), typically far less.
GRAM_RECOMPUTE_RTOL = 1e-4


def _pair_sqdists(Y: np.ndarray, block_size: int) -> np.ndarray:
    """‖y_i − y_j‖² for all pairs i < j (row-major order), by Gram blocks with an exact fix-up.

    ‖y_i − y_j‖² = ‖y_i‖² + ‖y_j‖² − 2 y_iᵀy_j loses accuracy only when the distance is small
    next to the norms; those pairs (see :data:`GRAM_RECOMPUTE_RTOL`) are recomputed from
    y_i − y_j. O(n² M) with BLAS instead of O(n² M) memory traffic of explicit differences.
    """
    n = Y.shape[0]
    sq = np.einsum("ij,ij->i", Y, Y)
    rows_per_block = max(1, block_size // max(n, 1))
    columns = np.arange(n)
    out = []
    for r0 in range(0, n - 1, rows_per_block):
        r1 = min(n - 1, r0 + rows_per_block)
        rows, cols = np.nonzero(columns[None, :] > np.arange(r0, r1)[:, None])     # j > i, row-major
        gram = Y[r0:r1] @ Y.T
        rows_abs = rows + r0
        values = sq[rows_abs] + sq[cols] - 2.0 * gram[rows, cols]
        risky = values < GRAM_RECOMPUTE_RTOL * (sq[rows_abs] + sq[cols])
        if np.any(risky):
            diff = Y[rows_abs[risky]] - Y[cols[risky]]
            values[risky] = np.einsum("ij,ij->i", diff, diff)
        out.append(values)
    return np.concatenate(out) if out else np.zeros(0)


class SecantSet:
    """A fixed set of secants on which many linear maps are evaluated (norms computed once).

    Parameters
    ----------
    X : ndarray of shape (n, N), optional
        Points: the secants are all n(n−1)/2 pairs x_i − x_j, i < j (in the order of
        :func:`~sdpembed.secants.all_secants`). Only the (centred) points are stored; a map is
        applied to them once, Y = XΨᵀ, and ‖Ψ(x_i − x_j)‖ = ‖y_i − y_j‖ is read from the Gram
        matrix of Y (pairs close next to their norms are recomputed exactly; see
        :func:`_pair_sqdists`) — O(n²M) rather than O(n²NM).
    secants : ndarray of shape (S, N), optional
        Explicit secants as rows (need not be unit).
    block_size : int
        Entries per Gram block (memory bound).

    Exactly one of ``X`` and ``secants`` is given. Zero secants (duplicate points) are dropped
    with a ``UserWarning``, as in :mod:`sdpembed.secants`.
    """

    def __init__(self, *, X: np.ndarray | None = None, secants: np.ndarray | None = None,
                 block_size: int = 1 << 20) -> None:
        if (X is None) == (secants is None):
            raise ValueError("give exactly one of X and secants")
        if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
            raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
        self.block_size = int(block_size)
        if X is not None:
            X = as_matrix(X, "X", min_rows=2)
            self._points, self._secants = X - X.mean(axis=0), None      # secants are translation invariant
            norms2 = _pair_sqdists(self._points, self.block_size)
            scale = float(np.max(np.abs(X)))
        else:
            V = as_matrix(secants, "secants")
            self._points, self._secants = None, V
            norms2 = np.einsum("ij,ij->i", V, V)
            scale = float(np.max(np.abs(V)))
        keep = np.sqrt(np.maximum(norms2, 0.0)) > ZERO_SECANT_RTOL * max(scale, 1e-300)
        self._keep = None
        if not np.all(keep):
            warnings.warn(f"{int((~keep).sum())} zero secant(s) were dropped", UserWarning, stacklevel=2)
            if self._points is not None:
                self._keep = keep
            else:
                self._secants = self._secants[keep]
            norms2 = norms2[keep]
        if norms2.size == 0:
            raise ValueError("no nonzero secants to evaluate")
        self._norms2 = norms2
        self.n_features = (self._points if self._points is not None else self._secants).shape[1]

    @property
    def n_secants(self) -> int:
        """S, the number of (nonzero) secants."""
        return int(self._norms2.size)

    def ratios(self, Psi: np.ndarray) -> np.ndarray:
        """‖Ψv‖² / ‖v‖² for every secant v."""
        Psi = _check_map(Psi, self.n_features)
        if self._points is None:
            projected = self._secants @ Psi.T
            return np.einsum("ij,ij->i", projected, projected) / self._norms2
        images = np.maximum(_pair_sqdists(self._points @ Psi.T, self.block_size), 0.0)
        return (images if self._keep is None else images[self._keep]) / self._norms2

    def distortions(self, Psi: np.ndarray, measure: str = "rip") -> np.ndarray:
        """Signed distortions: ‖Ψv‖²/‖v‖² − 1 (``"rip"``) or ‖Ψv‖/‖v‖ − 1 (``"adagio"``)."""
        ratio = self.ratios(Psi)
        return ratio - 1.0 if check_measure(measure) == "rip" else np.sqrt(ratio) - 1.0

    def isometry_constant(self, Psi: np.ndarray, measure: str = "rip", exclude_fraction: float = 0.0) -> float:
        """max |distortion|, or the value met by all but ``exclude_fraction`` of the secants."""
        return distortion_quantile(self.distortions(Psi, measure), exclude_fraction)
