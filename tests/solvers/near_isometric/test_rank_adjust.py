"""Rank adjustment (Algorithm 3 of Luo et al.) and column generation over all pairs (Algorithm 4) of
FroMax and NILE-Pro (``sdpembed/solvers/near_isometric/rank_adjust.py``)."""

import numpy as np
import pytest

from sdpembed.datasets import translating_squares
from sdpembed.isometry import isometry_constants
from sdpembed.solvers.near_isometric.fromax import _LeastSquares, fromax
from sdpembed.solvers.near_isometric.nilepro import nilepro
from sdpembed.solvers.near_isometric.rank_adjust import (
    near_isometric_cg,
    rank_adjust,
    rank_adjust_cg,
    span_coordinates,
)

from .conftest import NUMAX_RANK, check_provable

# ---------------------------------------------------------------------------- rank adjustment


@pytest.mark.parametrize("method", ["nilepro", "fromax"])
def test_rank_adjustment_stops_where_the_next_rank_fails(squares, numax_bounds, method):
    V = squares[1]
    res = rank_adjust(V, 0.25, method=method)
    steps = res.history
    assert res.status == "converged" and res.method == f"{method}_ra"
    R0 = int(steps["start_rank"][0])
    assert res.rank <= R0 and steps["status"][0] == "converged"       # the default R₀ is feasible at once
    failed = steps["start_rank"][steps["status"] != "converged"]
    assert res.rank - 1 in failed                                       # Algorithm 3's stopping rule
    check_provable(res.Psi, 0.25, numax_bounds[0.25], secants=V)   # (its rank vs NuMax's: not a theorem)


def test_rank_adjustment_verbatim_algorithm_3(squares):
    """rank_step=1, restart='truncate': R₀, R₀−1, … from Γ^½Uᵀ truncations, until the first failure."""
    V = squares[1]
    res = rank_adjust(V, 0.4, method="nilepro", initial_rank=9, rank_step=1, restart="truncate")
    starts = res.history["start_rank"]
    assert list(starts) == list(range(9, 9 - len(starts), -1))
    assert res.success and res.rank == starts[-2] and res.history["status"][-1] != "converged"
    assert isometry_constants(res.Psi, secants=V).delta <= 0.4


# ---------------------------------------------------------------------------- column generation


@pytest.mark.parametrize("method", ["nilepro", "fromax"])
def test_cg_over_all_pairs_proves_feasibility(squares, numax_bounds, method):
    X, V, _ = squares
    rank = NUMAX_RANK[0.25]
    res = near_isometric_cg(X, 0.25, rank, method=method, initial_pairs=40, initial_neighbors=1, random_state=0)
    assert res.status == "converged" and res.extra["rounds"] > 1 and len(res.extra["pairs"]) < len(V)
    assert np.isnan(res.dual_bound) and "no certificate" in res.message
    iso = check_provable(res.Psi, 0.25, numax_bounds[0.25], X=X)      # every pair, not just the working set
    assert iso == pytest.approx(res.isometry, abs=1e-9)
    full = (nilepro if method == "nilepro" else fromax)(V, 0.25, rank)  # the all-secant version agrees
    assert full.feasible == res.feasible


def test_fromax_cg_caps_its_working_set(squares):
    """FroMax factorises an S×S matrix: the working set stays within exact_max, yet every pair is checked."""
    X = squares[0]
    res = near_isometric_cg(X, 0.25, 8, method="fromax", exact_max=120, initial_pairs=40, max_add=60,
                            random_state=0)
    assert res.success and max(res.history["working"]) <= 120
    assert isometry_constants(res.Psi, X=X).delta <= 0.25


