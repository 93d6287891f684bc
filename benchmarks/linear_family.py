"""Benchmark: the linear-embedding family on one δ-vs-M footing (issue 8).

For every linear method of :data:`sdpembed.linear.LINEAR_METHODS` (PCA exact and randomized,
Gaussian and Rademacher projections, ADAGIO with exact and randomized PCA, FroMax and NILE-Pro
where registered) and NuMax: the dimension M each needs for an isometry constant δ on *all*
training secants, δ ∈ {0.05, 0.1, 0.2}, and the time. Methods without a native δ get the
smallest M found by :func:`sdpembed.linear.embed` (bisection on M, exact for PCA, one seed per M
for the random maps); NuMax, FroMax and NILE-Pro take δ directly.

Two distortion measures (``sdpembed.linear.methods``): NuMax's RIP (2) on squared norms —
the δ of the NuMax SDP, the common footing — and ADAGIO's (3), |‖Ψv‖/‖v‖ − 1|, the definition
behind ADAGIO's Table 3 (about twice as lenient; NuMax is solved only under (2)).

Part (a) — translating squares, 16×16 images of an 8×8 square (81 images, 3,240 secants).
Part (b) — ADAGIO Table 3: 800 seeded MNIST test images at 28×28 (319,600 secants). NuMax's
ranks and times there come from ``benchmarks/numax_mnist.py --parts a`` (its JSON,
``benchmarks/results/numax_mnist_table3.json``, 15 minutes at δ = 0.05), unless
``--numax-mnist`` re-runs NuMax-CG here.

Part (c) — Luo et al. (003) Table 7.1: translating squares X₁ (60 random 7×7 images) and X₂
(200 random 14×14 images), δ ∈ {0.4, 0.25, 0.1}: NuMax's rank and time, then FroMax and NILE-Pro
at that rank (003's setting: "given δ and the optimal rank from NuMax RA"), and FroMax RA /
NILE-Pro RA (Algorithm 3, over all pairs by column generation) for the lowest rank each finds.
003 does not say how the 60/200 images are "randomly generated" nor the side of the square; we
draw the square's corner uniformly at real positions and render pixel coverage
(:func:`random_translating_squares`, side 3 at 7×7 and 6 at 14×14), so the images are distinct,
as 003's 60 > 25 integer positions require. The published ranks and times sit beside ours in
the JSON (``published_table7_1``).

Part (d) — 003 Table 7.2 analogue: NuMax, FroMax RA and NILE-Pro RA on seeded subsets of the
MNIST test "5"s (``--table7-2-sizes``, default 95 and 200; 003 also has 500), 28×28 averaged over
4×4 blocks to 7×7 (N = 49), δ ∈ {0.4, 0.2, 0.1}. Ours only: the cells of 003's Table 7.2 are lost
in the text extraction of the paper we have.

Times: ``search_s`` is the whole search for M (several fits); ``fit_s`` one fit at the chosen M
(the run time ADAGIO's Table 3 reports).

``--time-limit T`` runs every cell in a child process and stops it after T seconds (``--cpu-limit
T`` after T CPU seconds, which a loaded machine does not shorten); such a cell records ``dim:
null`` and ``note: "time limit (T s)"``, never a number it did not finish. Every cell records its
CPU seconds (``search_cpu_s``); a FroMax/NILE-Pro rank adjustment also its runs (``steps``: start
rank, status, iterations, CPU and wall seconds, and what ended each run) and ``attempts_per_rank``.
Every cell runs in a child process whose address space is limited to ``--memory-limit-gb``
(default 12; ``RLIMIT_AS``): a cell that needs more records ``status: "memory limit"`` and
``dim: null`` instead of taking the machine down (0 switches the limit off; with neither
limit the cells run in this process). A cell run in a child records its peak resident
memory (``peak_rss_mb``).
``--json`` with a part that the file already holds replaces only that part: the other parts of
an existing JSON at the same path are kept.

    OPENBLAS_NUM_THREADS=1 python benchmarks/linear_family.py [--parts abcd] [--json PATH] [--time-limit T]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import queue
import resource
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import report

from sdpembed._progress import track
from sdpembed.datasets import load_mnist, translating_squares
from sdpembed.linear import LINEAR_METHODS, embed
from sdpembed.validation import SecantSet

ROOT = Path(__file__).resolve().parent.parent
DELTAS = (0.05, 0.1, 0.2)

#: label -> (method, constructor options); the rows of the tables, in order.
BASELINES = {
    "PCA": ("pca", {}),
    "PCA (randomized)": ("pca_randomized", {}),
    "Gaussian": ("gaussian", {}),
    "Rademacher (JL)": ("rademacher", {}),
    "ADAGIO": ("adagio", {}),
    "ADAGIO (randomized PCA)": ("adagio", {"pca_solver": "randomized"}),
}
#: Methods with a native δ (solved under RIP (2) only), where registered. FroMax and NILE-Pro start
#: their rank adjustment at NuMax's rank (``initial_rank="from_numax"``; the NuMax solve is in the cell's time).
NATIVE = {"NuMax": ("numax", {}), "FroMax": ("fromax", {"initial_rank": "from_numax"}),
          "NILE-Pro": ("nilepro", {"initial_rank": "from_numax"})}

#: ADAGIO Table 3 (Błasiok and Tsourakakis), MNIST-800, measure (3) for PCA/JL/ADAGIO:
#: (dimension, seconds); None where the paper reports none.
PUBLISHED_TABLE3 = {
    "PCA": {0.05: (337, 5.18), 0.1: (280, 5.1), 0.2: (205, 4.84)},
    "Rademacher (JL)": {0.05: (None, None), 0.1: (None, None), 0.2: (260, 0.45)},
    "NuMax": {0.05: (83, 1105.0), 0.1: (59, 373.0), 0.2: (42, 220.0)},
    "ADAGIO": {0.05: (298, 5.6), 0.1: (187, 5.5), 0.2: (95, 4.8)},
    "ADAGIO (randomized PCA)": {0.05: (298, 6.64), 0.1: (190, 4.01), 0.2: (98, 1.82)},
}


#: Address-space limit of a cell's child process in GB (``--memory-limit-gb``; None: no limit).
MEMORY_LIMIT_GB: float | None = 12.0
#: CPU seconds after which a cell's child process is stopped (``--cpu-limit``; None: no limit).
#: Under load a CPU limit judges the method, a wall-clock limit the machine.
CPU_LIMIT: float | None = None


def _child(target, args: tuple, out, memory_limit_gb: float | None = None) -> None:
    global MEMORY_LIMIT_GB, CPU_LIMIT
    MEMORY_LIMIT_GB = CPU_LIMIT = None                      # the cell runs here, not in a grandchild
    if memory_limit_gb is not None:
        limit = int(memory_limit_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        value = target(*args)
        if isinstance(value, dict):
            value = {**value, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
        out.put(("ok", value))
    except MemoryError:                                     # the address-space limit: recorded, not raised
        out.put(("memory", traceback.format_exc()))
    except BaseException:                                   # reported by the parent, never hidden as a time-out
        out.put(("error", traceback.format_exc()))


def _peak_rss_mb(pid: int) -> float | None:
    """Peak resident memory (VmHWM) of a running process in MB, if /proc has it."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM"))
    except (OSError, StopIteration, ValueError):
        return None


