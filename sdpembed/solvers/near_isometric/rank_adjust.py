"""Rank adjustment (Luo et al. [1], Sec. 5.1, Algorithm 3) and column generation (Sec. 5.2, Algorithm 4)
for FroMax and NILE-Pro.

**Algorithm 3 (FroMax/NILE-Pro RA).** FroMax and NILE-Pro need the rank M. Starting from a
sufficiently large R₀, run the method; if it reaches δ, truncate P = ΨᵀΨ = UΓUᵀ to its
R − 1 leading eigenpairs, Ψ₀ = Γ_{R−1}^½ U_{R−1}ᵀ ((2.9) of [1]), and run again at rank R − 1
from Ψ₀; stop at the first rank where the method fails and return the last map that met δ.
``rank_step=1, restart="truncate"`` is exactly that. Departures, all optional:

* **Returned map.** The printed pseudo-code returns "the Ψ given in the last iteration", i.e.
  the failed one; we return the last map that *met* δ, with its rank.
* **The rank search** (``rank_step="bisect"``, default). Two ranks bracket the answer: s, the
  least rank whose run met δ (after the jump of "Feasible truncations are skipped"), and f, the
  greatest rank below s whose run failed (``min_rank`` − 1 while none has). A rank that met δ is
  never run again and no rank ≤ f is tried (rule (3) of "Failing fast"). While no rank has
  failed, the next rank is s − ⌈s/4⌉: no run far below a rank that met δ without a failure to
  bracket the answer; once one has,
  ⌊(f + s)/2⌋, a bisection of the bracket (:func:`next_bisect_rank`). The search ends when
  f = s − 1, Algorithm 3's stopping rule (rank s met δ, rank s − 1 did not), in
  O(log R₀) runs. With outcomes monotone in the rank it finds the rank of Algorithm 3's walk
  with steps of one.
* **Halving steps** (``rank_step="halving"``). From R₀ down by R₀/4, the step halved after
  every failure, retrying from the last success, until a step of one fails: the same stopping
  rule, but its first failure may lie far below the answer (from R₀ = 189: 142, 95, 48, then 1).
* **Restarts** (``restart="pca"``, default). Each new rank starts from the scaled principal
  directions of the secants, like a first run, instead of the truncation of the last map: the
  truncated map keeps the scale of a higher-rank solution and distorts the secants that relied
  on the dropped directions, so it reaches δ later, if at all, and at higher ranks
  (BENCHMARKS.md, "The linear-embedding family").
* **Feasible truncations are skipped.** Every run first checks its start Ψ₀ and returns it at
  iteration 0 when it already meets δ. The truncations ‖Γ_r^½U_rᵀv‖² = Σ_{j≤r} λ_j(u_jᵀv)²
  grow with r for every v, so the ranks at which the truncated map still meets δ form an
  interval, found by bisection, and we jump to its least element. With truncation restarts and
  steps of one, Algorithm 3 would walk through each with zero-iteration runs to the same map.
* **Failing fast.** Four rules keep a rank that cannot reach δ from costing the whole iteration
  budget (``max_iter``, 5,000 by default) of its run. (1) Every run forecasts: at each
  ``patience`` checkpoint (200 iterations) it stops as ``stalled`` when, at the pace of the last
  checkpoint's window, the excess of its least distortion over δ would need more iterations than
  are left (:class:`~sdpembed.solvers.near_isometric.nonconvex.BestMap`; ``forecast=False``
  restores the plain budget). (2) Over all pairs (column generation) the rounds forecast too: at
  a rank the method cannot reach, each round meets δ on its working set and the next scan finds
  new violators, so no single run stalls while the rounds eat the budget. Before each round
  after the second, the excess over δ of the last map's worst distortion over all pairs (the
  worst violators are added to the working set), and what the last rounds' iterations took off
  it, give the iterations still needed at that pace; the window is the last rounds back until
  they took at least ``patience`` iterations (several short rounds are judged together, a
  window of fewer iterations is not judged), and when the iterations needed exceed what is left
  of the budget, the run stops as ``stalled``. (3) No rank at or below a rank that failed is
  tried: feasibility is monotone in the rank (a map of rank r that meets δ is one of rank r + 1
  with a zero row), so a failure at rank f is evidence against every rank below it, and the
  search continues only between the highest failed rank below the last success and that
  success. (4) At FroMax's working-set cap (``exact_max``, below) the working set churns instead
  of growing (each round drops as many pairs as it adds), so the all-pairs excess over δ
  oscillates from round to round and shrinks by a factor per round rather than by an amount per
  iteration: there the rounds are forecast geometrically. With m the least excess of the last
  :data:`CAP_RATE_ROUNDS` = k rounds (all on the capped set) and m₀ the least before them, the
  rate per round is ρ = (m/m₀)^{1/k}, and reaching :data:`CAP_TARGET`·δ takes
  log(CAP_TARGET·δ/m)/log ρ more rounds (infinitely many when ρ ≥ 1); the rounds left are
  those ``max_rounds`` leaves and the iterations left allow at the mean iterations of those k
  rounds, the fewer of the two. When the rounds needed exceed the rounds left, the run stops as
  ``stalled``. A rank that reaches δ does so with an excess that keeps shrinking by a steady
  factor until it vanishes; one that cannot settles on a plateau above δ (each round meets δ on
  its working set and the churn brings back violators), where ρ nears 1. Rules (1), (2) and (4)
  are forecasts, not proofs: a rank they give up is reported as failed (``stalled``, with the
  forecast in the message), never as unreachable; the rank search then treats it as failed
  (rule (3)), so its answer is the least rank met within the rules.
* **R₀** defaults to the smallest M at which the scaled leading principal directions of the
  secants already meet δ (:func:`~sdpembed.solvers.near_isometric.nonconvex.pca_feasible_rank`; found by
  bisection, the test is monotone in M), so the first run succeeds at once; [1] only asks for
  R₀ "sufficiently large".
* **R₀ from NuMax** (``initial_map="from_numax"``): R₀ is the rank r of NuMax's solution P of (4)
  [2] on the same secants, solved at δ(1 − :data:`NUMAX_MARGIN`), and the first run starts
  from its factor Λ_r^½U_rᵀ (:func:`numax_factor`). Why a rank-r map meeting δ exists: NuMax's constraints
  |vᵀPv − 1| ≤ δ over the unit secants, P ⪰ 0, are the box (2.8) of [1], the feasibility
  notion of FroMax and NILE-Pro, which ask ‖𝒜(ΨᵀΨ) − 1‖_∞ ≤ δ; a PSD P of rank r is ΨᵀΨ for
  Ψ = Λ_r^½U_rᵀ with r rows, and vᵀPv = ‖Ψv‖². So r bounds the answer from above (NuMax's
  rank at the slightly smaller δ, at least its rank at δ). Solved at δ itself, P would meet δ
  only up to NuMax's tolerances (its final scan's ``feas_tol``, 1e-6), and FroMax does not
  close such a gap: at the margin, its own tolerances and the dropped eigenvalues (below
  :data:`NUMAX_TAIL_TOL` of the largest) fit inside, and the first run meets δ at once. The
  bound is one of existence: the
  non-convex method need not find a map at a lower rank that has one. Over all pairs NuMax's
  working pairs that its factor nearly makes active (within δ/10 of a bound) also seed the
  first working set. The NuMax solve is part of the run's time; it pays when the PCA rank is
  far above the answer (BENCHMARKS.md, "The linear-embedding family"). Only feasibility matters
  here, not optimality: NuMax is solved to a relative gap of :data:`NUMAX_START_GAP` (and
  residual :data:`NUMAX_START_TOL`) instead of its 10⁻⁵, while its final scan still proves every
  pair within δ(1 − :data:`NUMAX_MARGIN`) + ``feas_tol``; a less optimal P may have a higher
  rank, which the jump of "Feasible truncations are skipped" takes down to the least truncation
  that still meets δ on all pairs.

**Algorithm 4 (FroMax/NILE-Pro CG).** The method is solved on a working set of pairs, all
pairs are scanned for violators, the worst are added, and the method is run again
warm-started — through the same driver as NuMax-CG
(:func:`~sdpembed.solvers.numax.column_generation.run_column_generation`), whose scan is exact.
There is no certificate: a run ends ``converged`` when the final scan proves that every pair
is within δ (to ``feas_tol``), and the reported ``isometry`` is measured on all pairs.

* **No pair is dropped** (``keep_tol=inf``, default). [1] keeps only the active pairs
  (|‖Ψv‖² − 1| = δ) from one round to the next. With a non-convex inner solver that is unsafe:
  a dropped pair is no longer constrained, the next map may violate it again, and the rounds
  can cycle without settling on a working set. Keeping every pair, the working set grows
  monotonically and the loop ends after at most ⌈S/``max_add``⌉ rounds. A finite ``keep_tol``
  restores the rule of [1].
* **FroMax's working set is capped** at its ``exact_max`` (6,000 pairs): its P-step factorises
  an S×S matrix. Beyond the cap only the pairs nearest to a bound are kept (the rule of [1], with
  its risk of cycling, which ``max_rounds`` and the budget below bound).
* **One iteration budget** (``max_iter``) for all the rounds of a run: at a rank the method
  cannot reach, each round meets δ on its working set but leaves violators outside, each
  slower than the last.
* Rank adjustment over column generation starts every rank from the first working set plus
  the pairs within δ/10 of a bound under the last map that met δ.
* **In the span of the points.** Every secant lies in the span of the centred points, of dimension
  r ≤ min(n − 1, N). The runs, their scans and the NuMax start work in the coordinates XB of an
  orthonormal basis B of it (:func:`span_coordinates`): a map Ψ_B (M, r) there is the map Ψ_B Bᵀ
  of the points, with the same distortion of every pair (the constraints (2.8) see a map only
  through the secants), and every product with the points costs r/N of its cost in Rᴺ. The maps
  returned are Ψ_B Bᵀ, their distortion measured again on the points themselves.

**What is provably comparable with NuMax.** NuMax (4) minimises tr P over the same
constraints; any map that meets δ gives a feasible P = ΨᵀΨ, hence ‖Ψ‖_F² = tr ΨᵀΨ ≥ the NuMax
optimum ≥ any certified NuMax dual bound, and rank Ψ ≥ (NuMax optimum)/‖Ψ‖₂². Nothing orders the
*ranks* of NuMax and of these non-convex methods: NuMax minimises a convex surrogate of the
rank, and FroMax/NILE-Pro often find maps of lower rank ([1], Sec. 7.2–7.3).

References
----------
.. [1] J. Luo, K. Shapiro, H.-J. M. Shi, Q. Yang and K. Zhu, "Practical algorithms for learning
   near-isometric linear embeddings", SIAM Undergraduate Research Online 9, 2016
   (arXiv:1601.00062). Implemented here: rank adjustment (Algorithm 3, Sec. 5.1) with the
   truncation (2.9), column generation (Algorithm 4, Sec. 5.2).
.. [2] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the SDP (4), whose optimum bounds ‖Ψ‖_F² from below.
"""

