"""BENCHMARKS.md: LMNN against metric-learn and pylmnn (``benchmarks/lmnn_peers.py``)."""

from __future__ import annotations

from pathlib import Path
from statistics import median

from report import figure, gap_cell, image, num, run_line, save, section, stamp_of, table

FILE, ALTERNATED, THESIS = "lmnn_peers.json", "lmnn_alternated.json", "lmnn_thesis_scale.json"
PNG = "lmnn_peers.png"
OURS = "sdpembed (fast)"


def plot(data: dict[str, dict]) -> list[Path]:
    rows = [r for r in data[FILE]["rows"] if r.get("seconds") is not None]
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    fig, ax = figure("LMNN: fit time per data set (one BLAS thread)", "data set", "time [s] (log scale)")
    width = 0.8 / len(methods)
    for i, method in enumerate(methods):
        xs = [j + i * width for j, d in enumerate(datasets) if any(r["dataset"] == d and r["method"] == method
                                                                    for r in rows)]
        ys = [r["seconds"] for d in datasets for r in rows if r["dataset"] == d and r["method"] == method]
        ax.bar(xs, ys, width, label="ours" if method == OURS else method)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(datasets))], datasets)
    ax.set_yscale("log")
    ax.legend()
    return [save(fig, PNG)]


def alternated(doc: dict) -> str:
    runs = [r for r in doc["runs"] if r.get("cpu_seconds") is not None]
    lines = []
    for dataset in dict.fromkeys(r["dataset"] for r in runs):
        ours = {r["round"]: r for r in runs if r["dataset"] == dataset and r["method"] == "ours"}
        for peer in dict.fromkeys(r["method"] for r in runs if r["method"] != "ours"):
            theirs = {r["round"]: r for r in runs if r["dataset"] == dataset and r["method"] == peer}
            rounds = sorted(set(ours) & set(theirs))
            if not rounds:
                continue
            faster = sum(ours[k]["cpu_seconds"] < theirs[k]["cpu_seconds"] for k in rounds)
            lines.append((dataset, peer, len(rounds),
                          " / ".join(f"{ours[k]['cpu_seconds']:.2f}" for k in rounds),
                          " / ".join(f"{theirs[k]['cpu_seconds']:.2f}" for k in rounds),
                          num(median(theirs[k]["cpu_seconds"] / ours[k]["cpu_seconds"] for k in rounds), 2, style="f"),
                          f"{faster} of {len(rounds)}"))
    where = ("each run in a fresh process, ours as the peers'" if doc.get("ours_process") == "fresh"
             else "ours in the benchmark's own process, the peers each in a fresh one")
    kernels = sorted({str(r["blas"]) for r in runs if r["method"] != "ours" and r.get("blas")})
    blas = (f" OpenBLAS kernels: ours {doc['ours_blas']}, the peers' {', '.join(kernels)} (`OPENBLAS_CORETYPE` set to"
            " ours: their older OpenBLAS would run generic kernels on a CPU it does not know)."
            if doc.get("ours_blas") and kernels else "")
    return f"""**Back to back.** {run_line(stamp_of(doc))} Ours and each peer alternated, the order rotating every
round, so that both see the same load; {where}; CPU time (every method runs single-threaded).{blas}

{table(("data", "peer", "rounds", "ours, CPU [s]", "peer, CPU [s]", "median peer / ours", "ours faster"), lines,
       "llrllrr")}
"""


def percent(value: float | None) -> str:
    return num(100 * value, 2, style="%") if value is not None else "–"


