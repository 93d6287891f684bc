"""`certify(instance, result_or_matrix)`: everything that can be proved about a solution.

The certificate reports the objective, the worst constraint violation, the least
eigenvalue (PSD residual), the numerical rank, the dual bound and the certified gap (when
the result carries one), and — when a ground truth is given, stored in the instance, or
computed with CVXPY — the relative error of the objective against it. The verdict ``passed``
applies the tolerances of :class:`Tolerances`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..linear.factor import DEFAULT_TAIL_TOL, tail_rank
from ..registry import get_problem
from ..results import GroundTruthTooLarge, SolveResult, relative_gap

__all__ = ["Tolerances", "Certificate", "certify"]


@dataclass(frozen=True)
class Tolerances:
    """What "pass" means.

    Attributes
    ----------
    objective : float
        Largest relative objective error |f − f*| / max(|f*|, 1) against the optimum.
    feasibility : float
        Largest absolute constraint violation (NuMax: secants are unit vectors and the
        bounds are O(1), so an absolute tolerance is a relative one).
    psd : float
        Largest negative eigenvalue, relative to max(1, λ_max).
    """

    objective: float = 1e-4
    feasibility: float = 1e-5
    psd: float = 1e-6


@dataclass
class Certificate:
    """The outcome of :func:`certify`; ``reasons`` lists every failed check."""

    problem: str
    objective: float
    max_violation: float
    min_eigenvalue: float
    rank: int
    dual_bound: float
    gap: float
    relative_gap: float
    optimum: float
    optimum_source: str
    objective_error: float
    passed: bool
    reasons: list[str] = field(default_factory=list)
    tolerances: Tolerances = field(default_factory=Tolerances)
    psd_violation: float = float("nan")
    """max(0, −λ_min) / max(1, λ_max), the quantity held to ``tolerances.psd``."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of every field."""
        out = asdict(self)
        return {k: (float(v) if isinstance(v, np.floating) else v) for k, v in out.items()}


