"""The secant operator 𝒜 of NuMax and the certified dual bound it induces.

For a secant matrix ``V`` whose rows are unit vectors ``v_i`` (NuMax eq. (1)),

    𝒜(X)  = ( v_iᵀ X v_i )_{i=1..S}          (NuMax Sec. 3.1, below eq. (2))
    𝒜*(y) = Σ_i y_i v_i v_iᵀ = Vᵀ diag(y) V    (the adjoint, used in (13))
    𝒜𝒜*   = (V Vᵀ) ∘ (V Vᵀ)                  (an S×S matrix; Hadamard square of the Gram)

Every trace-minimisation SDP of the NuMax family is

    minimise tr P   subject to   lo ≤ 𝒜(P) ≤ hi,   P ⪰ 0,            (*)

with ``lo = 1−δ, hi = 1+δ`` for NuMax (4), and one-sided bounds for NuMax-Class (7)
(``hi = +∞`` on inter-class secants, ``lo = −∞`` on intra-class ones). Its Lagrange dual is

    maximise  g(y) = Σ_i ( lo_i · y_i⁺ − hi_i · y_i⁻ )   subject to   I − 𝒜*(y) ⪰ 0,

so any ``y`` (of the right signs) scaled by ``1/λ_max(𝒜*(y))`` gives a certified lower
bound on the optimum of (*): :func:`certified_lower_bound`.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "SecantOperator",
    "PairSecantOperator",
    "box_violation",
    "certified_lower_bound",
    "dual_objective",
    "check_bounds",
    "secant_span",
]


class SecantOperator:
    """The linear map 𝒜 : Sᴺ → Rˢ, X ↦ (v_iᵀ X v_i)_i, and its adjoint.

    Parameters
    ----------
    secants : ndarray of shape (S, N)
        The rows ``v_i``. They need not be unit vectors here; instances normalise them.
    """

    def __init__(self, secants: np.ndarray) -> None:
        self.V = np.ascontiguousarray(secants, dtype=np.float64)
        if self.V.ndim != 2:
            raise ValueError(f"secants must be a 2-D array (S, N), got shape {self.V.shape}")

    @property
    def n_constraints(self) -> int:
        """Number of secants S."""
        return self.V.shape[0]

    @property
    def dim(self) -> int:
        """Ambient dimension N."""
        return self.V.shape[1]

    def apply(self, X: np.ndarray) -> np.ndarray:
        """𝒜(X) = (v_iᵀ X v_i)_i for a symmetric (N, N) matrix X; O(S N²)."""
        return np.einsum("ij,ij->i", self.V @ X, self.V)

    def adjoint(self, y: np.ndarray) -> np.ndarray:
        """𝒜*(y) = Σ_i y_i v_i v_iᵀ = Vᵀ diag(y) V, an (N, N) symmetric matrix; O(S N²)."""
        return (self.V.T * y) @ self.V

    def gram_squared(self) -> np.ndarray:
        """The (S, S) matrix of 𝒜𝒜*, with entries (v_iᵀ v_j)²."""
        G = self.V @ self.V.T
        return G * G

    def explicit(self) -> SecantOperator:
        """The operator computed from the explicit secant rows (used for certificates)."""
        return self

    def in_basis(self, basis: np.ndarray) -> SecantOperator:
        """𝒜 restricted to matrices QP̃Qᵀ, in the coordinates of the orthonormal ``basis`` Q (N, r)."""
        return SecantOperator(self.V @ basis)


class PairSecantOperator(SecantOperator):
    """𝒜 for the secants of pairs of points, v_k = (x_{i_k} − x_{j_k}) / ‖x_{i_k} − x_{j_k}‖.

    Same map as :class:`SecantOperator` on the same rows, computed through the n_a points
    the S pairs touch — the structure column generation (NuMax Algorithm 2) works with:

        𝒜(P)_k  = (x_i − x_j)ᵀ P (x_i − x_j) / d_k²  from B = X_a P,            O(n_a N² + S N)
        𝒜*(y)   = X_aᵀ Lap(w) X_a,  w_k = y_k / d_k²  (a weighted graph Laplacian), O(n_a² N + n_a N²)

    instead of O(S N²) each: a large saving when S ≫ n_a (thousands of pairs among hundreds
    of points). Certificates use :meth:`explicit`, the row-by-row computation.

    Parameters
    ----------
    points : ndarray of shape (n, N)
    i, j : ndarray of shape (S,)
        Pair indices into ``points``; every pair must be of distinct points.
    """

    def __init__(self, points: np.ndarray, i: np.ndarray, j: np.ndarray) -> None:
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        used, inverse = np.unique(np.concatenate([i, j]), return_inverse=True)
        pts = np.asarray(points, dtype=np.float64)[used]
        self.points = pts - pts.mean(axis=0)                  # differences unchanged, less cancellation
        self.i, self.j = inverse[: i.size], inverse[i.size:]
        D = self.points[self.i] - self.points[self.j]
        self.norms = np.linalg.norm(D, axis=1)
        if np.any(self.norms == 0.0):
            raise ValueError("every pair must join two distinct points (a zero secant has no direction)")
        D /= self.norms[:, None]                              # in place: one (S, N) array, not two
        super().__init__(D)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """𝒜(X) through B = X_a X: ((b_i − b_j)·v_k) / d_k."""
        B = self.points @ X
        return np.einsum("ij,ij->i", B[self.i] - B[self.j], self.V) / self.norms

    def adjoint(self, y: np.ndarray) -> np.ndarray:
        """𝒜*(y) = Σ_k y_k v_k v_kᵀ = X_aᵀ Lap(w) X_a with edge weights w_k = y_k / d_k²."""
        n_a = self.points.shape[0]
        w = np.asarray(y, dtype=np.float64) / self.norms**2
        W = np.bincount(self.i * n_a + self.j, weights=w, minlength=n_a * n_a).reshape(n_a, n_a)
        W += W.T
        laplacian = np.diag(W.sum(axis=1)) - W
        out = self.points.T @ (laplacian @ self.points)
        return 0.5 * (out + out.T)

    def explicit(self) -> SecantOperator:
        """The same map from the explicit unit rows (rounding errors bounded row by row)."""
        return SecantOperator(self.V)

    def in_basis(self, basis: np.ndarray) -> PairSecantOperator:
        """The pair operator on the points' coordinates in the orthonormal ``basis`` Q (N, r)."""
        out = PairSecantOperator.__new__(PairSecantOperator)
        out.points, out.i, out.j, out.norms = self.points @ basis, self.i, self.j, self.norms
        # the rows through the points: O(n_a N r) rather than O(S N r) for V @ basis
        out.V = (out.points[self.i] - out.points[self.j]) / self.norms[:, None]
        return out


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


