"""Strict readers and atomic writers of the BEIR layout.

Files (one JSON object per line for the two ``.jsonl`` files):

* ``corpus.jsonl``: ``{"_id": str, "title": str (optional, default ""), "text": str,
  "metadata": {...} (optional)}``; other keys are ignored. ``read_corpus_with_metadata``
  also returns the ``metadata`` objects as document metadata (``workbench.metadata``
  rules; values that are not scalars, and keys that are not valid metadata keys,
  are skipped and counted, since real BEIR corpora carry lists such as ``authors``).
* ``queries.jsonl``: ``{"_id": str, "text": str, "metadata": {...} (optional)}``;
  ``metadata.description`` and ``metadata.narrative`` (strings), when present,
  become the topic's description and narrative; ``text`` is its title. The
  other ``metadata`` keys are topic metadata (``read_queries_with_metadata``;
  skipped and counted as for the corpus).
* ``qrels/*.tsv``: a header line ``query-id<TAB>corpus-id<TAB>score``, then
  one ``topic doc grade`` line per judgment, grade an integer.

Ids must be JSON strings (``"_id": 7`` is an error: ids are never numbers).
Normalisations as in ``formats.trec``: a UTF-8 BOM is removed, CRLF is read
as LF, blank lines are skipped, TSV columns are split on any run of spaces
and tabs. Errors are ``InputFormatError(path, line, ...)``.

Source:
    Thakur et al., BEIR, NeurIPS 2021 Datasets and Benchmarks (arXiv:2104.08663);
    the layout of beir-cellar/beir ``GenericDataLoader``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from workbench.errors import InputFormatError, shown, shown_list
from workbench.formats.io import atomic_write
from workbench.formats.trec import (
    add_grade,
    check_grade,
    check_id,
    empty_file_error,
    iter_columns,
    iter_json_objects,
    shown_id,
    shown_json,
)
from workbench.metadata import MetadataValueError, MetaValue, check_key, from_json
from workbench.types import Document, Topic

QRELS_HEADER = ("query-id", "corpus-id", "score")
_INT = re.compile(r"[+-]?[0-9]+")


_objects = iter_json_objects


def _string(path: str, lineno: int, obj: Mapping[str, Any], key: str, *, required: bool) -> str:
    if key not in obj:
        if required:
            raise InputFormatError(
                path, lineno, f"expected a {key!r} field, found keys {shown_list(sorted(obj))}. Add the field."
            )
        return ""
    value = obj[key]
    if not isinstance(value, str):
        fix = "Quote the id." if key == "_id" else "Write it as a JSON string."
        raise InputFormatError(
            path, lineno, f"expected {key!r} to be a string, found {shown_json(value)} ({type(value).__name__}). {fix}"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputFormatError(
            path, lineno,
            f"expected {key!r} to be valid Unicode text, found a lone surrogate \\u{ord(value[e.start]):04x} "
            f"at character {e.start + 1}. Fix the escape (surrogates must come in pairs) or remove it.",
        ) from None
    if key == "_id":
        check_id(path, lineno, value, "'_id'")
    return value


def _scalar_metadata(
    path: str, lineno: int, obj: Mapping[str, Any], skip: Iterable[str], skipped: Counter[str]
) -> dict[str, MetaValue]:
    """The scalar entries of a BEIR ``metadata`` object; others counted in ``skipped`` by key."""
    meta = obj.get("metadata")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise InputFormatError(path, lineno, f"expected 'metadata' to be an object, found {shown_json(meta)}. Remove it or make it an object.")
    out: dict[str, MetaValue] = {}
    left_out = set(skip)
    for key, raw in meta.items():
        if key in left_out:
            continue
        try:
            check_key(key)
            value = from_json(raw)
        except MetadataValueError:
            skipped[str(key)] += 1
            continue
        if value is not None:
            out[key] = value
    return out


def read_corpus_with_metadata(path: str | Path) -> tuple[list[Document], dict[str, dict[str, MetaValue]], Counter[str]]:
    """Read a BEIR ``corpus.jsonl`` with its ``metadata`` objects (one pass).

    Returns:
        (the documents in file order, doc_id -> metadata for documents that have
        any, key -> number of values skipped because they are not scalars or the
        key is not a valid metadata key).

    Raises:
        InputFormatError: as ``read_corpus``, plus a ``metadata`` that is not an object.
    """
    return _read_corpus(path, with_metadata=True)


def read_queries_with_metadata(path: str | Path) -> tuple[list[Topic], dict[str, dict[str, MetaValue]], Counter[str]]:
    """Read a BEIR ``queries.jsonl`` with topic metadata (``metadata`` keys other than description/narrative).

    Returns:
        (the topics in file order, topic_id -> metadata for topics that have
        any, key -> number of values skipped).

    Raises:
        InputFormatError: as ``read_queries``.
    """
    topics = read_queries(path)
    p = str(path)
    skipped: Counter[str] = Counter()
    meta: dict[str, dict[str, MetaValue]] = {}
    for (lineno, obj), topic in zip(_objects(path), topics, strict=True):
        m = _scalar_metadata(p, lineno, obj, ("description", "narrative"), skipped)
        if m:
            meta[topic.topic_id] = m
    return topics, meta, skipped


def read_corpus(path: str | Path) -> list[Document]:
    """Read a BEIR ``corpus.jsonl`` (documents only; see ``read_corpus_with_metadata``).

    Args:
        path: the file.

    Returns:
        The documents in file order.

    Raises:
        InputFormatError: invalid JSON, a missing ``_id`` or ``text``, a
            non-string field, a repeated ``_id``, non-UTF-8 bytes or an empty file.

    Example:
        >>> read_corpus("corpus.jsonl")[0]  # doctest: +SKIP
        Document(doc_id='1', title='experimental investigation ...', text='...')
    """
    return _read_corpus(path, with_metadata=False)[0]


def _unique_id(p: str, lineno: int, obj: Mapping[str, Any], seen: dict[str, int]) -> str:
    """The line's ``_id``, recorded in ``seen`` (id -> line); each id once per file (corpus and queries alike).

    Raises:
        InputFormatError: a missing or non-string ``_id``, or one already seen (names its first line).
    """
    id_ = _string(p, lineno, obj, "_id", required=True)
    if id_ in seen:
        raise InputFormatError(
            p, lineno, f"expected each _id once, found {shown_id(id_)} again (first on line {seen[id_]}). Remove the repeat."
        )
    seen[id_] = lineno
    return id_


def _read_corpus(
    path: str | Path, *, with_metadata: bool
) -> tuple[list[Document], dict[str, dict[str, MetaValue]], Counter[str]]:
    p = str(path)
    docs: list[Document] = []
    seen: dict[str, int] = {}
    skipped: Counter[str] = Counter()
    meta: dict[str, dict[str, MetaValue]] = {}
    for lineno, obj in _objects(path):
        doc_id = _unique_id(p, lineno, obj, seen)
        docs.append(Document(doc_id, _string(p, lineno, obj, "title", required=False), _string(p, lineno, obj, "text", required=True)))
        if with_metadata:
            m = _scalar_metadata(p, lineno, obj, (), skipped)
            if m:
                meta[doc_id] = m
    if not docs:
        raise empty_file_error(path, "document")
    return docs, meta, skipped


def read_queries(path: str | Path) -> list[Topic]:
    """Read a BEIR ``queries.jsonl`` as topics (``text`` -> title).

    Returns:
        The topics in file order.

    Raises:
        InputFormatError: as ``read_corpus``, plus a non-object ``metadata``.
    """
    p = str(path)
    topics: list[Topic] = []
    seen: dict[str, int] = {}
    for lineno, obj in _objects(path):
        topic_id = _unique_id(p, lineno, obj, seen)
        text = _string(p, lineno, obj, "text", required=True)
        meta = obj.get("metadata") or {}
        if not isinstance(meta, dict):
            raise InputFormatError(p, lineno, f"expected 'metadata' to be an object, found {shown_json(meta)}. Remove it or make it an object.")
        desc = _string(p, lineno, meta, "description", required=False)
        narr = _string(p, lineno, meta, "narrative", required=False)
        topics.append(Topic(topic_id, text, desc, narr))
    if not topics:
        raise empty_file_error(path, "query")
    return topics


def read_qrels_tsv(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a BEIR ``qrels/*.tsv`` file (header required).

    Returns:
        topic_id -> doc_id -> grade, in file order; an identical repeated
        line is accepted once.

    Raises:
        InputFormatError: a missing or different header, a wrong column
            count, a non-integer score, a pair given two grades, or no data lines.
    """
    p = str(path)
    qrels: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    header_seen = False
    for lineno, cols in iter_columns(path):
        if not header_seen:
            if tuple(cols) != QRELS_HEADER:
                raise InputFormatError(
                    p, lineno,
                    f"expected the header 'query-id<TAB>corpus-id<TAB>score', found {shown(' '.join(cols))}. "
                    "Add the header line (BEIR qrels files start with it).",
                )
            header_seen = True
            continue
        if len(cols) != 3:
            raise InputFormatError(
                p, lineno, f"expected 3 columns (query-id corpus-id score), found {len(cols)}. Write one judgment per line."
            )
        topic, doc, score = cols
        if not _INT.fullmatch(score):
            raise InputFormatError(
                p, lineno,
                f"expected an integer score in column 3, found {shown_id(score)}. Write grades as whole numbers such as 0, 1, 2.",
            )
        grade = check_grade(p, lineno, score, 3)
        add_grade(qrels, first, p, lineno, topic, doc, grade)
    if not qrels:
        raise empty_file_error(path, "qrels")
    return qrels


