"""Unit tests of the ADMM steps (10), (11), (13), its stopping rule and its options."""

import numpy as np
import pytest

from sdpembed import NuMaxInstance, solve
from sdpembed.problems.numax_certificate import box_violation, certified_lower_bound
from sdpembed.problems.numax_operator import SecantOperator
from sdpembed.solvers.numax.admm import _shrink_eigenvalues, box_trace_admm, least_squares_step, secant_span
from sdpembed.solvers.numax.admm_control import ADMMPenalty, ADMMStopping


@pytest.mark.parametrize("beta", [0.3, 0.7, 2.0])
def test_shrinkage_is_the_prox_of_trace_on_the_psd_cone(beta):
    """(11): P = V(σ − 1/β)₊Vᵀ solves min tr P + β/2‖P − M‖² over P ⪰ 0 — check its KKT
    conditions: Z = I − β(M − P) ⪰ 0 and ⟨Z, P⟩ = 0 (with P ⪰ 0)."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 6))
    M = A + A.T
    P, rank = _shrink_eigenvalues(M, 1.0 / beta)
    Z = np.eye(6) - beta * (M - P)
    assert np.linalg.eigvalsh(P)[0] >= -1e-12
    assert np.linalg.eigvalsh(Z)[0] >= -1e-10
    assert abs(np.sum(Z * P)) <= 1e-10
    assert rank == int((np.linalg.eigvalsh(M) > 1 / beta).sum())
    wrong, _ = _shrink_eigenvalues(M, 2.0 / beta)  # a wrong threshold breaks the KKT conditions
    Zw = np.eye(6) - beta * (M - wrong)
    assert np.linalg.eigvalsh(Zw)[0] < -1e-6 or abs(np.sum(Zw * wrong)) > 1e-6


def test_least_squares_step_is_exact():
    """(13): the solver's step satisfies the normal equations (I + 𝒜*𝒜)L = W + 𝒜*(b)."""
    rng = np.random.default_rng(1)
    V = rng.standard_normal((9, 5))
    op = SecantOperator(V)
    W = rng.standard_normal((5, 5))
    W = W + W.T
    b = rng.standard_normal(9)
    K_inv = np.linalg.inv(op.gram_squared() + np.eye(9))
    L, AL = least_squares_step(op, K_inv, W, b)
    np.testing.assert_allclose(L + op.adjoint(op.apply(L)), W + op.adjoint(b), atol=1e-10)
    np.testing.assert_allclose(AL, op.apply(L), atol=1e-10)


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
    result = solve(instances["digits"], "admm", stopping=ADMMStopping(time_limit=0.0, check_every=1))
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
        (lambda: {"penalty": ADMMPenalty(eta=2.0)}, "eta"),
        (lambda: {"penalty": ADMMPenalty(beta=0.0)}, "beta"),
        (lambda: {"penalty": ADMMPenalty(adapt_until=-1)}, "adapt_until"),
        (lambda: {"penalty": ADMMPenalty(adaptive="yes")}, "adaptive"),
        (lambda: {"max_iter": 0}, "max_iter"),                  # the registry's max_iter is the ADMM's
        (lambda: {"stopping": ADMMStopping(max_iter=0)}, "max_iter"),
        (lambda: {"stopping": ADMMStopping(check_every=0)}, "check_every"),
        (lambda: {"stopping": ADMMStopping(tol=-1e-5)}, "tol"),
        (lambda: {"stopping": ADMMStopping(gap_tol=float("nan"))}, "gap_tol"),
        (lambda: {"stopping": ADMMStopping(time_limit=-1.0)}, "time_limit"),
        (lambda: {"stopping": {"max_iter": 5}}, "stopping must be of type ADMMStopping"),
        (lambda: {"penalty": 1.0}, "penalty must be of type ADMMPenalty"),
    ],
)
def test_bad_options(instances, options, message):
    with pytest.raises(ValueError, match=message):
        solve(instances["gaussian"], "admm", **options())


