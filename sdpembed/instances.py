"""Problem instances: one frozen dataclass per problem, validated on construction, and the
``.npz`` file contract of DESIGN.md.

An instance file holds a unicode string ``problem`` and named arrays; scalars are 0-d
arrays and the file loads with ``allow_pickle=False``. Arrays beyond the contract are
ignored, except ``optimum`` (a certified optimal value, used by ``verify``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ._validate import as_matrix, check_delta, check_positive_int
from .secants import all_secants, iter_secant_blocks, pair_count, sample_secants

__all__ = ["NuMaxInstance", "load_instance", "save_instance", "read_npz"]

#: Rows of ``secants`` must have unit norm to this tolerance (they are then renormalised).
UNIT_NORM_TOL = 1e-6


def read_npz(path: str | os.PathLike, what: str = "instance") -> dict[str, np.ndarray]:
    """Load every array of an ``.npz`` file (``allow_pickle=False``), with clear errors."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except FileNotFoundError:
        raise ValueError(f"{what} file {os.fspath(path)!r} does not exist") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{what} file {os.fspath(path)!r} is not a readable .npz file: {exc}") from None


def _scalar(arrays: dict[str, np.ndarray], key: str, problem: str) -> Any:
    if key not in arrays:
        raise ValueError(f"a {problem!r} instance needs the array {key!r}")
    value = arrays[key]
    if value.ndim != 0:
        raise ValueError(f"{key!r} must be a 0-d array (a scalar), got shape {value.shape}")
    return value.item()


