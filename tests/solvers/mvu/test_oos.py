"""MVU out-of-sample extension (thesis Sec. 3.1.10): instance, CVXPY formulation, the batched
interior-point solver with its certificate, the refinement, the LLE baseline and the
consistency measure (3.34)."""

from __future__ import annotations

import numpy as np
import pytest

import sdpembed
from sdpembed.formulations.mvu_oos import mvu_oos_problem, solve_mvu_oos_cvxpy
from sdpembed.graphs import neighbour_arrays
from sdpembed.io import load_instance, save_instance
from sdpembed.problems import MVUOOSInstance
from sdpembed.problems.mvu_oos import dual_bound, primal_objective
from sdpembed.solvers.mvu.oos import place_points, refine_points, solve_mvu_oos, stress
from sdpembed.validation.oos import (
    consistency_ratio,
    linear_fit_error,
    lle_place,
    lle_weights,
    out_of_sample,
    split_abc,
)


def random_instance(seed: int) -> MVUOOSInstance:
    """r ∈ {1, 2, 3}, k from r to 3r; distances from a hidden point, scaled by 0.5–2.5 per
    neighbour so that both regimes occur (cone active, s = ‖y‖², and inactive, s > ‖y‖²)."""
    rng = np.random.default_rng(seed)
    r = int(rng.integers(1, 4))
    k = int(rng.integers(r, 3 * r + 1))
    Y = rng.normal(size=(k, r)) + rng.normal(size=r)
    x = rng.normal(size=r)
    D = ((Y - x) ** 2).sum(axis=1) * rng.uniform(0.5, 2.5, size=k)
    return MVUOOSInstance(Y=Y, sqdist=D)


AGREEMENT_SEEDS = range(24)


@pytest.fixture(scope="module")
def agreement():
    """(instance, hand-written result, Clarabel result) for the agreement instances."""
    out = []
    for seed in AGREEMENT_SEEDS:
        instance = random_instance(seed)
        out.append((instance, sdpembed.solve(instance), sdpembed.solve(instance, "cvxpy")))
    return out


def scale_of(instance: MVUOOSInstance) -> float:
    return max(float((instance.Y**2).sum(axis=1).max()), float(instance.sqdist.max()), 1.0)


# ---------------------------------------------------------------------------- agreement
def test_agreement_with_cvxpy(agreement):
    rks = set()
    for instance, ours, truth in agreement:
        k, r = instance.Y.shape
        rks.add((r, k))
        assert truth.status == "optimal", truth.message
        assert ours.status == "optimal", ours.message
        assert abs(ours.objective - truth.objective) <= 1e-6, (r, k, ours.objective, truth.objective)
    assert {r for r, _ in rks} == {1, 2, 3}
    assert any(k == r for r, k in rks) and any(k == 3 * r for r, k in rks)


def test_solution_structure_is_exact(agreement):
    for instance, ours, _ in agreement:
        S = ours.solution
        r = instance.Y.shape[1]
        assert S.shape == (r + 1, r + 1)
        assert np.array_equal(S[:r, :r], np.eye(r))                    # identity block exact
        assert np.array_equal(S, S.T)
        y, s = S[:r, r], S[r, r]
        assert np.array_equal(y, ours.extra["y"])
        assert s - y @ y >= -1e-14 * max(1.0, s)                        # Schur complement (3.30)
        eigenvalues = np.linalg.eigvalsh(S)
        assert eigenvalues[0] >= -1e-12 * max(1.0, eigenvalues[-1])
        assert ours.max_violation == 0.0
        assert ours.objective == pytest.approx(instance.objective(S), abs=1e-12)


def test_both_regimes_of_the_cone_occur(agreement):
    """The instances cover optima with s = ‖y‖² (μ > 0) and with s > ‖y‖² (μ = 0)."""
    slack = [r.solution[-1, -1] - r.extra["y"] @ r.extra["y"] for _, r, _ in agreement]
    assert min(slack) < 1e-12 and max(slack) > 1e-3


def test_certified_bound(agreement):
    for instance, ours, truth in agreement:
        assert ours.dual_bound <= truth.objective + 1e-7
        assert ours.dual_bound <= ours.objective
        assert ours.gap <= 1e-8 * scale_of(instance)
        # the CVXPY duals certify through the same closed form, and bound our optimum too
        assert truth.dual_bound <= ours.objective + 1e-9
        assert truth.objective - truth.dual_bound <= 1e-6


