"""The linear-embedding family (issue 8): interface, baselines, ADAGIO, the sparse linear model,
and the dispatch table ``embed``."""

import time
import warnings

import numpy as np
import pytest
import scipy.optimize
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA

from sdpembed import NuMax
from sdpembed.datasets import translating_squares
from sdpembed.formulations.sparse_linear import solve_sparse_linear_cvxpy
from sdpembed.linear import (
    ADAGIO,
    LDA,
    LINEAR_METHODS,
    PCA,
    GaussianProjection,
    KernelSparseLinearProjection,
    LinearEmbedding,
    RademacherProjection,
    SparseLinearProjection,
    adagio_projection,
    embed,
    jl_dimension,
    kernel_sparse_linear_coefficients,
    lda_projection,
    pca_projection,
    principal_directions,
    rademacher_projection,
    randomized_pca_projection,
    sparse_linear_objective,
    sparse_linear_projection,
    theorem2_jl_rows,
    weighted_sparse_linear_projection,
)
from sdpembed.linear.sparse_linear_model import sparse_linear_gain
from sdpembed.problems.sparse_linear import weighted_sparse_linear_gradient, weighted_sparse_linear_objective
from sdpembed.secants import all_secants
from sdpembed.validation import SecantSet, isometry_constants


def projector(rows: np.ndarray) -> np.ndarray:
    Q, _ = np.linalg.qr(rows.T)
    return Q @ Q.T


def low_rank_points(n: int, N: int, rank: int, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((N, rank)))[0]
    signal = (rng.standard_normal((n, rank)) * np.geomspace(3.0, 0.3, rank)) @ basis.T
    return signal + noise * rng.standard_normal((n, N))


# ------------------------------------------------------------------------------------- interface


def test_fit_secants_is_uncentred_pca_and_agrees_with_centred_pca_of_points():
    """Σ_{i<j}(x_i − x_j)(x_i − x_j)ᵀ = n Σ (x_i − x̄)(x_i − x̄)ᵀ: same principal subspace."""
    X = low_rank_points(25, 8, 8, 0.0, 0)
    i, j = np.triu_indices(len(X), 1)
    V = X[i] - X[j]                                           # unnormalised secants
    from_points = PCA(3).fit(X).components_
    from_secants = PCA(3).fit_secants(V).components_
    np.testing.assert_allclose(projector(from_points), projector(from_secants), atol=1e-10)
    np.testing.assert_allclose(from_secants, pca_projection(V, 3, center=False))


