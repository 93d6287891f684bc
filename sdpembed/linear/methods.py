"""One dispatch table for every linear embedding: ``embed(method, X, dim=M | delta=δ)``.

:data:`LINEAR_METHODS` maps a name (the ``METHOD`` of ``sdpembed embed``) to a
:class:`~sdpembed.linear.base.LinearEmbedding` subclass. A method is added by one entry; what
:func:`embed` can do with it is read from the class itself, so no other code changes:

* its native targets (``_native_targets``): ``n_components`` — the dimension M is set directly;
  ``delta`` — the method has a native isometry constant δ (NuMax); every estimator also accepts
  the other target and reaches it by the searches below, run by its own ``fit``
  (``ADAGIO(delta=0.3)``, ``NuMax(n_components=5)``) with their default options;
* ``fit(X, y)`` with ``y`` required (no default) — the method needs labels (LDA, NuMax-Class);
* a constructor parameter ``random_state`` — it receives ``embed``'s seed.

**Choosing M for a target δ** (methods without a native δ, ADAGIO Table 3). The smallest M
whose map has isometry constant ≤ δ on the *training* secants (all pairs of the training
points, or the given secants): :func:`~sdpembed.linear.selection.select_dimension`. By default the search is a bisection
on M ∈ [1, M_max], which returns an M with δ(M) ≤ target < δ(M − 1); it is the smallest such
M whenever δ(M) is non-increasing — exactly so for PCA (its distortions shrink monotonically
with M), approximately for the random maps and ADAGIO (a fresh draw per M). ``search="linear"``
scans M = 1, 2, … and returns the smallest M for the draws made.

**How the isometry constant is measured** (``measure``). ``"rip"`` (default): NuMax's RIP (2),
δ = max_v |‖Ψv‖²/‖v‖² − 1| on squared norms — the δ of the NuMax SDP (4), so a δ means the same
for every method, NuMax included. ``"adagio"``: ADAGIO's distortion (2)–(3),
max |‖Ψv‖/‖v‖ − 1|, the definition behind ADAGIO's Table 3 and Fig. 6. The two differ by about a
factor 2 for small δ (ADAGIO's is the more lenient: |√(1 + x) − 1| ≤ |x|), so dimensions
found under (3) are smaller. ``exclude_fraction`` = 0.01 asks for the δ met by all but 1% of
the secants (NuMax Fig. 3(a)).

**Choosing δ for a dimension M** (methods with a native δ and no ``n_components``: NuMax,
NuMax-Class). The smallest δ, to within ``delta_tol``, whose solution has rank ≤ M, by
bisection on δ ∈ ``delta_range``: :func:`~sdpembed.linear.selection.select_delta`. The returned map is that solution, so
its ``n_components_`` may be below M (the NuMax rank need not take every value); it is
near-isometric on the training secants with that δ. The rank is non-increasing in δ in
practice but not provably, so the bisection finds a threshold, not necessarily the global
smallest δ.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the RIP (2), the SDP (4), Fig. 3(a).
.. [2] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", Proceedings of the IEEE International Conference on Data Mining (ICDM), 2016.
   Implemented here: the distortion (2)–(3), Table 3.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from .._validate import as_matrix, check_delta, check_positive_int, check_random_state
from .adagio import ADAGIO
from .base import LinearEmbedding
from .lda import LDA
from .near_isometric import FroMax, NILEPro
from .numax import NuMax, NuMaxClass
from .pca import PCA, RandomizedPCA
from .random_projection import GaussianProjection, RademacherProjection
from .selection import Selection, fit_to, select_delta, select_dimension
from .sparse_linear_model import SparseLinearProjection

__all__ = ["LINEAR_METHODS", "Selection", "embed", "method_capabilities", "select_dimension", "select_delta"]

#: Name → estimator class of every linear method (extend by adding entries).
LINEAR_METHODS: dict[str, type[LinearEmbedding]] = {
    "pca": PCA,
    "pca_randomized": RandomizedPCA,
    "gaussian": GaussianProjection,
    "rademacher": RademacherProjection,
    "lda": LDA,
    "adagio": ADAGIO,
    "sparse_linear": SparseLinearProjection,
    "numax": NuMax,
    "numax_class": NuMaxClass,
    "fromax": FroMax,
    "nilepro": NILEPro,
}

@dataclass(frozen=True)
class Capabilities:
    """What :func:`embed` reads from a method's class (see the module docstring)."""

    sets_dimension: bool
    native_delta: bool
    needs_labels: bool
    seeded: bool
    parameters: tuple[str, ...]