def _cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) a running process has used, if /proc has them."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def with_time_limit(target, args: tuple, time_limit: float | None, row: dict,
                    memory_limit_gb: float | None = -1.0) -> dict:
    """``target(*args)`` (a dict), in a forked child stopped after ``time_limit`` seconds (or
    :data:`CPU_LIMIT` CPU seconds), its address space limited to ``memory_limit_gb`` (default:
    :data:`MEMORY_LIMIT_GB`).

    On time-out the child is killed and ``row`` is returned with ``dim = None`` and the note
    ``"time limit (T s)"`` (``"CPU time limit (T s)"``): a cell that did not finish records no
    number. A ``MemoryError`` in
    the child (the memory limit) returns ``row`` with ``dim = None`` and status
    ``"memory limit"``. Any other exception in the child, or its death, is raised here as a
    ``RuntimeError``. With neither limit the target runs in this process.
    """
    if memory_limit_gb is not None and memory_limit_gb < 0:
        memory_limit_gb = MEMORY_LIMIT_GB
    if time_limit is None and memory_limit_gb is None and CPU_LIMIT is None:
        return target(*args)
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_child, args=(target, args, out, memory_limit_gb), daemon=True)
    start = time.perf_counter()
    child.start()
    while True:
        left = np.inf if time_limit is None else time_limit - (time.perf_counter() - start)
        cpu = _cpu_seconds(child.pid) if CPU_LIMIT is not None else None
        if left <= 0.0 or (cpu is not None and cpu >= CPU_LIMIT):
            peak = _peak_rss_mb(child.pid)
            child.kill()
            child.join()
            note = f"time limit ({time_limit:g} s)" if left <= 0.0 else f"CPU time limit ({CPU_LIMIT:g} s)"
            return {**row, "dim": None, "status": "time limit", "note": note,
                    "search_s": time.perf_counter() - start, "search_cpu_s": cpu, "peak_rss_mb": peak}
        try:
            kind, value = out.get(timeout=min(left, 1.0))
            break
        except queue.Empty:
            if not child.is_alive() and out.empty():
                raise RuntimeError(f"the benchmark cell's process ended without a result (exit code "
                                   f"{child.exitcode})") from None
    child.join()
    if kind == "memory":
        last = value.strip().splitlines()[-1]
        return {**row, "dim": None, "status": "memory limit",
                "note": f"memory limit ({memory_limit_gb:g} GB address space): {last}",
                "search_s": time.perf_counter() - start}
    if kind == "error":
        raise RuntimeError(f"the benchmark cell failed in its child process:\n{value}")
    return value


