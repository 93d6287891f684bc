"""The certified optimum of a suite instance: two independent solvers that each end ``optimal``.

An instance enters the reference suite (:mod:`sdpembed.validation.suite`) only when two independent
solvers end ``optimal`` (each judged by its own certificate, never the solver's word; a run that ends
``inaccurate`` is never counted), their objectives agree to :data:`AGREEMENT_TOL` relative to
max(|f*|, u_f), and the best dual bound they built is within :data:`GAP_TOL` of the stored optimum
(the objective of the CVXPY certifier, Clarabel's unless it had to be replaced by SCS), in the same
units. u_f is the instance's ``objective_unit`` (a power of two: 1 where the objective does not scale
with the data, the data's scale for MVU), the floor below which ``sdpembed verify``
(:func:`~sdpembed.validation.certify.certify`) measures an objective error absolutely, so an instance far from
unit scale is built and graded at its own scale. The
certifiers of :data:`CERTIFIERS` are tried in order until two have ended ``optimal``, so a
release of one solver that ends ``inaccurate`` on an instance does not stop its certification.
The agreement tolerance is a tenth of the objective tolerance of a pass (1e-4), so a correct
implementation cannot fail for the uncertainty of the reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...registry import get_problem

__all__ = [
    "AGREEMENT_TOL",
    "CERTIFIERS",
    "CLARABEL_SETTINGS",
    "GAP_TOL",
    "SCS_SETTINGS",
    "CertifiedOptimum",
    "Certifier",
    "certify_optimum",
    "relative_difference",
]

#: Largest relative disagreement max(|f₁ − f₂|) / max(|f*|, u_f) between the certifying solvers, and
#: between a rebuilt optimum and the stored one (u_f the instance's ``objective_unit``).
AGREEMENT_TOL = 1e-5

#: Largest certified relative gap |f* − best dual bound| / max(|f*|, u_f) of a stored optimum.
GAP_TOL = 1e-5

#: Clarabel's settings for the suite: its KKT solves refined to 1e-15 (default 1e-13 relative, 1e-12
#: absolute, at most 10 steps). With the defaults Clarabel 0.11.1 (CVXPY 1.9.3) ended two MVU instances
#: ``AlmostSolved``: on mvu-inequality-swiss40 the primal residual of the last iterates jumped from 8e-9
#: to 1.8e-3, on mvu-equality-scurve28-angles (no interior point: the largest least eigenvalue of a
#: feasible K on 1⊥ is 0 to within 4e-10·τ) the step length fell to 0 at a relative gap of 1.7e-8
#: against the tolerance 1e-8. Refined, both end ``Solved`` (as all 40 instances do), at no measurable cost.
CLARABEL_SETTINGS: dict[str, Any] = {
    "iterative_refinement_reltol": 1e-15, "iterative_refinement_abstol": 1e-15, "iterative_refinement_max_iter": 50,
}

#: SCS's settings when it certifies: eps 1e-9 (at its default 1e-4 it is no check of a 1e-5 agreement).
SCS_SETTINGS: dict[str, Any] = {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000}

#: The certifiers of an optimum, (method, solver, settings), tried in this order until two independent
#: solvers have ended ``optimal``: CVXPY/Clarabel (the ground truth), the problem's default hand-written
#: method (``method`` None), and CVXPY/SCS, an independent ground truth used only when one of the first two
#: did not end ``optimal`` (a solver release that ends ``inaccurate``, say).
CERTIFIERS: tuple[tuple[str | None, str | None, dict[str, Any]], ...] = (
    ("cvxpy", "CLARABEL", CLARABEL_SETTINGS),
    (None, None, {}),
    ("cvxpy", "SCS", SCS_SETTINGS),
)


def relative_difference(a: float, reference: float, unit: float = 1.0) -> float:
    """|a − reference| / max(|reference|, ``unit``): how optima are compared throughout the suite, ``unit`` the
    instance's ``objective_unit`` u_f (a power of two, as in :func:`~sdpembed.validation.certify.certify`)."""
    return abs(a - reference) / max(abs(reference), unit)


