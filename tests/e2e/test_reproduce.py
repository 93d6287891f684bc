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


@pytest.mark.parametrize("paper", ["adagio", "slm", "nilepro"])
def test_every_quick_experiment_of_a_paper_writes_its_outputs(tmp_path, paper):
    script = load_script("reproduce")
    report = tmp_path / "REPRODUCTION.md"
    assert script.main(["--paper", paper, "--quick", "--results", str(tmp_path / "results"),
                        "--report", str(report)]) == 0
    module = load_reproduce(paper)
    text = report.read_text()
    assert f"## {module.TITLE}" in text
    for experiment in module.EXPERIMENTS:
        record = json.loads((tmp_path / "results" / paper / f"{experiment.key}.json").read_text())
        assert record["mode"] == "quick" and record["verdict"] in load_reproduce("common").VERDICTS
        assert (tmp_path / "results" / paper / f"{experiment.key}.png").read_bytes()[:4] == b"\x89PNG"
        assert f"### {experiment.title} — *{record['verdict']}*" in text
