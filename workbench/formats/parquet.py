"""Strict readers of Parquet files (corpus, queries, qrels, runs; any table of named columns), via DuckDB,
and the atomic Parquet writer.

One generic reader, ``read_table``, takes the columns a file must (or may)
have, each with the names it is accepted under, and returns them as Python
lists in file order; the readers for corpus, queries and qrels build on it.
Runs and qrels in scoring use the same reader (``read_table``; for large runs
``read_run_arrow`` applies its rules inside DuckDB and returns Arrow columns),
so every Parquet input of the workbench follows one set of rules:

* Columns are found by name, case-sensitively, among a short list of accepted
  names (``_id`` or ``doc_id``; ``query-id``, ``query_id`` or ``topic_id``; ...).
  Other columns are kept (``ParquetTable.extra``) for callers that want them
  (document metadata).
* Ids must be string columns (``VARCHAR``): an integer column has already lost
  ``"007"`` vs ``"7"``, so it is refused with the fix (ids are never numbers).
  An id may not be NULL, empty or hold whitespace (it could not be written to
  a TREC file).
* Text columns are strings; NULL is read as "" where the column is optional
  (title), and is an error where it is required (text).
* Grades are integer columns, or floating-point columns holding whole numbers
  (BEIR's ``score`` is often written as float); each must fit the store's
  32-bit ``INTEGER``. Scores are finite floating-point or integer numbers.
* Errors are ``InputFormatError`` naming the file and the 1-based **row**
  (``corpus.parquet: row 17: ...``; ``line`` holds the row number).

DuckDB reads the file in one in-memory connection that never touches the
workbench store and never loads extensions (Parquet support is built in).

Source:
    Apache Parquet format (parquet.apache.org/docs); DuckDB ``read_parquet``
    (duckdb.org/docs/data/parquet/overview), with ``file_row_number`` for the
    row numbers of errors.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from workbench.errors import InputFormatError
from workbench.formats.trec import GRADE_MAX, GRADE_MIN, RunFile, add_grade, add_result, shown_id
from workbench.scoring import rank_column
from workbench.text import UNSAFE, unsafe_char
from workbench.types import Document, Topic

Kind = Literal["id", "text", "grade", "score", "int"]

_STRING_TYPES = ("VARCHAR",)
_WHITESPACE = re.compile(r"\s").search
"""A character for which ``str.isspace()`` is true (``\\s`` of a str pattern is the same set)."""
_INT_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
              "UBIGINT", "UHUGEINT")
_FLOAT_TYPES = ("FLOAT", "DOUBLE", "REAL")


@dataclass(frozen=True)
class Column:
    """A column a Parquet file must or may have.

    Attributes:
        role: the name the caller uses (``doc_id``, ``text``, ``grade``, ...).
        names: the column names accepted, in order of preference.
        kind: ``id`` (non-empty string, no whitespace), ``text`` (string),
            ``grade`` (whole number, 32-bit), ``score`` (finite number) or ``int``.
        required: the file must have the column; an optional missing column
            reads as "" (text) or None.
    """

    role: str
    names: tuple[str, ...]
    kind: Kind
    required: bool = True


@dataclass(frozen=True)
class ParquetTable:
    """A Parquet file's columns as read (values in file order).

    Attributes:
        path: the file.
        n_rows: rows read.
        values: role -> list of values (one per row); missing optional columns are absent.
        names: role -> the column name found in the file.
        extra: the file's other columns, in file order.
        extra_values: extra column -> values (only with ``keep_extra``).
    """

    path: str
    n_rows: int
    values: dict[str, list[Any]]
    names: dict[str, str]
    extra: tuple[str, ...] = ()
    extra_values: dict[str, list[Any]] = field(default_factory=dict)


def row_error(path: str | Path, row: int, problem: str) -> InputFormatError:
    """``InputFormatError`` for a Parquet row: ``{path}: row {row}: {problem}``; ``line`` is ``row``."""
    err = InputFormatError(str(path), 0, f"row {row}: {problem}")
    err.line = row
    return err


def _connect() -> Any:
    import duckdb

    con = duckdb.connect(config={"autoload_known_extensions": False, "autoinstall_known_extensions": False})
    con.execute("SET enable_progress_bar = false")  # DuckDB's own bar on stderr; progress is the caller's to report
    return con


def quote(name: str) -> str:
    """A column name as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


