"""The control loop both NuMax ADMMs share: their iterates are pinned, so restructuring the loop
(:mod:`sdpembed.solvers.numax.admm_control`) cannot change them."""

import contextlib
import io

import numpy as np
import pytest

from sdpembed.problems.numax_operator import PairSecantOperator
from sdpembed.secants import pair_count, pairs_from_linear_index
from sdpembed.solvers.numax.admm import box_trace_admm
from sdpembed.solvers.numax.admm_control import ADMMPenalty, ADMMStopping, AndersonMixing
from sdpembed.solvers.numax.admm_pairs import PairNumerics, pair_trace_admm

from ...conftest import digits_points


def _pairs(n, n_pairs, seed=0):
    index = np.sort(np.random.default_rng(seed).choice(pair_count(n), size=n_pairs, replace=False))
    return PairSecantOperator(digits_points(n), *pairs_from_linear_index(index, n))


def _one_sided(op):
    """NuMax-Class bounds: every third pair only from below, the others only from above."""
    below = np.arange(op.n_constraints) % 3 == 0
    return np.where(below, 0.9, -np.inf), np.where(below, np.inf, 1.1)


def _runs():
    """Two small instances per variant, with the adaptive penalty, the check cadence, a warm start,
    a verbose line and (for the pair ADMM) the polish and the mixed-precision switch exercised."""
    two_sided = _pairs(30, 300)
    one_sided = _pairs(36, 400, seed=1)
    lo, hi = _one_sided(one_sided)
    warm = _pairs(60, 400)
    loose = pair_trace_admm(warm, 0.9, 1.1, stopping=ADMMStopping(tol=1e-3, feas_tol=1e-3, gap_tol=1e-3))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        box_verbose = box_trace_admm(two_sided.explicit().V, 0.8, 1.2, penalty=ADMMPenalty(beta=20.0), verbose=50)
        pairs_verbose = pair_trace_admm(two_sided, 0.8, 1.2, penalty=ADMMPenalty(beta=0.05), verbose=50)
    return printed.getvalue(), {
        "box two-sided": box_verbose,
        "box one-sided": box_trace_admm(one_sided.explicit().V, lo, hi, stopping=ADMMStopping(check_every=7)),
        "pairs two-sided": pairs_verbose,
        "pairs warm mixed": pair_trace_admm(warm, 0.9, 1.1, numerics=PairNumerics(least_squares="mixed"),
                                            warm_start=loose.extra["state"]),
    }


#: (iterations, objective, dual bound, last β, number of checks), recorded before the control loop
#: was written once (OPENBLAS_NUM_THREADS=1); the mixed-precision run re-recorded when its single-
#: precision 𝒜𝒜* came to be read off the points' Gram matrix (same iterations and checks, objective
#: 6e-10 relative apart), and again when its lower triangle came from a single-precision syrk of the
#: secants (same iterations and checks, objective 3e-10 and bound 1.6e-9 relative apart), and once more when
#: the polish came to be judged against the bound of multipliers corrected on the range of P and to move the
#: priced values onto their bounds (it ends the run at iteration 34 instead of 66, 6e-7 relative apart)
PINNED = {
    "box two-sided": (322, 10.88763529449554, 10.887540830916816, 1.25, 92),
    "box one-sided": (131, 11.174616876194463, 11.174558768712572, 1.0, 51),
    "pairs two-sided": (226, 10.887635493444858, 10.887634526091862, 0.4, 56),
    "pairs warm mixed": (34, 14.939543208040602, 14.939450642239356, 1.0, 4),
}

#: Relative tolerance of the pinned objective and bound. Double-precision runs repeat to rounding on any
#: processor; the mixed-precision run's single-precision 𝒜𝒜* is rounded differently by its route (ssyrk of
#: the secants or gathers from the points, which least_squares.cosines_by_syrk chooses by size) and by the
#: BLAS kernel of the processor: 7e-10 relative apart between two x86-64 machines, 6e-10 between the two
#: routes, with the same iterations, checks and β. Its values are pinned to 1e-8, below what a change of
#: the loop moves (stopped one or two iterations earlier, its objective differs by 8.9e-8 and 1.4e-6).
PINNED_RTOL = {"pairs warm mixed": 1e-8}


@pytest.fixture(scope="module")
def recorded():
    return _runs()


@pytest.fixture
def runs(recorded):
    return recorded[1]


@pytest.mark.parametrize("name", sorted(PINNED))
def test_iterates_are_pinned(runs, name):
    result = runs[name]
    iterations, objective, bound, beta, checks = PINNED[name]
    assert result.status == "optimal"
    assert result.iterations == iterations
    assert len(result.history["check_iteration"]) == checks
    assert result.history["beta"][-1] == beta
    rtol = PINNED_RTOL.get(name, 1e-12)
    assert result.objective == pytest.approx(objective, rel=rtol)
    assert result.dual_bound == pytest.approx(bound, rel=rtol)


