"""One registry (DESIGN.md, issue 19): every per-problem hook is on the problem's
:class:`~sdpembed.registry.ProblemSpec`, so no module outside ``registry.py`` and ``problems/``
branches on a problem's name. Adding a problem touches ``problems/``, ``formulations/``,
``solvers/`` and one registration, nothing else.

Every module of ``sdpembed/`` is read with :mod:`ast` (never executed). A registered name used as
a string literal is a branch on it when it is an operand of a comparison (``problem == "mvu"``,
``name in ("numax", "lmnn")``), a key of a dict display (a side table keyed by problem), the index
of a subscript (``PROBLEMS["lmnn"]``), or a ``case`` pattern.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from sdpembed.registry import PROBLEMS

#: Modules allowed to name problems: the registry itself and the problems' own modules.
OWNERS = ("sdpembed.registry", "sdpembed.problems")

#: (module, literal) uses that are not branches on a problem, each with the reason.
EXCEPTIONS: set[tuple[str, str]] = {
    # the table of linear methods (`sdpembed embed METHOD`): the estimators NuMax and NuMaxClass
    # are linear maps named like the problems they solve, keyed by method name, not by problem
    ("sdpembed.linear.methods", "numax"),
    ("sdpembed.linear.methods", "numax_class"),
}


def _package_root() -> Path:
    spec = importlib.util.find_spec("sdpembed")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _names_in(node: ast.AST | None, names: frozenset[str]) -> list[str]:
    """The registered names that ``node`` is, or that a tuple, list or set display ``node`` holds."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [n for element in node.elts for n in _names_in(element, names)]
    return []


def branches_on_names(source: str, names: frozenset[str]) -> list[tuple[int, str, str]]:
    """(line, kind, name) of every use of a name of ``names`` as a comparison operand, dict key,
    subscript index or ``case`` pattern in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            uses = [("comparison", n) for operand in (node.left, *node.comparators) for n in _names_in(operand, names)]
        elif isinstance(node, ast.Dict):
            uses = [("dict key", n) for key in node.keys for n in _names_in(key, names)]
        elif isinstance(node, ast.Subscript):
            uses = [("subscript", n) for n in _names_in(node.slice, names)]
        elif isinstance(node, ast.MatchValue):
            uses = [("case pattern", n) for n in _names_in(node.value, names)]
        else:
            continue
        found += [(node.lineno, kind, name) for kind, name in uses]
    return found


def _scan(root: Path, names: frozenset[str]) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        if any(module == owner or module.startswith(owner + ".") for owner in OWNERS):
            continue
        for line, kind, name in branches_on_names(path.read_text(encoding="utf-8"), names):
            if (module, name) not in EXCEPTIONS:
                out.append(f"{module}:{line}: {name!r} as a {kind}")
    return out


def test_no_module_outside_the_registry_branches_on_a_problem_name():
    found = _scan(_package_root(), frozenset(PROBLEMS))
    assert not found, ("per-problem logic outside the registry (put it on the ProblemSpec):\n" + "\n".join(found))


def test_every_exception_is_still_used():
    root, names = _package_root(), frozenset(PROBLEMS)
    used = set()
    for path in root.rglob("*.py"):
        module = _module_name(path, root)
        used |= {(module, name) for _, _, name in branches_on_names(path.read_text(encoding="utf-8"), names)}
    assert EXCEPTIONS <= used, f"exceptions no longer needed; remove them: {sorted(EXCEPTIONS - used)}"


@pytest.mark.parametrize("source, expected", [
    ('if problem == "mvu": pass', [(1, "comparison", "mvu")]),
    ('ok = spec.name in ("numax", "numax_class")', [(1, "comparison", "numax"), (1, "comparison", "numax_class")]),
    ('EXPORTERS = {"lmnn": f}', [(1, "dict key", "lmnn")]),
    ('spec = PROBLEMS["mvu_oos"]', [(1, "subscript", "mvu_oos")]),
    ('match p:\n    case "lmnn":\n        pass', [(2, "case pattern", "lmnn")]),
    ('print("numax"); f(problem="lmnn"); x = {"k": "mvu"}', []),          # words, defaults and values are no branch
])
def test_the_scan_finds_each_kind_of_branch(source, expected):
    assert branches_on_names(source, frozenset(PROBLEMS)) == expected


def test_every_registered_problem_has_every_hook():
    for name, spec in PROBLEMS.items():
        assert spec.name == name
        assert spec.sdpa_form is not None and spec.suite_cases is not None and spec.from_dataset is not None, name
