"""Column generation over streamed secants — NuMax Algorithm 2 (NuMax-CG), certified.

The SDP (*) of :mod:`sdpembed.operators` over *all* pairs of n points has n(n−1)/2
constraints, far too many to hold. Column generation solves it on a working set of pairs:

1. solve the restricted problem on the working set with the ADMM (warm-started; loosely
   while violators abound, to full accuracy from the first round that finds none);
2. keep the pairs whose constraint is active (within ``keep_tol`` of a bound) or carries a
   nonzero multiplier;
3. scan **all** pairs, block by block, for violations — without materialising a single
   secant: with Ψ the factor of P (P = ΨᵀΨ) and Y = XΨᵀ, v_ijᵀPv_ij = ‖y_i − y_j‖² / ‖x_i − x_j‖²,
   both squared distances read off Gram matrices;
4. add the worst violators (at most ``max_add``) and repeat.

Exact termination and certificate. The loop stops only after a scan of all pairs finds no
violation above ``feas_tol``: P is then feasible for the full problem. The restricted
problem's dual-feasible multipliers (zero on the pairs outside the working set) are dual
feasible for the full problem too, since I − 𝒜*(y) involves only the pairs with y ≠ 0, so the
restricted dual bound is a lower bound for the full optimum and the reported gap is proven.
Unlike the paper's heuristic stopping, NuMax-CG here is therefore an exact method.

Accuracy of the scan. Squared distances from Gram matrices lose ε·(‖x_i‖² + ‖x_j‖²) to
cancellation; every pair whose violation could exceed ``feas_tol`` within that error is
recomputed from its explicit difference, so the final check is exact to rounding.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.neighbors import NearestNeighbors

from .._validate import as_matrix, check_positive_int, check_random_state
from ..operators import PairSecantOperator
from ..results import SolveResult, relative_gap
from ..secants import linear_index_of_pairs, pair_count, pairs_from_linear_index
from .numax_admm import ADMMState, box_trace_admm, restrict_inverse

__all__ = ["PairBounds", "ScanResult", "scan_pair_violations", "column_generation", "solve_numax_cg", "psd_factor"]

#: ``bounds(i, j) -> (lo, hi)``: the bounds on v_ijᵀPv_ij for the pairs (i[k], j[k]).
PairBounds = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def psd_factor(P: np.ndarray) -> np.ndarray:
    """Ψ (r, N) with ΨᵀΨ = P₊ (the PSD part of P), keeping every positive eigenvalue."""
    w, U = np.linalg.eigh(0.5 * (P + P.T))
    keep = w > 0
    return np.sqrt(w[keep])[:, None] * U[:, keep].T


def _pair_values(X: np.ndarray, P: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """v_ijᵀPv_ij from explicit differences (exact to rounding)."""
    D = X[i] - X[j]
    return np.einsum("ij,ij->i", D @ P, D) / np.einsum("ij,ij->i", D, D)


@dataclass
class ScanResult:
    """Outcome of a scan of all pairs: the violators and the worst violation overall.

    ``max_violation`` is max over all nonzero pairs of max(lo − v'Pv, v'Pv − hi), with the
    pairs near or above ``tol`` evaluated exactly and the rest bounded through the Gram
    values (it can be negative: every constraint strictly satisfied).
    """

    i: np.ndarray
    j: np.ndarray
    violation: np.ndarray
    max_violation: float
    n_pairs: int


def scan_pair_violations(
    X: np.ndarray,
    P: np.ndarray,
    bounds: PairBounds,
    *,
    tol: float = 0.0,
    block_rows: int | None = None,
) -> ScanResult:
    """Scan all pairs i < j of the rows of X for violations of lo ≤ v_ijᵀPv_ij ≤ hi.

    Nothing of size n² or S is held: rows are taken in blocks of ``block_rows`` against all
    later rows. Pairs of identical points (zero secants) are skipped.

    Parameters
    ----------
    X : ndarray of shape (n, N)
    P : ndarray of shape (N, N), PSD
    bounds : callable
        ``bounds(i, j) -> (lo, hi)`` for arrays of pair indices.
    tol : float
        Report pairs whose violation exceeds ``tol``.
    block_rows : int, optional
        Rows per block (default: about 4 million pairs a block).

    Returns
    -------
    ScanResult
        Violating pairs with their exact violations (recomputed from explicit differences),
        and the worst violation over all pairs.
    """
    X = as_matrix(X, "X", min_rows=2)
    n = X.shape[0]
    Psi = psd_factor(P)
    Y = X @ Psi.T
    nx = np.einsum("ij,ij->i", X, X)
    ny = np.einsum("ij,ij->i", Y, Y)
    eps = np.finfo(float).eps
    block_rows = block_rows or max(1, min(n, 4_000_000 // max(n, 1)))
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    worst, counted = -np.inf, 0
    for start in range(0, n - 1, block_rows):
        rows = np.arange(start, min(start + block_rows, n - 1))
        cols = np.arange(rows[0] + 1, n)
        ri, ci = np.nonzero(cols[None, :] > rows[:, None])
        i, j = rows[ri], cols[ci]
        dX = (nx[rows, None] + nx[None, cols] - 2.0 * (X[rows] @ X[cols].T))[ri, ci]
        dY = (ny[rows, None] + ny[None, cols] - 2.0 * (Y[rows] @ Y[cols].T))[ri, ci]
        # rounding of the Gram-based values: absolute errors of about ε·(‖·‖² + ‖·‖²)·√dim
        errX = 8.0 * eps * (nx[i] + nx[j]) * X.shape[1] ** 0.5
        errY = 8.0 * eps * (ny[i] + ny[j]) * max(Y.shape[1], 1) ** 0.5
        lo, hi = bounds(i, j)
        with np.errstate(divide="ignore", invalid="ignore"):  # zero or tiny dX: suspect anyway
            ratio = dY / dX
            estimate = np.maximum(lo - ratio, ratio - hi)
            uncertainty = (errY + np.abs(ratio) * errX) / (dX - errX)
            suspect = (dX <= errX) | (estimate + uncertainty > tol)
        sure = ~suspect
        if np.any(sure):
            worst = max(worst, float(np.max(estimate[sure] + uncertainty[sure])))
            counted += int(sure.sum())
        if not np.any(suspect):
            continue
        i, j, lo, hi = i[suspect], j[suspect], lo[suspect], hi[suspect]
        nonzero = np.any(X[i] != X[j], axis=1)
        i, j, lo, hi = i[nonzero], j[nonzero], lo[nonzero], hi[nonzero]
        if i.size == 0:
            continue
        values = _pair_values(X, P, i, j)
        violation = np.maximum(lo - values, values - hi)
        worst, counted = max(worst, float(violation.max())), counted + i.size
        bad = violation > tol
        if np.any(bad):
            found.append((i[bad], j[bad], violation[bad]))
    if found:
        vi, vj, vv = (np.concatenate(parts) for parts in zip(*found, strict=True))
    else:
        vi, vj, vv = np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0)
    return ScanResult(vi, vj, vv, worst, counted)


def _initial_working_set(X: np.ndarray, size: int, n_neighbors: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted linear pair indices: each point's nearest neighbours, then random pairs up to ``size``."""
    n = X.shape[0]
    total = pair_count(n)
    chosen = np.empty(0, np.int64)
    k = min(n_neighbors, n - 1)
    if k > 0:
        _, neighbors = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
        rows = np.repeat(np.arange(n), k + 1)
        cols = neighbors.ravel()
        distinct = rows != cols
        lo, hi = np.minimum(rows, cols)[distinct], np.maximum(rows, cols)[distinct]
        chosen = np.unique(linear_index_of_pairs(lo, hi, n))
    extra = min(size, total) - chosen.size
    if extra > 0:
        rest = np.setdiff1d(rng.choice(total, size=min(total, size + chosen.size), replace=False), chosen)
        chosen = np.union1d(chosen, rest[:extra])
    return chosen


