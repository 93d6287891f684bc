"""Every distribution the code imports is declared in pyproject.toml (issue 18): the package's imports
in the core dependencies (or the optional extra ``distributed``, imported at first use), the tests'
in the core or the test, notebooks and docs extras (the README's test command installs them), the
notebooks' (their cells and notebooks/refresh.py) in the core or the notebooks extra, the
documentation's (docs/conf.py and its extension) in the core or the docs extra, the worked examples'
(examples/) in the core."""

from __future__ import annotations

import ast
import json
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()                    # PEP 503


def _declared(groups: list[str]) -> set[str]:
    """Distribution names required by the core (``"core"``) and the named extras of pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lists = [project["dependencies"] if group == "core" else project["optional-dependencies"][group]
             for group in groups]
    return {_normalise(re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement).group()) for requirement in sum(lists, [])}


def _top_level_imports(source: str) -> set[str]:
    """Top-level module names of every absolute import in ``source``, wherever it stands."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _sources(kind: str) -> dict[str, str]:
    """Path → Python source of the package, tests, docs, examples, or the notebooks' code cells and scripts."""
    if kind == "notebooks":
        cells = {f"{path.name}, cell {i}": "".join(cell["source"])
                 for path in sorted((ROOT / "notebooks").glob("*.ipynb"))
                 for i, cell in enumerate(json.loads(path.read_text())["cells"]) if cell["cell_type"] == "code"}
        return cells | {path.name: path.read_text() for path in sorted((ROOT / "notebooks").glob("*.py"))}
    return {str(path.relative_to(ROOT)): path.read_text() for path in sorted((ROOT / kind).rglob("*.py"))}


def undeclared_imports(sources: dict[str, str], declared: set[str], own: str = "sdpembed") -> dict[str, str]:
    """Third-party modules imported by ``sources`` whose distribution is not in ``declared``:
    {module: 'where: why'} (a module no installed distribution provides counts as undeclared)."""
    providers = packages_distributions()
    missing = {}
    for where, source in sources.items():
        for module in sorted(_top_level_imports(source) - set(sys.stdlib_module_names) - {own, "__future__"}):
            distributions = {_normalise(d) for d in providers.get(module, [])}
            if not distributions & declared:
                why = f"from {sorted(distributions)}" if distributions else "provided by no installed distribution"
                missing.setdefault(module, f"{where}: {why}")
    return missing


@pytest.mark.parametrize("kind, groups", [
    ("sdpembed", ["core", "distributed"]),     # the extra imported at first use only (tests/contract/test_startup.py)
    ("tests", ["core", "test", "notebooks", "docs"]),
    ("docs", ["core", "docs"]),
    ("notebooks", ["core", "notebooks"]),
    ("examples", ["core"]),
])
def test_every_import_is_declared(kind, groups):
    sources = _sources(kind)
    assert sources
    assert undeclared_imports(sources, _declared(groups)) == {}


def test_an_undeclared_import_is_found():
    sources = {"a.py": "import numpy\nfrom threadpoolctl import threadpool_limits\n",
               "b.py": "def f():\n    import sklearn.datasets\n    from . import sibling\n    import json\n"}
    missing = undeclared_imports(sources, {"numpy"})
    assert set(missing) == {"threadpoolctl", "sklearn"}
    assert missing["sklearn"] == "b.py: from ['scikit-learn']"
    assert undeclared_imports({"c.py": "import no_such_module_anywhere"}, {"numpy"}) == {
        "no_such_module_anywhere": "c.py: provided by no installed distribution"}
    assert undeclared_imports(sources, {"numpy", "threadpoolctl", "scikit-learn"}) == {}


# ------------------------------------------------------------------------------------------------ the lock
def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.match(r"\d+(\.\d+)*", version).group().split("."))


def test_lock_pins_every_declared_distribution_from_pypi_alone():
    lines = (ROOT / "requirements" / "test.lock").read_text().splitlines()
    assert lines[1].strip().startswith("#    uv pip compile ") and "pyproject.toml" in lines[1]   # how it was made
    pins = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    for line in pins:                                      # name==version [; marker]: no URL, path, index or -e
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!]+( ; [^/\\]+)?", line), line
    versions: dict[str, set[str]] = {}
    for line in pins:
        name, version = line.split(" ; ")[0].split("==")
        versions.setdefault(_normalise(name), set()).add(version)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    for requirement in project["dependencies"] + extras["test"] + extras["notebooks"] + extras["docs"]:
        name, *bound = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:>=([0-9.]+))?", requirement).groups()
        assert versions.get(_normalise(name)), f"{name} is declared in pyproject.toml but not pinned in the lock"
        assert len(versions[_normalise(name)]) == 1, f"{name}: one version for every Python and platform"
        if bound[0] is not None:
            assert _release(next(iter(versions[_normalise(name)]))) >= _release(bound[0]), requirement


def test_ci_runs_the_readme_test_command_exactly():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    command = block[1]                                                   # the second command: install pinned, test
    assert command.startswith("python -m pip install -c requirements/test.lock ")
    assert command.endswith("&& python -m pytest")
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == command
