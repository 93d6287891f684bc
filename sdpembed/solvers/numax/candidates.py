"""The constraints column generation chooses its working sets from: all pairs of a point set, or an
explicit list of secants.

Column generation (NuMax Algorithm 2, :func:`~sdpembed.solvers.numax.column_generation.run_column_generation`)
asks the same five things of either kind of instance, and a :class:`Candidates` answers them:

* the first working set (:meth:`Candidates.initial`);
* the restricted problem on a working set — its secant operator 𝒜 and bounds (:meth:`Candidates.restricted`);
* a scan of **all** candidates for violations of lo ≤ vᵀPv ≤ hi, exact to rounding, which is what
  makes the final round a proof (:meth:`Candidates.scan`); it leaves out the working set and, given
  the most a round adds, reports only the violators the selection can take;
* which violators enter the next working set (:meth:`Candidates.select`);
* the work of a scan, for the ADMM's outside monitor (:meth:`Candidates.work`).

:class:`PairCandidates` are the n(n−1)/2 pairs of a point set, never materialised (the scan of
:mod:`~sdpembed.solvers.numax.pair_scan`, on a :mod:`~sdpembed.solvers.numax.scan_backend`), and
:class:`SecantCandidates` an explicit list of S unit secants (NuMax (4) or NuMax-Class (7) as an
instance file lists them). The secant list is scanned through a factor Ψ of P (ΨᵀΨ ≈ P, from one
N × N eigendecomposition): vᵀPv = ‖Ψv‖², in blocks of rows, O(S·N·k) for a factor of k rows — P is
low rank at the optimum, so the scan costs a fraction of forming 𝒜(P) (O(S·N²)). The eigenvalues
the factor drops, the eigen-solver's backward error and the rounding of ‖Ψv‖² are added to every
violation as one margin, so a scan that finds no violation above ``tol`` proves that none of the S
constraints is violated by more than ``tol``.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the scan of Algorithm 2, over the secants (1) of all pairs of
   a point set or over a listed secant set of (4) and (7).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..._progress import progress_bar
from ..._validate import as_matrix, check_positive_int
from ...problems.numax_certificate import check_bounds
from ...problems.numax_operator import PairSecantOperator, SecantOperator
from ...secants import linear_index_of_pairs, pair_count, pairs_from_linear_index
from .pair_scan import PairBounds, PairDistances, initial_working_set, is_member, worst_ranks
from .scan_backend import LocalScan, ScanBackend

__all__ = ["Candidates", "PairCandidates", "SecantCandidates", "Violators", "factor_with_margin"]

#: Secant rows per block of a :class:`SecantCandidates` scan (an (S_b, k) product at a time).
SECANT_BLOCK = 65536


@dataclass
class Violators:
    """Outcome of a scan of all candidates: the violators above the scan's ``tol`` outside its
    ``exclude`` (``index`` into the candidates, with their ``violation``; with ``keep``, only those a
    selection of ``keep`` can take, in the order of the full list), ``worst``, an upper bound on the
    largest violation max(lo − vᵀPv, vᵀPv − hi) over all candidates (negative when every constraint
    holds strictly), the number of violators ``found`` above ``tol`` and of ``fresh`` ones (outside
    ``exclude``), before any reduction."""

    index: np.ndarray
    violation: np.ndarray
    worst: float
    found: int
    fresh: int


class Candidates(Protocol):
    """The constraints column generation chooses from (module docstring). ``total`` counts them,
    ``unit`` names them in progress lines (``pairs``, ``secants``) and ``n_points`` is the number of
    points of a point set (None for a secant list)."""

    total: int
    unit: str
    n_points: int | None

    def describe(self) -> str:
        """One line saying what the candidates are (for ``verbose``)."""
        ...

    def initial(self, size: int, neighbors: int, rng: np.random.Generator, verbose: bool) -> np.ndarray:
        """The first working set: sorted candidate indices, about ``size`` of them."""
        ...

    def checked(self, working: np.ndarray, warm: bool) -> np.ndarray:
        """A given working set validated (ValueError), without candidates the problem cannot use;
        ``warm``: a warm start matches it, so nothing may be dropped."""
        ...

    def restricted(self, working: np.ndarray) -> tuple[SecantOperator, np.ndarray, np.ndarray]:
        """The operator 𝒜 and bounds (lo, hi) of the restricted problem on ``working``."""
        ...

    def scan(self, P: np.ndarray | None, factor: np.ndarray | None, tol: float, exact_values: bool,
             progress: Callable[[int], object] | None = None, exclude: np.ndarray | None = None,
             keep: int | None = None) -> Violators:
        """The violators of all candidates for P (or its factor Ψ, ΨᵀΨ = P) above ``tol``, without the
        candidates ``exclude``; with ``keep``, only those :meth:`select` with ``max_add = keep`` can take."""
        ...

    def select(self, index: np.ndarray, violation: np.ndarray, max_add: int,
               total: int | None = None) -> np.ndarray:
        """At most ``max_add`` of the violators ``index`` (with ``violation``) for the next working set;
        ``total`` counts the violators they were reduced from (a scan's ``fresh``; default: these)."""
        ...

    def work(self, k: int) -> float:
        """The floating-point operations of one scan for a factor of ``k`` rows."""
        ...


def _spread_violators(i: np.ndarray, j: np.ndarray, violation: np.ndarray, index: np.ndarray,
                      max_add: int, total: int | None = None) -> np.ndarray:
    """At most ``max_add`` violating pairs: first the worst pair of every point, then the worst overall.

    The worst pairs overall tend to share a few points (one image distorted against all its
    near neighbours); taking each point's worst pair first spreads the new constraints over
    the data, which cuts the number of rounds. Ties go to the earlier violator. All violators are
    taken when there are at most ``max_add`` of them (``total``, when these were reduced by a scan's
    ``keep``, :func:`~sdpembed.solvers.numax.pair_scan.selectable`, from that many).
    """
    if (index.size if total is None else total) <= max_add:
        return index
    order, best = worst_ranks(i, j, violation)                              # each point's worst pair, by rank
    first = np.unique(best[best < order.size])[:max_add]                   # in order of violation
    taken = np.zeros(order.size, bool)
    taken[first] = True
    rest = np.flatnonzero(~taken)[: max_add - first.size]
    return index[order[np.concatenate([first, rest])]]


class PairCandidates:
    """All pairs i < j of the points ``X`` (linear pair indices, :mod:`sdpembed.secants`), bounded by
    ``bounds(i, j)``; scanned on ``backend`` in blocks of ``block_rows`` rows, the part of the scan that
    does not depend on P kept across scans (:class:`~sdpembed.solvers.numax.pair_scan.PairDistances`)."""

    unit = "pairs"

    def __init__(self, X: np.ndarray, bounds: PairBounds, backend: ScanBackend, block_rows: int | None = None) -> None:
        self.distances = PairDistances(X, block_rows)
        self.X, self.bounds, self.backend = self.distances.X, bounds, backend
        self.n_points = self.X.shape[0]
        self.total = pair_count(self.n_points)

    def describe(self) -> str:
        return f"{self.n_points} points in dimension {self.X.shape[1]}, {self.total} pairs"

    def initial(self, size: int, neighbors: int, rng: np.random.Generator, verbose: bool) -> np.ndarray:
        """Each point's ``neighbors`` nearest neighbours, then random pairs up to ``size``
        (:func:`~sdpembed.solvers.numax.pair_scan.initial_working_set`); on many points a random
        2·``size`` of them, so that the first restricted solve (its dense S₀ × S₀ factorisation) costs the
        same at any n (the scans add the rest). Pairs of identical points are left out."""
        X = self.X
        with progress_bar(X.shape[0], "nearest neighbours", enabled=None if verbose else False, unit="points") as bar:
            # in this process the scans keep the pairs' distances: the neighbour search reads them first
            local = isinstance(self.backend, LocalScan)
            working = initial_working_set(X, size, neighbors, rng, progress=bar.update,
                                          distances=self.distances if local else None)
        if working.size > 2 * size:
            working = np.sort(rng.choice(working, size=2 * size, replace=False))
        return self.checked(working, warm=False)

    def checked(self, working: np.ndarray, warm: bool) -> np.ndarray:
        """Pair indices in range, without pairs of identical points (zero secants); when only such
        pairs were given, one pair of distinct points."""
        working = np.asarray(working, dtype=np.int64)
        if working.ndim != 1 or working.size == 0 or working.min() < 0 or working.max() >= self.total:
            raise ValueError(f"working_set must be a non-empty 1-D array of pair indices in [0, {self.total})")
        i, j = pairs_from_linear_index(working, self.n_points)
        nonzero = np.any(self.X[i] != self.X[j], axis=1)
        if warm and not nonzero.all():
            raise ValueError("working_set must not contain pairs of identical points when warm_start is given")
        working = working[nonzero]
        if working.size == 0:
            # the sample held only pairs of coincident points: start from one pair of distinct ones
            distinct = np.flatnonzero(np.any(self.X != self.X[0], axis=1))
            if distinct.size == 0:
                raise ValueError("X must contain at least two distinct points (all its secants are zero)")
            working = linear_index_of_pairs(np.array([0]), distinct[:1], self.n_points)
        return working

    def restricted(self, working: np.ndarray) -> tuple[SecantOperator, np.ndarray, np.ndarray]:
        """The :class:`~sdpembed.problems.numax_operator.PairSecantOperator` of the working pairs."""
        i, j = pairs_from_linear_index(working, self.n_points)
        return (PairSecantOperator(self.X, i, j), *self.bounds(i, j))

    def scan(self, P: np.ndarray | None, factor: np.ndarray | None, tol: float, exact_values: bool,
             progress: Callable[[int], object] | None = None, exclude: np.ndarray | None = None,
             keep: int | None = None) -> Violators:
        """The scan of all pairs on the backend (:func:`~sdpembed.solvers.numax.pair_scan.scan_pair_violations`),
        each block reduced to the violators :meth:`select` can take."""
        scan = self.backend.scan(self.X, P, self.bounds, tol=tol, factor=factor, exact_values=exact_values,
                                 distances=self.distances, progress=progress, exclude=exclude, keep=keep)
        return Violators(linear_index_of_pairs(scan.i, scan.j, self.n_points), scan.violation, scan.max_violation,
                         scan.found, scan.fresh)

    def select(self, index: np.ndarray, violation: np.ndarray, max_add: int,
               total: int | None = None) -> np.ndarray:
        """Each point's worst violating pair first, then the worst overall (:func:`_spread_violators`)."""
        i, j = pairs_from_linear_index(index, self.n_points)
        return _spread_violators(i, j, violation, index, max_add, total)

    def work(self, k: int) -> float:
        """Y = XΨᵀ (2nNk), the Gram matrix of Y (n²k over its half) and a few operations per pair."""
        n, N = self.X.shape
        return 2.0 * n * N * k + n * n * (k + 5.0)


def factor_with_margin(P: np.ndarray) -> tuple[np.ndarray, float]:
    """Ψ (k, N) with ΨᵀΨ = P up to ``margin``: |vᵀPv − ‖Ψv‖²| ≤ margin·‖v‖² for every v.

    Ψ keeps the eigenpairs of P above 16·N·ε·‖P‖₂ (the eigen-solver's resolution); the margin is the
    largest dropped eigenvalue in magnitude (negative ones included), plus the eigen-solver's
    backward error 16·N·ε·‖P‖₂ and a bound on the rounding of ‖Ψv‖² for a unit v,
    4·(N + 2)·ε·tr ΨᵀΨ.
    """
    P = np.asarray(P, dtype=np.float64)
    N = P.shape[0]
    if N == 0:
        return np.zeros((0, 0)), 0.0
    w, U = np.linalg.eigh(0.5 * (P + P.T))
    eps = np.finfo(float).eps
    scale = float(np.max(np.abs(w)))
    resolution = 16.0 * N * eps * scale
    keep = w > resolution
    dropped = float(np.max(np.abs(w[~keep]), initial=0.0))
    margin = dropped + resolution + 4.0 * (N + 2) * eps * float(w[keep].sum())
    return np.sqrt(w[keep])[:, None] * U[:, keep].T, margin


class SecantCandidates:
    """An explicit list of unit secants ``V`` (S, N) with their bounds (lo, hi) of (4) or (7):
    candidates are row indices, the restricted problem is 𝒜 of the working rows, and a scan reads
    ‖Ψv_i‖² block by block of ``block_size`` rows (module docstring).

    Parameters
    ----------
    secants : ndarray of shape (S, N)
        Unit rows (an instance's ``secant_matrix``; not copied when already float64 and C-ordered).
    lo, hi : ndarray of shape (S,)
        Bounds of (*) (:mod:`sdpembed.problems.numax_certificate`); ``±inf`` marks an absent bound.
    block_size : int
        Rows per block of a scan.
    """

    unit = "secants"
    n_points = None

    def __init__(self, secants: np.ndarray, lo: np.ndarray, hi: np.ndarray, block_size: int = SECANT_BLOCK) -> None:
        self.V = np.ascontiguousarray(as_matrix(secants, "secants"))
        self.total = self.V.shape[0]
        self.lo, self.hi = check_bounds(lo, hi, self.total)
        self.block_size = check_positive_int(block_size, "block_size")

    def describe(self) -> str:
        return f"{self.total} secants in dimension {self.V.shape[1]}"

    def initial(self, size: int, neighbors: int, rng: np.random.Generator, verbose: bool) -> np.ndarray:
        """A uniform random sample of ``size`` secants (all of them when there are at most 2·``size``);
        a secant list has no points, so ``neighbors`` is not used."""
        if self.total <= 2 * size:
            return np.arange(self.total, dtype=np.int64)
        return np.sort(rng.choice(self.total, size=size, replace=False)).astype(np.int64)

    def checked(self, working: np.ndarray, warm: bool) -> np.ndarray:
        """Distinct row indices in range."""
        working = np.asarray(working, dtype=np.int64)
        if working.ndim != 1 or working.size == 0 or working.min() < 0 or working.max() >= self.total:
            raise ValueError(f"working_set must be a non-empty 1-D array of secant indices in [0, {self.total})")
        if np.unique(working).size != working.size:
            raise ValueError("working_set must not repeat a secant")
        return working

    def restricted(self, working: np.ndarray) -> tuple[SecantOperator, np.ndarray, np.ndarray]:
        """𝒜 of the working rows and their bounds."""
        return SecantOperator(self.V[working]), self.lo[working], self.hi[working]

    def scan(self, P: np.ndarray | None, factor: np.ndarray | None, tol: float, exact_values: bool = True,
             progress: Callable[[int], object] | None = None, exclude: np.ndarray | None = None,
             keep: int | None = None) -> Violators:
        """Every secant's violation of its bounds, through a factor of P (:func:`factor_with_margin`;
        a given ``factor`` Ψ is taken as exact, ΨᵀΨ = P), reported with the factor's margin added: an
        upper bound on the violation of P. Values are always computed from the rows, so
        ``exact_values`` changes nothing. Secants ``exclude`` are counted, not reported; ``keep``
        reports the ``keep`` worst (ties to the earlier), in their order."""
        if factor is None:
            Psi, margin = factor_with_margin(P)
        else:
            Psi = as_matrix(factor, "factor", n_cols=self.V.shape[1], min_rows=0)
            margin = 4.0 * (self.V.shape[1] + 2) * np.finfo(float).eps * float(np.einsum("ij,ij->", Psi, Psi))
        found_index, found_violation = [], []
        worst, found = -np.inf, 0
        exclude = None if exclude is None else np.unique(np.asarray(exclude, dtype=np.int64))
        for start in range(0, self.total, self.block_size):
            stop = min(start + self.block_size, self.total)
            B = self.V[start:stop] @ Psi.T
            values = np.einsum("ij,ij->i", B, B)
            violation = np.maximum(self.lo[start:stop] - values, values - self.hi[start:stop]) + margin
            worst = max(worst, float(violation.max()))
            bad = np.flatnonzero(violation > tol)
            found += bad.size
            if exclude is not None:
                bad = bad[~is_member(bad + start, exclude)]
            found_index.append(bad + start)
            found_violation.append(violation[bad])
            if progress is not None:
                progress(stop - start)
        index, violation = np.concatenate(found_index).astype(np.int64), np.concatenate(found_violation)
        fresh = index.size
        if keep is not None and fresh > keep:
            kept = np.sort(np.argsort(-violation, kind="stable")[:keep])
            index, violation = index[kept], violation[kept]
        return Violators(index, violation, worst, found, fresh)

    def select(self, index: np.ndarray, violation: np.ndarray, max_add: int,
               total: int | None = None) -> np.ndarray:
        """The ``max_add`` worst violators (a secant list has no points to spread them over); all of
        them when there are at most ``max_add`` (``total``: of those they were reduced from)."""
        if (index.size if total is None else total) <= max_add:
            return index
        return index[np.argsort(-violation, kind="stable")[:max_add]]

    def work(self, k: int) -> float:
        """The products V Ψᵀ (2SNk) and the squared norms of their rows."""
        S, N = self.V.shape
        return 2.0 * S * N * k + 3.0 * S * k
