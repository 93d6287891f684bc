"""Benchmark: NuMax at scale on MNIST — ADAGIO Table 3, NuMax Fig. 7 and a NuMax Table 1 analogue.

Part (a) — ADAGIO Table 3. ``--n-points`` (800) seeded random images of the vendored MNIST
test set at 28×28 (N = 784), all n(n−1)/2 secants (319,600 for 800 images). For each
δ ∈ {0.05, 0.1, 0.2}: NuMax-CG (column generation over all pairs, exact all-pairs check,
certified gap) — rank, time, rounds, working and active pairs; and the smallest dimension at
which PCA and a Gaussian map (variance 1/M, one seed) reach the same δ on all pairs (RIP (2)
with squared norms, maps unscaled; the search is a bisection on M, exact for PCA whose
distortions shrink monotonically with M, and an estimate for the random map).

Part (b) — NuMax Fig. 7. Images of the digit 5 (20×20, N = 400), δ = ``--fig7-delta``; for a
growing number of images n, NuMax (the ADMM of Algorithm 1 on all n(n−1)/2 secants,
materialised, while the S×S least-squares matrix fits) and NuMax-CG: time of each, and the
fraction of all secants that is active (within 1e-4 of a bound) at the CG solution.

Part (d) — the baselines of Table 3 alone (no NuMax solve): PCA and Gaussian dimensions both
under RIP (2) with squared norms and under ADAGIO's distortion (3), |‖Ψ(x−y)‖/‖x−y‖ − 1|, the
definition behind the published PCA and JL columns.

Part (c) — NuMax Table 1 analogue. A seeded permutation of the 10,000 20×20 test images gives
``--n-train`` training and ``--n-test`` disjoint test images; for δ ∈ {0.4, 0.25, 0.1}, NuMax-CG
on all training pairs, and the 1-NN test error after NuMax, PCA and a Gaussian map with
M = rank of the NuMax solution.

Part (e) — scale. NuMax-CG at δ = ``--scale-delta`` (0.1) on the first n images of a seeded
permutation of the 28×28 test set for each n of ``--sizes`` (all 10,000 images: 4.99·10⁷ pairs),
then NuMax-Class (7) on the largest n with the images' labels: status, CPU and wall time, rank,
rounds, working and active pairs, certified gap, worst violation over all pairs, and the peak
resident memory of each run (the kernel's high-water mark, reset before the run where Linux
allows it; else the process's peak so far).

    python benchmarks/numax_mnist.py [--parts abc] [--n-points 800] [--n-train 500] [--json PATH]
    python benchmarks/numax_mnist.py --parts e --sizes 2000,10000 --json results/numax_mnist_10000.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

import numpy as np
import report
from sklearn.neighbors import KNeighborsClassifier

from sdpembed import NuMaxClassInstance, NuMaxInstance, solve
from sdpembed._progress import track
from sdpembed.datasets import load_mnist
from sdpembed.linear import embedding_from_psd, gaussian_projection, pca_projection
from sdpembed.secants import pair_count

ROOT = Path(__file__).resolve().parent.parent

#: ADAGIO Table 3 (Błasiok and Tsourakakis), MNIST-800: dimension and time per method and δ.
PUBLISHED_TABLE3 = {
    0.05: {"numax": (83, 1105.0), "pca": (337, 5.18), "jl": (None, None)},
    0.1: {"numax": (59, 373.0), "pca": (280, 5.1), "jl": (None, None)},
    0.2: {"numax": (42, 220.0), "pca": (205, 4.84), "jl": (260, 0.45)},
}
#: NuMax Table 1 (Hegde et al.), full MNIST 60,000 training images, 20×20: rank and 1-NN error (%).
PUBLISHED_TABLE1 = {0.4: (72, 2.99, 5.79, 4.40), 0.25: (97, 3.11, 4.51, 4.38), 0.1: (167, 3.31, 3.88, 4.41)}


def all_pairs_delta(Psi: np.ndarray, X: np.ndarray, squared: bool = True) -> float:
    """Isometry constant max |‖Ψ(x_i − x_j)‖² / ‖x_i − x_j‖² − 1| over all pairs, via Gram matrices
    (RIP (2) of NuMax); with ``squared=False`` ADAGIO's distortion (3), max |‖Ψ(x_i − x_j)‖ / ‖x_i − x_j‖ − 1|."""
    Y = X @ Psi.T
    nx, ny = np.einsum("ij,ij->i", X, X), np.einsum("ij,ij->i", Y, Y)
    dX = nx[:, None] + nx[None, :] - 2.0 * X @ X.T
    dY = ny[:, None] + ny[None, :] - 2.0 * Y @ Y.T
    iu = np.triu_indices(len(X), 1)
    ratio = np.maximum(dY[iu], 0.0) / dX[iu]
    return float(np.max(np.abs((ratio if squared else np.sqrt(ratio)) - 1.0)))


