"""Block updates of the Cholesky factor of I + 𝒜𝒜* across column-generation rounds
(:func:`sdpembed.solvers.numax.least_squares.extend_factor`) against fresh factorisations."""

import gc
import pickle
import tracemalloc
import weakref

import numpy as np
import pytest

from sdpembed.problems.numax_operator import PairSecantOperator
from sdpembed.secants import pair_count, pairs_from_linear_index
from sdpembed.solvers.numax import pair_linalg
from sdpembed.solvers.numax.admm import ADMMState
from sdpembed.solvers.numax.column_generation import _NuMaxADMM, _restricted_admm, column_generation
from sdpembed.solvers.numax.least_squares import CholeskySolve, extend_factor, extension_is_cheaper
from sdpembed.solvers.numax.pair_linalg import LeastSquaresSteps

from ...conftest import digits_points


def _unit_rows(rng, n, r):
    V = rng.standard_normal((n, r))
    return V / np.linalg.norm(V, axis=1)[:, None]


def _K(V):
    G = V @ V.T
    return np.eye(V.shape[0]) + G * G


def _fresh(V, single=False):
    out = CholeskySolve((V @ V.T) ** 2, single=single)
    out.secants = V
    return out


@pytest.mark.parametrize("single, rtol", [(False, 1e-12), (True, 1e-5)])
def test_appended_rows_give_the_fresh_factor(single, rtol):
    rng = np.random.default_rng(0)
    V = _unit_rows(rng, 260, 25)
    head = _fresh(V[:200], single)
    lead = head.factor
    grown = extend_factor(head, np.ones(200, bool), V[200:])
    assert grown.n_ghosts == 0 and grown.order == 260
    np.testing.assert_array_equal(grown.live, np.arange(260))
    # the factor extended is kept as the first block, not copied; the new rows are a block of their own
    assert grown.factor is lead and len(grown.borders) == 1
    reference = np.linalg.cholesky(_K(V))
    np.testing.assert_allclose(np.tril(grown.full_factor()), reference, rtol=0, atol=rtol * np.abs(reference).max())
    # a second extension appends a second block (its rows against both earlier blocks)
    W = _unit_rows(rng, 30, 25)
    twice = extend_factor(grown, np.ones(260, bool), W)
    assert twice.factor is lead and len(twice.borders) == 2
    reference = np.linalg.cholesky(_K(np.concatenate([V, W])))
    np.testing.assert_allclose(np.tril(twice.full_factor()), reference, rtol=0, atol=rtol * np.abs(reference).max())


@pytest.mark.parametrize("single, rtol", [(False, 1e-12), (True, 1e-5)])
def test_rows_appended_from_an_operators_points_give_the_fresh_factor(single, rtol):
    """extend_factor(..., operator=op): the added rows of 𝒜𝒜* through the points' Gram matrix (a short pair's
    from its secant), the factor's own secant rows never formed, and the same factor as a fresh one of all the
    pairs; refused when the factor has ghost rows."""
    X = digits_points(60)
    X[1] = X[0] + 1e-9                                                  # pair (0, 1) is short
    index = np.random.default_rng(5).choice(np.arange(1, pair_count(60)), size=500, replace=False)
    index[250] = 0
    op = _pairs(X, index)
    assert op.short.tolist() == [250]
    V = op.explicit().V
    head = CholeskySolve((V[:400] @ V[:400].T) ** 2, single=single)
    first_op = _pairs(X, index[:400])
    head.secants_of(first_op)
    grown = extend_factor(head, np.ones(400, bool), None, operator=op)
    assert "V" not in first_op.__dict__ and grown.secant_source is op
    assert grown.order == 500 and grown.n_ghosts == 0 and len(grown.borders) == 1
    reference = np.linalg.cholesky(_K(V))
    np.testing.assert_allclose(np.tril(grown.full_factor()), reference, rtol=0, atol=rtol * np.abs(reference).max())
    np.testing.assert_array_equal(grown.secants, op.V)
    with pytest.raises(ValueError, match="every row of the factor live and kept"):
        extend_factor(_fresh(V[:400], single), np.arange(400) > 0, None, operator=op)


