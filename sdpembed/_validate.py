"""Shared input checks: every public entry point fails early with a ValueError that names
the argument and says what it must be (DESIGN.md, Conventions)."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["as_matrix", "as_vector", "check_delta", "check_positive_int", "check_random_state", "count_distinct",
           "real_array", "square_matrix", "symmetric_matrix"]


def real_array(value: object, name: str, *, allow_bool: bool = True) -> np.ndarray:
    """``value`` as a float64 array, or a ValueError naming ``name`` if it does not hold real numbers.

    Complex, string, object and other dtypes are refused rather than cast: a cast would silently
    drop an imaginary part or parse text as numbers.

    Parameters
    ----------
    value : array_like
    name : str
        How the error message calls the array.
    allow_bool : bool
        Whether booleans count as the real numbers 0 and 1.
    """
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:               # e.g. ragged nested lists
        raise ValueError(f"{name} must be a numeric array of real numbers: {exc}") from None
    if arr.dtype.kind not in ("biuf" if allow_bool else "iuf"):
        what = "complex numbers (the imaginary part would be lost)" if arr.dtype.kind == "c" else f"dtype {arr.dtype}"
        raise ValueError(f"{name} must be a numeric array of real numbers, got {what}")
    return arr.astype(np.float64, copy=False)


def _finite(arr: np.ndarray, name: str) -> np.ndarray:
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arr


def as_matrix(value: object, name: str, *, n_cols: int | None = None, min_rows: int = 1) -> np.ndarray:
    """A finite float64 2-D array, or a ValueError naming ``name``."""
    arr = real_array(value, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows are points/vectors), got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} row(s), got {arr.shape[0]}")
    if arr.shape[1] < 1:
        raise ValueError(f"{name} must have at least one column, got shape {arr.shape}")
    if n_cols is not None and arr.shape[1] != n_cols:
        raise ValueError(f"{name} must have {n_cols} columns, got {arr.shape[1]}")
    return _finite(arr, name)


def square_matrix(value: object, name: str) -> np.ndarray:
    """A finite float64 square matrix, or a ValueError naming ``name``."""
    K = as_matrix(value, name)
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {K.shape}")
    return K


def symmetric_matrix(value: object, name: str) -> np.ndarray:
    """The symmetric part (A + Aᵀ)/2 of a finite square matrix, or a ValueError naming ``name``."""
    K = square_matrix(value, name)
    return 0.5 * (K + K.T)


def as_vector(value: object, name: str, *, length: int | None = None, allow_bool: bool = True) -> np.ndarray:
    """A finite float64 1-D array, or a ValueError naming ``name`` (booleans refused unless ``allow_bool``)."""
    arr = real_array(value, name, allow_bool=allow_bool)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {arr.shape[0]}")
    return _finite(arr, name)


def check_delta(delta: object, name: str = "delta") -> float:
    """The isometry constant δ, a float in the open interval (0, 1)."""
    if isinstance(delta, np.ndarray) and delta.ndim == 0:
        delta = delta.item()
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise ValueError(f"{name} must be a real number in (0, 1), got {delta!r}")
    value = float(delta)
    if not (0.0 < value < 1.0):
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {value}")
    return value


def check_positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    """An integer ≥ ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_random_state(random_state: object) -> np.random.Generator:
    """``np.random.default_rng(random_state)`` with a clear error on bad seeds."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or (
        isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)
    ):
        return np.random.default_rng(random_state)
    raise ValueError(f"random_state must be None, an int or a numpy Generator, got {random_state!r}")


def count_distinct(values: np.ndarray) -> int:
    """The number of distinct entries of a 1-D array (``np.unique(values).size`` for finite values).

    Sorted neighbours are compared rather than calling ``np.unique``, whose plain form imports
    ``numpy.ma`` (about a sixth of ``import numpy``) on the light path (DESIGN.md, "Start-up").
    """
    ordered = np.sort(values)
    return int(ordered.size > 0) + int(np.count_nonzero(ordered[1:] != ordered[:-1]))
