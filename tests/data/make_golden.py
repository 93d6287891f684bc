"""Rebuild the golden NuMax instance used by the agreement tests (takes ~7 minutes).

The N = 256 translating-squares instance of the issue's benchmark (16×16 images, 8×8
squares, 1000 secants sampled with seed 0, δ = 0.1) is too slow for Clarabel inside the
test suite (an interior-point solve of ~400 s on this 2-core machine), so its Clarabel
optimum is computed here once and stored in the instance file as ``optimum``, together
with the certified dual bound, the solver, its status and the time it took. The tests
solve the same instance live with SCS and with the ADMM and compare against it.

    python tests/data/make_golden.py
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

import numpy as np

from sdpembed.datasets import translating_squares
from sdpembed.formulations.numax import solve_numax_cvxpy
from sdpembed.problems import NuMaxInstance

HERE = Path(__file__).parent


def golden_instance() -> NuMaxInstance:
    """The benchmark instance: squares 16×16 / 8×8, 1000 secants (seed 0), δ = 0.1."""
    return NuMaxInstance.from_points(translating_squares(16, 8), 0.1, n_secants=1000, random_state=0)


def main() -> None:
    instance = golden_instance()
    result = solve_numax_cvxpy(instance, solver="CLARABEL")
    if result.status != "optimal":
        raise SystemExit(f"Clarabel did not certify the golden instance: {result}")
    arrays = instance.to_arrays()
    arrays["optimum"] = np.array(result.objective)
    np.savez_compressed(HERE / "numax_squares16_s1000.npz", **arrays)
    meta = {
        "instance": "numax_squares16_s1000.npz",
        "optimum": result.objective,
        "dual_bound": result.dual_bound,
        "relative_gap": result.relative_gap,
        "max_violation": result.max_violation,
        "min_eigenvalue": result.min_eigenvalue,
        "solver": result.solver,
        "status": result.status,
        "wall_time_s": result.wall_time,
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "command": "python tests/data/make_golden.py",
    }
    (HERE / "numax_squares16_s1000.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    main()
