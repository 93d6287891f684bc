"""Benchmark: sdpembed's LMNN solver against metric-learn's LMNN and pylmnn (issue 5, item 5).

Data sets (each split once, stratified, 70 % train / 30 % test, ``random_state=0``; the
features are fitted on the training part only: PCA where stated, then StandardScaler):

  iris            150 × 4
  wine            178 × 13
  digits-pca30    sklearn digits, 1797 × 64 → PCA to 30 dims
  mnist5000-pca50 ``sdpembed.datasets.load_mnist(size=28, n_samples=5000, random_state=0)`` → PCA to 50

At the thesis' scale (``--datasets mnist10k-pca164,mnist10k-pca50``; written to
``lmnn_thesis_scale.json``, a table of its own): all 10,000 vendored MNIST test images, split
stratified 7,000 train / 3,000 test (``random_state=0``), PCA to 164 dimensions (as the thesis
did for MNIST) or 50, fitted on the training part, then divided by one number, the root mean
square of the training features (no per-coordinate scaling: the PCA geometry, and Euclidean kNN,
are unchanged). The thesis trained on all 60,000 MNIST training images (LMNN 3-NN test error
1.72 %, energy-based 1.37 %); these rows train on 7,000.

Every method sees the same preprocessed training data and k = 3 target neighbours, μ = 0.5
(metric-learn ``regularization=0.5``, pylmnn ``weight_push_loss=0.5``). For each method:

* wall time of the fit (the peers' is measured inside their process, imports excluded; ours
  includes building the instance, ``LMNNInstance.from_data``, whose target-neighbour search the
  peers' ``fit`` makes too);
* the (2.11) objective of the returned metric, ``LMNNInstance.objective(M)`` on OUR instance
  (our target neighbours, μ, margin 1). The peers optimise a different problem — the
  non-convex loss in L, over their own target neighbours, with their own scaling of the
  loss (pylmnn: hinge on squared distances with its own normalisation; metric-learn: its
  gradient-descent loss) — so this column says how well each returned M does on the
  convex problem (2.11), not how well each peer solved its own loss. M = LᵀL for peers that
  return L;
* kNN test error (k = 3) in the learned metric (and Euclidean kNN as a reference row), and the
  energy-based classification error (2.12) with our target neighbours and μ
  (:func:`sdpembed.models.lmnn.energy_scores`);
* CPU time of the fit (every method runs single-threaded: under a shared machine's load it is the
  time that wall time inflates least);
* our certified relative gap (peers prove nothing about their answer: "—").

The CVXPY ground truth (exact working set, Clarabel) runs on iris and wine only.

Peers run in a separate virtualenv, because metric-learn 0.7.0 calls
``check_X_y(force_all_finite=…)``, removed in scikit-learn 1.8, and pylmnn 1.6.4 imports
``six`` and (in its package ``__init__``, for its Bayesian hyper-parameter search only)
GPyOpt, and passes a 2-D ``x0`` to ``scipy.optimize.minimize``, which scipy ≥ 1.11 rejects
("'x0' must only have one dimension"). The peers' processes get ``OPENBLAS_CORETYPE`` set to the kernel
set of our own OpenBLAS (:func:`peers.peer_env`): that virtualenv's older OpenBLAS does not recognise
every CPU and would otherwise run its generic kernels; each peer run records the kernel set it used.
Recipe (what this script was run with; pip resolved scikit-learn 1.5.2, numpy 1.26.4, scipy 1.10.1,
six 1.17.0, Python 3.11):

    python -m venv /work/peers-venv
    /work/peers-venv/bin/pip install "scikit-learn<1.6" "numpy<2" "scipy<1.11" six metric-learn==0.7.0
    /work/peers-venv/bin/pip install --no-deps pylmnn==1.6.4      # skips GPyOpt/GPy/matplotlib

(also in ``benchmarks/peers_requirements.txt``). GPyOpt is not installed: the peer worker loads
``pylmnn/lmnn.py`` (the ``LargeMarginNearestNeighbor`` class, which needs only numpy, scipy,
scikit-learn and six) by file path, bypassing the package ``__init__``. Data go to the peer
process as ``.npz`` files and M comes back the same way.

    python benchmarks/lmnn_peers.py [--venv /work/peers-venv] [--datasets iris,wine,...]
                                    [--time-limit 600] [--tol 1e-5] [--json PATH]
    python benchmarks/lmnn_peers.py --alternate 3 --datasets mnist5000-pca50 --peers pylmnn
                                    # ours and pylmnn back to back, 3 rounds (wall and CPU time)
    python benchmarks/lmnn_peers.py --datasets mnist10k-pca50,mnist10k-pca164 --peers pylmnn \
                                    --time-limit 300 --no-cvxpy    # the thesis' scale (its own table)

Ours runs with interior-point tolerance ``--tol`` (default 1e-5: issue 5 asks for a certified
relative gap ≤ 1e-4) and its default ``gap_tol=1e-5``: the row says ``optimal`` only for a
certified relative gap ≤ 1e-5, whatever the tolerance. Its multiplier repair is ``--repair``
(default ``auto``, the solver's: at PCA-164, d(d+1)/2 = 13,530, the direct path — a first-order start
smoothed down to η = 10⁻³, then the margin rounds of ``sdpembed.solvers.lmnn.margin_rounds``; the
working-set rounds below).

``--time-limit`` caps every method on every data set in CPU seconds of its process (all its threads,
BLAS's included), which the machine's load does not change — at load 6 a wall-clock limit of 300 s
left 101 s of CPU. Peers: the kernel stops the peer's process at that much CPU time (``RLIMIT_CPU``,
counted from the process's start, imports included), reported as "timeout"; ours: ``cpu_time_limit``
of ``solve_lmnn_fast`` — no new working-set round or Newton step starts after it, and the row reports
the status, the certified gap reached and which metric was returned (the last interior-point iterate
or, if its loss is lower, the first-order start).
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import report
from peers import blas_architecture, peer_env

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ("iris", "wine", "digits-pca30", "mnist5000-pca50")
THESIS_SCALE = ("mnist10k-pca164", "mnist10k-pca50")
PEERS = ("metric-learn", "pylmnn")
K = 3
MU = 0.5
#: The thesis' MNIST result (all 60,000 training images, PCA to 164 dimensions): test errors of LMNN.
THESIS = {"n_train": 60000, "dim": 164, "knn_error": 0.0172, "energy_error": 0.0137}
SEED = 0


# ----------------------------------------------------------------------------- peer worker
def peer_main(name: str, data_path: str, out_path: str) -> None:
    """Runs inside the peers' virtualenv: fit one peer on the training data, write M and the time."""
    import importlib.util
    import warnings

    data = np.load(data_path, allow_pickle=False)
    X, y = data["X"], data["y"]
    warnings.simplefilter("ignore")
    if name == "metric-learn":
        import metric_learn
        from metric_learn import LMNN

        model = LMNN(n_neighbors=K, regularization=MU, random_state=SEED)
        version = metric_learn.__version__
        start, cpu = time.perf_counter(), time.process_time()
        model.fit(X, y)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        L = model.components_
        info = {"n_iter": int(getattr(model, "n_iter_", -1))}
    elif name == "pylmnn":
        import importlib.metadata
        import types
        folder = importlib.util.find_spec("pylmnn").submodule_search_locations[0]
        package = types.ModuleType("pylmnn")          # a bare package: the real __init__ imports GPyOpt
        package.__path__ = [folder]
        sys.modules["pylmnn"] = package
        module_spec = importlib.util.spec_from_file_location("pylmnn.lmnn", Path(folder) / "lmnn.py")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules["pylmnn.lmnn"] = module
        module_spec.loader.exec_module(module)        # its `from .utils import …` finds pylmnn/utils.py
        model = module.LargeMarginNearestNeighbor(n_neighbors=K, weight_push_loss=MU, random_state=SEED)
        version = importlib.metadata.version("pylmnn")
        start, cpu = time.perf_counter(), time.process_time()
        model.fit(X, y)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        L = model.components_
        info = {"n_iter": int(getattr(model, "n_iter_", -1))}
    else:
        raise ValueError(f"unknown peer {name!r}")
    import sklearn
    np.savez(out_path, L=np.asarray(L, dtype=np.float64), seconds=np.array(seconds), cpu_seconds=np.array(cpu),
             version=np.array(version), blas=np.array(str(blas_architecture())),
             sklearn=np.array(sklearn.__version__), n_iter=np.array(info["n_iter"]))


