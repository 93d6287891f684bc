"""Proof-carrying solutions of NuMax, NuMax-Class, LMNN and the multi-metric LMNN (issue 27): the
multipliers our solvers write prove the bound they report, ``verify`` proves it again from the file
alone (CVXPY blocked, no stored optimum), and corrupted multipliers are refused or prove less than
the optimum."""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdpembed.io import (
    load_instance,
    read_solution,
    save_instance,
    solution_arrays,
    solution_from_arrays,
    write_solution,
)
from sdpembed.problems import LMNNInstance, MultiMetricLMNNInstance, NuMaxClassInstance, NuMaxInstance
from sdpembed.problems.lmnn import multi_metric_dual_bound
from sdpembed.registry import PROBLEMS, solve
from sdpembed.validation.certify import Tolerances
from sdpembed.validation.suite import grade_solution, load_suite
from sdpembed.validation.verify import verify_solution

from ..contract.test_without_cvxpy import BLOCKER

PROOF_PROBLEMS = ("numax", "numax_class", "lmnn", "lmnn_multi")

#: Suite instances (one per form) and the methods whose multipliers are checked on them.
CASES = [
    ("numax-squares5", "admm"), ("numax-squares5", "cvxpy"),
    ("numax-squares6-points", "cg"), ("numax-squares6-points", "admm"), ("numax-squares6-points", "cvxpy"),
    ("numax_class-shapes6", "admm"), ("numax_class-shapes6", "cvxpy"),
    ("numax_class-clusters3x8-points", "cg"), ("numax_class-clusters3x8-points", "cvxpy"),
    ("lmnn-iris8", "fast"), ("lmnn-iris8", "gradient"), ("lmnn-iris8", "cvxpy"),
    ("lmnn-clusters3x6", "fast"),
    ("lmnn_multi-clusters3x6", "fast"), ("lmnn_multi-clusters3x6", "cvxpy"),
]


def without_optimum(instance):
    """The instance with no stored optimum: only the solution's multipliers can prove its objective."""
    return dataclasses.replace(instance, optimum=None) if hasattr(instance, "delta") else type(instance)(
        X=instance.X, y=instance.y, targets=instance.targets, mu=instance.mu)


@pytest.fixture(scope="module")
def suite():
    return {entry.name: entry for entry in load_suite().entries}


def test_every_problem_of_this_family_declares_its_proof():
    for name in PROOF_PROBLEMS:
        spec = PROBLEMS[name]
        assert spec.dual_arrays and spec.dual_from_result is not None and spec.verified_bound is not None


@pytest.mark.parametrize(("name", "method"), CASES)
def test_written_multipliers_prove_the_reported_bound(suite, tmp_path, name, method):
    entry = suite[name]
    instance = entry.load()
    result = solve(instance, method)
    bare = without_optimum(instance)
    path = write_solution(tmp_path / "solution.npz", bare, result)
    solution = read_solution(path, bare)
    assert solution.dual_multipliers is not None
    assert set(solution.dual_multipliers) <= set(PROBLEMS[instance.problem].dual_arrays)
    cert = verify_solution(bare, solution)
    scale = max(1.0, abs(result.objective))
    # the same bound, proved from the file: within the reported gap, never above the optimum
    assert cert.dual_bound >= result.dual_bound - 1e-9 * scale
    assert cert.gap <= result.gap + 1e-9 * scale
    assert cert.dual_bound <= entry.optimum + 1e-7 * scale
    if result.status == "optimal" and result.relative_gap <= Tolerances().objective:
        assert cert.passed, cert.reasons
        assert cert.optimum_source.startswith("bracketed")


def test_a_claimed_bound_is_replaced_by_the_proved_one(suite):
    instance = without_optimum(suite["lmnn-iris8"].load())
    result = solve(instance)
    arrays = solution_arrays(instance, result)
    arrays["dual_bound"] = np.array(10.0 * result.objective)          # a lie
    cert = verify_solution(instance, solution_from_arrays(instance, arrays))
    assert cert.dual_bound <= result.objective and cert.passed


VERIFY_WITHOUT_CVXPY = BLOCKER + """
import contextlib, dataclasses, io, json, sys
from sdpembed.cli import main
from sdpembed.io import read_solution, save_instance, write_solution
from sdpembed.registry import solve
from sdpembed.validation.suite import load_suite
from sdpembed.validation.verify import verify_solution

out = {}
for entry in load_suite().entries:
    if entry.name not in sys.argv[2:]:
        continue
    instance = entry.load()
    bare = (dataclasses.replace(instance, optimum=None) if hasattr(instance, "delta") else
            type(instance)(X=instance.X, y=instance.y, targets=instance.targets, mu=instance.mu))
    path = write_solution(sys.argv[1] + "/" + entry.name + ".npz", bare, solve(bare))
    cert = verify_solution(bare, read_solution(path, bare))
    instance_file = save_instance(bare, sys.argv[1] + "/" + entry.name + ".instance.npz")
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["verify", str(instance_file), str(path)])   # its --solver default must not reach CVXPY
    out[entry.name] = [cert.passed and code == 0, cert.optimum_source, cert.relative_gap, entry.optimum,
                       cert.dual_bound]
assert "cvxpy" not in sys.modules
print(json.dumps(out))
"""


