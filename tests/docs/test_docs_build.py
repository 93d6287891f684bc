"""The documentation site builds with warnings as errors and every cross-reference resolved
(``-W --keep-going -n``, the command of docs/development.md), and has the pages it promises: the
landing page with the feature table, a user-guide page per method, the grading page, the
command-line reference with every subcommand, the API page of ``sdpembed.solve``, each
notebook's page with the figures stored in the notebook, REPRODUCTION.md's page with its figures,
and the grading page with every file of examples/ as it is (the worked examples it prints are the
files tests/e2e/test_examples.py grades)."""

from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sdpembed.cli import build_parser
from sdpembed.registry import PROBLEMS

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGES = ["index", "usage", "guide/index", "guide/numax", "guide/lmnn", "guide/mvu", "guide/linear", "grading",
         "notebooks", "cli", "api", "generated/sdpembed.solve", "equations", "benchmarks", "reproduction",
         "design", "modules", "development", "changelog", "citing"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html")
    build = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
                            str(ROOT / "docs"), str(out)], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-5000:] + build.stderr[-20000:]
    return out


@pytest.mark.parametrize("page", PAGES)
def test_page_exists(site, page):
    assert (site / f"{page}.html").is_file()


def test_landing_page_has_the_feature_table_of_every_problem(site):
    html = (site / "index.html").read_text(encoding="utf-8")
    for spec in PROBLEMS.values():
        assert spec.cvxpy.__name__ in html, spec.name
        for method in spec.methods:
            assert f">{method}<" in html, (spec.name, method)


def _subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("sdpembed",)):
    """'sdpembed solve', 'sdpembed suite run', ...: every subcommand, nested ones included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield " ".join((*path, name))
                yield from _subcommands(sub, (*path, name))


def test_cli_reference_lists_every_subcommand_and_option(site):
    text = re.sub(r"<[^>]+>", "", (site / "cli.html").read_text(encoding="utf-8"))
    commands = list(_subcommands(build_parser()))
    assert "sdpembed suite run" in commands
    for command in commands:
        assert command in text, command
    for option in ("--objective-tol", "--timeout", "--max-entries", "--random-state"):
        assert option in text


def test_api_page_of_solve_documents_it(site):
    html = (site / "generated" / "sdpembed.solve.html").read_text(encoding="utf-8")
    assert "Solve any registered instance" in html


def test_grading_page_shows_every_example_file_as_it_is(site):
    text = html.unescape(re.sub(r"<[^>]+>", "", (site / "grading.html").read_text(encoding="utf-8")))
    examples = sorted(path for path in (ROOT / "examples").rglob("*") if path.suffix in {".py", ".m", ".jl"})
    assert len(examples) >= 6
    for path in examples:
        missing = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip() and line not in text]
        assert not missing, f"{path.relative_to(ROOT)}: not on the grading page: {missing[:3]}"


def _stored_images(path: Path) -> int:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum(1 for cell in cells if cell["cell_type"] == "code" for output in cell.get("outputs", [])
               if any(kind.startswith("image/") for kind in output.get("data", {})))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_page_shows_its_figures(site, notebook):
    html = (site / "notebooks" / f"{notebook.stem}.html").read_text(encoding="utf-8")
    stored = _stored_images(notebook)
    outputs = sum(len(c.get("outputs", [])) for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"])
    # the notebooks are stored executed (tests/test_stored_notebooks.py): no skip for a stripped one
    assert outputs > 0, f"{notebook.name} is stored without outputs (python notebooks/refresh.py)"
    assert stored > 0, f"{notebook.name} has outputs but no stored figure"
    assert html.count("<img") >= stored, f"{notebook.name}: {stored} figures stored, fewer <img> on its page"


def test_reproduction_page_shows_every_figure_of_reproduction_md(site):
    figures = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", (ROOT / "REPRODUCTION.md").read_text(encoding="utf-8"))
    assert figures, "REPRODUCTION.md links no figure"
    html = (site / "reproduction.html").read_text(encoding="utf-8")
    assert "Reproducing the papers" in html
    missing = [figure for figure in figures if not (ROOT / figure).is_file()]
    assert not missing, f"REPRODUCTION.md links figures that do not exist: {missing}"
    assert html.count("<img") >= len(figures)          # Sphinx copies each into _images (renaming same names)
