"""Working-set rounds of the multiplier interior point for LMNN: the restricted dual of
:mod:`~sdpembed.solvers.lmnn.multiplier_repair` re-partitioned at each restricted minimiser, until a
certified gap.

**Why.** The multiplier repair solves the dual of (2.11) restricted to a partition of the triplets —
fixed F (α = μ), free S, the rest at α = 0 — with one Newton unknown per free triplet, so its Newton
steps cost seconds where those of the interior point in the d(d+1)/2 entries of M cost minutes
(13,530 unknowns at d = 164). Its bound is the optimum of (2.11) only when the partition agrees with
an optimal α*: a split by the hinges of an approximate metric (a first-order start) fixes or drops
some of the triplets at the margin of the optimum, and the restricted optimum is then below the full
one. Widening the band until the split is right costs m³/3 a step for m free triplets; here the
partition is corrected instead, as the working set of :mod:`~sdpembed.solvers.lmnn.fast` is.

**The rounds.** The primal iterate of the restricted interior point minimises the model

    ε_R(M) = (1 − μ) tr(MP) + μ Σ_{t∈F} h_t(M) + μ Σ_{t∈S} [h_t(M)]₊,

which is ≤ ε(M) (2.11) for every M (h ≤ [h]₊, the omitted terms are ≥ 0). Every hinge is scanned at
its minimiser M_R (:func:`sdpembed.graphs.radius_hinges`); then the fixed triplets with h_t(M_R) ≤ 0
(where the linear term undercounts) are released into S, the omitted ones with h_t(M_R) > 0 are added
to S, and, once a round changes few triplets, free triplets that are settled — h_t(M_R) < −band with
α_t ≈ 0, or h_t(M_R) > band with α_t ≈ μ — are dropped or fixed, which keeps S near the margin. When
nothing is released or added, ε_R(M_R) = ε(M_R) and M_R minimises (2.11) (the argument of
:mod:`~sdpembed.solvers.lmnn.fast`). The result does not rest on that argument: every round's
multipliers (μ on F, the solve's on S, 0 elsewhere) are handed to
:func:`~sdpembed.problems.lmnn.lmnn_dual_bound`, which certifies a bound for any α in the box
whatever the partition (:mod:`~sdpembed.solvers.lmnn.multiplier_repair`, "Why the bound is valid"),
and the loop stops at the first round whose certified gap is ≤ ``gap_tol``.

Each round but the last needs its restricted minimiser only to choose triplets: rounds are solved
to ``loose_tol`` until a round changes fewer than ``settled`` times as many triplets as S holds, then
to ``tol`` (and only such a round's multipliers drop or fix settled triplets); each starts from the previous
round's metric and multipliers. The first round starts from M rescaled to the minimiser of the loss along
its ray (:func:`best_scale`): a metric of the wrong scale is a descent direction of the model whose fixed
hinges, counted linearly, fall without bound along it, and the restricted problem is then unbounded.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the loss (2.11) through the dual of its slack SDP (Sec. 2.1.3)
   on a working set of triplets, with the dual matrix (2.14).
"""

from __future__ import annotations

import time

import numpy as np

from ..._deadline import Deadline
from ..._progress import say
from ...graphs import radius_hinges
from ...problems.lmnn import LMNNInstance, loss_unit, project_psd, triplet_keys
from ...results import relative_gap
from .multiplier_repair import RepairOutcome, merge_outcomes, repair_multipliers, repair_split

__all__ = ["best_scale", "lookup_sorted", "margin_rounds"]

#: Multipliers within this fraction of μ of 0 (of μ) count as 0 (as μ) when a settled triplet is dropped (fixed).
_SETTLED_ALPHA = 1e-3


