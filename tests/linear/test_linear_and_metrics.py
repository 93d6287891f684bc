"""Ψ = Λ^½Uᵀ (5), PCA, Gaussian maps and the isometry metrics."""

import numpy as np
import pytest

from sdpembed.linear import embedding_from_psd, gaussian_projection, numerical_rank, pca_projection
from sdpembed.secants import all_secants
from sdpembed.validation import (
    dimension_for_delta,
    distortion_histogram,
    isometry_constants,
    secant_distortions,
)


def test_factor_reproduces_low_rank_psd():
    rng = np.random.default_rng(0)
    B = rng.standard_normal((3, 7))
    P = B.T @ B
    Psi = embedding_from_psd(P)
    assert Psi.shape == (3, 7)
    np.testing.assert_allclose(Psi.T @ Psi, P, atol=1e-10)
    assert np.all(np.diff(np.linalg.norm(Psi, axis=1)) <= 1e-12)  # decreasing eigenvalues


def test_tail_rule_bounds_the_lost_isometry():
    """Dropping eigenvalues summing to ≤ tail_tol changes every ‖Ψv‖² by at most tail_tol."""
    w = np.array([3.0, 1.0, 4e-7, 3e-7, 2e-7])
    U = np.linalg.qr(np.random.default_rng(1).standard_normal((5, 5)))[0]
    P = (U * w) @ U.T
    assert numerical_rank(P, tail_tol=1e-6) == 2
    assert numerical_rank(P, tail_tol=6e-7) == 3
    assert numerical_rank(P, tail_tol=4e-7) == 4
    Psi = embedding_from_psd(P, tail_tol=1e-6)
    v = np.random.default_rng(2).standard_normal((100, 5))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    lost = np.einsum("ij,jk,ik->i", v, P, v) - np.sum((v @ Psi.T) ** 2, axis=1)
    assert np.all(lost >= -1e-12) and np.all(lost <= 1e-6)


def test_factor_bad_input():
    with pytest.raises(ValueError, match="square"):
        embedding_from_psd(np.ones((2, 3)))
    with pytest.raises(ValueError, match="n_components"):
        embedding_from_psd(np.eye(3), n_components=4)
    with pytest.raises(ValueError, match="NaN"):
        numerical_rank(np.full((2, 2), np.nan))


def test_pca_rows_are_orthonormal_and_contractive():
    X = np.random.default_rng(3).standard_normal((30, 6))
    Psi = pca_projection(X, 3)
    np.testing.assert_allclose(Psi @ Psi.T, np.eye(3), atol=1e-12)
    d = secant_distortions(Psi, all_secants(X))
    assert d.max() <= 1e-12  # PCA contracts every secant
    with pytest.raises(ValueError, match="n_components"):
        pca_projection(X, 7)


def test_gaussian_projection_variance_and_seed():
    Psi = gaussian_projection(400, 50, random_state=0)
    assert Psi.var() == pytest.approx(1 / 400, rel=0.05)
    np.testing.assert_array_equal(Psi, gaussian_projection(400, 50, random_state=0))


def test_isometry_constants_of_simple_maps():
    X = np.random.default_rng(4).standard_normal((15, 4))
    V = all_secants(X)
    iso = isometry_constants(np.eye(4), secants=V)
    assert iso.delta == pytest.approx(0.0, abs=1e-12) and iso.n_secants == 105
    iso2 = isometry_constants(np.sqrt(1.2) * np.eye(4), secants=V)
    assert iso2.upper == pytest.approx(0.2) and iso2.lower == pytest.approx(-0.2)
    streamed = isometry_constants(np.diag([1.0, 0.5, 1.1, 0.9]), X=X, block_size=11)
    dense = isometry_constants(np.diag([1.0, 0.5, 1.1, 0.9]), secants=V)
    assert streamed == dense


def test_histogram_and_dimension_search():
    X = np.random.default_rng(5).standard_normal((20, 6))
    V = all_secants(X)
    counts, edges = distortion_histogram(np.eye(6)[:3], V, bins=10)
    assert counts.sum() == len(V) and len(edges) == 11
    M = dimension_for_delta(lambda m: pca_projection(V, m, center=False), V, 0.5)
    assert M is not None and isometry_constants(pca_projection(V, M, center=False), secants=V).delta <= 0.5
    assert isometry_constants(pca_projection(V, M - 1, center=False), secants=V).delta > 0.5 if M > 1 else True


def test_metric_bad_input():
    with pytest.raises(ValueError, match="exactly one"):
        isometry_constants(np.eye(2))
    with pytest.raises(ValueError, match="columns"):
        isometry_constants(np.eye(3), secants=np.eye(2))
    with pytest.raises(ValueError, match="zero rows"):
        secant_distortions(np.eye(2), np.zeros((1, 2)))
