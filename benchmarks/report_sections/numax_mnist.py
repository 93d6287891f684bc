"""BENCHMARKS.md: NuMax at scale on MNIST (``benchmarks/numax_mnist.py``).

The section reads the script's five result files: ``--parts a`` at 800 images (ADAGIO Table 3)
and at 4,000 images, ``--parts d`` (the baselines of Table 3), ``--parts b,c`` (Fig. 7, Table 1)
and ``--parts e`` (scale: up to all 10,000 test images, with peak memory).
"""

from __future__ import annotations

from pathlib import Path

from report import figure, image, num, run_line, save, section, stamp_of, table

TABLE3, BIG, BASELINES, FIG7 = ("numax_mnist_table3.json", "numax_mnist_4000.json",
                                "numax_mnist_table3_baselines.json", "numax_mnist_fig7_table1.json")
SCALE = "numax_mnist_10000.json"
PNG = "numax_mnist.png"


def dim(value: int | None, limit: int = 784) -> str:
    return f"> {limit}" if value is None else str(value)


def plot(data: dict[str, dict]) -> list[Path]:
    fig, ax = figure("NuMax-CG on 800 MNIST images (319,600 secants)", "isometry constant δ", "time [s] (log scale)")
    if TABLE3 in data:
        rows = sorted(data[TABLE3]["table3"]["rows"], key=lambda r: r["delta"])
        ax.plot([r["delta"] for r in rows], [r["time_s"] for r in rows], "o-", label="ours, NuMax-CG (certified)")
        ax.plot([r["delta"] for r in rows], [r["published_numax_time_s"] for r in rows], "s--",
                label="published, NuMax (MATLAB)")
    ax.set_yscale("log")
    ax.legend()
    return [save(fig, PNG)]


def cpu(row: dict) -> str:
    """The solve's CPU seconds (all threads), "–" for a run that predates their record."""
    return num(row["cpu_s"], 1, style="f") if row.get("cpu_s") is not None else "–"


def table3(data: dict[str, dict]) -> str:
    doc = data[TABLE3]
    rows = [(num(r["delta"], 2, style="f"), r["status"], r["rank"], r["published_numax_dim"],
             num(r["time_s"], 1, style="f"), cpu(r), num(r["published_numax_time_s"], 0, style="f"),
             num(r["published_numax_time_s"] / r["time_s"], 1, style="f"), num(r["relative_gap"], style="e"),
             num(r["max_violation"], style="e"), r["rounds"], f"{r['active_pairs']:,}", dim(r["pca_dim"]),
             dim(r["gaussian_dim"])) for r in doc["table3"]["rows"]]
    text = f"""**ADAGIO Table 3, NuMax column.** {run_line(stamp_of(doc, 'table3'))}

{doc['table3']['setup']}. NuMax-CG: column generation over all pairs, each run certified (relative
gap, worst violation over every pair). PCA and a Gaussian map: the least M meeting δ under RIP (2).
Published: the NuMax rank and MATLAB time in ADAGIO's Table 3.

{table(("δ", "status", "rank", "published rank", "time [s]", "CPU [s]", "published [s]", "published / ours",
        "certified gap", "violation", "rounds", "active pairs", "PCA M", "Gaussian M"), rows, "rlrrrrrrrrrrrr")}
"""
    if BIG in data:
        doc = data[BIG]
        rows = [(r["delta"], r["status"], r["rank"], num(r["time_s"], 1, style="f"), cpu(r),
                 num(r["relative_gap"], style="e"),
                 r["rounds"], f"{r['active_pairs']:,}", dim(r["pca_dim"]), dim(r["gaussian_dim"]))
                for r in doc["table3"]["rows"]]
        text += f"""
**4,000 images.** {run_line(stamp_of(doc, 'table3'))} {doc['table3']['setup']}. No published number.

{table(("δ", "status", "rank", "time [s]", "CPU [s]", "certified gap", "rounds", "active pairs", "PCA M",
        "Gaussian M"), rows, "rlrrrrrrrr")}
"""
    return text


