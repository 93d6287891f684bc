"""CPU-time limits (``cpu_time_limit``, sdpembed._deadline): a budget of CPU seconds stops a solver when the
process has used them, and not when wall-clock time passes while it waits (a loaded machine, a sleep). The two
clocks are replaced by counters that jump by a million seconds at every reading."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from sdpembed import _deadline
from sdpembed._deadline import Deadline, DeadlinePassed, check_time_limit
from sdpembed.datasets import swiss_roll
from sdpembed.problems import MVUInstance
from sdpembed.problems.lmnn import MultiMetricLMNNInstance
from sdpembed.problems.mvu import dual_bound
from sdpembed.registry import solve
from sdpembed.solvers.lmnn.fast import solve_lmnn_fast, solve_multi_metric_fast
from sdpembed.solvers.mvu import facial
from sdpembed.solvers.mvu.facial import solve_mvu_facial
from sdpembed.solvers.mvu.ipm import solve_mvu_ipm
from sdpembed.solvers.mvu.lowrank import solve_mvu_lowrank
from sdpembed.solvers.near_isometric.fromax import fromax
from sdpembed.solvers.near_isometric.nilepro import nilepro
from sdpembed.solvers.numax.admm_control import ADMMStopping

from ..conftest import small_instances, tiny_lmnn_instances
from .mvu.test_facial import _bodies
from .mvu.test_lowrank import _tiny


def _jumping() -> object:
    """A clock that advances by 1e6 seconds at every reading."""
    ticks = itertools.count(0.0, 1e6)
    return lambda: next(ticks)


def _still() -> object:
    return lambda: 0.0


def test_a_deadline_passes_on_the_clock_it_counts():
    assert Deadline.of() is None and Deadline.of(None, None) is None
    # wall time flies (a sleeping or starved process): only a wall-clock budget is spent
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_deadline, "_wall", _jumping())
        mp.setattr(_deadline, "_cpu", _still())
        assert not Deadline(cpu_time_limit=10.0).passed()
        wall = Deadline(time_limit=10.0)
        assert wall.passed() and wall.reached() == "time limit of 10s reached"
    # CPU time is used while the wall clock stands still (k BLAS threads: k CPU seconds per second)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_deadline, "_wall", _still())
        mp.setattr(_deadline, "_cpu", _jumping())
        cpu = Deadline(time_limit=10.0, cpu_time_limit=20.0)
        assert cpu.passed() and cpu.reached() == "CPU-time limit of 20s reached"
        assert not Deadline(time_limit=10.0).passed()
        mp.setattr(_deadline, "_cpu", _jumping())     # readings 0, 1e6, 2e6, ...
        half = Deadline(cpu_time_limit=3e6, cpu_start=0.0)
        assert not half.passed() and half.share(0.1).passed()


@pytest.mark.parametrize("value", [-1.0, float("nan"), float("inf"), True, "5"])
def test_a_time_limit_is_a_non_negative_number_of_seconds(value):
    with pytest.raises(ValueError, match="cpu_time_limit must be a non-negative number of seconds"):
        check_time_limit(value, "cpu_time_limit")
    with pytest.raises(ValueError, match="cpu_time_limit"):
        solve_mvu_ipm(_tiny(0, "inequality", None), cpu_time_limit=value)
    with pytest.raises(ValueError, match="time_limit"):
        solve_lmnn_fast(tiny_lmnn_instances()["wine"], time_limit=value)


def _multi_instance():
    wine = tiny_lmnn_instances()["wine"]
    return MultiMetricLMNNInstance(X=wine.X, y=wine.y, targets=wine.targets, mu=wine.mu)


def _facial_instance():
    # three bodies whose clique stress leaves a face the interior point solves (60 iterates; test_facial)
    return _bodies([10, 10, 6], [(0, 1, 10, True), (0, 2, 3, False)], 0)[1]


def _secants() -> np.ndarray:
    X = np.random.default_rng(5).standard_normal((30, 6))
    i, j = np.triu_indices(30, 1)
    V = X[i] - X[j]
    return V / np.linalg.norm(V, axis=1)[:, None]


SOLVERS = {
    "mvu ipm": (lambda **kw: solve_mvu_ipm(_tiny(0, "inequality", None), **kw), "CPU-time limit of 5s reached"),
    "mvu lowrank": (lambda **kw: solve_mvu_lowrank(_tiny(0, "inequality", None), **kw),
                    "CPU-time limit of 5s reached"),
    # a stopped run over the face is not followed by the interior point over 1⊥ (its first iteration alone can
    # take minutes): 'inaccurate', the stop said in the message (test below)
    "mvu facial": (lambda **kw: solve_mvu_facial(_facial_instance(), gap_tol=1e-5, **kw), None),
    "lmnn fast": (lambda **kw: solve_lmnn_fast(tiny_lmnn_instances()["wine"], **kw), "time limit"),
    "lmnn multi fast": (lambda **kw: solve_multi_metric_fast(_multi_instance(), **kw), "time limit"),
    "numax admm": (lambda **kw: solve(small_instances()["squares49"], "admm", stopping=ADMMStopping(**kw)),
                   "CPU-time limit of 5s reached"),
    # column generation's limit is the whole run's: it also cuts a restricted solve (here the first, tight on all
    # pairs, which used to run to the end whatever the limit)
    "numax cg": (lambda **kw: solve(small_instances()["squares49"], "cg", loose_tol=None, **kw),
                 "CPU-time limit of 5s reached"),
    # the non-convex near-isometric maps (δ = 0.4 at rank 5 converges in 240 / 310 iterations)
    "fromax": (lambda **kw: fromax(_secants(), 0.4, 5, **kw), "CPU-time limit of 5s reached"),
    "nilepro": (lambda **kw: nilepro(_secants(), 0.4, 5, **kw), "CPU-time limit of 5s reached"),
}
DONE = {"fromax": "converged", "nilepro": "converged"}


@pytest.mark.parametrize("name", list(SOLVERS))
def test_a_cpu_budget_stops_on_cpu_time_and_not_on_wall_time(name, monkeypatch):
    solve, stopped_by = SOLVERS[name]
    done = DONE.get(name, "optimal")
    free = solve()
    assert free.status == done, free.message
    # a million wall seconds at every reading, no CPU time used: the CPU budget never runs out
    monkeypatch.setattr(_deadline, "_wall", _jumping())
    monkeypatch.setattr(_deadline, "_cpu", _still())
    waited = solve(cpu_time_limit=5.0)
    assert waited.status == done, waited.message
    value = (lambda r: r.isometry) if name in DONE else (lambda r: r.objective)
    assert value(waited) == pytest.approx(value(free), rel=1e-12)
    assert waited.iterations == free.iterations
    # the same wall clock ends a wall-clock budget at its first check
    assert solve(time_limit=5.0).status != done
    # a million CPU seconds at every reading: stopped at the first check, its bound still a proved one
    monkeypatch.setattr(_deadline, "_wall", _still())
    monkeypatch.setattr(_deadline, "_cpu", _jumping())
    spent = solve(cpu_time_limit=5.0)
    assert spent.status != done, spent.message
    assert stopped_by is None or (spent.status == "max_iterations" and stopped_by in spent.message), spent.message
    assert spent.iterations < free.iterations or free.iterations <= 1
    if name.startswith("mvu"):                     # MVU maximises: a bound lies above the optimum
        assert not np.isfinite(spent.dual_bound) or spent.dual_bound >= free.objective * (1.0 - 1e-6)
    elif name not in DONE:
        assert spent.dual_bound <= free.objective * (1.0 + 1e-6)


def test_facial_reduction_past_its_deadline_does_not_start_the_fallback(monkeypatch):
    # the fallback interior point over all of 1⊥ used to start after the limit and run one full iteration (Table
    # 3.2's noise-free roll, n = 2,000: 398 s CPU under a 300 s CPU limit); the CPU clock runs from the first lift
    # of the run over the face, which stops at its first check
    calls = _clock_runs_after(monkeypatch, "lift_multipliers")
    spent = solve_mvu_facial(_facial_instance(), gap_tol=1e-5, cpu_time_limit=5.0)
    assert spent.status != "optimal"
    assert "over all of 1⊥ not tried (CPU-time limit of 5s reached)" in spent.message, spent.message
    runs = [c for c in calls if c[0] == "solve_in_face"]
    assert len(runs) == 1 and runs[0][1] is not None          # the run over the face only
    # nor is its final certificate lifted once more and made complementary to K's support
    assert calls.count("lift_multipliers") == 1 and "equilibrate" not in calls, calls
    assert "not made complementary to K's support (CPU-time limit of 5s reached)" in spent.message, spent.message


def _clock_runs_after(monkeypatch, name: str) -> list:
    """From the return of facial's ``name`` on, every reading of the CPU clock advances 1e6 s (still before, and
    the wall clock always); calls of facial's steps, and solve_in_face's bases, are recorded."""
    running, ticks, calls = [False], itertools.count(1e6, 1e6), []
    monkeypatch.setattr(_deadline, "_wall", _still())
    monkeypatch.setattr(_deadline, "_cpu", lambda: next(ticks) if running[0] else 0.0)

    def recorded(step: str, real):
        def wrapped(*a, **kw):
            calls.append((step, kw.get("basis")) if step == "solve_in_face" else step)
            out = real(*a, **kw)
            running[0] = running[0] or step == name
            return out
        return wrapped

    for step in ("clique_stress", "face_of_stress", "_edge_system", "face_stress", "face_stress_dual",
                 "lift_multipliers", "equilibrate", "solve_in_face"):
        monkeypatch.setattr(facial, step, recorded(step, getattr(facial, step)))
    return calls


@pytest.mark.parametrize(("instance", "after", "said", "skipped"), [
    (_facial_instance, "clique_stress", "after the clique stresses", "face_of_stress"),
    (_facial_instance, "face_of_stress", "after facial-reduction step 1 (face of dimension", "face_stress"),
    # two bodies locked by bars: a second step's face (dimension 3), where the edges determine K
    (lambda: _bodies([8, 8], [(0, 1, 8, True)], 0)[1], "face_stress", "after facial-reduction step 2 (face of "
     "dimension 3)", "lift_multipliers"),
])
def test_facial_reduction_checks_its_deadline_between_its_steps(instance, after, said, skipped, monkeypatch):
    # a step of facial reduction at n = 2,000 can take minutes: the deadline is checked after each, and a run
    # stopped before any face's multipliers exist returns the interior point's start over all of 1⊥ with the
    # proved bound of its starting multipliers (before: every step ran, then the run over the face)
    inst = instance()
    free = solve_mvu_facial(inst, gap_tol=1e-5)
    calls = _clock_runs_after(monkeypatch, after)
    spent = solve_mvu_facial(inst, gap_tol=1e-5, cpu_time_limit=5.0)
    assert spent.status == "max_iterations" and spent.iterations == 1
    assert f"facial reduction stopped {said}" in spent.message and "CPU-time limit of 5s reached" in spent.message
    assert skipped not in calls and calls[-1] == ("solve_in_face", None), calls
    # a proved bound of the original SDP: re-proved from the returned multipliers, above the optimum
    assert dual_bound(inst, spent.extra["y"])[0] == pytest.approx(spent.dual_bound, rel=1e-12)
    assert spent.dual_bound >= free.objective * (1.0 - 1e-9)


def test_facial_reduction_past_its_deadline_skips_equilibrate_and_keeps_the_lifts_proof(monkeypatch):
    # the deadline passes during the lift of the locked two bodies' certificate: its proof stands, the
    # complementarity correction (equilibrate, a sparse least-norm solve per step, then six more proofs) is skipped
    inst = _bodies([8, 8], [(0, 1, 8, True)], 0)[1]
    free = solve_mvu_facial(inst, gap_tol=1e-5)
    calls = _clock_runs_after(monkeypatch, "lift_multipliers")
    spent = solve_mvu_facial(inst, gap_tol=1e-5, cpu_time_limit=5.0)
    assert "equilibrate" not in calls and calls.count("lift_multipliers") == 1, calls
    assert "not made complementary to K's support: CPU-time limit of 5s reached" in spent.message, spent.message
    assert spent.extra["determined"] and spent.objective == pytest.approx(free.objective, rel=1e-12)
    assert dual_bound(inst, spent.extra["y"])[0] == pytest.approx(spent.dual_bound, rel=1e-12)
    assert spent.dual_bound >= free.objective * (1.0 - 1e-9)


def _roll(n: int, k: int) -> MVUInstance:
    # Fig. 3.28's distance-only swiss roll (8 high, noise-free, linked); at k = 4 its clique stress leaves a face of
    # dimension n − 11 or so, whose further step is the auxiliary SDP in the edge multipliers (face_stress_dual)
    X, _ = swiss_roll(n, noise=0.0, height=8.0, random_state=0)
    return MVUInstance.from_points(X, k, "equality", angles=False, link=True, random_state=0)


def test_facial_reduction_stops_inside_a_long_step_within_a_small_overrun():
    # n = 250, k = 4: the further step in the face of dimension 239 takes about 9 s CPU (13 centres, no stress found)
    # and used to run to its end past any limit (at n = 1,000 past a 45 s limit by more than 300 s). Its Newton steps
    # check the deadline: a 0.5 s CPU limit ends the solve within 0.5 s of it (the last Newton step, the stop's
    # starting point and its proof), non-optimal, with a bound that is proved again from its multipliers
    inst = _roll(250, 4)
    start = time.process_time()
    spent = solve_mvu_facial(inst, cpu_time_limit=0.5)
    used = time.process_time() - start
    assert used <= 1.0, used
    assert spent.status == "max_iterations", spent.message
    assert "facial reduction stopped during facial-reduction step 2 (the auxiliary SDP of the face of dimension " \
           "239 in the edge multipliers" in spent.message, spent.message
    assert "CPU-time limit of 0.5s reached" in spent.message
    assert dual_bound(inst, spent.extra["y"])[0] == pytest.approx(spent.dual_bound, rel=1e-12)
    assert spent.max_violation > 1e-6 or spent.relative_gap > 1e-6


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_the_auxiliary_sdp_of_a_further_step_raises_at_a_passed_deadline(form, monkeypatch):
    # an unfinished central path exposes no face: the step raises DeadlinePassed for its caller, which returns the
    # run's start with its proved bound (above); a deadline that does not pass leaves the step's answer unchanged
    inst = _bodies([8, 8], [(0, 1, 8, True)], 0)[1] if form == "primal" else _roll(150, 4)
    step = facial.face_stress if form == "primal" else facial.face_stress_dual
    omega, _ = facial.clique_stress(inst.n, inst.edges, inst.sqdist)
    face = facial.face_of_stress(inst.n, inst.edges, omega)
    free = step(inst, face)
    monkeypatch.setattr(_deadline, "_wall", _still())
    monkeypatch.setattr(_deadline, "_cpu", _still())
    unspent = step(inst, face, deadline=Deadline(cpu_time_limit=5.0))
    np.testing.assert_array_equal(unspent[0], free[0])
    assert unspent[1].dim == free[1].dim
    deadline = Deadline(cpu_time_limit=5.0)
    monkeypatch.setattr(_deadline, "_cpu", _jumping())
    with pytest.raises(DeadlinePassed, match="CPU-time limit of 5s reached"):
        step(inst, face, deadline=deadline)


def test_facial_reduction_stops_inside_a_step_at_its_first_newton_check(monkeypatch):
    # the clock runs from the edges' system of the second step's face (two bodies locked by bars): before, the step
    # ran to its end and the run stopped after it; now its first Newton step stops it
    inst = _bodies([8, 8], [(0, 1, 8, True)], 0)[1]
    free = solve_mvu_facial(inst, gap_tol=1e-5)
    calls = _clock_runs_after(monkeypatch, "_edge_system")
    spent = solve_mvu_facial(inst, gap_tol=1e-5, cpu_time_limit=5.0)
    assert spent.status == "max_iterations" and spent.iterations == 1
    assert "facial reduction stopped during facial-reduction step 2 (the auxiliary SDP of the face of dimension 7)" \
           in spent.message, spent.message
    assert "lift_multipliers" not in calls and calls[-1] == ("solve_in_face", None), calls
    assert spent.dual_bound >= free.objective * (1.0 - 1e-9)


def test_a_final_certificate_past_its_deadline_keeps_the_least_bound_proved_so_far(monkeypatch):
    # the locked two bodies: the deadline passes during equilibrate, after the plain lift was proved; of the six
    # proofs of the equilibrated multipliers (FINAL_EPSILONS) none is started, the plain lift's bound stands
    inst = _bodies([8, 8], [(0, 1, 8, True)], 0)[1]
    free = solve_mvu_facial(inst, gap_tol=1e-5)
    calls = _clock_runs_after(monkeypatch, "equilibrate")
    spent = solve_mvu_facial(inst, gap_tol=1e-5, cpu_time_limit=5.0)
    assert calls.count("equilibrate") == 1 and calls.count("lift_multipliers") == 1, calls
    assert "stopped after proving 1 candidate multipliers (CPU-time limit of 5s reached)" in spent.message
    assert spent.objective == pytest.approx(free.objective, rel=1e-12)
    assert dual_bound(inst, spent.extra["y"])[0] == pytest.approx(spent.dual_bound, rel=1e-12)
    assert spent.dual_bound >= free.dual_bound * (1.0 - 1e-12)


def test_polish_in_face_past_its_deadline_returns_its_start(monkeypatch):
    inst = _facial_instance()
    omega, _ = facial.clique_stress(inst.n, inst.edges, inst.sqdist)
    V = facial.face_of_stress(inst.n, inst.edges, omega).V
    K = solve_mvu_facial(inst, gap_tol=1e-5, max_iter=5).solution
    monkeypatch.setattr(_deadline, "_wall", _still())
    monkeypatch.setattr(_deadline, "_cpu", _jumping())
    stopped = facial.polish_in_face(inst, V, K, deadline=Deadline(cpu_time_limit=5.0))
    np.testing.assert_array_equal(stopped, facial.polish_in_face(inst, V, K, steps=0))
