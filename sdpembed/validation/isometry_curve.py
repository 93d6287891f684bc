"""The evaluation harness of the linear-embedding family: isometry constant against dimension.

For each method and each dimension M, :func:`isometry_curve` fits the method on the training
points (through :func:`sdpembed.linear.embed`) and reports the empirical isometry constant of
its map

* on the training secants — all pairs of the training points (NuMax Fig. 3(a); ADAGIO Fig. 6);
* on held-out secants — all pairs of separate test points (NuMax Fig. 10(b), δ_test: "the
  worst-case distortion among all pairwise secants from the test dataset");

each both as the worst case and as the value met by all but a fraction of the secants (1% by
default: the dashed curves of NuMax Fig. 3(a)). The measure is NuMax's RIP (2) on squared norms
(``"rip"``) or ADAGIO's distortion (3) (``"adagio"``); see :mod:`sdpembed.linear.methods`.

Methods with a native δ (NuMax, NuMax-Class) are fitted at each M by the smallest-δ rule of
:func:`sdpembed.linear.select_delta` (several solves per M), or — with ``native_deltas`` — once
per given δ, the point then sitting at the dimension M = rank that δ produced (how NuMax's own
curve in Fig. 3(a) is drawn).

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the RIP (2), Fig. 3(a) and Fig. 10(b).
.. [2] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", Proceedings of the IEEE International Conference on Data Mining (ICDM), 2016.
   Implemented here: the distortion (3), Fig. 6.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .._validate import as_matrix, check_delta, check_positive_int
from ..isometry import SecantSet, check_exclude_fraction, check_measure, distortion_quantile

__all__ = ["IsometryCurvePoint", "IsometryCurve", "isometry_curve"]


@dataclass(frozen=True)
class IsometryCurvePoint:
    """One (method, dimension) point of an isometry curve.

    Attributes
    ----------
    method : str
        The label of the method.
    dim : int
        The requested dimension (for a native-δ point, the rank obtained).
    n_components : int
        The dimension of the fitted map (≤ ``dim`` for NuMax under the smallest-δ rule).
    train_delta, train_delta_quantile : float
        Worst-case and all-but-``exclude_fraction`` isometry constants on the training secants.
    test_delta, test_delta_quantile : float
        The same on the held-out secants (NaN without test points).
    native_delta : float
        The δ NuMax was solved at (NaN for other methods).
    fit_time : float
        Seconds spent fitting (searches included).
    """

    method: str
    dim: int
    n_components: int
    train_delta: float
    train_delta_quantile: float
    test_delta: float
    test_delta_quantile: float
    native_delta: float
    fit_time: float


@dataclass(frozen=True)
class IsometryCurve:
    """The points of :func:`isometry_curve`, with the settings that produced them."""

    points: tuple[IsometryCurvePoint, ...]
    measure: str
    exclude_fraction: float
    n_train_secants: int
    n_test_secants: int

    @property
    def methods(self) -> tuple[str, ...]:
        """The method labels, in order of first appearance."""
        return tuple(dict.fromkeys(p.method for p in self.points))

    def series(self, method: str, field: str = "train_delta") -> tuple[np.ndarray, np.ndarray]:
        """(n_components, values of ``field``) of one method, ready to plot."""
        if method not in self.methods:
            raise ValueError(f"method must be one of {self.methods}, got {method!r}")
        if field not in IsometryCurvePoint.__dataclass_fields__:
            raise ValueError(f"field must be a field of IsometryCurvePoint, got {field!r}")
        chosen = [p for p in self.points if p.method == method]
        return (np.array([p.n_components for p in chosen]), np.array([getattr(p, field) for p in chosen]))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (NaN becomes None)."""
        def clean(value):
            return None if isinstance(value, float) and math.isnan(value) else value

        return {
            "measure": self.measure, "exclude_fraction": self.exclude_fraction,
            "n_train_secants": self.n_train_secants, "n_test_secants": self.n_test_secants,
            "points": [{k: clean(v) for k, v in asdict(p).items()} for p in self.points],
        }

    def table(self) -> str:
        """A plain-text table, one row per point."""
        pct = f"{100 * (1 - self.exclude_fraction):g}%"
        header = (f"{'method':<16}{'dim':>5}{'M':>5}{'train':>9}{'train ' + pct:>12}{'test':>9}"
                  f"{'test ' + pct:>11}{'delta':>8}{'time[s]':>9}")
        rows = [header]
        for p in self.points:
            rows.append(f"{p.method:<16}{p.dim:>5}{p.n_components:>5}{p.train_delta:>9.4f}"
                        f"{p.train_delta_quantile:>12.4f}{p.test_delta:>9.4f}{p.test_delta_quantile:>11.4f}"
                        f"{p.native_delta:>8.3f}{p.fit_time:>9.2f}")
        return "\n".join(rows)


