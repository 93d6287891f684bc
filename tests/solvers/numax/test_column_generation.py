"""NuMax-CG (Algorithm 2): the block scanner, exact termination, and agreement with the full SDP."""

import io
import sys

import numpy as np
import pytest

from sdpembed import NuMaxInstance, solve
from sdpembed.datasets import gaussian_points, translating_squares
from sdpembed.secants import all_secants
from sdpembed.solvers.numax.column_generation import column_generation, solve_numax_cg
from sdpembed.solvers.numax.pair_scan import PairDistances, scan_pair_violations

from ...conftest import digits_points, verified_through_files


def _dense_violations(X, P, lo_fn):
    V, pairs = all_secants(X, return_pairs=True)
    values = np.einsum("ij,ij->i", V @ P, V)
    lo, hi = lo_fn(pairs[:, 0], pairs[:, 1])
    return pairs, np.maximum(lo - values, values - hi)


@pytest.mark.parametrize("block_rows", [1, 7, None])
@pytest.mark.parametrize("one_sided", [False, True])
def test_scanner_finds_exactly_the_dense_violators(block_rows, one_sided):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 6))
    X[5] = X[3]  # a duplicate point: its zero secant is skipped
    labels = rng.integers(0, 3, 40)
    B = rng.standard_normal((6, 6))
    P = B @ B.T / 6

    def bounds(i, j):
        if not one_sided:
            return np.full(i.shape, 0.7), np.full(i.shape, 1.3)
        same = labels[i] == labels[j]
        return np.where(same, -np.inf, 0.7), np.where(same, 1.3, np.inf)

    with pytest.warns(UserWarning, match="zero secant"):
        pairs, violation = _dense_violations(X, P, bounds)
    scan = scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=block_rows)
    dense = {tuple(p) for p in pairs[violation > 1e-9]}
    found = set(zip(scan.i.tolist(), scan.j.tolist(), strict=True))
    assert found == dense and len(dense) > 10
    assert scan.n_pairs == len(pairs)
    assert scan.max_violation == pytest.approx(violation.max(), abs=1e-12)
    order = np.lexsort((scan.j, scan.i))
    expected = violation[violation > 1e-9]
    np.testing.assert_allclose(scan.violation[order], expected, rtol=1e-10)
    # the P-independent part kept across scans (as column generation does), or recomputed
    # (max_pairs=0): the same result, for this P and another one
    for max_pairs in (10**7, 0):
        distances = PairDistances(X, block_rows, max_pairs=max_pairs)
        for Q in (P, 0.5 * P, P):
            again = scan_pair_violations(X, Q, bounds, tol=1e-9, distances=distances)
            reference = scan_pair_violations(X, Q, bounds, tol=1e-9, block_rows=block_rows)
            for key in ("i", "j", "violation"):
                np.testing.assert_array_equal(getattr(again, key), getattr(reference, key))
            assert again.max_violation == reference.max_violation and again.n_pairs == reference.n_pairs
        assert bool(distances._blocks) == (max_pairs > 0)
    # a PairDistances of other points is not used
    other = PairDistances(X + 1.0, block_rows)
    moved = scan_pair_violations(X, P, bounds, tol=1e-9, block_rows=block_rows, distances=other)
    np.testing.assert_array_equal(moved.violation, scan.violation)


def _cg_cases():
    return {
        "squares49": translating_squares(7, 3),
        "gaussian": gaussian_points(40, 10, random_state=2),
        "digits": digits_points(30),
    }


