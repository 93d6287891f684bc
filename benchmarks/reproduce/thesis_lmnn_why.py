"""Further reason tests for the failed orderings of Table 2.1: iris (PCA-LMNN above PCA) and MNIST (the energy
rule not below kNN under the learned metric).

The first candidates of both (:func:`reproduce.thesis_lmnn.table2_1_iris`, over-training with k fixed, and
:func:`reproduce.thesis_lmnn.fig2_5_mnist`, the noise of one split) were refuted. Each function here tests one
more, states its hypothesis and the rule that decides it in its docstring (``Departures``, written before
the run), pairs its comparisons over the splits, and reports the result whichever way it falls; a refuted
candidate is said plainly with every candidate tested for the same ordering. The experiments are registered in
:mod:`reproduce.thesis_lmnn` (their paper), which this module's functions import at use.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Table 2.1, the SDP (2.11), the energy rule (2.12), Algorithm 3 (Sec. 2.1.7).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402

from sdpembed import LMNN  # noqa: E402
from sdpembed.datasets import load_mnist  # noqa: E402
from sdpembed.graphs import target_neighbors  # noqa: E402

from .common import Experiment, Outcome, parallel_map  # noqa: E402
from .numax import _md_table, _save  # noqa: E402

#: The iris candidate tested before ``table2_1_iris_stop``, refuted by its section.
IRIS_REFUTED = ("over-training with k fixed at 3 (`table2_1_iris`)",)

#: The MNIST candidate tested before ``table2_1_mnist_size``, refuted by its section.
MNIST_REFUTED = ("the noise of one split (`fig2_5_mnist`)",)

#: Standard errors a difference must clear: 2, Bonferroni-corrected over the four stopping points of the iris test
#: (one-sided 2.3 % / 4 ≈ 0.6 %, i.e. 2.5 standard errors).
IRIS_Z = 2.5


def _base():
    """The paper module (:mod:`reproduce.thesis_lmnn`), which registers this module's experiments."""
    from . import thesis_lmnn

    return thesis_lmnn


def refuted_sentence(earlier: tuple[str, ...], this: str) -> str:
    """The plain statement that no candidate survived: every earlier one and this section's (``this``)."""
    return "Reason not found; tested and refuted: " + "; ".join((*earlier, this)) + "."


# ------------------------------------------------------------------------------------------ iris: an early stop


def _iris_stop_row(job: tuple[int, dict]) -> dict:
    """One iris split of :func:`table2_1_iris_stop`: PCA's test kNN error, the certified optimum's, and each
    stopping point of Algorithm 3 from M = I (its test kNN error, relative excess loss and iterations)."""
    split, config = job
    base = _base()
    data = base._split("iris", split, {"seed": config["seed"]})
    Xtr, Xte, ytr, yte = data["Xtr"], data["Xte"], data["ytr"], data["yte"]
    k, mu = config["k"], config["mu"]
    row = {"pca": base._euclidean_errors(Xtr, ytr, Xte, yte, k)[1]}
    optimum = None
    for key, options in _iris_runs(config).items():
        model, _ = base._fit(LMNN(k, mu, **options), Xtr, ytr)
        objective = float(model.result_.objective)
        optimum = objective if optimum is None else optimum            # the first run is the certified optimum
        row[key] = {"test_knn": base._euclidean_errors(model.transform(Xtr), ytr, model.transform(Xte), yte, k)[1],
                    "excess": (objective - optimum) / max(abs(optimum), 1.0),
                    "iterations": int(model.result_.iterations), "status": model.result_.status}
    return row


def _iris_runs(config: dict) -> dict:
    """The solves of each iris split: the certified optimum first, then Algorithm 3's stopping points."""
    runs = {"optimum": {"method": "fast"}, "own rule": {"method": "gradient", "max_iter": config["max_iter"]}}
    runs.update({f"{b} iterations": {"method": "gradient", "max_iter": b, "tol": 0.0} for b in config["budgets"]})
    return runs


def _paired_values(rows: list[dict], a, b) -> tuple[float, float]:
    """Mean and standard error of the per-split difference a(row) − b(row)."""
    d = np.array([a(r) - b(r) for r in rows])
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")


