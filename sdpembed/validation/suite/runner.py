"""The grading of an external program on the suite's instances, through files.

:func:`run_suite` runs a program on every instance (``CMD {instance} {solution}``), each in its own
process session (:mod:`sdpembed.validation.suite.process`), grades each solution file with the
numpy-only verifier (:mod:`sdpembed.validation.verify`) and reports crashes, timeouts, skips (exit
code :data:`SKIP_EXIT_CODE`) and missing or malformed solutions per instance: every outcome is a
:class:`RunRecord`, never an aborted run.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._progress import progress_bar
from ...io import SKIP_EXIT_CODE, read_npz, solution_from_arrays
from ..certify import Tolerances
from ..verify import verify_solution
from .manifest import Suite, SuiteEntry, load_suite
from .process import Interrupts, command_argv, execute

__all__ = ["RESULTS", "SKIP_EXIT_CODE", "RunRecord", "RunSummary", "grade_solution", "run_suite", "summarize_run"]

#: Outcomes of grading one instance in :func:`run_suite`.
RESULTS = ("pass", "fail", "crash", "timeout", "no solution", "bad solution", "skip")



@dataclass
class RunRecord:
    """The grade of one instance in :func:`run_suite` (``result`` is one of :data:`RESULTS`).

    ``objective_error`` is signed, (f − f*) / max(|f*|, u_f) in the registry's sense (MVU maximises),
    and ``asymmetry`` is max |X − Xᵀ| / max(u_X, max |X|), u_f and u_X the instance's units
    (:class:`~sdpembed.validation.certify.Certificate`);
    ``violation_error`` is the proved bound on the error of ``max_violation`` of a NuMax-family instance
    (whose verdict on the violation is proved; NaN for the others).
    For a solution that carries dual multipliers, ``dual_bound`` is the bound the verifier proved from
    them and ``proven_gap`` the relative gap between the objective and it (NaN otherwise).
    """

    name: str
    problem: str
    group: str
    size: str
    result: str
    objective: float = float("nan")
    optimum: float = float("nan")
    objective_error: float = float("nan")
    max_violation: float = float("nan")
    psd_violation: float = float("nan")
    asymmetry: float = float("nan")
    violation_error: float = float("nan")
    wall_time: float = float("nan")
    dual_bound: float = float("nan")
    proven_gap: float = float("nan")
    returncode: int | None = None
    reasons: list[str] = field(default_factory=list)
    stderr_tail: str = ""

    @property
    def passed(self) -> bool:
        return self.result == "pass"

    @property
    def skipped(self) -> bool:
        return self.result == "skip"


@dataclass(frozen=True)
class RunSummary:
    """The counts of a run: ``graded`` excludes the instances the program skipped (exit code
    :data:`SKIP_EXIT_CODE`); the run succeeds (``ok``) when every graded instance passed and at least one
    was graded."""

    passed: int
    skipped: int
    total: int

    @property
    def graded(self) -> int:
        return self.total - self.skipped

    @property
    def ok(self) -> bool:
        return self.graded > 0 and self.passed == self.graded

    def line(self) -> str:
        """E.g. ``38/38 passed, 2 skipped (exit code 3: not handled)``."""
        text = f"{self.passed}/{self.graded} passed"
        if self.passed < self.graded:
            text += f", {self.graded - self.passed} did not"
        if self.skipped:
            text += f", {self.skipped} skipped (exit code {SKIP_EXIT_CODE}: not handled)"
        return text + ("" if self.graded else "; nothing was graded")


def summarize_run(records: Sequence[RunRecord]) -> RunSummary:
    """Count the passes and skips of :func:`run_suite`'s records."""
    return RunSummary(sum(r.passed for r in records), sum(r.skipped for r in records), len(records))


_REASON_CHARS = 200               # longest stderr line quoted in a reason
_TRACEBACK = "Traceback (most recent call last):"


def _tail(text: str, lines: int = 20, chars: int = 2000) -> str:
    tail = "\n".join(text.strip().splitlines()[-lines:])
    return tail[-chars:]


def _error_line(stderr: str) -> str:
    """The line of a program's stderr that says what went wrong: the exception line of the last Python
    traceback, else the last line with a letter or digit in it (not caret markers or blank lines)."""
    lines = stderr.splitlines()
    headers = [i for i, line in enumerate(lines) if line.rstrip() == _TRACEBACK]
    # after a traceback's header, the frames are indented; the exception starts at column 0
    after = lines[headers[-1] + 1:] if headers else []
    line = next((text for text in after if text.strip() and not text[0].isspace()), None)
    if line is None:
        line = next((text for text in reversed(lines) if any(c.isalnum() for c in text)), "")
    line = line.strip()
    return line if len(line) <= _REASON_CHARS else line[:_REASON_CHARS - 1] + "…"


def grade_solution(entry: SuiteEntry, solution: str | os.PathLike, tolerances: Tolerances,
                   instance: Any | None = None) -> RunRecord:
    """Grade the solution file of one suite instance (numpy only: the optimum is stored)."""
    record = RunRecord(entry.name, entry.problem, entry.group, entry.size, "fail", optimum=entry.optimum)
    path = Path(solution)
    if not path.is_file():
        record.result = "no solution"
        record.reasons.append(f"no solution file was written at {path}")
        return record
    instance = entry.load() if instance is None else instance
    try:
        submitted = solution_from_arrays(instance, read_npz(path, "solution"))
        cert = verify_solution(instance, submitted, tolerances=tolerances)
    except Exception as exc:             # nothing in a solution file may abort a run: corrupt zip, zlib, ...
        record.result = "bad solution"
        record.reasons.append(_bad_solution_reason(exc, path))
        return record
    record.result = "pass" if cert.passed else "fail"
    record.objective, record.objective_error = cert.objective, cert.objective_error
    record.max_violation, record.psd_violation = cert.max_violation, cert.psd_violation
    record.asymmetry, record.violation_error = cert.asymmetry, cert.violation_error
    if submitted.dual_multipliers is not None:        # a proof: the bound verify proved, and its gap
        record.dual_bound, record.proven_gap = cert.dual_bound, cert.relative_gap
    record.reasons.extend(cert.reasons)
    return record