@pytest.mark.parametrize("name", ["squares49", "gaussian", "digits"])
def test_cg_matches_the_full_sdp(name):
    X = _cg_cases()[name]
    delta = 0.1 if name != "digits" else 0.2
    instance = NuMaxInstance(delta=delta, X=X)
    cg = solve(instance, initial_pairs=200)  # point form: column generation by default; several rounds
    truth = solve(NuMaxInstance.from_points(X, delta), "cvxpy", solver="CLARABEL")
    assert cg.method == "cg" and cg.status == "optimal" and truth.status == "optimal"
    assert abs(cg.objective - truth.objective) <= 1e-4 * truth.objective
    assert cg.max_violation <= 1e-6
    assert instance.max_violation(cg.solution) <= 1e-6  # the final all-pairs check is real
    assert cg.dual_bound <= truth.objective * (1 + 1e-9)  # the restricted bound bounds the full problem
    assert cg.relative_gap <= 1e-5
    # the multipliers on the working pairs, checked from scratch, prove the same bound
    verified = instance.verified_dual_bound(cg.extra["pairs"], cg.extra["y"])
    assert verified <= truth.objective * (1 + 1e-9)
    assert verified == pytest.approx(cg.dual_bound, rel=1e-9)
    # any multipliers give a bound, never more than the optimum
    noise = np.random.default_rng(0).standard_normal(len(cg.extra["y"]))
    assert instance.verified_dual_bound(cg.extra["pairs"], cg.extra["y"] + noise) <= truth.objective


def test_cg_with_small_start_needs_rounds_and_keeps_few_pairs():
    X = gaussian_points(50, 8, random_state=3)
    instance = NuMaxInstance(delta=0.3, X=X)
    cg = solve_numax_cg(instance, initial_pairs=20, random_state=0)
    assert cg.status == "optimal" and cg.extra["rounds"] >= 2
    assert len(cg.extra["pairs"]) < instance.n_constraints
    full = solve(NuMaxInstance.from_points(X, 0.3), "admm")
    assert abs(cg.objective - full.objective) <= 1e-4 * full.objective


def test_initial_working_set_is_capped_whatever_n():
    """Above n = 2·initial_pairs points even one nearest neighbour each gives more than 2·initial_pairs
    pairs; S₀ is then a random sample of 2·initial_pairs of them (its dense S₀ × S₀ factorisation costs
    the same at any n), and the scans add the violated ones: the same certified optimum."""
    X = gaussian_points(120, 6, random_state=5)
    instance = NuMaxInstance(delta=0.3, X=X)
    capped = solve_numax_cg(instance, initial_pairs=25, random_state=0)
    assert capped.history["working"][0] <= 50
    assert capped.status == "optimal" and capped.max_violation <= 1e-6
    wide = solve_numax_cg(instance, initial_pairs=2000, random_state=0)   # all 7,140 pairs: no sampling
    assert wide.status == "optimal"
    assert abs(capped.objective - wide.objective) <= 2e-5 * wide.objective


def test_cg_one_sided_bounds_match_cvxpy():
    """The shared driver with class-dependent one-sided bounds (NuMax-Class (7))."""
    from sdpembed.formulations.numax import solve_box_trace_cvxpy

    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 6))
    labels = rng.integers(0, 2, 30)

    def bounds(i, j):
        same = labels[i] == labels[j]
        return np.where(same, -np.inf, 0.8), np.where(same, 1.2, np.inf)

    cg = column_generation(X, bounds, initial_pairs=50, random_state=1)
    V, pairs = all_secants(X, return_pairs=True)
    truth = solve_box_trace_cvxpy(V, *bounds(pairs[:, 0], pairs[:, 1]), solver="CLARABEL")
    assert cg.status == "optimal"
    assert abs(cg.objective - truth.objective) <= 1e-4 * truth.objective


def test_round_limit_is_not_optimal(capsys):
    X = gaussian_points(50, 8, random_state=3)
    instance = NuMaxInstance(delta=0.3, X=X)
    cg = solve_numax_cg(instance, initial_pairs=20, max_rounds=1, verbose=True)
    assert cg.status == "max_iterations" and cg.max_violation > 1e-6
    assert "cg round" in capsys.readouterr().out
    # the pairs written with the multipliers are those of the last restricted solve (not the next
    # round's working set), so an unfinished run still carries a proof that verify accepts
    assert len(cg.extra["pairs"]) == len(cg.extra["y"])
    optimum = solve_numax_cg(instance).objective
    assert 0.0 < instance.verified_dual_bound(cg.extra["pairs"], cg.extra["y"]) <= optimum * (1 + 1e-6)


