"""Ball-tree search for target neighbours and active hinges (thesis (2.19)–(2.20)): the same
neighbours and the same active triplets as the brute-force scans, ties included."""

import numpy as np
import pytest

from sdpembed.graphs import balltree_hinges, balltree_target_neighbors, impostor_triplets, target_neighbors
from sdpembed.graphs.targets import radius_hinges

from .test_targets import brute_hinges, brute_targets


def random_case(seed):
    """Random points; every other case on an integer grid, so that distances tie exactly."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(15, 90)), int(rng.integers(1, 5))
    X = rng.integers(0, 3, size=(n, d)).astype(float) if seed % 2 else rng.standard_normal((n, d))
    y = rng.integers(0, 3, size=n)
    while np.bincount(y, minlength=3).min() < 4:
        y = rng.integers(0, 3, size=n)
    return rng, X, y


@pytest.mark.parametrize("seed", range(12))
def test_target_neighbours_match_brute_force(seed):
    _, X, y = random_case(seed)
    for k in (1, 3):
        found = balltree_target_neighbors(X, y, k, leaf_size=4)
        np.testing.assert_array_equal(found, brute_targets(X, y, k))
        np.testing.assert_array_equal(found, target_neighbors(X, y, k))


@pytest.mark.parametrize("seed", range(12))
def test_active_hinges_match_brute_force(seed):
    rng, X, y = random_case(seed)
    targets = target_neighbors(X, y, 2)
    d = X.shape[1]
    A = rng.standard_normal((d, d))
    metrics = [np.eye(d), A @ A.T, np.diag(np.r_[1.0, np.zeros(d - 1)])]     # incl. a singular metric
    for M in metrics:
        rows, values = brute_hinges(X, y, targets, M)
        for threshold in (0.0, -0.5):
            triplets, hinges = balltree_hinges(X, y, targets, M, threshold=threshold, leaf_size=4)
            keep = values > threshold
            np.testing.assert_array_equal(triplets, rows[keep])
            np.testing.assert_allclose(hinges, values[keep], rtol=1e-10, atol=1e-10)
        np.testing.assert_array_equal(balltree_hinges(X, y, targets, M)[0], impostor_triplets(X, y, targets, M))


def test_rectangular_factor_and_ties_on_the_margin():
    rng, X, y = random_case(1)                  # integer grid: many hinges exactly 0
    targets = target_neighbors(X, y, 3)
    L = rng.integers(-1, 2, size=(1, X.shape[1])).astype(float)
    rows, values = brute_hinges(X, y, targets, L.T @ L)
    assert np.any(values == 0.0)                # ties at the threshold: must be left out
    triplets, hinges = balltree_hinges(X, y, targets, L=L)
    np.testing.assert_array_equal(triplets, rows[values > 0.0])
    np.testing.assert_array_equal(triplets, radius_hinges(X, y, targets, L.T @ L)[0])


def test_bad_input():
    _, X, y = random_case(0)
    targets = target_neighbors(X, y, 2)
    with pytest.raises(ValueError, match="not both"):
        balltree_hinges(X, y, targets, np.eye(X.shape[1]), L=np.eye(X.shape[1]))
    with pytest.raises(ValueError, match="positive semidefinite"):
        balltree_hinges(X, y, targets, -np.eye(X.shape[1]))
    with pytest.raises(ValueError, match="below the margin"):
        balltree_hinges(X, y, targets, threshold=1.0)
    with pytest.raises(ValueError, match="k \\+ 1"):
        balltree_target_neighbors(X[:8], y[:8], 5)
