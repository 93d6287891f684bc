"""The one interface of a linear embedding: learn Ψ (M, N) from data rows, embed by X Ψᵀ.

Every linear method of sdpembed — PCA, random projections, ADAGIO, the sparse-linear-model
projection, FroMax, NILE-Pro and the NuMax estimators — is a :class:`LinearEmbedding`, so a
study puts them side by side with one call each::

    for model in (PCA(n_components=20), ADAGIO(n_components=20), NuMax(delta=0.1)):
        Y = model.fit(X).transform(X)          # model.components_ is Ψ, shape (M, N)

A subclass implements :meth:`LinearEmbedding._learn_map`; the base validates the input,
stores ``components_`` and ``n_components_`` and provides ``transform``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["LinearEmbedding"]


class LinearEmbedding(TransformerMixin, BaseEstimator):
    """Base class of the linear embeddings Ψ (M, N); ``transform(X) = X Ψᵀ``.

    Attributes (after ``fit``)
    --------------------------
    components_ : ndarray of shape (n_components_, n_features_in_)
        The linear map Ψ, one row per output dimension.
    n_components_ : int
        M, the embedding dimension.
    n_features_in_ : int
        N, the input dimension.
    """

    def _learn_map(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        """Return Ψ (M, N) learned from the validated rows ``X`` (and labels ``y``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _learn_map")

    def fit(self, X, y=None) -> LinearEmbedding:
        """Learn Ψ from the rows of ``X`` (labels ``y`` where the method uses them)."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        Psi = np.asarray(self._learn_map(X, None if y is None else np.asarray(y)), dtype=np.float64)
        if Psi.ndim != 2 or Psi.shape[1] != X.shape[1]:
            raise RuntimeError(f"{type(self).__name__} produced a map of shape {Psi.shape}, expected (M, {X.shape[1]})")
        self.components_ = Psi
        self.n_components_ = Psi.shape[0]
        return self

    def transform(self, X) -> np.ndarray:
        """Embed the rows of ``X``: X Ψᵀ, shape (n, n_components_)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.components_.T