def test_cg_bad_input():
    with pytest.raises(ValueError, match="initial_neighbors of column generation apply to the pairs of a point-form"):
        solve_numax_cg(NuMaxInstance(delta=0.1, secants=np.eye(3)), initial_neighbors=3)
    with pytest.raises(ValueError, match="initial_pairs"):
        solve_numax_cg(NuMaxInstance(delta=0.1, X=np.eye(3)), initial_pairs=0)
    with pytest.raises(ValueError, match="NaN"):
        column_generation(np.array([[np.nan, 0.0], [1.0, 1.0]]), lambda i, j: (i * 0.0, i * 0.0 + 2))


def test_cg_starts_from_distinct_points_when_the_sample_holds_only_coincident_ones():
    # 40 copies of one point and 3 others: a start of 2 random pairs (seed 1) sees only copies
    rng = np.random.default_rng(0)
    X = np.vstack([np.zeros((40, 4)), rng.standard_normal((3, 4))])
    with pytest.warns(UserWarning, match="zero secant"):
        truth = solve(NuMaxInstance.from_points(X, 0.2), "cvxpy")
    cg = solve_numax_cg(NuMaxInstance(delta=0.2, X=X), initial_pairs=2, initial_neighbors=0, random_state=1)
    assert cg.status == "optimal"
    assert abs(cg.objective - truth.objective) <= 1e-4 * truth.objective
    with pytest.raises(ValueError, match="two distinct points"):
        column_generation(np.ones((5, 3)), lambda i, j: (i * 0.0 + 0.8, i * 0.0 + 1.2))


def test_tight_only_schedule_gives_the_same_certified_optimum():
    X = gaussian_points(40, 10, random_state=2)
    instance = NuMaxInstance(delta=0.1, X=X)
    loose = solve_numax_cg(instance, random_state=0, initial_pairs=50)
    tight = solve_numax_cg(instance, random_state=0, initial_pairs=50, loose_tol=None)
    assert loose.status == tight.status == "optimal"
    assert abs(loose.objective - tight.objective) <= 1e-5 * tight.objective
    assert loose.max_violation <= 1e-6 and tight.max_violation <= 1e-6


def test_scanner_accepts_a_zero_factor():
    """P = 0 (an early round can end there) has a factor with no rows: every pair violates by 1 − lo."""
    X = np.random.default_rng(1).standard_normal((12, 4))
    bounds = lambda i, j: (np.full(i.shape, 0.9), np.full(i.shape, 1.1))  # noqa: E731
    scan = scan_pair_violations(X, np.zeros((4, 4)), bounds, factor=np.zeros((0, 4)))
    assert scan.i.size == 66 and np.allclose(scan.violation, 0.9)


class _Clock:
    """A stand-in for ``time.perf_counter``: ``step(k)`` seconds pass at the k-th call."""

    def __init__(self, step):
        self.calls, self.now, self.step = 0, 0.0, step

    def __call__(self) -> float:
        self.calls += 1
        self.now += self.step(self.calls)
        return self.now


def _monitored_cg(**options):
    """A NuMax-CG run whose tight rounds call the outside monitor several times."""
    X = digits_points(120, seed=3)
    return solve_numax_cg(NuMaxInstance(delta=0.1, X=X), initial_pairs=300, max_add=150, random_state=0, **options)