def _bad_solution_reason(exc: Exception, path: Path) -> str:
    """One line: our own errors (ValueError) as they are, anything else with its type and the file."""
    text = str(exc) if isinstance(exc, ValueError) else \
        f"solution file {os.fspath(path)!r} cannot be read or graded: {type(exc).__name__}: {exc}"
    return " ".join(text.split())


def _remove(path: Path) -> None:
    """Remove what is at ``path`` (file, link or directory: whatever a program left there)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _not_graded(entry: SuiteEntry, state: str, code: int | None, stderr: str, timeout: float) -> RunRecord:
    """The record of a program that timed out, could not start, crashed or skipped the instance."""
    skipped = state == "done" and code == SKIP_EXIT_CODE
    result = "timeout" if state == "timeout" else "skip" if skipped else "crash"
    record = RunRecord(entry.name, entry.problem, entry.group, entry.size, result, optimum=entry.optimum)
    if state == "timeout":
        record.reasons.append(f"still running after {timeout:g} s: killed")
    elif state == "unstartable":
        record.reasons.append(stderr)
    else:
        words = [_exit_text(code)] + (["not handled"] if skipped else []) + [_error_line(stderr)]
        record.reasons.append(": ".join(word for word in words if word))
    return record


def _run_one(entry: SuiteEntry, command: str, solutions: Path, copies: Path, timeout: float,
             tolerances: Tolerances, interrupts: Interrupts) -> RunRecord:
    """Run the program on one instance and grade it. The program reads a private copy of the instance
    file, so that no program (one that swaps its arguments, say) can damage the suite."""
    instance = entry.load()                           # checks the file before the program reads it
    copy = copies / entry.path.name
    _remove(copy)
    shutil.copyfile(entry.path, copy)
    solution = (solutions / f"{entry.name}.solution.npz").resolve()
    _remove(solution)
    argv = command_argv(command, copy.resolve(), solution)
    state, code, stderr, seconds = execute(argv, timeout, interrupts)
    if state == "done" and code == 0:
        record = grade_solution(entry, solution, tolerances, instance)
    else:
        record = _not_graded(entry, state, code, stderr, timeout)
    record.returncode, record.wall_time = code, seconds
    record.stderr_tail = "" if state == "unstartable" else _tail(stderr)
    return record


def run_suite(
    command: str,
    *,
    suite: Suite | None = None,
    entries: Iterable[SuiteEntry] | None = None,
    timeout: float = 600.0,
    workdir: str | os.PathLike | None = None,
    tolerances: Tolerances | None = None,
    progress: Callable[[RunRecord], None] | None = None,
    bar: bool | None = False,
) -> list[RunRecord]:
    """Run ``command`` on every instance and grade the solution files it writes.

    Parameters
    ----------
    command : str
        The program, with placeholders ``{instance}`` (the instance ``.npz`` to read: a private copy
        of the suite's file) and ``{solution}`` (the solution ``.npz`` to write); see
        :func:`command_argv`. It exits with status 0 after writing the solution, or with
        :data:`SKIP_EXIT_CODE` when it does not handle the instance.
    suite : Suite, optional
        Default: the shipped suite.
    entries : iterable of SuiteEntry, optional
        The instances to run (default: all of ``suite``; see :meth:`Suite.select`).
    timeout : float
        Seconds per instance; a program still running then is killed and graded ``timeout``.
    workdir : path, optional
        Where solution files are written (and kept); a temporary directory by default.
    tolerances : Tolerances, optional
        Default: the suite's.
    progress : callable, optional
        Called with each :class:`RunRecord` as soon as it is graded.
    bar : bool or None
        A progress bar over the instances with the time left, on stderr: True always, None
        when stderr is a terminal, False never.

    Returns
    -------
    list of RunRecord
        One per instance. Crashes (non-zero exit, with the line of stderr that says what went wrong),
        skips, timeouts, missing and malformed solution files are recorded per instance; nothing the
        program does aborts the run. Each program runs in its own process session, and its process
        group is killed when the program ends, times out or the run is interrupted: no child it
        started outlives it unless it left the group.

    Raises
    ------
    SuiteInterrupted
        On SIGINT, SIGTERM or SIGHUP (when called from the main thread), after killing the program
        being graded; it carries the records graded before.
    ValueError
        If the command or the timeout is malformed, or a suite file does not match its manifest.
    """
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    suite = suite or load_suite()
    entries = list(suite.entries if entries is None else entries)
    tolerances = tolerances or suite.tolerances
    command_argv(command, "instance.npz", "solution.npz")                 # fail early on a bad command
    records: list[RunRecord] = []
    with (Interrupts(records) as interrupts, tempfile.TemporaryDirectory(prefix="sdpembed-suite-") as scratch,
          progress_bar(len(entries), "suite run", enabled=bar, unit="instances") as shown):
        solutions = Path(workdir) if workdir is not None else Path(scratch) / "solutions"
        copies = Path(scratch) / "instances"
        for directory in (solutions, copies):
            directory.mkdir(parents=True, exist_ok=True)
        for entry in entries:
            records.append(_run_one(entry, command, solutions, copies, timeout, tolerances, interrupts))
            shown.update(1)
            if progress is not None:
                progress(records[-1])
    return records
