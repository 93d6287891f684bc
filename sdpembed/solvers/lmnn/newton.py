"""The Newton step of the LMNN interior point (:func:`sdpembed.solvers.lmnn.hinge_ipm.hinge_ipm`).

One Mehrotra predictor–corrector step with the HKM direction for the slack SDP of thesis
Sec. 2.1.3 (:func:`newton_step`). The Newton system is small because ξ is eliminated triplet by
triplet: only a p × p matrix, p = d(d+1)/2 per metric, is solved,

    H = 𝒜* D 𝒜 + M⁻¹ ⊛ X,      D_t = 1 / (ξ_t/β_t + s_t/α_t),

(𝒜(M)_t = tr(M A_t); ⊛ the symmetric Kronecker product of the HKM direction; both parts formed by
:class:`~sdpembed.solvers.lmnn.pair_system.PairSystem`). Small systems are factored. Large ones
(T > 4p, one metric) are solved by PCG with the exact operator, preconditioned by the part of H from
the 3p triplets of largest D_t in the early steps and, once residuals and gap are below 10⁻³, from
the 2p of largest D_t, rank-k updates in float32 (:func:`_newton_solver`), a few PCG iterations per
solve, to a relative residual tied to the interior point's progress (inexact Newton, :func:`newton_step`).
From p = 7,000 (d ≥ 118) no p × p matrix is formed at all (T·p² flops to form, p³/3 to factor
and 8p² bytes each: minutes a step and gigabytes at d = 164): PCG runs in the congruence that makes
the HKM term diagonal, preconditioned by the exact part of the triplets of largest D_t (Woodbury)
plus the diagonal of the rest (:func:`_matrix_free_solver`), to the same relative residual.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the Newton system of the slack SDP of Sec. 2.1.3 (the loss
   (2.11)) and of the multi-metric SDP (2.17).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg

from ..lapack import blas
from .pair_system import PairSystem, symmetric_part

__all__ = ["cholesky_solver", "max_step_pos", "max_step_psd", "newton_step", "pcg"]

#: Triplets per svec coordinate beyond which Newton systems are solved by PCG (see :func:`_newton_solver`).
_PCG_RATIO = 4

#: Triplets per svec coordinate (those of largest D_t) in the early PCG preconditioner (see :func:`_newton_solver`).
_PCG_EARLY = 3

#: A preconditioner carried to the next Newton step (:func:`_carried_gram`) keeps a triplet's weight, scaled by the
#: median change of D, while it is within this factor of the new D_t; only the others are updated.
_PCG_CARRY_FACTOR = 2.0

#: svec dimension p from which the preconditioner is carried: its rank-k part costs 3p³ flops a step, a PCG
#: iteration about T·d² (T ≈ 8p triplets), so the formation saved against the few PCG iterations a carried
#: preconditioner adds grows as d²; below (digits-pca30, p = 465) the added iterations cost more than it saves.
_PCG_CARRY_FROM = 1000

#: ... unless at least this fraction of the carried rows would be updated: then it is formed afresh (0: always).
_PCG_CARRY_MAX = 0.5

#: Ridges ρ·tr(H)/p tried in turn on a Newton matrix H whose Cholesky factorisation fails (:func:`_cho_factor`).
_RIDGES = (1e-12, 1e-10, 1e-8, 1e-6)

#: Relative residual and iteration limit of those PCG solves.
_PCG_TOL = 1e-9
_PCG_MAXITER = 60

#: The formed-preconditioner PCG solves (:func:`_newton_solver`) asked for a relative residual of at least this
#: run first with 𝒜 and 𝒜* in float32 (``PairSystem.apply`` and ``adjoint``: half the memory traffic of the
#: operator's products), then on with the exact operator from that point until its own residual is below the
#: tolerance. The float32 operator differs from the exact one by ~4e-7 relative, so below this tolerance its
#: point would need about as many float64 iterations as a solve from scratch.
_ROUGH_OPERATOR_TOL = 1e-6

#: svec dimension p from which single-metric Newton systems are solved matrix-free (:func:`_matrix_free_solver`):
#: forming a p × p matrix costs T·p² flops and factoring it p³/3, minutes a step at d = 164 (p = 13,530). At
#: d = 100 (p = 5,050, T = 3.3p) the formed matrix is the faster: an exact direction per step, where the
#: matrix-free PCG reaches its iteration limit above tolerance and the interior point stalls (the working set's
#: triplets all weigh more than the barrier term, so the Newton matrix is far from low rank plus diagonal).
_MATRIX_FREE_FROM = 7000

#: Iteration limit of the matrix-free PCG solves (their relative residual target is ``_PCG_TOL``).
_MATRIX_FREE_MAXITER = 400

#: Triplets of largest D_t whose part of the Newton matrix the matrix-free preconditioner holds exactly.
_MATRIX_FREE_RANK = 1500

#: Inexact Newton in the matrix-free solves: relative PCG residual ``_INEXACT_FACTOR`` times the interior point's
#: worst relative measure (residuals, gap), at most ``_INEXACT_MAX`` and at least ``_PCG_TOL``.
_INEXACT_FACTOR = 1e-2
_INEXACT_MAX = 1e-4


def max_step_psd(S: np.ndarray, dS: np.ndarray) -> float:
    """Largest step keeping a stack of positive definite matrices positive semidefinite.

    Parameters
    ----------
    S : ndarray of shape (m, p, p)
        Symmetric positive definite matrices (an interior point's metric blocks or their duals).
    dS : ndarray of shape (m, p, p)
        Symmetric directions.

    Returns
    -------
    float
        The largest t with S + t dS ⪰ 0 for every block, or ``inf`` if no t > 0 leaves the cone:
        −1/λ_min(L⁻¹ dS L⁻ᵀ) with S = L Lᵀ.

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007, Sec. 2.1.3 (the SDP of the loss (2.11) these interior points solve).
    """
    L = np.linalg.cholesky(S)
    Linv = np.linalg.inv(L)
    lam = np.linalg.eigvalsh(Linv @ dS @ Linv.transpose(0, 2, 1)).min()
    return np.inf if lam >= 0.0 else -1.0 / lam


def max_step_pos(v: np.ndarray, dv: np.ndarray) -> float:
    """Largest step keeping a positive vector nonnegative.

    Parameters
    ----------
    v : ndarray
        Positive entries (slacks or multipliers of an interior point).
    dv : ndarray
        A direction of the same shape.

    Returns
    -------
    float
        min over dv_i < 0 of −v_i / dv_i, or ``inf`` if no entry decreases.

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007, Sec. 2.1.3 (the SDP of the loss (2.11) these interior points solve).
    """
    neg = dv < 0.0
    return float(np.min(-v[neg] / dv[neg])) if np.any(neg) else np.inf


def cholesky_solver(factor: tuple[np.ndarray, bool]) -> Callable[[np.ndarray], np.ndarray]:
    """z ↦ H⁻¹z for a vector z, from ``factor`` = (c, lower) of ``cho_factor(H)`` (float32 or float64), returned in
    float64.

    Two BLAS triangular solves (``trsv``) with the factor: LAPACK's ``potrs``, behind ``cho_solve``, goes through
    ``trsm`` with one right-hand side, several times slower on the p × p factors of the PCG preconditioners, which
    are applied at every PCG iteration. The same two triangular systems are solved, so the result is that of
    ``cho_solve`` to rounding.

    References
    ----------
    .. [1] E. Anderson et al., "LAPACK Users' Guide", 3rd ed., SIAM, 1999: the Cholesky solve of xPOTRS as two
       triangular solves (BLAS xTRSV).
    """
    c, lower = factor
    c = np.asfortranarray(c)
    trsv = blas.strsv if c.dtype == np.float32 else blas.dtrsv
    lower_flag = 1 if lower else 0

    def solve(z: np.ndarray) -> np.ndarray:
        if c.shape[0] == 0:                    # BLAS takes no empty vector
            return np.zeros(0)
        # lower: H = LLᵀ, solve L w = z, then Lᵀ x = w; upper: H = UᵀU, solve Uᵀ w = z, then U x = w
        w = trsv(c, np.asarray(z, dtype=c.dtype), lower=lower_flag, trans=1 - lower_flag)
        return np.asarray(trsv(c, w, lower=lower_flag, trans=lower_flag, overwrite_x=1), dtype=np.float64)

    return solve


def _cho_factor(H: np.ndarray):
    """Cholesky factor of the SPD matrix H, with a ridge ρ·tr(H)/p on its diagonal if rounding makes it indefinite,
    ρ from ``_RIDGES`` in turn (LinAlgError if the last fails). Near the boundary the HKM term M⁻¹ ⊛ X spans
    many decades and a fixed 10⁻¹² ridge can be too small; the ridge only perturbs the Newton direction, and the
    interior point recomputes its residuals exactly from every iterate, so a larger one costs accuracy of one
    step, not of the solution."""
    try:
        return scipy.linalg.cho_factor(H, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        pass
    scale = float(np.trace(H)) / H.shape[0]
    diagonal = np.einsum("ii->i", H).copy()
    for rho in _RIDGES:
        np.einsum("ii->i", H)[...] = diagonal + rho * scale
        try:
            return scipy.linalg.cho_factor(H, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            continue
        finally:
            np.einsum("ii->i", H)[...] = diagonal
    raise np.linalg.LinAlgError(f"Newton matrix not positive definite even with a ridge {_RIDGES[-1]:g}·tr(H)/p")


def _newton_solver(system: PairSystem, D: np.ndarray, Minv: np.ndarray, X: np.ndarray, *, iterative: bool = True,
                   tol: float = _PCG_TOL, carry: dict | None = None):
    """A solver of the Newton system [𝒜*D𝒜 + K] v = r of :func:`~sdpembed.solvers.lmnn.hinge_ipm.hinge_ipm`,
    K = M⁻¹ ⊛ X the HKM term (``Minv`` = M⁻¹).

    Directly (Cholesky of the formed matrix, T·p² flops) when the working set has at most
    ``_PCG_RATIO`` triplets per svec coordinate or several metric blocks. Otherwise by
    preconditioned conjugate gradients with the exact operator (one 𝒜 and one 𝒜* per
    iteration, O(n_pairs·d²) flops), preconditioned by

    * early (not ``iterative``): the Newton matrix of the ``_PCG_EARLY · p`` triplets of largest D_t,
      rank-k updates in float32, and K. The early D_t are spread over one or two decades only, so the
      preconditioner needs more triplets than the late one, but not all: PCG then needs a few
      iterations at the early steps' looser inexact-Newton tolerance, which costs less than the rank-k
      update of the whole working set (T·p² flops) at T ≫ 3p;
    * late (``iterative``: the interior point's residuals and gap below 10⁻³, see
      :func:`~sdpembed.solvers.lmnn.hinge_ipm.hinge_ipm`): the Newton matrix of only the
      ``_PCG_RATIO/2 · p`` triplets of largest D_t (rank-k updates in float32 as well) and the HKM
      term K. Late in the method the
      triplets away from their margin have D_t → 0 (α_t → 0 with s_t > 0, or α_t → μ with
      ξ_t > 0), so the preconditioned matrix tends to I and PCG needs a few iterations.

    The preconditioner is formed (K included), factored and applied in float32 (:func:`_float32_factor`):
    its rank-k part is float32 already, and the accuracy of the direction is that of PCG with the exact
    float64 operator; a float32 factorisation that fails (rounding at a nearly singular K) is redone in
    float64. PCG stops at the relative residual ``tol`` (inexact Newton, as in :func:`_matrix_free_solver`:
    see :func:`newton_step`); if it does not reach it in ``_PCG_MAXITER`` iterations, the full float64 matrix
    is formed and factored after all. At ``tol`` ≥ ``_ROUGH_OPERATOR_TOL`` PCG first runs with the operator's
    products 𝒜 and 𝒜* in float32 (entries to ~10⁻⁷ relative, far below such a tolerance), and the exact
    operator then continues from its point, which it returns at once when its residual is below ``tol``
    already: the direction meets the same residual in the exact Newton matrix either way.

    With ``carry`` (a dict kept by the interior point across its Newton steps), p ≥ ``_PCG_CARRY_FROM`` and in
    the early steps, the preconditioner's rank-k part is carried from the previous step and only its rows whose
    weight moved by more than ``_PCG_CARRY_FACTOR`` are updated (:func:`_carried_gram`); K is new at every step,
    so H is factored again (p³/3 flops against the 3p³ of the rank-k part). Not in the late steps: there the
    D_t spread over decades (those at the margin grow as 1/ν, the others fall as ν), and a carried
    preconditioner costs more PCG iterations than the 2p³ flops of the late rank-k part it saves.

    The operator applies K as svec(sym(M⁻¹ V X)) (4d³ flops on d × d blocks) instead of the p × p
    matrix-vector product, which reads the whole of K (13 MB at p = 1,275) at every PCG iteration.
    """
    p = system.svec_dim
    if system.n_blocks != 1 or system.n_triplets <= _PCG_RATIO * p:
        factor = _cho_factor(system.gram(D) + system.skron(Minv, X))
        return cholesky_solver(factor)
    rank = _PCG_RATIO * p // 2 if iterative else _PCG_EARLY * p
    top = np.arange(D.size) if rank >= D.size else np.sort(np.argpartition(-D, rank)[:rank])
    if p < _PCG_CARRY_FROM or iterative:
        carry = None
    gram = None if carry is None else _carried_gram(system, D, top, carry)
    precondition = _float32_factor(system, D, top, Minv, X, gram=gram, carry=carry)
    state: dict = {}

    def operator(v: np.ndarray, dtype: type = np.float64) -> np.ndarray:
        V = system.smat(v)
        return system.svec(system.adjoint(D * system.apply(V, dtype), dtype) + symmetric_part(Minv @ V @ X))

    def rough_operator(v: np.ndarray) -> np.ndarray:
        return operator(v, np.float32)

    def solve(r: np.ndarray) -> np.ndarray:
        if "factor" not in state:
            # 𝒜 in float32 while the residual asked for is loose; then PCG with the exact operator from there, which
            # returns at once when the exact residual is already below tol (it continues in float64 otherwise)
            guess = pcg(rough_operator, r, precondition, tol=tol)[0] if tol >= _ROUGH_OPERATOR_TOL else None
            x, ok = pcg(operator, r, precondition, tol=tol, guess=guess)
            if ok:
                return x
            state["factor"] = cholesky_solver(_cho_factor(system.gram(D) + system.skron(Minv, X)))
        return state["factor"](r)

    return solve


def _carried_gram(system: PairSystem, D: np.ndarray, top: np.ndarray, carry: dict) -> np.ndarray | None:
    """The rank-k part of the PCG preconditioner, Σ_{t ∈ R} D̃_t c_t c_tᵀ in float32, updated from the previous
    Newton step's (``carry``, same ``system``) instead of formed from all its rows again; None (and ``carry``
    reset) when it is to be formed afresh by :func:`_float32_factor`.

    The previous rows R₀ with weights D̃ are kept, all weights scaled by the median ratio m of D_t / D̃_t over
    R₀ (the interior point moves most D_t of the top triplets by a common factor); a triplet whose D_t is
    not within ``_PCG_CARRY_FACTOR`` of m·D̃_t gets its new D_t by a rank-k update with the signed differences,
    and the triplets of ``top`` not in R₀ are added with their D_t. So every held weight is within that
    factor of the triplet's current D_t: the rank-k part lies between 1/``_PCG_CARRY_FACTOR`` and
    ``_PCG_CARRY_FACTOR`` times Σ_{t ∈ R} D_t c_t c_tᵀ in the Loewner order; the updates cost the changed rows' rank-k
    flops, not those of all of R. At least ``_PCG_CARRY_MAX`` of R₀ to update: formed afresh. The state
    left in ``carry`` (rows, weights, float32 matrix) is the one for the next step.
    """
    if carry.get("system") is not system:
        carry.clear()
        carry.update(system=system, rows=top, weights=D[top].copy(), gram=None)
        return None
    rows, weights, gram = carry["rows"], carry["weights"], carry["gram"]
    scale = float(np.median(D[rows] / weights))
    weights = scale * weights
    ratio = D[rows] / weights
    off = np.flatnonzero((ratio > _PCG_CARRY_FACTOR) | (ratio < 1.0 / _PCG_CARRY_FACTOR))
    if gram is None or off.size >= _PCG_CARRY_MAX * rows.size:
        carry.update(rows=top, weights=D[top].copy(), gram=None)
        return None
    added = np.setdiff1d(top, rows, assume_unique=True)
    changed = np.concatenate([rows[off], added])
    delta = np.zeros_like(D)
    delta[rows[off]] = D[rows[off]] - weights[off]
    delta[added] = D[added]
    gram = gram * np.float32(scale)
    for sign in (1.0, -1.0):
        part = changed[sign * delta[changed] > 0.0]
        if part.size:
            gram += np.float32(sign) * system.gram_subset(np.abs(delta), part, np.float32, accumulate=np.float32)
    weights[off] = D[rows[off]]
    carry.update(rows=np.concatenate([rows, added]), weights=np.concatenate([weights, D[added]]), gram=gram)
    return gram


def _float32_factor(system: PairSystem, D: np.ndarray, rows: np.ndarray, Minv: np.ndarray,
                    X: np.ndarray, *, gram: np.ndarray | None = None,
                    carry: dict | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """z ↦ H⁻¹z for H = Σ_{t ∈ rows} D_t c_t c_tᵀ + M⁻¹ ⊛ X, H formed, factored and solved in float32 (half the
    memory traffic of float64 in the factorisation and in every triangular solve of PCG); in float64 if the
    float32 Cholesky fails. ``gram``, if given, is the float32 rank-k part to use instead of the rows'
    (:func:`_carried_gram`)."""
    if gram is None:
        gram = system.gram_subset(D, rows, np.float32, accumulate=np.float32)
        if carry is not None:
            carry["gram"] = gram
    H = system.skron(Minv.astype(np.float32), X.astype(np.float32))
    H += gram                            # in place: ``gram`` may be the carried one (newton._carried_gram)
    try:
        factor = scipy.linalg.cho_factor(H, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        factor = _cho_factor(system.gram_subset(D, rows, np.float32) + system.skron(Minv, X))
    return cholesky_solver(factor)


def _matrix_free_solver(system: PairSystem, D: np.ndarray, M: np.ndarray, X: np.ndarray, tol: float = _PCG_TOL):
    """A solver of the Newton system [𝒜*D𝒜 + M⁻¹ ⊛ X] v = r of one metric that never forms a p × p matrix.

    The HKM term is diagonalised by a congruence: with M = LLᵀ and LᵀXL = VΛVᵀ, Q = LV has
    QᵀM⁻¹Q = I and QᵀXQ = Λ, and with V = QYQᵀ the system becomes

        Σ_t D_t ⟨Ã_t, Y⟩ Ã_t + (YΛ + ΛY)/2 = QᵀRQ,        Ã_t = QᵀA_tQ,

    whose second part is diagonal in svec coordinates, (λ_i + λ_j)/2. It is solved by PCG with the
    exact operator (one 𝒜 and one 𝒜* of the congruent pairs, :meth:`PairSystem.congruent`, O(n_pairs·d²)
    flops) and the Jacobi preconditioner diag(𝒜̃*D𝒜̃) + (λ_i + λ_j)/2 (:meth:`PairSystem.diagonal`):
    exact for the barrier part, which the interior point makes dominant in the directions the working
    set does not pin down. Per Newton step: two d × d factorisations and one (n_pairs + T)·d² diagonal;
    memory O((n_pairs + T)·d). PCG stops at the relative residual ``tol`` (inexact Newton: see
    :func:`newton_step`) or after ``_MATRIX_FREE_MAXITER`` iterations, and the direction is used as it is:
    the interior point recomputes its residuals exactly at every step (an infeasible-start method), so an
    inexact direction costs steps, not correctness.
    """
    L = np.linalg.cholesky(M[0])
    S = L.T @ X[0] @ L
    lam, V = np.linalg.eigh(0.5 * (S + S.T))
    Q = L @ V
    tilde = system.congruent(Q)
    i, j = system.iu
    kron = 0.5 * (lam[i] + lam[j])
    rank = min(_MATRIX_FREE_RANK, D.size)
    top = np.sort(np.argpartition(-D, rank - 1)[:rank]) if rank else np.empty(0, dtype=np.int64)
    rest = D.copy()
    rest[top] = 0.0
    inverse_diagonal = 1.0 / (tilde.diagonal(rest) + kron)
    F = tilde._triplet_features_t(top)                                   # (p, r)
    G = F * inverse_diagonal[:, None]                                    # Δ⁻¹F
    core_solve = cholesky_solver(_cho_factor(F.T @ G + np.diag(1.0 / D[top])))     # D_B⁻¹ + FᵀΔ⁻¹F

    def precondition(z: np.ndarray) -> np.ndarray:
        # (Δ + F D_B Fᵀ)⁻¹ z by the Woodbury identity
        return inverse_diagonal * z - G @ core_solve(G.T @ z)

    def operator(y: np.ndarray) -> np.ndarray:
        return tilde.svec(tilde.adjoint(D * tilde.apply(tilde.smat(y)))) + kron * y

    def solve(r: np.ndarray) -> np.ndarray:
        R = system.smat(r)[0]
        y, _ = pcg(operator, system.svec((Q.T @ R @ Q)[None]), precondition, maxiter=_MATRIX_FREE_MAXITER, tol=tol)
        return system.svec((Q @ system.smat(y)[0] @ Q.T)[None])

    return solve


def pcg(operator: Callable[[np.ndarray], np.ndarray], r: np.ndarray,
        precondition: Callable[[np.ndarray], np.ndarray], *, maxiter: int | None = None,
        tol: float = _PCG_TOL, guess: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """Preconditioned conjugate gradients for ``operator(x) = r``, an SPD operator on svec vectors.

    The shared solver of the LMNN interior point: its Newton systems (:func:`newton_step`) and the
    margin system of :func:`~sdpembed.solvers.lmnn.hinge_ipm.polish_multipliers`.

    Parameters
    ----------
    operator, precondition : callable
        x ↦ Ax and z ↦ P⁻¹z, both SPD.
    r : ndarray of shape (p,)
        Right-hand side.
    guess : ndarray of shape (p,), optional
        The starting point (by default the preconditioned right-hand side); returned at once if its residual is
        below ``tol`` already.
    maxiter : int, optional
        Iterations at most (``_PCG_MAXITER`` by default).
    tol : float
        Relative residual ‖r − Ax‖ ≤ tol·‖r‖ at which it stops.

    Returns
    -------
    x : ndarray of shape (p,)
    reached : bool
        Whether the relative residual ``tol`` was reached.
    """
    maxiter = _PCG_MAXITER if maxiter is None else maxiter
    norm_r = float(np.linalg.norm(r))
    if norm_r == 0.0:
        return np.zeros_like(r), True
    x = precondition(r) if guess is None else np.array(guess, dtype=np.float64)
    res = r - operator(x)
    if np.linalg.norm(res) <= tol * norm_r:
        return x, True
    z = precondition(res)
    direction = z.copy()
    rz = float(res @ z)
    for _ in range(maxiter):
        if np.linalg.norm(res) <= tol * norm_r:
            return x, True
        Ad = operator(direction)
        step = rz / float(direction @ Ad)
        x += step * direction
        res -= step * Ad
        z = precondition(res)
        rz, rz_old = float(res @ z), rz
        direction = z + (rz / rz_old) * direction
    return x, bool(np.linalg.norm(res) <= tol * norm_r)


def newton_step(system: PairSystem, C0: np.ndarray, mu: float, M: np.ndarray, X: np.ndarray, alpha: np.ndarray,
                beta: np.ndarray, xi: np.ndarray, s: np.ndarray, nu: float, n_cone: int,
                iterative: bool = False, accuracy: float = 0.0, carry: dict | None = None) -> tuple[np.ndarray, ...]:
    """One Mehrotra predictor–corrector step of :func:`~sdpembed.solvers.lmnn.hinge_ipm.hinge_ipm` (HKM
    direction) from the iterate (M, X, α, β, ξ, s) with mean complementarity ``nu`` over ``n_cone``
    cone dimensions; returns the next iterate in that order. ``iterative`` allows the late PCG
    preconditioner (:func:`_newton_solver`). ``accuracy``, the interior point's worst relative measure
    (residuals, gap), sets the relative residual of the PCG solves, formed preconditioner or matrix-free
    (inexact Newton):
    ``_INEXACT_FACTOR``·accuracy within [``_PCG_TOL``, ``_INEXACT_MAX``]; early steps, far from the
    optimum, need no direction accurate to 10⁻⁹, and the PCG residual falls by about one decade per
    fixed number of iterations. ``carry``: the state :func:`_newton_solver` carries its preconditioner in from
    one step to the next (an empty dict at the first step). Raises ``LinAlgError`` when rounding leaves no
    interior step (``_inside``)."""
    R1 = C0 + system.adjoint(alpha) - X
    R2 = mu - alpha - beta
    R3 = 1.0 + system.apply(M) + s - xi
    Mc = np.linalg.inv(np.linalg.cholesky(M))
    Minv = Mc.transpose(0, 2, 1) @ Mc
    D = 1.0 / (xi / beta + s / alpha)
    inexact = min(_INEXACT_MAX, max(_PCG_TOL, _INEXACT_FACTOR * accuracy))
    if system.n_blocks == 1 and system.svec_dim >= _MATRIX_FREE_FROM:
        solve = _matrix_free_solver(system, D, M, X, tol=inexact)
    else:
        solve = _newton_solver(system, D, Minv, X, iterative=iterative, tol=inexact, carry=carry)

    def direction(rX: np.ndarray, ra: np.ndarray, rb: np.ndarray) -> tuple:
        g = R3 - (rb - xi * R2) / beta + ra / alpha
        rhs = system.svec(rX - R1 - system.adjoint(D * g))
        dM = system.smat(solve(rhs))
        dalpha = D * (system.apply(dM) + g)
        dX = R1 + system.adjoint(dalpha)
        dbeta = R2 - dalpha
        dxi = (rb - xi * dbeta) / beta
        ds = (ra - s * dalpha) / alpha
        return dM, dX, dalpha, dbeta, dxi, ds

    def steps(dM, dX, dalpha, dbeta, dxi, ds) -> tuple[float, float]:
        tp = min(max_step_psd(M, dM), max_step_pos(xi, dxi), max_step_pos(s, ds))
        td = min(max_step_psd(X, dX), max_step_pos(alpha, dalpha), max_step_pos(beta, dbeta))
        return tp, td

    # predictor (affine scaling, σ = 0)
    dM, dX, dalpha, dbeta, dxi, ds = direction(-X, -alpha * s, -beta * xi)
    tp, td = steps(dM, dX, dalpha, dbeta, dxi, ds)
    tp, td = min(1.0, tp), min(1.0, td)
    nu_aff = (float(np.sum((M + tp * dM) * (X + td * dX))) + float((alpha + td * dalpha) @ (s + tp * ds))
              + float((beta + td * dbeta) @ (xi + tp * dxi))) / n_cone
    sigma = min(1.0, max(0.0, nu_aff / nu)) ** 3
    # corrector: centring σν and the second-order terms of the predictor
    rX = sigma * nu * Minv - X - symmetric_part(Minv @ dM @ dX)
    dM, dX, dalpha, dbeta, dxi, ds = direction(
        rX, sigma * nu - alpha * s - dalpha * ds, sigma * nu - beta * xi - dbeta * dxi)
    tp, td = steps(dM, dX, dalpha, dbeta, dxi, ds)
    M_new, tp = _inside(M, dM, min(1.0, 0.98 * tp))
    X_new, td = _inside(X, dX, min(1.0, 0.98 * td))
    return M_new, X_new, alpha + td * dalpha, beta + td * dbeta, xi + tp * dxi, s + tp * ds


def _inside(S: np.ndarray, dS: np.ndarray, t: float) -> tuple[np.ndarray, float]:
    """S + t'·dS (symmetrised) and t', for the largest t' of t, t/2, …, t/2⁴ whose blocks pass a Cholesky
    factorisation: the step to 0.98 of the boundary (:func:`max_step_psd`) can leave the cone by rounding when S is
    ill-conditioned; a shorter step keeps the iterate interior. LinAlgError if none does."""
    for _ in range(5):
        new = symmetric_part(S + t * dS)
        try:
            np.linalg.cholesky(new)
            return new, t
        except np.linalg.LinAlgError:
            t *= 0.5
    raise np.linalg.LinAlgError("rounding left the cone at every step tried")
