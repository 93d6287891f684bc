"""The CVXPY ground truth: statuses are propagated honestly, bad solvers rejected."""

import numpy as np
import pytest

from sdpembed import solve
from sdpembed.formulations.numax import box_trace_problem


def test_unconverged_scs_is_never_optimal(instances):
    result = solve(instances["digits"], "cvxpy", solver="SCS", max_iters=5)
    assert result.status != "optimal"
    assert result.status in {"inaccurate", "error", "max_iterations"}


def test_model_reads_like_the_paper(instances):
    instance = instances["gaussian"]
    lo, hi = instance.bounds()
    problem, P, (lower, idx_lo), (upper, idx_hi) = box_trace_problem(instance.secant_matrix, lo, hi)
    assert P.shape == (20, 20) and P.is_psd()
    assert len(problem.constraints) == 2 and len(idx_lo) == len(idx_hi) == instance.n_constraints
    assert problem.objective.NAME == "minimize"


def test_identity_is_feasible_so_optimum_is_at_most_n(solved, instances):
    for name, instance in instances.items():
        assert instance.max_violation(np.eye(instance.dim)) == 0.0
        assert solved[name]["clarabel"].objective <= instance.dim


def test_bad_solver_name(instances):
    with pytest.raises(ValueError, match="solver must be one of"):
        solve(instances["gaussian"], "cvxpy", solver="MOSEK")


def test_cvxpy_optimal_is_checked_by_our_certificate(instances):
    """A loose SCS run that calls itself optimal is downgraded when the certificate disagrees."""
    result = solve(instances["digits"], "cvxpy", solver="SCS", eps_abs=1e-2, eps_rel=1e-2)
    assert result.status == "inaccurate"
    assert "certificate" in result.message


def test_bad_bounds_in_cvxpy():
    from sdpembed.formulations.numax import solve_box_trace_cvxpy

    with pytest.raises(ValueError, match="NaN"):
        solve_box_trace_cvxpy(np.eye(2), np.nan, 1.2)
    with pytest.raises(ValueError, match="exceed"):
        solve_box_trace_cvxpy(np.eye(2), 1.2, 0.8)
