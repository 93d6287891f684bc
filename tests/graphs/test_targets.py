"""Target neighbours, triplets and impostors (thesis Sec. 2.1.2), checked against brute force."""

import numpy as np
import pytest

from sdpembed.graphs import (
    all_triplets,
    impostor_triplets,
    iter_hinges,
    nearest_impostors,
    pull_matrix,
    radius_hinges,
    target_neighbors,
    triplet_count,
)


def brute_targets(X, y, k):
    """k nearest same-class points, ordered by (squared distance, index), one point at a time."""
    out = []
    for i in range(len(X)):
        same = [j for j in range(len(X)) if j != i and y[j] == y[i]]
        dist = {j: float(np.sum((X[i] - X[j]) ** 2)) for j in same}
        out.append(sorted(same, key=lambda j: (dist[j], j))[:k])
    return np.array(out)


def brute_hinges(X, y, targets, M, margin=1.0):
    """Every triplet (i, j, l) with its hinge margin + D_M(i, j) − D_M(i, l), in (i, rank, l) order."""
    rows, values = [], []
    for i in range(len(X)):
        for j in targets[i]:
            for l in range(len(X)):
                if y[l] != y[i]:
                    dij = (X[i] - X[j]) @ M @ (X[i] - X[j])
                    dil = (X[i] - X[l]) @ M @ (X[i] - X[l])
                    rows.append((i, j, l))
                    values.append(margin + dij - dil)
    return np.array(rows, dtype=np.int64).reshape(-1, 3), np.array(values)


def random_psd(d, rng):
    A = rng.standard_normal((d, d))
    return A @ A.T / d


@pytest.mark.parametrize("seed", range(6))
def test_target_neighbors_match_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    n, d = 45, 2
    X = rng.integers(-2, 3, size=(n, d)).astype(float)        # a small lattice: many exact ties
    y = rng.permutation(np.repeat([0, 1, 2], 15))
    for k in (1, 3):
        expected = brute_targets(X, y, k)
        np.testing.assert_array_equal(target_neighbors(X, y, k), expected)
        np.testing.assert_array_equal(target_neighbors(X, y, k, block_size=7), expected)  # many blocks


def test_target_neighbors_ties_go_to_the_smaller_index_far_from_the_origin():
    # Exact ties 1e6 away from the origin: a Gram-matrix distance alone would break them by rounding.
    offset = 1e6 + 0.1
    X = offset + np.array([[0.0], [3.0], [-3.0], [3.0], [50.0], [51.0], [52.0]])
    y = np.array([0, 0, 0, 0, 1, 1, 1])
    t = target_neighbors(X, y, 2)
    np.testing.assert_array_equal(t[0], [1, 2])    # 1, 2 and 3 are all at distance 9 from 0
    np.testing.assert_array_equal(t[1], [3, 0])    # 3 coincides with 1
    np.testing.assert_array_equal(t, brute_targets(X, y, 2))


def test_target_neighbors_string_labels_and_float_data():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((30, 4))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, 30)]
    np.testing.assert_array_equal(target_neighbors(X, y, 2), brute_targets(X, y, 2))


@pytest.mark.parametrize(
    "X, y, k, message",
    [
        (np.zeros((5, 2)), [0, 0, 0, 1, 1], 2, r"class 1 has 2"),
        (np.zeros((4, 2)), [0, 0, 0, 0], 1, "at least two classes"),
        (np.array([[0.0, np.nan], [1, 1], [2, 2], [3, 3]]), [0, 0, 1, 1], 1, "NaN"),
        (np.array([[0.0, np.inf], [1, 1], [2, 2], [3, 3]]), [0, 0, 1, 1], 1, "NaN or infinite"),
        (np.zeros((4, 2)), [0, 0, 1], 1, "4 labels"),
        (np.zeros((4, 2)), [0, 0, 1, 1], 0, "k must be an integer >= 1"),
        (np.zeros((4, 2)), [0, 0, 1, 1], 1.5, "k must be an integer"),
        (np.zeros(4), [0, 0, 1, 1], 1, "2-D"),
    ],
)
def test_target_neighbors_bad_input(X, y, k, message):
    with pytest.raises(ValueError, match=message):
        target_neighbors(X, np.asarray(y), k)


def test_class_size_error_names_the_class_and_its_size():
    y = np.array(["cat"] * 5 + ["dog"] * 2)
    with pytest.raises(ValueError, match=r"k \+ 1 = 3 members.*class 'dog' has 2"):
        target_neighbors(np.arange(14.0).reshape(7, 2), y, 2)


