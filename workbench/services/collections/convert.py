"""Converting raw SMART collections into the workbench's BEIR + TREC layout.

``convert_smart`` reads a SMART document file, query file and qrels file,
checks them against each other, and writes a collection folder that
``workbench ingest`` reads:

* ``corpus.jsonl``: ``_id`` (the ``.I`` value), ``title``, ``text`` and, in
  ``metadata``, every other named field (``--field authors=.A``);
* ``doc_metadata.jsonl``: the document-metadata side file with every marker
  nobody named, kept under its letter (``"B"``), unless ``unknown="ignore"``
  (see ``unknown_metadata_output``); written only when there is one;
* ``queries.jsonl``: ``_id`` (the topic id, see the numbering below), ``text``
  and ``metadata.smart_id`` (the ``.I`` value);
* ``qrels.reference.txt``: TREC qrels, ``topic 0 doc grade``;
* ``qrels.meta.json``: the qrels layout, query numbering and grade mapping
  (its ``rule`` becomes the imported qrels version's ``rule``; its ``rubric``
  is the suggested rubric, ``binary`` for 0/1 grades);
* ``README.md``: what was converted and how.

The rules (``formats.smart``): ``.X`` (cross-references) is skipped unless a
``--field`` names it; a field repeated in a record is joined (title and text
with a space, metadata with ``"; "``); query numbering is checked against the
qrels by ``.I`` value and by position and the one that fits is used (and
reported), or the user's choice is checked; qrels of 2, 3 or 4 columns are
read, float grades included.

Everything is read and checked before anything is written; the files are
written into a temporary folder next to the destination and moved in, so a
failure leaves the destination as it was.

``convert_cranfield`` in ``services.collections.ingest`` is this converter with the
``CRANFIELD`` preset (plus its own README and ``qrels.meta.json``), and its
output is byte-identical to the committed ``sample_corpus/cranfield``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from workbench.errors import InputFormatError, ValidationError, shown
from workbench.formats import beir, smart, trec
from workbench.formats.io import atomic_write
from workbench.formats.smart import GradeMapping, QrelsLayout, QueryNumbering, SmartRecord
from workbench.types import Document, Topic

Progress = Callable[[str], None]
Unknown = Literal["keep", "ignore"]

TEXT_FIELDS = ("title", "text")
"""Document field names that become the document's title and text (all others are metadata)."""
QUERY_FIELDS = ("text", "description", "narrative")
"""Query field names that become the topic's query text, description and narrative."""
METADATA_SEP = "; "
"""Separator of a repeated metadata field's blocks (two ``.A`` blocks -> ``"smith; jones"``)."""
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _noop(_: str) -> None:
    pass


@dataclass(frozen=True)
class SmartSpec:
    """What to convert and how: files, field mapping and the qrels' reading.

    Attributes:
        docs: the SMART document file.
        queries: the SMART query file.
        qrels: the qrels file (2, 3 or 4 columns).
        doc_fields: (field name, marker letter) pairs; ``title`` and ``text``
            become the document's title and text, other names metadata.
        query_fields: (field name, marker letter) pairs; ``text`` (required),
            ``description`` and ``narrative`` become the topic's fields, other
            names metadata.
        unknown: markers no field names: ``keep`` them as metadata under their
            letter, or ``ignore`` them.
        skip: markers dropped unless a field names them (default ``X``,
            cross-references).
        text_to_end: the ``text`` marker runs to the next ``.I`` (stray
            markers inside it are dropped; Cranfield's rule).
        query_numbering: ``id`` or ``position``; None detects it.
        qrels_columns: column roles (``query doc ignore grade``); None detects them.
        grade_map: written grade value -> grade; None applies the default rules.
        allow_unknown_docs: accept qrels doc ids that are not in the corpus
            (as written, or without zero padding).
        bib: the marker of the bibliographic source (``B``): ``year`` and
            ``source`` are derived from its text (``formats.smart.bib_fields``)
            into ``doc_metadata.jsonl`` wherever they parse, when the marker is
            kept (named, or kept as an unknown marker); None derives nothing.
        bib_rules: how ``bib_fields`` reads it (``smart.SMART_BIB``; Cranfield's
            preset ``smart.CRANFIELD_BIB``).
        empty_fields: ``absent`` (a metadata field a record lacks is left out)
            or ``empty`` (written as ``""``: only the Cranfield preset, whose
            committed ``corpus.jsonl`` has ``"author": ""``).
        name: the collection's name in the README (default the destination's name).
    """

    docs: Path
    queries: Path
    qrels: Path
    doc_fields: tuple[tuple[str, str], ...] = (("title", "T"), ("text", "W"))
    query_fields: tuple[tuple[str, str], ...] = (("text", "W"),)
    unknown: Unknown = "keep"
    skip: tuple[str, ...] = ("X",)
    text_to_end: bool = False
    query_numbering: smart.Numbering | None = None
    qrels_columns: tuple[str, ...] | None = None
    grade_map: Mapping[float, int] | None = None
    allow_unknown_docs: bool = False
    bib: str | None = "B"
    bib_rules: smart.BibRules = smart.SMART_BIB
    empty_fields: Literal["absent", "empty"] = "absent"
    name: str = ""


