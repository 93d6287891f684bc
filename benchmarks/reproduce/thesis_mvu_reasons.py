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

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from mvu import roll_arc_length  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.manifold import Isomap  # noqa: E402

from sdpembed.datasets import swiss_roll  # noqa: E402

from .common import Experiment, Outcome  # noqa: E402
from .numax import _md_table, _save  # noqa: E402
from .thesis_mvu_kernel import PUBLISHED_TABLE3_2  # noqa: E402


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
      equality solve has a ``time_limit``; its status is reported and an uncertified iterate is
      compared as such, never called optimal.
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
                                    time_limit=config["time_limit"] if variant == "equality" else None)
        quality[variant] = base._quality(X, runs[variant]["Y"], l)
        print(f"  swiss roll {variant}: {runs[variant]['status']}, {_fmt(quality[variant])}, shortened "
              f"{runs[variant]['shortened']:.1%}", flush=True)
    ineq, eq = runs["inequality"], runs["equality"]
    lam2 = {v: float(runs[v]["spectrum"][1]) for v in runs}
    higher = all(quality["equality"][m] > quality["inequality"][m] for m in ("continuity", "trust", "intersection"))
    nearer = abs(lam2["equality"] - iso_spec[1]) < abs(lam2["inequality"] - iso_spec[1])
    roll_supported = ineq["shortened"] > 0.10 and higher and nearer

    digits = load_digits().data[:config["n_digits"]] / 16.0
    rs = config["rs"]
    exact = base._exact(digits, k, "inequality", r=max(rs))
    table = []
    for r in rs:
        table.append({"method": "MVU (exact)", "k": k, "r": r, **base._quality(digits, exact["Y"][:, :r], l)})
        for k_iso in config["k_isomap"]:
            Y = Isomap(n_neighbors=k_iso, n_components=r).fit_transform(digits)
            table.append({"method": "Isomap", "k": k_iso, "r": r, **base._quality(digits, Y, l)})
    cell = {(row["method"], row["k"], row["r"]): row for row in table}
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
    near_published = eq["status"] == "optimal" and all(
        abs(quality["equality"][m] - p) <= 0.02 for m, p in zip(("continuity", "trust", "intersection"), published,
                                                                 strict=True))
    agreement = (
        f"Swiss roll: {ineq['shortened']:.1%} of the inequality optimum's {ineq['edges']} edges end more than 1 % "
        f"shorter than their input length (equality: {eq['shortened']:.1%}); the equality variant scores "
        f"{_fmt(quality['equality'])} against the inequality's {_fmt(quality['inequality'])}, second eigenvalue "
        f"{lam2['equality']:.3f} against {lam2['inequality']:.3f} (isometric {iso_spec[1]:.3f}; published scores "
        f"{' / '.join(f'{p:.3f}' for p in published)}). The relaxation hypothesis is "
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
              "digits_solve": _solve_summary(exact), "digits": table,
              "supported": {"relaxation": roll_supported, "output_dimension": r_supported,
                            "neighbourhood": k_supported}},
        verdict="reproduced in trend" if roll_supported and near_published else "differs",
        agreement=agreement)


EXPERIMENTS = (
    Experiment("table3_2_reasons", "Table 3.2 — the reason tests: inequality relaxation (swiss roll), r and k "
               "(digits)", table3_2_reasons,
               full={"n_swiss": 500, "k": 5, "l": 15, "time_limit": 900.0, "n_digits": 1797, "rs": [3, 5],
                     "k_isomap": [5, 15], "seed": 0},
               quick={"n_swiss": 60, "k": 5, "l": 10, "time_limit": 20.0, "n_digits": 100, "rs": [3, 5],
                      "k_isomap": [5, 15], "seed": 0}),
)