# ----------------------------------------------------------------------------- data
def load(name: str):
    from sklearn.datasets import load_digits, load_iris, load_wine
    from sklearn.decomposition import PCA
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from sdpembed.datasets import load_mnist

    if name == "iris":
        X, y, dims = *load_iris(return_X_y=True), None
    elif name == "wine":
        X, y, dims = *load_wine(return_X_y=True), None
    elif name == "digits-pca30":
        X, y, dims = *load_digits(return_X_y=True), 30
    elif name == "mnist5000-pca50":
        X, y = load_mnist(size=28, n_samples=5000, random_state=SEED)
        X, dims = X.reshape(len(X), -1), 50
    elif name in THESIS_SCALE:
        X, y = load_mnist(size=28)
        X, dims = X.reshape(len(X), -1), int(name.removeprefix("mnist10k-pca"))
    else:
        raise ValueError(f"unknown data set {name!r}")
    test_size = 3000 if name in THESIS_SCALE else 0.3
    Xtr, Xte, ytr, yte = train_test_split(np.asarray(X, dtype=np.float64), np.asarray(y), test_size=test_size,
                                          stratify=y, random_state=SEED)
    if dims is not None:
        pca = PCA(dims, random_state=SEED).fit(Xtr)
        Xtr, Xte = pca.transform(Xtr), pca.transform(Xte)
    if name in THESIS_SCALE:          # one scale for every coordinate: the thesis' PCA geometry
        rms = float(np.sqrt(np.mean(Xtr ** 2)))
        return Xtr / rms, Xte / rms, ytr, yte
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte), ytr, yte