def _signed_multipliers(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Zero the multipliers of bounds that are absent (a lower bound of −∞ takes no y⁺)."""
    y = np.where(np.isfinite(lo), y, np.minimum(y, 0.0))
    return np.where(np.isfinite(hi), y, np.maximum(y, 0.0))


def dual_objective(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """g(y) = Σ lo_i y_i⁺ − hi_i y_i⁻, the dual objective of (*) (positively homogeneous)."""
    y = _signed_multipliers(np.asarray(y, dtype=np.float64), lo, hi)
    pos = np.maximum(y, 0.0)
    neg = np.maximum(-y, 0.0)
    lo_term = np.where(pos > 0, lo, 0.0) * pos
    hi_term = np.where(neg > 0, hi, 0.0) * neg
    return float(lo_term.sum() - hi_term.sum())


def certified_lower_bound(
    operator: SecantOperator, lo: np.ndarray, hi: np.ndarray, y: np.ndarray
) -> tuple[float, np.ndarray]:
    """Turn any multiplier vector into a certified lower bound on the optimum of (*).

    The sign pattern of ``y`` is first made admissible (no multiplier on an absent bound),
    then ``y`` is scaled by ``t = 1/λ_max(𝒜*(y))`` so that ``I − 𝒜*(t y) ⪰ 0``: ``t y`` is
    dual feasible and ``g(t y) = t g(y)`` bounds tr P* from below (weak duality). The
    computed λ_max is inflated by bounds on the rounding errors of forming 𝒜*(y)
    (≈ S·ε·Σ|y_i|‖v_i‖²) and of the eigen-solver (≈ N·ε·‖𝒜*(y)‖₂), so that the certificate
    survives floating point. ``y = 0`` gives the trivial bound 0.

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
    y = _signed_multipliers(np.asarray(y, dtype=np.float64), lo, hi)
    g = dual_objective(y, lo, hi)
    if not np.isfinite(g) or g <= 0.0:
        return 0.0, np.zeros_like(y)
    eigenvalues = np.linalg.eigvalsh(operator.adjoint(y))
    eps = np.finfo(float).eps
    spectral = float(np.max(np.abs(eigenvalues)))
    row_norms2 = np.einsum("ij,ij->i", operator.V, operator.V)
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
