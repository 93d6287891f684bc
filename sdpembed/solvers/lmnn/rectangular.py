"""LMNN with a rectangular L (thesis Sec. 2.1.8, "LMNN for dimensionality reduction"): a local
minimum of the loss (2.11) over L ∈ ℝ^{r×d}, r ≤ d, by L-BFGS on its (sub)gradient.

With M = LᵀL (2.9) the loss (2.11) is

    ε(L) = (1 − μ) Σ_{j⇝i} ‖L(x_i − x_j)‖² + μ Σ_{(i,j,l)} [1 + ‖L(x_i − x_j)‖² − ‖L(x_i − x_l)‖²]₊,

and, by the chain rule through M = LᵀL, its gradient is 2 L G with G the (sub)gradient (2.14)
of the loss in M: ∂ε/∂L = 2[(1 − μ) L P + μ Σ_{𝒩} (L u uᵀ − L w wᵀ)], u = x_i − x_j,
w = x_i − x_l, 𝒩 the active triplets. It is formed as r × d products (Lu, Lw are the mapped
differences), never as a d × d matrix. Constraining L to r < d rows makes the problem
non-convex (the set {M ⪰ 0, rank M ≤ r} is not convex): the run ends at a local minimum — or
a kink of the hinge where the line search stalls — and reports ``converged`` (the relative
decrease of the loss fell below the tolerance), ``stalled`` (the line search found no
decrease) or ``max_iterations``; never ``optimal``, which this project reserves for a certified
optimum (:data:`sdpembed.results.STATUSES`). At r = d the loss is the convex (2.11) in M = LᵀL,
and every stationary point of ε(L) with L of full rank is its global optimum (Burer–Monteiro);
the tests check that the run reaches the certified optimum's loss there.

The active triplets of each evaluation are found in the r-dimensional space of the mapped points
Lx, by one of three searches that return the same set: the brute-force scan over all triplets
(:func:`sdpembed.graphs.targets.iter_hinges`), the ball-tree range search (2.20)
(:func:`sdpembed.graphs.balltree.balltree_hinges`) or the float32 Gram radius filter
(:func:`sdpembed.graphs.targets.radius_hinges`). ``benchmarks/balltree.py`` measures them (BENCHMARKS.md,
"Ball trees"): the ball trees beat the brute-force scan in few dimensions, as the thesis reports,
but the radius filter was faster than both at every measured size and dimension, so ``"auto"``
is the radius filter.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the loss (2.11) in L, M = LᵀL (2.9), with its gradient
   from (2.14), "LMNN for dimensionality reduction" and the ball-tree hinge search (2.20) of
   Sec. 2.1.8.
.. [2] L. Torresani and K.-C. Lee, "Large margin component analysis", NIPS 19, 2007 (LMNN
   optimised over a rectangular L).
.. [3] S. Burer and R. D. C. Monteiro, "Local minima and convergence in low-rank semidefinite
   programming", Math. Program. 103, 2005 (stationary points of full rank are optimal).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..._progress import say
from ..._validate import as_matrix, check_positive_int
from ...graphs import ACCUMULATION_BLOCK, balltree_hinges, impostor_triplets, radius_hinges
from ..lbfgs import minimize_lbfgs

__all__ = ["RECTANGULAR_STATUSES", "RectangularLMNNResult", "rectangular_loss", "solve_lmnn_rectangular"]

#: The statuses of a rectangular run: a local stop, never ``optimal`` (the problem is non-convex).
RECTANGULAR_STATUSES = ("converged", "stalled", "max_iterations")

#: The hinge searches of :func:`rectangular_loss` ("auto": the radius filter, the fastest measured).
SEARCHES = ("auto", "radius", "balltree", "brute")


@dataclass
class RectangularLMNNResult:
    """Outcome of :func:`solve_lmnn_rectangular`.

    ``L`` (r, d) the map, ``objective`` the loss (2.11) of M = LᵀL, ``status`` one of
    :data:`RECTANGULAR_STATUSES` (a local stop; no optimality is claimed), ``message``, L-BFGS
    ``iterations`` and loss ``evaluations``, ``active`` triplets at L, the hinge ``search`` used,
    ``seconds`` (wall) and the loss after each iteration in ``history``.
    """

    L: np.ndarray
    objective: float
    status: str
    message: str
    iterations: int
    evaluations: int
    active: int
    search: str
    seconds: float
    history: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        if self.status not in RECTANGULAR_STATUSES:
            raise ValueError(f"status must be one of {RECTANGULAR_STATUSES}, got {self.status!r}")

    @property
    def metric(self) -> np.ndarray:
        """M = LᵀL (2.9)."""
        return self.L.T @ self.L

    @property
    def converged(self) -> bool:
        """True for status ``converged`` (a local stop; not optimality)."""
        return self.status == "converged"


def _search(search: str) -> str:
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
    return "radius" if search == "auto" else search


def rectangular_loss(instance, L: np.ndarray, *, search: str = "auto") -> tuple[float, np.ndarray, int]:
    """The loss (2.11) at M = LᵀL and its gradient 2 L G in L (G the (sub)gradient (2.14)).

    Parameters
    ----------
    instance : LMNNInstance
        Points, labels, target neighbours and μ.
    L : ndarray of shape (r, d)
    search : {"auto", "radius", "balltree", "brute"}
        How the active triplets are found, in the space of the mapped points Lx (module docstring).

    Returns
    -------
    loss : float
    gradient : ndarray of shape (r, d)
    active : int
        Number of triplets with a positive hinge.
    """
    X, y, targets, mu = instance.X, instance.y, instance.targets, instance.mu
    L = np.asarray(L, dtype=np.float64)
    Z = X @ L.T                                                        # the mapped points Lx
    chosen = _search(search)
    if chosen == "balltree":
        active, hinges = balltree_hinges(Z, y, targets)
    elif chosen == "radius":
        active, hinges = radius_hinges(Z, y, targets)
    else:
        active, hinges = impostor_triplets(Z, y, targets, return_hinges=True)
    U = Z[:, None, :] - Z[targets]                                     # L(x_i − x_j), (n, k, r)
    pull = float(np.sum(U * U))
    # (1 − μ) L P through the mapped target differences: Σ (Lu) uᵀ
    V = (X[:, None, :] - X[targets]).reshape(-1, X.shape[1])
    grad = (1.0 - mu) * (U.reshape(-1, Z.shape[1]).T @ V)
    for start in range(0, active.shape[0], ACCUMULATION_BLOCK):      # μ Σ_𝒩 (Lu uᵀ − Lw wᵀ)
        t = active[start:start + ACCUMULATION_BLOCK]
        u, w = X[t[:, 0]] - X[t[:, 1]], X[t[:, 0]] - X[t[:, 2]]
        grad += mu * ((u @ L.T).T @ u - (w @ L.T).T @ w)
    return (1.0 - mu) * pull + mu * float(hinges.sum()), 2.0 * grad, int(active.shape[0])


def _initial_map(instance, r: int, init) -> np.ndarray:
    """L0: the r leading principal directions of X ("pca"), the first r rows of the identity
    ("identity"), or a given (r, d) array."""
    d = instance.dim
    if isinstance(init, str):
        if init == "identity":
            return np.eye(r, d)
        if init == "pca":
            Z = instance.X - instance.X.mean(axis=0)
            _, _, Vt = np.linalg.svd(Z, full_matrices=False)
            L0 = np.zeros((r, d))
            L0[:Vt.shape[0]] = Vt[:r]
            return L0
        raise ValueError(f"init must be 'pca', 'identity' or an array of shape ({r}, {d}), got {init!r}")
    L0 = as_matrix(init, "init")
    if L0.shape != (r, d):
        raise ValueError(f"init must have shape ({r}, {d}), got {L0.shape}")
    return L0.copy()


def solve_lmnn_rectangular(
    instance,
    n_components: int | None = None,
    *,
    init: str | np.ndarray = "pca",
    search: str = "auto",
    max_iter: int = 1000,
    tol: float = 1e-9,
    verbose: bool | int = False,
) -> RectangularLMNNResult:
    """A local minimum of the loss (2.11) over a rectangular L (r × d), by L-BFGS.

    Parameters
    ----------
    instance : LMNNInstance
    n_components : int, optional
        r, the rows of L (the output dimension), 1 ≤ r ≤ d; d by default.
    init : {"pca", "identity"} or ndarray of shape (r, d)
        The starting map: the r leading principal directions of X, the first r rows of the
        identity, or a given array.
    search : {"auto", "radius", "balltree", "brute"}
        The active-triplet search (module docstring).
    max_iter : int
        L-BFGS iterations at most.
    tol : float
        ``converged`` when the loss decreased by at most ``tol`` (relative, over 5 iterations).
    verbose : bool or int
        Print the loss every ``verbose`` iterations (``True``: 10).

    Returns
    -------
    RectangularLMNNResult
        Never ``optimal``: a local status (module docstring).
    """
    start = time.perf_counter()
    d = instance.dim
    r = d if n_components is None else n_components
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 1 <= r <= d:
        raise ValueError(f"n_components must be an integer in [1, {d}] or None, got {n_components!r}")
    max_iter = check_positive_int(max_iter, "max_iter")
    if not (np.isfinite(tol) and tol >= 0.0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    chosen = _search(search)
    L0 = _initial_map(instance, int(r), init)
    shape = L0.shape
    every = 10 if verbose is True else int(verbose)

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        loss, grad, _ = rectangular_loss(instance, x.reshape(shape), search=chosen)
        return loss, grad.ravel()

    def report(iteration: int, value: float) -> None:
        if every and iteration % every == 0:
            say(f"iter {iteration:5d}  loss {value:.10g}")

    out = minimize_lbfgs(fun, L0.ravel(), max_iter=max_iter, ftol=tol, gtol=0.0, window=5, memory=10,
                         callback=report)
    L = out.x.reshape(shape)
    loss, _, active = rectangular_loss(instance, L, search=chosen)
    status = {"converged": "converged", "line_search_failed": "stalled"}.get(out.status, "max_iterations")
    message = {
        "converged": f"the loss decreased by at most tol={tol:g} (relative) over 5 iterations: a local minimum",
        "stalled": "the line search found no decrease (a kink of the hinge loss): a local stop",
        "max_iterations": f"max_iter={max_iter} reached",
    }[status] + f" after {out.nit} iteration(s); non-convex for r < d, no optimality is claimed"
    if verbose:
        say(f"done: loss {loss:.10g}  active {active}  [{status}]")
    return RectangularLMNNResult(L=L, objective=float(instance.objective(L.T @ L)), status=status,
                                 message=message, iterations=int(out.nit), evaluations=int(out.nfev),
                                 active=active, search=chosen, seconds=time.perf_counter() - start,
                                 history=np.asarray(out.trace))
