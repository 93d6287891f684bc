"""`suite run` as a runner that never aborts and never leaves a process behind (issue 18): corrupt solution
files are BAD SOLUTION rows, a CRASH shows the exception line, exit code 3 is SKIP, SIGINT/SIGTERM kill the
graded program with every child it started, nothing a program leaves behind outlives its run, a program cannot
damage the suite, and errors of the command name `sdpembed suite run`.

The graded programs are tiny Python scripts written to ``tmp_path``; the passing ones copy a solution computed
once here, so no test starts a solver in a subprocess."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from sdpembed import get_problem, solve
from sdpembed.cli import main
from sdpembed.validation.suite import SKIP_EXIT_CODE, load_suite, run_suite

from .test_suite import entry_named

pytestmark = pytest.mark.e2e

PYTHON = sys.executable
POSIX = pytest.mark.skipif(os.name != "posix", reason="process groups and signals are POSIX")
FIRST, SECOND = "lmnn-iris8", "mvu_oos-swiss-k3"          # two tiny instances, in the suite's order


@pytest.fixture(scope="module")
def suite():
    return load_suite()


@pytest.fixture(scope="module")
def good(suite, tmp_path_factory) -> dict[str, str]:
    """A passing solution file of FIRST and SECOND, by instance name."""
    directory = tmp_path_factory.mktemp("good")
    files = {}
    for name in (FIRST, SECOND):
        instance = entry_named(suite, name).load()
        result = solve(instance)
        assert result.status == "optimal"
        files[name] = str(directory / f"{name}.npz")
        np.savez(files[name], **{get_problem(instance.problem).variable: result.solution})
    return files


def program(tmp_path: Path, source: str, **constants) -> str:
    """The graded command ``PYTHON SCRIPT {instance} {solution}`` of a script made of ``constants`` (as Python
    literals) and ``source``; the script sees ``NAME``, the instance's name."""
    header = "".join(f"{key} = {value!r}\n" for key, value in constants.items())
    header += "import os, sys\nNAME = os.path.basename(sys.argv[1])[:-len('.npz')]\n"
    script = tmp_path / f"graded{len(list(tmp_path.glob('graded*.py')))}.py"
    script.write_text(header + textwrap.dedent(source))
    return f"{shlex.quote(PYTHON)} {shlex.quote(str(script))} {{instance}} {{solution}}"


