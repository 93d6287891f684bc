"""The LMNN experiments of Weinberger's thesis, chapter 2: Table 2.1 and Fig. 2.3–2.20 (2.13–2.17: ``_trees``,
2.20: ``_linear``).

Each function's docstring states the thesis' set-up (``Paper``) and every departure from it
(``Departures``); :mod:`reproduce.common` copies both into REPRODUCTION.md beside the published
numbers and ours. LMNN is :class:`sdpembed.LMNN` (the certified optimum of the SDP (2.11) by the
interior-point working-set solver), multiple passes its ``n_repeats`` (Sec. 2.1.8), one metric
per class :class:`sdpembed.MultiMetricLMNN` (2.17); the energy rule is (2.12). kNN errors use
the thesis' tie rule (Sec. 2.1.6): on a tie among classes the neighbourhood is shrunk until one
class wins, down to k = 1. Training errors are leave-one-out, as in Table 2.1.

Fig. 2.5, 2.9 and 2.12 are drawn from the rows of Table 2.1 (the thesis draws them from the
same runs); a run of several of them in one process computes each data set once.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Sec. 2.1.3–2.1.8: the SDP (2.11), the energy rule (2.12), multiple
   passes and multiple metrics (2.17); Table 2.1; Fig. 2.3–2.5, 2.8–2.12 (Fig. 2.10: multiple metrics on
   k-means clusters of two concentric circles).
.. [2] Y. LeCun, L. Bottou, Y. Bengio and P. Haffner, "Gradient-based learning applied to
   document recognition", Proceedings of the IEEE 86(11), 2278–2324, 1998 (MNIST, deskewing).
"""

from __future__ import annotations

import functools
import json
import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy import ndimage  # noqa: E402
from sklearn.datasets import load_digits, load_iris, load_wine  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.model_selection import GridSearchCV, train_test_split  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from sdpembed import LMNN, MultiMetricLMNN  # noqa: E402
from sdpembed._progress import track  # noqa: E402
from sdpembed.datasets import load_mnist  # noqa: E402
from sdpembed.graphs import target_neighbors  # noqa: E402
from sdpembed.linear.lda import lda_projection  # noqa: E402
from sdpembed.models.lmnn import energy_scores  # noqa: E402

from .common import Experiment, Outcome, parallel_map  # noqa: E402
from .numax import _md_table, _save  # noqa: E402
from .thesis_lmnn_linear import EXPERIMENTS as _LINEAR_EXPERIMENTS  # noqa: E402
from .thesis_lmnn_trees import EXPERIMENTS as _TREE_EXPERIMENTS  # noqa: E402
from .thesis_lmnn_why import IRIS_STOP, MNIST_SIZE  # noqa: E402
from .thesis_mvu_standins import CHAPTER2_EXPERIMENTS as _STANDIN_EXPERIMENTS  # noqa: E402

TITLE = "LMNN — Weinberger's thesis, chapter 2 (Table 2.1, Fig. 2.3–2.20)"
DATA_NOTE = ("Data: of Table 2.1's nine data sets we have iris and wine (scikit-learn's copies of the UCI sets: "
             "150 and 178 points, where the thesis' table lists 128 and 152) and MNIST as the vendored 10,000 "
             "*test* images only (the thesis trains on the 60,000 training images and tests on the 10,000). bal, "
             "letters, Isolet, 20news, yalefaces and olivettifaces are not available offline: their columns of "
             "Table 2.1 are not run, and Fig. 2.6–2.7 (the two face sets) are not reproduced (their sections say why). "
             "scikit-learn's digits (1,797 8×8 images) "
             "is added as a fourth data set, without a published column. Every LMNN solve reports its certified "
             "status; a row whose solve is not `optimal` says so.")
NOT_IMPLEMENTED: list[str] = []

NOT_EXPERIMENTS = ["Fig. 2.1 (the kNN rule illustrated)", "Fig. 2.2 (a schematic of one input's neighbourhood)",
                   "Fig. 2.14 (a cartoon of the ball-tree bound (2.19))",
                   "Fig. 2.18 (the surface of PCA's objective (2.22) over a two-dimensional p, an illustration)",
                   "Fig. 2.19 (LDA's objective (2.26) on the unit circle, an illustration)",
                   "Fig. 2.21 (a schematic of POLA's pairwise update)"]

#: Table 2.1 for the data sets we have (percent; ``None`` where the table has no entry for us to compare).
PUBLISHED = {
    "iris": {"n_train": 90, "n_test": 38, "runs": 100, "cpu_1m": "2s", "cpu_mm": "5s", "active_1m": 574,
             "active_mm": 1548,
             "train": {"PCA": 4.20, "LDA": 2.46, "PCA-LMNN": 3.28, "LDA-LMNN": 2.98, "MUL-LMNN": 3.47,
                       "MM-LMNN": 3.13, "SVM": 3.36},
             "test_knn": {"PCA": 4.87, "LDA": 2.58, "PCA-LMNN": 4.08, "LDA-LMNN": 3.79, "MUL-LMNN": 3.76,
                          "MM-LMNN": 4.37, "SVM": 3.45},
             "test_energy": {"PCA": 3.82, "LDA": 2.63, "PCA-LMNN": 4.00, "LDA-LMNN": 2.82, "MUL-LMNN": 3.34,
                             "MM-LMNN": 3.84}},
    "wine": {"n_train": 106, "n_test": 46, "runs": 100, "cpu_1m": "14s", "cpu_mm": "16s", "active_1m": 10194,
             "active_mm": 748,
             "train": {"PCA": 24.36, "LDA": 0.26, "PCA-LMNN": 6.12, "LDA-LMNN": 0.23, "MUL-LMNN": 4.77,
                       "MM-LMNN": 6.12, "SVM": 0.00},
             "test_knn": {"PCA": 25.00, "LDA": 1.98, "PCA-LMNN": 8.39, "LDA-LMNN": 2.11, "MUL-LMNN": 7.30,
                          "MM-LMNN": 8.39, "SVM": 22.24},
             "test_energy": {"PCA": 50.41, "LDA": 2.11, "PCA-LMNN": 7.67, "LDA-LMNN": 2.04, "MUL-LMNN": 7.85,
                             "MM-LMNN": 8.04}},
    "mnist": {"n_train": 60000, "n_test": 10000, "runs": 1, "cpu_1m": "3h 25m", "cpu_mm": "8h 43m",
              "active_1m": 540037, "active_mm": 305114,
              "train": {"PCA": 1.93, "LDA": 6.57, "PCA-LMNN": 1.19, "LDA-LMNN": 6.62, "MUL-LMNN": 1.15,
                        "MM-LMNN": 0.04, "SVM": 0.00},
              "test_knn": {"PCA": 2.12, "LDA": 6.16, "PCA-LMNN": 1.72, "LDA-LMNN": 6.17, "MUL-LMNN": 1.69,
                           "MM-LMNN": 1.18, "SVM": 1.20},
              "test_energy": {"PCA": 2.39, "LDA": 10.23, "PCA-LMNN": 1.37, "LDA-LMNN": 5.56, "MUL-LMNN": 1.27,
                              "MM-LMNN": 1.23}},
}
METHODS = ("PCA", "LDA", "PCA-LMNN", "LDA-LMNN", "MUL-LMNN", "MM-LMNN", "SVM")
_MEASURES = ("train", "test_knn", "test_energy")


# ------------------------------------------------------------------------------------------ kNN and data


def _sq_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return np.maximum(np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :] - 2.0 * A @ B.T,
                      0.0)


def knn_vote(D: np.ndarray, y_train: np.ndarray, k: int) -> np.ndarray:
    """kNN labels from a block of distances (m, n), ties broken as the thesis does (Sec. 2.1.6).

    Among the k nearest, the class with most votes wins; on a tie the neighbourhood shrinks
    to k − 1, …, down to the single nearest point. ``D`` may hold ``inf`` (a left-out point).
    """
    kk = min(k, D.shape[1])
    nearest = np.argpartition(D, kk - 1, axis=1)[:, :kk]
    order = np.argsort(np.take_along_axis(D, nearest, axis=1), axis=1, kind="stable")
    return vote_sorted(y_train[np.take_along_axis(nearest, order, axis=1)], int(y_train.max()) + 1)


def vote_sorted(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """kNN labels from the labels of each row's neighbours, nearest first (m, k), with the tie rule
    of :func:`knn_vote`: on a tie the neighbourhood shrinks to k − 1, …, 1."""
    kk = labels.shape[1]
    pred = np.full(labels.shape[0], -1)
    open_rows = np.arange(labels.shape[0])
    for size in range(kk, 0, -1):           # a loop over neighbourhood sizes; rows are vectorised
        votes = np.zeros((open_rows.size, n_classes))
        np.add.at(votes, (np.repeat(np.arange(open_rows.size), size), labels[open_rows, :size].ravel()), 1.0)
        top = votes.max(axis=1)
        decided = np.sum(votes == top[:, None], axis=1) == 1
        pred[open_rows[decided]] = np.argmax(votes[decided], axis=1)
        open_rows = open_rows[~decided]
        if open_rows.size == 0:
            break
    return pred


def knn_errors(distances, y_train: np.ndarray, y_test: np.ndarray, n_test: int, k: int,
               leave_one_out: bool = False, block: int = 1000) -> float:
    """kNN error (percent) with ``distances(rows)`` → the (len(rows), n_train) block of distances.

    With ``leave_one_out`` the test set is the training set and each point's own distance is
    ignored (the leave-one-out estimate of Table 2.1's training errors).
    """
    wrong = 0
    for start in range(0, n_test, block):
        rows = np.arange(start, min(start + block, n_test))
        D = distances(rows)
        if leave_one_out:
            D[np.arange(rows.size), rows] = np.inf
        wrong += int(np.sum(knn_vote(D, y_train, k) != y_test[rows]))
    return 100.0 * wrong / n_test


def _euclidean_errors(Ztr, ytr, Zte, yte, k: int) -> tuple[float, float]:
    """Leave-one-out training and test kNN errors (percent) under the Euclidean distance of Z."""
    train = knn_errors(lambda r: _sq_distances(Ztr[r], Ztr), ytr, ytr, len(ytr), k, leave_one_out=True)
    test = knn_errors(lambda r: _sq_distances(Zte[r], Ztr), ytr, yte, len(yte), k)
    return train, test


def _energy_error(Ztr, ytr, Zte, yte, targets, k: int, mu: float) -> float:
    """Test error (percent) of the energy rule (2.12) in the mapped space Z."""
    pred = np.argmin(energy_scores(Zte, Ztr, ytr, targets, k, mu), axis=1)
    return 100.0 * float(np.mean(pred != yte))


def deskew(images: np.ndarray, size: int = 28) -> np.ndarray:
    """Deskewed images (rows): the shear that makes each image's second moments upright.

    The image is resampled (bilinear) under the map (r, c) ↦ (r, c + α (r − r̄)) about its
    centre of mass, α = cov(r, c) / var(r), and recentred — the deskewing of LeCun et al. that the
    thesis applies to MNIST (Sec. 2.1.6).
    """
    rows, cols = np.mgrid[:size, :size].astype(np.float64)
    out = np.empty_like(images, dtype=np.float64)
    centre = (size - 1) / 2.0
    for index, image in enumerate(images):     # a loop over images: one resampling each
        img = image.reshape(size, size)
        total = img.sum()
        if total <= 0:
            out[index] = image
            continue
        r0, c0 = (rows * img).sum() / total, (cols * img).sum() / total
        alpha = ((rows - r0) * (cols - c0) * img).sum() / max(((rows - r0) ** 2 * img).sum(), 1e-12)
        A = np.array([[1.0, 0.0], [alpha, 1.0]])
        offset = np.array([r0, c0]) - A @ np.array([centre, centre])
        out[index] = ndimage.affine_transform(img, A, offset=offset, order=1).ravel()
    return out


def _split(name: str, split: int, config: dict) -> dict:
    """One training/test split of a data set, reduced by PCA fitted on the training part."""
    seed = config["seed"] + split
    raw = None
    if name in ("iris", "wine", "digits"):
        X, y = {"iris": load_iris, "wine": load_wine, "digits": load_digits}[name](return_X_y=True)
        Xtr, Xte, ytr, yte = train_test_split(X.astype(np.float64), y, test_size=0.3, random_state=seed)
        dims = config["digits_dims"] if name == "digits" else X.shape[1]
    elif name == "mnist":
        images, y = load_mnist(size=28)
        order = np.random.default_rng(seed).permutation(len(images))
        tr, te = order[:config["mnist_train"]], order[config["mnist_train"]:][:config["mnist_test"]]
        Xtr, Xte, ytr, yte = deskew(images[tr]), deskew(images[te]), y[tr], y[te]
        raw = (images[tr], images[te])
        dims = config["mnist_dims"]
    else:
        raise ValueError(f"unknown data set {name!r}")
    pca = PCA(dims, random_state=seed).fit(Xtr)       # all dimensions: a rotation (iris, wine)
    return {"Xtr": pca.transform(Xtr), "Xte": pca.transform(Xte), "ytr": np.asarray(ytr), "yte": np.asarray(yte),
            "explained": float(np.sum(pca.explained_variance_ratio_)), "raw": raw}


def _svm(Xtr, ytr, Xte, yte, name: str, seed: int) -> dict:
    """Multiclass SVM: the kernel (linear, polynomial, RBF) and C by 3-fold cross-validation; on MNIST the
    thesis' non-homogeneous polynomial kernel of degree 4."""
    cpu = time.process_time()
    if name == "mnist":
        model = SVC(kernel="poly", degree=4, coef0=1.0, gamma="scale").fit(Xtr, ytr)
        chosen = "poly4"
    else:
        grid = [{"kernel": ["linear"], "C": [0.1, 1, 10]},
                {"kernel": ["poly"], "degree": [2, 3], "coef0": [1.0], "C": [0.1, 1, 10]},
                {"kernel": ["rbf"], "C": [1, 10, 100]}]
        search = GridSearchCV(SVC(gamma="scale"), grid, cv=3).fit(Xtr, ytr)
        model, chosen = search.best_estimator_, str(search.best_params_)
    return {"test_knn": 100.0 * float(np.mean(model.predict(Xte) != yte)), "cpu_s": time.process_time() - cpu,
            "kernel": chosen}


def _lmnn_row(model, Ztr, ytr, Zte, yte, k: int, mu: float, cpu: float) -> dict:
    Ltr, Lte = model.transform(Ztr), model.transform(Zte)
    train, test = _euclidean_errors(Ltr, ytr, Lte, yte, k)
    results = model.results_
    return {"train": train, "test_knn": test, "test_energy": _energy_error(Ltr, ytr, Lte, yte, model.targets_, k, mu),
            "cpu_s": cpu, "active": int(results[-1].extra.get("active", -1)),
            "status": ",".join(r.status for r in results),
            "relative_gap": max(float(r.relative_gap) for r in results)}


def _fit(estimator, X, y, **fit_params):
    """Fit under warnings capture (a non-optimal solve is reported by status, not by a warning); CPU seconds."""
    cpu = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X, y, **fit_params)
    return estimator, time.process_time() - cpu


