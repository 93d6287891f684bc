"""The searches behind every linear map's second target: M for a δ, or δ for an M.

A linear map has one *native* target — a dimension M (PCA, the random maps, LDA, ADAGIO, the
sparse linear model) or an isometry constant δ (NuMax, NuMax-Class) — and reaches the other by
a search over refits of itself: :func:`select_dimension` (the smallest M whose map has
isometry constant ≤ δ on the training secants, ADAGIO Table 3) and :func:`select_delta` (the
smallest δ whose solution has rank ≤ M). :func:`sdpembed.linear.embed` and the estimators'
own ``fit`` (``PCA(delta=0.2)``, ``NuMax(n_components=5)``) both call them. How each search
works, and what it guarantees, is in :mod:`sdpembed.linear.methods`.

The estimators are handled through scikit-learn's estimator API only (``get_params``,
``clone``, ``fit``/``fit_secants`` and the hooks of
:class:`~sdpembed.linear.base.LinearEmbedding`), so this module does not import the classes
whose ``fit`` uses it.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the RIP (2), Fig. 3(a).
.. [2] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", Proceedings of the IEEE International Conference on Data Mining (ICDM), 2016.
   Implemented here: the distortion (2)–(3), Table 3.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, clone

from .._validate import as_matrix, check_delta, check_positive_int
from ..isometry import SecantSet, check_measure

__all__ = ["SEARCHES", "Selection", "fit_to", "select_delta", "select_dimension"]

SEARCHES = ("bisection", "linear")


@dataclass(frozen=True)
class Selection:
    """How :func:`select_dimension` or :func:`select_delta` chose the map.

    Attributes
    ----------
    rule : str
        ``"smallest_dimension"`` (M for a target δ) or ``"smallest_delta"`` (δ for a dimension M).
    target : float or int
        The requested δ, or the requested M.
    value : int or float
        The chosen M, or the chosen δ.
    n_components : int
        The dimension of the returned map.
    train_delta : float
        Its isometry constant on the training secants under ``measure``.
    measure : str
    exclude_fraction : float
    trials : tuple of (float, float)
        Every (M, δ on the training secants) or (δ, rank) evaluated, in order.
    """

    rule: str
    target: float
    value: float
    n_components: int
    train_delta: float
    measure: str
    exclude_fraction: float
    trials: tuple[tuple[float, float], ...]


def fit_to(estimator: BaseEstimator, data: np.ndarray, y: np.ndarray | None, secants: bool) -> BaseEstimator:
    if secants:
        return estimator.fit_secants(data)
    return estimator.fit(data) if y is None else estimator.fit(data, y)


def _secant_set(data: np.ndarray, secants: bool) -> SecantSet:
    return SecantSet(secants=data) if secants else SecantSet(X=data)


def select_dimension(
    estimator: BaseEstimator,
    X,
    delta: float,
    *,
    y=None,
    secants: bool = False,
    measure: str = "rip",
    exclude_fraction: float = 0.0,
    search: str = "bisection",
    max_dim: int | None = None,
) -> BaseEstimator:
    """Fit a clone of ``estimator`` at the smallest M whose training isometry constant is ≤ δ.

    Parameters
    ----------
    estimator : BaseEstimator
        Unfitted, with an ``n_components`` parameter.
    X : ndarray of shape (n, N)
        Training points (or secants, with ``secants=True``).
    delta : float
        Target δ ∈ (0, 1).
    y : array_like, optional
        Labels, for methods that need them.
    secants : bool
        ``X`` holds secants: fit with ``fit_secants`` and measure on those rows.
    measure : {"rip", "adagio"}
        NuMax's RIP (2) or ADAGIO's (3) (see the module docstring).
    exclude_fraction : float
        Fraction of secants allowed above δ (0.01: "all but 1%", NuMax Fig. 3(a)).
    search : {"bisection", "linear"}
    max_dim : int, optional
        Largest M tried; by default the method's own limit (N, or min(n, N) for PCA, …).

    Returns
    -------
    BaseEstimator
        A fitted clone, with ``selection_`` (:class:`Selection`).

    Raises
    ------
    ValueError
        If no M ≤ ``max_dim`` reaches δ (the message gives the δ reached at ``max_dim``).
    """
    target = check_delta(delta)
    measure = check_measure(measure)
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
    if "n_components" not in estimator.get_params():
        raise ValueError(f"{type(estimator).__name__} has no n_components parameter to choose")
    data = as_matrix(X, "X", min_rows=1 if secants else 2)
    evaluation = _secant_set(data, secants)
    labels = None if y is None else np.asarray(y)
    limit = estimator._max_n_components(data.shape[0], data.shape[1], labels)
    if not secants:
        estimator = estimator._search_template(data, labels)
    hi = limit if max_dim is None else min(check_positive_int(max_dim, "max_dim"), limit)
    fitted: dict[int, tuple[BaseEstimator, float]] = {}
    trials: list[tuple[float, float]] = []

    def delta_at(M: int) -> float:
        if M not in fitted:
            model = fit_to(clone(estimator).set_params(n_components=M), data, labels, secants)
            value = evaluation.isometry_constant(model.components_, measure, exclude_fraction)
            fitted[M] = (model, value)
            trials.append((float(M), value))
        return fitted[M][1]

    if search == "linear":
        chosen = next((M for M in range(1, hi + 1) if delta_at(M) <= target), None)
        if chosen is None:
            raise ValueError(f"{type(estimator).__name__} does not reach delta = {target} ({measure}) on the "
                             f"training secants at any M <= {hi} (delta = {delta_at(hi):.4g} at M = {hi})")
    else:
        if delta_at(hi) > target:
            raise ValueError(f"{type(estimator).__name__} does not reach delta = {target} ({measure}) on the "
                             f"training secants at M = {hi}, the largest dimension tried "
                             f"(delta = {delta_at(hi):.4g}); raise max_dim or the target")
        lo = 1
        while lo < hi:
            mid = (lo + hi) // 2
            if delta_at(mid) <= target:
                hi = mid
            else:
                lo = mid + 1
        chosen = lo
        delta_at(chosen)
    model, value = fitted[chosen]
    model.selection_ = Selection("smallest_dimension", target, chosen, model.n_components_, value, measure,
                                 float(exclude_fraction), tuple(trials))
    return model


def select_delta(
    estimator: BaseEstimator,
    X,
    dim: int,
    *,
    y=None,
    secants: bool = False,
    delta_range: tuple[float, float] = (0.01, 0.99),
    delta_tol: float = 0.01,
    measure: str = "rip",
) -> BaseEstimator:
    """Fit a clone of a native-δ ``estimator`` (NuMax) at the smallest δ whose rank is ≤ ``dim``.

    Bisection on δ ∈ ``delta_range`` until the bracket is narrower than ``delta_tol``; the
    map at the upper end of the bracket is returned (rank ≤ ``dim``). See the module docstring.

    Returns
    -------
    BaseEstimator
        A fitted clone with ``selection_`` (:class:`Selection`; ``train_delta`` is measured on
        the training secants under ``measure``).

    Raises
    ------
    ValueError
        If even δ = ``delta_range[1]`` gives rank > ``dim``.
    """
    M = check_positive_int(dim, "dim")
    if "delta" not in estimator.get_params():
        raise ValueError(f"{type(estimator).__name__} has no delta parameter to choose")
    lo, hi = (check_delta(d, "delta_range") for d in delta_range)
    if not lo < hi:
        raise ValueError(f"delta_range must be increasing, got {delta_range!r}")
    if isinstance(delta_tol, bool) or not isinstance(delta_tol, numbers.Real) or not delta_tol > 0:
        raise ValueError(f"delta_tol must be a positive real number, got {delta_tol!r}")
    data = as_matrix(X, "X", min_rows=1 if secants else 2)
    labels = None if y is None else np.asarray(y)
    trials: list[tuple[float, float]] = []

    def fit_at(delta: float) -> BaseEstimator:
        model = fit_to(clone(estimator).set_params(delta=delta), data, labels, secants)
        trials.append((delta, float(model.n_components_)))
        return model

    best = fit_at(hi)
    if best.n_components_ > M:
        raise ValueError(f"{type(estimator).__name__} has rank {best.n_components_} > dim = {M} even at "
                         f"delta = {hi}; no delta in {delta_range} reaches the dimension")
    floor = lo
    while hi - lo > delta_tol:
        mid = 0.5 * (lo + hi)
        model = fit_at(mid)
        if model.n_components_ <= M:
            best, hi = model, mid
        else:
            lo = mid
    if lo == floor:
        # every trial met the dimension: the smallest delta of the range may too (it is the
        # costliest solve, the tightest constraints, so it is tried only when it can matter)
        low_model = fit_at(floor)
        if low_model.n_components_ <= M:
            best, hi = low_model, floor
    value = _secant_set(data, secants).isometry_constant(best.components_, check_measure(measure))
    best.selection_ = Selection("smallest_delta", M, hi, best.n_components_, value, measure, 0.0, tuple(trials))
    return best
