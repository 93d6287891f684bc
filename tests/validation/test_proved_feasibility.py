"""The oracle's feasibility check of point-form NuMax instances is proved (issue 24): every pair is
within or beyond the tolerance by a worst-case rounding bound, or decided in exact arithmetic.

The references here are brute force in :class:`fractions.Fraction` (every double is a rational), written
apart from :class:`sdpembed.secants.ExactSecantForms`.
"""

from fractions import Fraction

import numpy as np
import pytest

from sdpembed.problems.numax import NuMaxClassInstance, NuMaxInstance
from sdpembed.secants import ExactSecantForms, abs_norm_bound, iter_secant_form_bounds, pairs_from_linear_index
from sdpembed.validation import Tolerances
from sdpembed.validation.verify import verify_solution


def _exact_forms(X, P):
    """vᵀPv of every pair i < j of rows of X, in row-major order, by brute force in rationals (None for
    a pair of identical points)."""
    rows = [[Fraction(float(x)) for x in row] for row in X]
    form = [[Fraction(float(p)) for p in row] for row in P]
    out = []
    for a in range(len(rows)):
        for b in range(a + 1, len(rows)):
            d = [x - y for x, y in zip(rows[a], rows[b], strict=True)]
            num = sum(d[k] * form[k][m] * d[m] for k in range(len(d)) for m in range(len(d)))
            squares = sum(t * t for t in d)
            out.append(num / squares if squares else None)        # None: identical points, no secant
    return out


def _exact_violations(forms, delta, intra=None):
    """(v − 1 − δ, 1 − δ − v)₊-style violations against the exact bounds 1 ∓ δ (one-sided by ``intra``)."""
    delta = Fraction(delta)
    out = []
    for k, v in enumerate(forms):
        if v is None:
            out.append(None)
            continue
        sides = [(1 - delta) - v, v - (1 + delta)]
        if intra is not None:
            sides = [sides[1]] if intra[k] else [sides[0]]
        out.append(max(sides))
    return out


