"""``sdpembed.solvers.lapack``: SciPy's LAPACK without ``import scipy.linalg``, bit for bit the
results of ``scipy.linalg``; and the MVU interior-point method that uses it loads no SciPy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

import sdpembed
from sdpembed.solvers import lapack


def _spd(n: int, dtype=np.float64, seed: int = 0) -> np.ndarray:
    B = np.random.default_rng(seed).standard_normal((n, n))
    return (B @ B.T + n * np.eye(n)).astype(dtype)


def _fresh(body: str) -> dict:
    """Run ``body`` in a fresh interpreter; the JSON it prints last."""
    env = {**os.environ, "PYTHONPATH": str(Path(sdpembed.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_is_scipys_bit_for_bit(dtype, order, lower):
    A = np.asarray(_spd(40, dtype), order=order)
    b = np.random.default_rng(1).standard_normal((40, 3)).astype(dtype)
    mine, theirs = lapack.cho_factor(A, lower=lower), scipy.linalg.cho_factor(A, lower=lower)
    assert mine[1] == theirs[1]
    assert mine[0].dtype == theirs[0].dtype
    np.testing.assert_array_equal(mine[0], theirs[0])
    for rhs in (b, b[:, 0], np.asfortranarray(b)):
        np.testing.assert_array_equal(lapack.cho_solve(mine, rhs), scipy.linalg.cho_solve(theirs, rhs))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("lower", [True, False])
def test_triangular_solve_is_scipys_bit_for_bit(order, lower):
    L = np.linalg.cholesky(_spd(30))
    T = np.asarray(L if lower else L.T, order=order)
    b = np.random.default_rng(2).standard_normal((30, 5))
    for rhs in (b, b[:, 1], b.T.copy().T):
        np.testing.assert_array_equal(lapack.solve_triangular(T, rhs, lower=lower),
                                      scipy.linalg.solve_triangular(T, rhs, lower=lower))


def test_errors_are_scipys():
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        lapack.cho_factor(-np.eye(3))
    with pytest.raises(ValueError):
        lapack.cho_solve((np.eye(2), True), np.array([1.0, np.nan]))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        lapack.solve_triangular(np.diag([1.0, 0.0]), np.ones(2))
    with pytest.raises(ValueError, match="square"):
        lapack.cho_factor(np.ones((2, 3)))
    with pytest.raises(TypeError, match="real"):
        lapack.cho_factor(np.eye(2, dtype=complex))


def test_empty_right_hand_sides():
    assert lapack.cho_solve((np.eye(2), True), np.zeros((2, 0))).shape == (2, 0)
    assert lapack.solve_triangular(np.eye(2), np.zeros((2, 0))).shape == (2, 0)


def test_the_routines_load_without_scipy_linalg():
    got = _fresh("import json, sys\nfrom sdpembed.solvers import lapack\n"
                 "print(json.dumps([lapack.lapack.__name__, lapack.blas.__name__, "
                 "[m for m in sys.modules if m.startswith('scipy')]]))")
    assert got == ["scipy.linalg._flapack", "scipy.linalg._fblas", []]


def test_scipy_linalg_imported_afterwards_is_whole():
    # the compiled modules were loaded without their package: importing it later still works
    got = _fresh("import json\nimport numpy as np\nfrom sdpembed.solvers import lapack\nimport scipy.linalg\n"
                 "A = np.diag([4.0, 9.0])\n"
                 "print(json.dumps([scipy.linalg._flapack.__name__, scipy.linalg.cho_factor(A)[0].diagonal().tolist(), "
                 "lapack.cho_factor(A)[0].diagonal().tolist()]))")
    assert got == ["scipy.linalg._flapack", [2.0, 3.0], [2.0, 3.0]]


def test_the_mvu_interior_point_method_loads_no_scipy():
    """A graded ``sdpembed solve`` of an MVU instance (20 of the suite's 43) starts a fresh interpreter;
    ``import scipy.linalg``, ``scipy.sparse`` and ``csgraph`` cost it about twice ``import numpy``. None of the four
    variants loads any of them, nor scikit-learn: the equality and min_trace variants certify a K polished onto
    their equalities, whose Gauss–Newton systems are dense (numpy) on a small graph (``solvers/mvu/polish.py``,
    ``POLISH_DENSE_MAX``), the largest suite instance's included."""
    body = ("import json, sys\n"
            "from sdpembed.io import load_instance\n"
            "from sdpembed.registry import solve\n"
            "from sdpembed.validation.suite import default_suite_dir\n"
            "files = [default_suite_dir() / f'mvu-{v}-{g}.npz' for g in ('trefoil12', 'swiss40')\n"
            "         for v in ('inequality', 'slack', 'equality', 'min_trace')]\n"
            "statuses = [solve(load_instance(f)).status for f in files]\n"
            "print(json.dumps([statuses, sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'sklearn'))]))")
    statuses, loaded = _fresh(body)
    assert statuses == ["optimal"] * 8
    assert loaded == []
