"""Facial reduction for the equality MVU SDP: the clique stress and its face against frameworks whose
answer is known (a universally rigid complete graph, a flexible cycle), proved bounds that are bounds
(the oracle's own proof accepts the multipliers as they are), and agreement with CVXPY where the SDP
has an interior (no stress: the interior point runs)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sdpembed.datasets import swiss_roll
from sdpembed.problems import MVUInstance
from sdpembed.problems.mvu import dual_bound, verified_dual_bound
from sdpembed.solvers.mvu.facial import (
    clique_stress,
    face_of_stress,
    independent_rows,
    neighbourhood_cliques,
    solve_mvu_facial,
)
from sdpembed.solvers.mvu.ipm import solve_mvu_ipm

from .conftest import certified_truth


def _complete(X: np.ndarray) -> MVUInstance:
    i, j = np.triu_indices(len(X), 1)
    return MVUInstance(np.column_stack([i, j]), np.sum((X[i] - X[j]) ** 2, axis=1), len(X))


def _points(n: int, d: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d))


def test_the_stress_of_a_complete_graph_is_the_projector_off_its_affine_span() -> None:
    # K_n in general position in R^d is universally rigid: its PSD stress of rank n − d − 1 is the
    # projector onto the complement of span(1, X), computed here independently of classical scaling
    X = _points(8, 2, 0)
    inst = _complete(X)
    omega, stressed = clique_stress(inst.n, inst.edges, inst.sqdist)
    assert stressed == 1
    A = np.column_stack([np.ones(8), X])
    expected = np.eye(8) - A @ np.linalg.pinv(A)
    np.testing.assert_allclose(-omega, expected[inst.edges[:, 0], inst.edges[:, 1]], atol=1e-10)
    face = face_of_stress(inst.n, inst.edges, omega)
    assert face.dim == 2
    Xc = X - X.mean(axis=0)
    # the face is span(X_c): projecting X_c onto it changes nothing
    np.testing.assert_allclose(face.V @ (face.V.T @ Xc), Xc, atol=1e-10)


def test_a_universally_rigid_framework_is_reported_locked_at_its_input_with_a_proved_bound() -> None:
    X = _points(10, 3, 1)
    inst = _complete(X)
    res = solve_mvu_facial(inst)
    Xc = X - X.mean(axis=0)
    K0 = Xc @ Xc.T                                   # the unique feasible point
    np.testing.assert_allclose(res.solution, K0, atol=1e-9 * np.abs(K0).max())
    assert res.extra["determined"] and res.extra["face_dim"] == 3 and res.extra["stress_rank"] == 6
    assert "locked up" in res.message
    assert res.status == "optimal", res.message
    assert res.dual_bound >= np.trace(K0) - 1e-9 * np.trace(K0)
    # the oracle proves the same bound from the multipliers as they are, nothing repaired
    proved = verified_dual_bound(inst, {"dual_y": res.extra["y"]})
    assert proved == pytest.approx(res.dual_bound, rel=1e-12)


def test_a_flexible_cycle_has_no_stress_and_is_not_called_locked() -> None:
    # a hexagon's cycle: triangles of three affinely independent points at most, no PSD stress
    t = np.linspace(0, 2 * np.pi, 6, endpoint=False)
    X = np.column_stack([np.cos(t), np.sin(t)])
    n = 6
    edges = np.column_stack([np.arange(n), (np.arange(n) + 1) % n])
    inst = MVUInstance(edges, np.sum((X[edges[:, 0]] - X[edges[:, 1]]) ** 2, axis=1), n)
    res = solve_mvu_facial(inst)
    assert res.extra["stress_rank"] == 0 and not res.extra["determined"]
    assert "locked up" not in res.message
    assert res.status == "optimal", res.message
    truth = certified_truth(inst)
    assert abs(res.objective - truth.objective) <= 1e-4 * abs(truth.objective)


@pytest.mark.parametrize("seed", [2, 3])
def test_agreement_with_cvxpy_on_the_equality_agreement_instances(seed: int) -> None:
    # the equality instances of tests/solvers/mvu/test_lowrank.py's agreement list
    X, _ = swiss_roll(16, noise=0.1, random_state=seed)
    inst = MVUInstance.from_points(X, 3, "equality", angles=seed % 2 == 0, link=True, random_state=seed)
    truth = certified_truth(inst)
    res = solve_mvu_facial(inst)
    assert res.status == "optimal", res.message
    assert abs(res.objective - truth.objective) <= 1e-4 * abs(truth.objective)
    assert res.dual_bound >= truth.objective - 1e-6 * abs(truth.objective)


def test_a_locked_swiss_roll_gets_a_valid_bound_and_no_false_optimal() -> None:
    X, _ = swiss_roll(60, noise=0.05, random_state=0)
    inst = MVUInstance.from_points(X, 5, "equality")
    res = solve_mvu_facial(inst)
    trace = float(np.sum((X - X.mean(axis=0)) ** 2))
    assert res.extra["determined"] and res.extra["face_dim"] == 3
    assert res.objective == pytest.approx(trace, rel=1e-9)
    # a bound of the input's own trace: above it (valid), and whatever the status, optimal only if proved
    assert res.dual_bound >= trace * (1 - 1e-12)
    assert dual_bound(inst, res.extra["y"])[0] == pytest.approx(res.dual_bound, rel=1e-12)
    assert res.status == "optimal" or res.relative_gap > 1e-6


def test_independent_rows_keep_the_rank_of_the_constraints() -> None:
    X = _points(9, 2, 4)
    inst = _complete(X)
    omega, _ = clique_stress(inst.n, inst.edges, inst.sqdist)
    face = face_of_stress(inst.n, inst.edges, omega)
    Bv = face.V[inst.edges[:, 0]] - face.V[inst.edges[:, 1]]
    rows = independent_rows(Bv)
    full = np.einsum("ea,eb->eab", Bv, Bv).reshape(len(Bv), -1)
    assert rows.size == np.linalg.matrix_rank(full) == 3


def test_cliques_of_angle_edges_cover_every_neighbourhood() -> None:
    X, _ = swiss_roll(40, noise=0.05, random_state=0)
    inst = MVUInstance.from_points(X, 4, "equality")
    cliques = {tuple(c) for c in neighbourhood_cliques(inst.n, inst.edges)}
    adjacency = {(int(a), int(b)) for a, b in inst.edges}
    for c in cliques:
        assert all((a, b) in adjacency for k, a in enumerate(c) for b in c[k + 1:])
    assert all(len(c) >= 5 for c in cliques if len(c) >= 5)


def test_other_variants_are_the_interior_point() -> None:
    X, _ = swiss_roll(16, noise=0.1, random_state=2)
    inst = MVUInstance.from_points(X, 3, "inequality", link=True, random_state=2)
    a, b = solve_mvu_facial(inst), solve_mvu_ipm(inst)
    assert a.objective == b.objective and a.method == b.method == "ipm"


def test_two_unfinished_runs_combine_the_more_feasible_matrix_with_the_smaller_proved_bound() -> None:
    from sdpembed.solvers.mvu.facial import _combine
    X, _ = swiss_roll(16, noise=0.1, random_state=2)
    inst = MVUInstance.from_points(X, 3, "equality", link=True, random_state=2)
    early, later = solve_mvu_ipm(inst, max_iter=3), solve_mvu_ipm(inst, max_iter=8)
    assert later.max_violation < early.max_violation and later.dual_bound < early.dual_bound
    both = _combine(inst, early, later, 1e-6, 1e-6, 0.0)
    assert both.objective == later.objective and both.dual_bound == later.dual_bound
    assert both.status == "inaccurate"
    # the matrix of one run, the proof of the other
    feasible_early = dataclasses.replace(early, max_violation=0.0)
    crossed = _combine(inst, feasible_early, later, 1e-6, 1e-6, 0.0)
    assert crossed.objective == early.objective and crossed.dual_bound == later.dual_bound
    assert np.array_equal(crossed.extra["y"], later.extra["y"]) and np.array_equal(crossed.solution, early.solution)


def test_a_locked_roll_with_a_weak_stress_is_certified_by_the_extended_precision_proof() -> None:
    # the benchmark's roll at n = 200 (noise 0.05, k = 5, angle edges): locked at its input, but the stress
    # is weak on its complement (λ₊/λ_max ≈ 2e-8), so the lifted multipliers carry t ≈ 8e7 times the stress
    # and tr L(y) ≈ 3e10; the double proof's rounding margin alone was 1.2e-3 of the bound (gap 5.3e-3)
    X, _ = swiss_roll(200, noise=0.05, random_state=0)
    inst = MVUInstance.from_points(X, 5, "equality")
    res = solve_mvu_facial(inst, gap_tol=1e-5)
    trace = float(np.sum((X - X.mean(axis=0)) ** 2))
    assert res.extra["determined"] and res.extra["face_dim"] == 3 and res.extra["stress_min_on_complement"] < 1e-7
    assert res.status == "optimal", res.message
    # the input is feasible: a valid bound is at least its trace, and this one is within 1e-5 of it
    assert trace * (1 - 1e-12) <= res.dual_bound <= trace * (1 + 1e-5)
    assert np.sum(res.extra["y"]) > 1e9                 # the lifted stress: beyond the double proof's reach
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound
