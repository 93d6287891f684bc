"""The thesis' MVU quality table and its kernel experiments (Weinberger, ch. 3), one function each.

Table 3.2 compares embeddings by local continuity, local trust and neighbourhood intersection
(3.27)–(3.29); Sec. 3.3 treats the MVU matrix K as a kernel: kernel PCA on it and on the linear,
polynomial and Gaussian kernels (Fig. 3.32–3.35), SVMs on it (Table 3.3, Fig. 3.36) and its
spectrum beside Isomap's (Fig. 3.37). The MVU kernels here are certified optima of the
inequality SDP (Sec. 3.1.6) on a k-nearest-neighbour graph with the angle edges of the thesis'
formulation, solved by :func:`sdpembed.solve` with its default method; every run records the
solver's status and certified gap.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Table 3.2 (Sec. 3.1.9), Sec. 3.3: Fig. 3.32–3.37, Table 3.3.
.. [2] B. Schölkopf, A. Smola and K.-R. Müller, "Nonlinear component analysis as a kernel
   eigenvalue problem", Neural Computation 10(5), 1299–1319, 1998 (kernel PCA).
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from mvu import _harmonic, _variational_embedding, roll_arc_length  # noqa: E402
from scipy.ndimage import rotate  # noqa: E402
from scipy.sparse.csgraph import shortest_path  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.manifold import Isomap, LocallyLinearEmbedding, SpectralEmbedding  # noqa: E402
from sklearn.metrics.pairwise import polynomial_kernel  # noqa: E402
from sklearn.model_selection import StratifiedShuffleSplit  # noqa: E402
from sklearn.svm import SVC, LinearSVC  # noqa: E402

from sdpembed import MVUInstance, solve  # noqa: E402
from sdpembed.datasets import load_mnist, swiss_roll  # noqa: E402
from sdpembed.graphs import knn_indices, link_components, neighborhood_graph  # noqa: E402
from sdpembed.solvers.mvu.spectral import spectral_embedding  # noqa: E402
from sdpembed.validation.embedding_quality import local_continuity, local_trust, neighborhood_intersection  # noqa: E402

from .common import Experiment, Outcome, gap_text  # noqa: E402
from .numax import _md_table, _save  # noqa: E402

#: What the paper module (:mod:`reproduce.thesis_mvu`, which runs these experiments) says of their data.
DATA_NOTE = ("the thesis' Olivetti faces, Frey faces, teapot images and USPS digits are not available. The "
             "swiss roll is the thesis' own generator; a rotating image — one vendored MNIST test digit rotated "
             "through 360°, a closed one-dimensional image manifold like the teapot's — stands in for the "
             "teapot; MNIST test images at 20×20 stand in for USPS's 16×16 digits, and scikit-learn's 8×8 "
             "digits for the faces; orderings are compared where the data differ. The MVU kernels are "
             "certified optima of the inequality SDP (Sec. 3.1.6) with the thesis' angle edges; the thesis' "
             "kernel experiments do not say which variant they solved.")

#: Table 3.2's data sets, in the thesis' order.
TABLE3_2_SETS = ("Olivetti faces", "teapot", "swiss roll", "Frey faces")


def _published_table3_2(text: str) -> dict[str, dict[str, tuple[float, float, float]]]:
    """The printed table as {row: {data set or "average": (continuity, trust, intersection)}}."""
    columns = len(TABLE3_2_SETS) + 1
    measures: dict[str, dict[str, list[float]]] = {}
    for line in text.strip().splitlines():
        tokens = line.split()
        if not tokens or line.startswith("#"):
            continue
        if len(tokens) == 1:                                    # a measure's name starts its block
            measure = measures.setdefault(tokens[0], {})
        else:
            measure[" ".join(tokens[:-columns])] = [float(v) for v in tokens[-columns:]]
    rows = next(iter(measures.values()))
    return {row: {column: tuple(measures[m][row][j] for m in measures)
                  for j, column in enumerate((*TABLE3_2_SETS, "average"))} for row in rows}


#: Table 3.2, the thesis' values (continuity, trust, intersection at l = 15) of its ten rows on its four data
#: sets, and the row average over them; the rows in the thesis' order.
PUBLISHED_TABLE3_2 = _published_table3_2(Path(__file__).with_name("thesis_table3_2.txt").read_text())

#: Table 3.3, percent test error of SVMs (810 training, 90 test USPS digits; 10 splits).
PUBLISHED_TABLE3_3 = {(1, 2): (0.00, 0.00, 0.14, 0.59), (1, 3): (0.23, 0.00, 0.35, 1.73),
                      (2, 8): (2.18, 1.12, 0.63, 3.37), (8, 9): (1.00, 0.54, 0.29, 1.27)}
KERNELS = ("linear", "polynomial", "Gaussian", "MVU")


# ------------------------------------------------------------------------------------------ data


def _swiss(n: int, seed: int) -> np.ndarray:
    return swiss_roll(n, noise=0.05, random_state=seed)[0]


def _rotating_digit(n: int, seed: int) -> np.ndarray:
    """One MNIST test digit rotated by n equally spaced angles in [0°, 360°): a closed curve of images."""
    X, y = load_mnist(size=28)
    image = X[np.flatnonzero(y == 3)[seed]].reshape(28, 28)
    angles = np.arange(n) * 360.0 / n
    return np.stack([rotate(image, a, reshape=False, order=1).ravel() for a in angles])


def _mnist_pair(digits: tuple[int, ...], n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n vendored MNIST test images at 20×20 of the given digits (roughly equal shares), scaled to [0, 1]."""
    X, y = load_mnist(size=20)
    rng = np.random.default_rng(seed)
    share = [n // len(digits) + (i < n % len(digits)) for i in range(len(digits))]
    keep = np.concatenate([rng.choice(np.flatnonzero(y == d), s, replace=False)
                           for d, s in zip(digits, share, strict=True)])
    return X[keep] / X.max(), y[keep]


# ------------------------------------------------------------------------------------------ kernels


@functools.lru_cache(maxsize=16)
def _mvu(name: str, n: int, k: int, seed: int, extra: tuple = ()) -> dict:
    """The certified MVU kernel of one data set, solved once per process (the experiments share it)."""
    X = _DATA[name](n, seed, *extra)
    X = X[0] if isinstance(X, tuple) else X
    start = time.process_time()
    instance = MVUInstance.from_points(X, k, "inequality", link=True, random_state=seed)
    result = solve(instance)
    return {"K": result.solution, "status": result.status, "gap": float(result.relative_gap),
            "cpu_s": time.process_time() - start, "edges": int(instance.edges.shape[0])}


_DATA = {"swiss": _swiss, "rotating": _rotating_digit,
         "pair": lambda n, seed, digits: _mnist_pair(digits, n, seed)}


def _centre(K: np.ndarray) -> np.ndarray:
    """H K H with H = I − 11ᵀ/n (3.49)."""
    return K - K.mean(axis=0) - K.mean(axis=1)[:, None] + K.mean()


def gaussian_width(X: np.ndarray, k: int = 4) -> float:
    """σ of the thesis' footnote 4: the RMS distance from each input to its k nearest neighbours."""
    _, dist = knn_indices(X, k)
    return float(np.sqrt(np.mean(dist ** 2)))


def standard_kernels(X: np.ndarray, degree: int, sigma: float) -> dict[str, np.ndarray]:
    """Linear, polynomial (1 + xᵀy)^p and Gaussian exp(−‖x − y‖²/2σ²) kernel matrices."""
    sq = np.sum(X * X, axis=1)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)
    return {"linear": X @ X.T, "polynomial": polynomial_kernel(X, degree=degree, gamma=1.0, coef0=1.0),
            "Gaussian": np.exp(-D2 / (2.0 * sigma ** 2))}


def spectrum(K: np.ndarray) -> np.ndarray:
    """Eigenvalues of the centred kernel, largest first, divided by their sum (Fig. 3.35's normalisation)."""
    w = np.linalg.eigvalsh(_centre(K))[::-1]
    return w / np.sum(w)


def dims_for(fractions: np.ndarray, share: float) -> int:
    """How many leading eigenvalues hold ``share`` of the trace."""
    return int(np.searchsorted(np.cumsum(fractions), share) + 1)


def kernel_pca(K: np.ndarray, d: int) -> np.ndarray:
    """The first d kernel principal components of the centred K (3.49)."""
    return spectral_embedding(_centre(K), d)[0]


def _kernel_study(X: np.ndarray, mvu: dict, degree: int, sigma: float, d: int) -> dict:
    kernels = {**standard_kernels(X, degree, sigma), "MVU": mvu["K"]}
    out = {}
    for name, K in kernels.items():
        s = spectrum(K)
        out[name] = {"spectrum": s[:20].tolist(), "dims95": dims_for(s, 0.95),
                     "dominant": int(np.sum(s > 0.01)), "embedding": kernel_pca(K, d)}
    return out


def _plot_kernel_study(study: dict, color, title: str, png: Path, dims: int = 2) -> None:
    fig, axes = plt.subplots(2, len(study), figsize=(3.2 * len(study), 6))
    for col, (name, entry) in enumerate(study.items()):
        Y = entry["embedding"]
        if dims == 3 and Y.shape[1] >= 3:
            axes[0, col].scatter(Y[:, 0], Y[:, 1], c=Y[:, 2], s=5, cmap="coolwarm")
        else:
            axes[0, col].scatter(Y[:, 0], Y[:, 1], c=color, s=5, cmap="viridis")
        axes[0, col].set_title(f"{name}: {entry['dims95']} dims hold 95%", fontsize=8)
        axes[0, col].set_xticks([])
        axes[0, col].set_yticks([])
        axes[1, col].bar(np.arange(1, len(entry["spectrum"]) + 1), entry["spectrum"], color="k")
        axes[1, col].set(ylim=(0, 1), xlabel="eigenvalue", ylabel="share of trace" if col == 0 else None)
    fig.suptitle(title, fontsize=9)
    _save(fig, png)


def _study_rows(study: dict) -> list[list]:
    return [[name, e["dims95"], e["dominant"], ", ".join(f"{v:.3f}" for v in e["spectrum"][:4])]
            for name, e in study.items()]


_STUDY_HEADER = ["kernel", "eigenvalues for 95% of trace", "eigenvalues > 1% of trace", "leading 4 (share)"]


def _mvu_note(mvu: dict) -> str:
    return (f"MVU kernel: {mvu['edges']} edges, status `{mvu['status']}`, {gap_text(mvu)}, "
            f"{mvu['cpu_s']:.0f} s CPU.")


def _json_study(study: dict) -> dict:
    return {name: {k: v for k, v in e.items() if k != "embedding"} for name, e in study.items()}


# ------------------------------------------------------------------------------------------ Table 3.2


def _exact_mvu_embedding(X: np.ndarray, d: int, k: int, seed: int) -> tuple[np.ndarray, dict]:
    start = time.process_time()
    instance = MVUInstance.from_points(X, k, "inequality", link=True, random_state=seed)
    result = solve(instance)
    Y = spectral_embedding(result.solution, d)[0]
    share = spectrum(result.solution)
    # how much of the unfolding the r-dimensional outputs keep: the reason tested for a low score
    return Y, {"status": result.status, "gap": float(result.relative_gap), "cpu_s": time.process_time() - start,
               "share_in_r": float(np.sum(share[:d])), "dims95": dims_for(share, 0.95)}


def _last_reason_test(png: Path) -> str:
    from .thesis_mvu_why import REASON_SUMMARY, last_reason_test  # it imports the reason tests, which import us

    return last_reason_test(png, REASON_SUMMARY["table3_2"])


def _swiss_row_standing(png: Path) -> str:
    from .thesis_mvu_trust import swiss_row_standing  # it imports this module

    return swiss_row_standing(png.parent)