def _split_rows(data: dict, name: str, config: dict) -> dict:
    """Every column of Table 2.1 on one split."""
    k, mu = config["k"], config["mu"]
    Xtr, Xte, ytr, yte = data["Xtr"], data["Xte"], data["ytr"], data["yte"]
    rows: dict = {}
    train, test = _euclidean_errors(Xtr, ytr, Xte, yte, k)
    rows["PCA"] = {"train": train, "test_knn": test,
                   "test_energy": _energy_error(Xtr, ytr, Xte, yte, target_neighbors(Xtr, ytr, k), k, mu)}
    W = lda_projection(Xtr, ytr, shrinkage=config["lda_shrinkage"])
    Ltr, Lte = Xtr @ W.T, Xte @ W.T
    train, test = _euclidean_errors(Ltr, ytr, Lte, yte, k)
    rows["LDA"] = {"train": train, "test_knn": test,
                   "test_energy": _energy_error(Ltr, ytr, Lte, yte, target_neighbors(Ltr, ytr, k), k, mu)}
    pca_lmnn, cpu = _fit(LMNN(k, mu), Xtr, ytr)
    rows["PCA-LMNN"] = _lmnn_row(pca_lmnn, Xtr, ytr, Xte, yte, k, mu, cpu)
    model, cpu = _fit(LMNN(k, mu), Ltr, ytr)
    rows["LDA-LMNN"] = _lmnn_row(model, Ltr, ytr, Lte, yte, k, mu, cpu)
    model, cpu = _fit(LMNN(k, mu, n_repeats=config["mul_runs"]), Xtr, ytr)
    rows["MUL-LMNN"] = _lmnn_row(model, Xtr, ytr, Xte, yte, k, mu, cpu)
    if config["multi_metric"]:
        mm, cpu = _fit(MultiMetricLMNN(k, mu), Xtr, ytr)
        rows["MM-LMNN"] = {
            "train": knn_errors(lambda r: mm.distances(Xtr[r]), ytr, ytr, len(ytr), k, leave_one_out=True),
            "test_knn": knn_errors(lambda r: mm.distances(Xte[r]), ytr, yte, len(yte), k),
            "test_energy": 100.0 * float(np.mean(mm.predict_energy(Xte) != yte)),
            "cpu_s": cpu, "active": int(mm.result_.extra.get("active", -1)), "status": mm.result_.status,
            "relative_gap": float(mm.result_.relative_gap)}
    if config["svm"]:
        rows["SVM"] = {"train": None, "test_energy": None, **_svm(Xtr, ytr, Xte, yte, name, config["seed"])}
    return rows


def _settings(name: str, config: dict) -> dict:
    """The settings of one data set (the splits it runs and what it computes)."""
    splits = {"iris": config["small_splits"], "wine": config["small_splits"], "digits": config["digits_splits"],
              "mnist": 1}[name]
    keys = ("k", "mu", "seed", "mul_runs", "lda_shrinkage", "svm", "digits_dims", "mnist_train", "mnist_test",
            "mnist_dims", "workers")
    return {"splits": splits, "multi_metric": name in config["multi_metric_on"],
            **{key: config[key] for key in keys}}


def _split_job(job: tuple[str, int, dict]) -> tuple[dict, dict]:
    """Table 2.1's columns on one split, with the split's sizes (a job of :func:`_dataset`'s worker pool)."""
    name, split, config = job
    data = _split(name, split, config)
    return _split_rows(data, name, config), {"n_train": int(len(data["ytr"])), "n_test": int(len(data["yte"])),
                                             "dim": int(data["Xtr"].shape[1]), "explained": data["explained"]}


@functools.cache
def _dataset(name: str, settings_json: str) -> dict:
    """Table 2.1's columns on every split of one data set (computed once per process and settings); the
    splits run in ``workers`` processes (each split's result is independent of the others)."""
    config = json.loads(settings_json)
    jobs = [(name, split, config) for split in range(config["splits"])]
    workers = min(config["workers"], len(jobs))
    if workers > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(workers) as pool:
            done = pool.map(_split_job, jobs, chunksize=1)
    else:
        done = [_split_job(job) for job in track(jobs, f"Table 2.1 {name}", unit="split")]
    splits, first = [rows for rows, _ in done], done[0][1]
    summary = {}
    for method in METHODS:
        present = [s[method] for s in splits if method in s]
        if not present:
            continue
        entry = {}
        for measure in (*_MEASURES, "cpu_s", "active", "relative_gap"):
            values = [r[measure] for r in present if r.get(measure) is not None]
            if values:
                entry[measure] = float(np.mean(values))
                if measure in _MEASURES:
                    entry[measure + "_se"] = float(np.std(values) / np.sqrt(len(values)))
                if measure == "relative_gap":          # the certificate of the worst split, not an average
                    entry["relative_gap_max"] = float(np.max(values))
        statuses = [s for r in present for s in str(r.get("status", "")).split(",") if s]
        entry["optimal"] = f"{sum(s == 'optimal' for s in statuses)}/{len(statuses)}" if statuses else "—"
        if "kernel" in present[0]:
            entry["kernel"] = sorted({r["kernel"] for r in present})
        summary[method] = entry
    return {"summary": summary, **first, "splits": config["splits"]}


def _datasets(config: dict, png: Path | None = None) -> dict:
    """Table 2.1's data sets under ``config``: from the stored ``table2_1.json`` beside ``png`` when it was run
    with the same configuration (the figures drawn from Table 2.1 then reuse its rows), computed otherwise."""
    stored = None if png is None else png.with_name("table2_1.json")
    if stored is not None and stored.exists():
        record = json.loads(stored.read_text())
        if all(record["config"].get(key) == value for key, value in config.items()
               if key in _SHARED and key != "workers"):                  # the pool's size changes no number
            return {name: record["rows"][name] for name in config["datasets"] if name in record["rows"]}
    names = list(config["datasets"])
    jobs = [(name, json.dumps(_settings(name, config), sort_keys=True)) for name in names]
    # the data sets are independent: with several workers they run side by side, each in its own process (which
    # runs its splits in its own pool of ``workers``), so MNIST's and digits' single long solves overlap
    return dict(zip(names, parallel_map(_dataset_job, jobs, config["workers"]), strict=True))


def _dataset_job(job: tuple[str, str]) -> dict:
    """:func:`_dataset` of one (name, settings) pair (a job of :func:`_datasets`' pool)."""
    return _dataset(*job)


def _pct(value, se=None) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" + (f" ± {se:.2f}" if se is not None and se > 0 else "")


def _gap_cell(entry: dict) -> str:
    """`` / <largest relative gap over the splits>`` of a certified column, empty where it has none (SVM)."""
    gap = entry.get("relative_gap_max")
    return "" if gap is None else f" / {gap:.1e}"


def _published_cell(name: str, measure: str, method: str) -> str:
    value = PUBLISHED.get(name, {}).get(measure, {}).get(method)
    return "—" if value is None else f"{value:.2f}"


# ------------------------------------------------------------------------------------------ Table 2.1

_SHARED = {
    "datasets": ["iris", "wine", "digits", "mnist"], "small_splits": 100, "digits_splits": 1, "digits_dims": 30,
    "mnist_train": 7000, "mnist_test": 3000, "mnist_dims": 164, "k": 3, "mu": 0.5, "mul_runs": 3,
    "lda_shrinkage": 1e-3, "svm": True, "multi_metric_on": ["iris", "wine", "digits"], "seed": 0, "workers": 4,
}
_SHARED_QUICK = {
    **_SHARED, "small_splits": 2, "digits_dims": 10, "mnist_train": 400, "mnist_test": 200, "mnist_dims": 20,
    "multi_metric_on": ["iris", "wine"], "workers": 1,
}


def _ordering_claims(found: dict) -> list[tuple[str, bool]]:
    """The published orderings of Table 2.1 on our data sets, each checked on our numbers."""
    claims = []
    for name, res in found.items():
        s = res["summary"]
        if name in PUBLISHED:
            claims.append((f"{name}: PCA-LMNN kNN test error < PCA's",
                           s["PCA-LMNN"]["test_knn"] < s["PCA"]["test_knn"]))
    if "wine" in found:
        s = found["wine"]["summary"]
        claims.append(("wine: LDA-LMNN kNN test error < PCA-LMNN's (LDA helps on wine)",
                       s["LDA-LMNN"]["test_knn"] < s["PCA-LMNN"]["test_knn"]))
    if "mnist" in found:
        s = found["mnist"]["summary"]
        claims.append(("mnist: PCA-LMNN energy test error < its kNN test error",
                       s["PCA-LMNN"]["test_energy"] < s["PCA-LMNN"]["test_knn"]))
        claims.append(("mnist: LDA kNN test error > PCA's (LDA drastically worse)",
                       s["LDA"]["test_knn"] > s["PCA"]["test_knn"]))
    return claims


#: Each failed ordering of Table 2.1 (by its claim's prefix): what differs, the reasons tested, and their experiments
#: (in the order they were tested; the last one's finding names every candidate refuted before it).
_ORDERING_REASONS = (
    ("wine", "On wine our PCA-LMNN (the certified optimum) is far below the thesis' 8.39 %, so LDA-LMNN no longer "
             "beats it; reason tested: a first-order run that ends short of the optimum on the unscaled features.",
     ("table2_1_wine",)),
    ("iris", "On iris PCA-LMNN's test error is above PCA's (the thesis: 4.08 % against 4.87 %); reasons tested: "
             "over-training with k fixed at 3 where the thesis chose k by cross-validation, and an early stop of "
             "the thesis' solver.", ("table2_1_iris", "table2_1_iris_stop")),
    ("mnist: PCA-LMNN energy", "On MNIST the energy rule does not beat kNN under the learned metric; reasons "
                               "tested: the noise of one split, and the smaller training set.",
     ("fig2_5_mnist", "table2_1_mnist_size")),
)


def _reasons(failed: list[str], png: Path) -> str:
    """For each failed ordering, the reasons tested and what their stored experiments found (:func:`_tested_reasons`),
    each failure followed by its own tests, so that a refuted reason is said beside the claim it was meant to
    explain (the reason tests' findings end with their verdict on the reason)."""
    return "".join(" " + note + _tested_reasons(png, list(keys), conclude=False) for prefix, note, keys
                   in _ORDERING_REASONS if any(c.startswith(prefix) for c in failed))


def table2_1_agreement(found: dict, png: Path) -> str:
    """Table 2.1's verdict sentence from its rows per data set (``found``: each with ``summary``, ``n_train`` and
    ``dim``, as its record stores them): the published orderings that hold, those that do not, the MNIST values
    beside the thesis', and after each failed ordering the reason tests stored beside ``png``."""
    claims = _ordering_claims(found)
    held = [c for c, ok in claims if ok]
    failed = [c for c, ok in claims if not ok]
    mnist = found.get("mnist", {}).get("summary", {})
    mnist_text = (f" MNIST ({found['mnist']['n_train']} training images, {found['mnist']['dim']} dimensions): "
                  f"PCA-LMNN kNN {_pct(mnist['PCA-LMNN']['test_knn'])} % and energy "
                  f"{_pct(mnist['PCA-LMNN']['test_energy'])} % (thesis, 60,000 training images: 1.72 % / 1.37 %)."
                  if mnist else "")
    return (f"{len(held)} of {len(claims)} published orderings hold on our numbers"
            + (f" ({'; '.join(held)})" if held else "")
            + (f"; not: {'; '.join(failed)}" if failed else "") + "." + mnist_text
            + _reasons(failed, png))


