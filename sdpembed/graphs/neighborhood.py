"""Neighbourhood graphs for maximum variance unfolding (thesis Sec. 3.1.4 and 3.1.12).

* :func:`neighborhood_graph` — step (I) of Table 3.1: each input joined to its k nearest
  neighbours and, with ``angles=True`` (the default), the neighbours of each input joined to
  each other, so that every input and its neighbours form a (k+1)-clique and the constraints
  (3.8) fix distances *and* angles (3.7) (Fig. 3.6 right); ``angles=False`` gives the
  distances-only kNN graph (Fig. 3.6 left).
* :func:`connected_components`, :func:`check_connected`, :func:`link_components` — the SDP is
  infeasible or unbounded on a disconnected graph; Sec. 3.1.12 links components by adding the
  edge x′–x″ (x random in C₁, x′ its nearest point in another component C₂, x″ the nearest
  point of C₁ to x′) until the graph is connected.
* :func:`edge_scores`, :func:`bad_edges` — Sec. 3.1.12's detection of "bad" short-circuit
  edges by a random walk with transition weights η_ij exp(−‖x_i − x_j‖/σ): an edge is bad when
  the probability q^t_ij + q^t_ji of travelling between its ends within t steps is an outlier
  of the distribution over edges.

Edges are returned as an (E, 2) int64 array with ``i < j`` in every row, sorted
lexicographically and without duplicates, and their squared lengths D_ij = ‖x_i − x_j‖²
(recomputed from explicit differences, not from a Gram expansion).

Duplicate points: they are each other's nearest neighbours at distance 0, so MVU pins them
to the same output (D = 0); this is legitimate and kept, with a warning.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: step (I) of Table 3.1, the constraints (3.7)–(3.8), the
   Laplacian (3.24) and the practical aspects of Sec. 3.1.12 (connectivity, bad edges).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from .._validate import as_matrix, check_positive_int, check_random_state, count_distinct

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = [
    "bad_edges",
    "canonical_edges",
    "check_connected",
    "check_edges",
    "connected_components",
    "edge_scores",
    "edge_sqdist",
    "graph_laplacian",
    "knn_indices",
    "link_components",
    "neighborhood_graph",
    "neighbour_arrays",
]


def knn_indices(X: np.ndarray, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest neighbours of every row of X, the point itself excluded.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    n_neighbors : int
        k, with 1 ≤ k < n.

    Returns
    -------
    index : ndarray of shape (n, k), int64
        Neighbours of each point, nearest first.
    distance : ndarray of shape (n, k)
        Their Euclidean distances.
    """
    X = as_matrix(X, "X", min_rows=2)
    n = X.shape[0]
    k = check_positive_int(n_neighbors, "n_neighbors")
    if k >= n:
        raise ValueError(f"n_neighbors must be smaller than the number of points n = {n}, got {k}")
    from sklearn.neighbors import NearestNeighbors  # at first use (DESIGN.md, "Start-up")

    model = NearestNeighbors(n_neighbors=k).fit(X)
    distance, index = model.kneighbors()          # X=None: each point's own row is excluded
    return index.astype(np.int64), distance


