"""Recovering a manifold-modelled signal from M linear measurements: Manifold Iterative Pursuit.

A signal x on a known manifold 𝓜 ⊂ ℝᴺ is measured as y = Φx + n with Φ of shape (M, N), M < N
(a random matrix or a learned map Ψ). Manifold Iterative Pursuit (MIP, Shah and Chandrasekaran)
is projected gradient descent on ½‖y − Φx‖² over 𝓜::

    x₀ = 0,    x_{k+1} = P_𝓜(x_k + η Φᵀ(y − Φx_k)),

where P_𝓜 maps a point to its nearest point of 𝓜. When Φ satisfies the restricted isometry
property (2) on the secants of 𝓜 with a small enough constant, the iterates converge to x up
to a multiple of the noise, with η = 1 for a Φ normalised as the paper's (E ΦᵀΦ = I for a
Gaussian map with entries N(0, 1/M); ‖Ψv‖ ≈ ‖v‖ for a NuMax map). NuMax Sec. 5.3 (Fig. 11)
uses it to compare NuMax and Gaussian measurement matrices.

A manifold known through a dense sample (the translates of an image, say) is projected by
:class:`SampledManifold`; any other projection is a callable mapping rows to rows.

References
----------
.. [1] P. Shah and V. Chandrasekaran, "Iterative projections for signal identification on
   manifolds: algorithms and recovery guarantees", Proceedings of the 49th Allerton Conference
   on Communication, Control, and Computing, 2011. Implemented here: the MIP iteration.
.. [2] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Sec. 5.3, Fig. 11 (the use made of it).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._validate import as_matrix, check_positive_int

__all__ = ["SampledManifold", "manifold_iterative_pursuit"]


class SampledManifold:
    """P_𝓜 of a manifold known by a dense sample: each row of its argument ↦ the nearest sample.

    Parameters
    ----------
    samples : ndarray of shape (n_samples, N)
        Points of the manifold, dense enough that the nearest one stands for the projection.
    """

    def __init__(self, samples: np.ndarray) -> None:
        self.samples = as_matrix(samples, "samples")
        self._sq = np.einsum("ij,ij->i", self.samples, self.samples)

    def nearest(self, Z: np.ndarray) -> np.ndarray:
        """Row index of the sample nearest to each row of Z (n, N)."""
        # ‖z − m‖² = ‖z‖² − 2 z·m + ‖m‖², and ‖z‖² does not move the argmin
        return np.argmin(self._sq[None, :] - 2.0 * (Z @ self.samples.T), axis=1)

    def __call__(self, Z: np.ndarray) -> np.ndarray:
        """The nearest sample to each row of Z (n, N), shape (n, N)."""
        return self.samples[self.nearest(Z)]


def manifold_iterative_pursuit(
    Phi: np.ndarray,
    y: np.ndarray,
    project: Callable[[np.ndarray], np.ndarray],
    *,
    step: float = 1.0,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> tuple[np.ndarray, int]:
    """Recover signals on a manifold from their measurements y = Φx + n by MIP.

    Parameters
    ----------
    Phi : ndarray of shape (M, N)
        The measurement matrix.
    y : ndarray of shape (n, M)
        One measurement vector per row (the signals are recovered together, vectorised).
    project : callable
        P_𝓜, mapping an (n, N) array to the nearest points of the manifold, row by row (e.g.
        :class:`SampledManifold`).
    step : float
        The gradient step η (1 for a map normalised as RIP (2) asks).
    max_iter : int
        Largest number of iterations.
    tol : float
        Stop when no row moved by more than ``tol`` times max(1, its norm) in an iteration (on a
        sampled manifold: when no row changed sample, a fixed point).

    Returns
    -------
    X : ndarray of shape (n, N)
        The recovered signals, points of the manifold.
    n_iter : int
        Iterations run.
    """
    Phi = as_matrix(Phi, "Phi")
    y = as_matrix(y, "y", n_cols=Phi.shape[0])
    max_iter = check_positive_int(max_iter, "max_iter")
    if not float(step) > 0.0:
        raise ValueError(f"step must be positive, got {step}")
    X, n_iter, settled = np.zeros((len(y), Phi.shape[1])), 0, False
    while n_iter < max_iter and not settled:
        new = project(X + float(step) * ((y - X @ Phi.T) @ Phi))
        settled = bool(np.all(np.linalg.norm(new - X, axis=1) <= tol * np.maximum(1.0, np.linalg.norm(new, axis=1))))
        X, n_iter = new, n_iter + 1
    return X, n_iter