_quote = quote


def read_table(path: str | Path, columns: Sequence[Column], *, what: str, keep_extra: bool = False) -> ParquetTable:
    """Read chosen columns of a Parquet file, checked by kind (see the module docstring).

    Args:
        path: the Parquet file.
        columns: the columns to read.
        what: what the file holds, for messages (``"corpus"``, ``"qrels"``).
        keep_extra: also return the values of the other columns (as DuckDB
            converts them to Python).

    Returns:
        A ``ParquetTable``.

    Raises:
        InputFormatError: the file is missing, unreadable or not Parquet (row
            0); a required column is missing or a column has the wrong type
            (row 0, listing the file's columns); a value breaks its kind's rule
            (the row); the file has no rows.
    """
    import duckdb

    p = _existing_file(path)
    con = _connect()
    try:
        schema = _file_schema(con, path)
        found = _column_names(path, columns, schema, what)
        extra = tuple(n for n, _ in schema if n not in found.values())
        wanted = [found[c.role] for c in columns if c.role in found] + (list(extra) if keep_extra else [])
        select = ", ".join(_quote(n) for n in wanted) or "1"
        try:
            rows = con.execute(
                f"SELECT {select} FROM read_parquet(?, file_row_number = true) ORDER BY file_row_number",
                [str(p)]).fetchall()
        except duckdb.Error as e:
            raise InputFormatError(str(path), 0, f"expected a readable Parquet file, found an error ({str(e).splitlines()[0]}).") from None
    finally:
        con.close()
    if not rows:
        raise InputFormatError(str(path), 0, f"expected at least one {what} row, found an empty file. "
                                             "Check that the right file was given.")
    values: dict[str, list[Any]] = {}
    i = 0
    for col in columns:
        if col.role not in found:
            continue
        raw = [r[i] for r in rows]
        values[col.role] = _check_values(path, col, found[col.role], raw)
        i += 1
    extra_values = {n: [r[i + j] for r in rows] for j, n in enumerate(extra)} if keep_extra else {}
    return ParquetTable(str(path), len(rows), values, found, extra, extra_values)


def _existing_file(path: str | Path) -> Path:
    """``path`` as a ``Path``, when a file is there.

    Raises:
        InputFormatError: nothing at ``path`` (row 0).
    """
    p = Path(path)
    if not p.is_file():
        raise InputFormatError(str(path), 0, "expected a Parquet file, found nothing at this path. Check the path.")
    return p


def _file_schema(con: Any, path: str | Path) -> list[tuple[str, str]]:
    """(name, type) of every column of the Parquet file at ``path``, in file order.

    Raises:
        InputFormatError: the file is not Parquet (row 0).
    """
    import duckdb

    try:
        return [(r[0], str(r[1])) for r in con.execute(
            "DESCRIBE SELECT * FROM read_parquet(?)", [str(Path(path))]).fetchall()]
    except duckdb.Error as e:
        first = str(e).splitlines()[0]
        raise InputFormatError(str(path), 0, f"expected a Parquet file, found something else ({first}). "
                                             "Write the file with pandas.to_parquet, pyarrow or DuckDB COPY.") from None


def _column_names(path: str | Path, columns: Sequence[Column], schema: Sequence[tuple[str, str]],
                  what: str) -> dict[str, str]:
    """role -> the file's column for each of ``columns`` it has (the first of a column's names found).

    Raises:
        InputFormatError: a required column is missing or a column has the wrong type (row 0,
            listing the file's columns).
    """
    types = dict(schema)
    found: dict[str, str] = {}
    for col in columns:
        name = next((n for n in col.names if n in types), None)
        if name is None:
            if col.required:
                raise InputFormatError(
                    str(path), 0,
                    f"expected a column {' or '.join(repr(n) for n in col.names)} in this {what} file, found "
                    f"columns {[n for n, _ in schema]}. Rename the column.")
            continue
        _check_type(path, col, name, types[name])
        found[col.role] = name
    return found


