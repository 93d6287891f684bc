"""What the thesis sections of REPRODUCTION.md state about a solve: a gap is printed as certified only when
it is one, a ratio from uncertified solves is marked, and the swiss-roll row's reason tests are stated from
their records."""

import json

import numpy as np
import pytest

from .conftest import load_reproduce


@pytest.mark.parametrize("run", [{"relative_gap": float("nan")}, {"gap": float("nan")}, {},
                                 {"relative_gap": float("inf")}, {"relative_gap": -2.8e-8},
                                 {"relative_gap": -2.8e-2, "violation": 5.4e-5},
                                 {"relative_gap": float("nan"), "violation": 7.3e-4}])
def test_a_negative_or_missing_gap_is_never_printed_as_certified(run):
    text = load_reproduce("common").gap_text(run)
    assert text.startswith("no certified gap: ") and "certified relative gap" not in text
    assert not {"nan", "inf"} & set(text.replace(",", " ").replace(":", " ").split())
    if run.get("relative_gap", 0.0) < 0.0:
        assert f"{-run['relative_gap']:.1e} above the proved bound" in text
    if "violation" in run:
        assert f"constraint violation {run['violation']:.1e}" in text


@pytest.mark.parametrize("gap", [0.0, 3.4e-6, 1.6e-1])
def test_a_finite_non_negative_gap_is_printed_as_certified(gap):
    common = load_reproduce("common")
    assert common.gap_text({"relative_gap": gap}) == f"certified relative gap {gap:.1e}"
    assert common.gap_text({"gap": gap, "violation": 1e-9}) == f"certified relative gap {gap:.1e}"


def test_min_max_trace_ratios_from_uncertified_solves_are_marked(monkeypatch, tmp_path):
    # the roll's pair is not certified, the fives' is: only the roll's ratios carry the mark, and the verdict
    # counts the certified ratios apart
    thesis = load_reproduce("thesis_mvu")
    config = {e.key: e for e in thesis.EXPERIMENTS}["fig3_24_25"].quick
    rng = np.random.default_rng(0)
    monkeypatch.setattr(thesis, "load_mnist", lambda **kw: (rng.standard_normal((config["n"], 6)), None))
    status = {("equality", 3): "inaccurate", ("min_trace", 3): "max_iterations",
              ("equality", 6): "optimal", ("min_trace", 6): "optimal"}

    def exact(X, k, variant, r=2, angles=False):
        spectrum = np.sort(rng.uniform(size=12))[::-1]
        return {"Y": rng.standard_normal((len(X), r)), "spectrum": spectrum / spectrum.sum(),
                "status": status[variant, X.shape[1]]}

    quality = {"equality": {"continuity": 0.9, "trust": 0.8, "intersection": 0.5},
               "min_trace": {"continuity": 0.8, "trust": 0.9, "intersection": 0.4}}
    monkeypatch.setattr(thesis, "_exact", exact)
    order = iter(["equality", "min_trace"] * 2)           # the roll's pair, then the fives'
    monkeypatch.setattr(thesis, "_quality", lambda X, Y, l: quality[next(order)])
    monkeypatch.setattr(thesis, "last_reason_test", lambda png, key: "")
    outcome = thesis.fig3_24_25(config, tmp_path / "fig3_24_25.png")
    rows = {line.split("|")[1].strip(): line for line in outcome.ours.splitlines() if line.startswith("| ")}
    assert rows["swiss roll"].count("†") == 3 and "†" not in rows["MNIST fives"]
    assert outcome.rows["swiss roll"]["certified"] is False and outcome.rows["MNIST fives"]["certified"] is True
    # ratios 0.889, 1.125, 0.8 per pair: 4 of 6 below 1, 2 of the 3 certified (the fives')
    assert outcome.agreement.startswith("4 of 6 ratios below 1, 2 of the 3 from certified pairs")


def _write(directory, key, record):
    (directory / f"{key}.json").write_text(json.dumps(record))


def test_the_swiss_row_standing_states_the_relaxation_from_both_records(tmp_path):
    trust = load_reproduce("thesis_mvu_trust")
    assert "not been run" in trust.swiss_row_standing(tmp_path)
    scores = {"continuity": 0.9, "trust": 0.9, "intersection": 0.9}
    _write(tmp_path, "table3_2_reasons", {"config": {"n_swiss": 500}, "rows": {
        "swiss": {"equality": {"status": "max_iterations"}}, "supported": {"relaxation": True}}})
    lower = {**scores, "status": "optimal", "continuity": 0.8, "trust": 0.5, "intersection": 0.4}
    runs = [{"n": n, "equality": lower, "inequality": {**scores, "status": "optimal"}} for n in (1000, 2000)]
    _write(tmp_path, "table3_2_reasons_roll_equality", {"rows": {
        "angles": {"runs": runs, "decided_n": 2000, "decision": "refuted"},
        "distances": {"runs": [], "decided_n": None, "decision": "undecided (no size certified)"}}})
    _write(tmp_path, "table3_2_reasons_roll_noise", {"rows": {"decision": "undecided"}})
    text = trust.swiss_row_standing(tmp_path)
    assert "supported by `table3_2_reasons` at n = 500, only as an indication" in text
    assert "`max_iterations`" in text
    assert "higher than the inequality optimum in all three measures at n = none" in text
    assert "lower in all three at n = 1000, 2000 of 1000, 2000 — refuted where certified" in text
    assert "angles: at n = 2000 the certified equality SDP scores 0.800 / 0.500 / 0.400 — refuted" in text
    assert "a noise-free roll (`table3_2_reasons_roll_noise`): undecided" in text
    # a certified equality solve that scores higher everywhere does not refute it
    runs[0]["equality"] = {**scores, "status": "optimal", "continuity": 0.95, "trust": 0.95, "intersection": 0.95}
    _write(tmp_path, "table3_2_reasons_roll_equality", {"rows": {
        "angles": {"runs": runs, "decided_n": 2000, "decision": "refuted"}}})
    text = trust.swiss_row_standing(tmp_path)
    assert "at n = 1000 and lower in all three at n = 2000" in text and "refuted where certified" not in text