def knn_error(L: np.ndarray, Xtr, ytr, Xte, yte) -> float:
    from sklearn.neighbors import KNeighborsClassifier

    clf = KNeighborsClassifier(K).fit(Xtr @ L.T, ytr)
    return float(np.mean(clf.predict(Xte @ L.T) != yte))


def energy_error(L: np.ndarray, Xtr, ytr, Xte, yte, targets: np.ndarray) -> float:
    """Test error of the energy-based rule (2.12) in the metric LᵀL, with our target neighbours and μ."""
    from sdpembed.models.lmnn import energy_scores

    classes, index = np.unique(ytr, return_inverse=True)
    scores = energy_scores(Xte @ L.T, Xtr @ L.T, index, targets, K, MU)
    return float(np.mean(classes[np.argmin(scores, axis=1)] != yte))


def factor(M: np.ndarray) -> np.ndarray:
    """L with LᵀL = M (M projected onto the PSD cone)."""
    lam, V = np.linalg.eigh(0.5 * (M + M.T))
    return np.sqrt(np.clip(lam, 0.0, None))[:, None] * V.T


def run_peer(venv: Path, name: str, Xtr, ytr, time_limit: float) -> dict:
    python = venv / "bin" / "python"
    if not python.exists():
        return {"status": "not installed", "message": f"{python} does not exist (see the venv recipe)"}
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "data.npz", Path(tmp) / "out.npz"
        np.savez(data, X=Xtr, y=ytr)
        env = peer_env()
        env.pop("PYTHONPATH", None)
        start = time.perf_counter()
        seconds = max(1, math.ceil(time_limit))

        def cpu_limit() -> None:                     # in the child: SIGXCPU at the soft limit, SIGKILL at the hard
            resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 5))

        proc = subprocess.run([str(python), str(Path(__file__).resolve()), "--peer", name, str(data), str(out)],
                              capture_output=True, text=True, env=env, preexec_fn=cpu_limit)
        if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            return {"status": "timeout", "message": f"stopped at the CPU-time limit of {seconds} s",
                    "seconds": None, "process_seconds": time.perf_counter() - start}
        if proc.returncode != 0:
            return {"status": "failed", "message": proc.stderr.strip().splitlines()[-1] if proc.stderr else "",
                    "seconds": None}
        res = np.load(out, allow_pickle=False)
        return {"status": "done", "L": res["L"], "seconds": float(res["seconds"]),
                "cpu_seconds": float(res["cpu_seconds"]) if "cpu_seconds" in res else None,
                "process_seconds": time.perf_counter() - start, "version": str(res["version"]),
                "blas": str(res["blas"]),
                "sklearn": str(res["sklearn"]), "n_iter": int(res["n_iter"])}


