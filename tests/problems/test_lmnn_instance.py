"""LMNN instances whose data are beyond the doubles are refused with the cause (issue 25 review): a finite X
whose squared distances overflow made `sdpembed solve` fail far inside a solver, with a message about NaN
entries of M or a failed eigensolver; one whose squared distances underflow was solved as coincident points."""

import contextlib
import io

import numpy as np
import pytest

from sdpembed.cli import main
from sdpembed.graphs import target_neighbors
from sdpembed.problems import LMNNInstance, MultiMetricLMNNInstance
from sdpembed.problems.lmnn import _largest_differences

TOO_LARGE = "X is too large for the LMNN SDP in double precision"


def _data(seed=0, n=12):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 3)), np.repeat([0, 1, 2], n // 3)


def test_largest_differences_are_those_of_the_pairs_the_sdp_involves():
    # brute force over all pairs: different classes, or j a target neighbour of i (never other same-class pairs)
    rng = np.random.default_rng(1)
    checked = 0
    while checked < 60:
        n, d = int(rng.integers(6, 25)), int(rng.integers(1, 5))
        y = rng.integers(0, int(rng.integers(2, 5)), n)
        counts = np.bincount(y)
        if np.count_nonzero(counts) < 2 or counts[counts > 0].min() < 3:
            continue
        X = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-3, 4, d)
        targets = target_neighbors(X, y, 1 + checked % 2)
        involved = y[:, None] != y[None, :]
        involved[np.arange(n)[:, None], targets] = True
        brute = np.max(np.where(involved[..., None], np.abs(X[:, None, :] - X[None, :, :]), 0.0), axis=(0, 1))
        assert np.array_equal(_largest_differences(X, y, targets), brute)
        checked += 1


@pytest.mark.parametrize("value", [1.7e308, -1.7e308, 1e155])
def test_overflowing_data_are_refused_with_the_cause(value):
    X, y = _data()
    targets = target_neighbors(X, y, 1)
    X[4, 1] = value
    for make in (lambda: LMNNInstance(X=X, y=y, targets=targets),
                 lambda: MultiMetricLMNNInstance(X=X, y=y, targets=targets)):
        with pytest.raises(ValueError, match=TOO_LARGE) as refused:
            make()
        assert "NaN" not in str(refused.value) and "rescale X" in str(refused.value)


def test_the_largest_scale_whose_loss_is_a_double_is_accepted():
    X, y = _data()
    targets = target_neighbors(X, y, 1)
    pairs = LMNNInstance(X=X, y=y, targets=targets).n_triplets + X.shape[0]
    squared = float(np.sum(np.square(_largest_differences(X, y, targets))))
    scale = np.sqrt(np.finfo(np.float64).max / pairs / squared)
    LMNNInstance(X=X * scale * 0.999, y=y, targets=targets)
    with pytest.raises(ValueError, match=TOO_LARGE):
        LMNNInstance(X=X * scale * 1.001, y=y, targets=targets)


@pytest.mark.parametrize("scale", [1e-150, 1e-200, 1e-310])
def test_underflowing_data_are_refused(scale):
    # at 1e-200 the squared distances underflow to 0 and the default solver reported `optimal` at the loss
    # mu*T of coincident points, far above the optimum of the points as given (the scale's, by invariance)
    X, y = _data()
    targets = target_neighbors(X, y, 1)
    with pytest.raises(ValueError, match="X is too small for the LMNN SDP in double precision"):
        LMNNInstance(X=X * scale, y=y, targets=targets)
    LMNNInstance(X=X * 1e-100, y=y, targets=targets)
    LMNNInstance(X=np.zeros_like(X), y=y, targets=targets)             # coincident points: exact, not underflow


def test_solve_and_verify_name_the_cause(tmp_path):
    X, y = _data()
    instance = LMNNInstance(X=X, y=y, targets=target_neighbors(X, y, 1))
    arrays = instance.to_arrays()
    arrays["X"] = arrays["X"].copy()
    arrays["X"][0, 0] = 1.7e308
    path = tmp_path / "huge.npz"
    np.savez(path, **arrays)
    np.savez(tmp_path / "sol.npz", M=np.eye(3))
    for argv in (["solve", str(path), "--out", str(tmp_path / "out.npz")],
                 ["verify", str(path), str(tmp_path / "sol.npz")]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            assert main(argv) == 2
        (line,) = err.getvalue().strip().splitlines()
        assert str(path) in line and TOO_LARGE in line
    assert not (tmp_path / "out.npz").exists()
