"""Point-form NuMax and NuMax-Class instances at the scales of the doubles: judged exactly from 1e-300 to the
largest double, refused below (the pair scans' zero-secant test is absolute there)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from sdpembed.io import Solution, solution_arrays
from sdpembed.problems import NuMaxClassInstance, NuMaxInstance
from sdpembed.problems.numax import SMALLEST_POINT_SCALE
from sdpembed.registry import solve
from sdpembed.validation.verify import verify_solution


@cache
def _numax(kind: str):
    """A point-form NuMax (or NuMax-Class) instance of 8 Gaussian points in R⁵ (largest |entry| 1.9), its
    optimal P, and a wrong P of the same trace (P rotated: PSD, violating)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((8, 5))
    X *= 1.9 / np.abs(X).max()
    extra = {"y": np.repeat([0, 1], 4)} if kind == "numax_class" else {}
    cls = NuMaxClassInstance if kind == "numax_class" else NuMaxInstance
    result = solve(cls(delta=0.2, X=X, **extra))
    assert result.status == "optimal"
    Q = np.linalg.qr(rng.standard_normal((5, 5)))[0]
    return cls, X, extra, result, Q @ result.solution @ Q.T


@pytest.mark.parametrize("kind", ["numax", "numax_class"])
def test_point_form_numax_is_judged_exactly_up_to_the_largest_double(kind):
    """The secants do not change with the scale of X: from 2^-990 (just above SMALLEST_POINT_SCALE) to 2^1022
    (differences beyond the largest double) the optimal P passes and a wrong P (rotated, or 0.9 P) fails."""
    cls, X, extra, result, rotated = _numax(kind)
    for e in (-990, -500, 0, 500, 1022):
        instance = cls(delta=0.2, X=np.ldexp(X, e), optimum=result.objective, **extra)
        assert verify_solution(instance, result.solution).passed, e
        assert not verify_solution(instance, rotated).passed, e
        assert not verify_solution(instance, 0.9 * result.solution).passed, e


@pytest.mark.parametrize("kind", ["numax", "numax_class"])
def test_the_bound_proved_from_pair_multipliers_does_not_change_with_the_scale_of_x(kind):
    """verify proves a bound from the pairs' multipliers (dual_pairs, dual_y) on the pairs' unit secants, which do
    not change with the scale of X: the same bound, bit for bit, from 2^-990 to 2^1000, and the optimal P passes on
    that proof alone. The pairs' lengths were squared unscaled: beyond ~2^512 they overflowed (no finite bound, the
    solution failed), below ~2^-512 they underflowed (a ValueError, "zero secant", or rows that are not unit)."""
    cls, X, extra, result, _ = _numax(kind)
    proof = solution_arrays(cls(delta=0.2, X=X, **extra), result)
    multipliers = {key: proof[key] for key in ("dual_pairs", "dual_y")}
    reference = cls(delta=0.2, X=X, **extra).verified_dual_bound(*multipliers.values())
    assert 0.0 < reference <= result.objective
    for e in (-990, -600, -540, 540, 600, 1000):
        instance = cls(delta=0.2, X=np.ldexp(X, e), **extra)
        assert instance.verified_dual_bound(*multipliers.values()) == reference, e
        assert verify_solution(instance, Solution(result.solution, dual_multipliers=multipliers)).passed, e


@pytest.mark.parametrize("kind", ["numax", "numax_class"])
def test_point_form_numax_below_the_pair_scans_scale_is_refused(kind):
    """Below 1e-300 the scans' zero-secant test is absolute: at 2^-1040 every pair was dropped as a zero secant
    and the rotated P, violating every constraint, passed. Such X is refused, naming its scale and the cause."""
    cls, X, extra, _, _ = _numax(kind)
    assert np.abs(np.ldexp(X, -997)).max() >= SMALLEST_POINT_SCALE > np.abs(np.ldexp(X, -998)).max()
    cls(delta=0.2, X=np.ldexp(X, -997), **extra)
    for e in (-998, -1040, -1073):
        with pytest.raises(ValueError, match=r"X is too small .* 2\^-10\d\d|X is too small .* 2\^-99\d"):
            cls(delta=0.2, X=np.ldexp(X, e), **extra)
