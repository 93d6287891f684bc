"""The MVU estimator (``sdpembed/models/mvu.py``): scikit-learn conventions and the set-output
API, and ``transform`` of training inputs (their ``embedding_`` rows) and of new inputs (the
out-of-sample SDP, Sec. 3.1.10)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_swiss_roll
from sklearn.utils.estimator_checks import parametrize_with_checks

from sdpembed.graphs import neighbour_arrays
from sdpembed.models import MVU
from sdpembed.solvers.mvu.oos import place_points


# the checks' data are blobs, whose neighbourhood graph is disconnected: MVU refuses it unless
# asked to link the components (Sec. 3.1.12)
@parametrize_with_checks([MVU(link=True, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def roll():
    X, _ = make_swiss_roll(80, random_state=0)
    return X, MVU(n_neighbors=5).fit(X)


def test_transform_of_training_inputs_is_the_embedding(roll):
    X, model = roll
    np.testing.assert_array_equal(model.transform(X), model.embedding_)
    order = np.random.default_rng(0).permutation(X.shape[0])
    np.testing.assert_array_equal(model.transform(X[order]), model.embedding_[order])


def test_new_inputs_are_placed_by_the_out_of_sample_sdp(roll):
    X, model = roll
    rng = np.random.default_rng(1)
    new = X[:6] + 0.05 * rng.standard_normal((6, 3))
    mixed = np.vstack([new[:3], X[10:12], new[3:]])
    Z = model.transform(mixed)
    Y_nb, sq, _ = neighbour_arrays(X, model.embedding_, new, max(model.n_neighbors, model.n_components))
    placed = place_points(Y_nb, sq).y
    np.testing.assert_allclose(Z[[0, 1, 2, 5, 6, 7]], placed, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(Z[3:5], model.embedding_[10:12])


def test_pandas_output(roll):
    # set_output(transform="pandas") gives named columns (get_feature_names_out)
    X, _ = roll
    frame = MVU(n_neighbors=5).set_output(transform="pandas").fit(pd.DataFrame(X, columns=["a", "b", "c"]))
    Z = frame.transform(pd.DataFrame(X[:4], columns=["a", "b", "c"]))
    assert isinstance(Z, pd.DataFrame) and list(Z.columns) == ["mvu0", "mvu1"]
    np.testing.assert_array_equal(Z.to_numpy(), frame.embedding_[:4])


def test_verbose_reaches_the_solvers(roll, capsys):
    """``verbose`` reaches the interior point of ``fit`` (a line every K iterations), variational MVU's
    stages, and the out-of-sample interior point of ``transform``; unasked, nothing is printed."""
    X, model = roll
    new = X[:4] + 0.05
    model.transform(new)
    assert capsys.readouterr().out == ""
    loud = MVU(n_neighbors=5, verbose=3).fit(X)
    out = capsys.readouterr().out
    assert out.startswith("mvu ipm: n = 80") and "mvu ipm it   4" in out and "mvu ipm it   2 " not in out
    loud.transform(new)
    assert "oos ipm it   0  active       4 of 4" in capsys.readouterr().out
    MVU(n_neighbors=5, method="variational", n_basis=6, verbose=True).fit(X)
    assert "variational SDP" in capsys.readouterr().out


def test_lowrank_and_auto_methods_reach_the_interior_points_optimum():
    """``method="lowrank"`` solves the SDP by the Burer–Monteiro solver, certified, to the interior
    point's optimum; ``"auto"`` takes the registry's default method for the instance."""
    X, _ = make_swiss_roll(60, random_state=0)
    ipm = MVU(n_neighbors=5, variant="inequality").fit(X)
    lowrank = MVU(n_neighbors=5, variant="inequality", method="lowrank").fit(X)
    assert lowrank.result_.method == "lowrank" and lowrank.result_.status == "optimal"
    assert ipm.result_.status == "optimal"
    f_star = ipm.result_.objective
    assert abs(lowrank.result_.objective - f_star) <= 1e-5 * abs(f_star)
    np.testing.assert_allclose(lowrank.eigenvalues_[:2], ipm.eigenvalues_[:2], rtol=1e-3)
    auto = MVU(n_neighbors=5, variant="inequality", method="auto").fit(X)
    assert auto.result_.method == "ipm"                 # 60 points: below the low-rank solver's range
    # facial reduction certifies the equality SDP, which this graph locks up (objective = the input's trace)
    equality_ipm = MVU(n_neighbors=5).fit(X)
    facial = MVU(n_neighbors=5, method="facial").fit(X)
    assert facial.result_.method == "facial" and facial.result_.status == "optimal"
    f_star = equality_ipm.result_.objective
    assert abs(facial.result_.objective - f_star) <= 1e-5 * abs(f_star)
    np.testing.assert_allclose(facial.eigenvalues_[:2], equality_ipm.eigenvalues_[:2], rtol=1e-3)
    with pytest.raises(ValueError, match="method must be one of"):
        MVU(method="newton").fit(X)
