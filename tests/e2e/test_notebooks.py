"""Every notebook under notebooks/ runs top to bottom without error, executed as `notebooks/refresh.py` does,
and leaves every output its stored copy is checked for (tests/test_stored_notebooks.py)."""

import nbformat
import pytest

from ..conftest import notebook_tools

pytestmark = pytest.mark.e2e

tools = notebook_tools()


def test_there_are_notebooks():
    assert tools.NOTEBOOKS, "no notebooks found"


@pytest.mark.parametrize("path", tools.NOTEBOOKS, ids=[p.name for p in tools.NOTEBOOKS])
def test_notebook_executes(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []                             # what it shows must come from this run
    tools.execute(notebook, tmp_path)                     # raises on the first failing cell
    assert tools.missing_outputs(notebook) == []