def run_method(label: str, method: str, options: dict, X: np.ndarray, delta: float, measure: str,
               secant_set: SecantSet, time_limit: float | None = None) -> dict:
    """One (method, δ, measure) cell: the dimension found, its training δ, search and fit times
    (in a child process stopped after ``time_limit`` seconds when one is given)."""
    row = {"method": label, "name": method, "delta": delta, "measure": measure}
    if "initial_rank" in options:                        # where a rank adjustment started (R₀)
        row["initial_rank"] = options["initial_rank"]
    if time_limit is not None or MEMORY_LIMIT_GB is not None or CPU_LIMIT is not None:
        return with_time_limit(run_method, (label, method, options, X, delta, measure, secant_set), time_limit,
                               row)
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        model = embed(method, X, delta=delta, measure=measure, random_state=0, **options)
    except ValueError as exc:                            # the δ is out of reach for this method
        row.update(dim=None, note=str(exc).split(";")[0], search_s=time.perf_counter() - start)
        return row
    row["search_s"] = time.perf_counter() - start
    row["search_cpu_s"] = time.process_time() - cpu_start
    row["dim"] = int(model.n_components_)
    row["train_delta"] = float(secant_set.isometry_constant(model.components_, measure))
    selection = getattr(model, "selection_", None)
    if selection is None:                                # native δ: the search was the fit
        row["fit_s"] = row["search_s"]
    else:
        start = time.perf_counter()
        embed(method, X, dim=row["dim"], random_state=0, **options)
        row["fit_s"] = time.perf_counter() - start
    result = getattr(model, "result_", None)
    if result is not None and hasattr(result, "status"):
        row["status"] = str(result.status)
        if hasattr(result, "iterations"):
            row["iterations"] = int(result.iterations)
        row.update(rank_steps(result))
    return row


def rank_steps(result) -> dict:
    """The rank adjustment's steps of a FroMax/NILE-Pro RA result (empty for other results): per
    run its start rank, the rank it ended at, status, distortion, iterations, CPU and wall seconds
    and what ended it; and how many runs each rank took."""
    history = getattr(result, "history", None) or {}
    if not str(getattr(result, "method", "")).endswith("_ra") or "start_rank" not in history:
        return {}
    steps = [{"start_rank": int(history["start_rank"][k]), "rank": int(history["rank"][k]),
              "status": str(history["status"][k]), "isometry": float(history["isometry"][k]),
              "iterations": int(history["iterations"][k]),
              "cpu_s": float(np.diff(history["cpu_time"], prepend=0.0)[k]),
              "wall_s": float(np.diff(history["time"], prepend=0.0)[k]),
              "message": str(history["message"][k])} for k in range(len(history["start_rank"]))]
    attempts: dict[str, int] = {}
    for step in steps:
        attempts[str(step["start_rank"])] = attempts.get(str(step["start_rank"]), 0) + 1
    return {"message": str(result.message), "steps": steps, "attempts_per_rank": attempts}