def thesis_scale(doc: dict) -> str:
    """The MNIST rows at the thesis' scale (7,000 training images, PCA-164 and PCA-50), beside the thesis' errors."""
    rows = [(r["dataset"], f"{r['n_train']:,} × {r['dim']}", "**ours**" if r["method"] == OURS else r["method"],
             r["status"], num(r.get("seconds"), 1, style="f"), num(r.get("cpu_seconds"), 1, style="f"),
             num(r.get("cpu_ratio_to_ours"), 2), str(r.get("rounds", "–")),
             f"{r['active']:,}" if r.get("active") is not None else "–", gap_cell(r.get("relative_gap")),
             percent(r.get("knn_error")), percent(r.get("energy_error")))
            for r in doc["rows"]]
    thesis = doc["thesis"]
    return f"""**At the thesis' scale.** {run_line(stamp_of(doc))}

Split: {doc['split']}; k = {doc['k']}, μ = {doc['mu']}; time limit {doc['time_limit_s']:g} s (wall) per method:
ours starts no working-set round and no Newton step after it and reports the certified gap of the
multipliers reached; a peer is killed. The thesis trained on all {thesis['n_train']:,} MNIST training
images, PCA to {thesis['dim']} dimensions: LMNN 3-NN test error {percent(thesis['knn_error'])}, energy-based
{percent(thesis['energy_error'])}; these rows train on 7,000 and test on 3,000 held-out images, which are not
deskewed (the thesis deskewed its images; REPRODUCTION.md's Table 2.1 MNIST row does, for the comparison of errors:
these rows measure time at the thesis' size). Active: triplets with a positive hinge at the returned metric.

{table(("data", "train × dim", "method", "status", "time [s]", "CPU [s]", "CPU / ours", "rounds", "active",
        "certified gap", "3-NN test error", "energy test error"), rows, "lllllrrrrrrr")}
"""


def superseded_text(doc: dict, alternated_doc: dict | None) -> str:
    """Says that this table's times are its own run's when the back-to-back run is later: the speed ratios
    are measured there, each method in a fresh process, alternated under the same load."""
    if alternated_doc is None or alternated_doc["run"]["date"] <= doc["run"]["date"]:
        return ""
    return (f" The times in this table are those of its run (commit {doc['run'].get('commit') or 'not recorded'}, "
            f"load average {doc['run']['load_average'][0]:.1f}); the speed of ours against the peers is measured "
            f"again, later and back to back, in the next table, which supersedes these ratios.")


@section("lmnn_peers", "LMNN against metric-learn and pylmnn", files=(FILE, ALTERNATED, THESIS), order=40,
         plot=plot)
def render(data: dict[str, dict]) -> str:
    text = ""
    if FILE in data:
        doc = data[FILE]
        rows = [(r["dataset"], "**ours**" if r["method"] == OURS else r["method"], r["status"],
                 num(r.get("seconds"), 2, style="f"), num(r.get("time_ratio_to_ours"), 2),
                 num(r.get("objective"), 8), num(r.get("objective_ratio_to_ours"), 5),
                 gap_cell(r.get("relative_gap")),
                 num(100 * r["knn_error"], 2, style="%") if r.get("knn_error") is not None else "–")
                for r in doc["rows"]]
        peers = sorted({f"{r['method']} {r['version']} (scikit-learn {r['sklearn']})"
                        for r in doc["rows"] if r.get("version")})
        text += f"""{run_line(stamp_of(doc))}

Split: {doc['split']}; k = {doc['k']}, μ = {doc['mu']}. Ours: `solve_lmnn_fast` at interior-point tolerance
{doc['ours_tol']:g}, `optimal` meaning a certified relative gap within the solver's `gap_tol`. Peers, run in
their own virtualenv in the same run: {', '.join(peers) or 'not installed'}. Objective: {doc['objective_note']}.
The LMNN papers publish no number for these splits.{superseded_text(doc, data.get(ALTERNATED))}

{table(("data", "method", "status", "time [s]", "time / ours", "objective (2.11)", "/ ours", "certified gap",
        "3-NN test error"), rows, "lllrrrrrr")}
"""
    if ALTERNATED in data:
        text += "\n" + alternated(data[ALTERNATED])
    if THESIS in data:
        text += "\n" + thesis_scale(data[THESIS])
    return text + f"\n{image(PNG, 'LMNN fit time of ours and the peers on each data set')}\n"
