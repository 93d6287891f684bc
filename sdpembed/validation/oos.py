"""Out-of-sample extension of an embedding: the baselines and the consistency measure of
Weinberger's thesis, Sec. 3.1.10.

* :func:`out_of_sample` places new inputs into an existing embedding by the SDP of Sec. 3.1.10
  ("sdp"), the SDP followed by the local gradient refinement of the patch energy (3.26)
  ("sdp_cg"), or the LLE-style reconstruction of Saul and Roweis [69] ("lle").
* :func:`lle_weights` / :func:`lle_place`: the reconstruction baseline — weights w that best
  reconstruct x_t from its k neighbours in input space, min ‖x_t − Σ_j w_j x_j‖² s.t.
  Σ_j w_j = 1 (Saul & Roweis, *Think globally, fit locally*, 2003, eq. (2)–(3), solved through
  the local Gram matrix C_jl = (x_t − x_j)ᵀ(x_t − x_l) regularised as C + reg·tr(C)·I, as in
  scikit-learn's LLE), applied to the neighbours' outputs: y_t = Σ_j w_j y_j.
* :func:`linear_fit_error` is err(X, Y) = min_Q ‖X − QY‖_F of (3.34) and
  :func:`consistency_ratio` the relative consistency (3.34) itself; :func:`split_abc` draws
  the split X = A ∪ B ∪ C, |A| = |B|, of the evaluation (after Bengio et al. 2004 [8]).

Points are rows throughout (the thesis writes them as columns: X ≈ QY there is X ≈ Y Qᵀ here).

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: Sec. 3.1.10: the out-of-sample SDP, the patch energy
   (3.26) and the consistency (3.34).
.. [2] L. K. Saul and S. T. Roweis, "Think globally, fit locally: unsupervised learning of low
   dimensional manifolds", Journal of Machine Learning Research 4, 119–155, 2003. Implemented here:
   the reconstruction weights, eq. (2)–(3).
.. [3] Y. Bengio, J.-F. Paiement, P. Vincent, O. Delalleau, N. Le Roux and M. Ouimet,
   "Out-of-sample extensions for LLE, Isomap, MDS, Eigenmaps, and spectral clustering", Advances in
   Neural Information Processing Systems 16 (NIPS), 2004. Implemented here: the evaluation split.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_matrix, check_positive_int, check_random_state
from ..graphs import lle_weights, neighbour_arrays
from ..solvers.mvu.oos import place_points, refine_points

__all__ = [
    "consistency_ratio",
    "linear_fit_error",
    "lle_place",
    "lle_weights",
    "OOS_METHODS",
    "out_of_sample",
    "split_abc",
]

#: The out-of-sample methods compared in Fig. 3.23 of the thesis.
OOS_METHODS = ("sdp", "sdp_cg", "lle")


def lle_place(
    x_new: np.ndarray, X_neighbours: np.ndarray, Y_neighbours: np.ndarray, *, reg: float = 1e-3
) -> np.ndarray:
    """The LLE-style out-of-sample placement y_t = Σ_j w_j y_j ("lle" of Fig. 3.23).

    Parameters
    ----------
    x_new : ndarray of shape (m, d)
    X_neighbours : ndarray of shape (m, k, d)
    Y_neighbours : ndarray of shape (m, k, r)
        Embedding coordinates of the neighbours.
    reg : float
        See :func:`lle_weights`.

    Returns
    -------
    ndarray of shape (m, r)
    """
    w = lle_weights(x_new, X_neighbours, reg=reg)
    Yn = np.asarray(Y_neighbours, dtype=np.float64)
    if Yn.ndim != 3 or Yn.shape[:2] != w.shape:
        raise ValueError(f"Y_neighbours must have shape (m, k, r) with (m, k) = {w.shape}, got {Yn.shape}")
    return np.einsum("mk,mkr->mr", w, Yn)


def out_of_sample(
    X_train: np.ndarray,
    Y_train: np.ndarray,
    X_new: np.ndarray,
    n_neighbors: int,
    method: str = "sdp",
    *,
    reg: float = 1e-3,
) -> np.ndarray:
    """Place new inputs into an embedding ``Y_train`` of ``X_train`` (Sec. 3.1.10).

    Parameters
    ----------
    X_train : ndarray of shape (n, d)
    Y_train : ndarray of shape (n, r)
    X_new : ndarray of shape (m, d)
    n_neighbors : int
        k nearest training inputs used per new input (k ≥ r).
    method : {"sdp", "sdp_cg", "lle"}
        The SDP placement (:func:`~sdpembed.solvers.mvu.oos.place_points`), followed by the
        refinement of (3.26) (:func:`~sdpembed.solvers.mvu.oos.refine_points`) for "sdp_cg",
        or the LLE reconstruction (:func:`lle_place`).
    reg : float
        The LLE regulariser.

    Returns
    -------
    ndarray of shape (m, r)
    """
    if method not in OOS_METHODS:
        raise ValueError(f"method must be one of {OOS_METHODS}, got {method!r}")
    Yn, sqdist, index = neighbour_arrays(X_train, Y_train, X_new, n_neighbors)
    if method == "lle":
        X_train, X_new = np.asarray(X_train, dtype=np.float64), np.asarray(X_new, dtype=np.float64)
        out = np.empty((X_new.shape[0], Yn.shape[2]))
        for start in range(0, X_new.shape[0], 2048):                  # (block, k, d) neighbours at a time
            block = slice(start, start + 2048)
            out[block] = lle_place(X_new[block], X_train[index[block]], Yn[block], reg=reg)
        return out
    y = place_points(Yn, sqdist).y
    if method == "sdp_cg":
        y, _ = refine_points(y, Yn, sqdist)
    return y


def linear_fit_error(X: np.ndarray, Y: np.ndarray) -> float:
    """err(X, Y) = min_Q ‖X − QY‖_F of (3.34), for points as rows: min_B ‖X − Y B‖_F.

    The minimiser is the least-squares solution B = Y⁺X; the error is the Frobenius norm of
    the residual. It is 0 exactly when X is a linear image of Y (no translation: as in the
    thesis, Q is linear).

    Parameters
    ----------
    X : ndarray of shape (n, p)
    Y : ndarray of shape (n, q)
        The same n points, in the same order.
    """
    X = as_matrix(X, "X")
    Y = as_matrix(Y, "Y")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X and Y must hold the same points (rows): got {X.shape[0]} and {Y.shape[0]} rows")
    B, *_ = np.linalg.lstsq(Y, X, rcond=None)
    return float(np.linalg.norm(X - Y @ B))


def consistency_ratio(
    oos_A: np.ndarray, oos_B: np.ndarray, full_A: np.ndarray, full_B: np.ndarray
) -> float:
    """The relative consistency (3.34): err(Y_C'^A, Y_C'^B) / err(Y_C^{AC}, Y_C^{BC}).

    Parameters
    ----------
    oos_A, oos_B : ndarray of shape (|C|, r)
        The points of C placed out of sample into the embeddings of A and of B.
    full_A, full_B : ndarray of shape (|C|, r)
        The embedding of C computed with A ∪ C and with B ∪ C.

    Returns
    -------
    float
        How much the out-of-sample placement of C varies with the training set, relative to
        how much the embedding itself varies; inf when the denominator vanishes (below 1e-12
        relative to ‖full_A‖_F, i.e. the two embeddings of C agree up to Q to rounding).
    """
    numerator = linear_fit_error(oos_A, oos_B)
    denominator = linear_fit_error(full_A, full_B)
    if denominator <= 1e-12 * np.linalg.norm(np.asarray(full_A, dtype=np.float64)):
        return float("inf")
    return numerator / denominator


def split_abc(n: int, n_c: int, random_state=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The random split X = A ∪ B ∪ C of the evaluation of Sec. 3.1.10: disjoint index sets
    with |C| = ``n_c`` and |A| = |B| = ⌊(n − n_c)/2⌋ (one point is left out when n − n_c is odd).

    Returns
    -------
    A, B, C : ndarray of int
        Sorted indices.
    """
    n = check_positive_int(n, "n", minimum=3)
    n_c = check_positive_int(n_c, "n_c")
    if n - n_c < 2:
        raise ValueError(f"n_c must leave at least two points for A and B: n = {n}, n_c = {n_c}")
    rng = check_random_state(random_state)
    perm = rng.permutation(n)
    half = (n - n_c) // 2
    return np.sort(perm[:half]), np.sort(perm[half:2 * half]), np.sort(perm[2 * half:2 * half + n_c])
