"""Judgment files in and out: TREC qrels, CSV and JSON lines to read; CSV, JSON lines and Parquet to write.

Read (``read_judgments``), one judgment per line or row:

* ``trec``: ``topic iter doc grade`` (as qrels; ``iter`` ignored).
* ``csv``: a header line, then rows. Columns (by name, any order):
  ``topic_id`` (or ``topic``, ``query_id``), ``doc_id`` (or ``doc``,
  ``docno``), ``grade`` (or ``relevance``), and optionally ``note``,
  ``unsure`` (``true``/``false``, ``1``/``0``, ``yes``/``no``; empty = false),
  ``duration_ms`` (milliseconds; or ``duration`` in seconds), ``timestamp``
  (ISO 8601; without a zone it is UTC; at most ``FUTURE_LIMIT``, one day,
  after now) and ``assessor``. An export's other columns (``pool_version``,
  ``rubric_version``, ``judgment_id``) are ignored; any other column is
  ignored too and named in ``JudgmentFile.ignored_columns`` (the import warns,
  listing the accepted columns). A column given twice, or two names of one
  column (``topic_id`` and ``topic``; ``duration_ms`` and ``duration``), is
  refused at line 1: which value would count is not clear.
* ``jsonl``: one JSON object per line with the same keys; grades are JSON
  integers (or null with ``unsure``), ``unsure`` a boolean. As in a CSV header, a
  key given twice in an object, or two names of one key, is refused (file:line).

A grade may be empty (CSV) or null (JSON) only when ``unsure`` is true.
Errors are ``InputFormatError`` naming the file and line (the CSV line where
the row starts).

Write (``write_judgments``): the columns ``EXPORT_COLUMNS`` as CSV (header
line, UTF-8), JSON lines, or Parquet (via pyarrow), atomically. A file written
here reads back with ``read_judgments`` (``csv``/``jsonl``) to the same judgments.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from workbench import jsonout
from workbench.errors import InputFormatError, ValidationError, shown, shown_list
from workbench.formats.io import atomic_write
from workbench.formats.trec import (
    GRADE_MAX,
    GRADE_MIN,
    check_grade,
    check_id,
    csv_cell_too_long,
    iter_columns,
    iter_json_objects,
    read_text,
    shown_id,
    shown_json,
)

InFormat = Literal["trec", "csv", "jsonl"]
OutFormat = Literal["csv", "jsonl", "parquet"]
IN_FORMATS: tuple[str, ...] = ("trec", "csv", "jsonl")
OUT_FORMATS: tuple[str, ...] = ("csv", "jsonl", "parquet")

EXPORT_COLUMNS: tuple[str, ...] = (
    "topic_id", "doc_id", "assessor", "grade", "unsure", "note", "duration_ms", "timestamp", "pool_version",
    "rubric_version", "judgment_id",
)
"""Columns of an exported judgment file, in order."""

_ALIASES: dict[str, tuple[str, ...]] = {
    "topic_id": ("topic_id", "topic", "query_id"),
    "doc_id": ("doc_id", "doc", "docno"),
    "grade": ("grade", "relevance"),
    "note": ("note",),
    "unsure": ("unsure",),
    "duration_ms": ("duration_ms",),
    "duration": ("duration",),
    "timestamp": ("timestamp",),
    "assessor": ("assessor",),
}
_EXPORT_ONLY: tuple[str, ...] = ("pool_version", "rubric_version", "judgment_id")
"""Columns of an export that an import reads past without a word (the store records them itself)."""
ACCEPTED_COLUMNS: tuple[str, ...] = tuple(n for names in _ALIASES.values() for n in names) + _EXPORT_ONLY
"""Every column name a CSV judgment file may have; other columns are ignored and named."""
_SAME_VALUE: tuple[tuple[str, ...], ...] = (*((k,) for k in _ALIASES if k not in ("duration_ms", "duration")),
                                            ("duration_ms", "duration"))
"""Groups of keys of which a header may hold one column: the aliases of a key, and the two durations."""
FUTURE_LIMIT = timedelta(days=1)
"""How far in the future a judgment's timestamp may be (clock skew, time zones); later ones are refused."""
_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f", ""}
_INT = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True, slots=True)
class JudgmentLine:
    """One judgment as read from a file.

    Attributes:
        line: 1-based line number (CSV: the line the row starts on).
        topic_id: topic.
        doc_id: document.
        grade: the grade, or None when unsure without a grade.
        unsure: the assessor marked it unsure.
        note: free text ("" when none).
        duration_ms: time on the document, milliseconds (0 when unknown).
        timestamp: when it was made (UTC), or None when the file does not say.
        assessor: the file's ``assessor`` column ("" when absent).
    """

    line: int
    topic_id: str
    doc_id: str
    grade: int | None
    unsure: bool = False
    note: str = ""
    duration_ms: int = 0
    timestamp: datetime | None = None
    assessor: str = ""