from __future__ import annotations

import dataclasses
import numbers
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._validate import as_matrix, check_delta, check_positive_int, check_random_state
from ...problems.numax_operator import PairSecantOperator, SecantOperator
from ...secants import linear_index_of_pairs, pair_count, pairs_from_linear_index
from ..numax.admm_control import ADMMStopping
from ..numax.column_generation import (
    SPAN_RTOL,
    RestrictedResult,
    column_generation,
    run_column_generation,
    secant_column_generation,
)
from ..numax.pair_scan import factor_values, initial_working_set
from ..numax.scan_backend import ScanBackend, resolve_scan_backend
from .fromax import fromax
from .nilepro import nilepro
from .nonconvex import (
    ACCEPT_RTOL,
    NONCONVEX_STATUSES,
    FactorOps,
    NearIsometricResult,
    centre_scale,
    check_positive_float,
    check_rank,
    pca_feasible_rank,
    truncate_map,
)

__all__ = ["METHODS", "rank_adjust", "near_isometric_cg", "rank_adjust_cg", "pair_gram", "pair_isometry",
           "span_coordinates"]

#: Eigenvalues of NuMax's P below this share of the largest are left out of its factor (the rank
#: threshold of NuMax's estimator, ``sdpembed.linear.factor.DEFAULT_TAIL_TOL``).
NUMAX_TAIL_TOL = 1e-6

#: NuMax is solved for R₀ at δ(1 − NUMAX_MARGIN): its P then meets δ with room beyond NuMax's own
#: tolerances (a violation of 1e-6 of the final scan), which a start exactly on the δ-boundary
#: leaves to the method, and FroMax creeps towards it for ever.
NUMAX_MARGIN = 1e-3

#: The NuMax start is solved to this certified relative gap and residual tolerance (NuMax-CG's own
#: are 1e-5): it needs a P that is feasible, which the final all-pairs scan proves to ``feas_tol``
#: whatever the gap, not an optimal one (module docstring, "R₀ from NuMax").
NUMAX_START_GAP, NUMAX_START_TOL = 1e-2, 1e-3

#: Rule (4) of "Failing fast": at FroMax's working-set cap, the pace of the least all-pairs excess
#: over δ is measured over this many rounds (a geometric rate per round).
CAP_RATE_ROUNDS = 3