def table2_1_iris_stop(config: dict, png: Path) -> Outcome:
    """Table 2.1, iris — does an early stop of the thesis' solver explain PCA-LMNN below PCA on iris?

    Paper
    -----
    Table 2.1, iris (100 random 70/30 splits): PCA-LMNN kNN test error 4.08 % against PCA's
    4.87 %. The thesis' solver is Algorithm 3 (projected sub-gradient from M = I with an adaptive
    step and active sets, Sec. 2.1.7), whose stopping point is not stated. Our certified optimum
    of (2.11) is above PCA on the same kind of splits (+0.31 ± 0.16 points); on wine an
    Algorithm 3 run stopped early bracketed the thesis' value (``table2_1_wine``). Hypothesis,
    fixed before this run: the thesis' run ended short of the optimum and the early stop
    regularises the 4×4 metric. Supported if at some stopping point of Algorithm 3 (its own
    stopping rule, or ``budgets`` iterations) the mean test kNN error is below PCA's and the
    paired difference Algorithm 3 − optimum over the splits is below zero by more than 2.5
    standard errors (2 standard errors, Bonferroni-corrected over the four stopping points);
    refuted otherwise.

    Departures
    ----------
    - Algorithm 3 is sdpembed's implementation (``LMNN(method="gradient")``, as in
      ``table2_1_wine``), run from M = I with its own stopping rule (at most ``max_iter``
      iterations) and stopped after each of ``budgets`` iterations.
    - scikit-learn's iris (150 points; the thesis' table lists 128), the splits of Table 2.1
      (seeds ``seed`` + split, features unscaled, PCA a rotation); k = 3, μ = 0.5.
    """
    rows = parallel_map(_iris_stop_row, [(split, config) for split in range(config["splits"])], config["workers"])
    runs = list(_iris_runs(config))
    stops = runs[1:]
    summary = {}
    for key in runs:
        errors = np.array([r[key]["test_knn"] for r in rows])
        vs_opt = _paired_values(rows, lambda r, key=key: r[key]["test_knn"], lambda r: r["optimum"]["test_knn"])
        vs_pca = _paired_values(rows, lambda r, key=key: r[key]["test_knn"], lambda r: r["pca"])
        summary[key] = {"test_knn": float(errors.mean()), "test_knn_se": float(errors.std(ddof=1) / np.sqrt(len(rows))),
                        "minus_optimum": vs_opt[0], "minus_optimum_se": vs_opt[1], "minus_pca": vs_pca[0],
                        "minus_pca_se": vs_pca[1], "excess": float(np.mean([r[key]["excess"] for r in rows])),
                        "iterations": float(np.mean([r[key]["iterations"] for r in rows])),
                        "optimal": sum(r[key]["status"] == "optimal" for r in rows)}
    pca = float(np.mean([r["pca"] for r in rows]))
    supporting = [key for key in stops if summary[key]["test_knn"] < pca
                  and summary[key]["minus_optimum"] < -IRIS_Z * summary[key]["minus_optimum_se"]]
    holds = bool(supporting)
    published = _base().PUBLISHED["iris"]["test_knn"]
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    labels = ["PCA", *runs]
    ax.barh(np.arange(len(labels)), [pca, *(summary[key]["test_knn"] for key in runs)],
            xerr=[0.0, *(summary[key]["test_knn_se"] for key in runs)], color="0.5")
    ax.axvline(published["PCA"], color="b", ls=":", label="thesis PCA")
    ax.axvline(published["PCA-LMNN"], color="r", ls="--", label="thesis PCA-LMNN")
    ax.set_yticks(np.arange(len(labels)), labels, fontsize=7)
    ax.set(xlabel="iris test kNN error %", title=f"iris, {len(rows)} splits: Algorithm 3 stopped early")
    ax.legend(fontsize=7)
    _save(fig, png)
    table = [["PCA", f"{pca:.2f}", "—", "—", "—", "—"]]
    table += [[key, f"{v['test_knn']:.2f} ± {v['test_knn_se']:.2f}", f"{v['minus_pca']:+.3f} ± {v['minus_pca_se']:.3f}",
               f"{v['minus_optimum']:+.3f} ± {v['minus_optimum_se']:.3f}" if key != "optimum" else "0",
               f"{v['excess']:.3g}", f"{v['iterations']:.0f}"] for key, v in summary.items()]
    own = summary["own rule"]
    finding = (f"Algorithm 3 from M = I with its own stopping rule ends after {own['iterations']:.0f} iterations on "
               f"average (relative excess loss {own['excess']:.2g}) at {own['test_knn']:.2f} %, against "
               f"{summary['optimum']['test_knn']:.2f} % for the certified optimum and {pca:.2f} % for PCA; paired, "
               f"Algorithm 3 − optimum is {own['minus_optimum']:+.3f} ± {own['minus_optimum_se']:.3f} points and "
               f"Algorithm 3 − PCA {own['minus_pca']:+.3f} ± {own['minus_pca_se']:.3f}. ")
    if holds:
        thesis_gain = published["PCA-LMNN"] - published["PCA"]
        points = "; ".join(
            f"{key}: − optimum {summary[key]['minus_optimum']:+.3f} ± {summary[key]['minus_optimum_se']:.3f}, − PCA "
            f"{summary[key]['minus_pca']:+.3f} ± {summary[key]['minus_pca_se']:.3f} (the thesis' {thesis_gain:+.2f} "
            + ("within" if abs(thesis_gain - summary[key]["minus_pca"]) <= 2.0 * summary[key]["minus_pca_se"]
               else "outside") + " 2 standard errors of it)" for key in supporting)
        finding += (f"The hypothesis holds (the rule fixed before the run) at {points}: stopped there, Algorithm 3's "
                    f"metric has a mean test error below PCA's and more than {IRIS_Z} standard errors below the "
                    "optimum's, so an early stop of the thesis' solver can explain its order on iris"
                    + ("" if all(abs(thesis_gain - summary[key]["minus_pca"]) <= 2.0 * summary[key]["minus_pca_se"]
                                 for key in supporting) else " (not the size of its gain)")
                    + ("" if "own rule" in supporting else
                       " — though not at Algorithm 3's own stopping rule, so the thesis' run would have stopped well "
                       "before it (its stopping point is not stated)") + ".")
    else:
        finding += ("No stopping point of Algorithm 3 is both below PCA and more than "
                    f"{IRIS_Z} standard errors below the optimum. " + refuted_sentence(
                        IRIS_REFUTED, "an early stop of Algorithm 3 (`table2_1_iris_stop`)"))
    return Outcome(
        published=f"iris test kNN error: PCA {published['PCA']:.2f} %, PCA-LMNN {published['PCA-LMNN']:.2f} % "
                  "(Table 2.1; the thesis' solver, Algorithm 3, stopping point not stated).",
        ours=(f"{len(rows)} splits; certified optimum optimal on {summary['optimum']['optimal']}/{len(rows)}. Test "
              "kNN error (mean ± standard error), the paired differences to PCA and to the optimum (points), the "
              "relative excess loss (2.11) over the optimum (divided by max(optimum, 1)) and the iterations "
              "(Newton steps for the optimum):\n\n"
              + _md_table(["solver", "test kNN %", "− PCA", "− optimum", "relative excess loss", "iterations"], table)),
        rows={"splits": rows, "summary": summary, "pca": pca, "supporting": supporting,
              "hypothesis": "supported" if holds else "refuted"},
        verdict="reproduced in trend" if holds else "differs", agreement=finding)


