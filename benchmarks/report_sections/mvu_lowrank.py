"""BENCHMARKS.md: exact MVU at scale, low rank against the interior point (``benchmarks/mvu_lowrank.py``, issue 25)."""

from __future__ import annotations

from report import gap_cell, num, run_line, section, stamp_of, table

FILE = "mvu_lowrank.json"
SLACK_FILE = "mvu_lowrank_slack.json"
CROSSOVER_FILE = "mvu_lowrank_crossover.json"
CLEAR_MARGIN = 1.25       # a speed-up a single solve's CPU time on a shared machine does not fake
SOLVERS = {"lowrank": "low rank (Burer–Monteiro)", "ipm": "interior point", "facial": "facial reduction"}
# Weinberger's thesis, CSDP on the swiss roll: 6 min at n = 1,000, 84 min at n = 2,500
PUBLISHED_S = {1000: 360.0, 2500: 84 * 60.0}


def _slack(doc: dict) -> str:
    """The slack variant's runs (``--variants slack --omegas ...``), with each graph's least valid ω."""
    rows = [(f"{r['n']:,}", f"{r['edges']:,}", num(r["omega"], 4, style="f"), num(r.get("lambda2"), 6, style="f"),
             num(r.get("least_omega"), 5, style="f"), SOLVERS.get(r["solver"], r["solver"]), r["status"],
             "–" if r["rank"] is None else str(r["rank"]), num(r["objective"], 10),
             gap_cell(r.get("relative_gap")), num(r.get("gap_tol"), style="e"),
             num(r["time_s"], 1, style="f"), num(r.get("cpu_s"), 1, style="f"), num(r.get("load_after"), 1, style="f"))
            for r in doc["rows"]]
    return f"""

**The slack variant** (Sec. 3.1.6: maximise (1 − ω) tr K − ω Σ_e |𝒜(K)_e − D_e|). {run_line(stamp_of(doc))}
The same swiss rolls, each solve limited to {limit_text(doc)}. The SDP is bounded iff ω ≥ 1/(1 + λ₂),
λ₂ the algebraic connectivity of the unit-weight graph ("least ω"); below it the solvers report
`unbounded`. A status other than `optimal` is an iterate that is not certified (its gap is left out when no
bound was proved).

{table(("n", "edges", "ω", "λ₂", "least ω", "solver", "status", "rank", "objective", "certified relative gap",
        "gap tol.", "time [s]", "CPU [s]", "load"), rows, "rrrrrllrrrrrrr")}"""


def _crossover(doc: dict) -> str:
    """Low rank against the interior point on the small inequality rolls: CPU time side by side, and the least n
    from which low rank is faster at every larger n measured (where ``registry.MVU_LOWRANK_FROM_N`` should be)."""
    from sdpembed.registry import MVU_LOWRANK_FROM_N

    cpu = {(r["n"], r["solver"]): r for r in doc["rows"] if r["variant"] == "inequality"}
    sizes = sorted({n for n, solver in cpu if (n, "ipm") in cpu and (n, "lowrank") in cpu})
    faster = [cpu[n, "lowrank"]["cpu_s"] < cpu[n, "ipm"]["cpu_s"] for n in sizes]
    clearly = [cpu[n, "lowrank"]["cpu_s"] * CLEAR_MARGIN < cpu[n, "ipm"]["cpu_s"] for n in sizes]
    from_n = next((n for i, n in enumerate(sizes) if all(faster[i:])), None)
    clear_n = next((n for i, n in enumerate(sizes) if all(clearly[i:])), None)
    rows = [(f"{n:,}", f"{cpu[n, 'ipm']['edges']:,}", num(cpu[n, "lowrank"]["cpu_s"], 2, style="f"),
             num(cpu[n, "ipm"]["cpu_s"], 2, style="f"), cpu[n, "lowrank"]["status"], cpu[n, "ipm"]["status"])
            for n in sizes]
    where = (f"low rank is faster from n = {from_n:,} on" if from_n is not None
             else "low rank is not faster at the largest size measured")
    if clear_n is not None and clear_n != from_n:
        where += f", by more than {CLEAR_MARGIN:g}× (beyond the noise of one solve) from n = {clear_n:,} on"
    return f"""

**The crossover** (the inequality variant's default method: the interior point below
`registry.MVU_LOWRANK_FROM_N` = {MVU_LOWRANK_FROM_N} points, low rank from there). {run_line(stamp_of(doc))}
The same swiss rolls at the default gap tolerance {num(doc['rows'][0].get('gap_tol'), style='e')}, CPU seconds of one
solve each: {where}.

{table(("n", "edges", "low rank, CPU [s]", "interior point, CPU [s]", "low rank", "interior point"), rows,
       "rrrrll")}"""


