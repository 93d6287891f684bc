"""A graded program in its own process session: started, waited for, killed with its whole process group.

:func:`execute` runs one program of :func:`~sdpembed.validation.suite.runner.run_suite`. Whatever the
program does or leaves running, no process of it outlives its instance: its process group is killed
when it ends, times out, or the run is interrupted (:class:`Interrupts`, :class:`SuiteInterrupted`).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any

__all__ = ["Interrupts", "SuiteInterrupted", "command_argv", "execute"]

_STDERR_KEPT = 64 * 1024          # bytes of a program's stderr read back (the rest stays on disk until the end)
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class SuiteInterrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP ended :func:`~sdpembed.validation.suite.runner.run_suite`; the program being
    graded was killed with its process group.

    Attributes
    ----------
    signum : int
        The signal.
    records : list of ~sdpembed.validation.suite.runner.RunRecord
        The instances graded before it.
    """

    def __init__(self, signum: int, records: list[Any]) -> None:
        super().__init__(signum)
        self.signum = signum
        self.records = records

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by the signal: 128 + its number."""
        return 128 + self.signum


def command_argv(command: str, instance: str | os.PathLike, solution: str | os.PathLike) -> list[str]:
    """The argument list of ``command`` for one instance: split like a shell would
    (:func:`shlex.split`, no shell run), then ``{instance}`` and ``{solution}`` replaced by the paths
    in every argument — so a path with spaces or quotes stays one argument, also where the
    placeholder sits inside a quoted argument (e.g. ``"f('{instance}')"``).

    Raises
    ------
    ValueError
        If the command lacks either placeholder or does not split (unbalanced quotes).
    """
    missing = [key for key in ("{instance}", "{solution}") if key not in command]
    if missing:
        raise ValueError(f"--command must contain the placeholders {{instance}} and {{solution}}, missing "
                         f"{' and '.join(missing)}: e.g. \"python -m sdpembed solve {{instance}} --out {{solution}}\"")
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ValueError(f"--command cannot be split into arguments: {exc}") from None
    if not words:
        raise ValueError("--command is empty")
    paths = {"{instance}": os.fspath(instance), "{solution}": os.fspath(solution)}
    # one pass, so a path that itself contains a placeholder's text is left as it is
    return [re.sub(r"\{instance\}|\{solution\}", lambda match: paths[match.group(0)], word) for word in words]


class Interrupts:
    """While a run is on (in the main thread), SIGINT, SIGTERM and SIGHUP raise :class:`SuiteInterrupted`.

    Between :meth:`hold` and :meth:`release` (while a program is being started) a signal is kept and raised by
    :meth:`release`, so a started program is always known and can be killed; once one has been raised, later
    signals are ignored so that the kill finishes. Signals that were ignored (``SIG_IGN``) stay ignored; the
    previous handlers come back at the end, and a signal kept but never raised is delivered to them then.
    """

    def __init__(self, records: list[Any]) -> None:
        self.records = records
        self.pending: int | None = None
        self.holding = False
        self.raised = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            for signum in _SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.holding = True
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        if self.pending is not None and not self.raised:
            signal.raise_signal(self.pending)

    def _handle(self, signum: int, frame: object) -> None:
        if self.raised:
            return
        if self.pending is None:
            self.pending = signum
        if not self.holding:
            self._raise()

    def _raise(self) -> None:
        signum, self.pending, self.raised, self.holding = self.pending, None, True, True
        raise SuiteInterrupted(signum, self.records)

    def hold(self) -> None:
        self.holding = True

    def release(self) -> None:
        self.holding = False
        if self.pending is not None and not self.raised:
            self._raise()


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the program's process group: the program and every child it started that stayed in it (the
    program alone where there are no process groups). The one kill path of timeouts, interrupts, and what
    a finished program left running."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            proc.kill()
    except (ProcessLookupError, PermissionError):      # the group is gone already
        pass


def _read_tail(file: Any) -> str:
    """The last :data:`_STDERR_KEPT` bytes of ``file``, decoded."""
    file.seek(0, os.SEEK_END)
    file.seek(max(0, file.tell() - _STDERR_KEPT))
    return file.read().decode("utf-8", errors="replace")


def execute(argv: list[str], timeout: float,
             interrupts: Interrupts | None = None) -> tuple[str, int | None, str, float]:
    """Run ``argv`` in its own process session; returns (state, return code, stderr, seconds), state one of
    ``done``, ``timeout``, ``unstartable``.

    Its stderr goes to a temporary file, so a child that keeps it open cannot hold the run and a flood of
    output cannot fill the memory. When the program ends, times out, or an exception (an interrupt) ends
    the wait, its process group is killed — children it spawned included, and only that group — and the
    program is reaped.
    """
    interrupts = interrupts or Interrupts([])
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        interrupts.hold()                 # a signal while the program starts waits until it can be killed
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                    start_new_session=True)
        except (OSError, ValueError) as exc:
            interrupts.release()
            return "unstartable", None, f"cannot start {argv[0]!r}: {exc}", time.perf_counter() - start
        state = "done"
        try:
            interrupts.release()
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            state = "timeout"
        finally:
            _kill_group(proc)
            proc.wait()
        return state, proc.returncode, _read_tail(err), time.perf_counter() - start


