"""The NuMax SDP (4) in CVXPY — the ground truth every hand-written NuMax solver is checked
against. ::

    minimise    ‖P‖_* = tr P                       (4), P ⪰ 0 makes the nuclear norm a trace
    subject to  ‖𝒜(P) − 1_S‖_∞ ≤ δ                 i.e. 1 − δ ≤ v_iᵀ P v_i ≤ 1 + δ
                P ⪰ 0

**Span reduction** (``reduce=True``, the default). Every optimal P lies in the span of the
secants: with Π the orthogonal projector onto it, ΠPΠ ⪰ 0 keeps every v_iᵀPv_i and does not
increase the trace. So the model is stated for P = Q P̃ Qᵀ with Q an orthonormal basis of
that span (r = rank V columns) and P̃ ⪰ 0 of size r × r — the same SDP, exactly, but an
interior-point solver then works on an r×r cone instead of N×N (the dense scaling matrix of an
N×N cone has (N(N+1)/2)² entries: 8 GiB at N = 256). ``reduce=False`` states (4) literally.

The two sides of the max-norm constraint are stated separately so that each has its own
dual value: y = y⁺ − y⁻ is then turned into a certified lower bound by scaling it to
I − 𝒜*(y) ⪰ 0 (:func:`sdpembed.problems.numax_certificate.certified_lower_bound`), exactly as for the
hand-written solvers, so CVXPY's optimum and ours are certified by the same code.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the SDP (4).
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np

from .._validate import as_matrix
from ..problems.numax_certificate import box_violation, certified_lower_bound, check_bounds, secant_span
from ..problems.numax_operator import SecantOperator
from ..results import GroundTruthTooLarge, SolveResult, build_result, relative_gap
from ._cvxpy import SOLVERS, check_solver, judge_optimal, no_solution, solve_model

__all__ = [
    "MAX_SECANTS",
    "SOLVERS",
    "box_trace_problem",
    "check_ground_truth_size",
    "solve_box_trace_cvxpy",
    "solve_numax_cvxpy",
]


#: Most secants the CVXPY ground truth accepts (beyond, Clarabel's dense scaling matrices outgrow
#: the memory of a workstation).
MAX_SECANTS = 20000

#: Settings used unless overridden. Clarabel's default targets (1e-8) stall at
#: ``optimal_inaccurate`` on these dense SDPs (e.g. 30 Gaussian points in R^20 stall at
#: a certified gap of 7.7e-8; a NuMax-Class digits instance at a gap of 7.3e-8 with no
#: violation). Asking for gaps of 1e-6 and feasibility of 1e-7 — still two orders below every
#: tolerance we check, and our own certificate reports what was reached — lets it certify
#: at a stated accuracy. SCS runs at its own defaults.
DEFAULT_OPTIONS = {
    "CLARABEL": {"tol_gap_abs": 1e-6, "tol_gap_rel": 1e-6, "tol_feas": 1e-7},
    "SCS": {},
}


def box_trace_problem(secants: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """Build min tr P s.t. lo ≤ 𝒜(P) ≤ hi, P ⪰ 0 (NuMax (4), or (7) with one-sided bounds).

    ``secants`` may be given in any orthonormal basis of their span (rows V Q): the
    variable is then P̃ = QᵀPQ, and tr P̃ = tr P.

    Returns
    -------
    problem : cvxpy.Problem
    P : cvxpy.Variable
        The PSD matrix variable, of size secants.shape[1].
    lower, upper : tuple (constraint or None, index array)
        The constraints on the finite lower and upper bounds, with the secants they cover.
    """
    V = np.asarray(secants, dtype=np.float64)
    N = V.shape[1]
    P = cp.Variable((N, N), PSD=True, name="P")
    A_of_P = cp.sum(cp.multiply(V @ P, V), axis=1)                 # 𝒜(P) = (v_iᵀ P v_i)_i
    has_lo, has_hi = np.flatnonzero(np.isfinite(lo)), np.flatnonzero(np.isfinite(hi))
    lower = A_of_P[has_lo] >= lo[has_lo] if has_lo.size else None    # v_iᵀ P v_i ≥ 1 − δ
    upper = A_of_P[has_hi] <= hi[has_hi] if has_hi.size else None    # v_iᵀ P v_i ≤ 1 + δ
    constraints = [c for c in (lower, upper) if c is not None]
    problem = cp.Problem(cp.Minimize(cp.trace(P)), constraints)     # ‖P‖_* = tr P on P ⪰ 0
    return problem, P, (lower, has_lo), (upper, has_hi)


def solve_box_trace_cvxpy(
    secants: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    problem_name: str = "numax",
    solver: str = "CLARABEL",
    reduce: bool = True,
    feas_tol: float = 1e-5,
    gap_tol: float = 1e-4,
    verbose: bool = False,
    **solver_options,
) -> SolveResult:
    """Solve min tr P s.t. lo ≤ 𝒜(P) ≤ hi, P ⪰ 0 with CVXPY and certify the answer.

    Parameters
    ----------
    secants : ndarray of shape (S, N)
    lo, hi : ndarray of shape (S,)
        Bounds on v_iᵀ P v_i (``±inf`` for none).
    problem_name : str
        Registry name recorded in the result.
    solver : {"CLARABEL", "SCS"}
    reduce : bool
        State the model in the span of the secants (exact; see the module docstring).
    feas_tol, gap_tol : float
        CVXPY's ``optimal`` is kept only if our own check agrees: worst violation ≤
        ``feas_tol`` and certified relative gap ≤ ``gap_tol`` (the defaults of ``verify``);
        otherwise the result is ``inaccurate``.
    verbose : bool
        Passed to CVXPY.
    **solver_options
        Passed to ``Problem.solve`` over :data:`DEFAULT_OPTIONS` (e.g. ``eps_abs`` for SCS,
        ``tol_gap_rel`` for Clarabel).

    Returns
    -------
    SolveResult
        ``status`` maps CVXPY's: ``optimal_inaccurate`` becomes ``inaccurate``, never
        ``optimal``, and neither does an ``optimal`` our certificate contradicts. The dual
        bound comes from CVXPY's dual values.
    """
    solver = check_solver(solver)
    start = time.perf_counter()
    V = as_matrix(secants, "secants")
    lo, hi = check_bounds(lo, hi, V.shape[0])
    basis = secant_span(V) if reduce else None
    model_secants = V if basis is None else V @ basis
    problem, P, (lower, has_lo), (upper, has_hi) = box_trace_problem(model_secants, lo, hi)
    solved = solve_model(problem, P, solver, DEFAULT_OPTIONS, solver_options, verbose)
    if solved.matrix is None:
        return no_solution(problem_name, "P", (V.shape[1],) * 2, solved.status, solved.message, solver, start)
    Pv = solved.matrix
    if basis is not None:
        Pv = basis @ Pv @ basis.T
    y = np.zeros(V.shape[0])
    if lower is not None and lower.dual_value is not None:
        y[has_lo] += np.asarray(lower.dual_value).ravel()
    if upper is not None and upper.dual_value is not None:
        y[has_hi] -= np.asarray(upper.dual_value).ravel()
    op = SecantOperator(V)
    bound, y_feasible = certified_lower_bound(op, lo, hi, y)
    violation = box_violation(op.apply(Pv), lo, hi)
    objective = float(np.trace(Pv))
    rgap = relative_gap(objective, bound)
    status, message = judge_optimal(solved.status, solved.message, relative_gap=rgap, gap_tol=gap_tol,
                                    violation=violation, feas_tol=feas_tol)
    return build_result(
        problem_name, "P", Pv, objective, bound, status=status, message=message, method="cvxpy", solver=solver,
        max_violation=violation, iterations=solved.iterations, start=start,
        extra={"y": y_feasible, "cvxpy_status": solved.cvxpy_status},
    )


def check_ground_truth_size(instance, max_secants: int) -> None:
    """Refuse (:class:`~sdpembed.results.GroundTruthTooLarge`) an instance with more secants than ``max_secants``."""
    if instance.n_constraints > max_secants:
        raise GroundTruthTooLarge(
            f"the instance has {instance.n_constraints} secants, more than the {max_secants} a generic SDP "
            "solver is asked to handle (max_secants); solve it by column generation (method 'cg', which "
            "certifies its gap) or give a known optimum"
        )


def solve_numax_cvxpy(
    instance, *, solver: str = "CLARABEL", verbose: bool = False, max_secants: int = MAX_SECANTS, **options
) -> SolveResult:
    """Solve a :class:`~sdpembed.problems.NuMaxInstance` (4) with CVXPY (Clarabel or SCS).

    ``options`` are those of :func:`solve_box_trace_cvxpy` (``reduce``, solver settings).
    Instances with more than ``max_secants`` secants are refused with
    :class:`~sdpembed.results.GroundTruthTooLarge` (use column generation, or a stored optimum).
    """
    check_ground_truth_size(instance, max_secants)
    V = instance.secant_matrix
    lo, hi = instance.bounds(V.shape[0])
    return solve_box_trace_cvxpy(
        V, lo, hi, problem_name=instance.problem, solver=solver, verbose=verbose, **options
    )