def dimension_by_bisection(make_map, X: np.ndarray, delta: float, squared: bool = True,
                           largest: int | None = None) -> int | None:
    """Smallest M in [1, ``largest``] (default N) with all_pairs_delta(make_map(M)) ≤ δ, by bisection
    (None if M = ``largest`` fails)."""
    lo, hi = 1, X.shape[1] if largest is None else largest
    if all_pairs_delta(make_map(hi), X, squared) > delta:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if all_pairs_delta(make_map(mid), X, squared) <= delta:
            hi = mid
        else:
            lo = mid + 1
    return lo


def active_count(result, X: np.ndarray, delta: float, bounds=None) -> int:
    """Working pairs within 1e-4 of a bound at the solution (bounds 1 ∓ δ, or ``bounds(i, j)``)."""
    pairs = result.extra["pairs"]
    D = X[pairs[:, 0]] - X[pairs[:, 1]]
    values = np.einsum("ij,ij->i", D @ result.solution, D) / np.einsum("ij,ij->i", D, D)
    if bounds is None:
        return int(np.sum(np.abs(np.abs(values - 1.0) - delta) <= 1e-4))
    lo, hi = bounds(pairs[:, 0], pairs[:, 1])
    return int(np.sum(np.minimum(values - lo, hi - values) <= 1e-4))


def reset_peak_memory() -> bool:
    """Reset the kernel's resident-memory high-water mark of this process (Linux ≥ 4.0); False if not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def peak_memory_gb() -> float:
    """Peak resident memory of this process in GB (10⁹ bytes): VmHWM, else ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


def part_e(sizes: list[int], delta: float, seed: int, with_class: bool = True) -> dict:
    X_all, y_all = load_mnist(size=28)
    order = np.random.default_rng(seed).permutation(len(y_all))
    setup = (f"the first n images of a seeded permutation (seed {seed}) of the 10,000 MNIST test images "
             f"(28x28, N = 784), delta = {delta}; all n(n-1)/2 pairs; one process, peak resident memory per run")
    print("(e) scale:", setup, flush=True)
    runs = [("NuMax", n) for n in sizes] + ([("NuMax-Class", max(sizes))] if with_class else [])
    rows = []
    for name, n in runs:
        X, y = X_all[order[:n]], y_all[order[:n]]
        instance = (NuMaxInstance(delta=delta, X=X) if name == "NuMax"
                    else NuMaxClassInstance(delta=delta, X=X, y=y))
        exact_peak = reset_peak_memory()
        load_before = os.getloadavg()[0]
        cpu = time.process_time()
        result = solve(instance, random_state=seed, verbose=True)
        cpu = time.process_time() - cpu
        row = {
            "problem": name, "n_points": n, "n_pairs": pair_count(n), "delta": delta, "status": result.status,
            "rank": int(result.extra["rank"]), "time_s": result.wall_time, "cpu_s": cpu,
            "objective": result.objective, "relative_gap": result.relative_gap,
            "max_violation": result.max_violation, "rounds": int(result.extra["rounds"]),
            "working_pairs": int(len(result.extra["pairs"])),
            "active_pairs": active_count(result, X, delta, instance.bounds_of_pairs),
            "peak_memory_gb": peak_memory_gb(), "peak_memory_exact": exact_peak,
            "load_average": [load_before, os.getloadavg()[0]],
        }
        rows.append(row)
        print(f"  {name:<11} n {n:6d}  {row['status']:<9} rank {row['rank']:4d}  CPU {cpu:7.1f}s  "
              f"wall {row['time_s']:7.1f}s  rounds {row['rounds']}  working {row['working_pairs']}  "
              f"active {row['active_pairs']}  gap {row['relative_gap']:.1e}  violation {row['max_violation']:.1e}  "
              f"peak {row['peak_memory_gb']:.2f} GB  load {row['load_average'][0]:.1f}-{row['load_average'][1]:.1f}",
              flush=True)
    return {"setup": setup, "rows": rows}


