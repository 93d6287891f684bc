"""The Gauss–Newton polish of a low-rank factor back into the box (sdpembed.solvers.numax.factor_polish)."""

import numpy as np
import pytest

from sdpembed.solvers.numax.factor_polish import (
    polish_factor,
    polish_targets,
    polish_with_system,
    polished_objective_estimate,
)


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


def test_bordered_normal_system_solves_the_normal_equations_of_all_rows():
    """A system factorised for the first rows, bordered by the rest, solves J Jᵀ t = b for all of them
    (checked against a dense double-precision solve of 4 (VVᵀ) ∘ (YYᵀ) plus the same ridge)."""
    from sdpembed.solvers.numax.factor_polish import _normal_factor

    rng, V, F, _ = _instance(S=40, r=30, k=5, seed=4)
    Y = V @ F
    first = _normal_factor(V[:33], Y[:33])
    assert first is not None and first.size == 33 and first.border is None
    system = first.bordered(V, Y)
    assert system is not None and system.size == 40 and system.border[1].shape == (7, 7)
    normal = 4.0 * (V @ V.T) * (Y @ Y.T) + first.ridge * np.eye(40)
    b = rng.standard_normal(40)
    expected = np.linalg.solve(normal, b)
    np.testing.assert_allclose(system.solve(b), expected, rtol=0, atol=1e-3 * np.abs(expected).max())
    assert system.bordered(V, Y) is None                     # bordered once only


def test_polish_with_a_reused_system_reaches_the_fresh_polish():
    """A polish of all rows that borders the system of an earlier polish of the first rows at a nearby F
    settles the same violations to the same factor (up to rounding) as a polish that factorises afresh."""
    from sdpembed.solvers.numax.factor_polish import _normal_factor, polish_with_system

    rng, V, F, values = _instance(S=40, r=30, k=5, seed=5)
    lo, hi = values - 0.05, values + 0.05
    lo[:5] = values[:5] + 1e-4 * rng.uniform(1, 3, 5)
    hi[35:] = values[35:] - 1e-4 * rng.uniform(1, 3, 5)       # violated rows among the bordering ones too
    nearby = F + 1e-5 * rng.standard_normal(F.shape)
    earlier = _normal_factor(V[:34], V[:34] @ nearby)
    fresh, fresh_system = polish_with_system(V, F, lo, hi, tol=1e-9)
    reused, system = polish_with_system(V, F, lo, hi, tol=1e-9, system=earlier)
    assert fresh is not None and reused is not None
    assert fresh_system.border is None and system.border is not None and system.factor is earlier.factor
    new = _values(V, reused)
    assert np.max(np.maximum(lo - new, new - hi)) <= 1e-9
    np.testing.assert_allclose(reused, fresh, rtol=0, atol=1e-8)
    # a system of other rows (more of them than V has) is not used: the polish factorises afresh
    again, other = polish_with_system(V[:20], F, lo[:20], hi[:20], tol=1e-9, system=earlier)
    assert other is not earlier and (again is None or np.all(np.isfinite(again)))


@pytest.mark.parametrize("with_cosines", [False, True])
def test_normal_factor_makes_one_square_array_and_factorises_the_normal_matrix(monkeypatch, with_cosines):
    """J Jᵀ = 4 (VVᵀ) ∘ (YYᵀ) is formed in one S × S array, 4·YYᵀ multiplied in by blocks of columns
    (not a second S × S product): the factor's L Lᵀ is the dense double-precision J Jᵀ plus the ridge to
    single-precision rounding, and the traced peak is the S × S array it makes (none, given the cosines)
    and a block (before: one S × S array more)."""
    import tracemalloc

    import sdpembed.solvers.numax.factor_polish as factor_polish

    monkeypatch.setattr(factor_polish, "NORMAL_BLOCK", 200, raising=False)         # several blocks, a ragged last one
    rng, V, F, _ = _instance(S=1100, r=60, k=24, seed=6)
    Y = V @ F
    cosines = (V @ V.T).astype(np.float32).T if with_cosines else None    # Fortran order, as secant_cosines
    tracemalloc.start()
    try:
        system = factor_polish._normal_factor(V, Y, cosines)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert system is not None
    S = V.shape[0]
    assert peak < (0.5 if with_cosines else 1.5) * S * S * 4
    L = np.tril(system.factor.astype(np.float64))
    normal = 4.0 * (V @ V.T) * (Y @ Y.T) + system.ridge * np.eye(S)
    np.testing.assert_allclose(L @ L.T, normal, rtol=0, atol=1e-5 * np.abs(normal).max())


def test_priced_values_within_reach_move_onto_their_bounds():
    """With multipliers, every value within ``reach`` of the bound its multiplier prices is moved onto
    it (complementary slackness), the others only clipped; the estimate of the polished trace is the
    first-order change Σ y_k t_k, checked against the polished factor itself."""
    rng, V, F, values = _instance(seed=5)
    lo, hi = values - 0.05, values + 0.05
    lo[:4] = values[:4] + 1e-4                                  # violated below, priced: onto lo
    lo[4:8] = values[4:8] - 1e-4                                # inside by 1e-4, priced: onto lo
    hi[8:12] = values[8:12] + 2e-4                              # inside by 2e-4, priced: onto hi
    hi[12:14] = values[12:14] - 1e-4                            # violated above, not priced: clipped
    y = np.zeros(values.size)
    y[:8], y[8:12] = rng.uniform(0.5, 1.0, 8), -rng.uniform(0.5, 1.0, 4)
    y[14:16] = 0.3                                              # priced but 0.05 from lo: beyond reach
    targets = polish_targets(values, lo, hi, y, reach=5e-4)
    expected = np.clip(values, lo, hi) - values
    expected[:8], expected[8:12] = lo[:8] - values[:8], hi[8:12] - values[8:12]
    np.testing.assert_allclose(targets, expected, atol=1e-15)
    np.testing.assert_array_equal(polish_targets(values, lo, hi, y, reach=0.0), np.clip(values, lo, hi) - values)
    np.testing.assert_array_equal(polish_targets(values, lo, hi), np.clip(values, lo, hi) - values)

    polished, _ = polish_with_system(V, F, lo, hi, tol=1e-10, multipliers=y, reach=5e-4)
    new = _values(V, polished)
    np.testing.assert_allclose(new[:12], np.where(y[:12] > 0, lo[:12], hi[:12]), atol=1e-10)
    assert np.max(np.maximum(lo - new, new - hi)) <= 1e-10
    np.testing.assert_allclose(new[14:], values[14:], atol=1e-6)     # unpriced or out of reach: kept
    objective = float(np.sum(F * F))
    estimate = polished_objective_estimate(objective, values, lo, hi, y, reach=5e-4)
    assert estimate == pytest.approx(objective + float(y @ expected), rel=1e-15)
    # one-sided: a multiplier of an absent bound prices nothing
    assert np.array_equal(polish_targets(values, np.full(values.size, -np.inf), hi, y, reach=5e-4)[:8],
                          np.zeros(8))
