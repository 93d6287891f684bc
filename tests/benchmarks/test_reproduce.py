"""The reproduction framework of issue 22 (benchmarks/reproduce): its pieces against independent computations."""

import importlib
import json

import numpy as np
import pytest
import scipy.sparse as sp

from .conftest import load_paper, load_reproduce, load_script


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
    module = load_paper(paper)
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


def test_a_record_carries_its_run_conditions_and_the_report_shows_them(tmp_path):
    common = load_reproduce("common")

    def tiny(config, png):
        """Tiny.

        Paper
        -----
        Nothing.

        Departures
        ----------
        - none
        """
        return common.Outcome(published="p", ours="o", rows=[], verdict="reproduced", agreement="a", figure=False)

    experiment = common.Experiment("tiny", "Tiny", tiny, full={"n": 1}, quick={"n": 1})
    record = common.run_experiment("paper", experiment, False, results=tmp_path)
    for key in ("load_start", "load_end"):
        assert len(record[key]) == 3 and all(value >= 0.0 for value in record[key])
    used = record["blas_threads_used"]
    assert used is None or all(threads >= 1 for threads in (used if isinstance(used, list) else [used]))
    assert record["cpu_time_s"] >= 0.0
    text = common.section(record, tmp_path, tmp_path / "R.md")
    assert "load average (1/5/15 min) " + "/".join(f"{v:.2f}" for v in record["load_start"]) in text
    assert f"commit {record['commit']}, " in text and f"CPU time {record['cpu_time_s']:.0f} s" in text
    assert record["command"].endswith("python benchmarks/reproduce.py --paper paper --only tiny")
    old = {k: v for k, v in record.items() if k not in ("load_start", "load_end", "cpu_time_s", "commit")}
    old_text = common.section(old, tmp_path, tmp_path / "R.md")
    assert "load not recorded" in old_text and "commit not recorded" in old_text
    assert "CPU time not recorded" in old_text and f"wall time {record['wall_time_s']:.0f} s" in old_text


def test_the_command_of_a_record_repeats_the_run(monkeypatch):
    """Every thread variable set and every --set is in the command, and the runner's parser reads it back."""
    import shlex

    common, runner = load_reproduce("common"), load_script("reproduce")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    overrides = {"n": 800, "label": "a b", "sizes": [1, 2]}
    command = common.command_line("thesis-mvu", "fig3_14", True, overrides)
    words = shlex.split(command)
    assert words[:2] == ["OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1"] and "MKL_NUM_THREADS" not in command
    assert words[2:6] == ["python", "benchmarks/reproduce.py", "--paper", "thesis-mvu"] and "--quick" in words
    assert dict(runner._setting(words[i + 1]) for i, w in enumerate(words) if w == "--set") == overrides


def test_a_run_commit_is_dirty_when_a_benchmark_script_changed_but_not_a_result(tmp_path):
    import subprocess

    common = load_reproduce("common")
    assert common.run_commit(tmp_path) is None                      # not a git checkout
    for path in ("sdpembed/a.py", "benchmarks/reproduce/paper.py", "benchmarks/results/reproduce/x.json"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("0\n")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "c"]):
        subprocess.run([*git, *args], check=True)
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert common.run_commit(tmp_path) == head
    (tmp_path / "benchmarks/results/reproduce/x.json").write_text("1\n")   # a run's own output
    assert common.run_commit(tmp_path) == head
    (tmp_path / "benchmarks/reproduce/paper.py").write_text("1\n")          # the experiment's code
    assert common.run_commit(tmp_path) == head + "+dirty"


def test_knn_graph_weights_and_symmetrisations_against_a_direct_construction():
    baselines = load_reproduce("baselines")
    X = np.random.default_rng(7).standard_normal((30, 3))
    D = np.linalg.norm(X[:, None] - X[None], axis=2)
    np.fill_diagonal(D, np.inf)
    near = np.argsort(D, axis=1)[:, :4]
    directed = np.zeros((30, 30), dtype=bool)
    directed[np.repeat(np.arange(30), 4), near.ravel()] = True
    graphs = {s: baselines.knn_graph(X, 4, symmetrise=s).toarray() for s in ("none", "either", "mutual")}
    np.testing.assert_array_equal(graphs["none"] > 0, directed)
    np.testing.assert_array_equal(graphs["either"] > 0, directed | directed.T)
    np.testing.assert_array_equal(graphs["mutual"] > 0, directed & directed.T)
    heat = baselines.knn_graph(X, 4, weights="heat", sigma=0.7, symmetrise="none").toarray()
    np.testing.assert_allclose(heat[directed], np.exp(-(D[directed] / 0.7) ** 2))
    far = baselines.knn_graph(X, 4, weights="heat", sigma=1e-4, symmetrise="none")
    assert far.nnz < directed.sum() and np.all(far.data >= np.finfo(float).tiny)      # underflowed edges dropped


def test_unreached_vertices_get_no_score_and_the_others_their_harmonic_function():
    import scipy.sparse as sp

    baselines = load_reproduce("baselines")
    W, labelled, y = _graph_and_labels()
    blocks = sp.block_diag([W, sp.csr_matrix(np.ones((3, 3)) - np.eye(3))]).tocsr()       # + an unlabelled triangle
    unreached = baselines.reaching(blocks, labelled)
    assert unreached[:70].all() and not unreached[70:].any()
    scores = baselines.harmonic_scores(blocks, labelled, y[labelled], 3, unreached="zero")
    np.testing.assert_allclose(scores[:-3], baselines.harmonic_scores(W, labelled, y[labelled], 3), atol=1e-12)
    assert np.all(scores[-3:] == 0.0)


def test_directed_harmonic_scores_are_absorption_probabilities_of_the_random_walk():
    baselines = load_reproduce("baselines")
    rng = np.random.default_rng(8)
    X, y = rng.standard_normal((40, 2)), rng.integers(0, 2, 40)
    W = baselines.knn_graph(X, 5, symmetrise="none")
    labelled = np.sort(rng.choice(40, 15, replace=False))
    P = W.toarray() / W.toarray().sum(axis=1, keepdims=True)
    F = np.zeros((40, 2))
    F[labelled] = np.eye(2)[y[labelled]]
    for _ in range(5000):
        F = P @ F
        F[labelled] = np.eye(2)[y[labelled]]
    reached = baselines.reaching(W, labelled)
    unlabelled = np.setdiff1d(np.arange(40), labelled)
    scores = baselines.harmonic_scores(W, labelled, y[labelled], 2, unreached="zero")
    np.testing.assert_allclose(scores[reached[unlabelled]], F[unlabelled][reached[unlabelled]], atol=1e-8)


def test_harmonic_accuracy_readings_against_direct_counts():
    baselines = load_reproduce("baselines")
    rng = np.random.default_rng(9)
    X = np.vstack([rng.normal(0.0, 1.0, (30, 2)), rng.normal(2.0, 1.0, (30, 2)), rng.normal(-2.0, 1.0, (30, 2))])
    y = np.repeat([0, 1, 2], 30)
    assert baselines.harmonic_accuracy(X, y, k=8)["accuracy"] == pytest.approx(
        100.0 - baselines.harmonic_error(X, y, k=8))
    # the paper's ERR per class, fold by fold, from the harmonic scores
    from sklearn.model_selection import KFold

    W = baselines.knn_graph(X, 8)
    expected = []
    for train, test in KFold(10).split(X):
        known, unknown = np.sort(test), np.sort(train)          # one fold labelled, file order
        s = baselines.harmonic_scores(W, known, y[known], 3, unreached="zero")
        expected.append(np.mean([np.mean((s[:, c] >= 0.5) == (y[unknown] == c)) for c in range(3)]))
    found = baselines.harmonic_accuracy(X, y, k=8, labelled="fold", folds="file order", count="one_vs_rest")
    assert found["accuracy"] == pytest.approx(100.0 * np.mean(expected))
    with pytest.raises(ValueError, match="labelled"):
        baselines.harmonic_accuracy(X, y, labelled="half")


def test_class_index_readings_solve_one_harmonic_function_of_the_index():
    """decision="index_half"/"index_round": x_u = L_uu⁻¹ W_ul c_l with c the class index, solved directly."""
    baselines = load_reproduce("baselines")
    from scipy.sparse.linalg import spsolve
    from sklearn.model_selection import StratifiedKFold

    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(0.0, 1.0, (25, 2)), rng.normal(2.5, 1.0, (25, 2)), rng.normal(5.0, 1.0, (25, 2))])
    y = np.repeat([0, 1, 2], 25)
    W = baselines.knn_graph(X, 8).tocsr()
    L = (sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W).tocsr()
    half, nearest = [], []
    for train, test in StratifiedKFold(10, shuffle=True, random_state=0).split(X, y):
        known, unknown = np.sort(train), np.sort(test)
        x = spsolve(L[unknown][:, unknown].tocsc(), W[unknown][:, known] @ y[known].astype(float))
        half.append(np.mean((x >= 0.5).astype(int) == y[unknown]))
        nearest.append(np.mean(np.clip(np.rint(x), 0, 2) == y[unknown]))
    found = {d: baselines.harmonic_accuracy(X, y, k=8, decision=d)["accuracy"] for d in ("index_half", "index_round")}
    assert found["index_half"] == pytest.approx(100.0 * np.mean(half))
    assert found["index_round"] == pytest.approx(100.0 * np.mean(nearest))
    assert found["index_half"] <= 100.0 * 50 / 75 + 1e-9              # class 2 is never predicted
    with pytest.raises(ValueError, match="multiclass"):
        baselines.harmonic_accuracy(X, y, k=8, decision="index_half", count="one_vs_rest")


