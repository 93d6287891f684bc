"""The LMNN SDP of thesis Sec. 2.1.3 (slack form of (2.11)) in CVXPY — the ground truth of LMNN.

    minimise    (1 − μ) Σ_{j⇝i} (x_i − x_j)ᵀ M (x_i − x_j) + μ Σ_{j⇝i, l} (1 − y_il) ξ_ijl
    subject to  (1) (x_i − x_l)ᵀ M (x_i − x_l) − (x_i − x_j)ᵀ M (x_i − x_j) ≥ 1 − ξ_ijl
                (2) ξ_ijl ≥ 0
                (3) M ⪰ 0

At the optimum ξ_ijl = [1 + D_M(x_i, x_j) − D_M(x_i, x_l)]₊, so the optimal value is the
minimum of the loss (2.11) over M ⪰ 0. With C_ij = (x_i − x_j)(x_i − x_j)ᵀ (Sec. 2.1.7) the
pull term is tr(MP), P = Σ_{j⇝i} C_ij, and constraint (1) reads tr(M(C_il − C_ij)) ≥ 1 − ξ_ijl.

**Triplets.** The full problem has one slack per triplet (i, j, l), j ⇝ i, y_l ≠ y_i: n²k of
them. :func:`solve_lmnn_cvxpy` states it on a given set of triplets (all by default, refused
above ``max_triplets``); :func:`solve_lmnn_working_set` reaches the full optimum through
restricted problems only (see its docstring for why the answer is exact).

**Certificate.** Any multipliers α_ijl ∈ [0, μ] of constraint (1) give a lower bound on the
full optimum (:func:`lmnn_dual_bound`, derived there); the CVXPY dual values of (1) are such
multipliers, so every solve here is certified by the same function the hand-written solver
uses. The reported solution is CVXPY's M symmetrised and projected onto the PSD cone (2.16),
and the reported objective is the exact loss (2.11) of that matrix over *all* triplets.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import scipy.linalg

from ..graphs import ACCUMULATION_BLOCK, all_triplets, impostor_triplets, iter_hinges, nearest_impostors
from ..results import SolveResult, relative_gap
from ._cvxpy import check_solver, judge_optimal, no_solution, solver_iterations, status_of

__all__ = [
    "DEFAULT_LMNN_OPTIONS",
    "MAX_TRIPLETS",
    "lmnn_problem",
    "lmnn_dual_bound",
    "project_psd",
    "triplet_outer_sum",
    "check_triplets",
    "solve_lmnn_cvxpy",
    "solve_lmnn_working_set",
]

#: Largest number of triplets (slack variables) :func:`solve_lmnn_cvxpy` accepts by default.
#: Wine (n = 178, k = 3) has about 63,000 and takes Clarabel about 95 s; beyond this size
#: use :func:`solve_lmnn_working_set`, which states only the triplets that matter.
MAX_TRIPLETS = 100_000

#: CVXPY settings used unless overridden. Clarabel's dual residual stalls near 1e-6 on the
#: restricted problems of standardised wine (n = 178, d = 13, 4,600 triplets: status
#: ``optimal_inaccurate`` at a gap of 1e-7 with the NuMax settings), so feasibility is asked
#: to 1e-6 and the gap to 1e-7; every answer is then judged by its certified gap
#: (:func:`lmnn_dual_bound`), not by the solver's word. SCS runs at its own defaults.
DEFAULT_LMNN_OPTIONS = {
    "CLARABEL": {"tol_gap_abs": 1e-7, "tol_gap_rel": 1e-7, "tol_feas": 1e-6},
    "SCS": {},
}

_EPS = np.finfo(np.float64).eps


# ------------------------------------------------------------------------------ helpers
def project_psd(M: np.ndarray) -> np.ndarray:
    """P_S(M) = V Δ⁺ Vᵀ, the projection (2.16) of (the symmetric part of) M onto the PSD cone."""
    w, V = np.linalg.eigh(0.5 * (M + M.T))
    P = (V * np.maximum(w, 0.0)) @ V.T
    return 0.5 * (P + P.T)


def check_triplets(instance, triplets: object) -> np.ndarray:
    """Validate triplets (i, j, l) of an :class:`~sdpembed.instances.LMNNInstance`.

    Each row must have j ⇝ i (j in ``targets[i]``) and y_l ≠ y_i, and no row may repeat.
    Returns an int64 (T, 3) array.
    """
    arr = np.asarray(triplets)
    if arr.size == 0:
        return np.empty((0, 3), dtype=np.int64)
    if arr.dtype.kind not in "iu" or arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"triplets must be an integer array of shape (T, 3) of (i, j, l), got {arr.dtype} {arr.shape}")
    arr = arr.astype(np.int64)
    n = instance.n_points
    if arr.min() < 0 or arr.max() >= n:
        raise ValueError(f"triplets must hold point indices in [0, {n})")
    i, j, l = arr.T
    if not np.all(np.any(instance.targets[i] == j[:, None], axis=1)):
        raise ValueError("every triplet (i, j, l) needs j to be a target neighbour of i (j in targets[i])")
    if np.any(instance.y[i] == instance.y[l]):
        raise ValueError("every triplet (i, j, l) needs y_l != y_i (l is a potential impostor)")
    if np.unique(_triplet_keys(arr, n)).size != arr.shape[0]:
        raise ValueError("triplets must not repeat")
    return arr


def _triplet_keys(triplets: np.ndarray, n: int) -> np.ndarray:
    """One int64 key per triplet, (i·n + j)·n + l."""
    t = triplets.astype(np.int64)
    return (t[:, 0] * n + t[:, 1]) * n + t[:, 2]


def triplet_outer_sum(
    X: np.ndarray, triplets: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, float]:
    """Σ_t w_t (C_ij − C_il) over triplets t = (i, j, l) — the push part of (2.14) — and a
    bound on its entrywise rounding error.

    Formed as Uᵀ diag(w) U − Wᵀ diag(w) W with U = x_i − x_j and W = x_i − x_l, at most
    ``ACCUMULATION_BLOCK`` triplets per matrix product.

    Returns
    -------
    D : ndarray of shape (d, d)
    error : float
        Every entry of D is within ``error`` of the exact sum (of the rounded differences).
    """
    X = np.asarray(X, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    d = X.shape[1]
    D = np.zeros((d, d))
    mass = 0.0
    n_blocks = 0
    for start in range(0, triplets.shape[0], ACCUMULATION_BLOCK):
        t = triplets[start:start + ACCUMULATION_BLOCK]
        wt = w[start:start + ACCUMULATION_BLOCK]
        U = X[t[:, 0]] - X[t[:, 1]]
        W = X[t[:, 0]] - X[t[:, 2]]
        D += (U * wt[:, None]).T @ U - (W * wt[:, None]).T @ W
        mass += float(np.abs(wt) @ (np.einsum("ij,ij->i", U, U) + np.einsum("ij,ij->i", W, W)))
        n_blocks += 1
    error = (ACCUMULATION_BLOCK + n_blocks + d + 4) * _EPS * mass
    return 0.5 * (D + D.T), error


def _pull_error(instance) -> float:
    """Entrywise rounding bound of ``instance.pull_matrix`` (see :func:`sdpembed.graphs.pull_matrix`)."""
    n_blocks = -(-instance.n_points * instance.k // ACCUMULATION_BLOCK)
    return (ACCUMULATION_BLOCK + n_blocks + instance.dim + 4) * _EPS * float(np.trace(instance.pull_matrix))


def _certified_min_eig(S: np.ndarray, entry_error: float) -> float:
    """A lower bound on λ_min of the exact matrix whose rounded version is S: the computed
    λ_min minus the eigen-solver's error (16·d·ε·‖S‖₂) and d·entry_error (‖E‖₂ ≤ d·max|E_ab|)."""
    w = np.linalg.eigvalsh(S)
    d = S.shape[0]
    return float(w[0]) - 16.0 * d * _EPS * float(np.max(np.abs(w))) - d * entry_error


