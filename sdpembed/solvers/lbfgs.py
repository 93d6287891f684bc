"""Unconstrained limited-memory BFGS for large smooth problems (Nocedal & Wright, Algorithm 7.4–7.5).

scipy's ``L-BFGS-B`` carries the machinery of bound constraints (generalised Cauchy point,
subspace minimisation) into every iteration; on the hundreds of thousands of unknowns of a
large MVU refinement that bookkeeping costs more than the objective and gradient themselves
(BENCHMARKS.md, "MVU"). The refinements of Sec. 3.1.8 have no bounds, so this plain L-BFGS — two-loop
recursion, a backtracking Armijo line search with quadratic interpolation, and the curvature
pairs kept only when sᵀy > 0 — does the same job at O(m·n) per iteration.

A preconditioner P (an approximation of the inverse Hessian, symmetric positive definite) may
replace the identity as the initial matrix of the two-loop recursion, H₀ = γP with
γ = sᵀy / yᵀPy from the newest pair (Nocedal & Wright, (7.20), in P's metric): on a graph energy
whose Hessian is close to a graph Laplacian, P = L⁻¹ removes the ill-conditioning of the smooth
modes that otherwise takes hundreds of iterations.

Stopping rules are scipy's: the relative decrease (f_{k−w} − f_k) / max(|f_{k−w}|, |f_k|, 1)
at most ``ftol`` (scipy: w = 1), or the largest gradient entry at most ``gtol``.

References
----------
.. [1] J. Nocedal and S. J. Wright, "Numerical optimization", 2nd ed., Springer, 2006. Implemented
   here: Algorithms 7.4 (two-loop recursion) and 7.5 (L-BFGS); the backtracking line search of
   Algorithm 3.1 with quadratic interpolation (Sec. 3.5).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["LBFGSResult", "minimize_lbfgs"]


@dataclass
class LBFGSResult:
    """Outcome of :func:`minimize_lbfgs`: the point ``x``, its value ``fun`` and gradient ``jac``,
    iterations ``nit``, objective evaluations ``nfev``, ``status`` (``"converged"``,
    ``"max_iterations"`` or ``"line_search_failed"``) and the value after each iteration."""

    x: np.ndarray
    fun: float
    jac: np.ndarray
    nit: int
    nfev: int
    status: str
    trace: np.ndarray


def minimize_lbfgs(
    fun: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0: np.ndarray,
    *,
    max_iter: int = 500,
    ftol: float = 1e-9,
    gtol: float = 1e-12,
    memory: int = 20,
    window: int = 1,
    callback: Callable[[int, float], None] | None = None,
    precondition: Callable[[np.ndarray], np.ndarray] | None = None,
) -> LBFGSResult:
    """Minimise a smooth function by L-BFGS.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> (value, gradient)``.
    x0 : ndarray
        Starting point (flattened internally).
    max_iter : int
        Iteration limit.
    ftol, gtol : float
        Stopping tolerances (module docstring).
    window : int
        Measure the relative decrease of ``ftol`` over this many iterations (1: scipy's rule,
        iteration by iteration; a longer window ignores single short steps on a slow tail).
    memory : int
        Number of curvature pairs (s, y) kept.
    callback : callable, optional
        ``callback(iteration, value)`` after each iteration.
    precondition : callable, optional
        ``precondition(v) -> P v``, P symmetric positive definite: the initial inverse-Hessian
        approximation H₀ = γP (module docstring); ``None``: P = I.

    Returns
    -------
    LBFGSResult
    """
    if memory < 1:
        raise ValueError(f"memory must be a positive integer, got {memory!r}")
    if window < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    x = np.asarray(x0, dtype=np.float64).ravel().copy()
    f, g = fun(x)
    f0 = float(f)
    nfev = 1
    S = np.empty((memory, x.size))
    Y = np.empty((memory, x.size))
    rho = np.empty(memory)
    stored, newest = 0, -1
    trace: list[float] = []
    status = "max_iterations"
    iteration = 0
    for iteration in range(1, max_iter + 1):
        if np.max(np.abs(g)) <= gtol:
            status, iteration = "converged", iteration - 1
            break
        # two-loop recursion: d = −H g
        q = g.copy()
        order = [(newest - k) % memory for k in range(stored)]
        alpha = np.empty(stored)
        for t, k in enumerate(order):
            alpha[t] = rho[k] * (S[k] @ q)
            q -= alpha[t] * Y[k]
        if precondition is None:
            if stored:
                q *= (S[newest] @ Y[newest]) / (Y[newest] @ Y[newest])
            else:
                q *= 1.0 / max(np.linalg.norm(g), 1.0)
        else:
            q = precondition(q)
            if stored:
                q *= (S[newest] @ Y[newest]) / (Y[newest] @ precondition(Y[newest]))
            else:
                q *= 1.0 / max(np.linalg.norm(q), 1.0)
        for t, k in reversed(list(enumerate(order))):
            q += (alpha[t] - rho[k] * (Y[k] @ q)) * S[k]
        d = -q
        slope = float(g @ d)
        if slope >= 0.0:                                # lost descent (rounding): restart from −g
            stored, d = 0, -g / max(np.linalg.norm(g), 1.0)
            slope = float(g @ d)
        step = 1.0
        while True:
            x_new = x + step * d
            f_new, g_new = fun(x_new)
            nfev += 1
            if f_new <= f + 1e-4 * step * slope:
                break
            denominator = 2.0 * (f_new - f - slope * step)
            trial = -slope * step * step / denominator if denominator > 0 else 0.5 * step
            step = min(max(trial, 0.1 * step), 0.5 * step)
            if step < 1e-20:
                status = "line_search_failed"
                break
        if status == "line_search_failed":
            iteration -= 1
            break
        s, y = x_new - x, g_new - g
        sy = float(s @ y)
        if sy > 1e-12 * float(np.linalg.norm(s) * np.linalg.norm(y)):
            newest = (newest + 1) % memory
            S[newest], Y[newest], rho[newest] = s, y, 1.0 / sy
            stored = min(stored + 1, memory)
        x, f, g = x_new, float(f_new), g_new
        trace.append(f)
        before = trace[-1 - window] if len(trace) > window else f0
        decrease = (before - f) / max(abs(before), abs(f), 1.0)
        if callback is not None:
            callback(iteration, f)
        if decrease <= ftol and len(trace) >= window:
            status = "converged"
            break
    return LBFGSResult(x=x, fun=float(f), jac=g, nit=iteration, nfev=nfev, status=status, trace=np.asarray(trace))
