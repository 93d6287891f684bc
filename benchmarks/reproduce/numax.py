"""The experiments of the NuMax paper (Hegde, Sankaranarayanan, Yin and Baraniuk), one function each.

Each function's docstring states the paper's set-up (``Paper``) and every departure from it
(``Departures``); :mod:`reproduce.common` copies both into REPRODUCTION.md beside the published
numbers and ours. Only public APIs of sdpembed are used; the MNIST helpers of
``benchmarks/numax_mnist.py`` and ``benchmarks/numax_class_mnist.py`` are imported, not copied.

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Fig. 3–7, 9–13 and Tables 1–2.
.. [2] M. A. Davenport, M. F. Duarte, M. B. Wakin et al., "The smashed filter for compressive
   classification and target recognition", Proc. SPIE 6498, 2007 (the GMLC of Fig. 12).
.. [3] P. Shah and V. Chandrasekaran, "Iterative projections for signal identification on
   manifolds: algorithms and recovery guarantees", Proceedings of the 49th Allerton Conference
   on Communication, Control, and Computing, 2011 (the recovery of Fig. 11).
"""

from __future__ import annotations

import functools
import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from numax_class_mnist import active_secants, knn_error  # noqa: E402
from numax_mnist import dimension_by_bisection, part_b  # noqa: E402
from sklearn.decomposition import KernelPCA  # noqa: E402
from sklearn.manifold import MDS  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors  # noqa: E402

from sdpembed import NuMaxClassInstance, NuMaxInstance, sample_secants, solve  # noqa: E402
from sdpembed.datasets import disks_and_squares, load_mnist, translating_gaussian_blob, translating_squares  # noqa: E402
from sdpembed.linear import (  # noqa: E402
    SampledManifold,
    embedding_from_psd,
    gaussian_projection,
    manifold_iterative_pursuit,
    pca_projection,
)
from sdpembed.validation import SecantSet  # noqa: E402

from .baselines import best_scaled_delta, lpp_projection, npe_projection  # noqa: E402
from .common import Experiment, Outcome, parallel_map  # noqa: E402

TITLE = "NuMax (Hegde, Sankaranarayanan, Yin and Baraniuk, IEEE TSP 2015)"
DATA_NOTE = ("Data: the vendored MNIST is the 10,000-image *test* set (28×28 and the 20×20 crop); where the "
             "paper trains on the 60,000 training images we split the test set. LabelMe GIST (Fig. 9) is "
             "not available; MNIST 20×20 stands in for it, and for Isolet (Fig. 13). Every solve is certified "
             "(status, relative gap).")
NOT_IMPLEMENTED: list[str] = []
#: The paper's numbered pictures that report no experiment (every other figure and table has a function).
NOT_EXPERIMENTS = ["Fig. 1 (a diagram of NuMax-Class: inter-class secants may expand, intra-class ones shrink)",
                   "Fig. 2 (example images of translating squares, the data of Fig. 3–5)",
                   "Fig. 6(a) (example MNIST fives)", "Fig. 8 (example LabelMe images, the data of Fig. 9)"]


# ------------------------------------------------------------------------------------------ helpers


def _gaussian_maps(N: int, seed: int):
    """M ↦ an M×N map with i.i.d. N(0, 1/M) entries (the paper's random projection); nested in M."""
    G = gaussian_projection(N, N, random_state=seed) * np.sqrt(N)
    return lambda M: G[:M] / np.sqrt(M)


def _numax_map(delta: float, *, secants=None, X=None, seed: int = 0) -> tuple[np.ndarray, object]:
    """Ψ of NuMax (4)–(5) on explicit unit secants (ADMM, Algorithm 1) or all pairs of X (CG, Algorithm 2)."""
    if secants is not None:
        result = solve(NuMaxInstance(delta=delta, secants=secants))
    else:
        result = solve(NuMaxInstance(delta=delta, X=X), random_state=seed)
    return embedding_from_psd(result.solution), result


def _first_dim(deltas: np.ndarray, target: float) -> int | None:
    """Smallest M (1-based index) whose δ(M) ≤ target."""
    hit = np.flatnonzero(deltas <= target)
    return int(hit[0]) + 1 if hit.size else None


def _save(fig, png: Path) -> None:
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def _fmt(value, spec: str = ".2f") -> str:
    return "—" if value is None else format(value, spec)


def _md_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _delta_vs_m(X: np.ndarray, n_secants: int, deltas: list[float], seed: int) -> dict:
    """Fig. 3(a)/6(b): NuMax's rank at each δ; PCA (on the secants) and Gaussian δ at every M."""
    V = sample_secants(X, n_secants, random_state=seed)
    all_pairs = len(V) == len(X) * (len(X) - 1) // 2        # then NuMax-CG on the points, the same secants
    evaluate = SecantSet(secants=V)
    N = X.shape[1]
    gaussian = _gaussian_maps(N, seed)
    dims = np.arange(1, min(N, len(V)) + 1)
    pca = pca_projection(V, int(dims[-1]), center=False)      # PCA's maps are nested: one SVD, its prefixes
    curves = {"pca": [], "pca_99": [], "gaussian": [], "gaussian_99": []}
    for M in dims:
        for name, Psi in (("pca", pca[:M]), ("gaussian", gaussian(int(M)))):
            d = evaluate.distortions(Psi)
            curves[name].append(float(np.max(np.abs(d))))
            curves[name + "_99"].append(float(np.quantile(np.abs(d), 0.99)))
    numax = []
    for delta in deltas:
        Psi, result = (_numax_map(delta, X=X, seed=seed) if all_pairs else _numax_map(delta, secants=V, seed=seed))
        numax.append({"delta": delta, "rank": int(Psi.shape[0]), "status": result.status,
                      "relative_gap": result.relative_gap, "achieved": evaluate.isometry_constant(Psi),
                      "time_s": result.wall_time})
    return {"n_secants": int(len(V)), "dims": dims.tolist(), "curves": curves, "numax": numax, "secants": V}


def _plot_delta_vs_m(ax, found: dict) -> None:
    dims = found["dims"]
    ax.plot([r["rank"] for r in found["numax"]], [r["delta"] for r in found["numax"]], "ko-", label="NuMax")
    for name, style in (("pca", "b-"), ("pca_99", "b--"), ("gaussian", "r-"), ("gaussian_99", "r--")):
        ax.plot(dims, found["curves"][name], style, label=name.replace("_99", " (all but 1%)"))
    ax.set(xlabel="M", ylabel="isometry constant δ", ylim=(0, 1), xscale="log")
    ax.legend(fontsize=7)


def _dims_table(found: dict, extra: dict | None = None) -> tuple[list[list], list[dict]]:
    """Per NuMax δ: NuMax's M and the smallest M at which each other method reaches the same δ."""
    rows, raw = [], []
    for r in found["numax"]:
        dims = {k: _first_dim(np.array(v), r["delta"]) for k, v in found["curves"].items()}
        dims.update({k: _first_dim(np.array(v), r["delta"]) for k, v in (extra or {}).items()})
        raw.append({**r, **{f"{k}_dim": v for k, v in dims.items()}})
        rows.append([r["delta"], r["rank"], r["status"], *(_fmt(v, "d") for v in dims.values())])
    return rows, raw


# ------------------------------------------------------------------------------------------ Fig. 3


def fig3(config: dict, png: Path) -> Outcome:
    """Fig. 3 — isometry constant δ against M on translating squares: (a) NuMax, PCA, random; (b) other embeddings.

    Paper
    -----
    N = 16×16 images of a white square translating on a black background (Fig. 2); S = 1,000
    secants from randomly sampled pairs, normalised (1). NuMax (Algorithm 1) solved at several δ,
    its rank is M. PCA learned on the secant set and Gaussian maps (entries N(0, 1/M)) at every M,
    δ = worst-case |‖Ψv‖² − 1| on the secants; dashed curves: δ met by all but 1% of the secants.
    (b) Kernel PCA (RBF), metric MDS, LPP and NPE. Published: NuMax reaches δ = 0.1 with 4× fewer
    measurements than PCA, and the fewest measurements of every method in (b).

    Departures
    ----------
    - The square's side (8 pixels) is not given in the paper; with it the set has 81 images.
    - Kernel PCA, MDS, LPP and NPE have no natural scale: δ is measured after the best uniform
      rescaling of each embedding, (max r − min r)/(max r + min r) of the squared-norm ratios r,
      which favours them. Kernel PCA uses γ = 1/median squared distance; MDS is scikit-learn's
      SMACOF (one initialisation); LPP and NPE (5 neighbours, a 1e-6 ridge) are small
      implementations written for this reproduction (``benchmarks/reproduce/baselines.py``).
    - The nonlinear embeddings are computed at the M of a fixed grid, not every M.
    """
    X = translating_squares(config["image_size"], config["square_size"])
    found = _delta_vs_m(X, config["n_secants"], config["deltas"], config["seed"])
    V = found.pop("secants")
    pairs = sample_secants(X, config["n_secants"], random_state=config["seed"], return_pairs=True)[1]
    D2 = np.einsum("ij,ij->i", X[pairs[:, 0]] - X[pairs[:, 1]], X[pairs[:, 0]] - X[pairs[:, 1]])
    assert len(V) == len(pairs)

    def scaled_delta(Y: np.ndarray) -> float:
        diff = Y[pairs[:, 0]] - Y[pairs[:, 1]]
        return best_scaled_delta(np.einsum("ij,ij->i", diff, diff) / D2)

    sq = np.einsum("ij,ij->i", X, X)
    gamma = 1.0 / np.median(sq[:, None] + sq[None, :] - 2 * X @ X.T)
    grid = [M for M in config["baseline_dims"] if M < len(X)]
    other = {"kernel_pca": [], "mds": [], "lpp": [], "npe": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for M in grid:
            other["kernel_pca"].append(scaled_delta(KernelPCA(M, kernel="rbf", gamma=gamma).fit_transform(X)))
            other["mds"].append(scaled_delta(MDS(M, n_init=1, random_state=config["seed"]).fit_transform(X)))
            other["lpp"].append(scaled_delta(X @ lpp_projection(X, M).T))
            other["npe"].append(scaled_delta(X @ npe_projection(X, M).T))
    # δ(M) of the nonlinear methods on the grid, as a step function over every M for the dimension table
    dense = {k: np.array([min([v for m, v in zip(grid, vals, strict=True) if m <= M], default=np.inf)
                          for M in found["dims"]]) for k, vals in other.items()}
    rows, raw = _dims_table(found, dense)
    header = ["δ", "NuMax M", "status", "PCA M", "PCA M (99%)", "Gaussian M", "Gaussian M (99%)",
              "kernel PCA M", "MDS M", "LPP M", "NPE M"]
    numax_fewest = all(r["rank"] <= min(v for k, v in r.items() if k.endswith("_dim") and v is not None)
                       for r in raw if any(v is not None for k, v in r.items() if k.endswith("_dim")))
    at01 = next((r for r in raw if abs(r["delta"] - 0.1) < 1e-12), None)
    ratio = None if at01 is None or at01["pca_dim"] is None else at01["pca_dim"] / at01["rank"]
    ratio_text = ("δ = 0.1 not in this run" if at01 is None else
                  f"at δ = 0.1 PCA needs {_fmt(ratio)}× NuMax's M ({at01['pca_dim']} vs {at01['rank']})")
    verdict = "reproduced in trend" if numax_fewest else "differs"
    agreement = (f"NuMax {'has' if numax_fewest else 'does not have'} the fewest measurements at every δ "
                 f"among all eight curves (published: the fewest); {ratio_text} (published: 4×).")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    _plot_delta_vs_m(axes[0], found)
    axes[0].set_title("(a) NuMax, PCA, Gaussian")
    axes[1].plot([r["rank"] for r in found["numax"]], [r["delta"] for r in found["numax"]], "ko-", label="NuMax")
    for name, vals in other.items():
        axes[1].plot(grid, vals, ".-", label=name.replace("_", " ") + " (best scale)")
    axes[1].set(xlabel="M", ylabel="isometry constant δ", ylim=(0, 1), title="(b) other embeddings", xscale="log")
    axes[1].legend(fontsize=7)
    _save(fig, png)
    return Outcome(
        published="NuMax reaches δ = 0.1 with 4× fewer measurements than PCA (text, Sec. 5.1); in (b) NuMax uses "
                  "the fewest measurements of all methods at every δ (curves only, no numbers).",
        ours=f"{len(X)} images, {found['n_secants']} secants. Smallest M reaching each NuMax δ (— = never up to "
             f"M = {found['dims'][-1]}; the nonlinear methods on the grid {grid}):\n\n" + _md_table(header, rows),
        rows={"dims_table": raw, "curves": found["curves"], "baselines": {"grid": grid, **other}},
        verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 4–5


@functools.cache
def _squares_map(image_size: int, square_size: int, n_secants: int, delta: float, seed: int) -> dict:
    """Fig. 3's set-up: the translating squares, their sampled unit secants and NuMax (Algorithm 1) at δ."""
    X = translating_squares(image_size, square_size)
    V = sample_secants(X, n_secants, random_state=seed)
    Psi, result = _numax_map(delta, secants=V, seed=seed)
    return {"V": V, "Psi": Psi, "status": result.status, "relative_gap": result.relative_gap, "n_images": len(X)}


def fig4(config: dict, png: Path) -> Outcome:
    """Fig. 4 — histograms of the secant distortions ‖Ψv‖² − 1 of NuMax, PCA and random maps of one M.

    Paper
    -----
    The translating squares and S = 1,000 secants of Fig. 3; NuMax at δ = 0.03, whose rank is
    r = 30; PCA (on the secants) and a Gaussian map with the same r; histograms of the
    distortions of the secants. Published (histograms only): NuMax's distortions are sharply
    concentrated at ±δ; PCA's are spread out and all negative (PCA is contractive); the random
    map's are much more widely distributed.

    Departures
    ----------
    - The square's side (8 pixels) is not given in the paper, and NuMax's rank at δ = 0.03 is
      ours, not 30; PCA and the Gaussian map take NuMax's rank, as in the paper.
    - "Sharply concentrated at ±δ" is measured as the fraction of secants within 0.005 of a bound
      |d| = δ; "spread" as the standard deviation and the largest |d|.
    """
    fit = _squares_map(config["image_size"], config["square_size"], config["n_secants"], config["delta"],
                       config["seed"])
    V, Psi = fit["V"], fit["Psi"]
    M = Psi.shape[0]
    evaluate = SecantSet(secants=V)
    maps = {"numax": Psi, "pca": pca_projection(V, M, center=False), "gaussian": _gaussian_maps(V.shape[1],
                                                                                                   config["seed"])(M)}
    dist = {name: evaluate.distortions(P) for name, P in maps.items()}
    stats = {name: {"std": float(np.std(d)), "max_abs": float(np.max(np.abs(d))), "max": float(np.max(d)),
                    "min": float(np.min(d)),
                    "at_bound": float(np.mean(np.abs(np.abs(d) - config["delta"]) <= 0.005))}
             for name, d in dist.items()}
    order = stats["numax"]["max_abs"] < stats["pca"]["max_abs"] < stats["gaussian"]["max_abs"]
    contractive = stats["pca"]["max"] <= 1e-9
    met = stats["numax"]["max_abs"] <= config["delta"] + 1e-3
    verdict = "reproduced in trend" if order and contractive and met else "differs"
    agreement = (f"At M = {M}: largest |distortion| NuMax {stats['numax']['max_abs']:.3f} (δ = {config['delta']}; "
                 f"{100 * stats['numax']['at_bound']:.0f}% of the secants within 0.005 of ±δ), PCA "
                 f"{stats['pca']['max_abs']:.3f}, Gaussian {stats['gaussian']['max_abs']:.3f} — "
                 + ("the published ordering" if order else "not the published ordering")
                 + f"; PCA's distortions are {'all ≤ 0 (contractive)' if contractive else 'not all ≤ 0'}.")
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.2))
    for ax, (name, d) in zip(axes, dist.items(), strict=True):
        ax.hist(d, bins=50, color="0.3")
        ax.set(title=f"{name}, M = {M}", xlabel="‖Ψv‖² − 1", ylabel="secants")
    _save(fig, png)
    rows = [[name, f"{v['std']:.4f}", f"{v['min']:+.3f}", f"{v['max']:+.3f}", f"{100 * v['at_bound']:.0f}%"]
            for name, v in stats.items()]
    return Outcome(
        published="Histograms only (r = 30): NuMax concentrated at ±0.03; PCA spread out and all below 0; random "
                  "projections much more widely distributed.",
        ours=(f"{fit['n_images']} images, {len(V)} secants, NuMax at δ = {config['delta']} ({fit['status']}) has "
              f"rank {M}; every map at M = {M}.\n\n"
              + _md_table(["map", "std of distortion", "min", "max", f"within 0.005 of ±{config['delta']}"], rows)),
        rows={"M": int(M), "stats": stats}, verdict=verdict, agreement=agreement)


