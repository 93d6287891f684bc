"""Primal polish of a low-rank NuMax iterate: Gauss–Newton steps on its factor back into the box.

Near the optimum the ADMM (NuMax Algorithm 1) has its certified gap long before its primal
iterate meets the constraints to 10⁻⁶: its primal residual shrinks only linearly, so the last
restricted problem of column generation can need several times the iterations that reached
its gap to bring the worst violation down by one more digit (BENCHMARKS.md, "NuMax at scale
on MNIST").

The polish settles that tail directly. With P = FFᵀ (F of shape (r, k), the rank-k factor) and
unit secants v_k, the constraint values a_k(F) = ‖Fᵀv_k‖² have the Jacobian J whose row k is
dF ↦ 2 v_kᵀ dF y_k (y_k = Fᵀv_k). The minimum-norm step dF = Jᵀt with

    J Jᵀ t = clip(a, lo, hi) − a,      J Jᵀ = 4 (VVᵀ) ∘ (YYᵀ),   Jᵀt = 2 Vᵀ diag(t) Y,

moves every violated value to its bound and leaves the others where they are, to first order;
the error left is ‖dFᵀv_k‖², the square of a 10⁻⁵ correction. The S × S system is factorised
once in single precision and solved by iterative refinement with exact double-precision
products (with a condition number κ each refinement step gains about 7 − log₁₀ κ digits);
later Gauss–Newton steps reuse the factor, and so can a later polish of the same rows and a few more
(:class:`NormalSystem`): column generation settles the handful of pairs its final scan adds to a
solved working set this way, the factor bordered by the new rows (O(S²k) for k of them, against
O(S³) afresh) and the change of F made up by the refinement.

The polished P = FFᵀ is PSD and of the same rank by construction. It is a *different primal
point* from the ADMM's: callers recompute its violation and objective and keep it only if it is
feasible to their tolerance and its gap against the (unchanged) dual bound is still within
theirs — so the certificate stays a proven one.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the constraints of the SDP (4) on the factor of P, for the
   iterates of Algorithms 1–2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg

from ...problems.numax_certificate import signed_multipliers
from .least_squares import factorisation_thread_limit

__all__ = ["NormalSystem", "polish_factor", "polish_targets", "polish_with_system", "polished_objective_estimate"]


def _values(V: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Y = VF, a = ‖Fᵀv_k‖² for every row v_k of V)."""
    Y = V @ F
    return Y, np.einsum("ij,ij->i", Y, Y)


