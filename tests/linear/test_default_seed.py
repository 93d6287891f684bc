"""Reproducible by default: every estimator that draws random numbers has the seed 0 unless told otherwise."""

import inspect

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import sdpembed.linear as linear
import sdpembed.models as models
from sdpembed.linear import GaussianProjection

ESTIMATORS = sorted(
    {cls for module in (linear, models) for cls in vars(module).values()
     if inspect.isclass(cls) and issubclass(cls, BaseEstimator)
     and "random_state" in inspect.signature(cls).parameters},
    key=lambda cls: cls.__name__)


def test_every_seeded_estimator_defaults_to_seed_0():
    assert len(ESTIMATORS) >= 8
    for cls in ESTIMATORS:
        assert inspect.signature(cls).parameters["random_state"].default == 0, cls.__name__
    assert inspect.signature(linear.embed).parameters["random_state"].default == 0


@pytest.mark.parametrize("seed", [None, 3])
def test_a_random_map_is_the_same_on_every_fit_unless_asked(seed):
    X = np.random.default_rng(0).standard_normal((20, 12))
    first, second = (GaussianProjection(n_components=4).fit(X).components_ for _ in range(2))
    np.testing.assert_array_equal(first, second)
    other = GaussianProjection(n_components=4, random_state=seed).fit(X).components_
    assert not np.array_equal(other, first)