def lookup_sorted(keys: np.ndarray, values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``values`` at the sorted ``keys`` equal to each query, −inf where a query is absent (one binary
    search a query: the triplets' multipliers or hinge arguments by their keys,
    :func:`~sdpembed.problems.lmnn.triplet_keys`).

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007. The triplets (i, j, l) of the loss (2.11), keyed as integers.
    """
    if keys.size == 0:
        return np.full(queries.shape, -np.inf)
    pos = np.minimum(np.searchsorted(keys, queries), keys.size - 1)
    return np.where(keys[pos] == queries, values[pos], -np.inf)


def best_scale(instance: LMNNInstance, M: np.ndarray, smallest: float = 0.5) -> float:
    """The s ≥ ``smallest`` that minimises the loss (2.11) of sM, M ⪰ 0, exactly.

    ε(sM) = s(1 − μ)tr(MP) + μ Σ_t [1 + s c_t]₊ with c_t = h_t(M) − 1 is convex and piecewise linear in s; a
    triplet with c_t < 0 is active for s < −1/c_t only, so for s ≥ ``smallest`` only those with
    h_t(M) > 1 − 1/``smallest`` can be active (one scan, :func:`~sdpembed.graphs.radius_hinges`), and the
    minimiser is the first breakpoint at which the slope (1 − μ)tr(MP) + μ Σ_active c_t turns non-negative.
    Along this ray the restricted model of the rounds has no descent direction M when the split is right
    (module docstring), which a first-order metric of the wrong scale can give it."""
    _, h = radius_hinges(instance.X, instance.y, instance.targets, M, threshold=1.0 - 1.0 / smallest)
    c = h - 1.0
    falling = c < 0.0
    breaks = -1.0 / c[falling]
    order = np.argsort(breaks)
    breaks, c_falling = breaks[order], c[falling][order]
    later = breaks > smallest
    slope = ((1.0 - instance.mu) * float(np.sum(np.asarray(instance.pull_matrix) * M))
             + instance.mu * (float(c[~falling].sum()) + float(c_falling[later].sum())))
    slopes = slope - instance.mu * np.cumsum(c_falling[later])       # just after each later breakpoint
    if slope >= 0.0 or slopes.size == 0:
        # a negative slope with no breakpoint left is tr(MP) < 0, the rounding of a PSD M (near-duplicate points):
        # no scale is better than another there
        return float(smallest) if slope >= 0.0 or breaks.size == 0 else float(breaks[-1])
    return float(breaks[later][int(np.argmax(slopes >= 0.0))])


def margin_rounds(
    instance: LMNNInstance,
    M: np.ndarray,
    *,
    band: float = 1e-2,
    alpha_start: tuple[np.ndarray, np.ndarray] | None = None,
    upper_bound: float | None = None,
    gap_tol: float = 1e-5,
    tol: float = 1e-9,
    loose_tol: float = 1e-4,
    settled: float = 0.05,
    max_rounds: int = 10,
    max_free: int = 20000,
    deadline: Deadline | None = None,
    verbose: bool | int = False,
) -> RepairOutcome | None:
    """Minimise (2.11) and certify it by the multiplier interior point on a partition of the triplets that
    is corrected at each restricted minimiser (module docstring).

    Parameters
    ----------
    instance : LMNNInstance
        The instance (on its spanning coordinates, as the fast driver solves it).
    M : ndarray of shape (d, d)
        A metric near an optimum (projected by (2.16)); the first partition is the split of
        :func:`~sdpembed.solvers.lmnn.multiplier_repair.repair_split` at M with ``band``.
    band : float
        The first split's band, and the hinge beyond which a settled free triplet leaves S.
    alpha_start : (triplets, alpha), optional
        Multipliers to start the first round from.
    upper_bound : float, optional
        The loss (2.11) of a PSD metric at hand (by default that of M): gaps are measured against the
        lowest loss seen.
    gap_tol : float
        Stop at the first certified relative gap ≤ gap_tol (:func:`~sdpembed.results.relative_gap`, loss
        unit μ).
    tol, loose_tol : float
        The interior point's tolerance in the last rounds, and in the rounds before (module docstring).
    settled : float
        A round that releases and adds fewer than ``settled``·|S| triplets starts the tight rounds.
    max_rounds : int
        Rounds at most.
    max_free : int
        A partition with more free triplets than this ends the rounds (the Newton system is m × m).
    deadline : Deadline, optional
        The run's time budget (``sdpembed._deadline.Deadline``): no Newton step and no round starts after it
        has passed.
    verbose : bool or int
        A line per round; ``2`` also a line per Newton step.

    Returns
    -------
    RepairOutcome or None
        The metric of lowest loss seen and the triplets and multipliers of the highest certified bound
        (``bound``, :func:`~sdpembed.problems.lmnn.lmnn_dual_bound`), ``iterations`` and ``seconds`` summed
        over the rounds, ``rounds`` run; None when the first partition has no free triplet or more than
        ``max_free``.
    """
    start = time.perf_counter()
    n, mu = instance.n_points, instance.mu
    unit = loss_unit(mu)
    M = project_psd(np.asarray(M, dtype=np.float64))
    upper = float(instance.objective(M) if upper_bound is None else upper_bound)
    scaled = best_scale(instance, M) * M
    loss = float(instance.objective(scaled))
    if loss < upper:
        M, upper = scaled, loss
    fixed, free = repair_split(instance, M, band)
    best: RepairOutcome | None = None
    tight = False
    for round_ in range(1, max_rounds + 1):
        out = repair_multipliers(instance, M, split=(fixed, free), alpha_start=alpha_start, upper_bound=upper,
                                 tol=tol if tight else loose_tol, gap_tol=gap_tol, max_free=max_free,
                                 deadline=deadline, verbose=int(verbose) >= 2)
        if out is None:
            break
        out.rounds = round_
        alpha_free = out.alpha[fixed.shape[0]:]      # this round's multipliers of S (before the merge below)
        best = merge_outcomes(best, out)
        upper = min(upper, out.objective)
        gap = relative_gap(out.objective, out.bound, unit)
        if gap <= gap_tol or (deadline is not None and deadline.passed()):
            if verbose:
                say(f"  margin round {round_}: {out.n_free} free, {out.n_fixed} fixed, loss {out.objective:.10g}, "
                    f"bound {out.bound:.10g}, gap {gap:.2e}")
            break
        # re-partition at the restricted minimiser (the interior point's last metric)
        scanned, h = radius_hinges(instance.X, instance.y, instance.targets, out.last, threshold=-band)
        keys = triplet_keys(scanned, n)
        order = np.argsort(keys)
        keys, h_sorted = keys[order], h[order]
        h_fixed = lookup_sorted(keys, h_sorted, triplet_keys(fixed, n))
        h_free = lookup_sorted(keys, h_sorted, triplet_keys(free, n))
        released = h_fixed <= 0.0
        known = np.sort(np.concatenate([triplet_keys(fixed, n), triplet_keys(free, n)]))
        added = order[(h_sorted > 0.0) & ~np.isfinite(lookup_sorted(known, np.zeros(known.size), keys))]
        changed = int(released.sum()) + added.size
        if verbose:
            say(f"  margin round {round_}: {out.n_free} free, {out.n_fixed} fixed, {out.iterations} Newton steps in "
                f"all, loss {out.objective:.10g}, bound {out.bound:.10g}, gap {gap:.2e}; at the restricted "
                f"minimiser {int(released.sum())} fixed hinges <= 0, {added.size} omitted > 0, "
                f"{time.perf_counter() - start:.1f} s")
        if changed == 0 and tight:
            break                 # the model is the loss at its minimiser: nothing left to correct
        drop = fix = np.zeros(free.shape[0], dtype=bool)
        if tight:                 # multipliers of a round solved to tol only: a loose one's are not settled
            drop = (h_free < -band) & (alpha_free < _SETTLED_ALPHA * mu)
            fix = (h_free > band) & (alpha_free > (1.0 - _SETTLED_ALPHA) * mu)
        keep = ~(drop | fix)
        free, fixed = (np.concatenate([free[keep], fixed[released], scanned[added]]),
                       np.concatenate([fixed[~released], free[fix]]))
        alpha_start = (free, np.concatenate([alpha_free[keep], np.full(int(released.sum()), mu),
                                             np.full(added.size, 0.5 * mu)]))
        M = out.last
        tight = tight or changed <= settled * free.shape[0]
    if best is not None:
        best.seconds = time.perf_counter() - start
    return best