def test_fit_secants_drops_zero_rows_and_refuses_point_methods():
    V = np.vstack([np.eye(4), np.zeros((1, 4))])
    with pytest.warns(UserWarning, match="1 zero secant"):
        model = PCA(2).fit_secants(V)
    assert model.components_.shape == (2, 4) and model.n_features_in_ == 4
    with pytest.raises(ValueError, match="not from a set of secants"):
        LDA().fit_secants(np.eye(4))
    with pytest.raises(ValueError, match="not from a set of secants"):
        SparseLinearProjection(2, dictionary=np.eye(4), sigma=0.1, tau=1.0).fit_secants(np.eye(4))
    with pytest.raises(ValueError, match="nonzero secant"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            PCA(1).fit_secants(np.zeros((2, 3)))


def test_every_method_is_a_linear_embedding_with_the_common_contract():
    X, y = load_iris(return_X_y=True)
    for name, cls in LINEAR_METHODS.items():
        assert issubclass(cls, LinearEmbedding), name
    for name in ("pca", "pca_randomized", "gaussian", "rademacher", "lda", "adagio"):
        model = embed(name, X, dim=2, labels=y, random_state=0)
        assert model.components_.shape == (2, 4) and model.n_components_ == 2, name
        np.testing.assert_allclose(model.transform(X), X @ model.components_.T)
        assert clone(model).get_params() == model.get_params()


# ------------------------------------------------------------------------------------- PCA


def test_randomized_pca_subspace_is_close_to_exact():
    X = low_rank_points(300, 60, 8, 0.01, 1)
    exact = pca_projection(X, 5)
    randomized = randomized_pca_projection(X, 5, random_state=0)
    np.testing.assert_allclose(randomized @ randomized.T, np.eye(5), atol=1e-12)
    assert np.linalg.norm(projector(exact) - projector(randomized), 2) < 1e-6
    np.testing.assert_array_equal(randomized, randomized_pca_projection(X, 5, random_state=0))
    # without power iterations and oversampling the subspace is visibly worse: the test can fail
    rough = randomized_pca_projection(X, 5, n_iter=0, n_oversamples=0, random_state=0)
    assert np.linalg.norm(projector(exact) - projector(rough), 2) > 1e-4
    model = PCA(5, svd_solver="randomized", random_state=0).fit(X)
    np.testing.assert_array_equal(model.components_, randomized)
    with pytest.raises(ValueError, match="svd_solver"):
        PCA(2, svd_solver="arpack").fit(X)
    with pytest.raises(ValueError, match="n_iter"):
        randomized_pca_projection(X, 2, n_iter=-1)


def test_principal_directions_is_the_named_solver_for_pca_and_adagio():
    X = low_rank_points(40, 12, 5, 0.05, 2)
    np.testing.assert_array_equal(principal_directions(X, 3), pca_projection(X, 3))
    randomized = principal_directions(X, 3, svd_solver="randomized", n_iter=1, random_state=0)
    np.testing.assert_array_equal(randomized, randomized_pca_projection(X, 3, n_iter=1, random_state=0))
    np.testing.assert_array_equal(ADAGIO(6, pca_solver="randomized", random_state=0).fit(X).pca_components_,
                                  randomized_pca_projection(X, 3, random_state=0))
    np.testing.assert_array_equal(PCA(3, center=False).fit(X).components_, principal_directions(X, 3, center=False))
    with pytest.raises(ValueError, match="svd_solver must be one of"):
        principal_directions(X, 3, svd_solver="arpack")


# ------------------------------------------------------------------------------------- random maps


def test_rademacher_entries_are_exactly_plus_minus_one_over_sqrt_m():
    Psi = rademacher_projection(50, 400, random_state=0)
    np.testing.assert_array_equal(np.abs(Psi), np.full((50, 400), 1 / np.sqrt(50)))
    assert 0.47 < np.mean(Psi > 0) < 0.53
    np.testing.assert_array_equal(Psi, RademacherProjection(50, random_state=0).fit(np.zeros((2, 400))).components_)
    assert not np.array_equal(Psi, rademacher_projection(50, 400, random_state=1))
    G = GaussianProjection(400, random_state=0).fit(np.zeros((2, 50))).components_
    assert G.var() == pytest.approx(1 / 400, rel=0.05)


def test_jl_dimension_is_achlioptas_bound_and_works():
    # (4 + 2β) / (ε²/2 − ε³/3) · ln n at n = 100, ε = 0.5, β = 1: 6 / (1/8 − 1/24) · ln 100 = 331.6
    assert jl_dimension(100, 0.5) == 332
    assert theorem2_jl_rows(100, 0.5) == jl_dimension(100, 0.25)
    X = np.random.default_rng(2).standard_normal((30, 600))
    k = jl_dimension(30, 0.5)
    iso = isometry_constants(rademacher_projection(k, 600, random_state=3), X=X)
    assert iso.delta <= 0.5
    with pytest.raises(ValueError, match="epsilon"):
        jl_dimension(10, 1.5)


# ------------------------------------------------------------------------------------- ADAGIO


def test_adagio_structure_is_algorithm_1():
    X = low_rank_points(40, 30, 6, 0.1, 3)
    model = ADAGIO(9, random_state=0).fit(X)
    P, S = model.pca_components_, model.jl_matrix_
    assert (model.n_pca_, model.n_jl_) == (4, 5)                     # ⌊r/2⌋ PCs, ⌈r/2⌉ JL rows
    np.testing.assert_allclose(P, pca_projection(X, 4))
    np.testing.assert_array_equal(np.abs(S), np.full((5, 30), 1 / np.sqrt(5)))
    Q = np.eye(30) - P.T @ P
    np.testing.assert_allclose(model.components_, np.vstack([P, S @ Q]), atol=1e-14)
    w = X[3]
    np.testing.assert_allclose(model.transform(w[None])[0], np.concatenate([P @ w, S @ (w - P.T @ (P @ w))]))
    np.testing.assert_array_equal(model.components_, ADAGIO(9, random_state=0).fit(X).components_)
    # randomized PCA inside ADAGIO (Table 3, Adagio-Randomized-PCA): the same PCA subspace
    rand = ADAGIO(9, pca_solver="randomized", random_state=0).fit(X)
    assert np.linalg.norm(projector(rand.pca_components_) - projector(P), 2) < 1e-6


@pytest.mark.parametrize("epsilon", [0.5, 0.8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_adagio_theorem2_distortion_bound_holds(epsilon, seed):
    """Theorem 2: P of distortion δ (3), padded with k = theorem2_jl_rows(n, ε) JL rows, has
    distortion ≤ δε — checked in RIP (2) (squared) form, and per secant as |‖Πv‖² − 1| ≤ ε‖Qv‖²/2."""
    n, N, s = 20, 800, 6
    X = low_rank_points(n, N, 12, 0.15, seed)
    secants = SecantSet(X=X)
    P = pca_projection(X, s)
    delta_P = secants.isometry_constant(P, "adagio")
    assert 0.3 < delta_P < 0.9                                      # a non-trivial P
    k = theorem2_jl_rows(n, epsilon)
    Psi, P_used, _ = adagio_projection(X, s + k, n_pca=s, random_state=seed)
    np.testing.assert_allclose(P_used, P)
    assert secants.isometry_constant(Psi, "rip") <= epsilon * delta_P
    assert secants.isometry_constant(Psi, "adagio") <= epsilon * delta_P
    V = all_secants(X)
    zeta = np.sum((V - (V @ P.T) @ P) ** 2, axis=1)                 # ‖Qv‖²
    assert np.all(np.abs(np.sum((V @ Psi.T) ** 2, axis=1) - 1) <= epsilon * zeta / 2 + 1e-12)
    # with too few JL rows the same bound fails: the check has teeth
    few, _, _ = adagio_projection(X, s + 8, n_pca=s, random_state=seed)
    assert secants.isometry_constant(few, "rip") > epsilon * delta_P


def test_adagio_given_projection_and_bad_input():
    X = low_rank_points(20, 10, 4, 0.1, 4)
    P = np.eye(10)[:3]
    model = ADAGIO(7, projection=P, random_state=0).fit(X)
    np.testing.assert_array_equal(model.components_[:3], P)
    assert model.n_jl_ == 4 and np.allclose(model.components_[3:, :3], 0)
    with pytest.raises(ValueError, match="orthonormal"):
        ADAGIO(5, projection=2 * P).fit(X)
    with pytest.raises(ValueError, match="at least the rows of P"):
        ADAGIO(2, projection=P).fit(X)
    with pytest.raises(ValueError, match="pca_solver"):
        ADAGIO(4, pca_solver="fast").fit(X)
    with pytest.raises(ValueError, match="n_components"):
        ADAGIO(0).fit(X)


# ------------------------------------------------------------------------------------- LDA


def test_lda_matches_sklearn_eigen_solver():
    X, y = load_wine(return_X_y=True)
    ours = LDA().fit(X, y)
    sk = SkLDA(solver="eigen").fit(X, y)
    assert ours.n_components_ == 2
    A, B = ours.transform(X), sk.transform(X)
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A * signs, B, atol=1e-8 * np.abs(B).max())
    np.testing.assert_array_equal(ours.classes_, np.unique(y))


def test_lda_rank_handling_and_shrinkage():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((12, 30))                               # n < N: S_w singular
    y = np.repeat([0, 1, 2], 4)
    with pytest.raises(ValueError, match="shrinkage"):
        lda_projection(X, y)
    Psi = lda_projection(X, y, shrinkage=0.3)
    means = np.array([X[y == c].mean(0) for c in range(3)])
    within = X - means[y]
    S_w = within.T @ within / 12
    S_w = 0.7 * S_w + 0.3 * np.trace(S_w) / 30 * np.eye(30)
    off = means - X.mean(0)
    S_b = off.T @ off / 3
    np.testing.assert_allclose(Psi @ S_w @ Psi.T, np.eye(2), atol=1e-10)      # wᵀS_w w = 1
    Sb_proj = Psi @ S_b @ Psi.T
    assert abs(Sb_proj[0, 1]) < 1e-10 and Sb_proj[0, 0] >= Sb_proj[1, 1]
    with pytest.raises(ValueError, match="n_components"):
        lda_projection(X, y, 3, shrinkage=0.3)
    with pytest.raises(ValueError, match="two classes"):
        lda_projection(X, np.zeros(12))
    with pytest.raises(ValueError, match="labels"):
        LDA().fit(X, None)


def test_lda_singular_scatter_is_diagnosed_by_lda_itself():
    # S_w singular to rounding (2e-18 and 3e-16 on the span of the data): scipy's Cholesky may accept it,
    # so LDA must refuse it itself rather than return Fisher ratios of order 1e16
    rng = np.random.default_rng(5)
    X, y = rng.standard_normal((12, 30)), np.repeat([0, 1, 2], 4)
    with pytest.raises(ValueError, match="pass shrinkage"):
        LDA().fit(X, y)
    centres = rng.standard_normal((3, 5))
    with pytest.raises(ValueError, match="even with shrinkage 0.5"):               # no within-class variance
        lda_projection(np.repeat(centres, 4, axis=0), y, shrinkage=0.5)
    with pytest.raises(ValueError, match="even with shrinkage 1e-12"):             # too little shrinkage
        lda_projection(X, y, shrinkage=1e-12)


# ------------------------------------------------------------------------------------- sparse linear model


def paper_f(lam, sigma, tau):
    """(8) exactly as printed."""
    return np.sqrt(4 * tau**4 * lam / (sigma**4 + 4 * tau**2 * sigma**2 * lam + 4 * tau**4 * lam**2))


@pytest.mark.parametrize(
    "N, K, sigma, tau",
    [(6, 10, 0.3, 0.7), (5, 12, 1.0, 0.5), (7, 7, 0.05, 2.0), (6, 10, 0.0, 1.0)],   # the last is (9)
)
def test_closed_form_equals_cvxpy_solution_of_6_at_m_equals_n(N, K, sigma, tau):
    D = np.random.default_rng(N * K).standard_normal((N, K)) / np.sqrt(N)
    L = sparse_linear_projection(D, N, sigma=sigma, tau=tau)
    result = solve_sparse_linear_cvxpy(D, sigma=sigma, tau=tau)
    assert result.status == "optimal" and result.relative_gap <= 1e-8
    np.testing.assert_allclose(result.solution, L.T @ L, atol=1e-6, rtol=0)
    assert sparse_linear_objective(L.T @ L, D, sigma=sigma, tau=tau) == pytest.approx(result.objective, rel=1e-9)
    lam = np.linalg.eigvalsh(D @ D.T)
    np.testing.assert_allclose(sparse_linear_gain(lam, sigma, tau), paper_f(lam, sigma, tau), rtol=1e-12)


def test_closed_form_agrees_with_scs():
    D = np.random.default_rng(9).standard_normal((5, 8))
    L = sparse_linear_projection(D, 5, sigma=0.4, tau=0.8)
    result = solve_sparse_linear_cvxpy(D, sigma=0.4, tau=0.8, solver="SCS")
    np.testing.assert_allclose(result.solution, L.T @ L, atol=1e-6, rtol=0)


def test_rank_m_closed_form_beats_local_optimisation_and_other_eigenpairs():
    """For M < N (6) is not convex in L; no local search from random starts does better than (7)."""
    rng = np.random.default_rng(11)
    N, K, M, sigma, tau = 5, 8, 2, 0.5, 0.7
    D = rng.standard_normal((N, K))
    Sigma = D @ D.T

    def value_and_grad(flat):
        L = flat.reshape(M, N)
        S = L.T @ L
        grad_S = (8 * tau**4 * Sigma @ S @ Sigma + 4 * tau**2 * sigma**2 * (Sigma @ S + S @ Sigma)
                  + 2 * sigma**4 * S - 8 * tau**4 * Sigma)
        return sparse_linear_objective(S, D, sigma=sigma, tau=tau), (2 * L @ grad_S).ravel()

    L_star = sparse_linear_projection(D, M, sigma=sigma, tau=tau)
    best = value_and_grad(L_star.ravel())[0]
    found = [scipy.optimize.minimize(value_and_grad, rng.standard_normal(M * N), jac=True, method="L-BFGS-B",
                                     options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 5000}).fun for _ in range(8)]
    assert min(found) >= best * (1 - 1e-9)
    assert min(found) == pytest.approx(best, rel=1e-6)
    lam, V = np.linalg.eigh(Sigma)                                   # the M *smallest* eigenpairs: worse
    L_small = sparse_linear_gain(lam[:M], sigma, tau)[:, None] * V[:, :M].T
    assert value_and_grad(L_small.ravel())[0] > best + 1e-6


def test_noiseless_case_9_and_rank_check():
    D = np.random.default_rng(12).standard_normal((4, 6))
    lam, V = np.linalg.eigh(D @ D.T)
    L = sparse_linear_projection(D, 4, sigma=0.0, tau=1.0)
    np.testing.assert_allclose(L.T @ L, np.linalg.inv(D @ D.T), rtol=1e-10)          # L = Λ^(−1/2) Vᵀ
    thin = np.random.default_rng(13).standard_normal((5, 3))                             # rank DDᵀ = 3 < 4
    with pytest.raises(ValueError, match="noiseless"):
        sparse_linear_projection(thin, 4, sigma=0.0, tau=1.0)
    assert sparse_linear_projection(thin, 4, sigma=0.1, tau=1.0).shape == (4, 5)
    with pytest.raises(ValueError, match="sigma"):
        sparse_linear_projection(D, 2, sigma=-1.0, tau=1.0)
    with pytest.raises(ValueError, match="tau"):
        sparse_linear_projection(D, 2, sigma=0.1, tau=0.0)


def test_kernel_extension_with_linear_kernel_reproduces_the_linear_map():
    """(17)–(18) with k(x, y) = xᵀy: Bᵀ K_D(x) = Bᵀ Dᵀx equals L x of (7) up to a rotation."""
    rng = np.random.default_rng(14)
    N, K, M = 6, 9, 3
    D = rng.standard_normal((N, K))
    X = rng.standard_normal((15, N))
    model = KernelSparseLinearProjection(M, sigma=0.3, tau=0.9, kernel="linear", atoms=D.T).fit(X)
    Y_kernel = model.transform(X)
    Y_linear = X @ sparse_linear_projection(D, M, sigma=0.3, tau=0.9).T
    np.testing.assert_allclose(Y_kernel @ Y_kernel.T, Y_linear @ Y_linear.T, atol=1e-10)
    B0 = kernel_sparse_linear_coefficients(D.T @ D, M, sigma=0.0, tau=1.0)               # g = 1/λ
    lam = np.linalg.eigvalsh(D.T @ D)[::-1][:M]
    np.testing.assert_allclose(np.linalg.norm(B0, axis=0), 1 / lam, rtol=1e-10)
    rbf = KernelSparseLinearProjection(2, sigma=0.1, tau=1.0, n_atoms=10, random_state=0).fit(X)
    assert rbf.transform(X).shape == (15, 2) and rbf.atoms_.shape == (10, N)


def test_sparse_linear_estimator_given_and_learned_dictionary():
    D = np.random.default_rng(15).standard_normal((4, 7))
    X = np.random.default_rng(16).standard_normal((30, 4))
    given = SparseLinearProjection(2, dictionary=D, sigma=0.2, tau=0.5).fit(X)
    np.testing.assert_allclose(given.components_, sparse_linear_projection(D, 2, sigma=0.2, tau=0.5))
    iris = load_iris().data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                               # sklearn's convergence chatter
        learned = SparseLinearProjection(2, n_atoms=6, alpha=0.1, max_iter=5, random_state=0).fit(iris)
    assert learned.dictionary_.shape == (4, 6)
    np.testing.assert_allclose(np.linalg.norm(learned.dictionary_, axis=0), 1.0, atol=1e-8)   # unit atoms
    assert learned.sigma_ > 0 and learned.tau_ > 0
    np.testing.assert_allclose(learned.components_, sparse_linear_projection(
        learned.dictionary_, 2, sigma=learned.sigma_, tau=learned.tau_))
    with pytest.raises(ValueError, match="dictionary must have shape"):
        SparseLinearProjection(2, dictionary=D.T, sigma=0.1, tau=1.0).fit(X)


# ------------------------------------------------------------------------------------- embed


def test_embed_bad_input():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="unknown method"):
        embed("isomap", X, dim=2)
    with pytest.raises(ValueError, match="exactly one of dim"):
        embed("pca", X)
    with pytest.raises(ValueError, match="exactly one of dim"):
        embed("pca", X, dim=2, delta=0.1)
    with pytest.raises(ValueError, match="needs class labels"):
        embed("lda", X, dim=2)
    with pytest.raises(ValueError, match="needs class labels"):
        embed("numax_class", X, delta=0.2)
    with pytest.raises(ValueError, match="unknown option"):
        embed("pca", X, dim=2, n_atoms=3)
    with pytest.raises(ValueError, match="dim= and delta="):
        embed("pca", X, dim=2, n_components=3)
    with pytest.raises(ValueError, match="delta"):
        embed("pca", X, delta=1.5)
    with pytest.raises(ValueError, match="dim"):
        embed("pca", X, dim=0)
    with pytest.raises(ValueError, match="one entry per row"):
        embed("lda", X, dim=2, labels=y[:-1])
    with pytest.raises(ValueError, match="not from secants"):
        embed("lda", X, dim=2, labels=y, secants=True)
    with pytest.raises(ValueError, match="does not reach"), pytest.warns(UserWarning, match="zero secant"):
        embed("gaussian", X, delta=0.01, random_state=0)                      # iris has duplicate points


