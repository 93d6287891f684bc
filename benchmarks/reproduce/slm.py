"""The experiments of the sparse-linear-model paper (Gkioulekas and Zickler), one function each.

The projection is :func:`sdpembed.linear.sparse_linear_projection`, the closed form (7)–(8), on
a dictionary learned from the training images (:func:`sdpembed.linear.learn_dictionary`), with
σ and τ the maximum-likelihood estimates of the model (1)–(2) from the training codes
(:func:`~sdpembed.linear.sparse_linear_model.estimate_noise_levels`); the weighted model
(10)–(11) is :func:`sdpembed.linear.weighted_sparse_linear_projection` with the per-atom code
variances α_k and per-pixel noise variances e_n of the same codes. LPP, NPE and kernel LPP are the
small baselines of :mod:`reproduce.baselines`. The kernel experiments (Fig. 2, third and fourth
panels; Table 1) use the paper's "ker.dict": a dictionary learned in the feature space of a
Gaussian kernel (:func:`sdpembed.linear.learn_kernel_dictionary`) and the map (17)–(18) on it
(:class:`sdpembed.linear.KernelSparseLinearProjection` with ``dictionary="learn"``).

The lasso (3) is min (1/σ²)‖x − Da‖² + (1/τ)‖a‖₁, i.e. ‖x − Da‖² + λ‖a‖₁ with λ = σ²/τ; the
paper's λ = 0.05 is scikit-learn's ``alpha`` = λ/2 = 0.025 (its objective is ½‖x − Da‖² + α‖a‖₁).

References
----------
.. [1] I. Gkioulekas and T. Zickler, "Dimensionality reduction using the sparse linear model",
   Advances in Neural Information Processing Systems 24 (NIPS), 2011. Sec. 4, Fig. 2.
.. [2] X. He and P. Niyogi, "Locality preserving projections", NIPS 16, 2003.
.. [3] X. He, D. Cai, S. Yan and H.-J. Zhang, "Neighborhood preserving embedding", ICCV 2005.
.. [4] N. X. Vinh, J. Epps and J. Bailey, "Information theoretic measures for clusterings comparison",
   JMLR 11, 2010. The clustering measures of Table 1.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402
from sklearn.cluster import AffinityPropagation, KMeans, SpectralClustering  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.decomposition import KernelPCA, sparse_encode  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score  # noqa: E402
from sklearn.metrics.pairwise import euclidean_distances, rbf_kernel  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402

from sdpembed.datasets import load_mnist  # noqa: E402
from sdpembed.linear import (  # noqa: E402
    KernelSparseLinearProjection,
    gaussian_projection,
    kernel_sparse_encode,
    kernel_sparse_linear_coefficients,
    learn_dictionary,
    learn_kernel_dictionary,
    pca_projection,
    sparse_linear_projection,
    weighted_sparse_linear_projection,
)
from sdpembed.linear.sparse_linear_model import estimate_noise_levels  # noqa: E402

from .baselines import klpp_embedding, lpp_projection, npe_projection  # noqa: E402
from .common import Experiment, Outcome, parallel_map  # noqa: E402
from .numax import _md_table, _save  # noqa: E402

TITLE = "Sparse linear model (Gkioulekas and Zickler, NIPS 2011)"
DATA_NOTE = ("Data: the paper's CMU PIE faces (Fig. 1–2), Brodatz textures (Fig. 2, third panel) and Caltech-101 "
             "(Fig. 2, fourth panel; Table 1) are not available. scikit-learn's digits (1,797 images, 8×8) and the "
             "vendored MNIST test images at 20×20 stand in for all three — 10 digit classes for PIE's 68 identities, "
             "Brodatz's 7 textures and Caltech's 20 or 101 categories; orderings are compared, not values. Images are "
             "normalised to unit length (the paper's footnote 2).")
NOT_IMPLEMENTED = [
    "Fig. 1 (not an experiment: a two-dimensional projection of CMU PIE drawn as a picture, without numbers to "
    "compare; PIE is not available)",
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


def _accuracy_curves(raw: list[dict], methods: tuple, labels: dict, styles: tuple, lines: dict, ylabel: str,
                     png: Path, xscale: str = "linear") -> None:
    """One panel per data set: each method's accuracy against M, and horizontal reference lines {key: label}."""
    fig, axes = plt.subplots(1, len(raw), figsize=(5.5 * len(raw), 3.8), squeeze=False)
    for ax, x in zip(axes[0], raw, strict=True):
        for method, style in zip(methods, styles, strict=True):
            ax.plot(x["dims"], x["accuracy"][method], style, label=labels[method], ms=4)
        for (key, label), (color, ls) in zip(lines.items(), (("0.3", "-."), ("0.6", ":")), strict=False):
            ax.axhline(x[key], color=color, ls=ls, label=label)
        ax.set(xlabel="M", ylabel=ylabel, xscale=xscale, title=f"{x['data']} (N = {x['N']})")
        ax.legend(fontsize=7)
    _save(fig, png)


def _accuracy_table(x: dict, methods: tuple, labels: dict) -> str:
    return _md_table(["M", *(labels[m] for m in methods)],
                     [[M, *(f"{x['accuracy'][m][j]:.1f}" for m in methods)] for j, M in enumerate(x["dims"])])


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
    _accuracy_curves(raw, METHODS, LABELS, ("k-o", "k--s", "b-", "g-", "m-", "r-"),
                     {"codes": "lasso codes", "pixels": "pixels"}, "4-NN accuracy %", png)
    tables = "\n\n".join(
        f"{x['data']}, {x['n']} images, N = {x['N']}, {config['per_class']} training images per class, "
        f"{config['splits']} splits; σ̂ = {x['sigma']:.3g}, τ̂ = {x['tau']:.3g}; 4-NN on the pixels "
        f"{x['pixels']:.1f}%, on the lasso codes {x['codes']:.1f}%. Mean 4-NN accuracy (%):\n\n"
        + _accuracy_table(x, METHODS, LABELS) for x in raw)
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


