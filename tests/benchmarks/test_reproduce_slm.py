"""Pieces of the sparse-linear-model reproduction (paper 002's kernel experiments) against independent computations."""

import itertools

import numpy as np

from .conftest import load_reproduce


def test_klpp_with_the_linear_kernel_is_lpp():
    """k(x, y) = xᵀy: kernel LPP's coordinates are LPP's X̄ aᵀ (each up to its sign)."""
    baselines = load_reproduce("baselines")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4)) * np.array([3.0, 1.0, 0.5, 0.2])
    Z = rng.standard_normal((7, 4))
    Y_train, Y_test = baselines.klpp_embedding(X @ X.T, Z @ X.T, 2, k=5)
    A = baselines.lpp_projection(X, 2, k=5)
    mean = X.mean(axis=0)
    for ours, lpp in ((Y_train, (X - mean) @ A.T), (Y_test, (Z - mean) @ A.T)):
        signs = np.sign(np.sum(ours * lpp, axis=0))
        np.testing.assert_allclose(ours * signs, lpp, rtol=1e-5, atol=1e-7)


def test_klpp_coordinates_are_finite_and_distinct_with_a_gaussian_kernel():
    baselines = load_reproduce("baselines")
    from sklearn.metrics.pairwise import rbf_kernel

    X = np.random.default_rng(1).standard_normal((60, 5))
    Y, _ = baselines.klpp_embedding(rbf_kernel(X, gamma=2.0), rbf_kernel(X[:3], X, gamma=2.0), 3)
    assert np.all(np.isfinite(Y)) and np.linalg.matrix_rank(Y) == 3     # no null-space direction of K̄


def test_clustering_accuracy_is_the_best_matching_by_brute_force():
    slm = load_reproduce("slm")
    rng = np.random.default_rng(2)
    for n_clusters in (3, 4):                                           # as many clusters as classes, and one more
        y, labels = rng.integers(0, 3, 40), rng.integers(0, n_clusters, 40)
        best = max(np.mean([perm[c] == t if c < len(perm) else False for c, t in zip(labels, y, strict=True)])
                   for perm in itertools.permutations(range(n_clusters)))
        assert slm.clustering_accuracy(labels, y) == best
    assert slm.clustering_accuracy(np.array([5, 5, 9, 9]), np.array([1, 1, 0, 0])) == 1.0


def test_centred_kerdict_with_the_linear_kernel_is_kerdict_on_centred_data():
    """k(x, y) = xᵀy: ker.dict on the centred kernel is ker.dict on the centred rows (test rows centred by the
    training mean), and its training coordinates have zero mean."""
    from sdpembed.linear import KernelSparseLinearProjection

    slm = load_reproduce("slm")
    rng = np.random.default_rng(3)
    X, Z = rng.standard_normal((30, 6)) + 2.0, rng.standard_normal((5, 6)) + 2.0
    config = {"n_atoms": 10, "kernel_alpha": 0.05, "dict_iter": 3, "max_dim": 3}
    Y, Y_test, nonzero = slm._centred_kerdict(X @ X.T, Z @ X.T, config, 7)
    mean = X.mean(axis=0)
    kd = KernelSparseLinearProjection(3, dictionary="learn", kernel="linear", n_atoms=10, alpha=0.05, max_iter=3,
                                      random_state=7).fit(X - mean)
    for ours, direct in ((Y, kd.transform(X - mean)), (Y_test, kd.transform(Z - mean))):
        signs = np.sign(np.sum(ours * direct, axis=0))
        np.testing.assert_allclose(ours * signs, direct, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(Y.mean(axis=0), 0.0, atol=1e-10)
    assert 0.0 < nonzero <= 1.0