def test_fromax_cg_frees_each_rounds_factor(squares, monkeypatch):
    """Each column-generation round factorises a new S×S matrix (``_LeastSquares``, cached on
    that round's FactorOps). Reference counting alone must free it when the round ends: with the
    cyclic collector off, no earlier factor is alive when a round builds its own, nor any after
    the run. A reference cycle through the cache kept every round's factor (24 GB on 800 MNIST
    images), since numpy arrays never trigger the cyclic collector."""
    import gc
    import weakref

    X = squares[0]
    made, alive_before = [], []
    original = _LeastSquares.__init__

    def tracking(self, *args, **kwargs):
        original(self, *args, **kwargs)
        alive_before.append(sum(ref() is not None for ref in made))
        made.append(weakref.ref(self))

    monkeypatch.setattr(_LeastSquares, "__init__", tracking)
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        res = near_isometric_cg(X, 0.25, 8, method="fromax", initial_pairs=40, max_add=60, random_state=0)
        alive_after = sum(ref() is not None for ref in made)
    finally:
        if enabled:
            gc.enable()
    assert res.success and len(made) >= 3                  # several rounds, one factor each
    assert max(alive_before) == 0 and alive_after == 0


def test_cg_on_14x14_squares():
    X = translating_squares(14, 4)                                      # 121 images, 7,260 pairs
    res = near_isometric_cg(X, 0.25, 20, method="nilepro", random_state=0)
    assert res.success and isometry_constants(res.Psi, X=X).delta <= 0.25


def test_rank_adjustment_with_cg(squares, numax_bounds):
    X = squares[0]
    res = rank_adjust_cg(X, 0.4, method="nilepro", initial_pairs=60, random_state=0)
    assert res.success and res.rank - 1 in res.history["start_rank"][res.history["status"] != "converged"]
    check_provable(res.Psi, 0.4, numax_bounds[0.4], X=X)


def test_runs_work_in_the_span_of_the_points(squares, numax_bounds):
    """25 images of 49 pixels span at most 24 dimensions: span_coordinates keeps every pair's distance, and
    the runs iterate in those coordinates (FroMax's X has r < N rows) yet return maps of the points, with
    rows in the span, that meet δ on every pair of the points themselves; no reduction for a rank beyond r."""
    X = squares[0]
    points, B = span_coordinates(X, 8)
    r = B.shape[1]
    assert r < X.shape[1] and points.shape == (len(X), r)
    np.testing.assert_allclose(B.T @ B, np.eye(r), atol=1e-12)
    i, j = np.triu_indices(len(X), 1)
    np.testing.assert_allclose(np.linalg.norm(points[i] - points[j], axis=1), np.linalg.norm(X[i] - X[j], axis=1),
                               rtol=1e-12)
    assert span_coordinates(X, r + 1)[1] is None and span_coordinates(points, 8)[1] is None
    res = near_isometric_cg(X, 0.25, NUMAX_RANK[0.25], method="fromax", initial_pairs=40, random_state=0)
    assert res.success and res.extra["state"].X.shape == (r, NUMAX_RANK[0.25]) and res.Psi.shape[1] == X.shape[1]
    np.testing.assert_allclose(res.Psi @ res.extra["basis"] @ res.extra["basis"].T, res.Psi, atol=1e-12)
    # the scan's bound on the distortion: above the exact one by at most its rounding margin
    assert 0.0 <= res.isometry - check_provable(res.Psi, 0.25, numax_bounds[0.25], X=X) + 1e-15 <= 1e-11
    ra = rank_adjust_cg(X, 0.25, method="nilepro", initial_pairs=40, random_state=0)
    assert ra.success and "basis" in ra.extra and ra.extra["final"].Psi.shape == ra.Psi.shape == (ra.rank, 49)
    assert 0.0 <= ra.isometry - check_provable(ra.Psi, 0.25, numax_bounds[0.25], X=X) + 1e-15 <= 1e-11


