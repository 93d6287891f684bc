"""MVU out-of-sample extension (Weinberger thesis, Sec. 3.1.10): a hand-written solver for the
small SDP of (3.31)–(3.33), batched over many new points, with a certified lower bound.

The SDP, its reduction to the convex problem (P) in (y, s), the closed-form dual (D) and the
certified bound are in :mod:`sdpembed.problems.mvu_oos` (:func:`~sdpembed.problems.mvu_oos.dual_bound`);
the notation (ρ_i, a_i, λ, μ, s*(y)) is that of its docstring.

The algorithm
-------------
With |ρ_i| ≤ t_i, (P) is a linear program over one second-order cone in x = (y, s, t):

    minimise 1ᵀt + s   s.t.   t − ρ ≥ 0,   t + ρ ≥ 0,   (s + 1, s − 1, 2y) ∈ Q^{r+2},

(Q = {(x₀, x₁): x₀ ≥ ‖x₁‖}; the last constraint is 4s ≥ 4‖y‖², i.e. (3.30) again), whose
conic dual is (D) with λ = z_u − z_v. We solve it with a primal–dual interior-point method —
Newton steps on the perturbed KKT system with Nesterov–Todd scaling and Mehrotra's
predictor–corrector, as in CVXOPT's cone solvers [2] — started from the strictly feasible primal–dual pair
y = 0, s = 1, t = |ρ| + 1, z_u = z_v = ½, z_c = e. Each Newton system Gᵀ W⁻² G Δx = rhs
has a diagonal t-block, which is eliminated, leaving one (r+1)×(r+1) symmetric positive
definite system per point,

    [Σ_i 4 d_u d_v / (d_u + d_v) p_i p_iᵀ + G_cᵀ W_c⁻² G_c] Δ(y, s) = rhs',   p_i = (−2y_i, 1),

(d_u, d_v the orthant scalings z/σ, W_c the cone's scaling). All points are stepped at once
with batched solves (numpy; no loop over points), and each retires when its **certified**
gap f(y, s*(y)) − g(λ) is at most ``tol``: the iteration count is whatever the certificate
needs (typically 6–12), and ``converged`` reports the points whose certificate fell short.

*Active-set polish.* Near the optimum (complementarity gap ≤ 10⁻⁵ relative) the iterate
reveals which residuals vanish (|ρ_i| < 1 − |λ_i|) and whether the cone is active
(s − ‖y‖² < μ); the KKT conditions restricted to that active set form a square system in
(y, s, λ, μ) — quadratic only through μy and ‖y‖² — which a few Newton steps solve to
machine precision (:func:`_polish`). The polished point and multipliers replace the
interior-point ones only where they improve the certified objective or bound, so the method
is exact (gap ~1e-14 relative) whenever the active set is identified, and never worse than
the interior-point iterate otherwise.

The primal value is always evaluated at s*(y) = max(‖y‖², c_(j*)), the exact minimiser of
f over s for the given y: c_i = 2y_iᵀy − a_i and c_(j*) is its ⌈(k−1)/2⌉-th smallest value
(the weighted median of Σ_i |s − c_i| + s), or ‖y‖² when k = 1. So the returned S is
feasible by construction (exact identity block, s ≥ ‖y‖²) and within the certified gap of
the optimum. Each point's data are first scaled by L² = max_i max(‖y_i‖², D_i) (f and g
scale by L², y by L), so the same start suits every point.

Refinement ("sdp cg")
---------------------
The thesis also refines the SDP placement by gradient descent on the variational MVU energy
(3.26) of the local patch. With the training embedding fixed, that is, for the new point,

    E(y) = Σ_i (‖y − y_i‖² − D_i)²,

minimised by :func:`refine_points` from the SDP point with a few damped Newton steps (the
Hessian 8Σ(y − y_i)(y − y_i)ᵀ + 4(Σe_i) I with Σe_i clipped at 0, e_i = ‖y − y_i‖² − D_i, and
an Armijo line search); a step is only taken when it decreases E, so E never increases.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the out-of-sample SDP (3.30)–(3.33) of Sec. 3.1.10 and the
   refinement of the placed point by the energy (3.26).
.. [2] L. Vandenberghe, "The CVXOPT linear and quadratic cone program solvers", technical note,
   University of California, Los Angeles, 2010. Implemented here: the Nesterov–Todd scaling and
   predictor–corrector of the cone program solvers.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

from ..._validate import as_matrix, check_positive_int
from ...problems.mvu_oos import dual_bound, primal_objective
from ...results import SolveResult, build_result

__all__ = [
    "Placement",
    "neighbour_arrays",
    "place_points",
    "refine_points",
    "solve_mvu_oos",
    "stress",
]

#: Fraction of the step to the boundary taken by the interior-point method.
_STEP_FRACTION = 0.99
#: The active-set polish is tried once the complementarity gap is below this (relative).
_POLISH_FROM = 1e-5


class Placement(NamedTuple):
    """New points placed by :func:`place_points` (each array has one row/entry per point)."""

    y: np.ndarray
    """(m, r) embedding coordinates of the new points."""
    s: np.ndarray
    """(m,) the corner s of S = [[I, y], [yᵀ, s]], s ≥ ‖y‖²."""
    objective: np.ndarray
    """(m,) Σ|ŷ_iᵀSŷ_i − D_i| + s at the returned S."""
    dual_bound: np.ndarray
    """(m,) certified lower bound g(λ) on the optimum of each point's SDP."""