def parse_fields(items: Sequence[str], *, what: str = "--field") -> tuple[tuple[str, str], ...]:
    """``["title=.T", "authors=.A"]`` -> ``(("title", "T"), ("authors", "A"))``.

    Raises:
        ValidationError: an item that is not ``NAME=.M``, a name or marker used
            twice, or ``.I`` (the record id is not a field).
    """
    out: list[tuple[str, str]] = []
    for item in items:
        name, sep, marker = item.partition("=")
        name = name.strip()
        try:
            letter = smart.marker_of(marker)
        except ValueError:
            letter = ""
        if not sep or not _FIELD_NAME.fullmatch(name) or not letter:
            raise ValidationError(f"{what}: expected NAME=.MARKER such as title=.T or authors=.A, found {shown(item)}")
        if letter == "I":
            raise ValidationError(f"{what} {item}: .I is the record id, not a field; the id is always the .I value")
        if any(n == name for n, _ in out):
            raise ValidationError(f"{what}: field {name!r} is named twice; give each field one marker")
        if any(m == letter for _, m in out):
            raise ValidationError(f"{what}: marker .{letter} is given to two fields; give each marker one name")
        out.append((name, letter))
    return tuple(out)


# -- what a conversion read ------------------------------------------------------------


@dataclass(frozen=True)
class SmartQuery:
    """A converted query: topic id, its ``.I`` value and the topic's fields."""

    topic: Topic
    smart_id: str
    line: int
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SmartCollection:
    """A SMART collection read and checked, ready to be written.

    Attributes:
        spec: what was read.
        documents: in file order.
        doc_metadata: doc_id -> named metadata fields (written into ``corpus.jsonl``).
        unknown_metadata: doc_id -> kept unknown markers (``unknown_metadata_output``).
        queries: in file order, with topic ids per the numbering.
        qrels: topic_id -> doc_id -> grade.
        layout: the qrels' column layout.
        numbering: the query numbering.
        mapping: the grade mapping.
        skipped: marker letters dropped (skipped or ignored), with the number of records.
        unknown_docs: qrels doc ids not in the corpus (only with ``allow_unknown_docs``).
        docs_matching: how the qrels' doc ids matched the corpus's (zero padding).
        derived: doc_id -> ``year``/``source`` derived from ``spec.bib`` (keys absent where
            they do not parse; every document, in file order), or {} when nothing was derived.
        empty_queries: (line, ``.I`` value) of the query records skipped for having no query text.
    """

    spec: SmartSpec
    documents: list[Document]
    doc_metadata: dict[str, dict[str, str]]
    unknown_metadata: dict[str, dict[str, str]]
    queries: list[SmartQuery]
    qrels: dict[str, dict[str, int]]
    layout: QrelsLayout
    numbering: QueryNumbering
    mapping: GradeMapping
    skipped: dict[str, int]
    unknown_docs: frozenset[str] = frozenset()
    docs_matching: smart.DocMatching | None = None
    derived: dict[str, dict[str, str | int]] = field(default_factory=dict)
    empty_queries: tuple[tuple[int, str], ...] = ()

    @property
    def n_judgments(self) -> int:
        """(topic, doc) entries of the qrels."""
        return sum(len(g) for g in self.qrels.values())

    @property
    def unjudged_topics(self) -> list[str]:
        """Topics without any qrels entry, in file order."""
        return [q.topic.topic_id for q in self.queries if q.topic.topic_id not in self.qrels]

    @property
    def grades(self) -> set[int]:
        """The distinct grades of the qrels."""
        return {g for grades in self.qrels.values() for g in grades.values()}

    @property
    def suggested_rubric(self) -> str | None:
        """``binary`` when every grade is 0 or 1, else None (the collection's default applies)."""
        return "binary" if self.grades <= {0, 1} else None