def ours_main(data_path: str, out_path: str, tol: float, time_limit: float) -> None:
    """Runs in a fresh process of this environment: build our instance and solve it, timing both (the
    imports excluded, as the peers'), and write the times and the certificate's status and gap."""
    from sdpembed.problems import LMNNInstance
    from sdpembed.solvers.lmnn.fast import solve_lmnn_fast

    data = np.load(data_path, allow_pickle=False)
    X, y = data["X"], data["y"]
    cpu, wall = time.process_time(), time.perf_counter()
    instance = LMNNInstance.from_data(X, y, k=K, mu=MU)   # the peers' fit finds targets too
    result = solve_lmnn_fast(instance, tol=tol, cpu_time_limit=time_limit)
    seconds, cpu = time.perf_counter() - wall, time.process_time() - cpu
    first_order = result.extra.get("first_order_seconds")
    np.savez(out_path, seconds=np.array(seconds), cpu_seconds=np.array(cpu), status=np.array(result.status),
             relative_gap=np.array(result.relative_gap), newton_steps=np.array(int(result.iterations)),
             first_order_seconds=np.array(np.nan if first_order is None else first_order))


def run_ours(Xtr, ytr, tol: float, time_limit: float) -> dict:
    """Our solve in a fresh process of this interpreter (``ours_main``), as ``run_peer`` runs a peer."""
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "data.npz", Path(tmp) / "out.npz"
        np.savez(data, X=Xtr, y=ytr)
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--ours", str(data), str(out),
                               repr(tol), repr(time_limit)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"our solve failed in its process: {proc.stderr.strip()}")
        res = np.load(out, allow_pickle=False)
        first_order = float(res["first_order_seconds"])
        return {"seconds": float(res["seconds"]), "cpu_seconds": float(res["cpu_seconds"]),
                "status": str(res["status"]), "relative_gap": float(res["relative_gap"]),
                "newton_steps": int(res["newton_steps"]),
                "first_order_seconds": None if np.isnan(first_order) else first_order}


def cpu_ratios(runs: list[dict], dataset: str, peer: str) -> list[float]:
    """The peer's CPU time over ours, round by round, on one data set (rounds where both finished)."""
    def cpu_by_round(method: str) -> dict[int, float]:
        return {r["round"]: r["cpu_seconds"] for r in runs if r["dataset"] == dataset and r["method"] == method
                and r.get("cpu_seconds") is not None and r["status"] in ("done", "optimal")}
    ours, theirs = cpu_by_round("ours"), cpu_by_round(peer)
    return [theirs[k] / ours[k] for k in sorted(ours) if k in theirs]


