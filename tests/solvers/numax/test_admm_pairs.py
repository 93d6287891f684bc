"""The pair ADMM (implicit iterates, partial eigensolver) against the explicit ADMM it reproduces."""

import warnings
from dataclasses import replace

import numpy as np
import pytest

from sdpembed import NuMaxInstance, solve
from sdpembed.datasets import gaussian_points, translating_squares
from sdpembed.problems.numax_operator import PairSecantOperator, SecantOperator
from sdpembed.secants import pair_count, pairs_from_linear_index
from sdpembed.solvers.numax.admm import box_trace_admm
from sdpembed.solvers.numax.admm_control import ADMMPenalty, ADMMStopping
from sdpembed.solvers.numax.admm_pairs import OutsideMonitor, PairNumerics, pair_trace_admm
from sdpembed.solvers.numax.column_generation import column_generation
from sdpembed.solvers.numax.pair_linalg import SpanCoordinates

from ...conftest import digits_points

#: the tolerances of column generation's loose rounds
LOOSE = ADMMStopping(tol=1e-3, feas_tol=1e-3, gap_tol=1e-3)


def _pair_operator(X, n_pairs, seed=0):
    n = X.shape[0]
    index = np.sort(np.random.default_rng(seed).choice(pair_count(n), size=n_pairs, replace=False))
    return PairSecantOperator(X, *pairs_from_linear_index(index, n))