def test_all_triplets_and_count():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((13, 3))
    y = np.array([0] * 5 + [1] * 4 + [2] * 4)
    t = target_neighbors(X, y, 2)
    expected, _ = brute_hinges(X, y, t, np.eye(3))
    np.testing.assert_array_equal(all_triplets(y, t), expected)
    assert triplet_count(y, t) == len(expected) == 2 * (5 * 8 + 4 * 9 + 4 * 9)


@pytest.mark.parametrize("seed", range(3))
def test_impostor_triplets_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((20, 3))
    y = rng.permutation(np.repeat([0, 1, 2, 3], 5))
    t = target_neighbors(X, y, 2)
    for M in (None, random_psd(3, rng), 3.0 * random_psd(3, rng)):
        Mm = np.eye(3) if M is None else M
        for margin, tol in ((1.0, 0.0), (0.5, 0.2)):
            rows, h = brute_hinges(X, y, t, Mm, margin)
            keep = h > tol
            got, got_h = impostor_triplets(X, y, t, M, margin, tol=tol, return_hinges=True, block_size=50)
            np.testing.assert_array_equal(got, rows[keep])
            np.testing.assert_allclose(got_h, h[keep], rtol=1e-12, atol=1e-12)
            assert np.array_equal(impostor_triplets(X, y, t, M, margin, tol=tol), got)


def test_iter_hinges_streams_all_triplets_with_threshold_minus_inf():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((15, 2))
    y = np.repeat([0, 1, 2], 5)
    t = target_neighbors(X, y, 3)
    M = random_psd(2, rng)
    blocks = list(iter_hinges(X, y, t, M, threshold=-np.inf, block_size=40))
    assert len(blocks) > 1
    rows, h = brute_hinges(X, y, t, M)
    np.testing.assert_array_equal(np.concatenate([b[0] for b in blocks]), rows)
    np.testing.assert_allclose(np.concatenate([b[1] for b in blocks]), h, atol=1e-12)


def _integer_points_and_far_points():
    """Integer points (exact integer distances and hinges, many exactly 0) plus three far points
    that move the data's centre ~1e7 away; their labels and 2 target neighbours each."""
    rng = np.random.default_rng(11)
    cluster = rng.integers(-3, 4, size=(30, 2)).astype(float)
    far = np.array([[9e7 + 0.3, 7e7 + 0.7], [9e7 + 1.1, 7e7 + 0.2], [9e7 + 0.6, 7e7 + 2.9]])
    X = np.vstack([cluster, far])
    y = np.concatenate([rng.permutation(np.repeat([0, 1], 15)), [2, 2, 2]])
    return X, y, target_neighbors(X, y, 2)


def test_hinge_decisions_are_exact_when_gram_distances_are_not():
    # Integer points (every direct distance and hinge is an exact integer, many hinges are exactly
    # 0) plus three far points that move the data's centre ~1e7 away: Gram-matrix distances are then
    # off by up to ~1e-2, yet the decision hinge > 0 must be the direct formula's.
    X, y, t = _integer_points_and_far_points()
    rows, h = brute_hinges(X, y, t, np.eye(2))
    assert np.sum(h == 0.0) > 10                                   # many exact ties at the margin
    got, got_h = impostor_triplets(X, y, t, return_hinges=True)
    np.testing.assert_array_equal(got, rows[h > 0])
    np.testing.assert_allclose(got_h, h[h > 0], atol=0.05)
    with_tol = impostor_triplets(X, y, t, tol=1.0)                 # exact integer hinges at the tolerance
    np.testing.assert_array_equal(with_tol, rows[h > 1.0])


@pytest.mark.parametrize("margin, threshold", [(1.0, 0.0), (1.0, -0.4), (1.0, 0.3), (2.0, 0.05)])
def test_lmnn_radius_hinges_find_exactly_the_brute_force_triplets(margin, threshold, monkeypatch):
    """The radius filter (float32 Gram test with a rounding margin, then the direct formula) keeps
    exactly the triplets a dense computation of every hinge keeps, in iter_hinges' order; for a
    full-rank, a rank-deficient and a tiny metric (which falls back to iter_hinges), and with the
    fallback disabled."""
    import sdpembed.graphs.targets as targets_module
    rng = np.random.default_rng(21)
    X = rng.standard_normal((60, 4)) * [1.0, 3.0, 0.5, 2.0] + 5.0
    y = np.repeat([0, 1, 2], 20)
    t = target_neighbors(X, y, 3)
    B = rng.standard_normal((2, 4))
    for M in (random_psd(4, rng), B.T @ B, 1e-3 * random_psd(4, rng), np.eye(4)):
        rows, h = brute_hinges(X, y, t, M, margin)
        keep = h > threshold
        for fraction in (targets_module._RADIUS_PAIRS, 1.0):
            monkeypatch.setattr(targets_module, "_RADIUS_PAIRS", fraction)
            got, got_h = radius_hinges(X, y, t, M, margin=margin, threshold=threshold, block_size=97)
            np.testing.assert_array_equal(got, rows[keep])
            np.testing.assert_allclose(got_h, h[keep], rtol=1e-12, atol=1e-12)
            parts = list(iter_hinges(X, y, t, M, margin=margin, threshold=threshold))
            np.testing.assert_array_equal(got, np.concatenate([p[0] for p in parts]))


