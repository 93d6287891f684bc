"""The embedding Ψ = Λ_M^½ U_Mᵀ of a PSD matrix P = U Λ Uᵀ (NuMax eq. (5)).

Rank threshold. We keep the fewest leading eigenpairs whose *dropped* eigenvalues sum to at
most ``tail_tol``. This is the threshold that matters for an isometry: for any unit vector
v, vᵀPv − ‖Ψv‖² = Σ_{j>M} λ_j (u_jᵀv)² ∈ [0, Σ_{j>M} λ_j], so Ψ meets every secant
constraint of P up to ``tail_tol`` (on the lower side only). The default 1e-6 is below the
feasibility tolerance of our solvers and above the eigenvalue noise of interior-point
solutions.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the embedding (5).
"""

from __future__ import annotations

import numpy as np

from .._validate import symmetric_matrix

__all__ = ["numerical_rank", "tail_rank", "embedding_from_psd", "DEFAULT_TAIL_TOL"]

DEFAULT_TAIL_TOL = 1e-6


def tail_rank(eigenvalues_desc: np.ndarray, tail_tol: float) -> int:
    """Smallest M with Σ_{j>M} max(λ_j, 0) ≤ tail_tol (eigenvalues sorted descending)."""
    positive = np.maximum(eigenvalues_desc, 0.0)
    tails = np.concatenate([np.cumsum(positive[::-1])[::-1], [0.0]])   # tails[M] = Σ_{j≥M}
    return int(np.argmax(tails <= tail_tol))


def numerical_rank(P: np.ndarray, tail_tol: float = DEFAULT_TAIL_TOL) -> int:
    """Rank of a PSD matrix under the tail-sum rule of this module."""
    return tail_rank(np.linalg.eigvalsh(symmetric_matrix(P, "P"))[::-1], tail_tol)


def embedding_from_psd(
    P: np.ndarray, *, n_components: int | None = None, tail_tol: float = DEFAULT_TAIL_TOL
) -> np.ndarray:
    """Ψ = Λ_M^½ U_Mᵀ of NuMax (5), shape (M, N), rows ordered by decreasing eigenvalue.

    Parameters
    ----------
    P : ndarray of shape (N, N)
        Symmetric PSD matrix (tiny negative eigenvalues from solvers are clipped to 0).
    n_components : int, optional
        Force M; by default M is the numerical rank under ``tail_tol``.
    tail_tol : float
        Largest total of dropped eigenvalues (see the module docstring).
    """
    P = symmetric_matrix(P, "P")
    w, U = np.linalg.eigh(P)
    w, U = w[::-1], U[:, ::-1]
    if n_components is None:
        M = tail_rank(w, tail_tol)
    else:
        if not (isinstance(n_components, (int, np.integer)) and 0 <= n_components <= P.shape[0]):
            raise ValueError(f"n_components must be an integer in [0, {P.shape[0]}], got {n_components!r}")
        M = int(n_components)
    return np.sqrt(np.maximum(w[:M], 0.0))[:, None] * U[:, :M].T
