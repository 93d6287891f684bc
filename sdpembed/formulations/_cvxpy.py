"""What every CVXPY ground truth shares: reading CVXPY's status and judging it by our certificate.

CVXPY's ``optimal_inaccurate`` becomes ``inaccurate``, and an ``optimal`` that our own check
contradicts (a violation or a certified gap above tolerance) is downgraded to ``inaccurate``:
sdpembed never reports ``optimal`` for an answer it cannot back (DESIGN.md, 'Three faces of every
SDP, one certificate').
"""

from __future__ import annotations

import time
from typing import NamedTuple

import cvxpy as cp
import numpy as np

from ..results import SolveResult

__all__ = [
    "CVXPY_STATUS",
    "SOLVERS",
    "ModelSolve",
    "check_solver",
    "judge_optimal",
    "no_solution",
    "solve_model",
    "solver_iterations",
    "status_of",
]

#: CVXPY back-ends the ground truths support, Clarabel (interior point) first.
SOLVERS = ("CLARABEL", "SCS")

#: CVXPY's statuses in the vocabulary of :data:`sdpembed.results.STATUSES` (others: ``error``).
CVXPY_STATUS = {
    cp.OPTIMAL: "optimal",
    cp.OPTIMAL_INACCURATE: "inaccurate",
    cp.INFEASIBLE: "infeasible",
    cp.INFEASIBLE_INACCURATE: "infeasible",
    cp.UNBOUNDED: "unbounded",
    cp.UNBOUNDED_INACCURATE: "unbounded",
}


def check_solver(solver: object) -> str:
    """The back-end's name in upper case, or a ValueError listing :data:`SOLVERS`."""
    name = str(solver).upper()
    if name not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    return name


def status_of(problem: cp.Problem) -> str:
    """The sdpembed status of a solved CVXPY problem."""
    return CVXPY_STATUS.get(problem.status, "error")


def solver_iterations(problem: cp.Problem) -> int:
    """Iterations the back-end reported (0 if it reported none)."""
    stats = problem.solver_stats
    return int(stats.num_iters or 0) if stats is not None else 0


class ModelSolve(NamedTuple):
    """What one CVXPY solve of a model returned, in sdpembed's vocabulary."""

    matrix: np.ndarray | None
    """The symmetric part of the matrix variable's value; None when the solve gave no value."""
    status: str
    """:func:`status_of` the problem; ``error`` when the back-end raised, never ``optimal`` without a matrix."""
    message: str
    """What CVXPY said (the reason when there is no matrix)."""
    cvxpy_status: str
    """CVXPY's own status (``solver_error`` when the back-end raised)."""
    iterations: int
    """:func:`solver_iterations` (0 when the back-end raised)."""


def solve_model(
    problem: cp.Problem, variable: cp.Variable, solver: str, defaults: dict, options: dict, verbose: bool = False
) -> ModelSolve:
    """Solve ``problem`` with ``solver`` (its settings ``defaults[solver]``, overridden by ``options``)
    and read the matrix ``variable``.

    A back-end that raises :class:`cvxpy.error.SolverError`, or returns no value of ``variable``,
    gives ``matrix=None`` and a message saying which; the caller turns that into
    :func:`no_solution` (or its own failure record).
    """
    try:
        problem.solve(solver=solver, verbose=verbose, **{**defaults[solver], **options})
    except cp.error.SolverError as exc:
        return ModelSolve(None, "error", f"{solver} failed: {exc}", "solver_error", 0)
    status = status_of(problem)
    iterations = solver_iterations(problem)
    if variable.value is None:
        return ModelSolve(None, status if status != "optimal" else "error",
                          f"CVXPY status {problem.status!r} with no primal value", str(problem.status), iterations)
    matrix = 0.5 * (variable.value + variable.value.T)
    return ModelSolve(matrix, status, f"CVXPY status {problem.status!r} from {solver}", str(problem.status),
                      iterations)


def judge_optimal(
    status: str,
    message: str,
    *,
    relative_gap: float,
    gap_tol: float,
    violation: float | None = None,
    feas_tol: float | None = None,
) -> tuple[str, str]:
    """Keep ``optimal`` only if the certified relative gap (and the violation, when given) is
    within tolerance; otherwise ``inaccurate``, with the reason appended to ``message``."""
    bad_violation = violation is not None and feas_tol is not None and violation > feas_tol
    if status != "optimal" or not (bad_violation or relative_gap > gap_tol):
        return status, message
    shown = f"violation {violation:.2e} (tolerance {feas_tol:g}) and " if violation is not None else ""
    return "inaccurate", (f"{message}, but the certificate shows {shown}certified relative gap {relative_gap:.2e} "
                          f"(tolerance {gap_tol:g}); tighten the solver's tolerances")


def no_solution(
    problem: str, variable: str, shape: tuple[int, ...], status: str, message: str, solver: str,
    start: float, iterations: int = 0, method: str = "cvxpy",
) -> SolveResult:
    """The result of a CVXPY solve that returned no matrix: NaN solution, never ``optimal``."""
    return SolveResult(
        problem=problem, variable=variable, solution=np.full(shape, np.nan), objective=float("nan"),
        status=status if status != "optimal" else "error", message=message, method=method, solver=solver,
        iterations=iterations, wall_time=time.perf_counter() - start,
    )
