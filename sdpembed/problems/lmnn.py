"""LMNN (Weinberger, thesis ch. 2) as numpy: the instance types of the convex SDP (2.11)
(:class:`LMNNInstance`, problem ``lmnn``) and of the multi-metric SDP (2.17)
(:class:`MultiMetricLMNNInstance`, problem ``lmnn_multi``), which share their data, validation and
file arrays, and what the CVXPY formulations and the hand-written solvers share — the projection
(2.16) onto the PSD cone, triplets and their outer products, and the certified dual bounds
:func:`lmnn_dual_bound` and :func:`multi_metric_dual_bound`.

**Certificate.** Any multipliers α_ijl ∈ [0, μ] of the impostor constraints (1) of the slack SDP
of Sec. 2.1.3 give a lower bound on the full optimum (:func:`lmnn_dual_bound`, derived there);
the CVXPY dual values of (1) and the hand-written solvers' multipliers are such multipliers, so
every solve is certified by the same function. Its eigenvalue tests run on coordinates that
determine every point difference, chosen and proved in exact integer arithmetic
(:func:`spanning_coordinates`): raw pixels leave directions in which no two points differ, exact
null vectors that no test with rounding margins could prove PSD.

**Multi-metric.** With the cluster-dependent distance (2.17), D̂(x_i, x_j) = (x_i − x_j)ᵀ M^{g_j}
(x_i − x_j) (the metric of the *second* point), where g_j is the metric of point j — its class in
(2.17), or any given assignment such as k-means clusters (Fig. 2.10), the instance's
``metric_groups`` — the pull term of metric c is tr(M^c P_c) with P_c = Σ_{j⇝i, g_j = c} C_ij. The
derivation of :func:`lmnn_dual_bound` carries over block by block (:func:`multi_metric_dual_bound`):
for α_t ∈ [0, μ], ε(M) ≥ Σ_t α_t + Σ_c tr(M^c C_c(α)) with
C_c(α) = (1 − μ) P_c + Σ_t α_t ([g_j = c] C_ij − [g_l = c] C_il), so Σα is a lower bound when
every C_c(α) ⪰ 0; otherwise α is scaled down (largest t with all (1 − μ)P_c + t(C_c(α) −
(1 − μ)P_c) ⪰ 0) or the trace bound tr M^c ≤ U / ((1 − μ) λ_min(P_c)) is used. Each C_c(α) is
tested on the span of the differences metric c sees — a class with fewer points than dimensions, or
with repeated points, has target differences that span less than all points do — after the
multipliers that no dual-feasible α can carry there are set to 0 (derived in
:func:`multi_metric_dual_bound`). Rounding errors are accounted for as in the single-metric bound.

**Gaps.** The loss (2.11) does not change when X is scaled (M absorbs the scale): it counts
margins, and μ — the loss of one triplet at the margin, h_t = 1 — is its unit
(:func:`loss_unit`). Its optimum can be far below that unit, or 0: when the classes are far apart
relative to their spread, or separable by a metric with tr(MP) = 0 (e.g. fewer points than
dimensions). Relative gaps are therefore measured against max(|ε|, |bound|, μ)
(the instances' ``gap_scale``, :func:`sdpembed.results.relative_gap`): a gap ≤ gap_tol proves
the loss within gap_tol of its optimum relatively, or within gap_tol·μ absolutely when the
optimum is below μ.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the loss (2.5)–(2.11), the slack SDP of Sec. 2.1.3, the
   gradient (2.14), the projection (2.16) and the multi-metric SDP (2.17), with its metrics indexed
   by class or by any assignment of the points, e.g. k-means clusters (Sec. 2.1.8, Fig. 2.10).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, ClassVar, Self

import numpy as np

from .._validate import as_matrix, as_vector, check_positive_int, count_distinct
from ..graphs import (
    ACCUMULATION_BLOCK,
    BLOCK_ELEMENTS,
    all_triplets,
    check_labels,
    check_targets,
    connected_components,
    iter_hinges,
    pull_matrix,
    radius_hinge_scan,
    target_neighbors,
    triplet_count,
)
from .base import Instance, file_scalar, power_of_two_below

__all__ = [
    "LMNNInstance",
    "MultiMetricLMNNInstance",
    "MultiMetricLMNNProblem",
    "certified_min_eig",
    "check_metric_groups",
    "check_triplets",
    "generalized_eigenvalues",
    "lmnn_dual_bound",
    "lmnn_dual_bound_and_use",
    "loss_unit",
    "loss_scan_threshold",
    "loss_with_error",
    "multi_metric_dual_bound",
    "multi_metric_hinges",
    "project_psd",
    "triplet_keys",
    "triplet_outer_sum",
    "spanning_coordinates",
    "varying_coordinates",
]


def loss_unit(mu: float) -> float:
    """The unit of the loss (2.11) with weight ``mu``: μ, the loss of one triplet at the margin
    (h_t = 1 in (2.10)). The loss is invariant to the scale of X, so this unit, not the data,
    sets what a small absolute gap is (module docstring, "Gaps")."""
    return float(mu)


@dataclass(frozen=True, eq=False)
class _TripletData(Instance):
    """What the LMNN SDP (2.11) and the multi-metric SDP (2.17) share: points, labels, target
    neighbours and μ, their validation, their triplets and their file arrays."""

    X: np.ndarray
    y: np.ndarray
    targets: np.ndarray
    mu: float = 0.5
    optimum: float | None = None

    def __post_init__(self) -> None:
        X = as_matrix(self.X, "X", min_rows=2).copy()
        self._check_variable_memory(X.shape[1])
        labels = check_labels(self.y, X.shape[0])
        targets = check_targets(self.targets, labels)
        for arr in (X, labels, targets):
            arr.setflags(write=False)
        _check_data_scale(X, labels, targets)
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
    def from_data(cls, X: np.ndarray, y: np.ndarray, k: int = 3, mu: float = 0.5) -> Self:
        """Instance with the k Euclidean nearest same-class points as target neighbours
        (Sec. 2.1.2; :func:`sdpembed.graphs.target_neighbors`, ties to the smaller index)."""
        return cls(X=X, y=y, targets=target_neighbors(X, y, k), mu=mu)

    # ----------------------------------------------------------------- structure
    @property
    def dim(self) -> int:
        """Input dimension d (each metric is d × d)."""
        return self.X.shape[1]

    @property
    def gap_scale(self) -> float:
        """μ, the unit of the loss (:func:`loss_unit`): gaps below it are measured absolutely."""
        return loss_unit(self.mu)

    @cached_property
    def matrix_unit(self) -> float:
        """2^−k for the power of two 2^k ≤ S < 2^(k+1), S = Σ_a m_a² the bound on the squared distances of
        the pairs the SDP involves (:func:`_check_data_scale`); 1 when every such difference is 0. The metric
        of X/c is c²M (module docstring, "Gaps"), so M's unit is the inverse of the data's squared scale:
        ``certify`` measures M's asymmetry and PSD violation against it. (The loss, the objective, does not
        change with the scale of X: its unit stays 1.)"""
        with np.errstate(over="ignore", under="ignore"):
            squared = float(np.sum(np.square(_largest_differences(self.X, self.y, self.targets))))
        return 1.0 / power_of_two_below(squared) if squared > 0.0 else 1.0

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

    def triplets(self) -> np.ndarray:
        """All (T, 3) triplets (i, j, l), materialised (memory grows as n²k)."""
        return all_triplets(self.y, self.targets)

    @cached_property
    def spanning_coordinates(self) -> np.ndarray:
        """The coordinates K that determine every difference x_i − x_j, proved exactly
        (:func:`spanning_coordinates`): the problem on X[:, K] has the same optimum."""
        keep = spanning_coordinates(self.X)
        keep.setflags(write=False)
        return keep

    def on_coordinates(self, keep: np.ndarray) -> Self:
        """The same instance on the coordinates ``keep`` of X (same labels, targets and μ; no optimum).
        With ``keep`` = :attr:`spanning_coordinates` its optimum is this instance's, and a metric N of
        it is one of this instance padded with zeros (:func:`spanning_coordinates`)."""
        return replace(self, X=self.X[:, keep], optimum=None)

    # ----------------------------------------------------------------- the proof in a solution file
    #: The multiplier arrays a solution file may carry (the file contract, ``docs/grading.md``):
    #: ``dual_triplets`` (m, 3) triplets (i, j, l) and their multipliers ``dual_alpha`` (m,) of the
    #: impostor constraints (1); every triplet not listed has α = 0.
    DUAL_ARRAYS: ClassVar[tuple[str, ...]] = ("dual_triplets", "dual_alpha")

    def multiplier_arrays(self, extra: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The multiplier arrays a solve writes to its solution file (``DUAL_ARRAYS``): the
        working set ``triplets`` of its ``extra`` and their multipliers ``alpha``; empty without them."""
        if "triplets" not in extra or "alpha" not in extra:
            return {}
        return {"dual_triplets": np.asarray(extra["triplets"], dtype=np.int64).reshape(-1, 3),
                "dual_alpha": np.asarray(extra["alpha"], dtype=np.float64)}

    def proven_bound(self, multipliers: Mapping[str, object], matrix: object = None) -> float:
        """A lower bound on the optimum, proved from the multipliers of a solution file alone.

        The dual (Sec. 2.1.3; :func:`lmnn_dual_bound`, block by block for (2.17)) is
        max Σ_t α_t s.t. 0 ≤ α_t ≤ μ, C(α) = (1 − μ)P + Σ_t α_t (C_ij − C_il) ⪰ 0. Its feasibility is
        restored here: α is clipped to the box [0, μ], then scaled towards 0 (C(0) = (1 − μ)P ⪰ 0)
        until C(tα) ⪰ 0, or the trace bound of :func:`lmnn_dual_bound` is used. The triplets not
        listed carry α_t = 0, which is inside the box, and μ[h_t]₊ ≥ 0 = α_t h_t for every M: the
        omitted hinges are bounded below by zero, so they are never enumerated — the pull matrix
        P over all target pairs is formed from the instance, and C(α) involves only the listed
        triplets. Each listed triplet is checked to be one of the instance (j a target of i,
        y_l ≠ y_i) and to appear once. The eigenvalue tests are dense ``eigvalsh`` of the d × d
        matrices (d is the input dimension: small), lowered by the eigen-solver's backward error
        and the rounding bounds of forming P and C(α) (:func:`certified_min_eig`).

        The trace bound needs an upper bound U on the optimum: the loss of ``matrix`` made PSD
        (projected by (2.16), then shifted by its certified least eigenvalue) plus the proved bound on
        its rounding error (:func:`loss_with_error`); ε(0) = μT when smaller.

        Parameters
        ----------
        multipliers : mapping
            ``dual_triplets`` (m, 3) int and ``dual_alpha`` (m,).
        matrix : ndarray, optional
            The solution (the problem's variable shape), for U; without it U = μT.

        Raises
        ------
        ValueError
            A missing array, triplets that are not the instance's or repeat, a wrong shape, NaN or
            infinite multipliers.
        """
        if "dual_triplets" not in multipliers or "dual_alpha" not in multipliers:
            raise ValueError("a solution with dual multipliers of this instance needs both 'dual_triplets' (m, 3) "
                             "and 'dual_alpha' (m,)")
        triplets = check_triplets(self, multipliers["dual_triplets"])
        alpha = as_vector(multipliers["dual_alpha"], "dual_alpha", length=triplets.shape[0])
        upper = None if matrix is None else self._loss_upper_bound(np.asarray(matrix, dtype=np.float64))
        return self._dual_bound(triplets, alpha, upper)

    def accurate_objective(self, matrix: np.ndarray) -> float:
        """The loss at ``matrix`` as :func:`loss_with_error` computes it, its hinges from explicit differences:
        what ``verify`` checks, and what the solvers report. The streamed Gram form of :meth:`objective` (faster)
        cancels where the metric's entries are far beyond the data's scale (near-duplicate points of two
        classes), and can be off there by more than the loss itself."""
        return loss_with_error(self, matrix)[0]

    def _loss_upper_bound(self, matrix: np.ndarray) -> float:
        """U ≥ the optimum: the loss at a PSD matrix near ``matrix`` (see :meth:`proven_bound`)."""
        blocks = matrix.reshape((-1, self.dim, self.dim))
        psd = []
        for block in blocks:
            P = project_psd(block)
            scale = max(1.0, float(np.max(np.abs(P))))
            shift = max(0.0, -certified_min_eig(P, 0.0)) + 4.0 * self.dim * _EPS * scale
            psd.append(P + 2.0 * shift * np.eye(self.dim))
        loss, error = loss_with_error(self, np.stack(psd).reshape(matrix.shape))
        return loss + error

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
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Self:
        """Build from the arrays of an instance file (see :meth:`to_arrays`)."""
        for key in ("X", "y", "targets"):
            if key not in arrays:
                raise ValueError(f"a {cls.problem!r} instance needs the array {key!r}")
        return cls(**cls._file_fields(arrays))

    @classmethod
    def _file_fields(cls, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
        """The constructor's arguments from the arrays of an instance file (checked by the constructor)."""
        mu = file_scalar(arrays, "mu", cls.problem)
        optimum = file_scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        return {"X": arrays["X"], "y": arrays["y"], "targets": arrays["targets"], "mu": mu, "optimum": optimum}


class LMNNInstance(_TripletData):
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

    def _dual_bound(self, triplets: np.ndarray, alpha: np.ndarray, upper_bound: float | None) -> float:
        return lmnn_dual_bound(self, triplets, alpha, upper_bound=upper_bound)

    @cached_property
    def pull_matrix(self) -> np.ndarray:
        """P = Σ_{j⇝i} C_ij, so that the pull term (2.5) is tr(MP) (cf. (2.14))."""
        P = pull_matrix(self.X, self.targets)
        P.setflags(write=False)
        return P

    @cached_property
    def pull_spans(self) -> tuple[_PullSpan]:
        """The span T of the target differences, the range of P, where :func:`lmnn_dual_bound` tests C(α):
        one entry, as :attr:`MultiMetricLMNNInstance.pull_spans` has one per metric."""
        return (_pull_span(self.X, _target_pairs(self.targets), self.pull_matrix, self.spanning_coordinates),)

    # ----------------------------------------------------------------- evaluation
    def _metric(self, M: np.ndarray) -> np.ndarray:
        M = as_matrix(M, "M")
        if M.shape != (self.dim, self.dim):
            raise ValueError(f"M must have shape {(self.dim, self.dim)}, got {M.shape}")
        return 0.5 * M + 0.5 * M.T          # = fl((M + Mᵀ)/2), without overflow for entries near the largest double

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


_EPS = np.finfo(np.float64).eps
_LARGEST = float(np.finfo(np.float64).max)
#: The least squared scale of an LMNN instance's differences (:func:`_check_data_scale`): 2⁻¹⁰²²/ε = 2⁻⁹⁷⁰.
_SMALLEST_SCALE = float(np.finfo(np.float64).tiny) / _EPS


def _largest_differences(X: np.ndarray, labels: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """m_a: the largest |x_ia − x_ja| in each coordinate a over the pairs the SDP (2.11) involves —
    target pairs and pairs of points of different classes (inf where a difference overflows)."""
    _, codes = np.unique(labels, return_inverse=True)
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
    grouped = X[order]
    lo = np.minimum.reduceat(grouped, starts, axis=0)                         # (C, d): per class
    hi = np.maximum.reduceat(grouped, starts, axis=0)
    del grouped
    # the least entry of the other classes: the overall least, or the second least for the class holding it
    two = np.partition(lo, 1, axis=0)[:2]
    other_lo = np.where(np.arange(lo.shape[0])[:, None] == np.argmin(lo, axis=0), two[1], two[0])
    with np.errstate(over="ignore"):
        # over ordered pairs of classes (c, c'), max hi_c − lo_c' is the largest |difference|
        largest = np.max(hi - other_lo, axis=0)
        rows = max(1, BLOCK_ELEMENTS // (X.shape[1] * targets.shape[1]))     # bounded memory, as the scans
        for start in range(0, X.shape[0], rows):
            block = slice(start, start + rows)
            differences = X[block, None, :] - X[targets[block]]               # (rows, k, d)
            largest = np.maximum(largest, np.max(np.abs(differences), axis=(0, 1)))
    return largest


def _check_data_scale(X: np.ndarray, labels: np.ndarray, targets: np.ndarray) -> None:
    """Refuse points whose LMNN SDP (2.11) is beyond the doubles, at either end. With S = Σ_a m_a²
    bounding every squared distance D_I(x_i, x_j) of a pair the SDP involves
    (:func:`_largest_differences`):

    * the loss of the Euclidean metric is at most (1 − μ) nk S + μ T (1 + S) ≤ (nk + T)(1 + S), which
      must be a double: otherwise the outer products C_ij of (2.10), the pull matrix and the loss of any
      metric of unit scale overflow, and a solver fails far from the cause;
    * S, when some difference is not 0, must be at least :data:`_SMALLEST_SCALE` = 2⁻¹⁰²²/ε: below it the
      squares and products of the differences underflow (to subnormals or to 0), an absolute error that the
      certificates' rounding bounds, relative to the data's scale, do not cover — the data would read as
      coincident points, whose loss μT is no bound on the optimum of the points as given.

    Scaling does not rescue either: the loss does not change with the scale of X (module docstring
    "Gaps") but the metric of X/c is c²M, so a metric for X as given has entries near 1/S, outside the
    doubles' normal range."""
    largest = _largest_differences(X, labels, targets)
    pairs = targets.shape[0] * targets.shape[1] + triplet_count(labels, targets)
    with np.errstate(over="ignore", under="ignore"):
        squared = float(np.sum(np.square(largest)))
        bound = pairs * (1.0 + squared)
    if not bound <= _LARGEST:
        reach = f"reach about {squared:.3g}" if np.isfinite(squared) else "exceed the largest double"
        raise ValueError(
            f"X is too large for the LMNN SDP in double precision: the squared distances of the pairs it "
            f"involves (target neighbours, points of different classes) {reach}, and the loss (2.11) of the "
            f"Euclidean metric over {pairs} target pairs and triplets is bounded only by {bound:.3g} > "
            f"{_LARGEST:.4g}, so the SDP's data overflow (X's entries are finite; their squares and sums are "
            "not). The loss does not change with the scale of X (the metric of X/c is c²M): rescale X"
        )
    if np.max(largest) > 0.0 and not squared >= _SMALLEST_SCALE:
        raise ValueError(
            f"X is too small for the LMNN SDP in double precision: the squared distances of the pairs it "
            f"involves (target neighbours, points of different classes) are at most {squared:.3g}, below "
            f"{_SMALLEST_SCALE:.3g} (the smallest normal double over the unit roundoff), so the SDP's data "
            "underflow and the points would read as coincident. The loss does not change with the scale of X "
            "(the metric of X/c is c²M): rescale X"
        )


# ------------------------------------------------------------------------------ helpers
def project_psd(M: np.ndarray) -> np.ndarray:
    """P_S(M) = V Δ⁺ Vᵀ, the projection (2.16) of (the symmetric part of) M onto the PSD cone."""
    w, V = np.linalg.eigh(0.5 * (M + M.T))
    P = (V * np.maximum(w, 0.0)) @ V.T
    return 0.5 * (P + P.T)


def check_triplets(instance, triplets: object) -> np.ndarray:
    """Validate triplets (i, j, l) of an :class:`~sdpembed.problems.LMNNInstance`.

    Each row must have j ⇝ i (j in ``targets[i]``) and y_l ≠ y_i, and no row may repeat.
    Returns an int64 (T, 3) array.
    """
    arr = np.asarray(triplets)
    if arr.size == 0:
        return np.empty((0, 3), dtype=np.int64)
    if arr.dtype.kind not in "iu" or arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"triplets must be an integer array of shape (T, 3) of (i, j, l), got {arr.dtype} {arr.shape}")
    arr = arr.astype(np.int64)
    n = instance.n_points
    if arr.min() < 0 or arr.max() >= n:
        raise ValueError(f"triplets must hold point indices in [0, {n})")
    i, j, l = arr.T
    if not np.all(np.any(instance.targets[i] == j[:, None], axis=1)):
        raise ValueError("every triplet (i, j, l) needs j to be a target neighbour of i (j in targets[i])")
    if np.any(instance.y[i] == instance.y[l]):
        raise ValueError("every triplet (i, j, l) needs y_l != y_i (l is a potential impostor)")
    if count_distinct(triplet_keys(arr, n)) != arr.shape[0]:
        raise ValueError("triplets must not repeat")
    return arr


def triplet_keys(triplets: np.ndarray, n: int) -> np.ndarray:
    """One int64 key per triplet, (i·n + j)·n + l."""
    t = triplets.astype(np.int64)
    return (t[:, 0] * n + t[:, 1]) * n + t[:, 2]


def triplet_outer_sum(
    X: np.ndarray, triplets: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, float]:
    """Σ_t w_t (C_ij − C_il) over triplets t = (i, j, l) — the push part of (2.14) — and a
    bound on the spectral norm of its rounding error.

    Formed as Uᵀ diag(w) U − Wᵀ diag(w) W with U = x_i − x_j and W = x_i − x_l, at most
    ``ACCUMULATION_BLOCK`` triplets per matrix product. Each entry is a sum of at most m (the
    longest block) products, so its error E_ab satisfies |E_ab| ≤ γ F_ab with
    γ = (m + blocks + d + 4)·ε and F = Σ_t |w_t| (|U_t||U_t|ᵀ + |W_t||W_t|ᵀ), an entrywise non-negative
    PSD matrix; hence ‖E‖₂ ≤ ‖|E|‖₂ ≤ γ‖F‖₂ ≤ γ tr F = γ Σ_t |w_t| (‖U_t‖² + ‖W_t‖²), and the same
    holds for every principal submatrix of E.

    Returns
    -------
    D : ndarray of shape (d, d)
    error : float
        γ tr F: a bound on ‖D − the exact sum (of the rounded differences)‖₂, and so on every entry.
    """
    X = np.asarray(X, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    d = X.shape[1]
    D = np.zeros((d, d))
    mass = 0.0
    n_blocks = 0
    longest = min(ACCUMULATION_BLOCK, triplets.shape[0])
    for start in range(0, triplets.shape[0], ACCUMULATION_BLOCK):
        t = triplets[start:start + ACCUMULATION_BLOCK]
        wt = w[start:start + ACCUMULATION_BLOCK]
        U = X[t[:, 0]] - X[t[:, 1]]
        W = X[t[:, 0]] - X[t[:, 2]]
        D += (U * wt[:, None]).T @ U - (W * wt[:, None]).T @ W
        mass += float(np.abs(wt) @ (np.einsum("ij,ij->i", U, U) + np.einsum("ij,ij->i", W, W)))
        n_blocks += 1
    error = _sum_error(longest, n_blocks, d, mass)
    return 0.5 * (D + D.T), error


def _pull_error(instance) -> float:
    """A bound on the spectral norm of the rounding error of ``instance.pull_matrix``
    (:func:`sdpembed.graphs.pull_matrix`: at most ``ACCUMULATION_BLOCK`` of the n·k target pairs per
    matrix product), by the argument of :func:`triplet_outer_sum` with F = Σ |u||u|ᵀ, tr F = tr P."""
    pairs = instance.n_points * instance.k
    return _sum_error(min(ACCUMULATION_BLOCK, pairs), -(-pairs // ACCUMULATION_BLOCK), instance.dim,
                      float(np.trace(instance.pull_matrix)))


def _sum_error(longest: int, blocks: int, d: int, mass: float) -> float:
    """γ tr F (:func:`triplet_outer_sum`): the rounding bound of a sum of weighted outer products formed
    ``longest`` products at a time in ``blocks`` matrix products, of total trace ``mass`` = tr F."""
    return (longest + blocks + d + 4) * _EPS * mass


def _single_metric_hinges(instance: LMNNInstance, M: np.ndarray, threshold: float):
    """(stream, direct): the triplets of hinge above ``threshold`` and their hinges, as
    :func:`sdpembed.graphs.iter_hinges` streams them, found through a radius filter
    (:func:`sdpembed.graphs.radius_hinge_scan`, far fewer pairs formed near an optimum; every hinge by the direct
    formula: ``direct`` True, unless the filter itself fell back to the stream) for a finite metric whose
    eigen-decomposition and products stay finite, streamed otherwise (hinges through the Gram form: ``direct``
    False)."""
    if np.all(np.isfinite(M)):
        try:
            triplets, hinges, direct = radius_hinge_scan(instance.X, instance.y, instance.targets, M,
                                                         threshold=threshold)
            return [(triplets, hinges)], direct
        except (np.linalg.LinAlgError, ValueError):      # entries whose products overflow: streamed as given
            pass
    return iter_hinges(instance.X, instance.y, instance.targets, M, threshold=threshold), False


def _frobenius(M: np.ndarray) -> float:
    """‖M‖_F computed on M divided exactly by the power of two below its largest |entry|: its squares neither
    overflow (entries beyond ~1e154, the metric of data at scale 1e-77) nor underflow; 0, inf or NaN as numpy's
    norm where M is 0 or not finite."""
    top = float(np.max(np.abs(M), initial=0.0))
    if not 0.0 < top < np.inf:
        return float(np.linalg.norm(M))
    unit = power_of_two_below(top)
    return float(np.linalg.norm(M / unit)) * unit


def _absolute_form_factors(M: np.ndarray) -> tuple[float, np.ndarray, float]:
    """(ρ, s, κ) such that |u|ᵀ|M||u| ≤ min(ρ‖u‖², κ(|u|ᵀs)²) for every u, M symmetric (:func:`loss_with_error`
    derives both bounds): ρ ≥ ρ(|M|) the least of ‖M‖_F and the Collatz–Wielandt quotient of |M| at a positive
    vector near its Perron vector; s_a = √M_aa and κ = 1 + δ with δ ≥ max(0, −λ_min(C)), C the correlation
    matrix of M (κ infinite where a diagonal entry is negative, or zero in a row that is not). Infinite where
    M is not finite or its eigen-decomposition fails."""
    d = M.shape[0]
    A = np.abs(M)
    if d == 0 or not np.all(np.isfinite(A)):
        return np.inf, np.full(d, np.inf), np.inf
    try:
        v = np.abs(np.linalg.eigh(A)[1][:, -1])
    except np.linalg.LinAlgError:
        return np.inf, np.full(d, np.inf), np.inf
    v = v + (v.max() if v.max() > 0.0 else 1.0) * 2.0 ** -10        # positive: the quotient bounds ρ(|M|)
    rho = min(float(np.max((A @ v) / v)), _frobenius(M))
    diagonal = np.diag(M)
    support = diagonal > 0.0
    s = np.sqrt(np.maximum(diagonal, 0.0))
    kappa = np.inf
    if not np.any(A[~support]):              # rows of zero diagonal are zero (else no such bound)
        C = M[np.ix_(support, support)] / s[support, None] / s[None, support]
        if np.all(np.isfinite(C)):           # (a diagonal entry near the least double can overflow C)
            try:
                w = np.linalg.eigvalsh(C) if C.size else np.zeros(1)
                kappa = 1.0 + max(0.0, 16.0 * d * _EPS * float(np.abs(w).max())
                                  + 4.0 * _EPS * float(np.linalg.norm(C)) - float(w[0]))
            except np.linalg.LinAlgError:
                pass
    return rho, s, kappa


def _absolute_form_bound(U: np.ndarray, rho: float, s: np.ndarray, kappa: float) -> np.ndarray:
    """A bound on |u|ᵀ|M||u| for each row u of U, from :func:`_absolute_form_factors` of M (O(d) per row: no
    product with M; ``fmin``: a bound that turned NaN, an infinite factor times 0, leaves the other)."""
    return np.fmin(rho * np.einsum("md,md->m", U, U), kappa * (np.abs(U) @ s) ** 2)


def loss_scan_threshold(instance: LMNNInstance | MultiMetricLMNNInstance, Ms: np.ndarray) -> float:
    """The threshold −2e below 0 at which :func:`loss_with_error` scans the hinges of the (symmetric) metrics
    ``Ms`` (one (d, d) or a (C, d, d) stack), e = ε(8(d + 3)‖M‖_F · 2 max_l ‖z_l‖² + 4) with z the centred
    points and ‖M‖_F the largest of the stack (1 % more: room for the rounding of these factors).

    A scan at this threshold or below sees every triplet whose exact hinge of (2.11) or (2.17) is positive, both
    through the Gram form and by the direct formula (:func:`loss_with_error` derives e); a solver whose last hinge
    scan ran at it can hand that scan to :func:`loss_with_error` (its ``hinges``).

    Parameters
    ----------
    instance : LMNNInstance or MultiMetricLMNNInstance
    Ms : ndarray
        The metric (d, d) or the (C, d, d) stack of metrics.

    Returns
    -------
    float
        The threshold, ≤ 0 (−inf where the factors overflow).

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007: the hinges of the loss (2.11) and of the multi-metric loss (2.17).
    .. [2] N. J. Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM, 2002:
       the bounds γ_k of inner products (ch. 3).
    """
    Ms = np.asarray(Ms, dtype=np.float64).reshape(-1, instance.dim, instance.dim)
    with np.errstate(over="ignore", invalid="ignore"):
        norm_M = max((_frobenius(M) for M in Ms), default=0.0)
        Z = instance.X - instance.X.mean(axis=0)
        largest = float(np.einsum("ij,ij->i", Z, Z).max()) if Z.size else 0.0
        return -2.0 * 1.01 * _EPS * (8.0 * (instance.dim + 3) * norm_M * 2.0 * largest + 4.0)


def loss_with_error(instance: LMNNInstance | MultiMetricLMNNInstance, Ms: np.ndarray, *,
                    hinges: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[float, float]:
    """The loss (2.11) (or (2.17)) at the metrics ``Ms`` as computed in double precision, and a proved
    a-priori bound on its rounding error: the exact loss of the (symmetrised) metrics lies in
    [loss − error, loss + error].

    The loss is (1 − μ) Σ_c tr(M^c P_c) + μ Σ_t [h_t]₊ (one metric for (2.11)), the pull through the
    rounded P_c. The hinges are found at the threshold −2e below 0 of :func:`loss_scan_threshold`,
    e = ε(8(d + 3)‖M‖_F · 2 max_l ‖z_l‖² + 4) ≥ the error of a hinge through the Gram matrix of the centred
    data z (each distance a sum of d products of |z|ᵀ|M||z| ≤ ‖M‖_F‖z‖², the rounding of z, the target
    distance and the margin's additions) and ≥ that of one from explicit differences (below), so every triplet
    of positive exact hinge is found: by :func:`sdpembed.graphs.radius_hinge_scan` (one metric; every hinge by
    the direct formula where its filter ran), else streamed by :func:`sdpembed.graphs.iter_hinges` or
    :func:`multi_metric_hinges` (through the Gram form) and each streamed hinge recomputed from explicit
    differences. A hinge h_t = 1 + D(x_i, x_j) − D(x_i, x_l) from explicit differences u has the error bound
    e_t = ε((2d + 5)(|u_ij|ᵀ|M||u_ij| + |u_il|ᵀ|M||u_il|) + 2) (the rounded differences, two inner
    products of d terms, two additions): small where the points are close, whatever their distance to the
    centre. [·]₊ is 1-Lipschitz, so a triplet adds at most e_t to the push error, and only one with
    h_t + e_t > 0 adds anything. The N such hinges are summed pairwise in blocks (numpy) and then over at most
    n blocks: at most (128 + ⌈log₂ N⌉ + n)ε times the sum. The pull's error is √d‖M^c‖_F times the spectral
    bound on the rounding of P_c (:func:`triplet_outer_sum`'s argument, tr(M ΔP) ≤ ‖M‖_* ‖ΔP‖₂) plus
    (d² + 2)ε Σ|P_c||M^c| for the entrywise products and their sum.

    **The absolute form without a product with M.** Where the hinges come by the direct formula (no
    recomputation), |u|ᵀ|M||u| is bounded in O(d) per difference by the least of two bounds
    (:func:`_absolute_form_factors`; recomputed hinges take the exact |u|ᵀ|M||u| beside their own product):

    * |M| is symmetric and entrywise non-negative, so |u|ᵀ|M||u| ≤ λ_max(|M|)‖u‖² = ρ(|M|)‖u‖² (Rayleigh),
      and ρ(|M|) ≤ ‖|M|‖_F = ‖M‖_F, and ρ(|M|) ≤ max_a (|M|v)_a / v_a for every v > 0 (Collatz–Wielandt;
      v is the computed Perron vector of |M| raised by 2⁻¹⁰ of its largest entry);
    * with s_a = √M_aa > 0 on the support of the diagonal (a row of zero diagonal must be zero, else this bound
      is not used), the correlation matrix C = S⁻¹MS⁻¹ (S = diag(s)) has unit diagonal; with
      δ ≥ max(0, −λ_min(C)) (the computed λ_min lowered by the eigen-solver's error 16dε‖C‖₂ and by 4ε‖C‖_F for
      the rounding of C itself) C + δI is PSD, so its 2 × 2 principal minors give |C_ab| ≤ 1 + δ and
      |M_ab| ≤ (1 + δ) s_a s_b: |u|ᵀ|M||u| ≤ (1 + δ)(Σ_a s_a|u_a|)² — equal to it up to δ for a PSD metric of
      rank one, and small for a difference along which the metric is small, however large it is elsewhere
      (δ is relative to C, of unit diagonal, not to ‖M‖).

    Each factor is computed with a relative error below (d + 3)ε (non-negative terms and square roots),
    within the 1 % by which e_t is raised. The bound is then negligible unless the distances cancel:
    near-duplicate points under a metric of huge entries, where the computed loss can be off by far more than a
    certificate's gap.

    Parameters
    ----------
    instance : LMNNInstance or MultiMetricLMNNInstance
    Ms : ndarray
        The metric (d, d) of an ``lmnn`` instance or the (C, d, d) stack of an ``lmnn_multi`` one.
    hinges : tuple (triplets, hinges), optional
        One metric only: the triplets and hinges :func:`sdpembed.graphs.radius_hinge_scan` returned with
        ``direct`` True (every hinge by the direct formula; never a scan that fell back to the Gram form) for
        this instance's points, labels and targets at the symmetrised ``Ms`` and a threshold ≤
        :func:`loss_scan_threshold` (a solver's last hinge scan): used instead of scanning again. Ignored when
        ``Ms`` is not exactly symmetric.

    Returns
    -------
    loss : float
        The computed loss.
    error : float
        The bound on |loss − exact loss of Ms|, ≥ 0 (+inf when it overflows).

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007: the loss (2.11) and the multi-metric loss (2.17).
    .. [2] N. J. Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM, 2002:
       the bounds γ_k of inner products and of pairwise summation (ch. 3, 4).
    .. [3] R. A. Horn and C. R. Johnson, "Matrix Analysis", 2nd ed., Cambridge University Press, 2013:
       the Collatz–Wielandt bound (Cor. 8.1.31) and the principal minors of a PSD matrix (ch. 7).
    """
    multi = isinstance(instance, MultiMetricLMNNInstance)
    given = np.asarray(Ms)
    if multi:
        Ms = instance.check_metrics(Ms)
        P = instance.pull_matrices()
        pairs = instance.n_points * instance.k
        P_error = [_sum_error(pairs, 1, instance.dim, float(np.trace(Pc))) for Pc in P]
    else:
        Ms = instance._metric(Ms)[None]
        P = np.asarray(instance.pull_matrix)[None]
        P_error = [_pull_error(instance)]
    n, d, mu = instance.n_points, instance.dim, instance.mu
    with np.errstate(over="ignore", invalid="ignore"):
        pull = float(np.sum(P * Ms))
        pull_error = sum(np.sqrt(d) * _frobenius(M) * e + (d * d + 2) * _EPS * float(np.sum(np.abs(Pc * M)))
                         for M, Pc, e in zip(Ms, P, P_error, strict=True))
        push = push_error = 0.0
        count = 0
        if mu > 0.0:
            if hinges is not None and not multi and np.array_equal(Ms[0], given):
                stream, direct = [hinges], True          # the caller's radius scan at these metrics
            else:
                threshold = loss_scan_threshold(instance, Ms)
                stream, direct = ((multi_metric_hinges(instance, Ms, threshold=threshold), False) if multi else
                                  _single_metric_hinges(instance, Ms[0], threshold))
            metric = instance.block if multi else np.zeros(n, dtype=np.int64)
            factors = [_absolute_form_factors(M) for M in Ms] if direct else None
            X = instance.X
            for triplets, streamed in stream:
                i, j, l = triplets.T
                h = streamed if direct else np.ones(i.size)
                abs_sum = np.zeros(i.size)
                for sign, other in ((1.0, j), (-1.0, l)):
                    U = X[i] - X[other]
                    for c in range(Ms.shape[0]):
                        rows = slice(None) if Ms.shape[0] == 1 else metric[other] == c   # one metric: no copy
                        if direct:
                            abs_sum[rows] += _absolute_form_bound(U[rows], *factors[c])
                        else:                    # Gram-form hinges: recomputed from the differences, and the
                            # exact absolute form beside them (a product of the same cost; the O(d) bound can be
                            # d times larger where M's diagonal dominates)
                            h[rows] += sign * np.einsum("md,md->m", U[rows] @ Ms[c], U[rows])
                            A = np.abs(U[rows])
                            abs_sum[rows] += np.einsum("md,md->m", A @ np.abs(Ms[c]), A)
                e_t = 1.01 * _EPS * ((2 * d + 5) * abs_sum + 2.0)
                near = ~(h + e_t <= 0.0)          # a NaN bound counts (its error NaN, reported inf)
                push += float(h[h > 0.0].sum())
                push_error += float(e_t[near].sum()) + (np.inf if np.isnan(h).any() else 0.0)   # a NaN hinge: unbounded
                count += int(near.sum())
        push_error += (128 + int(np.ceil(np.log2(count + 2))) + n) * _EPS * (push + push_error)
        loss = (1.0 - mu) * pull + mu * push
        error = (1.0 - mu) * pull_error + mu * push_error + 4.0 * _EPS * ((1.0 - mu) * abs(pull) + mu * push)
    return loss, (float(error) if np.isfinite(error) else float("inf"))


def certified_min_eig(S: np.ndarray, error: float) -> float:
    """A lower bound on λ_min of the exact matrix whose rounded version is S, given ``error`` ≥ the
    spectral norm of the difference (:func:`triplet_outer_sum`): the computed λ_min minus the
    eigen-solver's error (16·d·ε·‖S‖₂) and ``error`` (Weyl's inequality)."""
    w = np.linalg.eigvalsh(S)
    d = S.shape[0]
    return float(w[0]) - 16.0 * d * _EPS * float(np.max(np.abs(w))) - error


# --------------------------------------------------------------------------- dual bound
def varying_coordinates(X: np.ndarray, pairs: np.ndarray | None = None) -> np.ndarray:
    """The coordinates in which the points of X differ — or, with ``pairs``, in which some difference
    x_i − x_j of the listed pairs (i, j) is non-zero (the first, cheap stage of :func:`spanning_coordinates`).

    In a constant coordinate (a blank pixel) every difference x_i − x_j is exactly 0, so P, every
    C_ij and C(α) have rows and columns of exact zeros there (floating-point products and sums of
    exact zeros are exact zeros). With ``pairs``, a coordinate is constant on each connected component
    of the graph the pairs form exactly when it is 0 in every listed difference.
    """
    X = np.asarray(X, dtype=np.float64)
    if pairs is None:
        return np.flatnonzero(np.ptp(X, axis=0) > 0.0)
    heads, tails = _forest(X.shape[0], pairs)
    return np.flatnonzero(np.any(X[heads] != X[tails], axis=0))


def _forest(n: int, pairs: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Rows (heads, tails) whose differences x_head − x_tail span exactly what the differences of
    ``pairs`` span: every point against the least point of its connected component in the graph of the
    pairs (all points against point 0 without pairs). Along a path, x_a − x_b is a sum of the edges'
    differences, and every edge's difference is a difference of two such rows: the spans are equal."""
    if pairs is None:
        return np.arange(1, n), np.zeros(max(n - 1, 0), dtype=np.int64)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    labels = connected_components(n, pairs)[1]
    root = np.unique(labels, return_index=True)[1][labels]        # components are numbered by least point
    heads = np.flatnonzero(np.arange(n) != root)
    return heads, root[heads]


def _involved(n: int, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """The sorted points among ``heads`` and ``tails`` (a mask, not ``np.union1d``, which imports ``numpy.ma``
    on the light path of ``verify``: DESIGN.md, "Start-up")."""
    used = np.zeros(n, dtype=bool)
    used[heads] = True
    used[tails] = True
    return np.flatnonzero(used)


#: A prime below 2³¹: products of two residues fit in int64.
_PRIME = 2**31 - 1
#: The largest exact elimination :func:`spanning_coordinates` attempts, in units of rows × columns × rank
#: × (1 + rank · bits / 64) (about 0.1 s per 10⁶ at one BLAS thread); above it the varying coordinates are kept.
EXACT_ELIMINATION_BUDGET = 3e7


def spanning_coordinates(X: np.ndarray, pairs: np.ndarray | None = None) -> np.ndarray:
    """Coordinates K such that every point difference x_i − x_j is determined by its entries in K,
    found and proved in exact arithmetic — where the LMNN dual bounds test P ≻ 0 and C(α) ⪰ 0.
    With ``pairs`` (m, 2), the same for the differences of the listed pairs only (and so for every
    vector of their span, e.g. of the target pairs of one metric: :func:`multi_metric_dual_bound`).

    **Why the reduction is exact.** Let Δ be the matrix of rows x_i − x_1 and S its row space, which
    holds every x_i − x_j. If rank Δ_K = rank Δ (the columns of Δ outside K are linear combinations
    of those in K), there is a fixed d × |K| matrix B with u = B u_K for every u ∈ S (B_K = I). The
    loss (2.11), the multi-metric loss (2.17) and every C(α) see a metric only through
    uᵀ M u = u_Kᵀ (Bᵀ M B) u_K with u ∈ S, and M ⪰ 0 gives Bᵀ M B ⪰ 0, while any N ⪰ 0 on K is
    Bᵀ M B for M = N padded with zeros. So the problem on the data X[:, K] has the same optimum;
    C(α) = B C(α)_KK Bᵀ, tr(M C(α)) = tr(Bᵀ M B · C(α)_KK), P likewise: C(α)_KK ⪰ 0 proves the
    bound Σα, and the trace bound holds for tr(Bᵀ M* B) with λ_min(P_KK). The principal submatrices
    on K are exactly what the problem on X[:, K] forms, so the rounding bounds of the full matrices
    hold for them entry by entry. B is never formed.

    **Why it is needed.** An exact null vector of P and of every C(α) — a direction v ⊥ S, e.g. two
    pixels that are non-zero in one image only (raw digits) — gives λ_min = 0, which no eigenvalue
    test with rounding margins can prove ≥ 0: the bound would collapse to 0. Constant coordinates are
    the simplest case (v a coordinate vector) and are dropped first (:func:`varying_coordinates`).

    **Why the rank is exact.** Every float is an integer times a power of two, so each column of
    X is scaled by a power of two (which changes no linear dependence between columns) to exact
    integers, and Δ becomes an integer matrix with exact entries. Its rank modulo the prime
    2³¹ − 1 is a lower bound on its rank over the rationals (a non-zero minor modulo p is a non-zero
    integer; of a subset of the rows, too, which is tried first); when it equals the number of
    columns, no column depends on the others and K is every varying coordinate. Otherwise
    fraction-free Gaussian elimination (Bareiss) in Python integers gives the exact rank and the
    pivot columns, the first columns that are independent of the columns before them: K. No
    rounding enters any decision. Above ``EXACT_ELIMINATION_BUDGET`` (the work grows with the bits of
    the integers: few for short dyadic data such as digits' multiples of 1/16, many for general
    floats) the elimination is not attempted and K is every varying coordinate — still sound, but
    the bound can then be 0.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The points (finite).
    pairs : ndarray of int, shape (m, 2), optional
        The pairs (i, j) whose differences K must determine; all pairs of points by default.

    Returns
    -------
    ndarray of int64
        K, ascending (empty when all points are equal, or every listed difference is 0).
    """
    X = np.asarray(X, dtype=np.float64)
    varying = varying_coordinates(X, pairs)
    heads, tails = _forest(X.shape[0], pairs)
    if varying.size == 0 or heads.size == 0:
        return varying
    rows = _involved(X.shape[0], heads, tails)         # only the points the differences involve are scaled
    scaled = _integer_columns(X[np.ix_(rows, varying)])
    if scaled is None:                                  # a power-of-two scaling overflows: keep every coordinate
        return varying
    heads, tails = np.searchsorted(rows, heads), np.searchsorted(rows, tails)
    c = varying.size
    # a few rows of full rank already prove the whole matrix of full rank (a row subset's rank is a lower bound)
    if _rank_modulo_prime(_differences(scaled, heads[:4 * c - 1], tails[:4 * c - 1])) == c:
        return varying
    delta = _differences(scaled, heads, tails)
    rank_p = _rank_modulo_prime(delta)
    m = delta.shape[0]
    if rank_p == c:
        return varying
    bits = max(int(abs(v)).bit_length() for v in delta.ravel())
    if m * c * rank_p * (1.0 + rank_p * bits / 64.0) > EXACT_ELIMINATION_BUDGET:
        return varying
    return varying[_pivot_columns(delta)]


def _target_pairs(targets: np.ndarray) -> np.ndarray:
    """The (n·k, 2) target pairs (i, j), j ⇝ i, row by row of ``targets``."""
    n, k = targets.shape
    return np.column_stack([np.repeat(np.arange(n), k), targets.ravel()])


#: The relative residual, after projection on the span T of a metric's target differences, above which an
#: impostor difference is taken to lie outside T and its multiplier is set to 0 (:func:`multi_metric_dual_bound`).
#: It only chooses multipliers: whatever it keeps, the proof tests on coordinates that span it exactly.
OUTSIDE_SPAN_TOL = 1e-8


@dataclass(frozen=True, eq=False)
class _PullSpan:
    """T, the span of the target differences of one metric (the range of its pull matrix): the target
    ``pairs`` (i, j), their exact :func:`spanning_coordinates` and, when T misses some point difference,
    an orthonormal basis of T in floating point (``None`` when T holds every difference)."""

    pairs: np.ndarray
    coordinates: np.ndarray
    basis: np.ndarray | None


def _pull_span(X: np.ndarray, pairs: np.ndarray, P: np.ndarray, everything: np.ndarray) -> _PullSpan:
    """The :class:`_PullSpan` of the target ``pairs`` whose pull matrix is ``P``; ``everything`` are the
    spanning coordinates of all points (T holds every difference iff its exact rank is theirs)."""
    coordinates = spanning_coordinates(X, pairs)
    basis = None
    if coordinates.size < everything.size:
        basis = np.linalg.eigh(P)[1][:, P.shape[0] - coordinates.size:]     # the rank is exact: the top eigenvectors
    return _PullSpan(pairs, coordinates, basis)


def _span_coordinates(X: np.ndarray, span: _PullSpan, impostors: np.ndarray,
                      everything: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which impostor pairs (i, l) lie in the target span T (``inside``; their multipliers may stay), and
    coordinates that determine exactly every difference of the target pairs and of the pairs kept.

    When T holds every point difference, all are kept and the coordinates are ``everything``. Otherwise a
    pair is kept when its difference's relative residual after projection on T is at most
    ``OUTSIDE_SPAN_TOL`` (a choice of multipliers, not a proof), and the coordinates are the exact
    :func:`spanning_coordinates` of the target pairs and the kept pairs together: they span whatever a
    rounding error let through, so the PSD tests on them stay proofs.
    """
    if span.basis is None:
        return np.ones(impostors.shape[0], dtype=bool), everything
    W = X[impostors[:, 0]] - X[impostors[:, 1]]
    residual = np.linalg.norm(W - (W @ span.basis) @ span.basis.T, axis=1)
    inside = residual <= OUTSIDE_SPAN_TOL * np.linalg.norm(W, axis=1)
    return inside, spanning_coordinates(X, np.concatenate([span.pairs, impostors[inside]]))


def _integer_columns(X: np.ndarray) -> np.ndarray | None:
    """X with each column scaled by the power of two that makes it integral (float64 holding exact
    integers); None if a scaled entry would overflow float64."""
    mantissa, exponent = np.frexp(X)
    digits = (mantissa * 2.0**53).astype(np.int64)                # exact: |mantissa| < 1
    lowest = np.frexp((digits & -digits).astype(np.float64))[1] - 1   # trailing zero bits of the digits
    unit = np.where(digits != 0, exponent - 53 + lowest, np.iinfo(np.int64).max)
    shift = unit.min(axis=0)
    shift = np.where(shift == np.iinfo(np.int64).max, 0, shift)   # all-zero column
    Y = np.ldexp(X, -shift)                                       # exact: a power of two
    if not np.all(np.isfinite(Y)) or not np.all(Y == np.floor(Y)):
        return None
    return Y


def _differences(Y: np.ndarray, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """y_h − y_t for the rows (h, t) of the integral float matrix Y, in Python integers (exact: a
    difference of floats need not be a float)."""
    ints = {int(r): [int(v) for v in Y[r]] for r in _involved(Y.shape[0], heads, tails)}
    return np.array([[a - b for a, b in zip(ints[h], ints[t], strict=True)] for h, t in zip(heads, tails, strict=True)],
                    dtype=object).reshape(-1, Y.shape[1])


def _rank_modulo_prime(A: np.ndarray) -> int:
    """The rank of the integer matrix A modulo ``_PRIME`` (a lower bound on its rank over Q)."""
    R = np.array([int(v) % _PRIME for v in A.ravel()], dtype=np.int64).reshape(A.shape)
    rank = 0
    for col in range(R.shape[1]):
        if rank == R.shape[0]:
            break
        nonzero = np.flatnonzero(R[rank:, col])
        if nonzero.size == 0:
            continue
        pivot = rank + int(nonzero[0])
        R[[rank, pivot]] = R[[pivot, rank]]
        R[rank] = R[rank] * pow(int(R[rank, col]), _PRIME - 2, _PRIME) % _PRIME    # residues < 2³¹
        below = R[rank + 1:, col].copy()
        R[rank + 1:] = (R[rank + 1:] - below[:, None] * R[rank][None, :] % _PRIME) % _PRIME
        rank += 1
    return rank


def _pivot_columns(A: np.ndarray) -> np.ndarray:
    """The pivot columns of the integer matrix A (object array) by Bareiss's fraction-free elimination
    with row pivoting: exact, every division is exact (each entry is a minor of A)."""
    A = A.copy()
    previous, rank, pivots = 1, 0, []
    for col in range(A.shape[1]):
        if rank == A.shape[0]:
            break
        nonzero = np.flatnonzero(A[rank:, col] != 0)
        if nonzero.size == 0:
            continue
        row = rank + int(nonzero[0])
        A[[rank, row]] = A[[row, rank]]
        pivot = A[rank, col]
        A[rank + 1:, col + 1:] = (A[rank + 1:, col + 1:] * pivot
                                  - np.outer(A[rank + 1:, col], A[rank, col + 1:])) // previous
        A[rank + 1:, col] = 0
        previous = pivot
        pivots.append(col)
        rank += 1
    return np.asarray(pivots, dtype=np.int64)


def generalized_eigenvalues(D: np.ndarray, A: np.ndarray) -> np.ndarray:
    """The eigenvalues θ of D v = θ A v for symmetric D and A ≻ 0, ascending (numpy alone).

    Through the Cholesky factor A = LLᵀ: θ are the eigenvalues of L⁻¹ D L⁻ᵀ. They only choose the
    step at which the dual bound is evaluated; the bound itself is certified by
    :func:`certified_min_eig`, so rounding here cannot make it unsound.
    """
    L = np.linalg.cholesky(A)
    half = np.linalg.solve(L, D)                    # L⁻¹ D
    C = np.linalg.solve(L, half.T)                  # L⁻¹ (L⁻¹ D)ᵀ = L⁻¹ D L⁻ᵀ
    return np.linalg.eigvalsh(0.5 * (C + C.T))


def lmnn_dual_bound(
    instance, alpha_triplets: np.ndarray, alpha: np.ndarray, *, upper_bound: float | None = None,
    fixed_sum: tuple[int, np.ndarray, float] | None = None,
) -> float:
    """The certified lower bound of :func:`lmnn_dual_bound_and_use` (without its ``uses_upper`` flag).

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007: the SDP (2.11) and its slack form (Sec. 2.1.3).
    """
    return lmnn_dual_bound_and_use(instance, alpha_triplets, alpha, upper_bound=upper_bound, fixed_sum=fixed_sum)[0]


def lmnn_dual_bound_and_use(
    instance, alpha_triplets: np.ndarray, alpha: np.ndarray, *, upper_bound: float | None = None,
    fixed_sum: tuple[int, np.ndarray, float] | None = None,
) -> tuple[float, bool]:
    """A certified lower bound on min_{M ⪰ 0} ε(M), the optimum of (2.11), from multipliers α.

    **Derivation.** Let h_t(M) = 1 + tr(M(C_ij − C_il)) be the hinge argument of triplet
    t = (i, j, l) and take any α_t ∈ [0, μ] (α_t = 0 for triplets not listed). Since
    [h]₊ ≥ h and [h]₊ ≥ 0, μ[h]₊ ≥ α_t h whenever 0 ≤ α_t ≤ μ, so for every M ⪰ 0

        ε(M) ≥ (1 − μ) tr(MP) + Σ_t α_t h_t(M) = Σ_t α_t + tr(M C(α)),
        C(α) = (1 − μ) P + Σ_t α_t (C_ij − C_il),        P = Σ_{j⇝i} C_ij,

    the Lagrangian of the slack SDP of Sec. 2.1.3 with multiplier α on (1) (the box
    α ∈ [0, μ] is what stationarity in ξ leaves). Hence

    * if C(α) ⪰ 0, ε(M) ≥ Σ α for every M ⪰ 0 (α is dual feasible; the dual SDP is
      max Σα s.t. α ∈ [0, μ], C(α) ⪰ 0);
    * scaling: for t ∈ [0, 1], tα ∈ [0, μ] and C(tα) = (1 − t)(1 − μ)P + t C(α), so when
      (1 − μ)P ≻ 0 the largest t with C(tα) ⪰ 0 (a generalised eigenvalue of the pair
      (Σα(C_ij − C_il), (1 − μ)P)) gives the bound t·Σα;
    * trace bound: if μ < 1 and P ≻ 0, every minimiser M* has
      (1 − μ) λ_min(P) tr M* ≤ ε(M*) ≤ U for any U ≥ min ε (the loss of a PSD matrix, or
      ε(0) = μ·T), so tr M* ≤ τ = U / ((1 − μ) λ_min(P)) and
      ε(M*) ≥ Σα + τ·min(0, λ_min(C(α))).

    P ≻ 0 and C(α) ⪰ 0 are tested on the coordinates K that determine every point difference
    (:func:`spanning_coordinates`, which proves the reduction exact: P and C(α) are B P_KK Bᵀ and
    B C(α)_KK Bᵀ, and the problem on X[:, K] has the same optimum), so that a direction in which no
    two points differ — a constant pixel, or two pixels non-zero in one image only — is no null
    vector the test would have to prove. When the target differences span less than all points do
    (repeated points, classes with fewer points than dimensions), the multipliers of triplets whose
    impostor difference lies outside their span T are set to 0 and the tests run on coordinates that
    span T and the kept differences exactly — the argument of :func:`multi_metric_dual_bound` with one
    metric (every dual-feasible α is 0 there: vᵀC(α)v = −Σ α_t (u_tᵀv)² for v ⊥ T); with
    ``fixed_sum`` on such an instance, on all spanning coordinates (the fixed triplets are not listed).
    The result is the largest of these (and of 0: ε ≥ 0).
    Eigenvalues are lowered by bounds on the rounding errors of forming P and C(α) and of the
    eigen-solver, so the bound survives floating point. α is first projected onto the box [0, μ].

    Parameters
    ----------
    instance : LMNNInstance
    alpha_triplets : ndarray of int, shape (T, 3)
        Triplets (i, j, l) of the instance carrying the multipliers (any subset of all
        triplets: the others have α = 0, which is feasible).
    alpha : ndarray of shape (T,)
        Multipliers of the impostor constraints (1).
    upper_bound : float, optional
        U ≥ the optimum: the loss (2.11) of some PSD matrix (e.g. the solution). Tightens the
        trace bound; ε(0) = μ·T is used when omitted or larger.
    fixed_sum : tuple (m, S, e), optional
        m further triplets of the instance, none of them in ``alpha_triplets``, with α = μ each (e.g. the fixed
        triplets of :func:`~sdpembed.solvers.lmnn.fast.solve_lmnn_fast`), given by their sum
        S = μ Σ_t (C_ij − C_il) and its rounding-error bound e as :func:`triplet_outer_sum` returns them: the bound
        is that of the multipliers of both lists, without summing the m triplets again.

    Returns
    -------
    bound : float
        A lower bound on the optimal value of (2.11) over M ⪰ 0.
    uses_upper : bool
        Whether the bound is a trace bound's (it uses ``upper_bound``). When it is not, it is the bound of every
        larger ``upper_bound`` too: a larger U only lowers the trace-bound candidates.

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007: the SDP (2.11) and its slack form (Sec. 2.1.3).
    .. [2] S. Boyd and L. Vandenberghe, "Convex Optimization", Cambridge University Press, 2004: the
       Lagrange dual and weak duality (ch. 5).
    """
    triplets = check_triplets(instance, alpha_triplets)
    alpha = np.asarray(alpha, dtype=np.float64).ravel()
    if alpha.shape[0] != triplets.shape[0]:
        raise ValueError(f"alpha must have one entry per triplet ({triplets.shape[0]}), got {alpha.shape[0]}")
    if not np.all(np.isfinite(alpha)):
        raise ValueError("alpha contains NaN or infinite entries")
    mu = instance.mu
    alpha = np.clip(alpha, 0.0, mu)
    active = alpha > 0.0
    triplets, alpha = triplets[active], alpha[active]
    span = instance.pull_spans[0]
    if fixed_sum is None or fixed_sum[0] == 0 or span.basis is None:
        # multipliers of impostor differences outside the target span are 0 in every dual-feasible α
        inside, coordinates = _span_coordinates(instance.X, span, triplets[:, [0, 2]], instance.spanning_coordinates)
        triplets, alpha = triplets[inside], alpha[inside]
    else:                   # the fixed triplets are not listed: their differences are spanned by all coordinates
        coordinates = instance.spanning_coordinates
    total = float(alpha.sum())
    D, d_error = triplet_outer_sum(instance.X, triplets, alpha)
    if fixed_sum is not None and fixed_sum[0] > 0:
        count, S, s_error = fixed_sum
        total += mu * int(count)
        D = D + S
        # the addition's rounding: at most ε|D + S| entrywise, so ‖·‖₂ ≤ ε‖D + S‖_F (doubled for the rounded sum)
        d_error += s_error + 2.0 * _EPS * float(np.linalg.norm(D))
    if total == 0.0:
        return 0.0, False
    A = (1.0 - mu) * instance.pull_matrix
    a_error = (1.0 - mu) * _pull_error(instance)
    keep = np.ix_(coordinates, coordinates)
    A, D = A[keep], D[keep]                                     # exact: _span_coordinates
    if A.shape[0] == 0:                                         # every difference C(α) sums is 0: C(α) = 0 ⪰ 0
        return total, False

    # trace bound τ on a minimiser (needs μ < 1 and P ≻ 0, certified with rounding margins)
    tau = np.inf
    lam_A = certified_min_eig(A, a_error) if mu < 1.0 else -np.inf
    if lam_A > 0.0:
        U = mu * instance.n_triplets
        if upper_bound is not None and np.isfinite(upper_bound):
            U = min(U, max(float(upper_bound), 0.0))
        tau = U / lam_A

    def bound_at(t: float) -> tuple[float, bool]:
        lam = certified_min_eig(A + t * D, a_error + t * d_error)
        if lam >= 0.0:
            return t * total, False
        return (t * total + tau * lam, True) if np.isfinite(tau) else (0.0, False)

    candidates = [(0.0, False), bound_at(1.0)]
    if lam_A > 0.0:
        theta = generalized_eigenvalues(D, A)                   # D v = θ A v
        t_star = 1.0 if theta[0] >= 0.0 else min(1.0, -1.0 / float(theta[0]))
        # A + tD = (1 − s)(A + t*D) + s·A ⪰ s·λ_min(A)·I for t = (1 − s)t*: leave room for
        # the rounding margins of the eigenvalue test.
        margin = 16.0 * A.shape[0] * _EPS * (np.linalg.norm(A, 2) + np.linalg.norm(D, 2)) + a_error + d_error
        s = min(1.0, 4.0 * margin / lam_A)
        candidates.append(bound_at((1.0 - s) * t_star))
    best = max(value for value, _ in candidates)
    # on a tie, a candidate without the trace bound decides
    uses_upper = all(uses for value, uses in candidates if value == best)
    return float(best), uses_upper


# ------------------------------------------------------------------ multi-metric (2.17)
@dataclass(frozen=True, eq=False)
class MultiMetricLMNNInstance(_TripletData):
    """The multi-metric LMNN SDP (thesis Sec. 2.1.8, (2.17)): one metric M^c ⪰ 0 per class — or per
    group of any given assignment of the points (``metric_groups``, e.g. k-means clusters as in
    Fig. 2.10) — minimising

        ε̂(M^1, …, M^C) = (1 − μ) Σ_{j⇝i} D̂(x_i, x_j) + μ Σ_{j⇝i} Σ_l (1 − y_il) [1 + D̂(x_i, x_j) − D̂(x_i, x_l)]₊

    with the cluster-dependent distance D̂(x_i, x_j) = (x_i − x_j)ᵀ M^{g_j} (x_i − x_j) (2.17), g_j the
    metric of the *second* point (its class y_j in the thesis; for a target pair the target's, for
    an impostor pair the impostor's). The thesis states it with one slack ξ_ijl per triplet
    (constraints (1)–(3) after (2.17)); see :mod:`sdpembed.formulations.lmnn_multi`. The only
    constraints are M^c ⪰ 0. With one group it is the LMNN SDP (2.11).

    The variable is the (C, d, d) stack of the metrics: block c belongs to ``classes[c]`` (the sorted
    labels), or to the group c of ``metric_groups``; ``block[i]`` is the block of point i. A solution is
    judged as the block-diagonal matrix of its C blocks (``variable_shape``): symmetric and PSD block
    by block.

    Parameters
    ----------
    X, y, targets, mu, optimum
        As for :class:`LMNNInstance`: training inputs (n, d), labels (at least two classes), the
        (n, k) target neighbours of the same class, μ ∈ [0, 1] and an optional certified optimum.
    metric_groups : ndarray of int, shape (n,), optional
        The metric of every point, 0 … C − 1, each used by some point and by some target neighbour
        (a metric that no target pair uses has no pull term: it could grow without bound). ``None``
        (the default): the point's class, the index of its label in the sorted labels — (2.17) as printed.
    """

    metric_groups: np.ndarray | None = None

    problem: ClassVar[str] = "lmnn_multi"
    variable: ClassVar[str] = "M"

    def _dual_bound(self, triplets: np.ndarray, alpha: np.ndarray, upper_bound: float | None) -> float:
        return multi_metric_dual_bound(self, triplets, alpha, upper_bound=upper_bound)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.metric_groups is not None:
            groups = check_metric_groups(self.metric_groups, self.targets)
            groups.setflags(write=False)
            object.__setattr__(self, "metric_groups", groups)
        self._check_variable_memory(self.dim, self.n_blocks)

    @classmethod
    def from_data(cls, X: np.ndarray, y: np.ndarray, k: int = 3, mu: float = 0.5,
                  metric_groups: np.ndarray | None = None) -> Self:
        """Instance with the k Euclidean nearest same-class points as target neighbours
        (Sec. 2.1.2; :func:`sdpembed.graphs.target_neighbors`) and the metrics ``metric_groups``
        (by class when ``None``)."""
        return cls(X=X, y=y, targets=target_neighbors(X, y, k), mu=mu, metric_groups=metric_groups)

    @property
    def classes(self) -> np.ndarray:
        """The sorted labels; with the default ``metric_groups``, ``classes[c]`` owns the metric M^c."""
        return np.unique(self.y)

    @cached_property
    def class_index(self) -> np.ndarray:
        """The index of every point's label in :attr:`classes` (impostors are points of another class)."""
        index = np.unique(self.y, return_inverse=True)[1].ravel()
        index.setflags(write=False)
        return index

    @property
    def block(self) -> np.ndarray:
        """The metric (block of the variable) of every point: ``metric_groups``, or the class index."""
        return self.class_index if self.metric_groups is None else self.metric_groups

    @property
    def n_blocks(self) -> int:
        """Number of metrics C (the number of classes, or of groups of ``metric_groups``)."""
        return count_distinct(self.y) if self.metric_groups is None else int(self.metric_groups.max()) + 1

    @property
    def variable_shape(self) -> tuple[int, ...]:
        """(C, d, d): one d × d metric per class (or group)."""
        return (self.n_blocks, self.dim, self.dim)

    def pull_matrices(self) -> np.ndarray:
        """P_c = Σ_{j⇝i, g_j = c} C_ij, shape (C, d, d): the pull term is Σ_c tr(M^c P_c)."""
        n, k = self.targets.shape
        U = (self.X[:, None, :] - self.X[self.targets]).reshape(n * k, -1)
        blocks = self.block[self.targets].ravel()
        out = np.stack([U[blocks == c].T @ U[blocks == c] for c in range(self.n_blocks)])
        return 0.5 * (out + out.transpose(0, 2, 1))

    @cached_property
    def pull_spans(self) -> tuple[_PullSpan, ...]:
        """Per metric c, the span T_c of its target differences (the range of P_c), where
        :func:`multi_metric_dual_bound` tests C_c(α)."""
        pairs, P = _target_pairs(self.targets), self.pull_matrices()
        blocks = self.block[self.targets].ravel()
        return tuple(_pull_span(self.X, pairs[blocks == c], P[c], self.spanning_coordinates)
                     for c in range(self.n_blocks))

    def check_metrics(self, Ms: object) -> np.ndarray:
        """The metrics as a float64 (C, d, d) stack, symmetrised block by block; a ValueError for a
        wrong shape or NaN or infinite entries."""
        arr = np.asarray(Ms, dtype=np.float64)
        if arr.shape != self.variable_shape:
            raise ValueError(f"the metrics must have shape {self.variable_shape} (one d x d matrix per metric), "
                             f"got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError("the metrics contain NaN or infinite entries")
        return 0.5 * arr + 0.5 * arr.transpose(0, 2, 1)         # as fl((M + Mᵀ)/2), without its overflow

    def objective(self, Ms: np.ndarray) -> float:
        """The multi-metric loss: (1 − μ) Σ_c tr(M^c P_c) + μ Σ hinges of (2.17), all triplets."""
        Ms = self.check_metrics(Ms)
        pull = float(np.sum(self.pull_matrices() * Ms))
        push = sum(float(h.sum()) for _, h in multi_metric_hinges(self, Ms, threshold=0.0))
        return (1.0 - self.mu) * pull + self.mu * push

    def max_violation(self, Ms: np.ndarray) -> float:
        """0: the hinges are part of the objective (the slacks absorb them), and the constraints
        M^c ⪰ 0 are checked through the least eigenvalues by ``certify``."""
        self.check_metrics(Ms)
        return 0.0

    # ----------------------------------------------------------------- files
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the file contract (DESIGN.md): those of :class:`LMNNInstance`, and
        ``metric_groups`` when given."""
        arrays = super().to_arrays()
        if self.metric_groups is not None:
            arrays["metric_groups"] = np.asarray(self.metric_groups)
        return arrays

    @classmethod
    def _file_fields(cls, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
        return {**super()._file_fields(arrays), "metric_groups": arrays.get("metric_groups")}


def check_metric_groups(groups: object, targets: np.ndarray) -> np.ndarray:
    """Validate an assignment of the n points to metrics 0 … C − 1 (the ``metric_groups`` of
    :class:`MultiMetricLMNNInstance`) and return it as int64.

    It must be 1-D with one integer per point, in [0, C), with every metric used by some point and by
    some target neighbour: the pull term of metric c is tr(M^c P_c), P_c summing the target pairs
    (i, j) with g_j = c, so a metric used by no target neighbour costs nothing to grow and the SDP
    (2.17) has no minimiser.
    """
    n = targets.shape[0]
    arr = np.asarray(groups)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"metric_groups must be a 1-D array with one metric index per point ({n}), "
                         f"got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"metric_groups must hold integer metric indices 0 ... C-1, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.min() < 0:
        raise ValueError(f"metric_groups must hold metric indices >= 0, got {int(arr.min())}")
    C = int(arr.max()) + 1
    empty = np.flatnonzero(np.bincount(arr, minlength=C) == 0)
    if empty.size:
        raise ValueError(f"metric_groups leaves metric {int(empty[0])} empty: every index 0 ... {C - 1} must be "
                         "the metric of some point")
    unused = np.flatnonzero(np.bincount(arr[targets.ravel()], minlength=C) == 0)
    if unused.size:
        raise ValueError(f"metric {int(unused[0])} of metric_groups is the metric of no target neighbour: it has no "
                         "pull term and the SDP (2.17) no minimiser (merge it with another group)")
    return arr


#: The name this type had before it was a registered problem.
MultiMetricLMNNProblem = MultiMetricLMNNInstance


def multi_metric_hinges(
    problem: MultiMetricLMNNInstance, Ms: np.ndarray, *, threshold: float = 0.0, block_size: int = BLOCK_ELEMENTS
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream the triplets (i, j, l) whose hinge 1 + D̂(x_i, x_j) − D̂(x_i, x_l) exceeds ``threshold``.

    D̂ is (2.17). For each block of points i the (b, k, n) hinge array is formed at once:
    D̂(x_i, x_j) from explicit differences, D̂(x_i, x_l) through the Gram matrix of the centred
    data under l's metric (a loop over metrics; points are vectorised). Impostors l are the points of
    another class than i, whatever their metric.

    Yields
    ------
    triplets : ndarray of int64, shape (B, 3)
    hinges : ndarray of shape (B,)
    """
    Ms = problem.check_metrics(Ms)
    block_size = check_positive_int(block_size, "block_size")
    X, targets, blk, cls = problem.X, problem.targets, problem.block, problem.class_index
    n, k = targets.shape
    Z = X - X.mean(axis=0)
    q = np.empty(n)                                       # z_lᵀ M^{y_l} z_l
    for c in range(problem.n_blocks):
        rows = blk == c
        q[rows] = np.einsum("ij,ij->i", Z[rows] @ Ms[c], Z[rows])
    rows_per_block = max(1, block_size // (k * n))
    for start in range(0, n, rows_per_block):
        I = np.arange(start, min(start + rows_per_block, n))
        J = targets[I]
        U = X[I, None, :] - X[J]
        d_ij = np.empty(J.shape)
        for c in range(problem.n_blocks):               # D̂(x_i, x_j) under M^{g_j}, the target's metric
            pairs = blk[J] == c
            d_ij[pairs] = np.einsum("md,md->m", U[pairs] @ Ms[c], U[pairs])
        D_il = np.empty((I.size, n))
        for c in range(problem.n_blocks):
            cols = blk == c
            ZM = Z[I] @ Ms[c]
            D_il[:, cols] = np.einsum("ij,ij->i", ZM, Z[I])[:, None] + q[None, cols] - 2.0 * (ZM @ Z[cols].T)
        H = 1.0 + d_ij[:, :, None] - D_il[:, None, :]
        candidate = (H > threshold) & (cls[I, None] != cls[None, :])[:, None, :]
        r, m, l = np.nonzero(candidate)
        yield np.column_stack([I[r], J[r, m], l]), H[r, m, l]


def multi_metric_dual_bound(
    problem: MultiMetricLMNNInstance, triplets: np.ndarray, alpha: np.ndarray, *, upper_bound: float | None = None
) -> float:
    """A certified lower bound on the optimum of (2.17) from multipliers α ∈ [0, μ] of (1).

    **Derivation.** As for :func:`lmnn_dual_bound` (the slack SDP of Sec. 2.1.3 with the distance
    D̂ of (2.17)): for α_t ∈ [0, μ], μ[h_t]₊ ≥ α_t h_t, so for every M^1, …, M^C ⪰ 0

        ε̂(M) ≥ Σ_t α_t + Σ_c tr(M^c C_c(α)),
        C_c(α) = (1 − μ) P_c + Σ_t α_t ([g_j = c] C_ij − [g_l = c] C_il),

    with P_c = Σ_{j⇝i, g_j = c} C_ij. If every C_c(α) ⪰ 0 the bound is Σα; otherwise α is scaled
    down (the largest t with every (1 − μ)P_c + t(C_c(α) − (1 − μ)P_c) ⪰ 0), or the trace bound is
    used: for any M with ε̂(M) ≤ U (U the loss of a PSD stack, or μT), (1 − μ) tr(M^c P_c) ≤ U.

    **Each metric on its own span.** M^c enters (2.17) only through the differences of its target
    pairs (i, j), g_j = c, and of its impostor pairs (i, l), g_l = c. Let T_c be the span of its target
    differences (the range of P_c). A direction w ⊥ T_c that an impostor difference u = x_i − x_l
    with g_l = c does not miss is free for M^c: wᵀ C_c(α) w = −Σ α_t (u_tᵀ w)² over those triplets, so
    every dual-feasible α has α_t = 0 on triplets whose u ∉ T_c (the hinge can be driven to 0 at no pull
    cost). Such multipliers are therefore set to 0 here — any α in the box [0, μ] gives a valid bound,
    so the choice, made in floating point (a relative residual above 10⁻⁸ after projecting on T_c),
    cannot make it unsound. What remains of C_c(α) is a sum of outer products of vectors of a subspace
    V_c (the target differences of c and the kept impostor differences), and C_c(α) ⪰ 0 on ℝᵈ iff it
    is on V_c: for x = v + v⊥ with v ∈ V_c, xᵀ C_c x = vᵀ C_c v. V_c is represented exactly by its
    spanning coordinates K_c (:func:`spanning_coordinates` with the pairs that span it): every v ∈ V_c
    is B_c v_K, so C_c(α) = B_c C_c(α)_KK B_cᵀ and tr(M^c C_c(α)) = tr(N_c C_c(α)_KK) with
    N_c = B_cᵀ M^c B_c ⪰ 0; the same holds for P_c, whose principal submatrix on K_c is positive
    definite when V_c = T_c (proved: |K_c| is the exact rank of the target differences). So the
    tests C_c(α)_KK ⪰ 0 prove the bound, and the trace bound reads tr N_c ≤ U / ((1 − μ) λ_min(P_c,KK)).
    This is what lets a class with fewer points than dimensions, or any metric whose target pairs do
    not span every difference, be certified: tested on all spanning coordinates of the points, P_c
    and every C_c(α) have exact null vectors that no test with rounding margins can prove PSD, and the
    bound collapsed to 0. The principal submatrices on K_c carry the rounding bounds of the full
    matrices (:func:`triplet_outer_sum`), and a metric whose target pairs span every difference is
    tested on the instance's :attr:`spanning_coordinates`, as before.

    Every triplet must be one of the instance's, listed once (:func:`check_triplets`): the bound
    prices each listed hinge of the loss once.
    """
    triplets = check_triplets(problem, triplets)
    alpha = np.asarray(alpha, dtype=np.float64).ravel()
    if alpha.shape[0] != triplets.shape[0]:
        raise ValueError(f"alpha must have one entry per triplet ({triplets.shape[0]}), got {alpha.shape[0]}")
    if not np.all(np.isfinite(alpha)):
        raise ValueError("alpha contains NaN or infinite entries")
    alpha = np.clip(alpha, 0.0, problem.mu)
    keep = alpha > 0.0
    triplets, alpha = triplets[keep], alpha[keep]
    mu, X, blk = problem.mu, problem.X, problem.block
    C, d = problem.n_blocks, problem.dim
    # the multipliers of impostor differences outside their metric's target span are 0 in every dual-feasible α
    outside = np.zeros(triplets.shape[0], dtype=bool)
    coordinates = []
    for c in range(C):
        mine = np.flatnonzero(blk[triplets[:, 2]] == c)
        inside, coords = _span_coordinates(X, problem.pull_spans[c], triplets[mine][:, [0, 2]],
                                          problem.spanning_coordinates)
        outside[mine[~inside]] = True
        coordinates.append(coords)
    triplets, alpha = triplets[~outside], alpha[~outside]
    total = float(alpha.sum())
    if total == 0.0:
        return 0.0
    P = problem.pull_matrices()
    # P_c is one matrix product over the target pairs (i, j) with g_j = c (pull_matrices)
    pairs = np.bincount(blk[problem.targets].ravel(), minlength=C)
    zeros = np.zeros((0, 3), dtype=np.int64)
    A, D, a_error, d_error = [], [], [], []
    live = [c for c in range(C) if coordinates[c].size]         # an empty K_c: every vector of block c is 0
    for c in live:   # block c collects + C_ij of triplets with g_j = c and − C_il of those with g_l = c
        pos = triplets[blk[triplets[:, 1]] == c]
        neg = triplets[blk[triplets[:, 2]] == c]
        wp = alpha[blk[triplets[:, 1]] == c]
        wn = alpha[blk[triplets[:, 2]] == c]
        # triplet_outer_sum(t, w) = Σ w (C_ij − C_il): (i, j, i) gives C_ij alone and (i, i, l) gives −C_il
        Dp, ep = triplet_outer_sum(X, np.column_stack([pos[:, 0], pos[:, 1], pos[:, 0]]) if pos.size else zeros, wp)
        Dn, en = triplet_outer_sum(X, np.column_stack([neg[:, 0], neg[:, 0], neg[:, 2]]) if neg.size else zeros, wn)
        on = np.ix_(coordinates[c], coordinates[c])             # exact: _span_coordinates
        A.append(((1.0 - mu) * P[c])[on])
        D.append((Dp + Dn)[on])
        a_error.append((1.0 - mu) * _sum_error(int(pairs[c]), 1, d, float(np.trace(P[c]))))
        d_error.append(ep + en)
    if not live:                                                # every C_c(α) = 0 ⪰ 0
        return total
    lam_A = np.array([certified_min_eig(a, e) for a, e in zip(A, a_error, strict=True)]) if mu < 1.0 \
        else np.full(len(live), -np.inf)
    tau = np.full(len(live), np.inf)
    if np.all(lam_A > 0.0):
        U = mu * problem.n_triplets
        if upper_bound is not None and np.isfinite(upper_bound):
            U = min(U, max(float(upper_bound), 0.0))
        tau = U / lam_A

    def bound_at(t: float) -> float:
        lams = np.array([certified_min_eig(a + t * b, ea + t * eb)
                         for a, b, ea, eb in zip(A, D, a_error, d_error, strict=True)])
        if np.all(lams >= 0.0):
            return t * total
        return t * total + float(np.sum(tau * np.minimum(lams, 0.0))) if np.all(np.isfinite(tau)) else 0.0

    candidates = [0.0, bound_at(1.0)]
    if np.all(lam_A > 0.0):
        t_star, s_max = 1.0, 0.0
        for a, b, ea, eb, lam in zip(A, D, a_error, d_error, lam_A, strict=True):
            theta = generalized_eigenvalues(b, a)[0]
            if theta < 0.0:
                t_star = min(t_star, -1.0 / float(theta))
            margin = 16.0 * a.shape[0] * _EPS * (np.linalg.norm(a, 2) + np.linalg.norm(b, 2)) + ea + eb
            s_max = max(s_max, min(1.0, 4.0 * margin / lam))
        candidates.append(bound_at((1.0 - s_max) * t_star))
    return float(max(candidates))
