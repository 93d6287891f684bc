"""Multiplier repair for LMNN: the best multipliers of the near-margin triplets at a fixed metric, found
by an interior point whose Newton systems have one unknown per near-margin triplet.

**Why.** The certificate of (2.11) is a dual-feasible α (:func:`~sdpembed.problems.lmnn.lmnn_dual_bound`):
α ∈ [0, μ] with C(α) = (1 − μ)P + Σ_t α_t A_t ⪰ 0, A_t = C_ij − C_il. At an optimum M*, complementary
slackness fixes α_t = μ on the triplets with a positive hinge and α_t = 0 on those inside the margin; only the
triplets *at* the margin (h_t = 0) carry multipliers in between, and they are not unique. They must make
C(α)M* = 0, which couples the range of M* with its complement: multipliers that are nearly right in each
(those of a stopped interior point at d = 164, or of a solve restricted to a subspace) leave C(α) with
negative eigenvalues inside the range of M, and the bound collapses.

**What is solved.** Given a metric M (the driver's best, PSD), the triplets are split by their hinge
argument h_t = 1 + tr(M A_t): F = {h_t > band} (fixed, α_t = μ), S = {|h_t| ≤ band} (free), and the
rest (α_t = 0, left out). The multipliers of S solve

    maximise  μ|F| + Σ_{t∈S} α_t   s.t.  C_F + Σ_{t∈S} α_t A_t ⪰ 0,  0 ≤ α ≤ μ,
    C_F = (1 − μ)P + μ Σ_{t∈F} A_t,

the dual of the slack SDP of Sec. 2.1.3 restricted to the working set S with F folded into the linear term
(:func:`~sdpembed.solvers.lmnn.hinge_ipm.hinge_ipm`'s problem). It is solved by a primal–dual interior point
(HKM direction on the side of the dual slack, Mehrotra predictor–corrector) whose Newton system is the m × m
Schur complement in the multipliers (m = |S|),

    H_ts = tr(A_t M A_s X⁻¹) + δ_ts (s_t/α_t + ξ_t/β_t),

formed from the pairs' Gram matrices under M and X⁻¹ (H = E_uu[a, a] − E_uw[a, b] − E_uw[a, b]ᵀ + E_ww[b, b]
with E_uw = (U M Wᵀ) ∘ (U X⁻¹ Wᵀ), u the target and w the impostor pair of a triplet): d·(pairs)² flops and
an m × m factorisation, where the interior point of :mod:`~sdpembed.solvers.lmnn.hinge_ipm` forms and solves
in the p = d(d+1)/2 entries of M with every working triplet in its Newton matrix (T·p² flops: minutes a step
at d = 164). Fixed triplets cost nothing here: they are a constant of C_F.

**Why the bound is valid** (proof). Let α_t = μ on F, α_t ∈ [0, μ] on S from the solve, and α_t = 0 on
every other triplet. For any M ⪰ 0 and every triplet, μ[h_t(M)]₊ ≥ α_t h_t(M) (as [h]₊ ≥ h and [h]₊ ≥ 0,
and 0 ≤ α_t ≤ μ), so the loss (2.11) satisfies

    ε(M) ≥ (1 − μ) tr(MP) + Σ_t α_t h_t(M) = Σ_t α_t + tr(M C(α)),

and tr(M C(α)) ≥ 0 when C(α) ⪰ 0. So Σ_t α_t = μ|F| + Σ_S α_t ≤ min ε whenever C(α) ⪰ 0 — whatever the
split, whatever M, and however the solve ended: the split only decides how good the bound is. The
interior point is not trusted for C(α) ⪰ 0: the multipliers are handed to
:func:`~sdpembed.problems.lmnn.lmnn_dual_bound`, which tests C(α) with rounding margins and scales α towards
0 (or uses its trace bound) where the test fails. The gap is then against the loss of the best PSD metric
at hand (:func:`repair_multipliers` returns the interior point's metric too, whose loss can be lower).

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the dual of the slack SDP of Sec. 2.1.3 (the loss (2.11)) with
   the triplets' matrices of Sec. 2.1.7 and the dual matrix (2.14), at a fixed partition of the triplets.
.. [2] C. Helmberg, F. Rendl, R. J. Vanderbei and H. Wolkowicz, "An interior-point method for
   semidefinite programming", SIAM J. Optim. 6(2), 1996 (the HKM direction); S. Mehrotra, "On the
   implementation of a primal-dual interior point method", SIAM J. Optim. 2(4), 1992.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from ..._deadline import Deadline
from ..._progress import say
from ...graphs import radius_hinges
from ...problems.lmnn import (
    LMNNInstance,
    lmnn_dual_bound,
    loss_unit,
    project_psd,
    triplet_keys,
    triplet_outer_sum,
)
from ...results import relative_gap
from .newton import max_step_pos, max_step_psd, pcg
from .pair_system import PairSystem, single_system, symmetric_part

__all__ = ["RepairOutcome", "merge_outcomes", "repair_multipliers", "repair_rounds", "repair_split"]

#: Rows of the Schur complement gathered at once (bounds the temporaries of the gathers to this many rows).
_ROWS = 2048

#: The start: multipliers inside [γ, μ − γ], γ = ``_START_MARGIN``·μ, and complementarity products at least
#: ``_START_CENTRING``·μ·band (the scale of α times a free hinge).
_START_MARGIN, _START_CENTRING = 1e-2, 0.1

#: PCG iterations at most per Newton solve with the float32 preconditioner (then the float64 matrix is factored).
_PCG_MAXITER = 30

#: Inexact Newton: relative PCG residual ``_INEXACT_FACTOR`` times the worst relative measure, within
#: [``_PCG_MIN``, ``_PCG_MAX``].
_INEXACT_FACTOR, _PCG_MIN, _PCG_MAX = 1e-3, 1e-11, 1e-6


@dataclass
class RepairOutcome:
    """The result of :func:`repair_multipliers`."""

    triplets: np.ndarray     # (|F| + |S|, 3): the fixed triplets, then the free ones
    alpha: np.ndarray        # their multipliers: μ on F, the solve's on S
    bound: float             # lmnn_dual_bound of (triplets, alpha)
    M: np.ndarray            # the metric of lowest loss (2.11) seen: the given one or an iterate (PSD)
    objective: float         # its loss (2.11)
    last: np.ndarray         # the interior point's last metric (PSD)
    n_fixed: int
    n_free: int
    iterations: int
    converged: bool          # the interior point reached tol (the bound is certified either way)
    seconds: float
    history: dict = field(default_factory=dict)
    rounds: int = 1          # the rounds of :func:`repair_rounds` up to this one


def repair_split(instance: LMNNInstance, M: np.ndarray, band: float) -> tuple[np.ndarray, np.ndarray]:
    """The fixed triplets F (hinge argument h_t > ``band`` at M) and the free ones S (|h_t| ≤ ``band``) of
    :func:`repair_multipliers`, from one scan of the hinges above −``band``
    (:func:`sdpembed.graphs.radius_hinges`; M must be PSD)."""
    triplets, h = radius_hinges(instance.X, instance.y, instance.targets, M, threshold=-band)
    return triplets[h > band], triplets[h <= band]


def _schur(system: PairSystem, M: np.ndarray, Xinv: np.ndarray, diag: np.ndarray,
           dtype: type = np.float64) -> np.ndarray:
    """H_ts = tr(A_t M A_s X⁻¹) + δ_ts diag_t (single block), from the pairs' Gram matrices, in ``dtype``."""
    U, W = system.U.astype(dtype), system.W.astype(dtype)
    a, b = system.a, system.b
    UM, WM = U @ M.astype(dtype), W @ M.astype(dtype)
    UX, WX = U @ Xinv.astype(dtype), W @ Xinv.astype(dtype)
    Euu = (UM @ U.T) * (UX @ U.T)
    Euw = (UM @ W.T) * (UX @ W.T)
    Eww = (WM @ W.T) * (WX @ W.T)
    del UM, WM, UX, WX
    m = a.size
    H = np.empty((m, m), dtype=dtype)
    for start in range(0, m, _ROWS):
        rows = slice(start, min(start + _ROWS, m))
        ar, br = a[rows], b[rows]
        H[rows] = Euu[ar][:, a]
        H[rows] += Eww[br][:, b]
        H[rows] -= Euw[ar][:, b]
        H[rows] -= Euw[a][:, br].T
    H[np.diag_indices(m)] += diag.astype(dtype)
    return H


