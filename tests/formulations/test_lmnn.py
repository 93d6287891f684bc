"""LMNN: the instance type and its file contract, the loss (2.11), the SDP of Sec. 2.1.3 in CVXPY,
the exact working-set solve and the certified dual bound."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

from sdpembed import PROBLEMS, certify, load_instance, save_instance, solve
from sdpembed.cli import main
from sdpembed.formulations.lmnn import lmnn_problem, solve_lmnn_cvxpy, solve_lmnn_working_set
from sdpembed.graphs import impostor_triplets, target_neighbors
from sdpembed.problems import LMNNInstance
from sdpembed.problems.lmnn import check_triplets, lmnn_dual_bound, project_psd

from ..conftest import labelled_subset, tiny_lmnn_instances


@pytest.fixture(scope="module")
def lmnn_instances():
    return tiny_lmnn_instances()


@pytest.fixture(scope="module")
def lmnn_solved(lmnn_instances):
    tight = {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-8}
    return {
        name: {
            "clarabel": solve_lmnn_cvxpy(inst, solver="CLARABEL", **tight),
            "scs": solve_lmnn_cvxpy(inst, solver="SCS", eps_abs=1e-8, eps_rel=1e-8, max_iters=100_000),
            "working_set": solve_lmnn_working_set(inst, tol=1e-9, **tight),
        }
        for name, inst in lmnn_instances.items()
    }


def naive_loss(inst, M):
    """(2.11) one triplet at a time."""
    X, y, mu = inst.X, inst.y, inst.mu
    pull = push = 0.0
    for i in range(len(X)):
        for j in inst.targets[i]:
            dij = (X[i] - X[j]) @ M @ (X[i] - X[j])
            pull += dij
            for l in range(len(X)):
                if y[l] != y[i]:
                    push += max(0.0, 1.0 + dij - (X[i] - X[l]) @ M @ (X[i] - X[l]))
    return (1 - mu) * pull + mu * push


# ------------------------------------------------------------------------------ instance
def test_objective_matches_a_naive_loop(lmnn_instances):
    inst = lmnn_instances["wine"]
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 5))
    for M in (np.eye(5), A @ A.T / 5, 0.5 * (A + A.T), np.zeros((5, 5))):
        assert inst.objective(M) == pytest.approx(naive_loss(inst, M), rel=1e-12, abs=1e-12)
        assert inst.objective(M, block_size=37) == pytest.approx(naive_loss(inst, M), rel=1e-12, abs=1e-12)
    assert inst.objective(np.zeros((5, 5))) == pytest.approx(inst.mu * inst.n_triplets)   # every hinge is 1
    pull, push = inst.loss_terms(np.eye(5))
    assert (1 - inst.mu) * pull + inst.mu * push == pytest.approx(inst.objective(np.eye(5)))
    assert pull == pytest.approx(sum(np.sum((inst.X[i] - inst.X[inst.targets[i]]) ** 2) for i in range(24)))
    assert inst.max_violation(A) == 0.0


def test_instance_structure(lmnn_instances):
    inst = lmnn_instances["iris"]
    assert (inst.problem, inst.variable, inst.dim, inst.n_points, inst.k) == ("lmnn", "M", 4, 24, 2)
    assert inst.n_triplets == inst.n_constraints == 24 * 2 * 16 == len(inst.triplets())
    np.testing.assert_array_equal(inst.targets, target_neighbors(inst.X, inst.y, 2))
    assert not inst.X.flags.writeable and not inst.targets.flags.writeable


def test_file_round_trip(tmp_path, lmnn_instances):
    inst = lmnn_instances["gauss"]
    path = tmp_path / "lmnn.npz"
    save_instance(LMNNInstance(X=inst.X, y=inst.y, targets=inst.targets, mu=0.7, optimum=12.5), path)
    with np.load(path, allow_pickle=False) as data:
        assert set(data.files) == {"problem", "X", "y", "targets", "mu", "optimum"}
        assert str(data["problem"]) == "lmnn" and data["mu"].ndim == 0 and data["targets"].dtype.kind == "i"
        assert data["y"].dtype.kind == "U"
    loaded = load_instance(path)
    assert isinstance(loaded, LMNNInstance) and loaded.mu == 0.7 and loaded.optimum == 12.5
    for key in ("X", "y", "targets"):
        np.testing.assert_array_equal(getattr(loaded, key), getattr(inst, key))
    inst.save(path)
    assert load_instance(path).optimum is None


def test_file_errors(tmp_path, lmnn_instances):
    arrays = lmnn_instances["iris"].to_arrays()
    for missing in ("X", "y", "targets", "mu"):
        path = tmp_path / f"no_{missing}.npz"
        np.savez(path, **{k: v for k, v in arrays.items() if k != missing})
        with pytest.raises(ValueError, match=f"needs the array '{missing}'"):
            load_instance(path)
    path = tmp_path / "mu_vector.npz"
    np.savez(path, **{**arrays, "mu": np.array([0.5])})
    with pytest.raises(ValueError, match="0-d"):
        load_instance(path)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"mu": 1.5}, r"\[0, 1\]"),
        ({"mu": -0.1}, r"\[0, 1\]"),
        ({"mu": float("nan")}, r"\[0, 1\]"),
        ({"mu": True}, "real number"),
        ({"mu": "0.5"}, "real number"),
        ({"optimum": float("inf")}, "optimum"),
        ({"y": np.zeros(6, int)}, "two classes"),
        ({"y": np.zeros(5, int)}, "6 labels"),
        ({"X": np.full((6, 2), np.nan)}, "NaN"),
        ({"targets": np.array([[1], [0], [1], [4], [3], [3]], dtype=float)}, "integer"),
        ({"targets": np.array([1, 0, 0, 4, 3, 3])}, "shape"),
        ({"targets": np.array([[1], [0], [0], [4], [3], [6]])}, r"\[0, 6\)"),
        ({"targets": np.array([[1], [1], [0], [4], [3], [3]])}, "not contain i"),
        ({"targets": np.array([[3], [0], [0], [4], [3], [3]])}, "same class"),
        ({"targets": np.array([[1, 1], [0, 2], [0, 1], [4, 5], [3, 5], [3, 4]])}, "distinct"),
    ],
)
def test_instance_validation(change, message):
    X = np.arange(12.0).reshape(6, 2)
    base = {"X": X, "y": np.array([0, 0, 0, 1, 1, 1]), "targets": np.array([[1], [0], [0], [4], [3], [3]])}
    LMNNInstance(**base)                                   # the base instance is valid
    with pytest.raises(ValueError, match=message):
        LMNNInstance(**{**base, **change})


def test_from_data_refuses_small_classes():
    with pytest.raises(ValueError, match="class 1 has 3"):
        LMNNInstance.from_data(np.random.default_rng(0).standard_normal((8, 2)), [0] * 5 + [1] * 3, k=3)


# ------------------------------------------------------------------------------ the SDP
def test_model_reads_like_the_paper(lmnn_instances):
    inst = lmnn_instances["iris"]
    problem, M, xi, impostor = lmnn_problem(inst)
    assert M.shape == (4, 4) and M.is_psd() and xi.shape == (inst.n_triplets,) and xi.is_nonneg()
    assert problem.objective.NAME == "minimize" and len(problem.constraints) == 1
    # at a fixed M the best slacks are the hinges, so the model's value is the loss (2.11)
    A = np.diag([1.0, 0.5, 2.0, 0.3])
    M.value = A
    triplets = inst.triplets()
    X = inst.X
    dij = np.einsum("td,de,te->t", X[triplets[:, 0]] - X[triplets[:, 1]], A, X[triplets[:, 0]] - X[triplets[:, 1]])
    dil = np.einsum("td,de,te->t", X[triplets[:, 0]] - X[triplets[:, 2]], A, X[triplets[:, 0]] - X[triplets[:, 2]])
    xi.value = np.maximum(0.0, 1.0 + dij - dil)
    assert problem.objective.value == pytest.approx(inst.objective(A), rel=1e-12)
    assert impostor.violation().max() <= 1e-12


def test_clarabel_and_scs_agree(lmnn_solved):
    for name, runs in lmnn_solved.items():
        clarabel, scs = runs["clarabel"], runs["scs"]
        assert clarabel.status == "optimal", (name, clarabel.message)
        assert scs.status in {"optimal", "inaccurate"}, (name, scs.message)
        assert abs(clarabel.objective - scs.objective) <= 1e-4 * abs(clarabel.objective), name
        assert clarabel.min_eigenvalue >= -1e-12 and clarabel.max_violation == 0.0


def test_working_set_equals_the_all_triplet_solve(lmnn_instances, lmnn_solved):
    for name, runs in lmnn_solved.items():
        inst, full, ws = lmnn_instances[name], runs["clarabel"], runs["working_set"]
        assert ws.status == "optimal" and ws.method == "working_set", (name, ws.message)
        assert abs(ws.objective - full.objective) <= 1e-6 * abs(full.objective), name
        assert ws.objective == pytest.approx(inst.objective(ws.solution), rel=1e-12)
        # at termination no omitted hinge is positive (beyond tol), checked independently
        working = {tuple(t) for t in ws.extra["triplets"]}
        active = impostor_triplets(inst.X, inst.y, inst.targets, ws.solution, tol=1e-9)
        assert all(tuple(t) in working for t in active), name
        assert ws.extra["max_omitted_hinge"] <= 1e-9
        # and the restricted optimum is the full optimum
        assert ws.extra["restricted_optimum"] == pytest.approx(full.objective, rel=1e-6)
        history = ws.history
        assert history["added"][-1] == 0 and len(history["working_set"]) == ws.iterations
        assert np.all(np.diff(history["working_set"]) > 0)


def test_working_set_is_smaller_than_the_triplet_set():
    X, y = labelled_subset(*load_iris(return_X_y=True), 12, 4, 2)
    inst = LMNNInstance.from_data(X, y, k=2)
    result = solve(inst, "working_set")
    assert result.method == "working_set" and result.status == "optimal"
    assert len(result.extra["triplets"]) < inst.n_triplets / 4
    truth = solve(inst, "cvxpy")
    assert result.objective == pytest.approx(truth.objective, rel=1e-5)


def test_dual_bounds_are_bounds_and_tight(lmnn_instances, lmnn_solved):
    for name, runs in lmnn_solved.items():
        optimum = runs["clarabel"].objective
        for result in runs.values():
            assert result.certified and result.dual_bound <= optimum * (1 + 1e-9), name
            assert 0.0 <= result.relative_gap <= 1e-5, (name, result.method, result.relative_gap)
        # the raw multipliers sum above the optimum: the certificate's corrections are needed
        inst = lmnn_instances[name]
        clarabel = runs["clarabel"]
        assert clarabel.dual_bound < clarabel.extra["alpha"].sum() + 1e-12
        # any multipliers give a bound, and multiples of the optimal ones cannot beat the optimum
        rng = np.random.default_rng(1)
        triplets = clarabel.extra["triplets"]
        for alpha in (rng.uniform(0, inst.mu, len(triplets)), np.full(len(triplets), inst.mu),
                      1.7 * clarabel.extra["alpha"], 10.0 * rng.standard_normal(len(triplets))):
            assert lmnn_dual_bound(inst, triplets, alpha) <= optimum * (1 + 1e-9)
            assert lmnn_dual_bound(inst, triplets, alpha, upper_bound=optimum) <= optimum * (1 + 1e-9)
        half = triplets[::2]
        assert lmnn_dual_bound(inst, half, clarabel.extra["alpha"][::2]) <= optimum * (1 + 1e-9)


def test_dual_bound_edge_cases(lmnn_instances):
    inst = lmnn_instances["iris"]
    triplets = inst.triplets()[:10]
    assert lmnn_dual_bound(inst, triplets, np.zeros(10)) == 0.0
    zero_mu = LMNNInstance(X=inst.X, y=inst.y, targets=inst.targets, mu=0.0)
    assert lmnn_dual_bound(zero_mu, triplets, np.ones(10)) == 0.0      # α ∈ [0, μ] = {0}
    result = solve_lmnn_cvxpy(zero_mu)
    assert result.objective == pytest.approx(0.0, abs=1e-6) and result.dual_bound == 0.0
    with pytest.raises(ValueError, match="one entry per triplet"):
        lmnn_dual_bound(inst, triplets, np.zeros(9))
    with pytest.raises(ValueError, match="target neighbour"):
        check_triplets(inst, np.array([[0, 5, 20]]))
    bad_l = np.array([[0, inst.targets[0, 0], int(np.flatnonzero(inst.y == inst.y[0])[-1])]])
    with pytest.raises(ValueError, match="y_l != y_i"):
        check_triplets(inst, bad_l)
    with pytest.raises(ValueError, match="repeat"):
        check_triplets(inst, np.vstack([triplets[:2], triplets[:1]]))


def test_a_subset_of_triplets_is_a_relaxation_and_says_so(lmnn_instances, lmnn_solved):
    inst = lmnn_instances["wine"]
    optimum = lmnn_solved["wine"]["clarabel"].objective
    subset = inst.triplets()[::10]
    result = solve_lmnn_cvxpy(inst, triplets=subset)
    assert result.extra["restricted_optimum"] < optimum - 1e-3      # dropping hinges lowers the value
    assert result.objective >= optimum * (1 - 1e-7)                 # the full loss of its solution does not
    assert result.dual_bound <= optimum * (1 + 1e-9)
    assert result.status != "optimal" and "certified relative gap" in result.message


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_statuses_are_honest(lmnn_instances):
    inst = lmnn_instances["gauss"]
    loose = solve_lmnn_cvxpy(inst, solver="SCS", max_iters=5)
    assert loose.status != "optimal"
    stopped = solve_lmnn_working_set(inst, max_rounds=1)
    assert stopped.status == "max_iterations" and stopped.iterations == 1
    assert stopped.dual_bound <= solve_lmnn_cvxpy(inst).objective * (1 + 1e-9)
    assert solve(inst, "working_set", max_iter=1).status == "max_iterations"   # the CLI's --max-iter


def test_size_limit_and_bad_options(lmnn_instances):
    inst = lmnn_instances["iris"]
    with pytest.raises(ValueError, match="max_triplets=100.*working_set"):
        solve_lmnn_cvxpy(inst, max_triplets=100)
    with pytest.raises(ValueError, match="solver must be one of"):
        solve_lmnn_cvxpy(inst, solver="MOSEK")
    with pytest.raises(ValueError, match="tol"):
        solve_lmnn_working_set(inst, tol=-1.0)
    with pytest.raises(ValueError, match="max_triplets"):
        solve_lmnn_working_set(inst, max_triplets=10)


def test_project_psd():
    A = np.array([[1.0, 2.0], [2.0, -3.0]])
    P = project_psd(A)
    assert np.linalg.eigvalsh(P)[0] >= -1e-15
    w, V = np.linalg.eigh(A)
    np.testing.assert_allclose(P, w[1] * np.outer(V[:, 1], V[:, 1]), atol=1e-14)
    np.testing.assert_array_equal(project_psd(np.eye(2)), np.eye(2))


# ------------------------------------------------------------------------------ registry
def test_registry_solve_and_certify(tmp_path, lmnn_instances, lmnn_solved):
    spec = PROBLEMS["lmnn"]
    inst = lmnn_instances["iris"]
    assert spec.variable == "M" and spec.sense == "min" and spec.default_method(inst) == "fast"
    result = solve(inst)
    assert result.problem == "lmnn" and result.status == "optimal"
    cert = certify(inst, result, ground_truth=True)
    assert cert.passed, cert.reasons
    assert cert.optimum_source.startswith("computed with CVXPY") and cert.objective_error <= 1e-6
    cert = certify(inst, solve(inst, "cvxpy", solver="SCS"), optimum=lmnn_solved["iris"]["clarabel"].objective)
    assert cert.passed, cert.reasons
    # a wrong metric fails on the objective, an indefinite one on the PSD check
    assert not certify(inst, np.eye(4), optimum=result.objective).passed
    indefinite = result.solution - 0.5 * np.eye(4)
    assert any("not PSD" in reason for reason in certify(inst, indefinite).reasons)
    # the oracle's files: verify passes a good solution and fails the identity
    inst_path, sol_path, bad_path = tmp_path / "inst.npz", tmp_path / "sol.npz", tmp_path / "bad.npz"
    inst.save(inst_path)
    np.savez(sol_path, M=result.solution, dual_bound=np.array(result.dual_bound))
    np.savez(bad_path, M=np.eye(4))
    assert main(["verify", str(inst_path), str(sol_path)]) == 0
    assert main(["verify", str(inst_path), str(bad_path)]) == 1
