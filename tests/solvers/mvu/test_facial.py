"""Facial reduction for the equality MVU SDP: the clique stress and its face against frameworks whose
answer is known (a universally rigid complete graph, a flexible cycle), proved bounds that are bounds
(the oracle's own proof accepts the multipliers as they are), and agreement with CVXPY where the SDP
has an interior (no stress: the interior point runs)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from sdpembed.datasets import swiss_roll
from sdpembed.problems import MVUInstance
from sdpembed.problems import mvu as mvu_problem
from sdpembed.problems.mvu import dual_bound, verified_dual_bound
from sdpembed.solvers.mvu.facial import (
    clique_stress,
    equilibrate,
    face_of_stress,
    face_stress,
    independent_rows,
    neighbourhood_cliques,
    polish_in_face,
    solve_mvu_facial,
)
from sdpembed.solvers.mvu.ipm import solve_in_face, solve_mvu_ipm

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


@pytest.mark.parametrize("seed", [1, 2, 3, 5])
def test_agreement_with_cvxpy_on_the_min_trace_agreement_instances(seed: int) -> None:
    # the min_trace instances of tests/solvers/mvu/test_lowrank.py's agreement list (seeds 1, 3, 5: no stress, the
    # interior point over 1⊥) and seed 2's graph, whose clique stress leaves a face of dimension 13 (the interior
    # point over the face, its reduced multipliers lifted with the trace weight c = −1)
    X, _ = swiss_roll(16, noise=0.1, random_state=seed)
    inst = MVUInstance.from_points(X, 3, "min_trace", angles=seed % 2 == 0, link=True, random_state=seed)
    truth = certified_truth(inst)
    res = solve_mvu_facial(inst)
    assert res.method == "facial" and res.status == "optimal", res.message
    assert abs(res.objective - truth.objective) <= 1e-4 * abs(truth.objective)
    assert res.dual_bound >= truth.objective - 1e-6 * abs(truth.objective)
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == pytest.approx(res.dual_bound, rel=1e-12)
    if seed == 2:
        assert res.extra["face_dims"] == [13]


@pytest.mark.parametrize("n,seed", [(24, 1), (30, 0)])
def test_a_locked_min_trace_roll_is_certified_at_its_input(n: int, seed: int) -> None:
    # locked at its input (the edges determine K in the clique face): the one feasible K is the input's Gram
    # matrix, the least trace too; the multipliers y_R with VᵀL(y_R)V = −I lifted by the stress prove it. Clarabel
    # ends inaccurate on these, SCS certifies; before, facial reduction handed min_trace to the interior point
    X, _ = swiss_roll(n, noise=0.05, random_state=seed)
    inst = MVUInstance.from_points(X, 5, "min_trace")
    truth = certified_truth(inst)
    res = solve_mvu_facial(inst)
    trace = float(np.sum((X - X.mean(axis=0)) ** 2))
    assert res.method == "facial" and res.extra["determined"] and res.extra["face_dims"] == [3]
    assert res.status == "optimal", res.message
    assert res.objective == pytest.approx(-trace, rel=1e-9)
    assert abs(res.objective - truth.objective) <= 1e-4 * abs(truth.objective)
    # a bound of −(least trace): above the input's −trace, and within the gap tolerance of it
    assert -trace * (1 + 1e-12) <= res.dual_bound <= -trace * (1 - 1e-6)
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == pytest.approx(res.dual_bound, rel=1e-12)


@pytest.mark.parametrize("extended", [True, False])
def test_a_locked_min_trace_roll_with_a_weak_stress_is_certified_in_extended_precision(
        extended: bool, monkeypatch) -> None:
    # the benchmark's roll at n = 200 with the trace weight c = −1: the lifted multipliers carry t ≈ 8e7 times the
    # stress, so their proof runs in long double, aimed at c + 2δ from the typical eigenvalue estimate; before,
    # that aim was taken for c > 0 only and min_trace's proof paid the worst-case lowering 16nε‖L(y)‖ of the
    # estimate (relative gap 3.8e-6: inaccurate at the default tolerance). Where long double is no finer than
    # double (extended=False: as on such a platform) the proof in double leaves a valid but looser bound
    # (relative gap 1.5e-5), never reported optimal, and verify proves the same bound
    if extended and not mvu_problem._EXT_UNIT:
        pytest.skip("numpy's long double is no finer than double here")
    if not extended:
        monkeypatch.setattr(mvu_problem, "_EXT_UNIT", 0.0)
    X, _ = swiss_roll(200, noise=0.05, random_state=0)
    inst = MVUInstance.from_points(X, 5, "min_trace")
    res = solve_mvu_facial(inst)
    trace = float(np.sum((X - X.mean(axis=0)) ** 2))
    assert res.extra["determined"] and res.extra["face_dims"] == [3]
    if not extended:
        assert res.status != "optimal"
        assert res.dual_bound >= -trace * (1 + 1e-12)
        assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound
        return
    assert res.status == "optimal", res.message
    assert -trace * (1 + 1e-12) <= res.dual_bound <= -trace * (1 - 1e-6)
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound


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
    early, later = solve_mvu_ipm(inst, max_iter=3), solve_mvu_ipm(inst, max_iter=5)
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


@pytest.mark.parametrize("extended", [True, False])
def test_a_locked_roll_of_more_than_300_points_is_certified_by_the_extended_precision_proof(
        extended: bool, monkeypatch) -> None:
    # the benchmark's roll at n = 320: three facial-reduction steps to the input's face (determined), whose lifted
    # multipliers prove a gap of 6.5e-6 in long double; below EXTENDED_PROOF_MAX_N = 1,000 since the proof at
    # n = 1,000 is paid only near the end. The same multipliers proved in double reach only 2.9e-2. Where long
    # double is no finer than double (extended=False: as on such a platform) the run proves only the looser bound
    # and is never reported optimal, and verify proves the same bound
    if extended and not mvu_problem._EXT_UNIT:
        pytest.skip("numpy's long double is no finer than double here")
    if not extended:
        monkeypatch.setattr(mvu_problem, "_EXT_UNIT", 0.0)
    X, _ = swiss_roll(320, noise=0.05, random_state=0)
    inst = MVUInstance.from_points(X, 5, "equality")
    res = solve_mvu_facial(inst, gap_tol=1e-5)
    trace = float(np.sum((X - X.mean(axis=0)) ** 2))
    assert res.extra["determined"] and res.extra["face_dims"][-1] == 3
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound
    if not extended:
        assert res.status != "optimal"
        assert res.dual_bound >= trace * (1 - 1e-12)
        return
    assert res.status == "optimal", res.message
    assert trace * (1 - 1e-12) <= res.dual_bound <= trace * (1 + 1e-5)
    monkeypatch.setattr(mvu_problem, "EXTENDED_PROOF_MAX_N", 300)
    assert dual_bound(inst, res.extra["y"])[0] > trace * (1 + 1e-3)


def _bodies(sizes: list[int], bars: list[tuple[int, int, int, bool]], seed: int) -> tuple[np.ndarray, MVUInstance]:
    """Rigid bodies (complete graphs on points in general position in R³) joined by bars: (p, q, m, double) joins
    m points of body p to m of body q by a matching, and when ``double`` also each to the next one's partner. No
    bar closes a clique of five across bodies, so the clique stress sees each body alone."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((sum(sizes), 3))
    start = np.cumsum([0, *sizes])
    pairs = {(start[k] + i, start[k] + j) for k, m in enumerate(sizes) for i in range(m) for j in range(i + 1, m)}
    for p, q, m, double in bars:
        a = rng.choice(sizes[p], m, replace=False) + start[p]
        b = rng.choice(sizes[q], m, replace=False) + start[q]
        for shift in (0, 1) if double else (0,):
            pairs |= {(min(i, j), max(i, j)) for i, j in zip(a, np.roll(b, shift), strict=True)}
    edges = np.array(sorted(pairs))
    return X, MVUInstance(edges, np.sum((X[edges[:, 0]] - X[edges[:, 1]]) ** 2, axis=1), len(X))


