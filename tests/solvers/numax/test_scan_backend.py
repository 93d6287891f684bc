"""The all-pairs scan behind a backend: the Dask backend on a two-process LocalCluster gives the local
scan's output exactly — the violators in the same order with the same values, the same worst
violation — and so the same NuMax-CG, NuMax-Class CG, FroMax/NILE-Pro CG and verify results.

The workers run one BLAS thread (Dask's default), and a BLAS product's rounding depends on its thread
count: the local runs compared with them run one thread too."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from sdpembed import NuMaxClassInstance, NuMaxInstance
from sdpembed.datasets import gaussian_points, translating_squares
from sdpembed.secants import pair_count
from sdpembed.solvers.near_isometric.rank_adjust import near_isometric_cg, rank_adjust_cg
from sdpembed.solvers.numax.column_generation import column_generation
from sdpembed.solvers.numax.pair_scan import PairDistances, scan_pair_violations
from sdpembed.solvers.numax.scan_backend import DaskScan, LocalScan, resolve_scan_backend, task_groups
from sdpembed.validation.verify import verify_solution

from ...conftest import digits_points

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


@pytest.fixture
def dask_scan(client):
    with DaskScan(client) as backend, threadpool_limits(1):
        yield backend


def _same_scan(a, b):
    for key in ("i", "j", "violation"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))
    assert a.max_violation == b.max_violation and a.n_pairs == b.n_pairs


def _points_and_bounds(one_sided):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((45, 6))
    X[5] = X[3]                                     # a duplicate point: its zero secant is skipped
    labels = rng.integers(0, 3, 45)

    def bounds(i, j):
        if not one_sided:
            return np.full(i.shape, 0.7), np.full(i.shape, 1.3)
        same = labels[i] == labels[j]
        return np.where(same, -np.inf, 0.7), np.where(same, 1.3, np.inf)

    B = rng.standard_normal((6, 3))
    return X, bounds, B @ B.T / 3, B.T


@pytest.mark.parametrize("block_rows", [4, None])
@pytest.mark.parametrize("one_sided", [False, True])
@pytest.mark.parametrize("exact_values", [True, False])
def test_dask_scan_returns_the_local_scan(dask_scan, block_rows, one_sided, exact_values):
    X, bounds, P, factor = _points_and_bounds(one_sided)
    for tol, given in ((1e-9, None), (1e-3, factor), (np.inf, factor)):
        local = scan_pair_violations(X, P, bounds, tol=tol, block_rows=block_rows, factor=given,
                                     exact_values=exact_values)
        distances = PairDistances(X, block_rows)
        counted = []
        for _ in range(2):                          # the second scan reuses the distances kept on the workers
            remote = dask_scan.scan(X, P, bounds, tol=tol, block_rows=block_rows, factor=given,
                                    exact_values=exact_values, distances=distances, progress=counted.append)
            _same_scan(remote, local)
        assert sum(counted) == 2 * pair_count(X.shape[0])
        # one call a worker a scan (11 blocks of 4 rows, or the default 8 blocks of 6, on 2 workers)
        assert len(counted) == 2 * 2
    assert tol == np.inf and local.i.size == 0 and np.isfinite(local.max_violation)


def test_task_groups_are_consecutive_whole_blocks_of_about_equal_pairs():
    sizes = [int(s) for s in (999 - np.arange(0, 999, 20)) * 20]     # a scan's blocks: fewer pairs each
    for tasks in (1, 2, 4, 7, 50, 80):
        groups = task_groups(sizes, tasks)
        assert groups[0].start == 0 and groups[-1].stop == len(sizes) and len(groups) <= tasks
        assert all(a.stop == b.start and a.stop > a.start for a, b in zip(groups[:-1], groups[1:], strict=True))
        loads = [sum(sizes[g]) for g in groups]
        # no task holds more than its share plus one block
        assert max(loads) <= sum(sizes) / tasks + max(sizes)
    assert len(task_groups(sizes, 4)) == 4 and task_groups([], 3) == []
    assert task_groups([5], 3) == [slice(0, 1)]


def test_dask_scan_runs_one_call_a_worker_holding_its_blocks(client):
    X, bounds, P, _ = _points_and_bounds(False)
    local = scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=2)          # 22 blocks
    distances = PairDistances(X, 2)
    with DaskScan(client) as backend, threadpool_limits(1):
        for _ in range(2):
            counted = []
            _same_scan(backend.scan(X, P, bounds, tol=1e-9, distances=distances, progress=counted.append), local)
            assert len(counted) == 2                   # one call a worker
        # the workers keep their blocks' distances: 22 blocks between them, each held once
        held = [actor.kept_blocks().result() for _, actor in backend._actors]
        assert len(held) == 2 and sum(held) == 22 and min(held) > 0


def test_dask_scan_survives_a_lost_worker():
    # the actors live on the workers: a worker that dies takes its actor and its blocks with it, and
    # the next scan starts actors on the workers there are then and sends them the points again
    import os
    import time

    X, bounds, P, _ = _points_and_bounds(False)
    local = scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=4)
    with DaskScan(n_workers=2) as backend, threadpool_limits(1):
        _same_scan(backend.scan(X, P, bounds, tol=1e-9, block_rows=4), local)
        lost = backend._addresses[0]
        backend.client.submit(os._exit, 1, workers=[lost], pure=False)
        deadline = time.monotonic() + 30
        while lost in backend.client.scheduler_info()["workers"] and time.monotonic() < deadline:
            time.sleep(0.05)
        counted = []
        _same_scan(backend.scan(X, P, bounds, tol=1e-9, block_rows=4, progress=counted.append), local)
        assert lost not in backend._addresses and sum(counted) == pair_count(X.shape[0])


def test_dask_scan_starts_a_quiet_cluster():
    # the cluster a DaskScan starts has no dashboard: its workers run no statistical profiler, and its
    # processes check their event loops twice a second instead of 50 times (QUIET_CLUSTER)
    with DaskScan(n_workers=1) as backend:
        workers = backend.client.run(lambda dask_worker: ("profile" in dask_worker.periodic_callbacks,
                                                          dask_worker._tick_interval))
        assert list(workers.values()) == [(False, 0.5)]
        assert backend.client.run_on_scheduler(lambda dask_scheduler: dask_scheduler._tick_interval) == 0.5


def test_dask_scan_after_a_failed_call_sends_the_points_again(client):
    # a call that fails on an unchanged cluster is re-raised; the actor it went to may hold nothing, so the
    # next scan must not count on what that call would have left there (review r25)
    class FailOnce:
        def __init__(self, actor):
            self.actor, self.failed = actor, False

        def __getattr__(self, method):
            if self.failed:
                return getattr(self.actor, method)
            self.failed = True

            class Failed:
                def __await__(self):
                    raise RuntimeError("the call failed")
                    yield
            return lambda *args, **kwargs: Failed()

    X, bounds, P, _ = _points_and_bounds(False)
    local = scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=4)
    distances = PairDistances(X, 4)
    with DaskScan(client) as backend, threadpool_limits(1):
        backend._start_actors()
        backend._points = distances
        future, actor = backend._actors[0]
        backend._actors[0] = (future, FailOnce(actor))
        with pytest.raises(RuntimeError, match="the call failed"):
            backend.scan(X, P, bounds, tol=1e-9, distances=distances)
        _same_scan(backend.scan(X, P, bounds, tol=1e-9, distances=distances), local)


class _Recorded:
    """An actor whose called methods are recorded by name."""

    def __init__(self, actor, called):
        self.actor, self.called = actor, called

    def __getattr__(self, method):
        self.called.append(method)
        return getattr(self.actor, method)


def _record_calls(backend):
    called = []
    backend._actors = [(future, _Recorded(actor, called)) for future, actor in backend._actors]
    return called


def test_dask_scan_runs_short_calls_on_blocks_it_keeps_on_the_workers_event_loop(client, monkeypatch):
    # a call on blocks whose distances its worker keeps runs on the worker's event loop; the first scan
    # of new points (the distances computed), a call of more than LOOP_PAIRS pairs, and every call
    # beyond the cache run in the actor's thread. The same output every way.
    from sdpembed.solvers.numax import scan_backend

    X, bounds, P, factor = _points_and_bounds(False)
    local = scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=4, factor=factor)
    with DaskScan(client) as backend, threadpool_limits(1):
        distances = PairDistances(X, 4)
        backend._start_actors()
        backend._points = distances
        called = _record_calls(backend)
        for expected in (["scan", "scan"], ["scan_on_loop", "scan_on_loop"], ["scan_on_loop", "scan_on_loop"]):
            _same_scan(backend.scan(X, P, bounds, tol=1e-9, factor=factor, distances=distances), local)
            assert called == expected
            called.clear()
        # the pairs of each worker's call: blocks of 4 rows of 45 points, in two groups
        sizes = [int((X.shape[0] - 1 - np.arange(a, min(a + 4, X.shape[0] - 1))).sum()) for a in distances.starts()]
        loads = [sum(sizes[group]) for group in task_groups(sizes, 2)]
        for limit, expected in ((min(loads) - 1, ["scan", "scan"]), (max(loads), ["scan_on_loop"] * 2)):
            monkeypatch.setattr(scan_backend, "LOOP_PAIRS", limit)
            _same_scan(backend.scan(X, P, bounds, tol=1e-9, factor=factor, distances=distances), local)
            assert called == expected
            called.clear()
    with DaskScan(client, cache_pairs=0) as backend, threadpool_limits(1):
        backend._start_actors()
        called = _record_calls(backend)
        for _ in range(2):
            _same_scan(backend.scan(X, P, bounds, tol=1e-9, factor=factor, block_rows=4), local)
        assert called == ["scan"] * 4


class _Arguments:
    """An actor whose calls' arguments are recorded."""

    def __init__(self, actor, calls):
        self.actor, self.calls = actor, calls

    def __getattr__(self, method):
        def call(*args, **kwargs):
            self.calls.append((args, kwargs))
            return getattr(self.actor, method)(*args, **kwargs)
        return call


