"""The reference suite (issue 9): shipped instances with certified optima, `suite build`, `suite run`
grading our solvers (pass) and deliberately wrong implementations (fail), per-instance reporting of
crashes and timeouts, the SDPA export read back and solved, and the CVXPY-free verifier."""

from __future__ import annotations

import dataclasses
import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from sdpembed import PROBLEMS, get_problem, load_instance, solve
from sdpembed.cli import main
from sdpembed.io import Solution, read_npz
from sdpembed.sdpa import read_sdpa, sdpa_optimum, to_sdpa, write_sdpa
from sdpembed.validation import Tolerances
from sdpembed.validation.suite import (
    AGREEMENT_TOL,
    GAP_TOL,
    MANIFEST,
    SUITE_VERSION,
    build_suite,
    command_argv,
    content_hash,
    load_suite,
    run_suite,
    suite_cases,
)
from sdpembed.validation.verify import verify_solution

pytestmark = pytest.mark.e2e

WRONG = Path(__file__).resolve().parents[1] / "wrong_impls"
PYTHON = shlex.quote(sys.executable)
OUR_SOLVER = f"{PYTHON} -m sdpembed solve {{instance}} --out {{solution}}"


@pytest.fixture(scope="module")
def suite():
    return load_suite()


def entry_named(suite, name):
    (entry,) = [e for e in suite.entries if e.name == name]
    return entry


def copy_suite(suite, directory: Path) -> Path:
    shutil.copytree(suite.directory, directory)
    return directory


# ------------------------------------------------------------------------------ the shipped suite
def test_every_registered_problem_has_cases_and_an_sdpa_export(monkeypatch):
    assert all(spec.suite_cases is not None and spec.sdpa_form is not None for spec in PROBLEMS.values())
    monkeypatch.setitem(PROBLEMS, "lmnn", dataclasses.replace(PROBLEMS["lmnn"], suite_cases=None))
    with pytest.raises(ValueError, match="no instances for the registered problem"):
        suite_cases()


def test_shipped_suite_is_complete_small_and_certified(suite):
    assert suite.version == SUITE_VERSION
    assert [e.name for e in suite.entries] == [c.name for c in suite_cases()]
    groups = {}
    for entry in suite.entries:
        groups.setdefault(entry.group, []).append(entry)
    expected = {name for name in PROBLEMS if name != "mvu"} | {f"mvu/{v}" for v in ("equality", "inequality",
                                                                                     "slack", "min_trace")}
    assert set(groups) == expected
    for group, members in groups.items():                            # about five, from tiny to medium
        assert members[0].size == "tiny"
        if group == "lmnn_multi":                                    # three small ones, added in version 2
            assert [m.size for m in members] == ["tiny", "small", "small"]
        else:
            assert len(members) == 5 and members[-1].size == "medium"
    rejected = {record["name"]: record.get("rejected_certifiers", [])
                for record in json.loads((suite.directory / MANIFEST).read_text())["instances"]}
    for entry in suite.entries:
        assert [c["status"] for c in entry.certifiers] == ["optimal", "optimal"]
        assert entry.certifiers[0]["method"] == "cvxpy" and entry.certifiers[1]["method"] != "cvxpy"
        if entry.certifiers[0]["solver"] != "CLARABEL":              # SCS only where Clarabel was rejected
            assert entry.certifiers[0]["solver"] == "SCS"
            assert [(r["solver"], r["status"]) for r in rejected[entry.name]] == [("CLARABEL", "inaccurate")]
        assert entry.agreement <= AGREEMENT_TOL and abs(entry.certified_gap) <= GAP_TOL
        instance = entry.load()                                      # hash checked, optimum stored in the file
        assert instance.optimum == entry.optimum and instance.problem == entry.problem
        sign = 1.0 if get_problem(entry.problem).sense == "min" else -1.0
        assert sign * (entry.optimum - entry.dual_bound) >= -GAP_TOL * max(abs(entry.optimum), 1.0)
    size = sum(path.stat().st_size for path in suite.directory.iterdir())
    assert size < 1_000_000, size


