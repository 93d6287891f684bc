"""The command line end to end: make-instance → solve → verify, bad input, the demo."""

import json
import subprocess
import sys

import numpy as np
import pytest

from sdpembed.cli import main

pytestmark = pytest.mark.e2e


def run(*args):
    """Run ``python -m sdpembed`` in a subprocess, as a user would."""
    return subprocess.run([sys.executable, "-m", "sdpembed", *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def instance_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "squares.npz"
    assert main(["make-instance", "numax", "--dataset", "squares", "--image-size", "7", "--shape-size", "3",
                 "--delta", "0.1", "--out", str(path)]) == 0
    return path


def test_solve_then_verify_passes(instance_file, tmp_path):
    solution = tmp_path / "sol.npz"
    solved = run("solve", str(instance_file), "--out", str(solution), "--json")
    assert solved.returncode == 0, solved.stderr
    summary = json.loads(solved.stdout)
    assert summary["status"] == "optimal" and summary["method"] == "admm"
    with np.load(solution, allow_pickle=False) as data:
        assert data["P"].shape == (49, 49) and float(data["dual_bound"]) <= summary["objective"]
        P = data["P"]
    # the solution carries its multipliers: the bound is proved from them, CVXPY is not asked
    verified = run("verify", str(instance_file), str(solution))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "verdict            PASS" in verified.stdout
    assert "from the solution's multipliers, checked here" in verified.stdout
    assert "CVXPY" not in verified.stdout
    # the matrix alone: the optimum is computed with the CVXPY ground truth
    bare = tmp_path / "bare.npz"
    np.savez(bare, P=P)
    verified = run("verify", str(instance_file), str(bare))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "verdict            PASS" in verified.stdout and "computed with CVXPY/CLARABEL" in verified.stdout


def test_verify_fails_on_perturbed_solution(instance_file, tmp_path):
    solution = tmp_path / "sol.npz"
    assert main(["solve", str(instance_file), "--out", str(solution)]) == 0
    with np.load(solution) as data:
        P = data["P"]
    rng = np.random.default_rng(0)
    E = rng.standard_normal(P.shape) * 1e-3
    bad = tmp_path / "bad.npz"
    np.savez(bad, P=P + E + E.T)
    result = run("verify", str(instance_file), str(bad), "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["passed"] is False and report["reasons"]


def test_cvxpy_method_and_stored_optimum(instance_file, tmp_path, capsys):
    solution = tmp_path / "cvx.npz"
    assert main(["solve", str(instance_file), "--method", "cvxpy", "--solver", "SCS", "--out", str(solution)]) == 0
    # an instance that stores its optimum is verified without recomputing it
    from sdpembed import load_instance

    instance = load_instance(instance_file)
    stored = tmp_path / "stored.npz"
    arrays = instance.to_arrays()
    with np.load(solution) as data:
        arrays["optimum"] = np.array(float(np.trace(data["P"])))
    np.savez(stored, **arrays)
    capsys.readouterr()
    assert main(["verify", str(stored), str(solution)]) == 0
    assert "stored in the instance" in capsys.readouterr().out


def test_ignored_options_warn(instance_file, capsys):
    assert main(["solve", str(instance_file), "--solver", "SCS"]) == 0
    assert "--solver ignored" in capsys.readouterr().err


@pytest.mark.parametrize("flag, said", [("--cpu-time-limit", "CPU-time limit of 0s"),
                                        ("--time-limit", "time limit of 0s")])
@pytest.mark.parametrize("problem", ["numax", "numax-cg", "mvu", "lmnn", "lmnn_multi"])
def test_solve_time_limits(instance_file, tmp_path, capsys, flag, said, problem):
    """A spent time limit stops every solver that takes one (NuMax's ADMM through its ``stopping``,
    column generation after its first round): the run ends ``max_iterations`` (exit 1), its
    message names the limit, and a generous limit changes nothing."""
    method = ["--method", "cg"] if problem == "numax-cg" else []
    if problem == "numax":
        path = instance_file
    elif problem == "numax-cg":     # all pairs of 120 points: more than one round
        path = tmp_path / "points.npz"
        assert main(["make-instance", "numax", "--dataset", "gaussian", "--n-points", "120", "--dim", "8", "--points",
                     "--out", str(path)]) == 0
    else:
        path = tmp_path / f"{problem}.npz"
        made = (["mvu", "--dataset", "swiss_roll", "--n-points", "40", "--k", "5", "--variant", "inequality"]
                if problem == "mvu" else [problem, "--dataset", "digits", "--n-points", "60", "--k", "3"])
        assert main(["make-instance", *made, "--out", str(path)]) == 0
    capsys.readouterr()
    assert main(["solve", str(path), *method, flag, "0", "--json"]) == 1
    stopped = json.loads(capsys.readouterr().out)
    assert stopped["status"] == "max_iterations" and said in stopped["message"]
    if not problem.startswith("lmnn"):    # (LMNN's full solve of digits takes seconds: tests/solvers/lmnn has it)
        assert main(["solve", str(path), *method, flag, "600", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["status"] == "optimal"


def test_solve_time_limit_a_method_cannot_keep_is_bad_input(instance_file, capsys):
    """A limit the method would not keep is refused (exit 2) rather than run without it."""
    assert main(["solve", str(instance_file), "--method", "cvxpy", "--cpu-time-limit", "5"]) == 2
    assert "--cpu-time-limit is not taken by method cvxpy" in one_error_line(capsys, "solve")


def test_solve_gap_tol_reaches_the_solver_or_is_refused(tmp_path, capsys):
    """``--gap-tol`` is the certified solvers' stopping gap: a loose one ends the same solve optimal in fewer
    iterations with a gap within it; a method without one (CVXPY) refuses it (exit 2)."""
    path = tmp_path / "mvu.npz"
    assert main(["make-instance", "mvu", "--dataset", "swiss_roll", "--n-points", "40", "--k", "5", "--variant",
                 "inequality", "--out", str(path)]) == 0
    capsys.readouterr()
    runs = {}
    for tol in ("1e-7", "0.05"):
        assert main(["solve", str(path), "--method", "ipm", "--gap-tol", tol, "--json"]) == 0
        runs[tol] = json.loads(capsys.readouterr().out)
        assert runs[tol]["status"] == "optimal" and 0 <= runs[tol]["relative_gap"] <= float(tol)
    assert runs["0.05"]["iterations"] < runs["1e-7"]["iterations"]
    assert main(["solve", str(path), "--method", "cvxpy", "--gap-tol", "1e-5"]) == 2
    assert "--gap-tol is not taken by method cvxpy" in one_error_line(capsys, "solve")


def test_point_form_instance(tmp_path):
    path = tmp_path / "points.npz"
    assert main(["make-instance", "numax", "--dataset", "gaussian", "--n-points", "12", "--dim", "5",
                 "--points", "--out", str(path)]) == 0
    solution = tmp_path / "sol.npz"
    assert main(["solve", str(path), "--out", str(solution)]) == 0
    assert main(["verify", str(path), str(solution)]) == 0


def test_large_point_form_instance_is_verified_by_its_dual_multipliers(tmp_path, capsys):
    """Beyond CVXPY's reach (20,100 pairs) verify proves the gap from the solution's multipliers."""
    path = tmp_path / "large.npz"
    assert main(["make-instance", "numax", "--dataset", "gaussian", "--n-points", "201", "--dim", "6",
                 "--delta", "0.2", "--points", "--out", str(path)]) == 0
    solution = tmp_path / "sol.npz"
    assert main(["solve", str(path), "--out", str(solution)]) == 0
    with np.load(solution) as data:
        arrays = dict(data)
    assert arrays["dual_pairs"].shape == (len(arrays["dual_y"]), 2) and str(arrays["method"]) == "cg"
    capsys.readouterr()
    assert main(["verify", str(path), str(solution)]) == 0
    out = capsys.readouterr().out
    assert "verified dual bound" in out and "bracketed by the verified dual bound" in out and "PASS" in out

    # without the multipliers nothing proves the objective: FAIL, with the reason
    bare = tmp_path / "bare.npz"
    np.savez(bare, P=arrays["P"])
    assert main(["verify", str(path), str(bare)]) == 1
    assert "could not be checked" in capsys.readouterr().out
    # a worse P, with the same (honest) multipliers, is caught by the bracket
    worse = tmp_path / "worse.npz"
    np.savez(worse, P=1.01 * arrays["P"], dual_pairs=arrays["dual_pairs"], dual_y=arrays["dual_y"])
    assert main(["verify", str(path), str(worse)]) == 1
    # inflated multipliers are rescaled to dual feasibility: still a valid bound, still a PASS
    inflated = tmp_path / "inflated.npz"
    np.savez(inflated, P=arrays["P"], dual_pairs=arrays["dual_pairs"], dual_y=10.0 * arrays["dual_y"])
    assert main(["verify", str(path), str(inflated)]) == 0
    half = tmp_path / "half.npz"
    np.savez(half, P=arrays["P"], dual_y=arrays["dual_y"])
    assert main(["verify", str(path), str(half)]) == 2


def test_lmnn_instance_from_a_labelled_dataset(tmp_path, capsys):
    path = tmp_path / "lmnn.npz"
    assert main(["make-instance", "lmnn", "--dataset", "digits", "--n-points", "100", "--k", "2", "--mu", "0.4",
                 "--out", str(path)]) == 0
    from sdpembed import load_instance

    instance = load_instance(path)
    assert instance.problem == "lmnn" and instance.targets.shape == (100, 2) and instance.mu == 0.4
    assert main(["make-instance", "lmnn", "--dataset", "squares", "--out", str(path)]) == 2   # no labels


@pytest.mark.parametrize("dataset", ["disks", "blob", "mnist", "digits"])
def test_make_instance_datasets(tmp_path, dataset, capsys):
    path = tmp_path / f"{dataset}.npz"
    extra = ["--image-size", "8", "--shape-size", "4", "--sigma", "2"] if dataset in ("disks", "blob") else []
    assert main(["make-instance", "numax", "--dataset", dataset, "--n-secants", "30", "--n-points", "20",
                 *extra, "--out", str(path)]) == 0
    assert "30 constraints (secants)" in capsys.readouterr().out


@pytest.mark.parametrize("variant", ["equality", "inequality", "slack", "min_trace"])
def test_make_instance_mvu_on_a_swiss_roll(tmp_path, variant, capsys):
    """Every MVU variant from the command line, on the swiss roll (the instances of issue 27): the
    same graph as ``MVUInstance.from_points(swiss_roll(n, random_state=seed)[0], k, variant)``."""
    from sdpembed import MVUInstance, load_instance
    from sdpembed.datasets import swiss_roll

    path = tmp_path / f"{variant}.npz"
    omega = ["--omega", "0.9"] if variant == "slack" else []
    assert main(["make-instance", "mvu", "--dataset", "swiss_roll", "--n-points", "40", "--k", "5",
                 "--variant", variant, *omega, "--random-state", "3", "--out", str(path)]) == 0
    assert "40 points in dimension 3" in capsys.readouterr().out
    made = load_instance(path)
    expected = MVUInstance.from_points(swiss_roll(40, random_state=3)[0], 5, variant,
                                       omega=0.9 if variant == "slack" else None)
    assert made.variant == variant and made.omega == expected.omega
    np.testing.assert_array_equal(made.edges, expected.edges)
    np.testing.assert_array_equal(made.sqdist, expected.sqdist)


def test_make_instance_mvu_graph_options(tmp_path, capsys):
    """``--no-angles`` and ``--link`` build the graph of the suite's equality instances."""
    from sdpembed import MVUInstance, load_instance
    from sdpembed.datasets import swiss_roll

    path = tmp_path / "eq.npz"
    assert main(["make-instance", "mvu", "--dataset", "swiss_roll", "--n-points", "40", "--noise", "0.1", "--k", "3",
                 "--no-angles", "--link", "--out", str(path)]) == 0
    expected = MVUInstance.from_points(swiss_roll(40, noise=0.1, random_state=0)[0], 3, angles=False, link=True,
                                       random_state=0)
    np.testing.assert_array_equal(load_instance(path).edges, expected.edges)
    with_angles = MVUInstance.from_points(swiss_roll(40, noise=0.1, random_state=0)[0], 3)
    assert with_angles.n_constraints > expected.n_constraints


def test_make_instance_mvu_slack_needs_omega(tmp_path, capsys):
    path = tmp_path / "slack.npz"
    assert main(["make-instance", "mvu", "--dataset", "swiss_roll", "--variant", "slack", "--out", str(path)]) == 2
    assert "omega" in capsys.readouterr().err and not path.exists()


def test_bad_input_exit_code_2(tmp_path, instance_file):
    missing = run("solve", str(tmp_path / "nope.npz"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    no_var = tmp_path / "novar.npz"
    np.savez(no_var, Q=np.eye(2))
    wrong = run("verify", str(instance_file), str(no_var))
    assert wrong.returncode == 2 and "no array 'P'" in wrong.stderr
    bad_shape = tmp_path / "shape.npz"
    np.savez(bad_shape, P=np.eye(3))
    assert run("verify", str(instance_file), str(bad_shape)).returncode == 2
    assert main(["make-instance", "numax", "--delta", "2", "--out", str(tmp_path / "x.npz")]) == 2
    bad_bound = tmp_path / "bound.npz"
    np.savez(bad_bound, P=np.eye(49), dual_bound=np.array([1.0, 2.0]))
    assert main(["verify", str(instance_file), str(bad_bound)]) == 2
    assert main(["solve", str(instance_file), "--method", "newton"]) == 2


def test_demo_and_console_script():
    result = subprocess.run(["sdpembed", "demo", "--image-size", "8", "--square-size", "3", "--n-secants", "200"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    for word in ("rank M", "certified bound", "PCA", "Gaussian", "NuMax (ADMM)"):
        assert word in result.stdout


# ------------------------------------------------------------------------------ embed
@pytest.fixture(scope="module")
def squares_rows(tmp_path_factory):
    from sdpembed.datasets import translating_squares

    path = tmp_path_factory.mktemp("embed") / "squares.npy"
    np.save(path, translating_squares(7, 3))
    return path


def test_embed_pca_at_a_dimension_is_the_pca_map(squares_rows, tmp_path):
    from sdpembed.linear import pca_projection

    out = tmp_path / "psi.npy"
    assert main(["embed", "pca", str(squares_rows), "--dim", "5", "--out", str(out)]) == 0
    Psi = np.load(out)
    expected = pca_projection(np.load(squares_rows), 5)
    np.testing.assert_allclose(np.abs(Psi @ expected.T), np.eye(5), atol=1e-8)   # same rows up to sign


@pytest.mark.parametrize("method", ["pca", "adagio", "numax"])
def test_embed_at_a_delta_meets_it_on_the_training_secants(squares_rows, tmp_path, capsys, method):
    from sdpembed.validation import SecantSet

    out = tmp_path / "psi.npy"
    assert main(["embed", method, str(squares_rows), "--delta", "0.3", "--out", str(out), "--random-state", "0",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    Psi = np.load(out)
    delta = SecantSet(X=np.load(squares_rows)).isometry_constant(Psi)
    assert delta <= 0.3 + 1e-5 and abs(report["isometry_constant"] - delta) <= 1e-12
    assert report["n_components"] == Psi.shape[0] and report["n_features"] == 49


def test_embed_bad_input(squares_rows, tmp_path, capsys):
    out = str(tmp_path / "psi.npy")
    assert main(["embed", "lda", str(squares_rows), "--dim", "2", "--out", out]) == 2           # labels missing
    assert "labels" in capsys.readouterr().err
    assert main(["embed", "nosuch", str(squares_rows), "--dim", "2", "--out", out]) == 2
    assert main(["embed", "pca", str(tmp_path / "missing.npy"), "--dim", "2", "--out", out]) == 2
    with pytest.raises(SystemExit):                                                               # both targets
        main(["embed", "pca", str(squares_rows), "--dim", "2", "--delta", "0.1", "--out", out])


# ------------------------------------------------------------------ bad files and outputs (issue 18)
def one_error_line(capsys, command: str) -> str:
    """The single line a command printed on stderr for bad input (and no traceback)."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith(f"sdpembed {command}: error: "), err
    return lines[0]


def unreadable_file(path, kind: str, good):
    """A file of ``kind`` at ``path`` that is not a readable instance or solution archive."""
    data = good.read_bytes()
    if kind == "directory":
        path.mkdir()
    elif kind == "objects":
        np.savez(path, problem=np.array("numax"), delta=np.array(0.1), X=np.array([[1, "a"]], dtype=object),
                 allow_pickle=True)
    elif kind == "member":
        import zipfile

        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("problem.npy", data[:0])
            archive.writestr("notes.txt", "hello")
    else:
        path.write_bytes({"empty": b"", "truncated": data[: len(data) // 2], "text": b"delta = 0.1\n",
                          "binary": bytes(range(7, 250)), "npy": _npy(np.eye(3))}[kind])
    return path


def _npy(array) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


UNREADABLE = {"empty": "is empty", "truncated": "truncated or corrupt zip", "text": "is a text file",
              "binary": "is binary data", "npy": "is a single .npy array", "directory": "is a directory",
              "objects": "holds Python objects", "member": "'problem' is not a valid .npy array"}


@pytest.mark.parametrize("kind", sorted(UNREADABLE))
@pytest.mark.parametrize("command", ["solve", "verify", "export", "verify-solution"])
def test_unreadable_files_exit_2_with_one_line(instance_file, tmp_path, capsys, kind, command):
    bad = unreadable_file(tmp_path / "bad.npz", kind, instance_file)
    good_solution = tmp_path / "sol.npz"
    np.savez(good_solution, P=np.eye(49))
    argv = {"solve": ["solve", str(bad)], "verify": ["verify", str(bad), str(good_solution)],
            "export": ["export", str(bad), "--out", str(tmp_path / "x.dat-s")],
            "verify-solution": ["verify", str(instance_file), str(bad)]}[command]
    assert main(argv) == 2
    line = one_error_line(capsys, argv[0])
    assert str(bad) in line and UNREADABLE[kind] in line and "pickled" not in line


def test_solve_max_iter_on_a_point_form_instance(tmp_path, capsys):
    """--max-iter limits each restricted ADMM solve of column generation (the default for X)."""
    from sdpembed import NuMaxInstance, solve

    path = tmp_path / "points.npz"
    assert main(["make-instance", "numax", "--dataset", "gaussian", "--n-points", "12", "--dim", "5",
                 "--points", "--out", str(path)]) == 0
    capsys.readouterr()
    assert main(["solve", str(path), "--max-iter", "3000", "--json"]) in (0, 1)     # 1: not converged in 3000
    summary = json.loads(capsys.readouterr().out)
    assert summary["method"] == "cg" and summary["iterations"] > 0
    instance = NuMaxInstance(delta=0.1, X=np.random.default_rng(0).standard_normal((12, 5)))
    result = solve(instance, max_iter=4)
    assert result.method == "cg" and result.status != "optimal"
    assert 0 < max(result.history["admm_iterations"]) <= 4
    with pytest.raises(ValueError, match="method 'cg' of 'numax' has no option 'iterations'"):
        solve(instance, iterations=4)
    with pytest.raises(ValueError, match="method 'admm' of 'numax' has no option 'nonsense'"):
        solve(instance, "admm", nonsense=1)


@pytest.mark.parametrize("command", ["solve", "export", "embed", "make-instance"])
def test_output_directory_is_checked_before_any_work(instance_file, squares_rows, tmp_path, capsys, monkeypatch,
                                                     command):
    import sdpembed.cli as cli

    def no_work(*args, **kwargs):
        raise AssertionError("work started before the output was checked")

    for name in ("solve", "load_instance", "_dataset", "_read_rows"):
        monkeypatch.setattr(cli, name, no_work)
    out = tmp_path / "missing" / "out"
    argv = {"solve": ["solve", str(instance_file), "--out", str(out)],
            "export": ["export", str(instance_file), "--out", str(out)],
            "embed": ["embed", "pca", str(squares_rows), "--dim", "2", "--out", str(out)],
            "make-instance": ["make-instance", "numax", "--out", str(out)]}[command]
    assert main(argv) == 2
    line = one_error_line(capsys, command)
    assert "--out" in line and "does not exist" in line and str(tmp_path / "missing") in line
    assert not (tmp_path / "missing").exists()


def test_printed_output_paths_are_the_files_written(instance_file, squares_rows, tmp_path, capsys):
    assert main(["solve", str(instance_file), "--out", str(tmp_path / "sol")]) == 0
    assert f"written to {tmp_path / 'sol.npz'}" in capsys.readouterr().out
    assert (tmp_path / "sol.npz").is_file() and not (tmp_path / "sol").exists()
    assert main(["make-instance", "numax", "--image-size", "5", "--shape-size", "2", "--out", str(tmp_path / "i")]) == 0
    assert f"to {tmp_path / 'i.npz'}:" in capsys.readouterr().out
    assert main(["embed", "pca", str(squares_rows), "--dim", "2", "--out", str(tmp_path / "psi")]) == 0
    assert f"wrote {tmp_path / 'psi.npy'}:" in capsys.readouterr().out
    assert np.load(tmp_path / "psi.npy").shape == (2, 49)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i.npz", "psi.npy", "sol.npz"]


def test_an_interrupted_write_leaves_the_old_file_and_no_partial_one(instance_file, tmp_path, capsys, monkeypatch):
    out = tmp_path / "sol.npz"
    out.write_bytes(b"the previous solution")

    def interrupted(file, **arrays):
        with open(file, "wb") as handle:
            handle.write(b"PK\x03\x04 half an archive")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", interrupted)
    assert main(["solve", str(instance_file), "--out", str(out)]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert out.read_bytes() == b"the previous solution"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sol.npz"]


def test_atomic_write_replaces_only_on_success(tmp_path):
    import os

    from sdpembed._files import atomic_write

    target = tmp_path / "a.txt"
    with pytest.raises(RuntimeError), atomic_write(target) as temporary:
        temporary.write_text("partial")
        raise RuntimeError("disk full")
    assert not target.exists() and not list(tmp_path.iterdir())
    mask = os.umask(0o022)
    try:
        with atomic_write(target) as temporary:
            assert temporary.parent == tmp_path and temporary.suffix == ".txt"
            temporary.write_text("complete")
    finally:
        os.umask(mask)
    assert target.read_text() == "complete" and (target.stat().st_mode & 0o777) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_a_closed_stdout_exits_quietly():
    """``sdpembed suite list | head -1``: the reader is gone before the output is written."""
    proc = subprocess.Popen([sys.executable, "-m", "sdpembed", "suite", "list"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()                     # a real pipe whose reader has exited
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 141
    assert err == "", err


def test_writing_into_a_file_as_a_directory_exits_2(tmp_path, capsys, monkeypatch):
    import sdpembed.validation.suite.build as build  # the command imports it at its start

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert main(["suite", "export", str(blocker), "--problems", "mvu_oos"]) == 2
    assert "exists and is not a directory" in one_error_line(capsys, "suite export")

    def no_build(**kwargs):
        raise AssertionError("the build started before --out was checked")

    monkeypatch.setattr(build, "build_suite", no_build)
    assert main(["suite", "build", "--out", str(blocker / "sub")]) == 2
    assert "cannot be created" in one_error_line(capsys, "suite build")


def test_suite_export_writes_complete_files(tmp_path, capsys):
    out = tmp_path / "new" / "suite"
    assert main(["suite", "export", str(out), "--problems", "mvu_oos", "--sdpa"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert "manifest.json" in names and not [n for n in names if ".part" in n]
    assert len([n for n in names if n.endswith(".dat-s")]) == len([n for n in names if n.endswith(".npz")]) == 5


# ------------------------------------------------------------------ sizes beyond the machine
def test_huge_declared_sizes_are_refused_with_an_estimate(tmp_path, capsys):
    mvu = tmp_path / "mvu.npz"
    np.savez(mvu, problem=np.array("mvu"), edges=np.array([[0, 1], [1, 2]]), sqdist=np.ones(2),
             n=np.array(10**9), variant=np.array("equality"))
    for argv in (["solve", str(mvu)], ["export", str(mvu), "--out", str(tmp_path / "x.dat-s")],
                 ["verify", str(mvu), str(mvu)]):
        assert main(argv) == 2
        line = one_error_line(capsys, argv[0])
        assert "K (1000000000×1000000000 float64)" in line and "GiB" in line and "this machine" in line

    assert main(["make-instance", "numax", "--dataset", "gaussian", "--n-points", str(10**15), "--dim", "3",
                 "--out", str(tmp_path / "g.npz")]) == 2
    assert "GiB for the gaussian points" in one_error_line(capsys, "make-instance")

    # the ADMM on all 449,985,000 pairs of 30,000 points would need an S×S inverse
    points = tmp_path / "points.npz"
    np.savez(points, problem=np.array("numax"), delta=np.array(0.1),
             X=np.random.default_rng(0).standard_normal((30000, 2)))
    assert main(["solve", str(points), "--method", "admm"]) == 2
    assert "least-squares inverse" in one_error_line(capsys, "solve")

    import io

    buffer = io.BytesIO()                           # a header declaring 10^14 floats, and no data
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False, "shape": (10**7, 10**7)})
    header = tmp_path / "X.npy"
    header.write_bytes(buffer.getvalue())
    assert main(["embed", "pca", str(header), "--dim", "2", "--out", str(tmp_path / "psi.npy")]) == 2
    assert "is truncated" in one_error_line(capsys, "embed")
    assert not list(tmp_path.glob("*.part*"))


def test_version(capsys):
    from sdpembed import __version__

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"sdpembed {__version__}"


@pytest.mark.parametrize("problem", ["lmnn", "numax_class"])
def test_make_instance_of_a_labelled_problem_works_with_its_own_defaults(problem, tmp_path, capsys):
    """The default dataset of a problem that needs labels is a labelled one (digits), and its
    default 50 points hold every class often enough for LMNN's k = 3 target neighbours."""
    from sdpembed import load_instance

    path = tmp_path / f"{problem}.npz"
    assert main(["make-instance", problem, "--out", str(path)]) == 0
    assert "50 points in dimension 64" in capsys.readouterr().out
    assert load_instance(path).problem == problem
    lmnn = tmp_path / "lmnn.npz"
    assert main(["make-instance", "lmnn", "--dataset", "digits", "--out", str(lmnn)]) == 0
    assert np.bincount(load_instance(lmnn).y).min() == 5                   # stratified: 5 of each digit


def test_make_instance_refuses_an_mnist_size_it_does_not_have(tmp_path, capsys):
    path = tmp_path / "mnist.npz"
    assert main(["make-instance", "numax", "--dataset", "mnist", "--image-size", "21", "--out", str(path)]) == 2
    assert "--image-size must be one of 28, 20 for --dataset mnist, got 21" in capsys.readouterr().err
    assert not path.exists()
    assert main(["make-instance", "numax", "--dataset", "mnist", "--n-points", "12", "--out", str(path)]) == 0
    assert "12 points in dimension 784" in capsys.readouterr().out            # default 28×28
    assert main(["make-instance", "numax", "--dataset", "mnist", "--n-points", "12", "--image-size", "20",
                 "--out", str(path)]) == 0
    assert "12 points in dimension 400" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["make-instance numax", "embed pca data.npy --dim 2", "demo", "solve i.npz"])
def test_a_bad_seed_names_the_option(command, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*command.split(), "--out", str(tmp_path / "o"), "--random-state", "-5"])
    assert exit_.value.code == 2
    assert "argument --random-state: must be an integer from 0 to 2**32 - 1, got '-5'" in capsys.readouterr().err


def test_two_runs_of_a_point_form_solve_give_the_same_objective_to_the_last_digit(tmp_path):
    """Column generation draws its first pairs at random: the CLI seeds it (--random-state,
    default 0), so two processes print the same objective; another seed is a different run."""
    path = tmp_path / "points.npz"
    assert main(["make-instance", "numax", "--dataset", "gaussian", "--n-points", "120", "--dim", "6",
                 "--delta", "0.2", "--points", "--out", str(path)]) == 0
    runs = [run("solve", str(path), "--json", *extra) for extra in ([], [], ["--random-state", "7"])]
    summaries = [json.loads(r.stdout) for r in runs]
    assert all(r.returncode == 0 for r in runs) and summaries[0]["method"] == "cg"
    assert repr(summaries[0]["objective"]) == repr(summaries[1]["objective"])
    assert summaries[0]["iterations"] == summaries[1]["iterations"]
    assert summaries[2]["objective"] != summaries[0]["objective"]
def test_multi_metric_lmnn_end_to_end(tmp_path, capsys):
    """``lmnn_multi`` through the CLI: make-instance, solve, verify (the optimum passes; a claimed bound
    above the optimum, a suboptimal stack whose file claims the optimum's objective and an indefinite
    stack fail), export."""
    from sdpembed import load_instance, solve
    from sdpembed.validation.suite import load_suite

    made = tmp_path / "digits.npz"
    assert main(["make-instance", "lmnn_multi", "--dataset", "digits", "--n-points", "100", "--k", "2",
                 "--mu", "0.4", "--out", str(made)]) == 0
    digits = load_instance(made)
    assert digits.problem == "lmnn_multi" and digits.variable_shape == (10, 64, 64) and digits.mu == 0.4
    (entry,) = load_suite().select(["lmnn_multi"], ["lmnn_multi-clusters3x6"])
    shipped = entry.load()
    path, solution = tmp_path / "multi.npz", tmp_path / "sol.npz"
    instance = type(shipped)(X=shipped.X, y=shipped.y, targets=shipped.targets, mu=shipped.mu)   # no optimum
    instance.save(path)
    capsys.readouterr()
    assert main(["solve", str(path), "--out", str(solution), "--json"]) == 0
    solved = json.loads(capsys.readouterr().out)
    assert solved["status"] == "optimal" and solved["method"] == "fast" and solved["problem"] == "lmnn_multi"
    arrays = dict(np.load(solution))
    assert arrays["M"].shape == instance.variable_shape and float(arrays["dual_bound"]) <= solved["objective"]
    optimum = shipped.optimum
    assert abs(solved["objective"] - optimum) <= 1e-5 * optimum
    assert abs(solve(instance, "cvxpy").objective - optimum) <= 1e-5 * optimum
    # verify against the CVXPY optimum (the instance stores none), then against the stored one
    assert main(["verify", str(path), str(solution)]) == 0
    assert main(["verify", str(entry.path), str(solution)]) == 0
    capsys.readouterr()
    M, eye = arrays["M"], np.eye(instance.dim)
    wrong = {
        "bound": ({"M": M, "dual_bound": np.array(optimum * 1.01)}, "is not a bound"),
        "claimed objective": ({"M": M + 0.05 * eye, "objective": np.array(optimum)}, "suboptimal"),
        "indefinite": ({"M": M - 0.5 * eye}, "not PSD"),
    }
    for label, (contents, word) in wrong.items():
        file = tmp_path / f"{label.replace(' ', '_')}.npz"
        np.savez(file, **contents)
        assert main(["verify", str(entry.path), str(file), "--json"]) == 1, label
        report = json.loads(capsys.readouterr().out)
        assert report["passed"] is False and any(word in reason for reason in report["reasons"]), report["reasons"]
    np.savez(tmp_path / "flat.npz", M=M[0])
    assert main(["verify", str(entry.path), str(tmp_path / "flat.npz")]) == 2            # not (C, d, d)
    assert "must have shape" in capsys.readouterr().err
    assert main(["export", str(entry.path), "--format", "sdpa", "--out", str(tmp_path / "multi.dat-s")]) == 0


@pytest.mark.parametrize("problem", ["lmnn", "mvu", "mvu_oos"])
def test_solve_verbose_reaches_the_solver(problem, tmp_path, capsys):
    """``solve --verbose K`` reaches the LMNN working-set loop and interior point, the MVU interior point
    and the out-of-sample one; without it the solve prints only its summary."""
    from sdpembed.io import save_instance
    from sdpembed.problems import MVUInstance, MVUOOSInstance

    from ..conftest import tiny_lmnn_instances

    rng = np.random.default_rng(0)
    instance = {
        "lmnn": lambda: tiny_lmnn_instances()["iris"],
        "mvu": lambda: MVUInstance.from_points(rng.standard_normal((16, 3)), 4, "equality", link=True,
                                               random_state=0),
        "mvu_oos": lambda: MVUOOSInstance(Y=rng.standard_normal((5, 2)), sqdist=rng.uniform(0.5, 2.0, 5)),
    }[problem]()
    path = tmp_path / "inst.npz"
    save_instance(instance, path)
    expected = {"lmnn": ("round   1", "    ipm   1"), "mvu": ("mvu ipm: n = 16", "mvu ipm it   1"),
                "mvu_oos": ("oos ipm it   0", "oos ipm it   2")}[problem]
    assert main(["solve", str(path)]) in (0, 1)
    quiet = capsys.readouterr().out
    assert not any(line in quiet for line in expected) and quiet.startswith("problem")
    assert main(["solve", str(path), "--verbose", "2"]) in (0, 1)
    out = capsys.readouterr().out
    assert all(line in out for line in expected)


def test_dask_workers_give_the_local_solution_and_verdict(tmp_path, capsys):
    """--dask-workers N scans all pairs on a local Dask cluster: the same solution as in one process
    (both with one BLAS thread, as Dask's workers run), and the same verdict."""
    pytest.importorskip("distributed")
    import os

    path = tmp_path / "points.npz"
    assert main(["make-instance", "numax", "--dataset", "gaussian", "--n-points", "60", "--dim", "6",
                 "--delta", "0.2", "--points", "--out", str(path)]) == 0
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    solved = {}
    for name, extra in (("local", []), ("dask", ["--dask-workers", "2"])):
        out = tmp_path / f"{name}.npz"
        done = subprocess.run([sys.executable, "-m", "sdpembed", "solve", str(path), "--out", str(out), "--json",
                               *extra], capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stderr
        with np.load(out, allow_pickle=False) as data:
            solved[name] = (json.loads(done.stdout), data["P"].copy())
    assert solved["dask"][0]["status"] == "optimal"
    assert repr(solved["dask"][0]["objective"]) == repr(solved["local"][0]["objective"])
    np.testing.assert_array_equal(solved["dask"][1], solved["local"][1])
    verified = subprocess.run([sys.executable, "-m", "sdpembed", "verify", str(path), str(tmp_path / "dask.npz"),
                               "--dask-workers", "2", "--json"], capture_output=True, text=True, timeout=600, env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert json.loads(verified.stdout)["passed"] is True
    # flags refused before any work: a method that scans no pairs, no workers, both places at once
    secants = tmp_path / "secants.npz"
    assert main(["make-instance", "numax", "--dataset", "gaussian", "--n-points", "12", "--dim", "5",
                 "--out", str(secants)]) == 0
    capsys.readouterr()
    assert main(["solve", str(secants), "--dask-workers", "2"]) == 2
    assert "need a method that scans all pairs" in capsys.readouterr().err
    assert main(["solve", str(path), "--dask-workers", "0"]) == 2
    assert "--dask-workers must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["verify", str(path), str(tmp_path / "dask.npz"), "--dask-workers", "2", "--scheduler", "tcp://x:1"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_embed_scans_on_dask_workers_with_the_local_map(tmp_path, capsys):
    """``embed --dask-workers N`` runs the all-pairs scans of FroMax's column generation on a local Dask
    cluster: the same map Ψ as in one process (both with one BLAS thread); methods that scan no pairs refuse
    the flag before any work."""
    pytest.importorskip("distributed")
    import os

    data = tmp_path / "points.npy"
    np.save(data, np.random.default_rng(3).standard_normal((40, 6)))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    maps = {}
    for name, extra in (("local", []), ("dask", ["--dask-workers", "1"])):
        out = tmp_path / f"{name}.npy"
        done = subprocess.run([sys.executable, "-m", "sdpembed", "embed", "fromax", str(data), "--dim", "4",
                               "--out", str(out), "--json", *extra], capture_output=True, text=True, timeout=600,
                              env=env)
        assert done.returncode == 0, done.stderr
        maps[name] = np.load(out)
    np.testing.assert_array_equal(maps["dask"], maps["local"])
    capsys.readouterr()
    assert main(["embed", "pca", str(data), "--dim", "2", "--out", str(tmp_path / "pca.npy"),
                 "--dask-workers", "1"]) == 2
    assert "need a method that scans all pairs" in capsys.readouterr().err
    assert not (tmp_path / "pca.npy").exists()


def test_make_instance_offers_exactly_the_mvu_variants():
    from sdpembed.cli import MVU_VARIANTS
    from sdpembed.problems import MVUInstance

    assert tuple(MVU_VARIANTS) == tuple(MVUInstance.VARIANTS)


def test_verify_judges_a_tiny_mvu_instance_at_its_scale(tmp_path, capsys):
    """``sdpembed verify`` of an inequality MVU instance scaled by 4^-30 (τ ~ 1e-17): its optimal K scaled alike
    passes, K = 0 fails (it passed the absolute objective floor 1), and the report prints the units."""
    import dataclasses

    from sdpembed._files import save_npz
    from sdpembed.problems import MVUInstance
    from sdpembed.registry import solve

    X = np.random.default_rng(3).standard_normal((10, 3))
    instance = MVUInstance.from_points(X, n_neighbors=4, variant="inequality")
    result = solve(instance, method="ipm")
    tiny = dataclasses.replace(instance, sqdist=np.ldexp(instance.sqdist, -60),
                               optimum=float(np.ldexp(result.objective, -60)))
    path = tiny.save(tmp_path / "tiny.npz")
    right = save_npz(tmp_path / "right.npz", {"K": np.ldexp(result.solution, -60)}, "solution file")
    zero = save_npz(tmp_path / "zero.npz", {"K": np.zeros_like(result.solution)}, "solution file")
    assert main(["verify", str(path), str(right)]) == 0
    out = capsys.readouterr().out
    unit = f"2^{int(np.frexp(tiny.tau)[1]) - 1}"
    assert f"max(|f*|, {unit})" in out and f"max({unit}, largest)" in out
    assert main(["verify", str(path), str(zero)]) == 1
    assert "relative objective error -1" in capsys.readouterr().out