# --------------------------------------------------------------------------- dual bound
def lmnn_dual_bound(
    instance, alpha_triplets: np.ndarray, alpha: np.ndarray, *, upper_bound: float | None = None
) -> float:
    """A certified lower bound on min_{M ⪰ 0} ε(M), the optimum of (2.11), from multipliers α.

    **Derivation.** Let h_t(M) = 1 + tr(M(C_ij − C_il)) be the hinge argument of triplet
    t = (i, j, l) and take any α_t ∈ [0, μ] (α_t = 0 for triplets not listed). Since
    [h]₊ ≥ h and [h]₊ ≥ 0, μ[h]₊ ≥ α_t h whenever 0 ≤ α_t ≤ μ, so for every M ⪰ 0

        ε(M) ≥ (1 − μ) tr(MP) + Σ_t α_t h_t(M) = Σ_t α_t + tr(M C(α)),
        C(α) = (1 − μ) P + Σ_t α_t (C_ij − C_il),        P = Σ_{j⇝i} C_ij,

    the Lagrangian of the slack SDP of Sec. 2.1.3 with multiplier α on (1) (the box
    α ∈ [0, μ] is what stationarity in ξ leaves). Hence

    * if C(α) ⪰ 0, ε(M) ≥ Σ α for every M ⪰ 0 (α is dual feasible; the dual SDP is
      max Σα s.t. α ∈ [0, μ], C(α) ⪰ 0);
    * scaling: for t ∈ [0, 1], tα ∈ [0, μ] and C(tα) = (1 − t)(1 − μ)P + t C(α), so when
      (1 − μ)P ≻ 0 the largest t with C(tα) ⪰ 0 (a generalised eigenvalue of the pair
      (Σα(C_ij − C_il), (1 − μ)P)) gives the bound t·Σα;
    * trace bound: if μ < 1 and P ≻ 0, every minimiser M* has
      (1 − μ) λ_min(P) tr M* ≤ ε(M*) ≤ U for any U ≥ min ε (the loss of a PSD matrix, or
      ε(0) = μ·T), so tr M* ≤ τ = U / ((1 − μ) λ_min(P)) and
      ε(M*) ≥ Σα + τ·min(0, λ_min(C(α))).

    The result is the largest of these (and of 0: ε ≥ 0). Eigenvalues are lowered by bounds
    on the rounding errors of forming P and C(α) and of the eigen-solver, so the bound
    survives floating point. α is first projected onto the box [0, μ].

    Parameters
    ----------
    instance : LMNNInstance
    alpha_triplets : ndarray of int, shape (T, 3)
        Triplets (i, j, l) of the instance carrying the multipliers (any subset of all
        triplets: the others have α = 0, which is feasible).
    alpha : ndarray of shape (T,)
        Multipliers of the impostor constraints (1).
    upper_bound : float, optional
        U ≥ the optimum: the loss (2.11) of some PSD matrix (e.g. the solution). Tightens the
        trace bound; ε(0) = μ·T is used when omitted or larger.

    Returns
    -------
    float
        A lower bound on the optimal value of (2.11) over M ⪰ 0.
    """
    triplets = check_triplets(instance, alpha_triplets)
    alpha = np.asarray(alpha, dtype=np.float64).ravel()
    if alpha.shape[0] != triplets.shape[0]:
        raise ValueError(f"alpha must have one entry per triplet ({triplets.shape[0]}), got {alpha.shape[0]}")
    if not np.all(np.isfinite(alpha)):
        raise ValueError("alpha contains NaN or infinite entries")
    mu = instance.mu
    alpha = np.clip(alpha, 0.0, mu)
    active = alpha > 0.0
    triplets, alpha = triplets[active], alpha[active]
    total = float(alpha.sum())
    if total == 0.0:
        return 0.0
    D, d_error = triplet_outer_sum(instance.X, triplets, alpha)
    A = (1.0 - mu) * instance.pull_matrix
    a_error = (1.0 - mu) * _pull_error(instance)

    # trace bound τ on a minimiser (needs μ < 1 and P ≻ 0, certified with rounding margins)
    tau = np.inf
    lam_A = _certified_min_eig(A, a_error) if mu < 1.0 else -np.inf
    if lam_A > 0.0:
        U = mu * instance.n_triplets
        if upper_bound is not None and np.isfinite(upper_bound):
            U = min(U, max(float(upper_bound), 0.0))
        tau = U / lam_A

    def bound_at(t: float) -> float:
        lam = _certified_min_eig(A + t * D, a_error + t * d_error)
        if lam >= 0.0:
            return t * total
        return t * total + tau * lam if np.isfinite(tau) else 0.0

    candidates = [0.0, bound_at(1.0)]
    if lam_A > 0.0:
        theta = scipy.linalg.eigh(D, A, eigvals_only=True)      # D v = θ A v
        t_star = 1.0 if theta[0] >= 0.0 else min(1.0, -1.0 / float(theta[0]))
        # A + tD = (1 − s)(A + t*D) + s·A ⪰ s·λ_min(A)·I for t = (1 − s)t*: leave room for
        # the rounding margins of the eigenvalue test.
        margin = 16.0 * A.shape[0] * _EPS * (np.linalg.norm(A, 2) + np.linalg.norm(D, 2)) \
            + A.shape[0] * (a_error + d_error)
        s = min(1.0, 4.0 * margin / lam_A)
        candidates.append(bound_at((1.0 - s) * t_star))
    return float(max(candidates))


