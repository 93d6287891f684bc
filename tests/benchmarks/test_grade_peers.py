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


def test_merge_keeps_the_other_peers_rows_in_their_place(grade_peers, tmp_path):
    """``--merge``: the graded peer's rows replace its old ones where they were, the others stay,
    each stamped by the run that made it."""
    import json

    def row(peer, problem, passed):
        return {"peer": peer, "problem": problem, "passed": passed}

    old = {"command": "python benchmarks/grade_peers.py", "date": "2026-11-25",
           "rows": [row("A", "lmnn", 1), row("B", "mvu", 0), row("B", "lmnn", 0), row("C", "numax", 2)],
           "runs": [{"peer": "A", "setting": "defaults"}, {"peer": "B", "setting": "defaults"}]}
    path = tmp_path / "grade_peers.json"
    path.write_text(json.dumps(old))
    new = {"rows": [row("B", "mvu", 5), row("D", "mvu", 1)], "runs": [{"peer": "B", "setting": "new"}]}
    stamp = {"command": "python benchmarks/grade_peers.py --peer B --merge", "date": "2026-11-26"}
    out = grade_peers.merged(path, new, stamp, {"B", "D"})
    assert [(r["peer"], r["problem"], r["passed"]) for r in out["rows"]] == [
        ("A", "lmnn", 1), ("B", "mvu", 5), ("C", "numax", 2), ("D", "mvu", 1)]
    assert out["runs"] == [{"peer": "A", "setting": "defaults"}, {"peer": "B", "setting": "new"}]
    assert out["stamps"] == {"A": {"command": old["command"], "date": old["date"]},
                             "C": {"command": old["command"], "date": old["date"]}, "B": stamp, "D": stamp}


def test_an_iteration_limit_is_a_reason(grade_peers):
    """A failure whose program said it stopped at its iteration limit (cvxpy_models, SCS's max_iters)
    says so in the table."""
    failed = {"result": "fail", "max_violation": 0.0, "psd_violation": 1e-5, "objective_error": 0.0, "reasons": [],
              "stderr_tail": "SCS stopped at its iteration limit after 100000 iterations\n"}
    why = grade_peers.reason_in_words([failed, {**failed, "stderr_tail": ""}],
                                      {"objective": 1e-4, "feasibility": 1e-5, "psd": 1e-6})
    assert "the solver stopped at its iteration limit on 1" in why
    assert "not PSD" in why


def test_a_solver_missing_here_runs_in_the_peers_venv(grade_peers, tmp_path):
    """CVXOPT is no dependency: its row runs with the peers' virtualenv's Python when CVXPY and it are
    there, and is *not run* when that virtualenv lacks them."""
    venv_missing = importlib.import_module("peers").venv_missing   # benchmarks/peers, on the path with grade_peers
    python, missing = venv_missing(str(tmp_path / "nowhere"), "cvxpy", "cvxopt")
    assert missing is not None and "does not exist" in missing
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    assert venv_missing(str(venv), "numpy", "json") == (str(venv / "bin" / "python"), None)
    assert venv_missing(str(venv), "numpy", "no_such_module_here")[1] == \
        f"numpy or no_such_module_here is not installed in {venv}"
    peers = grade_peers.load_peers(grade_peers.Options(python=sys.executable, peers_venv=str(venv)), ["cvxpy_models"])
    by_solver = {peer.name.rsplit(" ", 1)[-1]: peer for peer in peers}
    if importlib.util.find_spec("cvxopt") is None:
        assert by_solver["CVXOPT"].missing is not None       # the fake venv has this Python's packages: no cvxopt
        assert "cvxopt is not installed here" in by_solver["CVXOPT"].missing
    assert by_solver["CLARABEL"].missing is None
    assert by_solver["CLARABEL"].settings[0].command.startswith(shlex.quote(sys.executable))
