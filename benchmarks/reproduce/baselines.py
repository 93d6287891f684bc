"""Small baselines of NuMax Fig. 3(b) that neither sdpembed nor scikit-learn provides: LPP and NPE.

Both are linear maps found by a generalised eigenproblem on a k-nearest-neighbour graph, written
here in a few lines for the reproduction only (not part of sdpembed):

* LPP (He and Niyogi): heat-kernel weights W on the kNN graph, L = D − W; the rows of the map
  are the generalised eigenvectors of Xᵀ L X a = λ Xᵀ D X a with the smallest λ.
* NPE (He, Cai, Yan and Zhang): the LLE reconstruction weights W of each point from its k
  neighbours, 𝓜 = (I − W)ᵀ(I − W); the eigenvectors of Xᵀ 𝓜 X a = λ Xᵀ X a with the smallest λ.

With fewer points than pixels the right-hand matrices are singular; a ridge of ``reg`` times
their mean diagonal makes them definite (the usual regularisation; the papers apply PCA first).
The maps' scale is arbitrary, so Fig. 3(b)'s isometry constant is measured after the best
uniform rescaling (see :func:`best_scaled_delta`).

References
----------
.. [1] X. He and P. Niyogi, "Locality preserving projections", NIPS 16, 2003.
.. [2] X. He, D. Cai, S. Yan and H.-J. Zhang, "Neighborhood preserving embedding", ICCV 2005.
.. [3] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Fig. 3(b).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh
from sklearn.neighbors import NearestNeighbors


def _neighbours(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    distances, index = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    return distances[:, 1:], index[:, 1:]


def _smallest_generalised(A: np.ndarray, B: np.ndarray, n_components: int, reg: float) -> np.ndarray:
    B = B + reg * np.mean(np.diag(B)) * np.eye(len(B))
    _, vectors = eigh((A + A.T) / 2.0, (B + B.T) / 2.0, subset_by_index=[0, n_components - 1])
    return vectors.T


def lpp_projection(X: np.ndarray, n_components: int, *, k: int = 5, reg: float = 1e-6) -> np.ndarray:
    """Locality preserving projections: the (n_components, N) map of He and Niyogi."""
    Xc = X - X.mean(axis=0)
    distances, index = _neighbours(Xc, k)
    t = np.mean(distances**2)
    W = np.zeros((len(X), len(X)))
    W[np.repeat(np.arange(len(X)), k), index.ravel()] = np.exp(-distances.ravel() ** 2 / t)
    W = np.maximum(W, W.T)
    D = np.diag(W.sum(axis=1))
    return _smallest_generalised(Xc.T @ (D - W) @ Xc, Xc.T @ D @ Xc, n_components, reg)


def npe_projection(X: np.ndarray, n_components: int, *, k: int = 5, reg: float = 1e-6,
                   lle_reg: float = 1e-3) -> np.ndarray:
    """Neighbourhood preserving embedding: the (n_components, N) map of He, Cai, Yan and Zhang."""
    Xc = X - X.mean(axis=0)
    _, index = _neighbours(Xc, k)
    Z = Xc[index] - Xc[:, None, :]                                  # (n, k, N) neighbours about each point
    G = np.einsum("ikn,iln->ikl", Z, Z)
    G += lle_reg * np.trace(G, axis1=1, axis2=2)[:, None, None] * np.eye(k) + 1e-12 * np.eye(k)
    w = np.linalg.solve(G, np.ones((len(X), k, 1)))[..., 0]
    w /= w.sum(axis=1, keepdims=True)
    W = np.zeros((len(X), len(X)))
    W[np.repeat(np.arange(len(X)), k), index.ravel()] = w.ravel()
    R = np.eye(len(X)) - W
    return _smallest_generalised(Xc.T @ (R.T @ R) @ Xc, Xc.T @ Xc, n_components, reg)


def best_scaled_delta(ratios: np.ndarray) -> float:
    """min over c > 0 of max |c·r − 1| over the squared-norm ratios r, i.e. (max r − min r)/(max r + min r).

    The isometry constant of RIP (2) after the best uniform rescaling of an embedding whose
    scale is arbitrary (kernel PCA, MDS, LPP, NPE).
    """
    lo, hi = float(np.min(ratios)), float(np.max(ratios))
    return (hi - lo) / (hi + lo) if hi + lo > 0 else 1.0
