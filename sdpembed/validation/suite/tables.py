"""The text tables of the suite's build and run (what ``sdpembed suite build`` and ``suite run`` print)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..certify import Tolerances, format_against
from .build import BuildRecord
from .runner import RunRecord, summarize_run

__all__ = ["format_build_table", "format_run_table"]


def _fmt(value: float, spec: str = ".1e") -> str:
    return "-" if value is None or not np.isfinite(value) else format(value, spec)


def _graded(value: float, limit: float, signed: bool = False) -> str:
    """A graded quantity for the tables: digits enough to show on which side of ``limit`` it lies."""
    return "-" if value is None or not np.isfinite(value) else format_against(value, limit, 1, signed=signed)


def format_run_table(records: Sequence[RunRecord], tolerances: Tolerances | None = None) -> str:
    """The pass/fail table of :func:`~sdpembed.validation.suite.runner.run_suite`, with a summary line;
    ``proven gap`` is the relative gap to the bound proved from a solution's multipliers ("-" without).

    Parameters
    ----------
    records : sequence of RunRecord
    tolerances : Tolerances, optional
        Those the records were graded with (default: :class:`~sdpembed.validation.certify.Tolerances`):
        each graded value gets the digits it needs never to print as its tolerance when it fails.
    """
    tol = tolerances or Tolerances()
    width = max([len(r.name) for r in records] + [8])
    lines = [f"{'instance':<{width}}  {'result':<12} {'obj. error (signed)':>19} {'violation':>10} {'asym.':>10} "
             f"{'PSD viol.':>10} {'proven gap':>10} {'time s':>8}  reason"]
    for r in records:
        reason = "; ".join(line.splitlines()[0] for line in r.reasons if line.strip())
        lines.append(f"{r.name:<{width}}  {r.result.upper():<12} {_graded(r.objective_error, tol.objective, True):>19} "
                     f"{_graded(r.max_violation, tol.feasibility):>10} {_graded(r.asymmetry, tol.feasibility):>10} "
                     f"{_graded(r.psd_violation, tol.psd):>10} {_fmt(r.proven_gap):>10} {_fmt(r.wall_time, '.2f'):>8}  "
                     f"{reason[:140]}")
    lines.append(summarize_run(records).line())
    return "\n".join(lines)


def format_build_table(records: Sequence[BuildRecord]) -> str:
    """The table of :func:`~sdpembed.validation.suite.build.build_suite`: each case's certified optimum, gap,
    agreement and verdict."""
    width = max([len(r.name) for r in records] + [8])
    lines = [f"{'instance':<{width}}  {'optimum':>16} {'stored':>16} {'gap':>9} {'agreement':>9} {'time s':>7}  "
             "verdict"]
    for r in records:
        verdict = "OK" if r.ok else "FAIL: " + "; ".join(r.reasons)[:200]
        if r.ok and r.rejected:
            verdict += " (by " + ", ".join(f"{c['method']}/{c['solver']}" for c in r.certifiers) + "; " + ", ".join(
                f"{c['method']}/{c['solver']} ended {c['status']!r}" for c in r.rejected) + ")"
        lines.append(f"{r.name:<{width}}  {_fmt(r.optimum, '.10g'):>16} {_fmt(r.stored_optimum, '.10g'):>16} "
                     f"{_fmt(r.certified_gap):>9} {_fmt(r.agreement):>9} {r.wall_time:>7.2f}  {verdict}")
    ok = sum(r.ok for r in records)
    compared = any(np.isfinite(r.stored_optimum) for r in records)
    lines.append(f"{ok}/{len(records)} certified" + (" and in agreement with the stored suite" if compared else ""))
    return "\n".join(lines)
