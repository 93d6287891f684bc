"""``sdpembed._progress``: tqdm is imported with the first bar, not with the module (a graded
``sdpembed solve`` starts a fresh interpreter and shows no bar), and ``tell`` writes its line
either way; ``track`` shows a bar over a grid only on a terminal."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import sdpembed
from sdpembed._progress import progress_bar, tell, track


def test_tell_without_a_bar_loads_no_tqdm():
    body = ("import json, sys\nfrom sdpembed._progress import tell\ntell('a line')\n"
            "print(json.dumps('tqdm' in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(Path(sdpembed.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) is False
    assert done.stderr == "a line\n"


def test_tell_beside_a_bar(capsys):
    with progress_bar(3, "work", enabled=True) as bar:
        bar.update(1)
        tell("between")
    assert "between\n" in capsys.readouterr().err


def test_track_yields_every_item_and_shows_a_bar_only_on_a_terminal(monkeypatch):
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    assert list(track((x * x for x in range(4)), "grid", unit="cell")) == [0, 1, 4, 9]
    assert piped.getvalue() == ""                  # not a terminal: a log or a notebook stores no bar
    terminal = io.StringIO()
    terminal.isatty = lambda: True
    monkeypatch.setattr(sys, "stderr", terminal)
    assert list(track(["a", "b", "c"], "grid", unit="cell")) == ["a", "b", "c"]
    shown = terminal.getvalue()
    assert "grid" in shown and "0/3" in shown      # the total is known: a time-left estimate
    forced = io.StringIO()
    monkeypatch.setattr(sys, "stderr", forced)
    assert list(track([1], "grid", enabled=True)) == [1] and "grid" in forced.getvalue()


def test_a_solve_that_shows_no_bar_loads_no_tqdm(tmp_path):
    """Column generation opens a bar per round (shown only on a terminal when verbose): a graded
    point-form solve, whose stderr is a pipe, must not pay tqdm's import for bars it never shows."""
    instance = Path(sdpembed.__file__).parent / "data" / "suite" / "numax-squares6-points.npz"
    body = ("import json, sys\nfrom sdpembed.cli import main\n"
            f"code = main(['solve', {str(instance)!r}, '--out', {str(tmp_path / 'sol.npz')!r}])\n"
            "print(json.dumps([code, 'tqdm' in sys.modules]))")
    env = {**os.environ, "PYTHONPATH": str(Path(sdpembed.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, False]