def table3_2(config: dict, png: Path) -> Outcome:
    """Table 3.2 — local continuity, trust and intersection of ten embeddings on four data sets.

    Paper
    -----
    Olivetti faces (n = 400, r = 3), teapots (400, r = 2), a swiss roll (2,000, r = 2) and Frey
    faces (1,965, r = 3). MVU (the exact SDP) at k = 5, variational MVU with and without the
    conjugate-gradient refinement ("CG") on a Laplacian (Lap) or LLE basis, PCA, Isomap, hLLE,
    Laplacian eigenmaps and LLE at the table's k (15 for the swiss roll, 5 for teapots);
    local continuity (3.27), local trust (3.28) and neighbourhood intersection (3.29) at l = 15.
    The thesis finds MVU best on average in trust and intersection, near-perfect on the swiss
    roll and the teapots.

    Departures
    ----------
    - The faces and teapots are not available: scikit-learn's 8×8 digits (n = 1,797, r = 3) stand in
      for the faces and a rotating MNIST digit (n = 400, r = 2, k = 5 for every method as the teapot
      column) for the teapots; the swiss roll is the thesis' (noise 0.05).
    - The Olivetti and Frey faces columns are *data not available*; the published table shows them,
      ours has the digits in their place.
    - MVU is the inequality SDP (Sec. 3.1.6, with the angle edges), certified; the thesis' MVU row
      does not say which variant it solved. The LLE basis (Sec. 3.1.8) reconstructs each input from
      the same k = 5 neighbours as MVU's graph: the thesis does not give its k.
    - scikit-learn's hLLE needs k > r(r + 3)/2, so it has no cell at the teapot column's k = 5.
    - Our harmonic mean of the three measures is an extra column, not the thesis'; the thesis
      averages each measure over its four data sets.
    - The *digits disagreement* — our variational MVU scores below Isomap on digits while the
      thesis has MVU best — is tested by solving the exact SDP on the same data: if the exact MVU
      scores at Isomap's level or above, the gap is the variational approximation's, as the
      thesis' own faces columns show for variational MVU (CG) (intersection 0.120 and 0.131).
    """
    l = config["l"]
    sets = {"swiss roll": (_swiss(config["n_swiss"], config["seed"]), 2, 15),
            "rotating digit": (_rotating_digit(config["n_rotating"], config["seed"]), 2, 5),
            "digits": (load_digits().data[:config["n_digits"]] / 16.0, 3, 15)}
    k_mvu = config["k_mvu"]
    methods = {
        "MVU": lambda X, d, k, s: _exact_mvu_embedding(X, d, k_mvu, s),
        "var. MVU (CG) (LLE)": lambda X, d, k, s: _variational_embedding(X, d, k_mvu, basis="lle"),
        "var. MVU (CG) (Lap)": lambda X, d, k, s: _variational_embedding(X, d, k_mvu),
        "var. MVU (LLE)": lambda X, d, k, s: _variational_embedding(X, d, k_mvu, refine=False, basis="lle"),
        "var. MVU (Lap)": lambda X, d, k, s: _variational_embedding(X, d, k_mvu, refine=False),
        "PCA": lambda X, d, k, s: (PCA(d).fit_transform(X), {}),
        "Isomap": lambda X, d, k, s: (Isomap(n_neighbors=k, n_components=d).fit_transform(X), {}),
        "hLLE": lambda X, d, k, s: (LocallyLinearEmbedding(n_neighbors=k, n_components=d, method="hessian",
                                                           eigen_solver="dense", random_state=s).fit_transform(X), {}),
        "Lap": lambda X, d, k, s: (SpectralEmbedding(n_components=d, n_neighbors=k, random_state=s).fit_transform(X),
                                   {}),
        "LLE": lambda X, d, k, s: (LocallyLinearEmbedding(n_neighbors=k, n_components=d, random_state=s)
                                   .fit_transform(X), {}),
    }
    raw = []
    for data, (X, d, k) in sets.items():
        for method, embed in methods.items():
            start = time.process_time()
            try:
                Y, info = embed(X, d, k, config["seed"])
            except (ValueError, np.linalg.LinAlgError) as error:          # hLLE needs k > d(d+3)/2
                raw.append({"data": data, "method": method, "error": str(error)})
                continue
            c, t, i = local_continuity(X, Y, l), local_trust(X, Y, l), neighborhood_intersection(X, Y, l)
            raw.append({"data": data, "method": method, "n": int(X.shape[0]), "r": d, "k": k_mvu if "MVU" in method
                        else k, "continuity": c, "trust": t, "intersection": i, "harmonic": _harmonic([c, t, i]),
                        "cpu_s": time.process_time() - start, **info})
    by = {(r["data"], r["method"]): r for r in raw}

    def cell(data, method):
        r = by.get((data, method), {})
        if "continuity" not in r:
            return "—"
        return f"{r['continuity']:.3f} / {r['trust']:.3f} / {r['intersection']:.3f} [{r['harmonic']:.3f}]"

    ours = _md_table(["method", *sets], [[m, *(cell(s, m) for s in sets)] for m in methods])
    ours += (f"\n\ncontinuity / trust / intersection at l = {l} [harmonic mean]; MVU and variational MVU at "
             f"k = {k_mvu}. Exact MVU: " + "; ".join(
                 f"{s} `{by[(s, 'MVU')]['status']}` ({gap_text(by[(s, 'MVU')])}), its r leading eigenvalues "
                 f"hold {by[(s, 'MVU')]['share_in_r']:.1%} of the trace, 95% needs {by[(s, 'MVU')]['dims95']}"
                 for s in sets) + ". Olivetti faces and Frey faces: data not available (the digits stand in).")
    pub_rows = [[m, *(" / ".join(f"{v:.3f}" for v in PUBLISHED_TABLE3_2[m][c]) for c in (*TABLE3_2_SETS, "average"))]
                for m in PUBLISHED_TABLE3_2]
    published = _md_table(["method", *TABLE3_2_SETS, "average of 4 sets"], pub_rows)

    # swiss roll: the thesis' own data; does the ordering of the methods by intersection agree?
    ours_sw = {m: by[("swiss roll", m)]["intersection"] for m in PUBLISHED_TABLE3_2 if "continuity" in
               by.get(("swiss roll", m), {})}
    pub_sw = {m: PUBLISHED_TABLE3_2[m]["swiss roll"][2] for m in ours_sw}
    best_ours, best_pub = max(ours_sw, key=ours_sw.get), max(pub_sw, key=pub_sw.get)
    exact = by[("digits", "MVU")]
    iso = by[("digits", "Isomap")]
    var = by[("digits", "var. MVU (CG) (Lap)")]
    decided = exact["harmonic"] >= iso["harmonic"]

    def certified(r):
        # an embedding is MVU's only when its solve is a certified optimum: say which solves are, and which not
        return (f" (a certified optimum, {gap_text(r)})" if r.get("status") == "optimal" else
                f" (its solve ended `{r.get('status')}`, {gap_text(r)}: not a certified optimum)")

    agreement = (f"Swiss roll (the thesis' data): the best intersection is ours {best_ours} "
                 f"({ours_sw[best_ours]:.3f}), the thesis' {best_pub} ({pub_sw[best_pub]:.3f}); exact MVU"
                 f"{certified(by[('swiss roll', 'MVU')])} scores "
                 f"{by[('swiss roll', 'MVU')]['continuity']:.3f} / {by[('swiss roll', 'MVU')]['trust']:.3f} / "
                 f"{by[('swiss roll', 'MVU')]['intersection']:.3f} against the published 1.000 / 0.990 / 0.990, "
                 f"with {by[('swiss roll', 'MVU')]['share_in_r']:.1%} of its variance in the 2 dimensions kept. "
                 f"Digits disagreement, tested: the exact SDP{certified(exact)} scores "
                 f"{exact['harmonic']:.3f} (harmonic mean) against "
                 f"variational MVU (CG)'s {var['harmonic']:.3f} and Isomap's {iso['harmonic']:.3f}, keeping "
                 f"{exact['share_in_r']:.1%} of its variance in r = 3 dimensions (95% needs {exact['dims95']}) — "
                 + ("so the low digits score is the variational approximation's, not MVU's."
                    if decided else "so the exact SDP does not close the gap either: on 8×8 digits at r = 3 "
                    "Isomap stays ahead in our harmonic mean, a score the thesis does not use (it ranks the "
                    "methods measure by measure, MVU best on average in trust and intersection).")
                 + " The candidate reasons — the inequality relaxation on the roll, the output dimension, the "
                 "table's k, the data set, the SDP variant, smooth image manifolds, sampling noise, and the thesis' "
                 "own per-measure criterion on fresh seeds (`table3_2_reasons_measures`), the reading of local "
                 "trust (`table3_2_reasons_trust`), the equality SDP on the roll "
                 "(`table3_2_reasons_roll_equality`) and a noise-free roll (`table3_2_reasons_roll_noise`) — are "
                 "tested by the "
                 "`table3_2_reasons` sections that follow, each with the decision its rule, fixed before its run, "
                 "gives. Digits row:" + _last_reason_test(png) + " " + _swiss_row_standing(png))
    verdict = "reproduced in trend" if best_ours == best_pub and decided else "differs"
    fig, axes = plt.subplots(1, len(sets), figsize=(4.2 * len(sets), 3.6), sharey=True)
    names = list(methods)
    for ax, data in zip(axes, sets, strict=True):
        vals = [[by.get((data, m), {}).get(q, np.nan) for m in names] for q in ("continuity", "trust", "intersection")]
        quality = zip(("continuity", "trust", "intersection"), vals, strict=True)
        for off, (q, v) in zip((-0.27, 0.0, 0.27), quality, strict=True):
            ax.bar(np.arange(len(names)) + off, v, 0.27, label=q)
        ax.set_xticks(np.arange(len(names)), names, rotation=70, fontsize=7)
        ax.set(title=data, ylim=(0, 1.05))
    axes[0].legend(fontsize=7)
    _save(fig, png)
    return Outcome(published=published, ours=ours, rows=raw, verdict=verdict, agreement=agreement)


