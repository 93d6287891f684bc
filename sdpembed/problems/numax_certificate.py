"""The certificate of the NuMax family's SDP: its bounds, its violation and the certified dual bound.

Every trace-minimisation SDP of the NuMax family is, with the secant operator 𝒜 of
:mod:`sdpembed.problems.numax_operator`,

    minimise tr P   subject to   lo ≤ 𝒜(P) ≤ hi,   P ⪰ 0,            (*)

with ``lo = 1−δ, hi = 1+δ`` for NuMax (4), and one-sided bounds for NuMax-Class (7)
(``hi = +∞`` on inter-class secants, ``lo = −∞`` on intra-class ones). Its Lagrange dual is

    maximise  g(y) = Σ_i ( lo_i · y_i⁺ − hi_i · y_i⁻ )   subject to   I − 𝒜*(y) ⪰ 0,

so any ``y`` (of the right signs) scaled by ``1/λ_max(𝒜*(y))`` gives a certified lower
bound on the optimum of (*): :func:`certified_lower_bound`. The CVXPY formulation
(:mod:`sdpembed.formulations.numax`) and the hand-written solvers (:mod:`sdpembed.solvers.numax`)
both compute their bound here.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the SDPs (4) and (7)/(15) in the one form (*), and
   the dual of (4): the certified lower bound.
"""

from __future__ import annotations

import numpy as np

from .numax_operator import SecantOperator

__all__ = [
    "box_violation",
    "certified_lower_bound",
    "check_bounds",
    "dual_objective",
    "secant_span",
    "signed_multipliers",
]


