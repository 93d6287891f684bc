"""Unit tests of the secant operator 𝒜, its adjoint and the certified dual bound."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdpembed.problems.numax_certificate import certified_lower_bound, check_bounds, dual_objective
from sdpembed.problems.numax_operator import PairSecantOperator, SecantOperator

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


@pytest.mark.parametrize("one_sided", [False, True])
def test_certified_bound_from_perturbed_duals(one_sided):
    """Perturbed CVXPY duals, scaled by the certificate, stay dual feasible and below the optimum."""
    from sdpembed.formulations.numax import solve_box_trace_cvxpy

    rng = np.random.default_rng(5)
    V = rng.standard_normal((40, 6))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    lo, hi = np.full(40, 0.8), np.full(40, 1.2)
    if one_sided:
        lo[:20], hi[20:] = -np.inf, np.inf
    truth = solve_box_trace_cvxpy(V, lo, hi, solver="CLARABEL")
    assert truth.status == "optimal"
    op = SecantOperator(V)
    y_star = truth.extra["y"]
    positive_bounds = 0
    for scale in (0.0, 0.01, 0.1, 1.0):
        y = y_star + scale * rng.standard_normal(40) * np.abs(y_star).max()
        bound, y_feasible = certified_lower_bound(op, lo, hi, y)
        assert bound <= truth.objective * (1 + 1e-9)
        if bound > 0:
            positive_bounds += 1
            assert np.linalg.eigvalsh(np.eye(6) - op.adjoint(y_feasible))[0] >= -1e-10
            assert dual_objective(y_feasible, lo, hi) == pytest.approx(bound)
            assert np.all(y_feasible[~np.isfinite(lo)] <= 0) and np.all(y_feasible[~np.isfinite(hi)] >= 0)
    assert positive_bounds >= 2
    # the unperturbed duals certify the optimum
    assert certified_lower_bound(op, lo, hi, y_star)[0] == pytest.approx(truth.objective, rel=1e-6)


def test_infeasibility_gives_an_unbounded_bound():
    """v = e₁ with v'Pv ≤ −1 is infeasible for P ⪰ 0: y = −1 has g > 0 and 𝒜*(y) ⪯ 0, so the
    bound is limited only by the rounding margin."""
    op = SecantOperator(np.eye(2)[:1])
    bound, _ = certified_lower_bound(op, np.array([-np.inf]), np.array([-1.0]), np.array([-1.0]))
    assert bound > 1e12


def test_check_bounds():
    lo, hi = check_bounds(0.9, [1.1, np.inf], 2)
    assert lo.tolist() == [0.9, 0.9] and hi[1] == np.inf
    for bad, message in (((np.nan, 1.0), "NaN"), ((0.9, [1.0, 1.0, 1.0]), "length 2"),
                         ((1.2, 1.1), "exceed"), ((np.inf, np.inf), "infeasible")):
        with pytest.raises(ValueError, match=message):
            check_bounds(*bad, 2)


def test_trivial_bound_for_useless_multipliers():
    op = SecantOperator(np.eye(3))
    lo, hi = np.full(3, 0.9), np.full(3, 1.1)
    assert certified_lower_bound(op, lo, hi, -np.ones(3))[0] == 0.0


def test_operator_rejects_non_matrix():
    with pytest.raises(ValueError, match="secants must be a 2-D array"):
        SecantOperator(np.ones(4))


@pytest.mark.parametrize("with_basis", [False, True])
def test_pair_operator_equals_the_explicit_secants(with_basis):
    """The point-structured 𝒜 and 𝒜* (Laplacian form) equal the row-by-row ones, also in a basis."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 9)) + 50.0          # far from the origin: cancellation is handled
    i = rng.integers(0, 40, 300)
    j = (i + rng.integers(1, 40, 300)) % 40
    keep = np.unique(np.column_stack([np.minimum(i, j), np.maximum(i, j)]), axis=0)
    i, j = keep[:, 0], keep[:, 1]
    D = X[i] - X[j]
    reference = SecantOperator(D / np.linalg.norm(D, axis=1, keepdims=True))
    op = PairSecantOperator(X, i, j)
    if with_basis:
        Q, _ = np.linalg.qr(rng.standard_normal((9, 6)))
        op, reference = op.in_basis(Q), reference.in_basis(Q)
    n = op.dim
    A = rng.standard_normal((n, n))
    A = A + A.T
    y = rng.standard_normal(i.size)
    np.testing.assert_allclose(op.apply(A), reference.apply(A), atol=1e-11)
    np.testing.assert_allclose(op.adjoint(y), reference.adjoint(y), atol=1e-10)
    np.testing.assert_array_equal(op.explicit().V, op.V)
    assert type(op.explicit()) is SecantOperator


