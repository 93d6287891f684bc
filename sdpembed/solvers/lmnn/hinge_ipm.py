"""A primal–dual interior-point method for LMNN's slack SDP on a set of triplets.

Solves the SDP of thesis Sec. 2.1.3 (the slack form of (2.11)) restricted to the triplets of a
:class:`~sdpembed.solvers.lmnn.pair_system.PairSystem`,

    minimise    (1 − μ) tr(MP) + μ Σ_t ξ_t
    subject to  ξ_t ≥ 1 + tr(M A_t),  ξ_t ≥ 0,  M ⪰ 0,        A_t = C_ij − C_il  (Sec. 2.1.7)

whose dual is max Σ_t α_t s.t. 0 ≤ α_t ≤ μ, C(α) = (1 − μ)P + Σ_t α_t A_t ⪰ 0 (the dual of
:func:`sdpembed.problems.lmnn.lmnn_dual_bound`), and — with block-diagonal M — the
multi-metric SDP (2.17), where every pair (a, b) carries the metric of the class of b
(:func:`hinge_ipm`). The working set it is run on is chosen by :mod:`sdpembed.solvers.lmnn.fast`.

**Why an interior-point method.** (2.11) is piecewise linear in M: away from the PSD boundary
it *is* a linear programme in the d(d+1)/2 entries of M. First-order methods — the
subgradient projection of Algorithm 3 (:mod:`sdpembed.solvers.lmnn.gradient`), or an ADMM on
the slack form — find the primal value quickly but converge slowly to an accurate *dual*
point: an ADMM needs thousands of iterations for a certified relative gap of 1e-4 even at
d = 4, and the certificate oscillates. A primal–dual path-following method
needs 20–40 Newton steps for a relative gap of 1e-8 independent of the data, and its dual
iterate is the certificate: α stays strictly inside the box [0, μ] and X = C(α) ≻ 0 up to
the dual residual, which :func:`~sdpembed.problems.lmnn.lmnn_dual_bound` removes by scaling. The
Newton system is small because ξ is eliminated triplet by triplet (:mod:`sdpembed.solvers.lmnn.newton`).

Interior-point details: Mehrotra predictor–corrector, infeasible start, separate primal and
dual step lengths (fraction 0.98 of the distance to the boundary; SDPT3's adaptive fraction
0.9 + 0.09·min(1, α_p, α_d) does not help here — the steps are limited by the box
α ∈ [0, μ] and the slacks, not by the cone — and costs more steps),
stop when the relative primal and dual residuals and the relative duality gap are below
``tol``, the gap relative to the loss (2.11) including the fixed triplets' constant μ|F|, and
absolute below the loss's unit μ, as the certificate measures it (:func:`hinge_ipm`); stop as soon as an iterate
proves the problem unbounded below (a linear term with fixed triplets folded in can make it so;
:func:`hinge_ipm`, "Unboundedness"), instead of following M to overflow. A solve
on a working set close to the previous one starts from the previous solution
(:func:`warm_start`); a solve from a first-order point starts from it with the dual slack
[C(α̂)]₊ + νM₀⁻¹ (:func:`first_order_ipm_start`): the smoothed multipliers α̂ are far from dual
feasible, and lifting C(α̂) by a multiple of I put the PSD block far off the central path.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the slack SDP of Sec. 2.1.3 (the loss (2.11)) and its
   dual, the triplets' matrices of Sec. 2.1.7, the multi-metric SDP (2.17).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from ..._deadline import Deadline
from ..._progress import say
from ...problems.lmnn import loss_unit
from ...results import relative_gap
from .newton import cholesky_solver, newton_step, pcg
from .pair_system import PairSystem, symmetric_part

__all__ = ["IPMOutcome", "first_order_ipm_start", "hinge_ipm", "ipm_reached", "polish_multipliers", "warm_start"]

#: PCG is used only once the interior-point residuals and gap are all below this (late steps, where the
#: Newton matrix is dominated by the few triplets at their margin).
_PCG_SWITCH = 1e-3

#: Relative residual of the PCG solve of :func:`polish_multipliers` (float32 preconditioner, exact operator).
_POLISH_TOL = 1e-11

#: An early certificate (:func:`hinge_ipm`'s ``certify``) is tried at an iterate whose relative primal residual
#: and gap are ≤ ``certify_below`` and whose relative dual residual is ≤ this many times that: the polished
#: multipliers satisfy C(α′) = X by construction (:func:`polish_multipliers`), so the dual residual enters the
#: certified bound only through the size of that correction, while the primal side enters the loss itself.
_CERTIFY_DRES = 10.0


@dataclass
class IPMOutcome:
    """The end point of :func:`hinge_ipm` on one working set."""

    M: np.ndarray            # (c, d, d) primal metric blocks (≻ 0)
    alpha: np.ndarray        # (T,) multipliers in (0, μ): the certificate
    xi: np.ndarray           # (T,) slacks ξ_t
    primal_value: float      # ⟨C0, M⟩ + μ Σ ξ
    dual_value: float        # Σ α
    converged: bool
    iterations: int
    history: dict[str, list] = field(default_factory=dict)
    stalled: bool = False    # stopped at the rounding floor before reaching tol
    unbounded: bool = False  # stopped at an iterate M that proves the restricted problem unbounded below
    timed_out: bool = False  # stopped at the deadline before reaching tol
    certified: bool = False  # stopped early: ``certify`` accepted the polished multipliers ``alpha``


def hinge_ipm(
    system: PairSystem,
    C0: np.ndarray,
    mu: float,
    *,
    tol: float = 1e-8,
    max_iter: int = 100,
    start: tuple | None = None,
    offset: float = 0.0,
    deadline: Deadline | None = None,
    certify: Callable[[np.ndarray, np.ndarray], bool] | None = None,
    certify_below: float = 0.0,
    verbose: bool | int = False,
) -> IPMOutcome:
    """Primal–dual interior-point method (HKM direction, Mehrotra predictor–corrector) for

        min ⟨C0, M⟩ + μ Σ ξ   s.t.  ξ_t − 𝒜(M)_t − s_t = 1,  s, ξ ≥ 0,  M ⪰ 0 (block-diagonal),

    the slack SDP of Sec. 2.1.3 on the triplets of ``system`` (and of (2.17) with several
    blocks). Dual: max Σ α s.t. X = C0 + 𝒜*(α) ⪰ 0, α + β = μ, α, β ≥ 0.

    Newton step: with β = μ − α and D = 1/(ξ/β + s/α), eliminating (ξ, s, α, β) leaves
    [𝒜*D𝒜 + M⁻¹ ⊛ X] ΔM = r, a (c·p) × (c·p) symmetric positive definite system.

    Parameters
    ----------
    system : PairSystem
    C0 : ndarray of shape (c, d, d)
        (1 − μ) times the pull matrix of every block.
    mu : float
        μ ∈ (0, 1].
    tol : float
        Stop when the relative primal residual, dual residual and duality gap are all ≤ tol.
        The gap is relative to the objective including ``offset``, and absolute below the
        loss's unit μ, |p − d| / max(|p + offset|, |d + offset|, μ) — the measure of the
        certified gap (:func:`sdpembed.results.relative_gap` with
        :func:`~sdpembed.problems.lmnn.loss_unit`), so that a solve stopped here is one the
        certificate can call optimal, also when the optimum is tiny or 0.
    max_iter : int
        Newton steps at most.
    offset : float
        A constant of the objective left out of ⟨C0, M⟩ + μ Σ ξ: μ·|F| when the hinges of a
        fixed set F are folded into C0 (μ h_t = μ + μ tr(M A_t),
        :func:`~sdpembed.solvers.lmnn.fast.solve_lmnn_fast`).
        It changes no iterate, only when the gap counts as small: μ|F| can be most of the loss,
        and a gap relative to the restricted value alone would then ask for Newton steps that
        the certificate does not need.
    start : tuple (M, X, alpha, xi, s), optional
        A strictly interior starting point (M, X ≻ 0 of shape (c, d, d); 0 < α < μ, ξ, s > 0
        per triplet), e.g. :func:`warm_start` from the solution of a neighbouring working set;
        it need not be feasible (the method is an infeasible-start one). By default a cold
        start: M a multiple of I, ξ and s ≥ 1, α = μ/2, X a multiple of I above C0 + 𝒜*(α).
    deadline : Deadline, optional
        The run's time budget (``sdpembed._deadline.Deadline``): no Newton step starts after it has
        passed (the iterate reached is returned, ``timed_out``; its multipliers α ∈ [0, μ] still give a
        certified bound).
    certify : callable (M, alpha) -> bool, optional
        An early stop: at every iterate whose relative primal residual and gap are ≤ ``certify_below``
        and relative dual residual ≤ ``_CERTIFY_DRES``·``certify_below`` (the polish removes the dual
        residual), the multipliers are polished (:func:`polish_multipliers`) and passed
        with M to ``certify``; if it returns True (the caller's certified gap is small enough)
        the method stops there (``certified``) and returns the polished multipliers.
    certify_below : float
        See ``certify``.
    verbose : bool or int
        Print one line per Newton step: step, primal and dual objectives, relative primal and
        dual residuals, relative gap and the barrier parameter ν (each step is a dense
        factorisation, so every one is shown).

    Returns
    -------
    IPMOutcome

    Notes
    -----
    Unboundedness. For any M ⪰ 0, t ≥ 0 and ξ_t = [1 + t𝒜(M)_t]₊ the point tM is feasible, with
    objective at most μT + t·f(M), f(M) = ⟨C0, M⟩ + μ Σ [𝒜(M)_t]₊. So an M ⪰ 0 with f(M) < 0 proves
    the problem unbounded below (its dual infeasible: no α ∈ [0, μ] makes C0 + 𝒜*(α) ⪰ 0). C0 ⪰ 0
    never allows it; C0 with fixed triplets folded in can. Each iterate M ≻ 0 is tested, with a
    margin for rounding, and the method stops there (``unbounded``).
    """
    T = system.n_triplets
    c, d = system.n_blocks, system.dim
    ones = np.ones(T)
    if start is None:
        du, _ = system.pair_distances(np.broadcast_to(np.eye(d), (c, d, d)))
        # the typical target distance sets the scale of M; coincident points (du = 0) carry none,
        # and with every target at distance 0 any M is optimal: start from I
        median = float(np.median(du)) if du.size else 0.0
        if median <= 0.0:
            positive = du[du > 0.0]
            median = float(np.median(positive)) if positive.size else 1.0
        scale = 1.0 / median
        M = np.broadcast_to(scale * np.eye(d), (c, d, d)).copy()
        h = 1.0 + system.apply(M)
        xi = np.maximum(h, 0.0) + 1.0
        s = xi - h
        alpha = np.full(T, 0.5 * mu)
        beta = mu - alpha
        C_alpha = C0 + system.adjoint(alpha)
        X = np.broadcast_to(np.eye(d), (c, d, d)) * (1.0 + float(np.abs(np.linalg.eigvalsh(C_alpha)).max()))
    else:
        M, X, alpha, xi, s = (np.array(v, dtype=np.float64) for v in start)
        if M.shape != (c, d, d) or X.shape != (c, d, d) or any(v.shape != (T,) for v in (alpha, xi, s)):
            raise ValueError("start must be (M, X, alpha, xi, s) of shapes (c, d, d), (c, d, d), (T,), (T,), (T,)")
        beta = mu - alpha
        if not (np.all(alpha > 0) and np.all(beta > 0) and np.all(xi > 0) and np.all(s > 0)):
            raise ValueError("start must be strictly interior: 0 < alpha < mu, xi > 0, s > 0")
        np.linalg.cholesky(M)
        np.linalg.cholesky(X)
    norm_c0 = 1.0 + float(np.linalg.norm(C0))
    unit = loss_unit(mu)
    n_cone = c * d + 2 * T
    history: dict[str, list] = {key: [] for key in ("primal", "dual", "pres", "dres", "gap", "nu")}
    converged = stalled = unbounded = timed_out = certified = False
    it = 0
    carry: dict = {}         # the PCG preconditioner's rank-k part, carried from step to step (newton._carried_gram)
    for it in range(1, max_iter + 1):
        AM = system.apply(M)
        R1 = C0 + system.adjoint(alpha) - X                      # dual residual (want 0; α + β = μ is kept)
        R3 = ones + AM + s - xi                                  # primal residual (want 0)
        linear = float(np.sum(C0 * M))
        pobj = linear + mu * float(xi.sum())
        dobj = float(alpha.sum())
        pres = float(np.linalg.norm(R3)) / (1.0 + np.sqrt(T))
        dres = float(np.linalg.norm(R1)) / norm_c0
        gap = abs(relative_gap(pobj + offset, dobj + offset, unit))
        nu = (float(np.sum(M * X)) + float(alpha @ s) + float(beta @ xi)) / n_cone
        for key, value in (("primal", pobj), ("dual", dobj), ("pres", pres), ("dres", dres), ("gap", gap),
                           ("nu", nu)):
            history[key].append(value)
        # f(M) < 0 proves the problem unbounded below (Notes); the margin covers the rounding of f
        recession = linear + mu * float(np.maximum(AM, 0.0).sum())
        unbounded = recession < -1e-10 * (abs(linear) + mu * float(np.abs(AM).sum()))
        converged = max(pres, dres, gap) <= tol
        if verbose:
            say(f"    ipm {it:3d}  primal {pobj:.10g}  dual {dobj:.10g}  pres {pres:.1e}  dres {dres:.1e}  "
                f"gap {gap:.1e}  nu {nu:.1e}{'  unbounded below' if unbounded else ''}")
        if converged or unbounded:
            break
        if certify is not None and max(pres, gap, dres / _CERTIFY_DRES) <= certify_below:
            polished = polish_multipliers(system, C0, mu, X, alpha, xi, s)
            if polished is not None and certify(M, polished):
                alpha, certified = polished, True
                break
        if deadline is not None and deadline.passed():
            timed_out = True
            break
        if it > 5 and max(pres, dres, gap) < 1e-6 and max(pres, dres, gap) >= 0.5 * min(
                max(a, b, c_) for a, b, c_ in zip(history["pres"][-6:-1], history["dres"][-6:-1],
                                                  history["gap"][-6:-1], strict=True)):
            stalled = True       # rounding floor: five steps without halving the worst measure
            break
        try:
            M, X, alpha, beta, xi, s = newton_step(system, C0, mu, M, X, alpha, beta, xi, s, nu, n_cone,
                                                   iterative=max(pres, dres, gap) < _PCG_SWITCH,
                                                   accuracy=max(pres, dres, gap), carry=carry)
        except np.linalg.LinAlgError:
            stalled = True       # a factorisation failed at the boundary: keep the last iterate
            break
    return IPMOutcome(
        M=M, alpha=np.clip(alpha, 0.0, mu), xi=xi, primal_value=history["primal"][-1],
        dual_value=history["dual"][-1], converged=converged, iterations=it, history=history, stalled=stalled,
        unbounded=unbounded, timed_out=timed_out, certified=certified,
    )


def polish_multipliers(system: PairSystem, C0: np.ndarray, mu: float, X: np.ndarray, alpha: np.ndarray,
                       xi: np.ndarray, s: np.ndarray, *, kappa: float = 1.0) -> np.ndarray | None:
    """Multipliers α′ ∈ [0, μ] with C0 + 𝒜*(α′) = X from an interior-point iterate (single block): a
    dual point whose certified bound is Σα′, usually far above the iterate's own (a crossover).

    At an interior iterate every α_t lies strictly inside (0, μ) and C0 + 𝒜*(α) differs from
    X ≻ 0 by the dual residual; near the optimum the bound of :func:`~sdpembed.problems.lmnn.lmnn_dual_bound`
    loses both the multipliers' distance to their bounds and the scaling that repairs the residual.
    Identification: a triplet is taken at α = 0 when α_t < κ s_t (its slack dominates), at α = μ
    when μ − α_t < κ ξ_t, and on the margin otherwise. The first two sets are moved to their bound;
    the margin multipliers are then corrected by the least change in the interior-point metric,
    δ = D 𝒜_S(Y) with [𝒜_S* D 𝒜_S] Y = X − C0 − 𝒜*(α_bound), D = 1/(ξ/β + s/α) (the weights of
    the Newton system, small for a multiplier near a bound; solved by PCG with the exact operator,
    preconditioned by that matrix formed in float32), so that C(α′) = X ⪰ 0 holds up to rounding;
    α′ is clipped to [0, μ]. Nothing here is trusted: the caller evaluates α′ with the certified
    bound, which holds for any α′ ∈ [0, μ] — a wrong identification only gives a weaker bound.
    Returns None for several blocks or a singular margin system.
    """
    if system.n_blocks != 1:
        return None
    beta = mu - alpha
    zero, upper = alpha < kappa * s, beta < kappa * xi
    polished = np.where(zero, 0.0, np.where(upper, mu, alpha))
    margin = np.flatnonzero(~zero & ~upper)
    if margin.size == 0:
        return polished
    D = np.zeros_like(alpha)
    D[margin] = 1.0 / (xi[margin] / beta[margin] + s[margin] / alpha[margin])
    rhs = -system.svec(C0 + system.adjoint(polished) - X)
    # the margin system in float32 rank-k updates (half the time of float64), then PCG with the exact operator
    # to the accuracy of a float64 factorisation; the float64 matrix only if PCG falls short
    H = system.gram_subset(D, margin, np.float32)
    ridge = 1e-12 * max(float(np.trace(H)), 1e-300) / H.shape[0]
    H[np.diag_indices_from(H)] += ridge
    try:
        factor = scipy.linalg.cho_factor(H, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    y, ok = pcg(lambda v: system.svec(system.adjoint(D * system.apply(system.smat(v)))) + ridge * v, rhs,
                cholesky_solver(factor), tol=_POLISH_TOL)
    if not ok:
        H = system.gram_subset(D, margin)
        H[np.diag_indices_from(H)] += ridge
        try:
            y = scipy.linalg.cho_solve(scipy.linalg.cho_factor(H, lower=True, check_finite=False), rhs,
                                       check_finite=False)
        except np.linalg.LinAlgError:
            return None
    return np.clip(polished + D * system.apply(system.smat(y)), 0.0, mu)



def warm_start(system: PairSystem, C0: np.ndarray, mu: float, M: np.ndarray, alpha: np.ndarray, *,
               shift: float = 1e-3) -> tuple:
    """An interior starting point of the slack SDP on ``system`` from the previous round's solution.

    The multipliers of the triplets kept from the previous working set are kept (their X =
    C0 + 𝒜*(α) is the previous dual slack, PSD up to the residual), moved into the box
    [γ, μ − γ], γ = ``shift``·μ; new triplets (``alpha`` NaN) start at γ, which hardly moves
    X. Then X₀ = C0 + 𝒜*(α₀) + δI with δ the least shift giving λ_min(X₀) ≥ ``shift`` times
    its largest eigenvalue, M₀ = M + εI likewise, and per triplet, with h = 1 + 𝒜(M₀)_t,
    ξ = [h]₊ + e, s = [−h]₊ + e, e = ``shift``·(1 + |h|), so that ξ − s = h (the primal
    constraint holds exactly) and the complementarity products αs, βξ are all of the order
    γ|h|. The start is infeasible only by δI in the dual equation; :func:`hinge_ipm` is an
    infeasible-start method.
    """
    d = system.dim
    gamma = shift * mu
    alpha0 = np.where(np.isnan(alpha), gamma, np.clip(alpha, gamma, mu - gamma))
    eye = np.eye(d)

    def lift(S: np.ndarray) -> np.ndarray:
        lam = np.linalg.eigvalsh(S)
        top = max(float(np.abs(lam).max()), 1e-300)
        return symmetric_part(S) + np.maximum(shift * top - lam.min(axis=1), 0.0)[:, None, None] * eye

    M0 = lift(np.asarray(M, dtype=np.float64))
    X0 = lift(C0 + system.adjoint(alpha0))
    h = 1.0 + system.apply(M0)
    e = shift * (1.0 + np.abs(h))
    return M0, X0, alpha0, np.maximum(h, 0.0) + e, np.maximum(-h, 0.0) + e


def first_order_ipm_start(system: PairSystem, C0: np.ndarray, mu: float, M: np.ndarray, alpha: np.ndarray, *,
                      shift: float = 3e-2, metric_shift: float = 1e-3) -> tuple:
    """An interior starting point of the slack SDP from a first-order point (M, α̂) of
    :func:`sdpembed.solvers.lmnn.warm.warm_start_metric` (α̂ = μ·φ'_η(z), the smoothed hinge's slopes).

    As :func:`warm_start`, except for the two matrices. M₀ = M + εI with the least ε giving
    λ_min(M₀) ≥ ``metric_shift``·λ_max(M) (per block), and with h = 1 + 𝒜(M₀)_t,
    α₀ = clip(α̂, γ, μ − γ), γ = ``shift``·μ, ξ = [h]₊ + e, s = [−h]₊ + e, e = ``shift``·(1 + |h|)
    (ξ − s = h exactly). The dual slack is

        X₀ = [C0 + 𝒜*(α₀)]₊ + ν M₀⁻¹,      ν = (α₀ᵀs + β₀ᵀξ) / (2T),

    the positive part (eigenvalues clipped at 0) of the dual matrix C(α₀) of (2.14) plus the
    central-path term of the scalar pairs' mean product ν: M₀X₀ = M₀[C(α₀)]₊ + νI. α̂ is far from
    dual feasible — C(α̂) can have negative eigenvalues of a sixth of its largest, in the
    directions where M is smallest (the factor L grows them slowly) — so the shift
    X = C(α₀) + δI of :func:`warm_start` needs a large δ, and its PSD block starts with a product
    tr(M₀X₀)/d hundreds of times ν: off the central path, and with a dual residual δI several
    times that of the clip. This start saves interior-point iterations against :func:`warm_start`;
    the default ``metric_shift`` is the best of the values between 3·10⁻⁴ and 3·10⁻³.
    """
    d = system.dim
    gamma = shift * mu
    alpha0 = np.clip(alpha, gamma, mu - gamma)
    lam = np.linalg.eigvalsh(np.asarray(M, dtype=np.float64))
    eps = np.maximum(metric_shift * lam.max(axis=1) - lam.min(axis=1), 0.0)
    M0 = symmetric_part(np.asarray(M, dtype=np.float64)) + eps[:, None, None] * np.eye(d)
    h = 1.0 + system.apply(M0)
    e = shift * (1.0 + np.abs(h))
    xi, s = np.maximum(h, 0.0) + e, np.maximum(-h, 0.0) + e
    nu = (float(alpha0 @ s) + float((mu - alpha0) @ xi)) / (2 * alpha0.size)
    lam_x, V = np.linalg.eigh(symmetric_part(C0 + system.adjoint(alpha0)))
    Mc = np.linalg.inv(np.linalg.cholesky(M0))
    X0 = (V * np.maximum(lam_x, 0.0)[:, None, :]) @ V.transpose(0, 2, 1) + nu * (Mc.transpose(0, 2, 1) @ Mc)
    return M0, symmetric_part(X0), alpha0, xi, s


def ipm_reached(out: IPMOutcome, tol: float) -> bool:
    """Converged, certified early (``certify``), or stopped at the rounding floor (all relative measures
    < max(tol, 1e-6))."""
    last = max(out.history["pres"][-1], out.history["dres"][-1], out.history["gap"][-1])
    return out.converged or out.certified or (out.stalled and last < max(tol, 1e-6))
