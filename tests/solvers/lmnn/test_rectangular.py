"""LMNN with a rectangular L (Sec. 2.1.8): the gradient against finite differences and against the
M-gradient (2.14) of Algorithm 3, the hinge searches against each other, the convex optimum reached
at r = d, a local status (never ``optimal``) below it."""

import numpy as np
import pytest

from sdpembed.problems import LMNNInstance
from sdpembed.registry import solve
from sdpembed.solvers.lmnn.gradient import lmnn_gradient_matrix
from sdpembed.solvers.lmnn.rectangular import RECTANGULAR_STATUSES, rectangular_loss, solve_lmnn_rectangular


@pytest.fixture(scope="module")
def instance():
    rng = np.random.default_rng(0)
    centres = 2.0 * rng.standard_normal((3, 4))
    y = np.repeat(np.arange(3), 20)
    X = centres[y] + rng.standard_normal((60, 4))
    X[:, 3] *= 5.0                                 # a noisy direction the metric should shrink
    return LMNNInstance.from_data(X, y, k=3)


@pytest.fixture(scope="module")
def optimum(instance):
    result = solve(instance, "fast")
    assert result.status == "optimal"
    return result


def test_gradient_matches_finite_differences(instance):
    rng = np.random.default_rng(1)
    L = rng.standard_normal((2, instance.dim))
    loss, grad, active = rectangular_loss(instance, L, search="brute")
    assert loss == pytest.approx(instance.objective(L.T @ L), rel=1e-12) and active > 0
    h = 1e-6
    numeric = np.empty_like(L)
    for a in range(L.shape[0]):
        for b in range(L.shape[1]):
            E = np.zeros_like(L)
            E[a, b] = h
            up, down = L + E, L - E
            numeric[a, b] = (instance.objective(up.T @ up) - instance.objective(down.T @ down)) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5 * np.abs(numeric).max())
    # the chain rule through M = LᵀL: 2 L G with G the (sub)gradient (2.14) of Algorithm 3's code
    np.testing.assert_allclose(grad, 2.0 * L @ lmnn_gradient_matrix(instance, L.T @ L), rtol=1e-10,
                               atol=1e-10 * np.abs(grad).max())


@pytest.mark.parametrize("search", ["radius", "balltree", "auto"])
def test_searches_agree(instance, search):
    L = np.random.default_rng(2).standard_normal((3, instance.dim))
    brute = rectangular_loss(instance, L, search="brute")
    other = rectangular_loss(instance, L, search=search)
    assert other[2] == brute[2]
    assert other[0] == pytest.approx(brute[0], rel=1e-12)
    np.testing.assert_allclose(other[1], brute[1], rtol=1e-12, atol=1e-12 * np.abs(brute[1]).max())


def test_square_L_reaches_the_convex_optimum(instance, optimum):
    """At r = d from the identity (the start of the convex solvers) the loss reaches the certified
    optimum of (2.11): the status is still the local one, never "optimal"."""
    result = solve_lmnn_rectangular(instance, init="identity")
    assert result.status == "converged"
    assert result.objective == pytest.approx(optimum.objective, rel=1e-4)
    assert result.objective >= optimum.dual_bound - 1e-9 * optimum.objective
    np.testing.assert_allclose(result.metric, result.L.T @ result.L)


def test_rectangular_L_is_a_local_answer(instance, optimum):
    for r in (1, 2):
        result = solve_lmnn_rectangular(instance, r, search="balltree")
        assert result.L.shape == (r, instance.dim) and result.status in RECTANGULAR_STATUSES
        assert result.status != "optimal"
        # a rank-r metric is feasible for the convex SDP: never below its certified bound
        assert result.objective >= optimum.dual_bound
        assert result.history[-1] <= result.history[0]
    short = solve_lmnn_rectangular(instance, 2, max_iter=2)
    assert short.status == "max_iterations" and not short.converged


def test_bad_input(instance):
    with pytest.raises(ValueError, match="n_components"):
        solve_lmnn_rectangular(instance, instance.dim + 1)
    with pytest.raises(ValueError, match="init"):
        solve_lmnn_rectangular(instance, 2, init=np.eye(3))
    with pytest.raises(ValueError, match="init"):
        solve_lmnn_rectangular(instance, 2, init="random")
    with pytest.raises(ValueError, match="search"):
        rectangular_loss(instance, np.eye(2, instance.dim), search="kdtree")