def certify(
    instance: Any,
    result_or_matrix: SolveResult | np.ndarray,
    *,
    optimum: float | None = None,
    ground_truth: bool = False,
    solver: str = "CLARABEL",
    dual_bound: float | None = None,
    tolerances: Tolerances | None = None,
    tail_tol: float = DEFAULT_TAIL_TOL,
    dual_multipliers: tuple[np.ndarray, np.ndarray] | None = None,
) -> Certificate:
    """Check a solution of a registered problem and say what is proven about it.

    Parameters
    ----------
    instance
        A registered instance (e.g. :class:`~sdpembed.instances.NuMaxInstance`).
    result_or_matrix : SolveResult or ndarray
        The solution; a SolveResult also contributes its dual bound.
    optimum : float, optional
        A known optimal value. Otherwise the instance's stored ``optimum`` is used, or,
        with ``ground_truth=True``, the CVXPY optimum is computed with ``solver``.
    ground_truth : bool
        Compute the optimum with CVXPY when none is known.
    solver : {"CLARABEL", "SCS"}
        CVXPY back-end for ``ground_truth``.
    dual_bound : float, optional
        A claimed lower bound (minimisation) to check against the optimum; taken from the
        SolveResult when not given.
    tolerances : Tolerances, optional
    tail_tol : float
        Rank threshold of :func:`sdpembed.linear.numerical_rank`.
    dual_multipliers : (pairs, y), optional
        Multipliers on pairs of a point-form instance (what column generation writes to
        solution files). They are *checked* here (``instance.verified_dual_bound``): the
        resulting lower bound replaces any claimed ``dual_bound``, and, when no optimum is
        known (e.g. an instance far too large for CVXPY), the objective passes if it lies
        within the objective tolerance of this proven bound.
    """
    spec = get_problem(getattr(instance, "problem", ""))
    tol = tolerances or Tolerances()
    if isinstance(result_or_matrix, SolveResult):
        X = result_or_matrix.solution
        if dual_bound is None and result_or_matrix.certified:
            dual_bound = result_or_matrix.dual_bound
    else:
        X = result_or_matrix
    X = np.asarray(X, dtype=np.float64)
    n = instance.dim
    if X.shape != (n, n):
        raise ValueError(f"the solution {spec.variable!r} must have shape {(n, n)}, got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"the solution {spec.variable!r} contains NaN or infinite entries")
    X = 0.5 * (X + X.T)

    objective = instance.objective(X)
    violation = instance.max_violation(X)
    eigenvalues = np.linalg.eigvalsh(X)
    min_eig = float(eigenvalues[0])
    rank = tail_rank(eigenvalues[::-1], tail_tol)

    verified = None
    if dual_multipliers is not None:
        if not hasattr(instance, "verified_dual_bound"):
            raise ValueError(f"dual multipliers on pairs are not defined for {spec.name!r} instances")
        verified = instance.verified_dual_bound(*dual_multipliers)
        dual_bound = verified

    reasons = []
    source = "given"
    if optimum is None and getattr(instance, "optimum", None) is not None:
        optimum, source = instance.optimum, "stored in the instance"
    if optimum is None and ground_truth:
        try:
            truth = spec.cvxpy(instance, solver=solver)
        except GroundTruthTooLarge as exc:
            truth, source = None, f"not computed: {exc}"
        if truth is not None and truth.status != "optimal":
            raise RuntimeError(f"the ground truth could not be computed: {truth.status} ({truth.message})")
        if truth is not None:
            optimum, source = truth.objective, f"computed with CVXPY/{truth.solver}"
        elif verified is None:
            reasons.append("the optimum is unknown and no verifiable dual multipliers were given: "
                           "the objective could not be checked")
    if optimum is None:
        optimum, source = float("nan"), source if source != "given" else "unknown"


    if violation > tol.feasibility:
        reasons.append(f"constraint violation {violation:.3e} > {tol.feasibility:g}")
    psd_limit = -tol.psd * max(1.0, float(eigenvalues[-1]))
    psd_violation = max(0.0, -min_eig) / max(1.0, float(eigenvalues[-1]))
    if min_eig < psd_limit:
        reasons.append(f"least eigenvalue {min_eig:.3e} < {psd_limit:.3e} (not PSD)")
    error = float("nan")
    if np.isfinite(optimum):
        error = abs(objective - optimum) / max(abs(optimum), 1.0)
        if error > tol.objective:
            reasons.append(f"relative objective error {error:.3e} > {tol.objective:g} (optimum {optimum:.10g})")
    elif verified is not None:
        # f* ∈ [verified, objective] once the solution is feasible: the error is at most this
        error = (objective - verified) / max(abs(verified), 1.0) if spec.sense == "min" else float("inf")
        source = "bracketed by the verified dual bound of the given multipliers"
        if error > tol.objective:
            reasons.append(f"objective {objective:.10g} is {error:.3e} (relative) above the verified dual bound "
                           f"{verified:.10g}; tolerance {tol.objective:g}")
    bound = float("nan") if dual_bound is None else float(dual_bound)
    sign = 1.0 if spec.sense == "min" else -1.0
    if np.isfinite(bound) and np.isfinite(optimum):
        if sign * (bound - optimum) > tol.objective * max(abs(optimum), 1.0):
            reasons.append(f"the claimed dual bound {bound:.10g} is not a bound: optimum is {optimum:.10g}")
    gap = sign * (objective - bound) if np.isfinite(bound) else float("nan")
    return Certificate(
        problem=spec.name,
        objective=objective,
        max_violation=violation,
        min_eigenvalue=min_eig,
        rank=rank,
        dual_bound=bound,
        gap=gap,
        relative_gap=relative_gap(objective, bound) * sign if np.isfinite(bound) else float("nan"),
        optimum=float(optimum),
        optimum_source=source,
        objective_error=error,
        passed=not reasons,
        reasons=reasons,
        tolerances=tol,
        psd_violation=psd_violation,
    )