def test_max_iter_of_the_registry_keeps_the_rest_of_the_stopping_bundle(instances):
    result = solve(instances["gaussian"], "admm", stopping=ADMMStopping(check_every=1), max_iter=5)
    assert result.iterations == 5 and result.status == "max_iterations"
    np.testing.assert_array_equal(result.history["check_iteration"], np.arange(1, 6))


def test_bad_bounds_and_warm_start():
    V = np.eye(3)
    with pytest.raises(ValueError, match="lo must not exceed hi"):
        box_trace_admm(V, np.full(3, 1.2), np.full(3, 0.8))
    with pytest.raises(ValueError, match="NaN"):
        box_trace_admm(V, np.nan, 1.1)
    with pytest.raises(ValueError, match="length 3"):
        box_trace_admm(V, [0.9, 0.9], 1.1)
    with pytest.raises(ValueError, match="secants"):
        box_trace_admm(np.full((3, 3), np.nan), 0.9, 1.1)
    state = box_trace_admm(V, 0.9, 1.1).extra["state"]
    with pytest.raises(ValueError, match="multipliers"):
        box_trace_admm(np.eye(4), 0.9, 1.1, warm_start=state)
    with pytest.raises(ValueError, match="dimension"):
        box_trace_admm(np.eye(4)[:3], 0.9, 1.1, warm_start=state)


def test_warm_start_with_new_secants_moves_to_the_new_span():
    """Column generation warm-starts with more secants than before: a state from a low-rank
    span must be lifted into the new span, never used to project the new secants."""
    from sdpembed.formulations.numax import solve_box_trace_cvxpy

    rng = np.random.default_rng(6)
    low = rng.standard_normal((10, 2)) @ rng.standard_normal((2, 6))
    low /= np.linalg.norm(low, axis=1, keepdims=True)
    first = box_trace_admm(low, 0.9, 1.1)
    assert first.extra["reduced_dim"] == 2
    extra = rng.standard_normal((5, 6))
    V = np.vstack([low, extra / np.linalg.norm(extra, axis=1, keepdims=True)])
    state = first.extra["state"]
    state.omega = np.concatenate([state.omega, np.zeros(5)])
    warm = box_trace_admm(V, 0.9, 1.1, warm_start=state)
    truth = solve_box_trace_cvxpy(V, 0.9, 1.1, solver="CLARABEL")
    assert warm.status == "optimal" and warm.max_violation <= 1e-6
    assert abs(warm.objective - truth.objective) <= 1e-4 * truth.objective


def test_infeasible_box_is_never_optimal():
    result = box_trace_admm(np.eye(2)[:1], -np.inf, -1.0, stopping=ADMMStopping(max_iter=500))
    assert result.status == "max_iterations"
    assert result.max_violation > 0.5


def test_too_many_secants_fail_clearly():
    V = np.eye(5)[np.arange(30) % 5]
    with pytest.raises(ValueError, match="max_constraints"):
        box_trace_admm(V, 0.9, 1.1, max_constraints=20)


def test_inverse_updates_match_a_fresh_inverse():
    """Appending rows to, and deleting rows from, (I + 𝒜𝒜*)⁻¹ give the inverse of the new matrix."""
    from sdpembed.problems.numax_operator import SecantOperator
    from sdpembed.solvers.numax.admm import least_squares_inverse, restrict_inverse

    rng = np.random.default_rng(5)
    V = rng.standard_normal((60, 7))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    K = (V @ V.T) ** 2 + np.eye(60)
    head = np.linalg.inv(K[:40, :40])
    np.testing.assert_allclose(least_squares_inverse(SecantOperator(V), head), np.linalg.inv(K), atol=1e-10)
    keep = rng.random(60) < 0.7
    np.testing.assert_allclose(restrict_inverse(np.linalg.inv(K), keep), np.linalg.inv(K[np.ix_(keep, keep)]),
                               atol=1e-10)
    # an inverse that belongs to other secants is detected and not reused
    wrong = np.linalg.inv(K[20:60, 20:60])
    np.testing.assert_allclose(least_squares_inverse(SecantOperator(V), wrong), np.linalg.inv(K), atol=1e-10)


