"""Shared helpers of the MVU solver tests."""

from __future__ import annotations

import warnings

from sdpembed.results import SolveResult

from ...conftest import clarabel_or_scs


def certified_truth(instance) -> SolveResult:
    """CVXPY's certified optimum of a small MVU instance: Clarabel's, or SCS's where Clarabel ends short.

    Whether Clarabel reaches its own tolerances on these tiny, degenerate SDPs depends on the
    processor's floating-point path (on one machine it ends ``optimal_inaccurate`` on an instance it
    solves elsewhere), so the ground truth falls back to SCS at its default ε of 1e-8. Either
    answer is kept only when :func:`~sdpembed.formulations.mvu.solve_mvu_cvxpy` certifies it: a
    primal point within tolerance and a proved dual bound within ``gap_tol`` of it.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        truth = clarabel_or_scs(instance)
    assert truth.status == "optimal", truth.message
    return truth
