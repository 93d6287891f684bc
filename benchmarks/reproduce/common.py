"""What every paper module of :mod:`reproduce` shares: configurations, outputs and REPRODUCTION.md.

An experiment is a function ``run(config) -> Outcome`` whose docstring has two sections,
``Paper`` (the published set-up) and ``Departures`` (every way ours differs, one ``-`` item
each); the runner reads both from the docstring, so what the report says is what the code
documents. Each experiment has a full and a quick configuration; the quick run's departures
from the full one are listed automatically.

Results are written per experiment (``benchmarks/results/reproduce/<paper>/<key>.json`` and
``<key>.png``), and ``REPRODUCTION.md`` is rebuilt from every JSON present, so running one
experiment never drops the sections of the others.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import platform
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the benchmarks' run stamp (benchmarks/ is on sys.path, see __init__)
from report import THREAD_VARIABLES, cpu_model, run_stamp

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "reproduce"
REPORT = ROOT / "REPRODUCTION.md"

#: The verdicts of issue 22, and that of a figure whose data are not available and which no stand-in answers.
VERDICTS = ("reproduced", "reproduced in trend", "differs", "not reproduced — data not available")


@dataclass
class Outcome:
    """What one experiment found: the published numbers, ours, and the verdict.

    ``published`` and ``ours`` are Markdown (a table or a list); ``rows`` the raw numbers for
    the JSON; ``verdict`` one of :data:`VERDICTS`; ``agreement`` the sentence that justifies it,
    computed from the numbers; ``figure`` whether a PNG was written.
    """

    published: str
    ours: str
    rows: Any
    verdict: str
    agreement: str
    figure: bool = True
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


@dataclass(frozen=True)
class Experiment:
    """One figure or table: its key (``fig9``), title, function and full and quick configurations; ``premise``
    (optional) a departure read from other stored records of its paper when the report is written,
    ``premise(record, results)`` for this experiment's ``record`` and the paper's results directory: what a reason
    test starts from (its figure's numbers), which a later run of that figure changes without a run of the test."""

    key: str
    title: str
    run: Callable[[dict, Path], Outcome]
    full: dict
    quick: dict
    premise: Callable[[dict, Path], str] | None = None


def docstring_sections(function: Callable) -> dict[str, str]:
    """The ``Paper`` and ``Departures`` sections of a function's docstring (numpy section syntax)."""
    lines = inspect.getdoc(function).splitlines()
    sections, name, body = {}, None, []
    for index, line in enumerate(lines):
        underline = index + 1 < len(lines) and set(lines[index + 1].strip()) == {"-"} and line.strip()
        if underline:
            if name:
                sections[name] = "\n".join(body).strip()
            name, body = line.strip(), []
        elif name and not set(line.strip()) == {"-"}:
            body.append(line)
    if name:
        sections[name] = "\n".join(body).strip()
    missing = {"Paper", "Departures"} - set(sections)
    if missing:
        raise ValueError(f"{function.__name__}'s docstring lacks the section(s) {sorted(missing)}")
    return sections


def quick_departures(experiment: Experiment) -> list[str]:
    """One line per setting in which the quick configuration differs from the full one."""
    return [f"quick run: `{key} = {experiment.quick[key]!r}` instead of the full run's "
            f"`{experiment.full[key]!r}`" for key in experiment.full
            if experiment.quick.get(key) != experiment.full[key]]


def gap_text(run: dict) -> str:
    """A solve's certified relative gap as text (``relative_gap``, or ``gap``, of the record ``run``).

    Only a finite, non-negative gap is a certified one. Where none was proved (the gap missing or
    nan: no finite dual bound) the text says so; where the objective lies above the proved upper
    bound (a negative "gap", MVU maximising) it says what that means: K is not feasible, since no
    feasible K has an objective above the bound (with its ``violation`` of τ, if known).
    """
    gap = run.get("relative_gap", run.get("gap"))
    violation = run.get("violation")
    violated = f" (constraint violation {violation:.1e} of τ)" if violation is not None else ""
    if gap is None or not math.isfinite(gap):
        return "no certified gap: no finite bound was proved" + violated
    if gap < 0.0:
        return f"no certified gap: the objective lies {-gap:.1e} above the proved bound, so K is infeasible" + violated
    return f"certified relative gap {gap:.1e}"


def machine() -> str:
    """The machine's architecture, processor, cores and Python version."""
    return f"{platform.machine()} ({cpu_model()}), {os.cpu_count()} cores, Python {platform.python_version()}"


def parallel_map(function: Callable, items: list, workers: int) -> list:
    """``[function(item) for item in items]``, in ``workers`` forked processes when more than one.

    For experiments made of independent repeats (samples, splits) whose items are drawn before the
    call, so the results do not depend on ``workers``; the children's CPU time is counted by
    :func:`cpu_time` once they have finished.
    """
    if workers <= 1 or len(items) <= 1:
        return [function(item) for item in items]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(min(workers, len(items)), mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(function, items))


def cpu_time() -> float:
    """CPU seconds of this process and of its finished child processes (the time-limited cells run in children)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def conditions(record: dict) -> str:
    """The run conditions of a record: its commit, the BLAS threads and the load at start and end, each said to be
    not recorded where an older record lacks it."""
    start, end = record.get("load_start"), record.get("load_end")
    commit = f"commit {record['commit']}" if record.get("commit") else "commit not recorded"
    if start is None or end is None:
        return f"{commit}, BLAS threads {record.get('blas_threads', 'not recorded')}, load not recorded"
    return (f"{commit}, BLAS threads {record['blas_threads']} (threadpoolctl: {record.get('blas_threads_used', '—')}), "
            f"load average (1/5/15 min) {'/'.join(f'{v:.2f}' for v in start)} at "
            f"the start and {'/'.join(f'{v:.2f}' for v in end)} at the end")


def times(record: dict) -> str:
    """The wall and CPU time of a record's run (CPU with its child processes), or that CPU time was not recorded."""
    cpu = record.get("cpu_time_s")
    return (f"wall time {record['wall_time_s']:.0f} s, "
            + ("CPU time not recorded" if cpu is None else f"CPU time {cpu:.0f} s (with child processes)"))


def run_commit(root: Path = ROOT) -> str | None:
    """The commit a run was made from, ending in ``+dirty`` when the package or any benchmark script differs
    from it (the stored results excepted: the runs write them); None outside a git checkout."""
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30,
                              check=False)

    try:
        head = git("rev-parse", "--short", "HEAD")
        if head.returncode != 0:
            return None
        changed = git("status", "--porcelain", "--", "sdpembed", "benchmarks", ":(exclude)benchmarks/results")
    except OSError:
        return None
    return head.stdout.strip() + ("+dirty" if changed.returncode != 0 or changed.stdout.strip() else "")


