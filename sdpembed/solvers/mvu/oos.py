"""MVU out-of-sample extension (Weinberger thesis, Sec. 3.1.10): the placement of new points by the
small SDP of (3.31)–(3.33), batched over many new points, with a certified lower bound, and its
refinement.

The SDP, its reduction to the convex problem (P) in (y, s), the closed-form dual (D) and the
certified bound are in :mod:`sdpembed.problems.mvu_oos` (:func:`~sdpembed.problems.mvu_oos.dual_bound`);
the notation (ρ_i, a_i, λ, μ, s*(y)) is that of its docstring. (P) is solved for all points at once
by the interior point with active-set polish of :mod:`sdpembed.solvers.mvu.soc_ipm`
(:func:`place_points`; one point as a registered solve: :func:`solve_mvu_oos`); the k nearest training
inputs of each new input are found by :func:`sdpembed.graphs.neighbour_arrays`.

The primal value is always evaluated at s*(y) = max(‖y‖², c_(j*)), the exact minimiser of
f over s for the given y: c_i = 2y_iᵀy − a_i and c_(j*) is its ⌈(k−1)/2⌉-th smallest value
(the weighted median of Σ_i |s − c_i| + s), or ‖y‖² when k = 1. So the returned S is
feasible by construction (exact identity block, s ≥ ‖y‖²) and within the certified gap of
the optimum. Each point's data are first scaled by L² = max_i max(‖y_i‖², D_i) (f and g
scale by L², y by L), so the same start suits every point.

Refinement ("sdp cg")
---------------------
The thesis also refines the SDP placement by gradient descent on the variational MVU energy
(3.26) of the local patch. With the training embedding fixed, that is, for the new point,

    E(y) = Σ_i (‖y − y_i‖² − D_i)²,

minimised by :func:`refine_points` from the SDP point with a few damped Newton steps (the
Hessian 8Σ(y − y_i)(y − y_i)ᵀ + 4(Σe_i) I with Σe_i clipped at 0, e_i = ‖y − y_i‖² − D_i, and
an Armijo line search); a step is only taken when it decreases E, so E never increases.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the out-of-sample SDP (3.30)–(3.33) of Sec. 3.1.10 and the
   refinement of the placed point by the energy (3.26).
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

from ..._progress import say
from ..._validate import check_positive_int
from ...problems.mvu_oos import MVUOOSInstance, dual_bound, primal_objective
from ...results import SolveResult, build_result
from .soc_ipm import soc_ipm

__all__ = [
    "Placement",
    "place_points",
    "refine_points",
    "solve_mvu_oos",
    "stress",
]


class Placement(NamedTuple):
    """New points placed by :func:`place_points` (each array has one row/entry per point)."""

    y: np.ndarray
    """(m, r) embedding coordinates of the new points."""
    s: np.ndarray
    """(m,) the corner s of S = [[I, y], [yᵀ, s]], s ≥ ‖y‖²."""
    objective: np.ndarray
    """(m,) Σ|ŷ_iᵀSŷ_i − D_i| + s at the returned S."""
    dual_bound: np.ndarray
    """(m,) certified lower bound g(λ) on the optimum of each point's SDP."""


