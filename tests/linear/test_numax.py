"""The scikit-learn compatible NuMax estimator."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline

from sdpembed import NuMax
from sdpembed.datasets import translating_squares
from sdpembed.validation import isometry_constants


def test_fit_transform_is_near_isometric():
    X = translating_squares(7, 3)
    model = NuMax(delta=0.15).fit(X)
    assert model.result_.status == "optimal"
    assert model.components_.shape == (model.n_components_, 49) and model.n_features_in_ == 49
    Y = model.transform(X)
    assert Y.shape == (len(X), model.n_components_)
    assert isometry_constants(model.components_, X=X).delta <= 0.15 + 1e-5
    np.testing.assert_allclose(model.components_.T @ model.components_, model.P_, atol=1e-5)


def test_sampled_secants_and_pipeline():
    from sklearn.datasets import load_digits

    digits = load_digits()
    X, y = digits.data[:120] / 16.0, digits.target[:120]
    pipe = make_pipeline(NuMax(delta=0.3, n_secants=300, random_state=0), KNeighborsClassifier(1))
    pipe.fit(X, y)
    assert pipe.score(X, y) == 1.0
    assert clone(pipe.steps[0][1]).get_params()["n_secants"] == 300


def test_not_converged_warns():
    from sklearn.exceptions import ConvergenceWarning

    with pytest.warns(ConvergenceWarning):
        NuMax(delta=0.1, max_iter=3).fit(translating_squares(6, 2))


@pytest.mark.parametrize(
    "X, params, message",
    [
        (np.array([[np.nan, 1.0], [0.0, 1.0]]), {}, "NaN"),
        (np.ones((1, 3)), {}, "minimum of 2"),
        (np.eye(3), {"delta": 1.5}, "delta"),
        (np.eye(3), {"n_secants": 0}, "n_secants"),
    ],
)
def test_bad_input(X, params, message):
    with pytest.raises(ValueError, match=message):
        NuMax(**params).fit(X)


def test_transform_checks_dimension_and_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        NuMax().transform(np.eye(3))
    model = NuMax(delta=0.2).fit(translating_squares(5, 2))
    with pytest.raises(ValueError, match="features"):
        model.transform(np.ones((2, 3)))


def test_numax_fit_secants_equals_fit_on_points():
    from sdpembed.secants import all_secants

    X = translating_squares(7, 3)
    V = all_secants(X) * 3.0                          # any scale: fit_secants normalises the rows
    on_secants = NuMax(delta=0.2).fit_secants(V)
    on_points = NuMax(delta=0.2).fit(X)
    assert on_secants.n_components_ == on_points.n_components_
    assert abs(on_secants.result_.objective - on_points.result_.objective) <= 1e-4 * on_points.result_.objective
