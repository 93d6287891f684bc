"""BENCHMARKS.md is what ``benchmarks/report.py`` generates from the stored results, and its images exist."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"


@pytest.fixture(scope="module")
def report():
    # the scripts import report.py by path (benchmarks/ is their sys.path[0]); so does this test
    sys.path.insert(0, str(BENCHMARKS))
    try:
        module = importlib.import_module("report")
        module.sections()
        yield module
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_benchmarks_md_is_generated_from_the_stored_results(report):
    assert (ROOT / "BENCHMARKS.md").read_text() == report.render(), (
        "BENCHMARKS.md differs from what python benchmarks/report.py writes from benchmarks/results/*.json")


def test_every_referenced_image_exists():
    text = (ROOT / "BENCHMARKS.md").read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert images
    assert [path for path in images if not (ROOT / path).is_file()] == []


def test_every_benchmark_has_a_section_and_writes_through_the_report(report):
    names = {spec.name for spec in report.sections()}
    text = (ROOT / "BENCHMARKS.md").read_text()
    for script in sorted(BENCHMARKS.glob("*.py")):
        # report.py writes BENCHMARKS.md; reproduce.py writes REPRODUCTION.md (the papers' experiments)
        if script.name in ("report.py", "reproduce.py"):
            continue
        assert script.stem in names, f"{script.name} has no section in benchmarks/report_sections/"
        assert "report.write_results(" in script.read_text(), f"{script.name} does not write through report.py"
    for name in names:
        assert text.count(f"<!-- section: {name} -->") == 1 and text.count(f"<!-- /section: {name} -->") == 1
    for spec in report.sections():
        for file in spec.files:
            assert (report.RESULTS / file).is_file(), f"{spec.name}: {file} is not stored"


def test_a_changed_result_changes_the_document(report, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(report.RESULTS, results)
    path = results / "numax_vs_cvxpy.json"
    data = json.loads(path.read_text())
    data["rows"][0]["time_s"] = 1234.5
    path.write_text(json.dumps(data))
    changed = report.render(results)
    assert changed != report.render()
    assert "1,234.50" in changed
    (results / "numax_vs_cvxpy.json").unlink()
    assert "No stored results" in report.render(results)


def test_a_section_is_registered_once(report):
    spec = report.sections()[0]
    with pytest.raises(ValueError, match="registered twice"):
        report.section(spec.name, spec.title, files=spec.files, order=spec.order)(spec.render)


def test_the_run_stamp_says_how_the_run_was_made(report, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    stamp = report.run_stamp([str(BENCHMARKS / "mvu.py"), "--parts", "2"])
    assert stamp["command"].endswith("python benchmarks/mvu.py --parts 2")
    assert stamp["command"].startswith("OPENBLAS_NUM_THREADS=1 ")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", stamp["date"])
    assert {"commit", "machine", "blas_threads", "load_average", "versions"} <= set(stamp)
    assert "Run: `OPENBLAS_NUM_THREADS=1 " in report.run_line(stamp)
    assert f"({report.cpu_model()})" in stamp["machine"]


def test_the_cpu_model_is_read_from_proc_cpuinfo(report, monkeypatch, tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: X\nmodel name\t: Example CPU 9000\nflags\t: fpu\n")
    real_path = report.Path
    monkeypatch.setattr(report, "Path", lambda p: cpuinfo if p == "/proc/cpuinfo" else real_path(p))
    assert report.cpu_model() == "Example CPU 9000"
    cpuinfo.write_text("processor\t: 0\n")
    monkeypatch.setattr(report.platform, "processor", lambda: "")
    assert report.cpu_model() == "unknown CPU"


@pytest.mark.parametrize(("found", "expected"), [([], None), ([4], 4), ([1, 4], [1, 4]), ([2, 2], 2)])
def test_the_run_stamp_records_blas_threads_however_many_libraries_are_loaded(report, monkeypatch, found, expected):
    import threadpoolctl

    infos = [{"user_api": "blas", "num_threads": n} for n in found] + [{"user_api": "openmp", "num_threads": 8}]
    monkeypatch.setattr(threadpoolctl, "threadpool_info", lambda: infos)
    stamp = report.run_stamp([str(BENCHMARKS / "mvu.py")])
    assert stamp["blas_threads"] == expected
    assert "Run: " in report.run_line(stamp)


def test_the_mvu_crossover_is_the_least_n_from_which_low_rank_stays_faster(report):
    sections = importlib.import_module("report_sections.mvu_lowrank")

    def row(n, solver, cpu):
        return {"n": n, "edges": 5 * n, "variant": "inequality", "solver": solver, "cpu_s": cpu, "status": "optimal",
                "gap_tol": 1e-6}

    # low rank faster at 60, slower at 80, faster from 100 on; clearly (> 1.25x) only from 150 on
    cpu = {60: (0.1, 0.2), 80: (0.3, 0.2), 100: (0.5, 0.55), 150: (0.5, 1.0), 200: (0.7, 2.0)}
    doc = {"rows": [row(n, s, c) for n, (low, ipm) in cpu.items() for s, c in (("lowrank", low), ("ipm", ipm))],
           "run": {"command": "python benchmarks/mvu_lowrank.py", "utc": "2026-11-27T20:00:00"}}
    text = sections._crossover(doc)
    assert "low rank is faster from n = 100 on" in text
    assert "from n = 150 on" in text
