"""Column generation over streamed secants — NuMax Algorithm 2 (NuMax-CG), certified.

The SDP (*) of :mod:`sdpembed.problems.numax_certificate` over *all* pairs of n points has n(n−1)/2
constraints, far too many to hold, and a listed secant set may be too long for the ADMM's S × S
least-squares step. Column generation solves either on a working set (of pairs, or of listed
secants: :func:`secant_column_generation`; what the loop chooses from is a
:class:`~sdpembed.solvers.numax.candidates.Candidates`). For pairs:

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

from ..._deadline import Deadline
from ..._progress import progress_bar, say
from ..._validate import as_matrix, check_positive_int, check_random_state
from ...problems.base import exact_scale_exponent
from ...problems.numax_certificate import box_violation
from ...problems.numax_operator import PairSecantOperator
from ...results import SolveResult, build_result, relative_gap
from ...secants import pair_count, pairs_from_linear_index
from .admm import ADMMState, box_trace_admm, restrict_inverse, update_is_cheaper
from .admm_control import ADMMStopping, check_bundle
from .admm_pairs import OutsideMonitor, PairNumerics, pair_trace_admm
from .candidates import SECANT_BLOCK, Candidates, PairCandidates, SecantCandidates
from .factor_polish import polish_with_system
from .pair_linalg import SpanCoordinates
from .pair_scan import PairBounds
from .scan_backend import ScanBackend, resolve_scan_backend

__all__ = [
    "RestrictedResult",
    "RestrictedSolver",
    "ColumnGenerationRun",
    "run_column_generation",
    "column_generation",
    "secant_column_generation",
    "solve_numax_cg",
]


def _outside_violation(candidates: Candidates, working: np.ndarray, tol: float) -> Callable[[np.ndarray], float]:
    """``monitor(factor)``: the worst violation above ``tol`` among the candidates outside ``working``
    for P = ΨᵀΨ, by a scan of all candidates; 0 if there is none."""

    def monitor(factor: np.ndarray) -> float:
        scan = candidates.scan(None, factor, tol, False, exclude=working, keep=1)
        return float(np.max(scan.violation, initial=0.0))

    return monitor


@dataclass
class RestrictedResult:
    """What column generation needs from one restricted solve on the working pairs.

    ``P`` (N, N) is the PSD matrix the all-pairs scan checks (with ``factor`` Ψ, ΨᵀΨ = P, if
    the solver has it: the scan then skips an eigendecomposition); ``values`` the constraint
    values 𝒜(P) on the working pairs (computed from P when None); ``y`` multipliers on the
    working pairs (the keep rule); ``state`` a warm start for the same pairs; ``failed`` asks
    the driver to stop (a non-convex solver that cannot meet its bounds even on the working
    pairs); ``raw`` the solver's own result; ``polish_system`` what the solver's ``settle`` may
    reuse (the driver drops it after the round).
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
    polish_system: Any = None


class RestrictedSolver(Protocol):
    """The pluggable inner solve of :func:`run_column_generation`.

    ``certified`` says whether ``dual_bound`` of a restricted solve bounds the *full* problem
    (true for the NuMax SDP: multipliers outside the working set are zero); only then can the
    driver report ``optimal``. A solver whose ``solve`` also takes a keyword ``monitor`` (the
    worst violation outside the working set for a factor Ψ, see
    :func:`~sdpembed.solvers.numax.admm_pairs.pair_trace_admm`) and ``monitor_work`` (the
    floating-point operations of one such scan for a factor of k rows) says so with
    ``monitors = True``; the driver then passes them in the tight rounds. A solver with a method
    ``settle(result, operator, lo, hi)`` may settle the few candidates a scan adds to an optimal tight
    solve without solving again: it returns a result on the working set extended by them (the
    operator's last rows), with the same dual bound, or None; the driver accepts it only if a scan of
    all candidates then finds none violated.
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
    ``max_violation`` is the worst violation over all candidates from the last scan (0 if none) and
    ``worst_violation`` the same before clipping at 0 (negative when every constraint holds
    strictly; an upper bound, exact to the scan's rounding bound), ``result`` the last restricted
    solve and ``working`` its working set (candidate indices: linear pair indices of a point set,
    row indices of a secant list; ``result.y`` holds their multipliers in this order, also when
    ``max_rounds`` ended the run); ``n_points`` is None for a secant list; ``settled`` counts the
    candidates the last scan added that the inner solver's ``settle`` made feasible (0: none).
    """

    result: RestrictedResult
    working: np.ndarray
    status: str
    message: str
    max_violation: float
    worst_violation: float
    rounds: int
    n_points: int | None
    history: dict[str, np.ndarray]
    wall_time: float
    settled: int = 0

    @property
    def pairs(self) -> np.ndarray:
        """(S, 2) point indices of the final working set (a run over the pairs of a point set)."""
        if self.n_points is None:
            raise ValueError("a run over a secant list has no pairs; its working set is secant indices")
        return np.column_stack(pairs_from_linear_index(self.working, self.n_points))