def _factor(H: np.ndarray):
    try:
        return scipy.linalg.cho_factor(H, lower=True, check_finite=False, overwrite_a=True)
    except np.linalg.LinAlgError:
        ridge = 1e-12 * max(float(np.trace(H)), 1e-300) / H.shape[0]
        H[np.diag_indices_from(H)] += ridge
        return scipy.linalg.cho_factor(H, lower=True, check_finite=False, overwrite_a=True)


class _SchurSolver:
    """Solves H Δα = r for the Schur complement H of :func:`_schur`: PCG with the exact operator
    v ↦ 𝒜(M 𝒜*(v) X⁻¹) + diag·v (pairs and d × d products: O(pairs·d²) a product), preconditioned by H formed
    and factored in float32 after a Jacobi scaling; H in float64, factored, when float32 fails or PCG falls
    short of the tolerance."""

    def __init__(self, system: PairSystem, M: np.ndarray, Xinv: np.ndarray, diag: np.ndarray, tol: float,
                 single: bool = True):
        self.system, self.M, self.Xinv, self.diag, self.tol = system, M, Xinv, diag, tol
        self.exact, self.factor, self.products = None, None, 0
        if not single:
            return
        H = _schur(system, M, Xinv, diag, np.float32)
        self.scale = 1.0 / np.sqrt(np.maximum(np.diag(H).astype(np.float64), 1e-300))
        H *= self.scale.astype(np.float32)[:, None]
        H *= self.scale.astype(np.float32)[None, :]
        try:
            self.factor = scipy.linalg.cho_factor(H, lower=True, check_finite=False, overwrite_a=True)
        except np.linalg.LinAlgError:
            self.factor = None

    def operator(self, v: np.ndarray) -> np.ndarray:
        self.products += 1
        S = self.system.adjoint(v)[0]
        return self.system.apply((self.M @ S @ self.Xinv)[None]) + self.diag * v

    def precondition(self, r: np.ndarray) -> np.ndarray:
        z = scipy.linalg.cho_solve(self.factor, (self.scale * r).astype(np.float32), check_finite=False)
        return self.scale * z.astype(np.float64)

    def __call__(self, r: np.ndarray) -> np.ndarray:
        if self.exact is None and self.factor is not None:
            x, ok = pcg(self.operator, r, self.precondition, maxiter=_PCG_MAXITER, tol=self.tol)
            if ok:
                return x
        if self.exact is None:
            self.exact = _factor(_schur(self.system, self.M, self.Xinv, self.diag))
        return scipy.linalg.cho_solve(self.exact, r, check_finite=False)


