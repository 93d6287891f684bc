"""The scan's reduction of its violators: a scan that leaves out the working set and keeps, block by
block, only the violators a spread selection of ``max_add`` can take hands column generation the
very pairs, in the very order, that the selection took from the full list of violators."""

import numpy as np
import pytest

from sdpembed.datasets import load_mnist
from sdpembed.secants import linear_index_of_pairs, pair_count
from sdpembed.solvers.numax.candidates import PairCandidates, _spread_violators
from sdpembed.solvers.numax.pair_scan import scan_pair_violations, selectable, worst_ranks
from sdpembed.solvers.numax.scan_backend import LocalScan


def _full_selection(X, P, bounds, tol, block_rows, exact_values, working, max_add):
    """What column generation selected before the reduction: every violator, the working set taken
    out of the list, then the spread selection."""
    full = scan_pair_violations(X, P, bounds, tol=tol, block_rows=block_rows, exact_values=exact_values)
    index = linear_index_of_pairs(full.i, full.j, X.shape[0])
    fresh = ~np.isin(index, working)
    added = _spread_violators(full.i[fresh], full.j[fresh], full.violation[fresh], index[fresh], max_add)
    return full, int(fresh.sum()), added


def _check_same_selection(X, P, bounds, tol, block_rows, exact_values, working, max_add):
    full, n_fresh, expected = _full_selection(X, P, bounds, tol, block_rows, exact_values, working, max_add)
    candidates = PairCandidates(X, bounds, LocalScan(), block_rows)
    scan = candidates.scan(P, None, tol, exact_values, exclude=working, keep=max_add)
    assert scan.found == full.i.size and scan.fresh == n_fresh and scan.worst == full.max_violation
    assert scan.index.size <= n_fresh and not np.isin(scan.index, working).any()
    added = candidates.select(scan.index, scan.violation, max_add, total=scan.fresh)
    np.testing.assert_array_equal(added, expected)
    return full.i.size, scan.index.size


def _ratio_bounds(lo, hi):
    def bounds(i, j):
        return np.full(i.shape, lo), np.full(i.shape, hi)
    return bounds


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("exact_values", [True, False])
def test_reduced_scan_selects_the_pairs_of_the_full_list_on_random_points(seed, exact_values):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((90, 8))
    X[10:20] = X[0:10]                          # repeated points: many pairs with equal violations (ties)
    B = rng.standard_normal((8, 3))
    P = B @ B.T / 3.0
    bounds = _ratio_bounds(0.8, 1.2)
    all_pairs = pair_count(X.shape[0])
    working = rng.choice(all_pairs, size=300, replace=False)
    for block_rows in (7, None):
        for max_add in (1, 5, 40, 400, 10_000):
            found, reported = _check_same_selection(X, P, bounds, 1e-3, block_rows, exact_values, working, max_add)
            assert found > 1000
            if max_add <= 40:
                assert reported < found // 2           # the reduction holds a fraction of the violators


@pytest.mark.parametrize("seed", range(5))
def test_selectable_of_blocks_is_selectable_of_the_whole(seed):
    rng = np.random.default_rng(seed)
    n, m = 40, 3000
    i = rng.integers(0, n - 1, m)
    j = i + 1 + rng.integers(0, n - 1 - i)
    violation = np.round(rng.random(m), 2)        # many ties
    index = np.arange(m) * 7
    cuts = np.sort(rng.choice(np.arange(1, m), size=9, replace=False))
    for keep in (1, 3, 50, 2999, 3000):
        parts = [part[selectable(i[part], j[part], violation[part], keep)]
                 for part in np.split(np.arange(m), cuts)]
        kept = np.concatenate(parts)
        kept = kept[selectable(i[kept], j[kept], violation[kept], keep)]
        np.testing.assert_array_equal(kept, selectable(i, j, violation, keep))
        np.testing.assert_array_equal(_spread_violators(i[kept], j[kept], violation[kept], index[kept], keep, total=m),
                                      _spread_violators(i, j, violation, index, keep))


def _selectable_by_sort(i, j, violation, keep):
    """The definition of selectable: the first ``keep`` in the order of decreasing violation (ties to the
    earlier) and every point's first pair in that order."""
    if violation.size <= keep:
        return np.arange(violation.size)
    order, best = worst_ranks(i, j, violation)
    chosen = np.zeros(order.size, bool)
    chosen[order[:keep]] = True
    chosen[order[best[best < order.size]]] = True
    return np.flatnonzero(chosen)


@pytest.mark.parametrize("seed", range(6))
def test_selectable_without_a_sort_takes_the_sorted_lists_pairs(seed):
    """selectable finds the keep worst by a partition and each point's worst pair by its largest violation
    and earliest position: the same positions as the sorted order, ties included."""
    rng = np.random.default_rng(seed)
    n, m = (30, 2000) if seed % 2 else (400, 5000)
    i = rng.integers(0, n - 1, m)
    j = i + 1 + rng.integers(0, n - 1 - i)
    violation = np.round(rng.random(m), 1 + seed % 3)           # few distinct values: many ties
    violation[rng.choice(m, 50, replace=False)] = violation.max()
    for keep in (1, 2, 7, 60, 199, 200, 1999, m - 1, m):
        np.testing.assert_array_equal(selectable(i, j, violation, keep), _selectable_by_sort(i, j, violation, keep))


@pytest.mark.slow
def test_reduced_scan_selects_the_pairs_of_the_full_list_on_mnist():
    X_all, _ = load_mnist(size=28)
    X = X_all[np.random.default_rng(0).permutation(len(X_all))[:1500]]
    # P: the projection onto the 20 leading principal directions shrinks most secants below 1 − δ
    _, _, rows = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    P = rows[:20].T @ rows[:20]
    bounds = _ratio_bounds(0.9, 1.1)
    # the violators the working set is drawn from (the same set with or without their values recomputed)
    scan = scan_pair_violations(X, P, bounds, tol=1e-3, block_rows=150, exact_values=False)
    rng = np.random.default_rng(1)
    violators = linear_index_of_pairs(scan.i, scan.j, X.shape[0])
    # a working set that holds some of the violators (the working pairs column generation solved on)
    working = np.concatenate([rng.choice(violators, 1500, replace=False),
                              rng.choice(pair_count(X.shape[0]), 1500, replace=False)])
    found, reported = _check_same_selection(X, P, bounds, 1e-3, 150, False, working, 2000)
    assert found > 500_000 and reported < found // 20