def test_a_second_step_finds_the_minimal_face_of_two_bodies_locked_by_bars() -> None:
    # two rigid bodies joined by 16 bars: the cliques see two free affine bodies (a face of dimension 7), but
    # CVXPY's optimum is the input itself, of rank 3 — the minimal face is span(X). Before the second step the
    # edges determined K in the face of dimension 7 and the lift from it proved only 56.6 (optimum 36.7, gap 0.35).
    X, inst = _bodies([8, 8], [(0, 1, 8, True)], 0)
    omega, _ = clique_stress(inst.n, inst.edges, inst.sqdist)
    first = face_of_stress(inst.n, inst.edges, omega)
    assert first.dim == 7
    z, inner = face_stress(inst, first)
    Xc = X - X.mean(axis=0)
    assert inner.dim == 3
    np.testing.assert_allclose(inner.V @ (inner.V.T @ Xc), Xc, atol=1e-6 * np.abs(Xc).max())
    # a stress of the restricted SDP: VᵀL(z)V ⪰ 0 of rank 4 with zᵀD = 0
    Bv = first.V[inst.edges[:, 0]] - first.V[inst.edges[:, 1]]
    levels = np.linalg.eigvalsh((Bv * z[:, None]).T @ Bv)
    assert levels[0] > -1e-9 * levels[-1] and np.sum(levels > 1e-6 * levels[-1]) == 4
    assert abs(z @ inst.sqdist) <= 1e-9 * (np.abs(z) @ inst.sqdist)
    truth = certified_truth(inst)
    w = np.linalg.eigvalsh(truth.solution)
    assert np.sum(w > 1e-6 * w[-1]) == 3
    res = solve_mvu_facial(inst, gap_tol=1e-5)                 # proved 4.0e-7 where this was written
    assert res.extra["face_dims"] == [7, 3] and res.extra["determined"]
    assert res.status == "optimal", res.message
    assert res.objective <= truth.objective * (1 + 1e-6) and truth.objective <= res.dual_bound * (1 + 1e-6)
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound


def test_a_second_step_leaves_a_pendant_body_free_and_the_interior_point_solves_the_rest() -> None:
    # the two locked bodies and a third one hung from the first by three bars: the second step takes the
    # face from 11 to 7 (the pendant's own affine motions stay), the interior point over it finds CVXPY's optimum
    _, inst = _bodies([10, 10, 6], [(0, 1, 10, True), (0, 2, 3, False)], 0)
    res = solve_mvu_facial(inst, gap_tol=1e-5)                 # proved 6.3e-7 where this was written
    assert res.extra["face_dims"] == [11, 7] and not res.extra["determined"]
    truth = certified_truth(inst)
    assert res.status == "optimal", res.message
    assert res.objective <= truth.objective * (1 + 1e-6) and truth.objective <= res.dual_bound * (1 + 1e-6)
    assert abs(res.objective - truth.objective) <= 1e-5 * truth.objective
    # CVXPY's optimum lies in the two-step face
    omega, _ = clique_stress(inst.n, inst.edges, inst.sqdist)
    _, inner = face_stress(inst, face_of_stress(inst.n, inst.edges, omega))
    off = truth.solution - inner.V @ (inner.V.T @ truth.solution)
    assert np.abs(off).max() <= 1e-5 * np.abs(truth.solution).max()
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound


def test_only_the_iterates_near_the_gap_pay_the_extended_precision_proof(monkeypatch) -> None:
    # the pendant-body instance above: the interior point over the face lifts and proves its first iterate and those
    # whose reduced gap is within the tolerance, and every lifted multiplier vector has a double-precision proof margin
    # above EXTENDED_PROOF_FROM; only the proofs whose bound could come within the goal run in long double
    calls = {"extended": 0, "double": 0}
    prove = mvu_problem._proves_feasible

    def counted(n, edges, y, c, extended_from=None):
        diagonal = np.bincount(edges.ravel(), weights=np.repeat(y, 2), minlength=n)
        unit = mvu_problem._proof_unit(n, edges, y, c, diagonal, extended_from)
        calls["extended" if unit < 0.5 * mvu_problem._EPS else "double"] += 1
        return prove(n, edges, y, c, extended_from)

    monkeypatch.setattr(mvu_problem, "_proves_feasible", counted)
    _, inst = _bodies([10, 10, 6], [(0, 1, 10, True), (0, 2, 3, False)], 0)
    res = solve_mvu_facial(inst, gap_tol=1e-5)
    assert res.status == "optimal" and res.relative_gap <= 1e-7, res.message
    assert calls["double"] >= 10 and calls["double"] > calls["extended"]
    if mvu_problem._EXT_UNIT:                          # the last iterate, within the goal, is proved in long double
        assert 1 <= calls["extended"] <= 3
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound


def test_no_second_step_where_the_restricted_sdp_has_an_interior() -> None:
    # two bodies joined by a single matching of 8 bars: free to fold into R⁷ (CVXPY's optimum has rank 7), so the
    # clique face is the minimal one and the restricted SDP is strictly feasible — no stress of it exists
    _, inst = _bodies([8, 8], [(0, 1, 8, False)], 0)
    omega, _ = clique_stress(inst.n, inst.edges, inst.sqdist)
    first = face_of_stress(inst.n, inst.edges, omega)
    assert first.dim == 7 and face_stress(inst, first) is None


@pytest.mark.parametrize("seed", [0, 3])
def test_a_chain_of_three_locked_bodies_is_certified_through_both_steps(seed: int) -> None:
    # three rigid bodies in a chain, each pair joined by a double matching of 8 bars: locked at the input (face 3
    # after two steps). The lift through both steps proved only 5.0e-3 (seed 0) and 5.2e-4 (seed 3) of the optimum
    # before its multipliers were made complementary to K (equilibrate) and the inner stress taken twice its least
    X, inst = _bodies([8, 8, 8], [(0, 1, 8, True), (1, 2, 8, True)], seed)
    trace = float(np.sum((X - X.mean(axis=0)) ** 2))
    res = solve_mvu_facial(inst, gap_tol=1e-6)
    assert res.extra["face_dims"] == [11, 3] and res.extra["determined"]
    assert res.status == "optimal", res.message
    assert res.objective == pytest.approx(trace, rel=1e-6)     # K from the face, as accurate as its stresses
    assert trace * (1 - 1e-12) <= res.dual_bound <= trace * (1 + 1e-6)
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound


def test_equilibrate_makes_the_multipliers_complementary_to_the_support_and_keeps_the_stress() -> None:
    # checked densely against L(y) itself: the corrected reduced multipliers act as Q·QᵀL(y)Q on Q and keep the
    # block off Q; the corrected inner stress is an equilibrium stress of Q and keeps its matrix on its outer face
    from sdpembed.graphs import graph_laplacian
    from sdpembed.solvers.mvu.facial import _unit_on_face, equilibrate

    X, inst = _bodies([8, 8, 8], [(0, 1, 8, True), (1, 2, 8, True)], 0)
    n, edges = inst.n, inst.edges
    omega, _ = clique_stress(n, edges, inst.sqdist)
    first = face_of_stress(n, edges, omega)
    z, inner = face_stress(inst, first)
    Q = inner.V
    y = _unit_on_face(inst, first.V)                 # L(y)V ≈ V on the larger face only: it couples Q to the rest
    y2, steps = equilibrate(inst, [(first, omega), (inner, z)], y, Q)

    def L(w: np.ndarray) -> np.ndarray:
        return graph_laplacian(n, edges, w).toarray()

    assert np.abs(L(y) @ Q - Q @ (Q.T @ L(y) @ Q)).max() > 1e-2
    np.testing.assert_allclose(L(y2) @ Q, Q @ (Q.T @ L(y) @ Q), atol=1e-9)
    z2 = steps[1][1]
    assert np.abs(L(z) @ Q).max() > 1e-2
    assert np.abs(L(z2) @ Q).max() < 1e-9 * np.abs(L(z2)).max()
    B = first.V @ np.linalg.svd(first.V.T @ Q)[0][:, Q.shape[1]:]     # the stress's face ⊖ Q
    np.testing.assert_allclose(B.T @ L(z2) @ B, B.T @ L(z) @ B, atol=1e-9 * np.abs(L(z)).max())
    assert steps[0][1] is omega


def test_a_matrix_above_a_proved_bound_is_not_returned_for_its_smaller_violation() -> None:
    from sdpembed.solvers.mvu.facial import _combine
    X, _ = swiss_roll(16, noise=0.1, random_state=2)
    inst = MVUInstance.from_points(X, 3, "equality", link=True, random_state=2)
    run = solve_mvu_ipm(inst, max_iter=8)
    # a K whose objective is 1 % above the other run's proved bound is infeasible whatever its violation says
    above = dataclasses.replace(run, objective=run.dual_bound * 1.01, max_violation=0.0, dual_bound=float("inf"))
    both = _combine(inst, above, run, 1e-6, 1e-6, 0.0)
    assert both.objective == run.objective and both.dual_bound == run.dual_bound
    assert np.array_equal(both.solution, run.solution)