# ------------------------------------------------------------------------------------------ Sec. 3.3


def fig3_32(config: dict, png: Path) -> Outcome:
    """Fig. 3.32 — kernel PCA on a swiss roll with the linear, polynomial, Gaussian and MVU kernels.

    Paper
    -----
    n = 800 swiss-roll inputs with low-variance noise; MVU kernel with k = 4; polynomial p = 4,
    Gaussian σ = 1.45 (the standard deviation within k = 4 neighbourhoods). Only the MVU kernel
    has two dominant eigenvalues; the linear kernel has three; the polynomial and Gaussian
    spectra spread over many more dimensions.

    Departures
    ----------
    - σ is computed by our reading of the footnote (the RMS distance to the 4 nearest
      neighbours) on our roll (noise 0.05); the polynomial kernel is (1 + xᵀy)^p.
    - "Dominant" is counted as eigenvalues above 1% of the trace (MVU, linear), and the spread of
      the polynomial and Gaussian spectra as the number of eigenvalues holding 95% of the trace:
      the thesis gives pictures, not counts. *Reproduced* asks, beyond the counts, for MVU's
      second eigenvalue to be within 0.01 of that of an isometric unrolling (the covariance of
      the roll's arc length and height).
    """
    X, params = swiss_roll(config["n"], noise=0.05, random_state=config["seed"])
    # the spectrum of an isometric unrolling: the covariance of (arc length, height)
    flat = np.column_stack([roll_arc_length(params[:, 0]), params[:, 1]])
    isometric = np.sort(np.linalg.eigvalsh(np.cov(flat.T)))[::-1]
    isometric = isometric / isometric.sum()
    mvu = _mvu("swiss", config["n"], config["k"], config["seed"])
    sigma = gaussian_width(X, config["k"])
    study = _kernel_study(X, mvu, config["degree"], sigma, 2)
    _plot_kernel_study(study, np.arctan2(X[:, 2], X[:, 0]), f"swiss roll n = {config['n']}, σ = {sigma:.2f}", png)
    dom = {name: e["dominant"] for name, e in study.items()}
    spread = {name: study[name]["dims95"] for name in ("polynomial", "Gaussian")}
    ok = dom["MVU"] == 2 and dom["linear"] == 3 and min(spread.values()) > 3
    mvu_share = study["MVU"]["spectrum"][:2]
    exact = ok and abs(mvu_share[1] - isometric[1]) <= 0.01
    return Outcome(
        published="MVU: 2 dominant eigenvalues; linear: 3; polynomial (p = 4) and Gaussian (σ = 1.45): spread "
                  "over many more (figure, no numbers).",
        ours=_md_table(_STUDY_HEADER, _study_rows(study)) + f"\n\nσ = {sigma:.3f}. " + _mvu_note(mvu),
        rows={"sigma": sigma, "kernels": _json_study(study), "mvu_status": mvu["status"], "mvu_gap": mvu["gap"],
              "isometric_spectrum": isometric.tolist()},
        verdict="reproduced" if exact else "reproduced in trend" if ok else "differs",
        agreement=(f"Dominant eigenvalues (above 1% of the trace): MVU {dom['MVU']}, linear {dom['linear']}; the "
                   "polynomial and Gaussian spectra spread over " + " and ".join(f"{v}" for v in spread.values())
                   + " eigenvalues for 95% of the trace (" + " and ".join(f"{dom[k]}" for k in spread)
                   + " above 1% of it), against the 3 of the inputs"
                   + (" — as the thesis describes" if ok else " — not the thesis' 2 / 3 / many")
                   + f". MVU's two eigenvalues hold {mvu_share[0]:.3f} and {mvu_share[1]:.3f} of the trace, an "
                   f"isometric unrolling of this roll {isometric[0]:.3f} and {isometric[1]:.3f}"
                   + (": the unrolling is isometric." if exact else ": the MVU kernel unrolls the sheet longer and "
                      "thinner than an isometry (its outputs are not the thesis' clean rectangle), so only the trend "
                      "is reproduced.")))


