"""Ball-tree search for LMNN's target neighbours and active hinges (thesis Sec. 2.1.8, (2.19)–(2.20)).

A ball of centre c and radius r bounds the distance from a query x_t to every point inside it
from below, ‖x_t − x_i‖ ≥ max(‖x_t − c‖ − r, 0) (2.19), so a whole ball is skipped once it is
farther than the current k-th neighbour (a kNN search) or than the radius of a range query.
The active hinges are such a range query (2.20): with M = LᵀL, triplet (i, j, l) is active,
1 + D_M(x_i, x_j) − D_M(x_i, x_l) > 0, exactly when ‖L(x_l − x_i)‖² < 1 + ‖L(x_i − x_j)‖², so
the impostors of point i are the differently labelled points within the radius
h_i = (1 + max_j D_M(x_i, x_j))^½ of Lx_i, searched in one tree per class as the thesis does.

scikit-learn's :class:`~sklearn.neighbors.BallTree` answers both queries — ``query`` (k nearest)
and ``query_radius`` with one radius per query point — in the L-transformed space, so it is
used rather than a tree of our own. (Its splits differ from the thesis' mean split along the
direction of two far points; the answers, exact neighbours and exact range sets, do not.)

The tree only *filters*: its distances carry rounding errors and, for a metric M given as a
matrix, the error of the factor L, so the radii are widened by a bound on both, and every
decision is then taken by the direct formula (2.10) on explicit differences, as the brute-force
scans of :mod:`sdpembed.graphs.targets` take it. :func:`balltree_target_neighbors` therefore
returns exactly :func:`~sdpembed.graphs.targets.target_neighbors` (ties broken by index) and
:func:`balltree_hinges` exactly the triplets of :func:`~sdpembed.graphs.targets.iter_hinges`, in the
same order, with hinges equal to rounding.

Speed: the trees pay off in few dimensions and lose in many (the balls overlap, the
"curse of dimensionality" of Sec. 2.1.8); ``benchmarks/balltree.py`` measures the ratio
against the brute-force scans and the crossover dimension (BENCHMARKS.md, "Ball trees").

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the ball-tree kNN search and the active-hinge search
   (2.19)–(2.20) of Sec. 2.1.8, "LMNN Training with Ball Trees".
.. [2] S. M. Omohundro, "Five balltree construction algorithms", ICSI technical report
   TR-89-063, 1989 (the data structure, as implemented by scikit-learn).
"""

from __future__ import annotations

import numpy as np

from .._validate import as_matrix, check_positive_int
from .common import class_members, hinge_inputs, target_distances, target_inputs
from .targets import (
    nearest_candidates,
    pair_distances,
    pair_triplets,
)

__all__ = ["balltree_target_neighbors", "balltree_hinges"]

_EPS = np.finfo(np.float64).eps

#: Points per leaf of the trees (scikit-learn's default).
LEAF_SIZE = 40


