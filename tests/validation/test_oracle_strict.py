"""The oracle judges exactly what it was handed (issue 18): crafted wrong solutions of every problem
fail ``verify_solution``, ``sdpembed verify`` and ``sdpembed suite run`` — an antisymmetric part,
one failing case per check of the tolerance table, a non-finite ``dual_bound``, complex and string
matrices — tolerances are validated, ``--json`` is strict JSON, the objective error is signed and
the tables never print a failing value equal to its tolerance."""

from __future__ import annotations

import json
import math
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

from sdpembed import get_problem
from sdpembed.cli import _emit, main
from sdpembed.io import Solution, read_solution
from sdpembed.registry import solve
from sdpembed.validation.certify import Tolerances, format_against
from sdpembed.validation.suite import RunRecord, format_run_table, load_suite, run_suite
from sdpembed.validation.verify import verify_solution

#: One small suite instance per problem (and an MVU variant stated as max −tr K).
CASES = {
    "numax": "numax-squares5",
    "numax_class": "numax_class-shapes6",
    "lmnn": "lmnn-iris8",
    "lmnn_multi": "lmnn_multi-iris8",
    "mvu": "mvu-equality-trefoil12",
    "mvu_min_trace": "mvu-min_trace-swiss10",
    "mvu_oos": "mvu_oos-swiss-k3",
}

#: Relaxed tolerances that leave one check of the table alone to fail (all finite, as they must be).
LOOSE = 10.0


def strict_json(text: str):
    """``json.loads`` that refuses NaN and Infinity (which are not JSON)."""
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def suite():
    return load_suite()


@pytest.fixture(scope="module")
def optimal(suite):
    """{case: (entry, instance, optimal matrix)}, solved by our default solvers."""
    out = {}
    for case, name in CASES.items():
        (entry,) = [e for e in suite.entries if e.name == name]
        instance = entry.load()
        result = solve(instance)
        assert result.status == "optimal", (name, result.status)
        out[case] = (entry, instance, result.solution)
    return out


# --------------------------------------------------------------------------- crafted wrong answers
def antisymmetric(X: np.ndarray, size: float = 10.0) -> np.ndarray:
    """X plus an antisymmetric part: X[0, -1] + size, X[-1, 0] − size (for mvu_oos: S[0, r] ≠ S[r, 0]);
    in every matrix of a stack (lmnn_multi)."""
    Y = np.array(X, dtype=np.float64)
    Y[..., 0, -1] += size
    Y[..., -1, 0] -= size
    return Y


def transposed(X: np.ndarray) -> np.ndarray:
    """Xᵀ, matrix by matrix for a stack."""
    return np.swapaxes(X, -1, -2)


def suboptimal(case: str, instance, X: np.ndarray) -> np.ndarray:
    """A PSD, symmetric answer whose objective is worse than optimal by far more than 1e-4."""
    if case in ("lmnn", "lmnn_multi"):
        return X + 0.05 * np.eye(X.shape[-1])            # a larger pull term, still PSD
    if case == "mvu_oos":
        Y = X.copy()
        Y[-1, -1] += 5.0                                  # s far above ‖y‖²: PSD, structure intact
        return Y
    if case == "mvu":
        return (1.0 - 1e-3) * X                           # a smaller tr K (MVU maximises)
    return (1.0 + 1e-3) * X                               # numax, numax_class: a larger trace; min_trace: −tr K


def infeasible(case: str, instance, X: np.ndarray) -> np.ndarray:
    """An answer that violates a constraint by far more than 1e-5 (LMNN has none but M ⪰ 0)."""
    if case == "mvu_oos":
        Y = X.copy()
        r = X.shape[0] - 1
        Y[:r, :r] *= 1.0 + 1e-3                           # S[:r, :r] ≠ I
        return Y
    return (1.0 + 1e-2) * X                               # secant bounds 1 ± δ, edge lengths D_e


def indefinite(case: str, instance, X: np.ndarray) -> np.ndarray:
    """λ_min moved to −1e-3 · max(1, λ_max) (of every matrix of a stack), everything else nearly unchanged."""
    values, vectors = np.linalg.eigh(X)
    u = vectors[..., :, 0]
    shift = values[..., 0] + 1e-3 * max(1.0, values.max())
    return X - shift[..., None, None] * (u[..., :, None] * u[..., None, :])


#: kind -> (craft, the word its failure reason must contain, CLI tolerance flags, Tolerances)
CHECKS = {
    "asymmetry": (lambda case, inst, X: antisymmetric(X), "asymmetr", [], Tolerances()),
    "objective": (suboptimal, "objective error", ["--feasibility-tol", "0.02"], Tolerances(feasibility=0.02)),
    "violation": (infeasible, "constraint violation", ["--objective-tol", str(LOOSE)], Tolerances(objective=LOOSE)),
    "psd": (indefinite, "not PSD", ["--objective-tol", str(LOOSE), "--feasibility-tol", str(LOOSE)],
            Tolerances(objective=LOOSE, feasibility=LOOSE)),
}