def table2_1(config: dict, png: Path) -> Outcome:
    """Table 2.1 — kNN and energy errors after PCA, LDA, PCA-LMNN, LDA-LMNN, MUL-LMNN, MM-LMNN, and SVM.

    Paper
    -----
    Nine data sets; iris, wine (and bal) averaged over 100 random 70/30 splits; MNIST on its
    60,000/10,000 split, deskewed and reduced to 164 principal components (95 % of the
    variance). Columns: kNN after PCA and after LDA; LMNN (2.11) after PCA (PCA-LMNN) and after
    LDA (LDA-LMNN); LMNN applied several times (MUL-LMNN, the number of runs and k chosen on a
    validation set); one metric per class (MM-LMNN, (2.17), started from the single metric);
    multiclass SVM (kernel by cross-validation; on MNIST a polynomial kernel of degree 4).
    Training errors are leave-one-out kNN; test errors kNN and energy (2.12); μ = 0.5; k by
    cross-validation; CPU time and active constraints of LMNN with one and with several metrics.
    The thesis' solver is sub-gradient descent with an active set (Sec. 2.1.7).

    Departures
    ----------
    - iris and wine: 100 random 70/30 splits, as the thesis (seeded); the standard errors are
      given.
    - MNIST: 164 principal components, as the thesis. There LMNN's Newton system would have
      order d(d + 1)/2 = 13,530, so the solver is ``solve_lmnn_fast``'s direct path (margin
      rounds of the multiplier repair, ``repair="auto"``), certified like every other row.
    - k = 3 target neighbours on every data set (the thesis chose k by cross-validation and
      does not report it), and MUL-LMNN is 3 passes (the thesis chose the number on a validation
      set); no validation set is held out for MM-LMNN.
    - MUL-LMNN's later passes learn in the range of the previous metric, keeping the directions
      whose eigenvalue is at least ``REPEAT_RTOL`` = 10⁻⁴ of the largest (the thesis, Sec. 2.1.8,
      only maps the inputs through the previous metric; the cut is ours).
    - LMNN is the certified optimum of (2.11) (interior point on an exact working set), not
      the thesis' sub-gradient solver; CPU time is ours on this machine, single-threaded BLAS.
      MM-LMNN is solved from scratch (the thesis starts it from the single metric and adds that
      time). "Active constraints" counts the triplets whose hinge is positive at our optimum.
    - iris and wine: scikit-learn's copies (150 and 178 points; the table lists 128 and 152),
      features unscaled, PCA a rotation (all 4 and 13 dimensions kept, as the table's
      "dimens." row). LDA uses a 10⁻³ shrinkage of the within-class scatter.
    - MNIST: the vendored 10,000 *test* images only — a seeded random 7,000 for training and
      the other 3,000 for testing (the thesis: 60,000 and 10,000), deskewed here (second-moment
      shear, bilinear), PCA fitted on the 7,000 (see above for the dimension). No MM-LMNN
      on MNIST (10 metrics of 164² in one SDP do not fit the time box).
    - digits (scikit-learn, 8×8, PCA to 30 dimensions, one 70/30 split) has no published column.
    - SVM: no leave-one-out training error; its kernel and C by 3-fold cross-validation over a
      small grid (linear, polynomial of degree 2–3, RBF) on the same features.
    - Energy error of MM-LMNN: the energy rule (2.12) with the class-specific distances (2.17)
      (``MultiMetricLMNN.predict_energy``); the thesis reports an MM-LMNN energy row without
      spelling the rule out.
    """
    found = _datasets(config)
    header = ["data set", "n train/test, dim", "measure", *METHODS]
    rows, raw = [], {}
    for name, res in found.items():
        s = res["summary"]
        size = f"{res['n_train']}/{res['n_test']}, {res['dim']}" + (f" ({res['splits']} splits)"
                                                                     if res["splits"] > 1 else "")
        for measure, label in (("train", "train kNN (LOO) %"), ("test_knn", "test kNN %"),
                               ("test_energy", "test energy %")):
            rows.append([name, size, label + " — ours",
                         *(_pct(s.get(m, {}).get(measure), s.get(m, {}).get(measure + "_se")) for m in METHODS)])
            if name in PUBLISHED:
                pub = PUBLISHED[name]
                rows.append([name, f"{pub['n_train']}/{pub['n_test']}", label + " — thesis",
                             *(_published_cell(name, measure, m) for m in METHODS)])
        rows.append([name, size, "CPU s (ours) / optimal / largest relative gap",
                     *(f"{s[m]['cpu_s']:.2f} / {s[m]['optimal']}" + _gap_cell(s[m]) if m in s and "cpu_s" in s[m]
                       else "—" for m in METHODS)])
        rows.append([name, size, "active constraints (ours)",
                     *(f"{s[m]['active']:.0f}" if m in s and "active" in s[m] else "—" for m in METHODS)])
        if name in PUBLISHED:
            pub = PUBLISHED[name]
            rows.append([name, "thesis", "CPU time / active constr. (1 metric; MM)",
                         "", "", f"{pub['cpu_1m']} / {pub['active_1m']}", "", "",
                         f"{pub['cpu_mm']} / {pub['active_mm']}", ""])
        raw[name] = {key: res[key] for key in ("summary", "n_train", "n_test", "dim", "explained", "splits")}
    claims = _ordering_claims(found)
    verdict = "differs" if any(not ok for _, ok in claims) else "reproduced in trend"
    agreement = table2_1_agreement(found, png)
    _plot_table(found, png)
    return Outcome(
        published="Table 2.1 (percent), the columns of the data sets we have; the other six data sets are "
                  "unavailable (see the data note). The thesis rows are printed beside ours in the table below.",
        ours="Mean over splits ± standard error of the mean (one split: no ±).\n\n" + _md_table(header, rows),
        rows=raw, verdict=verdict, agreement=agreement, extra={"claims": [{"claim": c, "holds": ok}
                                                                          for c, ok in claims]})


def _plot_table(found: dict, png: Path) -> None:
    fig, axes = plt.subplots(1, len(found), figsize=(3.6 * len(found), 3.6), squeeze=False)
    for ax, (name, res) in zip(axes[0], found.items(), strict=True):
        s = res["summary"]
        methods = [m for m in METHODS if m in s]
        x = np.arange(len(methods))
        ax.bar(x - 0.2, [s[m].get("test_knn", 0) for m in methods], 0.4, label="ours, kNN")
        ax.bar(x + 0.2, [s[m].get("test_energy", 0) or 0 for m in methods], 0.4, label="ours, energy")
        if name in PUBLISHED:
            ax.plot(x - 0.2, [PUBLISHED[name]["test_knn"].get(m, np.nan) for m in methods], "k_", ms=12,
                    label="thesis, kNN")
            ax.plot(x + 0.2, [PUBLISHED[name]["test_energy"].get(m, np.nan) for m in methods], "r_", ms=12,
                    label="thesis, energy")
        ax.set_xticks(x, methods, rotation=60, fontsize=7)
        ax.set(title=name, ylabel="test error %")
    axes[0, 0].legend(fontsize=6)
    _save(fig, png)


# ------------------------------------------------------------------------------------------ Fig. 2.5


def fig2_5(config: dict, png: Path) -> Outcome:
    """Fig. 2.5 — training (leave-one-out) and test kNN errors under PCA, LDA and LMNN, and the energy rule.

    Paper
    -----
    The larger data sets of Table 2.1 (the same runs): kNN training and test errors after PCA,
    LDA and with the learned metric, and the energy classifier's test error. Published (text,
    Sec. 2.1.6): except on the smallest data set the learned metric improves kNN, in training
    and testing; the energy classifier beats kNN under both metrics on all the large data sets.

    Departures
    ----------
    - The runs of Table 2.1 (see its departures); the "large" data sets here are digits and
      MNIST (the thesis' five are unavailable), the small ones iris and wine.
    """
    found = _datasets(config, png)
    large = [n for n in found if n in ("digits", "mnist")]
    rows, claims = [], []
    for name, res in found.items():
        s = res["summary"]
        rows.append([name, *(_pct(s[m]["train"]) for m in ("PCA", "LDA", "PCA-LMNN")),
                     *(_pct(s[m]["test_knn"]) for m in ("PCA", "LDA", "PCA-LMNN")), _pct(s["PCA-LMNN"]["test_energy"])])
        if name in large:
            lmnn, pca = s["PCA-LMNN"], s["PCA"]
            claims.append((f"{name}: LMNN improves kNN (train and test)",
                           lmnn["train"] < pca["train"] and lmnn["test_knn"] < pca["test_knn"]))
            claims.append((f"{name}: energy < kNN under PCA and LMNN",
                           lmnn["test_energy"] < min(pca["test_knn"], lmnn["test_knn"])))
    failed = [c for c, ok in claims if not ok]
    verdict = "reproduced in trend" if claims and not failed else "differs"
    fig, axes = plt.subplots(1, len(found), figsize=(3.4 * len(found), 3.2), squeeze=False)
    for ax, (name, res) in zip(axes[0], found.items(), strict=True):
        s = res["summary"]
        labels = ["PCA", "LDA", "LMNN", "energy"]
        train = [s["PCA"]["train"], s["LDA"]["train"], s["PCA-LMNN"]["train"], np.nan]
        test = [s["PCA"]["test_knn"], s["LDA"]["test_knn"], s["PCA-LMNN"]["test_knn"], s["PCA-LMNN"]["test_energy"]]
        x = np.arange(4)
        ax.bar(x - 0.2, train, 0.4, label="train (LOO)")
        ax.bar(x + 0.2, test, 0.4, label="test")
        ax.set_xticks(x, labels, fontsize=8)
        ax.set(title=name, ylabel="error %")
    axes[0, 0].legend(fontsize=7)
    _save(fig, png)
    return Outcome(
        published="Bar charts (five data sets we do not have); the text: LMNN improves kNN except on the smallest "
                  "data set; energy beats kNN under both metrics on all large data sets.",
        ours=_md_table(["data set", "train PCA", "train LDA", "train LMNN", "test PCA", "test LDA", "test LMNN",
                        "test energy"], rows),
        rows=[{"claim": c, "holds": ok} for c, ok in claims], verdict=verdict,
        agreement=(f"{len(claims) - len(failed)} of {len(claims)} claims hold on the large data sets"
                   + (f"; not: {'; '.join(failed)}" if failed else "") + "."
                   + _tested_reasons(png, [f"fig2_5_{name}" for name in large
                                           if any(c.startswith(f"{name}: energy") for c in failed)])))


# ------------------------------------------------------------------------------------------ Fig. 2.9 and 2.12


def _ratio_figure(config: dict, png: Path, method: str, published_claim: str) -> tuple[list, list, dict]:
    found = _datasets(config, png)
    rows, ratios = [], {}
    for name, res in found.items():
        s = res["summary"]
        if method not in s:
            continue
        ours = {m: (s[method][m] / s["PCA-LMNN"][m] if s[method].get(m) is not None and s["PCA-LMNN"][m] > 0
                    else None) for m in ("train", "test_knn", "test_energy")}
        pub = PUBLISHED.get(name)
        theirs = ({m: pub[m][method] / pub[m]["PCA-LMNN"] if pub[m]["PCA-LMNN"] > 0 else None
                   for m in ("train", "test_knn", "test_energy")} if pub else {})
        ratios[name] = {"ours": ours, "thesis": theirs}
        rows.append([name, *(_pct(ours[m]) for m in ("train", "test_knn", "test_energy")),
                     *(_pct(theirs.get(m)) for m in ("train", "test_knn", "test_energy"))])
    fig, ax = plt.subplots(figsize=(6, 3.4))
    names = list(ratios)
    x = np.arange(len(names))
    for offset, measure in zip((-0.25, 0.0, 0.25), ("train", "test_knn", "test_energy"), strict=True):
        ax.bar(x + offset, [ratios[n]["ours"][measure] or np.nan for n in names], 0.25, label=f"ours, {measure}")
        ax.plot(x + offset, [ratios[n]["thesis"].get(measure, np.nan) or np.nan for n in names], "k_", ms=10)
    ax.axhline(1.0, color="0.5", lw=0.8)
    ax.set_xticks(x, names)
    ax.set(ylabel=f"{method} / PCA-LMNN error", title=published_claim)
    ax.legend(fontsize=7)
    _save(fig, png)
    return rows, names, ratios


def _tested_reasons(png: Path, keys: list[str], conclude: bool = True) -> str:
    """The verdicts and findings of the stored reason tests ``keys`` (experiments beside ``png``), and — when
    every one of them was run and refuted its hypothesis, and ``conclude`` — the plain statement up front that
    no reason was found (left out where one test is quoted whole, its own finding saying so).

    A reason test's verdict is *reproduced in trend* exactly when its hypothesis held (each such experiment
    decides both by the rule fixed in its docstring), so a *differs* among them is a refuted hypothesis.
    """
    if not keys:
        return ""
    found, missing = [], []
    for key in keys:
        stored = png.with_name(f"{key}.json")
        if stored.exists():
            found.append(json.loads(stored.read_text()))
        else:
            missing.append(key)
    text = "".join(f" Tested by the experiment '{r['title']}' (*{r['verdict']}*): {r['agreement']}" for r in found)
    text += "".join(f" The experiment '{key}' tests it (not run yet)." for key in missing)
    if conclude and found and not missing and all(r["verdict"] == "differs" for r in found):
        text = (" Reason not found; tested and refuted: " + "; ".join(f"'{r['title']}'" for r in found) + "."
                + text)
    return text


