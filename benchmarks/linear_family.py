"""Benchmark: the linear-embedding family on one δ-vs-M footing (issue 8).

For every linear method of :data:`sdpembed.linear.LINEAR_METHODS` (PCA exact and randomized,
Gaussian and Rademacher projections, ADAGIO with exact and randomized PCA, FroMax and NILE-Pro
where registered) and NuMax: the dimension M each needs for an isometry constant δ on *all*
training secants, δ ∈ {0.05, 0.1, 0.2}, and the time. Methods without a native δ get the
smallest M found by :func:`sdpembed.linear.embed` (bisection on M, exact for PCA, one seed per M
for the random maps); NuMax, FroMax and NILE-Pro take δ directly.

Two distortion measures (``sdpembed.linear.methods``): NuMax's RIP (2) on squared norms —
the δ of the NuMax SDP, the common footing — and ADAGIO's (3), |‖Ψv‖/‖v‖ − 1|, the definition
behind ADAGIO's Table 3 (about twice as lenient; NuMax is solved only under (2)).

Part (a) — translating squares, 16×16 images of an 8×8 square (81 images, 3,240 secants).
Part (b) — ADAGIO Table 3: 800 seeded MNIST test images at 28×28 (319,600 secants). NuMax's
ranks and times there come from ``benchmarks/numax_mnist.py --parts a`` (its JSON,
``benchmarks/results/numax_mnist_table3.json``, 15 minutes at δ = 0.05), unless
``--numax-mnist`` re-runs NuMax-CG here.

Times: ``search_s`` is the whole search for M (several fits); ``fit_s`` one fit at the chosen M
(the run time ADAGIO's Table 3 reports).

    OPENBLAS_NUM_THREADS=1 python benchmarks/linear_family.py [--parts ab] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from sdpembed.datasets import load_mnist, translating_squares
from sdpembed.linear import LINEAR_METHODS, embed
from sdpembed.validation import SecantSet

ROOT = Path(__file__).resolve().parent.parent
DELTAS = (0.05, 0.1, 0.2)

#: label -> (method, constructor options); the rows of the tables, in order.
BASELINES = {
    "PCA": ("pca", {}),
    "PCA (randomized)": ("pca_randomized", {}),
    "Gaussian": ("gaussian", {}),
    "Rademacher (JL)": ("rademacher", {}),
    "ADAGIO": ("adagio", {}),
    "ADAGIO (randomized PCA)": ("adagio", {"pca_solver": "randomized"}),
}
#: Methods with a native δ (solved under RIP (2) only), where registered.
NATIVE = {"NuMax": ("numax", {}), "FroMax": ("fromax", {}), "NILE-Pro": ("nilepro", {})}

#: ADAGIO Table 3 (Błasiok and Tsourakakis), MNIST-800, measure (3) for PCA/JL/ADAGIO:
#: (dimension, seconds); None where the paper reports none.
PUBLISHED_TABLE3 = {
    "PCA": {0.05: (337, 5.18), 0.1: (280, 5.1), 0.2: (205, 4.84)},
    "Rademacher (JL)": {0.05: (None, None), 0.1: (None, None), 0.2: (260, 0.45)},
    "NuMax": {0.05: (83, 1105.0), 0.1: (59, 373.0), 0.2: (42, 220.0)},
    "ADAGIO": {0.05: (298, 5.6), 0.1: (187, 5.5), 0.2: (95, 4.8)},
    "ADAGIO (randomized PCA)": {0.05: (298, 6.64), 0.1: (190, 4.01), 0.2: (98, 1.82)},
}


def run_method(label: str, method: str, options: dict, X: np.ndarray, delta: float, measure: str,
               secant_set: SecantSet) -> dict:
    """One (method, δ, measure) cell: the dimension found, its training δ, search and fit times."""
    row = {"method": label, "name": method, "delta": delta, "measure": measure}
    start = time.perf_counter()
    try:
        model = embed(method, X, delta=delta, measure=measure, random_state=0, **options)
    except ValueError as exc:                            # the δ is out of reach for this method
        row.update(dim=None, note=str(exc).split(";")[0], search_s=time.perf_counter() - start)
        return row
    row["search_s"] = time.perf_counter() - start
    row["dim"] = int(model.n_components_)
    row["train_delta"] = float(secant_set.isometry_constant(model.components_, measure))
    selection = getattr(model, "selection_", None)
    if selection is None:                                # native δ: the search was the fit
        row["fit_s"] = row["search_s"]
    else:
        start = time.perf_counter()
        embed(method, X, dim=row["dim"], random_state=0, **options)
        row["fit_s"] = time.perf_counter() - start
    result = getattr(model, "result_", None)
    if result is not None and hasattr(result, "status"):
        row["status"] = str(result.status)
    return row


def table(X: np.ndarray, name: str, native: bool, measures=("rip", "adagio")) -> list[dict]:
    """Every method at every δ (and measure) on the points X."""
    secant_set = SecantSet(X=X)
    rows = []
    print(f"\n{name}: n = {X.shape[0]}, N = {X.shape[1]}, {secant_set.n_secants} secants", flush=True)
    print(f"  {'method':<26}{'measure':<8}" + "".join(f"{'M @ ' + str(d):>12}" for d in DELTAS)
          + f"{'fit s @ 0.1':>13}", flush=True)
    groups = [(label, spec, measure) for label, spec in BASELINES.items() for measure in measures]
    if native:
        groups += [(label, spec, "rip") for label, spec in NATIVE.items() if spec[0] in LINEAR_METHODS]
    for label, (method, options), measure in groups:
        cells = [run_method(label, method, options, X, delta, measure, secant_set) for delta in DELTAS]
        rows += cells
        dims = "".join(f"{('–' if c['dim'] is None else c['dim']):>12}" for c in cells)
        fit = cells[1].get("fit_s")
        print(f"  {label:<26}{measure:<8}{dims}{'' if fit is None else f'{fit:13.2f}'}", flush=True)
    return rows


def numax_mnist_rows(path: Path) -> list[dict]:
    """NuMax-CG's MNIST-800 ranks and times from the numax_mnist benchmark's JSON."""
    data = json.loads(path.read_text())
    return [{"method": "NuMax", "name": "numax", "delta": row["delta"], "measure": "rip", "dim": row["rank"],
             "fit_s": row["time_s"], "status": row["status"], "relative_gap": row["relative_gap"],
             "source": f"{path.relative_to(ROOT)} ({data.get('date')})"} for row in data["table3"]["rows"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="ab")
    parser.add_argument("--n-points", type=int, default=800)
    parser.add_argument("--numax-mnist", action="store_true", help="re-run NuMax-CG on MNIST-800 (about 25 min)")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "linear_family.json"))
    args = parser.parse_args()
    start = time.perf_counter()
    out: dict = {"benchmark": "linear_family"}
    if "a" in args.parts:
        X = translating_squares(16, 8)
        out["squares"] = {"setup": "translating squares, 16x16 images of an 8x8 square (81 images)",
                          "rows": table(X, "translating squares 16x16", native=True)}
    if "b" in args.parts:
        X, _ = load_mnist(size=28, n_samples=args.n_points, random_state=0)
        rows = table(X, f"MNIST-{args.n_points} (28x28)", native=args.numax_mnist)
        if not args.numax_mnist:
            rows += numax_mnist_rows(ROOT / "benchmarks" / "results" / "numax_mnist_table3.json")
            print("  NuMax (from numax_mnist_table3.json): "
                  + ", ".join(f"δ = {r['delta']}: M = {r['dim']} in {r['fit_s']:.0f} s" for r in rows[-3:]))
        out["mnist"] = {"setup": f"{args.n_points} MNIST test images (28x28, seeded sample, seed 0), all pairs",
                        "rows": rows, "published_table3": {k: {str(d): v for d, v in p.items()}
                                                          for k, p in PUBLISHED_TABLE3.items()}}
    out.update(date=time.strftime("%Y-%m-%d"), total_time_s=time.perf_counter() - start,
               threads={k: os.environ.get(k, "unset") for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")},
               machine=f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=2, default=float) + "\n")
    print(f"wrote {args.json} ({out['total_time_s']:.0f} s)")


if __name__ == "__main__":
    main()
