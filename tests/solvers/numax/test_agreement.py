"""Agreement: the hand-written ADMM against the CVXPY ground truth, and Clarabel against SCS.

Acceptance of the Foundation issue: on translating squares N = 49 and N = 256, a digits
subset and random Gaussian points, the ADMM objective is within 1e-4 relative of the CVXPY
optimum, its worst violation ≤ 1e-5, its least eigenvalue ≥ −1e-8, and Clarabel and SCS
agree to 1e-4. The N = 256 Clarabel optimum is stored (tests/data/make_golden.py).
"""

import numpy as np
import pytest

from sdpembed import solve

NAMES = ["squares49", "digits", "gaussian"]


def _rel(a, b):
    return abs(a - b) / abs(b)


@pytest.mark.parametrize("name", NAMES)
def test_admm_matches_cvxpy(solved, name):
    admm, truth = solved[name]["admm"], solved[name]["clarabel"]
    assert truth.status == "optimal"
    assert admm.status == "optimal"
    assert _rel(admm.objective, truth.objective) <= 1e-4
    assert admm.max_violation <= 1e-5
    assert admm.min_eigenvalue >= -1e-8


@pytest.mark.parametrize("name", NAMES)
def test_clarabel_and_scs_agree(solved, name):
    clarabel, scs = solved[name]["clarabel"], solved[name]["scs"]
    assert scs.status == "optimal"
    assert _rel(scs.objective, clarabel.objective) <= 1e-4


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("method", ["admm", "clarabel", "scs"])
def test_certified_bounds_are_bounds(solved, name, method):
    """Every dual bound lies below the (Clarabel-certified) optimum and below its own objective."""
    result, optimum = solved[name][method], solved[name]["clarabel"].objective
    assert result.certified
    assert result.dual_bound <= optimum * (1 + 1e-9)
    assert result.relative_gap <= 1e-4
    assert result.dual_bound <= result.objective + 1e-9


def test_golden_n256_admm_and_scs(golden):
    """Squares 16×16 / 8×8, 1000 secants, δ = 0.1 (the benchmark instance), N = 256."""
    instance, meta = golden
    assert instance.dim == 256 and instance.n_constraints == 1000
    optimum = meta["optimum"]
    assert meta["status"] == "optimal" and meta["solver"] == "CLARABEL"
    assert meta["dual_bound"] <= optimum and _rel(meta["dual_bound"], optimum) <= 1e-6
    admm = solve(instance, "admm")
    assert admm.status == "optimal"
    assert _rel(admm.objective, optimum) <= 1e-4
    assert admm.max_violation <= 1e-5 and admm.min_eigenvalue >= -1e-8
    assert admm.dual_bound <= optimum * (1 + 1e-9)
    scs = solve(instance, "cvxpy", solver="SCS", eps_abs=1e-6, eps_rel=1e-6)
    assert scs.status == "optimal"
    assert _rel(scs.objective, optimum) <= 1e-4


def test_span_reduction_changes_nothing(instances):
    """Solving in the secant span (the default) and in Rᴺ give the same optimum."""
    instance = instances["squares49"]
    reduced = solve(instance, "admm")
    full = solve(instance, "admm", reduce=False)
    assert reduced.extra["reduced_dim"] < instance.dim
    assert full.extra["reduced_dim"] == instance.dim
    assert _rel(reduced.objective, full.objective) <= 1e-5
    literal = solve(instance, "cvxpy", solver="SCS", reduce=False, eps_abs=1e-7, eps_rel=1e-7)
    assert _rel(reduced.objective, literal.objective) <= 1e-5


def test_point_form_equals_all_pairs(instances):
    from sdpembed import NuMaxInstance
    from sdpembed.datasets import translating_squares

    X = translating_squares(7, 3)
    points = solve(NuMaxInstance(delta=0.1, X=X), "admm")
    assert _rel(points.objective, solve(instances["squares49"], "admm").objective) <= 1e-6


def test_embedding_from_the_solution_is_near_isometric(solved, instances):
    from sdpembed.linear import embedding_from_psd
    from sdpembed.validation import isometry_constants

    instance = instances["digits"]
    result = solved["digits"]["admm"]
    Psi = embedding_from_psd(result.solution)
    assert Psi.shape[0] == result.extra["rank"]
    iso = isometry_constants(Psi, secants=instance.secant_matrix)
    assert iso.delta <= instance.delta + 2e-5
    assert np.isclose(iso.delta, instance.delta, atol=1e-4)  # the constraints are active
