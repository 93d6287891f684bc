"""`suite run` as a runner (issue 18): errors of the command name `sdpembed suite run`."""

from __future__ import annotations

from sdpembed.cli import main


# ------------------------------------------------------------------------------ command errors
def test_errors_of_suite_run_name_the_subcommand_not_the_graded_command(capsys):
    assert main(["suite", "run", "--command", "mysolver {instance}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sdpembed suite run: error: ") and "{solution}" in err
    assert main(["suite", "run", "--command", "x {instance} {solution}", "--problems", "maxcut"]) == 2
    assert capsys.readouterr().err.startswith("sdpembed suite run: error: no suite instances")
    assert main(["suite", "list", "--problems", "maxcut"]) == 2
    assert capsys.readouterr().err.startswith("sdpembed suite list: error: ")