def circle_measures(Y: np.ndarray, angle_deg: np.ndarray) -> dict[str, float]:
    """How well 2-D outputs form a circle traversed in rotation order: the circular correlation of the
    outputs' polar angle with the rotation angle (1 for a circle in order, either direction) and the
    coefficient of variation of their radii."""
    z = (Y[:, 0] - Y[:, 0].mean()) + 1j * (Y[:, 1] - Y[:, 1].mean())
    phase = np.exp(1j * np.angle(z))
    turn = np.exp(1j * np.deg2rad(angle_deg))
    correlation = max(abs(np.mean(phase * np.conj(turn))), abs(np.mean(phase * turn)))
    radius = np.abs(z)
    return {"circular_correlation": float(correlation), "radius_cv": float(radius.std() / radius.mean())}



def fig3_33(config: dict, png: Path) -> Outcome:
    """Fig. 3.33 — kernel PCA on images of a rotating object: the MVU kernel maps them to a circle.

    Paper
    -----
    400 images of a teapot rotated through 360° (23,028 pixels); MVU kernel with k = 4,
    polynomial p = 4, Gaussian σ = 1541 (footnote 4's rule). The MVU kernel concentrates the
    variance in two dimensions and maps the images to a circle; the other kernels reveal no
    structure and their spectra do not show the low intrinsic dimension.

    Departures
    ----------
    - The teapot images are not available: one MNIST test digit rotated through 360° in
      ``n`` equal steps (28×28, bilinear) stands in, a closed one-dimensional image manifold.
    - "A circle" is measured: the angle of each image's two-dimensional kernel-PCA output
      against its rotation angle (circular correlation, 1 for a perfect circle traversed in
      order) and the relative spread of the radii.
    """
    X = _rotating_digit(config["n"], config["seed"])
    mvu = _mvu("rotating", config["n"], config["k"], config["seed"])
    sigma = gaussian_width(X, config["k"])
    study = _kernel_study(X, mvu, config["degree"], sigma, 2)
    truth = np.arange(config["n"]) * 2 * np.pi / config["n"]
    circle = {name: circle_measures(e["embedding"], np.rad2deg(truth)) for name, e in study.items()}
    _plot_kernel_study(study, truth, f"rotating digit n = {config['n']}, σ = {sigma:.2f}", png)
    rows = [[*r, f"{circle[r[0]]['circular_correlation']:.3f}", f"{circle[r[0]]['radius_cv']:.3f}"]
            for r in _study_rows(study)]
    others = max(circle[k]["circular_correlation"] for k in KERNELS[:3])
    ok = study["MVU"]["dominant"] == 2 and circle["MVU"]["circular_correlation"] > 0.99
    return Outcome(
        published="MVU: two dimensions, a circle in rotation order; linear, polynomial (p = 4), Gaussian: no "
                  "structure, spectra spread (figure, no numbers).",
        ours=_md_table([*_STUDY_HEADER, "circular correlation", "radius CV"], rows) + f"\n\nσ = {sigma:.1f}. "
        + _mvu_note(mvu),
        rows={"sigma": sigma, "kernels": _json_study(study), "circle": circle, "mvu_status": mvu["status"]},
        verdict="reproduced in trend" if ok else "differs",
        agreement=(f"The MVU kernel has {study['MVU']['dominant']} eigenvalues above 1% and its outputs follow the "
                   f"rotation with circular correlation {circle['MVU']['circular_correlation']:.3f} (radius CV "
                   f"{circle['MVU']['radius_cv']:.3f}); the best other kernel reaches {others:.3f}. In trend, on a "
                   "stand-in for the teapot."))


