"""Benchmark: proof-carrying solutions on instances too large for the CVXPY ground truth (issue 27).

For every registered problem and variant (NuMax and NuMax-Class with explicit secants and in point
form, LMNN, the multi-metric LMNN, the four MVU variants, MVU out-of-sample) one instance just above
the size the CVXPY ground truth accepts (the limits are read from the formulations:
``MAX_SECANTS``, ``MAX_TRIPLETS``, ``MAX_POINTS``) is

1. built by ``sdpembed make-instance`` (MVU out-of-sample, which the command line cannot build, by
   the suite's recipe ``MVUOOSInstance.from_points`` on an unrolled swiss roll),
2. solved by ``sdpembed solve --json`` in a subprocess (the problem's default hand-written method, or the
   case's ``method`` where the default does not certify at that size: exact MVU equality at n = 1,000 is
   certified by facial reduction, the benchmark of record ``benchmarks/mvu_lowrank.py --solvers facial``),
3. verified by ``sdpembed verify --json`` in a subprocess in which ``import cvxpy`` raises ImportError
   (the blocker of ``tests/contract/test_without_cvxpy.py``) and the instance stores no optimum:
   the objective can only be judged against the bound that ``verify`` proves from the multipliers
   in the solution file. The subprocess times the problem's ``verified_bound`` hook (the proof)
   inside the verification.

Every outcome is a row: a solve that is refused, runs out of memory or time, or ends short of
``optimal``, and a verification that fails, are shown as such. Solve and verify processes get
``--memory`` GiB of address space and ``--timeout`` seconds each; every row records its own. ``--only``
replaces the named rows of ``--json`` and keeps the others.

    python benchmarks/proofs.py [--large] [--only NAME[,NAME...]] [--timeout 1800] [--memory 8]

``--large`` adds the issues' big cases: inequality MVU on a 1,000-point swiss roll, LMNN on
MNIST-5000 (PCA-50) and NuMax-CG on 800 MNIST images (issue 27); LMNN at the thesis' scale (7,000 training
images of the vendored MNIST-10k, PCA-164, k = 3), exact inequality MVU at n = 2,500 and exact equality MVU at
n = 1,000 by facial reduction, on the graph of ``benchmarks/mvu_lowrank.py`` (issue 25). One BLAS thread.
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import report  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: ``import cvxpy`` fails in the verifying interpreter (as in tests/contract/test_without_cvxpy.py).
BLOCKER = """
import importlib.abc, sys

