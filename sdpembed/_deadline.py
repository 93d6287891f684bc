"""The time budget of a solve: wall-clock seconds, CPU seconds of the process, or both.

A solver's ``time_limit`` counts wall-clock seconds (:func:`time.perf_counter`): on a shared machine a run
at load 6 gets a third of the CPU it gets alone, and stops after a third of the work, so an outcome decided
by a wall-clock limit depends on the load. ``cpu_time_limit`` counts the CPU seconds of the whole process
(:func:`time.process_time`: user and system time of every thread, BLAS threads included, so with k busy
BLAS threads it runs out up to k times faster than wall time), which the load does not change. A
:class:`Deadline` holds either or both and has passed when either has; the solvers check it where they
checked the wall clock before (between iterations: a limit stops the run at the first check after it), and a
stage with no partial answer to return calls :meth:`Deadline.check` in its own loop, whose
:class:`DeadlinePassed` its caller catches.
The two clocks are read through this module's ``_wall`` and ``_cpu`` so that a test can replace them.

References
----------
.. [1] Python Software Foundation, "time — Time access and conversions", the Python standard library
   documentation: ``perf_counter`` (a monotonic clock of wall time) and ``process_time`` (the sum of the
   system and user CPU time of the current process).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

__all__ = ["Deadline", "DeadlinePassed", "check_time_limit"]

_wall = time.perf_counter
_cpu = time.process_time


def check_time_limit(value: float | None, name: str = "time_limit") -> float | None:
    """``value`` as a float of seconds ≥ 0, or None; a ValueError for anything else (NaN, ±inf, a bool)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative number of seconds or None, got {value!r}")
    return float(value)


class DeadlinePassed(Exception):
    """Raised by :meth:`Deadline.check` inside a stage that has no partial answer to return (an auxiliary problem
    whose unfinished iterate proves nothing): its caller returns what it held before the stage, with the limit
    reached (:meth:`Deadline.reached`) in its message."""


@dataclass
class Deadline:
    """A budget of ``time_limit`` wall seconds and/or ``cpu_time_limit`` CPU seconds from its start.

    Attributes
    ----------
    time_limit, cpu_time_limit : float or None
        Seconds of wall-clock time (:func:`time.perf_counter`) and of the process's CPU time
        (:func:`time.process_time`, all threads) the run may take; None: no limit on that clock.
    wall_start, cpu_start : float
        The clocks' readings at the start (default: when the deadline is made).
    """

    time_limit: float | None = None
    cpu_time_limit: float | None = None
    wall_start: float = field(default_factory=lambda: _wall())
    cpu_start: float = field(default_factory=lambda: _cpu())

    def __post_init__(self) -> None:
        self.time_limit = check_time_limit(self.time_limit, "time_limit")
        self.cpu_time_limit = check_time_limit(self.cpu_time_limit, "cpu_time_limit")

    @classmethod
    def of(cls, time_limit: float | None = None, cpu_time_limit: float | None = None,
           wall_start: float | None = None) -> Deadline | None:
        """The deadline of these limits from now (wall time from ``wall_start`` when given), or None when
        there is no limit (both None, after they are checked)."""
        time_limit = check_time_limit(time_limit, "time_limit")
        cpu_time_limit = check_time_limit(cpu_time_limit, "cpu_time_limit")
        if time_limit is None and cpu_time_limit is None:
            return None
        return cls(time_limit, cpu_time_limit, **({} if wall_start is None else {"wall_start": wall_start}))

    def passed(self) -> bool:
        """Whether either budget is spent."""
        return ((self.time_limit is not None and _wall() - self.wall_start > self.time_limit)
                or (self.cpu_time_limit is not None and _cpu() - self.cpu_start > self.cpu_time_limit))

    def check(self) -> None:
        """Raise :class:`DeadlinePassed` when either budget is spent: the check of a stage's inner loop, whose
        caller catches it."""
        if self.passed():
            raise DeadlinePassed(self.reached())

    def remaining(self) -> tuple[float | None, float | None]:
        """The wall and CPU seconds left (None for a clock without a limit, 0 once spent): the limits of a
        stage that runs on its own clock (a restricted solve of column generation)."""
        wall = None if self.time_limit is None else max(self.time_limit - (_wall() - self.wall_start), 0.0)
        cpu = None if self.cpu_time_limit is None else max(self.cpu_time_limit - (_cpu() - self.cpu_start), 0.0)
        return wall, cpu

    def share(self, fraction: float) -> Deadline:
        """The same start with ``fraction`` of each budget (e.g. the part of a run a first stage may take)."""
        return Deadline(None if self.time_limit is None else fraction * self.time_limit,
                        None if self.cpu_time_limit is None else fraction * self.cpu_time_limit,
                        self.wall_start, self.cpu_start)

    def reached(self) -> str:
        """What a result's message says when the deadline stopped the run: which limit was reached."""
        if self.cpu_time_limit is not None and _cpu() - self.cpu_start > self.cpu_time_limit:
            return f"CPU-time limit of {self.cpu_time_limit:g}s reached"
        return f"time limit of {self.time_limit:g}s reached"
