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
  certified relative gap at most ``gap_tol`` in absolute value at a check (:meth:`ADMMControl.stop`), and is demoted
  to ``inaccurate`` when the final certificate, on the original secants, misses them
  (:meth:`ADMMControl.demote`).

Optionally the fixed-point map of the iteration is accelerated (:class:`AndersonMixing`, Walker
and Ni's type II with SCS 3's safeguard): the variant hands it each iterate's input x, its output
T(x) and the residual T(x) − x, and starts the next iteration from the combination Σγⱼ T(xⱼ) of
the last outputs that minimises ‖Σγⱼ (T(xⱼ) − xⱼ)‖ subject to Σγⱼ = 1, unless that point's own
residual turns out larger, when it goes back to the plain step.

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
.. [3] H. F. Walker and P. Ni, "Anderson acceleration for fixed-point iterations", SIAM Journal on
   Numerical Analysis 49(4), 1715–1735, 2011. Implemented here: Anderson acceleration of type II
   (:class:`AndersonMixing`), with the safeguard of SCS 3 (B. O'Donoghue, "Operator splitting for
   a homogeneous embedding of the linear complementarity problem", SIAM Journal on Optimization
   31(3), 1999–2023, 2021): an extrapolated point is kept only if its fixed-point residual is no
   larger than that of the point it was extrapolated from.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..._deadline import Deadline, check_time_limit
from ..._progress import say
from ..._validate import check_positive_int