def test_cg_result_does_not_depend_on_the_clock(monkeypatch):
    """Every rule that decides iterates counts work, never time: a fast, a slow and an erratic
    clock (the same run on an idle or a loaded machine) give the same rounds and the same P."""
    import time

    from sdpembed.solvers.numax import admm_pairs

    scans = []
    real_pair_trace_admm = admm_pairs.pair_trace_admm

    def counting(*args, monitor=None, **kwargs):
        if monitor is not None:
            scan = monitor.scan
            monitor = admm_pairs.OutsideMonitor(lambda f: scans.append(1) or scan(f), monitor.ratio, monitor.work)
        return real_pair_trace_admm(*args, monitor=monitor, **kwargs)

    monkeypatch.setattr("sdpembed.solvers.numax.column_generation.pair_trace_admm", counting)
    runs = []
    for step in (lambda k: 1e-9, lambda k: 5.0, lambda k: 1e-6 * (k % 7) ** 6):
        monkeypatch.setattr(time, "perf_counter", _Clock(step))
        runs.append(_monitored_cg())
        monkeypatch.undo()
        monkeypatch.setattr("sdpembed.solvers.numax.column_generation.pair_trace_admm", counting)
    assert scans, "the outside monitor was never called: the test does not exercise its cadence"
    first = runs[0]
    assert first.status == "optimal"
    for other in runs[1:]:
        assert other.objective == first.objective and other.iterations == first.iterations
        np.testing.assert_array_equal(other.history["admm_iterations"], first.history["admm_iterations"])
        np.testing.assert_array_equal(other.solution, first.solution)


def test_cg_verbose_prints_progress_without_changing_the_iterates(capsys, monkeypatch):
    """``verbose=K`` prints the setup, each round and the restricted ADMM every K iterations,
    and the same iterates as a quiet run (a bound computed only to be printed changes nothing);
    the scans' bars go to stderr only when it is a terminal (a notebook or a log would store
    them)."""
    quiet = _monitored_cg()
    assert capsys.readouterr().out == ""
    loud = _monitored_cg(verbose=5)
    out = capsys.readouterr()
    assert loud.objective == quiet.objective and loud.iterations == quiet.iterations
    np.testing.assert_array_equal(loud.solution, quiet.solution)
    lines = out.out.splitlines()
    assert lines[0].startswith("numax-cg: 120 points") and lines[1].startswith("cg: 120 points")
    assert any(line.startswith("admm it ") for line in lines)
    assert sum("solving on" in line for line in lines) == loud.extra["rounds"]
    assert out.err == ""                                     # stderr is not a terminal: no bar
    terminal = io.StringIO()
    terminal.isatty = lambda: True
    monkeypatch.setattr(sys, "stderr", terminal)
    _monitored_cg(verbose=5)
    assert "cg round 1 scan" in terminal.getvalue()         # the scan's progress bar, on stderr


def test_pair_distances_keep_blocks_within_the_memory_budget(monkeypatch):
    from sdpembed.solvers.numax import pair_scan

    # the default budget holds the distances of all 10,000 MNIST test images (the rectangles of their
    # blocks: 5.2e7 entries, 0.42 GB)
    assert pair_scan.rectangle_entries(10_000, pair_scan.default_block_rows(10_000)) * pair_scan.CACHE_PAIR_BYTES \
        <= pair_scan.CACHE_BYTES
    monkeypatch.setattr(pair_scan, "physical_memory", lambda: 1 << 40)
    assert pair_scan.cache_pairs_limit(8_000) == 1000
    assert pair_scan.cache_pairs_limit() == pair_scan.CACHE_BYTES // pair_scan.CACHE_PAIR_BYTES
    # at most an eighth of the machine: a machine of 8 * 8 * 100 bytes keeps 100 entries
    monkeypatch.setattr(pair_scan, "physical_memory", lambda: 8 * pair_scan.CACHE_PAIR_BYTES * 100)
    assert pair_scan.cache_pairs_limit() == 100
    X = np.random.default_rng(0).standard_normal((15, 4))
    bounds = lambda i, j: (np.full(i.shape, 0.9), np.full(i.shape, 1.1))   # noqa: E731
    # blocks of 3 rows: 15 points make 118 entries (over the budget), 13 points 90 (within it)
    for points, kept in ((X, False), (X[:13], True)):
        entries = pair_scan.rectangle_entries(points.shape[0], 3)
        distances = PairDistances(points, 3)
        first = scan_pair_violations(points, np.eye(4), bounds, tol=0.0, distances=distances)
        again = scan_pair_violations(points, np.eye(4), bounds, tol=0.0, distances=distances)
        assert bool(distances._blocks) == kept == (entries <= 100)
        kept_entries = sum(block.dX.size for block in distances._blocks.values())
        assert kept_entries * pair_scan.CACHE_PAIR_BYTES <= 8 * pair_scan.CACHE_PAIR_BYTES * 100
        # the distances are kept, 8 bytes an entry
        assert sum(block.dX.nbytes for block in distances._blocks.values()) == kept_entries * pair_scan.CACHE_PAIR_BYTES
        assert kept_entries == (entries if kept else 0)
        np.testing.assert_array_equal(first.violation, again.violation)