def fig3_34(config: dict, png: Path) -> Outcome:
    """Fig. 3.34 — Gaussian kernel PCA maps patches of a manifold to orthogonal directions.

    Paper
    -----
    The first three Gaussian-kernel principal components of the swiss roll (Fig. 3.32) and the
    teapots (Fig. 3.33): different patches of the manifold go to orthogonal parts of feature
    space, so the embedding's dimension is the number of non-overlapping patches of scale σ.

    Departures
    ----------
    - The rotating digit stands in for the teapots (as in Fig. 3.33).
    - Measured rather than pictured: the number of eigenvalues holding 95% of the trace, against
      the number of σ-patches, estimated as the manifold's extent (the largest graph distance on
      the k = 4 graph) divided by 2σ.
    """
    out, fig_rows = {}, []
    fig, axes = plt.subplots(1, 2, figsize=(9, 4), subplot_kw={"projection": "3d"})
    for ax, (name, make) in zip(axes, (("swiss roll", _swiss), ("rotating digit", _rotating_digit)), strict=True):
        X = make(config["n"], config["seed"])
        sigma = gaussian_width(X, config["k"])
        K = standard_kernels(X, 2, sigma)["Gaussian"]
        s = spectrum(K)
        Y = kernel_pca(K, 3)
        extent = float(np.max(geodesic_distances(X, config["k"])))
        out[name] = {"sigma": sigma, "dims95": dims_for(s, 0.95), "patches": extent / (2 * sigma),
                     "spectrum": s[:20].tolist()}
        fig_rows.append([name, f"{sigma:.2f}", out[name]["dims95"], f"{out[name]['patches']:.0f}"])
        ax.scatter(Y[:, 0], Y[:, 1], Y[:, 2], c=np.arange(len(X)) if name != "swiss roll" else
                   np.arctan2(X[:, 2], X[:, 0]), s=4)
        ax.set_title(f"{name}: Gaussian kernel PCA", fontsize=8)
    _save(fig, png)
    ok = all(v["dims95"] > 3 for v in out.values())
    return Outcome(
        published="Patches of the swiss roll and of the teapot manifold mapped to orthogonal directions (figure).",
        ours=_md_table(["data", "σ", "eigenvalues for 95% of trace", "extent / 2σ"], fig_rows),
        rows=out, verdict="reproduced in trend" if ok else "differs",
        agreement=("The Gaussian kernel needs " + " and ".join(f"{v['dims95']} dimensions ({k}, ~{v['patches']:.0f} "
                                                               "patches)" for k, v in out.items())
                   + " for 95% of its variance where the manifolds have 2 and 1: "
                   + ("patches spread over many directions, as the thesis shows." if ok else "not many.")))


def fig3_35(config: dict, png: Path) -> Outcome:
    """Fig. 3.35 — kernel PCA spectra on handwritten twos and threes.

    Paper
    -----
    953 USPS images (16×16) of twos and threes; the eigenvalues of the linear, polynomial
    (p = 4 as in Fig. 3.32), Gaussian and MVU (k = 4) kernels, normalised by their trace: the MVU
    kernel concentrates the variance in significantly fewer dimensions.

    Departures
    ----------
    - USPS is not available: 953 vendored MNIST test images at 20×20 of twos and threes, scaled to
      [0, 1]; σ by footnote 4's rule.
    - "Fewer dimensions" is counted as the eigenvalues holding 95% of the trace.
    """
    X, y = _mnist_pair((2, 3), config["n"], config["seed"])
    mvu = _mvu("pair", config["n"], config["k"], config["seed"], ((2, 3),))
    sigma = gaussian_width(X, config["k"])
    study = _kernel_study(X, mvu, config["degree"], sigma, 2)
    _plot_kernel_study(study, y, f"twos and threes n = {config['n']}, σ = {sigma:.2f}", png)
    dims = {name: e["dims95"] for name, e in study.items()}
    ok = dims["MVU"] < min(v for k, v in dims.items() if k != "MVU")
    return Outcome(
        published="The MVU kernel's spectrum concentrates in far fewer dimensions than the linear, polynomial and "
                  "Gaussian kernels' (figure, no numbers).",
        ours=_md_table(_STUDY_HEADER, _study_rows(study)) + f"\n\nσ = {sigma:.3f}. " + _mvu_note(mvu),
        rows={"sigma": sigma, "kernels": _json_study(study), "mvu_status": mvu["status"], "mvu_gap": mvu["gap"]},
        verdict="reproduced in trend" if ok else "differs",
        agreement=("Eigenvalues for 95% of the trace: " + ", ".join(f"{k} {v}" for k, v in dims.items())
                   + (" — MVU's is the fewest." if ok else " — MVU's is not the fewest.")))