@pytest.mark.parametrize("single, rtol", [(False, 1e-11), (True, 1e-5)])
def test_drops_and_additions_over_rounds_solve_the_restricted_system(single, rtol):
    rng = np.random.default_rng(1)
    current = _unit_rows(rng, 150, 20)
    solver = _fresh(current, single)
    # rounds that drop pairs (also none, and every pair but one) and add some (also none)
    for drop_share, n_added in ((0.1, 30), (0.0, 0), (0.2, 0), (0.05, 40), (0.99, 10)):
        kept = rng.random(current.shape[0]) >= drop_share
        kept[0] = True
        added = _unit_rows(rng, n_added, 20)
        solver = extend_factor(solver, kept, added)
        current = np.concatenate([current[kept], added])
        K = _K(current)
        b = rng.standard_normal(current.shape[0])
        c = solver(b)
        np.testing.assert_allclose(K @ c, b, rtol=0, atol=rtol * np.abs(b).max())
        np.testing.assert_allclose(c, _fresh(current, single)(b), rtol=0, atol=rtol * np.abs(c).max())
        assert solver.order == current.shape[0] + solver.n_ghosts
    if not single:
        np.testing.assert_allclose(solver.inverse(), np.linalg.inv(K), rtol=0, atol=1e-11)


@pytest.mark.parametrize("single", [False, True])
def test_a_factor_with_ghost_rows_pickles_and_solves_the_same(single):
    # a run's state carries its factor, and fitted estimators keep the state: it must pickle
    rng = np.random.default_rng(2)
    V = _unit_rows(rng, 120, 15)
    kept = rng.random(120) >= 0.1
    solver = extend_factor(_fresh(V, single), kept, _unit_rows(rng, 20, 15))
    copy = pickle.loads(pickle.dumps(solver))
    b = rng.standard_normal(int(kept.sum()) + 20)
    np.testing.assert_array_equal(copy(b), solver(b))


def test_ghost_rows_make_the_extension_costlier():
    rng = np.random.default_rng(2)
    previous = _fresh(_unit_rows(rng, 400, 30))
    few_dropped = np.ones(400, bool)
    few_dropped[:5] = False
    many_dropped = np.ones(400, bool)
    many_dropped[:100] = False
    assert extension_is_cheaper(previous, 395, 5, 60, 30)
    assert not extension_is_cheaper(previous, 300, 5, 60, 30)              # 100 ghosts of 305 secants
    assert not extension_is_cheaper(previous, 400, 400, 60, 30)            # doubling: refactorise


def _pairs(X, index):
    return PairSecantOperator(X, *pairs_from_linear_index(index, X.shape[0]))


@pytest.mark.parametrize("mode, rtol", [("cholesky", 1e-10), ("cholesky-single", 1e-4), ("mixed", 1e-4)])
def test_least_squares_steps_extend_the_warm_start_factor(mode, rtol):
    X = digits_points(60)
    index = np.random.default_rng(3).choice(pair_count(60), size=700, replace=False)
    first = LeastSquaresSteps(_pairs(X, index[:600]), mode, None)
    assert not first.extended
    kept = np.ones(600, bool)
    kept[[3, 50, 400]] = False
    state = ADMMState(None, None, None, 1.0, None, factor=first.cholesky, factor_kept=kept)
    op = _pairs(X, np.concatenate([index[:600][kept], index[600:]]))
    steps = LeastSquaresSteps(op, mode, state)
    assert steps.extended and steps.cholesky.n_ghosts == 3
    V = op.explicit().V
    rhs = np.random.default_rng(4).standard_normal(op.n_constraints)
    np.testing.assert_allclose(_K(V) @ steps(rhs, 1), rhs, rtol=0, atol=rtol * np.abs(rhs).max())
    # a factor of other pairs is refused (a spot check of the kept secants): a fresh factor instead
    other = _pairs(X, np.concatenate([index[100:700][kept], index[:100]]))
    # (a state hands its factor to one run: this one is new)
    again = LeastSquaresSteps(_pairs(X, index[:600]), mode, None)
    state = ADMMState(None, None, None, 1.0, None, factor=again.cholesky, factor_kept=kept)
    refused = LeastSquaresSteps(other, mode, state)
    assert not refused.extended
    V = other.explicit().V
    np.testing.assert_allclose(_K(V) @ refused(rhs, 1), rhs, rtol=0, atol=rtol * np.abs(rhs).max())


