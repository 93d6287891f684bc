"""The multi-metric LMNN instance (thesis (2.17), problem ``lmnn_multi``): validation, the file
contract (instance and solution arrays), the (C, d, d) variable and its registration."""

import numpy as np
import pytest

from sdpembed import PROBLEMS, get_problem
from sdpembed.io import instance_from_arrays, load_instance, read_solution, save_instance, solution_from_arrays
from sdpembed.problems import LMNNInstance, MultiMetricLMNNInstance, MultiMetricLMNNProblem
from sdpembed.problems.lmnn import multi_metric_hinges

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


# ------------------------------------------------------------------ metrics by a given assignment (Fig. 2.10)
def _brute_loss(X, y, targets, groups, Ms, mu):
    """(2.17) with D̂(x_a, x_b) under the metric of b's group, by a loop over every triplet."""
    def d_hat(a, b):
        return (X[a] - X[b]) @ Ms[groups[b]] @ (X[a] - X[b])
    loss = 0.0
    for i in range(len(y)):
        for j in targets[i]:
            loss += (1.0 - mu) * d_hat(i, j)
            for l in np.flatnonzero(y != y[i]):
                loss += mu * max(0.0, 1.0 + d_hat(i, j) - d_hat(i, l))
    return loss


@pytest.fixture(scope="module")
def grouped(single):
    """Three groups that cut across the classes."""
    groups = np.arange(single.n_points) % 3
    return MultiMetricLMNNInstance(X=single.X, y=single.y, targets=single.targets, mu=single.mu, metric_groups=groups)


def test_metric_groups_index_the_metrics(single, grouped):
    assert grouped.n_blocks == 3 and grouped.variable_shape == (3, 4, 4)
    np.testing.assert_array_equal(grouped.block, np.arange(single.n_points) % 3)
    assert grouped.metric_groups.flags.writeable is False
    # P_c sums the target pairs (i, j) with g_j = c; together, the single-metric pull matrix
    U = single.X[:, None, :] - single.X[single.targets]
    for c in range(3):
        pairs = grouped.block[single.targets] == c
        np.testing.assert_allclose(grouped.pull_matrices()[c], U[pairs].T @ U[pairs], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grouped.pull_matrices().sum(axis=0), single.pull_matrix, rtol=1e-12, atol=1e-12)
    # the loss against a loop over every triplet, with metrics that differ
    rng = np.random.default_rng(7)
    Ms = np.stack([A @ A.T / 4 for A in rng.standard_normal((3, 4, 4))])
    assert grouped.objective(Ms) == pytest.approx(
        _brute_loss(single.X, single.y, single.targets, grouped.block, Ms, single.mu), rel=1e-10)
    # impostors are still the points of another class: the same triplets
    count = sum(len(t) for t, _ in multi_metric_hinges(grouped, Ms, threshold=-np.inf))
    assert count == grouped.n_triplets == single.n_triplets


def test_one_group_is_lmnn(single):
    one = MultiMetricLMNNInstance(X=single.X, y=single.y, targets=single.targets, mu=single.mu,
                                  metric_groups=np.zeros(single.n_points, dtype=np.int64))
    M = np.diag([1.0, 0.5, 0.25, 2.0])
    assert one.variable_shape == (1, 4, 4)
    assert one.objective(M[None]) == pytest.approx(single.objective(M), rel=1e-12)
    np.testing.assert_allclose(one.pull_matrices()[0], single.pull_matrix, rtol=1e-12, atol=1e-12)


def test_metric_groups_file_round_trip(grouped, tmp_path):
    arrays = grouped.to_arrays()
    assert set(arrays) == {"problem", "X", "y", "targets", "mu", "metric_groups"}
    back = load_instance(save_instance(grouped, tmp_path / "grouped"))
    assert type(back) is MultiMetricLMNNInstance and back.variable_shape == (3, 4, 4)
    np.testing.assert_array_equal(back.metric_groups, grouped.metric_groups)
    Ms = np.stack([np.eye(4), 2 * np.eye(4), 0.5 * np.eye(4)])
    assert back.objective(Ms) == grouped.objective(Ms)
    assert solution_from_arrays(back, {"M": Ms}).matrix.shape == (3, 4, 4)
    # on a subset of the coordinates (the solvers' spanning coordinates) the groups stay
    np.testing.assert_array_equal(grouped.on_coordinates(np.array([0, 2])).metric_groups, grouped.metric_groups)


@pytest.mark.parametrize(("groups", "message"), [
    (lambda n: np.zeros(n - 1, dtype=np.int64), r"one metric index per point \(24\)"),
    (lambda n: np.zeros((n, 1), dtype=np.int64), r"one metric index per point"),
    (lambda n: np.arange(n) % 2 * 1.0, "integer metric indices"),
    (lambda n: np.arange(n) % 2 - 1, ">= 0"),
    (lambda n: np.arange(n) % 2 * 2, "leaves metric 1 empty"),
])
def test_bad_metric_groups_are_refused(single, groups, message):
    bad = groups(single.n_points)
    with pytest.raises(ValueError, match=message):
        MultiMetricLMNNInstance(X=single.X, y=single.y, targets=single.targets, mu=single.mu, metric_groups=bad)
    with pytest.raises(ValueError, match=message):           # and in a file
        MultiMetricLMNNInstance.from_arrays({**single.to_arrays(), "metric_groups": bad})


def test_a_metric_of_no_target_neighbour_is_refused(single):
    """A metric that only impostors use has no pull term: the SDP (2.17) would have no minimiser."""
    groups = np.zeros(single.n_points, dtype=np.int64)
    never = np.setdiff1d(np.arange(single.n_points), single.targets.ravel())
    assert never.size > 0
    groups[never[0]] = 1
    with pytest.raises(ValueError, match="metric 1 of metric_groups is the metric of no target neighbour"):
        MultiMetricLMNNInstance(X=single.X, y=single.y, targets=single.targets, mu=single.mu, metric_groups=groups)