def test_paired_differences_and_spreads_against_direct_formulas():
    slm, numax = load_reproduce("slm"), load_reproduce("numax")
    a, b = np.array([50.0, 47.0, 52.0, 44.0]), np.array([49.0, 50.0, 50.0, 46.0])
    d = a - b
    assert slm.paired_mean_se(a, b) == pytest.approx((d.mean(), np.std(d, ddof=1) / 2.0))
    assert slm.paired_mean_se([3.0], [1.0]) == (2.0, 0.0)
    assert numax._paired_worse(np.array([1, 0, 1, 1]), np.array([0, 0, 1, 0])) == pytest.approx(
        (50.0, 100.0 * np.std([1, 0, 0, 1], ddof=1) / 2.0))
    stat = numax._spread([6.0, None, 8.0, 7.0])
    assert stat == pytest.approx({"mean": 7.0, "sd": 1.0, "min": 6.0, "max": 8.0, "n": 3})
    assert numax._spread_text(stat) == "7.0× ± 1.0 (6.0–8.0)" and numax._spread_text(numax._spread([None])) == "—"


def test_no_information_accuracies_from_class_sizes():
    adagio = load_reproduce("adagio")
    assert adagio._trivial((500, 268)) == pytest.approx((100 * 500 / 768, 100 * 500 / 768))
    assert adagio._trivial((50, 50, 50)) == pytest.approx((100 / 3, 200 / 3))
    assert adagio._trivial((70, 76, 17, 13, 9, 29))[1] == pytest.approx(100 * (1 - 1 / 6))


def test_the_report_lists_pictures_without_experiments_and_experiments_without_functions(tmp_path):
    from types import SimpleNamespace

    common = load_reproduce("common")
    paper = SimpleNamespace(TITLE="A paper", DATA_NOTE="Data.", EXPERIMENTS=(), NOT_IMPLEMENTED=["Fig. 8 (no data)"],
                            NOT_EXPERIMENTS=["Fig. 1 (example images)"])
    text = common.write_report({"p": paper}, tmp_path, tmp_path / "R.md").read_text()
    assert "without a function yet: Fig. 8 (no data)." in text
    assert "report no experiment: Fig. 1 (example images)." in text
    for name in _papers():                                   # every paper module's listing is well formed
        module = load_paper(name)
        assert all(isinstance(item, str) and item for item in getattr(module, "NOT_EXPERIMENTS", []))


def test_nilepro_cell_text_flags_a_run_that_did_not_reach_delta():
    nilepro = load_reproduce("nilepro")
    assert nilepro._cell_text({"dim": 9, "fit_s": 2.0, "status": "optimal", "met_delta": False}) == "9 (2.0 s)"
    assert nilepro._cell_text({"dim": 9, "fit_s": 2.0, "status": "stalled"}) == "9 (2.0 s), stalled: δ not reached"
    assert nilepro._limits("fromax", 70) == {"max_iter": 70} and nilepro._limits("numax", 70) == {}


def test_nilepro_cells_are_judged_by_their_cpu_seconds_where_recorded():
    nilepro = load_reproduce("nilepro")
    row = {"dim": 7, "fit_s": 9.0, "fit_cpu_s": 3.14, "status": "converged"}
    assert nilepro._cell_text(row) == "7 (3.1 s CPU)" and nilepro._cpu(row) == 3.14
    assert nilepro._cpu({"dim": 7, "fit_s": 9.0}) == 9.0                  # records without CPU seconds


def test_a_native_cell_records_its_cpu_seconds_and_the_runs_of_its_rank_adjustment():
    from sdpembed.validation import SecantSet

    load_reproduce("common")                                  # puts benchmarks/ on sys.path
    linear_family = importlib.import_module("linear_family")
    X = np.random.default_rng(4).standard_normal((12, 6))
    row = linear_family._native_cell("NILE-Pro RA", "nilepro", X, 0.3, None, SecantSet(X=X), {"max_iter": 300})
    assert row["fit_cpu_s"] > 0.0 and row["dim"] >= 1
    assert row["steps"] and all(step["iterations"] <= 300 for step in row["steps"])
    assert sum(row["attempts_per_rank"].values()) == len(row["steps"])


def test_nested_dimension_is_the_first_prefix_that_reaches_delta():
    from sdpembed.validation import SecantSet

    numax = load_reproduce("numax")
    rng = np.random.default_rng(10)
    V = rng.standard_normal((60, 12)) * np.linspace(3.0, 0.1, 12)
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    U = np.linalg.svd(V, full_matrices=False)[2]
    direct = [SecantSet(secants=V).isometry_constant(U[:m]) for m in range(1, 13)]
    for delta in (0.9, 0.5, 0.2, 0.05):
        expected = next(m for m, d in enumerate(direct, start=1) if d <= delta)
        assert numax._nested_dim(U, V, delta) == expected


def test_the_fig6_reason_test_quotes_the_stored_fig6_ratio_only_when_one_is_stored(tmp_path):
    import json

    numax = load_reproduce("numax")
    assert numax._stored_fig6(tmp_path / "fig6.json", 0.2) == ""
    rows = {"dims_table": [{"delta": 0.2, "rank": 20, "pca_dim": 76}, {"delta": 0.1, "rank": 27, "pca_dim": None}]}
    (tmp_path / "fig6.json").write_text(json.dumps({"rows": rows, "config": {"n_images": 78}}))
    assert "all pairs of 78 images" in numax._stored_fig6(tmp_path / "fig6.json", 0.2)
    assert "3.8×" in numax._stored_fig6(tmp_path / "fig6.json", 0.2)
    assert numax._stored_fig6(tmp_path / "fig6.json", 0.1) == ""


def test_thesis_kernel_helpers_against_direct_computations():
    kernel = load_reproduce("thesis_mvu_kernel")
    rng = np.random.default_rng(0)
    # points on a line: geodesic = Euclidean distance, so Isomap's matrix is the centred Gram matrix
    t = np.arange(40) + rng.uniform(-0.2, 0.2, 40)
    X = np.column_stack([t, 2 * t]) / np.sqrt(5)
    Xc = X - X.mean(axis=0)
    assert np.allclose(kernel.isomap_matrix(X, 3), Xc @ Xc.T, atol=1e-9)
    # equally spaced points on a circle: every point's two nearest neighbours lie at the chord length
    angle = np.arange(30) * 2 * np.pi / 30
    ring = np.column_stack([np.cos(angle), np.sin(angle)])
    assert kernel.gaussian_width(ring, 2) == pytest.approx(2 * np.sin(np.pi / 30), rel=1e-12)
    # the spectrum is the centred kernel's, normalised; the linear kernel's PCA is PCA
    Z = rng.normal(size=(50, 4)) * [5.0, 2.0, 1.0, 0.1]
    s = kernel.spectrum(Z @ Z.T)
    Zc = Z - Z.mean(axis=0)
    direct = np.linalg.svd(Zc, compute_uv=False) ** 2
    assert np.allclose(s[:4], direct / direct.sum()) and np.all(np.diff(s) <= 1e-12)
    assert kernel.dims_for(s, 0.95) == int(np.searchsorted(np.cumsum(direct / direct.sum()), 0.95) + 1)
    scores = kernel.kernel_pca(Z @ Z.T, 2)
    U, S, _ = np.linalg.svd(Zc, full_matrices=False)
    assert np.allclose(np.abs(scores), np.abs(U[:, :2] * S[:2]), atol=1e-8)
    # two far clusters are linked by one edge, as MVU's graph is: every geodesic is finite
    G = kernel.geodesic_distances(np.vstack([X, X + 100.0]), 2)
    assert np.all(np.isfinite(G)) and G[0, 40] > 100.0


def test_thesis_mvu_measures_against_direct_computations():
    thesis = load_reproduce("thesis_mvu")
    rng = np.random.default_rng(8)
    T = rng.standard_normal((50, 2))
    angle = 0.7
    R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    assert thesis._procrustes_error(3.0 * T @ R + 5.0, T) < 1e-12          # a similarity transform is no error
    assert thesis._procrustes_error(T[:, ::-1] * [1.0, 4.0], T) > 0.3       # a stretch is
    assert thesis._dims_for(np.array([0.5, 0.3, 0.15, 0.05]), 0.9) == 3
    assert thesis._thickness(np.column_stack([rng.standard_normal(400) * 10, rng.standard_normal(400)])) \
        == pytest.approx(0.1, rel=0.2)
    y = np.repeat([0, 1], 30)
    Y = np.column_stack([y * 10.0 + rng.standard_normal(60), rng.standard_normal(60)])
    assert thesis._knn_accuracy(Y, y) == 1.0
    assert thesis._knn_accuracy(rng.standard_normal((60, 2)), y) < 0.8
    # the arc length of the spiral r = t: its derivative is √(1 + t²)
    t = np.linspace(2.0, 14.0, 7)
    np.testing.assert_allclose((thesis._arc_length(t + 1e-6) - thesis._arc_length(t - 1e-6)) / 2e-6,
                               np.sqrt(1 + t * t), rtol=1e-6)


