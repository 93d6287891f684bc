"""Checking a solution file with numpy alone — the verifier of ``sdpembed verify`` and of the reference suite.

When the optimum f* is known — stored in the instance file (``optimum``, as in every instance of
the reference suite), given by the caller, or bracketed by multipliers the solution carries
(``dual_pairs``/``dual_y`` of column generation, or the arrays of the problem's
:class:`~sdpembed.registry.DualProof`, e.g. ``dual_y`` of MVU) — nothing is solved: the objective, the worst
constraint violation and the spectrum of the solution are computed with numpy and held to
:class:`~sdpembed.validation.certify.Tolerances` (:func:`~sdpembed.validation.certify.certify`
without a ground truth). This module imports no CVXPY, and neither does anything it imports (the
registry loads formulations and solvers only when a solve asks for them), so solutions can be
checked where CVXPY is not installed. Only when f* is unknown and ``ground_truth`` names a CVXPY
back-end is f* computed (and CVXPY imported then). Solution files are read by
:func:`sdpembed.io.read_solution`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..io import Solution
from .certify import Certificate, Tolerances, certify

__all__ = ["verify_solution"]


def verify_solution(
    instance: Any,
    solution: Solution | np.ndarray,
    *,
    optimum: float | None = None,
    tolerances: Tolerances | None = None,
    ground_truth: str | None = None,
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
        When f* is neither given nor stored and the solution carries no proof (the multipliers of
        the problem's :class:`~sdpembed.registry.DualProof`), compute it with this CVXPY back-end.
        Without it, an unknown f* fails the check (unless multipliers bracket it), and CVXPY is
        never imported.

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
    cert = certify(
        instance,
        solution.matrix,
        optimum=optimum,
        # a proof brackets f* by itself: no CVXPY run for a solution that carries one
        ground_truth=ground_truth is not None and not known and solution.proof is None,
        solver=ground_truth or "CLARABEL",
        dual_bound=solution.dual_bound,
        tolerances=tolerances,
        dual_multipliers=solution.dual_multipliers,
        proof=solution.proof,
    )
    if not known and ground_truth is None and solution.dual_multipliers is None and solution.proof is None:
        cert.reasons.append("the optimum is unknown (neither stored in the instance nor given) and no verifiable "
                            "dual multipliers were given: the objective could not be checked")
        cert.passed = False
    return cert