def test_dask_scan_sends_each_worker_one_object_with_the_factor_beside_its_pickle(client):
    # Dask serializes a call's arguments one by one, and the items of a tuple or list argument one by
    # one: a worker's share of a scan goes as one object, one pickle with the factor's buffer out of band
    from distributed.protocol import serialize, to_serialize

    X, bounds, P, factor = _points_and_bounds(False)
    local = scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=4, factor=factor)
    with DaskScan(client) as backend, threadpool_limits(1):
        backend._start_actors()
        calls = []
        backend._actors = [(future, _Arguments(actor, calls)) for future, actor in backend._actors]
        distances = PairDistances(X, 4)
        for _ in range(2):
            _same_scan(backend.scan(X, P, bounds, tol=1e-9, factor=factor, distances=distances), local)
        assert len(calls) == 4 and all(len(args) == 1 and not kwargs for args, kwargs in calls)
        for args, _ in calls[2:]:                         # kept blocks: the factor and the worker's rows
            header, frames = serialize(to_serialize(args[0]))
            assert header["serializer"] == "pickle" and len(frames) == 2
            assert memoryview(frames[1]).nbytes == factor.nbytes


def test_dask_scan_plans_the_workers_shares_once_for_the_same_points(client, monkeypatch):
    from sdpembed.solvers.numax import scan_backend

    planned = []

    def counted(sizes, tasks):
        planned.append(tasks)
        return task_groups(sizes, tasks)

    monkeypatch.setattr(scan_backend, "task_groups", counted)
    X, bounds, P, _ = _points_and_bounds(False)
    local = scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=4)
    with DaskScan(client) as backend, threadpool_limits(1):
        distances = PairDistances(X, 4)
        for _ in range(3):
            _same_scan(backend.scan(X, P, bounds, tol=1e-9, distances=distances), local)
        assert planned == [2]
        _same_scan(backend.scan(X, P, bounds, tol=1e-9, distances=PairDistances(X, 4)), local)
        assert planned == [2, 2]                          # other points (if equal): planned again


