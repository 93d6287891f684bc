"""Benchmark: start-up of the command line, and a suite run of our own solver (issue 26).

Part 1 — start-up. Each command runs ``--repeat`` times in a fresh interpreter, interleaved with
``python -c "import numpy"`` in the same run, and its median wall time is reported with its ratio
to numpy's: ``import sdpembed``, ``sdpembed --help``, ``sdpembed suite list`` and
``sdpembed verify`` on one small suite instance per problem (a solution written beforehand by the
problem's default solver; the optimum is stored in the instance, so nothing is solved). One more
run of each with ``-X importtime`` lists which of SciPy, scikit-learn and CVXPY it loaded.

Part 2 — ``sdpembed suite run --command "python -m sdpembed solve {instance} --out {solution}"``
over the shipped suite: the run's wall time, the sum of its programs' times (each a fresh
``python -m sdpembed solve``), and, for comparison, the same solves in this process (load the
instance, solve, write the solution: no interpreter start-up), so that the run's time splits into
start-up of the solving processes, solving, and grading.

Every process runs with one BLAS thread (the variables below are set for this process and its
children before numpy is imported).

    python benchmarks/startup.py [--repeat 7] [--no-suite-run] [--json PATH]

The targets of issue 26: ``--help`` and ``verify`` on a suite instance ≤ 0.3 s and ≤ 2× ``import
numpy``; the suite run of our solver ≤ 30 s.
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import report  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: One small suite instance per problem, for ``verify``.
VERIFY_INSTANCES = ("numax-squares5", "numax_class-shapes6", "lmnn-iris8", "lmnn_multi-clusters3x6",
                    "mvu_oos-swiss-k3", "mvu-equality-swiss10")

#: The modules whose loading the start-up table reports.
WATCHED = ("scipy", "sklearn", "cvxpy")

SOLVE = f"{sys.executable} -m sdpembed solve {{instance}} --out {{solution}}"


#: Where the interpreters cache their bytecode (set by ``main``; None: as the environment says).
BYTECODE: Path | None = None


def _env() -> dict[str, str]:
    """This process's environment, with the sdpembed of this checkout first on the path and, unless
    ``--no-bytecode``, bytecode cached in a private directory as an installed package has it (pip
    compiles a package when it installs it)."""
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else "")}
    if BYTECODE is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(BYTECODE)
    return env


def _solutions(directory: Path) -> dict[str, tuple[Path, Path]]:
    """Instance file and solution file (by the problem's default solver) of each verify instance."""
    from sdpembed.io import load_instance, write_solution
    from sdpembed.registry import solve
    from sdpembed.validation.suite import default_suite_dir

    out = {}
    for name in VERIFY_INSTANCES:
        path = default_suite_dir() / f"{name}.npz"
        instance = load_instance(path)
        result = solve(instance)
        if result.status != "optimal":
            raise RuntimeError(f"{name}: the default solver ended {result.status}: {result.message}")
        write_solution(directory / f"{name}.npz", instance, result)
        out[name] = (path, directory / f"{name}.npz")
    return out


def _commands(solutions: dict[str, tuple[Path, Path]]) -> dict[str, list[str]]:
    py = sys.executable
    commands = {
        'python -c "import numpy"': [py, "-c", "import numpy"],
        'python -c "import sdpembed"': [py, "-c", "import sdpembed"],
        "sdpembed --help": [py, "-m", "sdpembed", "--help"],
        "sdpembed suite list": [py, "-m", "sdpembed", "suite", "list"],
    }
    for name, (instance, solution) in solutions.items():
        commands[f"sdpembed verify {name}"] = [py, "-m", "sdpembed", "verify", str(instance), str(solution)]
    return commands


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of a command."""
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(), text=True)
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {done.returncode}: {done.stderr[-2000:]}")
    return elapsed, cpu


def _loaded(argv: list[str]) -> list[str]:
    """Which of :data:`WATCHED` the command imports (from ``-X importtime``)."""
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=_env(), text=True, check=True)
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return [name for name in WATCHED if name in names]


def startup(repeat: int, solutions: dict[str, tuple[Path, Path]]) -> list[dict]:
    commands = _commands(solutions)
    for argv in commands.values():                # warm-up: the bytecode cache, the file system cache
        _run(argv)
    wall: dict[str, list[float]] = {label: [] for label in commands}
    cpu: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(repeat):                       # interleaved, so that load changes hit every command alike
        for label, argv in commands.items():
            seconds, cpu_seconds = _run(argv)
            wall[label].append(seconds)
            cpu[label].append(cpu_seconds)
    base = statistics.median(wall['python -c "import numpy"'])
    base_cpu = statistics.median(cpu['python -c "import numpy"'])
    rows = []
    for label, argv in commands.items():
        median, median_cpu = statistics.median(wall[label]), statistics.median(cpu[label])
        rows.append({"command": label, "median_s": median, "min_s": min(wall[label]), "max_s": max(wall[label]),
                     "vs_numpy": median / base, "cpu_s": median_cpu, "cpu_vs_numpy": median_cpu / base_cpu,
                     "loads": _loaded(argv)})
    return rows


def in_process_solves(directory: Path) -> dict[str, float]:
    """Seconds to load, solve and write each suite instance in this process (no start-up)."""
    from sdpembed.io import load_instance, write_solution
    from sdpembed.registry import solve
    from sdpembed.validation.suite import load_suite

    out = {}
    for entry in load_suite().entries:
        start = time.perf_counter()
        instance = load_instance(entry.path)
        result = solve(instance)
        write_solution(directory / f"{entry.name}.npz", instance, result)
        out[entry.name] = time.perf_counter() - start
    return out


def suite_run() -> dict:
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "sdpembed", "suite", "run", "--command", SOLVE, "--json"],
                          capture_output=True, text=True, env=_env())
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode not in (0, 1):
        raise RuntimeError(f"suite run exited with {done.returncode}: {done.stderr[-2000:]}")
    suite_report = json.loads(done.stdout)
    programs = {r["name"]: r["wall_time"] for r in suite_report["results"]}
    with tempfile.TemporaryDirectory() as scratch:
        own = time.process_time()
        solves = in_process_solves(Path(scratch))
        own = time.process_time() - own
    return {"wall_s": elapsed, "cpu_s": cpu, "in_process_cpu_s": own, "passed": suite_report["passed"],
            "graded": suite_report["graded"], "total": suite_report["total"],
            "programs_s": sum(programs.values()), "in_process_s": sum(solves.values()),
            "slowest": sorted(({"name": k, "program_s": v, "in_process_s": solves[k]} for k, v in programs.items()),
                              key=lambda r: -r["program_s"])[:5]}


def machine() -> dict:
    import numpy as np

    return {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "load_average": list(os.getloadavg()),
            "threads": {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each start-up command (median reported)")
    parser.add_argument("--no-suite-run", action="store_true", help="part 1 only")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="run the interpreters as the environment says (PYTHONDONTWRITEBYTECODE: no .pyc)")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "startup.json",
                        help="where to write the results (default: benchmarks/results/startup.json)")
    args = parser.parse_args()

    global BYTECODE
    cache = tempfile.TemporaryDirectory(prefix="sdpembed-pycache-")
    BYTECODE = None if args.no_bytecode else Path(cache.name)
    with tempfile.TemporaryDirectory() as scratch:
        rows = startup(args.repeat, _solutions(Path(scratch)))
    print(f"Start-up: median of {args.repeat} runs each after a warm-up, interleaved; one BLAS thread; bytecode "
          + ("as the environment says" if args.no_bytecode else "cached (as installed)"))
    print("| command | wall, median [s] | min–max [s] | vs import numpy | CPU, median [s] | vs import numpy | loads |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| `{r['command']}` | {r['median_s']:.3f} | {r['min_s']:.3f}–{r['max_s']:.3f} | "
              f"{r['vs_numpy']:.2f} | {r['cpu_s']:.3f} | {r['cpu_vs_numpy']:.2f} | {', '.join(r['loads']) or '—'} |")
    results = {"date": time.strftime("%Y-%m-%d"), "bytecode_cached": not args.no_bytecode, "startup": rows}
    if not args.no_suite_run:
        run = suite_run()
        results["suite_run"] = run
        print(f"\nSuite run of `{SOLVE.replace(sys.executable, 'python')}`: {run['passed']}/{run['graded']} passed "
              f"of {run['total']}")
        print(f"- wall time of the run: {run['wall_s']:.1f} s (CPU time of all its processes {run['cpu_s']:.1f} s)")
        print(f"- its programs (each a fresh interpreter): {run['programs_s']:.1f} s")
        print(f"- the same loads, solves and writes in one process: {run['in_process_s']:.1f} s "
              f"(CPU {run['in_process_cpu_s']:.1f} s)")
        print(f"- so start-up of the solving processes ≈ {run['programs_s'] - run['in_process_s']:.1f} s, grading and "
              f"copies ≈ {run['wall_s'] - run['programs_s']:.1f} s")
        print("- slowest: " + ", ".join(f"{r['name']} {r['program_s']:.1f} s (in process {r['in_process_s']:.1f} s)"
                                        for r in run["slowest"]))
    results["machine"] = machine()
    m = results["machine"]
    print(f"\nDate {results['date']}; {m['platform']}, {m['cpus']} cores, Python {m['python']}, numpy {m['numpy']}; "
          f"load average at the end {', '.join(f'{x:.1f}' for x in m['load_average'])}")
    report.write_results(args.json, results)
    cache.cleanup()


if __name__ == "__main__":
    main()
