"""FroMax and NILE-Pro as linear embeddings (Luo, Shapiro, Shi, Yang & Zhu).

Both learn a map Ψ (M, N) whose squared norms on the training secants stay within 1 ± δ
(the RIP (2.1) of Luo et al.), by non-convex ADMM (:mod:`sdpembed.solvers.near_isometric.fromax`,
Algorithm 1; :mod:`sdpembed.solvers.near_isometric.nilepro`, Algorithm 2). With ``n_components`` the rank is fixed;
without it the rank is found by rank adjustment (Algorithm 3,
:mod:`sdpembed.solvers.near_isometric.rank_adjust`). The secants are all pairs of the training points,
handled by column generation (Algorithm 4) without ever being materialised, or a seeded
sample of ``n_secants`` pairs.

There is no certificate: ``isometry_constant_`` reports the distortion actually achieved on
the training secants, and a ``ConvergenceWarning`` is raised when it exceeds a ``delta`` the
user gave. With ``n_components`` alone the rank is fixed and no δ is asked for: the run aims at
:data:`FIXED_RANK_AIM` and keeps its least distorting map (the δ that rank reaches, the
meaning of :func:`sdpembed.linear.embed`'s ``dim``), without a warning.


References
----------
.. [1] J. Luo, K. Shapiro, H.-J. M. Shi, Q. Yang and K. Zhu, "Practical algorithms for learning
   near-isometric linear embeddings", SIAM Undergraduate Research Online 9, 2016
   (arXiv:1601.00062). Implemented here: the RIP (2.1), FroMax (Algorithm 1), NILE-Pro (Algorithm
   2), rank adjustment (Algorithm 3) and column generation (Algorithm 4).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._validate import check_delta, check_positive_int
from ..problems.numax_operator import PairSecantOperator
from ..secants import sample_secants
from .base import LinearEmbedding

__all__ = ["FroMax", "NILEPro", "DEFAULT_DELTA", "FIXED_RANK_AIM"]

#: δ when neither ``delta`` nor ``n_components`` is given (rank adjustment to δ = 0.1).
DEFAULT_DELTA = 0.1

#: The δ a fixed-rank run aims at when no ``delta`` is given: far below what a reduced rank
#: reaches, so the run goes on until it stalls and returns its least distorting map.
FIXED_RANK_AIM = 1e-3


class _NearIsometric(LinearEmbedding):
    """Shared fit of FroMax and NILE-Pro; subclasses set ``_method`` (the solver's name in
    :data:`~sdpembed.solvers.near_isometric.rank_adjust.METHODS`) and ``_method_params`` (their own
    constructor parameters, passed on to the solver by name)."""

    _method = ""
    _method_params: tuple[str, ...] = ()
    _native_targets = ("n_components", "delta")

    def _method_options(self) -> dict:
        return {name: getattr(self, name) for name in self._method_params}

    def _learn_map(self, X: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        # imported here: sdpembed.solvers loads every solver (and CVXPY through LMNN's), which
        # importing sdpembed.linear must not do (the verifier runs without CVXPY)
        from ..solvers.near_isometric.nonconvex import check_rank
        from ..solvers.near_isometric.rank_adjust import METHODS, near_isometric_cg, rank_adjust, rank_adjust_cg

        if self.delta is not None:
            delta = check_delta(self.delta)
        else:
            delta = DEFAULT_DELTA if self.n_components is None else FIXED_RANK_AIM
        N = X.shape[1]
        rank = None if self.n_components is None else check_rank(self.n_components, N, "n_components")
        options = {"max_iter": check_positive_int(self.max_iter, "max_iter"), **self._method_options()}
        common = {"random_state": self.random_state, "verbose": self.verbose}
        # R₀ and Ψ₀ of the rank adjustment: NuMax's rank and factor, a given rank, or the PCA rank
        start = {"initial_rank": self.initial_rank, "initial_map": None}
        if isinstance(self.initial_rank, str):
            if self.initial_rank != "from_numax":
                raise ValueError(f"initial_rank must be an integer, 'from_numax' or None, got {self.initial_rank!r}")
            start = {"initial_rank": None, "initial_map": "from_numax"}
        if self.n_secants is None:
            if rank is None:
                result = rank_adjust_cg(X, delta, method=self._method, rank_step=self.rank_step,
                                        restart=self.restart, scan_backend=self.scan_backend, **start, **common,
                                        **options)
            else:
                result = near_isometric_cg(X, delta, rank, method=self._method, initial_map=self.init,
                                           scan_backend=self.scan_backend, **common, **options)
        else:
            n_secants = check_positive_int(self.n_secants, "n_secants")
            _, pairs = sample_secants(X, n_secants, random_state=self.random_state, return_pairs=True)
            if len(pairs) == 0:
                raise ValueError("X has no two distinct points: all secants are zero")
            secants = PairSecantOperator(X, pairs[:, 0], pairs[:, 1])
            if rank is None:
                result = rank_adjust(secants, delta, method=self._method, rank_step=self.rank_step,
                                     restart=self.restart, **start, **common, **options)
            else:
                result = METHODS[self._method](secants, delta, rank, initial_map=self.init, **common, **options)
        self._store(result)
        return result.Psi

    def _store(self, result) -> None:
        if self.delta is not None and (not result.success or not result.feasible):
            warnings.warn(
                f"{type(self).__name__} did not reach delta={result.delta:g} (achieved {result.isometry:.6g}; "
                f"{result.status}: {result.message})",
                ConvergenceWarning,
                stacklevel=4,
            )
        self.result_ = result
        self.n_iter_ = int(result.iterations)
        self.isometry_constant_ = float(result.isometry)


_COMMON_PARAMETERS = """delta : float, optional
        Requested isometry constant δ ∈ (0, 1): every training secant v should keep
        ‖Ψv‖² within 1 ± δ (a ``ConvergenceWarning`` when it is not reached). With neither
        ``delta`` nor ``n_components``, δ = 0.1.
    n_components : int, optional
        Fix the rank M. By default M is found by rank adjustment (Algorithm 3 of Luo et al.).
        Alone (no ``delta``), the fit keeps the least distorting rank-M map it finds (see the
        module docstring).
    n_secants : int, optional
        Use a seeded sample of this many pairs (solved directly) instead of all pairs
        (column generation, Algorithm 4 of Luo et al.).
    initial_rank : int or "from_numax", optional
        R₀ of the rank adjustment (default: the smallest rank at which the scaled principal
        directions of the secants already meet δ). ``"from_numax"``: the rank of NuMax's solution on
        the same secants, a rank at which a map meeting δ exists, with its factor as the first
        start (NuMax is solved first; see
        :mod:`~sdpembed.solvers.near_isometric.rank_adjust`, "R₀ from NuMax").
    rank_step : "bisect", "halving" or int, default="bisect"
        Rank steps of the rank adjustment (1: Algorithm 3 verbatim; see
        :func:`~sdpembed.solvers.near_isometric.rank_adjust.rank_adjust`).
    restart : {"pca", "truncate"}, default="pca"
        Start at each new rank: the principal directions, or Algorithm 3's truncation of the
        last map that met δ.
    init : {"pca", "random"} or ndarray, default="pca"
        Start map of a fixed-rank fit.
    max_iter : int, default=5000
        Iteration limit of each run of the method (with column generation: over all rounds).
    random_state : None, int or Generator
        Seed of the secant sample, the working set and ``init="random"``.
    verbose : bool or int, default=False
        Progress of the rank adjustment / column generation (an int > 1 also prints the
        method's own progress every ``verbose`` iterations).
    scan_backend : ScanBackend, "local" or None, default=None
        Where column generation scans all pairs (:mod:`sdpembed.solvers.numax.scan_backend`: this
        process by default, or a :class:`~sdpembed.solvers.numax.scan_backend.DaskScan` of a Dask
        cluster); unused with ``n_secants``. The estimator holds the backend as given: close a
        Dask backend after the fit."""

_ATTRIBUTES = """components_ : ndarray of shape (n_components_, n_features_in_)
        Ψ; ``transform(X) = X Ψᵀ``.
    n_components_ : int
        M, the embedding dimension.
    isometry_constant_ : float
        max |‖Ψv‖² − 1| over the training secants (all pairs, or the sample).
    result_ : NearIsometricResult
        Status (``converged`` = δ reached; never a claim of optimality), history, timings.
    n_iter_ : int
        Iterations of the method, all runs together.
    n_features_in_ : int"""


class FroMax(_NearIsometric):
    __doc__ = f"""Near-isometric linear embedding by FroMax (Luo et al., Sec. 3, Algorithm 1).

    Frobenius-norm matrix factorisation P ≈ XY, Y = Xᵀ = Ψ, under the NuMax box
    |vᵀPv − 1| ≤ δ, solved by ADMM (:func:`~sdpembed.solvers.near_isometric.fromax.fromax`).

    Parameters
    ----------
    {_COMMON_PARAMETERS}
    beta1, beta2 : float, default=1.0
        Penalties of (3.4).
    eta : float, default=1.0
        Multiplier step of (3.12)–(3.13).
    margin : float, default=1e-3
        Relative shrinkage of the δ-box in the q-step.

    Attributes
    ----------
    {_ATTRIBUTES}

    Examples
    --------
    >>> from sdpembed.datasets import translating_squares
    >>> X = translating_squares(7, 3)
    >>> model = FroMax(delta=0.4, n_components=7, random_state=0).fit(X)
    >>> model.isometry_constant_ <= 0.4
    True
    """

    _method = "fromax"
    _method_params = ("beta1", "beta2", "eta", "margin")

    def __init__(
        self,
        delta: float | None = None,
        *,
        n_components: int | None = None,
        n_secants: int | None = None,
        initial_rank: int | str | None = None,
        rank_step: int | str = "bisect",
        restart: str = "pca",
        init: str | np.ndarray = "pca",
        max_iter: int = 5000,
        beta1: float = 1.0,
        beta2: float = 1.0,
        eta: float = 1.0,
        margin: float = 1e-3,
        random_state=0,
        verbose: bool | int = False,
        scan_backend=None,
    ) -> None:
        self.delta = delta
        self.n_components = n_components
        self.n_secants = n_secants
        self.initial_rank = initial_rank
        self.rank_step = rank_step
        self.restart = restart
        self.init = init
        self.max_iter = max_iter
        self.beta1 = beta1
        self.beta2 = beta2
        self.eta = eta
        self.margin = margin
        self.random_state = random_state
        self.verbose = verbose
        self.scan_backend = scan_backend


class NILEPro(_NearIsometric):
    __doc__ = f"""Near-isometric linear embedding by NILE-Pro (Luo et al., Sec. 4, Algorithm 2).

    Minimises the worst distortion ‖𝒜(ΨᵀΨ) − 1‖_∞ of a rank-M map directly, by ADMM with a
    Moreau (ℓ₁-ball) step (:func:`~sdpembed.solvers.near_isometric.nilepro.nilepro`).

    Parameters
    ----------
    {_COMMON_PARAMETERS}
    beta : float, default=0.1
        Penalty of (4.3).

    Attributes
    ----------
    {_ATTRIBUTES}

    Examples
    --------
    >>> from sdpembed.datasets import translating_squares
    >>> X = translating_squares(7, 3)
    >>> model = NILEPro(delta=0.25, random_state=0).fit(X)
    >>> model.isometry_constant_ <= 0.25
    True
    """

    _method = "nilepro"
    _method_params = ("beta",)

    def __init__(
        self,
        delta: float | None = None,
        *,
        n_components: int | None = None,
        n_secants: int | None = None,
        initial_rank: int | str | None = None,
        rank_step: int | str = "bisect",
        restart: str = "pca",
        init: str | np.ndarray = "pca",
        max_iter: int = 5000,
        beta: float = 0.1,
        random_state=0,
        verbose: bool | int = False,
        scan_backend=None,
    ) -> None:
        self.delta = delta
        self.n_components = n_components
        self.n_secants = n_secants
        self.initial_rank = initial_rank
        self.rank_step = rank_step
        self.restart = restart
        self.init = init
        self.max_iter = max_iter
        self.beta = beta
        self.random_state = random_state
        self.verbose = verbose
        self.scan_backend = scan_backend
