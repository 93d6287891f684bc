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
later Gauss–Newton steps reuse the factor.

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

import numpy as np
import scipy.linalg

from .least_squares import factorisation_thread_limit

__all__ = ["polish_factor"]


def _values(V: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Y = VF, a = ‖Fᵀv_k‖² for every row v_k of V)."""
    Y = V @ F
    return Y, np.einsum("ij,ij->i", Y, Y)


def _normal_product(V: np.ndarray, Y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """J Jᵀ t = 2 rowsum((V dF) ∘ Y) with dF = Jᵀt = 2 Vᵀ diag(t) Y, exactly (O(S r k))."""
    dF = 2.0 * (V.T @ (t[:, None] * Y))
    return 2.0 * np.einsum("ij,ij->i", V @ dF, Y)


def _normal_factor(V: np.ndarray, Y: np.ndarray, cosines: np.ndarray | None = None) -> np.ndarray | None:
    """Lower Cholesky factor of J Jᵀ = 4 (VVᵀ) ∘ (YYᵀ) in single precision (``syrk`` and ``potrf``
    on :func:`~sdpembed.solvers.numax.least_squares.factorisation_threads` threads), with a ridge of
    10⁻⁷ of its largest diagonal entry against rank deficiency; None if the factorisation fails even so.
    ``cosines``, if given, is VVᵀ (its lower triangle is read, and overwritten)."""
    S = V.shape[0]
    with factorisation_thread_limit(S):
        if cosines is None:
            normal = scipy.linalg.blas.ssyrk(1.0, V.astype(np.float32), lower=1)        # lower triangles
        else:
            normal = np.asfortranarray(cosines, dtype=np.float32)
        normal *= scipy.linalg.blas.ssyrk(4.0, Y.astype(np.float32), lower=1)
        normal[np.diag_indices(S)] += 1e-7 * float(normal.diagonal().max(initial=1.0))
        factor, info = scipy.linalg.lapack.spotrf(normal, lower=1, clean=0, overwrite_a=1)
    return factor if info == 0 else None


def _solve(factor: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(J Jᵀ)⁻¹ b through the single-precision factor (two triangular solves)."""
    y = scipy.linalg.blas.strsv(factor, b.astype(np.float32), lower=1)
    return scipy.linalg.blas.strsv(factor, y, lower=1, trans=1, overwrite_x=1).astype(np.float64)


def polish_factor(
    V: np.ndarray,
    F: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    tol: float,
    max_steps: int = 3,
    max_refinements: int = 8,
    cosines: Callable[[], np.ndarray] | None = None,
) -> np.ndarray | None:
    """Minimum-norm Gauss–Newton correction of F so that lo ≤ ‖Fᵀv_k‖² ≤ hi for every row of V.

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

    Returns
    -------
    ndarray of shape (r, k) or None
        The corrected factor, every value within ``tol`` of its box; None when the steps did
        not get there (a rank-deficient or inconsistent system), so the caller keeps iterating.
    """
    Y, a = _values(V, F)
    factor = None
    for _ in range(max_steps):
        target = np.clip(a, lo, hi) - a
        if np.max(np.abs(target), initial=0.0) <= tol:
            return F
        if factor is None:
            factor = _normal_factor(V, Y, None if cosines is None else cosines())
            if factor is None:
                return None
        t, residual = np.zeros_like(target), target
        for _ in range(max_refinements):
            t += _solve(factor, residual)
            new = target - _normal_product(V, Y, t)
            if np.max(np.abs(new)) >= np.max(np.abs(residual)):      # refinement stalled
                break
            residual = new
            if np.max(np.abs(residual)) <= 0.1 * tol:
                break
        F = F + 2.0 * (V.T @ (t[:, None] * Y))
        Y, a = _values(V, F)
    return F if np.max(np.maximum(lo - a, a - hi), initial=0.0) <= tol else None