def fig2_9(config: dict, png: Path) -> Outcome:
    """Fig. 2.9 — kNN and energy errors after multiple applications of LMNN, relative to one application.

    Paper
    -----
    LMNN applied repeatedly, each run on the output of the last with re-chosen target
    neighbours (Sec. 2.1.8); the number of runs and k chosen on a 30 % validation part of the
    training set. Published: ratios of MUL-LMNN to LMNN errors (training kNN, test kNN, test
    energy); "the results significantly improve or stay almost identical" on every data set.
    The thesis' absolute numbers are Table 2.1's MUL-LMNN and PCA-LMNN rows.

    Departures
    ----------
    - The runs of Table 2.1: 3 passes and k = 3 fixed, no validation set.
    - "Almost identical" is read as a ratio ≤ 1.05 of the test kNN error.
    """
    rows, names, ratios = _ratio_figure(config, png, "MUL-LMNN", "multiple passes over one pass")
    worse = [n for n in names if (ratios[n]["ours"]["test_knn"] or 0) > 1.05]
    verdict = "reproduced in trend" if not worse else "differs"
    return Outcome(
        published="Ratios from Table 2.1 (MUL-LMNN / PCA-LMNN) for our data sets in the right-hand columns; text: "
                  "improve or stay almost identical everywhere.",
        ours=_md_table(["data set", "train (ours)", "test kNN (ours)", "test energy (ours)", "train (thesis)",
                        "test kNN (thesis)", "test energy (thesis)"], rows),
        rows=ratios, verdict=verdict,
        agreement=("Test kNN error ratio ≤ 1.05 on every data set" if not worse else
                   f"Test kNN error grows by more than 5 % with 3 passes on {', '.join(worse)} (the thesis chose the "
                   "number of passes on a validation set)") + "."
                   + _tested_reasons(png, [f"fig2_9_{name}" for name in worse if name in ("digits", "mnist")]))


def fig2_12(config: dict, png: Path) -> Outcome:
    """Fig. 2.12 — kNN and energy errors with one metric per class, relative to a single metric.

    Paper
    -----
    MM-LMNN (2.17), one metric per class, learned jointly, initialised with the single metric,
    with a 30 % validation set against overfitting. Published: ratios of MM-LMNN to LMNN
    errors; multiple metrics improve kNN on several of the large data sets (MNIST 1.18 % against
    1.72 %); on the high-dimensional sets with many classes they overfit. The absolute numbers
    are Table 2.1's MM-LMNN rows.

    Departures
    ----------
    - The runs of Table 2.1: no validation set, solved from scratch to the certified optimum.
    - No MM-LMNN on MNIST (time box: 10 metrics of 164² in one SDP; see the experiment
      "Table 2.1, MNIST" at fewer dimensions). The energy ratio uses the multi-metric energy
      rule (``MultiMetricLMNN.predict_energy``).
    """
    rows, names, ratios = _ratio_figure(config, png, "MM-LMNN", "one metric per class over one metric")
    better = [n for n in names if (ratios[n]["ours"]["test_knn"] or 1) < 1.0]
    stored = png.with_name("table2_1_mnist_mm.json")        # MNIST's MM-LMNN row, run at fewer dimensions
    if stored.exists():
        mm = json.loads(stored.read_text())["rows"]
        ratio = mm["MM-LMNN"]["test_knn"] / max(mm["PCA-LMNN"]["test_knn"], 1e-12)
        energy = (mm["MM-LMNN"]["test_energy"] / max(mm["PCA-LMNN"]["test_energy"], 1e-12)
                  if "test_energy" in mm["MM-LMNN"] else None)     # absent from records before the energy column
        ratios["mnist (Table 2.1, MNIST MM-LMNN)"] = {"ours": {"test_knn": ratio, "test_energy": energy},
                                                       "thesis": {"test_knn": 1.18 / 1.72, "test_energy": 1.23 / 1.37}}
        rows.append(["mnist (experiment 'Table 2.1, MNIST')", "—", _pct(ratio), _pct(energy), "—", _pct(1.18 / 1.72),
                     _pct(1.23 / 1.37)])
        if ratio < 1.0:
            better.append("mnist")
    verdict = "reproduced in trend" if "digits" in better or "mnist" in better else "differs"
    return Outcome(
        published="Ratios from Table 2.1 (MM-LMNN / PCA-LMNN) in the right-hand columns: iris 1.07 (test kNN), wine "
                  "1.00, MNIST 0.69.",
        ours=_md_table(["data set", "train (ours)", "test kNN (ours)", "test energy (ours)", "train (thesis)",
                        "test kNN (thesis)", "test energy (thesis)"], rows),
        rows=ratios, verdict=verdict,
        agreement=(f"Multiple metrics lower the test kNN error on {', '.join(better) or 'no data set'}; the thesis: on "
                   "several large data sets (MNIST), not on iris (1.07) and wine (1.00)."))


# ------------------------------------------------------------------------------ Fig. 2.5 and 2.9: digits and MNIST, why


_DIGITS_STUDY = {"splits": 20, "dims": 30, "passes": [1, 2, 3], "validation": 0.3, "k": 3, "mu": 0.5, "seed": 0}
_MNIST_STUDY = {"splits": 10, "mnist_train": 2000, "mnist_test": 1000, "dims": 40, "passes": [1, 2, 3],
                "validation": 0.3, "k": 3, "mu": 0.5, "seed": 0}
_MNIST_STUDY_QUICK = {**_MNIST_STUDY, "splits": 2, "mnist_train": 300, "mnist_test": 150, "dims": 10,
                      "passes": [1, 2]}


def _study_split(name: str, split: int, config: dict) -> dict:
    """Split ``split`` of a study's data set: digits 70/30, or MNIST ``mnist_train``/``mnist_test`` images of the
    vendored set, deskewed; both reduced to ``dims`` principal components fitted on the training part."""
    if name == "digits":
        return _split("digits", split, {"seed": config["seed"], "digits_dims": config["dims"]})
    return _split("mnist", split, {"seed": config["seed"], "mnist_train": config["mnist_train"],
                                   "mnist_test": config["mnist_test"], "mnist_dims": config["dims"]})


@functools.cache
def _split_study(name: str, settings_json: str) -> list[dict]:
    """Per split of ``name`` (seeds ``seed`` + split): PCA's and LMNN's kNN and energy test errors, the kNN
    test error after each number of passes, and the number of passes a validation part of the training set
    chooses (computed once per process, data set and settings)."""
    config = json.loads(settings_json)
    k, mu, passes = config["k"], config["mu"], config["passes"]
    out = []
    for split in track(range(config["splits"]), f"{name} splits", unit="split"):
        data = _study_split(name, split, config)
        Xtr, Xte, ytr, yte = data["Xtr"], data["Xte"], data["ytr"], data["yte"]
        row = {"n_test": int(len(yte)), "pca_knn": _euclidean_errors(Xtr, ytr, Xte, yte, k)[1],
               "pca_energy": _energy_error(Xtr, ytr, Xte, yte, target_neighbors(Xtr, ytr, k), k, mu)}
        knn, statuses = {}, []
        for p in passes:
            model, cpu = _fit(LMNN(k, mu, n_repeats=p), Xtr, ytr)
            result = _lmnn_row(model, Xtr, ytr, Xte, yte, k, mu, cpu)
            knn[p] = result["test_knn"]
            statuses += result["status"].split(",")
            if p == 1:
                row["lmnn_knn"], row["lmnn_energy"] = result["test_knn"], result["test_energy"]
        Xa, Xv, ya, yv = train_test_split(Xtr, ytr, test_size=config["validation"],
                                          random_state=config["seed"] + split)
        validation = {}
        for p in passes:
            model, _ = _fit(LMNN(k, mu, n_repeats=p), Xa, ya)
            validation[p] = _euclidean_errors(model.transform(Xa), ya, model.transform(Xv), yv, k)[1]
        chosen = min(passes, key=lambda p: (validation[p], p))          # ties: fewer passes
        row.update({"passes_knn": {str(p): v for p, v in knn.items()}, "validation_knn":
                    {str(p): v for p, v in validation.items()}, "chosen": chosen, "validated_knn": knn[chosen],
                    "optimal": f"{sum(s == 'optimal' for s in statuses)}/{len(statuses)}"})
        out.append(row)
    return out


def _paired(rows: list[dict], a: str, b: str) -> tuple[float, float]:
    """Mean and standard error of the per-split difference a − b."""
    d = np.array([r[a] - r[b] for r in rows])
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")


def _energy_study(name: str, config: dict, png: Path, one_split: str) -> Outcome:
    """The energy rule against kNN over the splits of :func:`_split_study` on ``name`` (Fig. 2.5's claim);
    ``one_split`` is the published-side sentence about the single split being tested."""
    rows = _split_study(name, json.dumps(config, sort_keys=True))
    mean = {key: float(np.mean([r[key] for r in rows])) for key in ("pca_knn", "pca_energy", "lmnn_knn", "lmnn_energy")}
    diff, se = _paired(rows, "lmnn_energy", "lmnn_knn")
    diff_pca, se_pca = _paired(rows, "lmnn_energy", "pca_knn")
    holds = mean["lmnn_energy"] < min(mean["lmnn_knn"], mean["pca_knn"])
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    ax.plot(np.arange(len(rows)), [r["lmnn_knn"] for r in rows], "o-", label="LMNN kNN")
    ax.plot(np.arange(len(rows)), [r["lmnn_energy"] for r in rows], "s-", label="LMNN energy")
    ax.plot(np.arange(len(rows)), [r["pca_knn"] for r in rows], ".:", label="PCA kNN")
    ax.set(xlabel="split", ylabel="test error %", title=f"{name}: energy rule against kNN, per split")
    ax.legend(fontsize=7)
    _save(fig, png)
    table = [[i, _pct(r["pca_knn"]), _pct(r["pca_energy"]), _pct(r["lmnn_knn"]), _pct(r["lmnn_energy"]), r["optimal"]]
             for i, r in enumerate(rows)]
    table.append(["mean", *(_pct(mean[key]) for key in ("pca_knn", "pca_energy", "lmnn_knn", "lmnn_energy")), ""])
    significance = (f"the paired difference energy − LMNN kNN is {diff:+.3f} ± {se:.3f} points ("
                    + ("more than 2 standard errors below zero" if diff < -2.0 * se else
                       "more than 2 standard errors above zero" if diff > 2.0 * se else "within 2 standard errors")
                    + f"), energy − PCA kNN {diff_pca:+.3f} ± {se_pca:.3f}")
    return Outcome(
        published="Energy below kNN under both metrics on every large data set (Fig. 2.5; text, Sec. 2.1.6).",
        ours=(f"{len(rows)} {name} splits (test errors %, {rows[0]['n_test']} test points each); paired difference "
              f"LMNN energy − LMNN kNN: {diff:+.3f} ± {se:.3f} points; LMNN energy − PCA kNN: {diff_pca:+.3f} ± "
              f"{se_pca:.3f}.\n\n"
              + _md_table(["split", "PCA kNN", "PCA energy", "LMNN kNN", "LMNN energy", "LMNN optimal"], table)),
        rows={"splits": rows, "mean": mean, "energy_minus_knn": diff, "se": se, "energy_minus_pca_knn": diff_pca,
              "se_pca": se_pca, "hypothesis": "supported" if holds else "refuted"},
        verdict="reproduced in trend" if holds else "differs",
        agreement=(f"Over {len(rows)} splits the energy rule's mean test error is {mean['lmnn_energy']:.2f} % against "
                   f"LMNN kNN {mean['lmnn_knn']:.2f} % and PCA kNN {mean['pca_knn']:.2f} %; {significance}. "
                   + (f"The hypothesis holds: the claim holds on the means, and {one_split} was the noise of one split."
                      if holds else
                      f"Reason not found; tested and refuted: the noise of one split ({one_split}) — the claim does "
                      f"not hold on the means of {len(rows)} splits either.")))


def fig2_5_digits(config: dict, png: Path) -> Outcome:
    """Fig. 2.5, digits — is the energy rule's loss to kNN on digits the noise of one split?

    Paper
    -----
    Fig. 2.5 and Sec. 2.1.6: "the energy classifier outperforms the kNN results under both
    metrics on all of the large data sets". Our Fig. 2.5 rests on one digits split of 540 test
    points, where the energy rule made one error more than LMNN's kNN (1.11 % against 0.93 %).
    Hypothesis, fixed before this run: that reversal is the noise of one split. Test: over
    ``splits`` random 70/30 splits (the first is Table 2.1's), the claim holds on the means
    (energy below LMNN's and PCA's kNN test error); the paired difference energy − kNN and its
    standard error say whether a remaining reversal is significant (more than 2 standard errors).

    Departures
    ----------
    - scikit-learn's digits (1,797 8×8 images; none of the thesis' data sets), PCA to ``dims``
      fitted on each training part; k = 3, μ = 0.5; LMNN the certified optimum of (2.11).
    """
    return _energy_study("digits", config, png, "the one-split reversal of Fig. 2.5 (1.11 % against 0.93 %)")


def fig2_5_mnist(config: dict, png: Path) -> Outcome:
    """Fig. 2.5 and Table 2.1, MNIST — is the energy rule's tie with kNN on MNIST the noise of one split?

    Paper
    -----
    Fig. 2.5 and Sec. 2.1.6: "the energy classifier outperforms the kNN results under both
    metrics on all of the large data sets"; Table 2.1, MNIST: PCA-LMNN energy 1.37 % against kNN
    1.72 % (60,000 training images). Our Table 2.1 run (one split, 7,000 training and 3,000
    test images, 164 dimensions) has a tie, 1.70 % = 1.70 %. Hypothesis, fixed before this run:
    the tie is the noise of one split. Test: over ``splits`` random splits of the vendored
    images, the claim holds on the means (energy below LMNN's and PCA's kNN test error); the
    paired differences and their standard errors say whether a remaining difference is
    significant (more than 2 standard errors).

    Departures
    ----------
    - Smaller than Table 2.1's MNIST run so that many splits fit a few minutes of CPU:
      ``mnist_train`` training and ``mnist_test`` test images drawn at random from the vendored
      10,000 test images per split, deskewed, PCA to ``dims`` fitted on the training part
      (Table 2.1: 7,000/3,000 and 164; the thesis 60,000/10,000 and 164); k = 3, μ = 0.5; LMNN
      the certified optimum of (2.11).
    """
    return _energy_study("mnist", config, png, "Table 2.1's MNIST tie (1.70 % = 1.70 %)")


