"""BENCHMARKS.md: MVU out-of-sample placement (``benchmarks/mvu_oos.py``)."""

from __future__ import annotations

from pathlib import Path

from report import figure, image, num, run_line, save, section, stamp_of, table

FILE = "mvu_oos.json"
PNG = "mvu_oos.png"
# Weinberger's thesis: about 10 ms to place one new point by the SDP (3.31)
PUBLISHED_MS_PER_POINT = 10.0


def plot(data: dict[str, dict]) -> list[Path]:
    rows = data[FILE]["speed"]["rows"]
    fig, ax = figure("MVU out-of-sample: time per new point", "ms per point (log scale)", "")
    ax.barh([r["method"] for r in rows] + ["published (thesis)"],
            [r["ms_per_point"] for r in rows] + [PUBLISHED_MS_PER_POINT],
            color=["C1" if "peer" in r["method"] else "C0" for r in rows] + ["C2"])
    ax.set_xscale("log")
    ax.invert_yaxis()
    return [save(fig, PNG)]


@section("mvu_oos", "MVU out-of-sample placement", files=(FILE,), order=60, plot=plot)
def render(data: dict[str, dict]) -> str:
    doc = data[FILE]
    speed = doc["speed"]
    rows = [(r["method"], num(r["ms_per_point"], 3, style="f"), num(r["ratio_to_place_points"], 3, style="f"),
             f"{r['certified']:,} certified, worst gap {r['max_relative_gap']:.1e}" if "certified" in r else
             (f"{r['points']} points, objectives within {r['max_relative_objective_difference']:.1e}"
              if "points" in r else ""))
            for r in speed["rows"]]
    methods = [r["method"] for r in doc["consistency"][0]["rows"]]
    consistency = [(c["dataset"], *(num(r["harmonic_mean_ratio"], 3, style="f") for r in c["rows"]),
                    ", ".join(f"{v} {k}" for k, v in c["mvu_statuses"].items())) for c in doc["consistency"]]
    c0 = doc["consistency"][0]
    return f"""{run_line(stamp_of(doc))}

**Speed.** A {speed['n_train']:,}-point swiss roll embedded by variational MVU; {speed['n_new']:,} new
points, k = {speed['k']}. The neighbour search adds {speed['neighbour_search_ms_per_point']:.3f} ms per point
for every method. Peer: CVXPY + Clarabel on the same SDP (3.31) for a subset of the points. Published:
the thesis reports about {PUBLISHED_MS_PER_POINT:g} ms per point.

{table(("method", "ms / point", "time / place_points", "check"), rows, "lrrl")}

**Weinberger's Fig. 3.23 analogue.** Consistency (3.34), harmonic mean over {c0['trials']} random
A ∪ B ∪ C splits of {c0['n']} points (|C| = {c0['n_c']}), {c0['variant']} MVU (k = {c0['k']}) for the
embeddings; lower is better. The figure has no numbers to put beside these.

{table(("data", *methods, "MVU solves"), consistency, "l" + "r" * len(methods) + "l")}

{image(PNG, "Milliseconds per placed point for each method")}
"""