# ----------------------------------------------------------------------------- back to back
def alternate(args) -> None:
    """``--alternate N``: ours and each peer N times on each data set, alternated — the order rotates by
    one every round — so that both see the same load. Every run, ours included (``run_ours``), starts a
    fresh process, as the peers' do: a solve repeated in one process reuses memory the earlier solves
    already mapped, which a fresh process must first fault in. Wall time as in the table; CPU time
    beside it (every method runs single-threaded, so CPU time is what the load does not inflate as
    much), and per data set the CPU-time ratio of each peer to ours, round by round and its median."""
    venv = Path(args.venv)
    methods = ["ours", *args.peers.split(",")]
    runs = []
    from sdpembed._progress import track  # here: the peer workers of this file run without sdpembed

    for name in track(args.datasets.split(","), "data sets", unit="data set"):
        Xtr, Xte, ytr, yte = load(name)
        for rnd in range(args.alternate):
            shift = rnd % len(methods)
            for method in methods[shift:] + methods[:shift]:
                load_before = os.getloadavg()[0]
                if method == "ours":
                    row = run_ours(Xtr, ytr, args.tol, args.time_limit)
                else:
                    out = run_peer(venv, method, Xtr, ytr, args.time_limit)
                    row = {"seconds": out.get("seconds"), "cpu_seconds": out.get("cpu_seconds"),
                           "status": out["status"], "blas": out.get("blas")}
                row.update(dataset=name, method=method, round=rnd, load_before=load_before,
                           load_after=os.getloadavg()[0], utc=datetime.datetime.now(datetime.UTC)
                           .isoformat(timespec="seconds"))
                runs.append(row)
                wall = f"{row['seconds']:7.2f}" if row.get("seconds") is not None else "      —"
                cpu = f"{row['cpu_seconds']:7.2f}" if row.get("cpu_seconds") is not None else "      —"
                print(f"{name:16s} round {rnd}  {method:<12s} wall {wall} s  cpu {cpu} s  {row['status']:<10s} "
                      f"load {load_before:.2f} -> {row['load_after']:.2f}", flush=True)
        for method in methods:
            mine = [r for r in runs if r["dataset"] == name and r["method"] == method and r.get("seconds") is not None]
            print(f"{name:16s} {method:<12s} wall " + " / ".join(f"{r['seconds']:.2f}" for r in mine)
                  + "  cpu " + " / ".join(f"{r['cpu_seconds']:.2f}" for r in mine if r.get("cpu_seconds") is not None))
        for method in methods[1:]:
            ratios = cpu_ratios(runs, name, method)
            if ratios:
                print(f"{name:16s} {method} cpu / ours cpu, round by round: "
                      + " / ".join(f"{x:.2f}" for x in ratios) + f"  median {np.median(ratios):.2f}", flush=True)
    path = Path(args.json)
    if path.name == "lmnn_peers.json":
        path = path.with_name("lmnn_alternated.json")
    report.write_results(path, {"benchmark": "lmnn_peers --alternate", "ours_tol": args.tol,
                               "ours_process": "fresh", "ours_blas": blas_architecture(), "runs": runs})