def table(X: np.ndarray, name: str, native: bool, measures=("rip", "adagio"),
          time_limit: float | None = None, only: set[str] | None = None,
          deltas: tuple[float, ...] = DELTAS, verbose: bool = False) -> list[dict]:
    """Every method (or the labels in ``only``) at every δ of ``deltas`` (and measure) on the points X."""
    secant_set = SecantSet(X=X)
    rows = []
    print(f"\n{name}: n = {X.shape[0]}, N = {X.shape[1]}, {secant_set.n_secants} secants", flush=True)
    print(f"  {'method':<26}{'measure':<8}" + "".join(f"{'M @ ' + str(d):>12}" for d in deltas)
          + f"{'fit s @ 0.1':>13}", flush=True)
    groups = [(label, spec, measure) for label, spec in BASELINES.items() for measure in measures]
    if native:
        groups += [(label, spec, "rip") for label, spec in NATIVE.items() if spec[0] in LINEAR_METHODS]
    if only is not None:
        groups = [group for group in groups if group[0] in only]
    for label, (method, options), measure in track(groups, f"{name} methods", unit="method"):
        if verbose and method in ("fromax", "nilepro"):
            options = {**options, "verbose": True}           # one line per rank step and CG round
        cells = [run_method(label, method, options, X, delta, measure, secant_set, time_limit) for delta in deltas]
        rows += cells
        dims = "".join(f"{_dim_text(c):>12}" for c in cells)
        fit = next((c.get("fit_s") for c in cells if c["delta"] == 0.1), None)
        print(f"  {label:<26}{measure:<8}{dims}{'' if fit is None else f'{fit:13.2f}'}", flush=True)
    return rows


def _dim_text(cell: dict) -> str:
    if cell.get("status") == "time limit":
        return "t/l"
    if cell.get("status") == "memory limit":
        return "mem"
    return "–" if cell.get("dim") is None else str(cell["dim"])


#: 003 Table 7.1: (image side, images) -> δ -> (rank "from NuMax RA", FroMax s, NILE-Pro s).
PUBLISHED_TABLE7_1 = {
    (7, 60): {0.4: (9, 1.3, 0.7), 0.25: (9, 1.2, 1.1), 0.1: (13, 1.4, 1.5)},
    (14, 200): {0.4: (16, 511.2, 109.1), 0.25: (18, 269.4, 144.4), 0.1: (27, 74.5, 448.5)},
}
#: Square side of our X₁, X₂ (003 does not state it).
TABLE7_1_SQUARE = {7: 3, 14: 6}
#: Image sides on which part (c) also runs FroMax RA / NILE-Pro RA (the lowest rank each finds).
RA_SIDES = (7, 14)


def random_translating_squares(image_size: int, square_size: int, n_images: int, random_state=0) -> np.ndarray:
    """``n_images`` images of a white square (side ``square_size``) at uniformly random real positions.

    The top-left corner (r, c) is uniform on [0, image_size − square_size]²; pixel (i, j) takes
    the area of its overlap with the square, so sub-pixel shifts give distinct images (003,
    Sec. 7.1: "randomly generating 60 49-dimensional images").
    """
    rng = np.random.default_rng(random_state)
    corners = rng.uniform(0.0, image_size - square_size, size=(n_images, 2))
    grid = np.arange(image_size, dtype=float)

    def overlap(start: np.ndarray) -> np.ndarray:               # (n, image_size) overlap of [start, start+s]
        lo = np.maximum(grid[None, :], start[:, None])
        hi = np.minimum(grid[None, :] + 1.0, start[:, None] + square_size)
        return np.clip(hi - lo, 0.0, 1.0)

    rows, cols = overlap(corners[:, 0]), overlap(corners[:, 1])
    return np.einsum("ni,nj->nij", rows, cols).reshape(n_images, -1)