def _check_type(path: str | Path, col: Column, name: str, dtype: str) -> None:
    base = dtype.split("(")[0].strip('"')
    if base == "NULL":  # a column of NULLs only: its values are checked row by row
        return
    ok = {
        "id": base in _STRING_TYPES,
        "text": base in _STRING_TYPES,
        "grade": base in _INT_TYPES or base in _FLOAT_TYPES or base == "DECIMAL",
        "score": base in _INT_TYPES or base in _FLOAT_TYPES or base == "DECIMAL",
        "int": base in _INT_TYPES,
    }[col.kind]
    if ok:
        return
    fix = {
        "id": "Write ids as strings (e.g. df[col] = df[col].astype(str) before to_parquet): ids are never numbers.",
        "text": "Write the column as strings.",
        "grade": "Write grades as integers.",
        "score": "Write scores as numbers.",
        "int": "Write the column as integers.",
    }[col.kind]
    raise InputFormatError(str(path), 0, f"expected column {name!r} to hold {_KIND_TEXT[col.kind]}, found type {dtype}. {fix}")


def _fast_values(col: Column, raw: list[Any]) -> list[Any] | None:
    """``_check_values``'s result when every value passes, found with C-level scans (no Python loop per
    row); None when some value may fail (the row-by-row check then names it)."""
    if not raw:
        return raw
    types = set(map(type, raw))
    if col.kind in ("id", "text"):
        if types != {str}:
            return None
        if col.kind == "id" and (min(map(len, raw)) == 0 or _WHITESPACE("\0".join(raw)) or UNSAFE.search("".join(raw))):
            return None
        return raw
    if col.kind == "int":
        return raw if types == {int} else None
    if col.kind == "score":
        return [float(x) for x in raw] if types <= {int, float} and all(map(math.isfinite, raw)) else None
    if types == {int} and GRADE_MIN <= min(raw) and max(raw) <= GRADE_MAX:  # grade
        return raw
    if types == {float} and all(map(math.isfinite, raw)) and all(map(float.is_integer, raw)) \
            and GRADE_MIN <= min(raw) and max(raw) <= GRADE_MAX:
        return [int(x) for x in raw]
    return None


_KIND_TEXT = {"id": "string ids", "text": "strings", "grade": "whole-number grades", "score": "numbers",
              "int": "integers"}


def _check_values(path: str | Path, col: Column, name: str, raw: list[Any]) -> list[Any]:
    fast = _fast_values(col, raw)  # the common case; else row by row, for the message
    if fast is not None:
        return fast
    if col.kind == "id":
        for row, v in enumerate(raw, 1):
            if v is None or not v or _WHITESPACE(v):  # the regex scan is str.isspace() per character, in C
                found = "NULL" if v is None else shown_id(v)
                raise row_error(path, row, f"expected a non-empty id without whitespace in column {name!r}, found "
                                           f"{found}. TREC formats cannot carry such ids; fix the value.")
            where = unsafe_char(v)
            if where is not None:  # the rule of the text readers (formats.trec.check_id)
                raise row_error(path, row, f"expected an id without control characters in column {name!r}, found "
                                           f"{shown_id(v)} ({where}). They would act on the terminal and in every "
                                           "file the id is written to; remove them.")
        return raw
    if col.kind == "text":
        if col.required:
            for row, v in enumerate(raw, 1):
                if v is None:
                    raise row_error(path, row, f"expected a string in column {name!r}, found NULL. Write \"\" for no text.")
        return ["" if v is None else v for v in raw]
    if col.kind == "grade":
        out = []
        for row, v in enumerate(raw, 1):
            x = None if v is None else float(v)
            if x is None or not math.isfinite(x) or not x.is_integer():
                raise row_error(path, row, f"expected a whole-number grade in column {name!r}, found "
                                           f"{'NULL' if v is None else repr(v)}. Write grades such as 0, 1, 2.")
            g = int(x)
            if not GRADE_MIN <= g <= GRADE_MAX:
                raise row_error(path, row, f"grade {g} in column {name!r} is out of range ({GRADE_MIN}..{GRADE_MAX}); "
                                           "write a grade of the rubric such as 0, 1, 2.")
            out.append(g)
        return out
    if col.kind == "score":
        out_f = []
        for row, v in enumerate(raw, 1):
            x = None if v is None else float(v)
            if x is None or not math.isfinite(x):
                raise row_error(path, row, f"score {'NULL' if v is None else repr(v)} in column {name!r} is not a "
                                           "finite number; remove the row or re-export the run.")
            out_f.append(x)
        return out_f
    for row, v in enumerate(raw, 1):
        if v is None:
            raise row_error(path, row, f"expected an integer in column {name!r}, found NULL.")
    return raw