def test_embed_delta_gives_the_smallest_pca_dimension():
    X = translating_squares(10, 4)
    secants = SecantSet(X=X)
    for measure in ("rip", "adagio"):
        model = embed("pca", X, delta=0.2, measure=measure)
        M = model.n_components_
        assert secants.isometry_constant(model.components_, measure) <= 0.2
        assert secants.isometry_constant(pca_projection(X, M - 1), measure) > 0.2
        assert model.selection_.value == M and model.selection_.train_delta <= 0.2
        assert embed("pca", X, delta=0.2, measure=measure, search="linear").n_components_ == M
    assert embed("pca", X, delta=0.2, measure="adagio").n_components_ < embed("pca", X, delta=0.2).n_components_
    adagio = embed("adagio", X, delta=0.3, random_state=0)
    assert secants.isometry_constant(adagio.components_) <= 0.3
    all_but_1 = embed("pca", X, delta=0.2, exclude_fraction=0.01)
    assert all_but_1.n_components_ < embed("pca", X, delta=0.2).n_components_
    assert np.mean(np.abs(secants.distortions(all_but_1.components_)) > 0.2) <= 0.01


def test_embed_numax_with_dim_bisects_delta():
    X = translating_squares(7, 3)
    model = embed("numax", X, dim=10, random_state=0, delta_tol=0.02)
    sel = model.selection_
    assert model.n_components_ <= 10 and sel.rule == "smallest_delta"
    assert isometry_constants(model.components_, X=X).delta <= sel.value + 1e-4
    ranks = dict(sel.trials)
    below = [d for d, r in ranks.items() if r > 10]
    assert below and max(below) >= sel.value - 0.02 - 1e-12                  # a δ just below has rank > 10
    with pytest.raises(ValueError, match="even at delta"):
        embed("numax", X, dim=2, random_state=0)                              # rank 7 at δ = 0.99
    direct = embed("numax", X, delta=0.2, random_state=0)
    reference = NuMax(delta=0.2, random_state=0).fit(X)
    np.testing.assert_allclose(direct.components_.T @ direct.components_, reference.P_, atol=1e-8)


