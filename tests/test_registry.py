"""The registry (``sdpembed/registry.py``): a problem's methods are found there, and an unknown one is refused."""

import numpy as np
import pytest

from sdpembed import PROBLEMS, NuMaxInstance, solve


def test_unknown_method():
    with pytest.raises(ValueError, match="method must be"):
        solve(NuMaxInstance(delta=0.1, secants=np.eye(2)), "newton")


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_every_problem_names_estimators_that_exist(name):
    """The feature table of the docs lists each spec's estimators: each name is a scikit-learn estimator."""
    from importlib import import_module

    from sklearn.base import BaseEstimator

    estimators = PROBLEMS[name].estimators
    assert estimators, f"{name} names no estimator"
    for dotted in estimators:
        module, _, attribute = dotted.rpartition(".")
        assert issubclass(getattr(import_module(module), attribute), BaseEstimator), dotted