def command_line(paper: str, key: str, quick: bool, overrides: dict | None = None) -> str:
    """The command that repeats one run: its BLAS thread variables (those set, ``OPENBLAS_NUM_THREADS`` always),
    the paper, the experiment, ``--quick`` and every ``--set`` (its value as JSON, the form the runner reads)."""
    env = [f"{name}={os.environ.get(name, '<default>')}" for name in THREAD_VARIABLES
           if name == "OPENBLAS_NUM_THREADS" or name in os.environ]
    settings = [f"--set {shlex.quote(f'{name}={json.dumps(value)}')}" for name, value in (overrides or {}).items()]
    return " ".join([*env, "python benchmarks/reproduce.py", f"--paper {paper} --only {key}",
                     *(["--quick"] if quick else []), *settings])


def run_experiment(paper: str, experiment: Experiment, quick: bool, overrides: dict | None = None,
                   results: Path = RESULTS) -> dict:
    """Run one experiment, write its JSON (and its PNG, written by the experiment) and return the record."""
    config = dict(experiment.quick if quick else experiment.full)
    unknown = set(overrides or {}) - set(config)
    if unknown:
        raise ValueError(f"unknown setting(s) {sorted(unknown)} for {paper} {experiment.key}; "
                         f"choose from {sorted(config)}")
    config.update(overrides or {})
    out_dir = results / paper
    out_dir.mkdir(parents=True, exist_ok=True)
    sections = docstring_sections(experiment.run)
    print(f"[{paper} {experiment.key}] {experiment.title} ({'quick' if quick else 'full'})", flush=True)
    stamp = run_stamp([str(ROOT / "benchmarks" / "reproduce.py")])     # BLAS threads, load, versions
    commit = run_commit()                                               # the code as it was at the start
    start, cpu_start = time.perf_counter(), cpu_time()
    outcome = experiment.run(config, out_dir / f"{experiment.key}.png")
    wall, cpu = time.perf_counter() - start, cpu_time() - cpu_start
    load_end = run_stamp([str(ROOT / "benchmarks" / "reproduce.py")])["load_average"]
    departures = sections["Departures"]
    listed = quick_departures(experiment) if quick else []
    listed += [f"setting changed for this run: `{k} = {v!r}`" for k, v in (overrides or {}).items()
               if experiment.quick.get(k) != v]
    if listed:
        departures += "\n" + "\n".join(f"- {line}" for line in listed)
    record = {
        "paper": paper, "key": experiment.key, "title": experiment.title, "mode": "quick" if quick else "full",
        "config": config, "paper_setup": sections["Paper"], "departures": departures,
        "published": outcome.published, "ours": outcome.ours, "rows": outcome.rows, "verdict": outcome.verdict,
        "agreement": outcome.agreement, "figure": f"{experiment.key}.png" if outcome.figure else None,
        "extra": outcome.extra, "wall_time_s": wall, "cpu_time_s": cpu,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(), "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
        "blas_threads_used": stamp["blas_threads"], "load_start": stamp["load_average"], "load_end": load_end,
        "commit": commit, "versions": stamp["versions"],
        "command": command_line(paper, experiment.key, quick, overrides),
    }
    (out_dir / f"{experiment.key}.json").write_text(json.dumps(record, indent=2, default=float) + "\n")
    print(f"[{paper} {experiment.key}] {outcome.verdict}: {outcome.agreement} ({wall:.0f} s)", flush=True)
    return record


