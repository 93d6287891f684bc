"""The ``sdpembed`` command line: ``solve``, ``verify``, ``make-instance``, ``embed``, ``demo``, ``suite``,
``export``.

Exit codes: 0 success (``verify``: pass; ``suite run``: every instance not skipped passed, at least
one graded; ``suite build``: every optimum certified and in agreement), 1 failure (``verify``: fail;
``solve``: the solver did not reach ``optimal``), 2 bad input (one line on stderr: an unreadable file,
a missing output directory, a problem too large for the machine, ...); ``suite run`` interrupted by a
signal: 128 + its number; any other command interrupted (Ctrl-C): 130; stdout closed (``| head``): 141.
Output files are written atomically (a temporary file moved into place), and their directory is
checked before any work. Problems are found through the registry.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from . import datasets
from ._files import atomic_write, check_output, prepare_directory, read_npy
from ._memory import check_memory, dense_bytes
from ._progress import tell
from ._validate import as_matrix
from ._version import __version__
from .io import SKIP_EXIT_CODE, load_instance, read_solution, write_solution
from .registry import PROBLEMS, get_problem, method_options, solve
from .validation.certify import Tolerances, format_against, format_unit, objective_side

# Each command imports what only it needs at its start (the suite's build and runner, the SDPA
# writer, the verifier): ``--help`` and ``verify`` load no more than they use (DESIGN.md, "Start-up").

__all__ = ["main", "build_parser"]

#: MVUInstance.VARIANTS, spelled out so that ``--help`` imports no problem module (tests/e2e/test_cli.py
#: checks that the two agree)
MVU_VARIANTS = ("equality", "inequality", "slack", "min_trace")


class BadInput(ValueError):
    """Input the user must fix (exit code 2)."""


#: The seed of every command that draws random numbers, unless ``--random-state`` says otherwise:
#: the same command gives the same result on every run.
DEFAULT_SEED = 0

#: The image sides of the vendored MNIST (28×28 originals, NuMax's 20×20 crop).
MNIST_SIZES = (28, 20)


def _emit(payload: dict, as_json: bool, lines: Sequence[str]) -> None:
    """Print ``payload`` as strict JSON (non-finite numbers become null) or ``lines`` as text."""
    if as_json:
        # allow_nan=False: a NaN or inf that slipped through is an error, never invalid JSON
        print(json.dumps(_finite(payload), default=str, indent=2, allow_nan=False))
    else:
        print("\n".join(lines))


def _tolerance(text: str) -> float:
    """An argparse type: a tolerance, a finite number >= 0 (NaN would switch its check off)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def _seed(text: str) -> int:
    """An argparse type: a seed, an integer in [0, 2³²) (argparse names the option in its error)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 2**32 - 1, got {text!r}")
    return value


def _scan_backend(args: argparse.Namespace) -> Any:
    """The Dask scan backend of ``--dask-workers``/``--scheduler`` (a context manager that stops the
    cluster it started), or a null context when neither is given."""
    if args.dask_workers is None and args.scheduler is None:
        return contextlib.nullcontext(None)
    if args.dask_workers is not None and args.dask_workers < 1:
        raise BadInput(f"--dask-workers must be at least 1, got {args.dask_workers}")
    try:
        import distributed  # noqa: F401  at first use (DESIGN.md, "Start-up")
    except ImportError:
        raise BadInput("--dask-workers and --scheduler need Dask: pip install 'sdpembed[distributed]'") from None
    from .solvers.numax.scan_backend import DaskScan

    return DaskScan(n_workers=args.dask_workers, scheduler=args.scheduler)


# ------------------------------------------------------------------------------- solve
TIME_LIMIT_TAKERS = "MVU's and LMNN's solvers and of NuMax's ADMM and column generation"
GAP_TOL_TAKERS = "the certified solvers: NuMax's column generation, LMNN's, MVU's and MVU out-of-sample's"


def _cmd_solve(args: argparse.Namespace) -> int:
    out = check_output(args.out, "--out", ".npz") if args.out else None      # before the solve, not after
    instance = load_instance(args.instance)
    options = {}
    if args.method == "cvxpy":
        options["solver"] = args.solver or "CLARABEL"
        ignored = [flag for flag, value in (("--max-iter", args.max_iter), ("--verbose", args.verbose)) if value]
    else:
        if args.verbose:
            options["verbose"] = args.verbose
        if args.max_iter is not None:
            options["max_iter"] = args.max_iter
        if "random_state" in (method_options(instance, args.method) or ()):
            options["random_state"] = args.random_state
        ignored = ["--solver"] if args.solver is not None else []
    accepted = method_options(instance, args.method) if args.method != "cvxpy" else set()
    for flag, key, takers in (("--time-limit", "time_limit", TIME_LIMIT_TAKERS),
                              ("--cpu-time-limit", "cpu_time_limit", TIME_LIMIT_TAKERS),
                              ("--gap-tol", "gap_tol", GAP_TOL_TAKERS)):
        value = getattr(args, key)
        if value is None:
            continue
        if accepted is not None and key not in accepted:
            # a limit or tolerance the method would not keep must not be silently dropped
            raise BadInput(f"{flag} is not taken by method {args.method or 'default'} of this instance "
                           f"({flag} is an option of {takers})")
        options[key] = value
    distributed = args.dask_workers is not None or args.scheduler is not None
    if distributed and "scan_backend" not in (method_options(instance, args.method) or ()):
        raise BadInput(f"--dask-workers and --scheduler need a method that scans all pairs (column generation "
                       f"of a point-form instance), not method {args.method or 'default'} of this instance")
    if ignored:
        print(f"sdpembed solve: warning: {', '.join(ignored)} ignored with method "
              f"{args.method or 'default'}", file=sys.stderr)
    with _scan_backend(args) as backend:
        if backend is not None:
            options["scan_backend"] = backend
        result = solve(instance, args.method, **options)
    if out is not None:
        write_solution(out, instance, result)
    summary = result.summary()
    lines = [
        f"problem        {summary['problem']}  (method {summary['method']}, {summary['solver']})",
        f"status         {summary['status']}: {summary['message']}",
        f"objective      {summary['objective']:.10g}",
        f"dual bound     {summary['dual_bound']:.10g}",
        f"relative gap   {summary['relative_gap']:.3e}",
        f"max violation  {summary['max_violation']:.3e}",
        f"least eig      {summary['min_eigenvalue']:.3e}",
        f"iterations     {summary['iterations']}",
        f"time           {summary['wall_time']:.3f} s",
    ]
    if out is not None:
        lines.append(f"solution       written to {out}")
    _emit(summary, args.json, lines)
    return 0 if result.status == "optimal" else 1


# ------------------------------------------------------------------------------ verify
def _cmd_verify(args: argparse.Namespace) -> int:
    from .validation.verify import verify_solution

    instance = load_instance(args.instance)
    solution = read_solution(args.solution, instance)
    tolerances = Tolerances(objective=args.objective_tol, feasibility=args.feasibility_tol, psd=args.psd_tol)
    dual = solution.dual_multipliers
    # numpy only when the optimum is stored (sdpembed.validation.verify); CVXPY computes it otherwise
    with _scan_backend(args) as backend:
        cert = verify_solution(instance, solution, tolerances=tolerances, ground_truth=args.solver,
                               note=lambda text: print(f"sdpembed verify: note: {text}", file=sys.stderr, flush=True),
                               progress=None, scan_backend=backend)
    verdict = "PASS" if cert.passed else "FAIL"
    spec = get_problem(instance.problem)
    variable = spec.variable
    error = format_against(cert.objective_error, tolerances.objective, signed=True)
    side = objective_side(cert.objective_error, spec.sense) if np.isfinite(cert.optimum) else "against the dual bound"
    u_f, u_X = format_unit(instance.objective_unit), format_unit(instance.matrix_unit)   # docs/grading.md, "Units"
    lines = [
        f"problem            {cert.problem}",
        f"objective          {cert.objective:.10g}",
        f"optimum            {cert.optimum:.10g}  ({cert.optimum_source})",
        f"objective error    {error}  ((f - f*) / max(|f*|, {u_f}), tolerance {tolerances.objective:g} in magnitude; "
        f"{side})",
        f"max violation      {format_against(cert.max_violation, tolerances.feasibility)}  "
        + (f"± {cert.violation_error:.1e} (a proved bound; the verdict is proved)  "
           if np.isfinite(cert.violation_error) else "") + f"(tolerance {tolerances.feasibility:g})",
        f"asymmetry          {format_against(cert.asymmetry, tolerances.feasibility)}  "
        f"(max |{variable} - {variable}ᵀ| / max({u_X}, max |{variable}|), tolerance {tolerances.feasibility:g})",
        f"PSD violation      {format_against(cert.psd_violation, tolerances.psd)}  "
        f"(max(0, -least eigenvalue) / max({u_X}, largest), tolerance {tolerances.psd:g})",
        f"least eigenvalue   {cert.min_eigenvalue:.3e}",
        f"rank               {cert.rank}",
    ]
    if dual is not None:
        lines.append(f"verified dual bound {cert.dual_bound:.10g}  (from the solution's multipliers, checked here)")
    elif np.isfinite(cert.dual_bound):
        lines.append(f"claimed dual bound {cert.dual_bound:.10g}")
    lines.append(f"verdict            {verdict}")
    lines += [f"  - {reason}" for reason in cert.reasons]
    _emit(cert.to_dict(), args.json, lines)
    return 0 if cert.passed else 1


# ----------------------------------------------------------------------- make-instance
def _dataset(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray | None]:
    """Points (and labels, for labelled datasets) of ``make-instance --dataset``."""
    if args.dataset == "squares":
        return datasets.translating_squares(args.image_size, args.shape_size), None
    if args.dataset == "disks":
        return datasets.translating_disks(args.image_size, args.shape_size / 2.0), None
    if args.dataset == "shapes":
        return datasets.disks_and_squares(args.image_size, args.shape_size)
    if args.dataset == "blob":
        return datasets.translating_gaussian_blob(args.image_size, args.sigma), None
    if args.dataset == "gaussian":
        return datasets.gaussian_points(args.n_points, args.dim, random_state=args.random_state), None
    if args.dataset == "swiss_roll":
        return datasets.swiss_roll(args.n_points, noise=args.noise, random_state=args.random_state)[0], None
    if args.dataset == "mnist":
        return datasets.load_mnist(size=args.image_size, n_samples=args.n_points, random_state=args.random_state)
    from sklearn.datasets import load_digits

    digits = load_digits()
    index = _stratified(digits.target, args.n_points, args.random_state)
    return digits.data[index] / 16.0, digits.target[index]


def _stratified(labels: np.ndarray, size: int, random_state: int) -> np.ndarray:
    """``size`` sorted indices (all, if fewer) drawn class by class in turn — each class shuffled by
    the seed — so that every class has ⌊size / classes⌋ members or more while it has them (LMNN needs
    k + 1 of every class)."""
    if size < 1:
        raise ValueError(f"--n-points must be a positive integer, got {size}")
    rng = np.random.default_rng(random_state)
    order = rng.permutation(labels.size)
    order = order[np.argsort(labels[order], kind="stable")]            # by class, shuffled within
    _, first, counts = np.unique(labels[order], return_index=True, return_counts=True)
    rank_in_class = np.arange(order.size) - np.repeat(first, counts)
    turn = np.lexsort((labels[order], rank_in_class))                  # round robin over the classes
    return np.sort(order[turn][: min(size, labels.size)])


def _dataset_shape(args: argparse.Namespace) -> tuple[int, int]:
    """An upper bound on the shape of the points of ``make-instance --dataset`` (the bundled
    datasets, mnist and digits, are small: (0, 0))."""
    side = max(args.image_size, 0)
    if args.dataset == "gaussian":
        return max(args.n_points, 0), max(args.dim, 0)
    if args.dataset == "swiss_roll":
        return max(args.n_points, 0), 3
    rows = {"squares": max(side - args.shape_size + 1, 0) ** 2, "disks": side**2, "shapes": 2 * side**2,
            "blob": side**2}
    return (rows[args.dataset], side**2) if args.dataset in rows else (0, 0)


def _cmd_make_instance(args: argparse.Namespace) -> int:
    spec = get_problem(args.problem)
    if spec.from_dataset is None:
        raise BadInput(f"{spec.name!r} instances are not built from a dataset by the command line")
    args.dataset = args.dataset or spec.dataset
    if args.dataset == "mnist":
        if args.image_size is None:
            args.image_size = MNIST_SIZES[0]
        elif args.image_size not in MNIST_SIZES:
            raise BadInput(f"--image-size must be one of {', '.join(map(str, MNIST_SIZES))} for --dataset mnist, "
                           f"got {args.image_size}")
    elif args.image_size is None:
        args.image_size = 16
    out = check_output(args.out, "--out", ".npz")
    rows, cols = _dataset_shape(args)
    check_memory(3 * dense_bytes(rows, cols),
                 f"the {args.dataset} points ({rows}×{cols} float64; three copies while the instance is made)")
    X, y = _dataset(args)
    instance = spec.from_dataset(X, y, args)
    out = instance.save(out)
    shape = f"{X.shape[0]} points in dimension {X.shape[1]}, {instance.n_constraints} constraints"
    if hasattr(instance, "delta"):
        shape += f" ({'all pairs, point form' if args.points else 'secants'}), delta {instance.delta:g}"
    print(f"wrote {args.problem} instance to {out}: {shape}")
    return 0


# -------------------------------------------------------------------------------- demo
def _cmd_demo(args: argparse.Namespace) -> int:
    from .isometry import isometry_constants
    from .linear import embedding_from_psd, gaussian_projection, pca_projection
    from .problems import NuMaxInstance

    X = datasets.translating_squares(args.image_size, args.square_size)
    instance = NuMaxInstance.from_points(X, args.delta, n_secants=args.n_secants, random_state=args.random_state)
    V = instance.secant_matrix
    print(
        f"NuMax demo: {len(X)} translating {args.square_size}x{args.square_size} squares in "
        f"{args.image_size}x{args.image_size} images (N = {X.shape[1]}), {len(V)} secants, delta = {args.delta:g}"
    )
    start = time.perf_counter()
    result = solve(instance, "admm", verbose=args.verbose)
    elapsed = time.perf_counter() - start
    Psi = embedding_from_psd(result.solution)
    M = Psi.shape[0]
    rows = [
        ("NuMax (ADMM)", M, isometry_constants(Psi, secants=V).delta),
        ("PCA", M, isometry_constants(pca_projection(V, M, center=False), secants=V).delta),
        ("Gaussian", M, isometry_constants(
            gaussian_projection(M, X.shape[1], random_state=args.random_state), secants=V).delta),
    ]
    print(f"status            {result.status} after {result.iterations} iterations, {elapsed:.2f} s")
    print(f"rank M            {M}")
    print(f"trace             {result.objective:.6f}")
    print(f"certified bound   {result.dual_bound:.6f}  (relative gap {result.relative_gap:.2e})")
    print(f"max violation     {result.max_violation:.2e}")
    print(f"\n{'map':<14}{'M':>4}  isometry constant on the secants")
    for name, dim, delta in rows:
        print(f"{name:<14}{dim:>4}  {delta:.4f}")
    return 0 if result.status == "optimal" else 1


# ------------------------------------------------------------------------------- suite
def _finite(value):
    """JSON-safe: numpy scalars and arrays become Python numbers and lists, non-finite floats null,
    recursively."""
    if isinstance(value, (np.generic, np.ndarray)):
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _problems(args: argparse.Namespace) -> list[str] | None:
    """The problems and groups of ``--problems`` (repeated or comma-separated), or None for all."""
    return [p for value in args.problems or [] for p in value.split(",") if p] or None


def _selection(args: argparse.Namespace):
    """The suite of ``--suite`` and its entries chosen by ``--problems`` and ``--instances``."""
    from .validation.suite.manifest import load_suite

    suite = load_suite(args.suite)
    entries = suite.select(_problems(args), args.instances)
    if not entries:
        raise BadInput(f"no suite instance matches --instances {args.instances}")
    return suite, entries


def _cmd_suite_list(args: argparse.Namespace) -> int:
    suite, entries = _selection(args)
    rows = [{"name": e.name, "problem": e.problem, "group": e.group, "size": e.size, "file": str(e.path),
             "dim": e.dim, "n_constraints": e.n_constraints, "optimum": e.optimum, "dual_bound": e.dual_bound,
             "agreement": e.agreement, "certifiers": [f"{c['method']}/{c['solver']}" for c in e.certifiers],
             "description": e.description} for e in entries]
    width = max(len(e.name) for e in entries)
    lines = [f"sdpembed reference suite, version {suite.version}: {len(entries)} instance(s) in {suite.directory}",
             f"pass: relative objective error <= {suite.tolerances.objective:g}, violation <= "
             f"{suite.tolerances.feasibility:g}, PSD violation <= {suite.tolerances.psd:g}",
             f"{'instance':<{width}}  {'size':<6} {'dim':>5} {'constr.':>8} {'optimum':>18} {'agreement':>9}  "
             "certified by"]
    lines += [f"{r['name']:<{width}}  {r['size']:<6} {r['dim']:>5} {r['n_constraints']:>8} {r['optimum']:>18.12g} "
              f"{r['agreement']:>9.1e}  {', '.join(r['certifiers'])}" for r in rows]
    payload = {"version": suite.version, "directory": str(suite.directory), "tolerances": asdict(suite.tolerances),
               "instances": rows}
    _emit(_finite(payload), args.json, lines)
    return 0


def _cmd_suite_build(args: argparse.Namespace) -> int:
    from .validation.suite.build import build_suite
    from .validation.suite.tables import format_build_table

    problems = _problems(args)
    if args.out:
        prepare_directory(args.out, "--out")                   # created before the build, not after it
    done = []

    def progress(record) -> None:
        done.append(record)
        state = "OK" if record.ok else "FAIL"
        tell(f"[{len(done)}] {record.name}: {state}, optimum {record.optimum:.10g} ({record.wall_time:.1f} s)")

    start = time.perf_counter()
    records = build_suite(out=args.out, compare=not args.no_compare, stored=args.suite, problems=problems,
                          progress=progress, bar=None)
    elapsed = time.perf_counter() - start
    ok = all(r.ok for r in records)
    lines = [format_build_table(records), f"time {elapsed:.1f} s"]
    if args.out:
        lines.append(f"suite written to {args.out}" if ok and problems is None else
                     f"instance files written to {args.out}; no manifest (" +
                     ("a partial build)" if problems is not None else "not every case passed)"))
    _emit(_finite({"ok": ok, "wall_time": elapsed, "records": [asdict(r) for r in records]}), args.json, lines)
    return 0 if ok else 1


def _cmd_suite_run(args: argparse.Namespace) -> int:
    from .validation.suite.process import SuiteInterrupted
    from .validation.suite.runner import run_suite, summarize_run
    from .validation.suite.tables import format_run_table

    suite, entries = _selection(args)
    tolerances = Tolerances(
        objective=suite.tolerances.objective if args.objective_tol is None else args.objective_tol,
        feasibility=suite.tolerances.feasibility if args.feasibility_tol is None else args.feasibility_tol,
        psd=suite.tolerances.psd if args.psd_tol is None else args.psd_tol,
    )
    done = []

    def progress(record) -> None:
        done.append(record)
        tell(f"[{len(done)}/{len(entries)}] {record.name}: {record.result.upper()} ({record.wall_time:.1f} s)")

    interrupted = None
    try:
        records = run_suite(args.command, suite=suite, entries=entries, timeout=args.timeout, workdir=args.keep,
                            tolerances=tolerances, progress=progress, bar=None)
    except SuiteInterrupted as exc:      # the graded program was killed; report what was graded
        interrupted, records = exc, exc.records
    summary = summarize_run(records)
    payload = {
        "suite_version": suite.version, "command": args.command, "timeout": args.timeout,
        "tolerances": {"objective": tolerances.objective, "feasibility": tolerances.feasibility,
                       "psd": tolerances.psd},
        "passed": summary.passed, "skipped": summary.skipped, "graded": summary.graded, "total": summary.total,
        "all_passed": summary.ok, "interrupted": interrupted.signal_name if interrupted else None,
        "results": [asdict(r) for r in records],
    }
    _emit(_finite(payload), args.json, [format_run_table(records, tolerances)] if records else [])
    if interrupted is not None:
        print(f"sdpembed suite run: interrupted by {interrupted.signal_name}: the graded program and its process "
              f"group were killed; {len(records)} of {len(entries)} instance(s) graded", file=sys.stderr)
        return interrupted.exit_code
    return 0 if summary.ok else 1


def _cmd_suite_export(args: argparse.Namespace) -> int:
    from .sdpa import export_sdpa
    from .validation.suite.manifest import MANIFEST

    suite, entries = _selection(args)
    out = prepare_directory(args.directory, "DIR")
    names = {e.name for e in entries}
    manifest = json.loads((suite.directory / MANIFEST).read_text())
    manifest["instances"] = [record for record in manifest["instances"] if record["name"] in names]
    for entry in entries:
        instance = entry.load()                               # the file matches the manifest
        _copy(entry.path, out / entry.path.name)
        if args.sdpa:
            try:
                export_sdpa(instance, out / f"{entry.name}.dat-s")
            except ValueError as exc:
                print(f"{entry.name}: no SDPA file: {exc}", file=sys.stderr)
    with atomic_write(out / MANIFEST) as temporary:
        temporary.write_text(json.dumps(manifest, indent=1) + "\n")
    if (suite.directory / "README.md").is_file():
        _copy(suite.directory / "README.md", out / "README.md")
    print(f"wrote {len(entries)} instance(s){' with SDPA files' if args.sdpa else ''} and {MANIFEST} to {out}")
    return 0


def _copy(source: Path, target: Path) -> None:
    """Copy a file atomically."""
    with atomic_write(target) as temporary:
        shutil.copyfile(source, temporary)


def _cmd_export(args: argparse.Namespace) -> int:
    from .sdpa import MAX_ENTRIES, export_sdpa, sdpa_optimum

    out = check_output(args.out or Path(args.instance).with_suffix(".dat-s"), "--out")
    instance = load_instance(args.instance)
    problem = export_sdpa(instance, out, max_entries=MAX_ENTRIES if args.max_entries is None else args.max_entries)
    sizes = " ".join(str(size) for size in problem.block_sizes)
    lines = [f"wrote {out}: SDPA sparse format, m = {problem.m} constraints, blocks {sizes}, "
             f"{problem.n_entries} entries",
             "Y's block 1 is the instance's matrix variable; SDPA's optimal value is "
             + ("+f* (MVU maximises)" if get_problem(instance.problem).sense == "max" else "-f* (a minimisation)")]
    if instance.optimum is not None:
        lines.append(f"stored optimum f* = {instance.optimum:.12g}: SDPA optimal value "
                     f"{sdpa_optimum(instance.problem, instance.optimum):.12g}")
    print("\n".join(lines))
    return 0


# ------------------------------------------------------------------------------ embed
def _read_rows(path: str, name: str, ndim: int) -> np.ndarray:
    """The ``ndim``-dimensional array of a ``.npy`` file (never unpickled); every unreadable file or
    wrong shape is a BadInput naming the argument and the file."""
    try:
        array = read_npy(path, name)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if array.ndim != ndim or array.size == 0:
        raise BadInput(f"{name} file {path!r} must hold a non-empty {ndim}-D array, got shape {array.shape}")
    if ndim == 2:
        try:
            return as_matrix(array, f"{name} file {path!r}", min_rows=2)
        except ValueError as exc:
            raise BadInput(str(exc)) from None
    return array


#: The linear methods of ``embed`` whose fit scans all pairs of the points (column generation).
SCANNING_METHODS = ("numax", "numax_class", "fromax", "nilepro")


def _cmd_embed(args: argparse.Namespace) -> int:
    from .isometry import SecantSet
    from .linear.methods import embed

    out = check_output(args.out, "--out", ".npy")
    data = _read_rows(args.data, "DATA", 2)
    labels = None if args.labels is None else _read_rows(args.labels, "--labels", 1)
    if labels is not None and labels.shape[0] != data.shape[0]:
        raise BadInput(f"--labels has {labels.shape[0]} labels for the {data.shape[0]} rows of DATA")
    options = dict(json.loads(args.options)) if args.options else {}
    distributed = args.dask_workers is not None or args.scheduler is not None
    if distributed and (args.method not in SCANNING_METHODS or args.secants or "n_secants" in options):
        raise BadInput(f"--dask-workers and --scheduler need a method that scans all pairs of the points by column "
                       f"generation ({', '.join(SCANNING_METHODS)}, without --secants or n_secants)")
    start = time.perf_counter()
    with _scan_backend(args) as backend:
        if backend is not None:
            options["scan_backend"] = backend
        model = embed(args.method, data, dim=args.dim, delta=args.delta, labels=labels,
                      random_state=args.random_state, secants=args.secants, measure=args.measure, **options)
    elapsed = time.perf_counter() - start
    Psi = model.components_
    with atomic_write(out) as temporary:
        np.save(temporary, Psi)
    evaluator = SecantSet(secants=data) if args.secants else SecantSet(X=data)
    delta = evaluator.isometry_constant(Psi, args.measure)
    payload = {"method": args.method, "out": str(out), "n_components": int(Psi.shape[0]),
               "n_features": int(Psi.shape[1]), "isometry_constant": delta, "measure": args.measure,
               "n_secants": int(evaluator.n_secants), "time_s": elapsed}
    lines = [f"wrote {out}: Psi of shape {Psi.shape} ({args.method}, {elapsed:.2f} s)",
             f"isometry constant on the {evaluator.n_secants} training secants ({args.measure}): {delta:.6g}"]
    selection = getattr(model, "selection_", None)
    if selection is not None:
        payload["selection"] = asdict(selection)
        chosen = "dimension M" if selection.rule == "smallest_dimension" else "delta"
        lines.append(f"chosen {chosen} = {selection.value:g} for the target {selection.target:g} "
                     f"({len(selection.trials)} trials)")
    result = getattr(model, "result_", None)
    if result is not None and hasattr(result, "status"):
        payload["solver_status"] = result.status
        lines.append(f"solver status {result.status}")
    _emit(payload, args.json, lines)
    return 0


def _add_selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--suite", default=None, metavar="DIR", help="a suite directory (default: the one shipped)")
    p.add_argument("--problems", action="append", metavar="P[,P...]",
                   help="only these problems or groups (numax, numax_class, lmnn, mvu, mvu/equality, ...)")
    p.add_argument("--instances", action="append", metavar="GLOB", help="only instances whose name matches")


RUN_EPILOG = (
    f"Outcomes per instance: PASS, FAIL, CRASH (non-zero exit), SKIP (exit code {SKIP_EXIT_CODE}: the program "
    "does not handle this kind of instance), TIMEOUT, NO SOLUTION, BAD SOLUTION. Exit status 0 when every "
    "instance that was not skipped passed and at least one was graded, 1 otherwise, 2 for bad input. SIGINT "
    "(Ctrl-C), SIGTERM or SIGHUP kill the graded program and its process group, print what was graded and exit "
    "with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM)."
)


# ------------------------------------------------------------------------------ parser
def _add_dask(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument("--dask-workers", type=int, default=None, metavar="N",
                       help="scan all pairs of a point-form instance on a local Dask cluster of N worker processes "
                            "(needs sdpembed[distributed]; the result is the same)")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="scan all pairs of a point-form instance on the Dask cluster of this scheduler "
                            "(tcp://host:8786)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``sdpembed`` command."""
    parser = argparse.ArgumentParser(prog="sdpembed", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"sdpembed {__version__}")
    sub = parser.add_subparsers(dest="subcommand", required=True)   # not "command": suite run has --command

    p = sub.add_parser("solve", help="solve an instance file")
    p.add_argument("instance")
    p.add_argument("--method", default=None,
                   help="'cvxpy' or a hand-written method (default: the problem's; NuMax: cg on points, else admm)")
    p.add_argument("--solver", default=None, choices=["CLARABEL", "SCS"],
                   help="CVXPY back-end with --method cvxpy (default CLARABEL)")
    p.add_argument("--out", help="write the solution here (.npz appended when missing)")
    p.add_argument("--max-iter", type=int, default=None,
                   help="iteration limit of the hand-written solver (column generation: of each restricted ADMM)")
    p.add_argument("--verbose", type=int, default=0, metavar="K",
                   help="progress every K iterations (column generation: every round, and its ADMMs every K; "
                        "LMNN: every working-set round, and with K >= 2 every Newton step)")
    p.add_argument("--random-state", type=_seed, default=DEFAULT_SEED,
                   help=f"seed of a method that draws random numbers (column generation's first pairs; "
                        f"default {DEFAULT_SEED})")
    p.add_argument("--time-limit", type=_tolerance, default=None, metavar="SECONDS",
                   help="stop after this many seconds of wall-clock time; the run then ends max_iterations with "
                        "the iterate closest to the tolerances and the bound proved so far")
    p.add_argument("--cpu-time-limit", type=_tolerance, default=None, metavar="SECONDS",
                   help="the same in CPU seconds of the process (all threads, BLAS included), which the "
                        "machine's load does not change")
    p.add_argument("--gap-tol", type=_tolerance, default=None, metavar="TOL",
                   help="the certified relative gap at which the run is optimal (default: the method's; it "
                        "cannot go below the proof's own rounding margin, which grows with the instance)")
    _add_dask(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser("verify", help="verify a solution file against an instance file")
    p.add_argument("instance")
    p.add_argument("solution")
    p.add_argument("--solver", default="CLARABEL", choices=["CLARABEL", "SCS"],
                   help="CVXPY back-end for the optimum when the instance stores none")
    defaults = Tolerances()
    p.add_argument("--objective-tol", type=_tolerance, default=defaults.objective)
    p.add_argument("--feasibility-tol", type=_tolerance, default=defaults.feasibility)
    p.add_argument("--psd-tol", type=_tolerance, default=defaults.psd)
    _add_dask(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser("make-instance", help="write an instance file built from a dataset")
    p.add_argument("problem", choices=sorted(PROBLEMS))
    p.add_argument("--dataset", default=None, choices=datasets.DATASETS,
                   help="default: the problem's (labelled digits for lmnn and numax_class, squares otherwise)")
    p.add_argument("--delta", type=float, default=0.1, help="isometry constant (numax, numax_class)")
    p.add_argument("--k", type=int, default=3,
                   help="target neighbours per point (lmnn, lmnn_multi); nearest neighbours of the graph (mvu)")
    p.add_argument("--variant", default="equality", choices=MVU_VARIANTS,
                   help="the MVU SDP: distances kept (equality), bounded (inequality), penalised (slack, with "
                        "--omega) or the trace minimised (min_trace); default equality (mvu)")
    p.add_argument("--omega", type=float, default=None, help="slack penalty weight in (0, 1) (mvu --variant slack)")
    p.add_argument("--angles", action=argparse.BooleanOptionalAction, default=True,
                   help="add the angle edges between each point's neighbours (mvu; default on)")
    p.add_argument("--link", action="store_true",
                   help="connect a disconnected neighbourhood graph by the linking procedure of Sec. 3.1.12 (mvu)")
    p.add_argument("--mu", type=float, default=0.5, help="push-term weight mu in [0, 1] (lmnn, lmnn_multi)")
    p.add_argument("--out", required=True)
    p.add_argument("--n-secants", type=int, default=None, help="sample this many pairs (default: all)")
    p.add_argument("--points", action="store_true", help="point form: store X, meaning all pairs")
    p.add_argument("--image-size", type=int, default=None,
                   help=f"image side (default 16; mnist: {' or '.join(map(str, MNIST_SIZES))}, default 28)")
    p.add_argument("--shape-size", type=int, default=8, help="square side / disk diameter")
    p.add_argument("--sigma", type=float, default=6.0, help="blob standard deviation")
    p.add_argument("--n-points", type=int, default=50, help="gaussian/mnist/digits/swiss_roll: number of points")
    p.add_argument("--noise", type=float, default=0.0, help="swiss_roll: standard deviation of the added noise")
    p.add_argument("--dim", type=int, default=20, help="gaussian: dimension")
    p.add_argument("--random-state", type=_seed, default=DEFAULT_SEED, help=f"default {DEFAULT_SEED}")
    p.set_defaults(func=_cmd_make_instance)

    p = sub.add_parser("suite", help="the reference suite of instances with certified optima")
    suite = p.add_subparsers(dest="suite_command", required=True)
    q = suite.add_parser("list", help="list the suite's instances and their optima")
    _add_selection(q)
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=_cmd_suite_list)
    q = suite.add_parser("run", help="grade an external program on every instance",
                         description="Run the program on every selected instance of the suite and grade the "
                                     "solution files it writes.", epilog=RUN_EPILOG)
    q.add_argument("--command", required=True,
                   help="the program, with {instance} (read) and {solution} (write) placeholders, e.g. "
                        "\"python -m sdpembed solve {instance} --out {solution}\"")
    q.add_argument("--timeout", type=float, default=600.0, help="seconds per instance (default 600)")
    q.add_argument("--keep", default=None, metavar="DIR", help="write (and keep) the solution files here")
    _add_selection(q)
    q.add_argument("--objective-tol", type=_tolerance, default=None, help="override the suite's tolerance")
    q.add_argument("--feasibility-tol", type=_tolerance, default=None, help="override the suite's tolerance")
    q.add_argument("--psd-tol", type=_tolerance, default=None, help="override the suite's tolerance")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=_cmd_suite_run)
    q = suite.add_parser("build", help="regenerate and re-certify the suite; fail if a stored optimum moved")
    q.add_argument("--out", default=None, metavar="DIR", help="write the regenerated suite here")
    q.add_argument("--no-compare", action="store_true", help="do not compare with the stored suite")
    q.add_argument("--suite", default=None, metavar="DIR", help="the stored suite to compare with")
    q.add_argument("--problems", action="append", metavar="P[,P...]", help="only these problems or groups")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=_cmd_suite_build)
    q = suite.add_parser("export", help="copy the suite's files (and SDPA versions) to a directory")
    q.add_argument("directory")
    q.add_argument("--sdpa", action="store_true", help="also write each instance in SDPA sparse format")
    _add_selection(q)
    q.set_defaults(func=_cmd_suite_export)

    p = sub.add_parser("export", help="write an instance in another format (SDPA sparse)")
    p.add_argument("instance")
    p.add_argument("--format", default="sdpa", choices=["sdpa"])
    p.add_argument("--out", default=None, help="output file (default: the instance's name with .dat-s)")
    p.add_argument("--max-entries", type=int, default=None,
                   help="refuse larger files (default: sdpembed.sdpa.MAX_ENTRIES)")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("embed", help="write the linear map Psi (M, N) of a linear method for data given as rows")
    p.add_argument("method", help="pca, pca_randomized, gaussian, rademacher, lda, adagio, sparse_linear, numax, "
                                  "numax_class, fromax, nilepro (sdpembed.linear.LINEAR_METHODS)")
    p.add_argument("data", help="a .npy array of shape (n, N): points as rows (secants with --secants)")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--dim", type=int, help="the target dimension M")
    target.add_argument("--delta", type=float, help="the target isometry constant delta on the training secants")
    p.add_argument("--out", required=True, help="where to write Psi (.npy)")
    p.add_argument("--labels", default=None, help="a .npy vector of class labels (lda, numax_class)")
    p.add_argument("--secants", action="store_true", help="the rows of DATA are secants, not points")
    p.add_argument("--measure", default="rip", choices=["rip", "adagio"],
                   help="distortion measure of delta: NuMax's RIP (2) or ADAGIO's (3)")
    p.add_argument("--random-state", type=_seed, default=DEFAULT_SEED, help=f"default {DEFAULT_SEED}")
    p.add_argument("--options", default=None, metavar="JSON", help="constructor options, e.g. '{\"n_secants\": 2000}'")
    p.add_argument("--json", action="store_true")
    _add_dask(p)
    p.set_defaults(func=_cmd_embed)

    p = sub.add_parser("demo", help="NuMax on translating squares, compared with PCA and a Gaussian map")
    p.add_argument("--image-size", type=int, default=16)
    p.add_argument("--square-size", type=int, default=8)
    p.add_argument("--delta", type=float, default=0.1)
    p.add_argument("--n-secants", type=int, default=1000)
    p.add_argument("--random-state", type=_seed, default=DEFAULT_SEED, help=f"default {DEFAULT_SEED}")
    p.add_argument("--verbose", type=int, default=0, metavar="K")
    p.set_defaults(func=_cmd_demo)
    return parser


#: Exit code of a command whose stdout was closed, as if killed by SIGPIPE (128 + 13).
EXIT_BROKEN_PIPE = 141


def _quiet_stdout() -> None:
    """Point stdout at /dev/null once the reader has gone, so the interpreter's final flush
    does not fail again (the recipe of the Python documentation, signal module)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):       # no real stdout (captured, in-process)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    name = " ".join(filter(None, (args.subcommand, getattr(args, "suite_command", None))))
    try:
        code = int(args.func(args))
        sys.stdout.flush()                                  # a closed pipe shows here, not at exit
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except (ValueError, KeyError, OSError) as exc:      # OSError: an output file that cannot be written
        print(f"sdpembed {name}: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"sdpembed {name}: error: out of memory", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # e.g. the CVXPY ground truth of verify did not solve
        print(f"sdpembed {name}: failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"sdpembed {name}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
