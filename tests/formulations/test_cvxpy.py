"""What every CVXPY ground truth shares: a back-end that fails, or returns no matrix, gives a NaN
solution and never ``optimal``; a solved model gives the symmetric part of CVXPY's matrix."""

import cvxpy as cp
import numpy as np
import pytest

from sdpembed.datasets import swiss_roll
from sdpembed.formulations.lmnn import solve_lmnn_cvxpy
from sdpembed.formulations.mvu_oos import solve_mvu_oos_cvxpy
from sdpembed.formulations.numax import solve_box_trace_cvxpy
from sdpembed.formulations.sparse_linear import solve_sparse_linear_cvxpy
from sdpembed.problems import MVUInstance, MVUOOSInstance

from ..conftest import clarabel_or_scs, tiny_lmnn_instances


def _ground_truths(instances):
    X, _ = swiss_roll(20, random_state=0)
    numax = instances["gaussian"]
    lo, hi = numax.bounds()
    D = np.random.default_rng(0).standard_normal((4, 6))
    return {
        "numax": (lambda: solve_box_trace_cvxpy(numax.secant_matrix, lo, hi), (20, 20)),
        "sparse_linear": (lambda: solve_sparse_linear_cvxpy(D, sigma=0.1, tau=1.0), (4, 4)),
        "mvu": (lambda: clarabel_or_scs(MVUInstance.from_points(X, 4, "inequality")), (20, 20)),
        "mvu_oos": (lambda: solve_mvu_oos_cvxpy(MVUOOSInstance.from_points(X[1:], X[1:, :2], X[0], 4)), (3, 3)),
        "lmnn": (lambda: solve_lmnn_cvxpy(next(iter(tiny_lmnn_instances().values()))), None),
    }


NAMES = ["numax", "sparse_linear", "mvu", "mvu_oos", "lmnn"]


@pytest.mark.parametrize("name", NAMES)
def test_a_failing_back_end_is_an_error_with_no_matrix(name, instances, monkeypatch):
    run, shape = _ground_truths(instances)[name]

    def fail(self, *args, **kwargs):
        raise cp.error.SolverError("the back-end gave up")

    monkeypatch.setattr(cp.Problem, "solve", fail)
    result = run()
    assert result.status == "error"
    assert "failed: the back-end gave up" in result.message
    assert np.all(np.isnan(result.solution)) and np.isnan(result.objective)
    assert result.iterations == 0
    if shape is not None:
        assert result.solution.shape == shape


@pytest.mark.parametrize("name", NAMES)
def test_no_primal_value_is_never_optimal(name, instances, monkeypatch):
    run, _ = _ground_truths(instances)[name]
    monkeypatch.setattr(cp.Problem, "solve", lambda self, *args, **kwargs: None)   # leaves every value unset
    result = run()
    assert result.status != "optimal"
    assert "with no primal value" in result.message
    assert np.all(np.isnan(result.solution))


@pytest.mark.parametrize("name", NAMES)
def test_a_solved_model_gives_a_symmetric_certified_matrix(name, instances):
    run, _ = _ground_truths(instances)[name]
    result = run()
    assert result.status == "optimal", result.message
    assert np.array_equal(result.solution, result.solution.T)
    assert result.iterations > 0
    assert result.extra["cvxpy_status"] == cp.OPTIMAL
    assert result.message.startswith(("CVXPY status 'optimal' from CLARABEL", "CVXPY status 'optimal' from SCS"))