def test_dask_scan_raises_an_argument_error_and_scans_again(dask_scan):
    # the round is computed on the workers: a bad argument raises there, as in this process, and leaves
    # nothing the next scan counts on
    X, bounds, P, _ = _points_and_bounds(False)
    distances = PairDistances(X, 4)
    _same_scan(dask_scan.scan(X, P, bounds, tol=1e-9, distances=distances),
               scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=4))
    for bad in ({"keep": 0}, {"factor": np.ones((2, X.shape[1] + 1))}):
        with pytest.raises(ValueError, match="keep must be|factor must have"):
            dask_scan.scan(X, P, bounds, tol=1e-9, distances=distances, **bad)
    _same_scan(dask_scan.scan(X, P, bounds, tol=1e-9, distances=distances, keep=3),
               scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=4, keep=3))


def test_dask_scan_recomputes_distances_beyond_its_cache(client):
    X, bounds, P, _ = _points_and_bounds(False)
    with DaskScan(client, cache_pairs=0) as backend, threadpool_limits(1):
        for _ in range(2):
            _same_scan(backend.scan(X, P, bounds, tol=1e-9, block_rows=5),
                       scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=5))
        assert [actor.kept_blocks().result() for _, actor in backend._actors] == [0, 0]


def test_numax_cg_on_dask_gives_the_local_result(dask_scan):
    X = translating_squares(7, 3)
    options = {"initial_pairs": 60, "max_add": 40, "random_state": 0, "block_rows": 6}
    local = column_generation(X, NuMaxInstance(delta=0.1, X=X).bounds_of_pairs, **options)
    remote = column_generation(X, NuMaxInstance(delta=0.1, X=X).bounds_of_pairs, scan_backend=dask_scan, **options)
    assert local.status == "optimal" and local.extra["rounds"] >= 2
    assert remote.status == local.status and remote.objective == local.objective
    np.testing.assert_array_equal(remote.solution, local.solution)
    np.testing.assert_array_equal(remote.extra["pairs"], local.extra["pairs"])
    assert remote.dual_bound == local.dual_bound and remote.max_violation == local.max_violation