def canonical_edges(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """Undirected edges (min, max) from index arrays, self-loops dropped, sorted and unique."""
    i = np.asarray(i, dtype=np.int64).ravel()
    j = np.asarray(j, dtype=np.int64).ravel()
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    keep = lo != hi
    code = np.unique(lo[keep] * n + hi[keep])
    return np.column_stack([code // n, code % n]).astype(np.int64)


def edge_sqdist(X: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """D_ij = ‖x_i − x_j‖² of (3.8) for every edge, from explicit differences."""
    diff = X[edges[:, 0]] - X[edges[:, 1]]
    return np.einsum("ij,ij->i", diff, diff)


def neighborhood_graph(
    X: np.ndarray, n_neighbors: int, *, angles: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Step (I) of Table 3.1: the MVU neighbourhood graph and its squared edge lengths.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Inputs as rows; finite.
    n_neighbors : int
        k, with 1 ≤ k < n.
    angles : bool
        Also join every pair of neighbours of the same input (the (k+1)-cliques of
        Sec. 3.1.4, which preserve the angles (3.7)); otherwise only the kNN edges.

    Returns
    -------
    edges : ndarray of shape (E, 2), int64
        Undirected edges (i < j), sorted, unique.
    sqdist : ndarray of shape (E,)
        D_ij = ‖x_i − x_j‖².

    Raises
    ------
    ValueError
        NaN/inf in X, k < 1 or k ≥ n.
    """
    X = as_matrix(X, "X", min_rows=2)
    index, distance = knn_indices(X, n_neighbors)
    n, k = index.shape
    if np.any(distance[:, 0] == 0.0):
        warnings.warn(
            f"X has {int(np.sum(distance[:, 0] == 0.0))} point(s) with an exact duplicate: their edges have "
            "length 0 and MVU maps duplicates to the same output",
            RuntimeWarning,
            stacklevel=2,
        )
    rows = np.repeat(np.arange(n), k)
    i_parts, j_parts = [rows], [index.ravel()]
    if angles and k > 1:
        a, b = np.triu_indices(k, 1)                       # all pairs of neighbours of each input
        i_parts.append(index[:, a].ravel())
        j_parts.append(index[:, b].ravel())
    edges = canonical_edges(np.concatenate(i_parts), np.concatenate(j_parts), n)
    return edges, edge_sqdist(X, edges)


def check_edges(edges: object, n: int, name: str = "edges") -> np.ndarray:
    """Validated (E, 2) int64 edges on nodes 0..n−1, no self-loops, no duplicates, E ≥ 1."""
    arr = np.asarray(edges)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 1:
        raise ValueError(f"{name} must be an integer array of shape (E, 2) with E >= 1, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ValueError(f"{name} must hold integer node indices, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.min() < 0 or arr.max() >= n:
        raise ValueError(f"{name} must hold node indices in [0, {n}), got range [{arr.min()}, {arr.max()}]")
    if np.any(arr[:, 0] == arr[:, 1]):
        raise ValueError(f"{name} contains a self-loop (i, i), row {int(np.argmax(arr[:, 0] == arr[:, 1]))}")
    lo, hi = np.minimum(arr[:, 0], arr[:, 1]), np.maximum(arr[:, 0], arr[:, 1])
    if count_distinct(lo * n + hi) != arr.shape[0]:
        raise ValueError(f"{name} lists an undirected edge twice")
    return arr


def graph_laplacian(n: int, edges: np.ndarray, weights: np.ndarray | None = None) -> sp.csr_matrix:
    """The weighted graph Laplacian L(w) = Σ_e w_e (e_i − e_j)(e_i − e_j)ᵀ (unit weights: (3.24)).

    This is also the adjoint 𝒜*(w) of the MVU edge operator 𝒜(K)_e = K_ii + K_jj − 2K_ij (3.13).
    """
    import scipy.sparse as sp  # at first use (DESIGN.md, "Start-up")

    w = np.ones(edges.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    i, j = edges[:, 0], edges[:, 1]
    A = sp.coo_matrix((np.concatenate([w, w]), (np.concatenate([i, j]), np.concatenate([j, i]))), shape=(n, n))
    degree = np.bincount(i, weights=w, minlength=n) + np.bincount(j, weights=w, minlength=n)
    return (sp.diags(degree) - A).tocsr()


def connected_components(n: int, edges: np.ndarray) -> tuple[int, np.ndarray]:
    """Number of connected components and the component label of each of the n nodes.

    Components are numbered by their smallest node. Numpy only (loading an MVU instance checks its
    connectivity, and needs no SciPy): every root is hooked to the smallest root it shares an edge
    with, and the forest is flattened by pointer jumping, until no edge joins two roots.
    """
    parent = np.arange(n)
    i, j = np.asarray(edges[:, 0], dtype=np.intp), np.asarray(edges[:, 1], dtype=np.intp)
    while True:
        while True:                                  # pointer jumping: every node points at its root
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand
        ri, rj = parent[i], parent[j]
        joins = ri != rj
        if not joins.any():
            break
        # a root only ever points at a smaller one, so the hooks form a forest
        np.minimum.at(parent, np.maximum(ri[joins], rj[joins]), np.minimum(ri[joins], rj[joins]))
    roots, labels = np.unique(parent, return_inverse=True)
    return int(roots.size), labels.astype(np.int32)


def check_connected(n: int, edges: np.ndarray, name: str = "edges") -> None:
    """ValueError unless the graph is connected (Sec. 3.1.12: otherwise the SDP is unbounded)."""
    count, labels = connected_components(n, edges)
    if count > 1:
        sizes = np.bincount(labels)
        raise ValueError(
            f"the neighbourhood graph of {name} is disconnected ({count} components, sizes "
            f"{sorted(sizes.tolist(), reverse=True)[:8]}): MVU would pull the components infinitely far apart. "
            "Increase n_neighbors, link the components (sdpembed.graphs.link_components, Sec. 3.1.12) "
            "or embed each component separately"
        )


def link_components(
    X: np.ndarray, edges: np.ndarray, *, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Connect a graph by the linking procedure of Sec. 3.1.12.

    While there is more than one component: pick a random point x of a random component C₁;
    let x′ be the nearest point to x outside C₁ (its component is C₂), and x″ the nearest
    point of C₁ to x′; add the edge (x′, x″). Each round merges two components, so there are
    (number of components − 1) rounds, each a vectorised pass over the points.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    edges : ndarray of shape (E, 2)
    random_state : None, int or Generator

    Returns
    -------
    edges : ndarray of shape (E + c − 1, 2)
        The canonical edge list with the added links.
    sqdist : ndarray
        Squared lengths of all edges.
    """
    X = as_matrix(X, "X", min_rows=2)
    n = X.shape[0]
    edges = check_edges(edges, n)
    rng = check_random_state(random_state)
    count, labels = connected_components(n, edges)
    added_i, added_j = [], []
    while count > 1:
        c1 = int(rng.integers(count))
        members = np.flatnonzero(labels == c1)
        outside = np.flatnonzero(labels != c1)
        x = int(members[rng.integers(members.size)])
        d_out = np.einsum("ij,ij->i", X[outside] - X[x], X[outside] - X[x])
        x1 = int(outside[np.argmin(d_out)])                                # x′ ∈ C₂
        d_in = np.einsum("ij,ij->i", X[members] - X[x1], X[members] - X[x1])
        x2 = int(members[np.argmin(d_in)])                                 # x″ ∈ C₁
        added_i.append(x1)
        added_j.append(x2)
        merged = labels[x1]
        labels = np.where(labels == merged, c1, labels)
        _, labels = np.unique(labels, return_inverse=True)                 # relabel 0..count−2
        count -= 1
    linked = canonical_edges(
        np.concatenate([edges[:, 0], np.asarray(added_i, dtype=np.int64)]),
        np.concatenate([edges[:, 1], np.asarray(added_j, dtype=np.int64)]),
        n,
    )
    return linked, edge_sqdist(X, linked)


def edge_scores(
    n: int, edges: np.ndarray, sqdist: np.ndarray, *, steps: int = 7, sigma: float | None = None
) -> np.ndarray:
    """Random-walk traverse scores q^t_ij + q^t_ji of every edge (Sec. 3.1.12).

    The walk moves from x_i to a neighbour x_j with probability proportional to
    η_ij exp(−‖x_i − x_j‖/σ) (the thesis' weights, normalised here so that each row of the
    transition matrix P sums to 1). q^t_ij is taken as Σ_{s=1}^{t} (Pˢ)_ij, the expected number
    of visits to x_j within t steps from x_i — it bounds the probability of reaching x_j in at
    most t steps and orders edges the same way for the short walks used here (the thesis does
    not say how it computed q). Long edges with few short alternative routes — short circuits
    between layers of a manifold — get low scores. Pˢ is formed by sparse products, which stay
    sparse because a t-step walk only reaches a local neighbourhood.

    Parameters
    ----------
    n : int
    edges : ndarray of shape (E, 2)
    sqdist : ndarray of shape (E,)
        Squared edge lengths D_ij.
    steps : int
        t (thesis: 7).
    sigma : float, optional
        Length scale σ; the median edge length by default (the thesis' σ = 1 was for its data).

    Returns
    -------
    ndarray of shape (E,)
    """
    edges = check_edges(edges, n)
    D = np.asarray(sqdist, dtype=np.float64)
    if D.shape != (edges.shape[0],) or not np.all(np.isfinite(D)) or np.any(D < 0):
        raise ValueError(f"sqdist must hold {edges.shape[0]} finite non-negative squared lengths")
    steps = check_positive_int(steps, "steps")
    length = np.sqrt(D)
    if sigma is None:
        sigma = float(np.median(length)) or 1.0
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a positive number, got {sigma!r}")
    import scipy.sparse as sp  # at first use (DESIGN.md, "Start-up")

    w = np.exp(-length / sigma)
    i, j = edges[:, 0], edges[:, 1]
    W = sp.coo_matrix((np.concatenate([w, w]), (np.concatenate([i, j]), np.concatenate([j, i]))), shape=(n, n))
    W = W.tocsr()
    row = np.asarray(W.sum(axis=1)).ravel()
    P = (sp.diags(1.0 / np.where(row > 0, row, 1.0)) @ W).tocsr()
    power = P.copy()
    total = P.copy()
    for _ in range(steps - 1):                    # t sparse products (t = 7), not a loop over data
        power = (power @ P).tocsr()
        total = total + power
    total = total.tocsr()
    q_ij = np.asarray(total[i, j]).ravel()
    q_ji = np.asarray(total[j, i]).ravel()
    return q_ij + q_ji


def bad_edges(
    n: int,
    edges: np.ndarray,
    sqdist: np.ndarray,
    *,
    steps: int = 7,
    sigma: float | None = None,
    threshold: float = 3.5,
) -> tuple[np.ndarray, np.ndarray]:
    """Detect "bad" edges (short circuits) as outliers of the random-walk scores (Sec. 3.1.12).

    An edge is flagged when its log score log(q^t_ij + q^t_ji) (:func:`edge_scores`) lies more
    than ``threshold`` robust standard deviations (1.4826 · median absolute deviation) below
    the median log score.

    Returns
    -------
    mask : ndarray of shape (E,), bool
        True for the bad edges (cut them with ``edges[~mask]``).
    scores : ndarray of shape (E,)
    """
    scores = edge_scores(n, edges, sqdist, steps=steps, sigma=sigma)
    logs = np.log(np.maximum(scores, np.finfo(float).tiny))
    centre = np.median(logs)
    spread = 1.4826 * np.median(np.abs(logs - centre))
    if spread == 0.0:
        return np.zeros(scores.shape, dtype=bool), scores
    return logs < centre - threshold * spread, scores


def neighbour_arrays(
    X_train: np.ndarray, Y_train: np.ndarray, X_new: np.ndarray, n_neighbors: int, *, chunk_size: int = 2048
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The k nearest training inputs of each new input, as the arrays of :func:`sdpembed.solvers.mvu.oos.place_points`.

    Parameters
    ----------
    X_train : ndarray of shape (n, d)
        Training inputs x_i.
    Y_train : ndarray of shape (n, r)
        Their embedding y_i.
    X_new : ndarray of shape (m, d)
        New inputs x_t.
    n_neighbors : int
        k, at least r and at most n.
    chunk_size : int
        New points handled per block (memory: chunk_size · n distances).

    Returns
    -------
    Y_neighbours : ndarray of shape (m, k, r)
    sqdist : ndarray of shape (m, k)
        Exact ‖x_i − x_t‖², recomputed from the differences (not from the expansion
        ‖x_i‖² + ‖x_t‖² − 2x_iᵀx_t used to find the neighbours).
    index : ndarray of shape (m, k)
        Row indices into X_train, nearest first (equal distances by index; a tie at the k-th
        distance may keep either point).
    """
    X_train = as_matrix(X_train, "X_train")
    n, d = X_train.shape
    Y_train = as_matrix(Y_train, "Y_train")
    if Y_train.shape[0] != n:
        raise ValueError(f"Y_train must have one row per row of X_train ({n}), got {Y_train.shape[0]}")
    X_new = as_matrix(X_new, "X_new", min_rows=0)
    if X_new.shape[1] != d:
        raise ValueError(f"X_new must have the {d} columns of X_train (input dimension), got {X_new.shape[1]}")
    k = check_positive_int(n_neighbors, "n_neighbors")
    r = Y_train.shape[1]
    if k < r:
        raise ValueError(f"n_neighbors must be at least r = {r} (a new point needs at least r neighbours), got {k}")
    if k > n:
        raise ValueError(f"n_neighbors must be at most the number of training points {n}, got {k}")
    m = X_new.shape[0]
    index = np.empty((m, k), dtype=np.int64)
    sqdist = np.empty((m, k))
    train_norms = np.einsum("ij,ij->i", X_train, X_train)
    for start in range(0, m, chunk_size):
        block = X_new[start:start + chunk_size]
        approx = train_norms[None, :] - 2.0 * block @ X_train.T             # + ‖x_t‖², same for the row
        idx = np.argpartition(approx, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (len(block), 1))
        diff = X_train[idx] - block[:, None, :]
        exact = np.einsum("mkd,mkd->mk", diff, diff)
        order = np.lexsort((idx, exact))                                    # by distance, then index
        index[start:start + chunk_size] = np.take_along_axis(idx, order, axis=1)
        sqdist[start:start + chunk_size] = np.take_along_axis(exact, order, axis=1)
    return Y_train[index], sqdist, index
