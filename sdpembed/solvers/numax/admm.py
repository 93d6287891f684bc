"""NuMax by ADMM — NuMax Algorithm 1, with an exact least-squares step and a certificate.

Solves the trace-minimisation SDP (*) of :mod:`sdpembed.problems.numax_certificate`,

    minimise tr P   s.t.   lo ≤ 𝒜(P) ≤ hi,   P ⪰ 0,

which is NuMax (4) for ``lo = 1−δ, hi = 1+δ`` and NuMax-Class (7)/(15) for one-sided bounds.
Following (8), split P = L and q = 𝒜(L) with q in the box, and iterate on the augmented
Lagrangian (9) with scaled multipliers Λ (N×N) and ω (S):

1. q ← clip(𝒜(L) − ω, lo, hi)                          — truncation (10) (Algorithm 3's
   one-sided ``min(b, z)`` when a bound is infinite);
2. P ← V 𝒟_{1/β}(Σ) Vᵀ where L + Λ = V Σ Vᵀ            — eigenvalue shrinkage (11);
3. L ← argmin ½‖P − L − Λ‖² + ½‖𝒜(L) − q − ω‖²          — the least-squares step (12)–(13);
4. Λ ← Λ − η (P − L),  ω ← ω − η (𝒜(L) − q)             — multiplier updates.

Departures from the paper, all in the direction of exactness:

* **Exact least squares.** (13) reads (I + 𝒜*𝒜) L = W + 𝒜*(b) with W = P − Λ, b = q + ω.
  Its unique solution is L = W + 𝒜*(c) with (I + 𝒜𝒜*) c = b − 𝒜(W), an S×S system whose
  matrix K = I + (VVᵀ)∘(VVᵀ) ⪰ I is well conditioned and inverted once (via Cholesky); each
  iteration then costs one 𝒜(·), one 𝒜*(·), one S×S matrix-vector product and one
  eigendecomposition, and 𝒜(L) = 𝒜(W) + (K − I)c = q + ω − c comes for free. The original
  MATLAB code truncates this solve to 10 CG steps.
* **Ordering.** We use the standard two-block ADMM ordering of Sec. 4.3 (block (P, q), then
  L, then the multipliers with the fresh iterates); Algorithm 1's pseudo-code mixes the
  indices k and k+1 in the L- and multiplier updates.
* **Span reduction.** Every optimal P lives in the span of the secants: with Π the orthogonal
  projector onto it, ΠPΠ ⪰ 0 has 𝒜(ΠPΠ) = 𝒜(P) and tr ΠPΠ ≤ tr P. So we solve (*) for
  P̃ = QᵀPQ in an orthonormal basis Q of the span (r = rank V ≤ min(S, N) dimensions) and
  return P = Q P̃ Qᵀ. The final violation and certificate are evaluated with the original
  secants, so the reduction cannot hide an error. ``reduce=False`` switches it off.
* **Penalty.** β₁ = β₂ = β as in Sec. 5, so the S×S factor does not depend on β and the
  penalty can be adapted by residual balancing (Boyd et al. 2011, Sec. 3.4.1) without
  refactorising; adaptation stops after ``adapt_until`` iterations so the usual ADMM
  convergence theory applies to the tail. η = 1.618 (Sec. 4.1).

Stopping: the e₁/e₂ rule of Sec. 4.2, ``max(e₁, e₂) ≤ tol``, *and* a gap test — the output P
(PSD by construction) violates no constraint by more than ``feas_tol`` and its certified
relative gap is at most ``gap_tol``. The certificate: at a fixed point of the iteration,
y = β ω satisfies I − 𝒜*(y) ⪰ 0 and solves the dual of (*); at any iterate we scale it to
dual feasibility (:func:`sdpembed.problems.numax_certificate.certified_lower_bound`), which gives a lower
bound on the optimum that is valid whether or not the run converged.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the SDPs (4) and (7)/(15), the splitting (8), the augmented
   Lagrangian (9), the truncation (10), the shrinkage (11), the least-squares step (12)–(13),
   Algorithm 1, the stopping rule of Sec. 4.2, the parameters of Sec. 4.1 and Sec. 5.
.. [2] S. Boyd, N. Parikh, E. Chu, B. Peleato and J. Eckstein, "Distributed optimization and
   statistical learning via the alternating direction method of multipliers", Foundations and
   Trends in Machine Learning 3(1), 1–122, 2011. Implemented here: residual balancing, Sec. 3.4.1.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.optimize

from ..._validate import as_matrix
from ...problems.numax_certificate import box_violation, certified_lower_bound, check_bounds, secant_span
from ...problems.numax_operator import SecantOperator
from ...results import SolveResult, build_result, relative_gap
from .admm_control import MAX_CONSTRAINTS, ADMMControl, ADMMPenalty, ADMMStopping, announce_setup, check_bundle
from .least_squares import cholesky_factor, factorisation_thread_limit, gram_rows, inverse_from_cholesky

__all__ = [
    "ADMMState",
    "box_trace_admm",
    "check_constraint_count",
    "extend_inverse",
    "full_rank_linear_program",
    "least_squares_inverse",
    "least_squares_step",
    "restrict_inverse",
    "symmetric_matvec",
    "update_is_cheaper",
    "warm_start_iterates",
    "secant_span",
    "solve_numax_admm",
]


@dataclass
class ADMMState:
    """Iterates that let a later run warm-start (column generation reuses them).

    ``L`` and ``Lam`` are (r, r) in the basis ``basis`` (N, r) of the secant span, or
    (N, N) when ``basis`` is None; ``omega`` has one entry per constraint; ``beta`` is the
    penalty the scaled multipliers refer to.
    """

    L: np.ndarray
    Lam: np.ndarray
    omega: np.ndarray
    beta: float
    basis: np.ndarray | None = None
    #: (I + 𝒜𝒜*)⁻¹ for the *first* len(K_inv) secants of the next run, if known: the next
    #: run then only appends the new secants' rows (:func:`extend_inverse`), O(S² k) for k
    #: new secants instead of O(S³). 𝒜𝒜* = (VVᵀ)∘(VVᵀ) does not depend on the basis.
    K_inv: np.ndarray | None = None
    #: 𝒜𝒜* = (VVᵀ)∘(VVᵀ) of the first len(gram) secants of the next run, if known: only the
    #: new secants' rows are computed (:func:`~sdpembed.solvers.numax.least_squares.extend_gram`).
    gram: np.ndarray | None = None
    #: increasing indices into ``gram`` of the first secants of the next run (None: its leading
    #: rows, all of them); the restriction is made while the next run copies ``gram``
    gram_kept: np.ndarray | None = None
    #: the Cholesky factor of I + 𝒜𝒜* a run ended with (a
    #: :class:`~sdpembed.solvers.numax.least_squares.CholeskySolve` that holds its secants), if any
    factor: Any = None
    #: which of the secants ``factor`` solves for are the first ones of the next run (the rest
    #: are appended): the next run block-updates the factor
    #: (:func:`~sdpembed.solvers.numax.least_squares.extend_factor`) instead of refactorising
    factor_kept: np.ndarray | None = None
    #: the partial eigensolver's block of Ritz vectors (r, m) a run ended with, in ``basis``: the
    #: next run in the same basis starts from it instead of a full eigendecomposition
    #: (:class:`~sdpembed.solvers.numax.pair_linalg.PartialShrink`)
    eig_block: np.ndarray | None = None
    #: (𝒜(L), 𝒜(Λ)) of the *first* len(values[0]) secants of the next run, if known (the values a
    #: run tracked for its pairs, restricted to the kept ones): a next run in the same ``basis``
    #: computes only the other secants' values instead of applying 𝒜 to L and Λ
    #: (:func:`~sdpembed.solvers.numax.admm_pairs.pair_trace_admm`)
    values: tuple[np.ndarray, np.ndarray] | None = None


def _shrink_eigenvalues(M: np.ndarray, threshold: float) -> tuple[np.ndarray, int]:
    """Eigenvalue shrinkage 𝒟_α of (11): V diag((σ − α)₊) Vᵀ, and the resulting rank."""
    M = 0.5 * (M + M.T)
    w, U = np.linalg.eigh(M)
    keep = w > threshold
    Uk = U[:, keep]
    return (Uk * (w[keep] - threshold)) @ Uk.T, int(keep.sum())


def _spd_inverse(K: np.ndarray) -> np.ndarray:
    """K⁻¹ for symmetric positive definite K = LLᵀ (LAPACK potrf, then potri), full and symmetric.

    K is overwritten. potri is about twice as fast as trtri followed by syrk.
    """
    return inverse_from_cholesky(cholesky_factor(K))


def symmetric_matvec(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A x for symmetric A (C or Fortran order) by BLAS symv: reads one triangle, half the memory of gemv."""
    A_f = A if A.flags.f_contiguous else A.T                    # the transpose of a symmetric matrix is itself
    with factorisation_thread_limit(A.shape[0]):
        return scipy.linalg.blas.dsymv(1.0, A_f, x, lower=True)


