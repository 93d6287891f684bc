"""The worked examples of docs/grading.md ("Worked examples: a solver of your own") are the files of
examples/, which the page shows with ``literalinclude``; each is graded here by the command line the
page prints, run by bash from the repository's root on two small suite instances and one it must
skip: Python always, GNU Octave when ``octave`` is on PATH, Julia when ``julia`` and its packages are
installed (skipped otherwise, with the reason)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
GRADING = (ROOT / "docs" / "grading.md").read_text(encoding="utf-8")

# the command lines of docs/grading.md, as a user types them in bash at the repository's root
PYTHON_LINE = ('sdpembed suite run --command "python examples/python/my_numax.py {instance} {solution}" '
               '--problems numax')
OCTAVE_LINE = ('sdpembed suite run --command "octave --no-gui --quiet --path $PWD/examples/octave '
               '--eval \\"numax_cli(\'{instance}\',\'{solution}\')\\"" --problems numax,numax_class')
JULIA_LINE = ('sdpembed suite run --command "julia --project=$PWD/examples/julia examples/julia/my_numax.jl '
              '{instance} {solution}" --problems numax')


def run_documented(line: str, instances: list[str], problems: str) -> dict:
    """Run ``line`` of the docs in bash at the repository's root on ``instances`` (with this
    interpreter for ``sdpembed`` and ``python``); the ``--json`` report."""
    assert line in GRADING, f"docs/grading.md no longer shows: {line}"
    python = shlex.quote(sys.executable)
    command = line.replace("sdpembed suite run", f"{python} -m sdpembed suite run", 1)
    command = command.replace('--command "python ', f'--command "{python} ', 1)
    selection = " ".join(f"--instances {name}" for name in instances)
    proc = subprocess.run(["bash", "-c", f"{command} --problems {problems} {selection} --json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert proc.stdout, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert [r["name"] for r in report["results"]] == instances, report["results"]
    return report


def expect(report: dict, results: dict[str, str]) -> None:
    got = {r["name"]: r["result"] for r in report["results"]}
    assert got == results, [(r["name"], r["result"], r["reasons"], r.get("stderr_tail")) for r in report["results"]]
    for record in report["results"]:
        if record["result"] == "pass":
            assert abs(record["objective_error"]) <= 1e-4 and record["psd_violation"] <= 1e-6


def test_the_examples_shown_are_the_files_graded():
    for name in ("python/my_numax.py", "octave/numax_cli.m", "octave/numax_admm.m", "octave/read_npz.m",
                 "octave/write_npz.m", "julia/my_numax.jl"):
        assert (ROOT / "examples" / name).is_file(), name
        assert f"```{{literalinclude}} ../examples/{name}" in GRADING, name


@pytest.mark.slow
def test_python_example_passes_and_skips():
    report = run_documented(PYTHON_LINE, ["numax-squares5", "numax-squares6-points"], "numax")
    expect(report, {"numax-squares5": "pass", "numax-squares6-points": "skip"})


@pytest.mark.skipif(shutil.which("octave") is None, reason="GNU Octave is not installed (apt-get install octave)")
@pytest.mark.skipif(shutil.which("unzip") is None or shutil.which("zip") is None,
                    reason="Octave's unzip and zip run the system's unzip and zip (apt-get install zip unzip)")
def test_octave_example_passes_numax_and_numax_class_and_skips_lmnn():
    names = ["numax-squares6-points", "numax_class-shapes6", "lmnn-iris8"]
    report = run_documented(OCTAVE_LINE, names, "lmnn")
    expect(report, {"numax-squares6-points": "pass", "numax_class-shapes6": "pass", "lmnn-iris8": "skip"})


def test_julia_example_passes_and_skips():
    if shutil.which("julia") is None:
        pytest.skip("Julia is not installed")
    probe = subprocess.run(["julia", f"--project={ROOT / 'examples' / 'julia'}", "-e", "using NPZ, ZipFile, JuMP, SCS"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("Julia lacks NPZ, ZipFile, JuMP or SCS in examples/julia (docs/grading.md says how to add them)")
    report = run_documented(JULIA_LINE, ["numax-squares5", "numax-squares6-points"], "numax")
    expect(report, {"numax-squares5": "pass", "numax-squares6-points": "skip"})
