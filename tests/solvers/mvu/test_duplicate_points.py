"""The MVU SDPs on points with duplicates: edges of length 0 met exactly.

A duplicate pair's edge asks 𝒜(K)_e ≤ 0 (= 0), so the SDP has no strictly feasible point, and a solver
meets that edge only to a tolerance: pulled apart by a few 1e-6 of τ, the pair moves tr K past the
optimum, so that a dual bound close to it no longer bounds its distance to the optimum.
``MVUInstance.feasible_point`` moves K onto those edges (duplicates merged; the inequality variant then
shrunk onto its other edges), and every solver (interior point, low rank, facial reduction) judges and
returns that K.
"""

import numpy as np
import pytest

from sdpembed import solve
from sdpembed.problems.mvu import MVUInstance

from .conftest import certified_truth


def _with_duplicates(seed: int) -> MVUInstance:
    X = np.random.default_rng(seed).standard_normal((10, 2)) * 3
    return MVUInstance.from_points(np.vstack([X, X[:2]]), 3, "inequality", angles=False)


def test_feasible_point_meets_every_inequality_and_keeps_k_psd_and_centred():
    instance = _with_duplicates(4)
    assert np.count_nonzero(instance.sqdist <= 0) == 2
    Y = np.random.default_rng(1).standard_normal((instance.n, 3)) * 3
    Y -= Y.mean(axis=0)
    K = Y @ Y.T
    F = instance.feasible_point(K)
    a = instance.edge_values(F)
    scale = float(np.trace(K))
    assert np.all(np.abs(a[instance.sqdist <= 0]) <= 1e-12 * scale)
    assert np.all(a <= instance.sqdist * (1 + 1e-12) + 1e-12 * scale)
    assert np.max(np.abs(F - F.T)) == 0.0
    assert np.linalg.eigvalsh(F)[0] >= -1e-12 * scale
    assert abs(F.sum()) <= 1e-10 * scale
    assert np.trace(F) <= np.trace(K)
    slack = MVUInstance(instance.edges, instance.sqdist, instance.n, "slack", omega=0.9)
    assert np.array_equal(slack.feasible_point(K), K)
    for variant in ("equality", "min_trace"):
        # merged, not shrunk: the duplicates' edges exact, PSD, centred, trace not raised
        M = MVUInstance(instance.edges, instance.sqdist, instance.n, variant).feasible_point(K)
        assert np.all(np.abs(instance.edge_values(M)[instance.sqdist <= 0]) <= 1e-12 * scale)
        assert np.linalg.eigvalsh(M)[0] >= -1e-12 * scale and abs(M.sum()) <= 1e-10 * scale
        assert np.trace(M) <= np.trace(K)
        np.testing.assert_array_equal(M, instance.merge_duplicates(K))


@pytest.mark.parametrize("seed", [0, 3, 4])
def test_ipm_judges_the_k_it_returns_on_duplicate_points(seed):
    """Before: seed 4 ended ``optimal`` (claimed gap 6.5e-7) with K 8e-9 of τ off a duplicate edge and
    tr K 5.0e-6 above CVXPY's objective; seed 0 with a negative gap."""
    instance = _with_duplicates(seed)
    result = solve(instance, "ipm")
    assert result.max_violation <= 1e-14
    assert result.dual_bound >= result.objective          # K feasible: the bound is above its objective
    if result.status == "optimal":
        assert result.relative_gap <= 1e-6
    assert np.allclose(result.extra["Y"] @ result.extra["Y"].T, result.solution, atol=1e-9 * instance.tau)


# r23-review's fuzz seed 698 (a min_trace graph of 14 points in four sets of duplicates, at unit scale)
EDGES_698 = [[0, 4], [0, 6], [0, 7], [0, 10], [0, 11], [0, 13], [1, 2], [1, 3], [1, 9], [1, 12], [2, 3], [2, 5], [2, 8],
             [2, 9], [2, 10], [2, 12], [3, 5], [3, 8], [3, 9], [3, 10], [3, 12], [4, 6], [4, 7], [4, 10], [4, 11],
             [4, 13], [5, 8], [5, 10], [6, 7], [6, 10], [7, 10], [7, 11], [7, 13], [8, 10], [9, 12], [11, 13]]
SQDIST_698 = [0.3629961271139713, 1.7646544346147726, 0.3629961271139713, 2.6123756208130584, 0.0, 0.0,
              1.1338748330352486, 1.1338748330352486, 0.0, 0.0, 0.0, 0.0, 0.0, 1.1338748330352486, 0.6052936234915238,
              1.1338748330352486, 0.0, 0.0, 1.1338748330352486, 0.6052936234915238, 1.1338748330352486,
              0.6574667310053914, 0.0, 2.2593986801382857, 0.3629961271139713, 0.3629961271139713, 0.0,
              0.6052936234915238, 0.6574667310053914, 1.3476770073881432, 2.2593986801382857, 0.3629961271139713,
              0.3629961271139713, 0.6052936234915238, 0.0, 0.0]


def _judged_against_cvxpy(instance, method):
    truth = certified_truth(instance)
    result = solve(instance, method)
    if instance.variant != "slack":
        a = instance.edge_values(result.solution)
        assert np.all(np.abs(a[instance.sqdist <= 0]) <= 1e-12 * instance.tau)
    assert np.allclose(result.extra["Y"] @ result.extra["Y"].T, result.solution, atol=1e-9 * instance.tau)
    if result.status == "optimal":
        # an honest optimal: not above the optimum CVXPY's multipliers prove, and within 1e-5 of its objective
        assert result.objective <= truth.dual_bound + 1e-6 * abs(truth.objective)
        assert abs(result.objective - truth.objective) <= 1e-5 * abs(truth.objective)
    return result


@pytest.mark.parametrize("method", ["ipm", "lowrank", "facial"])
def test_seed_698_min_trace_is_not_optimal_beyond_the_optimum(method):
    """Before: the low-rank solver ended ``optimal`` (claimed gap -5.5e-7) with a duplicate pair 2e-7 apart and
    −tr K 1.26e-4 above Clarabel's optimum, its own bound (valid) 1.26e-4 above it too: the gap bounded nothing."""
    instance = MVUInstance(np.array(EDGES_698), np.array(SQDIST_698), 14, "min_trace")
    _judged_against_cvxpy(instance, method)


@pytest.mark.parametrize("variant", ["equality", "min_trace", "inequality", "slack"])
@pytest.mark.parametrize("method", ["ipm", "lowrank", "facial"])
@pytest.mark.parametrize("seed", [1, 3])
def test_every_solver_judges_the_merged_point(variant, method, seed):
    """Before: seed 3's inequality by the low-rank solver ended ``optimal`` 1.5e-6 above CVXPY's proved bound (its
    duplicates pulled apart, only shrunk), and no equality or min_trace K met the duplicates' edges exactly."""
    X = np.random.default_rng(seed).standard_normal((10, 2)) * 3
    instance = MVUInstance.from_points(np.vstack([X, X[:2]]), 3, variant, angles=False,
                                       omega=0.9 if variant == "slack" else None)
    _judged_against_cvxpy(instance, method)