def test_a_secant_outside_the_kept_span_is_measured_on_the_points():
    """Two points that differ by 1e-13 in a direction no other pair spans: span_coordinates leaves it out
    (singular value below SPAN_RTOL), so every map of the span's coordinates sends that secant to ~0. Judged
    again on X the run is not 'converged' (distortion 1), and neither are the maps it keeps in ``extra``:
    ``final`` was returned 'converged' with its distortion 2e-11 of the span's coordinates."""
    from sdpembed.solvers.near_isometric.rank_adjust import pair_isometry

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.standard_normal((30, 2)), np.zeros(30)])
    X[29] = X[28]
    X[29, 2] = 1e-13
    assert span_coordinates(X, 2)[1].shape == (3, 2)
    res = rank_adjust_cg(X, 0.2, method="nilepro", random_state=0, initial_rank=2)
    assert res.status == "stalled" and res.isometry == pytest.approx(1.0, abs=1e-9)
    for key in ("final", "last"):
        kept = res.extra[key]
        assert kept.isometry == pytest.approx(pair_isometry(X, kept.Psi)[0], abs=1e-12), key
        assert kept.status != "converged", key


# ---------------------------------------------------------------------------- failing fast


@pytest.mark.parametrize("method", [nilepro, fromax])
def test_a_too_small_rank_gives_up_long_before_the_budget(method):
    """The forecast (BestMap): a rank that cannot reach δ stops as soon as its pace shows it would need more
    than the iterations left, well before max_iter and before the plain 1%-per-window rule."""
    from sdpembed.datasets import load_mnist
    from sdpembed.secants import all_secants

    X, _ = load_mnist(size=28, digits=5, n_samples=60, random_state=0)
    V = all_secants(X.reshape(60, 7, 4, 7, 4).mean(axis=(2, 4)).reshape(60, 49))
    plain = method(V, 0.25, 6, max_iter=5000)
    fast = method(V, 0.25, 6, max_iter=5000, forecast=True)
    assert plain.status == fast.status == "stalled"
    assert fast.iterations <= 1000 < 5000 and fast.iterations < plain.iterations
    assert "would need about" in fast.message and "left of max_iter" in fast.message
    assert fast.isometry > 0.25                                # given up, not hidden: the map misses δ
    # a rank that reaches δ is not cut short: the same map with and without the forecast
    ok, ok_fast = (method(V, 0.4, 12, max_iter=5000, forecast=flag) for flag in (False, True))
    assert ok.status == ok_fast.status == "converged" and ok.iterations == ok_fast.iterations
    np.testing.assert_array_equal(ok.Psi, ok_fast.Psi)


def test_rank_adjustment_never_tries_below_a_failed_rank(squares):
    """After a failure at rank f, no rank ≤ f is tried again (feasibility is monotone in the rank):
    with halving steps 40 → 30 (fails) → 35, the next tries are 31 (not 30 again, then 29)."""
    from sdpembed.solvers.near_isometric.nonconvex import NearIsometricResult
    from sdpembed.solvers.near_isometric.rank_adjust import _adjust

    tried = []

    def run_at_rank(rank, start):
        tried.append(rank)
        ok = rank >= 31
        return NearIsometricResult(Psi=np.eye(rank, 64), delta=0.1, isometry=0.05 if ok else 0.2,
                                   status="converged" if ok else "stalled", n_secants=1)

    res = _adjust(run_at_rank, lambda Psi: 1.0, 40, "pca", 1, None, "halving", "pca", 0.1, "fake", False)
    assert tried == [40, 30, 35, 31] and res.rank == 31 and "rank 30 failed" in res.message
    # on real runs: every rank tried lies above every rank that failed before it
    V = squares[1]
    for method in ("nilepro", "fromax"):
        res = rank_adjust(V, 0.25, method=method, initial_rank=16)
        starts, status = res.history["start_rank"], res.history["status"]
        for k in range(len(starts)):
            assert not np.any(starts[k] <= starts[:k][status[:k] != "converged"]), (method, list(starts))
        assert res.success and res.rank - 1 in starts[status != "converged"]