def extend_inverse(A_inv: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
    """[[A, B], [Bᵀ, C]]⁻¹ from A⁻¹, for symmetric positive definite blocks (Schur complement).

    With W = A⁻¹B and the Schur complement Σ = C − BᵀW, the inverse is
    [[A⁻¹ + W Σ⁻¹ Wᵀ, −W Σ⁻¹], [−Σ⁻¹ Wᵀ, Σ⁻¹]]: O(m² k) for m old and k new rows, written
    straight into the result (one pass over the m × m block besides the product).
    """
    if B.shape[1] == 0:
        return A_inv
    m, k = B.shape
    W = A_inv @ B
    schur_inv = _spd_inverse(C - B.T @ W)
    WS = W @ schur_inv
    out = np.empty((m + k, m + k))
    np.add(A_inv, WS @ W.T, out=out[:m, :m])                  # symmetric up to rounding
    out[:m, m:] = -WS
    out[m:, :m] = -WS.T
    out[m:, m:] = 0.5 * (schur_inv + schur_inv.T)
    return out


def restrict_inverse(K_inv: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """(K restricted to the rows/columns ``keep``)⁻¹ from K⁻¹: P − Q R⁻¹ Qᵀ with K⁻¹ = [[P, Q], [Qᵀ, R]]
    (the product subtracted in place from the gathered block P)."""
    keep = np.asarray(keep, dtype=bool)
    if keep.all():
        return K_inv
    drop = ~keep
    out = K_inv[np.ix_(keep, keep)]
    Q = K_inv[np.ix_(keep, drop)]
    R = K_inv[np.ix_(drop, drop)]
    out -= Q @ scipy.linalg.cho_solve(scipy.linalg.cho_factor(R, lower=True, check_finite=False), Q.T,
                                      check_finite=False)                  # R ≻ 0: a block of K⁻¹ ≻ 0
    return out


def update_is_cheaper(n_kept: int, n_dropped: int, n_added: int, dim: int) -> bool:
    """Whether updating a known (I + 𝒜𝒜*)⁻¹ (:func:`restrict_inverse` to the kept rows, then
    :func:`extend_inverse` by the added ones) costs fewer flops than forming and inverting it
    afresh for n_kept + n_added secants in ``dim`` dimensions."""
    m, d, k = float(n_kept), float(n_dropped), float(n_added)
    restrict = d**3 / 3.0 + 2.0 * d * d * m + 2.0 * m * m * d if d else 0.0
    extend = 4.0 * m * m * k + 4.0 * m * k * k + k**3 + 2.0 * k * (m + k) * dim
    size = m + k
    return restrict + extend < size**3 + 2.0 * size * size * dim


def _inverts_prefix(op: SecantOperator, known: np.ndarray) -> bool:
    """Whether ``known`` is (I + 𝒜𝒜*)⁻¹ of the first len(known) secants, checked on a random
    vector x through x + 𝒜(𝒜*(x)) — a warm start from other secants is never trusted blindly."""
    m = known.shape[0]
    prefix = SecantOperator(op.V[:m])
    x = np.random.default_rng(0).standard_normal(m)
    Kx = x + prefix.apply(prefix.adjoint(x))
    return bool(np.linalg.norm(known @ Kx - x) <= 1e-8 * np.linalg.norm(x))


def least_squares_inverse(op: SecantOperator, known: np.ndarray | None, gram: np.ndarray | None = None) -> np.ndarray:
    """(I + 𝒜𝒜*)⁻¹ = (I + (VVᵀ)∘(VVᵀ))⁻¹, extending ``known`` (the inverse for the first rows) if
    given; ``gram``, if given, is 𝒜𝒜* of all the secants of ``op`` (then nothing of it is recomputed)."""
    S = op.n_constraints
    m = 0 if known is None else known.shape[0]
    if known is None or m > S or m < S // 4 or not _inverts_prefix(op, known):
        K = gram_rows(op, 0) if gram is None else gram.copy()       # nothing (valid) to reuse: factorise afresh
        K[np.diag_indices_from(K)] += 1.0
        return _spd_inverse(K)
    G = gram_rows(op, m) if gram is None else gram[m:].copy()       # the new rows, (S − m, S)
    C = G[:, m:]
    C[np.diag_indices_from(C)] += 1.0
    return extend_inverse(known, G[:, :m].T, C)


def least_squares_step(
    op: SecantOperator, K_inv: np.ndarray, W: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The exact L-update (12)–(13): the solution of (I + 𝒜*𝒜) L = W + 𝒜*(b), and 𝒜(L).

    With ``K_inv`` = (I + 𝒜𝒜*)⁻¹ (S×S), L = W + 𝒜*(c) for c = K⁻¹(b − 𝒜(W)), and
    𝒜(L) = 𝒜(W) + (K − I)c = b − c. Here W = P − Λ and b = q + ω (β₁ = β₂).
    """
    c = symmetric_matvec(K_inv, b - op.apply(W))
    return W + op.adjoint(c), b - c


def check_constraint_count(n_constraints: int, max_constraints: int) -> None:
    """Refuse more secants than the S×S least-squares matrix may hold."""
    if n_constraints > max_constraints:
        S = n_constraints
        raise ValueError(
            f"secants has {S} rows, more than max_constraints={max_constraints}: the exact "
            f"least-squares step keeps an S×S matrix ({8 * S * S / 2**30:.1f} GiB). Use fewer secants "
            "(a sample, or column generation over the active ones) or raise max_constraints."
        )


#: a run whose P has full rank r at a check from this iteration on, violating still, solves the linear program
#: of its full-rank problem once (:func:`full_rank_linear_program`)
LINEAR_PROGRAM_FROM = 500
#: the largest linear program (variables r(r+1)/2 times constraints S) :func:`full_rank_linear_program` forms
#: densely (8 MB of coefficients, twice)
LINEAR_PROGRAM_MAX_ENTRIES = 1_000_000


def full_rank_linear_program(V: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The SDP (4) without its cone, min tr P s.t. lo ≤ 𝒜(P) ≤ hi over symmetric P, as a linear program
    in the r(r+1)/2 entries of P (HiGHS); its solution when that is positive definite.

    Dropping P ⪰ 0 relaxes the problem, so a positive definite solution of the relaxation solves (4)
    itself; its multipliers y are the SDP's (𝒜*(y) = I, the dual slack I − 𝒜*(y) zero). This is the
    case when the optimum has full rank r (e.g. NuMax with δ = 0.005 on points in general position):
    there the iterates of Algorithm 1 are full rank, the shrinkage (11) is inactive, and with more
    active constraints than the r(r+1)/2 dimensions of the symmetric matrices the problem is
    degenerate and the ADMM converges slowly (and the Gauss–Newton polish's normal equations are
    singular: rank-r factors span only r(r+1)/2 directions).

    Parameters
    ----------
    V : ndarray of shape (S, r)
        Unit secants (rows), in coordinates of dimension r.
    lo, hi : ndarray of shape (S,)
        Bounds (finite).

    Returns
    -------
    (ndarray of shape (r, r), ndarray of shape (S,)) or None
        P and the signed multipliers y (y_k > 0 prices lo_k, y_k < 0 prices hi_k); None when the
        program is too large (``LINEAR_PROGRAM_MAX_ENTRIES``), not solved, or its solution is not
        positive definite (the cone binds). Callers certify P from the explicit secants.

    References
    ----------
    .. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
       learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
       6109–6121, 2015. The SDP (4) with the bounds 1 ± δ on the unit secants.
    """
    S, r = V.shape
    a, b = np.triu_indices(r)
    if S * a.size > LINEAR_PROGRAM_MAX_ENTRIES or not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        return None
    # v_kᵀ P v_k = Σ_i v_ki² P_ii + 2 Σ_{i<j} v_ki v_kj P_ij
    A = V[:, a] * V[:, b] * np.where(a == b, 1.0, 2.0)
    result = scipy.optimize.linprog((a == b).astype(float), A_ub=np.vstack([A, -A]),
                                    b_ub=np.concatenate([hi, -lo]), bounds=(None, None), method="highs")
    if result.status != 0:
        return None
    P = np.zeros((r, r))
    P[a, b] = result.x
    P += np.triu(P, 1).T
    if not np.linalg.eigvalsh(P)[0] > 0.0:
        return None
    # HiGHS's marginals of A x ≤ hi and −A x ≤ −lo are ≤ 0: y = (lo's multiplier) − (hi's)
    marginals = result.ineqlin.marginals
    return P, marginals[:S] - marginals[S:]


def end_by_linear_program(control: ADMMControl, violation: float, rgap: float) -> None:
    """Mark ``control``'s run optimal with the P of :func:`full_rank_linear_program`."""
    control.status = "optimal"
    control.message = (f"P from the linear program of the full-rank problem at iteration {control.iteration}: "
                       f"violation {violation:.2e} <= {control.stopping.feas_tol:g}, certified relative gap "
                       f"{rgap:.2e} <= {control.stopping.gap_tol:g}")


def warm_start_iterates(
    state: ADMMState, basis: np.ndarray | None, dim: int, n_constraints: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Move a warm-start state into the coordinates of this run (its ``basis`` of the span).

    A state from another set of secants may live in another basis: L and Λ are lifted to
    Rᴺ with the old basis and compressed with the new one, so no secant is ever projected
    onto a stale span. ω must have one entry per secant of this run.
    """
    if state.omega.shape != (n_constraints,):
        raise ValueError(
            f"warm_start has {state.omega.shape[0]} multipliers, but there are {n_constraints} secants"
        )
    old = state.basis
    old_dim = dim if old is None else old.shape[1]
    if state.L.shape != (old_dim, old_dim) or state.Lam.shape != (old_dim, old_dim) or (
        old is not None and old.shape[0] != dim
    ):
        raise ValueError("warm_start does not match the secants' dimension")

    def move(M: np.ndarray) -> np.ndarray:
        full = M if old is None else old @ M @ old.T
        return full if basis is None else basis.T @ full @ basis

    same = (old is None and basis is None) or (
        old is not None and basis is not None and old.shape == basis.shape and np.array_equal(old, basis)
    )
    L, Lam = (state.L.copy(), state.Lam.copy()) if same else (move(state.L), move(state.Lam))
    return L, Lam, state.omega.copy(), float(state.beta)


def box_trace_admm(
    secants: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    problem: str = "numax",
    stopping: ADMMStopping | None = None,
    penalty: ADMMPenalty | None = None,
    warm_start: ADMMState | None = None,
    reduce: bool = True,
    max_constraints: int = MAX_CONSTRAINTS,
    verbose: bool | int = False,
) -> SolveResult:
    """ADMM (NuMax Algorithm 1) for min tr P s.t. lo ≤ 𝒜(P) ≤ hi, P ⪰ 0.

    Parameters
    ----------
    secants : ndarray of shape (S, N) or SecantOperator
        Rows v_i defining 𝒜 (unit rows for NuMax), or the operator itself — a
        :class:`~sdpembed.problems.numax_operator.PairSecantOperator` computes 𝒜 and 𝒜* through the points
        of a pair set, much faster when there are many more pairs than points.
    lo, hi : ndarray of shape (S,)
        Bounds on v_iᵀ P v_i; ``-inf``/``inf`` mark absent bounds (NuMax-Class).
    problem : str
        Registry name recorded in the result.
    stopping : ADMMStopping, optional
        Tolerances (Sec. 4.2 and the certificate), iteration and time limits, check cadence
        (default ``ADMMStopping()``: tol 1e-5, feas_tol 1e-6, gap_tol 1e-5, 20,000 iterations).
    penalty : ADMMPenalty, optional
        β, η and the residual balancing of β (default ``ADMMPenalty()``: β = 1, η = 1.618,
        balanced during the first 5,000 iterations).
    warm_start : ADMMState, optional
        Iterates of an earlier run: ω must have one entry per secant of this run; L and Λ
        are moved into this run's basis of the secant span (so the secants may differ).
    reduce : bool
        Solve in the span of the secants (exact; see the module docstring).
    max_constraints : int
        Refuse more secants than this (the S×S inverse needs 8·S² bytes: 3 GiB at 20,000).
    verbose : bool or int
        Print progress every ``verbose`` iterations (``True`` means 100).

    Returns
    -------
    SolveResult
        ``solution`` is P; ``extra`` holds ``y`` (dual-feasible multipliers), ``state``
        (an :class:`ADMMState`) and ``rank``; ``history`` holds the traces.
    """
    start = time.perf_counter()
    stopping, penalty = check_bundle(stopping, ADMMStopping, "stopping"), check_bundle(penalty, ADMMPenalty, "penalty")
    if isinstance(secants, SecantOperator):
        full_op = secants
        as_matrix(full_op.V, "secants")
    else:
        full_op = SecantOperator(as_matrix(secants, "secants"))
    S = full_op.n_constraints
    lo, hi = check_bounds(lo, hi, S)
    check_constraint_count(S, max_constraints)
    eta = penalty.eta

    basis = secant_span(full_op.V) if reduce else None
    op = full_op if basis is None else full_op.in_basis(basis)
    N = op.dim
    # (I + 𝒜𝒜*)⁻¹ with 𝒜𝒜* = (VVᵀ)∘(VVᵀ), K ⪰ I; only new rows are added to a known inverse
    announce_setup(verbose, S, N)
    K_inv = least_squares_inverse(op, None if warm_start is None else warm_start.K_inv)

    if warm_start is not None:
        L, Lam, omega, beta = warm_start_iterates(warm_start, basis, full_op.dim, S)
    else:
        L, Lam, omega, beta = np.zeros((N, N)), np.zeros((N, N)), np.zeros(S), penalty.beta
    AL = op.apply(L)

    control = ADMMControl(stopping, penalty, beta, verbose, start)
    P = np.zeros((N, N))
    bound, y_feasible, violation, rgap, rank = 0.0, np.zeros(S), float("inf"), float("inf"), 0
    program_tried = False             # the full-rank linear program is tried at most once
    for _ in control.iterations():
        beta = control.beta
        q = np.clip(AL - omega, lo, hi)                                    # (10)
        P, rank = _shrink_eigenvalues(L + Lam, 1.0 / beta)                 # (11)
        L_new, AL_new = least_squares_step(op, K_inv, P - Lam, q + omega)  # (12)-(13)
        r_P, r_q = P - L_new, AL_new - q
        Lam -= eta * r_P                                                   # multipliers
        omega -= eta * r_q
        dL, dAL = L_new - L, AL_new - AL
        L, AL = L_new, AL_new

        norm_rP, norm_rq = np.linalg.norm(r_P), np.linalg.norm(r_q)
        e1 = 2.0 * norm_rP / max(np.linalg.norm(P) + np.linalg.norm(L), 1e-300)
        e2 = 2.0 * norm_rq / max(np.linalg.norm(q) + np.linalg.norm(AL), 1e-300)
        control.record(float(np.trace(P)), e1, e2, rank)
        if control.balance_due():
            factor = control.balance(norm_rP, norm_rq, np.linalg.norm(dL), np.linalg.norm(dAL))
            if factor != 1.0:
                Lam /= factor
                omega /= factor

        if control.check_due():
            violation = box_violation(op.apply(P), lo, hi)
            bound, y_feasible = certified_lower_bound(op, lo, hi, control.beta * omega)
            rgap = relative_gap(control.objective, bound)
            control.record_check(violation, bound, rgap)
            if (not program_tried and rank == N and control.iteration >= LINEAR_PROGRAM_FROM
                    and violation > stopping.feas_tol):
                # full rank: the cone is inactive, and with more active secants than N(N+1)/2 the problem
                # is degenerate (the ADMM crawls); its linear program is exact when its P is definite
                program_tried = True
                solved = full_rank_linear_program(op.V, lo, hi)
                if solved is not None:
                    violation_lp = box_violation(op.apply(solved[0]), lo, hi)
                    bound_lp, y_lp = certified_lower_bound(op, lo, hi, solved[1])
                    rgap_lp = relative_gap(float(np.trace(solved[0])), bound_lp)
                    if violation_lp <= stopping.feas_tol and rgap_lp <= stopping.gap_tol:
                        P, violation, bound, y_feasible, rgap = solved[0], violation_lp, bound_lp, y_lp, rgap_lp
                        end_by_linear_program(control, violation, rgap)
                        break
            if control.stop(violation, rgap):
                break

    state = ADMMState(L, Lam, omega, control.beta, basis, K_inv)
    if basis is not None:
        P = basis @ P @ basis.T
        violation = box_violation(full_op.explicit().apply(P), lo, hi)
        bound, y_feasible = certified_lower_bound(full_op, lo, hi, y_feasible)
        rgap = relative_gap(float(np.trace(P)), bound)
        control.demote(violation, rgap, "converged in the secant span, but on the original secants")
    min_eig = float(np.linalg.eigvalsh(P)[0]) if N else 0.0
    # rgap: that of the last check (or of the original secants), which judged the status
    return build_result(
        problem, "P", P, float(np.trace(P)), bound, rgap=rgap, status=control.status, message=control.message,
        method="admm", solver="numax_admm", max_violation=violation, min_eigenvalue=min_eig,
        iterations=control.iteration, start=start, history=control.traces(),
        extra={"y": y_feasible, "rank": rank, "state": state, "reduced_dim": N},
    )


def solve_numax_admm(instance, **options) -> SolveResult:
    """Solve a :class:`~sdpembed.problems.NuMaxInstance` with ADMM (Algorithm 1).

    Point-form instances are solved on all their pairwise secants, materialised; use
    column generation for large point sets. ``options`` are those of :func:`box_trace_admm`.
    """
    V = instance.secant_matrix
    lo, hi = instance.bounds(V.shape[0])
    return box_trace_admm(V, lo, hi, problem=instance.problem, **options)
