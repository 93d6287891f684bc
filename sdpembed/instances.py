"""Problem instances: one frozen dataclass per problem, validated on construction, and the
``.npz`` file contract of DESIGN.md.

An instance file holds a unicode string ``problem`` and named arrays; scalars are 0-d
arrays and the file loads with ``allow_pickle=False``. Arrays beyond the contract are
ignored, except ``optimum`` (a certified optimal value, used by ``verify``).
"""

from __future__ import annotations

import numbers
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ._files import atomic_write, check_output, read_npz
from ._memory import check_memory, dense_bytes
from ._validate import as_matrix, as_vector, check_delta, check_positive_int, real_array
from .graphs import (
    all_triplets,
    check_connected,
    check_edges,
    check_targets,
    iter_hinges,
    link_components,
    neighborhood_graph,
    pull_matrix,
    target_neighbors,
    triplet_count,
)
from .graphs import check_labels as check_lmnn_labels
from .operators import PairSecantOperator, box_violation, certified_lower_bound
from .secants import (
    all_secants,
    class_pair_mask,
    iter_labelled_secant_blocks,
    iter_secant_blocks,
    pair_count,
    sample_class_secants,
    sample_secants,
)

__all__ = [
    "NuMaxInstance", "NuMaxClassInstance", "LMNNInstance", "MVUOOSInstance", "MVUInstance", "load_instance",
    "save_instance", "read_npz", "instance_from_arrays",
]

#: Rows of ``secants`` must have unit norm to this tolerance (they are then renormalised).
UNIT_NORM_TOL = 1e-6


def _scalar(arrays: dict[str, np.ndarray], key: str, problem: str) -> Any:
    if key not in arrays:
        raise ValueError(f"a {problem!r} instance needs the array {key!r}")
    value = arrays[key]
    if value.ndim != 0:
        raise ValueError(f"{key!r} must be a 0-d array (a scalar), got shape {value.shape}")
    return value.item()


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


