"""The reproduction framework of issue 22 (benchmarks/reproduce): its pieces against independent computations."""

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
