"""The MVU out-of-sample SDP (Weinberger thesis, Sec. 3.1.10) in CVXPY — the ground truth of
:mod:`sdpembed.solvers.mvu.oos`.

A new input x_t with k nearest training inputs x_1..x_k, embedded at y_1..y_k ∈ Rʳ, is placed
by the SDP stated after (3.33), with ŷ_i and S as defined in (3.31)::

    ŷ_i = (y_i, −1),   S = [[I, y_t], [y_tᵀ, s]]                                   (3.31)

    minimise    Σ_i |ξ_i| + e_{r+1}ᵀ S e_{r+1}
    subject to  (1) ŷ_iᵀ S ŷ_i = ‖x_i − x_t‖² + ξ_i,   i = 1..k
                (2) S[:r, :r] = I
                (3) S ⪰ 0

ŷ_iᵀSŷ_i = ‖y_i‖² − 2y_iᵀy_t + s approximates ‖y_t − y_i‖² by (3.32)–(3.33), exactly when
s = ‖y_t‖²; minimising s closes that gap (S ⪰ 0 ⇔ s ≥ ‖y_t‖² by (3.30)). The thesis writes
(2) as e_iᵀSe_i = 1 for i ≤ r, but says it makes the top-left corner the identity matrix,
which is what we state (for r ≥ 2 the diagonal alone would allow any correlation matrix
there). The model is written literally: an (r+1)×(r+1) PSD variable, the slacks ξ and the
two families of equality constraints.

The certificate: the dual values λ of the constraints (1) (CVXPY's sign convention makes
them the multipliers of ρ_i = ŷ_iᵀSŷ_i − D_i, so λ_i = sign ξ_i where ξ_i ≠ 0) are clipped to
[−1, 1] and turned into the closed-form dual bound g(λ) of
:func:`sdpembed.problems.mvu_oos.dual_bound` — the same code that certifies the hand-written
solver.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the out-of-sample SDP (3.30)–(3.33) of Sec. 3.1.10.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import cvxpy as cp
import numpy as np

from ..problems.mvu_oos import dual_bound
from ..results import SolveResult, build_result, relative_gap
from ._cvxpy import SOLVERS, check_solver, judge_optimal, no_solution, solve_model

__all__ = ["MVUOOSModel", "mvu_oos_problem", "solve_mvu_oos_cvxpy", "SOLVERS"]


#: Settings used unless overridden. At Clarabel's default targets (1e-8) its S is up to
#: ~5e-8 outside the PSD cone and its objective up to 7e-7 below the optimum on unit-scale
#: instances (measured against our certified bounds on 150 random instances); at 1e-10 the
#: error is below 1e-8 and every one of them still ends ``optimal``. SCS is asked for 1e-9
#: so that it is usable as a cross-check.
DEFAULT_OPTIONS = {
    "CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10},
    "SCS": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000},
}


class MVUOOSModel(NamedTuple):
    """The CVXPY model of the out-of-sample SDP."""

    problem: cp.Problem
    S: cp.Variable
    """The (r+1)×(r+1) PSD matrix of (3.31)."""
    xi: cp.Variable
    """The k slacks ξ_i of constraint (1)."""
    distances: cp.Constraint
    """Constraint (1): ŷ_iᵀ S ŷ_i = D_i + ξ_i."""
    identity: cp.Constraint
    """Constraint (2): S[:r, :r] = I."""


def mvu_oos_problem(instance) -> MVUOOSModel:
    """The SDP of Sec. 3.1.10 for one new point, stated literally (see the module docstring).

    Parameters
    ----------
    instance : MVUOOSInstance
        Neighbour outputs ``Y`` (k, r) and squared input distances ``sqdist`` (k,).

    Returns
    -------
    MVUOOSModel
        ``(problem, S, xi, distances, identity)``.
    """
    Y = np.asarray(instance.Y, dtype=np.float64)
    D = np.asarray(instance.sqdist, dtype=np.float64)
    k, r = Y.shape
    Y_hat = np.hstack([Y, -np.ones((k, 1))])                          # ŷ_i = (y_i, −1), (3.31)
    S = cp.Variable((r + 1, r + 1), PSD=True, name="S")                # (3)
    xi = cp.Variable(k, name="xi")
    quadratic = cp.sum(cp.multiply(Y_hat @ S, Y_hat), axis=1)         # ŷ_iᵀ S ŷ_i
    distances = quadratic == D + xi                                    # (1)
    identity = S[:r, :r] == np.eye(r)                                  # (2)
    objective = cp.Minimize(cp.sum(cp.abs(xi)) + S[r, r])              # Σ|ξ_i| + e_{r+1}ᵀ S e_{r+1}
    return MVUOOSModel(cp.Problem(objective, [distances, identity]), S, xi, distances, identity)


def solve_mvu_oos_cvxpy(
    instance,
    solver: str = "CLARABEL",
    *,
    feas_tol: float = 1e-5,
    gap_tol: float = 1e-4,
    verbose: bool = False,
    **solver_options,
) -> SolveResult:
    """Solve an :class:`~sdpembed.problems.MVUOOSInstance` with CVXPY and certify the answer.

    Parameters
    ----------
    instance : MVUOOSInstance
    solver : {"CLARABEL", "SCS"}
    feas_tol, gap_tol : float
        CVXPY's ``optimal`` is kept only if our own check agrees: worst violation of the
        structural constraint (2) ≤ ``feas_tol`` and certified relative gap ≤ ``gap_tol``
        (the defaults of ``verify``); otherwise the result is ``inaccurate``.
    verbose : bool
        Passed to CVXPY.
    **solver_options
        Passed to ``Problem.solve`` over :data:`DEFAULT_OPTIONS`.

    Returns
    -------
    SolveResult
        ``solution`` is CVXPY's S (symmetrised); ``status`` never reports ``optimal`` for
        CVXPY's ``optimal_inaccurate``; ``dual_bound`` is g(λ) from CVXPY's dual values;
        ``extra`` holds the point ``y`` = S[:r, r], ``s`` = S[r, r], ``xi`` and ``lam``.
    """
    solver = check_solver(solver)
    start = time.perf_counter()
    k, r = instance.Y.shape
    model = mvu_oos_problem(instance)
    solved = solve_model(model.problem, model.S, solver, DEFAULT_OPTIONS, solver_options, verbose)
    if solved.matrix is None:
        return no_solution(instance.problem, instance.variable, (r + 1, r + 1), solved.status, solved.message,
                           solver, start)
    S = solved.matrix
    objective = float(instance.objective(S))
    violation = float(instance.max_violation(S))
    lam = np.zeros(k)
    if model.distances.dual_value is not None:
        lam = np.clip(np.asarray(model.distances.dual_value, dtype=np.float64).ravel(), -1.0, 1.0)
    bound = float(dual_bound(lam[None], instance.Y[None], instance.sqdist[None])[0])
    rgap = relative_gap(objective, bound)
    status, message = judge_optimal(solved.status, solved.message, relative_gap=rgap, gap_tol=gap_tol,
                                    violation=violation, feas_tol=feas_tol)
    return build_result(
        instance.problem, instance.variable, S, objective, bound, status=status, message=message, method="cvxpy",
        solver=solver, max_violation=violation, iterations=solved.iterations, start=start,
        extra={
            "y": S[:r, r].copy(), "s": float(S[r, r]), "xi": np.asarray(model.xi.value).ravel(), "lam": lam,
            "cvxpy_status": solved.cvxpy_status,
        },
    )
