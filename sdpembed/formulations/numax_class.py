"""The NuMax-Class SDP (7), equivalently (15), in CVXPY — the ground truth of NuMax-Class. ::

    minimise    ‖P‖_* = tr P                                   (7)
    subject to  v_iᵀ P v_i ≥ 1 − δ   for every inter-class secant v_i
                u_iᵀ P u_i ≤ 1 + δ   for every intra-class secant u_i
                P ⪰ 0

Stacking the constraints with 𝒜_c(P) = (…, −v_iᵀPv_i, …, u_iᵀPu_i, …) and
b_c = (…, −(1 − δ), …, 1 + δ, …) of (14) gives the form (15): 𝒜_c(P) ≤ b_c, P ⪰ 0.
:func:`numax_class_problem` states (7) and :func:`numax_class_problem_15` states (15); the
solve goes through the shared trace-minimisation model of :mod:`sdpembed.formulations.numax`
with one-sided bounds (lo = 1 − δ, hi = ∞ for inter; lo = −∞, hi = 1 + δ for intra), which
is (7) constraint for constraint and gives the certified dual bound and the span reduction.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the SDP (7) and its form (15) with (14).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..results import SolveResult
from .numax import MAX_SECANTS, check_ground_truth_size, solve_box_trace_cvxpy

__all__ = ["numax_class_problem", "numax_class_problem_15", "solve_numax_class_cvxpy"]


def numax_class_problem(inter: np.ndarray, intra: np.ndarray, delta: float):
    """The SDP (7) as written in the paper; returns (problem, P)."""
    N = inter.shape[1]
    P = cp.Variable((N, N), PSD=True, name="P")
    inter_norms = cp.sum(cp.multiply(inter @ P, inter), axis=1)      # v_iᵀ P v_i
    intra_norms = cp.sum(cp.multiply(intra @ P, intra), axis=1)      # u_iᵀ P u_i
    constraints = [inter_norms >= 1 - delta, intra_norms <= 1 + delta]
    return cp.Problem(cp.Minimize(cp.trace(P)), constraints), P


def numax_class_problem_15(inter: np.ndarray, intra: np.ndarray, delta: float):
    """The same SDP in the form (15): 𝒜_c(P) ≤ b_c with 𝒜_c, b_c of (14); returns (problem, P)."""
    N = inter.shape[1]
    P = cp.Variable((N, N), PSD=True, name="P")
    A_c = cp.hstack([
        -cp.sum(cp.multiply(inter @ P, inter), axis=1),
        cp.sum(cp.multiply(intra @ P, intra), axis=1),
    ])
    b_c = np.concatenate([np.full(len(inter), -(1 - delta)), np.full(len(intra), 1 + delta)])
    return cp.Problem(cp.Minimize(cp.trace(P)), [A_c <= b_c]), P


def solve_numax_class_cvxpy(
    instance, *, solver: str = "CLARABEL", verbose: bool = False, max_secants: int = MAX_SECANTS, **options
) -> SolveResult:
    """Solve a :class:`~sdpembed.problems.NuMaxClassInstance` (7) with CVXPY and certify it.

    ``options`` are those of :func:`~sdpembed.formulations.numax.solve_box_trace_cvxpy`;
    more than ``max_secants`` secants are refused (:class:`~sdpembed.results.GroundTruthTooLarge`).
    """
    check_ground_truth_size(instance, max_secants)
    V = instance.secant_matrix
    lo, hi = instance.bounds()
    return solve_box_trace_cvxpy(V, lo, hi, problem_name=instance.problem, solver=solver, verbose=verbose, **options)
