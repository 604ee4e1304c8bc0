"""Readers of SMART collections: ``.I`` records, their qrels, and the Cranfield files.

A SMART file is a sequence of records. A record starts with ``.I <id>``; each
field starts with a marker line ``.X`` (one upper-case letter, alone on its
line, or followed by the field's first line of text) and runs to the next
marker. Classic collections use ``.T`` title, ``.A`` authors, ``.B``
bibliographic source, ``.W`` text (abstract or query), ``.X`` cross-references,
``.N``, ``.K`` and others; which marker means what is the caller's choice.

Conventions (each is a decision, written down):

* **Text.** Lines of a field are joined with single spaces and runs of
  whitespace collapse to one space. A field repeated within one record (two
  ``.A`` blocks) keeps each block (``SmartRecord.blocks``); ``fields`` joins
  them in file order with one space.
* **Text to the end of the record** (``text_to_end``, Cranfield's rule). Once
  the named text field has started, only ``.I`` ends it: marker lines inside
  the text (``.A``/``.B`` in document 240, a second ``.W`` in documents 576 and
  578 of ``cran.all.1400``) are dropped and the lines after them stay in the
  text. Without it every marker starts a new field.
* **Qrels columns.** SMART qrels come as ``query doc`` (every listed pair is
  relevant), ``query doc grade``, or four columns, which is either TREC's
  ``query iteration doc grade`` or SMART's ``query doc 0 0.000000`` (CISI,
  CACM). ``qrels_columns`` tells the two four-column layouts apart by which
  column holds document ids of the corpus. Grades may be written as floats
  (``2.000000``); ``grade_mapping`` decides how a written value becomes an
  integer grade and says so.
* **Query numbering.** Some collections' qrels name queries by their ``.I``
  value, others (Cranfield) by their position in the query file: ``cran.qry``'s
  ``.I`` numbers (001, 002, 004, 008, ...) are *not* the query ids of
  ``cranqrel``, which numbers the queries 1..225 in file order. Joining on
  ``.I`` there silently scores the wrong queries. ``match_queries`` checks
  both against the qrels and reports which one fits (``QueryNumbering``).
* CRLF line endings are normalised; files must be UTF-8 (ASCII in practice).
* **Bibliographic metadata.** ``.A`` (authors) and ``.B`` (bibliographic
  source) are kept as document metadata ``author`` and ``bib``; ``bib_fields``
  derives ``year`` and ``source`` from ``.B`` (see its docstring): 1,198 of
  the 1,400 documents have a year (1922-1963), 1,321 a source.

Cranfield (``cran.all.1400``, ``cran.qry``, ``cranqrel``): topic ids are the
1-based position in ``cran.qry``; the ``.I`` value is kept as ``smart_id``.
cranqrel codes are Cleverdon's (lower = more relevant), so the grade is
inverted: ``GRADE_OF_CODE`` maps 1->4, 2->3, 3->2, 4->1 and 5 (written -1) ->0,
matching ``workbench.rubric.CRANFIELD``. The ``.W`` text of a document begins
with a repeat of its title; it is kept verbatim (``title`` holds ``.T``,
``text`` holds ``.W``), as ir_datasets' ``cranfield`` does.

Source:
    Salton (ed.), The SMART Retrieval System, Prentice-Hall 1971 (the record
    format); Cleverdon, The Cranfield tests on index language devices, Aslib
    Proceedings 19(6), 1967, doi:10.1108/eb050097; codes from ``cranqrel.readme``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from workbench.errors import InputFormatError, cut, shown
from workbench.formats.trec import (
    GRADE_MAX,
    GRADE_MIN,
    add_grade,
    check_id,
    empty_file_error,
    iter_columns,
    read_text,
    shown_id,
)
from workbench.types import Document, Topic

GRADE_OF_CODE: dict[int, int] = {1: 4, 2: 3, 3: 2, 4: 1, 5: 0, -1: 0}
"""cranqrel relevance code -> workbench grade (grade = 5 - code; code -1 means 5)."""

GRADE_RULE = (
    "cranqrel code -> grade: 1->4, 2->3, 3->2, 4->1, -1 (code 5)->0; grade = 5 - code "
    "(Cleverdon's codes, lower = more relevant; rubric 'cranfield')"
)
"""The grade mapping as recorded in the ``rule`` of imported Cranfield qrels."""

_MARKER = re.compile(r"\.([A-Z])(?:[ \t]+(.*?))?[ \t]*")
_ID_LINE = re.compile(r"\.I[ \t]+(\S+)[ \t]*")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

Role = Literal["query", "doc", "grade", "ignore"]
ROLES: tuple[str, ...] = ("query", "doc", "grade", "ignore")
Numbering = Literal["id", "position"]


@dataclass(frozen=True)
class SmartRecord:
    """One ``.I`` record.

    Attributes:
        smart_id: the ``.I`` value as written (e.g. ``"004"``).
        line: 1-based line of the ``.I`` marker.
        blocks: marker letter -> the cleaned text of each occurrence, in file order
            (``{"A": ("smith, j.", "jones, k.")}``).
        marker_lines: marker letter -> 1-based line of its first occurrence.
    """

    smart_id: str
    line: int
    blocks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    marker_lines: dict[str, int] = field(default_factory=dict)

    @property
    def fields(self) -> dict[str, str]:
        """marker letter -> text, repeated blocks joined by one space (empty blocks skipped)."""
        return {m: " ".join(b for b in bs if b) for m, bs in self.blocks.items()}

    def text(self, marker: str, sep: str = " ") -> str:
        """The text of one marker's blocks joined by ``sep`` ("" when the record lacks it)."""
        return sep.join(b for b in self.blocks.get(marker, ()) if b)


