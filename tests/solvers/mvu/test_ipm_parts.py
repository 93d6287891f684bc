"""The MVU interior-point method's pieces that replace SciPy calls (a graded solve then loads no
SciPy): the distances from node 0 and the slack block G, bit for bit what SciPy computed."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from sdpembed.solvers.mvu.ipm import _helmert_adjoint, _helmert_apply, _Slacks, centered_basis, distances_from_first


def _random_graph(n: int, extra: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    tree = np.column_stack([rng.integers(0, np.arange(1, n)), np.arange(1, n)])      # connected
    pairs = rng.integers(0, n, size=(extra, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    edges = np.unique(np.sort(np.vstack([tree, pairs]), axis=1), axis=0)
    return edges, np.sqrt(rng.uniform(0.0, 10.0, size=edges.shape[0]))


@pytest.mark.parametrize(("n", "extra", "seed"), [(2, 0, 0), (12, 10, 1), (40, 120, 2), (200, 800, 3)])
def test_distances_from_node_0_are_scipys(n, extra, seed):
    edges, weights = _random_graph(n, extra, seed)
    weights[::7] = 0.0                                 # zero-length edges are edges (SciPy keeps explicit zeros)
    W = sp.coo_matrix((weights, (edges[:, 0], edges[:, 1])), shape=(n, n)).tocsr()
    np.testing.assert_array_equal(distances_from_first(n, edges, weights),
                                  shortest_path(W, directed=False, indices=[0])[0])


def test_unreachable_nodes_are_infinitely_far():
    edges = np.array([[0, 1], [2, 3]])
    np.testing.assert_array_equal(distances_from_first(4, edges, np.array([1.5, 1.0])), [0.0, 1.5, np.inf, np.inf])


@pytest.mark.parametrize("split", [False, True])
def test_the_slack_block_is_the_sparse_g(split):
    E = 9
    G = sp.hstack([-sp.identity(E), sp.identity(E)], format="csr") if split else sp.identity(E, format="csr")
    rng = np.random.default_rng(4)
    x, y, w = rng.uniform(0.1, 5.0, G.shape[1]), rng.standard_normal(E), rng.uniform(0.1, 5.0, G.shape[1])
    slacks = _Slacks(E, split=split)
    np.testing.assert_array_equal(slacks(x), G @ x)
    np.testing.assert_array_equal(slacks.T(y), G.T @ y)
    np.testing.assert_array_equal(np.diag(slacks.weighted_gram(w)), (G @ sp.diags(w) @ G.T).toarray())


@pytest.mark.parametrize("n", [2, 3, 17, 250])
def test_the_helmert_products_are_the_dense_basis_products(n):
    """V U and Vᵀ W by prefix and suffix sums (the interior point's 𝒜 and 𝒜* on all of 1⊥) agree with the dense
    Helmert basis to rounding, and V X Vᵀ of a symmetric X is the dense product."""
    rng = np.random.default_rng(n)
    V = centered_basis(n)
    U, W = rng.standard_normal((n - 1, 5)), rng.standard_normal((n, 4))
    np.testing.assert_allclose(_helmert_apply(U), V @ U, rtol=0, atol=1e-13 * np.abs(U).sum(axis=0).max())
    np.testing.assert_allclose(_helmert_adjoint(W), V.T @ W, rtol=0, atol=1e-13 * n * np.abs(W).max())
    X = rng.standard_normal((n - 1, n - 1))
    X = X @ X.T
    np.testing.assert_allclose(_helmert_apply(_helmert_apply(X).T).T, V @ X @ V.T, rtol=0,
                               atol=1e-12 * n * np.abs(X).max())