LINE_50 = ("admm it     50  tr P 10.97264312  e1 7.56e-04  e2 4.17e-04  viol 5.81e-03  bound 10.50442328  "
           "gap 4.27e-02  rank   10  beta 1.25")


def test_verbose_lines_are_unchanged(recorded):
    printed = recorded[0].splitlines()
    # each run first says it forms I + AA* (before its first iteration), then prints its checks
    setup = [k for k, line in enumerate(printed) if line.startswith("admm: ")]
    assert setup == [0, 7] and "forming and factorising I + AA*" in printed[0]
    lines = [line for line in printed if line.startswith("admm it ")]
    assert len(lines) == len(printed) - 2
    # at the first check 50 or more iterations after the last line: six lines, then four
    assert [line.split()[2] for line in lines] == [str(k) for k in (50, 100, 150, 200, 250, 300, 50, 100, 150, 200)]
    assert lines[0] == LINE_50


if __name__ == "__main__":
    printed, runs = _runs()
    print(printed)
    for name, result in runs.items():
        print(f"    {name!r}: ({result.iterations}, {result.objective!r}, {result.dual_bound!r}, "
              f"{result.history['beta'][-1]!r}, {len(result.history['check_iteration'])}),  # {result.status}"
              f" betas {sorted(set(result.history['beta']))} {result.extra.get('polished')} "
              f"{result.extra.get('double_precision_from')}")


def _linear_iteration(n=60, seed=0):
    """x ↦ A x + b, A symmetric with eigenvalues in [-0.2, 0.97]: a slow contraction, its fixed point known."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    A = (Q * np.linspace(-0.2, 0.97, n)) @ Q.T
    b = rng.standard_normal(n)
    return (lambda x: A @ x + b), np.linalg.solve(np.eye(n) - A, b)


def _iterate(T, x, mixing, steps):
    """The fixed-point iteration, accelerated by ``mixing`` (or plain with None): the residual norms."""
    norms = []
    for _ in range(steps):
        out = T(x)
        norms.append(np.linalg.norm(out - x))
        if mixing is None:
            x = out
            continue
        if not mixing.record(out, out - x):
            x = mixing.fallback[0]
            continue
        gamma = mixing.weights()
        x = out if gamma is None else mixing.combine(gamma)
    return x, np.array(norms)


def test_anderson_mixing_finds_the_fixed_point_of_a_linear_map_in_far_fewer_steps():
    T, fixed = _linear_iteration()
    x0 = np.zeros(fixed.size)
    plain, plain_norms = _iterate(T, x0, None, 80)
    # plain: the error shrinks like 0.97^k (by ≈ 0.09 in 80 steps); accelerated: by 1e-10 and more
    assert np.linalg.norm(plain - fixed) > 1e-2 * np.linalg.norm(fixed)
    mixed, mixed_norms = _iterate(T, x0, AndersonMixing(10), 80)
    np.testing.assert_allclose(mixed, fixed, rtol=0, atol=1e-10 * np.linalg.norm(fixed))
    # a shorter memory gains less, but still by orders of magnitude
    _, short_norms = _iterate(T, x0, AndersonMixing(3), 80)
    assert mixed_norms[-1] < short_norms[-1] < 1e-3 * plain_norms[-1]


def test_anderson_safeguard_rejects_a_combination_that_raises_the_residual():
    mixing = AndersonMixing(3)
    assert mixing.record(np.array([1.0, 0.0]), np.array([1.0, 0.0]), payload="first")
    assert mixing.weights() is None                       # one point: the plain step
    assert mixing.record(np.array([1.5, 0.0]), np.array([0.5, 0.0]), payload="second")
    gamma = mixing.weights()
    assert gamma is not None and gamma.sum() == pytest.approx(1.0)
    # the residuals 1 and 0.5 on a line: the combination with zero residual, γ = (−1, 2)
    np.testing.assert_allclose(gamma, [-1.0, 2.0])
    np.testing.assert_allclose(mixing.combine(gamma), [2.0, 0.0])
    # T at the extrapolated point turns out worse than at the point it came from (0.5): rejected,
    # the memory cleared, and the run goes on from that point's plain step
    assert not mixing.record(np.array([9.0, 0.0]), np.array([0.0, 0.7]), payload="bad")
    assert mixing.rejected == 1 and mixing.accepted == 0
    np.testing.assert_array_equal(mixing.fallback[0], [1.5, 0.0])
    assert mixing.fallback[1] == "second" and mixing.outputs == [] and mixing.weights() is None
    # an extrapolated point no worse than its reference is kept
    mixing.record(np.array([1.0, 0.0]), np.array([1.0, 0.0]))
    mixing.record(np.array([1.5, 0.0]), np.array([0.5, 0.0]))
    mixing.weights()
    assert mixing.record(np.array([2.0, 0.0]), np.array([0.0, 0.4])) and mixing.accepted == 1


def test_anderson_mixing_bad_input():
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError):
            AndersonMixing(bad)
    with pytest.raises(ValueError):
        AndersonMixing(3, safeguard=-1.0)
    with pytest.raises(ValueError):
        PairNumerics(anderson=-1)
