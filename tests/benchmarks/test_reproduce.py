"""The reproduction framework of issue 22 (benchmarks/reproduce): its pieces against independent computations."""

import importlib

import numpy as np
import pytest

from .conftest import load_reproduce


def test_best_scaled_delta_is_the_best_uniform_rescaling():
    ratios = np.random.default_rng(0).uniform(0.3, 2.5, size=200)
    scales = np.linspace(0.01, 5.0, 50001)
    brute = np.min(np.max(np.abs(scales[:, None] * ratios[None, :] - 1.0), axis=1))
    assert load_reproduce("baselines").best_scaled_delta(ratios) == pytest.approx(brute, abs=5e-4)


def test_lpp_and_npe_return_the_smallest_generalised_eigenvectors():
    baselines = load_reproduce("baselines")
    X = np.random.default_rng(1).standard_normal((40, 6))
    for projection in (baselines.lpp_projection, baselines.npe_projection):
        A = projection(X, 3)
        assert A.shape == (3, 6) and np.all(np.isfinite(A))
        assert np.linalg.matrix_rank(A) == 3


def test_gmlc_whitening_is_the_mahalanobis_nearest_translate():
    numax = load_reproduce("numax")
    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((30, 8)), rng.integers(0, 2, 30)
    X_test, y_test = rng.standard_normal((50, 8)), rng.integers(0, 2, 50)
    Psi = rng.standard_normal((3, 8)) * np.array([[5.0], [1.0], [0.2]])     # rows of very different scale
    C = np.linalg.inv(Psi @ Psi.T)
    diff = (X_test @ Psi.T)[:, None, :] - (X @ Psi.T)[None, :, :]
    nearest = np.argmin(np.einsum("qnm,mk,qnk->qn", diff, C, diff, optimize=True), axis=1)
    expected = 100.0 * np.mean(y[nearest] != y_test)
    assert numax._gmlc_error(Psi, X, y, X_test, y_test, whiten=True) == pytest.approx(expected)
    plain = np.argmin(np.einsum("qnm,qnm->qn", diff, diff), axis=1)
    assert numax._gmlc_error(Psi, X, y, X_test, y_test, whiten=False) == pytest.approx(
        100.0 * np.mean(y[plain] != y_test))


def test_docstring_sections_are_read_and_required():
    common = load_reproduce("common")

    def documented():
        """Title.

        Paper
        -----
        The set-up.

        Departures
        ----------
        - one
        """

    def undocumented():
        """Title only."""

    assert common.docstring_sections(documented) == {"Paper": "The set-up.", "Departures": "- one"}
    with pytest.raises(ValueError, match="Departures"):
        common.docstring_sections(undocumented)
    numax = load_reproduce("numax")
    for experiment in numax.EXPERIMENTS:                       # every experiment documents both
        assert set(common.docstring_sections(experiment.run)) >= {"Paper", "Departures"}
        assert set(experiment.quick) == set(experiment.full)


def test_an_unknown_verdict_or_setting_is_refused(tmp_path):
    common = load_reproduce("common")
    with pytest.raises(ValueError, match="verdict"):
        common.Outcome(published="", ours="", rows=[], verdict="close enough", agreement="")
    experiment = load_reproduce("numax").EXPERIMENTS[0]
    with pytest.raises(ValueError, match="unknown setting"):
        common.run_experiment("numax", experiment, True, {"no_such_setting": 1}, tmp_path)


def _graph_and_labels(seed: int = 3):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0.0, 1.0, (25, 3)), rng.normal(2.5, 1.0, (25, 3)), rng.normal(-2.5, 1.0, (20, 3))])
    y = np.repeat([0, 1, 2], [25, 25, 20])
    labelled = np.sort(rng.choice(len(X), 30, replace=False))
    return load_reproduce("baselines").knn_graph(X, 6), labelled, y