_FRAMEWORKS = [([8, 8], [(0, 1, 8, True)]), ([10, 10, 6], [(0, 1, 10, True), (0, 2, 3, False)]),
               ([8, 8, 8], [(0, 1, 8, True), (1, 2, 8, True)]), ([8, 8], [(0, 1, 8, False)])]


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("framework", range(len(_FRAMEWORKS)))
def test_the_dual_form_exposes_the_face_of_the_primal_form_and_keeps_the_input_in_it(framework: int, seed: int) -> None:
    # the second step posed in the edge multipliers against the primal form on the body frameworks above (two locked
    # bodies: 7 -> 3; a pendant body: 11 -> 7; a locked chain: 11 -> 3; a single matching: no stress): the same
    # inner face, a PSD stress of the restricted SDP with zᵀD = 0, and the input's Gram matrix inside the face
    from sdpembed.solvers.mvu.facial import face_stress_dual

    X, inst = _bodies(*_FRAMEWORKS[framework], seed)
    omega, _ = clique_stress(inst.n, inst.edges, inst.sqdist)
    first = face_of_stress(inst.n, inst.edges, omega)
    primal, dual = face_stress(inst, first), face_stress_dual(inst, first)
    if primal is None:
        assert dual is None
        return
    z, inner = dual
    assert inner.dim == primal[1].dim < first.dim
    cosines = np.linalg.svd(primal[1].V.T @ inner.V, compute_uv=False)
    assert cosines.min() > 1 - 1e-9
    Xc = X - X.mean(axis=0)
    np.testing.assert_allclose(inner.V @ (inner.V.T @ Xc), Xc, atol=1e-7 * np.abs(Xc).max())
    Bv = first.V[inst.edges[:, 0]] - first.V[inst.edges[:, 1]]
    levels = np.linalg.eigvalsh((Bv * z[:, None]).T @ Bv)
    assert levels[0] > -1e-9 * levels[-1] and np.sum(levels > 1e-6 * levels[-1]) == first.dim - inner.dim
    assert abs(z @ inst.sqdist) <= 1e-9 * (np.abs(z) @ inst.sqdist)


@pytest.mark.parametrize("framework, interior", [(0, False), (3, True)])
def test_the_dual_forms_verdict_matches_cvxpys_auxiliary_sdp(framework: int, interior: bool) -> None:
    # CVXPY (Clarabel) on the auxiliary SDP itself, maximise λ s.t. b_eᵀWb_e = D_e, W ⪰ λI in the clique face: its
    # optimum is 0 where a stress exists (locked bodies) and positive where the restricted SDP has an interior (a
    # single matching) — the dual form returns a stress exactly in the first case
    import cvxpy as cp

    from sdpembed.solvers.mvu.facial import face_stress_dual

    _, inst = _bodies(*_FRAMEWORKS[framework], 0)
    omega, _ = clique_stress(inst.n, inst.edges, inst.sqdist)
    first = face_of_stress(inst.n, inst.edges, omega)
    Bv = first.V[inst.edges[:, 0]] - first.V[inst.edges[:, 1]]
    W, lam = cp.Variable((first.dim, first.dim), symmetric=True), cp.Variable()
    D = inst.sqdist / inst.tau
    problem = cp.Problem(cp.Maximize(lam), [cp.sum(cp.multiply(Bv @ W, Bv), axis=1) == D,
                                            W - lam * np.eye(first.dim) >> 0])
    problem.solve(solver=cp.CLARABEL)
    assert problem.status == "optimal"
    assert (problem.value > 1e-4) == interior and abs(problem.value) < 1.0
    assert (face_stress_dual(inst, first) is None) == interior


def test_the_solver_takes_the_dual_form_where_the_primal_forms_system_is_too_large(monkeypatch) -> None:
    # the locked chain of three bodies with the primal form's limit lowered below its clique face's 66 unknowns: the
    # second step runs in the edge multipliers, the edges determine K in its face of dimension 3, and the proved bound
    # is CVXPY's optimum as through the primal form
    from sdpembed.solvers.mvu import facial

    X, inst = _bodies([8, 8, 8], [(0, 1, 8, True), (1, 2, 8, True)], 0)
    trace = float(np.sum((X - X.mean(axis=0)) ** 2))
    monkeypatch.setattr(facial, "DETERMINED_MAX_UNKNOWNS", 10)
    res = solve_mvu_facial(inst, gap_tol=1e-6)
    assert "in the edge multipliers" in res.message
    assert res.extra["face_dims"] == [11, 3] and res.extra["determined"]
    assert res.status == "optimal", res.message
    assert trace * (1 - 1e-12) <= res.dual_bound <= trace * (1 + 1e-6)
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound
    # a face larger than the dual form's edge limit is left to the interior point, as before
    monkeypatch.setattr(facial, "DUAL_STEP_MAX_EDGES", 10)
    res = solve_mvu_facial(inst, gap_tol=1e-6)
    assert res.extra["face_dims"] == [11] and not res.extra["determined"]


def test_the_memory_rule_of_equilibrate_counts_every_dense_row_it_builds(monkeypatch) -> None:
    # the rule's estimate 24·R·(R + E) against the rows equilibrate actually hands its least-norm solves: the support
    # block r(r+1)/2 and the weak directions' coupling count, not only the face off the support (the n = 1,000 swiss
    # roll's support of rank ~800 gave ~320,000 dense rows of length 2,986 and took the process to 21.8 GB)
    from sdpembed.solvers.mvu import facial

    _, inst = _bodies([8, 8, 8], [(0, 1, 8, True), (1, 2, 8, True)], 0)
    omega, _ = clique_stress(inst.n, inst.edges, inst.sqdist)
    first = face_of_stress(inst.n, inst.edges, omega)
    z, inner = face_stress(inst, first)
    steps = [(first, omega), (inner, z)]
    y = facial._unit_on_face(inst, first.V)
    seen: list[int] = []
    least_norm = facial._least_norm

    def counted(instance, Q, target, rows=None, values=None, **kwargs):
        seen.append(0 if rows is None else rows.shape[0])
        return least_norm(instance, Q, target, rows, values, **kwargs)

    monkeypatch.setattr(facial, "_least_norm", counted)
    Q = inner.V
    facial.equilibrate(inst, steps, y, Q)
    E = len(inst.edges)
    assert len(seen) == 2 and seen[0] > Q.shape[1] * (Q.shape[1] + 1) // 2
    assert facial._equilibrate_bytes(steps, Q.shape[1], E) == max(24 * R * (R + E) for R in seen)


