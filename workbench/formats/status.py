"""Run status side files: per-topic status, latency and error of the calls that produced a run.

A run file cannot say that a topic's empty list came from a timeout. A status
side file can: a TSV (tab-separated) or CSV (``.csv``) file with a header line
and one row per topic::

    topic_id    status  latency_ms  error
    1           ok      41.2
    2           error   30000       timeout after 30 s
    3           empty   12.0

* ``topic_id`` (also accepted: ``topic``) and ``status`` are required columns;
  ``latency_ms`` and ``error`` are optional;
* ``status`` is ``ok`` (results were returned), ``empty`` (the call succeeded
  and found nothing) or ``error`` (the call failed: timeout, rate limit, ...);
* ``latency_ms`` is a finite number >= 0 or blank;
* a topic appears once.

``sidecar_path(run_file)`` is where a run file's status file is looked for when
none is named: ``<run file>.status.tsv`` next to it.

Errors name the file and line (``status.tsv:3: ...``).

The readers' helpers (``formats.trec``, csv) are imported when a status file
is read: looking for one (``sidecar_path``) is part of scoring every run file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import InputFormatError

STATUSES = ("ok", "empty", "error")
SIDECAR_SUFFIX = ".status.tsv"


@dataclass(frozen=True)
class StatusRow:
    """One topic of a status file.

    Attributes:
        topic_id: the topic.
        status: ``ok``, ``empty`` or ``error``.
        latency_ms: latency of the call, or None.
        error: the error message ("" when none).
        line: its 1-based line in the file.
    """

    topic_id: str
    status: str
    latency_ms: float | None
    error: str
    line: int


def sidecar_path(run_file: str | Path) -> Path:
    """``<run file>.status.tsv``: where a run file's status side file is looked for.

    Example:
        >>> str(sidecar_path("runs/cand.trec"))
        'runs/cand.trec.status.tsv'
    """
    p = Path(run_file)
    return p.with_name(p.name + SIDECAR_SUFFIX)


def read_status_file(path: str | Path) -> dict[str, StatusRow]:
    """Read a status side file.

    Args:
        path: the TSV (or ``.csv``) file.

    Returns:
        topic_id -> ``StatusRow``, in file order.

    Raises:
        InputFormatError: unreadable, no header, a missing required column, a
            bad status or latency, a blank topic id or a repeated topic (file:line).
    """
    import csv
    import io

    from workbench.errors import shown_list
    from workbench.formats.trec import csv_cell_too_long, read_text, shown_id

    text = read_text(path)
    delimiter = "," if str(path).lower().endswith(".csv") else "\t"
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    rows: list[tuple[int, list[str]]] = []
    try:
        for r in reader:
            if any(c.strip() for c in r):
                rows.append((reader.line_num, r))
    except csv.Error as e:
        raise csv_cell_too_long(path, reader.line_num, e) or InputFormatError(
            str(path), reader.line_num, f"expected {'CSV' if delimiter == ',' else 'TSV'}, found unreadable text "
                                        f"({e}). Check the quotes.") from None
    if not rows:
        raise InputFormatError(str(path), 0, "expected a header line (topic_id, status[, latency_ms, error]), "
                                             "found an empty file.")
    head_line, head = rows[0]
    names = [c.strip().lower() for c in head]
    if "topic" in names and "topic_id" not in names:
        names[names.index("topic")] = "topic_id"
    missing = [c for c in ("topic_id", "status") if c not in names]
    if missing:
        sep = "tab" if delimiter == "\t" else "comma"
        raise InputFormatError(str(path), head_line, f"expected a header with columns topic_id and status "
                                                     f"({sep}-separated), found {shown_list(head)}; missing "
                                                     f"{', '.join(missing)}.")
    col = {n: i for i, n in enumerate(names)}
    out: dict[str, StatusRow] = {}
    for lineno, r in rows[1:]:
        def cell(name: str, r: list[str] = r) -> str:
            i = col.get(name)
            return r[i].strip() if i is not None and i < len(r) else ""

        topic = cell("topic_id")
        if not topic or any(c.isspace() for c in topic):
            raise InputFormatError(str(path), lineno, f"expected a topic id without spaces, found {shown_id(topic)}.")
        status = cell("status").lower()
        if status not in STATUSES:
            raise InputFormatError(str(path), lineno, f"expected status {', '.join(STATUSES)}, found "
                                                      f"{shown_id(cell('status'))}. Use error for timeouts and rate limits.")
        raw = cell("latency_ms")
        latency: float | None = None
        if raw:
            try:
                latency = float(raw)
            except ValueError:
                latency = math.nan
            if not math.isfinite(latency) or latency < 0:
                raise InputFormatError(str(path), lineno, f"expected latency_ms to be a number >= 0 or blank, "
                                                          f"found {shown_id(raw)}.")
        if topic in out:
            raise InputFormatError(str(path), lineno, f"topic {shown_id(topic)} appears twice (first on line "
                                                      f"{out[topic].line}); keep one row per topic.")
        out[topic] = StatusRow(topic, status, latency, cell("error"), lineno)
    return out


def check_against_run(path: str | Path, rows: dict[str, StatusRow], n_results: dict[str, int]) -> None:
    """Refuse a status file that contradicts its run.

    ``ok`` needs results for the topic; ``empty`` and ``error`` need none (a
    failed call that still returned documents is ambiguous: fix the producer).

    Raises:
        InputFormatError: the first contradicting row (file:line).
    """
    from workbench.formats.trec import shown_id

    for row in rows.values():
        n = n_results.get(row.topic_id, 0)
        if row.status == "ok" and n == 0:
            raise InputFormatError(str(path), row.line, f"topic {shown_id(row.topic_id)} has status ok but the run "
                                                        "has no results for it; write empty or error.")
        if row.status != "ok" and n > 0:
            raise InputFormatError(str(path), row.line, f"topic {shown_id(row.topic_id)} has status {row.status} "
                                                        f"but the run has {n} result(s) for it; write ok.")