# ------------------------------------------------------------------------------------------ MNIST: the training size


def _mnist_split(split: int, config: dict) -> dict:
    """Split ``split`` of :func:`table2_1_mnist_size`: a permutation (seed ``seed`` + split) of the vendored
    images; the last ``mnist_test`` are the test set, the first n the training set of size n (nested), all
    deskewed. With n = 7,000 and 3,000 test images split 0 is Table 2.1's MNIST split."""
    images, y = load_mnist(size=28)
    order = np.random.default_rng(config["seed"] + split).permutation(len(images))
    largest, test = max(config["sizes"]), order[len(images) - config["mnist_test"]:]
    if largest > len(images) - config["mnist_test"]:
        raise ValueError(f"{largest} training and {config['mnist_test']} test images exceed the {len(images)} vendored")
    deskew = _base().deskew
    return {"Xtr": deskew(images[order[:largest]]), "ytr": y[order[:largest]], "Xte": deskew(images[test]),
            "yte": y[test]}


def _mnist_size_rows(job: tuple[int, dict]) -> list[dict]:
    """The test errors at every training size of one split: PCA's and LMNN's kNN and energy rule (a job of
    :func:`table2_1_mnist_size`'s ``workers`` processes)."""
    split, config = job
    base = _base()
    data = _mnist_split(split, config)
    k, mu = config["k"], config["mu"]
    out = []
    for n in config["sizes"]:
        pca = PCA(config["dims"], random_state=config["seed"] + split).fit(data["Xtr"][:n])
        Xtr, Xte, ytr, yte = pca.transform(data["Xtr"][:n]), pca.transform(data["Xte"]), data["ytr"][:n], data["yte"]
        model, cpu = base._fit(LMNN(k, mu), Xtr, ytr)
        Ztr, Zte = model.transform(Xtr), model.transform(Xte)
        out.append({"split": split, "n": n, "n_test": int(len(yte)),
                    "pca_knn": base._euclidean_errors(Xtr, ytr, Xte, yte, k)[1],
                    "pca_energy": base._energy_error(Xtr, ytr, Xte, yte, target_neighbors(Xtr, ytr, k), k, mu),
                    "lmnn_knn": base._euclidean_errors(Ztr, ytr, Zte, yte, k)[1],
                    "lmnn_energy": base._energy_error(Ztr, ytr, Zte, yte, model.targets_, k, mu),
                    "status": model.result_.status, "relative_gap": float(model.result_.relative_gap), "cpu_s": cpu})
    return out


