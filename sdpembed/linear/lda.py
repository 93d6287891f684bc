"""Fisher's linear discriminant analysis as a linear embedding (the labelled baseline of NuMax Sec. 1).

With class priors p_c = n_c / n, class means μ_c and the mean μ,

    S_w = Σ_c p_c Cov_c   (biased class covariances),    S_b = Σ_c p_c (μ_c − μ)(μ_c − μ)ᵀ,

the rows of Ψ are the leading generalised eigenvectors of S_b w = λ S_w w, normalised to
wᵀ S_w w = 1 (Duda, Hart & Stork, Sec. 3.8.3). At most C − 1 eigenvalues are nonzero, so
M ≤ C − 1. This is the same map as scikit-learn's ``LinearDiscriminantAnalysis(solver="eigen")``
without shrinkage (the tests check it), written out so that its rank handling is explicit:

* the problem is stated in the range of the total scatter S_t = S_w + S_b (directions in
  which no training point varies carry no information; both scatters vanish there), which
  is exact — every eigenvector with λ > 0 lies in that range — and lets S_w be inverted
  whenever it is definite on it;
* if S_w is still singular there (fewer points than dimensions), ``shrinkage`` α ∈ (0, 1]
  regularises it as (1 − α) S_w + α (tr S_w / N) I. Unlike scikit-learn, which shrinks the
  total scatter as well (so S_b gains a multiple of I), only S_w is shrunk here.

References
----------
.. [1] R. O. Duda, P. E. Hart and D. G. Stork, "Pattern classification", 2nd ed., Wiley, 2001.
   Implemented here: Sec. 3.8.3.
.. [2] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: Sec. 1 (LDA as the labelled baseline).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg

from .._validate import as_matrix, check_positive_int
from .base import LinearEmbedding

__all__ = ["lda_projection", "LDA"]


def _check_labels(y: object, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    if y is None:
        raise ValueError("y (class labels) is required for LDA")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y must be a 1-D array of {n_samples} labels, got shape {y.shape}")
    classes, codes = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(f"y must contain at least two classes, got {classes.size}")
    return classes, codes


def _check_definite(Sw_r: np.ndarray, rank_tol: float, shrinkage: float | None) -> None:
    # Checked here, not left to the Cholesky factorisation inside scipy.linalg.eigh: with rounding-level
    # eigenvalues (1e-16 · λ_max) it may succeed and return meaningless eigenvalues of order 1e16.
    vals = np.linalg.eigvalsh(Sw_r)
    if vals[0] > rank_tol * max(float(vals[-1]), 1e-300):
        return
    if shrinkage is not None:
        raise ValueError(f"the within-class scatter S_w is singular on the span of the data even with shrinkage "
                         f"{shrinkage!r} (no or almost no variance within the classes)")
    raise ValueError("the within-class scatter S_w is singular on the span of the data (too few points per "
                     "dimension); pass shrinkage in (0, 1]")


def lda_projection(
    X: np.ndarray,
    y: np.ndarray,
    n_components: int | None = None,
    *,
    shrinkage: float | None = None,
    rank_tol: float = 1e-10,
) -> np.ndarray:
    """Ψ (M, N): the leading M generalised eigenvectors of (S_b, S_w), as rows.

    Parameters
    ----------
    X : ndarray of shape (n, N)
    y : array_like of shape (n,)
        Class labels, at least two classes.
    n_components : int, optional
        M ≤ min(C − 1, rank S_t); by default that maximum.
    shrinkage : float in (0, 1], optional
        Regularisation of S_w (see the module docstring); needed when S_w is singular on the
        range of S_t.
    rank_tol : float
        Eigenvalues of S_t below ``rank_tol`` times the largest count as zero; so do those of S_w
        (after shrinkage) on the range of S_t, and then S_w counts as singular.

    Raises
    ------
    ValueError
        If S_w is singular on the range of S_t and no ``shrinkage`` is given.

    Returns
    -------
    ndarray of shape (M, N)
        Rows w_i with w_iᵀ S_w w_i = 1, by decreasing Fisher ratio λ_i.
    """
    X = as_matrix(X, "X", min_rows=2)
    n, N = X.shape
    classes, codes = _check_labels(y, n)
    counts = np.bincount(codes).astype(np.float64)
    priors = counts / n
    means = np.zeros((classes.size, N))
    np.add.at(means, codes, X)
    means /= counts[:, None]
    within = X - means[codes]
    S_w = within.T @ within / n                                   # Σ_c p_c Cov_c (biased)
    offsets = means - priors @ means
    S_b = (offsets * priors[:, None]).T @ offsets                 # Σ_c p_c (μ_c − μ)(μ_c − μ)ᵀ
    t_vals, t_vecs = np.linalg.eigh(S_w + S_b)
    U = t_vecs[:, t_vals > rank_tol * max(float(t_vals[-1]), 1e-300)]   # range of S_t
    limit = min(classes.size - 1, U.shape[1])
    if limit == 0:
        raise ValueError("X has no variance: LDA needs points that are not all equal")
    M = limit if n_components is None else check_positive_int(n_components, "n_components")
    if M > limit:
        raise ValueError(f"n_components must be <= min(classes − 1, rank of the data) = {limit}, got {M}")
    Sw_r, Sb_r = U.T @ S_w @ U, U.T @ S_b @ U
    if shrinkage is not None:
        if isinstance(shrinkage, bool) or not isinstance(shrinkage, numbers.Real) or not 0.0 < shrinkage <= 1.0:
            raise ValueError(f"shrinkage must be None or a real number in (0, 1], got {shrinkage!r}")
        Sw_r = (1.0 - shrinkage) * Sw_r + shrinkage * np.trace(S_w) / N * np.eye(U.shape[1])
    _check_definite(Sw_r, rank_tol, shrinkage)
    evals, evecs = scipy.linalg.eigh(Sb_r, Sw_r)
    order = np.argsort(evals)[::-1][:M]
    return (U @ evecs[:, order]).T


class LDA(LinearEmbedding):
    """Linear discriminant analysis as a :class:`LinearEmbedding`; ``fit(X, y)`` needs labels.

    Parameters
    ----------
    n_components : int, optional
        M ≤ C − 1; by default C − 1 (or the rank of the data if smaller).
    delta : float, optional
        A target isometry constant δ ∈ (0, 1) instead of ``n_components``: M is the smallest
        dimension whose map has RIP constant ≤ δ on the training secants (the search of
        :func:`~sdpembed.linear.selection.select_dimension`; ``selection_`` records it).
    shrinkage : float in (0, 1], optional
        Regularisation of the within-class scatter (see :mod:`sdpembed.linear.lda`).

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features_in_)
        The discriminant directions, wᵀ S_w w = 1, by decreasing Fisher ratio.
    classes_ : ndarray
    n_components_, n_features_in_ : int
    """

    _default_n_components = None

    def __init__(self, n_components: int | None = None, *, delta: float | None = None,
                 shrinkage: float | None = None) -> None:
        self.n_components = n_components
        self.delta = delta
        self.shrinkage = shrinkage

    def fit(self, X, y) -> LDA:
        """Learn Ψ from the labelled rows of ``X``."""
        return super().fit(X, y)

    def _learn_map(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        classes, _ = _check_labels(y, X.shape[0])
        self.classes_ = classes
        return lda_projection(X, y, self.n_components, shrinkage=self.shrinkage)

    def _max_n_components(self, n_samples: int, n_features: int, y: np.ndarray | None = None) -> int:
        n_classes = n_features + 1 if y is None else np.unique(np.asarray(y)).size
        return min(n_classes - 1, n_features)
