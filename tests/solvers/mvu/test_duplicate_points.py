"""The inequality MVU SDP on points with duplicates: edges of length 0 (3.19) met exactly.

A duplicate pair's edge asks 𝒜(K)_e ≤ 0, so the SDP has no strictly feasible point, and an interior
point meets that edge only to a tolerance: pulled apart by a few 1e-6 of τ, the pair lifts tr K above
the optimum, so that a dual bound close to it no longer bounds its distance to the optimum.
``MVUInstance.feasible_point`` moves K onto the constraints (duplicates merged, then shrunk), and the
interior point judges and returns that K.
"""

import numpy as np
import pytest

from sdpembed import solve
from sdpembed.problems.mvu import MVUInstance


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
    for variant in ("equality", "min_trace"):
        other = MVUInstance(instance.edges, instance.sqdist, instance.n, variant)
        assert other.feasible_point(K) is K or np.array_equal(other.feasible_point(K), K)


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