@dataclass(frozen=True)
class ConversionReport:
    """What a conversion wrote.

    Attributes:
        dest: the output folder.
        n_documents, n_topics: counts written.
        n_qrels: qrels entries; n_qrels_topics: topics with at least one.
        files: names of the files written.
        notes: one line each on the qrels layout, the query numbering, the
            grade mapping and anything dropped (empty for the Cranfield preset).
        warnings: what a user must know (positives-only qrels, unjudged topics, ...).
    """

    dest: Path
    n_documents: int
    n_topics: int
    n_qrels: int
    n_qrels_topics: int
    files: tuple[str, ...]
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


class ProgressStep:
    """``[starting]`` / ``[finished] ... [elapsed]`` lines around a step (ir_datasets style).

    Set ``detail`` inside the step to add it to the finished line; a step that
    raises prints no finished line. Used by the converters and ``services.collections.ingest``.

    Args:
        progress: receives the lines.
        what: the step, as printed.

    Example:
        >>> with ProgressStep(print, "read cran.qry") as step:  # doctest: +ELLIPSIS
        ...     step.detail = "225 queries"
        [starting] read cran.qry
        [finished] read cran.qry [...s] [225 queries]
    """

    def __init__(self, progress: Progress, what: str) -> None:
        self.progress, self.what, self.detail = progress, what, ""

    def __enter__(self) -> ProgressStep:
        self.start = time.perf_counter()
        self.progress(f"[starting] {self.what}")
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if exc_type is None:
            extra = f" [{self.detail}]" if self.detail else ""
            self.progress(f"[finished] {self.what} [{time.perf_counter() - self.start:.2f}s]{extra}")


# -- reading -------------------------------------------------------------------------------


def _marker_plan(fields: Sequence[tuple[str, str]], spec: SmartSpec) -> tuple[dict[str, str], set[str]]:
    named = {m: n for n, m in fields}
    skip = {smart.marker_of(m) for m in spec.skip} - set(named)
    return named, skip


def _kept(fields: dict[str, str], spec: SmartSpec) -> dict[str, str]:
    """A record's metadata fields: those it lacks left out (``empty_fields="absent"``) or kept as ``""``."""
    return fields if spec.empty_fields == "empty" else {k: v for k, v in fields.items() if v}


def _unknown_markers(records: Sequence[SmartRecord], named: Mapping[str, str], skip: set[str], spec: SmartSpec,
                     skipped: dict[str, int], prefix: str = "") -> list[str]:
    """The markers of ``records`` no field names, kept (``unknown="keep"``) in order of first appearance.

    Skipped ones (``spec.skip``, or all under ``unknown="ignore"``) are counted in
    ``skipped`` under ``prefix + marker`` instead.
    """
    unknown_order: list[str] = []
    for r in records:
        for m in r.blocks:
            if m in named:
                continue
            if m in skip or spec.unknown == "ignore":
                skipped[prefix + m] = skipped.get(prefix + m, 0) + 1
            elif m not in unknown_order:
                unknown_order.append(m)
    return unknown_order


def _documents(spec: SmartSpec, skipped: dict[str, int]) -> tuple[
    list[Document], dict[str, dict[str, str]], dict[str, dict[str, str]], dict[str, dict[str, str | int]]
]:
    named, skip = _marker_plan(spec.doc_fields, spec)
    text_marker = next((m for m, n in named.items() if n == "text"), None)
    records = smart.read_smart(spec.docs, text_to_end=text_marker if spec.text_to_end else None)
    meta_names = [n for n, _ in spec.doc_fields if n not in TEXT_FIELDS]
    unknown_order = _unknown_markers(records, named, skip, spec, skipped)
    marker_of = {n: m for m, n in named.items()}
    docs: list[Document] = []
    meta: dict[str, dict[str, str]] = {}
    unknown: dict[str, dict[str, str]] = {}
    for r in records:
        title = r.text(marker_of["title"]) if "title" in marker_of else ""
        text = r.text(marker_of["text"]) if "text" in marker_of else ""
        docs.append(Document(r.smart_id, title, text))
        if meta_names:
            meta[r.smart_id] = _kept({n: r.text(marker_of[n], METADATA_SEP) for n in meta_names}, spec)
        if unknown_order:
            unknown[r.smart_id] = {m: r.text(m, METADATA_SEP) for m in unknown_order}
    return docs, meta, unknown, _derived(spec, records, named, unknown_order)


DERIVED_KEYS = ("year", "source")
"""Document metadata derived from the bibliographic marker (``SmartSpec.bib``)."""


