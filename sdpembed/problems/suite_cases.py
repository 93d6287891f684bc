"""The instances of the reference suite: how each is built, deterministically, from the package's
generators (:mod:`sdpembed.datasets`) and bundled data (scikit-learn's iris, wine and digits).

About five instances per problem — and per variant for MVU — from tiny to medium (three small ones
of the multi-metric LMNN, on the data of the LMNN cases). "Medium" is
bounded by the suite's contract: ``sdpembed suite build`` regenerates every instance and
certifies it with Clarabel and a second solver inside the test suite, in a few minutes on two
cores, so the largest instances have a few hundred secants in dimension 64, 7,200 LMNN
triplets or 40 MVU points. Every case is solved to a certified optimum by both solvers
(``suite build`` checks it; the MVU graphs in particular: rigid neighbourhood graphs "lock up" the equality SDP,
Sec. 3.1.12, and are avoided). The equality SDPs of trefoil12 and scurve28-angles come closest:
they have no interior point (no feasible K is definite on 1⊥), which interior-point solvers
reach less accurately; their optima are certified all the same.

One function per problem returns its cases (:func:`numax_cases`, :func:`numax_class_cases`,
:func:`lmnn_cases`, :func:`lmnn_multi_cases`, :func:`mvu_cases`, :func:`mvu_oos_cases`); it is the
``suite_cases`` of the problem's :class:`~sdpembed.registry.ProblemSpec`. :func:`sdpembed.validation.suite.suite_cases`
walks :data:`sdpembed.registry.PROBLEMS` and refuses a registered problem that has none: a new
problem gives its recipes here, beside those of the others, and names them in its registration.
The recipes use only numpy, :mod:`sdpembed.datasets` and scikit-learn's bundled datasets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from .. import datasets
from .lmnn import LMNNInstance, MultiMetricLMNNInstance
from .mvu import MVUInstance
from .mvu_oos import MVUOOSInstance
from .numax import NuMaxClassInstance, NuMaxInstance

__all__ = [
    "SIZES", "SuiteCase", "lmnn_cases", "lmnn_multi_cases", "mvu_cases", "mvu_oos_cases", "numax_cases",
    "numax_class_cases",
]

#: Size labels, smallest first.
SIZES = ("tiny", "small", "medium")


@dataclass(frozen=True)
class SuiteCase:
    """One instance of the suite: its name, problem, group (the problem, or ``mvu/<variant>``),
    size label, a description and the function that builds it."""

    name: str
    problem: str
    group: str
    size: str
    description: str
    build: Callable[[], Any]


# ------------------------------------------------------------------------------ data helpers
def _standardised_subset(X: np.ndarray, y: np.ndarray, per_class: int, seed: int,
                         classes: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``per_class`` seeded points of each class (all classes, or ``classes``), standardised columns."""
    rng = np.random.default_rng(seed)
    chosen = np.unique(y) if classes is None else np.asarray(classes)
    index = np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in chosen]))
    Z = X[index]
    return (Z - Z.mean(axis=0)) / Z.std(axis=0), y[index]


