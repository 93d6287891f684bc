"""NILE-Pro — Near-Isometric Linear Embedding via Proximal mapping (Luo et al. [1], Sec. 4, Algorithm 2).

NILE-Pro minimises the worst distortion of a rank-M map directly,

    minimise_Ψ ‖𝒜(ΨᵀΨ) − 1_S‖_∞ ,    Ψ ∈ R^{M×N}                               (4.1)

with 𝒜(ΨᵀΨ) = (‖Ψv_k‖²)_k over unit secants v_k. Splitting q = 𝒜(ΨᵀΨ) (4.2) gives the scaled
augmented Lagrangian (4.3)

    L(Ψ, q; ω) = ‖q − 1_S‖_∞ + (β/2)‖𝒜(ΨᵀΨ) − q + ω‖²,

minimised alternately:

1. q-step (4.5)–(4.7): with τ = 𝒜(ΨᵀΨ) + ω − 1_S, x = q − 1_S solves
   min ‖x‖_∞ + (β/2)‖x − τ‖², i.e. x = prox_{‖·‖_∞/β}(τ); by Moreau's decomposition
   x = τ − Π_{‖·‖₁ ≤ 1/β}(τ) = (1/β)(βτ − Π_{‖·‖₁≤1}(βτ)), and q = 1_S + x;
2. Ψ-step (4.4): one gradient step (Algorithm 2) on φ(Ψ) = ½‖𝒜(ΨᵀΨ) − q + ω‖², whose gradient
   is 2Ψ𝒜*(𝒜(ΨᵀΨ) − q + ω) (Algorithm 2's "Ψ − 2ηΨ𝒜*(…)");
3. ω ← ω + (𝒜(ΨᵀΨ) − q) (4.8);
4. stop when δ₀ = ‖𝒜(ΨᵀΨ) − 1_S‖_∞ ≤ δ (Algorithm 2; we ask δ₀ ≤ δ(1 − 10⁻¹⁰), so that the
   claim survives re-evaluation with other rounding).

Rederivations and departures (the PDF text of [1] is garbled in places):

* **Signs and scaling.** The extraction loses the signs of (4.3), (4.6) and (4.8). We use the
  scaled form above, for which τ = 𝒜(ΨᵀΨ) + ω − 1_S as in Algorithm 2 and the multiplier
  update is ω ← ω + (𝒜(ΨᵀΨ) − q); the printed "ω + β(…)" would be the update of an
  *unscaled* multiplier and is inconsistent with τ. y = βω is then the multiplier of
  q = 𝒜(ΨᵀΨ), a subgradient of ‖·‖_∞ at a fixed point (‖y‖₁ = 1).
* **Step size.** [1] leaves η open; we take an Armijo backtracking step on φ (at most
  ``inner_steps`` steps per iteration, default 1 as in Algorithm 2), starting from 1.5 times
  the previous accepted step. A fixed η either diverges or crawls, depending on S.
* **β.** [1] gives no value; the default β = 0.1 is the fastest of 0.01…100 on translating
  squares; larger β make the ℓ∞ term too weak and the run stalls.
* **Start.** Ψ₀ defaults to the M leading principal directions of the secants, scaled so that
  their distortions are centred on 1 ([1] does not say how it starts).
* **Stall test.** Besides the δ test, a run stops as ``stalled`` when both the step
  ‖Ψ_{k+1} − Ψ_k‖_F/‖Ψ_k‖_F and the split residual ‖𝒜(ΨᵀΨ) − q‖_∞ fall below ``tol`` (the
  ADMM has reached a fixed point whose distortion exceeds δ), or when ``patience``
  iterations shrank the excess of the least distortion over δ by less than 1% (it circles
  a stationary point).

The problem is non-convex: reaching δ is not guaranteed, and nothing certifies optimality.
Every iteration costs O(S N M) with explicit secants, or O(min(n_a, 2N) n_a M + S M) on the pairs
of a point set (:class:`~sdpembed.problems.numax_operator.PairSecantOperator`), whose gradient
steps are kept as weights of the n_a points (Ψ = Ψ_b − 2WᵀX_a: the gradient of φ is a combination
of the points, and its images those of the point images 2X_aX_aᵀA), and O(S log S) for the
ℓ₁-ball projection; no N×N matrix is formed. The images VΨᵀ are linear in Ψ, so the trial
steps of the line search cost O(S M) each (they are recomputed from Ψ every 50 iterations
and before δ is declared met, so rounding cannot accumulate).

References
----------
.. [1] J. Luo, K. Shapiro, H.-J. M. Shi, Q. Yang and K. Zhu, "Practical algorithms for learning
   near-isometric linear embeddings", SIAM Undergraduate Research Online 9, 2016
   (arXiv:1601.00062). Implemented here: NILE-Pro, (4.1)–(4.8) and Algorithm 2 of Sec. 4.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..._validate import check_positive_int, check_random_state
from ...problems.numax_operator import SecantOperator
from .nonconvex import (
    BestMap,
    FactorOps,
    NearIsometricResult,
    Progress,
    check_common,
    check_positive_float,
    check_rank,
    project_l1_ball,
    start_map,
)

__all__ = ["NILEProState", "nilepro", "prox_linf"]


@dataclass
class NILEProState:
    """Iterates that warm-start a later run: the map Ψ (M, N), the scaled multipliers ω (one
    per secant; column generation restricts and pads them) and the last accepted step."""

    Psi: np.ndarray
    omega: np.ndarray
    step: float = 1.0

    def restricted(self, keep: np.ndarray, n_added: int) -> NILEProState:
        """The state for a new working set: the secants ``keep`` (mask) of this one, then ``n_added`` new ones."""
        return NILEProState(self.Psi, np.concatenate([self.omega[keep], np.zeros(n_added)]), self.step)


class _PointSteps:
    """NILE-Pro's gradient steps on the pairs of a point set kept as point weights: Ψ = Ψ_b − 2WᵀX_a.

    On a pair operator the gradient of φ is 2Ψ𝒜*(r) = 2AᵀX_a with A = Inc(B∘r / d) (n_a, M)
    (:meth:`~sdpembed.solvers.near_isometric.nonconvex.FactorOps.scatter`), so a step Ψ − ηg adds ηA to W,
    and the images of the gradient are those of the point images X_a gᵀ = 2KA, K = X_aX_aᵀ: one product of
    n_a²M operations per iteration (or 2n_aNM through X_a when n_a ≥ 2N) instead of the two of 2n_aNM
    (Ψ𝒜*(r), then its images), and the (M, N) map is formed only when it is wanted (the periodic
    refresh of the images, the best map, the result). ‖g‖² = 4⟨A, KA⟩.
    """

    def __init__(self, ops: FactorOps, Psi: np.ndarray) -> None:
        self.ops, self.points = ops, ops.op.points
        self.gram = ops.point_gram() if self.points.shape[0] < 2 * ops.N else None
        self.base, self.W = Psi, np.zeros((self.points.shape[0], Psi.shape[0]))

    def gradient(self, B: np.ndarray, res: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(A, images of the gradient, ‖gradient‖²) at images ``B`` and residual ``res``."""
        A = self.ops.scatter(B, res)
        KA = self.gram @ A if self.gram is not None else self.points @ (self.points.T @ A)
        return A, self.ops.pair_images(2.0 * KA), 4.0 * float(np.sum(A * KA))

    def snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        return self.base, self.W.copy()

    def map(self, snapshot: tuple[np.ndarray, np.ndarray] | np.ndarray | None = None) -> np.ndarray:
        """Ψ of a :meth:`snapshot` (the current one by default; an array is already a map)."""
        if isinstance(snapshot, np.ndarray):
            return snapshot
        base, W = (self.base, self.W) if snapshot is None else snapshot
        return base - 2.0 * (W.T @ self.points)

    def rebase(self) -> np.ndarray:
        """The current Ψ, made the new base (W = 0)."""
        self.base, self.W = self.map(), np.zeros_like(self.W)
        return self.base