def _derived(spec: SmartSpec, records: Sequence[SmartRecord], named: Mapping[str, str],
             unknown_order: Sequence[str]) -> dict[str, dict[str, str | int]]:
    """doc_id -> ``year``/``source`` from the bibliographic marker's text ({} when it is not kept or never parses).

    A key a ``--field`` already names (``--field source=.N``) is not derived: the user's field wins.
    """
    if spec.bib is None:
        return {}
    marker = smart.marker_of(spec.bib)
    if marker not in named and marker not in unknown_order:  # dropped (--skip, --unknown ignore) or absent
        return {}
    if named.get(marker) in TEXT_FIELDS:  # .B named as the title or text: not a bibliographic field here
        return {}
    taken = set(named.values())
    out: dict[str, dict[str, str | int]] = {}
    for r in records:
        d = smart.derived_metadata(r.text(marker, METADATA_SEP), spec.bib_rules)
        out[r.smart_id] = {k: v for k, v in d.items() if k not in taken}
    return out if any(out.values()) else {}


def _queries(spec: SmartSpec, skipped: dict[str, int]) -> list[SmartRecord]:
    named, _skip = _marker_plan(spec.query_fields, spec)
    text_marker = next((m for m, n in named.items() if n == "text"), None)
    if text_marker is None:
        raise ValidationError("query fields: expected a 'text' field (e.g. text=.W), found none; name the query text marker")
    return smart.read_smart(spec.queries, text_to_end=text_marker if spec.text_to_end else None)


def _split_empty(spec: SmartSpec, records: Sequence[SmartRecord]) -> tuple[list[SmartRecord], list[SmartRecord]]:
    """(query records with query text, records without it): the latter are skipped, not queries (CACM's
    trailing ``.I 0`` with no ``.W``)."""
    named, _skip = _marker_plan(spec.query_fields, spec)
    text_marker = next(m for m, n in named.items() if n == "text")
    kept = [r for r in records if r.text(text_marker)]
    return kept, [r for r in records if not r.text(text_marker)]


def _refuse_judged_empty(spec: SmartSpec, empty: Sequence[SmartRecord], lines: Sequence[smart.QrelsLine]) -> None:
    """Raise when a qrels query names a skipped record by its ``.I`` value (the reason its numbering failed).

    Raises:
        InputFormatError: naming the qrels line and the record's file:line.
    """
    ids = {smart.num_key(r.smart_id): r for r in empty}
    for ln in lines:
        r = ids.get(smart.num_key(ln.query))
        if r is not None:
            raise InputFormatError(
                str(spec.qrels), ln.line,
                f"expected a query with text, found query {trec.shown_id(ln.query)}, which is .I {r.smart_id} of "
                f"{Path(spec.queries).name}:{r.line}, a record without query text. Add its text, or remove its "
                "judgments.")


def _topics(spec: SmartSpec, records: Sequence[SmartRecord], numbering: QueryNumbering,
            skipped: dict[str, int]) -> list[SmartQuery]:
    named, skip = _marker_plan(spec.query_fields, spec)
    marker_of = {n: m for m, n in named.items()}
    extra = [n for n, _ in spec.query_fields if n not in QUERY_FIELDS]
    unknown_order = _unknown_markers(records, named, skip, spec, skipped, prefix="query ")
    out = []
    for topic_id, r in zip(smart.topic_ids(records, numbering.mode), records, strict=True):
        text = r.text(marker_of["text"])  # never empty: _split_empty set such records apart
        desc = r.text(marker_of["description"]) if "description" in marker_of else ""
        narr = r.text(marker_of["narrative"]) if "narrative" in marker_of else ""
        meta = {"smart_id": r.smart_id}
        meta |= _kept({n: r.text(marker_of[n], METADATA_SEP) for n in extra}, spec)
        meta |= _kept({m: r.text(m, METADATA_SEP) for m in unknown_order}, spec)
        out.append(SmartQuery(Topic(topic_id, text, desc, narr), r.smart_id, r.line, meta))
    return out


