"""`SolveResult`: the one return type of every solve, CVXPY or hand-written.

Modelled on :class:`scipy.optimize.OptimizeResult`: plain attributes, a readable summary,
and nothing hidden. A result is *certified* when it carries a dual bound built from a
dual-feasible point; its ``gap`` is then a proven bound on the suboptimality of
``solution`` (provided the solution is feasible, which ``max_violation`` reports).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["SolveResult", "STATUSES", "GroundTruthTooLarge", "relative_gap"]

#: The statuses a solve may report. Only ``optimal`` claims convergence to the requested
#: accuracy; ``inaccurate`` is CVXPY's ``optimal_inaccurate`` (or a run whose certificate
#: falls short of the tolerance), ``max_iterations`` an unconverged hand-written run.
STATUSES = ("optimal", "inaccurate", "max_iterations", "infeasible", "unbounded", "error")


class GroundTruthTooLarge(ValueError):
    """A CVXPY ground truth refused an instance too large for a generic solver."""


def relative_gap(objective: float, bound: float) -> float:
    """(objective − bound) / max(|objective|, |bound|, 1e-12): the relative duality gap."""
    if not (np.isfinite(objective) and np.isfinite(bound)):
        return float("inf")
    return float((objective - bound) / max(abs(objective), abs(bound), 1e-12))


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
