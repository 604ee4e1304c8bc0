"""Progress bars on stderr for long work (encoding, reranking, judging, sweeps).

One rule for every bar: tqdm on stderr that leaves no line behind when it ends;
on a terminal it redraws at tqdm's pace, and when stderr is a file or a pipe (a
batch job, CI) it redraws at most every ``LOG_INTERVAL_S`` seconds, so a log
holds a few progress lines per step instead of hundreds of redraws.
"""

from __future__ import annotations

import sys
from typing import Any

LOG_INTERVAL_S = 30.0
"""Seconds between redraws when stderr is not a terminal."""


def bar(iterable: Any = None, *, desc: str, unit: str, total: int | None = None, disable: bool = False) -> Any:
    """A ``tqdm`` bar on stderr (``leave=False``).

    Args:
        iterable: what to iterate over, or None for a bar updated by hand.
        desc, unit, total: as tqdm's.
        disable: no bar at all (the caller's quiet mode).

    Returns:
        The ``tqdm`` object (a context manager and, with an iterable, an iterator).
    """
    from tqdm import tqdm  # lazy, light

    interactive = getattr(sys.stderr, "isatty", lambda: False)()
    return tqdm(iterable, desc=desc, unit=unit, total=total, file=sys.stderr, leave=False, disable=disable,
                mininterval=0.1 if interactive else LOG_INTERVAL_S)
