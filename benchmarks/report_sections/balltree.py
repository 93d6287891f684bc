"""BENCHMARKS.md: ball trees for LMNN's target neighbours and active hinges (``benchmarks/balltree.py``)."""

from __future__ import annotations

from report import num, run_line, section, stamp_of, table

FILE = "balltree.json"


def _crossover(rows: list[dict], key: str) -> str:
    """The largest r up to which the ball tree is faster (ratio > 1) at every smaller r, in words."""
    faster = [r["r"] for r in sorted(rows, key=lambda r: r["r"])]
    last = None
    for r, row in zip(faster, sorted(rows, key=lambda r: r["r"]), strict=True):
        if row[key] <= 1.0:
            break
        last = r
    return "at no measured r" if last is None else f"up to r = {last}"


@section("balltree", "Ball trees for LMNN's searches", files=(FILE,), order=42)
def render(data: dict[str, dict]) -> str:
    doc = data[FILE]
    target_rows = [(r["r"], num(r["brute_cpu_s"], 3, style="f"), num(r["balltree_cpu_s"], 3, style="f"),
                    num(r["ratio"], 2, style="f"), "yes" if r["same"] else "**no**") for r in doc["targets"]]
    hinge_rows = [(r["r"], num(r["scale"], 3), f"{r['active']:,}", num(r["brute_cpu_s"], 3, style="f"),
                   num(r["radius_cpu_s"], 3, style="f"), num(r["balltree_cpu_s"], 3, style="f"),
                   num(r["ratio"], 2, style="f"), num(r["ratio_radius"], 2, style="f"),
                   "yes" if r["same"] else "**no**") for r in doc["hinges"]]
    by_scale = {}
    for row in doc["hinges"]:
        by_scale.setdefault(row["scale"], []).append(row)
    words = "; ".join(f"mean target distance² {num(s, 3)}: faster than the brute-force scan "
                      f"{_crossover(rows, 'ratio')}, faster than the radius filter {_crossover(rows, 'ratio_radius')}"
                      for s, rows in by_scale.items())
    triplets = doc["hinges"][0]["triplets"] if doc["hinges"] else 0
    return f"""{run_line(stamp_of(doc))}

Thesis Sec. 2.1.8 (Fig. 2.13, 2.16): ball trees find target neighbours and active hinges (2.20) faster
in few dimensions. {doc["n"]:,} vendored MNIST test images, projected onto their r leading principal
components, k = {doc["k"]} ({triplets:,} triplets); CPU time, best of {doc["repeat"]}, each search of a row
in the same process one after the other. The ball trees are scikit-learn's `BallTree`, one per class
(`sdpembed.graphs.balltree`); every answer is compared with the brute-force one ("same").

Target neighbours — brute force (`target_neighbors`, Gram blocks per class) against the trees; ratio =
brute / tree (> 1: the tree is faster):

{table(("r", "brute CPU s", "ball tree CPU s", "ratio", "same"), target_rows, "rrrrl")}

Active hinges at M = I, the data scaled to the mean target distance² in the column "scale" (the
hinge count depends on the scale against the unit margin, the thesis' remark after Fig. 2.16):
the brute-force scan over all triplets (`impostor_triplets`), the float32 Gram radius filter the LMNN
solvers use (`radius_hinges`) and the ball trees (`balltree_hinges`); "vs brute" = brute / tree,
"vs radius" = radius / tree (> 1: the tree is faster).

{table(("r", "scale", "active", "brute CPU s", "radius CPU s", "ball tree CPU s", "vs brute", "vs radius",
        "same"), hinge_rows, "rrrrrrrrl")}

Crossover of the hinge search — {words}. {_verdict(doc["hinges"])} Target neighbours are found once
per fit and cost little either way; `LMNN` keeps the brute-force search.
"""


def _verdict(rows: list[dict]) -> str:
    """What the measurements say about the choice of `search="auto"` (the radius filter)."""
    wins = sorted({(r["r"], r["scale"]) for r in rows if r["ratio_radius"] > 1.0})
    if not wins:
        return ("The ball trees beat the radius filter in no row, so `LMNN(method=\"rectangular\")` finds its "
                "active triplets with the radius filter (`search=\"auto\"`) and offers the trees as "
                "`search=\"balltree\"`.")
    listed = ", ".join(f"r = {r} (scale {num(scale, 3)})" for r, scale in wins)
    return (f"The ball trees beat the radius filter at {listed}; `search=\"auto\"` still takes the radius "
            "filter, the faster one in the other rows.")