@pytest.mark.parametrize("n, start, stop", [(2, 0, 1), (7, 0, 6), (7, 2, 5), (40, 13, 17), (40, 38, 39)])
def test_block_pairs_are_the_later_rows_in_row_major_order(n, start, stop):
    from sdpembed.solvers.numax.pair_scan import block_pairs

    rows, cols, i, j, ri, ci = block_pairs(start, stop, n)
    ref_ri, ref_ci = np.nonzero(cols[None, :] > rows[:, None])
    np.testing.assert_array_equal(ri, ref_ri)
    np.testing.assert_array_equal(ci, ref_ci)
    assert ri.dtype == ci.dtype == np.int32
    np.testing.assert_array_equal(i, rows[ref_ri])
    np.testing.assert_array_equal(j, cols[ref_ci])


def _spread_reference(i, j, violation, index, max_add):
    """The selection rule written plainly: each point's worst pair (first in violation order, ties to
    the earlier pair), those pairs in violation order, then the worst of the rest; all when they fit."""
    if index.size <= max_add:
        return index
    order = sorted(range(violation.size), key=lambda k: (-violation[k], k))
    seen, spread = set(), []
    for k in order:
        if i[k] not in seen or j[k] not in seen:
            spread.append(k)
        seen.update((i[k], j[k]))
    chosen = spread[:max_add]
    chosen += [k for k in order if k not in set(chosen)][: max_add - len(chosen)]
    return index[np.array(chosen, dtype=np.int64)]


@pytest.mark.parametrize("seed", range(4))
def test_spread_violators_takes_each_points_worst_pair_first(seed):
    from sdpembed.solvers.numax.candidates import _spread_violators

    rng = np.random.default_rng(seed)
    n = 30
    i = rng.integers(0, n - 1, 400)
    j = i + 1 + rng.integers(0, n - 1 - i)
    violation = np.round(rng.random(400), 2)                 # ties
    index = rng.permutation(10_000)[:400]
    for max_add in (1, 10, 25, 60, 399, 400):
        np.testing.assert_array_equal(_spread_violators(i, j, violation, index, max_add),
                                      _spread_reference(i, j, violation, index, max_add))


def test_loose_hold_keeps_every_pair_and_reaches_the_same_certified_optimum(monkeypatch):
    """After a loose round that changes few pairs, ``loose_hold`` keeps them all (the next round extends
    its factor instead of refactorising); the certified optimum is that of a run that drops them."""
    from sdpembed.solvers.numax.column_generation import _NuMaxADMM

    X = digits_points(120, seed=3)
    instance = NuMaxInstance(delta=0.1, X=X)
    solve_, carry_ = _NuMaxADMM.solve, _NuMaxADMM.carry
    runs = {}
    calls = []
    monkeypatch.setattr(_NuMaxADMM, "solve", lambda self, *a, **k: calls.append(("solve", a[4])) or solve_(
        self, *a, **k))
    monkeypatch.setattr(_NuMaxADMM, "carry", lambda self, result, keep, n: calls.append(
        ("carry", bool(keep.all()), int(keep.size), n)) or carry_(self, result, keep, n))
    for hold in (None, 1.0):
        calls.clear()
        runs[hold] = solve_numax_cg(instance, initial_pairs=300, max_add=150, random_state=0, loose_hold=hold)
        # each carry follows its round's solve: (tight, all kept, working pairs, added)
        rounds = [(calls[k][1], *calls[k + 1][1:]) for k in range(len(calls) - 1)
                  if calls[k][0] == "solve" and calls[k + 1][0] == "carry"]
        loose = [r for r in rounds if not r[0]]
        assert loose, "no loose round was followed by another: the test does not exercise the hold"
        if hold is None:
            assert not all(r[1] for r in loose)        # the keep rule drops pairs after some loose round
        else:
            assert any(r[3] < r[2] for r in loose) and all(r[1] for r in loose if r[3] < r[2])
    held, dropped = runs[1.0], runs[None]
    assert held.status == dropped.status == "optimal"
    assert held.max_violation <= 1e-6 and held.relative_gap <= 1e-5
    assert abs(held.objective - dropped.objective) <= 1e-5 * dropped.objective