@pytest.mark.parametrize("extends", [True, False])
def test_a_fresh_factor_forms_its_secant_rows_only_when_extended(extends, monkeypatch):
    """A fresh factor holds its operator, not its (S, r) rows: they are formed when an extension that drops some
    pairs reads them (the same rows, bit for bit), never when the next run refuses the factor, nor when it keeps
    every pair (the added rows of 𝒜𝒜* then come through the points); a pickled state keeps them."""
    monkeypatch.setattr(pair_linalg, "extension_is_cheaper", lambda *a, **k: extends)
    X = digits_points(60)
    index = np.random.default_rng(3).choice(pair_count(60), size=700, replace=False)
    first_op = _pairs(X, index[:600]).with_points(_pairs(X, index[:600]).points)    # rows formed when read
    first = LeastSquaresSteps(first_op, "cholesky", None)
    assert not first.extended and "V" not in first_op.__dict__
    copy = pickle.loads(pickle.dumps(first.cholesky))
    assert "V" not in first_op.__dict__
    kept = np.ones(600, bool)
    kept[7] = False
    state = ADMMState(None, None, None, 1.0, None, factor=first.cholesky, factor_kept=kept)
    op = _pairs(X, np.concatenate([index[:600][kept], index[600:]]))
    steps = LeastSquaresSteps(op, "cholesky", state)
    assert steps.extended == extends and ("V" in first_op.__dict__) == extends and "V" not in op.__dict__
    np.testing.assert_array_equal(copy.secants, first_op.V)
    if extends:
        np.testing.assert_array_equal(steps.cholesky.secants[steps.cholesky.live], op.V)
    # every pair kept: the extension forms neither operator's rows
    first_op = _pairs(X, index[:600]).with_points(_pairs(X, index[:600]).points)
    first = LeastSquaresSteps(first_op, "cholesky", None)
    state = ADMMState(None, None, None, 1.0, None, factor=first.cholesky, factor_kept=np.ones(600, bool))
    op = _pairs(X, index)
    steps = LeastSquaresSteps(op, "cholesky", state)
    assert steps.extended == extends and "V" not in first_op.__dict__ and "V" not in op.__dict__
    if extends:
        assert steps.cholesky.secant_source is op
        rhs = np.random.default_rng(4).standard_normal(700)
        np.testing.assert_allclose(_K(op.explicit().V) @ steps(rhs, 1), rhs, rtol=0, atol=1e-10 * np.abs(rhs).max())


def test_column_generation_reaches_the_same_optimum_with_and_without_block_updates(monkeypatch):
    X = digits_points(60)
    kwargs = dict(initial_pairs=200, max_add=150, random_state=0)
    bounds = lambda i, j: (np.full(i.shape, 0.8), np.full(i.shape, 1.2))   # noqa: E731
    calls = []
    monkeypatch.setattr(pair_linalg, "extend_factor", lambda *a: calls.append(1) or extend_factor(*a))
    monkeypatch.setattr(pair_linalg, "extension_is_cheaper", lambda *a, **k: False)
    fresh = column_generation(X, bounds, **kwargs)
    assert not calls
    monkeypatch.setattr(pair_linalg, "extension_is_cheaper", lambda *a, **k: True)
    extended = column_generation(X, bounds, **kwargs)
    assert len(calls) >= 2
    assert fresh.status == extended.status == "optimal"
    assert extended.relative_gap <= 1e-5 and extended.max_violation <= 1e-6
    assert extended.objective == pytest.approx(fresh.objective, rel=1e-6)


