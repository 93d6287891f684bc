"""Table 3.2's swiss-roll column: the reading of local trust (3.28) and the equality SDP (Weinberger, ch. 3).

On the thesis' own swiss roll our continuity (3.27) and intersection (3.29) agree with the
published Table 3.2 where the method is deterministic given the data (PCA 0.836 / 0.403 against
0.836 / 0.397), but trust (3.28) does not (0.515 against 0.389). :func:`table3_2_reasons_trust`
asks whether the thesis computed trust by another reading of (3.28), calibrating the reading on
PCA's cell alone and deciding it on the other rows' published trust; :func:`table3_2_reasons_roll_equality`
asks whether the published MVU row (1.000 / 0.990 / 0.990) is the equality SDP's, solved by facial
reduction. Both rules are fixed in the docstrings' departures before the runs.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Table 3.2 (Sec. 3.1.9), local continuity (3.27), local trust (3.28),
   neighbourhood intersection (3.29), the equality constraints (3.8), the inequality SDP of
   Sec. 3.1.6.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from mvu import _variational_embedding, roll_arc_length  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.manifold import Isomap, LocallyLinearEmbedding, SpectralEmbedding  # noqa: E402

from sdpembed.datasets import swiss_roll  # noqa: E402
from sdpembed.graphs import knn_indices  # noqa: E402
from sdpembed.validation.embedding_quality import local_continuity, local_trust, neighborhood_intersection  # noqa: E402

from .common import Experiment, Outcome, gap_text  # noqa: E402
from .numax import _md_table, _save  # noqa: E402
from .thesis_mvu_kernel import PUBLISHED_TABLE3_2  # noqa: E402

#: The published swiss-roll cells are printed to three digits: a value v stands for [v − ROUNDING, v + ROUNDING].
ROUNDING = 0.0005
#: The calibration cell: PCA is deterministic given the data.
CALIBRATION = "PCA"


def _cos2(a: np.ndarray, b: np.ndarray, axis=None) -> np.ndarray:
    """(aᵀb)²/(‖a‖²‖b‖²) over ``axis`` (all entries when None): 1 − min_s ‖s a − b‖²/‖b‖²."""
    return np.sum(a * b, axis=axis) ** 2 / (np.sum(a * a, axis=axis) * np.sum(b * b, axis=axis))


#: Readings of (3.28), each from the input distances ``dx`` and output distances ``dy`` (n × l, row i over
#: j ∈ 𝒩(y_i), nearest first) and the scale ``s_c`` that minimises (3.27) (outputs onto inputs).
READINGS: dict[str, Callable[[np.ndarray, np.ndarray, float], float]] = {
    # (3.28) as printed: s scales the inputs, the minimum in closed form (our local_trust)
    "printed": lambda dx, dy, s_c: float(_cos2(dx, dy)),
    # no minimisation: s = 1
    "s = 1": lambda dx, dy, s_c: float(1.0 - np.sum((dx - dy) ** 2) / np.sum(dy ** 2)),
    # (3.27)'s scale reused: the inputs scaled by 1/s_c, not minimised again
    "continuity's s": lambda dx, dy, s_c: float(1.0 - np.sum((dx / s_c - dy) ** 2) / np.sum(dy ** 2)),
    # (3.27) with the sets exchanged: s scales the outputs, the outputs' distances in the denominator
    "s on the outputs": lambda dx, dy, s_c: float(1.0 - np.sum(dx ** 2) / np.sum(dy ** 2) * (1.0 - _cos2(dx, dy))),
    # one scale per point, the ratios averaged over the points
    "per point": lambda dx, dy, s_c: float(np.mean(_cos2(dx, dy, axis=1))),
    # squared distances in place of distances
    "squared distances": lambda dx, dy, s_c: float(_cos2(dx ** 2, dy ** 2)),
    # each point counted as its own nearest neighbour: l − 1 others (a sort that keeps the point itself)
    "point in its set": lambda dx, dy, s_c: float(_cos2(dx[:, :-1], dy[:, :-1])),
}


def trust_readings(X: np.ndarray, Y: np.ndarray, l: int) -> dict[str, float]:
    """Every reading of :data:`READINGS` of local trust (3.28) of outputs ``Y`` of inputs ``X`` at ``l``."""
    iy, _ = knn_indices(Y, l)
    dx = np.linalg.norm(X[:, None, :] - X[iy], axis=2)
    dy = np.linalg.norm(Y[:, None, :] - Y[iy], axis=2)
    ix, _ = knn_indices(X, l)
    cx = np.linalg.norm(X[:, None, :] - X[ix], axis=2).ravel()
    cy = np.linalg.norm(Y[:, None, :] - Y[ix], axis=2).ravel()
    s_c = float(cx @ cy / (cy @ cy))
    return {name: reading(dx, dy, s_c) for name, reading in READINGS.items()}


def _roll_methods(k: int, k_mvu: int, seed: int) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """The swiss-roll rows of Table 3.2 we can run, r = 2 (the exact MVU row is the next experiment's)."""
    return {
        "PCA": lambda X: PCA(2).fit_transform(X),
        "Isomap": lambda X: Isomap(n_neighbors=k, n_components=2).fit_transform(X),
        "hLLE": lambda X: LocallyLinearEmbedding(n_neighbors=k, n_components=2, method="hessian",
                                                 eigen_solver="dense", random_state=seed).fit_transform(X),
        "Lap": lambda X: SpectralEmbedding(n_components=2, n_neighbors=k, random_state=seed).fit_transform(X),
        "LLE": lambda X: LocallyLinearEmbedding(n_neighbors=k, n_components=2, random_state=seed).fit_transform(X),
        "var. MVU (CG) (Lap)": lambda X: _variational_embedding(X, 2, k_mvu)[0],
        "var. MVU (Lap)": lambda X: _variational_embedding(X, 2, k_mvu, refine=False)[0],
    }


def _span(values: list[float]) -> dict:
    v = np.asarray(values, dtype=float)
    return {"min": float(v.min()), "median": float(np.median(v)), "max": float(v.max())}


def _contains(span: dict, value: float, slack: float = ROUNDING) -> bool:
    return span["min"] - slack <= value <= span["max"] + slack


def calibrate(pca_spans: dict[str, dict], published: float) -> str | None:
    """The reading chosen on the calibration cell: among the readings whose seed range holds the published
    value (to its rounding), the one whose median is nearest to it; None when no reading's range holds it."""
    holding = [name for name, span in pca_spans.items() if _contains(span, published)]
    return min(holding, key=lambda name: abs(pca_spans[name]["median"] - published)) if holding else None


def held_out_decision(spans: dict[str, dict], chosen: str | None, tolerance: float) -> dict:
    """The rule of :func:`table3_2_reasons_trust` on the held-out rows.

    Parameters
    ----------
    spans : dict
        Per held-out row, ``continuity`` (its seed span) and ``trust`` (per reading, its seed span).
    chosen : str or None
        The reading chosen by :func:`calibrate`.
    tolerance : float
        A row is *comparable* (decides) when its published continuity lies within its continuity
        span widened by ``tolerance``: our embedding then behaves as the thesis' did where the
        measures agree.

    Returns
    -------
    dict
        ``comparable`` (rows), ``consistent`` (per reading, the comparable rows whose published trust lies in
        that reading's span) and ``decision`` on the measure reason: *refuted at the calibration* (no
        reading holds PCA's cell, or only the printed one), *supported* (a reading other than the
        printed one holds every comparable row and more of them than the printed reading), *refuted*
        otherwise, or *undecided* without a comparable row.
    """
    comparable = [row for row, s in spans.items()
                  if _contains(s["continuity"], PUBLISHED_TABLE3_2[row]["swiss roll"][0], tolerance + ROUNDING)]
    consistent = {name: [row for row in comparable if _contains(spans[row]["trust"][name],
                                                                PUBLISHED_TABLE3_2[row]["swiss roll"][1])]
                  for name in READINGS}
    if chosen is None or chosen == "printed":
        decision = "refuted at the calibration"
    elif not comparable:
        decision = "undecided (no comparable held-out row)"
    elif len(consistent[chosen]) == len(comparable) and len(consistent[chosen]) > len(consistent["printed"]):
        decision = "supported"
    else:
        decision = "refuted"
    return {"comparable": comparable, "consistent": consistent, "decision": decision}


def table3_2_reasons_trust(config: dict, png: Path) -> Outcome:
    """Table 3.2 — the reason test of the swiss-roll trust cells: the reading of (3.28), calibrated on PCA.

    Paper
    -----
    Table 3.2 (Sec. 3.1.9), swiss roll (n = 2,000, r = 2, every method but MVU at k = 15, l = 15),
    continuity / trust / intersection: PCA 0.836 / 0.389 / 0.397, Isomap 0.978 / 0.964 / 0.916,
    hLLE 0.865 / 0.873 / 0.581, Lap 0.659 / 0.282 / 0.274, LLE 0.844 / 0.173 / 0.417, var. MVU
    (CG) (Lap) 0.989 / 0.208 / 0.607, var. MVU (Lap) 0.784 / 0.290 / 0.665. Local trust (3.28):
    T(Y) = 1 − min_s Σ_i Σ_{j ∈ 𝒩(y_i)} (s‖x_i − x_j‖ − ‖y_i − y_j‖)² / Σ_i Σ_{j ∈ 𝒩(y_i)} ‖y_i − y_j‖².

    Departures
    ----------
    - Where we stand (``table3_2``, seed 0, read before this test): our PCA scores 0.836 / 0.515 /
      0.403 — continuity and intersection as published, trust 0.126 above; Lap 0.652 / 0.443 /
      0.284, LLE 0.696 / 0.877 / 0.656, Isomap 0.968 / 0.975 / 0.910. The audit of
      ``embedding_quality`` against the printed (3.27)–(3.29) found no error (neighbour sets
      without the point itself, also among duplicates; trust's in the outputs; the minimum over s
      in closed form, checked against a numerical minimum; ties at the l-th neighbour, arbitrary
      in scikit-learn's search, change the 8×8 digits' Isomap intersection by 4e-5). While this
      test was prepared, PCA's trust was read on seeds 0–4 (the calibration cell, allowed to be
      read) under every reading of :data:`READINGS` but "point in its set": printed 0.515,
      0.514, 0.499, 0.301, 0.298 — PCA's plane depends on the sample, the roll's three variances
      being alike —, the per-point reading 0.76–0.79, squared distances 0.04–0.13, the readings
      without a fresh minimum below −20. No held-out row was read under any reading but the
      printed one, and only at seed 0; this run's quick check (n = 150) read them at n = 150.
    - Hypothesis, fixed before this run: (measure) the thesis computed trust by a reading R of
      (3.28) other than the printed one. The readings (:data:`READINGS`): the printed one (our
      ``local_trust``); s = 1; the continuity's s reused; s on the outputs with the outputs'
      denominator ((3.27) with the sets exchanged); one s per point, averaged; squared distances;
      each point counted among its own l neighbours. Continuity and intersection are ours in all.
    - Calibration, on PCA's cell alone: the roll (noise 0.05, the thesis' generator) at each of
      ``seeds``, n = ``n``; R is the reading whose seed range [min, max] holds the published
      0.389 (± 0.0005, its rounding) with the median nearest to it; none if no range holds it.
    - Held-out rows, the other swiss-roll rows we run (Isomap, hLLE, Lap, LLE at k = ``k``,
      variational MVU with and without CG at k = ``k_mvu``), the same seeds. A row is
      *comparable* when its published continuity lies within our seed range of continuity ± 0.01
      (the method behaves as the thesis' where the measures agree); only comparable rows decide.
      A row is *consistent* with a reading when its published trust lies within that reading's
      seed range (± 0.0005).
    - Rule: *refuted at the calibration* if R is none or the printed reading; *supported* if R is
      another reading, every comparable row is consistent with it and more comparable rows are
      consistent with R than with the printed reading; *refuted* otherwise; *undecided* with no
      comparable row. If supported, the digits comparison of Table 3.2 is to be re-scored under R;
      the rule is not tuned after the held-out rows are seen. For the record (deciding nothing on
      the measure reason): the comparable rows consistent with the printed reading — when all
      are, the published trust cells lie within our roll's sampling spread, the *sample* being
      the reason the seed-0 digits differ.
    - The l = 5 sentence ("the average result improves from 0.799 to 0.938") is not checkable: it
      averages MVU's trust over the four data sets, two of them unavailable, and 0.799 is none of
      the table's printed averages (MVU's trust average is 0.883).
    - The exact MVU row is the next experiment's (``table3_2_reasons_roll_equality``).
    """
    l, k, k_mvu, noise = config["l"], config["k"], config["k_mvu"], config["noise"]
    raw = []
    for seed in config["seeds"]:
        X = swiss_roll(config["n"], noise=noise, random_state=seed)[0]
        for method, embed in _roll_methods(k, k_mvu, seed).items():
            start = time.process_time()
            Y = embed(X)
            raw.append({"seed": seed, "method": method, "continuity": local_continuity(X, Y, l),
                        "intersection": neighborhood_intersection(X, Y, l), "trust": trust_readings(X, Y, l),
                        "cpu_s": time.process_time() - start})
        print(f"  seed {seed} done", flush=True)
    methods = list(dict.fromkeys(r["method"] for r in raw))
    spans = {m: {"continuity": _span([r["continuity"] for r in raw if r["method"] == m]),
                 "intersection": _span([r["intersection"] for r in raw if r["method"] == m]),
                 "trust": {name: _span([r["trust"][name] for r in raw if r["method"] == m]) for name in READINGS}}
             for m in methods}
    chosen = calibrate(spans[CALIBRATION]["trust"], PUBLISHED_TABLE3_2[CALIBRATION]["swiss roll"][1])
    held = {m: spans[m] for m in methods if m != CALIBRATION}
    rule = held_out_decision(held, chosen, config["tolerance"])

    def cell(span: dict) -> str:
        return f"{span['median']:.3f} [{span['min']:.3f}, {span['max']:.3f}]"

    pca = spans[CALIBRATION]["trust"]
    calib_rows = [[name, cell(pca[name]), "yes" if _contains(pca[name], 0.389) else "no"] for name in READINGS]
    rows = [[m, f"{' / '.join(f'{v:.3f}' for v in PUBLISHED_TABLE3_2[m]['swiss roll'])}", cell(spans[m]["continuity"]),
             cell(spans[m]["trust"]["printed"]), cell(spans[m]["trust"][chosen]) if chosen else "—",
             cell(spans[m]["intersection"]),
             "calibration" if m == CALIBRATION else ("yes" if m in rule["comparable"] else "no")] for m in methods]
    record = rule["consistent"]["printed"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    names = list(READINGS)
    for x, name in enumerate(names):
        values = [r["trust"][name] for r in raw if r["method"] == CALIBRATION]
        axes[0].plot([x] * len(values), np.clip(values, -1.0, 1.0), "o", color="C0", ms=4)
    axes[0].axhline(0.389, color="C3", lw=1, label="published PCA trust 0.389")
    axes[0].set_xticks(range(len(names)), names, rotation=30, fontsize=7)
    axes[0].set(title="calibration: PCA trust per reading (clipped to [−1, 1])", ylim=(-1.05, 1.05))
    axes[0].legend(fontsize=7)
    for x, m in enumerate(methods):
        values = [r["trust"]["printed"] for r in raw if r["method"] == m]
        axes[1].plot([x] * len(values), values, "o", color="C0" if m in rule["comparable"] else "0.6", ms=4)
        axes[1].plot(x, PUBLISHED_TABLE3_2[m]["swiss roll"][1], "_", color="C3", ms=16, mew=2)
    axes[1].set_xticks(range(len(methods)), methods, rotation=30, fontsize=7)
    axes[1].set(title="trust (printed reading) per seed; red: published", ylim=(0, 1.05))
    _save(fig, png)
    return Outcome(
        published=_md_table(["method", "swiss roll (continuity / trust / intersection)"],
                            [[m, " / ".join(f"{v:.3f}" for v in PUBLISHED_TABLE3_2[m]["swiss roll"])]
                             for m in methods]),
        ours=("Calibration, PCA's trust under each reading (median [min, max] over the seeds), and whether its range "
              "holds the published 0.389:\n\n" + _md_table(["reading", "PCA trust", "holds 0.389"], calib_rows)
              + f"\n\nChosen reading: {chosen or 'none'}.\n\n"
              + _md_table(["method", "published", "continuity", "trust (printed)", f"trust ({chosen or '—'})",
                           "intersection", "comparable"], rows)
              + f"\n\nn = {config['n']}, seeds {config['seeds']}, k = {k} (variational MVU k = {k_mvu}), l = {l}, "
              f"r = 2; median [min, max] over the seeds."),
        rows={"runs": raw, "spans": spans, "chosen": chosen, **rule},
        verdict="differs",
        agreement=(f"Calibration on PCA's trust: {'the ' + chosen + ' reading' if chosen else 'no reading'} holds the "
                   f"published 0.389 in its seed range (printed: {cell(pca['printed'])}). Comparable held-out rows "
                   f"(published continuity within ours ± {config['tolerance']}): "
                   f"{', '.join(rule['comparable']) or 'none'}; consistent in trust with the printed reading: "
                   f"{', '.join(record) or 'none'}"
                   + (f", with {chosen}: {', '.join(rule['consistent'][chosen]) or 'none'}"
                      if chosen and chosen != "printed" else "")
                   + f". The measure hypothesis is {rule['decision']}"
                   + (": the thesis' trust is not another reading of (3.28) among those tested."
                      if rule["decision"].startswith("refuted") else ".")
                   + (" Every comparable row's published trust lies within our roll's sampling spread under the "
                      "printed reading: the seed-0 trust digits differ by the sample (PCA's plane, the embeddings' "
                      "folds), not by the measure."
                      if rule["comparable"] and len(record) == len(rule["comparable"]) else
                      " Outside our seeds' spread under the printed reading: "
                      + ", ".join(m for m in rule["comparable"] if m not in record) + ".")),
    )


def roll_row_decision(quality: dict | None, published: tuple[float, float, float] = (1.000, 0.990, 0.990),
                      close: float = 0.02, far: float = 0.05) -> str:
    """The rule of :func:`table3_2_reasons_roll_equality` for one graph: *supported* if each measure of the
    certified embedding (``quality``, None when no size certified) is within ``close`` of the published one,
    *refuted* if any lies more than ``far`` below it, *undecided* otherwise."""
    if quality is None:
        return "undecided (no size certified)"
    gaps = [p - quality[m] for p, m in zip(published, ("continuity", "trust", "intersection"), strict=True)]
    if all(abs(g) <= close for g in gaps):
        return "supported"
    return "refuted" if max(gaps) > far else "undecided (within 0.05, not within 0.02)"


def graph_sentence(data: dict) -> str:
    """The finding of one graph of :func:`table3_2_reasons_roll_equality`: the scores of the size decided on
    (the largest ``optimal`` one, not the last run) and the decision."""
    decided = [r for r in data["runs"] if r["n"] == data["decided_n"]]
    if not decided:
        return f"no size certified — {data['decision']}"
    e = decided[0]["equality"]
    return (f"at n = {data['decided_n']} the certified equality SDP scores {e['continuity']:.3f} / {e['trust']:.3f} / "
            f"{e['intersection']:.3f} — {data['decision']}")


def _stored(directory: Path, key: str) -> dict | None:
    path = directory / f"{key}.json"
    return json.loads(path.read_text()) if path.exists() else None


def swiss_row_standing(directory: Path) -> str:
    """Where the reason tests of Table 3.2's swiss-roll MVU row stand, read from their stored records in
    ``directory``: the inequality relaxation (``table3_2_reasons``, checked against the certified equality
    solves of ``table3_2_reasons_roll_equality``), the equality SDP on either graph, and the noise-free roll.

    The relaxation hypothesis needs the equality SDP on the same graph to score higher than the inequality
    optimum in all three measures; ``table3_2_reasons`` decides it at its ``n_swiss`` with whatever its
    equality solve reached, so a certified equality solve on the angle graph at another n is a second test
    of the same condition, and a disagreement between the two is stated with both sizes and statuses.
    """
    names = ("continuity", "trust", "intersection")
    parts = []
    relaxation, equality = _stored(directory, "table3_2_reasons"), _stored(directory, "table3_2_reasons_roll_equality")
    if relaxation is not None:
        eq = relaxation["rows"]["swiss"]["equality"]
        found = "supported" if relaxation["rows"]["supported"]["relaxation"] else "refuted"
        parts.append(f"the inequality relaxation: {found} by `table3_2_reasons` at n = "
                     f"{relaxation['config']['n_swiss']}" + ("" if eq["status"] == "optimal" else
                                                             f", only as an indication (its equality solve ended "
                                                             f"`{eq['status']}`, not a certified optimum)"))
        if equality is not None:
            certified = [r for r in equality["rows"]["angles"]["runs"]
                         if r["equality"]["status"] == "optimal" and r["inequality"]["status"] == "optimal"]
            lower = [r["n"] for r in certified if all(r["equality"][m] < r["inequality"][m] for m in names)]
            higher = [r["n"] for r in certified if all(r["equality"][m] > r["inequality"][m] for m in names)]
            if certified:
                parts[-1] += (f"; with both solves certified on the same angle graph "
                              f"(`table3_2_reasons_roll_equality`) the equality SDP scores higher than the inequality "
                              f"optimum in all three measures at n = {', '.join(map(str, higher)) or 'none'} and lower "
                              f"in all three at n = {', '.join(map(str, lower)) or 'none'} of "
                              f"{', '.join(str(r['n']) for r in certified)}"
                              + (" — refuted where certified" if lower and not higher else ""))
    if equality is not None:
        parts.append("the equality SDP as the published row (`table3_2_reasons_roll_equality`): "
                     + "; ".join(f"{graph}: {graph_sentence(data)}" for graph, data in equality["rows"].items()))
    noise = _stored(directory, "table3_2_reasons_roll_noise")
    if noise is not None:
        parts.append(f"a noise-free roll (`table3_2_reasons_roll_noise`): {noise['rows']['decision']}")
    if not parts:
        return "The swiss-roll row's reason tests have not been run yet."
    return "Swiss-roll row, its reason tests from their records: " + "; ".join(parts) + "."


def table3_2_reasons_roll_equality(config: dict, png: Path) -> Outcome:
    """Table 3.2 — the reason test of the swiss-roll MVU row: the equality SDP, by facial reduction.

    Paper
    -----
    Table 3.2 (Sec. 3.1.9), swiss roll (n = 2,000, r = 2, l = 15): exact MVU at k = 5 scores
    1.000 / 0.990 / 0.990 (continuity / trust / intersection); the text does not say whether the
    SDP had the equalities (3.8) or the inequalities of Sec. 3.1.6.

    Departures
    ----------
    - Where we stand: ``table3_2`` (seed 0, n = 2,000) solves the inequality SDP with the angle
      edges, certified, and scores 0.920 / 0.837 / 0.782. The equality SDP was beyond our interior
      point at this size; facial reduction (:func:`sdpembed.solvers.mvu.facial.solve_mvu_facial`)
      now certifies equality rolls at n = 1,000 (gap tolerance 1e-5). A probe before this test
      (the same roll, n = 1,000, angle edges, default tolerance 1e-6) was read: face of dimension 8,
      ``inaccurate`` at a certified gap of 8.3e-6, 39 s CPU, its 2-D outputs 0.838 / 0.578 / 0.448.
    - Hypothesis, fixed before this run: (variant) the thesis' swiss-roll MVU row is the equality
      SDP's. The roll of ``table3_2`` (the thesis' generator, noise ``noise``, seed ``seed``), k =
      ``k``, linked, on each graph of ``graphs`` — ``angles`` (the kNN edges and the angle edges of
      (3.8), as ``table3_2``) and ``distances`` (the kNN edges alone) —, at each n of ``ns`` in
      turn; the equality SDP by facial reduction at gap tolerance ``gap_tol`` (1e-5, the
      tolerance our exact-MVU targets certify n = 1,000 at), the interior point over the face
      bounded by ``cpu_time_limit`` CPU seconds of the process (not wall-clock seconds, which a loaded
      machine shortens). A graph's larger sizes are not run after a size that does not end
      ``optimal``. For the record, the inequality SDP (the default method) at every n run, on the
      same graph.
    - Rule per graph, on the largest n that ends ``optimal``, its 2-D outputs (3.21) at l = ``l``:
      *supported* if each of continuity, trust and intersection lies within 0.02 of the published
      1.000 / 0.990 / 0.990; *refuted* if any lies more than 0.05 below it; *undecided* otherwise or
      when no size certifies. The hypothesis is supported if a graph is; refuted if every graph is.
      Smaller n than the thesis' 2,000 are a departure of their own: a sample of the same roll
      at half the density.
    - The first full run (``graphs`` angles and distances) was killed by the operating system
      after its angle-graph sizes (n = 1,000 ``optimal``, n = 1,500 ``inaccurate``): the
      distance-only graph's facial-reduction solve at n = 1,000 reached 21.8 GB, the machine's
      memory. The full run was repeated with ``graphs`` = angles alone (the rule unchanged): the
      angle graph refuted, the distance-only graph untested.
    - Facial reduction's final certificate now bounds its memory (1.06 GB on the distance-only
      graph at n = 1,000, where a probe ended ``inaccurate`` at a certified gap of 1.28e-4), so the
      full run has both graphs again, the rule unchanged: a distance-only solve that does not end
      ``optimal`` leaves that graph undecided.
    """
    from sdpembed import solve
    from sdpembed.problems import MVUInstance
    from sdpembed.solvers.mvu.facial import solve_mvu_facial
    from sdpembed.solvers.mvu.spectral import spectral_embedding

    l = config["l"]
    raw = {}
    for graph in config["graphs"]:
        runs = []
        for n in config["ns"]:
            X = swiss_roll(n, noise=config["noise"], random_state=config["seed"])[0]
            row = {"n": n}
            for variant in ("equality", "inequality"):
                instance = MVUInstance.from_points(X, config["k"], variant, angles=graph == "angles", link=True,
                                                   random_state=0)
                start = time.process_time()
                if variant == "equality":
                    result = solve_mvu_facial(instance, gap_tol=config["gap_tol"],
                                              cpu_time_limit=config["cpu_time_limit"])
                else:
                    result = solve(instance)
                Y = spectral_embedding(result.solution, 2)[0]
                row[variant] = {"status": result.status, "relative_gap": float(result.relative_gap),
                                "method": result.solver, "cpu_s": time.process_time() - start,
                                "edges": int(len(instance.edges)),
                                "face_dim": result.extra.get("face_dim") if variant == "equality" else None,
                                "continuity": local_continuity(X, Y, l), "trust": local_trust(X, Y, l),
                                "intersection": neighborhood_intersection(X, Y, l)}
                print(f"  {graph} n = {n} {variant}: {row[variant]}", flush=True)
            runs.append(row)
            if row["equality"]["status"] != "optimal":
                break
        certified = [r for r in runs if r["equality"]["status"] == "optimal"]
        best = certified[-1] if certified else None
        raw[graph] = {"runs": runs, "decided_n": best["n"] if best else None,
                      "decision": roll_row_decision(best["equality"] if best else None)}
    decisions = [raw[g]["decision"] for g in raw]
    overall = ("supported" if "supported" in decisions else "refuted" if all(d == "refuted" for d in decisions)
               else "undecided")
    untested = [g for g in ("angles", "distances") if g not in raw]

    def q(e: dict) -> str:
        return f"{e['continuity']:.3f} / {e['trust']:.3f} / {e['intersection']:.3f}"

    rows = [[g, r["n"], f"{r['equality']['status']} ({gap_text(r['equality'])}, face "
             f"{r['equality']['face_dim']}, {r['equality']['cpu_s']:.0f} s CPU)", q(r["equality"]),
             f"{r['inequality']['status']} ({gap_text(r['inequality'])}, "
             f"{r['inequality']['cpu_s']:.0f} s CPU)", q(r["inequality"])] for g in raw for r in raw[g]["runs"]]
    fig, axes = plt.subplots(1, len(raw), figsize=(5.5 * len(raw), 3.8), squeeze=False)
    for ax, g in zip(axes[0], raw, strict=True):
        for offset, variant in ((-0.2, "equality"), (0.2, "inequality")):
            for x, m in enumerate(("continuity", "trust", "intersection")):
                for index, r in enumerate(raw[g]["runs"]):         # a solve that is not optimal: a cross
                    ok = r[variant]["status"] == "optimal"
                    ax.plot(x + offset + 0.05 * index, r[variant][m], "o" if ok else "x",
                            color="C0" if variant == "equality" else "C1",
                            label=f"{variant}{'' if ok else ' (not optimal)'}" if x == 0 and (index == 0 or not ok)
                            else None)
        ax.plot(range(3), (1.000, 0.990, 0.990), "_", color="C3", ms=20, mew=2, label="published")
        ax.set_xticks(range(3), ["continuity", "trust", "intersection"])
        ax.set(title=f"{g}: {raw[g]['decision']} (n = {', '.join(str(r['n']) for r in raw[g]['runs'])})",
               ylim=(0, 1.05))
        ax.legend(fontsize=7)
    _save(fig, png)
    return Outcome(
        published="Table 3.2, swiss roll (n = 2,000, k = 5, r = 2, l = 15): MVU 1.000 / 0.990 / 0.990.",
        ours=(_md_table(["graph", "n", "equality SDP (facial reduction)", "equality: C / T / N",
                         "inequality SDP", "inequality: C / T / N"], rows)
              + f"\n\nk = {config['k']}, l = {l}, r = 2, noise {config['noise']}, seed {config['seed']}; equality gap "
              f"tolerance {config['gap_tol']}."),
        rows=raw, verdict="differs",
        agreement=("; ".join(f"{g}: {graph_sentence(raw[g])}" for g in raw)
                   + f". The hypothesis that the thesis' roll row is the equality SDP is {overall}"
                   + (f" on the {' and '.join(raw)} graph" + ("s" if len(raw) > 1 else "") if untested else "")
                   + (": the published 1.000 / 0.990 / 0.990 is not the equality SDP's on this roll and graph."
                      if overall == "refuted" else ".")
                   + (f" Untested: the {' and '.join(untested)} graph." if untested else "")),
    )


def _truth(params: np.ndarray) -> np.ndarray:
    """The isometric unrolling of a roll: (arc length of the spiral at t, height)."""
    return np.column_stack([roll_arc_length(params[:, 0]), params[:, 1]])


def table3_2_reasons_roll_noise(config: dict, png: Path) -> Outcome:
    """Table 3.2 — the reason test of the swiss-roll MVU row: the roll's noise.

    Paper
    -----
    Table 3.2 (Sec. 3.1.9): "a synthetic swiss-roll with n = 2000 data points", input dimension 3,
    r = 2, l = 15; exact MVU at k = 5 scores 1.000 / 0.990 / 0.990 (continuity / trust /
    intersection). The thesis states added noise where it used it (Fig. 3.5: five extra dimensions
    of low-variance Gaussian noise, p = 8; Fig. 3.32: "with additive low variance noise") and its
    absence in Fig. 3.14 ("sampled without noise"); for Table 3.2 it says neither, and gives the
    input dimension as 3 (so not Fig. 3.5's eight).

    Departures
    ----------
    - Where we stand: ``table3_2`` runs the roll with noise 0.05 (our choice, not the thesis') of
      the thesis' parametrisation (t = 1.5π(1 + 2u), height 21v, x = (t cos t, h, t sin t), the
      generator of :func:`sdpembed.datasets.swiss_roll`, whose default is noise-free), seed 0, n =
      2,000: the certified inequality SDP with angle edges scores 0.920 / 0.837 / 0.782. Where
      this row's other reason tests stand is read from their records at the run
      (:func:`swiss_row_standing`) and given with the verdict.
    - Hypothesis, fixed before this run: (noise) the thesis' Table 3.2 roll is noise-free, and
      on it exact MVU scores the published row. The roll: the same generator with noise
      ``noise`` (0), n = ``n``, seed ``seed``; k = ``k``, the kNN and angle edges of (3.8),
      linked, as ``table3_2``. Solved: the inequality SDP (``table3_2``'s MVU row, the default
      method, certified) and the equality SDP by facial reduction
      (:func:`sdpembed.solvers.mvu.facial.solve_mvu_facial`, gap tolerance ``gap_tol``, the interior
      point over the face bounded by ``cpu_time_limit`` CPU seconds of the process, not wall-clock
      seconds); 2-D outputs (3.21), l = ``l``.
    - Rule: a variant *scores the row* if its solve is ``optimal`` and each measure lies within
      0.02 of the published one; it is *refuted* if its solve is ``optimal`` and some measure lies
      more than 0.05 below the published one; *undecided* otherwise
      (:func:`roll_row_decision`). The hypothesis is supported if a variant scores the row,
      refuted if both variants are refuted, undecided otherwise.
    - Reported beside it, not deciding: the measures of the isometric unrolling (the roll's arc
      length and height, the best a faithful unfolding scores at this n and l) on the noise-free
      roll and on ``table3_2``'s roll (noise ``noisy``, same n and seed): if the unrolling of the
      noisy roll is itself more than 0.02 below the published row, no faithful unfolding of
      that roll scores it.
    """
    from sdpembed import solve
    from sdpembed.problems import MVUInstance
    from sdpembed.solvers.mvu.facial import solve_mvu_facial
    from sdpembed.solvers.mvu.spectral import spectral_embedding

    l, n, seed = config["l"], config["n"], config["seed"]

    def measures(X: np.ndarray, Y: np.ndarray) -> dict:
        return {"continuity": local_continuity(X, Y, l), "trust": local_trust(X, Y, l),
                "intersection": neighborhood_intersection(X, Y, l)}

    X, params = swiss_roll(n, noise=config["noise"], random_state=seed)
    Xn, params_n = swiss_roll(n, noise=config["noisy"], random_state=seed)
    truth = {"noise-free": measures(X, _truth(params)), "noisy": measures(Xn, _truth(params_n))}
    solves = {}
    for variant in ("inequality", "equality"):
        instance = MVUInstance.from_points(X, config["k"], variant, angles=True, link=True, random_state=0)
        start = time.process_time()
        result = (solve_mvu_facial(instance, gap_tol=config["gap_tol"], cpu_time_limit=config["cpu_time_limit"])
                  if variant == "equality" else solve(instance))
        Y, values = spectral_embedding(result.solution, 2)
        lam = np.linalg.eigvalsh(result.solution)[::-1][:3]
        solves[variant] = {"status": result.status, "relative_gap": float(result.relative_gap),
                           "method": result.solver, "cpu_s": time.process_time() - start,
                           "edges": int(len(instance.edges)),
                           "face_dim": result.extra.get("face_dim") if variant == "equality" else None,
                           "eigenvalue_shares": (lam / np.trace(result.solution)).tolist(),
                           **measures(X, Y)}
        solves[variant]["decision"] = roll_row_decision(solves[variant] if result.status == "optimal" else None)
        print(f"  noise-free n = {n} {variant}: {solves[variant]}", flush=True)
    decisions = [solves[v]["decision"] for v in solves]
    overall = ("supported" if "supported" in decisions else "refuted" if all(d == "refuted" for d in decisions)
               else "undecided")
    published = (1.000, 0.990, 0.990)
    names = ("continuity", "trust", "intersection")
    ceiling_short = {r: max(p - truth[r][m] for p, m in zip(published, names, strict=True)) for r in truth}

    def q(e: dict) -> str:
        return " / ".join(f"{e[m]:.3f}" for m in names)

    rows = [[f"MVU, {v} SDP", f"{s['status']} ({gap_text(s)}, {s['method']}, {s['edges']} edges"
             + (f", face {s['face_dim']}" if s["face_dim"] is not None else "") + f", {s['cpu_s']:.0f} s CPU)",
             q(s), ", ".join(f"{x:.3f}" for x in s["eigenvalue_shares"]), s["decision"]] for v, s in solves.items()]
    rows += [[f"isometric unrolling ({r} roll)", "—", q(truth[r]), "—", "—"] for r in truth]
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    marks = [(f"{v} SDP", solves[v], "o" if solves[v]["status"] == "optimal" else "x") for v in solves]
    marks += [(f"unrolling, {r}", truth[r], "s") for r in truth]
    for index, (label, e, mark) in enumerate(marks):
        ax.plot(np.arange(3) + 0.1 * (index - 1.5), [e[m] for m in names], mark, color=f"C{index}", label=label)
    ax.plot(range(3), published, "_", color="C9", ms=20, mew=2, label="published")
    ax.set_xticks(range(3), list(names))
    ax.set(title=f"noise-free roll, n = {n}: {overall}", ylim=(0, 1.05))
    ax.legend(fontsize=7)
    _save(fig, png)
    return Outcome(
        published="Table 3.2, swiss roll (n = 2,000, input dimension 3, k = 5, r = 2, l = 15): MVU 1.000 / 0.990 / "
                  "0.990.",
        ours=(_md_table(["embedding", "solve", "C / T / N", "λ1..λ3 / trace", "decision"], rows)
              + f"\n\nNoise-free roll (noise {config['noise']}), n = {n}, seed {seed}, k = {config['k']} with the "
              f"angle edges, linked; l = {l}, r = 2; the noisy roll is ``table3_2``'s (noise {config['noisy']}); "
              f"equality gap tolerance {config['gap_tol']}."),
        rows={"solves": solves, "truth": truth, "decision": overall, "ceiling_short": ceiling_short},
        verdict="differs",
        agreement=("On the noise-free roll the certified "
                   + "; ".join(f"{v} SDP ({s['status']}) scores {q(s)} — {s['decision']}" for v, s in solves.items())
                   + f". The noise hypothesis is {overall}"
                   + (": a noise-free roll does not give the published 1.000 / 0.990 / 0.990 either."
                      if overall == "refuted" else ".")
                   + " The isometric unrolling scores " + "; ".join(f"{q(truth[r])} on the {r} roll" for r in truth)
                   + " (" + "; ".join(f"{r}: {'more' if ceiling_short[r] > 0.02 else 'not more'} than 0.02 below the "
                                      "published row" for r in truth) + "). "
                   + swiss_row_standing(png.parent)),
    )


EXPERIMENTS = (
    Experiment("table3_2_reasons_trust", "Table 3.2 — the reason test: the reading of local trust (3.28), "
               "calibrated on PCA's swiss-roll cell", table3_2_reasons_trust,
               full={"n": 2000, "seeds": list(range(10)), "k": 15, "k_mvu": 5, "l": 15, "noise": 0.05,
                     "tolerance": 0.01},
               quick={"n": 150, "seeds": [0, 1], "k": 10, "k_mvu": 5, "l": 10, "noise": 0.05, "tolerance": 0.01}),
    Experiment("table3_2_reasons_roll_equality", "Table 3.2 — the reason test: the swiss-roll MVU row and the "
               "equality SDP (facial reduction)", table3_2_reasons_roll_equality,
               full={"ns": [1000, 1500, 2000], "graphs": ["angles", "distances"], "k": 5, "l": 15, "noise": 0.05,
                     "gap_tol": 1e-5, "cpu_time_limit": 900.0, "seed": 0},
               quick={"ns": [60], "graphs": ["angles"], "k": 5, "l": 10, "noise": 0.05,
                      "gap_tol": 1e-5, "cpu_time_limit": 60.0, "seed": 0}),
    Experiment("table3_2_reasons_roll_noise", "Table 3.2 — the reason test: the swiss-roll MVU row on a noise-free "
               "roll", table3_2_reasons_roll_noise,
               full={"n": 2000, "k": 5, "l": 15, "noise": 0.0, "noisy": 0.05, "gap_tol": 1e-5, "cpu_time_limit": 300.0,
                     "seed": 0},
               quick={"n": 80, "k": 5, "l": 10, "noise": 0.0, "noisy": 0.05, "gap_tol": 1e-5, "cpu_time_limit": 60.0,
                      "seed": 0}),
)
