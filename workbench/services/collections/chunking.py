"""Chunk collections: ``workbench convert chunk``.

``convert_chunk`` cuts every document of a collection (a collection folder,
or a stored collection by name) into passages (``scoring.units.chunk_document``:
``size`` tokens or characters, ``overlap`` shared by neighbours) and writes a
*chunk collection* folder:

* ``corpus.jsonl``: one line per chunk, ``_id`` = ``<doc_id>#<i>``, the
  document's ``title``, ``text`` = the chunk's text, the document's metadata;
* ``queries.jsonl``: the topics, with their metadata (``no_answer`` included);
* ``chunk_map.tsv``: ``chunk_id doc_id start end`` (character offsets into
  the document's text, ``end`` exclusive);
* ``chunks.meta.json``: source collection and version, unit, size, overlap;
* ``README.md``: what was made and how.

Reference qrels are not copied: they judge *documents*; score a chunk run
against them with ``--unit doc`` (or take them down to chunks explicitly,
see ``services.evaluation.units``).

The folder written here is ingested like any other (``ingest_folder``), which
reads its unit files with ``services.collections.unit_files``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import ValidationError
from workbench.formats import beir
from workbench.formats.io import atomic_write
from workbench.formats.metadata import json_value
from workbench.formats.units import (
    CHUNK_MAP_FILE,
    CHUNK_META_FILE,
    write_chunk_map,
)
from workbench.scoring.units import ChunkMap, ChunkSpan, check_chunking, chunk_document
from workbench.types import Document, Topic

if TYPE_CHECKING:
    from workbench.metadata import MetaValue
    from workbench.store import Store

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ChunkReport:
    """What ``convert_chunk`` wrote.

    Attributes:
        dest: the chunk collection folder.
        name: the chunk collection's name (for ``workbench ingest --name``).
        source: the document collection (folder or stored name) and ``source_version``.
        n_documents: documents chunked.
        n_chunks: chunks written.
        chunk_unit, size, overlap: the chunking.
        max_chunks: most chunks of one document.
        n_single: documents that fit one chunk.
        files: the files written.
    """

    dest: Path
    name: str
    source: str
    source_version: str
    n_documents: int
    n_chunks: int
    chunk_unit: str
    size: int
    overlap: int
    max_chunks: int
    n_single: int
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceCollection:
    """The documents and topics a chunk collection is cut from."""

    name: str
    version: str
    documents: list[Document]
    topics: list[Topic]
    doc_metadata: dict[str, dict[str, MetaValue]] = field(default_factory=dict)
    topic_metadata: dict[str, dict[str, MetaValue]] = field(default_factory=dict)


def load_source(source: str, open_store: Callable[[], Store] | None) -> SourceCollection:
    """A collection folder (path that exists) or a stored collection (``NAME`` or ``NAME@VERSION-PREFIX``).

    Raises:
        InputFormatError: a malformed folder.
        UnknownNameError: neither a folder nor a stored collection.
    """
    from workbench.services.collections.ingest import read_collection_folder
    from workbench.store.collections import collection_version_of, text_hash

    p = Path(source)
    if p.is_dir():
        c = read_collection_folder(p, p.resolve().name)
        version = collection_version_of(((d.doc_id, text_hash(d.title, d.text)) for d in c.documents), c.doc_metadata)
        return SourceCollection(p.resolve().name, version, c.documents, c.topics, c.doc_metadata, c.topic_metadata)
    if open_store is None:
        from workbench.errors import UnknownNameError

        raise UnknownNameError("collection folder or stored collection", source, [])
    store = open_store()
    name, _, prefix = source.partition("@")
    if prefix:
        matches = [x.collection_version for x in store.collections.collection_versions(name)
                   if x.collection_version.startswith(prefix)]
        if len(matches) != 1:
            from workbench.errors import UnknownNameError

            raise UnknownNameError(f"version of collection {name!r}", prefix,
                                   [x.collection_version for x in store.collections.collection_versions(name)])
        version = matches[0]
    else:
        version = store.collections.latest_collection_version(name)
    docs = store.collections.get_documents(name, version)
    return SourceCollection(name, version, list(docs.values()), list(store.collections.get_topics(name).values()),
                            store.metadata.get_document_metadata(name, version), store.metadata.get_topic_metadata(name))


def chunk_collection(src: SourceCollection, *, size: int, overlap: int, unit: str) -> tuple[list[Document], ChunkMap]:
    """The chunk documents (title kept, text = the chunk's text) and the chunk map of a collection.

    Raises:
        ValidationError: a bad chunking, or a generated chunk id that is already a document id.
    """
    check_chunking(size, overlap, unit)
    docs: list[Document] = []
    spans: list[ChunkSpan] = []
    for d in src.documents:
        for c in chunk_document(d.doc_id, d.text, size=size, overlap=overlap, unit=unit):
            docs.append(Document(c.chunk_id, d.title, d.text[c.start:c.end]))
            spans.append(c)
    return docs, ChunkMap.of(spans)


def convert_chunk(
    source: str,
    dest: str | Path,
    *,
    size: int,
    overlap: int = 0,
    unit: str = "tokens",
    name: str = "",
    open_store: Callable[[], Store] | None = None,
    progress: Progress | None = None,
) -> ChunkReport:
    """Write a chunk collection folder (see the module docstring); the destination is replaced atomically.

    Args:
        source: a collection folder, or a stored collection ``NAME[@VERSION-PREFIX]``.
        dest: the output folder (must not exist, or be a chunk collection folder written before).
        size: tokens (or characters) per chunk, >= 1.
        overlap: tokens (or characters) shared by consecutive chunks, 0 .. size - 1.
        unit: ``tokens`` (whitespace-delimited) or ``chars``.
        name: the chunk collection's name (default: the destination's name).
        open_store: the store, for a stored source.
        progress: receives ``[starting]``/``[finished]`` lines.

    Returns:
        A ``ChunkReport``.

    Raises:
        ValidationError: a bad chunking or name, or a destination that is another kind of folder.
        InputFormatError, UnknownNameError: a bad source.
    """
    from workbench.store.collections import check_collection_name

    say = progress or (lambda _m: None)
    check_chunking(size, overlap, unit)
    out = Path(dest)
    name = name or out.resolve().name
    check_collection_name(name)
    if out.exists() and not (out / CHUNK_MAP_FILE).is_file():
        raise ValidationError(f"{out}: expected a new folder (or an earlier chunk collection), found an existing "
                              f"folder without {CHUNK_MAP_FILE}. Choose another --out.")
    say(f"[starting] chunk {source}: {size} {unit}, overlap {overlap}")
    src = load_source(source, open_store)
    docs, cmap = chunk_collection(src, size=size, overlap=overlap, unit=unit)
    per_doc = [len(cmap.chunks_of(d.doc_id)) for d in src.documents]
    chunk_meta = {c.chunk_id: src.doc_metadata[c.doc_id] for c in cmap.spans.values() if src.doc_metadata.get(c.doc_id)}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        beir.write_corpus(tmp / "corpus.jsonl", docs,
                          {i: {k: json_value(v) for k, v in m.items()} for i, m in chunk_meta.items()})
        beir.write_queries(tmp / "queries.jsonl", src.topics,
                           {t: {k: json_value(v) for k, v in m.items()} for t, m in src.topic_metadata.items()})
        write_chunk_map(tmp / CHUNK_MAP_FILE, cmap)
        meta = {"source_collection": src.name, "source_version": src.version, "chunk_unit": unit, "size": size,
                "overlap": overlap, "n_documents": len(src.documents), "n_chunks": len(cmap),
                "offsets": "0-based character offsets into the document's text, end exclusive"}
        with atomic_write(tmp / CHUNK_META_FILE) as f:
            f.write(json.dumps(meta, indent=2) + "\n")
        with atomic_write(tmp / "README.md") as f:
            f.write(_readme(name, src, size, overlap, unit, len(cmap), per_doc))
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    report = ChunkReport(out, name, src.name, src.version, len(src.documents), len(cmap), unit, size, overlap,
                         max(per_doc, default=0), sum(1 for n in per_doc if n == 1),
                         ("corpus.jsonl", "queries.jsonl", CHUNK_MAP_FILE, CHUNK_META_FILE, "README.md"))
    say(f"[finished] chunk {source}: {report.n_chunks:,} chunks of {report.n_documents:,} documents")
    return report


def _readme(name: str, src: SourceCollection, size: int, overlap: int, unit: str, n_chunks: int,
            per_doc: list[int]) -> str:
    mean = n_chunks / len(per_doc) if per_doc else 0.0
    return (
        f"# {name}: {size}-{unit[:-1]} passages of {src.name}\n\n"
        f"Made by `workbench convert chunk {src.name} --size {size} --overlap {overlap} --by {unit} --name {name}` "
        f"from collection version {src.version[:12]}.\n\n"
        f"* {len(per_doc):,} documents -> {n_chunks:,} chunks ({mean:.2f} per document, at most "
        f"{max(per_doc, default=0)}).\n"
        f"* A chunk is {size} {unit} ({'whitespace-delimited tokens' if unit == 'tokens' else 'characters'}); "
        f"consecutive chunks share {overlap}. Chunk ids are `<doc_id>#<i>`.\n"
        f"* `{CHUNK_MAP_FILE}` maps each chunk to its document and character offsets (0-based, end exclusive) "
        "in the document's text; the title is repeated on every chunk and is not part of the offsets.\n"
        "* The reference qrels judge documents: score chunk runs against them with `workbench score RUN "
        f"--qrels {src.name}-reference --unit doc`.\n"
    )