def test_harmonic_scores_are_label_propagation_iterated_to_convergence():
    """Zhu et al.'s iteration F ← D⁻¹WF with the labelled rows clamped converges to the harmonic function."""
    W, labelled, y = _graph_and_labels()
    scores = load_reproduce("baselines").harmonic_scores(W, labelled, y[labelled], 3)
    W = W.toarray()
    F = np.zeros((len(W), 3))
    clamp = (y[labelled, None] == np.arange(3)[None, :]).astype(float)
    F[labelled] = clamp
    for _ in range(20000):
        F = (W @ F) / W.sum(axis=1, keepdims=True)
        F[labelled] = clamp
    unlabelled = np.setdiff1d(np.arange(len(W)), labelled)
    np.testing.assert_allclose(scores, F[unlabelled], atol=1e-8)


def test_harmonic_scores_minimise_the_graph_energy_under_the_label_constraints():
    """ADAGIO (9) stated in CVXPY: min xᵀLx subject to x = the labels on the labelled vertices."""
    cp = pytest.importorskip("cvxpy")
    W, labelled, y = _graph_and_labels()
    scores = load_reproduce("baselines").harmonic_scores(W, labelled, y[labelled], 3)
    W = W.toarray()
    L = np.diag(W.sum(axis=1)) - W
    unlabelled = np.setdiff1d(np.arange(len(W)), labelled)
    x = cp.Variable(len(W))
    constraint = [x[labelled] == (y[labelled] == 1).astype(float)]
    cp.Problem(cp.Minimize(cp.quad_form(x, cp.psd_wrap(L))), constraint).solve(solver="CLARABEL")
    np.testing.assert_allclose(scores[:, 1], x.value[unlabelled], atol=1e-5)


def test_harmonic_scores_refuse_a_component_without_labels():
    import scipy.sparse as sp

    W = sp.csr_matrix(np.kron(np.eye(2), np.ones((3, 3)) - np.eye(3)))      # two triangles
    with pytest.raises(ValueError, match="no labelled vertex"):
        load_reproduce("baselines").harmonic_scores(W, np.array([0, 1]), np.array([0, 1]), 2)


def test_harmonic_error_is_low_on_separated_classes_and_chance_on_shuffled_labels():
    baselines = load_reproduce("baselines")
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(0.0, 0.3, (60, 2)), rng.normal(5.0, 0.3, (60, 2))])
    y = np.repeat([0, 1], 60)
    assert baselines.harmonic_error(X, y, k=10) == 0.0
    assert baselines.harmonic_error(X, rng.permutation(y), k=10) > 25.0


def test_adagio_distortion_and_stable_rank_against_direct_computations():
    adagio = load_reproduce("adagio")
    rng = np.random.default_rng(5)
    X, Psi = rng.standard_normal((12, 7)), rng.standard_normal((3, 7))
    direct = [abs(np.linalg.norm(Psi @ (X[i] - X[j])) / np.linalg.norm(X[i] - X[j]) - 1.0)
              for i in range(12) for j in range(i + 1, 12)]
    np.testing.assert_allclose(adagio.pair_distortions(Psi, X), direct, rtol=1e-10)
    s = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    assert adagio.stable_rank(X) == pytest.approx(s.sum() ** 2 / (s**2).sum())
    assert adagio.stable_rank(np.outer(rng.standard_normal(9), rng.standard_normal(4))) == pytest.approx(1.0)


def _papers() -> list[str]:
    load_reproduce("common")                                   # puts benchmarks/ on sys.path
    return sorted(importlib.import_module("reproduce").PAPERS)


@pytest.mark.parametrize("paper", _papers())
def test_every_experiment_of_every_paper_documents_paper_and_departures(paper):
    common = load_reproduce("common")
    module = load_reproduce(importlib.import_module("reproduce").PAPERS[paper])
    assert module.TITLE and module.DATA_NOTE
    for experiment in module.EXPERIMENTS:
        assert set(common.docstring_sections(experiment.run)) >= {"Paper", "Departures"}
        assert set(experiment.quick) == set(experiment.full)


def test_slm_split_draws_per_class_training_images_and_keeps_the_rest_for_testing():
    slm = load_reproduce("slm")
    y = np.repeat(np.arange(4), [7, 9, 8, 10])
    train, test = slm._split(y, 5, np.random.default_rng(0))
    assert np.bincount(y[train]).tolist() == [5, 5, 5, 5]
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(len(y)))


