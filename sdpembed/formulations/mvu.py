"""The MVU SDPs (Weinberger thesis, Sec. 3.1) in CVXPY — the ground truth of
:mod:`sdpembed.solvers.mvu.ipm` — and the variational SDP over Z of Sec. 3.1.8.

Full SDP, stated literally for every variant of :class:`~sdpembed.problems.MVUInstance`
(𝒜(K)_e = K_ii + K_jj − 2K_ij, (3.13)):

    equality    maximise tr K                          s.t. 𝒜(K) = D,  ΣK_ij = 0 (3.14),  K ⪰ 0 (3.15)
    inequality  maximise tr K                          s.t. 𝒜(K) ≤ D,  ΣK_ij = 0,  K ⪰ 0         (Sec. 3.1.6)
    slack       maximise (1 − ω) tr K − ω Σ_e |ξ_e|     s.t. 𝒜(K) = D + ξ, ΣK_ij = 0, K ⪰ 0      (Sec. 3.1.6)
    min_trace   maximise −tr K                         s.t. 𝒜(K) = D,  ΣK_ij = 0,  K ⪰ 0         (Sec. 3.1.11)

(min_trace minimises tr K; it is stated as max −tr K so that every variant is a maximisation
and the dual bound is an upper bound, see the instance's docstring.)

The certificate: the dual values of the edge constraints are handed to
:func:`sdpembed.problems.mvu.dual_bound`, which makes them dual feasible and returns an
upper bound — the same code that certifies the hand-written solver. CVXPY's ``optimal`` is
kept only when that bound is within ``gap_tol`` of the objective and the constraints hold to
``feas_tol`` (relative to τ = max D, (3.11)); otherwise the status is ``inaccurate``. A rigid
neighbourhood graph "locks up" the equality SDP (Sec. 3.1.12): its feasible set has no
interior point, interior-point solvers then stall or return inaccurate answers, and the
message says so.

Variational SDP (Sec. 3.1.8). With Q ∈ Rⁿˣᵐ the m bottom non-constant eigenvectors of the graph
Laplacian (3.24) and K ≈ QZQᵀ (3.25), tr K = tr Z and the centering holds automatically, and
the slack constraints (3.22) are collapsed into a single second-order-cone constraint (3.23):

    maximise (1 − ω) tr Z − ω ξ   s.t.   Z ⪰ 0,   Σ_e (𝒜(QZQᵀ)_e − D_e)² ≤ ξ,

as the SDP is listed after (3.23) and as the refinement objective that follows it (squared
violations). The constraint ‖r‖² ≤ ξ is the rotated cone ‖(2r, ξ − 1)‖ ≤ ξ + 1. (With
(3.23)'s ξ² = Σ r², i.e. ξ ≥ ‖r‖₂, the problem is unbounded unless ω/(1 − ω) exceeds a
graph-dependent constant, since both terms then grow linearly in Z; the squared version is
bounded for every ω. Because the two terms have different units, ω must be close to 1 — the
thesis' advice; the solvers work at τ = max D = 1.)
𝒜(QZQᵀ)_e = b_eᵀ Z b_e with b_e = q_i − q_j (rows of Q), linear in the upper triangle of Z;
the residual's norm is compressed through a thin QR of [M, D] (M: E × m(m+1)/2), so the model
has m(m+1)/2 + 1 scalar variables whatever the number of edges.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the MVU SDP (3.11)–(3.15) of Sec. 3.1.4, its relaxations
   of Sec. 3.1.6, the minimum-trace variant of Sec. 3.1.11 and the variational SDP (3.22)–(3.25) of
   Sec. 3.1.8.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import cvxpy as cp
import numpy as np

from .._validate import as_matrix, as_vector
from ..problems.mvu import dual_bound, variational_compression
from ..results import GroundTruthTooLarge, SolveResult, build_result, relative_gap
from ._cvxpy import SOLVERS, check_solver, judge_optimal, no_solution, solve_model

__all__ = [
    "MAX_POINTS",
    "MVUModel",
    "SOLVERS",
    "VariationalModel",
    "mvu_problem",
    "solve_mvu_cvxpy",
    "solve_variational_sdp",
    "variational_problem",
]


#: Most points the CVXPY ground truth accepts: interior-point work on an n×n cone grows steeply
#: with n, and at a few hundred points neither SCS nor Clarabel reaches an accurate answer in minutes
#: (BENCHMARKS.md, "MVU", exact MVU vs CVXPY).
MAX_POINTS = 250

#: Settings used unless overridden. SCS at its defaults (1e-4) is not a useful cross-check.
DEFAULT_OPTIONS = {
    "CLARABEL": {},
    "SCS": {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 200_000},
}

_LOCK_HINT = (
    "; an equality MVU whose neighbourhood graph is rigid 'locks up' (Sec. 3.1.12): the SDP then has no "
    "interior point and interior-point solvers stall — try fewer neighbours or the inequality/slack variant"
)


class MVUModel(NamedTuple):
    """The CVXPY model of the full MVU SDP."""

    problem: cp.Problem
    K: cp.Variable
    """The n × n PSD inner-product matrix (3.15)."""
    edges: cp.Constraint
    """The edge constraints (3.13) (=, ≤ or = D + ξ)."""
    centering: cp.Constraint
    """ΣK_ij = 0 (3.14)."""


def mvu_problem(instance) -> MVUModel:
    """The SDP of the instance's variant, stated literally (module docstring)."""
    n = instance.n
    i, j = instance.edges[:, 0], instance.edges[:, 1]
    D = np.asarray(instance.sqdist)
    K = cp.Variable((n, n), PSD=True, name="K")                     # (3.15)
    diag = cp.diag(K)
    edge_values = diag[i] + diag[j] - 2 * K[i, j]                     # K_ii + K_jj − 2K_ij  (3.13)
    centering = cp.sum(K) == 0                                        # (3.14)
    if instance.variant == "inequality":
        edges = edge_values <= D
        objective = cp.Maximize(cp.trace(K))
    elif instance.variant == "slack":
        xi = cp.Variable(D.shape[0], name="xi")
        edges = edge_values == D + xi
        objective = cp.Maximize((1 - instance.omega) * cp.trace(K) - instance.omega * cp.sum(cp.abs(xi)))
    elif instance.variant == "min_trace":
        edges = edge_values == D
        objective = cp.Maximize(-cp.trace(K))                         # min tr K, Sec. 3.1.11
    else:
        edges = edge_values == D
        objective = cp.Maximize(cp.trace(K))                          # (3.19)
    return MVUModel(cp.Problem(objective, [edges, centering]), K, edges, centering)