# ------------------------------------------------------------------------------ model
def lmnn_problem(instance, triplets: np.ndarray | None = None):
    """The SDP of Sec. 2.1.3 on a set of triplets (all of them by default).

    Returns
    -------
    problem : cvxpy.Problem
    M : cvxpy.Variable
        The (d, d) PSD metric.
    xi : cvxpy.Variable or None
        The slacks ξ_ijl, one per triplet (None without triplets).
    impostor : cvxpy.Constraint or None
        Constraint (1), whose dual values are the multipliers α of :func:`lmnn_dual_bound`.
    """
    triplets = all_triplets(instance.y, instance.targets) if triplets is None else check_triplets(instance, triplets)
    X, mu, d = instance.X, instance.mu, instance.dim
    M = cp.Variable((d, d), PSD=True, name="M")                               # (3) M ⪰ 0
    pull = cp.sum(cp.multiply(instance.pull_matrix, M))                      # Σ_{j⇝i} D_M(x_i, x_j) = tr(MP)
    if triplets.shape[0] == 0:
        return cp.Problem(cp.Minimize((1.0 - mu) * pull)), M, None, None
    # tr(M(C_il − C_ij)) in the upper triangle of M: coefficient C_ab, doubled off the diagonal
    rows, cols = np.triu_indices(d)
    weight = np.where(rows == cols, 1.0, 2.0)
    U = X[triplets[:, 0]] - X[triplets[:, 1]]                                # x_i − x_j
    W = X[triplets[:, 0]] - X[triplets[:, 2]]                                # x_i − x_l
    A = (W[:, rows] * W[:, cols] - U[:, rows] * U[:, cols]) * weight
    xi = cp.Variable(triplets.shape[0], nonneg=True, name="xi")              # (2) ξ ≥ 0
    impostor = A @ M[rows, cols] + xi >= 1.0                                 # (1) D_M(i,l) − D_M(i,j) ≥ 1 − ξ
    objective = cp.Minimize((1.0 - mu) * pull + mu * cp.sum(xi))
    return cp.Problem(objective, [impostor]), M, xi, impostor


