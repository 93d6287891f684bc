"""The screen of the all-pairs scan: a block's ratios from Gram matrices and one rounding bound for all
its pairs that are not close set aside every pair that violates by at most ``tol`` even after its
own rounding bound. The violators, their values and order, and the counts are those of judging every
pair one by one (the screen switched off: every pair close), and the worst violation is an upper
bound of that scan's, within ``tol``; only the pairs near a bound are looked at one by one."""

import numpy as np
import pytest

from sdpembed.datasets import load_mnist
from sdpembed.secants import all_secants, pair_count
from sdpembed.solvers.numax import pair_scan
from sdpembed.solvers.numax.pair_scan import PairDistances, rectangle_entries, scan_pair_violations


def _bounds(lo, hi, labels=None):
    """Two-sided bounds, or NuMax-Class's one-sided ones by ``labels``; counts the pairs it is asked for."""
    def bounds(i, j):
        bounds.asked += np.size(i)
        if labels is None:
            return np.full(np.shape(i), lo), np.full(np.shape(i), hi)
        same = labels[i] == labels[j]
        return np.where(same, -np.inf, lo), np.where(same, hi, np.inf)
    bounds.asked = 0
    return bounds


def _unscreened(monkeypatch, *args, **kwargs):
    """The scan with every pair close: each one judged by itself, as before the screen."""
    with monkeypatch.context() as m:
        m.setattr(pair_scan, "CLOSE_FACTOR", np.inf)
        return scan_pair_violations(*args, **kwargs)


def _same_violators(screened, reference, tol):
    for key in ("i", "j", "violation"):
        np.testing.assert_array_equal(getattr(screened, key), getattr(reference, key))
    assert (screened.n_pairs, screened.found, screened.fresh) == (reference.n_pairs, reference.found, reference.fresh)
    # an upper bound of the pairs' worst violation, which it passes only where that is at most tol
    assert screened.max_violation >= reference.max_violation
    assert screened.max_violation == reference.max_violation or screened.max_violation <= tol


def _cases():
    rng = np.random.default_rng(4)
    gauss = rng.standard_normal((70, 5))
    near = gauss.copy()
    near[[3, 9, 20]] = near[[2, 8, 2]]                              # duplicates: zero secants
    near[[30, 31]] = near[[40, 41]] + 1e-7 * rng.standard_normal((2, 5))   # near-duplicates: close pairs
    far = gauss + 1e3                                               # far from the origin: large rounding bounds
    mnist, _ = load_mnist(size=28, n_samples=300, random_state=0)
    return {"gauss": gauss, "near": near, "far": far, "mnist": mnist}