def test_a_modified_suite_file_is_refused(suite, tmp_path):
    directory = copy_suite(suite, tmp_path / "suite")
    entry = entry_named(load_suite(directory), "lmnn-iris8")
    arrays = read_npz(entry.path)
    arrays["X"] = arrays["X"] * 1.01
    np.savez_compressed(entry.path, **arrays)
    with pytest.raises(ValueError, match="content hash"):
        entry.load()


@pytest.mark.slow
def test_suite_build_regenerates_every_optimum(suite, tmp_path):
    start = time.perf_counter()
    records = build_suite(out=tmp_path)
    elapsed = time.perf_counter() - start
    assert len(records) == len(suite.entries)
    assert all(r.ok for r in records), [(r.name, r.reasons) for r in records if not r.ok]
    rebuilt = load_suite(tmp_path)
    for old, new in zip(suite.entries, rebuilt.entries, strict=True):
        assert old.name == new.name
        assert abs(new.optimum - old.optimum) <= AGREEMENT_TOL * max(abs(old.optimum), 1.0)
        new.load()
    print(f"suite build: {len(records)} instances in {elapsed:.1f} s")


def test_build_fails_when_a_stored_optimum_moved_or_the_data_changed(suite, tmp_path, capsys):
    directory = copy_suite(suite, tmp_path / "suite")
    manifest = json.loads((directory / MANIFEST).read_text())
    records = {r["name"]: r for r in manifest["instances"]}
    for name, change in (("mvu_oos-scurve-k6", "optimum"), ("mvu_oos-swiss-k12", "sqdist")):
        path = directory / records[name]["file"]
        arrays = read_npz(path)
        if change == "optimum":
            arrays["optimum"] = np.array(float(arrays["optimum"]) * (1 + 1e-3))
            records[name]["optimum"] = float(arrays["optimum"])
        else:
            arrays["sqdist"] = arrays["sqdist"] * (1 + 1e-6)
        np.savez_compressed(path, **arrays)
        records[name]["sha256"] = content_hash(read_npz(path))
    (directory / MANIFEST).write_text(json.dumps(manifest))
    result = {r.name: r for r in build_suite(stored=directory, problems=["mvu_oos"])}
    assert not result["mvu_oos-scurve-k6"].ok and "no longer agrees" in result["mvu_oos-scurve-k6"].reasons[0]
    assert not result["mvu_oos-swiss-k12"].ok and "sqdist" in result["mvu_oos-swiss-k12"].reasons[0]
    assert sum(r.ok for r in result.values()) == 3
    capsys.readouterr()
    assert main(["suite", "build", "--suite", str(directory), "--problems", "mvu_oos", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and sum(r["ok"] for r in report["records"]) == 3


# ------------------------------------------------------------------------------------ suite run
@pytest.mark.slow
def test_our_solvers_pass_every_instance(capsys):
    start = time.perf_counter()
    code = main(["suite", "run", "--command", OUR_SOLVER, "--json"])
    report = json.loads(capsys.readouterr().out)
    failed = [(r["name"], r["result"], r["reasons"]) for r in report["results"] if r["result"] != "pass"]
    assert code == 0 and report["all_passed"] and not failed, failed
    assert report["total"] == len(load_suite().entries)
    for record in report["results"]:
        assert record["objective_error"] <= 1e-4 and record["psd_violation"] <= 1e-6
    print(f"suite run, our solvers: {report['total']} instances in {time.perf_counter() - start:.1f} s")


def test_our_multi_metric_solver_passes_the_lmnn_multi_instances(suite, capsys):
    code = main(["suite", "run", "--command", OUR_SOLVER, "--problems", "lmnn_multi", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["all_passed"], report["results"]
    assert [r["name"] for r in report["results"]] == [e.name for e in suite.select(["lmnn_multi"])]
    assert len(report["results"]) == 3 and all(r["result"] == "pass" for r in report["results"])


@pytest.mark.slow
def test_numax_without_psd_projection_fails_on_every_numax_instance(suite):
    entries = suite.select(["numax", "numax_class"])
    command = f"{PYTHON} {shlex.quote(str(WRONG / 'numax_no_psd.py'))} {{instance}} {{solution}}"
    records = run_suite(command, suite=suite, entries=entries, timeout=300)
    assert [r.result for r in records] == ["fail"] * len(entries)
    for record in records:                                          # exposed by the PSD check
        assert record.psd_violation > suite.tolerances.psd
        assert any("not PSD" in reason for reason in record.reasons)


@pytest.mark.slow
def test_lmnn_with_a_squared_hinge_fails_on_the_objective(suite, capsys):
    command = f"{PYTHON} {shlex.quote(str(WRONG / 'lmnn_squared_hinge.py'))} {{instance}} {{solution}}"
    assert main(["suite", "run", "--command", command, "--problems", "lmnn"]) == 1
    table = capsys.readouterr().out
    assert "0/5 passed" in table and "relative objective error" in table
    records = run_suite(command, suite=suite, entries=suite.select(["lmnn"])[:2])
    for record in records:                                          # a PSD metric with the wrong loss
        assert record.result == "fail" and record.psd_violation <= suite.tolerances.psd
        assert record.objective_error > 1e-2


def test_crashes_timeouts_and_bad_files_are_reported_per_instance(suite, tmp_path):
    entries = [entry_named(suite, "mvu_oos-swiss-k3"), entry_named(suite, "lmnn-iris8"),
               entry_named(suite, "mvu-slack-trefoil12")]
    # a program that crashes on one instance and solves the others: the run goes on
    dispatch = ("import os, sys; name = os.path.basename(sys.argv[1]); "
                "sys.exit('boom: ' + name) if 'iris8' in name else os.execv(sys.executable, "
                "[sys.executable, '-m', 'sdpembed', 'solve', sys.argv[1], '--out', sys.argv[2]])")
    records = run_suite(f"{PYTHON} -c {shlex.quote(dispatch)} {{instance}} {{solution}}", suite=suite,
                        entries=entries, workdir=tmp_path / "kept")
    assert [r.result for r in records] == ["pass", "crash", "pass"]
    assert records[1].returncode == 1 and "boom: lmnn-iris8.npz" in records[1].reasons[0]
    assert (tmp_path / "kept" / "mvu_oos-swiss-k3.solution.npz").is_file()

    one = entries[:1]

    def grade(code: str, **options):
        return run_suite(f"{PYTHON} -c {shlex.quote(code)} {{instance}} {{solution}}", suite=suite, entries=one,
                         **options)[0]

    assert grade("pass").result == "no solution"
    missing = grade("import sys, numpy as np; np.savez(sys.argv[2], Q=np.eye(3))")
    assert missing.result == "bad solution" and "no array 'S'" in missing.reasons[0]
    garbage = grade("import sys; open(sys.argv[2], 'w').write('not a zip file')")
    assert garbage.result == "bad solution" and "is a text file, not an .npz archive" in garbage.reasons[0]
    cut = grade("import sys, numpy as np; np.savez(sys.argv[2], S=np.eye(3)); f = open(sys.argv[2], 'r+b'); "
                "f.truncate(200)")                                # a corrupt archive is a row, not an abort
    assert cut.result == "bad solution" and "truncated or corrupt zip archive" in cut.reasons[0]
    shape = grade("import sys, numpy as np; np.savez(sys.argv[2], S=np.eye(5))")
    assert shape.result == "bad solution" and "shape" in shape.reasons[0]
    start = time.perf_counter()                                    # the program and the child it spawned are killed
    slow = grade("import subprocess, sys; subprocess.run([sys.executable, '-c', 'import time; time.sleep(120)'])",
                 timeout=2)
    assert slow.result == "timeout" and time.perf_counter() - start < 60
    gone = run_suite("/nonexistent/solver {instance} {solution}", suite=suite, entries=one)[0]
    assert gone.result == "crash" and "cannot start" in gone.reasons[0]


def test_commands_are_split_like_a_shell_with_quoted_paths(tmp_path, capsys):
    argv = command_argv("julia --project=. solve.jl {instance} -o {solution}", tmp_path / "my dir" / "a.npz", "s b.npz")
    assert argv == ["julia", "--project=.", "solve.jl", str(tmp_path / "my dir" / "a.npz"), "-o", "s b.npz"]
    # a placeholder inside a quoted argument: the path, spaces and quotes included, stays in that argument
    argv = command_argv("""matlab -batch "f('{instance}','{solution}')" """, "my dir/a.npz", "{instance}'s.npz")
    assert argv == ["matlab", "-batch", "f('my dir/a.npz','{instance}'s.npz')"]
    with pytest.raises(ValueError, match="placeholders"):
        command_argv("solve {instance}", "a", "b")
    with pytest.raises(ValueError, match="split"):
        command_argv("solve '{instance} {solution}", "a", "b")
    assert main(["suite", "run", "--command", "solve {instance}"]) == 2
    assert "{solution}" in capsys.readouterr().err
    assert main(["suite", "run", "--command", OUR_SOLVER, "--problems", "maxcut"]) == 2


def test_suite_list_and_export_to_a_directory_that_runs(tmp_path, capsys):
    assert main(["suite", "list", "--problems", "mvu/slack", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["group"] for r in listed["instances"]] == ["mvu/slack"] * 5
    out = tmp_path / "export"
    assert main(["suite", "export", str(out), "--sdpa", "--problems", "mvu_oos", "--instances", "*swiss*"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md", MANIFEST, "mvu_oos-swiss-k12.dat-s", "mvu_oos-swiss-k12.npz", "mvu_oos-swiss-k3.dat-s",
        "mvu_oos-swiss-k3.npz"]
    capsys.readouterr()
    assert main(["suite", "run", "--suite", str(out), "--command", OUR_SOLVER]) == 0
    assert "2/2 passed" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------- SDPA
def parse_sdpa(path: Path):
    """A small independent reader of SDPA sparse files: (c, block sizes, entries (matno, blk, i, j, value))."""
    lines = [line for line in path.read_text().splitlines() if line.strip() and line.lstrip()[0] not in "\"*"]
    m, n_blocks = int(lines[0].split()[0]), int(lines[1].split()[0])
    sizes = [int(s) for s in lines[2].replace(",", " ").replace("{", " ").replace("}", " ").split()[:n_blocks]]
    c = np.array(lines[3].split()[:m], dtype=float)
    table = np.loadtxt(lines[4:], ndmin=2)
    return c, sizes, table


def solve_sdpa_dual(c, sizes, table):
    """CVXPY: maximise F_0 • Y s.t. F_i • Y = c_i, Y ⪰ 0 (SDPA's (D)); returns the value and Y's blocks."""
    total, blocks = 0, []
    for number, size in enumerate(sizes, start=1):
        rows = table[table[:, 1] == number]
        k, i, j, v = rows[:, 0].astype(int), rows[:, 2].astype(int) - 1, rows[:, 3].astype(int) - 1, rows[:, 4]
        if size > 0:
            Y = cp.Variable((size, size), PSD=True)
            off = i != j                                           # an upper entry stands for (i, j) and (j, i)
            A = sp.csr_matrix((np.concatenate([v, v[off]]), (np.concatenate([k, k[off]]),
                               np.concatenate([i * size + j, (j * size + i)[off]]))), shape=(len(c) + 1, size * size))
            total = total + A @ cp.reshape(Y, size * size, order="C")
        else:
            Y = cp.Variable(-size, nonneg=True)
            total = total + sp.csr_matrix((v, (k, i)), shape=(len(c) + 1, -size)) @ Y
        blocks.append(Y)
    problem = cp.Problem(cp.Maximize(total[0]), [total[1:] == c])
    problem.solve(solver="CLARABEL")
    # equality MVU on a rigid graph has no interior point (Sec. 3.1.12): Clarabel may stop at
    # optimal_inaccurate; the value and the verifier's check of Y's block 1 below still decide
    assert problem.status in ("optimal", "optimal_inaccurate"), problem.status
    return problem.value, [Y.value for Y in blocks]


def solve_sdpa_primal(c, sizes, table):
    """CVXPY: minimise cᵀx s.t. Σ x_i F_i − F_0 ⪰ 0 (SDPA's (P))."""
    x = cp.Variable(len(c))
    constraints = []
    for number, size in enumerate(sizes, start=1):
        rows = table[table[:, 1] == number]
        k, i, j, v = rows[:, 0].astype(int), rows[:, 2].astype(int) - 1, rows[:, 3].astype(int) - 1, rows[:, 4]
        if size > 0:                                               # vec(Σ x_k F_k − F_0), both triangles
            off = i != j
            place = np.concatenate([i * size + j, (j * size + i)[off]])
            F = sp.csr_matrix((np.concatenate([v, v[off]]), (place, np.concatenate([k, k[off]]))),
                              shape=(size * size, len(c) + 1))
            S = cp.reshape(F[:, 1:] @ x - F[:, 0].toarray().ravel(), (size, size), order="C")
            constraints.append(0.5 * (S + S.T) >> 0)
        else:                                                      # the diagonal of a diagonal block
            F = sp.csr_matrix((v, (i, k)), shape=(-size, len(c) + 1))
            constraints.append(F[:, 1:] @ x - F[:, 0].toarray().ravel() >= 0)
    problem = cp.Problem(cp.Minimize(c @ x), constraints)
    problem.solve(solver="CLARABEL")
    assert problem.status == "optimal", problem.status
    return problem.value


SDPA_CASES = ["numax-squares5", "numax_class-shapes6", "numax_class-clusters3x8-points", "lmnn-clusters3x6",
              "lmnn_multi-clusters3x6", "lmnn_multi-iris8",
              "mvu-equality-trefoil12", "mvu-inequality-trefoil12", "mvu-slack-trefoil12", "mvu-min_trace-trefoil12",
              "mvu_oos-swiss-k3", "mvu_oos-gaussian3d-k10"]


@pytest.mark.parametrize("name", SDPA_CASES)
def test_sdpa_export_solved_by_cvxpy_recovers_the_stored_optimum(suite, name, tmp_path, capsys):
    entry = entry_named(suite, name)
    out = tmp_path / f"{name}.dat-s"
    assert main(["export", str(entry.path), "--format", "sdpa", "--out", str(out)]) == 0
    assert "SDPA optimal value" in capsys.readouterr().out
    c, sizes, table = parse_sdpa(out)
    value, blocks = solve_sdpa_dual(c, sizes, table)
    expected = -entry.optimum if get_problem(entry.problem).sense == "min" else entry.optimum
    assert expected == sdpa_optimum(entry.problem, entry.optimum)
    assert abs(value - expected) <= 1e-5 * max(abs(expected), 1.0), (value, expected)
    # block 1 of Y is the instance's matrix variable (blocks 1..C for a stack of C matrices): an optimal
    # solution by our verifier
    instance = entry.load()
    shape = instance.variable_shape
    matrix = np.stack(blocks[:shape[0]]) if len(shape) == 3 else blocks[0]
    cert = verify_solution(instance, matrix, tolerances=Tolerances(objective=1e-5, feasibility=1e-6, psd=1e-6))
    assert cert.passed, cert.reasons
    if name in ("numax-squares5", "mvu-inequality-trefoil12", "mvu_oos-swiss-k3", "lmnn_multi-clusters3x6"):
        # (P), the LMI side
        primal = solve_sdpa_primal(c, sizes, table)
        assert abs(primal - expected) <= 1e-5 * max(abs(expected), 1.0)


def test_sdpa_files_round_trip_and_bad_files_are_refused(suite, tmp_path):
    problem = to_sdpa(entry_named(suite, "mvu-slack-swiss10").load())
    path = tmp_path / "a.dat-s"
    write_sdpa(problem, path)
    back = read_sdpa(path)
    for field in ("c", "matno", "block", "row", "col", "value"):
        assert np.array_equal(getattr(back, field), getattr(problem, field))
    assert back.block_sizes == problem.block_sizes and back.comments == problem.comments
    # the example of the SDPA manual: punctuation, words after numbers, a lower-triangle entry
    example = ('"Example 1: mDim = 3, nBLOCK = 1, {2}"\n   3  =  mDIM\n   1  =  nBOLCK\n   2  = bLOCKsTRUCT\n'
               '{48, -8, 20}\n0 1 1 1 -11\n0 1 2 2 23\n1 1 1 1 10\n1 1 1 2 4\n2 1 2 2 -8\n3 1 2 1 -8\n3 1 2 2 -2\n')
    (tmp_path / "example.dat-s").write_text(example)
    read = read_sdpa(tmp_path / "example.dat-s")
    assert read.m == 3 and read.block_sizes == (2,) and np.array_equal(read.c, [48, -8, 20])
    assert np.array_equal(read.block_matrix(3, 1), [[0, -8], [-8, -2]])
    for bad, match in (("1\n1\n-2\n1\n1 1 1 2 1.0\n", "off-diagonal"), ("1\n1\n2\n1\n1 1 1 1 1\n1 1 1 1 2\n", "twice"),
                       ("2\n1\n2\n1\n", "needs 2 entries"), ("1\n1\n2\n1\n1 1 3 1 1\n", "outside"),
                       ("1\n1\n2\n1\n1 1 1 1\n", "5 numbers")):
        (tmp_path / "bad.dat-s").write_text(bad)
        with pytest.raises(ValueError, match=match):
            read_sdpa(tmp_path / "bad.dat-s")


def test_sdpa_export_refuses_huge_files_and_unknown_problems(suite, tmp_path, capsys):
    entry = entry_named(suite, "numax-digits30-points")
    with pytest.raises(ValueError, match="max_entries"):
        to_sdpa(entry.load(), max_entries=1000)
    assert main(["export", str(entry.path), "--out", str(tmp_path / "x.dat-s"), "--max-entries", "1000"]) == 2
    with pytest.raises(ValueError, match="unknown problem"):
        to_sdpa(object())


# --------------------------------------------------------------------------- CVXPY-free verifier
def test_verifier_and_grading_run_with_cvxpy_blocked(suite, tmp_path):
    entry = entry_named(suite, "numax-squares5")
    solution = tmp_path / "sol.npz"
    assert main(["solve", str(entry.path), "--out", str(solution)]) == 0
    bad = tmp_path / "bad.npz"
    with np.load(solution) as data:
        np.savez(bad, P=data["P"] - 0.01 * np.eye(data["P"].shape[0]))
    script = f"""
import sys
sys.modules["cvxpy"] = None                       # any import of CVXPY now raises ImportError
from sdpembed.cli import main
from sdpembed.io import load_instance
from sdpembed.validation.suite import load_suite, grade_solution
from sdpembed.io import read_solution
from sdpembed.validation.verify import verify_solution
instance = load_instance({str(entry.path)!r})
cert = verify_solution(instance, read_solution({str(solution)!r}, instance))
assert cert.passed and cert.optimum_source == "stored in the instance", cert
assert not verify_solution(instance, read_solution({str(bad)!r}, instance)).passed
suite = load_suite()
entry = [e for e in suite.entries if e.name == {entry.name!r}][0]
assert grade_solution(entry, {str(solution)!r}, suite.tolerances).result == "pass"
assert main(["verify", {str(entry.path)!r}, {str(solution)!r}]) == 0
assert main(["verify", {str(entry.path)!r}, {str(bad)!r}]) == 1
assert not [name for name in sys.modules if name.startswith("sdpembed.formulations")]
print("verified without CVXPY")
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "verified without CVXPY" in run.stdout


def test_verify_solution_needs_a_known_optimum_unless_asked_to_compute_it(suite):
    instance = entry_named(suite, "lmnn-clusters3x6").load()
    bare = type(instance).from_arrays({k: v for k, v in instance.to_arrays().items() if k != "optimum"})
    result = solve(bare)
    cert = verify_solution(bare, Solution(result.solution))
    assert not cert.passed and "optimum is unknown" in cert.reasons[-1]
    computed = verify_solution(bare, result.solution, ground_truth="CLARABEL")
    assert computed.passed and "computed with CVXPY" in computed.optimum_source
    given = verify_solution(bare, result.solution, optimum=instance.optimum)
    assert given.passed and given.optimum == instance.optimum


def test_verify_cli_on_a_suite_instance_reports_the_stored_optimum(suite, tmp_path, capsys):
    entry = entry_named(suite, "mvu-min_trace-swiss10")
    solution = tmp_path / "sol.npz"
    assert main(["solve", str(entry.path), "--out", str(solution)]) == 0
    capsys.readouterr()
    assert main(["verify", str(entry.path), str(solution), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["optimum_source"] == "stored in the instance" and report["optimum"] == entry.optimum
    assert report["psd_violation"] <= 1e-6 and load_instance(entry.path).optimum == entry.optimum