def test_verify_proves_the_gap_with_cvxpy_blocked_and_no_stored_optimum(tmp_path):
    names = ["numax-squares5", "numax-squares6-points", "numax_class-shapes6", "numax_class-clusters3x8-points",
             "lmnn-iris8", "lmnn_multi-clusters3x6"]
    run = subprocess.run([sys.executable, "-c", VERIFY_WITHOUT_CVXPY, str(tmp_path), *names],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.splitlines()[-1])
    assert sorted(out) == sorted(names)
    for name, (passed, source, gap, optimum, bound) in out.items():
        assert passed and source.startswith("bracketed"), (name, source)
        assert 0.0 <= gap <= 1e-4 and bound <= optimum + 1e-7 * max(1.0, abs(optimum)), name


def test_the_suite_reports_the_proven_gap(suite, tmp_path):
    entry = suite["lmnn-iris8"]
    instance = entry.load()
    result = solve(instance)
    with_proof = write_solution(tmp_path / "proof.npz", instance, result)
    record = grade_solution(entry, with_proof, Tolerances(), instance)
    assert record.passed and 0.0 <= record.proven_gap <= 1e-6 and record.dual_bound <= entry.optimum
    bare = tmp_path / "bare.npz"
    np.savez(bare, M=result.solution)
    record = grade_solution(entry, bare, Tolerances(), instance)
    assert record.passed and np.isnan(record.proven_gap)


