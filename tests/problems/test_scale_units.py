"""The power-of-two helpers of ``sdpembed.problems.base`` that solvers and the oracle divide by exactly."""

import numpy as np
import pytest

from sdpembed.problems.base import exact_scale_exponent, power_of_two_below


@pytest.mark.parametrize("value", [1.0, 3.0, 0.75, 2.0**-1070, 1.7e308, 5e-324])
def test_the_power_of_two_below_a_value_brackets_it(value):
    unit = power_of_two_below(value)
    assert unit <= value < 2.0 * unit and np.frexp(unit)[0] == 0.5
    assert power_of_two_below(0.0) == power_of_two_below(-2.0) == 1.0


def test_the_scale_exponent_brings_the_largest_entry_into_one_half_to_one_exactly():
    rng = np.random.default_rng(0)
    for exponent in (-900, -200, -70, 70, 300, 1000):
        X = np.ldexp(rng.standard_normal((6, 3)), exponent)
        shift = exact_scale_exponent(X, 64)
        scaled = np.ldexp(X, -shift)
        assert 0.5 <= np.abs(scaled).max() < 1.0
        assert np.array_equal(np.ldexp(scaled, shift), X)            # exact both ways


def test_data_near_unit_scale_zero_or_not_finite_are_not_scaled():
    assert exact_scale_exponent(np.array([[2.0**60, -3.0]]), 64) == 0
    assert exact_scale_exponent(np.array([[2.0**-60, 0.0]]), 64) == 0
    assert exact_scale_exponent(np.zeros((3, 2)), 64) == 0
    assert exact_scale_exponent(np.array([[np.inf, 2.0**100]]), 64) == 0


def test_a_scaling_that_would_make_an_entry_subnormal_is_refused():
    # the largest entry 2^200 would move to 2^-1, the least 2^-900 to 2^-1101: below the normal range, inexact
    X = np.array([[2.0**200, 2.0**-900]])
    assert exact_scale_exponent(X, 64) == 0
    assert exact_scale_exponent(np.array([[2.0**200, 2.0**-800]]), 64) == 201
