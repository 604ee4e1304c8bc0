"""Strict readers and atomic writers of TREC run files, qrels and topic files.

Formats:

* run file: ``topic Q0 doc rank score tag``, six columns per line. The second
  column (iteration, usually ``Q0``) is ignored. ``rank`` must be an integer
  and is ignored for ordering (see ``workbench.ranking``) unless the caller asks
  for ``trust_file_order``. ``score`` must be a finite number.
* qrels: ``topic iter doc grade``, four columns; ``iter`` is ignored; ``grade``
  is an integer (negative allowed: never relevant).
* topics: TREC ``<top>`` blocks (``<num> Number: 401``, ``<title>``, ``<desc>
  Description:``, ``<narr> Narrative:``), or a TSV with ``topic_id<TAB>query``.

Normalisations (silent, on purpose):

* a UTF-8 byte-order mark at the start of the file is removed;
* CRLF (and a stray CR) line endings are read as LF;
* columns are separated by any run of spaces and tabs (mixed is fine), and
  leading/trailing whitespace of a line is dropped;
* blank lines are skipped (they still count for line numbers).

Everything else is an ``InputFormatError(path, line, problem)`` whose message
reads ``{path}:{line}: expected ..., found .... {fix}``: wrong column count,
non-integer rank or grade, non-numeric or non-finite score, an empty file,
bytes that are not UTF-8, a second run tag in one run file, a run tag longer than
``NAME_MAX`` (200) characters or a run's topic or document id longer than ``ID_MAX``
(1,000) characters (scorers pack ids to the longest one's width: one 10 MB id would
make every line 10 MB), and a qrels (topic, doc) pair given two different grades.

The readers know nothing about collections: checking that topic and document
ids exist is the ingest service's job, which finds the offending line with
``scan_ids``.

Source:
    trec_eval's input conventions (usnistgov/trec_eval: ``get_trec_results.c``,
    ``get_qrels.c``): whitespace-separated columns, rank column not used for
    ordering, iteration column ignored.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from workbench import ranking
from workbench.errors import InputFormatError, ValidationError
from workbench.formats.io import atomic_write
from workbench.scoring import rank_column
from workbench.text import (
    NAME_MAX,
    NESTING_MAX,
    SHOWN_MAX,
    UNSAFE,
    cut,
    escape_char,
    line_and_column,
    shown,
    too_deep,
    unsafe_char,
)
from workbench.types import Topic

_WS = " \t\r\f\v"
_UNSAFE_IN_LINE = re.compile(UNSAFE.pattern.replace("\x00-\x1f", "\x00-\x08\x0e-\x1f"))  # separators and LF are fine
_SPLIT = re.compile(r"[ \t\r\f\v]+").split
_INT = re.compile(r"[+-]?[0-9]+")
_NUM = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NONFINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}

RUN_COLUMNS = "topic Q0 doc rank score tag"
GRADE_MIN, GRADE_MAX = -2147483648, 2147483647  # the store's INTEGER column (32-bit signed)
ID_SHOWN = SHOWN_MAX  # characters of an id shown in an error message
ID_MAX = 1_000
"""The longest topic or document id a run file may hold, in characters (a longer one is refused with its line)."""
QRELS_COLUMNS = "topic iter doc grade"


@dataclass(frozen=True)
class RunFile:
    """A run file as read.

    Attributes:
        run: topic_id -> doc_id -> score. When a doc_id repeats within a topic,
            the occurrence with the highest score is kept. With
            ``trust_file_order`` the scores are ``ranking.scores_from_order``
            of ``file_order`` (n, n-1, ..., 1).
        tag: the run tag (sixth column); one per file.
        n_lines: number of result lines read (blank lines not counted).
        duplicates: topic_id -> number of dropped duplicate lines (only topics
            that had some).
        file_order: topic_id -> doc ids ordered by the file's rank column (ties
            by file position; a duplicate keeps its best-ranked occurrence).
        odd_ranks: the lines whose rank is negative, above ``rank_column.RANK_MAX`` or repeated
            within its topic (``odd_ranks_warning`` says so), or None.
    """

    run: dict[str, dict[str, float]]
    tag: str
    n_lines: int
    duplicates: dict[str, int]
    file_order: dict[str, list[str]]
    odd_ranks: rank_column.OddRanks | None = None


# -- line reading ---------------------------------------------------------------


_STDIN: bytes | None = None  # standard input, read once (a reader may scan a file twice)


def check_regular_file(path: str | Path) -> None:
    """Raise unless ``path`` is ``-`` (standard input) or a regular file.

    A FIFO with no writer would block a reader forever, and a device or socket
    is no input file; both are refused before anything is opened.

    Raises:
        InputFormatError: missing, a folder, or not a regular file (line 0).
    """
    if str(path) == "-":
        return
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputFormatError(str(path), 0, "expected a file, found nothing at this path. Check the path.") from None
    except OSError as e:
        raise InputFormatError(str(path), 0, f"expected a readable file, found {e.strerror}. Check the path and permissions.") from None
    if stat.S_ISREG(mode):
        return
    kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")
    raise InputFormatError(str(path), 0, f"expected a regular file, found {kind}. Pass a file, or - to read "
                                         "standard input.")


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a regular file, or of standard input for ``-`` (read once, then reused).

    Raises:
        InputFormatError: see ``check_regular_file``.
    """
    global _STDIN
    check_regular_file(path)
    if str(path) == "-":
        if _STDIN is None:
            _STDIN = sys.stdin.buffer.read()
        return _STDIN
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise InputFormatError(str(path), 0, f"expected a readable file, found {e.strerror}. Check the path and permissions.") from None


