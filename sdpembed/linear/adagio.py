"""ADAGIO: PCA padded with Johnson–Lindenstrauss rows (Błasiok & Tsourakakis, Algorithm 1).

Given an orthonormal P (s × N, PPᵀ = I; by default the top-s principal directions of the data)
and a random S (k × N) with entries ±1/√k, every point w is mapped to

    f(w) = (P w, S (w − PᵀP w))                       Algorithm 1, eq. (8): Π: w ↦ (Pw, SQw)

with Q = I − PᵀP the projector onto the orthogonal complement of P's rows. The map is linear,

    Ψ = [ P ; S Q ] = [ P ; S − (S Pᵀ) P ]            shape (s + k, N),

so ADAGIO is a :class:`~sdpembed.linear.base.LinearEmbedding`. For a target dimension r the
paper's experiments (Sec. 4.1) take s = ⌊r/2⌋ principal components and k = ⌈r/2⌉ JL rows, with
exact or randomized PCA ([18], [31]); that is the default here. (The authors' published code
caps the JL part at 150 rows, s = max(⌊r/2⌋, r − 150); ``n_pca`` reproduces any split.)

**Theorem 2, restated with explicit constants** (the PDF's statement and proof are partly
garbled; rederived here). Let δ be the distortion (3) of P on the set T,
i.e. ‖Pv‖ ≥ 1 − δ for every unit secant v (P is a contraction, so ‖Pv‖ ≤ 1). For a unit
secant v put ζ = ‖Qv‖² = 1 − ‖Pv‖² ≤ 1 − (1 − δ)² ≤ 2δ. Since ‖Πv‖² = ‖Pv‖² + ‖SQv‖²,

    ‖Πv‖² − 1 = ‖SQv‖² − ‖Qv‖² = ζ (‖SQv‖²/‖Qv‖² − 1).

If S keeps the squared norms of the vectors Qv within a factor 1 ± ε/2 (the proof's (7) asks
for 1 ± ε/8 on norms, and (1 ± ε/8)² ⊂ 1 ± ε/2), then |‖Πv‖² − 1| ≤ εζ/2 ≤ εδ, so Π has
distortion at most δε — in the squared sense of NuMax's RIP (2), and hence also in ADAGIO's
(3), because |√(1 + x) − 1| ≤ |x| for x ≥ −1. The vectors Qv are the normalised secants of
the n points QT, so Achlioptas' Theorem 1.1 (:func:`~sdpembed.linear.random_projection.jl_dimension`
with distortion ε/2) gives an explicit k = ⌈(4 + 2β)/((ε/2)²/2 − (ε/2)³/3) · ln n⌉ that succeeds
with probability at least 1 − n^(−β): :func:`theorem2_jl_rows`. The target dimension is then
r = s + k = s + O(log|T| / ε²), as the theorem states.

References
----------
.. [1] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", Proceedings of the IEEE International Conference on Data Mining (ICDM), 2016.
   Implemented here: Algorithm 1 with (8), Theorem 2, the experimental set-up of Sec. 4.1.
.. [2] D. Achlioptas, "Database-friendly random projections: Johnson–Lindenstrauss with binary
   coins", Journal of Computer and System Sciences 66(4), 671–687, 2003. Implemented here: Theorem
   1.1.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validate import as_matrix, check_positive_int, check_random_state
from .base import LinearEmbedding
from .pca import SVD_SOLVERS, principal_directions
from .random_projection import jl_dimension, rademacher_projection

__all__ = ["adagio_projection", "theorem2_jl_rows", "ADAGIO"]


def theorem2_jl_rows(n_points: int, epsilon: float, *, beta: float = 1.0) -> int:
    """JL rows k for which ADAGIO's Theorem 2 reduces the distortion δ of P to δε.

    k = :func:`~sdpembed.linear.random_projection.jl_dimension` (n, ε/2, β): the Rademacher
    matrix then keeps every ‖Qv‖² within 1 ± ε/2 with probability ≥ 1 − n^(−β), which is
    what the proof of Theorem 2 uses (see the module docstring).
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not 0.0 < float(epsilon) < 1.0:
        raise ValueError(f"epsilon must be a real number in (0, 1), got {epsilon!r}")
    return jl_dimension(n_points, 0.5 * float(epsilon), beta=beta)


def _check_orthonormal(P: object, n_features: int) -> np.ndarray:
    P = as_matrix(P, "projection", n_cols=n_features)
    if P.shape[0] > n_features:
        raise ValueError(f"projection must have at most N = {n_features} rows, got {P.shape[0]}")
    error = float(np.max(np.abs(P @ P.T - np.eye(P.shape[0]))))
    if error > 1e-8:
        raise ValueError(f"projection must have orthonormal rows (P Pᵀ = I); max |P Pᵀ − I| = {error:.2e}")
    return P


