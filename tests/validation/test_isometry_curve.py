"""The isometry-curve harness and the secant-set evaluation behind it."""

import json

import numpy as np
import pytest

from sdpembed.datasets import translating_gaussian_blob, translating_squares
from sdpembed.linear import adagio_projection, gaussian_projection, pca_projection
from sdpembed.secants import all_secants
from sdpembed.validation import SecantSet, distortion_quantile, isometry_constants, isometry_curve


def direct(Psi: np.ndarray, X: np.ndarray, measure: str, exclude: float) -> tuple[float, float]:
    """Isometry constants from the explicit secants: worst case, and all but ``exclude`` (sorted)."""
    V = all_secants(X)                                               # unit rows
    ratio = np.sum((V @ Psi.T) ** 2, axis=1)
    d = np.abs(ratio - 1 if measure == "rip" else np.sqrt(ratio) - 1)
    d.sort()
    return d[-1], d[len(d) - 1 - int(np.floor(exclude * len(d)))]


def test_distortion_quantile_is_all_but_a_fraction():
    d = np.arange(1, 201) / 100.0 * np.where(np.arange(200) % 2, 1, -1)      # |d| = 0.01 … 2.00
    assert distortion_quantile(d) == 2.0
    assert distortion_quantile(d, 0.01) == 1.98                               # 2 of 200 may exceed
    assert np.sum(np.abs(d) > distortion_quantile(d, 0.01)) == 2
    assert distortion_quantile(d, 0.004) == 2.0                               # ⌊0.8⌋ = 0 may exceed
    with pytest.raises(ValueError, match="exclude_fraction"):
        distortion_quantile(d, 1.0)


def test_secant_set_matches_explicit_secants():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 12))
    Psi = rng.standard_normal((5, 12))
    points = SecantSet(X=X, block_size=50)                         # many small Gram blocks
    explicit = SecantSet(secants=all_secants(X))
    assert points.n_secants == explicit.n_secants == 435
    for measure in ("rip", "adagio"):
        np.testing.assert_allclose(points.distortions(Psi, measure), explicit.distortions(Psi, measure), rtol=1e-12,
                                   atol=1e-12)
    assert points.isometry_constant(Psi) == pytest.approx(isometry_constants(Psi, X=X).delta, rel=1e-12)


def test_secant_set_is_accurate_for_close_pairs_far_from_the_origin():
    """Gram-matrix distances lose all accuracy for a pair 1e-3 apart among points spread over 1e4
    (and an offset of 1e4, which centring removes); the exact fix-up keeps them right."""
    rng = np.random.default_rng(1)
    X = 1e4 + 1e4 * rng.standard_normal((12, 6))
    X[1] = X[0] + 1e-3 * rng.standard_normal(6)
    Psi = rng.standard_normal((3, 6))
    V = np.array([X[i] - X[j] for i in range(12) for j in range(i + 1, 12)])          # exact in these data
    expected = np.sum((V @ Psi.T) ** 2, axis=1) / np.sum(V**2, axis=1)
    np.testing.assert_allclose(SecantSet(X=X).ratios(Psi), expected, rtol=1e-8)


def test_secant_set_drops_duplicates_and_checks_input():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 0.0]])
    with pytest.warns(UserWarning, match="1 zero secant"):
        s = SecantSet(X=X)
    assert s.n_secants == 2
    with pytest.raises(ValueError, match="exactly one"):
        SecantSet()
    with pytest.raises(ValueError, match="columns"):
        SecantSet(X=np.eye(3)).ratios(np.eye(2))
    with pytest.raises(ValueError, match="measure"):
        SecantSet(X=np.eye(3)).distortions(np.eye(3), "l1")


@pytest.mark.parametrize("measure", ["rip", "adagio"])
def test_isometry_curve_numbers_match_a_direct_computation(measure):
    X = translating_squares(9, 3)
    rng = np.random.default_rng(2)
    test_rows = rng.permutation(len(X))
    X_train, X_test = X[test_rows[:30]], X[test_rows[30:]]
    dims = [4, 12, 20]
    curve = isometry_curve({"PCA": "pca", "JL": "gaussian", "ADAGIO": ("adagio", {"n_pca": 2})}, X_train, dims,
                           X_test=X_test, measure=measure, exclude_fraction=0.05, random_state=7)
    assert curve.n_train_secants == 435 and curve.n_test_secants == len(X_test) * (len(X_test) - 1) // 2
    assert curve.methods == ("PCA", "JL", "ADAGIO") and len(curve.points) == 9
    maps = {
        "PCA": lambda M: pca_projection(X_train, M),
        "JL": lambda M: gaussian_projection(M, X.shape[1], random_state=7),
        "ADAGIO": lambda M: adagio_projection(X_train, M, n_pca=2, random_state=7)[0],
    }
    for point in curve.points:
        Psi = maps[point.method](point.dim)
        train = direct(Psi, X_train, measure, 0.05)
        test = direct(Psi, X_test, measure, 0.05)
        assert point.n_components == point.dim
        np.testing.assert_allclose([point.train_delta, point.train_delta_quantile], train, rtol=1e-10)
        np.testing.assert_allclose([point.test_delta, point.test_delta_quantile], test, rtol=1e-10)
        assert point.train_delta_quantile <= point.train_delta
    dims_pca, values = curve.series("PCA")
    assert list(dims_pca) == dims and np.all(np.diff(values) <= 0)          # PCA improves with M
    json.dumps(curve.to_dict())
    assert "ADAGIO" in curve.table()


def test_isometry_curve_with_numax_at_native_deltas_and_held_out_secants():
    """NuMax Fig. 10(b): trained on the even-position blobs, checked on the others."""
    X, centres = translating_gaussian_blob(12, sigma=2.5, return_centers=True)
    even = np.all(centres % 2 == 0, axis=1)
    curve = isometry_curve(["numax", "pca"], X[even], [6], X_test=X[~even], native_deltas=[0.3, 0.15],
                           random_state=0)
    numax = [p for p in curve.points if p.method == "numax"]
    assert [p.native_delta for p in numax] == [0.3, 0.15]
    for p in numax:
        assert p.train_delta <= p.native_delta + 1e-4                       # δ_learn holds on the training secants
        assert p.dim == p.n_components and np.isfinite(p.test_delta)
    assert numax[0].n_components <= numax[1].n_components                  # smaller δ, more dimensions
    pca = [p for p in curve.points if p.method == "pca"]
    assert len(pca) == 1 and np.isnan(pca[0].native_delta)


def test_isometry_curve_bad_input():
    X = translating_squares(6, 2)
    with pytest.raises(ValueError, match="unknown method"):
        isometry_curve(["pca", "umap"], X, [2])
    with pytest.raises(ValueError, match="single string"):
        isometry_curve("pca", X, [2])
    with pytest.raises(ValueError, match="dims"):
        isometry_curve(["pca"], X, [0])
    with pytest.raises(ValueError, match="X_test"):
        isometry_curve(["pca"], X, [2], X_test=np.ones((3, 5)))
    with pytest.raises(ValueError, match="measure"):
        isometry_curve(["pca"], X, [2], measure="max")