# --------------------------------------------------------------------------- validation
def _check_batch(Y_neighbours: object, sqdist: object) -> tuple[np.ndarray, np.ndarray]:
    """Validated float64 arrays (m, k, r) and (m, k), or a ValueError naming the argument."""
    try:
        Y = np.asarray(Y_neighbours, dtype=np.float64)
        D = np.asarray(sqdist, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Y_neighbours and sqdist must be numeric arrays: {exc}") from None
    if Y.ndim != 3:
        raise ValueError(
            f"Y_neighbours must be a 3-D array (m points, k neighbours, r output dimensions), got shape {Y.shape}"
        )
    m, k, r = Y.shape
    if r < 1:
        raise ValueError(f"Y_neighbours must have at least one output dimension, got shape {Y.shape}")
    if D.shape != (m, k):
        raise ValueError(
            f"sqdist must have shape (m, k) = {(m, k)} to match Y_neighbours {Y.shape} (one squared input "
            f"distance per neighbour), got {D.shape}"
        )
    if k < r:
        raise ValueError(
            f"a new point needs at least r = {r} neighbours to be placed in an {r}-D embedding, got k = {k}"
        )
    if not np.all(np.isfinite(Y)):
        raise ValueError("Y_neighbours contains NaN or infinite entries")
    if not np.all(np.isfinite(D)):
        raise ValueError("sqdist contains NaN or infinite entries")
    if np.any(D < 0):
        raise ValueError(f"sqdist must be squared distances (>= 0), got minimum {D.min():.6g}")
    return Y, D


def _scales(Y: np.ndarray, D: np.ndarray) -> np.ndarray:
    """Per-point L² = max(maxᵢ‖y_i‖², maxᵢ D_i), 1 where the data are all zero."""
    L2 = np.maximum(np.einsum("mkr,mkr->mk", Y, Y).max(axis=1, initial=0.0), D.max(axis=1, initial=0.0))
    return np.where(L2 > 0, L2, 1.0)


def place_points(
    Y_neighbours: np.ndarray,
    sqdist: np.ndarray,
    *,
    tol: float = 1e-10,
    max_iter: int = 50,
    polish: bool = True,
    full_output: bool = False,
    verbose: bool | int = False,
) -> Placement | tuple[Placement, dict[str, Any]]:
    """Place m new points into an r-D embedding by the out-of-sample SDP of Sec. 3.1.10.

    Vectorised over the points: one interior-point run steps all of them together, each
    retiring when its certified gap reaches ``tol``; then the active-set polish solves each
    point's KKT system exactly and is kept wherever it improves the certificate
    (:mod:`sdpembed.solvers.mvu.soc_ipm`).

    Parameters
    ----------
    Y_neighbours : ndarray of shape (m, k, r)
        For each new point, the embedding coordinates y_i of its k nearest training inputs
        (k ≥ r).
    sqdist : ndarray of shape (m, k)
        The squared input distances D_i = ‖x_i − x_t‖² to those neighbours.
    tol : float
        Target certified gap, relative to max(L², |f|) where L² = max_i max(‖y_i‖², D_i) is
        the scale of the point's data.
    max_iter : int
        Interior-point iterations; 10–20 are typical.
    polish : bool
        Run the active-set polish after the interior-point method.
    full_output : bool
        Also return a dict with the multipliers ``lam`` (m, k), ``iterations`` (m,),
        ``converged`` (m,: certified gap ≤ tol), ``gap`` (m,) and ``scale`` (m,: L²).
    verbose : bool or int
        Progress of the interior-point run: True every iteration, K every K-th (points still
        active, their worst and median certified gap).

    Returns
    -------
    Placement
        Named tuple ``(y, s, objective, dual_bound)``: the points (m, r), the corner s with
        s ≥ ‖y‖² (m,), the objective Σ|ŷ_iᵀSŷ_i − D_i| + s (m,) and a certified lower bound
        on each optimum (m,).
    info : dict
        Only with ``full_output=True``.

    Raises
    ------
    ValueError
        Shapes that do not match, fewer than r neighbours, NaN/inf entries, negative distances.
    """
    Y, D = _check_batch(Y_neighbours, sqdist)
    max_iter = check_positive_int(max_iter, "max_iter")
    if not (isinstance(tol, (int, float)) and np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    L2 = _scales(Y, D)
    L = np.sqrt(L2)
    Ys, Ds = Y / L[:, None, None], D / L2[:, None]
    out = soc_ipm(Ys, Ds, tol, max_iter, polish, verbose=verbose)
    lam = out["lam"]
    # the certificate is evaluated on the original data
    y = out["y"] * L[:, None]
    objective, s = primal_objective(y, Y, D)
    bound = dual_bound(lam, Y, D)
    placement = Placement(y=y, s=s, objective=objective, dual_bound=bound)
    if not full_output:
        return placement
    gap = objective - bound
    info = {
        "lam": np.clip(lam, -1.0, 1.0),
        "iterations": out["iterations"],
        "converged": gap <= tol * np.maximum(L2, np.abs(objective)),
        "gap": gap,
        "scale": L2,
    }
    return placement, info


# ----------------------------------------------------------------------- refinement
def stress(y: np.ndarray, Y_neighbours: np.ndarray, sqdist: np.ndarray) -> np.ndarray:
    """E(y) = Σ_i (‖y − y_i‖² − D_i)², the energy (3.26) of the inserted point's patch, (m,)."""
    diff = np.asarray(y, dtype=np.float64)[:, None, :] - Y_neighbours
    e = np.einsum("mkr,mkr->mk", diff, diff) - sqdist
    return np.einsum("mk,mk->m", e, e)


def refine_points(
    y0: np.ndarray,
    Y_neighbours: np.ndarray,
    sqdist: np.ndarray,
    *,
    max_iter: int = 20,
    tol: float = 1e-10,
) -> tuple[np.ndarray, np.ndarray]:
    """The "sdp cg" post-processing of Sec. 3.1.10: descend E(y) of (3.26) from the SDP point.

    Damped Newton steps, vectorised over the points: the Hessian of E is
    8Σ_i d_i d_iᵀ + 4(Σ_i e_i) I (d_i = y − y_i, e_i = ‖d_i‖² − D_i); Σ_i e_i is clipped at 0
    (plus a tiny ridge) to keep it positive definite — exact Newton where the patch is too
    long, Gauss–Newton where it is too short. The step length is Armijo's: the full step
    first, then 2⁻¹, …, 2⁻³⁰ evaluated together for the points where it fails. A point moves
    only when E decreases, so E(refined) ≤ E(y0) for every point. The thesis
    runs conjugate gradients on the local patch; with the training embedding held fixed the
    patch energy is a function of the new point alone, of dimension r ≤ a few, for which
    Newton steps converge in a handful of iterations.

    Parameters
    ----------
    y0 : ndarray of shape (m, r)
        Starting points (the SDP placement).
    Y_neighbours : ndarray of shape (m, k, r)
    sqdist : ndarray of shape (m, k)
    max_iter : int
    tol : float
        Stop a point when its step changes E by less than ``tol`` relative to E.

    Returns
    -------
    y : ndarray of shape (m, r)
        Refined points.
    energy : ndarray of shape (m,)
        E at the refined points.
    """
    Y, D = _check_batch(Y_neighbours, sqdist)
    y = np.array(y0, dtype=np.float64)
    m, k, r = Y.shape
    if y.shape != (m, r):
        raise ValueError(f"y0 must have shape (m, r) = {(m, r)} to match Y_neighbours, got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y0 contains NaN or infinite entries")
    max_iter = check_positive_int(max_iter, "max_iter")
    energy = stress(y, Y, D)
    halvings = 0.5 ** np.arange(1, 31)
    active = np.arange(m)
    for _ in range(max_iter):
        if active.size == 0:
            break
        ya, Ya, Da, Ea = y[active], Y[active], D[active], energy[active]
        diff = ya[:, None, :] - Ya
        e = np.einsum("mkr,mkr->mk", diff, diff) - Da
        grad = 4.0 * np.einsum("mk,mkr->mr", e, diff)
        H = 8.0 * np.einsum("mkr,mkq->mrq", diff, diff)
        ridge = 4.0 * np.maximum(e.sum(axis=1), 0.0) + 1e-12 * np.trace(H, axis1=1, axis2=2) + 1e-300
        H[:, range(r), range(r)] += ridge[:, None]
        p = -np.linalg.solve(H, grad[:, :, None])[:, :, 0]
        slope = np.einsum("mr,mr->m", grad, p)                            # < 0: H is positive definite
        # Armijo: the full step first, then all halvings at once for the points it fails
        new_y = ya + p
        new_E = stress(new_y, Ya, Da)
        ok = (new_E <= Ea + 1e-4 * slope) & (new_E < Ea)
        retry = np.flatnonzero(~ok)
        if retry.size:
            trial = ya[retry, None, :] + halvings[None, :, None] * p[retry, None, :]   # (j, steps, r)
            tdiff = trial[:, :, None, :] - Ya[retry, None, :, :]
            te = np.einsum("mjkr,mjkr->mjk", tdiff, tdiff) - Da[retry, None, :]
            trial_E = np.einsum("mjk,mjk->mj", te, te)
            armijo = (trial_E <= Ea[retry, None] + 1e-4 * halvings[None, :] * slope[retry, None]) & (
                trial_E < Ea[retry, None]
            )
            found = armijo.any(axis=1)
            first = np.argmax(armijo, axis=1)
            pick = retry[found]
            new_y[pick] = trial[found, first[found]]
            new_E[pick] = trial_E[found, first[found]]
            ok[pick] = True
        y[active] = np.where(ok[:, None], new_y, ya)
        energy[active] = np.where(ok, new_E, Ea)
        still = ok & (Ea - energy[active] > tol * np.maximum(Ea, 1e-300))
        active = active[still]
    return y, energy


# ---------------------------------------------------------------- single instance
def solve_mvu_oos(
    instance: MVUOOSInstance,
    *,
    tol: float = 1e-10,
    max_iter: int = 50,
    gap_tol: float = 1e-8,
    polish: bool = True,
    verbose: bool | int = False,
) -> SolveResult:
    """Solve one :class:`~sdpembed.problems.MVUOOSInstance` by the interior-point method with
    active-set polish (:mod:`sdpembed.solvers.mvu.soc_ipm`) and certify the answer.

    Parameters
    ----------
    instance : MVUOOSInstance
        Neighbour outputs ``Y`` (k, r) and squared distances ``sqdist`` (k,).
    tol, max_iter, polish
        Those of :func:`place_points` (``tol`` is the target gap of the iteration).
    gap_tol : float
        The status is ``optimal`` only when the certified gap objective − dual_bound is at most
        ``gap_tol · max(L², |objective|)``, L² = max_i max(‖y_i‖², D_i) the scale of the data;
        otherwise ``max_iterations`` (iteration limit reached) or ``inaccurate``.
    verbose : bool or int
        Print every iteration's certified gap (True, or every K-th for an integer K), then the
        result.

    Returns
    -------
    SolveResult
        ``solution`` is S = [[I, y], [yᵀ, s]] (exact identity block, s ≥ ‖y‖²); ``extra``
        holds the point ``y``, ``s`` and the multipliers ``lam`` of the certificate.
    """
    start = time.perf_counter()
    if not (isinstance(gap_tol, (int, float)) and np.isfinite(gap_tol) and gap_tol > 0):
        raise ValueError(f"gap_tol must be a positive number, got {gap_tol!r}")
    placement, info = place_points(
        instance.Y[None], instance.sqdist[None], tol=tol, max_iter=max_iter, polish=polish, full_output=True,
        verbose=verbose)
    y, s = placement.y[0], float(placement.s[0])
    r = y.shape[0]
    S = np.eye(r + 1)
    S[:r, r] = S[r, :r] = y
    S[r, r] = s
    objective = float(instance.objective(S))
    bound = float(placement.dual_bound[0])
    gap = objective - bound
    iterations = int(info["iterations"][0])
    limit = gap_tol * max(float(info["scale"][0]), abs(objective))
    if gap <= limit:
        status, message = "optimal", f"certified gap {gap:.2e} <= {limit:.2e}"
    elif iterations >= max_iter:
        status, message = "max_iterations", f"stopped after {max_iter} iterations with certified gap {gap:.2e}"
    else:
        status, message = "inaccurate", f"certified gap {gap:.2e} above {limit:.2e} (stalled in rounding)"
    result = build_result(
        instance.problem, instance.variable, S, objective, bound, status=status, message=message, method="ipm",
        solver="mvu_oos_ipm", max_violation=float(instance.max_violation(S)), iterations=iterations, start=start,
        extra={"y": y, "s": s, "lam": info["lam"][0]},
    )
    if verbose:
        say(str(result))
    return result