def fig5(config: dict, png: Path) -> Outcome:
    """Fig. 5 — montage of NuMax's basis functions (the rows of Ψ) on the translating squares, at several δ.

    Paper
    -----
    The set-up of Fig. 3 (translating squares, S = 1,000 secants); NuMax at several δ; the rows
    of Ψ = Λ^½Uᵀ (5) shown as images. The figure has no numbers; what can be compared is that
    a smaller δ asks for more basis functions, each row an image over the square's support.

    Departures
    ----------
    - The δ values of the montage are not given; ours are ``deltas``. The square's side (8
      pixels) is not given either.
    """
    fits = [_squares_map(config["image_size"], config["square_size"], config["n_secants"], d, config["seed"])
            for d in config["deltas"]]
    ranks = [int(f["Psi"].shape[0]) for f in fits]
    by_delta = sorted(zip(config["deltas"], ranks, strict=True))
    monotone = all(a[1] >= b[1] for a, b in zip(by_delta, by_delta[1:], strict=False))
    show = min(max(ranks), config["max_rows"])
    fig, axes = plt.subplots(len(fits), show, figsize=(0.9 * show, 1.0 * len(fits)), squeeze=False)
    n = config["image_size"]
    for i, (delta, f) in enumerate(zip(config["deltas"], fits, strict=True)):
        for j in range(show):
            ax = axes[i, j]
            ax.set_xticks([])
            ax.set_yticks([])
            if j < f["Psi"].shape[0]:
                ax.imshow(f["Psi"][j].reshape(n, n), cmap="gray")
            else:
                ax.axis("off")
        axes[i, 0].set_ylabel(f"δ={delta}", fontsize=7)
    _save(fig, png)
    verdict = "reproduced in trend" if monotone else "differs"
    agreement = ("NuMax's rank " + ("grows" if monotone else "does not grow") + " as δ shrinks ("
                 + ", ".join(f"δ {d}: M {r}" for d, r in by_delta) + "); the montage shows the first "
                 f"{show} rows of each Ψ (the paper's figure has no numbers to compare).")
    return Outcome(
        published="A montage only: the rows of Ψ as images for several δ.",
        ours=_md_table(["δ", "M", "status"], [[d, r, f["status"]] for d, r, f in zip(config["deltas"], ranks, fits,
                                                                                     strict=True)]),
        rows=[{"delta": d, "M": r, "status": f["status"]} for d, r, f in zip(config["deltas"], ranks, fits,
                                                                            strict=True)],
        verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 6


def fig6(config: dict, png: Path) -> Outcome:
    """Fig. 6(b) — isometry constant δ against M on MNIST: NuMax, PCA, random.

    Paper
    -----
    MNIST images, N = 28×28 = 784; S = 3,000 secants of randomly sampled pairs. NuMax at several
    δ (its rank is M, Algorithm 1 since S < 5,000), PCA on the secants and Gaussian maps at every
    M. Published: at δ = 0.2 NuMax needs 8× fewer measurements than PCA; NuMax and PCA both beat
    random projections.

    Departures
    ----------
    - 3,003 secants: all pairs of 78 images, solved by column generation (Algorithm 2), rather
      than 3,000 sampled pairs of more images by Algorithm 1, whose S×S system and
      784×784 eigendecompositions per iteration cost far more.
    - The images are a seeded sample of the vendored 10,000 MNIST *test* images (the paper does
      not say which images it used; its Fig. 6(a) shows fives, its text "the MNIST dataset").
    """
    X, _ = load_mnist(size=28, n_samples=config["n_images"], random_state=config["seed"])
    found = _delta_vs_m(X, config["n_secants"], config["deltas"], config["seed"])
    found.pop("secants")
    rows, raw = _dims_table(found)
    at = next((r for r in raw if abs(r["delta"] - 0.2) < 1e-12), None)
    ratio = None if at is None or at["pca_dim"] is None else at["pca_dim"] / at["rank"]
    fewest = all(r["pca_dim"] is None or r["rank"] <= r["pca_dim"] for r in raw)
    pca_beats_random = all(r["gaussian_dim"] is None or (r["pca_dim"] is not None
                                                         and r["pca_dim"] <= r["gaussian_dim"]) for r in raw)
    verdict = "reproduced in trend" if fewest and pca_beats_random else "differs"
    agreement = (f"Ordering NuMax < PCA < Gaussian in M {'holds' if fewest and pca_beats_random else 'does not hold'}"
                 f" at every δ; at δ = 0.2 PCA needs "
                 + (f"{ratio:.1f}× NuMax's M ({at['pca_dim']} vs {at['rank']})" if ratio else
                    "— (δ = 0.2 not run or PCA never reaches it)") + " (published: 8×).")
    fig, ax = plt.subplots(figsize=(6, 4))
    _plot_delta_vs_m(ax, found)
    ax.set_title(f"MNIST 28×28, {found['n_secants']} secants")
    _save(fig, png)
    return Outcome(
        published="At δ = 0.2 NuMax needs 8× fewer measurements than PCA; NuMax and PCA beat random projections "
                  "(text and Fig. 6(b), curves only).",
        ours=f"{len(X)} images, {found['n_secants']} secants. Smallest M reaching each NuMax δ:\n\n"
             + _md_table(["δ", "NuMax M", "status", "PCA M", "PCA M (99%)", "Gaussian M", "Gaussian M (99%)"], rows),
        rows={"dims_table": raw, "curves": found["curves"]}, verdict=verdict, agreement=agreement)


def _nested_dim(U: np.ndarray, V: np.ndarray, delta: float) -> int | None:
    """Smallest M whose first M orthonormal rows of U keep every row of V within RIP δ
    (‖U_M v‖²/‖v‖² − 1, from the cumulative squared projections: one product for every M)."""
    ratios = np.cumsum((V @ U.T) ** 2, axis=1) / np.einsum("ij,ij->i", V, V)[:, None]
    return _first_dim(np.max(np.abs(ratios - 1.0), axis=0), delta)


def _stored_fig6(path: Path, delta: float) -> str:
    """The ratio our stored Fig. 6 run found at δ (all pairs of its images), as a parenthesis; "" without one."""
    import json

    if not path.exists():
        return ""
    record = json.loads(path.read_text())
    row = next((r for r in record["rows"]["dims_table"] if abs(r["delta"] - delta) < 1e-12), None)
    if row is None or row.get("pca_dim") is None:
        return ""
    n = record["config"]["n_images"]
    return (f" (our Fig. 6 above takes all pairs of {n} images, whose secants span at most {n - 1} dimensions, and "
            f"finds {row['pca_dim'] / row['rank']:.1f}×)")


def _spread(values: list) -> dict:
    """Mean, standard deviation (ddof 1; 0 for one value), minimum and maximum of the values that are not None."""
    v = np.asarray([x for x in values if x is not None], dtype=float)
    if len(v) == 0:
        return {"mean": None, "sd": None, "min": None, "max": None, "n": 0}
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
            "min": float(v.min()), "max": float(v.max()), "n": int(len(v))}


def _spread_text(stat: dict, spec: str = ".1f", unit: str = "×") -> str:
    """'6.3× ± 0.4 (5.9–6.8)' for a ratio's spread over the samples, '—' without values."""
    if stat["mean"] is None:
        return "—"
    return f"{stat['mean']:{spec}}{unit} ± {stat['sd']:{spec}} ({stat['min']:{spec}}–{stat['max']:{spec}})"


def _fig6_sample(config: dict, sample: int) -> list[dict]:
    """One sample of :func:`fig6_reasons`: every case on images and secants drawn with seed ``seed`` + ``sample``."""
    delta, seed, S = config["delta"], config["seed"], config["n_secants"]
    rng = np.random.default_rng(seed + sample)
    rows = []
    for size, n_images in config["cases"]:
        images, _ = load_mnist(size=size)
        order = rng.permutation(len(images))
        X, rest = images[order[:n_images]], images[order[n_images:]]
        V, pairs = sample_secants(X, S, random_state=seed + sample, return_pairs=True)
        result = solve(NuMaxInstance(delta=delta, secants=V), method=config["method"])
        Psi = embedding_from_psd(result.solution)
        pca = pca_projection(V, min(V.shape), center=False)
        row = {"sample": sample, "size": size, "n_images": n_images, "n_secants": int(len(V)),
               "secant_span": int(np.linalg.matrix_rank(V)), "numax_m": int(Psi.shape[0]),
               "status": str(result.status), "relative_gap": result.relative_gap, "time_s": result.wall_time,
               "pca_m": _nested_dim(pca, V, delta)}
        row["ratio"] = None if row["pca_m"] is None else row["pca_m"] / row["numax_m"]
        if [size, n_images] == list(config["variants_case"]):
            D = X[pairs[:, 0]] - X[pairs[:, 1]]
            H = sample_secants(rest, S, random_state=seed + sample + 1)
            row.update(pca_m_differences=_nested_dim(pca_projection(D, min(D.shape), center=False), V, delta),
                       pca_m_images=_nested_dim(pca_projection(X, min(X.shape)), V, delta),
                       pca_m_heldout=_nested_dim(pca, H, delta),
                       numax_heldout_delta=SecantSet(secants=H).isometry_constant(Psi))
        rows.append(row)
        print(f"  sample {sample}, {size}×{size}, {n_images} images: NuMax M {row['numax_m']} ({row['status']}), "
              f"PCA M {_fmt(row['pca_m'], 'd')}, span {row['secant_span']}", flush=True)
    return rows


