"""Benchmark: ball-tree search for LMNN's target neighbours and active hinges against the brute-force scans.

Thesis Sec. 2.1.8 (Fig. 2.13, 2.16): ball trees speed up the search for target neighbours and for
active hinges (2.20) in few dimensions, less and less as the dimension grows. Here, on ``--n``
vendored MNIST test images projected onto their r leading principal components (r from
``--dims``), each search is timed (CPU time, best of ``--repeat``) by

* target neighbours: :func:`sdpembed.graphs.target_neighbors` (brute force, Gram blocks) and
  :func:`sdpembed.graphs.balltree_target_neighbors` (one scikit-learn BallTree per class);
* active hinges at M = I: :func:`sdpembed.graphs.impostor_triplets` (the brute-force scan over all
  k Σ_i (n − n_{y_i}) triplets), :func:`sdpembed.graphs.radius_hinges` (the float32 Gram radius
  filter the LMNN solvers use) and :func:`sdpembed.graphs.balltree_hinges` (range queries (2.20)),

in the same process, one after the other, and each answer is checked to be the brute-force one.
The hinge count depends on the scale of the data against the unit margin (the thesis' remark after
Fig. 2.16), so the projected data are scaled to a mean target distance² of each ``--scales`` value.

    OPENBLAS_NUM_THREADS=1 python benchmarks/balltree.py [--n 3000] [--dims 2,3,5,8,10,15,20,30,50]
        [--scales 1,10] [--repeat 3] [--k 3]
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import report  # noqa: E402
from report import best_cpu  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sdpembed.datasets import load_mnist  # noqa: E402
from sdpembed.graphs import (  # noqa: E402
    balltree_hinges,
    balltree_target_neighbors,
    impostor_triplets,
    radius_hinges,
    target_neighbors,
)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--dims", default="2,3,5,8,10,15,20,30,50")
    parser.add_argument("--scales", default="1,10")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(report.RESULTS / "balltree.json"))
    args = parser.parse_args(argv)
    dims = [int(v) for v in args.dims.split(",")]
    scales = [float(v) for v in args.scales.split(",")]
    X, y = load_mnist(n_samples=args.n, random_state=0)
    balltree_target_neighbors(X[:40, :2], y[:40] % 2, 1)      # imports scikit-learn outside the timings
    Xc = X - X.mean(axis=0)
    _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
    targets_rows, hinge_rows = [], []
    for r in dims:
        Z = Xc @ Vt[:r].T
        brute_s, T = best_cpu(lambda Z=Z: target_neighbors(Z, y, args.k), args.repeat)
        tree_s, T_tree = best_cpu(lambda Z=Z: balltree_target_neighbors(Z, y, args.k), args.repeat)
        targets_rows.append({"r": r, "brute_cpu_s": brute_s, "balltree_cpu_s": tree_s, "ratio": brute_s / tree_s,
                             "same": bool(np.array_equal(T, T_tree))})
        print(f"targets r={r:3d}: brute {brute_s:.3f} s  balltree {tree_s:.3f} s  ratio {brute_s / tree_s:.2f}",
              flush=True)
        target_d2 = float(np.mean(np.sum((Z[:, None, :] - Z[T]) ** 2, axis=2)))
        for scale in scales:
            Zs = Z * np.sqrt(scale / target_d2)
            brute_s, brute = best_cpu(lambda Zs=Zs, T=T: impostor_triplets(Zs, y, T), args.repeat)
            radius_s, radius = best_cpu(lambda Zs=Zs, T=T: radius_hinges(Zs, y, T)[0], args.repeat)
            tree_s, tree = best_cpu(lambda Zs=Zs, T=T: balltree_hinges(Zs, y, T)[0], args.repeat)
            hinge_rows.append({"r": r, "scale": scale, "active": int(brute.shape[0]),
                               "triplets": int(args.k * np.sum(args.n - np.bincount(y)[y])),
                               "brute_cpu_s": brute_s, "radius_cpu_s": radius_s, "balltree_cpu_s": tree_s,
                               "ratio": brute_s / tree_s, "ratio_radius": radius_s / tree_s,
                               "same": bool(np.array_equal(brute, tree) and np.array_equal(brute, radius))})
            print(f"hinges  r={r:3d} scale {scale:g}: active {brute.shape[0]:8d}  brute {brute_s:.3f} s  radius "
                  f"{radius_s:.3f} s  balltree {tree_s:.3f} s  brute/balltree {brute_s / tree_s:.2f}", flush=True)
    out = {"n": args.n, "k": args.k, "dims": dims, "scales": scales, "repeat": args.repeat,
           "targets": targets_rows, "hinges": hinge_rows}
    report.write_results(args.out, out)
    return out


if __name__ == "__main__":
    main()