def unit_secants(seed: int, n: int, dim: int) -> np.ndarray:
    """The unit secants of all pairs of n Gaussian points in R^dim."""
    X = np.random.default_rng(seed).standard_normal((n, dim))
    i, j = np.triu_indices(n, 1)
    V = X[i] - X[j]
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def test_the_full_rank_linear_program_solves_the_sdp_when_its_optimum_is_definite():
    """δ = 0.005: the optimum has full rank, so the SDP without its cone (a linear program) has the same
    solution, and its multipliers certify it; at δ = 0.3 the cone binds and the program's solution is refused."""
    from sdpembed.formulations.numax import solve_box_trace_cvxpy
    from sdpembed.solvers.numax.admm import full_rank_linear_program

    V = unit_secants(0, 16, 6)
    lo, hi = np.full(V.shape[0], 0.995), np.full(V.shape[0], 1.005)
    P, y = full_rank_linear_program(V, lo, hi)
    truth = solve_box_trace_cvxpy(V, lo, hi, solver="CLARABEL")
    assert np.linalg.eigvalsh(P)[0] > 0.0
    assert box_violation(np.einsum("ij,jk,ik->i", V, P, V), lo, hi) <= 1e-8
    bound, _ = certified_lower_bound(SecantOperator(V), lo, hi, y)
    assert bound <= truth.objective * (1 + 1e-7)
    assert np.trace(P) - bound <= 1e-9 * bound
    assert abs(np.trace(P) - truth.objective) <= 1e-6 * truth.objective
    assert full_rank_linear_program(V, np.full(V.shape[0], 0.7), np.full(V.shape[0], 1.3)) is None


def test_the_explicit_admm_settles_a_full_rank_optimum_by_its_linear_program():
    """δ = 0.005 on 24 Gaussian points in R^10: the optimum has full rank and the problem is degenerate; the
    explicit ADMM reached its 20,000 iterations uncertified. Now its linear program ends the run, certified."""
    X = np.random.default_rng(0).standard_normal((24, 10))
    instance = NuMaxInstance.from_data(X, None, 0.005, point_form=True)
    result, truth = solve(instance, "admm"), solve(instance, "cvxpy", solver="CLARABEL")
    assert result.status == "optimal", result.message
    assert result.iterations < 2000
    assert instance.max_violation(result.solution) <= 1e-6
    assert truth.dual_bound <= result.objective + 1e-6 * truth.objective
    assert result.dual_bound <= truth.objective + 1e-6 * truth.objective


#: Review r24's fuzz, seed 1848: ten unit secants of near-duplicate points (four directions, some rows 1e-6
#: apart), δ = 0.005.
NEAR_PARALLEL_SECANTS = [
    [-0.7922594739426533, -0.6101139575910636, 0.009267399887794217],
    [0.9202581780822687, 0.170794151934769, -0.35207136114371274],
    [0.92025802518837, 0.17079067517641375, -0.35207344737879065],
    [-0.7324712851618451, -0.6777510474550393, 0.0643376568344836],
    [0.9202584380523371, 0.17079957072576535, -0.3520680528440021],
    [0.9202582851824945, 0.1707960939815183, -0.3520701390825851],
    [-0.5817708962874675, -0.7939662451327024, 0.1765225929527285],
    [0.6534606030058502, -0.4524701427051353, -0.6068443048094175],
    [-0.9202579198410362, -0.1708033008835417, 0.35206759773818325],
    [-0.920257766986852, -0.17079982413933684, 0.35206968397512517],
]


def test_a_gap_below_minus_gap_tol_is_never_optimal():
    """tr P below the run's own proved lower bound by more than gap_tol is P's infeasibility (within feas_tol),
    not a gap: the ADMM stopped 'optimal' with tr P 1.79e-5 below its bound (violation 9.9e-7), 1.8e-5 below the
    optimum; it now iterates on until |gap| <= gap_tol, as LMNN and the MVU interior point require."""
    instance = NuMaxInstance(delta=0.005, secants=np.array(NEAR_PARALLEL_SECANTS))
    for method in ("admm", "cg"):
        result = solve(instance, method)
        assert result.status != "optimal" or abs(result.relative_gap) <= 1e-5, (method, result.message)
        assert result.status == "optimal", result.message
