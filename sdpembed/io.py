"""The file contract (DESIGN.md), read and written in one place: instance files, solution files and
the arrays of a solution.

An instance file holds a unicode string ``problem`` and named arrays (the instance type's
``to_arrays``); scalars are 0-d arrays and the file loads with ``allow_pickle=False``. Arrays beyond
the contract are ignored, except ``optimum`` (a certified optimal value, used by ``verify``). A
solution file holds the problem's variable (``P``, ``M``, ``K`` or ``S``), optionally a claimed
``dual_bound`` and the multipliers that prove a bound (the problem's ``dual_arrays`` in the
registry: ``dual_pairs``/``dual_y`` or ``dual_y`` for the NuMax family, ``dual_triplets``/``dual_alpha``
for LMNN, ``dual_y``/``dual_t`` for MVU, ``dual_lambda`` for MVU out-of-sample; ``docs/grading.md``
states each dual); ``sdpembed solve`` also writes ``status``, ``objective`` and ``method``
(:func:`solution_arrays`). A graded program that does not handle an instance exits with
:data:`SKIP_EXIT_CODE`.

Files are parsed by :func:`sdpembed._files.read_npz` (never unpickling; one ValueError line naming
the file) and written atomically. This module imports no CVXPY: the registry loads formulations and
solvers only when a solve asks for them.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._files import read_npz, save_npz
from ._validate import real_array
from .registry import get_problem
from .results import SolveResult

__all__ = [
    "SKIP_EXIT_CODE",
    "Solution",
    "check_dual_bound",
    "checked_matrix",
    "instance_from_arrays",
    "load_instance",
    "read_npz",
    "read_solution",
    "save_instance",
    "solution_arrays",
    "solution_from_arrays",
    "write_solution",
]

#: Exit code by which a graded program says it does not handle an instance (``docs/grading.md``):
#: ``sdpembed suite run`` grades it ``skip``, not ``crash``.
SKIP_EXIT_CODE = 3


# ------------------------------------------------------------------------------ instances
def save_instance(instance: Any, path: str | os.PathLike) -> Path:
    """Write any registered instance as a compressed ``.npz`` file, atomically.

    Parameters
    ----------
    instance
        A registered instance.
    path : path
        Where to write; ``.npz`` is appended when the name does not end with it (as numpy does).

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    ValueError
        If the directory of ``path`` does not exist or ``path`` is a directory.
    """
    return save_npz(path, instance.to_arrays(), "instance file")


def load_instance(path: str | os.PathLike) -> Any:
    """Read an instance file, dispatching on its ``problem`` string through the registry.

    Raises
    ------
    ValueError
        One line naming the file: it cannot be read (:func:`read_npz`) or its arrays do not make
        an instance of its problem.
    """
    arrays = read_npz(path, "instance")
    try:
        return instance_from_arrays(arrays)
    except ValueError as exc:
        raise ValueError(f"instance file {os.fspath(path)!r}: {exc}") from None


def instance_from_arrays(arrays: dict[str, np.ndarray]) -> Any:
    """The instance the arrays of an instance file describe (its ``problem`` string names the type)."""
    if "problem" not in arrays:
        raise ValueError("there is no 'problem' array")
    if arrays["problem"].ndim != 0 or arrays["problem"].dtype.kind != "U":
        raise ValueError(
            "the 'problem' array must be a 0-d unicode string such as np.array('numax'), got "
            f"dtype {arrays['problem'].dtype} and shape {arrays['problem'].shape}"
        )
    return get_problem(str(arrays["problem"])).instance_type.from_arrays(arrays)


# ------------------------------------------------------------------------------ solutions
def checked_matrix(value: object, variable: str, shape: int | tuple[int, ...]) -> np.ndarray:
    """The solution matrix as float64, exactly as given: real numbers, of the given shape, finite.

    Parameters
    ----------
    value : array_like
    variable : str
        The variable's name in solution files.
    shape : int or tuple of int
        ``dim`` for a (dim, dim) matrix, or the instance's ``variable_shape`` ((C, dim, dim) for a
        stack of C matrices).

    Raises
    ------
    ValueError
        Naming the array ``variable``: complex, string, boolean or object entries (never cast), a
        wrong shape, NaN or infinite entries.
    """
    name = f"the solution {variable!r}"
    shape = (shape, shape) if isinstance(shape, numbers.Integral) else tuple(shape)
    X = real_array(value, name, allow_bool=False)
    if X.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return X


def check_dual_bound(value: object) -> float | None:
    """A claimed ``dual_bound`` as a float (None when there is none): a finite real number, 0-d.

    Raises
    ------
    ValueError
        Naming ``'dual_bound'``: not a 0-d real number, NaN or infinite (a bound of ±inf or NaN
        proves nothing and would switch the bound check off).
    """
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        if value.ndim != 0 or value.dtype.kind not in "iuf":
            raise ValueError(f"'dual_bound' must be a 0-d numeric array, got dtype {value.dtype} and shape "
                             f"{value.shape}")
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"'dual_bound' must be a finite real number (a bound on the optimum), got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Solution:
    """What a solution file says (DESIGN.md, the file contract).

    Attributes
    ----------
    matrix : ndarray
        The decision variable (``P``, ``M``, ``K`` or ``S``).
    dual_bound : float, optional
        A claimed bound on the optimum (lower for minimisations, upper for MVU); finite; checked, never
        trusted.
    dual_multipliers : dict of str to ndarray, optional
        The multiplier arrays of the file (those of the problem's ``dual_arrays`` it holds), from
        which :func:`~sdpembed.validation.verify.verify_solution` proves its own bound.
    """

    matrix: np.ndarray
    dual_bound: float | None = None
    dual_multipliers: dict[str, np.ndarray] | None = None


def solution_from_arrays(instance: Any, arrays: dict[str, np.ndarray]) -> Solution:
    """The :class:`Solution` in the arrays of a solution file of ``instance``.

    Raises
    ------
    ValueError
        If the problem's variable is missing or not a finite real matrix of the instance's shape
        (complex, string and boolean arrays are refused, never cast), ``dual_bound`` is not a
        finite 0-d number. (Multipliers are checked when the bound is proved from them.)
    """
    spec = get_problem(getattr(instance, "problem", ""))
    if spec.variable not in arrays:
        raise ValueError(f"no array {spec.variable!r} (the {spec.name} variable)")
    matrix = checked_matrix(arrays[spec.variable], spec.variable, instance.variable_shape)
    claimed = check_dual_bound(arrays.get("dual_bound"))
    multipliers = {name: arrays[name] for name in spec.dual_arrays if name in arrays}
    return Solution(matrix, claimed, multipliers or None)


def read_solution(path: str | os.PathLike, instance: Any) -> Solution:
    """Read and check the solution file at ``path`` for ``instance`` (:func:`solution_from_arrays`).

    Raises
    ------
    ValueError
        One line naming the file: it cannot be read (:func:`read_npz`) or is
        not a solution of ``instance``.
    """
    arrays = read_npz(path, "solution")
    try:
        return solution_from_arrays(instance, arrays)
    except ValueError as exc:
        raise ValueError(f"solution file {os.fspath(path)!r}: {exc}") from None


def solution_arrays(instance: Any, result: SolveResult) -> dict[str, np.ndarray]:
    """The arrays of the solution file of ``result``, a solve of ``instance``: the problem's variable,
    ``status``, ``objective`` and ``method``; the certified ``dual_bound`` when there is one; the
    multipliers of the solve (the problem's ``dual_from_result``), which ``verify`` checks itself;
    and what the instance type adds (``solution_arrays``, e.g. the new point ``y`` of ``mvu_oos``)."""
    spec = get_problem(instance.problem)
    arrays = {
        spec.variable: result.solution,
        "status": np.array(result.status),
        "objective": np.array(result.objective),
        "method": np.array(result.method),
    }
    if result.certified:
        arrays["dual_bound"] = np.array(result.dual_bound)
    if spec.dual_from_result is not None:
        arrays.update(spec.dual_from_result(instance, result))
    if hasattr(instance, "solution_arrays"):
        arrays.update(instance.solution_arrays(result.solution))
    return arrays


def write_solution(path: str | os.PathLike, instance: Any, result: SolveResult) -> Path:
    """Write the solution file of ``result`` (:func:`solution_arrays`) as a compressed ``.npz`` file,
    atomically; returns the path written (``.npz`` appended when missing).

    Raises
    ------
    ValueError
        If the directory of ``path`` does not exist or ``path`` is a directory.
    """
    return save_npz(path, solution_arrays(instance, result), "solution file")
