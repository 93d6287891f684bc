"""The README's example runs as printed (it is sized so that its CVXPY ground truths take seconds)."""

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_python_example_runs(capsys):
    text = README.read_text()
    section = text.split("\n## Example\n", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    exec(compile(block, "README.md (## Python)", "exec"), namespace)
    assert namespace["result"].status == "optimal"
    out = capsys.readouterr().out                      # the printed certificate against CVXPY's optimum
    assert "optimum_source='computed with CVXPY/CLARABEL'" in out and "passed=True" in out
