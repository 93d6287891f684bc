"""The experiments of the sparse-linear-model paper (Gkioulekas and Zickler), one function each.

The projection is :func:`sdpembed.linear.sparse_linear_projection`, the closed form (7)–(8), on
a dictionary learned from the training images (:func:`sdpembed.linear.learn_dictionary`), with
σ and τ the maximum-likelihood estimates of the model (1)–(2) from the training codes
(:func:`~sdpembed.linear.sparse_linear_model.estimate_noise_levels`); the weighted model
(10)–(11) is :func:`sdpembed.linear.weighted_sparse_linear_projection` with the per-atom code
variances α_k and per-pixel noise variances e_n of the same codes. LPP and NPE are the small
baselines of :mod:`reproduce.baselines`.

The lasso (3) is min (1/σ²)‖x − Da‖² + (1/τ)‖a‖₁, i.e. ‖x − Da‖² + λ‖a‖₁ with λ = σ²/τ; the
paper's λ = 0.05 is scikit-learn's ``alpha`` = λ/2 = 0.025 (its objective is ½‖x − Da‖² + α‖a‖₁).

References
----------
.. [1] I. Gkioulekas and T. Zickler, "Dimensionality reduction using the sparse linear model",
   Advances in Neural Information Processing Systems 24 (NIPS), 2011. Sec. 4, Fig. 2.
.. [2] X. He and P. Niyogi, "Locality preserving projections", NIPS 16, 2003.
.. [3] X. He, D. Cai, S. Yan and H.-J. Zhang, "Neighborhood preserving embedding", ICCV 2005.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.decomposition import sparse_encode  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402

from sdpembed.datasets import load_mnist  # noqa: E402
from sdpembed.linear import (  # noqa: E402
    gaussian_projection,
    learn_dictionary,
    pca_projection,
    sparse_linear_projection,
    weighted_sparse_linear_projection,
)
from sdpembed.linear.sparse_linear_model import estimate_noise_levels  # noqa: E402

from .baselines import lpp_projection, npe_projection  # noqa: E402
from .common import Experiment, Outcome  # noqa: E402
from .numax import _md_table, _save  # noqa: E402

TITLE = "Sparse linear model (Gkioulekas and Zickler, NIPS 2011)"
DATA_NOTE = ("Data: the paper's CMU PIE faces (Fig. 1–2), Brodatz textures and Caltech-101 (Fig. 2, Table 1) are not "
             "available. scikit-learn's digits (1,797 images, 8×8) and the vendored MNIST test images at 20×20 stand "
             "in for PIE, 10 digit classes for its 68 identities; orderings are compared, not values. Images are "
             "normalised to unit length (the paper's footnote 2).")
NOT_IMPLEMENTED = [
    "Fig. 1 (two-dimensional projection of CMU PIE, a picture without numbers; PIE is not available)",
    "Fig. 2, third and fourth panels, and Table 1 (Brodatz textures and Caltech-101 with the kernel dictionary "
    "\"ker.dict\" and a linear SVM, k-means/spectral clustering; neither data set is available and kernel "
    "dictionary learning is not implemented in sdpembed)",
]

#: The methods of Fig. 2 (left) we run, in the order of the legend.
METHODS = ("slm", "slm_weighted", "pca", "lpp", "npe", "random")
LABELS = {"slm": "SLM (7)", "slm_weighted": "SLM weighted (10)", "pca": "PCA", "lpp": "LPP", "npe": "NPE",
          "random": "random"}


# ------------------------------------------------------------------------------------------ helpers


def _data(name: str, n_images: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Digits or MNIST 20×20, rows normalised to unit length."""
    if name == "digits":
        X, y = load_digits(return_X_y=True)
        X = X.astype(np.float64)
    elif name == "mnist20":
        X, y = load_mnist(size=20, n_samples=n_images, random_state=seed)
    else:
        raise ValueError(f"unknown data set {name!r}")
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def _split(y: np.ndarray, per_class: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``per_class`` training images of each class drawn at random; the rest test."""
    train = np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in np.unique(y)])
    return np.sort(train), np.setdiff1d(np.arange(len(y)), train)


def _accuracy(Psi: np.ndarray | None, X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray) -> float:
    """4-NN test accuracy (%) after the map Ψ (None: the raw features)."""
    Y = X if Psi is None else X @ Psi.T
    model = KNeighborsClassifier(4).fit(Y[train], y[train])
    return 100.0 * float(model.score(Y[test], y[test]))


def _dictionary(X: np.ndarray, config: dict, seed: int) -> dict:
    """D (K = N atoms), the codes, σ̂, τ̂ and the weights (10) of the training images X."""
    with warnings.catch_warnings():                  # lasso solves of a few atoms stop at their tolerance
        warnings.simplefilter("ignore", ConvergenceWarning)
        D, codes = learn_dictionary(X, X.shape[1], alpha=config["alpha"], max_iter=config["dict_iter"],
                                    random_state=seed)
    sigma, tau = estimate_noise_levels(X, D, codes)
    return {"D": D, "codes": codes, "sigma": sigma, "tau": tau,
            "code_variances": np.mean(codes**2, axis=0), "noise_variances": np.mean((X - codes @ D.T) ** 2, axis=0)}


def _maps(method: str, M: int, X: np.ndarray, model: dict, config: dict, seed: int) -> np.ndarray:
    """The M×N map of one method, learned from the training images X."""
    if method == "slm":
        return sparse_linear_projection(model["D"], M, sigma=model["sigma"], tau=model["tau"])
    if method == "slm_weighted":
        return weighted_sparse_linear_projection(model["D"], M, code_variances=model["code_variances"],
                                                 noise_variances=model["noise_variances"],
                                                 max_iter=config["weighted_iter"])
    if method == "pca":
        return pca_projection(X, M)
    if method == "lpp":
        return lpp_projection(X, M, k=config["neighbours"])
    if method == "npe":
        return npe_projection(X, M, k=config["neighbours"])
    if method == "random":
        return gaussian_projection(M, X.shape[1], random_state=seed)
    raise ValueError(f"unknown method {method!r}")


def _code_accuracy(X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray, model: dict,
                   alpha: float) -> float:
    """4-NN accuracy (%) on the lasso codes themselves: the geometry (4) asks the map to preserve."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        test_codes = sparse_encode(X[test], model["D"].T, algorithm="lasso_cd", alpha=alpha)
    return 100.0 * float(KNeighborsClassifier(4).fit(model["codes"], y[train]).score(test_codes, y[test]))


# ------------------------------------------------------------------------------------------ Fig. 2 (left)


def fig2(config: dict, png: Path) -> Outcome:
    """Fig. 2 (left) — 4-NN recognition accuracy against the number of projections M.

    Paper
    -----
    CMU PIE faces (68 identities, 32×32, unit length), 20 random splits with 100 training
    images per identity; a dictionary with K = N = 1024 atoms learned from the training images
    (Lee et al.'s algorithm, λ = σ²/τ = 0.05); the projection (7) against PCA, NPE, LPP, their
    extensions SRLPP and SmoothLPP, and random projections; 4-NN classifier on the projected
    test images, mean accuracy over the splits. Published (curves only): the proposed method
    "outperforms all other by a wide margin".

    Departures
    ----------
    - Data: digits (N = 64) and MNIST 20×20 (N = 400, a seeded sample of ``n_images`` test
      images) with ``per_class`` training images per digit; ``splits`` random splits, not 20.
    - The dictionary is learned by scikit-learn's mini-batch dictionary learning (Mairal et
      al., the paper's ref. [22]) for ``dict_iter`` passes, not Lee et al.'s algorithm; σ and τ
      of (7)–(8), which the paper does not state, are the maximum-likelihood estimates from the
      training codes.
    - The weighted model (10) is added, with the code and noise variances of the training codes
      (L-BFGS from (7) for at most ``weighted_iter`` iterations, a local optimum below M = N).
    - SRLPP and SmoothLPP are not run; LPP and NPE use ``neighbours`` neighbours and a 1e-6
      ridge (``reproduce/baselines.py``); the random projection is Gaussian, one per split.
    - To test why the method may not win here, the 4-NN accuracy on the lasso codes themselves
      (the inner products (4) preserves) is measured beside that on the raw pixels.
    """
    raw = []
    for name in config["datasets"]:
        X, y = _data(name, config["n_images"], config["seed"])
        dims = [M for M in config["dims"] if M <= X.shape[1]]
        rng = np.random.default_rng(config["seed"])
        acc = {m: np.zeros((config["splits"], len(dims))) for m in METHODS}
        pixels, codes = [], []
        for split in range(config["splits"]):
            train, test = _split(y, config["per_class"], rng)
            model = _dictionary(X[train], config, config["seed"] + split)
            pixels.append(_accuracy(None, X, y, train, test))
            codes.append(_code_accuracy(X, y, train, test, model, config["alpha"]))
            for j, M in enumerate(dims):
                for method in METHODS:
                    acc[method][split, j] = _accuracy(_maps(method, M, X[train], model, config, split), X, y,
                                                      train, test)
        mean = {m: acc[m].mean(axis=0).tolist() for m in METHODS}
        raw.append({"data": name, "n": int(len(X)), "N": int(X.shape[1]), "dims": dims, "accuracy": mean,
                    "pixels": float(np.mean(pixels)), "codes": float(np.mean(codes)),
                    "sigma": model["sigma"], "tau": model["tau"]})
    margin = config["margin"]
    wins = {x["data"]: [M for j, M in enumerate(x["dims"])
                        if x["accuracy"]["slm"][j] >= max(x["accuracy"][m][j] for m in METHODS
                                                          if m not in ("slm", "slm_weighted")) + margin]
            for x in raw}
    behind = {x["data"]: [M for j, M in enumerate(x["dims"])
                          if x["accuracy"]["slm"][j] < max(x["accuracy"][m][j] for m in METHODS if m != "slm") - 0.5]
              for x in raw}
    codes_help = {x["data"]: x["codes"] > x["pixels"] for x in raw}
    everywhere = all(len(wins[x["data"]]) == len(x["dims"]) for x in raw)
    verdict = "reproduced in trend" if everywhere else "differs"
    if everywhere:
        reason = ""
    elif not all(codes_help.values()):
        reason = (" Tested reason for the difference: the method preserves the geometry of the sparse codes, and on "
                  + ", ".join(d for d, h in codes_help.items() if not h) + " the codes themselves classify worse "
                  "than the pixels, so a map that preserves them has no advantage to offer over PCA.")
    else:
        reason = " The lasso codes classify better than the pixels, so the code geometry does not explain it."
    agreement = "; ".join(
        f"{x['data']}: SLM (7) leads every baseline by ≥ {margin} points at M = {wins[x['data']] or 'none'} of "
        f"{x['dims']} and trails the best method by > 0.5 points at M = {behind[x['data']] or 'none'}; 4-NN on "
        f"the lasso codes {x['codes']:.1f}% against {x['pixels']:.1f}% on the pixels" for x in raw
    ) + " (published: the proposed method wins by a wide margin at every M)." + reason
    fig, axes = plt.subplots(1, len(raw), figsize=(5.5 * len(raw), 3.8), squeeze=False)
    for ax, x in zip(axes[0], raw, strict=True):
        for method, style in zip(METHODS, ("k-o", "k--s", "b-", "g-", "m-", "r-"), strict=True):
            ax.plot(x["dims"], x["accuracy"][method], style, label=LABELS[method], ms=4)
        ax.axhline(x["pixels"], color="0.6", ls=":", label="pixels")
        ax.axhline(x["codes"], color="0.3", ls="-.", label="lasso codes")
        ax.set(xlabel="M", ylabel="4-NN accuracy %", title=f"{x['data']} (N = {x['N']})")
        ax.legend(fontsize=7)
    _save(fig, png)
    tables = "\n\n".join(
        f"{x['data']}, {x['n']} images, N = {x['N']}, {config['per_class']} training images per class, "
        f"{config['splits']} splits; σ̂ = {x['sigma']:.3g}, τ̂ = {x['tau']:.3g}; 4-NN on the pixels "
        f"{x['pixels']:.1f}%, on the lasso codes {x['codes']:.1f}%. Mean 4-NN accuracy (%):\n\n"
        + _md_table(["M", *(LABELS[m] for m in METHODS)],
                    [[M, *(f"{x['accuracy'][m][j]:.1f}" for m in METHODS)] for j, M in enumerate(x["dims"])])
        for x in raw)
    return Outcome(
        published="Curves only (CMU PIE, 100 training images per identity): the proposed method outperforms PCA, "
                  "NPE, LPP, SRLPP, SmoothLPP and random projections by a wide margin at every M.",
        ours=tables, rows=raw, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Fig. 2 (second)


def fig2_training(config: dict, png: Path) -> Outcome:
    """Fig. 2 (second panel) — accuracy against the number of training images per class, at fixed M.

    Paper
    -----
    CMU PIE, 40 to 120 training images per identity, the proposed method against the best
    alternative of the first panel, 4-NN accuracy. Published (curves only): the proposed method
    stays ahead, "in many cases even when trained with fewer samples".

    Departures
    ----------
    - Digits (N = 64) instead of PIE; one M (``M``), the alternatives PCA, LPP and NPE all shown
      (the best of them is read off); ``splits`` random splits per size.
    - The dictionary and σ, τ as in Fig. 2 (left) (mini-batch dictionary learning, ML estimates).
    """
    X, y = _data(config["data"], 0, config["seed"])
    rng = np.random.default_rng(config["seed"])
    methods = ("slm", "pca", "lpp", "npe")
    acc = {m: [] for m in methods}
    pixels, codes = [], []
    for per_class in config["per_class"]:
        values = {m: [] for m in methods}
        for split in range(config["splits"]):
            train, test = _split(y, per_class, rng)
            model = _dictionary(X[train], config, config["seed"] + split)
            for m in methods:
                values[m].append(_accuracy(_maps(m, config["M"], X[train], model, config, split), X, y, train, test))
            if per_class == config["per_class"][-1]:
                pixels.append(_accuracy(None, X, y, train, test))
                codes.append(_code_accuracy(X, y, train, test, model, config["alpha"]))
        for m in methods:
            acc[m].append(float(np.mean(values[m])))
    best = [max(acc[m][i] for m in methods[1:]) for i in range(len(config["per_class"]))]
    ahead = [n for n, s, b in zip(config["per_class"], acc["slm"], best, strict=True) if s > b]
    fewer = any(acc["slm"][i] > best[j] for i in range(len(best)) for j in range(i + 1, len(best)))
    verdict = "reproduced in trend" if len(ahead) == len(best) else "differs"
    agreement = (f"SLM (7) is ahead of the best of PCA, LPP and NPE at {ahead or 'no'} training images per class of "
                 f"{config['per_class']}; it {'does' if fewer else 'never does'} beat the best alternative trained on "
                 f"more images (published: ahead at every size, often with fewer samples)."
                 + f" At {config['per_class'][-1]} images per class 4-NN scores {np.mean(codes):.1f}% on the lasso "
                 f"codes and {np.mean(pixels):.1f}% on the pixels"
                 + ("." if verdict != "differs" else
                    (" — tested reason for the difference: the codes, whose inner products the method preserves, "
                     "classify worse than the pixels." if np.mean(codes) < np.mean(pixels) else
                     "; the codes classify better, so the code geometry does not explain the difference.")))
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for m, style in zip(methods, ("k-o", "b-", "g-", "m-"), strict=True):
        ax.plot(config["per_class"], acc[m], style, label=LABELS[m], ms=4)
    ax.set(xlabel="training images per class", ylabel="4-NN accuracy %", title=f"{config['data']}, M = {config['M']}")
    ax.legend(fontsize=7)
    _save(fig, png)
    return Outcome(
        published="Curves only (CMU PIE, 40 to 120 training images per identity): the proposed method stays ahead "
                  "of the best alternative.",
        ours=(f"{config['data']}, M = {config['M']}, {config['splits']} splits per size; mean 4-NN accuracy (%):\n\n"
              + _md_table(["training images per class", *(LABELS[m] for m in methods)],
                          [[n, *(f"{acc[m][i]:.1f}" for m in methods)] for i, n in enumerate(config["per_class"])])),
        rows={"per_class": config["per_class"], "accuracy": acc, "pixels": float(np.mean(pixels)),
              "codes": float(np.mean(codes))}, verdict=verdict, agreement=agreement)


_COMMON = {"alpha": 0.025, "neighbours": 5, "margin": 1.0}
EXPERIMENTS = (
    Experiment("fig2", "Fig. 2 (left) — 4-NN accuracy against M: sparse-linear-model projection and baselines", fig2,
               full={"datasets": ["digits", "mnist20"], "n_images": 2000, "per_class": 100, "splits": 2,
                     "dims": [2, 5, 10, 20, 30, 40, 60], "dict_iter": 10, "weighted_iter": 200, "seed": 0, **_COMMON},
               quick={"datasets": ["digits"], "n_images": 2000, "per_class": 20, "splits": 1,
                      "dims": [5, 20], "dict_iter": 1, "weighted_iter": 20, "seed": 0, **_COMMON}),
    Experiment("fig2_training", "Fig. 2 (second) — 4-NN accuracy against training images per class (digits)",
               fig2_training,
               full={"data": "digits", "per_class": [40, 60, 80, 100, 120], "M": 10, "splits": 3, "dict_iter": 10,
                     "weighted_iter": 200, "seed": 0, **_COMMON},
               quick={"data": "digits", "per_class": [20, 40], "M": 10, "splits": 1, "dict_iter": 1,
                      "weighted_iter": 20, "seed": 0, **_COMMON}),
)
