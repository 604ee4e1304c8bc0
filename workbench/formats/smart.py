"""Readers of the Cranfield collection's SMART files.

Files (see ``sample_corpus/cranfield/README.md`` for provenance):

* ``cran.all.1400``: records ``.I id``, then ``.T`` title, ``.A`` authors,
  ``.B`` bibliographic source and ``.W`` text, each marker on its own line.
* ``cran.qry``: records ``.I nnn`` and ``.W`` text.
* ``cranqrel``: ``query doc code`` per line.

Conventions (each is a decision, written down):

* **Query numbering.** The ``.I`` numbers of ``cran.qry`` (001, 002, 004,
  008, ...) are *not* the query ids of ``cranqrel``; cranqrel numbers the
  queries 1..225 in file order. So topic ids are the 1-based position in
  ``cran.qry`` ("1", "2", "3", ...); the ``.I`` value is kept as ``smart_id``.
  Joining on ``.I`` would silently score the wrong queries.
* **Grades.** cranqrel codes are Cleverdon's (lower = more relevant), so the
  grade is inverted: ``GRADE_OF_CODE`` maps 1->4, 2->3, 3->2, 4->1 and 5
  (written -1) ->0, matching ``workbench.rubric.CRANFIELD``.
* **Text.** Lines of a field are joined with single spaces and runs of
  whitespace collapse to one space. The ``.W`` text of a document begins with a
  repeat of its title; it is kept verbatim (``title`` holds ``.T``, ``text``
  holds ``.W``), as ir_datasets' ``cranfield`` does, so ``Document.content``
  contains the title twice.
* **Stray markers.** Once a record's ``.W`` text has started, only ``.I``
  ends it: marker lines inside the text (``.A``/``.B`` in document 240, a
  second ``.W`` in document 578 of ``cran.all.1400``) are dropped and the
  lines after them stay in the text.
* CRLF line endings are normalised; files must be UTF-8 (ASCII in practice).

Source:
    Cleverdon, The Cranfield tests on index language devices, Aslib
    Proceedings 19(6), 1967, doi:10.1108/eb050097; codes from ``cranqrel.readme``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from workbench.errors import InputFormatError
from workbench.formats.trec import empty_file_error, iter_columns, read_text
from workbench.types import Document, Topic

GRADE_OF_CODE: dict[int, int] = {1: 4, 2: 3, 3: 2, 4: 1, 5: 0, -1: 0}
"""cranqrel relevance code -> workbench grade (grade = 5 - code; code -1 means 5)."""

GRADE_RULE = (
    "cranqrel code -> grade: 1->4, 2->3, 3->2, 4->1, -1 (code 5)->0; grade = 5 - code "
    "(Cleverdon's codes, lower = more relevant; rubric 'cranfield')"
)
"""The grade mapping as recorded in the ``rule`` of imported Cranfield qrels."""

_MARKER = re.compile(r"\.([A-Z])[ \t]*")
_ID_LINE = re.compile(r"\.I[ \t]+(\S+)[ \t]*")


@dataclass(frozen=True)
class SmartRecord:
    """One ``.I`` record.

    Attributes:
        smart_id: the ``.I`` value as written (e.g. ``"004"``).
        line: 1-based line of the ``.I`` marker.
        fields: marker letter -> cleaned text (e.g. ``{"T": ..., "W": ...}``).
    """

    smart_id: str
    line: int
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CranfieldDocument:
    """A Cranfield abstract with its bibliographic fields."""

    doc_id: str
    title: str
    text: str
    author: str
    bib: str

    def document(self) -> Document:
        """The workbench ``Document`` (title and text; authors and source dropped)."""
        return Document(self.doc_id, self.title, self.text)


@dataclass(frozen=True)
class CranfieldQuery:
    """A Cranfield query: ``topic_id`` is its position (1-based), ``smart_id`` its ``.I``."""

    topic_id: str
    smart_id: str
    text: str
    line: int

    def topic(self) -> Topic:
        """The workbench ``Topic`` (the query text is the title)."""
        return Topic(self.topic_id, self.text)


def _clean(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def read_smart(path: str | Path, *, text_field: str = "W") -> list[SmartRecord]:
    """Parse a SMART file into records.

    Args:
        path: the file.
        text_field: the marker whose text runs to the next ``.I`` (stray
            markers inside it are dropped; see the module docstring).

    Returns:
        The records in file order.

    Raises:
        InputFormatError: text before the first ``.I``, a ``.I`` without an
            id, a repeated ``.I`` id, or an empty file.
    """
    p = str(path)
    records: list[SmartRecord] = []
    parts: dict[str, list[str]] = {}
    current: str | None = None
    smart_id = ""
    id_line = 0
    seen: dict[str, int] = {}

    def close() -> None:
        if id_line:
            records.append(SmartRecord(smart_id, id_line, {k: _clean(v) for k, v in parts.items()}))

    for lineno, line in enumerate(read_text(path).split("\n"), 1):
        if line.startswith(".I"):
            m = _ID_LINE.fullmatch(line)
            if not m:
                raise InputFormatError(p, lineno, f"expected '.I <id>', found {line!r}. Give the record an id.")
            close()
            smart_id, id_line = m.group(1), lineno
            if smart_id in seen:
                raise InputFormatError(
                    p, lineno, f"expected each .I id once, found {smart_id!r} again (first on line {seen[smart_id]}). Renumber it."
                )
            seen[smart_id] = lineno
            parts, current = {}, None
            continue
        marker = _MARKER.fullmatch(line)
        if marker:
            if not id_line:
                raise InputFormatError(p, lineno, f"expected '.I <id>' before any field, found {line!r}. Start the file with a record.")
            if current == text_field:
                continue  # stray marker inside the text: dropped, text goes on
            current = marker.group(1)
            parts.setdefault(current, [])
            continue
        if not line.strip():
            continue
        if current is None:
            if not id_line:
                raise InputFormatError(p, lineno, f"expected '.I <id>' before any text, found {line[:40]!r}. Start the file with a record.")
            raise InputFormatError(p, lineno, f"expected a field marker such as '.W' after '.I {smart_id}', found text. Add the marker.")
        parts[current].append(line)
    close()
    if not records:
        raise empty_file_error(path, ".I record")
    return records


def read_cranfield_documents(path: str | Path) -> list[CranfieldDocument]:
    """Read ``cran.all.1400``.

    Returns:
        The documents in file order; ``doc_id`` is the ``.I`` value as written.
        A missing ``.T``/``.A``/``.B``/``.W`` field gives "" (two documents have no text).

    Raises:
        InputFormatError: as ``read_smart``.
    """
    return [
        CranfieldDocument(r.smart_id, r.fields.get("T", ""), r.fields.get("W", ""), r.fields.get("A", ""), r.fields.get("B", ""))
        for r in read_smart(path)
    ]


def read_cranfield_queries(path: str | Path) -> list[CranfieldQuery]:
    """Read ``cran.qry``, numbering the topics 1..n in file order (cranqrel's numbering).

    Returns:
        The queries in file order.

    Raises:
        InputFormatError: as ``read_smart``, or a query without ``.W`` text.
    """
    out = []
    for i, r in enumerate(read_smart(path), 1):
        text = r.fields.get("W", "")
        if not text:
            raise InputFormatError(str(path), r.line, f"expected '.W' text for query .I {r.smart_id}, found none. Add the query text.")
        out.append(CranfieldQuery(str(i), r.smart_id, text, r.line))
    return out


def read_cranqrel(path: str | Path) -> dict[str, dict[str, int]]:
    """Read ``cranqrel`` (``query doc code``) with codes mapped to grades by ``GRADE_OF_CODE``.

    Returns:
        topic_id -> doc_id -> grade, in file order.

    Raises:
        InputFormatError: a wrong column count, a code outside
            ``GRADE_OF_CODE``, a pair given two codes, or an empty file.
    """
    p = str(path)
    qrels: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    allowed = ", ".join(str(c) for c in sorted(GRADE_OF_CODE))
    for lineno, cols in iter_columns(path):
        if len(cols) != 3:
            raise InputFormatError(
                p, lineno, f"expected 3 columns (query doc code), found {len(cols)}. Write one judgment per line."
            )
        topic, doc, code_s = cols
        code = int(code_s) if re.fullmatch(r"-?[0-9]+", code_s) else None
        if code is None or code not in GRADE_OF_CODE:
            raise InputFormatError(
                p, lineno, f"expected a relevance code ({allowed}), found {code_s!r}. Use Cleverdon's codes."
            )
        grade = GRADE_OF_CODE[code]
        grades = qrels.setdefault(topic, {})
        if doc in grades:
            if grades[doc] != grade:
                raise InputFormatError(
                    p, lineno,
                    f"expected one code for query {topic!r} and document {doc!r}, found another on line "
                    f"{first[(topic, doc)]}. Keep one of the two lines.",
                )
            continue
        grades[doc] = grade
        first[(topic, doc)] = lineno
    if not qrels:
        raise empty_file_error(path, "cranqrel")
    return qrels


def scan_cranqrel_ids(path: str | Path) -> Iterator[tuple[int, str, str]]:
    """(line, topic_id, doc_id) of each line of an already validated cranqrel file."""
    for lineno, cols in iter_columns(path):
        if len(cols) == 3:
            yield lineno, cols[0], cols[1]
