"""The default LMNN solver: the interior point of :mod:`sdpembed.solvers.lmnn.hinge_ipm` on an exact
working set of triplets, for one metric (2.11) (:func:`solve_lmnn_fast`) or one per class (2.17)
(:func:`solve_multi_metric_fast`).

**The working set, and why the result is exact.** Only triplets whose hinge can be positive
enter the SDP. By default (``first_order=True``) the working set is chosen at an approximate
minimiser found by L-BFGS on a smoothed (2.11) in L, M = LᵀL (:mod:`sdpembed.solvers.lmnn.warm`,
a loss within a fraction of a percent of the optimum): the triplets with hinge argument in
(−0.05, 0.05] form the working set, and those above 0.05 are *fixed*: their hinge is counted as
linear, μ h_t(M) (α_t = μ), which folds them into the linear term C0 of the IPM. Then: solve;
evaluate *every* hinge at the solution (:func:`sdpembed.graphs.radius_hinges`: the exact decisions
of :func:`sdpembed.graphs.iter_hinges`, candidates by a float32 radius filter with a rounding
margin); add the omitted ones that are positive, and move back to the working set any fixed
triplet whose hinge is no longer positive; repeat until neither happens. On the benchmark
splits the first solve is usually the last (BENCHMARKS.md, "LMNN against metric-learn and pylmnn"). The band ±0.05 is a
compromise: a wider one makes the working set, and the cost of every early Newton matrix, grow
for the same round count; a narrower one can need a second round.

Exactness: the restricted objective (1 − μ)tr(MP) + μ Σ_fixed h_t + μ Σ_working [h_t]₊ is
below the full loss (2.11) everywhere (h ≤ [h]₊, omitted terms ≥ 0), so its minimum is a
lower bound on the full optimum; at its minimiser, if every fixed hinge is ≥ 0 and every
omitted hinge ≤ 0, it *equals* the full loss there, so that minimiser is a full optimum (the
argument of :func:`sdpembed.formulations.lmnn.solve_lmnn_working_set`, with the fixed set
added). The certificate does not rely on this argument: α is μ on fixed and 0 on omitted
triplets, both in the box [0, μ], so (α, X) stays dual feasible for the full problem and
:func:`~sdpembed.problems.lmnn.lmnn_dual_bound` certifies the gap from it. So the loop also stops
at a round solved to ``tol`` whose certified gap is already ≤ ``gap_tol``, settled or not
(:func:`_working_set_rounds`).

Without the first-order start (``first_order=False``, or ``initial_triplets`` given) the loop
starts from the triplets active at M = I plus every target pair's nearest impostor. The
minimiser of such a small first working set violates far more triplets than the optimum does
(about a hundred times as many), so additions are
capped at 2·max(|working set|, n) per round, every point's most violated triplet first
(:func:`_spread_over_anchors`); rounds whose solution still violates more than 5 % as many
omitted triplets as the working set holds are solved *loosely* (relative tolerance 10⁻³);
once a round is nearly settled, working triplets with hinge below ``prune`` and a zero
multiplier (α < 10⁻³μ) are dropped, and later solves are *warm-started* from the previous
one (:func:`~sdpembed.solvers.lmnn.hinge_ipm.warm_start`). That path is much slower than the
first-order start (BENCHMARKS.md, "LMNN against metric-learn and pylmnn").

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the loss (2.11) over every triplet through its slack SDP
   (Sec. 2.1.3) on a working set, and the multi-metric SDP (2.17).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from ..._deadline import Deadline
from ..._validate import check_positive_int
from ...graphs import impostor_triplets, nearest_impostors, radius_hinge_scan, radius_hinges
from ...problems.base import exact_scale_exponent
from ...problems.lmnn import (
    LMNNInstance,
    MultiMetricLMNNInstance,
    check_triplets,
    lmnn_dual_bound,
    lmnn_dual_bound_and_use,
    loss_scan_threshold,
    loss_unit,
    loss_with_error,
    multi_metric_dual_bound,
    multi_metric_hinges,
    project_psd,
    triplet_keys,
    triplet_outer_sum,
)
from ...results import SolveResult, build_result, relative_gap
from .hinge_ipm import IPMOutcome, first_order_ipm_start, hinge_ipm, ipm_reached, warm_start
from .margin_rounds import lookup_sorted, margin_rounds
from .multiplier_repair import repair_rounds
from .pair_system import PairSystem, single_system, target_rank
from .warm import warm_start_metric

__all__ = ["RoundOptions", "seed_triplets", "solve_lmnn_fast", "solve_multi_metric_fast"]

def _no_triplets() -> dict[str, np.ndarray]:
    """The multipliers of M = 0 at μ = 0 for a solution file: no triplet (α = 0), whose C(0) = P ⪰ 0 proves the
    bound 0 (:meth:`~sdpembed.problems.LMNNInstance.proven_bound`)."""
    return {"triplets": np.zeros((0, 3), dtype=np.int64), "alpha": np.zeros(0)}


#: ``repair="auto"`` takes the direct path from this many entries d(d+1)/2 of M on (d ≥ 77): the interior point in
#: M forms Newton systems of that order with every working triplet, the one in the multipliers systems of the
#: near-margin triplets, and the second is the cheaper one from between d = 70 (2,485 entries: the rounds
#: certify first on MNIST PCA-70) and d = 80 (3,240: the direct path does, also at d = 90).
DIRECT_FROM = 3000

#: The smoothing stages of the first-order start on the direct path: down to η = 10⁻³, whose metric splits
#: the margin triplets from the rest well enough for a band of ``_DIRECT_BAND`` (:mod:`.margin_rounds`).
_DIRECT_ETAS, _DIRECT_BAND = (0.3, 0.03, 0.01, 3e-3, 1e-3), 5e-3

#: The smoothing of the first-order start on the working-set path: one stage at η = 0.03, started at the best
#: scale along the ray of the identity, with room for the L-BFGS steps that the stages (0.3, 0.03) took together.
#: It stops on its relative decrease at a metric as good for the interior point (the same Newton steps) in fewer
#: evaluations: a wide first stage spends its steps on a loss the second then changes.
_ROUNDS_ETAS, _ROUNDS_STAGE_ITER = (0.03,), 60


@dataclass(frozen=True)
class RoundOptions:
    """The options of the working-set loop that :func:`solve_lmnn_fast` and
    :func:`solve_multi_metric_fast` share (documented there), with their defaults; checked when made
    (``ValueError`` naming the option)."""

    tol: float = 1e-8
    max_rounds: int = 30
    max_iter: int = 100
    add_tol: float = 0.0
    prune: float | None = -0.1
    gap_tol: float = 1e-5
    verbose: bool | int = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_rounds", check_positive_int(self.max_rounds, "max_rounds"))
        object.__setattr__(self, "max_iter", check_positive_int(self.max_iter, "max_iter"))
        for name, value in (("tol", self.tol), ("gap_tol", self.gap_tol)):
            if not (np.isfinite(value) and value > 0.0):
                raise ValueError(f"{name} must be a positive number, got {value}")
        if not np.isfinite(self.add_tol):
            raise ValueError(f"add_tol must be a finite number, got {self.add_tol}")


def seed_triplets(X: np.ndarray, y: np.ndarray, targets: np.ndarray, M: np.ndarray | None = None) -> np.ndarray:
    """The initial working set: triplets active at M (the identity by default) and, for every
    target pair, its nearest impostor (so that every point starts with one push constraint)."""
    n, k = targets.shape
    nearest = nearest_impostors(X, y, M)
    seed = np.column_stack([np.repeat(np.arange(n), k), targets.ravel(), np.repeat(nearest, k)])
    working = np.concatenate([impostor_triplets(X, y, targets, M), seed])
    return working[np.unique(triplet_keys(working, n), return_index=True)[1]]


# ------------------------------------------------------------------------------ driver
@dataclass
class _Rounds:
    Ms: np.ndarray
    objective: float
    bound: float
    rgap: float
    working: np.ndarray
    out: IPMOutcome
    converged: bool
    round: int
    added: int
    newton: int
    active: int
    history: dict
    timed_out: bool = False
    alpha: np.ndarray | None = None      # multipliers of ``working`` (the solved set, fixed triplets at μ last)
    certified: bool = False              # stopped on the certified gap before the working set settled
    repair: dict | None = None           # the multiplier repair's summary when it ran (:func:`_repair`)
    scan: tuple | None = None            # (Ms, the last round's scan as a list): its loss need not scan again


class _RadiusScan(list):
    """One round's hinge scan, a list of one (triplets, hinges) block, and whether every hinge in it is by the
    direct formula (:func:`~sdpembed.graphs.radius_hinge_scan`'s ``direct``)."""

    def __init__(self, blocks: list, *, direct: bool) -> None:
        super().__init__(blocks)
        self.direct = direct


def _sorted_member(queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``np.isin(queries, keys)`` for sorted ``keys``, by binary search (cheaper than the hash-based ``isin``
    of numpy 2 on the keys of a hinge scan)."""
    if keys.size == 0:
        return np.zeros(queries.shape, dtype=bool)
    pos = np.minimum(np.searchsorted(keys, queries), keys.size - 1)
    return keys[pos] == queries


def _spread_over_anchors(triplets: np.ndarray, hinges: np.ndarray, limit: int) -> np.ndarray:
    """Indices of at most ``limit`` triplets: every anchor point i's most violated triplet first,
    then every anchor's second, … (ties within a rank by larger hinge). A small metric violates
    hundreds of thousands of triplets, concentrated on few points; spreading the additions over
    the points gives every point its push constraints early and keeps the working set small."""
    if triplets.shape[0] <= limit:
        return np.arange(triplets.shape[0])
    order = np.lexsort((-hinges, triplets[:, 0]))
    anchor = triplets[order, 0]
    first = np.flatnonzero(np.r_[True, anchor[1:] != anchor[:-1]])
    rank = np.arange(order.size) - np.repeat(first, np.diff(np.r_[first, order.size]))
    return order[np.lexsort((-hinges[order], rank))[:limit]]


def _working_set_rounds(*, n, mu, C0, working, build_system, hinge_stream, pull, bound, options: RoundOptions,
                        max_add_factor: float = 2.0, warm: bool = True,
                        warm_shift: float = 1e-3, prune_alpha: float = 1e-3, loose_tol: float = 1e-3,
                        settled: float = 0.05, deadline: Deadline | None = None, tight: bool = False,
                        start: tuple | None = None, start_shift: float = 3e-2, fixed: np.ndarray | None = None,
                        fold=None, early_certificate: bool = False,
                        certify_below: float = 10.0) -> _Rounds:
    """The exact working-set loop shared by the single- and multi-metric drivers: solve the
    restricted SDP by :func:`hinge_ipm`, stream every hinge at its solution, add the omitted
    positive ones (spread over anchor points, :func:`_spread_over_anchors`), drop the working
    triplets far inside the margin with a zero multiplier, warm-start the next solve
    (:func:`warm_start`), repeat until none is added (see the module docstring).

    ``fixed`` triplets (with ``fold(fixed)``, the (c, d, d) matrix μ Σ_t A_t) have their hinge counted
    as linear, μ h_t(M) instead of μ[h_t(M)]₊, i.e. α_t = μ; any of them whose hinge is not positive at a
    solution (absent from the scan of the positive hinges) is moved back to the working set (see
    :func:`solve_lmnn_fast`). ``tight`` solves
    the first round to ``tol`` at once; ``start`` = (M, alpha), a first-order point, warm-starts it
    (:func:`first_order_ipm_start` with ``start_shift``: such a point is farther from the central
    path than the previous round's solution, and a larger shift saves Newton steps); later rounds
    are warm-started by :func:`warm_start` with ``warm_shift``.

    ``gap_tol``: the loop also ends after a round solved to ``tol`` whose *certified* relative gap
    (objective (2.11) over every triplet at the projected solution against :func:`lmnn_dual_bound`
    of its multipliers) is ≤ ``gap_tol``, even if some omitted hinges are positive or some fixed
    ones not positive: the certificate holds for any triplet set and any α ∈ [0, μ], so another round
    could only tighten a gap that is already small enough (a round that releases a few fixed
    hinges costs several more Newton steps).

    ``early_certificate``: a round solved to ``tol`` also stops inside the interior point, at the first
    iterate whose relative primal residual and gap are ≤ ``certify_below``·``tol`` (its dual residual up to
    ten times that: :func:`~sdpembed.solvers.lmnn.hinge_ipm.hinge_ipm`'s ``certify``) and whose polished multipliers
    (:func:`~sdpembed.solvers.lmnn.hinge_ipm.polish_multipliers`) give a certified gap (the same evaluation
    as after the round, on the same triplets) ≤ min(``gap_tol``, ``tol``): no looser than the interior
    point's own stop would leave it; the round then takes that certificate's hinge scan and bound rather than
    scanning every hinge again. ``options`` gives ``tol``, ``max_rounds``, ``max_iter``, ``add_tol``,
    ``prune``, ``gap_tol`` and ``verbose`` (:class:`RoundOptions`)."""
    tol, max_rounds, max_iter, add_tol = options.tol, options.max_rounds, options.max_iter, options.add_tol
    prune, gap_tol, verbose = options.prune, options.gap_tol, options.verbose
    history: dict[str, list] = {key: [] for key in (
        "working_set", "fixed", "added", "pruned", "released", "violated", "active", "objective", "dual_bound",
        "relative_gap", "ipm_iterations")}
    newton = 0
    converged = timed_out = certified = False
    fixed = np.empty((0, 3), dtype=np.int64) if fixed is None else fixed
    # unless told otherwise (a working set chosen at a near-optimal metric), the first rounds are solved
    # loosely: their minimisers only choose triplets
    for round_ in range(1, max_rounds + 1):
        system = build_system(working)
        C_round = C0 + fold(fixed) if fixed.shape[0] else C0
        round_tol = tol if tight else max(tol, loose_tol)
        if start is not None:
            try:
                start = (first_order_ipm_start(system, C_round, mu, *start, shift=start_shift) if round_ == 1 else
                         warm_start(system, C_round, mu, *start, shift=warm_shift))
            except np.linalg.LinAlgError:
                start = None
        offset = mu * fixed.shape[0]          # the fixed hinges' constant: gaps relative to the loss (2.11)
        steps = bool(verbose) and int(verbose) >= 2             # verbose 2 or more: every Newton step too
        certify, scanned = None, {}
        if early_certificate and round_tol == tol and gap_tol is not None:
            def certify(M, alpha, working=working, fixed=fixed, scanned=scanned):
                Ms = np.stack([project_psd(B) for B in M])
                scan = hinge_stream(Ms, min(0.0, add_tol))
                scan = scan if isinstance(scan, list) else list(scan)    # a list as given (its ``direct`` kept)
                push = sum(float(h[h > 0.0].sum()) for _, h in scan)
                value = (1.0 - mu) * pull(Ms) + mu * push
                lower = bound(np.concatenate([working, fixed]),
                              np.concatenate([alpha, np.full(fixed.shape[0], mu)]), value)
                scanned.update(M=M, Ms=Ms, scan=scan, lower=lower)   # the round's scan if the IPM stops here
                return relative_gap(value, lower, loss_unit(mu)) <= min(gap_tol, tol)
        out = hinge_ipm(system, C_round, mu, tol=round_tol, max_iter=max_iter, start=start, offset=offset,
                        deadline=deadline, certify=certify, certify_below=certify_below * tol, verbose=steps)
        if start is not None and not ipm_reached(out, round_tol) and not (out.unbounded or out.timed_out):
            newton += out.iterations
            out = hinge_ipm(system, C_round, mu, tol=round_tol, max_iter=max_iter, offset=offset,
                            deadline=deadline, verbose=steps)   # cold fallback (unbounded stays unbounded)
        newton += out.iterations
        reuse = out.certified and scanned.get("M") is out.M      # certified at the iterate last scanned
        Ms = scanned["Ms"] if reuse else np.stack([project_psd(M) for M in out.M])
        keys = np.sort(np.concatenate([triplet_keys(working, n), triplet_keys(fixed, n)]))
        push, added, added_h, active, positive_keys = 0.0, [], [], 0, []
        scan = scanned["scan"] if reuse else hinge_stream(Ms, min(0.0, add_tol))
        for block, hinges in scan:
            positive = hinges > 0.0
            push += float(hinges[positive].sum())
            active += int(positive.sum())
            if fixed.shape[0]:
                positive_keys.append(triplet_keys(block[positive], n))
            take = np.flatnonzero(hinges > add_tol)
            take = take[~_sorted_member(triplet_keys(block[take], n), keys)]
            added.append(block[take])
            added_h.append(hinges[take])
        objective = (1.0 - mu) * pull(Ms) + mu * push
        new = np.concatenate(added) if added else np.empty((0, 3), dtype=np.int64)
        n_violated = new.shape[0]
        limit = int(max(max_add_factor * working.shape[0], max_add_factor * n, 1))
        if n_violated > limit:          # the others are checked again next round
            new = new[_spread_over_anchors(new, np.concatenate(added_h), limit)]
        # fixed triplets whose hinge is not positive at the solution go back to the working set (α free again);
        # if the restricted solve failed with fixed triplets (folding can leave it unbounded), all of them do
        released = np.zeros(fixed.shape[0], dtype=bool)
        if fixed.shape[0]:
            released = (~_sorted_member(triplet_keys(fixed, n), np.sort(np.concatenate(positive_keys)))
                        if ipm_reached(out, round_tol) else ~released)
        solved = np.concatenate([working, fixed])
        solved_alpha = np.concatenate([out.alpha, np.full(fixed.shape[0], mu)])
        lower = scanned["lower"] if reuse else bound(solved, solved_alpha, objective)
        rgap = relative_gap(objective, lower, loss_unit(mu))   # absolute below the loss's unit μ
        nearly = n_violated <= settled * working.shape[0]
        keep = np.ones(working.shape[0], dtype=bool)
        if new.shape[0] and prune is not None and nearly:
            # inactive at the restricted optimum (hinge < prune, multiplier ≈ 0): dropping them leaves that
            # optimum a KKT point of the smaller set, and the full hinge scan brings back any that is needed
            keep = (1.0 + system.apply(Ms) > prune) | (out.alpha > prune_alpha * mu)
        for key, value in (("working_set", working.shape[0]), ("fixed", fixed.shape[0]), ("added", new.shape[0]),
                           ("pruned", int((~keep).sum())), ("released", int(released.sum())),
                           ("violated", n_violated), ("active", active), ("objective", objective),
                           ("dual_bound", lower), ("relative_gap", rgap), ("ipm_iterations", out.iterations)):
            history[key].append(value)
        if verbose:
            print(f"round {round_:3d}  working set {working.shape[0]:8d}  fixed {fixed.shape[0]:8d}  violated "
                  f"{n_violated:8d}  added {new.shape[0]:7d}  pruned {int((~keep).sum()):7d}  released "
                  f"{int(released.sum()):6d}  active {active:8d}  newton {out.iterations:3d}  objective "
                  f"{objective:.10g}  bound {lower:.10g}  gap {rgap:.2e}{'' if round_tol == tol else '  (loose)'}",
                  flush=True)
        if new.shape[0] == 0 and not released.any() and round_tol == tol and not out.timed_out:
            converged = True
            break
        if gap_tol is not None and round_tol == tol and ipm_reached(out, tol) and rgap <= gap_tol:
            certified = True       # small enough already; the certificate needs no settled working set
            break
        if out.timed_out or (deadline is not None and deadline.passed()):
            timed_out = True
            break
        alpha_next = np.concatenate([out.alpha[keep], np.full(int(released.sum()), mu),
                                     np.full(new.shape[0], np.nan)])
        working = np.concatenate([working[keep], fixed[released], new])
        fixed = fixed[~released]
        start = None
        if nearly:
            tight = True   # from here on every solve is to tol; a warm start pays once M is near the optimum
            if warm and ipm_reached(out, round_tol):
                start = (out.M, alpha_next)
    return _Rounds(Ms=Ms, objective=objective, bound=lower, rgap=rgap, working=solved, out=out, converged=converged,
                   round=round_, added=int(n_violated), newton=newton, active=active,
                   history={key: np.asarray(value) for key, value in history.items()}, timed_out=timed_out,
                   alpha=solved_alpha, certified=certified,
                   scan=(Ms, scan) if isinstance(scan, list) else None)   # a stream (multi-metric) is not kept


def solve_lmnn_fast(
    instance: LMNNInstance,
    *,
    tol: float = RoundOptions.tol,
    max_rounds: int = RoundOptions.max_rounds,
    max_iter: int = RoundOptions.max_iter,
    add_tol: float = RoundOptions.add_tol,
    prune: float | None = RoundOptions.prune,
    gap_tol: float = RoundOptions.gap_tol,
    initial_triplets: np.ndarray | None = None,
    first_order: bool = True,
    first_order_keep: float = 0.05,
    first_order_fix: float | None = 0.05,
    first_order_start: bool = True,
    repair: str = "auto",
    time_limit: float | None = None,
    verbose: bool | int = RoundOptions.verbose,
    cpu_time_limit: float | None = None,
) -> SolveResult:
    """Solve the LMNN SDP (2.11) / Sec. 2.1.3 by the interior-point method on an exact working set.

    See the module docstring for the algorithm and why it was chosen.

    Parameters
    ----------
    instance : LMNNInstance
    tol : float
        Interior-point tolerance on the relative residuals and gap of each restricted solve
        (the gap relative to the loss (2.11), fixed triplets' constant μ|F| included:
        :func:`hinge_ipm`'s ``offset``). It does not change what ``optimal`` means (that is
        ``gap_tol`` on the *certified* gap): ``tol=1e-5`` gives certified relative gaps below 10⁻⁵ on the
        benchmarks (BENCHMARKS.md, "LMNN against metric-learn and pylmnn"); if a looser tol
        leaves the certified gap above ``gap_tol``, the status says ``inaccurate``.
    max_rounds : int
        Working-set rounds at most (each: one restricted solve and one full hinge check).
    max_iter : int
        Newton steps per restricted solve at most.
    add_tol : float
        Omitted triplets with hinge > add_tol at the solution are added (0: exactly the
        positive ones; hinges are in units of the margin 1 of (2.6)).
    prune : float or None
        Once a round adds fewer than 5 % of the working set, working triplets whose hinge is
        below ``prune`` (inside the margin) *and* whose multiplier is below 10⁻³μ are dropped
        before the next solve; None keeps the set growing. Dropping constraints with zero
        multipliers leaves the restricted optimum optimal, and exactness does not depend on
        it: the loop ends only when no triplet outside the working set has a positive hinge.
    gap_tol : float
        ``optimal`` needs a certified relative gap ≤ gap_tol (objective (2.11) over every
        triplet against :func:`lmnn_dual_bound`), reached either with a converged working set
        or by a round solved to ``tol`` before it settled (the loop stops there: the
        certificate does not depend on the working set).
    initial_triplets : ndarray of int, shape (T, 3), optional
        The first working set (no first-order start, no fixed triplets); by default the
        first-order start below, or :func:`seed_triplets` (active at M = I, plus each target
        pair's nearest impostor) with ``first_order=False``.
    first_order : bool
        Choose the first working set at the approximate minimiser of
        :func:`sdpembed.solvers.lmnn.warm.warm_start_metric` (module docstring).
    first_order_keep : float
        Triplets whose hinge argument at that metric exceeds −``first_order_keep`` are used.
    first_order_fix : float or None
        Of those, the ones above ``first_order_fix`` are fixed (α = μ, hinge counted as
        linear) until their hinge is no longer positive at a solution; None fixes none. (Either
        choice leaves the result exact; a narrower band means a smaller working set but,
        from a rough first-order point, possibly another round.)
    first_order_start : bool
        Also warm-start the first interior-point solve from that metric and the multipliers
        μ·φ'_η of the smoothed loss (:func:`first_order_ipm_start`; fewer Newton steps than a
        cold start or :func:`warm_start`'s shifted dual start).
    repair : {"auto", "fallback", "direct", "off"}
        The multiplier repair (:mod:`sdpembed.solvers.lmnn.multiplier_repair`): the dual of (2.11) restricted
        to the near-margin triplets of a fixed metric, solved with one Newton unknown per such triplet and
        certified by :func:`~sdpembed.problems.lmnn.lmnn_dual_bound`. ``"fallback"``: after the working-set
        rounds, from their metric and multipliers, when their certified gap is above ``gap_tol`` and the time
        limit allows (:func:`~sdpembed.solvers.lmnn.multiplier_repair.repair_rounds`), and if the rounds had
        settled but that stops above ``gap_tol`` with time left, the margin rounds of the direct path from the
        first-order start (from the rounds' metric without one; the better certificate is returned); ``"direct"``:
        instead of the rounds, from a first-order start smoothed down to η = 10⁻³, the multiplier interior point
        on a partition of the triplets corrected at each restricted minimiser
        (:func:`~sdpembed.solvers.lmnn.margin_rounds.margin_rounds`; the rounds run if it cannot, and from its
        metric of lowest loss and its multipliers, followed by the fallback repair, if it stops above ``gap_tol``
        with time left — the better certificate of the two is returned);
        ``"auto"``: ``"direct"`` from d(d+1)/2 ≥ :data:`DIRECT_FROM` with the first-order start,
        ``"fallback"`` otherwise; ``"off"``: never.
    time_limit : float, optional
        Wall-clock seconds: no new round and no new Newton step starts after this (the first-order start
        stops its stages at half of it). A run stopped this way reports ``max_iterations`` with
        the certified gap of the multipliers reached, which stays a true bound. A run that ends
        without ``optimal`` (time, round or Newton-step limit) returns the better — lower loss
        (2.11), both PSD — of its last iterate and its first-order start (``extra["returned"]``
        says which; the bound is the multipliers' either way).
    verbose : bool or int
        One line per round (working set, added, active triplets, objective, bound, gap);
        ``2`` also prints every Newton step.
    cpu_time_limit : float, optional
        CPU seconds of the process (all threads, BLAS's included; ``sdpembed._deadline``), as ``time_limit``
        but not changed by the machine's load; with both, the first reached stops the run.

    Returns
    -------
    SolveResult
        ``solution`` M ⪰ 0 (projected with (2.16)), ``objective`` its loss (2.11) over all
        triplets, ``dual_bound`` the certified bound of :func:`lmnn_dual_bound` from the
        interior-point multipliers; ``history`` per round; ``extra`` the final working set,
        its multipliers, the active-triplet count, the Newton steps in total and which metric
        was returned (``"interior_point"`` or ``"first_order_start"``).
    """
    start = time.perf_counter()
    options = RoundOptions(tol=tol, max_rounds=max_rounds, max_iter=max_iter, add_tol=add_tol, prune=prune,
                           gap_tol=gap_tol, verbose=verbose)
    deadline = Deadline.of(time_limit, cpu_time_limit, wall_start=start)
    n, d, mu = instance.n_points, instance.dim, instance.mu
    X, y, targets = instance.X, instance.y, instance.targets
    if mu == 0.0:   # only the pull term: tr(MP) ≥ 0 is minimised by M = 0, and the bound 0 is exact
        zero = np.zeros((d, d))
        return build_result(
            instance.problem, "M", zero, 0.0, 0.0, status="optimal",
            message="mu = 0: M = 0 is optimal (the loss is tr(MP) with P ⪰ 0)", method="fast",
            solver="lmnn_ipm", max_violation=0.0, min_eigenvalue=0.0, start=start, extra=_no_triplets(),
        )
    # solved on the coordinates that determine every point difference: the same optimum, and no direction
    # in which the IPM's M could grow without changing the loss (spanning_coordinates)
    full, instance, keep, shift = instance, *_on_span(instance)
    X = instance.X
    P = np.asarray(instance.pull_matrix)
    warm = fixed = ipm_start = None
    if repair not in ("auto", "direct", "fallback", "off"):
        raise ValueError(f"repair must be 'auto', 'fallback', 'direct' or 'off', got {repair!r}")
    if repair == "auto":
        repair = ("direct" if first_order and initial_triplets is None
                  and instance.dim * (instance.dim + 1) // 2 >= DIRECT_FROM
                  else "fallback")
    if initial_triplets is not None:
        working = check_triplets(instance, initial_triplets)
    elif first_order:
        warm = warm_start_metric(X, y, targets, mu, P, keep=first_order_keep, verbose=verbose,
                                 etas=_DIRECT_ETAS if repair == "direct" else _ROUNDS_ETAS,
                                 stage_iter=30 if repair == "direct" else _ROUNDS_STAGE_ITER,
                                 time_budget=None if deadline is None else deadline.share(0.5))
        working, alpha0 = warm.triplets, warm.alpha
        if first_order_fix is not None:
            settled = warm.z > first_order_fix
            fixed, working, alpha0 = working[settled], working[~settled], alpha0[~settled]
        if working.shape[0] == 0:     # nothing near the margin: seed as at M = I, at the warm metric
            working = seed_triplets(X, y, targets, warm.M)
            if fixed is not None:
                working = working[~np.isin(triplet_keys(working, n), triplet_keys(fixed, n))]
        elif first_order_start:
            ipm_start = (warm.M[None], alpha0)
    else:
        working = seed_triplets(X, y, targets)

    folded: list = []         # the last fixed set folded and its (sum, rounding-error bound), for the bound
    last_bound: dict = {}     # the last bound's multipliers, upper bound, value and whether it used the upper bound

    def fold(triplets: np.ndarray) -> np.ndarray:
        """μ Σ_t (C_ij − C_il) over fixed triplets (their multiplier α_t = μ in (2.14))."""
        folded[:] = [triplets, triplet_outer_sum(X, triplets, np.full(triplets.shape[0], mu))]
        return folded[1][0][None]

    def bound(triplets: np.ndarray, alpha: np.ndarray, objective: float) -> float:
        """:func:`lmnn_dual_bound`; the rounds list the fixed triplets last (α = μ): when they are the set last
        folded, their sum is taken from the fold instead of being formed again."""
        # where the target pairs miss a difference the bound sorts the triplets by span: it needs them listed
        m = folded[0].shape[0] if folded and instance.pull_spans[0].basis is None else 0
        if m and triplets.shape[0] >= m and np.array_equal(triplets[-m:], folded[0]) and np.all(alpha[-m:] == mu):
            value, uses = lmnn_dual_bound_and_use(instance, triplets[:-m], alpha[:-m], upper_bound=objective,
                                                  fixed_sum=(m, *folded[1]))
        else:
            value, uses = lmnn_dual_bound_and_use(instance, triplets, alpha, upper_bound=objective)
        last_bound.update(triplets=triplets, alpha=alpha, upper=objective, value=value, uses=uses)
        return value

    def full_bound(triplets: np.ndarray, alpha: np.ndarray, upper: float) -> float:
        """:func:`lmnn_dual_bound` on the full instance; the last bound of the rounds where it is of the same
        instance and multipliers, did not use its upper bound and ``upper`` is no smaller (the same bound then)."""
        if (full is instance and last_bound and not last_bound["uses"] and upper >= last_bound["upper"]
                and np.array_equal(triplets, last_bound["triplets"]) and np.array_equal(alpha, last_bound["alpha"])):
            return last_bound["value"]
        return lmnn_dual_bound(full, triplets, alpha, upper_bound=upper)

    def radius_stream(Ms: np.ndarray, threshold: float) -> _RadiusScan:
        """A round's scan, at the loss's threshold too: the last scan is the one loss_with_error needs
        (``_on_full``) when its hinges are all by the direct formula."""
        triplets, hinges, direct = radius_hinge_scan(X, y, targets, Ms[0],
                                                     threshold=min(threshold, loss_scan_threshold(instance, Ms[0])))
        return _RadiusScan([(triplets, hinges)], direct=direct)

    rounds = margin = None
    if repair == "direct" and warm is not None:
        rounds = _repair(instance, warm.M, (warm.triplets, warm.alpha), warm.loss, None, options, deadline,
                         margin=True)
        if rounds is not None and rounds.rgap > gap_tol and (deadline is None or not deadline.passed()):
            # the margin rounds stopped uncertified with time left (a re-partition with more than max_free free
            # triplets, or their round limit): the working-set rounds, then the fallback repair, from their
            # metric of lowest loss and their multipliers; the better certificate of the two paths is kept
            margin, rounds = rounds, None
            working, fixed, alpha0 = _split_at(instance, margin.Ms[0], (margin.working, margin.alpha),
                                               first_order_keep, first_order_fix)
            ipm_start = (margin.Ms, alpha0) if first_order_start and working.shape[0] else None
            if working.shape[0] == 0:
                working = seed_triplets(X, y, targets, margin.Ms[0])
                if fixed is not None:
                    working = working[~np.isin(triplet_keys(working, n), triplet_keys(fixed, n))]
    if rounds is None:
        rounds = _working_set_rounds(
            n=n, mu=mu, C0=(1.0 - mu) * P[None], working=working,
            build_system=lambda triplets: single_system(instance, triplets),
            # at the loss's threshold too: the last scan is the one loss_with_error needs (_on_full)
            hinge_stream=radius_stream,
            pull=lambda Ms: float(np.sum(P * Ms[0])),
            bound=bound, options=options, deadline=deadline, tight=warm is not None, start=ipm_start, fixed=fixed,
            fold=fold,
            early_certificate=True,
        )
        if ((repair == "fallback" or margin is not None) and rounds.rgap > gap_tol
                and (deadline is None or not deadline.passed())):
            # from the lower-loss metric of the rounds' last and the first-order start
            M_from, loss_from = ((warm.M, warm.loss) if warm is not None and warm.loss < rounds.objective
                                 else (rounds.Ms[0], rounds.objective))
            rounds = _repair(instance, M_from, (rounds.working, rounds.alpha), loss_from, rounds, options,
                             deadline) or rounds
        if (margin is None and repair != "off" and rounds.converged and rounds.rgap > gap_tol
                and not rounds.timed_out and (deadline is None or not deadline.passed())):
            # a settled working set still uncertified with time left: its last interior point stopped far from tol
            # on a failed factorisation (counted as stalled), and the fallback repair started from its poor
            # multipliers; the direct path's margin rounds from the first-order start (or, without one, from the
            # rounds' metric) do not depend on that iterate. Rounds stopped by max_rounds stay stopped.
            M_from, alpha_from, loss_from = ((warm.M, (warm.triplets, warm.alpha), warm.loss) if warm is not None
                                             else (rounds.Ms[0], (rounds.working, rounds.alpha), rounds.objective))
            margin = _repair(instance, M_from, alpha_from, loss_from, None, options, deadline, margin=True)
        if margin is not None:
            better, other = (margin, rounds) if margin.rgap < rounds.rgap else (rounds, margin)
            better.newton += other.newton
            rounds = better
    status, message = _status(rounds, options, deadline)
    # a run stopped early (time or iteration limit) returns the better of its last iterate and its first-order
    # start: an interior-point iterate far from its central path can have a higher loss than the start
    start_returned = status != "optimal" and warm is not None and warm.loss < rounds.objective
    if start_returned:
        message += (f"; returned the first-order start (loss {warm.loss:.8g}), lower than the last interior-point "
                    f"iterate's {rounds.objective:.8g}")
        rounds.Ms, rounds.objective = warm.M[None], warm.loss     # its bound and gap: _on_full below
    if keep is not None:
        _lift(rounds, full, keep, shift)
    # the last scan's hinges, when they are those of the full instance at the returned metric (not lifted, not
    # replaced by the repair or the first-order start) and every hinge in it by the direct formula (not a scan that
    # fell back to the Gram form)
    hinges = (rounds.scan[1][0] if rounds.scan is not None and rounds.scan[0] is rounds.Ms
              and getattr(rounds.scan[1], "direct", False) else None)
    error = _on_full(rounds, full, full_bound, hinges=hinges)
    if status == "optimal" and not -options.gap_tol <= rounds.rgap <= options.gap_tol:
        # the status was decided on the rounds' values (rounded, on the span's coordinates); the full instance's
        # loss with its rounding bound and the bound decide it
        status = "inaccurate"
        message += (f"; on the full instance, with the loss's rounding bound {error:.3g}, the certified relative gap "
                    f"is {rounds.rgap:.2e}, outside +-gap_tol = {options.gap_tol:g}")
    M = rounds.Ms[0]
    objective, bound, rgap, working, out = rounds.objective, rounds.bound, rounds.rgap, rounds.working, rounds.out
    if start_returned:
        message += f"; certified relative gap of the returned metric {rgap:.2e}"
    return build_result(
        full.problem, "M", M, objective, bound, rgap=rgap, status=status, message=message, method="fast",
        solver="lmnn_ipm", max_violation=full.max_violation(M), iterations=rounds.newton, start=start,
        history=rounds.history,
        extra={"triplets": working, "alpha": rounds.alpha, "active": rounds.active, "rounds": rounds.round,
               "newton_steps": rounds.newton, "restricted_value": out.primal_value,
               "returned": "first_order_start" if start_returned else "interior_point", "repair": rounds.repair,
               **({} if warm is None else {
                   "first_order_loss": warm.loss, "first_order_seconds": warm.seconds,
                   "first_order_iterations": warm.iterations, "first_order_triplets": warm.triplets.shape[0]})},
    )


def _repair(instance: LMNNInstance, M: np.ndarray, alpha_start: tuple, loss: float, rounds: _Rounds | None,
            options: RoundOptions, deadline: Deadline | None, margin: bool = False) -> _Rounds | None:
    """The multiplier repair (:func:`~sdpembed.solvers.lmnn.multiplier_repair.repair_rounds`, or with
    ``margin`` :func:`~sdpembed.solvers.lmnn.margin_rounds.margin_rounds`) from the metric M
    of loss ``loss`` and the multipliers ``alpha_start``, as the rounds' result: ``rounds`` (the working-set
    rounds before it) updated where the repair proves a smaller gap, or a new one (the direct path). None
    when no repair could run (too many free triplets) and there were no rounds."""
    run = (partial(margin_rounds, band=_DIRECT_BAND) if margin else partial(repair_rounds, tol=options.tol))
    out = run(instance, M, alpha_start=alpha_start, upper_bound=loss, gap_tol=options.gap_tol, deadline=deadline,
              verbose=options.verbose)
    if out is None:
        return rounds
    unit = loss_unit(instance.mu)
    rgap = relative_gap(out.objective, out.bound, unit)
    summary = {"free": out.n_free, "fixed": out.n_fixed, "newton_steps": out.iterations,
               "rounds": out.rounds, "seconds": out.seconds, "gap": rgap}
    if rounds is not None:
        rounds.newton += out.iterations
        rounds.repair = summary
        if rgap >= rounds.rgap:
            return rounds
        rounds.Ms, rounds.objective, rounds.bound, rounds.rgap = out.M[None], out.objective, out.bound, rgap
        rounds.working, rounds.alpha = out.triplets, out.alpha
        rounds.certified = rgap <= options.gap_tol
        return rounds
    active = int(np.count_nonzero(radius_hinges(instance.X, instance.y, instance.targets, out.M)[1] > 0.0))
    ipm = IPMOutcome(M=out.last[None], alpha=out.alpha, xi=np.zeros(0), primal_value=out.objective,
                     dual_value=out.bound, converged=out.converged, iterations=out.iterations,
                     stalled=not out.converged)
    timed_out = deadline is not None and deadline.passed() and rgap > options.gap_tol
    return _Rounds(Ms=out.M[None], objective=out.objective, bound=out.bound, rgap=rgap, working=out.triplets,
                   out=ipm, converged=True, round=out.rounds, added=0, newton=out.iterations, active=active,
                   history={}, timed_out=timed_out, alpha=out.alpha, certified=rgap <= options.gap_tol,
                   repair=summary)


def _split_at(instance: LMNNInstance, M: np.ndarray, alpha_start: tuple, keep: float,
              fix: float | None) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """The working set, the fixed triplets and the working multipliers at a metric M, as the first-order start
    gives them (:func:`solve_lmnn_fast`): triplets with hinge argument > −``keep`` at M (one scan,
    :func:`~sdpembed.graphs.radius_hinges`), those above ``fix`` fixed (none when ``fix`` is None); the
    multipliers of the working ones from ``alpha_start`` = (triplets, α) where listed, μ/2 elsewhere."""
    n, mu = instance.n_points, instance.mu
    triplets, z = radius_hinges(instance.X, instance.y, instance.targets, M, threshold=-keep)
    settled = z > fix if fix is not None else np.zeros(z.shape, dtype=bool)
    working = triplets[~settled]
    keys = triplet_keys(np.asarray(alpha_start[0]), n)
    order = np.argsort(keys)
    given = lookup_sorted(keys[order], np.asarray(alpha_start[1], dtype=np.float64)[order], triplet_keys(working, n))
    alpha = np.where(np.isfinite(given), given, 0.5 * mu)
    return working, (triplets[settled] if fix is not None else None), alpha


#: Points whose largest |coordinate| (on the spanning coordinates) lies outside [2^-_SCALE_EXPONENT,
#: 2^_SCALE_EXPONENT] are solved scaled by a power of two (:func:`_on_span`).
_SCALE_EXPONENT = 16


def _on_span(instance):
    """(the instance on its :attr:`spanning_coordinates`, those coordinates, s): the problem on them has the same
    optimum, and a metric of it padded with zeros is a metric of the full problem with the same loss
    (:func:`sdpembed.problems.lmnn.spanning_coordinates`). Where the points' largest |coordinate| lies outside
    [2^-16, 2^16] (``_SCALE_EXPONENT``) they are also scaled by 2^-s, exactly, into [1/2, 1): the loss (2.11)
    of N for X·2^-s is that of N·2^-2s for X, so the optimum is the same, but the interior point's start, ridges
    and float32 preconditioner assume data of unit scale (at 2^30 its PCG met a zero curvature, at 2^80 NaN
    multipliers). (instance, None, 0) when it needs all coordinates (or none: all points equal) and no scale."""
    keep = instance.spanning_coordinates
    reduced = instance if keep.size in (0, instance.dim) else instance.on_coordinates(keep)
    shift = exact_scale_exponent(reduced.X, _SCALE_EXPONENT)
    if shift:
        reduced = replace(reduced, X=np.ldexp(reduced.X, -shift), optimum=None)
    if reduced is instance:
        return instance, None, 0
    return reduced, (keep if keep.size not in (0, instance.dim) else np.arange(instance.dim)), shift


def _lift(rounds: _Rounds, full, keep: np.ndarray, shift: int) -> None:
    """Pad the metrics solved on the coordinates ``keep`` (of points scaled by 2^-``shift``) with zeros, scaled by
    2^-2·``shift``: metrics of the full instance (``_on_full`` evaluates them there)."""
    Ms = np.zeros((rounds.Ms.shape[0], full.dim, full.dim))
    Ms[:, keep[:, None], keep[None, :]] = np.ldexp(rounds.Ms, -2 * shift)
    rounds.Ms = Ms


def _on_full(rounds: _Rounds, full, bound, hinges: tuple | None = None) -> float:
    """Set the rounds' loss, bound and gap to those of their metrics on the full instance, and return the loss's
    proved rounding bound e (:func:`~sdpembed.problems.lmnn.loss_with_error`, given the ``hinges`` of the rounds'
    last radius scan when it was of the full instance at these metrics): the bound is that of the rounds'
    multipliers with the upper bound loss + e, the gap that of loss + e — the exact loss lies below loss + e, so
    only that gap is proved."""
    Ms = rounds.Ms if isinstance(full, MultiMetricLMNNInstance) else rounds.Ms[0]
    rounds.objective, error = loss_with_error(full, Ms, hinges=hinges)
    upper = rounds.objective + error
    rounds.bound = bound(rounds.working, rounds.alpha, upper)
    rounds.rgap = relative_gap(upper, rounds.bound, loss_unit(full.mu))
    return error


def _status(rounds: _Rounds, options: RoundOptions, deadline: Deadline | None = None) -> tuple[str, str]:
    """``optimal`` only for a certified gap in [−gap_tol, gap_tol] (a converged working set, or one stopped on that
    gap); a loss below the bound is ``inaccurate``."""
    gap_tol, add_tol, tol, max_rounds, max_iter = (options.gap_tol, options.add_tol, options.tol, options.max_rounds,
                                                   options.max_iter)
    if not rounds.rgap >= -gap_tol:
        # the loss of a PSD metric is at least the optimum, hence at least a proved bound: one below it was not
        # evaluated accurately in double precision (entries of M far beyond the data's scale, as near-duplicate
        # points of two classes ask for) or belongs to a metric that is not PSD
        return "inaccurate", (f"the loss {rounds.objective:.8g} lies below the certified bound {rounds.bound:.8g} "
                              f"(relative gap {rounds.rgap:.2e} < -{gap_tol:g}): the metric's loss is not accurate "
                              "in double precision")
    if rounds.repair is not None and rounds.certified and rounds.rgap <= gap_tol:
        return "optimal", (f"certified relative gap {rounds.rgap:.2e} <= {gap_tol:g} by the multiplier repair "
                           f"({rounds.repair['free']} free near-margin and {rounds.repair['fixed']} fixed triplets, "
                           f"{rounds.repair['rounds']} round(s), {rounds.repair['newton_steps']} Newton steps)")
    if rounds.converged and rounds.rgap <= gap_tol:
        return "optimal", (f"every omitted hinge <= {add_tol:g} after {rounds.round} round(s) on "
                           f"{rounds.working.shape[0]} triplets; certified relative gap {rounds.rgap:.2e} "
                           f"<= {gap_tol:g}")
    if rounds.certified and rounds.rgap <= gap_tol:
        return "optimal", (f"certified relative gap {rounds.rgap:.2e} <= {gap_tol:g} after {rounds.round} round(s) "
                           f"on {rounds.working.shape[0]} triplets (the working set had not settled: "
                           f"{rounds.added} omitted hinges > {add_tol:g}, {int(rounds.history['released'][-1])} "
                           f"fixed hinges <= 0; the certificate does not depend on it)")
    if rounds.timed_out:
        limit = "time limit reached" if deadline is None else deadline.reached()
        return "max_iterations", (f"{limit} after {rounds.round} round(s) ({rounds.added} "
                                  f"violated triplets to add); certified relative gap {rounds.rgap:.2e}")
    if not rounds.converged:
        return "max_iterations", (f"the working set was still growing after {max_rounds} round(s) "
                                  f"({rounds.added} to add); certified relative gap {rounds.rgap:.2e}")
    if not (rounds.out.converged or rounds.out.stalled):
        return "max_iterations", (f"the interior-point method did not reach tol={tol:g} in {max_iter} Newton steps "
                                  f"(certified relative gap {rounds.rgap:.2e})")
    return "inaccurate", f"certified relative gap {rounds.rgap:.2e} > gap_tol={gap_tol:g}"


def solve_multi_metric_fast(problem: MultiMetricLMNNInstance, *, time_limit: float | None = None,
                            cpu_time_limit: float | None = None, **options: Any) -> SolveResult:
    """Solve the multi-metric SDP (2.17) (one metric per class, or per group of the instance's
    ``metric_groups``) by the same interior-point method on an exact working set; the metric of a
    pair is that of its second point.

    Parameters
    ----------
    problem : sdpembed.problems.lmnn.MultiMetricLMNNInstance
    time_limit, cpu_time_limit : float, optional
        Wall-clock and CPU seconds for the whole run (``sdpembed._deadline``), checked between rounds and
        Newton steps as in :func:`solve_lmnn_fast`: a run past either ends ``max_iterations`` with the
        metrics reached and the certified bound of their multipliers.
    **options
        ``tol``, ``max_rounds``, ``max_iter``, ``add_tol``, ``prune``, ``gap_tol`` and ``verbose``: as for
        :func:`solve_lmnn_fast`, with its defaults (:class:`RoundOptions`).

    Returns
    -------
    SolveResult
        ``solution`` the (C, d, d) stack of metrics, ``dual_bound`` the certified bound of
        :func:`sdpembed.problems.lmnn.multi_metric_dual_bound`.
    """
    start = time.perf_counter()
    options = RoundOptions(**options)
    deadline = Deadline.of(time_limit, cpu_time_limit, wall_start=start)
    X, y, targets, mu = problem.X, problem.y, problem.targets, problem.mu
    n, k = targets.shape
    C, d, blk = problem.n_blocks, problem.dim, problem.block
    if mu == 0.0:
        zero = np.zeros((C, d, d))
        return build_result("lmnn_multi", "M", zero, 0.0, 0.0, status="optimal", message="mu = 0: M = 0 is optimal",
                            method="fast", solver="lmnn_ipm", max_violation=0.0, min_eigenvalue=0.0, start=start,
                            extra=_no_triplets())

    full, problem, keep, shift = problem, *_on_span(problem)        # as in solve_lmnn_fast
    X, d, P = problem.X, problem.dim, problem.pull_matrices()

    def build(triplets: np.ndarray) -> PairSystem:
        i, j, l = triplets.T
        a = i * k + target_rank(targets, i, j)
        keys, b = np.unique(i * n + l, return_inverse=True)
        U = (X[:, None, :] - X[targets]).reshape(n * k, -1)
        return PairSystem(U=U, u_block=blk[targets].ravel(), W=X[keys // n] - X[keys % n], w_block=blk[keys % n],
                          a=a, b=b.ravel(), n_blocks=C)

    rounds = _working_set_rounds(
        n=n, mu=mu, C0=(1.0 - mu) * P, working=seed_triplets(X, y, targets), build_system=build,
        hinge_stream=lambda Ms, threshold: multi_metric_hinges(problem, Ms, threshold=threshold),
        pull=lambda Ms: float(np.sum(P * Ms)),
        bound=lambda triplets, alpha, objective: multi_metric_dual_bound(problem, triplets, alpha,
                                                                         upper_bound=objective),
        options=options, deadline=deadline,
    )
    if keep is not None:
        _lift(rounds, full, keep, shift)
    _on_full(rounds, full,
             lambda triplets, alpha, upper: multi_metric_dual_bound(full, triplets, alpha, upper_bound=upper))
    status, message = _status(rounds, options, deadline)
    return build_result(
        "lmnn_multi", "M", rounds.Ms, rounds.objective, rounds.bound, rgap=rounds.rgap, status=status,
        message=message, method="fast", solver="lmnn_ipm", max_violation=0.0, iterations=rounds.newton,
        start=start, history=rounds.history,
        extra={"triplets": rounds.working, "alpha": rounds.alpha, "active": rounds.active,
               "rounds": rounds.round},
    )