@pytest.mark.parametrize("extends", [True, False])
def test_a_warm_start_hands_its_factor_over(extends, monkeypatch):
    # the run starting from a state takes the state's factor: extended, it becomes the first block of
    # the new factor (not a copy); refused, it is freed — never held beside the new S × S matrices
    monkeypatch.setattr(pair_linalg, "extension_is_cheaper", lambda *a, **k: extends)
    X = digits_points(60)
    index = np.random.default_rng(3).choice(pair_count(60), size=700, replace=False)
    first = LeastSquaresSteps(_pairs(X, index[:600]), "cholesky", None)
    old = weakref.ref(first.cholesky.factor)
    state = ADMMState(None, None, None, 1.0, None, factor=first.cholesky, factor_kept=np.ones(600, bool))
    del first
    steps = LeastSquaresSteps(_pairs(X, index), "cholesky", state)
    assert steps.extended == extends
    assert state.factor is None and state.factor_kept is None
    gc.collect()
    assert old() is (steps.cholesky.factor if extends else None)


def test_column_generation_carry_leaves_the_finished_round_no_s_by_s_part():
    X = digits_points(40)
    index = np.arange(500)
    op = _pairs(X, index)
    inner = _restricted_admm("numax", None, feas_tol=1e-6, gap_tol=1e-5, loose_tol=1e-3, loose_max_iter=10,
                             verbose=False, implicit=True)
    assert isinstance(inner, _NuMaxADMM)
    result = inner.solve(op, np.full(500, 0.8), np.full(500, 1.2), None, tight=False)
    factor = result.state.factor
    assert factor is not None
    keep = np.ones(500, bool)
    keep[:10] = False
    carried = inner.carry(result, keep, 5)
    assert carried.factor is factor and carried.factor_kept.sum() == 490
    # the finished round's state (also its SolveResult's) no longer holds it
    assert result.state is result.raw.extra["state"]
    assert result.state.factor is None and result.state.K_inv is None and result.state.gram is None