def repair_multipliers(
    instance: LMNNInstance,
    M: np.ndarray,
    *,
    band: float = 1e-2,
    split: tuple[np.ndarray, np.ndarray] | None = None,
    alpha_start: tuple[np.ndarray, np.ndarray] | None = None,
    upper_bound: float | None = None,
    tol: float = 1e-9,
    max_iter: int = 60,
    gap_tol: float | None = None,
    max_free: int = 20000,
    deadline: Deadline | None = None,
    verbose: bool | int = False,
) -> RepairOutcome | None:
    """Repaired multipliers of the LMNN dual (2.11) at a fixed metric M (module docstring): α = μ on the
    triplets with hinge argument above ``band`` at M, α = 0 below −``band``, and in between the maximiser of
    the dual restricted to that split, by a primal–dual interior point in the multipliers.

    Parameters
    ----------
    instance : LMNNInstance
        The instance (on its spanning coordinates, as the fast driver solves it).
    M : ndarray of shape (d, d)
        A PSD metric near an optimum (projected by (2.16) here); it chooses the split and starts the
        interior point's primal iterate.
    band : float
        Triplets with |h_t(M)| ≤ band are free (units of the margin 1 of (2.6)). Wider: more unknowns,
        and a bound less sensitive to M's distance from an optimum.
    split : (fixed, free) triplet arrays, optional
        The partition to solve instead of the one of ``band`` at M (:func:`repair_split`): α = μ on
        ``fixed``, free on ``free``, 0 elsewhere; M then only starts the primal iterate. The bound is
        valid for any partition (module docstring).
    alpha_start : (triplets, alpha), optional
        Multipliers to start from (e.g. the interior point's); free triplets not listed start at μ/2.
    upper_bound : float, optional
        A loss (2.11) of a PSD metric, possibly not M: the gap of the early stop is measured against the
        lower of it and the losses seen, and :func:`~sdpembed.problems.lmnn.lmnn_dual_bound` takes that
        for its trace bound. The outcome's ``M`` and ``objective`` are always a metric and its own loss.
    tol : float
        Stop when the relative residuals and the relative gap of the restricted problem are ≤ tol.
    max_iter : int
        Newton steps at most.
    gap_tol : float, optional
        Also stop as soon as the certified bound of an iterate is within ``gap_tol`` of ``upper_bound``
        (relative, :func:`~sdpembed.results.relative_gap` with the loss unit μ); checked once the interior
        point's own measures are below 10·gap_tol.
    max_free : int
        More free triplets than this: no repair (None); the Newton system is max_free × max_free.
    deadline : Deadline, optional
        The run's time budget (``sdpembed._deadline.Deadline``): no Newton step starts after it has passed.
    verbose : bool or int
        A line per Newton step.

    Returns
    -------
    RepairOutcome or None
        None when more than ``max_free`` triplets are free or none is. ``bound`` is certified
        (:func:`~sdpembed.problems.lmnn.lmnn_dual_bound`) for any outcome.
    """
    start_time = time.perf_counter()
    mu, d = instance.mu, instance.dim
    M = project_psd(np.asarray(M, dtype=np.float64))
    fixed, free = repair_split(instance, M, band) if split is None else split
    m = free.shape[0]
    if m == 0 or m > max_free:
        if verbose:
            say(f"  repair: {m} free triplets (band {band:g}) - {'none' if m == 0 else 'too many'}; not repaired")
        return None
    # the returned metric is paired with its own loss; a lower loss of another metric (upper_bound) only
    # tightens the certificate's trace bound and the early stop
    own_loss = float(instance.objective(M))
    at_hand = own_loss if upper_bound is None else min(own_loss, float(upper_bound))
    system = single_system(instance, free)
    C0 = (1.0 - mu) * np.asarray(instance.pull_matrix) + triplet_outer_sum(instance.X, fixed,
                                                                          np.full(fixed.shape[0], mu))[0]
    triplets = np.concatenate([fixed, free])
    offset = mu * fixed.shape[0]
    unit = loss_unit(mu)

    def certified(alpha_free: np.ndarray, upper: float) -> float:
        alpha_all = np.concatenate([np.full(fixed.shape[0], mu), np.clip(alpha_free, 0.0, mu)])
        return lmnn_dual_bound(instance, triplets, alpha_all, upper_bound=upper)

    # start: α from the given multipliers (μ/2 where none), M lifted off the boundary, X = [C(α)]₊ + ν M⁻¹
    gamma = _START_MARGIN * mu
    alpha = np.full(m, 0.5 * mu)
    if alpha_start is not None and len(alpha_start[0]):
        n = instance.n_points
        given = triplet_keys(np.asarray(alpha_start[0]), n)
        order = np.argsort(given)
        given, given_alpha = given[order], np.asarray(alpha_start[1], dtype=np.float64)[order]
        pos = np.minimum(np.searchsorted(given, triplet_keys(free, n)), given.size - 1)
        found = given[pos] == triplet_keys(free, n)
        alpha[found] = given_alpha[pos[found]]
    alpha = np.clip(alpha, gamma, mu - gamma)
    lam = np.linalg.eigvalsh(M)
    Mk = M + max(1e-3 * float(lam[-1]) - float(lam[0]), 0.0) * np.eye(d)
    h = 1.0 + system.apply(Mk[None])
    beta = mu - alpha
    # ξ − s = h exactly, with αs ≥ ν0 and βξ ≥ ν0: every scalar pair starts at least as central as ν0
    nu0 = _START_CENTRING * mu * band
    e = nu0 * np.maximum(1.0 / alpha, 1.0 / beta)
    xi, s = np.maximum(h, 0.0) + e, np.maximum(-h, 0.0) + e
    lam_x, V = np.linalg.eigh(symmetric_part((C0 + system.adjoint(alpha)[0])[None])[0])
    X = (V * np.maximum(lam_x, 0.0)) @ V.T + nu0 * np.linalg.inv(Mk)
    X = 0.5 * (X + X.T)
    Mk, X = Mk[None], X[None]
    n_cone = d + 2 * m
    norm_c0 = 1.0 + float(np.linalg.norm(C0))
    history: dict[str, list] = {key: [] for key in ("primal", "dual", "pres", "dres", "gap", "bound", "loss")}
    best_M, best_loss = M, own_loss
    converged, best, best_alpha, it, steps = False, -np.inf, alpha.copy(), 0, (0.0, 0.0, 0.0, 0, True)
    for it in range(1, max_iter + 1):
        AM = system.apply(Mk)
        R_d = C0[None] + system.adjoint(alpha) - X
        R_p = 1.0 + AM + s - xi
        pobj = float(np.sum(C0 * Mk[0])) + mu * float(xi.sum())
        dobj = float(alpha.sum())
        pres = float(np.linalg.norm(R_p)) / (1.0 + np.sqrt(m))
        dres = float(np.linalg.norm(R_d)) / norm_c0
        gap = abs(relative_gap(pobj + offset, dobj + offset, unit))
        nu = (float(np.sum(Mk * X)) + float(alpha @ s) + float(beta @ xi)) / n_cone
        worst = max(pres, dres, gap)
        bound = loss = np.nan
        if gap_tol is not None and worst <= 10.0 * gap_tol:
            # the certificate of this iterate's multipliers, against the lower of the two losses at hand
            candidate = project_psd(Mk[0])
            loss = instance.objective(candidate)
            if loss < best_loss:
                best_M, best_loss = candidate, loss
            bound = certified(alpha, min(best_loss, at_hand))
            if bound > best:
                best, best_alpha = bound, alpha.copy()
        for key, value in (("primal", pobj + offset), ("dual", dobj + offset), ("pres", pres), ("dres", dres),
                           ("gap", gap), ("bound", bound), ("loss", loss)):
            history[key].append(value)
        if verbose:
            say(f"    repair {it:3d}  primal {pobj + offset:.10g}  dual {dobj + offset:.10g}  pres {pres:.1e}  "
                f"dres {dres:.1e}  gap {gap:.1e}  nu {nu:.1e}  steps {steps[0]:.2f}/{steps[1]:.2f}  pcg {steps[3]}"
                + (f"  loss {loss:.10g}  bound {bound:.10g}" if np.isfinite(bound) else ""))
        converged = worst <= tol
        # an M ⪰ 0 with ⟨C0, M⟩ + μ Σ [𝒜(M)]₊ < 0 proves the restricted problem unbounded below and its dual
        # infeasible (hinge_ipm, "Unboundedness"): the split fixed triplets that no free multiplier can offset
        linear = float(np.sum(C0 * Mk[0]))
        unbounded = (linear + mu * float(np.maximum(AM, 0.0).sum())
                     < -1e-10 * (abs(linear) + mu * float(np.abs(AM).sum())))
        closed = np.isfinite(best) and relative_gap(min(best_loss, at_hand), best, unit) <= gap_tol
        if converged or unbounded or closed:
            break
        if deadline is not None and deadline.passed():
            break
        if it > 5 and worst < 1e-6 and worst >= 0.5 * min(
                max(p_, d_, g_) for p_, d_, g_ in zip(history["pres"][-6:-1], history["dres"][-6:-1],
                                                     history["gap"][-6:-1], strict=True)):
            break                 # rounding floor: five steps without halving the worst measure
        try:
            Mk, X, alpha, beta, xi, s, steps = _newton_step(
                system, C0, mu, Mk, X, alpha, beta, xi, s, nu, n_cone, R_d, R_p,
                min(_PCG_MAX, max(_PCG_MIN, _INEXACT_FACTOR * worst)), steps[4])
        except np.linalg.LinAlgError:
            break
    candidate = project_psd(Mk[0])
    loss = instance.objective(candidate)
    if loss < best_loss:
        best_M, best_loss = candidate, loss
    final = certified(alpha, min(best_loss, at_hand))
    if final < best:
        alpha, final = best_alpha, best
    return RepairOutcome(
        triplets=triplets, alpha=np.concatenate([np.full(fixed.shape[0], mu), np.clip(alpha, 0.0, mu)]),
        bound=final, M=best_M, objective=best_loss, last=candidate, n_fixed=fixed.shape[0], n_free=m,
        iterations=it,
        converged=converged, seconds=time.perf_counter() - start_time, history=history,
    )