def _select_violators(
    i: np.ndarray, j: np.ndarray, violation: np.ndarray, index: np.ndarray, max_add: int
) -> np.ndarray:
    """At most ``max_add`` violators: first the worst pair of every point, then the worst overall.

    The worst pairs overall tend to share a few points (one image distorted against all its
    near neighbours); taking each point's worst pair first spreads the new constraints over
    the data, which cuts the number of rounds.
    """
    if index.size <= max_add:
        return index
    order = np.argsort(-violation, kind="stable")
    ends = np.column_stack([i[order], j[order]]).ravel()     # pair k of ``order`` at 2k, 2k+1
    _, first = np.unique(ends, return_index=True)            # each point's worst pair
    spread = np.unique(first // 2)
    chosen = order[spread[np.argsort(-violation[order[spread]], kind="stable")]][:max_add]
    if chosen.size < max_add:
        rest = order[~np.isin(order, chosen)]
        chosen = np.concatenate([chosen, rest[: max_add - chosen.size]])
    return index[chosen]


def column_generation(
    X: np.ndarray,
    bounds: PairBounds,
    *,
    problem: str = "numax",
    initial_pairs: int = 2000,
    initial_neighbors: int = 5,
    max_add: int = 2000,
    keep_tol: float = 1e-4,
    keep_multiplier: float = 1e-4,
    loose_tol: float | None = 1e-3,
    loose_max_iter: int = 60,
    feas_tol: float = 1e-6,
    gap_tol: float = 1e-5,
    max_rounds: int = 100,
    block_rows: int | None = None,
    random_state=None,
    verbose: bool | int = False,
    admm_options: dict | None = None,
) -> SolveResult:
    """NuMax-CG (Algorithm 2) with an exact all-pairs termination check and a certified gap.

    Parameters
    ----------
    X : ndarray of shape (n, N)
        Points; the constraints are over all their pairwise secants.
    bounds : callable
        ``bounds(i, j) -> (lo, hi)`` per pair (NuMax: 1 ∓ δ; NuMax-Class: one-sided by class).
    problem : str
        Registry name recorded in the result.
    initial_pairs : int
        Size of the initial working set S₀ (at least; see ``initial_neighbors``).
    initial_neighbors : int
        S₀ holds every point's ``initial_neighbors`` nearest neighbours, then random pairs
        up to ``initial_pairs``. Short secants are the ones a low-rank P distorts most, so
        they make up much of the final active set and save rounds; 0 gives a random S₀.
    max_add : int
        Most violators added per round (the worst first).
    keep_tol, keep_multiplier : float
        A working pair stays if its constraint is within ``keep_tol`` of a bound, or its
        multiplier exceeds ``keep_multiplier`` times the largest (ADMM multipliers of inactive
        constraints decay but never vanish). Dropping pairs never affects correctness: the
        final scan covers all pairs and the bound is valid for any working set.
    loose_tol : float or None
        Inexact early rounds: while many pairs outside the working set (more than 1% of it)
        are violated by more than this, the restricted problems are solved only to this
        accuracy (and violators are those above it). Then every further round is solved to
        ``feas_tol``/``gap_tol``, so the certificate is unchanged. ``None`` solves every round
        tightly.
    loose_max_iter : int
        ADMM iterations allowed in a loose round: its P only has to point at the next
        violators, so it need not converge (the tight rounds do).
    feas_tol, gap_tol : float
        Violation allowed in the final all-pairs scan, and relative gap (also passed to the
        inner ADMM).
    max_rounds : int
        Limit on restricted solves; reaching it gives status ``max_iterations``.
    block_rows : int, optional
        Rows per scan block.
    random_state : None, int or Generator
        Seed of S₀.
    verbose : bool or int
        Print one line per round: working pairs, active ones (within ``keep_tol`` of a
        bound), violators found by the scan and added, worst violation over all pairs,
        objective, certified gap, rank, ADMM iterations and time.
    admm_options : dict, optional
        Extra options of :func:`~sdpembed.solvers.numax_admm.box_trace_admm`.

    Returns
    -------
    SolveResult
        ``solution`` is P; ``max_violation`` is the worst violation over all pairs (0 if
        every constraint holds); ``dual_bound`` is valid for the
        full problem; ``extra`` holds ``pairs`` (the final working set), ``rounds`` and the
        per-round ``history``.
    """
    start = time.perf_counter()
    X = as_matrix(X, "X", min_rows=2)
    n, N = X.shape
    total = pair_count(n)
    initial_pairs = check_positive_int(initial_pairs, "initial_pairs")
    initial_neighbors = check_positive_int(initial_neighbors, "initial_neighbors", minimum=0)
    max_add = check_positive_int(max_add, "max_add")
    max_rounds = check_positive_int(max_rounds, "max_rounds")
    rng = check_random_state(random_state)
    tight_options = {"feas_tol": feas_tol, "gap_tol": gap_tol, **(admm_options or {})}
    loose_max_iter = check_positive_int(loose_max_iter, "loose_max_iter")
    loose_options = {**tight_options, "tol": loose_tol, "feas_tol": loose_tol, "gap_tol": loose_tol,
                     "max_iter": min(loose_max_iter, tight_options.get("max_iter", loose_max_iter))}
    tight = loose_tol is None or loose_tol <= feas_tol

    working = _initial_working_set(X, initial_pairs, initial_neighbors, rng)
    i, j = pairs_from_linear_index(working, n)
    nonzero = np.any(X[i] != X[j], axis=1)
    working = working[nonzero]
    if working.size == 0:
        raise ValueError("X has no two distinct points in the initial sample; all secants are zero")
    state: ADMMState | None = None
    history: dict[str, list[float]] = {k: [] for k in ("working", "active", "violators", "added", "objective",
                                                      "dual_bound", "rank", "admm_iterations", "time")}
    result = None
    status, message = "max_iterations", f"reached max_rounds={max_rounds} with violated pairs left"
    violation_all = float("inf")
    for round_ in range(1, max_rounds + 1):
        i, j = pairs_from_linear_index(working, n)
        operator = PairSecantOperator(X, i, j)
        lo, hi = bounds(i, j)
        options = tight_options if tight else loose_options
        result = box_trace_admm(operator, lo, hi, problem=problem, warm_start=state, **options)
        P = result.solution
        values = operator.explicit().apply(P)
        y = result.extra["y"]
        near = (values - lo <= keep_tol) | (hi - values <= keep_tol)
        keep = near | (np.abs(y) > keep_multiplier * max(float(np.abs(y).max(initial=0.0)), 1e-300))

        scan = scan_pair_violations(X, P, bounds, tol=options["feas_tol"], block_rows=block_rows)
        violation_all = max(scan.max_violation, 0.0)
        violators = linear_index_of_pairs(scan.i, scan.j, n)
        fresh = ~np.isin(violators, working)
        added = _select_violators(scan.i[fresh], scan.j[fresh], scan.violation[fresh], violators[fresh], max_add)

        for key, value in zip(
            history, (working.size, int(near.sum()), scan.i.size, added.size, result.objective, result.dual_bound,
                      result.extra["rank"], result.iterations, time.perf_counter() - start), strict=True):
            history[key].append(value)
        if verbose:
            print(f"cg round {round_:3d} {'tight' if tight else 'loose'}  working {working.size:7d}  "
                  f"active {int(near.sum()):7d}  violators {scan.i.size:8d}  added {added.size:6d}  "
                  f"max violation {violation_all:.2e}  tr P {result.objective:.8f}  "
                  f"gap {result.relative_gap:.2e}  rank {result.extra['rank']:4d}  "
                  f"admm its {result.iterations:5d}  {time.perf_counter() - start:7.1f}s")

        if not tight and added.size <= max(10, working.size // 100):
            # the loose solution violates (almost) no pair outside the working set by more
            # than loose_tol: from now on solve to the final accuracy (warm-started), adding
            # the few violators found, and rescan
            tight = True
            if added.size == 0:
                state = result.extra["state"]
                continue
        if added.size == 0 and violation_all <= feas_tol:
            if result.status == "optimal":
                status = "optimal"
                message = (f"no pair of all {total} violates by more than {feas_tol:g}; certified relative "
                           f"gap {result.relative_gap:.2e} after {round_} round(s)")
            else:
                status = result.status
                message = f"all pairs feasible, but the last restricted solve ended {result.status}: {result.message}"
            break
        if added.size == 0:
            status, message = "inaccurate", "violations remain on working pairs the ADMM did not resolve"
            break

        # next working set: kept pairs, then the violators; warm start ω on the kept ones and
        # reuse (I + 𝒜𝒜*)⁻¹ of the kept pairs (the next run appends the new pairs' rows)
        prev = result.extra["state"]
        K_inv = restrict_inverse(prev.K_inv, keep) if keep.sum() >= keep.size // 2 else None
        omega = np.concatenate([prev.omega[keep], np.zeros(added.size)])
        state = ADMMState(prev.L, prev.Lam, omega, prev.beta, prev.basis, K_inv)
        working = np.concatenate([working[keep], added])

    P = result.solution
    objective = float(np.trace(P))
    return SolveResult(
        problem=problem,
        variable="P",
        solution=P,
        objective=objective,
        status=status,
        message=message,
        method="cg",
        solver="numax_cg",
        dual_bound=result.dual_bound,
        gap=objective - result.dual_bound,
        relative_gap=relative_gap(objective, result.dual_bound),
        max_violation=violation_all,
        min_eigenvalue=result.min_eigenvalue,
        iterations=int(sum(history["admm_iterations"])),
        wall_time=time.perf_counter() - start,
        history={k: np.asarray(v) for k, v in history.items()},
        extra={"pairs": np.column_stack(pairs_from_linear_index(working, n)), "rounds": len(history["working"]),
               "rank": result.extra["rank"], "y": result.extra["y"], "state": result.extra["state"]},
    )


def solve_numax_cg(instance, **options) -> SolveResult:
    """NuMax-CG on a point-form :class:`~sdpembed.instances.NuMaxInstance` (all pairs of X).

    ``options`` are those of :func:`column_generation`.
    """
    if not instance.point_form:
        raise ValueError("column generation needs a point-form instance (X, meaning all pairs)")
    return column_generation(instance.X, instance.bounds_of_pairs, problem=instance.problem, **options)
