"""BENCHMARKS.md: the linear-embedding family (``benchmarks/linear_family.py``)."""

from __future__ import annotations

from pathlib import Path

from report import figure, image, num, run_line, save, section, table

FILE, NUMAX = "linear_family.json", "numax_mnist_table3.json"
PNG = "linear_family.png"
DELTAS = (0.05, 0.1, 0.2)


def cell(row: dict | None) -> str:
    """The dimension of a row: "t/l" stopped by its time limit, "mem" by its memory limit, "–" not reached."""
    if row is None:
        return "–"
    if row.get("dim") is not None:
        return str(row["dim"])
    return {"time limit": "t/l", "memory limit": "mem"}.get(row.get("status"), "–")


def numax_rows(data: dict[str, dict]) -> list[dict]:
    """NuMax-CG on MNIST-800: the numax_mnist benchmark's rows (the script reads the same file)."""
    if NUMAX not in data:
        return []
    return [{"method": "NuMax", "delta": r["delta"], "measure": "rip", "dim": r["rank"], "fit_s": r["time_s"],
             "status": r["status"]} for r in data[NUMAX]["table3"]["rows"]]


def dims(rows: list[dict], published: dict | None = None) -> list[tuple]:
    index = {(r["method"], r["delta"], r["measure"]): r for r in rows}
    out = []
    for method in dict.fromkeys(r["method"] for r in rows):
        rip = " / ".join(cell(index.get((method, d, "rip"))) for d in DELTAS)
        adagio = " / ".join(cell(index.get((method, d, "adagio"))) for d in DELTAS)
        fit = index.get((method, 0.1, "rip"))
        line = [method, rip, adagio, num(fit.get("fit_s") if fit else None, 3)]
        if published is not None:
            cells = published.get(method, {})
            line += [" / ".join(str(cells.get(str(d), [None])[0] or "–") for d in DELTAS),
                     num((cells.get("0.1") or [None, None])[1], 4)]
        out.append(tuple(line))
    return out


def part_line(part: dict) -> str:
    return run_line({k: v for k, v in part.items() if k not in ("rows", "setup")})


def cells(rows: list[dict], key: str):
    """(value of ``key``, δ, {method: row}) for each cell of a Luo et al. table, in the rows' order."""
    for value in dict.fromkeys(r[key] for r in rows):
        for delta in dict.fromkeys(r["delta"] for r in rows if r[key] == value):
            yield value, delta, {r["method"]: r for r in rows if r[key] == value and r["delta"] == delta}


def rank_time(row: dict | None) -> str:
    return f"{cell(row)} ({num((row or {}).get('fit_s'), 3)})"


def _stopped(step: dict) -> str:
    """What ended a failed run of a rank search, in a few words."""
    message = step["message"]
    if "stall at the working-set cap" in message:
        return "stall at the cap"
    if "round forecast" in message:
        return "round forecast"
    if "would need about" in message:
        return "run forecast"
    if "shrank by less than 1%" in message:
        return "no progress (1% rule)"
    if "max_iter" in message:
        return "iteration budget"
    return step["status"]


def rank_search(rows: list[dict], stamps: dict[str, dict]) -> str:
    """Per FroMax/NILE-Pro RA cell: rank found, δ reached, CPU and wall seconds, load, the runs per
    rank and what stopped each failed rank."""
    lines = []
    for row in rows:
        if "steps" not in row and row.get("status") != "time limit":
            continue
        stamp = stamps.get(f"{row['method']} {row['delta']:g}", {})
        loads = [(stamp.get(key) or [None])[0] for key in ("load_average", "load_average_end")]
        steps = row.get("steps", [])
        runs = ", ".join(f"{rank}×{count}" if count > 1 else rank
                         for rank, count in row.get("attempts_per_rank", {}).items())
        failed = "; ".join(f"{s['start_rank']}: {_stopped(s)} at {s['iterations']} its ({num(s['cpu_s'], 3)} s)"
                           for s in steps if s["status"] != "converged")
        if row.get("status") == "time limit":
            failed = f"stopped by its {row.get('note', 'time limit')} (wall clock unless marked CPU)"
        start = "NuMax's rank" if row.get("initial_rank") == "from_numax" else "PCA rank"
        lines.append((row["method"], row["delta"], start, cell(row), num(row.get("train_delta"), 6),
                      num(row.get("search_cpu_s"), 0, style="f"), num(row.get("search_s"), 0, style="f"),
                      " → ".join(num(v, 2) for v in loads), row.get("iterations", "–"), runs or "–", failed or "–"))
    if not lines:
        return ""
    return table(("method", "δ", "R₀", "rank", "δ reached", "CPU [s]", "wall [s]", "load start → end", "iterations",
                  "ranks tried (in order)", "failed ranks: what stopped them (iterations, CPU)"), lines,
                 "lrlrrrrlrll")


def reruns(stamps: dict[str, dict]) -> str:
    """The cells re-run with ``--methods``, each with its command, date and load."""
    rows = [(label, f"`{stamp['command']}`", stamp["date"], num((stamp.get("load_average") or [None])[0], 2))
            for label, stamp in stamps.items()]
    return table(("cells", "command", "date", "load average"), rows, "lllr")


def plot(data: dict[str, dict]) -> list[Path]:
    doc = data[FILE]
    rows = [r for r in doc["mnist"]["rows"] if r["method"] != "NuMax"] + numax_rows(data)
    fig, ax = figure("800 MNIST images: dimension needed for δ (RIP (2))", "isometry constant δ", "dimension M")
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = sorted((r for r in rows if r["method"] == method and r["measure"] == "rip" and r.get("dim")),
                      key=lambda r: r["delta"])
        if mine:
            ax.plot([r["delta"] for r in mine], [r["dim"] for r in mine], "o-", label=method)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return [save(fig, PNG)]