def _passes_study(name: str, config: dict, png: Path) -> Outcome:
    """Passes of LMNN chosen on a validation part against one pass, over the splits of :func:`_split_study`."""
    rows = _split_study(name, json.dumps(config, sort_keys=True))
    one = float(np.mean([r["lmnn_knn"] for r in rows]))
    per_pass = {p: float(np.mean([r["passes_knn"][str(p)] for r in rows])) for p in config["passes"]}
    validated = float(np.mean([r["validated_knn"] for r in rows]))
    ratio, fixed_ratio = validated / max(one, 1e-12), per_pass[max(config["passes"])] / max(one, 1e-12)
    chosen = [r["chosen"] for r in rows]
    diff, se = _paired(rows, "validated_knn", "lmnn_knn")
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.bar([str(p) for p in per_pass] + ["validated"], [*per_pass.values(), validated], color="0.5")
    ax.set(ylabel="mean test kNN error %", title=f"{name}, {len(rows)} splits: passes of LMNN")
    _save(fig, png)
    table = [[str(p), _pct(v), _pct(v / max(one, 1e-12))] for p, v in per_pass.items()]
    table.append(["chosen on validation", _pct(validated), _pct(ratio)])
    return Outcome(
        published="MUL-LMNN / LMNN error ratios: improve or stay almost identical on every data set (Fig. 2.9).",
        ours=(f"{len(rows)} {name} splits; passes chosen: "
              + ", ".join(f"{p}: {chosen.count(p)}×" for p in config["passes"])
              + f"; paired difference validated − one pass {diff:+.3f} ± {se:.3f} points.\n\n"
              + _md_table(["passes", "mean test kNN %", "ratio to one pass"], table)),
        rows={"splits": rows, "one_pass": one, "per_pass": {str(p): v for p, v in per_pass.items()},
              "validated": validated, "ratio": ratio, "fixed_ratio": fixed_ratio,
              "hypothesis": "supported" if ratio <= 1.05 else "refuted"},
        verdict="reproduced in trend" if ratio <= 1.05 else "differs",
        agreement=_passes_agreement(name, ratio, validated, one, max(config["passes"]), fixed_ratio,
                                    _fig2_9_numbers(png, name)))


def fig2_9_digits(config: dict, png: Path) -> Outcome:
    """Fig. 2.9, digits — do more passes hurt on digits, or did one split and fixed passes say so?

    Paper
    -----
    Fig. 2.9: the number of passes (and k) chosen on a 30 % validation part of the training
    set; "on all of the data sets the results significantly improve or stay almost identical".
    Our Fig. 2.9 ran 3 fixed passes on one digits split of 540 test points and found the test
    kNN error more than 1.05 times one pass's (the ratio and both errors are read from the stored
    record of Table 2.1, whose runs Fig. 2.9 draws and which a run of the paper writes first).
    Hypothesis, fixed before this run: the fixed number of passes and one split's noise explain
    it; with the passes chosen on a validation part as the thesis does, the ratio over
    ``splits`` splits is at most 1.05.

    Departures
    ----------
    - scikit-learn's digits, PCA to ``dims``, k = 3 fixed (the thesis also chose k), passes
      chosen among ``passes`` on a ``validation`` part of each training part (ties: fewer
      passes), then refitted on the whole training part; LMNN the certified optimum of (2.11)
      at every pass.
    """
    return _passes_study("digits", config, png)


def fig2_9_mnist(config: dict, png: Path) -> Outcome:
    """Fig. 2.9, MNIST — do more passes hurt on MNIST, or did one split and fixed passes say so?

    Paper
    -----
    Fig. 2.9: the number of passes (and k) chosen on a 30 % validation part of the training
    set; "on all of the data sets the results significantly improve or stay almost identical";
    Table 2.1, MNIST: MUL-LMNN 1.69 % against PCA-LMNN 1.72 % (ratio 0.98). Our Fig. 2.9 ran 3
    fixed passes on Table 2.1's one MNIST split (3,000 test images) and found the test kNN error
    more than 1.05 times one pass's (read from the stored record of Table 2.1). Hypothesis,
    fixed before this run: the fixed number of passes and one split's noise explain it; with the
    passes chosen on a validation part as the thesis does, the ratio over ``splits`` splits is at
    most 1.05.

    Departures
    ----------
    - Smaller than Table 2.1's MNIST run so that many splits fit a few minutes of CPU:
      ``mnist_train`` training and ``mnist_test`` test images drawn at random from the vendored
      10,000 test images per split, deskewed, PCA to ``dims`` fitted on the training part; k = 3
      fixed, passes chosen among ``passes`` on a ``validation`` part of each training part (ties:
      fewer passes), then refitted on the whole training part; LMNN the certified optimum of
      (2.11) at every pass.
    """
    return _passes_study("mnist", config, png)


def _fig2_9_numbers(png: Path, name: str) -> dict | None:
    """Fig. 2.9's numbers for ``name`` — test kNN error after one and after the fixed passes of Table 2.1's
    MUL-LMNN, and their ratio — from Table 2.1's stored record; None if it has no such row."""
    stored = png.with_name("table2_1.json")
    if not stored.exists():
        return None
    summary = json.loads(stored.read_text())["rows"].get(name, {}).get("summary", {})
    if "MUL-LMNN" not in summary:
        return None
    one, more = summary["PCA-LMNN"]["test_knn"], summary["MUL-LMNN"]["test_knn"]
    return {"one": one, "passes": more, "ratio": more / max(one, 1e-12)}


def _passes_agreement(name: str, ratio: float, validated: float, one: float, most: int, fixed_ratio: float,
                      fig2_9: dict | None) -> str:
    """The verdict sentence of :func:`_passes_study`, naming Fig. 2.9's ratio on ``name`` as the record has it."""
    single = (f"Fig. 2.9's {fig2_9['ratio']:.2f} ({fig2_9['one']:.2f} % → {fig2_9['passes']:.2f} %, Table 2.1's "
              f"stored {name} split)" if fig2_9 is not None else "Fig. 2.9's ratio (Table 2.1 not run yet)")
    return (f"With the passes chosen on a validation part the mean test kNN error is {ratio:.2f} times one pass's "
            f"({validated:.2f} % against {one:.2f} %); {most} fixed passes give {fixed_ratio:.2f}. "
            + (f"The hypothesis holds: chosen as the thesis chooses them, passes do not hurt on {name}, and {single} "
               "was one split with fixed passes." if ratio <= 1.05 else
               f"Reason not found; tested and refuted: fixed passes and the noise of one split — even with validated "
               f"passes the error grows by more than 5 % on {name} ({single} on one split with fixed passes)."))


# ------------------------------------------------------------------------------------------ Fig. 2.8


def fig2_8(config: dict, png: Path) -> Outcome:
    """Fig. 2.8 — handwritten digits whose nearest neighbour changes from a mismatch to a match after LMNN.

    Paper
    -----
    MNIST as in Table 2.1; test digits whose nearest training neighbour under the Euclidean
    distance (after PCA) has another label and under the learned metric the same label,
    shown with both neighbours. A picture; the numbers behind it are Table 2.1's errors.

    Departures
    ----------
    - Table 2.1's MNIST split and PCA-LMNN (7,000 training images of the vendored test set; see
      its departures), solved again here (the solver is deterministic). We also count the test
      digits whose 1-NN label LMNN fixes and those it breaks.
    """
    data = _split("mnist", 0, _settings("mnist", config))
    Xtr, Xte, ytr, yte = data["Xtr"], data["Xte"], data["ytr"], data["yte"]
    L = _fit(LMNN(config["k"], config["mu"]), Xtr, ytr)[0].components_        # Table 2.1's PCA-LMNN on MNIST
    nn_before = np.concatenate([np.argmin(_sq_distances(Xte[r], Xtr), axis=1)
                                for r in np.array_split(np.arange(len(yte)), 4)])
    Ztr, Zte = Xtr @ L.T, Xte @ L.T
    nn_after = np.concatenate([np.argmin(_sq_distances(Zte[r], Ztr), axis=1)
                               for r in np.array_split(np.arange(len(yte)), 4)])
    ok_before, ok_after = ytr[nn_before] == yte, ytr[nn_after] == yte
    fixed = np.flatnonzero(~ok_before & ok_after)
    broken = np.flatnonzero(ok_before & ~ok_after)
    show = fixed[:config["n_show"]]
    images_tr, images_te = data["raw"]
    fig, axes = plt.subplots(3, max(len(show), 1), figsize=(1.2 * max(len(show), 1), 3.8), squeeze=False)
    for col, t in enumerate(show):
        for row, (img, title) in enumerate(((images_te[t], f"test {yte[t]}"),
                                            (images_tr[nn_before[t]], f"before {ytr[nn_before[t]]}"),
                                            (images_tr[nn_after[t]], f"after {ytr[nn_after[t]]}"))):
            axes[row, col].imshow(img.reshape(28, 28), cmap="gray_r")
            axes[row, col].set_title(title, fontsize=7)
            axes[row, col].axis("off")
    _save(fig, png)
    verdict = "reproduced in trend" if len(fixed) > len(broken) else "differs"
    n = len(yte)
    return Outcome(
        published="Pictures only: digits (zero–four, five–nine) whose nearest neighbour is of another class before "
                  "LMNN and of the same class after.",
        ours=(f"On {n} test digits, 1-NN error {100 * np.mean(~ok_before):.2f} % before and "
              f"{100 * np.mean(~ok_after):.2f} % after LMNN; {len(fixed)} digits fixed, {len(broken)} broken; the "
              f"figure shows the first {len(show)} fixed ones (top: test digit; middle: Euclidean neighbour; bottom: "
              "LMNN neighbour)."),
        rows={"n_test": int(n), "fixed": int(len(fixed)), "broken": int(len(broken)),
              "error_before": float(np.mean(~ok_before)), "error_after": float(np.mean(~ok_after)),
              "shown": show.tolist()},
        verdict=verdict,
        agreement=f"LMNN fixes {len(fixed)} nearest neighbours and breaks {len(broken)}: the picture's examples exist, "
                  + ("and fixes outnumber breaks." if len(fixed) > len(broken) else "but breaks are as many."))


# ------------------------------------------------------------------------------------------ Fig. 2.3–2.4


