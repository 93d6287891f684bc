"""The spectral step of MVU: step (III) of Table 3.1, K = Σ_α λ_α v_α v_αᵀ (3.20) and outputs
Y_αi = √λ_α V_αi (3.21), the top ``n_components`` of them.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: step (III) of Table 3.1, (3.20)–(3.21).
"""

from __future__ import annotations

import numpy as np

from ..._validate import check_positive_int, symmetric_matrix

__all__ = ["spectral_embedding"]


def spectral_embedding(K: np.ndarray, n_components: int) -> tuple[np.ndarray, np.ndarray]:
    """Outputs from an inner-product matrix, (3.20)–(3.21).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric (PSD up to rounding).
    n_components : int
        d ≤ n, the number of leading eigenvectors kept.

    Returns
    -------
    Y : ndarray of shape (n, d)
        Y[:, α] = √λ_α v_α for the d largest eigenvalues (negative rounding clipped to 0).
    eigenvalues : ndarray of shape (n,)
        All eigenvalues of K, largest first.
    """
    K = symmetric_matrix(K, "K")
    d = check_positive_int(n_components, "n_components")
    if d > K.shape[0]:
        raise ValueError(f"n_components must be at most n = {K.shape[0]}, got {d}")
    w, V = np.linalg.eigh(K)
    w, V = w[::-1], V[:, ::-1]
    return V[:, :d] * np.sqrt(np.maximum(w[:d], 0.0)), w
