"""FroMax and NILE-Pro (Luo et al., Algorithms 1–2), the column-generation driver with an inner solve
that is not certified, and the estimators; their rank adjustment (Algorithm 3) and column generation
(Algorithm 4) are tested in ``test_rank_adjust.py``.

The methods are non-convex: the tests check what they promise (the requested δ is met, checked
independently of the solvers), the parts that have closed forms (ℓ₁-ball projection, ℓ∞ prox,
FroMax's P-step), and what is provably comparable with the convex NuMax optimum
(‖Ψ‖_F² = tr ΨᵀΨ ≥ NuMax's optimal trace ≥ its certified dual bound, rank Ψ ≥ bound/‖Ψ‖₂²).
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from sdpembed.isometry import isometry_constants
from sdpembed.linear.near_isometric import FroMax, NILEPro
from sdpembed.problems import numax_operator
from sdpembed.problems.numax_operator import PairSecantOperator, SecantOperator
from sdpembed.solvers.near_isometric.fromax import (
    FroMaxState,
    _half_residual2,
    _LeastSquares,
    _p_step,
    _P_times,
    fromax,
)
from sdpembed.solvers.near_isometric.nilepro import nilepro, prox_linf
from sdpembed.solvers.near_isometric.nonconvex import FactorOps, project_l1_ball
from sdpembed.solvers.near_isometric.rank_adjust import near_isometric_cg, pair_gram, rank_adjust
from sdpembed.solvers.numax.column_generation import RestrictedResult, run_column_generation

from .conftest import NUMAX_RANK, check_provable

# ---------------------------------------------------------------------------- closed forms


def test_l1_ball_projection_is_the_projection():
    rng = np.random.default_rng(0)
    for radius in (0.3, 1.0, 5.0):
        v = rng.standard_normal(50)
        p = project_l1_ball(v, radius)
        assert np.abs(p).sum() <= radius * (1 + 1e-12)
        # variational inequality ⟨v − p, z − p⟩ ≤ 0 for every z in the ball (checked on random ones)
        for _ in range(200):
            z = rng.standard_normal(50)
            z *= radius * rng.uniform() / np.abs(z).sum()
            assert (v - p) @ (z - p) <= 1e-10
    inside = np.array([0.1, -0.2])
    np.testing.assert_array_equal(project_l1_ball(inside, 1.0), inside)


def test_linf_prox_minimises_its_objective():
    rng = np.random.default_rng(1)
    tau, beta = rng.standard_normal(30), 0.7
    x = prox_linf(tau, beta)

    def f(z):
        return np.abs(z).max() + 0.5 * beta * np.sum((z - tau) ** 2)

    t = np.abs(x).max()
    assert np.isclose(np.maximum(np.abs(tau) - t, 0).sum(), 1 / beta)   # Σ(|τ| − t)₊ = 1/β
    for _ in range(300):
        assert f(x) <= f(x + 1e-3 * rng.standard_normal(30)) + 1e-12


def test_fromax_p_step_solves_3_9_and_the_residual_formula(squares):
    """The implicit P = sym(XY) + 𝒜*(w) solves (I + β₁𝒜*𝒜)P = sym(XY) + 𝒜*(β₁q − λ), and the
    X/Y-step products and ½‖P − XY‖² agree with the explicit matrices."""
    rng = np.random.default_rng(2)
    V = squares[1][:120]
    ops, op = FactorOps(V), SecantOperator(V)
    N, M, beta1 = V.shape[1], 4, 1.7
    X, Y = rng.standard_normal((N, M)), rng.standard_normal((M, N))
    q, lam = 1 + 0.1 * rng.standard_normal(120), rng.standard_normal(120)
    sym = 0.5 * (X @ Y + (X @ Y).T)
    AXY = op.apply(sym)
    for method in ("exact", "cg"):
        ls = _LeastSquares(ops, beta1, method, 6000)
        w, AP, wHw = _p_step(ls, AXY, q, lam, beta1)
        P = sym + op.adjoint(w)
        lhs = P + beta1 * op.adjoint(op.apply(P))
        np.testing.assert_allclose(lhs, sym + op.adjoint(beta1 * q - lam), atol=1e-7)
        np.testing.assert_allclose(AP, op.apply(P), atol=1e-8)
        assert np.isclose(wHw, np.sum(op.adjoint(w) ** 2), rtol=1e-6)
    A = rng.standard_normal((N, 3))
    np.testing.assert_allclose(_P_times(ops, X, Y, w, A, ops.matrix_images(A)), P @ A, atol=1e-9)
    X2, Y2 = rng.standard_normal((N, M)), rng.standard_normal((M, N))
    AXY2 = np.einsum("ij,ij->i", V @ X2, V @ Y2.T)
    explicit = 0.5 * np.sum((P - X2 @ Y2) ** 2)
    assert np.isclose(_half_residual2(X, Y, w, AXY, wHw, X2, Y2, AXY2), explicit, rtol=1e-8)


def test_p_step_explicit_inverse_equals_the_cholesky_solve(squares):
    """After ``invert_after`` solves the factor becomes the explicit inverse (one ``symv`` per
    solve): the same w to rounding, and a whole FroMax run gives the same map and iterations."""
    rng = np.random.default_rng(5)
    V = squares[1]
    ops = FactorOps(V)
    chol = _LeastSquares(ops, 1.3, "exact", 6000)
    chol.invert_after = 10**9
    inv = _LeastSquares(ops, 1.3, "exact", 6000)
    inv.invert_after = 3
    for _ in range(6):
        b = rng.standard_normal(V.shape[0])
        np.testing.assert_allclose(inv.solve(b), chol.solve(b), rtol=1e-9, atol=1e-12)
    assert inv.inverse is not None and chol.inverse is None
    K = (V @ V.T) ** 2 * 1.3 + np.eye(V.shape[0])
    b = rng.standard_normal(V.shape[0])
    np.testing.assert_allclose(K @ inv.solve(b), b, atol=1e-9)

    runs = {}
    for after in (10**9, 5):
        ops = FactorOps(V)                                   # a fresh cache of the factor per run
        ls = _LeastSquares(ops, 1.0, "auto", 6000)
        ls.invert_after = after
        ops.__dict__["_fromax_least_squares"] = {(1.0, "auto", 6000, False): ls}
        runs[after] = fromax(ops, 0.25, NUMAX_RANK[0.25])
    a, b = runs[10**9], runs[5]
    assert a.status == b.status == "converged" and a.iterations == b.iterations > 5
    np.testing.assert_allclose(a.Psi, b.Psi, rtol=1e-6, atol=1e-8)
    assert b.isometry <= 0.25


def test_p_step_matrix_of_a_pair_operator_equals_the_explicit_one(squares, monkeypatch):
    """The P-step's matrix I + β₁(VVᵀ)∘(VVᵀ) of a pair operator, whose VVᵀ is read off the points'
    Gram matrix (``secant_cosines``), is that of the explicit secants to rounding; so is it when every
    pair takes ``secant_cosines``' per-pair fallback (its rows and columns from the secants, which
    differ from the product V Vᵀ in the last bit: a tolerance, not bit equality)."""
    from sdpembed.solvers.numax import least_squares

    X, V, pairs = squares
    paired = FactorOps(PairSecantOperator(X, pairs[:, 0], pairs[:, 1]))
    explicit = (paired.op.V @ paired.op.V.T) ** 2 * 1.3 + np.eye(paired.S)

    def matrix(ops):
        L = np.tril(_LeastSquares(ops, 1.3, "exact", 6000).factor)
        return L @ L.T

    np.testing.assert_allclose(matrix(paired), explicit, rtol=0, atol=1e-11)
    np.testing.assert_allclose(matrix(FactorOps(V)), (V @ V.T) ** 2 * 1.3 + np.eye(len(V)), rtol=0, atol=1e-11)
    monkeypatch.setattr(numax_operator, "SHORT_PAIR_RATIO", 0.0)            # every pair from its secant
    paired = FactorOps(PairSecantOperator(X, pairs[:, 0], pairs[:, 1]))
    assert paired.op.short.size == paired.S
    cosines = least_squares.secant_cosines(paired.op)
    np.testing.assert_allclose(cosines, paired.op.V @ paired.op.V.T, rtol=0, atol=1e-15)
    np.testing.assert_allclose(matrix(paired), explicit, rtol=0, atol=1e-11)


def test_single_precision_p_step_is_accurate_and_fromax_meets_delta(squares):
    """From ``single_from`` secants the P-step is solved in single precision: w to about 1e-6
    relatively, and a FroMax run still meets δ, judged in double precision on the map."""
    rng = np.random.default_rng(4)
    V = squares[1]
    ops = FactorOps(V)
    double, single = _LeastSquares(ops, 1.0, "exact", 6000), _LeastSquares(ops, 1.0, "exact", 6000, single=True)
    assert single.factor.dtype == np.float32 and double.factor.dtype == np.float64
    single.invert_after = 3                                             # the single-precision inverse too
    for _ in range(5):
        b = rng.standard_normal(len(V))
        w, w32 = double.solve(b), single.solve(b)
        assert w32.dtype == np.float64
        assert np.linalg.norm(w32 - w) <= 1e-5 * np.linalg.norm(w)
        assert np.linalg.norm(w32 - w) > 0.0                            # not the double-precision solve
    assert single.inverse is not None and single.inverse.dtype == np.float32
    rank = NUMAX_RANK[0.25]
    runs = {name: fromax(FactorOps(V), 0.25, rank, single_from=frm) for name, frm in (("d", None), ("s", len(V)))}
    assert runs["s"].status == runs["d"].status == "converged"
    for res in runs.values():
        assert isometry_constants(res.Psi, secants=V).delta <= 0.25
    assert runs["s"].iterations != runs["d"].iterations or not np.array_equal(runs["s"].Psi, runs["d"].Psi)


def test_pair_operations_match_explicit_secants(squares):
    X, V, pairs = squares
    rng = np.random.default_rng(3)
    explicit, paired = FactorOps(V), FactorOps(PairSecantOperator(X, pairs[:, 0], pairs[:, 1]))
    Psi, w = rng.standard_normal((5, V.shape[1])), rng.standard_normal(len(V))
    np.testing.assert_allclose(paired.images(Psi), explicit.images(Psi), atol=1e-12)
    B = explicit.images(Psi)
    np.testing.assert_allclose(paired.factor_adjoint(B, w), explicit.factor_adjoint(B, w), atol=1e-10)
    np.testing.assert_allclose(pair_gram(X), V.T @ V, atol=1e-10)


@pytest.mark.parametrize(("points", "delta", "rank", "max_iter"),
                         [("squares", 0.25, 8, 5000), ("squares", 0.1, 11, 5000), ("few_dimensions", 0.05, 3, 100),
                          ("few_dimensions", 0.3, 3, 5000)])
def test_nilepro_point_steps_follow_the_explicit_iterates(squares, monkeypatch, points, delta, rank, max_iter):
    """On a pair operator NILE-Pro keeps its steps as point weights (nilepro._PointSteps): the same
    iterates as the (M, N) gradient steps on the explicit secants, through K = X_aX_aᵀ (squares:
    n_a < 2N) or through X_a (n_a ≥ 2N), without forming Ψ𝒜*(r) — the run fails if it does. The maps
    are compared through their images ‖Ψv‖² (they may differ off the span of the secants, where the
    two PCA starts differ)."""
    if points == "squares":
        X, V, pairs = squares
    else:
        X = np.random.default_rng(5).standard_normal((30, 4))
        pairs = np.array([(i, j) for i in range(30) for j in range(i + 1, 30)])
        V = X[pairs[:, 0]] - X[pairs[:, 1]]
        V /= np.linalg.norm(V, axis=1)[:, None]
    explicit = nilepro(V, delta, rank, max_iter=max_iter)

    def no_gradient_matrix(self, B, w):
        raise AssertionError("the point steps form no (M, N) gradient")

    monkeypatch.setattr(FactorOps, "factor_adjoint", no_gradient_matrix)
    paired = nilepro(PairSecantOperator(X, pairs[:, 0], pairs[:, 1]), delta, rank, max_iter=max_iter)
    assert paired.iterations == explicit.iterations and paired.status == explicit.status
    np.testing.assert_allclose(paired.history["isometry"], explicit.history["isometry"], rtol=0, atol=1e-10)
    for ours, theirs in ((paired.Psi, explicit.Psi), (paired.extra["state"].Psi, explicit.extra["state"].Psi)):
        np.testing.assert_allclose(np.sum((V @ ours.T) ** 2, axis=1), np.sum((V @ theirs.T) ** 2, axis=1),
                                   rtol=0, atol=1e-9)
    assert paired.isometry == pytest.approx(isometry_constants(paired.Psi, secants=V).delta, abs=1e-10)


# ---------------------------------------------------------------------------- the methods


@pytest.mark.parametrize("method", [fromax, nilepro])
@pytest.mark.parametrize(("delta", "rank"), [(0.4, 5), (0.25, 8), (0.1, 11)])
def test_reaches_delta(squares, numax_bounds, method, delta, rank):
    """At NuMax's rank, or below it (δ = 0.4: the PCA start already meets δ at rank 7)."""
    V = squares[1]
    res = method(V, delta, rank, random_state=0)
    assert res.status == "converged" and res.feasible and res.rank == rank
    assert np.isnan(res.dual_bound)
    iso = check_provable(res.Psi, delta, numax_bounds[delta], secants=V)
    assert iso == pytest.approx(res.isometry, abs=1e-12)
    assert res.history["isometry"][-1] <= delta < res.history["isometry"][0]   # it did work


