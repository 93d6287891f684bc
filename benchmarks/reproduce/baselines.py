"""Small baselines and evaluators of the reproductions that neither sdpembed nor scikit-learn provides.

LPP, kernel LPP and NPE (NuMax Fig. 3(b), the sparse-linear-model paper's Fig. 2 and Table 1) and the harmonic-function
classifier of Zhu, Ghahramani and Lafferty (ADAGIO Table 4).

Both are linear maps found by a generalised eigenproblem on a k-nearest-neighbour graph, written
here in a few lines for the reproduction only (not part of sdpembed):

* LPP (He and Niyogi): heat-kernel weights W on the kNN graph, L = D − W; the rows of the map
  are the generalised eigenvectors of Xᵀ L X a = λ Xᵀ D X a with the smallest λ. Its kernel
  form KLPP (the sparse-linear-model paper's kernel baseline) replaces X by the centred kernel
  matrix: K̄ L K̄ α = λ K̄ D K̄ α.
* NPE (He, Cai, Yan and Zhang): the LLE reconstruction weights W of each point from its k
  neighbours, 𝓜 = (I − W)ᵀ(I − W); the eigenvectors of Xᵀ 𝓜 X a = λ Xᵀ X a with the smallest λ.

With fewer points than pixels the right-hand matrices are singular; a ridge of ``reg`` times
their mean diagonal makes them definite (the usual regularisation; the papers apply PCA first).
The maps' scale is arbitrary, so Fig. 3(b)'s isometry constant is measured after the best
uniform rescaling (see :func:`best_scaled_delta`).

The harmonic-function classifier (ADAGIO Sec. 4.7, (9)) labels the unlabelled vertices u of a
graph with Laplacian L = D − W by the minimiser of xᵀLx = Σ_(u,v) w_uv (x_u − x_v)² with x fixed
to the known labels on the labelled vertices l: the harmonic function x_u = L_uu⁻¹ W_ul x_l. With
several classes it is solved once per class (one-vs-rest indicator x_l) and a vertex takes the
class of the largest score. It lives here, not in sdpembed, because it is only the downstream
evaluator of one table — a semi-supervised classifier, neither an SDP nor a linear embedding —
like the GMLC of NuMax Fig. 12 in :mod:`reproduce.numax`.

References
----------
.. [1] X. He and P. Niyogi, "Locality preserving projections", NIPS 16, 2003.
.. [2] X. He, D. Cai, S. Yan and H.-J. Zhang, "Neighborhood preserving embedding", ICCV 2005.
.. [3] X. Zhu, Z. Ghahramani and J. Lafferty, "Semi-supervised learning using Gaussian fields and
   harmonic functions", ICML 2003. The harmonic function (its eq. (5)).
.. [4] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", ICDM 2016. Sec. 4.7, (9), Table 4.
.. [5] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Fig. 3(b).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh
from scipy.sparse.linalg import splu
from sklearn.neighbors import NearestNeighbors, kneighbors_graph


def _neighbours(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    distances, index = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    return distances[:, 1:], index[:, 1:]


def _smallest_generalised(A: np.ndarray, B: np.ndarray, n_components: int, reg: float) -> np.ndarray:
    B = B + reg * np.mean(np.diag(B)) * np.eye(len(B))
    _, vectors = eigh((A + A.T) / 2.0, (B + B.T) / 2.0, subset_by_index=[0, n_components - 1])
    return vectors.T


def _heat_graph(distances: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LPP's symmetrised heat-kernel weights W on the kNN graph (t = mean squared neighbour distance) and D."""
    n, k = index.shape
    W = np.zeros((n, n))
    W[np.repeat(np.arange(n), k), index.ravel()] = np.exp(-distances.ravel() ** 2 / np.mean(distances**2))
    W = np.maximum(W, W.T)
    return W, np.diag(W.sum(axis=1))


