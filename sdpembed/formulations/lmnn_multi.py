"""LMNN with one metric per class — the multi-metric SDP of thesis Sec. 2.1.8, (2.17), in CVXPY.

With the cluster-dependent distance (2.17), D̂(x_i, x_j) = (x_i − x_j)ᵀ M^{g_j} (x_i − x_j)
(the metric g_j of the *second* point — its class y_j as printed, or its group in any given
assignment such as k-means clusters, the instance's ``metric_groups`` — so D̂ is not symmetric), ::

    minimise    (1 − μ) Σ_{j⇝i} (x_i − x_j)ᵀ M^{g_j} (x_i − x_j) + μ Σ_{j⇝i, l} (1 − y_il) ξ_ijl
    subject to  (1) (x_i − x_l)ᵀ M^{g_l} (x_i − x_l) − (x_i − x_j)ᵀ M^{g_j} (x_i − x_j) ≥ 1 − ξ_ijl
                (2) ξ_ijl ≥ 0
                (3) M^c ⪰ 0 for c = 1, …, C.

The pull term of metric c is tr(M^c P_c) with P_c = Σ_{j⇝i, g_j = c} C_ij. At the optimum ξ_ijl
is the hinge, so the optimal value is the
minimum over M^c ⪰ 0 of the multi-metric loss :meth:`MultiMetricLMNNInstance.objective`.

**Certificate.** CVXPY's dual values of (1) are certified by
:func:`sdpembed.problems.lmnn.multi_metric_dual_bound` (derived in :mod:`sdpembed.problems.lmnn`),
the function that certifies the hand-written solver.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: Sec. 2.1.8, the multi-metric SDP (2.17), with metrics by
   class or by any assignment of the points (k-means clusters: Fig. 2.10).
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np
import scipy.sparse

from ..graphs import all_triplets
from ..problems.lmnn import MultiMetricLMNNInstance, multi_metric_dual_bound, project_psd
from ..results import SolveResult, build_result, relative_gap
from ._cvxpy import check_solver, judge_optimal, no_solution, solver_iterations, status_of

__all__ = [
    "multi_metric_problem",
    "solve_multi_metric_cvxpy",
]


def multi_metric_problem(problem: MultiMetricLMNNInstance, triplets: np.ndarray | None = None):
    """The SDP (2.17) in CVXPY on a set of triplets (all by default).

    Returns
    -------
    cvxpy.Problem, list of cvxpy.Variable (one PSD metric per class or group), the slack variable and
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
    col_w = (blk[triplets[:, 2]][:, None] * p + np.arange(p)[None, :]).ravel()           # block of g_l
    col_u = (blk[triplets[:, 1]][:, None] * p + np.arange(p)[None, :]).ravel()           # block of g_j
    A = scipy.sparse.csr_matrix(
        (np.concatenate([((W[:, rows] * W[:, cols]) * weight).ravel(), (-(U[:, rows] * U[:, cols]) * weight).ravel()]),
         (np.concatenate([t_idx, t_idx]), np.concatenate([col_w, col_u]))), shape=(T, C * p))
    xi = cp.Variable(T, nonneg=True, name="xi")                                          # (2)
    impostor = A @ m + xi >= 1.0                                                         # (1)
    return cp.Problem(cp.Minimize((1.0 - mu) * pull + mu * cp.sum(xi)), [impostor]), Ms, xi, impostor


def solve_multi_metric_cvxpy(
    problem: MultiMetricLMNNInstance,
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
        return no_solution(problem.problem, problem.variable, problem.variable_shape, status,
                           f"CVXPY status {model.status!r} with no primal value", solver, start)
    solution = np.stack([project_psd(np.asarray(M.value)) for M in Ms])
    objective = problem.objective(solution)
    alpha = np.asarray(impostor.dual_value, dtype=np.float64).ravel()
    bound = multi_metric_dual_bound(problem, triplets, alpha, upper_bound=objective)
    rgap = relative_gap(objective, bound, problem.gap_scale)
    status, message = judge_optimal(status, f"CVXPY status {model.status!r} from {solver}", relative_gap=rgap,
                                    gap_tol=gap_tol)
    return build_result(
        problem.problem, problem.variable, solution, objective, bound, rgap=rgap, status=status, message=message,
        method="cvxpy", solver=solver, max_violation=0.0, iterations=solver_iterations(model), start=start,
        extra={"triplets": triplets, "alpha": np.clip(alpha, 0.0, problem.mu), "restricted_optimum": model.value},
    )