# ------------------------------------------------------------------------------------------ kernel experiments

#: The kernel methods of Fig. 2 (third and fourth panels) and Table 1, in the order of the legend.
KERNEL_METHODS = ("kerdict", "kpca", "klpp", "kersample", "kerdict_rest")
KERNEL_LABELS = {"kerdict": "ker.dict", "kpca": "KPCA", "klpp": "KLPP", "kersample": "sampled atoms",
                 "kerdict_rest": "ker.dict without its 1st coordinate"}


def _kernel_embeddings(X_train: np.ndarray, X_test: np.ndarray, config: dict, seed: int) -> tuple[dict, dict]:
    """Training and test coordinates (n, max_dim) of every kernel method, and ker.dict's codes.

    ker.dict: the dictionary learned in the Gaussian kernel's feature space and the map (17)–(18) on
    it; sampled atoms: (17)–(18) on ``n_atoms`` training rows drawn at random, with ker.dict's σ̂, τ̂
    (the control that isolates the dictionary learning); KPCA; KLPP; and ker.dict's coordinates 2
    to M + 1 (when K > M), which test whether its leading coordinate — the leading eigenvector of
    the uncentred K_DD, whose entries are all positive with a Gaussian kernel — is spent on the
    atoms' common direction. Each is fitted once at the largest M: its first M coordinates are its
    M-dimensional map (all are ordered by eigenvalue).
    """
    M, gamma = config["max_dim"], config["gamma"]
    kernel = {"kernel_params": {"gamma": gamma}, "n_atoms": config["n_atoms"], "random_state": seed}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        kd = KernelSparseLinearProjection(min(M + 1, config["n_atoms"]), dictionary="learn",
                                          alpha=config["kernel_alpha"], max_iter=config["dict_iter"],
                                          **kernel).fit(X_train)
    sampled = KernelSparseLinearProjection(M, sigma=kd.sigma_, tau=kd.tau_, **kernel).fit(X_train)
    kpca = KernelPCA(M, kernel="rbf", gamma=gamma).fit(X_train)
    Y_train, Y_test = kd.transform(X_train), kd.transform(X_test)
    out = {"kerdict": (Y_train[:, :M], Y_test[:, :M]), "kerdict_rest": (Y_train[:, 1:M + 1], Y_test[:, 1:M + 1]),
           "kersample": (sampled.transform(X_train), sampled.transform(X_test)),
           "kpca": (kpca.transform(X_train), kpca.transform(X_test)),
           "klpp": klpp_embedding(rbf_kernel(X_train, gamma=gamma), rbf_kernel(X_test, X_train, gamma=gamma), M,
                                  k=config["neighbours"])}
    gram = kd.dictionary_.T @ rbf_kernel(kd.atoms_, gamma=gamma) @ kd.dictionary_
    test_codes = kernel_sparse_encode(gram, rbf_kernel(X_test, kd.atoms_, gamma=gamma) @ kd.dictionary_,
                                      alpha=config["kernel_alpha"])
    info = {"codes": (kd.codes_, test_codes), "nonzero": float(np.count_nonzero(kd.codes_) / kd.codes_.size),
            "passes": int(kd.n_iter_), "sigma": kd.sigma_, "tau": kd.tau_}
    return out, info


def _svm_accuracy(Y_train: np.ndarray, y_train: np.ndarray, Y_test: np.ndarray, y_test: np.ndarray) -> float:
    """Accuracy (%) of a one-versus-all linear SVM, C by 3-fold cross-validation, on coordinates of unit RMS norm."""
    scale = np.sqrt(np.mean(np.sum(Y_train**2, axis=1))) or 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search = GridSearchCV(LinearSVC(max_iter=5000), {"C": [0.1, 1.0, 10.0, 100.0]}, cv=3)
        search.fit(Y_train / scale, y_train)
    return 100.0 * float(search.score(Y_test / scale, y_test))