@dataclass
class _Restricted:
    """A raw CVXPY solve of the SDP on a set of triplets."""

    status: str
    cvxpy_status: str
    M: np.ndarray | None
    alpha: np.ndarray
    value: float
    iterations: int
    message: str


def _solve_restricted(instance, triplets: np.ndarray, solver: str, verbose: bool, options: dict) -> _Restricted:
    problem, M, _, impostor = lmnn_problem(instance, triplets)
    try:
        problem.solve(solver=solver, verbose=verbose, **{**DEFAULT_LMNN_OPTIONS[solver], **options})
    except cp.error.SolverError as exc:
        return _Restricted("error", "solver_error", None, np.zeros(len(triplets)), np.nan, 0, f"{solver} failed: {exc}")
    status = status_of(problem)
    iterations = solver_iterations(problem)
    if M.value is None:
        return _Restricted(
            status if status != "optimal" else "error", str(problem.status), None, np.zeros(len(triplets)),
            np.nan, iterations, f"CVXPY status {problem.status!r} with no primal value",
        )
    alpha = np.zeros(len(triplets))
    if impostor is not None and impostor.dual_value is not None:
        alpha = np.asarray(impostor.dual_value, dtype=np.float64).ravel()
    value = float(problem.value) if problem.value is not None else np.nan
    return _Restricted(
        status, str(problem.status), np.asarray(M.value, dtype=np.float64), alpha, value, iterations,
        f"CVXPY status {problem.status!r} from {solver}",
    )


