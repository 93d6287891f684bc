"""The suite's optima are certified by two independent solvers whatever one of them says (issue 18):
a certifier that ends `inaccurate` is replaced, never counted, and the manifest says who certified."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sdpembed import PROBLEMS
from sdpembed.validation.suite import (
    AGREEMENT_TOL,
    CLARABEL_SETTINGS,
    MANIFEST,
    SCS_SETTINGS,
    build_suite,
    certify_optimum,
    format_build_table,
    load_suite,
    suite_cases,
)
from sdpembed.validation.suite import build as suite_build

PROBLEM = "mvu_oos"                                                   # five instances, 0.2 s each


def _case(name):
    (case,) = [c for c in suite_cases() if c.name == name]
    return case


def _inaccurate(solve):
    """``solve`` as a solver release that ends every run `inaccurate` (its numbers unchanged)."""

    def run(*args, **kwargs):
        return dataclasses.replace(solve(*args, **kwargs), status="inaccurate", message="simulated: AlmostSolved")

    return run


@pytest.fixture
def clarabel_inaccurate(monkeypatch):
    spec = PROBLEMS[PROBLEM]
    cvxpy = spec.cvxpy

    def ground_truth(instance, solver="CLARABEL", **options):
        solve = _inaccurate(cvxpy) if solver == "CLARABEL" else cvxpy
        return solve(instance, solver=solver, **options)

    monkeypatch.setitem(PROBLEMS, PROBLEM, dataclasses.replace(spec, cvxpy=ground_truth))


def test_scs_certifies_when_clarabel_ends_inaccurate(clarabel_inaccurate):
    stored = {e.name: e.optimum for e in load_suite().entries}
    records = build_suite(problems=[PROBLEM])
    assert len(records) == 5
    for record in records:
        assert record.ok, record.reasons
        assert [(c["method"], c["solver"], c["status"]) for c in record.certifiers] == [
            ("cvxpy", "SCS", "optimal"), ("ipm", "mvu_oos_ipm", "optimal")]
        assert record.certifiers[0]["settings"] == SCS_SETTINGS
        assert [(c["solver"], c["status"]) for c in record.rejected] == [("CLARABEL", "inaccurate")]
        assert record.rejected[0]["settings"] == CLARABEL_SETTINGS
        assert record.optimum == record.certifiers[0]["objective"]          # the ground truth's, now SCS's
        assert abs(record.optimum - stored[record.name]) <= AGREEMENT_TOL * max(abs(stored[record.name]), 1.0)


def test_scs_replaces_a_hand_written_solver_that_ends_inaccurate(monkeypatch):
    spec = PROBLEMS[PROBLEM]
    monkeypatch.setitem(PROBLEMS, PROBLEM, dataclasses.replace(spec, methods={"ipm": _inaccurate(spec.methods["ipm"])}))
    truth = certify_optimum(_case("mvu_oos-scurve-k6").build())
    assert truth.certified, truth.reasons
    assert [c.solver for c in truth.certifiers] == ["CLARABEL", "SCS"]
    assert [c.method for c in truth.rejected] == ["ipm"]
    assert truth.optimum == truth.certifiers[0].objective                     # Clarabel's


def test_one_optimal_solver_is_not_a_certificate(clarabel_inaccurate, monkeypatch):
    spec = PROBLEMS[PROBLEM]
    monkeypatch.setitem(PROBLEMS, PROBLEM, dataclasses.replace(spec, methods={"ipm": _inaccurate(spec.methods["ipm"])}))
    truth = certify_optimum(_case("mvu_oos-scurve-k6").build())
    assert not truth.certified
    assert [c.solver for c in truth.certifiers] == ["SCS"]
    assert {c.status for c in truth.rejected} == {"inaccurate"} and len(truth.rejected) == 2
    assert "1 solver(s) ended 'optimal', two independent ones are needed" in truth.reasons[0]
    record, entry = suite_build._build_case(_case("mvu_oos-scurve-k6"), None, False, None)
    assert not record.ok and entry["status"] == "not certified"


def test_manifest_records_the_certifiers_and_the_runs_not_counted(clarabel_inaccurate, monkeypatch, tmp_path):
    cases = [c for c in suite_cases() if c.problem == PROBLEM][:2]
    monkeypatch.setattr(suite_build, "suite_cases", lambda: cases)
    records = build_suite(out=tmp_path)
    assert all(r.ok for r in records)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert set(manifest["built_with"]) == {"python", "numpy", "scipy", "cvxpy", "clarabel", "scs"}
    for entry in manifest["instances"]:
        assert entry["status"] == "optimal"
        assert [c["solver"] for c in entry["certifiers"]] == ["SCS", "mvu_oos_ipm"]
        assert all(c["status"] == "optimal" for c in entry["certifiers"])
        assert [(c["solver"], c["status"]) for c in entry["rejected_certifiers"]] == [("CLARABEL", "inaccurate")]
    rebuilt = load_suite(tmp_path)
    assert [e.name for e in rebuilt.entries] == [c.name for c in cases]
    for entry in rebuilt.entries:
        entry.load()


def test_format_build_table_names_the_replacement(clarabel_inaccurate):
    (record,) = [r for r in build_suite(problems=[PROBLEM]) if r.name == "mvu_oos-swiss-k3"]
    table = format_build_table([record])
    assert "OK (by cvxpy/SCS, ipm/mvu_oos_ipm; cvxpy/CLARABEL ended 'inaccurate')" in table
