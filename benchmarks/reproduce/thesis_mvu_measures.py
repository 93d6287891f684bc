"""Table 3.2's digits disagreement decided on the thesis' own per-measure criterion (Weinberger, ch. 3).

The thesis ranks the embeddings of Table 3.2 measure by measure: exact MVU "has the highest
average ranking according to local trust and local intersection" and is outperformed by Isomap
in local continuity. Our earlier reason tests (:mod:`reproduce.thesis_mvu_reasons`) compared
MVU with Isomap by the harmonic mean of the three measures, a score the thesis does not use.
:func:`table3_2_reasons_measures` asks, on fresh seeded samples, whether the thesis' per-measure
criterion holds on our data; its rule is fixed in its docstring's departures before the run.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Table 3.2 (Sec. 3.1.9), local continuity (3.27), local trust (3.28),
   neighbourhood intersection (3.29), the equality constraints (3.8).
.. [2] R. L. Berger, "Multiparameter hypothesis testing and acceptance sampling", Technometrics
   24(4), 295–300, 1982 (the intersection–union test).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .common import Experiment, Outcome  # noqa: E402
from .numax import _md_table, _save  # noqa: E402
from .thesis_mvu_kernel import PUBLISHED_TABLE3_2  # noqa: E402
from .thesis_mvu_reasons import PUBLISHED_FACES, _base, _fmt, _solve_summary, seeded_mvu_and_isomap, t_interval  # noqa: E402

#: The measures the thesis has MVU best in on average (decided on), and the one reported for the record.
DECIDED = ("trust", "intersection")
MEASURES = ("continuity", *DECIDED)
#: The level of each interval that can support (an intersection–union test needs no correction) and the
#: Bonferroni-corrected level of each interval that can refute (a union over the decided measures).
LEVEL = 0.95
REFUTE_LEVEL = 1.0 - (1.0 - LEVEL) / len(DECIDED)


def measures_decision(differences: dict[str, list[float]], certified: bool) -> dict:
    """The rule of :func:`table3_2_reasons_measures` for one data set.

    Parameters
    ----------
    differences : dict
        Per measure, the per-sample differences MVU − Isomap over the certified samples only.
    certified : bool
        Whether every solve of the data set is ``optimal``.

    Returns
    -------
    dict
        ``intervals`` (every measure's :data:`LEVEL` t-interval), ``refute_intervals`` (the
        decided measures' :data:`REFUTE_LEVEL` t-intervals) and ``decision``: *supported* if
        every decided measure's ``LEVEL`` interval lies wholly above 0; *refuted* if a decided
        measure's ``REFUTE_LEVEL`` interval lies wholly below 0; *undecided* otherwise, or when
        a solve is not certified or fewer than two samples are.
    """
    intervals = {m: t_interval(differences[m], LEVEL) for m in differences}
    refute = {m: t_interval(differences[m], REFUTE_LEVEL) for m in DECIDED}
    count = min(intervals[m]["count"] for m in DECIDED)
    if not certified:
        decision = "undecided (a solve is not a certified optimum)"
    elif count < 2:
        decision = "undecided (fewer than two samples)"
    elif all(intervals[m]["low"] > 0.0 for m in DECIDED):
        decision = "supported"
    elif any(refute[m]["high"] < 0.0 for m in DECIDED):
        decision = "refuted"
    else:
        open_ = [m for m in DECIDED if intervals[m]["low"] <= 0.0]
        decision = (f"undecided ({' and '.join(open_)} interval{'s' if len(open_) > 1 else ''} not wholly above 0, "
                    "none wholly below)")
    return {"intervals": intervals, "refute_intervals": refute, "decision": decision}


def measures_verdict(decisions: dict[str, str], primary: str = "digits") -> str:
    """*reproduced in trend* if the ``primary`` data set is supported and no other is refuted, else *differs*."""
    ok = decisions[primary] == "supported" and all(d != "refuted" for name, d in decisions.items()
                                                   if name != primary)
    return "reproduced in trend" if ok else "differs"


def _interval_text(iv: dict) -> str:
    return f"{iv['mean']:+.3f} [{iv['low']:+.3f}, {iv['high']:+.3f}]"


def table3_2_reasons_measures(config: dict, png: Path) -> Outcome:
    """Table 3.2 — the reason test of the digits disagreement: the thesis' per-measure criterion, fresh seeds.

    Paper
    -----
    Table 3.2 (Sec. 3.1.9): exact MVU (k = 5) against Isomap (k = 15), l = 15, r = 3 on the face
    sets. The thesis' claim is per measure: MVU "has the highest average ranking according to
    local trust and local intersection", while "according to local continuity it is outperformed
    by Isomap" (averages over its four data sets: MVU 0.890 / 0.883 / 0.713, Isomap 0.908 /
    0.858 / 0.657 in continuity / trust / intersection). It has no combined score.

    Departures
    ----------
    - Where we stand: on scikit-learn's 8×8 digits our exact MVU scores below Isomap (k = 15) in
      the harmonic mean of the three measures, our score, not the thesis'.
      ``table3_2_reasons_seeds`` (seeds 0–7, n = 300, equality SDP, all certified) put the
      digits difference at −0.020 [−0.037, −0.003]. Its per-measure means (continuity −0.137,
      trust +0.004, intersection +0.033) were read after that run, so they suggest this
      hypothesis and cannot decide it: this run uses the fresh seeds ``seeds`` (8–15; the
      earlier Table 3.2 tests used seeds 0–7, seed 0 at n = 400 and 500 too; the quick run, a
      check of the code at n = 60, draws with seeds 0–2, so the fresh seeds are read by the full
      run alone).
    - Hypothesis, fixed before this run: (measures) the thesis' criterion holds on our data —
      the disagreement is our harmonic-mean criterion, not MVU's ranking. For each data set of
      ``sets`` (scikit-learn's 8×8 digits scaled to [0, 1], the vendored MNIST 20×20 test images)
      and each seed, a sample of ``n`` points (the seed's draw without replacement; samples of
      different seeds overlap, so the inference is over random samples of these data sets, not
      new data), exact MVU (the ``variant`` SDP with the angle edges of (3.8), k = ``k``, the
      interior point) and Isomap (k = ``k_isomap``), r = ``r``, l = ``l``; per measure the
      per-seed difference MVU − Isomap and its t-interval (S − 1 degrees of freedom) over the
      certified samples.
    - Rule per data set, decided on trust and intersection: *supported* if both 95 % intervals
      lie wholly above 0; *refuted* if the 97.5 % interval of either lies wholly below 0 (MVU
      reliably behind Isomap in a measure the thesis has it best in); *undecided* otherwise (an
      interval contains 0 and neither lies below it — our samples cannot tell the order). A data
      set with a solve that is not ``optimal`` is *undecided*: its uncertified seeds are listed
      and its intervals over the certified samples alone are reported, never decided on.
      Continuity's 95 % interval is reported for the record (the thesis has MVU below Isomap
      there) and decides nothing; so is the harmonic mean's.
    - Multiple comparisons (two measures × two data sets): support needs both measures — an
      intersection–union test [2], wrong with probability at most the 5 % of each interval, so
      its intervals are not corrected; refutation needs either — a union, so its intervals are
      Bonferroni-corrected over the two measures (97.5 % each), a wrong refutation at most 5 %
      per data set. The data sets are not pooled: the hypothesis is decided on the digits (the
      disagreement's data set); MNIST is a replication decided by the same rule that enters
      only the verdict, which it can only make harder to reach.
    - Verdict: *reproduced in trend* if the digits are *supported* and MNIST is not *refuted*
      (the thesis' ordering in the measures it claims, not its values); *differs* otherwise.
    """
    base = _base()
    l, k, r, variant, k_iso = config["l"], config["k"], config["r"], config["variant"], config["k_isomap"]
    everything = (*MEASURES, "harmonic")
    raw = {}
    for name in config["sets"]:
        samples = []
        for seed in config["seeds"]:
            run, quality = seeded_mvu_and_isomap(name, config["n"], seed, k, variant, r, l, {"Isomap": k_iso})
            difference = {m: quality["MVU"][m] - quality["Isomap"][m] for m in everything}
            samples.append({"seed": seed, "solve": _solve_summary(run), "quality": quality, "difference": difference})
            print(f"  {name} seed {seed}: {base._solve_text(run)}, MVU {_fmt(quality['MVU'])}, "
                  f"Isomap {_fmt(quality['Isomap'])}", flush=True)
        certified = [s for s in samples if s["solve"]["status"] == "optimal"]
        rule = measures_decision({m: [s["difference"][m] for s in certified] for m in everything},
                                 len(certified) == len(samples))
        raw[name] = {"samples": samples, **rule, "certified": len(certified) == len(samples),
                     "uncertified_seeds": [s["seed"] for s in samples if s["solve"]["status"] != "optimal"]}
    decisions = {name: raw[name]["decision"] for name in raw}
    primary = "digits" if "digits" in raw else next(iter(raw))
    verdict = measures_verdict(decisions, primary)

    fig, axes = plt.subplots(1, len(raw), figsize=(6 * len(raw), 3.8), squeeze=False, sharey=True)
    for ax, name in zip(axes[0], raw, strict=True):
        ok = np.array([s["solve"]["status"] == "optimal" for s in raw[name]["samples"]])
        for x, m in enumerate(everything):
            d = np.array([s["difference"][m] for s in raw[name]["samples"]])
            jitter = np.linspace(-0.2, 0.2, len(d))
            ax.plot(x + jitter[ok], d[ok], "o", color="0.6", ms=3)
            ax.plot(x + jitter[~ok], d[~ok], "x", color="0.6", ms=4)
            iv = raw[name]["intervals"][m]
            if iv["count"] >= 2:
                ax.errorbar(x + 0.3, iv["mean"], yerr=[[iv["mean"] - iv["low"]], [iv["high"] - iv["mean"]]],
                            fmt="s", color="C0" if m in DECIDED else "C7", capsize=4,
                            label=f"{100 * LEVEL:g} % interval" if x == 1 else None)
            if m in DECIDED and raw[name]["refute_intervals"][m]["count"] >= 2:
                rv = raw[name]["refute_intervals"][m]
                ax.plot([x + 0.4] * 2, [rv["low"], rv["high"]], color="C3", lw=1.2,
                        label=f"{100 * REFUTE_LEVEL:g} % (refutes)" if x == 1 else None)
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_xticks(np.arange(len(everything)), [f"{m}\n(decided)" if m in DECIDED else m for m in everything])
        ax.set(title=f"{name}: {raw[name]['decision'].split(' (')[0]} (n = {config['n']}, r = {r}, l = {l})",
               ylabel=f"MVU − Isomap (k = {k_iso}) per seed")
        ax.legend(fontsize=7)
    _save(fig, png)

    rows = [[name, s["seed"], base._solve_text(s["solve"]),
             *(f"{s['quality']['MVU'][m]:.3f} / {s['quality']['Isomap'][m]:.3f}" for m in everything)]
            for name in raw for s in raw[name]["samples"]]
    summary = [[name, *(_interval_text(raw[name]["intervals"][m]) for m in everything),
                ", ".join(f"{m} {_interval_text(raw[name]['refute_intervals'][m])}" for m in DECIDED),
                raw[name]["decision"]] for name in raw]
    faces = "; ".join(f"{face} MVU {' / '.join(f'{v:.3f}' for v in cols['MVU'])}, Isomap "
                      f"{' / '.join(f'{v:.3f}' for v in cols['Isomap'])}" for face, cols in PUBLISHED_FACES.items())
    return Outcome(
        published=("Table 3.2: MVU best on average over the four data sets in trust and intersection, below "
                   "Isomap in continuity (average continuity / trust / intersection: MVU "
                   f"{' / '.join(f'{v:.3f}' for v in PUBLISHED_TABLE3_2['MVU']['average'])}, Isomap "
                   f"{' / '.join(f'{v:.3f}' for v in PUBLISHED_TABLE3_2['Isomap']['average'])}); the face columns "
                   f"(r = 3) show the same pattern: {faces}."),
        ours=(_md_table(["data", "seed", f"MVU ({variant}) solve",
                         *(f"{m} (MVU / Isomap)" for m in everything)], rows)
              + f"\n\nMVU − Isomap (k = {k_iso}) per measure, mean and {100 * LEVEL:g} % t-interval over the certified "
              "samples, the decided measures' Bonferroni-corrected intervals, and the decision:\n\n"
              + _md_table(["data", *everything, f"{100 * REFUTE_LEVEL:g} % (refutes)", "decision"], summary)
              + f"\n\nn = {config['n']} per sample, seeds {config['seeds']}, MVU k = {k} (angle edges, {variant} "
              f"SDP, interior point), Isomap k = {k_iso}, r = {r}, l = {l}."),
        rows={"sets": raw, "decisions": decisions, "primary": primary},
        verdict=verdict,
        agreement=("; ".join(
            f"{name}: MVU − Isomap trust {_interval_text(raw[name]['intervals']['trust'])}, intersection "
            f"{_interval_text(raw[name]['intervals']['intersection'])} (continuity, for the record, "
            f"{_interval_text(raw[name]['intervals']['continuity'])})"
            + (f", not optimal at seeds {raw[name]['uncertified_seeds']}" if raw[name]["uncertified_seeds"] else "")
            + f" — {raw[name]['decision']}" for name in raw)
            + f". The per-measure hypothesis (decided on {primary}) is {decisions[primary]}"
            + (": on our data the thesis' criterion holds, and the disagreement is our harmonic-mean criterion, "
               "not MVU's ranking." if decisions[primary] == "supported" else
               ": the thesis' criterion is not shown to hold on our data." if decisions[primary].startswith(
                   "undecided") else ": MVU is reliably behind Isomap in a measure the thesis has it best in.")),
    )


EXPERIMENTS = (
    Experiment("table3_2_reasons_measures", "Table 3.2 — the reason test: the thesis' per-measure criterion "
               "(trust and intersection) on fresh seeds", table3_2_reasons_measures,
               full={"sets": ["digits", "mnist"], "n": 300, "k": 5, "l": 15, "r": 3, "variant": "equality",
                     "k_isomap": 15, "seeds": [8, 9, 10, 11, 12, 13, 14, 15]},
               quick={"sets": ["digits", "mnist"], "n": 60, "k": 5, "l": 10, "r": 3, "variant": "equality",
                      "k_isomap": 15, "seeds": [0, 1, 2]}),
)
