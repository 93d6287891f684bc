"""PCA as a linear embedding: the M leading principal directions as the rows of Ψ.

NuMax Sec. 5.1 learns the PCA basis on the secant set (``center=False`` on secants); on
data points the usual centred PCA applies. The two agree on all pairs: for points x_1..x_n,
Σ_{i<j} (x_i − x_j)(x_i − x_j)ᵀ = n Σ_i (x_i − x̄)(x_i − x̄)ᵀ, so centred PCA of the points is
uncentred PCA of their (unnormalised) secants. PCA is a contraction: ‖Ψv‖ ≤ ‖v‖.

Two solvers: the exact SVD, and the randomized range finder of Halko, Martinsson and Tropp
(2011) — ADAGIO's "randomized PCA" (Sec. 4.4–4.5 of the ADAGIO paper, its refs [18], [31]).

References
----------
.. [1] N. Halko, P.-G. Martinsson and J. A. Tropp, "Finding structure with randomness:
   probabilistic algorithms for constructing approximate matrix decompositions", SIAM Review 53(2),
   217–288, 2011. Implemented here: Algorithms 4.4 and 5.1.
.. [2] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: PCA on the secants, Sec. 5.1.
.. [3] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", Proceedings of the IEEE International Conference on Data Mining (ICDM), 2016.
   Implemented here: randomized PCA, Sec. 4.4–4.5.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_matrix, check_positive_int, check_random_state
from .base import LinearEmbedding

__all__ = ["pca_projection", "principal_directions", "randomized_pca_projection", "PCA", "RandomizedPCA", "SVD_SOLVERS"]

#: The PCA solvers: exact SVD or the randomized range finder.
SVD_SOLVERS = ("exact", "randomized")


def _check_pca_size(data: np.ndarray, n_components: object) -> int:
    M = check_positive_int(n_components, "n_components")
    if M > min(data.shape):
        raise ValueError(f"n_components must be <= min(n, N) = {min(data.shape)}, got {M}")
    return M


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
    M = _check_pca_size(data, n_components)
    centred = data - data.mean(axis=0) if center else data
    _, _, Vt = np.linalg.svd(centred, full_matrices=False)
    return Vt[:M].copy()


def randomized_pca_projection(
    data: np.ndarray,
    n_components: int,
    *,
    center: bool = True,
    n_oversamples: int = 10,
    n_iter: int = 4,
    random_state=None,
) -> np.ndarray:
    """Top-M principal directions by the randomized SVD of Halko, Martinsson & Tropp (2011).

    Randomized subspace iteration (their Algorithm 4.4) with ℓ = M + ``n_oversamples``
    Gaussian test vectors and ``n_iter`` power iterations, each step re-orthonormalised by a
    QR factorisation; then the exact SVD of the small ℓ × N matrix QᵀA (their Algorithm 5.1).
    Cost O(nNℓ(2q + 1)) instead of O(nN·min(n, N)).

    Parameters
    ----------
    data : ndarray of shape (n, N)
    n_components : int
        M, at most min(n, N).
    center : bool
        Subtract the mean first.
    n_oversamples : int, default=10
        Extra test vectors (ℓ − M), capped so that ℓ ≤ min(n, N).
    n_iter : int, default=4
        Power iterations q (0 is the plain range finder, Algorithm 4.1).
    random_state : None, int or numpy Generator

    Returns
    -------
    ndarray of shape (M, N), orthonormal rows.
    """
    A = as_matrix(data, "data")
    M = _check_pca_size(A, n_components)
    oversamples = check_positive_int(n_oversamples, "n_oversamples", minimum=0)
    q = check_positive_int(n_iter, "n_iter", minimum=0)
    rng = check_random_state(random_state)
    if center:
        A = A - A.mean(axis=0)
    ell = min(M + oversamples, min(A.shape))
    Q, _ = np.linalg.qr(A @ rng.standard_normal((A.shape[1], ell)))      # range of A Ω
    for _ in range(q):                                                   # (A Aᵀ)^q A Ω, stably
        W, _ = np.linalg.qr(A.T @ Q)
        Q, _ = np.linalg.qr(A @ W)
    _, _, Vt = np.linalg.svd(Q.T @ A, full_matrices=False)               # B = QᵀA = Ũ Σ Vᵀ
    return Vt[:M].copy()


def principal_directions(
    data: np.ndarray,
    n_components: int,
    *,
    center: bool = True,
    svd_solver: str = "exact",
    n_oversamples: int = 10,
    n_iter: int = 4,
    random_state=None,
) -> np.ndarray:
    """The top-M principal directions (M, N) by the named solver of :data:`SVD_SOLVERS`:
    :func:`pca_projection` (``"exact"``) or :func:`randomized_pca_projection` (``"randomized"``,
    which alone uses ``n_oversamples``, ``n_iter`` and ``random_state``)."""
    if svd_solver == "exact":
        return pca_projection(data, n_components, center=center)
    if svd_solver == "randomized":
        return randomized_pca_projection(data, n_components, center=center, n_oversamples=n_oversamples,
                                         n_iter=n_iter, random_state=random_state)
    raise ValueError(f"svd_solver must be one of {SVD_SOLVERS}, got {svd_solver!r}")


class PCA(LinearEmbedding):
    """Principal component analysis as a :class:`LinearEmbedding` (exact or randomized).

    Parameters
    ----------
    n_components : int, optional
        M, at most min(n, N); 2 when neither it nor ``delta`` is given.
    delta : float, optional
        A target isometry constant δ ∈ (0, 1) instead of ``n_components``: M is the smallest
        dimension whose map has RIP constant ≤ δ on the training secants (the search of
        :func:`~sdpembed.linear.selection.select_dimension`; ``selection_`` records it).
    center : bool, default=True
        Centre the points before the SVD (``fit``). ``fit_secants`` never centres (NuMax
        Sec. 5.1: PCA on the secant set).
    svd_solver : {"exact", "randomized"}, default="exact"
        The full SVD, or :func:`randomized_pca_projection`.
    n_oversamples, n_iter : int
        Settings of the randomized solver.
    random_state : None, int or numpy Generator
        Seed of the randomized solver.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features_in_)
        Orthonormal rows: the principal directions, leading first.
    n_components_, n_features_in_ : int
    """

    def __init__(
        self,
        n_components: int | None = None,
        *,
        delta: float | None = None,
        center: bool = True,
        svd_solver: str = "exact",
        n_oversamples: int = 10,
        n_iter: int = 4,
        random_state=0,
    ) -> None:
        self.n_components = n_components
        self.delta = delta
        self.center = center
        self.svd_solver = svd_solver
        self.n_oversamples = n_oversamples
        self.n_iter = n_iter
        self.random_state = random_state

    def _principal_rows(self, data: np.ndarray, center: bool) -> np.ndarray:
        return principal_directions(data, self._n_components(), center=center, svd_solver=self.svd_solver,
                                    n_oversamples=self.n_oversamples, n_iter=self.n_iter,
                                    random_state=self.random_state)

    def _learn_map(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        return self._principal_rows(X, bool(self.center))

    def _learn_map_secants(self, V: np.ndarray) -> np.ndarray:
        return self._principal_rows(V, False)

    def _max_n_components(self, n_samples: int, n_features: int, y: np.ndarray | None = None) -> int:
        return min(n_samples, n_features)


class RandomizedPCA(PCA):
    """:class:`PCA` with ``svd_solver="randomized"`` by default (the method ``pca_randomized``)."""

    def __init__(
        self,
        n_components: int | None = None,
        *,
        delta: float | None = None,
        center: bool = True,
        svd_solver: str = "randomized",
        n_oversamples: int = 10,
        n_iter: int = 4,
        random_state=0,
    ) -> None:
        super().__init__(n_components, delta=delta, center=center, svd_solver=svd_solver, n_oversamples=n_oversamples,
                         n_iter=n_iter, random_state=random_state)
