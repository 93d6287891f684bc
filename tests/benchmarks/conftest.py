"""Loading the benchmark scripts, which run by path and are not an installed package."""

import importlib
import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_script(name: str):
    """The module of ``benchmarks/<name>.py``, loaded by path."""
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_reproduce(submodule: str):
    """A module of the ``benchmarks/reproduce`` package (``common``, ``baselines``, ``numax``), or a
    paper's by its name on the command line (``thesis-mvu``)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module(f"reproduce.{submodule}")


def load_paper(paper: str):
    """The module of one paper, by its name on the command line (``numax``, ``thesis-mvu``)."""
    load_reproduce("common")                                   # puts benchmarks/ on sys.path
    return importlib.import_module("reproduce").load(paper)