def test_pair_operator_forms_its_secant_rows_only_when_read():
    """The (S, N) rows are made when first read, in blocks of lengths first: the same rows and
    lengths as the differences of the whole array, and the sizes known without them."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((60, 7)) + 20.0
    i = rng.integers(0, 60, 1500)
    j = (i + rng.integers(1, 60, 1500)) % 60
    op = PairSecantOperator(X, i, j)
    assert op.n_constraints == 1500 and op.dim == 7 and "V" not in op.__dict__
    centred = X[op.rows] - X[op.rows].mean(axis=0)
    D = centred[op.i] - centred[op.j]
    norms = np.linalg.norm(D, axis=1)
    np.testing.assert_array_equal(op.norms, norms)                  # blocks of NORM_BLOCK pairs, same lengths
    np.testing.assert_array_equal(op.V, D / norms[:, None])
    assert op.V is op.V and op.V.shape == (1500, 7)


def test_pair_operator_on_other_coordinates_forms_its_rows_when_read():
    """``with_points`` (the pairs in a basis of their span) and ``unit_secants`` make the rows ``V`` would
    hold, bit for bit, without forming the (S, r) array until it is read."""
    rng = np.random.default_rng(6)
    X = rng.standard_normal((60, 7)) + 20.0
    i = rng.integers(0, 60, 1500)
    j = (i + rng.integers(1, 60, 1500)) % 60
    op = PairSecantOperator(X, i, j)
    basis = np.linalg.qr(rng.standard_normal((7, 7)))[0]
    reduced = op.in_basis(basis)
    assert "V" not in reduced.__dict__
    points = op.points @ basis
    eager = (points[op.i] - points[op.j]) / op.norms[:, None]
    index = rng.choice(1500, 64, replace=False)
    for rows, expected in ((slice(1400, None), eager[1400:]), (index, eager[index])):
        np.testing.assert_array_equal(reduced.unit_secants(rows), expected)
    assert "V" not in reduced.__dict__
    np.testing.assert_array_equal(reduced.V, eager)
    np.testing.assert_array_equal(reduced.unit_secants(index), eager[index])


def test_pair_operator_rejects_coincident_points():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 0.0]])
    with pytest.raises(ValueError, match="distinct points"):
        PairSecantOperator(X, np.array([0, 1]), np.array([1, 2]))


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e5])
def test_adjoint_by_two_syrk_is_within_the_certificate_rounding_margin(scale):
    """The certificate's 𝒜*(y) (by two syrk on √|y|-scaled rows) against exact rational
    arithmetic: every error within γ_{S+4}·Σ|y_i||v_ia||v_ib| entrywise, the bound the
    certificate's margin 4·S·ε·Σ|y_i|‖v_i‖² covers, and the matrix symmetric."""
    from fractions import Fraction

    from sdpembed.problems.numax_certificate import _adjoint_by_syrk

    rng = np.random.default_rng(7)
    S, N = 40, 5
    V = rng.standard_normal((S, N))
    y = scale * rng.standard_normal(S) * rng.uniform(0.0, 3.0, S) ** 3
    y[::7] = 0.0
    computed = _adjoint_by_syrk(V, y)
    assert np.array_equal(computed, computed.T)
    u = np.finfo(float).eps / 2
    gamma = (S + 4) * u / (1 - (S + 4) * u)
    for a in range(N):
        for b in range(N):
            exact = sum(Fraction(y[i]) * Fraction(V[i, a]) * Fraction(V[i, b]) for i in range(S))
            magnitude = sum(abs(Fraction(y[i]) * Fraction(V[i, a]) * Fraction(V[i, b])) for i in range(S))
            assert abs(Fraction(computed[a, b]) - exact) <= gamma * magnitude
    margin = 4 * S * np.finfo(float).eps * float(np.abs(y) @ np.einsum("ij,ij->i", V, V))
    exact_full = (V.T * y) @ V
    assert np.linalg.norm(computed - exact_full, 2) < margin