def solve_mvu_cvxpy(
    instance,
    solver: str = "CLARABEL",
    *,
    feas_tol: float = 1e-5,
    gap_tol: float = 1e-4,
    max_points: int = MAX_POINTS,
    verbose: bool = False,
    **solver_options,
) -> SolveResult:
    """Solve an :class:`~sdpembed.problems.MVUInstance` with CVXPY and certify the answer.

    Parameters
    ----------
    instance : MVUInstance
    solver : {"CLARABEL", "SCS"}
    feas_tol, gap_tol : float
        CVXPY's ``optimal`` is kept only if our check agrees: violation (relative to τ) at
        most ``feas_tol`` and certified relative gap at most ``gap_tol``.
    max_points : int
        Refuse larger instances with :class:`~sdpembed.results.GroundTruthTooLarge`.
    verbose : bool
        Passed to CVXPY.
    **solver_options
        Passed to ``Problem.solve`` over :data:`DEFAULT_OPTIONS`.

    Returns
    -------
    SolveResult
        ``optimal_inaccurate`` becomes ``inaccurate``; a solver failure is ``error``. The dual
        bound (an upper bound) comes from CVXPY's dual values through
        :func:`~sdpembed.problems.mvu.dual_bound`; ``extra["y"]`` holds the
        dual-feasible multipliers.
    """
    solver = check_solver(solver)
    if instance.n > max_points:
        raise GroundTruthTooLarge(
            f"the instance has {instance.n} points, more than the {max_points} a generic SDP solver is asked to "
            "handle (max_points); use the interior-point solver (method 'ipm', which certifies its gap)"
        )
    start = time.perf_counter()
    model = mvu_problem(instance)
    hint = _LOCK_HINT if instance.variant in ("equality", "min_trace") else ""
    solved = solve_model(model.problem, model.K, solver, DEFAULT_OPTIONS, solver_options, verbose)
    if solved.matrix is None:
        return no_solution(instance.problem, instance.variable, (instance.n,) * 2, solved.status,
                           solved.message + hint, solver, start)
    K = solved.matrix
    # CVXPY's dual of `expr == D` (or `expr <= D`) in a maximisation is the multiplier y with
    # L(y) ⪰ cI at the optimum, the sign convention of dual_bound.
    dual = model.edges.dual_value
    y = np.zeros(instance.n_constraints) if dual is None else np.asarray(dual, dtype=np.float64).ravel()
    bound, y_feasible = dual_bound(instance, y)
    objective = instance.objective(K)
    violation = float(instance.max_violation(K))
    rgap = relative_gap(bound, objective)
    status, message = judge_optimal(solved.status, solved.message, relative_gap=rgap, gap_tol=gap_tol,
                                    violation=violation, feas_tol=feas_tol)
    if status != "optimal":
        message += hint
    return build_result(
        instance.problem, instance.variable, K, objective, bound, sense="max", status=status, message=message,
        method="cvxpy", solver=solver, max_violation=violation, iterations=solved.iterations,
        start=start, extra={"y": y_feasible, "cvxpy_status": solved.cvxpy_status},
    )