# -- the workbench's tables --------------------------------------------------------------

DOC_ID = Column("doc_id", ("_id", "doc_id", "corpus-id"), "id")
TITLE = Column("title", ("title",), "text", required=False)
TEXT = Column("text", ("text", "body", "contents"), "text")
TOPIC_ID = Column("topic_id", ("_id", "topic_id", "query_id", "query-id"), "id")
QUERY_TEXT = Column("text", ("text", "title", "query"), "text")
DESCRIPTION = Column("description", ("description",), "text", required=False)
NARRATIVE = Column("narrative", ("narrative",), "text", required=False)
QRELS_TOPIC = Column("topic_id", ("query-id", "query_id", "topic_id"), "id")
QRELS_DOC = Column("doc_id", ("corpus-id", "doc_id"), "id")
QRELS_GRADE = Column("grade", ("score", "grade", "relevance"), "grade")


def _unique(path: str | Path, ids: list[str], what: str) -> None:
    seen: dict[str, int] = {}
    for row, i in enumerate(ids, 1):
        if i in seen:
            raise row_error(path, row, f"expected each {what} once, found {shown_id(i)} again (first in row {seen[i]}). "
                                       "Remove the repeat.")
        seen[i] = row


def read_corpus(path: str | Path) -> tuple[list[Document], ParquetTable]:
    """Read a corpus Parquet file: ``_id``/``doc_id``, optional ``title``, ``text``/``body``/``contents``.

    Returns:
        (the documents in file order, the table, whose ``extra`` columns are
        the documents' metadata columns).

    Raises:
        InputFormatError: see ``read_table``, plus a repeated doc id (row named).
    """
    t = read_table(path, [DOC_ID, TITLE, TEXT], what="corpus")
    ids = t.values["doc_id"]
    _unique(path, ids, "doc id")
    titles = t.values.get("title", [""] * t.n_rows)
    return [Document(i, ti, tx) for i, ti, tx in zip(ids, titles, t.values["text"], strict=True)], t


