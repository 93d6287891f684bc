"""Unit tests of the ADMM steps (10), (11), (13), its stopping rule and its options."""

import numpy as np
import pytest

from sdpembed import NuMaxInstance, solve
from sdpembed.operators import SecantOperator
from sdpembed.solvers.numax_admm import _shrink_eigenvalues, box_trace_admm, secant_span


def test_shrinkage_is_the_prox_of_trace_on_the_psd_cone():
    """(11): argmin_P tr P + β/2‖P − M‖² over P ⪰ 0 is V(σ − 1/β)₊Vᵀ — check optimality."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 6))
    M = A + A.T
    beta = 0.7
    P, rank = _shrink_eigenvalues(M, 1.0 / beta)
    assert np.linalg.eigvalsh(P)[0] >= -1e-12
    assert rank == int((np.linalg.eigvalsh(M) > 1 / beta).sum())

    def f(Q):
        return np.trace(Q) + beta / 2 * np.sum((Q - M) ** 2)

    for _ in range(50):  # no PSD perturbation improves the objective
        B = rng.standard_normal((6, 6)) * 0.05
        Q = P + B @ B.T - 0.5 * (B + B.T) * 0.0
        w, U = np.linalg.eigh(Q)
        Q = (U * np.maximum(w, 0)) @ U.T
        assert f(Q) >= f(P) - 1e-12


def test_least_squares_step_is_exact():
    """(13): the Woodbury solve satisfies the normal equations (I + 𝒜*𝒜)L = W + 𝒜*(b)."""
    rng = np.random.default_rng(1)
    V = rng.standard_normal((9, 5))
    op = SecantOperator(V)
    W = rng.standard_normal((5, 5))
    W = W + W.T
    b = rng.standard_normal(9)
    K = op.gram_squared() + np.eye(9)
    c = np.linalg.solve(K, b - op.apply(W))
    L = W + op.adjoint(c)
    np.testing.assert_allclose(L + op.adjoint(op.apply(L)), W + op.adjoint(b), atol=1e-10)
    np.testing.assert_allclose(op.apply(L), b - c, atol=1e-10)


def test_secant_span_basis():
    rng = np.random.default_rng(2)
    V = rng.standard_normal((10, 3)) @ rng.standard_normal((3, 8))
    Q = secant_span(V)
    assert Q.shape == (8, 3)
    np.testing.assert_allclose(V @ Q @ Q.T, V, atol=1e-10)
    assert secant_span(rng.standard_normal((10, 4))) is None


def test_one_sided_bounds_match_cvxpy():
    """The ADMM core with one-sided bounds (NuMax-Class (7), Algorithm 3's truncation)."""
    from sdpembed.formulations.numax import solve_box_trace_cvxpy

    rng = np.random.default_rng(4)
    V = rng.standard_normal((60, 8))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    lo = np.where(np.arange(60) < 30, 0.8, -np.inf)
    hi = np.where(np.arange(60) < 30, np.inf, 1.2)
    admm = box_trace_admm(V, lo, hi)
    truth = solve_box_trace_cvxpy(V, lo, hi, solver="CLARABEL")
    assert admm.status == "optimal" and truth.status == "optimal"
    assert abs(admm.objective - truth.objective) <= 1e-4 * truth.objective
    assert admm.dual_bound <= truth.objective * (1 + 1e-9)


def test_unconverged_run_is_not_optimal(instances):
    result = solve(instances["digits"], "admm", max_iter=5)
    assert result.status == "max_iterations"
    assert result.iterations == 5
    # the certificate is still a valid bound
    assert result.dual_bound <= 12.7802028


def test_time_limit_stops_the_run(instances):
    result = solve(instances["digits"], "admm", time_limit=0.0, check_every=1)
    assert result.status == "max_iterations" and "time limit" in result.message


def test_warm_start_from_a_converged_state_is_fast(instances):
    first = solve(instances["gaussian"], "admm")
    second = solve(instances["gaussian"], "admm", warm_start=first.extra["state"])
    assert second.status == "optimal"
    assert second.iterations < first.iterations / 5


def test_history_traces(instances):
    result = solve(instances["squares49"], "admm")
    h = result.history
    assert len(h["objective"]) == result.iterations == len(h["e1"]) == len(h["e2"])
    assert len(h["dual_bound"]) == len(h["check_iteration"]) > 0
    assert np.all(np.diff(h["check_iteration"]) > 0)


def test_verbose_progress(instances, capsys):
    solve(instances["gaussian"], "admm", verbose=20)
    out = capsys.readouterr().out
    assert "admm it" in out and "gap" in out and "rank" in out


@pytest.mark.parametrize(
    "options, message",
    [
        ({"eta": 2.0}, "eta"),
        ({"beta": 0.0}, "beta"),
        ({"max_iter": 0}, "max_iter"),
        ({"check_every": 0}, "check_every"),
    ],
)
def test_bad_options(instances, options, message):
    with pytest.raises(ValueError, match=message):
        solve(instances["gaussian"], "admm", **options)


def test_bad_bounds_and_warm_start():
    V = np.eye(3)
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        box_trace_admm(V, np.full(3, 1.2), np.full(3, 0.8))
    state = box_trace_admm(V, 0.9, 1.1).extra["state"]
    with pytest.raises(ValueError, match="warm_start"):
        box_trace_admm(np.eye(4), 0.9, 1.1, warm_start=state)


def test_too_many_secants_fail_clearly():
    V = np.eye(5)[np.arange(30) % 5]
    with pytest.raises(ValueError, match="max_constraints"):
        box_trace_admm(V, 0.9, 1.1, max_constraints=20)


def test_unknown_method():
    with pytest.raises(ValueError, match="method must be"):
        solve(NuMaxInstance(delta=0.1, secants=np.eye(2)), "newton")
