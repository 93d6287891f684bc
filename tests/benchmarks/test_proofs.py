"""`benchmarks/proofs.py`: a case's own solve method reaches `sdpembed solve`, and `--only` replaces the
named rows of the results file while keeping the others."""

import importlib
import importlib.util
import json
import sys

import pytest

from .conftest import BENCHMARKS


@pytest.fixture
def proofs(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))              # the script imports its sibling `report`
    spec = importlib.util.spec_from_file_location("benchmark_proofs", BENCHMARKS / "proofs.py")
    module = importlib.util.module_from_spec(spec)
    # its dataclass resolves its string annotations through sys.modules while the module runs
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_only_replaces_its_rows_keeps_the_others_and_solves_by_the_cases_method(proofs, monkeypatch, tmp_path):
    # a locked-up equality SDP of 40 points (k = 5 with angle edges is rigid), by facial reduction, not the
    # default interior point
    small = proofs._mvu("equality", 40, "--k", "5", "--noise", "0.05", method="facial", gap_tol=1e-5)
    small = proofs.Case(small.name, small.problem, small.form, small.make, lambda: (0, "none (test)"),
                        size=small.size, method=small.method, gap_tol=small.gap_tol)
    monkeypatch.setattr(proofs, "CASES", [*proofs.CASES, small])
    kept = {"name": "mvu-inequality-swiss1000", "outcome": "PASS", "run": {"date": "earlier"}}
    stale = {"name": small.name, "outcome": "stale"}
    results = tmp_path / "proofs.json"
    results.write_text(json.dumps({"timeout_s": 1800.0, "memory_gib": 8.0, "rows": [kept, stale]}))

    proofs.main(["--only", small.name, "--timeout", "600", "--memory", "4", "--json", str(results)])

    rows = {row["name"]: row for row in json.loads(results.read_text())["rows"]}
    assert set(rows) == {kept["name"], small.name}
    # the kept row is unchanged but for the limits it ran under, which the old file stated once for all rows
    assert rows[kept["name"]] == {**kept, "timeout_s": 1800.0, "memory_gib": 8.0}
    new = rows[small.name]
    assert new["method"] == "facial" and new["status"] == "optimal" and new["gap_tol"] == 1e-5
    assert new["solve_gap"] <= 1e-5
    assert new["outcome"] == "PASS" and new["cvxpy_imported"] is False
    assert new["timeout_s"] == 600.0 and new["memory_gib"] == 4.0 and new["instance_bytes"] > 0


def test_only_refuses_an_unknown_case_and_a_large_one_without_large(proofs, tmp_path):
    results = tmp_path / "proofs.json"
    with pytest.raises(SystemExit):
        proofs.main(["--only", "no-such-case", "--json", str(results)])
    with pytest.raises(SystemExit):
        proofs.main(["--only", "mvu-equality-swiss1000-facial", "--json", str(results)])
    assert not results.exists()


def test_the_issue_25_cases_are_large_and_the_equality_one_is_solved_by_facial_reduction(proofs):
    cases = {case.name: case for case in proofs.CASES}
    for name in ("lmnn-mnist10k-pca164", "mvu-inequality-swiss2500", "mvu-equality-swiss1000-facial"):
        assert cases[name].large
    assert cases["mvu-equality-swiss1000-facial"].method == "facial"
    assert cases["mvu-inequality-swiss2500"].method is None     # the default: low rank from 120 points on
    # the gap tolerance of benchmarks/mvu_lowrank.py at these sizes, passed to sdpembed solve
    assert cases["mvu-inequality-swiss2500"].gap_tol == cases["mvu-equality-swiss1000-facial"].gap_tol == 1e-5


def test_the_report_states_the_limits_of_most_rows_then_the_others(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    _limits = importlib.import_module("report_sections.proofs")._limits    # benchmarks/, a folder of scripts

    old = {"timeout_s": 1800.0, "memory_gib": 8.0, "rows": [{"name": "a"}, {"name": "b"}]}
    assert _limits(old) == "Each process had 8 GiB of address space and 1800 s."
    mixed = {"rows": [{"name": "a", "timeout_s": 1800.0, "memory_gib": 8.0},
                      {"name": "b", "timeout_s": 5400.0, "memory_gib": 8.0},
                      {"name": "c", "timeout_s": 1800.0, "memory_gib": 8.0},
                      {"name": "d", "timeout_s": 5400.0, "memory_gib": 4.0}]}
    assert _limits(mixed) == ("Each process had 8 GiB of address space and 1800 s; 8 GiB and 5400 s for `b`; "
                              "4 GiB and 5400 s for `d`.")