def fig6_reasons(config: dict, png: Path) -> Outcome:
    """Fig. 6(b) — the reason test: why PCA needs fewer times NuMax's M at δ = 0.2 than the paper's 8×.

    Paper
    -----
    S = 3,000 secants of randomly sampled pairs of MNIST images (N = 784); at δ = 0.2 NuMax's M
    is 8× smaller than PCA's (PCA learned on, and δ measured on, the same secants).

    Departures
    ----------
    - Candidate reasons, each one run: the number of distinct images the 3,000 secants come
      from (``cases``: our Fig. 6 takes all pairs of 78 images, whose secants span at most 77
      dimensions, so PCA is exact by M = 77; 3,000 random pairs of 6,000 images span far more),
      the image size (28×28 against the 20×20 crop), and three PCA variants on the largest
      case: PCA of the unnormalised differences, PCA of the centred images, and PCA's δ measured
      on 3,000 held-out secants of other images (NuMax's held-out δ beside it).
    - PCA's M is set by its single worst secant, so one sample of images decides little: every
      case is run on ``samples`` independent samples of images and secants (sample s draws with
      seed ``seed`` + s; sample 0 is the draw of a single-sample run), and each ratio is reported
      as mean ± standard deviation (minimum–maximum) over the samples. Decision rule, fixed
      before the run: a reason accounts for the gap to 8× when the mean ratio of its case is
      within ``tolerance`` of 8.
    - NuMax is the SDP (4) on the explicit secants at δ = ``delta`` only, solved by ``method``
      (``"cg"``: column generation, Algorithm 2, the same optimum as Algorithm 1's ADMM at a
      fraction of its time; each solve certified); the images are seeded samples of the vendored
      MNIST *test* set (the held-out images drawn from the rest); the samples run in ``workers``
      processes.
    """
    delta, S = config["delta"], config["n_secants"]
    raw = [row for rows in parallel_map(functools.partial(_fig6_sample, config), list(range(config["samples"])),
                                        config["workers"]) for row in rows]
    cases = [tuple(c) for c in config["cases"]]
    by_case = {c: [r for r in raw if (r["size"], r["n_images"]) == c] for c in cases}
    summary = {c: {"ratio": _spread([r["ratio"] for r in rows]), "numax_m": _spread([r["numax_m"] for r in rows]),
                   "pca_m": _spread([r["pca_m"] for r in rows]), "span": _spread([r["secant_span"] for r in rows])}
               for c, rows in by_case.items()}
    base_case = tuple(config["variants_case"])
    base_rows = by_case[base_case]
    fewest = min((c for c in cases if c[0] == base_case[0]), key=lambda c: c[1])
    other_size = [c for c in cases if c[0] != base_case[0] and c[1] == base_case[1]]
    variant_keys = {"PCA of the unnormalised differences": "pca_m_differences",
                    "PCA of the centred images": "pca_m_images", "PCA's δ on held-out secants": "pca_m_heldout"}
    variants = {name: _spread([None if r[key] is None else r[key] / r["numax_m"] for r in base_rows])
                for name, key in variant_keys.items()}

    def near(stat: dict) -> bool:
        return stat["mean"] is not None and abs(stat["mean"] - 8.0) <= config["tolerance"]

    def reaches(stat: dict) -> bool:
        return stat["max"] is not None and stat["max"] >= 8.0 - config["tolerance"]

    close = [name for name, stat in variants.items() if near(stat)]
    base = summary[base_case]["ratio"]
    n = config["samples"]
    agreement = (
        f"At δ = {delta}, over {n} samples of images per case, PCA needs (mean ± sd, min–max) " + ", ".join(
            f"{_spread_text(summary[c]['ratio'])} NuMax's M with {c[1]} images at {c[0]}×{c[0]}" for c in cases)
        + " (published: 8×). Tested reasons: (1) distinct images — from "
        f"{fewest[1]} to {base_case[1]} images the mean ratio goes {_fmt(summary[fewest]['ratio']['mean'], '.1f')}× → "
        f"{_fmt(base['mean'], '.1f')}×{_stored_fig6(png.parent / 'fig6.json', delta)}: the few images explain "
        "part of the gap"
        + ("" if near(base) else f", not all (the mean stays more than {config['tolerance']:g} below 8×"
           + (f"; single samples reach {base['max']:.1f}×" if reaches(base) else "") + ")")
        + (f"; (2) image size — {other_size[0][0]}×{other_size[0][0]} gives "
           f"{_spread_text(summary[other_size[0]]['ratio'])}" if other_size else "")
        + f"; (3) PCA on {base_case[1]} images learned or measured otherwise: "
        + ", ".join(f"{name} {_spread_text(stat)}" for name, stat in variants.items())
        + (f" — mean within {config['tolerance']:g} of 8×: {', '.join(close)}, readings the paper's 'PCA basis "
           "functions learned on the secant set' (Sec. 5.1) does not state" if close else
           f" — no mean within {config['tolerance']:g} of 8×")
        + f". NuMax's M varies little between samples ({base_case[1]} images: "
        f"{_fmt(summary[base_case]['numax_m']['min'], '.0f')}–{_fmt(summary[base_case]['numax_m']['max'], '.0f')}); "
        f"PCA's M, set by its single worst secant, varies more "
        f"({_fmt(summary[base_case]['pca_m']['min'], '.0f')}–{_fmt(summary[base_case]['pca_m']['max'], '.0f')}).")
    verdict = "reproduced in trend" if near(base) else "differs"
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for size, style in ((28, "ko-"), (20, "bs--")):
        points = [c for c in cases if c[0] == size and summary[c]["ratio"]["mean"] is not None]
        if points:
            ax.errorbar([c[1] for c in points], [summary[c]["ratio"]["mean"] for c in points],
                        yerr=[summary[c]["ratio"]["sd"] for c in points], fmt=style, capsize=3,
                        label=f"{size}×{size} (mean ± sd, {n} samples)")
            for c in points:
                ax.plot([c[1]] * summary[c]["ratio"]["n"], [r["ratio"] for r in by_case[c] if r["ratio"] is not None],
                        style[0] + ".", alpha=0.4)
    ax.axhline(8.0, color="0.6", ls=":", label="published 8×")
    ax.set(xscale="log", xlabel="distinct images behind the 3,000 secants", ylabel="PCA M / NuMax M at δ = 0.2")
    ax.legend(fontsize=7)
    _save(fig, png)
    rows = [[f"{c[0]}×{c[0]}", c[1], _spread_text(summary[c]["span"], ".0f", ""),
             _spread_text(summary[c]["numax_m"], ".1f", ""), _spread_text(summary[c]["pca_m"], ".1f", ""),
             _spread_text(summary[c]["ratio"]),
             ", ".join(sorted({r["status"] for r in by_case[c]})),
             f"{np.mean([r['time_s'] for r in by_case[c]]):.0f} s"] for c in cases]
    heldout = _spread([r["numax_heldout_delta"] for r in base_rows])
    return Outcome(
        published="At δ = 0.2 NuMax needs 8× fewer measurements than PCA (3,000 secants of MNIST).",
        ours=(f"δ = {delta}, {S} random secants per case, {n} samples of images per case; mean ± sd (min–max) over "
              "the samples.\n\n"
              + _md_table(["images", "distinct images", "secant span", "NuMax M", "PCA M", "PCA / NuMax", "status",
                           "NuMax time (mean)"], rows)
              + f"\n\nPCA variants ({base_case[0]}×{base_case[0]}, {base_case[1]} images), PCA's M / NuMax's M: "
              + ", ".join(f"{name} {_spread_text(stat)}" for name, stat in variants.items())
              + f"; NuMax's δ on {S} held-out secants {_spread_text(heldout, '.3f', '')}."),
        rows={"samples": raw, "summary": [{"size": c[0], "n_images": c[1], **summary[c]} for c in cases],
              "variants": variants}, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 7


def fig7(config: dict, png: Path) -> Outcome:
    """Fig. 7 — NuMax-CG on MNIST fives: (a) fraction of active secants, (b) NuMax against NuMax-CG time.

    Paper
    -----
    Subsets of the MNIST training images of the digit 5; problems of growing size S (the number
    of secants), 10 trials each; NuMax (Algorithm 1) and NuMax-CG (Algorithm 2). Published:
    (a) the fraction of secants active at the NuMax-CG solution falls (exponentially) as S
    grows; (b) at S = 5·10⁴ NuMax-CG is an order of magnitude faster than NuMax.

    Departures
    ----------
    - The run is ``benchmarks/numax_mnist.py`` part (b), imported: fives of the vendored MNIST
      *test* set at 20×20 (N = 400; the paper does not state the size), the first n of one seeded
      permutation, all n(n−1)/2 secants; one trial per size; δ = ``delta`` (not stated).
    - NuMax (ADMM) runs only while its S×S least-squares matrix fits (S ≤ ``admm_max_secants``),
      so the time ratio is measured at our largest such S, below the paper's 5·10⁴.
    - Active: within 1e-4 of a bound at the certified NuMax-CG solution.
    """
    found = part_b(config["sizes"], config["admm_max_secants"], config["delta"], config["seed"])
    rows = found["rows"]
    fractions = [r["active_fraction"] for r in rows]
    falling = all(b < a for a, b in zip(fractions, fractions[1:], strict=False))
    both = [r for r in rows if r["admm_time_s"] is not None]
    ratio = None if not both else both[-1]["admm_time_s"] / both[-1]["cg_time_s"]
    faster = ratio is not None and ratio > 1.0
    verdict = "reproduced in trend" if falling and faster else "differs"
    agreement = ("The active fraction " + ("falls" if falling else "does not fall") + " at every step as S grows ("
                 + ", ".join(f"S {r['n_secants']}: {r['active_fraction']:.4f}" for r in rows) + "); "
                 + ("NuMax was not run at any size" if ratio is None else
                    f"at S = {both[-1]['n_secants']}, the largest S NuMax was run at, NuMax takes {ratio:.1f}× "
                    "NuMax-CG's time; the ratio by S: " + ", ".join(
                        f"{r['n_secants']}: {r['admm_time_s'] / r['cg_time_s']:.1f}×" for r in both))
                 + " (published: falling exponentially; 10× at S = 5·10⁴).")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    S = [r["n_secants"] for r in rows]
    axes[0].semilogy(S, fractions, "ko-")
    axes[0].set(xscale="log", xlabel="secants S", ylabel="active fraction", title="(a)")
    axes[1].loglog(S, [r["cg_time_s"] for r in rows], "ko-", label="NuMax-CG")
    axes[1].loglog([r["n_secants"] for r in both], [r["admm_time_s"] for r in both], "bs-", label="NuMax")
    axes[1].set(xlabel="secants S", ylabel="time (s)", title="(b)")
    axes[1].legend(fontsize=7)
    _save(fig, png)
    table = [[r["n_points"], r["n_secants"], r["cg_status"], f"{r['cg_time_s']:.1f}",
              "—" if r["admm_time_s"] is None else f"{r['admm_time_s']:.1f}", _fmt(r["admm_status"], "s"),
              f"{r['active_fraction']:.4f}"] for r in rows]
    return Outcome(
        published="Curves only: the active fraction falls exponentially with S; NuMax-CG 10× faster than NuMax at "
                  "S = 5·10⁴ (MATLAB).",
        ours=(found["setup"] + ". Times in seconds (one BLAS thread, a shared machine: compare within a row).\n\n"
              + _md_table(["images", "secants", "CG status", "NuMax-CG s", "NuMax s", "NuMax status",
                           "active fraction"], table)),
        rows=rows, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 9


def _knn_kept(Y_db: np.ndarray, Y_q: np.ndarray, truth: np.ndarray, ks: list[int]) -> dict[int, float]:
    """Mean fraction of each query's true k nearest neighbours that are among its k nearest after embedding."""
    found = NearestNeighbors(n_neighbors=max(ks)).fit(Y_db).kneighbors(Y_q, return_distance=False)
    out = {}
    for k in ks:
        hits = (found[:, :k, None] == truth[:, None, :k]).any(axis=2).sum(axis=1)
        out[k] = float(np.mean(hits / k))
    return out


def _ann_runs(config: dict, measure=None) -> tuple[np.ndarray, np.ndarray, list[dict]]:
    """Fig. 9's runs: database and queries of MNIST 20×20, and per δ the fraction of true k-NN kept by
    NuMax-CG, PCA and a Gaussian map of NuMax's rank; ``measure(P, db, q, truth)`` adds a value per map."""
    X, _ = load_mnist(size=20)
    order = np.random.default_rng(config["seed"]).permutation(len(X))
    db, q = X[order[: config["n_database"]]], X[order[config["n_database"]: config["n_database"] + config["n_queries"]]]
    ks = config["ks"]
    truth = NearestNeighbors(n_neighbors=max(ks)).fit(db).kneighbors(q, return_distance=False)
    gaussian = _gaussian_maps(X.shape[1], config["seed"])
    raw = []
    for delta in config["deltas"]:
        Psi, result = _numax_map(delta, X=db, seed=config["seed"])
        M = Psi.shape[0]
        row = {"delta": delta, "M": int(M), "status": result.status, "relative_gap": result.relative_gap,
               "time_s": result.wall_time}
        for name, P in (("numax", Psi), ("pca", pca_projection(db, M)), ("gaussian", gaussian(M))):
            row[name] = _knn_kept(db @ P.T, q @ P.T, truth, ks)
            if measure is not None:
                row[f"{name}_measure"] = measure(P, db, q, truth)
        raw.append(row)
        print(f"  δ {delta}: M {M} {result.status}  NuMax {row['numax']}  PCA {row['pca']}", flush=True)
    return db, q, raw


def _neighbour_spread(P: np.ndarray, db: np.ndarray, q: np.ndarray, truth: np.ndarray) -> float:
    """Mean over queries of the coefficient of variation of ‖P(q − x)‖²/‖q − x‖² over q's true neighbours x.

    A query's neighbour ranking is unchanged by any scale common to its neighbour secants, so what
    reorders them is this spread, not the worst-case distortion δ over all pairs.
    """
    V = q[:, None, :] - db[truth]                                        # (queries, K, N)
    ratios = np.einsum("qkm,qkm->qk", V @ P.T, V @ P.T) / np.einsum("qkn,qkn->qk", V, V)
    return float(np.mean(ratios.std(axis=1) / ratios.mean(axis=1)))


def _fig9_verdict(raw: list[dict], ks: list[int]) -> tuple[str, str]:
    """Fig. 9's verdict from its rows: does NuMax-CG keep the most true neighbours, for every k, at every M?"""
    wins = [(r["M"], all(r["numax"][k] >= max(r["pca"][k], r["gaussian"][k]) for k in ks)) for r in raw]
    above45 = [w for M, w in wins if M > 45]
    all_win = all(w for _, w in wins)
    agreement = (("NuMax-CG keeps the most true neighbours for every k at every M run" if all_win else
                  "NuMax-CG does not keep the most true neighbours for every k at every M: it wins at M = "
                  + (", ".join(str(M) for M, w in wins if w) or "none") + " and loses at M = "
                  + ", ".join(str(M) for M, w in wins if not w))
                 + (f"; it wins in {sum(above45)} of the {len(above45)} runs with M > 45" if above45
                    else "; no run has M > 45")
                 + " (published: NuMax-CG best for M > 45, every k)"
                 + ("." if all_win else "; the reason proposed is tested in the next section, the reason test."))
    return ("reproduced in trend" if all_win else "differs"), agreement


def fig9(config: dict, png: Path) -> Outcome:
    """Fig. 9 — approximate nearest neighbours: the fraction of the true k-NN kept after embedding.

    Paper
    -----
    Q = 4,000 LabelMe images as GIST descriptors (N = 512); NuMax-CG (Algorithm 2, all 8·10⁶
    pairs) at several δ gives M; PCA and Gaussian maps at the same M; 1,000 test queries; for
    k-NN, the average fraction of the k nearest neighbours in N dimensions that are also among
    the k nearest in M dimensions. Published: for M > 45 NuMax-CG beats PCA and random
    projections for every k "by a significant margin".

    Departures
    ----------
    - LabelMe GIST is not available: MNIST 20×20 (N = 400) test images stand in, a seeded
      permutation giving the database and disjoint queries.
    - k ∈ {1, 5, 10, 20, 50} (the paper's values of k are read off its figure, not stated).
    """
    ks = config["ks"]
    db, q, raw = _ann_runs(config)
    rows = [[r["delta"], r["M"], r["status"],
             *(f"{r[m][k]:.3f}" for m in ("numax", "pca", "gaussian") for k in (ks[0], ks[-1]))] for r in raw]
    verdict, agreement = _fig9_verdict(raw, ks)
    fig, axes = plt.subplots(1, len(raw), figsize=(4 * len(raw), 3.5), squeeze=False)
    for ax, r in zip(axes[0], raw, strict=True):
        for name, style in (("numax", "ko-"), ("pca", "bs-"), ("gaussian", "r^-")):
            ax.plot(ks, [r[name][k] for k in ks], style, label=name)
        ax.set(xscale="log", xlabel="k", ylabel="fraction of true k-NN kept", ylim=(0, 1), title=f"M = {r['M']}")
        ax.legend(fontsize=7)
    _save(fig, png)
    header = ["δ", "M", "status", *(f"{m} k={k}" for m in ("NuMax", "PCA", "Gaussian") for k in (ks[0], ks[-1]))]
    return Outcome(
        published="Curves only: for M > 45 NuMax-CG keeps the largest fraction of the true k-NN for every k, "
                  "ahead of PCA and Gaussian projections by a significant margin.",
        ours=(f"{len(db)} database images, {len(q)} queries (MNIST 20×20). Fraction of true k-NN kept "
              f"(k = {ks[0]} and {ks[-1]}; all k in the JSON and the figure):\n\n" + _md_table(header, rows)),
        rows=raw, verdict=verdict, agreement=agreement)


def fig9_spread(config: dict, png: Path) -> Outcome:
    """Fig. 9, the reason test — is k-NN retention set by the spread of the distortion on neighbour secants?

    Paper
    -----
    Fig. 9 (LabelMe GIST) finds NuMax-CG keeping the most true k-NN for M > 45. Our MNIST run finds
    PCA keeping more at every M. The reason proposed: NuMax bounds the worst-case distortion over
    all pairs by δ, but a query's neighbour ranking is unchanged by any common scale of its
    neighbour secants and is reordered only by the *spread* of their squared-norm ratios, which
    NuMax leaves anywhere within [1 − δ, 1 + δ] and PCA may hold tighter. The test: per map,
    the mean per-query coefficient of variation of the ratios
    on the true-neighbour secants; the reason holds if, at every M, the map with the smaller
    spread keeps more neighbours.

    Departures
    ----------
    - Fig. 9's set-up at a reduced size (``n_database``, ``n_queries``) so that the test runs in
      minutes; the neighbour secants are those to each query's ``max(ks)`` true neighbours.
    """
    ks = config["ks"]
    _, _, raw = _ann_runs(config, _neighbour_spread)
    k = ks[len(ks) // 2]
    agree = []
    for r in raw:
        kept_order = sorted(("numax", "pca", "gaussian"), key=lambda m: -r[m][k])
        spread_order = sorted(("numax", "pca", "gaussian"), key=lambda m: r[f"{m}_measure"])
        agree.append(kept_order == spread_order)
    numax_wins = all(r["numax"][k] >= max(r["pca"][k], r["gaussian"][k]) for r in raw)
    verdict = "reproduced in trend" if numax_wins else "differs"
    agreement = ((f"NuMax-CG keeps the most true {k}-NN at every M" if numax_wins else
                  f"NuMax-CG does not keep the most true {k}-NN at every M")
                 + f". The neighbour-secant spread orders the three maps exactly as their kept fraction at "
                 f"{sum(agree)} of {len(agree)} M ("
                 + "; ".join(f"M {r['M']}: spread NuMax {r['numax_measure']:.3f}, PCA {r['pca_measure']:.3f}, "
                             f"Gaussian {r['gaussian_measure']:.3f}" for r in raw) + "), so the reason "
                 + ("holds: the spread on neighbour secants, not δ, decides k-NN retention"
                    if all(agree) else "does not explain every M") + ".")
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for name, style in (("numax", "ko"), ("pca", "bs"), ("gaussian", "r^")):
        ax.plot([r[f"{name}_measure"] for r in raw], [r[name][k] for r in raw], style, label=name)
    ax.set(xlabel="spread of ‖Ψv‖²/‖v‖² on neighbour secants (CV)", ylabel=f"fraction of true {k}-NN kept")
    ax.legend(fontsize=7)
    _save(fig, png)
    rows = [[r["delta"], r["M"], r["status"], *(f"{r[m][k]:.3f} / {r[f'{m}_measure']:.3f}"
                                              for m in ("numax", "pca", "gaussian"))] for r in raw]
    return Outcome(
        published="Fig. 9 (LabelMe): NuMax-CG best for M > 45, every k. No spread is published; this is our test.",
        ours=(f"MNIST 20×20, {config['n_database']} database images, {config['n_queries']} queries. Fraction of "
              f"true {k}-NN kept / spread (coefficient of variation) on the true-{max(ks)}-NN secants:\n\n"
              + _md_table(["δ", "M", "status", "NuMax", "PCA", "Gaussian"], rows)),
        rows=raw, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 10


def _blob_images(image_size: int, sigma: float, centres: np.ndarray) -> np.ndarray:
    """Blobs of :func:`~sdpembed.datasets.translating_gaussian_blob` at arbitrary (sub-pixel) centres."""
    grid = np.arange(image_size, dtype=float)
    rr, cc = np.meshgrid(grid, grid, indexing="ij")
    d2 = (rr.ravel()[None, :] - centres[:, :1]) ** 2 + (cc.ravel()[None, :] - centres[:, 1:]) ** 2
    return np.exp(-d2 / (2.0 * float(sigma) ** 2))


@functools.cache
def _blob_map(image_size: int, sigma: float, delta: float, stride: int, seed: int) -> dict:
    """NuMax-CG on the blobs centred on every ``stride``-th row and column (the paper's grid: stride 2)."""
    images, centres = translating_gaussian_blob(image_size, sigma, return_centers=True)
    train = (centres[:, 0] % stride == 0) & (centres[:, 1] % stride == 0)
    Psi, result = _numax_map(delta, X=images[train], seed=seed)
    return {"Psi": Psi, "status": result.status, "relative_gap": result.relative_gap, "time_s": result.wall_time,
            "n_train": int(train.sum())}


def _half_pixel_secants(image_size: int, sigma: float) -> SecantSet:
    """All pairwise secants of the blobs centred half-way between pixels: on no training grid of any stride."""
    steps = np.arange(image_size - 1) + 0.5
    centres = np.stack(np.meshgrid(steps, steps, indexing="ij"), axis=-1).reshape(-1, 2)
    return SecantSet(X=_blob_images(image_size, sigma, centres))


def fig10(config: dict, png: Path) -> Outcome:
    """Fig. 10 — translating Gaussian blob: (a) M against δ_learn, (b) δ_test on held-out secants.

    Paper
    -----
    Images of a Gaussian blob of standard deviation 6 pixels translating over 32×32 images (the
    text also says "N = 32×32 = 256", which is inconsistent). Training: the blobs whose centre
    is on an even row and column; test: all the others. NuMax-CG at δ_learn gives Ψ; (a) the M
    NuMax and random matrices need to reach δ_learn on the training secants; (b) δ_test, the
    worst-case distortion over all pairwise test secants. Published: NuMax needs significantly
    fewer measurements; random matrices have δ_test ≈ δ_learn, NuMax δ_test "marginally
    greater" than δ_learn.

    Departures
    ----------
    - The random matrix's M for a δ_learn is found by bisection on M (a random map's δ is not
      monotone in M, so it is an estimate), one seed, entries N(0, 1/M).
    - Added, to test the reason for an excess δ_test − δ_learn: the grid-refinement study. NuMax
      meets δ_learn only on the training secants, and the test blobs lie between training blobs;
      if the coarseness of the training grid (its spacing against the blob's width σ) is the
      reason, the excess on unseen secants must shrink as the grid is refined. At one δ
      (``refine_delta``), NuMax is trained on the blobs centred on every s-th row and column for
      s in ``strides`` (s = 2 is the paper's grid, s = 1 every pixel), and δ is measured on the
      secants of the blobs centred half-way between pixels (sub-pixel translations, on no grid).
    """
    size, sigma, seed = config["image_size"], config["sigma"], config["seed"]
    images, centers = translating_gaussian_blob(size, sigma, return_centers=True)
    train = (centers[:, 0] % 2 == 0) & (centers[:, 1] % 2 == 0)
    Xtr, Xte = images[train], images[~train]
    test = SecantSet(X=Xte)
    gaussian = _gaussian_maps(images.shape[1], seed)
    raw = []
    for delta in config["deltas"]:
        fit = _blob_map(size, sigma, delta, 2, seed)
        Psi = fit["Psi"]
        M_random = dimension_by_bisection(gaussian, Xtr, delta)
        row = {"delta_learn": delta, "numax_M": int(Psi.shape[0]), "status": fit["status"],
               "relative_gap": fit["relative_gap"], "time_s": fit["time_s"],
               "numax_delta_test": test.isometry_constant(Psi), "random_M": M_random,
               "random_delta_test": None if M_random is None else test.isometry_constant(gaussian(M_random))}
        raw.append(row)
        print(f"  δ_learn {delta}: NuMax M {row['numax_M']} δ_test {row['numax_delta_test']:.3f}; random M "
              f"{M_random} δ_test {row['random_delta_test']}", flush=True)
    half = _half_pixel_secants(size, sigma)
    refine = []
    for stride in config["strides"]:
        fit = _blob_map(size, sigma, config["refine_delta"], stride, seed)
        refine.append({"stride": stride, "n_train": fit["n_train"], "M": int(fit["Psi"].shape[0]),
                       "status": fit["status"], "time_s": fit["time_s"],
                       "delta_half_pixel": half.isometry_constant(fit["Psi"])})
        print(f"  stride {stride}: {fit['n_train']} blobs, M {refine[-1]['M']}, δ on half-pixel secants "
              f"{refine[-1]['delta_half_pixel']:.3f}", flush=True)
    rows = [[r["delta_learn"], r["numax_M"], r["status"], f"{r['numax_delta_test']:.3f}", _fmt(r["random_M"], "d"),
             _fmt(r["random_delta_test"], ".3f")] for r in raw]
    fewer = all(r["random_M"] is None or r["numax_M"] < r["random_M"] for r in raw)
    excess = [r["numax_delta_test"] - r["delta_learn"] for r in raw]
    random_excess = [r["random_delta_test"] - r["delta_learn"] for r in raw if r["random_delta_test"] is not None]
    marginal = all(-1e-6 <= e <= max(0.1, r["delta_learn"]) for e, r in zip(excess, raw, strict=True))
    verdict = "reproduced in trend" if fewer and marginal else "differs"
    by_stride = sorted(refine, key=lambda r: -r["stride"])              # coarse to fine
    refine_excess = [r["delta_half_pixel"] - config["refine_delta"] for r in by_stride]
    shrinks = all(b <= a + 1e-3 for a, b in zip(refine_excess, refine_excess[1:], strict=False))
    reason = (f"Grid refinement at δ_learn = {config['refine_delta']} (δ on half-pixel secants − δ_learn, stride "
              + ", ".join(f"{r['stride']}: {e:+.3f}" for r, e in zip(by_stride, refine_excess, strict=True))
              + ("): the excess shrinks as the training grid is refined, so the coarse training grid explains it"
                 if shrinks else "): the excess does not shrink as the grid is refined, so the coarse training "
                 "grid does not explain it"))
    agreement = (f"NuMax {'needs fewer' if fewer else 'does not always need fewer'} measurements than the random "
                 f"matrix; NuMax's δ_test − δ_learn ranges {min(excess):+.3f} to {max(excess):+.3f} "
                 + ("(marginally greater, as published)" if marginal else "(not marginal, unlike the paper)")
                 + (f"; the random matrix's δ_test − δ_learn ranges {min(random_excess):+.3f} to "
                    f"{max(random_excess):+.3f}" if random_excess else "") + ". " + reason + ".")
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    d = [r["delta_learn"] for r in raw]
    axes[0].plot(d, [r["numax_M"] for r in raw], "ko-", label="NuMax")
    axes[0].plot(d, [np.nan if r["random_M"] is None else r["random_M"] for r in raw], "r^-", label="Gaussian")
    axes[0].set(xlabel="δ_learn", ylabel="M", yscale="log", title="(a)")
    axes[1].plot(d, [r["numax_delta_test"] for r in raw], "ko-", label="NuMax")
    axes[1].plot(d, [np.nan if r["random_delta_test"] is None else r["random_delta_test"] for r in raw], "r^-",
                 label="Gaussian")
    axes[1].plot(d, d, "k:", label="δ_test = δ_learn")
    axes[1].set(xlabel="δ_learn", ylabel="δ_test", title="(b) held-out secants")
    axes[2].plot([r["stride"] for r in by_stride], [r["delta_half_pixel"] for r in by_stride], "ko-",
                 label="NuMax, half-pixel secants")
    axes[2].axhline(config["refine_delta"], color="k", ls=":", label="δ_learn")
    axes[2].set(xlabel="training grid stride (pixels)", ylabel="δ on unseen secants", xscale="log", xticks=config[
        "strides"], xticklabels=[str(s) for s in config["strides"]], title="grid refinement (added)")
    for ax in axes:
        ax.legend(fontsize=7)
    _save(fig, png)
    refine_rows = [[r["stride"], r["n_train"], r["M"], r["status"], f"{r['delta_half_pixel']:.3f}",
                    f"{e:+.3f}"] for r, e in zip(by_stride, refine_excess, strict=True)]
    return Outcome(
        published="Curves only: NuMax needs significantly fewer measurements than random matrices for each "
                  "δ_learn; random δ_test ≈ δ_learn; NuMax δ_test marginally greater than δ_learn.",
        ours=(f"{size}×{size} images, σ = {sigma}: {len(Xtr)} training blobs ({len(Xtr) * (len(Xtr) - 1) // 2} "
              f"secants), {len(Xte)} test blobs ({test.n_secants} held-out secants).\n\n"
              + _md_table(["δ_learn", "NuMax M", "status", "NuMax δ_test", "Gaussian M", "Gaussian δ_test"], rows)
              + f"\n\nGrid refinement (added) at δ_learn = {config['refine_delta']}, δ measured on the "
              f"{half.n_secants} secants of the {size - 1}² half-pixel blobs:\n\n"
              + _md_table(["stride", "training blobs", "M", "status", "δ half-pixel", "excess"], refine_rows)),
        rows={"paper": raw, "refinement": refine}, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 11


def fig11(config: dict, png: Path) -> Outcome:
    """Fig. 11 — compressive sensing of the translating blob, recovered by Manifold Iterative Pursuit.

    Paper
    -----
    The set-up of Fig. 10 (32×32 images of a Gaussian blob of σ = 6 pixels; NuMax-CG trained on
    the blobs centred on even rows and columns). Test blobs (all the others) are measured by
    NuMax's Ψ and by Gaussian matrices of the same M, with measurement noise at several SNRs,
    and recovered by Manifold Iterative Pursuit (Shah and Chandrasekaran, 2011). Published
    (curves only): NuMax's recovered-signal MSE is below the Gaussian matrices' at every M and
    every SNR.

    Departures
    ----------
    - The paper gives neither its SNRs nor its M grid nor the MIP projection. M is NuMax's rank
      at each δ of ``deltas``; the noise is white Gaussian with ‖Φx‖²/E‖n‖² = 10^(SNR/10) for
      each signal and matrix; MIP (``sdpembed.linear.manifold_iterative_pursuit``, step 1, at most
      ``max_iter`` iterations) projects onto the manifold sampled at every integer centre (the
      training and the test blobs), so a recovery is either the true blob or a wrong one.
    - MSE is the mean squared pixel error over ``n_signals`` test blobs (a seeded sample) with
      one noise draw each, the same draws for both matrices; one Gaussian matrix per M (nested
      rows of one seeded matrix).
    """
    size, sigma, seed = config["image_size"], config["sigma"], config["seed"]
    images, centers = translating_gaussian_blob(size, sigma, return_centers=True)
    test = np.flatnonzero((centers[:, 0] % 2 == 1) | (centers[:, 1] % 2 == 1))
    rng = np.random.default_rng(seed)
    signals = images[np.sort(rng.choice(test, size=min(config["n_signals"], len(test)), replace=False))]
    manifold = SampledManifold(images)
    gaussian = _gaussian_maps(images.shape[1], seed)
    raw = []
    for delta in config["deltas"]:
        fit = _blob_map(size, sigma, delta, 2, seed)
        M = int(fit["Psi"].shape[0])
        noise = rng.standard_normal((len(signals), M))                  # shared by both matrices
        row = {"delta": delta, "M": M, "status": fit["status"]}
        for name, Phi in (("numax", fit["Psi"]), ("gaussian", gaussian(M))):
            clean = signals @ Phi.T
            for snr in config["snrs_db"]:
                scale = np.linalg.norm(clean, axis=1, keepdims=True) / np.sqrt(M * 10.0 ** (snr / 10.0))
                X, _ = manifold_iterative_pursuit(Phi, clean + scale * noise, manifold, max_iter=config["max_iter"])
                row[f"{name}_{snr}"] = float(np.mean((X - signals) ** 2))
        raw.append(row)
        print(f"  δ {delta}: M {M} " + " ".join(f"SNR {s}: NuMax {row[f'numax_{s}']:.2e} Gaussian "
                                               f"{row[f'gaussian_{s}']:.2e}" for s in config["snrs_db"]), flush=True)
    cells = [(r["M"], s, r[f"numax_{s}"], r[f"gaussian_{s}"]) for r in raw for s in config["snrs_db"]]
    not_worse = all(n <= g for _, _, n, g in cells)
    better = sum(n < g for _, _, n, g in cells)
    ties = sum(n == g for _, _, n, g in cells)
    verdict = "reproduced in trend" if not_worse and better > 0 else "differs"
    agreement = (f"NuMax's MSE is below the Gaussian matrix's in {better} of {len(cells)} (M, SNR) cells, equal in "
                 f"{ties}" + (" (both recover every signal exactly)" if ties else "")
                 + (", never above" if not_worse else ", above in " + ", ".join(
                     f"M = {M} at {s} dB" for M, s, n, g in cells if n > g))
                 + " (published: below at every M and SNR).")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for s, colour in zip(config["snrs_db"], plt.cm.viridis(np.linspace(0, 0.9, len(config["snrs_db"]))),
                         strict=True):
        axes[0].plot([r["M"] for r in raw], [r[f"numax_{s}"] for r in raw], "o-", color=colour, label=f"NuMax {s} dB")
        axes[0].plot([r["M"] for r in raw], [r[f"gaussian_{s}"] for r in raw], "^--", color=colour,
                     label=f"Gaussian {s} dB")
    axes[0].set(xlabel="M", ylabel="recovered-signal MSE", title="MSE against M")
    axes[0].set_yscale("symlog", linthresh=1e-4)
    axes[0].legend(fontsize=6)
    for r, colour in zip(raw, plt.cm.plasma(np.linspace(0, 0.9, len(raw))), strict=True):
        axes[1].plot(config["snrs_db"], [r[f"numax_{s}"] for s in config["snrs_db"]], "o-", color=colour,
                     label=f"NuMax M = {r['M']}")
        axes[1].plot(config["snrs_db"], [r[f"gaussian_{s}"] for s in config["snrs_db"]], "^--", color=colour,
                     label=f"Gaussian M = {r['M']}")
    axes[1].set(xlabel="measurement SNR (dB)", title="MSE against SNR")
    axes[1].set_yscale("symlog", linthresh=1e-4)
    axes[1].legend(fontsize=6)
    _save(fig, png)
    header = ["δ", "M", "status", *(f"{m} {s} dB" for s in config["snrs_db"] for m in ("NuMax", "Gaussian"))]
    rows = [[r["delta"], r["M"], r["status"], *(f"{r[f'{m}_{s}']:.2e}" for s in config["snrs_db"]
                                                for m in ("numax", "gaussian"))] for r in raw]
    return Outcome(
        published="Curves only: NuMax's recovered-signal MSE is below random Gaussian matrices' for all M and SNR.",
        ours=(f"{size}×{size} images, σ = {sigma}; {len(signals)} test blobs recovered by MIP from M noisy "
              "measurements; recovered-signal MSE per pixel:\n\n" + _md_table(header, rows)),
        rows=raw, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 12


def _gmlc_error(Psi: np.ndarray, X: np.ndarray, y: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
                whiten: bool) -> float:
    """Error (%) of the generalised maximum-likelihood classifier from the measurements Ψx.

    Each class is the set of its training translates; with pixel noise n ~ N(0, σ²I) the
    measurements Ψ(x + n) have covariance σ²ΨΨᵀ, so the GMLC picks the class of the translate
    nearest in the Mahalanobis metric (ΨΨᵀ)⁻¹ — 1-NN after whitening. ``whiten=False`` gives
    plain 1-NN on Ψx.
    """
    if whiten:
        w, U = np.linalg.eigh(Psi @ Psi.T)
        keep = w > 1e-10 * w.max()
        Psi = (U[:, keep] / np.sqrt(w[keep])).T @ Psi
    return knn_error(Psi, X, y, X_test, y_test)


def fig12(config: dict, png: Path) -> Outcome:
    """Fig. 12 — disk vs square from M measurements: NuMax (Ψ_inter), PCA and random, GMLC.

    Paper
    -----
    Binary images of a translating disk and a translating square (Fig. 12(a)); S = 2,000
    inter-class secants give Ψ_inter by NuMax; PCA on the inter-class secants and random
    projections at the same M; a test image is classified from its M measurements by the
    generalised maximum-likelihood classifier (GMLC) of Davenport et al., the class of the
    nearest training translate. Published (Fig. 12(b), curves only): NuMax has the lowest
    probability of error at every M, well below PCA and random projections.

    Departures
    ----------
    - The image size (16×16), shape size (6 pixels: 100 disks, 121 squares) and the noise are
      not stated in the paper. Test signals are noisy copies of every translate with Gaussian
      pixel noise of standard deviation σ; the run sweeps σ, which tests the explanation given
      for our earlier opposite result (pixel noise favouring PCA). Without noise every test
      signal is a training translate and every method scores 0%.
    - GMLC for pixel noise whitens the measurements by (ΨΨᵀ)^(−1/2) (their noise covariance); the
      table also gives plain 1-NN on Ψx (our earlier analogue, which used NuMax-Class and 1-NN).
    """
    X, y = disks_and_squares(config["image_size"], config["shape_size"])
    rng = np.random.default_rng(config["seed"])
    disks, squares = np.flatnonzero(y == 0), np.flatnonzero(y == 1)
    inter = np.stack(np.meshgrid(disks, squares, indexing="ij"), axis=-1).reshape(-1, 2)
    chosen = inter[np.sort(rng.choice(len(inter), size=min(config["n_secants"], len(inter)), replace=False))]
    V = X[chosen[:, 0]] - X[chosen[:, 1]]
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    gaussian = _gaussian_maps(X.shape[1], config["seed"])
    tests = {}
    for sigma in config["noises"]:
        idx = np.tile(np.arange(len(y)), config["copies"])
        tests[sigma] = (X[idx] + sigma * rng.standard_normal((len(idx), X.shape[1])), y[idx])
    raw = []
    for delta in config["deltas"]:
        Psi, result = _numax_map(delta, secants=V, seed=config["seed"])
        M = Psi.shape[0]
        maps = {"numax": Psi, "pca": pca_projection(V, M, center=False), "gaussian": gaussian(M)}
        row = {"delta": delta, "M": int(M), "status": result.status, "relative_gap": result.relative_gap}
        for sigma, (Xt, yt) in tests.items():
            for name, P in maps.items():
                row[f"{name}_gmlc_{sigma}"] = _gmlc_error(P, X, y, Xt, yt, whiten=True)
                row[f"{name}_1nn_{sigma}"] = _gmlc_error(P, X, y, Xt, yt, whiten=False)
        raw.append(row)
        print(f"  δ {delta}: M {M} {result.status}", flush=True)
    header = ["δ", "M", "σ", "NuMax GMLC", "PCA GMLC", "Gaussian GMLC", "NuMax 1-NN", "PCA 1-NN", "Gaussian 1-NN"]
    rows = [[r["delta"], r["M"], s, *(f"{r[f'{m}_{c}_{s}']:.1f}%" for c in ("gmlc", "1nn")
                                      for m in ("numax", "pca", "gaussian"))] for s in config["noises"] for r in raw]
    best = {s: all(r[f"numax_gmlc_{s}"] <= min(r[f"pca_gmlc_{s}"], r[f"gaussian_gmlc_{s}"]) for r in raw)
            for s in config["noises"]}
    verdict = "reproduced in trend" if all(best.values()) else "differs"
    won = [str(s) for s, b in best.items() if b]
    lost = [str(s) for s, b in best.items() if not b]
    agreement = ("With GMLC, NuMax (Ψ_inter) has the lowest error at every M "
                 + (f"for pixel noise σ = {', '.join(won)}" if won else "at none of the noise levels run")
                 + (f", not for σ = {', '.join(lost)}" if won and lost else "")
                 + ". The tested reasons (the noise model, the secant sample) are in the next section, the reason "
                   "test.")
    fig, axes = plt.subplots(1, len(config["noises"]), figsize=(4 * len(config["noises"]), 3.5), squeeze=False)
    for ax, s in zip(axes[0], config["noises"], strict=True):
        for name, style in (("numax", "ko-"), ("pca", "bs-"), ("gaussian", "r^-")):
            ax.plot([r["M"] for r in raw], [r[f"{name}_gmlc_{s}"] for r in raw], style, label=f"{name} GMLC")
        ax.set(xlabel="M", ylabel="error (%)", title=f"pixel noise σ = {s}")
        ax.legend(fontsize=7)
    _save(fig, png)
    return Outcome(
        published="Curves only: NuMax's probability of error is below PCA's and random projections' at every M.",
        ours=(f"{len(y)} training translates, {len(V)} inter-class secants, {config['copies']} noisy copies of each "
              "translate per σ as test signals.\n\n" + _md_table(header, rows)),
        rows=raw, verdict=verdict, agreement=agreement)


def _paired_worse(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean difference (percentage points) of two methods' 0/1 losses on the same test signals, and its
    standard error (the paired differences' standard deviation over √n)."""
    d = 100.0 * (a.astype(float) - b.astype(float))
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else 0.0


def _nn_losses(Y: np.ndarray, y: np.ndarray, Y_test: np.ndarray, y_test: np.ndarray) -> np.ndarray:
    """0/1 loss of 1-NN in the measurement domain for every test signal (GMLC for white measurement noise)."""
    nearest = NearestNeighbors(n_neighbors=1).fit(Y).kneighbors(Y_test, return_distance=False)[:, 0]
    return y[nearest] != y_test


def _learn_on(secants: dict[str, np.ndarray], seed: int, item: tuple[float, str]) -> tuple[np.ndarray, str, float]:
    """NuMax's Ψ at δ on one named set of unit secants, its status and relative gap (one item of a parallel map)."""
    delta, name = item
    Psi, result = _numax_map(delta, secants=secants[name], seed=seed)
    return Psi, str(result.status), result.relative_gap


def fig12_reasons(config: dict, png: Path) -> Outcome:
    """Fig. 12 — the reason test: why PCA beats NuMax (Ψ_inter) at the larger M.

    Paper
    -----
    As Fig. 12: NuMax's Ψ_inter from S = 2,000 inter-class secants, PCA on those secants and
    random projections; GMLC of Davenport et al. on M measurements of a test image; NuMax has
    the lowest error at every M. Our Fig. 12 run finds PCA at or below NuMax at M ≥ 17 at every
    pixel-noise level, under GMLC and 1-NN alike, with Ψ_inter (so neither the classifier nor
    NuMax-Class against Ψ_inter is the reason).

    Departures
    ----------
    - Hypotheses, fixed before the run, each tested on the same disks and squares as Fig. 12:
      (H1) *the noise model*. Our Fig. 12 adds the noise to the pixels, so the GMLC whitens the
      measurements and its error depends on Ψ only through its row space — where PCA's subspace,
      which keeps the most secant energy, is the natural winner and NuMax's near-isometry plays
      no part. In Davenport et al.'s smashed filter the GMLC is nearest neighbour in the
      measurement domain, the GMLC for white noise on the measurements, y = Ψx + n with
      n ~ N(0, σ²I_M); there NuMax's lower bound ‖Ψv‖² ≥ (1 − δ)‖v‖² on the inter-class secants
      keeps the classes apart while PCA, contractive on every secant, shrinks the close pairs.
      PCA's rows are orthonormal, so its error is the same under both models.
      (H2) *the secant sample*. Ψ_inter sees 2,000 of the 100 × 121 = 12,100 inter-class
      secants; the closest pairs, which decide the errors, may be missing. NuMax is re-learned
      on all inter-class secants (column generation) under pixel noise. (H1 + H2): both changes.
    - Decision rule, per hypothesis: a cell (M, σ) counts against NuMax when its error exceeds
      PCA's or the Gaussian map's by more than two paired standard errors (the same noisy test
      signals for every method; ``copies`` noisy copies of each translate per σ). The hypothesis
      explains the disagreement when no cell counts against NuMax, and explains it in part when
      fewer cells do than under Fig. 12's own set-up (pixel noise, 2,000 secants), run here on
      the same test signals (and finds nothing to explain when that set-up has no such cell).
    - As Fig. 12: 16×16 images, shapes of 6 pixels, σ swept, the Gaussian map with i.i.d.
      N(0, 1/M) entries; δ at 0.1 and 0.05 (Fig. 12's M of 17 and 21, where PCA leads) and 0.3
      (M = 11, where NuMax leads at σ = 0.5). The NuMax solves run in ``workers`` processes.
    """
    X, y = disks_and_squares(config["image_size"], config["shape_size"])
    rng = np.random.default_rng(config["seed"])
    disks, squares = np.flatnonzero(y == 0), np.flatnonzero(y == 1)
    inter = np.stack(np.meshgrid(disks, squares, indexing="ij"), axis=-1).reshape(-1, 2)
    chosen = inter[np.sort(rng.choice(len(inter), size=min(config["n_secants"], len(inter)), replace=False))]

    def unit(pairs: np.ndarray) -> np.ndarray:
        V = X[pairs[:, 0]] - X[pairs[:, 1]]
        return V / np.linalg.norm(V, axis=1, keepdims=True)

    V_sample, V_all = unit(chosen), unit(inter)
    gaussian = _gaussian_maps(X.shape[1], config["seed"])
    idx = np.tile(np.arange(len(y)), config["copies"])
    y_test = y[idx]
    pixel = {s: X[idx] + s * rng.standard_normal((len(idx), X.shape[1])) for s in config["noises"]}
    measurement = rng.standard_normal((len(idx), X.shape[1]))        # its first M columns: the same noise at every M
    S = len(V_sample)
    setups = {"fig12": f"pixel noise, {S} secants (Fig. 12)", "h1": f"(H1) measurement noise, {S} secants",
              "h2": "(H2) pixel noise, all inter-class secants", "h12": "(H1 + H2) measurement noise, all secants"}
    items = [(delta, name) for delta in config["deltas"] for name in ("sample", "all")]
    solved = dict(zip(items, parallel_map(functools.partial(_learn_on, {"sample": V_sample, "all": V_all},
                                                            config["seed"]), items, config["workers"]), strict=True))
    raw = []
    for delta in config["deltas"]:
        learned = {name: solved[(delta, name)] for name in ("sample", "all")}
        for setup in setups:
            Psi, status, gap = learned["all" if setup in ("h2", "h12") else "sample"]
            M = Psi.shape[0]
            V = V_all if setup in ("h2", "h12") else V_sample
            maps = {"numax": Psi, "pca": pca_projection(V, M, center=False), "gaussian": gaussian(M)}
            row = {"delta": delta, "setup": setup, "M": int(M), "status": status, "relative_gap": gap}
            for sigma in config["noises"]:
                losses = {}
                for name, P in maps.items():
                    if setup in ("h1", "h12"):
                        Y_test = X[idx] @ P.T + sigma * measurement[:, :M]
                        losses[name] = _nn_losses(X @ P.T, y, Y_test, y_test)
                    else:                                            # whitened: the GMLC of pixel noise
                        w, U = np.linalg.eigh(P @ P.T)
                        keep = w > 1e-10 * w.max()
                        W = (U[:, keep] / np.sqrt(w[keep])).T @ P
                        losses[name] = _nn_losses(X @ W.T, y, pixel[sigma] @ W.T, y_test)
                    row[f"{name}_{sigma}"] = 100.0 * float(losses[name].mean())
                for other in ("pca", "gaussian"):
                    diff, se = _paired_worse(losses["numax"], losses[other])
                    row[f"numax_minus_{other}_{sigma}"], row[f"se_{other}_{sigma}"] = diff, se
            raw.append(row)
        print(f"  δ {delta}: M {learned['sample'][0].shape[0]} ({S} secants, {learned['sample'][1]}), "
              f"{learned['all'][0].shape[0]} (all {len(V_all)}, {learned['all'][1]})", flush=True)

    def against(setup: str) -> list[tuple[int, float]]:
        return [(r["M"], s) for r in raw if r["setup"] == setup for s in config["noises"]
                if any(r[f"numax_minus_{o}_{s}"] > 2.0 * r[f"se_{o}_{s}"] for o in ("pca", "gaussian"))]

    base = against("fig12")
    cells = len(config["deltas"]) * len(config["noises"])
    tested = ("h1", "h2", "h12")
    findings = []
    for setup in tested:
        bad = against(setup)
        outcome = ("no disagreement to explain" if not base else "explains the disagreement" if not bad else
                   "explains it in part" if len(bad) < len(base) else "does not explain it")
        findings.append(f"{setups[setup]}: NuMax worse than PCA or the Gaussian map (by > 2 paired SE) in "
                        f"{len(bad)} of {cells} cells (M, σ){' ' + str(bad) if bad else ''} — {outcome}")
    explained = [s for s in tested if not against(s)]
    agreement = (f"Under Fig. 12's own set-up NuMax is worse (by > 2 paired SE) in {len(base)} of {cells} cells "
                 f"(M, σ){' ' + str(base) if base else ''}. " + "; ".join(findings) + ". "
                 + ("Fig. 12's own set-up shows no significant disagreement at this size." if not base else
                    f"Tested reason: {' and '.join(setups[s] for s in explained)} — with it NuMax is never "
                    "significantly worse, as the paper finds." if explained else
                    "No tested set-up removes every cell in which NuMax is worse."))
    verdict = "reproduced in trend" if explained or not base else "differs"
    fig, axes = plt.subplots(len(setups), len(config["noises"]), figsize=(3.6 * len(config["noises"]), 8.5),
                             squeeze=False)
    for i, setup in enumerate(setups):
        rows_ = [r for r in raw if r["setup"] == setup]
        for ax, s in zip(axes[i], config["noises"], strict=True):
            for name, style in (("numax", "ko-"), ("pca", "bs-"), ("gaussian", "r^-")):
                ax.plot([r["M"] for r in rows_], [r[f"{name}_{s}"] for r in rows_], style, ms=3, label=name)
            ax.set(xlabel="M", ylabel="error (%)", title=f"{setups[setup]}, σ = {s}")
            ax.title.set_fontsize(6)
            ax.legend(fontsize=6)
    _save(fig, png)
    header = ["set-up", "δ", "M", "σ", "NuMax", "PCA", "Gaussian", "NuMax − PCA (± SE)", "NuMax − Gaussian (± SE)"]
    table = [[setups[r["setup"]], r["delta"], r["M"], s,
              *(f"{r[f'{m}_{s}']:.1f}%" for m in ("numax", "pca", "gaussian")),
              *(f"{r[f'numax_minus_{o}_{s}']:+.1f} ± {r[f'se_{o}_{s}']:.1f}" for o in ("pca", "gaussian"))]
             for r in raw for s in config["noises"]]
    return Outcome(
        published="Curves only: NuMax's probability of error is below PCA's and random projections' at every M.",
        ours=(f"{len(y)} training translates; {config['copies']} noisy copies of each per σ, the same for every "
              "method; errors (%) and NuMax's paired differences in percentage points.\n\n" + _md_table(header, table)),
        rows=raw, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 13


def _cv_knn(Psi: np.ndarray, Xf, yf, Xv, yv, Xt, yt, ks: list[int]) -> tuple[int, float, float]:
    """k chosen on the validation split; (k, validation error %, test error %) of k-NN on Ψx."""
    Yf, Yv, Yt = Xf @ Psi.T, Xv @ Psi.T, Xt @ Psi.T
    errors = {k: 100.0 * (1.0 - KNeighborsClassifier(k).fit(Yf, yf).score(Yv, yv)) for k in ks}
    k = min(errors, key=lambda key: (errors[key], key))
    return k, errors[k], 100.0 * (1.0 - KNeighborsClassifier(k).fit(Yf, yf).score(Yt, yt))


def fig13(config: dict, png: Path) -> Outcome:
    """Fig. 13 — k-NN classification after NuMax, NuMax-Class, PCA and random maps, k by cross-validation.

    Paper
    -----
    Isolet (UCI): 617 features, 26 classes (spoken letters), 6,238 training and 1,559 test
    points. NuMax, NuMax-Class, PCA and Gaussian maps at a range of M; k-NN with k chosen on 10%
    of the training set held out for cross-validation; (a) cross-validation and (b) test error
    against M. Published (curves only): NuMax-Class "significantly outperforms" the other linear
    maps on the whole; 6% error at M = 105.

    Departures
    ----------
    - Isolet is not available. The closest substitute we have is MNIST 20×20 (N = 400, 10
      classes; the vendored 10,000 test images): like Isolet a multi-class set of a few hundred
      features and thousands of points; scikit-learn's bundled sets are far smaller (digits: 64
      features, 1,797 points). Values are not comparable; orderings are.
    - ``n_train`` training images (the last 10% of them the validation split), ``n_test`` test
      images, as Tables 1–2. NuMax and NuMax-Class (column generation on all pairs of the 90%)
      at ``deltas``; their ranks give M; PCA and Gaussian maps at every M so found; k ∈ ``ks``.
    """
    X, y = _mnist20()
    tr, te = _split(config["n_train"], config["n_test"], config["seed"])
    n_val = len(tr) // 10
    fit_idx, val_idx = tr[: len(tr) - n_val], tr[len(tr) - n_val:]
    Xf, yf, Xv, yv, Xt, yt = X[fit_idx], y[fit_idx], X[val_idx], y[val_idx], X[te], y[te]
    ks = config["ks"]
    learned = []
    for delta in config["deltas"]:
        for kind, instance in (("numax", NuMaxInstance(delta=delta, X=Xf)),
                               ("numax_class", NuMaxClassInstance(delta=delta, X=Xf, y=yf))):
            result = solve(instance, random_state=config["seed"])
            Psi = embedding_from_psd(result.solution)
            k, cv, test = _cv_knn(Psi, Xf, yf, Xv, yv, Xt, yt, ks)
            learned.append({"method": kind, "delta": delta, "M": int(Psi.shape[0]), "status": result.status,
                            "k": k, "cv_error": cv, "test_error": test})
            print(f"  {kind} δ {delta}: M {Psi.shape[0]} {result.status} k {k} test {test:.2f}%", flush=True)
    dims = sorted({r["M"] for r in learned})
    pca_full = pca_projection(Xf, dims[-1])
    gaussian = _gaussian_maps(X.shape[1], config["seed"])
    fixed = []
    for M in dims:
        for kind, Psi in (("pca", pca_full[:M]), ("gaussian", gaussian(M))):
            k, cv, test = _cv_knn(Psi, Xf, yf, Xv, yv, Xt, yt, ks)
            fixed.append({"method": kind, "M": M, "k": k, "cv_error": cv, "test_error": test})
    at = {(r["method"], r["M"]): r["test_error"] for r in fixed}
    cls = [r for r in learned if r["method"] == "numax_class"]
    beats = [r["test_error"] < min(at[("pca", r["M"])], at[("gaussian", r["M"])]) for r in cls]
    numax_rows = [r for r in learned if r["method"] == "numax"]
    beats_numax = [c["test_error"] < n["test_error"] for c, n in zip(cls, numax_rows, strict=True)]
    verdict = "reproduced in trend" if all(beats) and all(beats_numax) else "differs"
    agreement = (f"NuMax-Class's test error is below PCA's and the Gaussian map's at its own M for {sum(beats)} of "
                 f"{len(beats)} δ, and below NuMax's at the same δ (with a lower M) for {sum(beats_numax)} of "
                 f"{len(beats_numax)} (published: NuMax-Class best on the whole). On MNIST, not Isolet: orderings "
                 "only.")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, field, title in ((axes[0], "cv_error", "(a) validation"), (axes[1], "test_error", "(b) test")):
        for method, style in (("numax", "ko-"), ("numax_class", "gD-"), ("pca", "bs-"), ("gaussian", "r^-")):
            sel = sorted((r for r in learned + fixed if r["method"] == method), key=lambda r: r["M"])
            ax.plot([r["M"] for r in sel], [r[field] for r in sel], style, label=method)
        ax.set(xlabel="M", ylabel="k-NN error (%)", title=title)
        ax.legend(fontsize=7)
    _save(fig, png)
    table = [[r["method"], r.get("delta", "—"), r["M"], r.get("status", "—"), r["k"], f"{r['cv_error']:.2f}",
              f"{r['test_error']:.2f}"] for r in sorted(learned + fixed, key=lambda r: (r["M"], r["method"]))]
    return Outcome(
        published="Curves only (Isolet): NuMax-Class the lowest k-NN error of the linear maps on the whole; 6% at "
                  "M = 105.",
        ours=(f"MNIST 20×20 for Isolet: {len(fit_idx)} training, {len(val_idx)} validation, {len(te)} test images; "
              "errors %.\n\n" + _md_table(["method", "δ", "M", "status", "k", "validation", "test"], table)),
        rows={"learned": learned, "fixed": fixed}, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Tables 1–2


@functools.lru_cache(maxsize=1)
def _mnist20() -> tuple[np.ndarray, np.ndarray]:
    return load_mnist(size=20)


def _split(n_train: int, n_test: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Nested training prefixes of one seeded permutation, and the same test set (its last n_test) for all."""
    order = np.random.default_rng(seed).permutation(len(_mnist20()[1]))
    if n_train + n_test > len(order):
        raise ValueError(f"n_train + n_test must be <= {len(order)}, got {n_train} + {n_test}")
    return order[:n_train], order[len(order) - n_test:]


@functools.cache
def _mnist_fit(kind: str, n_train: int, n_test: int, delta: float, seed: int) -> dict:
    """NuMax or NuMax-Class on all training pairs (column generation), and 1-NN errors at its rank."""
    X, y = _mnist20()
    tr, te = _split(n_train, n_test, seed)
    instance = (NuMaxInstance(delta=delta, X=X[tr]) if kind == "numax"
                else NuMaxClassInstance(delta=delta, X=X[tr], y=y[tr]))
    start = time.perf_counter()
    result = solve(instance, random_state=seed)
    Psi = embedding_from_psd(result.solution)
    M = Psi.shape[0]
    out = {"kind": kind, "n_train": n_train, "delta": delta, "status": result.status, "rank": int(M),
           "relative_gap": result.relative_gap, "time_s": time.perf_counter() - start,
           "active_secants": active_secants(result, X[tr], instance),
           "error": knn_error(Psi, X[tr], y[tr], X[te], y[te]),
           "pca_error": knn_error(pca_projection(X[tr], M), X[tr], y[tr], X[te], y[te]),
           "gaussian_error": knn_error(gaussian_projection(M, X.shape[1], random_state=seed), X[tr], y[tr], X[te],
                                       y[te])}
    print(f"  {kind} n_train {n_train} δ {delta}: {out['status']} M {M} error {out['error']:.2f}% (PCA "
          f"{out['pca_error']:.2f}%, Gaussian {out['gaussian_error']:.2f}%) {out['time_s']:.0f} s", flush=True)
    return out


#: NuMax Table 1: δ → (rank, NuMax, Gaussian, PCA error %), 60,000 training images.
PUBLISHED_TABLE1 = {0.4: (72, 2.99, 5.79, 4.40), 0.25: (97, 3.11, 4.51, 4.38), 0.1: (167, 3.31, 3.88, 4.41)}
#: NuMax Table 2: δ → {method: (rank, error %, hours, active secants)}.
PUBLISHED_TABLE2 = {0.4: {"numax": (72, 2.99, 2.35, 6950), "numax_class": (52, 2.68, 1.90, 4068)},
                    0.25: {"numax": (97, 3.11, 4.85, 12121), "numax_class": (69, 2.72, 5.57, 6746)},
                    0.1: {"numax": (167, 3.31, 10.64, 29702), "numax_class": (116, 3.09, 9.73, 17323)}}


def table1(config: dict, png: Path) -> Outcome:
    """Table 1 — 1-NN error on MNIST after NuMax, Gaussian and PCA maps of NuMax's rank.

    Paper
    -----
    MNIST 20×20 (N = 400), the 60,000 training images (1.8·10⁹ secants), NuMax-CG at δ = 0.4,
    0.25, 0.1; M = rank of the NuMax solution; PCA and Gaussian maps of the same M; nearest
    neighbour classification of the 10,000 test images. Published: NuMax 2.99 / 3.11 / 3.31%,
    well below Gaussian and PCA (≈ 4.4%).

    Departures
    ----------
    - Only the 10,000 test images are vendored: a seeded permutation of them gives ``n_train``
      training images and ``n_test`` disjoint test images (the same test images as Table 2 and
      the training-size study, which decides whether the training size explains a difference).
    - PCA is fitted on the (centred) training images; the paper does not say on what.
    """
    rows, raw = [], []
    for delta in config["deltas"]:
        r = _mnist_fit("numax", config["n_train"], config["n_test"], delta, config["seed"])
        p = PUBLISHED_TABLE1.get(delta)
        raw.append({**r, "published": p})
        rows.append([delta, r["rank"], r["status"], f"{r['error']:.2f}", f"{r['gaussian_error']:.2f}",
                     f"{r['pca_error']:.2f}", "—" if p is None else f"{p[0]} / {p[1]} / {p[2]} / {p[3]}"])
    numax_best = all(r["error"] < min(r["pca_error"], r["gaussian_error"]) for r in raw)
    verdict = "reproduced in trend" if numax_best else "differs"
    agreement = (f"With {config['n_train']} training images NuMax's error is "
                 + ("below PCA's and Gaussian's at every δ, as published" if numax_best else
                    "not below PCA's at every δ (" + ", ".join(
                        f"δ {r['delta']}: NuMax {r['error']:.2f}% vs PCA {r['pca_error']:.2f}%" for r in raw)
                    + "), unlike the paper; the stated reason, 60,000 training images against our few, is "
                    "tested by the training-size study below")
                 + ". Ranks and errors are not comparable in value to 60,000 training images.")
    _bar_plot(png, raw, ("error", "pca_error", "gaussian_error"), ("NuMax", "PCA", "Gaussian"),
              f"MNIST 20×20, {config['n_train']} training images")
    return Outcome(
        published=_md_table(["δ", "M", "NuMax", "Gaussian", "PCA"],
                            [[d, *v] for d, v in PUBLISHED_TABLE1.items()]) + "\n\n(60,000 training images; errors %)",
        ours=(f"{config['n_train']} training, {config['n_test']} test images; errors %.\n\n"
              + _md_table(["δ", "M", "status", "NuMax", "Gaussian", "PCA", "published M / NuMax / Gaussian / PCA"],
                          rows)),
        rows=raw, verdict=verdict, agreement=agreement)


def _bar_plot(png: Path, raw: list[dict], fields: tuple, labels: tuple, title: str) -> None:
    fig, ax = plt.subplots(figsize=(6, 3.5))
    x = np.arange(len(raw))
    for i, (f, lab) in enumerate(zip(fields, labels, strict=True)):
        ax.bar(x + (i - 1) * 0.27, [r[f] for r in raw], 0.27, label=lab)
    ax.set_xticks(x, [f"δ={r['delta']}\nM={r['rank']}" for r in raw])
    ax.set(ylabel="1-NN test error (%)", title=title)
    ax.legend(fontsize=7)
    _save(fig, png)


def table2(config: dict, png: Path) -> Outcome:
    """Table 2 — NuMax against NuMax-Class on MNIST: rank, 1-NN error, time, active secants.

    Paper
    -----
    As Table 1 (MNIST 20×20, 60,000 training images), NuMax-CG and NuMax-Class-CG (Algorithm 3
    with column generation) at δ = 0.4, 0.25, 0.1; rank, nearest-neighbour error, MATLAB time in
    hours and active secants at the solution. Published: NuMax-Class has the lower rank and the
    lower error at every δ.

    Departures
    ----------
    - As Table 1: ``n_train`` training and ``n_test`` test images from the 10,000 vendored test
      images; time is our wall time in seconds (Python, one BLAS thread), not MATLAB hours.
    - Active secants: working pairs within 1e-4 of a bound at the certified solution.
    """
    raw = []
    for delta in config["deltas"]:
        for kind in ("numax", "numax_class"):
            r = _mnist_fit(kind, config["n_train"], config["n_test"], delta, config["seed"])
            raw.append({**r, "published": PUBLISHED_TABLE2.get(delta, {}).get(kind)})
    rows = [[r["delta"], r["kind"], r["status"], r["rank"], f"{r['error']:.2f}", f"{r['pca_error']:.2f}",
             f"{r['time_s']:.0f} s", r["active_secants"],
             "—" if r["published"] is None else " / ".join(str(v) for v in r["published"])] for r in raw]
    pairs = [(a, b) for a, b in zip(raw[::2], raw[1::2], strict=True)]
    lower_rank = all(b["rank"] < a["rank"] for a, b in pairs)
    lower_error = all(b["error"] < a["error"] for a, b in pairs)
    numax_vs_pca = all(a["error"] < a["pca_error"] for a, _ in pairs)
    verdict = "reproduced in trend" if lower_rank and lower_error and numax_vs_pca else "differs"
    agreement = (f"NuMax-Class has {'the lower' if lower_rank else 'not always the lower'} rank and "
                 f"{'the lower' if lower_error else 'not always the lower'} error at every δ (published: both); "
                 f"NuMax's own rows {'beat' if numax_vs_pca else 'do not beat'} PCA at the same M (the paper's "
                 "Table 1 ordering" + ("" if numax_vs_pca else ", tested against the training size below") + ").")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for kind, style in (("numax", "ko-"), ("numax_class", "gs-")):
        sel = [r for r in raw if r["kind"] == kind]
        ax.plot([r["rank"] for r in sel], [r["error"] for r in sel], style, label=kind)
    ax.plot([r["rank"] for r in raw[::2]], [r["pca_error"] for r in raw[::2]], "b--", label="PCA at NuMax's M")
    ax.set(xlabel="M", ylabel="1-NN test error (%)", title=f"{config['n_train']} training images")
    ax.legend(fontsize=7)
    _save(fig, png)
    return Outcome(
        published=_md_table(["δ", "method", "rank", "error %", "hours", "active secants"],
                            [[d, k, *v] for d, m in PUBLISHED_TABLE2.items() for k, v in m.items()]),
        ours=(f"{config['n_train']} training, {config['n_test']} test images.\n\n"
              + _md_table(["δ", "method", "status", "rank", "error %", "PCA at same M %", "time", "active secants",
                           "published rank / error / hours / active"], rows)),
        rows=raw, verdict=verdict, agreement=agreement)


def table1_training_size(config: dict, png: Path) -> Outcome:
    """Tables 1–2, training-size study — does NuMax overtake PCA as the training set grows?

    Paper
    -----
    Tables 1–2 train on all 60,000 MNIST training images and find NuMax below PCA and Gaussian
    maps of the same M in 1-NN error, and NuMax-Class below NuMax. Our smaller training sets gave
    the opposite NuMax/PCA ordering; the stated reason is the training size. This study tests it:
    the same δ and the same test images, the training set growing.

    Departures
    ----------
    - Training sets are nested prefixes of one seeded permutation of the 10,000 vendored test
      images; the test images are the permutation's last ``n_test``, the same for every size.
    - One δ (Table 1's middle column); PCA and Gaussian at NuMax's rank; NuMax-Class at its own rank.
    """
    delta, raw = config["delta"], []
    for n in config["sizes"]:
        a = _mnist_fit("numax", n, config["n_test"], delta, config["seed"])
        b = _mnist_fit("numax_class", n, config["n_test"], delta, config["seed"])
        raw.append({"n_train": n, "rank": a["rank"], "numax_error": a["error"], "pca_error": a["pca_error"],
                    "gaussian_error": a["gaussian_error"], "numax_class_rank": b["rank"],
                    "numax_class_error": b["error"], "status": [a["status"], b["status"]],
                    "time_s": [a["time_s"], b["time_s"]]})
    rows = [[r["n_train"], r["rank"], " / ".join(r["status"]), f"{r['numax_error']:.2f}", f"{r['pca_error']:.2f}",
             f"{r['gaussian_error']:.2f}", r["numax_class_rank"], f"{r['numax_class_error']:.2f}"] for r in raw]
    gaps = [r["numax_error"] - r["pca_error"] for r in raw]
    flips = [r["n_train"] for r in raw if r["numax_error"] < r["pca_error"]]
    shrinking = len(gaps) > 1 and gaps[-1] < gaps[0]
    verdict = "reproduced in trend" if flips and flips[-1] == raw[-1]["n_train"] else "differs"
    agreement = (f"NuMax − PCA error at δ = {delta}: " + ", ".join(
        f"{g:+.2f} points at n = {r['n_train']}" for g, r in zip(gaps, raw, strict=True)) + ". "
                 + (f"NuMax beats PCA from n = {flips[0]} on, so the training size explains the Table 1 disagreement"
                    if verdict == "reproduced in trend" else
                    "NuMax does not overtake PCA within the sizes run, so the training size alone does not explain "
                    "the Table 1 disagreement at these sizes" + (" (the gap does shrink)" if shrinking else
                                                                  " (the gap does not shrink)")) + ".")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    n = [r["n_train"] for r in raw]
    for key, style, label in (("numax_error", "ko-", "NuMax"), ("pca_error", "bs-", "PCA (NuMax's M)"),
                              ("gaussian_error", "r^-", "Gaussian (NuMax's M)"), ("numax_class_error", "gD-",
                                                                                   "NuMax-Class (own M)")):
        ax.plot(n, [r[key] for r in raw], style, label=label)
    ax.set(xscale="log", xlabel="training images", ylabel="1-NN test error (%)", title=f"δ = {delta}")
    ax.legend(fontsize=7)
    _save(fig, png)
    return Outcome(
        published="Tables 1–2 at 60,000 training images: NuMax below PCA (2.99–3.31% vs 4.38–4.41%) and "
                  "NuMax-Class below NuMax.",
        ours=(f"δ = {delta}, {config['n_test']} test images (the same for every size); errors %.\n\n"
              + _md_table(["training images", "NuMax M", "status", "NuMax", "PCA", "Gaussian", "NuMax-Class M",
                           "NuMax-Class"], rows)),
        rows=raw, verdict=verdict, agreement=agreement)


EXPERIMENTS = (
    Experiment("fig3", "Fig. 3 — δ against M on translating squares, with the baselines of (b)", fig3,
               full={"image_size": 16, "square_size": 8, "n_secants": 1000, "seed": 0,
                     "deltas": [0.4, 0.3, 0.2, 0.15, 0.1, 0.05, 0.03],
                     "baseline_dims": [1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 25, 30, 40, 50, 60, 70, 80]},
               quick={"image_size": 12, "square_size": 6, "n_secants": 300, "seed": 0, "deltas": [0.3, 0.1],
                      "baseline_dims": [2, 4, 8, 16, 30]}),
    Experiment("fig4", "Fig. 4 — histograms of secant distortions at one M", fig4,
               full={"image_size": 16, "square_size": 8, "n_secants": 1000, "delta": 0.03, "seed": 0},
               quick={"image_size": 12, "square_size": 6, "n_secants": 300, "delta": 0.05, "seed": 0}),
    Experiment("fig5", "Fig. 5 — montage of NuMax's basis functions", fig5,
               full={"image_size": 16, "square_size": 8, "n_secants": 1000, "deltas": [0.4, 0.2, 0.1, 0.03],
                     "max_rows": 24, "seed": 0},
               quick={"image_size": 12, "square_size": 6, "n_secants": 300, "deltas": [0.4, 0.1], "max_rows": 12,
                      "seed": 0}),
    Experiment("fig6", "Fig. 6(b) — δ against M on MNIST", fig6,
               full={"n_images": 78, "n_secants": 3003, "seed": 0, "deltas": [0.4, 0.3, 0.2, 0.1]},
               quick={"n_images": 32, "n_secants": 496, "seed": 0, "deltas": [0.4, 0.2]}),
    Experiment("fig6_reasons", "Fig. 6(b) — the reason test: distinct images, image size and PCA variants",
               fig6_reasons,
               full={"cases": [[28, 100], [28, 6000], [20, 6000]], "variants_case": [28, 6000],
                     "n_secants": 3000, "delta": 0.2, "tolerance": 1.5, "samples": 5, "method": "cg", "workers": 2,
                     "seed": 0},
               quick={"cases": [[28, 40], [28, 400]], "variants_case": [28, 400], "n_secants": 300, "delta": 0.3,
                      "tolerance": 1.5, "samples": 2, "method": "cg", "workers": 2,
                      "seed": 0}),
    Experiment("fig7", "Fig. 7 — NuMax-CG on MNIST fives: active secants and time against NuMax", fig7,
               full={"sizes": [50, 100, 150, 200, 316], "admm_max_secants": 12000, "delta": 0.1, "seed": 0},
               quick={"sizes": [20, 40, 60], "admm_max_secants": 2000, "delta": 0.2, "seed": 0}),
    Experiment("fig9", "Fig. 9 — approximate nearest neighbours", fig9,
               full={"n_database": 4000, "n_queries": 1000, "deltas": [0.4, 0.3, 0.2, 0.1], "ks": [1, 5, 10, 20, 50],
                     "seed": 0},
               quick={"n_database": 500, "n_queries": 200, "deltas": [0.4, 0.2], "ks": [1, 5, 10, 20, 50],
                      "seed": 0}),
    Experiment("fig9_spread", "Fig. 9 — the reason test: neighbour-secant spread against k-NN kept", fig9_spread,
               full={"n_database": 1000, "n_queries": 300, "deltas": [0.4, 0.3, 0.2], "ks": [1, 5, 10, 20, 50],
                     "seed": 0},
               quick={"n_database": 300, "n_queries": 100, "deltas": [0.4], "ks": [1, 5, 10], "seed": 0}),
    Experiment("fig10", "Fig. 10 — translating blob, isometry on held-out secants", fig10,
               full={"image_size": 32, "sigma": 6.0, "deltas": [0.4, 0.3, 0.2, 0.1], "seed": 0,
                     "refine_delta": 0.2, "strides": [4, 2, 1]},
               quick={"image_size": 16, "sigma": 3.0, "deltas": [0.4, 0.2], "seed": 0,
                      "refine_delta": 0.2, "strides": [4, 2, 1]}),
    Experiment("fig11", "Fig. 11 — compressive sensing of the blob by Manifold Iterative Pursuit", fig11,
               full={"image_size": 32, "sigma": 6.0, "deltas": [0.4, 0.3, 0.2, 0.1], "snrs_db": [0, 5, 10, 20, 30],
                     "n_signals": 768, "max_iter": 50, "seed": 0},
               quick={"image_size": 16, "sigma": 3.0, "deltas": [0.4, 0.2], "snrs_db": [0, 10, 20],
                      "n_signals": 100, "max_iter": 30, "seed": 0}),
    Experiment("fig12", "Fig. 12 — disk vs square classification from M measurements", fig12,
               full={"image_size": 16, "shape_size": 6, "n_secants": 2000, "deltas": [0.5, 0.4, 0.3, 0.2, 0.1, 0.05],
                     "noises": [0.25, 0.5, 1.0], "copies": 5, "seed": 0},
               quick={"image_size": 16, "shape_size": 6, "n_secants": 500, "deltas": [0.4, 0.2],
                      "noises": [0.25, 1.0], "copies": 2, "seed": 0}),
    Experiment("fig12_reasons", "Fig. 12 — the reason test: the noise model and the secant sample", fig12_reasons,
               full={"image_size": 16, "shape_size": 6, "n_secants": 2000, "deltas": [0.3, 0.1, 0.05],
                     "noises": [0.25, 0.5, 1.0], "copies": 20, "workers": 2, "seed": 0},
               quick={"image_size": 10, "shape_size": 4, "n_secants": 200, "deltas": [0.3],
                      "noises": [0.5], "copies": 2, "workers": 2, "seed": 0}),
    Experiment("fig13", "Fig. 13 — k-NN after NuMax, NuMax-Class, PCA, Gaussian (MNIST for Isolet)", fig13,
               full={"n_train": 1000, "n_test": 2000, "deltas": [0.4, 0.25, 0.1], "ks": [1, 3, 5, 7, 9], "seed": 0},
               quick={"n_train": 200, "n_test": 500, "deltas": [0.4], "ks": [1, 3, 5], "seed": 0}),
    Experiment("table1", "Table 1 — MNIST 1-NN error: NuMax, Gaussian, PCA", table1,
               full={"n_train": 1000, "n_test": 2000, "deltas": [0.4, 0.25, 0.1], "seed": 0},
               quick={"n_train": 300, "n_test": 1000, "deltas": [0.4], "seed": 0}),
    Experiment("table2", "Table 2 — MNIST: NuMax against NuMax-Class", table2,
               full={"n_train": 1000, "n_test": 2000, "deltas": [0.4, 0.25, 0.1], "seed": 0},
               quick={"n_train": 300, "n_test": 1000, "deltas": [0.4], "seed": 0}),
    Experiment("table1_training_size", "Tables 1–2 — the training-size study", table1_training_size,
               full={"sizes": [300, 1000, 2000, 4000], "n_test": 2000, "delta": 0.25, "seed": 0},
               quick={"sizes": [150, 300], "n_test": 1000, "delta": 0.4, "seed": 0}),
)
