"""Secant sets (NuMax eq. (1)): all pairs, samples, blocks, and bad input."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdpembed.secants import (
    all_secants,
    iter_secant_blocks,
    iter_secant_quadratic_forms,
    pair_count,
    pairs_from_linear_index,
    sample_secants,
)


@given(st.integers(2, 400), st.data())
def test_linear_index_to_pair_is_the_upper_triangle(n, data):
    k = np.array(data.draw(st.lists(st.integers(0, pair_count(n) - 1), min_size=1, max_size=20)))
    i, j = pairs_from_linear_index(k, n)
    ti, tj = np.triu_indices(n, k=1)
    np.testing.assert_array_equal(i, ti[k])
    np.testing.assert_array_equal(j, tj[k])


def test_linear_index_at_large_n_is_exact():
    n = 60_000  # 1.8e9 pairs, the full MNIST training set of NuMax Table 2
    k = np.array([0, n - 2, n - 1, pair_count(n) // 2, pair_count(n) - 1])
    i, j = pairs_from_linear_index(k, n)
    start = i * n - i * (i + 1) // 2
    np.testing.assert_array_equal(start + (j - i - 1), k)
    assert np.all(i < j) and j.max() < n


def test_all_secants_are_unit_and_ordered():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 4))
    V, pairs = all_secants(X, return_pairs=True)
    assert V.shape == (15, 4)
    np.testing.assert_allclose(np.linalg.norm(V, axis=1), 1.0)
    i, j = pairs[3]
    np.testing.assert_allclose(V[3], (X[i] - X[j]) / np.linalg.norm(X[i] - X[j]))


@pytest.mark.parametrize("scale", [2.0**-500, 2.0**-1000, 1.0, 2.0**500])
def test_secants_are_unit_at_every_scale(scale):
    """Secants of points whose differences' squares underflow (review r23 fuzz: points at 2^-500 with pairs 1e-9
    apart gave rows of norm 0.99997 and NuMaxInstance.from_data refused its own secants) are the secants of the
    points at unit scale: a power-of-two scaling changes neither a difference nor its direction."""
    rng = np.random.default_rng(5)
    base = rng.standard_normal((6, 3))
    X = np.vstack([base, base + 1e-9 * rng.standard_normal((6, 3))])
    V = all_secants(X)
    with np.errstate(under="ignore"):
        scaled = all_secants(X * scale)
    np.testing.assert_array_equal(scaled, V)
    np.testing.assert_allclose(np.linalg.norm(V, axis=1), 1.0, rtol=1e-15)


def test_blocks_reproduce_all_secants():
    X = np.random.default_rng(1).standard_normal((23, 3))
    blocks = list(iter_secant_blocks(X, block_size=17))
    assert max(len(b[0]) for b in blocks) <= 17
    np.testing.assert_allclose(np.vstack([b[1] for b in blocks]), all_secants(X))
    np.testing.assert_array_equal(np.vstack([b[0] for b in blocks]), all_secants(X, return_pairs=True)[1])


def test_sample_is_seeded_distinct_and_a_subset():
    X = np.random.default_rng(2).standard_normal((40, 5))
    V1, p1 = sample_secants(X, 100, random_state=7, return_pairs=True)
    V2, _ = sample_secants(X, 100, random_state=7, return_pairs=True)
    np.testing.assert_array_equal(V1, V2)
    assert len({tuple(p) for p in p1}) == 100
    assert not np.array_equal(V1, sample_secants(X, 100, random_state=8))
    # asking for more than all pairs gives all pairs
    assert sample_secants(X, 10_000).shape[0] == pair_count(40)


def test_duplicates_are_dropped_with_a_warning():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 0.0]])
    with pytest.warns(UserWarning, match="1 zero secant"):
        V = all_secants(X)
    assert V.shape == (2, 2)
    with pytest.warns(UserWarning, match="zero secant"):
        blocks = list(iter_secant_blocks(X, block_size=2))
    assert sum(len(b[1]) for b in blocks) == 2


def test_no_warning_without_duplicates():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        all_secants(np.eye(3))


@pytest.mark.parametrize(
    "X, message",
    [
        (np.array([[np.nan, 1.0], [0.0, 0.0]]), "NaN or infinite"),
        (np.array([[np.inf, 1.0], [0.0, 0.0]]), "NaN or infinite"),
        (np.ones(5), "2-D array"),
        (np.ones((1, 3)), "at least 2 row"),
        ([["a", "b"], ["c", "d"]], "numeric"),
    ],
)
def test_bad_points_are_rejected(X, message):
    with pytest.raises(ValueError, match=message):
        all_secants(X)
    with pytest.raises(ValueError, match=message):
        sample_secants(X, 3)
    with pytest.raises(ValueError, match=message):
        next(iter_secant_blocks(X))


def test_bad_counts_are_rejected():
    X = np.eye(3)
    with pytest.raises(ValueError, match="n_secants"):
        sample_secants(X, 0)
    with pytest.raises(ValueError, match="block_size"):
        next(iter_secant_blocks(X, block_size=0))
    with pytest.raises(ValueError, match="random_state"):
        sample_secants(X, 2, random_state="seed")
    with pytest.raises(ValueError, match="index must lie"):
        pairs_from_linear_index(np.array([3]), 3)


def test_linear_index_of_pairs_inverts_pairs_from_linear_index():
    from sdpembed.secants import linear_index_of_pairs, pair_count, pairs_from_linear_index

    index = np.arange(pair_count(9))
    i, j = pairs_from_linear_index(index, 9)
    np.testing.assert_array_equal(linear_index_of_pairs(i, j, 9), index)


@pytest.mark.parametrize("pairs", [None, (100, 20000), (44000, 44850)])
def test_secant_quadratic_forms_equal_those_of_the_secants(pairs):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 20)) * 3.0 + 5.0          # offset: the Gram entries dwarf the distances
    X[10] = X[11]                                       # a duplicate: its zero secant is dropped
    X[20] = X[21] + 1e-7 * rng.normal(size=20)          # a near duplicate: computed from its difference
    A = rng.normal(size=(20, 20))
    P = A @ A.T
    with warnings.catch_warnings(record=True) as warned_direct:
        warnings.simplefilter("always")
        direct = [np.einsum("ij,ij->i", V @ P, V) for _, V in iter_secant_blocks(X, 997, pairs=pairs)]
    with warnings.catch_warnings(record=True) as warned_forms:
        warnings.simplefilter("always")
        forms = list(iter_secant_quadratic_forms(X, P, 997, pairs=pairs))
    assert [str(w.message) for w in warned_forms] == [str(w.message) for w in warned_direct]
    assert bool(warned_forms) == (pairs != (44000, 44850))      # the duplicate's pair is in the first two ranges
    assert [len(b) for b in forms] == [len(b) for b in direct]
    direct, forms = np.concatenate(direct), np.concatenate(forms)
    np.testing.assert_allclose(forms, direct, rtol=1e-12)


def test_secant_quadratic_forms_refuse_a_matrix_of_the_wrong_shape():
    with pytest.raises(ValueError, match="shape"):
        next(iter_secant_quadratic_forms(np.eye(4), np.eye(3)))


@pytest.mark.parametrize("scale", [1e-170, 1.0, 1e160])
def test_point_form_max_violation_on_points_whose_squares_under_or_overflow(scale):
    """The feasibility check of a point-form NuMax instance (``sdpembed verify``): squared norms of points
    of norm 1e-170 underflow to 0 and those of norm 1e160 overflow, and every pair was dropped as a zero
    secant, the check reporting 0 for a P that violates δ by 0.49. The quadratic forms are the secants'
    at every scale (power-of-two scaled differences)."""
    from sdpembed.problems.numax import NuMaxInstance

    base = np.random.default_rng(3).standard_normal((12, 3))
    P = np.diag([1.69, 1.0, 0.49])
    V, _ = all_secants(base, return_pairs=True)
    reference = float(np.max(np.abs(np.einsum("ij,ij->i", V @ P, V) - 1.0)) - 0.2)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")          # no pair is a zero secant
        forms = np.concatenate(list(iter_secant_quadratic_forms(base * scale, P)))
        violation = NuMaxInstance(delta=0.2, X=base * scale).max_violation(P)
    assert forms.size == pair_count(12)
    np.testing.assert_allclose(forms, np.einsum("ij,ij->i", V @ P, V), rtol=1e-13)
    assert violation == pytest.approx(reference, abs=1e-13) and reference > 0.48


def test_gamma_is_higham_s_constant_in_the_precision_asked():
    """γ_n = nu/(1 − nu) with u = 2^-53 for doubles and 2^-24 for singles, inf once nu ≥ 1."""
    from fractions import Fraction

    from sdpembed.secants import gamma

    for n, dtype, u in ((1, np.float64, Fraction(1, 2**53)), (4096, np.float64, Fraction(1, 2**53)),
                        (784, np.float32, Fraction(1, 2**24))):
        assert gamma(n, dtype) == pytest.approx(float(n * u / (1 - n * u)), rel=1e-15)
    assert gamma(2**24, np.float32) == np.inf
    assert gamma(100, np.float32) > 1e8 * gamma(100)


def test_gram_distance_error_bounds_float32_distances():
    """The bound in float32 holds for distances computed in float32 (the rounding of the precision the
    products are actually computed in), against exact rational arithmetic."""
    from fractions import Fraction

    from sdpembed.secants import gram_distance_error

    rng = np.random.default_rng(3)
    X = (1e3 + rng.standard_normal((6, 2048))).astype(np.float32)
    norms2 = np.einsum("ij,ij->i", X, X)
    gram = X @ X.T
    for i in range(6):
        for j in range(i + 1, 6):
            computed = (norms2[i] + norms2[j]) - np.float32(2.0) * gram[i, j]
            exact = sum((Fraction(float(a)) - Fraction(float(b))) ** 2 for a, b in zip(X[i], X[j], strict=True))
            assert abs(Fraction(float(computed)) - exact) <= gram_distance_error(
                float(norms2[i]), float(norms2[j]), X.shape[1], np.float32)
