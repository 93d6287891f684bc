"""scikit-learn estimators for LMNN (thesis ch. 2): :class:`LMNN` and :class:`MultiMetricLMNN`.

:class:`LMNN` learns the Mahalanobis metric M of the convex SDP (2.11) (solved to a certified
gap by :func:`sdpembed.solvers.lmnn.fast.solve_lmnn_fast` by default), keeps L with LᵀL = M
(2.9) from the eigendecomposition of M, and classifies by kNN under D_M (2.10) or by the energy
rule (2.12). It also offers repeated application with re-chosen target neighbours (Sec. 2.1.8)
and dimensionality reduction by projecting onto M's leading eigenvectors ("LMNN for
dimensionality reduction", Sec. 2.1.8). The thesis calls this equivalent to PCA after x ↦ Lx;
that holds only for whitened inputs (the mapped data's covariance is LΣLᵀ, not M), and on
sklearn digits PCA of Lx is the better reduction at small r — see ``notebooks/03_lmnn.ipynb``.

:class:`MultiMetricLMNN` learns one metric per class (or per group of a given assignment of the training
points, e.g. k-means clusters) with the SDP (2.17) (the registered problem
``lmnn_multi``, :class:`~sdpembed.problems.MultiMetricLMNNInstance`) and classifies by kNN under the
class-dependent distance D̂(x_t, x_j) = (x_t − x_j)ᵀ M^{y_j} (x_t − x_j).

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the SDP (2.11), the factor (2.9), the distance (2.10),
   energy classification (2.12), multiple metrics (2.17) with their energy rule, and LMNN for
   dimensionality reduction, Sec. 2.1.8 (both ways: M's leading eigenvectors, and a rectangular L).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..graphs import target_neighbors
from ..problems import LMNNInstance, MultiMetricLMNNInstance
from ..registry import solve
from ..results import SolveResult
from ..solvers.lmnn.rectangular import RectangularLMNNResult, solve_lmnn_rectangular
from .common import uses_rule

__all__ = ["LMNN", "MultiMetricLMNN", "factor_metric", "energy_scores", "multi_metric_energy_scores"]

#: The classification rules of :class:`LMNN`: kNN under D_M (2.10), or the energy rule (2.12).
LMNN_RULES = ("knn", "energy")

#: Methods accepted by :class:`LMNN` (keys of the "lmnn" registry entry, and "cvxpy"; "rectangular", the
#: non-convex LMNN over a rectangular L of Sec. 2.1.8, is not a solver of the SDP and not registered).
LMNN_METHODS = ("fast", "gradient", "working_set", "cvxpy", "rectangular")

#: Methods accepted by :class:`MultiMetricLMNN` (keys of the "lmnn_multi" registry entry, and "cvxpy").
MULTI_METRIC_METHODS = ("fast", "cvxpy")

#: Between repeated runs, eigen-directions of M below this fraction of its largest eigenvalue are dropped. They add
#: at most this fraction of λ_max‖v‖² to a squared distance, and the next SDP is nearly flat along them (its loss
#: hardly moves with the metric there): its restricted interior points run off along such directions, and
#: they are the solver's residue rather than learned scale (a first run certified at a gap of ~10⁻⁵ leaves
#: eigenvalues between 10⁻⁶ and 10⁻⁴ of λ_max that a cut at 10⁻⁶ kept).
REPEAT_RTOL = 1e-4

#: Largest number of (test point × training point × k) hinge entries formed at once by the energy rule.
_ENERGY_BLOCK = 1 << 22


def factor_metric(M: np.ndarray, n_components: int | None = None) -> np.ndarray:
    """L with LᵀL = M (2.9): L = Λ^½ Vᵀ from M = V Λ Vᵀ, rows by decreasing eigenvalue.

    With ``n_components = r`` only the r leading rows are kept: projecting onto M's r leading
    eigenvectors (LMNN for dimensionality reduction, Sec. 2.1.8). Negative eigenvalues
    (rounding) are clipped to 0.
    """
    w, V = np.linalg.eigh(0.5 * (M + M.T))
    w, V = np.maximum(w[::-1], 0.0), V[:, ::-1]
    L = np.sqrt(w)[:, None] * V.T
    return L if n_components is None else L[:n_components]


def _check_params(k: object, mu: object, n_repeats: object = 1) -> tuple[int, float, int]:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be an integer >= 1 (number of target neighbours), got {k!r}")
    if isinstance(mu, bool) or not isinstance(mu, numbers.Real) or not 0.0 <= float(mu) <= 1.0:
        raise ValueError(f"mu must be a real number in [0, 1] (thesis (2.8)), got {mu!r}")
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, numbers.Integral) or n_repeats < 1:
        raise ValueError(f"n_repeats must be an integer >= 1 (Sec. 2.1.8), got {n_repeats!r}")
    return int(k), float(mu), int(n_repeats)


def _solver_options(method: str, max_iter: int | None, tol: float | None, verbose) -> dict:
    options: dict = {}
    if verbose:
        options["verbose"] = verbose
    if method in ("fast", "gradient", "working_set", "rectangular"):
        if max_iter is not None:
            options["max_iter"] = max_iter
        if tol is not None:
            options["tol"] = tol
    return options


def _warn_if_unconverged(estimator: BaseEstimator, result: SolveResult | RectangularLMNNResult) -> None:
    # a rectangular run is non-convex: "converged" (a local minimum) is its success, never "optimal"
    if result.status != ("converged" if isinstance(result, RectangularLMNNResult) else "optimal"):
        warnings.warn(
            f"{type(estimator).__name__} did not converge ({result.status}: {result.message})",
            ConvergenceWarning,
            stacklevel=3,
        )


def _sq_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """‖a − b‖² for every row a of A and b of B, (m, n), through the Gram matrix (clipped at 0)."""
    return np.maximum(np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :] - 2.0 * A @ B.T,
                      0.0)


def _energies(D_hat: np.ndarray, D_as_label, d_target: np.ndarray, y_train: np.ndarray, k: int,
              mu: float) -> np.ndarray:
    """The energy (2.12) of a block of test points under every label c, (b, C).

    ``D_hat`` (b, n) is D̂(x_t, x_a), the distance under the metric of the training point's class;
    ``D_as_label(c)`` (b, n) is D̂(x_a, x_t) when x_t is labelled c (the metric of class c);
    ``d_target`` (n, k) the training points' distances to their target neighbours.
    """
    C = int(y_train.max()) + 1
    out = np.empty((D_hat.shape[0], C))
    for c in range(C):   # a loop over hypothetical labels; test points are vectorised
        same, other = y_train == c, y_train != c
        kc = min(k, int(same.sum()))
        d_tj = np.sort(D_hat[:, same], axis=1)[:, :kc]                          # targets of t under label c
        pull = d_tj.sum(axis=1)
        push_i = np.maximum(1.0 + d_tj[:, :, None] - D_hat[:, None, other], 0.0).sum(axis=(1, 2))
        push_l = np.maximum(1.0 + d_target[other][None, :, :] - D_as_label(c)[:, other][:, :, None],
                            0.0).sum(axis=(1, 2))
        out[:, c] = (1.0 - mu) * pull + mu * (push_i + push_l)
    return out


def energy_scores(
    Z_test: np.ndarray, Z_train: np.ndarray, y_train: np.ndarray, targets: np.ndarray, k: int, mu: float
) -> np.ndarray:
    """The energy (2.12) of every test point under every hypothetical label, shape (m, C).

    Points are given already mapped by L, so D_M is the squared Euclidean distance. For label
    c: (1 − μ) × the distances to the k nearest training points of class c (its target
    neighbours), plus μ × the hinges of every triplet the test point takes part in — as i
    (its targets j, training points l of another class) and as l (training points i of
    another class with their targets j ⇝ i).

    Parameters
    ----------
    Z_test : ndarray of shape (m, r)
    Z_train : ndarray of shape (n, r)
    y_train : ndarray of int, shape (n,)
        Class indices 0 … C − 1.
    targets : ndarray of int, shape (n, k)
        The training points' target neighbours.
    k : int
    mu : float
    """
    n = Z_train.shape[0]
    d_target = np.sum((Z_train[:, None, :] - Z_train[targets]) ** 2, axis=2)       # D(i, j), j ⇝ i
    out = np.empty((Z_test.shape[0], int(y_train.max()) + 1))
    rows = max(1, _ENERGY_BLOCK // (n * max(k, 1)))
    for start in range(0, Z_test.shape[0], rows):
        D = _sq_distances(Z_test[start:start + rows], Z_train)
        out[start:start + D.shape[0]] = _energies(D, lambda c, D=D: D, d_target, y_train, k, mu)
    return out


def multi_metric_energy_scores(
    X_test: np.ndarray, X_train: np.ndarray, y_train: np.ndarray, targets: np.ndarray, components: np.ndarray,
    k: int, mu: float, *, metric_groups: np.ndarray | None = None, label_metrics: np.ndarray | None = None,
) -> np.ndarray:
    """The energy rule (2.12) with one metric per class (2.17), shape (m, C).

    The energy of (2.12) with every distance replaced by the class-dependent D̂(x_a, x_b) =
    ‖L^{g_b}(x_a − x_b)‖² of (2.17) (M^c = (L^c)ᵀL^c; g_b = y_b, the class of x_b, by default), the
    loss of the SDP (2.17) that labelling x_t by c would add: (1 − μ) × D̂(x_t, x_j) over its k nearest
    training points j of class c (in D̂), plus μ × the hinges [1 + D̂(x_t, x_j) − D̂(x_t, x_l)]₊ with
    x_t as i (training l of another class, under M^{g_l}) and [1 + D̂(x_i, x_j) − D̂(x_i, x_t)]₊ with
    x_t as l (training i of another class with their targets j ⇝ i; D̂(x_i, x_t) under the metric of
    t's hypothetical class c, ``label_metrics[c]``). With all metrics equal it is :func:`energy_scores`.

    Parameters
    ----------
    X_test : ndarray of shape (m, d)
    X_train : ndarray of shape (n, d)
    y_train : ndarray of int, shape (n,)
        Class indices 0 … C − 1.
    targets : ndarray of int, shape (n, k)
        The training points' target neighbours (same class).
    components : ndarray of shape (G, r, d)
        L^g with (L^g)ᵀL^g = M^g, one per metric (per class by default).
    k : int
    mu : float
    metric_groups : ndarray of int, shape (n,), optional
        The metric of every training point (``y_train`` by default: one metric per class).
    label_metrics : ndarray of int, shape (C,), optional
        The metric of a point labelled c (c by default); defined when ``metric_groups`` is a function
        of the class.
    """
    n, G = X_train.shape[0], components.shape[0]
    groups = y_train if metric_groups is None else np.asarray(metric_groups)
    of_label = np.arange(int(y_train.max()) + 1) if label_metrics is None else np.asarray(label_metrics)
    diffs = X_train[:, None, :] - X_train[targets]                                    # x_i − x_j, j ⇝ i
    d_target = np.empty(targets.shape)
    for g in range(G):   # a loop over metrics: D(i, j) under M^{g_j}, the target's metric
        pairs = groups[targets] == g
        d_target[pairs] = np.sum((diffs[pairs] @ components[g].T) ** 2, axis=1)
    mapped = [X_train @ components[g].T for g in range(G)]
    out = np.empty((X_test.shape[0], of_label.size))
    rows = max(1, _ENERGY_BLOCK // (n * max(k, 1) * G))
    for start in range(0, X_test.shape[0], rows):
        Xb = X_test[start:start + rows]
        by_metric = np.stack([_sq_distances(Xb @ components[g].T, mapped[g]) for g in range(G)])   # (G, b, n)
        D_hat = by_metric[groups, :, np.arange(n)].T                                  # under M^{g_a}
        out[start:start + Xb.shape[0]] = _energies(D_hat, lambda c, B=by_metric: B[of_label[c]], d_target, y_train,
                                                   k, mu)
    return out


def _label_metrics(y_index: np.ndarray, groups: np.ndarray, n_classes: int) -> np.ndarray | None:
    """The metric of each class when every class lies in one group of ``groups``, else None."""
    lowest = np.full(n_classes, np.iinfo(np.int64).max)
    highest = np.full(n_classes, -1)
    np.minimum.at(lowest, y_index, groups)
    np.maximum.at(highest, y_index, groups)
    return lowest if np.array_equal(lowest, highest) else None


def _check_pairs(pairs: object, n_features: int) -> np.ndarray:
    """The pairs of metric-learn's API as float64 (n_pairs, 2, n_features), or a ValueError."""
    try:
        P = np.asarray(pairs, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"pairs must be a numeric array of shape (n_pairs, 2, {n_features}): {exc}") from None
    if P.ndim != 3 or P.shape[1:] != (2, n_features):
        raise ValueError(f"pairs must have shape (n_pairs, 2, {n_features}), got {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ValueError("pairs must be finite")
    return P


def _mahalanobis_callable(L: np.ndarray):
    """metric-learn's ``get_metric``: a function (u, v, squared=False) → ‖L(u − v)‖ (squared: D_M)."""

    def metric(u, v, squared: bool = False) -> float:
        d = L @ (np.asarray(u, dtype=np.float64).ravel() - np.asarray(v, dtype=np.float64).ravel())
        value = float(d @ d)
        return value if squared else float(np.sqrt(value))

    return metric


def _energy_decision(E: np.ndarray) -> np.ndarray:
    """``decision_function`` of the energy rule: −E, or for two classes E[:, 0] − E[:, 1] (scikit-learn's shape)."""
    return E[:, 0] - E[:, 1] if E.shape[1] == 2 else -E


class LMNN(ClassNamePrefixFeaturesOutMixin, ClassifierMixin, TransformerMixin, BaseEstimator):
    """Large margin nearest neighbours, solved as the convex SDP (2.11) with a certified gap.

    Parameters
    ----------
    k : int, default=3
        Target neighbours per point (Sec. 2.1.2) and neighbours of the kNN rule.
    mu : float, default=0.5
        Pull/push trade-off μ ∈ [0, 1] of (2.8).
    method : {"fast", "gradient", "working_set", "cvxpy", "rectangular"}, optional
        Solver: the interior-point method on an exact working set (default), Algorithm 3, the
        exact working-set CVXPY solve, or CVXPY on all triplets — all of the convex SDP (2.11) in M;
        or "rectangular": LMNN for dimensionality reduction with a rectangular L (Sec. 2.1.8), a
        local minimum of (2.11) over L of shape (n_components, d) by L-BFGS
        (:func:`~sdpembed.solvers.lmnn.rectangular.solve_lmnn_rectangular`; non-convex for
        r < d, so its ``result_`` reports ``converged``, never ``optimal``).
    n_components : int, optional
        r: keep only the r leading eigen-directions of M (dimensionality reduction); with
        ``method="rectangular"`` the rows of the learned L. All d by default.
    n_repeats : int, default=1
        Repeated application (Sec. 2.1.8): after each run the target neighbours are re-chosen
        by Euclidean distance after x ↦ L_r ⋯ L_1 x and LMNN is solved again on the mapped data;
        the learned map is the product (each L_r restricted to the eigen-directions of M_r above
        ``REPEAT_RTOL`` times its largest eigenvalue, so that the next SDP is not degenerate).
    max_iter, tol : optional
        Passed to the solver (Newton steps and interior-point tolerance for "fast", iterations
        and stall tolerance for "gradient", rounds and hinge tolerance for "working_set", L-BFGS
        iterations and relative-decrease tolerance for "rectangular").
    verbose : bool or int, default=False
        Solver progress.
    random_state : None or int
        Accepted for API compatibility; every solver here is deterministic.
    rule : {"knn", "energy"}, default="knn"
        The rule of ``predict``: kNN under D_M (2.10), with ``predict_proba`` the neighbours'
        vote fractions; or the energy rule (2.12), with ``decision_function`` the negated
        energies (the label of least energy scores highest).

    Attributes
    ----------
    metric_ : ndarray of shape (n_features_in_, n_features_in_)
        The learned M (the product metric after repeated application).
    components_ : ndarray of shape (n_components_, n_features_in_)
        L with LᵀL = M (restricted to the leading directions if ``n_components`` is set).
    n_components_ : int
    classes_ : ndarray
    targets_ : ndarray of int, shape (n_samples, k)
        The target neighbours of the last run.
    result_ : SolveResult
        Status, objective, certified gap of the last run; ``results_`` lists every run. With
        ``method="rectangular"`` a :class:`~sdpembed.solvers.lmnn.rectangular.RectangularLMNNResult`
        (the loss, a local status, no bound).
    n_iter_ : int
        Solver iterations, all runs together (Newton steps for "fast").
    n_features_in_ : int

    Notes
    -----
    metric-learn's Mahalanobis API: ``get_mahalanobis_matrix()`` (LᵀL, the metric that
    ``transform`` and ``predict`` use), ``get_metric()`` (a callable for
    ``KNeighborsClassifier(metric=...)``, DBSCAN, …), ``pair_distance`` and ``pair_score``.
    ``transform`` names its columns ``lmnn0``, ``lmnn1``, … (``set_output``).
    """

    def __init__(
        self,
        k: int = 3,
        mu: float = 0.5,
        *,
        method: str | None = None,
        n_components: int | None = None,
        n_repeats: int = 1,
        max_iter: int | None = None,
        tol: float | None = None,
        verbose: bool | int = False,
        random_state=0,
        rule: str = "knn",
    ) -> None:
        self.k = k
        self.mu = mu
        self.method = method
        self.n_components = n_components
        self.n_repeats = n_repeats
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.rule = rule

    def fit(self, X, y) -> LMNN:
        """Learn M from the labelled rows of ``X`` (target neighbours: Euclidean, Sec. 2.1.2)."""
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        k, mu, n_repeats = _check_params(self.k, self.mu, self.n_repeats)
        method = "fast" if self.method is None else self.method
        if method not in LMNN_METHODS:
            raise ValueError(f"method must be one of {LMNN_METHODS} or None, got {method!r}")
        if self.rule not in LMNN_RULES:
            raise ValueError(f"rule must be one of {LMNN_RULES}, got {self.rule!r}")
        d = X.shape[1]
        if self.n_components is not None and (
            isinstance(self.n_components, bool) or not isinstance(self.n_components, numbers.Integral)
            or not 1 <= self.n_components <= d
        ):
            raise ValueError(f"n_components must be an integer in [1, {d}] or None, got {self.n_components!r}")
        self.classes_, y_index = np.unique(y, return_inverse=True)
        y_index = y_index.ravel()
        options = _solver_options(method, self.max_iter, self.tol, self.verbose)
        if method == "rectangular":
            if n_repeats != 1:
                raise ValueError(f"method='rectangular' learns one map: n_repeats must be 1, got {n_repeats}")
            return self._fit_rectangular(X, y_index, k, mu, options)
        L_total = np.eye(d)
        self.results_ = []
        for run in range(n_repeats):                     # Sec. 2.1.8, multiple applications
            Xr = X @ L_total.T
            instance = LMNNInstance(X=Xr, y=y_index, targets=target_neighbors(Xr, y_index, k), mu=mu)
            result = solve(instance, method, **options)
            _warn_if_unconverged(self, result)
            self.results_.append(result)
            L = factor_metric(result.solution)
            if run < n_repeats - 1:
                # the next run works in the range of L: directions whose eigenvalue is below
                # REPEAT_RTOL·λ_max carry (almost) no distance, and keeping them would leave the next
                # pull matrix singular or nearly so (no certified bound, or a degenerate SDP); they are dropped
                w = np.sum(L * L, axis=1)
                L = L[w > REPEAT_RTOL * max(float(w[0]), 1e-300)]
            L_total = L @ L_total
        self.result_ = self.results_[-1]
        self.n_iter_ = int(sum(max(r.iterations, 1) for r in self.results_))
        self.targets_ = np.asarray(instance.targets)
        self.metric_ = L_total.T @ L_total
        return self._set_map(X, y_index, k, factor_metric(self.metric_, self.n_components))

    def _fit_rectangular(self, X: np.ndarray, y_index: np.ndarray, k: int, mu: float, options: dict) -> LMNN:
        """LMNN for dimensionality reduction with a rectangular L (Sec. 2.1.8)."""
        instance = LMNNInstance(X=X, y=y_index, targets=target_neighbors(X, y_index, k), mu=mu)
        result = solve_lmnn_rectangular(instance, self.n_components, **options)
        _warn_if_unconverged(self, result)
        self.results_ = [result]
        self.result_ = result
        self.n_iter_ = max(result.iterations, 1)
        self.targets_ = np.asarray(instance.targets)
        self.metric_ = result.metric
        # L's rows rotated onto the principal directions of LᵀL: the same distances, rows by decreasing norm
        return self._set_map(X, y_index, k, factor_metric(self.metric_, result.L.shape[0]))

    def _set_map(self, X: np.ndarray, y_index: np.ndarray, k: int, components: np.ndarray) -> LMNN:
        self.components_ = components
        self.n_components_ = components.shape[0]
        self._y_index = y_index
        self._Z_fit = X @ components.T
        self._knn = KNeighborsClassifier(n_neighbors=min(k, X.shape[0])).fit(self._Z_fit, y_index)
        return self

    @property
    def _n_features_out(self) -> int:
        # read by get_feature_names_out (columns lmnn0, lmnn1, …)
        return self.components_.shape[0]

    def transform(self, X) -> np.ndarray:
        """Map the rows of ``X`` by L: X Lᵀ, shape (n, n_components_); Euclidean distances there are D_M."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.components_.T

    def predict(self, X) -> np.ndarray:
        """The labels by ``rule``: kNN (k = ``k``) under the learned metric, or the energy rule (2.12)."""
        check_is_fitted(self)
        if self.rule == "energy":
            return self.predict_energy(X)
        return self.classes_[self._knn.predict(self.transform(X))]

    @available_if(uses_rule("knn"))
    def predict_proba(self, X) -> np.ndarray:
        """Fraction of the k nearest training points (under D_M) in each class, shape (n, n_classes)."""
        check_is_fitted(self)
        return self._knn.predict_proba(self.transform(X))

    def _energies(self, X) -> np.ndarray:
        check_is_fitted(self)
        Z = self.transform(X)
        return energy_scores(Z, self._Z_fit, self._y_index, self.targets_, int(self.k), float(self.mu))

    def predict_energy(self, X) -> np.ndarray:
        """The energy-based classification rule (2.12): the label that minimises the LMNN loss
        the test point would add to the training set (see :func:`energy_scores`)."""
        return self.classes_[np.argmin(self._energies(X), axis=1)]

    @available_if(uses_rule("energy"))
    def decision_function(self, X) -> np.ndarray:
        """Negated energies (2.12) per class, shape (n, n_classes); for two classes, shape (n,), the
        energy of ``classes_[0]`` minus that of ``classes_[1]`` (positive: ``classes_[1]``)."""
        return _energy_decision(self._energies(X))

    def get_mahalanobis_matrix(self) -> np.ndarray:
        """LᵀL, the Mahalanobis matrix of D_M (2.10) that ``transform`` and ``predict`` use
        (``metric_`` restricted to the leading directions when ``n_components`` is set)."""
        check_is_fitted(self)
        return self.components_.T @ self.components_

    def get_metric(self):
        """A function ``metric(u, v, squared=False)`` → √D_M(u, v) = ‖L(u − v)‖ (D_M with
        ``squared=True``), for any estimator that takes a callable metric:
        ``KNeighborsClassifier(metric=lmnn.get_metric())`` finds the neighbours ``predict`` finds."""
        check_is_fitted(self)
        return _mahalanobis_callable(self.components_.copy())

    def pair_distance(self, pairs) -> np.ndarray:
        """‖L(a − b)‖ for each pair (a, b) of ``pairs`` (n_pairs, 2, n_features), shape (n_pairs,)."""
        check_is_fitted(self)
        P = _check_pairs(pairs, self.n_features_in_)
        return np.linalg.norm((P[:, 0] - P[:, 1]) @ self.components_.T, axis=1)

    def pair_score(self, pairs) -> np.ndarray:
        """−``pair_distance(pairs)``: higher for more similar pairs (metric-learn's convention)."""
        return -self.pair_distance(pairs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags


class MultiMetricLMNN(ClassifierMixin, BaseEstimator):
    """LMNN with one metric per class: the SDP (2.17), classified by kNN under D̂ (2.17) or by the energy rule.

    The metrics are the classes' by default; ``fit(X, y, metric_groups=g)`` learns one metric per group
    of any assignment g of the training points instead (k-means clusters, as in the thesis' Fig. 2.10),
    with D̂(x_t, x_j) under the metric of the training point's group.

    Parameters
    ----------
    k : int, default=3
    mu : float, default=0.5
    method : {"fast", "cvxpy"}, optional
        The interior-point method on an exact working set (default) or the CVXPY ground truth.
    max_iter, tol : optional
        Newton steps per round and interior-point tolerance of "fast".
    verbose : bool or int, default=False
    rule : {"knn", "energy"}, default="knn"
        The rule of ``predict``: kNN under D̂ (2.17), with ``predict_proba`` the neighbours' vote
        fractions; or the energy rule (2.12) with the class-specific metrics
        (:func:`multi_metric_energy_scores`), with ``decision_function`` the negated energies. The
        energy rule needs the metric of a test point labelled c, so with ``metric_groups`` it needs
        every class inside one group (``fit`` refuses it otherwise).

    Attributes
    ----------
    metrics_ : ndarray of shape (n_metrics, n_features_in_, n_features_in_)
        M^c for ``classes_[c]`` (by default), or for the group c of ``metric_groups``.
    components_ : ndarray of shape (n_metrics, n_features_in_, n_features_in_)
        L^c with (L^c)ᵀ L^c = M^c.
    metric_groups_ : ndarray of int, shape (n_samples,)
        The metric of every training point: its class index, or the ``metric_groups`` given to ``fit``.
    targets_ : ndarray of int, shape (n_samples, k)
        The training points' target neighbours.
    classes_, result_, n_iter_, n_features_in_

    Notes
    -----
    metric-learn's Mahalanobis API applies class by class, since D̂ uses the metric of the
    training point's class: ``get_mahalanobis_matrix(label)`` is M^c and ``get_metric(label)``
    the distance under it, for one class; ``pair_distance(pairs, labels)`` and ``pair_score``
    measure each pair (x_t, x_j) under the metric of its label, the class of x_j as in D̂ (with
    ``metric_groups``: the metric of that class's group, defined when each class lies in one group). No
    single callable reproduces D̂ (it needs the label of the training point), so
    ``KNeighborsClassifier(metric=get_metric(label))`` is not this classifier: use ``predict``,
    ``predict_proba`` or ``distances``. There is no ``transform`` (one map per class).
    """

    def __init__(
        self,
        k: int = 3,
        mu: float = 0.5,
        *,
        method: str | None = None,
        max_iter: int | None = None,
        tol: float | None = None,
        verbose: bool | int = False,
        rule: str = "knn",
    ) -> None:
        self.k = k
        self.mu = mu
        self.method = method
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.rule = rule

    def fit(self, X, y, metric_groups=None) -> MultiMetricLMNN:
        """Learn one metric per class — or per group of ``metric_groups`` — from the labelled rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        metric_groups : array-like of int, shape (n_samples,), optional
            The metric of every training point, 0 … G − 1 (e.g. k-means clusters), each used by some
            point and some target neighbour (:func:`sdpembed.problems.lmnn.check_metric_groups`);
            ``None``: one metric per class, (2.17) as printed.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        k, mu, _ = _check_params(self.k, self.mu)
        method = "fast" if self.method is None else self.method
        if method not in MULTI_METRIC_METHODS:
            raise ValueError(f"method must be 'fast', 'cvxpy' or None, got {method!r}")
        if self.rule not in LMNN_RULES:
            raise ValueError(f"rule must be one of {LMNN_RULES}, got {self.rule!r}")
        self.classes_, y_index = np.unique(y, return_inverse=True)
        y_index = y_index.ravel()
        instance = MultiMetricLMNNInstance.from_data(X, y_index, k=k, mu=mu, metric_groups=metric_groups)
        label_metrics = _label_metrics(y_index, instance.block, self.classes_.size)
        if self.rule == "energy" and label_metrics is None:
            raise ValueError("rule='energy' needs the metric of a test point labelled c: every class must lie in "
                             "one group of metric_groups")
        result = solve(instance, method, **_solver_options(method, self.max_iter, self.tol, self.verbose))
        _warn_if_unconverged(self, result)
        self.result_ = result
        self.n_iter_ = max(int(result.iterations), 1)
        self.metrics_ = result.solution
        self.components_ = np.stack([factor_metric(M) for M in self.metrics_])
        self.targets_ = np.asarray(instance.targets)
        self.metric_groups_ = np.array(instance.block)
        self._label_metrics = label_metrics
        self._X_fit = X
        self._y_index = y_index
        return self

    def distances(self, X) -> np.ndarray:
        """D̂(x_t, x_j) = (x_t − x_j)ᵀ M^{g_j} (x_t − x_j) from every row of ``X`` to every training point
        (g_j = y_j, the class of x_j, unless ``metric_groups`` was given)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        D = np.empty((X.shape[0], self._X_fit.shape[0]))
        for c in range(self.metrics_.shape[0]):   # a loop over metrics: the metric of the training point
            cols = self.metric_groups_ == c
            A, B = X @ self.components_[c].T, self._X_fit[cols] @ self.components_[c].T
            D[:, cols] = np.maximum(np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :]
                                    - 2.0 * A @ B.T, 0.0)
        return D

    @available_if(uses_rule("knn"))
    def predict_proba(self, X) -> np.ndarray:
        """Fraction of the k training points nearest under D̂ in each class, shape (n, n_classes)."""
        return self._votes(X)

    def _votes(self, X) -> np.ndarray:
        D = self.distances(X)
        kk = min(int(self.k), D.shape[1])
        nearest = np.argpartition(D, kk - 1, axis=1)[:, :kk]
        votes = np.zeros((D.shape[0], self.classes_.size))
        np.add.at(votes, (np.repeat(np.arange(D.shape[0]), kk), self._y_index[nearest].ravel()), 1.0)
        return votes / kk

    def predict(self, X) -> np.ndarray:
        """The labels by ``rule``: majority vote of the k training points nearest under D̂ (ties: the
        smaller class index), or the energy rule (2.12) with the class-specific metrics."""
        check_is_fitted(self)
        if getattr(self, "rule", "knn") == "energy":
            return self.predict_energy(X)
        return self.classes_[np.argmax(self._votes(X), axis=1)]

    def _energies(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self._label_metrics is None:
            raise ValueError("the energy rule needs the metric of a test point labelled c, and the metric_groups "
                             "given to fit split a class over several metrics")
        return multi_metric_energy_scores(X, self._X_fit, self._y_index, self.targets_, self.components_,
                                          int(self.k), float(self.mu), metric_groups=self.metric_groups_,
                                          label_metrics=self._label_metrics)

    def predict_energy(self, X) -> np.ndarray:
        """The energy rule (2.12) with one metric per class (2.17): the label whose energy
        (:func:`multi_metric_energy_scores`) is least."""
        E = self._energies(X)
        return self.classes_[np.argmin(E, axis=1)]

    @available_if(uses_rule("energy"))
    def decision_function(self, X) -> np.ndarray:
        """Negated energies per class, shape (n, n_classes); for two classes, shape (n,), the energy
        of ``classes_[0]`` minus that of ``classes_[1]`` (positive: ``classes_[1]``)."""
        return _energy_decision(self._energies(X))

    def _metric_index(self, label) -> int:
        """The metric of class ``label``: its index, or the group that holds the class (``metric_groups``)."""
        check_is_fitted(self)
        where = np.flatnonzero(self.classes_ == label)
        if where.size != 1:
            raise ValueError(f"label must be one of the classes seen in fit {self.classes_.tolist()}, got {label!r}")
        return int(self._metric_of_labels()[where[0]])

    def _metric_of_labels(self) -> np.ndarray:
        """The metric of each class (index into ``metrics_``), or a ValueError when a class spans several."""
        if self._label_metrics is None:
            raise ValueError("the metric_groups given to fit split a class over several metrics: a label names no "
                             "metric; use metrics_[g] for group g")
        return self._label_metrics

    def get_mahalanobis_matrix(self, label) -> np.ndarray:
        """M^c, the Mahalanobis matrix of class ``label`` (one of ``classes_``)."""
        return self.metrics_[self._metric_index(label)].copy()

    def get_metric(self, label):
        """A function ``metric(u, v, squared=False)`` → ‖L^c(u − v)‖ under the metric of class ``label``
        (see the class Notes: one class's metric, not the multi-metric rule)."""
        return _mahalanobis_callable(self.components_[self._metric_index(label)].copy())

    def pair_distance(self, pairs, labels) -> np.ndarray:
        """‖L^c(x_t − x_j)‖ for each pair (x_t, x_j) of ``pairs`` (n_pairs, 2, n_features), with c the
        pair's entry of ``labels`` (the class of x_j in D̂); shape (n_pairs,)."""
        check_is_fitted(self)
        P = _check_pairs(pairs, self.n_features_in_)
        labels = np.asarray(labels)
        if labels.shape != (P.shape[0],):
            raise ValueError(f"labels must have one entry per pair ({P.shape[0]}), got shape {labels.shape}")
        index = np.searchsorted(self.classes_, labels)
        index = np.minimum(index, self.classes_.size - 1)
        if not np.all(self.classes_[index] == labels):
            raise ValueError(f"labels must be classes seen in fit {self.classes_.tolist()}")
        diff = P[:, 0] - P[:, 1]
        out = np.empty(P.shape[0])
        metric = self._metric_of_labels()[index]
        for c in np.unique(metric):   # a loop over metrics; the pairs of a metric are vectorised
            rows = metric == c
            out[rows] = np.linalg.norm(diff[rows] @ self.components_[c].T, axis=1)
        return out

    def pair_score(self, pairs, labels) -> np.ndarray:
        """−``pair_distance(pairs, labels)``: higher for more similar pairs."""
        return -self.pair_distance(pairs, labels)
