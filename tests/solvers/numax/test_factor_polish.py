"""The Gauss–Newton polish of a low-rank factor back into the box (sdpembed.solvers.numax.factor_polish)."""

import numpy as np
import pytest

from sdpembed.solvers.numax.factor_polish import polish_factor


def _instance(S=40, r=30, k=5, seed=0):
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((S, r))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    F = rng.standard_normal((r, k)) / np.sqrt(r)
    values = np.einsum("ij,ij->i", V @ F, V @ F)
    return rng, V, F, values


def _values(V, F):
    return np.einsum("ij,ij->i", V @ F, V @ F)


def test_violated_values_move_to_their_bounds_and_the_rest_stay():
    rng, V, F, values = _instance()
    lo, hi = values - 0.05, values + 0.05
    lo[:6] = values[:6] + 1e-4 * rng.uniform(1, 3, 6)          # six values below their box by ≈ 1e-4
    hi[6:10] = values[6:10] - 1e-4 * rng.uniform(1, 3, 4)      # four above
    polished = polish_factor(V, F, lo, hi, tol=1e-9)
    assert polished is not None and polished.shape == F.shape
    new = _values(V, polished)
    assert np.max(np.maximum(lo - new, new - hi)) <= 1e-9
    # at their bounds and unchanged to first order: the steps are ≈ 1e-4, their squares ≈ 1e-7
    np.testing.assert_allclose(new[:6], lo[:6], atol=1e-6)
    np.testing.assert_allclose(new[6:10], hi[6:10], atol=1e-6)
    np.testing.assert_allclose(new[10:], values[10:], atol=1e-6)
    # the step is the minimum-norm solution of the linearised equations (up to second order)
    Y = V @ F
    J = 2.0 * np.einsum("ki,kj->kij", V, Y).reshape(len(V), -1)     # row k: d a_k / d F
    step = np.linalg.lstsq(J, np.clip(values, lo, hi) - values, rcond=None)[0].reshape(F.shape)
    assert np.linalg.norm(polished - F - step) <= 1e-3 * np.linalg.norm(step)


def test_feasible_factor_is_returned_as_is():
    _, V, F, values = _instance(seed=1)
    assert polish_factor(V, F, values - 0.1, values + 0.1, tol=1e-9) is F


def test_conflicting_equations_give_none():
    _, V, F, values = _instance(seed=2)
    V = np.vstack([V, V[:1]])                                  # the same secant twice ...
    values = np.append(values, values[0])
    lo, hi = values - 0.05, values + 0.05
    lo[0] = values[0] + 1e-3                                   # ... pushed up by one pair
    hi[-1] = values[0] - 1e-3                                  # and down by the other
    assert polish_factor(V, F, lo, hi, tol=1e-9) is None


def test_one_sided_bounds():
    _, V, F, values = _instance(seed=3)
    lo = np.full(values.size, -np.inf)
    hi = values.copy()
    hi[:3] -= 1e-4
    polished = polish_factor(V, F, lo, hi, tol=1e-9)
    assert polished is not None
    assert np.max(_values(V, polished) - hi) <= 1e-9


@pytest.mark.parametrize("tol", [1e-12, 1e-6])
def test_tolerance_is_met(tol):
    rng, V, F, values = _instance(S=60, r=40, k=6, seed=4)
    lo, hi = values - 0.02, values + 0.02
    lo[::7] = values[::7] + 1e-5
    polished = polish_factor(V, F, lo, hi, tol=tol)
    new = _values(V, polished)
    assert np.max(np.maximum(lo - new, new - hi)) <= tol