def test_slm_4nn_accuracy_is_a_majority_vote_of_the_four_nearest_training_images():
    slm = load_reproduce("slm")
    rng = np.random.default_rng(6)
    X, y = rng.standard_normal((60, 5)), rng.integers(0, 3, 60)
    train, test = np.arange(40), np.arange(40, 60)
    Psi = rng.standard_normal((2, 5))
    Y = X @ Psi.T
    distances = np.linalg.norm(Y[test][:, None, :] - Y[train][None, :, :], axis=2)
    votes = y[train][np.argsort(distances, axis=1)[:, :4]]
    counts = np.stack([np.sum(votes == c, axis=1) for c in range(3)], axis=1)
    decided = np.sort(counts, axis=1)[:, -1] > np.sort(counts, axis=1)[:, -2]       # ties are sklearn's to break
    predicted = np.argmax(counts, axis=1)
    ours = slm._accuracy(Psi, X, y, train, test)
    correct = np.sum((predicted == y[test])[decided])
    assert correct <= ours / 100.0 * len(test) <= correct + np.sum(~decided)


def test_nilepro_cell_text_never_prints_a_number_for_a_stopped_cell():
    nilepro = load_reproduce("nilepro")
    assert nilepro._cell_text({"dim": None, "status": "time limit", "search_s": 61.2}) == "t/l (61 s)"
    assert nilepro._cell_text({"dim": 7, "fit_s": 3.14}) == "7 (3.1 s)"


def test_thesis_knn_vote_shrinks_the_neighbourhood_on_a_tie_as_brute_force_does():
    thesis = load_reproduce("thesis_lmnn")
    rng = np.random.default_rng(3)
    D, y = rng.random((300, 40)), rng.integers(0, 4, 40)
    expected = []
    for row in D:
        order = np.argsort(row, kind="stable")
        for size in (3, 2, 1):
            votes = np.bincount(y[order[:size]], minlength=4)
            if np.sum(votes == votes.max()) == 1:
                expected.append(int(np.argmax(votes)))
                break
    assert thesis.knn_vote(D, y, 3).tolist() == expected
    # three nearest of three classes: the single nearest decides (not the smallest label)
    assert thesis.knn_vote(np.array([[0.3, 0.1, 0.2, 5.0]]), np.array([0, 2, 1, 1]), 3).tolist() == [2]


def test_thesis_leave_one_out_error_leaves_each_point_out():
    thesis = load_reproduce("thesis_lmnn")
    rng = np.random.default_rng(4)
    X, y = rng.standard_normal((30, 3)), rng.integers(0, 3, 30)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    wrong = 0
    for i in range(30):
        others = np.delete(np.arange(30), i)
        wrong += int(thesis.knn_vote(D[i:i + 1, others], y[others], 3)[0] != y[i])
    got = thesis.knn_errors(lambda r: D[r].copy(), y, y, 30, 3, leave_one_out=True, block=7)
    assert got == pytest.approx(100.0 * wrong / 30)
    assert got != pytest.approx(thesis.knn_errors(lambda r: D[r].copy(), y, y, 30, 3))  # self-match: 0 % error


def test_thesis_deskew_removes_the_slant_of_a_sheared_bar():
    thesis = load_reproduce("thesis_lmnn")
    rows, cols = np.mgrid[:28, :28].astype(float)
    image = np.exp(-((cols - 13.5 - 0.6 * (rows - 13.5)) ** 2) / 2.0) * ((rows > 4) & (rows < 23))

    def slant(img):
        img = img.reshape(28, 28)
        r0, c0 = (rows * img).sum() / img.sum(), (cols * img).sum() / img.sum()
        return ((rows - r0) * (cols - c0) * img).sum() / ((rows - r0) ** 2 * img).sum()

    straight = thesis.deskew(image.ravel()[None, :])[0]
    assert slant(image) == pytest.approx(0.6, abs=0.05)
    assert abs(slant(straight)) < 0.05 and straight.sum() == pytest.approx(image.sum(), rel=0.05)