@pytest.mark.parametrize("instance_type", [LMNNInstance, MultiMetricLMNNInstance])
def test_constant_coordinates_do_not_void_the_lmnn_proof(tmp_path, instance_type):
    """Data with constant coordinates (blank pixels: digits, MNIST) make P singular, so no rounding
    margin can certify C(α) ⪰ 0 in R^d; on the coordinates that vary it can: the proof closes the gap
    of an optimal solve (a bound of 0 otherwise) and stays below the CVXPY optimum."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 8)
    X = rng.standard_normal((24, 3)) + 2.0 * y[:, None]
    instance = instance_type.from_data(np.column_stack([X, np.zeros(24), np.full(24, 3.0)]), y, k=2, mu=0.5)
    result = solve(instance)
    assert result.status == "optimal" and result.relative_gap <= 1e-5
    path = tmp_path / "solution.npz"
    write_solution(path, instance, result)
    cert = verify_solution(instance, read_solution(path, instance))
    assert cert.passed and cert.dual_bound == pytest.approx(result.objective, rel=1e-5)
    assert cert.dual_bound <= solve(instance, "cvxpy").objective + 1e-6


def test_a_solution_of_metrics_by_groups_proves_its_bound_from_the_files(tmp_path):
    """Metrics by a given assignment (``metric_groups``, Fig. 2.10): the instance file carries the groups,
    the solution file the multipliers, and ``verify`` proves the gap from the two files alone — a bound
    of the grouped SDP, below the CVXPY optimum, which is not the optimum of the metrics by class."""
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1, 2], 8)
    X = rng.standard_normal((24, 3)) + 2.0 * y[:, None]
    groups = (X[:, 0] > np.median(X[:, 0])).astype(np.int64)            # two groups across the classes
    instance = load_instance(save_instance(MultiMetricLMNNInstance.from_data(X, y, k=2, mu=0.5,
                                                                             metric_groups=groups),
                                           tmp_path / "grouped"))
    np.testing.assert_array_equal(instance.metric_groups, groups)
    result = solve(instance)
    assert result.status == "optimal" and result.solution.shape == (2, 3, 3)
    path = write_solution(tmp_path / "solution.npz", instance, result)
    cert = verify_solution(instance, read_solution(path, instance))
    assert cert.passed and cert.optimum_source.startswith("bracketed")
    assert cert.dual_bound == pytest.approx(result.objective, rel=1e-5)
    assert cert.dual_bound <= solve(instance, "cvxpy").objective * (1 + 1e-7)
    by_class = solve(MultiMetricLMNNInstance.from_data(X, y, k=2, mu=0.5))
    assert abs(by_class.objective - result.objective) > 1e-3 * result.objective


def test_multi_metric_bound_refuses_triplets_that_are_not_the_instances(suite):
    instance = suite["lmnn_multi-clusters3x6"].load()
    result = solve(instance)
    triplets, alpha = result.extra["triplets"], result.extra["alpha"]
    # a repeated triplet would count its hinge twice; a j that is no target has no hinge in the loss
    with pytest.raises(ValueError, match="repeat"):
        multi_metric_dual_bound(instance, np.vstack([triplets, triplets]), np.concatenate([alpha, alpha]))
    foreign = triplets.copy()
    i = foreign[0, 0]
    same = np.flatnonzero((instance.y == instance.y[i]) & ~np.isin(np.arange(instance.n_points),
                                                                     [i, *instance.targets[i]]))
    foreign[0, 1] = same[0]
    with pytest.raises(ValueError, match="target"):
        multi_metric_dual_bound(instance, foreign, alpha)
    with pytest.raises(ValueError, match="NaN"):
        multi_metric_dual_bound(instance, triplets, np.where(np.arange(alpha.size) == 0, np.nan, alpha))


# ------------------------------------------------------------------ corrupted multipliers (property)
def random_instance(problem: str, seed: int):
    """A small random instance of ``problem`` (secant form or point form for the NuMax family)."""
    rng = np.random.default_rng(seed)
    if problem in ("numax", "numax_class"):
        n, N = int(rng.integers(6, 10)), int(rng.integers(3, 6))
        X = rng.standard_normal((n, N)) * rng.uniform(0.5, 2.0, N)
        delta = float(rng.uniform(0.05, 0.4))
        y = np.arange(n) % int(rng.integers(2, 4))
        if problem == "numax":
            return NuMaxInstance(delta=delta, X=X) if seed % 2 else NuMaxInstance.from_points(X, delta)
        return NuMaxClassInstance(delta=delta, X=X, y=y) if seed % 2 else NuMaxClassInstance.from_labelled(X, y, delta)
    n_classes, per_class, d = int(rng.integers(2, 4)), int(rng.integers(3, 5)), int(rng.integers(2, 4))
    y = np.repeat(np.arange(n_classes), per_class)
    X = rng.standard_normal((y.size, d)) + 1.5 * rng.standard_normal((n_classes, d))[y]
    kind = LMNNInstance if problem == "lmnn" else MultiMetricLMNNInstance
    return kind.from_data(X, y, k=int(rng.integers(1, 3)), mu=float(rng.uniform(0.2, 0.8)))


@functools.cache
def truth_and_multipliers(problem: str, seed: int):
    """The instance, the least objective of its CVXPY and hand-written solutions (each ≥ the optimum
    up to the solvers' feasibility tolerances: a true bound lies below both), and the multipliers and
    solution of the default hand-written solver."""
    instance = random_instance(problem, seed)
    truth = solve(instance, "cvxpy")
    result = solve(instance)
    assert truth.status in ("optimal", "inaccurate") and result.status in ("optimal", "inaccurate")
    optimum = min(truth.objective, result.objective)
    return instance, optimum, PROBLEMS[problem].dual_from_result(instance, result), result.solution


def corrupt(multipliers: dict, how: str, factor: float, rng: np.random.Generator) -> dict:
    """The multipliers after one corruption (the integer index arrays are kept unless the shape is broken)."""
    out = {name: np.array(value) for name, value in multipliers.items()}
    value_name = "dual_y" if "dual_y" in out else "dual_alpha"
    index_name = next((name for name in out if name != value_name), None)
    v = out[value_name].astype(np.float64)
    if how == "scaled":
        out[value_name] = factor * v
    elif how == "perturbed":
        out[value_name] = v + factor * (np.abs(v).max(initial=0.0) + 1.0) * rng.standard_normal(v.shape)
    elif how == "sign":
        out[value_name] = -v
    elif how == "shape":
        out[value_name] = v[:-1] if v.size else np.ones(1)
    elif how == "nan":
        out[value_name] = np.where(np.arange(v.size) == rng.integers(max(v.size, 1)), np.nan, v)
    elif how == "indices" and index_name is not None and out[index_name].size:
        index = out[index_name]
        index[rng.integers(index.shape[0]), rng.integers(index.shape[1])] = rng.integers(index.max() + 1)
    return out


@pytest.mark.parametrize("problem", PROOF_PROBLEMS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), how=st.sampled_from(["scaled", "perturbed", "sign", "shape", "nan", "indices"]),
       factor=st.floats(0.01, 100.0), noise=st.integers(0, 2**32 - 1))
def test_corrupted_multipliers_never_prove_more_than_the_optimum(problem, seed, how, factor, noise):
    instance, optimum, multipliers, solution = truth_and_multipliers(problem, seed)
    assert multipliers
    bad = corrupt(multipliers, how, factor, np.random.default_rng(noise))
    try:
        bound = PROBLEMS[problem].verified_bound(instance, bad, solution)
    except ValueError:
        return                                        # refused: wrong shape, NaN, foreign indices
    assert np.isfinite(bound)
    assert bound <= optimum + 1e-6 * max(1.0, abs(optimum)), (how, bound, optimum)