def _sklearn(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets as sk

    loader = {"iris": sk.load_iris, "wine": sk.load_wine, "digits": sk.load_digits}[name]
    return loader(return_X_y=True)


def _digits_subset(per_class: int, classes: Sequence[int], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded scikit-learn digits (8×8, scaled to [0, 1]) of the given classes."""
    X, y = _sklearn("digits")
    rng = np.random.default_rng(seed)
    index = np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in classes]))
    return X[index] / 16.0, y[index]


def _gaussian_clusters(per_class: int, n_classes: int, dim: int, separation: float, seed: int):
    """``n_classes`` unit Gaussian clusters centred at separation·e_c in R^dim, labels 0..n_classes−1."""
    X = datasets.gaussian_points(per_class * n_classes, dim, random_state=seed)
    X += separation * np.repeat(np.eye(n_classes, dim), per_class, axis=0)
    return X, np.repeat(np.arange(n_classes), per_class)


# ---------------------------------------------------------------------------------- NuMax
def numax_cases() -> list[SuiteCase]:
    def squares(image: int, shape: int, delta: float) -> NuMaxInstance:
        return NuMaxInstance.from_points(datasets.translating_squares(image, shape), delta)

    def digits_points() -> NuMaxInstance:
        X, _ = _digits_subset(3, range(10), seed=0)
        return NuMaxInstance(delta=0.2, X=X)

    return [
        SuiteCase("numax-squares5", "numax", "numax", "tiny",
                  "translating 2x2 squares in 5x5 images (16 points, N = 25), all 120 secants, delta 0.1",
                  partial(squares, 5, 2, 0.1)),
        SuiteCase("numax-gaussian30", "numax", "numax", "small",
                  "30 standard normal points in R^20 (seed 1), all 435 secants, delta 0.1",
                  lambda: NuMaxInstance.from_points(datasets.gaussian_points(30, 20, random_state=1), 0.1)),
        SuiteCase("numax-squares7", "numax", "numax", "small",
                  "translating 3x3 squares in 7x7 images (25 points, N = 49), all 300 secants, delta 0.1",
                  partial(squares, 7, 3, 0.1)),
        SuiteCase("numax-squares6-points", "numax", "numax", "small",
                  "point form (X: all pairs): translating 2x2 squares in 6x6 images (25 points, N = 36), delta 0.1",
                  lambda: NuMaxInstance(delta=0.1, X=datasets.translating_squares(6, 2))),
        SuiteCase("numax-digits30-points", "numax", "numax", "medium",
                  "point form: 3 scikit-learn digits of each class (30 points, N = 64, 435 pairs), delta 0.2",
                  digits_points),
    ]


def numax_class_cases() -> list[SuiteCase]:
    def shapes(image: int, size: int, delta: float) -> NuMaxClassInstance:
        return NuMaxClassInstance.from_labelled(*datasets.disks_and_squares(image, size), delta)

    def clusters() -> NuMaxClassInstance:
        X, y = _gaussian_clusters(8, 3, 8, 2.0, seed=5)
        return NuMaxClassInstance(delta=0.2, X=X, y=y)

    def digits() -> NuMaxClassInstance:
        X, y = _digits_subset(10, (0, 1, 7), seed=0)
        return NuMaxClassInstance(delta=0.25, X=X, y=y)

    return [
        SuiteCase("numax_class-shapes6", "numax_class", "numax_class", "tiny",
                  "disks and squares of size 4 in 6x6 images (18 points, 2 classes, N = 36), all 153 secants, "
                  "delta 0.2", partial(shapes, 6, 4, 0.2)),
        SuiteCase("numax_class-clusters3x8-points", "numax_class", "numax_class", "small",
                  "point form: 3 Gaussian clusters of 8 points in R^8 (seed 5), 276 pairs, delta 0.2", clusters),
        SuiteCase("numax_class-shapes7", "numax_class", "numax_class", "small",
                  "disks and squares of size 4 in 7x7 images (25 points, N = 49), all 300 secants, delta 0.2",
                  partial(shapes, 7, 4, 0.2)),
        SuiteCase("numax_class-digits3x10-points", "numax_class", "numax_class", "small",
                  "point form: 10 scikit-learn digits of each of 0, 1, 7 (N = 64, 435 pairs), delta 0.25", digits),
        SuiteCase("numax_class-shapes8", "numax_class", "numax_class", "medium",
                  "disks and squares of size 5 in 8x8 images (32 points, N = 64), all 496 secants, delta 0.2",
                  partial(shapes, 8, 5, 0.2)),
    ]


# ----------------------------------------------------------------------------------- LMNN
def _lmnn_clusters(instance_type: type) -> Any:
    """3 Gaussian clusters of 6 points in R³ (seed 3), k = 2, μ = 0.7."""
    X, y = _gaussian_clusters(6, 3, 3, 1.0, seed=3)
    return instance_type.from_data(X, y, k=2, mu=0.7)


def _lmnn_subset(instance_type: type, name: str, per_class: int, d: int, seed: int, k: int, mu: float) -> Any:
    """``per_class`` seeded points of each class of a scikit-learn dataset, its first d features standardised."""
    X, y = _sklearn(name)
    Z, labels = _standardised_subset(X[:, :d], y, per_class, seed)
    return instance_type.from_data(Z, labels, k=k, mu=mu)


def lmnn_cases() -> list[SuiteCase]:
    def digits() -> LMNNInstance:
        X, y = _sklearn("digits")
        pixels = np.sort(np.argsort(-X.var(axis=0), kind="stable")[:10])      # the 10 most varying pixels
        Z, labels = _standardised_subset(X[:, pixels], y, 10, seed=1, classes=(0, 1, 2, 3))
        return LMNNInstance.from_data(Z, labels, k=3, mu=0.3)

    return [
        SuiteCase("lmnn-clusters3x6", "lmnn", "lmnn", "tiny",
                  "3 Gaussian clusters of 6 points in R^3 (seed 3), k = 2, mu 0.7 (432 triplets)",
                  partial(_lmnn_clusters, LMNNInstance)),
        SuiteCase("lmnn-iris8", "lmnn", "lmnn", "small",
                  "iris, 8 points per class (seed 0), standardised, k = 2, mu 0.5 (768 triplets)",
                  partial(_lmnn_subset, LMNNInstance, "iris", 8, 4, 0, 2, 0.5)),
        SuiteCase("lmnn-wine8", "lmnn", "lmnn", "small",
                  "wine, 8 points per class (seed 1), first 5 features standardised, k = 2, mu 0.3 (768 triplets)",
                  partial(_lmnn_subset, LMNNInstance, "wine", 8, 5, 1, 2, 0.3)),
        SuiteCase("lmnn-digits4x10", "lmnn", "lmnn", "small",
                  "digits 0-3, 10 per class (seed 1), the 10 most varying pixels standardised, k = 3, mu 0.3 "
                  "(3,600 triplets)", digits),
        SuiteCase("lmnn-iris20", "lmnn", "lmnn", "medium",
                  "iris, 20 points per class (seed 0), standardised, k = 3, mu 0.5 (7,200 triplets)",
                  partial(_lmnn_subset, LMNNInstance, "iris", 20, 4, 0, 3, 0.5)),
    ]


def lmnn_multi_cases() -> list[SuiteCase]:
    """The data of three small LMNN cases, with one metric per class (2.17)."""
    return [
        SuiteCase("lmnn_multi-clusters3x6", "lmnn_multi", "lmnn_multi", "tiny",
                  "one metric per class: 3 Gaussian clusters of 6 points in R^3 (seed 3), k = 2, mu 0.7 "
                  "(3 metrics 3x3, 432 triplets)", partial(_lmnn_clusters, MultiMetricLMNNInstance)),
        SuiteCase("lmnn_multi-iris8", "lmnn_multi", "lmnn_multi", "small",
                  "one metric per class: iris, 8 points per class (seed 0), standardised, k = 2, mu 0.5 "
                  "(3 metrics 4x4, 768 triplets)",
                  partial(_lmnn_subset, MultiMetricLMNNInstance, "iris", 8, 4, 0, 2, 0.5)),
        SuiteCase("lmnn_multi-wine8", "lmnn_multi", "lmnn_multi", "small",
                  "one metric per class: wine, 8 points per class (seed 1), first 5 features standardised, k = 2, "
                  "mu 0.3 (3 metrics 5x5, 768 triplets)",
                  partial(_lmnn_subset, MultiMetricLMNNInstance, "wine", 8, 5, 1, 2, 0.3)),
    ]


# ------------------------------------------------------------------------------------ MVU
#: The neighbourhood graphs: name, size, points, neighbours, angle edges, seed of linking.
_MVU_GRAPHS = (
    ("trefoil12", "tiny", lambda: datasets.trefoil_knot(12)[0], 2, True, 0,
     "12 equally spaced points on a trefoil knot, k = 2 with angle edges"),
    ("swiss10", "small", lambda: datasets.swiss_roll(10, noise=0.1, random_state=0)[0], 3, False, 0,
     "10 points on a swiss roll (noise 0.1, seed 0), k = 3"),
    ("scurve20", "small", lambda: datasets.s_curve(20, noise=0.02, random_state=1)[0], 3, False, 1,
     "20 points on an s-curve (noise 0.02, seed 1), k = 3"),
    ("scurve28-angles", "small", lambda: datasets.s_curve(28, noise=0.02, random_state=2)[0], 3, True, 2,
     "28 points on an s-curve (noise 0.02, seed 2), k = 3 with angle edges"),
    ("swiss40", "medium", lambda: datasets.swiss_roll(40, noise=0.1, random_state=0)[0], 3, False, 0,
     "40 points on a swiss roll (noise 0.1, seed 0), k = 3"),
)

#: ω of the slack variant (Sec. 3.1.6): large enough for every graph above to give a bounded SDP.
SLACK_OMEGA = 0.9


def mvu_cases() -> list[SuiteCase]:
    def build(points: Callable[[], np.ndarray], k: int, angles: bool, seed: int, variant: str) -> MVUInstance:
        omega = SLACK_OMEGA if variant == "slack" else None
        return MVUInstance.from_points(points(), k, variant, omega=omega, angles=angles, link=True, random_state=seed)

    return [
        SuiteCase(f"mvu-{variant}-{graph}", "mvu", f"mvu/{variant}", size,
                  f"{words}; variant {variant}" + (f", omega {SLACK_OMEGA}" if variant == "slack" else ""),
                  partial(build, points, k, angles, seed, variant))
        for variant in MVUInstance.VARIANTS
        for graph, size, points, k, angles, seed, words in _MVU_GRAPHS
    ]


def _unrolled_swiss(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Swiss-roll inputs and their isometric unrolling: arc length ½(t√(1+t²) + asinh t) and height, centred."""
    X, params = datasets.swiss_roll(n, random_state=seed)
    t = params[:, 0]
    Y = np.column_stack([0.5 * (t * np.sqrt(1.0 + t**2) + np.arcsinh(t)), params[:, 1]])
    return X, Y - Y.mean(axis=0)


def _unrolled_s_curve(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """S-curve inputs and their isometric unrolling (t, h) (the curve has unit speed in t), centred."""
    X, params = datasets.s_curve(n, random_state=seed)
    return X, params - params.mean(axis=0)


def _rotated_gaussian(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian points Y in R³ and X = Y Qᵀ, Q an orthonormal 5×3 frame (an isometry into R⁵)."""
    Y = datasets.gaussian_points(n, 3, random_state=seed)
    Q, _ = np.linalg.qr(datasets.gaussian_points(5, 3, random_state=seed + 1))
    return Y @ Q.T, Y


# -------------------------------------------------------------------------------- MVU OOS
def mvu_oos_cases() -> list[SuiteCase]:
    def build(embedding: Callable[[int, int], tuple[np.ndarray, np.ndarray]], n: int, seed: int, k: int,
              noise: float) -> MVUOOSInstance:
        X, Y = embedding(n + 1, seed)                   # the last point is the new input, the others the training set
        x_new = X[-1] + noise * datasets.gaussian_points(1, X.shape[1], random_state=seed + 7)[0]
        return MVUOOSInstance.from_points(X[:-1], Y[:-1], x_new, k)

    return [
        SuiteCase("mvu_oos-swiss-k3", "mvu_oos", "mvu_oos", "tiny",
                  "a new swiss-roll point placed by its 3 nearest of 200 unrolled training points (r = 2)",
                  partial(build, _unrolled_swiss, 200, 0, 3, 0.0)),
        SuiteCase("mvu_oos-scurve-k6", "mvu_oos", "mvu_oos", "small",
                  "a new s-curve point (input noise 0.05) and its 6 nearest of 200 unrolled points (r = 2)",
                  partial(build, _unrolled_s_curve, 200, 1, 6, 0.05)),
        SuiteCase("mvu_oos-gaussian3d-k10", "mvu_oos", "mvu_oos", "small",
                  "a new point of an isometric 3-D Gaussian cloud in R^5 (input noise 0.1), 10 of 100 neighbours "
                  "(r = 3)", partial(build, _rotated_gaussian, 100, 2, 10, 0.1)),
        SuiteCase("mvu_oos-swiss-k12", "mvu_oos", "mvu_oos", "small",
                  "a new swiss-roll point (input noise 0.5) and its 12 nearest of 300 unrolled points (r = 2)",
                  partial(build, _unrolled_swiss, 300, 3, 12, 0.5)),
        SuiteCase("mvu_oos-scurve-k40", "mvu_oos", "mvu_oos", "medium",
                  "a new s-curve point (input noise 0.2) and its 40 nearest of 400 unrolled points (r = 2)",
                  partial(build, _unrolled_s_curve, 400, 4, 40, 0.2)),
    ]