@dataclass(frozen=True, slots=True)
class JudgmentFile:
    """A judgment file as read: its judgments and the columns it had that were ignored.

    Attributes:
        lines: the judgments in file order.
        ignored_columns: CSV header columns that are not in ``ACCEPTED_COLUMNS``, in header
            order (always empty for ``trec`` and ``jsonl``).
    """

    lines: list[JudgmentLine]
    ignored_columns: tuple[str, ...] = ()


def sniff_format(path: str | Path) -> InFormat:
    """``csv`` for ``.csv``, ``jsonl`` for ``.jsonl``/``.json``, else ``trec``."""
    suffix = Path(path).suffix.lower()
    return "csv" if suffix == ".csv" else "jsonl" if suffix in (".jsonl", ".json") else "trec"


def read_judgments(path: str | Path, fmt: InFormat) -> list[JudgmentLine]:
    """The judgments of a judgment file, in file order (``read_judgment_file(path, fmt).lines``).

    Raises:
        InputFormatError, ValidationError: as ``read_judgment_file``.
    """
    return read_judgment_file(path, fmt).lines


def read_judgment_file(path: str | Path, fmt: InFormat) -> JudgmentFile:
    """Read a judgment file (see the module docstring).

    Args:
        path: the file.
        fmt: ``trec``, ``csv`` or ``jsonl``.

    Returns:
        The judgments in file order, and the CSV columns that were ignored.

    Raises:
        InputFormatError: a malformed line, a missing required column, a column
            given twice (or under two of its names), an empty file (naming file and line).
        ValidationError: an unknown format.
    """
    ignored: tuple[str, ...] = ()
    if fmt == "trec":
        out = _read_trec(path)
    elif fmt == "csv":
        out, ignored = _read_csv(path)
    elif fmt == "jsonl":
        out = _read_jsonl(path)
    else:
        raise ValidationError(f"expected --format one of {', '.join(IN_FORMATS)}, found {shown(fmt)}")
    if not out:
        raise InputFormatError(str(path), 0, "expected at least one judgment, found none. Check that the right file was given.")
    return JudgmentFile(out, ignored)


def _read_trec(path: str | Path) -> list[JudgmentLine]:
    p = str(path)
    out = []
    for lineno, cols in iter_columns(path):
        if len(cols) != 4:
            raise InputFormatError(p, lineno, f"expected 4 columns (topic iter doc grade), found {len(cols)}. "
                                              "Write one judgment per line, or use --format csv for notes.")
        out.append(JudgmentLine(lineno, cols[0], cols[2], check_grade(p, lineno, cols[3], 4)))
    return out


def _bool(p: str, lineno: int, value: Any, column: str) -> bool:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    s = str(value).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise InputFormatError(p, lineno, f"expected {column} true or false, found {shown_id(str(value))}. "
                                      "Write true/false, yes/no or 1/0.")


def _grade(p: str, lineno: int, value: Any) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise InputFormatError(p, lineno, f"expected an integer grade, found {shown_json(value)}. "
                                          "Write grades as whole numbers such as 0, 1, 2.")
    if isinstance(value, int | float):
        g = int(value)
    else:
        s = str(value).strip()
        if not _INT.fullmatch(s):
            raise InputFormatError(p, lineno, f"expected an integer grade, found {shown_id(s)}. "
                                              "Write grades as whole numbers such as 0, 1, 2.")
        g = int(s)
    if not GRADE_MIN <= g <= GRADE_MAX:
        raise InputFormatError(p, lineno, f"grade {g} is out of range ({GRADE_MIN}..{GRADE_MAX}); write a grade "
                                          "of the rubric such as 0, 1, 2.")
    return g