def read_queries(path: str | Path) -> list[Topic]:
    """Read a queries Parquet file: ``_id``/``topic_id``/``query_id``, ``text``/``title``/``query``,
    optional ``description`` and ``narrative``.

    Returns:
        The topics in file order (the query text is the topic's title).

    Raises:
        InputFormatError: see ``read_table``, plus a repeated topic id or an empty query text (row named).
    """
    t = read_table(path, [TOPIC_ID, QUERY_TEXT, DESCRIPTION, NARRATIVE], what="queries")
    ids = t.values["topic_id"]
    _unique(path, ids, "topic id")
    texts = t.values["text"]
    for row, x in enumerate(texts, 1):
        if not x.strip():
            raise row_error(path, row, f"expected a non-empty query in column {t.names['text']!r}, found an empty one. "
                                       "Fill it in or remove the row.")
    n = t.n_rows
    return [Topic(i, " ".join(x.split()), d, nr) for i, x, d, nr in zip(
        ids, texts, t.values.get("description", [""] * n), t.values.get("narrative", [""] * n), strict=True)]


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a qrels Parquet file: ``query-id``/``query_id``/``topic_id``, ``corpus-id``/``doc_id``,
    ``score``/``grade``/``relevance`` (other columns, e.g. ``iteration``, are ignored).

    Returns:
        topic_id -> doc_id -> grade, in file order; an exact repeat is accepted once.

    Raises:
        InputFormatError: see ``read_table``, plus a pair given two grades (both rows named).
    """
    t = read_table(path, [QRELS_TOPIC, QRELS_DOC, QRELS_GRADE], what="qrels")
    qrels: dict[str, dict[str, int]] = {}
    topics, docs = t.values["topic_id"], t.values["doc_id"]
    if len(set(zip(topics, docs, strict=True))) == t.n_rows:  # no repeated pair: nothing to reconcile
        for topic, doc, grade in zip(topics, docs, t.values["grade"], strict=True):
            qrels.setdefault(topic, {})[doc] = grade
        return qrels
    first: dict[tuple[str, str], int] = {}
    p = str(path)
    for row, (topic, doc, grade) in enumerate(zip(t.values["topic_id"], t.values["doc_id"], t.values["grade"],
                                                  strict=True), 1):
        try:
            add_grade(qrels, first, p, row, topic, doc, grade)
        except InputFormatError as e:
            raise row_error(path, row, e.problem.replace(" on line ", " in row ")) from None
    return qrels


def scan_qrels_ids(path: str | Path) -> Iterator[tuple[int, str, str]]:
    """(row, topic_id, doc_id) of each row of an already validated qrels Parquet file."""
    t = read_table(path, [QRELS_TOPIC, QRELS_DOC], what="qrels")
    yield from zip(range(1, t.n_rows + 1), t.values["topic_id"], t.values["doc_id"], strict=True)


# -- runs (scoring and run import) and the writer ------------------------------------------

RUN_TOPIC = Column("topic_id", ("topic_id", "query_id", "query-id", "qid"), "id")
RUN_DOC = Column("doc_id", ("doc_id", "docno", "corpus-id"), "id")
RUN_SCORE = Column("score", ("score",), "score")
RUN_RANK = Column("rank", ("rank",), "int", required=False)
MAGIC = b"PAR1"

# Python's str.isspace() characters, as an RE2 class (DuckDB's regexp_matches), so the vectorised
# id check refuses exactly the ids ``_check_values`` refuses.
SPACE_CLASS = (r"[\t\n\x{0b}\x{0c}\r\x{1c}-\x{1f} \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}"
                r"\x{202f}\x{205f}\x{3000}]")

UNSAFE_CLASS = "[" + "".join(c if c == "-" else f"\\x{{{ord(c):x}}}" for c in UNSAFE.pattern[1:-1]) + "]"
"""``text.UNSAFE`` (control, bidi and zero-width characters) as an RE2 class."""

BAD_ID_RE2 = SPACE_CLASS + "|" + UNSAFE_CLASS
"""An id character ``_check_values`` refuses (whitespace or ``text.UNSAFE``), for DuckDB's ``regexp_matches``."""


def is_parquet(path: str | Path) -> bool:
    """True for a readable regular file that starts with the Parquet magic bytes ``PAR1`` (whatever its suffix).

    Anything that is not a regular file (``-`` for standard input, a FIFO, a
    device, a folder) is False without being opened: opening a FIFO with no
    writer blocks forever, so the text readers' refusal gets to name it.
    ``-`` is standard input even when a file named ``-`` exists.
    """
    if str(path) == "-":
        return False
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            return f.read(4) == MAGIC
    except OSError:
        return False