@dataclass(frozen=True)
class CranfieldDocument:
    """A Cranfield abstract with its bibliographic fields."""

    doc_id: str
    title: str
    text: str
    author: str
    bib: str

    def document(self) -> Document:
        """The workbench ``Document`` (title and text; authors and source are metadata)."""
        return Document(self.doc_id, self.title, self.text)

    def metadata(self) -> dict[str, str | int]:
        """Document metadata: ``author`` (``.A``) and ``bib`` (``.B``) as written (``""`` when
        absent), then ``year`` and ``source`` when ``bib_fields`` finds them."""
        meta: dict[str, str | int] = {"author": self.author, "bib": self.bib}
        meta.update(self.derived())
        return meta

    def derived(self) -> dict[str, str | int]:
        """``year`` and ``source`` derived from ``.B`` (absent keys when not found)."""
        return derived_metadata(self.bib)


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


_YEAR = re.compile(r"(?<![0-9a-z])([0-9]{4})(?![0-9a-z])")
_MONTH = re.compile(r"(?:^|\s)(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|"
                    r"june|july|august|september|october|november|december)\.?$")

_REPORT_NUMBER_BEFORE = re.compile(r"(?:^|[^a-z])(?:tn|tm|r|rm|cp|rep|report|m)[. ]*$")
_VOLUME = re.compile(r"(?:[ .](?:v|vol))+$")


@dataclass(frozen=True)
class BibRules:
    """How ``bib_fields`` reads a ``.B`` field: the years it accepts and whether a month name ends a source.

    Attributes:
        years: the inclusive range a year must fall in.
        strip_month: remove a month name ending the source (``cacm december`` -> ``cacm``).
    """

    years: tuple[int, int]
    strip_month: bool


CRANFIELD_BIB = BibRules((1900, 1969), strip_month=False)
"""Cranfield's rules, as the committed ``sample_corpus/cranfield`` was made: its documents date 1922-1963
(later four-digit numbers there are report or page numbers, e.g. ``rae tn. aero.2025``); a month stays in
the source (``j.aero.sc.march``, 11 documents)."""
SMART_BIB = BibRules((1900, 2099), strip_month=True)
"""The general converter's rules for any other SMART collection (CACM's ``CACM December, 1958``: 1958-1979)."""


def bib_fields(bib: str, rules: BibRules = CRANFIELD_BIB) -> tuple[int | None, str]:
    """The publication year and the source (journal or report series) of a SMART ``.B`` field.

    Rules (deterministic, applied to the cleaned ``.B`` text):

    * **year**: the last stand-alone four-digit number within ``rules.years`` (not
      inside a longer token such as ``d1961`` or ``61-201-1904x``), unless it
      directly follows a report designator (``tn``, ``tm``, ``r``, ``rm``,
      ``cp``, ``rep``, ``report``, ``m``), where it is a report number
      (``naca tn.1961.``). None when there is none.
    * **source**: the text before the first comma or the first token that
      holds a digit (a token ``tn.1024`` is split at its dot, so ``naca
      tn.1024`` gives ``naca tn``); a trailing volume marker (``v.``, ``vol``),
      a trailing month name (with ``rules.strip_month``: CACM's ``cacm december,
      1958`` gives ``cacm``) and trailing punctuation are removed, spaces after a dot are removed
      (``j. ae. scs.`` and ``j.ae.scs.`` both give ``j.ae.scs``), and ``+`` is
      written ``&`` (``arc r + m`` gives ``arc r & m``). ``""`` when nothing is left.

    Args:
        bib: the ``.B`` text.
        rules: ``CRANFIELD_BIB`` (the default: years 1900-1969, months kept) or
            ``SMART_BIB`` (the general converter's: years 1900-2099, a trailing month removed).

    Examples:
        >>> bib_fields("j. ae. scs. 25, 1958, 324.")
        (1958, 'j.ae.scs')
        >>> bib_fields("arc r + m.1991, 1941.")
        (1941, 'arc r & m')
        >>> bib_fields("naca tn.1961.")
        (None, 'naca tn')
        >>> bib_fields("david taylor model basin, washington, d. c.")
        (None, 'david taylor model basin')
        >>> bib_fields("CACM March, 1975", SMART_BIB)
        (1975, 'cacm')
    """
    text = " ".join(bib.lower().split())
    year = None
    low, high = rules.years
    for m in _YEAR.finditer(text):
        if low <= int(m.group(1)) <= high and not _REPORT_NUMBER_BEFORE.search(text[:m.start()]):
            year = int(m.group(1))
    head = text.split(",", 1)[0]
    head = re.sub(r"\.(?=[a-z]*[0-9])", " ", head)  # "tn.1024" -> "tn 1024", "scs.1962" -> "scs 1962"
    kept: list[str] = []
    for token in head.split(" "):
        if any(c.isdigit() for c in token):
            break
        kept.append(token)
    source = " ".join(kept).strip(" .;:")
    source = _VOLUME.sub("", source).strip(" .;:")
    if rules.strip_month:
        source = _MONTH.sub("", source).strip(" .;:")
    source = re.sub(r"\.\s+", ".", source).replace("+", "&")
    return year, " ".join(source.split())