def fig2_kernel(config: dict, png: Path) -> Outcome:
    """Fig. 2 (third and fourth panels) — the kernel variant: linear-SVM accuracy against M.

    Paper
    -----
    Third panel, Brodatz textures (classes 4, 5, 8, 12, 17, 84, 92; 12×12 patches, about 20,000
    training patches): a Gaussian kernel with γ = 8, a dictionary of K = 512 atoms learned by
    Gao et al.'s kernel sparse coding (λ = 0.30), the map (17)–(18) ("ker.dict") against kernel
    PCA and kernel LPP; a one-versus-all linear SVM on the M coordinates. Fourth panel,
    Caltech-101 with the average of 39 kernels, 30 training images per class, K = 300 atoms
    learned without pre-image constraints (λ = 0.1, about 10% non-zero codes). Published (curves
    only): on textures KLPP and ker.dict outperform KPCA, ker.dict much higher at small M and
    KLPP better at large M; on Caltech ker.dict and KPCA perform similarly and outperform KLPP;
    "our algorithm performs consistently well in both".

    Departures
    ----------
    - Data: digits and MNIST 20×20 (unit-length images) for both panels, ``per_class`` training
      images per class, the rest tested, ``splits`` random splits; the Gaussian kernel with the
      texture panel's γ = ``gamma`` for both (Caltech's 39 kernels are not available).
    - The dictionary is learned without pre-image constraints for both panels, D = Φ(X)F, by the
      kernel extension of Lee et al.'s alternation (the Caltech panel's method; Gao et al.'s
      pre-image method of the texture panel is not implemented), K = ``n_atoms`` atoms,
      ``dict_iter`` passes, lasso weight α = σ²/τ = ``kernel_alpha`` (chosen on digits, as the
      paper does, for about 10% non-zero codes; one α serves both data sets, and the measured
      fraction of each is reported); σ̂ = √(α τ̂) and τ̂ = mean |a| of the training codes.
    - The SVM's C (not stated in the paper) is chosen by 3-fold cross-validation from
      {0.1, 1, 10, 100} on each method's coordinates scaled to unit RMS norm.
    - KLPP is LPP on the kernel-PCA coordinates of the centred kernel matrix, ``neighbours``
      neighbours in the feature space (``reproduce/baselines.py``).
    - Added, to test the reasons: the map (17)–(18) on ``n_atoms`` atoms drawn from the training
      images ("sampled atoms", no dictionary learning), and the linear SVM on the kernel sparse
      codes themselves against KPCA at the largest M (the kernel features); and ker.dict without
      its first coordinate (coordinates 2 to M + 1): (17) is KPCA of the dictionary "modulo
      centering" (Sec. 3.2), so its leading coordinate may carry the atoms' common direction
      rather than class structure.

    The claims checked: (A) ker.dict is within 1 point of KPCA or above at every M; (B) at the
    smallest M ker.dict leads KPCA and KLPP.
    """
    raw = []
    for name in config["datasets"]:
        X, y = _data(name, config["n_images"], config["seed"])
        dims = [M for M in config["dims"] if M <= config["max_dim"]]
        rng = np.random.default_rng(config["seed"])
        acc = {m: np.zeros((config["splits"], len(dims))) for m in KERNEL_METHODS}
        codes, features, nonzero = [], [], []
        for split in range(config["splits"]):
            train, test = _split(y, config["per_class"], rng)
            coords, info = _kernel_embeddings(X[train], X[test], config, config["seed"] + split)
            for method, (Y_train, Y_test) in coords.items():
                for j, M in enumerate(dims):
                    acc[method][split, j] = _svm_accuracy(Y_train[:, :M], y[train], Y_test[:, :M], y[test])
            train_codes, test_codes = info["codes"]
            codes.append(_svm_accuracy(train_codes, y[train], test_codes, y[test]))
            features.append(acc["kpca"][split, -1])
            nonzero.append(info["nonzero"])
        raw.append({"data": name, "n": int(len(X)), "N": int(X.shape[1]), "dims": dims,
                    "accuracy": {m: acc[m].mean(axis=0).tolist() for m in KERNEL_METHODS},
                    "codes": float(np.mean(codes)), "kernel_features": float(np.mean(features)),
                    "nonzero": float(np.mean(nonzero)), "sigma": info["sigma"], "tau": info["tau"],
                    "passes": info["passes"]})
    claim_a = {x["data"]: [M for j, M in enumerate(x["dims"])
                           if x["accuracy"]["kerdict"][j] < x["accuracy"]["kpca"][j] - 1.0] for x in raw}
    claim_b = {x["data"]: x["accuracy"]["kerdict"][0] > max(x["accuracy"]["kpca"][0], x["accuracy"]["klpp"][0])
               for x in raw}
    holds = all(not claim_a[d] and claim_b[d] for d in claim_a)
    rest_holds = {x["data"]: all(r >= k - 1.0 for r, k in zip(x["accuracy"]["kerdict_rest"], x["accuracy"]["kpca"],
                                                               strict=True))
                  and x["accuracy"]["kerdict_rest"][0] > max(x["accuracy"]["kpca"][0], x["accuracy"]["klpp"][0])
                  for x in raw}
    learned_helps = {x["data"]: float(np.mean(np.subtract(x["accuracy"]["kerdict"], x["accuracy"]["kersample"])))
                     for x in raw}
    codes_help = {x["data"]: x["codes"] > x["kernel_features"] for x in raw}
    failing = [d for d in claim_a if claim_a[d] or not claim_b[d]]
    reasons = []
    if [d for d in failing if rest_holds[d]]:
        reasons.append("on " + ", ".join(d for d in failing if rest_holds[d]) + " ker.dict without its first "
                       "coordinate meets both claims, so the difference is its leading coordinate, spent on the "
                       "uncentred kernel's common direction (the paper's analogy to KPCA holds 'modulo centering')")
    if [d for d in failing if not codes_help[d]]:
        reasons.append("on " + ", ".join(d for d in failing if not codes_help[d]) + " a linear SVM on the kernel "
                       "sparse codes themselves is less accurate than on the kernel features (KPCA at the largest "
                       "M), so preserving the codes' inner products offers nothing over KPCA at large M")
    unexplained = [d for d in failing if not rest_holds[d] and codes_help[d]]
    if unexplained:
        reasons.append("on " + ", ".join(unexplained) + " neither tested reason accounts for the difference")
    reason = (" Tested reasons for the difference: " + "; ".join(reasons) + ".") if failing else ""
    agreement = "; ".join(
        f"{x['data']}: (A) ker.dict trails KPCA by > 1 point at M = {claim_a[x['data']] or 'none'} of {x['dims']}; "
        f"(B) at M = {x['dims'][0]} ker.dict {x['accuracy']['kerdict'][0]:.1f}% against KPCA "
        f"{x['accuracy']['kpca'][0]:.1f}% and KLPP {x['accuracy']['klpp'][0]:.1f}% — "
        f"{'holds' if claim_b[x['data']] else 'fails'}; learning the dictionary adds "
        f"{learned_helps[x['data']]:+.1f} points over sampled atoms on average; without its first coordinate "
        f"ker.dict {'meets' if rest_holds[x['data']] else 'does not meet'} (A) and (B) "
        f"({x['accuracy']['kerdict_rest'][0]:.1f}% at M = {x['dims'][0]}); linear SVM on the kernel codes "
        f"{x['codes']:.1f}% against {x['kernel_features']:.1f}% on the kernel features" for x in raw
    ) + (" (published: ker.dict at least as good as KPCA in both panels, much higher at small M on textures)."
         + reason)
    _accuracy_curves(raw, KERNEL_METHODS, KERNEL_LABELS, ("k-o", "b-s", "g-^", "k:", "r--"), {"codes": "kernel codes"},
                     "linear-SVM accuracy %", png, xscale="log")
    tables = "\n\n".join(
        f"{x['data']}, {x['n']} images, {config['per_class']} training images per class, {config['splits']} "
        f"splits; Gaussian kernel γ = {config['gamma']}; K = {config['n_atoms']} atoms, α = {config['kernel_alpha']}: "
        f"{100 * x['nonzero']:.1f}% non-zero training codes, {x['passes']} passes, σ̂ = {x['sigma']:.3g}, "
        f"τ̂ = {x['tau']:.3g}; linear SVM on the kernel codes {x['codes']:.1f}%. Mean accuracy (%):\n\n"
        + _accuracy_table(x, KERNEL_METHODS, KERNEL_LABELS) for x in raw)
    return Outcome(
        published="Curves only. Brodatz (γ = 8, K = 512): KLPP and ker.dict outperform KPCA; ker.dict much higher at "
                  "small M, KLPP better at large M. Caltech-101 (K = 300): ker.dict and KPCA similar, both above KLPP.",
        ours=tables, rows=raw, verdict="reproduced in trend" if holds else "differs", agreement=agreement)