def test_a_correction_above_the_memory_limit_is_not_built_and_the_result_stays_honest(monkeypatch) -> None:
    # the locked chain of three bodies, certified only through equilibrate (the plain lift proved a gap of 5.0e-3):
    # with EQUILIBRATE_MAX_BYTES below its need the correction is never called, the plain multipliers are proved
    # (a valid bound, the proof's own), the run is not optimal and its message names the limit
    from sdpembed.solvers.mvu import facial

    X, inst = _bodies([8, 8, 8], [(0, 1, 8, True), (1, 2, 8, True)], 0)
    trace = float(np.sum((X - X.mean(axis=0)) ** 2))

    def refused(*args, **kwargs):
        raise AssertionError("equilibrate ran above its memory limit")

    monkeypatch.setattr(facial, "EQUILIBRATE_MAX_BYTES", 1000)
    monkeypatch.setattr(facial, "equilibrate", refused)
    res = solve_mvu_facial(inst, gap_tol=1e-6)
    assert res.extra["face_dims"] == [11, 3] and res.extra["determined"]
    assert res.status == "inaccurate" and res.relative_gap > 1e-6, res.message
    assert "EQUILIBRATE_MAX_BYTES" in res.message
    assert res.dual_bound >= trace * (1 - 1e-12)
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound


def test_the_full_interior_point_above_the_face_runs_proved_bound_is_not_returned_as_optimal() -> None:
    # review fuzz (r21): a 14-point roll with k = 3 (face 10, no further step) whose run over the face ends
    # inaccurate with a proved bound 1615.2266; the fallback interior point over all of 1⊥ says optimal at
    # 1615.3999 (violation 4.6e-8, against its own bound 1615.3992), 1.1e-4 above that proved bound and above
    # CVXPY/Clarabel's (1615.2156): a K above a proved upper bound is not feasible at the multipliers' scale,
    # whatever its violation (_combine's rule), and was returned as optimal
    # (Clarabel ends inaccurate on this SDP without an interior, but its multipliers' bound is proved by our own
    # arithmetic all the same: re-proved here)
    from sdpembed.formulations.mvu import solve_mvu_cvxpy

    X, _ = swiss_roll(14, noise=0.05, random_state=113)
    inst = MVUInstance.from_points(X, 3, "equality", link=True, random_state=113)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clarabel = solve_mvu_cvxpy(inst, solver="CLARABEL")
    proved = verified_dual_bound(inst, {"dual_y": clarabel.extra["y"]})
    res = solve_mvu_facial(inst)
    assert res.dual_bound >= float(np.sum((X - X.mean(axis=0)) ** 2))
    above = (res.objective - proved) / abs(proved)
    assert res.status != "optimal" or above <= 1e-6, (above, res.message)


def test_a_singular_schur_block_in_the_lift_skips_that_epsilon(monkeypatch) -> None:
    # review fuzz (r21): a 22-point roll (k = 4, faces [7, 3]) with the second step posed in the edge multipliers
    # (the primal form's limit lowered): the lift's f·A_VV − I was exactly singular for one ε and np.linalg.solve
    # raised LinAlgError out of solve_mvu_facial; an ε whose Schur complement cannot be formed is skipped, as one
    # whose A_VV is not positive definite, and the bound is proved as before
    from sdpembed.solvers.mvu import facial

    X, _ = swiss_roll(22, noise=0.0, random_state=122)
    inst = MVUInstance.from_points(X, 4, "equality", link=True, random_state=122)
    monkeypatch.setattr(facial, "DETERMINED_MAX_UNKNOWNS", 3)
    res = solve_mvu_facial(inst)
    assert res.dual_bound >= float(np.sum((X - X.mean(axis=0)) ** 2))     # the input's Gram matrix is feasible


def test_a_lift_beyond_double_precision_skips_its_epsilon_instead_of_failing(monkeypatch) -> None:
    # a 16-point roll through the dual form at both steps (faces 6, 3): the inner step's lift makes y ~ 1e11, so
    # at ε = 1e-9 the outer step's f·VᵀL(y)V − I (least eigenvalue ε, largest ~6e9) is singular in double and LU
    # raised; that ε is now skipped, a larger one lifts, and the proved bound is CVXPY's optimum
    from sdpembed.solvers.mvu import facial

    X = swiss_roll(16, noise=0.0, random_state=0)[0]
    inst = MVUInstance.from_points(X, 6, "equality", angles=False, link=True, random_state=0)
    monkeypatch.setattr(facial, "DETERMINED_MAX_UNKNOWNS", 0)
    res = solve_mvu_facial(inst)
    assert res.extra["face_dims"] == [6, 3] and "in the edge multipliers" in res.message
    assert res.status == "optimal", res.message
    truth = certified_truth(inst)
    assert res.dual_bound == pytest.approx(truth.objective, rel=2e-6)
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound


def test_a_step_whose_determined_matrix_is_indefinite_is_not_taken(monkeypatch) -> None:
    # a 16-point roll whose clique face (11) takes the dual form: its auxiliary SDP ends at λ ~ −1e-9 with a near-stress
    # whose face (6) leaves the input 1.1e-5 outside; there the edges' 52 × 21 system (σ_min/σ_max 2e-6) fits them
    # to 4e-7 of τ with W of eigenvalues −299 .. 1207, and the step was taken: K clipped from that W missed the
    # edges by 1.0 (inaccurate). The step is now refused and the interior point over the face 11 reaches CVXPY's optimum
    from sdpembed.solvers.mvu import facial

    X = swiss_roll(16, noise=0.0, random_state=17)[0]
    inst = MVUInstance.from_points(X, 5, "equality", angles=False, link=True, random_state=0)
    monkeypatch.setattr(facial, "DETERMINED_MAX_UNKNOWNS", 65)        # the face 11 (66 unknowns) takes the dual form
    res = solve_mvu_facial(inst)
    assert res.extra["face_dims"] == [11] and not res.extra["determined"]
    assert "indefinite" in res.message
    assert res.status == "optimal", res.message
    truth = certified_truth(inst)
    assert res.objective == pytest.approx(truth.objective, rel=2e-6)
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound


def _edge_gap(instance: MVUInstance, Y: np.ndarray) -> float:
    """max_e |‖y_i − y_j‖² − D_e| / τ from the embedding's rows: the edges measured without K."""
    diff = Y[instance.edges[:, 0]] - Y[instance.edges[:, 1]]
    return float(np.max(np.abs(np.sum(diff * diff, axis=1) - instance.sqdist))) / instance.tau


def test_the_polish_in_the_face_meets_every_edge_from_a_perturbed_input() -> None:
    X, _ = swiss_roll(40, noise=0.0, height=8.0, random_state=1)
    inst = MVUInstance.from_points(X, 6, "equality", angles=False, link=True, random_state=0)
    omega, _ = clique_stress(inst.n, inst.edges, inst.sqdist)
    face = face_of_stress(inst.n, inst.edges, omega)
    Xc = X - X.mean(axis=0)
    Y = Xc + 1e-4 * np.random.default_rng(0).standard_normal(Xc.shape)
    K = polish_in_face(inst, face.V, Y @ Y.T)
    assert _edge_gap(inst, Y) > 1e-5                                  # the start misses the edges
    levels, vectors = np.linalg.eigh(K)
    assert levels[0] >= -1e-12 * levels[-1]
    assert _edge_gap(inst, vectors * np.sqrt(np.maximum(levels, 0.0))) <= 1e-10      # eigh of K: 1e-12 rounding
    assert np.allclose(K.sum(axis=1), 0.0, atol=1e-9 * np.trace(K))


def test_an_unfinished_thin_face_returns_a_matrix_on_the_edges_and_below_its_proved_bound() -> None:
    # noise-free roll, distance-only k = 5: the run over the clique face (52) and over 1⊥ both end inaccurate; their
    # K met the edges to 8.5e-8 of τ with an objective 1.3e-5 above the proved bound (an infeasible K). Polished in
    # the face it meets them to rounding and lies below the bound; no gap is claimed
    X, _ = swiss_roll(60, noise=0.0, height=8.0, random_state=0)
    inst = MVUInstance.from_points(X, 5, "equality", angles=False, link=True, random_state=0)
    result = solve_mvu_facial(inst)
    assert result.status == "inaccurate" and "polished by Gauss–Newton" in result.message
    assert _edge_gap(inst, result.extra["Y"]) <= 1e-10 and result.max_violation <= 1e-12
    assert np.linalg.eigvalsh(result.solution)[0] >= -1e-12 * result.objective
    assert result.dual_bound >= result.objective
    assert result.relative_gap > 1e-6
    assert verified_dual_bound(inst, {"dual_y": result.extra["y"]}) >= result.objective