def test_column_generation_rounds_are_forecast(method="nilepro"):
    """At a rank that cannot reach δ over all pairs, every round meets δ on its working set and the next
    scan finds new violators, so no single run stalls: the round forecast stops the run before a round
    whose predecessor (≥ patience iterations) left an excess that the budget cannot remove at its pace.
    (FroMax's rounds go through the same driver, ``_NonConvexInner``.)"""
    from sdpembed.datasets import load_mnist

    X, _ = load_mnist(size=28, digits=5, n_samples=100, random_state=0)
    X = X.reshape(100, 7, 4, 7, 4).mean(axis=(2, 4)).reshape(100, 49)
    options = {"method": method, "initial_pairs": 100, "initial_neighbors": 1, "max_add": 100, "random_state": 0,
               "max_iter": 3000}
    plain = near_isometric_cg(X, 0.2, 6, **options)
    fast = near_isometric_cg(X, 0.2, 6, forecast=True, **options)
    assert not plain.success and not fast.success and fast.status == "stalled"
    assert "round forecast" in fast.message and "left of max_iter" in fast.message
    rounds = fast.history["admm_iterations"]
    assert rounds[-1] == 0 and max(rounds[:-1]) >= 200          # stopped before the round, after a long one
    assert fast.iterations < plain.iterations
    assert fast.isometry > 0.2 and isometry_constants(fast.Psi, X=X).delta == pytest.approx(fast.isometry, abs=1e-9)


def test_round_forecast_leaves_a_reachable_rank_alone(squares):
    """A rank that reaches δ over all pairs ends the same with and without the forecasts."""
    X = squares[0]
    runs = [near_isometric_cg(X, 0.25, NUMAX_RANK[0.25], method="nilepro", initial_pairs=40, initial_neighbors=1,
                              random_state=0, forecast=flag) for flag in (False, True)]
    assert runs[0].success and runs[1].success and runs[0].iterations == runs[1].iterations
    np.testing.assert_array_equal(runs[0].Psi, runs[1].Psi)


class _RoundOps:
    """Stands in for a round's FactorOps in the round rules: S pairs, the last map's worst distortion."""

    def __init__(self, S, worst):
        self.S, self.worst = S, worst

    def isometry(self, Psi):
        return self.worst


def _round_rules(excess, iterations, sizes, cap=100, delta=0.2, max_rounds=100):
    """Feed the round rules of ``_NonConvexInner`` a trajectory (the all-pairs excess after each round,
    its iterations and working set); the round before which they stop the run (None: never) and why."""
    from sdpembed.solvers.near_isometric.rank_adjust import _NonConvexInner

    inner = _NonConvexInner(fromax, delta, 3, np.eye(3, 5), False, 5000, {"forecast": True, "patience": 200}, cap,
                            max_rounds)
    inner.last_map = np.eye(3, 5)
    for round_, (e, its, size) in enumerate(zip(excess, iterations, sizes, strict=True), start=1):
        inner.iterations.append(its)
        inner.sizes.append(size)
        inner.used += its
        stop = inner._forecast_stop(_RoundOps(size, delta + e))
        if stop is not None:
            return round_ + 1, stop
    return None, None


