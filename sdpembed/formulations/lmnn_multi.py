"""LMNN with one metric per class — the multi-metric SDP of thesis Sec. 2.1.8, (2.17), in CVXPY.

With the cluster-dependent distance (2.17), D̂(x_i, x_j) = (x_i − x_j)ᵀ M^{y_j} (x_i − x_j)
(the metric of the class of the *second* point, so D̂ is not symmetric),

    minimise    (1 − μ) Σ_{j⇝i} (x_i − x_j)ᵀ M^{y_j} (x_i − x_j) + μ Σ_{j⇝i, l} (1 − y_il) ξ_ijl
    subject to  (1) (x_i − x_l)ᵀ M^{y_l} (x_i − x_l) − (x_i − x_j)ᵀ M^{y_j} (x_i − x_j) ≥ 1 − ξ_ijl
                (2) ξ_ijl ≥ 0
                (3) M^c ⪰ 0 for c = 1, …, C.

Target neighbours share the class of i, so the pull term of class c is tr(M^c P_c) with
P_c = Σ_{j⇝i, y_i = c} C_ij. At the optimum ξ_ijl is the hinge, so the optimal value is the
minimum over M^c ⪰ 0 of the multi-metric loss :meth:`MultiMetricLMNNProblem.objective`.

**Certificate** (:func:`multi_metric_dual_bound`). The derivation of
:func:`sdpembed.formulations.lmnn.lmnn_dual_bound` carries over block by block: for
α_t ∈ [0, μ], ε(M) ≥ Σ_t α_t + Σ_c tr(M^c C_c(α)) with
C_c(α) = (1 − μ) P_c + Σ_t α_t ([y_i = c] C_ij − [y_l = c] C_il), so Σα is a lower bound when
every C_c(α) ⪰ 0; otherwise α is scaled down (largest t with all (1 − μ)P_c + t(C_c(α) −
(1 − μ)P_c) ⪰ 0) or the trace bound tr M^c ≤ U / ((1 − μ) λ_min(P_c)) is used. Rounding errors
are accounted for as in the single-metric bound.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import scipy.linalg
import scipy.sparse

from .._validate import as_matrix, check_positive_int
from ..graphs import ACCUMULATION_BLOCK, BLOCK_ELEMENTS, all_triplets, check_labels, check_targets, target_neighbors
from ..results import SolveResult, relative_gap
from ._cvxpy import check_solver, judge_optimal, no_solution, solver_iterations, status_of
from .lmnn import _EPS, _certified_min_eig, project_psd, triplet_outer_sum

__all__ = [
    "MultiMetricLMNNProblem",
    "multi_metric_hinges",
    "multi_metric_dual_bound",
    "multi_metric_problem",
    "solve_multi_metric_cvxpy",
]


@dataclass(frozen=True)
class MultiMetricLMNNProblem:
    """The data of (2.17): points, labels, target neighbours, μ; metrics stacked as (C, d, d).

    Block c of the metric belongs to ``classes[c]`` (sorted labels); ``block[i]`` is the
    block of point i.
    """

    X: np.ndarray
    y: np.ndarray
    targets: np.ndarray
    mu: float = 0.5

    def __post_init__(self) -> None:
        X = as_matrix(self.X, "X", min_rows=2).copy()
        y = check_labels(self.y, X.shape[0])
        targets = check_targets(self.targets, y)
        mu = float(self.mu)
        if not 0.0 <= mu <= 1.0:
            raise ValueError(f"mu must lie in the closed interval [0, 1] (thesis (2.8)), got {mu}")
        for arr in (X, y, targets):
            arr.setflags(write=False)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "targets", targets)
        object.__setattr__(self, "mu", mu)

    @classmethod
    def from_data(cls, X: np.ndarray, y: np.ndarray, k: int = 3, mu: float = 0.5) -> MultiMetricLMNNProblem:
        """Euclidean target neighbours (Sec. 2.1.2), as :meth:`LMNNInstance.from_data`."""
        return cls(X=X, y=y, targets=target_neighbors(X, y, k), mu=mu)

    @property
    def classes(self) -> np.ndarray:
        return np.unique(self.y)

    @property
    def block(self) -> np.ndarray:
        """Block (class index) of every point."""
        return np.unique(self.y, return_inverse=True)[1].ravel()

    @property
    def n_blocks(self) -> int:
        return self.classes.size

    @property
    def dim(self) -> int:
        return self.X.shape[1]

    @property
    def n_points(self) -> int:
        return self.X.shape[0]

    @property
    def k(self) -> int:
        return self.targets.shape[1]

    @property
    def n_triplets(self) -> int:
        counts = np.bincount(self.block)
        return int(self.k * np.sum(self.n_points - counts[self.block]))

    def pull_matrices(self) -> np.ndarray:
        """P_c = Σ_{j⇝i, y_i = c} C_ij, shape (C, d, d): the pull term is Σ_c tr(M^c P_c)."""
        n, k = self.targets.shape
        U = (self.X[:, None, :] - self.X[self.targets]).reshape(n * k, -1)
        blocks = np.repeat(self.block, k)
        out = np.stack([U[blocks == c].T @ U[blocks == c] for c in range(self.n_blocks)])
        return 0.5 * (out + out.transpose(0, 2, 1))

    def check_metrics(self, Ms: object) -> np.ndarray:
        arr = np.asarray(Ms, dtype=np.float64)
        shape = (self.n_blocks, self.dim, self.dim)
        if arr.shape != shape:
            raise ValueError(f"the metrics must have shape {shape} (one d x d matrix per class), got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError("the metrics contain NaN or infinite entries")
        return 0.5 * (arr + arr.transpose(0, 2, 1))

    def objective(self, Ms: np.ndarray) -> float:
        """The multi-metric loss: (1 − μ) Σ_c tr(M^c P_c) + μ Σ hinges of (2.17), all triplets."""
        Ms = self.check_metrics(Ms)
        pull = float(np.sum(self.pull_matrices() * Ms))
        push = sum(float(h.sum()) for _, h in multi_metric_hinges(self, Ms, threshold=0.0))
        return (1.0 - self.mu) * pull + self.mu * push


def multi_metric_hinges(
    problem: MultiMetricLMNNProblem, Ms: np.ndarray, *, threshold: float = 0.0, block_size: int = BLOCK_ELEMENTS
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream the triplets (i, j, l) whose hinge 1 + D̂(x_i, x_j) − D̂(x_i, x_l) exceeds ``threshold``.

    D̂ is (2.17). For each block of points i the (b, k, n) hinge array is formed at once:
    D̂(x_i, x_j) from explicit differences, D̂(x_i, x_l) through the Gram matrix of the centred
    data under the metric of l's class (a loop over classes; points are vectorised).

    Yields
    ------
    triplets : ndarray of int64, shape (B, 3)
    hinges : ndarray of shape (B,)
    """
    Ms = problem.check_metrics(Ms)
    block_size = check_positive_int(block_size, "block_size")
    X, targets, blk = problem.X, problem.targets, problem.block
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
        d_ij = np.einsum("bkd,bkd->bk", np.einsum("bkd,bde->bke", U, Ms[blk[I]]), U)
        D_il = np.empty((I.size, n))
        for c in range(problem.n_blocks):
            cols = blk == c
            ZM = Z[I] @ Ms[c]
            D_il[:, cols] = np.einsum("ij,ij->i", ZM, Z[I])[:, None] + q[None, cols] - 2.0 * (ZM @ Z[cols].T)
        H = 1.0 + d_ij[:, :, None] - D_il[:, None, :]
        candidate = (H > threshold) & (blk[I, None] != blk[None, :])[:, None, :]
        r, m, l = np.nonzero(candidate)
        yield np.column_stack([I[r], J[r, m], l]), H[r, m, l]