# --------------------------------------------------------------------------- validation
def _check_batch(Y_neighbours: object, sqdist: object) -> tuple[np.ndarray, np.ndarray]:
    """Validated float64 arrays (m, k, r) and (m, k), or a ValueError naming the argument."""
    try:
        Y = np.asarray(Y_neighbours, dtype=np.float64)
        D = np.asarray(sqdist, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Y_neighbours and sqdist must be numeric arrays: {exc}") from None
    if Y.ndim != 3:
        raise ValueError(
            f"Y_neighbours must be a 3-D array (m points, k neighbours, r output dimensions), got shape {Y.shape}"
        )
    m, k, r = Y.shape
    if r < 1:
        raise ValueError(f"Y_neighbours must have at least one output dimension, got shape {Y.shape}")
    if D.shape != (m, k):
        raise ValueError(
            f"sqdist must have shape (m, k) = {(m, k)} to match Y_neighbours {Y.shape} (one squared input "
            f"distance per neighbour), got {D.shape}"
        )
    if k < r:
        raise ValueError(
            f"a new point needs at least r = {r} neighbours to be placed in an {r}-D embedding, got k = {k}"
        )
    if not np.all(np.isfinite(Y)):
        raise ValueError("Y_neighbours contains NaN or infinite entries")
    if not np.all(np.isfinite(D)):
        raise ValueError("sqdist contains NaN or infinite entries")
    if np.any(D < 0):
        raise ValueError(f"sqdist must be squared distances (>= 0), got minimum {D.min():.6g}")
    return Y, D


# --------------------------------------------------------------- interior point
# (P) as a linear cone program in x = (y, s, t) ∈ R^(r+1+k):
#     minimise 1ᵀt + s   s.t.   σ_u = t − ρ ≥ 0,   σ_v = t + ρ ≥ 0,   σ_c = (s + 1, s − 1, 2y) ∈ Q^(r+2),
# where Q is the second-order cone {(x₀, x₁) : x₀ ≥ ‖x₁‖}; σ_c ∈ Q ⇔ 4s ≥ 4‖y‖² ⇔ S ⪰ 0 (3.30).
# Its conic dual has z_u, z_v ≥ 0 with z_u + z_v = 1 — λ = z_u − z_v ∈ [−1, 1] — and z_c ∈ Q,
# whose optimal choice turns the dual objective into g(λ) of (D).


def _soc_det(v: np.ndarray) -> np.ndarray:
    """v₀² − ‖v₁‖² for rows v = (v₀, v₁), computed as (v₀ − ‖v₁‖)(v₀ + ‖v₁‖)."""
    norm = np.linalg.norm(v[:, 1:], axis=1)
    return (v[:, 0] - norm) * (v[:, 0] + norm)


def _soc_step(v: np.ndarray, dv: np.ndarray) -> np.ndarray:
    """Largest α ≥ 0 with v + α dv ∈ Q (v in the interior), inf when unbounded.

    (v₀ + αdv₀)² − ‖v₁ + αdv₁‖² = C + 2Bα + Aα² with C > 0; the first positive root is
    C / (−B + √(B² − AC)) whenever one exists (A < 0, or B < 0 with B² ≥ AC); the sign
    condition v₀ + αdv₀ ≥ 0 cannot fail before it.
    """
    A = _soc_det(dv) if dv.shape[1] > 1 else dv[:, 0] ** 2
    B = v[:, 0] * dv[:, 0] - np.einsum("mi,mi->m", v[:, 1:], dv[:, 1:])
    C = _soc_det(v)
    disc = B * B - A * C
    hits = (A < 0) | ((B < 0) & (disc >= 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        root = C / (-B + np.sqrt(np.maximum(disc, 0.0)))
    return np.where(hits & (root > 0), root, np.inf)


def _ratio(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
    """Largest α ≥ 0 with x + α dx ≥ 0 in every column (x > 0), inf when dx ≥ 0."""
    with np.errstate(divide="ignore"):
        steps = np.where(dx < 0, -x / np.where(dx < 0, dx, -1.0), np.inf)
    return steps.min(axis=1)


def _jordan(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Jordan product u ∘ v = (uᵀv, u₀v₁ + v₀u₁) of the second-order cone."""
    out = np.empty_like(u)
    out[:, 0] = np.einsum("mi,mi->m", u, v)
    out[:, 1:] = u[:, :1] * v[:, 1:] + v[:, :1] * u[:, 1:]
    return out


def _jordan_solve(lam: np.ndarray, d: np.ndarray) -> np.ndarray:
    """x with λ ∘ x = d (λ in the interior of Q)."""
    det = _soc_det(lam)
    x = np.empty_like(d)
    x[:, 0] = (lam[:, 0] * d[:, 0] - np.einsum("mi,mi->m", lam[:, 1:], d[:, 1:])) / det
    x[:, 1:] = (d[:, 1:] - x[:, :1] * lam[:, 1:]) / lam[:, :1]
    return x


def _nt_scaling(sc: np.ndarray, zc: np.ndarray):
    """Nesterov–Todd scaling of the second-order cone for the pair (σ_c, z_c), in the
    convention W⁻ᵀσ = Wz = λ of Vandenberghe, *The CVXOPT linear and quadratic cone program
    solvers* (Sec. 4): the symmetric W = β P(ū), where P(u) = 2uuᵀ − det(u) J is the quadratic
    representation (J = diag(1, −I), det u = uᵀJu).

    Derivation: W²z = σ asks for β² P(v) z̄ = σ̄ with v = ū² and σ̄, z̄ the unit-determinant
    normalisations; P(v)z̄ = 2(vᵀz̄)v − Jz̄ = σ̄ gives v = (σ̄ + Jz̄)/(2γ), γ = √((1 + σ̄ᵀz̄)/2),
    then ū = v^{1/2} = (v + e)/√(2(v₀ + 1)) and β = (det σ / det z)^{1/4}. Returns W,
    W⁻¹ = β⁻¹(2Jūūᵀ J − J) and λ_c.
    """
    p = sc.shape[1]
    J = np.r_[1.0, -np.ones(p - 1)]
    ds, dz = np.sqrt(_soc_det(sc)), np.sqrt(_soc_det(zc))
    s_bar, z_bar = sc / ds[:, None], zc / dz[:, None]
    gamma = np.sqrt(0.5 * (1.0 + np.einsum("mi,mi->m", s_bar, z_bar)))
    v = (s_bar + z_bar * J) / (2.0 * gamma[:, None])
    u = v.copy()
    u[:, 0] += 1.0
    u /= np.sqrt(2.0 * (v[:, :1] + 1.0))
    beta = np.sqrt(ds / dz)
    W = 2.0 * u[:, :, None] * u[:, None, :]
    W[:, range(p), range(p)] -= J
    Ju = u * J
    W_inv = 2.0 * Ju[:, :, None] * Ju[:, None, :]
    W_inv[:, range(p), range(p)] -= J
    W *= beta[:, None, None]
    W_inv /= beta[:, None, None]
    return W, W_inv, np.einsum("mij,mj->mi", W, zc)


class _Iterate(NamedTuple):
    """Primal x = (y, s, t), slacks σ = (σ_u, σ_v, σ_c) and dual z = (z_u, z_v, z_c) of the
    active points (a Newton direction has the same fields)."""

    y: np.ndarray
    s: np.ndarray
    t: np.ndarray
    su: np.ndarray
    sv: np.ndarray
    sc: np.ndarray
    zu: np.ndarray
    zv: np.ndarray
    zc: np.ndarray

    def moved(self, d: _Iterate, alpha: np.ndarray) -> _Iterate:
        """self + α d, α one step length per point."""
        return _Iterate(*(v + (alpha if v.ndim == 1 else alpha[:, None]) * dv for v, dv in zip(self, d, strict=True)))


def _apply_G(Y: np.ndarray, y: np.ndarray, s: np.ndarray, t: np.ndarray):
    """G x for the three cone blocks of σ = h − Gx, x = (y, s, t)."""
    rho_lin = -2.0 * np.einsum("mkr,mr->mk", Y, y) + s[:, None]          # ρ − a
    Gc = np.empty((y.shape[0], y.shape[1] + 2))
    Gc[:, 0], Gc[:, 1], Gc[:, 2:] = -s, -s, -2.0 * y
    return -t + rho_lin, -t - rho_lin, Gc


def _apply_Gt(Y: np.ndarray, vu: np.ndarray, vv: np.ndarray, vc: np.ndarray):
    """Gᵀ v for v = (v_u, v_v, v_c): its (y, s, t) components."""
    diff = vu - vv
    gy = -2.0 * np.einsum("mk,mkr->mr", diff, Y) - 2.0 * vc[:, 2:]
    gs = diff.sum(axis=1) - vc[:, 0] - vc[:, 1]
    return gy, gs, -vu - vv


class _Newton(NamedTuple):
    """The Newton system of one interior-point iteration: residuals, scalings and the
    (r+1)×(r+1) Schur complement M of Gᵀ W⁻² G (shared by predictor and corrector)."""

    Y: np.ndarray
    it: _Iterate
    rp: tuple
    rd: tuple
    du: np.ndarray
    dv: np.ndarray
    W: np.ndarray
    W_inv: np.ndarray
    W_inv2: np.ndarray
    lam: tuple
    P: np.ndarray
    M: np.ndarray


def _newton_system(Y: np.ndarray, a: np.ndarray, it: _Iterate) -> _Newton:
    """Residuals r_p = Gx + σ − h, r_d = Gᵀz + c, the scalings (diagonal on the orthant,
    Nesterov–Todd on the cone) and M = Σ_i 4d_u d_v/(d_u + d_v) p_i p_iᵀ + G_cᵀ W_c⁻² G_c,
    p_i = (−2y_i, 1): Gᵀ W⁻² G with Δt eliminated (its block diag(d_u + d_v) is diagonal)."""
    m, k, r = Y.shape
    n = r + 1
    gu, gv, gc = _apply_G(Y, it.y, it.s, it.t)
    rp_c = gc + it.sc
    rp_c[:, 0] -= 1.0
    rp_c[:, 1] += 1.0
    rp = (gu + it.su + a, gv + it.sv - a, rp_c)
    rd_y, rd_s, rd_t = _apply_Gt(Y, it.zu, it.zv, it.zc)
    rd = (rd_y, rd_s + 1.0, rd_t + 1.0)
    du, dv = it.zu / it.su, it.zv / it.sv                                # W⁻² = diag(z/σ) on the orthant
    W, W_inv, lam_c = _nt_scaling(it.sc, it.zc)
    W_inv2 = W_inv @ W_inv
    P = np.empty((m, k, n))
    P[:, :, :r], P[:, :, r] = -2.0 * Y, 1.0
    M = np.einsum("mk,mki,mkj->mij", 4.0 * du * dv / (du + dv), P, P)
    # G_c (y, s) = (−s, −s, −2y): G_cᵀ W⁻² G_c
    M[:, :r, :r] += 4.0 * W_inv2[:, 2:, 2:]
    cross = 2.0 * (W_inv2[:, 2:, 0] + W_inv2[:, 2:, 1])
    M[:, :r, r] += cross
    M[:, r, :r] += cross
    M[:, r, r] += W_inv2[:, 0, 0] + 2.0 * W_inv2[:, 0, 1] + W_inv2[:, 1, 1]
    M[:, range(n), range(n)] += 1e-15 * np.trace(M, axis1=1, axis2=2)[:, None]
    M[~np.all(np.isfinite(M), axis=(1, 2))] = np.eye(n)      # broken points: a harmless system, NaN steps
    lam = (np.sqrt(it.su * it.zu), np.sqrt(it.sv * it.zv), lam_c)
    return _Newton(Y, it, rp, rd, du, dv, W, W_inv, W_inv2, lam, P, M)


def _direction(
    system: _Newton, d_u: np.ndarray, d_v: np.ndarray, d_c: np.ndarray
) -> tuple[_Iterate, np.ndarray]:
    """Solve  GᵀΔz = −r_d,  GΔx + Δσ = −r_p,  λ ∘ (W⁻ᵀΔσ + WΔz) = d  and return the direction
    with the largest step that keeps σ and z in the cone.

    With q = λ ⋄ d (λ ∘ q = d): Δz = W⁻²(GΔx + r_p) + W⁻¹q, Δσ = W(q − WΔz) = −(GΔx + r_p)
    and Gᵀ W⁻² G Δx = −r_d − Gᵀ(W⁻² r_p + W⁻¹ q), solved through the Schur complement on (y, s).
    """
    it, (rp_u, rp_v, rp_c), (rd_y, rd_s, rd_t) = system.it, system.rp, system.rd
    lam_u, lam_v, lam_c = system.lam
    r = system.Y.shape[2]
    q_u, q_v, q_c = d_u / lam_u, d_v / lam_v, _jordan_solve(lam_c, d_c)
    root_u, root_v = np.sqrt(system.du), np.sqrt(system.dv)                    # W⁻¹ on the orthant
    vu = system.du * rp_u + root_u * q_u
    vv = system.dv * rp_v + root_v * q_v
    vc = np.einsum("mij,mj->mi", system.W_inv2, rp_c) + np.einsum("mij,mj->mi", system.W_inv, q_c)
    gy, gs, gt = _apply_Gt(system.Y, vu, vv, vc)
    rhs_y, rhs_s, rhs_t = -rd_y - gy, -rd_s - gs, -rd_t - gt
    dsum, ddiff = system.du + system.dv, system.dv - system.du                        # N_tt, and N_tz = ddiff ∘ P
    ratio = rhs_t / dsum
    rhs = np.concatenate([rhs_y, rhs_s[:, None]], axis=1) - np.einsum("mk,mki->mi", ddiff * ratio, system.P)
    dz = np.linalg.solve(system.M, rhs[:, :, None])[:, :, 0]
    dy, ds = dz[:, :r], dz[:, r]
    dt = ratio - ddiff * np.einsum("mki,mi->mk", system.P, dz) / dsum
    gu, gv, gc = _apply_G(system.Y, dy, ds, dt)
    dzu = system.du * (gu + rp_u) + root_u * q_u
    dzv = system.dv * (gv + rp_v) + root_v * q_v
    dzc = np.einsum("mij,mj->mi", system.W_inv2, gc + rp_c) + np.einsum("mij,mj->mi", system.W_inv, q_c)
    # Δσ = W(q − WΔz) equals −(GΔx + r_p) in exact arithmetic; the latter keeps the primal
    # equations exact (W has entries up to 1/gap near the optimum and would amplify rounding)
    dsu, dsv, dsc = -(gu + rp_u), -(gv + rp_v), -(gc + rp_c)
    step = np.minimum.reduce([
        _ratio(it.su, dsu), _ratio(it.sv, dsv), _ratio(it.zu, dzu), _ratio(it.zv, dzv),
        _soc_step(it.sc, dsc), _soc_step(it.zc, dzc),
    ])
    return _Iterate(dy, ds, dt, dsu, dsv, dsc, dzu, dzv, dzc), step


def _start(a: np.ndarray, r: int) -> _Iterate:
    """Strictly feasible primal and dual start: y = 0, s = 1, t = |ρ| + 1, z_u = z_v = ½,
    σ_c = (2, 0, 0), z_c = (1, 0, 0)."""
    m, k = a.shape
    rho = a + 1.0
    t = np.abs(rho) + 1.0
    sc = np.zeros((m, r + 2))
    sc[:, 0] = 2.0
    zc = np.zeros((m, r + 2))
    zc[:, 0] = 1.0
    half = np.full((m, k), 0.5)
    return _Iterate(
        y=np.zeros((m, r)), s=np.ones(m), t=t, su=t - rho, sv=t + rho, sc=sc, zu=half, zv=half.copy(), zc=zc
    )


def _ipm(Y: np.ndarray, D: np.ndarray, tol: float, max_iter: int, polish: bool = True) -> dict[str, np.ndarray]:
    """Primal–dual interior-point method (Nesterov–Todd scaling, Mehrotra predictor–corrector)
    for the cone program above, on data scaled to unit size, vectorised over the points.

    Each point retires when its certified gap (relative to max(1, |f|)) reaches ``tol`` or
    its complementarity gap has fallen far below it (stalled in rounding). Returns, per
    point, the best certified iterate: y, λ, the objective, the bound and the iterations used.
    """
    m, k, r = Y.shape
    a = np.einsum("mkr,mkr->mk", Y, Y) - D
    degree = 2 * k + 1                                   # 2k half-lines and one second-order cone
    it = _start(a, r)
    best_y = np.zeros((m, r))
    best_lam = np.zeros((m, k))
    objective = np.full(m, np.inf)
    bound = np.full(m, -np.inf)
    iterations = np.zeros(m, dtype=np.int64)
    active = np.arange(m)
    e_c = np.zeros(r + 2)
    e_c[0] = 1.0
    for iteration in range(max_iter + 1):
        Ya, Da = Y[active], D[active]
        lam = it.zu - it.zv
        complementarity = (it.su * it.zu).sum(axis=1) + (it.sv * it.zv).sum(axis=1) + np.einsum(
            "mi,mi->m", it.sc, it.zc)
        candidates = [(it.y, lam)]
        if polish:
            # near the optimum the active set is settled: solve its KKT system exactly
            near = complementarity <= _POLISH_FROM * np.maximum(1.0, np.abs(objective[active]))
            if near.any():
                y_try, lam_try = it.y.copy(), lam.copy()
                y_try[near], lam_try[near] = _polish(Ya[near], Da[near], it.y[near], lam[near])
                candidates.append((y_try, lam_try))
        for y_c, lam_c in candidates:
            f_val, _ = primal_objective(y_c, Ya, Da)
            g_val = dual_bound(lam_c, Ya, Da)
            improved, raised = f_val < objective[active], g_val > bound[active]
            best_y[active] = np.where(improved[:, None], y_c, best_y[active])
            objective[active] = np.where(improved, f_val, objective[active])
            best_lam[active] = np.where(raised[:, None], lam_c, best_lam[active])
            bound[active] = np.maximum(bound[active], g_val)
        iterations[active] = iteration
        scale = np.maximum(1.0, np.abs(objective[active]))
        done = objective[active] - bound[active] <= tol * scale
        # a point whose complementarity gap is far below the target but whose certificate is not,
        # or whose iterate rounding has pushed onto the boundary of the cones, has stalled
        interior = (
            (it.su.min(axis=1) > 0) & (it.sv.min(axis=1) > 0) & (it.zu.min(axis=1) > 0) & (it.zv.min(axis=1) > 0)
            & (it.sc[:, 0] > 0) & (it.zc[:, 0] > 0) & (_soc_det(it.sc) > 0) & (_soc_det(it.zc) > 0)
        )
        stalled = ~interior | ~np.isfinite(complementarity) | (complementarity <= 1e-3 * tol * scale)
        finished = done | stalled
        if iteration == max_iter or np.all(finished):
            break
        keep = ~finished
        active = active[keep]
        it = _Iterate(*(v[keep] for v in it))
        # (rounding can drive a nearly converged point to the cones' boundary; it then yields
        # non-finite values, and the interior test above retires it with its best certificate)
        with np.errstate(all="ignore"):
            system = _newton_system(Y[active], a[active], it)
            lam_u, lam_v, lam_c = system.lam
            gap = (lam_u**2).sum(axis=1) + (lam_v**2).sum(axis=1) + np.einsum("mi,mi->m", lam_c, lam_c)
            # predictor (affine scaling): d = −λ∘λ; centring σ = (1 − α_aff)³
            aff, step = _direction(system, -lam_u**2, -lam_v**2, -_jordan(lam_c, lam_c))
            sigma = (1.0 - np.minimum(step, 1.0)) ** 3
            target = (sigma * gap / degree)[:, None]
            # corrector: d = −λ∘λ − (W⁻ᵀΔσ_a)∘(WΔz_a) + σ (gap/degree) e
            root_u, root_v = np.sqrt(system.du), np.sqrt(system.dv)
            sc_a = np.einsum("mij,mj->mi", system.W_inv, aff.sc)
            zc_a = np.einsum("mij,mj->mi", system.W, aff.zc)
            d, step = _direction(
                system,
                -lam_u**2 - (aff.su * root_u) * (aff.zu / root_u) + target,
                -lam_v**2 - (aff.sv * root_v) * (aff.zv / root_v) + target,
                -_jordan(lam_c, lam_c) - _jordan(sc_a, zc_a) + target * e_c,
            )
            it = it.moved(d, np.minimum(1.0, _STEP_FRACTION * step))
    return {"y": best_y, "lam": best_lam, "objective": objective, "bound": bound, "iterations": iterations}


def _polish(Y: np.ndarray, D: np.ndarray, y: np.ndarray, lam: np.ndarray, steps: int = 3):
    """Active-set polish: solve the KKT system of (P) exactly on the active set that the
    interior-point iterate identifies, by a few Newton steps (data scaled to unit size).

    Residual i is taken as active (ρ_i = 0, λ_i free) when |ρ_i| < 1 − |λ_i|, otherwise
    λ_i = sign ρ_i; the cone is active (s = ‖y‖², μ free) when s − ‖y‖² < μ = 1 + 1ᵀλ,
    otherwise μ = 0. The unknowns (y, s, λ, μ) then solve the square system

        ρ_i(y, s) = 0 (i active),  λ_i = sign ρ_i (i inactive),  1 + 1ᵀλ − μ = 0,
        μ y − Yᵀλ = 0,  s − ‖y‖² = 0 (cone active) or μ = 0 (inactive),

    the KKT conditions of the module docstring. Returns the candidate (y, λ); the caller
    keeps it only where it improves the certified objective or bound, so a wrong guess of
    the active set (or a singular system) costs nothing but the arithmetic.
    """
    m, k, r = Y.shape
    n = r + k + 2
    a = np.einsum("mkr,mkr->mk", Y, Y) - D
    lam = np.clip(lam, -1.0, 1.0)
    _, s = primal_objective(y, Y, D)
    rho = a - 2.0 * np.einsum("mkr,mr->mk", Y, y) + s[:, None]
    mu = 1.0 + lam.sum(axis=1)
    free = np.abs(rho) < 1.0 - np.abs(lam)
    sign = np.where(rho >= 0, 1.0, -1.0)
    cone = s - np.einsum("mr,mr->m", y, y) < mu
    X = np.concatenate([y, s[:, None], np.where(free, lam, sign), mu[:, None]], axis=1)
    iy, is_, il, imu = slice(0, r), r, slice(r + 1, r + 1 + k), r + 1 + k
    rows = np.arange(k)
    failed = np.zeros(m, dtype=bool)
    for _ in range(steps):
        y_, s_, l_, mu_ = X[:, iy], X[:, is_], X[:, il], X[:, imu]
        F = np.empty((m, n))
        Jac = np.zeros((m, n, n))
        rho_ = a - 2.0 * np.einsum("mkr,mr->mk", Y, y_) + s_[:, None]
        F[:, :k] = np.where(free, rho_, l_ - sign)
        Jac[:, :k, iy] = np.where(free[:, :, None], -2.0 * Y, 0.0)
        Jac[:, :k, is_] = free
        Jac[:, rows, r + 1 + rows] = ~free
        F[:, k] = 1.0 + l_.sum(axis=1) - mu_
        Jac[:, k, il] = 1.0
        Jac[:, k, imu] = -1.0
        F[:, k + 1:k + 1 + r] = mu_[:, None] * y_ - np.einsum("mk,mkr->mr", l_, Y)
        Jac[:, k + 1:k + 1 + r, iy] = mu_[:, None, None] * np.eye(r)
        Jac[:, k + 1:k + 1 + r, il] = -np.swapaxes(Y, 1, 2)
        Jac[:, k + 1:k + 1 + r, imu] = y_
        F[:, n - 1] = np.where(cone, s_ - np.einsum("mr,mr->m", y_, y_), mu_)
        Jac[:, n - 1, iy] = np.where(cone[:, None], -2.0 * y_, 0.0)
        Jac[:, n - 1, is_] = cone
        Jac[:, n - 1, imu] = ~cone
        with np.errstate(all="ignore"):
            singular = ~(np.abs(np.linalg.det(Jac)) > 0) | ~np.all(np.isfinite(F), axis=1)
            failed |= singular
            Jac[singular] = np.eye(n)                       # those points keep their IPM iterate
            delta = np.linalg.solve(Jac, np.where(singular[:, None], 0.0, F)[:, :, None])[:, :, 0]
        X = X - delta
    ok = ~failed & np.all(np.isfinite(X), axis=1)
    return np.where(ok[:, None], X[:, iy], y), np.where(ok[:, None], X[:, il], lam)


def _scales(Y: np.ndarray, D: np.ndarray) -> np.ndarray:
    """Per-point L² = max(maxᵢ‖y_i‖², maxᵢ D_i), 1 where the data are all zero."""
    L2 = np.maximum(np.einsum("mkr,mkr->mk", Y, Y).max(axis=1, initial=0.0), D.max(axis=1, initial=0.0))
    return np.where(L2 > 0, L2, 1.0)


def place_points(
    Y_neighbours: np.ndarray,
    sqdist: np.ndarray,
    *,
    tol: float = 1e-10,
    max_iter: int = 50,
    polish: bool = True,
    full_output: bool = False,
) -> Placement | tuple[Placement, dict[str, Any]]:
    """Place m new points into an r-D embedding by the out-of-sample SDP of Sec. 3.1.10.

    Vectorised over the points: one interior-point run steps all of them together, each
    retiring when its certified gap reaches ``tol``; then the active-set polish solves each
    point's KKT system exactly and is kept wherever it improves the certificate (module
    docstring).

    Parameters
    ----------
    Y_neighbours : ndarray of shape (m, k, r)
        For each new point, the embedding coordinates y_i of its k nearest training inputs
        (k ≥ r).
    sqdist : ndarray of shape (m, k)
        The squared input distances D_i = ‖x_i − x_t‖² to those neighbours.
    tol : float
        Target certified gap, relative to max(L², |f|) where L² = max_i max(‖y_i‖², D_i) is
        the scale of the point's data.
    max_iter : int
        Interior-point iterations; 10–20 are typical.
    polish : bool
        Run the active-set polish after the interior-point method.
    full_output : bool
        Also return a dict with the multipliers ``lam`` (m, k), ``iterations`` (m,),
        ``converged`` (m,: certified gap ≤ tol), ``gap`` (m,) and ``scale`` (m,: L²).

    Returns
    -------
    Placement
        Named tuple ``(y, s, objective, dual_bound)``: the points (m, r), the corner s with
        s ≥ ‖y‖² (m,), the objective Σ|ŷ_iᵀSŷ_i − D_i| + s (m,) and a certified lower bound
        on each optimum (m,).
    info : dict
        Only with ``full_output=True``.

    Raises
    ------
    ValueError
        Shapes that do not match, fewer than r neighbours, NaN/inf entries, negative distances.
    """
    Y, D = _check_batch(Y_neighbours, sqdist)
    max_iter = check_positive_int(max_iter, "max_iter")
    if not (isinstance(tol, (int, float)) and np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    L2 = _scales(Y, D)
    L = np.sqrt(L2)
    Ys, Ds = Y / L[:, None, None], D / L2[:, None]
    out = _ipm(Ys, Ds, tol, max_iter, polish)
    lam = out["lam"]
    # the certificate is evaluated on the original data
    y = out["y"] * L[:, None]
    objective, s = primal_objective(y, Y, D)
    bound = dual_bound(lam, Y, D)
    placement = Placement(y=y, s=s, objective=objective, dual_bound=bound)
    if not full_output:
        return placement
    gap = objective - bound
    info = {
        "lam": np.clip(lam, -1.0, 1.0),
        "iterations": out["iterations"],
        "converged": gap <= tol * np.maximum(L2, np.abs(objective)),
        "gap": gap,
        "scale": L2,
    }
    return placement, info


# ----------------------------------------------------------------------- refinement
def stress(y: np.ndarray, Y_neighbours: np.ndarray, sqdist: np.ndarray) -> np.ndarray:
    """E(y) = Σ_i (‖y − y_i‖² − D_i)², the energy (3.26) of the inserted point's patch, (m,)."""
    diff = np.asarray(y, dtype=np.float64)[:, None, :] - Y_neighbours
    e = np.einsum("mkr,mkr->mk", diff, diff) - sqdist
    return np.einsum("mk,mk->m", e, e)


def refine_points(
    y0: np.ndarray,
    Y_neighbours: np.ndarray,
    sqdist: np.ndarray,
    *,
    max_iter: int = 20,
    tol: float = 1e-10,
) -> tuple[np.ndarray, np.ndarray]:
    """The "sdp cg" post-processing of Sec. 3.1.10: descend E(y) of (3.26) from the SDP point.

    Damped Newton steps, vectorised over the points: the Hessian of E is
    8Σ_i d_i d_iᵀ + 4(Σ_i e_i) I (d_i = y − y_i, e_i = ‖d_i‖² − D_i); Σ_i e_i is clipped at 0
    (plus a tiny ridge) to keep it positive definite — exact Newton where the patch is too
    long, Gauss–Newton where it is too short. The step length is Armijo's: the full step
    first, then 2⁻¹, …, 2⁻³⁰ evaluated together for the points where it fails. A point moves
    only when E decreases, so E(refined) ≤ E(y0) for every point. The thesis
    runs conjugate gradients on the local patch; with the training embedding held fixed the
    patch energy is a function of the new point alone, of dimension r ≤ a few, for which
    Newton steps converge in a handful of iterations.

    Parameters
    ----------
    y0 : ndarray of shape (m, r)
        Starting points (the SDP placement).
    Y_neighbours : ndarray of shape (m, k, r)
    sqdist : ndarray of shape (m, k)
    max_iter : int
    tol : float
        Stop a point when its step changes E by less than ``tol`` relative to E.

    Returns
    -------
    y : ndarray of shape (m, r)
        Refined points.
    energy : ndarray of shape (m,)
        E at the refined points.
    """
    Y, D = _check_batch(Y_neighbours, sqdist)
    y = np.array(y0, dtype=np.float64)
    m, k, r = Y.shape
    if y.shape != (m, r):
        raise ValueError(f"y0 must have shape (m, r) = {(m, r)} to match Y_neighbours, got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y0 contains NaN or infinite entries")
    max_iter = check_positive_int(max_iter, "max_iter")
    energy = stress(y, Y, D)
    halvings = 0.5 ** np.arange(1, 31)
    active = np.arange(m)
    for _ in range(max_iter):
        if active.size == 0:
            break
        ya, Ya, Da, Ea = y[active], Y[active], D[active], energy[active]
        diff = ya[:, None, :] - Ya
        e = np.einsum("mkr,mkr->mk", diff, diff) - Da
        grad = 4.0 * np.einsum("mk,mkr->mr", e, diff)
        H = 8.0 * np.einsum("mkr,mkq->mrq", diff, diff)
        ridge = 4.0 * np.maximum(e.sum(axis=1), 0.0) + 1e-12 * np.trace(H, axis1=1, axis2=2) + 1e-300
        H[:, range(r), range(r)] += ridge[:, None]
        p = -np.linalg.solve(H, grad[:, :, None])[:, :, 0]
        slope = np.einsum("mr,mr->m", grad, p)                            # < 0: H is positive definite
        # Armijo: the full step first, then all halvings at once for the points it fails
        new_y = ya + p
        new_E = stress(new_y, Ya, Da)
        ok = (new_E <= Ea + 1e-4 * slope) & (new_E < Ea)
        retry = np.flatnonzero(~ok)
        if retry.size:
            trial = ya[retry, None, :] + halvings[None, :, None] * p[retry, None, :]   # (j, steps, r)
            tdiff = trial[:, :, None, :] - Ya[retry, None, :, :]
            te = np.einsum("mjkr,mjkr->mjk", tdiff, tdiff) - Da[retry, None, :]
            trial_E = np.einsum("mjk,mjk->mj", te, te)
            armijo = (trial_E <= Ea[retry, None] + 1e-4 * halvings[None, :] * slope[retry, None]) & (
                trial_E < Ea[retry, None]
            )
            found = armijo.any(axis=1)
            first = np.argmax(armijo, axis=1)
            pick = retry[found]
            new_y[pick] = trial[found, first[found]]
            new_E[pick] = trial_E[found, first[found]]
            ok[pick] = True
        y[active] = np.where(ok[:, None], new_y, ya)
        energy[active] = np.where(ok, new_E, Ea)
        still = ok & (Ea - energy[active] > tol * np.maximum(Ea, 1e-300))
        active = active[still]
    return y, energy


# --------------------------------------------------------------------- neighbours
def neighbour_arrays(
    X_train: np.ndarray, Y_train: np.ndarray, X_new: np.ndarray, n_neighbors: int, *, chunk_size: int = 2048
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The k nearest training inputs of each new input, as the arrays of :func:`place_points`.

    Parameters
    ----------
    X_train : ndarray of shape (n, d)
        Training inputs x_i.
    Y_train : ndarray of shape (n, r)
        Their embedding y_i.
    X_new : ndarray of shape (m, d)
        New inputs x_t.
    n_neighbors : int
        k, at least r and at most n.
    chunk_size : int
        New points handled per block (memory: chunk_size · n distances).

    Returns
    -------
    Y_neighbours : ndarray of shape (m, k, r)
    sqdist : ndarray of shape (m, k)
        Exact ‖x_i − x_t‖², recomputed from the differences (not from the expansion
        ‖x_i‖² + ‖x_t‖² − 2x_iᵀx_t used to find the neighbours).
    index : ndarray of shape (m, k)
        Row indices into X_train, nearest first (equal distances by index; a tie at the k-th
        distance may keep either point).
    """
    X_train = as_matrix(X_train, "X_train")
    n, d = X_train.shape
    Y_train = as_matrix(Y_train, "Y_train")
    if Y_train.shape[0] != n:
        raise ValueError(f"Y_train must have one row per row of X_train ({n}), got {Y_train.shape[0]}")
    X_new = as_matrix(X_new, "X_new", min_rows=0)
    if X_new.shape[1] != d:
        raise ValueError(f"X_new must have the {d} columns of X_train (input dimension), got {X_new.shape[1]}")
    k = check_positive_int(n_neighbors, "n_neighbors")
    r = Y_train.shape[1]
    if k < r:
        raise ValueError(f"n_neighbors must be at least r = {r} (a new point needs at least r neighbours), got {k}")
    if k > n:
        raise ValueError(f"n_neighbors must be at most the number of training points {n}, got {k}")
    m = X_new.shape[0]
    index = np.empty((m, k), dtype=np.int64)
    sqdist = np.empty((m, k))
    train_norms = np.einsum("ij,ij->i", X_train, X_train)
    for start in range(0, m, chunk_size):
        block = X_new[start:start + chunk_size]
        approx = train_norms[None, :] - 2.0 * block @ X_train.T             # + ‖x_t‖², same for the row
        idx = np.argpartition(approx, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (len(block), 1))
        diff = X_train[idx] - block[:, None, :]
        exact = np.einsum("mkd,mkd->mk", diff, diff)
        order = np.lexsort((idx, exact))                                    # by distance, then index
        index[start:start + chunk_size] = np.take_along_axis(idx, order, axis=1)
        sqdist[start:start + chunk_size] = np.take_along_axis(exact, order, axis=1)
    return Y_train[index], sqdist, index


# ---------------------------------------------------------------- single instance
def solve_mvu_oos(
    instance,
    *,
    tol: float = 1e-10,
    max_iter: int = 50,
    gap_tol: float = 1e-8,
    polish: bool = True,
    verbose: bool = False,
) -> SolveResult:
    """Solve one :class:`~sdpembed.problems.MVUOOSInstance` by the interior-point method with
    active-set polish (module docstring) and certify the answer.

    Parameters
    ----------
    instance : MVUOOSInstance
        Neighbour outputs ``Y`` (k, r) and squared distances ``sqdist`` (k,).
    tol, max_iter, polish
        Those of :func:`place_points` (``tol`` is the target gap of the iteration).
    gap_tol : float
        The status is ``optimal`` only when the certified gap objective − dual_bound is at most
        ``gap_tol · max(L², |objective|)``, L² = max_i max(‖y_i‖², D_i) the scale of the data;
        otherwise ``max_iterations`` (iteration limit reached) or ``inaccurate``.
    verbose : bool
        Print the result.

    Returns
    -------
    SolveResult
        ``solution`` is S = [[I, y], [yᵀ, s]] (exact identity block, s ≥ ‖y‖²); ``extra``
        holds the point ``y``, ``s`` and the multipliers ``lam`` of the certificate.
    """
    start = time.perf_counter()
    if not (isinstance(gap_tol, (int, float)) and np.isfinite(gap_tol) and gap_tol > 0):
        raise ValueError(f"gap_tol must be a positive number, got {gap_tol!r}")
    placement, info = place_points(
        instance.Y[None], instance.sqdist[None], tol=tol, max_iter=max_iter, polish=polish, full_output=True
    )
    y, s = placement.y[0], float(placement.s[0])
    r = y.shape[0]
    S = np.eye(r + 1)
    S[:r, r] = S[r, :r] = y
    S[r, r] = s
    objective = float(instance.objective(S))
    bound = float(placement.dual_bound[0])
    gap = objective - bound
    iterations = int(info["iterations"][0])
    limit = gap_tol * max(float(info["scale"][0]), abs(objective))
    if gap <= limit:
        status, message = "optimal", f"certified gap {gap:.2e} <= {limit:.2e}"
    elif iterations >= max_iter:
        status, message = "max_iterations", f"stopped after {max_iter} iterations with certified gap {gap:.2e}"
    else:
        status, message = "inaccurate", f"certified gap {gap:.2e} above {limit:.2e} (stalled in rounding)"
    result = build_result(
        instance.problem, instance.variable, S, objective, bound, status=status, message=message, method="ipm",
        solver="mvu_oos_ipm", max_violation=float(instance.max_violation(S)), iterations=iterations, start=start,
        extra={"y": y, "s": s, "lam": info["lam"][0]},
    )
    if verbose:
        print(result)
    return result