def test_round_rules_on_trajectories():
    """Rule (4): at the working-set cap, the geometric pace of the least all-pairs excess over the last
    three rounds must reach δ/20 within the rounds left. FroMax-CG on the squares, δ = 0.1, cap 60
    (excess after each round): rank 9 cannot reach δ (it settles near 0.1 for 100 rounds) and is
    stopped before round 12; rank 10 meets δ after 20 rounds with an oscillating excess and is not;
    nor are MNIST-800's rank 31 and rank 27 at δ = 0.2 (both met δ), while rank 23 (failed) is stopped
    before round 6. An excess that falls 10 % a round is left alone while the rounds left suffice
    (the rule of six rounds that must halve it gave such runs up), and stopped when they do not.
    Below the cap the rule does not apply. Rule (2) judges short rounds together, once they took
    ``patience`` iterations."""
    cap = 60
    failing = ([0.387, 0.249, 0.281, 0.181, 0.229, 0.169, 0.157, 0.120, 0.118, 0.111, 0.115, 0.108],
               [6, 9, 8, 11, 8, 10, 11, 11, 8, 13, 11, 10], [30] + [60] * 11)
    meeting = ([0.348, 0.207, 0.286, 0.103, 0.134, 0.0597, 0.0816, 0.0395, 0.0582, 0.0308, 0.0317, 0.0255,
                0.0187, 0.0126, 0.0107, 0.00687, 0.00555, 0.00375, 0.0016],
               [6, 9, 9, 7, 7, 7, 7, 11, 9, 8, 13, 8, 8, 10, 9, 10, 5, 5, 9], [30] + [60] * 18)
    mnist = [([0.581, 0.304, 0.153, 0.095, 0.023, 0.002], [27, 29, 44, 74, 90, 41], [4407] + [6000] * 5),
             ([0.501, 0.337, 0.263, 0.151, 0.127, 0.102, 0.0558, 0.0171, 0.00303],
              [43, 58, 108, 175, 316, 506, 772, 852, 406], [5427] + [6000] * 8)]
    at, why = _round_rules(*failing, cap=cap, delta=0.1)
    assert at == 12 and "stall at the working-set cap (forecast)" in why
    assert "from 0.12 to 0.111" in why and "119 more rounds, 89 are left" in why
    assert _round_rules(*failing, cap=None, delta=0.1)[0] != 12           # no cap: not this rule
    assert _round_rules(*failing, cap=61, delta=0.1)[0] != 12             # never at the cap
    assert _round_rules(*meeting, cap=cap, delta=0.1) == (None, None)
    for trajectory in mnist:
        assert _round_rules(*trajectory, cap=6000) == (None, None)
    at, why = _round_rules([0.541, 0.430, 0.380, 0.326, 0.346], [70, 100, 187, 259, 381], [5427] + [6000] * 4,
                           cap=6000)
    assert at == 6 and "(x0.912 a round)" in why
    slow = ([0.1 * 0.9**t for t in range(14)], [50] * 14, [60] * 14)
    assert _round_rules(*slow, cap=cap, delta=0.1) == (None, None)
    at, why = _round_rules(*slow, cap=cap, delta=0.1, max_rounds=20)
    assert at == 5 and "25.4 more rounds, 16 are left" in why
    # short rounds that barely move the excess: judged together once they took 200 iterations
    at, why = _round_rules([0.30, 0.298, 0.297, 0.296, 0.295], [60] * 5, [50] * 5)
    assert at == 6 and "last 4 round(s) (240 iterations" in why
    assert _round_rules([0.30, 0.298, 0.297, 0.296], [60] * 4, [50] * 4) == (None, None)   # 180 < patience


def _fromax_squares(X, rank, forecast, **options):
    return near_isometric_cg(X, 0.1, rank, method="fromax", initial_pairs=30, initial_neighbors=1, max_add=30,
                             exact_max=60, random_state=0, forecast=forecast, **options)


def test_cap_stall_abandons_an_unreachable_rank_early_and_leaves_a_reachable_one(squares):
    """FroMax-CG with its working set capped below the 300 pairs of the squares: at a rank that cannot
    reach δ the cap-stall rule ends the run after a few rounds, long before the plain budget; at a
    reachable rank the rules change nothing."""
    X = squares[0]
    plain = _fromax_squares(X, 6, False)
    fast = _fromax_squares(X, 6, True)
    assert not plain.success and fast.status == "stalled" and "working-set cap" in fast.message
    assert fast.extra["rounds"] < plain.extra["rounds"] and fast.iterations < plain.iterations
    runs = [_fromax_squares(X, NUMAX_RANK[0.1] + 2, flag) for flag in (False, True)]
    assert runs[0].success and runs[1].success and runs[0].iterations == runs[1].iterations
    np.testing.assert_array_equal(runs[0].Psi, runs[1].Psi)