def _native_cell(label: str, method: str, X: np.ndarray, delta: float, rank: int | None,
                 secant_set: SecantSet, options: dict | None = None) -> dict:
    """One native-δ fit: NuMax at δ, FroMax/NILE-Pro at a fixed ``rank``, or their RA (``rank=None``);
    ``options`` are constructor parameters of the method (e.g. its ``max_iter``)."""
    row: dict = {"method": label, "name": method, "delta": delta, "fixed_rank": rank}
    start, cpu_start = time.perf_counter(), time.process_time()
    if rank is None:
        model = embed(method, X, delta=delta, random_state=0, **(options or {}))
    else:
        model = LINEAR_METHODS[method](delta=delta, n_components=rank, random_state=0, **(options or {}))
        with warnings.catch_warnings():                          # a failure is recorded, not warned about
            warnings.simplefilter("ignore")
            model.fit(X)
    row["fit_s"] = time.perf_counter() - start
    row["fit_cpu_s"] = time.process_time() - cpu_start       # the cell's own CPU seconds (load-independent)
    row["dim"] = int(model.n_components_)
    row["train_delta"] = float(secant_set.isometry_constant(model.components_, "rip"))
    result = getattr(model, "result_", None)
    if result is not None:
        row["status"] = str(result.status)
        row["iterations"] = int(getattr(result, "iterations", 0))
        row.update(rank_steps(result))                           # a rank adjustment's runs: what ended each
    row["met_delta"] = bool(row["train_delta"] <= delta * (1.0 + 1e-9))
    return row


def table7_1(time_limit: float | None) -> list[dict]:
    """003 Table 7.1 analogue (module docstring, part (c))."""
    rows: list[dict] = []
    for (side, n_images), published in track(PUBLISHED_TABLE7_1.items(), "Table 7.1 data", unit="data set"):
        X = random_translating_squares(side, TABLE7_1_SQUARE[side], n_images, random_state=0)
        secant_set = SecantSet(X=X)
        print(f"\n003 Table 7.1: {n_images} random {side}x{side} squares (side {TABLE7_1_SQUARE[side]}), "
              f"{secant_set.n_secants} secants", flush=True)
        for delta, (pub_rank, pub_fromax, pub_nilepro) in published.items():
            common = {"data": f"{side}x{side}", "n_images": n_images}

            def cell(label: str, method: str, rank: int | None, X=X, delta=delta, secant_set=secant_set,
                     common=common) -> dict:
                base = {"method": label, "name": method, "delta": delta, "fixed_rank": rank}
                out = with_time_limit(_native_cell, (label, method, X, delta, rank, secant_set), time_limit, base)
                out.update(common)
                rows.append(out)
                fit = out.get("fit_s", out.get("search_s"))
                print(f"  δ = {delta:<5} {label:<12} rank {_dim_text(out):>4}  {out.get('status', ''):<15}"
                      f"train δ {out.get('train_delta', float('nan')):.4f}  {fit:8.1f} s", flush=True)
                return out

            numax = cell("NuMax", "numax", None)
            rank = numax["dim"] if numax.get("dim") is not None else pub_rank
            for label, method, pub in (("FroMax", "fromax", pub_fromax), ("NILE-Pro", "nilepro", pub_nilepro)):
                out = cell(label, method, rank)
                out.update(rank_source="NuMax (ours)" if numax.get("dim") is not None else "003 Table 7.1",
                           published_rank=pub_rank, published_s=pub)
            if side in RA_SIDES:
                for label, method in (("FroMax RA", "fromax"), ("NILE-Pro RA", "nilepro")):
                    cell(label, method, None)
    return rows


#: 003 Table 7.2 setting: subsets of the MNIST "5"s at 7×7 (N = 49), δ ∈ {0.4, 0.2, 0.1}.
TABLE7_2_DELTAS = (0.4, 0.2, 0.1)


def mnist_fives_7x7(n_images: int, random_state=0) -> np.ndarray:
    """``n_images`` seeded MNIST test "5"s, 28×28 averaged over 4×4 blocks to 7×7 (003 Sec. 7.3:
    "subsets consisting of 95, 200, and 500 data points with original dimension 49")."""
    X, _ = load_mnist(size=28, digits=5, n_samples=n_images, random_state=random_state)
    return X.reshape(n_images, 7, 4, 7, 4).mean(axis=(2, 4)).reshape(n_images, 49)


