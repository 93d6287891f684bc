"""The experiments of the ADAGIO paper (Błasiok and Tsourakakis), one function each.

Distortion here is the paper's (2)–(3), |‖Ψ(x − y)‖/‖x − y‖ − 1| over all pairs of distinct
points (norms, not NuMax's squared norms). NuMax is solved at an RIP (2) constant δ' (squared
norms); δ' = 2δ − δ² guarantees the distortion (3) ≤ δ, since (1 − δ)² = 1 − δ' and
(1 + δ)² ≥ 1 + δ'. ADAGIO is :class:`sdpembed.linear.ADAGIO` (⌊r/2⌋ principal components and
⌈r/2⌉ Rademacher rows, Sec. 4.1); the harmonic-function classifier of Table 4 is in
:mod:`reproduce.baselines`.

References
----------
.. [1] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", Proceedings of the IEEE International Conference on Data Mining (ICDM), 2016.
   Fig. 2–7, Tables 3–4.
.. [2] X. Zhu, Z. Ghahramani and J. Lafferty, "Semi-supervised learning using Gaussian fields and
   harmonic functions", ICML 2003 (the classifier of Table 4).
"""

from __future__ import annotations

import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from numax_mnist import PUBLISHED_TABLE3, dimension_by_bisection  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from sdpembed import NuMaxInstance, solve  # noqa: E402
from sdpembed.datasets import load_mnist, translating_disks, translating_gaussian_blob, translating_squares  # noqa: E402
from sdpembed.linear import embedding_from_psd, pca_projection, principal_directions, rademacher_projection  # noqa: E402
from sdpembed.linear.adagio import adagio_projection  # noqa: E402

from .baselines import harmonic_accuracy, harmonic_error, knn_graph  # noqa: E402
from .common import Experiment, Outcome  # noqa: E402
from .numax import _fmt, _md_table, _save  # noqa: E402

TITLE = "ADAGIO (Błasiok and Tsourakakis, ICDM 2016)"
DATA_NOTE = ("Data: the paper's MNIST subset is 800 images of the 60,000 training images; ours are 800 of the "
             "vendored 10,000 *test* images (28×28). The UCR time series (Fig. 3–5, 7), ZuBuD (Fig. 8–9) and the "
             "UCI sets Glass, Ionosphere, Pima and Vehicle (Table 4) are not available: scikit-learn's bundled "
             "sets and the image generators stand in, and orderings are compared rather than values. Distortion "
             "is the paper's (3) on norms; NuMax is solved at the RIP (2) constant δ' = 2δ − δ², which "
             "guarantees distortion (3) ≤ δ.")
NOT_IMPLEMENTED = ["Fig. 8–9 (ZuBuD image retrieval by SIFT descriptors; ZuBuD is not available)"]
#: The paper's numbered pictures and tables that report no experiment.
NOT_EXPERIMENTS = ["Fig. 1 (example MNIST images)", "Table 1 (the data sets used)",
                   "Table 2 (a synopsis of the properties of JL, PCA, NuMax and ADAGIO)"]


# ------------------------------------------------------------------------------------------ helpers


def pair_distortions(Psi: np.ndarray, X: np.ndarray) -> np.ndarray:
    """|‖Ψ(x_i − x_j)‖/‖x_i − x_j‖ − 1| for every pair i < j of distinct points (ADAGIO (2)), via Gram matrices."""
    Y = X @ Psi.T
    nx, ny = np.einsum("ij,ij->i", X, X), np.einsum("ij,ij->i", Y, Y)
    iu = np.triu_indices(len(X), 1)
    dX = (nx[:, None] + nx[None, :] - 2.0 * X @ X.T)[iu]
    dY = np.maximum((ny[:, None] + ny[None, :] - 2.0 * Y @ Y.T)[iu], 0.0)
    keep = dX > 1e-12 * np.max(dX)
    return np.abs(np.sqrt(dY[keep] / dX[keep]) - 1.0)


def distortion(Psi: np.ndarray, X: np.ndarray) -> float:
    """ADAGIO (3): the largest pair distortion."""
    return float(np.max(pair_distortions(Psi, X)))


def stable_rank(X: np.ndarray) -> float:
    """The paper's stable rank (Σσᵢ)² / Σσᵢ² of the centred data matrix (Sec. 3, Fig. 4)."""
    s = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    return float(np.sum(s) ** 2 / np.sum(s**2))


def _rip_delta(delta: float) -> float:
    return 2.0 * delta - delta**2


def _numax(X: np.ndarray, delta: float, seed: int) -> tuple[np.ndarray, object]:
    """NuMax-CG (all pairs) at distortion (3) ≤ δ, i.e. RIP δ' = 2δ − δ²."""
    result = solve(NuMaxInstance(delta=_rip_delta(delta), X=X), random_state=seed)
    return embedding_from_psd(result.solution), result


