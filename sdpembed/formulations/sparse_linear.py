"""Problem (6) of the sparse-linear-model projection (Gkioulekas & Zickler) in CVXPY — the
ground truth of the closed form (7)–(8) in :mod:`sdpembed.linear.sparse_linear_model`.

At M = N the rank constraint is void and (6) is a convex quadratic programme over the PSD cone:

    minimise    4τ⁴ ‖DᵀSD − I_K‖²_F + 4τ²σ² ‖SD‖²_F + σ⁴ ‖S‖²_F                      (6)
    subject to  S ⪰ 0                                                   (S = LᵀL)

stated here literally, with the PSD constraint as its own constraint so that its dual Z ⪰ 0
can certify the answer.

**Certificate.** The dual function of (6) is explicit for any Z ⪰ 0; it is evaluated at CVXPY's Z
(projected onto the PSD cone) and at Z = 0 by :func:`sdpembed.problems.sparse_linear.sparse_linear_dual_bound`
(derived in :mod:`sdpembed.problems.sparse_linear`).

References
----------
.. [1] I. Gkioulekas and T. Zickler, "Dimensionality reduction using the sparse linear model",
   Advances in Neural Information Processing Systems 24 (NIPS), 2011. Implemented here: problem (6)
   and its closed form (7)–(8).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import cvxpy as cp
import numpy as np

from .._validate import as_matrix
from ..problems.sparse_linear import check_sigma_tau, sparse_linear_dual_bound, sparse_linear_objective
from ..results import SolveResult, build_result, relative_gap
from ._cvxpy import SOLVERS, check_solver, judge_optimal, no_solution, solve_model

__all__ = ["SparseLinearModel", "sparse_linear_problem", "solve_sparse_linear_cvxpy", "SOLVERS"]

#: Settings used unless overridden: the comparison with the closed form is made at 1e-6, so
#: Clarabel is asked for 1e-10 and SCS for 1e-9.
DEFAULT_OPTIONS = {
    "CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10},
    "SCS": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000},
}


class SparseLinearModel(NamedTuple):
    """The CVXPY model of (6) at M = N."""

    problem: cp.Problem
    S: cp.Variable
    """The symmetric N × N variable S = LᵀL."""
    psd: cp.Constraint
    """S ⪰ 0, whose dual value is Z."""


def sparse_linear_problem(D: np.ndarray, *, sigma: float, tau: float) -> SparseLinearModel:
    """Build (6) over S ⪰ 0 for the dictionary ``D`` (N × K, atoms as columns)."""
    D = as_matrix(D, "D")
    sigma, tau = check_sigma_tau(sigma, tau)
    N, K = D.shape
    S = cp.Variable((N, N), symmetric=True, name="S")
    psd = S >> 0
    objective = (4 * tau**4 * cp.sum_squares(D.T @ S @ D - np.eye(K))      # 4τ⁴ ‖DᵀSD − I‖²
                 + 4 * tau**2 * sigma**2 * cp.sum_squares(S @ D)           # 4τ²σ² ‖SD‖²
                 + sigma**4 * cp.sum_squares(S))                            # σ⁴ ‖S‖²
    return SparseLinearModel(cp.Problem(cp.Minimize(objective), [psd]), S, psd)


def solve_sparse_linear_cvxpy(
    D: np.ndarray,
    *,
    sigma: float,
    tau: float,
    solver: str = "CLARABEL",
    gap_tol: float = 1e-6,
    verbose: bool = False,
    **solver_options,
) -> SolveResult:
    """Solve (6) at M = N with CVXPY and certify it.

    Parameters
    ----------
    D : ndarray of shape (N, K)
        Dictionary, atoms as columns.
    sigma, tau : float
        σ ≥ 0, τ > 0 of the model (1)–(2).
    solver : {"CLARABEL", "SCS"}
    gap_tol : float
        CVXPY's ``optimal`` is kept only if the certified relative gap is within it.
    verbose : bool
    **solver_options
        Passed to ``Problem.solve`` over :data:`DEFAULT_OPTIONS`.

    Returns
    -------
    SolveResult
        ``problem="sparse_linear"``, ``variable="S"``; the objective is (6) recomputed in
        numpy at the returned S, the dual bound that of :func:`sparse_linear_dual_bound`.
    """
    solver = check_solver(solver)
    start = time.perf_counter()
    D = as_matrix(D, "D")
    sigma, tau = check_sigma_tau(sigma, tau)
    N = D.shape[0]
    model = sparse_linear_problem(D, sigma=sigma, tau=tau)
    solved = solve_model(model.problem, model.S, solver, DEFAULT_OPTIONS, solver_options, verbose)
    if solved.matrix is None:
        return no_solution("sparse_linear", "S", (N, N), solved.status, solved.message, solver, start)
    S = solved.matrix
    objective = sparse_linear_objective(S, D, sigma=sigma, tau=tau)
    Z = None if model.psd.dual_value is None else np.asarray(model.psd.dual_value, dtype=np.float64)
    bound = sparse_linear_dual_bound(D, Z, sigma=sigma, tau=tau)
    min_eig = float(np.linalg.eigvalsh(S)[0])
    rgap = relative_gap(objective, bound)
    status, message = judge_optimal(solved.status, solved.message, relative_gap=rgap, gap_tol=gap_tol,
                                    violation=max(-min_eig, 0.0), feas_tol=1e-7)
    return build_result(
        "sparse_linear", "S", S, objective, bound, status=status, message=message, method="cvxpy", solver=solver,
        max_violation=max(-min_eig, 0.0), min_eigenvalue=min_eig, iterations=solved.iterations,
        start=start, extra={"cvxpy_status": solved.cvxpy_status},
    )