def read_run(path: str | Path, *, trust_file_order: bool = False) -> RunFile:
    """A Parquet run (``topic_id``, ``doc_id``, ``score``, optional ``rank``) as ``trec.read_run`` reads a TREC one.

    Accepted names: topic ``topic_id``/``query_id``/``query-id``/``qid``, document
    ``doc_id``/``docno``/``corpus-id``. A Parquet run has no tag column: its
    tag is the file's stem. A doc_id repeated within a topic keeps its highest
    score (counted in ``duplicates``), as in ``trec.read_run``.

    Args:
        path: the file.
        trust_file_order: order each topic by the ``rank`` column (required
            then; ties by row) instead of the scores.

    Raises:
        InputFormatError: see ``read_table``; ``trust_file_order`` without a rank column.
    """
    from workbench import ranking

    t = read_table(path, [RUN_TOPIC, RUN_DOC, RUN_SCORE, RUN_RANK], what="run")
    if trust_file_order and "rank" not in t.values:
        raise InputFormatError(str(path), 0, "expected a 'rank' column to order by (--trust-file-order), found "
                                             f"columns {[t.names[r] for r in t.values]} and others. Add the rank or "
                                             "drop the option.")
    topics, docs, scores = t.values["topic_id"], t.values["doc_id"], t.values["score"]
    has_rank = "rank" in t.values
    ranks = t.values["rank"] if has_rank else list(range(1, t.n_rows + 1))
    check = rank_column.RankCheck()
    run: dict[str, dict[str, float]] = {}
    rows: dict[str, list[tuple[str, int, float]]] = {}
    duplicates: dict[str, int] = {}
    for row, (topic, doc, score, rank) in enumerate(zip(topics, docs, scores, ranks, strict=True), 1):
        add_result(run, rows, duplicates, topic, doc, check.add(row, topic, int(rank)) if has_rank else int(rank),
                   score)
    file_order = ranking.file_orders(rows)
    if trust_file_order:
        run = {topic: ranking.scores_from_order(file_order[topic]) for topic in run}
    return RunFile(run=run, tag=Path(path).stem, n_lines=t.n_rows, duplicates=duplicates, file_order=file_order,
                   odd_ranks=check.result())


def scan_run_ids(path: str | Path) -> Iterator[tuple[int, str, str]]:
    """(row, topic_id, doc_id) of each row of an already validated run Parquet file (as ``trec.scan_ids``)."""
    t = read_table(path, [RUN_TOPIC, RUN_DOC], what="run")
    yield from zip(range(1, t.n_rows + 1), t.values["topic_id"], t.values["doc_id"], strict=True)


def run_column_names(path: str | Path) -> dict[str, str]:
    """role (``topic_id``, ``doc_id``, ``score``, ``rank`` when present) -> the column's name in a Parquet run.

    Raises:
        InputFormatError: not a Parquet file, a required column missing or a
            column of the wrong type (row 0), as ``read_table``.
    """
    _existing_file(path)
    con = _connect()
    try:
        schema = _file_schema(con, path)
    finally:
        con.close()
    return _column_names(path, (RUN_TOPIC, RUN_DOC, RUN_SCORE, RUN_RANK), schema, "run")


def read_run_arrow(path: str | Path) -> Any:
    """A Parquet run as a ``pyarrow.Table`` (``topic_id``, ``doc_id`` string, ``score`` double, ``rank``
    int64 when the file has one), rows in file order: the columnar reader for scoring large runs.

    The same columns and rules as ``read_run`` (``read_table``), checked inside
    DuckDB over all rows at once (no Python object per row); the first bad
    row is reported with ``read_table``'s message.

    Raises:
        InputFormatError: as ``read_table``.
    """
    import duckdb

    p = _existing_file(path)
    columns = [RUN_TOPIC, RUN_DOC, RUN_SCORE, RUN_RANK]
    found = run_column_names(p)
    con = _connect()
    try:
        q = {role: _quote(name) for role, name in found.items()}
        bad = {
            "topic_id": f"{q['topic_id']} IS NULL OR {q['topic_id']} = '' OR regexp_matches({q['topic_id']}, ?)",
            "doc_id": f"{q['doc_id']} IS NULL OR {q['doc_id']} = '' OR regexp_matches({q['doc_id']}, ?)",
            "score": f"{q['score']} IS NULL OR NOT isfinite({q['score']}::DOUBLE)",
        }
        if "rank" in q:
            bad["rank"] = f"{q['rank']} IS NULL"
        checks = ", ".join(f"min(file_row_number) FILTER (WHERE {cond})" for cond in bad.values())
        params = [BAD_ID_RE2, BAD_ID_RE2, str(p)]
        try:
            firsts = con.execute(f"SELECT count(*), {checks} FROM read_parquet(?, file_row_number = true)",
                                 params).fetchall()[0]
            n_rows, firsts = firsts[0], firsts[1:]
            for (role, _), first in zip(bad.items(), firsts, strict=True):
                if first is not None:
                    value = con.execute(f"SELECT {q[role]} FROM read_parquet(?, file_row_number = true) "
                                        "WHERE file_row_number = ?", [str(p), first]).fetchall()[0][0]
                    col = next(c for c in columns if c.role == role)
                    try:
                        _check_values(path, col, found[role], [value])
                    except InputFormatError as e:
                        raise row_error(path, int(first) + 1, e.problem.removeprefix("row 1: ")) from None
            if not n_rows:
                raise InputFormatError(str(path), 0, "expected at least one run row, found an empty file. "
                                                     "Check that the right file was given.")
            select = (f"{q['topic_id']}::VARCHAR AS topic_id, {q['doc_id']}::VARCHAR AS doc_id, "
                      f"{q['score']}::DOUBLE AS score" + (f", {q['rank']}::BIGINT AS rank" if "rank" in q else ""))
            return con.sql(f"SELECT {select} FROM read_parquet(?)", params=[str(p)]).to_arrow_table()
        except duckdb.Error as e:
            raise InputFormatError(str(path), 0, f"expected a readable Parquet file, found an error "
                                                 f"({str(e).splitlines()[0]}).") from None
    finally:
        con.close()