def table3_3(config: dict, png: Path) -> Outcome:
    """Table 3.3 — SVM test error with linear, polynomial, Gaussian and MVU kernels on digit pairs.

    Paper
    -----
    USPS digit pairs 1 vs 2, 1 vs 3, 2 vs 8, 8 vs 9; 810 training and 90 test images; the MVU
    kernel learned with k = 4 on training and test images together, ignoring labels; polynomial
    p = 2, Gaussian σ = 1; percent test error averaged over 10 random 90/10 splits. The MVU
    kernel does much worse than the others, worse even than the linear kernel.

    Departures
    ----------
    - USPS is not available: 900 vendored MNIST test images at 20×20 per pair (half of each
      digit), scaled to [0, 1]; σ = 1 is in USPS's units, so σ is footnote 4's rule on our data.
    - The thesis gives no SVM cost: C = ``C`` for every kernel; the splits are stratified.
    - The thesis reports MVU worst in every pair; our verdict asks for MVU worst on average over
      the pairs, with any pair where it is not worst within two standard errors of the paired
      difference over the splits (with 90 test images one error is 1.1 points).
    """
    raw = []
    for a, b in config["pairs"]:
        X, y = _mnist_pair((a, b), config["n"], config["seed"])
        mvu = _mvu("pair", config["n"], config["k"], config["seed"], ((a, b),))
        kernels = {**standard_kernels(X, config["degree"], gaussian_width(X, config["k"])), "MVU": mvu["K"]}
        errors = {name: [] for name in kernels}
        splits = StratifiedShuffleSplit(config["splits"], test_size=0.1, random_state=config["seed"])
        for train, test in splits.split(X, y):
            for name, K in kernels.items():
                model = SVC(kernel="precomputed", C=config["C"]).fit(K[np.ix_(train, train)], y[train])
                errors[name].append(100.0 * np.mean(model.predict(K[np.ix_(test, train)]) != y[test]))
        raw.append({"pair": f"{a} vs {b}", "mvu_status": mvu["status"], "mvu_gap": mvu["gap"], "per_split": errors,
                    **{name: float(np.mean(v)) for name, v in errors.items()}})
    worst = sum(r["MVU"] >= max(r[k] for k in KERNELS[:3]) for r in raw)
    above_linear = sum(r["MVU"] > r["linear"] for r in raw)
    mean = {name: float(np.mean([r[name] for r in raw])) for name in KERNELS}
    # where MVU is not the worst: is the gap to the worst kernel within the splits' noise?
    # (standard error of the mean paired difference over the splits)
    exceptions = []
    for r in raw:
        top = max(KERNELS[:3], key=lambda k: r[k])
        if r["MVU"] < r[top]:
            diff = np.subtract(r["per_split"][top], r["per_split"]["MVU"])
            se = float(np.std(diff, ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else float("inf")
            exceptions.append({"pair": r["pair"], "worst": top, "difference": float(np.mean(diff)), "se": se})
    within_noise = all(e["difference"] <= 2 * e["se"] for e in exceptions)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for off, name in zip((-0.3, -0.1, 0.1, 0.3), KERNELS, strict=True):
        ax.bar(np.arange(len(raw)) + off, [r[name] for r in raw], 0.2, label=name)
    ax.set_xticks(np.arange(len(raw)), [r["pair"] for r in raw])
    ax.set(ylabel="test error %", title="SVM, precomputed kernels")
    ax.legend(fontsize=7)
    _save(fig, png)
    ok = mean["MVU"] == max(mean.values()) and within_noise
    return Outcome(
        published=_md_table(["digits", *KERNELS], [[f"{a} vs {b}", *(f"{v:.2f}" for v in vals)]
                                                  for (a, b), vals in PUBLISHED_TABLE3_3.items()]),
        ours=_md_table(["digits", *KERNELS, "MVU status"],
                       [[r["pair"], *(f"{r[k]:.2f}" for k in KERNELS), r["mvu_status"]] for r in raw])
        + f"\n\nPercent test error, mean of {config['splits']} stratified 90/10 splits; C = {config['C']}.",
        rows=raw, verdict="reproduced in trend" if ok else "differs",
        agreement=(f"The MVU kernel has the highest error in {worst} of {len(raw)} pairs and is worse than the linear "
                   f"kernel in {above_linear} (published: highest in 4 of 4, worse than linear in 4 of 4); mean over "
                   "the pairs " + ", ".join(f"{k} {v:.2f}%" for k, v in mean.items()) + ". "
                   + "".join(f"In {e['pair']} {e['worst']} is worse than MVU by {e['difference']:.2f} points, "
                             f"{e['difference'] / e['se']:.1f} standard errors of the paired split-to-split "
                             "difference. " for e in exceptions)
                   + ("MVU is worst on average and every exception is within two standard errors: in trend."
                      if ok else "The ordering differs beyond the splits' noise.")))


def fig3_36(config: dict, png: Path) -> Outcome:
    """Fig. 3.36 — labels separable in the input space are not separable on the unfolded roll.

    Paper
    -----
    Inputs on a swiss roll labelled by a plane (linearly separable, black and white); unfolding
    the manifold makes the decision boundary more complicated — the thesis' explanation of
    Table 3.3.

    Departures
    ----------
    - The labelling plane is x₁ = 0 (the roll's first coordinate), our choice; the figure is
      measured by a linear SVM's training accuracy on the inputs and on the two-dimensional MVU
      outputs (k = 4, the roll of Fig. 3.32).
    """
    X = _swiss(config["n"], config["seed"])
    mvu = _mvu("swiss", config["n"], config["k"], config["seed"])
    Y = spectral_embedding(mvu["K"], 2)[0]
    labels = (X[:, 0] > 0).astype(int)
    acc = {}
    for name, Z in (("inputs", X), ("MVU outputs", Y)):
        Z = (Z - Z.mean(axis=0)) / Z.std(axis=0)
        acc[name] = float(LinearSVC(C=100.0, max_iter=20000).fit(Z, labels).score(Z, labels))
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.5))
    axes[0].scatter(X[:, 0], X[:, 2], c=labels, cmap="gray", s=5, edgecolors="0.5", linewidths=0.2)
    axes[0].set_title(f"inputs (x₁, x₃): linear accuracy {acc['inputs']:.3f}", fontsize=8)
    axes[1].scatter(Y[:, 0], Y[:, 1], c=labels, cmap="gray", s=5, edgecolors="0.5", linewidths=0.2)
    axes[1].set_title(f"MVU outputs: linear accuracy {acc['MVU outputs']:.3f}", fontsize=8)
    _save(fig, png)
    ok = acc["inputs"] >= 0.99 and acc["MVU outputs"] <= acc["inputs"] - 0.1
    return Outcome(
        published="Separable by a plane in the input space; a complicated boundary after unfolding (figure).",
        ours=_md_table(["space", "linear SVM training accuracy"], [[k, f"{v:.3f}"] for k, v in acc.items()])
        + "\n\n" + _mvu_note(mvu),
        rows={"accuracy": acc, "mvu_status": mvu["status"]}, verdict="reproduced" if ok else "differs",
        agreement=(f"A linear SVM separates the labels with accuracy {acc['inputs']:.3f} in the input space and "
                   f"{acc['MVU outputs']:.3f} on the unfolded roll" + (": unfolding breaks linear separability."
                                                                        if ok else ".")))


def isomap_matrix(X: np.ndarray, k: int) -> np.ndarray:
    """Isomap's similarity matrix −½ H G² H from the geodesic distances G on the k-NN graph.

    A disconnected graph is linked as MVU's is (Sec. 3.1.12), so both use the same components.
    """
    return -0.5 * _centre(geodesic_distances(X, k) ** 2)