def _low_rank_points(n=70, dim=40, rank=12, seed=0):
    """Points in a ``rank``-dimensional subspace of R^dim: the span reduction is exercised."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, rank)) @ rng.standard_normal((rank, dim))


@pytest.mark.parametrize("delta", [0.2, 0.3])
def test_same_iterates_as_the_explicit_admm(delta):
    op = _pair_operator(digits_points(60), 600)              # span of dimension 53, rank ≈ 10
    explicit = box_trace_admm(op.explicit().V, 1 - delta, 1 + delta)
    # a near-exact partial eigensolver: every implicit quantity (norms, the adaptive penalty, the
    # recursively updated 𝒜(Λ) and K z) must reproduce the explicit run; without the polish and its
    # corrected bound, which the explicit ADMM lacks (they may end the run a few iterations earlier)
    pairs = pair_trace_admm(op, 1 - delta, 1 + delta, numerics=PairNumerics(eig_tol=1e-12, polish=False))
    assert explicit.status == pairs.status == "optimal"
    assert pairs.iterations == explicit.iterations
    for key in ("objective", "e1", "e2", "beta", "rank"):
        np.testing.assert_allclose(pairs.history[key], explicit.history[key], rtol=1e-6, atol=1e-9, err_msg=key)
    np.testing.assert_allclose(pairs.solution, explicit.solution, atol=1e-7)
    # the default tolerance takes cheaper partial solves and reaches the same certified optimum
    fast = pair_trace_admm(op, 1 - delta, 1 + delta)
    assert fast.status == "optimal" and fast.extra["partial_eigensolves"] > fast.extra["full_eigensolves"]
    assert fast.objective == pytest.approx(explicit.objective, rel=1e-6)
    assert fast.dual_bound <= fast.objective and fast.relative_gap <= 1e-5 and fast.max_violation <= 1e-6


def test_certificate_and_factor_come_from_the_explicit_secants():
    op = _pair_operator(digits_points(40), 400)
    result = pair_trace_admm(op, 0.8, 1.2)
    V = op.explicit().V
    values = np.einsum("ij,ij->i", V @ result.solution, V)
    assert result.max_violation == pytest.approx(max(0.0, float(np.max(np.abs(values - 1.0) - 0.2))), abs=1e-12)
    np.testing.assert_allclose(result.extra["values"], values, atol=1e-12)
    Psi = result.extra["factor"]
    np.testing.assert_allclose(Psi.T @ Psi, result.solution, atol=1e-12)
    # the bound is the certified one of the multipliers it reports
    y = result.extra["y"]
    assert np.max(np.linalg.eigvalsh(SecantOperator(V).adjoint(y))) <= 1.0 + 1e-9
    assert result.dual_bound == pytest.approx(float(np.sum(0.8 * np.maximum(y, 0) - 1.2 * np.maximum(-y, 0))),
                                              rel=1e-9)


def test_warm_start_matches_the_explicit_admm():
    """A warm start enters as dense L₀, Λ₀ (the a·Λ₀ term of the implicit Λ)."""
    X = digits_points(60, seed=1)
    first = _pair_operator(X, 500, seed=1)
    state = box_trace_admm(first.explicit().V, 0.85, 1.15, stopping=ADMMStopping(max_iter=40)).extra["state"]
    second = PairSecantOperator(X, first.i, first.j)        # same pairs: the warm start applies
    explicit = box_trace_admm(second.explicit().V, 0.85, 1.15, warm_start=state)
    pairs = pair_trace_admm(second, 0.85, 1.15, warm_start=state, numerics=PairNumerics(eig_tol=1e-12))
    assert explicit.status == pairs.status == "optimal"
    assert pairs.iterations == explicit.iterations
    np.testing.assert_allclose(pairs.history["e1"], explicit.history["e1"], rtol=1e-6, atol=1e-9)
    assert pairs.objective == pytest.approx(explicit.objective, rel=1e-9)


def test_time_limit_and_iteration_limit_are_not_optimal():
    op = _pair_operator(digits_points(40), 400)
    assert pair_trace_admm(op, 0.9, 1.1, stopping=ADMMStopping(max_iter=5)).status == "max_iterations"
    assert pair_trace_admm(op, 0.9, 1.1, stopping=ADMMStopping(time_limit=0.0)).status == "max_iterations"


def test_bad_input():
    with pytest.raises(TypeError, match="PairSecantOperator"):
        pair_trace_admm(SecantOperator(np.eye(3)), 0.9, 1.1)
    op = _pair_operator(digits_points(20), 50)
    with pytest.raises(ValueError, match="eta"):
        pair_trace_admm(op, 0.9, 1.1, penalty=ADMMPenalty(eta=2.0))
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        pair_trace_admm(op, 1.2, 0.8)
    # a bundle refuses a bad value when it is made, the ADMM anything but its bundle
    for options, message in ((lambda: {"numerics": PairNumerics(eig_tol=0.0)}, "eig_tol"),
                             (lambda: {"numerics": PairNumerics(refresh_every=0)}, "refresh_every"),
                             (lambda: {"numerics": PairNumerics(polish="no")}, "polish"),
                             (lambda: {"numerics": {"eig_tol": 1e-3}}, "numerics must be of type PairNumerics"),
                             (lambda: {"monitor": lambda factor: 0.0}, "monitor must be of type OutsideMonitor"),
                             (lambda: {"monitor": OutsideMonitor(0.0)}, "scan must be callable"),
                             (lambda: {"monitor": OutsideMonitor(lambda factor: 0.0, ratio=0.0)}, "ratio")):
        with pytest.raises(ValueError, match=message):
            pair_trace_admm(op, 0.9, 1.1, **options())


def test_a_basis_that_misses_a_secant_is_not_used():
    X = _low_rank_points(rank=12)
    op = _pair_operator(X, 200)
    _, _, rows = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    good = pair_trace_admm(op, 0.9, 1.1)
    bad_basis = pair_trace_admm(op, 0.9, 1.1, basis=rows[:11].T)      # rejected: the secant span is used
    assert bad_basis.status == "optimal" and bad_basis.objective == pytest.approx(good.objective, rel=1e-6)


def test_cg_paths_agree_and_loose_rounds_do_not_cycle():
    X = gaussian_points(60, 12, random_state=5)
    bounds = lambda i, j: (np.full(i.size, 0.8), np.full(i.size, 1.2))  # noqa: E731
    implicit = column_generation(X, bounds, initial_pairs=150, random_state=0)
    explicit = column_generation(X, bounds, initial_pairs=150, random_state=0, implicit=False)
    assert implicit.status == explicit.status == "optimal"
    assert implicit.objective == pytest.approx(explicit.objective, rel=1e-5)
    # a coarse loose keep rule drops pairs that come back; they are then kept, and the run ends
    coarse = column_generation(X, bounds, initial_pairs=150, random_state=0, loose_keep_multiplier=0.5)
    assert coarse.status == "optimal" and coarse.extra["rounds"] < 40
    assert coarse.objective == pytest.approx(explicit.objective, rel=1e-5)


def test_small_instances_start_from_all_pairs():
    X = translating_squares(7, 3)                        # 25 images, 300 pairs ≤ 2 × initial_pairs
    result = solve(NuMaxInstance(delta=0.2, X=X))
    assert result.status == "optimal"
    assert result.history["working"][0] == pair_count(len(X)) and result.extra["rounds"] <= 3


def test_cholesky_least_squares_gives_the_same_iterates():
    op = _pair_operator(digits_points(60), 600)
    inverse = pair_trace_admm(op, 0.8, 1.2, numerics=PairNumerics(eig_tol=1e-12, least_squares="inverse"))
    assert inverse.status == "optimal" and inverse.iterations > 50
    for mode in ("cholesky", "auto"):                 # auto: the factor, inverted after 50 iterations
        other = pair_trace_admm(op, 0.8, 1.2, numerics=PairNumerics(eig_tol=1e-12, least_squares=mode))
        assert other.status == "optimal" and other.iterations == inverse.iterations
        np.testing.assert_allclose(other.history["e1"], inverse.history["e1"], rtol=1e-6, atol=1e-10)
        np.testing.assert_allclose(other.solution, inverse.solution, atol=1e-8)
        assert (other.extra["state"].K_inv is None) == (mode == "cholesky")
    np.testing.assert_allclose(other.extra["state"].K_inv, np.linalg.inv(np.eye(600) + op.gram_squared()), atol=1e-10)
    # single precision: the same optimum (its least-squares errors, ≈ 1e-6, are not those of a certified run)
    single = pair_trace_admm(op, 0.8, 1.2, numerics=PairNumerics(least_squares="cholesky-single"),
                             stopping=ADMMStopping(max_iter=40))
    close = pair_trace_admm(op, 0.8, 1.2, numerics=PairNumerics(least_squares="cholesky"),
                            stopping=ADMMStopping(max_iter=40))
    np.testing.assert_allclose(single.history["objective"], close.history["objective"], rtol=1e-4)
    with pytest.raises(ValueError, match="least_squares"):
        PairNumerics(least_squares="lu")


def test_secant_cosines_from_the_points_of_the_pairs():
    from sdpembed.solvers.numax.least_squares import CholeskySolve, cheaper_from_points, gram_rows, secant_cosines

    X = digits_points(40)
    op = _pair_operator(X, 300)
    assert cheaper_from_points(op) and not cheaper_from_points(op.explicit())
    full = op.V @ op.V.T
    np.testing.assert_allclose(secant_cosines(op), full, rtol=0, atol=1e-13)
    np.testing.assert_allclose(secant_cosines(op, 120), full[120:], rtol=0, atol=1e-13)
    assert secant_cosines(op, 120).flags.c_contiguous
    single = secant_cosines(op, 0, np.float32)
    assert single.dtype == np.float32
    np.testing.assert_allclose(single, full, rtol=0, atol=1e-5)
    np.testing.assert_allclose(gram_rows(op, 7), full[7:] ** 2, rtol=0, atol=1e-13)
    # a near duplicate far from the mean: Gram-entry differences would cancel to noise, so the short
    # pair's row and column come from its secant
    near = np.vstack([X, X[3] + 1e-7 * np.random.default_rng(0).standard_normal(X.shape[1])])
    i, j = pairs_from_linear_index(np.arange(0, pair_count(41), 2), 41)          # 410 pairs among 41 points
    op = PairSecantOperator(near, np.r_[i, 3], np.r_[j, 40])
    assert cheaper_from_points(op) and op.norms[-1] < 1e-5
    np.testing.assert_allclose(secant_cosines(op), op.V @ op.V.T, rtol=0, atol=1e-12)
    np.testing.assert_allclose(secant_cosines(op, 200), (op.V @ op.V.T)[200:], rtol=0, atol=1e-12)
    # the factor made in place solves as the one made from a copy
    gram = gram_rows(op, 0)
    b = np.arange(op.n_constraints, dtype=float)
    expected = CholeskySolve(gram)(b)
    np.testing.assert_allclose(CholeskySolve(gram, overwrite=True)(b), expected, rtol=1e-12)
    np.testing.assert_allclose(expected, np.linalg.solve(np.eye(op.n_constraints) + (op.V @ op.V.T) ** 2, b),
                               rtol=1e-9)


def test_gram_and_cholesky_solve_of_the_least_squares_matrix(monkeypatch):
    from sdpembed.solvers.numax.least_squares import CholeskySolve, extend_gram, gram_rows

    op = _pair_operator(digits_points(40), 300).explicit()
    full = op.gram_squared()
    np.testing.assert_allclose(full, (op.V @ op.V.T) ** 2, atol=1e-14)
    # a known leading block is reused, only the new rows are computed
    np.testing.assert_allclose(extend_gram(op, full[:200, :200].copy()), full, atol=1e-13)
    # a block of other secants is detected and not reused
    wrong = full[100:300, 100:300].copy()
    np.testing.assert_allclose(extend_gram(op, wrong), full, atol=1e-13)
    # single precision: from a single or double block; a single block never feeds a double result
    single_gram = extend_gram(op, full[:200, :200].astype(np.float32), np.float32)
    assert single_gram.dtype == np.float32
    np.testing.assert_allclose(single_gram, full, rtol=1e-5, atol=1e-6)
    assert extend_gram(op, full[:200, :200].copy(), np.float32).dtype == np.float32
    from_single = extend_gram(op, single_gram[:200, :200].copy())
    assert from_single.dtype == np.float64
    np.testing.assert_allclose(from_single, full, atol=1e-13)
    # a block of a previous run's pairs, restricted to those kept (in order) while copied
    import sdpembed.solvers.numax.least_squares as least_squares

    rng = np.random.default_rng(1)
    kept = np.sort(rng.choice(280, size=200, replace=False))       # where op's first 200 rows were
    stacked = np.empty((280, op.dim))
    stacked[kept] = op.V[:200]
    stacked[np.setdiff1d(np.arange(280), kept)] = _pair_operator(digits_points(40), 300, seed=1).V[:80]
    previous = SecantOperator(stacked).gram_squared()
    starts = []
    monkeypatch.setattr(least_squares, "gram_rows",
                        lambda op_, start, dtype=np.float64: starts.append(start) or gram_rows(op_, start, dtype))
    for stored, dtype in ((np.float64, np.float64), (np.float32, np.float32), (np.float64, np.float32)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")                           # no cast of garbage on the way
            restricted = extend_gram(op, previous.astype(stored), dtype, kept=kept)
        assert restricted.dtype == dtype and starts[-1] == 200       # only the 100 new rows computed
        np.testing.assert_allclose(restricted, full, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    # rows kept out of order are detected: everything is recomputed, still right
    np.testing.assert_allclose(extend_gram(op, previous, kept=kept[::-1].copy()), full, atol=1e-13)
    assert starts[-1] == 0
    b = np.random.default_rng(0).standard_normal(300)
    np.testing.assert_allclose((np.eye(300) + full) @ CholeskySolve(full)(b), b, atol=1e-9)
    single = CholeskySolve(full, single=True)
    c = single(b)
    assert c.dtype == np.float64 and np.linalg.norm((np.eye(300) + full) @ c - b) <= 1e-5 * np.linalg.norm(b)
    with pytest.raises(ValueError, match="double-precision"):
        single.inverse()


def test_monitor_stops_a_solve_that_outside_pairs_will_change():
    op = _pair_operator(digits_points(60), 600)
    seen = []

    def outside(factor):
        seen.append(factor.shape)
        return 0.5                                   # pairs outside violate far more than the working ones

    stopped = pair_trace_admm(op, 0.8, 1.2, monitor=OutsideMonitor(outside))
    assert stopped.status == "max_iterations" and "outside" in stopped.message
    assert seen and seen[0][1] == op.dim and stopped.iterations % 10 == 0
    quiet = pair_trace_admm(op, 0.8, 1.2, monitor=OutsideMonitor(lambda factor: 0.0))
    assert quiet.status == "optimal" and quiet.iterations > stopped.iterations


def test_the_monitor_scans_before_its_cadence_when_its_last_scan_nearly_allows_a_stop():
    """Between two 20-iteration scans, a check whose accuracy max(violation, e1, e2) is within
    MONITOR_LOOKAHEAD of the ratio against the last scan's outside violation scans again at once (and stops
    when the ratio holds): the stop comes at that check, not at the next scan of the cadence (at 40 and 141
    here without the early scans); scans come only at checks and do not change the iterates."""
    op = _pair_operator(digits_points(60), 600)
    quiet = pair_trace_admm(op, 0.8, 1.2, monitor=OutsideMonitor(lambda factor: 0.0))
    history = quiet.history
    checks = np.asarray(history["check_iteration"]).astype(int)
    accuracy = np.maximum(history["max_violation"],
                          np.maximum(history["e1"][checks - 1], history["e2"][checks - 1]))
    for stop_at in (30, 125):                        # a check every 10 iterations, and every 2 once small
        assert stop_at in checks and stop_at % 20
        outside = 10.0 * float(accuracy[checks == stop_at][0]) * (1.0 + 1e-9)
        # no earlier check meets the ratio (the cadence's next scan that does would be at 40 / 141)
        assert np.all(accuracy[checks < stop_at] > 0.1 * outside)
        scans = []
        stopped = pair_trace_admm(op, 0.8, 1.2, monitor=OutsideMonitor(
            lambda factor, scans=scans, outside=outside: scans.append(1) or outside))
        assert stopped.status == "max_iterations" and "outside" in stopped.message
        assert stopped.iterations == stop_at
        np.testing.assert_array_equal(stopped.history["objective"], history["objective"][:stop_at])
        # the cadence's scans (20, 40, …) and the early ones, each at a check
        assert stop_at // 20 + 1 <= len(scans) <= np.count_nonzero(checks <= stop_at)


def test_a_solve_the_monitor_stops_is_not_certified_and_forms_no_explicit_secants():
    """Column generation solves again once the monitor has stopped a round: its certificate would only be
    printed, so it is not made (bound and gap NaN) and the explicit (S, N) secants are not formed; the
    values come through the points and equal the explicit ones."""
    X = digits_points(60)
    op = _pair_operator(X, 600)
    _, sigma, rows = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    span = SpanCoordinates(X, rows[sigma > 1e-12 * sigma[0]].T)
    stopped = pair_trace_admm(op, 0.8, 1.2, span=span, monitor=OutsideMonitor(lambda factor: 0.5))
    assert stopped.status == "max_iterations" and "outside" in stopped.message
    assert np.isnan(stopped.dual_bound) and np.isnan(stopped.relative_gap)
    assert "V" not in op.__dict__
    factor = stopped.extra["factor"]
    explicit = np.einsum("ij,ij->i", op.V @ factor.T, op.V @ factor.T)
    np.testing.assert_allclose(stopped.extra["values"], explicit, rtol=1e-12, atol=1e-12)
    quiet = pair_trace_admm(_pair_operator(X, 600), 0.8, 1.2, span=span,
                            monitor=OutsideMonitor(lambda factor: 0.0))
    assert quiet.status == "optimal" and quiet.relative_gap <= 1e-5


def test_uncertified_solve_is_never_optimal():
    op = _pair_operator(digits_points(40), 400)
    result = pair_trace_admm(op, 0.8, 1.2, certify=False)
    assert result.status == "inaccurate" and "certify=False" in result.message
    assert np.isnan(result.dual_bound) and np.isnan(result.relative_gap)
    assert result.max_violation <= 1e-6 and result.min_eigenvalue >= -1e-12
    # on the points' coordinates in a basis of their span (as in column generation's rounds) its values
    # come through the points: the explicit (S, N) secants are never formed
    X = digits_points(40)
    op = _pair_operator(X, 400)
    _, sigma, rows = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    span = SpanCoordinates(X, rows[sigma > 1e-12 * sigma[0]].T)
    result = pair_trace_admm(op, 0.8, 1.2, certify=False, span=span, stopping=LOOSE)
    assert "V" not in op.__dict__
    factor = result.extra["factor"]
    explicit = np.einsum("ij,ij->i", op.V @ factor.T, op.V @ factor.T)
    np.testing.assert_allclose(result.extra["values"], explicit, rtol=1e-12, atol=1e-12)


def test_single_precision_ritz_steps_reach_the_loose_accuracy():
    op = _pair_operator(digits_points(60), 600)
    double = pair_trace_admm(op, 0.8, 1.2, stopping=LOOSE)
    single = pair_trace_admm(op, 0.8, 1.2, stopping=LOOSE, numerics=PairNumerics(eig_precision="single"))
    assert double.status == single.status == "optimal"
    assert single.extra["partial_eigensolves"] > 0
    assert single.objective == pytest.approx(double.objective, rel=1e-3)
    assert abs(single.iterations - double.iterations) <= 10
    with pytest.raises(ValueError, match="eig_precision"):
        PairNumerics(eig_precision="half")


def test_factorisation_threads_follow_the_blas_limit_not_the_load(monkeypatch):
    """A threaded potrf rounds differently from a single-threaded one: a count that followed the load
    average made the same solve end at optima differing in the 8th digit (issue 24, item 2)."""
    import os

    from threadpoolctl import threadpool_limits

    from sdpembed.solvers.numax import least_squares as _least_squares

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    for limit in (1, 2):
        with threadpool_limits(limits=limit, user_api="blas"):
            counts = set()
            for load in (0.0, 1.0, 2.2, 9.0):
                monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
                counts.add(_least_squares.factorisation_threads(5000))
            assert counts == {limit}
            assert _least_squares.factorisation_threads(500) == 1                # small: threads only cost
            with _least_squares.factorisation_thread_limit(5000):               # never above the limit
                assert {lib["num_threads"] for lib in _blas_info()} == {limit}


def test_factorisation_threads_ignore_blas_copies_vendored_by_other_packages(monkeypatch):
    """SCS's wheel carries its own old OpenBLAS, which stays at the thread count it was loaded with:
    counted among the libraries, it pinned every factorisation to one thread once SCS was imported
    (and made the count depend on import order)."""
    import scs  # noqa: F401  (loads SCS's vendored BLAS, if its wheel has one)
    from threadpoolctl import threadpool_limits

    from sdpembed.solvers.numax import least_squares as _least_squares

    vendored = _least_squares._vendored_by_another_package
    assert vendored("/env/site-packages/scs.libs/libopenblas-r0.so")
    assert not vendored("/env/site-packages/scipy.libs/libscipy_openblas.so")
    assert not vendored("/env/site-packages/numpy.libs/libscipy_openblas64_.so")
    assert not vendored("/usr/lib/x86_64-linux-gnu/libopenblas.so.0") and not vendored(None)
    monkeypatch.setattr(_least_squares, "_controller", None)     # made again, after SCS's import
    assert all(not vendored(lib.filepath) for lib in _least_squares._blas().lib_controllers)
    for limit in (1, 2):
        with threadpool_limits(limits=limit, user_api="blas"):
            assert _least_squares.factorisation_threads(5000) == limit


def test_a_solve_does_not_depend_on_the_load(monkeypatch):
    """The same restricted solve (a least-squares matrix above the threading order) under two load
    averages, at a BLAS limit of two threads: bit-identical iterates."""
    import os

    from threadpoolctl import threadpool_limits

    op = _pair_operator(digits_points(100), 1600)
    runs = []
    with threadpool_limits(limits=2, user_api="blas"):
        for load in (0.0, 9.0):
            monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
            runs.append(pair_trace_admm(op, 0.9, 1.1, numerics=PairNumerics(least_squares="auto", polish=False),
                                        stopping=ADMMStopping(max_iter=15)))
    assert runs[0].iterations == runs[1].iterations
    np.testing.assert_array_equal(runs[0].solution, runs[1].solution)


def _blas_info():
    """numpy's and SciPy's BLAS libraries (copies vendored by other packages, e.g. SCS's, left out)."""
    from threadpoolctl import threadpool_info

    from sdpembed.solvers.numax.least_squares import _vendored_by_another_package

    return [lib for lib in threadpool_info()
            if lib["user_api"] == "blas" and not _vendored_by_another_package(lib["filepath"])]


def _warm_started_mnist(n_points, n_pairs, delta=0.1):
    """A restricted problem as column generation meets it: warm-started from a loose solve."""
    from sdpembed.datasets import load_mnist

    X, _ = load_mnist(size=20, n_samples=n_points, random_state=0)
    op = _pair_operator(X, n_pairs)
    loose = pair_trace_admm(op, 1 - delta, 1 + delta, stopping=LOOSE)
    return op, loose.extra["state"]


def test_polish_ends_a_warm_started_run_sooner_at_a_certified_optimum():
    op, state = _warm_started_mnist(120, 1500)          # rank ≈ 20 in 119 dimensions: 2,380 unknowns
    plain = pair_trace_admm(op, 0.9, 1.1, warm_start=state, numerics=PairNumerics(polish=False))
    polished = pair_trace_admm(op, 0.9, 1.1, warm_start=state)
    assert plain.status == polished.status == "optimal"
    assert polished.extra["polished"] and not plain.extra["polished"] and "polish" in polished.message
    assert polished.iterations < plain.iterations - 10
    # certified from the explicit secants like any other result: feasible, bound below, gap small
    assert polished.max_violation <= 1e-6 and polished.relative_gap <= 1e-5
    assert polished.dual_bound <= polished.objective
    assert polished.objective == pytest.approx(plain.objective, rel=2e-5)
    Psi = polished.extra["factor"]
    assert Psi.shape[0] == polished.extra["rank"] == plain.extra["rank"]
    np.testing.assert_allclose(Psi.T @ Psi, polished.solution, atol=1e-12)


def test_warm_start_carries_the_ritz_block_and_reaches_the_same_optimum():
    """A state from a run in the same basis carries its block of Ritz vectors: the next run starts
    its partial eigensolver from it, not from a full eigendecomposition, to the same certified optimum."""
    from dataclasses import replace

    op, state = _warm_started_mnist(120, 1500)
    assert state.eig_block is not None and state.eig_block.shape[0] == state.L.shape[0]
    carried = pair_trace_admm(op, 0.9, 1.1, warm_start=state)
    cold = pair_trace_admm(op, 0.9, 1.1, warm_start=replace(state, eig_block=None))
    assert carried.status == cold.status == "optimal"
    assert carried.extra["full_eigensolves"] < cold.extra["full_eigensolves"]
    assert carried.max_violation <= 1e-6 and carried.relative_gap <= 1e-5
    assert carried.objective == pytest.approx(cold.objective, rel=2e-5)


def test_polish_is_not_tried_when_its_equations_outnumber_the_factor():
    op = _pair_operator(digits_points(60), 600)            # rank ≈ 10 in 53 dimensions: 530 < 600
    first = pair_trace_admm(op, 0.8, 1.2, stopping=LOOSE)
    runs = [pair_trace_admm(op, 0.8, 1.2, warm_start=first.extra["state"], numerics=PairNumerics(polish=flag))
            for flag in (True, False)]
    assert not runs[0].extra["polished"] and runs[0].iterations == runs[1].iterations
    np.testing.assert_array_equal(runs[0].solution, runs[1].solution)


def test_mixed_least_squares_go_to_double_precision_when_single_stalls():
    op = _pair_operator(digits_points(60), 600)
    strict = ADMMStopping(tol=1e-7, feas_tol=1e-8, gap_tol=1e-7)

    def unpolished(least_squares):
        return PairNumerics(least_squares=least_squares, polish=False)
    double = pair_trace_admm(op, 0.9, 1.1, numerics=unpolished("cholesky"), stopping=strict)
    mixed = pair_trace_admm(op, 0.9, 1.1, numerics=unpolished("mixed"), stopping=strict)
    assert double.status == mixed.status == "optimal" and mixed.extra["double_precision_from"] is not None
    assert mixed.objective == pytest.approx(double.objective, rel=1e-8)
    assert mixed.extra["state"].gram is None       # pairs among fewer points: 𝒜𝒜* made afresh, factorised in place
    # single precision throughout stalls at ≈ 1e-6 (the reason for the switch)
    single = pair_trace_admm(op, 0.9, 1.1, numerics=unpolished("cholesky-single"),
                             stopping=replace(strict, max_iter=400))
    assert single.status == "max_iterations" and single.max_violation > 1e-8
    # the stall test, not the iteration cap (S/25 = 100 here), makes the switch on a warm start
    op, state = _warm_started_mnist(150, 2500)
    warm = pair_trace_admm(op, 0.9, 1.1, numerics=unpolished("mixed"), warm_start=state, stopping=strict)
    assert warm.status == "optimal" and warm.extra["double_precision_from"] < 100
    # at the default tolerances the polish settles the violation: single precision to the end
    easy = pair_trace_admm(op, 0.9, 1.1, numerics=PairNumerics(least_squares="mixed"), warm_start=state)
    assert easy.status == "optimal" and easy.extra["double_precision_from"] is None and easy.extra["polished"]


@pytest.mark.parametrize("delta", [0.2, 0.3])
def test_anderson_acceleration_reaches_the_explicit_admm_optimum_in_fewer_iterations(delta):
    """The explicit ADMM (box_trace_admm, itself checked against CVXPY in test_agreement.py) is the
    independent reference."""
    op = _pair_operator(digits_points(60), 600)
    explicit = box_trace_admm(op.explicit().V, 1 - delta, 1 + delta)
    plain = pair_trace_admm(op, 1 - delta, 1 + delta)
    accelerated = pair_trace_admm(op, 1 - delta, 1 + delta, numerics=PairNumerics(anderson=5))
    assert explicit.status == plain.status == accelerated.status == "optimal"
    accepted, rejected = accelerated.extra["anderson"]
    assert accepted > accelerated.iterations // 2 and plain.extra["anderson"] is None
    assert accelerated.iterations < 0.8 * plain.iterations
    # certified from the explicit secants, and the same optimum as the explicit ADMM and CVXPY
    assert accelerated.max_violation <= 1e-6 and accelerated.relative_gap <= 1e-5
    assert accelerated.dual_bound <= accelerated.objective
    assert accelerated.objective == pytest.approx(explicit.objective, rel=2e-5)


def test_anderson_acceleration_keeps_a_warm_started_state_consistent():
    """The combined state carries 𝒜(L), 𝒜(Λ), K z linearly: a warm start from an accelerated run
    (its L and Λ formed from the combined parts) reaches the optimum of one from a plain run."""
    op, state = _warm_started_mnist(120, 1500)
    plain = pair_trace_admm(op, 0.9, 1.1, warm_start=state, numerics=PairNumerics(polish=False))
    accelerated = pair_trace_admm(op, 0.9, 1.1, warm_start=state, numerics=PairNumerics(polish=False, anderson=5))
    assert plain.status == accelerated.status == "optimal"
    assert accelerated.iterations < plain.iterations
    assert accelerated.objective == pytest.approx(plain.objective, rel=2e-5)
    # the returned multipliers Λ of the state are those of the tracked coefficients: 𝒜(L) + ... is
    # checked through the next run, which starts from them and stays optimal at once
    again = pair_trace_admm(op, 0.9, 1.1, warm_start=accelerated.extra["state"],
                            numerics=PairNumerics(polish=False, anderson=5))
    assert again.status == "optimal" and again.iterations <= 20


def test_a_polish_retried_after_its_gap_failed_reuses_the_normal_system(monkeypatch):
    """A polish that reaches the box but misses the gap is tried again a few iterations on with the
    same factorised J Jᵀ (only refinement steps), not a fresh S × S factorisation; the run still ends
    at the certified optimum, polished with the reused system."""
    from sdpembed.solvers.numax import admm_pairs, factor_polish

    op, state = _warm_started_mnist(120, 1500)
    plain = pair_trace_admm(op, 0.9, 1.1, warm_start=state, numerics=PairNumerics(polish=False))
    factorisations, calls = [], []
    normal_factor, polish = factor_polish._normal_factor, admm_pairs.polish_with_system

    def counted(*args, **kwargs):
        factorisations.append(1)
        return normal_factor(*args, **kwargs)

    def spoiled(V, F, lo, hi, **kwargs):
        F_new, system = polish(V, F, lo, hi, **kwargs)
        calls.append((kwargs.get("system"), system))
        if F_new is not None and len(calls) == 1:
            F_new = 1.001 * F_new            # tr P up by 0.2 %: the gap test rejects this polish
        return F_new, system

    monkeypatch.setattr(factor_polish, "_normal_factor", counted)
    monkeypatch.setattr(admm_pairs, "polish_with_system", spoiled)
    result = pair_trace_admm(op, 0.9, 1.1, warm_start=state)
    assert len(calls) == 2 and calls[0][0] is None and calls[0][1] is not None
    assert calls[1][0] is calls[0][1] and len(factorisations) == 1
    assert result.status == "optimal" and result.extra["polished"]
    assert result.max_violation <= 1e-6 and result.relative_gap <= 1e-5
    assert result.objective == pytest.approx(plain.objective, rel=2e-5)


def test_a_run_carries_the_values_of_its_iterates_and_a_warm_start_computes_only_the_new_ones(monkeypatch):
    """The 𝒜(L), 𝒜(Λ) a run tracks equal 𝒜 applied to the dense L and Λ it returns (to rounding with
    double-precision least squares); a warm start takes them for its first secants and computes the
    others' from their rows, the same values as 𝒜 of the whole warm start."""
    from dataclasses import replace

    from sdpembed.datasets import load_mnist
    from sdpembed.solvers.numax.admm_pairs import _warm_values

    X, _ = load_mnist(size=20, n_samples=120, random_state=0)
    op = _pair_operator(X, 1500)
    run = pair_trace_admm(op, 0.9, 1.1, stopping=LOOSE, numerics=PairNumerics(least_squares="cholesky"))
    state = run.extra["state"]
    reduced = op.in_basis(state.basis)
    for dense, tracked in zip((state.L, state.Lam), state.values, strict=True):
        np.testing.assert_allclose(tracked, reduced.apply(dense), rtol=0, atol=1e-12)
    # the next working set: every other pair kept, then 400 new ones
    keep = np.arange(op.n_constraints) % 2 == 0
    n = X.shape[0]
    first, second = op.rows[op.i], op.rows[op.j]                      # the pairs' rows of X
    known = set(zip(first.tolist(), second.tolist(), strict=True))
    new = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if (i, j) not in known][:1600:4])
    nxt = PairSecantOperator(X, np.concatenate([first[keep], new[:, 0]]), np.concatenate([second[keep], new[:, 1]]))
    carried = tuple(v[keep] for v in state.values)
    reduced_next = nxt.in_basis(state.basis)
    values = _warm_values(reduced_next, state.L, state.Lam, carried)
    for dense, got in zip((state.L, state.Lam), values, strict=True):
        assert got.shape == (nxt.n_constraints,)
        np.testing.assert_allclose(got, reduced_next.apply(dense), rtol=0, atol=1e-12)
    # more new pairs (400) than points (120): their values come through the points' images; fewer new pairs
    # than points: from their rows (those rows alone: the (S, r) rows, formed only when read, are not)
    for n_new in (400, 60):
        pairs = slice(0, int(keep.sum()) + n_new)
        lazy = PairSecantOperator(reduced_next.points, reduced_next.i[pairs], reduced_next.j[pairs])
        values = _warm_values(lazy, state.L, state.Lam, carried)
        assert "V" not in lazy.__dict__
        for dense, got in zip((state.L, state.Lam), values, strict=True):
            np.testing.assert_allclose(got, reduced_next.apply(dense)[pairs], rtol=0, atol=1e-12)
    # a warm-started run with the carried values reaches the optimum of one that computes them all
    warm = replace(state, omega=np.concatenate([state.omega[keep], np.zeros(len(new))]), K_inv=None, gram=None,
                   factor=None)
    applied = []
    through_points = PairSecantOperator.apply
    monkeypatch.setattr(PairSecantOperator, "apply", lambda self, M: applied.append(1) or through_points(self, M))
    runs = []
    for v in (carried, None):
        applied.clear()
        runs.append(pair_trace_admm(nxt, 0.9, 1.1, warm_start=replace(warm, values=v), basis=state.basis))
        assert len(applied) == (0 if v is not None else 2)          # 𝒜(L₀), 𝒜(Λ₀) through the points, or not
    assert runs[0].status == runs[1].status == "optimal"
    assert runs[0].objective == pytest.approx(runs[1].objective, rel=2e-5)
    assert runs[0].max_violation <= 1e-6 and runs[0].relative_gap <= 1e-5
