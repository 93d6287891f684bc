"""Benchmark: maximum variance unfolding (thesis Sec. 3.1) — exact, against CVXPY, against
scikit-learn's manifold learners, and variational MVU at scale.

Part 1 — exact MVU vs CVXPY. Inequality MVU (Sec. 3.1.6) on swiss rolls of n ∈ ``--sizes``
points (noise 0.05, k = 5, angle edges): the hand-written interior-point method (certified
dual bound) against CVXPY with SCS and with Clarabel, each given ``--cvxpy-limit`` seconds
(the solvers' own time limits; canonicalisation is timed too). A CVXPY run that reaches the
limit is reported as "timed out"; once a solver has timed out, larger n are not attempted
for it ("skipped"). Every answer is certified by the same dual-bound code, and the ratio is
CVXPY's time over ours.

Part 2 — the Table 3.2 analogue. Swiss roll (n = 2000, noise 0.05) and s-curve (n = 2000)
in 2-D, sklearn digits (n = 1797, 64-D, scaled to [0, 1]) in 3-D: variational MVU + refinement
(k = 5, m = 10, Sec. 3.1.8) against scikit-learn's PCA, Isomap, LLE and Laplacian eigenmaps
(SpectralEmbedding), all at k = 15 as in the thesis; the table reports local continuity
(3.27), local trust (3.28) and neighbourhood intersection (3.29) at l = 15, their harmonic
mean, and the time (with its ratio to Isomap's).

Part 3 — variational MVU at scale: a 10,000-point swiss roll (k = 5) and the sensor network
of Fig. 3.20 (``--sensors`` nodes in the unit square, radius 0.06, at most 20 neighbours, 10%
uniform distance noise). Time per stage (wall and CPU seconds), and the positional error after the best rigid
alignment (orthogonal Procrustes, no scaling) to the truth — the unrolled (arc length,
height) coordinates of the roll, the sensor positions — before and after the refinement.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/mvu.py [--parts 1,2,3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import report
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.manifold import Isomap, LocallyLinearEmbedding, SpectralEmbedding

from sdpembed._progress import track
from sdpembed.datasets import s_curve, sensor_network, swiss_roll
from sdpembed.formulations.mvu import solve_mvu_cvxpy, solve_variational_sdp
from sdpembed.graphs import connected_components, link_components, neighborhood_graph
from sdpembed.problems import MVUInstance
from sdpembed.solvers.mvu.ipm import solve_mvu_ipm
from sdpembed.solvers.mvu.variational import variational_mvu
from sdpembed.validation.embedding_quality import local_continuity, local_trust, neighborhood_intersection

ROOT = Path(__file__).resolve().parent.parent
TIME_LIMIT_OPTION = {"SCS": "time_limit_secs", "CLARABEL": "time_limit"}


# ---------------------------------------------------------------------------- part 1
def exact_part(sizes, limit: float, seed: int) -> list[dict]:
    print(f"Part 1: inequality MVU, swiss roll (noise 0.05, k = 5, angle edges); CVXPY limit {limit:g} s each",
          flush=True)
    print(f"  {'n':>5} {'E':>6} {'solver':<10} {'status':<12} {'objective':>14} {'cert. gap':>10} {'viol.':>9} "
          f"{'time s':>8} {'x ipm':>7}", flush=True)
    rows, timed_out = [], set()
    for n in track(sizes, "part 1 sizes", unit="size"):
        X, _ = swiss_roll(n, noise=0.05, random_state=seed)
        edges, D = neighborhood_graph(X, 5)
        instance = MVUInstance(edges=edges, sqdist=D, n=n, variant="inequality")
        runs = []
        t = time.perf_counter()
        r = solve_mvu_ipm(instance)
        runs.append(("ipm", r, time.perf_counter() - t, r.status))
        for solver in ("SCS", "CLARABEL"):
            if solver in timed_out:
                runs.append((solver, None, float("nan"), "skipped (timed out at a smaller n)"))
                continue
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = solve_mvu_cvxpy(instance, solver, max_points=10**6, **{TIME_LIMIT_OPTION[solver]: limit})
            elapsed = time.perf_counter() - t
            status = r.status
            if status != "optimal" and elapsed >= 0.9 * limit:
                status = "timed out"
                timed_out.add(solver)
            runs.append((solver, r, elapsed, status))
        ipm_time = runs[0][2]
        for solver, r, elapsed, status in runs:
            row = {"n": n, "edges": int(edges.shape[0]), "solver": solver, "status": status, "time_s": elapsed,
                   "ratio_to_ipm": elapsed / ipm_time if np.isfinite(elapsed) else float("nan")}
            if r is not None:
                row.update(objective=r.objective, dual_bound=r.dual_bound, relative_gap=r.relative_gap,
                           max_violation=r.max_violation, iterations=r.iterations,
                           solver_status=str(r.extra.get("cvxpy_status", r.status)))
                if solver != "ipm" and np.isfinite(r.objective):
                    row["relative_difference_to_ipm"] = abs(r.objective - runs[0][1].objective) / abs(
                        runs[0][1].objective)
            rows.append(row)
            if r is None:
                print(f"  {n:5d} {edges.shape[0]:6d} {solver:<10} {status}", flush=True)
            else:
                print(f"  {n:5d} {edges.shape[0]:6d} {solver:<10} {status:<12} {r.objective:14.6e} "
                      f"{r.relative_gap:10.1e} {r.max_violation:9.1e} {elapsed:8.1f} {row['ratio_to_ipm']:7.1f}",
                      flush=True)
    return rows


# ---------------------------------------------------------------------------- part 2
def _harmonic(values) -> float:
    v = np.asarray(values, dtype=np.float64)
    return float(len(v) / np.sum(1.0 / v)) if np.all(v > 0) else 0.0


def _variational_embedding(X: np.ndarray, d: int, k: int = 5, refine: bool = True,
                           basis: str = "laplacian") -> tuple[np.ndarray, dict]:
    edges, D = neighborhood_graph(X, k)
    count, _ = connected_components(X.shape[0], edges)
    if count > 1:
        edges, D = link_components(X, edges, random_state=0)        # Sec. 3.1.12
    # the LLE basis reconstructs each input from the same k neighbours as the graph
    result = variational_mvu(edges, D, X.shape[0], solve_sdp=solve_variational_sdp, n_components=d, refine=refine,
                             basis=basis, X=X, lle_neighbors=k)
    return result.embedding, {"components_linked": int(count), "sdp_status": result.sdp_status}


def table_part(seed: int, l: int = 15) -> list[dict]:
    digits = load_digits()
    datasets = [("swiss roll", swiss_roll(2000, noise=0.05, random_state=seed)[0], 2),
                ("s-curve", s_curve(2000, noise=0.02, random_state=seed)[0], 2),
                ("sklearn digits", digits.data / 16.0, 3)]
    methods = [
        ("var. MVU (CG)", lambda X, d: _variational_embedding(X, d)),
        ("PCA", lambda X, d: (PCA(d).fit_transform(X), {})),
        ("Isomap", lambda X, d: (Isomap(n_neighbors=15, n_components=d).fit_transform(X), {})),
        ("LLE", lambda X, d: (LocallyLinearEmbedding(n_neighbors=15, n_components=d, random_state=seed)
                              .fit_transform(X), {})),
        ("Laplacian eigenmaps", lambda X, d: (SpectralEmbedding(n_components=d, n_neighbors=15,
                                                                random_state=seed).fit_transform(X), {})),
    ]
    print(f"\nPart 2: Table 3.2 analogue (l = {l}; var. MVU at k = 5, the others at k = 15)", flush=True)
    print(f"  {'data set':<15} {'method':<20} {'contin.':>8} {'trust':>8} {'intersect':>9} {'h. mean':>8} "
          f"{'time s':>8} {'x Isomap':>9}", flush=True)
    rows = []
    for name, X, d in track(datasets, "part 2 data sets", unit="data set"):
        block = []
        for method, embed in methods:
            t = time.perf_counter()
            Y, info = embed(X, d)
            elapsed = time.perf_counter() - t
            c, tr, ni = local_continuity(X, Y, l), local_trust(X, Y, l), neighborhood_intersection(X, Y, l)
            block.append({"dataset": name, "n": int(X.shape[0]), "dim": d, "method": method, "continuity": c,
                          "trust": tr, "intersection": ni, "harmonic_mean": _harmonic([c, tr, ni]),
                          "time_s": elapsed, **info})
        iso = next(r["time_s"] for r in block if r["method"] == "Isomap")
        for r in block:
            r["time_ratio_to_isomap"] = r["time_s"] / iso
            print(f"  {name:<15} {r['method']:<20} {r['continuity']:8.3f} {r['trust']:8.3f} {r['intersection']:9.3f} "
                  f"{r['harmonic_mean']:8.3f} {r['time_s']:8.2f} {r['time_ratio_to_isomap']:9.2f}", flush=True)
        rows += block
    return rows


# ---------------------------------------------------------------------------- part 3
def procrustes_errors(Y: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """‖y_i R + c − t_i‖ after the best rotation/reflection R and translation c (no scaling)."""
    Yc, Tc = Y - Y.mean(axis=0), truth - truth.mean(axis=0)
    U, _, Vt = np.linalg.svd(Yc.T @ Tc)
    return np.linalg.norm(Yc @ (U @ Vt) - Tc, axis=1)


def roll_arc_length(t: np.ndarray) -> np.ndarray:
    """Arc length of the spiral (t cos t, t sin t) from 0: ½(t√(1+t²) + asinh t)."""
    return 0.5 * (t * np.sqrt(1.0 + t * t) + np.arcsinh(t))


def scale_part(n_roll: int, n_sensors: int, seed: int) -> list[dict]:
    print("\nPart 3: variational MVU + refinement at scale (m = 10)", flush=True)
    rows = []
    X, params = swiss_roll(n_roll, noise=0.05, random_state=seed)
    truth = np.column_stack([roll_arc_length(params[:, 0]), params[:, 1]])
    t = time.perf_counter()
    edges, D = neighborhood_graph(X, 5)
    t_graph = time.perf_counter() - t
    rows.append(_scale_run(f"swiss roll n = {n_roll} (k = 5)", edges, D, truth, t_graph,
                           unit=float(np.median(np.sqrt(D))), unit_name="median edge length"))

    t = time.perf_counter()
    positions, edges, D = sensor_network(n_sensors, radius=0.06, max_neighbors=20, noise=0.1, random_state=seed)
    t_graph = time.perf_counter() - t
    count, labels = connected_components(n_sensors, edges)
    note = ""
    if count > 1:                          # keep the largest component (its own nodes renumbered)
        keep = labels == np.argmax(np.bincount(labels))
        new = np.cumsum(keep) - 1
        inside = keep[edges[:, 0]] & keep[edges[:, 1]]
        edges, D, positions = new[edges[inside]], D[inside], positions[keep]
        note = f"{count} components: the largest ({int(keep.sum())} nodes) is localised"
    rows.append(_scale_run(f"sensor network n = {n_sensors}", edges, D, positions, t_graph, unit=0.06,
                           unit_name="radius 0.06", note=note))
    return rows


def _scale_run(name, edges, D, truth, t_graph, unit, unit_name, note="") -> dict:
    n = truth.shape[0]
    result = variational_mvu(edges, D, n, solve_sdp=solve_variational_sdp, n_components=2)
    from sdpembed.solvers.mvu.variational import _principal

    before = procrustes_errors(_principal(result.sdp_embedding, 2), truth)
    after = procrustes_errors(result.embedding, truth)
    row = {"problem": name, "n": int(n), "edges": int(edges.shape[0]), "graph_time_s": t_graph,
           "times_s": result.times, "total_time_s": result.times["total"], "cpu_times_s": result.cpu_times,
           "total_cpu_s": result.cpu_times["total"], "sdp_status": result.sdp_status,
           "energy_sdp": result.energy_sdp, "energy": result.energy,
           "median_error_sdp": float(np.median(before)), "median_error": float(np.median(after)),
           "p90_error": float(np.quantile(after, 0.9)), "max_error": float(after.max()),
           "unit": unit_name, "median_error_relative": float(np.median(after)) / unit,
           "median_error_sdp_relative": float(np.median(before)) / unit,
           "extent": float(np.ptp(truth, axis=0).max()),
           "median_error_relative_to_extent": float(np.median(after)) / float(np.ptp(truth, axis=0).max()),
           "note": note}
    print(f"  {name}: E = {row['edges']}, graph {t_graph:.1f}s, basis {result.times['basis']:.1f}s, "
          f"SDP {result.times['sdp']:.1f}s ({result.sdp_status}), refinement "
          f"{result.times.get('refine_full', 0.0) + result.times.get('refine', 0.0):.1f}s, total "
          f"{result.times['total']:.1f}s (CPU {result.cpu_times['total']:.1f}s)", flush=True)
    print(f"    median positional error after Procrustes: SDP {row['median_error_sdp']:.4g} "
          f"({100 * row['median_error_sdp_relative']:.1f}% of the {unit_name}), refined {row['median_error']:.4g} "
          f"({100 * row['median_error_relative']:.2f}%; {100 * row['median_error_relative_to_extent']:.2f}% of the "
          f"extent {row['extent']:.3g}); 90th percentile {row['p90_error']:.4g}, max "
          f"{row['max_error']:.4g}  {note}", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="1,2,3")
    parser.add_argument("--sizes", default="100,200,400")
    parser.add_argument("--cvxpy-limit", type=float, default=120.0, help="seconds per CVXPY solve")
    parser.add_argument("--roll", type=int, default=10_000)
    parser.add_argument("--sensors", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "mvu.json"))
    args = parser.parse_args()
    parts = {int(p) for p in args.parts.split(",")}
    start = time.perf_counter()
    previous = Path(args.json)
    out = json.loads(previous.read_text()) if previous.exists() else {}   # parts not run keep their rows
    out["benchmark"] = "mvu"
    if 1 in parts:
        out["exact"] = {"cvxpy_limit_s": args.cvxpy_limit,
                        "rows": exact_part([int(s) for s in args.sizes.split(",")], args.cvxpy_limit, args.seed)}
    if 2 in parts:
        out["table_3_2"] = table_part(args.seed)
    if 3 in parts:
        out["scale"] = scale_part(args.roll, args.sensors, args.seed)
    stamp = {**report.run_stamp(), "seconds": round(time.perf_counter() - start)}
    names = {1: "exact", 2: "table_3_2", 3: "scale"}
    out.setdefault("stamps", {}).update({names[part]: stamp for part in parts})   # parts not run keep theirs
    report.write_results(args.json, out, stamp)


if __name__ == "__main__":
    main()
