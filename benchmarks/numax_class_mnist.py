"""Benchmark: NuMax vs NuMax-Class for classification (NuMax Table 2 and Fig. 12 analogues).

Part 1 — MNIST (the vendored 20×20 test images, N = 400). A seeded permutation of the 10,000
images gives a training set of ``--n-train`` images and a disjoint test set of ``--n-test``
images. For each δ ∈ {0.4, 0.25, 0.1}, NuMax and NuMax-Class are solved on *all* pairs of the
training images by column generation (certified), and the table reports the rank M, the
1-NN test error in the embedded space, the active secants (working pairs within 1e-4 of a
bound), the solve time, and the 1-NN error of PCA and of a Gaussian map at the same M.

Part 2 — the toy problem of Fig. 12: translating disks vs squares (16×16 images, size 6).
As in the paper's GMLC set-up the training images cover both class manifolds (every
translate); the test signals are fresh noisy copies of them (Gaussian pixel noise of standard
deviation ``--noise``, ``--copies`` per image), classified by 1-NN from M measurements, for
NuMax-Class at several δ and PCA / Gaussian maps of the same M.

    python benchmarks/numax_class_mnist.py [--n-train 200] [--n-test 2000] [--json PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import report
from sklearn.neighbors import KNeighborsClassifier

from sdpembed import NuMaxClassInstance, NuMaxInstance, solve
from sdpembed._progress import track
from sdpembed.datasets import disks_and_squares, load_mnist
from sdpembed.linear import embedding_from_psd, gaussian_projection, pca_projection

ROOT = Path(__file__).resolve().parent.parent


def knn_error(Psi, X_train, y_train, X_test, y_test) -> float:
    """1-NN test error (%) after embedding with Ψ."""
    model = KNeighborsClassifier(1).fit(X_train @ Psi.T, y_train)
    return 100.0 * (1.0 - model.score(X_test @ Psi.T, y_test))


def active_secants(result, X, instance) -> int:
    """Working pairs whose constraint is within 1e-4 of its bound at the solution."""
    pairs = result.extra["pairs"]
    D = X[pairs[:, 0]] - X[pairs[:, 1]]
    values = np.einsum("ij,ij->i", D @ result.solution, D) / np.einsum("ij,ij->i", D, D)
    if isinstance(instance, NuMaxClassInstance):
        lo, hi = instance.pair_bounds(instance.y[pairs[:, 0]] == instance.y[pairs[:, 1]])
    else:
        lo, hi = np.full(len(values), 1 - instance.delta), np.full(len(values), 1 + instance.delta)
    return int(np.sum((values - lo <= 1e-4) | (hi - values <= 1e-4)))


def mnist_part(n_train: int, n_test: int, seed: int) -> tuple[list[dict], str]:
    X, y = load_mnist(size=20)
    order = np.random.default_rng(seed).permutation(len(y))
    tr, te = order[:n_train], order[n_train : n_train + n_test]
    split = (f"MNIST 20x20 test set: {n_train} training and {n_test} disjoint test images "
             f"(seeded permutation, seed {seed}); {n_train * (n_train - 1) // 2} training pairs")
    print(split, flush=True)
    rows = []
    for delta in track((0.4, 0.25, 0.1), "MNIST deltas", unit="delta"):
        for name, instance in (("NuMax", NuMaxInstance(delta=delta, X=X[tr])),
                               ("NuMax-Class", NuMaxClassInstance(delta=delta, X=X[tr], y=y[tr]))):
            result = solve(instance, random_state=seed)
            Psi = embedding_from_psd(result.solution)
            M = Psi.shape[0]
            row = {
                "delta": delta, "method": name, "status": result.status, "rank": M,
                "knn_error": knn_error(Psi, X[tr], y[tr], X[te], y[te]),
                "pca_error": knn_error(pca_projection(X[tr], M), X[tr], y[tr], X[te], y[te]),
                "gaussian_error": knn_error(gaussian_projection(M, X.shape[1], random_state=seed),
                                            X[tr], y[tr], X[te], y[te]),
                "active_secants": active_secants(result, X[tr], instance),
                "working_pairs": int(len(result.extra["pairs"])), "rounds": int(result.extra["rounds"]),
                "time_s": result.wall_time, "relative_gap": result.relative_gap,
                "max_violation": result.max_violation,
            }
            rows.append(row)
            print(f"  delta {delta:<5} {name:<12} {row['status']:<9} M {M:4d}  1-NN error {row['knn_error']:6.2f}%  "
                  f"(PCA {row['pca_error']:6.2f}%, Gaussian {row['gaussian_error']:6.2f}%)  active "
                  f"{row['active_secants']:5d}  time {row['time_s']:7.1f}s  gap {row['relative_gap']:.1e}", flush=True)
    return rows, split


def toy_part(noise: float, copies: int, seed: int) -> tuple[list[dict], str]:
    X, y = disks_and_squares(16, 6)
    tr = np.arange(len(y))
    te = np.tile(tr, copies)
    X_test = X[te] + noise * np.random.default_rng(seed + 1).standard_normal((len(te), X.shape[1]))
    split = (f"disks vs squares (16x16, size 6): all {len(tr)} translates train; {len(te)} test signals = "
             f"{copies} noisy copies of each (pixel noise sigma {noise:g})")
    print(split, flush=True)
    rows = []
    for delta in track((0.5, 0.3, 0.2, 0.1), "toy deltas", unit="delta"):
        result = solve(NuMaxClassInstance(delta=delta, X=X[tr], y=y[tr]), random_state=seed)
        Psi = embedding_from_psd(result.solution)
        M = Psi.shape[0]
        row = {
            "delta": delta, "status": result.status, "rank": M,
            "numax_class_error": knn_error(Psi, X[tr], y[tr], X_test, y[te]),
            "pca_error": knn_error(pca_projection(X[tr], M), X[tr], y[tr], X_test, y[te]),
            "gaussian_error": knn_error(gaussian_projection(M, X.shape[1], random_state=seed), X[tr], y[tr],
                                        X_test, y[te]),
            "time_s": result.wall_time,
        }
        rows.append(row)
        print(f"  delta {delta:<4} {row['status']:<9} M {M:3d}  error NuMax-Class {row['numax_class_error']:6.2f}%  "
              f"PCA {row['pca_error']:6.2f}%  Gaussian {row['gaussian_error']:6.2f}%  time {row['time_s']:.1f}s",
              flush=True)
    return rows, split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=200)
    parser.add_argument("--n-test", type=int, default=2000)
    parser.add_argument("--noise", type=float, default=0.5)
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--toy-only", action="store_true", help="run only part 2")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "numax_class_mnist.json"))
    args = parser.parse_args()
    start = time.perf_counter()
    mnist_rows, mnist_split = ([], "not run") if args.toy_only else mnist_part(args.n_train, args.n_test, args.seed)
    toy_rows, toy_split = toy_part(args.noise, args.copies, args.seed)
    out = {
        "benchmark": "numax_class_mnist",
        "mnist": {"split": mnist_split, "rows": mnist_rows},
        "toy": {"split": toy_split, "rows": toy_rows},
        "total_time_s": time.perf_counter() - start,
    }
    report.write_results(args.json, out)


if __name__ == "__main__":
    main()