__all__ = ["ADMMControl", "ADMMPenalty", "ADMMStopping", "AndersonMixing", "MAX_CONSTRAINTS", "announce_setup",
           "check_bundle"]

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
    cpu_time_limit : float, optional
        Limit in CPU seconds of the process (all threads, BLAS's included; ``sdpembed._deadline``), which the
        machine's load does not change; reaching it gives status ``max_iterations``.
    """

    tol: float = 1e-5
    feas_tol: float = 1e-6
    gap_tol: float = 1e-5
    max_iter: int = 20000
    check_every: int = 10
    time_limit: float | None = None
    cpu_time_limit: float | None = None

    def __post_init__(self) -> None:
        for name in ("tol", "feas_tol", "gap_tol"):
            _check_nonnegative(getattr(self, name), name)
        check_positive_int(self.max_iter, "max_iter")
        check_positive_int(self.check_every, "check_every")
        if self.time_limit is not None:
            _check_nonnegative(self.time_limit, "time_limit")
        check_time_limit(self.cpu_time_limit, "cpu_time_limit")


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
        ``time.perf_counter()`` at the start of the run, for ``time_limit`` (``cpu_time_limit`` counts from the
        control's creation).

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
        self.deadline = Deadline.of(stopping.time_limit, stopping.cpu_time_limit, wall_start=start)
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
        self.out_of_time = self.deadline is not None and self.deadline.passed()
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
        # a gap below −gap_tol: tr P under a proved lower bound, P too infeasible to trust (as for LMNN and MVU)
        if self.small and violation <= stopping.feas_tol and abs(rgap) <= stopping.gap_tol:
            self.status = "optimal"
            self.message = (f"max(e1, e2) = {self.residual:.2e} <= {stopping.tol:g}, violation {violation:.2e} <= "
                            f"{stopping.feas_tol:g}, certified relative gap {rgap:.2e} <= {stopping.gap_tol:g}{note}")
            return True
        if self.out_of_time:
            self.message = f"{self.deadline.reached()} before the tolerances were met"
            return True
        return False

    def demote(self, violation: float, rgap: float, where: str) -> None:
        """An ``optimal`` run whose final certificate misses the tolerances is ``inaccurate``;
        ``where`` says on what it converged and where the final certificate was made."""
        if self.status == "optimal" and (violation > self.stopping.feas_tol or not abs(rgap) <= self.stopping.gap_tol):
            self.status = "inaccurate"
            self.message = f"{where} the violation is {violation:.2e} and the certified relative gap {rgap:.2e}"

    def traces(self) -> dict[str, np.ndarray]:
        """The history as arrays: one entry per iteration (``TRACE_KEYS``) or per check (``CHECK_KEYS``)."""
        return {key: np.asarray(value) for key, value in self.history.items()}


class AndersonMixing:
    """Anderson acceleration of type II for a fixed-point iteration x ↦ T(x) (Walker and Ni [3]),
    safeguarded as in SCS 3.

    The caller evaluates T at its current point x and reports T(x) and the residual f = T(x) − x
    (:meth:`record`); the next point is then Σⱼ γⱼ T(xⱼ) over the last ``memory`` + 1 recorded
    points (:meth:`weights`, :meth:`combine`), with γ minimising ‖Σⱼ γⱼ fⱼ‖ subject to Σⱼ γⱼ = 1
    (a least-squares problem in the differences of the residuals, with a small Tikhonov term).
    Safeguard: when the point evaluated was such a combination and its residual exceeds
    ``safeguard`` times the residual of the point it was extrapolated from, the combination is
    rejected — the memory is cleared and the iteration goes on from the plain step T(x) of that
    earlier point (:attr:`fallback`).

    The state may hold more than the residual measures (``output`` is the whole state, ``residual``
    only the part on which the fixed-point residual is measured), and a ``payload`` the caller
    combines itself (e.g. low-rank factors); quantities linear in the state stay consistent under
    the combinations, since Σⱼ γⱼ = 1.

    Parameters
    ----------
    memory : int
        Number of residual differences kept (m ≥ 1).
    safeguard : float
        Largest accepted ratio of the residual at an extrapolated point to the residual it was
        extrapolated from.
    regularization : float
        Tikhonov weight, relative to the largest squared norm of a residual difference.

    Attributes
    ----------
    outputs, residuals, payloads : list
        The recorded T(xⱼ), fⱼ and payloads, oldest first.
    fallback : tuple
        (T(x), payload) of the point the rejected combination was extrapolated from.
    accepted, rejected : int
        Counts of the extrapolated points kept and rejected.
    """

    def __init__(self, memory: int, safeguard: float = 1.0, regularization: float = 1e-10) -> None:
        self.memory = check_positive_int(memory, "memory")
        _check_nonnegative(safeguard, "safeguard")
        _check_nonnegative(regularization, "regularization")
        self.safeguard, self.regularization = float(safeguard), float(regularization)
        self.outputs: list[np.ndarray] = []
        self.residuals: list[np.ndarray] = []
        self.payloads: list[object] = []
        self.accepted = self.rejected = 0
        self.fallback: tuple[np.ndarray, object] | None = None
        self._reference = math.inf              # the residual norm an extrapolated point must not exceed
        self._extrapolated = False

    def reset(self) -> None:
        """Forget the memory (e.g. when the iteration map changes: a new penalty)."""
        self.outputs.clear()
        self.residuals.clear()
        self.payloads.clear()
        self._extrapolated = False

    def record(self, output: np.ndarray, residual: np.ndarray, payload: object = None) -> bool:
        """Report T(x) (``output``), the residual T(x) − x (``residual``) and the caller's
        ``payload`` at the current point x; False when x was an extrapolated point the safeguard
        rejects (then nothing is recorded, the memory is cleared, and the caller goes on from
        :attr:`fallback`)."""
        norm = float(np.linalg.norm(residual))
        if self._extrapolated and not norm <= self.safeguard * self._reference:
            self.rejected += 1
            self.fallback = (self.outputs[-1], self.payloads[-1])
            self.reset()
            return False
        self.accepted += self._extrapolated
        self.outputs.append(output)
        self.residuals.append(residual)
        self.payloads.append(payload)
        if len(self.outputs) > self.memory + 1:
            del self.outputs[0], self.residuals[0], self.payloads[0]
        self._reference, self._extrapolated = norm, False
        return True

    def weights(self) -> np.ndarray | None:
        """γ (summing to 1, oldest first) of the next point Σⱼ γⱼ T(xⱼ), or None (too little memory,
        or a singular least-squares problem): then the next point is the plain step. Not None marks
        the next evaluation as extrapolated, to be judged by the safeguard."""
        if len(self.residuals) < 2:
            return None
        F = np.stack(self.residuals, axis=1)                       # (n, m + 1)
        dF = np.diff(F, axis=1)                                    # (n, m)
        gram = dF.T @ dF
        gram[np.diag_indices_from(gram)] += self.regularization * max(float(np.max(np.diag(gram))), 1e-300)
        try:
            theta = np.linalg.solve(gram, dF.T @ F[:, -1])
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(theta)):
            return None
        # x⁺ = T(x_m) − Σᵢ θᵢ (T(x_{i+1}) − T(x_i)), as weights on the outputs
        gamma = np.zeros(F.shape[1])
        gamma[-1] = 1.0
        gamma[1:] -= theta
        gamma[:-1] += theta
        self._extrapolated = True
        return gamma

    def combine(self, gamma: np.ndarray) -> np.ndarray:
        """Σⱼ γⱼ T(xⱼ) over the recorded outputs."""
        return np.stack(self.outputs, axis=1) @ gamma
