"""BENCHMARKS.md: start-up of the command line (``benchmarks/startup.py``, issue 26)."""

from __future__ import annotations

from pathlib import Path

from report import figure, image, num, run_line, save, section, stamp_of, table

FILE = "startup.json"
PNG = "startup.png"


def plot(data: dict[str, dict]) -> list[Path]:
    rows = data[FILE]["startup"]
    fig, ax = figure("Start-up against `import numpy` (CPU time)", "CPU seconds (median)", "")
    ax.barh([r["command"] for r in rows], [r["cpu_s"] for r in rows],
            color=["C2" if "numpy" in r["command"] else "C0" for r in rows])
    ax.invert_yaxis()
    return [save(fig, PNG)]


def fallback(doc: dict) -> str:
    """The run line of a result stored before the scripts stamped their runs."""
    machine = doc.get("machine", {})
    load = machine.get("load_average") or [float("nan")]
    return (f"Run: `OPENBLAS_NUM_THREADS=1 python benchmarks/startup.py --repeat 5`; {doc.get('date', '')}; "
            f"{machine.get('cpus', '?')} cores, Python {machine.get('python', '?')}; BLAS threads 1; "
            f"load average {load[0]:.1f} (a loaded machine: wall times are inflated).")


@section("startup", "Start-up of the command line", files=(FILE,), order=90, plot=plot)
def render(data: dict[str, dict]) -> str:
    doc = data[FILE]
    rows = [(f"`{r['command']}`", num(r["cpu_s"], 3, style="f"), num(r["cpu_vs_numpy"], 2, style="f"),
             num(r["median_s"], 3, style="f"), num(r["vs_numpy"], 2, style="f")) for r in doc["startup"]]
    run = doc.get("suite_run")
    suite = "" if not run else (
        f"\n**Our own solver over the reference suite** (`sdpembed suite run`, one process per instance): "
        f"{run['passed']}/{run['total']} passed in {run['wall_s']:.1f} s wall, {run['cpu_s']:.1f} s CPU; the same "
        f"solves in one process take {run['in_process_cpu_s']:.1f} s CPU, so the rest is the start-up of the "
        f"{run['total']} solving processes. Target (issue 26): ≤ 30 s.\n")
    return f"""{run_line(stamp_of(doc), fallback(doc))}

Median of the repetitions, each in a fresh interpreter with bytecode cached; the peer is
`python -c "import numpy"` in the same run. Target (issue 26): ≤ 0.3 s and ≤ 2× `import numpy`.
CPU time is the comparable number on a loaded machine; wall time is shown beside it.

{table(("command", "CPU s", "CPU ÷ numpy", "wall s", "wall ÷ numpy"), rows, "lrrrr")}
{suite}
{image(PNG, "CPU seconds of each start-up against import numpy")}
"""
