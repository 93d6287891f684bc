"""The file contract under random damage: instance, solution and data files built from valid ones
with random mutations (missing keys, wrong dtypes, shapes and ndim, NaN/inf, entries at the edges of
the doubles, empty arrays, huge declared sizes, truncated and non-zip files) fed to ``load_instance``,
``read_solution`` and the command line (``solve``, ``verify``, ``export``, ``embed``, ``make-instance``, in-process).

The property: a proper result (exit 0 or 1), or exit 2 with one line on stderr naming the
argument — never an uncaught exception or a traceback, never a partial output file. Some
mutations are legitimately valid (an extra array, ints for floats): then any proper result will do.
"""

from __future__ import annotations

import contextlib
import functools
import io
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdpembed import LMNNInstance, NuMaxClassInstance, NuMaxInstance, load_instance, solve
from sdpembed.cli import main
from sdpembed.datasets import translating_squares
from sdpembed.io import read_solution
from sdpembed.problems import MVUInstance, MVUOOSInstance
from sdpembed.registry import get_problem

pytestmark = pytest.mark.e2e

# 100 examples a test, or the profile's number when it asks for more (HYPOTHESIS_PROFILE=explore)
SETTINGS = settings(max_examples=max(100, settings.default.max_examples), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _base_instances() -> dict[str, object]:
    """One tiny instance of every problem and form (each solves in well under a second)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((8, 3))
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    Xl = rng.standard_normal((9, 2)) + np.repeat(3.0 * np.eye(3, 2), 3, axis=0)
    return {
        "numax": NuMaxInstance.from_points(translating_squares(4, 2), 0.2),
        "numax_points": NuMaxInstance(delta=0.2, X=X),
        "numax_class": NuMaxClassInstance.from_labelled(X, labels, 0.2),
        "numax_class_points": NuMaxClassInstance(delta=0.2, X=X, y=labels),
        "lmnn": LMNNInstance.from_data(Xl, np.repeat([0, 1, 2], 3), k=1),
        "mvu": MVUInstance(edges=np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [0, 5], [0, 2]]),
                           sqdist=np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.5]), n=6),
        "mvu_slack": MVUInstance(edges=np.array([[0, 1], [1, 2], [2, 3]]), sqdist=np.ones(3), n=4, variant="slack",
                                 omega=0.5),
        "mvu_oos": MVUOOSInstance(Y=rng.standard_normal((4, 2)), sqdist=rng.random(4) + 0.5),
    }


@functools.cache
def bases() -> dict[str, tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]:
    """Per base: the arrays of its instance file (with its optimum, so that ``verify`` needs no
    CVXPY) and of a solution file (the variable of a solve)."""
    out = {}
    for name, instance in _base_instances().items():
        result = solve(instance)
        arrays = {**instance.to_arrays(), "optimum": np.array(result.objective)}
        solution = {get_problem(instance.problem).variable: result.solution, "dual_bound": np.array(0.0)}
        out[name] = (arrays, solution)
    return out


# ------------------------------------------------------------------------------- damage
ARRAY_MUTATIONS = ("drop", "complex", "string", "bool", "object", "int", "add_dim", "ravel", "transpose", "empty",
                   "nan", "inf", "negate", "scalar_to_vector", "huge_scalar", "huge_header", "extra_key")
#: Finite arrays at the edges of the doubles: an entry ±1.7e308, all scaled by 1e300 or into subnormals.
EXTREME_MUTATIONS = ("largest", "scale_up", "scale_down")
FILE_MUTATIONS = ("truncate", "garbage", "empty_file", "text", "plain_npy", "directory", "non_npy_member")


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _huge_header(dtype: np.dtype, ndim: int) -> bytes:
    """A .npy member whose header declares an enormous array, with no data behind it."""
    buffer = io.BytesIO()
    shape = (10**7,) * max(ndim, 1)
    np.lib.format.write_array_header_1_0(buffer, {"descr": np.lib.format.dtype_to_descr(dtype),
                                                  "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def mutate_array(array: np.ndarray, how: str, position: int) -> np.ndarray | bytes | None:
    """``array`` damaged ``how`` (None: dropped; bytes: a raw .npy member)."""
    a = np.asarray(array)
    flat = a.reshape(-1)
    numeric = np.ones(a.shape) if a.dtype.kind == "U" else a        # a string changes type through a number
    if how == "drop":
        return None
    if how == "complex":
        return numeric.astype(np.complex128) + 1j
    if how == "string":
        return a.astype(str)
    if how == "bool":
        return numeric.astype(bool)
    if how == "object":
        return a.astype(object)
    if how == "int":
        return numeric.astype(np.int64)
    if how == "add_dim":
        return a[None]
    if how == "ravel":
        return flat
    if how == "transpose":
        return a.T
    if how == "empty":
        return a[:0] if a.ndim else np.zeros(0)
    if how in ("nan", "inf", "negate", "largest"):
        if a.dtype.kind != "f" or a.size == 0:
            return a
        out = a.copy().reshape(-1)
        out[position % out.size] = {"nan": np.nan, "inf": np.inf, "negate": -abs(out[position % out.size]) - 1,
                                    "largest": (-1.0) ** position * 1.7e308}[how]
        return out.reshape(a.shape)
    if how in ("scale_up", "scale_down"):           # finite, at the edges of the doubles: 1e300, subnormal
        return a * (1e300 if how == "scale_up" else 1e-310) if a.dtype.kind == "f" else a
    if how == "scalar_to_vector":
        return np.stack([a, a]) if a.ndim == 0 else a
    if how == "huge_scalar":
        return np.array(10**9) if a.ndim == 0 and a.dtype.kind in "iuf" else a
    if how == "huge_header":
        return _huge_header(a.dtype if a.dtype.kind != "U" else np.dtype("<f8"), a.ndim)
    raise AssertionError(how)


def write_npz(path: Path, arrays: dict[str, np.ndarray | bytes]) -> None:
    """An .npz archive of ``arrays`` (bytes are written as raw members; object arrays are pickled)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key, value in arrays.items():
            archive.writestr(f"{key}.npy", value if isinstance(value, bytes) else _npy_bytes(value))


def damaged_file(path: Path, arrays: dict[str, np.ndarray], how: str, key: str, position: int) -> Path:
    """Write ``arrays`` to ``path`` damaged ``how`` (an array mutation of ``key`` or a file mutation)."""
    if how in ARRAY_MUTATIONS + EXTREME_MUTATIONS:
        changed = dict(arrays)
        if how == "extra_key":
            changed["unexpected"] = np.arange(3.0)
        else:
            value = mutate_array(arrays[key], how, position)
            if value is None:
                del changed[key]
            else:
                changed[key] = value
        write_npz(path, changed)
    elif how == "directory":
        path.mkdir()
    elif how == "non_npy_member":
        write_npz(path, arrays)
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr("notes.txt", "not an array")
    else:
        write_npz(path, arrays)
        data = path.read_bytes()
        path.write_bytes({
            "truncate": data[: position % max(len(data), 1)],
            "garbage": bytes(np.random.default_rng(position).integers(0, 256, 200, dtype=np.uint8)),
            "empty_file": b"",
            "text": b"problem = numax\ndelta = 0.1\n",
            "plain_npy": _npy_bytes(np.eye(3)),
        }[how])
    return path


# ------------------------------------------------------------------------------- checks
def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``main(argv)`` in-process, with its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def leftovers(directory: Path) -> list[str]:
    """Temporary files of an atomic write left behind."""
    return [p.name for p in directory.iterdir() if ".part" in p.name]


def assert_clean_outcome(argv: list[str], output: Path | None, names: tuple[str, ...]) -> int:
    """Run the command; exit 0/1 with its output complete, or 2 with one line naming an argument."""
    code, _, err = run_cli(argv)
    assert "Traceback" not in err
    assert code in (0, 1, 2), (code, err)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith(f"sdpembed {argv[0]}: error: "), err
        assert any(name in lines[0] for name in names), (names, err)
        assert output is None or not output.exists(), err
    if output is not None and output.parent.exists():
        assert not leftovers(output.parent)
    return code


def check_error_message(exc: ValueError, names: tuple[str, ...]) -> None:
    message = str(exc)
    assert "\n" not in message and message
    assert any(name in message for name in names), (names, message)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bad_input")


def fresh(workdir: Path) -> Path:
    return Path(tempfile.mkdtemp(dir=workdir))


BASES = st.sampled_from(sorted(_base_instances()))
DAMAGE = st.sampled_from(ARRAY_MUTATIONS + FILE_MUTATIONS)
EXTREMES = st.sampled_from(EXTREME_MUTATIONS)
POSITIONS = st.integers(0, 10**6)           # where a file is cut, which entry becomes NaN, ...


def drawn_damage(data, arrays: dict[str, np.ndarray], path: Path, how: str, position: int) -> Path:
    """:func:`damaged_file` of one array drawn from ``arrays``."""
    return damaged_file(path, arrays, how, data.draw(st.sampled_from(sorted(arrays))), position)


# ------------------------------------------------------------------------------- tests
@SETTINGS
@given(base=BASES, how=DAMAGE, data=st.data(), position=POSITIONS)
def test_load_instance_reads_or_refuses_in_one_line(workdir, base, how, data, position):
    arrays, _ = bases()[base]
    path = drawn_damage(data, arrays, fresh(workdir) / "instance.npz", how, position)
    try:
        instance = load_instance(path)
    except ValueError as exc:
        check_error_message(exc, (str(path),))
    else:
        assert instance.problem == str(arrays["problem"])


@SETTINGS
@given(base=BASES, how=DAMAGE, data=st.data(), position=POSITIONS)
def test_read_solution_reads_or_refuses_in_one_line(workdir, base, how, data, position):
    arrays, solution = bases()[base]
    instance = load_instance_from(arrays, workdir)
    path = drawn_damage(data, solution, fresh(workdir) / "solution.npz", how, position)
    try:
        read = read_solution(path, instance)
    except ValueError as exc:
        check_error_message(exc, (str(path),))
    else:
        assert read.matrix.ndim == 2


def load_instance_from(arrays: dict[str, np.ndarray], workdir: Path):
    path = fresh(workdir) / "instance.npz"
    write_npz(path, arrays)
    return load_instance(path)


@SETTINGS
@given(base=BASES, how=DAMAGE, data=st.data(), position=POSITIONS,
       command=st.sampled_from(["solve", "verify", "export"]))
def test_solve_verify_export_on_a_damaged_instance(workdir, base, how, data, position, command):
    arrays, solution = bases()[base]
    directory = fresh(workdir)
    instance = drawn_damage(data, arrays, directory / "instance.npz", how, position)
    if command == "solve":
        out = directory / "sol.npz"
        argv = ["solve", str(instance), "--out", str(out), "--max-iter", "300"]
    elif command == "export":
        out = directory / "inst.dat-s"
        argv = ["export", str(instance), "--out", str(out)]
    else:
        out = None
        write_npz(directory / "sol.npz", solution)
        argv = ["verify", str(instance), str(directory / "sol.npz")]
    # a damaged instance can still be valid and no longer fit the solution (verify): then the
    # line names the solution file, whose matrix is checked against the instance
    names = (str(instance),) if command != "verify" else (str(instance), str(directory / "sol.npz"))
    if assert_clean_outcome(argv, out, names) != 2 and out is not None:
        assert out.stat().st_size > 0
        if command == "solve":
            assert get_problem(str(arrays["problem"])).variable in np.load(out)


@SETTINGS
@given(base=BASES, how=EXTREMES, data=st.data(), position=POSITIONS)
def test_verify_on_an_instance_at_the_edges_of_the_doubles(workdir, base, how, data, position):
    """``verify`` of a valid solution on an instance whose arrays were pushed to the edges of the doubles:
    a verdict, or one line naming a file (``solve`` is not asked here: its solvers are another matter)."""
    arrays, solution = bases()[base]
    directory = fresh(workdir)
    instance = drawn_damage(data, arrays, directory / "instance.npz", how, position)
    write_npz(directory / "sol.npz", solution)
    assert_clean_outcome(["verify", str(instance), str(directory / "sol.npz")], None,
                         (str(instance), str(directory / "sol.npz")))


@SETTINGS
@given(base=BASES, how=st.one_of(DAMAGE, EXTREMES), data=st.data(), position=POSITIONS)
def test_verify_a_damaged_solution(workdir, base, how, data, position):
    arrays, solution = bases()[base]
    directory = fresh(workdir)
    write_npz(directory / "instance.npz", arrays)
    damaged = drawn_damage(data, solution, directory / "sol.npz", how, position)
    # certify names the solution's variable ("the solution 'M' must have shape ...")
    assert_clean_outcome(["verify", str(directory / "instance.npz"), str(damaged)], None, (str(damaged), "solution"))


def damaged_npy(path: Path, array: np.ndarray, how: str, position: int) -> Path:
    """A .npy file of ``array`` damaged ``how``."""
    if how in ("drop", "extra_key"):
        np.save(path, array)
    elif how == "directory":
        path.mkdir()
    elif how in ARRAY_MUTATIONS:
        value = mutate_array(array, how, position)
        path.write_bytes(value if isinstance(value, bytes) else _npy_bytes(value))
    elif how == "plain_npy":           # the wrong container: an .npz archive where a .npy is expected
        write_npz(path, {"X": array})
    elif how == "non_npy_member":
        path.write_bytes(_npy_bytes(array)[:-5])
    else:
        np.save(path, array)
        data = path.read_bytes()
        path.write_bytes({
            "truncate": data[: position % len(data)],
            "garbage": bytes(np.random.default_rng(position).integers(0, 256, 200, dtype=np.uint8)),
            "empty_file": b"",
            "text": b"1 2 3\n4 5 6\n",
        }[how])
    return path


@SETTINGS
@given(how=DAMAGE, position=POSITIONS, method=st.sampled_from(["pca", "gaussian", "adagio"]))
def test_embed_on_damaged_data(workdir, how, position, method):
    directory = fresh(workdir)
    data = damaged_npy(directory / "X.npy", translating_squares(4, 2), how, position)
    out = directory / "psi.npy"
    code = assert_clean_outcome(["embed", method, str(data), "--dim", "2", "--out", str(out), "--random-state", "0"],
                                out, (str(data),))
    if code == 0:
        assert np.load(out).shape[0] == 2


@SETTINGS
@given(problem=st.sampled_from(["numax", "numax_class", "lmnn"]),
       dataset=st.sampled_from(["squares", "gaussian", "blob", "digits", "shapes"]),
       size=st.sampled_from(["-3", "0", "5", "8", str(10**6)]),                # huge: ~1e24 bytes of images
       n_points=st.sampled_from(["-1", "0", "1", "12", str(10**15)]),          # huge: ~1e16 bytes anywhere
       delta=st.sampled_from(["0.2", "0", "1", "nan", "-0.5"]),
       points=st.booleans(), missing_dir=st.booleans())
def test_make_instance_with_bad_arguments(workdir, problem, dataset, size, n_points, delta, points, missing_dir):
    directory = fresh(workdir)
    out = directory / ("missing" if missing_dir else ".") / "inst.npz"
    argv = ["make-instance", problem, "--dataset", dataset, "--image-size", size, "--shape-size", "4",
            "--n-points", n_points, "--dim", "3", "--delta", delta, "--k", "1", "--out", str(out)]
    argv += ["--points"] if points else []
    names = ("--out", "image_size", "shape_size", "size", "n_points", "n_samples", "delta", "GiB", "class", "X",
             "points", "y", "k", "secants")
    if assert_clean_outcome(argv, out, names) == 0:
        assert load_instance(out).problem == problem
    if missing_dir:
        assert not out.parent.exists()
