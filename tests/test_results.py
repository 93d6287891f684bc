"""`build_result`: the gap, relative gap and least eigenvalue every solve reports the same way."""

import math
import time

import numpy as np
import pytest

from sdpembed.results import build_result, least_eigenvalue, relative_gap

OPTIONS = dict(status="optimal", message="", method="m", solver="s", max_violation=0.0)


def test_gap_follows_the_sense():
    K = np.diag([2.0, 1.0])
    low = build_result("numax", "P", K, 3.0, 2.5, start=time.perf_counter(), **OPTIONS)
    assert (low.gap, low.relative_gap) == (3.0 - 2.5, relative_gap(3.0, 2.5))
    high = build_result("mvu", "K", K, 3.0, 3.5, sense="max", start=time.perf_counter(), **OPTIONS)
    assert (high.gap, high.relative_gap) == (3.5 - 3.0, relative_gap(3.5, 3.0))
    assert low.min_eigenvalue == high.min_eigenvalue == 1.0
    assert low.wall_time >= 0.0 and low.history == {} and low.extra == {}
    with pytest.raises(ValueError, match="sense"):
        build_result("numax", "P", K, 3.0, 2.5, sense="maximize", start=0.0, **OPTIONS)


def test_a_given_nan_relative_gap_means_no_gap():
    result = build_result("mvu", "K", np.eye(2), 1.0, math.inf, sense="max", rgap=float("nan"), start=0.0,
                          **OPTIONS)
    assert math.isnan(result.gap) and math.isnan(result.relative_gap)


def test_least_eigenvalue_of_a_stack_and_a_given_one():
    stack = np.stack([np.diag([1.0, 2.0]), np.diag([-0.5, 3.0])])
    assert least_eigenvalue(stack) == -0.5
    result = build_result("lmnn_multi", "M", stack, 1.0, 1.0, min_eigenvalue=0.0, start=0.0, **OPTIONS)
    assert result.min_eigenvalue == 0.0 and result.gap == 0.0 and result.relative_gap == 0.0


def test_a_gap_scale_measures_gaps_below_it_absolutely():
    # an optimum of 0 (LMNN on separable classes) leaves the gap relative to itself at 1 however small it is
    assert relative_gap(2e-7, 0.0) == 1.0
    assert relative_gap(2e-7, 0.0, 0.5) == pytest.approx(4e-7, rel=1e-12)
    assert relative_gap(30.0, 27.0, 0.5) == relative_gap(30.0, 27.0) == pytest.approx(0.1)   # above it: relative
    result = build_result("lmnn", "M", np.eye(2), 2e-7, 0.0, gap_scale=0.5, start=0.0, **OPTIONS)
    assert result.gap == 2e-7 and result.relative_gap == pytest.approx(4e-7, rel=1e-12)
    low = build_result("mvu", "K", np.eye(2), 1e-7, 3e-7, sense="max", gap_scale=0.5, start=0.0, **OPTIONS)
    assert low.relative_gap == pytest.approx(4e-7, rel=1e-12)