def _concat_ragged(parts: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flatten ``query_radius``'s object array of index arrays: (query of each hit, hit)."""
    counts = np.fromiter((p.size for p in parts), dtype=np.int64, count=len(parts))
    hits = np.concatenate(list(parts)).astype(np.int64) if counts.sum() else np.empty(0, dtype=np.int64)
    return np.repeat(queries, counts), hits


def balltree_target_neighbors(X: np.ndarray, y: np.ndarray, k: int, *, leaf_size: int = LEAF_SIZE) -> np.ndarray:
    """The k nearest same-class points of every point (Sec. 2.1.2), found with one ball tree per class.

    The same answer as :func:`sdpembed.graphs.targets.target_neighbors`, ties included: the tree's
    (k + 1)-th nearest distance (the point itself among them) bounds the k-th target distance,
    every point within that radius (widened by the rounding bound of the tree's distances) is a
    candidate, and the candidates are ranked by (direct ‖x_i − x_j‖², index).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels, every class with at least k + 1 members.
    k : int
    leaf_size : int
        Points per leaf of the trees.

    Returns
    -------
    ndarray of int64, shape (n, k)
        Row i lists the target neighbours j ⇝ i, nearest first.
    """
    from sklearn.neighbors import BallTree  # at first use (DESIGN.md, "Start-up")

    X, k, _, inverse = target_inputs(X, y, k)
    n, d = X.shape
    leaf_size = check_positive_int(leaf_size, "leaf_size")
    out = np.empty((n, k), dtype=np.int64)
    for members in class_members(inverse):   # a loop over classes; the queries of a class are one call
        P = X[members]
        tree = BallTree(P, leaf_size=leaf_size)
        dist, _ = tree.query(P, k=k + 1)
        # tree and direct squared distances differ by at most (d + 2)ε of the larger: widen the radius
        radius = dist[:, k] * (1.0 + 4.0 * (d + 4) * _EPS) + 1e-300
        rows, cols = _concat_ragged(tree.query_radius(P, radius), np.arange(members.size))
        keep = rows != cols
        out[members] = members[nearest_candidates(P, P, rows[keep], cols[keep], k)]
    return out


def balltree_hinges(
    X: np.ndarray,
    y: np.ndarray,
    targets: np.ndarray,
    M: np.ndarray | None = None,
    *,
    L: np.ndarray | None = None,
    margin: float = 1.0,
    threshold: float = 0.0,
    leaf_size: int = LEAF_SIZE,
) -> tuple[np.ndarray, np.ndarray]:
    """Every triplet whose hinge exceeds ``threshold``, found by range queries in ball trees (2.20).

    For each point i, the differently labelled points l with
    ‖L(x_l − x_i)‖² < R_i = margin − threshold + max_j D_M(x_i, x_j) are found in the ball tree
    of their class built on the mapped points Lx (one tree per class, (2.20)); only these pairs
    (i, l) can carry a hinge above ``threshold``. The radii are widened by a bound on the
    rounding of the mapped points and the tree's distances and on the factor error ‖LᵀL − M‖,
    and the hinges of the candidate pairs are decided by the direct formula (2.10): the result
    is the triplet set of :func:`sdpembed.graphs.targets.iter_hinges`, in its order (i, rank of j, l).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    targets : ndarray of int, shape (n, k)
    M : ndarray of shape (d, d), optional
        The PSD metric (its symmetric part); LᵀL when ``L`` is given, the identity by default.
    L : ndarray of shape (r, d), optional
        A factor of the metric (a rectangular L of LMNN for dimensionality reduction): the trees
        are built on the r-dimensional points Lx and M = LᵀL. Give ``M`` or ``L``, not both.
    margin : float
        The margin of (2.6), 1 in the thesis.
    threshold : float
        Triplets with hinge ≤ threshold are skipped; finite, below ``margin``.
    leaf_size : int
        Points per leaf of the trees.

    Returns
    -------
    triplets : ndarray of int64, shape (B, 3)
        Rows (i, j, l), ordered by (i, rank of j in targets[i], l).
    hinges : ndarray of shape (B,)
        margin + D_M(x_i, x_j) − D_M(x_i, x_l), all > threshold.
    """
    from sklearn.neighbors import BallTree  # at first use (DESIGN.md, "Start-up")

    if L is not None:
        if M is not None:
            raise ValueError("give the metric as M or as its factor L, not both")
        L = as_matrix(L, "L")
        if L.shape[1] != np.shape(X)[1]:
            raise ValueError(f"L must have {np.shape(X)[1]} columns (one per feature of X), got shape {L.shape}")
        M = L.T @ L
    X, labels, targets, M, margin, threshold, _ = hinge_inputs(X, y, targets, M, margin, threshold, 1)
    leaf_size = check_positive_int(leaf_size, "leaf_size")
    if not np.isfinite(threshold) or margin - threshold <= 0.0:
        raise ValueError(f"threshold must be finite and below the margin {margin}, got {threshold}")
    n, d = X.shape
    lam, V = np.linalg.eigh(M)
    norm_M = float(np.abs(lam).max()) if lam.size else 0.0
    if L is None:
        if lam.size and lam[0] < -16.0 * d * _EPS * max(norm_M, 1e-300):
            raise ValueError(f"M must be positive semidefinite (least eigenvalue {lam[0]:.3e})")
        L = np.sqrt(np.clip(lam, 0.0, None))[:, None] * V.T
    r = L.shape[0]
    factor_error = float(np.linalg.norm(L.T @ L - M, 2)) + 4.0 * (d + r) * _EPS * norm_M
    Z = X - X.mean(axis=0)                                                   # distances are translation invariant
    sq = np.einsum("ij,ij->i", Z, Z)
    ZL = Z @ L.T
    q = np.einsum("ij,ij->i", ZL, ZL)
    d_ij = target_distances(X, np.arange(n), targets, M)                     # D_M(x_i, x_j), direct
    R = margin - threshold + d_ij.max(axis=1)
    # |tree distance² − (x_i − x_l)ᵀM(x_i − x_l)| ≤ ‖LᵀL − M‖·‖w‖² + rounding of Lz and of the tree's sums,
    # with ‖w‖² ≤ 2(sq_i + max sq) and ‖Lw‖² ≤ 2(q_i + max q)
    slack = (4.0 * factor_error * (sq + sq.max()) + 8.0 * (d + r + 4) * _EPS * norm_M * (sq + sq.max())
             + 8.0 * (r + 4) * _EPS * (q + q.max()) + 1e-300)
    radius = np.sqrt(np.maximum(R + slack, 0.0))
    anchors, others = [], []
    for members in class_members(labels):    # one tree per class (Sec. 2.1.8); a class's queries are one call
        outside = np.setdiff1d(np.arange(n), members, assume_unique=True)
        tree = BallTree(ZL[members], leaf_size=leaf_size)
        i, hit = _concat_ragged(tree.query_radius(ZL[outside], radius[outside]), outside)
        anchors.append(i)
        others.append(members[hit])
    anchor = np.concatenate(anchors)
    other = np.concatenate(others)
    return pair_triplets(targets, d_ij, anchor, other, pair_distances(X, M, anchor, other), margin, threshold)
