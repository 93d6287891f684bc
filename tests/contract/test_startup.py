"""Start-up (issue 26): ``import sdpembed``, ``sdpembed --help``, ``sdpembed suite list`` and
``sdpembed verify`` on an instance with a stored optimum load neither scikit-learn nor CVXPY (nor
SciPy), and every public name still imports.

Each check runs in a fresh interpreter and reports :data:`sys.modules` afterwards. The heavy
modules are loaded at first use: the package ``__init__`` s through :func:`sdpembed._lazy.lazy_exports`,
the rest by imports inside the functions that need them (DESIGN.md, "Start-up").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sdpembed
from sdpembed._lazy import lazy_exports
from sdpembed.io import load_instance, write_solution
from sdpembed.registry import solve
from sdpembed.validation.suite import default_suite_dir

#: Modules a start-up must not load (SciPy too: checking a file needs numpy alone; Dask only when a
#: distributed scan is asked for).
HEAVY = ("sklearn", "cvxpy", "scipy", "dask", "distributed")

#: One small suite instance per problem, graded by ``sdpembed verify`` with its stored optimum.
INSTANCES = ("numax-squares5", "numax_class-shapes6", "lmnn-iris8", "lmnn_multi-clusters3x6", "mvu_oos-swiss-k3",
             "mvu-equality-swiss10")

#: Packages whose ``__init__`` exports lazily.
LAZY_PACKAGES = ("sdpembed", "sdpembed.linear", "sdpembed.problems", "sdpembed.validation", "sdpembed.validation.suite")

#: sdpembed's own modules that only some commands need: the problem modules (one per instance's
#: problem), the suite's build, runner, process and certifiers, the SDPA writer; and ``numpy.ma``,
#: which a plain ``np.unique`` imports (about a sixth of ``import numpy``).
OWN = ("sdpembed.problems.numax", "sdpembed.problems.lmnn", "sdpembed.problems.mvu", "sdpembed.problems.mvu_oos",
       "sdpembed.problems.suite_cases", "sdpembed.validation.suite.build", "sdpembed.validation.suite.runner",
       "sdpembed.validation.suite.process", "sdpembed.validation.suite.optimum", "sdpembed.sdpa", "numpy.ma")

#: The problem module each verify instance needs (the one of its problem).
NEEDS = {"numax": "sdpembed.problems.numax", "numax_class": "sdpembed.problems.numax",
         "lmnn": "sdpembed.problems.lmnn", "lmnn_multi": "sdpembed.problems.lmnn",
         "mvu_oos": "sdpembed.problems.mvu_oos", "mvu": "sdpembed.problems.mvu"}

PROBE = """
import json, sys
{body}
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.__stderr__)
print(json.dumps(sorted(m for m in {own!r} if m in sys.modules)), file=sys.__stderr__)
"""

CLI = """
from sdpembed.cli import main
try:
    code = main({argv!r})
except SystemExit as exc:       # --help
    code = exc.code
print(json.dumps({{"code": code}}))
"""


def _probe(body: str, own: bool = False) -> tuple[str, list[str]]:
    """Run ``body`` in a fresh interpreter; its stdout and the heavy modules (with ``own``: those of
    :data:`OWN`) loaded at its end."""
    env = {**os.environ, "PYTHONPATH": str(Path(sdpembed.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", PROBE.format(body=body, heavy=HEAVY, own=OWN)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(done.stderr.strip().splitlines()[-1 if own else -2])


def _cli(argv: list[str], own: bool = False) -> tuple[int, list[str]]:
    out, loaded = _probe(CLI.format(argv=argv), own)
    return json.loads(out.strip().splitlines()[-1])["code"], loaded


@pytest.fixture(scope="module")
def solutions(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """(instance file, solution file by the problem's default solver) per instance of :data:`INSTANCES`."""
    out = {}
    directory = tmp_path_factory.mktemp("solutions")
    for name in INSTANCES:
        path = default_suite_dir() / f"{name}.npz"
        instance = load_instance(path)
        result = solve(instance)
        assert result.status == "optimal", (name, result.message)
        write_solution(directory / f"{name}.npz", instance, result)
        out[name] = (path, directory / f"{name}.npz")
    return out


def test_import_sdpembed_loads_neither():
    _, loaded = _probe("import sdpembed")
    assert loaded == []


@pytest.mark.parametrize("argv", [["--help"], ["suite", "list"], ["suite", "run", "--help"], ["verify", "--help"]])
def test_help_and_suite_list_load_neither(argv):
    code, loaded = _cli(argv)
    assert code == 0
    assert loaded == []


@pytest.mark.parametrize("name", INSTANCES)
def test_verify_with_a_stored_optimum_loads_neither(solutions, name):
    instance, solution = solutions[name]
    code, loaded = _cli(["verify", str(instance), str(solution)])
    assert code == 0
    assert loaded == []


@pytest.mark.parametrize(("argv", "allowed"), [
    (["--help"], set()),
    # the manifest compares stored optima with the suite's tolerances (numpy and the registry only)
    (["suite", "list"], {"sdpembed.validation.suite.optimum"}),
])
def test_help_and_suite_list_load_no_problem_module(argv, allowed):
    code, loaded = _cli(argv, own=True)
    assert code == 0
    assert set(loaded) <= allowed


@pytest.mark.parametrize("name", INSTANCES)
def test_verify_loads_only_its_problem_module(solutions, name):
    """``verify`` of an MVU file imports neither the LMNN nor the NuMax module, nor the suite's build."""
    instance, solution = solutions[name]
    code, loaded = _cli(["verify", str(instance), str(solution)], own=True)
    assert code == 0
    assert loaded == [NEEDS[name.split("-")[0]]]


def test_verify_with_cvxpy_ground_truth_still_loads_it(tmp_path, solutions):
    """The probe sees an import: an instance without a stored optimum is solved by CVXPY."""
    arrays = dict(load_instance(solutions["numax-squares5"][0]).to_arrays())
    arrays.pop("optimum")
    path = tmp_path / "no-optimum.npz"
    import numpy as np

    np.savez(path, **arrays)
    # the matrix alone: a solution carrying multipliers would be judged by its proven bound
    with np.load(solutions["numax-squares5"][1]) as data:
        bare = tmp_path / "bare.npz"
        np.savez(bare, P=data["P"])
    code, loaded = _cli(["verify", str(path), str(bare)])
    assert code == 0
    assert "cvxpy" in loaded


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_public_name_imports(package):
    body = f"""
import importlib
module = importlib.import_module({package!r})
missing = [name for name in module.__all__ if not hasattr(module, name)]
assert not missing, missing
assert set(module.__all__) <= set(dir(module))
namespace = {{}}
exec("from {package} import *", namespace)
assert set(module.__all__) <= set(namespace)
"""
    _probe(body)


def test_lazy_exports_refuses_a_name_exported_twice():
    with pytest.raises(ValueError, match="'x' is exported twice"):
        lazy_exports("sdpembed", {".a": ("x",), ".b": ("x",)})
    with pytest.raises(ValueError, match="'b' is exported twice"):
        lazy_exports("sdpembed", {".a": ("b",)}, submodules=("b",))
    # a function named like its module (validation.certify) would be replaced by the module
    with pytest.raises(ValueError, match="'certify' is also a submodule"):
        lazy_exports("sdpembed.validation", {".certify": ("certify",)})


def test_lazy_exports_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        sdpembed.nothing_here  # noqa: B018