@section("linear_family", "The linear-embedding family", files=(FILE, NUMAX), order=70, plot=plot)
def render(data: dict[str, dict]) -> str:
    doc = data[FILE]
    mnist = doc["mnist"]
    mnist_rows = [r for r in mnist["rows"] if r["method"] != "NuMax"] + numax_rows(data)
    search = rank_search([r for r in mnist["rows"] if r["method"] in ("FroMax", "NILE-Pro")], mnist.get("reruns", {}))
    if search:
        search = f"""**The rank searches of FroMax RA and NILE-Pro RA** (Luo et al., Algorithm 3 over column
generation; the re-run cells below with their stamps). R₀: the first rank, the PCA rank (the least at
which the scaled principal directions meet δ) or NuMax's rank (`initial_rank="from_numax"`: NuMax-CG solved
first, at δ(1 − 10⁻³), its time in the cell's; a rank at which a map meeting δ exists). The search
below R₀ is the one of the run's code (rank_adjust's docstring, "The rank search"). CPU seconds of the
cell's process (one BLAS thread); wall seconds depend on the load. Ranks tried in order (×k: k runs
at that rank); a failed rank was given up by the forecast of its run, of its column-generation rounds,
by the stall rule at FroMax's working-set cap, by the 1% rule or by the iteration budget
(rank_adjust's docstring, "Failing fast"); the rank found is the lowest that met δ on all pairs, not
an optimum.

{search}
"""
    text = f"""The dimension M each method needs for an isometry constant δ on **all** training secants, from
`embed(method, X, delta=δ)` (a bisection on M for the methods without a native δ; one seeded draw per M
for the random maps and ADAGIO's JL half). Two measures: NuMax's RIP (2) on squared norms and ADAGIO's
distortion (3). FroMax and NILE-Pro are rank adjustment (Luo et al., Algorithm 3): their M is the lowest
rank at which the run met δ on every secant, not an optimum. "–": not reached at any M ≤ N; "t/l":
stopped by the time limit. Time: one fit at δ = 0.1 (for FroMax, NILE-Pro and NuMax, the whole solve).

**ADAGIO Table 3 — MNIST.** {part_line(mnist)} {mnist['setup']}. NuMax-CG's row is the numax_mnist
section's run. Published: ADAGIO's Table 3 (under (3), except NuMax's rank, under (2)).

{table(("method", "M at δ = 0.05 / 0.1 / 0.2, RIP (2)", "M, ADAGIO's (3)", "fit time at δ = 0.1 [s]",
        "published M", "published time at δ = 0.1 [s]"), dims(mnist_rows, mnist.get("published_table3", {})),
       "llllll")}

{search}
Cells re-run alone, with other limits (their rows replace those of the run above):

{reruns(mnist.get("reruns", {}))}

**Translating squares.** {part_line(doc['squares'])} {doc['squares']['setup']}. No
published numbers for this data.

{table(("method", "M at δ = 0.05 / 0.1 / 0.2, RIP (2)", "M, ADAGIO's (3)", "fit time at δ = 0.1 [s]"),
       dims(doc['squares']['rows']), "llll")}
"""
    if "rerun" in doc["squares"]:
        rerun = doc["squares"]["rerun"]
        text += f"\nCells re-run alone:\n\n{reruns({', '.join(rerun['methods']): rerun})}\n"
    if "luo_table7_1" in doc:
        part = doc["luo_table7_1"]
        lines = []
        for data_name, delta, by in cells(part["rows"], "data"):
            fro, nile = by.get("FroMax", {}), by.get("NILE-Pro", {})
            lines.append((f"{data_name}, {by['NuMax']['n_images']} images", delta,
                          f"{cell(by['NuMax'])} / {fro.get('published_rank', '–')}", num(by["NuMax"].get("fit_s"), 3),
                          f"{num(fro.get('fit_s'), 2)} / {num(fro.get('published_s'), 4)}",
                          f"{num(nile.get('fit_s'), 2)} / {num(nile.get('published_s'), 4)}",
                          rank_time(by.get("FroMax RA")), rank_time(by.get("NILE-Pro RA"))))
        text += f"""
**Luo et al. Table 7.1 analogue.** {part_line(part)} {part['setup']}. FroMax and
NILE-Pro run at NuMax's rank; published: the paper's NuMax rank and times (Intel i5-650), for images
drawn its own way, so ranks differ.

{table(("data", "δ", "NuMax rank, ours / published", "NuMax [s]", "FroMax at that rank [s], ours / published",
        "NILE-Pro at that rank [s], ours / published", "FroMax RA rank (s)", "NILE-Pro RA rank (s)"), lines,
       "lrllllll")}
"""
    if "luo_table7_2" in doc:
        part = doc["luo_table7_2"]
        lines = [(n, delta, *(rank_time(by.get(m)) for m in ("NuMax", "FroMax RA", "NILE-Pro RA")))
                 for n, delta, by in cells(part["rows"], "n_images")]
        text += f"""
**Luo et al. Table 7.2 analogue (ours only).** {part_line(part)} {part['setup']}
Rank (seconds).

{table(("images", "δ", "NuMax", "FroMax RA", "NILE-Pro RA"), lines, "rrlll")}
"""
    return text + f"\n{image(PNG, 'Dimension needed for each δ on MNIST, per method')}\n"