def test_thesis_mvu_comb_is_a_spine_with_unit_teeth():
    thesis = load_reproduce("thesis_mvu")
    X, label = thesis.comb(300, teeth=8)
    assert X.shape == (300, 2) and set(label.tolist()) == set(range(9))
    spine = X[label == 0]
    assert np.allclose(spine[:, 1], 0.0, atol=1e-3) and spine[:, 0].max() < 0.25 * 7
    for tooth in range(1, 9):
        points = X[label == tooth]
        assert np.allclose(points[:, 0], 0.25 * (tooth - 1), atol=1e-3)
        assert 0.0 < points[:, 1].min() and points[:, 1].max() <= 1.05         # a tooth is one unit long
    spacing = np.diff(np.sort(spine[:, 0]))                      # evenly spaced along the lines
    np.testing.assert_allclose(spacing, spacing.mean(), atol=1e-3)


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


def test_thesis_mvu_edge_length_ratios_and_isometric_spectrum_against_direct_computations():
    thesis = load_reproduce("thesis_mvu")
    reasons = load_reproduce("thesis_mvu_reasons")
    rng = np.random.default_rng(9)
    X = rng.standard_normal((12, 3))
    Y = X[:, :2] * [1.0, 0.5]                        # the second coordinate squeezed: some edges shorten
    edges = np.array([(i, j) for i in range(12) for j in range(i + 1, 12) if (i + j) % 3 == 0])
    sqdist = np.sum((X[edges[:, 0]] - X[edges[:, 1]]) ** 2, axis=1)
    direct = [np.linalg.norm(Y[i] - Y[j]) / np.linalg.norm(X[i] - X[j]) for i, j in edges]
    np.testing.assert_allclose(thesis.edge_length_ratios(edges, sqdist, Y @ Y.T), direct, rtol=1e-10)
    assert np.all(thesis.edge_length_ratios(edges, sqdist, X @ X.T) == pytest.approx(1.0))
    # an isometric unrolling of a roll: the spectrum of (arc length, height) points, normalised
    params = np.column_stack([rng.uniform(1.5 * np.pi, 4.5 * np.pi, 400), rng.uniform(0, 21.0, 400)])
    flat = np.column_stack([thesis._arc_length(params[:, 0]), params[:, 1]])
    w = np.linalg.svd(flat - flat.mean(axis=0), compute_uv=False) ** 2
    np.testing.assert_allclose(reasons.isometric_spectrum(params), w / w.sum(), rtol=1e-10)


def test_thesis_mvu_reason_tests_follow_the_experiment_they_explain():
    experiments = load_paper("thesis-mvu").EXPERIMENTS
    keys = [e.key for e in experiments]
    reasons = [k for k in keys if "_reasons" in k]
    assert len(reasons) == (len(load_reproduce("thesis_mvu_reasons").EXPERIMENTS)
                            + len(load_reproduce("thesis_mvu_measures").EXPERIMENTS)
                            + len(load_reproduce("thesis_mvu_trust").EXPERIMENTS)
                            + len(load_reproduce("thesis_mvu_lockup").EXPERIMENTS)
                            + len(load_reproduce("thesis_mvu_why").EXPERIMENTS)
                            + sum("_reasons" in e.key for e in load_reproduce("thesis_mvu_more").EXPERIMENTS)) >= 5
    for key in reasons:                          # <figure>_reasons[_<candidate>] after its figure or a sibling
        figure = key.split("_reasons")[0]
        before = keys[keys.index(key) - 1]
        assert before == figure or before.startswith(f"{figure}_reasons")
    assert len(keys) == len(set(keys))


def _numbered(label: str) -> set[str]:
    """The figures and tables a listing names before its dash or bracket: "Fig. 3.24–3.25 — …" gives
    {"Fig. 3.24", "Fig. 3.25"}, "Fig. 3.9, 3.10 and 3.31 (…)" three figures."""
    import re

    kind = "Table" if label.startswith("Table") else "Fig."
    head = re.split(r" — | \(", label, maxsplit=1)[0]
    names = set()
    for first, last in re.findall(r"3\.(\d+)(?:–3\.(\d+))?", head):
        names |= {f"{kind} 3.{i}" for i in range(int(first), int(last or first) + 1)}
    return names


def test_thesis_mvu_lists_every_numbered_figure_and_table_of_chapter_3_once():
    module = load_paper("thesis-mvu")
    groups = {"experiments": set().union(*(_numbered(e.title) for e in module.EXPERIMENTS)),
              "not implemented": set().union(*(_numbered(item) for item in module.NOT_IMPLEMENTED)),
              "no experiment": set().union(*(_numbered(item) for item in module.NOT_EXPERIMENTS))}
    assert _numbered("Fig. 3.24–3.25 — x") == {"Fig. 3.24", "Fig. 3.25"}
    assert _numbered("Fig. 3.9, 3.10 and 3.31 (teapot 3.2)") == {"Fig. 3.9", "Fig. 3.10", "Fig. 3.31"}
    chapter = {f"Fig. 3.{i}" for i in range(1, 38)} | {f"Table 3.{i}" for i in range(1, 4)}
    assert set().union(*groups.values()) == chapter
    for a, b in (("experiments", "not implemented"), ("experiments", "no experiment"),
                 ("not implemented", "no experiment")):
        assert not groups[a] & groups[b], (a, b, groups[a] & groups[b])


def test_thesis_random_projection_moments_against_the_beta_law_and_a_sample():
    from scipy.stats import beta

    more = load_reproduce("thesis_mvu_more")
    for d, k in ((100, 2), (100, 16), (7, 3)):
        mean, variance = more.projected_norm_moments(d, k)
        law = beta(k / 2, (d - k) / 2)                                   # ‖x_p‖² of a uniform unit vector
        assert mean == pytest.approx(d / k * law.mean()) and variance == pytest.approx((d / k) ** 2 * law.var())
    norms = more.projected_norms(200000, 10, [3, 10], seed=1)
    np.testing.assert_allclose(norms[10], 1.0)                           # k = d: the unit norm itself
    assert norms[3].var() == pytest.approx(more.projected_norm_moments(10, 3)[1], rel=0.02)


def test_thesis_laplacian_figure_helpers_against_direct_computations():
    more = load_reproduce("thesis_mvu_more")
    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 3))
    R = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    assert more.subspace_agreement(A, A @ R) == pytest.approx(1.0)      # one span, other coordinates
    e = np.eye(6)
    assert more.subspace_agreement(e[:, :2], e[:, 2:4]) == pytest.approx(0.0, abs=1e-12)
    path = np.array([[0, 1], [1, 2], [2, 3]])
    np.testing.assert_allclose(more.sign_change_share(np.array([[1.0, 1.0], [2.0, -1.0], [-1.0, 1.0],
                                                                [-3.0, -1.0]]), path), [1 / 3, 1.0])
    points = rng.random((30, 2))
    modes, frequency = more.square_modes(points, 5)
    assert frequency.tolist() == [1, 1, 2, 4, 4]                          # (1,0), (0,1), (1,1), (2,0), (0,2)
    u = (points - points.min(axis=0)) / np.ptp(points, axis=0)
    np.testing.assert_allclose(modes[:, 0], np.cos(np.pi * u[:, 0]))
    np.testing.assert_allclose(modes[:, 2], np.cos(np.pi * u[:, 0]) * np.cos(np.pi * u[:, 1]))
    truth = rng.random((40, 2))
    turn = np.array([[0.0, -1.0], [1.0, 0.0]])
    aligned, errors = more._aligned(truth @ turn.T + 3.0, truth)          # rotated and moved: no error
    np.testing.assert_allclose(aligned, truth, atol=1e-12)
    assert errors.max() < 1e-12


def test_thesis_ball_tree_split_rule_partitions_into_small_balls():
    trees = load_reproduce("thesis_lmnn_trees")
    rng = np.random.default_rng(5)
    X = np.vstack([rng.standard_normal((300, 2)), rng.standard_normal((200, 2)) + [4.0, 0.0]])
    X[:20] = X[0]                                                # duplicates: still split, by index
    levels = trees.thesis_ball_tree(X, 10, np.random.default_rng(0))
    for level in levels:                                         # every level is a partition of the points
        assert np.array_equal(np.sort(np.concatenate(level)), np.arange(len(X)))
    assert len(levels[0]) == 1 and len(levels[1]) == 2 and all(len(s) <= 10 for s in levels[-1])
    assert all(len(s) > 10 for s in levels[-2] if not any(np.array_equal(s, t) for t in levels[-1]))
    # the first split, by hand: farthest from a random point, farthest from that, cut at the mean projection
    r = X[np.random.default_rng(0).integers(len(X))]
    x1 = X[np.argmax(np.linalg.norm(X - r, axis=1))]
    x2 = X[np.argmax(np.linalg.norm(X - x1, axis=1))]
    proj = X @ (x1 - x2)
    assert np.array_equal(levels[1][0], np.flatnonzero(proj <= proj.mean()))


