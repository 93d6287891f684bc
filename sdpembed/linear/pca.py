"""PCA as a linear embedding: the M leading principal directions as the rows of Ψ.

NuMax Sec. 5.1 learns the PCA basis on the secant set (``center=False`` on secants); on
data points the usual centred PCA applies. PCA is a contraction: ‖Ψv‖ ≤ ‖v‖.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_matrix, check_positive_int

__all__ = ["pca_projection"]


def pca_projection(data: np.ndarray, n_components: int, *, center: bool = True) -> np.ndarray:
    """Orthonormal rows Ψ (M, N) spanning the top-M principal subspace of ``data``.

    Parameters
    ----------
    data : ndarray of shape (n, N)
        Points (or secants) as rows.
    n_components : int
        M, at most min(n, N).
    center : bool
        Subtract the mean first (False for secant sets, which are symmetric).
    """
    data = as_matrix(data, "data")
    M = check_positive_int(n_components, "n_components")
    if M > min(data.shape):
        raise ValueError(f"n_components must be <= min(n, N) = {min(data.shape)}, got {M}")
    centred = data - data.mean(axis=0) if center else data
    _, _, Vt = np.linalg.svd(centred, full_matrices=False)
    return Vt[:M].copy()
