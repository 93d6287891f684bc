"""`python benchmarks/reproduce.py` end to end: one quick experiment at tiny size writes its outputs and its section."""

import json

import pytest

from ..benchmarks.conftest import load_reproduce, load_script

pytestmark = pytest.mark.e2e


def test_a_quick_experiment_writes_json_png_and_its_report_section(tmp_path):
    script = load_script("reproduce")
    report = tmp_path / "REPRODUCTION.md"
    argv = ["--paper", "numax", "--only", "fig12", "--quick", "--results", str(tmp_path / "results"),
            "--report", str(report), "--set", "image_size=10", "--set", "n_secants=40", "--set", "deltas=[0.4]",
            "--set", "noises=[0.5]", "--set", "copies=1"]
    assert script.main(argv) == 0
    record = json.loads((tmp_path / "results" / "numax" / "fig12.json").read_text())
    assert record["mode"] == "quick" and record["config"]["image_size"] == 10
    assert record["verdict"] in load_reproduce("common").VERDICTS
    assert len(record["rows"]) == 1 and record["rows"][0]["status"] == "optimal"
    assert (tmp_path / "results" / "numax" / "fig12.png").read_bytes()[:4] == b"\x89PNG"
    text = report.read_text()
    section = text.split("### Fig. 12", 1)[1].split("\n### ", 1)[0]
    for part in ("**The paper's set-up.**", "**Departures.**", "**Published.**", "**Ours.**", "**Verdict: "):
        assert part in section
    assert "quick run: `n_secants = 40`" not in section                 # an override is listed as such
    assert "setting changed for this run: `n_secants = 40`" in section
    assert "Ψ_inter" in section and "fig12.png" in section
    assert "Not run yet (no stored result): Fig. 3" in text               # the others are listed, not hidden


def test_an_unknown_experiment_is_a_usage_error(tmp_path):
    script = load_script("reproduce")
    with pytest.raises(SystemExit) as info:
        script.main(["--paper", "numax", "--only", "fig99", "--results", str(tmp_path), "--report",
                     str(tmp_path / "R.md")])
    assert info.value.code == 2


def test_the_blob_experiments_run_quick_with_the_refinement_study_and_mip(tmp_path):
    script = load_script("reproduce")
    argv = ["--paper", "numax", "--only", "fig10,fig11", "--quick", "--results", str(tmp_path / "results"),
            "--report", str(tmp_path / "REPRODUCTION.md"), "--set", "image_size=10", "--set", "sigma=2.0",
            "--set", "deltas=[0.4]"]
    assert script.main(argv) == 0
    fig10 = json.loads((tmp_path / "results" / "numax" / "fig10.json").read_text())
    assert [r["stride"] for r in fig10["rows"]["refinement"]] == [4, 2, 1]
    assert all(r["status"] == "optimal" for r in fig10["rows"]["refinement"])
    assert "Grid refinement at δ_learn" in fig10["agreement"]
    fig11 = json.loads((tmp_path / "results" / "numax" / "fig11.json").read_text())
    (row,) = fig11["rows"]
    assert {f"{m}_{s}" for m in ("numax", "gaussian") for s in fig11["config"]["snrs_db"]} <= set(row)
    assert all(row[k] >= 0.0 for k in row if k.startswith(("numax_", "gaussian_")))
    for key in ("fig10", "fig11"):
        assert (tmp_path / "results" / "numax" / f"{key}.png").read_bytes()[:4] == b"\x89PNG"
    assert "Manifold Iterative Pursuit" in (tmp_path / "REPRODUCTION.md").read_text()