# --------------------------------------------------------------------------- variational
class VariationalModel(NamedTuple):
    """The CVXPY model of the variational SDP of Sec. 3.1.8."""

    problem: cp.Problem
    Z: cp.Variable
    """The m × m PSD matrix of (3.25)."""
    xi: cp.Variable
    """ξ ≥ ‖𝒜(QZQᵀ) − D‖₂², the collapsed slack of (3.23)."""


def variational_problem(Q: np.ndarray, edges: np.ndarray, sqdist: np.ndarray, omega: float) -> VariationalModel:
    """The variational SDP over Z (module docstring, (3.23)–(3.25)).

    Parameters
    ----------
    Q : ndarray of shape (n, m)
        Basis (columns orthonormal and orthogonal to 1: bottom Laplacian eigenvectors).
    edges : ndarray of shape (E, 2)
    sqdist : ndarray of shape (E,)
    omega : float
        ω ∈ (0, 1).
    """
    Q = as_matrix(Q, "Q")
    D = as_vector(sqdist, "sqdist", length=edges.shape[0])
    if not 0.0 < omega < 1.0:
        raise ValueError(f"omega must lie in (0, 1), got {omega!r}")
    m = Q.shape[1]
    a, b = np.triu_indices(m)
    p = a.size
    R = variational_compression(Q, edges, D)       # ‖Mz − D‖² = ‖R₁z − c‖² + ρ², E rows → p + 1
    R1, c, rho = R[:p, :p], R[:p, p], R[p, p]
    Z = cp.Variable((m, m), PSD=True, name="Z")
    xi = cp.Variable(name="xi")
    z = cp.vec(Z, order="F")[a + b * m]                               # the m(m+1)/2 upper entries
    residual = cp.hstack([2 * (R1 @ z - c), np.array([2 * rho]), cp.reshape(xi - 1, (1,), order="F")])
    constraints = [cp.SOC(xi + 1, residual)]                       # ‖r‖² ≤ ξ  ⇔  ‖(2r, ξ − 1)‖ ≤ ξ + 1
    problem = cp.Problem(cp.Maximize((1 - omega) * cp.trace(Z) - omega * xi), constraints)
    return VariationalModel(problem, Z, xi)


def solve_variational_sdp(
    Q: np.ndarray, edges: np.ndarray, sqdist: np.ndarray, omega: float, *, solver: str = "CLARABEL",
    verbose: bool = False,
) -> tuple[np.ndarray, str]:
    """Solve :func:`variational_problem`; returns Z (m × m, PSD-projected) and CVXPY's status.

    Raises
    ------
    RuntimeError
        When the solver returns no solution (the caller decides what to do).
    """
    model = variational_problem(Q, edges, sqdist, omega)
    try:
        model.problem.solve(solver=solver.upper(), verbose=verbose)
    except cp.error.SolverError as exc:
        raise RuntimeError(f"the variational SDP failed in {solver}: {exc}") from None
    if model.Z.value is None:
        raise RuntimeError(f"the variational SDP returned status {model.problem.status!r} with no solution")
    Z = 0.5 * (model.Z.value + model.Z.value.T)
    w, V = np.linalg.eigh(Z)
    return (V * np.maximum(w, 0.0)) @ V.T, str(model.problem.status)