def _duration(p: str, lineno: int, ms: Any, seconds: Any) -> int:
    if ms not in (None, ""):
        if isinstance(ms, bool) or not _INT.fullmatch(str(ms).strip()) or int(str(ms).strip()) < 0:
            raise InputFormatError(p, lineno, f"expected duration_ms as a whole number >= 0, found {shown_id(str(ms))}.")
        return int(str(ms).strip())
    if seconds not in (None, ""):
        try:
            x = float(seconds)
        except (TypeError, ValueError):
            x = -1.0
        if isinstance(seconds, bool) or not math.isfinite(x) or x < 0:
            raise InputFormatError(p, lineno, f"expected duration in seconds (a number >= 0), found {shown_id(str(seconds))}.")
        return round(x * 1000)
    return 0


def _timestamp(p: str, lineno: int, value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        t = datetime.fromisoformat(str(value).strip())
    except ValueError:
        raise InputFormatError(p, lineno, f"expected an ISO 8601 timestamp such as 2024-05-01T12:30:00Z, found "
                                          f"{shown_id(str(value))}.") from None
    t = t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)
    limit = datetime.now(UTC) + FUTURE_LIMIT
    if t > limit:
        raise InputFormatError(p, lineno, f"expected a timestamp at most one day in the future (up to "
                                          f"{limit.isoformat(timespec='seconds')}), found {t.isoformat()}. A judgment "
                                          "cannot be made later than now: check the clock or the time zone.")
    return t


def _line(p: str, lineno: int, get: Mapping[str, Any]) -> JudgmentLine:
    def field(name: str) -> Any:
        return get.get(name)

    topic, doc = field("topic_id"), field("doc_id")
    for what, v in (("topic_id", topic), ("doc_id", doc)):
        if not isinstance(v, str):
            found = "nothing" if v is None else f"{shown_json(v)} ({type(v).__name__})"
            raise InputFormatError(p, lineno, f"expected {what} as a string, found {found}. Quote the id.")
    check_id(p, lineno, topic, "topic id")
    check_id(p, lineno, doc, "doc id")
    unsure = _bool(p, lineno, field("unsure"), "unsure")
    grade = _grade(p, lineno, field("grade"))
    if grade is None and not unsure:
        raise InputFormatError(p, lineno, f"expected a grade for topic {shown_id(topic)} document {shown_id(doc)}, "
                                          "found none. Give a grade or set unsure to true.")
    note = field("note")
    if note is not None and not isinstance(note, str):
        raise InputFormatError(p, lineno, f"expected note as a string, found {shown_json(note)}.")
    assessor = field("assessor")
    return JudgmentLine(lineno, topic, doc, grade, unsure, (note or "").strip(),
                        _duration(p, lineno, field("duration_ms"), field("duration")),
                        _timestamp(p, lineno, field("timestamp")), "" if assessor is None else str(assessor))


def _columns(p: str, header: Sequence[str]) -> dict[str, str]:
    for i, h in enumerate(header):
        if h and h in header[:i]:
            raise InputFormatError(p, 1, f"expected each column once in the header, found {shown(h)} twice (columns "
                                         f"{header.index(h) + 1} and {i + 1}). Remove or rename one of them.")
    for keys in _SAME_VALUE:
        given = [h for h in header if any(h in _ALIASES[k] for k in keys)]
        if len(given) > 1:
            raise InputFormatError(p, 1, f"expected one of the columns {' or '.join(repr(n) for n in given)}, found "
                                         "both: they give the same value. Keep one of them.")
    found: dict[str, str] = {}
    for key, names in _ALIASES.items():
        name = next((n for n in names if n in header), None)
        if name is not None:
            found[key] = name
    missing = [k for k in ("topic_id", "doc_id", "grade") if k not in found]
    if missing:
        raise InputFormatError(p, 1, f"expected a header with columns topic_id, doc_id and grade, found "
                                     f"{shown_list(header)}. Add the missing column(s) {', '.join(missing)}.")
    return found


