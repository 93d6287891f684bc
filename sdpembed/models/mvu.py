"""The :class:`MVU` estimator: maximum variance unfolding (thesis Sec. 3.1, Table 3.1), scikit-learn
style.

``fit`` runs the three steps of Table 3.1 — the neighbourhood graph
(:func:`sdpembed.graphs.neighborhood_graph`), the SDP (any variant of
:class:`~sdpembed.problems.MVUInstance`, by the certified interior-point method, CVXPY, or
large-scale variational MVU with refinement, Sec. 3.1.8) and the spectral step (3.20)–(3.21).
``transform`` returns ``embedding_`` for the training inputs and places new inputs by the
out-of-sample SDP of Sec. 3.1.10 (:func:`sdpembed.solvers.mvu.oos.place_points`); its docstring
says what that placement does to a point.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: Table 3.1, the spectral step (3.20)–(3.21), variational
   MVU (Sec. 3.1.8) and the out-of-sample SDP (Sec. 3.1.10).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validate import check_positive_int
from ..graphs import link_components, neighborhood_graph, neighbour_arrays
from ..problems import MVUInstance
from ..registry import solve
from ..solvers.mvu.oos import place_points
from ..solvers.mvu.spectral import spectral_embedding
from ..solvers.mvu.variational import BASES, variational_mvu

__all__ = ["MVU", "MVU_METHODS"]

#: ``method`` values: the registry's default exact solver for the instance, the certified
#: interior-point method, the certified low-rank (Burer–Monteiro) solver, certified facial reduction,
#: the CVXPY ground truth, variational MVU.
MVU_METHODS = ("auto", "ipm", "lowrank", "facial", "cvxpy", "variational")

#: Largest n for which the variational method also materialises ``kernel_`` = YYᵀ.
KERNEL_LIMIT = 5000


class MVU(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Maximum variance unfolding (thesis Table 3.1).

    Parameters
    ----------
    n_neighbors : int
        k of the neighbourhood graph (the thesis uses 3–5; larger k may "lock up", Sec. 3.1.12).
    n_components : int
        Output dimension d.
    variant : {"equality", "inequality", "slack", "min_trace"}
        The SDP (Sec. 3.1.4, 3.1.6, 3.1.11); ignored by ``method="variational"``.
    omega : float, optional
        ω of the slack variant (default 0.9 there) and of variational MVU (default 0.999).
    method : {"ipm", "auto", "lowrank", "facial", "cvxpy", "variational"}
        The certified interior-point method (:mod:`sdpembed.solvers.mvu.ipm`); ``"auto"``, the
        registry's default exact solver for the instance (the low-rank solver for the inequality
        variant from ``registry.MVU_LOWRANK_FROM_N`` points, the interior point
        otherwise); the certified low-rank Burer–Monteiro solver
        (:mod:`sdpembed.solvers.mvu.lowrank`, faster for large n); certified facial reduction
        (:mod:`sdpembed.solvers.mvu.facial`: the equality and min_trace variants, whose SDP can lack an
        interior — a graph that locks up, Sec. 3.1.12 —, up to thousands of points; the other variants go to
        the interior point); CVXPY; or variational MVU + refinement
        (:mod:`sdpembed.solvers.mvu.variational`, for large n).
    angles : bool
        Join neighbours of the same input (the angle-preserving edges of Fig. 3.6).
    link : bool
        Connect a disconnected graph by the procedure of Sec. 3.1.12 instead of raising.
    n_basis : int
        m, basis eigenvectors for ``method="variational"``.
    basis : {"laplacian", "lle"}
        The basis of ``method="variational"``: the graph Laplacian's bottom eigenvectors (3.24)
        or LLE's (its reconstruction from the ``n_neighbors`` nearest inputs; Sec. 3.1.8,
        Fig. 3.17).
    oos_neighbors : int, optional
        Neighbours of a new input for ``transform`` (default max(n_neighbors, n_components)).
    verbose : bool or int
        Progress of the solver and of ``transform``'s out-of-sample interior point: an integer
        K prints a line every K iterations (``True``: every iteration of the interior points);
        variational MVU announces its stages and prints its refinements every K L-BFGS
        iterations (``True``: 50).
    random_state : None, int or Generator
        Seed of the linking procedure.

    Attributes
    ----------
    embedding_ : ndarray of shape (n, n_components)
        Outputs of the training inputs (3.21).
    kernel_ : ndarray of shape (n, n) or None
        The learned inner-product matrix K (for ``variational``: YYᵀ of the refined outputs,
        None above 5000 points).
    eigenvalues_ : ndarray
        Eigenvalues of K, largest first (for ``variational``: those of the refined outputs).
    result_ : SolveResult or VariationalResult
        The solver's full output (status, certified gap, history ...).
    edges_, sqdist_ : ndarray
        The neighbourhood graph used.
    """

    def __init__(
        self,
        n_neighbors: int = 4,
        n_components: int = 2,
        *,
        variant: str = "equality",
        omega: float | None = None,
        method: str = "ipm",
        angles: bool = True,
        link: bool = False,
        n_basis: int = 10,
        basis: str = "laplacian",
        oos_neighbors: int | None = None,
        verbose: bool | int = False,
        random_state=0,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.variant = variant
        self.omega = omega
        self.method = method
        self.angles = angles
        self.link = link
        self.n_basis = n_basis
        self.basis = basis
        self.oos_neighbors = oos_neighbors
        self.verbose = verbose
        self.random_state = random_state

    @property
    def _n_features_out(self) -> int:
        # read by get_feature_names_out (columns mvu0, mvu1, …)
        return self.embedding_.shape[1]

    def _check_params(self, n: int) -> None:
        for name in ("n_neighbors", "n_components", "n_basis"):
            check_positive_int(getattr(self, name), name)
        if self.n_neighbors >= n:
            raise ValueError(f"n_neighbors must be smaller than the number of points n = {n}, got {self.n_neighbors}")
        if self.n_components > n:
            raise ValueError(f"n_components must be at most n = {n}, got {self.n_components}")
        if self.method not in MVU_METHODS:
            raise ValueError(f"method must be one of {MVU_METHODS}, got {self.method!r}")
        if self.variant not in MVUInstance.VARIANTS:
            raise ValueError(f"variant must be one of {MVUInstance.VARIANTS}, got {self.variant!r}")
        if self.basis not in BASES:
            raise ValueError(f"basis must be one of {BASES}, got {self.basis!r}")

    def fit(self, X: np.ndarray, y: None = None) -> MVU:
        """Unfold the inputs ``X`` (n, D): graph, SDP, spectral step (Table 3.1)."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=3)
        n = X.shape[0]
        self._check_params(n)
        edges, D = neighborhood_graph(X, self.n_neighbors, angles=self.angles)
        if self.link:
            edges, D = link_components(X, edges, random_state=self.random_state)
        if self.method == "variational":
            from ..formulations.mvu import solve_variational_sdp  # CVXPY, loaded only for this method

            omega = 0.999 if self.omega is None else self.omega
            result = variational_mvu(edges, D, n, solve_sdp=solve_variational_sdp, n_components=self.n_components,
                                     n_basis=self.n_basis, omega=omega, verbose=self.verbose, basis=self.basis,
                                     X=X, lle_neighbors=self.n_neighbors)
            self.embedding_ = result.embedding
            w = np.linalg.eigvalsh(self.embedding_.T @ self.embedding_)[::-1]
            self.eigenvalues_ = np.maximum(w, 0.0)
            self.kernel_ = self.embedding_ @ self.embedding_.T if n <= KERNEL_LIMIT else None
        else:
            omega = (0.9 if self.omega is None else self.omega) if self.variant == "slack" else None
            instance = MVUInstance(edges=edges, sqdist=D, n=n, variant=self.variant, omega=omega)
            options = {"verbose": self.verbose} if self.verbose else {}
            result = solve(instance, None if self.method == "auto" else self.method, **options)
            if result.status != "optimal":
                warnings.warn(f"MVU did not reach a certified optimum: {result.status} ({result.message})",
                              ConvergenceWarning, stacklevel=2)
            if not np.all(np.isfinite(result.solution)):
                raise RuntimeError(f"the MVU solver returned no solution: {result.status} ({result.message})")
            self.kernel_ = result.solution
            self.embedding_, self.eigenvalues_ = spectral_embedding(self.kernel_, self.n_components)
        self.result_ = result
        self.edges_, self.sqdist_ = edges, D
        self.X_fit_ = X
        return self

    def fit_transform(self, X: np.ndarray, y: None = None) -> np.ndarray:
        """Fit and return ``embedding_``."""
        return self.fit(X).embedding_

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Outputs of inputs: ``embedding_`` rows for training inputs, the out-of-sample SDP for new ones.

        A row equal to a training input gets that input's row of ``embedding_`` (3.21), so
        ``transform(X_train)`` is ``fit_transform(X_train)``. Every other row is placed by the
        out-of-sample SDP of Sec. 3.1.10 (:func:`sdpembed.solvers.mvu.oos.place_points`, all rows
        at once, each with a certified gap): from the outputs y_i of its ``oos_neighbors``
        nearest training inputs and the squared input distances D_i to them, it minimises
        Σ_i |‖y − y_i‖² − D_i| + ‖y‖², with ‖y‖² relaxed to the corner s of a PSD matrix.

        What that does to a point: it matches the distances to its neighbours' outputs in the
        ℓ₁ sense, and the trace term ‖y‖² pulls it towards the centre of the embedding. The
        outputs y_i are the r leading spectral coordinates of the learned kernel, which meet the
        input distances only up to the truncated spectrum, so even a training input re-placed
        by the SDP lands away from its own output, nearer the centre; a new input next to a
        training input does too. The lookup of training inputs avoids that for them; for new
        points the placement is the thesis's.
        """
        check_is_fitted(self, "embedding_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        k = self.oos_neighbors if self.oos_neighbors is not None else max(self.n_neighbors, self.n_components)
        Y_nb, sq, index = neighbour_arrays(self.X_fit_, self.embedding_, X, k)
        out = np.empty((X.shape[0], self.embedding_.shape[1]))
        seen = sq[:, 0] == 0.0                      # the exact distance to the nearest training input
        out[seen] = self.embedding_[index[seen, 0]]
        if not np.all(seen):
            out[~seen] = place_points(Y_nb[~seen], sq[~seen], verbose=self.verbose).y
        return out