def test_fromax_ra_at_the_cap_finds_the_rank_of_the_exhaustive_walk(squares):
    """FroMax RA over all pairs with a capped working set: the bisection with every fail-fast rule ends at
    the rank of Algorithm 3's walk with steps of one and no forecasts (every rank down to the first one
    whose run fails within its whole budget)."""
    X = squares[0]
    options = {"method": "fromax", "initial_rank": 16, "initial_pairs": 30, "initial_neighbors": 1, "max_add": 30,
               "exact_max": 60, "random_state": 0}
    walk = rank_adjust_cg(X, 0.1, rank_step=1, forecast=False, **options)
    fast = rank_adjust_cg(X, 0.1, **options)
    assert walk.success and fast.success and fast.rank == walk.rank
    assert fast.rank - 1 in fast.history["start_rank"][fast.history["status"] != "converged"]
    assert sum(fast.history["iterations"]) < sum(walk.history["iterations"])


# ---------------------------------------------------------------------------- the rank search


def _monotone_oracle(answer, tried):
    """A fake run: rank r meets δ iff r ≥ ``answer`` (feasibility monotone in the rank)."""
    from sdpembed.solvers.near_isometric.nonconvex import NearIsometricResult

    def run_at_rank(rank, start):
        tried.append(rank)
        ok = rank >= answer
        return NearIsometricResult(Psi=np.eye(rank, 200), delta=0.1, isometry=0.05 if ok else 0.2,
                                   status="converged" if ok else "stalled", n_secants=1)

    return run_at_rank


@pytest.mark.parametrize("R0", [1, 2, 7, 42])
def test_bisect_search_finds_the_rank_of_the_exhaustive_walk(R0):
    """rank_step="bisect" ends where Algorithm 3's walk with steps of one ends, for every answer in
    [1, R₀]: never a second run at a rank that met δ, never a rank at or below one that failed, never a
    run below 3/4 of the least success before a failure brackets the answer, and O(log R₀) runs."""
    from sdpembed.solvers.near_isometric.rank_adjust import _adjust

    for answer in range(1, R0 + 1):
        walk, tried = [], []
        exhaustive = _adjust(_monotone_oracle(answer, walk), lambda Psi: 1.0, R0, "pca", 1, None, 1, "pca", 0.1,
                             "fake", False)
        res = _adjust(_monotone_oracle(answer, tried), lambda Psi: 1.0, R0, "pca", 1, None, "bisect", "pca", 0.1,
                      "fake", False)
        assert res.rank == exhaustive.rank == answer, (answer, tried)
        assert len(tried) == len(set(tried))                              # no rank run twice
        succeeded, failed = [], []
        for rank in tried:
            assert all(rank > f for f in failed) and all(rank < s for s in succeeded), (answer, tried)
            if not failed and succeeded:
                assert rank >= 0.75 * min(succeeded) - 1, (answer, tried)  # no far probe before a failure
            (succeeded if rank >= answer else failed).append(rank)
        assert len(tried) <= 2 * np.log2(R0) / np.log2(4 / 3) * 0.5 + np.log2(R0) + 2, (answer, tried)


def test_bisect_does_not_probe_far_below_a_success():
    """From R₀ = 189 to an answer of 29 the halving steps ran rank 1 (189 − 4·47); the bisection never
    goes below 3/4 of a success until a failure, then bisects: 189 142 106 79 59 44 33 24 | 28 30 29."""
    from sdpembed.solvers.near_isometric.rank_adjust import _adjust, next_bisect_rank

    tried = []
    res = _adjust(_monotone_oracle(29, tried), lambda Psi: 1.0, 189, "pca", 1, None, "bisect", "pca", 0.1, "fake",
                  False)
    assert tried == [189, 141, 105, 78, 58, 43, 32, 24, 28, 30, 29] and res.rank == 29
    assert "rank 28 failed" in res.message
    halving = []
    _adjust(_monotone_oracle(29, halving), lambda Psi: 1.0, 189, "pca", 1, None, "halving", "pca", 0.1, "fake", False)
    assert 1 in halving and min(tried) == 24
    assert next_bisect_rank(8, None) == 6 and next_bisect_rank(1, None) == 1 and next_bisect_rank(30, 24) == 27


