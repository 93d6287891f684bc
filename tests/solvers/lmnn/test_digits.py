"""LMNN acceptance on a digits subset (issue 5): the default solver against the all-triplet CVXPY
optimum, M ⪰ 0, certified gap ≤ 1e-4, and the working-set ground truth equal to the full one."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA

from sdpembed import LMNNInstance, certify, solve
from sdpembed.formulations.lmnn import solve_lmnn_cvxpy, solve_lmnn_working_set


@pytest.fixture(scope="module")
def digits_instance():
    """Digits 0, 3, 8 (12 images each, seeded), PCA to 6 dimensions, standardised; k = 2."""
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(7)
    idx = np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), 12, replace=False) for c in (0, 3, 8)]))
    Z = PCA(6, random_state=0).fit_transform(X[idx])
    Z = (Z - Z.mean(axis=0)) / Z.std(axis=0)
    return LMNNInstance.from_data(Z, y[idx], k=2, mu=0.5)


def test_default_solver_matches_the_full_sdp_on_digits(digits_instance):
    truth = solve_lmnn_cvxpy(digits_instance)               # Clarabel at the package defaults
    assert truth.status == "optimal" and truth.relative_gap < 1e-6
    result = solve(digits_instance)                         # the registry default ("fast")
    assert result.status == "optimal"
    assert abs(result.objective - truth.objective) <= 1e-4 * truth.objective
    assert result.relative_gap <= 1e-4
    assert result.dual_bound <= truth.objective * (1 + 1e-9)
    assert np.linalg.eigvalsh(result.solution)[0] >= -1e-9 * np.abs(result.solution).max()
    report = certify(digits_instance, result, optimum=truth.objective)
    assert report.passed, report.reasons


def test_working_set_ground_truth_equals_all_triplets_on_digits(digits_instance):
    full = solve_lmnn_cvxpy(digits_instance)
    ws = solve_lmnn_working_set(digits_instance)
    assert ws.status == "optimal" and len(ws.extra["triplets"]) < digits_instance.n_triplets
    assert ws.objective == pytest.approx(full.objective, rel=1e-6)
