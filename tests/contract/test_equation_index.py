"""The equation index (``docs/equations.md``, issue 19) names only functions that exist.

Every dotted name ``sdpembed.…`` in the last column of the index's tables is resolved: the longest
prefix that imports as a module, then attributes (a class's methods and properties included). A
function that is renamed or moved fails here until the index follows it, so the index cannot rot.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

INDEX = Path(__file__).resolve().parents[2] / "docs" / "equations.md"
NAME = re.compile(r"`(sdpembed(?:\.\w+)+)`")


def _rows() -> list[tuple[str, str]]:
    """(equation cell, implemented-by cell) of every table row of the index."""
    rows = []
    for line in INDEX.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|") or line.startswith("|---") or line.startswith("| number"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        rows.append((cells[0], cells[-1]))
    return rows


def _resolve(dotted: str) -> object:
    """The object named by ``dotted``: a module prefix, imported, then attributes.

    The shortest attribute path is tried first (``sdpembed.solvers.fromax`` is the function the
    package exports, not its submodule of the same name); a submodule is the last resort.
    """
    parts = dotted.split(".")
    cuts = [*range(len(parts) - 1, 0, -1), len(parts)]
    for cut in cuts:
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except (ModuleNotFoundError, AttributeError):
            continue
        return obj
    raise AssertionError(f"docs/equations.md names {dotted}, which does not exist")


NAMES = sorted({name for _, cell in _rows() for name in NAME.findall(cell)})


def test_every_row_names_an_implementation() -> None:
    rows = _rows()
    assert len(rows) > 50
    empty = [number for number, cell in rows if not NAME.search(cell)]
    assert not empty, f"rows of docs/equations.md that name no function: {empty}"


@pytest.mark.parametrize("name", NAMES)
def test_named_function_exists(name: str) -> None:
    obj = _resolve(name)
    assert callable(obj) or isinstance(obj, property), f"{name} is {obj!r}, not a function, class or property"