@pytest.mark.parametrize("method", ["nilepro", "fromax"])
def test_numax_start_is_a_rank_that_meets_delta(squares, numax_bounds, method):
    """initial_map="from_numax": R₀ is NuMax's rank (its P is feasible for the same box, so a map of that
    rank meets δ; solved at δ(1 − NUMAX_MARGIN), its numerical rank may exceed the rank at δ by one
    here) and the first run, from NuMax's factor, meets δ at once; over secants and over all pairs."""
    X, V, _ = squares
    for res in (rank_adjust(V, 0.25, method=method, initial_map="from_numax"),
                rank_adjust_cg(X, 0.25, method=method, initial_map="from_numax", initial_pairs=40, random_state=0)):
        assert NUMAX_RANK[0.25] <= res.history["start_rank"][0] <= NUMAX_RANK[0.25] + 1
        assert res.history["status"][0] == "converged" and res.history["iterations"][0] == 0
        assert res.success and res.rank <= NUMAX_RANK[0.25]
        assert res.rank - 1 in res.history["start_rank"][res.history["status"] != "converged"]
        check_provable(res.Psi, 0.25, numax_bounds[0.25], X=X)
    with pytest.raises(ValueError, match="initial_rank must not be given"):
        rank_adjust(V, 0.25, initial_rank=8, initial_map="from_numax")


def test_numax_start_is_solved_for_feasibility_not_optimality(squares, monkeypatch):
    """The NuMax start runs NuMax-CG to NUMAX_START_GAP, not to its own 1e-5: its final scan still proves
    P feasible, and R₀, the first run (δ met at once) and the rank found are those of a tight start."""
    import sdpembed.solvers.near_isometric.rank_adjust as ra

    X, runs = squares[0], []

    def spy(*args, **kwargs):
        runs.append((kwargs.get("gap_tol"), result := column_generation(*args, **kwargs)))
        return result

    from sdpembed.solvers.numax.column_generation import column_generation

    monkeypatch.setattr(ra, "column_generation", spy)
    options = {"method": "nilepro", "initial_map": "from_numax", "initial_pairs": 40, "random_state": 0}
    loose = rank_adjust_cg(X, 0.25, **options)
    monkeypatch.setattr(ra, "NUMAX_START_GAP", 1e-5)
    monkeypatch.setattr(ra, "NUMAX_START_TOL", 1e-5)
    tight = rank_adjust_cg(X, 0.25, **options)
    assert [gap for gap, _ in runs] == [1e-2, 1e-5] and runs[0][1].status == "optimal"
    assert runs[0][1].max_violation <= 1e-6                            # feasible on all pairs, proven by the scan
    assert loose.history["start_rank"][0] == tight.history["start_rank"][0] and loose.history["iterations"][0] == 0
    assert loose.success and loose.rank == tight.rank


def test_numax_factor_has_numax_rank():
    from sdpembed.solvers.near_isometric.rank_adjust import numax_factor

    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 12))
    P = A.T @ A + 1e-9 * np.eye(12)                     # rank 5 up to a tail below the threshold
    Psi = numax_factor(P)
    assert Psi.shape == (5, 12)
    np.testing.assert_allclose(Psi.T @ Psi, A.T @ A, atol=1e-7)


@pytest.mark.parametrize("method", ["nilepro", "fromax"])
def test_bisect_search_matches_the_exhaustive_walk_on_squares(squares, method):
    """On a small instance the bisection ends at the rank of Algorithm 3's walk with steps of one
    (every rank from R₀ down to the first failure), in fewer runs, none repeated."""
    V = squares[1]
    walk = rank_adjust(V, 0.25, method=method, initial_rank=16, rank_step=1)
    bisect = rank_adjust(V, 0.25, method=method, initial_rank=16)
    starts = list(bisect.history["start_rank"])
    assert bisect.rank == walk.rank and bisect.success and walk.success
    assert len(starts) == len(set(starts)) and len(starts) <= len(walk.history["start_rank"])
