"""Kernel LMNN (thesis Sec. 2.1.8, "Kernel Version", (2.18)): LMNN in the feature space of a kernel.

The thesis (after Torresani and Lee) restricts the metric to the span of the features,
M = Σ_{lm} A_lm Φ(x_l)Φ(x_m)ᵀ with A ⪰ 0, so that every distance (2.10) is a function of the
kernel matrix K_ij = Φ(x_i)ᵀΦ(x_j) (2.18) alone:

    D_M(x, x') = (k_x − k_x')ᵀ A (k_x − k_x'),      k_x = (K(x, x_1), …, K(x, x_n)).

The restriction loses nothing: (2.11) sees M only through the differences of the training
features, so projecting any M onto their span keeps its loss. Here the SDP is solved in
coordinates of that span. The kernel matrix is centred (:class:`~sklearn.preprocessing.KernelCenterer`;
distances do not change under a shift of the features, and centring removes the mean, which
no difference sees), K_c = V Λ Vᵀ is truncated to its eigenvalues above ``eigen_rtol``·λ_max,
and F = V Λ^½ (n × r) are isometric coordinates of the centred features (F Fᵀ = K_c): kernel
LMNN is the convex LMNN (2.11) on the rows of F, solved and certified by :class:`~sdpembed.models.lmnn.LMNN`,
with an r × r metric B instead of the n × n matrix A. A new point's coordinates are
f_x = Λ^{-½} Vᵀ k_x (its centred kernel row), exact for a feature inside the span and its
projection otherwise, and A = V Λ^{-½} B Λ^{-½} Vᵀ (``kernel_metric_``) gives D_M by the formula above.
With the linear kernel this is LMNN on the (centred, rotated) inputs; with an explicit feature
map it is LMNN on the features — what the tests check.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the kernel version of LMNN, Sec. 2.1.8, (2.18), with the
   loss (2.11).
.. [2] L. Torresani and K.-C. Lee, "Large margin component analysis", NIPS 19, 2007 (M in the span
   of the features, distances through the kernel).
.. [3] B. Schölkopf, A. Smola and K.-R. Müller, "Nonlinear component analysis as a kernel
   eigenvalue problem", Neural Computation 10, 1998 (centring, the empirical kernel map).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.preprocessing import KernelCenterer
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from .common import uses_rule
from .lmnn import LMNN

__all__ = ["KernelLMNN"]


class KernelLMNN(ClassNamePrefixFeaturesOutMixin, ClassifierMixin, TransformerMixin, BaseEstimator):
    """LMNN in a kernel's feature space (Sec. 2.1.8, (2.18)): the metric M = Σ A_lm Φ(x_l)Φ(x_m)ᵀ.

    Parameters
    ----------
    k : int, default=3
        Target neighbours per point and neighbours of the kNN rule.
    mu : float, default=0.5
        Pull/push trade-off μ of (2.8).
    kernel : str or callable, default="rbf"
        Any kernel of :func:`sklearn.metrics.pairwise.pairwise_kernels` ("linear", "poly", "rbf",
        …, or a callable), or "precomputed": ``fit`` then takes the (n, n) kernel matrix of the
        training points and ``transform``/``predict`` the (m, n) kernel between new and training points.
    gamma, degree, coef0 : optional
        The kernel's parameters (scikit-learn's meaning; ignored by kernels that do not take them).
    kernel_params : dict, optional
        Further keyword arguments of a callable kernel.
    eigen_rtol : float, default=1e-10
        Eigenvalues of the centred kernel matrix below this fraction of the largest are dropped
        (the span of the training features).
    n_basis : int, optional
        Keep at most this many leading eigen-directions (kernel principal components). The SDP
        has r × r unknowns for r kept directions — up to n × n, the O(n²) of the thesis, beyond
        what the interior point handles for a few hundred points of a full-rank kernel — so a
        cap trades exactness (the metric then lives in the span of the kept components) for size.
        All directions above ``eigen_rtol`` by default: exact kernel LMNN.
    method, n_components, max_iter, tol, verbose, rule
        As for :class:`~sdpembed.models.lmnn.LMNN`, which solves (2.11) in the span's coordinates
        (``n_components`` counts output dimensions; ``method="rectangular"`` learns a
        rectangular map there).

    Attributes
    ----------
    lmnn_ : LMNN
        The LMNN fitted on the coordinates F of the training features.
    kernel_metric_ : ndarray of shape (n_samples, n_samples)
        A, with D_M(x, x') = (k_x − k_x')ᵀ A (k_x − k_x') on the centred kernel rows.
    components_ : ndarray of shape (n_components_, n_samples)
        The map from a centred kernel row k_x to the learned coordinates: ``transform`` is
        k_x ↦ components_ k_x, and A = components_ᵀ components_.
    n_components_ : int
    classes_, targets_, result_, n_iter_, n_features_in_
    """

    def __init__(
        self,
        k: int = 3,
        mu: float = 0.5,
        *,
        kernel="rbf",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        kernel_params: dict | None = None,
        eigen_rtol: float = 1e-10,
        n_basis: int | None = None,
        method: str | None = None,
        n_components: int | None = None,
        max_iter: int | None = None,
        tol: float | None = None,
        verbose: bool | int = False,
        rule: str = "knn",
    ) -> None:
        self.k = k
        self.mu = mu
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.eigen_rtol = eigen_rtol
        self.n_basis = n_basis
        self.method = method
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.rule = rule

    def _kernel(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        if self.kernel == "precomputed":
            return X
        params = dict(self.kernel_params or {})
        if not callable(self.kernel):
            params.update(gamma=self.gamma, degree=self.degree, coef0=self.coef0)
        return pairwise_kernels(X, Y, metric=self.kernel, filter_params=True, **params)

    def fit(self, X, y) -> KernelLMNN:
        """Learn the metric from the labelled rows of ``X`` (or their kernel matrix, "precomputed")."""
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        if (isinstance(self.eigen_rtol, bool) or not isinstance(self.eigen_rtol, numbers.Real)
                or not 0.0 <= self.eigen_rtol < 1.0):
            raise ValueError(f"eigen_rtol must be a real number in [0, 1), got {self.eigen_rtol!r}")
        n_basis = self.n_basis
        if n_basis is not None and (isinstance(n_basis, bool) or not isinstance(n_basis, numbers.Integral)
                                    or n_basis < 1):
            raise ValueError(f"n_basis must be a positive integer or None, got {self.n_basis!r}")
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"with kernel='precomputed' X must be the square kernel matrix, got shape {X.shape}")
        K = self._kernel(X)
        if not np.all(np.isfinite(K)):
            raise ValueError("the kernel matrix is not finite")
        self._centerer = KernelCenterer().fit(K)
        Kc = self._centerer.transform(K)
        w, V = np.linalg.eigh(0.5 * (Kc + Kc.T))
        keep = w > self.eigen_rtol * max(float(w[-1]), 0.0)
        if not np.any(keep):
            raise ValueError("the centred kernel matrix has no positive eigenvalue: every feature is the same")
        w, V = w[keep][::-1][:self.n_basis], V[:, keep][:, ::-1][:, :self.n_basis]
        F = V * np.sqrt(w)                                    # coordinates of the centred features, F Fᵀ = K_c
        self._to_coordinates = V / np.sqrt(w)                 # f_x = Λ^{-½} Vᵀ k_x
        self.lmnn_ = LMNN(k=self.k, mu=self.mu, method=self.method, n_components=self.n_components,
                          max_iter=self.max_iter, tol=self.tol, verbose=self.verbose, rule=self.rule).fit(F, y)
        self._X_fit = X
        self.components_ = self.lmnn_.components_ @ self._to_coordinates.T
        self.kernel_metric_ = self.components_.T @ self.components_
        self.n_components_ = self.components_.shape[0]
        for name in ("classes_", "targets_", "result_", "results_", "n_iter_"):
            setattr(self, name, getattr(self.lmnn_, name))
        return self

    def _coordinates(self, X) -> np.ndarray:
        """f_x = Λ^{-½} Vᵀ k_x of the rows of ``X`` (their centred kernel rows against the training points)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Kx = self._kernel(X, None if self.kernel == "precomputed" else self._X_fit)
        if Kx.shape[1] != self._X_fit.shape[0]:
            raise ValueError(f"with kernel='precomputed' X must have one column per training point "
                             f"({self._X_fit.shape[0]}), got shape {Kx.shape}")
        return self._centerer.transform(Kx) @ self._to_coordinates

    @property
    def _n_features_out(self) -> int:
        return self.components_.shape[0]

    def transform(self, X) -> np.ndarray:
        """The learned coordinates of the rows of ``X``, (n, n_components_): Euclidean distances there
        are D_M in feature space."""
        F = self._coordinates(X)
        return self.lmnn_.transform(F)

    def predict(self, X) -> np.ndarray:
        """The labels by ``rule`` (kNN under D_M, or the energy rule (2.12)) in feature space."""
        F = self._coordinates(X)
        return self.lmnn_.predict(F)

    @available_if(uses_rule("knn"))
    def predict_proba(self, X) -> np.ndarray:
        """Fraction of the k nearest training points (under D_M) in each class."""
        F = self._coordinates(X)
        return self.lmnn_.predict_proba(F)

    @available_if(uses_rule("energy"))
    def decision_function(self, X) -> np.ndarray:
        """Negated energies (2.12) per class (see :meth:`sdpembed.models.lmnn.LMNN.decision_function`)."""
        F = self._coordinates(X)
        return self.lmnn_.decision_function(F)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