def section(record: dict, results: Path, report: Path = REPORT) -> str:
    """The Markdown section of one experiment (its figure linked relative to the report)."""
    rel = os.path.relpath(results / record["paper"], report.resolve().parent)
    figure = f"\n![{record['title']}]({rel}/{record['figure']})\n" if record.get("figure") else ""
    return "\n".join([
        f"### {record['title']} — *{record['verdict']}*", "",
        f"Run: {record['mode']}, `{record['command']}`, {record['date']}, {record['machine']}, "
        f"{conditions(record)}; {times(record)}.", "",
        "**The paper's set-up.** " + record["paper_setup"], "",
        "**Departures.**", "", record["departures"], "",
        "**Published.**", "", record["published"], "",
        "**Ours.**", "", record["ours"], figure,
        f"**Verdict: {record['verdict']}.** {record['agreement']}", "",
    ])


def write_report(papers: dict[str, Any], results: Path = RESULTS, report: Path = REPORT) -> Path:
    """Rebuild REPRODUCTION.md from every stored experiment JSON, in each paper's order."""
    parts = [
        "# Reproducing the papers' experiments",
        "",
        "Generated by `python benchmarks/reproduce.py --paper PAPER [--only KEYS] [--quick]` from the JSON "
        "in `benchmarks/results/reproduce/`; do not edit by hand. Each section gives the paper's set-up, "
        "every departure from it, the published numbers beside ours, and a verdict: *reproduced*, "
        "*reproduced in trend* (ordering and shape, not values) or *differs* (with the reason and the "
        "experiment that tests it). A quick run is a reduced run, its reductions listed among the "
        "departures.",
        "",
    ]
    for name, module in papers.items():
        parts += [f"## {module.TITLE}", "", module.DATA_NOTE, ""]
        missing = []
        for experiment in module.EXPERIMENTS:
            path = results / name / f"{experiment.key}.json"
            if path.exists():
                record = json.loads(path.read_text())
                if experiment.premise is not None:
                    record["departures"] = f"- {experiment.premise(record, results / name)}\n{record['departures']}"
                parts.append(section(record, results, report))
            else:
                missing.append(experiment.title)
        if missing:
            parts += ["Not run yet (no stored result): " + "; ".join(missing) + ".", ""]
        if module.NOT_IMPLEMENTED:
            parts += ["Experiments of this paper without a function yet: " + "; ".join(module.NOT_IMPLEMENTED)
                      + ".", ""]
        if getattr(module, "NOT_EXPERIMENTS", None):
            parts += ["Numbered figures and tables of this paper that report no experiment: "
                      + "; ".join(module.NOT_EXPERIMENTS) + ".", ""]
    report.write_text("\n".join(parts).rstrip() + "\n")
    return report