def _failed(instance, raw: _Restricted, method: str, solver: str, start: float) -> SolveResult:
    """The result of a CVXPY solve that returned no matrix (never ``optimal``)."""
    return no_solution(instance.problem, "M", (instance.dim,) * 2, raw.status, raw.message, solver, start,
                       raw.iterations, method)


def _certified_result(
    instance, raw: _Restricted, solution: np.ndarray, objective: float, triplets: np.ndarray, *,
    method: str, solver: str, start: float, gap_tol: float, status: str, message: str,
    iterations: int, history: dict | None = None, extra: dict | None = None,
) -> SolveResult:
    """Certify a solution with :func:`lmnn_dual_bound` and keep ``optimal`` only if the
    certified gap agrees."""
    bound = lmnn_dual_bound(instance, triplets, raw.alpha, upper_bound=objective)
    rgap = relative_gap(objective, bound)
    status, message = judge_optimal(status, message, relative_gap=rgap, gap_tol=gap_tol)
    return SolveResult(
        problem=instance.problem, variable="M", solution=solution, objective=objective, status=status,
        message=message, method=method, solver=solver, dual_bound=bound, gap=objective - bound,
        relative_gap=rgap, max_violation=instance.max_violation(solution),
        min_eigenvalue=float(np.linalg.eigvalsh(solution)[0]), iterations=iterations,
        wall_time=time.perf_counter() - start, history=history or {},
        extra={
            "triplets": triplets, "alpha": np.clip(raw.alpha, 0.0, instance.mu),
            "restricted_optimum": raw.value, "cvxpy_status": raw.cvxpy_status,
            "raw_min_eigenvalue": float(np.linalg.eigvalsh(0.5 * (raw.M + raw.M.T))[0]),
            **(extra or {}),
        },
    )


# ------------------------------------------------------------------------------ solves
def solve_lmnn_cvxpy(
    instance,
    *,
    solver: str = "CLARABEL",
    triplets: np.ndarray | None = None,
    max_triplets: int = MAX_TRIPLETS,
    gap_tol: float = 1e-4,
    verbose: bool = False,
    **solver_options,
) -> SolveResult:
    """Solve an :class:`~sdpembed.instances.LMNNInstance` with the SDP of Sec. 2.1.3 in CVXPY.

    Parameters
    ----------
    instance : LMNNInstance
    solver : {"CLARABEL", "SCS"}
    triplets : ndarray of int, shape (T, 3), optional
        The triplets (i, j, l) given a slack; all k Σ_i (n − n_{y_i}) of them by default. With
        a subset the model is a relaxation; the reported objective is still the full loss
        (2.11) of the solution, so the certified gap shows whether the subset sufficed.
    max_triplets : int
        Refuse (ValueError) to state more slacks than this; use :func:`solve_lmnn_working_set`.
    gap_tol : float
        CVXPY's ``optimal`` is kept only if the certified relative gap is at most this.
    verbose : bool
        Passed to CVXPY.
    **solver_options
        Passed to ``Problem.solve`` over :data:`DEFAULT_LMNN_OPTIONS`.

    Returns
    -------
    SolveResult
        ``solution`` is P_S(M) (2.16) of CVXPY's M, ``objective`` its loss (2.11) over all
        triplets, ``dual_bound`` the certified bound of :func:`lmnn_dual_bound` from the dual
        values of (1); ``optimal_inaccurate`` becomes ``inaccurate``, never ``optimal``.
        ``extra`` holds the triplets, their multipliers ``alpha`` and CVXPY's optimal value of
        the stated model (``restricted_optimum``).
    """
    start = time.perf_counter()
    solver = check_solver(solver)
    if triplets is None:
        count = instance.n_triplets
        if count > max_triplets:
            raise ValueError(
                f"the instance has {count} triplets, more than max_triplets={max_triplets} slack variables; "
                "use the exact working-set method (sdpembed.solve(instance, 'working_set')) or raise max_triplets"
            )
        triplets = all_triplets(instance.y, instance.targets)
    else:
        triplets = check_triplets(instance, triplets)
        if triplets.shape[0] > max_triplets:
            raise ValueError(f"{triplets.shape[0]} triplets exceed max_triplets={max_triplets}")
    raw = _solve_restricted(instance, triplets, solver, verbose, solver_options)
    if raw.M is None:
        return _failed(instance, raw, "cvxpy", solver, start)
    solution = project_psd(raw.M)
    objective = instance.objective(solution)
    return _certified_result(
        instance, raw, solution, objective, triplets, method="cvxpy", solver=solver, start=start,
        gap_tol=gap_tol, status=raw.status, message=raw.message, iterations=raw.iterations,
    )