#: Rule (4): the forecast counts the rounds until the least excess falls to this share of δ. The
#: runs that met δ at the cap ended within a few rounds of an excess of δ/20 (800 MNIST images,
#: δ = 0.2: 0.023, 0.0021, then none at rank 31; 0.017, 0.003, ... at rank 27), so a smaller target
#: would give up ranks that reach δ.
CAP_TARGET = 0.05

#: The non-convex methods: ``name -> solver(secants, delta, rank, **options)``.
METHODS: dict[str, Callable[..., NearIsometricResult]] = {"fromax": fromax, "nilepro": nilepro}


def _method(method: object) -> Callable[..., NearIsometricResult]:
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    return METHODS[method]


def _smallest_feasible_truncation(
    Psi: np.ndarray, measure: Callable[[np.ndarray], float], delta: float, min_rank: int
) -> tuple[np.ndarray, float]:
    """The truncation Γ_r^½U_rᵀ of Ψ of least rank r ≥ ``min_rank`` that still meets δ, and its
    distortion, by bisection (the distortion is monotone in r; the full map must meet δ)."""
    _, s, Wt = np.linalg.svd(Psi, full_matrices=False)
    lo, hi = min(min_rank, s.size), s.size
    best = measure(s[:hi, None] * Wt[:hi])
    while lo < hi:
        mid = (lo + hi) // 2
        value = measure(s[:mid, None] * Wt[:mid])
        if value <= delta * (1.0 - ACCEPT_RTOL):
            hi, best = mid, value
        else:
            lo = mid + 1
    return truncate_map(Psi, max(hi, min_rank)), best