def test_thesis_ball_tree_knn_matches_brute_force_with_the_tie_rule():
    trees = load_reproduce("thesis_lmnn_trees")
    rng = np.random.default_rng(6)
    Xtr, ytr = rng.standard_normal((400, 4)), rng.integers(0, 3, 400)
    Xte, yte = rng.standard_normal((150, 4)), rng.integers(0, 3, 150)
    out = trees.timed_knn(Xtr, ytr, Xte, yte, 3, 1)
    assert out["agree"] == 1.0
    thesis = load_reproduce("thesis_lmnn")
    D = ((Xte[:, None, :] - Xtr[None, :, :]) ** 2).sum(axis=2)
    assert out["error"] == pytest.approx(100.0 * np.mean(thesis.knn_vote(D, ytr, 3) != yte))


def test_thesis_paired_difference_and_standard_error():
    thesis = load_reproduce("thesis_lmnn")
    rows = [{"a": a, "b": b} for a, b in [(1.0, 0.5), (2.0, 1.0), (0.0, 0.5)]]
    mean, se = thesis._paired(rows, "a", "b")
    d = np.array([0.5, 1.0, -0.5])
    assert mean == pytest.approx(d.mean()) and se == pytest.approx(d.std(ddof=1) / np.sqrt(3))


def test_thesis_fig2_9_digits_sentence_follows_the_table2_1_record(tmp_path, monkeypatch):
    thesis = load_reproduce("thesis_lmnn")
    study = [{"lmnn_knn": 1.0, "passes_knn": {"1": 1.0, "2": 1.1}, "validated_knn": 1.0, "chosen": 1},
             {"lmnn_knn": 2.0, "passes_knn": {"1": 2.0, "2": 2.1}, "validated_knn": 2.0, "chosen": 1}]
    monkeypatch.setattr(thesis, "_split_study", lambda name, settings: study)
    config = {"splits": 2, "passes": [1, 2]}
    png = tmp_path / "fig2_9_digits.png"
    assert "Table 2.1 not run yet" in thesis.fig2_9_digits(config, png).agreement
    summary = {m: {"test_knn": v} for m, v in (("PCA-LMNN", 0.8), ("MUL-LMNN", 1.096))}
    (tmp_path / "table2_1.json").write_text(json.dumps({"rows": {"digits": {"summary": summary}}}))
    sentence = thesis.fig2_9_digits(config, png).agreement
    assert "Fig. 2.9's 1.37 (0.80 % → 1.10 %" in sentence and "1.20" not in sentence
    assert "The hypothesis holds" in sentence                  # validated = one pass here: ratio 1.00


def test_polish_equalities_solves_a_flexible_framework_and_stalls_on_an_impossible_one():
    polish = load_reproduce("thesis_mvu_reasons").polish_equalities
    # a unit square without diagonals flexes: from a distorted start it meets every edge to rounding
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 0]])
    start = np.array([[0.0, 0.0], [1.3, 0.1], [1.1, 0.8], [-0.1, 1.2]])
    Y, history = polish(start, edges, np.ones(4), steps=50, tol=1e-12)
    lengths = np.sum((Y[edges[:, 0]] - Y[edges[:, 1]]) ** 2, axis=1)
    assert history[-1] <= 1e-12 and np.allclose(lengths, 1.0, atol=1e-12) and history[0] > 0.5
    # squared lengths 1, 1, 9 on a triangle break the triangle inequality: no points in any dimension
    triangle = np.array([[0, 1], [1, 2], [2, 0]])
    _, stalled = polish(np.eye(3), triangle, np.array([1.0, 1.0, 9.0]), steps=50, tol=1e-9)
    assert stalled[-1] > 0.1


def test_transformed_digit_rotates_scales_and_shifts_the_centred_digit():
    reasons = load_reproduce("thesis_mvu_reasons")
    from sdpembed.datasets import load_mnist
    X, y = load_mnist(size=28)
    canvas = np.zeros((40, 40))
    canvas[6:34, 6:34] = X[np.flatnonzero(y == 3)[0]].reshape(28, 28)

    def one(angle, scale, shift):
        ranges = {"angle": (angle, angle), "scale": (scale, scale), "shift": (shift, shift)}
        images, params = reasons.transformed_digit(2, ranges, 0)
        assert images.shape == (2, 1600) and np.allclose(params, [angle, scale, shift])
        return images[0].reshape(40, 40)

    assert np.array_equal(one(0.0, 1.0, 0.0), canvas)                       # the identity
    assert np.allclose(one(90.0, 1.0, 0.0), np.rot90(canvas), atol=1e-12)    # a quarter turn about the centre
    assert np.array_equal(one(0.0, 1.0, 3.0), np.roll(canvas, 3, axis=1))    # three pixels to the right
    small = one(0.0, 0.5, 0.0)                                               # half size: a quarter of the ink
    assert small.sum() == pytest.approx(canvas.sum() / 4, rel=0.05)
    assert small[:12].sum() == small[28:].sum() == 0.0
    # drawn uniformly from the ranges, seeded
    images, params = reasons.transformed_digit(50, reasons.MANIFOLDS["rotation × scale"], 1)
    assert np.all((params[:, 0] >= -60) & (params[:, 0] <= 60) & (params[:, 1] >= 0.7) & (params[:, 1] <= 1.3))
    assert np.array_equal(images, reasons.transformed_digit(50, reasons.MANIFOLDS["rotation × scale"], 1)[0])


def test_stress_summary_of_the_braced_square_and_of_a_non_stress():
    reasons = load_reproduce("thesis_mvu_reasons")
    # a unit square with both diagonals: sides +1, diagonals −1 is its equilibrium stress, PSD of rank 1
    X = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [0, 2], [1, 3]])
    w = np.array([1.0, 1.0, 1.0, 1.0, -1.0, -1.0])
    summary = reasons.stress_summary(w, X, edges)
    assert summary["equilibrium"] < 1e-15 and abs(summary["min_over_max"]) < 1e-15 and summary["rank"] == 1
    assert reasons.stress_summary(-w, X, edges) == summary                  # oriented by its largest eigenvalue
    # unit weights: the graph's Laplacian, PSD of rank 3 but no equilibrium of the square
    plain = reasons.stress_summary(np.ones(6), X, edges)
    assert plain["equilibrium"] > 0.1 and plain["rank"] == 3 and plain["min_over_max"] > -1e-15
    # an indefinite stress: a negative least eigenvalue
    assert reasons.stress_summary(np.array([1.0, -1.0, 1.0, -1.0, 0.0, 0.0]), X, edges)["min_over_max"] < -0.1
    # residual_stress reads the residual g_e / D_e of outputs as that stress
    Y = X * np.sqrt(2.0)                                                      # every squared length doubled
    sqdist = np.sum((X[edges[:, 0]] - X[edges[:, 1]]) ** 2, axis=1)
    read, direct = reasons.residual_stress(Y, X, edges, sqdist), reasons.stress_summary(1.0 / sqdist, X, edges)
    assert read == pytest.approx(direct, abs=1e-12) and read["rank"] == direct["rank"] == 3


def test_t_interval_against_scipy_and_the_seeds_rule():
    reasons = load_reproduce("thesis_mvu_reasons")
    from scipy import stats
    d = [-0.02, 0.01, -0.03, 0.005]
    interval = reasons.t_interval(d)
    low, high = stats.t.interval(0.95, 3, loc=np.mean(d), scale=stats.sem(d))
    assert interval["mean"] == pytest.approx(np.mean(d)) and interval["count"] == 4
    assert (interval["low"], interval["high"]) == pytest.approx((low, high))
    # by hand: sd / √4 and t(0.975, 3) = 3.182446
    se = np.std(d, ddof=1) / 2.0
    assert interval["high"] - interval["mean"] == pytest.approx(3.182446 * se, rel=1e-6)
    assert reasons.seeds_decision(interval, True) == "supported"            # contains 0
    below = reasons.t_interval([-0.03, -0.02, -0.025])
    assert below["high"] < 0 and reasons.seeds_decision(below, True) == "refuted"
    above = reasons.t_interval([0.03, 0.02, 0.025])
    assert above["low"] > 0 and reasons.seeds_decision(above, True) == "supported"
    assert reasons.seeds_decision(below, False).startswith("undecided")
    single = reasons.t_interval([0.1])
    assert np.isnan(single["low"]) and reasons.seeds_decision(single, True).startswith("undecided")


