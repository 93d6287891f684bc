"""Quality measures of a linear map Ψ on a point set or a secant set.

* :func:`secant_distortions` — ‖Ψv‖² / ‖v‖² − 1 for every secant (the data of NuMax Fig. 4);
* :func:`isometry_constants` — the empirical restricted-isometry constants of RIP (2): the
  smallest δ_lower, δ_upper with (1 − δ_lower)‖v‖² ≤ ‖Ψv‖² ≤ (1 + δ_upper)‖v‖², like the
  ``get_rip_constants`` routine of the NuMax code; δ = max of the two (Fig. 3(a));
* :func:`distortion_histogram` — counts of the distortions (Fig. 4);
* :func:`dimension_for_delta` — the smallest M at which a family of maps (PCA, Gaussian)
  reaches a given δ (the baselines of Fig. 3(a) and ADAGIO Table 3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validate import as_matrix, check_delta
from ..secants import iter_secant_blocks

__all__ = [
    "IsometryConstants",
    "secant_distortions",
    "isometry_constants",
    "distortion_histogram",
    "dimension_for_delta",
]


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