def test_the_double_precision_refactorisation_frees_the_single_factor_first():
    X = digits_points(100)
    op = _pairs(X, np.random.default_rng(5).choice(pair_count(100), size=3000, replace=False))
    S = op.n_constraints
    tracemalloc.start()
    try:
        steps = LeastSquaresSteps(op, "mixed", None)
        assert steps.cholesky.dtype == np.float32 and steps.refinable
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        steps.to_double(1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # one double-precision S × S buffer (𝒜𝒜*, factorised in place) and blocks of gathered rows
    # (2 · 256 × S), the single-precision factor (half an S × S buffer) already gone
    assert peak - before < 0.8 * S * S * 8
    assert steps.cholesky.dtype == np.float64
    rhs = np.random.default_rng(4).standard_normal(S)
    np.testing.assert_allclose(_K(op.explicit().V) @ steps(rhs, 2), rhs, rtol=0, atol=1e-10 * np.abs(rhs).max())


@pytest.mark.parametrize("dtype, atol", [(np.float32, 2e-6), (np.float64, 1e-13)])
def test_lower_secant_cosines_by_syrk_are_the_secants_inner_products(dtype, atol):
    """The lower triangle of VVᵀ for a factorisation: by syrk of the secants when that is cheaper than the
    route through the points (pairs among nearly as many points as pairs), without the points' n_a × n_a
    and n_a × S arrays; it equals VVᵀ of the explicit secants, its strict upper triangle is zero, and the
    least squares factorised from it solve (I + 𝒜𝒜*) c = b."""
    from sdpembed.solvers.numax.least_squares import cosines_by_syrk, secant_cosines

    X = digits_points(300)
    op = _pairs(X, np.random.default_rng(6).choice(pair_count(300), size=500, replace=False))
    S, V_bytes = op.n_constraints, op.V.nbytes
    # all pairs of few points in many dimensions: the points' Gram matrix is the cheaper route
    wide = np.random.default_rng(8).standard_normal((50, 1500))
    assert cosines_by_syrk(op, dtype) and not cosines_by_syrk(_pairs(wide, np.arange(pair_count(50))), dtype)
    tracemalloc.start()
    try:
        cosines = secant_cosines(op, 0, dtype, lower=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the result, and at most two copies of V (the route through the points: 2.3 S × S here)
    assert peak < S * S * np.dtype(dtype).itemsize + 2 * V_bytes
    assert cosines.dtype == dtype and cosines.flags.f_contiguous
    V = op.explicit().V
    assert not np.triu(cosines, 1).any()
    np.testing.assert_allclose(np.tril(cosines), np.tril(V @ V.T), rtol=0, atol=atol)
    np.testing.assert_allclose(np.tril(secant_cosines(op, 0, dtype)), np.tril(V @ V.T), rtol=0, atol=atol)
    steps = LeastSquaresSteps(op, "cholesky-single" if dtype == np.float32 else "cholesky", None)
    rhs = np.random.default_rng(7).standard_normal(S)
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(_K(V) @ steps(rhs, 1), rhs, rtol=0, atol=rtol * np.abs(rhs).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lower_cosines_through_the_points_gather_the_lower_triangle_only(dtype):
    """Through the points (pairs among few points), the lower triangle asked for a factorisation is the
    one of the full VVᵀ, bit for bit, short pairs' rows and columns from their secants included; the strict
    upper triangle is never gathered (it is zero), and 𝒜𝒜* (gram_rows) is its square, bit for bit, squared
    block by block as it is gathered."""
    from sdpembed.solvers.numax.least_squares import cosines_by_syrk, gram_rows, secant_cosines

    rng = np.random.default_rng(11)
    # two tight clusters far apart: the pairs within a cluster are short beside the points' norms
    X = np.vstack([digits_points(40), 100.0 + 1e-2 * rng.standard_normal((12, 64)),
                   -100.0 + 1e-2 * rng.standard_normal((12, 64))])
    op = _pairs(X, rng.choice(pair_count(X.shape[0]), size=1500, replace=False))
    S = op.n_constraints
    assert not cosines_by_syrk(op, dtype) and 0 < op.short.size < S
    full = secant_cosines(op, 0, dtype)
    lower = secant_cosines(op, 0, dtype, lower=True)
    assert lower.dtype == dtype and lower.flags.f_contiguous
    np.testing.assert_array_equal(np.tril(lower), np.tril(full))
    assert not np.triu(lower, 1).any()
    squares = gram_rows(op, 0, dtype, lower=True)
    np.testing.assert_array_equal(squares, lower * lower)
    np.testing.assert_array_equal(gram_rows(op, 0, dtype), full * full)
    np.testing.assert_array_equal(gram_rows(op, S // 3, dtype), secant_cosines(op, S // 3, dtype) ** 2)


def test_cosines_of_many_pairs_among_few_points_come_from_the_points():
    """Single-precision cosines of 10,000 pairs among 800 points in 581 dimensions (MNIST-800's late
    rounds) are gathered through the points' Gram matrix, the cheaper route there; those of 12,000
    pairs among 4,000 points in 639 dimensions are made by syrk."""
    from sdpembed.solvers.numax.least_squares import cosines_by_syrk

    rng = np.random.default_rng(9)
    for n, S, r, by_syrk in ((800, 10000, 581, False), (4000, 12000, 639, True)):
        index = rng.choice(pair_count(n), size=S, replace=False)
        op = _pairs(rng.standard_normal((n, r)), index)
        assert cosines_by_syrk(op, np.float32) is by_syrk
