"""Every hand-written solver of the registry runs where CVXPY cannot be imported, and so do the file
contract (:mod:`sdpembed.io`), the problems (:mod:`sdpembed.problems`) and the verifier
(:mod:`sdpembed.validation.verify`).

Each check runs in a fresh interpreter in which a :data:`sys.meta_path` finder, installed before
sdpembed is imported, makes ``import cvxpy`` (and any ``cvxpy.*``) raise ImportError.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sdpembed.registry import PROBLEMS

#: Tiny instances of the reference suite (sdpembed/data/suite/), per problem. Each method of a problem
#: runs on those of them for which it is the default method, or on the first when it is no one's.
TINY: dict[str, list[str]] = {
    "numax": ["numax-squares5", "numax-squares6-points"],
    "numax_class": ["numax_class-shapes6", "numax_class-clusters3x8-points"],
    "lmnn": ["lmnn-iris8"],
    "lmnn_multi": ["lmnn_multi-clusters3x6"],
    "mvu_oos": ["mvu_oos-swiss-k3"],
    "mvu": ["mvu-equality-swiss10", "mvu-inequality-swiss10", "mvu-slack-swiss10", "mvu-min_trace-swiss10"],
}

#: Registered methods that are built on CVXPY, with the reason; without CVXPY they must raise
#: ImportError (and nothing else).
NEEDS_CVXPY: dict[tuple[str, str], str] = {
    ("lmnn", "working_set"): "its restricted SDPs are solved by CVXPY (sdpembed.formulations.lmnn)",
}

#: Registered methods that do not reach the tolerance by design, with the reason; without CVXPY they must
#: still end with a true certificate: dual bound <= stored optimum <= objective.
STALLS: dict[tuple[str, str], str] = {
    ("lmnn", "gradient"): "Algorithm 3 is a subgradient method; it stalls above gap_tol and says so",
}

BLOCKER = """
import importlib.abc, sys

class BlockCVXPY(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "cvxpy" or name.startswith("cvxpy."):
            raise ImportError(f"import of {name!r} blocked by the test: CVXPY must not be needed here")
        return None

assert "cvxpy" not in sys.modules
sys.meta_path.insert(0, BlockCVXPY())
"""

SOLVE_ALL = BLOCKER + """
import json
from pathlib import Path

import sdpembed
from sdpembed import load_instance
from sdpembed.registry import PROBLEMS, solve
from sdpembed.validation.verify import Solution, verify_solution

tiny = json.loads(sys.argv[1])
suite = Path(sdpembed.__file__).parent / "data" / "suite"
report = {}
for problem, names in tiny.items():
    instances = {name: load_instance(suite / f"{name}.npz") for name in names}
    spec = PROBLEMS[problem]
    for method in spec.methods:
        chosen = [name for name, inst in instances.items() if spec.default_method(inst) == method] or names[:1]
        for name in chosen:
            key = f"{problem}/{method}/{name}"
            try:
                result = solve(instances[name], method)
            except ImportError as exc:
                report[key] = {"import_error": str(exc)}
                continue
            cert = verify_solution(instances[name], Solution(result.solution, result.dual_bound))
            report[key] = {"status": result.status, "relative_gap": result.relative_gap, "verified": cert.passed,
                           "reasons": cert.reasons, "objective": result.objective, "dual_bound": result.dual_bound,
                           "optimum": instances[name].optimum, "sense": spec.sense}
print(json.dumps(report))
"""


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter that imports the same sdpembed as this test."""
    root = Path(importlib.util.find_spec("sdpembed").origin).parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                          timeout=600)


def test_the_blocker_blocks():
    run = _run(BLOCKER + "import cvxpy\n")
    assert run.returncode != 0 and "blocked by the test" in run.stderr


@pytest.mark.parametrize("module", ["sdpembed", "sdpembed.io", "sdpembed.problems", "sdpembed.registry",
                                    "sdpembed.validation.verify", "sdpembed.solvers"])
def test_imports_without_cvxpy(module):
    run = _run(BLOCKER + f"import {module}\nassert 'cvxpy' not in sys.modules\n")
    assert run.returncode == 0, run.stderr