def test_lmnn_radius_hinge_decisions_are_exact_at_ties(monkeypatch):
    """As for iter_hinges: integer points with many hinges exactly at the threshold, and far points
    that make the Gram (and float32) distances inaccurate; the radius path itself (fallback off)."""
    import sdpembed.graphs.targets as targets_module
    monkeypatch.setattr(targets_module, "_RADIUS_PAIRS", 1.0)
    X, y, t = _integer_points_and_far_points()
    rows, h = brute_hinges(X, y, t, np.eye(2))
    assert np.sum(h == 0.0) > 10
    for threshold in (0.0, 1.0, -2.0):
        got, got_h = radius_hinges(X, y, t, np.eye(2), threshold=threshold)
        np.testing.assert_array_equal(got, rows[h > threshold])
        np.testing.assert_allclose(got_h, h[h > threshold], atol=1e-9)
    # no PSD factor or no finite threshold: the streamed scan
    M = np.diag([1.0, -0.5])
    rows, h = brute_hinges(X[:30], y[:30], target_neighbors(X[:30], y[:30], 2), M)
    got, _ = radius_hinges(X[:30], y[:30], target_neighbors(X[:30], y[:30], 2), M)
    np.testing.assert_array_equal(got, rows[h > 0])
    got, _ = radius_hinges(X[:30], y[:30], target_neighbors(X[:30], y[:30], 2), threshold=-np.inf)
    assert got.shape[0] == triplet_count(y[:30], target_neighbors(X[:30], y[:30], 2))


def test_lmnn_radius_hinges_beyond_the_float32_range():
    """Two clusters at ±1e20 (‖Lz‖² ~ 1e40 overflows float32) with hinges of order 1 inside each: the radius
    filter keeps every brute-force triplet (it kept none when its float32 Gram test overflowed); the test's
    rescaling also leaves alone points at 1e-30 (squares below float32's range) under a metric of 1e60."""
    rng = np.random.default_rng(3)
    X = np.zeros((24, 2))
    X[:12, 0], X[12:, 0] = 1e20, -1e20
    X[:, 1] = rng.standard_normal(24)
    y = np.arange(24) % 2
    t = target_neighbors(X, y, 2)
    for points, M in ((X, np.eye(2)), (1e-30 * rng.standard_normal((24, 3)), 1e60 * random_psd(3, rng))):
        t = target_neighbors(points, y, 2)
        rows, h = brute_hinges(points, y, t, M)
        assert np.sum(h > 0) > 20
        got, got_h = radius_hinges(points, y, t, M)
        np.testing.assert_array_equal(got, rows[h > 0])
        np.testing.assert_allclose(got_h, h[h > 0], rtol=1e-9, atol=1e-9)


def test_pull_matrix_and_nearest_impostors():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((16, 3))
    y = np.repeat([0, 1], 8)
    t = target_neighbors(X, y, 2)
    P = sum(np.outer(X[i] - X[j], X[i] - X[j]) for i in range(16) for j in t[i])
    np.testing.assert_allclose(pull_matrix(X, t), P, rtol=1e-13)
    np.testing.assert_allclose(pull_matrix(X, t, block_size=7), P, rtol=1e-13)
    M = random_psd(3, rng)
    nearest = nearest_impostors(X, y, M, block_size=20)
    for i in range(16):
        others = np.flatnonzero(y != y[i])
        dist = [(X[i] - X[l]) @ M @ (X[i] - X[l]) for l in others]
        assert nearest[i] == others[int(np.argmin(dist))]


def test_iter_hinges_rejects_bad_metric_and_targets():
    X = np.random.default_rng(0).standard_normal((6, 2))
    y = np.array([0, 0, 0, 1, 1, 1])
    t = target_neighbors(X, y, 1)
    with pytest.raises(ValueError, match="shape"):
        impostor_triplets(X, y, t, np.eye(3))
    with pytest.raises(ValueError, match="NaN"):
        impostor_triplets(X, y, t, np.full((2, 2), np.nan))
    with pytest.raises(ValueError, match="same class"):
        impostor_triplets(X, y, np.array([[3], [0], [0], [4], [3], [3]]))