def read_collection(spec: SmartSpec) -> SmartCollection:
    """Read and check a SMART collection (nothing is written).

    Raises:
        InputFormatError: a malformed file, a query without text, a qrels query
            that fits no numbering, a qrels doc id not in the corpus (unless
            allowed), an unreadable grade (each naming file and line).
        ValidationError: a bad field mapping.
    """
    for f in (spec.docs, spec.queries, spec.qrels):
        if not Path(f).is_file():
            raise InputFormatError(str(f), 0, "expected a file, found nothing at this path. Check the path.")
    skipped: dict[str, int] = {}
    docs, meta, unknown, derived = _documents(spec, skipped)
    doc_ids = {d.doc_id for d in docs}
    records, empty = _split_empty(spec, _queries(spec, skipped))
    if not records:
        raise InputFormatError(str(spec.queries), empty[0].line,
                               "expected query records with text, found none. Check the query text marker "
                               "(--query-field text=.W).")
    layout, lines = smart.qrels_columns(spec.qrels, doc_ids, spec.qrels_columns)
    try:
        numbering = smart.match_queries(spec.qrels, records, lines, spec.query_numbering)
    except InputFormatError:
        if spec.query_numbering != "position":
            _refuse_judged_empty(spec, empty, lines)  # the better message when the query is a skipped record
        raise
    mapping = smart.grade_mapping(spec.qrels, lines, spec.grade_map)
    queries = _topics(spec, records, numbering, skipped)
    matching = smart.match_docs(spec.qrels, [d.doc_id for d in docs], lines)
    qrels = smart.build_qrels(spec.qrels, lines, numbering, mapping, matching)
    if matching.unknown and not spec.allow_unknown_docs:
        doc = matching.unknown[0]
        n_all = len(matching.first_line)
        padding = " (compared as written and without zero padding)" if matching.padded else ""
        raise InputFormatError(
            str(spec.qrels), matching.first_line[doc],
            f"expected a document of {Path(spec.docs).name}, found doc id {trec.shown_id(doc)} "
            f"({n_all - len(matching.unknown):,} of {n_all:,} qrels doc ids are in the corpus{padding}). "
            "Check the qrels columns (--qrels-columns), or pass --allow-unknown-docs to convert anyway.")
    return SmartCollection(spec, docs, meta, unknown, queries, qrels, layout, numbering, mapping, skipped,
                           frozenset(matching.unknown), matching, derived,
                           tuple((r.line, r.smart_id) for r in empty))


# -- writing ---------------------------------------------------------------------------------


def unknown_metadata_output(collection: SmartCollection) -> list[tuple[str, dict[str, str]]] | None:
    """Where the kept unknown markers go: the one place to change when the format changes.

    They go to the document-metadata side file ``doc_metadata.jsonl``
    (``formats.metadata``; read by ``workbench ingest``): one row per
    document in file order, each kept marker under its letter, absent
    (not ``""``) where the record lacks it.

    Returns:
        (doc_id, metadata) rows, or None when no unknown marker was kept.
    """
    if not collection.unknown_metadata:
        return None
    return [(d.doc_id, {k: v for k, v in collection.unknown_metadata.get(d.doc_id, {}).items() if v})
            for d in collection.documents]


def _merge_rows(
    first: Sequence[tuple[str, Mapping[str, Any]]] | None, second: Sequence[tuple[str, Mapping[str, Any]]] | None
) -> list[tuple[str, dict[str, Any]]] | None:
    """Side-file rows of both sources, per doc id (``first``'s order and keys first)."""
    if first is None and second is None:
        return None
    merged: dict[str, dict[str, Any]] = {}
    for rows in (first or (), second or ()):
        for doc_id, meta in rows:
            target = merged.setdefault(doc_id, {})
            for k, v in meta.items():
                target.setdefault(k, v)
    return list(merged.items())


def derived_rows(collection: SmartCollection) -> list[tuple[str, dict[str, str | int]]] | None:
    """(doc_id, ``year``/``source``) rows for ``doc_metadata.jsonl``, every document in file order; None
    when nothing was derived."""
    if not collection.derived:
        return None
    return [(d.doc_id, dict(collection.derived.get(d.doc_id, {}))) for d in collection.documents]


def _corpus_metadata(collection: SmartCollection) -> dict[str, dict[str, str]]:
    """doc_id -> the named metadata fields, for ``corpus.jsonl``'s BEIR ``metadata``."""
    return {d.doc_id: dict(m) for d in collection.documents if (m := collection.doc_metadata.get(d.doc_id, {}))}


