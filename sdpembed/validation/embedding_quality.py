"""The quality measures of MVU embeddings in the thesis (Sec. 3.1.4, 3.1.9).

* :func:`eigenvalue_spectrum` — the eigenvalues of K as a fraction of its trace (Fig. 3.5, 3.11);
* :func:`local_continuity` (3.27), :func:`local_trust` (3.28), :func:`neighborhood_intersection`
  (3.29).

For (3.27) and (3.28) the minimisation over the scale s is in closed form: with a the vector of
distances that is scaled and b the other one (both over all pairs i, j ∈ 𝒩(i)),
min_s ‖s a − b‖² / ‖b‖² = 1 − (aᵀb)² / (‖a‖²‖b‖²), so each measure is the squared cosine
between the two distance vectors, in [0, 1], 1 exactly when the local distances agree up to
one global scale.

The spectral step (3.20)–(3.21) that turns K into outputs is
:func:`sdpembed.solvers.mvu.spectral.spectral_embedding`.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the eigenvalue spectra of Sec. 3.1.4 and the quality
   measures (3.27)–(3.29) of Sec. 3.1.9.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_matrix, check_positive_int, symmetric_matrix
from ..graphs import knn_indices

__all__ = [
    "eigenvalue_spectrum",
    "local_continuity",
    "local_trust",
    "neighborhood_intersection",
]


def eigenvalue_spectrum(K: np.ndarray) -> np.ndarray:
    """Eigenvalues of K, largest first, as fractions of tr K (negative rounding clipped to 0)."""
    K = symmetric_matrix(K, "K")
    w = np.maximum(np.linalg.eigvalsh(K)[::-1], 0.0)
    total = float(w.sum())
    if total <= 0.0:
        raise ValueError("K has zero trace: the spectrum is undefined")
    return w / total


def _pair_distances(X: np.ndarray, Y: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """‖x_i − x_j‖ and ‖y_i − y_j‖ for all j in index[i], flattened."""
    dx = np.linalg.norm(X[:, None, :] - X[index], axis=2).ravel()
    dy = np.linalg.norm(Y[:, None, :] - Y[index], axis=2).ravel()
    return dx, dy


def _check_pair(X: object, Y: object, n_neighbors: int) -> tuple[np.ndarray, np.ndarray, int]:
    X = as_matrix(X, "X", min_rows=2)
    Y = as_matrix(Y, "Y", min_rows=2)
    if Y.shape[0] != X.shape[0]:
        raise ValueError(f"Y must have one row per row of X ({X.shape[0]}), got {Y.shape[0]}")
    l = check_positive_int(n_neighbors, "n_neighbors")
    if l >= X.shape[0]:
        raise ValueError(f"n_neighbors must be smaller than the number of points {X.shape[0]}, got {l}")
    return X, Y, l


def _squared_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """1 − min_s ‖s a − b‖²/‖b‖² = (aᵀb)²/(‖a‖²‖b‖²) (0 when a = 0)."""
    aa, bb = float(a @ a), float(b @ b)
    if bb == 0.0:
        raise ValueError("all neighbour distances are zero: the measure is undefined")
    return 0.0 if aa == 0.0 else float((a @ b) ** 2 / (aa * bb))


def local_continuity(X: np.ndarray, Y: np.ndarray, n_neighbors: int = 5) -> float:
    """Local continuity C(Y) (3.27): how well the distances to the l nearest *input* neighbours
    are preserved in the outputs, up to one global scale s.

    Parameters
    ----------
    X : ndarray of shape (n, D)
        Inputs.
    Y : ndarray of shape (n, d)
        Outputs.
    n_neighbors : int
        l (thesis: 5 or 10).
    """
    X, Y, l = _check_pair(X, Y, n_neighbors)
    index, _ = knn_indices(X, l)
    dx, dy = _pair_distances(X, Y, index)
    return _squared_cosine(dy, dx)                  # s scales the outputs' distances


def local_trust(X: np.ndarray, Y: np.ndarray, n_neighbors: int = 5) -> float:
    """Local trust T(Y) (3.28): how well the distances to the l nearest *output* neighbours
    reflect input distances, up to one global scale s."""
    X, Y, l = _check_pair(X, Y, n_neighbors)
    index, _ = knn_indices(Y, l)
    dx, dy = _pair_distances(X, Y, index)
    return _squared_cosine(dx, dy)                  # s scales the inputs' distances


def neighborhood_intersection(X: np.ndarray, Y: np.ndarray, n_neighbors: int = 5) -> float:
    """Neighbourhood intersection N(Y) = (1/(nl)) Σ_i |𝒩(x_i) ∩ 𝒩(y_i)| (3.29)."""
    X, Y, l = _check_pair(X, Y, n_neighbors)
    nx, _ = knn_indices(X, l)
    ny, _ = knn_indices(Y, l)
    common = (nx[:, :, None] == ny[:, None, :]).any(axis=2).sum()
    return float(common) / (X.shape[0] * l)
