"""BENCHMARKS.md: NuMax against NuMax-Class for classification (``benchmarks/numax_class_mnist.py``)."""

from __future__ import annotations

from pathlib import Path

from report import figure, image, num, run_line, save, section, stamp_of, table

FILE = "numax_class_mnist.json"
PNG = "numax_class_mnist.png"
# NuMax paper (Hegde et al., IEEE TSP 2015), Table 2, delta = 0.4, the full 60,000-image training set
PUBLISHED_TABLE2 = {"NuMax": (72, 2.99), "NuMax-Class": (52, 2.68)}


def plot(data: dict[str, dict]) -> list[Path]:
    rows = data[FILE]["mnist"]["rows"]
    fig, ax = figure("MNIST 20×20, 200 training images: 1-NN test error", "isometry constant δ", "1-NN test error [%]")
    for method, marker in (("NuMax", "o"), ("NuMax-Class", "s")):
        mine = sorted((r for r in rows if r["method"] == method), key=lambda r: r["delta"])
        ax.plot([r["delta"] for r in mine], [r["knn_error"] for r in mine], marker=marker, label=method)
        ax.plot([r["delta"] for r in mine], [r["pca_error"] for r in mine], marker=marker, linestyle=":",
                label=f"PCA at {method}'s M")
    ax.legend()
    return [save(fig, PNG)]


@section("numax_class_mnist", "NuMax and NuMax-Class for classification", files=(FILE,), order=30, plot=plot)
def render(data: dict[str, dict]) -> str:
    doc = data[FILE]
    mnist = [(num(r["delta"], 2, style="f"), r["method"], r["status"], r["rank"], num(r["knn_error"], 2, style="%"),
              num(r["pca_error"], 2, style="%"), num(r["gaussian_error"], 2, style="%"), r["active_secants"],
              num(r["time_s"], 1, style="f"),
              "{} / {:.2f}%".format(*PUBLISHED_TABLE2[r["method"]]) if r["delta"] == 0.4 else "–")
             for r in doc["mnist"]["rows"]]
    toy = [(r["delta"], r["status"], r["rank"], num(r["numax_class_error"], 2, style="%"),
            num(r["pca_error"], 2, style="%"), num(r["gaussian_error"], 2, style="%"), num(r["time_s"], 1, style="f"))
           for r in doc["toy"]["rows"]]
    return f"""{run_line(stamp_of(doc))}

**NuMax Table 2 analogue.** {doc['mnist']['split']}. 1-NN test error in the embedded space; PCA
(fit on the training images) and a Gaussian map at the same M as the row's method. Published: NuMax
Table 2 (rank / error), trained on all 60,000 images, so not comparable in absolute terms.

{table(("δ", "method", "status", "rank M", "1-NN error", "PCA (same M)", "Gaussian (same M)", "active secants",
        "time [s]", "published M / error"), mnist, "rllrrrrrrr")}

**NuMax Fig. 12 analogue.** {doc['toy']['split']}. The paper's figure has no table to put beside it.

{table(("δ", "status", "M", "NuMax-Class", "PCA (same M)", "Gaussian (same M)", "time [s]"), toy, "rlrrrrr")}

{image(PNG, "1-NN test error of NuMax and NuMax-Class against PCA at the same dimension")}
"""
