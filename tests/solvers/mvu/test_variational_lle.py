"""Variational MVU with the LLE basis (thesis Sec. 3.1.8, Fig. 3.17): LLE's weights against a direct
least-squares solve, the basis against scikit-learn's LocallyLinearEmbedding, the unfolding."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import null_space, subspace_angles
from scipy.stats import spearmanr
from sklearn.manifold import LocallyLinearEmbedding

from sdpembed.datasets import swiss_roll
from sdpembed.formulations.mvu import solve_variational_sdp
from sdpembed.graphs import knn_indices, lle_matrix, neighborhood_graph
from sdpembed.models import MVU
from sdpembed.solvers.mvu.variational import lle_basis, variational_mvu
from sdpembed.validation.embedding_quality import local_continuity


def _direct_weights(x: np.ndarray, neighbours: np.ndarray, reg: float) -> np.ndarray:
    """min ‖x − Σ_j w_j x_j‖² + r‖w‖² s.t. Σ_j w_j = 1, r = reg·tr C, by a least-squares solve on
    the constraint's null space: w = 1/k + N z."""
    k = neighbours.shape[0]
    r = reg * np.sum((neighbours - x) ** 2)
    w0 = np.full(k, 1.0 / k)
    N = null_space(np.ones((1, k)))
    A = np.vstack([neighbours.T @ N, np.sqrt(r) * N])
    b = np.concatenate([x - neighbours.T @ w0, -np.sqrt(r) * w0])
    z = np.linalg.lstsq(A, b, rcond=None)[0]
    return w0 + N @ z


@pytest.mark.parametrize(("k", "d", "reg"), [(3, 5, 1e-12), (8, 3, 1e-3)])
def test_lle_weights_match_a_direct_least_squares_solve(k: int, d: int, reg: float) -> None:
    X = np.random.default_rng(k).normal(size=(40, d))
    W, M = lle_matrix(X, k, reg=reg)
    index, _ = knn_indices(X, k)
    for i in range(len(X)):
        expected = _direct_weights(X[i], X[index[i]], reg)
        np.testing.assert_allclose(W[i, index[i]].toarray().ravel(), expected, rtol=1e-7, atol=1e-9)
    assert W.nnz == 40 * k
    np.testing.assert_allclose(np.asarray(W.sum(axis=1)).ravel(), 1.0, atol=1e-12)
    A = np.eye(40) - W.toarray()
    np.testing.assert_allclose(M.toarray(), A.T @ A, atol=1e-12)
    np.testing.assert_allclose(M @ np.ones(40), 0.0, atol=1e-10)
    assert sp.issparse(M)


@pytest.mark.parametrize("n", [300, 700])          # the dense and the shift-invert Lanczos paths
def test_lle_basis_spans_scikit_learns_lle_eigenvectors(n: int) -> None:
    X, _ = swiss_roll(n, noise=0.3, random_state=2)
    X = np.hstack([X, 0.3 * np.random.default_rng(2).normal(size=(n, 5))])     # Fig. 3.5's 8 dimensions
    k, m = 8, 6                                    # scikit-learn asks m ≤ the input dimension
    Q = lle_basis(X, k, m)
    assert Q.shape == (n, m)
    np.testing.assert_allclose(Q.T @ Q, np.eye(m), atol=1e-10)
    np.testing.assert_allclose(Q.sum(axis=0), 0.0, atol=1e-9)
    reference = LocallyLinearEmbedding(n_neighbors=k, n_components=m, reg=1e-3, eigen_solver="dense").fit(X)
    # the same subspace: sklearn's outputs are these eigenvectors up to rotation and sign
    assert np.max(subspace_angles(Q, reference.embedding_)) < 1e-5
    # and not merely any smooth subspace: the Laplacian's differs
    from sdpembed.solvers.mvu.variational import laplacian_basis

    edges, _ = neighborhood_graph(X, k, angles=False)
    assert np.max(subspace_angles(laplacian_basis(n, edges, m), reference.embedding_)) > 0.1


def test_variational_mvu_with_the_lle_basis_unfolds_a_swiss_roll() -> None:
    X, params = swiss_roll(800, noise=0.05, random_state=0)
    edges, D = neighborhood_graph(X, 6, angles=False)
    res = variational_mvu(edges, D, len(X), solve_sdp=solve_variational_sdp, basis="lle", X=X, lle_neighbors=6)
    assert np.max(subspace_angles(res.basis, lle_basis(X, 6, 10))) < 1e-8
    assert res.energy < 0.05 * res.energy_sdp
    assert abs(spearmanr(res.embedding[:, 0], params[:, 0])[0]) > 0.98
    assert local_continuity(X, res.embedding, 5) > 0.99
    with pytest.raises(ValueError, match="needs the inputs X"):
        variational_mvu(edges, D, len(X), solve_sdp=solve_variational_sdp, basis="lle")
    with pytest.raises(ValueError, match="basis must be one of"):
        variational_mvu(edges, D, len(X), solve_sdp=solve_variational_sdp, basis="isomap")
    with pytest.raises(ValueError, match="one row per point"):
        variational_mvu(edges, D, len(X), solve_sdp=solve_variational_sdp, basis="lle", X=X[:10])


def test_the_estimator_passes_the_basis() -> None:
    X, _ = swiss_roll(300, noise=0.05, random_state=1)
    lle = MVU(n_neighbors=6, method="variational", basis="lle", n_basis=8).fit(X)
    lap = MVU(n_neighbors=6, method="variational", n_basis=8).fit(X)
    assert np.max(subspace_angles(lle.result_.basis, lle_basis(X, 6, 8))) < 1e-8
    assert np.max(subspace_angles(lle.result_.basis, lap.result_.basis)) > 0.1
    with pytest.raises(ValueError, match="basis must be one of"):
        MVU(method="variational", basis="isomap").fit(X)


def test_the_lle_basis_converges_quickly_on_a_large_roll(monkeypatch) -> None:
    """LLE's matrix has a cluster of eigenvalues within ~1e-9 of 0; shift-invert about a shift as
    large as the Laplacian's maps them to a cluster Lanczos separates only after thousands of
    iterations (minutes at n = 4,000). The basis must come within a small iteration budget, and
    span the same space as the dense computation."""
    import scipy.sparse.linalg as spla

    import sdpembed.solvers.mvu.variational as variational

    budget = functools.partial(spla.eigsh, maxiter=300)
    monkeypatch.setattr(variational.spla, "eigsh", budget)
    X, _ = swiss_roll(1500, noise=0.05, random_state=0)
    Q = lle_basis(X, 6, 10)                                      # n > 600: the Lanczos path
    _, M = lle_matrix(X, 6)
    w, U = np.linalg.eigh(M.toarray())
    reference = U[:, :11] - U[:, :11].mean(axis=0)              # the bottom 11, constant removed
    assert np.max(subspace_angles(Q, reference)) < 1e-4