def test_embed_fits_secants_and_the_table_is_extensible(monkeypatch):
    X = translating_squares(8, 3)
    V = all_secants(X)
    on_secants = embed("pca", V, dim=5, secants=True)
    np.testing.assert_allclose(on_secants.components_, pca_projection(V, 5, center=False))

    class FirstCoordinates(LinearEmbedding):
        def __init__(self, n_components=1):
            self.n_components = n_components

        def _learn_map(self, X, y):
            return np.eye(X.shape[1])[: self.n_components]

    monkeypatch.setitem(LINEAR_METHODS, "first", FirstCoordinates)
    assert embed("first", X, dim=3).components_.shape == (3, 64)
    assert embed("first", X, delta=0.99, measure="rip").n_components_ >= 1


def test_dimension_search_learns_the_dictionary_once(monkeypatch):
    import sdpembed.linear.sparse_linear_model as slm

    calls = []
    real = slm.learn_dictionary

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(slm, "learn_dictionary", counting)
    X = load_iris().data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="does not reach") as info:
            embed("sparse_linear", X, delta=0.05, search="linear", n_atoms=6, alpha=0.1, max_iter=3, random_state=0)
    assert "M <= 4" in str(info.value) and len(calls) == 1       # four dimensions tried, one dictionary


# ---------------------------------------------------------------------------- the benchmark script


