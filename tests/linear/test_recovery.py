"""Manifold Iterative Pursuit (sdpembed.linear.recovery) against brute force over the manifold."""

import numpy as np
import pytest

from sdpembed.linear import SampledManifold, gaussian_projection, manifold_iterative_pursuit


def _blobs(image_size: int, sigma: float, centres: np.ndarray) -> np.ndarray:
    """Gaussian blobs at arbitrary (row, col) centres, written here independently of sdpembed.datasets."""
    grid = np.arange(image_size, dtype=float)
    rr, cc = np.meshgrid(grid, grid, indexing="ij")
    d2 = (rr.ravel() - centres[:, :1]) ** 2 + (cc.ravel() - centres[:, 1:]) ** 2
    return np.exp(-d2 / (2.0 * sigma**2))


def _half_pixel_manifold(image_size: int = 12, sigma: float = 2.0):
    steps = np.arange(0.0, image_size - 0.5 + 1e-9, 0.5)
    centres = np.stack(np.meshgrid(steps, steps, indexing="ij"), axis=-1).reshape(-1, 2)
    return centres, _blobs(image_size, sigma, centres)


def test_noiseless_measurements_recover_the_translation_found_by_brute_force():
    centres, samples = _half_pixel_manifold()
    rng = np.random.default_rng(0)
    truth = rng.choice(len(samples), size=40, replace=False)
    Phi = gaussian_projection(24, samples.shape[1], random_state=1)          # M = 24 of N = 144
    y = samples[truth] @ Phi.T
    # the independent answer: the sample whose measurements are nearest to y (maximum likelihood)
    brute = np.argmin(((y[:, None, :] - (samples @ Phi.T)[None, :, :]) ** 2).sum(axis=2), axis=1)
    np.testing.assert_array_equal(brute, truth)
    manifold = SampledManifold(samples)
    X, n_iter = manifold_iterative_pursuit(Phi, y, manifold)
    np.testing.assert_array_equal(centres[manifold.nearest(X)], centres[truth])
    np.testing.assert_allclose(X, samples[truth])
    assert 1 <= n_iter < 100


def test_with_full_measurements_mip_is_the_projection_of_the_noisy_signal():
    # Φ = I: x + (y − x) = y, so every iterate is the sample nearest to y
    centres, samples = _half_pixel_manifold()
    rng = np.random.default_rng(2)
    y = samples[rng.choice(len(samples), size=30)] + 0.3 * rng.standard_normal((30, samples.shape[1]))
    X, n_iter = manifold_iterative_pursuit(np.eye(samples.shape[1]), y, SampledManifold(samples))
    nearest = np.argmin(((y[:, None, :] - samples[None, :, :]) ** 2).sum(axis=2), axis=1)
    np.testing.assert_array_equal(X, samples[nearest])
    assert n_iter == 2                                      # the first step reaches the fixed point, the second sees it


def test_max_iter_bounds_the_iterations_and_the_inputs_are_checked():
    _, samples = _half_pixel_manifold(8, 1.5)
    Phi = gaussian_projection(10, samples.shape[1], random_state=3)
    y = samples[:5] @ Phi.T
    X, n_iter = manifold_iterative_pursuit(Phi, y, SampledManifold(samples), max_iter=1)
    assert X.shape == (5, samples.shape[1]) and n_iter == 1
    with pytest.raises(ValueError, match="y"):
        manifold_iterative_pursuit(Phi, y[:, :3], SampledManifold(samples))
    with pytest.raises(ValueError, match="step"):
        manifold_iterative_pursuit(Phi, y, SampledManifold(samples), step=0.0)