def test_measures_rule_supports_on_both_decided_measures_and_refutes_on_either_corrected_interval():
    measures = load_reproduce("thesis_mvu_measures")
    from scipy import stats
    above, straddle = [0.03, 0.02, 0.025, 0.028], [0.02, -0.01, 0.015, -0.005]
    below = [-0.03, -0.02, -0.025, -0.028]
    rule = measures.measures_decision({"continuity": below, "trust": above, "intersection": above}, True)
    assert rule["decision"] == "supported"                       # continuity below decides nothing
    for m, d in (("continuity", below), ("trust", above)):       # each interval is scipy's at its level
        low, high = stats.t.interval(0.95, 3, loc=np.mean(d), scale=stats.sem(d))
        assert (rule["intervals"][m]["low"], rule["intervals"][m]["high"]) == pytest.approx((low, high))
    low, high = stats.t.interval(0.975, 3, loc=np.mean(above), scale=stats.sem(above))
    assert measures.REFUTE_LEVEL == pytest.approx(0.975)         # Bonferroni over the two decided measures
    assert (rule["refute_intervals"]["trust"]["low"], rule["refute_intervals"]["trust"]["high"]) == pytest.approx(
        (low, high))
    assert set(rule["refute_intervals"]) == {"trust", "intersection"}
    one = measures.measures_decision({"continuity": above, "trust": above, "intersection": straddle}, True)
    assert one["decision"].startswith("undecided (intersection interval")
    assert measures.measures_decision({"continuity": above, "trust": below, "intersection": above},
                                      True)["decision"] == "refuted"
    # below at 95 % but not at the corrected 97.5 %: not refuted
    edge = [-0.010, -0.003, -0.012, -0.005]
    assert measures.t_interval(edge, 0.95)["high"] < 0 < measures.t_interval(edge, 0.975)["high"]
    assert measures.measures_decision({"continuity": above, "trust": edge, "intersection": above},
                                      True)["decision"].startswith("undecided (trust interval")
    assert measures.measures_decision({"continuity": above, "trust": above, "intersection": above},
                                      False)["decision"] == "undecided (a solve is not a certified optimum)"
    assert measures.measures_decision({"continuity": [0.1], "trust": [0.1], "intersection": [0.1]},
                                      True)["decision"] == "undecided (fewer than two samples)"


def test_interval_power_is_the_frequency_of_simulated_intervals_clearing_zero():
    measures = load_reproduce("thesis_mvu_measures")
    from scipy import stats
    rng = np.random.default_rng(4)
    for sd, effect, samples, level in ((0.014, 0.0075, 12, 0.95), (0.013, -0.006, 30, 0.975), (0.02, 0.002, 5, 0.95)):
        d = effect + sd * rng.standard_normal((40_000, samples))
        half = stats.t.ppf(0.5 + level / 2.0, samples - 1) * d.std(axis=1, ddof=1) / np.sqrt(samples)
        clears = d.mean(axis=1) - half > 0 if effect > 0 else d.mean(axis=1) + half < 0
        assert measures.interval_power(sd, effect, samples, level) == pytest.approx(clears.mean(), abs=0.01)
        iv = measures.t_interval(d[0], level)                    # the simulated interval is the rule's
        assert (iv["low"], iv["high"]) == pytest.approx((d[0].mean() - half[0], d[0].mean() + half[0]))


def test_the_larger_measures_test_reads_fresh_seeds_and_its_stated_powers():
    measures = load_reproduce("thesis_mvu_measures")
    (larger,) = [e for e in measures.EXPERIMENTS if e.key == "table3_2_reasons_measures_larger"]
    seeds = larger.full["seeds"]
    assert len(set(seeds)) == len(seeds) == 48 and f"S = {len(seeds)} seeds" in larger.run.__doc__
    assert f"{len(seeds)} fresh seeds" in larger.title
    read = set()                                  # every seed any other thesis-mvu experiment draws with
    for e in load_paper("thesis-mvu").EXPERIMENTS:
        for config in ((e.quick,) if e is larger else (e.full, e.quick)):
            read |= set(config.get("seeds", [])) | ({config["seed"]} if "seed" in config else set())
    assert not read & set(seeds)
    doc = " ".join(larger.run.__doc__.split())
    for sd, effect, level, stated in ((0.0138, 0.0075, 0.95, "0.96"), (0.0138, 0.011, 0.95, "1.00"),
                                      (0.0138, 0.004, 0.95, "0.50"), (0.0243, 0.033, 0.95, "1.00"),
                                      (0.0134, -0.006, 0.975, "0.78")):
        assert f"{sd}" in doc
        assert f"{measures.interval_power(sd, effect, len(seeds), level):.2f}" == stated and stated in doc


def test_measures_verdict_needs_the_digits_supported_and_no_replication_refuted():
    verdict = load_reproduce("thesis_mvu_measures").measures_verdict
    assert verdict({"digits": "supported", "mnist": "undecided (x)"}) == "reproduced in trend"
    assert verdict({"digits": "supported", "mnist": "refuted"}) == "differs"
    assert verdict({"digits": "undecided (x)", "mnist": "supported"}) == "differs"
    assert verdict({"digits": "refuted", "mnist": "supported"}) == "differs"
    assert verdict({"mnist": "supported"}, primary="mnist") == "reproduced in trend"


def test_trust_readings_against_a_brute_force_evaluation_of_each_reading():
    trust = load_reproduce("thesis_mvu_trust")
    from scipy.optimize import minimize_scalar

    from sdpembed.validation.embedding_quality import local_trust
    rng = np.random.default_rng(11)
    X = rng.standard_normal((30, 5))
    Y = X[:, :2] @ np.array([[2.0, 0.3], [0.0, 1.5]]) + 0.8 * rng.standard_normal((30, 2))      # no ties
    l, n = 4, len(X)
    DX = np.sqrt(((X[:, None] - X[None]) ** 2).sum(axis=2))
    DY = np.sqrt(((Y[:, None] - Y[None]) ** 2).sum(axis=2))

    def sets(D, count, itself=False):        # nearest first by sorting each row; the point itself first or left out
        return [[j for j in np.argsort(D[i], kind="stable") if itself or j != i][:count] for i in range(n)]

    def one_minus_min(pairs, scaled, other):
        def ratio(s):
            residual = sum((s * scaled[i, j] - other[i, j]) ** 2 for i, j in pairs)
            return residual / sum(other[i, j] ** 2 for i, j in pairs)
        return 1.0 - minimize_scalar(ratio, bounds=(0.0, 100.0), method="bounded", options={"xatol": 1e-12}).fun

    out_pairs = [(i, j) for i, js in enumerate(sets(DY, l)) for j in js]
    in_pairs = [(i, j) for i, js in enumerate(sets(DX, l)) for j in js]
    s_c = minimize_scalar(lambda s: sum((s * DY[i, j] - DX[i, j]) ** 2 for i, j in in_pairs), bounds=(0.0, 100.0),
                          method="bounded", options={"xatol": 1e-12}).x
    denominator = sum(DY[i, j] ** 2 for i, j in out_pairs)
    expected = {
        "printed": one_minus_min(out_pairs, DX, DY),
        "s = 1": 1.0 - sum((DX[i, j] - DY[i, j]) ** 2 for i, j in out_pairs) / denominator,
        "continuity's s": 1.0 - sum((DX[i, j] / s_c - DY[i, j]) ** 2 for i, j in out_pairs) / denominator,
        "s on the outputs": 1.0 - minimize_scalar(lambda s: sum((s * DY[i, j] - DX[i, j]) ** 2 for i, j in out_pairs),
                                                  bounds=(0.0, 100.0), method="bounded",
                                                  options={"xatol": 1e-12}).fun / denominator,
        "per point": np.mean([one_minus_min([(i, j) for j in js], DX, DY) for i, js in enumerate(sets(DY, l))]),
        "squared distances": one_minus_min(out_pairs, DX ** 2, DY ** 2),
        "point in its set": one_minus_min([(i, j) for i, js in enumerate(sets(DY, l, itself=True)) for j in js],
                                          DX, DY),
    }
    got = trust.trust_readings(X, Y, l)
    assert set(got) == set(expected) == set(trust.READINGS)
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=1e-8), name
    assert got["printed"] == pytest.approx(local_trust(X, Y, l), abs=1e-12)
    assert len({round(v, 6) for v in got.values()}) == len(got)          # the readings differ here


def test_trust_calibration_and_held_out_rule():
    trust = load_reproduce("thesis_mvu_trust")

    def span(lo, hi):
        return {"min": lo, "median": (lo + hi) / 2, "max": hi}

    # PCA's published trust 0.389: held by 'printed' and 's = 1', the nearer median wins; none when no range holds it
    assert trust.calibrate({"printed": span(0.30, 0.52), "s = 1": span(0.38, 0.40)}, 0.389) == "s = 1"
    assert trust.calibrate({"printed": span(0.30, 0.52), "s = 1": span(0.0, 0.3)}, 0.389) == "printed"
    assert trust.calibrate({"printed": span(0.40, 0.52)}, 0.389) is None
    assert trust.calibrate({"printed": span(0.3895, 0.52)}, 0.389) == "printed"      # within the rounding

    def row(c_lo, c_hi, printed, other):
        return {"continuity": span(c_lo, c_hi), "trust": {name: printed if name == "printed" else other
                                                           for name in trust.READINGS}}
    # Isomap published 0.978 / 0.964, Lap 0.659 / 0.282
    spans = {"Isomap": row(0.96, 0.97, span(0.97, 0.98), span(0.95, 0.97)),
             "Lap": row(0.60, 0.70, span(0.40, 0.50), span(0.25, 0.30))}
    rule = trust.held_out_decision(spans, "s = 1", 0.01)
    assert rule["comparable"] == ["Isomap", "Lap"] and rule["decision"] == "supported"
    assert rule["consistent"]["printed"] == [] and rule["consistent"]["s = 1"] == ["Isomap", "Lap"]
    assert trust.held_out_decision(spans, "printed", 0.01)["decision"] == "refuted at the calibration"
    assert trust.held_out_decision(spans, None, 0.01)["decision"] == "refuted at the calibration"
    assert trust.held_out_decision(spans, "s = 1", 0.0)["comparable"] == ["Lap"]     # 0.978 beyond 0.97
    spans["Lap"]["trust"]["s = 1"] = span(0.30, 0.35)                               # Lap no longer consistent
    assert trust.held_out_decision(spans, "s = 1", 0.01)["decision"] == "refuted"
    spans["Isomap"]["continuity"] = spans["Lap"]["continuity"] = span(0.0, 0.1)
    assert trust.held_out_decision(spans, "s = 1", 0.01)["decision"].startswith("undecided")