@dataclass(frozen=True, eq=False)
class NuMaxInstance:
    """The NuMax SDP (4): minimise tr P s.t. |v_iᵀ P v_i − 1| ≤ δ for all secants, P ⪰ 0.

    Give either ``secants`` (unit rows v_i, NuMax eq. (1)) or ``X`` (points as rows,
    meaning all their pairwise secants — the *point form* of DESIGN.md).

    Parameters
    ----------
    delta : float
        Isometry constant δ ∈ (0, 1).
    secants : ndarray of shape (S, N), optional
        Unit-norm secants (rows within 1e-6 of unit norm are renormalised exactly).
    X : ndarray of shape (n, N), optional
        Points; the instance then means all n(n−1)/2 secants.
    optimum : float, optional
        A certified optimal value carried with the instance (used by ``verify``).
    """

    problem: ClassVar[str] = "numax"
    variable: ClassVar[str] = "P"

    delta: float
    secants: np.ndarray | None = None
    X: np.ndarray | None = None
    optimum: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_delta(self.delta))
        if (self.secants is None) == (self.X is None):
            raise ValueError("give exactly one of secants (S, N) or X (n, N) points")
        if self.secants is not None:
            V = as_matrix(self.secants, "secants")
            norms = np.linalg.norm(V, axis=1)
            bad = np.abs(norms - 1.0) > UNIT_NORM_TOL
            if np.any(bad):
                raise ValueError(
                    f"secants must have unit-norm rows (NuMax eq. (1)); {int(bad.sum())} row(s) "
                    f"do not, e.g. row {int(np.argmax(bad))} has norm {norms[np.argmax(bad)]:.6g}. "
                    "Build instances from data with NuMaxInstance.from_points."
                )
            V = V / norms[:, None]
            V.setflags(write=False)
            object.__setattr__(self, "secants", V)
        else:
            X = as_matrix(self.X, "X", min_rows=2).copy()
            if np.all(X == X[0]):
                raise ValueError("X must contain at least two distinct points (all its secants are zero)")
            X.setflags(write=False)
            object.__setattr__(self, "X", X)
        if self.optimum is not None:
            value = float(self.optimum)
            if not np.isfinite(value):
                raise ValueError(f"optimum must be a finite number, got {self.optimum!r}")
            object.__setattr__(self, "optimum", value)

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_points(
        cls, X: np.ndarray, delta: float, *, n_secants: int | None = None, random_state=None
    ) -> NuMaxInstance:
        """Secant-form instance from data points (rows of ``X``).

        With ``n_secants`` a seeded uniform sample of that many pairs is used (NuMax
        Sec. 5.1); without it, all pairs. Zero secants (duplicate points) are dropped with
        a warning.
        """
        if n_secants is None:
            secants = all_secants(X)
        else:
            secants = sample_secants(X, check_positive_int(n_secants, "n_secants"), random_state=random_state)
        return cls(delta=delta, secants=secants)

    # ----------------------------------------------------------------- structure
    @property
    def point_form(self) -> bool:
        """True when the instance is given by points ``X`` (all pairwise secants)."""
        return self.X is not None

    @property
    def dim(self) -> int:
        """Ambient dimension N (P is N × N)."""
        return (self.secants if self.secants is not None else self.X).shape[1]

    @property
    def n_constraints(self) -> int:
        """Number of secants S (in point form: all n(n−1)/2 pairs, before duplicate points'
        zero secants are dropped)."""
        return self.secants.shape[0] if self.secants is not None else pair_count(self.X.shape[0])

    @cached_property
    def secant_matrix(self) -> np.ndarray:
        """The (S, N) unit secants, materialised (all pairs in point form)."""
        if self.secants is not None:
            return self.secants
        V = all_secants(self.X)
        V.setflags(write=False)
        return V

    def bounds(self, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per-secant bounds (lo, hi) = (1 − δ, 1 + δ) of (4), for ``n`` secants."""
        n = self.secant_matrix.shape[0] if n is None else n
        return np.full(n, 1.0 - self.delta), np.full(n, 1.0 + self.delta)

    # ----------------------------------------------------------------- evaluation
    def objective(self, P: np.ndarray) -> float:
        """tr P, the objective of (4) (the nuclear norm for P ⪰ 0)."""
        return float(np.trace(P))

    def max_violation(self, P: np.ndarray, block_size: int = 65536) -> float:
        """Worst violation max_i (|v_iᵀ P v_i − 1| − δ)₊ over all secants.

        In point form the secants are streamed in blocks and never materialised.
        """
        P = np.asarray(P, dtype=np.float64)
        if self.secants is not None:
            blocks = [self.secants]
        else:
            blocks = (secants for _, secants in iter_secant_blocks(self.X, block_size))
        worst = 0.0
        for V in blocks:
            values = np.einsum("ij,ij->i", V @ P, V)
            worst = max(worst, float(np.max(np.abs(values - 1.0) - self.delta, initial=0.0)))
        return worst

    # ----------------------------------------------------------------- files
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the file contract (DESIGN.md)."""
        arrays = {"problem": np.array(self.problem), "delta": np.array(self.delta)}
        if self.secants is not None:
            arrays["secants"] = np.asarray(self.secants)
        else:
            arrays["X"] = np.asarray(self.X)
        if self.optimum is not None:
            arrays["optimum"] = np.array(self.optimum)
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> NuMaxInstance:
        """Build from the arrays of an instance file (see :meth:`to_arrays`)."""
        delta = _scalar(arrays, "delta", cls.problem)
        optimum = _scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        has_secants, has_points = "secants" in arrays, "X" in arrays
        if has_secants == has_points:
            raise ValueError("a 'numax' instance needs exactly one of the arrays 'secants' or 'X'")
        if has_secants:
            return cls(delta=delta, secants=arrays["secants"], optimum=optimum)
        return cls(delta=delta, X=arrays["X"], optimum=optimum)

    def save(self, path: str | os.PathLike) -> None:
        """Write the instance as a compressed ``.npz`` file."""
        save_instance(self, path)


def save_instance(instance: Any, path: str | os.PathLike) -> None:
    """Write any registered instance to ``path`` as a compressed ``.npz`` file."""
    np.savez_compressed(path, **instance.to_arrays())


def load_instance(path: str | os.PathLike) -> Any:
    """Read an instance file, dispatching on its ``problem`` string through the registry."""
    from .registry import get_problem

    arrays = read_npz(path, "instance")
    if "problem" not in arrays:
        raise ValueError(f"instance file {os.fspath(path)!r} has no 'problem' array")
    if arrays["problem"].ndim != 0 or arrays["problem"].dtype.kind != "U":
        raise ValueError(
            "the 'problem' array must be a 0-d unicode string such as np.array('numax'), got "
            f"dtype {arrays['problem'].dtype} and shape {arrays['problem'].shape}"
        )
    problem = str(arrays["problem"])
    return get_problem(problem).instance_type.from_arrays(arrays)
