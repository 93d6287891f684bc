"""No module of sdpembed uses another module's private names: a helper that two modules share lives in a
module meant to be shared (``graphs/common``, ``models/common``; DESIGN.md, "Layers"), so that renaming or
changing a private helper never breaks a sibling silently. Read with ``ast``, lazy imports included."""

from __future__ import annotations

import ast
from pathlib import Path

import sdpembed

PACKAGE = Path(sdpembed.__file__).parent


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_aliases(tree: ast.AST, location: Path) -> set[str]:
    """The local names bound to modules by ``import`` or to sdpembed modules by ``from . import module``
    (relative to ``location``, the file's place in the package)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = location.parents[node.level - 1].joinpath(*(node.module or "").split(".") if node.module else ())
            for alias in node.names:
                if (base / f"{alias.name}.py").exists() or (base / alias.name).is_dir():
                    names.add(alias.asname or alias.name)
    return names


def private_uses(path: Path, location: Path | None = None) -> list[str]:
    """Where the module at ``path`` (placed at ``location`` in the package, default ``path``) imports a
    private name of another module, or reads one as an attribute of a module it imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("sdpembed")):
            found += [f"{node.lineno}: from {'.' * node.level}{node.module or ''} import {alias.name}"
                      for alias in node.names if _private(alias.name)]
    modules = _module_aliases(tree, location or path) - {"np", "numpy", "scipy", "sp", "sklearn"}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and _private(node.attr)):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names():
    offences = {str(path.relative_to(PACKAGE)): uses for path in sorted(PACKAGE.rglob("*.py"))
                if (uses := private_uses(path))}
    assert not offences, offences


def test_the_check_sees_a_private_import_and_a_private_attribute(tmp_path):
    path = tmp_path / "module.py"
    path.write_text("from .lmnn import LMNN, _uses_rule\nfrom .. import secants\nsecants._data_scale(1)\n")
    location = PACKAGE / "models" / "module.py"
    assert private_uses(path, location) == ["1: from .lmnn import _uses_rule", "3: secants._data_scale"]