def _size_summary(rows: list[dict], sizes: list[int]) -> dict:
    """Per training size: the mean errors and the paired difference LMNN energy − LMNN kNN over the splits."""
    summary = {}
    for n in sizes:
        at = [r for r in rows if r["n"] == n]
        d = _paired_values(at, lambda r: r["lmnn_energy"], lambda r: r["lmnn_knn"])
        summary[str(n)] = {**{key: float(np.mean([r[key] for r in at]))
                              for key in ("pca_knn", "pca_energy", "lmnn_knn", "lmnn_energy", "cpu_s")},
                           "energy_minus_knn": d[0], "se": d[1], "optimal": sum(r["status"] == "optimal" for r in at),
                           "splits": len(at)}
    return summary


def _growth(rows: list[dict], sizes: list[int]) -> tuple[float, float]:
    """The change of energy − kNN from the smallest to the largest size, paired over the splits (mean, se)."""
    small, large = min(sizes), max(sizes)
    by_split = {}
    for r in rows:
        if r["n"] in (small, large):
            by_split.setdefault(r["split"], {})[r["n"]] = r["lmnn_energy"] - r["lmnn_knn"]
    pairs = [{"a": v[large], "b": v[small]} for v in by_split.values()]
    return _paired_values(pairs, lambda p: p["a"], lambda p: p["b"])