def test_cvxpy_duals_price_the_slacks():
    """CVXPY's dual values of (1) are λ_i = sign ξ_i wherever ξ_i ≠ 0 (the sign convention the
    certificate relies on), and the model is the literal one: S is (r+1)×(r+1)."""
    priced = 0
    for seed in range(6):
        instance = random_instance(seed)
        model = mvu_oos_problem(instance)
        k, r = instance.Y.shape
        assert model.S.shape == (r + 1, r + 1) and model.xi.shape == (k,)
        model.problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
        xi = model.xi.value
        lam = np.asarray(model.distances.dual_value)
        big = np.abs(xi) > 1e-5
        priced += big.sum()
        np.testing.assert_allclose(lam[big], np.sign(xi[big]), atol=1e-6)
        np.testing.assert_allclose(model.S.value[:r, :r], np.eye(r), atol=1e-9)
    assert priced >= 5


def test_scs_cross_checks_clarabel():
    for seed in (1, 7):
        instance = random_instance(seed)
        clarabel = solve_mvu_oos_cvxpy(instance)
        scs = solve_mvu_oos_cvxpy(instance, solver="SCS")
        assert scs.objective == pytest.approx(clarabel.objective, abs=1e-5)


# -------------------------------------------------------------------- closed forms
def test_weak_duality_on_random_points():
    """g(λ) ≤ f(y, s) for every λ in the box (including 1 + 1ᵀλ ≤ 0) and feasible (y, s)."""
    rng = np.random.default_rng(0)
    m, k, r = 400, 5, 2
    Y = rng.normal(size=(m, k, r))
    D = rng.uniform(0, 3, size=(m, k))
    lam = rng.uniform(-1, 1, size=(m, k))
    lam[:50] = -1.0                                                   # 1 + 1ᵀλ < 0: repaired on the ray
    y = rng.normal(size=(m, r))
    s = (y**2).sum(axis=1) + rng.exponential(size=m)
    f, _ = primal_objective(y, Y, D, s)
    g = dual_bound(lam, Y, D)
    assert np.all(np.isfinite(g)) and np.all(g <= f)
    assert np.all(dual_bound(np.zeros((m, k)), Y, D) == 0.0)


def test_optimal_s_for_fixed_y():
    """s*(y) = max(‖y‖², weighted median) minimises f(y, ·) over s ≥ ‖y‖²."""
    rng = np.random.default_rng(1)
    for k in (1, 2, 3, 6):
        Y = rng.normal(size=(30, k, 2))
        D = rng.uniform(0, 4, size=(30, k))
        y = rng.normal(size=(30, 2)) * 0.5
        f_star, s_star = primal_objective(y, Y, D)
        assert np.all(s_star >= (y**2).sum(axis=1))
        for _ in range(20):
            s = (y**2).sum(axis=1) + rng.exponential(2.0, size=30)
            assert np.all(f_star <= primal_objective(y, Y, D, s)[0] + 1e-12)


# ------------------------------------------------------------------------ batching
def test_batched_equals_single_instances():
    rng = np.random.default_rng(2)
    m, k, r = 12, 6, 2
    Y = rng.normal(size=(m, k, r)) * 3
    D = ((Y - rng.normal(size=(m, 1, r))) ** 2).sum(axis=2) * rng.uniform(0.5, 2.0, size=(m, k))
    batch, info = place_points(Y, D, full_output=True)
    assert info["converged"].all()
    for i in range(m):
        single = solve_mvu_oos(MVUOOSInstance(Y=Y[i], sqdist=D[i]))
        assert single.status == "optimal"
        np.testing.assert_allclose(batch.y[i], single.extra["y"], atol=1e-9)
        assert batch.objective[i] == pytest.approx(single.objective, abs=1e-9)
        assert batch.dual_bound[i] == pytest.approx(single.dual_bound, abs=1e-9)