def paired_mean_se(a, b) -> tuple[float, float]:
    """Mean of the paired differences a − b over the splits and its standard error (sd / √n; 0 for one pair)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else 0.0


def _kernel_split(X: np.ndarray, y: np.ndarray, config: dict, methods: tuple, split: tuple) -> dict[str, list]:
    """Linear-SVM accuracy (%) of each kernel method at each M of ``config["dims"]`` on one (index, train, test)."""
    index, train, test = split
    coords, _ = _kernel_embeddings(X[train], X[test], config, config["seed"] + index)
    return _split_accuracies({m: coords[m] for m in methods}, y, train, test, config["dims"], index)


def _split_accuracies(coords: dict, y: np.ndarray, train: np.ndarray, test: np.ndarray, dims: list,
                      index: int) -> dict[str, list]:
    """Linear-SVM accuracy (%) of each method's first M coordinates, M in ``dims``, on one split (printed)."""
    out = {m: [_svm_accuracy(Y_train[:, :M], y[train], Y_test[:, :M], y[test]) for M in dims]
           for m, (Y_train, Y_test) in coords.items()}
    print(f"  split {index}: " + ", ".join(f"{m} {np.round(out[m], 1).tolist()}" for m in coords), flush=True)
    return out


def fig2_kernel_splits(config: dict, png: Path) -> Outcome:
    """Fig. 2 (third and fourth panels) — the reason test on digits: is ker.dict's deficit at small M split noise?

    Paper
    -----
    As Fig. 2's kernel panels: ker.dict at least as accurate as KPCA at every M, and much more
    accurate at small M on textures. Our two-split run on digits finds ker.dict more than one
    point below KPCA at M = 2 and 10, and below KPCA and KLPP at M = 2, with neither of the
    reasons tested there (the codes, the leading coordinate) accounting for it.

    Departures
    ----------
    - Hypothesis, fixed before the run: the digits deficits are split noise — two random splits
      of 50 training images per class cannot separate methods a few points apart at M = 2.
    - The test: the same methods and settings as Fig. 2's kernel panels on digits at the
      failing M (``dims``), over ``splits`` random splits, every method on the same split (paired).
      For each M the paired difference ker.dict − KPCA (and − KLPP) is given as mean ± standard
      error over the splits. Decision rule: at an M where claim (A) failed, split noise explains
      the failure when mean + 2 SE ≥ −1 (the splits do not show ker.dict more than one point
      below KPCA); at the smallest M, split noise explains claim (B)'s failure when mean + 2 SE
      > 0 against both KPCA and KLPP (the splits do not show ker.dict behind either). Otherwise
      ker.dict's deficit is real on digits at that M, and split noise is ruled out.
    - As Fig. 2's kernel panels: unit-length digits, Gaussian kernel γ = ``gamma``, K = ``n_atoms``
      atoms learned without pre-image constraints, lasso weight ``kernel_alpha``, a linear SVM
      with C by 3-fold cross-validation. The splits are drawn first and run in ``workers``
      processes.
    """
    X, y = _data(config["data"], config["n_images"], config["seed"])
    dims = config["dims"]
    rng = np.random.default_rng(config["seed"])
    methods = ("kerdict", "kpca", "klpp")
    splits = [(split, *_split(y, config["per_class"], rng)) for split in range(config["splits"])]   # drawn first
    found = parallel_map(functools.partial(_kernel_split, X, y, config, methods), splits, config["workers"])
    acc = {m: np.array([f[m] for f in found]) for m in methods}
    raw = {"dims": dims, "accuracy": {m: acc[m].tolist() for m in methods}, "per_M": []}
    findings = []
    for j, M in enumerate(dims):
        kp = paired_mean_se(acc["kerdict"][:, j], acc["kpca"][:, j])
        kl = paired_mean_se(acc["kerdict"][:, j], acc["klpp"][:, j])
        noise_a = kp[0] + 2 * kp[1] >= -1.0
        row = {"M": M, "kerdict_minus_kpca": kp, "kerdict_minus_klpp": kl, "split_noise_explains_a": noise_a}
        text = (f"M = {M}: ker.dict − KPCA {kp[0]:+.1f} ± {kp[1]:.1f} points, ker.dict − KLPP {kl[0]:+.1f} ± "
                f"{kl[1]:.1f} — (A) {'split noise cannot be ruled out' if noise_a else 'a real deficit'}")
        if j == 0:
            noise_b = kp[0] + 2 * kp[1] > 0 and kl[0] + 2 * kl[1] > 0
            row["split_noise_explains_b"] = noise_b
            text += f", (B) {'split noise cannot be ruled out' if noise_b else 'a real deficit'}"
        raw["per_M"].append(row)
        findings.append(text)
    explained = all(r["split_noise_explains_a"] for r in raw["per_M"]) and raw["per_M"][0]["split_noise_explains_b"]
    agreement = (f"{config['splits']} paired splits on {config['data']}: " + "; ".join(findings) + ". "
                 + ("Tested reason: split noise — over the splits ker.dict is not significantly behind, so the "
                    "two-split deficits are chance." if explained else
                    "Split noise is ruled out where marked 'a real deficit': ker.dict trails there on digits "
                    "beyond two standard errors, a difference that remains unexplained."))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for method, style in zip(methods, ("k-o", "b-s", "g-^"), strict=True):
        mean = acc[method].mean(axis=0)
        sd = acc[method].std(axis=0, ddof=1) if config["splits"] > 1 else np.zeros(len(dims))
        ax.errorbar(dims, mean, yerr=sd, fmt=style, ms=4, capsize=3, label=KERNEL_LABELS[method])
    ax.set(xlabel="M", ylabel="linear-SVM accuracy % (mean ± sd over splits)", xscale="log")
    ax.legend(fontsize=7)
    _save(fig, png)
    header = ["M", *(KERNEL_LABELS[m] + " (mean ± sd)" for m in methods), "ker.dict − KPCA (± SE)",
              "ker.dict − KLPP (± SE)"]
    rows = [[M, *(f"{acc[m][:, j].mean():.1f} ± {acc[m][:, j].std(ddof=1) if config['splits'] > 1 else 0:.1f}"
                  for m in methods),
             f"{r['kerdict_minus_kpca'][0]:+.1f} ± {r['kerdict_minus_kpca'][1]:.1f}",
             f"{r['kerdict_minus_klpp'][0]:+.1f} ± {r['kerdict_minus_klpp'][1]:.1f}"]
            for j, (M, r) in enumerate(zip(dims, raw["per_M"], strict=True))]
    return Outcome(
        published="Curves only: ker.dict at least as good as KPCA; much higher at small M on textures.",
        ours=(f"{config['data']}, {config['per_class']} training images per class, {config['splits']} random splits "
              f"(the same for every method); accuracy (%) and paired differences (points).\n\n"
              + _md_table(header, rows)),
        rows=raw, verdict="reproduced in trend" if explained else "differs", agreement=agreement)


