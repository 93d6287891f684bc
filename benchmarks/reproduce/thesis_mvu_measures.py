"""Table 3.2's digits disagreement decided on the thesis' own per-measure criterion (Weinberger, ch. 3).

The thesis ranks the embeddings of Table 3.2 measure by measure: exact MVU "has the highest
average ranking according to local trust and local intersection" and is outperformed by Isomap
in local continuity. Our earlier reason tests (:mod:`reproduce.thesis_mvu_reasons`) compared
MVU with Isomap by the harmonic mean of the three measures, a score the thesis does not use.
:func:`table3_2_reasons_measures` asks, on fresh seeded samples, whether the thesis' per-measure
criterion holds on our data; its rule is fixed in its docstring's departures before the run.
:func:`table3_2_reasons_measures_larger` asks it again by the same rule on a larger sample of
fresh seeds, its size chosen before the run by :func:`interval_power`.

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


def interval_power(sd: float, effect: float, samples: int, level: float = LEVEL) -> float:
    """The probability that a ``level`` t-interval of ``samples`` differences excludes 0 on ``effect``'s side.

    Parameters
    ----------
    sd : float
        The standard deviation of the per-seed differences (assumed normal).
    effect : float
        Their true mean; nonzero.
    samples : int
        S, the number of seeds (S − 1 degrees of freedom).
    level : float
        The interval's two-sided level (:data:`LEVEL` supports, :data:`REFUTE_LEVEL` refutes).

    Returns
    -------
    float
        The power of the rule of :func:`measures_decision` on one measure: the interval's near
        end, mean ± t·s/√S, lies beyond 0 exactly when the t statistic |mean|·√S/s exceeds
        t_{(1 + level)/2, S − 1} with the mean on ``effect``'s side, and that statistic is
        noncentral t with S − 1 degrees of freedom and noncentrality |effect|·√S/sd [3].

    References
    ----------
    .. [3] J. Cohen, "Statistical power analysis for the behavioral sciences", 2nd ed., Lawrence
       Erlbaum, 1988, ch. 2 (the power of the t test).
    """
    from scipy.stats import nct, t
    df = samples - 1
    return float(nct.sf(t.ppf(0.5 + level / 2.0, df), df, abs(effect) * np.sqrt(samples) / sd))


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
    return _per_measure_test(config, png)


def _per_measure_test(config: dict, png: Path) -> Outcome:
    """The run, figure and decision of the per-measure test, shared by the experiments of this module."""
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


def table3_2_reasons_measures_larger(config: dict, png: Path) -> Outcome:
    """Table 3.2 — the per-measure reason test again, on a larger pre-registered sample of fresh seeds.

    Paper
    -----
    Table 3.2 (Sec. 3.1.9): exact MVU (k = 5) against Isomap (k = 15), l = 15, r = 3. The thesis'
    claim is per measure: MVU "has the highest average ranking according to local trust and local
    intersection" and is outperformed by Isomap in local continuity (averages over its four data
    sets: MVU 0.890 / 0.883 / 0.713, Isomap 0.908 / 0.858 / 0.657 in continuity / trust /
    intersection).

    Departures
    ----------
    - Where we stand: ``table3_2_reasons_measures`` (seeds 8–15, n = 300, every solve certified)
      left the digits *undecided*: MVU − Isomap trust +0.011 [−0.001, +0.022], intersection +0.046
      [+0.025, +0.066] (95 % t-intervals over 8 seeds); MNIST trust −0.006 [−0.017, +0.006],
      intersection −0.005 [−0.018, +0.007]. Those samples, and seeds 0–7 of
      ``table3_2_reasons_seeds`` (digits trust +0.004, intersection +0.033), were read: they size
      this run and are not pooled into it (adding seeds to samples already seen until an interval
      clears 0 would be optional stopping). This run draws the fresh seeds ``seeds`` (16–63): the
      other experiments of this reproduction read seeds 0–15 at most, and the quick run, a check
      of the code at n = 60, draws with seeds 0–1.
    - Hypothesis, fixed before this run and unchanged: (measures) the thesis' criterion holds on
      our data. For each data set of ``sets`` (scikit-learn's 8×8 digits scaled to [0, 1], the
      vendored MNIST 20×20 test images) and each seed, a sample of ``n`` points (the seed's draw
      without replacement; samples overlap, so the inference is over random samples of these data
      sets, not new data), exact MVU (the ``variant`` SDP with the angle edges of (3.8), k = ``k``,
      the interior point) and Isomap (k = ``k_isomap``), r = ``r``, l = ``l``; per measure the
      per-seed difference MVU − Isomap and its t-interval over the certified samples.
    - Sample size, fixed before this run: S = 48 seeds per data set. With the earlier runs'
      spread (standard deviation of the per-seed difference over seeds 8–15: digits trust
      0.0138, intersection 0.0243; MNIST trust 0.0134) and normal differences, the 95 % trust interval lies wholly above
      0 with probability 0.96 if the true digits difference is +0.0075 (the mean of the two earlier
      estimates), 1.00 at +0.011 and 0.50 at +0.004 (:func:`interval_power`); the intersection
      interval at +0.033 with probability 1.00. A trust advantage below about 0.004 is beyond
      this sample: it would most likely end *undecided*. On MNIST a true trust difference of
      −0.006 is refuted (97.5 % interval) with probability 0.78. The budget: one seed of both
      data sets costs about 12 CPU seconds (seed 0, already read, measured before this run:
      digits 4.8 s, MNIST 7.3 s, 45 s of wall time at load 3–5 on the shared two-core machine),
      so 48 seeds take about 10 CPU minutes and 40 minutes of wall time, what the session's
      remaining time allows; more seeds would only raise the power at effects below +0.0075.
    - Rule and verdict: those of ``table3_2_reasons_measures``, decided by the same code
      (:func:`measures_decision`, :func:`measures_verdict`). Per data set, on trust and
      intersection: *supported* if both 95 % intervals lie wholly above 0 (an intersection–union
      test [2], uncorrected); *refuted* if the 97.5 % interval of either lies wholly below 0
      (Bonferroni over the two); *undecided* otherwise, or if a solve is not ``optimal`` (its
      seeds listed, never decided on). Continuity and the harmonic mean are reported for the
      record. *Reproduced in trend* if the digits are *supported* and MNIST is not *refuted*;
      *differs* otherwise.
    """
    return _per_measure_test(config, png)


EXPERIMENTS = (
    Experiment("table3_2_reasons_measures", "Table 3.2 — the reason test: the thesis' per-measure criterion "
               "(trust and intersection) on fresh seeds", table3_2_reasons_measures,
               full={"sets": ["digits", "mnist"], "n": 300, "k": 5, "l": 15, "r": 3, "variant": "equality",
                     "k_isomap": 15, "seeds": [8, 9, 10, 11, 12, 13, 14, 15]},
               quick={"sets": ["digits", "mnist"], "n": 60, "k": 5, "l": 10, "r": 3, "variant": "equality",
                      "k_isomap": 15, "seeds": [0, 1, 2]}),
    Experiment("table3_2_reasons_measures_larger", "Table 3.2 — the reason test: the thesis' per-measure criterion "
               "on a larger pre-registered sample (48 fresh seeds)", table3_2_reasons_measures_larger,
               full={"sets": ["digits", "mnist"], "n": 300, "k": 5, "l": 15, "r": 3, "variant": "equality",
                     "k_isomap": 15, "seeds": list(range(16, 64))},
               quick={"sets": ["digits", "mnist"], "n": 60, "k": 5, "l": 10, "r": 3, "variant": "equality",
                      "k_isomap": 15, "seeds": [0, 1]}),
)