def solve_lmnn_working_set(
    instance,
    *,
    solver: str = "CLARABEL",
    max_rounds: int = 50,
    tol: float = 1e-7,
    max_triplets: int = MAX_TRIPLETS,
    gap_tol: float = 1e-4,
    verbose: bool = False,
    max_iter: int | None = None,
    **solver_options,
) -> SolveResult:
    """Solve (2.11) exactly with CVXPY on a growing working set of triplets.

    Start from the triplets active at M = I (hinge > 0, the impostors (2.4) of the Euclidean
    metric) together with each target pair's nearest impostor; then repeat: solve the SDP of
    Sec. 2.1.3 on the working set 𝒲, evaluate *every* hinge of (2.11) at the solution
    (streamed in blocks, :func:`sdpembed.graphs.iter_hinges`), add the triplets whose hinge
    exceeds ``tol``, and stop when none is added. The set only grows, so this terminates.

    **Why the answer is exact.** The restricted problem drops the nonnegative terms
    μ[h_t]₊ of the omitted triplets, so it is a relaxation: its optimum ε_𝒲* ≤ ε*. At its
    minimiser M_𝒲, if every omitted hinge is ≤ 0 then ε(M_𝒲) = ε_𝒲(M_𝒲) = ε_𝒲* ≤ ε*, so
    M_𝒲 is optimal for the full problem and the restricted optimum *is* the full optimum.
    Numerically the stop rule leaves omitted hinges ≤ ``tol``, so ε(M_𝒲) ≤ ε_𝒲(M_𝒲) + μ·Σ
    (omitted hinges)₊, reported as ``extra["omitted_hinge_sum"]``. The restricted optimum
    is a lower bound only up to the solver's accuracy, so the reported ``dual_bound`` is the
    certified bound of :func:`lmnn_dual_bound` from the multipliers of 𝒲 (zero on omitted
    triplets, which keeps them dual feasible for the full problem); CVXPY's restricted optimal
    value is ``extra["restricted_optimum"]``.

    Parameters
    ----------
    instance : LMNNInstance
    solver : {"CLARABEL", "SCS"}
    max_rounds : int
        Largest number of restricted solves; ``max_iterations`` if the set is still growing.
    tol : float
        Omitted hinges above this are added (hinges are in units of the margin 1 of (2.6)).
    max_triplets : int
        Largest working set handed to CVXPY (ValueError beyond).
    gap_tol : float
        ``optimal`` needs a certified relative gap at most this.
    verbose : bool
        Print one line per round (working-set size, additions, objective, restricted value).
    max_iter : int, optional
        Alias of ``max_rounds`` (the CLI's ``--max-iter``).
    **solver_options
        Passed to CVXPY's ``Problem.solve``.

    Returns
    -------
    SolveResult
        As :func:`solve_lmnn_cvxpy`, with ``method="working_set"``, ``iterations`` the number
        of rounds, ``history`` per round (``working_set``, ``added``, ``objective``,
        ``restricted_optimum``, ``omitted_hinge_sum``, ``max_omitted_hinge``) and in ``extra``
        the final working set, its multipliers and ``omitted_hinge_sum``/``max_omitted_hinge``.
    """
    start = time.perf_counter()
    solver = check_solver(solver)
    max_rounds = int(max_iter if max_iter is not None else max_rounds)
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, got {max_rounds}")
    tol = float(tol)
    if not (np.isfinite(tol) and tol >= 0.0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    n = instance.n_points
    X, y, targets = instance.X, instance.y, instance.targets
    nearest = nearest_impostors(X, y)
    seed = np.column_stack([np.repeat(np.arange(n), instance.k), targets.ravel(), np.repeat(nearest, instance.k)])
    working = np.concatenate([impostor_triplets(X, y, targets), seed])
    working = working[np.unique(_triplet_keys(working, n), return_index=True)[1]]
    history: dict[str, list] = {key: [] for key in (
        "working_set", "added", "objective", "restricted_optimum", "omitted_hinge_sum", "max_omitted_hinge")}
    raw = None
    converged = False
    total_iterations = 0
    for round_ in range(1, max_rounds + 1):
        if working.shape[0] > max_triplets:
            raise ValueError(
                f"the working set grew to {working.shape[0]} triplets, more than max_triplets={max_triplets}"
            )
        solved = working
        raw = _solve_restricted(instance, solved, solver, verbose=False, options=solver_options)
        total_iterations += raw.iterations
        if raw.M is None:
            return _failed(instance, raw, "working_set", solver, start)
        solution = project_psd(raw.M)
        # every hinge of (2.11) at the solution: the full loss, and the omitted positive ones
        keys = np.sort(_triplet_keys(working, n))
        pull = float(np.sum(instance.pull_matrix * solution))
        push, omitted_sum, omitted_max, added = 0.0, 0.0, 0.0, []
        for block, hinges in iter_hinges(X, y, targets, solution, threshold=0.0):
            push += float(hinges.sum())
            omitted = ~np.isin(_triplet_keys(block, n), keys, assume_unique=False)
            if np.any(omitted):
                omitted_sum += float(hinges[omitted].sum())
                omitted_max = max(omitted_max, float(hinges[omitted].max()))
                added.append(block[omitted & (hinges > tol)])
        objective = (1.0 - instance.mu) * pull + instance.mu * push
        new = np.concatenate(added) if added else np.empty((0, 3), dtype=np.int64)
        for key, value in (("working_set", working.shape[0]), ("added", new.shape[0]), ("objective", objective),
                           ("restricted_optimum", raw.value), ("omitted_hinge_sum", omitted_sum),
                           ("max_omitted_hinge", omitted_max)):
            history[key].append(value)
        if verbose:
            print(f"round {round_:3d}  working set {working.shape[0]:8d}  added {new.shape[0]:7d}  "
                  f"objective {objective:.10g}  restricted {raw.value:.10g}  [{raw.cvxpy_status}]")
        if new.shape[0] == 0:
            converged = True
            break
        working = np.concatenate([working, new])
    status, message = raw.status, raw.message
    if converged:
        message = f"working set of {solved.shape[0]} triplets after {round_} round(s); every omitted hinge <= " \
                  f"{tol:g}; last restricted solve: {message}"
    else:
        status = "max_iterations"
        message = (f"the working set was still growing after {max_rounds} round(s): {new.shape[0]} omitted "
                   f"triplet(s) with hinge > {tol:g} at the solution on {solved.shape[0]} triplets")
    return _certified_result(
        instance, raw, solution, objective, solved, method="working_set", solver=solver, start=start,
        gap_tol=gap_tol, status=status, message=message, iterations=round_,
        history={key: np.asarray(value) for key, value in history.items()},
        extra={"omitted_hinge_sum": omitted_sum, "max_omitted_hinge": omitted_max,
               "solver_iterations": total_iterations, "rounds": round_},
    )