def _centred_kerdict(K_train: np.ndarray, K_test: np.ndarray, config: dict, seed: int) -> tuple[np.ndarray, ...]:
    """ker.dict in the centred feature space: the kernel centred on the training mean Φ̄ (as KPCA does), then
    the dictionary D = Φ̃(X)F learned and the map (17)–(18) computed on it; training and test coordinates
    (max_dim of them) and the fraction of non-zero training codes."""
    from sklearn.preprocessing import KernelCenterer

    centerer = KernelCenterer().fit(K_train)
    Kc, Kc_test = centerer.transform(K_train), centerer.transform(K_test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        F, codes = learn_kernel_dictionary(Kc, config["n_atoms"], alpha=config["kernel_alpha"],
                                           max_iter=config["dict_iter"], random_state=seed)
    tau = float(np.mean(np.abs(codes)))
    B = kernel_sparse_linear_coefficients(F.T @ Kc @ F, config["max_dim"], sigma=float(np.sqrt(config["kernel_alpha"]
                                                                                                 * tau)), tau=tau)
    return Kc @ F @ B, Kc_test @ F @ B, float(np.count_nonzero(codes) / codes.size)


def _centring_split(X: np.ndarray, y: np.ndarray, config: dict, split: tuple) -> dict[str, list]:
    """Linear-SVM accuracy (%) at each M of ``config["dims"]`` of ker.dict, centred ker.dict and KPCA on one split."""
    index, train, test = split
    seed, gamma, M = config["seed"] + index, config["gamma"], config["max_dim"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        kd = KernelSparseLinearProjection(min(M + 1, config["n_atoms"]), dictionary="learn",
                                          alpha=config["kernel_alpha"], max_iter=config["dict_iter"],
                                          kernel_params={"gamma": gamma}, n_atoms=config["n_atoms"],
                                          random_state=seed).fit(X[train])
    kpca = KernelPCA(M, kernel="rbf", gamma=gamma).fit(X[train])
    centred_train, centred_test, nonzero = _centred_kerdict(rbf_kernel(X[train], gamma=gamma),
                                                            rbf_kernel(X[test], X[train], gamma=gamma), config, seed)
    coords = {"kerdict": (kd.transform(X[train])[:, :M], kd.transform(X[test])[:, :M]),
              "kerdict_centred": (centred_train, centred_test),
              "kpca": (kpca.transform(X[train]), kpca.transform(X[test]))}
    return {**_split_accuracies(coords, y, train, test, config["dims"], index), "nonzero_centred": nonzero}


def fig2_kernel_centring(config: dict, png: Path) -> Outcome:
    """Fig. 2 (kernel panels) — the second reason test on digits: is ker.dict's deficit at M = 2 the missing centring?

    Paper
    -----
    As Fig. 2's kernel panels: ker.dict at least as accurate as KPCA at every M, and much more
    accurate at small M on textures. Over 10 paired splits of digits (``fig2_kernel_splits``)
    ker.dict trails KPCA at M = 2 by 10.0 ± 1.6 points (a real deficit, not split noise); the
    paper says (17) is KPCA of the dictionary "modulo centering" (Sec. 3.2).

    Departures
    ----------
    - Hypothesis, fixed before the run (centring): the map (17) decomposes the *uncentred* atom
      Gram K_DD. With a Gaussian kernel every k(x, x') > 0, so the uncentred feature space's
      leading directions carry the features' common mean Φ̄ rather than class structure, which
      costs most where there are only M = 2 coordinates; KPCA centres. If so, ker.dict learned
      and mapped in the centred feature space — the kernel centred on the training mean,
      K̃ = HKH and the test kernel centred as KPCA does (scikit-learn's ``KernelCenterer``), the
      same dictionary learning, σ̂, τ̂ and map (17)–(18) on K̃ — closes the gap.
    - Decision rule, fixed before the run, at the smallest M (``dims[0]``), over ``splits``
      paired splits (mean ± standard error of the paired differences): centring *explains* the
      deficit when (i) centred ker.dict − ker.dict has mean − 2 SE > 0 (centring helps beyond
      split noise) and (ii) centred ker.dict − KPCA has mean + 2 SE ≥ −1 (within a point of
      KPCA, claim (A)); it explains *part* of it when (i) holds and (ii) does not (the share is
      the mean gain over the mean deficit); otherwise centring is ruled out.
    - The same splits (seed), settings and methods as ``fig2_kernel_splits`` (unit-length digits,
      Gaussian kernel γ = ``gamma``, K = ``n_atoms`` atoms without pre-image constraints, lasso
      weight ``kernel_alpha``, a linear SVM with C by 3-fold cross-validation), so ker.dict and
      KPCA repeat that run's numbers; KLPP is left out. The splits run one after another.
    """
    X, y = _data(config["data"], config["n_images"], config["seed"])
    dims = config["dims"]
    rng = np.random.default_rng(config["seed"])
    methods = ("kerdict", "kerdict_centred", "kpca")
    labels = {**KERNEL_LABELS, "kerdict_centred": "ker.dict, centred"}
    splits = [(split, *_split(y, config["per_class"], rng)) for split in range(config["splits"])]   # drawn first
    found = [_centring_split(X, y, config, split) for split in splits]
    acc = {m: np.array([f[m] for f in found]) for m in methods}
    gain = paired_mean_se(acc["kerdict_centred"][:, 0], acc["kerdict"][:, 0])
    deficit = paired_mean_se(acc["kerdict"][:, 0], acc["kpca"][:, 0])
    left = paired_mean_se(acc["kerdict_centred"][:, 0], acc["kpca"][:, 0])
    helps, closes = gain[0] - 2 * gain[1] > 0, left[0] + 2 * left[1] >= -1.0
    share = gain[0] / -deficit[0] if deficit[0] < 0 else float("nan")
    finding = "explains" if helps and closes else "explains part of" if helps else "does not explain"
    raw = {"dims": dims, "accuracy": {m: acc[m].tolist() for m in methods},
           "nonzero_centred": [f["nonzero_centred"] for f in found],
           "centred_minus_kerdict": gain, "kerdict_minus_kpca": deficit, "centred_minus_kpca": left,
           "helps": bool(helps), "closes": bool(closes), "share": share, "finding": finding}
    M = dims[0]
    agreement = (f"{config['splits']} paired splits on {config['data']} at M = {M}: ker.dict − KPCA "
                 f"{deficit[0]:+.1f} ± {deficit[1]:.1f} points; centred ker.dict − ker.dict {gain[0]:+.1f} ± "
                 f"{gain[1]:.1f} (i: "
                 f"{'holds' if helps else 'fails'}); centred ker.dict − KPCA {left[0]:+.1f} ± {left[1]:.1f} (ii: "
                 f"{'holds' if closes else 'fails'}). Tested reason — the missing centring — {finding} the deficit"
                 + (f" ({100 * share:.0f}% of it)." if finding == "explains part of" else ".")
                 + ("" if finding == "explains" else " What remains is unexplained."))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for method, style in zip(methods, ("k-o", "r--D", "b-s"), strict=True):
        sd = acc[method].std(axis=0, ddof=1) if config["splits"] > 1 else np.zeros(len(dims))
        ax.errorbar(dims, acc[method].mean(axis=0), yerr=sd, fmt=style, ms=4, capsize=3, label=labels[method])
    ax.set(xlabel="M", ylabel="linear-SVM accuracy % (mean ± sd over splits)", xscale="log")
    ax.legend(fontsize=7)
    _save(fig, png)
    header = ["M", *(labels[m] + " (mean ± sd)" for m in methods), "centred − ker.dict (± SE)",
              "centred − KPCA (± SE)"]
    rows = []
    for j, d in enumerate(dims):
        g, c = (paired_mean_se(acc["kerdict_centred"][:, j], acc[m][:, j]) for m in ("kerdict", "kpca"))
        rows.append([d, *(f"{acc[m][:, j].mean():.1f} ± {acc[m][:, j].std(ddof=1) if config['splits'] > 1 else 0:.1f}"
                          for m in methods), f"{g[0]:+.1f} ± {g[1]:.1f}", f"{c[0]:+.1f} ± {c[1]:.1f}"])
    return Outcome(
        published="Curves only: ker.dict at least as good as KPCA; much higher at small M on textures.",
        ours=(f"{config['data']}, {config['per_class']} training images per class, {config['splits']} random splits "
              f"(those of `fig2_kernel_splits`); accuracy (%) and paired differences (points); centred ker.dict "
              f"{100 * np.mean(raw['nonzero_centred']):.1f}% non-zero training codes.\n\n" + _md_table(header, rows)),
        rows=raw, verdict="differs", agreement=agreement)    # ker.dict as the paper states it still trails KPCA


# ------------------------------------------------------------------------------------------ Table 1

#: Table 1 of the paper: the best result of each method over M and the clustering algorithm.
TABLE1_PUBLISHED = {"kpca": ("k-means", 0.6217, 0.6380, 0.4279),
                    "klpp": ("spectral clustering", 0.6900, 0.6788, 0.5143),
                    "kerdict": ("k-means", 0.7233, 0.7188, 0.5275)}
MEASURES = ("accuracy", "nmi", "rand")


def clustering_accuracy(labels: np.ndarray, y: np.ndarray) -> float:
    """The fraction of points whose cluster is matched to their class by the best one-to-one matching (Hungarian)."""
    _, clusters = np.unique(labels, return_inverse=True)
    _, classes = np.unique(y, return_inverse=True)
    table = np.zeros((clusters.max() + 1, classes.max() + 1))
    np.add.at(table, (clusters, classes), 1.0)
    rows, cols = linear_sum_assignment(-table)
    return float(table[rows, cols].sum() / len(y))


def _clusterings(Y: np.ndarray, n_clusters: int, seed: int) -> dict[str, np.ndarray]:
    """Labels of k-means, spectral clustering and affinity propagation (negative Euclidean distances) on Y."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)          # spectral clustering on a graph not fully connected
        return {
            "k-means": KMeans(n_clusters, n_init=10, random_state=seed).fit_predict(Y),
            "spectral clustering": SpectralClustering(n_clusters, affinity="nearest_neighbors", n_neighbors=10,
                                                      random_state=seed).fit_predict(Y),
            "affinity propagation": AffinityPropagation(affinity="precomputed", random_state=seed).fit_predict(
                -euclidean_distances(Y)),
        }


def _scores(labels: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    return clustering_accuracy(labels, y), normalized_mutual_info_score(y, labels), adjusted_rand_score(y, labels)


def table1(config: dict, png: Path) -> Outcome:
    """Table 1 — clustering after KPCA, KLPP and ker.dict: the best accuracy, NMI and Rand index.

    Paper
    -----
    Caltech-101 (average of 39 kernels), 30 random images from each of the 20 classes of Dueck
    and Frey; projections learned on them by KPCA, KLPP and ker.dict for M from 10 to 150, each
    combined with k-means, spectral clustering and affinity propagation (negative Euclidean
    distances as similarities); reported per method, the best result over M and the algorithm
    (which is named) for clustering accuracy, normalised mutual information and Rand index.
    Published: KPCA (k-means) 0.6217 / 0.6380 / 0.4279, KLPP (spectral clustering) 0.6900 /
    0.6788 / 0.5143, ker.dict (k-means) 0.7233 / 0.7188 / 0.5275 — ker.dict best in all three.

    Departures
    ----------
    - Data: ``per_class`` random images from each of the 10 classes of digits and of MNIST 20×20
      (unit length), ``draws`` random draws (measures averaged over draws, then the best setting
      taken); the Gaussian kernel with γ = ``gamma`` instead of Caltech's 39 kernels.
    - ker.dict as in Fig. 2 (kernel panels): K = ``n_atoms`` atoms (half the images, as the
      paper's 300 atoms for 600 images), α = ``kernel_alpha``, ``dict_iter`` passes; M in ``dims``.
    - Spectral clustering on the 10-nearest-neighbour graph of the coordinates (the paper does not
      state its affinity); affinity propagation with scikit-learn's median preference; clustering
      accuracy by the Hungarian matching of clusters to classes.
    - The "Rand index" is read as the adjusted Rand index: the paper cites Vinh et al.'s
      chance-corrected measures, and its values 0.43–0.53 fit the adjusted index, not the plain
      one — 20 classes of 30 points with 38% of the points moved to random clusters (68% accuracy)
      score a plain Rand index of 0.947 and an adjusted one of 0.433 (scikit-learn's
      ``rand_score`` and ``adjusted_rand_score``, seed 0).
    - Added, to test the reason: the same measures of k-means on the kernel sparse codes
      themselves and on the kernel features (KPCA at the largest M).
    """
    raw = []
    for name in config["datasets"]:
        X, y = _data(name, config["n_images"], config["seed"])
        rng = np.random.default_rng(config["seed"])
        n_clusters = len(np.unique(y))
        # scores[method][(algorithm, M)] = list over draws of (accuracy, nmi, rand)
        scores = {m: {} for m in KERNEL_METHODS[:3]}
        reference = {"codes": [], "kernel features": []}
        for draw in range(config["draws"]):
            sample, _ = _split(y, config["per_class"], rng)
            Xs, ys = X[sample], y[sample]
            coords, info = _kernel_embeddings(Xs, Xs, config, config["seed"] + draw)
            for method in scores:
                for M in config["dims"]:
                    for algorithm, labels in _clusterings(coords[method][0][:, :M], n_clusters, draw).items():
                        scores[method].setdefault((algorithm, M), []).append(_scores(labels, ys))
            reference["codes"].append(_scores(_clusterings(info["codes"][0], n_clusters, draw)["k-means"], ys))
            reference["kernel features"].append(
                _scores(_clusterings(coords["kpca"][0], n_clusters, draw)["k-means"], ys))
        best = {}
        for method, table in scores.items():
            mean = {setting: np.mean(values, axis=0) for setting, values in table.items()}
            best[method] = {measure: {"value": float(mean[setting][i]), "algorithm": setting[0], "M": setting[1]}
                            for i, measure in enumerate(MEASURES)
                            for setting in [max(mean, key=lambda s, i=i: mean[s][i])]}
        raw.append({"data": name, "images": config["per_class"] * n_clusters, "best": best,
                    "reference": {k: np.mean(v, axis=0).tolist() for k, v in reference.items()}})
    wins = {x["data"]: [measure for measure in MEASURES
                        if x["best"]["kerdict"][measure]["value"] > max(x["best"][m][measure]["value"]
                                                                         for m in ("kpca", "klpp"))] for x in raw}
    order = {x["data"]: [measure for measure in MEASURES
                         if x["best"]["kerdict"][measure]["value"] > x["best"]["klpp"][measure]["value"]
                         > x["best"]["kpca"][measure]["value"]] for x in raw}
    holds = all(len(w) == len(MEASURES) for w in wins.values())
    codes_help = {x["data"]: x["reference"]["codes"][1] > x["reference"]["kernel features"][1] for x in raw}
    if holds:
        reason = ""
    elif not all(codes_help.values()):
        reason = (" Tested reason for the difference: on " + ", ".join(d for d, h in codes_help.items() if not h)
                  + " k-means on the kernel sparse codes themselves scores a lower NMI than on the kernel features, "
                  "so a map that preserves the codes' geometry has no advantage to offer over KPCA.")
    else:
        reason = " The kernel codes cluster better than the kernel features, so the code geometry does not explain it."
    agreement = "; ".join(
        f"{x['data']}: ker.dict best in {wins[x['data']] or 'no measure'} of {list(MEASURES)}; the published order "
        f"ker.dict > KLPP > KPCA holds in {order[x['data']] or 'no measure'}; k-means NMI on the kernel codes "
        f"{x['reference']['codes'][1]:.3f} against {x['reference']['kernel features'][1]:.3f} on the kernel features"
        for x in raw) + " (published: ker.dict best in all three on Caltech-101)." + reason
    fig, axes = plt.subplots(1, len(raw), figsize=(5.5 * len(raw), 3.6), squeeze=False)
    width = 0.25
    for ax, x in zip(axes[0], raw, strict=True):
        for i, method in enumerate(KERNEL_METHODS[:3]):
            ax.bar(np.arange(3) + (i - 1) * width, [x["best"][method][m]["value"] for m in MEASURES], width,
                   label=KERNEL_LABELS[method])
        ax.set_xticks(range(3), ["accuracy", "NMI", "adjusted Rand"])
        ax.set(ylim=(0, 1), title=f"{x['data']}, {x['images']} images: best over M and algorithm")
        ax.legend(fontsize=7)
    _save(fig, png)
    published = _md_table(["method (algorithm)", "accuracy", "NMI", "Rand index"],
                          [[f"{KERNEL_LABELS[m]} ({a})", f"{acc:.4f}", f"{nmi:.4f}", f"{ri:.4f}"]
                           for m, (a, acc, nmi, ri) in TABLE1_PUBLISHED.items()])
    ours = "\n\n".join(
        f"{x['data']}, {config['per_class']} images of each of 10 classes, {config['draws']} draws, M in "
        f"{config['dims']}; best over M and algorithm (mean over draws; the algorithm and M in brackets):\n\n"
        + _md_table(["method", "accuracy", "NMI", "adjusted Rand"],
                    [[KERNEL_LABELS[m], *(f"{x['best'][m][k]['value']:.4f} ({x['best'][m][k]['algorithm']}, "
                                          f"M = {x['best'][m][k]['M']})" for k in MEASURES)]
                     for m in KERNEL_METHODS[:3]])
        + "\n\nk-means on the kernel codes: " + " / ".join(f"{v:.4f}" for v in x["reference"]["codes"])
        + "; on the kernel features: " + " / ".join(f"{v:.4f}" for v in x["reference"]["kernel features"])
        for x in raw)
    return Outcome(published="Caltech-101, 20 classes × 30 images:\n\n" + published, ours=ours, rows=raw,
                   verdict="reproduced in trend" if holds else "differs", agreement=agreement)


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
    Experiment("fig2_kernel", "Fig. 2 (third and fourth) — the kernel variant: ker.dict, KPCA, KLPP and a linear SVM",
               fig2_kernel,
               full={"datasets": ["digits", "mnist20"], "n_images": 2000, "per_class": 50, "splits": 2,
                     "dims": [2, 5, 10, 20, 40, 80, 150], "max_dim": 150, "gamma": 8.0, "n_atoms": 200,
                     "kernel_alpha": 0.01, "dict_iter": 10, "seed": 0, **_COMMON},
               quick={"datasets": ["digits"], "n_images": 2000, "per_class": 8, "splits": 1,
                      "dims": [5], "max_dim": 5, "gamma": 8.0, "n_atoms": 20,
                      "kernel_alpha": 0.01, "dict_iter": 2, "seed": 0, **_COMMON}),
    Experiment("fig2_kernel_splits", "Fig. 2 (kernel panels) — the reason test: ker.dict against KPCA over "
               "many splits (digits)", fig2_kernel_splits,
               full={"data": "digits", "n_images": 2000, "per_class": 50, "splits": 10, "dims": [2, 10],
                     "max_dim": 150, "gamma": 8.0, "n_atoms": 200, "kernel_alpha": 0.01, "dict_iter": 10,
                     "workers": 2, "seed": 0, **_COMMON},
               quick={"data": "digits", "n_images": 2000, "per_class": 8, "splits": 2, "dims": [2],
                      "max_dim": 5, "gamma": 8.0, "n_atoms": 20, "kernel_alpha": 0.01, "dict_iter": 2,
                      "workers": 2, "seed": 0, **_COMMON}),
    Experiment("fig2_kernel_centring", "Fig. 2 (kernel panels) — the second reason test: ker.dict in the centred "
               "feature space against KPCA at M = 2 (digits)", fig2_kernel_centring,
               full={"data": "digits", "n_images": 2000, "per_class": 50, "splits": 10, "dims": [2, 10],
                     "max_dim": 150, "gamma": 8.0, "n_atoms": 200, "kernel_alpha": 0.01, "dict_iter": 10, "seed": 0},
               quick={"data": "digits", "n_images": 2000, "per_class": 8, "splits": 2, "dims": [2],
                      "max_dim": 5, "gamma": 8.0, "n_atoms": 20, "kernel_alpha": 0.01, "dict_iter": 2, "seed": 0}),
    Experiment("table1", "Table 1 — clustering after KPCA, KLPP and ker.dict (digits and MNIST for Caltech-101)",
               table1,
               full={"datasets": ["digits", "mnist20"], "n_images": 2000, "per_class": 30, "draws": 3,
                     "dims": [10, 20, 40, 80, 150], "max_dim": 150, "gamma": 8.0, "n_atoms": 150,
                     "kernel_alpha": 0.01, "dict_iter": 10, "seed": 0, **_COMMON},
               quick={"datasets": ["digits"], "n_images": 2000, "per_class": 8, "draws": 1,
                      "dims": [5], "max_dim": 5, "gamma": 8.0, "n_atoms": 20,
                      "kernel_alpha": 0.01, "dict_iter": 2, "seed": 0, **_COMMON}),
)
