"""Where the scan of all pairs runs: in this process (the default) or on a Dask cluster.

The scan of all n(n−1)/2 pairs for violated constraints lo ≤ v_ijᵀPv_ij ≤ hi
(:func:`~sdpembed.solvers.numax.pair_scan.scan_pair_violations`) is the one step of column
generation (NuMax Algorithm 2, NuMax-Class, FroMax/NILE-Pro Algorithm 4) whose cost grows with n²,
and so is ``verify``'s check of a point-form instance's constraints. A :class:`ScanBackend` runs
both:

* :class:`LocalScan` — in this process, block by block (what every solver does by default);
* :class:`DaskScan` — on a ``dask.distributed`` cluster: a local one of ``n_workers`` processes, or
  the scheduler at an address. Each worker holds a Dask actor (``_ScanWorker``) for the scan; the
  points X (with their squared norms) and the bounds are sent to it with the first scan that needs
  them, and the P-independent part of its blocks — their pairs' squared distances and rounding
  bounds (:class:`~sdpembed.solvers.numax.pair_scan.DistanceBlock`) — is computed by its first scan
  and kept there (within ``cache_pairs``). A scan is one call a worker, straight to it, not
  through the scheduler's task graph, with one argument (``_ScanCall``: one pickle, the factor's
  buffer beside it): the round's factor Ψ in (the worker computes Y = XΨᵀ and the
  norms from the points it holds), for a run of consecutive blocks of rows (the blocks of the local
  scan, ``block_rows`` rows each, about equal numbers of pairs a worker, planned once for the points)
  against all later rows; out,
  the worker's violators (the pairs above the scan's threshold, with ``keep`` only those a selection
  of ``keep`` can take, so that no call returns a list that grows like n²), its worst violation and
  counts. The calls are made and awaited on the client's event loop (the scan is handed to its
  thread once and back once), and a short call on blocks its worker keeps (:data:`LOOP_PAIRS`) runs
  on that worker's event loop, not handed to the actor's thread and back. A worker that is lost
  takes its actor with it; the scan then starts actors on the workers there are and sends them
  everything again. A cluster it starts itself runs without the dashboard's profiler and checks its
  processes' event loops twice a second (:data:`QUIET_CLUSTER`).

Identical output. A worker computes exactly what the local scan computes for its blocks: the same
functions of :mod:`~sdpembed.solvers.numax.pair_scan` on arrays of the same shapes (a BLAS
product's rounding depends on its shape, and on its thread count: Dask's workers run one BLAS
thread, so the driver's scans must too for bit-identical output), and lists their violators in the
local order, reduced as the local scan reduces them. The driver concatenates the workers' lists in
their order, so the scan's result — violators, their order and values, the worst violation — is
the local scan's, and so is every solve that uses it (tested on a two-worker ``LocalCluster``).
The blocks are the grain of the split between workers: ``block_rows`` of the solver sets how many
there are (by default :func:`~sdpembed.solvers.numax.pair_scan.default_block_rows`: about four
million entries a block and at least eight blocks; give at least a few blocks a worker, e.g.
``block_rows`` of n / (8·workers), to use them all). ``verify``'s check runs in tasks of whole
blocks of 65,536 pairs, as in this process, and its maximum does not depend on their order.

Dask is imported only when a :class:`DaskScan` first needs its cluster (DESIGN.md, "Start-up"):
install the extra ``sdpembed[distributed]``. How to run on a cluster: ``docs/guide/numax.md``,
"Scanning all pairs on a cluster (Dask)"; throughput per worker and a projection to 60,000
points: BENCHMARKS.md, "The all-pairs scan on Dask".

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the scan of the secants (1) of all pairs in Algorithm 2,
   distributed.
.. [2] Dask Development Team, "Dask: Library for dynamic task scheduling", https://dask.org, 2016.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .pair_scan import (
    BlockScan,
    DistanceBlock,
    PairBounds,
    PairDistances,
    ScanResult,
    cache_pairs_limit,
    distance_block,
    merge_block_scans,
    rectangle_entries,
    scan_block,
    scan_pair_violations,
    scan_round,
)

__all__ = ["ScanBackend", "LocalScan", "DaskScan", "resolve_scan_backend", "task_groups"]

#: Pairs of a ``verify`` block (the default ``block_size`` of the instances' ``max_violation``).
VERIFY_BLOCK = 65536

#: The most pairs of a call that runs on its worker's event loop (``_ScanWorker.scan_on_loop``), when the
#: worker holds its blocks' distances: such a call computes no n × n × N product, so it holds the loop
#: for a small fraction of a second (Dask calls a loop held for seconds unresponsive). Longer calls, and
#: those that compute distances, run in the actor's thread.
LOOP_PAIRS = 2**20

#: Dask settings of the cluster a :class:`DaskScan` starts itself (it has no dashboard). By default every
#: process of a cluster (this one, with the scheduler and the nannies, and each worker) checks its event
#: loop 50 times a second (``admin.tick``), each worker samples its threads' stacks 100 times a second
#: for the dashboard's profile, and the system and memory monitors read the processes' counters several
#: times a second: work beside every scan on the same cores. Here the loop check runs twice a second (a
#: loop held longer than ``admin.tick.limit``, 3 s, is still reported), the profiler not at all, the
#: system monitor every 2 s and the memory monitor (the nannies' limit, the workers' spilling) twice a
#: second.
QUIET_CLUSTER = {
    "distributed.admin.tick.interval": "500ms",
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "500ms",
}


@runtime_checkable
class ScanBackend(Protocol):
    """Runs the scans of all pairs: the solvers' violator scan and ``verify``'s constraint check."""

    def scan(self, X: np.ndarray, P: np.ndarray | None, bounds: PairBounds, *, tol: float = 0.0,
             block_rows: int | None = None, factor: np.ndarray | None = None, exact_values: bool = True,
             distances: PairDistances | None = None,
             progress: Callable[[int], object] | None = None,
             exclude: np.ndarray | None = None, keep: int | None = None) -> ScanResult:
        """The result of :func:`~sdpembed.solvers.numax.pair_scan.scan_pair_violations` with these arguments."""
        ...

    def max_violation(self, instance: Any, P: np.ndarray, *,
                      progress: Callable[[int], object] | None = None) -> float:
        """``instance.max_violation(P)`` of a point-form instance: the worst violation over all pairs."""
        ...

    def check_violation(self, instance: Any, P: np.ndarray, tol: float, *,
                        progress: Callable[[int], object] | None = None) -> Any:
        """``instance.check_violation(P, tol)`` of a point-form instance: the worst violation over all
        pairs with a proved verdict against ``tol`` (a :class:`~sdpembed.problems.numax.ViolationCheck`)."""
        ...


class LocalScan:
    """The scan in this process, block by block (the default backend; a context manager, like
    :class:`DaskScan`, that holds nothing)."""

    def close(self) -> None:
        """Nothing to release."""

    def __enter__(self) -> LocalScan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def scan(self, X: np.ndarray, P: np.ndarray | None, bounds: PairBounds, *, tol: float = 0.0,
             block_rows: int | None = None, factor: np.ndarray | None = None, exact_values: bool = True,
             distances: PairDistances | None = None,
             progress: Callable[[int], object] | None = None,
             exclude: np.ndarray | None = None, keep: int | None = None) -> ScanResult:
        """:func:`~sdpembed.solvers.numax.pair_scan.scan_pair_violations` (see there)."""
        return scan_pair_violations(X, P, bounds, tol=tol, block_rows=block_rows, factor=factor,
                                    exact_values=exact_values, distances=distances, progress=progress,
                                    exclude=exclude, keep=keep)

    def max_violation(self, instance: Any, P: np.ndarray, *,
                      progress: Callable[[int], object] | None = None) -> float:
        """``instance.max_violation(P, progress=progress)``."""
        return instance.max_violation(P, progress=progress)

    def check_violation(self, instance: Any, P: np.ndarray, tol: float, *,
                        progress: Callable[[int], object] | None = None) -> Any:
        """``instance.check_violation(P, tol, progress=progress)``."""
        return instance.check_violation(P, tol, progress=progress)


def resolve_scan_backend(backend: object) -> ScanBackend:
    """The backend of a solver's ``scan_backend`` argument: None or ``"local"`` is :class:`LocalScan`;
    a :class:`ScanBackend` (e.g. a :class:`DaskScan`) is itself."""
    if backend is None or (isinstance(backend, str) and backend == "local"):
        return LocalScan()
    if isinstance(backend, ScanBackend):
        return backend
    raise ValueError(f"scan_backend must be None, 'local' or a ScanBackend (e.g. a DaskScan), got {backend!r}")


# ------------------------------------------------------------------ on the workers
@dataclass(eq=False)
class _ScanCall:
    """One worker's share of a scan, sent to its :class:`_ScanWorker` as the call's one argument.

    Dask serializes a call's arguments one by one, and each item of a tuple or list argument on its
    own (a header, a pickle and its frames each): the round's arguments and the row ranges of a
    worker's blocks would be dozens of them. As one object they are one pickle, the factor's buffer
    beside it, not copied into it.

    ``round_args`` are the arguments of the round's
    :func:`~sdpembed.solvers.numax.pair_scan.scan_round` after X, ``ranges`` the rows
    (start, stop) of the worker's blocks, ``cache`` whether it keeps the distances it computes;
    ``points`` (X, its squared row norms) and ``bounds`` come where the worker does not hold them.
    """

    round_args: tuple
    ranges: list[tuple[int, int]]
    cache: bool
    points: tuple[np.ndarray, np.ndarray] | None = None
    bounds: PairBounds | None = None


class _ScanWorker:
    """What one worker holds for a :class:`DaskScan` (a Dask actor): the points X with their squared
    norms, the bounds, and the :class:`~sdpembed.solvers.numax.pair_scan.DistanceBlock` of its blocks,
    kept across scans. A scan is one call, a :class:`_ScanCall` in, the merged
    :class:`~sdpembed.solvers.numax.pair_scan.BlockScan` of its blocks out; the points and the bounds
    come with the first scan that needs them."""

    def __init__(self) -> None:
        self._points: tuple[np.ndarray, np.ndarray] | None = None
        self._bounds: PairBounds | None = None
        self._blocks: dict[tuple[int, int], DistanceBlock] = {}

    def scan(self, call: _ScanCall) -> BlockScan:
        """:func:`~sdpembed.solvers.numax.pair_scan.scan_block` of the blocks of rows ``call.ranges``,
        merged in their order (:func:`~sdpembed.solvers.numax.pair_scan.merge_block_scans`, reduced to
        the scan's ``keep``) into one :class:`~sdpembed.solvers.numax.pair_scan.BlockScan`, for the
        round ``scan_round(X, *call.round_args)``; new ``call.points`` (X, norms2) drop the kept
        blocks, ``call.cache`` keeps the blocks computed now."""
        if call.points is not None:
            self._points, self._blocks = call.points, {}
        if call.bounds is not None:
            self._bounds = call.bounds
        X, norms2 = self._points
        # the round from the points held here, so that only its factor travels, not Y = XΨᵀ and the
        # norms: the same function of the same arrays as in the local scan, the same round to the last bit
        scan = scan_round(X, *call.round_args)
        out = []
        for start, stop in call.ranges:
            block = self._blocks.get((start, stop))
            if block is None:
                block = distance_block(X, norms2, start, stop)
                if call.cache:
                    self._blocks[start, stop] = block
            out.append([scan_block(X, scan, self._bounds, block)])
        # one list of violators, in the order the driver's merge of these blocks gives them: a
        # reduction to ``keep`` of a sublist holding what the selection can take holds it too
        merged = merge_block_scans(out, scan.keep)
        return BlockScan(None if merged.i.size == 0 else (merged.i, merged.j, merged.violation), None,
                         merged.max_violation, merged.n_pairs, merged.found, merged.fresh)

    async def scan_on_loop(self, call: _ScanCall) -> BlockScan:
        """:meth:`scan` on the worker's event loop (Dask runs an actor's coroutine methods there), not
        handed to the actor's thread and back: for short calls only (:data:`LOOP_PAIRS`), since the
        worker answers nothing else, its heartbeats included, until the call returns."""
        return self.scan(call)

    async def kept_blocks(self) -> int:
        """The number of blocks whose distances this worker keeps (answered on the worker's event loop,
        as a short scan is)."""
        return len(self._blocks)


def task_groups(sizes: list[int], tasks: int) -> list[slice]:
    """Consecutive runs of blocks (as slices of their list), at most ``tasks`` of them, of about equal
    numbers of pairs (``sizes`` the pairs of each block): the shares of a scan's workers. A block is
    never split, so a worker computes what the local scan computes for its blocks."""
    total = sum(sizes)
    if not sizes or total == 0:
        return [slice(0, len(sizes))] if sizes else []
    before = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    # the group of a block: the share of all pairs before it, in units of total / tasks
    group = np.minimum((before * max(tasks, 1)) // total, max(tasks, 1) - 1)
    cuts = np.flatnonzero(np.diff(group)) + 1
    edges = [0, *cuts.tolist(), len(sizes)]
    return [slice(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def _violation_task(instance: Any, P: np.ndarray, start: int, stop: int) -> float:
    return float(instance.max_violation(P, pairs=(start, stop)))


def _check_task(instance: Any, P: np.ndarray, tol: float, start: int, stop: int) -> Any:
    return instance.check_violation(P, tol, pairs=(start, stop))


class DaskScan:
    """The scan of all pairs on a ``dask.distributed`` cluster (see the module docstring).

    Parameters
    ----------
    client : distributed.Client, optional
        A client of a running cluster (not closed by :meth:`close`).
    n_workers : int, optional
        Without ``client`` or ``scheduler``: start a ``LocalCluster`` of this many worker
        processes, one thread each (default: the machine's cores), at the first scan.
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``), connected to at the first scan.
    cache_pairs : int, optional
        Keep the P-independent part of the scan on the workers while the rectangles of its blocks
        have at most this many entries (8 bytes an entry,
        :func:`~sdpembed.solvers.numax.pair_scan.rectangle_entries`; default
        :func:`~sdpembed.solvers.numax.pair_scan.cache_pairs_limit` a worker); beyond, every scan
        recomputes it.

    Use it as a context manager, or call :meth:`close`, to stop a cluster it started.
    """

    def __init__(self, client: Any = None, *, n_workers: int | None = None, scheduler: str | None = None,
                 cache_pairs: int | None = None) -> None:
        if sum(value is not None for value in (client, n_workers, scheduler)) > 1:
            raise ValueError("give at most one of client, n_workers and scheduler")
        if n_workers is not None and (isinstance(n_workers, bool) or not isinstance(n_workers, int)
                                      or n_workers < 1):
            raise ValueError(f"n_workers must be an integer >= 1, got {n_workers!r}")
        if scheduler is not None and (not isinstance(scheduler, str) or not scheduler):
            raise ValueError(f"scheduler must be an address such as 'tcp://host:8786', got {scheduler!r}")
        if cache_pairs is not None and (isinstance(cache_pairs, bool) or not isinstance(cache_pairs, int)
                                        or cache_pairs < 0):
            raise ValueError(f"cache_pairs must be an integer >= 0, got {cache_pairs!r}")
        self._client, self._owns = client, client is None
        self._cluster = None
        self.n_workers, self.scheduler = n_workers, scheduler
        self.cache_pairs = cache_pairs
        # what was sent to the workers, kept with the object it was sent for (compared by identity)
        self._points: PairDistances | None = None        # the points of the last scan
        self._actors: list[tuple[Any, Any]] = []          # (future, actor) of a _ScanWorker on each worker
        self._addresses: list[str] = []                   # the workers of the actors
        self._sent: list[tuple[Any, Any]] = []            # (distances, bounds) each actor holds
        self._instance: tuple[Any, Any] | None = None    # (instance, future)
        self._shares_of: tuple[Any, tuple, tuple] | None = None   # (distances, its key, shares) of _shares

    # ------------------------------------------------------------------ the cluster
    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (the cluster is started or connected to at first use)."""
        if self._client is None:
            import dask  # at first use (DESIGN.md, "Start-up")
            from distributed import Client, LocalCluster

            if self.scheduler is not None:
                self._client = Client(self.scheduler)
            else:
                # Dask's nannies start workers with MALLOC_TRIM_THRESHOLD_ set, which fixes glibc's mmap
                # threshold at 128 KiB: every block's temporaries are then fresh pages, each mapped, faulted
                # in and unmapped again at every scan. The workers started here keep glibc's default. The
                # actors' calls go to the workers directly, not through the scheduler.
                with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                                      **QUIET_CLUSTER}):
                    self._cluster = LocalCluster(n_workers=self.n_workers, threads_per_worker=1, processes=True,
                                                 dashboard_address=None)
                self._client = Client(self._cluster, direct_to_workers=True)
        return self._client

    def workers(self) -> int:
        """The number of workers of the cluster now."""
        return max(1, len(self.client.scheduler_info()["workers"]))

    def close(self) -> None:
        """Drop the data held on the workers; close the client and the cluster this object started."""
        self._points, self._actors, self._addresses, self._sent, self._instance = None, [], [], [], None
        self._shares_of = None
        if self._owns and self._client is not None:
            self._client.close()
            if self._cluster is not None:
                self._cluster.close()
            self._client = self._cluster = None

    def __enter__(self) -> DaskScan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = (f"scheduler={self.scheduler!r}" if self.scheduler is not None
                 else "client" if not self._owns else f"n_workers={self.n_workers}")
        return f"DaskScan({where})"

    def _scatter(self, value: Any) -> Any:
        """A future of ``value`` held by every worker."""
        return self.client.scatter([value], broadcast=True, hash=False)[0]

    def _wait(self, futures: list[Any], sizes: list[int], progress: Callable[[int], object] | None) -> list[Any]:
        """The results of ``futures`` in their order, ``progress(size)`` told as each one ends."""
        if progress is not None:
            from distributed import as_completed  # at first use (DESIGN.md, "Start-up")

            size_of = {future.key: size for future, size in zip(futures, sizes, strict=True)}
            for future in as_completed(futures):
                progress(size_of[future.key])
        return self.client.gather(futures)

    def _start_actors(self) -> None:
        """A :class:`_ScanWorker` on each worker of the cluster now, holding nothing yet."""
        client = self.client
        addresses = sorted(client.scheduler_info()["workers"])
        if not addresses:
            client.wait_for_workers(1)
            addresses = sorted(client.scheduler_info()["workers"])
        if self._actors and addresses == self._addresses:
            return
        # the futures stay referenced: the scheduler drops an actor whose future is released. One whose
        # worker is lost is started again elsewhere (allow_other_workers: a call waiting for it ends,
        # with an error, instead of waiting for a worker that is gone), and the scan starts new ones.
        futures = [client.submit(_ScanWorker, actor=True, workers=[address], allow_other_workers=True,
                                 pure=False) for address in addresses]
        with client.as_current():               # an actor talks through the client current when it arrives
            self._actors = [(future, future.result()) for future in futures]
        self._addresses, self._sent = addresses, [(None, None)] * len(addresses)

    # ------------------------------------------------------------------ the scans
    def scan(self, X: np.ndarray, P: np.ndarray | None, bounds: PairBounds, *, tol: float = 0.0,
             block_rows: int | None = None, factor: np.ndarray | None = None, exact_values: bool = True,
             distances: PairDistances | None = None,
             progress: Callable[[int], object] | None = None,
             exclude: np.ndarray | None = None, keep: int | None = None) -> ScanResult:
        """:func:`~sdpembed.solvers.numax.pair_scan.scan_pair_violations` on the cluster (the same result)."""
        if distances is None and self._points is not None and self._points.X is X and (
                block_rows is None or block_rows == self._points.block_rows):
            distances = self._points                     # the same points again: nothing to send
        if distances is None or distances.X is not X:
            distances = PairDistances(X, block_rows)
        X = distances.X
        if self._points is not distances or not self._actors:
            self._start_actors()                         # new points: on the workers the cluster has now
            self._points = distances
        # the arguments of the round's scan_round, which each worker computes from the points it holds
        # (P is of no use beside its factor)
        round_args = (P if factor is None else None, factor, tol, exact_values, exclude, keep)
        told = [0]                                       # pairs told to progress, across attempts
        try:
            return self._scan_on_workers(round_args, distances, bounds, progress, told)
        except (OSError, RuntimeError):
            if sorted(self.client.scheduler_info()["workers"]) == self._addresses:
                self._forget_sent()
                raise
        except BaseException:
            self._forget_sent()
            raise
        # a worker was lost with its actor: new actors on the workers there are now, sent everything again
        self._actors = []
        self._start_actors()
        return self._scan_on_workers(round_args, distances, bounds, progress, told)

    def _forget_sent(self) -> None:
        """After a failed call: what it left on its actor is unknown, so the next scan sends every actor
        everything."""
        self._sent = [(None, None)] * len(self._addresses)

    def _shares(self, distances: PairDistances) -> tuple[list[list[tuple[int, int]]], list[int], bool]:
        """The actors' shares of a scan of ``distances``: the row ranges (start, stop) of each one's
        blocks (consecutive blocks of about equal numbers of pairs, :func:`task_groups`), each one's
        number of pairs, and whether the workers keep the blocks' distances. The same for every scan of
        these points on these actors, so computed once for them."""
        key = (len(self._actors), self.cache_pairs)
        if self._shares_of is not None and self._shares_of[0] is distances and self._shares_of[1] == key:
            return self._shares_of[2]
        workers = key[0]
        n = distances.X.shape[0]
        limit = cache_pairs_limit() * workers if self.cache_pairs is None else self.cache_pairs
        cache = rectangle_entries(n, distances.block_rows) <= limit
        ranges = [(start, min(start + distances.block_rows, n - 1)) for start in distances.starts()]
        pairs = [int((n - 1 - np.arange(start, stop)).sum()) for start, stop in ranges]
        groups = task_groups(pairs, workers)
        shares = ([ranges[group] for group in groups], [sum(pairs[group]) for group in groups], cache)
        self._shares_of = (distances, key, shares)
        return shares

    def _scan_on_workers(self, round_args: tuple, distances: PairDistances, bounds: PairBounds,
                         progress: Callable[[int], object] | None, told: list[int]) -> ScanResult:
        """The scan of the round ``scan_round(X, *round_args)``: one call an actor, each for consecutive
        blocks of about equal numbers of pairs (:func:`task_groups`), the points and the bounds sent
        with it where the actor does not hold them; ``progress`` told the pairs of each call beyond
        ``told`` when all have ended."""
        X = distances.X
        ranges, loads, cache = self._shares(distances)

        async def calls() -> list[BlockScan]:
            # made and awaited on the client's event loop: one hand-off to it and one back for the whole scan
            pending = []
            for k in range(len(ranges)):
                held_points, held_bounds = self._sent[k]
                actor = self._actors[k][1]
                # an actor that holds these points keeps its blocks' distances from its first scan of them
                short = held_points is distances and cache and loads[k] <= LOOP_PAIRS
                pending.append((actor.scan_on_loop if short else actor.scan)(_ScanCall(
                    round_args, ranges[k], cache,
                    points=None if held_points is distances else (X, distances.norms2),
                    bounds=None if held_bounds is bounds else bounds)))
                self._sent[k] = (distances, bounds)
            return [await call for call in pending]

        parts, done = [], 0
        for result, load in zip(self.client.sync(calls), loads, strict=True):
            parts.append([result])                       # the worker's violators in the local order
            done += load
            if progress is not None and done > told[0]:
                progress(done - told[0])
                told[0] = done
        return merge_block_scans(parts, round_args[-1])

    def max_violation(self, instance: Any, P: np.ndarray, *,
                      progress: Callable[[int], object] | None = None) -> float:
        """``instance.max_violation(P)`` of a point-form instance, its ranges of pairs scanned on the
        cluster (blocks of 65,536 pairs, as in this process); other instances are checked here."""
        if not getattr(instance, "point_form", False):
            return instance.max_violation(P, progress=progress)
        futures, sizes = self._ranges(instance, P, _violation_task)
        return max(self._wait(futures, sizes, progress), default=0.0)

    def _ranges(self, instance: Any, P: np.ndarray, task: Callable[..., Any], *args: Any) -> tuple[list, list[int]]:
        """The futures of ``task(instance, P, *args, start, stop)`` over the ranges of pairs of a point-form
        instance, and the ranges' sizes."""
        total = instance.n_constraints
        client = self.client
        if self._instance is None or self._instance[0] is not instance:
            self._instance = (instance, self._scatter(instance))
        matrix = self._scatter(np.asarray(P, dtype=np.float64))
        # about four tasks a worker, each a whole number of the blocks this process would check
        step = VERIFY_BLOCK * max(1, math.ceil(total / (4 * self.workers() * VERIFY_BLOCK)))
        starts = range(0, total, step)
        futures = [client.submit(task, self._instance[1], matrix, *args, a, min(a + step, total), pure=False)
                   for a in starts]
        return futures, [min(a + step, total) - a for a in starts]

    def check_violation(self, instance: Any, P: np.ndarray, tol: float, *,
                        progress: Callable[[int], object] | None = None) -> Any:
        """``instance.check_violation(P, tol)`` of a point-form instance, its ranges of pairs checked on
        the cluster as in :meth:`max_violation`, the parts joined by their ``merge`` (the same verdict)."""
        if not getattr(instance, "point_form", False):
            return instance.check_violation(P, tol, progress=progress)
        futures, sizes = self._ranges(instance, P, _check_task, tol)
        checks = self._wait(futures, sizes, progress)
        return type(checks[0]).merge(checks, tol)
