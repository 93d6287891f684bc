"""The control loop of the NuMax ADMMs: stopping rule, check cadence, penalty balancing, history.

Both ADMMs — :func:`~sdpembed.solvers.numax.admm.box_trace_admm` on explicit secants and
:func:`~sdpembed.solvers.numax.admm_pairs.pair_trace_admm` on the pairs of a point set — run the
same outer loop around their own iterate update, and :class:`ADMMControl` is that loop's state:

* every iteration the variant reports tr P, the relative residuals e₁, e₂ of Sec. 4.2 and the
  rank of P (:meth:`ADMMControl.record`);
* every tenth iteration of the first ``adapt_until`` the penalty β is balanced against the primal
  and dual residuals (Boyd et al., Sec. 3.4.1): doubled when the primal residual exceeds ten times
  the dual one, halved in the opposite case (:meth:`ADMMControl.balance`); the variant divides its
  scaled multipliers by the same factor;
* the certificate is built every ``check_every`` iterations, five times as often once
  max(e₁, e₂) ≤ ``tol``, at the last iteration and when the time runs out
  (:meth:`ADMMControl.check_due`); a check is recorded and, every ``verbose`` iterations, printed
  (:meth:`ADMMControl.record_check`);
* the run is ``optimal`` when max(e₁, e₂) ≤ ``tol``, the violation is at most ``feas_tol`` and the
  certified relative gap at most ``gap_tol`` at a check (:meth:`ADMMControl.stop`), and is demoted
  to ``inaccurate`` when the final certificate, on the original secants, misses them
  (:meth:`ADMMControl.demote`).

The options of the loop come in two bundles shared by both variants: :class:`ADMMStopping` (the
tolerances, the iteration and time limits, the check cadence) and :class:`ADMMPenalty` (β, the
multiplier step η and the balancing schedule).

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the stopping rule of Sec. 4.2, the parameters β and η of
   Sec. 4.1 and Sec. 5.
.. [2] S. Boyd, N. Parikh, E. Chu, B. Peleato and J. Eckstein, "Distributed optimization and
   statistical learning via the alternating direction method of multipliers", Foundations and
   Trends in Machine Learning 3(1), 1–122, 2011. Implemented here: residual balancing, Sec. 3.4.1.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..._progress import say
from ..._validate import check_positive_int

__all__ = ["ADMMControl", "ADMMPenalty", "ADMMStopping", "MAX_CONSTRAINTS", "announce_setup", "check_bundle"]

#: The most secants an ADMM takes by default (``max_constraints``): its least-squares step holds the
#: S × S inverse (I + 𝒜𝒜*)⁻¹, 3 GiB at this size. Above it, listed secants are solved by column
#: generation (:func:`~sdpembed.solvers.numax.column_generation.secant_column_generation`), the
#: registry's default there.
MAX_CONSTRAINTS = 20000

#: iterations between two penalty balancings
BALANCE_EVERY = 10

Bundle = TypeVar("Bundle")


def announce_setup(verbose: bool | int, n_constraints: int, dim: int) -> None:
    """With ``verbose``, say before it starts that the run forms and factorises the S × S matrix
    I + 𝒜𝒜* of the least-squares step (12)–(13): on thousands of constraints that takes long
    before the first iteration."""
    if verbose:
        say(f"admm: {n_constraints} constraints in dimension {dim}; forming and factorising I + AA* "
            f"({n_constraints}x{n_constraints})")


def check_bundle(value: Bundle | None, kind: type[Bundle], name: str) -> Bundle:
    """An option bundle: ``kind()`` (its defaults) for None; anything but a ``kind`` is a clear error."""
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise ValueError(f"{name} must be of type {kind.__name__} or None (its defaults), got {value!r}")
    return value


def _check_nonnegative(value: object, name: str) -> None:
    """A real number ≥ 0 (not a bool, not NaN)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0.0:
        raise ValueError(f"{name} must be a real number >= 0, got {value!r}")


