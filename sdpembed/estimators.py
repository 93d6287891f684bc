"""scikit-learn compatible estimators over the solvers.

:class:`NuMax` learns the near-isometric linear embedding of NuMax: it builds the secant set
(1) of the training points, solves the SDP (4) (ADMM, Algorithm 1, by default) and keeps
Ψ = Λ_M^½ U_Mᵀ (5) as ``components_``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validate import check_delta, check_positive_int
from .instances import NuMaxInstance
from .linear.factor import DEFAULT_TAIL_TOL, embedding_from_psd
from .registry import solve

__all__ = ["NuMax"]


class NuMax(TransformerMixin, BaseEstimator):
    """Near-isometric linear embedding by nuclear-norm minimisation (NuMax (4)–(5)).

    Parameters
    ----------
    delta : float, default=0.1
        Isometry constant δ ∈ (0, 1): every training secant keeps its squared norm within
        a factor 1 ± δ.
    n_secants : int, optional
        Use a seeded random sample of this many pairs instead of all n(n−1)/2.
    method : str, default="admm"
        ``"admm"`` (Algorithm 1) or ``"cvxpy"`` (the ground truth).
    tail_tol : float, default=1e-6
        Rank threshold of Ψ (see :mod:`sdpembed.linear.factor`).
    max_iter : int, default=20000
        Iteration limit of the hand-written solver.
    random_state : None, int or Generator
        Seed of the secant sample.
    verbose : bool or int, default=False
        Solver progress every ``verbose`` iterations.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features_in_)
        Ψ; ``transform(X) = X Ψᵀ``.
    n_components_ : int
        The embedding dimension M = rank of P.
    P_ : ndarray of shape (n_features_in_, n_features_in_)
        The solution of (4).
    result_ : SolveResult
        Status, objective, certified gap and convergence history of the solve.
    n_features_in_ : int

    Examples
    --------
    >>> from sdpembed.datasets import translating_squares
    >>> X = translating_squares(7, 3)
    >>> numax = NuMax(delta=0.2).fit(X)
    >>> numax.transform(X).shape[1] == numax.n_components_
    True
    """

    def __init__(
        self,
        delta: float = 0.1,
        *,
        n_secants: int | None = None,
        method: str = "admm",
        tail_tol: float = DEFAULT_TAIL_TOL,
        max_iter: int = 20000,
        random_state=None,
        verbose: bool | int = False,
    ) -> None:
        self.delta = delta
        self.n_secants = n_secants
        self.method = method
        self.tail_tol = tail_tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y=None) -> NuMax:
        """Learn Ψ from the secants of the rows of ``X`` (``y`` is ignored)."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        check_delta(self.delta)
        if self.n_secants is not None:
            check_positive_int(self.n_secants, "n_secants")
        instance = NuMaxInstance.from_points(
            X, self.delta, n_secants=self.n_secants, random_state=self.random_state
        )
        options = {} if self.method == "cvxpy" else {"max_iter": self.max_iter, "verbose": self.verbose}
        result = solve(instance, self.method, **options)
        if result.status != "optimal":
            warnings.warn(
                f"NuMax did not converge ({result.status}: {result.message})", ConvergenceWarning, stacklevel=2
            )
        self.result_ = result
        self.P_ = result.solution
        self.components_ = embedding_from_psd(result.solution, tail_tol=self.tail_tol)
        self.n_components_ = self.components_.shape[0]
        return self

    def transform(self, X) -> np.ndarray:
        """Embed the rows of ``X``: X Ψᵀ, shape (n, n_components_)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.components_.T
