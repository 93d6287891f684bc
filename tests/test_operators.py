"""Unit tests of the secant operator 𝒜, its adjoint and the certified dual bound."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdpembed.operators import SecantOperator, certified_lower_bound, dual_objective

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 8).flatmap(
        lambda n: st.tuples(
            arrays(np.float64, st.tuples(st.integers(1, 12), st.just(n)), elements=finite),
            arrays(np.float64, (n, n), elements=finite),
        )
    ),
    st.data(),
)
def test_adjoint_identity(pair, data):
    """⟨𝒜(X), y⟩ = ⟨X, 𝒜*(y)⟩ for symmetric X (property test)."""
    V, X = pair
    X = X + X.T
    y = data.draw(arrays(np.float64, (V.shape[0],), elements=finite))
    op = SecantOperator(V)
    lhs = op.apply(X) @ y
    rhs = np.sum(X * op.adjoint(y))
    scale = 1 + np.abs(V).max() ** 2 * np.abs(X).sum() * np.abs(y).sum()
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-9 * scale)


def test_apply_matches_definition_and_gram():
    rng = np.random.default_rng(0)
    V = rng.standard_normal((7, 5))
    X = rng.standard_normal((5, 5))
    X = X + X.T
    op = SecantOperator(V)
    np.testing.assert_allclose(op.apply(X), [v @ X @ v for v in V])
    # 𝒜𝒜* as a matrix: column j is 𝒜(v_j v_jᵀ)
    expected = np.column_stack([op.apply(np.outer(v, v)) for v in V])
    np.testing.assert_allclose(op.gram_squared(), expected)


def test_dual_objective_signs_and_absent_bounds():
    lo = np.array([0.9, 0.9, -np.inf])
    hi = np.array([1.1, np.inf, 1.1])
    # y>0 prices lo, y<0 prices hi; multipliers on absent bounds are dropped
    assert dual_objective(np.array([1.0, 0.0, 0.0]), lo, hi) == pytest.approx(0.9)
    assert dual_objective(np.array([-1.0, 0.0, 0.0]), lo, hi) == pytest.approx(-1.1)
    assert dual_objective(np.array([0.0, -5.0, 2.0]), lo, hi) == pytest.approx(0.0)


def test_certified_bound_is_feasible_and_below_optimum(instances, solved):
    instance = instances["gaussian"]
    op = SecantOperator(instance.secant_matrix)
    lo, hi = instance.bounds()
    rng = np.random.default_rng(3)
    optimum = solved["gaussian"]["clarabel"].objective
    for _ in range(5):
        bound, y = certified_lower_bound(op, lo, hi, rng.standard_normal(len(lo)))
        assert bound <= optimum + 1e-9
        if bound > 0:
            assert np.linalg.eigvalsh(np.eye(op.dim) - op.adjoint(y))[0] >= -1e-10
            assert dual_objective(y, lo, hi) == pytest.approx(bound)


def test_trivial_bound_for_useless_multipliers():
    op = SecantOperator(np.eye(3))
    lo, hi = np.full(3, 0.9), np.full(3, 1.1)
    assert certified_lower_bound(op, lo, hi, -np.ones(3))[0] == 0.0


def test_operator_rejects_non_matrix():
    with pytest.raises(ValueError, match="secants must be a 2-D array"):
        SecantOperator(np.ones(4))