def _newton_step(system: PairSystem, C0: np.ndarray, mu: float, M: np.ndarray, X: np.ndarray, alpha: np.ndarray,
                 beta: np.ndarray, xi: np.ndarray, s: np.ndarray, nu: float, n_cone: int, R_d: np.ndarray,
                 R_p: np.ndarray, tol: float, single: bool) -> tuple:
    """One Mehrotra predictor–corrector step (HKM direction, dual-slack side) in the multipliers.

    Linearising C0 + 𝒜*(α) = X, 1 + 𝒜(M) + s − ξ = 0, MX = σνI, αs = σν, βξ = σν (β = μ − α):
    ΔX = R_d + 𝒜*(Δα), ΔM = sym(G − M ΔX X⁻¹) with G = σνX⁻¹ − M (less the second-order term),
    Δs = (r_a − sΔα)/α, Δξ = (r_b + ξΔα)/β, and the primal equation gives
    H Δα = R_p + 𝒜(G − M R_d X⁻¹) + r_a/α − r_b/β with H of :func:`_schur`."""
    Mb, Xb = M[0], X[0]
    Xc = np.linalg.inv(np.linalg.cholesky(Xb))
    Xinv = Xc.T @ Xc
    solve = _SchurSolver(system, Mb, Xinv, s / alpha + xi / beta, tol, single)
    MRX = Mb @ R_d[0] @ Xinv

    def direction(G: np.ndarray, ra: np.ndarray, rb: np.ndarray) -> tuple:
        rhs = R_p + system.apply((G - MRX)[None]) + ra / alpha - rb / beta
        dalpha = solve(rhs)
        dX = R_d + system.adjoint(dalpha)
        dM = symmetric_part((G - Mb @ dX[0] @ Xinv)[None])
        ds = (ra - s * dalpha) / alpha
        dxi = (rb + xi * dalpha) / beta
        return dM, dX, dalpha, dxi, ds

    def steps(dM, dX, dalpha, dxi, ds) -> tuple[float, float]:
        tp = min(max_step_psd(M, dM), max_step_pos(xi, dxi), max_step_pos(s, ds))
        td = min(max_step_psd(X, dX), max_step_pos(alpha, dalpha), max_step_pos(beta, -dalpha))
        return tp, td

    dM, dX, dalpha, dxi, ds = direction(-Mb, -alpha * s, -beta * xi)           # predictor (σ = 0)
    tp, td = steps(dM, dX, dalpha, dxi, ds)
    tp, td = min(1.0, tp), min(1.0, td)
    nu_aff = (float(np.sum((M + tp * dM) * (X + td * dX))) + float((alpha + td * dalpha) @ (s + tp * ds))
              + float((beta - td * dalpha) @ (xi + tp * dxi))) / n_cone
    sigma = min(1.0, max(0.0, nu_aff / nu)) ** 3
    G = sigma * nu * Xinv - Mb - dM[0] @ dX[0] @ Xinv                          # corrector
    dM, dX, dalpha, dxi, ds = direction(G, sigma * nu - alpha * s - dalpha * ds,
                                        sigma * nu - beta * xi + dalpha * dxi)
    tp, td = steps(dM, dX, dalpha, dxi, ds)
    tp, td = min(1.0, 0.98 * tp), min(1.0, 0.98 * td)
    M_new, X_new = symmetric_part(M + tp * dM), symmetric_part(X + td * dX)
    np.linalg.cholesky(M_new)            # raises LinAlgError if rounding left the cone
    np.linalg.cholesky(X_new)
    return (M_new, X_new, alpha + td * dalpha, beta - td * dalpha, xi + tp * dxi, s + tp * ds,
            (tp, td, sigma, solve.products, solve.exact is None))


