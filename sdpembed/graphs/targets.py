"""Graphs over labelled points for LMNN (thesis ch. 2): target neighbours, triplets, impostors.

Notation of Sec. 2.1.2. Points are the *rows* of ``X``; ``targets[i]`` lists the k target
neighbours j ⇝ i of point i (the k nearest points of its own class, fixed before learning);
a *triplet* (i, j, l) pairs a target j ⇝ i with a differently labelled point l, and its
*hinge* is

    h_ijl(M) = 1 + D_M(x_i, x_j) − D_M(x_i, x_l),    D_M(a, b) = (a − b)ᵀ M (a − b)   (2.10)

(the term of the push loss (2.7)/(2.11)); l is an *impostor* of (i, j) when h_ijl > 0 (2.4).
There are k Σ_i (n − n_{y_i}) triplets, which grows as n²k: every function here that looks
at all of them streams blocks of rows i and never materialises the n × n × k array.

Distances to all points are formed through Gram matrices (fast, BLAS) on centred data;
entries whose rounding error could flip a decision (a tie at the k-th target neighbour, a
hinge within the rounding bound of the threshold) are recomputed from explicit differences,
so decisions are those of the direct formula ((x_i − x_j) computed first).

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the notation of Sec. 2.1.2 and (2.4)–(2.11).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .._validate import as_matrix, check_positive_int
from .common import (
    check_labels,
    check_metric,
    class_members,
    hinge_inputs,
    target_distances,
    target_inputs,
)

__all__ = [
    "target_neighbors",
    "pull_matrix",
    "triplet_count",
    "all_triplets",
    "iter_hinges",
    "float32_test_unit",
    "radius_hinges",
    "impostor_triplets",
    "nearest_impostors",
]

#: Candidate pairs, as a fraction of n², beyond which :func:`radius_hinges` streams every hinge instead.
_RADIUS_PAIRS = 0.02

#: Default number of float64 entries of one block of a distance or hinge array (16 MiB).
BLOCK_ELEMENTS = 1 << 21

#: Largest number of outer products summed by one matrix product (see :func:`pull_matrix`).
ACCUMULATION_BLOCK = 4096

_EPS = np.finfo(np.float64).eps


def target_neighbors(X: np.ndarray, y: np.ndarray, k: int, *, block_size: int = BLOCK_ELEMENTS) -> np.ndarray:
    """The k nearest same-class points of every point by Euclidean distance (Sec. 2.1.2).

    Ties are broken deterministically: points are ordered by (distance, index), so of two
    equally distant candidates the one with the smaller index comes first. Distances are
    computed per class in blocks of rows through Gram matrices; candidates within the
    Gram rounding bound of the k-th distance are re-ranked by their direct distance
    ‖x_i − x_j‖² (so exact ties are honoured, and decisions do not depend on rounding).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Points as rows (finite).
    y : ndarray of shape (n,)
        Class labels, at least two classes, each with at least k + 1 members.
    k : int
        Number of target neighbours, k ≥ 1.
    block_size : int
        Largest number of distance entries held at once.

    Returns
    -------
    ndarray of int64, shape (n, k)
        Row i lists the target neighbours j ⇝ i, nearest first.
    """
    X, k, _, inverse = target_inputs(X, y, k)
    n, d = X.shape
    block_size = check_positive_int(block_size, "block_size")
    out = np.empty((n, k), dtype=np.int64)
    for members in class_members(inverse):  # a loop over classes; every point of a class is vectorised
        Z = X[members] - X[members].mean(axis=0)
        sq = np.einsum("ij,ij->i", Z, Z)
        size = members.size
        rows_per_block = max(1, block_size // size)
        for start in range(0, size, rows_per_block):
            rows = np.arange(start, min(start + rows_per_block, size))
            D = sq[rows, None] + sq[None, :] - 2.0 * (Z[rows] @ Z.T)
            D[np.arange(rows.size), rows] = np.inf
            kth = np.partition(D, k - 1, axis=1)[:, k - 1]
            # Gram rounding bound: |fl(D) − D| ≤ slack, so every point whose direct distance
            # is among the k smallest has fl(D) ≤ kth + 2·slack.
            slack = 8.0 * (d + 2) * _EPS * (sq[rows] + sq.max())
            r, col = np.nonzero(D <= (kth + 2.0 * slack)[:, None])
            out[members[rows]] = members[nearest_candidates(X[members[rows]], X[members], r, col, k)]
    return out


def nearest_candidates(A: np.ndarray, B: np.ndarray, r: np.ndarray, col: np.ndarray, k: int) -> np.ndarray:
    """The k nearest of each query's candidates, ranked by (direct ‖a − b‖², index), shape (len(A), k).

    Row r[t] of ``A`` has candidate col[t] (a row of ``B``); every query must have at least k
    candidates, and they must include its k nearest rows of ``B``.
    """
    diff = A[r] - B[col]
    exact = np.einsum("ij,ij->i", diff, diff)
    order = np.lexsort((col, exact, r))  # by row, then distance, then index
    r, col = r[order], col[order]
    first = np.searchsorted(r, np.arange(A.shape[0]))
    rank = np.arange(r.size) - first[r]
    return col[rank < k].reshape(A.shape[0], k)


def pull_matrix(X: np.ndarray, targets: np.ndarray, *, block_size: int = BLOCK_ELEMENTS) -> np.ndarray:
    """P = Σ_{j⇝i} C_ij with C_ij = (x_i − x_j)(x_i − x_j)ᵀ: the pull term (2.5) is tr(MP).

    It is the gradient of the pull term in (2.14) (line 4 of Algorithm 3, without 1 − μ).
    Formed from explicit differences, at most :data:`ACCUMULATION_BLOCK` of them per matrix
    product, so every entry carries a rounding error below
    (ACCUMULATION_BLOCK + number of blocks)·ε·Σ‖x_i − x_j‖².
    """
    X = as_matrix(X, "X")
    targets = np.asarray(targets, dtype=np.int64)
    n, d = X.shape
    k = targets.shape[1]
    rows_per_block = max(1, min(block_size // (k * d), ACCUMULATION_BLOCK // k))
    P = np.zeros((d, d))
    for start in range(0, n, rows_per_block):
        stop = min(start + rows_per_block, n)
        U = (X[start:stop, None, :] - X[targets[start:stop]]).reshape(-1, d)
        P += U.T @ U
    return 0.5 * (P + P.T)


def triplet_count(y: np.ndarray, targets: np.ndarray) -> int:
    """Number of triplets (i, j, l), j ⇝ i, y_l ≠ y_i: k Σ_i (n − n_{y_i})."""
    y = np.asarray(y)
    _, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    return int(np.asarray(targets).shape[1] * np.sum(y.shape[0] - counts[inverse]))


def all_triplets(y: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Every triplet (i, j, l) of (2.11): j ⇝ i and y_l ≠ y_i, ordered by (i, rank of j, l).

    Returns an int64 array of shape (T, 3), T = :func:`triplet_count`. Its memory grows as
    n²k: use :func:`iter_hinges` to look at all triplets of a large problem.
    """
    y = np.asarray(y)
    targets = np.asarray(targets, dtype=np.int64)
    n, k = targets.shape
    parts = []
    for members in class_members(y):  # a loop over classes; the triplets of a class are one product
        others = np.setdiff1d(np.arange(n), members, assume_unique=True)
        i = np.repeat(members, k * others.size)
        m = np.tile(np.repeat(np.arange(k), others.size), members.size)
        l = np.tile(others, members.size * k)
        parts.append(np.column_stack([i, targets[i, m], l, m]))
    stacked = np.concatenate(parts) if parts else np.empty((0, 4), dtype=np.int64)
    order = np.lexsort((stacked[:, 2], stacked[:, 3], stacked[:, 0]))
    return np.ascontiguousarray(stacked[order, :3])