@dataclass(frozen=True)
class ADMMStopping:
    """When a NuMax ADMM stops, and how often it builds its certificate.

    Parameters
    ----------
    tol : float
        Threshold on max(e₁, e₂) of NuMax Sec. 4.2.
    feas_tol : float
        Largest accepted constraint violation of the returned P.
    gap_tol : float
        Largest accepted certified relative gap.
    max_iter : int
        Iteration limit; reaching it gives status ``max_iterations``.
    check_every : int
        Build the certificate (an extra 𝒜(P) and one eigendecomposition) every this many
        iterations, and every ``check_every // 5`` once max(e₁, e₂) ≤ ``tol``.
    time_limit : float, optional
        Wall-clock limit in seconds; reaching it gives status ``max_iterations``.
    """

    tol: float = 1e-5
    feas_tol: float = 1e-6
    gap_tol: float = 1e-5
    max_iter: int = 20000
    check_every: int = 10
    time_limit: float | None = None

    def __post_init__(self) -> None:
        for name in ("tol", "feas_tol", "gap_tol"):
            _check_nonnegative(getattr(self, name), name)
        check_positive_int(self.max_iter, "max_iter")
        check_positive_int(self.check_every, "check_every")
        if self.time_limit is not None:
            _check_nonnegative(self.time_limit, "time_limit")


@dataclass(frozen=True)
class ADMMPenalty:
    """The penalty of the augmented Lagrangian (9) and the multiplier step.

    Parameters
    ----------
    beta : float
        Initial penalty β = β₁ = β₂ of (9) (paper: 1); a warm start brings its own.
    eta : float
        Multiplier step η ∈ (0, (1+√5)/2) (paper: 1.618, Sec. 4.1).
    adaptive : bool
        Balance β against the residuals (Boyd et al., Sec. 3.4.1) every 10 iterations of the
        first ``adapt_until``.
    adapt_until : int
        Iteration after which β stays fixed, so that the usual ADMM convergence theory applies
        to the tail.
    """

    beta: float = 1.0
    eta: float = 1.618
    adaptive: bool = True
    adapt_until: int = 5000

    def __post_init__(self) -> None:
        if isinstance(self.eta, bool) or not isinstance(self.eta, numbers.Real) or not (
                0.0 < self.eta < (1.0 + math.sqrt(5.0)) / 2.0):
            raise ValueError(f"eta must lie in (0, (1+sqrt 5)/2), got {self.eta!r}")
        if isinstance(self.beta, bool) or not isinstance(self.beta, numbers.Real) or not (
                0.0 < self.beta < math.inf):
            raise ValueError(f"beta must be positive and finite, got {self.beta!r}")
        if not isinstance(self.adaptive, bool | np.bool_):
            raise ValueError(f"adaptive must be a bool, got {self.adaptive!r}")
        check_positive_int(self.adapt_until, "adapt_until", minimum=0)