def check_bounds(lo: object, hi: object, n_constraints: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate the bounds of (*): float arrays of length S (scalars broadcast), no NaN,
    ``lo < +inf``, ``hi > −inf`` and lo ≤ hi; ``-inf``/``+inf`` mark absent bounds."""
    out = []
    for name, value in (("lo", lo), ("hi", hi)):
        try:
            arr = np.broadcast_to(np.asarray(value, dtype=np.float64), (n_constraints,))
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must be a scalar or an array of length {n_constraints} (one per secant), "
                f"got shape {np.shape(value)}"
            ) from None
        if np.any(np.isnan(arr)):
            raise ValueError(f"{name} contains NaN; use -inf/inf for an absent bound")
        out.append(arr)
    lo_arr, hi_arr = out
    if np.any(lo_arr == np.inf) or np.any(hi_arr == -np.inf):
        raise ValueError("lo must be < +inf and hi > -inf (the problem would be infeasible)")
    if np.any(lo_arr > hi_arr):
        raise ValueError("lo must not exceed hi for any constraint")
    return lo_arr, hi_arr


def box_violation(values: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float) -> float:
    """Worst violation max_i (lo_i − values_i, values_i − hi_i)₊ of lo ≤ 𝒜(P) ≤ hi (0 if none)."""
    return float(np.max(np.maximum(lo - values, values - hi), initial=0.0).clip(min=0.0))


def signed_multipliers(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Zero the multipliers of bounds that are absent (a lower bound of −∞ takes no y⁺)."""
    y = np.where(np.isfinite(lo), y, np.minimum(y, 0.0))
    return np.where(np.isfinite(hi), y, np.maximum(y, 0.0))


def dual_objective(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """g(y) = Σ lo_i y_i⁺ − hi_i y_i⁻, the dual objective of (*) (positively homogeneous)."""
    y = signed_multipliers(np.asarray(y, dtype=np.float64), lo, hi)
    pos = np.maximum(y, 0.0)
    neg = np.maximum(-y, 0.0)
    lo_term = np.where(pos > 0, lo, 0.0) * pos
    hi_term = np.where(neg > 0, hi, 0.0) * neg
    return float(lo_term.sum() - hi_term.sum())


def _adjoint_by_syrk(V: np.ndarray, y: np.ndarray) -> np.ndarray:
    """𝒜*(y) = Vᵀ diag(y) V as B₊ᵀB₊ − B₋ᵀB₋, the rows of V scaled by √|y_i| (positive, negative y_i).

    numpy's matmul computes a product Bᵀ B of one array with its transpose by ``syrk``: half the
    products of the general (Vᵀ diag(y)) V. The rounding is bounded in :func:`certified_lower_bound`.
    """
    out = np.zeros((V.shape[1], V.shape[1]))
    for rows, sign in ((y > 0, 1.0), (y < 0, -1.0)):
        if rows.any():
            scaled = V[rows] * np.sqrt(np.abs(y[rows]))[:, None]
            out += sign * (scaled.T @ scaled)
    return out


def certified_lower_bound(
    operator: SecantOperator, lo: np.ndarray, hi: np.ndarray, y: np.ndarray
) -> tuple[float, np.ndarray]:
    """Turn any multiplier vector into a certified lower bound on the optimum of (*).

    The sign pattern of ``y`` is first made admissible (no multiplier on an absent bound),
    then ``y`` is scaled by ``t = 1/λ_max(𝒜*(y))`` so that ``I − 𝒜*(t y) ⪰ 0``: ``t y`` is
    dual feasible and ``g(t y) = t g(y)`` bounds tr P* from below (weak duality). The
    computed λ_max is inflated by bounds on the rounding errors of forming 𝒜*(y) and of the
    eigen-solver (16·N·ε·‖𝒜*(y)‖₂), so that the certificate survives floating point. ``y = 0``
    gives the trivial bound 0.

    𝒜*(y) = B₊ᵀB₊ − B₋ᵀB₋ is formed by two ``syrk``, with the rows b_i = fl(fl(√|y_i|)·v_i) of
    the S₊ positive and S₋ negative multipliers. With the unit roundoff u = ε/2 and
    γ_m = m·u/(1 − m·u): the square root (in both factors), the two scalings and the product give
    b_ia·b_ib = |y_i| v_ia v_ib (1 + θ), |θ| ≤ γ₅; each entry is then a sum of S₊ products (in
    some order) less a sum of S₋, which adds at most γ_{S−1} times the sum of their magnitudes
    (γ_{S₊−1} for a sum alone; γ_{max(S₊, S₋)} ≤ γ_{S−1} with the final subtraction when both
    are nonempty; the zero start and the sign are exact). So the computed matrix differs from
    𝒜*(y) by E with |E_ab| ≤ γ_{S+4} Σ_i |y_i||v_ia||v_ib|, and
    ‖E‖₂ ≤ γ_{S+4} λ_max(Σ_i |y_i| |v_i||v_i|ᵀ) ≤ γ_{S+4} Σ_i |y_i|‖v_i‖²  (a positive
    semidefinite matrix's largest eigenvalue is at most its trace). The margin added is
    4·S·ε·Σ|y_i|‖v_i‖² (with the computed ‖v_i‖², at least (1 − γ_N) times the exact ones),
    which exceeds γ_{S+4} ≤ 1.01·(S + 4)·ε/2 for every S ≥ 1 with S·ε < 10⁻³.

    Parameters
    ----------
    operator : SecantOperator
    lo, hi : ndarray of shape (S,)
        Constraint bounds of (*); ``±inf`` marks an absent bound.
    y : ndarray of shape (S,)
        Multipliers; ``y_i > 0`` prices the lower bound, ``y_i < 0`` the upper one.

    Returns
    -------
    bound : float
        A lower bound on min tr P over (*).
    y_feasible : ndarray of shape (S,)
        The dual-feasible multipliers that attain ``bound``.
    """
    operator = operator.explicit()
    y = signed_multipliers(np.asarray(y, dtype=np.float64), lo, hi)
    g = dual_objective(y, lo, hi)
    if not np.isfinite(g) or g <= 0.0:
        return 0.0, np.zeros_like(y)
    V = operator.V
    eigenvalues = np.linalg.eigvalsh(_adjoint_by_syrk(V, y))
    eps = np.finfo(float).eps
    spectral = float(np.max(np.abs(eigenvalues)))
    row_norms2 = np.einsum("ij,ij->i", V, V)
    forming = operator.n_constraints * eps * float(np.abs(y) @ row_norms2)
    lam = float(eigenvalues[-1]) + 16.0 * operator.dim * eps * spectral + 4.0 * forming
    # lam > 0 here: g > 0 needs y ≠ 0, which makes the rounding margin positive. If 𝒜*(y)
    # is negative semidefinite (an infeasibility certificate), the bound is g / margin:
    # finite, and larger than the trace of any feasible P could be.
    return g / lam, y / lam


def secant_span(secants: np.ndarray, rtol: float = 1e-6, residual_tol: float = 1e-10) -> np.ndarray | None:
    """Orthonormal basis Q (N, r) of the row space of ``secants``, or None if it is all of Rᴺ.

    The basis comes from the eigenvectors of the Gram VᵀV whose singular value exceeds
    ``rtol`` times the largest; it is accepted only if every secant is reproduced to
    ``residual_tol`` (max_i ‖v_i − QQᵀv_i‖), which bounds the change of any v_iᵀPv_i by
    about 2·residual_tol·‖P‖. Otherwise None is returned and no reduction is made.
    """
    gram = secants.T @ secants
    w, U = np.linalg.eigh(0.5 * (gram + gram.T))
    keep = w > (rtol**2) * max(float(w[-1]), 1e-300)
    if keep.all():
        return None
    Q = U[:, keep]
    residual = secants - (secants @ Q) @ Q.T
    if float(np.max(np.linalg.norm(residual, axis=1), initial=0.0)) > residual_tol:
        return None
    return Q