def test_settle_ends_the_run_certified_without_another_restricted_solve():
    """When the scan after an optimal tight round adds a few pairs, a polish of the factor over them and
    the working set can settle them: the run ends a round earlier, and its result is certified from
    scratch — every pair within its bounds, the multipliers (zero on the settled pairs) prove the bound,
    the gap within tolerance — at the optimum of a run that solves again."""
    X = digits_points(150, seed=2)
    instance = NuMaxInstance(delta=0.2, X=X)
    options = dict(initial_pairs=300, max_add=200, random_state=0)
    settled = solve_numax_cg(instance, **options)
    plain = solve_numax_cg(instance, settle=False, **options)
    assert settled.status == plain.status == "optimal"
    assert settled.extra["settled"] >= 1 and plain.extra["settled"] == 0
    assert settled.extra["rounds"] < plain.extra["rounds"]
    assert "settled by a polish" in settled.message
    P = settled.solution
    assert settled.objective == pytest.approx(np.trace(P), rel=1e-12)
    assert np.linalg.eigvalsh(P)[0] >= -1e-10
    assert instance.max_violation(P) <= 1e-6                # every pair, densely
    pairs, y = settled.extra["pairs"], settled.extra["y"]
    assert len(pairs) == len(y) and not np.any(y[-settled.extra["settled"]:])
    verified = instance.verified_dual_bound(pairs, y)
    assert verified == pytest.approx(settled.dual_bound, rel=1e-9)
    assert (settled.objective - verified) / settled.objective <= 1e-5
    assert abs(settled.objective - plain.objective) <= 1e-5 * plain.objective
    assert "polish_system" not in settled.extra


def test_a_settle_whose_scan_fails_leaves_the_round_its_warm_start(monkeypatch):
    """If the settled point then fails its all-pairs scan, the run goes on from the round's own result:
    the settle attempt must leave that result's S × S warm start (its factor of I + 𝒜𝒜*) in place, and
    the run still ends at the optimum of a run without settling."""
    from sdpembed.solvers.numax import column_generation as cg

    real, seen = cg._settled, []

    def failing_scan(candidates, inner, result, *args):
        real(candidates, inner, result, *args)
        seen.append(result.state.factor is not None or result.state.K_inv is not None)
        return None                                     # as if the scan had found a violated pair

    monkeypatch.setattr(cg, "_settled", failing_scan)
    X = digits_points(150, seed=2)
    instance = NuMaxInstance(delta=0.2, X=X)
    options = dict(initial_pairs=300, max_add=200, random_state=0)
    run = solve_numax_cg(instance, **options)
    monkeypatch.undo()
    plain = solve_numax_cg(instance, settle=False, **options)
    assert seen and all(seen)
    assert run.status == plain.status == "optimal" and run.extra["settled"] == 0
    assert abs(run.objective - plain.objective) <= 1e-5 * plain.objective