def test_reduced_multipliers_near_the_largest_double_give_no_bound_instead_of_failing() -> None:
    """Six pairs of near-duplicate points (1e-7 apart, squared edges ~1e-14), k = 3 (review r22 fuzz, seed 102):
    the reduced solve in the face returned multipliers of ~5e303, whose least-norm corrections (equilibrate) came
    out NaN, and the lift's eigvalsh raised 'Eigenvalues did not converge'. Non-finite multipliers now prove no
    bound; the run ends as the interior point over 1⊥ does (optimal at its optimum)."""
    edges = np.array([[0, 1], [0, 4], [0, 5], [0, 7], [1, 4], [1, 5], [2, 3], [2, 6], [2, 7], [2, 8], [2, 9],
                      [3, 6], [3, 7], [3, 8], [3, 9], [4, 5], [6, 7], [6, 10], [6, 11], [7, 10], [7, 11], [8, 9],
                      [10, 11]])
    sqdist = np.array([4.0041125096881855e-14, 9.9926217483177537e-01, 9.9926219725187226e-01,
                       6.0644591697433770e+00, 9.9926202434879852e-01, 9.9926204676897146e-01,
                       4.1483231412190762e-14, 1.4433441248334039e-01, 1.4433430437032616e-01,
                       6.8722220872349626e-01, 6.8722227624914267e-01, 1.4433431718175946e-01,
                       1.4433420906876271e-01, 6.8722233402028554e-01, 6.8722240154590986e-01,
                       4.4140741750026394e-14, 2.3462667439528000e-14, 1.0480704719251763e+00,
                       1.0480704131872387e+00, 1.0480707760823875e+00, 1.0480707173444397e+00,
                       7.2300225032648399e-15, 1.9592671255311350e-15])
    instance = MVUInstance(edges=edges, sqdist=sqdist, n=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = solve_mvu_facial(instance)
    reference = solve_mvu_ipm(instance)
    # nearly feasible: the interior point's K, polished onto the equalities, is certified only at a violation of
    # gap_tol², which the near-duplicates' edges of 1e-14 can keep it from (then inaccurate, not optimal)
    assert reference.status in ("optimal", "inaccurate") and reference.max_violation <= 1e-6
    assert result.status in ("optimal", "inaccurate"), result.message
    # whatever it returns, its bound is a bound: not below the interior point's (nearly feasible) objective
    assert result.dual_bound >= reference.objective * (1 - 1e-6)
    if result.status == "optimal":
        assert abs(result.objective - reference.objective) <= 1e-5 * reference.objective


@pytest.mark.parametrize("variant", ["min_trace", "equality"])
def test_equilibrate_raises_the_block_off_the_support_and_keeps_the_support(variant: str) -> None:
    # reduced multipliers at c on the whole innermost face (L(y)V = cV): the directions of the face off a support Q of
    # lower rank sit at c, where the lift divides their coupling to the stresses' ranges by its ε. raise_to = κ lifts
    # that block to c + κ (its least eigenvalue, checked densely) and keeps Q·QᵀL(y)Q; raise_to = 0 keeps it at c
    from sdpembed.graphs import graph_laplacian
    from sdpembed.solvers.mvu.facial import _unit_on_face, equilibrate

    X, inst = _bodies([8, 8, 8], [(0, 1, 8, True), (1, 2, 8, True)], 0)
    inst = dataclasses.replace(inst, variant=variant)
    n, edges, c = inst.n, inst.edges, inst.trace_weight
    omega, _ = clique_stress(n, edges, inst.sqdist)
    first = face_of_stress(n, edges, omega)
    z, inner = face_stress(inst, first)
    steps = [(first, omega), (inner, z)]
    y = c * _unit_on_face(inst, inner.V)
    Q, B = inner.V[:, :2], inner.V[:, 2:]

    def L(w: np.ndarray) -> np.ndarray:
        return graph_laplacian(n, edges, w).toarray()

    np.testing.assert_allclose(np.linalg.eigvalsh(B.T @ L(y) @ B), c, atol=1e-8)
    kept, _ = equilibrate(inst, steps, y, Q)
    raised, _ = equilibrate(inst, steps, y, Q, raise_to=0.3)
    np.testing.assert_allclose(np.linalg.eigvalsh(B.T @ L(kept) @ B), c, atol=1e-8)
    np.testing.assert_allclose(np.linalg.eigvalsh(B.T @ L(raised) @ B), c + 0.3, atol=1e-8)
    for w in (kept, raised):
        np.testing.assert_allclose(L(w) @ Q, c * Q, atol=1e-8)
    # a block already above c + κ is kept: raising it twice changes nothing
    again, _ = equilibrate(inst, steps, raised, Q, raise_to=0.3)
    np.testing.assert_allclose(B.T @ L(again) @ B, B.T @ L(raised) @ B, atol=1e-8)


def test_a_gap_below_zero_beyond_rounding_is_never_optimal():
    """Review r25 (seed 289): facial reduction accepted |gap| <= gap_tol, so a K whose objective lay above its own
    proved bound (a gap of -6.6e-7, a K infeasible enough to beat every feasible point) ended ``optimal``."""
    from sdpembed.solvers.mvu import facial
    from sdpembed.solvers.mvu.ipm import solve_mvu_ipm
    from sdpembed.solvers.mvu.polish import gap_allowance

    X = np.random.default_rng(2).standard_normal((12, 2))
    instance = MVUInstance.from_points(X, 4, "inequality", angles=False)
    primal = solve_mvu_ipm(instance)
    objective = primal.objective
    assert primal.status == "optimal"
    for shift, expected in ((-1e-7, "inaccurate"), (1e-7, "optimal"), (-0.5 * gap_allowance(instance), "optimal")):
        bound = objective * (1.0 + shift)
        result = facial._pair(instance, primal, bound, primal.extra.get("y"), 1, 1e-6, 1e-6, 0.0)
        assert result.status == expected, (shift, result.message)


@pytest.mark.parametrize("variant, optimum", [("equality", 1.25), ("min_trace", -1.25)])
def test_a_triangle_with_a_duplicate_point_is_certified_at_its_one_gram_matrix(variant: str, optimum: float) -> None:
    """Review r25: a unit triangle whose third point is repeated (edge of length 0, and one more edge to it) is
    locked, and its one Gram matrix has tr K = 1.25 exactly. L(y)V = V has no solution there (the duplicate's edge
    drops out of L(y)V and the two rows ask for different things), so the least-norm multipliers missed
    VᵀL(y_R)V = cI and the proof gave 1.394 (−1.106 for min_trace); with that block made exact the bound is
    within the tolerance, proved again by the oracle from the returned multipliers."""
    edges = np.array([[0, 1], [1, 2], [0, 2], [2, 3], [1, 3]])
    instance = MVUInstance(edges, np.array([1.0, 1.0, 1.0, 0.0, 1.0]), 4, variant)
    result = solve_mvu_facial(instance, gap_tol=1e-6)
    assert result.extra["determined"]
    assert result.status == "optimal", result.message
    assert result.objective == pytest.approx(optimum, rel=1e-12)
    assert optimum <= result.dual_bound <= optimum + 1e-6 * abs(optimum)
    assert verified_dual_bound(instance, {"dual_y": result.extra["y"]}) == pytest.approx(result.dual_bound, rel=1e-12)


def test_exact_rows_meet_the_support_block_and_its_coupling_and_keep_the_rows_asked() -> None:
    # equilibrate's exact mode: after its least-squares corrections, a second least-norm correction of a few dense rows
    # meets QᵀL(y)Q = target and QᵀL(y)B = 0 exactly (to rounding) and leaves the rows asked to be kept as they were
    from sdpembed.graphs import graph_laplacian
    from sdpembed.solvers.mvu.facial import _block_rows, _cross_rows, _exact_rows

    _, inst = _bodies([8, 8, 8], [(0, 1, 8, True), (1, 2, 8, True)], 0)
    n, edges = inst.n, inst.edges
    rng = np.random.default_rng(4)
    y = rng.standard_normal(len(edges))
    omega, _ = clique_stress(n, edges, inst.sqdist)
    first = face_of_stress(n, edges, omega)
    Q, B, weak = first.V[:, :2], first.V[:, 2:], first.U[:, :5]
    target = np.array([[-1.0, 0.25], [0.25, -2.0]])
    keep = _cross_rows(edges, weak, Q)
    fixed = _exact_rows(inst, y, Q, target, zero=B, keep=keep)

    def L(w: np.ndarray) -> np.ndarray:
        return graph_laplacian(n, edges, w).toarray()

    scale = np.abs(L(y)).max()
    np.testing.assert_allclose(Q.T @ L(fixed) @ Q, target, atol=1e-12 * scale)
    np.testing.assert_allclose(Q.T @ L(fixed) @ B, 0.0, atol=1e-12 * scale)
    np.testing.assert_allclose(weak.T @ L(fixed) @ Q, weak.T @ L(y) @ Q, atol=1e-12 * scale)
    assert _cross_rows(edges, weak, Q).shape == (5 * 2, len(edges))
    np.testing.assert_allclose(_cross_rows(edges, Q, Q) @ y, (Q.T @ L(y) @ Q).ravel(), atol=1e-12 * scale)
    a, b = np.triu_indices(2)
    np.testing.assert_allclose(_block_rows(edges, Q) @ y, (Q.T @ L(y) @ Q)[a, b], atol=1e-12 * scale)
    # the least-norm correction: orthogonal to the null space of the rows it meets
    rows = np.vstack([_block_rows(edges, Q), _cross_rows(edges, Q, B), keep])
    delta = fixed - y
    projected = rows.T @ np.linalg.lstsq(rows.T, delta, rcond=None)[0]
    np.testing.assert_allclose(projected, delta, atol=1e-10 * np.abs(delta).max())


def test_the_interior_point_over_a_face_lifts_only_where_it_can_pay_and_stops_once_lifts_are_futile() -> None:
    # the pendant-body instance as min_trace, with a certificate that proves only the trivial bound 0 (tr K >= 0):
    # the first iterate and those whose own reduced gap is within gap_tol are lifted, not every iterate, and the run
    # stops inaccurate after FUTILE_LIFTS of them at a reduced gap below REDUCED_GAP_SHARE of the tolerance
    from sdpembed.solvers.mvu.ipm import FUTILE_LIFTS, solve_in_face

    _, inst = _bodies([10, 10, 6], [(0, 1, 10, True), (0, 2, 3, False)], 0)
    inst = dataclasses.replace(inst, variant="min_trace")
    omega, _ = clique_stress(inst.n, inst.edges, inst.sqdist)
    _, inner = face_stress(inst, face_of_stress(inst.n, inst.edges, omega))
    Bv = inner.V[inst.edges[:, 0]] - inner.V[inst.edges[:, 1]]
    rows = independent_rows(Bv)
    calls = []

    def trivial(y: np.ndarray, goal=None) -> tuple[float, np.ndarray]:
        calls.append(y.copy())
        return 0.0, np.zeros(len(inst.edges))

    res = solve_in_face(inst, basis=inner.V, certificate=trivial, rows=rows, gap_tol=1e-6, max_iter=100)
    assert res.status == "inaccurate" and "proved no gap" in res.message, res.message
    assert res.iterations < 100 and len(calls) < res.iterations
    assert len(calls) >= 1 + FUTILE_LIFTS
    # the K returned is the solved one, not the first with the (tied) trivial gap
    truth = certified_truth(inst)
    assert abs(res.objective - truth.objective) <= 1e-5 * abs(truth.objective)


@pytest.mark.parametrize("forced", [False, True])
def test_the_final_certificate_raises_the_block_only_where_the_plain_forms_leave_the_gap_open(
        monkeypatch, forced: bool) -> None:
    # the face's run made to end unconverged (its answer kept), so that the final certificate is asked: the plain
    # equilibrated forms prove its gap within 1e-5, so the raised forms (RAISE_MARGINS, several lifts and proofs
    # each) are not tried; told the gap is open (forced), the same run tries them and proves no worse a bound
    from sdpembed.solvers.mvu import facial as facial_module

    def unconverged(instance, **kwargs):
        result = solve_in_face(instance, **kwargs)
        return dataclasses.replace(result, status="inaccurate") if kwargs.get("basis") is not None else result

    calls = {"raised": 0}

    def counted(*args, raise_to: float = 0.0, **kwargs):
        calls["raised"] += raise_to > 0
        return equilibrate(*args, raise_to=raise_to, **kwargs)

    monkeypatch.setattr(facial_module, "solve_in_face", unconverged)
    monkeypatch.setattr(facial_module, "equilibrate", counted)
    if forced:
        monkeypatch.setattr(facial_module, "_gap_left", lambda *args: True)
    _, inst = _bodies([10, 10, 6], [(0, 1, 10, True), (0, 2, 3, False)], 0)
    res = solve_mvu_facial(inst, gap_tol=1e-5)
    assert "made complementary to K's support" in res.message, res.message
    assert (calls["raised"] == 2 * len(facial_module.RAISE_MARGINS)) is forced, calls
    assert res.status == "optimal" and res.relative_gap <= 1e-5, res.message
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound


def test_the_gap_left_after_the_plain_forms() -> None:
    _, inst = _bodies([10, 10, 6], [(0, 1, 10, True), (0, 2, 3, False)], 0)
    y = np.zeros(len(inst.edges))
    proved = [(100.0 * (1 + 1e-4), y), (100.0 * (1 + 1e-6), y)]
    from sdpembed.solvers.mvu.facial import _gap_left

    assert not _gap_left(inst, proved, 100.0, 1e-5)           # the least bound settles it
    assert _gap_left(inst, proved, 100.0, 1e-7)
    assert not _gap_left(inst, proved, 101.0, 1e-7)           # a bound below the objective: no raise can certify
    assert _gap_left(inst, proved, None, 1e-5)                # the objective not known: try them


def test_a_face_run_is_not_stopped_as_solved_while_its_reduced_gap_is_negative() -> None:
    # the swiss roll at n = 400 (noise 0.05, k = 5, angle edges; BENCHMARKS' exact-MVU table): the run over the face
    # reached a reduced gap of -6.9e-6 (a primal iterate beyond its reduced dual value) at iteration 14, counted
    # three lifts there as futile and stopped; the final certificate from those early multipliers proved 1.1e-4
    # and the whole solve ended inaccurate. Run on, its later multipliers certify the optimum. One BLAS thread: with
    # two, the rounding of the clique stress differs and facial reduction takes a third step on this graph, a
    # different trajectory (left for a separate fix)
    from threadpoolctl import threadpool_limits

    from sdpembed.graphs import neighborhood_graph

    X, _ = swiss_roll(400, noise=0.05, random_state=0)
    edges, D = neighborhood_graph(X, 5)
    inst = MVUInstance(edges=edges, sqdist=D, n=400, variant="equality")
    with threadpool_limits(1):
        res = solve_mvu_facial(inst, gap_tol=1e-5)
    assert res.status == "optimal" and 0.0 <= res.relative_gap <= 1e-5, res.message
    assert verified_dual_bound(inst, {"dual_y": res.extra["y"]}) == res.dual_bound