@dataclass(frozen=True)
class Certifier:
    """One solver's certificate of an instance's optimum."""

    method: str
    solver: str
    status: str
    objective: float
    dual_bound: float
    relative_gap: float
    max_violation: float
    min_eigenvalue: float
    wall_time: float
    message: str = ""
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CertifiedOptimum:
    """An instance's optimum as certified by :func:`certify_optimum`.

    ``certifiers`` are the runs that ended ``optimal``, the CVXPY ground truth first, and
    ``rejected`` those that did not (never counted). ``optimum`` is the first certifier's objective
    (the first rejected run's when none ended ``optimal``); ``dual_bound`` the best bound of the
    certifiers (a lower bound for minimisations, an upper bound for MVU); ``certified_gap`` their
    signed relative distance (negative only within rounding); ``agreement`` the relative spread of
    the certifiers' objectives; ``certified`` whether all the conditions of the module docstring hold.
    """

    optimum: float
    dual_bound: float
    certified_gap: float
    agreement: float
    certifiers: tuple[Certifier, ...]
    certified: bool
    reasons: tuple[str, ...] = ()
    rejected: tuple[Certifier, ...] = ()


def _certifier(instance: Any, method: str, solver: str | None, settings: dict[str, Any]) -> Certifier:
    spec = get_problem(instance.problem)
    if method == "cvxpy":
        result = spec.cvxpy(instance, solver=solver, **settings)
    else:
        result = spec.methods[method](instance, **settings)
    return Certifier(
        method=method, solver=result.solver, status=result.status, objective=float(result.objective),
        dual_bound=float(result.dual_bound), relative_gap=float(result.relative_gap),
        max_violation=float(result.max_violation), min_eigenvalue=float(result.min_eigenvalue),
        wall_time=float(result.wall_time), message=result.message, settings=dict(settings),
    )


def _run_certifiers(instance: Any) -> tuple[list[Certifier], list[Certifier]]:
    """The runs of :data:`CERTIFIERS` until two have ended ``optimal``: (optimal ones, the others)."""
    spec = get_problem(instance.problem)
    optimal: list[Certifier] = []
    rejected: list[Certifier] = []
    for method, solver, settings in CERTIFIERS:
        if len(optimal) == 2:
            break
        method = method or (spec.default_method(instance) if spec.methods else None)
        if method is None:                                            # no hand-written solver
            continue
        run = _certifier(instance, method, solver, settings)
        (optimal if run.status == "optimal" else rejected).append(run)
    optimal.sort(key=lambda c: c.method != "cvxpy")                   # the ground truth first (stable)
    return optimal, rejected


def certify_optimum(instance: Any) -> CertifiedOptimum:
    """Certify the optimum of ``instance`` by two independent solvers (:data:`CERTIFIERS`).

    CVXPY/Clarabel and the problem's default hand-written solver (the one ``sdpembed solve``
    runs); CVXPY/SCS replaces whichever of them did not end ``optimal``. See the module
    docstring for when the result counts as certified.
    """
    optimal, rejected = _run_certifiers(instance)
    pool = optimal or rejected
    optimum = pool[0].objective
    sign = 1.0 if get_problem(instance.problem).sense == "min" else -1.0
    unit = float(instance.objective_unit)
    bounds = [sign * c.dual_bound for c in pool if np.isfinite(c.dual_bound)]
    bound = sign * max(bounds) if bounds else float("nan")
    gap = sign * (optimum - bound) / max(abs(optimum), unit) if bounds else float("nan")
    agreement = (max(relative_difference(c.objective, optimum, unit) for c in pool) if np.isfinite(optimum)
                 else float("nan"))
    reasons = []
    if len(optimal) < 2:
        reasons.append(f"{len(optimal)} solver(s) ended 'optimal', two independent ones are needed: " + "; ".join(
            f"{c.method}/{c.solver} ended {c.status!r}: {c.message}" for c in rejected))
    if not agreement <= AGREEMENT_TOL:
        reasons.append(f"the certifiers disagree: relative spread {agreement:.2e} > {AGREEMENT_TOL:g} "
                       f"({', '.join(f'{c.solver} {c.objective!r}' for c in pool)})")
    if not abs(gap) <= GAP_TOL:
        reasons.append(f"the certified relative gap {gap:.2e} is not within {GAP_TOL:g} (bound {bound!r})")
    return CertifiedOptimum(optimum, bound, gap, agreement, tuple(optimal), not reasons, tuple(reasons),
                            tuple(rejected))