@pytest.mark.parametrize("method", [fromax, nilepro])
def test_too_low_a_rank_is_reported_not_hidden(squares, method):
    V = squares[1]
    res = method(V, 0.1, 2, max_iter=400)
    assert res.status in ("stalled", "max_iterations") and not res.feasible and not res.success
    assert res.isometry == pytest.approx(isometry_constants(res.Psi, secants=V).delta, abs=1e-12)
    assert res.isometry > 0.1


def test_warm_start_continues_the_run(squares):
    V = squares[1]
    first = nilepro(V, 0.1, 11, max_iter=5)
    assert first.status == "max_iterations"
    resumed = nilepro(V, 0.1, warm_start=first.extra["state"])
    assert resumed.success and resumed.isometry <= 0.1
    state = fromax(V, 0.1, 11, max_iter=3).extra["state"]
    assert isinstance(state, FroMaxState)
    assert fromax(V, 0.1, warm_start=state).success


def test_driver_with_a_non_certified_inner_never_claims_optimal():
    """A pluggable inner solve: the identity map is an exact isometry, so one round ends the loop —
    as 'converged' with no bound, because the inner solver is not certified."""
    X = np.random.default_rng(4).standard_normal((15, 4))

    class Identity:
        certified = False

        def solve(self, operator, lo, hi, warm_start, tight):
            I = np.eye(4)
            return RestrictedResult(P=I, y=np.zeros(operator.n_constraints), state=None, rank=4, iterations=0,
                                    objective=4.0, status="converged", factor=I)

        def carry(self, result, keep, n_added):
            return None

    run = run_column_generation(X, lambda i, j: (np.full(i.shape, 0.9), np.full(i.shape, 1.1)), Identity(),
                                initial_pairs=5, initial_neighbors=0, random_state=0)
    assert run.status == "converged" and run.rounds == 1 and run.max_violation == 0.0
    assert run.worst_violation == pytest.approx(-0.1, abs=1e-9)
    assert np.isnan(run.result.dual_bound)