def geodesic_distances(X: np.ndarray, k: int) -> np.ndarray:
    """Shortest-path distances on the (linked) k-NN graph without MVU's angle edges."""
    edges, _ = neighborhood_graph(X, k, angles=False)
    edges, D = link_components(X, edges, random_state=0)
    W = np.zeros((len(X), len(X)))
    W[edges[:, 0], edges[:, 1]] = W[edges[:, 1], edges[:, 0]] = np.sqrt(D)
    return shortest_path(W, directed=False)


def fig3_37(config: dict, png: Path) -> Outcome:
    """Fig. 3.37 — the twenty leading-magnitude eigenvalues of Isomap's and MVU's matrices.

    Paper
    -----
    Teapot images and handwritten digits: Isomap's similarity matrix has negative eigenvalues,
    in some cases comparable in magnitude to its dominant positive ones; MVU's kernel is PSD.

    Departures
    ----------
    - The rotating digit stands in for the teapots and MNIST twos and threes (Fig. 3.35's set) for
      the thesis' digits; Isomap on the same k = 4 graph as MVU (without MVU's angle edges).
    """
    sets = {"rotating digit": (_rotating_digit(config["n_rotating"], config["seed"]),
                               _mvu("rotating", config["n_rotating"], config["k"], config["seed"])),
            "twos and threes": (_mnist_pair((2, 3), config["n_digits"], config["seed"])[0],
                                _mvu("pair", config["n_digits"], config["k"], config["seed"], ((2, 3),)))}
    out = {}
    fig, axes = plt.subplots(1, len(sets), figsize=(9, 3.5))
    for ax, (name, (X, mvu)) in zip(axes, sets.items(), strict=True):
        entry = {}
        for method, K in (("Isomap", isomap_matrix(X, config["k"])), ("MVU", _centre(mvu["K"]))):
            w = np.linalg.eigvalsh(K)
            lead = w[np.argsort(-np.abs(w))][:20]
            entry[method] = {"leading": (lead / np.abs(lead[0])).tolist(), "most_negative": float(w[0] / w[-1])}
            ax.plot(np.arange(1, 21), entry[method]["leading"], "o-" if method == "MVU" else "s--", label=method)
        ax.axhline(0, color="0.6", lw=0.5)
        ax.set(title=name, xlabel="eigenvalue (by magnitude)", ylabel="÷ largest")
        ax.legend(fontsize=7)
        out[name] = entry
    _save(fig, png)
    iso_neg = {k: v["Isomap"]["most_negative"] for k, v in out.items()}
    mvu_neg = {k: v["MVU"]["most_negative"] for k, v in out.items()}
    ok = all(v < -0.01 for v in iso_neg.values()) and all(v > -1e-6 for v in mvu_neg.values())
    return Outcome(
        published="Isomap: negative eigenvalues, sometimes comparable to the dominant ones; MVU: none (figure).",
        ours=_md_table(["data", "Isomap: most negative ÷ largest", "MVU: most negative ÷ largest"],
                       [[k, f"{iso_neg[k]:.3f}", f"{mvu_neg[k]:.1e}"] for k in out]),
        rows=out, verdict="reproduced" if ok else "differs",
        agreement=("Isomap's most negative eigenvalue is " + ", ".join(f"{v:.3f}" for v in iso_neg.values())
                   + " of its largest; MVU's is ≥ " + f"{min(mvu_neg.values()):.1e}"
                   + (" (PSD to rounding), as the thesis shows." if ok else ".")))


EXPERIMENTS = (
    Experiment("table3_2", "Table 3.2 — continuity, trust and intersection of ten embeddings", table3_2,
               full={"n_swiss": 2000, "n_rotating": 400, "n_digits": 1797, "k_mvu": 5, "l": 15, "seed": 0},
               quick={"n_swiss": 200, "n_rotating": 60, "n_digits": 150, "k_mvu": 5, "l": 15, "seed": 0}),
    Experiment("fig3_32", "Fig. 3.32 — kernel PCA on a swiss roll under four kernels", fig3_32,
               full={"n": 800, "k": 4, "degree": 4, "seed": 0},
               quick={"n": 150, "k": 4, "degree": 4, "seed": 0}),
    Experiment("fig3_33", "Fig. 3.33 — kernel PCA on a rotating object (teapot stand-in)", fig3_33,
               full={"n": 400, "k": 4, "degree": 4, "seed": 0},
               quick={"n": 60, "k": 4, "degree": 4, "seed": 0}),
    Experiment("fig3_34", "Fig. 3.34 — Gaussian kernel PCA maps patches to orthogonal directions", fig3_34,
               full={"n": 800, "k": 4, "seed": 0}, quick={"n": 150, "k": 4, "seed": 0}),
    Experiment("fig3_35", "Fig. 3.35 — kernel PCA spectra on twos and threes", fig3_35,
               full={"n": 953, "k": 4, "degree": 4, "seed": 0}, quick={"n": 120, "k": 4, "degree": 4, "seed": 0}),
    Experiment("table3_3", "Table 3.3 — SVM error with four kernels on digit pairs", table3_3,
               full={"pairs": [[1, 2], [1, 3], [2, 8], [8, 9]], "n": 900, "k": 4, "degree": 2, "splits": 10,
                     "C": 1.0, "seed": 0},
               quick={"pairs": [[1, 2]], "n": 120, "k": 4, "degree": 2, "splits": 2, "C": 1.0, "seed": 0}),
    Experiment("fig3_36", "Fig. 3.36 — separable inputs, inseparable unfolding", fig3_36,
               full={"n": 800, "k": 4, "seed": 0}, quick={"n": 150, "k": 4, "seed": 0}),
    Experiment("fig3_37", "Fig. 3.37 — leading eigenvalues of Isomap and MVU", fig3_37,
               full={"n_rotating": 400, "n_digits": 953, "k": 4, "seed": 0},
               quick={"n_rotating": 60, "n_digits": 120, "k": 4, "seed": 0}),
)
