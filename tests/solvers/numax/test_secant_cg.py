"""NuMax-CG over an explicit secant list (the SDPs (4) and (7) above the ADMM's limit): its scan,
agreement with CVXPY and with the point form, and the proof it writes."""

import numpy as np
import pytest

from sdpembed import NuMaxClassInstance, NuMaxInstance, solve
from sdpembed.datasets import gaussian_points
from sdpembed.registry import get_problem
from sdpembed.secants import all_secants
from sdpembed.solvers.numax.candidates import SecantCandidates, factor_with_margin
from sdpembed.solvers.numax.column_generation import secant_column_generation, solve_numax_cg


def _digits(n, seed):
    """``n`` sklearn digits (scaled to [0, 1]) and their labels, a seeded subset."""
    from sklearn.datasets import load_digits

    data = load_digits()
    chosen = np.sort(np.random.default_rng(seed).choice(len(data.target), size=n, replace=False))
    return data.data[chosen] / 16.0, data.target[chosen]


def _unit_rows(S, N, seed):
    V = np.random.default_rng(seed).standard_normal((S, N))
    return V / np.linalg.norm(V, axis=1, keepdims=True)


@pytest.mark.parametrize("block_size", [1, 37, 65536])
@pytest.mark.parametrize("one_sided", [False, True])
def test_secant_scan_finds_exactly_the_dense_violators(block_size, one_sided):
    rng = np.random.default_rng(0)
    V = _unit_rows(500, 7, 1)
    B = rng.standard_normal((7, 3))
    P = B @ B.T / 2                                                   # rank 3: the factor drops 4 eigenvalues
    if one_sided:
        intra = rng.random(500) < 0.5
        lo, hi = np.where(intra, -np.inf, 0.8), np.where(intra, 1.2, np.inf)
    else:
        lo, hi = np.full(500, 0.8), np.full(500, 1.2)
    values = np.einsum("ij,ij->i", V @ P, V)
    violation = np.maximum(lo - values, values - hi)
    scan = SecantCandidates(V, lo, hi, block_size).scan(P, None, 1e-9, True)
    assert set(scan.index.tolist()) == set(np.flatnonzero(violation > 1e-9).tolist()) and scan.index.size > 20
    np.testing.assert_allclose(scan.violation, violation[scan.index], rtol=0, atol=1e-12)
    assert np.all(scan.violation >= violation[scan.index])            # the margin makes it an upper bound
    assert violation.max() <= scan.worst <= violation.max() + 1e-12
    # a given factor Ψ (ΨᵀΨ = P) gives the same violators
    again = SecantCandidates(V, lo, hi, block_size).scan(None, factor_with_margin(P)[0], 1e-9, True)
    np.testing.assert_array_equal(again.index, scan.index)


def test_factor_margin_covers_what_the_factor_drops():
    """A P with a negative eigenvalue and one below the eigen-solver's resolution: ‖Ψv‖² is within the
    margin of vᵀPv for every unit v (the scan adds the margin, so its violations are upper bounds)."""
    rng = np.random.default_rng(2)
    Q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    P = (Q * np.array([3.0, 1.0, 0.5, 1e-17, -1e-9, 0.0])) @ Q.T
    Psi, margin = factor_with_margin(P)
    assert Psi.shape == (3, 6) and 1e-9 <= margin <= 1e-9 + 1e-13
    V = _unit_rows(2000, 6, 3)
    exact = np.einsum("ij,ij->i", V @ P, V)
    assert np.max(np.abs(exact - np.einsum("ij,ij->i", V @ Psi.T, V @ Psi.T))) <= margin


def _check_against(instance, cg, truth):
    """``cg`` is optimal at ``truth``'s optimum, feasible for every listed secant, and its file proof
    (one multiplier per secant) proves a bound within the reported gap."""
    assert cg.method == "cg" and cg.status == "optimal" and truth.status == "optimal"
    assert abs(cg.objective - truth.objective) <= 1e-4 * truth.objective
    assert cg.max_violation <= 1e-6 and instance.max_violation(cg.solution) <= 1e-6
    assert cg.dual_bound <= truth.objective * (1 + 1e-9) and cg.relative_gap <= 1e-5
    spec = get_problem(instance.problem)
    arrays = spec.dual_from_result(instance, cg)
    assert set(arrays) == {"dual_y"} and arrays["dual_y"].shape == (instance.n_constraints,)
    assert np.count_nonzero(arrays["dual_y"]) <= len(cg.extra["secants"]) < instance.n_constraints
    proven = spec.verified_bound(instance, arrays, None)
    assert proven <= truth.objective * (1 + 1e-9)
    assert cg.objective - proven <= 1e-5 * cg.objective