def alive(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie (exited, not yet collected by its parent, e.g. init) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:          # pid reused by another user's process: ours is gone
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True                  # no /proc: kill(pid, 0) is all we know
    return state != "Z"


def wait_until_dead(pids, seconds: float = 15.0) -> list[int]:
    """The pids still alive after polling for ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [pid for pid in pids if alive(pid)]
        if not left:
            return []
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


def kill_leftovers(pids) -> None:
    """Clean up after a failing test: no sleeper of ours outlives it."""
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------------------------ bad files
def corrupt_files(good_file: str, directory: Path) -> dict[str, Path]:
    """Solution files that no reader accepts: a zip cut short, a bad checksum, empty, a zip header alone, a
    damaged deflate stream."""
    data = Path(good_file).read_bytes()
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF
    compressed = directory / "compressed.npz"
    np.savez_compressed(compressed, S=np.eye(40))
    deflate = bytearray(compressed.read_bytes())
    for i in range(60, 120):
        deflate[i] ^= 0x55
    contents = {"truncated": data[: len(data) // 2], "bad CRC": bytes(flipped), "empty": b"",
                "zip header only": b"PK\x03\x04 and then nothing", "damaged deflate": bytes(deflate)}
    files = {}
    for kind, content in contents.items():
        files[kind] = directory / f"{kind.replace(' ', '_')}.npz"
        files[kind].write_bytes(content)
    return files


def test_corrupt_solution_files_are_bad_solution_rows_and_the_run_goes_on(suite, good, tmp_path, capsys):
    files = corrupt_files(good[SECOND], tmp_path)
    entries = [entry_named(suite, SECOND)]
    for kind, path in files.items():
        command = program(tmp_path, "import shutil; shutil.copyfile(SOURCE, sys.argv[2])", SOURCE=str(path))
        (record,) = run_suite(command, suite=suite, entries=entries, timeout=60)
        assert record.result == "bad solution", (kind, record)
        assert len(record.reasons) == 1 and "\n" not in record.reasons[0], kind
        assert "solution" in record.reasons[0], kind

    # through the command line: a corrupt file on the first instance, a good one on the second
    command = program(tmp_path, """
        import shutil
        shutil.copyfile(SOURCES.get(NAME, BAD), sys.argv[2])
    """, SOURCES={SECOND: good[SECOND]}, BAD=str(files["bad CRC"]))
    code = main(["suite", "run", "--command", command, "--instances", FIRST, "--instances", SECOND, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [r["result"] for r in report["results"]] == ["bad solution", "pass"]
    assert "CRC" in report["results"][0]["reasons"][0]


# ------------------------------------------------------------------------------------ crash reasons
def test_a_crash_shows_the_exception_line_not_the_traceback_markers(suite, tmp_path, capsys):
    entries = [entry_named(suite, SECOND)]

    def crash(source: str) -> str:
        (record,) = run_suite(program(tmp_path, source), suite=suite, entries=entries, timeout=60)
        assert record.result == "crash" and record.returncode != 0
        assert len(record.reasons) == 1
        return record.reasons[0]

    traceback = """
        def read(shape):
            raise ValueError(f"cannot read the instance: bad shape {shape}")
        def main():
            matrix = read((3, 3)) + 1       # a sub-expression: Python marks it with carets
            return matrix
        main()
    """
    assert crash(traceback) == "exit code 1: ValueError: cannot read the instance: bad shape (3, 3)"
    chained = """
        try:
            {}["P"]
        except KeyError as exc:
            raise RuntimeError("no variable P in the result") from exc
    """
    assert crash(chained) == "exit code 1: RuntimeError: no variable P in the result"
    multiline = """
        exc = ValueError("solver diverged\\nat iteration 12")
        exc.add_note("see the log")
        raise exc
    """
    assert crash(multiline) == "exit code 1: ValueError: solver diverged"
    assert crash("exec('x = (')") == "exit code 1: SyntaxError: '(' was never closed"
    plain = """
        sys.stderr.write("error: the solver diverged\\n      ^^^^^^\\n   ~~~\\n\\n\\n")
        sys.exit(7)
    """
    assert crash(plain) == "exit code 7: error: the solver diverged"
    long = crash("sys.exit('E' * 5000)")
    assert long.startswith("exit code 1: EEEE") and len(long) <= 240
    assert crash("sys.exit(9)") == "exit code 9"
    if os.name == "posix":
        assert crash("import signal; os.kill(os.getpid(), signal.SIGKILL)") == "killed by SIGKILL"

    # the table shows the exception; --json keeps the end of stderr as well
    code = main(["suite", "run", "--command", program(tmp_path, traceback), "--instances", SECOND])
    table = capsys.readouterr().out
    assert code == 1 and "CRASH" in table and "ValueError: cannot read the instance" in table
    main(["suite", "run", "--command", program(tmp_path, traceback), "--instances", SECOND, "--json"])
    (row,) = json.loads(capsys.readouterr().out)["results"]
    assert "Traceback (most recent call last)" in row["stderr_tail"] and "^^^" in row["stderr_tail"]


# ---------------------------------------------------------------------------------------- SKIP
def test_exit_code_3_is_skip_and_not_a_failure(suite, good, tmp_path, capsys):
    assert SKIP_EXIT_CODE == 3
    skip_first = program(tmp_path, """
        import shutil
        if NAME == FIRST:
            print("lmnn: not implemented", file=sys.stderr)
            sys.exit(3)
        shutil.copyfile(GOOD[NAME], sys.argv[2])
    """, FIRST=FIRST, GOOD=good)
    records = run_suite(skip_first, suite=suite, entries=[entry_named(suite, n) for n in (FIRST, SECOND)])
    assert [r.result for r in records] == ["skip", "pass"]
    assert records[0].returncode == 3 and "not implemented" in records[0].reasons[0]

    select = ["--instances", FIRST, "--instances", SECOND]
    assert main(["suite", "run", "--command", skip_first, *select]) == 0
    table = capsys.readouterr().out
    assert "SKIP" in table and table.rstrip().endswith("1/1 passed, 1 skipped (exit code 3: not handled)")
    assert main(["suite", "run", "--command", skip_first, *select, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["passed"], report["skipped"], report["graded"], report["total"]) == (1, 1, 1, 2)
    assert report["all_passed"] is True

    # a skip does not hide a failure of an instance the program handles
    skip_and_fail = program(tmp_path, "sys.exit(3 if NAME == FIRST else 1)", FIRST=FIRST)
    assert main(["suite", "run", "--command", skip_and_fail, *select]) == 1
    assert capsys.readouterr().out.rstrip().endswith("0/1 passed, 1 did not, 1 skipped (exit code 3: not handled)")
    # a program that handles nothing passes nothing
    assert main(["suite", "run", "--command", program(tmp_path, "sys.exit(3)"), *select, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["passed"], report["skipped"], report["graded"], report["all_passed"]) == (0, 2, 0, False)


# ------------------------------------------------------------------------------ command errors
def test_errors_of_suite_run_name_the_subcommand_not_the_graded_command(capsys):
    assert main(["suite", "run", "--command", "mysolver {instance}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sdpembed suite run: error: ") and "{solution}" in err
    assert main(["suite", "run", "--command", "x {instance} {solution}", "--problems", "maxcut"]) == 2
    assert capsys.readouterr().err.startswith("sdpembed suite run: error: no suite instances")
    assert main(["suite", "list", "--problems", "maxcut"]) == 2
    assert capsys.readouterr().err.startswith("sdpembed suite list: error: ")


def test_run_help_documents_the_skip_exit_code(capsys):
    with pytest.raises(SystemExit):
        main(["suite", "run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit code 3" in text and "SKIP" in text and "SIGINT" in text


# ------------------------------------------------------------------------- no process left behind
SPAWN_AND_SLEEP = """
    import subprocess, time
    if NAME == FIRST:
        sys.exit(3)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    with open(PIDS + ".part", "w") as f:
        f.write(f"{os.getpid()} {sleeper.pid}")
    os.replace(PIDS + ".part", PIDS)
    time.sleep(300)
"""


def _default_signals() -> None:        # the runner gets SIGINT and SIGTERM as a terminal would deliver them
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@POSIX
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_kills_the_program_and_its_children(signum, tmp_path):
    pids_file = tmp_path / "pids"
    command = program(tmp_path, SPAWN_AND_SLEEP, FIRST=FIRST, PIDS=str(pids_file))
    runner = subprocess.Popen(
        [PYTHON, "-m", "sdpembed", "suite", "run", "--command", command, "--instances", FIRST, "--instances", SECOND,
         "--timeout", "300"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_default_signals)
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not pids_file.exists():
            assert runner.poll() is None, runner.communicate()
            assert time.monotonic() < deadline, "the graded program never started"
            time.sleep(0.05)
        pids = [int(pid) for pid in pids_file.read_text().split()]
        assert all(alive(pid) for pid in pids)
        runner.send_signal(signum)
        out, err = runner.communicate(timeout=60)                     # reaps the runner
        assert runner.returncode == 128 + signum, (out, err)
        assert f"sdpembed suite run: interrupted by {signum.name}" in err
        assert "1 of 2 instance(s) graded" in err
        assert f"{FIRST}" in out and "SKIP" in out                     # what was graded so far
        assert wait_until_dead(pids) == [], "the graded program or its child outlived the run"
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
        kill_leftovers(pids)


@POSIX
def test_what_a_program_leaves_running_is_killed_and_does_not_hold_the_run(suite, tmp_path):
    # the background child keeps the program's stderr open: the run must not wait for it to close
    pids_file = tmp_path / "pids"
    command = program(tmp_path, """
        import subprocess
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        open(PIDS, "w").write(str(sleeper.pid))
        sys.exit("giving up")
    """, PIDS=str(pids_file))
    pids: list[int] = []
    try:
        start = time.perf_counter()
        (record,) = run_suite(command, suite=suite, entries=[entry_named(suite, SECOND)], timeout=20)
        pids = [int(pids_file.read_text())]
        assert record.result == "crash" and record.reasons == ["exit code 1: giving up"]
        assert time.perf_counter() - start < 15
        assert wait_until_dead(pids) == []
    finally:
        kill_leftovers(pids)


def test_a_program_cannot_damage_the_suite_it_is_graded_on(suite, tmp_path):
    copy = tmp_path / "suite"
    shutil.copytree(suite.directory, copy)
    mine = load_suite(copy)
    command = program(tmp_path, "open(sys.argv[1], 'wb').write(b'overwritten')")     # writes to {instance}
    for _ in range(2):
        (record,) = run_suite(command, suite=mine, entries=[entry_named(mine, SECOND)], timeout=60)
        assert record.result == "no solution"
    entry_named(load_suite(copy), SECOND).load()                     # the file still matches the manifest


def test_a_progress_bar_only_when_asked(suite, tmp_path, capsys):
    """run_suite's bar (instances done, time left) is on stderr when asked, and nowhere otherwise;
    the CLI asks for it only on a terminal, so a captured run holds its per-instance lines alone."""
    skip_all = program(tmp_path, "sys.exit(3)")
    entries = [entry_named(suite, n) for n in (FIRST, SECOND)]
    run_suite(skip_all, suite=suite, entries=entries, bar=True)
    err = capsys.readouterr().err
    assert "suite run" in err and "0/2 [" in err
    run_suite(skip_all, suite=suite, entries=entries)
    assert capsys.readouterr().err == ""
    assert main(["suite", "run", "--command", skip_all, "--instances", FIRST, "--instances", SECOND]) == 1
    err = capsys.readouterr().err
    assert "suite run" not in err and f"[1/2] {FIRST}: SKIP" in err and f"[2/2] {SECOND}: SKIP" in err