def test_large_batch_is_certified():
    """A swiss-roll-like batch: every point placed with a valid certificate and a small gap."""
    rng = np.random.default_rng(3)
    n, m = 400, 1500
    t = 1.5 * np.pi * (1 + 2 * rng.uniform(size=n + m))
    h = 10 * rng.uniform(size=n + m)
    X = np.c_[t * np.cos(t), h, t * np.sin(t)]
    Y = np.c_[t, h]
    Y -= Y[:n].mean(axis=0)
    Yn, D, index = neighbour_arrays(X[:n], Y[:n], X[n:], 6, chunk_size=500)
    brute = ((X[n:, None, :] - X[None, :n, :]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(index, np.argsort(brute, axis=1, kind="stable")[:, :6])
    np.testing.assert_allclose(D, np.sort(brute, axis=1)[:, :6], rtol=1e-12)
    np.testing.assert_array_equal(Yn, Y[:n][index])
    placed, info = place_points(Yn, D, full_output=True)
    assert np.all(placed.dual_bound <= placed.objective)
    assert np.all(placed.s >= (placed.y**2).sum(axis=1) - 1e-12 * info["scale"])
    assert info["converged"].mean() >= 0.995
    assert np.all(info["gap"] <= 1e-6 * info["scale"])
    assert np.median(info["iterations"]) <= 20


def test_iteration_limit_is_reported_honestly():
    instance = random_instance(5)
    truth = solve_mvu_oos_cvxpy(instance)
    result = solve_mvu_oos(instance, max_iter=1, polish=False)
    assert result.status in ("max_iterations", "inaccurate")
    assert result.dual_bound <= truth.objective + 1e-7
    assert result.objective >= truth.objective - 1e-6


# ---------------------------------------------------------------------- refinement
def test_refinement_decreases_the_patch_energy():
    rng = np.random.default_rng(4)
    m, k, r = 300, 6, 2
    Y = rng.normal(size=(m, k, r)) * 2
    D = ((Y - rng.normal(size=(m, 1, r))) ** 2).sum(axis=2) * rng.uniform(0.7, 1.5, size=(m, k))
    start = place_points(Y, D).y
    refined, energy = refine_points(start, Y, D)
    before = stress(start, Y, D)
    assert np.all(energy <= before)
    assert energy.sum() < 0.9 * before.sum()
    np.testing.assert_allclose(energy, stress(refined, Y, D))
    # a stationary point: the gradient 4 Σ e_i (y − y_i) of (3.26) vanishes (relative)
    diff = refined[:, None, :] - Y
    e = (diff**2).sum(axis=2) - D
    grad = 4 * np.einsum("mk,mkr->mr", e, diff)
    scale = 4 * np.einsum("mk,mkr->mr", np.abs(e), np.abs(diff)) + 1e-12
    assert np.median(np.abs(grad).max(axis=1) / scale.max(axis=1)) < 1e-6


def test_refinement_never_accepts_an_increase():
    """Neighbours on a line, the new point near it and D_i = 1: the patch is too short, the
    curvature is clipped and full Newton steps overshoot (E grows for nearly every point);
    the line search must still never let E grow."""
    rng = np.random.default_rng(10)
    m, k = 300, 6
    Y = np.c_[np.linspace(-1, 1, k), np.zeros(k)][None] + 0.01 * rng.normal(size=(m, k, 2))
    D = np.ones((m, k))
    y = 0.1 * rng.normal(size=(m, 2))
    before = stress(y, Y, D)
    for _ in range(3):                                                 # one Newton step at a time
        y, energy = refine_points(y, Y, D, max_iter=1)
        assert np.all(energy <= before)
        assert np.mean(energy < before) > 0.5
        before = energy


def test_exact_distances_recover_the_point():
    """Distances measured from a point of the embedding: the SDP finds it and the
    refinement polishes it to E = 0."""
    rng = np.random.default_rng(5)
    m, k, r = 100, 5, 2
    Y = rng.normal(size=(m, k, r)) * 2
    target = rng.normal(size=(m, r)) * 0.7
    D = ((Y - target[:, None, :]) ** 2).sum(axis=2)
    placed = place_points(Y, D)
    np.testing.assert_allclose(placed.y, target, atol=1e-6)
    refined, energy = refine_points(placed.y, Y, D)
    np.testing.assert_allclose(refined, target, atol=1e-10)
    assert np.all(energy <= 1e-18)


# ------------------------------------------------------------- LLE and consistency
def test_lle_weights_sum_to_one_and_reproduce_affine_combinations():
    rng = np.random.default_rng(6)
    m, k, d = 50, 4, 3                                               # k = d + 1: a simplex
    Xn = rng.normal(size=(m, k, d))
    w_true = rng.dirichlet(np.ones(k), size=m) * 1.4 - 0.1           # affine (some negative) weights
    w_true /= w_true.sum(axis=1, keepdims=True)
    x = np.einsum("mk,mkd->md", w_true, Xn)
    w = lle_weights(x, Xn, reg=1e-12)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(w, w_true, atol=1e-6)
    Yn = rng.normal(size=(m, k, 2))
    np.testing.assert_allclose(lle_place(x, Xn, Yn, reg=1e-12), np.einsum("mk,mkr->mr", w_true, Yn), atol=1e-5)
    # more neighbours than d + 1 (singular local Gram): still normalised, still reconstructing
    Xn8 = rng.normal(size=(m, 8, d))
    x8 = Xn8[:, :4].mean(axis=1)
    w8 = lle_weights(x8, Xn8)
    np.testing.assert_allclose(w8.sum(axis=1), 1.0, atol=1e-12)
    assert np.max(np.linalg.norm(np.einsum("mk,mkd->md", w8, Xn8) - x8, axis=1)) < 0.05


def test_linear_fit_error_and_consistency_ratio():
    rng = np.random.default_rng(7)
    Y = rng.normal(size=(60, 2))
    Q = rng.normal(size=(3, 2))
    assert linear_fit_error(Y @ Q.T, Y) <= 1e-10                    # X = QY exactly
    assert linear_fit_error(Y**2, Y) > 1.0                           # not a linear image
    assert linear_fit_error(Y + 5.0, Y) > 1.0                        # a translation is not linear
    oos = Y @ Q[:2].T + 0.1 * rng.normal(size=(60, 2))             # out of sample: noisier
    full = Y @ Q[:2].T + 0.05 * rng.normal(size=(60, 2))
    ratio = consistency_ratio(oos, Y, full, Y)
    assert ratio == pytest.approx(linear_fit_error(oos, Y) / linear_fit_error(full, Y))
    assert 1.2 < ratio < 3.5
    assert consistency_ratio(oos, Y, Y @ Q[:2].T, Y) == float("inf")   # the embeddings agree up to Q
    A, B, C = split_abc(101, 21, random_state=0)
    assert len(A) == len(B) == 40 and len(C) == 21
    assert len(np.unique(np.concatenate([A, B, C]))) == 101


def test_out_of_sample_methods_on_a_plane():
    """A flat 2-D sheet in R³ embedded by its own coordinates. The SDP is optimal but biased
    towards the origin (its term s = ‖y‖² costs 2‖y‖ per unit moved, the residuals only
    2Σ|(y − y_i)ᵀδ| in a small neighbourhood), so its placements are no better than the true
    points in its own objective; the refinement ("sdp cg") and LLE recover the coordinates."""
    rng = np.random.default_rng(8)
    U = rng.uniform(-3, 3, size=(400, 2))
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0][:, :2]
    X = U @ R.T
    U_new = rng.uniform(-2.5, 2.5, size=(50, 2))
    X_new = U_new @ R.T
    Yn, D, _ = neighbour_arrays(X, U, X_new, 6)
    sdp = out_of_sample(X, U, X_new, 6, "sdp")
    np.testing.assert_array_equal(sdp, place_points(Yn, D).y)
    at_truth = primal_objective(U_new, Yn, D, (U_new**2).sum(axis=1))[0]
    assert np.all(primal_objective(sdp, Yn, D)[0] <= at_truth + 1e-9 * np.maximum(D.max(axis=1), 1.0))
    assert np.median(np.linalg.norm(sdp - U_new, axis=1)) > 0.05          # the bias is real
    assert np.max(np.linalg.norm(out_of_sample(X, U, X_new, 6, "sdp_cg") - U_new, axis=1)) < 1e-6
    assert np.max(np.linalg.norm(out_of_sample(X, U, X_new, 6, "lle") - U_new, axis=1)) < 0.05
    with pytest.raises(ValueError, match="method must be one of"):
        out_of_sample(X, U, X_new, 6, "isomap")


# ----------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "Y, sqdist, match",
    [
        (np.zeros((1, 2)), [1.0], "at least r neighbours"),
        (np.array([[np.nan, 0.0], [1.0, 1.0]]), [1.0, 1.0], "NaN"),
        (np.zeros((3, 2)), [1.0, np.nan, 1.0], "NaN"),
        (np.zeros((3, 2)), [1.0, 1.0], "one squared distance per row of Y"),
        (np.zeros((3, 2)), [1.0, -0.5, 1.0], "squared distances"),
        (np.zeros(3), [1.0, 1.0, 1.0], "2-D"),
    ],
)
def test_bad_instances(Y, sqdist, match):
    with pytest.raises(ValueError, match=match):
        MVUOOSInstance(Y=Y, sqdist=sqdist)