def multi_metric_dual_bound(
    problem: MultiMetricLMNNProblem, triplets: np.ndarray, alpha: np.ndarray, *, upper_bound: float | None = None
) -> float:
    """A certified lower bound on the optimum of (2.17) from multipliers α ∈ [0, μ] of (1).

    See the module docstring for the derivation (the block-wise version of
    :func:`sdpembed.formulations.lmnn.lmnn_dual_bound`).
    """
    triplets = np.asarray(triplets, dtype=np.int64).reshape(-1, 3)
    alpha = np.clip(np.asarray(alpha, dtype=np.float64).ravel(), 0.0, problem.mu)
    if alpha.shape[0] != triplets.shape[0]:
        raise ValueError(f"alpha must have one entry per triplet ({triplets.shape[0]}), got {alpha.shape[0]}")
    keep = alpha > 0.0
    triplets, alpha = triplets[keep], alpha[keep]
    total = float(alpha.sum())
    if total == 0.0:
        return 0.0
    mu, X, blk = problem.mu, problem.X, problem.block
    if np.any(blk[triplets[:, 0]] == blk[triplets[:, 2]]):
        raise ValueError("every triplet (i, j, l) needs y_l != y_i")
    C, d = problem.n_blocks, problem.dim
    P = problem.pull_matrices()
    A = (1.0 - mu) * P
    n_blocks_acc = -(-problem.n_points * problem.k // ACCUMULATION_BLOCK)
    a_error = (1.0 - mu) * (ACCUMULATION_BLOCK + n_blocks_acc + d + 4) * _EPS * np.trace(P, axis1=1, axis2=2)
    D = np.zeros((C, d, d))
    d_error = np.zeros(C)
    zeros = np.zeros((0, 3), dtype=np.int64)
    for c in range(C):   # block c collects + C_ij of triplets with y_i = c and − C_il of those with y_l = c
        pos = triplets[blk[triplets[:, 0]] == c]
        neg = triplets[blk[triplets[:, 2]] == c]
        wp = alpha[blk[triplets[:, 0]] == c]
        wn = alpha[blk[triplets[:, 2]] == c]
        # triplet_outer_sum(t, w) = Σ w (C_ij − C_il): (i, j, i) gives C_ij alone and (i, i, l) gives −C_il
        Dp, ep = triplet_outer_sum(X, np.column_stack([pos[:, 0], pos[:, 1], pos[:, 0]]) if pos.size else zeros, wp)
        Dn, en = triplet_outer_sum(X, np.column_stack([neg[:, 0], neg[:, 0], neg[:, 2]]) if neg.size else zeros, wn)
        D[c] = Dp + Dn
        d_error[c] = ep + en
    lam_A = np.array([_certified_min_eig(A[c], a_error[c]) for c in range(C)]) if mu < 1.0 else np.full(C, -np.inf)
    tau = np.full(C, np.inf)
    if np.all(lam_A > 0.0):
        U = mu * problem.n_triplets
        if upper_bound is not None and np.isfinite(upper_bound):
            U = min(U, max(float(upper_bound), 0.0))
        tau = U / lam_A

    def bound_at(t: float) -> float:
        lams = np.array([_certified_min_eig(A[c] + t * D[c], a_error[c] + t * d_error[c]) for c in range(C)])
        if np.all(lams >= 0.0):
            return t * total
        return t * total + float(np.sum(tau * np.minimum(lams, 0.0))) if np.all(np.isfinite(tau)) else 0.0

    candidates = [0.0, bound_at(1.0)]
    if np.all(lam_A > 0.0):
        t_star, s_max = 1.0, 0.0
        for c in range(C):
            theta = scipy.linalg.eigh(D[c], A[c], eigvals_only=True)[0]
            if theta < 0.0:
                t_star = min(t_star, -1.0 / float(theta))
            margin = 16.0 * d * _EPS * (np.linalg.norm(A[c], 2) + np.linalg.norm(D[c], 2)) \
                + d * (a_error[c] + d_error[c])
            s_max = max(s_max, min(1.0, 4.0 * margin / lam_A[c]))
        candidates.append(bound_at((1.0 - s_max) * t_star))
    return float(max(candidates))


def multi_metric_problem(problem: MultiMetricLMNNProblem, triplets: np.ndarray | None = None):
    """The SDP (2.17) in CVXPY on a set of triplets (all by default).

    Returns
    -------
    cvxpy.Problem, list of cvxpy.Variable (one PSD metric per class), the slack variable and
    constraint (1) (whose dual values are the multipliers α).
    """
    triplets = all_triplets(problem.y, problem.targets) if triplets is None else np.asarray(triplets, dtype=np.int64)
    X, mu, d, C, blk = problem.X, problem.mu, problem.dim, problem.n_blocks, problem.block
    Ms = [cp.Variable((d, d), PSD=True, name=f"M{c}") for c in range(C)]               # (3)
    P = problem.pull_matrices()
    pull = sum(cp.sum(cp.multiply(P[c], Ms[c])) for c in range(C))
    rows, cols = np.triu_indices(d)
    p = rows.size
    weight = np.where(rows == cols, 1.0, 2.0)
    m = cp.hstack([Ms[c][rows, cols] for c in range(C)])                                 # upper triangles
    U = X[triplets[:, 0]] - X[triplets[:, 1]]
    W = X[triplets[:, 0]] - X[triplets[:, 2]]
    T = triplets.shape[0]
    t_idx = np.repeat(np.arange(T), p)
    col_w = (blk[triplets[:, 2]][:, None] * p + np.arange(p)[None, :]).ravel()           # block of y_l
    col_u = (blk[triplets[:, 0]][:, None] * p + np.arange(p)[None, :]).ravel()           # block of y_j = y_i
    A = scipy.sparse.csr_matrix(
        (np.concatenate([((W[:, rows] * W[:, cols]) * weight).ravel(), (-(U[:, rows] * U[:, cols]) * weight).ravel()]),
         (np.concatenate([t_idx, t_idx]), np.concatenate([col_w, col_u]))), shape=(T, C * p))
    xi = cp.Variable(T, nonneg=True, name="xi")                                          # (2)
    impostor = A @ m + xi >= 1.0                                                         # (1)
    return cp.Problem(cp.Minimize((1.0 - mu) * pull + mu * cp.sum(xi)), [impostor]), Ms, xi, impostor


def solve_multi_metric_cvxpy(
    problem: MultiMetricLMNNProblem,
    *,
    solver: str = "CLARABEL",
    triplets: np.ndarray | None = None,
    gap_tol: float = 1e-4,
    verbose: bool = False,
    **solver_options,
) -> SolveResult:
    """Solve (2.17) with CVXPY: the ground truth of the multi-metric solver.

    Returns a :class:`SolveResult` whose ``solution`` is the (C, d, d) stack of P_S(M^c),
    ``objective`` the full multi-metric loss of it, ``dual_bound`` the certified bound of
    :func:`multi_metric_dual_bound` from CVXPY's dual values; ``optimal`` only if that gap is
    at most ``gap_tol``.
    """
    from .lmnn import DEFAULT_LMNN_OPTIONS

    start = time.perf_counter()
    solver = check_solver(solver)
    triplets = all_triplets(problem.y, problem.targets) if triplets is None else np.asarray(triplets, dtype=np.int64)
    model, Ms, _, impostor = multi_metric_problem(problem, triplets)
    try:
        model.solve(solver=solver, verbose=verbose, **{**DEFAULT_LMNN_OPTIONS[solver], **solver_options})
    except cp.error.SolverError as exc:
        raise RuntimeError(f"{solver} failed on the multi-metric SDP: {exc}") from exc
    status = status_of(model)
    if any(M.value is None for M in Ms):
        return no_solution("lmnn_multi", "M", (problem.n_blocks, problem.dim, problem.dim), status,
                           f"CVXPY status {model.status!r} with no primal value", solver, start)
    solution = np.stack([project_psd(np.asarray(M.value)) for M in Ms])
    objective = problem.objective(solution)
    alpha = np.asarray(impostor.dual_value, dtype=np.float64).ravel()
    bound = multi_metric_dual_bound(problem, triplets, alpha, upper_bound=objective)
    rgap = relative_gap(objective, bound)
    status, message = judge_optimal(status, f"CVXPY status {model.status!r} from {solver}", relative_gap=rgap,
                                    gap_tol=gap_tol)
    return SolveResult(
        problem="lmnn_multi", variable="M", solution=solution, objective=objective, status=status, message=message,
        method="cvxpy", solver=solver, dual_bound=bound, gap=objective - bound, relative_gap=rgap, max_violation=0.0,
        min_eigenvalue=float(min(np.linalg.eigvalsh(M)[0] for M in solution)),
        iterations=solver_iterations(model), wall_time=time.perf_counter() - start,
        extra={"triplets": triplets, "alpha": np.clip(alpha, 0.0, problem.mu), "restricted_optimum": model.value},
    )