def scale(data: dict[str, dict]) -> str:
    doc = data[SCALE]
    rows = [(r["problem"], f"{r['n_points']:,}", f"{r['n_pairs']:,}", r["status"], r["rank"],
             num(r["cpu_s"], 1, style="f"), num(r["time_s"], 1, style="f"), r["rounds"], f"{r['working_pairs']:,}",
             f"{r['active_pairs']:,}", num(r["relative_gap"], style="e"), num(r["max_violation"], style="e"),
             num(r["peak_memory_gb"], 2, style="f") + ("" if r["peak_memory_exact"] else " (process)"),
             "–".join(num(v, 1, style="f") for v in r["load_average"])) for r in doc["scale"]["rows"]]
    return f"""
**Scale (part e; all 10,000 test images with `--sizes 10000`).** {run_line(stamp_of(doc, 'scale'))}
{doc['scale']['setup']}.
Each run certified by a clean scan of all pairs (gap, worst violation over every pair); peak: the
resident-memory high-water mark of the run (GB); load: the 1-minute load average before and after
the run (other processes shared the two cores, so wall time exceeds CPU time).

{table(("problem", "n", "pairs", "status", "rank", "CPU [s]", "wall [s]", "rounds", "working pairs",
        "active pairs", "certified gap", "violation", "peak [GB]", "load"), rows, "lrrlrrrrrrrrrr")}
"""


def baselines(data: dict[str, dict]) -> str:
    doc = data[BASELINES]
    rows = [(num(r["delta"], 2, style="f"), dim(r["pca_dim_squared"]), dim(r["pca_dim_adagio"]),
             r["published_pca_dim"], dim(r["gaussian_dim_squared"]), dim(r["gaussian_dim_adagio"]),
             r["published_jl_dim"] if r["published_jl_dim"] is not None else "–")
            for r in doc["table3_baselines"]["rows"]]
    return f"""
**ADAGIO Table 3, baselines.** {run_line(stamp_of(doc, 'table3_baselines'))} The least M of PCA and of a
Gaussian map under RIP (2) on squared norms and under ADAGIO's distortion (3), the definition of the
published columns.

{table(("δ", "PCA (2)", "PCA (3)", "published PCA (3)", "Gaussian (2)", "Gaussian (3)", "published JL (3)"), rows,
       "rrrrrrr")}
"""


def fig7_table1(data: dict[str, dict]) -> str:
    doc = data[FIG7]
    rows = [(r["n_points"], f"{r['n_secants']:,}", r["admm_status"] or "not run", num(r["admm_time_s"], 1, style="f"),
             r["cg_status"], num(r["cg_time_s"], 1, style="f"),
             num(r["admm_time_s"] / r["cg_time_s"], 1, style="f") if r["admm_time_s"] else "–",
             num(r["active_fraction"], 3, style="f")) for r in doc["fig7"]["rows"]]
    t1 = [(num(r["delta"], 2, style="f"), r["status"], r["rank"], num(r["numax_error"], 2, style="%"),
           num(r["pca_error"], 2, style="%"), num(r["gaussian_error"], 2, style="%"),
           num(r["full_dim_error"], 2, style="%"), num(r["time_s"], 1, style="f"),
           "{rank} / {numax_error:.2f}% / {pca_error:.2f}% / {gaussian_error:.2f}%".format(**r["published"]))
          for r in doc["table1"]["rows"]]
    return f"""
**NuMax Fig. 7 analogue.** {run_line(stamp_of(doc, 'fig7'))} {doc['fig7']['setup']}. NuMax: the ADMM
(Algorithm 1) on all secants, materialised (not run where they would not fit); NuMax-CG: column
generation. The paper's figure has no table to put beside it.

{table(("n", "secants", "NuMax status", "NuMax [s]", "NuMax-CG status", "NuMax-CG [s]", "NuMax / CG",
        "active fraction"), rows, "rrlrlrrr")}

**NuMax Table 1 analogue.** {run_line(stamp_of(doc, 'table1'))} {doc['table1']['setup']}. 1-NN test
error; published: NuMax Table 1 (rank / NuMax / PCA / Gaussian error), trained on 60,000 images, so
not comparable in absolute terms.

{table(("δ", "status", "rank M", "NuMax", "PCA (same M)", "Gaussian (same M)", "all pixels", "time [s]",
        "published"), t1, "rlrrrrrrl")}
"""


@section("numax_mnist", "NuMax at scale on MNIST", files=(TABLE3, BIG, BASELINES, FIG7, SCALE), order=20, plot=plot)
def render(data: dict[str, dict]) -> str:
    parts = [table3(data) if TABLE3 in data else "",
             scale(data) if SCALE in data else "",
             baselines(data) if BASELINES in data else "",
             fig7_table1(data) if FIG7 in data else ""]
    return "\n".join(p for p in parts if p) + f"\n{image(PNG, 'NuMax-CG time against the published NuMax time')}\n"
