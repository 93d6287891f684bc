"""Locally linear reconstruction (Roweis and Saul; thesis Sec. 3.2.1): the weights W and the
LLE matrix M = (I − W)ᵀ(I − W).

* :func:`lle_weights` — the weights that best reconstruct points from given neighbours,
  min ‖x_i − Σ_j w_ij x_j‖² subject to Σ_j w_ij = 1 (the thesis' first LLE loss; Saul and Roweis
  2003, eq. (2)–(3)), through the local Gram matrix C_jl = (x_i − x_j)ᵀ(x_i − x_l) regularised
  as C + reg·tr(C)·I, as in scikit-learn's LLE; batched over points.
* :func:`lle_matrix` — W over each point's k nearest neighbours, and M = (I − W)ᵀ(I − W), the
  sparse positive semidefinite matrix whose bottom eigenvectors are LLE's outputs (the thesis'
  second LLE loss). M·1 = 0 because every row of W sums to 1, so the constant vector is its
  bottom eigenvector, as for the graph Laplacian (3.24): variational MVU may use either basis
  (Sec. 3.1.8, "Laplacian Eigenmaps and Locally Linearly Embedding", Fig. 3.17).

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the LLE reconstruction of Sec. 3.2.1 and its matrix, the
   alternative basis of Sec. 3.1.8.
.. [2] L. K. Saul and S. T. Roweis, "Think globally, fit locally: unsupervised learning of low
   dimensional manifolds", Journal of Machine Learning Research 4, 119–155, 2003. Implemented here:
   the reconstruction weights, eq. (2)–(3).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._validate import as_matrix
from .neighborhood import knn_indices

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["lle_matrix", "lle_weights"]


def lle_weights(x_new: np.ndarray, X_neighbours: np.ndarray, *, reg: float = 1e-3) -> np.ndarray:
    """Saul–Roweis reconstruction weights of points from their neighbours, vectorised.

    For each point x_t and its neighbours x_1..x_k, minimise ‖x_t − Σ_j w_j x_j‖² subject
    to Σ_j w_j = 1: with C_jl = (x_t − x_j)ᵀ(x_t − x_l), w ∝ (C + reg·tr(C)·I)⁻¹ 1, normalised
    to sum to 1 (the regulariser makes C invertible when k > d or x_t lies in the affine hull
    of its neighbours; ``tr(C) = 0`` falls back to ``reg``).

    Parameters
    ----------
    x_new : ndarray of shape (m, d)
    X_neighbours : ndarray of shape (m, k, d)
    reg : float
        Relative regularisation (scikit-learn's default 1e-3).

    Returns
    -------
    ndarray of shape (m, k)
        Weights, each row summing to 1.
    """
    x_new = as_matrix(x_new, "x_new", min_rows=0)
    Xn = np.asarray(X_neighbours, dtype=np.float64)
    if Xn.ndim != 3 or Xn.shape[0] != x_new.shape[0] or Xn.shape[2] != x_new.shape[1]:
        raise ValueError(
            f"X_neighbours must have shape (m, k, d) = ({x_new.shape[0]}, k, {x_new.shape[1]}) to match x_new, "
            f"got {Xn.shape}"
        )
    if Xn.shape[1] < 1:
        raise ValueError("X_neighbours must hold at least one neighbour per point")
    if not np.all(np.isfinite(Xn)):
        raise ValueError("X_neighbours contains NaN or infinite entries")
    if not (np.isfinite(reg) and reg > 0):
        raise ValueError(f"reg must be a positive number, got {reg!r}")
    k = Xn.shape[1]
    Z = x_new[:, None, :] - Xn                                          # x_t − x_j
    C = np.einsum("mjd,mld->mjl", Z, Z)
    trace = np.trace(C, axis1=1, axis2=2)
    C[:, range(k), range(k)] += np.where(trace > 0, reg * trace, reg)[:, None]
    w = np.linalg.solve(C, np.ones((x_new.shape[0], k, 1)))[:, :, 0]
    return w / w.sum(axis=1, keepdims=True)


def lle_matrix(X: np.ndarray, n_neighbors: int, *, reg: float = 1e-3) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """LLE's reconstruction weights over the k nearest neighbours, and M = (I − W)ᵀ(I − W).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    n_neighbors : int
        k, each point reconstructed from its k nearest neighbours (itself excluded).
    reg : float
        See :func:`lle_weights`.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n, n)
        Row i holds the weights of x_i's neighbours; every row sums to 1.
    M : scipy.sparse.csr_matrix of shape (n, n)
        (I − W)ᵀ(I − W), symmetric positive semidefinite with M·1 = 0.
    """
    import scipy.sparse as sp  # at first use (DESIGN.md, "Start-up")

    X = as_matrix(X, "X", min_rows=2)
    n = X.shape[0]
    index, _ = knn_indices(X, n_neighbors)
    w = lle_weights(X, X[index], reg=reg)
    W = sp.csr_matrix((w.ravel(), index.ravel(), np.arange(0, n * index.shape[1] + 1, index.shape[1])), shape=(n, n))
    A = sp.identity(n, format="csr") - W
    return W, (A.T @ A).tocsr()
