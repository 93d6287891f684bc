"""Benchmark: exact MVU at n = 200 – 2,500 by the low-rank augmented Lagrangian (issue 25), against
the interior point where it finishes.

Swiss rolls of n ∈ ``--sizes`` points (noise 0.05, k = 5, angle edges — the graph of
``benchmarks/mvu.py``, part 1), the variants ``--variants`` (any of equality, inequality, slack at
each of ``--omegas``, min_trace): the low-rank solver
(:func:`sdpembed.solvers.mvu.lowrank.solve_mvu_lowrank`) and the interior point
(:func:`sdpembed.solvers.mvu.ipm.solve_mvu_ipm`) up to ``--ipm-max`` points, and for the equality and
min_trace variants facial reduction (:func:`sdpembed.solvers.mvu.facial.solve_mvu_facial`) when ``--solvers``
names it, each given ``--time-limit`` seconds of wall-clock time (0: none) and/or ``--cpu-time-limit`` seconds of CPU
time, and the gap tolerance ``--gap-tol`` (default 1e-6; from
``--loose-from`` points on 1e-5, as the proof's own rounding margin
(:func:`sdpembed.problems.mvu.proof_margin`) is about 1e-6 at n = 2,500). Every answer is
certified by the same proved dual bound (:func:`sdpembed.problems.mvu.dual_bound`); the table
reports the objective over the trace of the centred input Gram matrix (a feasible point of every
variant here, so a proved lower bound on the optimum: a ratio of 1 is an SDP locked up at its input,
Sec. 3.1.12), wall and CPU time (``time.process_time``: on a loaded machine the wall time is inflated),
the final rank of the factor, the certified relative gap, the proof's margin and the status. A
30-point solve by each solver runs first, untimed, so that no timed solve pays the imports of
first use.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/mvu_lowrank.py [--sizes 200,1000,2500]
        [--variants inequality,equality --equality-sizes 200,400] [--solvers lowrank,ipm,facial]
    ... --variants slack --omegas 0.987,0.995 --json benchmarks/results/mvu_lowrank_slack.json
    ... --sizes 1000 --variants slack,min_trace --omegas 0.987,0.995,0.999 --time-limit 0 --cpu-time-limit 900
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import report

from sdpembed.datasets import swiss_roll
from sdpembed.graphs import neighborhood_graph
from sdpembed.problems import MVUInstance
from sdpembed.problems.mvu import algebraic_connectivity, proof_margin
from sdpembed.solvers.mvu.facial import solve_mvu_facial
from sdpembed.solvers.mvu.ipm import solve_mvu_ipm
from sdpembed.solvers.mvu.lowrank import solve_mvu_lowrank

ROOT = Path(__file__).resolve().parent.parent


def run(sizes, variants, ipm_max: int, limit: float | None, seed: int, gap_tol: float, loose_from: int,
        equality_sizes=None, omegas=(0.99,), solver_names=("lowrank", "ipm"),
        cpu_limit: float | None = None) -> list[dict]:
    print(f"  {'n':>5} {'E':>6} {'variant':<11} {'solver':<8} {'status':<15} {'objective':>14} {'cert. gap':>10} "
          f"{'margin':>8} {'rank':>5} {'time s':>8} {'cpu s':>8} {'load':>5}", flush=True)
    rows = []
    # a small solve by each solver first, so that no timed solve pays the first use's imports
    X, _ = swiss_roll(30, noise=0.05, random_state=seed)
    warm = MVUInstance(*neighborhood_graph(X, 5), n=30, variant=variants[0],
                       omega=omegas[0] if variants[0] == "slack" else None)
    for solve in (solve_mvu_lowrank, solve_mvu_ipm, solve_mvu_facial):
        solve(warm)
    for n in sizes:
        X, _ = swiss_roll(n, noise=0.05, random_state=seed)
        edges, D = neighborhood_graph(X, 5)
        centred = X - X.mean(axis=0)
        input_trace = float(np.sum(centred * centred))
        lambda2 = algebraic_connectivity(n, edges) if "slack" in variants else None
        cases = [(v, w) for v in variants for w in (omegas if v == "slack" else (None,))]
        for variant, omega in cases:
            if variant in ("equality", "min_trace") and equality_sizes is not None and n not in equality_sizes:
                continue
            instance = MVUInstance(edges=edges, sqdist=D, n=n, variant=variant, omega=omega)
            solvers = [(name, solve) for name, solve in (("lowrank", solve_mvu_lowrank), ("ipm", solve_mvu_ipm),
                                                         ("facial", solve_mvu_facial))
                       if name in solver_names and (name != "ipm" or n <= ipm_max)
                       and (name != "facial" or variant in ("equality", "min_trace"))]
            tol = gap_tol if n < loose_from else max(gap_tol, 1e-5)
            for name, solve in solvers:
                t, cpu = time.perf_counter(), time.process_time()
                r = solve(instance, time_limit=limit, cpu_time_limit=cpu_limit, gap_tol=tol)
                elapsed, cpu = time.perf_counter() - t, time.process_time() - cpu
                y = r.extra.get("y")
                margin = proof_margin(instance, y) if y is not None and len(y) == len(D) else None
                row = {"n": n, "edges": int(edges.shape[0]), "variant": variant, "omega": omega,
                       "lambda2": lambda2, "least_omega": None if lambda2 is None else 1.0 / (1.0 + lambda2),
                       "solver": name, "status": r.status,
                       "objective": r.objective, "input_trace": input_trace, "dual_bound": r.dual_bound,
                       "relative_gap": r.relative_gap, "gap_tol": tol, "proof_margin": margin,
                       "max_violation": r.max_violation, "iterations": r.iterations, "time_s": elapsed, "cpu_s": cpu,
                       "rank": int(r.extra["rank"]) if "rank" in r.extra else None,
                       "load_after": round(os.getloadavg()[0], 2)}
                rows.append(row)
                rank = "–" if row["rank"] is None else str(row["rank"])
                shown = "–" if margin is None else f"{margin:.1e}"
                label = variant if omega is None else f"slack {omega:g}"
                print(f"  {n:5d} {edges.shape[0]:6d} {label:<11} {name:<8} {r.status:<15} {r.objective:14.8e} "
                      f"{r.relative_gap:10.1e} {shown:>8} {rank:>5} {elapsed:8.1f} {cpu:8.1f} {row['load_after']:5.2f}",
                      flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="150,200,300,400,1000,2500")
    parser.add_argument("--variants", default="inequality,equality")
    parser.add_argument("--equality-sizes", default=None,
                        help="the sizes of the equality and min_trace variants (default: --sizes)")
    parser.add_argument("--omegas", default="0.99", help="the slack variant's omega values")
    parser.add_argument("--ipm-max", type=int, default=1000, help="largest n the interior point is run at")
    parser.add_argument("--time-limit", type=float, default=900.0,
                        help="wall-clock seconds per solve (0: none, e.g. with --cpu-time-limit)")
    parser.add_argument("--cpu-time-limit", type=float, default=None,
                        help="CPU seconds per solve (a limit that a loaded machine does not shorten)")
    parser.add_argument("--solvers", default="lowrank,ipm",
                        help="of lowrank, ipm, facial (facial reduction: equality and min_trace only)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gap-tol", type=float, default=1e-6, help="certified relative gap for status optimal")
    parser.add_argument("--loose-from", type=int, default=2500,
                        help="from this n on, the gap tolerance is at least 1e-5 (the proof's margin is ~1e-6)")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "mvu_lowrank.json"))
    args = parser.parse_args()
    start = time.perf_counter()
    rows = run([int(s) for s in args.sizes.split(",")], args.variants.split(","), args.ipm_max,
               args.time_limit or None,
               args.seed, args.gap_tol, args.loose_from,
               None if args.equality_sizes is None else [int(s) for s in args.equality_sizes.split(",")],
               [float(w) for w in args.omegas.split(",")], tuple(args.solvers.split(",")), args.cpu_time_limit)
    out = {"benchmark": "mvu_lowrank", "time_limit_s": args.time_limit or None,
           "cpu_time_limit_s": args.cpu_time_limit, "rows": rows}
    stamp = {**report.run_stamp(), "seconds": round(time.perf_counter() - start)}
    report.write_results(args.json, out, stamp)


if __name__ == "__main__":
    main()
