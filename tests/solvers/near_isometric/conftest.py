"""Shared by the near-isometric tests: the squares data, NuMax's certified bounds on it, and the
comparisons with NuMax that are theorems for a feasible map."""

import numpy as np
import pytest

from sdpembed.datasets import translating_squares
from sdpembed.isometry import isometry_constants
from sdpembed.secants import all_secants
from sdpembed.solvers.numax.column_generation import column_generation

#: NuMax's optimal ranks on translating_squares(7, 3) (25 images of 7×7, 300 secants)
NUMAX_RANK = {0.4: 7, 0.25: 8, 0.1: 11}


@pytest.fixture(scope="module")
def squares():
    X = translating_squares(7, 3)
    V, pairs = all_secants(X, return_pairs=True)
    return X, V, pairs


@pytest.fixture(scope="module")
def numax_bounds(squares):
    """Certified NuMax dual bounds (lower bounds on the optimal trace) per δ, from NuMax-CG."""
    X = squares[0]
    out = {}
    for delta in NUMAX_RANK:
        res = column_generation(X, lambda i, j, d=delta: (np.full(i.shape, 1 - d), np.full(i.shape, 1 + d)),
                                random_state=0)
        assert res.status == "optimal"
        out[delta] = res.dual_bound
    return out


def check_provable(Psi, delta, bound, secants=None, X=None):
    """Independent δ check, and the NuMax comparisons that are theorems for a feasible map."""
    iso = isometry_constants(Psi, secants=secants, X=X).delta
    assert iso <= delta
    frobenius2 = float(np.sum(Psi * Psi))
    assert frobenius2 >= bound * (1 - 1e-9)                       # ΨᵀΨ is feasible for NuMax (4)
    assert Psi.shape[0] >= bound / np.linalg.norm(Psi, 2) ** 2 - 1e-9   # tr P ≤ rank·λ_max
    return iso