def crafted_cases():
    for kind in CHECKS:
        for case in CASES:
            if kind == "violation" and case in ("lmnn", "lmnn_multi"):
                continue                                  # LMNN's only constraints are M ⪰ 0 (the PSD check)
            yield kind, case


def check_reason(reasons: list[str], word: str) -> None:
    assert any(word in reason for reason in reasons), (word, reasons)


# ---------------------------------------------------------------------------- our answers pass
@pytest.mark.parametrize("case", list(CASES))
def test_our_solvers_answers_pass_and_are_symmetric(optimal, case):
    entry, instance, X = optimal[case]
    cert = verify_solution(instance, X)
    assert cert.passed, cert.reasons
    assert cert.asymmetry <= 1e-12 and abs(cert.objective_error) <= 1e-4
    nearly = verify_solution(instance, antisymmetric(X, 1e-12 * max(1.0, np.abs(X).max())))
    assert nearly.passed and 0 < nearly.asymmetry <= 1e-11          # rounding-level asymmetry is not a failure


# --------------------------------------------------------------------------- verify_solution
@pytest.mark.parametrize(("kind", "case"), list(crafted_cases()))
def test_crafted_wrong_solutions_fail_verify_solution(optimal, kind, case):
    entry, instance, X = optimal[case]
    craft, word, _, tolerances = CHECKS[kind]
    wrong = craft(case, instance, X)
    assert verify_solution(instance, X, tolerances=tolerances).passed       # only the craft makes it fail
    cert = verify_solution(instance, wrong, tolerances=tolerances)
    assert not cert.passed
    check_reason(cert.reasons, word)
    if kind == "asymmetry":
        size = np.abs(wrong - transposed(wrong)).max() / max(instance.matrix_unit, np.abs(wrong).max())
        assert cert.asymmetry == pytest.approx(size) and cert.asymmetry > tolerances.feasibility
    if kind == "objective":                                       # suboptimal: the sign says which side
        sense = get_problem(instance.problem).sense
        assert (cert.objective_error > 0) == (sense == "min")
        assert abs(cert.objective_error) > tolerances.objective
        check_reason(cert.reasons, "suboptimal")
    if kind == "psd":
        assert cert.psd_violation > tolerances.psd


@pytest.mark.parametrize("case", list(CASES))
def test_the_objective_error_is_signed_and_says_which_side(optimal, case):
    entry, instance, X = optimal[case]
    sense = get_problem(instance.problem).sense
    scale = max(abs(instance.optimum), 1.0)
    better = verify_solution(instance, X, optimum=instance.optimum - (1e-3 if sense == "min" else -1e-3) * scale)
    worse = verify_solution(instance, X, optimum=instance.optimum + (1e-3 if sense == "min" else -1e-3) * scale)
    # "better than the optimum": below it for a minimisation, above it for MVU (which maximises)
    assert (better.objective_error > 0) == (sense == "min") and not better.passed
    assert (worse.objective_error < 0) == (sense == "min") and not worse.passed
    check_reason(worse.reasons, "better than the optimum")
    check_reason(better.reasons, "suboptimal")
    assert abs(better.objective_error) == pytest.approx(1e-3, rel=0.2)


@pytest.mark.parametrize("case", list(CASES))
def test_bad_dtypes_and_bounds_are_refused_by_verify_solution(optimal, case):
    entry, instance, X = optimal[case]
    with pytest.raises(ValueError, match="complex"):
        verify_solution(instance, X + 1e-3j)
    with pytest.raises(ValueError, match="complex"):
        verify_solution(instance, X.astype(np.complex128))                  # even with a zero imaginary part
    for other in (X.astype(str), X > 0, X.astype(object)):
        with pytest.raises(ValueError, match="real numbers"):
            verify_solution(instance, other)
    for bound in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match="'dual_bound'"):
            verify_solution(instance, Solution(X, dual_bound=bound))


# ----------------------------------------------------------------------------- sdpembed verify
@pytest.mark.parametrize(("kind", "case"), list(crafted_cases()))
def test_crafted_wrong_solutions_fail_the_verify_command(optimal, kind, case, tmp_path, capsys):
    entry, instance, X = optimal[case]
    craft, word, flags, _ = CHECKS[kind]
    path = tmp_path / "wrong.npz"
    np.savez(path, **{get_problem(instance.problem).variable: craft(case, instance, X)})
    assert main(["verify", str(entry.path), str(path), *flags]) == 1
    out = capsys.readouterr().out
    assert "verdict            FAIL" in out and word in out
    assert main(["verify", str(entry.path), str(path), *flags, "--json"]) == 1
    report = strict_json(capsys.readouterr().out)
    assert report["passed"] is False
    check_reason(report["reasons"], word)