def read_text(path: str | Path) -> str:
    """Read a UTF-8 text file with the module's normalisations (BOM, CRLF).

    Args:
        path: the file, or ``-`` for standard input. Anything else that is not a
            regular file (a FIFO, a device, a folder) is refused.

    Returns:
        The text with a leading BOM removed and CRLF/CR turned into LF.

    Raises:
        InputFormatError: the file is missing, unreadable or not a regular file
            (line 0) or holds bytes that are not UTF-8 (the line of the first bad byte).
    """
    data = read_bytes(path)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise InputFormatError(
            str(path), line,
            f"expected UTF-8 text, found byte 0x{data[e.start]:02x} at column {col}. Re-save the file as UTF-8.",
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def iter_columns(path: str | Path) -> Iterator[tuple[int, list[str]]]:
    """(1-based line number, columns) of each non-blank line, with the module's normalisations.

    Columns are separated by any run of spaces and tabs; BOM and CRLF are
    normalised by ``read_text``, whose errors it raises.
    """
    text = read_text(path)
    m = _UNSAFE_IN_LINE.search(text)
    if m is not None:  # one scan of the file, not one per id: every column of these files is an id, tag or number
        lineno = text.count("\n", 0, m.start()) + 1
        line = text.split("\n", lineno)[lineno - 1]
        col = len(_SPLIT(line[: m.start() - (text.rfind("\n", 0, m.start()) + 1)].lstrip(_WS)))
        raise InputFormatError(
            str(path), lineno,
            f"expected no control characters, found {escape_char(m.group(0))} in column {col} "
            f"({shown_id(_SPLIT(line.strip(_WS))[col - 1])}). Ids with them would act on the terminal "
            "and in every file they are written to; remove them.",
        )
    for lineno, line in enumerate(text.split("\n"), 1):
        stripped = line.strip(_WS)
        if stripped:
            yield lineno, _SPLIT(stripped)


_lines = iter_columns


def iter_json_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line number, object) of each non-blank line of a JSON-lines file.

    Text is read by ``read_text`` (UTF-8, BOM and CRLF normalised), whose errors
    it raises; each line by ``parse_json``.

    Raises:
        InputFormatError: a line that is not valid JSON (or that ``parse_json`` refuses: a key given twice
            in an object, nesting too deep, a number too long), or JSON that is not an object (file, line
            and what was found).
    """
    p = str(path)
    for lineno, line in enumerate(read_text(path).split("\n"), 1):
        if not line.strip():
            continue
        obj = parse_json(line, p, lineno)
        if not isinstance(obj, dict):
            raise InputFormatError(p, lineno, f"expected a JSON object, found a JSON {type(obj).__name__}. Write one object per line.")
        yield lineno, obj


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict; a key given twice raises (``json`` would keep the last value silently)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)  # built once: json.loads(..., hook) builds one per call


def parse_json(text: str, path: str | Path, line: int = 0) -> Any:
    """The JSON value of ``text`` (one line of a JSON-lines file, or a whole file), refusing what would be misread.

    Refused: invalid JSON; an object that gives a key twice (which value counts is not clear; ``json.loads``
    keeps the last one silently); arrays or objects nested too deep for the recursive decoder (located with
    ``text.too_deep``); a number of more digits than Python reads (4,300).

    Args:
        text: the JSON text.
        path: the file, for the message.
        line: the 1-based line ``text`` is (a JSON-lines file); 0 for a whole file (lines then come from
            the position in ``text``).

    Raises:
        InputFormatError: naming the file, the line and the column.

    Example:
        >>> parse_json('{"grade": 1, "grade": 2}', "j.jsonl", 4)  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        ...
        workbench.errors.InputFormatError: j.jsonl:4: expected each key once in a JSON object, found 'grade' twice ...
    """
    p = str(path)

    def where(index: int) -> tuple[int, int]:
        at, col = line_and_column(text, index)
        return (line or at), col

    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as e:
        raise InputFormatError(p, line or e.lineno, f"expected a JSON object, found invalid JSON ({e.msg} at column "
                                                    f"{e.colno}). Fix or remove the line.") from None
    except _RepeatedKey as e:
        raise InputFormatError(p, line, f"expected each key once in a JSON object, found {shown(e.key)} twice: "
                                        "which value counts is not clear. Remove one of them.") from None
    except RecursionError:
        deep = too_deep(text)
        at, col = where(deep) if deep is not None else (line, 0)
        raise InputFormatError(p, at, f"expected arrays and objects nested at most {NESTING_MAX} levels deep, "
                                      f"found deeper nesting{f' from column {col}' if col else ''}, too deep to read. "
                                      "Flatten the value.") from None
    except ValueError as e:  # an integer of more than 4,300 digits (sys.get_int_max_str_digits)
        found = "a number of more digits" if "integer string conversion" in str(e) else cut(str(e))
        raise InputFormatError(p, line, f"expected JSON numbers of at most 4,300 digits, found {found}. "
                                        "Shorten the number or quote it as a string.") from None


def empty_file_error(path: str | Path, what: str) -> InputFormatError:
    """The error for a file with no data lines (``what``: run, qrels, topic, ...)."""
    return _empty(path, what)


def _empty(path: str | Path, what: str) -> InputFormatError:
    return InputFormatError(
        str(path), 0, f"expected at least one {what} line, found an empty file. Check that the right file was given."
    )


def shown_id(value: str) -> str:
    """An id quoted for an error message, cut to its first ``ID_SHOWN`` characters (``text.shown``).

    Example:
        >>> shown_id("d1")
        "'d1'"
        >>> shown_id("x" * 100)[-20:]
        "x'… (100 characters)"
    """
    return shown(value, ID_SHOWN)


_FIELD_LIMIT = re.compile(r"field larger than field limit \((\d+)\)")


def csv_cell_too_long(path: str | Path, line: int, e: Exception) -> InputFormatError | None:
    """The error for a CSV cell longer than Python's ``csv`` reader reads (``csv.field_size_limit()``), or None
    when ``e`` is another ``csv.Error`` (the caller words that one).

    Example:
        >>> str(csv_cell_too_long("m.csv", 2, Exception("field larger than field limit (131072)")))
        "m.csv:2: expected cells of at most 131,072 characters (the CSV reader's limit), found a longer one. Shorten the cell."
    """
    m = _FIELD_LIMIT.search(str(e))
    if m is None:
        return None
    return InputFormatError(str(path), line, f"expected cells of at most {int(m.group(1)):,} characters (the CSV "
                                             "reader's limit), found a longer one. Shorten the cell.")


def shown_json(value: object) -> str:
    """A decoded JSON value for an error message: its JSON text, cut to ``ID_SHOWN`` characters (``text.cut``).

    Example:
        >>> shown_json([1, "a"]), shown_json(["x" * 100])[-20:]
        ('[1, "a"]', 'xx… (104 characters)')
    """
    try:
        text = json.dumps(value, default=str, ensure_ascii=False)
    except (RecursionError, ValueError):
        return f"a JSON {type(value).__name__}"
    return cut(text, ID_SHOWN)


def check_grade(path: str | Path, lineno: int, token: str, column: int) -> int:
    """The integer grade written in ``token``, range-checked for the store.

    Args:
        path: the file (for the error message).
        lineno: 1-based line number.
        token: the grade column as written.
        column: 1-based column number (for the error message).

    Returns:
        The grade.

    Raises:
        InputFormatError: not a whole number, or outside
            ``GRADE_MIN..GRADE_MAX`` (the store keeps grades in a 32-bit INTEGER column).
    """
    if not _INT.fullmatch(token):
        raise InputFormatError(
            str(path), lineno,
            f"expected an integer grade in column {column}, found {shown_id(token)}. Write grades as whole numbers such as 0, 1, 2.",
        )
    grade = int(token) if len(token) <= 12 else GRADE_MAX + 1  # more digits: out of range (and int() may refuse them)
    if not GRADE_MIN <= grade <= GRADE_MAX:
        raise InputFormatError(
            str(path), lineno,
            f"grade {shown_id(token)} is out of range ({GRADE_MIN}..{GRADE_MAX}); write a grade of the rubric such as 0, 1, 2.",
        )
    return grade


def check_id(path: str | Path, lineno: int, value: str, what: str) -> str:
    """``value`` if it is a usable id: non-empty, without whitespace and without control characters.

    TREC run and qrels files separate columns by whitespace, so an id holding
    a space or tab could never be exported. A control character (or another
    ``text.UNSAFE`` one, e.g. a bidi override) would act on the terminal of
    anyone listing or diffing the id: the rule of names (``text.check_name``).

    Raises:
        InputFormatError: the id is empty, contains whitespace or an unsafe character.
    """
    if not value or any(c.isspace() for c in value):
        raise InputFormatError(
            str(path), lineno,
            f"expected a non-empty {what} without whitespace, found {shown_id(value)}. "
            "TREC formats cannot carry ids with spaces or tabs; replace them (e.g. by '_').",
        )
    where = unsafe_char(value)
    if where is not None:
        raise InputFormatError(
            str(path), lineno,
            f"expected a {what} without control characters, found {shown_id(value)} ({where}). "
            "They would act on the terminal and in every file the id is written to; remove them.",
        )
    return value


def parse_score(token: str) -> float | None:
    """The finite float written in ``token``, or None when it is not a plain decimal number.

    Raises:
        ValueError: the token is a number but not finite (``nan``, ``inf``, ``1e999``).
    """
    if _NUM.fullmatch(token):
        value = float(token)
        if math.isfinite(value):
            return value
        raise ValueError(token)
    if token.lower() in _NONFINITE:
        raise ValueError(token)
    return None


# -- runs -------------------------------------------------------------------------


def read_run(path: str | Path, *, trust_file_order: bool = False) -> RunFile:
    """Read a TREC run file strictly.

    Args:
        path: the run file (``topic Q0 doc rank score tag`` per line).
        trust_file_order: when True, order each topic by the file's rank
            column instead of the scores, and replace the scores by
            ``ranking.scores_from_order`` of that order. Default False: ranks
            are ignored, as trec_eval does.

    Returns:
        A ``RunFile``; topics appear in ``run`` in order of first appearance.

    Raises:
        InputFormatError: see the module docstring for each case.

    Example:
        >>> rf = read_run("runs/bm25.trec")  # doctest: +SKIP
        >>> rf.tag, rf.run["1"]["d3"]  # doctest: +SKIP
        ('bm25', 12.5)
    """
    run: dict[str, dict[str, float]] = {}
    rows: dict[str, list[tuple[str, int, float]]] = {}
    duplicates: dict[str, int] = {}
    tag: str | None = None
    tag_line = 0
    n = 0
    p = str(path)
    ranks = rank_column.RankCheck()
    for lineno, cols in _lines(path):
        if len(cols) != 6:
            raise InputFormatError(
                p, lineno,
                f"expected 6 columns ({RUN_COLUMNS}), found {len(cols)}. "
                "Write one result per line, columns separated by spaces or tabs.",
            )
        topic, _iteration, doc, rank_s, score_s, line_tag = cols
        for what, column, value in (("topic id", 1, topic), ("document id", 3, doc)):
            if len(value) > ID_MAX:
                raise InputFormatError(p, lineno, f"{what} {shown_id(value)}: expected at most {ID_MAX:,} "
                                                  f"characters; shorten the id (column {column}).")
        if not _INT.fullmatch(rank_s):
            raise InputFormatError(
                p, lineno, f"expected an integer rank in column 4, found {shown_id(rank_s)}. Write the rank as a whole number."
            )
        try:
            score = parse_score(score_s)
        except ValueError:
            raise InputFormatError(
                p, lineno, f"score {shown_id(score_s)} is not a finite number; remove the line or re-export the run."
            ) from None
        if score is None:
            raise InputFormatError(
                p, lineno,
                f"expected a numeric score in column 5, found {shown_id(score_s)}. Write the score as a decimal number such as 12.5.",
            )
        if tag is None:
            if len(line_tag) > NAME_MAX:
                raise InputFormatError(p, lineno, f"run tag {shown_id(line_tag)}: expected at most {NAME_MAX} "
                                                  "characters; shorten the tag (column 6).")
            tag, tag_line = line_tag, lineno
        elif line_tag != tag:
            raise InputFormatError(
                p, lineno,
                f"expected run tag {tag!r} (as on line {tag_line}), found {shown_id(line_tag)}. "
                "A run file holds one run; split the file by tag.",
            )
        n += 1
        add_result(run, rows, duplicates, topic, doc, ranks.add(lineno, topic, rank_s), score)
    if n == 0 or tag is None:
        raise _empty(path, "run")
    file_order = ranking.file_orders(rows)
    if trust_file_order:
        run = {topic: ranking.scores_from_order(file_order[topic]) for topic in run}
    return RunFile(run=run, tag=tag, n_lines=n, duplicates=duplicates, file_order=file_order,
                   odd_ranks=ranks.result())


def odd_ranks_warning(path: str | Path, odd: rank_column.OddRanks, *, trust_file_order: bool = False,
                      rows: bool = False) -> str:
    """The warning about a run file's odd rank column (``rank_column.OddRanks``): the count and the first line.

    Every reader of the rank column (``read_run``, ``formats.columnar``, ``formats.parquet``) finds the same
    ``OddRanks`` for the same file, so this is the one wording. ``rows``: a Parquet file (its rows, not lines).

    Example:
        >>> odd_ranks_warning("r.trec", rank_column.OddRanks(3, 7, "2", "repeated", "1", 5))
        "r.trec:7: 3 line(s) with a negative, too large (> 2147483647) or repeated rank within a topic; the first: rank 2 repeats line 5 of topic '1'. The ranks do not change the numbers: each topic is ordered by score (trec_eval's rule)"
    """
    unit = "row" if rows else "line"
    if odd.kind == "repeated":
        first = f"rank {odd.rank} repeats {unit} {odd.first_line} of topic {shown_id(odd.topic)}"
    else:
        first = f"rank {odd.rank} of topic {shown_id(odd.topic)} is {odd.kind}"
    effect = ("--trust-file-order orders each topic by them (ties by file position)" if trust_file_order else
              "The ranks do not change the numbers: each topic is ordered by score (trec_eval's rule)")
    where = f"{path}: row {odd.line}" if rows else f"{path}:{odd.line}"
    return (f"{where}: {odd.n_lines} {unit}(s) with a negative, too large (> {rank_column.RANK_MAX}) or repeated "
            f"rank within a topic; the first: {first}. {effect}")


def _sort_key(id_: str) -> tuple[int, int, str]:
    """Natural order for ids: numeric ids by value, then the rest as strings (ids stay str)."""
    return (0, int(id_), id_) if id_.isascii() and id_.isdigit() else (1, 0, id_)


def sorted_ids(ids: Iterator[str] | list[str] | Mapping[str, object] | set[str]) -> list[str]:
    """Ids in natural order: all-digit ids by numeric value first, then the others by string.

    Example:
        >>> sorted_ids(["10", "2", "b", "a"])
        ['2', '10', 'a', 'b']
    """
    return sorted(ids, key=_sort_key)


def write_run(path: str | Path, run: Mapping[str, Mapping[str, float]], tag: str) -> None:
    """Write a run atomically in TREC format, ranked by ``workbench.ranking.ranked``.

    Args:
        path: the target file (replaced atomically).
        run: topic_id -> doc_id -> score.
        tag: the run tag (no whitespace).

    Raises:
        UnwritableIdError: the tag or an id is empty or contains whitespace
            (a ``ValidationError`` and a ``ValueError``).
        ValueError: a score is not finite (a programming error, not a user file).
    """
    check_column(tag, "run tag")
    with atomic_write(path) as f:
        for topic in sorted_ids(list(run)):
            check_column(topic, "topic id")
            for sd in ranking.ranked(run[topic]):
                check_column(sd.doc_id, "doc id")
                if not math.isfinite(sd.score):
                    raise ValueError(f"score of {topic}/{sd.doc_id} is not finite: {sd.score!r}")
                f.write(f"{topic} Q0 {sd.doc_id} {sd.rank} {sd.score!r} {tag}\n")


class UnwritableIdError(ValidationError, ValueError):
    """An id or tag cannot be written as a TREC column (empty, or holds whitespace).

    A ``WorkbenchError`` (the CLI prints one line) and, for older callers, a ``ValueError``.
    """


def check_column(value: str, what: str) -> None:
    """Refuse a value that cannot be one column of a TREC line.

    Args:
        value: an id or tag.
        what: its kind, for the message (``"doc id"``, ``"run tag"``, ...).

    Raises:
        UnwritableIdError: ``value`` is empty or contains whitespace.
    """
    if not value or any(c.isspace() for c in value):
        raise UnwritableIdError(
            f"{what} {shown_id(value)} is empty or contains whitespace; it cannot be written as a TREC column. "
            "Re-import the data with ids without spaces or tabs."
        )


# -- qrels --------------------------------------------------------------------------


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file strictly.

    Args:
        path: the qrels file (``topic iter doc grade`` per line).

    Returns:
        topic_id -> doc_id -> grade, topics and documents in file order. A
        line repeating a (topic, doc) pair with the same grade is accepted
        once.

    Raises:
        InputFormatError: wrong column count, non-integer grade, empty file,
            non-UTF-8 bytes, or a (topic, doc) pair given two different grades.

    Example:
        >>> read_qrels("qrels.txt")  # doctest: +SKIP
        {'1': {'d1': 2, 'd7': 0}}
    """
    qrels: dict[str, dict[str, int]] = {}
    first_line: dict[tuple[str, str], int] = {}
    p = str(path)
    for lineno, cols in _lines(path):
        if len(cols) != 4:
            raise InputFormatError(
                p, lineno,
                f"expected 4 columns ({QRELS_COLUMNS}), found {len(cols)}. "
                "Write one judgment per line, columns separated by spaces or tabs.",
            )
        topic, _iteration, doc, grade_s = cols
        grade = check_grade(p, lineno, grade_s, 4)
        add_grade(qrels, first_line, p, lineno, topic, doc, grade)
    if not qrels:
        raise _empty(path, "qrels")
    return qrels


