"""Files of retrieval units: chunk maps, span qrels and duplicate-group files.

All three are UTF-8 text, one record per line, columns separated by tabs or
spaces (``formats.trec`` rules: BOM and CRLF accepted, blank lines and lines
starting with ``#`` skipped). A first line whose columns are exactly the
header below is a header and skipped.

* **Chunk map** ``chunk_map.tsv``: ``chunk_id doc_id start end``; offsets are
  0-based character offsets into the document's text, ``end`` exclusive
  (``workbench.scoring.units``).
* **Span qrels**: ``topic_id doc_id start end [grade]`` (grade default 1).
* **Groups file** ``duplicate_groups.tsv``: ``group_id doc_id``: the documents
  sharing a group id are duplicates, near-duplicates or mirrors of each other.

Every error names the file and line (``InputFormatError``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from workbench.errors import InputFormatError, ValidationError
from workbench.formats.io import atomic_write
from workbench.formats.trec import check_grade, check_id, iter_columns, shown_id
from workbench.scoring.units import ChunkMap, ChunkSpan, Span

CHUNK_MAP_FILE = "chunk_map.tsv"
"""The chunk map's file name in a collection folder (read by ``workbench ingest``)."""
CHUNK_META_FILE = "chunks.meta.json"
"""How a chunk collection was made (source collection and version, unit, size, overlap)."""
GROUPS_FILE = "duplicate_groups.tsv"
"""The groups file's name in a collection folder (read by ``workbench ingest``)."""

CHUNK_MAP_HEADER = ("chunk_id", "doc_id", "start", "end")
SPAN_HEADER = ("topic_id", "doc_id", "start", "end", "grade")
GROUPS_HEADER = ("group_id", "doc_id")


def _rows(path: str | Path, header: tuple[str, ...]) -> Iterable[tuple[int, list[str]]]:
    first = True
    for lineno, cols in iter_columns(path):
        if cols[0].startswith("#"):
            continue
        if first:
            first = False
            if tuple(c.lower() for c in cols) in (header, header[:-1]):
                continue
        yield lineno, cols


def _offset(path: str | Path, lineno: int, token: str, what: str) -> int:
    if not token.isdigit():
        raise InputFormatError(str(path), lineno, f"expected {what} as a character offset (an integer >= 0), found "
                                                  f"{shown_id(token)}.")
    return int(token)


def read_chunk_map(path: str | Path) -> ChunkMap:
    """Read a chunk map file.

    Raises:
        InputFormatError: a line without 4 columns, a bad id or offset,
            ``end < start``, a repeated chunk id, or no line at all (file:line).

    Example (a file ``chunk_id doc_id start end`` / ``d1#0 d1 0 120``) gives a
    map with one chunk of ``d1``.
    """
    spans: list[ChunkSpan] = []
    seen: dict[str, int] = {}
    for lineno, cols in _rows(path, CHUNK_MAP_HEADER):
        if len(cols) != 4:
            raise InputFormatError(str(path), lineno, f"expected 4 columns (chunk_id doc_id start end), found {len(cols)}.")
        cid = check_id(path, lineno, cols[0], "chunk id")
        did = check_id(path, lineno, cols[1], "doc id")
        start, end = _offset(path, lineno, cols[2], "start"), _offset(path, lineno, cols[3], "end")
        if end < start:
            raise InputFormatError(str(path), lineno, f"expected end >= start, found start {start}, end {end}.")
        if cid in seen:
            raise InputFormatError(str(path), lineno, f"chunk id {shown_id(cid)} is already on line {seen[cid]}; "
                                                      "give each chunk once.")
        seen[cid] = lineno
        spans.append(ChunkSpan(cid, did, start, end))
    if not spans:
        raise InputFormatError(str(path), 0, "expected chunk map lines (chunk_id doc_id start end), found none.")
    try:
        return ChunkMap.of(spans)
    except ValidationError as e:  # pragma: no cover - the line checks above catch every rule
        raise InputFormatError(str(path), 0, str(e)) from None


