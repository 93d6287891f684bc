"""The one interface of a linear embedding: learn Ψ (M, N) from data rows, embed by X Ψᵀ.

Every linear method of sdpembed — PCA, random projections, LDA, ADAGIO, the sparse-linear-model
projection, FroMax, NILE-Pro and the NuMax estimators — is a :class:`LinearEmbedding`, so a
study puts them side by side with one call each::

    for model in (PCA(n_components=20), ADAGIO(n_components=20), NuMax(delta=0.1)):
        Y = model.fit(X).transform(X)          # model.components_ is Ψ, shape (M, N)

A subclass implements :meth:`LinearEmbedding._learn_map`; the base validates the input,
stores ``components_`` and ``n_components_`` and provides ``transform``.

Two optional hooks extend the contract without changing it:

* :meth:`LinearEmbedding._learn_map_secants` — learn Ψ from a set of secants (NuMax (1))
  instead of points, reached through :meth:`LinearEmbedding.fit_secants`. Methods whose
  input is inherently a set of points (LDA needs labels, the sparse linear model a
  generative model of signals) keep the default, which refuses with a ValueError.
* :meth:`LinearEmbedding._max_n_components` — the largest M the method can produce for
  given data; the dimension search of :mod:`sdpembed.linear.methods` never asks for more.
* :meth:`LinearEmbedding._search_template` — an equivalent estimator whose data-dependent
  parts that do not depend on M are fixed (the learned dictionary of the sparse linear model),
  so that a search over M learns them once.

**Two targets, one meaning.** Every map takes ``n_components`` (M) and ``delta`` (δ), with
the meaning of :func:`sdpembed.linear.embed`'s ``dim`` and ``delta``. The targets a method meets
itself are its ``_native_targets`` (M for PCA and the others, δ for NuMax and NuMax-Class, both
for FroMax and NILE-Pro); the other one is reached by a search over refits
(:mod:`sdpembed.linear.selection`): ``PCA(delta=0.2)`` is the smallest M whose map has RIP
constant ≤ 0.2 on the training secants, ``NuMax(n_components=5)`` the smallest δ whose solution
has rank ≤ 5, and ``selection_`` records the search. A searched target and the native one
cannot both be given; with neither, the method's default applies (M = 2, or δ = 0.1).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from .selection import select_delta, select_dimension

__all__ = ["LinearEmbedding", "TARGETS"]

#: The two targets of a linear map: its dimension M and its isometry constant δ.
TARGETS = ("n_components", "delta")


class LinearEmbedding(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base class of the linear embeddings Ψ (M, N); ``transform(X) = X Ψᵀ``.

    Attributes (after ``fit`` or ``fit_secants``)
    ---------------------------------------------
    components_ : ndarray of shape (n_components_, n_features_in_)
        The linear map Ψ, one row per output dimension.
    n_components_ : int
        M, the embedding dimension.
    n_features_in_ : int
        N, the input dimension.

    The output columns are named ``<class name>0``, ``<class name>1``, … (scikit-learn's
    ``get_feature_names_out``), so ``set_output(transform="pandas")`` gives a DataFrame.
    """

    #: The targets the method meets itself (the other is searched for, see the module docstring).
    _native_targets: tuple[str, ...] = ("n_components",)

    #: M when neither target is given (None: the method's own choice, e.g. LDA's C − 1).
    _default_n_components: int | None = 2

    def _n_components(self) -> int | None:
        """The dimension to fit at: ``n_components``, or the default when it is None."""
        return self._default_n_components if self.n_components is None else self.n_components

    def _searched_target(self) -> tuple[str, object] | None:
        """(name, value) of a target given that the method reaches by a search, or None."""
        params = self.get_params(deep=False)
        given = [name for name in TARGETS if params.get(name) is not None]
        searched = [name for name in given if name not in self._native_targets]
        if not searched:
            return None
        if len(given) > 1:
            raise ValueError(f"{type(self).__name__} takes n_components or delta, not both "
                             f"(got n_components={params['n_components']!r}, delta={params['delta']!r})")
        return searched[0], params[searched[0]]

    def _fit_searched(self, target: tuple[str, object], data: np.ndarray, y: np.ndarray | None,
                      secants: bool) -> None:
        """Fit by the search for ``target`` and take over the fitted state of the chosen refit."""
        name, value = target
        template = clone(self).set_params(**{name: None})
        if name == "delta":
            model = select_dimension(template, data, value, y=y, secants=secants)
        else:
            model = select_delta(template, data, value, y=y, secants=secants)
        for key, fitted in vars(model).items():
            if key.endswith("_") and not key.startswith("_") and key not in ("n_features_in_", "feature_names_in_"):
                setattr(self, key, fitted)

    @property
    def _n_features_out(self) -> int:
        # read by get_feature_names_out; an AttributeError before fit marks the map unfitted
        return self.components_.shape[0]

    def _learn_map(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        """Return Ψ (M, N) learned from the validated rows ``X`` (and labels ``y``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _learn_map")

    def _learn_map_secants(self, V: np.ndarray) -> np.ndarray:
        """Return Ψ (M, N) learned from the validated nonzero secants ``V`` (rows).

        The default refuses: the method learns from points, not from secants.
        """
        raise ValueError(
            f"{type(self).__name__} learns from data points (fit(X)), not from a set of secants; "
            "fit_secants is not available for it"
        )

    def _max_n_components(self, n_samples: int, n_features: int, y: np.ndarray | None = None) -> int:
        """Largest M this method can produce from ``n_samples`` rows in R^``n_features``.

        The default is N (no reduction beyond the input dimension); subclasses with a
        smaller limit (PCA: min(n, N); LDA: classes − 1) override it.
        """
        return int(n_features)

    def _search_template(self, X: np.ndarray, y: np.ndarray | None) -> LinearEmbedding:
        """The estimator to clone at every M of a dimension search (default: ``self``)."""
        return self

    def _set_map(self, Psi: np.ndarray, n_features: int) -> None:
        Psi = np.asarray(Psi, dtype=np.float64)
        if Psi.ndim != 2 or Psi.shape[1] != n_features:
            raise RuntimeError(f"{type(self).__name__} produced a map of shape {Psi.shape}, expected (M, {n_features})")
        self.components_ = Psi
        self.n_components_ = Psi.shape[0]

    def fit(self, X, y=None) -> LinearEmbedding:
        """Learn Ψ from the rows of ``X`` (labels ``y`` where the method uses them)."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        labels = None if y is None else np.asarray(y)
        target = self._searched_target()
        if target is not None:
            self._fit_searched(target, X, labels, secants=False)
        else:
            self._set_map(self._learn_map(X, labels), X.shape[1])
        return self

    def fit_secants(self, V) -> LinearEmbedding:
        """Learn Ψ from a set of secants, the rows of ``V`` (NuMax (1); need not be unit).

        Zero rows (secants of duplicate points) are dropped with a ``UserWarning``; a
        ValueError is raised if none remain or if the method cannot learn from secants.
        """
        V = validate_data(self, V, dtype=np.float64, ensure_min_samples=1)
        nonzero = np.any(V != 0.0, axis=1)
        if not np.all(nonzero):
            warnings.warn(f"{int((~nonzero).sum())} zero secant(s) were dropped", UserWarning, stacklevel=2)
            V = V[nonzero]
        if V.shape[0] == 0:
            raise ValueError("V must contain at least one nonzero secant")
        target = self._searched_target()
        if target is not None:
            self._fit_searched(target, V, None, secants=True)
        else:
            self._set_map(self._learn_map_secants(V), V.shape[1])
        return self

    def transform(self, X) -> np.ndarray:
        """Embed the rows of ``X``: X Ψᵀ, shape (n, n_components_)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.components_.T
