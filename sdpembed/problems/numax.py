"""The NuMax family — NuMax (4) and NuMax-Class (7) — as numpy: the instance types, their
validation and file arrays, objective, violation and the dual bound verified from multipliers on
pairs of points.

Both are the trace-minimisation SDP (*) of :mod:`sdpembed.problems.numax_certificate` over the
secants of a point set (NuMax eq. (1)), with the secant operator 𝒜 of
:mod:`sdpembed.problems.numax_operator`: two-sided bounds ``1 − δ ≤ 𝒜(P) ≤ 1 + δ`` for NuMax (4),
one-sided ones for NuMax-Class (7) (``𝒜(P) ≥ 1 − δ`` on inter-class secants, ``𝒜(P) ≤ 1 + δ`` on
intra-class ones, (14)). An instance holds its secants, or its points (the point form: all their
secants, streamed where they are evaluated).

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the secants (1), the SDPs (4) and (7)/(15) with
   (14).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from .._memory import check_memory, dense_bytes
from .._validate import as_matrix, as_vector, check_delta, check_positive_int
from ..secants import (
    ExactSecantForms,
    all_secants,
    class_pair_mask,
    gamma,
    iter_labelled_secant_blocks,
    iter_row_form_bounds,
    iter_secant_form_bounds,
    iter_secant_quadratic_forms,
    pair_count,
    sample_class_secants,
    sample_secants,
    violation_uncertainty,
)
from .base import Instance, file_scalar
from .numax_certificate import box_violation, certified_lower_bound
from .numax_operator import PairSecantOperator, SecantOperator

__all__ = ["NuMaxClassInstance", "NuMaxInstance", "ViolationCheck"]

#: Rows of ``secants`` (``inter``, ``intra``) must have a computed norm within this tolerance of 1. They
#: are held exactly as given, never renormalised: the instance's SDP is stated on those rows. Within it a
#: program that normalises the rows itself solves constraints differing from the rows' by a factor
#: ‖v‖² ∈ [1 − 2e-6, 1 + 2e-6] (about 4e-6 of a bound 1 + δ < 2), below the feasibility tolerance 1e-5.
UNIT_NORM_TOL = 1e-6


def _unit_rows(value: object, name: str, *, allow_empty: bool = False) -> np.ndarray:
    """The rows of ``value`` exactly as given (read-only), after checking that each has unit norm to
    :data:`UNIT_NORM_TOL` (NuMax eq. (1)): a ValueError naming ``name`` otherwise."""
    V = as_matrix(value, name, min_rows=0 if allow_empty else 1).copy()
    with np.errstate(over="ignore"):               # a norm beyond the doubles is inf: refused below
        norms = np.linalg.norm(V, axis=1)
    bad = ~(np.abs(norms - 1.0) <= UNIT_NORM_TOL)
    if np.any(bad):
        worst = int(np.argmax(np.where(bad, np.abs(norms - 1.0), -1.0)))
        raise ValueError(
            f"{name} must have unit-norm rows (NuMax eq. (1)) to within {UNIT_NORM_TOL:g}: {int(bad.sum())} "
            f"row(s) do not, e.g. row {worst} has norm {norms[worst]:.17g}. The rows are used exactly as "
            "given, never renormalised; divide each by its norm, or build instances from data with the "
            "from_points / from_labelled constructors."
        )
    V.setflags(write=False)
    return V


def _check_secant_memory(X: object, count: int | None = None) -> None:
    """Refuse to form ``count`` secants of the rows of ``X`` (default: all n(n−1)/2 pairs) beyond the
    machine's memory: three S×N float64 arrays exist at once while they are formed (X[i], X[j] and
    their difference)."""
    shape = np.shape(X)
    if len(shape) == 2:
        pairs = pair_count(shape[0]) if count is None else min(count, pair_count(shape[0]))
        check_memory(3 * dense_bytes(pairs, shape[1]), f"{pairs} secants of X (S×N float64, N = {shape[1]})")


@dataclass(frozen=True)
class ViolationCheck:
    """The proved outcome of the feasibility check of an instance of the NuMax family
    (``NuMaxInstance.check_violation``, ``NuMaxClassInstance.check_violation``).

    The exact worst violation max_k (lo_k − v_kᵀPv_k, v_kᵀPv_k − hi_k)₊ over all secants, in exact
    arithmetic on the doubles given (the bounds 1 ∓ δ exact), lies in [``lower``, ``upper``]; ``value``
    is the computed one. ``exceeds`` says, proved, whether it exceeds ``tol``: every secant (a pair of
    points, or a stored row of a secant-form instance) was either proved within ``tol`` or beyond it by
    its worst-case rounding bound, or decided in exact rational arithmetic (``exact`` such secants).
    ``violated`` counts the secants proved beyond ``tol``, ``pairs`` the secants checked, and
    ``undecided`` those left within their rounding bound of ``tol`` once the verdict was proved (a
    secant beyond ``tol`` decides it; the others then keep their bounds, and ``upper`` is inf when some
    left have none: forms that overflowed, beyond the few then recomputed exactly).
    """

    value: float
    lower: float
    upper: float
    tol: float
    exceeds: bool
    pairs: int = 0
    violated: int = 0
    exact: int = 0
    undecided: int = 0

    @property
    def error(self) -> float:
        """The proved bound on |``value`` − the exact worst violation| (inf when ``value`` is: a violation
        beyond the largest double, where inf − inf is no bound)."""
        return float(np.fmax(self.upper - self.value, self.value - self.lower))

    @classmethod
    def merge(cls, checks: Iterable[ViolationCheck], tol: float) -> ViolationCheck:
        """The check of the union of the pairs of ``checks`` (each with this ``tol``)."""
        checks = list(checks)
        return cls(max((c.value for c in checks), default=0.0), max((c.lower for c in checks), default=0.0),
                   max((c.upper for c in checks), default=0.0), float(tol), any(c.exceeds for c in checks),
                   sum(c.pairs for c in checks), sum(c.violated for c in checks), sum(c.exact for c in checks),
                   sum(c.undecided for c in checks))


def _as_float(value: Fraction) -> float:
    """The double nearest an exact rational, ±inf beyond the largest (where ``float`` raises)."""
    try:
        return float(value)
    except OverflowError:
        return float(np.inf) if value > 0 else float(-np.inf)


def _rounded_out(value: Fraction) -> tuple[float, float]:
    """The doubles just below and just above an exact rational (the same when it is one; the largest
    double and inf beyond it)."""
    nearest = _as_float(value)
    if np.isinf(nearest):
        big = float(np.finfo(np.float64).max)
        return (big, nearest) if nearest > 0 else (nearest, -big)
    if Fraction(nearest) == value:
        return nearest, nearest
    if Fraction(nearest) < value:
        return nearest, float(np.nextafter(nearest, np.inf))
    return float(np.nextafter(nearest, -np.inf)), nearest


def _pair_spread(block: Any, lo: np.ndarray, hi: np.ndarray, has_lo: np.ndarray, has_hi: np.ndarray, tol: float,
                 look: np.ndarray) -> np.ndarray:
    """The bounds on the violations of the pairs ``look`` of a block of
    :func:`~sdpembed.secants.iter_secant_form_bounds` (:func:`~sdpembed.secants.violation_uncertainty`,
    plus the rounding of the bounds fl(1 ∓ δ) themselves, within u of the exact 1 ∓ δ)."""
    lo, hi = lo[look], hi[look]
    return (violation_uncertainty(block.values[look], block.num_err[look], block.den[look], block.den_err[look],
                                  lo, hi, tol)
            + _EPS * (np.where(has_lo[look], np.abs(lo), 0.0) + np.where(has_hi[look], np.abs(hi), 0.0)))


def _block_spread(block: Any, lo: np.ndarray, hi: np.ndarray, has_lo: np.ndarray, has_hi: np.ndarray,
                  tol: float) -> float:
    """One bound on the violation of every pair of a block (:func:`_pair_spread` of each is at most
    this): the largest numerator terms over the least denominator margin, every term of the bound
    being monotone in them; 1 + γ_2 absorbs the two more roundings of forming them. inf when a
    denominator is within its own rounding bound."""
    if block.values.size == 0:
        return np.inf
    margin = float(np.min(block.den - block.den_err))
    reach = float(np.max(np.abs(block.values)))
    size_lo = float(np.max(np.where(has_lo, np.abs(lo), 0.0)))
    size_hi = float(np.max(np.where(has_hi, np.abs(hi), 0.0)))
    if not (margin > 0.0 and np.isfinite(reach)):
        return np.inf
    top = float(np.max(block.num_err)) + reach * float(np.max(block.den_err))
    bound = violation_uncertainty(np.array(reach), top, np.array(margin), 0.0, np.array(size_lo), np.array(size_hi),
                                  tol)
    return float(bound) * (1.0 + gamma(2)) + _EPS * (size_lo + size_hi)


_EPS = float(np.finfo(np.float64).eps)

#: Secants without a rounding bound (their forms overflowed) recomputed exactly once the verdict is proved,
#: to bound the worst violation: each costs O(N²) Python-integer operations, and a P near the largest
#: double leaves every secant without one (hours for all pairs of a few hundred images).
_EXACT_AFTER_VERDICT = 64


class _RowForms:
    """The forms vᵀPv of stored secant rows as :func:`_proved_check` reads a block: each value with its
    rounding bound, over an exact denominator 1."""

    def __init__(self, values: np.ndarray, errors: np.ndarray) -> None:
        self.values, self.num_err = values, errors
        self.den, self.den_err = np.ones_like(values), np.zeros_like(values)


def _proved_check(blocks: Iterable[tuple[tuple[np.ndarray, ...], Any, np.ndarray, np.ndarray]],
                  exact_forms: Callable[[], Callable[..., list[Fraction]]], tol: float, delta: float,
                  progress: Callable[[int], object] | None) -> ViolationCheck:
    """The proved check of ``check_violation`` over ``blocks`` of (keys, forms, lo, hi): the keys of each
    secant ((i, j) point pairs, or (k,) rows), its computed form with rounding bounds (``values``,
    ``num_err``, ``den``, ``den_err`` as in :class:`~sdpembed.secants.SecantFormBounds`) and its bounds.
    ``exact_forms()`` makes the exact forms of secants by their keys, when some are left undecided."""
    exact_tol, exact_delta = Fraction(tol), Fraction(delta)
    value = lower = upper = 0.0
    violated = count = 0
    doubts = []
    for keys, block, lo, hi in blocks:
        has_lo, has_hi = np.isfinite(lo), np.isfinite(hi)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            estimate = np.maximum(lo - block.values, block.values - hi)
            # a screen first: one bound for the whole block, then each secant's own bound only where
            # that one leaves the verdict open or the secant may hold the block's worst bounds. A secant
            # settled below top − 3·screen is exactly below top − screen (its own bound, the rounding
            # of that difference at most screen/8), so below the exact value of the block's top
            # secant, which bounds it in ``upper`` even when decided exactly at the foot of its
            # interval (below top − 2·screen left screen/8 unproved)
            screen = _block_spread(block, lo, hi, has_lo, has_hi, tol)
            settled_in = estimate + screen <= tol
            settled_out = estimate - screen > tol
            top = float(np.fmax.reduce(estimate)) if estimate.size else -np.inf
            look = np.flatnonzero(~(settled_in | settled_out) | (estimate >= top - 3.0 * screen))
            spread = _pair_spread(block, lo, hi, has_lo, has_hi, tol, look)
            est = estimate[look]
            bounded = block.den[look] > block.den_err[look]
            within = bounded & (est + spread <= tol)
            beyond = bounded & (est - spread > tol)
        sure = within | beyond
        settled = settled_in | settled_out
        settled[look] = False
        value = max(value, float(np.max(estimate[settled], initial=0.0)), float(np.max(est[sure], initial=0.0)))
        lower = max(lower, float(np.max(est[sure] - spread[sure], initial=0.0)))
        upper = max(upper, float(np.max(est[sure] + spread[sure], initial=0.0)))
        violated += int(np.count_nonzero(beyond)) + int(np.count_nonzero(settled_out[settled]))
        count += estimate.size
        if not np.all(sure):
            doubt = look[~sure]
            doubts.append((*(key[doubt] for key in keys), est[~sure], spread[~sure], bounded[~sure],
                           has_lo[doubt], has_hi[doubt]))
        if progress is not None:
            progress(estimate.size)
    if not doubts:
        return ViolationCheck(value, lower, upper, tol, violated > 0, count, violated)
    *keys, estimate, spread, bounded, has_lo, has_hi = (np.concatenate(parts) for parts in zip(*doubts, strict=True))
    interval = bounded & np.isfinite(estimate) & np.isfinite(spread)       # a bound holds
    # the secants likeliest beyond tol first: once one is, the verdict is proved and the others keep
    # their intervals (all but those without one)
    order = np.argsort(np.where(interval, -estimate, -np.inf), kind="stable")
    decided = np.zeros(order.size, bool)
    forms = exact_forms()
    after_verdict = 0
    for start in range(0, order.size, 8):
        chunk = order[start:start + 8]
        if violated:
            # the verdict is proved: the others keep their intervals; those without one (forms that
            # overflowed) are bounded exactly up to a budget, beyond which ``upper`` is inf
            chunk = chunk[~interval[chunk]]
            after_verdict += chunk.size
            if after_verdict > _EXACT_AFTER_VERDICT:
                break
        for k, form in zip(chunk, forms(*(key[chunk] for key in keys)), strict=True):
            # every secant has a bound: 1 − δ below, 1 + δ above, or both
            exact = max([(1 - exact_delta) - form] * bool(has_lo[k]) + [form - (1 + exact_delta)] * bool(has_hi[k]))
            down, up = _rounded_out(exact)
            value, lower, upper = max(value, _as_float(exact)), max(lower, down), max(upper, up)
            violated += int(exact > exact_tol)
        decided[chunk] = True
    left = ~decided
    bounded_left = left & interval
    value = max(value, float(np.max(estimate[bounded_left], initial=0.0)))
    lower = max(lower, float(np.max(estimate[bounded_left] - spread[bounded_left], initial=0.0)))
    upper = max(upper, float(np.max(estimate[bounded_left] + spread[bounded_left], initial=0.0)))
    if np.any(left & ~interval):
        upper = float(np.inf)
    return ViolationCheck(value, lower, upper, tol, violated > 0, count, violated, int(decided.sum()),
                          int(left.sum()))


class _TraceInstance(Instance, ABC):
    """What the trace-minimisation instances share: the objective and the verified dual bound."""

    #: The multiplier arrays a solution file may carry (the file contract, ``docs/grading.md``):
    #: ``dual_y`` (S,), one multiplier per secant in the instance's order (``secants``, or ``inter``
    #: then ``intra``), or, in point form, ``dual_pairs`` (m, 2) row indices of X and their ``dual_y`` (m,).
    DUAL_ARRAYS: ClassVar[tuple[str, ...]] = ("dual_pairs", "dual_y")

    def objective(self, P: np.ndarray) -> float:
        """tr P, the objective of NuMax (4) and NuMax-Class (7) (the nuclear norm for P ⪰ 0)."""
        return float(np.trace(P))

    def verified_dual_bound(self, pairs: object, y: object) -> float:
        """A lower bound on the optimum, proved here from multipliers on pairs of ``X``.

        The multipliers y (one per pair (i, j) of rows of X, point form) are made
        sign-admissible and scaled so that I − 𝒜*(y) ⪰ 0 (:func:`certified_lower_bound`, with
        rounding margins); by weak duality the resulting dual objective bounds the optimum over
        *all* pairs, since 𝒜*(y) involves only the pairs with y ≠ 0. Nothing of the claimant is
        trusted but the numbers: a bad y gives a weak bound, never a wrong one. This is how
        ``verify`` certifies solutions of instances far too large for CVXPY (column generation
        writes these multipliers to solution files).

        Parameters
        ----------
        pairs : array of shape (m, 2), int
            Row indices of X; pairs of identical points (zero secants) are ignored.
        y : array of shape (m,)
        """
        if not self.point_form:
            raise ValueError("dual multipliers on pairs need a point-form instance (X, all pairs)")
        index = np.asarray(pairs)
        n = self.X.shape[0]
        if index.ndim != 2 or index.shape[1] != 2 or index.dtype.kind not in "iu":
            raise ValueError(f"dual_pairs must be an integer array of shape (m, 2), got {index.dtype} {index.shape}")
        if index.size and (index.min() < 0 or index.max() >= n):
            raise ValueError(f"dual_pairs must hold row indices of X in [0, {n})")
        multipliers = as_vector(y, "dual_y", length=index.shape[0])
        i, j = index[:, 0].astype(np.int64), index[:, 1].astype(np.int64)
        distinct = np.any(self.X[i] != self.X[j], axis=1)
        i, j, multipliers = i[distinct], j[distinct], multipliers[distinct]
        if i.size == 0:
            return 0.0
        lo, hi = self.bounds_of_pairs(i, j)
        bound, _ = certified_lower_bound(PairSecantOperator(self.X, i, j), lo, hi, multipliers)
        return bound

    def check_violation(self, P: np.ndarray, tol: float = 0.0, *, block_size: int = 65536,
                        progress: Callable[[int], object] | None = None,
                        pairs: tuple[int, int] | None = None) -> ViolationCheck:
        """The worst violation of the bounds lo ≤ vᵀPv ≤ hi over all secants, with a proved verdict on
        whether it exceeds ``tol`` (:class:`ViolationCheck`).

        Point form: the secants are those of NuMax eq. (1), v = (x_i − x_j)/‖x_i − x_j‖ exactly, and the
        ratios of :func:`~sdpembed.secants.iter_secant_form_bounds` (from Gram rows, streamed in blocks of
        ``block_size`` pairs) come with worst-case bounds on their rounding. Secant form: the constraint
        applies to the rows v the instance holds, exactly as those doubles — vᵀPv, not vᵀPv / vᵀv —
        as the secant operator 𝒜 of (4) and (7) is defined
        (:class:`~sdpembed.problems.numax_operator.SecantOperator`), solved and bounded by the dual
        (:meth:`proven_bound`): those rows are the file's rows as written (unit to ``UNIT_NORM_TOL``,
        never renormalised), and the SDP checked is the one the dual bound proves; their
        forms carry the bounds of :func:`~sdpembed.secants.iter_row_form_bounds`, in blocks of
        ``block_size`` rows. In both, :func:`~sdpembed.secants.violation_uncertainty` bounds each
        violation (plus the rounding of the bounds fl(1 ∓ δ) themselves): a secant is proved within
        ``tol`` or beyond it when its interval lies on one side, and the few others are decided by
        :class:`~sdpembed.secants.ExactSecantForms`, in exact rational arithmetic against the exact
        bounds 1 ∓ δ (the likeliest violated first; once one is proved beyond ``tol`` the verdict is,
        and the others keep their bounds). ``progress(k)`` is told the number of secants of each
        block; ``pairs`` (start, stop), point form only, restricts the check to those linear pair
        indices (a distributed check splits them so, and :meth:`ViolationCheck.merge` joins the parts).

        References
        ----------
        .. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach
           for learning near-isometric linear embeddings", IEEE Transactions on Signal Processing
           63(22), 6109–6121, 2015: the secants (1), the constraints of (4) and (7).
        """
        P = np.asarray(P, dtype=np.float64)
        tol = float(tol)
        if not np.isfinite(tol):
            raise ValueError(f"tol must be finite, got {tol}")
        if not np.all(np.isfinite(P)):
            raise ValueError("P must be finite: a non-finite entry has no exact quadratic form")
        if self.point_form:
            blocks = (((b.i, b.j), b, *self.bounds_of_pairs(b.i, b.j))
                      for b in iter_secant_form_bounds(self.X, P, block_size, pairs=pairs))
            return _proved_check(blocks, lambda: ExactSecantForms(self.X, P), tol, self.delta, progress)
        if pairs is not None:
            raise ValueError("pairs (a range of pairs of points) restricts the check of a point-form instance only")
        checks = []
        for V, lo, hi in self._secant_lists():
            blocks = (((k,), _RowForms(values, errors), np.full(k.size, lo), np.full(k.size, hi))
                      for k, values, errors in iter_row_form_bounds(V, P, block_size))
            checks.append(_proved_check(blocks, lambda V=V: ExactSecantForms(V, P).of_rows, tol, self.delta, progress))
        return ViolationCheck.merge(checks, tol)

    @abstractmethod
    def _secant_lists(self) -> list[tuple[np.ndarray, float, float]]:
        """The stored secant lists of a secant-form instance with their bounds (lo, hi) of (*); every concrete
        instance type states its own (NuMax (4): one list; NuMax-Class (7): inter- and intra-class)."""

    @cached_property
    def secant_pairs(self) -> np.ndarray:
        """The (S, 2) point pairs of the rows of :attr:`secant_matrix` (point form: all pairs i < j of
        distinct points, as :func:`sdpembed.secants.all_secants` keeps them)."""
        if not self.point_form:
            raise ValueError("secant pairs exist only for a point-form instance")
        _check_secant_memory(self.X)
        pairs = all_secants(self.X, return_pairs=True)[1]
        pairs.setflags(write=False)
        return pairs

    def multiplier_arrays(self, extra: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The multiplier arrays a solve writes to its solution file (``DUAL_ARRAYS``), from its
        ``extra``: column generation's working set ``pairs`` and their ``y``; otherwise ``y`` on every
        secant (ADMM, CVXPY), with the pairs of the secants in point form. Empty without multipliers."""
        y = extra.get("y")
        if y is None:
            return {}
        if "pairs" in extra:
            return {"dual_pairs": np.asarray(extra["pairs"]), "dual_y": np.asarray(y)}
        y = np.asarray(y)
        if y.shape != (self.secant_matrix.shape[0],):
            return {}
        if self.point_form:
            return {"dual_pairs": self.secant_pairs, "dual_y": y}
        return {"dual_y": y}

    def proven_bound(self, multipliers: Mapping[str, object], matrix: object = None) -> float:
        """A lower bound on the optimum of (4) or (7), proved from the multipliers of a solution
        file alone (``matrix`` is not used: the bound needs no primal point).

        The dual of (*) (:mod:`sdpembed.problems.numax_certificate`) is
        max Σ lo_i y_i⁺ − hi_i y_i⁻ s.t. I − 𝒜*(y) ⪰ 0; every y of admissible signs, scaled by
        1/λ_max(𝒜*(y)), is feasible there, and weak duality makes its value a lower bound
        (:func:`certified_lower_bound`). λ_max comes from a dense ``eigvalsh`` of the N × N matrix
        𝒜*(y), inflated by the eigen-solver's backward error (16·N·ε·‖𝒜*(y)‖₂) and the rounding
        of forming it from the m secants with y ≠ 0 (the others add nothing). Dense is right here: N
        is the ambient dimension, the solution P is itself a dense N × N matrix, and O(N³ + mN²) is
        small next to any solve. Multipliers of absent
        bounds are zeroed and any positive scaling of y gives the same bound; NaN or a wrong
        shape is refused: a bad y weakens the bound, it never makes a wrong one.

        Parameters
        ----------
        multipliers : mapping
            ``dual_y`` (S,) on the secants in the instance's order; in point form ``dual_pairs``
            (m, 2) row indices of X with their ``dual_y`` (m,) (the other pairs' multipliers are
            zero, which is dual feasible: 𝒜*(y) involves only the pairs with y ≠ 0).
        matrix : ndarray, optional
            The solution; unused.

        Raises
        ------
        ValueError
            A missing array, ``dual_pairs`` on a secant-form instance, a wrong shape, dtype or index,
            NaN or infinite multipliers.
        """
        if "dual_y" not in multipliers or (self.point_form and "dual_pairs" not in multipliers):
            need = "both 'dual_pairs' (m, 2) and 'dual_y' (m,)" if self.point_form else "'dual_y' (S,)"
            raise ValueError(f"a solution with dual multipliers of this {self.problem} instance needs {need}")
        if "dual_pairs" in multipliers:
            return self.verified_dual_bound(multipliers["dual_pairs"], multipliers["dual_y"])
        V = self.secant_matrix
        y = as_vector(multipliers["dual_y"], "dual_y", length=V.shape[0])
        lo, hi = self.bounds()
        # only the secants with y ≠ 0 enter 𝒜*(y) and g(y): the same bound, with the rounding margin of
        # a sum of that many terms, at the cost of the working set a column generation leaves, not of S
        used = np.flatnonzero(y)
        return certified_lower_bound(SecantOperator(V[used]), lo[used], hi[used], y[used])[0]