def test_bad_batches():
    Y = np.zeros((4, 3, 2))
    D = np.ones((4, 3))
    with pytest.raises(ValueError, match="at least r = 3 neighbours"):
        place_points(np.zeros((4, 2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="sqdist must have shape"):
        place_points(Y, np.ones((4, 2)))
    with pytest.raises(ValueError, match="3-D"):
        place_points(Y[0], D[0])
    with pytest.raises(ValueError, match="NaN"):
        place_points(Y, np.where(np.arange(3) == 1, np.nan, D))
    with pytest.raises(ValueError, match=">= 0"):
        place_points(Y, -D)
    with pytest.raises(ValueError, match="y0 must have shape"):
        refine_points(np.zeros((4, 3)), Y, D)
    X = np.zeros((10, 5))
    with pytest.raises(ValueError, match="columns of X_train"):
        neighbour_arrays(X, np.zeros((10, 2)), np.zeros((3, 4)), 3)
    with pytest.raises(ValueError, match="at least r = 2"):
        neighbour_arrays(X, np.zeros((10, 2)), np.zeros((3, 5)), 1)
    with pytest.raises(ValueError, match="build|built from an embedding"):
        MVUOOSInstance.from_data(X, None, 0.1)


# ------------------------------------------------------------- files and registry
def test_file_round_trip_solve_and_certify(tmp_path):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(30, 4))
    Y = X[:, :2] * 1.5
    x_new = rng.normal(size=4)
    instance = MVUOOSInstance.from_points(X, Y, x_new, 5)
    sq = ((X - x_new) ** 2).sum(axis=1)
    np.testing.assert_allclose(instance.sqdist, np.sort(sq)[:5])
    np.testing.assert_allclose(instance.Y, Y[np.argsort(sq)[:5]])

    path = tmp_path / "oos.npz"
    save_instance(instance, path)
    loaded = load_instance(path)
    assert isinstance(loaded, MVUOOSInstance) and loaded.dim == 3
    np.testing.assert_array_equal(loaded.Y, instance.Y)
    np.testing.assert_array_equal(loaded.sqdist, instance.sqdist)
    with np.load(path, allow_pickle=False) as data:
        assert str(data["problem"]) == "mvu_oos" and set(data.files) == {"problem", "Y", "sqdist"}

    result = sdpembed.solve(loaded)
    assert result.method == "ipm" and result.status == "optimal"
    certificate = sdpembed.certify(loaded, result, ground_truth=True)
    assert certificate.passed, certificate.reasons
    assert certificate.optimum_source.startswith("computed with CVXPY")

    stored = MVUOOSInstance(Y=instance.Y, sqdist=instance.sqdist, optimum=result.objective)
    save_instance(stored, path)
    assert load_instance(path).optimum == pytest.approx(result.objective)
    assert sdpembed.certify(load_instance(path), sdpembed.solve(stored, "cvxpy")).passed

    # a matrix whose identity block is wrong fails the structural check
    bad = result.solution.copy()
    bad[0, 0] = 1.1
    failed = sdpembed.certify(loaded, bad, optimum=result.objective)
    assert not failed.passed and any("violation" in reason for reason in failed.reasons)
    np.testing.assert_array_equal(MVUOOSInstance.point(result.solution), result.extra["y"])
    np.testing.assert_array_equal(MVUOOSInstance.matrix(result.extra["y"], result.extra["s"]), result.solution)


def test_missing_arrays_in_a_file(tmp_path):
    path = tmp_path / "bad.npz"
    np.savez(path, problem=np.array("mvu_oos"), Y=np.zeros((2, 1)))
    with pytest.raises(ValueError, match="needs the array 'sqdist'"):
        load_instance(path)


def test_command_line_solve_and_verify(tmp_path, capsys):
    from sdpembed.cli import main

    instance = random_instance(11)
    path, solution = tmp_path / "oos.npz", tmp_path / "sol.npz"
    instance.save(path)
    assert main(["solve", str(path), "--out", str(solution)]) == 0
    with np.load(solution, allow_pickle=False) as data:
        assert data["S"].shape == (instance.dim, instance.dim) and float(data["dual_bound"]) <= float(data["objective"])
        np.testing.assert_array_equal(data["y"], data["S"][:-1, -1])        # the contract's y beside S
    assert main(["verify", str(path), str(solution)]) == 0
    assert "PASS" in capsys.readouterr().out
    assert main(["make-instance", "mvu_oos", "--out", str(tmp_path / "x.npz")]) == 2
    assert "from_points" in capsys.readouterr().err


def test_progress_lines_only_when_asked(capsys):
    """The batched interior point prints, when asked, the points still active and their certified gaps
    every K iterations and at its last; unasked, nothing."""
    rng = np.random.default_rng(3)
    Y, D = rng.standard_normal((40, 6, 2)), rng.uniform(0.5, 2.0, (40, 6))
    quiet = place_points(Y, D)
    assert capsys.readouterr().out == ""
    loud = place_points(Y, D, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("oos ipm it") and "active" in line and "relative gap" in line
                         for line in lines)
    assert "of 40" in lines[0] and len(lines) >= 2
    np.testing.assert_array_equal(loud.y, quiet.y)
    solve_mvu_oos(random_instance(11), verbose=True)
    out = capsys.readouterr().out
    assert "oos ipm it   0" in out and "optimal" in out
