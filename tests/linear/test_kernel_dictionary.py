"""The kernel dictionary ("ker.dict", Gkioulekas & Zickler Sec. 3.2–3.3, (13)): each convex step against
its CVXPY statement, closed forms on tiny cases, the linear kernel against the explicit linear lasso,
and the learned map against (17)–(18) computed by hand."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.decomposition import sparse_encode
from sklearn.metrics.pairwise import rbf_kernel

from sdpembed.linear import (
    KernelSparseLinearProjection,
    kernel_dictionary_update,
    kernel_sparse_encode,
    kernel_sparse_linear_coefficients,
    learn_kernel_dictionary,
    sparse_linear_projection,
)
from sdpembed.linear.kernel_dictionary import kernel_dictionary_objective


def _rbf_problem(seed: int = 0, S: int = 25, N: int = 4, K: int = 6) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((S, N))
    Kxx = rbf_kernel(X, gamma=0.3)
    F = rng.standard_normal((S, K)) / S
    return X, Kxx, F


def _kernel_root(Kxx: np.ndarray) -> np.ndarray:
    w, U = np.linalg.eigh(Kxx)
    return (U * np.sqrt(np.maximum(w, 0.0))) @ U.T


def test_codes_are_the_kernel_lasso_of_cvxpy():
    """(13): min_a ½ aᵀK_DD a − K_D(x)ᵀa + α‖a‖₁, stated in CVXPY from the kernel values alone."""
    _, Kxx, F = _rbf_problem()
    G, C = F.T @ Kxx @ F, Kxx @ F
    alpha = 0.02
    codes = kernel_sparse_encode(G, C, alpha=alpha)
    assert np.count_nonzero(codes) < codes.size                      # the ℓ₁ term is active
    for i in (0, 7, 19):
        a = cp.Variable(G.shape[0])
        cp.Problem(cp.Minimize(0.5 * cp.quad_form(a, cp.psd_wrap(G)) - C[i] @ a + alpha * cp.norm1(a))).solve(
            solver=cp.CLARABEL)
        np.testing.assert_allclose(codes[i], a.value, atol=1e-6)


def test_codes_with_the_linear_kernel_are_the_explicit_lasso():
    """k(x, y) = xᵀy: the kernel lasso over D = XᵀF is scikit-learn's lasso on the explicit atoms."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((20, 5))
    F = rng.standard_normal((20, 8)) / 20
    D = X.T @ F                                                          # (N, K) explicit atoms
    Z = rng.standard_normal((6, 5))                                      # new signals
    codes = kernel_sparse_encode(D.T @ D, Z @ D, alpha=0.05)
    np.testing.assert_allclose(codes, sparse_encode(Z, D.T, algorithm="lasso_cd", alpha=0.05, max_iter=100000),
                               atol=1e-6)


def test_one_atom_codes_are_soft_thresholds():
    """One atom of norm² g: a = sign(c) max(|c| − α, 0)/g."""
    c = np.array([[0.5], [-0.05], [-2.0]])
    np.testing.assert_allclose(kernel_sparse_encode([[4.0]], c, alpha=0.1),
                               [[0.1], [0.0], [-0.475]], atol=1e-12)


def test_dictionary_step_is_the_constrained_least_squares_of_cvxpy():
    """min_F ½‖K^½(I − FAᵀ)‖²_F with ‖K^½F_k‖ ≤ 1 (unit atoms in H): a convex QCQP, in CVXPY."""
    _, Kxx, F0 = _rbf_problem(seed=1)
    codes = kernel_sparse_encode(F0.T @ Kxx @ F0 * 400, Kxx @ F0 * 20, alpha=0.01)
    assert np.all(np.any(codes != 0, axis=0))
    F = kernel_dictionary_update(Kxx, codes)
    root = _kernel_root(Kxx)
    Fc = cp.Variable(F.shape)
    residual = np.eye(len(Kxx)) - Fc @ codes.T
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(root @ residual)),
                         [cp.sum_squares(root @ Fc[:, k]) <= 1 for k in range(F.shape[1])])
    problem.solve(solver=cp.CLARABEL)
    ours = kernel_dictionary_objective(Kxx, F, codes, alpha=1.0) - np.abs(codes).sum()
    assert ours == pytest.approx(problem.value, rel=1e-6, abs=1e-9)
    assert np.all(np.diag(F.T @ Kxx @ F) <= 1 + 1e-9)
    assert np.any(np.diag(F.T @ Kxx @ F) > 1 - 1e-6)                   # some constraint is active


def test_one_atom_dictionary_step_in_closed_form():
    """One atom: F = a / max(aᵀa, √(aᵀKa)) — the least-squares atom, shrunk onto the unit sphere."""
    _, Kxx, _ = _rbf_problem(seed=2, S=12)
    rng = np.random.default_rng(4)
    for scale in (0.05, 5.0):                                            # constraint active, then inactive
        a = scale * rng.standard_normal((12, 1))
        expected = a / max((a.T @ a).item(), np.sqrt((a.T @ Kxx @ a).item()))
        np.testing.assert_allclose(kernel_dictionary_update(Kxx, a), expected, rtol=1e-6, atol=1e-12)


