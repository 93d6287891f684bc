"""The pair ADMM's linear algebra (:mod:`sdpembed.solvers.numax.pair_linalg`) against dense numpy."""

import numpy as np
import pytest

from sdpembed.problems.numax_operator import PairSecantOperator
from sdpembed.secants import pair_count, pairs_from_linear_index
from sdpembed.solvers.numax.least_squares import gram_rows, secant_cosines
from sdpembed.solvers.numax.pair_linalg import (
    ImplicitMatrix,
    LeastSquaresSteps,
    PairGeometry,
    PartialShrink,
    SpanCoordinates,
    holds_secants,
    range_corrected_multipliers,
)

from ...conftest import digits_points


def _random_pairs(X, n_pairs, seed=0):
    n = X.shape[0]
    index = np.sort(np.random.default_rng(seed).choice(pair_count(n), size=n_pairs, replace=False))
    return PairSecantOperator(X, *pairs_from_linear_index(index, n))


def test_pair_geometry_applies_the_adjoint_in_both_precisions():
    op = _random_pairs(digits_points(50), 500)
    geometry = PairGeometry(op)
    rng = np.random.default_rng(3)
    y, block = rng.standard_normal(500), rng.standard_normal((op.dim, 7))
    dense = op.explicit().adjoint(y)                          # Σ y_k v_k v_kᵀ from the explicit rows
    np.testing.assert_allclose(geometry.adjoint(y), dense, atol=1e-10)
    np.testing.assert_allclose(geometry.adjoint_apply(y, block), dense @ block, atol=1e-10)
    # the Laplacian's values are refilled for new weights (its pattern is laid out once)
    y2 = rng.standard_normal(500)
    np.testing.assert_allclose(geometry.adjoint_apply(y2, block), op.explicit().adjoint(y2) @ block, atol=1e-10)
    single = geometry.adjoint_apply(y2, block.astype(np.float32))
    assert single.dtype == np.float32
    np.testing.assert_allclose(single, op.explicit().adjoint(y2) @ block, rtol=1e-4, atol=1e-4 * np.abs(dense).max())
    # 𝒜(FFᵀ) from a factor
    F = rng.standard_normal((op.dim, 3))
    np.testing.assert_allclose(geometry.factor_values(F), op.explicit().apply(F @ F.T), rtol=1e-10)


@pytest.mark.parametrize("n_pairs, by_rows", [(40, True), (60, True), (500, False)])
def test_pair_geometry_forms_the_adjoint_by_either_route(n_pairs, by_rows):
    # at most 1.5·n_a pairs: two syrk of the secant rows (positive and negative weights); more: X_aᵀ Lap X_a
    op = _random_pairs(digits_points(50), n_pairs, seed=n_pairs)
    assert (2 * n_pairs <= 3 * op.points.shape[0]) == by_rows
    geometry = PairGeometry(op)
    rng = np.random.default_rng(n_pairs)
    for y in (rng.standard_normal(n_pairs), np.abs(rng.standard_normal(n_pairs)), -np.abs(rng.standard_normal(n_pairs)),
              np.zeros(n_pairs)):
        formed = geometry.adjoint(y)
        np.testing.assert_allclose(formed, op.explicit().adjoint(y), atol=1e-12 * max(np.abs(y).sum(), 1.0))
        assert np.array_equal(formed, formed.T)


def test_holds_secants():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((70, 12)) @ rng.standard_normal((12, 40))        # rank 12 in R^40
    op = _random_pairs(X, 200)
    _, _, rows = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    assert holds_secants(op, rows[:12].T)
    assert not holds_secants(op, rows[:11].T)
    # points off the span whose pairs are all exact: the point-residual bound fails, the exact check holds
    shifted = PairSecantOperator(np.vstack([X[:2], X[:2] + 5.0]), [0, 2], [1, 3])   # both secants x₀ − x₁
    line = ((X[0] - X[1]) / np.linalg.norm(X[0] - X[1]))[:, None]
    assert holds_secants(shifted, line)
    assert not holds_secants(PairSecantOperator(shifted.points, [0], [2]), line)