def next_bisect_rank(succeeded: int, failed: int | None, min_rank: int = 1) -> int:
    """The next rank of ``rank_step="bisect"`` (module docstring, "The rank search"): below the
    least rank that ``succeeded``, by a quarter of it while no rank has failed, else halfway to
    the greatest rank that ``failed`` below it (a result ≤ ``failed`` or ≥ ``succeeded`` ends the
    search)."""
    if failed is None:
        return max(min_rank, succeeded - max(1, -(-succeeded // 4)))
    return (failed + succeeded) // 2


def _adjust(
    run_at_rank: Callable[[int, np.ndarray | str], NearIsometricResult],
    measure: Callable[[np.ndarray], float],
    initial_rank: int,
    initial_map: np.ndarray | str,
    min_rank: int,
    max_steps: int | None,
    rank_step: int | str,
    restart: str,
    delta: float,
    method: str,
    verbose: bool | int,
) -> NearIsometricResult:
    """The loop of Algorithm 3 around ``run_at_rank(rank, Ψ₀)``; ``measure(Ψ)`` is the distortion."""
    start, cpu_start = time.perf_counter(), time.process_time()
    steps: dict[str, list[Any]] = {k: [] for k in ("start_rank", "rank", "status", "isometry", "iterations", "time",
                                                   "cpu_time", "message")}
    halving, bisect = rank_step == "halving", rank_step == "bisect"
    step_size = max(1, initial_rank // 4) if halving or bisect else int(rank_step)
    R, Psi0 = initial_rank, initial_map
    last_ok: NearIsometricResult | None = None
    result: NearIsometricResult | None = None
    failed: set[int] = set()
    failed_rank: int | None = None
    iterations, step = 0, 0
    while max_steps is None or step < max_steps:
        step += 1
        result = run_at_rank(R, Psi0)
        iterations += result.iterations
        if result.success and R > min_rank and measure(truncate_map(result.Psi, R - 1)) <= delta * (1.0 - ACCEPT_RTOL):
            # skip the ranks whose truncation of this map still meets δ (see the module docstring)
            Psi, value = _smallest_feasible_truncation(result.Psi, measure, delta, min_rank)
            result = dataclasses.replace(result, Psi=Psi, isometry=value, max_violation=max(value - delta, 0.0))
        for key, value in zip(steps, (R, result.rank, result.status, result.isometry, result.iterations,
                                      time.perf_counter() - start, time.process_time() - cpu_start, result.message),
                              strict=True):
            steps[key].append(value)
        if verbose:
            print(f"{method} ra step {step:3d}  rank {R:4d} -> {result.rank:4d}  {result.status:14s}  "
                  f"distortion {result.isometry:.6f}  its {result.iterations:6d}  {time.perf_counter() - start:7.1f}s  "
                  f"cpu {time.process_time() - cpu_start:7.1f}s", flush=True)
        if result.success:
            last_ok = result
            if result.rank <= min_rank:
                break
        else:
            failed_rank = R
            failed.add(R)
            if last_ok is None or not (halving or bisect) or (halving and step_size == 1):
                break
            step_size = max(1, step_size // 2)
        # never at or below a rank that failed (see the module docstring, "Failing fast")
        floor = max((f for f in failed if f < last_ok.rank), default=min_rank - 1)
        if bisect:
            R = next_bisect_rank(last_ok.rank, floor if floor >= min_rank else None, min_rank)
        else:
            R = max(min_rank, floor + 1, last_ok.rank - step_size)
        if R >= last_ok.rank or R <= floor:
            break
        if restart == "pca":
            Psi0 = "pca"
        else:
            Psi0 = truncate_map(last_ok.Psi, R)                              # Ψ₀ = Γ_R^½ U_Rᵀ of the last success
    assert result is not None
    history = {k: np.asarray(v) for k, v in steps.items()}
    common = {"delta": delta, "method": f"{method}_ra", "iterations": iterations, "history": history,
              "wall_time": time.perf_counter() - start}
    if last_ok is None:
        return NearIsometricResult(
            Psi=result.Psi, isometry=result.isometry, status=result.status, n_secants=result.n_secants,
            message=f"rank adjustment: the start rank {initial_rank} already fails ({result.message})",
            extra={"last": result}, **common)
    if last_ok.rank - 1 in failed:
        why = f"rank {last_ok.rank - 1} failed"
        if result is not last_ok and failed_rank == last_ok.rank - 1:
            why += f" ({result.status}: {result.message})"
    elif last_ok.rank <= min_rank:
        why = f"reached min_rank={min_rank}"
    else:
        why = f"max_steps={max_steps} reached"
    return NearIsometricResult(
        Psi=last_ok.Psi, isometry=float(last_ok.isometry), status="converged", n_secants=last_ok.n_secants,
        message=f"rank adjustment: delta met at rank {last_ok.rank}; {why}",
        extra={**last_ok.extra, "last": result, "final": last_ok}, **common)


def numax_factor(P: np.ndarray) -> np.ndarray:
    """Λ_r^½U_rᵀ from NuMax's P = UΛUᵀ at its numerical rank r (eigenvalues above
    :data:`NUMAX_TAIL_TOL` times the largest): a rank-r map that meets δ wherever P does, up to
    the dropped tail (module docstring, "The rank search")."""
    w, U = np.linalg.eigh(0.5 * (P + P.T))
    w, U = w[::-1], U[:, ::-1]
    r = max(1, int(np.sum(w > NUMAX_TAIL_TOL * w[0])))
    return np.sqrt(np.maximum(w[:r], 0.0))[:, None] * U[:, :r].T


def _numax_start_options() -> dict[str, Any]:
    """NuMax-CG's tolerances for the NuMax start (:data:`NUMAX_START_GAP`, :data:`NUMAX_START_TOL`)."""
    return {"gap_tol": NUMAX_START_GAP, "admm_options": {"stopping": ADMMStopping(tol=NUMAX_START_TOL)}}


def _start(initial_rank: object, initial_map: np.ndarray | str | None, N: int,
           pca_start: Callable[[], tuple[int, np.ndarray | str]],
           numax_start: Callable[[], np.ndarray]) -> tuple[int, np.ndarray | str]:
    """R₀ and Ψ₀ of the first run: NuMax's rank and factor (``initial_map="from_numax"``), a given rank,
    else the rows of a given map, else the rank (and map) that ``pca_start()`` finds; Ψ₀ is
    ``"pca"`` unless a map is given or found."""
    if isinstance(initial_map, str) and initial_map == "from_numax":
        if initial_rank is not None:
            raise ValueError("initial_rank must not be given with initial_map='from_numax' (R₀ is NuMax's rank)")
        Psi = numax_factor(numax_start())
        return Psi.shape[0], Psi
    if initial_rank is None:
        if isinstance(initial_map, np.ndarray):
            initial_rank = initial_map.shape[0]
        else:
            initial_rank, pca_map = pca_start()
            initial_map = pca_map if initial_map is None else initial_map
    return check_rank(initial_rank, N, "initial_rank"), "pca" if initial_map is None else initial_map


def _check_ra(min_rank: object, max_steps: object, rank_step: object, restart: object,
              N: int) -> tuple[int, int | None, int | str]:
    if restart not in ("pca", "truncate"):
        raise ValueError(f"restart must be 'pca' or 'truncate', got {restart!r}")
    min_rank = check_rank(min_rank, N, "min_rank")
    if max_steps is not None:
        max_steps = check_positive_int(max_steps, "max_steps")
    if rank_step not in ("bisect", "halving"):
        if isinstance(rank_step, str):
            raise ValueError(f"rank_step must be 'bisect', 'halving' or an integer >= 1, got {rank_step!r}")
        rank_step = check_positive_int(rank_step, "rank_step")
    return min_rank, max_steps, rank_step


def rank_adjust(
    secants: np.ndarray | SecantOperator,
    delta: float,
    *,
    method: str = "nilepro",
    initial_rank: int | None = None,
    initial_map: np.ndarray | str | None = None,
    min_rank: int = 1,
    max_steps: int | None = None,
    rank_step: int | str = "bisect",
    restart: str = "pca",
    forecast: bool = True,
    random_state=None,
    verbose: bool | int = False,
    **options: Any,
) -> NearIsometricResult:
    """FroMax RA / NILE-Pro RA (Luo et al., Algorithm 3): the lowest rank at which the method meets δ.

    Parameters
    ----------
    secants : ndarray of shape (S, N) with unit rows, or SecantOperator
    delta : float
        Requested isometry constant δ ∈ (0, 1).
    method : {"nilepro", "fromax"}
    initial_rank : int, optional
        R₀; by default the smallest rank at which the scaled principal directions of the
        secants meet δ (then the first run succeeds at once).
    initial_map : {"pca", "random", "from_numax"} or ndarray of shape (R₀, N), optional
        Ψ₀ of the first run (default: that PCA map, or ``"pca"`` with a given ``initial_rank``).
        ``"from_numax"`` solves NuMax (4) on the secants (column generation) and starts at its rank
        and factor, a rank known to meet δ (module docstring, "R₀ from NuMax"; no
        ``initial_rank`` then).
    min_rank : int
        Do not go below this rank.
    max_steps : int, optional
        Most runs of the method (Algorithm 3's M); by default until the search ends.
    rank_step : "bisect", "halving" or int
        An int k steps down by k from each success and stops at the first failure —
        Algorithm 3 with k = 1. ``"bisect"`` (default) steps down by a quarter of the least
        rank that met δ until a rank fails, then bisects between the greatest failed and the
        least succeeded rank; ``"halving"`` starts with steps of R₀/4 and halves the step at
        each failure, retrying from the last success, until a step of 1 fails. Both have
        Algorithm 3's stopping rule (rank R met δ, rank R − 1 did not) in O(log R₀) rather than
        O(R₀) runs (module docstring, "The rank search").
    restart : {"pca", "truncate"}
        Start of the run at each new rank R: ``"truncate"`` is Algorithm 3's Γ_R^½U_Rᵀ of the
        last map that met δ; ``"pca"`` (default) the scaled leading principal directions of
        the secants, as for a first run (see the module docstring for why).
    forecast : bool
        Give up a run whose pace cannot reach δ within ``max_iter`` (the ``forecast`` of the
        method; see the module docstring, "Failing fast").
    random_state : None, int or Generator
        Seed of ``initial_map="random"``.
    verbose : bool or int
        One line per rank step (and the method's own progress if an int > 1 is given).
    **options
        Options of :func:`~sdpembed.solvers.near_isometric.fromax.fromax` or
        :func:`~sdpembed.solvers.near_isometric.nilepro.nilepro` (``max_iter``, ``beta``, ...).

    Returns
    -------
    NearIsometricResult
        ``Psi`` of the lowest rank that met δ (status ``converged``), or the failed start;
        ``history`` per step: ``rank`` (after the truncation jump), ``start_rank``,
        ``status``, ``isometry``, ``iterations``, ``time`` and ``cpu_time`` (seconds since the
        start, wall and CPU), ``message`` (what ended the run); ``extra["last"]`` the failed run.
    """
    solver = _method(method)
    delta = check_delta(delta)
    ops = FactorOps(secants)
    rng = check_random_state(random_state)
    min_rank, max_steps, rank_step = _check_ra(min_rank, max_steps, rank_step, restart, ops.N)
    inner_verbose = verbose if isinstance(verbose, int) and not isinstance(verbose, bool) and verbose > 1 else False

    def numax_start() -> np.ndarray:
        inner = delta * (1.0 - NUMAX_MARGIN)
        return secant_column_generation(ops.V, np.full(ops.S, 1.0 - inner), np.full(ops.S, 1.0 + inner),
                                        random_state=rng, **_numax_start_options()).solution

    initial_rank, initial_map = _start(initial_rank, initial_map, ops.N, lambda: pca_feasible_rank(ops, delta),
                                       numax_start)

    def run_at_rank(rank: int, Psi0: np.ndarray | str) -> NearIsometricResult:
        return solver(ops, delta, rank, initial_map=Psi0, random_state=rng, verbose=inner_verbose, forecast=forecast,
                      **options)

    return _adjust(run_at_rank, ops.isometry, initial_rank, initial_map, min_rank, max_steps, rank_step, restart,
                   delta, method, verbose)


# ----------------------------------------------------------------------------------------------
# Column generation over all pairs of a point set (Algorithm 4)


def pair_gram(X: np.ndarray, block_rows: int = 1024) -> np.ndarray:
    """Σ_{i<j} v_ij v_ijᵀ over all unit secants of the rows of X (N, N), without forming them.

    Σ_{i<j} W_ij(x_i − x_j)(x_i − x_j)ᵀ = Xᵀ Lap(W) X with weights W_ij = 1/‖x_i − x_j‖² (0 for
    identical points), computed in row blocks: O(n² N + n N²) time, O(block_rows · n) memory.
    Its leading eigenvectors are the principal directions of the secant set (the "pca" start).
    """
    X = as_matrix(X, "X", min_rows=2)
    Xc = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    scale = max(float(sq.max()), 1e-300)
    G = np.zeros((X.shape[1], X.shape[1]))
    for start in range(0, X.shape[0], block_rows):
        rows = slice(start, min(start + block_rows, X.shape[0]))
        d2 = sq[rows, None] + sq[None, :] - 2.0 * (Xc[rows] @ Xc.T)
        W = np.zeros_like(d2)
        np.divide(1.0, d2, out=W, where=d2 > 1e-12 * scale)
        lap_rows = W.sum(axis=1)[:, None] * Xc[rows] - W @ Xc          # rows of Lap(W) X
        G += Xc[rows].T @ lap_rows
    return 0.5 * (G + G.T)


def pair_isometry(X: np.ndarray, Psi: np.ndarray, *, block_rows: int | None = None,
                  scan_backend: ScanBackend | str | None = None) -> tuple[float, int]:
    """max over all pairs of distinct rows of |‖Ψ(x_i − x_j)‖² / ‖x_i − x_j‖² − 1|, and the number of pairs.

    One scan of :func:`~sdpembed.solvers.numax.pair_scan.scan_pair_violations` through Gram
    matrices (on ``scan_backend``, :mod:`~sdpembed.solvers.numax.scan_backend`): an upper bound
    that exceeds the exact value by at most the scan's rounding bound (about 1e-12 on image data).
    """
    Psi = as_matrix(Psi, "Psi", n_cols=np.shape(X)[1])

    def unit(i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.ones(i.shape), np.ones(i.shape)

    scan = resolve_scan_backend(scan_backend).scan(X, Psi.T @ Psi, unit, tol=np.inf, block_rows=block_rows,
                                                   factor=Psi)
    return float(scan.max_violation), scan.n_pairs


def span_coordinates(X: np.ndarray, max_rank: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The points in coordinates of the span of their secants: (XB, B), with B (N, r) an orthonormal
    basis of the span of the centred rows, when r < N and every rank asked for (``max_rank``) is at
    most r; else (X, None).

    Every secant x_i − x_j lies in that span, so x_i − x_j = BBᵀ(x_i − x_j) and, for a map Ψ_B of
    the coordinates, ‖Ψ_B(Bᵀx_i − Bᵀx_j)‖ = ‖Ψ_B Bᵀ(x_i − x_j)‖: a map Ψ_B (M, r) that meets δ on all
    pairs of the rows of XB is the map Ψ = Ψ_B Bᵀ that meets δ on all pairs of X (the constraints
    𝒜(ΨᵀΨ) of (2.8) of [1] see Ψ only through its action on the secants). Each product of FroMax or
    NILE-Pro with the points then costs r/N of the one in Rᴺ (MNIST's 784 pixels span 581
    dimensions over 800 images). Directions whose singular value is at most
    :data:`~sdpembed.solvers.numax.column_generation.SPAN_RTOL` of the largest are rounding and left
    out; the maps are judged again on X itself (:func:`_in_point_coordinates`).
    """
    _, sigma, rows = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    keep = sigma > SPAN_RTOL * sigma[0] if sigma.size and sigma[0] > 0 else np.ones(sigma.size, bool)
    if keep.sum() >= X.shape[1] or max_rank > keep.sum():
        return X, None
    basis = np.ascontiguousarray(rows[keep].T)
    return X @ basis, basis


def _in_point_coordinates(result: NearIsometricResult, basis: np.ndarray | None, X: np.ndarray,
                          feas_tol: float, **scan: Any) -> NearIsometricResult:
    """``result`` of a run on the coordinates XB of :func:`span_coordinates` as a result on the points X:
    its maps Ψ_B (also those of ``extra["final"]`` and ``extra["last"]``) become Ψ_B Bᵀ, and their
    distortion is measured again over all pairs of X (a ``converged`` map that misses δ + ``feas_tol``
    there is reported ``stalled``). ``extra["basis"]`` is B: ``state``, ``y`` and ``inner`` stay in
    its coordinates. Unchanged when ``basis`` is None."""
    if basis is None:
        return result
    measured: dict[int, float] = {}          # one scan a map (``final`` is usually the result's own)

    def lifted(res: NearIsometricResult, **changes: Any) -> NearIsometricResult:
        if id(res.Psi) not in measured:
            measured[id(res.Psi)] = pair_isometry(X, res.Psi @ basis.T, **scan)[0]
        isometry = measured[id(res.Psi)]
        status, message = res.status, res.message
        if status == "converged" and isometry > res.delta + feas_tol:
            status, message = "stalled", f"{message}; over the points themselves the distortion is {isometry:.6g}"
        return dataclasses.replace(res, Psi=res.Psi @ basis.T, isometry=isometry, status=status, message=message,
                                   max_violation=max(isometry - res.delta, 0.0), **changes)

    extra = {**result.extra, "basis": basis}
    for key in ("final", "last"):
        if isinstance(extra.get(key), NearIsometricResult):
            extra[key] = lifted(extra[key])
    return lifted(result, extra=extra)


class _NonConvexInner:
    """FroMax or NILE-Pro as the restricted solver of :func:`run_column_generation` (no certificate).

    With ``forecast`` in the options, the rounds are forecast too (module docstring, "Failing
    fast", rules (2) and (4)): the worst distortion of the last round's map on the next working
    set is its worst over all pairs (the driver adds the worst violators); from what the last
    rounds took off that excess over δ (back until they took ``patience`` iterations), the
    iterations the excess needs at that pace, and when they exceed the budget left the run stops
    as ``stalled`` before solving the round; at the working-set ``cap``, it stops when the
    geometric pace of the least excess over the last :data:`CAP_RATE_ROUNDS` rounds would need
    more rounds to reach :data:`CAP_TARGET`·δ than ``max_rounds`` and the budget leave.
    """

    certified = False

    def __init__(self, solver: Callable[..., NearIsometricResult], delta: float, rank: int,
                 first_map: np.ndarray, rescale: bool, budget: int, options: dict,
                 cap: int | None = None, max_rounds: int | None = None) -> None:
        self.solver, self.delta, self.rank, self.first_map, self.options = solver, delta, rank, first_map, options
        self.rescale, self.budget, self.used, self.cap, self.max_rounds = rescale, budget, 0, cap, max_rounds
        self.forecast, self.patience = bool(options.get("forecast", False)), int(options.get("patience", 200))
        self.last_map: np.ndarray | None = None
        self.last_iterations = 0
        self.excess: list[float] = []            # all-pairs excess over δ after each round, from the first
        self.iterations: list[int] = []          # the iterations of each round
        self.sizes: list[int] = []               # the working set of each round

    def _forecast_stop(self, ops: FactorOps) -> str | None:
        """The message of a run the round rules give up, else None (records the excess).

        ``excess[m]`` is the all-pairs excess after round m + 1, ``iterations[m]`` and ``sizes[m]``
        that round's iterations and working set (module docstring, "Failing fast", rules (2), (4)).
        """
        if self.last_map is None:
            return None
        excess = ops.isometry(self.last_map) - self.delta
        self.excess.append(excess)
        if not self.forecast or len(self.excess) < 2 or excess <= 0.0:
            return None
        k = CAP_RATE_ROUNDS
        if self.cap is not None and len(self.excess) > k and min(self.sizes[-k:]) >= self.cap:
            stop = self._cap_forecast(excess, k)
            if stop is not None:
                return stop
        # the window: the last rounds, back until they took at least `patience` iterations
        window = 0
        for back in range(1, len(self.excess)):
            window += self.iterations[-back]
            if window >= self.patience:
                break
        if window < self.patience:
            return None
        shrink = self.excess[-1 - back] - excess
        left = self.budget - self.used
        needed = np.inf if shrink <= 0.0 else excess / shrink * window
        if needed <= left:
            return None
        return (f"round forecast: the worst distortion over all pairs {excess + self.delta:.6g} > delta "
                f"{self.delta:g}; at the pace of the last {back} round(s) ({window} iterations, excess "
                f"{self.excess[-1 - back]:.3g} -> {excess:.3g}) it would need about {needed:.0f} more iterations, "
                f"{left} are left of max_iter")

    def _cap_forecast(self, excess: float, k: int) -> str | None:
        """Rule (4) (module docstring, "Failing fast"): the message when the geometric pace of the
        least excess over the last ``k`` rounds cannot reach CAP_TARGET·δ in the rounds left."""
        before, recent = min(self.excess[:-k]), min(self.excess[-k:])
        target = CAP_TARGET * self.delta
        if recent <= target:
            return None
        rate = (recent / before) ** (1.0 / k)
        needed = np.inf if rate >= 1.0 else np.log(target / recent) / np.log(rate)
        per_round = max(float(np.mean(self.iterations[-k:])), 1.0)
        left = (self.budget - self.used) / per_round
        if self.max_rounds is not None:
            left = min(left, self.max_rounds - len(self.iterations))
        if needed <= left:
            return None
        return (f"stall at the working-set cap (forecast): the worst distortion over all pairs "
                f"{excess + self.delta:.6g} > delta {self.delta:g}; in the last {k} rounds on {self.cap} pairs its "
                f"least excess over delta went from {before:.3g} to {recent:.3g} (x{rate:.3g} a round), so reaching "
                f"{target:.3g} would take about {needed:.3g} more rounds, {max(left, 0.0):.3g} are left")

    def solve(self, operator: PairSecantOperator, lo: np.ndarray, hi: np.ndarray, warm_start: Any,
              tight: bool) -> RestrictedResult:
        ops = FactorOps(operator)
        max_iter = self.budget - self.used       # the iteration budget is shared by all rounds
        if warm_start is None:                   # first round: the start map (a generated one centred on the pairs)
            Psi0 = self.first_map
            if self.rescale:
                Psi0 = Psi0 * centre_scale(ops.values(ops.images(Psi0)))
            res = self.solver(ops, self.delta, self.rank, initial_map=Psi0, max_iter=max_iter, **self.options)
        elif (stop := self._forecast_stop(ops)) is not None:
            # the warm start evaluated, not iterated: the map and state the run ends with
            res = self.solver(ops, self.delta, self.rank, warm_start=warm_start, max_iter=0, **self.options)
            res = dataclasses.replace(res, status="stalled", message=stop)
        else:
            res = self.solver(ops, self.delta, self.rank, warm_start=warm_start, max_iter=max_iter, **self.options)
        self.used += res.iterations
        self.last_iterations = res.iterations
        self.iterations.append(res.iterations)
        self.sizes.append(ops.S)
        self.last_map = res.Psi
        Psi = res.Psi
        return RestrictedResult(P=Psi.T @ Psi, y=res.extra["y"], state=res.extra["state"], rank=Psi.shape[0],
                                iterations=res.iterations, objective=res.frobenius2, status=res.status,
                                message=res.message, factor=Psi, values=ops.values(ops.images(Psi)),
                                failed=not res.success, raw=res)

    def carry(self, result: RestrictedResult, keep: np.ndarray, n_added: int) -> Any:
        return result.state.restricted(keep, n_added)


def _start_map_of_points(X: np.ndarray, rank: int, initial_map: np.ndarray | str,
                         rng: np.random.Generator) -> np.ndarray:
    N = X.shape[1]
    if isinstance(initial_map, str):
        if initial_map == "pca":
            _, U = np.linalg.eigh(pair_gram(X))
            return U[:, ::-1][:, :rank].T.copy()
        if initial_map == "random":
            return rng.standard_normal((rank, N)) / np.sqrt(rank)
        raise ValueError(f"initial_map must be 'pca', 'random' or an array, got {initial_map!r}")
    Psi = as_matrix(initial_map, "initial_map", n_cols=N)
    if Psi.shape[0] != rank:
        raise ValueError(f"initial_map must have {rank} rows (the rank), got {Psi.shape[0]}")
    return Psi


def _centre_on_pairs(X: np.ndarray, Psi: np.ndarray, working: np.ndarray) -> float:
    """:func:`~sdpembed.solvers.near_isometric.nonconvex.centre_scale` of Ψ on the pairs ``working``
    (linear indices)."""
    i, j = pairs_from_linear_index(working, X.shape[0])
    D = X[i] - X[j]
    keep = np.any(D != 0.0, axis=1)
    B = D[keep] @ Psi.T
    return centre_scale(np.einsum("ij,ij->i", B, B) / np.einsum("ij,ij->i", D[keep], D[keep]))


def near_isometric_cg(
    X: np.ndarray,
    delta: float,
    rank: int | None = None,
    *,
    method: str = "nilepro",
    initial_map: np.ndarray | str = "pca",
    working_set: np.ndarray | None = None,
    initial_pairs: int = 2000,
    initial_neighbors: int = 5,
    max_add: int = 2000,
    keep_tol: float | None = None,
    keep_multiplier: float = 1e-2,
    feas_tol: float = 1e-12,
    max_rounds: int = 100,
    block_rows: int | None = None,
    random_state=None,
    verbose: bool | int = False,
    scan_backend: ScanBackend | str | None = None,
    **options: Any,
) -> NearIsometricResult:
    """FroMax-CG / NILE-Pro-CG (Luo et al., Algorithm 4) over all pairs of the rows of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, N)
        Points; the constraints are over all their pairwise secants (never materialised).
    delta : float
        Requested isometry constant δ ∈ (0, 1).
    rank : int, optional
        M; by default the rows of an ``initial_map`` array.
    method : {"nilepro", "fromax"}
    initial_map : {"pca", "random"} or ndarray of shape (M, N)
        Start of the first round (``"pca"``: leading eigenvectors of :func:`pair_gram`).
    working_set : ndarray of int, optional
        Linear pair indices of the first working set (default: neighbours and random pairs).
    initial_pairs, initial_neighbors, max_add, max_rounds, block_rows
        As for :func:`~sdpembed.solvers.numax.column_generation.column_generation`.
    keep_tol, keep_multiplier : float
        Working pairs within ``keep_tol`` of a bound, or whose multiplier exceeds
        ``keep_multiplier`` times the largest, stay. By default (``keep_tol=inf``) no pair
        is ever dropped (see the module docstring).
    feas_tol : float
        Violation allowed in the final all-pairs scan.
    random_state : None, int or Generator
        Seed of the working set and of ``initial_map="random"``.
    verbose : bool or int
        One line per round (and the method's progress when an int > 1).
    scan_backend : ScanBackend, "local" or None
        Where the scans of all pairs run (:mod:`~sdpembed.solvers.numax.scan_backend`; the
        result is the same).
    **options
        Options of the method (``beta``, ``beta1``, ``patience``, ...). ``max_iter``
        (default 5000) is the budget of method iterations over *all* rounds: a rank the
        method cannot reach keeps finding violators outside the working set, each round
        slower than the last, and the budget ends such runs.

    Returns
    -------
    NearIsometricResult
        ``status`` ``converged`` when the final scan proved every pair within δ + ``feas_tol``;
        ``isometry`` on all pairs; ``extra``: ``pairs`` (final working set, (S, 2)),
        ``working_set`` (linear indices), ``rounds``, ``state``, ``y``, ``inner`` (the last
        restricted result), and ``basis`` (B of :func:`span_coordinates`, in whose coordinates
        ``state``, ``y`` and ``inner`` are; absent when the points span Rᴺ or ``rank`` exceeds
        their span); ``history``: the per-round trace of the driver (``objective`` is ‖Ψ‖_F²,
        ``admm_iterations`` the method's iterations).
    """
    start = time.perf_counter()
    solver = _method(method)
    X = as_matrix(X, "X", min_rows=2)
    delta = check_delta(delta)
    rng = check_random_state(random_state)
    if rank is None:
        if isinstance(initial_map, str):
            raise ValueError("rank must be given (an integer >= 1) unless initial_map is an array")
        rank = np.asarray(initial_map).shape[0]
    rank = check_rank(rank, X.shape[1])
    if keep_tol is None:
        keep_tol = np.inf
    elif isinstance(keep_tol, bool) or not isinstance(keep_tol, numbers.Real) or not float(keep_tol) >= 0.0:
        raise ValueError(f"keep_tol must be a real number >= 0 (inf: never drop a pair), got {keep_tol!r}")
    feas_tol = check_positive_float(feas_tol, "feas_tol", allow_zero=True)
    inner_verbose = verbose if isinstance(verbose, int) and not isinstance(verbose, bool) and verbose > 1 else False
    first = _start_map_of_points(X, rank, initial_map, rng)
    points, basis = span_coordinates(X, rank)
    if basis is not None:
        first = first @ basis                    # the start's action on the secants (module docstring)
    max_iter = check_positive_int(options.pop("max_iter", 5000), "max_iter", minimum=0)
    cap = options.get("exact_max", 6000) if method == "fromax" else None
    inner = _NonConvexInner(solver, delta, rank, first, isinstance(initial_map, str), max_iter,
                            {"verbose": inner_verbose, **options}, cap, max_rounds)

    def bounds(i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.full(i.shape, 1.0 - delta), np.full(i.shape, 1.0 + delta)

    run = run_column_generation(
        points, bounds, inner, initial_pairs=initial_pairs, initial_neighbors=initial_neighbors,
        working_set=working_set, max_add=max_add, keep_tol=keep_tol, keep_multiplier=keep_multiplier, loose_tol=None,
        feas_tol=feas_tol, max_rounds=max_rounds, block_rows=block_rows, exact_violations=False, random_state=rng,
        max_working=cap, active_tol=0.1 * delta, verbose=bool(verbose), scan_backend=scan_backend)
    last = run.result
    Psi = last.factor
    status = run.status if run.status in NONCONVEX_STATUSES else "stalled"
    # the final scan bounds max |‖Ψv‖² − 1| − δ over all pairs (exact to its rounding bound)
    isometry = delta + run.worst_violation if np.isfinite(run.worst_violation) else pair_isometry(points, Psi)[0]
    n_pairs = pair_count(X.shape[0])
    result = NearIsometricResult(
        Psi=Psi, delta=delta, isometry=isometry, status=status, message=f"{method}-cg: {run.message}",
        method=f"{method}_cg", iterations=int(sum(run.history["admm_iterations"])),
        wall_time=time.perf_counter() - start, history=run.history,
        n_secants=n_pairs,
        max_violation=max(isometry - delta, 0.0),
        extra={"pairs": run.pairs, "working_set": run.working, "rounds": run.rounds, "state": last.state,
               "y": last.y, "inner": last.raw, "scan_violation": run.max_violation})
    return _in_point_coordinates(result, basis, X, feas_tol, block_rows=block_rows, scan_backend=scan_backend)


def rank_adjust_cg(
    X: np.ndarray,
    delta: float,
    *,
    method: str = "nilepro",
    initial_rank: int | None = None,
    initial_map: np.ndarray | str | None = None,
    min_rank: int = 1,
    max_steps: int | None = None,
    rank_step: int | str = "bisect",
    restart: str = "pca",
    forecast: bool = True,
    random_state=None,
    verbose: bool | int = False,
    scan_backend: ScanBackend | str | None = None,
    **options: Any,
) -> NearIsometricResult:
    """Algorithm 3 over Algorithm 4: rank adjustment where every run is a column generation
    over all pairs of the rows of ``X`` (the working set carries over from rank to rank).

    Parameters
    ----------
    X : ndarray of shape (n, N)
    delta : float
    method : {"nilepro", "fromax"}
    initial_rank : int, optional
        R₀; by default the smallest rank at which the scaled principal directions of all
        secants meet δ on all pairs (found by bisection with exact scans).
        ``initial_map="from_numax"``: NuMax-CG's rank on all pairs (module docstring, "R₀ from NuMax").
    initial_map, min_rank, max_steps, rank_step, restart, forecast, random_state, verbose
        As for :func:`rank_adjust` (the forecast of every round: its budget is what the rounds
        before it left).
    scan_backend : ScanBackend, "local" or None
        Where every scan of all pairs runs, as for :func:`near_isometric_cg`.
    **options
        Options of :func:`near_isometric_cg` and of the method. Each rank starts from the
        first working set (``initial_pairs``, ``initial_neighbors``) and the pairs within
        δ/10 of a bound under the last map that met δ.

    Returns
    -------
    NearIsometricResult
        As for :func:`rank_adjust`; ``isometry`` is over all pairs of ``X``; ``extra["basis"]`` as
        for :func:`near_isometric_cg` (the maps of ``final`` and ``last`` are maps of the points).
    """
    _method(method)
    X = as_matrix(X, "X", min_rows=2)
    delta = check_delta(delta)
    rng = check_random_state(random_state)
    min_rank, max_steps, rank_step = _check_ra(min_rank, max_steps, rank_step, restart, X.shape[1])
    block_rows = options.get("block_rows")
    backend = resolve_scan_backend(scan_backend)
    # every run, scan and the NuMax start in the coordinates of the points' span (span_coordinates)
    given = [initial_rank] if isinstance(initial_rank, numbers.Integral) and not isinstance(initial_rank, bool) else []
    if isinstance(initial_map, np.ndarray):
        initial_map = as_matrix(initial_map, "initial_map", n_cols=X.shape[1])
        given.append(initial_map.shape[0])
    points, basis = span_coordinates(X, max([min_rank, *given]))
    if basis is not None and isinstance(initial_map, np.ndarray):
        initial_map = initial_map @ basis
    original, X = X, points

    def measure(Psi: np.ndarray) -> float:
        return pair_isometry(X, Psi, block_rows=block_rows, scan_backend=backend)[0]

    cache: dict[str, Any] = {"working_set": None, "U": None}

    def principal_directions() -> np.ndarray:
        """Eigenvectors of the all-pairs secant Gram, leading first (computed once)."""
        if cache["U"] is None:
            cache["U"] = np.linalg.eigh(pair_gram(X))[1][:, ::-1]
        return cache["U"]

    def pca_start() -> tuple[int, str]:
        """The least rank at which the scaled principal directions meet δ on all pairs (bisection)."""
        U = principal_directions()
        need = (1.0 - delta) / (1.0 + delta)

        def lower(i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return np.full(i.shape, need), np.full(i.shape, np.inf)

        def pca_ok(M: int) -> bool:
            top = U[:, :M].T
            scan = backend.scan(X, top.T @ top, lower, tol=0.0, block_rows=block_rows, factor=top,
                                exact_values=False)
            return scan.max_violation <= 0.0

        lo, hi = 1, X.shape[1]
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if pca_ok(mid) else (mid + 1, hi)
        return lo, "pca"

    first_set = initial_working_set(X, check_positive_int(options.pop("initial_pairs", 2000), "initial_pairs"),
                                     check_positive_int(options.pop("initial_neighbors", 5), "initial_neighbors",
                                                        minimum=0), rng)
    cap = options.get("exact_max", 6000) if method == "fromax" else pair_count(X.shape[0])

    def near_bound(Psi: np.ndarray, pairs: np.ndarray, working: np.ndarray) -> np.ndarray:
        """The pairs of ``working`` that Ψ distorts by at least 0.9δ, the most distorted first, as
        many as the working set's cap leaves beside the first working set."""
        # in chunks of pairs: the explicit (S, N) differences of a large working set are not held
        distortion = np.abs(factor_values(X, Psi, pairs[:, 0], pairs[:, 1]) - 1.0)
        order = np.argsort(-distortion, kind="stable")[: max(cap - first_set.size, 0)]
        return working[order[distortion[order] >= 0.9 * delta]]

    def numax_start() -> np.ndarray:
        """NuMax-CG's P on all pairs; its nearly active pairs seed the first rank's working set."""
        inner = delta * (1.0 - NUMAX_MARGIN)

        def box(i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return np.full(i.shape, 1.0 - inner), np.full(i.shape, 1.0 + inner)

        res = column_generation(X, box, random_state=rng, block_rows=block_rows, scan_backend=backend,
                                **_numax_start_options())
        pairs = res.extra["pairs"]
        cache["working_set"] = near_bound(numax_factor(res.solution), pairs,
                                          linear_index_of_pairs(pairs[:, 0], pairs[:, 1], X.shape[0]))
        return res.solution

    initial_rank, initial_map = _start(initial_rank, initial_map, X.shape[1], pca_start, numax_start)

    def run_at_rank(rank: int, Psi0: np.ndarray | str) -> NearIsometricResult:
        if isinstance(Psi0, str) and Psi0 == "pca":
            top = principal_directions()[:, :rank].T
            Psi0 = top * _centre_on_pairs(X, top, first_set)
        working = first_set if cache["working_set"] is None else np.union1d(first_set, cache["working_set"])
        res = near_isometric_cg(X, delta, rank, method=method, initial_map=Psi0, working_set=working,
                                random_state=rng, verbose=verbose, scan_backend=backend, forecast=forecast,
                                **options)
        if res.success:
            # the next rank starts from the first working set and the (nearly) active pairs of this map
            cache["working_set"] = near_bound(res.Psi, res.extra["pairs"], res.extra["working_set"])
        return res

    result = _adjust(run_at_rank, measure, initial_rank, initial_map, min_rank, max_steps, rank_step, restart,
                     delta, f"{method}_cg", verbose)
    return _in_point_coordinates(result, basis, original, options.get("feas_tol", 1e-12), block_rows=block_rows,
                                 scan_backend=backend)
