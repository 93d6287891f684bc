"""The multi-metric LMNN instance (thesis (2.17), problem ``lmnn_multi``): validation, the file
contract (instance and solution arrays), the (C, d, d) variable and its registration."""

import numpy as np
import pytest

from sdpembed import PROBLEMS, get_problem
from sdpembed.io import instance_from_arrays, load_instance, read_solution, save_instance, solution_from_arrays
from sdpembed.problems import LMNNInstance, MultiMetricLMNNInstance, MultiMetricLMNNProblem

from ..conftest import tiny_lmnn_instances


@pytest.fixture(scope="module")
def single():
    return tiny_lmnn_instances()["iris"]


@pytest.fixture(scope="module")
def multi(single):
    return MultiMetricLMNNInstance(X=single.X, y=single.y, targets=single.targets, mu=single.mu)


def test_registered_with_every_hook():
    spec = get_problem("lmnn_multi")
    assert spec.instance_type is MultiMetricLMNNInstance and spec.variable == "M" and spec.sense == "min"
    assert set(spec.methods) == {"fast"} and spec.sdpa_form is not None and spec.suite_cases is not None
    assert spec.from_dataset is not None and PROBLEMS["lmnn_multi"] is spec
    assert MultiMetricLMNNProblem is MultiMetricLMNNInstance          # the earlier public name


def test_structure_and_variable_shape(single, multi):
    assert multi.problem == "lmnn_multi" and multi.variable == "M"
    assert multi.n_blocks == 3 and multi.dim == 4 and multi.variable_shape == (3, 4, 4)
    assert single.variable_shape == (4, 4)
    assert multi.n_triplets == multi.n_constraints == single.n_triplets
    np.testing.assert_array_equal(multi.classes[multi.block], multi.y)
    # the pull matrices of the classes add up to the single-metric pull matrix
    np.testing.assert_allclose(multi.pull_matrices().sum(axis=0), single.pull_matrix, rtol=1e-12, atol=1e-12)
    assert multi.max_violation(np.zeros((3, 4, 4))) == 0.0
    # equal metrics give the single-metric loss (2.11)
    M = np.diag([1.0, 0.5, 0.25, 2.0])
    assert multi.objective(np.stack([M] * 3)) == pytest.approx(single.objective(M), rel=1e-12)


def test_from_data_matches_lmnn_targets(single):
    X, y = single.X, single.y
    a, b = MultiMetricLMNNInstance.from_data(X, y, k=2, mu=0.25), LMNNInstance.from_data(X, y, k=2, mu=0.25)
    assert isinstance(a, MultiMetricLMNNInstance) and not isinstance(a, LMNNInstance)
    np.testing.assert_array_equal(a.targets, b.targets)
    assert a.mu == 0.25


def test_instance_file_round_trip(multi, tmp_path):
    stored = MultiMetricLMNNInstance(X=multi.X, y=multi.y, targets=multi.targets, mu=multi.mu, optimum=11.5)
    arrays = stored.to_arrays()
    assert str(arrays["problem"]) == "lmnn_multi" and set(arrays) == {"problem", "X", "y", "targets", "mu", "optimum"}
    back = load_instance(save_instance(stored, tmp_path / "multi"))
    assert type(back) is MultiMetricLMNNInstance and back.optimum == 11.5 and back.mu == multi.mu
    for key in ("X", "y", "targets"):
        np.testing.assert_array_equal(getattr(back, key), getattr(multi, key))
    assert type(instance_from_arrays({**arrays, "problem": np.array("lmnn")})) is LMNNInstance


@pytest.mark.parametrize(("change", "message"), [
    ({"mu": np.array(1.5)}, "closed interval"),
    ({"mu": np.array([0.5])}, "0-d"),
    ({"targets": None}, "'targets'"),
    ({"optimum": np.array(np.nan)}, "optimum"),
])
def test_bad_instance_arrays_are_refused(multi, change, message):
    arrays = {**multi.to_arrays(), **change}
    arrays = {k: v for k, v in arrays.items() if v is not None}
    with pytest.raises(ValueError, match=message):
        MultiMetricLMNNInstance.from_arrays(arrays)


def test_solution_arrays_are_a_stack_of_one_metric_per_class(multi, tmp_path):
    Ms = np.stack([np.eye(4)] * 3)
    assert solution_from_arrays(multi, {"M": Ms}).matrix.shape == (3, 4, 4)
    for wrong in (np.eye(4), np.ones((2, 4, 4)), np.ones((3, 4, 5))):
        with pytest.raises(ValueError, match=r"'M' must have shape \(3, 4, 4\)"):
            solution_from_arrays(multi, {"M": wrong})
    with pytest.raises(ValueError, match="complex"):
        solution_from_arrays(multi, {"M": Ms + 1e-3j})
    path = tmp_path / "sol.npz"
    np.savez(path, M=Ms, dual_bound=np.array(1.0))
    read = read_solution(path, multi)
    assert read.dual_bound == 1.0 and read.matrix.shape == (3, 4, 4)
    with pytest.raises(ValueError, match="shape"):
        multi.objective(np.eye(4))