def table7_2(sizes: tuple[int, ...], time_limit: float | None) -> list[dict]:
    """003 Table 7.2 analogue: NuMax, FroMax RA and NILE-Pro RA ranks and times (ours only)."""
    rows: list[dict] = []
    for n_images in track(sizes, "Table 7.2 sizes", unit="size"):
        X = mnist_fives_7x7(n_images)
        secant_set = SecantSet(X=X)
        print(f"\n003 Table 7.2: {n_images} MNIST 5s at 7x7, {secant_set.n_secants} secants", flush=True)
        for delta in TABLE7_2_DELTAS:
            for label, method in (("NuMax", "numax"), ("FroMax RA", "fromax"), ("NILE-Pro RA", "nilepro")):
                base = {"method": label, "name": method, "delta": delta, "fixed_rank": None}
                out = with_time_limit(_native_cell, (label, method, X, delta, None, secant_set), time_limit, base)
                out["n_images"] = n_images
                rows.append(out)
                fit = out.get("fit_s", out.get("search_s"))
                print(f"  δ = {delta:<5} {label:<12} rank {_dim_text(out):>4}  {out.get('status', ''):<15}"
                      f"train δ {out.get('train_delta', float('nan')):.4f}  {fit:8.1f} s", flush=True)
    return rows


