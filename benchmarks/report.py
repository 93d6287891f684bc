"""BENCHMARKS.md and the benchmark plots, generated from the stored results.

Every benchmark script writes its results to ``benchmarks/results/<name>.json`` through
:func:`write_results`, which stamps the run (:func:`run_stamp`: command, UTC date, commit, machine,
BLAS threads, load average) and redraws the plots of the sections that read that file.
``python benchmarks/report.py`` regenerates BENCHMARKS.md and every plot from the stored JSONs;
``--check`` exits 1 if BENCHMARKS.md differs from what it would write (``tests/test_benchmarks_report.py``
does the same), so no number in it can be edited by hand.

A section of BENCHMARKS.md is a :class:`Section` in the registry :data:`SECTIONS`: one module
of ``benchmarks/report_sections/`` per benchmark registers it with the :func:`section` decorator on
a function that turns the loaded JSONs into Markdown, and names a plot function::

    # benchmarks/report_sections/grade_peers.py
    from report import image, section, table

    def plot(data: dict[str, dict]) -> list[Path]: ...        # draws PNGs into PLOTS

    @section("grade_peers", "Grading peer implementations", files=("grade_peers.json",), order=80,
             plot=plot)
    def render(data: dict[str, dict]) -> str: ...

``data`` maps each of ``files`` that exists in ``benchmarks/results/`` to its loaded JSON. The text
is written between the markers ``<!-- section: NAME -->`` and ``<!-- /section: NAME -->``, sections
in the order of ``order``; a section references its plots with :func:`image`. A new section is a
new module there: nothing else changes.

    python benchmarks/report.py [--check] [--no-plots]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PLOTS = RESULTS                       # the PNGs sit beside their JSONs
OUTPUT = ROOT / "BENCHMARKS.md"
VERSIONED = ("numpy", "scipy", "sklearn", "cvxpy", "scs", "clarabel")
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


# ----------------------------------------------------------------------------- stamping a run
def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30, check=False)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def run_stamp(argv: Sequence[str] | None = None) -> dict:
    """How this run was made: command, UTC date, commit, machine, BLAS threads, load average.

    ``commit`` ends in ``+dirty`` when the package or the running script differ from it.
    """
    import numpy  # noqa: F401  (loads the BLAS that threadpoolctl reports)
    from threadpoolctl import threadpool_info

    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]).resolve()
    script_name = str(script.relative_to(ROOT)) if script.is_relative_to(ROOT) else argv[0]
    env = [f"{key}={os.environ[key]}" for key in THREAD_VARIABLES if key in os.environ]
    commit = _git("rev-parse", "--short", "HEAD")
    if commit is not None and _git("status", "--porcelain", "--", "sdpembed", str(script)):
        commit += "+dirty"
    blas = sorted({info.get("num_threads") for info in threadpool_info() if info.get("user_api") == "blas"})
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "command": " ".join([*env, "python", script_name, *argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": commit,
        "machine": f"{platform.machine()} ({cpu_model()}), {os.cpu_count()} cores, {memory:.0f} GiB, "
                   f"Python {platform.python_version()}",
        # None when threadpoolctl finds no BLAS; a list when several BLAS libraries
        # are loaded with different thread counts (e.g. numpy's and scipy's own).
        "blas_threads": blas[0] if len(blas) == 1 else (blas or None),
        "load_average": [round(v, 2) for v in os.getloadavg()],
        "versions": {name: getattr(sys.modules[name], "__version__", None)
                     for name in VERSIONED if name in sys.modules},
    }


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere, "unknown CPU" if empty).

    Stamped beside every run because the machines of successive sessions differ while their
    architecture and core count do not.
    """
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def best_cpu(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """(least CPU seconds over ``repeat`` calls of ``fn``, the last result)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def write_results(path: str | Path, out: dict, stamp: dict | None = None) -> Path:
    """Write a benchmark's results with its run stamp, then redraw the plots that read the file.

    Parameters
    ----------
    path : str or Path
        The JSON to write.
    out : dict
        The results; ``out["run"]`` is set to ``stamp`` unless the script stamped its parts itself.
    stamp : dict, optional
        The run's :func:`run_stamp` (taken now if not given).
    """
    path = Path(path)
    if "run" not in out or stamp is not None:
        out["run"] = stamp or run_stamp()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2, default=float) + "\n")
    print(f"wrote {path}")
    for spec in sections():
        if path.resolve().parent == RESULTS and path.name in spec.files and spec.plot is not None:
            try:
                pngs = spec.plot(load(spec.files))
            except ModuleNotFoundError as exc:        # matplotlib is the notebooks extra
                print(f"no plot for {spec.name}: {exc}")
                continue
            for png in pngs:
                print(f"wrote {png}")
    return path


# ----------------------------------------------------------------------------- the registry
@dataclass(frozen=True)
class Section:
    """One section of BENCHMARKS.md: its title, the result files it reads, its text and plot."""

    name: str
    title: str
    files: tuple[str, ...]
    order: int
    render: Callable[[dict[str, dict]], str]
    plot: Callable[[dict[str, dict]], list[Path]] | None = None


SECTIONS: dict[str, Section] = {}
SECTION_PACKAGE = "report_sections"
_loaded: list[bool] = []


def sections() -> list[Section]:
    """The registered sections in their order, after importing every module of ``report_sections``."""
    if not _loaded:
        if str(Path(__file__).resolve().parent) not in sys.path:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
        package = importlib.import_module(SECTION_PACKAGE)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            importlib.import_module(f"{SECTION_PACKAGE}.{info.name}")
        _loaded.append(True)
    return sorted(SECTIONS.values(), key=lambda s: (s.order, s.name))


def section(name: str, title: str, *, files: Iterable[str], order: int,
            plot: Callable[[dict[str, dict]], list[Path]] | None = None) -> Callable:
    """Register the decorated ``render(data) -> str`` as the section ``name`` of BENCHMARKS.md."""

    def register(render: Callable[[dict[str, dict]], str]) -> Callable[[dict[str, dict]], str]:
        if name in SECTIONS:
            raise ValueError(f"section {name!r} is registered twice")
        SECTIONS[name] = Section(name, title, tuple(files), order, render, plot)
        return render

    return register


def load(files: Iterable[str], results: Path | None = None) -> dict[str, dict]:
    """The stored JSONs among ``files`` (names in ``results``), by name; missing files are left out."""
    results = RESULTS if results is None else results
    return {name: json.loads((results / name).read_text()) for name in files if (results / name).exists()}


# ----------------------------------------------------------------------------- formatting
def num(value: float | None, digits: int = 3, *, style: str = "g") -> str:
    """A number as BENCHMARKS.md prints it; "–" for a missing one."""
    if value is None or value != value:            # missing or NaN
        return "–"
    if style == "e":
        return f"{value:.1e}"
    if style == "f":
        return f"{value:,.{digits}f}"
    if style == "%":
        return f"{value:.{digits}f}%"
    return f"{value:.{digits}g}"


def gap_cell(value: float | None) -> str:
    """A certified relative gap as BENCHMARKS.md prints it: "–" when no bound was proved, and no number for a
    negative one, which is not a gap: the answer's objective lies beyond the proved bound, so it violates the
    constraints by more than the bound's proof allows."""
    if value is not None and value == value and value < 0:
        return f"none: objective beyond the proved bound by {-value:.1e}"
    return num(value, style="e")


def table(header: Sequence[str], rows: Iterable[Sequence[object]], align: str | None = None) -> str:
    """A Markdown table; ``align`` has one letter per column, ``l`` or ``r`` (default: all ``l``)."""
    align = align or "l" * len(header)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def stamp_of(doc: Mapping, part: str | None = None) -> Mapping | None:
    """The run stamp of a results JSON, or of one of its parts (``stamps[part]``, else ``run``)."""
    return (doc.get("stamps") or {}).get(part) or doc.get("run")


def run_line(run: Mapping | None, fallback: str = "") -> str:
    """The command, date, commit, machine, BLAS threads and load of a stamped run, as one paragraph."""
    if not run:
        return fallback
    threads = run.get("blas_threads")
    load_average = run.get("load_average")
    parts = [f"`{run['command']}`" if run.get("command") else None,
             run.get("date"),
             f"commit {run['commit']}" if run.get("commit") else None,
             f"results stored in commit {run['stored_in_commit']}" if run.get("stored_in_commit") else None,
             run.get("machine"),
             f"BLAS threads {threads}" if threads is not None else None,
             f"load average {load_average[0]:.1f}" if load_average else None]
    text = "Run: " + "; ".join(p for p in parts if p) + "."
    if run.get("note"):
        text += " " + run["note"]
    return text


def image(png: str, alt: str) -> str:
    """A reference to a plot in :data:`PLOTS`, relative to the repository's root."""
    return f"![{alt}]({(PLOTS / png).relative_to(ROOT).as_posix()})"


def figure(title: str, xlabel: str, ylabel: str):
    """A titled matplotlib figure and axes with labels (the Agg back-end: no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def save(fig, png: str) -> Path:
    """Save a figure as ``PLOTS/png`` and close it."""
    import matplotlib.pyplot as plt

    path = PLOTS / png
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)
    return path


# ----------------------------------------------------------------------------- the document
HEADER = """# Benchmarks

<!-- Generated by `python benchmarks/report.py` from benchmarks/results/*.json: do not edit by hand. -->

The current state of every benchmark in `benchmarks/`: one section per script, with the command
that printed its numbers, the date, commit and machine of that run, our number, the peer's number
measured in the same run, and the published number where the paper has one. Speed is compared as
a ratio within one run; the machine is a shared 2-core virtual machine, so absolute times move with
its load (given with each run). Earlier measurements are in the git history of this file.
"""


def render(results: Path | None = None) -> str:
    """BENCHMARKS.md as generated from the JSONs in ``results`` (default :data:`RESULTS`)."""
    parts = [HEADER]
    for spec in sections():
        data = load(spec.files, results)
        body = spec.render(data) if data else "No stored results: run the benchmark."
        parts.append(f"<!-- section: {spec.name} -->\n## {spec.title}\n\n{body.strip()}\n"
                     f"<!-- /section: {spec.name} -->\n")
    return "\n".join(parts)


def plot_all() -> list[Path]:
    """Redraw every section's plots from the stored JSONs."""
    written: list[Path] = []
    for spec in sections():
        data = load(spec.files)
        if spec.plot is not None and data:
            written += spec.plot(data)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if BENCHMARKS.md is not what would be written")
    parser.add_argument("--no-plots", action="store_true", help="do not redraw the plots")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        same = OUTPUT.exists() and OUTPUT.read_text() == text
        print("BENCHMARKS.md is up to date" if same else "BENCHMARKS.md differs: run python benchmarks/report.py")
        return 0 if same else 1
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT}")
    if not args.no_plots:
        for png in plot_all():
            print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    import report  # the registry lives in the module "report", which the sections import

    sys.exit(report.main())