def _adagio(X: np.ndarray, r: int, seed: int, solver: str = "exact") -> np.ndarray:
    """ADAGIO at r; P by the named PCA solver, then S from ``seed`` — the same S for both solvers."""
    P = principal_directions(X, r // 2, svd_solver=solver, random_state=seed) if r >= 2 else None
    return adagio_projection(X, r, projection=P, n_pca=None if P is not None else 0, random_state=seed)[0]


def _smallest_r(make, X: np.ndarray, delta: float) -> int | None:
    """Smallest r ≤ min(n − 1, N) (PCA's largest) reaching distortion (3) ≤ δ, by bisection."""
    return dimension_by_bisection(make, X, delta, squared=False, largest=min(len(X) - 1, X.shape[1]))


def _jl(N: int, seed: int):
    """r ↦ an r×N Rademacher map (entries ±1/√r, Lemma 1), nested in r."""
    R = rademacher_projection(N, N, random_state=seed) * np.sqrt(N)
    return lambda r: R[:r] / np.sqrt(r)


def _timed(function, *args, repeats: int = 1, **kwargs):
    """(value, best wall time of ``repeats`` calls)."""
    best, value = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        value = function(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return value, best


def _crossover(X: np.ndarray, dims: list[int], seed: int) -> int | None:
    """The smallest r of ``dims`` at which ADAGIO's distortion (3) is below PCA's (None: at none)."""
    return next((r for r in dims if r < min(X.shape)
                 and distortion(_adagio(X, r, seed), X) < distortion(pca_projection(X, r), X)), None)


# ------------------------------------------------------------------------------------------ Fig. 2


def fig2(config: dict, png: Path) -> Outcome:
    """Fig. 2 — distribution of pairwise distortions on MNIST for PCA, NuMax and ADAGIO, with run times.

    Paper
    -----
    800 MNIST images (28×28), all pairs; histograms of the distortion (2) after (a) PCA, (b)
    NuMax and (c) ADAGIO; run times 5.2 s, 1105 s and 5.6 s. Published: NuMax and ADAGIO
    improve PCA's distortions significantly, ADAGIO at PCA's cost. The target dimension is not
    stated; the run times are Table 3's at δ = 0.05.

    Departures
    ----------
    - All three maps have the same dimension r, NuMax's rank at distortion (3) ≤ ``delta`` (RIP
      δ' = 2δ − δ²), so the histograms compare maps of equal size (the paper does not say
      which dimensions it plotted).
    - Times are our wall times (Python, one BLAS thread; NuMax by column generation).
    - To test why ADAGIO may not beat PCA at NuMax's r, the smallest r of the grid ``dims`` at
      which ADAGIO's largest distortion falls below PCA's is also found (the crossover).
    """
    X, _ = load_mnist(size=28, n_samples=config["n_images"], random_state=config["seed"])
    (Psi_numax, result), t_numax = _timed(_numax, X, config["delta"], config["seed"])
    r = Psi_numax.shape[0]
    maps = {"pca": _timed(pca_projection, X, r, repeats=3), "numax": (Psi_numax, t_numax),
            "adagio": _timed(_adagio, X, r, config["seed"], repeats=3)}
    dist = {name: pair_distortions(P, X) for name, (P, _) in maps.items()}
    raw = {name: {"r": r, "time_s": t, "max": float(np.max(dist[name])), "mean": float(np.mean(dist[name])),
                  "p99": float(np.quantile(dist[name], 0.99))} for name, (_, t) in maps.items()}
    raw["numax"].update(status=result.status, relative_gap=result.relative_gap)
    better = all(raw[m]["max"] < raw["pca"]["max"] for m in ("numax", "adagio"))
    cheap = raw["adagio"]["time_s"] < 0.1 * raw["numax"]["time_s"]
    crossover = _crossover(X, config["dims"], config["seed"])
    raw["crossover_r"] = crossover
    verdict = "reproduced in trend" if better and cheap and result.status == "optimal" else "differs"
    agreement = (f"At r = {r}, the largest distortion is {raw['pca']['max']:.3f} (PCA), {raw['numax']['max']:.3f} "
                 f"(NuMax) and {raw['adagio']['max']:.3f} (ADAGIO): NuMax and ADAGIO "
                 f"{'both improve' if better else 'do not both improve'} on PCA; ADAGIO took "
                 f"{raw['adagio']['time_s']:.2f} s against NuMax's {raw['numax']['time_s']:.0f} s "
                 f"(published: 5.6 s against 1105 s). ADAGIO's largest distortion is first below PCA's at r = "
                 f"{_fmt(crossover, 'd')} of the grid {config['dims']}"
                 + ("" if better else " — tested reason for the difference: at NuMax's small r, ADAGIO's ⌈r/2⌉ "
                    "JL rows distort more than the principal components they replace") + ".")
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.2), sharey=True)
    bins = np.linspace(0, max(raw[m]["max"] for m in maps), 60)
    for ax, (name, title) in zip(axes, (("pca", "(a) PCA"), ("numax", "(b) NuMax"), ("adagio", "(c) ADAGIO")),
                                 strict=True):
        ax.hist(dist[name], bins=bins, color="0.4")
        ax.set(title=f"{title}, r = {r}, {raw[name]['time_s']:.2f} s", xlabel="distortion (2)", yscale="log")
    axes[0].set_ylabel("pairs")
    _save(fig, png)
    rows = [[name, r, f"{v['max']:.3f}", f"{v['p99']:.3f}", f"{v['mean']:.4f}", f"{v['time_s']:.2f} s"]
            for name, v in raw.items() if name in maps]
    return Outcome(
        published="Histograms only; run times PCA 5.2 s, NuMax 1105 s, ADAGIO 5.6 s. NuMax and ADAGIO improve PCA's "
                  "distortions significantly.",
        ours=(f"{len(X)} images, all {len(X) * (len(X) - 1) // 2} pairs; NuMax {result.status} (relative gap "
              f"{result.relative_gap:.1e}).\n\n" + _md_table(["method", "r", "max", "99%", "mean", "time"], rows)),
        rows=raw, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 6


def fig6(config: dict, png: Path) -> Outcome:
    """Fig. 6 — trade-off between target dimension and distortion on the MNIST subset.

    Paper
    -----
    800 MNIST images; distortion (3) against target dimension r for JL (Rademacher), PCA,
    ADAGIO and NuMax. Published: ADAGIO beats JL and PCA for distortions up to 0.4; at
    distortion 0.15 ADAGIO needs r ≈ 130, PCA at least 240 and NuMax ≈ 50.

    Departures
    ----------
    - "Up to 0.4" is checked on the distortions 0.05 to 0.4, the range of the paper's Table 3
      and Fig. 6 text: near r = min(n, N) PCA becomes exact and overtakes ADAGIO, whose r/2
      principal components are then fewer (listed when it happens).
    - PCA, JL and ADAGIO on a grid of r (``dims``), one seed; NuMax at the distortions
      ``deltas`` (RIP δ' = 2δ − δ²), its rank being its r. The r at distortion 0.15 is read off
      the grid (the first grid point at or below 0.15).
    """
    X, _ = load_mnist(size=28, n_samples=config["n_images"], random_state=config["seed"])
    jl = _jl(X.shape[1], config["seed"])
    dims = [r for r in config["dims"] if r <= X.shape[1]]
    curves = {"pca": [distortion(pca_projection(X, r), X) for r in dims],
              "jl": [distortion(jl(r), X) for r in dims],
              "adagio": [distortion(_adagio(X, r, config["seed"]), X) for r in dims]}
    numax = []
    for delta in config["deltas"]:
        Psi, result = _numax(X, delta, config["seed"])
        numax.append({"delta": delta, "r": int(Psi.shape[0]), "distortion": distortion(Psi, X),
                      "status": result.status, "time_s": result.wall_time})

    def first(curve, target=config["target"]):
        return next((r for r, d in zip(dims, curve, strict=True) if d <= target), None)

    at = {k: first(v) for k, v in curves.items()}
    numax_at = min((n["r"] for n in numax if n["distortion"] <= config["target"] + 1e-4), default=None)
    window = [i for i, r in enumerate(dims) if 0.05 <= curves["adagio"][i] <= 0.4]
    beats = all(curves["adagio"][i] <= min(curves["pca"][i], curves["jl"][i]) for i in window)
    pca_ahead = [r for i, r in enumerate(dims) if curves["pca"][i] < curves["adagio"][i] <= 0.4]
    order = (at["adagio"] is not None and numax_at is not None and numax_at < at["adagio"]
             and (at["pca"] is None or at["adagio"] < at["pca"]))
    verdict = "reproduced in trend" if beats and order else "differs"
    agreement = (f"ADAGIO {'has' if beats else 'does not always have'} the smallest distortion of ADAGIO, PCA and JL "
                 f"at every grid r where its distortion is in [0.05, 0.4]"
                 + (f" (PCA is ahead at r = {pca_ahead}, where its distortion is "
                    f"{max(curves['pca'][dims.index(r)] for r in pca_ahead):.3f} or less)" if pca_ahead else "")
                 + f"; at distortion {config['target']} r = "
                 f"{_fmt(numax_at, 'd')} (NuMax), {_fmt(at['adagio'], 'd')} (ADAGIO), {_fmt(at['pca'], 'd')} (PCA), "
                 f"{_fmt(at['jl'], 'd')} (JL) (published ≈ 50, ≈ 130, ≥ 240, —).")
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, style in (("pca", "b-"), ("jl", "r-"), ("adagio", "g-")):
        ax.plot(dims, curves[name], style, label=name.upper() if name != "adagio" else "ADAGIO")
    ax.plot([n["r"] for n in numax], [n["distortion"] for n in numax], "ko", label="NuMax")
    ax.axhline(config["target"], color="0.6", ls=":")
    ax.set(xlabel="target dimension r", ylabel="distortion (3)", ylim=(0, 1), title=f"MNIST, {len(X)} images")
    ax.legend(fontsize=7)
    _save(fig, png)
    return Outcome(
        published="Curves; at distortion 0.15: ADAGIO r ≈ 130, PCA r ≥ 240, NuMax r ≈ 50.",
        ours=(f"{len(X)} images, r on the grid {dims[0]}…{dims[-1]} ({len(dims)} points). r reaching distortion "
              f"{config['target']}:\n\n" + _md_table(["NuMax", "ADAGIO", "PCA", "JL"],
                                                    [[_fmt(numax_at, "d"), *(_fmt(at[k], "d") for k in
                                                                              ("adagio", "pca", "jl"))]])
              + "\n\nNuMax solves:\n\n" + _md_table(["distortion target", "r", "achieved", "status", "time"],
                                                      [[n["delta"], n["r"], f"{n['distortion']:.3f}", n["status"],
                                                        f"{n['time_s']:.0f} s"] for n in numax])),
        rows={"dims": dims, "curves": curves, "numax": numax, "at_target": {**at, "numax": numax_at}},
        verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 7


def _standin(name: str, seed: int, n: int) -> np.ndarray:
    """A stand-in data set as rows: MNIST (28×28 or 20×20), scikit-learn's digits or breast cancer
    (standardised), or translating images (squares, disks, blob)."""
    rng = np.random.default_rng(seed)
    if name.startswith("mnist"):
        return load_mnist(size=int(name[5:]), n_samples=n, random_state=seed)[0]
    if name == "digits":
        X = load_digits().data
    elif name == "breast_cancer":
        X = StandardScaler().fit_transform(load_breast_cancer().data)
    elif name == "squares":
        X = translating_squares(24, 8)
    elif name == "disks":
        X = translating_disks(24, 5.0)
    elif name == "blob":
        X = translating_gaussian_blob(24, 3.0)
    else:
        raise ValueError(f"unknown stand-in data set {name!r}")
    return X[np.sort(rng.choice(len(X), size=min(n, len(X)), replace=False))]


def fig7(config: dict, png: Path) -> Outcome:
    """Fig. 7 — ADAGIO with exact against randomized PCA: (I) distortion against r, (II) the speed-up.

    Paper
    -----
    ADAGIO with exact PCA and with randomized PCA (Halko et al., scikit-learn) on the MNIST
    subset and three UCR sets (ScreenType, FordB, UWaveGesture); (I) distortion (3) against r,
    (II) the speed-up of the randomized version. Published: randomized PCA hardly changes the
    distortion; the speed-up is large when few principal components are needed and shrinks as
    r grows.

    Departures
    ----------
    - The UCR sets are not available: scikit-learn's digits and the translating-blob images
      (24×24) stand in beside MNIST.
    - Times are the best of three runs of each map (one BLAS thread). Both versions use the same
      JL matrix S (one seed), so the difference in distortion is the PCA's alone.
    """
    raw = {}
    for name in config["datasets"]:
        X = _standin(name, config["seed"], config["n_points"])
        dims = [r for r in config["dims"] if r < min(X.shape)]
        row = {"N": int(X.shape[1]), "dims": dims, "exact": [], "randomized": [], "speedup": []}
        for r in dims:
            exact, t_exact = _timed(_adagio, X, r, config["seed"], "exact", repeats=3)
            rand, t_rand = _timed(_adagio, X, r, config["seed"], "randomized", repeats=3)
            row["exact"].append(distortion(exact, X))
            row["randomized"].append(distortion(rand, X))
            row["speedup"].append(t_exact / t_rand)
        raw[name] = row
    gaps = {n: float(np.max(np.abs(np.subtract(v["exact"], v["randomized"])))) for n, v in raw.items()}
    shrinks = {n: v["speedup"][0] > v["speedup"][-1] for n, v in raw.items()}
    fast = {n: v["speedup"][0] > 1.0 for n, v in raw.items()}
    close = all(g <= config["tolerance"] for g in gaps.values())
    verdict = "reproduced in trend" if close and all(shrinks.values()) and all(fast.values()) else "differs"
    slow = [f"{n} (N = {v['N']})" for n, v in raw.items() if not fast[n]]
    agreement = ("Largest |distortion(exact) − distortion(randomized)|: " + ", ".join(
        f"{n} {g:.3f}" for n, g in gaps.items()) + f" (tolerance {config['tolerance']}); speed-up at the smallest "
                 "→ largest r: " + ", ".join(f"{n} {v['speedup'][0]:.1f}× → {v['speedup'][-1]:.1f}×"
                                                for n, v in raw.items())
                 + " (published: distortion almost unchanged; speed-up largest at small r)."
                 + (f" Randomized PCA is not faster on {', '.join(slow)}: with few features the exact SVD is "
                    "already cheap, while the sets of N ≥ 400, like the paper's (N ≥ 500), show its speed-up — "
                    "the tested reason, N varying across the sets run." if slow else ""))
    fig, axes = plt.subplots(2, len(raw), figsize=(3.6 * len(raw), 6), squeeze=False)
    for j, (name, v) in enumerate(raw.items()):
        axes[0, j].plot(v["dims"], v["exact"], "k-", label="exact PCA")
        axes[0, j].plot(v["dims"], v["randomized"], "g--", label="randomized PCA")
        axes[0, j].set(title=name, xlabel="r", ylabel="distortion (3)")
        axes[0, j].legend(fontsize=7)
        axes[1, j].plot(v["dims"], v["speedup"], "bo-")
        axes[1, j].axhline(1.0, color="0.6", ls=":")
        axes[1, j].set(xlabel="r", ylabel="speed-up")
    _save(fig, png)
    rows = [[n, f"{len(v['dims'])} values, {v['dims'][0]}…{v['dims'][-1]}", f"{gaps[n]:.3f}",
             f"{v['speedup'][0]:.1f}×", f"{v['speedup'][-1]:.1f}×"] for n, v in raw.items()]
    return Outcome(
        published="Curves: exact and randomized PCA give almost the same distortion; speed-ups are large for few "
                  "principal components and shrink as r grows (MNIST exact-PCA times 5.5 s).",
        ours=f"{config['n_points']} points per data set.\n\n" + _md_table(
            ["data", "r", "max |Δ distortion|", "speed-up at smallest r", "at largest r"], rows),
        rows=raw, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 3–5


def stable_rank_study(config: dict, png: Path) -> Outcome:
    """Fig. 3–5 — PCA's pairwise distortions at r = 20, the stable rank, and ADAGIO's distortions at r = 20.

    Paper
    -----
    Nine UCR time-series sets: Fig. 3, the distribution of PCA's pair distortions (2) at target
    dimension 20; Fig. 4, each set's stable rank (Σσᵢ)²/Σσᵢ²; Fig. 5, ADAGIO's distortions at
    r = 20 (10 principal components, 10 JL rows). Published: PCA distorts many pairs
    significantly except on UWaveGesture, the set of smallest stable rank — the rule of thumb
    "small stable rank, few components capture the data, a better near-isometry"; ADAGIO
    improves PCA's distortions on every set at negligible cost.

    Departures
    ----------
    - The UCR sets are not available: MNIST (28×28 and 20×20), scikit-learn's digits and breast
      cancer (standardised) and translating squares, disks and a Gaussian blob (24×24) stand in,
      each at most ``n_points`` points.
    - To test why ADAGIO may not lower PCA's largest distortion at r = 20, the smallest r of
      the grid ``dims`` at which it does is found per set (the crossover).
    - The rule of thumb is tested as the Spearman rank correlation between the stable rank and
      PCA's median distortion over the data sets (positive: it holds), and whether the set of
      smallest stable rank has PCA's smallest median distortion.
    """
    from scipy.stats import spearmanr

    r, raw = config["r"], []
    for name in config["datasets"]:
        X = _standin(name, config["seed"], config["n_points"])
        pca = pair_distortions(pca_projection(X, r), X)
        ada = pair_distortions(_adagio(X, r, config["seed"]), X)
        raw.append({"data": name, "n": int(len(X)), "N": int(X.shape[1]), "stable_rank": stable_rank(X),
                    "pca_median": float(np.median(pca)), "pca_max": float(np.max(pca)),
                    "adagio_median": float(np.median(ada)), "adagio_max": float(np.max(ada)),
                    "crossover_r": _crossover(X, config["dims"], config["seed"]),
                    "pca_hist": np.histogram(pca, bins=40, range=(0, 1))[0].tolist(),
                    "adagio_hist": np.histogram(ada, bins=40, range=(0, 1))[0].tolist()})
    rho = float(spearmanr([x["stable_rank"] for x in raw], [x["pca_median"] for x in raw]).statistic)
    smallest = min(raw, key=lambda x: x["stable_rank"])["data"]
    best_pca = min(raw, key=lambda x: x["pca_median"])["data"]
    improves = [x["data"] for x in raw if x["adagio_max"] < x["pca_max"]]
    bulk = [x["data"] for x in raw if x["adagio_median"] < x["pca_median"]]
    rule = rho > 0 and smallest == best_pca
    verdict = "reproduced in trend" if rule and len(improves) == len(raw) else "differs"
    agreement = (f"Spearman correlation of stable rank and PCA's median distortion {rho:+.2f}; smallest stable rank: "
                 f"{smallest}, smallest PCA distortion: {best_pca} (published: the same set, UWaveGesture); ADAGIO "
                 f"lowers PCA's largest distortion on {len(improves)} of {len(raw)} sets"
                 + ("" if len(improves) == len(raw) else
                    f" (not on {', '.join(x['data'] for x in raw if x['data'] not in improves)}; tested reason: "
                    "its 10 JL rows distort more than PCA's discarded components; it first does at r = "
                    + ", ".join(f"{x['data']} {_fmt(x['crossover_r'], 'd')}" for x in raw
                                if x["data"] not in improves) + f" of the grid {config['dims']})")
                 + f" (published: on every set); it lowers the median distortion on {len(bulk)} of {len(raw)}.")
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    edges = np.linspace(0, 1, 41)
    for x in raw:
        axes[0].step(edges[:-1], x["pca_hist"], where="post", label=x["data"])
        axes[2].step(edges[:-1], x["adagio_hist"], where="post", label=x["data"])
    axes[0].set(title=f"Fig. 3: PCA, r = {r}", xlabel="distortion (2)", ylabel="pairs", yscale="log")
    axes[2].set(title=f"Fig. 5: ADAGIO, r = {r}", xlabel="distortion (2)", yscale="log")
    axes[1].bar([x["data"] for x in raw], [x["stable_rank"] for x in raw], color="0.5")
    axes[1].set(title="Fig. 4: stable rank", ylabel="(Σσ)²/Σσ²")
    axes[1].tick_params(axis="x", rotation=60, labelsize=7)
    axes[0].legend(fontsize=6)
    _save(fig, png)
    rows = [[x["data"], x["n"], x["N"], f"{x['stable_rank']:.1f}", f"{x['pca_median']:.3f}", f"{x['pca_max']:.3f}",
             f"{x['adagio_median']:.3f}", f"{x['adagio_max']:.3f}", _fmt(x["crossover_r"], "d")] for x in raw]
    return Outcome(
        published="Histograms and a bar chart (no numbers): UWaveGesture has the smallest stable rank and PCA's "
                  "best distortions; ADAGIO improves PCA's distortions on all nine sets.",
        ours=_md_table(["data", "n", "N", "stable rank", "PCA median", "PCA max", "ADAGIO median", "ADAGIO max",
                        "ADAGIO max < PCA max first at r ="], rows),
        rows=raw, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Table 3


def table3(config: dict, png: Path) -> Outcome:
    """Table 3 — dimension and time for distortion 0.05, 0.1, 0.2 on the MNIST subset: JL, PCA, NuMax, ADAGIO.

    Paper
    -----
    800 MNIST images, all pairs; for each distortion δ the smallest dimension and the time of a
    random projection (JL), PCA, NuMax, ADAGIO with exact PCA and with randomized PCA. Published:
    NuMax needs the fewest dimensions (83, 59, 42) at by far the largest cost (1105, 373,
    220 s); ADAGIO (298, 187, 95) needs fewer than PCA (337, 280, 205) in about PCA's time.

    Departures
    ----------
    - Distortion is (3) for every method; NuMax is solved at RIP δ' = 2δ − δ² (the paper does
      not say how NuMax's δ relates to (3)). The JL, PCA and ADAGIO dimensions are found by
      bisection on r (exact for PCA, an estimate for the random maps, one seed); their times
      are of one map at the dimension found.
    - The NuMax rows of this table in the RIP (2) sense are measured by
      ``benchmarks/numax_mnist.py`` (BENCHMARKS.md).
    """
    X, _ = load_mnist(size=28, n_samples=config["n_images"], random_state=config["seed"])
    seed, raw = config["seed"], []
    jl = _jl(X.shape[1], seed)
    for delta in config["deltas"]:
        (Psi, result), t_numax = _timed(_numax, X, delta, seed)
        row = {"delta": delta, "numax": (int(Psi.shape[0]), t_numax), "numax_status": result.status}
        makers = {"jl": jl, "pca": lambda m: pca_projection(X, m), "adagio": lambda m: _adagio(X, m, seed),
                  "adagio_randomized": lambda m: _adagio(X, m, seed, "randomized")}
        for name, make in makers.items():
            r = _smallest_r(make, X, delta)
            row[name] = (r, None if r is None else _timed(make, r, repeats=3)[1])
        raw.append(row)
    names = ("jl", "pca", "numax", "adagio", "adagio_randomized")
    rows = [[r["delta"], *(f"{_fmt(r[n][0], 'd')} / {_fmt(r[n][1], '.2f')} s" for n in names)] for r in raw]

    def dim(row, name):
        return np.inf if row[name][0] is None else row[name][0]

    order = all(dim(r, "numax") <= dim(r, "adagio") <= dim(r, "pca") for r in raw)
    cheap = all(r["adagio"][1] is not None and r["adagio"][1] < r["numax"][1] for r in raw)
    verdict = "reproduced in trend" if order and cheap else "differs"
    agreement = (f"Ordering NuMax ≤ ADAGIO ≤ PCA in dimension {'holds' if order else 'does not hold'} at every δ, "
                 f"and ADAGIO is {'faster' if cheap else 'not always faster'} than NuMax (published: both).")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for n, style in zip(names, ("r^-", "bs-", "ko-", "gD-", "g--"), strict=True):
        ax.plot([r["delta"] for r in raw], [np.nan if r[n][0] is None else r[n][0] for r in raw], style, label=n)
    ax.set(xlabel="distortion (3)", ylabel="dimension", title=f"MNIST, {len(X)} images")
    ax.legend(fontsize=7)
    _save(fig, png)
    pub_rows = [[d, *(f"{_fmt(v[n][0], 'd')} / {_fmt(v[n][1], '.2f')} s"
                      for n in ("jl", "pca", "numax"))] for d, v in PUBLISHED_TABLE3.items()]
    return Outcome(
        published=_md_table(["δ", "JL dim / time", "PCA", "NuMax"], pub_rows)
        + "\n\nADAGIO exact PCA: 298 / 5.6 s, 187 / 5.5 s, 95 / 4.8 s; randomized PCA: 298 / 6.64 s, 190 / 4.01 s, "
          "98 / 1.82 s.",
        ours=(f"{len(X)} images; dimension / time.\n\n"
              + _md_table(["δ", "JL", "PCA", "NuMax", "ADAGIO", "ADAGIO (randomized PCA)"], rows)),
        rows=raw, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Table 4

_TABLE4_DATA = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer, "digits": load_digits}
#: Table 4's accuracies (%) with no reduction (text of Sec. 4.7) and after NuMax and ADAGIO, and T₁, T₂ (s).
PUBLISHED_TABLE4 = {
    "Glass": (80.89, 78.2, 79.9, (32.04, 0.1), (0.004, 0.006)),
    "Ionosphere": (59.79, 33.5, 64.13, (24.0, 0.35), (0.01, 0.02)),
    "Iris": (56.67, 56.4, 65.6, (32.7, 0.029), (0.004, 0.006)),
    "Pima": (62.93, 61.43, 61.76, (4247.8, 4.72), (0.01, 0.05)),
    "Vehicle": (74.15, 74.12, 74.22, (101.9, 8.80), (0.007, 0.84)),
    "Wine": (63.59, 51.2, 55.66, (38.7, 0.04), (0.007, 0.006)),
}


def table4(config: dict, png: Path) -> Outcome:
    """Table 4 — harmonic-function classification on 30-NN graphs after NuMax, ADAGIO and no reduction.

    Paper
    -----
    Six UCI sets (Glass, Ionosphere, Iris, Pima, Vehicle, Wine). The points are reduced by NuMax
    or ADAGIO (T₁, the reduction time), the 30-NN graph is built (T₂), and the labels are
    learned by Zhu–Ghahramani–Lafferty's harmonic function (9), one-vs-rest for several classes;
    10-fold cross-validation, mean accuracy. Published: the accuracy barely changes with the
    reduction (sometimes it rises); T₁ of NuMax is orders of magnitude above ADAGIO's.

    Departures
    ----------
    - Glass, Ionosphere, Pima and Vehicle are not available: iris and wine are the paper's;
      breast cancer (2 classes, N = 30) stands in for Ionosphere and Pima and a seeded subset of
      digits (10 classes, N = 64) for Vehicle and Glass. The features are used as given
      (unscaled, so one or two large-valued features dominate the distances of wine and breast
      cancer, and a near-isometric map then keeps their 30-NN graphs).
    - The paper gives neither NuMax's δ nor ADAGIO's r: NuMax is solved at distortion (3)
      ≤ ``delta`` on all pairs (RIP δ' = 2δ − δ²) and ADAGIO uses r = NuMax's rank.
    - The graph has unit weights, symmetrised (an edge when either point is among the other's
      30 nearest); the reduction is learned on all points (unsupervised), the folds stratified.
    """
    raw = []
    for name in config["datasets"]:
        X, y = _TABLE4_DATA[name](return_X_y=True)
        if len(X) > config["max_points"]:
            keep = np.sort(np.random.default_rng(config["seed"]).choice(len(X), config["max_points"], replace=False))
            X, y = X[keep], y[keep]
        row = {"data": name, "n": int(len(X)), "N": int(X.shape[1]), "classes": int(len(np.unique(y)))}
        (Psi, result), t1 = _timed(_numax, X, config["delta"], config["seed"])
        r = int(Psi.shape[0])
        Psi_adagio, t1_adagio = _timed(_adagio, X, r, config["seed"], repeats=3)
        for method, P, t in (("none", None, 0.0), ("numax", Psi, t1), ("adagio", Psi_adagio, t1_adagio)):
            Y = X if P is None else X @ P.T
            t2 = _timed(knn_graph, Y, config["k"], repeats=3)[1]
            row[method] = {"T1": t, "T2": t2, "accuracy": 100.0 - harmonic_error(Y, y, k=config["k"],
                                                                                  seed=config["seed"])}
        row.update(r=r, numax_status=result.status)
        raw.append(row)
    drift = max(abs(x[m]["accuracy"] - x["none"]["accuracy"]) for x in raw for m in ("numax", "adagio"))
    faster = all(x["adagio"]["T1"] < x["numax"]["T1"] for x in raw)
    verdict = "reproduced in trend" if faster and drift <= config["tolerance"] else "differs"
    agreement = (f"ADAGIO's T₁ is {'below' if faster else 'not always below'} NuMax's on every set (ratios "
                 + ", ".join(f"{x['numax']['T1'] / x['adagio']['T1']:.0f}×" for x in raw)
                 + f"); the accuracy after a reduction moves at most {drift:.1f} points from no reduction "
                 f"(tolerance {config['tolerance']}; published: barely changes). Values are not compared: without "
                 "reduction we find " + ", ".join(f"{x['data']} {x['none']['accuracy']:.2f}%" for x in raw
                                                  if x["data"] in ("iris", "wine"))
                 + " against the published iris 56.67%, wine 63.59%; \"Table 4 — the reason test\" tries the "
                 "readings of Sec. 4.7 the paper leaves open.")
    fig, ax = plt.subplots(figsize=(7, 3.5))
    x = np.arange(len(raw))
    for off, m, color in ((-0.27, "none", "0.6"), (0.0, "numax", "k"), (0.27, "adagio", "g")):
        ax.bar(x + off, [r[m]["accuracy"] for r in raw], 0.27, color=color, label=m)
    ax.set_xticks(x, [f"{r['data']}\nr = {r['r']}" for r in raw])
    ax.set(ylabel="accuracy %", ylim=(0, 100), title=f"harmonic classifier, {config['k']}-NN graph")
    ax.legend(fontsize=7)
    _save(fig, png)
    rows = [[r["data"], f"{r['n']}×{r['N']}", r["r"], r["numax_status"],
             *(f"{r[m]['accuracy']:.2f}" for m in ("none", "numax", "adagio")),
             *(f"{r[m]['T1']:.3f} / {r[m]['T2']:.3f}" for m in ("numax", "adagio"))] for r in raw]
    pub = [[k, v[0], v[1], v[2], f"{v[3][0]} / {v[3][1]}", f"{v[4][0]} / {v[4][1]}"] for k, v in
           PUBLISHED_TABLE4.items()]
    return Outcome(
        published=_md_table(["data", "acc. none %", "NuMax %", "ADAGIO %", "NuMax T₁ / T₂ s", "ADAGIO T₁ / T₂ s"],
                            pub),
        ours=(f"NuMax at distortion ≤ {config['delta']}, ADAGIO at NuMax's r; {config['k']}-NN graph, "
              f"10-fold cross-validation.\n\n"
              + _md_table(["data", "n×N", "r", "NuMax status", "acc. none %", "NuMax %", "ADAGIO %",
                           "NuMax T₁ / T₂ s", "ADAGIO T₁ / T₂ s"], rows)),
        rows=raw, verdict=verdict, agreement=agreement)


#: Class sizes of the six UCI sets of Table 4 (the UCI repository's documentation): the accuracy of
#: a classifier without information follows from them.
UCI_CLASS_SIZES = {"Glass": (70, 76, 17, 13, 9, 29), "Ionosphere": (225, 126), "Iris": (50, 50, 50),
                   "Pima": (500, 268), "Vehicle": (212, 217, 218, 199), "Wine": (59, 71, 48)}

#: The readings of Sec. 4.7 tested by :func:`table4_reasons`: a name, what it changes from Table 4's
#: set-up (:func:`reproduce.baselines.harmonic_accuracy`'s defaults) and the candidate reason.
TABLE4_READINGS = (
    ("Table 4's set-up", {}, "unit weights, 90% labelled, stratified folds, argmax, raw features"),
    ("10% labelled", {"labelled": "fold"}, "labelled fraction: one fold labelled, nine unlabelled"),
    ("folds in file order", {"folds": "file order"}, "folds of consecutive rows (the files are sorted by class)"),
    ("10% labelled, file order", {"labelled": "fold", "folds": "file order"}, "both: one class labelled per fold"),
    ("distance as weight", {"weights": "distance"}, "weights: kneighbors' distances used as similarities"),
    ("heat, σ = median", {"weights": "heat", "sigma_factor": 1.0}, "kernel width: the median 30-NN distance"),
    ("heat, σ = median/3", {"weights": "heat", "sigma_factor": 1 / 3}, "kernel width ÷ 3"),
    ("heat, σ = median/10", {"weights": "heat", "sigma_factor": 0.1}, "kernel width ÷ 10"),
    ("heat, σ = median/30", {"weights": "heat", "sigma_factor": 1 / 30}, "kernel width ÷ 30"),
    ("mutual 30-NN", {"symmetrise": "mutual"}, "symmetrisation: an edge when both are neighbours"),
    ("directed 30-NN", {"symmetrise": "none"}, "symmetrisation: none (directed graph)"),
    ("class mass normalisation", {"decision": "cmn"}, "Zhu et al.'s class mass normalisation"),
    ("one-vs-rest ERR", {"count": "one_vs_rest"}, "accuracy: the binary rule x ≥ ½ per class, averaged"),
    ("class index, x ≥ ½", {"decision": "index_half"},
     "labels: the class index as c_i in one harmonic function, the binary rule x ≥ ½ (the two-class code on "
     "multi-class labels)"),
    ("class index, rounded", {"decision": "index_round"}, "labels: the class index as c_i, the nearest index"),
    ("standardised features", {"standardise": True}, "preprocessing: features scaled to unit variance"),
)


def _trivial(sizes) -> tuple[float, float]:
    """Accuracies (%) without information: the majority class, and the larger side of every binary
    problem counted as the paper's ERR (one problem for two classes, one per class otherwise)."""
    p = np.asarray(sizes, dtype=float) / np.sum(sizes)
    sides = np.maximum(p, 1.0 - p)
    return 100.0 * float(p.max()), 100.0 * float(sides[0] if len(p) == 2 else np.mean(sides))


def _reading_cell(name: str, found: dict) -> str:
    return f"{name} {found['accuracy']:.1f}%, {found['unreached']:.0f}% unreached"


def _accuracy_cell(found: dict) -> str:
    if found["accuracy"] is None:
        return "singular"
    return f"{found['accuracy']:.2f} ({found['unreached']:.0f}%)"


def table4_reasons(config: dict, png: Path) -> Outcome:
    """Table 4 — the reason test: which reading of Sec. 4.7 gives the published accuracies without reduction?

    Paper
    -----
    Without reduction the harmonic classifier (9) on the 30-NN graph has accuracy 56.67% on
    Iris and 63.59% on Wine (and 80.89, 59.79, 62.93, 74.15% on Glass, Ionosphere, Pima,
    Vehicle), 10-fold cross-validation. Sec. 4.7 states k = 30, the energy (9) with weights
    w_uv, the rule x ≥ ½, one-vs-rest for several classes, and ERR = (fp+fn)/(tp+tn+fp+fn);
    not the weights, the symmetrisation, which part is labelled, the folds or a preprocessing.

    Departures
    ----------
    - Only Iris and Wine are available (scikit-learn's copies, in the UCI files' order, sorted
      by class); the column tested is "no reduction", so the reduction cannot be the reason.
    - Each reading changes one choice of Table 4's set-up (``TABLE4_READINGS``: labelled
      fraction, folds, weights and kernel width σ as a fraction of the median 30-NN distance,
      symmetrisation, class mass normalisation, what the accuracy counts, the class index used
      as the label value c_i of one harmonic function (Sec. 4.7 states c_i ∈ {0, 1} and the
      rule x_j ≥ ½, read here as the two-class code run on the multi-class labels),
      preprocessing); a
      point that reaches no labelled point gets no score (counted as ``unreached``). The
      grid is fixed in advance; no reading is tuned to the published numbers. A reading whose
      harmonic system is singular in floating point records no number (a narrow kernel: Iris
      has duplicate points, joined by weight 1 and to the others by weights near 1e-235).
    - The accuracy of a classifier without information (the majority class; the larger side of
      every binary problem, counted by the paper's ERR) is computed for all six published sets
      from their UCI class sizes.
    """
    loaders = {"iris": load_iris, "wine": load_wine}
    published = {"iris": PUBLISHED_TABLE4["Iris"][0], "wine": PUBLISHED_TABLE4["Wine"][0]}
    data = {name: loaders[name](return_X_y=True) for name in config["datasets"]}
    raw = []
    for label, change, reason in TABLE4_READINGS:
        row = {"reading": label, "reason": reason, "change": {k: v for k, v in change.items()}}
        for name, (X, y) in data.items():
            options = {k: v for k, v in change.items() if k not in ("sigma_factor", "standardise")}
            Z = StandardScaler().fit_transform(X) if change.get("standardise") else X
            if "sigma_factor" in change:
                median = float(np.median(knn_graph(Z, config["k"], weights="distance", symmetrise="none").data))
                options["sigma"] = change["sigma_factor"] * median
            try:
                found = harmonic_accuracy(Z, y, k=config["k"], seed=config["seed"], **options)
            except ValueError:                      # the harmonic system is singular in floating point
                row[name] = {"accuracy": None, "unreached": None, "gap": None}
                continue
            row[name] = {**found, "gap": found["accuracy"] - published[name]}
        raw.append(row)
    names = list(data)
    solved = [r for r in raw if all(r[n]["accuracy"] is not None for n in names)]
    singular = [r["reading"] for r in raw if r not in solved]
    near = [r["reading"] for r in solved if all(abs(r[n]["gap"]) <= config["tolerance"] for n in names)]
    trivial = {k: _trivial(v) for k, v in UCI_CLASS_SIZES.items()}
    pub_none = {k: v[0] for k, v in PUBLISHED_TABLE4.items()}
    under = [r for r in solved if all(r[n]["accuracy"] <= published[n] for n in names)]
    above = [r for r in solved if r not in under]
    lowest = {n: min(above, key=lambda r, n=n: r[n]["accuracy"]) for n in names}
    gaps = {k: max(trivial[k]) - pub_none[k] for k in trivial}
    agreement = (
        f"No reading comes within {config['tolerance']:g} points of both published values"
        + (f" ({', '.join(near)} do)" if near else "")
        + "; " + ("; ".join(f"{r['reading']} gives {', '.join(_reading_cell(n, r[n]) for n in names)}, below "
                            "them" for r in under) + ", because each fold labels one class only; every other "
                  "reading gives" if under else "every reading gives")
        + " at least " + ", ".join(f"{n} {lowest[n][n]['accuracy']:.1f}% ({lowest[n]['reading']})" for n in names)
        + f" against the published {', '.join(f'{n} {published[n]:.2f}%' for n in names)}"
        + (f"; singular in floating point (no number): {', '.join(singular)}" if singular else "")
        + ". Tested reason: none of the set-up choices the paper leaves open explains the published values. "
        f"What they share: on {sum(g > 0 for g in gaps.values())} of {len(gaps)} sets the published accuracy "
        "is below that of a classifier without information — the majority class (two classes) or the "
        "larger side of every one-vs-rest problem counted by the paper's ERR — by "
        + ", ".join(f"{k} {g:.1f}" for k, g in gaps.items())
        + " points: the published classifier does no better than one that ignores the data, which no reading "
        f"of the text reproduces. The disagreement is unexplained: the {len(raw)} readings tested are listed in the "
        "table, and it cannot be traced further without the paper's code or its per-fold outputs, neither of "
        "which is published.")
    fig, ax = plt.subplots(figsize=(8, 3.8))
    x = np.arange(len(raw))
    for off, n, color in ((-0.2, names[0], "0.3"), (0.2, names[-1], "0.7")):
        ax.bar(x + off, [np.nan if r[n]["accuracy"] is None else r[n]["accuracy"] for r in raw], 0.4, color=color,
               label=n)
        ax.axhline(published[n], color=color, ls="--", lw=1)
    ax.set_xticks(x, [r["reading"] for r in raw], rotation=60, ha="right", fontsize=7)
    ax.set(ylabel="accuracy % (no reduction)", ylim=(0, 100), title="harmonic classifier: readings of Sec. 4.7 "
           "(dashed: published)")
    ax.legend(fontsize=7)
    _save(fig, png)
    rows = [[r["reading"], r["reason"], *(_accuracy_cell(r[n]) for n in names)] for r in raw]
    trivial_rows = [[k, f"{pub_none[k]:.2f}", f"{trivial[k][0]:.1f}", f"{trivial[k][1]:.1f}",
                     f"{gaps[k]:+.1f}"] for k in trivial]
    return Outcome(
        published=f"Without reduction: {', '.join(f'{k} {v:.2f}%' for k, v in pub_none.items())}.",
        ours=(f"Accuracy % without reduction, {config['k']}-NN graph, 10-fold cross-validation (in brackets: the "
              "share of unlabelled points that reach no labelled point).\n\n"
              + _md_table(["reading", "what changes", *names], rows)
              + "\n\nA classifier without information, from the UCI class sizes:\n\n"
              + _md_table(["data", "published %", "majority class %", "larger side, paper's ERR %",
                           "no-information − published"], trivial_rows)),
        rows={"readings": raw, "trivial": {k: {"majority": v[0], "larger_side_err": v[1]} for k, v in trivial.items()}},
        verdict="differs", agreement=agreement)


_MNIST_DIMS = [5, 10, 20, 30, 40, 50, 60, 80, 100, 120, 140, 160, 200, 240, 280, 320, 400, 500]
EXPERIMENTS = (
    Experiment("fig2", "Fig. 2 — pairwise distortions of PCA, NuMax and ADAGIO on MNIST", fig2,
               full={"n_images": 800, "delta": 0.05, "dims": _MNIST_DIMS, "seed": 0},
               quick={"n_images": 120, "delta": 0.2, "dims": [10, 20, 40, 80], "seed": 0}),
    Experiment("stable_rank", "Fig. 3–5 — PCA's distortions, the stable rank, ADAGIO's distortions (r = 20)",
               stable_rank_study,
               full={"datasets": ["mnist28", "mnist20", "digits", "breast_cancer", "squares", "disks", "blob"],
                     "n_points": 800, "r": 20, "dims": [20, 30, 40, 60, 80, 120, 160, 240], "seed": 0},
               quick={"datasets": ["mnist20", "digits", "breast_cancer", "blob"], "n_points": 150, "r": 20,
                      "dims": [20, 40, 80], "seed": 0}),
    Experiment("fig6", "Fig. 6 — distortion against target dimension on MNIST", fig6,
               full={"n_images": 800, "dims": _MNIST_DIMS, "deltas": [0.4, 0.3, 0.2, 0.15, 0.1], "target": 0.15,
                     "seed": 0},
               quick={"n_images": 120, "dims": [5, 10, 20, 40, 60, 80, 100], "deltas": [0.3], "target": 0.3,
                      "seed": 0}),
    Experiment("fig7", "Fig. 7 — ADAGIO with exact and randomized PCA", fig7,
               full={"datasets": ["mnist28", "digits", "blob"], "n_points": 800,
                     "dims": [10, 20, 40, 60, 100, 150, 200, 300], "tolerance": 0.05, "seed": 0},
               quick={"datasets": ["mnist28", "digits"], "n_points": 150, "dims": [10, 40],
                      "tolerance": 0.05, "seed": 0}),
    Experiment("table3", "Table 3 — dimension and time at distortion 0.05, 0.1, 0.2 on MNIST", table3,
               full={"n_images": 800, "deltas": [0.05, 0.1, 0.2], "seed": 0},
               quick={"n_images": 100, "deltas": [0.2], "seed": 0}),
    Experiment("table4", "Table 4 — harmonic-function classification on 30-NN graphs", table4,
               full={"datasets": ["iris", "wine", "breast_cancer", "digits"], "max_points": 900, "delta": 0.2,
                     "k": 30, "tolerance": 5.0, "seed": 0},
               quick={"datasets": ["iris", "wine"], "max_points": 900, "delta": 0.3, "k": 30, "tolerance": 5.0,
                      "seed": 0}),
    Experiment("table4_reasons", "Table 4 — the reason test: readings of Sec. 4.7 without reduction", table4_reasons,
               full={"datasets": ["iris", "wine"], "k": 30, "tolerance": 5.0, "seed": 0},
               quick={"datasets": ["iris", "wine"], "k": 30, "tolerance": 5.0, "seed": 0}),
)
