"""``sdpembed._progress``: tqdm is imported with the first bar, not with the module (a graded
``sdpembed solve`` starts a fresh interpreter and shows no bar), and ``tell`` writes its line
either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import sdpembed
from sdpembed._progress import progress_bar, tell


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