def test_span_coordinates_give_the_operator_in_the_basis():
    """The pairs' operator in the basis from the points' coordinates computed once equals the one
    computed from its own points; it is refused for other points or a basis that misses a secant."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((60, 9)) @ rng.standard_normal((9, 30)) + 3.0      # a 9-dimensional span, off centre
    basis = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)[2][:9].T
    span = SpanCoordinates(X, basis)
    op = _random_pairs(X[:45], 300)                                          # pairs among some of the points
    reduced, direct = span.reduced(op), op.in_basis(basis)
    assert reduced is not None and np.array_equal(reduced.rows, op.rows)
    for name in ("points", "V"):
        np.testing.assert_allclose(getattr(reduced, name), getattr(direct, name), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(reduced.norms, op.norms)
    # the same values of 𝒜 on a matrix of the basis as the explicit secants in the original coordinates
    M = rng.standard_normal((9, 9))
    np.testing.assert_allclose(reduced.apply(M + M.T), op.explicit().apply(basis @ (M + M.T) @ basis.T), atol=1e-10)
    # other points (the rows of X moved), and a basis without a direction of the span: refused
    assert span.reduced(_random_pairs(X[:45] * 1.001, 300)) is None
    assert SpanCoordinates(X, basis[:, :8]).reduced(op) is None
    assert holds_secants(op, basis) and not holds_secants(op, basis[:, :8])


def test_span_coordinates_share_the_points_gram_matrix_of_operators_on_the_same_points():
    """Operators reduced on the same points (column generation's rounds) share the points' Gram matrix: computed
    once, it gives the rows of VVᵀ and 𝒜𝒜* bit for bit as a recomputed one, short pairs (near-duplicate points,
    their rows from their secants) included; operators on other points get their own."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((45, 9)) + 2.0
    X[40:] = X[:5] + 1e-9 * rng.standard_normal((5, 9))                     # near-duplicates: short pairs
    span = SpanCoordinates(X, np.eye(9))                                    # exact coordinates, no residual
    every = np.flatnonzero(np.ones(pair_count(45)))
    first = PairSecantOperator(X, *pairs_from_linear_index(every, 45))
    later = PairSecantOperator(X, *pairs_from_linear_index(np.sort(rng.permutation(every)[:700]), 45))
    one, two = span.reduced(first), span.reduced(later)
    assert np.array_equal(one.rows, two.rows) and two.short.size
    assert not one._gram_cell
    secant_cosines(one, 0, np.float32, lower=True)                          # holds H (45 points, 990 pairs)
    H = one.points_gram(hold=False)
    assert two.points is one.points and two.points_gram(hold=False) is H and not H.flags.writeable
    for dtype in (np.float64, np.float32):
        for start in (0, 650):
            fresh = later.with_points(two.points.copy())                      # its own Gram matrix
            np.testing.assert_array_equal(secant_cosines(two, start, dtype), secant_cosines(fresh, start, dtype))
            np.testing.assert_array_equal(gram_rows(two, start, dtype), gram_rows(fresh, start, dtype))
            assert fresh.points_gram(hold=False) is not H
    V = two.V
    np.testing.assert_allclose(secant_cosines(two), V @ V.T, rtol=0, atol=1e-12)
    # pairs among fewer points: other centred coordinates, another Gram matrix
    fewer = span.reduced(_random_pairs(X[:30], 200))
    np.testing.assert_allclose(secant_cosines(fewer), fewer.V @ fewer.V.T, rtol=0, atol=1e-12)
    assert fewer.points_gram(hold=False) is not H and fewer.points_gram(hold=False).shape == (30, 30)
    # pairs among more points than a third of their number: H is not held (n_a² doubles beside S² singles)
    sparse = span.reduced(_random_pairs(X, 100, seed=2))
    secant_cosines(sparse)
    assert sparse.points.shape[0] * 3 > 100 and not sparse._gram_cell


def _shrink_problem(seed):
    """Pairs of 60 digits, their geometry, a generator and positive weights u of M = 𝒜*(u)."""
    op = _random_pairs(digits_points(60), 600)
    rng = np.random.default_rng(seed)
    return op, PairGeometry(op), rng, np.abs(rng.standard_normal(op.n_constraints))


def _assert_top_five(M, exact, theta, vectors, single):
    """The five eigenpairs of M above the threshold: Ritz residuals below eig_tol·‖M‖ (single precision:
    1e-5·‖M‖ at best); the Ritz values err by their square over the gap, plus single precision's rounding."""
    assert theta.shape == (5,) and vectors.shape == (M.g.points.shape[1], 5)
    residual = M.apply(vectors) - vectors * theta
    assert np.linalg.norm(residual, axis=0).max() <= 1.1 * (1e-5 if single else 1e-6) * exact[-1]
    np.testing.assert_allclose(np.sort(theta), exact[-5:], atol=(1e-5 if single else 1e-9) * exact[-1])


@pytest.mark.parametrize("single", [False, True])
def test_partial_shrink_finds_the_eigenpairs_above_the_threshold(single):
    op, geometry, rng, u = _shrink_problem(1)
    shrink = PartialShrink(op.dim, eig_tol=1e-6, refresh_every=50, margin=4, single=single)
    for _ in range(3):                        # a full solve, then Ritz steps from the carried block
        u = u + 1e-3 * np.abs(rng.standard_normal(u.size))
        M = ImplicitMatrix(geometry, None, None, 0.0, None, 0.0, None, u)
        exact = np.linalg.eigvalsh(M.dense())
        threshold = 0.5 * (exact[-5] + exact[-6])                              # five eigenvalues above
        theta, vectors = shrink(M, threshold)
        _assert_top_five(M, exact, theta, vectors, single)
    assert (shrink.full_count, shrink.partial_count) == (1, 2)


@pytest.mark.parametrize("single", [False, True])
def test_partial_shrink_expands_by_the_unconverged_pairs_above_the_threshold(single):
    # the expansion takes the residuals of the Ritz pairs the shrinkage uses that have not converged
    # (at most the five above the threshold), not those of the whole block of five plus the margin
    op, geometry, rng, u = _shrink_problem(4)
    shrink = PartialShrink(op.dim, eig_tol=1e-6, refresh_every=50, margin=6, single=single)
    widths = []

    class Counted(ImplicitMatrix):
        def apply(self, X, images=None):
            widths.append(X.shape[1])
            return super().apply(X, images)

    for _ in range(3):
        u = u + 1e-3 * np.abs(rng.standard_normal(u.size))
        M = Counted(geometry, None, None, 0.0, None, 0.0, None, u)
        exact = np.linalg.eigvalsh(M.dense())
        widths.clear()
        theta, vectors = shrink(M, 0.5 * (exact[-5] + exact[-6]))
        _assert_top_five(M, exact, theta, vectors, single)
    assert shrink.partial_count == 2 and shrink.block.shape[1] == 11
    assert widths[0] == 11 and len(widths) >= 2 and max(widths[1:]) <= 5


@pytest.mark.parametrize("single", [False, True])
def test_partial_shrink_carries_the_points_images_of_its_block(single):
    # the images X_a B of the block and X_a U of the returned eigenvectors are carried through the
    # Rayleigh–Ritz steps (B′ = [B, Q] Z) instead of recomputed: they equal the products through the points
    op, geometry, rng, u = _shrink_problem(3)
    shrink = PartialShrink(op.dim, eig_tol=1e-6, refresh_every=50, margin=4, single=single)
    points = geometry.points
    for _ in range(6):                        # a full solve, then Ritz steps from the carried block
        u = u + 1e-3 * np.abs(rng.standard_normal(u.size))
        M = ImplicitMatrix(geometry, None, None, 0.0, None, 0.0, None, u)
        exact = np.linalg.eigvalsh(M.dense())
        theta, vectors = shrink(M, 0.5 * (exact[-5] + exact[-6]))
        scale = np.linalg.norm(points, 2)
        # single precision: the expansion directions' images are float32 products
        atol = (1e-5 if single else 1e-12) * scale
        np.testing.assert_allclose(shrink.images, points @ shrink.block, rtol=0, atol=atol)
        np.testing.assert_allclose(shrink.vector_images, points @ vectors, rtol=0, atol=atol)
        values = geometry.factor_values(vectors * np.sqrt(theta), shrink.vector_images * np.sqrt(theta))
        np.testing.assert_allclose(values, geometry.factor_values(vectors * np.sqrt(theta)),
                                   rtol=1e-4 if single else 1e-10)
    assert shrink.full_count == 1 and shrink.partial_count == 5


@pytest.mark.parametrize("single", [False, True])
def test_partial_shrink_started_from_a_carried_block_needs_no_full_solve(single):
    # column generation carries the Ritz block of one restricted problem to the next: a new
    # PartialShrink started from it finds the eigenpairs above the threshold without a full solve
    op, geometry, rng, u = _shrink_problem(2)
    first = PartialShrink(op.dim, eig_tol=1e-6, refresh_every=50, margin=4, single=single)
    M = ImplicitMatrix(geometry, None, None, 0.0, None, 0.0, None, u)
    exact = np.linalg.eigvalsh(M.dense())
    first(M, 0.5 * (exact[-5] + exact[-6]))
    u = u + 1e-3 * np.abs(rng.standard_normal(u.size))             # the next problem's matrix
    M = ImplicitMatrix(geometry, None, None, 0.0, None, 0.0, None, u)
    exact = np.linalg.eigvalsh(M.dense())
    carried = PartialShrink(op.dim, eig_tol=1e-6, refresh_every=50, margin=4, single=single)
    carried.start_from(first.block.astype(np.float32))           # as a single-precision run leaves it
    theta, vectors = carried(M, 0.5 * (exact[-5] + exact[-6]))
    assert (carried.full_count, carried.partial_count) == (0, 1)
    _assert_top_five(M, exact, theta, vectors, single)
    # a block of the wrong shape, too wide to expand, or rank deficient is ignored: a full solve
    for bad in (first.block[1:], np.ones((op.dim, op.dim // 2 + 1)), np.repeat(first.block[:, :1], 3, axis=1)):
        refused = PartialShrink(op.dim, eig_tol=1e-6, refresh_every=50, margin=4, single=single)
        refused.start_from(bad)
        refused(M, 0.5 * (exact[-5] + exact[-6]))
        assert refused.full_count == 1


@pytest.mark.parametrize("mode, rtol", [("inverse", 1e-10), ("cholesky", 1e-10), ("auto", 1e-10),
                                        ("cholesky-single", 1e-3), ("mixed", 1e-3)])
def test_least_squares_steps_solve_the_least_squares_system(mode, rtol):
    op = _random_pairs(digits_points(40), 300)
    V = op.explicit().V
    K = np.eye(op.n_constraints) + (V @ V.T) ** 2                             # I + 𝒜𝒜*
    rhs = np.random.default_rng(2).standard_normal(op.n_constraints)
    steps = LeastSquaresSteps(op, mode, None)
    np.testing.assert_allclose(K @ steps(rhs, 1), rhs, rtol=rtol, atol=rtol * np.abs(rhs).max())
    assert steps.refinable == (mode == "mixed")
    # "auto" and "mixed" change means after max(50, S/25) iterations ("mixed" to double precision)
    later_rtol = rtol if mode == "cholesky-single" else 1e-10
    later = steps(rhs, steps.period)
    np.testing.assert_allclose(K @ later, rhs, rtol=later_rtol, atol=later_rtol * np.abs(rhs).max())
    assert (steps.K_inv is not None) == (mode in ("inverse", "auto"))
    assert steps.doubled_at == (steps.period if mode == "mixed" else None)


@pytest.mark.parametrize("mode", ["mixed", "cholesky-single"])
def test_least_squares_steps_keep_the_cosines_they_squared_for_a_polish(mode):
    """With ``keep_cosines`` the single-precision factor of a fresh I + 𝒜𝒜* is the same, bit for bit, and the
    VVᵀ it squared is handed to the polish (the same array secant_cosines makes, once; then made again)."""
    op = _random_pairs(digits_points(40), 300)
    rhs = np.random.default_rng(4).standard_normal(op.n_constraints)
    plain, keeping = LeastSquaresSteps(op, mode, None), LeastSquaresSteps(op, mode, None, keep_cosines=True)
    assert plain.cosines is None and keeping.cosines is not None
    np.testing.assert_array_equal(keeping.cholesky.factor, plain.cholesky.factor)
    np.testing.assert_array_equal(keeping(rhs, 1), plain(rhs, 1))
    made = secant_cosines(op, 0, np.float32, lower=True)
    kept = keeping.cosines
    assert keeping.take_cosines() is kept and keeping.cosines is None
    np.testing.assert_array_equal(np.tril(kept), np.tril(made))
    np.testing.assert_array_equal(np.tril(keeping.take_cosines()), np.tril(made))     # taken: made again
    again = LeastSquaresSteps(op, mode, None, keep_cosines=True)
    if mode == "mixed":                                 # to double precision: the kept array is let go
        again.to_double(1)
        assert again.cosines is None
    # an inverse is never made from kept cosines
    assert LeastSquaresSteps(op, "inverse", None, keep_cosines=True).cosines is None


def test_range_corrected_multipliers_make_the_adjoint_the_identity_on_the_range():
    """y + Δy with Uᵀ𝒜*(y + Δy)U = I, Δy_k = |y_k| w_kᵀΘw_k (w_k = Uᵀv_k): against the k(k+1)/2
    equations in Θ solved densely, with 𝒜* from the explicit secant rows."""
    op = _random_pairs(digits_points(50), 500)
    geometry = PairGeometry(op)
    rng = np.random.default_rng(7)
    k = 4
    U = np.linalg.qr(rng.standard_normal((op.dim, k)))[0]
    y = rng.uniform(0.0, 0.02, 500) * (rng.random(500) < 0.8)           # a fifth of the multipliers zero
    corrected = range_corrected_multipliers(geometry, U, y, rtol=1e-13, max_iter=200)
    V = op.explicit().V
    np.testing.assert_allclose(U.T @ (V.T @ (corrected[:, None] * V)) @ U, np.eye(k), atol=1e-10)
    assert np.all(corrected[y == 0.0] == 0.0)                            # a zero multiplier stays zero
    # the direct solution: Θ over the upper triangle, Δy = |y| ∘ diag(W Θ Wᵀ)
    W = V @ U
    iu = np.triu_indices(k)
    scale = np.where(iu[0] == iu[1], 1.0, 2.0)
    basis = np.einsum("si,sj->sij", W, W)[:, iu[0], iu[1]] * scale       # (S, k(k+1)/2): w_kᵀΘw_k
    rows = np.einsum("si,sj->sij", W, W)[:, iu[0], iu[1]]                # the equations' entries
    gram = rows.T @ (np.abs(y)[:, None] * basis)
    theta = np.linalg.solve(gram, (np.eye(k) - (W.T * y) @ W)[iu])
    np.testing.assert_allclose(corrected, y + np.abs(y) * (basis @ theta), rtol=1e-8, atol=1e-12)
    # nothing to correct on an empty range or at y = 0
    assert range_corrected_multipliers(geometry, U[:, :0], y) is y or np.array_equal(
        range_corrected_multipliers(geometry, U[:, :0], y), y)
    np.testing.assert_array_equal(range_corrected_multipliers(geometry, U, np.zeros(500)), np.zeros(500))


def test_range_corrected_bound_is_a_valid_and_closer_bound_near_the_optimum():
    """On a small NuMax problem solved to 1e-9 (its optimum t*), the multipliers of an early iterate
    corrected on that iterate's range give a bound g(y)/λ_max(𝒜*(y)) that still lies below t* and
    closer to it than the uncorrected one."""
    from sdpembed.solvers.numax.admm_control import ADMMStopping
    from sdpembed.solvers.numax.admm_pairs import pair_trace_admm
    from sdpembed.solvers.numax.pair_linalg import approximate_bound

    op = _random_pairs(digits_points(40), 300, seed=2)
    lo, hi = np.full(300, 0.8), np.full(300, 1.2)
    tight = ADMMStopping(tol=1e-9, feas_tol=1e-9, gap_tol=1e-9, max_iter=20000)
    optimum = pair_trace_admm(op, lo, hi, stopping=tight).objective
    early = pair_trace_admm(op, lo, hi, stopping=ADMMStopping(tol=1e-4, feas_tol=1e-4, gap_tol=1e-12, max_iter=60),
                            certify=False)
    state = early.extra["state"]
    basis = state.basis
    reduced = op if basis is None else op.in_basis(basis)
    geometry = PairGeometry(reduced)
    factor = early.extra["factor"] if basis is None else early.extra["factor"] @ basis
    U = np.linalg.svd(factor.T, full_matrices=False)[0]
    y = state.beta * state.omega
    before = approximate_bound(geometry, lo, hi, y)
    after = approximate_bound(geometry, lo, hi, range_corrected_multipliers(geometry, U, y))
    assert before < after <= optimum * (1 + 1e-9)
    assert optimum - after < 0.5 * (optimum - before)
