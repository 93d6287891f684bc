"""The shared input checks: each names the argument and says what it must be."""

import numpy as np
import pytest

from sdpembed._validate import as_matrix, as_vector, square_matrix, symmetric_matrix


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_entries_are_refused(bad):
    with pytest.raises(ValueError, match="^A contains NaN or infinite entries$"):
        as_matrix([[1.0, bad]], "A")
    with pytest.raises(ValueError, match="^v contains NaN or infinite entries$"):
        as_vector([1.0, bad], "v")


def test_shapes_are_checked_before_entries():
    with pytest.raises(ValueError, match="A must have 3 columns, got 2"):
        as_matrix([[1.0, np.nan]], "A", n_cols=3)
    with pytest.raises(ValueError, match="v must have length 3, got 2"):
        as_vector([1.0, np.nan], "v", length=3)
    with pytest.raises(ValueError, match="v must be a 1-D array"):
        as_vector([[1.0]], "v")
    with pytest.raises(ValueError, match="A must be a 2-D array"):
        as_matrix([1.0], "A")


def test_finite_input_comes_back_as_float64():
    A = as_matrix([[1, 2], [3, 4]], "A")
    v = as_vector([True, False], "v")
    assert A.dtype == v.dtype == np.float64
    assert np.array_equal(A, [[1.0, 2.0], [3.0, 4.0]]) and np.array_equal(v, [1.0, 0.0])


def test_square_and_symmetric_matrices():
    with pytest.raises(ValueError, match=r"K must be a square matrix, got shape \(1, 2\)"):
        square_matrix([[1.0, 2.0]], "K")
    with pytest.raises(ValueError, match=r"K must be a square matrix, got shape \(1, 2\)"):
        symmetric_matrix([[1.0, 2.0]], "K")
    A = np.array([[1.0, 2.0], [0.0, 1.0]])
    assert np.array_equal(square_matrix(A, "K"), A)
    assert np.array_equal(symmetric_matrix(A, "K"), [[1.0, 1.0], [1.0, 1.0]])