@pytest.mark.parametrize("seed", [0, 1])
def test_numax_secant_cg_matches_cvxpy(seed):
    X = gaussian_points(60, 8, random_state=seed)
    instance = NuMaxInstance.from_points(X, 0.25, n_secants=1500, random_state=seed)
    cg = solve(instance, "cg", initial_pairs=60, max_add=100, random_state=0)
    assert cg.extra["rounds"] >= 3                                    # the scans added secants
    _check_against(instance, cg, solve(instance, "cvxpy"))


def test_numax_class_secant_cg_matches_cvxpy():
    X = gaussian_points(60, 8, random_state=1)
    y = np.random.default_rng(1).integers(0, 3, 60)
    instance = NuMaxClassInstance.from_labelled(X, y, 0.2, n_inter=1000, n_intra=500, random_state=0)
    cg = solve(instance, "cg", initial_pairs=80, max_add=100, random_state=0)
    assert cg.extra["rounds"] >= 3
    _check_against(instance, cg, solve(instance, "cvxpy"))


@pytest.mark.parametrize("problem", ["numax", "numax_class"])
def test_secant_cg_reaches_the_point_form_optimum(problem):
    """The same secants, listed or meant by the points: both column generations certify the same optimum."""
    X, y = _digits(50, seed=4)
    if problem == "numax":
        points, listed = NuMaxInstance(delta=0.2, X=X), NuMaxInstance.from_points(X, 0.2)
    else:
        points, listed = NuMaxClassInstance(delta=0.2, X=X, y=y), NuMaxClassInstance.from_labelled(X, y, 0.2)
    assert listed.n_constraints == points.n_constraints == len(all_secants(X))
    by_points = solve(points, "cg", random_state=0)
    by_secants = solve(listed, "cg", initial_pairs=100, random_state=0)
    assert by_points.status == by_secants.status == "optimal"
    assert abs(by_points.objective - by_secants.objective) <= 2e-5 * by_points.objective
    # each proof bounds the other's objective from below
    assert by_secants.dual_bound <= by_points.objective * (1 + 1e-9)
    assert by_points.dual_bound <= by_secants.objective * (1 + 1e-9)


def test_secant_cg_above_the_admm_limit_is_the_default():
    """Above the ADMM's S × S limit the ADMM refuses a secant list, and the registry's default is column
    generation, which solves it; below, the default stays the ADMM."""
    V = _unit_rows(20_001, 5, 4)
    big = NuMaxInstance(delta=0.2, secants=V)
    spec = get_problem("numax")
    assert spec.default_method(big) == "cg"
    assert spec.default_method(NuMaxInstance(delta=0.2, secants=V[:20_000])) == "admm"
    assert get_problem("numax_class").default_method(
        NuMaxClassInstance(delta=0.2, inter=V[:10_001], intra=V[10_001:])) == "cg"
    with pytest.raises(ValueError, match="more than max_constraints=20000"):
        solve(big, "admm")
    result = solve(big, random_state=0)
    assert result.method == "cg" and result.status == "optimal" and big.max_violation(result.solution) <= 1e-6
    proven = spec.verified_bound(big, spec.dual_from_result(big, result), None)
    assert result.objective - proven <= 1e-5 * result.objective


def test_secant_cg_bad_input():
    V = _unit_rows(50, 4, 5)
    with pytest.raises(ValueError, match="initial_secants"):
        secant_column_generation(V, 0.9, 1.1, initial_secants=0)
    with pytest.raises(ValueError, match="block_size"):
        secant_column_generation(V, 0.9, 1.1, block_size=0)
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        secant_column_generation(V, 1.1, 0.9)
    with pytest.raises(ValueError, match="scan_backend of column generation apply to the pairs"):
        solve_numax_cg(NuMaxInstance(delta=0.1, secants=V), scan_backend="local")