def test_numax_class_cg_on_dask_gives_the_local_result(dask_scan):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero(y < 3)[:36]
    instance = NuMaxClassInstance(delta=0.2, X=X[keep] / 16.0, y=y[keep])
    options = {"initial_pairs": 80, "max_add": 50, "random_state": 1, "block_rows": 5}
    local = column_generation(instance.X, instance.bounds_of_pairs, problem="numax_class", **options)
    remote = column_generation(instance.X, instance.bounds_of_pairs, problem="numax_class",
                               scan_backend=dask_scan, **options)
    assert local.status == "optimal" and local.extra["rounds"] >= 2
    assert remote.objective == local.objective
    np.testing.assert_array_equal(remote.solution, local.solution)
    np.testing.assert_array_equal(remote.extra["pairs"], local.extra["pairs"])


@pytest.mark.parametrize("method", ["nilepro", "fromax"])
def test_near_isometric_cg_on_dask_gives_the_local_result(dask_scan, method):
    X = gaussian_points(30, 8, random_state=4)
    options = {"method": method, "initial_pairs": 20, "initial_neighbors": 0, "max_add": 20, "random_state": 0,
               "max_iter": 2000, "block_rows": 4}
    local = near_isometric_cg(X, 0.3, 7, **options)
    remote = near_isometric_cg(X, 0.3, 7, scan_backend=dask_scan, **options)
    assert local.status == "converged" and local.extra["rounds"] >= 2
    assert remote.status == local.status and remote.isometry == local.isometry
    np.testing.assert_array_equal(remote.Psi, local.Psi)
    np.testing.assert_array_equal(remote.extra["pairs"], local.extra["pairs"])


