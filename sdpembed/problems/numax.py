"""The NuMax family — NuMax (4) and NuMax-Class (7) — as numpy: the instance types, the secant
operator 𝒜 and its adjoint, and the certified dual bound they induce. One unit: the two instance
types, their operator and their certificate are the one SDP (*) below with two kinds of bounds.

For a secant matrix ``V`` whose rows are unit vectors ``v_i`` (NuMax eq. (1)),

    𝒜(X)  = ( v_iᵀ X v_i )_{i=1..S}          (NuMax Sec. 3.1, below eq. (2))
    𝒜*(y) = Σ_i y_i v_i v_iᵀ = Vᵀ diag(y) V    (the adjoint, used in (13))
    𝒜𝒜*   = (V Vᵀ) ∘ (V Vᵀ)                  (an S×S matrix; Hadamard square of the Gram)

Every trace-minimisation SDP of the NuMax family is

    minimise tr P   subject to   lo ≤ 𝒜(P) ≤ hi,   P ⪰ 0,            (*)

with ``lo = 1−δ, hi = 1+δ`` for NuMax (4), and one-sided bounds for NuMax-Class (7)
(``hi = +∞`` on inter-class secants, ``lo = −∞`` on intra-class ones). Its Lagrange dual is

    maximise  g(y) = Σ_i ( lo_i · y_i⁺ − hi_i · y_i⁻ )   subject to   I − 𝒜*(y) ⪰ 0,

so any ``y`` (of the right signs) scaled by ``1/λ_max(𝒜*(y))`` gives a certified lower
bound on the optimum of (*): :func:`certified_lower_bound`.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the secants (1), the operator of Sec. 3.1, the SDPs (4) and
   (7)/(15) with (14), the adjoint in (13).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from .._memory import check_memory, dense_bytes
from .._validate import as_matrix, as_vector, check_delta, check_positive_int
from ..secants import (
    all_secants,
    class_pair_mask,
    iter_labelled_secant_blocks,
    iter_secant_blocks,
    pair_count,
    sample_class_secants,
    sample_secants,
)
from .base import Instance, file_scalar

__all__ = [
    "NuMaxInstance",
    "NuMaxClassInstance",
    "SecantOperator",
    "PairSecantOperator",
    "box_violation",
    "certified_lower_bound",
    "dual_objective",
    "check_bounds",
    "secant_span",
    "signed_multipliers",
]


#: Rows of ``secants`` must have unit norm to this tolerance (they are then renormalised).
UNIT_NORM_TOL = 1e-6


def _unit_rows(value: object, name: str, *, allow_empty: bool = False) -> np.ndarray:
    """Validated, exactly renormalised unit rows (NuMax eq. (1)), read-only."""
    V = as_matrix(value, name, min_rows=0 if allow_empty else 1)
    norms = np.linalg.norm(V, axis=1)
    bad = np.abs(norms - 1.0) > UNIT_NORM_TOL
    if np.any(bad):
        raise ValueError(
            f"{name} must have unit-norm rows (NuMax eq. (1)); {int(bad.sum())} row(s) do not, e.g. row "
            f"{int(np.argmax(bad))} has norm {norms[np.argmax(bad)]:.6g}. Build instances from data "
            "with the from_points / from_labelled constructors."
        )
    V = V / norms[:, None]
    V.setflags(write=False)
    return V


def _check_secant_memory(X: object, count: int | None = None) -> None:
    """Refuse to form ``count`` secants of the rows of ``X`` (default: all n(n−1)/2 pairs) beyond the
    machine's memory: three S×N float64 arrays exist at once while they are formed (X[i], X[j] and
    their difference)."""
    shape = np.shape(X)
    if len(shape) == 2:
        pairs = pair_count(shape[0]) if count is None else min(count, pair_count(shape[0]))
        check_memory(3 * dense_bytes(pairs, shape[1]), f"{pairs} secants of X (S×N float64, N = {shape[1]})")


class _TraceInstance(Instance):
    """What the trace-minimisation instances share: the objective and the verified dual bound."""

    def objective(self, P: np.ndarray) -> float:
        """tr P, the objective of NuMax (4) and NuMax-Class (7) (the nuclear norm for P ⪰ 0)."""
        return float(np.trace(P))

    def verified_dual_bound(self, pairs: object, y: object) -> float:
        """A lower bound on the optimum, proved here from multipliers on pairs of ``X``.

        The multipliers y (one per pair (i, j) of rows of X, point form) are made
        sign-admissible and scaled so that I − 𝒜*(y) ⪰ 0 (:func:`certified_lower_bound`, with
        rounding margins); by weak duality the resulting dual objective bounds the optimum over
        *all* pairs, since 𝒜*(y) involves only the pairs with y ≠ 0. Nothing of the claimant is
        trusted but the numbers: a bad y gives a weak bound, never a wrong one. This is how
        ``verify`` certifies solutions of instances far too large for CVXPY (column generation
        writes these multipliers to solution files).

        Parameters
        ----------
        pairs : array of shape (m, 2), int
            Row indices of X; pairs of identical points (zero secants) are ignored.
        y : array of shape (m,)
        """
        if not self.point_form:
            raise ValueError("dual multipliers on pairs need a point-form instance (X, all pairs)")
        index = np.asarray(pairs)
        n = self.X.shape[0]
        if index.ndim != 2 or index.shape[1] != 2 or index.dtype.kind not in "iu":
            raise ValueError(f"dual_pairs must be an integer array of shape (m, 2), got {index.dtype} {index.shape}")
        if index.size and (index.min() < 0 or index.max() >= n):
            raise ValueError(f"dual_pairs must hold row indices of X in [0, {n})")
        multipliers = as_vector(y, "dual_y", length=index.shape[0])
        i, j = index[:, 0].astype(np.int64), index[:, 1].astype(np.int64)
        distinct = np.any(self.X[i] != self.X[j], axis=1)
        i, j, multipliers = i[distinct], j[distinct], multipliers[distinct]
        if i.size == 0:
            return 0.0
        lo, hi = self.bounds_of_pairs(i, j)
        bound, _ = certified_lower_bound(PairSecantOperator(self.X, i, j), lo, hi, multipliers)
        return bound



def _point_form(value: object) -> np.ndarray:
    """The points of a point-form instance, read-only: at least two of them distinct."""
    X = as_matrix(value, "X", min_rows=2).copy()
    if np.all(X == X[0]):
        raise ValueError("X must contain at least two distinct points (all its secants are zero)")
    X.setflags(write=False)
    return X

@dataclass(frozen=True, eq=False)
class NuMaxInstance(_TraceInstance):
    """The NuMax SDP (4): minimise tr P s.t. |v_iᵀ P v_i − 1| ≤ δ for all secants, P ⪰ 0.

    Give either ``secants`` (unit rows v_i, NuMax eq. (1)) or ``X`` (points as rows,
    meaning all their pairwise secants — the *point form* of DESIGN.md).

    Parameters
    ----------
    delta : float
        Isometry constant δ ∈ (0, 1).
    secants : ndarray of shape (S, N), optional
        Unit-norm secants (rows within 1e-6 of unit norm are renormalised exactly).
    X : ndarray of shape (n, N), optional
        Points; the instance then means all n(n−1)/2 secants.
    optimum : float, optional
        A certified optimal value carried with the instance (used by ``verify``).
    """

    problem: ClassVar[str] = "numax"
    variable: ClassVar[str] = "P"

    delta: float
    secants: np.ndarray | None = None
    X: np.ndarray | None = None
    optimum: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_delta(self.delta))
        if (self.secants is None) == (self.X is None):
            raise ValueError("give exactly one of secants (S, N) or X (n, N) points")
        if self.secants is not None:
            object.__setattr__(self, "secants", _unit_rows(self.secants, "secants"))
        else:
            object.__setattr__(self, "X", _point_form(self.X))
        self._check_variable_memory(self.dim)
        self._check_optimum()

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_points(
        cls, X: np.ndarray, delta: float, *, n_secants: int | None = None, random_state=None
    ) -> NuMaxInstance:
        """Secant-form instance from data points (rows of ``X``).

        With ``n_secants`` a seeded uniform sample of that many pairs is used (NuMax
        Sec. 5.1); without it, all pairs. Zero secants (duplicate points) are dropped with
        a warning.
        """
        if n_secants is None:
            _check_secant_memory(X)
            secants = all_secants(X)
        else:
            n_secants = check_positive_int(n_secants, "n_secants")
            _check_secant_memory(X, n_secants)
            secants = sample_secants(X, n_secants, random_state=random_state)
        return cls(delta=delta, secants=secants)

    @classmethod
    def from_data(
        cls, X: np.ndarray, y: np.ndarray | None, delta: float, *, n_secants: int | None = None,
        point_form: bool = False, random_state=None,
    ) -> NuMaxInstance:
        """The CLI's constructor: points (labels ignored), point form or (sampled) secants."""
        if point_form:
            return cls(delta=delta, X=X)
        return cls.from_points(X, delta, n_secants=n_secants, random_state=random_state)

    # ----------------------------------------------------------------- structure
    @property
    def point_form(self) -> bool:
        """True when the instance is given by points ``X`` (all pairwise secants)."""
        return self.X is not None

    @property
    def dim(self) -> int:
        """Ambient dimension N (P is N × N)."""
        return (self.secants if self.secants is not None else self.X).shape[1]

    @property
    def n_constraints(self) -> int:
        """Number of secants S (in point form: all n(n−1)/2 pairs, before duplicate points'
        zero secants are dropped)."""
        return self.secants.shape[0] if self.secants is not None else pair_count(self.X.shape[0])

    @cached_property
    def secant_matrix(self) -> np.ndarray:
        """The (S, N) unit secants, materialised (all pairs in point form)."""
        if self.secants is not None:
            return self.secants
        _check_secant_memory(self.X)
        V = all_secants(self.X)
        V.setflags(write=False)
        return V

    def bounds_of_pairs(self, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bounds (1 − δ, 1 + δ) of (4) on the secants of the point pairs (i[k], j[k])."""
        return np.full(np.shape(i), 1.0 - self.delta), np.full(np.shape(i), 1.0 + self.delta)

    def bounds(self, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per-secant bounds (lo, hi) = (1 − δ, 1 + δ) of (4), for ``n`` secants."""
        n = self.secant_matrix.shape[0] if n is None else n
        return np.full(n, 1.0 - self.delta), np.full(n, 1.0 + self.delta)

    # ----------------------------------------------------------------- evaluation
    def max_violation(self, P: np.ndarray, block_size: int = 65536,
                      progress: Callable[[int], object] | None = None) -> float:
        """Worst violation max_i (|v_iᵀ P v_i − 1| − δ)₊ over all secants.

        In point form the secants are streamed in blocks and never materialised;
        ``progress(k)`` is then told the number of pairs of each block as it is done.
        """
        P = np.asarray(P, dtype=np.float64)
        if self.secants is not None:
            blocks = [self.secants]
        else:
            blocks = (secants for _, secants in iter_secant_blocks(self.X, block_size))
        worst = 0.0
        for V in blocks:
            values = np.einsum("ij,ij->i", V @ P, V)
            worst = max(worst, box_violation(values, 1.0 - self.delta, 1.0 + self.delta))
            if progress is not None:
                progress(len(V))
        return worst

    # ----------------------------------------------------------------- files
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the file contract (DESIGN.md)."""
        arrays = {"problem": np.array(self.problem), "delta": np.array(self.delta)}
        if self.secants is not None:
            arrays["secants"] = np.asarray(self.secants)
        else:
            arrays["X"] = np.asarray(self.X)
        return self._with_optimum(arrays)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> NuMaxInstance:
        """Build from the arrays of an instance file (see :meth:`to_arrays`)."""
        delta = file_scalar(arrays, "delta", cls.problem)
        optimum = file_scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        has_secants, has_points = "secants" in arrays, "X" in arrays
        if has_secants == has_points:
            raise ValueError("a 'numax' instance needs exactly one of the arrays 'secants' or 'X'")
        if has_secants:
            return cls(delta=delta, secants=arrays["secants"], optimum=optimum)
        return cls(delta=delta, X=arrays["X"], optimum=optimum)


@dataclass(frozen=True, eq=False)
class NuMaxClassInstance(_TraceInstance):
    """The NuMax-Class SDP (7): minimise tr P over P ⪰ 0 subject to

        v_iᵀ P v_i ≥ 1 − δ  for inter-class secants v_i   (they may expand freely),
        u_iᵀ P u_i ≤ 1 + δ  for intra-class secants u_i   (they may shrink freely),

    equivalently 𝒜_c(P) ≤ b_c of (14)–(15). Give ``inter`` and ``intra`` (unit rows), or the
    labelled points ``X`` and ``y`` meaning all their pairs (point form).

    Parameters
    ----------
    delta : float
        δ ∈ (0, 1).
    inter, intra : ndarray of shapes (S₁, N), (S₂, N), optional
        Inter- and intra-class unit secants; both non-empty.
    X : ndarray of shape (n, N), optional
    y : ndarray of shape (n,), optional
        Labels of ``X``; at least two classes and one class with two members.
    optimum : float, optional
        A certified optimal value carried with the instance.
    """

    problem: ClassVar[str] = "numax_class"
    variable: ClassVar[str] = "P"

    delta: float
    inter: np.ndarray | None = None
    intra: np.ndarray | None = None
    X: np.ndarray | None = None
    y: np.ndarray | None = None
    optimum: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_delta(self.delta))
        secant_form = self.inter is not None or self.intra is not None
        point_form = self.X is not None or self.y is not None
        if secant_form == point_form:
            raise ValueError("give either inter and intra (secants) or X and y (labelled points)")
        if secant_form:
            if self.inter is None or self.intra is None:
                raise ValueError("give both inter and intra secants")
            inter = _unit_rows(self.inter, "inter", allow_empty=True)
            intra = _unit_rows(self.intra, "intra", allow_empty=True)
            if inter.shape[0] == 0 or intra.shape[0] == 0:
                raise ValueError(
                    f"inter and intra must both be non-empty, got {inter.shape[0]} inter and "
                    f"{intra.shape[0]} intra secants"
                )
            if inter.shape[1] != intra.shape[1]:
                raise ValueError(f"inter and intra must have the same number of columns, got "
                                 f"{inter.shape[1]} and {intra.shape[1]}")
            object.__setattr__(self, "inter", inter)
            object.__setattr__(self, "intra", intra)
        else:
            if self.X is None or self.y is None:
                raise ValueError("give both X and its labels y")
            X = _point_form(self.X)
            labels = _check_labels(self.y, X.shape[0])
            labels.setflags(write=False)
            object.__setattr__(self, "X", X)
            object.__setattr__(self, "y", labels)
        self._check_variable_memory(self.dim)
        self._check_optimum()

    @classmethod
    def from_labelled(
        cls,
        X: np.ndarray,
        y: np.ndarray,
        delta: float,
        *,
        n_inter: int | None = None,
        n_intra: int | None = None,
        random_state=None,
    ) -> NuMaxClassInstance:
        """Secant-form instance from labelled points: all pairs, or seeded samples of
        ``n_inter`` inter-class and ``n_intra`` intra-class pairs."""
        X = as_matrix(X, "X", min_rows=2)
        labels = _check_labels(y, X.shape[0])
        if n_inter is None and n_intra is None:
            _check_secant_memory(X)
            V, pairs = all_secants(X, return_pairs=True)
            same = class_pair_mask(labels, pairs[:, 0], pairs[:, 1])
            return cls(delta=delta, inter=V[~same], intra=V[same])
        if n_inter is None or n_intra is None:
            raise ValueError("give both n_inter and n_intra to sample, or neither for all pairs")
        inter, intra = sample_class_secants(X, labels, n_inter, n_intra, random_state=random_state)
        return cls(delta=delta, inter=inter, intra=intra)

    @classmethod
    def from_data(
        cls, X: np.ndarray, y: np.ndarray | None, delta: float, *, n_secants: int | None = None,
        point_form: bool = False, random_state=None,
    ) -> NuMaxClassInstance:
        """The CLI's constructor: labelled points, point form or secants (``n_secants`` split
        evenly between inter- and intra-class pairs)."""
        if y is None:
            raise ValueError("a numax_class instance needs labelled data (datasets mnist, digits or shapes)")
        if point_form:
            return cls(delta=delta, X=X, y=y)
        if n_secants is None:
            return cls.from_labelled(X, y, delta)
        half = max(n_secants // 2, 1)
        return cls.from_labelled(X, y, delta, n_inter=half, n_intra=half, random_state=random_state)

    @property
    def point_form(self) -> bool:
        """True when the instance is given by labelled points (all pairs)."""
        return self.X is not None

    @property
    def dim(self) -> int:
        """Ambient dimension N."""
        return (self.inter if self.inter is not None else self.X).shape[1]

    @property
    def n_constraints(self) -> int:
        """S₁ + S₂ (in point form all n(n−1)/2 pairs)."""
        if self.inter is not None:
            return self.inter.shape[0] + self.intra.shape[0]
        return pair_count(self.X.shape[0])

    @cached_property
    def _materialised(self) -> tuple[np.ndarray, np.ndarray]:
        if self.inter is not None:
            V = np.vstack([self.inter, self.intra])
            intra = np.arange(V.shape[0]) >= self.inter.shape[0]
        else:
            _check_secant_memory(self.X)
            V, pairs = all_secants(self.X, return_pairs=True)
            intra = class_pair_mask(self.y, pairs[:, 0], pairs[:, 1])
        V.setflags(write=False)
        return V, intra

    @property
    def secant_matrix(self) -> np.ndarray:
        """The secants stacked as [inter; intra] (point form: all pairs, materialised)."""
        return self._materialised[0]

    def pair_bounds(self, intra: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) of (7) for secants flagged intra-class or not: [1 − δ, ∞) or (−∞, 1 + δ]."""
        intra = np.asarray(intra, dtype=bool)
        return np.where(intra, -np.inf, 1.0 - self.delta), np.where(intra, 1.0 + self.delta, np.inf)

    def bounds_of_pairs(self, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of (7) on the secants of the point pairs (i[k], j[k]) (point form), by their labels."""
        return self.pair_bounds(self.y[i] == self.y[j])

    def bounds(self, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per-secant bounds of (7), in the order of :attr:`secant_matrix`."""
        return self.pair_bounds(self._materialised[1])

    def max_violation(self, P: np.ndarray, block_size: int = 65536,
                      progress: Callable[[int], object] | None = None) -> float:
        """Worst one-sided violation over all secants (point form: streamed by class; ``progress(k)``
        told the number of pairs of each block as it is done)."""
        P = np.asarray(P, dtype=np.float64)
        if self.inter is not None:
            blocks = [(self.inter, np.zeros(len(self.inter), bool)), (self.intra, np.ones(len(self.intra), bool))]
        else:
            blocks = ((V, intra) for _, V, intra in iter_labelled_secant_blocks(self.X, self.y, block_size))
        worst = 0.0
        for V, intra in blocks:
            values = np.einsum("ij,ij->i", V @ P, V)
            worst = max(worst, box_violation(values, *self.pair_bounds(intra)))
            if progress is not None:
                progress(len(V))
        return worst

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the file contract (DESIGN.md)."""
        arrays = {"problem": np.array(self.problem), "delta": np.array(self.delta)}
        if self.inter is not None:
            arrays["inter"], arrays["intra"] = np.asarray(self.inter), np.asarray(self.intra)
        else:
            arrays["X"], arrays["y"] = np.asarray(self.X), np.asarray(self.y)
        return self._with_optimum(arrays)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> NuMaxClassInstance:
        """Build from the arrays of an instance file (see :meth:`to_arrays`)."""
        delta = file_scalar(arrays, "delta", cls.problem)
        optimum = file_scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        secant_form = "inter" in arrays or "intra" in arrays
        if secant_form == ("X" in arrays or "y" in arrays):
            raise ValueError("a 'numax_class' instance needs either 'inter' and 'intra' or 'X' and 'y'")
        if secant_form:
            return cls(delta=delta, inter=arrays.get("inter"), intra=arrays.get("intra"), optimum=optimum)
        return cls(delta=delta, X=arrays.get("X"), y=arrays.get("y"), optimum=optimum)


def _check_labels(y: object, n: int) -> np.ndarray:
    """Labels for n points: 1-D, length n, at least two classes and one intra-class pair."""
    labels = np.asarray(y)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(f"y must be a 1-D array of {n} labels (one per row of X), got shape {labels.shape}")
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError("y contains NaN or infinite labels")
    if labels.dtype.kind not in "iufUSb":
        raise ValueError(f"y must hold integer or string labels, got dtype {labels.dtype}")
    classes, counts = np.unique(labels, return_counts=True)
    if classes.size < 2:
        raise ValueError(f"y must contain at least two classes (no inter-class secants otherwise), got {classes.size}")
    if counts.max() < 2:
        raise ValueError("y must have a class with at least two members (no intra-class secants otherwise)")
    return labels.copy()


# ------------------------------------------------------------------------- the operator 𝒜
class SecantOperator:
    """The linear map 𝒜 : Sᴺ → Rˢ, X ↦ (v_iᵀ X v_i)_i, and its adjoint.

    Parameters
    ----------
    secants : ndarray of shape (S, N)
        The rows ``v_i``. They need not be unit vectors here; instances normalise them.
    """

    def __init__(self, secants: np.ndarray) -> None:
        self.V = np.ascontiguousarray(secants, dtype=np.float64)
        if self.V.ndim != 2:
            raise ValueError(f"secants must be a 2-D array (S, N), got shape {self.V.shape}")

    @property
    def n_constraints(self) -> int:
        """Number of secants S."""
        return self.V.shape[0]

    @property
    def dim(self) -> int:
        """Ambient dimension N."""
        return self.V.shape[1]

    def apply(self, X: np.ndarray) -> np.ndarray:
        """𝒜(X) = (v_iᵀ X v_i)_i for a symmetric (N, N) matrix X; O(S N²)."""
        return np.einsum("ij,ij->i", self.V @ X, self.V)

    def adjoint(self, y: np.ndarray) -> np.ndarray:
        """𝒜*(y) = Σ_i y_i v_i v_iᵀ = Vᵀ diag(y) V, an (N, N) symmetric matrix; O(S N²)."""
        return (self.V.T * y) @ self.V

    def gram_squared(self) -> np.ndarray:
        """The (S, S) matrix of 𝒜𝒜*, with entries (v_iᵀ v_j)²."""
        G = self.V @ self.V.T
        return G * G

    def explicit(self) -> SecantOperator:
        """The operator computed from the explicit secant rows (used for certificates)."""
        return self

    def in_basis(self, basis: np.ndarray) -> SecantOperator:
        """𝒜 restricted to matrices QP̃Qᵀ, in the coordinates of the orthonormal ``basis`` Q (N, r)."""
        return SecantOperator(self.V @ basis)


class PairSecantOperator(SecantOperator):
    """𝒜 for the secants of pairs of points, v_k = (x_{i_k} − x_{j_k}) / ‖x_{i_k} − x_{j_k}‖.

    Same map as :class:`SecantOperator` on the same rows, computed through the n_a points
    the S pairs touch — the structure column generation (NuMax Algorithm 2) works with:

        𝒜(P)_k  = (x_i − x_j)ᵀ P (x_i − x_j) / d_k²  from B = X_a P,            O(n_a N² + S N)
        𝒜*(y)   = X_aᵀ Lap(w) X_a,  w_k = y_k / d_k²  (a weighted graph Laplacian), O(n_a² N + n_a N²)

    instead of O(S N²) each: a large saving when S ≫ n_a (thousands of pairs among hundreds
    of points). Certificates use :meth:`explicit`, the row-by-row computation.

    Parameters
    ----------
    points : ndarray of shape (n, N)
    i, j : ndarray of shape (S,)
        Pair indices into ``points``; every pair must be of distinct points.
    """

    def __init__(self, points: np.ndarray, i: np.ndarray, j: np.ndarray) -> None:
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        used, inverse = np.unique(np.concatenate([i, j]), return_inverse=True)
        pts = np.asarray(points, dtype=np.float64)[used]
        self.points = pts - pts.mean(axis=0)                  # differences unchanged, less cancellation
        self.i, self.j = inverse[: i.size], inverse[i.size:]
        D = self.points[self.i] - self.points[self.j]
        self.norms = np.linalg.norm(D, axis=1)
        if np.any(self.norms == 0.0):
            raise ValueError("every pair must join two distinct points (a zero secant has no direction)")
        D /= self.norms[:, None]                              # in place: one (S, N) array, not two
        super().__init__(D)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """𝒜(X) through B = X_a X: ((b_i − b_j)·v_k) / d_k."""
        B = self.points @ X
        return np.einsum("ij,ij->i", B[self.i] - B[self.j], self.V) / self.norms

    def adjoint(self, y: np.ndarray) -> np.ndarray:
        """𝒜*(y) = Σ_k y_k v_k v_kᵀ = X_aᵀ Lap(w) X_a with edge weights w_k = y_k / d_k²."""
        n_a = self.points.shape[0]
        w = np.asarray(y, dtype=np.float64) / self.norms**2
        W = np.bincount(self.i * n_a + self.j, weights=w, minlength=n_a * n_a).reshape(n_a, n_a)
        W += W.T
        laplacian = np.diag(W.sum(axis=1)) - W
        out = self.points.T @ (laplacian @ self.points)
        return 0.5 * (out + out.T)

    def explicit(self) -> SecantOperator:
        """The same map from the explicit unit rows (rounding errors bounded row by row)."""
        return SecantOperator(self.V)

    def in_basis(self, basis: np.ndarray) -> PairSecantOperator:
        """The pair operator on the points' coordinates in the orthonormal ``basis`` Q (N, r)."""
        out = PairSecantOperator.__new__(PairSecantOperator)
        out.points, out.i, out.j, out.norms = self.points @ basis, self.i, self.j, self.norms
        # the rows through the points: O(n_a N r) rather than O(S N r) for V @ basis
        out.V = (out.points[self.i] - out.points[self.j]) / self.norms[:, None]
        return out


def check_bounds(lo: object, hi: object, n_constraints: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate the bounds of (*): float arrays of length S (scalars broadcast), no NaN,
    ``lo < +inf``, ``hi > −inf`` and lo ≤ hi; ``-inf``/``+inf`` mark absent bounds."""
    out = []
    for name, value in (("lo", lo), ("hi", hi)):
        try:
            arr = np.broadcast_to(np.asarray(value, dtype=np.float64), (n_constraints,))
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must be a scalar or an array of length {n_constraints} (one per secant), "
                f"got shape {np.shape(value)}"
            ) from None
        if np.any(np.isnan(arr)):
            raise ValueError(f"{name} contains NaN; use -inf/inf for an absent bound")
        out.append(arr)
    lo_arr, hi_arr = out
    if np.any(lo_arr == np.inf) or np.any(hi_arr == -np.inf):
        raise ValueError("lo must be < +inf and hi > -inf (the problem would be infeasible)")
    if np.any(lo_arr > hi_arr):
        raise ValueError("lo must not exceed hi for any constraint")
    return lo_arr, hi_arr


def box_violation(values: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float) -> float:
    """Worst violation max_i (lo_i − values_i, values_i − hi_i)₊ of lo ≤ 𝒜(P) ≤ hi (0 if none)."""
    return float(np.max(np.maximum(lo - values, values - hi), initial=0.0).clip(min=0.0))


def signed_multipliers(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Zero the multipliers of bounds that are absent (a lower bound of −∞ takes no y⁺)."""
    y = np.where(np.isfinite(lo), y, np.minimum(y, 0.0))
    return np.where(np.isfinite(hi), y, np.maximum(y, 0.0))


def dual_objective(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """g(y) = Σ lo_i y_i⁺ − hi_i y_i⁻, the dual objective of (*) (positively homogeneous)."""
    y = signed_multipliers(np.asarray(y, dtype=np.float64), lo, hi)
    pos = np.maximum(y, 0.0)
    neg = np.maximum(-y, 0.0)
    lo_term = np.where(pos > 0, lo, 0.0) * pos
    hi_term = np.where(neg > 0, hi, 0.0) * neg
    return float(lo_term.sum() - hi_term.sum())


def certified_lower_bound(
    operator: SecantOperator, lo: np.ndarray, hi: np.ndarray, y: np.ndarray
) -> tuple[float, np.ndarray]:
    """Turn any multiplier vector into a certified lower bound on the optimum of (*).

    The sign pattern of ``y`` is first made admissible (no multiplier on an absent bound),
    then ``y`` is scaled by ``t = 1/λ_max(𝒜*(y))`` so that ``I − 𝒜*(t y) ⪰ 0``: ``t y`` is
    dual feasible and ``g(t y) = t g(y)`` bounds tr P* from below (weak duality). The
    computed λ_max is inflated by bounds on the rounding errors of forming 𝒜*(y)
    (≈ S·ε·Σ|y_i|‖v_i‖²) and of the eigen-solver (≈ N·ε·‖𝒜*(y)‖₂), so that the certificate
    survives floating point. ``y = 0`` gives the trivial bound 0.

    Parameters
    ----------
    operator : SecantOperator
    lo, hi : ndarray of shape (S,)
        Constraint bounds of (*); ``±inf`` marks an absent bound.
    y : ndarray of shape (S,)
        Multipliers; ``y_i > 0`` prices the lower bound, ``y_i < 0`` the upper one.

    Returns
    -------
    bound : float
        A lower bound on min tr P over (*).
    y_feasible : ndarray of shape (S,)
        The dual-feasible multipliers that attain ``bound``.
    """
    operator = operator.explicit()
    y = signed_multipliers(np.asarray(y, dtype=np.float64), lo, hi)
    g = dual_objective(y, lo, hi)
    if not np.isfinite(g) or g <= 0.0:
        return 0.0, np.zeros_like(y)
    eigenvalues = np.linalg.eigvalsh(operator.adjoint(y))
    eps = np.finfo(float).eps
    spectral = float(np.max(np.abs(eigenvalues)))
    row_norms2 = np.einsum("ij,ij->i", operator.V, operator.V)
    forming = operator.n_constraints * eps * float(np.abs(y) @ row_norms2)
    lam = float(eigenvalues[-1]) + 16.0 * operator.dim * eps * spectral + 4.0 * forming
    # lam > 0 here: g > 0 needs y ≠ 0, which makes the rounding margin positive. If 𝒜*(y)
    # is negative semidefinite (an infeasibility certificate), the bound is g / margin:
    # finite, and larger than the trace of any feasible P could be.
    return g / lam, y / lam


def secant_span(secants: np.ndarray, rtol: float = 1e-6, residual_tol: float = 1e-10) -> np.ndarray | None:
    """Orthonormal basis Q (N, r) of the row space of ``secants``, or None if it is all of Rᴺ.

    The basis comes from the eigenvectors of the Gram VᵀV whose singular value exceeds
    ``rtol`` times the largest; it is accepted only if every secant is reproduced to
    ``residual_tol`` (max_i ‖v_i − QQᵀv_i‖), which bounds the change of any v_iᵀPv_i by
    about 2·residual_tol·‖P‖. Otherwise None is returned and no reduction is made.
    """
    gram = secants.T @ secants
    w, U = np.linalg.eigh(0.5 * (gram + gram.T))
    keep = w > (rtol**2) * max(float(w[-1]), 1e-300)
    if keep.all():
        return None
    Q = U[:, keep]
    residual = secants - (secants @ Q) @ Q.T
    if float(np.max(np.linalg.norm(residual, axis=1), initial=0.0)) > residual_tol:
        return None
    return Q