def _load_benchmark():
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "linear_family.py"
    # the script imports its sibling benchmarks/report.py, as it does when run by path
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("linear_family_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sleep_then_row(seconds):
    import time

    time.sleep(seconds)
    return {"dim": 3}


def test_benchmark_time_limit_records_time_limit_not_a_number():
    bench = _load_benchmark()
    row = {"method": "slow", "delta": 0.1}
    out = bench.with_time_limit(_sleep_then_row, (30.0,), 0.5, row)
    assert out["dim"] is None and out["status"] == "time limit" and out["note"] == "time limit (0.5 s)"
    assert out["search_s"] < 10.0 and out["peak_rss_mb"] > 0                            # the child's peak memory
    done = bench.with_time_limit(_sleep_then_row, (0.0,), 30.0, row)                    # finished: its own row
    assert done["dim"] == 3 and done["peak_rss_mb"] > 0                                 # (and the child's peak)
    assert bench.with_time_limit(_sleep_then_row, (0.0,), None, row, None) == {"dim": 3}  # no limit: in-process
    assert bench._dim_text(out) == "t/l"


def _allocate_gb(gb):
    return {"dim": int(np.ones(int(gb * 2**30) // 8).sum() > 0)}


def test_benchmark_memory_limit_records_memory_limit_not_a_crash():
    """A cell that needs more memory than ``--memory-limit-gb`` records 'memory limit' (its child
    gets an RLIMIT_AS), instead of growing until the kernel's OOM killer stops the machine."""
    bench = _load_benchmark()
    with open("/proc/self/status") as status:                   # the forked child starts with our address space
        vm_gb = next(int(line.split()[1]) for line in status if line.startswith("VmSize")) / 2**20
    row = {"method": "greedy", "delta": 0.1}
    out = bench.with_time_limit(_allocate_gb, (4.0,), None, row, vm_gb + 1.0)
    assert out["dim"] is None and out["status"] == "memory limit" and "GB address space" in out["note"]
    assert bench._dim_text(out) == "mem"
    small = bench.with_time_limit(_allocate_gb, (0.1,), None, row, vm_gb + 1.0)
    assert small["dim"] == 1 and small["peak_rss_mb"] > 100


def test_benchmark_random_translating_squares():
    bench = _load_benchmark()
    X = bench.random_translating_squares(7, 3, 60, random_state=0)
    assert X.shape == (60, 49)
    np.testing.assert_allclose(X.sum(axis=1), 9.0)                 # the square's area, at any sub-pixel shift
    assert X.min() >= 0.0 and X.max() <= 1.0
    assert np.unique(X.round(10), axis=0).shape[0] == 60           # 60 distinct images (only 25 integer shifts)
    np.testing.assert_array_equal(X, bench.random_translating_squares(7, 3, 60, random_state=0))


def _raise_in_child():
    raise KeyError("boom")


def test_benchmark_time_limit_reports_a_failing_cell_instead_of_a_time_out():
    bench = _load_benchmark()
    with pytest.raises(RuntimeError, match="boom"):
        bench.with_time_limit(_raise_in_child, (), 30.0, {"method": "bad"})


def test_benchmark_mnist_fives_at_7x7_are_4x4_block_means():
    from sdpembed.datasets import load_mnist

    bench = _load_benchmark()
    X = bench.mnist_fives_7x7(20, random_state=1)
    full, labels = load_mnist(size=28, digits=5, n_samples=20, random_state=1)
    assert X.shape == (20, 49) and np.all(labels == 5)
    np.testing.assert_allclose(X[:, 0], full.reshape(20, 28, 28)[:, :4, :4].mean(axis=(1, 2)))
    np.testing.assert_allclose(X.sum(axis=1), full.sum(axis=1) / 16)


def test_benchmark_rerun_of_some_mnist_rows_keeps_the_others_and_their_stamp(tmp_path, monkeypatch):
    """``--parts b --methods L`` replaces only the rows labelled L; the part's other rows and its
    date/load stamp stay, and the re-run gets its own stamp under ``reruns``."""
    import json
    import sys

    bench = _load_benchmark()
    path = tmp_path / "out.json"
    old_rows = [{"method": "PCA", "delta": 0.1, "dim": 7}, {"method": "FroMax", "delta": 0.1, "dim": None}]
    path.write_text(json.dumps({"mnist": {"rows": old_rows, "date": "then", "load_average": [1.0]}}))
    monkeypatch.setattr(bench, "load_mnist", lambda **kw: (np.zeros((3, 2)), None))
    monkeypatch.setattr(bench, "table", lambda *a, **kw: [{"method": "FroMax", "delta": 0.1, "dim": 5}])
    monkeypatch.setattr(sys, "argv", ["linear_family.py", "--parts", "b", "--numax-mnist", "--methods", "FroMax",
                                      "--json", str(path)])
    bench.main()
    mnist = json.loads(path.read_text())["mnist"]
    assert mnist["rows"] == [old_rows[0], {"method": "FroMax", "delta": 0.1, "dim": 5}]
    assert mnist["date"] == "then" and mnist["load_average"] == [1.0]
    assert set(mnist["reruns"]) == {"FroMax 0.05", "FroMax 0.1", "FroMax 0.2"}
    assert mnist["reruns"]["FroMax 0.1"]["memory_limit_gb"] == 12.0

    # --deltas: only those cells of the row are replaced
    old_rows = [{"method": "FroMax", "delta": d, "dim": 9} for d in (0.05, 0.1, 0.2)]
    path.write_text(json.dumps({"mnist": {"rows": old_rows, "date": "then"}}))
    monkeypatch.setattr(bench, "table", lambda *a, deltas, **kw: [{"method": "FroMax", "delta": d, "dim": 5}
                                                                   for d in deltas])
    monkeypatch.setattr(sys, "argv", sys.argv + ["--deltas", "0.1"])
    bench.main()
    mnist = json.loads(path.read_text())["mnist"]
    assert [(r["delta"], r["dim"]) for r in mnist["rows"]] == [(0.05, 9), (0.2, 9), (0.1, 5)]
    assert set(mnist["reruns"]) == {"FroMax 0.1"} and mnist["date"] == "then"


def _spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return {"dim": 1}


def test_benchmark_cpu_limit_stops_a_cell_by_its_cpu_seconds(monkeypatch):
    """``--cpu-limit``: the child is stopped after that many CPU seconds (a loaded machine does not
    shorten them) and the cell records 'time limit' with its CPU seconds, never a number."""
    bench = _load_benchmark()
    monkeypatch.setattr(bench, "CPU_LIMIT", 0.5)
    out = bench.with_time_limit(_spin, (60.0,), None, {"method": "busy", "delta": 0.1}, None)
    assert out["dim"] is None and out["status"] == "time limit" and out["note"] == "CPU time limit (0.5 s)"
    assert out["search_cpu_s"] >= 0.5 and bench._dim_text(out) == "t/l"
    assert bench.with_time_limit(_spin, (0.05,), None, {"method": "quick"}, None)["dim"] == 1
    # a whole cell under the CPU limit runs in one child (which must not fork another)
    X = translating_squares(7, 3)
    monkeypatch.setattr(bench, "CPU_LIMIT", 60.0)
    row = bench.run_method("PCA", "pca", {}, X, 0.2, "rip", SecantSet(X=X))
    assert row["dim"] >= 1 and row["search_cpu_s"] >= 0.0


def test_benchmark_records_the_rank_search_of_a_rank_adjustment():
    """A FroMax/NILE-Pro RA cell stores each run of its rank search (CPU seconds per run, what ended
    it) and how many runs each rank took; other results add nothing."""
    from sdpembed.datasets import translating_squares
    from sdpembed.solvers.near_isometric.rank_adjust import rank_adjust_cg

    bench = _load_benchmark()
    X = translating_squares(7, 3)
    res = rank_adjust_cg(X, 0.4, method="nilepro", initial_pairs=60, random_state=0)
    out = bench.rank_steps(res)
    steps = out["steps"]
    assert [s["start_rank"] for s in steps] == list(res.history["start_rank"])
    assert sum(out["attempts_per_rank"].values()) == len(steps)
    assert all(s["cpu_s"] >= 0.0 and s["message"] for s in steps)
    assert sum(s["cpu_s"] for s in steps) == pytest.approx(res.history["cpu_time"][-1])
    failed = [s for s in steps if s["status"] != "converged"]
    assert failed and all(s["isometry"] > 0.4 for s in failed) and out["message"] == res.message
    assert bench.rank_steps(near_isometric_cg_result(X)) == {}


def near_isometric_cg_result(X):
    from sdpembed.solvers.near_isometric.rank_adjust import near_isometric_cg

    return near_isometric_cg(X, 0.4, 8, method="nilepro", initial_pairs=60, random_state=0)


def test_benchmark_parallel_reruns_of_different_cells_keep_each_others_rows(tmp_path, monkeypatch):
    """Two ``--methods`` re-runs started on the same JSON, the second written while the first ran:
    the first's rows are merged into the file as it is when it writes, not as it was when it started."""
    import json
    import sys

    bench = _load_benchmark()
    path = tmp_path / "out.json"
    path.write_text(json.dumps({"mnist": {"rows": [{"method": "PCA", "delta": 0.1, "dim": 7}], "date": "then"}}))
    monkeypatch.setattr(bench, "load_mnist", lambda **kw: (np.zeros((3, 2)), None))

    def nile_table(*a, deltas, **kw):                 # while the FroMax cell runs, the NILE-Pro one writes
        path.write_text(json.dumps({"mnist": {"rows": [{"method": "PCA", "delta": 0.1, "dim": 7},
                                                        {"method": "NILE-Pro", "delta": 0.1, "dim": 4}],
                                              "date": "then", "reruns": {"NILE-Pro 0.1": {"date": "now"}}}}))
        return [{"method": "FroMax", "delta": d, "dim": 5} for d in deltas]

    monkeypatch.setattr(bench, "table", nile_table)
    monkeypatch.setattr(sys, "argv", ["linear_family.py", "--parts", "b", "--numax-mnist", "--methods", "FroMax",
                                      "--deltas", "0.1", "--json", str(path)])
    bench.main()
    mnist = json.loads(path.read_text())["mnist"]
    assert sorted(r["method"] for r in mnist["rows"]) == ["FroMax", "NILE-Pro", "PCA"]
    assert set(mnist["reruns"]) == {"NILE-Pro 0.1", "FroMax 0.1"}
    assert "load_average_end" in mnist["reruns"]["FroMax 0.1"]


def _weighted_instance(seed: int = 21, N: int = 5, K: int = 8):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, K)) / np.sqrt(N), rng.uniform(0.2, 2.0, K), rng.uniform(0.01, 0.3, N)


def test_weighted_objective_is_the_monte_carlo_expected_distortion_4():
    """(10)–(11) against E δp² sampled: Laplace codes of unequal scales, Gaussian noise of unequal variances."""
    D, alpha, e = _weighted_instance()
    rng = np.random.default_rng(22)
    S = (lambda A: A.T @ A)(rng.standard_normal((3, D.shape[0])))
    n = 400_000
    a1, a2 = (rng.laplace(0.0, np.sqrt(alpha / 2.0), (n, len(alpha))) for _ in range(2))   # Var = 2·scale²
    e1, e2 = (rng.normal(0.0, np.sqrt(e), (n, len(e))) for _ in range(2))
    x1, x2 = a1 @ D.T + e1, a2 @ D.T + e2
    delta_p = np.einsum("ij,jk,ik->i", x1, S, x2) - np.einsum("ij,ij->i", a1, a2)
    objective = weighted_sparse_linear_objective(S, D, code_variances=alpha, noise_variances=e)
    assert np.mean(delta_p**2) == pytest.approx(objective, rel=0.03)


def test_weighted_objective_with_equal_variances_is_6_and_its_gradient_is_exact():
    D, alpha, e = _weighted_instance()
    rng = np.random.default_rng(23)
    A = rng.standard_normal((D.shape[0], D.shape[0]))
    S = A + A.T
    sigma, tau = 0.4, 0.9
    equal = {"code_variances": np.full(D.shape[1], 2 * tau**2), "noise_variances": np.full(D.shape[0], sigma**2)}
    assert weighted_sparse_linear_objective(S, D, **equal) == pytest.approx(
        sparse_linear_objective(S, D, sigma=sigma, tau=tau), rel=1e-12)
    weights = {"code_variances": alpha, "noise_variances": e}
    G = weighted_sparse_linear_gradient(S, D, **weights)
    B = rng.standard_normal(S.shape)
    H = B + B.T
    h = 1e-6
    numeric = (weighted_sparse_linear_objective(S + h * H, D, **weights)
               - weighted_sparse_linear_objective(S - h * H, D, **weights)) / (2 * h)
    assert np.sum(G * H) == pytest.approx(numeric, rel=1e-6)


def test_weighted_projection_at_m_equals_n_is_the_cvxpy_optimum_of_10():
    """At M = N problem (10) over S ⪰ 0 is convex: L-BFGS over L reaches the optimum CVXPY states."""
    cp = pytest.importorskip("cvxpy")
    D, alpha, e = _weighted_instance()
    N = D.shape[0]
    L = weighted_sparse_linear_projection(D, N, code_variances=alpha, noise_variances=e)
    S = cp.Variable((N, N), PSD=True)
    W1, W2, W3 = np.outer(alpha, alpha), 2 * np.outer(e, alpha), np.outer(e, e)
    objective = (cp.sum_squares(cp.multiply(D.T @ S @ D - np.eye(D.shape[1]), np.sqrt(W1)))
                 + cp.sum_squares(cp.multiply(S @ D, np.sqrt(W2))) + cp.sum_squares(cp.multiply(S, np.sqrt(W3))))
    problem = cp.Problem(cp.Minimize(objective))
    problem.solve(solver="CLARABEL")
    assert problem.status == "optimal"
    ours = weighted_sparse_linear_objective(L.T @ L, D, code_variances=alpha, noise_variances=e)
    assert ours == pytest.approx(problem.value, rel=1e-6)
    np.testing.assert_allclose(L.T @ L, S.value, atol=1e-4)


def test_weighted_projection_with_equal_variances_is_the_closed_form_7():
    D, _, _ = _weighted_instance()
    sigma, tau, M = 0.3, 0.8, 2
    L = weighted_sparse_linear_projection(D, M, code_variances=np.full(D.shape[1], 2 * tau**2),
                                          noise_variances=np.full(D.shape[0], sigma**2))
    closed = sparse_linear_projection(D, M, sigma=sigma, tau=tau)
    np.testing.assert_allclose(L.T @ L, closed.T @ closed, atol=1e-8)


def test_weighted_projection_beats_the_equal_variance_closed_form_on_unequal_variances():
    D, alpha, e = _weighted_instance()
    weights = {"code_variances": alpha, "noise_variances": e}
    L = weighted_sparse_linear_projection(D, 2, **weights)
    start = sparse_linear_projection(D, 2, sigma=float(np.sqrt(e.mean())), tau=float(np.sqrt(alpha.mean() / 2)))
    assert (weighted_sparse_linear_objective(L.T @ L, D, **weights)
            < weighted_sparse_linear_objective(start.T @ start, D, **weights) - 1e-6)
    with pytest.raises(ValueError, match="code_variances"):
        weighted_sparse_linear_projection(D, 2, code_variances=alpha[:-1], noise_variances=e)
    with pytest.raises(ValueError, match="noise_variances"):
        weighted_sparse_linear_projection(D, 2, code_variances=alpha, noise_variances=-e)