def _row_blocks(rows: np.ndarray, block_size: int) -> Iterator[np.ndarray]:
    """The rows in blocks of ``block_size`` (views): a long secant list is checked without an S × N product."""
    return (rows[start:start + block_size] for start in range(0, rows.shape[0], block_size))


#: The least largest |entry| of a point-form instance's X. The pair scans (``secants.iter_secant_form_bounds``,
#: the oracle's and the solvers') drop a pair as a zero secant when its length is at most
#: ``ZERO_SECANT_RTOL`` · max(max |X|, 1e-300): below this scale the test is no longer relative to the data,
#: and pairs of distinct points, which the same points scaled up by a power of two keep, would be dropped
#: with their constraints (at 2^-1040 every pair of 8 Gaussian points was, and a P violating all of them
#: passed). Every larger scale, up to the largest double, is judged exactly (the pairs' differences are
#: scaled by powers of two where their squares would under- or overflow).
SMALLEST_POINT_SCALE = 1e-300


def _point_form(value: object) -> np.ndarray:
    """The points of a point-form instance, read-only: at least two of them distinct, at a scale whose
    secants the pair scans form (:data:`SMALLEST_POINT_SCALE`)."""
    X = as_matrix(value, "X", min_rows=2).copy()
    if np.all(X == X[0]):
        raise ValueError("X must contain at least two distinct points (all its secants are zero)")
    top = float(np.max(np.abs(X)))
    if top < SMALLEST_POINT_SCALE:
        raise ValueError(
            f"X is too small for a point-form NuMax instance: its largest |entry| is {top:.3g} (about "
            f"2^{int(np.frexp(top)[1]) - 1}), below {SMALLEST_POINT_SCALE:g}, where the test that drops "
            "zero secants (duplicate points) stops being relative to the data, so pairs of distinct points "
            "would be dropped with their constraints. The secants do not change with the scale of X: "
            "rescale X (e.g. by a power of two, exactly)"
        )
    X.setflags(write=False)
    return X