def baseline_dimensions(n_points: int, seed: int, deltas: tuple[float, ...]) -> dict:
    """Table 3's PCA and Gaussian dimensions under both distortion definitions (no NuMax solve)."""
    X, _ = load_mnist(size=28, n_samples=n_points, random_state=seed)
    gauss_full = gaussian_projection(X.shape[1], X.shape[1], random_state=seed) * np.sqrt(X.shape[1])
    rows = []
    print("(a') PCA and Gaussian dimensions, RIP (2) with squared norms and ADAGIO's distortion (3)", flush=True)
    for delta in track(deltas, "(a') deltas", unit="delta"):
        row = {"delta": delta}
        for squared, tag in ((True, "squared"), (False, "adagio")):
            row[f"pca_dim_{tag}"] = dimension_by_bisection(lambda m: pca_projection(X, m), X, delta, squared)
            row[f"gaussian_dim_{tag}"] = dimension_by_bisection(lambda m: gauss_full[:m] / np.sqrt(m), X, delta,
                                                                squared)
        published = PUBLISHED_TABLE3[delta]
        row.update(published_pca_dim=published["pca"][0], published_jl_dim=published["jl"][0])
        rows.append(row)
        print(f"  delta {delta:<5} PCA {row['pca_dim_squared']} (squared) / {row['pca_dim_adagio']} (ADAGIO (3)), "
              f"published {published['pca'][0]};  Gaussian {row['gaussian_dim_squared']} / "
              f"{row['gaussian_dim_adagio']}, published {published['jl'][0]}", flush=True)
    return {"rows": rows}


def part_a(n_points: int, seed: int, deltas: tuple[float, ...] = (0.05, 0.1, 0.2)) -> dict:
    X, _ = load_mnist(size=28, n_samples=n_points, random_state=seed)
    setup = (f"{n_points} MNIST test images (28x28, N = 784, seeded sample, seed {seed}); all "
             f"{pair_count(n_points)} secants")
    print("(a) ADAGIO Table 3:", setup, flush=True)
    rows = []
    gauss_full = gaussian_projection(X.shape[1], X.shape[1], random_state=seed) * np.sqrt(X.shape[1])
    for delta in track(deltas, "(a) deltas", unit="delta"):
        cpu = time.process_time()
        result = solve(NuMaxInstance(delta=delta, X=X), random_state=seed)
        cpu = time.process_time() - cpu
        rank = embedding_from_psd(result.solution).shape[0]
        start = time.perf_counter()
        pca_dim = dimension_by_bisection(lambda m: pca_projection(X, m), X, delta)
        pca_time = time.perf_counter() - start
        gauss_dim = dimension_by_bisection(lambda m: gauss_full[:m] / np.sqrt(m), X, delta)
        published = PUBLISHED_TABLE3[delta]
        row = {
            "delta": delta, "status": result.status, "rank": rank, "time_s": result.wall_time, "cpu_s": cpu,
            "objective": result.objective, "relative_gap": result.relative_gap, "max_violation": result.max_violation,
            "rounds": int(result.extra["rounds"]), "working_pairs": int(len(result.extra["pairs"])),
            "active_pairs": active_count(result, X, delta), "pca_dim": pca_dim, "pca_search_s": pca_time,
            "gaussian_dim": gauss_dim, "published_numax_dim": published["numax"][0],
            "published_numax_time_s": published["numax"][1], "published_pca_dim": published["pca"][0],
            "published_jl_dim": published["jl"][0],
        }
        rows.append(row)
        print(f"  delta {delta:<5} NuMax-CG {row['status']:<9} rank {rank:4d} (published {published['numax'][0]})  "
              f"time {row['time_s']:7.1f}s (CPU {cpu:.1f}s; published {published['numax'][1]:g}s)  "
              f"gap {row['relative_gap']:.1e}  "
              f"rounds {row['rounds']}  active {row['active_pairs']}  PCA dim {pca_dim} (published "
              f"{published['pca'][0]})  Gaussian dim {gauss_dim} (published {published['jl'][0]})", flush=True)
    return {"setup": setup, "rows": rows}


