"""The interior point of the MVU out-of-sample SDP (Weinberger thesis, Sec. 3.1.10), batched over
many new points, with an active-set polish; :func:`sdpembed.solvers.mvu.oos.place_points` runs it.

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
needs (typically 6–12) (:func:`soc_ipm`).

*Active-set polish.* Near the optimum (complementarity gap ≤ 10⁻⁵ relative) the iterate
reveals which residuals vanish (|ρ_i| < 1 − |λ_i|) and whether the cone is active
(s − ‖y‖² < μ); the KKT conditions restricted to that active set form a square system in
(y, s, λ, μ) — quadratic only through μy and ‖y‖² — which a few Newton steps solve to
machine precision (:func:`_polish`). The polished point and multipliers replace the
interior-point ones only where they improve the certified objective or bound, so the method
is exact (gap ~1e-14 relative) whenever the active set is identified, and never worse than
the interior-point iterate otherwise.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the out-of-sample SDP (3.30)–(3.33) of Sec. 3.1.10.
.. [2] L. Vandenberghe, "The CVXOPT linear and quadratic cone program solvers", technical note,
   University of California, Los Angeles, 2010. Implemented here: the Nesterov–Todd scaling and
   predictor–corrector of the cone program solvers.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._progress import say
from ...problems.mvu_oos import dual_bound, primal_objective

__all__ = ["soc_ipm"]


#: Fraction of the step to the boundary taken by the interior-point method.
_STEP_FRACTION = 0.99
#: The active-set polish is tried once the complementarity gap is below this (relative).
_POLISH_FROM = 1e-5


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


def soc_ipm(Y: np.ndarray, D: np.ndarray, tol: float, max_iter: int, polish: bool = True,
            verbose: bool | int = False) -> dict[str, np.ndarray]:
    """Primal–dual interior-point method (Nesterov–Todd scaling, Mehrotra predictor–corrector)
    for the cone program above, on data scaled to unit size, vectorised over the points.

    Each point retires when its certified gap (relative to max(1, |f|)) reaches ``tol`` or
    its complementarity gap has fallen far below it (stalled in rounding). Returns, per
    point, the best certified iterate: y, λ, the objective, the bound and the iterations used.
    ``verbose`` (True, or K: every K-th iteration and the last) prints the points still
    active, the worst and median relative certified gap among them, and the largest
    complementarity gap.
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
        last = iteration == max_iter or bool(np.all(finished))
        if verbose and (last or iteration % (1 if verbose is True else int(verbose)) == 0):
            rel = (objective[active] - bound[active]) / scale
            say(f"oos ipm it {iteration:3d}  active {active.size:7d} of {m}  relative gap max {rel.max():.1e}  "
                f"median {np.median(rel):.1e}  complementarity max {complementarity.max():.1e}  "
                f"retiring {int(finished.sum())}")
        if last:
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