def prox_linf(tau: np.ndarray, beta: float) -> np.ndarray:
    """argmin_x ‖x‖_∞ + (β/2)‖x − τ‖² ((4.5)–(4.6) of Luo et al.) by Moreau's decomposition:
    τ − Π_{‖·‖₁ ≤ 1/β}(τ), i.e. τ clipped to [−t, t] with Σ(|τ_i| − t)₊ = 1/β (0 if ‖τ‖₁ ≤ 1/β)."""
    return tau - project_l1_ball(tau, 1.0 / beta)


def nilepro(
    secants: np.ndarray | SecantOperator,
    delta: float,
    rank: int | None = None,
    *,
    initial_map: np.ndarray | str = "pca",
    beta: float = 0.1,
    max_iter: int = 5000,
    tol: float = 1e-8,
    patience: int = 200,
    inner_steps: int = 1,
    warm_start: NILEProState | None = None,
    random_state=None,
    verbose: bool | int = False,
    time_limit: float | None = None,
    forecast: bool = False,
    cpu_time_limit: float | None = None,
) -> NearIsometricResult:
    """NILE-Pro (Luo et al., Algorithm 2): a rank-``rank`` map Ψ with ‖𝒜(ΨᵀΨ) − 1‖_∞ ≤ δ, if it finds one.

    Parameters
    ----------
    secants : ndarray of shape (S, N) or SecantOperator
        Unit secants v_k (rows), or the operator of a pair set (faster for many pairs).
    delta : float
        Requested isometry constant δ ∈ (0, 1): the run stops as soon as it is reached.
    rank : int, optional
        M, the number of rows of Ψ; by default that of ``initial_map`` or ``warm_start``.
    initial_map : {"pca", "random"} or ndarray of shape (M, N)
        Ψ₀ (see the module docstring); ignored with ``warm_start``.
    beta : float
        Penalty β of (4.3).
    max_iter : int
        Iteration limit m of Algorithm 2 (0: only evaluate Ψ₀).
    tol : float
        Stall tolerance (see the module docstring).
    patience : int
        Also stop as ``stalled`` when ``patience`` iterations shrank the excess of the least
        distortion over δ by less than 1% (the ADMM with one gradient step can circle a
        stationary point for ever without its residuals vanishing). 0 switches this test off.
    inner_steps : int
        Gradient steps on (4.4) per iteration (Algorithm 2: 1).
    warm_start : NILEProState, optional
        Start from these iterates (ω must have one entry per secant).
    random_state : None, int or Generator
        Seed of ``initial_map="random"``.
    verbose : bool or int
        Print progress every ``verbose`` iterations (``True``: 100).
    time_limit : float, optional
        Wall-clock seconds; reaching it gives status ``max_iterations``.
    cpu_time_limit : float, optional
        CPU seconds of the process (all threads, BLAS's included; ``sdpembed._deadline``), which the machine's
        load does not change; reaching it gives status ``max_iterations``.
    forecast : bool
        Also stop as ``stalled`` when, at a ``patience`` checkpoint, the excess of the least
        distortion over δ would need more than the iterations left of ``max_iter`` to vanish at
        the pace of the last ``patience`` iterations (:class:`~sdpembed.solvers.near_isometric.nonconvex.BestMap`;
        the rank adjustments switch it on).

    Returns
    -------
    NearIsometricResult
        ``Psi`` is the first iterate that met δ (status ``converged``) or, failing that, the
        iterate of least distortion; ``extra`` holds ``state`` (:class:`NILEProState` of the
        last iterate) and ``y`` = βω. ``history``: ``isometry`` (δ₀ per iteration),
        ``linf`` (‖q − 1‖_∞), ``residual`` (‖𝒜(ΨᵀΨ) − q‖_∞), ``step``.
    """
    start = time.perf_counter()
    ops = secants if isinstance(secants, FactorOps) else FactorOps(secants)
    delta, max_iter, tol = check_common(delta, max_iter, tol)
    beta = check_positive_float(beta, "beta")
    inner_steps = check_positive_int(inner_steps, "inner_steps")
    rng = check_random_state(random_state)
    if warm_start is not None:
        Psi = np.array(warm_start.Psi, dtype=np.float64)
        if Psi.ndim != 2 or Psi.shape[1] != ops.N:
            raise ValueError(f"warm_start.Psi must have shape (M, {ops.N}), got {Psi.shape}")
        omega = np.array(warm_start.omega, dtype=np.float64)
        if omega.shape != (ops.S,):
            raise ValueError(f"warm_start.omega must have one entry per secant ({ops.S}), got {omega.shape}")
        step = float(warm_start.step)
    else:
        if rank is None:
            if isinstance(initial_map, str):
                raise ValueError("rank must be given (an integer >= 1) unless initial_map is an array")
            rank = np.asarray(initial_map).shape[0]
        rank = check_rank(rank, ops.N)
        Psi = start_map(ops, rank, initial_map, rng)
        omega, step = np.zeros(ops.S), 1.0
    if rank is not None and check_rank(rank, ops.N) != Psi.shape[0]:
        raise ValueError(f"rank must equal the rows of the warm start ({Psi.shape[0]}), got {rank}")
    patience = check_positive_int(patience, "patience", minimum=0)
    progress = Progress(verbose, "nilepro")

    B = ops.images(Psi)
    a = ops.values(B)
    d0 = float(np.max(np.abs(a - 1.0)))
    tracker = BestMap(Psi, d0, delta, patience, time_limit, start, max_iter if forecast else None,
                      cpu_time_limit=cpu_time_limit)
    steps = _PointSteps(ops, Psi) if ops.pairs else None
    hist: dict[str, list[float]] = {"isometry": [d0], "linf": [np.nan], "residual": [np.nan], "step": [np.nan]}
    status, message, iteration = "max_iterations", f"reached max_iter={max_iter} with distortion above delta", 0
    if d0 <= tracker.accept:
        status, message = "converged", f"the initial map already meets delta ({d0:.6g} <= {delta:g})"
    else:
        for iteration in range(1, max_iter + 1):
            x = prox_linf(a + omega - 1.0, beta)                              # (4.5)-(4.6), τ = 𝒜 + ω − 1
            q = 1.0 + x                                                       # (4.7)
            target = q - omega
            old = Psi if steps is None else steps.snapshot()
            for _ in range(inner_steps):                                      # (4.4), Algorithm 2
                res = a - target
                phi = 0.5 * float(res @ res)
                if steps is None:
                    grad = 2.0 * ops.factor_adjoint(B, res)
                    gnorm2 = float(np.sum(grad * grad))
                else:
                    A, BG, gnorm2 = steps.gradient(B, res)
                if gnorm2 == 0.0:
                    break
                if steps is None:
                    BG = ops.images(grad)                                     # images are linear in Ψ
                step *= 1.5
                for _ in range(60):                                           # Armijo backtracking
                    B_t = B - step * BG
                    a_t = ops.values(B_t)
                    r_t = a_t - target
                    if 0.5 * float(r_t @ r_t) <= phi - 1e-4 * step * gnorm2:
                        break
                    step *= 0.5
                if steps is None:
                    Psi = Psi - step * grad
                else:
                    steps.W += step * A
                B, a = B_t, a_t
            d0 = float(np.max(np.abs(a - 1.0)))
            if d0 <= tracker.accept or iteration % 50 == 0:                            # images afresh: no drift
                if steps is not None:
                    Psi = steps.rebase()
                B = ops.images(Psi)
                a = ops.values(B)
                d0 = float(np.max(np.abs(a - 1.0)))
            if not np.isfinite(d0):
                status, message = "stalled", f"the iterates diverged at iteration {iteration} (non-finite values)"
                break
            residual = a - q
            omega += residual                                                 # (4.8), scaled
            r_inf = float(np.max(np.abs(residual)))
            for key, value in zip(hist, (d0, float(np.max(np.abs(x))), r_inf, step), strict=True):
                hist[key].append(value)
            tracker.record(Psi if steps is None else steps.snapshot(), d0)
            progress(iteration, f"distortion {d0:.6f}  ||q-1||inf {hist['linf'][-1]:.6f}  "
                                f"residual {r_inf:.2e}  step {step:.2e}")
            met = tracker.converged(d0, iteration)
            if met:
                status, message = "converged", met
                break
            move = np.inf                                                     # the stall test needs both small
            if r_inf <= tol:
                if steps is not None:
                    Psi, old = steps.map(), steps.map(old)
                move = float(np.linalg.norm(Psi - old)) / max(float(np.linalg.norm(old)), 1e-300)
            if move <= tol:
                status = "stalled"
                message = (f"fixed point after {iteration} iteration(s) (step {move:.1e}, residual {r_inf:.1e}) "
                           f"with distortion {d0:.6g} > delta {delta:g}")
                break
            stop = tracker.gave_up(iteration)
            if stop:
                status, message = stop
                break
    if steps is not None:
        Psi, tracker.best = steps.map(), steps.map(tracker.best)
    progress(iteration, f"{status}: {message}", force=True)
    return tracker.result(Psi, d0, status, message, "nilepro", iteration, hist, ops.S,
                          {"state": NILEProState(Psi, omega, step), "y": beta * omega})