def part_b(sizes: list[int], admm_max: int, delta: float, seed: int) -> dict:
    X5, _ = load_mnist(size=20, digits=[5])
    X5 = X5[np.random.default_rng(seed).permutation(len(X5))]
    setup = f"images of the digit 5 (20x20, N = 400), delta = {delta}; first n images of a seeded permutation"
    print("(b) NuMax Fig. 7:", setup, flush=True)
    rows = []
    for n in track(sizes, "(b) sizes", unit="size"):
        X = X5[:n]
        cg = solve(NuMaxInstance(delta=delta, X=X), "cg", random_state=seed)
        row = {"n_points": n, "n_secants": pair_count(n), "cg_time_s": cg.wall_time, "cg_status": cg.status,
               "cg_objective": cg.objective, "active_fraction": active_count(cg, X, delta) / pair_count(n),
               "admm_time_s": None, "admm_status": None, "admm_objective": None}
        if pair_count(n) <= admm_max:
            admm = solve(NuMaxInstance(delta=delta, X=X), "admm", max_constraints=admm_max)
            row.update(admm_time_s=admm.wall_time, admm_status=admm.status, admm_objective=admm.objective)
        rows.append(row)
        admm_text = "NuMax not run (S x S matrix too large)"
        if row["admm_time_s"] is not None:
            ratio = row["admm_time_s"] / row["cg_time_s"]
            admm_text = f"NuMax {row['admm_status']} {row['admm_time_s']:7.1f}s  NuMax/CG time {ratio:5.1f}x"
        print(f"  n {n:4d}  secants {row['n_secants']:7d}  NuMax-CG {row['cg_status']} {row['cg_time_s']:7.1f}s  "
              f"{admm_text}  active fraction {row['active_fraction']:.4f}", flush=True)
    return {"setup": setup, "rows": rows}