def write_folder(dest: Path, write: Callable[[Path], list[str]]) -> list[str]:
    """Write a set of files into a temporary folder next to ``dest``, then move them in.

    Args:
        dest: the output folder (created if missing).
        write: writes the files into the folder it is given and returns their names.

    Returns:
        The names of the files moved into ``dest``. On any failure ``dest``
        is left as it was and the temporary folder is removed.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    try:
        files = write(tmp)
        dest.mkdir(parents=True, exist_ok=True)
        for name in files:
            os.replace(tmp / name, dest / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return files


def qrels_meta(collection: SmartCollection) -> dict[str, Any]:
    """The ``qrels.meta.json`` of a general SMART conversion."""
    c = collection
    meta: dict[str, Any] = {
        "rule": c.mapping.rule,
        "grade_of_value": dict(c.mapping.grade_of_value),
        "value_counts": dict(c.mapping.counts),
        "qrels_columns": c.layout.describe(),
        "query_numbering": c.numbering.mode,
        "positives_only": c.mapping.positives_only,
    }
    if c.suggested_rubric:
        meta["rubric"] = c.suggested_rubric
    if c.docs_matching is not None and c.docs_matching.padded:
        meta["doc_ids"] = c.docs_matching.note
    meta["source"] = f"{Path(c.spec.qrels).name} (SMART qrels), converted by `workbench convert smart`; see README.md"
    return meta


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def _unjudged_text(unjudged: Sequence[str]) -> str:
    if not unjudged:
        return ""
    shown = ", ".join(unjudged[:10]) + (" ..." if len(unjudged) > 10 else "")
    return f"; {len(unjudged):,} have none ({shown}) and stay unjudged"


def _empty_text(c: SmartCollection) -> str:
    if not c.empty_queries:
        return ""
    where = ", ".join(f"line {ln} (`.I {i}`)" for ln, i in c.empty_queries[:10])
    return f" Skipped query records without text (not topics): {where}."


def _padding_text(c: SmartCollection) -> str:
    note = c.docs_matching.note if c.docs_matching is not None else ""
    return f" Doc ids: {note}." if note else ""


def derived_text(collection: SmartCollection) -> str:
    """One sentence on the ``year`` and ``source`` derived from the bibliographic marker ("" when none)."""
    c = collection
    if not c.derived:
        return ""
    years = [int(m["year"]) for m in c.derived.values() if "year" in m]
    sources: dict[str, int] = {}
    for m in c.derived.values():
        if "source" in m:
            sources[str(m["source"])] = sources.get(str(m["source"]), 0) + 1
    top = ", ".join(s for s, _ in sorted(sources.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
    parts = []
    if years:
        parts.append(f"year for {len(years):,} of {len(c.documents):,} documents ({min(years)}-{max(years)})")
    if sources:
        parts.append(f"source for {sum(sources.values()):,} ({top}{' ...' if len(sources) > 3 else ''})")
    return f"derived from .{c.spec.bib} into doc_metadata.jsonl: {'; '.join(parts)}"


def _derived_sentence(c: SmartCollection) -> str:
    text = derived_text(c)
    return f"\n{text[0].upper()}{text[1:]} (`formats.smart.bib_fields`).\n" if text else ""


def smart_readme(collection: SmartCollection, name: str) -> str:
    """The README.md of a general SMART conversion: files, field mapping, numbering, grades."""
    c = collection
    s = c.spec
    fields = "\n".join(f"| `.{m}` | `{n}` | {'document ' + n if n in TEXT_FIELDS else 'metadata.' + n} |"
                       for n, m in s.doc_fields)
    unknown = sorted({k for m in c.unknown_metadata.values() for k in m})
    if unknown:
        fields += "\n" + "\n".join(f"| `.{m}` | `{m}` | `{m}` in `doc_metadata.jsonl` (marker nobody named, kept) |"
                                   for m in unknown)
    dropped = ", ".join(f"`.{m}` ({n:,} records)" for m, n in sorted(c.skipped.items())) or "none"
    grades = "\n".join(f"| `{_md(v) or '(none)'}` | {g} | {c.mapping.counts.get(v, 0):,} |"
                       for v, g in c.mapping.grade_of_value.items())
    ex = [q for i, q in enumerate(c.queries) if i < 3 or i == len(c.queries) - 1]
    examples = "\n".join(f"| `.I {q.smart_id}` | {q.topic.topic_id} | {_md(q.topic.title[:60])}"
                         f"{'...' if len(q.topic.title) > 60 else ''} |" for q in ex)
    unjudged = c.unjudged_topics
    what = " and ".join(x for x in (derived_text(c) and f"`year`/`source` derived from `.{c.spec.bib}`",
                                     unknown and "the markers nobody named") if x)
    side = f"| `doc_metadata.jsonl` | document metadata side file: `doc_id`, {what} |\n" if what else ""
    warn = ""
    if c.mapping.positives_only:
        warn = ("\n**The qrels hold only relevant documents.** Judged@k then equals P@k, and every "
                "non-relevant document a run retrieves counts as unjudged (pool-novel).\n")
    return f"""# {name}, converted for the workbench