class _NuMaxADMM:
    """The NuMax ADMM as the inner solver of NuMax-CG: loose or tight options, warm starts that
    reuse (I + 𝒜𝒜*)⁻¹ of kept pairs. ``implicit`` selects
    :func:`~sdpembed.solvers.numax.admm_pairs.pair_trace_admm` (implicit iterates, partial
    eigensolver), otherwise :func:`~sdpembed.solvers.numax.admm.box_trace_admm`."""

    certified = True

    def __init__(self, problem: str, tight_options: dict, loose_options: dict, implicit: bool = True,
                 deadline: Deadline | None = None) -> None:
        self.problem, self.tight_options, self.loose_options = problem, tight_options, loose_options
        self.deadline = deadline
        self.admm = pair_trace_admm if implicit else box_trace_admm
        self.monitors = implicit

    def solve(self, operator: PairSecantOperator, lo: np.ndarray, hi: np.ndarray, warm_start: ADMMState | None,
              tight: bool, monitor: Callable[[np.ndarray], float] | None = None,
              monitor_work: Callable[[int], float] | None = None) -> RestrictedResult:
        options = self.tight_options if tight else self.loose_options
        if self.deadline is not None:
            # the run's budget also bounds each restricted solve (a tight round can take thousands of iterations)
            stopping = options["stopping"]
            wall, cpu = self.deadline.remaining()
            options = {**options, "stopping": replace(
                stopping, time_limit=min((t for t in (stopping.time_limit, wall) if t is not None), default=None),
                cpu_time_limit=min((t for t in (stopping.cpu_time_limit, cpu) if t is not None), default=None))}
        if monitor is not None:
            options = {**options, "monitor": OutsideMonitor(monitor, work=monitor_work)}
        result = self.admm(operator, lo, hi, problem=self.problem, warm_start=warm_start, **options)
        return RestrictedResult(P=result.solution, y=result.extra["y"], state=result.extra["state"],
                                rank=result.extra["rank"], iterations=result.iterations, objective=result.objective,
                                status=result.status, message=result.message, dual_bound=result.dual_bound,
                                relative_gap=result.relative_gap, factor=result.extra.get("factor"),
                                values=result.extra.get("values"), raw=result,
                                polish_system=result.extra.pop("polish_system", None))

    def settle(self, result: RestrictedResult, operator: PairSecantOperator, lo: np.ndarray,
               hi: np.ndarray) -> RestrictedResult | None:
        """The optimal tight ``result`` on its pairs, settled on ``operator``'s (those pairs, then k
        more) by a Gauss–Newton polish of its factor
        (:func:`~sdpembed.solvers.numax.factor_polish.polish_with_system`, bordering the normal system
        of the polish that ended the solve when there is one) instead of a restricted solve; None
        unless every value is then within ``feas_tol`` of its box and the gap against the solve's
        dual bound within ``gap_tol``.

        The bound stays proven: the solve's dual-feasible multipliers, zero on the k new pairs, give
        the same I − 𝒜*(y) and the same dual objective. The polished P = FFᵀ is PSD by construction.
        """
        raw, system = result.raw, result.polish_system
        stopping = self.tight_options["stopping"]
        S, n_old = operator.n_constraints, result.y.size
        if (result.factor is None or result.status != "optimal" or S <= n_old
                or S >= result.factor.shape[0] * raw.extra.get("reduced_dim", operator.dim)):
            return None                 # the polish's equations would be overdetermined
        V = operator.V                  # the explicit unit secants, in the original coordinates
        F, _ = polish_with_system(V, result.factor.T, lo, hi, tol=0.5 * stopping.feas_tol, system=system)
        if F is None:
            return None
        objective = float(np.sum(F * F))
        rgap = relative_gap(objective, result.dual_bound)
        B = V @ F
        values = np.einsum("ij,ij->i", B, B)
        violation = box_violation(values, lo, hi)
        if not (abs(rgap) <= stopping.gap_tol and violation <= stopping.feas_tol):
            return None
        factor = np.ascontiguousarray(F.T)
        spectrum = np.linalg.eigvalsh(factor @ factor.T)
        min_eigenvalue = float(np.min(spectrum, initial=0.0 if F.shape[1] < F.shape[0] else np.inf))
        y = np.concatenate([result.y, np.zeros(S - n_old)])
        state = self.carry(result, np.ones(n_old, bool), S - n_old, release=False)
        message = f"{result.message}; {S - n_old} pair(s) more settled by a polish of the factor"
        settled = replace(raw, solution=F @ F.T, objective=objective, gap=objective - result.dual_bound,
                          relative_gap=rgap, max_violation=violation, min_eigenvalue=min_eigenvalue, message=message,
                          extra={**raw.extra, "y": y, "state": state, "factor": factor, "values": values,
                                 "polished": True})
        return RestrictedResult(P=settled.solution, y=y, state=state, rank=result.rank, iterations=0,
                                objective=objective, status="optimal", message=message,
                                dual_bound=result.dual_bound, relative_gap=rgap, factor=factor, values=values,
                                raw=settled)

    def carry(self, result: RestrictedResult, keep: np.ndarray, n_added: int, *, release: bool = True) -> ADMMState:
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
        # the factor of I + 𝒜𝒜*, block-updated by the next run when that is cheaper (the kept pairs come
        # first, in their order, then the new ones)
        factor = prev.factor if K_inv is None else None
        # 𝒜(L) and 𝒜(Λ) of the kept pairs, as the run tracked them: the next run computes the new pairs' only
        values = None if prev.values is None else tuple(v[keep] for v in prev.values)
        state = ADMMState(prev.L, prev.Lam, omega, prev.beta, prev.basis, K_inv, prev.gram, gram_kept,
                          factor=factor, factor_kept=None if factor is None else keep.copy(),
                          eig_block=prev.eig_block, values=values)
        # the S × S parts go to the new state only: the finished round's result lets go of them, so that
        # the next round frees them as soon as it has used them (``release``; a settle attempt keeps them,
        # since the round goes on from this result if the settled point fails its scan)
        if release:
            prev.K_inv = prev.gram = prev.factor = None
        return state


