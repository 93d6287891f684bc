"""`SolveResult`: the one return type of every solve, CVXPY or hand-written.

Modelled on :class:`scipy.optimize.OptimizeResult`: plain attributes, a readable summary,
and nothing hidden. A result is *certified* when it carries a dual bound built from a
dual-feasible point; its ``gap`` is then a proven bound on the suboptimality of
``solution`` (provided the solution is feasible, which ``max_violation`` reports).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["SolveResult", "STATUSES", "GroundTruthTooLarge", "relative_gap", "least_eigenvalue", "build_result"]

#: The statuses a solve may report. Only ``optimal`` claims convergence to the requested
#: accuracy; ``inaccurate`` is CVXPY's ``optimal_inaccurate`` (or a run whose certificate
#: falls short of the tolerance), ``max_iterations`` an unconverged hand-written run.
STATUSES = ("optimal", "inaccurate", "max_iterations", "infeasible", "unbounded", "error")


class GroundTruthTooLarge(ValueError):
    """A CVXPY ground truth refused an instance too large for a generic solver."""


def relative_gap(objective: float, bound: float, scale: float = 0.0) -> float:
    """(objective − bound) / max(|objective|, |bound|, scale, 1e-12): the relative duality gap.

    ``scale`` is the instance's ``gap_scale`` (μ for :class:`~sdpembed.problems.lmnn.LMNNInstance`,
    0 otherwise): the objective value below which the gap is measured absolutely, in units of
    ``scale``. A problem whose objective has a unit of its own (LMNN's loss counts margins) needs
    it: its optimum can be tiny or zero, and a gap relative to the optimum alone could then never
    be small.
    """
    if not (np.isfinite(objective) and np.isfinite(bound)):
        return float("inf")
    return float((objective - bound) / max(abs(objective), abs(bound), scale, 1e-12))


@dataclass
class SolveResult:
    """The outcome of solving one instance.

    Attributes
    ----------
    problem : str
        Registry name of the problem (``"numax"``, ...).
    variable : str
        Name of the decision variable in the file contract (``"P"`` for NuMax).
    solution : ndarray
        The decision variable.
    objective : float
        Objective value of ``solution`` (tr P for NuMax).
    status : str
        One of :data:`STATUSES`.
    message : str
        Human-readable explanation of ``status``.
    method : str
        ``"cvxpy"`` or the hand-written method's name (``"admm"``, ...).
    solver : str
        The numerical engine (``"CLARABEL"``, ``"SCS"``, ``"numax_admm"``).
    dual_bound : float
        A certified lower bound on the optimum (minimisation), ``nan`` when none was built.
    gap, relative_gap : float
        ``objective − dual_bound`` and its relative version; ``nan`` without a bound.
    max_violation : float
        Worst constraint violation of ``solution`` (0 when feasible).
    min_eigenvalue : float
        Least eigenvalue of ``solution`` (PSD residual).
    iterations : int
        Iterations of the method (CVXPY: those reported by the solver, or 0).
    wall_time : float
        Seconds spent in the solve, set-up included.
    history : dict of str to ndarray
        Per-iteration traces (objective, residuals, gap, ...) for convergence plots.
    extra : dict
        Method-specific data: dual multipliers ``y``, warm-start state, ...
    """

    problem: str
    variable: str
    solution: np.ndarray
    objective: float
    status: str
    message: str = ""
    method: str = ""
    solver: str = ""
    dual_bound: float = float("nan")
    gap: float = float("nan")
    relative_gap: float = float("nan")
    max_violation: float = float("nan")
    min_eigenvalue: float = float("nan")
    iterations: int = 0
    wall_time: float = 0.0
    history: dict[str, np.ndarray] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    @property
    def certified(self) -> bool:
        """True when a finite dual bound backs the reported gap."""
        return bool(np.isfinite(self.dual_bound))

    @property
    def success(self) -> bool:
        """True only for status ``optimal``."""
        return self.status == "optimal"

    def summary(self) -> dict[str, Any]:
        """The scalar fields as a JSON-serialisable dict."""
        keys = (
            "problem", "method", "solver", "status", "message", "objective", "dual_bound",
            "gap", "relative_gap", "max_violation", "min_eigenvalue", "iterations", "wall_time",
        )
        out: dict[str, Any] = {}
        for key in keys:
            value = getattr(self, key)
            out[key] = float(value) if isinstance(value, (float, np.floating)) else value
        return out

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"SolveResult({s['problem']}/{s['method']} [{s['solver']}]: status={s['status']}, "
            f"objective={s['objective']:.8g}, dual_bound={s['dual_bound']:.8g}, "
            f"relative_gap={s['relative_gap']:.2e}, max_violation={s['max_violation']:.2e}, "
            f"min_eigenvalue={s['min_eigenvalue']:.2e}, iterations={s['iterations']}, "
            f"wall_time={s['wall_time']:.3f}s)"
        )


def least_eigenvalue(solution: np.ndarray) -> float:
    """The least eigenvalue of a symmetric matrix, or of a stack of them (the least over the stack)."""
    if solution.ndim == 3:
        return float(min(np.linalg.eigvalsh(M)[0] for M in solution))
    return float(np.linalg.eigvalsh(solution)[0])


def build_result(
    problem: str,
    variable: str,
    solution: np.ndarray,
    objective: float,
    dual_bound: float,
    *,
    status: str,
    message: str,
    method: str,
    solver: str,
    max_violation: float,
    start: float,
    sense: str = "min",
    rgap: float | None = None,
    gap_scale: float = 0.0,
    min_eigenvalue: float | None = None,
    iterations: int = 0,
    history: dict[str, np.ndarray] | None = None,
    extra: dict[str, Any] | None = None,
) -> SolveResult:
    """The :class:`SolveResult` of a solve that ends with a matrix, its objective and a dual bound.

    Computes what every solve reports the same way: the gap, objective − dual_bound for
    ``sense="min"`` and dual_bound − objective for ``"max"`` (the bound is lower, resp. upper);
    the relative gap :func:`relative_gap` of the same pair with ``gap_scale`` (the instance's
    ``gap_scale``), unless ``rgap`` is given; the least
    eigenvalue :func:`least_eigenvalue` of ``solution``, unless ``min_eigenvalue`` is given; and
    ``wall_time`` = seconds since ``start`` (a :func:`time.perf_counter` reading).

    Parameters
    ----------
    rgap : float, optional
        The relative gap the solve judged its status by, when it is not :func:`relative_gap` of
        (objective, dual_bound): NaN for a run that built no certificate (the gap is then NaN
        too), or the value of the last convergence check.
    min_eigenvalue : float, optional
        For a solution whose spectrum is known more cheaply (a factor, a closed form).
    """
    if sense not in ("min", "max"):
        raise ValueError(f"sense must be 'min' or 'max', got {sense!r}")
    maximize = sense == "max"
    if rgap is None:
        rgap = (relative_gap(dual_bound, objective, gap_scale) if maximize
                else relative_gap(objective, dual_bound, gap_scale))
    if np.isnan(rgap):
        gap = float("nan")
    else:
        gap = dual_bound - objective if maximize else objective - dual_bound
    if min_eigenvalue is None:
        min_eigenvalue = least_eigenvalue(solution)
    return SolveResult(
        problem=problem, variable=variable, solution=solution, objective=objective, status=status,
        message=message, method=method, solver=solver, dual_bound=dual_bound, gap=gap, relative_gap=rgap,
        max_violation=max_violation, min_eigenvalue=min_eigenvalue, iterations=iterations,
        wall_time=time.perf_counter() - start, history={} if history is None else history,
        extra={} if extra is None else extra,
    )