def lpp_projection(X: np.ndarray, n_components: int, *, k: int = 5, reg: float = 1e-6) -> np.ndarray:
    """Locality preserving projections: the (n_components, N) map of He and Niyogi."""
    Xc = X - X.mean(axis=0)
    W, D = _heat_graph(*_neighbours(Xc, k))
    return _smallest_generalised(Xc.T @ (D - W) @ Xc, Xc.T @ D @ Xc, n_components, reg)


def klpp_embedding(K_train: np.ndarray, K_test: np.ndarray, n_components: int, *, k: int = 5,
                   reg: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Kernel LPP: LPP in the feature space of the kernel, for the training and the test rows.

    The kNN graph and its heat weights come from the feature-space distances
    k(x, x) + k(y, y) − 2k(x, y). LPP is then solved on the kernel-PCA coordinates of the
    centred kernel matrix K̄ = U W Uᵀ (those of eigenvalue > 1e-10 of the largest): the
    problem K̄ L K̄ α = λ K̄ D K̄ α restricted to the range of K̄, where its near-null directions
    would give spurious 0/0 solutions. ``K_test`` is (m, n), the test rows against the training
    rows; the ridge ``reg`` as in :func:`lpp_projection`.
    """
    from sklearn.preprocessing import KernelCenterer

    n = len(K_train)
    d2 = np.maximum(np.diag(K_train)[:, None] + np.diag(K_train)[None, :] - 2.0 * K_train, 0.0)
    np.fill_diagonal(d2, np.inf)
    index = np.argsort(d2, axis=1)[:, :k]
    W, D = _heat_graph(np.sqrt(d2[np.arange(n)[:, None], index]), index)
    centre = KernelCenterer().fit(K_train)
    w, U = np.linalg.eigh(centre.transform(K_train))
    keep = w > 1e-10 * w[-1]
    Z = U[:, keep] * np.sqrt(w[keep])                               # kernel-PCA coordinates of the rows
    Z_test = centre.transform(K_test) @ (U[:, keep] / np.sqrt(w[keep]))
    a = _smallest_generalised(Z.T @ (D - W) @ Z, Z.T @ D @ Z, n_components, reg).T
    return Z @ a, Z_test @ a


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


def knn_graph(X: np.ndarray, k: int, *, weights: str = "unit", sigma: float | None = None,
              symmetrise: str = "either") -> sp.csr_matrix:
    """The k-nearest-neighbour graph of the rows of X.

    ``weights``: ``"unit"`` (1 on every edge), ``"distance"`` (the distance itself, larger for
    farther neighbours) or ``"heat"`` (exp(−d²/σ²), ``sigma`` required). ``symmetrise``:
    ``"either"`` (an edge when either point is among the other's k nearest), ``"mutual"`` (when
    both are) or ``"none"`` (the directed graph, row i holding i's k nearest). Edges whose weight
    underflows (a heat kernel below the smallest normal float) are dropped.
    """
    A = kneighbors_graph(X, n_neighbors=k, mode="connectivity" if weights == "unit" else "distance",
                         include_self=False).tocsr()
    if weights == "heat":
        if sigma is None or not sigma > 0:
            raise ValueError("heat weights need a kernel width sigma > 0")
        A.data = np.exp(-(A.data / sigma) ** 2)
        A.data[A.data < np.finfo(float).tiny] = 0.0             # subnormal: underflowed
    elif weights not in ("unit", "distance"):
        raise ValueError(f"weights must be 'unit', 'distance' or 'heat', got {weights!r}")
    if symmetrise == "either":
        A = A.maximum(A.T)
    elif symmetrise == "mutual":
        A = A.minimum(A.T)
    elif symmetrise != "none":
        raise ValueError(f"symmetrise must be 'either', 'mutual' or 'none', got {symmetrise!r}")
    A = A.tocsr()
    A.eliminate_zeros()
    return A


def reaching(W: sp.spmatrix, labelled: np.ndarray) -> np.ndarray:
    """Mask of the vertices from which a labelled vertex is reached along edges of positive weight."""
    from scipy.sparse.csgraph import breadth_first_order

    n = W.shape[0]
    source = sp.csr_matrix((np.ones(len(labelled)), (np.full(len(labelled), n), labelled)), shape=(n + 1, n + 1))
    reverse = sp.bmat([[sp.csr_matrix(W).T, None], [None, sp.csr_matrix((1, 1))]]).tocsr() + source
    mask = np.zeros(n + 1, dtype=bool)
    mask[breadth_first_order(reverse, n, directed=True, return_predecessors=False)] = True
    return mask[:n]


def harmonic_scores(W: sp.spmatrix, labelled: np.ndarray, y: np.ndarray, n_classes: int, *,
                    unreached: str = "refuse") -> np.ndarray:
    """Harmonic function (ADAGIO (9)) of each class on the unlabelled vertices: shape (n_unlabelled, n_classes).

    ``W`` is the weight matrix (symmetric, or a directed graph's, row i the edges out of i),
    ``labelled`` the labelled vertices, ``y`` their classes in 0…n_classes−1. Column c is the
    minimiser of xᵀLx with x = [y == c] on the labelled vertices, x_u = L_uu⁻¹ W_ul x_l (for a
    directed graph, the probability that a random walk from u is absorbed in class c), the
    unlabelled vertices in increasing order. A vertex that reaches no labelled vertex makes L_uu
    singular: ``unreached="refuse"`` raises; ``"zero"`` gives such vertices the score 0 in
    every class (no information) and solves on the others.
    """
    n = W.shape[0]
    labelled = np.asarray(labelled)
    unlabelled = np.setdiff1d(np.arange(n), labelled)
    W = sp.csr_matrix(W)
    F_l = (np.asarray(y)[:, None] == np.arange(n_classes)[None, :]).astype(np.float64)
    solve_on = unlabelled
    if unreached == "zero":
        solve_on = unlabelled[reaching(W, labelled)[unlabelled]]
    elif unreached != "refuse":
        raise ValueError(f"unreached must be 'refuse' or 'zero', got {unreached!r}")
    scores = np.zeros((len(unlabelled), n_classes))
    if len(solve_on) == 0:
        return scores
    # each row divided by its degree (the random walk's form, the same solution): weights of a
    # narrow heat kernel near underflow then still give a well-scaled system
    degree = np.asarray(W.sum(axis=1)).ravel()[solve_on]
    scale = sp.diags(1.0 / np.where(degree > 0, degree, 1.0))
    L_uu = (sp.identity(len(solve_on)) - scale @ W[solve_on][:, solve_on]).tocsc()
    try:
        solved = splu(L_uu).solve(np.asarray(scale @ (W[solve_on][:, labelled] @ F_l)))
    except RuntimeError as error:                       # SuperLU: "Factor is exactly singular"
        raise ValueError("a connected component of the graph has no labelled vertex; the harmonic "
                         "function is not unique there") from error
    scores[np.searchsorted(unlabelled, solve_on)] = solved
    return scores


def harmonic_accuracy(X: np.ndarray, y: np.ndarray, *, k: int = 30, weights: str = "unit",
                      sigma: float | None = None, symmetrise: str = "either", labelled: str = "folds",
                      folds: str = "stratified", decision: str = "argmax", count: str = "multiclass",
                      n_folds: int = 10, seed: int = 0, unreached: str = "zero") -> dict:
    """Mean accuracy (%) of the harmonic classifier on the k-NN graph of X by n_folds-fold cross-validation.

    The defaults are ADAGIO Sec. 4.7 as read by Table 4: each fold in turn is unlabelled, the
    other nine labelled, one harmonic function per class (one-vs-rest) and the class of the
    largest score; the accuracy is that of the unlabelled points. The graph options are those of
    :func:`knn_graph`. The alternatives, each a possible reading of the paper:

    * ``labelled="fold"``: each fold in turn is the labelled set (10%), the others unlabelled;
    * ``folds="file order"``: consecutive blocks of the rows as given (no shuffling, no
      stratification);
    * ``decision="cmn"``: Zhu et al.'s class mass normalisation, score c scaled by q_c / Σ_u f_uc
      with q_c the labelled class frequency;
    * ``decision="index_half"``: one harmonic function of the class index c_i ∈ {0, 1, …} (the
      two-class code of Sec. 4.7 run on multi-class labels) and its rule c_j = 1 iff x_j ≥ ½,
      else 0; ``decision="index_round"``: the same function, the class index nearest to x_j. By
      linearity that function is Σ_c c·f_c, f_c the class-c harmonic functions;
    * ``count="one_vs_rest"``: the paper's binary rule c_j = 1 iff x_j ≥ ½ on each class's
      harmonic function, its accuracy 1 − (fp + fn)/(tp + tn + fp + fn), averaged over the classes.

    Unlabelled points that reach no labelled point get score 0 in every class (the first class
    wins the tie, as ``argmax`` does) — ``unreached="refuse"`` raises instead; their share is
    returned as ``unreached`` (%).
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    W = knn_graph(X, k, weights=weights, sigma=sigma, symmetrise=symmetrise)
    classes, y = np.unique(y, return_inverse=True)
    C = len(classes)
    if folds == "stratified":
        splits = StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(X, y)
    elif folds == "file order":
        splits = KFold(n_folds).split(X)
    else:
        raise ValueError(f"folds must be 'stratified' or 'file order', got {folds!r}")
    accuracies, cut_off = [], []
    for train, test in splits:
        if labelled not in ("folds", "fold"):
            raise ValueError(f"labelled must be 'folds' or 'fold', got {labelled!r}")
        known, unknown = (train, test) if labelled == "folds" else (test, train)
        known, unknown = np.sort(known), np.sort(unknown)
        scores = harmonic_scores(W, known, y[known], C, unreached=unreached)
        cut_off.append(np.mean(~reaching(W, known)[unknown]))
        if decision == "cmn":
            prior = np.bincount(y[known], minlength=C) / len(known)
            scores = scores * prior / np.maximum(scores.sum(axis=0), np.finfo(float).tiny)
        elif decision in ("index_half", "index_round"):
            if count != "multiclass":
                raise ValueError(f"decision {decision!r} predicts a class index: count must be 'multiclass'")
            x = scores @ np.arange(C)
            predicted = (x >= 0.5).astype(int) if decision == "index_half" else np.clip(np.rint(x), 0, C - 1)
            accuracies.append(np.mean(predicted == y[unknown]))
            continue
        elif decision != "argmax":
            raise ValueError(f"decision must be 'argmax', 'cmn', 'index_half' or 'index_round', got {decision!r}")
        if count == "multiclass":
            accuracies.append(np.mean(np.argmax(scores, axis=1) == y[unknown]))
        elif count == "one_vs_rest":
            accuracies.append(np.mean((scores >= 0.5) == (y[unknown, None] == np.arange(C)[None, :])))
        else:
            raise ValueError(f"count must be 'multiclass' or 'one_vs_rest', got {count!r}")
    return {"accuracy": 100.0 * float(np.mean(accuracies)), "unreached": 100.0 * float(np.mean(cut_off))}


def harmonic_error(X: np.ndarray, y: np.ndarray, *, k: int = 30, n_folds: int = 10, seed: int = 0) -> float:
    """Mean error (%) of the harmonic classifier on the k-NN graph of X by n_folds-fold cross-validation:
    each fold in turn is unlabelled, the others labelled (Sec. 4.7; :func:`harmonic_accuracy`'s
    defaults). A graph on which some unlabelled point reaches no labelled one is refused."""
    return 100.0 - harmonic_accuracy(X, y, k=k, n_folds=n_folds, seed=seed, unreached="refuse")["accuracy"]
