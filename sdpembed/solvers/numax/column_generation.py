"""Column generation over streamed secants — NuMax Algorithm 2 (NuMax-CG), certified.

The SDP (*) of :mod:`sdpembed.problems.numax_certificate` over *all* pairs of n points has n(n−1)/2
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

Pluggable restricted solve. The loop is :func:`run_column_generation`; its inner solver (a
:class:`RestrictedSolver`) is the NuMax ADMM for NuMax-CG (:func:`column_generation`) and
FroMax or NILE-Pro for Algorithm 4 of Luo et al. [2]. A non-convex inner solver has no dual
bound, so that run ends ``converged`` — every pair within its bounds, proven by the final
scan — never ``optimal``.

Accuracy of the scan (:mod:`~sdpembed.solvers.numax.pair_scan`). Squared distances from Gram
matrices lose ε·(‖x_i‖² + ‖x_j‖²) to cancellation; every pair whose violation could exceed
``feas_tol`` within that error is recomputed from its explicit difference, so the final check
is exact to rounding.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: NuMax-CG, Algorithm 2, over the secants (1) of all pairs.
.. [2] J. Luo, K. Shapiro, H.-J. M. Shi, Q. Yang and K. Zhu, "Practical algorithms for learning
   near-isometric linear embeddings", SIAM Undergraduate Research Online 9, 2016
   (arXiv:1601.00062). Implemented here: the driver of Algorithm 4.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from ..._progress import progress_bar, say
from ..._validate import as_matrix, check_positive_int, check_random_state
from ...problems.numax_operator import PairSecantOperator
from ...results import SolveResult, build_result
from ...secants import linear_index_of_pairs, pair_count, pairs_from_linear_index
from .admm import ADMMState, box_trace_admm, restrict_inverse, update_is_cheaper
from .admm_control import ADMMStopping, check_bundle
from .admm_pairs import OutsideMonitor, PairNumerics, pair_trace_admm
from .pair_scan import PairBounds, PairDistances, initial_working_set
from .scan_backend import ScanBackend, resolve_scan_backend

__all__ = [
    "RestrictedResult",
    "RestrictedSolver",
    "ColumnGenerationRun",
    "run_column_generation",
    "column_generation",
    "solve_numax_cg",
]


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


def _outside_violation(distances: PairDistances, bounds: PairBounds, working: np.ndarray,
                       tol: float, backend: ScanBackend) -> Callable[[np.ndarray], float]:
    """``monitor(factor)``: the worst violation above ``tol`` among the pairs outside ``working``
    (sorted linear indices) for P = ΨᵀΨ, by a scan of all pairs of ``distances.X`` on ``backend``; 0 if
    there is none."""
    X = distances.X
    n = X.shape[0]

    def monitor(factor: np.ndarray) -> float:
        scan = backend.scan(X, None, bounds, tol=tol, factor=factor, exact_values=False, distances=distances)
        outside = ~np.isin(linear_index_of_pairs(scan.i, scan.j, n), working)
        return float(np.max(scan.violation[outside], initial=0.0))

    return monitor


def _scan_work(n: int, N: int) -> Callable[[int], float]:
    """``work(k)``: the floating-point operations of a scan of all pairs of n points in dimension N
    for a factor of k rows — Y = XΨᵀ (2nNk), the Gram matrix of Y (n²k over its half) and a few
    operations per pair."""

    def work(k: int) -> float:
        return 2.0 * n * N * k + n * n * (k + 5.0)

    return work


@dataclass
class RestrictedResult:
    """What column generation needs from one restricted solve on the working pairs.

    ``P`` (N, N) is the PSD matrix the all-pairs scan checks (with ``factor`` Ψ, ΨᵀΨ = P, if
    the solver has it: the scan then skips an eigendecomposition); ``values`` the constraint
    values 𝒜(P) on the working pairs (computed from P when None); ``y`` multipliers on the
    working pairs (the keep rule); ``state`` a warm start for the same pairs; ``failed`` asks
    the driver to stop (a non-convex solver that cannot meet its bounds even on the working
    pairs); ``raw`` the solver's own result.
    """

    P: np.ndarray
    y: np.ndarray
    state: Any
    rank: int
    iterations: int
    objective: float
    status: str
    message: str = ""
    dual_bound: float = float("nan")
    relative_gap: float = float("nan")
    factor: np.ndarray | None = None
    values: np.ndarray | None = None
    failed: bool = False
    raw: Any = None


class RestrictedSolver(Protocol):
    """The pluggable inner solve of :func:`run_column_generation`.

    ``certified`` says whether ``dual_bound`` of a restricted solve bounds the *full* problem
    (true for the NuMax SDP: multipliers outside the working set are zero); only then can the
    driver report ``optimal``. A solver whose ``solve`` also takes a keyword ``monitor`` (the
    worst violation outside the working set for a factor Ψ, see
    :func:`~sdpembed.solvers.numax.admm_pairs.pair_trace_admm`) and ``monitor_work`` (the
    floating-point operations of one such scan for a factor of k rows) says so with
    ``monitors = True``; the driver then passes them in the tight rounds.
    """

    certified: bool

    def solve(self, operator: PairSecantOperator, lo: np.ndarray, hi: np.ndarray, warm_start: Any,
              tight: bool) -> RestrictedResult:
        """Solve on the working pairs of ``operator``; ``tight`` is False in the loose early rounds."""
        ...

    def carry(self, result: RestrictedResult, keep: np.ndarray, n_added: int) -> Any:
        """Warm start for the next working set: the pairs ``keep`` (mask) of this one, then ``n_added`` new ones."""
        ...


@dataclass
class ColumnGenerationRun:
    """Outcome of :func:`run_column_generation`.

    ``status``: ``optimal`` (certified inner solver, all pairs feasible, restricted solve
    optimal), ``converged`` (non-certified inner solver, all pairs feasible), the inner
    solver's status when it ended otherwise, ``inaccurate`` (violations left on working pairs
    the inner solver did not resolve) or ``max_iterations`` (``max_rounds`` reached).
    ``max_violation`` is the worst violation over all pairs from the last scan (0 if none) and
    ``worst_violation`` the same before clipping at 0 (negative when every constraint holds
    strictly; an upper bound, exact to the scan's rounding bound), ``working`` the final
    working set (linear pair indices), ``result`` the last restricted solve.
    """

    result: RestrictedResult
    working: np.ndarray
    status: str
    message: str
    max_violation: float
    worst_violation: float
    rounds: int
    n_points: int
    history: dict[str, np.ndarray]
    wall_time: float

    @property
    def pairs(self) -> np.ndarray:
        """(S, 2) point indices of the final working set."""
        return np.column_stack(pairs_from_linear_index(self.working, self.n_points))


class _NuMaxADMM:
    """The NuMax ADMM as the inner solver of NuMax-CG: loose or tight options, warm starts that
    reuse (I + 𝒜𝒜*)⁻¹ of kept pairs. ``implicit`` selects
    :func:`~sdpembed.solvers.numax.admm_pairs.pair_trace_admm` (implicit iterates, partial
    eigensolver), otherwise :func:`~sdpembed.solvers.numax.admm.box_trace_admm`."""

    certified = True

    def __init__(self, problem: str, tight_options: dict, loose_options: dict, implicit: bool = True) -> None:
        self.problem, self.tight_options, self.loose_options = problem, tight_options, loose_options
        self.admm = pair_trace_admm if implicit else box_trace_admm
        self.monitors = implicit

    def solve(self, operator: PairSecantOperator, lo: np.ndarray, hi: np.ndarray, warm_start: ADMMState | None,
              tight: bool, monitor: Callable[[np.ndarray], float] | None = None,
              monitor_work: Callable[[int], float] | None = None) -> RestrictedResult:
        options = self.tight_options if tight else self.loose_options
        if monitor is not None:
            options = {**options, "monitor": OutsideMonitor(monitor, work=monitor_work)}
        result = self.admm(operator, lo, hi, problem=self.problem, warm_start=warm_start, **options)
        return RestrictedResult(P=result.solution, y=result.extra["y"], state=result.extra["state"],
                                rank=result.extra["rank"], iterations=result.iterations, objective=result.objective,
                                status=result.status, message=result.message, dual_bound=result.dual_bound,
                                relative_gap=result.relative_gap, factor=result.extra.get("factor"),
                                values=result.extra.get("values"), raw=result)

    def carry(self, result: RestrictedResult, keep: np.ndarray, n_added: int) -> ADMMState:
        # warm start ω on the kept pairs and reuse (I + 𝒜𝒜*)⁻¹ and 𝒜𝒜* of the kept pairs (the next
        # run appends the new pairs' rows)
        prev = result.state
        kept = int(keep.sum())
        cheaper = update_is_cheaper(kept, keep.size - kept, n_added, prev.L.shape[0])
        K_inv = (restrict_inverse(prev.K_inv, keep)
                 if prev.K_inv is not None and cheaper and kept >= keep.size // 4 else None)
        # 𝒜𝒜* of the kept pairs: restricted while the next run copies it (no copy here)
        gram_kept = None if prev.gram is None or keep.all() else np.flatnonzero(keep)
        omega = np.concatenate([prev.omega[keep], np.zeros(n_added)])
        return ADMMState(prev.L, prev.Lam, omega, prev.beta, prev.basis, K_inv, prev.gram, gram_kept)


def run_column_generation(
    X: np.ndarray,
    bounds: PairBounds,
    inner: RestrictedSolver,
    *,
    initial_pairs: int = 2000,
    initial_neighbors: int = 5,
    working_set: np.ndarray | None = None,
    warm_start: Any = None,
    max_add: int = 2000,
    keep_tol: float = 1e-4,
    keep_multiplier: float = 1e-4,
    loose_tol: float | None = None,
    loose_keep_multiplier: float | None = None,
    feas_tol: float = 1e-6,
    max_rounds: int = 100,
    block_rows: int | None = None,
    exact_violations: bool = True,
    max_working: int | None = None,
    active_tol: float | None = None,
    random_state=None,
    verbose: bool | int = False,
    scan_backend: ScanBackend | str | None = None,
) -> ColumnGenerationRun:
    """The column-generation driver over all pairs of ``X`` with a pluggable restricted solve.

    NuMax Algorithm 2 (through :func:`column_generation`) and Algorithm 4 of Luo et al. (FroMax-CG,
    NILE-Pro-CG) are this loop with different ``inner`` solvers: solve on the working pairs,
    keep the active ones, scan all pairs exactly, add the worst violators, repeat until a scan
    finds none (see the module docstring).

    Parameters
    ----------
    X, bounds
        As for :func:`column_generation`.
    inner : RestrictedSolver
        The restricted solve and its warm-start carry-over.
    working_set : ndarray of int, optional
        Linear pair indices of the initial working set (e.g. the final one of an earlier run);
        by default built from ``initial_pairs`` and ``initial_neighbors``.
    warm_start : optional
        Warm start of the first restricted solve (matching ``working_set``).
    loose_tol : float or None
        Loose early rounds (``inner.solve(..., tight=False)``, scan threshold ``loose_tol``)
        while many pairs outside the working set are violated; ``None``: every round tight.
    loose_keep_multiplier : float, optional
        ``keep_multiplier`` in the loose rounds, whose multipliers have not converged (a larger
        value keeps the working set from swelling with pairs that are not active).
    initial_pairs, initial_neighbors, max_add, keep_tol, keep_multiplier : optional
        As for :func:`column_generation`.
    feas_tol, max_rounds, block_rows, random_state, verbose : optional
        As for :func:`column_generation`.
    exact_violations : bool
        ``exact_values`` of the scans (False: clear violators keep their Gram-based values;
        the termination test is unchanged).
    max_working : int, optional
        Cap on the working set: when the kept and new pairs exceed it, only the pairs nearest
        to a bound are kept (an inner solver whose cost grows like S³ needs it).
    active_tol : float, optional
        Distance to a bound at which the history and progress lines count a pair as active
        (default ``keep_tol``).
    scan_backend : ScanBackend, "local" or None
        As for :func:`column_generation`.

    Returns
    -------
    ColumnGenerationRun
    """
    start = time.perf_counter()
    backend = resolve_scan_backend(scan_backend)
    distances = PairDistances(X, block_rows)          # what every scan of these points shares
    X = distances.X
    n, N = X.shape
    total = pair_count(n)
    if verbose:
        say(f"cg: {n} points in dimension {N}, {total} pairs; choosing the initial working set")
    initial_pairs = check_positive_int(initial_pairs, "initial_pairs")
    initial_neighbors = check_positive_int(initial_neighbors, "initial_neighbors", minimum=0)
    max_add = check_positive_int(max_add, "max_add")
    max_rounds = check_positive_int(max_rounds, "max_rounds")
    rng = check_random_state(random_state)
    tight = loose_tol is None or loose_tol <= feas_tol

    if working_set is None:
        with progress_bar(n, "nearest neighbours", enabled=None if verbose else False, unit="points") as bar:
            working = initial_working_set(X, initial_pairs, initial_neighbors, rng, progress=bar.update)
        if working.size > 2 * initial_pairs:
            # one neighbour each gives about n pairs: on many points a random share of them, so the first
            # restricted solve (its dense S₀ × S₀ factorisation) costs the same at any n; the scans add the rest
            working = np.sort(rng.choice(working, size=2 * initial_pairs, replace=False))
    else:
        working = np.asarray(working_set, dtype=np.int64)
        if working.ndim != 1 or working.size == 0 or working.min() < 0 or working.max() >= total:
            raise ValueError(f"working_set must be a non-empty 1-D array of pair indices in [0, {total})")
    i, j = pairs_from_linear_index(working, n)
    nonzero = np.any(X[i] != X[j], axis=1)
    if warm_start is not None and not nonzero.all():
        raise ValueError("working_set must not contain pairs of identical points when warm_start is given")
    working = working[nonzero]
    if working.size == 0:
        distinct = np.flatnonzero(np.any(X != X[0], axis=1))
        if distinct.size == 0:
            raise ValueError("X must contain at least two distinct points (all its secants are zero)")
        # the sample held only pairs of coincident points: start from one pair of distinct ones
        working = linear_index_of_pairs(np.array([0]), distinct[:1], n)
    if verbose:
        say(f"cg: initial working set of {working.size} pairs  {time.perf_counter() - start:7.1f}s")
    state = warm_start
    dropped = readded = np.empty(0, np.int64)        # linear indices of pairs dropped / dropped and re-added
    history: dict[str, list[float]] = {k: [] for k in ("working", "active", "violators", "added", "objective",
                                                      "dual_bound", "rank", "admm_iterations", "time")}
    result: RestrictedResult | None = None
    status, message = "max_iterations", f"reached max_rounds={max_rounds} with violated pairs left"
    violation_all = worst = float("inf")
    for round_ in range(1, max_rounds + 1):
        i, j = pairs_from_linear_index(working, n)
        operator = PairSecantOperator(X, i, j)
        lo, hi = bounds(i, j)
        if verbose:
            say(f"cg round {round_:3d} {'tight' if tight else 'loose'}: solving on {working.size} pairs")
        if tight and getattr(inner, "monitors", False):
            result = inner.solve(operator, lo, hi, state, tight,
                                 monitor=_outside_violation(distances, bounds, working, feas_tol, backend),
                                 monitor_work=_scan_work(n, N))
        else:
            result = inner.solve(operator, lo, hi, state, tight)
        P = result.P
        values = operator.explicit().apply(P) if result.values is None else result.values
        y = result.y
        near = (values - lo <= keep_tol) | (hi - values <= keep_tol)
        multiplier_share = keep_multiplier if tight or loose_keep_multiplier is None else loose_keep_multiplier
        keep = near | (np.abs(y) > multiplier_share * max(float(np.abs(y).max(initial=0.0)), 1e-300))
        if multiplier_share != keep_multiplier:
            # a pair dropped by the coarser loose rule and found violated again is never dropped
            # again, so the loose rounds cannot cycle
            keep |= np.isin(working, readded, assume_unique=True)
        if active_tol is not None:
            near = (values - lo <= active_tol) | (hi - values <= active_tol)

        scan_tol = feas_tol if tight else loose_tol
        # a bar only on a terminal: in a notebook or a log it would be stored, not watched
        with progress_bar(total, f"cg round {round_} scan", enabled=None if verbose else False, unit="pairs") as bar:
            scan = backend.scan(X, P, bounds, tol=scan_tol, factor=result.factor, exact_values=exact_violations,
                                distances=distances, progress=bar.update)
        worst = scan.max_violation
        violation_all = max(worst, 0.0)
        violators = linear_index_of_pairs(scan.i, scan.j, n)
        fresh = ~np.isin(violators, working)
        added = _select_violators(scan.i[fresh], scan.j[fresh], scan.violation[fresh], violators[fresh], max_add)

        for key, value in zip(
            history, (working.size, int(near.sum()), scan.i.size, added.size, result.objective, result.dual_bound,
                      result.rank, result.iterations, time.perf_counter() - start), strict=True):
            history[key].append(value)
        if verbose:
            say(f"cg round {round_:3d} {'tight' if tight else 'loose'}  working {working.size:7d}  "
                f"active {int(near.sum()):7d}  violators {scan.i.size:8d}  added {added.size:6d}  "
                f"max violation {violation_all:.2e}  tr P {result.objective:.8f}  "
                f"gap {result.relative_gap:.2e}  rank {result.rank:4d}  "
                f"admm its {result.iterations:5d}  {time.perf_counter() - start:7.1f}s")

        if not tight and added.size <= max(10, working.size // 100):
            # the loose solution violates (almost) no pair outside the working set by more
            # than loose_tol: from now on solve to the final accuracy (warm-started), adding
            # the few violators found, and rescan
            tight = True
            if added.size == 0:
                state = result.state
                continue
        if added.size == 0 and violation_all <= feas_tol:
            if not inner.certified:
                status = "converged"
                message = (f"no pair of all {total} violates its bounds by more than {feas_tol:g} after {round_} "
                           "round(s); no certificate (non-convex restricted solver)")
            elif result.status == "optimal":
                status = "optimal"
                message = (f"no pair of all {total} violates by more than {feas_tol:g}; certified relative "
                           f"gap {result.relative_gap:.2e} after {round_} round(s)")
            else:
                status = result.status
                message = f"all pairs feasible, but the last restricted solve ended {result.status}: {result.message}"
            break
        if result.failed:
            status, message = result.status, f"the restricted solve on {working.size} pairs failed: {result.message}"
            break
        if added.size == 0:
            status, message = "inaccurate", "violations remain on working pairs the ADMM did not resolve"
            break

        # next working set: kept pairs, then the violators
        if max_working is not None and keep.sum() + added.size > max_working:
            # over the cap: keep only the pairs nearest to a bound, as many as leave room for the new ones
            added = added[:max_working]
            room = max(max_working - added.size, 0)
            slack = np.minimum(values - lo, hi - values)
            keep = np.zeros_like(keep)
            keep[np.argsort(slack, kind="stable")[:room]] = True
        state = inner.carry(result, keep, added.size)
        dropped = np.union1d(dropped, working[~keep])
        readded = np.union1d(readded, added[np.isin(added, dropped)])
        working = np.concatenate([working[keep], added])

    return ColumnGenerationRun(result=result, working=working, status=status, message=message,
                               max_violation=violation_all, worst_violation=worst,
                               rounds=len(history["working"]), n_points=n,
                               history={k: np.asarray(v) for k, v in history.items()},
                               wall_time=time.perf_counter() - start)


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
    loose_max_iter: int = 15,
    loose_keep_multiplier: float | None = 1e-2,
    feas_tol: float = 1e-6,
    gap_tol: float = 1e-5,
    max_rounds: int = 100,
    block_rows: int | None = None,
    random_state=None,
    verbose: bool | int = False,
    implicit: bool = True,
    exact_violations: bool = False,
    admm_options: dict | None = None,
    scan_backend: ScanBackend | str | None = None,
) -> SolveResult:
    """NuMax-CG (Algorithm 2) with an exact all-pairs termination check and a certified gap.

    This is :func:`run_column_generation` with the NuMax ADMM as the restricted solver.

    Parameters
    ----------
    X : ndarray of shape (n, N)
        Points; the constraints are over all their pairwise secants.
    bounds : callable
        ``bounds(i, j) -> (lo, hi)`` per pair (NuMax: 1 ∓ δ; NuMax-Class: one-sided by class).
    problem : str
        Registry name recorded in the result.
    initial_pairs : int
        Size of the initial working set S₀: at least ``initial_pairs`` and at most twice as
        many (see ``initial_neighbors``), whatever n. When there are at most twice as many
        pairs in all, S₀ holds them all: the restricted problems of a small instance are
        poorly constrained, and the ADMM needs thousands of iterations on each, where one
        solve on all pairs is cheaper.
    initial_neighbors : int
        S₀ holds every point's ``initial_neighbors`` nearest neighbours (at most
        max(1, 2·``initial_pairs``/n) of them, so that on many points the neighbours leave room
        for random pairs), then random pairs up to ``initial_pairs``. Short secants
        are the ones a low-rank P distorts most, so they make up much of the final active set
        and save rounds; 0 gives a random S₀. Above n = 2·``initial_pairs`` points even one
        neighbour each gives more than 2·``initial_pairs`` pairs: S₀ is then a random sample
        of 2·``initial_pairs`` of them, so that the first restricted solve — a dense
        factorisation of I + 𝒜𝒜* of size S₀ — costs the same at any n (a working set of n
        pairs made it the longest silent step of the solve), and the all-pairs scans add the
        neighbour pairs the solution violates.
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
        tightly. With ``implicit``, the tight rounds use the ``"mixed"`` least squares and the
        ``polish`` of :func:`~sdpembed.solvers.numax.admm_pairs.pair_trace_admm`, which settles
        the last round's violation in far fewer ADMM iterations.
    loose_max_iter : int
        ADMM iterations allowed in a loose round: its P only has to point at the next
        violators, so it need not converge (the tight rounds do); a small budget reaches the
        same certified optimum sooner (BENCHMARKS.md, "NuMax at scale on MNIST").
        So few iterations do not pay for inverting I + 𝒜𝒜* of a changed set of pairs: the loose
        rounds apply it through its single-precision Cholesky factor (``"cholesky-single"`` of
        :func:`~sdpembed.solvers.numax.admm_pairs.pair_trace_admm`).
    loose_keep_multiplier : float, optional
        ``keep_multiplier`` in the loose rounds (their multipliers have not converged, and a
        small share keeps nearly every pair: the working set swells).
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
        Print the setup's steps and two lines per round — the restricted solve's start, then
        its outcome: working pairs, active ones (within ``keep_tol`` of a bound), violators
        found by the scan and added, worst violation over all pairs, objective, certified gap,
        rank, ADMM iterations and time — with a progress bar of each all-pairs scan on stderr
        when it is a terminal.
        An integer K (not ``True``) also prints the restricted ADMM's progress every K
        iterations.
    implicit : bool
        Restricted solves by :func:`~sdpembed.solvers.numax.admm_pairs.pair_trace_admm`
        (implicit iterates through the points, partial eigensolver; several times faster at
        N in the hundreds); False uses :func:`~sdpembed.solvers.numax.admm.box_trace_admm`.
    exact_violations : bool
        Recompute every violator's value from its explicit secant (False: only the pairs
        the Gram-based rounding bound leaves in doubt; the termination test is the same).
    admm_options : dict, optional
        Further keyword arguments of the restricted ADMM (of
        :func:`~sdpembed.solvers.numax.admm_pairs.pair_trace_admm`, or of
        :func:`~sdpembed.solvers.numax.admm.box_trace_admm` without ``implicit``). Its
        ``stopping`` (an :class:`~sdpembed.solvers.numax.admm_control.ADMMStopping`) gives the
        tight rounds' limits and cadence, with ``feas_tol`` and ``gap_tol`` replaced by those
        above; the loose rounds use ``loose_tol`` for all three tolerances and at most
        ``loose_max_iter`` iterations. Its ``numerics`` (a
        :class:`~sdpembed.solvers.numax.admm_pairs.PairNumerics`) is used in every round (the
        loose ones without the polish); without it, the tight rounds use the ``"mixed"`` least
        squares, and the loose ones the ``"cholesky-single"`` least squares and single-precision
        Rayleigh–Ritz steps.
    scan_backend : ScanBackend, "local" or None
        Where the scans of all pairs run (:mod:`~sdpembed.solvers.numax.scan_backend`): in this
        process (None, ``"local"``) or, e.g., on a Dask cluster
        (:class:`~sdpembed.solvers.numax.scan_backend.DaskScan`); the result is the same.

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
    if verbose:
        say(f"numax-cg: {X.shape[0]} points in dimension {X.shape[1]}; the basis of their span")
    tight_options = dict(admm_options or {})
    if verbose and not isinstance(verbose, bool) and "verbose" not in tight_options:
        tight_options["verbose"] = int(verbose)             # --verbose K: the restricted ADMMs too
    stopping = check_bundle(tight_options.get("stopping"), ADMMStopping, "admm_options['stopping']")
    tight_options["stopping"] = replace(stopping, feas_tol=feas_tol, gap_tol=gap_tol)
    loose_max_iter = check_positive_int(loose_max_iter, "loose_max_iter")
    if pair_count(X.shape[0]) <= 2 * check_positive_int(initial_pairs, "initial_pairs"):
        initial_pairs = pair_count(X.shape[0])
    # at most about 2·initial_pairs neighbour pairs: with many points, k neighbours each would make
    # S₀ (and its S×S inverse) large while a first loose round cannot yet use it
    initial_neighbors = min(check_positive_int(initial_neighbors, "initial_neighbors", minimum=0),
                            max(1, 2 * initial_pairs // X.shape[0]))
    if implicit and "basis" not in tight_options:
        # one basis for every round: the span of the centred points holds every secant
        _, sigma, rows = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
        keep = sigma > 1e-6 * sigma[0] if sigma.size and sigma[0] > 0 else np.zeros(0, bool)
        if 0 < keep.sum() < X.shape[1]:
            tight_options["basis"] = np.ascontiguousarray(rows[keep].T)
    loose_options = dict(tight_options)
    if loose_tol is not None:
        loose_options["stopping"] = replace(stopping, tol=loose_tol, feas_tol=loose_tol, gap_tol=loose_tol,
                                            max_iter=min(loose_max_iter, stopping.max_iter))
    if implicit:
        numerics = tight_options.get("numerics")
        # tight rounds: a single-precision factor while it suffices (they are short, and the
        # polish settles the violation the single-precision noise leaves)
        tight_options["numerics"] = PairNumerics(least_squares="mixed") if numerics is None else numerics
        # a loose round's few iterations do not pay for inverting I + 𝒜𝒜* of its changed pairs,
        # need no double-precision eigenvectors, and neither its dual bound nor a polished P is used
        loose_options["numerics"] = (
            PairNumerics(least_squares="cholesky-single", eig_precision="single", polish=False) if numerics is None
            else replace(check_bundle(numerics, PairNumerics, "admm_options['numerics']"), polish=False))
        loose_options["certify"] = False
    run = run_column_generation(
        X, bounds, _NuMaxADMM(problem, tight_options, loose_options, implicit), initial_pairs=initial_pairs,
        initial_neighbors=initial_neighbors, max_add=max_add, keep_tol=keep_tol, keep_multiplier=keep_multiplier,
        loose_tol=loose_tol, loose_keep_multiplier=loose_keep_multiplier, feas_tol=feas_tol,
        max_rounds=max_rounds, block_rows=block_rows,
        exact_violations=exact_violations, random_state=random_state, verbose=verbose, scan_backend=scan_backend)
    result = run.result.raw
    P = result.solution
    return build_result(
        problem, "P", P, float(np.trace(P)), result.dual_bound, status=run.status, message=run.message,
        method="cg", solver="numax_cg", max_violation=run.max_violation, min_eigenvalue=result.min_eigenvalue,
        iterations=int(sum(run.history["admm_iterations"])), start=start, history=run.history,
        extra={"pairs": run.pairs, "rounds": run.rounds,
               "rank": result.extra["rank"], "y": result.extra["y"], "state": result.extra["state"]},
    )


def solve_numax_cg(instance, **options) -> SolveResult:
    """NuMax-CG on a point-form :class:`~sdpembed.problems.NuMaxInstance` (all pairs of X).

    ``options`` are those of :func:`column_generation`.
    """
    if not instance.point_form:
        raise ValueError("column generation needs a point-form instance (X, meaning all pairs)")
    return column_generation(instance.X, instance.bounds_of_pairs, problem=instance.problem, **options)