def part_c(n_train: int, n_test: int, seed: int) -> dict:
    X, y = load_mnist(size=20)
    order = np.random.default_rng(seed).permutation(len(y))
    tr, te = order[:n_train], order[n_train:n_train + n_test]
    setup = (f"MNIST 20x20 test set split by a seeded permutation (seed {seed}): {n_train} training and "
             f"{n_test} disjoint test images; NuMax-CG on all {pair_count(n_train)} training pairs")
    print("(c) NuMax Table 1 analogue:", setup, flush=True)

    def error(Psi: np.ndarray) -> float:
        model = KNeighborsClassifier(1).fit(X[tr] @ Psi.T, y[tr])
        return 100.0 * (1.0 - model.score(X[te] @ Psi.T, y[te]))

    rows = []
    for delta in track((0.4, 0.25, 0.1), "(c) deltas", unit="delta"):
        result = solve(NuMaxInstance(delta=delta, X=X[tr]), random_state=seed)
        Psi = embedding_from_psd(result.solution)
        M = Psi.shape[0]
        published = PUBLISHED_TABLE1[delta]
        row = {"delta": delta, "status": result.status, "rank": M, "time_s": result.wall_time,
               "relative_gap": result.relative_gap, "numax_error": error(Psi),
               "pca_error": error(pca_projection(X[tr], M)),
               "gaussian_error": error(gaussian_projection(M, X.shape[1], random_state=seed)),
               "full_dim_error": error(np.eye(X.shape[1])), "published": dict(zip(
                   ("rank", "numax_error", "gaussian_error", "pca_error"), published, strict=True))}
        rows.append(row)
        print(f"  delta {delta:<5} {row['status']:<9} M {M:4d} (published {published[0]})  1-NN error NuMax "
              f"{row['numax_error']:5.2f}%  PCA {row['pca_error']:5.2f}%  Gaussian {row['gaussian_error']:5.2f}%  "
              f"(all 400 pixels {row['full_dim_error']:5.2f}%)  time {row['time_s']:7.1f}s  "
              f"gap {row['relative_gap']:.1e}", flush=True)
    return {"setup": setup, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="abcd",
                        help="which parts to run: a (Table 3 NuMax-CG), b (Fig. 7), c (Table 1), d (Table 3 "
                             "baselines), e (scale: --sizes)")
    parser.add_argument("--n-points", type=int, default=800)
    parser.add_argument("--table3-deltas", default="0.05,0.1,0.2")
    parser.add_argument("--fig7-sizes", default="50,100,150,200,316")
    parser.add_argument("--fig7-delta", type=float, default=0.1)
    parser.add_argument("--admm-max-secants", type=int, default=12000)
    parser.add_argument("--n-train", type=int, default=500)
    parser.add_argument("--n-test", type=int, default=2000)
    parser.add_argument("--sizes", default="10000", help="part e: numbers of images (at most 10,000)")
    parser.add_argument("--scale-delta", type=float, default=0.1)
    parser.add_argument("--no-class", action="store_true", help="part e without the NuMax-Class run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "numax_mnist.json"))
    args = parser.parse_args()
    start = time.perf_counter()
    path = Path(args.json)
    out = json.loads(path.read_text()) if path.exists() else {}
    if "a" in args.parts:
        out["table3"] = part_a(args.n_points, args.seed, tuple(float(d) for d in args.table3_deltas.split(",")))
    if "d" in args.parts:
        out["table3_baselines"] = baseline_dimensions(args.n_points, args.seed,
                                                      tuple(float(d) for d in args.table3_deltas.split(",")))
    if "b" in args.parts:
        out["fig7"] = part_b([int(s) for s in args.fig7_sizes.split(",")], args.admm_max_secants,
                             args.fig7_delta, args.seed)
    if "c" in args.parts:
        out["table1"] = part_c(args.n_train, args.n_test, args.seed)
    if "e" in args.parts:
        scale = part_e([int(v) for v in args.sizes.split(",")], args.scale_delta, args.seed, not args.no_class)
        # rows of other (problem, n) from an earlier run of this file are kept: a large run can go alone
        ran = {(r["problem"], r["n_points"]) for r in scale["rows"]}
        kept = [r for r in out.get("scale", {}).get("rows", []) if (r["problem"], r["n_points"]) not in ran]
        scale["rows"] = sorted(kept + scale["rows"], key=lambda r: (r["problem"] != "NuMax", r["n_points"]))
        out["scale"] = scale
    out["benchmark"] = "numax_mnist"
    stamp = {**report.run_stamp(), "seconds": round(time.perf_counter() - start)}
    names = {"a": "table3", "b": "fig7", "c": "table1", "d": "table3_baselines", "e": "scale"}
    out.setdefault("stamps", {}).update({names[part]: stamp for part in args.parts})  # parts not run keep theirs
    report.write_results(path, out, stamp)


if __name__ == "__main__":
    main()