def _trace_ratio(row: dict) -> float:
    """tr K over the centred input's trace: the objective's own sign for the maximising variants, and −objective
    (= tr K) for min_trace."""
    sign = -1.0 if row["variant"] == "min_trace" else 1.0
    return sign * row["objective"] / row["input_trace"]


def limit_text(doc: dict) -> str:
    """The run's limits per solve: wall-clock seconds and, where given, CPU seconds of the process."""
    parts = [f"{doc['time_limit_s']:g} s" if doc.get("time_limit_s") else None,
             f"{doc['cpu_time_limit_s']:g} s of CPU time" if doc.get("cpu_time_limit_s") else None]
    return " and ".join(part for part in parts if part) or "no limit"


@section("mvu_lowrank", "Exact MVU at scale", files=(FILE, SLACK_FILE, CROSSOVER_FILE), order=51)
def render(data: dict[str, dict]) -> str:
    doc = data[FILE]
    rows = [(f"{r['n']:,}", f"{r['edges']:,}", r["variant"], SOLVERS.get(r["solver"], r["solver"]), r["status"],
             "–" if r["rank"] is None else str(r["rank"]),
             num(_trace_ratio(r), 4, style="f") if r.get("input_trace") else "–",
             gap_cell(r.get("relative_gap")),
             num(r.get("gap_tol"), style="e"), num(r.get("proof_margin"), style="e"),
             num(r["time_s"], 1, style="f"), num(r.get("cpu_s"), 1, style="f"), num(r.get("load_after"), 1, style="f"),
             num(PUBLISHED_S.get(r["n"]), 0, style="f")
             if r["solver"] == "lowrank" and r["n"] in PUBLISHED_S and r["variant"] != "min_trace" else "–")
            for r in doc["rows"]]
    return f"""**Exact MVU, low rank against the interior point.** {run_line(stamp_of(doc))} Swiss roll
(noise 0.05, k = 5 with angle edges), each solve limited to {limit_text(doc)}; every gap is the
certified relative gap of a proved dual bound, for the low-rank solver of a K shrunk to feasibility, so
it bounds the answer's own suboptimality; "proof margin" is what the Cholesky proof of the bound itself
costs (`problems.mvu.proof_margin`, about γ_(n+1)·tr L(y)), the floor of any gap tolerance. "Objective /
input trace" divides the answer's objective by the trace of the centred input Gram matrix, a feasible
point of both variants and so a proved lower bound on the optimum: about 1 for an equality SDP locked up
at its input (Sec. 3.1.12; then the dual optimum is not attained, its multipliers grow without bound and
so does the proof margin), above 1 where the SDP unfolds the roll. For min_trace (objective −tr K) the
column is tr K / input trace: the input is feasible there too, so the optimum is at most 1. The load
column is the 1-minute load average after the solve (2 cores): wall times on a loaded machine are
inflated, CPU times much less. Published: the thesis's CSDP times on its own swiss rolls of the same
sizes (another machine).

{table(("n", "edges", "variant", "solver", "status", "rank", "objective / input trace", "certified relative gap",
        "gap tol.",
        "proof margin", "time [s]", "CPU [s]", "load", "published [s]"), rows, "rrlllrrrrrrrrr")}{
_slack(data[SLACK_FILE]) if SLACK_FILE in data else ""}{
_crossover(data[CROSSOVER_FILE]) if CROSSOVER_FILE in data else ""}
"""
