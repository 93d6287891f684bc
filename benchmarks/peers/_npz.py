"""The file side of every peer adapter: read a suite instance, write a solution, skip an instance.

numpy only (any numpy ≥ 1.20), so an adapter runs in the peers' own environment (NumPy 1.x beside
metric-learn and pylmnn) without sdpembed. The arrays are those of the README's "Files: the
oracle's language" table.
"""

from __future__ import annotations

import sys

import numpy as np

SKIP_EXIT_CODE = 3          # `sdpembed suite run` grades exit code 3 as SKIP: "not handled"


def read_instance(path: str) -> dict:
    """The instance's arrays by name; 0-d arrays become Python scalars and strings."""
    with np.load(path, allow_pickle=False) as data:
        return {key: (data[key].item() if data[key].ndim == 0 else data[key]) for key in data.files}


def write_solution(path: str, **arrays) -> None:
    """Write the solution variable (``P``, ``M``, ``K`` or ``S``) as a float64 ``.npz``."""
    with open(path, "wb") as file:
        np.savez(file, **{key: np.asarray(value, dtype=np.float64) for key, value in arrays.items()})


def skip(reason: str) -> None:
    """Exit with the suite's skip code: this peer does not handle this kind of instance."""
    print(reason, file=sys.stderr)
    raise SystemExit(SKIP_EXIT_CODE)


def unit_secants(X: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Normalised differences X_i − X_j (rows); zero differences (duplicate points) are dropped, as
    sdpembed's ``all_secants`` drops them."""
    diff = X[i] - X[j]
    norms = np.linalg.norm(diff, axis=1)
    keep = norms > 1e-12 * max(1.0, float(np.abs(X).max()))
    return diff[keep] / norms[keep, None]


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair i < j of n points, in row-major order."""
    return np.triu_indices(n, k=1)