def test_the_roll_equality_sentence_reports_the_size_decided_on_not_the_last_run():
    trust = load_reproduce("thesis_mvu_trust")
    def run(n, status, c, t, i):
        return {"n": n, "equality": {"status": status, "continuity": c, "trust": t, "intersection": i}}
    runs = [run(1000, "optimal", 0.838, 0.578, 0.448), run(1500, "inaccurate", 0.820, 0.631, 0.297)]
    decision = trust.roll_row_decision(runs[0]["equality"])
    assert decision == "refuted"                                          # 1.000 − 0.838 > 0.05
    sentence = trust.graph_sentence({"runs": runs, "decided_n": 1000, "decision": decision})
    assert "n = 1000" in sentence and "0.838 / 0.578 / 0.448" in sentence and "0.820" not in sentence
    assert trust.graph_sentence({"runs": runs[1:], "decided_n": None, "decision": "undecided (x)"}).startswith(
        "no size certified")
    assert trust.roll_row_decision({"continuity": 0.99, "trust": 0.975, "intersection": 0.985}) == "supported"
    assert trust.roll_row_decision({"continuity": 0.96, "trust": 0.975, "intersection": 0.985}).startswith("undecided")
    assert trust.roll_row_decision(None).startswith("undecided")


def test_thesis_mvu_an_objective_above_the_proved_bound_is_not_printed_as_a_gap():
    # a K whose objective lies above the proved upper bound (relative_gap < 0) is infeasible: no feasible K lies
    # above the bound, so the text says so and names the violation instead of a "certified relative gap" of -1.3e-03
    thesis = load_reproduce("thesis_mvu")
    run = {"status": "inaccurate", "relative_gap": -1.26e-3, "violation": 3.3e-6, "method": "mvu_ipm", "edges": 817,
           "cpu_s": 8.0}
    text = thesis._solve_text(run)
    assert "certified relative gap" not in text and "-1.3e-03" not in text
    assert "1.3e-03 above the proved bound" in text and "infeasible" in text and "3.3e-06" in text
    assert "certified relative gap 6.2e-05" in thesis._solve_text({**run, "relative_gap": 6.2e-5})


class _Stop(Exception):
    pass


def test_the_roll_and_comb_reason_tests_limit_cpu_seconds(monkeypatch, tmp_path):
    # a wall-clock limit made their outcome depend on the machine's load: the comb's low-rank solve and the roll's
    # equality solve are bounded by CPU seconds of the process, the same numbers
    from types import SimpleNamespace

    from sdpembed import _deadline

    thesis, reasons = load_reproduce("thesis_mvu"), load_reproduce("thesis_mvu_reasons")
    configs = {e.key: e for e in reasons.EXPERIMENTS}
    comb, roll = configs["fig3_15_reasons"], configs["table3_2_reasons"]
    assert (comb.full["cpu_time_limit"], roll.full["cpu_time_limit"]) == (60.0, 900.0)
    assert not {"time_limit"} & (set(comb.full) | set(comb.quick) | set(roll.full) | set(roll.quick))
    seen = {}

    def counts(config, teeth, methods):
        seen["comb"] = methods
        raise _Stop

    monkeypatch.setattr(reasons, "_comb_counts", counts)
    with pytest.raises(_Stop):
        reasons.fig3_15_reasons(comb.quick, tmp_path / "comb.png")
    assert seen["comb"]["lowrank"] == {"cpu_time_limit": comb.quick["cpu_time_limit"]}

    def exact(X, k, variant, **options):
        seen[variant] = options
        if variant == "equality":
            raise _Stop
        return {"Y": None, "status": "optimal", "shortened": 0.0}

    quality = {"continuity": 1.0, "trust": 1.0, "intersection": 1.0, "harmonic": 1.0}
    monkeypatch.setattr(reasons, "_base", lambda: SimpleNamespace(_exact=exact, _quality=lambda *a: quality))
    with pytest.raises(_Stop):
        reasons.table3_2_reasons(roll.quick, tmp_path / "roll.png")
    assert seen["equality"] == {"method": "lowrank", "cpu_time_limit": roll.quick["cpu_time_limit"]}
    assert seen["inequality"] == {"method": "lowrank", "cpu_time_limit": None}
    # _exact hands the CPU limit to the solver: a million CPU seconds at every reading stop it at its first check,
    # a million wall seconds do not
    X = np.random.default_rng(4).standard_normal((30, 3))
    ticks = iter(np.arange(1, 10**6) * 1e6)
    monkeypatch.setattr(_deadline, "_cpu", lambda: next(ticks))
    assert thesis._exact(X, 5, "inequality", method="lowrank", cpu_time_limit=5.0)["status"] == "max_iterations"
    monkeypatch.setattr(_deadline, "_cpu", lambda: 0.0)
    monkeypatch.setattr(_deadline, "_wall", lambda: next(ticks))
    assert thesis._exact(X, 5, "inequality", method="lowrank", cpu_time_limit=5.0)["status"] == "optimal"


def _listed_numbers(text: str, chapter: int) -> set[str]:
    """The figure numbers of one chapter that a text names, ranges such as "Fig. 2.3–2.4" expanded."""
    import re

    found = set()
    for first, last in re.findall(rf"Fig\. {chapter}\.(\d+)(?:–{chapter}\.(\d+))?", text):
        found.update(f"{chapter}.{n}" for n in range(int(first), int(last or first) + 1))
    return found


def test_every_numbered_figure_of_thesis_chapter_2_has_an_experiment_or_is_listed():
    module = load_paper("thesis-lmnn")
    named = " ".join([*(e.title for e in module.EXPERIMENTS), *module.NOT_IMPLEMENTED, *module.NOT_EXPERIMENTS])
    assert _listed_numbers(named, 2) >= {f"2.{n}" for n in range(1, 22)}   # Fig. 2.1–2.21 of the thesis
    assert "Table 2.1" in named


def test_rca_whitens_the_chunklets_as_a_direct_computation_of_2_23_and_2_24():
    import scipy.linalg

    linear = load_reproduce("thesis_lmnn_linear")
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 3)) @ np.array([[3.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.5, 0.2]])
    chunklets = np.full(60, -1)
    chunklets[:20] = np.repeat(np.arange(4), 5)
    C_w = np.zeros((3, 3))                                   # (2.23), point by point
    for c in range(4):
        block = X[chunklets == c]
        for x in block:
            C_w += np.outer(x - block.mean(axis=0), x - block.mean(axis=0))
    C_w /= 20
    assert linear.within_chunklet_covariance(X, chunklets) == pytest.approx(C_w)
    A = linear.rca_transform(X, chunklets)
    assert A.T @ A == pytest.approx(np.linalg.inv(C_w))     # all components kept: the metric is C_w⁻¹
    Z = X[:20] @ A.T                                         # the chunklets come out white
    assert linear.within_chunklet_covariance(Z, chunklets[:20]) == pytest.approx(np.eye(3), abs=1e-10)
    values, vectors = np.linalg.eigh(np.cov(X.T, bias=True))
    P = vectors[:, ::-1][:, :2].T                            # two principal components, then (2.24)
    direct = np.real(scipy.linalg.inv(scipy.linalg.sqrtm(P @ C_w @ P.T))) @ P
    A2 = linear.rca_transform(X, chunklets, n_components=2)
    assert A2.T @ A2 == pytest.approx(direct.T @ direct)     # the metric, free of the eigenvectors' signs
    with pytest.raises(ValueError, match="singular"):
        linear.rca_transform(X, np.r_[0, 0, np.full(58, -1)])


def test_fig2_20_chunklets_and_projected_errors_against_direct_counts():
    linear = load_reproduce("thesis_lmnn_linear")
    y = np.repeat([0, 1], 500)
    chunklets = linear.draw_chunklets(y, 0.1, 10, np.random.default_rng(0))
    assert np.sum(chunklets >= 0) == 100 and np.bincount(chunklets[chunklets >= 0]).tolist() == [10] * 10
    assert all(len(set(y[chunklets == c])) == 1 for c in range(10))     # a chunklet is one class
    covariance, shift = np.array([[4.0, 1.0], [1.0, 1.0]]), np.array([1.0, 2.0])
    rng = np.random.default_rng(1)
    X = rng.multivariate_normal(np.zeros(2), covariance, 400_000)
    labels = rng.integers(0, 2, 400_000)
    X += np.where(labels[:, None] == 1, 0.5, -0.5) * shift
    for p in (np.array([1.0, 0.0]), np.array([0.3, -1.0]), np.linalg.solve(covariance, shift)):
        counted = np.mean((X @ p > 0) != (labels == (p @ shift > 0)))  # the midpoint threshold, counted
        assert linear.projected_error(p, shift, covariance) == pytest.approx(counted, abs=0.003)