def merge_outcomes(previous: RepairOutcome | None, out: RepairOutcome) -> RepairOutcome:
    """``out`` carrying the lowest loss and the highest bound of it and ``previous`` (the earlier rounds; both
    stay valid: a loss of a PSD metric, a certified bound), with their Newton steps and seconds summed."""
    if previous is not None:
        if previous.objective < out.objective:
            out.M, out.objective = previous.M, previous.objective
        if previous.bound > out.bound:
            out.triplets, out.alpha, out.bound = previous.triplets, previous.alpha, previous.bound
        out.iterations += previous.iterations
        out.seconds += previous.seconds
    return out


def repair_rounds(
    instance: LMNNInstance,
    M: np.ndarray,
    *,
    alpha_start: tuple[np.ndarray, np.ndarray] | None = None,
    upper_bound: float | None = None,
    band: float = 2e-2,
    rounds: int = 3,
    growth: float = 2.0,
    gap_tol: float = 1e-5,
    deadline: Deadline | None = None,
    verbose: bool | int = False,
    **options,
) -> RepairOutcome | None:
    """:func:`repair_multipliers` repeated on wider splits: while the certified gap is above ``gap_tol``, the next
    round splits the triplets at the metric of lowest loss found so far with the band times ``growth`` and
    starts from the multipliers found, until the ``deadline`` passes, ``rounds`` are done or a split has more
    free triplets than ``max_free``. A split at a metric away from an optimum fixes or drops triplets that sit
    at the margin of the optimum: the restricted optimum is then below the full one (the bound stays valid,
    module docstring), and its minimiser can be far from the optimum (the dropped hinges are not seen), so
    the next split is not made there but wider, where those triplets are free. Returns the last round's
    outcome with the lowest loss and the highest bound of all rounds (the metric of that loss; the triplets and
    multipliers of that bound; ``iterations`` and ``seconds`` summed), or None when no round could run
    (:func:`repair_multipliers`).
    ``options`` go to :func:`repair_multipliers` (``tol``, ``max_iter``, ``max_free``)."""
    best: RepairOutcome | None = None
    unit = loss_unit(instance.mu)
    for round_ in range(1, rounds + 1):
        out = repair_multipliers(instance, M, band=band, alpha_start=alpha_start, upper_bound=upper_bound,
                                 gap_tol=gap_tol, deadline=deadline, verbose=verbose, **options)
        if out is None:
            break
        out.rounds = round_
        best = merge_outcomes(best, out)
        gap = relative_gap(out.objective, out.bound, unit)
        if verbose:
            say(f"  repair round {round_}: {out.n_free} free, {out.n_fixed} fixed triplets (band {band:g}), "
                f"{out.iterations} Newton steps in all, loss {out.objective:.10g}, bound {out.bound:.10g}, "
                f"gap {gap:.2e}, {out.seconds:.1f} s")
        if gap <= gap_tol or (deadline is not None and deadline.passed()):
            break
        # a gap left by the split: the next one, wider, at the metric of lowest loss
        M, alpha_start, upper_bound, band = out.M, (out.triplets, out.alpha), out.objective, growth * band
    return best