@dataclass(frozen=True, eq=False)
class NuMaxInstance(_TraceInstance):
    """The NuMax SDP (4): minimise tr P s.t. |v_iᵀ P v_i − 1| ≤ δ for all secants, P ⪰ 0.

    Give either ``secants`` (unit rows v_i, NuMax eq. (1)) or ``X`` (points as rows,
    meaning all their pairwise secants — the *point form* of DESIGN.md).

    Parameters
    ----------
    delta : float
        Isometry constant δ ∈ (0, 1).
    secants : ndarray of shape (S, N), optional
        Unit-norm secants: each row's norm within ``UNIT_NORM_TOL`` (1e-6) of 1; the rows are held
        exactly as given (the constraints are on them), never renormalised.
    X : ndarray of shape (n, N), optional
        Points; the instance then means all n(n−1)/2 secants.
    optimum : float, optional
        A certified optimal value carried with the instance (used by ``verify``).
    """

    problem: ClassVar[str] = "numax"
    variable: ClassVar[str] = "P"

    delta: float
    secants: np.ndarray | None = None
    X: np.ndarray | None = None
    optimum: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_delta(self.delta))
        if (self.secants is None) == (self.X is None):
            raise ValueError("give exactly one of secants (S, N) or X (n, N) points")
        if self.secants is not None:
            object.__setattr__(self, "secants", _unit_rows(self.secants, "secants"))
        else:
            object.__setattr__(self, "X", _point_form(self.X))
        self._check_variable_memory(self.dim)
        self._check_optimum()

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_points(
        cls, X: np.ndarray, delta: float, *, n_secants: int | None = None, random_state=None
    ) -> NuMaxInstance:
        """Secant-form instance from data points (rows of ``X``).

        With ``n_secants`` a seeded uniform sample of that many pairs is used (NuMax
        Sec. 5.1); without it, all pairs. Zero secants (duplicate points) are dropped with
        a warning.
        """
        if n_secants is None:
            _check_secant_memory(X)
            secants = all_secants(X)
        else:
            n_secants = check_positive_int(n_secants, "n_secants")
            _check_secant_memory(X, n_secants)
            secants = sample_secants(X, n_secants, random_state=random_state)
        return cls(delta=delta, secants=secants)

    @classmethod
    def from_data(
        cls, X: np.ndarray, y: np.ndarray | None, delta: float, *, n_secants: int | None = None,
        point_form: bool = False, random_state=None,
    ) -> NuMaxInstance:
        """The CLI's constructor: points (labels ignored), point form or (sampled) secants."""
        if point_form:
            return cls(delta=delta, X=X)
        return cls.from_points(X, delta, n_secants=n_secants, random_state=random_state)

    # ----------------------------------------------------------------- structure
    @property
    def point_form(self) -> bool:
        """True when the instance is given by points ``X`` (all pairwise secants)."""
        return self.X is not None

    @property
    def dim(self) -> int:
        """Ambient dimension N (P is N × N)."""
        return (self.secants if self.secants is not None else self.X).shape[1]

    @property
    def n_constraints(self) -> int:
        """Number of secants S (in point form: all n(n−1)/2 pairs, before duplicate points'
        zero secants are dropped)."""
        return self.secants.shape[0] if self.secants is not None else pair_count(self.X.shape[0])

    @cached_property
    def secant_matrix(self) -> np.ndarray:
        """The (S, N) unit secants, materialised (all pairs in point form)."""
        if self.secants is not None:
            return self.secants
        _check_secant_memory(self.X)
        V = all_secants(self.X)
        V.setflags(write=False)
        return V

    def _secant_lists(self) -> list[tuple[np.ndarray, float, float]]:
        return [(self.secants, 1.0 - self.delta, 1.0 + self.delta)]

    def bounds_of_pairs(self, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bounds (1 − δ, 1 + δ) of (4) on the secants of the point pairs (i[k], j[k])."""
        return np.full(np.shape(i), 1.0 - self.delta), np.full(np.shape(i), 1.0 + self.delta)

    def bounds(self, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per-secant bounds (lo, hi) = (1 − δ, 1 + δ) of (4), for ``n`` secants."""
        n = self.secant_matrix.shape[0] if n is None else n
        return np.full(n, 1.0 - self.delta), np.full(n, 1.0 + self.delta)

    # ----------------------------------------------------------------- evaluation
    def max_violation(self, P: np.ndarray, block_size: int = 65536,
                      progress: Callable[[int], object] | None = None, pairs: tuple[int, int] | None = None) -> float:
        """Worst violation max_i (|v_iᵀ P v_i − 1| − δ)₊ over all secants.

        The secants are taken in blocks of ``block_size`` (in point form streamed, never
        materialised); ``progress(k)`` is told the number of secants of each block as it is done.
        In point form ``pairs`` (start, stop) restricts the check to the pairs of those linear
        indices (:func:`~sdpembed.secants.iter_secant_blocks`; a distributed check splits them so).
        A computed value; :meth:`check_violation` proves the verdict against a tolerance (the oracle's).
        """
        P = np.asarray(P, dtype=np.float64)
        if self.secants is not None:
            forms = (np.einsum("ij,ij->i", V @ P, V) for V in _row_blocks(self.secants, block_size))
        else:                       # from Gram rows: O(n·N) a point, not O(N²) a pair
            forms = iter_secant_quadratic_forms(self.X, P, block_size, pairs=pairs)
        worst = 0.0
        for values in forms:
            worst = max(worst, box_violation(values, 1.0 - self.delta, 1.0 + self.delta))
            if progress is not None:
                progress(len(values))
        return worst

    # ----------------------------------------------------------------- files
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the file contract (DESIGN.md)."""
        arrays = {"problem": np.array(self.problem), "delta": np.array(self.delta)}
        if self.secants is not None:
            arrays["secants"] = np.asarray(self.secants)
        else:
            arrays["X"] = np.asarray(self.X)
        return self._with_optimum(arrays)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> NuMaxInstance:
        """Build from the arrays of an instance file (see :meth:`to_arrays`)."""
        delta = file_scalar(arrays, "delta", cls.problem)
        optimum = file_scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        has_secants, has_points = "secants" in arrays, "X" in arrays
        if has_secants == has_points:
            raise ValueError("a 'numax' instance needs exactly one of the arrays 'secants' or 'X'")
        if has_secants:
            return cls(delta=delta, secants=arrays["secants"], optimum=optimum)
        return cls(delta=delta, X=arrays["X"], optimum=optimum)


@dataclass(frozen=True, eq=False)
class NuMaxClassInstance(_TraceInstance):
    """The NuMax-Class SDP (7): minimise tr P over P ⪰ 0 subject to

        v_iᵀ P v_i ≥ 1 − δ  for inter-class secants v_i   (they may expand freely),
        u_iᵀ P u_i ≤ 1 + δ  for intra-class secants u_i   (they may shrink freely),

    equivalently 𝒜_c(P) ≤ b_c of (14)–(15). Give ``inter`` and ``intra`` (unit rows), or the
    labelled points ``X`` and ``y`` meaning all their pairs (point form).

    Parameters
    ----------
    delta : float
        δ ∈ (0, 1).
    inter, intra : ndarray of shapes (S₁, N), (S₂, N), optional
        Inter- and intra-class unit secants; both non-empty.
    X : ndarray of shape (n, N), optional
    y : ndarray of shape (n,), optional
        Labels of ``X``; at least two classes and one class with two members.
    optimum : float, optional
        A certified optimal value carried with the instance.
    """

    problem: ClassVar[str] = "numax_class"
    variable: ClassVar[str] = "P"

    delta: float
    inter: np.ndarray | None = None
    intra: np.ndarray | None = None
    X: np.ndarray | None = None
    y: np.ndarray | None = None
    optimum: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_delta(self.delta))
        secant_form = self.inter is not None or self.intra is not None
        point_form = self.X is not None or self.y is not None
        if secant_form == point_form:
            raise ValueError("give either inter and intra (secants) or X and y (labelled points)")
        if secant_form:
            if self.inter is None or self.intra is None:
                raise ValueError("give both inter and intra secants")
            inter = _unit_rows(self.inter, "inter", allow_empty=True)
            intra = _unit_rows(self.intra, "intra", allow_empty=True)
            if inter.shape[0] == 0 or intra.shape[0] == 0:
                raise ValueError(
                    f"inter and intra must both be non-empty, got {inter.shape[0]} inter and "
                    f"{intra.shape[0]} intra secants"
                )
            if inter.shape[1] != intra.shape[1]:
                raise ValueError(f"inter and intra must have the same number of columns, got "
                                 f"{inter.shape[1]} and {intra.shape[1]}")
            object.__setattr__(self, "inter", inter)
            object.__setattr__(self, "intra", intra)
        else:
            if self.X is None or self.y is None:
                raise ValueError("give both X and its labels y")
            X = _point_form(self.X)
            labels = _check_labels(self.y, X.shape[0])
            labels.setflags(write=False)
            object.__setattr__(self, "X", X)
            object.__setattr__(self, "y", labels)
        self._check_variable_memory(self.dim)
        self._check_optimum()

    @classmethod
    def from_labelled(
        cls,
        X: np.ndarray,
        y: np.ndarray,
        delta: float,
        *,
        n_inter: int | None = None,
        n_intra: int | None = None,
        random_state=None,
    ) -> NuMaxClassInstance:
        """Secant-form instance from labelled points: all pairs, or seeded samples of
        ``n_inter`` inter-class and ``n_intra`` intra-class pairs."""
        X = as_matrix(X, "X", min_rows=2)
        labels = _check_labels(y, X.shape[0])
        if n_inter is None and n_intra is None:
            _check_secant_memory(X)
            V, pairs = all_secants(X, return_pairs=True)
            same = class_pair_mask(labels, pairs[:, 0], pairs[:, 1])
            return cls(delta=delta, inter=V[~same], intra=V[same])
        if n_inter is None or n_intra is None:
            raise ValueError("give both n_inter and n_intra to sample, or neither for all pairs")
        inter, intra = sample_class_secants(X, labels, n_inter, n_intra, random_state=random_state)
        return cls(delta=delta, inter=inter, intra=intra)

    @classmethod
    def from_data(
        cls, X: np.ndarray, y: np.ndarray | None, delta: float, *, n_secants: int | None = None,
        point_form: bool = False, random_state=None,
    ) -> NuMaxClassInstance:
        """The CLI's constructor: labelled points, point form or secants (``n_secants`` split
        evenly between inter- and intra-class pairs)."""
        if y is None:
            raise ValueError("a numax_class instance needs labelled data (datasets mnist, digits or shapes)")
        if point_form:
            return cls(delta=delta, X=X, y=y)
        if n_secants is None:
            return cls.from_labelled(X, y, delta)
        half = max(n_secants // 2, 1)
        return cls.from_labelled(X, y, delta, n_inter=half, n_intra=half, random_state=random_state)

    @property
    def point_form(self) -> bool:
        """True when the instance is given by labelled points (all pairs)."""
        return self.X is not None

    @property
    def dim(self) -> int:
        """Ambient dimension N."""
        return (self.inter if self.inter is not None else self.X).shape[1]

    @property
    def n_constraints(self) -> int:
        """S₁ + S₂ (in point form all n(n−1)/2 pairs)."""
        if self.inter is not None:
            return self.inter.shape[0] + self.intra.shape[0]
        return pair_count(self.X.shape[0])

    @cached_property
    def _materialised(self) -> tuple[np.ndarray, np.ndarray]:
        if self.inter is not None:
            V = np.vstack([self.inter, self.intra])
            intra = np.arange(V.shape[0]) >= self.inter.shape[0]
        else:
            _check_secant_memory(self.X)
            V, pairs = all_secants(self.X, return_pairs=True)
            intra = class_pair_mask(self.y, pairs[:, 0], pairs[:, 1])
        V.setflags(write=False)
        return V, intra

    @property
    def secant_matrix(self) -> np.ndarray:
        """The secants stacked as [inter; intra] (point form: all pairs, materialised)."""
        return self._materialised[0]

    def pair_bounds(self, intra: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) of (7) for secants flagged intra-class or not: [1 − δ, ∞) or (−∞, 1 + δ]."""
        intra = np.asarray(intra, dtype=bool)
        return np.where(intra, -np.inf, 1.0 - self.delta), np.where(intra, 1.0 + self.delta, np.inf)

    def _secant_lists(self) -> list[tuple[np.ndarray, float, float]]:
        return [(self.inter, 1.0 - self.delta, np.inf), (self.intra, -np.inf, 1.0 + self.delta)]

    def bounds_of_pairs(self, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of (7) on the secants of the point pairs (i[k], j[k]) (point form), by their labels."""
        return self.pair_bounds(self.y[i] == self.y[j])

    def bounds(self, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per-secant bounds of (7), in the order of :attr:`secant_matrix`."""
        return self.pair_bounds(self._materialised[1])

    def max_violation(self, P: np.ndarray, block_size: int = 65536,
                      progress: Callable[[int], object] | None = None, pairs: tuple[int, int] | None = None) -> float:
        """Worst one-sided violation over all secants, in blocks (point form: streamed by class;
        ``progress(k)`` told the number of secants of each block as it is done; ``pairs`` as for
        :meth:`NuMaxInstance.max_violation`)."""
        P = np.asarray(P, dtype=np.float64)
        if self.inter is not None:
            blocks = ((V, np.full(len(V), intra)) for rows, intra in ((self.inter, False), (self.intra, True))
                      for V in _row_blocks(rows, block_size))
        else:
            blocks = ((V, intra) for _, V, intra in iter_labelled_secant_blocks(self.X, self.y, block_size,
                                                                                pairs=pairs))
        worst = 0.0
        for V, intra in blocks:
            values = np.einsum("ij,ij->i", V @ P, V)
            worst = max(worst, box_violation(values, *self.pair_bounds(intra)))
            if progress is not None:
                progress(len(V))
        return worst

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the file contract (DESIGN.md)."""
        arrays = {"problem": np.array(self.problem), "delta": np.array(self.delta)}
        if self.inter is not None:
            arrays["inter"], arrays["intra"] = np.asarray(self.inter), np.asarray(self.intra)
        else:
            arrays["X"], arrays["y"] = np.asarray(self.X), np.asarray(self.y)
        return self._with_optimum(arrays)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> NuMaxClassInstance:
        """Build from the arrays of an instance file (see :meth:`to_arrays`)."""
        delta = file_scalar(arrays, "delta", cls.problem)
        optimum = file_scalar(arrays, "optimum", cls.problem) if "optimum" in arrays else None
        secant_form = "inter" in arrays or "intra" in arrays
        if secant_form == ("X" in arrays or "y" in arrays):
            raise ValueError("a 'numax_class' instance needs either 'inter' and 'intra' or 'X' and 'y'")
        if secant_form:
            return cls(delta=delta, inter=arrays.get("inter"), intra=arrays.get("intra"), optimum=optimum)
        return cls(delta=delta, X=arrays.get("X"), y=arrays.get("y"), optimum=optimum)


def _check_labels(y: object, n: int) -> np.ndarray:
    """Labels for n points: 1-D, length n, at least two classes and one intra-class pair."""
    labels = np.asarray(y)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(f"y must be a 1-D array of {n} labels (one per row of X), got shape {labels.shape}")
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError("y contains NaN or infinite labels")
    if labels.dtype.kind not in "iufUSb":
        raise ValueError(f"y must hold integer or string labels, got dtype {labels.dtype}")
    classes, counts = np.unique(labels, return_counts=True)
    if classes.size < 2:
        raise ValueError(f"y must contain at least two classes (no inter-class secants otherwise), got {classes.size}")
    if counts.max() < 2:
        raise ValueError("y must have a class with at least two members (no intra-class secants otherwise)")
    return labels.copy()
