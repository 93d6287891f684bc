"""Reason tests for the thesis' MVU experiments that differ (Weinberger, ch. 3), one function each.

Each *differs* of :mod:`reproduce.thesis_mvu` and :mod:`reproduce.thesis_mvu_kernel` names a
candidate reason; the function here states the hypothesis and the outcome that would support it
in its docstring (``Departures``, written before the run) and reports the result whichever way
it falls. The helpers of :mod:`reproduce.thesis_mvu` are imported at first use, because that
module lists these experiments among its own.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Table 3.2 (Sec. 3.1.9), the slack variables of Sec. 3.1.6 (Fig. 3.14),
   Fig. 3.15, the minimum-trace SDP of Sec. 3.1.11 (Fig. 3.24–3.25), locking up (Sec. 3.1.12,
   Fig. 3.28).
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from mvu import roll_arc_length  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.manifold import Isomap  # noqa: E402

from sdpembed.datasets import swiss_roll  # noqa: E402

from .common import Experiment, Outcome, gap_text  # noqa: E402
from .numax import _md_table, _save  # noqa: E402
from .thesis_mvu_kernel import PUBLISHED_TABLE3_2  # noqa: E402
from .thesis_mvu_trust import swiss_row_standing  # noqa: E402


def _base():
    """:mod:`reproduce.thesis_mvu`, which imports this module for its experiment list."""
    from . import thesis_mvu
    return thesis_mvu


def isometric_spectrum(params: np.ndarray) -> np.ndarray:
    """The normalised spectrum of an isometric unrolling of the roll: the covariance of (arc length, height)."""
    flat = np.column_stack([roll_arc_length(params[:, 0]), params[:, 1]])
    w = np.sort(np.linalg.eigvalsh(np.cov(flat.T)))[::-1]
    return w / w.sum()


def _fmt(q: dict) -> str:
    return f"{q['continuity']:.3f} / {q['trust']:.3f} / {q['intersection']:.3f} [{q['harmonic']:.3f}]"


def _solve_summary(run: dict) -> dict:
    return {k: v for k, v in run.items() if k not in ("Y", "spectrum")} | {"spectrum": run["spectrum"][:6].tolist()}


# ------------------------------------------------------------------------------------------ Table 3.2


def _mvu_against_isomap(X: np.ndarray, Y_mvu: np.ndarray, k: int, rs: list[int], k_isomap: list[int],
                        l: int) -> tuple[list[dict], dict]:
    """Table 3.2's measures of exact MVU's first r coordinates and of Isomap (each k in ``k_isomap``)
    at each r in ``rs``: the rows, and the rows keyed by (method, k, r)."""
    base = _base()
    table = []
    for r in rs:
        table.append({"method": "MVU (exact)", "k": k, "r": r, **base._quality(X, Y_mvu[:, :r], l)})
        for k_iso in k_isomap:
            Y = Isomap(n_neighbors=k_iso, n_components=r).fit_transform(X)
            table.append({"method": "Isomap", "k": k_iso, "r": r, **base._quality(X, Y, l)})
    return table, {(row["method"], row["k"], row["r"]): row for row in table}


def table3_2_reasons(config: dict, png: Path) -> Outcome:
    """Table 3.2 — the reason tests: the inequality relaxation on the swiss roll; r and k on the digits.

    Paper
    -----
    Table 3.2: MVU (k = 5) scores 1.000 / 0.990 / 0.990 (local continuity / trust /
    intersection, l = 15, r = 2) on a swiss roll of n = 2,000 and is best on average over
    four data sets; r = 3 for the data sets of unknown dimension, r = 2 for the roll and the
    teapots; every other method at k = 15 (Sec. 3.1.9).

    Departures
    ----------
    - *Swiss roll.* Our exact MVU (the inequality SDP with angle edges, certified) scores
      0.920 / 0.837 / 0.782 on the table's roll and keeps 0.986 / 0.014 of its trace in two
      dimensions where an isometric unrolling has 0.947 / 0.053: the sheet comes out longer and
      thinner. Hypothesis, fixed before the run: the inequality relaxation is not tight on the
      sparse k = 5 graph — maximising the variance shortens the edges across the roll. It is
      supported if more than 10 % of the inequality optimum's edges end more than 1 % shorter
      than their input length *and* the equality variant (every edge kept at its length) on
      the same graph scores higher in all three measures with a second eigenvalue nearer the
      isometric one; it is refuted otherwise.
    - Both variants are solved by the low-rank method (the interior point does not reach this
      n for the equalities) on ``n_swiss`` points, not the table's 2,000: the equality solve
      at n = 500 did not finish in 300 s on our loaded machine, so the roll is smaller and the
      equality solve has a ``cpu_time_limit`` (CPU seconds of the process, which the machine's load
      does not shorten); its status is reported and an uncertified iterate is compared as such,
      never called optimal. The measures of the isometric unrolling itself (the
      roll's arc length and height) are reported beside them: the best a faithful unfolding can
      score at this n and l.
    - *Digits* (scikit-learn's 8×8, the faces' stand-in). Exact MVU scores 0.534 (harmonic
      mean) against Isomap's 0.577 at r = 3 and keeps 82.5 % of its trace there. Hypotheses,
      fixed before the run: (r) the three dimensions cut off MVU's unfolding — supported if at
      each r in ``rs`` above 3 exact MVU's harmonic mean is at least Isomap's at the same r;
      (k) the table's k favours Isomap (15 against MVU's 5; the thesis itself blames k = 5
      against l = 15 for MVU's continuity) — supported if Isomap at k = 5 scores below exact
      MVU at r = 3. One certified inequality solve serves every r.
    """
    base = _base()
    l, k, seed = config["l"], config["k"], config["seed"]
    X, params = swiss_roll(config["n_swiss"], noise=0.05, random_state=seed)      # Table 3.2's roll
    iso_spec = isometric_spectrum(params)
    runs, quality = {}, {}
    for variant in ("inequality", "equality"):
        runs[variant] = base._exact(X, k, variant, method="lowrank",
                                    cpu_time_limit=config["cpu_time_limit"] if variant == "equality" else None)
        quality[variant] = base._quality(X, runs[variant]["Y"], l)
        print(f"  swiss roll {variant}: {runs[variant]['status']}, {_fmt(quality[variant])}, shortened "
              f"{runs[variant]['shortened']:.1%}", flush=True)
    # the measures' ceiling for a faithful unfolding: the isometric unrolling (arc length, height) itself
    truth = base._quality(X, np.column_stack([roll_arc_length(params[:, 0]), params[:, 1]]), l)
    ineq, eq = runs["inequality"], runs["equality"]
    lam2 = {v: float(runs[v]["spectrum"][1]) for v in runs}
    higher = all(quality["equality"][m] > quality["inequality"][m] for m in ("continuity", "trust", "intersection"))
    nearer = abs(lam2["equality"] - iso_spec[1]) < abs(lam2["inequality"] - iso_spec[1])
    roll_supported = ineq["shortened"] > 0.10 and higher and nearer

    digits = load_digits().data[:config["n_digits"]] / 16.0
    rs = config["rs"]
    exact = base._exact(digits, k, "inequality", r=max(rs))
    table, cell = _mvu_against_isomap(digits, exact["Y"], k, rs, config["k_isomap"], l)
    table_k = max(config["k_isomap"])                                  # the table's k for Isomap
    r_test = {r: cell[("MVU (exact)", k, r)]["harmonic"] >= cell[("Isomap", table_k, r)]["harmonic"]
              for r in rs if r > 3}
    r_supported = bool(r_test) and all(r_test.values())
    k_supported = cell[("Isomap", k, 3)]["harmonic"] < cell[("MVU (exact)", k, 3)]["harmonic"]

    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for ax, variant in zip(axes[:2], runs, strict=True):
        ax.scatter(runs[variant]["Y"][:, 0], runs[variant]["Y"][:, 1], c=params[:, 0], s=4, cmap="jet")
        ax.set(title=f"{variant} ({runs[variant]['status']}): {runs[variant]['shortened']:.0%} edges shortened",
               aspect="equal")
    labels = [f"{row['method'].split()[0]} k={row['k']} r={row['r']}" for row in table]
    axes[2].barh(labels, [row["harmonic"] for row in table])
    axes[2].set(xlabel="harmonic mean (digits)")
    _save(fig, png)

    published = PUBLISHED_TABLE3_2["MVU"]["swiss roll"]
    roll_rows = [[v, base._solve_text(runs[v]), _fmt(quality[v]), base._top(runs[v]["spectrum"], 3),
                  f"{runs[v]['shortened']:.1%}", f"{runs[v]['lengthened']:.1%}", f"{runs[v]['median_ratio']:.3f}"]
                 for v in runs]
    roll_rows.append(["isometric unrolling (truth)", "—", _fmt(truth), base._top(iso_spec, 2), "—", "—", "—"])
    ours = (f"Swiss roll, n = {len(X)}, k = {k}, l = {l}, r = 2; isometric unrolling "
            f"{base._top(iso_spec, 2)}.\n\n"
            + _md_table(["variant", "solve", "continuity / trust / intersection [harmonic]", "λ1..λ3",
                         "edges > 1 % shorter", "edges > 1 % longer", "median output/input length"], roll_rows)
            + f"\n\nDigits, n = {len(digits)}, exact MVU {base._solve_text(exact)}; l = {l}.\n\n"
            + _md_table(["method", "k", "r", "continuity", "trust", "intersection", "harmonic"],
                        [[row["method"], row["k"], row["r"], *(f"{row[m]:.3f}" for m in
                                                              ("continuity", "trust", "intersection", "harmonic"))]
                         for row in table]))
    eq_note = ("" if eq["status"] == "optimal" else
               f" The equality solve ended `{eq['status']}` (not a certified optimum): its numbers are those of the "
               "iterate closest to the tolerances, so this half of the test is indicative only.")
    eq_note += " " + swiss_row_standing(png.parent)
    near_published = eq["status"] == "optimal" and all(
        abs(quality["equality"][m] - p) <= 0.02 for m, p in zip(("continuity", "trust", "intersection"), published,
                                                                 strict=True))
    agreement = (
        f"Swiss roll: {ineq['shortened']:.1%} of the inequality optimum's {ineq['edges']} edges end more than 1 % "
        f"shorter than their input length (equality: {eq['shortened']:.1%}); the equality variant scores "
        f"{_fmt(quality['equality'])} against the inequality's {_fmt(quality['inequality'])}, second eigenvalue "
        f"{lam2['equality']:.3f} against {lam2['inequality']:.3f} (isometric {iso_spec[1]:.3f}; published scores "
        f"{' / '.join(f'{p:.3f}' for p in published)}); the isometric unrolling itself scores {_fmt(truth)} at this "
        f"n, the ceiling of a faithful unfolding. The relaxation hypothesis is "
        + ("supported" if roll_supported else "refuted") + "." + eq_note
        + f" Digits: exact MVU against Isomap (k = {table_k}) at "
        + ", ".join(f"r = {r}: {cell[('MVU (exact)', k, r)]['harmonic']:.3f} vs "
                    f"{cell[('Isomap', table_k, r)]['harmonic']:.3f}" for r in rs)
        + f" — the output-dimension hypothesis is {'supported' if r_supported else 'refuted'}; Isomap at k = {k} "
        f"scores {cell[('Isomap', k, 3)]['harmonic']:.3f} at r = 3 against exact MVU's "
        f"{cell[('MVU (exact)', k, 3)]['harmonic']:.3f} — the neighbourhood-size hypothesis is "
        + ("supported" if k_supported else "refuted") + ".")
    return Outcome(
        published=("Table 3.2: MVU 1.000 / 0.990 / 0.990 on the swiss roll (n = 2,000, k = 5, r = 2), best on "
                   "average over the four data sets (r = 3 for the faces)."),
        ours=ours,
        rows={"swiss": {v: {**_solve_summary(runs[v]), **quality[v]} for v in runs}, "isometric": iso_spec.tolist(),
              "isometric_quality": truth,
              "digits_solve": _solve_summary(exact), "digits": table,
              "supported": {"relaxation": roll_supported, "output_dimension": r_supported,
                            "neighbourhood": k_supported}},
        verdict="reproduced in trend" if roll_supported and near_published else "differs",
        agreement=agreement)


def table3_2_reasons_data(config: dict, png: Path) -> Outcome:
    """Table 3.2 — the reason test of the digits disagreement: do the data sets decide MVU against Isomap?

    Paper
    -----
    Table 3.2: exact MVU (k = 5) is best on average in trust and intersection over four data
    sets (Olivetti and Frey faces at r = 3, teapots and a swiss roll at r = 2), Isomap at the
    table's k = 15; l = 15 (Sec. 3.1.9).

    Departures
    ----------
    - On scikit-learn's 8×8 digits (the faces' stand-in) exact MVU scores 0.534 (harmonic mean of
      the three measures) against Isomap's 0.577 at r = 3, and 0.630 against 0.700 at r = 5;
      the output-dimension and neighbourhood-size hypotheses were refuted
      (``table3_2_reasons``). Hypothesis, fixed before this run: (data) the ordering is the
      data set's — the 8×8 digits (64 pixels, 16 grey levels) are not the thesis' images, and on
      larger images MVU comes out ahead. Tested on MNIST 20×20 (p = 400): a seeded sample of
      ``n`` vendored test images of all ten digits (the faces are many subjects, as the digits
      are many classes), r = ``rs``, l = 15, exact MVU at k = 5 (the inequality SDP with angle
      edges, certified), Isomap at k = 15 (the table's) and 5. Supported if exact MVU's harmonic
      mean at r = 3 is at least Isomap's at k = 15; refuted otherwise. Its trust and intersection
      (the measures the thesis has MVU best in on average) are reported beside it.
    - A sample of ``n``, not all 10,000 images: a first run at n = 1,000 had not finished its
      inequality solve after 6 CPU minutes on our loaded machine and was stopped; an uncertified
      solve decides nothing (reported as undecided).
    """
    base = _base()
    from sdpembed.datasets import load_mnist
    X, _ = load_mnist(size=20, n_samples=config["n"], random_state=config["seed"])
    l, k, rs = config["l"], config["k"], config["rs"]
    exact = base._exact(X, k, "inequality", r=max(rs))
    print(f"  MNIST n = {len(X)}: exact MVU {base._solve_text(exact)}", flush=True)
    table, cell = _mvu_against_isomap(X, exact["Y"], k, rs, config["k_isomap"], l)
    table_k, r0 = max(config["k_isomap"]), min(rs)
    mvu, iso = cell[("MVU (exact)", k, r0)], cell[("Isomap", table_k, r0)]
    certified = exact["status"] == "optimal"
    supported = certified and mvu["harmonic"] >= iso["harmonic"]
    decision = ("undecided (the MVU solve is not a certified optimum)" if not certified
                else "supported" if supported else "refuted")
    fig, ax = plt.subplots(figsize=(7, 3.8))
    labels = [f"{row['method'].split()[0]} k={row['k']} r={row['r']}" for row in table]
    ax.barh(labels, [row["harmonic"] for row in table])
    ax.set(xlabel=f"harmonic mean (MNIST 20×20, n = {len(X)})")
    _save(fig, png)
    measures = ("continuity", "trust", "intersection", "harmonic")
    return Outcome(
        published="Table 3.2: MVU best on average over the four data sets in trust and intersection (average "
                  f"{' / '.join(f'{v:.3f}' for v in PUBLISHED_TABLE3_2['MVU']['average'])} against Isomap's "
                  f"{' / '.join(f'{v:.3f}' for v in PUBLISHED_TABLE3_2['Isomap']['average'])}).",
        ours=(f"MNIST 20×20, n = {len(X)} (all digits, seed {config['seed']}), l = {l}; exact MVU "
              f"{base._solve_text(exact)}.\n\n"
              + _md_table(["method", "k", "r", *measures],
                          [[row["method"], row["k"], row["r"], *(f"{row[m]:.3f}" for m in measures)]
                           for row in table])),
        rows={"solve": _solve_summary(exact), "table": table, "supported": supported, "decision": decision},
        verdict="reproduced in trend" if supported else "differs",
        agreement=(f"At r = {r0} exact MVU scores {_fmt(mvu)} against Isomap (k = {table_k}) {_fmt(iso)}; "
                   + ", ".join(f"r = {r}: {cell[('MVU (exact)', k, r)]['harmonic']:.3f} vs "
                               f"{cell[('Isomap', table_k, r)]['harmonic']:.3f}" for r in rs)
                   + f". The data-set hypothesis is {decision}."))


#: Table 3.2's face columns (local continuity, trust, intersection at l = 15, r = 3), MVU against Isomap: the
#: thesis' MVU is below Isomap in continuity and above it in trust and intersection on both.
PUBLISHED_FACES = {"Olivetti faces": {"MVU": (0.772, 0.832, 0.491), "Isomap": (0.850, 0.782, 0.459)},
                   "Frey faces": {"MVU": (0.813, 0.716, 0.388), "Isomap": (0.834, 0.695, 0.273)}}


def _digits_or_mnist(name: str, n: int, seed: int) -> np.ndarray:
    """A seeded sample of ``n`` of scikit-learn's 8×8 digits (scaled to [0, 1]) or of the vendored MNIST 20×20
    test images."""
    if name == "digits":
        data = load_digits().data / 16.0
        return data[np.sort(np.random.default_rng(seed).choice(len(data), size=n, replace=False))]
    from sdpembed.datasets import load_mnist
    return load_mnist(size=20, n_samples=n, random_state=seed)[0]


def table3_2_reasons_variant(config: dict, png: Path) -> Outcome:
    """Table 3.2 — the reason test of the digits disagreement: the equality SDP, read measure by measure.

    Paper
    -----
    Table 3.2 (Sec. 3.1.9): exact MVU (k = 5; the text does not say whether with the equalities
    (3.8) or the inequalities of Sec. 3.1.6) against Isomap (k = 15), l = 15, r = 3 on the two
    face sets. The claim is per measure: MVU "has the highest average ranking according to local
    trust and local intersection" and "according to local continuity it is outperformed by
    Isomap"; on both face columns MVU is below Isomap in continuity and above it in trust and
    intersection (Olivetti 0.772 / 0.832 / 0.491 against 0.850 / 0.782 / 0.459, Frey 0.813 /
    0.716 / 0.388 against 0.834 / 0.695 / 0.273). The table has no combined score.

    Departures
    ----------
    - Refuted so far for the digits disagreement (exact MVU's harmonic mean below Isomap's):
      the output dimension r, Isomap's k and the data set (MNIST 20×20). Every one of those runs
      solved the *inequality* SDP, which on the swiss roll shortens 68.9 % of the edges by more
      than 1 % where the equality solution matches the isometric unrolling
      (``table3_2_reasons``). A pilot (the first 300 of scikit-learn's digits, equality by the
      interior point, ``optimal``) scored below Isomap in continuity and above it in trust and
      intersection, the inequality optimum below it in all three; the rules below were fixed
      after that pilot and before this run.
    - Hypotheses. (variant) the thesis' exact MVU is the equality SDP, and with it MVU scores at
      or above Isomap — supported if on every data set the certified (``optimal``) equality
      optimum's harmonic mean of the three measures at r = ``r`` is at least Isomap's (k =
      ``k_isomap``). (variant, per measure) the disagreement is the variant read through the
      combined score the thesis does not use — supported if on every data set the certified
      equality optimum is at or above Isomap in trust *and* intersection (the thesis' claim and
      its face columns' pattern) while the inequality optimum is not on at least one data set.
      A data set whose equality solve is not ``optimal`` leaves both undecided (its iterate is
      reported as such).
    - Data: a seeded sample of ``n`` of scikit-learn's 8×8 digits and ``n`` of the vendored
      MNIST 20×20 test images (the faces' stand-ins, many classes as the faces are many
      subjects), not all 1,797 digits: the equality SDP is solved by the interior point (the
      low-rank method's equality run on the 500-point swiss roll ended ``max_iterations``), and
      the interior point's Schur complement grows with the cube of the number of edges (14,036
      on all the digits). Both variants with the angle edges of (3.8), k = ``k``, both by the
      interior point: the low-rank method's inequality solve of this MNIST sample stopped with an
      ARPACK no-convergence error in its least-slack eigenvalue step (a solver fault, reported).
    """
    base = _base()
    l, k, r, k_iso = config["l"], config["k"], config["r"], config["k_isomap"]
    measures = ("continuity", "trust", "intersection")
    raw = {}
    for name in config["sets"]:
        X = _digits_or_mnist(name, config["n"], config["seed"])
        runs = {v: base._exact(X, k, v, r=r, method="ipm") for v in ("inequality", "equality")}
        quality = {v: base._quality(X, run["Y"][:, :r], l) for v, run in runs.items()}
        quality["Isomap"] = base._quality(X, Isomap(n_neighbors=k_iso, n_components=r).fit_transform(X), l)
        above = {v: {m: quality[v][m] >= quality["Isomap"][m] for m in (*measures, "harmonic")} for v in runs}
        raw[name] = {"n": len(X), "p": X.shape[1], "solves": {v: _solve_summary(run) for v, run in runs.items()},
                     "quality": quality, "above_isomap": above}
        for v, run in runs.items():
            print(f"  {name} {v}: {base._solve_text(run)}, {_fmt(quality[v])}", flush=True)
        print(f"  {name} Isomap k = {k_iso}: {_fmt(quality['Isomap'])}", flush=True)
    certified = all(raw[name]["solves"]["equality"]["status"] == "optimal" for name in raw)
    variant = certified and all(raw[name]["above_isomap"]["equality"]["harmonic"] for name in raw)
    eq_pattern = all(raw[name]["above_isomap"]["equality"]["trust"] and raw[name]["above_isomap"]["equality"][
        "intersection"] for name in raw)
    ineq_pattern = all(raw[name]["above_isomap"]["inequality"]["trust"] and raw[name]["above_isomap"]["inequality"][
        "intersection"] for name in raw)
    per_measure = certified and eq_pattern and not ineq_pattern

    def decide(supported: bool) -> str:
        return "undecided (an equality solve is not a certified optimum)" if not certified else (
            "supported" if supported else "refuted")

    fig, axes = plt.subplots(1, len(raw), figsize=(6 * len(raw), 3.6), squeeze=False)
    for ax, name in zip(axes[0], raw, strict=True):
        for off, method in zip((-0.27, 0.0, 0.27), ("inequality", "equality", "Isomap"), strict=True):
            ax.bar(np.arange(4) + off, [raw[name]["quality"][method][m] for m in (*measures, "harmonic")], 0.27,
                   label=method if method == "Isomap" else f"MVU ({method})")
        ax.set_xticks(np.arange(4), [*measures, "harmonic"])
        ax.set(title=f"{name}, n = {raw[name]['n']}, r = {r}, l = {l}")
        ax.legend(fontsize=7)
    _save(fig, png)
    rows = []
    for name in raw:
        for method in ("inequality", "equality", "Isomap"):
            solve = raw[name]["solves"].get(method)
            rows.append([name, f"MVU ({method})" if solve else f"Isomap (k = {k_iso})",
                         base._solve_text(solve) if solve else "—",
                         *(f"{raw[name]['quality'][method][m]:.3f}" for m in (*measures, "harmonic")),
                         f"{solve['shortened']:.1%}" if solve else "—"])
    faces = _md_table(["face set (published)", "MVU", "Isomap"],
                      [[face, " / ".join(f"{v:.3f}" for v in cols["MVU"]), " / ".join(f"{v:.3f}" for v in
                                                                                     cols["Isomap"])]
                       for face, cols in PUBLISHED_FACES.items()])
    return Outcome(
        published=("Table 3.2, face columns (continuity / trust / intersection, l = 15, r = 3): MVU below Isomap "
                   "in continuity, above it in trust and intersection.\n\n" + faces),
        ours=(_md_table(["data", "method", "solve", *measures, "harmonic", "edges > 1 % shorter"], rows)
              + f"\n\nk = {k} for MVU (angle edges), Isomap k = {k_iso}, l = {l}, r = {r}; seeded samples "
              f"(seed {config['seed']})."),
        rows={"sets": raw, "supported": {"variant": variant, "per_measure": per_measure},
              "certified": certified},
        verdict="reproduced in trend" if per_measure else "differs",
        agreement=("; ".join(
            f"{name}: equality {_fmt(raw[name]['quality']['equality'])} "
            f"({raw[name]['solves']['equality']['status']}), inequality {_fmt(raw[name]['quality']['inequality'])}, "
            f"Isomap {_fmt(raw[name]['quality']['Isomap'])}" for name in raw)
            + f". The variant hypothesis (harmonic mean at or above Isomap's) is {decide(variant)}; the per-measure "
            f"reading (equality at or above Isomap in trust and intersection, the inequality not) is "
            f"{decide(per_measure)}."))


#: The two continuous transformations of each smooth image manifold: rotation in degrees, scale, and a
#: horizontal shift in pixels, each drawn uniformly from its range.
MANIFOLDS = {"rotation × scale": {"angle": (-60.0, 60.0), "scale": (0.7, 1.3), "shift": (0.0, 0.0)},
             "rotation × shift": {"angle": (-60.0, 60.0), "scale": (1.0, 1.0), "shift": (-5.0, 5.0)}}


def transformed_digit(n: int, ranges: dict, seed: int, *, canvas: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """A smooth two-parameter image manifold: ``n`` copies of one vendored MNIST test digit (the
    rotating digit's three, 28×28, centred on a ``canvas`` × ``canvas`` frame so that no copy is
    cropped) rotated, scaled and shifted horizontally by parameters drawn uniformly from ``ranges``
    (``angle`` in degrees, ``scale``, ``shift`` in pixels; bilinear interpolation). Returns the images
    (n × canvas²) and the parameters (n × 3: angle, scale, shift)."""
    from scipy.ndimage import affine_transform

    from sdpembed.datasets import load_mnist
    X, y = load_mnist(size=28)
    image = np.zeros((canvas, canvas))
    pad = (canvas - 28) // 2
    image[pad:pad + 28, pad:pad + 28] = X[np.flatnonzero(y == 3)[0]].reshape(28, 28)
    rng = np.random.default_rng(seed)
    params = np.column_stack([rng.uniform(*ranges[name], size=n) for name in ("angle", "scale", "shift")])
    centre = np.array([(canvas - 1) / 2.0] * 2)
    images = np.empty((n, canvas * canvas))
    for index, (angle, scale, shift) in enumerate(params):
        a = np.deg2rad(angle)
        # output pixel o samples the input at M (o − c − s) + c: the inverse of rotate-scale-then-shift
        M = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]) / scale
        offset = centre - M @ (centre + np.array([0.0, shift]))
        images[index] = affine_transform(image, M, offset=offset, order=1).ravel()
    return images, params


def table3_2_reasons_manifold(config: dict, png: Path) -> Outcome:
    """Table 3.2 — the reason test of the digits disagreement: smooth image manifolds of two parameters.

    Paper
    -----
    Table 3.2 (Sec. 3.1.9): exact MVU (k = 5) is best on average in trust and intersection over
    Olivetti faces (n = 400, r = 3), teapots (400, r = 2), a swiss roll (2,000, r = 2) and Frey
    faces (1,965, r = 3); Isomap at k = 15 (5 on the teapots); l = 15; r = 2 where the intrinsic
    dimension is known. "MVU obtains almost perfect scores on the Swiss roll and the rotating
    teapot data set - both data sets that are sampled from true underlying low dimensional
    manifolds."

    Departures
    ----------
    - Refuted so far for the digits disagreement (exact MVU's harmonic mean of the three measures
      below Isomap's on scikit-learn's 8×8 digits and on MNIST 20×20): r, Isomap's k, the data
      set's resolution, the SDP variant; our rotating digit (the teapot's stand-in, one
      parameter) agrees with the thesis. Hypothesis, fixed before this run: (manifold) MVU leads
      Isomap on images that vary smoothly with few parameters, as the thesis' sets do (faces
      under pose and expression, a rotating teapot, a roll), and not on digits, which are not a
      manifold of few smooth parameters.
    - Data: two smooth two-parameter image manifolds made from one vendored MNIST test digit
      (:func:`transformed_digit`, ``MANIFOLDS``: rotation by −60°..60° × scale 0.7..1.3, and the
      same rotation × a horizontal shift of −5..5 pixels, on a 40 × 40 canvas), n = ``n`` each
      (the thesis' Olivetti and teapot size), parameters drawn uniformly; r = 2 (their intrinsic
      dimension, the table's rule for the teapots and the roll). Control: a seeded sample of
      ``n`` MNIST 20×20 test images of all digits at r = 3 (the faces' r), solved and measured
      by the same code in the same run.
    - MVU: the table's row, the inequality SDP with the angle edges, k = 5, by the interior
      point, certified (``optimal``); Isomap at the table's k = ``k_isomap`` (k = 5, the teapot
      column's, reported beside it); l = 15.
    - The rule. *Supported* if every MVU solve is ``optimal``, on every manifold MVU's harmonic
      mean is at least Isomap's (k = ``k_isomap``), and on the control it is below (the
      disagreement reproduced at this n). *Refuted* if on some manifold MVU's harmonic mean is
      below Isomap's; *not supported* if MVU leads on every manifold but also on the control
      (then the contrast the hypothesis needs is absent); *undecided* if a solve is not
      ``optimal``. Reported beside it, not deciding: trust and intersection, the measures in
      which the thesis has MVU best.
    """
    return _manifolds_against_isomap(config, png, "inequality")


def table3_2_reasons_manifold_equality(config: dict, png: Path) -> Outcome:
    """Table 3.2 — the reason test of the digits disagreement: the smooth manifolds with the equality SDP.

    Paper
    -----
    Table 3.2 (Sec. 3.1.9): exact MVU (k = 5; the text does not say whether with the equalities
    (3.8) or the inequalities of Sec. 3.1.6) best on average in trust and intersection, near-perfect
    on the low-dimensional manifolds (teapots, swiss roll); Isomap at k = 15; l = 15.

    Departures
    ----------
    - ``table3_2_reasons_manifold`` refuted the smooth-manifold hypothesis with the inequality
      SDP: MVU trails Isomap (k = 15) on both two-parameter manifolds, and its optimum shortens
      65–68 % of their edges by more than 1 % — as on the swiss roll, where the equality variant
      (every edge kept) scored nearer the isometric unrolling (``table3_2_reasons``). On the
      digits the equality variant did not close the gap (``table3_2_reasons_variant``).
    - Hypothesis, fixed before this run: (manifold, equality) with the equality SDP MVU leads
      Isomap on the smooth manifolds and not on the digits. Same data, n, r, k, l, Isomap and
      rule as ``table3_2_reasons_manifold`` (supported / refuted / not supported / undecided),
      the equality SDP with the angle edges solved by the interior point; a noise-free image
      manifold may lock (only the input meets every equality), which the solve's spectrum shows
      and which counts against the hypothesis.
    """
    return _manifolds_against_isomap(config, png, "equality")


def _manifolds_against_isomap(config: dict, png: Path, variant: str) -> Outcome:
    """Exact MVU (``variant`` SDP, certified) against Isomap on the smooth manifolds and the MNIST control,
    decided by the rule of :func:`table3_2_reasons_manifold`."""
    base = _base()
    from sdpembed.datasets import load_mnist
    l, k, n, k_iso = config["l"], config["k"], config["n"], config["k_isomap"]
    sets = {name: (transformed_digit(n, MANIFOLDS[name], config["seed"])[0], 2) for name in config["manifolds"]}
    sets["MNIST 20×20 (control)"] = (load_mnist(size=20, n_samples=n, random_state=config["seed"])[0], 3)
    raw = {}
    for name, (X, r) in sets.items():
        run = base._exact(X, k, variant, r=r, method="ipm")
        quality = {"MVU": base._quality(X, run["Y"], l)}
        for k_i in (k_iso, k):
            quality[f"Isomap k = {k_i}"] = base._quality(X, Isomap(n_neighbors=k_i, n_components=r).fit_transform(X),
                                                          l)
        iso = quality[f"Isomap k = {k_iso}"]
        raw[name] = {"n": len(X), "p": X.shape[1], "r": r, "solve": _solve_summary(run), "quality": quality,
                     "leads": quality["MVU"]["harmonic"] >= iso["harmonic"],
                     "leads_trust_intersection": all(quality["MVU"][m] >= iso[m] for m in ("trust", "intersection"))}
        print(f"  {name}: MVU {base._solve_text(run)}, {_fmt(quality['MVU'])}; Isomap k = {k_iso} {_fmt(iso)}",
              flush=True)
    manifolds = [name for name in raw if "control" not in name]
    control = raw["MNIST 20×20 (control)"]
    certified = all(row["solve"]["status"] == "optimal" for row in raw.values())
    lead_all = all(raw[name]["leads"] for name in manifolds)
    decision = ("undecided (an MVU solve is not a certified optimum)" if not certified
                else "refuted" if not lead_all
                else "not supported (MVU leads on the control too)" if control["leads"] else "supported")
    fig, axes = plt.subplots(1, len(raw), figsize=(4.6 * len(raw), 3.6), squeeze=False)
    measures = ("continuity", "trust", "intersection", "harmonic")
    for ax, name in zip(axes[0], raw, strict=True):
        methods = list(raw[name]["quality"])
        for index, method in enumerate(methods):
            ax.bar(np.arange(4) + (index - 1) * 0.27, [raw[name]["quality"][method][m] for m in measures], 0.27,
                   label=method)
        ax.set_xticks(np.arange(4), measures, fontsize=7)
        ax.set(title=f"{name} (r = {raw[name]['r']})", ylim=(0, 1.05))
        ax.legend(fontsize=7)
    _save(fig, png)
    def solve_cells(solve: dict) -> list[str]:
        return [base._solve_text(solve), base._top(np.array(solve["spectrum"]), 3), f"{solve['shortened']:.1%}"]

    rows = [[name, raw[name]["r"], method, *(solve_cells(raw[name]["solve"]) if method == "MVU" else ["—"] * 3),
             *(f"{raw[name]['quality'][method][m]:.3f}" for m in measures)]
            for name in raw for method in raw[name]["quality"]]
    published = PUBLISHED_TABLE3_2
    return Outcome(
        published=("Table 3.2: MVU best on average in trust and intersection (average "
                   f"{' / '.join(f'{v:.3f}' for v in published['MVU']['average'])} against Isomap's "
                   f"{' / '.join(f'{v:.3f}' for v in published['Isomap']['average'])}); near-perfect on the "
                   "low-dimensional manifolds (teapots "
                   f"{' / '.join(f'{v:.3f}' for v in published['MVU']['teapot'])} against Isomap's "
                   f"{' / '.join(f'{v:.3f}' for v in published['Isomap']['teapot'])})."),
        ours=(_md_table(["data", "r", "method", "solve", "λ1..λ3", "edges > 1 % shorter", *measures], rows)
              + f"\n\nn = {n} each, l = {l}; MVU: {variant} SDP with angle edges, k = {k}; manifolds from one "
              f"MNIST test digit on a 40 × 40 canvas (seed {config['seed']})."),
        rows={"sets": raw, "certified": certified, "decision": decision},
        verdict="reproduced in trend" if decision == "supported" else "differs",
        agreement=("; ".join(f"{name} (r = {raw[name]['r']}): MVU {_fmt(raw[name]['quality']['MVU'])} against "
                             f"Isomap (k = {k_iso}) {_fmt(raw[name]['quality'][f'Isomap k = {k_iso}'])}"
                             for name in raw)
                   + f". The smooth-manifold hypothesis ({variant} SDP) is {decision}."
                   + " MVU at or above Isomap in trust and intersection: "
                   + ", ".join(f"{name} {'yes' if raw[name]['leads_trust_intersection'] else 'no'}" for name in raw)
                   + "."))


def t_interval(values, level: float = 0.95) -> dict:
    """The mean of ``values`` and its two-sided ``level`` t-interval (sample standard deviation over √S,
    S − 1 degrees of freedom); the interval is undefined (NaN) for fewer than two values."""
    from scipy.stats import t
    d = np.asarray(values, dtype=float)
    if len(d) < 2:
        return {"mean": float(d.mean()) if len(d) else float("nan"), "se": float("nan"), "low": float("nan"),
                "high": float("nan"), "count": len(d)}
    se = float(d.std(ddof=1) / np.sqrt(len(d)))
    half = float(t.ppf(0.5 + level / 2.0, len(d) - 1)) * se
    return {"mean": float(d.mean()), "se": se, "low": float(d.mean()) - half, "high": float(d.mean()) + half,
            "count": len(d)}


def seeds_decision(interval: dict, certified: bool) -> str:
    """The rule of :func:`table3_2_reasons_seeds` on the interval of the per-seed differences MVU − Isomap."""
    if not certified:
        return "undecided (a solve is not a certified optimum)"
    if not interval["count"] >= 2:
        return "undecided (fewer than two samples)"
    return "refuted" if interval["high"] < 0.0 else "supported"


def seeded_mvu_and_isomap(name: str, n: int, seed: int, k: int, variant: str, r: int, l: int,
                          isomaps: dict[str, int]) -> tuple[dict, dict]:
    """One seeded sample of ``name``: its certified exact MVU (interior point) and the quality
    measures of MVU's and of each Isomap's (label → Isomap's k) r-dimensional embedding."""
    base = _base()
    X = _digits_or_mnist(name, n, seed)
    run = base._exact(X, k, variant, r=r, method="ipm")
    quality = {"MVU": base._quality(X, run["Y"][:, :r], l)}
    for label, k_iso in isomaps.items():
        quality[label] = base._quality(X, Isomap(n_neighbors=k_iso, n_components=r).fit_transform(X), l)
    return run, quality


def table3_2_reasons_seeds(config: dict, png: Path) -> Outcome:
    """Table 3.2 — the reason test of the digits disagreement: is it within the noise of the sample?

    Paper
    -----
    Table 3.2 (Sec. 3.1.9): exact MVU (k = 5) best on average in trust and intersection over the
    thesis' four data sets, Isomap at k = 15; l = 15. The thesis reports one sample per data set.

    Departures
    ----------
    - On one seeded sample of 500 digits (r = 3, l = 15, angle edges) the certified equality
      optimum's harmonic mean of continuity, trust and intersection is 0.675 against Isomap's
      (k = 15) 0.695 (``table3_2_reasons_variant``); on a 400-image MNIST 20×20 sample the
      certified equality optimum (0.582) is above Isomap's 0.570
      (``table3_2_reasons_manifold_equality``'s control) while on a 500-image one it is below
      (0.557 against 0.580). Refuted so far: r, Isomap's k, the data set's resolution, the SDP
      variant, the measures, smooth image manifolds.
    - Hypothesis, fixed before this run: (noise) the sign of MVU − Isomap is the sample's — over
      the seeded samples ``seeds`` of ``n`` points of each data set of ``sets``, the per-seed
      difference of the harmonic means, exact MVU (the ``variant`` SDP with the angle edges of
      (3.8), k = ``k``, the interior point) minus Isomap at k = ``k_isomap[0]`` (the table's),
      r = ``r``, l = ``l``. Rule, per data set: *supported* (within noise, or MVU reliably
      ahead) if the 95 % t-interval of the mean difference (S − 1 degrees of freedom) does not
      lie wholly below 0; *refuted* (Isomap reliably better: the disagreement is real) if it
      does; *undecided* if any solve of the data set is not ``optimal`` — uncertified samples are
      listed, and the interval over the certified ones alone is reported beside the decision,
      never in it. Isomap at k = ``k_isomap[1:]`` is reported beside it, not decided on. The
      verdict is *reproduced in trend* only if on every data set the certified interval lies
      wholly above 0 (MVU reliably ahead, the thesis' ordering); within noise is not the thesis'
      ordering and stays *differs*.
    - Reported beside the decision, not decided on (added after the first full run; the rule
      unchanged): the mean difference of each measure over the certified samples — the thesis
      has MVU below Isomap in continuity and above it in trust and intersection.
    - ``n`` below the earlier 500 and the equality variant only (the one closer to Isomap): the
      interior point's cost grows with the cube of the number of edges, and S solves per data set
      must fit the run (a timing pilot on 300 digits, seed 1, 2,074 edges: ``optimal`` in 8 CPU
      s at one BLAS thread; its measures were not computed).
    """
    base = _base()
    l, k, r, variant = config["l"], config["k"], config["r"], config["variant"]
    k_table = config["k_isomap"][0]
    raw = {}
    for name in config["sets"]:
        samples = []
        for seed in config["seeds"]:
            run, quality = seeded_mvu_and_isomap(name, config["n"], seed, k, variant, r, l,
                                                 {f"Isomap k = {k_iso}": k_iso for k_iso in config["k_isomap"]})
            difference = {key: quality["MVU"]["harmonic"] - q["harmonic"] for key, q in quality.items()
                          if key != "MVU"}
            samples.append({"seed": seed, "solve": _solve_summary(run), "quality": quality,
                            "difference": difference})
            print(f"  {name} seed {seed}: {base._solve_text(run)}, MVU {_fmt(quality['MVU'])}, "
                  + ", ".join(f"{key} {_fmt(q)}" for key, q in quality.items() if key != "MVU"), flush=True)
        certified = [s for s in samples if s["solve"]["status"] == "optimal"]
        intervals = {f"Isomap k = {k_iso}": t_interval([s["difference"][f"Isomap k = {k_iso}"] for s in certified])
                     for k_iso in config["k_isomap"]}
        all_certified = len(certified) == len(samples)
        by_measure = {key: {m: float(np.mean([s["quality"]["MVU"][m] - s["quality"][key][m] for s in certified]))
                            if certified else float("nan") for m in _MEASURES} for key in intervals}
        raw[name] = {"samples": samples, "intervals": intervals, "by_measure": by_measure,
                     "certified": all_certified,
                     "uncertified_seeds": [s["seed"] for s in samples if s["solve"]["status"] != "optimal"],
                     "decision": seeds_decision(intervals[f"Isomap k = {k_table}"], all_certified)}
    fig, axes = plt.subplots(1, len(raw), figsize=(6 * len(raw), 3.6), squeeze=False)
    for ax, name in zip(axes[0], raw, strict=True):
        for off, (key, interval) in zip(np.linspace(-0.15, 0.15, len(raw[name]["intervals"])),
                                        raw[name]["intervals"].items(), strict=True):
            seeds = np.arange(len(raw[name]["samples"]))
            ok = np.array([s["solve"]["status"] == "optimal" for s in raw[name]["samples"]])
            d = np.array([s["difference"][key] for s in raw[name]["samples"]])
            line = ax.plot(seeds[ok] + off, d[ok], "o", label=f"MVU − {key}")[0]
            ax.plot(seeds[~ok] + off, d[~ok], "x", color=line.get_color())
            if interval["count"] >= 2:
                ax.axhspan(interval["low"], interval["high"], color=line.get_color(), alpha=0.15)
                ax.axhline(interval["mean"], color=line.get_color(), lw=0.8)
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_xticks(np.arange(len(raw[name]["samples"])), [str(s["seed"]) for s in raw[name]["samples"]])
        ax.set(title=f"{name}, n = {config['n']}, r = {r}, l = {l} ({raw[name]['decision'].split(' (')[0]})",
               xlabel="seed (× not optimal)", ylabel="harmonic mean difference")
        ax.legend(fontsize=7)
    _save(fig, png)
    keys = [f"Isomap k = {k_iso}" for k_iso in config["k_isomap"]]
    rows = [[name, s["seed"], base._solve_text(s["solve"]), f"{s['quality']['MVU']['harmonic']:.3f}",
             *(f"{s['quality'][key]['harmonic']:.3f}" for key in keys),
             *(f"{s['difference'][key]:+.3f}" for key in keys)] for name in raw for s in raw[name]["samples"]]

    def interval_text(iv: dict) -> str:
        return (f"mean {iv['mean']:+.3f}, 95 % interval [{iv['low']:+.3f}, {iv['high']:+.3f}] over "
                f"{iv['count']} certified samples")

    supported = all(raw[name]["decision"] == "supported" for name in raw)
    ahead = all(raw[name]["certified"] and raw[name]["intervals"][f"Isomap k = {k_table}"]["low"] > 0.0
                for name in raw)
    return Outcome(
        published="Table 3.2: MVU best on average over the four data sets in trust and intersection (average "
                  f"{' / '.join(f'{v:.3f}' for v in PUBLISHED_TABLE3_2['MVU']['average'])} against Isomap's "
                  f"{' / '.join(f'{v:.3f}' for v in PUBLISHED_TABLE3_2['Isomap']['average'])}); one sample per "
                  "data set.",
        ours=(_md_table(["data", "seed", f"MVU ({variant}) solve", "MVU harmonic",
                         *(f"{key} harmonic" for key in keys), *(f"MVU − {key}" for key in keys)], rows)
              + f"\n\nn = {config['n']} per sample, MVU k = {k} (angle edges, {variant} SDP, interior point), "
              f"r = {r}, l = {l}. "
              + "; ".join(f"{name}, MVU − {key}: {interval_text(iv)}" for name in raw
                          for key, iv in raw[name]["intervals"].items()) + ".\n\n"
              + _md_table(["data", "MVU − (certified mean)", *_MEASURES],
                          [[name, key, *(f"{v:+.3f}" for v in raw[name]["by_measure"][key].values())]
                           for name in raw for key in keys])),
        rows={"sets": raw, "supported": supported, "mvu_ahead": ahead},
        verdict="reproduced in trend" if ahead else "differs",
        agreement=("; ".join(
            f"{name}: MVU − Isomap (k = {k_table}) {interval_text(raw[name]['intervals'][f'Isomap k = {k_table}'])}"
            + (f", not optimal at seeds {raw[name]['uncertified_seeds']}" if raw[name]["uncertified_seeds"] else "")
            + f" — the noise hypothesis is {raw[name]['decision']}; by measure (certified mean) "
            + ", ".join(f"{m} {v:+.3f}" for m, v in raw[name]["by_measure"][f"Isomap k = {k_table}"].items())
            for name in raw) + "."))


# ------------------------------------------------------------------------------------------ Fig. 3.15


def _comb_counts(config: dict, teeth: int, methods: dict[str, dict], variant: str = "equality") -> dict:
    """Isomap's and MVU's (``variant``) counts of eigenvalues above 1 % of the trace on a comb of
    ``teeth`` teeth, MVU by each method of ``methods`` (its options for :func:`_exact`)."""
    base = _base()
    X, _ = base.comb(config["n"], teeth, config["seed"])
    iso = Isomap(n_neighbors=config["k_isomap"], n_components=10).fit(X).kernel_pca_.eigenvalues_
    iso = np.maximum(iso, 0.0) / np.maximum(iso, 0.0).sum()
    row = {"teeth": teeth, "isomap_count": int(np.sum(iso > 0.01)), "isomap": iso[:12].tolist()}
    for method, options in methods.items():
        run = base._exact(X, config["k_mvu"], variant, r=3, method=method, **options)
        row[method] = {**_solve_summary(run), "count": int(np.sum(run["spectrum"] > 0.01))}
    return row


def fig3_15_reasons(config: dict, png: Path) -> Outcome:
    """Fig. 3.15 — the reason test: the comb's geometry and the solver behind the dimension counts.

    Paper
    -----
    n = 300 points on a two-dimensional comb; MVU (k = 3) gives six dimensions of non-zero
    variance, Isomap (k = 5) eight. The thesis gives no geometry (number, length and spacing
    of the teeth).

    Departures
    ----------
    - Hypotheses, fixed before the run (the counts of our Fig. 3.15 that they start from are read
      from its stored record when the report is written: the departure above): (geometry)
      the counts are set by the comb's unstated shape — supported if MVU's count changes with
      the number of teeth over ``teeth`` (the same n, spine spacing and unit teeth) and some
      tooth count gives the thesis' 6 and 8; (solver) the inaccurate interior-point solve does
      not change the count — supported if the low-rank method's count on every comb equals the
      interior point's. Each count is reported with its solve's status; a count from an
      uncertified solve is marked as such. The low-rank solve is bounded by ``cpu_time_limit`` CPU
      seconds of the process (not wall-clock seconds, which a loaded machine shortens).
    """
    raw = []
    for teeth in config["teeth"]:
        row = _comb_counts(config, teeth, {"ipm": {}, "lowrank": {"cpu_time_limit": config["cpu_time_limit"]}})
        print(f"  {teeth} teeth: MVU {row['ipm']['count']} ({row['ipm']['status']}) / {row['lowrank']['count']} "
              f"({row['lowrank']['status']}), Isomap {row['isomap_count']}", flush=True)
        raw.append(row)
    counts = [r["ipm"]["count"] for r in raw]
    geometry = len(set(counts)) > 1 and any(r["ipm"]["count"] == 6 and r["isomap_count"] == 8 for r in raw)
    solver = all(r["ipm"]["count"] == r["lowrank"]["count"] for r in raw)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    teeth = [r["teeth"] for r in raw]
    ax.plot(teeth, counts, "o-", label="MVU (interior point)")
    ax.plot(teeth, [r["lowrank"]["count"] for r in raw], "x--", label="MVU (low rank)")
    ax.plot(teeth, [r["isomap_count"] for r in raw], "s-", label="Isomap")
    ax.axhline(6, color="C0", lw=0.5)
    ax.axhline(8, color="C2", lw=0.5)
    ax.set(xlabel="teeth", ylabel="eigenvalues above 1 % of the trace")
    ax.legend(fontsize=7)
    _save(fig, png)
    certified = [r["teeth"] for r in raw if "optimal" in (r["ipm"]["status"], r["lowrank"]["status"])]
    return Outcome(
        published="Six dimensions of non-zero variance with MVU (k = 3), eight with Isomap (k = 5); geometry not "
                  "given.",
        ours=_md_table(["teeth", "MVU count (interior point)", "MVU count (low rank)", "Isomap count"],
                       [[r["teeth"], f"{r['ipm']['count']} ({r['ipm']['status']}, {gap_text(r['ipm'])})",
                         f"{r['lowrank']['count']} ({r['lowrank']['status']})", r["isomap_count"]] for r in raw])
        + f"\n\nn = {config['n']}, MVU k = {config['k_mvu']} (equality), Isomap k = {config['k_isomap']}; a count "
        "is the number of eigenvalues above 1 % of the trace.",
        rows=raw, verdict="reproduced in trend" if geometry and certified else "differs",
        agreement=(f"MVU's count over {', '.join(map(str, teeth))} teeth: {', '.join(map(str, counts))}; Isomap's: "
                   f"{', '.join(str(r['isomap_count']) for r in raw)}. The geometry hypothesis is "
                   + ("supported" if geometry else "refuted") + " and the solver hypothesis "
                   + ("supported" if solver else "refuted") + " (the low-rank counts "
                   + ", ".join(str(r["lowrank"]["count"]) for r in raw) + "). Certified MVU solves (either method): "
                   + (", ".join(f"{t} teeth" for t in certified) if certified else "none") + "."))


def fig3_15_premise(record: dict, results: Path) -> str:
    """The counts :func:`fig3_15_reasons` starts from, read from the stored records when the report is written: our
    Fig. 3.15's (its MVU and Isomap counts, its solve's method and status) and this test's own interior-point count
    on the same comb (``record``, the test's stored record)."""
    stored = results / "fig3_15.json"
    if not stored.exists():
        return "Our Fig. 3.15 has not been run yet: no counts to start from."
    figure = json.loads(stored.read_text())
    rows, teeth = figure["rows"], figure["config"]["teeth"]
    text = (f"Our Fig. 3.15 (its stored record, commit {figure.get('commit', 'not recorded')}) counts "
            f"{rows['count']['mvu']} (MVU, {rows['method']}, {rows['status']}) and {rows['count']['isomap']} (Isomap) "
            f"eigenvalues above 1 % of the trace on its comb of {teeth} teeth")
    own = [row["ipm"]["count"] for row in record["rows"] if row["teeth"] == teeth]
    return text + (f"; this test's interior-point solve of that comb counts {own[0]} (MVU)." if own else ".")


def _comb_six_eight(config: dict, options: dict, label: str, png: Path, method: str = "ipm",
                    variant: str = "equality") -> tuple[list, list, list, str, list]:
    """MVU (``variant`` by ``method`` with ``options``) and Isomap counts on each comb of ``config["teeth"]``,
    plotted; the runs, those giving the thesis' 6 and 8, those of them certified, the decision and the teeth."""
    raw = [_comb_counts(config, teeth, {method: options}, variant) for teeth in config["teeth"]]
    for row in raw:
        print(f"  {row['teeth']} teeth, {label}: MVU {row[method]['count']} ({row[method]['status']}), Isomap "
              f"{row['isomap_count']}", flush=True)
    match = [r for r in raw if r[method]["count"] == 6 and r["isomap_count"] == 8]
    certified = [r for r in match if r[method]["status"] == "optimal"]
    decision = "supported" if certified else "indicated (uncertified MVU solve only)" if match else "refuted"
    fig, ax = plt.subplots(figsize=(6, 3.6))
    teeth = [r["teeth"] for r in raw]
    ax.plot(teeth, [r[method]["count"] for r in raw], "o-", label=f"MVU, {label} ({method})")
    ax.plot(teeth, [r["isomap_count"] for r in raw], "s-", label="Isomap")
    ax.axhline(6, color="C0", lw=0.5)
    ax.axhline(8, color="C1", lw=0.5)
    ax.set(xlabel="teeth", ylabel="eigenvalues above 1 % of the trace")
    ax.legend(fontsize=7)
    _save(fig, png)
    return raw, match, certified, decision, teeth


def fig3_15_reasons_odd(config: dict, png: Path) -> Outcome:
    """Fig. 3.15 — the reason test: an odd number of teeth, the counts between our even ones.

    Paper
    -----
    n = 300 points on a two-dimensional comb; MVU (k = 3) gives six dimensions of non-zero
    variance, Isomap (k = 5) eight. The thesis gives no geometry beyond "strings" joined to a
    spine; its text offers no other reading of the counts.

    Departures
    ----------
    - ``fig3_15_reasons`` tried 4, 6, 8, 10 and 12 teeth: MVU (interior point, every solve
      ``inaccurate``) counted 3, 4, 5, 6, 7 and Isomap 3, 5, 7, 9, 10 — MVU's 6 at 10 teeth,
      Isomap's 8 between 8 and 10; the geometry hypothesis was refuted on even counts only.
      Hypothesis, fixed before this run: (odd teeth) the thesis' comb has an odd number of
      teeth — supported if some count in ``teeth`` gives MVU 6 and Isomap 8 from a certified
      (``optimal``) MVU solve; *indicated* (not supported) if it does so only from an uncertified
      one; refuted otherwise. Equality MVU by the interior point under an iteration cap
      ``max_iter`` (deterministic), the same comb generator (unit teeth 0.25 apart), n and k.
    """
    raw, match, certified, decision, teeth = _comb_six_eight(config, {"max_iter": config["max_iter"]}, "angle edges",
                                                             png)
    return Outcome(
        published="Six dimensions of non-zero variance with MVU (k = 3), eight with Isomap (k = 5); geometry not "
                  "given.",
        ours=_md_table(["teeth", "MVU count (interior point)", "Isomap count"],
                       [[r["teeth"], f"{r['ipm']['count']} ({r['ipm']['status']}, {r['ipm']['iterations']} it., "
                                     f"{gap_text(r['ipm'])})", r["isomap_count"]] for r in raw])
        + f"\n\nn = {config['n']}, MVU k = {config['k_mvu']} (equality, iteration cap {config['max_iter']}), "
        f"Isomap k = {config['k_isomap']}; a count is the number of eigenvalues above 1 % of the trace.",
        rows={"runs": raw, "decision": decision},
        verdict="reproduced in trend" if certified else "differs",
        agreement=(f"Over {', '.join(map(str, teeth))} teeth MVU counts "
                   f"{', '.join(str(r['ipm']['count']) for r in raw)} and Isomap "
                   f"{', '.join(str(r['isomap_count']) for r in raw)}; the odd-teeth hypothesis is {decision}"
                   + (f" ({', '.join(str(r['teeth']) for r in match)} teeth give 6 and 8)" if match else "")
                   + "."))



def fig3_15_reasons_graph(config: dict, png: Path) -> Outcome:
    """Fig. 3.15 — the reason test: the comb's MVU graph without the angle edges.

    Paper
    -----
    n = 300 points on a two-dimensional comb; MVU "obtained with k = 3" gives six dimensions of
    non-zero variance, Isomap (k = 5) eight; "the individual strings are pointing away from each
    other in different directions". The text gives k only, not whether the graph carries the
    angle edges of (3.8).

    Departures
    ----------
    - Our comb tests (``fig3_15_reasons``, ``_odd``: 4–12 teeth) solve MVU on the graph with the
      angle edges, which also fix the angle at each joint of a tooth and the spine; no tooth
      count gave MVU 6 with Isomap 8 (Isomap counts 8 at 9 teeth only, where MVU counted 7).
      Hypothesis, fixed before this run: (graph) the thesis' comb MVU used the distance-only
      k = 3 graph, whose joints turn freely so each string can point its own way — supported if
      some count in ``teeth`` gives MVU 6 and Isomap 8 from a certified (``optimal``) MVU solve;
      *indicated* (not supported) if only from an uncertified one; refuted otherwise. Equality
      MVU by the interior point under an iteration cap ``max_iter``, the same comb generator,
      n and k.
    """
    raw, match, certified, decision, teeth = _comb_six_eight(
        config, {"max_iter": config["max_iter"], "angles": False}, "distance-only graph", png)
    return Outcome(
        published="Six dimensions of non-zero variance with MVU (k = 3), eight with Isomap (k = 5); geometry and "
                  "graph not given.",
        ours=_md_table(["teeth", "MVU count, distance-only graph (interior point)", "λ1..λ4", "Isomap count"],
                       [[r["teeth"], f"{r['ipm']['count']} ({r['ipm']['status']}, {r['ipm']['iterations']} it., "
                                     f"{gap_text(r['ipm'])})",
                         ", ".join(f"{v:.3f}" for v in r["ipm"]["spectrum"][:4]), r["isomap_count"]] for r in raw])
        + f"\n\nn = {config['n']}, MVU k = {config['k_mvu']} (equality, no angle edges, iteration cap "
        f"{config['max_iter']}), Isomap k = {config['k_isomap']}; a count is the number of eigenvalues above 1 % of "
        "the trace.",
        rows={"runs": raw, "decision": decision},
        verdict="reproduced in trend" if certified else "differs",
        agreement=(f"Over {', '.join(map(str, teeth))} teeth MVU on the distance-only graph counts "
                   f"{', '.join(str(r['ipm']['count']) for r in raw)} and Isomap "
                   f"{', '.join(str(r['isomap_count']) for r in raw)}; the graph hypothesis is {decision}"
                   + (f" ({', '.join(str(r['teeth']) for r in match)} teeth give 6 and 8)" if match else "")
                   + "."))


# ------------------------------------------------------------------------------------------ Fig. 3.24–3.25


_MEASURES = ("continuity", "trust", "intersection")


def _fives_min_max(n: int, k: int, r: int, seed: int, ls: list[int], angles: bool = False, digit: int = 5) -> dict:
    """Maximum- and minimum-trace MVU (equalities, the kNN graph — with the angle edges of (3.8) when
    ``angles`` — the default method) of a seeded sample of ``n`` MNIST fives (or images of ``digit``,
    20×20); the quality ratios (min over max) at each l of ``ls`` (``ratio`` and ``quality`` at the
    first)."""
    base = _base()
    from sdpembed.datasets import load_mnist
    X, _ = load_mnist(size=20, digits=digit, n_samples=n, random_state=seed)
    runs = {v: base._exact(X, k, v, r=r, angles=angles) for v in ("equality", "min_trace")}
    quality = {l: {v: base._quality(X, run["Y"], l) for v, run in runs.items()} for l in ls}
    ratios = {l: {m: q["min_trace"][m] / max(q["equality"][m], 1e-12) for m in _MEASURES} for l, q in quality.items()}
    row = {"seed": seed, "ratio": ratios[ls[0]], "quality": quality[ls[0]],
           "status": {v: run["status"] for v, run in runs.items()},
           "gap": {v: run["relative_gap"] for v, run in runs.items()}, "ratios": ratios}
    print(f"  n = {n}, seed {seed}: " + "; ".join(f"l = {l}: " + ", ".join(f"{m} {v:.3f}" for m, v in ratio.items())
                                              for l, ratio in ratios.items()) + f" ({row['status']})", flush=True)
    return row


def _ratio_stats(ratios: list[dict]) -> dict:
    """Mean, sample standard deviation and the count at or above 1 of each measure's ratio."""
    stats = {}
    for m in _MEASURES:
        values = np.array([r[m] for r in ratios])
        stats[m] = {"mean": float(values.mean()), "std": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
                    "above_one": int(np.sum(values >= 1.0))}
    return stats


def plot_ratios(raw: list[dict], png: Path, title: str | None = None) -> None:
    """Each seed's three quality ratios (minimum over maximum trace) as bars against the line at 1."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for off, m in zip((-0.25, 0.0, 0.25), _MEASURES, strict=True):
        ax.bar(np.arange(len(raw)) + off, [r["ratio"][m] for r in raw], 0.25, label=m)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(np.arange(len(raw)), [f"seed {r['seed']}" for r in raw])
    ax.set(ylabel="min / max trace", title=title)
    ax.legend(fontsize=7)
    _save(fig, png)


def fig3_24_25_reasons(config: dict, png: Path) -> Outcome:
    """Fig. 3.24–3.25 — the reason test: is the one quality ratio above 1 sampling noise?

    Paper
    -----
    Local continuity, trust and intersection of the minimum-trace embedding over the
    maximum-trace one (r = 10 for digits): all below 1 on every data set.

    Departures
    ----------
    - Our Fig. 3.24 has one ratio above 1: continuity 1.026 on n = 200 MNIST fives (seed 0).
      Hypothesis, fixed before the run: it is the sampling noise of a measure near 1 on a small
      sample — supported if, over the seeded samples ``seeds`` of the same size, the mean
      continuity ratio is below 1 and seed 0's ratio lies within two standard deviations of the
      mean; refuted (a systematic difference from the thesis) if the mean is at or above 1.
    - The thesis' Fig. 3.25 uses n = 500 fives; equality and minimum-trace solves by their
      default method (the interior point) at n = ``n`` for each seed, as our Fig. 3.24.
    """
    raw = [_fives_min_max(config["n"], config["k"], config["r"], seed, [config["l"]]) for seed in config["seeds"]]
    stats = _ratio_stats([r["ratio"] for r in raw])
    c = stats["continuity"]
    first = next(r["ratio"]["continuity"] for r in raw if r["seed"] == config["seeds"][0])
    supported = c["mean"] < 1.0 and abs(first - c["mean"]) <= 2.0 * c["std"]
    statuses = [s for r in raw for s in r["status"].values()]
    plot_ratios(raw, png)
    all_below = all(r["ratio"][m] < 1.0 for r in raw for m in r["ratio"])
    return Outcome(
        published="Every ratio (minimum- over maximum-trace quality) below 1 on every data set.",
        ours=_md_table(["seed", "continuity", "trust", "intersection", "solves (max / min)"],
                       [[r["seed"], *(f"{r['ratio'][m]:.3f}" for m in ("continuity", "trust", "intersection")),
                         f"{r['status']['equality']} / {r['status']['min_trace']}"] for r in raw])
        + "\n\n" + "; ".join(f"{m}: mean {v['mean']:.3f}, sd {v['std']:.3f}, {v['above_one']} of {len(raw)} at or "
                              "above 1" for m, v in stats.items())
        + f". MNIST fives n = {config['n']}, k = {config['k']}, l = {config['l']}, r = {config['r']}.",
        rows={"runs": raw, "stats": stats},
        verdict=("reproduced" if all_below and all(s == "optimal" for s in statuses)
                 else "reproduced in trend" if supported else "differs"),
        agreement=(f"Continuity ratio over {len(raw)} samples: mean {c['mean']:.3f} (sd {c['std']:.3f}), seed "
                   f"{config['seeds'][0]}'s {first:.3f}; {c['above_one']} of {len(raw)} at or above 1. The noise "
                   "hypothesis is " + ("supported" if supported else "refuted")
                   + (". Every solve optimal." if all(s == "optimal" for s in statuses) else
                      f". Solves not all optimal: {sorted(set(statuses))}.")))


def fig3_24_25_reasons_size(config: dict, png: Path) -> Outcome:
    """Fig. 3.24–3.25 — the reason test: the sample size and the measures' l.

    Paper
    -----
    Fig. 3.25: n = 500 MNIST fives, maximum against minimum trace; Fig. 3.24: every quality
    ratio (minimum- over maximum-trace embedding, r = 10 for digits) below 1. The thesis does
    not give l for Fig. 3.24; Sec. 3.1.9 evaluates the same measures at l = 15.

    Departures
    ----------
    - At n = 200 (l = 10) the continuity ratio is at or above 1 on 5 of 5 samples (mean 1.020,
      sd 0.009): the noise hypothesis was refuted (``fig3_24_25_reasons``). Hypotheses, fixed
      before this run: (size) the thesis' n = 500 fives, a denser sample, give a continuity
      ratio below 1 — supported if the mean continuity ratio over ``seeds`` at n = ``n`` and
      l = 10 is below 1; (l) the thesis' l is Sec. 3.1.9's 15 — supported if the mean at
      l = 15 on the same solves is below 1. Each is refuted if its mean is at or above 1.
    - Both variants by their default method (the interior point), equalities, k = ``k``, the
      distance-only kNN graph, r = ``r``, as our Fig. 3.24; every solve's status is reported and
      a ratio from an uncertified solve is marked as such.
    """
    ls = config["ls"]
    raw = [_fives_min_max(config["n"], config["k"], config["r"], seed, ls) for seed in config["seeds"]]
    stats = {l: _ratio_stats([r["ratios"][l] for r in raw]) for l in ls}
    supported = {l: stats[l]["continuity"]["mean"] < 1.0 for l in ls}
    statuses = [s for r in raw for s in r["status"].values()]
    certified = all(s == "optimal" for s in statuses)
    fig, axes = plt.subplots(1, len(ls), figsize=(5 * len(ls), 3.6), squeeze=False)
    for ax, l in zip(axes[0], ls, strict=True):
        for off, m in zip((-0.25, 0.0, 0.25), _MEASURES, strict=True):
            ax.bar(np.arange(len(raw)) + off, [r["ratios"][l][m] for r in raw], 0.25, label=m)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(np.arange(len(raw)), [f"seed {r['seed']}" for r in raw])
        ax.set(ylabel="min / max trace", title=f"n = {config['n']}, l = {l}")
        ax.legend(fontsize=7)
    _save(fig, png)
    hypothesis = {ls[0]: "size", **{l: f"l = {l}" for l in ls[1:]}}
    return Outcome(
        published="Every ratio (minimum- over maximum-trace quality) below 1 on every data set (n = 500 fives).",
        ours=_md_table(["seed", "l", *_MEASURES, "solves (max / min)"],
                       [[r["seed"], l, *(f"{r['ratios'][l][m]:.3f}" for m in _MEASURES),
                         f"{r['status']['equality']} / {r['status']['min_trace']}"] for l in ls for r in raw])
        + "\n\n" + "; ".join(f"l = {l}, {m}: mean {v['mean']:.3f}, sd {v['std']:.3f}, {v['above_one']} of "
                              f"{len(raw)} at or above 1" for l in ls for m, v in stats[l].items())
        + f". MNIST fives n = {config['n']}, k = {config['k']}, r = {config['r']}.",
        rows={"runs": raw, "stats": stats, "supported": {hypothesis[l]: supported[l] for l in ls}},
        verdict="reproduced in trend" if any(supported.values()) and certified else "differs",
        agreement=("; ".join(f"l = {l}: mean continuity ratio {stats[l]['continuity']['mean']:.3f} (sd "
                             f"{stats[l]['continuity']['std']:.3f}), {stats[l]['continuity']['above_one']} of "
                             f"{len(raw)} at or above 1 — the {hypothesis[l]} hypothesis is "
                             + ("supported" if supported[l] else "refuted") for l in ls)
                   + (". Every solve optimal." if certified else
                      f". Solves not all optimal ({sorted(set(statuses))}): the ratios are indicative only.")))



def fig3_24_25_reasons_angles(config: dict, png: Path) -> Outcome:
    """Fig. 3.24–3.25 — the reason test: the thesis' graph, with the angle edges of (3.8).

    Paper
    -----
    Sec. 3.1.11: the minimum-trace SDP keeps K_ii − 2K_ij + K_jj = D_ij "for all (i, j) with
    η_ij = 1" — the indicator of (3.8), which joins i and j when either is among the other's
    k nearest neighbours *or* both are among the k nearest neighbours of a third input (the
    angle edges). Fig. 3.24: every quality ratio (minimum- over maximum-trace embedding, the
    leading 10 dimensions for digits) below 1.

    Departures
    ----------
    - Our Fig. 3.24 and its two reason tests solve both SDPs on the distance-only kNN graph;
      the continuity ratio on MNIST fives stayed at or above 1 under the sample (5 seeds at
      n = 200), the thesis' n = 500 and l = 15 (``fig3_24_25_reasons``, ``_size``).
      Hypothesis, fixed before this run: (angles) the thesis' graph with the angle edges, which
      fixes the angles between each point's neighbours as well as their distances, is what
      puts the ratio below 1 — supported if the mean continuity ratio over ``seeds`` at n =
      ``n``, l = ``l`` is below 1; refuted if it is at or above 1.
    - Both variants by their default method (the interior point), k = ``k``, r = ``r``, the same
      seeded samples as ``fig3_24_25_reasons``; every solve's status is reported and a ratio
      from an uncertified solve is marked as such.
    """
    raw = [_fives_min_max(config["n"], config["k"], config["r"], seed, [config["l"]], angles=True)
           for seed in config["seeds"]]
    stats = _ratio_stats([r["ratio"] for r in raw])
    supported = stats["continuity"]["mean"] < 1.0
    statuses = [s for r in raw for s in r["status"].values()]
    certified = all(s == "optimal" for s in statuses)
    plot_ratios(raw, png, f"angle edges, n = {config['n']}, l = {config['l']}")
    c = stats["continuity"]
    return Outcome(
        published="Every ratio (minimum- over maximum-trace quality) below 1 on every data set.",
        ours=_md_table(["seed", *_MEASURES, "solves (max / min)"],
                       [[r["seed"], *(f"{r['ratio'][m]:.3f}" for m in _MEASURES),
                         f"{r['status']['equality']} / {r['status']['min_trace']}"] for r in raw])
        + "\n\n" + "; ".join(f"{m}: mean {v['mean']:.3f}, sd {v['std']:.3f}, {v['above_one']} of {len(raw)} at or "
                              "above 1" for m, v in stats.items())
        + f". MNIST fives n = {config['n']}, k = {config['k']} with angle edges, l = {config['l']}, r = {config['r']}.",
        rows={"runs": raw, "stats": stats, "supported": supported, "certified": certified},
        verdict="reproduced in trend" if supported and certified else "differs",
        agreement=(f"With the angle edges the mean continuity ratio over {len(raw)} samples is {c['mean']:.3f} (sd "
                   f"{c['std']:.3f}), {c['above_one']} of {len(raw)} at or above 1 — the angle-edge hypothesis is "
                   + ("supported" if supported else "refuted")
                   + (". Every solve optimal." if certified else
                      f". Solves not all optimal ({sorted(set(statuses))}): the ratios are indicative only.")))


# ------------------------------------------------------------------------------------------ Fig. 3.14 and 3.28


def fig3_28_reasons(config: dict, png: Path) -> Outcome:
    """Fig. 3.14 and 3.28 — the reason test: do the angle edges or the thesis' roll make strict distances lock?

    Paper
    -----
    Fig. 3.14: n = 800 noise-free swiss-roll inputs, k = 6: strict distances (equality MVU)
    "lock up" before the roll is unfolded. Fig. 3.28: n = 1000, locked from k = 7 on: three
    dimensions of almost equal variance, the input's PCA spectrum. Sec. 3.1.12: when locked,
    "the high dimensional input is the only data set that satisfies all constraints".

    Departures
    ----------
    - Our Fig. 3.14 and 3.28 (n = 250, a roll 8 high, the distance-only kNN graph) never lock:
      every equality run unfolds. Hypotheses: (angles) the thesis' graph also joins the
      neighbours of each point (the angle edges of (3.8)), which makes it rigid — supported if
      the graphs *with* angle edges on the same roll lock for some k in ``ks``; (roll) the
      thesis' roll, 21 high (the generator's default), is the one that locks — supported if
      its graphs lock for some k in ``thesis_ks``, at n = ``thesis_n`` (the interior point's
      reach on our machine, not the thesis' 1000).
    - An earlier run solved the equalities by the low-rank method under a wall-clock limit:
      every solve ended ``max_iterations`` with relative edge violations 0.2–88 and decided
      nothing. Here the equalities are solved by the interior point under an iteration cap
      ``max_iter`` (deterministic), and each graph is decided by the rule below, fixed before
      this run.
    - The rule. The centred input Gram matrix meets every equality, so the maximum variance
      lies between the input's trace T and the interior point's certified dual bound U (valid
      whatever the run's status). A locked graph has no interior, its dual optimum is not
      attained and no method certifies a gap; but the bound still decides it: *locked* (proved)
      when U ≤ 1.01 T — no Gram matrix meeting the equalities has 1 % more variance than the
      input, so no unfolding is feasible. *Not locked* when (i) the low-rank inequality
      optimum, certified, keeps every edge within 1 % of its length and is unfolded (third
      eigenvalue at most 5 % of the trace and |Spearman ρ| of the first output against the
      roll's angle t at least 0.9, Fig. 3.14's rule) — it is then feasible, hence optimal, for
      the equalities (proved); or (ii) the equality iterate keeps every edge within 1 % of its
      length (squared lengths), is unfolded by the same rule and has a trace of at least 1.5 T
      (a near-feasible unfolding, not a proof; reported as such). Otherwise undecided.
    """
    base = _base()
    from scipy.stats import spearmanr
    cases = ([("ours, angle edges", config["n"], config["height"], True, k) for k in config["ks"]]
             + [("thesis' roll", config["thesis_n"], 21.0, config["thesis_angles"], k) for k in config["thesis_ks"]])
    raw, rolls = [], {}
    for name, n, height, angles, k in cases:
        if (n, height) not in rolls:
            rolls[(n, height)] = swiss_roll(n, noise=0.0, height=height, random_state=config["seed"])
        X, params = rolls[(n, height)]
        input_trace = float(np.sum((X - X.mean(axis=0)) ** 2))
        row = {"case": name, "n": n, "height": height, "angles": angles, "k": k, "input_trace": input_trace}
        for variant, method, cap in (("inequality", "lowrank", None), ("equality", "ipm", config["max_iter"])):
            run = base._exact(X, k, variant, angles=angles, method=method, max_iter=cap)
            rho = float(abs(spearmanr(run["Y"][:, 0], params[:, 0])[0]))
            row[variant] = {**_solve_summary(run), "rho": rho, "trace_ratio": run["trace"] / input_trace,
                            "bound_ratio": run["bound"] / input_trace,
                            "unfolded": bool(run["spectrum"][2] <= 0.05 and rho >= 0.9)}
        ineq, eq = row["inequality"], row["equality"]
        keeps_edges = ineq["status"] == "optimal" and ineq["shortened"] == 0.0 and ineq["lengthened"] == 0.0
        if eq["bound_ratio"] <= 1.01:
            row["locked"], row["decided_by"] = True, "certified bound within 1 % of the input's trace (proof)"
        elif keeps_edges and ineq["unfolded"]:
            row["locked"], row["decided_by"] = False, "inequality optimum keeps every edge (proof)"
        elif eq["max_sq_violation"] <= 0.01 and eq["unfolded"] and eq["trace_ratio"] >= 1.5:
            row["locked"], row["decided_by"] = False, "near-feasible unfolded equality iterate (not a proof)"
        else:
            row["locked"], row["decided_by"] = None, "undecided"
        raw.append(row)
        print(f"  {name} n = {n}, k = {k}: inequality {ineq['status']} shortened {ineq['shortened']:.1%}; equality "
              f"{eq['status']} ({eq['iterations']} it.) violation {eq['max_sq_violation']:.1e}, U/T "
              f"{eq['bound_ratio']:.4f}, λ3 {eq['spectrum'][2]:.3f}; locked {row['locked']} ({row['decided_by']})",
              flush=True)
    verdicts = {}
    for name in ("ours, angle edges", "thesis' roll"):
        decided = [r for r in raw if r["case"] == name and r["locked"] is not None]
        verdicts[name] = ("undecided" if not decided else "supported" if any(r["locked"] for r in decided)
                          else "refuted" if len(decided) == sum(r["case"] == name for r in raw)
                          else "not supported where decided")
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    for ax, name in zip(axes, ("ours, angle edges", "thesis' roll"), strict=True):
        group = [r for r in raw if r["case"] == name]
        x = np.arange(len(group))
        ax.bar(x - 0.2, [r["equality"]["bound_ratio"] for r in group], 0.4, label="certified bound U / input trace T")
        ax.bar(x + 0.2, [r["equality"]["trace_ratio"] for r in group], 0.4, label="equality iterate trace / T")
        ax.axhline(1.01, color="k", lw=0.8)
        ax.set_xticks(x, [f"k = {r['k']}" for r in group])
        ax.set(title=f"{name} (n = {group[0]['n']})" if group else name, yscale="log")
        ax.legend(fontsize=7)
    _save(fig, png)
    locks = {name: ", ".join(str(r["k"]) for r in raw if r["case"] == name and r["locked"]) for name in verdicts}
    return Outcome(
        published="Fig. 3.14: strict distances lock at n = 800, k = 6. Fig. 3.28: locked from k = 7 at n = 1000.",
        ours=_md_table(["case", "n", "height", "angle edges", "k", "inequality: status, edges > 1 % shorter",
                        "equality (interior point): status, iterations, largest violation, U / T, trace / T, "
                        "λ1..λ3, |ρ(y1, t)|", "locked (decided by)"],
                       [[r["case"], r["n"], f"{r['height']:g}", r["angles"], r["k"],
                         f"{r['inequality']['status']}, {r['inequality']['shortened']:.1%}",
                         f"{r['equality']['status']}, {r['equality']['iterations']}, "
                         f"{r['equality']['max_sq_violation']:.1e}, {r['equality']['bound_ratio']:.4f}, "
                         f"{r['equality']['trace_ratio']:.3f}, {base._top(np.array(r['equality']['spectrum']), 3)}, "
                         f"{r['equality']['rho']:.3f}", f"{r['locked']} ({r['decided_by']})"] for r in raw])
        + f"\n\nU: the interior point's certified upper bound on the trace of any Gram matrix meeting the "
        f"equalities; T: the input's own trace (a feasible point). Iteration cap {config['max_iter']}.",
        rows=raw, verdict="reproduced in trend" if any(locks.values()) else "differs",
        agreement=("Angle-edge hypothesis: " + verdicts["ours, angle edges"]
                   + (f" (locked at k = {locks['ours, angle edges']})" if locks["ours, angle edges"] else "")
                   + "; thesis'-roll hypothesis: " + verdicts["thesis' roll"]
                   + (" (locked at k = " + locks["thesis' roll"] + ")" if locks["thesis' roll"] else "")
                   + ". Undecided graphs: "
                   + (", ".join(f"{r['case']} k = {r['k']}" for r in raw if r["locked"] is None) or "none") + "."))



def polish_equalities(Y: np.ndarray, edges: np.ndarray, sqdist: np.ndarray, *, steps: int,
                      tol: float) -> tuple[np.ndarray, list[float]]:
    """Damped minimum-norm Gauss–Newton on the equalities (3.8), ‖y_i − y_j‖² = D_ij for every edge, from
    the outputs ``Y`` (n × d): each step solves (J Jᵀ + μI) z = −g and moves by Jᵀz, with g_e the relative
    violation ‖y_i − y_j‖²/D_e − 1 and J its Jacobian; a step that does not lower ‖g‖ raises μ tenfold.
    Stops when max_e |g_e| ≤ ``tol`` or after ``steps`` accepted or rejected steps; returns the outputs and
    the largest relative violation after each accepted step (the first entry: the start)."""
    from scipy.sparse import csr_matrix, identity
    from scipy.sparse.linalg import splu

    n, d = Y.shape
    i, j = edges[:, 0], edges[:, 1]
    m = len(edges)
    cols = np.arange(d)

    def violation(Y: np.ndarray) -> np.ndarray:
        diff = Y[i] - Y[j]
        return np.einsum("ed,ed->e", diff, diff) / sqdist - 1.0

    g = violation(Y)
    history, mu = [float(np.max(np.abs(g)))], 1e-8
    for _ in range(steps):
        if history[-1] <= tol:
            break
        diff = 2.0 * (Y[i] - Y[j]) / sqdist[:, None]
        rows = np.repeat(np.arange(m), 2 * d)
        index = np.concatenate([i[:, None] * d + cols, j[:, None] * d + cols], axis=1).ravel()
        J = csr_matrix((np.concatenate([diff, -diff], axis=1).ravel(), (rows, index)), shape=(m, n * d))
        normal = (J @ J.T).tocsc()
        while mu < 1e12:
            z = splu((normal + mu * identity(m, format="csc")).tocsc()).solve(-g)
            trial = Y + (J.T @ z).reshape(n, d)
            g_trial = violation(trial)
            if np.linalg.norm(g_trial) < np.linalg.norm(g):
                Y, g, mu = trial, g_trial, max(mu / 10.0, 1e-12)
                history.append(float(np.max(np.abs(g))))
                break
            mu *= 10.0
        else:
            break
    return Y, history


def fig3_28_reasons_polish(config: dict, png: Path) -> Outcome:
    """Fig. 3.28 — the reason test: decide the thesis' roll at k = 7 (and 8) by a feasible unfolded point.

    Paper
    -----
    Fig. 3.28: a swiss roll (n = 1000) "locks at k = 7": from k = 7 on, strict distances leave
    only the input's own three-dimensional spectrum (Sec. 3.1.12).

    Departures
    ----------
    - ``fig3_28_reasons`` left the thesis' roll (n = 500, 21 high, the distance-only kNN graph)
      undecided at k = 7 and 8: the interior point, capped at 100 iterations, ended
      ``inaccurate`` with certified bounds U = 5.22 T and 1.63 T (T the input's trace, a feasible
      value) and iterates violating the equalities by up to 0.17 and 3.9 (relative, squared
      lengths). More interior-point iterations do not help: it stopped at 61 and 94 iterations,
      below the cap.
    - The rule, fixed before this run. A graph is *not locked* when a Gram matrix meeting every
      equality has a trace well above the input's: the maximum variance is then above it too, so
      the input is not the optimum. We look for one by damped minimum-norm Gauss–Newton on the
      equalities (:func:`polish_equalities`, not a solver of the package) from the interior
      point's iterate, in its ``dims`` leading dimensions. *Not locked* if the polished point
      meets every edge to a relative ``tol`` (squared lengths) and its trace is at least 1.5 T;
      reported as a numerical certificate (a point feasible to rounding, not a proof in exact
      arithmetic), with whether it is unfolded (third eigenvalue at most 5 % of its trace and
      |Spearman ρ| of its first output against the roll's angle t at least 0.9). If the
      violation stalls above ``tol`` the graph stays undecided: a locked graph's equalities
      have no solution but the input's, so a stall is expected there but proves nothing.
      *Locked* as in ``fig3_28_reasons``: the interior point's certified bound U ≤ 1.01 T.
    - The thesis' n = 1000 is not reached (the interior point's time at this k on our machine);
      n = ``n`` as in ``fig3_28_reasons``.
    """
    base = _base()
    from scipy.stats import spearmanr

    from sdpembed.problems import MVUInstance
    X, params = swiss_roll(config["n"], noise=0.0, height=config["height"], random_state=config["seed"])
    input_trace = float(np.sum((X - X.mean(axis=0)) ** 2))
    raw = []
    for k in config["ks"]:
        instance = MVUInstance.from_points(X, k, "equality", angles=False, link=True, random_state=0)
        run = base._exact(X, k, "equality", angles=False, method="ipm", max_iter=config["max_iter"],
                          r=config["dims"])
        Y, history = polish_equalities(run["Y"], instance.edges, instance.sqdist, steps=config["steps"],
                                       tol=config["tol"])
        Yc = Y - Y.mean(axis=0)
        w = np.sort(np.linalg.eigvalsh(Yc.T @ Yc))[::-1]
        spectrum = np.maximum(w, 0.0) / np.maximum(w, 0.0).sum()
        rho = float(abs(spearmanr(Yc @ np.linalg.eigh(Yc.T @ Yc)[1][:, -1], params[:, 0])[0]))
        trace_ratio = float(np.sum(Yc * Yc)) / input_trace
        feasible = history[-1] <= config["tol"]
        unfolded = bool(spectrum[2] <= 0.05 and rho >= 0.9)
        bound_ratio = run["bound"] / input_trace
        locked = True if bound_ratio <= 1.01 else False if feasible and trace_ratio >= 1.5 else None
        raw.append({"k": k, "edges": int(len(instance.edges)), "ipm": _solve_summary(run),
                    "bound_ratio": bound_ratio, "start_violation": history[0],
                    "violation": history[-1], "steps": len(history) - 1, "history": history,
                    "trace_ratio": trace_ratio, "spectrum": spectrum[:6].tolist(), "rho": rho,
                    "unfolded": unfolded, "locked": locked})
        print(f"  k = {k}: interior point {run['status']} ({run['iterations']} it.), start violation "
              f"{history[0]:.1e}, polished {history[-1]:.1e} in {len(history) - 1} steps, trace {trace_ratio:.3f} T, "
              f"λ1..λ3 {base._top(spectrum, 3)}, |ρ| {rho:.3f}; locked {locked}", flush=True)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    for row in raw:
        axes[0].semilogy(row["history"], "o-", label=f"k = {row['k']}")
    axes[0].axhline(config["tol"], color="k", lw=0.8)
    axes[0].set(xlabel="Gauss–Newton step", ylabel="largest relative violation")
    axes[0].legend(fontsize=7)
    for index, row in enumerate(raw):
        axes[1].bar(np.arange(1, 5) + (index - (len(raw) - 1) / 2) * 0.35, np.pad(row["spectrum"][:4], (
            0, max(0, 4 - len(row["spectrum"][:4])))), 0.35, label=f"k = {row['k']}")
    axes[1].set(xlabel="eigenvalue", ylabel="fraction of trace")
    axes[1].legend(fontsize=7)
    _save(fig, png)

    def decision(row: dict) -> str:
        if row["locked"] is True:
            return "locked (certified bound within 1 % of the input's trace)"
        if row["locked"] is False:
            return "not locked (feasible to rounding, trace ≥ 1.5 T)" + (", unfolded" if row["unfolded"] else "")
        return "undecided"

    decided = {row["k"]: decision(row) for row in raw}
    return Outcome(
        published="Fig. 3.28: the roll locks at k = 7 (n = 1000): from there only the input's spectrum.",
        ours=_md_table(["k", "edges", "interior point: status, iterations, U / T", "start violation",
                        "polished violation (steps)", "trace / T", "λ1..λ3", "|ρ(y1, t)|", "decision"],
                       [[r["k"], r["edges"], f"{r['ipm']['status']}, {r['ipm']['iterations']}, {r['bound_ratio']:.3f}",
                         f"{r['start_violation']:.1e}", f"{r['violation']:.1e} ({r['steps']})",
                         f"{r['trace_ratio']:.3f}", base._top(np.array(r["spectrum"]), 3), f"{r['rho']:.3f}",
                         decided[r["k"]]] for r in raw])
        + f"\n\nn = {config['n']}, roll {config['height']:g} high, noise-free, the distance-only kNN graph; the "
        f"interior point capped at {config['max_iter']} iterations, then Gauss–Newton in its {config['dims']} "
        f"leading dimensions to a relative violation of {config['tol']:g}; T the input's trace.",
        rows={"runs": raw, "decisions": decided},
        verdict="reproduced in trend" if decided.get(7, "").startswith("locked") else "differs",
        agreement=("; ".join(f"k = {k}: {v}" for k, v in decided.items())
                   + ". The thesis' roll locks at k = 7; ours " + (
                       "does not at k = 7: a Gram matrix meeting every equality has "
                       f"{next(r['trace_ratio'] for r in raw if r['k'] == 7):.2f} times the input's variance"
                       if decided.get(7, "").startswith("not locked") else "locks at k = 7"
                       if decided.get(7, "").startswith("locked") else "stays undecided at k = 7") + "."))



def residual_stress(Y: np.ndarray, X: np.ndarray, edges: np.ndarray, sqdist: np.ndarray) -> dict:
    """Read a stalled polish: the weights w_e = g_e / D_e of its residual g (the relative violations of
    (3.8) at the outputs ``Y``) as a stress of the inputs ``X``, Ω = L(w) (the weighted Laplacian, 𝒜*(w)
    of (3.13)), oriented so that its largest eigenvalue is positive.

    Gauss–Newton stalls where Jᵀg = 0 with g ≠ 0, i.e. where w is an equilibrium stress of the outputs.
    An equilibrium stress of the inputs (ΩX = 0) that is positive semidefinite proves that every Gram
    matrix K meeting the equalities has ⟨Ω, K⟩ = ⟨Ω, XXᵀ⟩ = 0, so the feasible set lies in a face of
    the PSD cone and has no strictly feasible point. Returns :func:`stress_summary` of w."""
    i, j = edges[:, 0], edges[:, 1]
    diff = Y[i] - Y[j]
    return stress_summary((np.einsum("ed,ed->e", diff, diff) / sqdist - 1.0) / sqdist, X, edges)


def stress_summary(w: np.ndarray, X: np.ndarray, edges: np.ndarray) -> dict:
    """The edge weights ``w`` as a stress of the points ``X``: Ω = L(w) oriented so that its largest
    eigenvalue is positive; the relative equilibrium residual ‖ΩX_c‖ / (‖Ω‖ ‖X_c‖) (0 for an
    equilibrium stress), λ_min / λ_max of Ω (≥ 0 when Ω is positive semidefinite), and Ω's rank at
    10⁻³ λ_max."""
    from sdpembed.graphs import graph_laplacian

    omega = graph_laplacian(len(X), edges, w).toarray()
    ev = np.linalg.eigvalsh(omega)
    if ev[-1] < -ev[0]:
        omega, ev = -omega, -ev[::-1]
    Xc = X - X.mean(axis=0)
    return {"equilibrium": float(np.linalg.norm(omega @ Xc) / (np.linalg.norm(omega) * np.linalg.norm(Xc))),
            "min_over_max": float(ev[0] / ev[-1]), "rank": int(np.sum(ev > 1e-3 * ev[-1]))}


def fig3_28_reasons_mix(config: dict, png: Path) -> Outcome:
    """Fig. 3.28 — the reason test: the thesis' roll at k = 7, polished from mixtures with the input.

    Paper
    -----
    Fig. 3.28: a swiss roll (n = 1000) "locks at k = 7": from k = 7 on, strict distances leave
    only the input's own three-dimensional spectrum (Sec. 3.1.12).

    Departures
    ----------
    - ``fig3_28_reasons_polish`` left k = 7 (n = 500, 21 high, the distance-only kNN graph)
      undecided: Gauss–Newton from the interior point's iterate stalled at a violation of
      3.9e-4 with a trace of 5.39 T, above the certified bound U = 5.22 T, so that point is
      far from every feasible one. The rule is that run's, unchanged: *not locked* if a point
      meets every edge to a relative ``tol`` (squared lengths) with a trace of at least 1.5 T;
      *locked* if the interior point's certified bound U ≤ 1.01 T; undecided otherwise.
    - Here the polish starts inside the convex hull of the feasible set's known point and the
      iterate: Y₀ = [√(1 − α) X_c, √α Y_ipm] (the centred input beside the interior point's
      ``dims`` leading dimensions), whose Gram matrix is the convex combination (1 − α) XXᵀ +
      α K_ipm, violation α times the iterate's and trace (1 − α) T + α tr K_ipm, for each α in
      ``alphas``; ``steps`` Gauss–Newton steps (:func:`polish_equalities`).
    - Where a polish stalls above ``tol``, its residual is read as a stress of the input
      (:func:`residual_stress`): a positive semidefinite equilibrium stress would mean that the
      equality SDP has no strictly feasible point (its feasible set is a face of the PSD cone),
      which is what stalls both the interior point (``inaccurate``) and Gauss–Newton. Reported,
      not deciding: the stress is read from a stalled point, so it is an indication, not a proof.
    """
    base = _base()
    from sdpembed.problems import MVUInstance
    X, params = swiss_roll(config["n"], noise=0.0, height=config["height"], random_state=config["seed"])
    Xc = X - X.mean(axis=0)
    input_trace = float(np.sum(Xc * Xc))
    k = config["k"]
    instance = MVUInstance.from_points(X, k, "equality", angles=False, link=True, random_state=0)
    run = base._exact(X, k, "equality", angles=False, method="ipm", max_iter=config["max_iter"], r=config["dims"])
    Yi = run["Y"] - run["Y"].mean(axis=0)
    bound_ratio = run["bound"] / input_trace
    raw = []
    for alpha in config["alphas"]:
        start = np.hstack([np.sqrt(1.0 - alpha) * Xc, np.sqrt(alpha) * Yi])
        Y, history = polish_equalities(start, instance.edges, instance.sqdist, steps=config["steps"],
                                       tol=config["tol"])
        Yc = Y - Y.mean(axis=0)
        trace_ratio = float(np.sum(Yc * Yc)) / input_trace
        feasible = history[-1] <= config["tol"]
        locked = True if bound_ratio <= 1.01 else False if feasible and trace_ratio >= 1.5 else None
        stress = None if feasible else residual_stress(Y, X, instance.edges, instance.sqdist)
        raw.append({"alpha": alpha, "start_trace_ratio": float(np.sum(start * start)) / input_trace,
                    "start_violation": history[0], "violation": history[-1], "steps": len(history) - 1,
                    "history": history, "trace_ratio": trace_ratio, "locked": locked, "stress": stress})
        print(f"  α = {alpha}: start {history[0]:.1e}, polished {history[-1]:.1e} in {len(history) - 1} steps, "
              f"trace {trace_ratio:.3f} T; locked {locked}" + (
                  f"; residual stress: equilibrium {stress['equilibrium']:.1e}, λmin/λmax "
                  f"{stress['min_over_max']:.1e}, rank {stress['rank']}" if stress else ""), flush=True)
    decided = [row["locked"] for row in raw if row["locked"] is not None]
    decision = ("locked (certified bound within 1 % of the input's trace)" if True in decided
                else "not locked (feasible to rounding, trace ≥ 1.5 T)" if False in decided else "undecided")
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for row in raw:
        ax.semilogy(row["history"], label=f"α = {row['alpha']} (trace {row['trace_ratio']:.2f} T)")
    ax.axhline(config["tol"], color="k", lw=0.8)
    ax.set(xlabel="Gauss–Newton step", ylabel="largest relative violation", title=f"k = {k}, n = {config['n']}")
    ax.legend(fontsize=7)
    _save(fig, png)
    stalled = [row for row in raw if row["stress"]]
    return Outcome(
        published="Fig. 3.28: the roll locks at k = 7 (n = 1000): from there only the input's spectrum.",
        ours=_md_table(["α", "start: trace / T, violation", "polished violation (steps)", "trace / T",
                        "residual stress: ‖ΩX‖/(‖Ω‖‖X‖), λmin/λmax, rank", "decision"],
                       [[r["alpha"], f"{r['start_trace_ratio']:.3f}, {r['start_violation']:.1e}",
                         f"{r['violation']:.1e} ({r['steps']})", f"{r['trace_ratio']:.3f}",
                         (f"{r['stress']['equilibrium']:.1e}, {r['stress']['min_over_max']:.1e}, "
                          f"{r['stress']['rank']}") if r["stress"] else "—",
                         {True: "locked", False: "not locked", None: "undecided"}[r["locked"]]] for r in raw])
        + f"\n\nk = {k}, n = {config['n']}, roll {config['height']:g} high, noise-free, the distance-only kNN "
        f"graph ({len(instance.edges)} edges); interior point {base._solve_text(run)}, {run['iterations']} "
        f"iterations, U / T = {bound_ratio:.3f}; Gauss–Newton in {3 + config['dims']} dimensions to a relative "
        f"violation of {config['tol']:g}; T the input's trace.",
        rows={"ipm": _solve_summary(run), "bound_ratio": bound_ratio, "runs": raw, "decision": decision},
        verdict="reproduced in trend" if decision.startswith("locked") else "differs",
        agreement=(f"k = {k}: {decision}. " + "; ".join(
            f"from α = {r['alpha']} the polish reaches {r['violation']:.1e} at {r['trace_ratio']:.2f} T"
            for r in raw) + "."
            + (" Every stalled residual is an equilibrium stress of the input to "
               f"{max(r['stress']['equilibrium'] for r in stalled):.0e} whose least eigenvalue is "
               f"{min(r['stress']['min_over_max'] for r in stalled):.1e} of its largest (rank "
               + ", ".join(str(r["stress"]["rank"]) for r in stalled) + " of "
               + f"{config['n']}): near a positive semidefinite stress, the sign of an equality SDP without a "
               "strictly feasible point, which would stall the interior point and Gauss–Newton alike; deciding "
               "the graph needs that face found exactly (facial reduction), not a longer run."
               if stalled else "")))


EXPERIMENTS = (
    Experiment("table3_2_reasons", "Table 3.2 — the reason tests: inequality relaxation (swiss roll), r and k "
               "(digits)", table3_2_reasons,
               full={"n_swiss": 500, "k": 5, "l": 15, "cpu_time_limit": 900.0, "n_digits": 1797, "rs": [3, 5],
                     "k_isomap": [5, 15], "seed": 0},
               quick={"n_swiss": 60, "k": 5, "l": 10, "cpu_time_limit": 5.0, "n_digits": 100, "rs": [3, 5],
                      "k_isomap": [5, 15], "seed": 0}),
    Experiment("table3_2_reasons_data", "Table 3.2 — the reason test: the data set (MNIST 20×20 for the 8×8 digits)",
               table3_2_reasons_data,
               full={"n": 500, "k": 5, "l": 15, "rs": [3, 5], "k_isomap": [5, 15], "seed": 0},
               quick={"n": 100, "k": 5, "l": 10, "rs": [3, 5], "k_isomap": [5, 15], "seed": 0}),
    Experiment("table3_2_reasons_variant", "Table 3.2 — the reason test: the equality SDP, measure by measure "
               "(digits and MNIST)", table3_2_reasons_variant,
               full={"sets": ["digits", "mnist"], "n": 500, "k": 5, "l": 15, "r": 3, "k_isomap": 15, "seed": 0},
               quick={"sets": ["digits", "mnist"], "n": 60, "k": 5, "l": 10, "r": 3, "k_isomap": 15, "seed": 0}),
    Experiment("table3_2_reasons_manifold", "Table 3.2 — the reason test: smooth image manifolds of two "
               "parameters against the digits", table3_2_reasons_manifold,
               full={"manifolds": list(MANIFOLDS), "n": 400, "k": 5, "l": 15, "k_isomap": 15, "seed": 0},
               quick={"manifolds": list(MANIFOLDS), "n": 60, "k": 5, "l": 10, "k_isomap": 15, "seed": 0}),
    Experiment("table3_2_reasons_manifold_equality", "Table 3.2 — the reason test: the smooth image manifolds "
               "with the equality SDP", table3_2_reasons_manifold_equality,
               full={"manifolds": list(MANIFOLDS), "n": 400, "k": 5, "l": 15, "k_isomap": 15, "seed": 0},
               quick={"manifolds": list(MANIFOLDS), "n": 60, "k": 5, "l": 10, "k_isomap": 15, "seed": 0}),
    Experiment("table3_2_reasons_seeds", "Table 3.2 — the reason test: the digits disagreement against the "
               "sampling noise (seeded samples)", table3_2_reasons_seeds,
               full={"sets": ["digits", "mnist"], "n": 300, "k": 5, "l": 15, "r": 3, "variant": "equality",
                     "k_isomap": [15, 5], "seeds": [0, 1, 2, 3, 4, 5, 6, 7]},
               quick={"sets": ["digits"], "n": 60, "k": 5, "l": 10, "r": 3, "variant": "equality",
                      "k_isomap": [15, 5], "seeds": [0, 1]}),
    Experiment("fig3_15_reasons", "Fig. 3.15 — the reason test: the comb's geometry and the solver", fig3_15_reasons,
               full={"n": 300, "teeth": [4, 6, 8, 10, 12], "k_mvu": 3, "k_isomap": 5, "cpu_time_limit": 60.0,
                     "seed": 0},
               quick={"n": 60, "teeth": [3, 4], "k_mvu": 3, "k_isomap": 5, "cpu_time_limit": 3.0, "seed": 0},
               premise=fig3_15_premise),
    Experiment("fig3_15_reasons_odd", "Fig. 3.15 — the reason test: odd numbers of teeth", fig3_15_reasons_odd,
               full={"n": 300, "teeth": [7, 9, 11], "k_mvu": 3, "k_isomap": 5, "max_iter": 100, "seed": 0},
               quick={"n": 60, "teeth": [3], "k_mvu": 3, "k_isomap": 5, "max_iter": 30, "seed": 0}),
    Experiment("fig3_28_reasons", "Fig. 3.14 and 3.28 — the reason test: angle edges and the thesis' roll in "
               "locking up", fig3_28_reasons,
               full={"n": 250, "height": 8.0, "ks": [4, 6, 8], "thesis_n": 500, "thesis_ks": [6, 7, 8],
                     "thesis_angles": False, "max_iter": 100, "seed": 0},
               quick={"n": 60, "height": 8.0, "ks": [6], "thesis_n": 80, "thesis_ks": [7], "thesis_angles": False,
                      "max_iter": 40, "seed": 0}),
    Experiment("fig3_28_reasons_polish", "Fig. 3.28 — the reason test: the thesis' roll at k = 7 and 8 decided by "
               "a feasible point", fig3_28_reasons_polish,
               full={"n": 500, "height": 21.0, "ks": [7, 8], "max_iter": 100, "dims": 10, "steps": 60,
                     "tol": 1e-9, "seed": 0},
               quick={"n": 80, "height": 21.0, "ks": [7], "max_iter": 40, "dims": 6, "steps": 20, "tol": 1e-9,
                      "seed": 0}),
    Experiment("fig3_28_reasons_mix", "Fig. 3.28 — the reason test: the thesis' roll at k = 7 polished from "
               "mixtures with the input", fig3_28_reasons_mix,
               full={"n": 500, "height": 21.0, "k": 7, "max_iter": 100, "dims": 10, "alphas": [0.1, 0.2, 0.3],
                     "steps": 200, "tol": 1e-9, "seed": 0},
               quick={"n": 80, "height": 21.0, "k": 7, "max_iter": 40, "dims": 6, "alphas": [0.2], "steps": 20,
                      "tol": 1e-9, "seed": 0}),
    Experiment("fig3_15_reasons_graph", "Fig. 3.15 — the reason test: the distance-only graph", fig3_15_reasons_graph,
               full={"n": 300, "teeth": [8, 9, 10], "k_mvu": 3, "k_isomap": 5, "max_iter": 100, "seed": 0},
               quick={"n": 60, "teeth": [3], "k_mvu": 3, "k_isomap": 5, "max_iter": 30, "seed": 0}),
    Experiment("fig3_24_25_reasons", "Fig. 3.24–3.25 — the reason test: the ratio above 1 against sampling noise",
               fig3_24_25_reasons, full={"n": 200, "k": 5, "l": 10, "r": 10, "seeds": [0, 1, 2, 3, 4]},
               quick={"n": 40, "k": 5, "l": 5, "r": 4, "seeds": [0, 1]}),
    Experiment("fig3_24_25_reasons_angles", "Fig. 3.24–3.25 — the reason test: the thesis' graph with angle edges",
               fig3_24_25_reasons_angles, full={"n": 200, "k": 5, "l": 10, "r": 10, "seeds": [0, 1, 2]},
               quick={"n": 40, "k": 5, "l": 5, "r": 4, "seeds": [0]}),
    Experiment("fig3_24_25_reasons_size", "Fig. 3.24–3.25 — the reason test: the thesis' n = 500 and l = 15",
               fig3_24_25_reasons_size, full={"n": 500, "k": 5, "ls": [10, 15], "r": 10, "seeds": [0, 1, 2]},
               quick={"n": 40, "k": 5, "ls": [5, 8], "r": 4, "seeds": [0]}),
)
