"""The README's feature table names every registered problem with its methods and estimators, as
the registry has them (the documentation's table is generated; the README's is checked here)."""

from __future__ import annotations

from pathlib import Path

from sdpembed.registry import PROBLEMS

README = Path(__file__).resolve().parents[2] / "README.md"


def _feature_rows() -> dict[str, list[str]]:
    rows = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 7:
            rows[cells[0].strip("`")] = cells
    return rows


def test_readme_feature_table_matches_the_registry():
    rows = _feature_rows()
    assert set(rows) == set(PROBLEMS)
    for name, spec in PROBLEMS.items():
        _, cvxpy, methods, _, estimators, _, suite = rows[name]
        assert cvxpy == f"`{spec.cvxpy.__name__}`"
        assert methods == ", ".join(f"`{m}`" for m in spec.methods)
        assert [e.rpartition(".")[2] for e in spec.estimators] == [
            e.strip().split(" ")[0].strip("`") for e in estimators.split(",")]
        assert suite == f"{len(spec.suite_cases())} instances"


def test_readme_cites_the_five_papers_and_the_data():
    text = README.read_text(encoding="utf-8")
    for needle in ("NuMax: A convex approach", "ADAGIO: Fast data-aware", "sparse linear model",
                   "Practical algorithms for learning", "Metric learning with convex optimization",
                   "CC BY-SA 3.0", "CITATION.cff", "LICENSE"):
        assert needle in text