def _points_and_form(seed, n=12, dim=5, offset=300.0):
    """Points far from the origin (their Gram entries dwarf their distances, so the Gram-based ratios
    lose about 1e-12 to cancellation) and an exactly symmetric PSD P."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, dim)) + offset
    A = rng.normal(size=(dim, dim))
    M = A @ A.T / dim
    return X, 0.5 * (M + M.T)


def _exact_row_forms(V, P):
    """vᵀPv of every row v of V as stored (not normalised), by brute force in rationals."""
    rows = [[Fraction(float(x)) for x in row] for row in V]
    form = [[Fraction(float(p)) for p in row] for row in P]
    return [sum(r[k] * form[k][m] * r[m] for k in range(len(r)) for m in range(len(r))) for r in rows]


def _secant_instance(seed, n=12, dim=6, delta=0.1):
    """A secant-form NuMax instance (rows unit to rounding, not exactly) and an exactly symmetric PSD P."""
    rng = np.random.default_rng(seed)
    V = rng.normal(size=(n, dim))
    A = rng.normal(size=(dim, dim))
    M = A @ A.T / dim
    return NuMaxInstance(delta=delta, secants=V / np.linalg.norm(V, axis=1)[:, None]), 0.5 * (M + M.T)


def _disagreeing(computed_below: bool, secants: bool = False):
    """An instance whose worst computed violation (``max_violation``, what verify judged a secant-form
    instance by before) lies below (or above) its exact one by more than ``margin`` doubles, with the
    computed and exact worst violations: of all pairs of points, or of stored secant rows."""
    margin = 1 if secants else 2
    for seed in range(60):
        if secants:
            instance, P = _secant_instance(seed)
            forms = _exact_row_forms(instance.secants, P)
        else:
            X, P = _points_and_form(seed)
            instance, forms = NuMaxInstance(delta=0.1, X=X), _exact_forms(X, P)
        computed = instance.max_violation(P)
        exact = max(_exact_violations(forms, 0.1))
        gap = Fraction(computed) - exact
        ulp = Fraction(float(np.spacing(computed)))
        if (gap < -margin * ulp) if computed_below else (gap > margin * ulp):
            return instance, P, computed, exact
    raise AssertionError("no instance of the kind asked among 60 seeds")


@pytest.mark.parametrize("secants", [False, True])
def test_computed_satisfied_but_exactly_violated_fails_verify(secants):
    """The computed worst violation is at most the tolerance, the exact one exceeds it: the old check
    (computed violation > tolerance) passed P, of a point-form instance before session 19 and of a
    secant-form one until now; the proved one fails it, deciding the pair or row exactly."""
    instance, P, computed, exact = _disagreeing(computed_below=True, secants=secants)
    tol = computed                                  # computed ≤ tol < exact
    assert Fraction(computed) <= Fraction(tol) < exact
    check = instance.check_violation(P, tol)
    assert check.exceeds and check.exact >= 1
    assert check.lower <= exact <= check.upper
    cert = verify_solution(instance, P, optimum=float(np.trace(P)), tolerances=Tolerances(feasibility=tol))
    assert not cert.passed and any("constraint violation" in r for r in cert.reasons), cert.reasons
    assert cert.violation_error == check.error and cert.violation_error < 1e-9


@pytest.mark.parametrize("secants", [False, True])
def test_computed_violated_but_exactly_satisfied_passes_verify(secants):
    """The reverse: the computed worst violation exceeds the tolerance, the exact one does not."""
    instance, P, computed, exact = _disagreeing(computed_below=False, secants=secants)
    tol = float(np.nextafter(computed, -np.inf))
    while Fraction(float(np.nextafter(tol, -np.inf))) >= exact:
        tol = float(np.nextafter(tol, -np.inf))
    assert exact <= Fraction(tol) < Fraction(computed)   # exact ≤ tol < computed
    check = instance.check_violation(P, tol)
    assert not check.exceeds and check.exact >= 1 and check.violated == 0
    assert check.lower <= exact <= check.upper
    cert = verify_solution(instance, P, optimum=float(np.trace(P)), tolerances=Tolerances(feasibility=tol))
    assert cert.passed, cert.reasons


@pytest.mark.parametrize("tol", [0.0, 1e-6, 0.05, 0.3])
def test_check_brackets_the_exact_worst_violation_and_decides_every_pair(tol):
    """Against brute force: lower ≤ exact worst ≤ upper, the verdict and the count of pairs beyond the
    tolerance are the exact ones, also with a near-duplicate pair (computed from its difference),
    a duplicate (dropped) and a P that is not symmetric (its form is that of (P + Pᵀ)/2)."""
    X, P = _points_and_form(7, n=14)
    X[3] = X[2] + 1e-9 * np.arange(5)
    X[9] = X[8]
    P = P + np.triu(np.full(P.shape, 1e-3), 1)
    instance = NuMaxInstance(delta=0.2, X=X)
    with pytest.warns(UserWarning, match="zero secant"):
        check = instance.check_violation(P, tol, block_size=17)
    exact = [v for v in _exact_violations(_exact_forms(X, P), 0.2) if v is not None]
    worst = max(max(exact), Fraction(0))
    assert check.lower <= worst <= check.upper and check.error < 1e-9
    assert check.exceeds == (worst > Fraction(tol))
    beyond = sum(v > Fraction(tol) for v in exact)
    # pairs within their bound of tol are decided exactly until one is beyond it (then the verdict is proved)
    assert check.violated <= beyond <= check.violated + check.undecided and check.pairs == len(exact) == 90
    assert check.undecided == 0 or check.exceeds


def test_one_sided_bounds_of_numax_class_are_checked_exactly():
    X, P = _points_and_form(11, n=10)
    y = np.array([0, 0, 1, 1, 2, 2, 0, 1, 2, 0])
    instance = NuMaxClassInstance(delta=0.15, X=X, y=y)
    i, j = np.triu_indices(10, 1)
    exact = _exact_violations(_exact_forms(X, P), 0.15, intra=y[i] == y[j])
    worst = max(max(exact), Fraction(0))
    for tol in (0.0, float(worst), float(np.nextafter(float(worst), -np.inf))):
        check = instance.check_violation(P, tol)
        assert check.lower <= worst <= check.upper and check.exceeds == (worst > Fraction(tol))


def test_the_check_in_ranges_merges_to_the_whole():
    X, P = _points_and_form(3, n=30)
    instance = NuMaxInstance(delta=0.1, X=X)
    whole = instance.check_violation(P, 0.01)
    parts = [instance.check_violation(P, 0.01, pairs=(a, min(a + 100, 435))) for a in range(0, 435, 100)]
    merged = type(whole).merge(parts, 0.01)
    assert merged == whole


def test_a_range_of_pairs_needs_the_point_form():
    with pytest.raises(ValueError, match="point-form"):
        NuMaxInstance(delta=0.1, secants=np.eye(3)).check_violation(np.eye(3), pairs=(0, 2))


def _index(i, j, n):
    return i * n - i * (i + 1) // 2 + (j - i - 1)


@pytest.mark.parametrize("scale", [1e-170, 1.0, 1e160])
def test_form_bounds_hold_against_exact_arithmetic(scale):
    """Every pair's rounding bounds (Gram-based, or from its difference for near duplicates and
    squares beyond the range of doubles) contain its exact ratio, at every scale."""
    X, P = _points_and_form(5, n=16, dim=6, offset=40.0)
    X[4] = X[1] + 1e-7
    X = X * scale
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        blocks = list(iter_secant_form_bounds(X, P, 37))
    i, j = (np.concatenate([getattr(b, name) for b in blocks]) for name in ("i", "j"))
    np.testing.assert_array_equal(np.stack([i, j]), np.stack(pairs_from_linear_index(np.arange(120), 16)))
    exact = _exact_forms(X, P)
    assert ExactSecantForms(X, P)(i, j) == exact
    for b in blocks:
        k = np.arange(b.i.size)
        err = (b.num_err + np.abs(b.values) * b.den_err) / (b.den - b.den_err)
        assert np.all(b.den > b.den_err)
        for m in k:
            assert abs(Fraction(float(b.values[m])) - exact[_index(b.i[m], b.j[m], 16)]) <= Fraction(float(err[m]))


def test_exact_forms_of_subnormal_and_huge_doubles():
    """Integers over common powers of two hold any doubles exactly, from subnormals to 1e300."""
    X = np.array([[5e-324, 1e300, 0.0], [0.0, -1e300, 3.0], [1.5, 2.0**-1074 * 7, -1e-310]])
    P = np.array([[2.0, 1e-300, 0.0], [1e-300, 3e-5, 5e-324], [0.0, 5e-324, 1.0]])
    i, j = np.array([0, 0, 1]), np.array([1, 2, 2])
    assert ExactSecantForms(X, P)(i, j) == [_exact_forms(X, P)[k] for k in range(3)]


@pytest.mark.parametrize("name", ["numax-squares6-points", "numax-squares5", "numax_class-shapes6"])
def test_the_suite_records_the_proved_error_of_a_numax_violation(name, tmp_path):
    """``suite run`` grades through ``verify``: a NuMax-family entry's record carries the proved bound on
    its violation's error, point form or secant form (NaN for a secant-form entry before: its violation
    was a computed value)."""
    from sdpembed.validation.suite import load_suite
    from sdpembed.validation.suite.runner import grade_solution

    entry = next(entry for entry in load_suite().entries if entry.name == name)
    instance = entry.load()
    P = np.eye(instance.dim) * 1.05                     # violates δ = 0.1 nowhere: every ratio is 1.05
    path = tmp_path / "solution.npz"
    np.savez(path, P=P)
    record = grade_solution(entry, path, Tolerances(objective=1e9), instance)
    assert record.passed, record.reasons
    assert record.max_violation == 0.0
    assert 0.0 <= record.violation_error < 1e-12


@pytest.mark.parametrize("delta", [0.1, 0.2])
def test_a_scaled_identity_at_the_bound_is_judged_by_its_exact_ratios(delta):
    """P = fl(1 + δ)·I gives every secant the ratio fl(1 + δ) exactly, a few 1e-17 above (δ = 0.1) or
    below (δ = 0.2) the exact bound 1 + δ; the Gram-based ratios are off by about 1e-16, every pair is
    within its rounding bound of tol = 0, and exact arithmetic decides: FAIL for 0.1 (after the first
    pairs, the others left undecided), PASS for 0.2 (every pair decided exactly). The old check
    failed both (computed violation 4.4e-16 > 0)."""
    X = np.random.default_rng(0).integers(-5, 6, size=(10, 4)).astype(float)
    instance = NuMaxInstance(delta=delta, X=X)
    P = (1.0 + delta) * np.eye(4)
    exact = Fraction(1.0 + delta) - (1 + Fraction(delta))
    assert (exact > 0) == (delta == 0.1)
    check = instance.check_violation(P, 0.0)
    assert check.exceeds == (exact > 0) and check.lower <= max(exact, Fraction(0)) <= check.upper
    if exact > 0:
        assert 1 <= check.exact < 45 and check.exact + check.undecided == 45 and check.lower == float(exact)
    else:
        assert check.exact == 45 and check.undecided == 0 and check.upper == check.lower == check.value == 0.0
    cert = verify_solution(instance, P, optimum=4.0 * (1.0 + delta), tolerances=Tolerances(feasibility=0.0))
    assert cert.passed == (exact <= 0), cert.reasons


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_tolerance_at_a_pair_s_exact_violation_gets_the_exact_verdict(seed):
    """Tolerances placed on the doubles just below, at and just above the exact violations of pairs
    (where the block screen and the pairs' own bounds leave the verdict open): the verdict is always
    that of the exact worst violation, which the bounds bracket."""
    X, P = _points_and_form(seed, n=12, dim=5, offset=30.0)
    instance = NuMaxInstance(delta=0.3, X=X)
    exact = _exact_violations(_exact_forms(X, P), 0.3)
    worst = max(max(exact), Fraction(0))
    top = sorted(exact, reverse=True)[:4]
    for v in top:
        near = float(v)
        for tol in (float(np.nextafter(near, -np.inf)), near, float(np.nextafter(near, np.inf))):
            if tol < 0:
                continue
            check = instance.check_violation(P, tol, block_size=20)
            assert check.exceeds == (worst > Fraction(tol)), (seed, tol)
            assert check.lower <= worst <= check.upper


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_form_is_refused_not_proved(bad):
    """P = I with a NaN (or inf) entry coupling a coordinate every point has zero: the Gram-based
    ratios are all NaN, so every pair went to the exact recomputation, which read the entry as a
    finite integer (frexp of NaN) and 'proved' every ratio exactly 1: PASS at tol 0. A non-finite P
    has no exact quadratic form; both the check and the exact forms refuse it."""
    X = np.hstack([np.random.default_rng(0).normal(size=(6, 3)), np.zeros((6, 1))])
    P = np.eye(4)
    P[0, 3] = P[3, 0] = bad
    with pytest.raises(ValueError, match="finite"):
        NuMaxInstance(delta=0.1, X=X).check_violation(P, 0.0)
    with pytest.raises(ValueError, match="finite"):
        ExactSecantForms(X, P)(np.array([0]), np.array([1]))


@pytest.mark.parametrize("scale", [1e-170, 1e-200, 2.0**-1000])
def test_abs_norm_bound_holds_when_the_squares_underflow(scale):
    """‖|P|‖₂ of s·I (exactly s) and of s·11ᵀ (n = 3: exactly 3s) at scales whose squares underflow to 0:
    the Frobenius bound computed from those squares was 0, below the norm it bounds."""
    assert abs_norm_bound(scale * np.eye(4)) >= scale
    assert abs_norm_bound(scale * np.ones((3, 3))) >= 3.0 * scale


def test_an_exact_violation_beyond_the_doubles_is_bracketed():
    """P = 1.7e308·11ᵀ is finite, but its exact forms on secants of positive points exceed the largest double
    (up to 3·1.7e308): float() of the exact violation raised OverflowError. Now the violation is bracketed by
    the largest double and inf, and P is proved to exceed the tolerance."""
    X = np.abs(np.random.default_rng(0).normal(size=(5, 3)))
    P = np.full((3, 3), 1.7e308)
    with np.errstate(over="ignore", invalid="ignore"):
        check = NuMaxInstance(delta=0.1, X=X).check_violation(P, 0.0)
    assert check.exceeds and check.lower == np.finfo(np.float64).max and check.upper == np.inf


# ---------------------------------------------------------------- secant form: the stored rows, exactly


@pytest.mark.parametrize("tol", [0.0, 1e-6, 0.05, 0.3])
def test_secant_form_check_brackets_the_exact_worst_violation(tol):
    """Against brute force on the stored rows (vᵀPv, the rows not exactly unit): lower ≤ exact worst ≤
    upper and the exact verdict, with a P that is not symmetric (its form is that of (P + Pᵀ)/2), in
    blocks smaller than the list."""
    instance, P = _secant_instance(4, n=40)
    P = P + np.triu(np.full(P.shape, 1e-3), 1)
    exact = _exact_violations(_exact_row_forms(instance.secants, P), 0.1)
    worst = max(max(exact), Fraction(0))
    check = instance.check_violation(P, tol, block_size=7)
    assert check.lower <= worst <= check.upper and check.error < 1e-12
    assert check.exceeds == (worst > Fraction(tol)) and check.pairs == 40
    beyond = sum(v > Fraction(tol) for v in exact)
    assert check.violated <= beyond <= check.violated + check.undecided


def test_secant_form_of_numax_class_is_one_sided_and_exact():
    rng = np.random.default_rng(8)
    inter, intra = rng.normal(size=(9, 5)), rng.normal(size=(7, 5))
    instance = NuMaxClassInstance(delta=0.15, inter=inter / np.linalg.norm(inter, axis=1)[:, None],
                                  intra=intra / np.linalg.norm(intra, axis=1)[:, None])
    A = rng.normal(size=(5, 5))
    P = A @ A.T / 5
    P = 0.5 * (P + P.T)
    exact = (_exact_violations(_exact_row_forms(instance.inter, P), 0.15, intra=[False] * 9)
             + _exact_violations(_exact_row_forms(instance.intra, P), 0.15, intra=[True] * 7))
    worst = max(max(exact), Fraction(0))
    for tol in (0.0, float(worst), float(np.nextafter(float(worst), -np.inf))):
        check = instance.check_violation(P, tol)
        assert check.lower <= worst <= check.upper and check.exceeds == (worst > Fraction(tol))
        assert check.pairs == 16


@pytest.mark.parametrize("delta", [0.1, 0.2])
def test_a_scaled_identity_on_stored_secants_is_judged_on_the_rows_as_stored(delta):
    """P = c·I on rows that are unit only to rounding: vᵀPv = c‖v‖² exactly. With c = fl(1 + δ) some rows
    lie a few 1e-16 beyond 1 + δ (FAIL at tol 0); with c the largest double such that c·max‖v‖² ≤ 1 + δ
    exactly, every row is within it (PASS), though the computed forms of the longest rows lie within
    their rounding of the bound and are decided exactly — the SDP (4) as 𝒜 states it on the instance's
    rows, not on v/‖v‖."""
    instance, _ = _secant_instance(2, n=30, dim=7, delta=delta)
    longest = max(_exact_row_forms(instance.secants, np.eye(7)))
    c = float((1 + Fraction(delta)) / longest)
    while Fraction(c) * longest > 1 + Fraction(delta):
        c = float(np.nextafter(c, 0.0))
    for scale in (1.0 + delta, c):
        P = scale * np.eye(7)
        exact = _exact_violations(_exact_row_forms(instance.secants, P), delta)
        worst = max(max(exact), Fraction(0))
        check = instance.check_violation(P, 0.0)
        assert check.exceeds == (worst > 0) == (scale != c) and check.lower <= worst <= check.upper
        assert check.exact >= 1
        cert = verify_solution(instance, P, optimum=7.0 * scale, tolerances=Tolerances(feasibility=0.0))
        assert cert.passed == (worst <= 0), cert.reasons


@pytest.mark.parametrize("scale", [1e-300, 1.0, 1e300])
def test_row_form_bounds_hold_against_exact_arithmetic(scale):
    """Every stored row's form and its rounding bound contain the exact form, at scales of P where the
    products underflow or nearly overflow."""
    from sdpembed.secants import iter_row_form_bounds

    instance, P = _secant_instance(6, n=20)
    P = P * scale
    exact = _exact_row_forms(instance.secants, P)
    assert ExactSecantForms(instance.secants, P).of_rows(np.arange(20)) == exact
    for rows, values, errors in iter_row_form_bounds(instance.secants, P, 6):
        for k, value, error in zip(rows, values, errors, strict=True):
            assert abs(Fraction(float(value)) - exact[k]) <= Fraction(float(error))


def test_an_overflowing_form_of_stored_secants_is_decided_exactly():
    """P = 1.7e308·11ᵀ on positive rows: the computed forms overflow (inf), so every row was a NaN
    violation, which the computed check (NaN > tol is false) passed; each is now decided exactly."""
    V = np.abs(np.random.default_rng(0).normal(size=(5, 3)))
    instance = NuMaxInstance(delta=0.1, secants=V / np.linalg.norm(V, axis=1)[:, None])
    P = np.full((3, 3), 1.7e308)
    with np.errstate(over="ignore", invalid="ignore"):
        check = instance.check_violation(P, 0.0)
    assert check.exceeds and check.lower == np.finfo(np.float64).max and check.upper == np.inf


@pytest.mark.parametrize("form", ["secants", "points"])
def test_forms_beyond_the_doubles_are_not_all_recomputed_once_the_verdict_is_proved(form):
    """P = 1.7e308·I: every form overflows, so no secant has a rounding bound. Every one was recomputed in
    exact arithmetic (O(N²) integer operations each: hours for all pairs of 800 MNIST images); once the
    first exact ones prove the verdict, only a budget more are, and the worst violation is bracketed by
    [the largest exact one, inf]."""
    rng = np.random.default_rng(3)
    if form == "secants":
        V = rng.normal(size=(400, 6))
        instance = NuMaxInstance(delta=0.1, secants=V / np.linalg.norm(V, axis=1)[:, None])
    else:
        instance = NuMaxInstance(delta=0.1, X=rng.normal(size=(40, 6)))
    P = 1.7e308 * np.eye(6)
    with np.errstate(over="ignore", invalid="ignore"):
        check = instance.check_violation(P, 1e-5)
    assert check.exceeds and check.upper == np.inf and check.lower > 1e307
    assert check.exact <= 8 + 64 < check.exact + check.undecided <= check.pairs
