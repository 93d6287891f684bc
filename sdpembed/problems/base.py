"""What every instance type of :mod:`sdpembed.problems` shares: the stored optimum, the size of its
matrix variable, and its ``.npz`` file (the file contract of DESIGN.md, read and written as a whole
by :mod:`sdpembed.io`).

An instance file holds a unicode string ``problem`` and named arrays; scalars are 0-d
arrays and the file loads with ``allow_pickle=False``. Arrays beyond the contract are
ignored, except ``optimum`` (a certified optimal value, used by ``verify``).
"""

from __future__ import annotations

import numbers
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .._files import save_npz
from .._memory import check_memory, dense_bytes

__all__ = ["Instance", "exact_scale_exponent", "file_scalar", "power_of_two_below"]


def power_of_two_below(value: float) -> float:
    """The power of two 2^k ≤ ``value`` < 2^(k+1) of a finite ``value`` > 0 (subnormals included), 1.0 for
    ``value`` ≤ 0: the unit of a quantity of that size, by which it is divided exactly (no rounding)."""
    value = float(value)
    return float(np.ldexp(1.0, int(np.frexp(value)[1]) - 1)) if value > 0.0 else 1.0


def exact_scale_exponent(X: np.ndarray, limit: int) -> int:
    """The s for which X·2⁻ˢ has its largest |entry| in [1/2, 1), when that entry lies outside [2⁻ˡⁱᵐⁱᵗ, 2ˡⁱᵐⁱᵗ]
    and the scaling is exact (no nonzero entry of X·2⁻ˢ subnormal); 0 otherwise (also for X = 0 or X not
    finite). Solvers whose steps assume data near unit scale solve X·2⁻ˢ, whose differences, norms and
    quotients are those of X scaled exactly."""
    magnitudes = np.abs(np.asarray(X, dtype=np.float64))
    top = float(np.max(magnitudes, initial=0.0))
    if top == 0.0 or not np.isfinite(top) or 2.0**-limit <= top <= 2.0**limit:
        return 0
    shift = int(np.frexp(top)[1])
    least = float(np.min(magnitudes[magnitudes > 0.0]))
    return 0 if float(np.ldexp(least, -shift)) < np.finfo(np.float64).tiny else shift


def file_scalar(arrays: dict[str, np.ndarray], key: str, problem: str) -> Any:
    """The 0-d array ``key`` of the arrays of a ``problem`` instance file, as a Python scalar; a
    ValueError naming it when it is missing or not 0-d."""
    if key not in arrays:
        raise ValueError(f"a {problem!r} instance needs the array {key!r}")
    value = arrays[key]
    if value.ndim != 0:
        raise ValueError(f"{key!r} must be a 0-d array (a scalar), got shape {value.shape}")
    return value.item()


class Instance:
    """What every instance type shares: the stored optimum, the size of its variable and writing the file."""

    optimum: float | None
    problem: ClassVar[str]
    variable: ClassVar[str]

    @property
    def gap_scale(self) -> float:
        """The objective value below which relative gaps are measured absolutely (in its units):
        0, purely relative, unless the objective has a unit of its own
        (:func:`sdpembed.results.relative_gap`)."""
        return 0.0

    @property
    def objective_unit(self) -> float:
        """The unit of the objective, a power of two: the value below which ``certify`` measures an
        objective error absolutely, |f − f*| / max(|f*|, unit). 1 for an objective that does not scale
        with the data (NuMax's tr P of unit secants, LMNN's loss, which counts margins); the data's scale
        for one that does (MVU, MVU out-of-sample), so that an answer is judged alike at every scale."""
        return 1.0

    @property
    def matrix_unit(self) -> float:
        """The unit of the matrix variable, a power of two: ``certify`` measures its asymmetry
        max |X − Xᵀ| / max(unit, max |X|) and its PSD violation max(0, −λ_min) / max(unit, λ_max). 1 for a
        matrix whose scale does not depend on the data (NuMax's P, MVU out-of-sample's S with its identity
        block); MVU's K scales as its squared distances, LMNN's M as their inverse."""
        return 1.0

    @property
    def variable_shape(self) -> tuple[int, ...]:
        """Shape of the matrix variable of a solution file: (dim, dim), or (C, dim, dim) for a problem
        with one matrix per block (judged as the block-diagonal matrix of the C blocks)."""
        return (self.dim, self.dim)

    def _check_variable_memory(self, dim: int, blocks: int = 1) -> None:
        """Refuse an instance whose matrix variable (``blocks`` dim × dim float64 matrices) the machine
        cannot hold: every solve, objective and check of a solution needs it."""
        stack = f"{blocks}×" if blocks > 1 else ""
        check_memory(dense_bytes(blocks * dim, dim), f"{self.variable} ({stack}{dim}×{dim} float64), the "
                                                     f"variable of this {self.problem} instance")

    def _check_optimum(self) -> None:
        """Store a given ``optimum`` as a float; it must be a finite real number (not text, not complex)."""
        if self.optimum is not None:
            value = self.optimum
            if isinstance(value, np.ndarray) and value.ndim == 0:
                value = value.item()
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not np.isfinite(value):
                raise ValueError(f"optimum must be a finite real number, got {self.optimum!r}")
            object.__setattr__(self, "optimum", float(value))

    def _with_optimum(self, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``arrays`` plus the stored ``optimum``, if any (the file contract's optional array)."""
        if self.optimum is not None:
            arrays["optimum"] = np.array(self.optimum)
        return arrays

    def save(self, path: str | os.PathLike) -> Path:
        """Write the instance as a compressed ``.npz`` file, atomically (:func:`sdpembed.io.save_instance`);
        returns its path."""
        return save_npz(path, self.to_arrays(), "instance file")
