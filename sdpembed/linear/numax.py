"""The NuMax linear maps Ψ as scikit-learn estimators over the solvers.

:class:`NuMax` learns the near-isometric linear embedding of NuMax: it takes the secants (1)
of the training points, solves the SDP (4) (column generation over all pairs, or the ADMM on a
sample) and keeps Ψ = Λ_M^½ U_Mᵀ (5) as ``components_``. :class:`NuMaxClass` does the same
for the class-specific SDP (7) from labelled points.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the secants (1), the SDPs (4) and (7)/(15), the embedding
   (5), Algorithms 1–3.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from .._validate import check_delta, check_positive_int
from ..problems import NuMaxClassInstance, NuMaxInstance
from ..registry import get_problem, solve
from .base import LinearEmbedding
from .factor import DEFAULT_TAIL_TOL, embedding_from_psd

__all__ = ["NuMax", "NuMaxClass", "DEFAULT_DELTA"]

#: δ when neither ``delta`` nor ``n_components`` is given.
DEFAULT_DELTA = 0.1


class _PSDEmbedding(LinearEmbedding):
    """Shared fit tail of the linear embeddings whose solution is a PSD matrix P = ΨᵀΨ."""

    _native_targets = ("delta",)

    def _delta(self) -> float:
        """The δ to solve at: ``delta``, or :data:`DEFAULT_DELTA` when it is None."""
        return check_delta(DEFAULT_DELTA if self.delta is None else self.delta)

    def _fit_searched_points(self, X: np.ndarray, y: np.ndarray | None) -> bool:
        """Fit by the δ-search when ``n_components`` is given; False when δ is to be solved at."""
        target = self._searched_target()
        if target is None:
            return False
        self._fit_searched(target, X, y, secants=False)
        return True

    def _fit_instance(self, instance) -> None:
        method = self.method or get_problem(instance.problem).default_method(instance)
        options: dict = {"verbose": self.verbose} if self.verbose else {}
        if method in ("admm", "cg"):
            options["max_iter"] = self.max_iter               # ADMM iterations, for either method
        if method == "cg":
            options["random_state"] = self.random_state
            if self.scan_backend is not None:
                options["scan_backend"] = self.scan_backend
        result = solve(instance, method, **options)
        if result.status != "optimal":
            warnings.warn(
                f"{type(self).__name__} did not converge ({result.status}: {result.message})",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.result_ = result
        self.n_iter_ = int(result.iterations)
        self.P_ = result.solution
        self.components_ = embedding_from_psd(result.solution, tail_tol=self.tail_tol)
        self.n_components_ = self.components_.shape[0]


class NuMax(_PSDEmbedding):
    """Near-isometric linear embedding by nuclear-norm minimisation (NuMax (4)–(5)).

    Parameters
    ----------
    delta : float, optional
        Isometry constant δ ∈ (0, 1): every training secant keeps its squared norm within
        a factor 1 ± δ; 0.1 when neither it nor ``n_components`` is given.
    n_components : int, optional
        A target dimension M instead of ``delta``: δ is the smallest (to 0.01) whose solution
        has rank ≤ M (the bisection of :func:`~sdpembed.linear.selection.select_delta`;
        ``selection_`` records it), so ``n_components_`` may be below M.
    n_secants : int, optional
        Use a seeded random sample of this many pairs (solved by the ADMM) instead of all
        n(n−1)/2 pairs (solved by column generation, Algorithm 2).
    method : str, optional
        ``"admm"`` (Algorithm 1), ``"cg"`` (Algorithm 2, all pairs) or ``"cvxpy"`` (the ground
        truth); by default column generation for all pairs and the ADMM for a sample.
    tail_tol : float, default=1e-6
        Rank threshold of Ψ (see :mod:`sdpembed.linear.factor`).
    max_iter : int, default=20000
        Iteration limit of the ADMM.
    random_state : None, int or Generator
        Seed of the secant sample (and of column generation's initial working set).
    verbose : bool or int, default=False
        Solver progress.
    scan_backend : ScanBackend, "local" or None, default=None
        Where column generation scans all pairs (:mod:`sdpembed.solvers.numax.scan_backend`: this
        process by default, or a :class:`~sdpembed.solvers.numax.scan_backend.DaskScan` of a Dask
        cluster); unused by the ADMM on a sample. The estimator holds the backend as given: close a
        Dask backend after the fit.

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
    n_iter_ : int
        Iterations of the solver (ADMM iterations, over all rounds of column generation).
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
        delta: float | None = None,
        *,
        n_components: int | None = None,
        n_secants: int | None = None,
        method: str | None = None,
        tail_tol: float = DEFAULT_TAIL_TOL,
        max_iter: int = 20000,
        random_state=0,
        verbose: bool | int = False,
        scan_backend=None,
    ) -> None:
        self.delta = delta
        self.n_components = n_components
        self.n_secants = n_secants
        self.method = method
        self.tail_tol = tail_tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.scan_backend = scan_backend

    def fit(self, X, y=None) -> NuMax:
        """Learn Ψ from the secants of the rows of ``X`` (``y`` is ignored)."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        if self._fit_searched_points(X, None):
            return self
        delta = self._delta()
        if self.n_secants is None:
            instance = NuMaxInstance(delta=delta, X=X)
        else:
            check_positive_int(self.n_secants, "n_secants")
            instance = NuMaxInstance.from_points(X, delta, n_secants=self.n_secants, random_state=self.random_state)
        self._fit_instance(instance)
        return self

    def _learn_map_secants(self, V: np.ndarray) -> np.ndarray:
        """Ψ of the SDP (4) over the given secants (normalised to unit rows, NuMax (1))."""
        self._fit_instance(NuMaxInstance(delta=self._delta(), secants=V / np.linalg.norm(V, axis=1, keepdims=True)))
        return self.components_


class NuMaxClass(_PSDEmbedding):
    """Class-specific near-isometric embedding, NuMax-Class (7)/(15), for classification.

    Inter-class secants may expand (v'Pv ≥ 1 − δ) and intra-class secants may shrink
    (u'Pu ≤ 1 + δ); the result is a lower-rank map that keeps the classes apart. Use it in a
    :class:`~sklearn.pipeline.Pipeline` before a nearest-neighbour classifier.

    Parameters
    ----------
    delta : float, optional
        As for :class:`NuMax` (0.1 when neither it nor ``n_components`` is given).
    n_components : int, optional
        A target dimension instead of ``delta``, as for :class:`NuMax`.
    n_inter, n_intra : int, optional
        Seeded samples of inter- and intra-class pairs (solved by the ADMM, Algorithm 3);
        by default all pairs (column generation).
    method : str, optional
        ``"admm"``, ``"cg"`` or ``"cvxpy"``; by default as for :class:`NuMax`.
    tail_tol, max_iter, random_state, verbose, scan_backend
        As for :class:`NuMax`.

    Attributes
    ----------
    components_, n_components_, P_, result_, n_iter_, n_features_in_
        As for :class:`NuMax`.
    classes_ : ndarray
        The labels seen in ``fit``.
    """

    def __init__(
        self,
        delta: float | None = None,
        *,
        n_components: int | None = None,
        n_inter: int | None = None,
        n_intra: int | None = None,
        method: str | None = None,
        tail_tol: float = DEFAULT_TAIL_TOL,
        max_iter: int = 20000,
        random_state=0,
        verbose: bool | int = False,
        scan_backend=None,
    ) -> None:
        self.delta = delta
        self.n_components = n_components
        self.n_inter = n_inter
        self.n_intra = n_intra
        self.method = method
        self.tail_tol = tail_tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.scan_backend = scan_backend

    def fit(self, X, y) -> NuMaxClass:
        """Learn Ψ from the inter- and intra-class secants of the labelled rows of ``X``."""
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self._fit_searched_points(X, y):
            return self
        delta = self._delta()
        if self.n_inter is None and self.n_intra is None:
            instance = NuMaxClassInstance(delta=delta, X=X, y=y)
        else:
            instance = NuMaxClassInstance.from_labelled(X, y, delta, n_inter=self.n_inter,
                                                        n_intra=self.n_intra, random_state=self.random_state)
        self._fit_instance(instance)
        return self