def _read_csv(path: str | Path) -> tuple[list[JudgmentLine], tuple[str, ...]]:
    p = str(path)
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    out: list[JudgmentLine] = []
    try:
        header = next(reader, None)
    except csv.Error as e:
        raise csv_cell_too_long(p, 1, e) or InputFormatError(
            p, 1, f"expected a CSV header, found unreadable CSV ({e}).") from None
    if header is None:
        return out, ()
    names = [h.strip() for h in header]
    cols = _columns(p, names)
    index = {key: names.index(name) for key, name in cols.items()}
    ignored = tuple(n for n in names if n not in ACCEPTED_COLUMNS)
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            raise csv_cell_too_long(p, start, e) or InputFormatError(
                p, start, f"expected a CSV row, found unreadable CSV ({e}). Check the quotes.") from None
        lineno, start = start, reader.line_num + 1
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise InputFormatError(p, lineno, f"expected {len(header)} columns as in the header, found {len(row)}. "
                                              "Quote values that contain commas.")
        out.append(_line(p, lineno, {key: row[i] for key, i in index.items()}))
    return out, ignored


def _read_jsonl(path: str | Path) -> list[JudgmentLine]:
    p = str(path)
    out = []
    for lineno, obj in iter_json_objects(path):  # a key given twice is refused there
        for keys in _SAME_VALUE:
            given = [n for k in keys for n in _ALIASES[k] if n in obj]
            if len(given) > 1:
                raise InputFormatError(p, lineno, f"expected one of the keys {' or '.join(repr(n) for n in given)}, "
                                                  "found both: they give the same value. Keep one of them.")
        keyed = {key: next((obj[n] for n in names if n in obj), None) for key, names in _ALIASES.items()}
        out.append(_line(p, lineno, keyed))
    return out


# -- writing ----------------------------------------------------------------------------------


def _cell(v: Any) -> Any:
    if isinstance(v, datetime):
        return v.astimezone(UTC).isoformat()
    return v


def write_judgments(path: str | Path, rows: Sequence[Mapping[str, Any]], fmt: OutFormat) -> int:
    """Write judgment rows (keys ``EXPORT_COLUMNS``) atomically as CSV, JSON lines or Parquet.

    Args:
        path: the target file (``-`` is not accepted here; the CLI writes stdout itself).
        rows: one mapping per judgment; ``grade`` None for unsure-without-grade,
            ``timestamp`` a datetime.
        fmt: ``csv``, ``jsonl`` or ``parquet``.

    Returns:
        The number of rows written.

    Raises:
        ValidationError: an unknown format.
    """
    if fmt not in OUT_FORMATS:
        raise ValidationError(f"expected --format one of {', '.join(OUT_FORMATS)}, found {shown(fmt)}")
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({
            "topic_id": pa.array([r["topic_id"] for r in rows], pa.string()),
            "doc_id": pa.array([r["doc_id"] for r in rows], pa.string()),
            "assessor": pa.array([r["assessor"] for r in rows], pa.string()),
            "grade": pa.array([r["grade"] for r in rows], pa.int32()),
            "unsure": pa.array([bool(r["unsure"]) for r in rows], pa.bool_()),
            "note": pa.array([r["note"] for r in rows], pa.string()),
            "duration_ms": pa.array([int(r["duration_ms"]) for r in rows], pa.int64()),
            "timestamp": pa.array([r["timestamp"] for r in rows], pa.timestamp("us", tz="UTC")),
            "pool_version": pa.array([r["pool_version"] for r in rows], pa.string()),
            "rubric_version": pa.array([r["rubric_version"] for r in rows], pa.string()),
            "judgment_id": pa.array([int(r["judgment_id"]) for r in rows], pa.int64()),
        })
        with atomic_write(path, "wb") as f:
            pq.write_table(table, f)
        return len(rows)
    with atomic_write(path) as f:
        f.write(render_judgments(rows, fmt))
    return len(rows)


def render_judgments(rows: Sequence[Mapping[str, Any]], fmt: Literal["csv", "jsonl"]) -> str:
    """The text of a CSV or JSON-lines judgment file (for stdout or ``write_judgments``)."""
    if fmt == "jsonl":
        return "".join(jsonout.dumps({c: _cell(r[c]) for c in EXPORT_COLUMNS}, ensure_ascii=False) + "\n" for r in rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(EXPORT_COLUMNS)
    for r in rows:
        w.writerow(["" if r[c] is None else ("true" if r[c] is True else "false" if r[c] is False else _cell(r[c]))
                    for c in EXPORT_COLUMNS])
    return buf.getvalue()