def table2_1_mnist_size(config: dict, png: Path) -> Outcome:
    """Table 2.1, MNIST — does the energy rule's advantage over kNN grow with the training set?

    Paper
    -----
    Table 2.1, MNIST (60,000 training images, deskewed, 164 principal components): PCA-LMNN
    energy 1.37 % against kNN 1.72 %; Sec. 2.1.6: the energy rule beats kNN on all the large
    data sets. Ours with 7,000 training images ties (1.70 % = 1.70 %), and over 10 smaller
    splits too (``fig2_5_mnist``). The stated difference is the training size. Hypothesis,
    fixed before this run: the energy rule's advantage grows with the number of training
    images. Test: a learning curve at ``sizes`` training images, the same test images at every
    size of a split, ``splits`` splits. Supported if the paired difference (LMNN energy − LMNN
    kNN) falls from the smallest to the largest size by more than 2 standard errors (paired over
    the splits) and is below zero at the largest size; refuted otherwise (a flat or rising
    curve). Whether the difference at the largest size is itself more than 2 standard errors
    below zero is reported beside it.

    Departures
    ----------
    - The vendored 10,000 MNIST *test* images only: per split a seeded permutation, the last
      ``mnist_test`` the test set and the first n the training set (nested sizes), deskewed,
      PCA to ``dims`` fitted on the n training images; with 7,000 and 3,000 split 0 is Table
      2.1's split. 9,000 training images would leave 1,000 for testing: the test set is kept
      at Table 2.1's 3,000 and the largest size is 7,000 (the thesis: 60,000).
    - ``splits`` splits at ``sizes`` only (each 164-dimensional solve takes one to three minutes
      of CPU, 77 s at 1,000 images and 153 s at 7,000; the session's time box on a shared
      machine allowed no more), the splits in ``workers`` processes; k = 3, μ = 0.5; LMNN the
      certified optimum of (2.11) (``solve_lmnn_fast``), its status reported per size.
    """
    sizes = sorted(config["sizes"])
    jobs = [(split, {**config, "sizes": sizes}) for split in range(config["splits"])]
    rows = [r for split_rows in parallel_map(_mnist_size_rows, jobs, config["workers"]) for r in split_rows]
    summary = _size_summary(rows, sizes)
    growth, growth_se = _growth(rows, sizes)
    largest = summary[str(sizes[-1])]
    holds = growth < -2.0 * growth_se and largest["energy_minus_knn"] < 0.0
    significant = largest["energy_minus_knn"] < -2.0 * largest["se"]
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    ax.errorbar(sizes, [summary[str(n)]["energy_minus_knn"] for n in sizes], yerr=[summary[str(n)]["se"]
                                                                                     for n in sizes], marker="o",
                label="ours: LMNN energy − LMNN kNN")
    ax.plot([60000], [1.37 - 1.72], "r*", ms=10, label="thesis (60,000)")
    ax.axhline(0.0, color="0.5", lw=0.8)
    ax.set_xscale("log")
    ax.set(xlabel="training images", ylabel="test error difference (points)",
           title=f"MNIST, {config['splits']} splits, {config['dims']} dims")
    ax.legend(fontsize=7)
    _save(fig, png)
    table = [[n, f"{s['pca_knn']:.2f}", f"{s['pca_energy']:.2f}", f"{s['lmnn_knn']:.2f}", f"{s['lmnn_energy']:.2f}",
              f"{s['energy_minus_knn']:+.3f} ± {s['se']:.3f}", f"{s['optimal']}/{s['splits']}", f"{s['cpu_s']:.1f}"]
             for n, s in summary.items()]
    curve = ", ".join(f"{summary[str(n)]['energy_minus_knn']:+.2f} at {n:,}" for n in sizes)
    finding = (f"LMNN energy − LMNN kNN (paired over {config['splits']} splits, points): {curve}; from {sizes[0]:,} to "
               f"{sizes[-1]:,} training images it changes by {growth:+.3f} ± {growth_se:.3f}, and at {sizes[-1]:,} it "
               f"is {largest['energy_minus_knn']:+.3f} ± {largest['se']:.3f} ("
               + ("more than 2 standard errors below zero" if significant else "not significantly below zero")
               + "; thesis at 60,000: -0.35). ")
    finding += ("The hypothesis holds: the energy rule's advantage grows with the training set, so the smaller "
                "training set can explain the MNIST tie of Table 2.1." if holds else
                "The rule fixed before the run fails: "
                + "; ".join(part for part, failed in (
                    ("the difference does not fall by more than 2 standard errors from the smallest to the "
                     "largest size", not growth < -2.0 * growth_se),
                    (f"at {sizes[-1]:,} training images the energy rule is not below kNN",
                     not largest["energy_minus_knn"] < 0.0)) if failed) + ". "
                + refuted_sentence(MNIST_REFUTED, f"the training size, up to {sizes[-1]:,} images "
                                                  "(`table2_1_mnist_size`)"))
    return Outcome(
        published="MNIST (60,000 training images): PCA-LMNN test error 1.72 % (kNN) and 1.37 % (energy), a difference "
                  "of -0.35 points (Table 2.1).",
        ours=(f"{config['splits']} splits, {config['mnist_test']} test images each, {config['dims']} principal "
              "components; mean test errors (%), the paired difference and the mean LMNN CPU seconds per solve:\n\n"
              + _md_table(["training images", "PCA kNN", "PCA energy", "LMNN kNN", "LMNN energy",
                           "LMNN energy − kNN", "LMNN optimal", "LMNN CPU s"], table)),
        rows={"splits": rows, "summary": summary, "growth": growth, "growth_se": growth_se,
              "significant_at_largest": bool(significant), "hypothesis": "supported" if holds else "refuted"},
        verdict="reproduced in trend" if holds else "differs", agreement=finding)


IRIS_STOP = Experiment(
    "table2_1_iris_stop", "Table 2.1, iris — the thesis' solver stopped early against the certified optimum",
    table2_1_iris_stop, full={"splits": 100, "budgets": [10, 30, 300], "max_iter": 2000, "k": 3, "mu": 0.5,
                              "seed": 0, "workers": 1},
    quick={"splits": 3, "budgets": [10], "max_iter": 50, "k": 3, "mu": 0.5, "seed": 0, "workers": 1})

MNIST_SIZE = Experiment(
    "table2_1_mnist_size", "Table 2.1, MNIST — the energy rule against kNN as the training set grows",
    table2_1_mnist_size, full={"splits": 2, "sizes": [1000, 7000], "mnist_test": 3000, "dims": 164, "k": 3,
                               "mu": 0.5, "seed": 0, "workers": 2},
    quick={"splits": 2, "sizes": [100, 200], "mnist_test": 100, "dims": 10, "k": 3, "mu": 0.5, "seed": 0,
           "workers": 1})
