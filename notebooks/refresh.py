"""Execute the teaching notebooks in place, so that they are stored with their outputs and figures.

Usage (from anywhere)::

    python notebooks/refresh.py              # every notebook in this folder
    python notebooks/refresh.py 03_lmnn      # the notebooks whose name contains one of the words
    python notebooks/refresh.py --check      # execute nothing: report stored notebooks that are stale
                                             # or miss an output they should have

Each notebook runs top to bottom in a fresh kernel (an error stops the refresh and leaves the file
as it was), with one BLAS thread and a fixed hash seed, from a temporary working directory, on the
sdpembed of this checkout. The notebooks seed every random draw themselves, so a refresh of unchanged
code changes only the printed timings. What varies from run to run and says nothing about the
content — execution timestamps, the kernel's Python version — is not stored. The SHA-256 of every
code cell's source is written to the notebook's metadata (``sdpembed.code_sha256``), so a test can
tell that a stored notebook's outputs still belong to its code (:func:`stale_cells`), and that no
cell which prints, displays or plots lost its output (:func:`missing_outputs`).

The same :func:`execute` runs the notebooks in the test suite (``tests/e2e/test_notebooks.py``).

References
----------
Project Jupyter, *nbclient* and *nbformat*: https://nbclient.readthedocs.io, https://nbformat.readthedocs.io
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))
METADATA_KEY = "sdpembed"
TIMEOUT = 900   # seconds per cell

# the environment of the kernel: one BLAS thread (results do not depend on the machine's core
# count), a fixed hash seed, and this checkout's package ahead of any installed one
KERNEL_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "PYTHONHASHSEED": "0", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}

# a cell that draws: matplotlib through pyplot, or a drawing method of an Axes
PLOTTING = re.compile(r"\bplt\.(?!cm\b)|\.(plot|imshow|hist|scatter|bar|semilogy|loglog|semilogx)\(")
DISPLAYING = {"print", "display", "show"}


def source_hash(source: str) -> str:
    """SHA-256 of a cell's source, as stored in the notebook's metadata."""
    return hashlib.sha256(source.encode()).hexdigest()


def _code_cells(notebook: nbformat.NotebookNode) -> list[tuple[int, nbformat.NotebookNode]]:
    return [(i, cell) for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]


def _kernel_env() -> dict[str, str]:
    env = dict(os.environ, **KERNEL_ENV)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def execute(notebook: nbformat.NotebookNode, workdir: str | Path) -> nbformat.NotebookNode:
    """Run every cell of ``notebook`` in a fresh kernel started in ``workdir`` (in place).

    Raises ``nbclient.exceptions.CellExecutionError`` on the first cell that fails.
    """
    client = NotebookClient(notebook, timeout=TIMEOUT, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(workdir)}})
    client.execute(env=_kernel_env())
    return notebook


def _merged_streams(outputs: list) -> list:
    """Consecutive writes to one stream as one output: how a stream is chunked depends on timing."""
    merged = []
    for output in outputs:
        if (output.output_type == "stream" and merged and merged[-1].output_type == "stream"
                and merged[-1].name == output.name):
            merged[-1].text += output.text
        else:
            merged.append(output)
    return merged


def clean(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop what changes from run to run, give every cell a stable id, record the sources' hashes (in place)."""
    notebook.metadata.pop("widgets", None)
    notebook.metadata["language_info"] = {"name": "python"}
    used = set()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = _merged_streams(cell.outputs)
        cell.metadata.pop("execution", None)
        cell.metadata.pop("ExecuteTime", None)
        if not cell.get("id") or cell.id in used:
            # an id derived from the content, so that re-running does not rename cells
            base = source_hash(cell.cell_type + cell.source)[:8]
            cell.id = next(f"{base}-{n}" if n else base for n in range(len(notebook.cells) + 1)
                           if (f"{base}-{n}" if n else base) not in used)
        used.add(cell.id)
    notebook.metadata[METADATA_KEY] = {"code_sha256": [source_hash(cell.source) for _, cell in _code_cells(notebook)]}
    return notebook


def refresh(path: Path) -> float:
    """Execute the notebook at ``path`` and write it back with its outputs; return the seconds it took."""
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as workdir:
        execute(notebook, workdir)
    seconds = time.perf_counter() - start
    clean(notebook)
    nbformat.validate(notebook)
    nbformat.write(notebook, path)
    return seconds


def should_output(source: str) -> bool:
    """Whether a code cell must leave an output: it calls print/display/show or ends in an expression."""
    tree = ast.parse(source)
    calls = {node.func.id if isinstance(node.func, ast.Name) else node.func.attr
             for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name | ast.Attribute)}
    ends_in_expression = bool(tree.body) and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";")
    return bool(calls & DISPLAYING) or ends_in_expression


def should_plot(source: str) -> bool:
    """Whether a code cell draws a figure (pyplot, or an Axes' drawing method), comments aside."""
    code = "\n".join(line.split("#", 1)[0] for line in source.splitlines())
    return bool(PLOTTING.search(code))


def missing_outputs(notebook: nbformat.NotebookNode) -> list[str]:
    """The code cells of a stored notebook that lack an output they should have, one line each."""
    problems = []
    for i, cell in _code_cells(notebook):
        outputs = cell.get("outputs", [])
        if should_output(cell.source) and not outputs:
            problems.append(f"cell {i}: prints, displays or ends in an expression, but has no output")
        if should_plot(cell.source) and not any("image/png" in o.get("data", {}) for o in outputs):
            problems.append(f"cell {i}: plots, but has no image/png output")
        if any(o.get("output_type") == "error" for o in outputs):
            problems.append(f"cell {i}: its stored output is an error")
    return problems


def stale_cells(notebook: nbformat.NotebookNode) -> list[str]:
    """The code cells whose source changed since the last refresh, one line each (empty: not stale)."""
    stored = notebook.metadata.get(METADATA_KEY, {}).get("code_sha256")
    if stored is None:
        return ["never refreshed: no sdpembed.code_sha256 in the notebook's metadata"]
    cells = _code_cells(notebook)
    problems = [f"cell {i}: its source changed since the refresh"
                for (i, cell), digest in zip(cells, stored, strict=False) if source_hash(cell.source) != digest]
    if len(cells) != len(stored):
        problems.append(f"{len(cells)} code cells now, {len(stored)} at the refresh")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="refresh only the notebooks whose file name contains one of these")
    parser.add_argument("--check", action="store_true", help="execute nothing; report stale or incomplete notebooks")
    args = parser.parse_args(argv)
    paths = [p for p in NOTEBOOKS if not args.names or any(name in p.name for name in args.names)]
    if not paths:
        parser.error(f"no notebook in {HERE} matches {args.names}")
    status = 0
    for path in paths:
        if args.check:
            notebook = nbformat.read(path, as_version=4)
            for problem in stale_cells(notebook) + missing_outputs(notebook):
                print(f"{path.name}: {problem}")
                status = 1
            continue
        seconds = refresh(path)
        print(f"{path.name}: executed in {seconds:.0f} s, {path.stat().st_size / 1e6:.2f} MB", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
