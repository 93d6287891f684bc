"""The suite's build-time rules (agreement of the certifiers, certified gap, a rebuilt optimum against the stored
one) measure at the instance's own scale, in the unit the oracle grades with (``objective_unit``): an instance and
its certifiers' numbers scaled together by a power of two are judged alike, and a disagreement of 0.1 % is found
at every scale (with the literal 1 as the floor it passed wherever the optimum lies far below 1)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sdpembed._files import save_npz
from sdpembed.registry import get_problem
from sdpembed.validation.suite import AGREEMENT_TOL, certify_optimum, load_suite, suite_cases
from sdpembed.validation.suite import build as suite_build
from sdpembed.validation.suite import optimum as suite_optimum
from sdpembed.validation.suite.optimum import Certifier

EXPONENTS = (-100, -30, 0, 30, 100)
NAME = "mvu-inequality-trefoil12"                     # optimum 77.3, unit 8: the rule's unit is the data's


def _scaled(e: int):
    """The suite instance with every squared distance scaled exactly by 4^e (its optimum and unit likewise)."""
    (case,) = [c for c in suite_cases() if c.name == NAME]
    instance = case.build()
    return case, dataclasses.replace(instance, sqdist=np.ldexp(instance.sqdist, 2 * e))


def _certifiers(optimum: float, spread: float, gap: float) -> list[Certifier]:
    """Two 'optimal' runs of an MVU instance (a maximisation): objectives ``optimum`` and ``optimum``·(1 − spread),
    the best proved bound ``optimum``·(1 + gap)."""
    def run(method: str, objective: float, bound: float) -> Certifier:
        return Certifier(method=method, solver=method, status="optimal", objective=objective, dual_bound=bound,
                         relative_gap=0.0, max_violation=0.0, min_eigenvalue=0.0, wall_time=0.0)
    return [run("cvxpy", optimum, optimum * (1.0 + gap)), run("ipm", optimum * (1.0 - spread), optimum * (1.0 + gap))]


@pytest.mark.parametrize(("spread", "gap", "certified"), [(1e-7, 1e-7, True), (1e-3, 1e-7, False),
                                                         (1e-7, 1e-3, False)])
def test_the_certifiers_are_judged_at_the_instances_scale(spread, gap, certified, monkeypatch):
    truths = []
    for e in EXPONENTS:
        _, instance = _scaled(e)
        optimum = float(np.ldexp(77.30071, 2 * e))
        monkeypatch.setattr(suite_optimum, "_run_certifiers",
                            lambda inst, o=optimum: (_certifiers(o, spread, gap), []))
        truth = certify_optimum(instance)
        assert truth.certified is certified, (e, truth.reasons)
        truths.append(truth)
    # the same relative numbers, bit for bit, at every scale
    assert len({(t.agreement, t.certified_gap) for t in truths}) == 1
    assert truths[0].agreement == pytest.approx(spread, rel=1e-6)


def test_a_rebuilt_optimum_is_compared_with_the_stored_one_at_the_instances_scale(tmp_path, monkeypatch):
    # the stored optimum 0.1 % above the certified one: the build flags it at every scale
    for e in EXPONENTS:
        case, instance = _scaled(e)
        optimum = float(np.ldexp(77.30071, 2 * e))
        monkeypatch.setattr(suite_optimum, "_run_certifiers", lambda inst, o=optimum: (_certifiers(o, 1e-8, 1e-8), []))
        path = tmp_path / f"{e}.npz"
        save_npz(path, instance.to_arrays(), "suite instance")

        @dataclasses.dataclass
        class Stored:
            optimum: float
            path: object

        scaled_case = dataclasses.replace(case, build=lambda inst=instance: inst)
        for stored, ok in ((optimum, True), (optimum * (1.0 + 1e-3), False)):
            record, _ = suite_build._build_case(scaled_case, Stored(stored, path), True, None)
            assert record.ok is ok, (e, record.reasons)
            assert ok or "the stored optimum no longer agrees" in record.reasons[0]


def test_the_manifests_gaps_and_agreements_are_the_rules():
    # each stored certified_gap and agreement is the rule's value recomputed from the stored optimum, bound and
    # certifiers in the instance's unit (two MVU slack rows, whose optimum lies below its unit, were stored in 1)
    for entry in load_suite().entries:
        instance = entry.load()
        unit = float(instance.objective_unit)
        sign = 1.0 if get_problem(instance.problem).sense == "min" else -1.0
        assert entry.certified_gap == sign * (entry.optimum - entry.dual_bound) / max(abs(entry.optimum), unit), \
            entry.name
        assert entry.agreement == max(abs(c["objective"] - entry.optimum) / max(abs(entry.optimum), unit)
                                      for c in entry.certifiers), entry.name
        assert entry.agreement <= AGREEMENT_TOL
