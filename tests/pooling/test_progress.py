"""Progress bars: a log (stderr not a terminal) gets a few redraws per step, not hundreds (a trial's
`make demo-batch > log 2>&1` wrote 89 KB, mostly carriage-return redraws)."""

from __future__ import annotations

import io
import sys

from pooling.progress import LOG_INTERVAL_S, bar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_redraws_rarely_into_a_log_and_often_on_a_terminal(monkeypatch):
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with bar(total=1000, desc="encoding documents", unit="doc") as b:
        assert b.mininterval == LOG_INTERVAL_S == 30.0
        for _ in range(1000):
            b.update(1)
    assert log.getvalue().count("\r") <= 3  # the first draw and the close, whatever the pace of the updates
    monkeypatch.setattr(sys, "stderr", _Terminal())
    with bar(total=10, desc="x", unit="doc") as b:
        assert b.mininterval == 0.1


def test_a_disabled_bar_writes_nothing_and_still_iterates(monkeypatch):
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    assert list(bar(range(3), desc="judging", unit="doc", disable=True)) == [0, 1, 2]
    assert log.getvalue() == ""