def bad_files(variable: str, X: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
    """Solution files the file contract refuses: each must be a BAD SOLUTION / exit 2."""
    return {
        "nan bound": {variable: X, "dual_bound": np.array(np.nan)},
        "inf bound": {variable: X, "dual_bound": np.array(np.inf)},
        "complex": {variable: X + 1e-9j},
        "string": {variable: X.astype(str)},
    }


@pytest.mark.parametrize("case", list(CASES))
def test_bad_solution_files_give_exit_2_with_the_array_named(optimal, case, tmp_path, capsys):
    entry, instance, X = optimal[case]
    variable = get_problem(instance.problem).variable
    for label, arrays in bad_files(variable, X).items():
        path = tmp_path / f"{label.replace(' ', '_')}.npz"
        np.savez(path, **arrays)
        named = "'dual_bound'" if "bound" in label else repr(variable)
        with pytest.raises(ValueError, match=named):
            read_solution(path, instance)
        assert main(["verify", str(entry.path), str(path)]) == 2, label
        err = capsys.readouterr().err
        assert named in err and "Traceback" not in err


def test_verify_prints_the_signed_objective_error_in_words(optimal, tmp_path, capsys):
    for case in ("numax", "mvu"):                         # a minimisation and a maximisation
        entry, instance, X = optimal[case]
        path = tmp_path / f"{case}.npz"
        np.savez(path, **{get_problem(instance.problem).variable: suboptimal(case, instance, X)})
        assert main(["verify", str(entry.path), str(path), "--feasibility-tol", "0.02"]) == 1
        out = capsys.readouterr().out
        assert "relative gap" not in out
        (line,) = [line for line in out.splitlines() if line.startswith("objective error")]
        sign = "+" if case == "numax" else "-"
        assert f" {sign}" in line and "suboptimal" in line, line
        assert "asymmetry" in out and "PSD violation" in out


# ---------------------------------------------------------------------------- sdpembed suite run
def copying_command(directory: Path) -> str:
    """A graded program that writes the crafted solution file prepared for the instance it is given."""
    code = ("import os, shutil, sys; shutil.copyfile(os.path.join(sys.argv[1], os.path.basename(sys.argv[2])), "
            "sys.argv[3])")
    program = f"{shlex.quote(sys.executable)} -c {shlex.quote(code)} {shlex.quote(str(directory))}"
    return program + " {instance} {solution}"


def prepare(directory: Path, files: dict[str, dict[str, np.ndarray]]) -> Path:
    directory.mkdir()
    for name, arrays in files.items():
        np.savez(directory / f"{name}.npz", **arrays)
    return directory


@pytest.mark.parametrize("kind", list(CHECKS))
def test_crafted_wrong_solutions_fail_suite_run(optimal, suite, kind, tmp_path):
    craft, word, _, tolerances = CHECKS[kind]
    cases = [case for k, case in crafted_cases() if k == kind]
    files = {}
    for case in cases:
        entry, instance, X = optimal[case]
        files[entry.name] = {get_problem(instance.problem).variable: craft(case, instance, X)}
    entries = [optimal[case][0] for case in cases]
    records = run_suite(copying_command(prepare(tmp_path / "crafted", files)), suite=suite, entries=entries,
                        tolerances=tolerances)
    assert [r.result for r in records] == ["fail"] * len(cases), [(r.name, r.result, r.reasons) for r in records]
    for record in records:
        check_reason(record.reasons, word)
    if kind == "asymmetry":
        assert all(r.asymmetry > tolerances.feasibility for r in records)


def test_suite_run_command_table_names_the_asymmetry(optimal, suite, tmp_path, capsys):
    files = {}
    for case in CASES:
        entry, instance, X = optimal[case]
        files[entry.name] = {get_problem(instance.problem).variable: antisymmetric(X)}
    names = [f"--instances={optimal[case][0].name}" for case in CASES]
    assert main(["suite", "run", "--command", copying_command(prepare(tmp_path / "asym", files)), *names]) == 1
    table = capsys.readouterr().out
    header = table.splitlines()[0]
    for column in ("obj. error (signed)", "violation", "asym.", "PSD viol."):
        assert column in header
    rows = [line for line in table.splitlines() if line.split()[0] in files]
    assert len(rows) == len(CASES) and all(" FAIL " in row and "asymmetr" in row for row in rows), rows
    assert f"0/{len(CASES)} passed" in table


def test_bad_solution_files_are_bad_solutions_in_suite_run(optimal, suite, tmp_path):
    cases = list(CASES)
    entries = [optimal[case][0] for case in cases]
    for label in bad_files("P", np.eye(2)):
        files = {}
        for case in cases:
            entry, instance, X = optimal[case]
            files[entry.name] = bad_files(get_problem(instance.problem).variable, X)[label]
        directory = prepare(tmp_path / label.replace(" ", "_"), files)
        records = run_suite(copying_command(directory), suite=suite, entries=entries)
        assert [r.result for r in records] == ["bad solution"] * len(cases), (label, [r.reasons for r in records])
        word = "dual_bound" if "bound" in label else "real numbers"
        for record in records:
            check_reason(record.reasons, word)


# ------------------------------------------------------------------------------------ tolerances
@pytest.mark.parametrize("field", ["objective", "feasibility", "psd"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, -1e-12, "1e-4", None, True])
def test_tolerances_must_be_finite_and_nonnegative(field, value):
    with pytest.raises(ValueError, match=field):
        Tolerances(**{field: value})


def test_tolerances_accept_zero_and_integers():
    assert Tolerances(objective=0, feasibility=1, psd=np.float32(1e-6)).feasibility == 1.0


@pytest.mark.parametrize("flag", ["--objective-tol", "--feasibility-tol", "--psd-tol"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "lots"])
def test_tolerance_options_are_refused_at_parse_time(optimal, flag, value, tmp_path, capsys):
    entry, instance, X = optimal["mvu_oos"]
    path = tmp_path / "sol.npz"
    np.savez(path, S=X)
    for argv in (["verify", str(entry.path), str(path)], ["suite", "run", "--command", "true {instance} {solution}"]):
        with pytest.raises(SystemExit) as exited:
            main([*argv, f"{flag}={value}"])
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert flag in err and "finite number >= 0" in err and "Traceback" not in err


# ------------------------------------------------------------------------------------ strict JSON
def test_emit_writes_strict_json(capsys):
    payload = {"a": math.nan, "b": np.float32("inf"), "c": np.array([1.0, np.nan]), "d": [np.float64(-np.inf)],
               "e": {"f": np.int64(3), "g": np.bool_(True)}, "h": Path("x")}
    _emit(payload, True, [])
    assert strict_json(capsys.readouterr().out) == {"a": None, "b": None, "c": [1.0, None], "d": [None],
                                                    "e": {"f": 3, "g": True}, "h": "x"}


def test_verify_json_is_strict_without_a_bound_or_an_optimum(optimal, tmp_path, capsys):
    entry, instance, X = optimal["numax"]
    bare = tmp_path / "bare.npz"
    np.savez(bare, **{k: v for k, v in instance.to_arrays().items() if k != "optimum"})
    path = tmp_path / "sol.npz"
    np.savez(path, P=X)
    assert main(["verify", str(bare), str(path), "--json"]) == 0           # computed with CVXPY, no bound given
    report = strict_json(capsys.readouterr().out)
    assert report["dual_bound"] is None and report["gap"] is None and report["passed"] is True


def test_suite_run_json_is_strict_for_failures(optimal, suite, tmp_path, capsys):
    entry = optimal["mvu_oos"][0]
    command = f"{shlex.quote(sys.executable)} -c pass {{instance}} {{solution}}"          # writes nothing
    assert main(["suite", "run", "--command", command, f"--instances={entry.name}", "--json"]) == 1
    report = strict_json(capsys.readouterr().out)
    assert report["results"][0]["result"] == "no solution" and report["results"][0]["objective"] is None


# ------------------------------------------------------------------------- digits in the tables
@pytest.mark.parametrize(("value", "limit"), [(1.0012e-6, 1e-6), (1.00001e-5, 1e-5), (-1.0004e-4, 1e-4),
                                               (1e-6 * (1 + 1e-15), 1e-6), (1e-6, 1e-6), (9.96e-7, 1e-6)])
def test_a_failing_value_never_prints_as_its_tolerance(value, limit):
    for digits in (1, 3):
        text = format_against(value, limit, digits)
        assert (abs(float(text)) > limit) == (abs(value) > limit), text
    assert format_against(1.0012e-6, 1e-6, 1) == "1.001e-06"
    assert format_against(2.5e-3, 1e-6, 1) == "2.5e-03"


def test_run_table_prints_enough_digits_to_show_a_failure():
    record = RunRecord("numax-x", "numax", "numax", "tiny", "fail", objective_error=-1.00004e-4,
                       max_violation=1.0000001e-5, psd_violation=1.0012e-6, asymmetry=1.00002e-5, wall_time=1.0,
                       reasons=["PSD violation"])
    row = format_run_table([record]).splitlines()[1]
    assert "1.0e-06" not in row and "1.001e-06" in row
    assert "-1.00004e-04" in row and "1.0000001e-05" in row and "1.00002e-05" in row
    loose = format_run_table([record], Tolerances(objective=1.0, feasibility=1.0, psd=1.0)).splitlines()[1]
    assert "1.0e-06" in loose and "-1.0e-04" in loose