def write_table(path: str | Path, table: Any, *, compression: str = "zstd") -> Path:
    """Write a ``pyarrow.Table`` to ``path`` as Parquet, atomically (temporary file in the same folder, then rename).

    The new file gets the permissions ``open()`` would give (0o666 minus umask);
    on any error the temporary file is removed and ``path`` is left as it was.

    Raises:
        IsADirectoryError: ``path`` is a folder.
        ValidationError: ``path`` is ``-`` (standard output takes text, ``formats.io.atomic_write``).
    """
    import os
    import tempfile

    import pyarrow.parquet as pq

    from workbench.formats.io import STDOUT, atomic_write

    if str(path) == STDOUT:
        with atomic_write(path, "wb"):  # refuses binary output to stdout
            pass  # pragma: no cover
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(21, "is a folder, not a file", str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression=compression)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


# -- embeddings (``workbench run dense --embeddings``) ----------------------------------------

EMB_DOC = Column("doc_id", ("doc_id", "_id", "corpus-id", "docno"), "id")
EMB_MODEL = Column("model", ("model", "model_key"), "text")
EMB_TEXT_HASH = Column("text_hash", ("text_hash",), "text", required=False)
EMB_VECTOR_NAMES = ("vector", "embedding", "emb")


@dataclass(frozen=True)
class EmbeddingsFile:
    """Document vectors as read from Parquet (one file, or a folder of files as Spark or Ray write them).

    Attributes:
        path: the file or folder.
        doc_ids: one per row, in row order (files of a folder by name).
        vectors: float32 (rows, dimension).
        models: the distinct values of the model column.
        text_hashes: one per row when the file has a ``text_hash`` column, else None.
        files: the Parquet files read.
    """

    path: str
    doc_ids: list[str]
    vectors: np.ndarray
    models: tuple[str, ...]
    text_hashes: list[str] | None
    files: tuple[str, ...]


def _parquet_files(path: Path) -> list[str]:
    if path.is_dir():
        files = sorted(str(p) for p in path.rglob("*.parquet") if p.is_file())
        if not files:
            raise InputFormatError(str(path), 0, "expected Parquet files in this folder, found none.")
        return files
    if not path.is_file():
        raise InputFormatError(str(path), 0, "expected a Parquet file or a folder of them, found nothing at this "
                                             "path. Check the path.")
    return [str(path)]