def test_thesis_tested_reasons_say_plainly_when_every_test_refuted_its_reason(tmp_path):
    thesis = load_reproduce("thesis_lmnn")
    png = tmp_path / "table2_1.png"

    def store(key, verdict):
        (tmp_path / f"{key}.json").write_text(json.dumps({"title": f"T {key}", "verdict": verdict,
                                                          "agreement": f"finding {key}."}))

    assert thesis._tested_reasons(png, []) == ""
    assert "'fig2_5_mnist' tests it (not run yet)" in thesis._tested_reasons(png, ["fig2_5_mnist"])
    store("table2_1_iris", "differs")
    store("fig2_5_mnist", "reproduced in trend")
    both = thesis._tested_reasons(png, ["table2_1_iris", "fig2_5_mnist"])
    assert "Reason not found" not in both and "(*differs*): finding table2_1_iris." in both
    alone = thesis._tested_reasons(png, ["table2_1_iris"])
    assert alone.startswith(" Reason not found; tested and refuted: 'T table2_1_iris'.")
    with_missing = thesis._tested_reasons(png, ["table2_1_iris", "table2_1_wine"])
    assert "Reason not found" not in with_missing                 # one test not run: nothing concluded
    text = thesis._reasons(["iris: PCA-LMNN kNN test error < PCA's",
                            "mnist: PCA-LMNN energy test error < its kNN test error"], png)
    assert "T table2_1_iris" in text and "T fig2_5_mnist" in text and "table2_1_wine" not in text
    iris, mnist = text.index("On iris"), text.index("On MNIST")           # each failure followed by its own test
    assert iris < text.index("T table2_1_iris") < mnist < text.index("T fig2_5_mnist")
    assert "Reason not found" not in text      # a quoted test's own finding says it; no second, argued sentence
    assert "over-training with k fixed" in text[iris:mnist]
    store("table2_1_iris_stop", "differs")
    store("table2_1_mnist_size", "reproduced in trend")
    text = thesis._reasons(["iris: PCA-LMNN kNN test error < PCA's",
                            "mnist: PCA-LMNN energy test error < its kNN test error"], png)
    iris, mnist = text.index("On iris"), text.index("On MNIST")           # every test of an ordering, in turn
    assert iris < text.index("T table2_1_iris'") < text.index("T table2_1_iris_stop") < mnist
    assert mnist < text.index("T fig2_5_mnist") < text.index("T table2_1_mnist_size")
    assert "not run yet" not in text


def test_thesis_table2_1_verdict_quotes_the_training_size_test_instead_of_an_open_sentence(tmp_path):
    thesis = load_reproduce("thesis_lmnn")
    png = tmp_path / "table2_1.png"

    def summary(pca_knn, lmnn_knn, lmnn_energy, lda_knn=9.0, lda_lmnn_knn=9.0):
        return {"PCA": {"test_knn": pca_knn}, "LDA": {"test_knn": lda_knn}, "LDA-LMNN": {"test_knn": lda_lmnn_knn},
                "PCA-LMNN": {"test_knn": lmnn_knn, "test_energy": lmnn_energy}}

    found = {"iris": {"summary": summary(4.0, 4.4, 4.1)},
             "mnist": {"summary": summary(2.3, 1.7, 1.7), "n_train": 7000, "dim": 164}}
    (tmp_path / "table2_1_mnist_size.json").write_text(json.dumps(
        {"title": "T size", "verdict": "differs", "agreement": "flat curve."}))
    text = thesis.table2_1_agreement(found, png)
    assert "is not tested" not in text
    assert text.index("On MNIST") < text.index("'T size' (*differs*): flat curve.")
    assert "'table2_1_iris_stop' tests it (not run yet)" in text
    found["mnist"]["summary"]["PCA-LMNN"]["test_energy"] = 1.4                # the ordering holds: nothing to explain
    assert "T size" not in thesis.table2_1_agreement(found, png)


def test_thesis_learning_curve_split_is_nested_with_one_test_set_and_table2_1s_split_at_7000():
    why, thesis = load_reproduce("thesis_lmnn_why"), load_reproduce("thesis_lmnn")
    data = why._mnist_split(0, {"seed": 0, "sizes": [1000, 7000], "mnist_test": 3000})
    table = thesis._split("mnist", 0, {"seed": 0, "mnist_train": 7000, "mnist_test": 3000, "mnist_dims": 5})
    np.testing.assert_array_equal(data["ytr"], table["ytr"])
    np.testing.assert_array_equal(data["yte"], table["yte"])
    np.testing.assert_array_equal(data["Xte"][:20], thesis.deskew(table["raw"][1][:20]))
    np.testing.assert_array_equal(data["Xtr"][:20], thesis.deskew(table["raw"][0][:20]))
    with pytest.raises(ValueError, match="exceed"):
        why._mnist_split(0, {"seed": 0, "sizes": [8000], "mnist_test": 3000})


def test_thesis_learning_curve_summary_and_growth_against_direct_paired_differences():
    why = load_reproduce("thesis_lmnn_why")
    rng = np.random.default_rng(3)
    rows = [{"split": s, "n": n, "lmnn_energy": rng.uniform(1, 3), "lmnn_knn": rng.uniform(1, 3), "pca_knn": 3.0,
             "pca_energy": 2.5, "cpu_s": 1.0, "status": "optimal"} for s in range(4) for n in (100, 400, 200)]
    summary = why._size_summary(rows, [100, 200, 400])
    for n in (100, 200, 400):
        d = np.array([r["lmnn_energy"] - r["lmnn_knn"] for r in rows if r["n"] == n])
        assert summary[str(n)]["energy_minus_knn"] == pytest.approx(d.mean())
        assert summary[str(n)]["se"] == pytest.approx(d.std(ddof=1) / 2.0) and summary[str(n)]["optimal"] == 4
    growth, se = why._growth(rows, [100, 200, 400])
    by = {(r["split"], r["n"]): r["lmnn_energy"] - r["lmnn_knn"] for r in rows}
    g = np.array([by[(s, 400)] - by[(s, 100)] for s in range(4)])
    assert growth == pytest.approx(g.mean()) and se == pytest.approx(g.std(ddof=1) / 2.0)


def test_the_thesis_table3_2_transcription_has_ten_rows_whose_averages_are_their_four_sets_means():
    kernel = load_reproduce("thesis_mvu_kernel")
    published, sets = kernel.PUBLISHED_TABLE3_2, kernel.TABLE3_2_SETS
    assert list(published) == ["MVU", "var. MVU (CG) (LLE)", "var. MVU (CG) (Lap)", "var. MVU (LLE)", "var. MVU (Lap)",
                               "PCA", "Isomap", "hLLE", "Lap", "LLE"]
    for row, columns in published.items():
        assert set(columns) == {*sets, "average"}
        for measure in range(3):                             # the printed average of values printed to 3 decimals
            mean = np.mean([columns[s][measure] for s in sets])
            assert abs(mean - columns["average"][measure]) <= 0.0011, (row, measure)
    assert published["var. MVU (CG) (LLE)"]["Frey faces"] == (0.950, 0.628, 0.075)


def test_a_figure_quotes_its_last_reason_test_or_says_it_has_not_run(tmp_path):
    why = load_reproduce("thesis_mvu_why")
    png = tmp_path / "fig3_15.png"
    assert why.last_reason_test(png, "fig3_15_reasons_inequality") == (
        " The reason test `fig3_15_reasons_inequality` has not been run yet.")
    (tmp_path / "fig3_15_reasons_inequality.json").write_text(json.dumps(
        {"verdict": "differs", "agreement": "Reason not found; tested and refuted: a; b."}))
    assert why.last_reason_test(png, "fig3_15_reasons_inequality") == (
        " The last reason test, `fig3_15_reasons_inequality` (*differs*): Reason not found; tested and refuted: a; b.")
    assert why.refuted_sentence(("a", "b"), "c") == "Reason not found; tested and refuted: a; b; c (this section)."


def test_variational_mvu_rows_of_table3_2_use_the_basis_they_name():
    load_reproduce("common")                                   # puts benchmarks/ on sys.path (mvu.py imports report)
    _variational_embedding = load_script("mvu")._variational_embedding

    from sdpembed.datasets import swiss_roll

    X = swiss_roll(120, noise=0.05, random_state=0)[0]
    lap, _ = _variational_embedding(X, 2, 6, refine=False)
    lle, _ = _variational_embedding(X, 2, 6, refine=False, basis="lle")
    assert lap.shape == lle.shape == (120, 2)
    # different bases span different subspaces: the two SDP embeddings are not one linear map of the other
    fit = np.linalg.lstsq(np.column_stack([lap, np.ones(120)]), lle, rcond=None)[1]
    assert fit.sum() > 1e-6 * np.sum((lle - lle.mean(axis=0)) ** 2)


def test_lock_decision_calls_a_graph_locked_or_not_only_on_a_proof():
    decide = load_reproduce("thesis_mvu_lockup").lock_decision
    # a proved bound within 1 % of the input's trace proves the lock, whatever the solve's status or spectrum
    assert decide("inaccurate", 1.0099, 0.0) is True and decide("optimal", 1.0, 0.0) is True
    # above it, only a certified solve's spectrum is read
    assert decide("optimal", 1.5, 0.2) is True and decide("optimal", 1.5, 0.05) is False
    # an uncertified solve above the margin is undecided, even with a locked-looking or unfolded spectrum
    assert decide("inaccurate", 1.02, 0.3) is None and decide("max_iterations", 5.0, 0.0) is None