def derived_metadata(bib: str, rules: BibRules = CRANFIELD_BIB) -> dict[str, str | int]:
    """``{"year": ..., "source": ...}`` from a ``.B`` text (``bib_fields``), keys absent when not found.

    This is one line of the converted side file ``doc_metadata.jsonl`` (without ``doc_id``).
    """
    year, source = bib_fields(bib, rules)
    out: dict[str, str | int] = {}
    if year is not None:
        out["year"] = year
    if source:
        out["source"] = source
    return out


def _clean(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def marker_of(spec: str) -> str:
    """The marker letter of ``".T"``, ``"T"`` or ``" .t "`` (upper-cased).

    Raises:
        ValueError: not one letter with an optional leading dot.
    """
    s = spec.strip().lstrip(".").upper()
    if len(s) != 1 or not ("A" <= s <= "Z"):
        raise ValueError(spec)
    return s


def read_smart(path: str | Path, *, text_to_end: str | None = None) -> list[SmartRecord]:
    """Parse a SMART file into records.

    Args:
        path: the file.
        text_to_end: a marker letter (e.g. ``"W"``) whose text runs to the next
            ``.I``: marker lines inside it are dropped and their lines stay in
            the text (Cranfield's rule, see the module docstring). None: every
            marker starts a new field.

    Returns:
        The records in file order.

    Raises:
        InputFormatError: text before the first ``.I``, a ``.I`` without an
            id, a repeated ``.I`` id, text after ``.I`` before any marker, or
            an empty file.
    """
    p = str(path)
    records: list[SmartRecord] = []
    parts: dict[str, list[list[str]]] = {}
    first_line: dict[str, int] = {}
    current: str | None = None
    smart_id = ""
    id_line = 0
    seen: dict[str, int] = {}

    def close() -> None:
        if id_line:
            blocks = {k: tuple(_clean(b) for b in v) for k, v in parts.items()}
            records.append(SmartRecord(smart_id, id_line, blocks, dict(first_line)))

    for lineno, line in enumerate(read_text(path).split("\n"), 1):
        if line.startswith(".I") and (len(line) == 2 or line[2] in " \t"):
            m = _ID_LINE.fullmatch(line)
            if not m:
                raise InputFormatError(p, lineno, f"expected '.I <id>', found {shown(line)}. Give the record an id.")
            close()
            smart_id, id_line = m.group(1), lineno
            if smart_id in seen:
                raise InputFormatError(
                    p, lineno, f"expected each .I id once, found {shown(smart_id)} again (first on line {seen[smart_id]}). "
                    "Renumber it."
                )
            seen[smart_id] = lineno
            parts, first_line, current = {}, {}, None
            continue
        marker = _MARKER.fullmatch(line)
        if marker:
            if not id_line:
                raise InputFormatError(p, lineno, f"expected '.I <id>' before any field, found {shown(line)}. Start the "
                                                  "file with a record.")
            inline = marker.group(2)
            if text_to_end is not None and current == text_to_end:
                if inline:  # stray marker inside the text: dropped, its text goes on
                    parts[current][-1].append(inline)
                continue
            current = marker.group(1)
            parts.setdefault(current, []).append([inline] if inline else [])
            first_line.setdefault(current, lineno)
            continue
        if not line.strip():
            continue
        if current is None:
            if not id_line:
                raise InputFormatError(p, lineno, f"expected '.I <id>' before any text, found {shown(line, 40)}. Start "
                                                  "the file with a record.")
            raise InputFormatError(p, lineno, f"expected a field marker such as '.W' after '.I {cut(smart_id)}', found "
                                              "text. Add the marker.")
        parts[current][-1].append(line)
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
    out = []
    for r in read_smart(path, text_to_end="W"):
        f = r.fields
        out.append(CranfieldDocument(r.smart_id, f.get("T", ""), f.get("W", ""), f.get("A", ""), f.get("B", "")))
    return out


def read_cranfield_queries(path: str | Path) -> list[CranfieldQuery]:
    """Read ``cran.qry``, numbering the topics 1..n in file order (cranqrel's numbering).

    Returns:
        The queries in file order.

    Raises:
        InputFormatError: as ``read_smart``, or a query without ``.W`` text.
    """
    out = []
    for i, r in enumerate(read_smart(path, text_to_end="W"), 1):
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
        code = int(code_s) if re.fullmatch(r"-?[0-9]{1,9}", code_s) else None
        if code is None or code not in GRADE_OF_CODE:
            raise InputFormatError(
                p, lineno, f"expected a relevance code ({allowed}), found {shown(code_s)}. Use Cleverdon's codes."
            )
        grade = GRADE_OF_CODE[code]
        grades = qrels.setdefault(topic, {})
        if doc in grades:
            if grades[doc] != grade:
                raise InputFormatError(
                    p, lineno,
                    f"expected one code for query {shown(topic)} and document {shown(doc)}, found another on line "
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


# -- general SMART qrels -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QrelsLine:
    """One line of a SMART qrels file, columns picked by role.

    Attributes:
        line: 1-based line number.
        query: the query column as written.
        doc: the document column as written.
        value: the grade column as written, or None when the layout has none.
    """

    line: int
    query: str
    doc: str
    value: str | None


@dataclass(frozen=True)
class QrelsLayout:
    """Which column of a qrels file holds what, and how that was decided.

    Attributes:
        roles: one role per column: ``query``, ``doc``, ``grade`` or ``ignore``.
        detected: True when chosen by ``qrels_columns`` (not given by the user).
        note: one sentence for the conversion report.
    """

    roles: tuple[str, ...]
    detected: bool
    note: str

    def describe(self) -> str:
        """The roles as written in reports: ``query doc ignore grade``."""
        return " ".join(self.roles)


def parse_roles(text: str) -> tuple[str, ...]:
    """Column roles from ``"query,doc,ignore,grade"`` (commas or spaces).

    Raises:
        ValueError: an unknown role, or not exactly one ``query`` and one ``doc``
            column, or more than one ``grade`` column (the message says which).
    """
    roles = tuple(r for r in re.split(r"[,\s]+", text.strip().lower()) if r)
    bad = [r for r in roles if r not in ROLES]
    if bad:
        raise ValueError(f"unknown column role {shown(bad[0])}; use {', '.join(ROLES)}")
    if roles.count("query") != 1 or roles.count("doc") != 1 or roles.count("grade") > 1:
        raise ValueError("expected exactly one query column, one doc column and at most one grade column")
    return roles


def _raw_rows(path: str | Path) -> list[tuple[int, list[str]]]:
    rows = list(iter_columns(path))
    if not rows:
        raise empty_file_error(path, "qrels")
    n = len(rows[0][1])
    for lineno, cols in rows:
        if len(cols) != n:
            raise InputFormatError(
                str(path), lineno,
                f"expected {n} columns as on line {rows[0][0]}, found {len(cols)}. Write every judgment with the same columns.",
            )
    if n not in (2, 3, 4):
        raise InputFormatError(
            str(path), rows[0][0],
            f"expected 2 (query doc), 3 (query doc grade) or 4 columns, found {n}. "
            "Name the columns with --qrels-columns, e.g. query,doc,ignore,grade.",
        )
    return rows


def qrels_columns(
    path: str | Path, doc_ids: set[str], roles: Sequence[str] | None = None
) -> tuple[QrelsLayout, list[QrelsLine]]:
    """Read a SMART qrels file's lines and decide its column layout.

    Layouts by column count: 2 = ``query doc``; 3 = ``query doc grade``; 4 =
    TREC's ``query ignore doc grade`` when column 3 holds the corpus's document
    ids, SMART's ``query doc ignore grade`` (CISI, CACM: ``q d 0 0.000000``)
    when column 2 does. A column holds a document id when it is one as
    written or without zero padding (``0756`` for ``.I 756``, see ``match_docs``).

    Args:
        path: the qrels file (columns separated by spaces or tabs).
        doc_ids: the corpus's document ids (to tell the 4-column layouts apart).
        roles: the layout as given by the user (``parse_roles``); None detects it.

    Returns:
        (the layout, the lines in file order).

    Raises:
        InputFormatError: an empty file, a line with another column count than
            the first, 5 or more columns without ``roles``, ``roles`` of another
            length than the file's columns, or 4 columns where neither column 2
            nor column 3 holds document ids of the corpus (or both do).
    """
    p = str(path)
    rows = _raw_rows(path) if roles is None else list(iter_columns(path))
    if not rows:
        raise empty_file_error(path, "qrels")
    n = len(rows[0][1])
    if roles is not None:
        chosen = tuple(roles)
        for lineno, cols in rows:
            if len(cols) != len(chosen):
                raise InputFormatError(
                    p, lineno,
                    f"expected {len(chosen)} columns ({' '.join(chosen)}), found {len(cols)}. "
                    "Fix the line or the --qrels-columns option.",
                )
        layout = QrelsLayout(chosen, False, f"columns as given: {' '.join(chosen)}")
    elif n == 2:
        layout = QrelsLayout(("query", "doc"), True, "2 columns: query doc (every listed pair is relevant)")
    elif n == 3:
        layout = QrelsLayout(("query", "doc", "grade"), True, "3 columns: query doc grade")
    else:
        padded = {num_key(d) for d in doc_ids}

        def known(doc: str) -> bool:  # as written, or without zero padding (CACM's "0756" for .I 756)
            return doc in doc_ids or num_key(doc) in padded

        in2 = sum(1 for _, c in rows if known(c[1]))
        in3 = sum(1 for _, c in rows if known(c[2]))
        if in2 == len(rows) and in3 < len(rows):
            layout = QrelsLayout(("query", "doc", "ignore", "grade"), True,
                                 "4 columns, doc ids in column 2: query doc ignore grade (SMART layout)")
        elif in3 == len(rows) and in2 < len(rows):
            layout = QrelsLayout(("query", "ignore", "doc", "grade"), True,
                                 "4 columns, doc ids in column 3: query iteration doc grade (TREC layout)")
        else:
            col = 2 if in2 >= in3 else 3
            first_bad = next(ln for ln, c in rows if not known(c[col - 1])) if min(in2, in3) < len(rows) else rows[0][0]
            found = (f"{in2:,} of {len(rows):,} lines have a corpus doc id in column 2 and {in3:,} in column 3 "
                     "(compared as written and without zero padding)")
            raise InputFormatError(
                p, first_bad,
                f"expected document ids of the corpus in column 2 (SMART: query doc 0 0.000000) or column 3 "
                f"(TREC: query iter doc grade), found {found}. Name the columns with --qrels-columns, "
                "e.g. query,doc,ignore,grade, or check the corpus file.",
            )
    qi, di = layout.roles.index("query"), layout.roles.index("doc")
    gi = layout.roles.index("grade") if "grade" in layout.roles else None
    lines = []
    for lineno, cols in rows:
        check_id(p, lineno, cols[qi], "query id")
        check_id(p, lineno, cols[di], "doc id")
        lines.append(QrelsLine(lineno, cols[qi], cols[di], None if gi is None else cols[gi]))
    return layout, lines


# -- grades ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GradeMapping:
    """How the written grade values of a qrels file become integer grades.

    Attributes:
        grade_of_value: each distinct written value (as written, ``"0.000000"``)
            -> its grade; ``{"": 1}`` for a file without a grade column.
        counts: written value -> number of lines.
        rule: one sentence, recorded as the imported qrels version's ``rule``.
        positives_only: True when no line maps to a grade below 1 (the file
            lists relevant pairs only; Judged@k then equals P@k).
    """

    grade_of_value: dict[str, int]
    counts: dict[str, int]
    rule: str
    positives_only: bool


def _number(token: str) -> float | None:
    if not _NUMBER.fullmatch(token):
        return None
    x = float(token)
    return x if math.isfinite(x) else None


def parse_grade_map(items: Sequence[str]) -> dict[float, int]:
    """``["1=4", "-1=0", "0.5=1"]`` -> ``{1.0: 4, -1.0: 0, 0.5: 1}`` (written value -> grade).

    Raises:
        ValueError: an item that is not ``NUMBER=INTEGER`` (the message names it).
    """
    out: dict[float, int] = {}
    for item in items:
        raw, sep, grade = item.partition("=")
        value = _number(raw.strip())
        if not sep or value is None or not re.fullmatch(r"[+-]?[0-9]+", grade.strip()):
            raise ValueError(f"expected VALUE=GRADE such as 1=4 or 0.000000=1, found {shown(item)}")
        out[value] = int(grade)
    return out


def grade_mapping(
    path: str | Path, lines: Sequence[QrelsLine], grade_map: Mapping[float, int] | None = None
) -> GradeMapping:
    """Decide the grade of every written value of a qrels file.

    Rules, in order:

    * ``grade_map`` given: written values are compared as numbers
      (``2.000000`` matches ``2``) and every value must be in it.
    * No grade column: every listed pair is relevant, grade 1.
    * One value on every line: the file lists relevant pairs (a file of only
      non-relevant judgments is not a qrels), so a value <= 0 (CISI's
      ``0.000000``, CACM's ``0``) or a non-integer becomes grade 1; a positive
      integer keeps its value.
    * Otherwise every value must be a whole number (``2.000000`` -> 2); it is
      the grade, as in TREC qrels.

    Args:
        path: the file (for error messages).
        lines: its lines (``qrels_columns``).
        grade_map: explicit written value -> grade, or None for the rules above.

    Returns:
        The ``GradeMapping``.

    Raises:
        InputFormatError: a value that is not a number, a value missing from
            ``grade_map``, a non-integer among several values without
            ``grade_map``, or a grade outside the store's 32-bit range.
    """
    p = str(path)
    counts: dict[str, int] = {}
    for ln in lines:
        key = "" if ln.value is None else ln.value
        counts[key] = counts.get(key, 0) + 1
    numbers: dict[str, float] = {}
    for ln in lines:
        if ln.value is not None and ln.value not in numbers:
            x = _number(ln.value)
            if x is None:
                raise InputFormatError(
                    p, ln.line, f"expected a numeric grade such as 1 or 0.000000, found {shown_id(ln.value)}. "
                    "Fix the line, or name the columns with --qrels-columns.")
            numbers[ln.value] = x
    grade_of: dict[str, int] = {}
    if grade_map is not None and numbers:
        allowed = ", ".join(f"{k:g}" for k in sorted(grade_map))
        for ln in lines:
            v = ln.value or ""
            if v not in grade_of:
                if numbers[v] not in grade_map:
                    raise InputFormatError(
                        p, ln.line, f"expected a value of the grade map ({allowed}), found {shown_id(v)}. "
                        f"Add it with --grade-map {v}=GRADE.")
                grade_of[v] = grade_map[numbers[v]]
        grade_of = dict(sorted(grade_of.items(), key=lambda kv: numbers[kv[0]]))
        rule = "grade map " + ", ".join(f"{v}->{g}" for v, g in grade_of.items())
    elif not numbers:
        grade_of = {"": 1}
        rule = "no grade column: every listed (query, doc) pair is relevant, grade 1"
    elif len(numbers) == 1:
        (v, x), = numbers.items()
        if x > 0 and x.is_integer():
            grade_of = {v: int(x)}
            rule = f"every line has grade {v}: kept as grade {int(x)}"
        else:
            grade_of = {v: 1}
            rule = (f"every line has grade {v}: the file lists relevant (query, doc) pairs, "
                    f"so {v} -> grade 1")
    else:
        for ln in lines:
            x = numbers[ln.value or ""]
            if not x.is_integer():
                raise InputFormatError(
                    p, ln.line,
                    f"expected whole-number grades (the file has {len(numbers)} different values), found {shown_id(ln.value or '')}. "
                    "Say how values become grades with --grade-map VALUE=GRADE (repeatable).")
        grade_of = {v: int(x) for v, x in sorted(numbers.items(), key=lambda kv: kv[1])}
        changed = [f"{v}->{g}" for v, g in grade_of.items() if v != str(g)]
        rule = "grades as written" + (f" ({', '.join(changed)})" if changed else "")
    for ln in lines:
        g = grade_of[ln.value or ""]
        if not GRADE_MIN <= g <= GRADE_MAX:
            raise InputFormatError(p, ln.line, f"grade {g} is out of range ({GRADE_MIN}..{GRADE_MAX}); map it to a grade of the rubric.")
    return GradeMapping(grade_of, counts, rule, positives_only=all(g >= 1 for g in grade_of.values()))


# -- query numbering -------------------------------------------------------------------------


def num_key(id_: str) -> str:
    """``"007"`` -> ``"7"``; other ids unchanged (only for matching, never stored). No ``int()``: ids of any length.

    Example:
        >>> num_key("007"), num_key("0"), num_key("d07")
        ('7', '0', 'd07')
    """
    return (id_.lstrip("0") or "0") if id_.isascii() and id_.isdigit() else id_


@dataclass(frozen=True)
class QueryNumbering:
    """How the qrels' query column names the queries of the query file.

    Attributes:
        mode: ``id`` (the ``.I`` value) or ``position`` (1-based order in the file).
        detected: True when chosen by ``match_queries`` (not forced by the user).
        topic_of: qrels query id as written -> topic id.
        note: one sentence for the conversion report.
    """

    mode: Numbering
    detected: bool
    topic_of: dict[str, str]
    note: str


def topic_ids(records: Sequence[SmartRecord], mode: Numbering) -> list[str]:
    """The topic id of each query record: its ``.I`` value, or its 1-based position."""
    return [r.smart_id for r in records] if mode == "id" else [str(i) for i in range(1, len(records) + 1)]


def match_queries(
    path: str | Path,
    records: Sequence[SmartRecord],
    lines: Sequence[QrelsLine],
    mode: Numbering | None = None,
) -> QueryNumbering:
    """Check the qrels' query ids against the query file, by ``.I`` value and by position.

    A qrels id matches a ``.I`` value when equal as written, or as numbers
    (``01`` and ``1``); it matches a position when it is a whole number
    1..n. Detection (``mode`` None) picks the numbering that every qrels id
    fits; when both fit and give the same queries, ``id``.

    Args:
        path: the qrels file (for error messages).
        records: the query file's records, in file order.
        lines: the qrels lines.
        mode: force ``id`` or ``position``; None detects.

    Returns:
        The ``QueryNumbering``; topic ids are the ``.I`` value (``id``) or the
        position (``position``).

    Raises:
        InputFormatError: a qrels query id that fits the forced numbering not,
            or (detecting) fits neither, or both fit but name different queries
            (the message names the line and says to choose with
            ``--query-numbering``).
    """
    p = str(path)
    exact = {r.smart_id: r.smart_id for r in records}
    numeric: dict[str, str] = {}
    for r in records:
        numeric.setdefault(num_key(r.smart_id), r.smart_id)
    n = len(records)
    position_id = [r.smart_id for r in records]

    def by_id(q: str) -> str | None:
        return exact.get(q) or numeric.get(num_key(q))

    def by_position(q: str) -> str | None:
        if q.isascii() and q.isdigit() and 1 <= int(q) <= n:
            return str(int(q))
        return None

    first_line: dict[str, int] = {}
    for ln in lines:
        first_line.setdefault(ln.query, ln.line)
    qids = list(first_line)
    fit_id = {q: by_id(q) for q in qids}
    fit_pos = {q: by_position(q) for q in qids}
    miss_id = [q for q in qids if fit_id[q] is None]
    miss_pos = [q for q in qids if fit_pos[q] is None]

    def fail(q: str, what: str) -> InputFormatError:
        return InputFormatError(
            p, first_line[q],
            f"expected a query {what}, found query {shown_id(q)}. Check the qrels and the query file, "
            "or choose the numbering with --query-numbering id|position.")

    if mode == "id":
        if miss_id:
            raise fail(miss_id[0], "named by a .I value of the query file")
        return QueryNumbering("id", False, {q: str(fit_id[q]) for q in qids},
                              f"qrels queries named by .I value (as given); {len(qids)} qrels queries")
    if mode == "position":
        if miss_pos:
            raise fail(miss_pos[0], f"position 1..{n} in the query file")
        return QueryNumbering("position", False, {q: str(fit_pos[q]) for q in qids},
                              f"qrels queries numbered by position 1..{n} in the query file (as given); "
                              f"{len(qids)} qrels queries")
    if not miss_id and not miss_pos:
        same = all(position_id[int(str(fit_pos[q])) - 1] == fit_id[q] for q in qids)
        if same:
            return QueryNumbering("id", True, {q: str(fit_id[q]) for q in qids},
                                  f"qrels queries named by .I value (detected; the .I values of these "
                                  f"{len(qids)} queries equal their positions, so both readings agree)")
        q = next(q for q in qids if position_id[int(str(fit_pos[q])) - 1] != fit_id[q])
        raise InputFormatError(
            p, first_line[q],
            f"expected the qrels' query ids to fit one numbering, found that they fit both: query {shown_id(q)} "
            f"is .I {fit_id[q]} by value but .I {position_id[int(str(fit_pos[q])) - 1]} by position. "
            "Choose with --query-numbering id (qrels use .I values) or position (qrels count the queries in file order).")
    if not miss_id:
        return QueryNumbering("id", True, {q: str(fit_id[q]) for q in qids},
                              f"qrels queries named by .I value (detected: {len(qids)} qrels queries are .I values; "
                              f"{len(miss_pos)} are not positions 1..{n}, e.g. {shown_id(miss_pos[0])})")
    if not miss_pos:
        return QueryNumbering("position", True, {q: str(fit_pos[q]) for q in qids},
                              f"qrels queries numbered by position 1..{n} in the query file (detected: "
                              f"{len(miss_id)} of {len(qids)} qrels query ids are not .I values, e.g. "
                              f"{shown_id(miss_id[0])}; all are positions), as in Cranfield")
    worst = miss_id if len(miss_id) <= len(miss_pos) else miss_pos
    raise InputFormatError(
        p, first_line[worst[0]],
        f"expected each qrels query to be a .I value or a position 1..{n} of the query file, found query "
        f"{shown_id(worst[0])} ({len(miss_id)} of {len(qids)} qrels query ids are not .I values, "
        f"{len(miss_pos)} not positions). Check that the qrels belong to this query file.")


def build_qrels(
    path: str | Path,
    lines: Sequence[QrelsLine],
    numbering: QueryNumbering,
    mapping: GradeMapping,
    docs: DocMatching | None = None,
) -> dict[str, dict[str, int]]:
    """topic_id -> doc_id -> grade from the qrels lines, numbering, grade mapping and doc id matching.

    Args:
        path: the qrels file (for error messages).
        lines: its lines.
        numbering: the query numbering (``match_queries``).
        mapping: the grade mapping (``grade_mapping``).
        docs: the doc id matching (``match_docs``): a written doc id becomes the
            corpus id it matched; one it did not match is kept as written. None: as written.

    Raises:
        InputFormatError: one (query, doc) pair given two different grades
            (both lines named, after zero padding is removed); an exact repeat is accepted once.
    """
    p = str(path)
    qrels: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    doc_of = docs.doc_of if docs is not None else {}
    for ln in lines:
        add_grade(qrels, first, p, ln.line, numbering.topic_of[ln.query], doc_of.get(ln.doc, ln.doc),
                  mapping.grade_of_value[ln.value or ""])
    return qrels


# -- document ids ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DocMatching:
    """How the qrels' doc column names the corpus's documents.

    Attributes:
        doc_of: qrels doc id as written -> the corpus doc id (the ``.I`` value) it names, for every
            qrels doc id that names one.
        padded: (written, corpus id) of the qrels doc ids that match only once zero padding is
            removed (``("0756", "756")``), in order of first line.
        unknown: qrels doc ids that name no document of the corpus, in order of first line.
        first_line: qrels doc id as written -> the line it first appears on.
    """

    doc_of: dict[str, str]
    padded: tuple[tuple[str, str], ...]
    unknown: tuple[str, ...]
    first_line: dict[str, int]

    @property
    def note(self) -> str:
        """One sentence for the conversion report ("" when every doc id is written as in the corpus)."""
        if not self.padded:
            return ""
        ex = ", ".join(f"{shown_id(w)} -> {shown_id(c)}" for w, c in self.padded[:3])
        n_all = len(self.doc_of) + len(self.unknown)
        return (f"{len(self.padded):,} of {n_all:,} qrels doc ids are zero-padded ({ex}"
                f"{' ...' if len(self.padded) > 3 else ''}) and were mapped to the corpus's .I values")


def match_docs(path: str | Path, doc_ids: Sequence[str], lines: Sequence[QrelsLine]) -> DocMatching:
    """Match the qrels' doc ids to the corpus's, as written or without zero padding.

    A qrels doc id names a document when it equals a corpus doc id as written;
    otherwise when both are numbers equal once leading zeros are removed
    (CACM's qrels write ``0756`` for ``.I 756``), as query ids are matched
    (``match_queries``). The qrels are then written with the corpus's id.

    Args:
        path: the qrels file (for error messages).
        doc_ids: the corpus's doc ids (``.I`` values), in file order.
        lines: the qrels lines.

    Returns:
        The ``DocMatching`` (ids that name no document are listed, not refused: the caller decides).

    Raises:
        InputFormatError: a qrels doc id that, without zero padding, equals two or more corpus doc
            ids and none as written (the line, the id and the candidates named).

    Example:
        >>> m = match_docs("q", ["1", "756"], [QrelsLine(1, "5", "0756", "0"), QrelsLine(2, "5", "9", "0")])
        >>> m.doc_of, m.padded, m.unknown
        ({'0756': '756'}, (('0756', '756'),), ('9',))
    """
    exact = set(doc_ids)
    by_number: dict[str, list[str]] = {}
    for d in doc_ids:
        if d.isascii() and d.isdigit():
            by_number.setdefault(num_key(d), []).append(d)
    first_line: dict[str, int] = {}
    for ln in lines:
        first_line.setdefault(ln.doc, ln.line)
    doc_of: dict[str, str] = {}
    padded: list[tuple[str, str]] = []
    unknown: list[str] = []
    for doc, line in first_line.items():
        if doc in exact:
            doc_of[doc] = doc
            continue
        hits = by_number.get(num_key(doc), []) if doc.isascii() and doc.isdigit() else []
        if len(hits) > 1:
            raise InputFormatError(
                str(path), line,
                f"expected doc id {shown_id(doc)} to name one document, found {len(hits)} corpus doc ids equal to "
                f"it once zero padding is removed ({', '.join(shown_id(h) for h in hits[:5])}). Write the qrels "
                "doc ids exactly as the corpus's .I values.")
        if hits:
            doc_of[doc] = hits[0]
            padded.append((doc, hits[0]))
        else:
            unknown.append(doc)
    return DocMatching(doc_of, tuple(padded), tuple(unknown), first_line)
