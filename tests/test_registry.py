"""The registry (``sdpembed/registry.py``): a problem's methods are found there, and an unknown one is refused."""

import numpy as np
import pytest

from sdpembed import NuMaxInstance, solve


def test_unknown_method():
    with pytest.raises(ValueError, match="method must be"):
        solve(NuMaxInstance(delta=0.1, secants=np.eye(2)), "newton")
