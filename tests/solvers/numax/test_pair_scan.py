"""The initial working set of column generation: each point's nearest neighbours, computed with
numpy (the same neighbours as scikit-learn's ``NearestNeighbors``, ties to the lower index), then
random pairs; by Gram matrices of its own, or read off the pair distances a scan keeps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

import sdpembed
from sdpembed.secants import linear_index_of_pairs, pair_count, pairs_from_linear_index
from sdpembed.solvers.numax import pair_scan
from sdpembed.solvers.numax.candidates import PairCandidates
from sdpembed.solvers.numax.pair_scan import PairDistances, initial_working_set
from sdpembed.solvers.numax.scan_backend import LocalScan


def _neighbour_pairs(neighbors: np.ndarray) -> np.ndarray:
    """Sorted linear indices of the pairs (point, neighbour), without a point paired with itself."""
    n, width = neighbors.shape
    rows, cols = np.repeat(np.arange(n), width), neighbors.ravel()
    distinct = rows != cols
    lo, hi = np.minimum(rows, cols)[distinct], np.maximum(rows, cols)[distinct]
    return np.unique(linear_index_of_pairs(lo, hi, n))


def _sklearn_pairs(X: np.ndarray, k: int, algorithm: str = "auto") -> np.ndarray:
    return _neighbour_pairs(NearestNeighbors(n_neighbors=k + 1, algorithm=algorithm).fit(X).kneighbors(X)[1])


def _exact_pairs(X: np.ndarray, k: int) -> np.ndarray:
    """The k nearest other points by explicit differences, ties to the lower index (dense n × n × N)."""
    d = np.einsum("ijk,ijk->ij", X[:, None] - X[None], X[:, None] - X[None])
    np.fill_diagonal(d, np.inf)
    return _neighbour_pairs(np.argsort(d, axis=1, kind="stable")[:, :k])


#: the two searches: Gram matrices of blocks of rows, or the kept distances of a scan (in blocks of
#: 7 rows, several even on few points)
ROUTES = ["rows", "distances"]


def _neighbours_only(X: np.ndarray, k: int, route: str = "rows", monkeypatch=None) -> np.ndarray:
    # size 0: no random pairs are added
    distances = PairDistances(X, 7) if route == "distances" else None
    if monkeypatch is not None:
        other = "_nearest_by_rows" if route == "distances" else "_nearest_from_distances"
        monkeypatch.setattr(pair_scan, other, _refused)
    return initial_working_set(X, 0, k, np.random.default_rng(0), distances=distances)


def _refused(*args, **kwargs):
    raise AssertionError("the other neighbour search ran")


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("shape", [(30, 2), (40, 8), (25, 36), (60, 64), (7, 3)])
@pytest.mark.parametrize("k", [1, 5, 20])
@pytest.mark.parametrize("algorithm", ["auto", "brute", "kd_tree"])
def test_the_same_neighbours_as_scikit_learn_on_random_points(shape, k, algorithm, route, monkeypatch):
    X = np.random.default_rng(shape[0] * k).standard_normal(shape)
    k = min(k, shape[0] - 1)
    np.testing.assert_array_equal(_neighbours_only(X, k, route, monkeypatch), _sklearn_pairs(X, k, algorithm))


@pytest.mark.parametrize("route", ROUTES)
def test_several_blocks_of_rows_give_the_same_neighbours(route, monkeypatch):
    # blocks of 4_000_000 // n rows: 2100 points make two blocks (of a scan's distances: 263 rows, eight)
    X = np.random.default_rng(3).standard_normal((2100, 2))
    distances = PairDistances(X) if route == "distances" else None
    monkeypatch.setattr(pair_scan, "_nearest_by_rows" if distances else "_nearest_from_distances", _refused)
    got = initial_working_set(X, 0, 4, np.random.default_rng(0), distances=distances)
    np.testing.assert_array_equal(got, _sklearn_pairs(X, 4))


def test_column_generation_reads_the_neighbours_off_the_distances_its_scans_keep(monkeypatch):
    """In this process the first working set takes the distances the scans then reuse: no Gram matrix
    of its own, the same pairs."""
    X = np.random.default_rng(9).standard_normal((120, 4))
    rows = initial_working_set(X, 100, 2, np.random.default_rng(4))
    monkeypatch.setattr(pair_scan, "_nearest_by_rows", _refused)
    candidates = PairCandidates(X, lambda i, j: (np.full(i.size, 0.9), np.full(i.size, 1.1)), LocalScan(), 16)
    np.testing.assert_array_equal(candidates.initial(100, 2, np.random.default_rng(4), False), rows)
    assert len(candidates.distances._blocks) == len(candidates.distances.starts())


def test_distances_not_kept_leave_the_search_to_gram_matrices(monkeypatch):
    """Distances a scan recomputes (beyond its memory budget) would be made twice: the search makes its own."""
    X = np.random.default_rng(8).standard_normal((50, 3))
    monkeypatch.setattr(pair_scan, "_nearest_from_distances", _refused)
    got = initial_working_set(X, 0, 3, np.random.default_rng(0), distances=PairDistances(X, 7, max_pairs=0))
    np.testing.assert_array_equal(got, _exact_pairs(X, 3))


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("case", ["grid", "integers", "duplicates"])
def test_ties_go_to_the_lower_index(case, route, monkeypatch):
    rng = np.random.default_rng(1)
    X = {"grid": np.array([(i, j) for i in range(6) for j in range(6)], float),
         "integers": rng.integers(0, 3, size=(30, 8)).astype(float),
         "duplicates": np.repeat(rng.standard_normal((8, 3)), 3, axis=0)}[case]
    k = 3
    got = _neighbours_only(X, k, route, monkeypatch)
    np.testing.assert_array_equal(got, _exact_pairs(X, k))
    # scikit-learn breaks ties in the order of its own search: where it chose another pair, that
    # pair lies at the point's k-th distance, a tie
    d = np.sqrt(np.einsum("ijk,ijk->ij", X[:, None] - X[None], X[:, None] - X[None]))
    kth = np.sort(d, axis=1)[:, k]                       # column 0: the point itself (or a duplicate)
    _, theirs = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    i, j = pairs_from_linear_index(got, X.shape[0])
    ours = set(zip(i.tolist(), j.tolist(), strict=True))
    for point, row in enumerate(theirs):
        for other in row[row != point]:
            if (min(point, other), max(point, other)) not in ours:
                assert d[point, other] == kth[point]


@pytest.mark.parametrize("route", ROUTES)
def test_far_from_the_origin_the_neighbours_are_exact(route, monkeypatch):
    # ‖x‖² ≈ 1e12 with unit differences: the Gram-based distances are off by ~1e-3, which only
    # screens the candidates; the choice is made on explicit differences
    rng = np.random.default_rng(2)
    X = 1e6 + np.cumsum(rng.uniform(0.9, 1.1, size=(40, 1)), axis=0) @ np.ones((1, 3)) \
        + 1e-3 * rng.standard_normal((40, 3))
    np.testing.assert_array_equal(_neighbours_only(X, 2, route, monkeypatch), _exact_pairs(X, 2))


def test_random_pairs_fill_the_set_up_to_size():
    X = np.random.default_rng(4).standard_normal((30, 4))
    neighbours = _neighbours_only(X, 3)
    chosen = initial_working_set(X, 200, 3, np.random.default_rng(5))
    assert chosen.size == 200 and np.all(np.diff(chosen) > 0)
    assert np.isin(neighbours, chosen).all()
    everything = initial_working_set(X, 10_000, 3, np.random.default_rng(5))
    np.testing.assert_array_equal(everything, np.arange(pair_count(30)))


def test_the_neighbour_search_reports_every_point_once_and_the_same_pairs():
    """On many points the search is the longest step before the first round: it advances a bar by
    the points of each block, n in all, without changing what it finds."""
    X = np.random.default_rng(7).standard_normal((2_500, 3))            # several blocks of rows
    counts: list[int] = []
    with_bar = initial_working_set(X, 0, 2, np.random.default_rng(0), progress=counts.append)
    assert sum(counts) == 2_500 and len(counts) > 1
    np.testing.assert_array_equal(with_bar, initial_working_set(X, 0, 2, np.random.default_rng(0)))
    counts.clear()
    read = initial_working_set(X, 0, 2, np.random.default_rng(0), progress=counts.append, distances=PairDistances(X))
    assert sum(counts) == 2_500 and len(counts) > 1
    np.testing.assert_array_equal(read, with_bar)


def test_no_neighbours_asked_gives_random_pairs_only():
    X = np.random.default_rng(6).standard_normal((20, 3))
    assert initial_working_set(X, 0, 0, np.random.default_rng(0)).size == 0
    assert initial_working_set(X, 15, 0, np.random.default_rng(0)).size == 15


def test_the_working_set_needs_no_scikit_learn():
    """A graded ``sdpembed solve`` of a point-form instance starts a fresh interpreter: the
    neighbours are numpy's, and scikit-learn (about 2 s to import) stays unloaded."""
    body = ("import json, sys, numpy as np\n"
            "from sdpembed.solvers.numax.pair_scan import initial_working_set\n"
            "initial_working_set(np.random.default_rng(0).standard_normal((30, 4)), 50, 5, np.random.default_rng(0))\n"
            "print(json.dumps('sklearn' in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(Path(sdpembed.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) is False