def write_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write qrels atomically in TREC format (``topic 0 doc grade``).

    Topics are in natural id order (``sorted_ids``), documents likewise, so
    the same qrels always give the same bytes.

    Args:
        path: the target file (replaced atomically).
        qrels: topic_id -> doc_id -> grade.

    Raises:
        UnwritableIdError: an id is empty or contains whitespace.
    """
    with atomic_write(path) as f:
        for topic in sorted_ids(list(qrels)):
            check_column(topic, "topic id")
            grades = qrels[topic]
            for doc in sorted_ids(list(grades)):
                check_column(doc, "doc id")
                f.write(f"{topic} 0 {doc} {int(grades[doc])}\n")


def scan_ids(path: str | Path, kind: Literal["run", "qrels"]) -> Iterator[tuple[int, str, str]]:
    """(line, topic_id, doc_id) of each line of an already validated run or qrels file.

    Used by the ingest service to name the file and line of the first id that
    is not in the collection, without keeping line numbers in the readers'
    results.

    Args:
        path: the file, already read successfully with ``read_run`` or ``read_qrels``.
        kind: ``"run"`` (doc in column 3) or ``"qrels"`` (doc in column 3).
    """
    expected = 6 if kind == "run" else 4
    for lineno, cols in _lines(path):
        if len(cols) == expected:
            yield lineno, cols[0], cols[2]


# -- topics -------------------------------------------------------------------------

_TOP_TAG = re.compile(r"<(/?)top>", re.IGNORECASE)
_FIELD = re.compile(r"<(num|title|desc|narr)>", re.IGNORECASE)
_CLOSE = re.compile(r"</(num|title|desc|narr)>", re.IGNORECASE)
_EXTRA_TAG = re.compile(r"<([A-Za-z_][A-Za-z0-9_.-]*)>(.*?)</\1>", re.DOTALL)
_STANDARD_TAGS = {"num", "title", "desc", "narr", "top"}
_PREFIX = {
    "num": re.compile(r"^\s*(number\s*:)?\s*", re.IGNORECASE),
    "title": re.compile(r"^\s*(topic\s*:)?\s*", re.IGNORECASE),
    "desc": re.compile(r"^\s*(description\s*:)?\s*", re.IGNORECASE),
    "narr": re.compile(r"^\s*(narrative\s*:)?\s*", re.IGNORECASE),
}


def _top_blocks(path: str, text: str) -> Iterator[tuple[int, str]]:
    """(line of ``<top>``, body) of each ``<top> ... </top>`` block; every block must be closed.

    Raises:
        InputFormatError: a ``<top>`` not closed before the next ``<top>`` or the
            end of the file, or a ``</top>`` without its ``<top>``.
    """
    open_at: int | None = None
    open_line = 0
    for m in _TOP_TAG.finditer(text):
        lineno = text.count("\n", 0, m.start()) + 1
        if m.group(1):  # </top>
            if open_at is None:
                raise InputFormatError(
                    path, lineno, "expected '<top>' before this '</top>', found none. Add the missing '<top>' or remove the '</top>'."
                )
            yield open_line, text[open_at:m.start()]
            open_at = None
        else:
            if open_at is not None:
                raise InputFormatError(
                    path, open_line,
                    f"`<top>` opened at line {open_line} is not closed before line {lineno}. Add '</top>' at the end of the block.",
                )
            open_at, open_line = m.end(), lineno
    if open_at is not None:
        end_line = text.count("\n") + 1
        raise InputFormatError(
            path, open_line,
            f"`<top>` opened at line {open_line} is not closed before line {end_line} (the end of the file). "
            "Add '</top>' at the end of the block.",
        )


def _clean(text: str) -> str:
    return " ".join(text.split())


def read_topics_with_metadata(path: str | Path) -> tuple[list[Topic], dict[str, dict[str, Any]]]:
    """Read topics and their metadata tags from a TREC topic file (or a TSV, which has none).

    In a ``<top>`` block, an element other than ``num``/``title``/``desc``/``narr``
    written with its closing tag, e.g. ``<priority>critical</priority>`` or
    ``<filter>year &lt;= 1956</filter>`` (entities ``&lt; &gt; &amp;`` are decoded), is
    topic metadata: the tag is the key, the text the value, typed per tag across
    the file as text cells are (``workbench.metadata.infer_column``).

    Returns:
        (the topics in file order, topic_id -> key -> value for topics with tags).

    Raises:
        InputFormatError: as ``read_topics``, or a tag that is not a valid metadata key.
    """
    topics, raw = _read_topics(path)
    from workbench.metadata import MetadataValueError, infer_column

    keys = sorted({k for tags in raw.values() for k in tags})
    meta: dict[str, dict[str, Any]] = {}
    ids = list(raw)
    for key in keys:
        try:
            values, _ = infer_column([raw[t].get(key, "") for t in ids])
        except MetadataValueError as e:
            raise InputFormatError(str(path), 0, f"tag <{key}>: {e}.") from None
        for t, v in zip(ids, values, strict=True):
            if v is not None:
                meta.setdefault(t, {})[key] = v
    return topics, meta


def read_topics(path: str | Path) -> list[Topic]:
    """Read topics from a TREC topic file or a ``topic_id<TAB>query`` TSV.

    The format is chosen by content: a file containing ``<top>`` is a TREC
    topic file, anything else a TSV. In TREC files the ``Number:``,
    ``Topic:``, ``Description:`` and ``Narrative:`` prefixes are removed and
    whitespace inside a field is collapsed to single spaces; closing tags
    (``</title>``) are optional. In a TSV the first tab separates the id from
    the query; the query may contain spaces.

    Args:
        path: the topic file.

    Returns:
        The topics in file order.

    Raises:
        InputFormatError: an empty file, a ``<top>`` block without ``<num>``
            or without title and description, a TSV line without a tab or with
            an empty id or query, or a repeated topic id.

    Example:
        >>> [t.topic_id for t in read_topics("topics.401-450.txt")][:2]  # doctest: +SKIP
        ['401', '402']
    """
    return _read_topics(path)[0]


def _read_topics(path: str | Path) -> tuple[list[Topic], dict[str, dict[str, str]]]:
    text = read_text(path)
    p = str(path)
    topics: list[Topic] = []
    seen: dict[str, int] = {}
    tags: dict[str, dict[str, str]] = {}

    def add(topic: Topic, lineno: int) -> None:
        check_id(p, lineno, topic.topic_id, "topic id")
        if topic.topic_id in seen:
            raise InputFormatError(
                p, lineno,
                f"expected each topic id once, found {shown_id(topic.topic_id)} again (first on line {seen[topic.topic_id]}). "
                "Remove or renumber one of them.",
            )
        seen[topic.topic_id] = lineno
        topics.append(topic)

    if re.search(r"<top>", text, re.IGNORECASE):
        for lineno, raw_body in _top_blocks(p, text):
            extra: dict[str, str] = {}

            def take(m: re.Match[str], extra: dict[str, str] = extra) -> str:
                if m.group(1).lower() in _STANDARD_TAGS:
                    return m.group(0)
                value = _clean(m.group(2)).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
                extra[m.group(1)] = value
                return " "

            body = _CLOSE.sub(" ", _EXTRA_TAG.sub(take, raw_body))
            fields: dict[str, str] = {}
            parts = _FIELD.split(body)
            for name, value in zip(parts[1::2], parts[2::2], strict=True):
                key = name.lower()
                fields[key] = _clean(_PREFIX[key].sub("", value, count=1))
            num = fields.get("num", "")
            if not num:
                raise InputFormatError(p, lineno, "expected '<num> Number: N' in this <top> block, found none. Add the topic number.")
            title, desc = fields.get("title", ""), fields.get("desc", "")
            if not title and not desc:
                raise InputFormatError(
                    p, lineno, f"expected a <title> or <desc> for topic {shown_id(num)}, found neither. Add the query text."
                )
            add(Topic(num, title, desc, fields.get("narr", "")), lineno)
            if extra:
                from workbench.metadata import MetadataValueError, check_key

                for key in extra:
                    try:
                        check_key(key)
                    except MetadataValueError as e:
                        raise InputFormatError(p, lineno, f"tag <{key}>: {e}. Rename the tag.") from None
                tags[num] = extra
    else:
        for lineno, line in enumerate(text.split("\n"), 1):
            if not line.strip(_WS):
                continue
            if "\t" not in line:
                raise InputFormatError(
                    p, lineno,
                    "expected 2 columns separated by a tab (topic_id<TAB>query), found no tab. "
                    "Separate the id from the query with a tab.",
                )
            topic_id, query = line.split("\t", 1)
            topic_id, query = topic_id.strip(_WS), _clean(query)
            if not topic_id or not query:
                what = "topic id" if not topic_id else "query"
                raise InputFormatError(p, lineno, f"expected a non-empty {what}, found an empty one. Fill it in or remove the line.")
            add(Topic(topic_id, query), lineno)
    if not topics:
        raise _empty(path, "topic")
    return topics, tags


def add_result(
    run: dict[str, dict[str, float]],
    rows: dict[str, list[tuple[str, int, float]]],
    duplicates: dict[str, int],
    topic: str,
    doc: str,
    rank: int,
    score: float,
) -> None:
    """Add one run line: a repeated doc_id counts once per topic, at its best score, and is counted.

    Shared by the run readers (TREC, Parquet) so they treat repeats alike; ``rows``
    keeps every line (doc, rank, score) for ``ranking.file_orders``.
    """
    scores = run.setdefault(topic, {})
    if doc in scores:
        duplicates[topic] = duplicates.get(topic, 0) + 1
        if score > scores[doc]:
            scores[doc] = score
    else:
        scores[doc] = score
    rows.setdefault(topic, []).append((doc, rank, score))


def add_grade(
    qrels: dict[str, dict[str, int]],
    first_line: dict[tuple[str, str], int],
    path: str,
    lineno: int,
    topic: str,
    doc: str,
    grade: int,
) -> None:
    """Add one qrels line: an exact repeat is accepted once, a conflicting grade is an error.

    Shared by every qrels reader (TREC, BEIR tsv) so they treat repeats alike.

    Raises:
        InputFormatError: the (topic, doc) pair already has another grade (names both lines).
    """
    grades = qrels.setdefault(topic, {})
    if doc in grades:
        if grades[doc] != grade:
            raise InputFormatError(
                path, lineno,
                f"expected one grade for topic {shown_id(topic)} and document {shown_id(doc)}, found {grade} here and "
                f"{grades[doc]} on line {first_line[(topic, doc)]}. Keep one of the two lines.",
            )
        return
    grades[doc] = grade
    first_line[(topic, doc)] = lineno
