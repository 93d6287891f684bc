"""NuMax-Class (7)/(15): instance, CVXPY ground truth, Algorithm 3, its CG version, the estimator."""

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline

from sdpembed import NuMaxClass, NuMaxClassInstance, NuMaxInstance, load_instance, solve
from sdpembed.datasets import disks_and_squares, gaussian_points
from sdpembed.linear import embedding_from_psd
from sdpembed.secants import sample_class_secants


def _labelled_cases():
    from sklearn.datasets import load_digits

    digits = load_digits()
    index = np.sort(np.random.default_rng(0).choice(len(digits.target), 30, replace=False))
    blobs = gaussian_points(36, 8, random_state=3)
    blob_labels = np.arange(36) % 3
    blobs += 2.0 * np.eye(8)[blob_labels]
    shapes, shape_labels = disks_and_squares(7, 4)
    return {
        "digits": (digits.data[index] / 16.0, digits.target[index], 0.2),
        "blobs": (blobs, blob_labels, 0.1),
        "shapes": (shapes, shape_labels, 0.1),
    }


@pytest.fixture(scope="module")
def class_solved():
    out = {}
    for name, (X, y, delta) in _labelled_cases().items():
        instance = NuMaxClassInstance.from_labelled(X, y, delta)
        out[name] = {
            "instance": instance,
            "clarabel": solve(instance, "cvxpy", solver="CLARABEL"),
            "admm": solve(instance, "admm"),
            "cg": solve(NuMaxClassInstance(delta=delta, X=X, y=y), initial_pairs=60, random_state=0),
        }
    return out


@pytest.mark.parametrize("name", ["digits", "blobs", "shapes"])
@pytest.mark.parametrize("method", ["admm", "cg"])
def test_agreement_with_cvxpy(class_solved, name, method):
    truth, result = class_solved[name]["clarabel"], class_solved[name][method]
    instance = class_solved[name]["instance"]
    assert truth.status == "optimal" and result.status == "optimal"
    assert result.method == method
    assert abs(result.objective - truth.objective) <= 1e-4 * truth.objective
    assert instance.max_violation(result.solution) <= 1e-5  # one-sided violations, all pairs
    assert result.certified and result.dual_bound <= truth.objective * (1 + 1e-9)
    assert result.relative_gap <= 1e-4


def test_paper_forms_7_and_15_agree_with_the_solver(class_solved):
    from sdpembed.formulations.numax_class import numax_class_problem, numax_class_problem_15

    instance = class_solved["blobs"]["instance"]
    optimum = class_solved["blobs"]["clarabel"].objective
    for build in (numax_class_problem, numax_class_problem_15):
        problem, P = build(instance.inter, instance.intra, instance.delta)
        problem.solve(solver="CLARABEL")
        assert problem.status == "optimal"
        assert abs(problem.value - optimum) <= 1e-5 * optimum


def test_class_rank_is_lower_than_numax():
    from sklearn.datasets import load_digits

    digits = load_digits()
    index = np.sort(np.random.default_rng(0).choice(len(digits.target), 40, replace=False))
    X, y = digits.data[index] / 16.0, digits.target[index]
    numax = solve(NuMaxInstance(delta=0.2, X=X))
    numax_class = solve(NuMaxClassInstance(delta=0.2, X=X, y=y))
    assert numax.status == numax_class.status == "optimal"
    assert numax_class.objective < numax.objective  # a larger feasible set
    assert embedding_from_psd(numax_class.solution).shape[0] < embedding_from_psd(numax.solution).shape[0]


def test_estimator_in_a_pipeline():
    from sklearn.datasets import load_digits

    digits = load_digits()
    X, y = digits.data[:80] / 16.0, digits.target[:80]
    pipe = make_pipeline(NuMaxClass(delta=0.3), KNeighborsClassifier(1)).fit(X, y)
    model = pipe.steps[0][1]
    assert model.result_.status == "optimal" and model.result_.method == "cg"
    assert model.transform(X).shape == (80, model.n_components_)
    assert list(model.classes_) == sorted(set(y.tolist()))
    assert pipe.score(X, y) == 1.0
    sampled = NuMaxClass(delta=0.3, n_inter=150, n_intra=80, random_state=0).fit(X, y)
    assert sampled.result_.method == "admm" and sampled.n_components_ >= 1


def test_files_roundtrip(tmp_path):
    X, y = disks_and_squares(6, 4)
    for instance in (NuMaxClassInstance.from_labelled(X, y, 0.2), NuMaxClassInstance(delta=0.2, X=X, y=y)):
        path = tmp_path / "c.npz"
        instance.save(path)
        loaded = load_instance(path)
        assert isinstance(loaded, NuMaxClassInstance) and loaded.point_form == instance.point_form
        assert loaded.n_constraints == instance.n_constraints
    assert set(np.load(path).files) == {"problem", "delta", "X", "y"}


def test_class_sampler():
    X = np.random.default_rng(0).standard_normal((40, 3))
    y = np.arange(40) % 4
    inter, intra = sample_class_secants(X, y, 100, 30, random_state=1)
    assert inter.shape == (100, 3) and intra.shape == (30, 3)
    everything = sample_class_secants(X, y, 10**6, 10**6, random_state=1)
    assert len(everything[0]) + len(everything[1]) == 780 and len(everything[1]) == 4 * 45


def test_point_form_violation_streams_by_class():
    X, y = disks_and_squares(7, 4)
    points, dense = NuMaxClassInstance(delta=0.2, X=X, y=y), NuMaxClassInstance.from_labelled(X, y, 0.2)
    P = np.diag(np.linspace(0.5, 1.5, X.shape[1]))
    assert points.max_violation(P, block_size=13) == pytest.approx(dense.max_violation(P))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"X": np.eye(4), "y": np.zeros(4)}, "at least two classes"),
        ({"X": np.eye(4), "y": np.arange(4)}, "at least two members"),
        ({"X": np.eye(4), "y": np.zeros(3)}, "4 labels"),
        ({"X": np.eye(4), "y": np.array([0.0, 1.0, np.nan, 1.0])}, "NaN"),
        ({"X": np.ones((4, 3)), "y": np.array([0, 0, 1, 1])}, "two distinct points"),
        ({"inter": np.eye(3), "intra": np.empty((0, 3))}, "non-empty"),
        ({"inter": np.empty((0, 3)), "intra": np.eye(3)}, "non-empty"),
        ({"inter": np.eye(3)}, "both inter and intra"),
        ({"X": np.eye(3)}, "labels y"),
        ({"inter": np.eye(3), "intra": np.eye(2)}, "same number of columns"),
        ({}, "either inter and intra"),
    ],
)
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        NuMaxClassInstance(delta=0.1, **kwargs)


def test_bad_input_of_estimator_and_cli(tmp_path):
    with pytest.raises(ValueError, match="two classes"):
        NuMaxClass().fit(np.eye(4), np.zeros(4))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        NuMaxClass().fit(np.eye(4), np.zeros(3))
    from sdpembed.cli import main

    assert main(["make-instance", "numax_class", "--dataset", "squares", "--out", str(tmp_path / "x.npz")]) == 2
    path = tmp_path / "shapes.npz"
    with pytest.raises(ValueError, match="too small"):
        disks_and_squares(7, 3)
    assert main(["make-instance", "numax_class", "--dataset", "shapes", "--image-size", "6", "--shape-size", "4",
                 "--points", "--out", str(path)]) == 0
    solution = tmp_path / "sol.npz"
    assert main(["solve", str(path), "--out", str(solution)]) == 0
    assert main(["verify", str(path), str(solution)]) == 0
