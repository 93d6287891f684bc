"""The layering of the package (DESIGN.md, issue 19): lower layers never import higher ones,
``formulations`` (CVXPY) and ``solvers`` (numpy/scipy) never import each other, and no two
modules import each other, directly or through others.

Every ``import`` statement of every module of ``sdpembed/`` is read with :mod:`ast` (the module
is never executed), including imports inside functions: a lazy import is still a dependency. So
are the lazy exports of a package (:func:`sdpembed._lazy.lazy_exports`): each module they name is
read as an import of the package.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

#: The layer of every module, by the longest matching dotted prefix.
LAYERS: dict[str, int] = {
    # L0: numpy/scipy utilities and data
    "sdpembed._validate": 0,
    "sdpembed._lazy": 0,
    "sdpembed.isometry": 0,
    "sdpembed._files": 0,
    "sdpembed._memory": 0,
    "sdpembed._version": 0,
    "sdpembed._progress": 0,
    "sdpembed._deadline": 0,
    "sdpembed.results": 0,
    "sdpembed.secants": 0,
    "sdpembed.graphs": 0,
    "sdpembed.datasets": 0,
    "sdpembed.data": 0,
    # L1: one module per problem (numpy only)
    "sdpembed.problems": 1,
    # L2: CVXPY ground truths and hand-written solvers (never each other)
    "sdpembed.formulations": 2,
    "sdpembed.solvers": 2,
    # L3: the registry and the file contract
    "sdpembed.registry": 3,
    "sdpembed.io": 3,
    # L4: estimators — linear maps (NuMax and NuMax-Class among them) and models (LMNN, MVU)
    "sdpembed.linear": 4,
    "sdpembed.models": 4,
    # L5: certificates, verification, the reference suite, quality measures
    "sdpembed.validation": 5,
    # L6: entry points
    "sdpembed.cli": 6,
    "sdpembed.sdpa": 6,
    "sdpembed.__main__": 6,
    "sdpembed": 6,                # the package's __init__ only, not a default for unlisted modules
}

#: The two families of L2, which must not import each other.
SEPARATE = ("sdpembed.formulations", "sdpembed.solvers")

#: Arrows (importer, imported) that break the rules today and are fixed by another step of issue
#: 19. Each must still exist: the test fails when one disappears, so that this list only shrinks.
KNOWN_VIOLATIONS: set[tuple[str, str]] = set()


def _package_root() -> Path:
    """The directory of the ``sdpembed`` package that is imported (found, never executed)."""
    spec = importlib.util.find_spec("sdpembed")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


def _modules(root: Path) -> dict[str, Path]:
    """Dotted name -> file of every module of the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that module ``name`` imports (at any depth of its code)."""
    package = name if _is_package(path) else name.rpartition(".")[0]

    def relative(level: int, module: str | None) -> str:
        base = package.split(".")
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([module] if module else []))

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base_name = relative(node.level, node.module) if node.level else node.module or ""
            # ``from pkg import sub`` imports the submodule pkg.sub when there is one
            targets = [f"{base_name}.{alias.name}" if f"{base_name}.{alias.name}" in modules else base_name
                       for alias in node.names]
        elif _is_lazy_exports(node):
            targets = [relative(len(key) - len(key.lstrip(".")), key.lstrip(".") or None)
                       for key in _lazy_modules(node)]
        else:
            continue
        for target in targets:
            while target and target not in modules:            # ``import sdpembed.x.y`` of a name in x
                target = target.rpartition(".")[0]
            if target.split(".")[0] == "sdpembed" and target != name:
                found.add(target)
    return found


def _is_lazy_exports(node: ast.AST) -> bool:
    """A call of :func:`sdpembed._lazy.lazy_exports`."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "lazy_exports"


def _lazy_modules(call: ast.Call) -> list[str]:
    """The relative module paths a ``lazy_exports`` call names: the keys of its mapping, and its
    ``submodules`` as ``.name``."""
    out = []
    for arg in [*call.args, *(k.value for k in call.keywords if k.arg == "attributes")]:
        if isinstance(arg, ast.Dict):
            out += [key.value for key in arg.keys if isinstance(key, ast.Constant)]
    for keyword in call.keywords:
        if keyword.arg == "submodules" and isinstance(keyword.value, (ast.Tuple, ast.List)):
            out += ["." + item.value for item in keyword.value.elts if isinstance(item, ast.Constant)]
    return out


def _layer(module: str) -> int:
    if module == "sdpembed":
        return LAYERS[module]
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        prefix = ".".join(parts[:end])
        if prefix in LAYERS:
            return LAYERS[prefix]
    raise KeyError(module)


def _family(module: str) -> str | None:
    return next((f for f in SEPARATE if module == f or module.startswith(f + ".")), None)


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = _modules(_package_root())
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _violations(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    out = set()
    for importer, targets in graph.items():
        for target in targets:
            if not (_has_layer(importer) and _has_layer(target)):
                continue                                # reported by test_every_module_has_a_layer
            upward = _layer(target) > _layer(importer)
            across = {_family(importer), _family(target)} == set(SEPARATE)
            if upward or across:
                out.add((importer, target))
    return out


def test_every_module_has_a_layer(graph):
    missing = sorted(name for name in graph if not _has_layer(name))
    assert not missing, f"modules with no layer in LAYERS (add them): {missing}"


def _has_layer(name: str) -> bool:
    try:
        _layer(name)
    except KeyError:
        return False
    return True


def test_no_module_imports_a_higher_layer_or_the_other_l2_family(graph):
    new = sorted(_violations(graph) - KNOWN_VIOLATIONS)
    lines = [f"{a} (L{_layer(a)}) imports {b} (L{_layer(b)})" for a, b in new]
    assert not new, "imports against the layering:\n" + "\n".join(lines)


def test_known_violations_still_exist(graph):
    fixed = sorted(KNOWN_VIOLATIONS - _violations(graph))
    assert not fixed, f"these known violations are gone; remove them from KNOWN_VIOLATIONS: {fixed}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles(graph):
    cycles = _cycles(graph)
    assert not cycles, "modules that import each other (directly or through others): " + "; ".join(
        " <-> ".join(c) for c in cycles)


def test_lazy_exports_are_imports(graph):
    """A package's lazy exports count as its imports, so the layering sees through them."""
    assert {"sdpembed.linear.numax", "sdpembed.linear.pca"} <= graph["sdpembed.linear"]
    assert {"sdpembed.formulations", "sdpembed.models", "sdpembed.registry"} <= graph["sdpembed"]
    call = ast.parse('lazy_exports(__name__, {".a": ("x",), "..b.c": ("y",)}, submodules=("d",))').body[0].value
    assert _lazy_modules(call) == [".a", "..b.c", ".d"]


def test_the_checker_sees_a_violation_and_a_cycle():
    """The rules themselves: an upward arrow, a formulations -> solvers arrow and a circle are found."""
    toy = {
        "sdpembed.problems.numax": {"sdpembed.registry"},
        "sdpembed.registry": {"sdpembed.problems.numax"},
        "sdpembed.formulations.numax": {"sdpembed.solvers.numax.admm"},
        "sdpembed.solvers.numax.admm": set(),
    }
    assert _violations(toy) == {("sdpembed.problems.numax", "sdpembed.registry"),
                                ("sdpembed.formulations.numax", "sdpembed.solvers.numax.admm")}
    assert _cycles(toy) == [["sdpembed.problems.numax", "sdpembed.registry"]]