def method_capabilities(cls: type[LinearEmbedding]) -> Capabilities:
    """The :class:`Capabilities` of an estimator class, read from its native targets and ``fit``.

    ``sets_dimension`` and ``native_delta`` are the targets the method meets itself
    (``cls._native_targets``); every map also takes the other target, reached by a search
    (:mod:`sdpembed.linear.selection`), which :func:`embed` runs with its own options.
    """
    names = tuple(cls._get_param_names())
    y_param = inspect.signature(cls.fit).parameters.get("y")
    needs_labels = y_param is not None and y_param.default is inspect.Parameter.empty
    native = cls._native_targets
    return Capabilities("n_components" in native, "delta" in native, needs_labels, "random_state" in names, names)


def embed(
    method: str,
    X,
    *,
    dim: int | None = None,
    delta: float | None = None,
    labels=None,
    random_state=0,
    secants: bool = False,
    measure: str = "rip",
    exclude_fraction: float = 0.0,
    search: str = "bisection",
    max_dim: int | None = None,
    delta_tol: float = 0.01,
    **options,
) -> LinearEmbedding:
    """Fit the linear method ``method`` on ``X`` at a dimension ``dim`` or an isometry constant ``delta``.

    Parameters
    ----------
    method : str
        A key of :data:`LINEAR_METHODS`.
    X : array_like of shape (n, N)
        Training points as rows (secants with ``secants=True``).
    dim : int, optional
        The target dimension M. Methods with ``n_components`` use it directly; NuMax and
        NuMax-Class get the smallest δ whose rank is ≤ M (:func:`select_delta`).
    delta : float, optional
        The target isometry constant δ ∈ (0, 1). NuMax and NuMax-Class use it directly; the
        other methods get the smallest M whose training isometry constant is ≤ δ
        (:func:`select_dimension`). Exactly one of ``dim`` and ``delta`` is given.
    labels : array_like of shape (n,), optional
        Class labels, required by ``lda`` and ``numax_class``.
    random_state : None, int or numpy Generator
        Passed to seeded methods.
    secants : bool, default=False
        The rows of ``X`` are secants (``fit_secants``); not for labelled methods.
    measure : {"rip", "adagio"}, default="rip"
        Distortion measure of the δ-rules (module docstring).
    exclude_fraction : float, default=0.0
        For a target δ: the fraction of training secants allowed above it (0.01: "all but
        1%", NuMax Fig. 3(a)).
    search : {"bisection", "linear"}
        Search over M for a target δ.
    max_dim : int, optional
        Largest M tried for a target δ.
    delta_tol : float, default=0.01
        Width of the final δ bracket for NuMax with ``dim``.
    **options
        Constructor parameters of the method (e.g. ``pca_solver="randomized"`` for ADAGIO,
        ``n_secants=2000`` for NuMax, ``sigma``/``tau`` for ``sparse_linear``).

    Returns
    -------
    LinearEmbedding
        Fitted: ``components_`` is Ψ (M, N). When a search chose M or δ, ``selection_``
        records it (:class:`Selection`).
    """
    if method not in LINEAR_METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(LINEAR_METHODS)}")
    cls = LINEAR_METHODS[method]
    caps = method_capabilities(cls)
    if (dim is None) == (delta is None):
        raise ValueError("give exactly one of dim (the dimension M) and delta (the isometry constant)")
    fixed = {"n_components", "delta"} & set(options)
    if fixed:
        raise ValueError(f"set the dimension and delta through dim= and delta=, not {sorted(fixed)} in options")
    unknown = set(options) - set(caps.parameters)
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)} for method {method!r}; its parameters are "
                         f"{sorted(set(caps.parameters) - {'n_components', 'delta'})}")
    y = None
    if caps.needs_labels:
        if labels is None:
            raise ValueError(f"method {method!r} needs class labels (labels=...)")
        if secants:
            raise ValueError(f"method {method!r} learns from labelled points, not from secants")
    if labels is not None:
        y = np.asarray(labels)
        if y.ndim != 1:
            raise ValueError(f"labels must be a 1-D array, got shape {y.shape}")
    if caps.seeded:
        check_random_state(random_state)
        options["random_state"] = random_state
    estimator = cls(**options)
    data = as_matrix(X, "X", min_rows=1 if secants else 2)
    if y is not None and y.shape[0] != data.shape[0]:
        raise ValueError(f"labels must have one entry per row of X ({data.shape[0]}), got {y.shape[0]}")
    if dim is not None:
        M = check_positive_int(dim, "dim")
        if caps.sets_dimension:
            return fit_to(estimator.set_params(n_components=M), data, y, secants)
        if caps.native_delta:
            return select_delta(estimator, data, M, y=y, secants=secants, delta_tol=delta_tol, measure=measure)
        raise ValueError(f"method {method!r} can set neither a dimension nor a delta")
    target = check_delta(delta)
    if caps.native_delta:
        return fit_to(estimator.set_params(delta=target), data, y, secants)
    if caps.sets_dimension:
        return select_dimension(estimator, data, target, y=y, secants=secants, measure=measure,
                                exclude_fraction=exclude_fraction, search=search, max_dim=max_dim)
    raise ValueError(f"method {method!r} can set neither a dimension nor a delta")