class BlockCVXPY(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "cvxpy" or name.startswith("cvxpy."):
            raise ImportError(f"import of {name!r} blocked: verify must prove the bound with numpy/SciPy alone")
        return None

sys.meta_path.insert(0, BlockCVXPY())
"""

#: ``sdpembed verify`` with the proof hook of every problem timed; the times go to the file argv[1].
VERIFY = BLOCKER + """
import dataclasses, json, time
from sdpembed import registry

timing = {"proof_s": 0.0, "proof_cpu_s": 0.0}

def timed(bound):
    def call(instance, multipliers, matrix):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return bound(instance, multipliers, matrix)
        finally:
            timing["proof_s"] += time.perf_counter() - wall
            timing["proof_cpu_s"] += time.process_time() - cpu
    return call

for name, spec in list(registry.PROBLEMS.items()):
    if spec.verified_bound is not None:
        registry.PROBLEMS[name] = dataclasses.replace(spec, verified_bound=timed(spec.verified_bound))

from sdpembed.cli import main

code = main(sys.argv[2:])
timing["cvxpy_imported"] = "cvxpy" in sys.modules
with open(sys.argv[1], "w") as out:
    json.dump(timing, out)
sys.exit(code)
"""


@dataclass(frozen=True)
class Case:
    """One problem and variant: how its instance is made and why CVXPY is not asked."""

    name: str
    problem: str
    form: str
    make: list[str] | Callable[[Path], None]
    limit: Callable[[], tuple[int, str]]
    size: Callable[[object], int] = field(default=lambda instance: instance.n_constraints)
    large: bool = False
    #: ``sdpembed solve --method``; None: the problem's default method
    method: str | None = None
    #: ``sdpembed solve --gap-tol``; None: the method's default
    gap_tol: float | None = None


def _secant_limit() -> tuple[int, str]:
    from sdpembed.formulations.numax import MAX_SECANTS

    return MAX_SECANTS, f"secants > {MAX_SECANTS:,} (formulations.numax.MAX_SECANTS)"


def _triplet_limit() -> tuple[int, str]:
    from sdpembed.formulations.lmnn import MAX_TRIPLETS

    return MAX_TRIPLETS, f"triplets > {MAX_TRIPLETS:,} (formulations.lmnn.MAX_TRIPLETS)"


def _multi_limit() -> tuple[int, str]:
    from sdpembed.formulations.lmnn import MAX_TRIPLETS

    return MAX_TRIPLETS, (f"none enforced (solve_multi_metric_cvxpy states every triplet); LMNN's "
                          f"{MAX_TRIPLETS:,} triplets taken as the yardstick")


def _point_limit() -> tuple[int, str]:
    from sdpembed.formulations.mvu import MAX_POINTS

    return MAX_POINTS, f"points > {MAX_POINTS} (formulations.mvu.MAX_POINTS)"


def _oos_limit() -> tuple[int, str]:
    return 0, "none: an (r+1)×(r+1) SDP with k constraints; sized here by k"


def _mvu_oos_instance(n_train: int, k: int, seed: int = 0, noise: float = 0.5) -> Callable[[Path], None]:
    """The suite's recipe (a new point of an unrolled swiss roll), larger: the command line builds no
    out-of-sample instance (it needs an embedding of the training points)."""

    def make(path: Path) -> None:
        """MVUOOSInstance.from_points on an unrolled swiss roll (the suite's recipe)"""
        from sdpembed import datasets
        from sdpembed.problems import MVUOOSInstance
        from sdpembed.problems.suite_cases import _unrolled_swiss

        X, Y = _unrolled_swiss(n_train + 1, seed)
        x_new = X[-1] + noise * datasets.gaussian_points(1, X.shape[1], random_state=seed + 7)[0]
        MVUOOSInstance.from_points(X[:-1], Y[:-1], x_new, k).save(path)

    return make


def _lmnn_peers_instance(problem: str, dataset: str) -> Callable[[Path], None]:
    """LMNN (or the multi-metric LMNN) on the training part of a data set of ``benchmarks/lmnn_peers.py``
    (PCA, then standardised, or at the thesis' scale one RMS scale for every coordinate; k = 3, μ = 0.5):
    the command line has no PCA."""

    def make(path: Path) -> None:
        from lmnn_peers import MU, K, load

        from sdpembed.registry import get_problem

        X, _, y, _ = load(dataset)
        get_problem(problem).instance_type.from_data(X, y, k=K, mu=MU).save(path)

    make.__doc__ = f"{problem} instance of benchmarks/lmnn_peers.py's {dataset} (training part, as load() scales it)"
    return make


def _mvu(variant: str, n: int, *graph: str, large: bool = False, method: str | None = None,
         gap_tol: float | None = None) -> Case:
    """An MVU variant on a swiss roll of ``n`` points: k = 5 with angle edges (the issue's graph) unless
    ``graph`` gives other make-instance options; solved by ``method`` (None: the default)."""
    # ω = 0.9 (the suite's) leaves this graph's slack SDP unbounded (ω·λ₂(L) < 1 − ω); 0.99 bounds it
    omega = ["--omega", "0.99"] if variant == "slack" else []
    graph = graph or ("--k", "5")
    return Case(f"mvu-{variant}-swiss{n}" + (f"-{method}" if method else ""), "mvu", variant,
                ["mvu", "--dataset", "swiss_roll", "--n-points", str(n), *graph, "--variant", variant, *omega],
                _point_limit, size=lambda instance: instance.n, large=large, method=method, gap_tol=gap_tol)


#: the graph of benchmarks/mvu_lowrank.py (swiss_roll(n, noise=0.05, random_state=0), k = 5, angle edges)
MVU_LOWRANK_GRAPH = ("--k", "5", "--noise", "0.05", "--random-state", "0")


MNIST20 = ["--dataset", "mnist", "--image-size", "20"]

CASES = [
    Case("numax-mnist-secants", "numax", "explicit secants",
         ["numax", *MNIST20, "--n-points", "250", "--n-secants", "20100"], _secant_limit),
    Case("numax-mnist210-points", "numax", "point form", ["numax", *MNIST20, "--n-points", "210", "--points"],
         _secant_limit),
    Case("numax_class-digits-secants", "numax_class", "explicit secants",
         ["numax_class", "--dataset", "digits", "--n-points", "600", "--n-secants", "30000"], _secant_limit),
    Case("numax_class-digits210-points", "numax_class", "point form",
         ["numax_class", "--dataset", "digits", "--n-points", "210", "--points"], _secant_limit),
    # raw digits (64 pixels, several constant or one-image ones): the differences of the points do not span
    # the pixel space; the LMNN proof and solver work on the 56 coordinates that span them (spanning_coordinates)
    Case("lmnn-digits200", "lmnn", "raw pixels", ["lmnn", "--dataset", "digits", "--n-points", "200"],
         _triplet_limit),
    Case("lmnn-digits-pca30", "lmnn", "PCA-30, standardised", _lmnn_peers_instance("lmnn", "digits-pca30"),
         _triplet_limit),
    Case("lmnn_multi-digits200", "lmnn_multi", "raw pixels",
         ["lmnn_multi", "--dataset", "digits", "--n-points", "200"], _multi_limit),
    Case("lmnn_multi-digits-pca30", "lmnn_multi", "PCA-30, standardised",
         _lmnn_peers_instance("lmnn_multi", "digits-pca30"), _multi_limit),
    # the graph (k = 5 with angle edges) is rigid for the variants with equality constraints at this
    # size: their SDP has no interior point ("locks up", thesis Sec. 3.1.12) and the interior-point method
    # breaks down; the suite's equality graph (k = 3, no angle edges, linked, noise 0.1) is not rigid
    *(_mvu(variant, 300, "--k", "3", "--no-angles", "--link", "--noise", "0.1")
      for variant in ("equality", "min_trace")),
    # the slack variant on the suite's graph is unbounded unless ω > 0.9987 (its λ₂(L) is 0.0013)
    *(_mvu(variant, 300) for variant in ("inequality", "slack")),
    Case("mvu_oos-swiss2000-k200", "mvu_oos", "—", _mvu_oos_instance(2000, 200), _oos_limit),
    # the cases (--large)
    _mvu("inequality", 1000, large=True),
    Case("lmnn-mnist5000-pca50", "lmnn", "PCA-50, standardised", _lmnn_peers_instance("lmnn", "mnist5000-pca50"),
         _triplet_limit, large=True),
    Case("numax-mnist800-points", "numax", "point form", ["numax", *MNIST20, "--n-points", "800", "--points"],
         _secant_limit, large=True),
    # issue 25: LMNN at the thesis' scale and exact MVU at the sizes of benchmarks/mvu_lowrank.py
    Case("lmnn-mnist10k-pca164", "lmnn", "PCA-164, one RMS scale (thesis)",
         _lmnn_peers_instance("lmnn", "mnist10k-pca164"), _triplet_limit, large=True),
    # at the gap tolerance of benchmarks/mvu_lowrank.py from 1,000 points on: the default 1e-6 is below the
    # proof's own rounding margin at n = 2,500 (problems.mvu.proof_margin)
    _mvu("inequality", 2500, *MVU_LOWRANK_GRAPH, large=True, gap_tol=1e-5),
    # the default method of the equality variant is the interior point; facial reduction certifies it
    _mvu("equality", 1000, *MVU_LOWRANK_GRAPH, large=True, method="facial", gap_tol=1e-5),
]


def _limits(gib: float) -> Callable[[], None]:
    def apply() -> None:
        size = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return apply


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str], timeout: float, gib: float) -> dict:
    """Exit code, wall and CPU seconds, stdout and the last stderr line of a command."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cpu, start = _children_cpu(), time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout,
                              preexec_fn=_limits(gib))
    except subprocess.TimeoutExpired:
        return {"code": None, "wall_s": time.perf_counter() - start, "cpu_s": _children_cpu() - cpu,
                "stdout": "", "error": f"timed out after {timeout:g} s"}
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return {"code": done.returncode, "wall_s": time.perf_counter() - start, "cpu_s": _children_cpu() - cpu,
            "stdout": done.stdout, "error": lines[-1] if lines else ""}


def _json(text: str) -> dict | None:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def run_case(case: Case, directory: Path, timeout: float, gib: float) -> dict:
    """Make, solve and verify one case; every outcome is recorded."""
    from sdpembed.io import load_instance

    instance_path, solution_path = directory / f"{case.name}.npz", directory / f"{case.name}-solution.npz"
    limit, limit_text = case.limit()
    row = {"name": case.name, "problem": case.problem, "form": case.form, "cvxpy_limit": limit_text,
           "outcome": "", "timeout_s": timeout, "memory_gib": gib, "gap_tol": case.gap_tol}
    if callable(case.make):
        case.make(instance_path)
        row["made_by"] = case.make.__doc__
    else:
        made = _run([sys.executable, "-m", "sdpembed", "make-instance", *case.make, "--out", str(instance_path)],
                    timeout, gib)
        if made["code"] != 0:
            return {**row, "outcome": f"make-instance failed: {made['error']}"}
        row["made_by"] = "sdpembed make-instance " + " ".join(case.make)
    instance = load_instance(instance_path)
    assert getattr(instance, "optimum", None) is None, "the instance must store no optimum"
    row["instance_bytes"] = instance_path.stat().st_size
    row.update(size=int(case.size(instance)), n_constraints=int(instance.n_constraints), dim=int(instance.dim),
               above_limit=bool(case.size(instance) > limit))
    if not row["above_limit"]:
        return {**row, "outcome": "not run: the instance is not above the ground truth's limit"}
    method = ["--method", case.method] if case.method else []
    method += ["--gap-tol", repr(case.gap_tol)] if case.gap_tol is not None else []
    solve = _run([sys.executable, "-m", "sdpembed", "solve", str(instance_path), "--out", str(solution_path),
                  *method, "--json"], timeout, gib)
    summary = _json(solve["stdout"])
    row.update(solve_s=solve["wall_s"], solve_cpu_s=solve["cpu_s"], solve_code=solve["code"])
    if summary is None:
        return {**row, "outcome": f"solve failed (exit {solve['code']}): {solve['error']}"}
    row.update(status=summary["status"], method=summary["method"], iterations=summary["iterations"],
               solve_gap=summary["relative_gap"], objective=summary["objective"], message=summary["message"])
    if not solution_path.exists():
        return {**row, "outcome": f"solve wrote no solution ({summary['status']})"}
    with np.load(solution_path, allow_pickle=False) as arrays:
        row["dual_arrays"] = {name: list(arrays[name].shape) for name in arrays.files if name.startswith("dual_")}
    with tempfile.NamedTemporaryFile(suffix=".json") as timing_file:
        verify = _run([sys.executable, "-c", VERIFY, timing_file.name, "verify", str(instance_path),
                       str(solution_path), "--json"], timeout, gib)
        timing = _json(Path(timing_file.name).read_text() or "null") or {}
    cert = _json(verify["stdout"])
    row.update(verify_s=verify["wall_s"], verify_cpu_s=verify["cpu_s"], verify_code=verify["code"],
               proof_s=timing.get("proof_s"), proof_cpu_s=timing.get("proof_cpu_s"),
               cvxpy_imported=timing.get("cvxpy_imported"))
    if cert is None:
        return {**row, "outcome": f"verify failed (exit {verify['code']}): {verify['error']}"}
    row.update(verdict="PASS" if cert["passed"] else "FAIL", proven_gap=cert["objective_error"],
               verified_bound=cert["dual_bound"], optimum_source=cert["optimum_source"], reasons=cert["reasons"])
    passed = cert["passed"] and abs(cert["objective_error"]) <= 1e-4
    row["outcome"] = "PASS" if passed else "FAIL: " + "; ".join(cert["reasons"] or ["proven gap above 1e-4"])
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="add the issue's large cases")
    parser.add_argument("--only", default=None, metavar="NAME[,NAME...]", help="only these cases")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per solve and per verify")
    parser.add_argument("--memory", type=float, default=8.0, help="GiB of address space per process")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "proofs.json")
    args = parser.parse_args(argv)
    only = None if args.only is None else args.only.split(",")
    known = {c.name: c for c in CASES}
    for name in only or ():
        if name not in known:
            parser.error(f"--only: no case {name!r} (cases: {', '.join(known)})")
        if known[name].large and not args.large:
            parser.error(f"--only: {name} is a large case: add --large")
    chosen = [c for c in CASES if (args.large or not c.large) and (only is None or c.name in only)]
    previous = json.loads(args.json.read_text()) if args.json.exists() and only else {}
    # rows of earlier runs keep the limits they ran under (older files record them once, for the whole file)
    rows = {row["name"]: {"timeout_s": previous.get("timeout_s"), "memory_gib": previous.get("memory_gib"), **row}
            for row in previous.get("rows", [])}
    with tempfile.TemporaryDirectory() as scratch:
        for case in chosen:
            print(f"{case.name} ...", flush=True)
            row = run_case(case, Path(scratch), args.timeout, args.memory)
            row["run"] = report.run_stamp()
            rows[row["name"]] = row
            print(f"  {row['outcome']}  solve {row.get('solve_s', float('nan')):.1f} s, "
                  f"verify {row.get('verify_s', float('nan')):.2f} s, proven gap {row.get('proven_gap')}", flush=True)
    order = [c.name for c in CASES]
    out = {"rows": sorted(rows.values(), key=lambda r: order.index(r["name"]) if r["name"] in order else 99)}
    report.write_results(args.json, out)


if __name__ == "__main__":
    main()
