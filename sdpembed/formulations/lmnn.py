"""The LMNN SDP of thesis Sec. 2.1.3 (slack form of (2.11)) in CVXPY — the ground truth of LMNN. ::

    minimise    (1 − μ) Σ_{j⇝i} (x_i − x_j)ᵀ M (x_i − x_j) + μ Σ_{j⇝i, l} (1 − y_il) ξ_ijl
    subject to  (1) (x_i − x_l)ᵀ M (x_i − x_l) − (x_i − x_j)ᵀ M (x_i − x_j) ≥ 1 − ξ_ijl
                (2) ξ_ijl ≥ 0
                (3) M ⪰ 0

At the optimum ξ_ijl = [1 + D_M(x_i, x_j) − D_M(x_i, x_l)]₊, so the optimal value is the
minimum of the loss (2.11) over M ⪰ 0. With C_ij = (x_i − x_j)(x_i − x_j)ᵀ (Sec. 2.1.7) the
pull term is tr(MP), P = Σ_{j⇝i} C_ij, and constraint (1) reads tr(M(C_il − C_ij)) ≥ 1 − ξ_ijl.

**Triplets.** The full problem has one slack per triplet (i, j, l), j ⇝ i, y_l ≠ y_i: n²k of
them. :func:`solve_lmnn_cvxpy` states it on a given set of triplets (all by default, refused
above ``max_triplets``); :func:`solve_lmnn_working_set` reaches the full optimum through
restricted problems only (see its docstring for why the answer is exact).

**Certificate.** Any multipliers α_ijl ∈ [0, μ] of constraint (1) give a lower bound on the
full optimum (:func:`sdpembed.problems.lmnn.lmnn_dual_bound`, derived there); the CVXPY dual
values of (1) are such multipliers, so every solve here is certified by the same function the
hand-written solver uses. The reported solution is CVXPY's M symmetrised and projected onto the
PSD cone (2.16), and the reported objective is the exact loss (2.11) of that matrix over *all*
triplets.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the slack SDP of Sec. 2.1.3, the loss (2.11), the
   projection (2.16).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from ..graphs import all_triplets, impostor_triplets, iter_hinges, nearest_impostors
from ..problems.lmnn import check_triplets, lmnn_dual_bound, project_psd, triplet_keys
from ..results import SolveResult, build_result, relative_gap
from ._cvxpy import check_solver, judge_optimal, no_solution, solve_model

__all__ = [
    "DEFAULT_LMNN_OPTIONS",
    "MAX_TRIPLETS",
    "lmnn_problem",
    "solve_lmnn_cvxpy",
    "solve_lmnn_working_set",
]

#: Largest number of triplets (slack variables) :func:`solve_lmnn_cvxpy` accepts by default.
#: Wine (n = 178, k = 3) has about 63,000, already a long Clarabel solve (BENCHMARKS.md, "LMNN
#: against metric-learn and pylmnn", the CVXPY ground truth on wine); beyond this size use
#: :func:`solve_lmnn_working_set`, which states only the triplets that matter.
MAX_TRIPLETS = 100_000

#: CVXPY settings used unless overridden. Clarabel's dual residual stalls near 1e-6 on the
#: restricted problems of standardised wine (n = 178, d = 13, 4,600 triplets: status
#: ``optimal_inaccurate`` at a gap of 1e-7 with the NuMax settings), so feasibility is asked
#: to 1e-6 and the gap to 1e-7; every answer is then judged by its certified gap
#: (:func:`lmnn_dual_bound`), not by the solver's word. SCS runs at its own defaults.
DEFAULT_LMNN_OPTIONS = {
    "CLARABEL": {"tol_gap_abs": 1e-7, "tol_gap_rel": 1e-7, "tol_feas": 1e-6},
    "SCS": {},
}


# ------------------------------------------------------------------------------ model
def lmnn_problem(instance, triplets: np.ndarray | None = None):
    """The SDP of Sec. 2.1.3 on a set of triplets (all of them by default).

    Returns
    -------
    problem : cvxpy.Problem
    M : cvxpy.Variable
        The (d, d) PSD metric.
    xi : cvxpy.Variable or None
        The slacks ξ_ijl, one per triplet (None without triplets).
    impostor : cvxpy.Constraint or None
        Constraint (1), whose dual values are the multipliers α of :func:`lmnn_dual_bound`.
    """
    triplets = all_triplets(instance.y, instance.targets) if triplets is None else check_triplets(instance, triplets)
    X, mu, d = instance.X, instance.mu, instance.dim
    M = cp.Variable((d, d), PSD=True, name="M")                               # (3) M ⪰ 0
    pull = cp.sum(cp.multiply(instance.pull_matrix, M))                      # Σ_{j⇝i} D_M(x_i, x_j) = tr(MP)
    if triplets.shape[0] == 0:
        return cp.Problem(cp.Minimize((1.0 - mu) * pull)), M, None, None
    # tr(M(C_il − C_ij)) in the upper triangle of M: coefficient C_ab, doubled off the diagonal
    rows, cols = np.triu_indices(d)
    weight = np.where(rows == cols, 1.0, 2.0)
    U = X[triplets[:, 0]] - X[triplets[:, 1]]                                # x_i − x_j
    W = X[triplets[:, 0]] - X[triplets[:, 2]]                                # x_i − x_l
    A = (W[:, rows] * W[:, cols] - U[:, rows] * U[:, cols]) * weight
    xi = cp.Variable(triplets.shape[0], nonneg=True, name="xi")              # (2) ξ ≥ 0
    impostor = A @ M[rows, cols] + xi >= 1.0                                 # (1) D_M(i,l) − D_M(i,j) ≥ 1 − ξ
    objective = cp.Minimize((1.0 - mu) * pull + mu * cp.sum(xi))
    return cp.Problem(objective, [impostor]), M, xi, impostor


@dataclass
class _Restricted:
    """A raw CVXPY solve of the SDP on a set of triplets."""

    status: str
    cvxpy_status: str
    M: np.ndarray | None
    alpha: np.ndarray
    value: float
    iterations: int
    message: str


def _solve_restricted(instance, triplets: np.ndarray, solver: str, verbose: bool, options: dict) -> _Restricted:
    problem, M, _, impostor = lmnn_problem(instance, triplets)
    solved = solve_model(problem, M, solver, DEFAULT_LMNN_OPTIONS, options, verbose)
    alpha = np.zeros(len(triplets))
    if solved.matrix is None:
        return _Restricted(solved.status, solved.cvxpy_status, None, alpha, np.nan, solved.iterations, solved.message)
    if impostor is not None and impostor.dual_value is not None:
        alpha = np.asarray(impostor.dual_value, dtype=np.float64).ravel()
    value = float(problem.value) if problem.value is not None else np.nan
    return _Restricted(solved.status, solved.cvxpy_status, solved.matrix, alpha, value, solved.iterations,
                       solved.message)


def _failed(instance, raw: _Restricted, method: str, solver: str, start: float) -> SolveResult:
    """The result of a CVXPY solve that returned no matrix (never ``optimal``)."""
    return no_solution(instance.problem, "M", (instance.dim,) * 2, raw.status, raw.message, solver, start,
                       raw.iterations, method)


def _certified_result(
    instance, raw: _Restricted, solution: np.ndarray, objective: float, triplets: np.ndarray, *,
    method: str, solver: str, start: float, gap_tol: float, status: str, message: str,
    iterations: int, history: dict | None = None, extra: dict | None = None,
) -> SolveResult:
    """Certify a solution with :func:`lmnn_dual_bound` and keep ``optimal`` only if the
    certified gap agrees."""
    bound = lmnn_dual_bound(instance, triplets, raw.alpha, upper_bound=objective)
    rgap = relative_gap(objective, bound, instance.gap_scale)
    status, message = judge_optimal(status, message, relative_gap=rgap, gap_tol=gap_tol)
    return build_result(
        instance.problem, "M", solution, objective, bound, rgap=rgap, status=status, message=message, method=method,
        solver=solver, max_violation=instance.max_violation(solution), iterations=iterations, start=start,
        history=history,
        extra={
            "triplets": triplets, "alpha": np.clip(raw.alpha, 0.0, instance.mu),
            "restricted_optimum": raw.value, "cvxpy_status": raw.cvxpy_status,
            "raw_min_eigenvalue": float(np.linalg.eigvalsh(0.5 * (raw.M + raw.M.T))[0]),
            **(extra or {}),
        },
    )


# ------------------------------------------------------------------------------ solves
def solve_lmnn_cvxpy(
    instance,
    *,
    solver: str = "CLARABEL",
    triplets: np.ndarray | None = None,
    max_triplets: int = MAX_TRIPLETS,
    gap_tol: float = 1e-4,
    verbose: bool = False,
    **solver_options,
) -> SolveResult:
    """Solve an :class:`~sdpembed.problems.LMNNInstance` with the SDP of Sec. 2.1.3 in CVXPY.

    Parameters
    ----------
    instance : LMNNInstance
    solver : {"CLARABEL", "SCS"}
    triplets : ndarray of int, shape (T, 3), optional
        The triplets (i, j, l) given a slack; all k Σ_i (n − n_{y_i}) of them by default. With
        a subset the model is a relaxation; the reported objective is still the full loss
        (2.11) of the solution, so the certified gap shows whether the subset sufficed.
    max_triplets : int
        Refuse (ValueError) to state more slacks than this; use :func:`solve_lmnn_working_set`.
    gap_tol : float
        CVXPY's ``optimal`` is kept only if the certified relative gap is at most this.
    verbose : bool
        Passed to CVXPY.
    **solver_options
        Passed to ``Problem.solve`` over :data:`DEFAULT_LMNN_OPTIONS`.

    Returns
    -------
    SolveResult
        ``solution`` is P_S(M) (2.16) of CVXPY's M, ``objective`` its loss (2.11) over all
        triplets, ``dual_bound`` the certified bound of :func:`lmnn_dual_bound` from the dual
        values of (1); ``optimal_inaccurate`` becomes ``inaccurate``, never ``optimal``.
        ``extra`` holds the triplets, their multipliers ``alpha`` and CVXPY's optimal value of
        the stated model (``restricted_optimum``).
    """
    start = time.perf_counter()
    solver = check_solver(solver)
    if triplets is None:
        count = instance.n_triplets
        if count > max_triplets:
            raise ValueError(
                f"the instance has {count} triplets, more than max_triplets={max_triplets} slack variables; "
                "use the exact working-set method (sdpembed.solve(instance, 'working_set')) or raise max_triplets"
            )
        triplets = all_triplets(instance.y, instance.targets)
    else:
        triplets = check_triplets(instance, triplets)
        if triplets.shape[0] > max_triplets:
            raise ValueError(f"{triplets.shape[0]} triplets exceed max_triplets={max_triplets}")
    raw = _solve_restricted(instance, triplets, solver, verbose, solver_options)
    if raw.M is None:
        return _failed(instance, raw, "cvxpy", solver, start)
    solution = project_psd(raw.M)
    objective = instance.objective(solution)
    return _certified_result(
        instance, raw, solution, objective, triplets, method="cvxpy", solver=solver, start=start,
        gap_tol=gap_tol, status=raw.status, message=raw.message, iterations=raw.iterations,
    )


def solve_lmnn_working_set(
    instance,
    *,
    solver: str = "CLARABEL",
    max_rounds: int = 50,
    tol: float = 1e-7,
    max_triplets: int = MAX_TRIPLETS,
    gap_tol: float = 1e-4,
    verbose: bool = False,
    max_iter: int | None = None,
    **solver_options,
) -> SolveResult:
    """Solve (2.11) exactly with CVXPY on a growing working set of triplets.

    Start from the triplets active at M = I (hinge > 0, the impostors (2.4) of the Euclidean
    metric) together with each target pair's nearest impostor; then repeat: solve the SDP of
    Sec. 2.1.3 on the working set 𝒲, evaluate *every* hinge of (2.11) at the solution
    (streamed in blocks, :func:`sdpembed.graphs.iter_hinges`), add the triplets whose hinge
    exceeds ``tol``, and stop when none is added. The set only grows, so this terminates.

    **Why the answer is exact.** The restricted problem drops the nonnegative terms
    μ[h_t]₊ of the omitted triplets, so it is a relaxation: its optimum ε_𝒲* ≤ ε*. At its
    minimiser M_𝒲, if every omitted hinge is ≤ 0 then ε(M_𝒲) = ε_𝒲(M_𝒲) = ε_𝒲* ≤ ε*, so
    M_𝒲 is optimal for the full problem and the restricted optimum *is* the full optimum.
    Numerically the stop rule leaves omitted hinges ≤ ``tol``, so ε(M_𝒲) ≤ ε_𝒲(M_𝒲) + μ·Σ
    (omitted hinges)₊, reported as ``extra["omitted_hinge_sum"]``. The restricted optimum
    is a lower bound only up to the solver's accuracy, so the reported ``dual_bound`` is the
    certified bound of :func:`lmnn_dual_bound` from the multipliers of 𝒲 (zero on omitted
    triplets, which keeps them dual feasible for the full problem); CVXPY's restricted optimal
    value is ``extra["restricted_optimum"]``.

    Parameters
    ----------
    instance : LMNNInstance
    solver : {"CLARABEL", "SCS"}
    max_rounds : int
        Largest number of restricted solves; ``max_iterations`` if the set is still growing.
    tol : float
        Omitted hinges above this are added (hinges are in units of the margin 1 of (2.6)).
    max_triplets : int
        Largest working set handed to CVXPY (ValueError beyond).
    gap_tol : float
        ``optimal`` needs a certified relative gap at most this.
    verbose : bool
        Print one line per round (working-set size, additions, objective, restricted value).
    max_iter : int, optional
        Alias of ``max_rounds`` (the CLI's ``--max-iter``).
    **solver_options
        Passed to CVXPY's ``Problem.solve``.

    Returns
    -------
    SolveResult
        As :func:`solve_lmnn_cvxpy`, with ``method="working_set"``, ``iterations`` the number
        of rounds, ``history`` per round (``working_set``, ``added``, ``objective``,
        ``restricted_optimum``, ``omitted_hinge_sum``, ``max_omitted_hinge``) and in ``extra``
        the final working set, its multipliers and ``omitted_hinge_sum``/``max_omitted_hinge``.
    """
    start = time.perf_counter()
    solver = check_solver(solver)
    max_rounds = int(max_iter if max_iter is not None else max_rounds)
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, got {max_rounds}")
    tol = float(tol)
    if not (np.isfinite(tol) and tol >= 0.0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    n = instance.n_points
    X, y, targets = instance.X, instance.y, instance.targets
    nearest = nearest_impostors(X, y)
    seed = np.column_stack([np.repeat(np.arange(n), instance.k), targets.ravel(), np.repeat(nearest, instance.k)])
    working = np.concatenate([impostor_triplets(X, y, targets), seed])
    working = working[np.unique(triplet_keys(working, n), return_index=True)[1]]
    history: dict[str, list] = {key: [] for key in (
        "working_set", "added", "objective", "restricted_optimum", "omitted_hinge_sum", "max_omitted_hinge")}
    raw = None
    converged = False
    total_iterations = 0
    for round_ in range(1, max_rounds + 1):
        if working.shape[0] > max_triplets:
            raise ValueError(
                f"the working set grew to {working.shape[0]} triplets, more than max_triplets={max_triplets}"
            )
        solved = working
        raw = _solve_restricted(instance, solved, solver, verbose=False, options=solver_options)
        total_iterations += raw.iterations
        if raw.M is None:
            return _failed(instance, raw, "working_set", solver, start)
        solution = project_psd(raw.M)
        # every hinge of (2.11) at the solution: the full loss, and the omitted positive ones
        keys = np.sort(triplet_keys(working, n))
        pull = float(np.sum(instance.pull_matrix * solution))
        push, omitted_sum, omitted_max, added = 0.0, 0.0, 0.0, []
        for block, hinges in iter_hinges(X, y, targets, solution, threshold=0.0):
            push += float(hinges.sum())
            omitted = ~np.isin(triplet_keys(block, n), keys, assume_unique=False)
            if np.any(omitted):
                omitted_sum += float(hinges[omitted].sum())
                omitted_max = max(omitted_max, float(hinges[omitted].max()))
                added.append(block[omitted & (hinges > tol)])
        objective = (1.0 - instance.mu) * pull + instance.mu * push
        new = np.concatenate(added) if added else np.empty((0, 3), dtype=np.int64)
        for key, value in (("working_set", working.shape[0]), ("added", new.shape[0]), ("objective", objective),
                           ("restricted_optimum", raw.value), ("omitted_hinge_sum", omitted_sum),
                           ("max_omitted_hinge", omitted_max)):
            history[key].append(value)
        if verbose:
            print(f"round {round_:3d}  working set {working.shape[0]:8d}  added {new.shape[0]:7d}  "
                  f"objective {objective:.10g}  restricted {raw.value:.10g}  [{raw.cvxpy_status}]")
        if new.shape[0] == 0:
            converged = True
            break
        working = np.concatenate([working, new])
    status, message = raw.status, raw.message
    if converged:
        message = f"working set of {solved.shape[0]} triplets after {round_} round(s); every omitted hinge <= " \
                  f"{tol:g}; last restricted solve: {message}"
    else:
        status = "max_iterations"
        message = (f"the working set was still growing after {max_rounds} round(s): {new.shape[0]} omitted "
                   f"triplet(s) with hinge > {tol:g} at the solution on {solved.shape[0]} triplets")
    return _certified_result(
        instance, raw, solution, objective, solved, method="working_set", solver=solver, start=start,
        gap_tol=gap_tol, status=status, message=message, iterations=round_,
        history={key: np.asarray(value) for key, value in history.items()},
        extra={"omitted_hinge_sum": omitted_sum, "max_omitted_hinge": omitted_max,
               "solver_iterations": total_iterations, "rounds": round_},
    )