def test_restricted_solves_work_in_the_points_span_when_it_has_a_faint_direction(monkeypatch):
    """The points' span keeps every direction above rounding: one of 1e-7 of the largest singular value
    (MNIST's 10,000 test images have one of 6e-7) is a direction of the secants, and a basis without it
    fails the restricted ADMM's check, which then recomputes a span from each round's secants (here:
    none, all N dimensions). With it, no round does; the certified optimum is that of the full space."""
    import sdpembed.solvers.numax.admm_pairs as admm_pairs
    from sdpembed.problems.numax_operator import PairSecantOperator
    from sdpembed.solvers.numax.column_generation import _points_span
    from sdpembed.solvers.numax.pair_linalg import holds_secants

    rng = np.random.default_rng(4)
    X = np.zeros((60, 30))
    X[:, :8] = rng.standard_normal((60, 8))
    X[7, 8] = 1e-7 * np.linalg.norm(X[:, :8], 2)      # a faint direction of one point
    basis = _points_span(X)
    assert basis is not None and basis.shape == (30, 9)
    i, j = np.triu_indices(60, 1)
    assert holds_secants(PairSecantOperator(X, i, j), basis)

    spans, moved = [], []
    secant_span, in_basis = admm_pairs.secant_span, PairSecantOperator.in_basis
    monkeypatch.setattr(admm_pairs, "secant_span", lambda V: spans.append(V.shape) or secant_span(V))
    monkeypatch.setattr(PairSecantOperator, "in_basis", lambda self, Q: moved.append(1) or in_basis(self, Q))
    instance = NuMaxInstance(delta=0.1, X=X)
    result = solve_numax_cg(instance, initial_pairs=200, max_add=100, random_state=0)
    assert result.status == "optimal" and result.extra["rounds"] > 1
    assert spans == []                                 # every round in the points' span
    assert moved == []                                 # its points' coordinates computed once, not each round
    full = solve_numax_cg(instance, initial_pairs=200, max_add=100, random_state=0,
                          admm_options={"basis": np.eye(30)})
    assert full.status == "optimal"
    assert abs(result.objective - full.objective) <= 1e-5 * full.objective
    assert instance.max_violation(result.solution) <= 1e-6