def read_embeddings(path: str | Path) -> EmbeddingsFile:
    """Read document vectors: ``doc_id``, ``vector`` (a list of floats), ``model``, optional ``text_hash``.

    The ids follow ``read_table``'s rules; every vector must be present, hold
    finite numbers and have one length (the dimension); the model column names
    the model that made them (``model_key_for``'s key, or the model's name).
    Rows are numbered over the files in name order (1-based).

    Raises:
        InputFormatError: no Parquet, a missing or mistyped column (row 0), a
            NULL, empty or whitespace id, a missing or non-finite vector, vectors
            of different lengths (the row).
    """
    import duckdb

    p = Path(path)
    files = _parquet_files(p)
    con = _connect()
    try:
        try:
            schema = {r[0]: str(r[1]) for r in con.execute(
                "DESCRIBE SELECT * FROM read_parquet(?, union_by_name = true)", [files]).fetchall()}
        except duckdb.Error as e:
            raise InputFormatError(str(path), 0, f"expected Parquet, found something else ({str(e).splitlines()[0]}). "
                                                 "Write the file with pandas, pyarrow, Spark or DuckDB COPY.") from None
        found: dict[str, str] = {}
        for col in (EMB_DOC, EMB_MODEL, EMB_TEXT_HASH):
            name = next((n for n in col.names if n in schema), None)
            if name is None:
                if col.required:
                    raise InputFormatError(str(path), 0, f"expected a column {' or '.join(repr(n) for n in col.names)} "
                                                         f"in this embeddings file, found columns {list(schema)}. "
                                                         "Add it (the model column names the model that made the "
                                                         "vectors).")
                continue
            _check_type(path, col, name, schema[name])
            found[col.role] = name
        vec = next((n for n in EMB_VECTOR_NAMES if n in schema), None)
        vtype = schema.get(vec or "", "")
        if vec is None or not (vtype.endswith("[]") or "[" in vtype) or not any(
                t in vtype for t in ("FLOAT", "DOUBLE")):
            raise InputFormatError(str(path), 0, f"expected a column {' or '.join(repr(n) for n in EMB_VECTOR_NAMES)} "
                                                 f"holding lists of floating-point numbers, found columns {schema}.")
        q = {role: _quote(name) for role, name in found.items()}
        v = _quote(vec)
        text_hash = f", {q['text_hash']}" if "text_hash" in q else ""
        try:
            table = con.sql(
                f"SELECT {q['doc_id']} AS doc_id, {q['model']} AS model{text_hash}, {v}::FLOAT[] AS vector "
                "FROM read_parquet(?, union_by_name = true, filename = true, file_row_number = true) "
                "ORDER BY filename, file_row_number", params=[files]).to_arrow_table()
        except duckdb.Error as e:
            raise InputFormatError(str(path), 0, f"expected readable Parquet, found an error "
                                                 f"({str(e).splitlines()[0]}).") from None
    finally:
        con.close()
    doc_ids = _check_values(path, EMB_DOC, found["doc_id"], table.column("doc_id").to_pylist())
    if not doc_ids:
        raise InputFormatError(str(path), 0, "expected at least one vector, found none.")
    vectors = table.column("vector").combine_chunks()
    nulls = vectors.is_null().to_numpy(zero_copy_only=False)
    if nulls.any():
        raise row_error(path, int(np.flatnonzero(nulls)[0]) + 1, f"expected a vector in column {vec!r}, found NULL.")
    lengths = np.diff(np.asarray(vectors.offsets.to_numpy(zero_copy_only=False), dtype=np.int64))
    if len(set(lengths.tolist())) > 1:
        row = int(np.flatnonzero(lengths != lengths[0])[0])
        raise row_error(path, row + 1, f"expected vectors of one dimension ({int(lengths[0])} in row 1), found "
                                       f"{int(lengths[row])}. Re-export the vectors of one model.")
    dim = int(lengths[0])
    if dim == 0:
        raise row_error(path, 1, "expected a vector of at least one number, found an empty list.")
    values = vectors.flatten()
    if values.null_count:  # a NULL inside a vector: its row
        first = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
        raise row_error(path, first // dim + 1, "expected numbers in the vector, found NULL. Re-export the vector.")
    matrix = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(len(doc_ids), dim)
    finite = np.isfinite(matrix).all(axis=1)
    if not finite.all():
        raise row_error(path, int(np.flatnonzero(~finite)[0]) + 1, "expected finite numbers in the vector, found "
                                                                    "NaN or infinity. Re-export the vector.")
    models = tuple(sorted({m for m in table.column("model").to_pylist() if m is not None}))
    hashes = table.column("text_hash").to_pylist() if "text_hash" in q else None
    return EmbeddingsFile(str(path), doc_ids, matrix, models, hashes, tuple(files))