def _method_specs(methods) -> list[tuple[str, str, dict]]:
    """(label, method name, options) from a sequence of names or a mapping label → name | (name, options)."""
    if isinstance(methods, str):
        raise ValueError("methods must be a sequence of method names or a mapping, not a single string")
    if isinstance(methods, Mapping):
        specs = []
        for label, spec in methods.items():
            if isinstance(spec, str):
                specs.append((str(label), spec, {}))
            elif (isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str)
                  and isinstance(spec[1], Mapping)):
                specs.append((str(label), spec[0], dict(spec[1])))
            else:
                raise ValueError(f"methods[{label!r}] must be a method name or a (name, options) pair, got {spec!r}")
    else:
        specs = [(name, name, {}) for name in methods]
    if not specs:
        raise ValueError("methods must name at least one method")
    return specs


def isometry_curve(
    methods: Sequence[str] | Mapping[str, str | tuple[str, Mapping[str, Any]]],
    X_train,
    dims: Sequence[int],
    *,
    X_test=None,
    labels=None,
    measure: str = "rip",
    exclude_fraction: float = 0.01,
    native_deltas: Sequence[float] | None = None,
    random_state=None,
    delta_tol: float = 0.01,
) -> IsometryCurve:
    """Empirical isometry constants of each method at each dimension, on training and held-out secants.

    Parameters
    ----------
    methods : sequence of str, or mapping
        Names of :data:`sdpembed.linear.LINEAR_METHODS`, or a mapping label → name or
        label → (name, options) for variants (e.g. ``{"ADAGIO-rPCA": ("adagio",
        {"pca_solver": "randomized"})}``).
    X_train : ndarray of shape (n, N)
        Training points; the training secants are all their pairs.
    dims : sequence of int
        The dimensions M.
    X_test : ndarray of shape (n_test, N), optional
        Held-out points; the held-out secants are all their pairs (NuMax Fig. 10(b)).
    labels : array_like of shape (n,), optional
        Training labels, for ``lda`` and ``numax_class``.
    measure : {"rip", "adagio"}, default="rip"
        NuMax's RIP (2) or ADAGIO's distortion (3).
    exclude_fraction : float, default=0.01
        The quantile variant: the δ met by all but this fraction of the secants (Fig. 3(a)).
    native_deltas : sequence of float, optional
        Fit native-δ methods (NuMax) once per δ here instead of searching δ for each M.
    random_state : None, int or numpy Generator
        Seed of every randomized method (the same seed at every M).
    delta_tol : float
        Tolerance of the smallest-δ search for native-δ methods.

    Returns
    -------
    IsometryCurve
    """
    from ..linear.methods import LINEAR_METHODS, embed, method_capabilities  # at first use (DESIGN.md, "Start-up")

    specs = _method_specs(methods)
    for label, name, _ in specs:
        if name not in LINEAR_METHODS:
            raise ValueError(f"unknown method {name!r} (label {label!r}); choose from {sorted(LINEAR_METHODS)}")
    measure = check_measure(measure)
    exclude_fraction = check_exclude_fraction(exclude_fraction)
    X_train = as_matrix(X_train, "X_train", min_rows=2)
    dims = [check_positive_int(M, "dims") for M in dims]
    if not dims and native_deltas is None:
        raise ValueError("dims must contain at least one dimension")
    deltas = None if native_deltas is None else [check_delta(d, "native_deltas") for d in native_deltas]
    train = SecantSet(X=X_train)
    test = None
    if X_test is not None:
        test = SecantSet(X=as_matrix(X_test, "X_test", min_rows=2, n_cols=X_train.shape[1]))

    def constants(evaluation: SecantSet | None, Psi: np.ndarray) -> tuple[float, float]:
        if evaluation is None:
            return float("nan"), float("nan")
        d = evaluation.distortions(Psi, measure)
        return distortion_quantile(d, 0.0), distortion_quantile(d, exclude_fraction)

    points = []
    for label, name, options in specs:
        native = method_capabilities(LINEAR_METHODS[name]).native_delta
        runs = [("delta", d) for d in deltas] if native and deltas is not None else [("dim", M) for M in dims]
        for kind, value in runs:
            start = time.perf_counter()
            if kind == "delta":
                model = embed(name, X_train, delta=value, labels=labels, random_state=random_state, **options)
            else:
                model = embed(name, X_train, dim=value, labels=labels, random_state=random_state, measure=measure,
                              delta_tol=delta_tol, **options)
            elapsed = time.perf_counter() - start
            Psi = model.components_
            train_max, train_q = constants(train, Psi)
            test_max, test_q = constants(test, Psi)
            native_delta = float(value) if kind == "delta" else (
                float(model.selection_.value) if native else float("nan"))
            points.append(IsometryCurvePoint(
                method=label, dim=int(value) if kind == "dim" else int(model.n_components_),
                n_components=int(model.n_components_), train_delta=train_max, train_delta_quantile=train_q,
                test_delta=test_max, test_delta_quantile=test_q, native_delta=native_delta, fit_time=elapsed))
    return IsometryCurve(tuple(points), measure, exclude_fraction, train.n_secants,
                         0 if test is None else test.n_secants)