class ADMMControl:
    """The outer loop of a NuMax ADMM (module docstring): its variant supplies the iterate update.

    Parameters
    ----------
    stopping : ADMMStopping
        The tolerances, limits and check cadence.
    penalty : ADMMPenalty
        The balancing schedule (its ``beta`` is not read: the run's starting β is ``beta``).
    beta : float
        The starting penalty (``penalty.beta``, or a warm start's).
    verbose : bool or int
        Print a check every ``verbose`` iterations or more (``True`` means 100).
    start : float
        ``time.perf_counter()`` at the start of the run, for ``time_limit``.

    Attributes
    ----------
    beta : float
        The current penalty.
    iteration : int
        The current iteration (the last one once the loop is left).
    residual : float
        max(e₁, e₂) of the current iteration.
    reporting : bool
        Whether the current check is printed.
    status, message : str
        The run's outcome so far.
    """

    TRACE_KEYS = ("objective", "e1", "e2", "beta", "rank")
    CHECK_KEYS = ("check_iteration", "max_violation", "dual_bound", "relative_gap")

    def __init__(self, stopping: ADMMStopping, penalty: ADMMPenalty, beta: float, verbose: bool | int,
                 start: float) -> None:
        self.stopping, self.penalty, self.beta, self.start = stopping, penalty, beta, start
        self.report_every = 100 if verbose is True else int(verbose or 0)
        self.history: dict[str, list[float]] = {key: [] for key in self.TRACE_KEYS + self.CHECK_KEYS}
        self.status = "max_iterations"
        self.message = f"reached max_iter={stopping.max_iter} without meeting the tolerances"
        self.iteration = self._last_check = self._last_report = 0
        self.e1 = self.e2 = self.residual = math.inf
        self.objective, self.rank = 0.0, 0
        self.small = self.out_of_time = self.reporting = False

    def iterations(self) -> Iterator[int]:
        """1, 2, …, ``max_iter``, kept in ``iteration``; the variant leaves the loop when
        :meth:`stop` says so."""
        for iteration in range(1, self.stopping.max_iter + 1):
            self.iteration = iteration
            yield iteration

    def record(self, objective: float, e1: float, e2: float, rank: int) -> None:
        """This iteration's tr P, relative residuals e₁, e₂ (Sec. 4.2) and rank of P, with β."""
        self.objective, self.e1, self.e2, self.rank = objective, e1, e2, rank
        self.residual = max(e1, e2)
        for key, value in zip(self.TRACE_KEYS, (objective, e1, e2, self.beta, rank), strict=True):
            self.history[key].append(value)

    def balance_due(self) -> bool:
        """Whether β is balanced at this iteration (then the variant computes its dual residual)."""
        return (self.penalty.adaptive and self.iteration <= self.penalty.adapt_until
                and self.iteration % BALANCE_EVERY == 0)

    def balance(self, norm_rP: float, norm_rq: float, norm_dL: float, norm_dAL: float) -> float:
        """Residual balancing: the factor (2, ½ or 1) by which β was multiplied, given the primal
        residuals ‖P − L‖, ‖q − 𝒜(L)‖ and the changes ‖ΔL‖, ‖Δ𝒜(L)‖ (the dual residual is β times
        theirs). The variant divides its scaled multipliers Λ, ω by the factor."""
        primal = np.hypot(norm_rP, norm_rq)
        dual = self.beta * np.hypot(norm_dL, norm_dAL)
        factor = 2.0 if primal > 10.0 * dual else 0.5 if dual > 10.0 * primal else 1.0
        self.beta *= factor
        return factor

    def check_due(self) -> bool:
        """Whether the certificate is built at this iteration: the cadence, the last iteration or
        the time limit (then ``reporting`` says whether the check is printed)."""
        stopping, iteration = self.stopping, self.iteration
        self.small = self.residual <= stopping.tol
        self.out_of_time = stopping.time_limit is not None and \
            time.perf_counter() - self.start > stopping.time_limit
        every = max(1, stopping.check_every // 5) if self.small else stopping.check_every
        if iteration - self._last_check >= every or iteration == stopping.max_iter or self.out_of_time:
            self._last_check = iteration
            self.reporting = bool(self.report_every) and iteration - self._last_report >= self.report_every
            return True
        return False

    def record_check(self, violation: float, bound: float, rgap: float) -> None:
        """The check's violation, dual bound and relative gap; printed when ``reporting``."""
        for key, value in zip(self.CHECK_KEYS, (self.iteration, violation, bound, rgap), strict=True):
            self.history[key].append(value)
        if self.reporting:
            self._last_report = self.iteration
            say(f"admm it {self.iteration:6d}  tr P {self.objective:.8f}  e1 {self.e1:.2e}  e2 {self.e2:.2e}  "
                f"viol {violation:.2e}  bound {bound:.8f}  gap {rgap:.2e}  rank {self.rank:4d}  beta {self.beta:.3g}")

    def stop(self, violation: float, rgap: float, note: str = "") -> bool:
        """Whether the run ends at this check: ``optimal`` when the residual, the violation and the
        certified gap meet their tolerances (``note`` is appended to the message), or out of time."""
        stopping = self.stopping
        if self.small and violation <= stopping.feas_tol and rgap <= stopping.gap_tol:
            self.status = "optimal"
            self.message = (f"max(e1, e2) = {self.residual:.2e} <= {stopping.tol:g}, violation {violation:.2e} <= "
                            f"{stopping.feas_tol:g}, certified relative gap {rgap:.2e} <= {stopping.gap_tol:g}{note}")
            return True
        if self.out_of_time:
            self.message = f"time limit of {stopping.time_limit:g}s reached before the tolerances were met"
            return True
        return False

    def demote(self, violation: float, rgap: float, where: str) -> None:
        """An ``optimal`` run whose final certificate misses the tolerances is ``inaccurate``;
        ``where`` says on what it converged and where the final certificate was made."""
        if self.status == "optimal" and (violation > self.stopping.feas_tol or rgap > self.stopping.gap_tol):
            self.status = "inaccurate"
            self.message = f"{where} the violation is {violation:.2e} and the certified relative gap {rgap:.2e}"

    def traces(self) -> dict[str, np.ndarray]:
        """The history as arrays: one entry per iteration (``TRACE_KEYS``) or per check (``CHECK_KEYS``)."""
        return {key: np.asarray(value) for key, value in self.history.items()}