def scan_qrels_tsv_ids(path: str | Path) -> Iterator[tuple[int, str, str]]:
    """(line, topic_id, doc_id) of each data line of an already validated BEIR qrels file."""
    lines = iter_columns(path)
    next(lines, None)  # header
    for lineno, cols in lines:
        if len(cols) == 3:
            yield lineno, cols[0], cols[1]


def write_corpus(
    path: str | Path, documents: Iterable[Document], metadata: Mapping[str, Mapping[str, Any]] | None = None
) -> int:
    """Write ``corpus.jsonl`` atomically, one document per line in the given order.

    Args:
        path: the target file.
        documents: the documents.
        metadata: optional doc_id -> extra fields, written as the ``metadata`` object.

    Returns:
        The number of documents written.
    """
    n = 0
    with atomic_write(path) as f:
        for d in documents:
            obj: dict[str, Any] = {"_id": d.doc_id, "title": d.title, "text": d.text}
            if metadata and d.doc_id in metadata:
                obj["metadata"] = dict(metadata[d.doc_id])
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")
            n += 1
    return n


def write_queries(
    path: str | Path, topics: Iterable[Topic], metadata: Mapping[str, Mapping[str, Any]] | None = None
) -> int:
    """Write ``queries.jsonl`` atomically (title as ``text``; description/narrative in ``metadata``).

    Args:
        path: the target file.
        topics: the topics, in the given order.
        metadata: optional topic_id -> extra metadata fields.

    Returns:
        The number of topics written.
    """
    n = 0
    with atomic_write(path) as f:
        for t in topics:
            meta: dict[str, Any] = {}
            if t.description:
                meta["description"] = t.description
            if t.narrative:
                meta["narrative"] = t.narrative
            if metadata and t.topic_id in metadata:
                meta.update(metadata[t.topic_id])
            obj: dict[str, Any] = {"_id": t.topic_id, "text": t.title}
            if meta:
                obj["metadata"] = meta
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")
            n += 1
    return n