def test_unused_atoms_are_zero_in_the_update():
    _, Kxx, _ = _rbf_problem(seed=5, S=10)
    codes = np.zeros((10, 3))
    codes[:, 1] = np.linspace(-1, 1, 10)
    F = kernel_dictionary_update(Kxx, codes)
    assert np.all(F[:, [0, 2]] == 0) and np.any(F[:, 1] != 0)


def test_learning_decreases_the_objective_and_ends_at_a_fixed_point():
    _, Kxx, _ = _rbf_problem(seed=6, S=40)
    F, codes, history = learn_kernel_dictionary(Kxx, 8, alpha=0.05, max_iter=12, tol=0.0, random_state=0,
                                                return_objective=True)
    assert len(history) == 13
    assert np.all(np.diff(history) <= 1e-9 * history[0])
    assert history[-1] < 0.9 * history[0]
    assert history[-1] == pytest.approx(kernel_dictionary_objective(Kxx, F, codes, alpha=0.05))
    np.testing.assert_allclose(codes, kernel_sparse_encode(F.T @ Kxx @ F, Kxx @ F, alpha=0.05), atol=1e-10)
    assert np.all(np.diag(F.T @ Kxx @ F) <= 1 + 1e-9)


def test_learned_estimator_is_17_18_on_the_learned_dictionary():
    """transform(x) = Bᵀ Fᵀ k_X(x), B = (17)–(18) of K_DD = Fᵀ K_XX F, σ̂ = √(α τ̂), τ̂ = mean |a|."""
    X, Kxx, _ = _rbf_problem(seed=7, S=30)
    model = KernelSparseLinearProjection(3, dictionary="learn", n_atoms=6, alpha=0.05, max_iter=4,
                                         kernel_params={"gamma": 0.3}, random_state=1).fit(X)
    F, codes = learn_kernel_dictionary(Kxx, 6, alpha=0.05, max_iter=4, random_state=1)
    tau = np.mean(np.abs(codes))
    assert model.tau_ == pytest.approx(tau) and model.sigma_ == pytest.approx(np.sqrt(0.05 * tau))
    B = kernel_sparse_linear_coefficients(F.T @ Kxx @ F, 3, sigma=np.sqrt(0.05 * tau), tau=tau)
    Z = np.random.default_rng(8).standard_normal((5, 4))
    np.testing.assert_allclose(model.transform(Z), rbf_kernel(Z, X, gamma=0.3) @ F @ B, atol=1e-10)
    assert model.atoms_.shape[0] == model.coefficients_.shape[0] <= 30


def test_learned_linear_kernel_map_is_the_linear_closed_form_on_the_learned_atoms():
    """With k(x, y) = xᵀy the learned atoms are explicit, D = XᵀF, and the map is (7)–(8) on D (up to a rotation)."""
    X = np.random.default_rng(9).standard_normal((40, 5))
    model = KernelSparseLinearProjection(3, dictionary="learn", kernel="linear", n_atoms=8, alpha=0.1,
                                         sigma=0.2, tau=0.7, max_iter=3).fit(X)
    D = model.atoms_.T @ model.dictionary_
    Y = model.transform(X)
    Y_linear = X @ sparse_linear_projection(D, 3, sigma=0.2, tau=0.7).T
    np.testing.assert_allclose(Y @ Y.T, Y_linear @ Y_linear.T, atol=1e-9)


def test_bad_input_is_refused_with_clear_errors():
    _, Kxx, F = _rbf_problem()
    with pytest.raises(ValueError, match="alpha"):
        kernel_sparse_encode(F.T @ Kxx @ F, Kxx @ F, alpha=0.0)
    with pytest.raises(ValueError, match="positive semidefinite"):
        kernel_sparse_encode(np.diag([1.0, -1.0]), np.ones((2, 2)), alpha=0.1)
    with pytest.raises(ValueError, match="columns"):
        kernel_sparse_encode(np.eye(3), np.ones((2, 2)), alpha=0.1)
    with pytest.raises(ValueError, match="one row per training signal"):
        kernel_dictionary_update(Kxx, np.ones((3, 2)))
    with pytest.raises(ValueError, match="square"):
        learn_kernel_dictionary(np.ones((3, 2)), 1)
    with pytest.raises(ValueError, match="n_atoms"):
        learn_kernel_dictionary(Kxx, 26)
    with pytest.raises(ValueError, match="positive diagonal"):
        learn_kernel_dictionary(np.zeros((3, 3)), 1)
    X = np.random.default_rng(0).standard_normal((10, 3))
    with pytest.raises(ValueError, match="dictionary must be"):
        KernelSparseLinearProjection(dictionary="kmeans", sigma=0.1, tau=1.0).fit(X)
    with pytest.raises(ValueError, match="sigma and tau are required"):
        KernelSparseLinearProjection().fit(X)
