"""BENCHMARKS.md: NuMax's ADMM against CVXPY (``benchmarks/numax_vs_cvxpy.py``)."""

from __future__ import annotations

from pathlib import Path

from report import figure, image, num, run_line, save, section, stamp_of, table

FILE = "numax_vs_cvxpy.json"
PNG = "numax_vs_cvxpy.png"


def plot(data: dict[str, dict]) -> list[Path]:
    from matplotlib.patches import Patch

    rows = data[FILE]["rows"]
    fig, ax = figure("NuMax, translating squares (S = 1000, δ = 0.1)", "wall time [s] (log scale)", "")
    labels = [f"{r['label']} ({r['status']})" for r in rows]
    ax.barh(labels, [r["time_s"] for r in rows], color=["C0" if r["label"].startswith("admm") else "C1" for r in rows])
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.legend(handles=[Patch(color="C0", label="ours (ADMM)"), Patch(color="C1", label="peer (CVXPY)")])
    return [save(fig, PNG)]


@section("numax_vs_cvxpy", "NuMax: the ADMM against CVXPY", files=(FILE,), order=10, plot=plot)
def render(data: dict[str, dict]) -> str:
    doc = data[FILE]
    rows = [(r["label"], r["status"], num(r["time_s"], 2, style="f"), num(r["ratio_to_admm"], 1, style="f"),
             num(r["objective"], 8, style="f"), num(r["relative_error"], style="e"),
             num(r["max_violation"], style="e"), num(r["min_eigenvalue"], style="e"),
             num(r["relative_gap"], style="e")) for r in doc["rows"]]
    return f"""{run_line(stamp_of(doc))}

Instance: {doc['instance']}. Reference optimum {doc['reference_optimum']:.8f} ({doc['reference_source']}).
Ours: the hand-written ADMM (Algorithm 1, median of its repetitions); peer: CVXPY with SCS in the
same run. A status is `optimal` only when sdpembed's own certificate agrees. The paper publishes no
number for this instance.

{table(("method", "status", "time [s]", "time / admm", "objective", "rel. error", "violation", "least eig",
        "certified gap"), rows, "llrrrrrrr")}

{image(PNG, "Wall time of each method on the translating-squares instance")}
"""
