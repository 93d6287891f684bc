"""Benchmark: the all-pairs scan on Dask (issue 24, item 3) — overhead, throughput per worker, and a
projection to MNIST's 60,000 training images.

Part 1 — one scan. ``--n-points`` (800) seeded MNIST test images at 28×28 (N = 784), all
n(n−1)/2 pairs, δ = ``--delta``; the factor Ψ of the NuMax-CG solution of part 2 (so the scan is
the one column generation runs). The scan of all pairs through
:class:`~sdpembed.solvers.numax.scan_backend.LocalScan` (this process) and
:class:`~sdpembed.solvers.numax.scan_backend.DaskScan` on a ``LocalCluster`` of 1 and of 2 worker
processes, each with blocks of ``--block-rows`` rows (split between the workers), in two states: *first* (the
P-independent squared distances computed as part of the scan, as in column generation's first
round) and *kept* (those distances kept from an earlier scan — in this process, or on the workers —
as in every later round). Median and least of ``--repeat`` scans, the three backends taken in turn
within each repeat; for the kept scan also the CPU seconds of this process and of the workers. The
outputs are checked identical.

Part 2 — NuMax-CG end to end, the same instance, in this process and with the Dask backend on two
workers (the same blocks): wall time, number of scans, time in scans, and whether the results (P,
objective, working pairs) are identical.

Projection (a simulation from the measured throughput, not a run): the 60,000 training images have
1.8·10⁹ pairs in 910 blocks (the default blocks of 66 rows), which :class:`DaskScan` splits between
the workers, one call a worker a scan. A worker computes for its blocks what this process computes,
so its throughput is the local scan's pairs per second; what a one-worker cluster takes beyond the
local scan is Dask's cost, counted per call (the one worker had one). A scan on W workers is
predicted to take pairs / (throughput · W) + the cost of a call (the workers' calls run in
parallel), with the distances recomputed every scan (*first*), or kept on the workers (*kept*: 8
bytes a pair, 14 GB over the cluster, ``cache_pairs``); the run's scan time is that times the number
of scans of the 800-image run — the number at 60,000 images is not known, and the rank (so the cost
of a pair) grows with n. The restricted solves are not distributed and not projected.

Every process, the workers included, runs one BLAS thread.

    python benchmarks/dask_scan.py [--n-points 800] [--delta 0.1] [--block-rows 50] [--repeat 5]
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import report  # noqa: E402

from sdpembed import NuMaxInstance  # noqa: E402
from sdpembed.datasets import load_mnist  # noqa: E402
from sdpembed.linear import embedding_from_psd  # noqa: E402
from sdpembed.secants import pair_count  # noqa: E402
from sdpembed.solvers.numax.column_generation import column_generation  # noqa: E402
from sdpembed.solvers.numax.pair_scan import PairDistances  # noqa: E402
from sdpembed.solvers.numax.scan_backend import DaskScan, LocalScan  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TARGET_POINTS = 60_000
WORKERS = (1, 8, 64)


class Counted:
    """A scan backend that counts its scans and their time."""

    def __init__(self, inner) -> None:
        self.inner, self.scans, self.seconds = inner, 0, 0.0

    def scan(self, *args, **kwargs):
        start = time.perf_counter()
        result = self.inner.scan(*args, **kwargs)
        self.seconds += time.perf_counter() - start
        self.scans += 1
        return result

    def max_violation(self, *args, **kwargs):
        return self.inner.max_violation(*args, **kwargs)

    def check_violation(self, *args, **kwargs):
        return self.inner.check_violation(*args, **kwargs)


def _same(a, b) -> bool:
    return (all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("i", "j", "violation"))
            and a.max_violation == b.max_violation and a.n_pairs == b.n_pairs)


def worker_cpu(backend) -> float:
    """CPU seconds the workers of a Dask backend have used (their processes, all threads), or 0 for a local
    one."""
    return sum(backend.client.run(time.process_time).values()) if isinstance(backend, DaskScan) else 0.0


def time_scans(backends: dict, X, Psi, bounds, block_rows: int, repeat: int) -> tuple[dict, dict]:
    """Per backend: the median and the least seconds of a first scan (fresh distances) and of a scan with the
    distances kept, the backends taken in turn within each repeat (ABAB…) so that a change in the machine's
    load reaches them alike; and the median CPU seconds of a kept scan in this process (all its threads) and
    in the workers (their processes, read before and after the scan)."""
    runs = {label: {"first": [], "kept": [], "driver_cpu": [], "workers_cpu": []} for label in backends}
    results = {}
    for _ in range(repeat):
        for label, backend in backends.items():
            run = runs[label]
            distances = PairDistances(X, block_rows)
            start = time.perf_counter()
            results[label] = backend.scan(X, None, bounds, tol=1e-6, factor=Psi, distances=distances)
            run["first"].append(time.perf_counter() - start)
            workers = worker_cpu(backend)
            cpu, start = time.process_time(), time.perf_counter()
            backend.scan(X, None, bounds, tol=1e-6, factor=Psi, distances=distances)
            run["kept"].append(time.perf_counter() - start)
            run["driver_cpu"].append(time.process_time() - cpu)
            run["workers_cpu"].append(worker_cpu(backend) - workers)
    times = {label: {"first_s": statistics.median(run["first"]), "kept_s": statistics.median(run["kept"]),
                     "first_min_s": min(run["first"]), "kept_min_s": min(run["kept"]),
                     "kept_driver_cpu_s": statistics.median(run["driver_cpu"]),
                     "kept_workers_cpu_s": statistics.median(run["workers_cpu"])}
             for label, run in runs.items()}
    return times, results


def round_trip(backend, repeat: int) -> float:
    """Median seconds of one call to the actor on every worker that does no work
    (``_ScanWorker.kept_blocks``, on the worker's event loop), the calls made and awaited on the client's
    loop as a scan makes them: the part of a scan's time that is Dask's round trip alone, whatever the scan
    computes and sends."""
    actors = [actor for _, actor in backend._actors]

    async def calls() -> list[int]:
        pending = [actor.kept_blocks() for actor in actors]
        return [await call for call in pending]

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        backend.client.sync(calls)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-points", type=int, default=800)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--block-rows", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "dask_scan.json"))
    args = parser.parse_args()
    X, _ = load_mnist(size=28, n_samples=args.n_points, random_state=args.seed)
    instance = NuMaxInstance(delta=args.delta, X=X)
    bounds = instance.bounds_of_pairs
    n_pairs = pair_count(X.shape[0])
    blocks = len(PairDistances(X, args.block_rows).starts())
    setup = (f"{args.n_points} MNIST test images (28x28, N = 784, seed {args.seed}), {n_pairs} pairs, "
             f"delta {args.delta}; blocks of {args.block_rows} rows ({blocks} blocks a scan)")
    print(setup, flush=True)

    # part 2 first: its solution gives the factor of part 1
    runs = {}
    for name in ("local", "dask"):
        with DaskScan(n_workers=2) if name == "dask" else LocalScan() as backend:
            counted = Counted(backend)
            if name == "dask":
                backend.workers()                                # the cluster's start-up is not timed
            start = time.perf_counter()
            result = column_generation(X, bounds, random_state=args.seed, block_rows=args.block_rows,
                                       scan_backend=counted)
            runs[name] = {"result": result, "wall_s": time.perf_counter() - start, "scans": counted.scans,
                          "scan_s": counted.seconds}
        print(f"  NuMax-CG {name:5s} {result.status} tr P {result.objective:.10g} in {runs[name]['wall_s']:.1f}s, "
              f"{counted.scans} scans {counted.seconds:.1f}s", flush=True)
    local, remote = runs["local"]["result"], runs["dask"]["result"]
    identical = (remote.objective == local.objective and np.array_equal(remote.solution, local.solution)
                 and np.array_equal(remote.extra["pairs"], local.extra["pairs"]))
    cg = {name: {k: v for k, v in run.items() if k != "result"} | {
        "status": run["result"].status, "objective": run["result"].objective,
        "rounds": int(run["result"].extra["rounds"]), "relative_gap": run["result"].relative_gap}
        for name, run in runs.items()}
    cg["identical"] = bool(identical)
    Psi = embedding_from_psd(local.solution)
    rank = int(Psi.shape[0])
    print(f"  identical results: {identical}; rank {rank}", flush=True)

    # part 1: one scan, the three backends in turn
    labels = {"local": 0, "dask1": 1, "dask2": 2}
    with contextlib.ExitStack() as stack:
        backends = {label: stack.enter_context(DaskScan(n_workers=workers) if workers else LocalScan())
                    for label, workers in labels.items()}
        for label, backend in backends.items():
            if labels[label]:
                backend.workers()                                # the clusters' start-up is not timed
        scans, results = time_scans(backends, X, Psi, bounds, args.block_rows, args.repeat)
        for label, backend in backends.items():
            if labels[label]:
                scans[label]["round_trip_s"] = round_trip(backend, 5 * args.repeat)
    for label, times in scans.items():
        times["identical"] = _same(results[label], results["local"])
        times["violators"] = int(results[label].i.size)
        print(f"  scan {label:6s} first {times['first_s']:.3f}s  kept {times['kept_s']:.4f}s (least "
              f"{times['kept_min_s']:.4f}s; CPU here {times['kept_driver_cpu_s']:.4f}s, in the workers "
              f"{times['kept_workers_cpu_s']:.4f}s)  identical {times['identical']}"
              + (f"  empty call {times['round_trip_s']:.4f}s" if labels[label] else ""), flush=True)
    loc, one, two = scans["local"], scans["dask1"], scans["dask2"]
    # a worker computes what this process computes for its blocks: its compute throughput is the
    # local one; what a one-worker cluster takes beyond it is Dask's cost, counted per call (one
    # call a worker a scan)
    per_worker = 1
    tasks = {label: min(blocks, per_worker * workers) for label, workers in (("dask1", 1), ("dask2", 2))}
    compute = {k: n_pairs / loc[f"{k}_s"] for k in ("first", "kept")}
    effective = {k: n_pairs / one[f"{k}_s"] for k in ("first", "kept")}
    per_task = {k: max(one[f"{k}_s"] - loc[f"{k}_s"], 0.0) / tasks["dask1"] for k in ("first", "kept")}
    target_pairs = pair_count(TARGET_POINTS)
    target_blocks = len(PairDistances(np.zeros((TARGET_POINTS, 1))).starts())      # the default blocks
    projection = []
    for workers in WORKERS:
        row = {"workers": workers, "tasks": min(target_blocks, per_worker * workers)}
        for k in ("first", "kept"):
            # each worker's call runs in parallel with the other workers'
            row[f"{k}_scan_s"] = target_pairs / (compute[k] * workers) + per_task[k] * row["tasks"] / workers
            row[f"{k}_run_h"] = row[f"{k}_scan_s"] * cg["local"]["scans"] / 3600
        projection.append(row)
        print(f"  projected 60,000 images on {workers:2d} workers: a scan {row['first_scan_s']:,.0f}s "
              f"({row['kept_scan_s']:,.0f}s with the distances kept), {cg['local']['scans']} scans "
              f"{row['first_run_h']:.2f} h ({row['kept_run_h']:.2f} h)", flush=True)
    out = {
        "benchmark": "dask_scan", "setup": setup, "n_points": args.n_points, "n_pairs": n_pairs,
        "delta": args.delta, "block_rows": args.block_rows, "blocks": blocks, "tasks_per_worker": per_worker,
        "tasks": tasks, "rank": rank, "repeat": args.repeat,
        "scans": scans, "numax_cg": cg,
        "overhead": {k: one[f"{k}_s"] / loc[f"{k}_s"] - 1.0 for k in ("first", "kept")},
        "overhead_2": {k: two[f"{k}_s"] / loc[f"{k}_s"] - 1.0 for k in ("first", "kept")},
        # the same from the least times of the repeats (the quietest moments of a loaded machine)
        "overhead_least": {label: {k: scans[label][f"{k}_min_s"] / loc[f"{k}_min_s"] - 1.0 for k in ("first", "kept")}
                           for label in ("dask1", "dask2")},
        # Dask's round trip alone, against the local kept scan: the least overhead a scan through these calls has
        "round_trip_floor": {k: scans[k]["round_trip_s"] / loc["kept_s"] for k in ("dask1", "dask2")},
        "throughput_compute": compute, "throughput_one_worker": effective, "per_task_s": per_task,
        "projection": {"points": TARGET_POINTS, "pairs": target_pairs, "blocks": target_blocks,
                       "scans": cg["local"]["scans"], "rows": projection},
    }
    report.write_results(args.json, out)


if __name__ == "__main__":
    main()
