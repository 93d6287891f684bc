"""Every linear map takes both targets — ``n_components`` (M) and ``delta`` (δ) — with the meaning
of ``embed``'s ``dim`` and ``delta`` (``sdpembed/linear/base.py``, ``sdpembed/linear/selection.py``),
and warns only about a δ the user asked for."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris
from sklearn.exceptions import ConvergenceWarning

from sdpembed.datasets import translating_squares
from sdpembed.linear import ADAGIO, LINEAR_METHODS, PCA, FroMax, NILEPro, NuMax, embed
from sdpembed.linear.methods import method_capabilities
from sdpembed.linear.near_isometric import FIXED_RANK_AIM
from sdpembed.secants import all_secants


@pytest.mark.parametrize("name", sorted(LINEAR_METHODS))
def test_every_map_takes_both_targets(name):
    params = LINEAR_METHODS[name]().get_params()
    assert params["n_components"] is None and params["delta"] is None


def test_native_targets_drive_embed():
    caps = {name: method_capabilities(cls) for name, cls in LINEAR_METHODS.items()}
    assert (caps["pca"].sets_dimension, caps["pca"].native_delta) == (True, False)
    assert (caps["numax"].sets_dimension, caps["numax"].native_delta) == (False, True)
    assert (caps["fromax"].sets_dimension, caps["fromax"].native_delta) == (True, True)


def test_a_dimension_method_with_delta_is_embed_with_delta():
    X = load_digits().data[:120]
    model = ADAGIO(delta=0.3, random_state=0).fit(X)
    reference = embed("adagio", X, delta=0.3, random_state=0)
    assert model.n_components_ == reference.n_components_ == model.selection_.value
    np.testing.assert_array_equal(model.components_, reference.components_)
    assert model.selection_.train_delta <= 0.3 and model.transform(X).shape == (120, model.n_components_)
    V = all_secants(X[:40])
    secants = PCA(delta=0.25).fit_secants(V)
    assert secants.n_components_ == embed("pca", V, delta=0.25, secants=True).n_components_
    assert PCA().fit(X).n_components_ == 2                      # neither target: the default M


def test_numax_with_n_components_is_the_delta_search():
    X = translating_squares(7, 3)
    model = NuMax(n_components=10, random_state=0).fit(X)
    sel = model.selection_
    assert sel.rule == "smallest_delta" and model.n_components_ <= 10
    assert max(d for d, r in sel.trials if r > 10) >= sel.value - 0.01 - 1e-12   # a δ just below: rank > 10
    default = NuMax(random_state=0).fit(X)                               # neither target: δ = 0.1
    np.testing.assert_array_equal(default.P_, NuMax(delta=0.1, random_state=0).fit(X).P_)


@pytest.mark.parametrize("cls", [PCA, ADAGIO, NuMax])
def test_a_searched_target_and_the_native_one_are_not_both_given(cls):
    with pytest.raises(ValueError, match="n_components or delta, not both"):
        cls(n_components=3, delta=0.2).fit(translating_squares(5, 2))


def test_no_warning_about_a_delta_the_user_did_not_set():
    X = load_iris().data
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fixed = FroMax(n_components=2, random_state=0).fit(X)
    assert fixed.result_.delta == FIXED_RANK_AIM and fixed.n_components_ == 2
    assert fixed.isometry_constant_ == pytest.approx(fixed.result_.isometry)
    with pytest.warns(ConvergenceWarning, match="did not reach delta=0.1"):
        NILEPro(n_components=2, delta=0.1, random_state=0).fit(X)