def write_chunk_map(path: str | Path, chunk_map: ChunkMap) -> None:
    """Write a chunk map file (with its header), atomically, chunks in document then offset order."""
    with atomic_write(path) as f:
        f.write("\t".join(CHUNK_MAP_HEADER) + "\n")
        for d in chunk_map.doc_ids:
            for c in chunk_map.chunks_of(d):
                f.write(f"{c.chunk_id}\t{c.doc_id}\t{c.start}\t{c.end}\n")


def read_spans(path: str | Path) -> list[Span]:
    """Read span qrels (``topic_id doc_id start end [grade]``).

    Raises:
        InputFormatError: a line without 4 or 5 columns, a bad id, offset or
            grade, ``end <= start``, or no line at all (file:line).
    """
    out: list[Span] = []
    for lineno, cols in _rows(path, SPAN_HEADER):
        if len(cols) not in (4, 5):
            raise InputFormatError(str(path), lineno,
                                   f"expected 4 or 5 columns (topic_id doc_id start end [grade]), found {len(cols)}.")
        topic = check_id(path, lineno, cols[0], "topic id")
        doc = check_id(path, lineno, cols[1], "doc id")
        start, end = _offset(path, lineno, cols[2], "start"), _offset(path, lineno, cols[3], "end")
        if end <= start:
            raise InputFormatError(str(path), lineno, f"expected end > start (a span of at least one character), "
                                                      f"found start {start}, end {end}.")
        grade = check_grade(path, lineno, cols[4], 5) if len(cols) == 5 else 1
        out.append(Span(topic, doc, start, end, grade))
    if not out:
        raise InputFormatError(str(path), 0, "expected span lines (topic_id doc_id start end [grade]), found none.")
    return out


def read_groups(path: str | Path) -> dict[str, list[str]]:
    """Read a groups file: group_id -> member doc ids, in file order.

    Raises:
        InputFormatError: a line without 2 columns, a bad id, a document in two
            groups, a group of one document, or no line at all (file:line).
    """
    groups, _lines = read_group_lines(path)
    single = [g for g, m in groups.items() if len(m) < 2]
    if single:
        raise InputFormatError(str(path), _lines[groups[single[0]][0]], f"group {shown_id(single[0])} has one "
                                                                        "document; a group needs at least two.")
    return groups


def read_group_lines(path: str | Path) -> tuple[dict[str, list[str]], dict[str, int]]:
    """``read_groups`` without the size check: (group_id -> members, doc_id -> its line).

    For an importer that checks the doc ids against the collection first (an
    unknown id is then named as such, not as a group of one document).

    Raises:
        InputFormatError: as ``read_groups``, except a group of one document.
    """
    groups: dict[str, list[str]] = {}
    where: dict[str, tuple[str, int]] = {}
    for lineno, cols in _rows(path, GROUPS_HEADER):
        if len(cols) != 2:
            raise InputFormatError(str(path), lineno, f"expected 2 columns (group_id doc_id), found {len(cols)}.")
        gid = check_id(path, lineno, cols[0], "group id")
        doc = check_id(path, lineno, cols[1], "doc id")
        if doc in where:
            other, line = where[doc]
            if other == gid:
                continue
            raise InputFormatError(str(path), lineno, f"document {shown_id(doc)} is already in group {shown_id(other)} "
                                                      f"(line {line}); a document belongs to one group. Merge the groups.")
        where[doc] = (gid, lineno)
        groups.setdefault(gid, []).append(doc)
    if not groups:
        raise InputFormatError(str(path), 0, "expected group lines (group_id doc_id), found none.")
    return groups, {doc: line for doc, (_, line) in where.items()}


def write_groups(path: str | Path, groups: Mapping[str, Iterable[str]]) -> None:
    """Write a groups file (with its header), atomically."""
    with atomic_write(path) as f:
        f.write("\t".join(GROUPS_HEADER) + "\n")
        for g, members in groups.items():
            for d in members:
                f.write(f"{g}\t{d}\n")