def test_verify_without_cvxpy_and_without_an_optimum_fails_cleanly(tmp_path):
    """A bare matrix of an instance with no stored optimum would need the CVXPY ground truth: where CVXPY
    cannot be imported, ``sdpembed verify`` says the objective is unchecked (FAIL, exit 1), no traceback."""
    instance = tmp_path / "mvu.npz"
    np.savez(instance, problem=np.array("mvu"), edges=np.array([[0, 1], [1, 2]]), sqdist=np.ones(2),
             n=np.array(3), variant=np.array("inequality"))
    solution = tmp_path / "solution.npz"
    np.savez(solution, K=np.zeros((3, 3)))
    run = _run(BLOCKER + "from sdpembed.cli import main\nsys.exit(main(sys.argv[1:]))\n",
               "verify", str(instance), str(solution))
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr and "cannot be imported" in run.stdout and "FAIL" in run.stdout


def test_secant_list_above_the_admm_limit_is_solved_and_proved_without_cvxpy(tmp_path):
    """A NuMax instance listing more secants than the ADMM (and the CVXPY ground truth) takes: ``solve``
    (column generation, the default there) writes one multiplier per secant, and ``verify`` proves the
    bound from them — no CVXPY, no stored optimum — within the gap the solve reported."""
    from sdpembed import NuMaxInstance
    from sdpembed.datasets import gaussian_points
    from sdpembed.formulations.numax import MAX_SECANTS

    instance, solution = tmp_path / "numax.npz", tmp_path / "solution.npz"
    X = gaussian_points(400, 12, random_state=0)
    NuMaxInstance.from_points(X, 0.2, n_secants=MAX_SECANTS + 5000, random_state=0).save(instance)
    code = BLOCKER + """
import json
from sdpembed.cli import main
assert main(["solve", sys.argv[1], "--out", sys.argv[2], "--json"]) == 0
code = main(["verify", sys.argv[1], sys.argv[2], "--json"])
assert "cvxpy" not in sys.modules
sys.exit(code)
"""
    run = _run(code, str(instance), str(solution))
    assert run.returncode == 0, run.stderr
    solved, verified = _json_objects(run.stdout)
    assert solved["method"] == "cg" and solved["status"] == "optimal"
    with np.load(solution) as arrays:
        assert arrays["dual_y"].shape == (MAX_SECANTS + 5000,)
    assert verified["passed"] and verified["optimum_source"].startswith("bracketed by the verified dual bound")
    # the bound proved from the file is the solve's own, so the proven gap is the one it reported
    assert verified["dual_bound"] == pytest.approx(solved["dual_bound"], rel=1e-9)
    assert abs(verified["objective_error"]) <= 1e-5


def _json_objects(text: str) -> list[dict]:
    """The JSON objects printed one after the other in ``text``."""
    decoder, out, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(text, at)
        out.append(value)
    return out


@pytest.fixture(scope="module")
def report() -> dict:
    run = _run(SOLVE_ALL, json.dumps(TINY))
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_every_problem_has_tiny_instances():
    assert set(TINY) == set(PROBLEMS), "add a tiny suite instance of every registered problem to TINY"


@pytest.mark.slow
@pytest.mark.parametrize("problem, method", [(p, m) for p, spec in PROBLEMS.items() for m in spec.methods])
def test_hand_written_solver_runs_without_cvxpy(report, problem, method):
    runs = {key: value for key, value in report.items() if key.startswith(f"{problem}/{method}/")}
    assert runs, f"{problem}/{method} was not run"
    for key, run in runs.items():
        if (problem, method) in NEEDS_CVXPY:
            assert "blocked by the test" in run.get("import_error", ""), f"{key}: {run}"
            continue
        assert "import_error" not in run, f"{key} needs CVXPY: {run['import_error']}"
        if (problem, method) in STALLS:
            sign = 1.0 if run["sense"] == "min" else -1.0
            slack = 1e-6 * max(abs(run["optimum"]), 1.0)
            assert sign * run["dual_bound"] <= sign * run["optimum"] + slack <= sign * run["objective"] + 2 * slack, \
                f"{key}: {run}"
            continue
        assert run["status"] == "optimal" and run["verified"], f"{key}: {run}"

