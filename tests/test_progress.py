"""``sdpembed/_progress.py``: bars on stderr only when asked or on a terminal; ``track`` over a grid."""

import io
import sys

from sdpembed._progress import track


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
