"""A fitted NuMax keeps a warm start without the S × S matrices of its last restricted solve: its
pickle stays small, and a run warm-started from it still reaches the same certified optimum."""

import pickle

import numpy as np
import pytest

from sdpembed import NuMax
from sdpembed.problems.numax_operator import PairSecantOperator
from sdpembed.solvers.numax.admm_control import ADMMStopping
from sdpembed.solvers.numax.admm_pairs import pair_trace_admm

from ..conftest import digits_points


@pytest.mark.slow
def test_fitted_numax_keeps_no_s_by_s_state_and_warm_starts_to_the_same_optimum():
    X = digits_points(300)
    model = NuMax(delta=0.2, random_state=0).fit(X)
    result = model.result_
    assert result.status == "optimal" and result.extra["rounds"] > 1        # column generation
    state, pairs = result.extra["state"], result.extra["pairs"]
    S = pairs.shape[0]
    assert state.gram is None and state.factor is None and state.K_inv is None
    assert state.omega.shape == (S,)
    # the pickle holds nothing of order S²: less than a quarter of one S × S float64 matrix (the
    # factor the last restricted solve ended with is more)
    assert len(pickle.dumps(model)) < 2 * S * S
    # a warm start from the kept state rebuilds the factor and reaches the same optimum
    operator = PairSecantOperator(X, pairs[:, 0], pairs[:, 1])
    lo, hi = np.full(S, 0.8), np.full(S, 1.2)
    again = pair_trace_admm(operator, lo, hi, warm_start=state, basis=state.basis,
                            stopping=ADMMStopping(feas_tol=1e-6, gap_tol=1e-5))
    assert again.status == "optimal"
    assert abs(again.objective - result.objective) <= 2e-5 * result.objective
    assert again.iterations < 200                                          # it resumed, not restarted