# ---------------------------------------------------------------------------- estimators


def test_estimators_fit_transform(squares):
    X = squares[0]
    model = NILEPro(delta=0.25, random_state=0).fit(X)
    assert model.isometry_constant_ <= 0.25 and model.result_.success
    assert model.components_.shape == (model.n_components_, 49)
    assert model.transform(X).shape == (25, model.n_components_)
    assert isometry_constants(model.components_, X=X).delta <= 0.25
    fixed = FroMax(delta=0.4, n_components=7, random_state=0).fit(X)
    assert fixed.n_components_ == 7 and isometry_constants(fixed.components_, X=X).delta <= 0.4
    sampled = clone(FroMax(delta=0.4, n_components=7, n_secants=150, random_state=1)).fit(X)
    assert sampled.result_.n_secants == 150 and sampled.isometry_constant_ <= 0.4
    with pytest.warns(ConvergenceWarning, match="did not reach"):
        NILEPro(delta=0.1, n_components=1, max_iter=50).fit(X)
    from_numax = NILEPro(delta=0.25, initial_rank="from_numax", random_state=0).fit(X)   # R₀ = NuMax's rank
    assert from_numax.result_.history["iterations"][0] == 0 and from_numax.isometry_constant_ <= 0.25


# ---------------------------------------------------------------------------- bad input