# ----------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", default="/work/peers-venv", help="virtualenv with metric-learn and pylmnn")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--time-limit", type=float, default=600.0,
                        help="CPU seconds per method and data set (of its process, all threads)")
    parser.add_argument("--tol", type=float, default=1e-5,
                        help="our interior-point tolerance ('optimal' still needs a certified gap <= 1e-5)")
    parser.add_argument("--no-cvxpy", action="store_true", help="skip the CVXPY ground truth")
    parser.add_argument("--verbose", type=int, default=0, help="our solver's progress lines (1: rounds, 2: steps)")
    parser.add_argument("--repair", default="auto", choices=("auto", "fallback", "direct", "off"),
                        help="our solver's multiplier repair (solve_lmnn_fast's repair)")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "lmnn_peers.json"))
    parser.add_argument("--alternate", type=int, default=0, metavar="N",
                        help="instead of the table: N rounds of ours and each peer back to back on each data set, "
                             "the order rotating every round (wall and CPU time; JSON to lmnn_alternated.json)")
    args = parser.parse_args()
    if args.alternate > 0:
        alternate(args)
        return


    from sdpembed.formulations.lmnn import solve_lmnn_working_set
    from sdpembed.problems import LMNNInstance
    from sdpembed.solvers.lmnn.fast import solve_lmnn_fast

    venv = Path(args.venv)
    rows: list[dict] = []
    print(f"split: stratified, 3,000 test images at the thesis' scale, 30 % otherwise, random_state={SEED}; "
          f"k = {K}, mu = {MU}; CPU-time limit {args.time_limit:g} s", flush=True)
    from sdpembed._progress import track  # here: the peer workers of this file run without sdpembed

    for name in track(args.datasets.split(","), "data sets", unit="data set"):
        Xtr, Xte, ytr, yte = load(name)
        setup_cpu, setup_wall = time.process_time(), time.perf_counter()
        instance = LMNNInstance.from_data(Xtr, ytr, k=K, mu=MU)   # timed with ours: the peers' fit finds targets too
        setup_cpu, setup_wall = time.process_time() - setup_cpu, time.perf_counter() - setup_wall
        base = {"dataset": name, "n_train": int(Xtr.shape[0]), "n_test": int(Xte.shape[0]), "dim": int(Xtr.shape[1]),
                "n_triplets": int(instance.n_triplets)}
        print(f"\n{name}: train {Xtr.shape[0]} × {Xtr.shape[1]}, test {Xte.shape[0]}, "
              f"{instance.n_triplets:,} triplets", flush=True)
        eye = np.eye(Xtr.shape[1])
        targets = instance.targets
        rows.append({**base, "method": "euclidean", "status": "-", "seconds": None,
                     "objective": instance.objective(eye), "knn_error": knn_error(eye, Xtr, ytr, Xte, yte),
                     "energy_error": energy_error(eye, Xtr, ytr, Xte, yte, targets)})

        load_before, cpu = os.getloadavg()[0], time.process_time()
        result = solve_lmnn_fast(instance, tol=args.tol, cpu_time_limit=args.time_limit, verbose=args.verbose,
                                 repair=args.repair)
        cpu = time.process_time() - cpu + setup_cpu
        ours = {**base, "method": "sdpembed (fast)", "status": result.status, "seconds": result.wall_time + setup_wall,
                "cpu_seconds": cpu, "load_before": load_before, "load_after": os.getloadavg()[0],
                "objective": result.objective, "dual_bound": result.dual_bound,
                "relative_gap": result.relative_gap, "newton_steps": int(result.iterations),
                "rounds": int(result.extra["rounds"]), "working_set": int(result.extra["triplets"].shape[0]),
                "active": int(result.extra["active"]),
                "first_order_seconds": result.extra.get("first_order_seconds"),
                "first_order_loss": result.extra.get("first_order_loss"), "returned": result.extra.get("returned"),
                "repair": result.extra.get("repair"),
                "fixed_triplets": (int(result.history["fixed"][-1]) if len(result.history.get("fixed", ())) else 0),
                "knn_error": knn_error(factor(result.solution), Xtr, ytr, Xte, yte),
                "energy_error": energy_error(factor(result.solution), Xtr, ytr, Xte, yte, targets)}
        rows.append(ours)
        print(f"  sdpembed   {result.status:<14} {ours['seconds']:9.2f} s  cpu {cpu:9.2f} s  objective "
              f"{result.objective:.8g}  gap {result.relative_gap:.1e}  rounds {ours['rounds']}  newton "
              f"{ours['newton_steps']}  active {ours['active']:,}  knn error {ours['knn_error']:.4f}  energy "
              f"error {ours['energy_error']:.4f}  load {load_before:.1f}  returned {ours['returned']}", flush=True)

        if not args.no_cvxpy and name in ("iris", "wine"):
            start = time.perf_counter()
            truth = solve_lmnn_working_set(instance)
            seconds = time.perf_counter() - start
            rows.append({**base, "method": "cvxpy working set (Clarabel)", "status": truth.status, "seconds": seconds,
                         "objective": truth.objective, "dual_bound": truth.dual_bound,
                         "relative_gap": truth.relative_gap,
                         "knn_error": knn_error(factor(truth.solution), Xtr, ytr, Xte, yte)})
            print(f"  cvxpy      {truth.status:<14} {seconds:9.2f} s  objective {truth.objective:.8g}  "
                  f"gap {truth.relative_gap:.1e}", flush=True)

        for peer in args.peers.split(","):
            out = run_peer(venv, peer, Xtr, ytr, args.time_limit)
            row = {**base, "method": peer, "status": out["status"], "seconds": out.get("seconds"),
                   "cpu_seconds": out.get("cpu_seconds"), "message": out.get("message"),
                   "process_seconds": out.get("process_seconds")}
            if out["status"] == "done":
                M = out["L"].T @ out["L"]
                row.update(objective=instance.objective(M), knn_error=knn_error(factor(M), Xtr, ytr, Xte, yte),
                           energy_error=energy_error(factor(M), Xtr, ytr, Xte, yte, targets),
                           version=out["version"], sklearn=out["sklearn"], n_iter=out["n_iter"], blas=out["blas"],
                           rank=int(out["L"].shape[0]))
                print(f"  {peer:<10} {'done':<14} {out['seconds']:9.2f} s  cpu {out['cpu_seconds']:9.2f} s  "
                      f"objective {row['objective']:.8g}  knn error {row['knn_error']:.4f}  energy error "
                      f"{row['energy_error']:.4f}", flush=True)
            else:
                print(f"  {peer:<10} {out['status']:<14} {out.get('message', '')}", flush=True)
            rows.append(row)

    # ratios against our time, in the same run
    for row in rows:
        ours = next(r for r in rows if r["dataset"] == row["dataset"] and r["method"] == "sdpembed (fast)")
        row["time_ratio_to_ours"] = (row["seconds"] / ours["seconds"]) if row.get("seconds") else None
        row["cpu_ratio_to_ours"] = (row["cpu_seconds"] / ours["cpu_seconds"]) if row.get("cpu_seconds") else None
        row["objective_ratio_to_ours"] = (row["objective"] / ours["objective"]) if row.get("objective") else None

    header = (f"{'dataset':<16} {'method':<29} {'status':<14} {'time s':>9} {'÷ ours':>7} {'objective (2.11)':>17} "
              f"{'÷ ours':>8} {'rel gap':>8} {'kNN err':>8}")
    print("\n" + header + "\n" + "-" * len(header))
    for r in rows:
        t = f"{r['seconds']:9.2f}" if r.get("seconds") is not None else f"{'—':>9}"
        ratio = f"{r['time_ratio_to_ours']:7.1f}" if r.get("time_ratio_to_ours") else f"{'—':>7}"
        obj = f"{r['objective']:17.8g}" if r.get("objective") is not None else f"{'—':>17}"
        oratio = f"{r['objective_ratio_to_ours']:8.4f}" if r.get("objective_ratio_to_ours") else f"{'—':>8}"
        gap = f"{r['relative_gap']:8.1e}" if r.get("relative_gap") is not None else f"{'—':>8}"
        err = f"{r['knn_error']:8.4f}" if r.get("knn_error") is not None else f"{'—':>8}"
        print(f"{r['dataset']:<16} {r['method']:<29} {r['status']:<14} {t} {ratio} {obj} {oratio} {gap} {err}")
    print("objective: the (2.11) loss of each returned metric on our instance (our targets, mu = 0.5); "
          "peers optimise their own loss, scaled differently, in L.")

    record = {
        "benchmark": "lmnn_peers",
        "split": f"sklearn train_test_split(test_size=0.3, stratify=y, random_state={SEED}); PCA (where stated) "
                 "and StandardScaler fitted on the training part",
        "k": K, "mu": MU, "cpu_time_limit_s": args.time_limit, "ours_tol": args.tol, "ours_repair": args.repair,
        "objective_note": "LMNNInstance.objective(M) on our instance for every method; peers optimise a differently "
                          "scaled, non-convex loss in L with their own target neighbours; M = L^T L",
        "rows": [{key: value for key, value in r.items() if key != "L"} for r in rows],
    }
    report.write_results(*thesis_scale_record(Path(args.json), args.datasets.split(","), record))


def thesis_scale_record(path: Path, datasets: list[str], record: dict) -> tuple[Path, dict]:
    """The output path and record of a run: runs on the thesis-scale data sets only carry the
    thesis' numbers and their own split (whatever ``--json`` names), and the default path becomes
    their own table, beside the small data sets'."""
    if not set(datasets) <= set(THESIS_SCALE):
        return path, record
    record = {**record, "thesis": THESIS,
              "split": (f"sklearn train_test_split(test_size=3000, stratify=y, random_state={SEED}) of the 10,000 "
                        "vendored MNIST test images; PCA fitted on the training part, then every feature divided "
                        "by the root mean square of the training features")}
    if path.name == "lmnn_peers.json":
        path = path.with_name("lmnn_thesis_scale.json")
    return path, record


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--peer":
        peer_main(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 6 and sys.argv[1] == "--ours":
        ours_main(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
    else:
        main()