def run_column_generation(
    X: np.ndarray | Candidates,
    bounds: PairBounds | None,
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
    loose_hold: float | None = None,
    feas_tol: float = 1e-6,
    max_rounds: int = 100,
    block_rows: int | None = None,
    exact_violations: bool = True,
    max_working: int | None = None,
    active_tol: float | None = None,
    settle: bool = True,
    random_state=None,
    verbose: bool | int = False,
    scan_backend: ScanBackend | str | None = None,
    deadline: Deadline | None = None,
) -> ColumnGenerationRun:
    """The column-generation driver over all pairs of ``X`` (or over other candidates) with a
    pluggable restricted solve.

    NuMax Algorithm 2 (through :func:`column_generation` and :func:`secant_column_generation`) and
    Algorithm 4 of Luo et al. (FroMax-CG, NILE-Pro-CG) are this loop with different ``inner`` solvers
    and candidates: solve on the working set, keep its active constraints, scan all candidates
    exactly, add the worst violators, repeat until a scan finds none (see the module docstring).

    Parameters
    ----------
    X, bounds
        The points and their pairs' bounds, as for :func:`column_generation`; or ``X`` a
        :class:`~sdpembed.solvers.numax.candidates.Candidates` (e.g. the
        :class:`~sdpembed.solvers.numax.candidates.SecantCandidates` of an explicit secant list),
        which bounds and scans its constraints itself (``bounds``, ``block_rows`` and
        ``scan_backend`` are then None).
    inner : RestrictedSolver
        The restricted solve and its warm-start carry-over.
    working_set : ndarray of int, optional
        Candidate indices of the initial working set (linear pair indices, or secant rows; e.g. the
        final one of an earlier run); by default built from ``initial_pairs`` and ``initial_neighbors``.
    warm_start : optional
        Warm start of the first restricted solve (matching ``working_set``).
    loose_tol : float or None
        Loose early rounds (``inner.solve(..., tight=False)``, scan threshold ``loose_tol``)
        while many candidates outside the working set are violated; ``None``: every round tight.
    loose_keep_multiplier : float, optional
        ``keep_multiplier`` in the loose rounds, whose multipliers have not converged (a larger
        value keeps the working set from swelling with constraints that are not active).
    loose_hold : float, optional
        After a loose round whose keep rule would drop fewer than this share of the working set,
        and whose scan adds fewer than this share of it, drop none: the next restricted solve can
        then append the new candidates' rows to the factor of its least-squares matrix
        (:func:`~sdpembed.solvers.numax.least_squares.extend_factor`) instead of refactorising it
        (dropped rows would stay in it as ghosts, whose solves cost about as much). None: never.
    initial_pairs, initial_neighbors, max_add, keep_tol, keep_multiplier : optional
        As for :func:`column_generation`.
    feas_tol, max_rounds, block_rows, random_state, verbose : optional
        As for :func:`column_generation`.
    exact_violations : bool
        ``exact_values`` of the scans (False: clear violators keep their Gram-based values;
        the termination test is unchanged).
    max_working : int, optional
        Cap on the working set: when the kept and new candidates exceed it, only those nearest
        to a bound are kept (an inner solver whose cost grows like S³ needs it).
    active_tol : float, optional
        Distance to a bound at which the history and progress lines count a constraint as active
        (default ``keep_tol``).
    settle : bool
        When the scan after an optimal tight solve adds only a few candidates (at most
        max(10, 1 % of the working set)) and ``inner`` can ``settle`` them (see
        :class:`RestrictedSolver`), try that first: if a scan of all candidates then finds none
        violated, the run ends there, certified by the same bound, without another restricted solve.
    scan_backend : ScanBackend, "local" or None
        As for :func:`column_generation`.
    deadline : Deadline, optional
        The run's time budget (``sdpembed._deadline.Deadline``), checked before each round
        after the first and after each restricted solve (which ``inner`` may cut at it): once it has
        passed, the run ends ``max_iterations`` with the last round's result.

    Returns
    -------
    ColumnGenerationRun
    """
    start = time.perf_counter()
    if bounds is not None:
        candidates: Candidates = PairCandidates(X, bounds, resolve_scan_backend(scan_backend), block_rows)
    elif isinstance(X, np.ndarray):
        raise ValueError("bounds(i, j) is needed for the pairs of the points X")
    elif block_rows is not None or scan_backend is not None:
        raise ValueError("block_rows and scan_backend apply to the pairs of points X, not to other candidates")
    else:
        candidates = X
    total = candidates.total
    if verbose:
        say(f"cg: {candidates.describe()}; choosing the initial working set")
    initial_pairs = check_positive_int(initial_pairs, "initial_pairs")
    initial_neighbors = check_positive_int(initial_neighbors, "initial_neighbors", minimum=0)
    max_add = check_positive_int(max_add, "max_add")
    max_rounds = check_positive_int(max_rounds, "max_rounds")
    rng = check_random_state(random_state)
    tight = loose_tol is None or loose_tol <= feas_tol

    if working_set is None:
        working = candidates.initial(initial_pairs, initial_neighbors, rng, bool(verbose))
    else:
        working = candidates.checked(working_set, warm=warm_start is not None)
    if verbose:
        say(f"cg: initial working set of {working.size} {candidates.unit}  {time.perf_counter() - start:7.1f}s")
    state = warm_start
    dropped = readded = added = np.empty(0, np.int64)   # candidates dropped / dropped and re-added / just added
    history: dict[str, list[float]] = {k: [] for k in ("working", "active", "violators", "added", "objective",
                                                      "dual_bound", "rank", "admm_iterations", "time")}
    result: RestrictedResult | None = None
    status, message = "max_iterations", f"reached max_rounds={max_rounds} with violated {candidates.unit} left"
    violation_all = worst = float("inf")
    settled = 0
    def stopped(rounds: int) -> str:
        return (f"{deadline.reached()} after {rounds} round(s), with {added.size} violated "
                f"{candidates.unit} to add (max violation {violation_all:.2e} over all {total})")

    for round_ in range(1, max_rounds + 1):
        if round_ > 1 and deadline is not None and deadline.passed():
            status, message = "max_iterations", stopped(round_ - 1)
            break
        solved = working                             # the working set of this round's restricted solve
        loose = not tight
        operator, lo, hi = candidates.restricted(working)
        if verbose:
            say(f"cg round {round_:3d} {'tight' if tight else 'loose'}: solving on {working.size} {candidates.unit}")
        if tight and getattr(inner, "monitors", False):
            result = inner.solve(operator, lo, hi, state, tight,
                                 monitor=_outside_violation(candidates, working, feas_tol),
                                 monitor_work=candidates.work)
        else:
            result = inner.solve(operator, lo, hi, state, tight)
        P = result.P
        values = operator.explicit().apply(P) if result.values is None else result.values
        y = result.y
        near = (values - lo <= keep_tol) | (hi - values <= keep_tol)
        multiplier_share = keep_multiplier if tight or loose_keep_multiplier is None else loose_keep_multiplier
        keep = near | (np.abs(y) > multiplier_share * max(float(np.abs(y).max(initial=0.0)), 1e-300))
        if multiplier_share != keep_multiplier:
            # a candidate dropped by the coarser loose rule and found violated again is never dropped
            # again, so the loose rounds cannot cycle
            keep |= np.isin(working, readded, assume_unique=True)
        if active_tol is not None:
            near = (values - lo <= active_tol) | (hi - values <= active_tol)

        scan_tol = feas_tol if tight else loose_tol
        # a bar only on a terminal: in a notebook or a log it would be stored, not watched
        with progress_bar(total, f"cg round {round_} scan", enabled=None if verbose else False,
                          unit=candidates.unit) as bar:
            # only the violators outside the working set that the selection can take
            scan = candidates.scan(P, result.factor, scan_tol, exact_violations, progress=bar.update,
                                   exclude=working, keep=max_add)
        worst = scan.worst
        violation_all = max(worst, 0.0)
        added = candidates.select(scan.index, scan.violation, max_add, total=scan.fresh)

        for key, value in zip(
            history, (working.size, int(near.sum()), scan.found, added.size, result.objective,
                      result.dual_bound, result.rank, result.iterations, time.perf_counter() - start), strict=True):
            history[key].append(value)
        if verbose:
            say(f"cg round {round_:3d} {'tight' if tight else 'loose'}  working {working.size:7d}  "
                f"active {int(near.sum()):7d}  violators {scan.found:8d}  added {added.size:6d}  "
                f"max violation {violation_all:.2e}  tr P {result.objective:.8f}  "
                f"gap {result.relative_gap:.2e}  rank {result.rank:4d}  "
                f"admm its {result.iterations:5d}  {time.perf_counter() - start:7.1f}s")

        if (settle and not loose and inner.certified and result.status == "optimal" and hasattr(inner, "settle")
                and 0 < added.size <= max(10, working.size // 100)):
            done = _settled(candidates, inner, result, np.concatenate([working, added]), feas_tol,
                            exact_violations, max_add)
            if done is not None:
                result, solved, worst = done
                violation_all, settled = max(worst, 0.0), added.size
                status = "optimal"
                message = (f"no {candidates.unit[:-1]} of all {total} violates by more than {feas_tol:g}; certified "
                           f"relative gap {result.relative_gap:.2e} after {round_} round(s), the {added.size} "
                           f"{candidates.unit} the last scan added settled by a polish of the factor")
                if verbose:
                    say(f"cg: the {added.size} {candidates.unit} added settled by a polish of the factor; no "
                        f"{candidates.unit[:-1]} violated (max violation {violation_all:.2e}), tr P "
                        f"{result.objective:.8f}, gap {result.relative_gap:.2e}  {time.perf_counter() - start:7.1f}s")
                break
        result.polish_system = None                  # S × S: not held into the next round
        if not tight and added.size <= max(10, working.size // 100):
            # the loose solution violates (almost) no candidate outside the working set by more
            # than loose_tol: from now on solve to the final accuracy (warm-started), adding
            # the few violators found, and rescan
            tight = True
            if added.size == 0:
                state = result.state
                continue
        if added.size == 0 and violation_all <= feas_tol:
            if not inner.certified:
                status = "converged"
                message = (f"no {candidates.unit[:-1]} of all {total} violates its bounds by more than {feas_tol:g} "
                           f"after {round_} round(s); no certificate (non-convex restricted solver)")
            elif result.status == "optimal":
                status = "optimal"
                message = (f"no {candidates.unit[:-1]} of all {total} violates by more than {feas_tol:g}; certified "
                           f"relative gap {result.relative_gap:.2e} after {round_} round(s)")
            else:
                status = result.status
                message = (f"all {candidates.unit} feasible, but the last restricted solve ended {result.status}: "
                           f"{result.message}")
            break
        if result.failed:
            status = result.status
            message = f"the restricted solve on {working.size} {candidates.unit} failed: {result.message}"
            break
        if deadline is not None and deadline.passed():       # the restricted solve was cut by the run's limit
            status, message = "max_iterations", stopped(round_)
            break
        if added.size == 0:
            status = "inaccurate"
            message = f"violations remain on working {candidates.unit} the ADMM did not resolve"
            break

        # next working set: kept candidates, then the violators
        if max_working is not None and keep.sum() + added.size > max_working:
            # over the cap: keep only those nearest to a bound, as many as leave room for the new ones
            added = added[:max_working]
            room = max(max_working - added.size, 0)
            slack = np.minimum(values - lo, hi - values)
            keep = np.zeros_like(keep)
            keep[np.argsort(slack, kind="stable")[:room]] = True
        if (loose and loose_hold is not None and max((~keep).sum(), added.size) < loose_hold * keep.size
                and (max_working is None or keep.size + added.size <= max_working)):
            keep[:] = True
        state = inner.carry(result, keep, added.size)
        dropped = np.union1d(dropped, working[~keep])
        readded = np.union1d(readded, added[np.isin(added, dropped)])
        working = np.concatenate([working[keep], added])

    return ColumnGenerationRun(result=result, working=solved, status=status, message=message,
                               max_violation=violation_all, worst_violation=worst,
                               rounds=len(history["working"]), n_points=candidates.n_points,
                               history={k: np.asarray(v) for k, v in history.items()},
                               wall_time=time.perf_counter() - start, settled=settled)


def _settled(candidates: Candidates, inner: RestrictedSolver, result: RestrictedResult, extended: np.ndarray,
             feas_tol: float, exact_violations: bool,
             max_add: int) -> tuple[RestrictedResult, np.ndarray, float] | None:
    """(the settled result, its candidates ``extended`` — the working set, then those added —, the worst
    violation over all candidates) when ``inner.settle`` settles the added ones and a scan of all
    candidates then finds none violated by more than ``feas_tol``; None otherwise."""
    operator, lo, hi = candidates.restricted(extended)
    settled = inner.settle(result, operator, lo, hi)
    result.polish_system = None
    if settled is None:
        return None
    scan = candidates.scan(settled.P, settled.factor, feas_tol, exact_violations, exclude=extended, keep=max_add)
    if scan.fresh or scan.worst > feas_tol:
        return None
    return settled, extended, scan.worst


#: Point sets whose largest |coordinate| lies within [2^-_SCALE_EXPONENT, 2^_SCALE_EXPONENT] are used as given by
#: :func:`column_generation`; others are scaled by a power of two first (:func:`_moderate_scale`).
_SCALE_EXPONENT = 64


def _moderate_scale(X: np.ndarray) -> np.ndarray:
    """X, or X scaled by a power of two so that its largest |entry| lies in [1/2, 1) when that entry is outside
    [2⁻⁶⁴, 2⁶⁴] (``_SCALE_EXPONENT``) and no nonzero entry would become subnormal.

    The pairs' unit secants (x_i − x_j)/‖x_i − x_j‖ of NuMax eq. (1), hence the SDP, P and the multipliers, do not
    change: a power-of-two scaling is exact in floating point away from overflow and underflow, and so are the
    differences, norms and quotients formed from it. The restricted solves, however, form products of high powers
    of the points' coordinates, which overflow or underflow from largest entries of about 2^±130 (the pair
    ADMM's eigensolver then fails on inf or NaN)."""
    shift = exact_scale_exponent(X, _SCALE_EXPONENT)
    return np.ldexp(X, -shift) if shift else X


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
    loose_max_iter: int = 10,
    loose_keep_multiplier: float | None = 1e-2,
    loose_hold: float | None = 0.3,
    settle: bool = True,
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
    time_limit: float | None = None,
    cpu_time_limit: float | None = None,
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
    loose_hold : float, optional
        As for :func:`run_column_generation`: a loose round that would change less than this
        share of the working set keeps all of it, so that the next round extends the factor of
        its least-squares matrix rather than refactorising it; None never holds. The late loose
        rounds change a few hundred pairs of thousands: held, they extend the factor, and the
        working set they grow is trimmed by the first tight round's keep rule.
    settle : bool
        As for :func:`run_column_generation`: the few pairs the scan after an optimal tight round
        adds are first settled by a polish of the factor over them and the working set
        (:func:`~sdpembed.solvers.numax.factor_polish.polish_with_system`, reusing the normal system
        of the polish that ended the round), which ends the run when a scan of all pairs then finds
        none violated and the gap against the round's proven bound stays within ``gap_tol``;
        otherwise the next round solves as usual.
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
    time_limit, cpu_time_limit : float, optional
        Seconds of wall-clock time, and CPU seconds of the whole process (every thread, BLAS's
        included: :mod:`sdpembed._deadline`), for the whole run; checked after each round, and each
        restricted solve gets at most the time left. A run past either ends ``max_iterations`` with
        the last round's P, its worst violation over all pairs and its bound.

    Returns
    -------
    SolveResult
        ``solution`` is P; ``max_violation`` is the worst violation over all pairs (0 if
        every constraint holds); ``dual_bound`` is valid for the
        full problem; ``extra`` holds ``pairs`` (the final working set), ``rounds``, ``settled``
        (the pairs of the last scan settled without a restricted solve, see ``settle``), the
        per-round ``history`` and ``state``, a warm start for the final working set (the ADMM's
        iterates, without its S × S matrices, which a warm-started run rebuilds).
    """
    start = time.perf_counter()
    deadline = Deadline.of(time_limit, cpu_time_limit, wall_start=start)
    X = _moderate_scale(as_matrix(X, "X", min_rows=2))
    if verbose:
        say(f"numax-cg: {X.shape[0]} points in dimension {X.shape[1]}; the basis of their span")
    if pair_count(X.shape[0]) <= 2 * check_positive_int(initial_pairs, "initial_pairs"):
        initial_pairs = pair_count(X.shape[0])
    # at most about 2·initial_pairs neighbour pairs: with many points, k neighbours each would make
    # S₀ (and its S×S inverse) large while a first loose round cannot yet use it
    initial_neighbors = min(check_positive_int(initial_neighbors, "initial_neighbors", minimum=0),
                            max(1, 2 * initial_pairs // X.shape[0]))
    basis = _points_span(X) if implicit and not {"basis", "span"} & set(admm_options or {}) else None
    # the points' coordinates in it, once for all rounds
    span = None if basis is None else SpanCoordinates(X, basis)
    inner = _restricted_admm(problem, admm_options, feas_tol=feas_tol, gap_tol=gap_tol, loose_tol=loose_tol,
                             loose_max_iter=loose_max_iter, verbose=verbose, implicit=implicit, span=span,
                             deadline=deadline)
    run = run_column_generation(
        X, bounds, inner, initial_pairs=initial_pairs,
        initial_neighbors=initial_neighbors, max_add=max_add, keep_tol=keep_tol, keep_multiplier=keep_multiplier,
        loose_tol=loose_tol, loose_keep_multiplier=loose_keep_multiplier, loose_hold=loose_hold, settle=settle,
        feas_tol=feas_tol, max_rounds=max_rounds, block_rows=block_rows,
        exact_violations=exact_violations, random_state=random_state, verbose=verbose, scan_backend=scan_backend,
        deadline=deadline)
    return _cg_result(problem, run, start, {"pairs": run.pairs, "y": run.result.y})


#: singular values of the centred points below this share of the largest are rounding (MNIST's are
#: ≈ 5·10⁻¹⁶ of it), the others a direction of their span
SPAN_RTOL = 1e-12


def _points_span(X: np.ndarray) -> np.ndarray | None:
    """An orthonormal basis (N, r) of the span of the centred points X, which holds every secant; None
    when it is all of Rᴺ. Every restricted solve of column generation works in it.

    Only rounding-level directions are left out (``SPAN_RTOL``): the restricted ADMM takes the basis
    only if it reproduces every secant to 10⁻¹⁰
    (:func:`~sdpembed.solvers.numax.pair_linalg.holds_secants`), and otherwise works in the span of
    each round's secants, computed afresh, or in all N dimensions (a genuine direction of 6·10⁻⁷ of
    the largest among 10,000 MNIST images, dropped, cost every round both).
    """
    _, sigma, rows = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    if not sigma.size or not sigma[0] > 0:
        return None
    keep = sigma > SPAN_RTOL * sigma[0]
    return np.ascontiguousarray(rows[keep].T) if keep.sum() < X.shape[1] else None


def _restricted_admm(problem: str, admm_options: dict | None, *, feas_tol: float, gap_tol: float,
                     loose_tol: float | None, loose_max_iter: int, verbose: bool | int, implicit: bool,
                     span: SpanCoordinates | None = None, deadline: Deadline | None = None) -> _NuMaxADMM:
    """The restricted ADMM of NuMax-CG with its tight and loose options (``admm_options`` with the
    tolerances of :func:`column_generation`; ``span`` the points in the basis every round shares, for
    ``implicit``; ``deadline`` the run's, whose remaining time each restricted solve gets at most)."""
    tight_options = dict(admm_options or {})
    if verbose and not isinstance(verbose, bool) and "verbose" not in tight_options:
        tight_options["verbose"] = int(verbose)             # --verbose K: the restricted ADMMs too
    stopping = check_bundle(tight_options.get("stopping"), ADMMStopping, "admm_options['stopping']")
    tight_options["stopping"] = replace(stopping, feas_tol=feas_tol, gap_tol=gap_tol)
    loose_max_iter = check_positive_int(loose_max_iter, "loose_max_iter")
    if span is not None:
        tight_options["span"] = span
    loose_options = dict(tight_options)
    if implicit:
        tight_options["keep_polish_system"] = True         # for _NuMaxADMM.settle
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
    return _NuMaxADMM(problem, tight_options, loose_options, implicit, deadline)


def _cg_result(problem: str, run: ColumnGenerationRun, start: float, proof: dict[str, np.ndarray]) -> SolveResult:
    """The :class:`~sdpembed.results.SolveResult` of a NuMax-CG run: its last restricted solve's P and
    bound, the run's status and all-candidates violation, and ``proof`` (the working set and its
    multipliers, as the file contract names them) in ``extra``."""
    result = run.result.raw
    P = result.solution
    return build_result(
        problem, "P", P, float(np.trace(P)), result.dual_bound, status=run.status, message=run.message,
        method="cg", solver="numax_cg", max_violation=run.max_violation, min_eigenvalue=result.min_eigenvalue,
        iterations=int(sum(run.history["admm_iterations"])), start=start, history=run.history,
        extra={**proof, "rounds": run.rounds, "settled": run.settled, "rank": result.extra["rank"],
               "state": _light_state(result.extra["state"])},
    )


def _light_state(state: ADMMState) -> ADMMState:
    """The warm start a finished run keeps: its iterates and multipliers, without the S × S parts
    (𝒜𝒜*, the factor or inverse of I + 𝒜𝒜*), which a warm-started run rebuilds from its secants and
    which would make every fitted estimator hold (and pickle) gigabytes at S of 10⁴. Nor the tracked
    𝒜(L), 𝒜(Λ): a later run may start from it on other pairs, whose values it then computes."""
    return replace(state, K_inv=None, gram=None, gram_kept=None, factor=None, factor_kept=None, values=None)


def secant_column_generation(
    secants: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    problem: str = "numax",
    initial_secants: int = 2000,
    max_add: int = 2000,
    keep_tol: float = 1e-4,
    keep_multiplier: float = 1e-4,
    loose_tol: float | None = 1e-3,
    loose_max_iter: int = 15,
    loose_keep_multiplier: float | None = 1e-2,
    feas_tol: float = 1e-6,
    gap_tol: float = 1e-5,
    max_rounds: int = 100,
    block_size: int = SECANT_BLOCK,
    random_state=None,
    verbose: bool | int = False,
    admm_options: dict | None = None,
    time_limit: float | None = None,
    cpu_time_limit: float | None = None,
) -> SolveResult:
    """NuMax-CG (Algorithm 2) over an explicit secant list: the SDP (4) or (7) at any number of secants.

    The ADMM (:func:`~sdpembed.solvers.numax.admm.box_trace_admm`) holds (I + 𝒜𝒜*)⁻¹, an S × S
    matrix, and stops at :data:`~sdpembed.solvers.numax.admm_control.MAX_CONSTRAINTS` secants. Two
    ways past that limit were open: this column generation, and the ADMM with its least-squares
    step solved in the space of symmetric N × N matrices (Woodbury: an N(N+1)/2-square system
    instead of S × S). The second still costs O(S·N²) per iteration for 𝒜(W) and 𝒜*(c) over all S
    secants, over the thousands of iterations an ADMM takes; column generation touches all S
    secants only once per round, in a scan of O(S·N·k) for P of rank k, and runs the ADMM on a
    working set of the order of the active constraints (at most about N(N+1)/2 at a vertex of (*)),
    so its cost grows with S only through the scans. Hence column generation:

    1. solve the restricted problem on a working set of secants (a random sample of
       ``initial_secants`` to start) with the ADMM, warm-started, loosely while violators abound;
    2. keep the working secants that are active or carry a multiplier;
    3. scan all S secants through a factor Ψ of P, vᵀPv = ‖Ψv‖², with a rigorous margin
       (:class:`~sdpembed.solvers.numax.candidates.SecantCandidates`);
    4. add the worst violators (at most ``max_add``) and repeat — until a scan finds no violation
       above ``feas_tol``.

    The certificate is that of the point form: the restricted problem's dual-feasible multipliers,
    zero on the secants outside the working set, are dual feasible for all S secants (𝒜*(y) involves
    only the secants with y ≠ 0), so the restricted bound bounds the full optimum, and the final scan
    proves P feasible for all of them. The result's ``extra["y"]`` holds one multiplier per secant
    (the file contract's ``dual_y``), from which ``verify`` proves the bound itself.

    Parameters
    ----------
    secants : ndarray of shape (S, N)
        Unit secants (NuMax eq. (1)).
    lo, hi : ndarray of shape (S,)
        Bounds on vᵀPv; ``±inf`` marks an absent bound (NuMax-Class).
    problem : str
        Registry name recorded in the result.
    initial_secants : int
        Size of the first working set, a uniform sample of the secants (all of them when there are
        at most twice as many).
    block_size : int
        Secant rows per block of a scan.
    max_add, keep_tol, keep_multiplier, loose_tol, loose_max_iter, loose_keep_multiplier : optional
        As for :func:`column_generation`.
    feas_tol, gap_tol, max_rounds, random_state, verbose, time_limit, cpu_time_limit : optional
        As for :func:`column_generation`.
    admm_options : dict, optional
        Further keyword arguments of the restricted
        :func:`~sdpembed.solvers.numax.admm.box_trace_admm`; its ``stopping`` as for
        :func:`column_generation`.

    Returns
    -------
    SolveResult
        ``solution`` is P; ``max_violation`` bounds the worst violation over all S secants (0 if
        every constraint holds); ``dual_bound`` is valid for the full problem; ``extra`` holds ``y``
        (S,), the dual-feasible multipliers of every secant (zero outside the final working set),
        ``secants`` (the final working set's row indices), ``rounds`` and the per-round ``history``.
    """
    start = time.perf_counter()
    deadline = Deadline.of(time_limit, cpu_time_limit, wall_start=start)
    candidates = SecantCandidates(secants, lo, hi, block_size)
    if verbose:
        say(f"numax-cg: {candidates.describe()}")
    initial_secants = check_positive_int(initial_secants, "initial_secants")
    inner = _restricted_admm(problem, admm_options, feas_tol=feas_tol, gap_tol=gap_tol, loose_tol=loose_tol,
                             loose_max_iter=loose_max_iter, verbose=verbose, implicit=False, deadline=deadline)
    run = run_column_generation(
        candidates, None, inner, initial_pairs=initial_secants, initial_neighbors=0, max_add=max_add,
        keep_tol=keep_tol, keep_multiplier=keep_multiplier, loose_tol=loose_tol,
        loose_keep_multiplier=loose_keep_multiplier, feas_tol=feas_tol, max_rounds=max_rounds,
        random_state=random_state, verbose=verbose, deadline=deadline)
    y = np.zeros(candidates.total)
    y[run.working] = run.result.y
    return _cg_result(problem, run, start, {"secants": run.working, "y": y})


#: Options of :func:`column_generation` that only the pairs of a point set have.
POINT_FORM_OPTIONS = ("initial_neighbors", "block_rows", "implicit", "exact_violations", "scan_backend")


def solve_numax_cg(instance, **options) -> SolveResult:
    """NuMax-CG on a :class:`~sdpembed.problems.NuMaxInstance` or
    :class:`~sdpembed.problems.NuMaxClassInstance`: over all pairs of X in point form
    (:func:`column_generation`), over the listed secants otherwise (:func:`secant_column_generation`).

    ``options`` are those of :func:`column_generation`; with listed secants ``initial_pairs`` is
    the first working set's size (``initial_secants``) and the options of the pairs of a point set
    (``POINT_FORM_OPTIONS``) are refused.
    """
    if instance.point_form:
        return column_generation(instance.X, instance.bounds_of_pairs, problem=instance.problem, **options)
    point_only = sorted(set(options) & set(POINT_FORM_OPTIONS))
    if point_only:
        raise ValueError(f"option(s) {', '.join(point_only)} of column generation apply to the pairs of a point-form "
                         "instance; this instance lists its secants")
    if "initial_pairs" in options:
        options["initial_secants"] = options.pop("initial_pairs")
    lo, hi = instance.bounds()
    return secant_column_generation(instance.secant_matrix, lo, hi, problem=instance.problem, **options)
