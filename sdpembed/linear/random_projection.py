"""Random projections: the data-independent baselines.

* Gaussian: i.i.d. N(0, 1/M) entries, so that E‖Ψv‖² = ‖v‖² (NuMax Lemma 1, Johnson–Lindenstrauss);
* Rademacher: i.i.d. entries ±1/√M with equal probability (ADAGIO Lemma 1, after Achlioptas
  2003, "database-friendly" random projections), also E‖Ψv‖² = ‖v‖².

:func:`jl_dimension` is the explicit number of rows of Achlioptas' Theorem 1.1 that ADAGIO's
Lemma 1 states only up to a constant, k = Ω(δ⁻² log(|T|/γ)).

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: Lemma 1.
.. [2] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", Proceedings of the IEEE International Conference on Data Mining (ICDM), 2016.
   Implemented here: Lemma 1.
.. [3] D. Achlioptas, "Database-friendly random projections: Johnson–Lindenstrauss with binary
   coins", Journal of Computer and System Sciences 66(4), 671–687, 2003. Implemented here: Theorem
   1.1.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validate import check_positive_int, check_random_state
from .base import LinearEmbedding

__all__ = [
    "gaussian_projection",
    "rademacher_projection",
    "jl_dimension",
    "GaussianProjection",
    "RademacherProjection",
]


def gaussian_projection(n_components: int, dim: int, *, random_state=None) -> np.ndarray:
    """Ψ (M, N) with i.i.d. N(0, 1/M) entries, so that E‖Ψv‖² = ‖v‖² (NuMax Lemma 1)."""
    M = check_positive_int(n_components, "n_components")
    N = check_positive_int(dim, "dim")
    return check_random_state(random_state).standard_normal((M, N)) / np.sqrt(M)


def rademacher_projection(n_components: int, dim: int, *, random_state=None) -> np.ndarray:
    """Ψ (M, N) with i.i.d. entries ±1/√M, each sign with probability ½ (ADAGIO Lemma 1)."""
    M = check_positive_int(n_components, "n_components")
    N = check_positive_int(dim, "dim")
    signs = check_random_state(random_state).integers(0, 2, size=(M, N))
    return (2.0 * signs - 1.0) / np.sqrt(M)


def jl_dimension(n_points: int, epsilon: float, *, beta: float = 1.0) -> int:
    """Rows k of a ±1/√k matrix that keep all squared distances of n points within 1 ± ε.

    Achlioptas (2003), Theorem 1.1 — the constant behind ADAGIO Lemma 1:
    k ≥ k₀ = (4 + 2β) / (ε²/2 − ε³/3) · ln n gives, with probability at least 1 − n^(−β),
    (1 − ε)‖u − v‖² ≤ ‖Ψu − Ψv‖² ≤ (1 + ε)‖u − v‖² for all n points u, v.

    Parameters
    ----------
    n_points : int
        n ≥ 2.
    epsilon : float
        ε ∈ (0, 1), the distortion of squared distances.
    beta : float, default=1.0
        Failure probability exponent, β > 0.

    Returns
    -------
    int
        ⌈k₀⌉.
    """
    n = check_positive_int(n_points, "n_points", minimum=2)
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not 0.0 < float(epsilon) < 1.0:
        raise ValueError(f"epsilon must be a real number in (0, 1), got {epsilon!r}")
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not float(beta) > 0.0:
        raise ValueError(f"beta must be a positive real number, got {beta!r}")
    eps = float(epsilon)
    return int(np.ceil((4.0 + 2.0 * float(beta)) / (eps**2 / 2.0 - eps**3 / 3.0) * np.log(n)))


class _RandomProjection(LinearEmbedding):
    """A data-oblivious Ψ: only N is read from the data, so points and secants are alike."""

    _draw = staticmethod(gaussian_projection)

    def __init__(self, n_components: int | None = None, *, delta: float | None = None, random_state=0) -> None:
        self.n_components = n_components
        self.delta = delta
        self.random_state = random_state

    def _learn_map(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        return type(self)._draw(self._n_components(), X.shape[1], random_state=self.random_state)

    def _learn_map_secants(self, V: np.ndarray) -> np.ndarray:
        return self._learn_map(V, None)


class GaussianProjection(_RandomProjection):
    """Ψ with i.i.d. N(0, 1/M) entries (:func:`gaussian_projection`; NuMax Lemma 1).

    Parameters
    ----------
    n_components : int, optional
        M (any positive integer; M > N is allowed and only adds rows); 2 when neither it nor
        ``delta`` is given.
    delta : float, optional
        A target isometry constant δ ∈ (0, 1) instead of ``n_components``: M is the smallest
        dimension whose map has RIP constant ≤ δ on the training secants (the search of
        :func:`~sdpembed.linear.selection.select_dimension`; ``selection_`` records it).
    random_state : None, int or numpy Generator
    """

    _draw = staticmethod(gaussian_projection)


class RademacherProjection(_RandomProjection):
    """Ψ with i.i.d. entries ±1/√M (:func:`rademacher_projection`; ADAGIO Lemma 1).

    Parameters
    ----------
    n_components : int, optional
        M (any positive integer); 2 when neither it nor ``delta`` is given.
    delta : float, optional
        A target isometry constant δ ∈ (0, 1) instead of ``n_components``: M is the smallest
        dimension whose map has RIP constant ≤ δ on the training secants (the search of
        :func:`~sdpembed.linear.selection.select_dimension`; ``selection_`` records it).
    random_state : None, int or numpy Generator
    """

    _draw = staticmethod(rademacher_projection)
