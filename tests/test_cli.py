"""The command line end to end: make-instance → solve → verify, bad input, the demo."""

import json
import subprocess
import sys

import numpy as np
import pytest

from sdpembed.cli import main


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
    verified = run("verify", str(instance_file), str(solution))
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