def adagio_projection(
    data: np.ndarray,
    n_components: int,
    *,
    n_pca: int | None = None,
    projection: np.ndarray | None = None,
    center: bool = True,
    pca_solver: str = "exact",
    n_oversamples: int = 10,
    n_iter: int = 4,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ADAGIO's Ψ = [P; S(I − PᵀP)] (Algorithm 1) with r = ``n_components`` rows.

    Parameters
    ----------
    data : ndarray of shape (n, N)
        Points (``center=True``) or secants (``center=False``) as rows.
    n_components : int
        r, the target dimension.
    n_pca : int, optional
        s, the rows of P; by default ⌊r/2⌋ (Sec. 4.1). The JL part has k = r − s rows.
    projection : ndarray of shape (s, N), optional
        A given orthonormal P (Algorithm 1's input) instead of PCA; ``n_pca`` is then s.
    center : bool, default=True
        Centre the data before PCA.
    pca_solver : {"exact", "randomized"}
        Exact SVD or randomized PCA (Sec. 4.5).
    n_oversamples, n_iter : int
        Settings of the randomized PCA.
    random_state : None, int or numpy Generator
        One generator seeds the randomized PCA and then S.

    Returns
    -------
    Psi : ndarray of shape (r, N)
    P : ndarray of shape (s, N)
        The orthonormal part.
    S : ndarray of shape (k, N)
        The Rademacher matrix, entries ±1/√k (before the projection onto P's complement).
    """
    data = as_matrix(data, "data")
    N = data.shape[1]
    r = check_positive_int(n_components, "n_components")
    rng = check_random_state(random_state)
    if projection is not None:
        P = _check_orthonormal(projection, N)
        if n_pca is not None and n_pca != P.shape[0]:
            raise ValueError(f"n_pca must be None or the rows of projection ({P.shape[0]}), got {n_pca!r}")
    else:
        s = r // 2 if n_pca is None else check_positive_int(n_pca, "n_pca", minimum=0)
        if s > min(data.shape):
            raise ValueError(f"the PCA part needs s = {s} <= min(n, N) = {min(data.shape)} components "
                             f"(n_components = {r}, n_pca = {n_pca!r})")
        if pca_solver not in SVD_SOLVERS:
            raise ValueError(f"pca_solver must be one of {SVD_SOLVERS}, got {pca_solver!r}")
        P = np.zeros((0, N)) if s == 0 else principal_directions(
            data, s, center=center, svd_solver=pca_solver, n_oversamples=n_oversamples, n_iter=n_iter,
            random_state=rng)
    s = P.shape[0]
    if s > r:
        raise ValueError(f"n_components (r = {r}) must be at least the rows of P (s = {s})")
    k = r - s
    S = rademacher_projection(k, N, random_state=rng) if k else np.zeros((0, N))
    Psi = np.vstack([P, S - (S @ P.T) @ P])                               # [P; S(I − PᵀP)]
    return Psi, P, S


class ADAGIO(LinearEmbedding):
    """ADAGIO (Błasiok & Tsourakakis, Algorithm 1): top principal directions padded with JL rows on their complement.

    Parameters
    ----------
    n_components : int, optional
        r, the target dimension; 2 when neither it nor ``delta`` is given.
    delta : float, optional
        A target isometry constant δ ∈ (0, 1) instead of ``n_components``: M is the smallest
        dimension whose map has RIP constant ≤ δ on the training secants (the search of
        :func:`~sdpembed.linear.selection.select_dimension`; ``selection_`` records it).
    n_pca : int, optional
        s, principal components; default ⌊r/2⌋, leaving ⌈r/2⌉ JL rows (Sec. 4.1).
    projection : ndarray of shape (s, N), optional
        A given orthonormal P instead of PCA (Theorem 2 holds for any P).
    center : bool, default=True
        Centre the points before PCA (``fit_secants`` never centres).
    pca_solver : {"exact", "randomized"}, default="exact"
        Adagio-Exact-PCA or Adagio-Randomized-PCA (Table 3).
    n_oversamples, n_iter : int
        Settings of the randomized PCA.
    random_state : None, int or numpy Generator
        Seed of S (and of the randomized PCA).

    Attributes
    ----------
    components_ : ndarray of shape (r, N)
        Ψ = [P; S(I − PᵀP)].
    pca_components_ : ndarray of shape (s, N)
        P.
    jl_matrix_ : ndarray of shape (k, N)
        S, entries ±1/√k.
    n_pca_, n_jl_ : int
        s and k = r − s.
    n_components_, n_features_in_ : int
    """

    def __init__(
        self,
        n_components: int | None = None,
        *,
        delta: float | None = None,
        n_pca: int | None = None,
        projection: np.ndarray | None = None,
        center: bool = True,
        pca_solver: str = "exact",
        n_oversamples: int = 10,
        n_iter: int = 4,
        random_state=0,
    ) -> None:
        self.n_components = n_components
        self.delta = delta
        self.n_pca = n_pca
        self.projection = projection
        self.center = center
        self.pca_solver = pca_solver
        self.n_oversamples = n_oversamples
        self.n_iter = n_iter
        self.random_state = random_state

    def _build(self, data: np.ndarray, center: bool) -> np.ndarray:
        Psi, P, S = adagio_projection(
            data, self._n_components(), n_pca=self.n_pca, projection=self.projection, center=center,
            pca_solver=self.pca_solver, n_oversamples=self.n_oversamples, n_iter=self.n_iter,
            random_state=self.random_state,
        )
        self.pca_components_, self.jl_matrix_ = P, S
        self.n_pca_, self.n_jl_ = P.shape[0], S.shape[0]
        return Psi

    def _learn_map(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        return self._build(X, bool(self.center))

    def _learn_map_secants(self, V: np.ndarray) -> np.ndarray:
        return self._build(V, False)

    def _max_n_components(self, n_samples: int, n_features: int, y: np.ndarray | None = None) -> int:
        if self.projection is None and self.n_pca is None:      # ⌊r/2⌋ ≤ min(n, N)
            return min(n_features, 2 * min(n_samples, n_features) + 1)
        return int(n_features)