def test_rank_adjust_cg_on_dask_gives_the_local_result(dask_scan):
    X = gaussian_points(24, 6, random_state=5)
    options = {"method": "nilepro", "initial_pairs": 60, "random_state": 0, "max_iter": 300, "block_rows": 4}
    local = rank_adjust_cg(X, 0.3, **options)
    remote = rank_adjust_cg(X, 0.3, scan_backend=dask_scan, **options)
    assert remote.rank == local.rank and remote.isometry == local.isometry
    np.testing.assert_array_equal(remote.Psi, local.Psi)


def test_verify_on_dask_gives_the_local_verdict(client):
    X = digits_points(40)
    y = np.arange(40) % 3
    rng = np.random.default_rng(2)
    B = rng.standard_normal((X.shape[1], 10))
    P = B @ B.T / 30
    # blocks of 65,536 pairs on the workers, as in this process: the instance needs more pairs than one
    big = gaussian_points(420, 5, random_state=1)
    Q = np.diag([1.15, 1.0, 1.0, 0.95, 1.0])
    with DaskScan(client) as backend, threadpool_limits(1):
        for instance, matrix in ((NuMaxInstance(delta=0.2, X=X), P), (NuMaxClassInstance(delta=0.2, X=X, y=y), P),
                                 (NuMaxInstance(delta=0.1, X=big), Q)):
            local = verify_solution(instance, matrix, optimum=1.0)
            counted = []
            remote = verify_solution(instance, matrix, optimum=1.0, scan_backend=backend, progress=True)
            assert repr(remote.to_dict()) == repr(local.to_dict())          # NaN gaps (no bound) alike
            assert remote.max_violation == instance.max_violation(matrix) > 0
            assert backend.max_violation(instance, matrix, progress=counted.append) == local.max_violation
            assert sum(counted) == instance.n_constraints
        assert pair_count(420) > 65536
        # a secant-form instance is checked in this process
        secants = NuMaxInstance.from_points(X, 0.2)
        assert backend.max_violation(secants, P) == secants.max_violation(P)


def test_max_violation_of_a_range_of_pairs():
    X = gaussian_points(30, 4, random_state=0)
    instance = NuMaxInstance(delta=0.1, X=X)
    P = np.diag([1.3, 1.0, 0.9, 1.0])
    parts = [instance.max_violation(P, block_size=17, pairs=(a, min(a + 50, 435))) for a in range(0, 435, 50)]
    assert max(parts) == instance.max_violation(P) > 0
    with pytest.raises(ValueError, match="pairs must be a range"):
        instance.max_violation(P, pairs=(10, 436))


def test_backend_arguments():
    assert isinstance(resolve_scan_backend(None), LocalScan)
    assert isinstance(resolve_scan_backend("local"), LocalScan)
    backend = DaskScan(n_workers=2)
    assert resolve_scan_backend(backend) is backend and "n_workers=2" in repr(backend)
    backend.close()                                     # never started: nothing to stop
    with pytest.raises(ValueError, match="scan_backend must be"):
        resolve_scan_backend("dask")
    with pytest.raises(ValueError, match="at most one"):
        DaskScan(n_workers=2, scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match="n_workers"):
        DaskScan(n_workers=0)
    with pytest.raises(ValueError, match="cache_pairs"):
        DaskScan(cache_pairs=-1)
    with pytest.raises(ValueError, match="scan_backend must be"):
        column_generation(translating_squares(5, 2), lambda i, j: (i * 0.0 + 0.9, i * 0.0 + 1.1), scan_backend=3)