def test_thesis_table2_1_reports_the_worst_split_gap_of_each_certified_column(monkeypatch):
    thesis = load_reproduce("thesis_lmnn")
    gaps = [3e-9, 4e-7, 1e-8]

    def split_job(job):
        _, split, _ = job
        row = {"train": 1.0, "test_knn": 2.0, "test_energy": 3.0, "cpu_s": 0.5, "active": 7,
               "status": "optimal", "relative_gap": gaps[split]}
        return {"PCA": {"train": 1.0, "test_knn": 2.0, "test_energy": 3.0}, "PCA-LMNN": row}, \
            {"n_train": 5, "n_test": 2, "dim": 2, "explained": 1.0}

    monkeypatch.setattr(thesis, "_split_job", split_job)
    summary = thesis._dataset("iris", json.dumps({"splits": 3, "workers": 1, "gap_test": True}))["summary"]
    assert summary["PCA-LMNN"]["relative_gap_max"] == 4e-7                 # the worst split, not the mean
    assert summary["PCA-LMNN"]["relative_gap"] == pytest.approx(np.mean(gaps))
    assert thesis._gap_cell(summary["PCA-LMNN"]) == " / 4.0e-07"
    assert "relative_gap_max" not in summary["PCA"] and thesis._gap_cell(summary["PCA"]) == ""


def test_thesis_fig3_14_quotes_its_stored_reason_test_and_names_an_uncertified_solve(tmp_path, monkeypatch):
    """An unfolded equality run (not locked) quotes fig3_28_reasons as stored, or says it has not been run; a
    solve that is not optimal is named with its gap and keeps the verdict at *differs*."""
    thesis = load_reproduce("thesis_mvu")

    def unfolded(X, k, variant, **options):
        t = np.hypot(X[:, 0], X[:, 2])                  # the roll's angle t is its radius
        return {"Y": np.column_stack([t, X[:, 1]]), "spectrum": np.array([0.9, 0.1, 0.0, 0.0]),
                "status": "optimal" if variant == "slack" else "inaccurate", "relative_gap": 2e-3,
                "method": "mvu_ipm", "edges": 3 * len(X), "cpu_s": 1.0}

    monkeypatch.setattr(thesis, "_exact", unfolded)
    (experiment,) = [e for e in thesis.EXPERIMENTS if e.key == "fig3_14"]
    assert experiment.full["n"] == 800 and experiment.quick["n"] < 200        # the thesis' size; quick stays small
    png = tmp_path / "fig3_14.png"
    first = thesis.fig3_14(dict(experiment.quick), png)
    assert first.verdict == "differs" and "do not lock at n = 80" in first.agreement
    assert "`fig3_28_reasons`) has not been run yet" in first.agreement
    assert "Not every solve is certified (equality: inaccurate, certified relative gap 2.0e-03" in first.agreement
    (tmp_path / "fig3_28_reasons.json").write_text(json.dumps(
        {"title": "Reason T", "verdict": "reproduced in trend", "agreement": "Angle edges lock it."}))
    second = thesis.fig3_14(dict(experiment.quick), png)
    assert "The reason test 'Reason T' (*reproduced in trend*, its own graphs and sizes): Angle edges lock it." \
        in second.agreement and "not been run yet" not in second.agreement


def test_thesis_standin_measures_against_direct_computations():
    standins = load_reproduce("thesis_mvu_standins")
    assert standins.NOT_AVAILABLE in load_reproduce("common").VERDICTS
    angle = np.arange(90) * 4.0
    ring = 3.0 * np.column_stack([np.cos(np.deg2rad(angle)), np.sin(np.deg2rad(angle))]) + 5.0
    circle = standins.circle_measures(ring, angle)
    assert circle["circular_correlation"] == pytest.approx(1.0) and circle["radius_cv"] == pytest.approx(0.0, abs=1e-12)
    assert standins.circle_measures(ring[::-1], angle)["circular_correlation"] == pytest.approx(1.0)  # the other way
    scrambled = standins.circle_measures(ring[np.random.default_rng(0).permutation(90)], angle)
    assert scrambled["circular_correlation"] < 0.5
    ellipse = standins.circle_measures(ring * [1.0, 0.5], angle)
    assert ellipse["radius_cv"] > 0.1
    rng = np.random.default_rng(1)
    Y = rng.standard_normal((200, 2))
    target = 2.0 * Y[:, 0] - Y[:, 1] + 3.0
    assert standins.linear_r2(Y, target) == pytest.approx(1.0)
    noisy = target + rng.standard_normal(200)
    A = np.column_stack([Y, np.ones(200)])
    residual = noisy - A @ np.linalg.solve(A.T @ A, A.T @ noisy)
    direct = 1.0 - np.sum(residual ** 2) / np.sum((noisy - noisy.mean()) ** 2)
    assert standins.linear_r2(Y, noisy) == pytest.approx(direct)
    assert standins.appreciable(np.array([0.5, 0.3, 0.011, 0.007, -0.2])) == 3   # 1 % of the positive sum 0.818
    X, degrees = standins.rotation_span(20, 180.0, 0)
    whole = load_reproduce("thesis_mvu_kernel")._rotating_digit(40, 0)
    np.testing.assert_array_equal(X, whole[:20])                       # the first half of the 360° set
    np.testing.assert_allclose(degrees, np.arange(20) * 9.0)


def test_thesis_standins_fall_back_to_the_inequality_sdp_only_when_the_equality_solve_is_not_certified():
    standins = load_reproduce("thesis_mvu_standins")
    angle = np.arange(24) * 2 * np.pi / 24
    X = np.column_stack([np.cos(angle), np.sin(angle), 0.3 * np.cos(3 * angle)])
    solved = standins.thesis_then_relaxed(X, 4, 2, 60.0)
    assert set(solved["runs"]) == {"equality"} and solved["judged"] == "equality"
    assert solved["runs"]["equality"]["status"] == "optimal"
    stopped = standins.thesis_then_relaxed(X, 4, 2, 1e-9)               # no CPU time: the equality solve stops
    assert stopped["runs"]["equality"]["status"] != "optimal"
    assert stopped["judged"] == ("inequality" if stopped["runs"]["inequality"]["status"] == "optimal" else None)


def test_thesis_figures_without_data_record_what_was_readable_and_say_not_reproduced(tmp_path):
    standins = load_reproduce("thesis_mvu_standins")
    common = load_reproduce("common")
    experiments = [*standins.CHAPTER2_EXPERIMENTS, *(e for e in standins.EXPERIMENTS if e.key == "fig3_3")]
    assert [e.key for e in experiments] == ["fig2_6", "fig2_7", "fig3_3"]
    for experiment in experiments:
        record = common.run_experiment("thesis-x", experiment, True, None, tmp_path)
        assert record["verdict"] == standins.NOT_AVAILABLE
        sources = {f["source"]: f for f in record["rows"]["readable"]}
        assert sources["sklearn.datasets.load_digits"]["shape"] == [1797, 64]
        assert "sdpembed.datasets.load_mnist" in sources and "sdpembed.datasets.DATASETS" not in sources
        assert (tmp_path / "thesis-x" / f"{experiment.key}.png").read_bytes()[:4] == b"\x89PNG"


def test_the_comb_reason_test_reads_the_counts_it_starts_from_when_the_report_is_written(tmp_path):
    # its first departure said 'Our Fig. 3.15 counts 5 (MVU)' as a literal after Fig. 3.15's stored record came to count
    # 4 (solved by facial reduction): the counts are read from the stored records, so --report-only updates them
    from types import SimpleNamespace

    from .conftest import BENCHMARKS

    common, reasons = load_reproduce("common"), load_reproduce("thesis_mvu_reasons")
    experiment = {e.key: e for e in reasons.EXPERIMENTS}["fig3_15_reasons"]
    assert experiment.premise is reasons.fig3_15_premise
    stored = BENCHMARKS / "results" / "reproduce" / "thesis-mvu"
    record = json.loads((stored / "fig3_15_reasons.json").read_text())
    figure = json.loads((stored / "fig3_15.json").read_text())
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "fig3_15_reasons.json").write_text(json.dumps(record))
    paper = SimpleNamespace(TITLE="Thesis", DATA_NOTE="Data.", EXPERIMENTS=(experiment,), NOT_IMPLEMENTED=[])
    text = common.write_report({"p": paper}, tmp_path, tmp_path / "R.md").read_text()
    assert "- Our Fig. 3.15 has not been run yet: no counts to start from.\n- Hypotheses, fixed before" in text
    own = {row["teeth"]: row["ipm"]["count"] for row in record["rows"]}
    for mvu in (4, 6):
        figure["rows"]["count"]["mvu"] = mvu
        (tmp_path / "p" / "fig3_15.json").write_text(json.dumps(figure))
        text = common.write_report({"p": paper}, tmp_path, tmp_path / "R.md").read_text()
        teeth = figure["config"]["teeth"]
        assert (f"counts {mvu} (MVU, {figure['rows']['method']}, {figure['rows']['status']}) and "
                f"{figure['rows']['count']['isomap']} (Isomap) eigenvalues above 1 % of the trace on its comb of "
                f"{teeth} teeth; this test's interior-point solve of that comb counts {own[teeth]} (MVU).") in text
    assert "counts 5 (MVU) and 7 (Isomap)" not in text