def iter_hinges(
    X: np.ndarray,
    y: np.ndarray,
    targets: np.ndarray,
    M: np.ndarray | None = None,
    *,
    margin: float = 1.0,
    threshold: float = 0.0,
    block_size: int = BLOCK_ELEMENTS,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream every triplet whose hinge exceeds ``threshold``, in blocks of rows i.

    For each block of points i the (b, k, n) array of margin + D_M(x_i, x_j) − D_M(x_i, x_l)
    is formed at once (j ⇝ i, l over all points, masked to y_l ≠ y_i): D_M(x_i, x_j) from
    explicit differences, D_M(x_i, x_l) through the Gram matrix of the centred data, and the
    entries within the Gram rounding bound of ``threshold`` recomputed from explicit
    differences, so the test ``hinge > threshold`` is decided by the direct formula (2.10).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    targets : ndarray of int, shape (n, k)
    M : ndarray of shape (d, d), optional
        The metric (its symmetric part is used); the identity by default.
    margin : float
        The margin of (2.6), 1 in the thesis.
    threshold : float
        Triplets with hinge ≤ threshold are skipped; ``-np.inf`` streams them all.
    block_size : int
        Largest number of hinge entries formed at once.

    Yields
    ------
    triplets : ndarray of int64, shape (B, 3)
        Rows (i, j, l), ordered by (i, rank of j in targets[i], l).
    hinges : ndarray of shape (B,)
        margin + D_M(x_i, x_j) − D_M(x_i, x_l), all > threshold.
    """
    X, labels, targets, M, margin, threshold, block_size = hinge_inputs(X, y, targets, M, margin, threshold,
                                                                         block_size)
    n, d = X.shape
    k = targets.shape[1]
    Z = X - X.mean(axis=0)                     # distances are translation invariant
    ZM = Z @ M
    q = np.einsum("ij,ij->i", ZM, Z)           # z_aᵀ M z_a
    sq = np.einsum("ij,ij->i", Z, Z)
    norm_M = float(np.linalg.norm(M))
    rows_per_block = max(1, block_size // (k * n))
    for start in range(0, n, rows_per_block):
        I = np.arange(start, min(start + rows_per_block, n))
        J = targets[I]                                                        # (b, k)
        d_ij = target_distances(X, I, J, M)                                  # D_M(x_i, x_j), direct
        D_il = q[I, None] + q[None, :] - 2.0 * (ZM[I] @ Z.T)                  # D_M(x_i, x_l), Gram
        H = margin + d_ij[:, :, None] - D_il[:, None, :]                      # (b, k, n) hinges
        slack = (8.0 * (d + 2) * _EPS * norm_M * (sq[I] + sq.max())
                 + 4.0 * _EPS * (abs(margin) + np.abs(d_ij).max(axis=1)))    # bound on |fl(H) − H|
        candidate = H > (threshold - slack)[:, None, None]
        candidate &= (labels[I, None] != labels[None, :])[:, None, :]
        r, m, l = np.nonzero(candidate)
        h = H[r, m, l]
        doubtful = np.abs(h - threshold) <= slack[r]
        if np.any(doubtful):
            W = X[I[r[doubtful]]] - X[l[doubtful]]                            # x_i − x_l, direct
            h[doubtful] = margin + d_ij[r[doubtful], m[doubtful]] - np.einsum("ij,ij->i", W @ M, W)
        keep = h > threshold
        i = I[r[keep]]
        yield np.column_stack([i, J[r[keep], m[keep]], l[keep]]), h[keep]


def float32_test_unit(top: float) -> float:
    """The power of two u for which a homogeneous float32 test of degree 2 — entries of degree 1 times u, of
    degree 2 times u² — has its largest entry near 2⁶⁴ when ``top`` is its largest in float64: no float32 entry
    or product overflows (‖Lz‖² of points at 1e20 would) and none is lost to underflow; 1 for ``top`` ≤ 0 or not
    finite. Exact: scaling by u changes no digit.

    References
    ----------
    .. [1] N. J. Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM, 2002: floating-point
       range and scaling by powers of the base (ch. 2).
    """
    return 2.0 ** -((int(np.frexp(top)[1]) - 64) // 2) if 0.0 < top < np.inf else 1.0


def radius_hinges(
    X: np.ndarray,
    y: np.ndarray,
    targets: np.ndarray,
    M: np.ndarray | None = None,
    *,
    margin: float = 1.0,
    threshold: float = 0.0,
    block_size: int = BLOCK_ELEMENTS,
) -> tuple[np.ndarray, np.ndarray]:
    """The triplets and hinges of :func:`radius_hinge_scan` (without its ``direct`` flag).

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007: the hinges of the loss (2.11), the distances (2.10).
    """
    triplets, hinges, _ = radius_hinge_scan(X, y, targets, M, margin=margin, threshold=threshold,
                                            block_size=block_size)
    return triplets, hinges


def radius_hinge_scan(
    X: np.ndarray,
    y: np.ndarray,
    targets: np.ndarray,
    M: np.ndarray | None = None,
    *,
    margin: float = 1.0,
    threshold: float = 0.0,
    block_size: int = BLOCK_ELEMENTS,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Every triplet whose hinge exceeds ``threshold`` — what :func:`iter_hinges` streams, in one array —
    found through a radius filter on the pairs, for a PSD metric M and a finite threshold.

    h_ijl > threshold needs D_M(x_i, x_l) < R_i = margin − threshold + max_j D_M(x_i, x_j), so
    only the pairs (i, l) inside that radius of i (or, for the unordered pair, of l) can
    contribute. With M = LᵀL (eigen-decomposition, eigenvalues clipped at 0) the pair distances
    are ‖L(z_i − z_l)‖², taken from a float32 Gram matrix of the mapped, centred points, over the
    upper triangle only (points in order of decreasing R) — the pylmnn impostor test of
    :class:`sdpembed.solvers.lmnn.warm._FullLoss` — with a margin above the rounding errors of the
    float32 products and of the factorisation, ‖LᵀL − M‖·‖z_i − z_l‖²: a pair left out is
    outside both radii. Every candidate pair's distance is then formed by the direct formula
    (2.10), (x_i − x_l)ᵀM(x_i − x_l), and so is every decision h > threshold (D_M(x_i, x_j) as in
    :func:`iter_hinges`): the triplets returned are exactly those of :func:`iter_hinges`, in its
    order (i, rank of j, l), and the hinges agree with its values to rounding.

    Work: O(n²d/2) float32 flops for the filter plus O(n_pairs·d²) for the candidates, against
    O(n²k·d) float64 flops and n²k-element hinge arrays for :func:`iter_hinges`: far cheaper when
    few pairs fall inside the radii, the usual case near an LMNN optimum.

    A metric that is not PSD (up to rounding), a threshold that is not finite, a margin below
    the threshold (every pair a candidate), or more than :data:`_RADIUS_PAIRS`·n² candidate pairs
    (a metric so small that most pairs are inside the radii: there the d² flops per pair cost more
    than the streamed hinge arrays) falls back to :func:`iter_hinges`, and so do distances or norms
    beyond float64's range (no filter to trust).

    Returns
    -------
    triplets : ndarray of int64, shape (B, 3)
    hinges : ndarray of shape (B,)
    direct : bool
        True when every hinge is by the direct formula (the radius filter ran); False when the scan
        fell back to :func:`iter_hinges`, whose hinges come from the Gram form (a larger rounding error
        where the points are far from their centre).

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007: the hinges of the loss (2.11), the distances (2.10), the active set of
       Sec. 2.1.3.
    .. [2] N. J. Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM, 2002: the
       rounding bounds of inner products (ch. 3).
    """
    X, labels, targets, M, margin, threshold, block_size = hinge_inputs(X, y, targets, M, margin, threshold,
                                                                         block_size)
    n, d = X.shape
    lam, V = np.linalg.eigh(M)
    norm_M = float(np.abs(lam).max()) if lam.size else 0.0

    def streamed() -> tuple[np.ndarray, np.ndarray, bool]:
        parts = list(iter_hinges(X, y, targets, M, margin=margin, threshold=threshold, block_size=block_size))
        if not parts:
            return np.empty((0, 3), dtype=np.int64), np.empty(0), False
        return np.concatenate([t for t, _ in parts]), np.concatenate([h for _, h in parts]), False

    if (not np.isfinite(threshold) or margin - threshold <= 0.0
            or (lam.size and lam[0] < -16.0 * d * _EPS * norm_M)):
        return streamed()
    L = np.sqrt(np.clip(lam, 0.0, None))[:, None] * V.T                      # M ≈ LᵀL
    factor_error = float(np.linalg.norm(L.T @ L - M, 2)) + 4.0 * d * _EPS * norm_M
    Z = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", Z, Z)
    ZL = Z @ L.T
    q = np.einsum("ij,ij->i", ZL, ZL)
    d_ij = target_distances(X, np.arange(n), targets, M)                      # D_M(x_i, x_j), direct
    R = margin - threshold + d_ij.max(axis=1)
    # |fl32 Gram test − ‖L w‖²| ≤ 2(d + 4)ε₃₂·(max q + max |R|) (products of length d + 2 with the augmented
    # entries q/2 and (R − q)/2, the rounding to float32)
    # and |‖L w‖² − wᵀMw| ≤ ‖LᵀL − M‖·‖w‖² ≤ 2‖LᵀL − M‖(sq_i + max sq), plus the float64 rounding of ZL, q
    eps32 = float(np.finfo(np.float32).eps)
    slack = (4.0 * (d + 4) * eps32 * float((q.max() + np.abs(R).max()) if n else 0.0)
             + 4.0 * factor_error * (sq + (sq.max() if n else 0.0))
             + 8.0 * (d + 2) * _EPS * norm_M * (sq + (sq.max() if n else 0.0)) + 1e-300)
    top = float(max(q.max(), np.abs(R + slack).max())) if n else 0.0
    if not np.isfinite(top):
        return streamed()       # distances or norms beyond float64: no filter to trust
    # the test is homogeneous (ZL of degree 1, q and R of degree 2): in units where its largest entry is ~2⁶⁴,
    # so that no float32 entry or product overflows (‖Lz‖² of points at 1e20 would) and none is lost to underflow
    shift = float32_test_unit(top)
    order = np.argsort(-(R + slack), kind="stable")                             # by decreasing R + slack
    ZLs, labels_s = ZL[order] * shift, labels[order]
    qs, Rs = q[order] * shift * shift, (R + slack)[order] * shift * shift
    left = np.empty((n, d + 2), dtype=np.float32)
    right = np.empty((n, d + 2), dtype=np.float32)
    left[:, :d] = ZLs
    right[:, :d] = ZLs
    left[:, d] = 1.0
    left[:, d + 1] = 0.5 * (Rs - qs)
    right[:, d] = -0.5 * qs
    right[:, d + 1] = 1.0
    rows_per_block = max(1, block_size // max(n, 1))
    first, second = [], []
    for start in range(0, n, rows_per_block):
        stop = min(start + rows_per_block, n)
        # ‖L(z_a − z_b)‖² < R_a + slack_a  ⇔  ⟨Lz_a, Lz_b⟩ − q_b/2 + (R_a + slack_a − q_a)/2 > 0, b ≥ a
        G = left[start:stop] @ right[start:].T
        r, c = np.divmod(np.flatnonzero(G > 0.0), n - start)
        r += start
        c += start
        keep = (c > r) & (labels_s[r] != labels_s[c])
        first.append(order[r[keep]])
        second.append(order[c[keep]])
    a = np.concatenate(first) if first else np.empty(0, dtype=np.int64)
    b = np.concatenate(second) if second else np.empty(0, dtype=np.int64)
    if a.size > _RADIUS_PAIRS * n * n:
        return streamed()        # most pairs inside the radii (a small metric): d² flops per pair cost more
    D = pair_distances(X, M, a, b)
    # each candidate pair for both of its points as anchor
    triplets, hinges = pair_triplets(targets, d_ij, np.concatenate([a, b]), np.concatenate([b, a]),
                                     np.concatenate([D, D]), margin, threshold)
    return triplets, hinges, True


def pair_distances(X: np.ndarray, M: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """D_M(x_a, x_b) (2.10) of the pairs (a, b) by the direct formula on explicit differences."""
    D = np.empty(a.size)
    for start in range(0, a.size, 4096):
        t = slice(start, start + 4096)
        W = X[a[t]] - X[b[t]]
        D[t] = np.einsum("ij,ij->i", W @ M, W)
    return D


def pair_triplets(
    targets: np.ndarray, d_ij: np.ndarray, anchor: np.ndarray, other: np.ndarray, D: np.ndarray,
    margin: float, threshold: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The triplets (i, j, l) with hinge > ``threshold`` among candidate pairs (i, l) = (anchor, other).

    ``D`` holds D_M(x_i, x_l) of the pairs and ``d_ij`` (n, k) D_M(x_i, x_j), j ⇝ i, both by the
    direct formula (2.10) (``pair_distances``, ``target_distances``), so a radius filter
    that keeps every pair with a hinge above ``threshold`` gives exactly the triplets of
    :func:`iter_hinges`, in its order (i, rank of j, l).
    """
    H = margin + d_ij[anchor] - D[:, None]                                    # (pairs, k)
    p, m = np.nonzero(H > threshold)
    i, l = anchor[p], other[p]
    order_out = np.lexsort((l, m, i))
    i, m, l, p = i[order_out], m[order_out], l[order_out], p[order_out]
    return np.column_stack([i, targets[i, m], l]), H[p, m]


def impostor_triplets(
    X: np.ndarray,
    y: np.ndarray,
    targets: np.ndarray,
    M: np.ndarray | None = None,
    margin: float = 1.0,
    *,
    tol: float = 0.0,
    return_hinges: bool = False,
    block_size: int = BLOCK_ELEMENTS,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """The active triplets: (i, j, l) with j ⇝ i, y_l ≠ y_i and margin + D_M(i, j) − D_M(i, l) > tol.

    With ``tol = 0`` these are the triplets that trigger the hinge loss of (2.11) — the set
    𝒩_t of (2.14) — i.e. x_l is an impostor (2.4) inside the neighbourhood of (x_i, x_j).
    Computed in blocks by :func:`iter_hinges`.

    Parameters
    ----------
    X, y, targets
        Points, labels and target neighbours (see :func:`target_neighbors`).
    M : ndarray of shape (d, d), optional
        The metric; the identity (Euclidean distance) by default.
    margin : float
        The margin of (2.6).
    tol : float
        Keep hinges strictly above ``tol``.
    return_hinges : bool
        Also return the hinge values.
    block_size : int
        Largest number of hinge entries formed at once.

    Returns
    -------
    triplets : ndarray of int64, shape (T, 3)
        Rows (i, j, l) ordered by (i, rank of j, l).
    hinges : ndarray of shape (T,), if ``return_hinges``
    """
    parts = list(iter_hinges(X, y, targets, M, margin=margin, threshold=tol, block_size=block_size))
    triplets = np.concatenate([p[0] for p in parts]) if parts else np.empty((0, 3), dtype=np.int64)
    if not return_hinges:
        return triplets
    hinges = np.concatenate([p[1] for p in parts]) if parts else np.empty(0)
    return triplets, hinges


def nearest_impostors(
    X: np.ndarray, y: np.ndarray, M: np.ndarray | None = None, *, block_size: int = BLOCK_ELEMENTS
) -> np.ndarray:
    """For every point i, the differently labelled point l nearest to it under D_M (2.10).

    (i, j, l) with this l has the largest hinge of all triplets of the target pair (i, j):
    the most dangerous impostor. Distances come from Gram matrices in blocks of rows (no
    exact re-ranking: the result seeds working sets, where near-ties do not matter).

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    X = as_matrix(X, "X")
    n, d = X.shape
    labels = check_labels(y, n)
    M = check_metric(M, d)
    block_size = check_positive_int(block_size, "block_size")
    Z = X - X.mean(axis=0)
    ZM = Z @ M
    q = np.einsum("ij,ij->i", ZM, Z)
    out = np.empty(n, dtype=np.int64)
    rows_per_block = max(1, block_size // n)
    for start in range(0, n, rows_per_block):
        I = np.arange(start, min(start + rows_per_block, n))
        D = q[I, None] + q[None, :] - 2.0 * (ZM[I] @ Z.T)
        D[labels[I, None] == labels[None, :]] = np.inf
        out[I] = np.argmin(D, axis=1)
    return out