@pytest.mark.parametrize("name", ["gauss", "near", "far", "mnist"])
@pytest.mark.parametrize("one_sided", [False, True])
@pytest.mark.parametrize("exact_values", [True, False])
def test_the_screened_scan_finds_what_judging_every_pair_finds(monkeypatch, name, one_sided, exact_values):
    X = _cases()[name]
    rng = np.random.default_rng(len(name))
    labels = rng.integers(0, 3, X.shape[0]) if one_sided else None
    # P: the projection on the leading principal directions, scaled so that ratios spread over the bounds,
    # and the same P nudged: many pairs sit near a bound
    _, _, rows = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    Psi = rows[: max(2, X.shape[1] // 3)] * 1.05
    for factor in (Psi, Psi * (1 + 1e-7), Psi[:1]):
        for tol, block_rows in ((1e-6, None), (1e-3, 7), (0.0, 1), (np.inf, None)):
            bounds = _bounds(0.8, 1.2, labels)
            distances = PairDistances(X, block_rows)
            scans = [scan_pair_violations(X, None, bounds, tol=tol, factor=factor, exact_values=exact_values,
                                          distances=distances) for _ in range(2)]        # kept distances too
            reference = _unscreened(monkeypatch, X, None, bounds, tol=tol, factor=factor, block_rows=block_rows,
                                    exact_values=exact_values)
            for screened in scans:
                _same_violators(screened, reference, tol)


def test_the_screen_finds_the_dense_violators_of_near_duplicate_points():
    X = _cases()["near"]
    P = np.diag([1.3, 1.0, 0.9, 1.1, 0.7])
    bounds = _bounds(0.8, 1.2)
    with pytest.warns(UserWarning, match="zero secant"):
        V, pairs = all_secants(X, return_pairs=True)
    values = np.einsum("ij,ij->i", V @ P, V)
    violation = np.maximum(0.8 - values, values - 1.2)
    scan = scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=9)
    assert {tuple(p) for p in pairs[violation > 1e-9]} == set(zip(scan.i.tolist(), scan.j.tolist(), strict=True))
    assert scan.n_pairs == len(pairs) == pair_count(X.shape[0]) - 4          # (2, 3), (2, 20), (3, 20), (8, 9)
    assert scan.max_violation == pytest.approx(violation.max(), abs=1e-12)


def test_a_scan_with_few_violators_looks_at_few_pairs():
    """After the first scan (which bounds every block once), a scan of a P with few pairs near its bounds
    asks for the bounds of those pairs only: the others are settled by the screen."""
    X, _ = load_mnist(size=28, n_samples=400, random_state=1)
    _, _, rows = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    bounds = _bounds(0.05, 1.5)
    distances = PairDistances(X)
    first = scan_pair_violations(X, None, bounds, tol=1e-6, factor=rows[:60], distances=distances)
    assert bounds.asked >= pair_count(X.shape[0])
    bounds.asked = 0
    again = scan_pair_violations(X, None, bounds, tol=1e-6, factor=rows[:60], distances=distances)
    assert bounds.asked < pair_count(X.shape[0]) // 20
    assert again.found == first.found and again.n_pairs == pair_count(X.shape[0])


def test_kept_distances_fill_the_blocks_rectangles():
    for n, block_rows in ((2, 1), (9, 4), (40, 7), (41, 40), (300, 38)):
        X = np.random.default_rng(n).standard_normal((n, 3))
        distances = PairDistances(X, block_rows)
        blocks = [distances.block(start) for start in distances.starts()]
        assert sum(b.dX.size for b in blocks) == rectangle_entries(n, block_rows)
        assert sum(np.count_nonzero(~np.isnan(b.dX)) + b.close.size for b in blocks) == pair_count(n)


def _exact_ratios(X, Psi):
    """‖Ψ(x_i − x_j)‖² / ‖x_i − x_j‖² of every pair in rational arithmetic (the floats as given)."""
    from fractions import Fraction

    Xf = [[Fraction(float(v)) for v in row] for row in X]
    Pf = [[Fraction(float(v)) for v in row] for row in Psi]
    out = {}
    for i in range(len(Xf)):
        for j in range(i + 1, len(Xf)):
            d = [a - b for a, b in zip(Xf[i], Xf[j], strict=True)]
            y = [sum(p * v for p, v in zip(row, d, strict=True)) for row in Pf]
            out[(i, j)] = sum(v * v for v in y) / sum(v * v for v in d)
    return out


@pytest.mark.parametrize("screen", [True, False])
def test_the_rounding_of_the_points_images_is_bounded(monkeypatch, screen):
    """Y = XΨᵀ is rounded too: by ε·Σ|ψ_kl x_l|, far above ε‖y‖ when a large Ψ cancels on points far
    from the origin. Here (points near the line of (1, 1), 10³ from the origin; Ψ of norm 10⁶ across it)
    the Gram ratios are 7e-8 off, and a pair violating its bound by 3e-8 (exact rational arithmetic) was
    settled as satisfied, by the screen and by the pair-by-pair judgement alike."""
    from fractions import Fraction

    rng = np.random.default_rng(7)
    K, c, n = 1e6, 1e3, 24
    u = rng.uniform(-1.0, 1.0, n)
    s = u * (1.0 + 0.01 * rng.standard_normal(n))
    X = np.column_stack([c + u + s / K, c + u - s / K]) / np.sqrt(2.0)
    Psi = (K / np.sqrt(2.0)) * np.array([[1.0, -1.0]])
    exact = _exact_ratios(X, Psi)
    if not screen:
        monkeypatch.setattr(pair_scan, "CLOSE_FACTOR", np.inf)
    ratios = sorted(exact.values())
    for q in (0.2, 0.4, 0.6, 0.8):
        hi = float(ratios[int(q * len(ratios))]) - 3e-8
        scan = scan_pair_violations(X, None, _bounds(-np.inf, hi), tol=0.0, factor=Psi)
        violation = {pair: r - Fraction(hi) for pair, r in exact.items()}
        reported = set(zip(scan.i.tolist(), scan.j.tolist(), strict=True))
        # beyond the rounding of the explicit differences (8e-11 here), every violator is reported
        assert {pair for pair, v in violation.items() if v > 1e-9} <= reported
        assert scan.max_violation >= float(max(violation.values())) - 1e-9


@pytest.mark.parametrize("scale", [1e-170, 1.0, 1e160])
def test_points_whose_squares_under_or_overflow_are_judged(scale):
    """Squared norms of points of norm 1e-170 underflow to 0 and those of norm 1e160 overflow: Gram values
    0/0 and NaN. Such pairs were settled (NaN compares false) and the scan reported no violator and a worst
    violation of −inf; the ratios are those of the points at scale 1 (exact rational arithmetic)."""
    rng = np.random.default_rng(3)
    base = rng.standard_normal((12, 3))
    Psi = np.diag([1.3, 1.0, 0.7])
    exact = _exact_ratios(base, Psi)
    violation = {pair: max(0.8 - float(r), float(r) - 1.2) for pair, r in exact.items()}
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        scan = scan_pair_violations(base * scale, None, _bounds(0.8, 1.2), tol=1e-9, factor=Psi)
    assert set(zip(scan.i.tolist(), scan.j.tolist(), strict=True)) == {p for p, v in violation.items() if v > 1e-9}
    assert scan.max_violation == pytest.approx(max(violation.values()), abs=1e-12)
    assert scan.n_pairs == pair_count(12)


def test_a_map_whose_images_overflow_reports_every_violator():
    """Ψ of norm 1e155: the images' squared distances overflow (inf, and NaN where inf − inf), and the screen
    settled the NaN ratios as satisfied (31 of the 66 violators unreported, the worst violation inf)."""
    X = np.random.default_rng(3).standard_normal((12, 3))
    with np.errstate(over="ignore", invalid="ignore"):
        scan = scan_pair_violations(X, None, _bounds(0.8, 1.2), tol=1e-9, factor=np.diag([1.3, 1.0, 0.7]) * 1e155)
    assert scan.found == scan.i.size == pair_count(12) and scan.max_violation == np.inf


def test_the_gram_distances_rounding_bound_is_a_worst_case_one():
    """The rounding of a Gram distance ‖a‖² + ‖b‖² − 2aᵀb is bounded by 2γ_{N+2}(‖a‖² + ‖b‖²), not by the
    rule of thumb 8ε√N(‖a‖² + ‖b‖²) of random rounding: for a = b, a constant vector of length 65,536 whose
    partial sums round the same way, the norms (einsum) and the Gram entry (BLAS) are summed in different
    orders and their difference is 1.4 times the rule of thumb (OpenBLAS, x86-64), 0.04 times the bound."""
    from fractions import Fraction

    N = 65536
    eps = np.finfo(float).eps
    beyond = 0
    for f in (20347060, 5753865, 34347767, 2**25 + 1):
        a = np.full(N, 1.0 + f * 2.0**-52)
        X = np.vstack([a, a, a + np.eye(1, N, 7)[0]])
        norms2 = np.einsum("ij,ij->i", X, X)
        block = pair_scan.distance_block(X, norms2, 0, 2)
        computed = {(0, 1): block.close_dX[0] if block.close.size and block.close[0] == 0 else block.dX[0, 0],
                    (0, 2): block.dX[0, 1] if not np.isnan(block.dX[0, 1]) else block.close_dX[-1]}
        for (i, j), d in computed.items():
            differ = np.flatnonzero(X[i] != X[j])          # exact: the other terms are 0
            exact = sum((Fraction(x) - Fraction(y)) ** 2 for x, y in zip(X[i, differ].tolist(), X[j, differ].tolist(),
                                                                         strict=True))
            error = abs(Fraction(float(d)) - exact)
            assert error <= block.err
            assert error <= pair_scan._rounding_bound(X, norms2, np.array([i]), np.array([j]))[0]
            beyond += error > 8.0 * eps * (norms2[i] + norms2[j]) * N**0.5
    # On OpenBLAS/x86-64 (this project's CI) at least one case exceeds the rule of thumb, so the asserts above
    # fail with it; other BLAS summation orders may round these cases more kindly, which must not fail the
    # suite on such a machine: the count is reported, not asserted.
    print(f"cases beyond 8 eps sqrt(N): {beyond}")


@pytest.mark.parametrize("scale", [0.7, 1.05])
def test_a_first_scan_keeps_its_clear_violators_in_bulk(monkeypatch, scale):
    """With the same bounds on every pair and Gram values kept, the pairs that violate by more than tol
    even after the block's rounding bound are kept as clear violators without rounding bounds of their own
    (a first scan of column generation finds most pairs so): the same violators, values, order, counts
    and worst violation as judging every pair by itself, with far fewer pairs bounded one by one."""
    X, _ = load_mnist(size=28, n_samples=300, random_state=2)
    _, _, rows = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    factor = rows[:20] * scale
    bounded = []
    uncertainty = pair_scan._uncertainty
    monkeypatch.setattr(pair_scan, "_uncertainty", lambda X, scan, i, *a: bounded.append(i.size) or
                        uncertainty(X, scan, i, *a))
    for keep in (None, 50):
        bounded.clear()
        bounds = _bounds(0.8, 1.2)
        scan = scan_pair_violations(X, None, bounds, tol=1e-3, factor=factor, exact_values=False, block_rows=37,
                                    keep=keep)
        assert scan.found > pair_count(X.shape[0]) // 4
        assert sum(bounded) < scan.found // 10
        reference = _unscreened(monkeypatch, X, None, bounds, tol=1e-3, factor=factor, block_rows=37,
                                exact_values=False, keep=keep)
        _same_violators(scan, reference, 1e-3)
        assert scan.max_violation == reference.max_violation
