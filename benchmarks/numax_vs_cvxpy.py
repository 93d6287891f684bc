"""Benchmark: NuMax ADMM (Algorithm 1) against CVXPY on the Foundation issue's instance.

Translating squares, 16×16 images with 8×8 squares (81 images, N = 256), 1000 secants
sampled with seed 0, δ = 0.1. Every method runs in this process, one after the other;
speed is reported as the ratio to the ADMM time measured in the same run.

Rows:
  admm                 the default hand-written solver (span reduction on)
  admm (no reduction)  the same ADMM on the full 256×256 matrix
  cvxpy+SCS            the literal model (4) with SCS at its defaults — the peer
  cvxpy+SCS (reduced)  the model in the span of the secants (exactly equivalent)
  cvxpy+CLARABEL       only with --clarabel (≈ 7 minutes on 2 cores)

Accuracy is measured against the Clarabel optimum: computed with --clarabel, otherwise
read from tests/data/numax_squares16_s1000.json (written by tests/data/make_golden.py).

    python benchmarks/numax_vs_cvxpy.py [--clarabel] [--repeat 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import report

from sdpembed import NuMaxInstance, solve
from sdpembed.datasets import translating_squares

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "numax_squares16_s1000.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clarabel", action="store_true", help="also run CVXPY+Clarabel (slow)")
    parser.add_argument("--repeat", type=int, default=3, help="ADMM repetitions (the median time is kept)")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "numax_vs_cvxpy.json"))
    args = parser.parse_args()

    instance = NuMaxInstance.from_points(translating_squares(16, 8), 0.1, n_secants=1000, random_state=0)
    runs = []

    def record(label, method, repeat=1, **options):
        results = [solve(instance, method, **options) for _ in range(repeat)]
        times = sorted(r.wall_time for r in results)
        result = results[0]
        runs.append((label, result, times[len(times) // 2]))
        print(f"  {label:<22} {result.status:<12} {times[len(times) // 2]:8.2f} s", flush=True)

    print("running (N = 256, S = 1000, delta = 0.1) ...", flush=True)
    record("admm", "admm", repeat=args.repeat)
    record("admm (no reduction)", "admm", repeat=args.repeat, reduce=False)
    record("cvxpy+SCS", "cvxpy", solver="SCS", reduce=False)
    record("cvxpy+SCS (reduced)", "cvxpy", solver="SCS")
    if args.clarabel:
        record("cvxpy+CLARABEL", "cvxpy", solver="CLARABEL")

    clarabel = [r for label, r, _ in runs if label == "cvxpy+CLARABEL"]
    if clarabel and clarabel[0].status == "optimal":
        optimum, source = clarabel[0].objective, "CVXPY+Clarabel, this run"
    else:
        meta = json.loads(GOLDEN.read_text())
        optimum, source = meta["optimum"], f"CVXPY+Clarabel, stored in {GOLDEN.relative_to(ROOT)}"

    admm_time = runs[0][2]
    header = (f"{'method':<22}{'status':<12}{'time [s]':>9}{'vs admm':>9}{'objective':>14}"
              f"{'rel. error':>11}{'violation':>11}{'least eig':>11}{'cert. gap':>11}")
    print(f"\nreference optimum {optimum:.8f} ({source})\n{header}\n{'-' * len(header)}")
    rows = []
    for label, r, t in runs:
        error = abs(r.objective - optimum) / abs(optimum)
        print(f"{label:<22}{r.status:<12}{t:9.2f}{t / admm_time:9.1f}{r.objective:14.8f}"
              f"{error:11.1e}{r.max_violation:11.1e}{r.min_eigenvalue:11.1e}{r.relative_gap:11.1e}")
        rows.append({**r.summary(), "label": label, "time_s": t, "ratio_to_admm": t / admm_time,
                     "relative_error": error})
    out = {
        "benchmark": "numax_vs_cvxpy",
        "instance": "translating squares 16x16 / 8x8, 1000 secants (seed 0), delta 0.1",
        "reference_optimum": optimum,
        "reference_source": source,
        "rows": rows,
    }
    report.write_results(args.json, out)


if __name__ == "__main__":
    main()
