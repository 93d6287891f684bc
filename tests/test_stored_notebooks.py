"""The notebooks are stored executed (issue 20): every code cell that prints, displays or ends in an
expression has its output, every plotting cell its PNG, no code cell changed since `notebooks/refresh.py`
executed it, and each notebook opens with what it teaches and ends with what to try next.
Reading the files only; tests/e2e/test_notebooks.py executes them."""

from __future__ import annotations

import copy

import nbformat
import pytest

from .conftest import notebook_tools

tools = notebook_tools()
PATHS = tools.NOTEBOOKS
IDS = [p.name for p in PATHS]
MAX_BYTES = 1_500_000


def _read(path):
    return nbformat.read(path, as_version=4)


def test_there_are_notebooks():
    assert PATHS


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_stored_with_every_output(path):
    assert tools.missing_outputs(_read(path)) == []


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_outputs_belong_to_the_stored_code(path):
    assert tools.stale_cells(_read(path)) == [], "run: python notebooks/refresh.py " + path.stem


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_size_and_shape(path):
    assert path.stat().st_size < MAX_BYTES
    cells = _read(path).cells
    assert cells[0].cell_type == "markdown" and "you will learn" in cells[0].source.lower()
    assert cells[-1].cell_type == "markdown" and "try next" in cells[-1].source.lower()


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_a_stripped_copy_is_caught(path):
    stripped = _read(path)
    for cell in stripped.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    problems = tools.missing_outputs(stripped)
    plotting = [i for i, c in enumerate(stripped.cells) if c.cell_type == "code" and tools.should_plot(c.source)]
    assert plotting, "every notebook has a figure"
    for i in plotting:
        assert f"cell {i}: plots, but has no image/png output" in problems


def test_a_lost_figure_and_an_edited_cell_are_caught():
    notebook = _read(PATHS[0])
    i = next(i for i, c in enumerate(notebook.cells) if c.cell_type == "code" and tools.should_plot(c.source))
    figureless = copy.deepcopy(notebook)
    figureless.cells[i].outputs = [o for o in figureless.cells[i].outputs if "image/png" not in o.get("data", {})]
    assert tools.missing_outputs(figureless) == [f"cell {i}: plots, but has no image/png output"]

    edited = copy.deepcopy(notebook)
    edited.cells[i].source += "\nprint('new')"
    assert tools.stale_cells(edited) == [f"cell {i}: its source changed since the refresh"]
    edited.cells.append(nbformat.v4.new_code_cell("x = 1"))
    assert tools.stale_cells(edited)[-1].endswith("at the refresh")
    del edited.metadata[tools.METADATA_KEY]
    assert tools.stale_cells(edited) == ["never refreshed: no sdpembed.code_sha256 in the notebook's metadata"]


@pytest.mark.parametrize("source, expected", [
    ("x = 1", False),
    ("x = 1\nx", True),
    ("x = 1\nx;", False),
    ("print(1)\ny = 2", True),
    ("plt.show()", True),
    ("for i in range(2):\n    print(i)", True),
    ("def f():\n    return 1", False),
])
def test_should_output(source, expected):
    assert tools.should_output(source) is expected


@pytest.mark.parametrize("source, expected", [
    ("import matplotlib.pyplot as plt", False),
    ("colors = plt.cm.tab10.colors", False),
    ("# ax.plot(x)\ny = 1", False),
    ("fig, ax = plt.subplots()", True),
    ("ax[0].semilogy(t, e)", True),
    ("a.scatter(*Y.T)", True),
])
def test_should_plot(source, expected):
    assert tools.should_plot(source) is expected
