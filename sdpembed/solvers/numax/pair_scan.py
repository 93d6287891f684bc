"""The scan of all pairs of a point set for violated constraints lo ≤ v_ijᵀPv_ij ≤ hi, the
engine of column generation (NuMax Algorithm 2, :mod:`sdpembed.solvers.numax.column_generation`)
and of the rank adjustment of Luo et al. (:mod:`sdpembed.solvers.near_isometric.rank_adjust`).

No secant is materialised: with Ψ the factor of P (P = ΨᵀΨ) and Y = XΨᵀ,
v_ijᵀPv_ij = ‖y_i − y_j‖² / ‖x_i − x_j‖², both squared distances read off Gram matrices, rows
taken in blocks against all later rows (:class:`PairDistances` keeps the P-independent part
across scans). Squared distances from Gram matrices lose up to 2γ_{N+2}·(‖x_i‖² + ‖x_j‖²) to
cancellation (a worst-case bound, :func:`~sdpembed.secants.gram_distance_error`);
every pair whose violation could exceed the tolerance within that error is recomputed from its
explicit difference (:func:`pair_values`, :func:`factor_values`), so the scan is exact to
rounding. A screen over each block's rectangle of ratios, with one rounding bound for all its pairs
but the near-duplicate ones (:func:`scan_block`), settles the pairs that are not near a bound, so
that only the few others are looked at one by one. :func:`initial_working_set` draws the first
working set of pairs (each point's nearest neighbours, then random pairs).

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the scan of the secants (1) of all pairs in Algorithm 2.
.. [2] J. Luo, K. Shapiro, H.-J. M. Shi, Q. Yang and K. Zhu, "Practical algorithms for learning
   near-isometric linear embeddings", SIAM Undergraduate Research Online 9, 2016
   (arXiv:1601.00062). Implemented here: the scan of Algorithms 3–4.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..._memory import GIB, physical_memory
from ..._validate import as_matrix
from ...secants import (
    gamma,
    gram_distance_error,
    linear_index_of_pairs,
    pair_count,
    scaled_differences,
    violation_uncertainty,
)

__all__ = [
    "PairBounds",
    "PairDistances",
    "CACHE_BYTES",
    "CACHE_PAIR_BYTES",
    "cache_pairs_limit",
    "ScanResult",
    "ScanRound",
    "BlockScan",
    "scan_pair_violations",
    "scan_round",
    "scan_block",
    "merge_block_scans",
    "is_member",
    "worst_ranks",
    "selectable",
    "DistanceBlock",
    "distance_block",
    "default_block_rows",
    "rectangle_entries",
    "CLOSE_FACTOR",
    "block_pairs",
    "psd_factor",
    "pair_values",
    "factor_values",
    "initial_working_set",
]

#: ``bounds(i, j) -> (lo, hi)``: the bounds on v_ijᵀPv_ij for the pairs (i[k], j[k]).
PairBounds = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def psd_factor(P: np.ndarray) -> np.ndarray:
    """Ψ (r, N) with ΨᵀΨ = P₊ (the PSD part of P), keeping every positive eigenvalue."""
    w, U = np.linalg.eigh(0.5 * (P + P.T))
    keep = w > 0
    return np.sqrt(w[keep])[:, None] * U[:, keep].T


def pair_values(X: np.ndarray, P: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """v_ijᵀPv_ij from explicit differences (exact to rounding)."""
    D = scaled_differences(X, i, j)[0]
    return np.einsum("ij,ij->i", D @ P, D) / np.einsum("ij,ij->i", D, D)


def factor_values(X: np.ndarray, Psi: np.ndarray, i: np.ndarray, j: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """‖Ψ(x_i − x_j)‖² / ‖x_i − x_j‖² from explicit differences (exact to rounding), O(N r) a pair,
    in chunks of ``chunk`` pairs (a scan may recompute hundreds of thousands)."""
    out = np.empty(i.size)
    for start in range(0, i.size, chunk):
        part = slice(start, start + chunk)
        D = scaled_differences(X, i[part], j[part])[0]
        B = D @ Psi.T
        out[part] = np.einsum("ij,ij->i", B, B) / np.einsum("ij,ij->i", D, D)
    return out


#: Bytes a kept :class:`PairDistances` block holds for each entry of its rectangle (a squared
#: distance; the pairs' indices and rounding bounds are cheap to recompute for the few pairs a scan
#: looks at closely, :class:`DistanceBlock`).
CACHE_PAIR_BYTES = 8

#: Memory the kept blocks of one :class:`PairDistances` may take (at most an eighth of the machine's).
CACHE_BYTES = 2 * GIB

#: A pair whose Gram-based squared distance is at most this multiple of its block's rounding bound
#: (about ε·(‖x_i‖² + ‖x_j‖²)·√dim) is *close* (near-duplicate points): the screen of a scan cannot
#: bound its rounding by the block's, so every scan looks at it closely.
CLOSE_FACTOR = 2.0**20


def cache_pairs_limit(budget: int = CACHE_BYTES) -> int:
    """The most entries (pairs, and the few slots of a block's rectangle that are none) whose
    distances a :class:`PairDistances` keeps: ``budget`` bytes, at most an eighth of the physical
    memory, at :data:`CACHE_PAIR_BYTES` an entry."""
    memory = physical_memory()
    if memory is not None:
        budget = min(budget, memory // 8)
    return int(budget) // CACHE_PAIR_BYTES


def default_block_rows(n: int) -> int:
    """Rows of a scan block of n points: about four million entries a block, and at least eight blocks,
    so that the unused lower triangle of a block's rectangle (:class:`DistanceBlock`) stays within about
    a sixteenth of its entries."""
    return max(1, min(n, 4_000_000 // max(n, 1), -(-n // 8)))


def rectangle_entries(n: int, block_rows: int) -> int:
    """Entries of the rectangles of all blocks of ``block_rows`` rows of n points (:class:`DistanceBlock`)."""
    starts = np.arange(0, max(n - 1, 0), block_rows, dtype=np.int64)
    rows = np.minimum(starts + block_rows, n - 1) - starts
    return int(np.sum(rows * (n - 1 - starts)))


class PairDistances:
    """The part of an all-pairs scan that does not depend on P, computed once for the points X.

    Block by block of ``block_rows`` rows (against all later rows; default
    :func:`default_block_rows`): the squared distances ‖x_i − x_j‖² from the Gram matrix, with the
    bounds on their rounding that the scan's screen needs (:class:`DistanceBlock`). Column
    generation scans all pairs of the same points every round (and the monitor of its tight rounds
    more often); with this object the later scans skip the n × n × N products, most of the cost of a
    scan. Blocks are kept while their rectangles total at most ``max_pairs`` entries
    (:data:`CACHE_PAIR_BYTES` bytes an entry, :func:`rectangle_entries`; beyond, every scan
    recomputes them); by default as many as fit in :func:`cache_pairs_limit` (all 4.99·10⁷ pairs of
    10,000 points, 0.42 GB).
    """

    def __init__(self, X: np.ndarray, block_rows: int | None = None, max_pairs: int | None = None) -> None:
        self.X = as_matrix(X, "X", min_rows=2)
        n = self.X.shape[0]
        self.norms2 = np.einsum("ij,ij->i", self.X, self.X)
        self.block_rows = block_rows or default_block_rows(n)
        limit = cache_pairs_limit() if max_pairs is None else max_pairs
        self._cache = rectangle_entries(n, self.block_rows) <= limit
        self._blocks: dict[int, DistanceBlock] = {}

    @property
    def keeps_blocks(self) -> bool:
        """Whether the blocks are kept across scans (within ``max_pairs``)."""
        return self._cache

    def starts(self) -> range:
        """First rows of the blocks."""
        return range(0, self.X.shape[0] - 1, self.block_rows)

    def block(self, start: int) -> DistanceBlock:
        """The :class:`DistanceBlock` of the rows ``start`` ≤ i < ``start`` + ``block_rows``."""
        if start in self._blocks:
            return self._blocks[start]
        block = distance_block(self.X, self.norms2, start, min(start + self.block_rows, self.X.shape[0] - 1))
        if self._cache:
            self._blocks[start] = block
        return block


@dataclass(eq=False)
class DistanceBlock:
    """The P-independent part of the scan of the pairs of rows ``start`` ≤ i < ``stop`` with all later
    rows j > i, as a rectangle: entry (r, c) is the pair (``start`` + r, ``start`` + 1 + c), a pair
    when c ≥ r.

    ``dX`` holds the pairs' squared distances from the Gram matrix, NaN at the entries that are no
    pair and at the close pairs (those within :data:`CLOSE_FACTOR` times ``err``, the largest rounding
    bound of the block's squared distances), which are listed apart: their
    flat positions ``close`` (increasing) and squared distances ``close_dX``. ``dmin`` is the least
    squared distance of the other pairs (inf if there are none), ``screened`` their number, and
    ``counted`` the block's pairs of distinct points. With these a scan bounds the rounding of every
    pair that is not close at once (:func:`scan_block`).
    """

    start: int
    stop: int
    dX: np.ndarray
    close: np.ndarray
    close_dX: np.ndarray
    err: float
    dmin: float
    screened: int
    counted: int
    _box: tuple | None = field(default=None, repr=False)

    @property
    def pairs(self) -> int:
        """The block's pairs (those of identical points included)."""
        return self.screened + self.close.size

    def box(self, bounds: PairBounds) -> tuple[float, float]:
        """(the largest lower bound, the smallest upper bound) of the block's pairs: a ratio
        v_ijᵀPv_ij between them satisfies every pair's bounds. Computed once for a ``bounds``
        (compared by identity; another one recomputes it)."""
        if self._box is None or self._box[0] is not bounds:
            _, _, i, j, _, _ = block_pairs(self.start, self.stop, self.start + 1 + self.dX.shape[1])
            lo, hi = bounds(i, j)
            lo_max, hi_min = float(np.max(lo, initial=-np.inf)), float(np.min(hi, initial=np.inf))
            same = lo.size > 0 and float(np.min(lo)) == lo_max and float(np.max(hi)) == hi_min
            self._box = (bounds, lo_max, hi_min, same)
        return self._box[1], self._box[2]

    def uniform(self, bounds: PairBounds) -> bool:
        """Whether every pair of the block has the same bounds, those of :meth:`box` (NuMax's 1 ∓ δ)."""
        self.box(bounds)
        return self._box[3]


def distance_block(X: np.ndarray, norms2: np.ndarray, start: int, stop: int) -> DistanceBlock:
    """The :class:`DistanceBlock` of the rows ``start`` ≤ i < ``stop`` of X (``norms2`` the squared
    norms of its rows)."""
    n, dim = X.shape
    rows, cols = np.arange(start, stop), np.arange(start + 1, n)
    dX = norms2[rows, None] + norms2[None, cols] - 2.0 * (X[rows] @ X[cols].T)
    lower = cols[None, :] <= rows[:, None]                       # entries that are no pair
    norms_rows, norms_cols = norms2[rows], norms2[cols]
    err = float(_rounding_bound(X, norms2, rows[np.argmax(norms_rows)], cols[np.argmax(norms_cols)]))
    with np.errstate(invalid="ignore"):      # NaN (norms beyond the range of squares) is close: judged alone
        close = np.flatnonzero(~lower & ~(dX > CLOSE_FACTOR * err))
    dX[lower] = np.nan
    flat = dX.reshape(-1)
    close_dX = flat[close].copy()
    flat[close] = np.nan
    dmin = float(np.fmin.reduce(flat)) if flat.size else np.nan
    pairs = int(rows.size * cols.size - rows.size * (rows.size - 1) // 2)
    i, j = rows[close // cols.size], cols[close % cols.size]
    distinct = int(np.count_nonzero(np.any(X[i] != X[j], axis=1))) if close.size else 0
    return DistanceBlock(start, stop, dX, close, close_dX, err, np.inf if np.isnan(dmin) else dmin,
                         pairs - close.size, pairs - close.size + distinct)


def block_pairs(start: int, stop: int, n: int) -> tuple[np.ndarray, ...]:
    """(rows, cols, i, j, ri, ci) of the pairs of rows ``start`` ≤ i < ``stop`` of n points with all
    later rows j > i, in row-major order: (i[k], j[k]) = (rows[ri[k]], cols[ci[k]]), cols the rows
    after ``start`` (row ``start`` + r pairs with columns r, …, n − 2 − ``start``)."""
    rows = np.arange(start, stop)
    cols = np.arange(start + 1, n)
    counts = cols.size - np.arange(rows.size)
    ri = np.repeat(np.arange(rows.size, dtype=np.int32), counts)
    # position k of row r's first pair is first[r]; its column is k − first[r] + r
    first = np.cumsum(counts) - counts
    ci = (np.arange(ri.size) - np.repeat(first - np.arange(rows.size), counts)).astype(np.int32)
    return rows, cols, rows[ri], cols[ci], ri, ci


def _rounding_bound(X: np.ndarray, norms2: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Worst-case bounds on the rounding of Gram-based squared distances, 2γ_{dim+2}(‖x_i‖² + ‖x_j‖²)
    (:func:`~sdpembed.secants.gram_distance_error`)."""
    return gram_distance_error(norms2[i], norms2[j], X.shape[1])


def _image_rounding(nx: np.ndarray, Psi: np.ndarray) -> np.ndarray:
    """η_i bounding ‖fl(Ψx_i) − Ψx_i‖ for the rows of Y = XΨᵀ (``nx`` the squared norms of the rows of X):
    entry k is a dot product of length N, off by at most γ_N·|ψ_k|ᵀ|x_i| ≤ γ_N‖ψ_k‖‖x_i‖ (worst case,
    :func:`~sdpembed.secants.gamma`), so η_i = γ_N‖Ψ‖_F‖x_i‖, far above ε‖y_i‖ when a large Ψ cancels on
    the points. The computed norms are made exact upper bounds: fl(‖x_i‖²) ≥ (1 − γ_N)‖x_i‖², the
    computed ‖Ψ‖_F² ≥ (1 − γ_{rN})‖Ψ‖_F², and γ_{N+8} in place of γ_N absorbs the product's own roundings."""
    r, N = Psi.shape
    exact = 1.0 / np.sqrt((1.0 - gamma(N)) * (1.0 - gamma(r * N + 2)))
    return gamma(N + 8) * exact * float(np.linalg.norm(Psi)) * np.sqrt(nx)


def _image_error(reach: np.ndarray | float, eta: np.ndarray | float, dim: int) -> np.ndarray | float:
    """|‖ŷ_i − ŷ_j‖² − ‖Ψ(x_i − x_j)‖²| for images ŷ of length ``dim`` off by at most η in all (η_i + η_j)
    and fl(‖ŷ_i‖) + fl(‖ŷ_j‖) ≤ ``reach`` (square roots of the computed squared norms): 2‖Ψ(x_i − x_j)‖η + η²
    with ‖Ψ(x_i − x_j)‖ ≤ ‖ŷ_i‖ + ‖ŷ_j‖ + η, and ‖ŷ‖ ≤ fl(‖ŷ‖)/√(1 − γ_dim); the factor 1 + γ_8 absorbs
    the bound's own roundings."""
    return (2.0 * reach / np.sqrt(1.0 - gamma(max(dim, 1))) + 3.0 * eta) * eta * (1.0 + gamma(8))


@dataclass
class ScanResult:
    """Outcome of a scan of all pairs: the violators and the worst violation overall.

    ``max_violation`` bounds max over all nonzero pairs of max(lo − v'Pv, v'Pv − hi) from above,
    with the pairs near or above ``tol`` evaluated exactly and the rest bounded through the Gram
    values (those the screen settles through their block's extreme ratios, :func:`scan_block`; it
    can be negative: every constraint strictly satisfied). ``found`` counts the
    violators above ``tol``, ``fresh`` those of them outside the scan's ``exclude``; (i, j,
    violation) lists the fresh ones, or with ``keep`` only those a spread selection can take
    (:func:`selectable`), in the order of the full list.
    """

    i: np.ndarray
    j: np.ndarray
    violation: np.ndarray
    max_violation: float
    n_pairs: int
    found: int
    fresh: int


def scan_pair_violations(
    X: np.ndarray,
    P: np.ndarray,
    bounds: PairBounds,
    *,
    tol: float = 0.0,
    block_rows: int | None = None,
    factor: np.ndarray | None = None,
    exact_values: bool = True,
    distances: PairDistances | None = None,
    progress: Callable[[int], object] | None = None,
    exclude: np.ndarray | None = None,
    keep: int | None = None,
) -> ScanResult:
    """Scan all pairs i < j of the rows of X for violations of lo ≤ v_ijᵀPv_ij ≤ hi.

    Nothing of size n² or S is held (but by a ``distances`` kept across scans): rows are taken
    in blocks of ``block_rows`` against all later rows. Pairs of identical points (zero
    secants) are skipped. With ``keep``, each block reduces its violators to those a spread
    selection of at most ``keep`` of all of them can take (:func:`selectable`), so that not even
    the violators are held: a first scan of 10,000 points finds most of their 5·10⁷ pairs.

    Parameters
    ----------
    X : ndarray of shape (n, N)
    P : ndarray of shape (N, N), PSD
    bounds : callable
        ``bounds(i, j) -> (lo, hi)`` for arrays of pair indices.
    tol : float
        Report pairs whose violation exceeds ``tol``.
    block_rows : int, optional
        Rows per block (default :func:`default_block_rows`).
    factor : ndarray of shape (r, N), optional
        Ψ with ΨᵀΨ = P, if known: saves the eigendecomposition of P, and the exact
        recomputation uses ‖Ψd‖² (O(N r) a pair instead of O(N²)).
    exact_values : bool
        With False, pairs that violate by more than ``tol`` even after the rounding bound
        keep their Gram-based violation (accurate to that bound) instead of being recomputed;
        only the pairs the bound leaves in doubt are. The set of violators, and whether there
        is any, are the same; a first scan with hundreds of thousands of violators is then
        much cheaper. ``max_violation`` stays an upper bound.
    distances : PairDistances, optional
        The P-independent part of the scan for these very points (``distances.X is X``), kept
        from earlier scans; its ``block_rows`` then applies.
    progress : callable, optional
        ``progress(k)`` is called with the number of pairs of each block as it is scanned
        (e.g. a progress bar's ``update``).
    exclude : ndarray of int, optional
        Linear pair indices (:func:`~sdpembed.secants.linear_index_of_pairs`) whose violations
        are counted in ``found`` but not reported (column generation's working set).
    keep : int, optional
        Report only the violators that :func:`selectable` keeps for ``keep`` (each point's worst
        and the ``keep`` worst overall, in the order of the full list): any spread selection of
        at most ``keep`` of them (:func:`~sdpembed.solvers.numax.candidates.PairCandidates.select`)
        picks the same pairs from these as from all. None reports all.

    Returns
    -------
    ScanResult
        Violating pairs with their exact violations (recomputed from explicit differences),
        and the worst violation over all pairs.
    """
    if distances is None or distances.X is not X:
        distances = PairDistances(X, block_rows)
    X = distances.X
    scan = scan_round(X, P, factor, tol, exact_values, exclude, keep)
    parts = []
    for start in distances.starts():
        block = distances.block(start)
        if progress is not None:
            progress(block.pairs)
        parts.append([scan_block(X, scan, bounds, block)])
    return merge_block_scans(parts, keep)


@dataclass
class ScanRound:
    """What every block of one scan shares: P (None when its factor is given), the factor Ψ,
    Y = XΨᵀ with its squared row norms ``ny`` and ``ey``, bounds on the rounding of its rows
    (:func:`_image_rounding`), the squared row norms ``nx`` of X, the scan's ``tol`` and
    ``exact_values``, its ``exclude`` (sorted linear pair indices, or None) and ``keep`` (see
    :func:`scan_pair_violations`)."""

    P: np.ndarray | None
    Psi: np.ndarray
    Y: np.ndarray
    ny: np.ndarray
    ey: np.ndarray
    nx: np.ndarray
    tol: float
    exact_values: bool
    exclude: np.ndarray | None = None
    keep: int | None = None


def scan_round(X: np.ndarray, P: np.ndarray | None, factor: np.ndarray | None, tol: float,
               exact_values: bool, exclude: np.ndarray | None = None, keep: int | None = None) -> ScanRound:
    """The :class:`ScanRound` of a scan of the points X for P (or its factor Ψ, ΨᵀΨ = P)."""
    Psi = psd_factor(P) if factor is None else as_matrix(factor, "factor", n_cols=X.shape[1], min_rows=0)
    Y = X @ Psi.T
    if exclude is not None:
        exclude = np.unique(np.asarray(exclude, dtype=np.int64))
    if keep is not None and (isinstance(keep, bool) or int(keep) != keep or keep < 1):
        raise ValueError(f"keep must be None or an integer >= 1, got {keep!r}")
    nx = np.einsum("ij,ij->i", X, X)
    return ScanRound(P if factor is None else None, Psi, Y, np.einsum("ij,ij->i", Y, Y), _image_rounding(nx, Psi), nx,
                     tol, exact_values, exclude, None if keep is None else int(keep))


@dataclass
class BlockScan:
    """The violators of one block of pairs: ``clear`` (i, j, violation) kept at their Gram-based
    values (``exact_values=False``), ``exact`` those recomputed from explicit differences (both
    without the scan's ``exclude``, and reduced by its ``keep``), the worst violation of the block,
    the number of pairs it counted (nonzero secants), and its violators ``found`` and ``fresh``
    (outside ``exclude``) before the reduction."""

    clear: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    exact: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    worst: float
    counted: int
    found: int
    fresh: int


def is_member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Which ``values`` lie in ``sorted_set`` (increasing): one binary search each."""
    if sorted_set.size == 0:
        return np.zeros(values.shape, bool)
    at = np.minimum(np.searchsorted(sorted_set, values), sorted_set.size - 1)
    return sorted_set[at] == values


def worst_ranks(i: np.ndarray, j: np.ndarray, violation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, best) of violating pairs (i, j): ``order`` sorts them by decreasing violation, ties
    to the earlier, and ``best[p]`` is the rank in that order of point p's worst pair (``order.size``
    for a point in none)."""
    order = np.argsort(-violation, kind="stable")
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    best = np.full(int(max(i.max(), j.max())) + 1 if i.size else 0, order.size, np.int64)
    np.minimum.at(best, i, rank)
    np.minimum.at(best, j, rank)
    return order, best


def selectable(i: np.ndarray, j: np.ndarray, violation: np.ndarray, keep: int) -> np.ndarray:
    """Increasing positions of the violators (i, j, violation) a spread selection of at most ``keep``
    can take: every point's worst pair and the ``keep`` worst pairs overall (ties to the earlier).

    The selection (:func:`~sdpembed.solvers.numax.candidates.PairCandidates.select`) takes points'
    worst pairs, then the worst overall up to ``keep``, ranking by violation with ties to the earlier:
    from any sublist holding these, in the same order, it takes the same pairs. A sublist of a sublist
    holding them holds them too, so blocks of a scan reduce their own violators and the scan reduces
    their concatenation again.
    """
    n = violation.size
    if n <= keep:
        return np.arange(n)
    # no sort of the violators (a block of a first scan holds millions): the ``keep`` worst are those
    # above the keep-th largest value and the earliest of those equal to it
    chosen = np.zeros(n, bool)
    threshold = np.partition(violation, n - keep)[n - keep]
    above = violation > threshold
    chosen |= above
    chosen[np.flatnonzero(violation == threshold)[: keep - int(np.count_nonzero(above))]] = True
    # each point's worst pair: its largest violation, at the earliest position among equal ones
    worst = np.full(int(max(i.max(), j.max())) + 1, -np.inf)
    np.maximum.at(worst, i, violation)
    np.maximum.at(worst, j, violation)
    first = np.full(worst.size, n)
    positions = np.arange(n)
    for ends in (i, j):
        at = violation == worst[ends]
        np.minimum.at(first, ends[at], positions[at])
    chosen[first[first < n]] = True
    return np.flatnonzero(chosen)


def _reported(n: int, scan: ScanRound, clear: tuple | None, exact: tuple | None, worst: float,
              counted: int) -> BlockScan:
    """The :class:`BlockScan` of a block's violators ``clear`` and ``exact``: without the scan's
    ``exclude``, reduced to its ``keep`` (:func:`selectable` of the clear ones, then the exact ones)."""
    parts = [clear, exact]
    found = sum(part[0].size for part in parts if part is not None)
    if scan.exclude is not None and scan.exclude.size:
        for k, part in enumerate(parts):
            if part is not None:
                out = ~is_member(linear_index_of_pairs(part[0], part[1], n), scan.exclude)
                parts[k] = tuple(a[out] for a in part) if out.any() else None
    fresh = sum(part[0].size for part in parts if part is not None)
    if scan.keep is not None and fresh > scan.keep:
        i, j, violation = (np.concatenate([part[k] for part in parts if part is not None]) for k in range(3))
        kept = selectable(i, j, violation, scan.keep)
        n_clear = 0 if parts[0] is None else parts[0][0].size
        split = int(np.searchsorted(kept, n_clear))
        parts = [tuple(a[pos] for a in (i, j, violation)) if pos.size else None
                 for pos in (kept[:split], kept[split:])]
    return BlockScan(parts[0], parts[1], worst, counted, found, fresh)


def scan_block(X: np.ndarray, scan: ScanRound, bounds: PairBounds, block: DistanceBlock) -> BlockScan:
    """Scan the pairs of one :class:`DistanceBlock` of X (see :func:`scan_pair_violations`).

    A screen first, over the block's rectangle: the ratios ‖y_i − y_j‖² / ‖x_i − x_j‖² of its pairs
    from Gram matrices, and one bound U on the rounding of every one of them that is not close (from
    the block's largest rounding bounds, its least squared distance and its largest ratio). A pair
    whose ratio lies in [lo′ − tol + U, hi′ + tol − U], where lo′ and hi′ are the largest lower and the
    smallest upper bound of the block's pairs (:meth:`DistanceBlock.box`), violates by at most ``tol``
    even after its own rounding bound: it is neither reported nor recomputed, and the block's worst
    violation counts it through the extreme ratios. Only the other pairs (the violators and those
    near a bound, and the close ones) get their indices, bounds and rounding bounds, and are judged
    as before: by their Gram values where those are clearly on one side of ``tol``, otherwise from
    their explicit differences. The violators and their values are those of judging every pair so.
    """
    start, stop = block.start, block.stop
    rows, cols = np.arange(start, stop), np.arange(start + 1, X.shape[0])
    Y, ny, tol = scan.Y, scan.ny, scan.tol
    eps = np.finfo(float).eps
    dY = ny[rows, None] + ny[None, cols] - 2.0 * (Y[rows] @ Y[cols].T)
    flat_dY = dY.reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        screen = (dY / block.dX).reshape(-1)                  # NaN where no pair, or a close one
    worst = -np.inf
    screened_bound = None               # the screen's rounding bound of every pair that is not close
    if block.screened:
        lo_box, hi_box = block.box(bounds)
        rmin, rmax = float(np.fmin.reduce(screen)), float(np.fmax.reduce(screen))
        reach = max(abs(rmin), abs(rmax))
        # the rounding bound of any screened pair's ratio (errY ≤ errY_max, errX ≤ err, dX ≥ dmin),
        # doubled, with the rounding of the comparisons themselves (32u on every magnitude compared: a
        # worst-case bound for the few flops of the ratio, the box and the comparison)
        err_y = (float(gram_distance_error(float(ny[rows].max()), float(ny[cols].max()), Y.shape[1]))
                 + _image_error(float(np.sqrt(ny[rows].max()) + np.sqrt(ny[cols].max())),
                                float(scan.ey[rows].max() + scan.ey[cols].max()), Y.shape[1]))
        margin = (2.0 * (err_y + reach * block.err) / (block.dmin - block.err) if block.dmin > block.err else np.inf)
        margin += 16.0 * eps * (reach + sum(abs(v) for v in (lo_box, hi_box, tol) if np.isfinite(v)))
        # with squared image norms below a quarter of the largest double no squared distance overflows: NaN
        # ratios are then the rectangle's non-pairs and close pairs only
        if np.isfinite(margin) and np.isfinite(reach) and float(ny.max()) <= 0.25 * np.finfo(float).max:
            screened_bound = margin
            low, high = lo_box - tol + margin, hi_box + tol - margin
            with np.errstate(invalid="ignore"):
                look = np.flatnonzero((screen < low) | (screen > high))
            if look.size < block.screened:
                worst = min(max(lo_box - rmin, rmax - hi_box) + margin, tol)
        else:
            look = np.flatnonzero(~np.isnan(block.dX.reshape(-1)))
    else:
        look = np.empty(0, np.int64)
    # the close pairs (NaN in the rectangle) in their place: the pairs looked at, in row-major order
    at = np.searchsorted(look, block.close)
    look_dX = np.insert(block.dX.reshape(-1)[look], at, block.close_dX)
    look = np.insert(look, at, block.close)
    i, j = rows[look // cols.size], cols[look % cols.size]
    dY, dX = flat_dY[look], look_dX
    bulk = None
    if screened_bound is not None and not scan.exact_values and block.uniform(bounds):
        bulk = _clear_in_bulk(X, scan, i, j, dY, dX, lo_box, hi_box, screened_bound, at + np.arange(at.size))
    if bulk is None:
        clear, exact_part, judged_worst = _judged(X, scan, bounds, i, j, dY, dX)
        clear_part = None if clear is None else (i[clear[0]], j[clear[0]], clear[1])
        return _reported(X.shape[0], scan, clear_part, exact_part, max(worst, judged_worst), block.counted)
    # the other pairs judged one by one, their clear violators merged with the bulk's in row-major order
    clear, estimate, bulk_worst = bulk
    rest = np.flatnonzero(~clear)
    judged, exact_part, judged_worst = _judged(X, scan, bounds, i[rest], j[rest], dY[rest], dX[rest], rest)
    if judged is not None:
        clear[judged[0]] = True
        estimate[judged[0]] = judged[1]
    clear_part = (i[clear], j[clear], estimate[clear])
    return _reported(X.shape[0], scan, clear_part, exact_part, max(worst, judged_worst, bulk_worst), block.counted)


def _uncertainty(X: np.ndarray, scan: ScanRound, i: np.ndarray, j: np.ndarray, dY: np.ndarray, dX: np.ndarray,
                 lo: np.ndarray | float, hi: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ratio, the bound errX on the rounding of dX, and that on the violation of the ratio) of the pairs
    (i, j) whose squared distances in Y and X the Gram matrices gave as dY and dX (:func:`scan_block`)."""
    Y, ny = scan.Y, scan.ny
    errX = _rounding_bound(X, scan.nx, i, j)
    errY = (gram_distance_error(ny[i], ny[j], Y.shape[1])
            + _image_error(np.sqrt(ny[i]) + np.sqrt(ny[j]), scan.ey[i] + scan.ey[j], Y.shape[1]))
    with np.errstate(divide="ignore", invalid="ignore"):  # zero or tiny dX: suspect anyway
        ratio = dY / dX
        # |d̂Y/d̂X − dY/dX| ≤ (errY + |d̂Y/d̂X|·errX)/(d̂X − errX), with the roundings of the bound, the ratio,
        # the estimate and their comparison with tol
        return ratio, errX, violation_uncertainty(ratio, errY, dX, errX, lo, hi, scan.tol)


def _clear_in_bulk(X: np.ndarray, scan: ScanRound, i: np.ndarray, j: np.ndarray, dY: np.ndarray, dX: np.ndarray,
                   lo: float, hi: float, bound: float, close: np.ndarray) -> tuple | None:
    """The pairs looked at (i, j) that violate the block's common bounds (lo, hi) by more than ``tol`` even
    after ``bound``, the screen's rounding bound of every pair that is not ``close`` (positions): (their
    mask, the Gram-based violation of every pair, the worst violation plus uncertainty among them), or
    None when there are none.

    :func:`_judged` would keep them at their Gram values (``exact_values=False``): their own
    uncertainty is at most ``bound``, so each one's violation less it exceeds ``tol``. A first scan finds
    most pairs so violated; this spares them the pair-by-pair rounding bounds, but for the few whose
    violation is within ``bound`` of the largest, which give the same worst violation."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = dY / dX
        estimate = np.maximum(lo - ratio, ratio - hi)
        in_bulk = estimate - bound > scan.tol
    in_bulk[close] = False
    if not in_bulk.any():
        return None
    top = float(np.max(estimate[in_bulk]))
    near = np.flatnonzero(in_bulk & (estimate >= top - 2.0 * bound))        # only these can be the worst
    _, _, uncertainty = _uncertainty(X, scan, i[near], j[near], dY[near], dX[near], lo, hi)
    return in_bulk, estimate, float(np.max(estimate[near] + uncertainty))


def _judged(X: np.ndarray, scan: ScanRound, bounds: PairBounds, i: np.ndarray, j: np.ndarray, dY: np.ndarray,
            dX: np.ndarray, where: np.ndarray | None = None) -> tuple[tuple | None, tuple | None, float]:
    """(clear, exact, worst) of the pairs (i, j) looked at by :func:`scan_block`, each judged by its own
    rounding bounds: its Gram values where those are clearly on one side of ``tol``, otherwise its
    explicit difference. ``clear`` lists the violators kept at their Gram values (``exact_values=False``)
    as (positions, violations), positions into these pairs or, given, into ``where``; ``exact`` those
    recomputed as (i, j, violation)."""
    tol = scan.tol
    lo, hi = bounds(i, j)
    worst = -np.inf
    clear_part = exact_part = None
    ratio, errX, uncertainty = _uncertainty(X, scan, i, j, dY, dX, lo, hi)
    with np.errstate(invalid="ignore"):
        estimate = np.maximum(lo - ratio, ratio - hi)
        suspect = ~(dX > errX) | ~(estimate + uncertainty <= tol)        # NaN: suspect
    sure = ~suspect
    if np.any(sure):
        worst = max(worst, float(np.max(estimate[sure] + uncertainty[sure])))
    if not scan.exact_values:
        with np.errstate(invalid="ignore"):
            clear = suspect & (dX > errX) & (estimate - uncertainty > tol)
        if np.any(clear):
            positions = np.flatnonzero(clear)
            clear_part = (positions if where is None else where[positions], estimate[clear])
            worst = max(worst, float(np.max(estimate[clear] + uncertainty[clear])))
            suspect &= ~clear
    if np.any(suspect):
        i, j, lo, hi = i[suspect], j[suspect], lo[suspect], hi[suspect]
        nonzero = np.any(X[i] != X[j], axis=1)
        i, j, lo, hi = i[nonzero], j[nonzero], lo[nonzero], hi[nonzero]
        if i.size:
            values = pair_values(X, scan.P, i, j) if scan.P is not None else factor_values(X, scan.Psi, i, j)
            violation = np.maximum(lo - values, values - hi)
            worst = max(worst, float(violation.max()))
            bad = violation > tol
            if np.any(bad):
                exact_part = (i[bad], j[bad], violation[bad])
    return clear_part, exact_part, worst


def merge_block_scans(groups: list[list[BlockScan]], keep: int | None = None) -> ScanResult:
    """The :class:`ScanResult` of blocks scanned in groups: the violators in the order of the
    groups, within a group its Gram-valued violators first, then its recomputed ones (the order of
    a scan whose blocks are the groups), reduced again to ``keep`` (:func:`selectable`), the worst
    violation and the counts over all."""
    found = [part for group in groups for kind in ("clear", "exact") for scan in group
             if (part := getattr(scan, kind)) is not None]
    blocks = [scan for group in groups for scan in group]
    worst = max((scan.worst for scan in blocks), default=-np.inf)
    if found:
        vi, vj, vv = (np.concatenate(parts) for parts in zip(*found, strict=True))
    else:
        vi, vj, vv = np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0)
    if keep is not None and vv.size > keep:
        kept = selectable(vi, vj, vv, keep)
        vi, vj, vv = vi[kept], vj[kept], vv[kept]
    return ScanResult(vi, vj, vv, worst, sum(scan.counted for scan in blocks),
                      sum(scan.found for scan in blocks), sum(scan.fresh for scan in blocks))


def initial_working_set(X: np.ndarray, size: int, n_neighbors: int, rng: np.random.Generator,
                        progress: Callable[[int], object] | None = None,
                        distances: PairDistances | None = None) -> np.ndarray:
    """Sorted linear pair indices: each point's nearest neighbours, then random pairs up to ``size``.

    The neighbours of a point are its ``n_neighbors`` nearest other points by squared Euclidean
    distance, ties going to the lower index. Gram-based distances screen the candidates, block by
    block of rows, and every candidate that could be among the nearest within their rounding bound
    is recomputed from its explicit difference, so the choice is exact to rounding (as the scan).
    ``progress``, when given, is called with the number of points whose neighbours each block found
    (a bar over the n points: on many points this search is the longest step before the first round).
    ``distances``, the :class:`PairDistances` of these very points whose blocks a later scan keeps,
    lends its squared distances to the screen instead of a Gram matrix of its own (the same
    neighbours: :func:`_nearest_from_distances`).
    """
    n = X.shape[0]
    total = pair_count(n)
    chosen = np.empty(0, np.int64)
    k = min(n_neighbors, n - 1)
    if k > 0:
        found = None
        if distances is not None and distances.X is X and distances.keeps_blocks:
            found = _nearest_from_distances(distances, k, progress)
        chosen = _nearest_by_rows(X, k, progress) if found is None else found
    extra = min(size, total) - chosen.size
    if extra > 0:
        rest = np.setdiff1d(rng.choice(total, size=min(total, size + chosen.size), replace=False), chosen)
        chosen = np.union1d(chosen, rest[:extra])
    return chosen


def _all_distances(block: DistanceBlock) -> np.ndarray:
    """A copy of the rectangle of ``block`` with its close pairs' squared distances in their place
    (NaN only where there is no pair)."""
    dX = block.dX.copy()
    dX.reshape(-1)[block.close] = block.close_dX
    return dX


def _first_k(point: np.ndarray, other: np.ndarray, exact: np.ndarray, k: int, n: int) -> np.ndarray:
    """Sorted linear indices of the pairs (point, other) that rank among the first ``k`` of their
    ``point`` by exact squared distance, ties to the lower ``other``: each point's k nearest of its
    candidates (which must hold every point at most as far as its k-th nearest)."""
    order = np.lexsort((other, exact, point))                           # by point, distance, then index
    point, other = point[order], other[order]
    first = np.searchsorted(point, point, side="left")                  # each candidate's rank at its point
    keep = np.arange(point.size) - first < k
    point, other = point[keep], other[keep]
    return np.unique(linear_index_of_pairs(np.minimum(point, other), np.maximum(point, other), n))


def _nearest_by_rows(X: np.ndarray, k: int, progress: Callable[[int], object] | None) -> np.ndarray:
    """Each point's k nearest (:func:`initial_working_set`) from Gram matrices of blocks of rows
    against all points, each candidate within its own rounding bound recomputed."""
    n, N = X.shape
    norms2 = np.einsum("ij,ij->i", X, X)
    block = max(1, min(n, 4_000_000 // n))
    points, others, exacts = [], [], []
    for start in range(0, n, block):
        rows = np.arange(start, min(start + block, n))
        gram = norms2[rows, None] + norms2[None, :] - 2.0 * (X[rows] @ X.T)
        err = gram_distance_error(norms2[rows, None], norms2[None, :], N)     # as PairDistances
        gram[np.arange(rows.size), rows] = np.inf                    # a point is not its own neighbour
        # the k-th smallest upper bound bounds the k-th distance: only points whose lower bound
        # lies below it can be among the k nearest
        reach = np.partition(gram + err, k - 1, axis=1)[:, k - 1]
        ri, ci = np.nonzero(gram - err <= reach[:, None])
        diff = X[rows[ri]] - X[ci]
        points.append(rows[ri])
        others.append(ci)
        exacts.append(np.einsum("ij,ij->i", diff, diff))
        if progress is not None:
            progress(rows.size)
    return _first_k(np.concatenate(points), np.concatenate(others), np.concatenate(exacts), k, n)


def _nearest_from_distances(distances: PairDistances, k: int,
                            progress: Callable[[int], object] | None) -> np.ndarray | None:
    """Each point's k nearest (:func:`initial_working_set`) read off the blocks of ``distances`` (the
    rectangles of pairs i < j a scan keeps), or None when a block holds a non-finite distance.

    A block's rounding bound ``err`` bounds the rounding of every squared distance of its rectangle,
    so the k-th smallest of the upper bounds d̂ + err over a point's pairs — gathered along the rows
    (the point as i) and the columns (as j) of all blocks — bounds its k-th distance, and every pair
    whose lower bound d̂ − err lies below it for one of its points is a candidate, recomputed from its
    explicit difference. The candidates hold every point at most as far as a point's k-th nearest, so
    the choice (:func:`_first_k`) is that of :func:`_nearest_by_rows`."""
    X = distances.X
    n = X.shape[0]
    blocks = [distances.block(start) for start in distances.starts()]
    if not all(np.isfinite(block.err) and np.isfinite(block.close_dX).all() for block in blocks):
        return None
    upper = np.full((n, k), np.inf)            # each point's k smallest upper bounds so far
    for block in blocks:
        bound = _all_distances(block)
        bound += block.err
        bound[np.isnan(bound)] = np.inf                          # no pair
        rows, cols = slice(block.start, block.stop), slice(block.start + 1, n)
        for part, candidates in ((rows, bound), (cols, bound.T)):
            if k == 1:
                np.minimum(upper[part, 0], candidates.min(axis=1), out=upper[part, 0])
            else:
                merged = np.concatenate([upper[part], candidates], axis=1)
                upper[part] = np.partition(merged, k - 1, axis=1)[:, :k]
    reach = upper[:, k - 1]
    points, others, exacts = [], [], []
    for block in blocks:
        lower = _all_distances(block) - block.err
        with np.errstate(invalid="ignore"):                      # NaN: no pair
            ri, ci = np.nonzero((lower <= reach[block.start:block.stop, None])
                                | (lower <= reach[None, block.start + 1:]))
        i, j = ri + block.start, ci + block.start + 1
        diff = X[i] - X[j]
        exact = np.einsum("ij,ij->i", diff, diff)
        points += [i, j]
        others += [j, i]
        exacts += [exact, exact]
        if progress is not None:
            progress((n if block.stop == n - 1 else block.stop) - block.start)   # the last point with the last rows
    return _first_k(np.concatenate(points), np.concatenate(others), np.concatenate(exacts), k, n)