Generated by `workbench convert smart` from `{Path(s.docs).name}`, `{Path(s.queries).name}` and
`{Path(s.qrels).name}`; do not edit by hand, re-run the converter. Ingest with
`workbench ingest <this folder>`.

## Files

| file | content |
| --- | --- |
| `corpus.jsonl` | {len(c.documents):,} documents: `_id` (the `.I` value), `title`, `text`, `metadata` |
| `queries.jsonl` | {len(c.queries):,} topics: `_id` (see numbering), `text`, `metadata.smart_id` (the `.I` value) |
| `qrels.reference.txt` | {c.n_judgments:,} judgments over {len(c.qrels):,} topics, TREC format `topic 0 doc grade` |
| `qrels.meta.json` | the qrels layout, query numbering and grade mapping (its `rule` is recorded on import) |
{side}
## Document fields

| marker | field | becomes |
| --- | --- | --- |
{fields}

Dropped markers: {dropped}. A field repeated within a record is joined (title and text
with a space, metadata with `{METADATA_SEP.strip()}` and a space); a field a record lacks is absent.
{_derived_sentence(c)}
## Query numbering

{c.numbering.note}.

| query file | topic id | text |
| --- | --- | --- |
{examples}

{len(c.qrels):,} of {len(c.queries):,} topics have judgments{_unjudged_text(unjudged)}.{_empty_text(c)}

## Qrels

{c.layout.note}. {c.mapping.rule}.{_padding_text(c)}

| written value | grade | lines |
| --- | --- | --- |
{grades}
{warn}"""


def conversion_notes(collection: SmartCollection) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(notes, warnings) for the person running the conversion."""
    c = collection
    notes = [f"qrels columns: {c.layout.note}", f"query numbering: {c.numbering.note}",
             f"grades: {c.mapping.rule}"]
    if c.skipped:
        notes.append("dropped markers: " + ", ".join(f".{m} ({n:,} records)" for m, n in sorted(c.skipped.items())))
    kept = sorted({k for m in c.unknown_metadata.values() for k in m})
    if kept:
        notes.append("kept in doc_metadata.jsonl (markers no --field names): " + ", ".join(f".{m}" for m in kept))
    if derived_text(c):
        notes.append(derived_text(c))
    if c.docs_matching is not None and c.docs_matching.padded:
        notes.append(f"doc ids: {c.docs_matching.note}")
    warnings = []
    if c.empty_queries:
        where = ", ".join(f"{c.spec.queries}:{ln} (.I {i})" for ln, i in c.empty_queries[:10])
        warnings.append(f"skipped {len(c.empty_queries):,} query record(s) without query text (not topics): {where}"
                        f"{' ...' if len(c.empty_queries) > 10 else ''}")
    unjudged = c.unjudged_topics
    if unjudged:
        warnings.append(f"{len(unjudged):,} of {len(c.queries):,} topics have no judgments "
                        f"({', '.join(unjudged[:10])}{' ...' if len(unjudged) > 10 else ''}); "
                        "`pool build --topics judged` leaves them out")
    if c.mapping.positives_only:
        warnings.append("the qrels hold only relevant documents (no grade below 1): Judged@k will equal P@k "
                        "and every non-relevant document counts as pool-novel")
    if c.unknown_docs:
        warnings.append(f"{len(c.unknown_docs):,} qrels doc ids are not in the corpus (--allow-unknown-docs)")
    if c.suggested_rubric:
        warnings.append(f"grades are only {sorted(c.grades)}: judge on rubric {c.suggested_rubric!r} "
                        f"(written to qrels.meta.json)")
    return tuple(notes), tuple(warnings)


