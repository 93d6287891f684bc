"""`suite run` as a runner that never aborts (issue 18): corrupt solution files are BAD SOLUTION rows, and
errors of the command name `sdpembed suite run`.

The graded programs are tiny Python scripts written to ``tmp_path``; the passing ones copy a solution computed
once here, so no test starts a solver in a subprocess."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sdpembed import get_problem, solve
from sdpembed.cli import main
from sdpembed.validation.suite import load_suite, run_suite

from .test_suite import entry_named

PYTHON = sys.executable
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


# ------------------------------------------------------------------------------ command errors
def test_errors_of_suite_run_name_the_subcommand_not_the_graded_command(capsys):
    assert main(["suite", "run", "--command", "mysolver {instance}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sdpembed suite run: error: ") and "{solution}" in err
    assert main(["suite", "run", "--command", "x {instance} {solution}", "--problems", "maxcut"]) == 2
    assert capsys.readouterr().err.startswith("sdpembed suite run: error: no suite instances")
    assert main(["suite", "list", "--problems", "maxcut"]) == 2
    assert capsys.readouterr().err.startswith("sdpembed suite list: error: ")
