"""Checking a solution file with numpy alone — the verifier of ``sdpembed verify`` and of the reference suite.

When the optimum f* is known — stored in the instance file (``optimum``, as in every instance of
the reference suite), given by the caller, or bracketed by multipliers the solution carries
(the problem's ``dual_arrays``, e.g. ``dual_pairs``/``dual_y`` of NuMax, from which the bound is
proved here, never read from the file) — nothing is solved: the objective, the worst
constraint violation and the spectrum of the solution are computed with numpy and held to
:class:`~sdpembed.validation.certify.Tolerances` (:func:`~sdpembed.validation.certify.certify`
without a ground truth). This module imports no CVXPY, and neither does anything it imports (the
registry loads formulations and solvers only when a solve asks for them), so solutions can be
checked where CVXPY is not installed. Only when f* is unknown, the solution carries no
multipliers and ``ground_truth`` names a CVXPY back-end is f* computed (and CVXPY imported
then). Solution files are read by :func:`sdpembed.io.read_solution`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..io import Solution
from .certify import Certificate, Tolerances, certify

__all__ = ["verify_solution"]

UNCHECKED = ("the optimum is unknown (neither stored in the instance nor given) and no verifiable dual multipliers "
             "were given: the objective could not be checked")


def verify_solution(
    instance: Any,
    solution: Solution | np.ndarray,
    *,
    optimum: float | None = None,
    tolerances: Tolerances | None = None,
    ground_truth: str | None = None,
    note: Callable[[str], object] | None = None,
    progress: bool | None = False,
    scan_backend: Any = None,
) -> Certificate:
    """Check a solution of a registered problem against its optimum, with numpy alone when f* is known.

    Parameters
    ----------
    instance
        A registered instance; its stored ``optimum`` is used when ``optimum`` is not given.
    solution : Solution or ndarray
        The solution (the matrix alone, or with a claimed bound and multipliers).
    optimum : float, optional
        A known optimal value (in the registry's sense: MVU maximises).
    tolerances : Tolerances, optional
        What "pass" means (default: :class:`~sdpembed.validation.certify.Tolerances`).
    ground_truth : {"CLARABEL", "SCS"}, optional
        When f* is neither given nor stored and the solution carries no multipliers, compute it
        with this CVXPY back-end. Without it, an unknown f* fails the check (unless multipliers
        bracket it); a solution with multipliers is judged by the bound proved from them alone, so
        CVXPY is never imported for it.
    note : callable, optional
        Told, before the constraints are scanned, when the objective cannot be checked.
    progress : bool or None
        The progress bar of a point-form instance's scan
        (:func:`~sdpembed.validation.certify.certify`).
    scan_backend : ScanBackend, optional
        Where that scan runs, e.g. on a Dask cluster
        (:class:`~sdpembed.solvers.numax.scan_backend.DaskScan`); the verdict is the same.

    Returns
    -------
    Certificate
        ``objective_error`` (signed), ``max_violation``, ``asymmetry`` and ``psd_violation`` are the
        graded quantities; ``reasons`` lists every failed check.

    Raises
    ------
    ValueError
        If the matrix is not a finite real matrix of the instance's shape (complex, string,
        boolean and object arrays are refused, never cast) or the claimed bound is not finite.
    """
    if not isinstance(solution, Solution):
        solution = Solution(solution)
    known = optimum is not None or getattr(instance, "optimum", None) is not None
    proof = solution.dual_multipliers is not None
    unchecked = not known and ground_truth is None and not proof
    if unchecked and note is not None:
        note(UNCHECKED)
    cert = certify(
        instance,
        solution.matrix,
        optimum=optimum,
        ground_truth=ground_truth is not None and not known and not proof,
        solver=ground_truth or "CLARABEL",
        dual_bound=solution.dual_bound,
        tolerances=tolerances,
        dual_multipliers=solution.dual_multipliers,
        note=note,
        progress=progress,
        scan_backend=scan_backend,
    )
    if unchecked:
        cert.reasons.append(UNCHECKED)
        cert.passed = False
    return cert
