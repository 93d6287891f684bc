"""`benchmarks/grade_peers.py` (issue 26): the adapters' plumbing graded through `sdpembed suite run` with
a fake peer that writes a known-good and a known-bad solution, a peer that is not installed as a *not run*
row, the CVXPY/Clarabel row on three small suite instances."""

from __future__ import annotations

import importlib
import importlib.util
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "sdpembed" / "data" / "suite"
SMALL = ("lmnn-iris8", "mvu_oos-swiss-k3", "mvu-equality-swiss10")


@pytest.fixture(scope="module")
def grade_peers():
    spec = importlib.util.spec_from_file_location("grade_peers", ROOT / "benchmarks" / "grade_peers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _clarabel_solution(grade_peers, name: str) -> tuple[str, np.ndarray]:
    import cvxpy as cp

    # benchmarks/peers, on the path once grade_peers is loaded (a folder of scripts, not a distribution)
    _npz, cvxpy_models = (importlib.import_module(f"peers.{name}") for name in ("_npz", "cvxpy_models"))

    variable_name, variable, problem = cvxpy_models.model(cp, _npz.read_instance(str(SUITE / f"{name}.npz")))
    problem.solve(solver="CLARABEL")
    return variable_name, variable.value


def test_fake_peer_graded_pass_and_fail(grade_peers, tmp_path):
    """A known-good LMNN solution passes, a known-bad MVU-OOS one (S[r, r] raised by 1 %) fails on its
    objective, and a peer that is not installed is a *not run* row, not a failure."""
    for name, problem, scale in (("lmnn-iris8", "lmnn", 0.0), ("mvu_oos-swiss-k3", "mvu_oos", 0.01)):
        variable, value = _clarabel_solution(grade_peers, name)
        value[-1, -1] *= 1 + scale
        np.savez(tmp_path / f"{problem}.npz", **{variable: value})
    script = tmp_path / "fake_peer.py"
    script.write_text("import shutil, sys\nimport numpy as np\n"
                      "problem = str(np.load(sys.argv[1])['problem'])\n"
                      f"shutil.copy({str(tmp_path)!r} + '/' + problem + '.npz', sys.argv[2])\n")
    command = " ".join(shlex.quote(part) for part in (sys.executable, str(script))) + " {instance} {solution}"
    fake = grade_peers.Peer("fake", "lmnn,mvu_oos", "copies a stored solution",
                            (grade_peers.Setting("defaults", "none", command),), timeout=60)
    absent = grade_peers.Peer("absent", "numax", "not here", (), missing="absent is not installed")
    rows, runs = grade_peers.grade([fake, absent], ["lmnn-iris8", "mvu_oos-swiss-k3"], None, progress=lambda _: None)
    by_problem = {row["problem"]: row for row in rows}
    assert (by_problem["lmnn"]["passed"], by_problem["lmnn"]["graded"]) == (1, 1)
    assert by_problem["lmnn"]["why"] == "all passed"
    assert (by_problem["mvu_oos"]["passed"], by_problem["mvu_oos"]["graded"]) == (0, 1)
    assert "above the optimum: suboptimal" not in by_problem["mvu_oos"]["why"]     # the side, in words
    assert "suboptimal by" in by_problem["mvu_oos"]["why"]
    assert by_problem["numax"]["passed"] is None and by_problem["numax"]["why"] == "not run: absent is not installed"
    assert [run["passed"] for run in runs] == [1]
    table = grade_peers.format_table(rows)
    assert "not run" in table and "0/1" in table and "1/1" in table


def test_clarabel_row_passes_small_instances(grade_peers):
    """The five-line CVXPY model with Clarabel at its defaults passes three small suite instances."""
    peers = grade_peers.load_peers(grade_peers.Options(python=sys.executable), ["cvxpy_models"])
    clarabel = [peer for peer in peers if peer.name.endswith("CLARABEL")]
    rows, _ = grade_peers.grade(clarabel, list(SMALL), None, progress=lambda _: None)
    assert {row["problem"]: (row["passed"], row["graded"]) for row in rows} == {
        "lmnn": (1, 1), "mvu_oos": (1, 1), "mvu/equality": (1, 1)}