def near_duplicates(seed: int, n: int = 24, dim: int = 12) -> np.ndarray:
    """Points in pairs 10⁻⁷ apart (review r21's fuzz): their secants are well defined (the differences
    lose ≈ ε/10⁻⁷ ≈ 10⁻⁹ to rounding) but ≈ 10⁷ times shorter than the points' norms."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, dim))
    X[1::2] = X[0::2] + 1e-7 * rng.standard_normal((n // 2, dim))
    return X


def test_the_adjoint_of_near_duplicate_pairs_is_accurate():
    """𝒜*(y) through the points' Laplacian forms a short pair's term as a difference of terms ≈ 10¹⁴ times
    larger; the short pairs' terms come from their secants (before: errors ≈ 10⁻² of the result, which kept the
    ADMM from converging)."""
    from sdpembed.problems.numax_operator import PairSecantOperator
    from sdpembed.solvers.numax.pair_linalg import PairGeometry

    X = near_duplicates(0)
    i, j = np.triu_indices(X.shape[0], 1)
    op = PairSecantOperator(X, i, j)
    assert op.short.size == X.shape[0] // 2                       # the near-duplicate pairs, only they
    y = np.random.default_rng(1).standard_normal(i.size)
    exact = (op.V.T * y) @ op.V
    scale = np.abs(exact).max()
    geometry = PairGeometry(op)
    block = np.random.default_rng(2).standard_normal((X.shape[1], 3))
    for formed in (op.adjoint(y), geometry.adjoint(y)):
        assert np.abs(formed - exact).max() <= 1e-12 * scale
    assert np.abs(geometry.adjoint_apply(y, block) - exact @ block).max() <= 1e-12 * scale * np.abs(block).max()


@pytest.mark.parametrize(("seed", "delta"), [(0, 0.05), (1, 0.2), (2, 0.95)])
def test_point_form_cg_certifies_near_duplicate_points(seed, delta, tmp_path):
    # review r21's fuzz: 9 such instances ended inaccurate ('violations remain on working pairs the ADMM did
    # not resolve', 20,000 ADMM iterations at violation 1e-2) and 9 ran out of time
    from sdpembed.io import read_solution, write_solution
    from sdpembed.validation.verify import verify_solution

    instance = NuMaxInstance.from_data(near_duplicates(seed), None, delta, point_form=True)
    result, truth = solve(instance, "cg"), solve(instance, "cvxpy", solver="CLARABEL")
    assert result.status == "optimal", result.message
    assert truth.dual_bound <= result.objective + 1e-5 * truth.objective
    assert result.dual_bound <= truth.objective + 1e-6 * truth.objective
    assert result.objective == pytest.approx(truth.objective, rel=2e-5)
    path = tmp_path / "solution.npz"
    write_solution(path, instance, result)
    certificate = verify_solution(instance, read_solution(path, instance))
    assert certificate.passed, certificate.reasons


def fuzz_near_duplicates(seed: int) -> np.ndarray:
    """Review r21's fuzz generator of near-duplicate points (20–69 points in R^8–R^39, pairs 10⁻⁷ apart),
    draw for draw."""
    rng = np.random.default_rng(seed)
    n, dim, _ = int(rng.integers(20, 70)), int(rng.integers(8, 40)), rng.integers(5)
    X = rng.standard_normal((n, dim))
    X[1::2] = X[0::2][: n // 2] + 1e-7 * rng.standard_normal(X[1::2].shape)
    return X


def test_a_pair_admm_stopping_at_the_tolerance_on_near_duplicates_is_certified(tmp_path):
    """Fuzz case 591 (20 points, δ 0.05): the last restricted ADMM stopped on a violation just within 10⁻⁶
    computed through the points, while the short pairs' explicit rows (the certificate's) differ by ≈ 2·10⁻⁹
    and gave 1.00011·10⁻⁶: 'inaccurate'. A certified run's stopping test now reads the short pairs' values
    off their explicit rows."""
    instance = NuMaxInstance.from_data(fuzz_near_duplicates(591), None, 0.05, point_form=True)
    result, truth = solve(instance, "cg"), solve(instance, "cvxpy", solver="CLARABEL")
    assert result.status == "optimal", result.message
    assert instance.max_violation(result.solution) <= 1e-6
    assert truth.dual_bound <= result.objective + 1e-5 * truth.objective
    assert result.dual_bound <= truth.objective + 1e-6 * truth.objective
    assert verified_through_files(instance, result, tmp_path)


@pytest.mark.parametrize(("seed", "n", "dim"), [(0, 24, 10), (1, 34, 20)])
def test_full_rank_optima_at_small_delta_are_certified(seed, n, dim, tmp_path):
    """δ = 0.005 on Gaussian points (review r21's fuzz case 471): P has full rank, the problem is degenerate and
    the restricted pair ADMM ended at 20,000 iterations with violations ≈ 4·10⁻⁶ ('inaccurate'); its linear
    program without the cone (exact when P is definite) now settles it."""
    X = np.random.default_rng(seed).standard_normal((n, dim))
    instance = NuMaxInstance.from_data(X, None, 0.005, point_form=True)
    result, truth = solve(instance, "cg"), solve(instance, "cvxpy", solver="CLARABEL")
    assert result.status == "optimal", result.message
    assert result.iterations < 2000
    assert truth.dual_bound <= result.objective + 1e-6 * truth.objective
    assert result.dual_bound <= truth.objective + 1e-6 * truth.objective
    assert verified_through_files(instance, result, tmp_path)


@pytest.mark.parametrize("exponent", [200, -200])
def test_points_far_from_unit_scale_give_the_same_certified_optimum(exponent, tmp_path):
    """The pairs' unit secants do not change when X is scaled by a power of two, nor does the SDP; the restricted
    solves' products of the points' coordinates did: at 2^±140 and beyond the pair ADMM's eigensolver failed on
    inf/NaN ('Eigenvalues did not converge', review r22). The points are now brought to unit scale exactly; the
    written solution is checked by verify."""
    X = np.random.default_rng(0).standard_normal((8, 5))
    reference = solve(NuMaxInstance.from_data(X, None, 0.2, point_form=True), "cg")
    instance = NuMaxInstance.from_data(X * 2.0**exponent, None, 0.2, point_form=True)
    result = solve(instance, "cg")
    assert reference.status == result.status == "optimal", result.message
    assert result.objective == pytest.approx(reference.objective, rel=1e-12)
    assert verified_through_files(instance, result, tmp_path)