def write_collection(
    collection: SmartCollection,
    dest: str | Path,
    *,
    readme: str,
    meta: Mapping[str, Any],
    source_md: Path | None = None,
    doc_metadata: Sequence[tuple[str, Mapping[str, Any]]] | None = None,
) -> list[str]:
    """Write a read collection into ``dest`` (all files, or none on failure).

    Args:
        collection: what ``read_collection`` read.
        dest: the output folder.
        readme: the text of ``README.md``.
        meta: the content of ``qrels.meta.json``.
        source_md: a ``SOURCE.md`` to copy (when it exists).
        doc_metadata: (doc_id, metadata) rows written, in this order, as the
            side file ``doc_metadata.jsonl`` (``formats.metadata``), together with
            the kept unknown markers (``unknown_metadata_output``); no side file
            when both are empty.

    Returns:
        The names of the files written.
    """
    d = Path(dest)

    def write(tmp: Path) -> list[str]:
        side_files: tuple[str, ...] = ()
        beir.write_corpus(tmp / "corpus.jsonl", collection.documents, _corpus_metadata(collection))
        beir.write_queries(tmp / "queries.jsonl", (q.topic for q in collection.queries),
                           {q.topic.topic_id: q.metadata for q in collection.queries})
        rows = _merge_rows(doc_metadata, unknown_metadata_output(collection))
        if rows is not None:
            from workbench.formats.metadata import write_metadata_jsonl

            write_metadata_jsonl(tmp / "doc_metadata.jsonl", rows, "doc_id")
            side_files = (*side_files, "doc_metadata.jsonl")
        trec.write_qrels(tmp / "qrels.reference.txt", collection.qrels)
        with atomic_write(tmp / "qrels.meta.json") as f:
            json.dump(dict(meta), f, indent=2)
            f.write("\n")
        with atomic_write(tmp / "README.md") as f:
            f.write(readme)
        files = ["corpus.jsonl", "queries.jsonl", "qrels.reference.txt", "qrels.meta.json", "README.md",
                 *side_files]
        if source_md is not None and source_md.is_file():
            with atomic_write(tmp / "SOURCE.md", "wb") as f:
                f.write(source_md.read_bytes())
            files.append("SOURCE.md")
        return files

    return write_folder(d, write)


def convert_smart(spec: SmartSpec, dest: str | Path, *, progress: Progress | None = None) -> ConversionReport:
    """Convert a SMART collection into ``dest`` (see the module docstring).

    Args:
        spec: the files and how to read them.
        dest: the output folder (created if missing; its files are replaced).
        progress: receives ``[starting]``/``[finished]`` lines.

    Returns:
        A ``ConversionReport`` with counts, notes (layout, numbering, grades)
        and warnings (unjudged topics, positives-only qrels).

    Raises:
        InputFormatError: see ``read_collection``.
        ValidationError: a bad field mapping.
    """
    say = progress or _noop
    d = Path(dest)
    spec = spec if spec.name else replace(spec, name=d.name)
    with ProgressStep(say, f"read {spec.docs}, {spec.queries}, {spec.qrels}") as step:
        c = read_collection(spec)
        step.detail = (f"{len(c.documents):,} documents, {len(c.queries):,} queries, "
                       f"{c.n_judgments:,} judgments")
    readme = smart_readme(c, spec.name)
    with ProgressStep(say, f"write {d}"):
        source = Path(spec.docs).parent / "SOURCE.md"
        files = write_collection(c, d, readme=readme, meta=qrels_meta(c), source_md=source,
                                 doc_metadata=derived_rows(c))
    notes, warnings = conversion_notes(c)
    return ConversionReport(d, len(c.documents), len(c.queries), c.n_judgments, len(c.qrels), tuple(files),
                            notes, warnings)


# -- the Cranfield preset -----------------------------------------------------------------------

CRANFIELD_FILES = ("cran.all.1400", "cran.qry", "cranqrel")


def cranfield_spec(src: str | Path) -> SmartSpec:
    """The ``CRANFIELD`` preset: the SMART rules that reproduce ``sample_corpus/cranfield``.

    ``.T`` title, ``.W`` text (running to the next ``.I``), ``.A`` -> metadata
    ``author``, ``.B`` -> metadata ``bib`` (and ``year``/``source`` derived from it
    by ``smart.CRANFIELD_BIB``); queries numbered by position (as cranqrel
    does); 3-column qrels with ``formats.smart.GRADE_OF_CODE``; a missing
    ``.A``/``.B`` written as ``""`` (as the committed sample has it).
    """
    s = Path(src)
    return SmartSpec(
        docs=s / "cran.all.1400", queries=s / "cran.qry", qrels=s / "cranqrel",
        doc_fields=(("title", "T"), ("text", "W"), ("author", "A"), ("bib", "B")),
        query_fields=(("text", "W"),), text_to_end=True, query_numbering="position",
        qrels_columns=("query", "doc", "grade"),
        grade_map={float(k): v for k, v in smart.GRADE_OF_CODE.items()}, name="cranfield",
        bib_rules=smart.CRANFIELD_BIB, empty_fields="empty",
    )