def _square(n: int, rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
    """n uniform points of [0, 10]², labelled by the half they lie in; drawn again until each half has k + 1."""
    while True:
        X = rng.uniform(0.0, 10.0, size=(n, 2))
        y = (X[:, 1] > 5.0).astype(np.int64)
        if min(np.sum(y), n - np.sum(y)) > k:
            return X, y


def fig2_3_4(config: dict, png: Path) -> Outcome:
    """Fig. 2.3–2.4 — the upper/lower half of [0, 10]²: LMNN's map and the 1-NN error against training size.

    Paper
    -----
    Points uniform on [0, 10]², labelled 1 in the upper half and 0 in the lower; LMNN (2.8)
    learned on n of them. Fig. 2.3 (n = 1,000): LMNN mainly rescales the horizontal direction
    by 1.4 and the vertical by 2.2 (plus slight skew). Fig. 2.4: the probability p that a
    uniform test point is misclassified by 1-NN, Euclidean against LMNN, averaged over 100
    runs per training size: both fall towards 0, LMNN's significantly below the Euclidean one.

    Departures
    ----------
    - p is measured on a regular grid of test points (``grid`` × ``grid``), not as an area.
    - The training sizes of the figure's axis are not stated in the text; ours are ``sizes``,
      with ``runs`` runs each (the thesis: 100; ours 10 in the full run), k = 3 target
      neighbours (not stated), μ = 0.5; a sample with fewer than k + 1 points in a half is
      drawn again (LMNN needs k target neighbours).
    """
    g = (np.arange(config["grid"]) + 0.5) * 10.0 / config["grid"]
    G = np.stack(np.meshgrid(g, g), axis=-1).reshape(-1, 2)
    truth = (G[:, 1] > 5.0).astype(np.int64)
    rng = np.random.default_rng(config["seed"])
    curves = {"euclidean": [], "lmnn": [], "euclidean_se": [], "lmnn_se": []}
    statuses, scale = [], None
    for n in track(config["sizes"], "Fig. 2.4 sizes", unit="size"):
        errs = {"euclidean": [], "lmnn": []}
        for _ in range(config["runs"]):
            X, y = _square(n, rng, config["k"])
            model, _ = _fit(LMNN(config["k"], config["mu"]), X, y)
            statuses.append(model.result_.status)
            L = model.components_
            for key, (A, B) in (("euclidean", (X, G)), ("lmnn", (X @ L.T, G @ L.T))):
                nearest = np.concatenate([np.argmin(_sq_distances(B[r], A), axis=1)
                                          for r in np.array_split(np.arange(len(B)), 8)])
                errs[key].append(float(np.mean(y[nearest] != truth)))
        for key in ("euclidean", "lmnn"):
            curves[key].append(float(np.mean(errs[key])))
            curves[key + "_se"].append(float(np.std(errs[key]) / np.sqrt(len(errs[key]))))
        if n == max(config["sizes"]):
            M = model.metric_
            scale = {"horizontal": float(np.sqrt(M[0, 0])), "vertical": float(np.sqrt(M[1, 1])),
                     "skew_cos": float(M[0, 1] / np.sqrt(M[0, 0] * M[1, 1])), "n": int(n)}
            shown = (X, y, L)
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    X, y, L = shown
    for ax, (Z, title) in zip(axes[:2], ((X, "input space"), (X @ L.T, "after LMNN")), strict=True):
        ax.scatter(Z[:, 0], Z[:, 1], c=y, cmap="coolwarm", s=4)
        ax.set(title=f"{title}, n = {len(X)}", aspect="equal")
    axes[2].errorbar(config["sizes"], curves["euclidean"], curves["euclidean_se"], fmt="b.-", label="Euclidean")
    axes[2].errorbar(config["sizes"], curves["lmnn"], curves["lmnn_se"], fmt="r.-", label="LMNN")
    axes[2].set(xscale="log", xlabel="training points n", ylabel="P(1-NN error)", title="Fig. 2.4")
    axes[2].legend()
    _save(fig, png)
    below = all(a < b for a, b in zip(curves["lmnn"], curves["euclidean"], strict=True))
    falling = curves["lmnn"][-1] < curves["lmnn"][0] and curves["euclidean"][-1] < curves["euclidean"][0]
    vertical_more = scale["vertical"] > scale["horizontal"]
    verdict = "reproduced in trend" if below and falling and vertical_more else "differs"
    rows = [[n, f"{100 * e:.2f} ± {100 * es:.2f}", f"{100 * m:.2f} ± {100 * ms:.2f}"]
            for n, e, es, m, ms in zip(config["sizes"], curves["euclidean"], curves["euclidean_se"], curves["lmnn"],
                                       curves["lmnn_se"], strict=True)]
    optimal = sum(s == "optimal" for s in statuses)
    return Outcome(
        published="Fig. 2.3 (n = 1,000): horizontal stretch 1.4, vertical 2.2 (ratio 1.57). Fig. 2.4: both curves "
                  "fall towards 0 with n, LMNN's significantly below the Euclidean one (curves only).",
        ours=(f"{config['runs']} runs per size; {optimal}/{len(statuses)} solves optimal. At n = {scale['n']}: "
              f"horizontal stretch √M₁₁ = {scale['horizontal']:.2f}, vertical √M₂₂ = {scale['vertical']:.2f} "
              f"(ratio {scale['vertical'] / scale['horizontal']:.2f}), cosine of the skew "
              f"{scale['skew_cos']:+.2f}.\n\n" + _md_table(["n", "Euclidean 1-NN error %", "LMNN 1-NN error %"], rows)),
        rows={"sizes": config["sizes"], "curves": curves, "scale": scale, "optimal": optimal,
              "solves": len(statuses)},
        verdict=verdict,
        agreement=(f"LMNN's error is {'below' if below else 'not below'} the Euclidean one at every size, both "
                   f"{'fall' if falling else 'do not both fall'} with n; the vertical direction is stretched "
                   f"{'more' if vertical_more else 'less'} than the horizontal (ours "
                   f"{scale['vertical']:.2f} vs {scale['horizontal']:.2f}; thesis 2.2 vs 1.4)."))


# ------------------------------------------------------------------------------------------ Fig. 2.10


def two_circles(n_per_circle: int, radii: tuple[float, float], jitter: float,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two concentric circles, one class each, their points interleaved in angle (the outer circle's
    half a step from the inner's), each angle moved by up to ``jitter``/2 steps at random."""
    step = 2.0 * np.pi / n_per_circle
    X, y = [], []
    for c, (radius, shift) in enumerate(zip(radii, (0.0, 0.5), strict=True)):
        t = step * (np.arange(n_per_circle) + shift + jitter * rng.uniform(-0.5, 0.5, n_per_circle))
        X.append(radius * np.column_stack([np.cos(t), np.sin(t)]))
        y.append(np.full(n_per_circle, c))
    return np.concatenate(X), np.concatenate(y)


_FIG2_10 = {"n_per_circle": 60, "radii": [1.0, 1.08], "jitter": 0.0, "metrics": [1, 2, 3, 6, 12], "k": 1, "mu": 0.5,
            "seed": 0}


def fig2_10(config: dict, png: Path) -> Outcome:
    """Fig. 2.10 — two concentric circles: the leave-one-out 1-NN error with one, two and three metrics.

    Paper
    -----
    Sec. 2.1.8: points sampled from two concentric circles, one class each; the leave-one-out
    1-NN training error after learning one, two and three metrics, the data divided into that
    many clusters by k-means, each cluster with its own linear map; the figure draws the
    principal directions of each metric. Published (text): 100 % with one metric (a linear map
    cannot separate the circles), 21 % with two clusters, 0 % with three.

    Departures
    ----------
    - The thesis writes the multi-metric SDP only for clusters that are classes, where
      D̂(x_i, x_j) = (x_i − x_j)ᵀ M^{y_j} (x_i − x_j) (2.17) uses the metric of the second point's
      class. Our reading for k-means clusters: the metric of the second point's *cluster*,
      M^{c_j} (for a target pair, the target's; for an impostor pair, the impostor's), in the
      pull term, the hinges and the 1-NN rule alike — not stated by the thesis, whose pairs may
      span two clusters. Solved by sdpembed's ``lmnn_multi`` with the clusters as its
      ``metric_groups`` (``MultiMetricLMNN().fit(X, y, metric_groups=clusters)``: the interior
      point on an exact working set, certified by the problem's dual bound); one cluster is
      LMNN (2.11).
    - The layout is ours (the thesis gives no radii, counts or noise): ``n_per_circle`` points on
      each of two circles of radii ``radii``, interleaved in angle so that every point's
      Euclidean nearest neighbour lies on the other circle (the thesis' 100 % with one metric),
      angles jittered by up to ``jitter``/2 steps; k = 1 target neighbour, μ = ``mu``; k-means
      (scikit-learn, 10 starts) on the points without their labels.
    - Beyond the thesis' one to three metrics, more clusters (``metrics``) test why the error
      does not fall when it does not: narrower sectors, over which the radial direction turns less.
    """
    rng = np.random.default_rng(config["seed"])
    X, y = two_circles(config["n_per_circle"], tuple(config["radii"]), config["jitter"], rng)
    k, mu = config["k"], config["mu"]
    euclid = knn_errors(lambda r: _sq_distances(X[r], X), y, y, len(y), 1, leave_one_out=True)
    found, solves = {}, {}
    for m in config["metrics"]:
        from sklearn.cluster import KMeans  # at first use: only this experiment clusters

        clusters = (np.zeros(len(y), dtype=np.int64) if m == 1 else
                    KMeans(m, n_init=10, random_state=config["seed"]).fit(X).labels_.astype(np.int64))
        model, cpu = _fit(MultiMetricLMNN(k, mu), X, y, metric_groups=clusters)
        result = model.result_
        loo = knn_errors(lambda r, model=model: model.distances(X[r]), y, y, len(y), 1, leave_one_out=True)
        found[m] = {"loo_1nn": loo, "status": result.status, "objective": float(result.objective),
                    "bound": float(result.dual_bound), "relative_gap": float(result.relative_gap), "cpu_s": cpu,
                    "cluster_sizes": np.bincount(clusters).tolist()}
        solves[m] = (clusters, model.metrics_)
    fig, axes = plt.subplots(1, len(found), figsize=(3.4 * len(found), 3.4))
    for ax, (m, (clusters, Ms)) in zip(np.atleast_1d(axes), solves.items(), strict=True):
        for c in range(m):
            pts = clusters == c
            ax.scatter(X[pts & (y == 0), 0], X[pts & (y == 0), 1], s=8, marker="o^s"[c % 3], color="tab:blue")
            ax.scatter(X[pts & (y == 1), 0], X[pts & (y == 1), 1], s=8, marker="o^s"[c % 3], color="tab:orange")
            w, V = np.linalg.eigh(Ms[c])
            centre = X[pts].mean(axis=0)
            for e in range(w.size):                      # principal directions, length ∝ √λ
                arrow = 0.4 * np.sqrt(w[e] / max(w[-1], 1e-300)) * V[:, e]
                ax.annotate("", centre + arrow, centre, arrowprops={"arrowstyle": "->", "lw": 1.2})
        ax.set(title=f"{m} metric{'s' * (m > 1)}: LOO 1-NN {found[m]['loo_1nn']:.0f} %", aspect="equal")
        ax.set_xticks([]), ax.set_yticks([])
    _save(fig, png)
    published = {1: 100.0, 2: 21.0, 3: 0.0}
    errors = [found[m]["loo_1nn"] for m in config["metrics"] if m in published]
    falls = all(a >= b for a, b in zip(errors, errors[1:], strict=False)) and errors[0] > errors[-1]
    all_optimal = all(r["status"] == "optimal" for r in found.values())
    verdict = "reproduced in trend" if falls and all_optimal else "differs"
    more = [m for m in config["metrics"] if m not in published]       # narrower sectors: the tested reason
    reason = ""
    if more and not falls:
        lowered = [m for m in more if found[m]["loo_1nn"] < found[config["metrics"][0]]["loo_1nn"]]
        reason = (" Tested reason, the width of the clusters (a Mahalanobis metric stretches one direction, the "
                  "circles' radial direction turns across a k-means sector): with "
                  + ", ".join(f"{m} clusters {found[m]['loo_1nn']:.0f} %"
                              + ("" if found[m]["status"] == "optimal" else f" ({found[m]['status']})") for m in more)
                  + (" — the error falls once the sectors are narrow, so the reading and the SDP do separate the "
                     "circles locally, and the thesis' 0 % with three clusters depends on a layout it does not "
                     "give." if lowered else " — narrower sectors do not lower it either: the reason is not the "
                     "sector width."))
    rows = [[m, _pct(r["loo_1nn"]), _pct(published.get(m)), r["status"], f"{r['relative_gap']:.1e}",
             f"{r['cpu_s']:.2f}", ", ".join(map(str, r["cluster_sizes"]))] for m, r in found.items()]
    return Outcome(
        published="Leave-one-out 1-NN error: 100 % (one metric), 21 % (two k-means clusters), 0 % (three).",
        ours=(f"{len(y)} points on two circles (radii {config['radii'][0]} and {config['radii'][1]}); Euclidean "
              f"leave-one-out 1-NN error {euclid:.1f} %.\n\n"
              + _md_table(["metrics", "LOO 1-NN % (ours)", "LOO 1-NN % (thesis)", "status", "relative gap",
                           "CPU s", "cluster sizes"], rows)),
        rows={"euclidean": euclid, "by_metrics": {str(m): r for m, r in found.items()}}, verdict=verdict,
        agreement=("Reading: one metric per k-means cluster, D̂ under the second point's cluster. The error "
                   + " → ".join(f"{e:.0f} %" for e in errors) + " with 1, 2, 3 metrics (thesis: 100 % → 21 % → 0 %) "
                   + ("falls as the thesis' does, every solve certified optimal; the values depend on our layout, "
                      "so in trend at best." if falls and all_optimal else
                      ("does not fall with the number of metrics as the thesis' does." if not falls else
                       "— but not every solve is certified optimal."))
                   + reason))


# ------------------------------------------------------------------------------------------ Fig. 2.11


def fig2_11(config: dict, png: Path) -> Outcome:
    """Fig. 2.11 — one metric per class on the digits four, six, one and zero (first two principal components).

    Paper
    -----
    Handwritten fours, sixes, ones and zeros projected onto their first two principal
    components; MM-LMNN (2.17) learns one 2×2 metric per class; each metric is drawn as the
    image of a unit circle (an ellipse) at its class mean, with its first principal direction.
    A picture; no numbers.

    Departures
    ----------
    - scikit-learn's 8×8 digits (``n_per_class`` of each class), not the thesis' images.
    - As numbers we give each metric's axis ratio and leading direction (the verdict: do the
      four differ, by a ratio of axis ratios above 1.2 or directions more than 15° apart), and
      the leave-one-out 3-NN training error with one metric (LMNN) and with one per class.
    """
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(config["seed"])
    keep = np.concatenate([rng.permutation(np.flatnonzero(y == d))[:config["n_per_class"]] for d in (4, 6, 1, 0)])
    X2 = PCA(2, random_state=config["seed"]).fit_transform(X[keep].astype(np.float64))
    X2 /= np.std(X2)
    labels = np.unique(y[keep], return_inverse=True)[1].ravel()
    names = np.unique(y[keep])
    k = config["k"]
    single, _ = _fit(LMNN(k, config["mu"]), X2, labels)
    multi, _ = _fit(MultiMetricLMNN(k, config["mu"]), X2, labels)
    Z = single.transform(X2)
    loo_single = knn_errors(lambda r: _sq_distances(Z[r], Z), labels, labels, len(labels), k, leave_one_out=True)
    loo_multi = knn_errors(lambda r: multi.distances(X2[r]), labels, labels, len(labels), k, leave_one_out=True)
    loo_euclid = knn_errors(lambda r: _sq_distances(X2[r], X2), labels, labels, len(labels), k, leave_one_out=True)
    fig, ax = plt.subplots(figsize=(5.5, 5))
    t = np.linspace(0, 2 * np.pi, 100)
    circle = np.stack([np.cos(t), np.sin(t)])
    ratios, angles = {}, {}
    for c, name in enumerate(names):
        pts = X2[labels == c]
        ax.scatter(pts[:, 0], pts[:, 1], s=5, label=str(name))
        w, V = np.linalg.eigh(multi.metrics_[c])
        w = np.maximum(w, 1e-12)
        ellipse = V @ (circle / np.sqrt(w)[:, None])       # {x : xᵀ M x = 1}, scaled to be seen
        ellipse *= 0.5 / np.max(np.abs(ellipse))
        mean = pts.mean(axis=0)
        ax.plot(mean[0] + ellipse[0], mean[1] + ellipse[1], "k-", lw=1)
        ax.plot(mean[0] + [0, 0.5 * V[0, -1]], mean[1] + [0, 0.5 * V[1, -1]], "k-", lw=1.5)
        ratios[str(name)] = float(np.sqrt(w[-1] / w[0]))
        angles[str(name)] = float(np.degrees(np.arctan2(V[1, -1], V[0, -1])) % 180.0)
    ax.legend(fontsize=7)
    ax.set(title="one metric per class (unit balls, scaled)", aspect="equal")
    _save(fig, png)
    spread = max(angles.values()) - min(angles.values())
    distinct = max(ratios.values()) / min(ratios.values()) > 1.2 or min(spread, 180.0 - spread) > 15.0
    verdict = "reproduced in trend" if distinct else "differs"
    return Outcome(
        published="A picture only: four differently shaped and oriented ellipses, one per digit class (no error "
                  "rates are given for this data set).",
        ours=(f"{len(labels)} digits, 2 principal components (scaled to unit spread); leave-one-out 3-NN error: "
              f"Euclidean {loo_euclid:.2f} %, one metric {loo_single:.2f} % ({single.result_.status}), one metric per "
              f"class {loo_multi:.2f} % ({multi.result_.status}); axis ratio √(λ_max/λ_min) of each class metric: "
              + ", ".join(f"{k_}: {v:.2f}" for k_, v in ratios.items()) + "; direction of the leading axis: "
              + ", ".join(f"{k_}: {v:.0f}°" for k_, v in angles.items()) + "."),
        rows={"loo_euclidean": loo_euclid, "loo_single": loo_single, "loo_multi": loo_multi, "axis_ratios": ratios,
              "angles_deg": angles,
              "status": [single.result_.status, multi.result_.status]},
        verdict=verdict,
        agreement=(f"The class metrics {'differ' if distinct else 'do not differ'} in shape and orientation (axis "
                   f"ratios {min(ratios.values()):.2f}–{max(ratios.values()):.2f}, leading axes spread over "
                   f"{spread:.0f}°), as the picture shows. Not a claim of the thesis for this set: the multi-metric "
                   f"rule's leave-one-out error is {loo_multi:.2f} % against the single metric's {loo_single:.2f} %."))


# ------------------------------------------------------------------------------------------ Table 2.1, wine: why


def table2_1_wine(config: dict, png: Path) -> Outcome:
    """Table 2.1, wine — does the thesis' solver, stopped early, explain its higher PCA-LMNN error?

    Paper
    -----
    Table 2.1, wine (unscaled features; 100 random 70/30 splits): PCA-LMNN 8.39 % kNN test
    error, 7.67 % energy, against 2.11 % for LDA-LMNN. The thesis' solver is Algorithm 3
    (projected sub-gradient from M = I with an adaptive step and active sets, Sec. 2.1.7).
    Our certified optimum of (2.11) on the same kind of splits has a far lower error, so this
    experiment tests the explanation that the thesis' run ended far from the optimum: wine's
    features differ in scale by three orders of magnitude (proline ~10³, hue ~1), which makes
    a first-order method from the identity slow.

    Departures
    ----------
    - Algorithm 3 is sdpembed's implementation (``LMNN(method="gradient")``: the thesis'
      step rule ×1.01/×0.5, a full hinge check every 10 iterations), run with its own
      stopping rule (at most ``max_iter`` iterations) and stopped after
      ``budgets`` iterations; the thesis does not state its iteration count or stopping point,
      so its value cannot be predicted, only bracketed: the verdict asks whether the thesis'
      error lies between the optimum's and that of some Algorithm 3 run.
    - ``splits`` random 70/30 splits of scikit-learn's wine (178 points), k = 3, μ = 0.5.
    """
    k, mu = config["k"], config["mu"]
    X, y = load_wine(return_X_y=True)
    runs = {"certified optimum": {"method": "fast"},
            "Algorithm 3, own stopping rule": {"method": "gradient", "max_iter": config["max_iter"]}}
    runs.update({f"Algorithm 3, {b} iterations": {"method": "gradient", "max_iter": b, "tol": 0.0}
                 for b in config["budgets"]})
    results = {key: {"test_knn": [], "gap": [], "iterations": []} for key in runs}
    for split in track(range(config["splits"]), "wine splits", unit="split"):
        Xtr, ytr, Xte, yte = _wine_split(X, y, config["seed"] + split)
        optimum = None
        for key, options in runs.items():
            model, _ = _fit(LMNN(k, mu, **options), Xtr, ytr)
            optimum = float(model.result_.objective) if optimum is None else optimum
            Ztr, Zte = model.transform(Xtr), model.transform(Xte)
            results[key]["test_knn"].append(_euclidean_errors(Ztr, ytr, Zte, yte, k)[1])
            results[key]["gap"].append((float(model.result_.objective) - optimum) / max(abs(optimum), 1.0))
            results[key]["iterations"].append(int(model.result_.iterations))
    summary = {key: {"test_knn": float(np.mean(v["test_knn"])),
                     "test_knn_se": float(np.std(v["test_knn"]) / np.sqrt(len(v["test_knn"]))),
                     "relative_excess": float(np.mean(v["gap"])), "iterations": float(np.mean(v["iterations"]))}
               for key, v in results.items()}
    euclidean = float(np.mean([_euclidean_errors(*_wine_split(X, y, config["seed"] + s), k)[1]
                               for s in range(config["splits"])]))
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    keys = list(summary)
    ax.barh(np.arange(len(keys)), [summary[key]["test_knn"] for key in keys],
            xerr=[summary[key]["test_knn_se"] for key in keys], color="0.5")
    ax.axvline(PUBLISHED["wine"]["test_knn"]["PCA-LMNN"], color="k", ls="--", label="thesis PCA-LMNN")
    ax.axvline(euclidean, color="b", ls=":", label="Euclidean")
    ax.set_yticks(np.arange(len(keys)), keys, fontsize=7)
    ax.set(xlabel="wine test kNN error %")
    ax.legend(fontsize=7)
    _save(fig, png)
    stopped = summary["Algorithm 3, own stopping rule"]
    thesis = PUBLISHED["wine"]["test_knn"]["PCA-LMNN"]
    runs_a3 = [v["test_knn"] for key, v in summary.items() if key != "certified optimum"]
    bracketed = summary["certified optimum"]["test_knn"] < thesis <= max(runs_a3)
    rows = [[key, f"{v['test_knn']:.2f} ± {v['test_knn_se']:.2f}", f"{v['relative_excess']:.3g}",
             f"{v['iterations']:.0f}"] for key, v in summary.items()]
    return Outcome(
        published="PCA-LMNN on wine: 8.39 % kNN test error (Table 2.1); Euclidean kNN 25.00 %.",
        ours=(f"{config['splits']} splits; Euclidean kNN {euclidean:.2f} %. Test kNN error, the relative excess "
              "loss (2.11) over the certified optimum (divided by max(optimum, 1)) and the iterations (Newton "
              "steps for the optimum):\n\n"
              + _md_table(["solver", "test kNN %", "relative excess loss", "iterations"], rows)),
        rows={"summary": summary, "euclidean": euclidean}, verdict="reproduced in trend" if bracketed else "differs",
        agreement=(f"Algorithm 3 from M = I with its own stopping rule ends after {stopped['iterations']:.0f} "
                   f"iterations on average at {stopped['test_knn']:.2f} % (excess loss "
                   f"{stopped['relative_excess']:.2g}); its runs span {min(runs_a3):.2f}–{max(runs_a3):.2f} %, the "
                   f"certified optimum has {summary['certified optimum']['test_knn']:.2f} %: "
                   + ("the thesis' 8.39 % lies between an unconverged first-order run and the optimum, consistent "
                      "with its run ending short of the optimum on unscaled wine (its stopping point is not stated, "
                      "so the value is not predicted)." if bracketed else
                      "the thesis' 8.39 % is not bracketed by them; the early stop does not explain it.")))


def _iris_split_row(job: tuple[int, dict]) -> dict:
    """One iris split of :func:`table2_1_iris`: the test kNN errors at k fixed and with k chosen on validation."""
    split, config = job
    data = _split("iris", split, {"seed": config["seed"]})
    Xtr, Xte, ytr, yte = data["Xtr"], data["Xte"], data["ytr"], data["yte"]
    k, mu = config["k"], config["mu"]
    model, _ = _fit(LMNN(k, mu), Xtr, ytr)
    row = {}
    row["pca_train"], row["pca_fixed"] = _euclidean_errors(Xtr, ytr, Xte, yte, k)
    row["lmnn_train"], row["lmnn_fixed"] = _euclidean_errors(model.transform(Xtr), ytr, model.transform(Xte), yte, k)
    Xa, Xv, ya, yv = train_test_split(Xtr, ytr, test_size=config["validation"], random_state=config["seed"] + split)
    pca_val, lmnn_val = {}, {}
    for kk in config["ks"]:
        pca_val[kk] = _euclidean_errors(Xa, ya, Xv, yv, kk)[1]
        fitted, _ = _fit(LMNN(kk, mu), Xa, ya)
        lmnn_val[kk] = _euclidean_errors(fitted.transform(Xa), ya, fitted.transform(Xv), yv, kk)[1]
    k_pca = min(config["ks"], key=lambda kk: (pca_val[kk], kk))               # ties: the smaller k
    k_lmnn = min(config["ks"], key=lambda kk: (lmnn_val[kk], kk))
    chosen, _ = _fit(LMNN(k_lmnn, mu), Xtr, ytr)
    row.update({"k_pca": k_pca, "k_lmnn": k_lmnn, "pca_validated": _euclidean_errors(Xtr, ytr, Xte, yte, k_pca)[1],
                "lmnn_validated": _euclidean_errors(chosen.transform(Xtr), ytr, chosen.transform(Xte), yte, k_lmnn)[1],
                "status": ",".join(sorted({model.result_.status, chosen.result_.status}))})
    return row


def table2_1_iris(config: dict, png: Path) -> Outcome:
    """Table 2.1, iris — is LMNN's loss to PCA on iris over-training with k fixed, where the thesis chose k?

    Paper
    -----
    Table 2.1, iris (100 random 70/30 splits): PCA-LMNN kNN test error 4.08 % against PCA's
    4.87 %; the thesis chose k by cross-validation and remarks that over-training appears on the
    smallest data set (Sec. 2.1.6). Our Table 2.1 (k = 3 fixed) has the reverse order, 4.36 %
    against 4.04 %. Hypothesis, fixed before this run: the reversal is over-training of the
    4×4 metric with k fixed at 3; with k chosen on a validation part of each training part, as
    the thesis chooses its parameters, PCA-LMNN's mean test kNN error over ``splits`` splits lies
    below PCA's (whose k is chosen the same way). Refuted if it does not. The paired difference
    at k = 3 and its standard error say whether our reversal is significant at all, and whether
    the thesis' gain of 0.79 points lies within 2 standard errors of ours.

    Departures
    ----------
    - scikit-learn's iris (150 points; the thesis' table lists 128), the splits of Table 2.1
      (seeds ``seed`` + split); k chosen among ``ks`` on a ``validation`` part of each training
      part (ties: the smaller k), separately for PCA's kNN and for LMNN (whose target neighbours
      and kNN rule use the same k), then LMNN refitted on the whole training part; μ = 0.5; LMNN
      the certified optimum of (2.11).
    """
    rows = parallel_map(_iris_split_row, [(split, config) for split in range(config["splits"])], config["workers"])
    fixed, fixed_se = _paired(rows, "lmnn_fixed", "pca_fixed")
    validated, validated_se = _paired(rows, "lmnn_validated", "pca_validated")
    mean = {key: float(np.mean([r[key] for r in rows]))
            for key in ("pca_fixed", "lmnn_fixed", "pca_train", "lmnn_train", "pca_validated", "lmnn_validated")}
    thesis_gain = PUBLISHED["iris"]["test_knn"]["PCA-LMNN"] - PUBLISHED["iris"]["test_knn"]["PCA"]
    holds = validated < 0.0
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    labels = ["PCA, k = 3", "LMNN, k = 3", "PCA, k validated", "LMNN, k validated"]
    ax.bar(labels, [mean["pca_fixed"], mean["lmnn_fixed"], mean["pca_validated"], mean["lmnn_validated"]],
           color=["0.6", "0.3", "0.6", "0.3"])
    ax.axhline(PUBLISHED["iris"]["test_knn"]["PCA"], color="b", ls=":", label="thesis PCA")
    ax.axhline(PUBLISHED["iris"]["test_knn"]["PCA-LMNN"], color="r", ls="--", label="thesis PCA-LMNN")
    ax.set(ylabel="mean test kNN error %", title=f"iris, {len(rows)} splits")
    ax.tick_params(axis="x", labelsize=7)
    ax.legend(fontsize=7)
    _save(fig, png)
    chosen = {name: {str(kk): sum(r[f"k_{name}"] == kk for r in rows) for kk in config["ks"]}
              for name in ("pca", "lmnn")}
    optimal = sum(all(s == "optimal" for s in r["status"].split(",")) for r in rows)
    table = [["k = 3 (Table 2.1)", _pct(mean["pca_fixed"]), _pct(mean["lmnn_fixed"]), f"{fixed:+.3f} ± {fixed_se:.3f}"],
             ["k chosen on validation", _pct(mean["pca_validated"]), _pct(mean["lmnn_validated"]),
              f"{validated:+.3f} ± {validated_se:.3f}"]]
    inside = abs(thesis_gain - fixed) <= 2.0 * fixed_se
    return Outcome(
        published=f"iris test kNN error: PCA {PUBLISHED['iris']['test_knn']['PCA']:.2f} %, PCA-LMNN "
                  f"{PUBLISHED['iris']['test_knn']['PCA-LMNN']:.2f} % (a change of {thesis_gain:+.2f} points).",
        ours=(f"{len(rows)} splits; {optimal}/{len(rows)} splits with every LMNN solve optimal; leave-one-out training "
              f"error at k = 3: PCA {mean['pca_train']:.2f} %, LMNN {mean['lmnn_train']:.2f} %; k chosen for PCA "
              + ", ".join(f"{kk}: {v}×" for kk, v in chosen["pca"].items()) + "; for LMNN "
              + ", ".join(f"{kk}: {v}×" for kk, v in chosen["lmnn"].items()) + ".\n\n"
              + _md_table(["k", "PCA test kNN %", "PCA-LMNN test kNN %", "paired difference LMNN − PCA"], table)),
        rows={"splits": rows, "mean": mean, "fixed": fixed, "fixed_se": fixed_se, "validated": validated,
              "validated_se": validated_se, "chosen": chosen, "thesis_gain": thesis_gain,
              "hypothesis": "supported" if holds else "refuted"},
        verdict="reproduced in trend" if holds else "differs",
        agreement=(f"At k = 3 LMNN − PCA is {fixed:+.3f} ± {fixed_se:.3f} points ("
                   + ("a significant reversal" if fixed > 2.0 * fixed_se else "not a significant reversal")
                   + f"; the thesis' {thesis_gain:+.2f} lies " + ("within" if inside else "outside")
                   + f" 2 standard errors of it); with k chosen on validation it is {validated:+.3f} ± "
                   f"{validated_se:.3f}. "
                   + ("The hypothesis holds: with k chosen as the thesis chooses it, LMNN's mean test error is below "
                      "PCA's, and the reversal of Table 2.1 comes from the fixed k." if holds else
                      "Reason not found; tested and refuted: over-training with k fixed — with k chosen on a "
                      "validation part LMNN's mean test error is still not below PCA's on iris.")))


def _wine_split(X, y, seed: int):
    Xtr, Xte, ytr, yte = train_test_split(X.astype(np.float64), y, test_size=0.3, random_state=seed)
    return Xtr, ytr, Xte, yte


# ------------------------------------------------------------------------------------------ Table 2.1, MNIST MM-LMNN


def table2_1_mnist_mm(config: dict, png: Path) -> Outcome:
    """Table 2.1, MNIST — MM-LMNN (one metric per class) beside a single metric, in fewer dimensions.

    Paper
    -----
    Table 2.1, MNIST (60,000 training images, deskewed, 164 principal components): PCA-LMNN
    kNN test error 1.72 %, MM-LMNN 1.18 % (training leave-one-out 1.19 % and 0.04 %); one
    metric per class (2.17) learned jointly, started from the single metric, 8 h 43 min of CPU.

    Departures
    ----------
    - The Table 2.1 split of the vendored test images (7,000 training, 3,000 test, deskewed),
      but only ``dims`` principal components: ten 50×50 metrics in one SDP (12,750 unknowns in
      the Newton system) do not fit the time box; the single metric is re-solved at the same
      ``dims`` so that the two rows compare like with like.
    - Solved from scratch to the certified optimum (no start from the single metric); k = 3.
    - Energy errors: (2.12) under the learned single metric, and for MM-LMNN the multi-metric
      energy rule (``MultiMetricLMNN.predict_energy``: every distance D̂ under the metric of
      the class of its second point, as in (2.17)); the thesis does not spell out its
      multi-metric energy rule.
    """
    settings = {**_SHARED, "mnist_train": config["mnist_train"], "mnist_test": config["mnist_test"],
                "mnist_dims": config["dims"], "seed": config["seed"]}
    data = _split("mnist", 0, settings)
    Xtr, Xte, ytr, yte = data["Xtr"], data["Xte"], data["ytr"], data["yte"]
    k, mu = config["k"], config["mu"]
    single, cpu_single = _fit(LMNN(k, mu), Xtr, ytr)
    multi, cpu_multi = _fit(MultiMetricLMNN(k, mu), Xtr, ytr)
    Ztr, Zte = single.transform(Xtr), single.transform(Xte)
    e_train, e_test = _euclidean_errors(Xtr, ytr, Xte, yte, k)
    s_train, s_test = _euclidean_errors(Ztr, ytr, Zte, yte, k)
    m_train = knn_errors(lambda r: multi.distances(Xtr[r]), ytr, ytr, len(ytr), k, leave_one_out=True)
    m_test = knn_errors(lambda r: multi.distances(Xte[r]), ytr, yte, len(yte), k)
    rows = {"PCA": {"train": e_train, "test_knn": e_test,
                    "test_energy": _energy_error(Xtr, ytr, Xte, yte, target_neighbors(Xtr, ytr, k), k, mu)},
            "PCA-LMNN": {"train": s_train, "test_knn": s_test,
                         "test_energy": _energy_error(Ztr, ytr, Zte, yte, single.targets_, k, mu), "cpu_s": cpu_single,
                         "status": single.result_.status, "relative_gap": float(single.result_.relative_gap),
                         "active": int(single.result_.extra.get("active", -1))},
            "MM-LMNN": {"train": m_train, "test_knn": m_test,
                        "test_energy": 100.0 * float(np.mean(multi.predict_energy(Xte) != yte)), "cpu_s": cpu_multi,
                        "status": multi.result_.status,
                        "relative_gap": float(multi.result_.relative_gap),
                        "active": int(multi.result_.extra.get("active", -1))}}
    fig, ax = plt.subplots(figsize=(5, 3.4))
    x = np.arange(3)
    ax.bar(x - 0.27, [rows[m]["train"] for m in rows], 0.27, label="train kNN (LOO)")
    ax.bar(x, [rows[m]["test_knn"] for m in rows], 0.27, label="test kNN")
    ax.bar(x + 0.27, [rows[m]["test_energy"] for m in rows], 0.27, label="test energy")
    ax.plot(x, [PUBLISHED["mnist"]["test_knn"][m] for m in rows], "k_", ms=12, label="thesis, test kNN")
    ax.plot(x + 0.27, [PUBLISHED["mnist"]["test_energy"][m] for m in rows], "r_", ms=12, label="thesis, test energy")
    ax.set_xticks(x, list(rows))
    ax.set(ylabel="error %", title=f"MNIST, {len(ytr)} training images, {Xtr.shape[1]} dims")
    ax.legend(fontsize=7)
    _save(fig, png)
    better = m_test < s_test
    m_energy, s_energy = rows["MM-LMNN"]["test_energy"], rows["PCA-LMNN"]["test_energy"]
    table = [[m, _pct(r["train"]), _pct(r["test_knn"]), _pct(r["test_energy"]), _pct(PUBLISHED["mnist"]["train"][m]),
              _pct(PUBLISHED["mnist"]["test_knn"][m]), _pct(PUBLISHED["mnist"]["test_energy"][m]),
              f"{r['cpu_s']:.1f} / {r['status']} ({r['relative_gap']:.1e})" if "cpu_s" in r else "—",
              r.get("active", "—")] for m, r in rows.items()]
    return Outcome(
        published="MNIST (60,000/10,000, 164 dims): kNN train (LOO) / test kNN / test energy — PCA 1.93 / 2.12 / "
                  "2.39 %, PCA-LMNN 1.19 / 1.72 / 1.37 %, MM-LMNN 0.04 / 1.18 / 1.23 %; CPU 3 h 25 min (one "
                  "metric), 8 h 43 min (MM).",
        ours=(f"{len(ytr)} training and {len(yte)} test images, {Xtr.shape[1]} principal components "
              f"({100 * data['explained']:.0f} % of the variance):\n\n"
              + _md_table(["method", "train LOO % (ours)", "test kNN % (ours)", "test energy % (ours)",
                           "train LOO % (thesis)", "test kNN % (thesis)", "test energy % (thesis)",
                           "CPU s / status (gap)", "active constraints"], table)),
        rows=rows, verdict="reproduced in trend" if better else "differs",
        agreement=(f"One metric per class gives {m_test:.2f} % test kNN error against the single metric's "
                   f"{s_test:.2f} % (thesis: 1.18 % against 1.72 %, a ratio of 0.69; ours "
                   f"{m_test / max(s_test, 1e-12):.2f})"
                   + ("" if better else "; the multi-metric gain of the thesis does not appear at this size and "
                      "dimension (its 60,000 training images give ten metrics far more data each)")
                   + f". Energy rule: {m_energy:.2f} % with one metric per class against {s_energy:.2f} % with one "
                   f"metric (thesis: 1.23 % against 1.37 %, a ratio of 0.90; ours "
                   f"{m_energy / max(s_energy, 1e-12):.2f})."))


# ------------------------------------------------------------------------------------------ registry


EXPERIMENTS = (
    Experiment("table2_1", "Table 2.1 — kNN and energy errors of PCA, LDA, LMNN variants and SVM", table2_1,
               full=_SHARED, quick=_SHARED_QUICK),
    Experiment("table2_1_wine", "Table 2.1, wine — the thesis' solver stopped early against the certified optimum",
               table2_1_wine, full={"splits": 10, "budgets": [10, 30, 300], "k": 3, "mu": 0.5, "seed": 0,
                                      "max_iter": 2000},
               quick={"splits": 1, "budgets": [10], "k": 3, "mu": 0.5, "seed": 0, "max_iter": 50}),
    Experiment("table2_1_mnist_mm", "Table 2.1, MNIST — one metric per class beside a single metric",
               table2_1_mnist_mm, full={"mnist_train": 7000, "mnist_test": 3000, "dims": 20, "k": 3, "mu": 0.5,
                                        "seed": 0},
               quick={"mnist_train": 400, "mnist_test": 200, "dims": 8, "k": 3, "mu": 0.5, "seed": 0}),
    Experiment("table2_1_iris", "Table 2.1, iris — LMNN against PCA with k chosen on a validation part",
               table2_1_iris, full={"splits": 100, "ks": [1, 3, 5, 7], "validation": 0.3, "k": 3, "mu": 0.5, "seed": 0,
                                     "workers": 1},
               quick={"splits": 3, "ks": [1, 3], "validation": 0.3, "k": 3, "mu": 0.5, "seed": 0, "workers": 1}),
    IRIS_STOP,
    Experiment("fig2_3_4", "Fig. 2.3–2.4 — LMNN on the upper/lower half of a square: 1-NN error against n", fig2_3_4,
               full={"sizes": [10, 20, 50, 100, 200, 500, 1000], "runs": 10, "grid": 200, "k": 3, "mu": 0.5,
                     "seed": 0},
               quick={"sizes": [20, 100], "runs": 2, "grid": 60, "k": 3, "mu": 0.5, "seed": 0}),
    Experiment("fig2_5_digits", "Fig. 2.5, digits — the energy rule against kNN over many splits", fig2_5_digits,
               full=_DIGITS_STUDY, quick={**_DIGITS_STUDY, "splits": 2, "dims": 10, "passes": [1, 2]}),
    Experiment("fig2_9_digits", "Fig. 2.9, digits — passes chosen on a validation part, over many splits",
               fig2_9_digits, full=_DIGITS_STUDY, quick={**_DIGITS_STUDY, "splits": 2, "dims": 10, "passes": [1, 2]}),
    Experiment("fig2_5_mnist", "Fig. 2.5 and Table 2.1, MNIST — the energy rule against kNN over many splits",
               fig2_5_mnist, full=_MNIST_STUDY, quick=_MNIST_STUDY_QUICK),
    MNIST_SIZE,
    Experiment("fig2_9_mnist", "Fig. 2.9, MNIST — passes chosen on a validation part, over many splits",
               fig2_9_mnist, full=_MNIST_STUDY, quick=_MNIST_STUDY_QUICK),
    Experiment("fig2_5", "Fig. 2.5 — training and test errors under PCA, LDA, LMNN and the energy rule", fig2_5,
               full=_SHARED, quick=_SHARED_QUICK),
    *_STANDIN_EXPERIMENTS,
    Experiment("fig2_8", "Fig. 2.8 — MNIST digits whose nearest neighbour LMNN corrects", fig2_8,
               full={**_SHARED, "n_show": 10}, quick={**_SHARED_QUICK, "n_show": 6}),
    Experiment("fig2_9", "Fig. 2.9 — multiple passes of LMNN over one pass", fig2_9, full=_SHARED,
               quick=_SHARED_QUICK),
    Experiment("fig2_10", "Fig. 2.10 — two concentric circles: one, two and three metrics on k-means clusters",
               fig2_10, full=_FIG2_10, quick={**_FIG2_10, "n_per_circle": 24, "metrics": [1, 2, 3, 6]}),
    Experiment("fig2_11", "Fig. 2.11 — one metric per class on the digits 4, 6, 1, 0", fig2_11,
               full={"n_per_class": 100, "k": 3, "mu": 0.5, "seed": 0},
               quick={"n_per_class": 30, "k": 3, "mu": 0.5, "seed": 0}),
    Experiment("fig2_12", "Fig. 2.12 — one metric per class over a single metric", fig2_12, full=_SHARED,
               quick=_SHARED_QUICK),
    *_TREE_EXPERIMENTS,
    *_LINEAR_EXPERIMENTS,
)