def test_bad_input_names_the_argument(squares):
    X, V, _ = squares
    cases = [
        (lambda: nilepro(V, 1.5, 3), "delta"),
        (lambda: nilepro(V, 0.2, 0), "rank"),
        (lambda: fromax(V, 0.2, 50), "rank"),
        (lambda: nilepro(V, 0.2), "rank"),
        (lambda: nilepro(2 * V, 0.2, 3), "secants"),
        (lambda: fromax(np.full((3, 4), np.nan), 0.2, 2), "secants"),
        (lambda: fromax(V, 0.2, 3, beta1=-1.0), "beta1"),
        (lambda: fromax(V, 0.2, 3, margin=1.0), "margin"),
        (lambda: fromax(V, 0.2, 3, least_squares="lu"), "least_squares"),
        (lambda: nilepro(V, 0.2, 3, beta=0.0), "beta"),
        (lambda: nilepro(V, 0.2, 3, max_iter=-1), "max_iter"),
        (lambda: nilepro(V, 0.2, 3, initial_map="svd"), "init"),
        (lambda: nilepro(V, 0.2, 3, initial_map=np.ones((2, 49))), "initial_map"),
        (lambda: nilepro(V, 0.2, warm_start=nilepro(V[:10], 0.2, 3, max_iter=1).extra["state"]), "warm_start"),
        (lambda: rank_adjust(V, 0.2, method="numax"), "method"),
        (lambda: rank_adjust(V, 0.2, initial_rank=100), "initial_rank"),
        (lambda: rank_adjust(V, 0.2, rank_step="fast"), "rank_step"),
        (lambda: rank_adjust(V, 0.2, restart="warm"), "restart"),
        (lambda: near_isometric_cg(X, 0.2, 3, keep_tol=-1.0), "keep_tol"),
        (lambda: near_isometric_cg(X[:1], 0.2, 3), "X"),
        (lambda: NILEPro(delta=0.0).fit(X), "delta"),
        (lambda: FroMax(n_components=0).fit(X), "n_components"),
        (lambda: NILEPro(n_secants=0).fit(X), "n_secants"),
        (lambda: NILEPro(initial_rank="pca").fit(X), "initial_rank"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=name):
            call()