@pytest.mark.parametrize("block_rows", [4, None])
def test_dask_scan_reduces_its_violators_as_the_local_scan(dask_scan, block_rows):
    # a scan that leaves out the working set and keeps what a selection of `keep` can take: the
    # local one's output, and the very pairs the selection took from the full list of violators
    from sdpembed.secants import linear_index_of_pairs
    from sdpembed.solvers.numax.candidates import PairCandidates, _spread_violators

    X, bounds, P, _ = _points_and_bounds(False)
    full = scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=block_rows)
    index = linear_index_of_pairs(full.i, full.j, X.shape[0])
    working = np.random.default_rng(2).choice(index, 100, replace=False)
    fresh = ~np.isin(index, working)
    remote_candidates = PairCandidates(X, bounds, dask_scan, block_rows)
    for keep in (1, 7, 10_000):
        local = scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=block_rows, exclude=working, keep=keep)
        remote = dask_scan.scan(X, P, bounds, tol=1e-9, block_rows=block_rows, exclude=working, keep=keep)
        _same_scan(remote, local)
        assert (remote.found, remote.fresh) == (full.i.size, int(fresh.sum()))
        assert keep > 10 or local.i.size < fresh.sum() // 2
        scan = remote_candidates.scan(P, None, 1e-9, True, exclude=working, keep=keep)
        np.testing.assert_array_equal(
            remote_candidates.select(scan.index, scan.violation, keep, total=scan.fresh),
            _spread_violators(full.i[fresh], full.j[fresh], full.violation[fresh], index[fresh], keep))


def test_dask_scan_keeps_the_local_order_of_ties_across_a_workers_blocks(client):
    # Integer points far from the origin mapped by Ψ = 2I: every pair's ratio is exactly 4, so all
    # violate by the same 3 (ties everywhere). Near pairs are in doubt under the Gram rounding bound
    # and recomputed ("exact"), far ones keep their Gram value ("clear"): every block holds both
    # kinds, and a task groups several blocks. The selection takes ties in the order of the scan,
    # so the Dask scan must list the violators in the local order, block by block.
    from sdpembed.solvers.numax.candidates import PairCandidates
    from sdpembed.solvers.numax.pair_scan import scan_block, scan_round

    rng = np.random.default_rng(3)
    X = np.unique(rng.integers(0, 40, (60, 2)), axis=0).astype(float) + 1e3
    factor = 2.0 * np.eye(2)

    def bounds(i, j):
        return np.ones(i.shape), np.ones(i.shape)

    tol = 3.0 - 1e-9
    local = scan_pair_violations(X, factor.T @ factor, bounds, tol=tol, block_rows=3, factor=factor,
                                 exact_values=False)
    assert np.all(local.violation == 3.0) and local.i.size == pair_count(X.shape[0])
    distances, scan = PairDistances(X, 3), scan_round(X, factor.T @ factor, factor, tol, False, None, None)
    blocks = [scan_block(X, scan, bounds, distances.block(start)) for start in distances.starts()]
    assert len(blocks) > 4 and all(b.clear is not None and b.exact is not None for b in blocks)   # both kinds
    with DaskScan(client) as backend, threadpool_limits(1):
        remote = backend.scan(X, factor.T @ factor, bounds, tol=tol, block_rows=3, factor=factor,
                              exact_values=False)
        _same_scan(remote, local)
        for keep in (5, 40):
            _same_scan(backend.scan(X, factor.T @ factor, bounds, tol=tol, block_rows=3, factor=factor,
                                    exact_values=False, keep=keep),
                       scan_pair_violations(X, factor.T @ factor, bounds, tol=tol, block_rows=3, factor=factor,
                                            exact_values=False, keep=keep))
        chosen = []
        for scan_backend in (LocalScan(), backend):
            candidates = PairCandidates(X, bounds, scan_backend, 3)
            scan = candidates.scan(factor.T @ factor, factor, tol, False, keep=40)
            chosen.append(candidates.select(scan.index, scan.violation, 40, total=scan.fresh))
        np.testing.assert_array_equal(chosen[1], chosen[0])