class _Instance:
    """What every instance type shares: the stored optimum, the size of its variable and writing the file."""

    optimum: float | None
    problem: ClassVar[str]
    variable: ClassVar[str]

    def _check_variable_memory(self, dim: int) -> None:
        """Refuse an instance whose matrix variable (dim × dim float64) the machine cannot hold:
        every solve, objective and check of a solution needs it."""
        check_memory(dense_bytes(dim, dim), f"{self.variable} ({dim}×{dim} float64), the variable of this "
                                            f"{self.problem} instance")

    def _check_optimum(self) -> None:
        """Store a given ``optimum`` as a float; it must be a finite real number (not text, not complex)."""
        if self.optimum is not None:
            value = self.optimum
            if isinstance(value, np.ndarray) and value.ndim == 0:
                value = value.item()
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not np.isfinite(value):
                raise ValueError(f"optimum must be a finite real number, got {self.optimum!r}")
            object.__setattr__(self, "optimum", float(value))

    def _with_optimum(self, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``arrays`` plus the stored ``optimum``, if any (the file contract's optional array)."""
        if self.optimum is not None:
            arrays["optimum"] = np.array(self.optimum)
        return arrays

    def save(self, path: str | os.PathLike) -> Path:
        """Write the instance as a compressed ``.npz`` file (:func:`save_instance`); returns its path."""
        return save_instance(self, path)


class _TraceInstance(_Instance):
    """What the trace-minimisation instances share: the objective and the verified dual bound."""

    def objective(self, P: np.ndarray) -> float:
        """tr P, the objective of NuMax (4) and NuMax-Class (7) (the nuclear norm for P ⪰ 0)."""
        return float(np.trace(P))

    def verified_dual_bound(self, pairs: object, y: object) -> float:
        """A lower bound on the optimum, proved here from multipliers on pairs of ``X``.

        The multipliers y (one per pair (i, j) of rows of X, point form) are made
        sign-admissible and scaled so that I − 𝒜*(y) ⪰ 0 (:func:`~sdpembed.operators.
        certified_lower_bound`, with rounding margins); by weak duality the resulting dual
        objective bounds the optimum over *all* pairs, since 𝒜*(y) involves only the pairs
        with y ≠ 0. Nothing of the claimant is trusted but the numbers: a bad y gives a weak
        bound, never a wrong one. This is how ``verify`` certifies solutions of instances far
        too large for CVXPY (column generation writes these multipliers to solution files).

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
            X = as_matrix(self.X, "X", min_rows=2).copy()
            if np.all(X == X[0]):
                raise ValueError("X must contain at least two distinct points (all its secants are zero)")
            X.setflags(write=False)
            object.__setattr__(self, "X", X)
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
    def max_violation(self, P: np.ndarray, block_size: int = 65536) -> float:
        """Worst violation max_i (|v_iᵀ P v_i − 1| − δ)₊ over all secants.

        In point form the secants are streamed in blocks and never materialised.
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
        delta = _scalar(arrays, "delta", cls.problem)
        optimum = _scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
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
            X = as_matrix(self.X, "X", min_rows=2).copy()
            labels = _check_labels(self.y, X.shape[0])
            X.setflags(write=False)
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

    def max_violation(self, P: np.ndarray, block_size: int = 65536) -> float:
        """Worst one-sided violation over all secants (point form: streamed by class)."""
        P = np.asarray(P, dtype=np.float64)
        if self.inter is not None:
            blocks = [(self.inter, np.zeros(len(self.inter), bool)), (self.intra, np.ones(len(self.intra), bool))]
        else:
            blocks = ((V, intra) for _, V, intra in iter_labelled_secant_blocks(self.X, self.y, block_size))
        worst = 0.0
        for V, intra in blocks:
            values = np.einsum("ij,ij->i", V @ P, V)
            worst = max(worst, box_violation(values, *self.pair_bounds(intra)))
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
        delta = _scalar(arrays, "delta", cls.problem)
        optimum = _scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        secant_form = "inter" in arrays or "intra" in arrays
        if secant_form == ("X" in arrays or "y" in arrays):
            raise ValueError("a 'numax_class' instance needs either 'inter' and 'intra' or 'X' and 'y'")
        if secant_form:
            return cls(delta=delta, inter=arrays.get("inter"), intra=arrays.get("intra"), optimum=optimum)
        return cls(delta=delta, X=arrays.get("X"), y=arrays.get("y"), optimum=optimum)

@dataclass(frozen=True, eq=False)
class LMNNInstance(_Instance):
    """The LMNN SDP (thesis ch. 2): minimise over M ⪰ 0 the convex loss (2.11)

        ε(M) = (1 − μ) Σ_{j⇝i} D_M(x_i, x_j) + μ Σ_{j⇝i} Σ_l (1 − y_il) [1 + D_M(x_i, x_j) − D_M(x_i, x_l)]₊

    with D_M(a, b) = (a − b)ᵀ M (a − b) (2.10) and the target neighbours j ⇝ i fixed in
    ``targets`` (Sec. 2.1.2). Sec. 2.1.3 states it as an SDP with one slack ξ_ijl per
    triplet; see :mod:`sdpembed.formulations.lmnn`. The only constraint is M ⪰ 0.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Training inputs as rows (finite).
    y : ndarray of shape (n,)
        Class labels (integers or strings), at least two classes.
    targets : ndarray of int, shape (n, k)
        Row i lists k distinct points j ≠ i of the class of i (its target neighbours).
    mu : float
        The trade-off μ ∈ [0, 1] of (2.8)/(2.11) between pull and push (0.5 in the thesis).
        With μ = 1 the pull term vanishes and the infimum need not be attained.
    optimum : float, optional
        A certified optimal value carried with the instance (used by ``verify``).
    """

    problem: ClassVar[str] = "lmnn"
    variable: ClassVar[str] = "M"

    X: np.ndarray
    y: np.ndarray
    targets: np.ndarray
    mu: float = 0.5
    optimum: float | None = None

    def __post_init__(self) -> None:
        X = as_matrix(self.X, "X", min_rows=2).copy()
        self._check_variable_memory(X.shape[1])
        labels = check_lmnn_labels(self.y, X.shape[0])
        targets = check_targets(self.targets, labels)
        for arr in (X, labels, targets):
            arr.setflags(write=False)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", labels)
        object.__setattr__(self, "targets", targets)
        mu = self.mu.item() if isinstance(self.mu, np.ndarray) and self.mu.ndim == 0 else self.mu
        if isinstance(mu, (bool, np.bool_)) or not isinstance(mu, (int, float, np.integer, np.floating)):
            raise ValueError(f"mu must be a real number in [0, 1], got {self.mu!r}")
        if not 0.0 <= float(mu) <= 1.0:
            raise ValueError(f"mu must lie in the closed interval [0, 1] (thesis (2.8)), got {float(mu)}")
        object.__setattr__(self, "mu", float(mu))
        self._check_optimum()

    @classmethod
    def from_data(cls, X: np.ndarray, y: np.ndarray, k: int = 3, mu: float = 0.5) -> LMNNInstance:
        """Instance with the k Euclidean nearest same-class points as target neighbours
        (Sec. 2.1.2; :func:`sdpembed.graphs.target_neighbors`, ties to the smaller index)."""
        return cls(X=X, y=y, targets=target_neighbors(X, y, k), mu=mu)

    # ----------------------------------------------------------------- structure
    @property
    def dim(self) -> int:
        """Input dimension d (M is d × d)."""
        return self.X.shape[1]

    @property
    def n_points(self) -> int:
        """Number of training points n."""
        return self.X.shape[0]

    @property
    def k(self) -> int:
        """Number of target neighbours per point."""
        return self.targets.shape[1]

    @property
    def n_triplets(self) -> int:
        """Number of triplets (i, j, l), j ⇝ i, y_l ≠ y_i: the slack variables of Sec. 2.1.3."""
        return triplet_count(self.y, self.targets)

    @property
    def n_constraints(self) -> int:
        """The impostor constraints (1) of the SDP of Sec. 2.1.3, one per triplet."""
        return self.n_triplets

    @cached_property
    def pull_matrix(self) -> np.ndarray:
        """P = Σ_{j⇝i} C_ij, so that the pull term (2.5) is tr(MP) (cf. (2.14))."""
        P = pull_matrix(self.X, self.targets)
        P.setflags(write=False)
        return P

    def triplets(self) -> np.ndarray:
        """All (T, 3) triplets (i, j, l), materialised (memory grows as n²k)."""
        return all_triplets(self.y, self.targets)

    # ----------------------------------------------------------------- evaluation
    def _metric(self, M: np.ndarray) -> np.ndarray:
        M = as_matrix(M, "M")
        if M.shape != (self.dim, self.dim):
            raise ValueError(f"M must have shape {(self.dim, self.dim)}, got {M.shape}")
        return 0.5 * (M + M.T)

    def loss_terms(self, M: np.ndarray, block_size: int = 1 << 21) -> tuple[float, float]:
        """(ε_pull, ε_push) at M: the pull term (2.5) = tr(MP) and the push term (2.7), the sum
        of the hinges over all triplets, streamed in blocks of points."""
        M = self._metric(M)
        pull = float(np.sum(self.pull_matrix * M))
        push = 0.0
        for _, hinges in iter_hinges(self.X, self.y, self.targets, M, threshold=0.0, block_size=block_size):
            push += float(hinges.sum())
        return pull, push

    def objective(self, M: np.ndarray, block_size: int = 1 << 21) -> float:
        """The LMNN loss (2.11) at M, exactly over all triplets (streamed in blocks of points)."""
        M = self._metric(M)
        if self.mu == 0.0:
            return float(np.sum(self.pull_matrix * M))
        pull, push = self.loss_terms(M, block_size)
        return (1.0 - self.mu) * pull + self.mu * push

    def max_violation(self, M: np.ndarray) -> float:
        """0: the hinges are part of the objective (the slacks of Sec. 2.1.3 absorb them), and
        the one constraint, M ⪰ 0, is checked through the least eigenvalue by ``certify``."""
        self._metric(M)
        return 0.0

    # ----------------------------------------------------------------- files
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the file contract (DESIGN.md)."""
        arrays = {
            "problem": np.array(self.problem),
            "X": np.asarray(self.X),
            "y": np.asarray(self.y),
            "targets": np.asarray(self.targets),
            "mu": np.array(self.mu),
        }
        return self._with_optimum(arrays)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> LMNNInstance:
        """Build from the arrays of an instance file (see :meth:`to_arrays`)."""
        for key in ("X", "y", "targets"):
            if key not in arrays:
                raise ValueError(f"a {cls.problem!r} instance needs the array {key!r}")
        mu = _scalar(arrays, "mu", cls.problem)
        optimum = _scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        return cls(X=arrays["X"], y=arrays["y"], targets=arrays["targets"], mu=mu, optimum=optimum)


@dataclass(frozen=True, eq=False)
class MVUOOSInstance(_Instance):
    """The MVU out-of-sample SDP (thesis Sec. 3.1.10) for one new input x_t: with ŷ_i = (y_i, −1)
    and S = [[I, y], [yᵀ, s]] as in (3.31),

        minimise Σ_i |ξ_i| + s   s.t.   ŷ_iᵀ S ŷ_i = D_i + ξ_i (i = 1..k),   S[:r, :r] = I,   S ⪰ 0,

    where y_1..y_k ∈ Rʳ are the embedding coordinates of the k nearest training inputs of
    x_t and D_i = ‖x_i − x_t‖² (see :mod:`sdpembed.formulations.mvu_oos`). Since ŷ_iᵀSŷ_i =
    ‖y_i‖² − 2y_iᵀy + s, the slacks are implied by S, and S ⪰ 0 ⇔ s ≥ ‖y‖² (3.30).

    Parameters
    ----------
    Y : ndarray of shape (k, r)
        Neighbour outputs y_i as rows, k ≥ r (a new point needs at least r neighbours).
    sqdist : ndarray of shape (k,)
        Squared input distances D_i = ‖x_i − x_t‖² ≥ 0, one per row of ``Y``.
    optimum : float, optional
        A certified optimal value carried with the instance (used by ``verify``).
    """

    problem: ClassVar[str] = "mvu_oos"
    variable: ClassVar[str] = "S"

    Y: np.ndarray
    sqdist: np.ndarray
    optimum: float | None = None

    def __post_init__(self) -> None:
        Y = as_matrix(self.Y, "Y").copy()
        k, r = Y.shape
        self._check_variable_memory(r + 1)
        D = real_array(self.sqdist, "sqdist").copy()
        if D.shape != (k,):
            raise ValueError(
                f"sqdist must be a 1-D array with one squared distance per row of Y (k = {k} neighbours), "
                f"got shape {D.shape}"
            )
        if not np.all(np.isfinite(D)):
            raise ValueError("sqdist contains NaN or infinite entries")
        if np.any(D < 0):
            raise ValueError(f"sqdist must hold squared distances (>= 0), got minimum {D.min():.6g}")
        if k < r:
            raise ValueError(
                f"a new point needs at least r neighbours: Y has k = {k} row(s) (neighbours) in r = {r} "
                f"output dimensions; give at least {r} neighbours"
            )
        for arr in (Y, D):
            arr.setflags(write=False)
        object.__setattr__(self, "Y", Y)
        object.__setattr__(self, "sqdist", D)
        self._check_optimum()

    @classmethod
    def from_points(
        cls, X_train: np.ndarray, Y_train: np.ndarray, x_new: np.ndarray, n_neighbors: int
    ) -> MVUOOSInstance:
        """The instance of a new input ``x_new`` (d,) for an embedding ``Y_train`` (n, r) of
        ``X_train`` (n, d): its ``n_neighbors`` nearest training inputs (ties to the smaller
        index) and their exact squared distances."""
        X_train = as_matrix(X_train, "X_train")
        Y_train = as_matrix(Y_train, "Y_train")
        if Y_train.shape[0] != X_train.shape[0]:
            raise ValueError(f"Y_train must have one row per row of X_train ({X_train.shape[0]}), "
                             f"got {Y_train.shape[0]}")
        x_new = np.asarray(x_new, dtype=np.float64).reshape(-1)
        if x_new.shape[0] != X_train.shape[1] or not np.all(np.isfinite(x_new)):
            raise ValueError(f"x_new must be a finite vector of the input dimension {X_train.shape[1]}, "
                             f"got shape {np.shape(x_new)}")
        k = check_positive_int(n_neighbors, "n_neighbors")
        if k > X_train.shape[0]:
            raise ValueError(f"n_neighbors must be at most the number of training points {X_train.shape[0]}, got {k}")
        sq = np.einsum("ij,ij->i", X_train - x_new, X_train - x_new)
        index = np.argsort(sq, kind="stable")[:k]
        return cls(Y=Y_train[index], sqdist=sq[index])

    @classmethod
    def from_data(cls, X: np.ndarray, y: np.ndarray | None, delta: float, **_: Any) -> MVUOOSInstance:
        """Not available: an out-of-sample instance needs an embedding of the training data."""
        raise ValueError(
            "an mvu_oos instance is built from an embedding (training inputs, their MVU outputs and a new "
            "input): use MVUOOSInstance.from_points(X_train, Y_train, x_new, n_neighbors)"
        )

    # ----------------------------------------------------------------- structure
    @property
    def dim(self) -> int:
        """r + 1 (S is (r+1) × (r+1))."""
        return self.Y.shape[1] + 1

    @property
    def n_neighbors(self) -> int:
        """k, the number of neighbours (and of constraints (1))."""
        return self.Y.shape[0]

    @property
    def n_constraints(self) -> int:
        """The k distance constraints (1)."""
        return self.Y.shape[0]

    @staticmethod
    def matrix(y: np.ndarray, s: float) -> np.ndarray:
        """S = [[I, y], [yᵀ, s]] of (3.31)."""
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        r = y.shape[0]
        S = np.eye(r + 1)
        S[:r, r] = S[r, :r] = y
        S[r, r] = s
        return S

    @staticmethod
    def point(S: np.ndarray) -> np.ndarray:
        """The new point y_t = S[:r, r], "extracted from S" as after (3.33)."""
        S = np.asarray(S, dtype=np.float64)
        return S[:-1, -1].copy()

    def solution_arrays(self, S: np.ndarray) -> dict[str, np.ndarray]:
        """Arrays a solution file carries besides ``S`` (DESIGN.md): the new point ``y``."""
        return {"y": self.point(self._check_matrix(S))}

    # ----------------------------------------------------------------- evaluation
    def _check_matrix(self, S: np.ndarray) -> np.ndarray:
        S = np.asarray(S, dtype=np.float64)
        if S.shape != (self.dim, self.dim):
            raise ValueError(f"S must have shape {(self.dim, self.dim)}, got {S.shape}")
        return S

    def residuals(self, S: np.ndarray) -> np.ndarray:
        """ξ_i = ŷ_iᵀ S ŷ_i − D_i, the slacks implied by S (constraint (1))."""
        S = self._check_matrix(S)
        Y_hat = np.hstack([self.Y, -np.ones((self.Y.shape[0], 1))])         # ŷ_i = (y_i, −1), (3.31)
        return np.einsum("ij,jk,ik->i", Y_hat, S, Y_hat) - self.sqdist

    def objective(self, S: np.ndarray) -> float:
        """Σ_i |ŷ_iᵀ S ŷ_i − D_i| + S[r, r], the objective with ξ implied by S."""
        S = self._check_matrix(S)
        return float(np.abs(self.residuals(S)).sum() + S[-1, -1])

    def max_violation(self, S: np.ndarray) -> float:
        """Worst violation of the structural constraints: max |S[:r, :r] − I| and the asymmetry
        max |S − Sᵀ| (constraint (1) is absorbed by ξ; S ⪰ 0 is checked by ``certify``)."""
        S = self._check_matrix(S)
        r = self.dim - 1
        return float(max(np.abs(S[:r, :r] - np.eye(r)).max(), np.abs(S - S.T).max()))

    # ----------------------------------------------------------------- files
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the file contract (DESIGN.md)."""
        arrays = {"problem": np.array(self.problem), "Y": np.asarray(self.Y), "sqdist": np.asarray(self.sqdist)}
        return self._with_optimum(arrays)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> MVUOOSInstance:
        """Build from the arrays of an instance file (see :meth:`to_arrays`)."""
        for key in ("Y", "sqdist"):
            if key not in arrays:
                raise ValueError(f"a {cls.problem!r} instance needs the array {key!r}")
        optimum = _scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        return cls(Y=arrays["Y"], sqdist=arrays["sqdist"], optimum=optimum)


@dataclass(frozen=True, eq=False)
class MVUInstance(_Instance):
    """The MVU SDP (thesis Sec. 3.1.4) and its variants, over K ∈ Rⁿˣⁿ with the edge operator
    𝒜(K)_e = K_ii + K_jj − 2K_ij (3.13), e = (i, j) ∈ edges, and D_e = ``sqdist[e]``:

    ``equality``   maximise tr K      s.t. 𝒜(K) = D, ΣK_ij = 0 (3.14), K ⪰ 0 (3.15)  — (3.19), Sec. 3.1.4
    ``inequality`` maximise tr K      s.t. 𝒜(K) ≤ D, ΣK_ij = 0, K ⪰ 0               — Sec. 3.1.6
    ``slack``      maximise (1 − ω) tr K − ω Σ_e |𝒜(K)_e − D_e|  s.t. ΣK_ij = 0, K ⪰ 0 — Sec. 3.1.6
                   (the slacks ξ_e = 𝒜(K)_e − D_e eliminated; the thesis' Σ_ij η_ij counts
                   each edge once here)
    ``min_trace``  minimise tr K      s.t. 𝒜(K) = D, ΣK_ij = 0, K ⪰ 0               — Sec. 3.1.11

    Every variant is stated as a *maximisation* (registry sense ``"max"``): for ``min_trace``
    :meth:`objective` is −tr K, so a dual bound is always an upper bound on the objective and
    ``certify`` needs no special case; the reported optimum of ``min_trace`` is −(min tr K).

    Parameters
    ----------
    edges : ndarray of shape (E, 2), int
        Undirected edges of a *connected* neighbourhood graph on n nodes (no self-loops or
        repeated edges); stored with i < j in each row, in the given order.
    sqdist : ndarray of shape (E,)
        Squared input distances D_e ≥ 0 (3.8).
    n : int
        Number of points (K is n × n), n ≥ 2.
    variant : {"equality", "inequality", "slack", "min_trace"}
    omega : float, optional
        ω ∈ (0, 1) of the slack variant (required there, and only there).
    optimum : float, optional
        A certified optimal value of :meth:`objective` carried with the instance.
    """

    problem: ClassVar[str] = "mvu"
    variable: ClassVar[str] = "K"
    VARIANTS: ClassVar[tuple[str, ...]] = ("equality", "inequality", "slack", "min_trace")

    edges: np.ndarray
    sqdist: np.ndarray
    n: int
    variant: str = "equality"
    omega: float | None = None
    optimum: float | None = None

    def __post_init__(self) -> None:
        n = self.n.item() if isinstance(self.n, np.ndarray) and self.n.ndim == 0 else self.n
        object.__setattr__(self, "n", check_positive_int(n, "n", minimum=2))
        self._check_variable_memory(self.n)              # before the O(n) graph checks
        edges = check_edges(self.edges, self.n).copy()
        swap = edges[:, 0] > edges[:, 1]
        edges[swap] = edges[swap][:, ::-1]
        D = real_array(self.sqdist, "sqdist").copy()
        if D.shape != (edges.shape[0],):
            raise ValueError(f"sqdist must be a 1-D array with one squared distance per edge ({edges.shape[0]}), "
                             f"got shape {D.shape}")
        if not np.all(np.isfinite(D)):
            raise ValueError("sqdist contains NaN or infinite entries")
        if np.any(D < 0):
            raise ValueError(f"sqdist must hold squared distances (>= 0), got minimum {D.min():.6g}")
        if not D.max() > 0:
            raise ValueError("sqdist is all zero: every point would be mapped to the origin")
        check_connected(self.n, edges)
        variant = str(self.variant.item() if isinstance(self.variant, np.ndarray) else self.variant)
        if variant not in self.VARIANTS:
            raise ValueError(f"variant must be one of {self.VARIANTS}, got {variant!r}")
        object.__setattr__(self, "variant", variant)
        omega = self.omega.item() if isinstance(self.omega, np.ndarray) and self.omega.ndim == 0 else self.omega
        if variant == "slack":
            if omega is None:
                raise ValueError("the slack variant needs omega in (0, 1) (Sec. 3.1.6)")
            object.__setattr__(self, "omega", check_delta(omega, "omega"))
        elif omega is not None:
            raise ValueError(f"omega is only used by the slack variant, not by {variant!r}; leave it None")
        for arr in (edges, D):
            arr.setflags(write=False)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "sqdist", D)
        self._check_optimum()

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_points(
        cls, X: np.ndarray, n_neighbors: int = 4, variant: str = "equality", *, omega: float | None = None,
        angles: bool = True, link: bool = False, random_state=None,
    ) -> MVUInstance:
        """The instance of inputs ``X`` (rows): step (I) of Table 3.1
        (:func:`sdpembed.graphs.neighborhood_graph`), optionally connected by the linking
        procedure of Sec. 3.1.12 (``link=True``); a disconnected graph is a ValueError otherwise."""
        X = as_matrix(X, "X", min_rows=2)
        edges, D = neighborhood_graph(X, n_neighbors, angles=angles)
        if link:
            edges, D = link_components(X, edges, random_state=random_state)
        return cls(edges=edges, sqdist=D, n=X.shape[0], variant=variant, omega=omega)

    @classmethod
    def from_data(cls, X: np.ndarray, y: np.ndarray | None, delta: float, **_: Any) -> MVUInstance:
        """Not available: an MVU instance is built from points and a neighbourhood size."""
        raise ValueError("an mvu instance is built with MVUInstance.from_points(X, n_neighbors, variant)")

    # ----------------------------------------------------------------- structure
    @property
    def dim(self) -> int:
        """n (K is n × n)."""
        return self.n

    @property
    def n_constraints(self) -> int:
        """The E edge constraints (3.13) (plus the one centering constraint (3.14))."""
        return self.edges.shape[0]

    @property
    def tau(self) -> float:
        """τ = max_e D_e, the largest squared edge length (3.11): the scale of violations."""
        return float(self.sqdist.max())

    @property
    def trace_weight(self) -> float:
        """c in the objective c·tr K: 1, 1 − ω (slack) or −1 (min_trace)."""
        return {"slack": 1.0 - (self.omega or 0.0), "min_trace": -1.0}.get(self.variant, 1.0)

    def edge_values(self, K: np.ndarray) -> np.ndarray:
        """𝒜(K)_e = K_ii + K_jj − 2K_ij (3.13) for every edge."""
        K = self._check_matrix(K)
        i, j = self.edges[:, 0], self.edges[:, 1]
        return K[i, i] + K[j, j] - 2.0 * K[i, j]

    def _check_matrix(self, K: np.ndarray) -> np.ndarray:
        K = np.asarray(K, dtype=np.float64)
        if K.shape != (self.n, self.n):
            raise ValueError(f"K must have shape {(self.n, self.n)}, got {K.shape}")
        return K

    # ----------------------------------------------------------------- evaluation
    def objective(self, K: np.ndarray) -> float:
        """tr K (equality, inequality), (1 − ω) tr K − ω Σ_e |𝒜(K)_e − D_e| (slack), −tr K (min_trace)."""
        K = self._check_matrix(K)
        value = self.trace_weight * float(np.trace(K))
        if self.variant == "slack":
            value -= self.omega * float(np.abs(self.edge_values(K) - self.sqdist).sum())
        return value

    def max_violation(self, K: np.ndarray) -> float:
        """Worst constraint violation relative to τ (3.11): max over the edge constraints
        (|𝒜(K) − D| for equalities, (𝒜(K) − D)₊ for inequalities, none for slack), the
        centering |ΣK_ij| / n² (the squared norm of the outputs' mean, (3.14)) and the asymmetry
        max |K − Kᵀ|; K ⪰ 0 is checked by ``certify``."""
        K = self._check_matrix(K)
        r = self.edge_values(K) - self.sqdist
        if self.variant == "inequality":
            edge = float(np.max(np.maximum(r, 0.0)))
        elif self.variant == "slack":
            edge = 0.0
        else:
            edge = float(np.max(np.abs(r)))
        centering = abs(float(K.sum())) / self.n**2
        asymmetry = float(np.max(np.abs(K - K.T)))
        return max(edge, centering, asymmetry) / self.tau

    # ----------------------------------------------------------------- files
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the file contract (DESIGN.md)."""
        arrays = {
            "problem": np.array(self.problem),
            "edges": np.asarray(self.edges),
            "sqdist": np.asarray(self.sqdist),
            "n": np.array(self.n),
            "variant": np.array(self.variant),
        }
        if self.omega is not None:
            arrays["omega"] = np.array(self.omega)
        return self._with_optimum(arrays)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> MVUInstance:
        """Build from the arrays of an instance file (see :meth:`to_arrays`)."""
        for key in ("edges", "sqdist"):
            if key not in arrays:
                raise ValueError(f"a {cls.problem!r} instance needs the array {key!r}")
        n = _scalar(arrays, "n", cls.problem)
        variant = _scalar(arrays, "variant", cls.problem)
        omega = _scalar(arrays, "omega", cls.problem) if "omega" in arrays else None
        optimum = _scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        return cls(edges=arrays["edges"], sqdist=arrays["sqdist"], n=n, variant=variant, omega=omega,
                   optimum=optimum)


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


def save_instance(instance: Any, path: str | os.PathLike) -> Path:
    """Write any registered instance as a compressed ``.npz`` file, atomically.

    Parameters
    ----------
    instance
        A registered instance.
    path : path
        Where to write; ``.npz`` is appended when the name does not end with it (as numpy does).

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    ValueError
        If the directory of ``path`` does not exist or ``path`` is a directory.
    """
    target = check_output(path, "instance file", ".npz")
    with atomic_write(target) as temporary:
        np.savez_compressed(temporary, **instance.to_arrays())
    return target


def load_instance(path: str | os.PathLike) -> Any:
    """Read an instance file, dispatching on its ``problem`` string through the registry.

    Raises
    ------
    ValueError
        One line naming the file: it cannot be read (:func:`read_npz`) or its arrays do not make
        an instance of its problem.
    """
    arrays = read_npz(path, "instance")
    try:
        return instance_from_arrays(arrays)
    except ValueError as exc:
        raise ValueError(f"instance file {os.fspath(path)!r}: {exc}") from None


def instance_from_arrays(arrays: dict[str, np.ndarray]) -> Any:
    """The instance the arrays of an instance file describe (its ``problem`` string names the type)."""
    from .registry import get_problem

    if "problem" not in arrays:
        raise ValueError("there is no 'problem' array")
    if arrays["problem"].ndim != 0 or arrays["problem"].dtype.kind != "U":
        raise ValueError(
            "the 'problem' array must be a 0-d unicode string such as np.array('numax'), got "
            f"dtype {arrays['problem'].dtype} and shape {arrays['problem'].shape}"
        )
    return get_problem(str(arrays["problem"])).instance_type.from_arrays(arrays)