def _normal_product(V: np.ndarray, Y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """J Jᵀ t = 2 rowsum((V dF) ∘ Y) with dF = Jᵀt = 2 Vᵀ diag(t) Y, exactly (O(S r k))."""
    dF = 2.0 * (V.T @ (t[:, None] * Y))
    return 2.0 * np.einsum("ij,ij->i", V @ dF, Y)


#: columns of 4·YYᵀ made at a time by :func:`_normal_factor` (an S × NORMAL_BLOCK temporary)
NORMAL_BLOCK = 1024


def _normal_factor(V: np.ndarray, Y: np.ndarray, cosines: np.ndarray | None = None) -> NormalSystem | None:
    """J Jᵀ = 4 (VVᵀ) ∘ (YYᵀ) factorised in single precision (``syrk`` and ``potrf``
    on :func:`~sdpembed.solvers.numax.least_squares.factorisation_threads` threads), with a ridge of
    10⁻⁷ of its largest diagonal entry against rank deficiency; None if the factorisation fails even so.
    ``cosines``, if given, is VVᵀ (its lower triangle is read, and overwritten).

    One S × S array is made (or none, with ``cosines``): 4·YYᵀ multiplies its lower triangle
    ``NORMAL_BLOCK`` columns at a time."""
    S = V.shape[0]
    with factorisation_thread_limit(S):
        if cosines is None:
            normal = scipy.linalg.blas.ssyrk(1.0, V.astype(np.float32), lower=1)        # lower triangles
        else:
            normal = np.asfortranarray(cosines, dtype=np.float32)
        Y32 = Y.astype(np.float32)
        for first in range(0, S, NORMAL_BLOCK):
            block = slice(first, min(first + NORMAL_BLOCK, S))
            product = (Y32[block] @ Y32[first:].T).T            # rows first, … of these columns of YYᵀ
            product *= 4.0
            normal[first:, block] *= product                     # both in Fortran order
        del Y32
        ridge = 1e-7 * float(normal.diagonal().max(initial=1.0))
        normal[np.diag_indices(S)] += ridge
        factor, info = scipy.linalg.lapack.spotrf(normal, lower=1, clean=0, overwrite_a=1)
    return NormalSystem(factor, ridge) if info == 0 else None


@dataclass
class NormalSystem:
    """J Jᵀ of a polish factorised in single precision, for the rows it was made for and possibly k
    more: the lower Cholesky factor L (m, m) of its first m rows with the ridge added to its diagonal
    and, for k bordering rows with blocks A₂₁ (k, m) and A₂₂ (k, k), W = L⁻¹A₂₁ᵀ and the Cholesky
    factor of the Schur complement A₂₂ − WᵀW.

    It only preconditions the refinement of :func:`polish_with_system`, whose residuals are exact
    products at the current F: a factor made at a nearby F, or bordered at another, costs refinement
    steps, never accuracy.
    """

    factor: np.ndarray
    ridge: float
    border: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def size(self) -> int:
        """The rows it solves for (m + k)."""
        return self.factor.shape[0] + (0 if self.border is None else self.border[1].shape[0])

    def solve(self, b: np.ndarray) -> np.ndarray:
        """(J Jᵀ)⁻¹ b (two triangular solves with L, and two with the Schur factor when bordered)."""
        strsv = scipy.linalg.blas.strsv
        m = self.factor.shape[0]
        u = strsv(self.factor, np.asarray(b[:m], dtype=np.float32), lower=1)
        if self.border is None:
            return strsv(self.factor, u, lower=1, trans=1, overwrite_x=1).astype(np.float64)
        W, schur = self.border
        u2 = strsv(schur, np.asarray(b[m:], dtype=np.float32) - W.T @ u, lower=1)
        x2 = strsv(schur, u2, lower=1, trans=1, overwrite_x=1)
        x1 = strsv(self.factor, u - W @ x2, lower=1, trans=1, overwrite_x=1)
        return np.concatenate([x1, x2]).astype(np.float64)

    def bordered(self, V: np.ndarray, Y: np.ndarray) -> NormalSystem | None:
        """This system of the first m rows of V (S, r), extended to all of them with Y = VF:
        A₂₁ = 4 (V₂V₁ᵀ) ∘ (Y₂Y₁ᵀ), A₂₂ likewise plus the ridge, O(m²k); None when it is bordered
        already, or its Schur complement is not positive definite in single precision."""
        m = self.factor.shape[0]
        if self.border is not None or V.shape[0] <= m:
            return None
        V1, V2, Y1, Y2 = V[:m], V[m:], Y[:m], Y[m:]
        A12 = np.asfortranarray((4.0 * (V1 @ V2.T) * (Y1 @ Y2.T)).astype(np.float32))
        A22 = 4.0 * (V2 @ V2.T) * (Y2 @ Y2.T)
        A22[np.diag_indices_from(A22)] += self.ridge
        with factorisation_thread_limit(m):
            W = scipy.linalg.blas.strsm(1.0, self.factor, A12, lower=1, overwrite_b=1)       # L⁻¹A₁₂
        W64 = W.astype(np.float64)
        schur, info = scipy.linalg.lapack.spotrf((A22 - W64.T @ W64).astype(np.float32), lower=1, clean=1)
        return NormalSystem(self.factor, self.ridge, (W, schur)) if info == 0 else None


def polish_factor(V: np.ndarray, F: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, tol: float,
                  **options: Any) -> np.ndarray | None:
    """Minimum-norm Gauss–Newton correction of F so that lo ≤ ‖Fᵀv_k‖² ≤ hi for every row of V:
    :func:`polish_with_system` (its ``options``) without the normal system — the corrected factor,
    every value within ``tol`` of its box, or None when the steps did not get there (a rank-deficient
    or inconsistent system), so the caller keeps iterating."""
    return polish_with_system(V, F, lo, hi, tol=tol, **options)[0]


def polish_targets(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, multipliers: np.ndarray | None = None,
                   reach: float = 0.0) -> np.ndarray:
    """The moves a polish asks of the values a_k = ‖Fᵀv_k‖²: clip(a_k, lo_k, hi_k) − a_k, and, with
    ``multipliers`` y, b_k − a_k for every a_k within ``reach`` of the bound b_k its y_k prices (lo_k for
    y_k > 0, hi_k for y_k < 0).

    Complementary slackness puts a constraint with y_k ≠ 0 on its bound at the optimum; an ADMM
    iterate has it only near, inside or outside. Moving just the violated values (the clip) raises
    tr P by about Σ y_k (clip(a_k) − a_k) (:func:`polished_objective_estimate`); moving every priced
    value onto its bound changes it by Σ y_k (b_k − a_k) = g(y) − ⟨𝒜*(y), P⟩ instead, which vanishes
    to first order when 𝒜*(y) is the identity on the range of P
    (:func:`~sdpembed.solvers.numax.pair_linalg.range_corrected_multipliers`): the polished tr P then
    lands on the dual objective g(y). Both moves keep every value in its box.

    Parameters
    ----------
    values : ndarray of shape (S,)
        a = 𝒜(P).
    lo, hi : ndarray of shape (S,)
        The bounds (infinite entries allowed).
    multipliers : ndarray of shape (S,), optional
        y (y_k > 0 prices lo_k, y_k < 0 prices hi_k; a multiplier of an absent bound is ignored).
    reach : float
        Largest distance |b_k − a_k| of a priced value moved onto its bound (0: clip only).

    Returns
    -------
    ndarray of shape (S,)
        The moves.

    References
    ----------
    .. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
       learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
       6109–6121, 2015. Implemented here: the constraints of the SDP (4) and their multipliers.
    """
    target = np.clip(values, lo, hi) - values
    if multipliers is None or not reach > 0.0:
        return target
    y = signed_multipliers(np.asarray(multipliers, dtype=np.float64), lo, hi)
    with np.errstate(invalid="ignore"):
        move = np.where(y > 0.0, lo, hi) - values              # finite wherever y ≠ 0 after signing
    onto = (y != 0.0) & (np.abs(move) <= reach)
    return np.where(onto, move, target)


def polished_objective_estimate(objective: float, values: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                                y: np.ndarray, reach: float = 0.0) -> float:
    """tr P after a polish, to first order: ``objective`` + Σ_k y_k t_k for the moves t of
    :func:`polish_targets` (``y`` and ``reach`` as there).

    Near an optimum with multipliers y, tr P changes like the Lagrangian, tr P − Σ_k y_k (a_k − b_k),
    so moving a value by t_k changes tr P by about y_k t_k. A caller whose polished P must stay
    within a gap of a dual bound can thus skip the factorisation of J Jᵀ when the estimate already
    misses it. Multipliers of the wrong sign for a bound (or of an absent bound) are zeroed first,
    as in the dual objective.

    Parameters
    ----------
    objective : float
        tr P of the iterate.
    values : ndarray of shape (S,)
        a = 𝒜(P).
    lo, hi : ndarray of shape (S,)
        The bounds.
    y : ndarray of shape (S,)
        Multipliers (y_k > 0 prices lo_k, y_k < 0 prices hi_k).
    reach : float
        As for :func:`polish_targets`.

    Returns
    -------
    float
        The estimated trace of the polished P.

    References
    ----------
    .. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
       learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
       6109–6121, 2015. Implemented here: the Lagrangian of the SDP (4).
    """
    y = signed_multipliers(np.asarray(y, dtype=np.float64), lo, hi)
    return float(objective) + float(y @ polish_targets(values, lo, hi, y, reach))


def polish_with_system(
    V: np.ndarray,
    F: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    tol: float,
    max_steps: int = 3,
    max_refinements: int = 8,
    cosines: Callable[[], np.ndarray] | None = None,
    system: NormalSystem | None = None,
    multipliers: np.ndarray | None = None,
    reach: float = 0.0,
) -> tuple[np.ndarray | None, NormalSystem | None]:
    """Minimum-norm Gauss–Newton correction of F so that lo ≤ ‖Fᵀv_k‖² ≤ hi for every row of V, with
    the factorised normal system J Jᵀ it used.

    Parameters
    ----------
    V : ndarray of shape (S, r)
        Unit secants v_k (rows), in the coordinates of F.
    F : ndarray of shape (r, k)
        Factor of the iterate, P = FFᵀ.
    lo, hi : ndarray of shape (S,)
        Bounds (infinite entries allowed).
    tol : float
        Largest violation max(lo − a, a − hi)₊ accepted.
    max_steps : int
        Gauss–Newton steps (the first one usually suffices: the error it leaves is quadratic).
    max_refinements : int
        Refinement steps per linear solve; each must shrink the residual, or the step stops.
    cosines : callable, optional
        ``cosines()`` returns VVᵀ (S, S) in single precision, which the caller may compute more
        cheaply than from V (e.g. from the points of pair secants,
        :func:`~sdpembed.solvers.numax.least_squares.secant_cosines`); it is called at most once,
        and its result is overwritten.
    system : NormalSystem, optional
        The system of a polish of the first rows of V (all of them, or fewer: it is then bordered by
        the others, :meth:`NormalSystem.bordered`) at a nearby F; without one, or when it does not
        fit, the system is factorised afresh.
    multipliers, reach
        With multipliers y, every value within ``reach`` of the bound its y prices is moved onto it
        too (:func:`polish_targets`): to first order the polished tr P is then the dual objective
        g(y) rather than tr P plus the cost of the violated values' moves.

    Returns
    -------
    (ndarray of shape (r, k) or None, NormalSystem or None)
        The corrected factor, every value within ``tol`` of its box, or None when the steps did not
        get there (a rank-deficient or inconsistent system); and the system used (None if none was
        needed or none could be factorised).
    """
    Y, a = _values(V, F)
    S = V.shape[0]
    if system is not None and system.size != S:
        system = system.bordered(V, Y)          # None unless it is an unbordered system of fewer rows
    for _ in range(max_steps):
        target = polish_targets(a, lo, hi, multipliers, reach)
        if np.max(np.abs(target), initial=0.0) <= tol:
            return F, system
        if system is None:
            system = _normal_factor(V, Y, None if cosines is None else cosines())
            if system is None:
                return None, None
        t, residual = np.zeros_like(target), target
        for _ in range(max_refinements):
            t += system.solve(residual)
            new = target - _normal_product(V, Y, t)
            if np.max(np.abs(new)) >= np.max(np.abs(residual)):      # refinement stalled
                break
            residual = new
            if np.max(np.abs(residual)) <= 0.1 * tol:
                break
        F = F + 2.0 * (V.T @ (t[:, None] * Y))
        Y, a = _values(V, F)
    return (F if np.max(np.maximum(lo - a, a - hi), initial=0.0) <= tol else None), system
