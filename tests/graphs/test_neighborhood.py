"""MVU neighbourhood graphs (Table 3.1, Sec. 3.1.12) and the MVU data generators."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sdpembed.datasets import s_curve, sensor_network, swiss_roll, trefoil_knot
from sdpembed.graphs import (
    bad_edges,
    canonical_edges,
    check_connected,
    check_edges,
    connected_components,
    edge_sqdist,
    graph_laplacian,
    link_components,
    neighborhood_graph,
)


def _brute_force(X: np.ndarray, k: int, angles: bool) -> set[tuple[int, int]]:
    n = X.shape[0]
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    edges = set()
    for i in range(n):
        nb = np.argsort(d[i], kind="stable")[:k]
        for j in nb:
            edges.add((min(i, j), max(i, j)))
        if angles:
            for a, b in itertools.combinations(nb, 2):
                edges.add((min(a, b), max(a, b)))
    return edges


@pytest.mark.parametrize("angles", [True, False])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_neighborhood_graph_matches_brute_force(angles: bool, k: int) -> None:
    X = np.random.default_rng(k).standard_normal((40, 4))
    edges, D = neighborhood_graph(X, k, angles=angles)
    assert edges.dtype == np.int64 and np.all(edges[:, 0] < edges[:, 1])
    assert {tuple(e) for e in edges.tolist()} == _brute_force(X, k, angles)
    assert len(edges) == len({tuple(e) for e in edges.tolist()})
    np.testing.assert_allclose(D, ((X[edges[:, 0]] - X[edges[:, 1]]) ** 2).sum(1), rtol=1e-14)


def test_angle_edges_make_cliques() -> None:
    X = np.random.default_rng(0).standard_normal((30, 3))
    edges, _ = neighborhood_graph(X, 4, angles=True)
    present = {tuple(e) for e in edges.tolist()}
    d = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    nb = np.argsort(d[7])[:4]
    clique = [7, *nb.tolist()]
    for a, b in itertools.combinations(clique, 2):
        assert (min(a, b), max(a, b)) in present


def test_graph_errors() -> None:
    X = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(ValueError, match="n_neighbors"):
        neighborhood_graph(X, 0)
    with pytest.raises(ValueError, match="smaller than the number of points"):
        neighborhood_graph(X, 10)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        neighborhood_graph(bad, 3)
    with pytest.raises(ValueError, match="self-loop"):
        check_edges(np.array([[0, 0]]), 3)
    with pytest.raises(ValueError, match="twice"):
        check_edges(np.array([[0, 1], [1, 0]]), 3)
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        check_edges(np.array([[0, 3]]), 3)


def test_duplicate_points_warn_and_get_zero_edges() -> None:
    X = np.random.default_rng(0).standard_normal((12, 2))
    X[5] = X[2]
    with pytest.warns(RuntimeWarning, match="duplicate"):
        edges, D = neighborhood_graph(X, 2)
    row = np.flatnonzero((edges[:, 0] == 2) & (edges[:, 1] == 5))
    assert row.size == 1 and D[row[0]] == 0.0


def test_laplacian_is_the_adjoint_of_the_edge_operator() -> None:
    rng = np.random.default_rng(1)
    n = 15
    edges = canonical_edges(rng.integers(0, n, 40), rng.integers(0, n, 40), n)
    K = rng.standard_normal((n, n))
    K = K + K.T
    w = rng.standard_normal(len(edges))
    i, j = edges[:, 0], edges[:, 1]
    AK = K[i, i] + K[j, j] - 2 * K[i, j]                    # (3.13)
    L = graph_laplacian(n, edges, w).toarray()
    assert np.isclose(AK @ w, np.sum(K * L), rtol=1e-12)
    np.testing.assert_allclose(L @ np.ones(n), 0.0, atol=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_connected_components_agree_with_scipy(seed: int) -> None:
    """The numpy components (no SciPy at an instance's load) are SciPy's, labels included."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components as scipy_components

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    edges = rng.integers(0, n, size=(int(rng.integers(0, 2 * n)), 2))
    adjacency = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    expected_count, expected_labels = scipy_components(adjacency, directed=False)
    count, labels = connected_components(n, edges)
    assert count == expected_count
    np.testing.assert_array_equal(labels, expected_labels)


def test_connected_components_of_a_long_shuffled_path() -> None:
    """Hooking and pointer jumping join a path of 20,000 nodes in any order into one component."""
    order = np.random.default_rng(0).permutation(20_000)
    count, labels = connected_components(order.size, np.stack([order[:-1], order[1:]], axis=1))
    assert count == 1 and not labels.any()


def test_linking_connects_components_as_in_sec_3_1_12() -> None:
    rng = np.random.default_rng(2)
    A = rng.standard_normal((20, 2))
    B = rng.standard_normal((15, 2)) + np.array([20.0, 0.0])
    C = rng.standard_normal((10, 2)) + np.array([0.0, 25.0])
    X = np.vstack([A, B, C])
    edges, _ = neighborhood_graph(X, 5)
    count, labels = connected_components(len(X), edges)
    assert count >= 3
    with pytest.raises(ValueError, match="disconnected"):
        check_connected(len(X), edges)
    linked, D = link_components(X, edges, random_state=0)
    assert connected_components(len(X), linked)[0] == 1
    added = {tuple(e) for e in linked.tolist()} - {tuple(e) for e in edges.tolist()}
    assert len(added) == count - 1
    for a, b in added:
        assert labels[a] != labels[b]
        # x″ is the nearest point of its component to x′ (one end is nearest to the other within its component)
        da = ((X[labels == labels[a]] - X[b]) ** 2).sum(1).min()
        db = ((X[labels == labels[b]] - X[a]) ** 2).sum(1).min()
        assert np.isclose(((X[a] - X[b]) ** 2).sum(), da) or np.isclose(((X[a] - X[b]) ** 2).sum(), db)
    np.testing.assert_allclose(D, edge_sqdist(X, linked))


def test_bad_edge_detection_finds_a_short_circuit() -> None:
    X, params = swiss_roll(600, noise=0.05, random_state=0)
    t = params[:, 0]
    edges, D = neighborhood_graph(X, 6, angles=False)
    # a short circuit between neighbouring layers: the closest pair whose roll parameters differ by > 3
    i = int(np.argmin(np.abs(t - 2.25 * np.pi)))
    dist = np.linalg.norm(X - X[i], axis=1)
    far = np.abs(t - t[i]) > 3.0
    j = int(np.flatnonzero(far)[np.argmin(dist[far])])
    edges2 = canonical_edges(np.r_[edges[:, 0], i], np.r_[edges[:, 1], j], len(X))
    mask, scores = bad_edges(len(X), edges2, edge_sqdist(X, edges2))
    row = int(np.flatnonzero((edges2[:, 0] == min(i, j)) & (edges2[:, 1] == max(i, j)))[0])
    assert mask[row]
    assert scores[row] == scores.min()
    assert mask.sum() < 0.02 * len(edges2)                # few false alarms


def test_mvu_datasets() -> None:
    X, p = swiss_roll(100, noise=0.0, random_state=0)
    assert X.shape == (100, 3) and p.shape == (100, 2)
    np.testing.assert_allclose(X[:, 0], p[:, 0] * np.cos(p[:, 0]))
    S, _ = s_curve(50, random_state=1)
    assert S.shape == (50, 3)
    K, t = trefoil_knot(60)
    assert K.shape == (60, 3) and np.allclose(np.diff(t), 2 * np.pi / 60)
    pos, edges, D = sensor_network(500, radius=0.1, max_neighbors=8, noise=0.1, random_state=0)
    assert np.allclose(pos.mean(0), 0.0)
    true = np.sqrt(edge_sqdist(pos, edges))
    assert np.all(true <= 0.1 + 1e-12)
    ratio = np.sqrt(D) / true
    assert np.all((ratio >= 0.9 - 1e-12) & (ratio <= 1.1 + 1e-12))
    deg = np.bincount(edges.ravel(), minlength=500)
    assert deg.max() <= 2 * 8
    with pytest.raises(ValueError, match="noise"):
        swiss_roll(10, noise=-1.0)