def numax_mnist_rows(path: Path) -> list[dict]:
    """NuMax-CG's MNIST-800 ranks and times from the numax_mnist benchmark's JSON."""
    data = json.loads(path.read_text())
    return [{"method": "NuMax", "name": "numax", "delta": row["delta"], "measure": "rip", "dim": row["rank"],
             "fit_s": row["time_s"], "status": row["status"], "relative_gap": row["relative_gap"],
             "source": f"{path.relative_to(ROOT)} ({data.get('date')})"} for row in data["table3"]["rows"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="ab")
    parser.add_argument("--n-points", type=int, default=800)
    parser.add_argument("--numax-mnist", action="store_true", help="re-run NuMax-CG on MNIST-800 (about 25 min)")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "linear_family.json"))
    parser.add_argument("--table7-2-sizes", default="95,200", help="part (d): numbers of MNIST 5s (003: 95,200,500)")
    parser.add_argument("--methods", default=None,
                        help="comma-separated row labels (e.g. 'NuMax'): re-run only these rows of parts a and b, "
                             "keeping the other rows of the JSON")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds per cell (each cell then runs in a child process); a cell stopped by it "
                             "records 'time limit', not a number")
    parser.add_argument("--cpu-limit", type=float, default=None,
                        help="CPU seconds per cell (each cell then runs in a child process); a cell stopped by it "
                             "records 'time limit', not a number")
    parser.add_argument("--memory-limit-gb", type=float, default=12.0,
                        help="address-space limit of each cell's child process in GB (0: none); a cell that "
                             "exceeds it records 'memory limit', not a number")
    parser.add_argument("--deltas", default=None,
                        help="with --methods: comma-separated δs to re-run in parts a and b (default 0.05,0.1,0.2); "
                             "the JSON keeps those rows' other δs")
    parser.add_argument("--verbose", action="store_true",
                        help="FroMax/NILE-Pro print their rank steps and column-generation rounds (progress of "
                             "cells that may time out)")
    args = parser.parse_args()
    global MEMORY_LIMIT_GB, CPU_LIMIT
    MEMORY_LIMIT_GB = args.memory_limit_gb if args.memory_limit_gb > 0 else None
    CPU_LIMIT = args.cpu_limit
    start = time.perf_counter()
    path = Path(args.json)
    out: dict = json.loads(path.read_text()) if path.exists() else {}     # keep the parts not re-run
    out["benchmark"] = "linear_family"
    stamp = {**report.run_stamp(), "time_limit_s": args.time_limit, "cpu_limit_s": CPU_LIMIT,
             "memory_limit_gb": MEMORY_LIMIT_GB}
    only = None if args.methods is None else set(args.methods.split(","))
    deltas = DELTAS if args.deltas is None else tuple(float(d) for d in args.deltas.split(","))
    if deltas != DELTAS and only is None:
        parser.error("--deltas needs --methods (a subset of the cells of some rows)")

    def merged(part: str, rows: list[dict]) -> list[dict]:
        """The re-run rows, and with ``--methods`` the JSON's other rows (and other δs) of the part."""
        if only is None:
            return rows
        old = out.get(part, {}).get("rows", [])
        return [row for row in old if row.get("method") not in only or row.get("delta") not in deltas] + rows

    if "a" in args.parts:
        X = translating_squares(16, 8)
        rows = merged("squares", table(X, "translating squares 16x16", native=True, time_limit=args.time_limit,
                                       only=only, deltas=deltas))
        if only is None:
            out["squares"] = {"setup": "translating squares, 16x16 images of an 8x8 square (81 images)",
                              "rows": rows, **stamp}
        else:                          # the part's stamp stays that of its other rows
            out["squares"] = {**out.get("squares", {}), "rows": rows, "rerun": {"methods": sorted(only), **stamp}}
    if "c" in args.parts:
        out["luo_table7_1"] = {
            "setup": "003 Table 7.1: random translating squares, X1 = 60 7x7 images (square side 3), X2 = 200 "
                     "14x14 images (side 6), real-valued corner positions (seed 0), pixel coverage; NuMax at delta, "
                     "FroMax and NILE-Pro at NuMax's rank, FroMax RA and NILE-Pro RA; RIP (2)",
            "rows": table7_1(args.time_limit),
            "published_table7_1": {f"{side}x{side}, {n} images": {str(d): dict(zip(("rank", "fromax_s", "nilepro_s"), v,
                                                                                  strict=True))
                                                                   for d, v in cells.items()}
                                   for (side, n), cells in PUBLISHED_TABLE7_1.items()},
            **stamp}
    if "d" in args.parts:
        sizes = tuple(int(v) for v in args.table7_2_sizes.split(","))
        out["luo_table7_2"] = {
            "setup": "003 Table 7.2 analogue: seeded MNIST test 5s (seed 0), 28x28 averaged over 4x4 blocks to 7x7, "
                     "all pairs; NuMax, FroMax RA, NILE-Pro RA; RIP (2). 003's cells are not in our text of the paper.",
            "rows": table7_2(sizes, args.time_limit), **stamp}
    if "b" in args.parts:
        X, _ = load_mnist(size=28, n_samples=args.n_points, random_state=0)
        rows = table(X, f"MNIST-{args.n_points} (28x28)", native=args.numax_mnist, time_limit=args.time_limit,
                     only=only, deltas=deltas, verbose=args.verbose)
        if only is not None and path.exists():
            # the file as it is now: re-runs of other cells in parallel processes may have written it
            out.update({k: v for k, v in json.loads(path.read_text()).items() if k in ("mnist", "runs")})
        if not args.numax_mnist:
            rows += numax_mnist_rows(ROOT / "benchmarks" / "results" / "numax_mnist_table3.json")
            print("  NuMax (from numax_mnist_table3.json): "
                  + ", ".join(f"δ = {r['delta']}: M = {r['dim']} in {r['fit_s']:.0f} s" for r in rows[-3:]))
        part = {"setup": f"{args.n_points} MNIST test images (28x28, seeded sample, seed 0), all pairs",
                "rows": merged("mnist", rows), "published_table3": {k: {str(d): v for d, v in p.items()}
                                                                  for k, p in PUBLISHED_TABLE3.items()}}
        if only is None:
            out["mnist"] = {**part, **stamp}
        else:                          # the part's stamp stays that of its other rows; one stamp per re-run label
            reruns = dict(out.get("mnist", {}).get("reruns", {}))
            ended = {**stamp, "load_average_end": [round(v, 2) for v in os.getloadavg()]}
            reruns.update({f"{label} {delta:g}": ended for label in sorted(only) for delta in deltas})
            out["mnist"] = {**out.get("mnist", {}), **part, "reruns": reruns}
    runs = out.get("runs") if isinstance(out.get("runs"), dict) else {}      # part -> how it was last run
    for part, name in (("a", "squares"), ("b", "mnist"), ("c", "luo_table7_1"), ("d", "luo_table7_2")):
        if part in args.parts:
            limit = "" if args.time_limit is None else f" --time-limit {args.time_limit:g}"
            limit += "" if CPU_LIMIT is None else f" --cpu-limit {CPU_LIMIT:g}"
            limit += "" if MEMORY_LIMIT_GB is None else f" --memory-limit-gb {MEMORY_LIMIT_GB:g}"
            methods = "" if only is None else f" --methods {args.methods}"
            methods += "" if args.deltas is None else f" --deltas {args.deltas}"
            runs[name] = (f"--parts {args.parts}{limit}{methods}, {time.perf_counter() - start:.0f} s, "
                          f"{stamp['date']}")
    out.update(total_time_s=time.perf_counter() - start, runs=runs)
    report.write_results(path, out, {**stamp, "seconds": round(time.perf_counter() - start)})


if __name__ == "__main__":
    main()
