"""The store's collections (``store.collections``): versioned ingestion, documents and topics.

A *collection* is a name; its documents live in immutable *collection
versions*. The version id is a content hash::

    text_hash(d)       = sha256(title + "\\x1f" + text)                  (hex)
    collection_version = sha256("".join(line(d) for doc_id sorted by str))  (hex)
    line(d)            = f"{doc_id}\\t{text_hash}\\n"                  (no metadata)
                       | f"{doc_id}\\t{text_hash}\\t{metadata_hash}\\n"   (with metadata)

``metadata_hash`` is ``workbench.metadata.metadata_hash`` of the document's
metadata; a document without metadata keeps the original line, so a
collection without metadata has the same version it always had, and adding,
changing or removing one value of one document makes a new version.

so re-importing the same corpus is a no-op ("unchanged"), and a changed
corpus becomes a new version whose ``parent_version`` is the previous latest
one; nothing is overwritten. Texts are stored once in ``document_texts``
(deduplicated by hash, across versions and collections).

Topics belong to the collection (not to a version). Re-importing an
identical topic is a no-op; a *changed* text for an existing topic id is an
error naming the topic (never a silent overwrite); new topic ids are added.

Every ingest is one transaction; bulk rows go through registered Arrow
tables, not ``executemany`` (DuckDB's documented fast path).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from workbench.errors import DuplicateNameError, UnknownNameError, ValidationError
from workbench.ranking import natural_key
from workbench.store.collection_rows import (
    count,
    cut_id,
    latest_version,
    missing_ids,
    require_collection,
    shown_id,
)
from workbench.store.core import Gateway
from workbench.types import Document, Topic

if TYPE_CHECKING:
    from workbench.metadata import MetaValue
    from workbench.scoring.units import ChunkMap
    from workbench.store.metadata import TopicMetadataReport
    from workbench.store.units import ChunkSource

IngestStatus = Literal["created", "new_version", "unchanged"]


COLLECTION_NAME = re.compile(r"(?!-)[A-Za-z0-9_.-]{1,64}")
COLLECTION_NAME_RULE = "1 to 64 characters, each a letter, digit, '_', '.' or '-', not starting with '-'"
"""A collection name prefixes its pool and qrels version names, so it cannot start with '-' either
(``workbench.text.check_stored_name``)."""
def check_collection_name(name: str) -> str:
    """``name`` if it is a valid collection name (it prefixes pool and qrels version names).

    Raises:
        ValidationError: naming the value and the rule.
    """
    if not COLLECTION_NAME.fullmatch(name):
        raise ValidationError(
            f"expected a collection name of {COLLECTION_NAME_RULE}, found {shown_id(name)}. "
            "Choose another name (e.g. with --name my_coll)."
        )
    return name


def _bad_id(value: str) -> bool:
    return not value or any(c.isspace() for c in value)


def text_hash(title: str, text: str) -> str:
    """sha256 hex of ``title + "\\x1f" + text`` (the unit of text deduplication)."""
    return hashlib.sha256(f"{title}\x1f{text}".encode()).hexdigest()


def collection_version_of(
    doc_hashes: Iterable[tuple[str, str]],
    metadata: Mapping[str, Mapping[str, MetaValue]] | None = None,
    chunk_map: ChunkMap | None = None,
) -> str:
    """The content hash of a collection version.

    Args:
        doc_hashes: (doc_id, text_hash) pairs, any order, doc ids unique.
        metadata: doc_id -> key -> value (documents absent or with an empty
            mapping have no metadata).
        chunk_map: for a chunk collection, its chunk map (``scoring.units``):
            each chunk's line ends with ``f"\\tchunk={doc_id}:{start}:{end}"``,
            so a changed mapping is a new version; None (any collection that is
            not chunked) adds nothing.

    Returns:
        sha256 hex over one line per document, sorted by doc_id (string order):
        ``f"{doc_id}\\t{text_hash}\\n"``, or, for a document with metadata,
        ``f"{doc_id}\\t{text_hash}\\t{metadata_hash(meta)}\\n"``. Without any
        metadata this is the hash collections always had.
    """
    from workbench.metadata import metadata_hash

    meta = metadata or {}
    spans = chunk_map.spans if chunk_map is not None else {}
    h = hashlib.sha256()
    for doc_id, th in sorted(doc_hashes):
        m = meta.get(doc_id)
        line = f"{doc_id}\t{th}\t{metadata_hash(m)}" if m else f"{doc_id}\t{th}"
        c = spans.get(doc_id)
        if c is not None:
            line += f"\tchunk={c.doc_id}:{c.start}:{c.end}"
        h.update(f"{line}\n".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class IngestReport:
    """What ``ingest_collection`` did.

    Attributes:
        collection: the collection name.
        status: ``created`` (first version), ``new_version`` (content changed;
            ``parent_version`` is the previous latest) or ``unchanged``.
        collection_version: the version the collection now points at.
        parent_version: the previous latest version ("" when none).
        n_documents: documents in ``collection_version``.
        n_new_texts: texts added to ``document_texts`` (0 when unchanged).
        n_docs_added / n_docs_removed / n_docs_changed: differences from the
            parent version (all 0 when created or unchanged).
        topics_created: topic ids added by this ingest.
        n_topics_unchanged: topics already present with the same text.
        n_topics: topics of the collection after the ingest.
        n_docs_with_metadata: documents of ``collection_version`` with metadata.
        metadata_keys: the document metadata keys of ``collection_version``, sorted.
        n_docs_metadata_changed: documents of both versions whose metadata
            differs from the parent's (0 when created or unchanged).
        topic_metadata: what was done with topic metadata (None when none was given).
    """

    collection: str
    status: IngestStatus
    collection_version: str
    parent_version: str
    n_documents: int
    n_new_texts: int
    n_docs_added: int
    n_docs_removed: int
    n_docs_changed: int
    topics_created: tuple[str, ...]
    n_topics_unchanged: int
    n_topics: int
    n_docs_with_metadata: int = 0
    metadata_keys: tuple[str, ...] = ()
    n_docs_metadata_changed: int = 0
    topic_metadata: TopicMetadataReport | None = None

    @property
    def changed(self) -> bool:
        """True when anything (documents, topics or topic metadata) was written."""
        return (self.status != "unchanged" or bool(self.topics_created)
                or bool(self.topic_metadata and self.topic_metadata.changed))


class DocumentPresence(NamedTuple):
    """``Collections.document_presence``: what a collection version holds of some doc_ids.

    Attributes:
        absent: not in the version.
        empty: in it with neither title nor text.
        title_only: in it with a title and no text (CACM's documents without an abstract).
    """

    absent: set[str]
    empty: set[str]
    title_only: set[str]


@dataclass(frozen=True)
class CollectionVersionInfo:
    """One version of a collection (``collection_versions`` row)."""

    collection_version: str
    collection: str
    parent_version: str
    n_documents: int
    source: str
    created_at: datetime


@dataclass(frozen=True)
class CollectionInfo:
    """A collection with its latest version.

    Attributes:
        collection: the name.
        description: free text given at first ingest.
        latest_version: the current collection version.
        n_versions: number of versions ever ingested.
        n_documents: documents in the latest version.
        n_topics: topics of the collection.
        created_at: when the collection was first ingested.
    """

    collection: str
    description: str
    latest_version: str
    n_versions: int
    n_documents: int
    n_topics: int
    created_at: datetime


def _metadata_changes(
    old: Mapping[str, Mapping[str, MetaValue]], new: Mapping[str, Mapping[str, MetaValue]], common: set[str]
) -> int:
    """Documents of ``common`` whose metadata differs between two versions."""
    from workbench.metadata import metadata_hash

    def h(table: Mapping[str, Mapping[str, MetaValue]], d: str) -> str:
        m = table.get(d)
        return metadata_hash(m) if m else ""

    return sum(1 for d in common if h(old, d) != h(new, d))


@dataclass(frozen=True)
class _Corpus:
    """An ingest's documents and topics, checked, with the version's content hash (no store read yet)."""

    doc_ids: list[str]
    hashes: list[str]
    texts: dict[str, tuple[str, str]]
    topics: list[Topic]
    doc_meta: dict[str, dict[str, MetaValue]]
    version: str


@dataclass(frozen=True)
class _Written:
    """What ``_write_version`` found and wrote."""

    status: IngestStatus
    parent: str
    n_new_texts: int = 0
    added: int = 0
    removed: int = 0
    changed: int = 0
    meta_changed: int = 0


def _read_corpus(
    name: str,
    documents: Iterable[Document],
    topics: Iterable[Topic],
    metadata: Mapping[str, Mapping[str, object]] | None,
    chunk_map: ChunkMap | None,
) -> _Corpus:
    """Check an ingest's name, ids, metadata and chunk map before any store access, and hash its version.

    Raises:
        ValidationError: as ``Collections.ingest_collection`` says.
    """
    from workbench.metadata import check_metadata

    check_collection_name(name)
    doc_ids: list[str] = []
    hashes: list[str] = []
    texts: dict[str, tuple[str, str]] = {}
    seen: set[str] = set()
    for d in documents:
        if _bad_id(d.doc_id):
            raise ValidationError(
                f"collection {name!r}: expected non-empty doc ids without whitespace, found {shown_id(d.doc_id)}; "
                "TREC formats cannot carry such ids"
            )
        if d.doc_id in seen:
            raise ValidationError(f"collection {name!r}: expected each doc id once, found {shown_id(d.doc_id)} twice")
        seen.add(d.doc_id)
        th = text_hash(d.title, d.text)
        doc_ids.append(d.doc_id)
        hashes.append(th)
        texts.setdefault(th, (d.title, d.text))
    if not doc_ids:
        raise ValidationError(f"collection {name!r}: expected at least one document, found none")
    topic_list = list(topics)
    seen_topics: set[str] = set()
    for t in topic_list:
        if _bad_id(t.topic_id):
            raise ValidationError(
                f"collection {name!r}: expected non-empty topic ids without whitespace, found {shown_id(t.topic_id)}; "
                "TREC formats cannot carry such ids"
            )
        if t.topic_id in seen_topics:
            raise ValidationError(f"collection {name!r}: expected each topic id once, found {shown_id(t.topic_id)} twice")
        seen_topics.add(t.topic_id)
    doc_meta: dict[str, dict[str, MetaValue]] = {}
    for doc_id, meta in (metadata or {}).items():
        if doc_id not in seen:
            raise ValidationError(
                f"collection {name!r}: metadata is given for doc id {shown_id(doc_id)}, which is not in the corpus; "
                "check the ids of the metadata file")
        try:
            checked = check_metadata(meta)
        except ValidationError as e:
            raise ValidationError(f"collection {name!r}: document {shown_id(doc_id)}: {e}") from None
        if checked:
            doc_meta[doc_id] = checked
    if chunk_map is not None:
        from workbench.store.units import check_chunk_map_covers

        check_chunk_map_covers(name, chunk_map, seen)
    version = collection_version_of(zip(doc_ids, hashes, strict=True), doc_meta, chunk_map)
    return _Corpus(doc_ids, hashes, texts, topic_list, doc_meta, version)


def _write_version(cur: Any, name: str, corpus: _Corpus, *, source: str, description: str,
                   chunk_map: ChunkMap | None, chunk_source: ChunkSource | None) -> _Written:
    """Inside the ingest's transaction: the collection and, unless its latest version has this
    content already, the new version (texts, documents, metadata, chunk map) with its
    differences from the parent.

    Raises:
        DuplicateNameError: the content is another collection's version.
        ValidationError: the content is an older version of this collection.
    """
    exists = cur.execute("SELECT 1 FROM collections WHERE collection = ?", [name]).fetchall()
    parent = latest_version(cur, name) if exists else ""
    version = corpus.version
    owner = [r[0] for r in cur.execute(
        "SELECT collection FROM collection_versions WHERE collection_version = ?", [version]
    ).fetchall()]
    if owner and owner[0] != name:
        raise DuplicateNameError(
            f"these {len(corpus.doc_ids)} documents are already collection {owner[0]!r} (version {version[:12]}); "
            f"use that collection instead of creating {name!r}"
        )
    if owner and version != parent:
        raise ValidationError(
            f"collection {name!r}: this corpus is identical to its older version {version[:12]}, "
            f"but the latest version is {parent[:12]}; reverting to an older version is not supported"
        )
    if owner:
        return _Written("unchanged", parent)
    if not exists:
        cur.execute("INSERT INTO collections (collection, description) VALUES (?, ?)", [name, description])
    written = _insert_documents(cur, corpus, parent, chunk_map=chunk_map, chunk_source=chunk_source)
    cur.execute(
        "INSERT INTO collection_versions (collection_version, collection, parent_version, n_documents, source) "
        "VALUES (?, ?, ?, ?, ?)",
        [version, name, parent or None, len(corpus.doc_ids), source],
    )
    return written


def _insert_documents(cur: Any, corpus: _Corpus, parent: str, *, chunk_map: ChunkMap | None,
                      chunk_source: ChunkSource | None) -> _Written:
    """Insert a new version's texts (those not stored yet), documents, metadata and chunk map, and
    count its differences from ``parent`` ("" = none). Inside the ingest's transaction."""
    import pyarrow as pa

    from workbench.store.metadata import insert_document_metadata, read_document_metadata

    version = corpus.version
    texts_table = pa.table({
        "text_hash": list(corpus.texts),
        "title": [v[0] for v in corpus.texts.values()],
        "text": [v[1] for v in corpus.texts.values()],
    })
    docs_table = pa.table({"doc_id": corpus.doc_ids, "text_hash": corpus.hashes})
    added = removed = changed = meta_changed = 0
    cur.register("wb_new_texts", texts_table)
    cur.register("wb_new_docs", docs_table)
    try:
        n_new_texts = count(cur, (
            "SELECT count(*) FROM wb_new_texts n "
            "WHERE NOT EXISTS (SELECT 1 FROM document_texts t WHERE t.text_hash = n.text_hash)"
        ))
        cur.execute(
            "INSERT INTO document_texts SELECT n.text_hash, n.title, n.text FROM wb_new_texts n "
            "WHERE NOT EXISTS (SELECT 1 FROM document_texts t WHERE t.text_hash = n.text_hash)"
        )
        cur.execute("INSERT INTO version_documents SELECT ?, doc_id, text_hash FROM wb_new_docs", [version])
        insert_document_metadata(cur, version, corpus.doc_meta)
        if chunk_map is not None:
            from workbench.store.units import insert_chunk_map

            insert_chunk_map(cur, version, chunk_map, chunk_source)
        if parent:
            row = cur.execute(
                """SELECT
                     count(*) FILTER (WHERE o.doc_id IS NULL),
                     count(*) FILTER (WHERE n.doc_id IS NULL),
                     count(*) FILTER (WHERE n.doc_id IS NOT NULL AND o.doc_id IS NOT NULL
                                      AND n.text_hash <> o.text_hash)
                   FROM wb_new_docs n
                   FULL OUTER JOIN (SELECT doc_id, text_hash FROM version_documents
                                    WHERE collection_version = ?) o
                   ON n.doc_id = o.doc_id""",
                [parent],
            ).fetchall()[0]
            added, removed, changed = (int(x) for x in row)
            parent_docs = {r[0] for r in cur.execute(
                "SELECT doc_id FROM version_documents WHERE collection_version = ?", [parent]).fetchall()}
            meta_changed = _metadata_changes(read_document_metadata(cur, parent), corpus.doc_meta,
                                             parent_docs & set(corpus.doc_ids))
    finally:
        cur.unregister("wb_new_texts")
        cur.unregister("wb_new_docs")
    status: IngestStatus = "new_version" if parent else "created"
    return _Written(status, parent, n_new_texts, added, removed, changed, meta_changed)


def _add_topics(cur: Any, name: str, topics: list[Topic], source: str) -> tuple[list[str], int]:
    """Insert new topics; skip identical ones; refuse changed ones. Inside a transaction."""
    import pyarrow as pa

    existing = {
        r[0]: (r[1], r[2], r[3])
        for r in cur.execute(
            "SELECT topic_id, title, description, narrative FROM topics WHERE collection = ?", [name]
        ).fetchall()
    }
    new: list[Topic] = []
    same = 0
    for t in topics:
        old = existing.get(t.topic_id)
        if old is None:
            new.append(t)
        elif old == (t.title, t.description, t.narrative):
            same += 1
        else:
            fields = [f for f, a, b in zip(("title", "description", "narrative"), old, (t.title, t.description, t.narrative), strict=True) if a != b]
            raise ValidationError(
                f"collection {name!r}: topic {shown_id(t.topic_id)} is already stored with a different {' and '.join(fields)} "
                f"(stored title {shown_id(old[0])}, new {shown_id(t.title)}); topics are not overwritten. "
                "Use a new topic id or a new collection name."
            )
    if new:
        table = pa.table({
            "topic_id": [t.topic_id for t in new],
            "title": [t.title for t in new],
            "description": [t.description for t in new],
            "narrative": [t.narrative for t in new],
        })
        cur.register("wb_new_topics", table)
        try:
            cur.execute(
                "INSERT INTO topics (collection, topic_id, title, description, narrative, source) "
                "SELECT ?, topic_id, title, description, narrative, ? FROM wb_new_topics",
                [name, source],
            )
        finally:
            cur.unregister("wb_new_topics")
    return [t.topic_id for t in new], same


class Collections:
    """Collections: versioned ingestion, documents, topics and document-id checks (``store.collections``).

    Every multi-row change is one transaction.

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    # -- writing ----------------------------------------------------------------

    def ingest_collection(
        self,
        name: str,
        documents: Iterable[Document],
        topics: Iterable[Topic],
        *,
        source: str = "",
        description: str = "",
        metadata: Mapping[str, Mapping[str, object]] | None = None,
        topic_metadata: Mapping[str, Mapping[str, object]] | None = None,
        replace_topic_metadata: bool = False,
        chunk_map: ChunkMap | None = None,
        chunk_source: ChunkSource | None = None,
    ) -> IngestReport:
        """Import (or re-import) a collection's documents, their metadata and topics, versioned.

        Args:
            name: the collection name: 1 to 64 characters, each a letter,
                digit, ``_``, ``.`` or ``-`` (it prefixes pool and qrels names).
            documents: the full corpus of this version (not a delta). Doc ids
                must be unique and non-empty.
            topics: topics to add; existing identical topics are skipped.
            source: where the data came from (path), recorded on a new version.
            description: recorded when the collection is first created.
            metadata: doc_id -> key -> value, the document metadata of this
                version (part of its content hash; ``workbench.metadata`` rules).
            topic_metadata: topic_id -> key -> value, added to the collection's
                topic metadata (``set_topic_metadata`` rules) in the same transaction.
            replace_topic_metadata: allow ``topic_metadata`` to change stored values.
            chunk_map: for a chunk collection, the map of every one of its
                documents (chunks) to a source document and offsets; part of the
                version's content hash and stored with it (``store.units``).
            chunk_source: how the chunks were made (source collection, unit,
                size, overlap); stored with a new version.

        Returns:
            An ``IngestReport`` (status ``created``, ``new_version`` or ``unchanged``).

        Raises:
            ValidationError: a bad name, no documents, an empty, repeated or
                whitespace-holding doc id or topic id, a changed text for an existing topic, a
                corpus identical to an *older* version of the collection, metadata for a
                document that is not in the corpus, a bad metadata key or value, or a changed
                topic metadata value without ``replace_topic_metadata``.
            DuplicateNameError: the same content is already another collection's version.

        Example:
            >>> store.ingest_collection("toy", [Document("d1", "", "x")], []).status  # doctest: +SKIP
            'created'
        """
        from workbench.store.metadata import set_topic_metadata_in

        corpus = _read_corpus(name, documents, topics, metadata, chunk_map)
        with self._gateway.transaction(f"ingest collection {name}") as cur:
            written = _write_version(cur, name, corpus, source=source, description=description,
                                     chunk_map=chunk_map, chunk_source=chunk_source)
            created, n_same = _add_topics(cur, name, corpus.topics, source)
            n_topics = count(cur, "SELECT count(*) FROM topics WHERE collection = ?", [name])
            topic_report = (set_topic_metadata_in(cur, name, topic_metadata, source=source,
                                                  replace=replace_topic_metadata)
                            if topic_metadata else None)
        return IngestReport(
            collection=name, status=written.status, collection_version=corpus.version, parent_version=written.parent,
            n_documents=len(corpus.doc_ids), n_new_texts=written.n_new_texts, n_docs_added=written.added,
            n_docs_removed=written.removed, n_docs_changed=written.changed, topics_created=tuple(created),
            n_topics_unchanged=n_same, n_topics=n_topics, n_docs_with_metadata=len(corpus.doc_meta),
            metadata_keys=tuple(sorted({k for m in corpus.doc_meta.values() for k in m})),
            n_docs_metadata_changed=written.meta_changed, topic_metadata=topic_report,
        )

    # -- reading ------------------------------------------------------------------

    def _resolve_version(self, cur: Any, name: str, version: str | None) -> str:
        require_collection(cur, name)
        if version is None:
            return latest_version(cur, name)
        known = [
            r[0] for r in cur.execute(
                "SELECT collection_version FROM collection_versions WHERE collection = ?", [name]
            ).fetchall()
        ]
        matches = [v for v in known if v.startswith(version)] if version else []
        if len(matches) != 1:
            raise UnknownNameError(f"version of collection {name!r}", version, known)
        return str(matches[0])

    def latest_collection_version(self, name: str) -> str:
        """The current version (content hash) of a collection.

        Raises:
            UnknownNameError: no such collection (the message lists the known ones).
        """
        with self._gateway.connection("read collection version") as cur:
            require_collection(cur, name)
            return latest_version(cur, name)

    def collection_versions(self, name: str) -> list[CollectionVersionInfo]:
        """All versions of a collection, oldest first (following ``parent_version``).

        Raises:
            UnknownNameError: no such collection.
        """
        with self._gateway.connection("read collection versions") as cur:
            require_collection(cur, name)
            rows = cur.execute(
                "SELECT collection_version, collection, coalesce(parent_version, ''), n_documents, source, created_at "
                "FROM collection_versions WHERE collection = ? ORDER BY created_at, collection_version",
                [name],
            ).fetchall()
        return [CollectionVersionInfo(*r) for r in rows]

    def get_documents(self, name: str, version: str | None = None) -> dict[str, Document]:
        """All documents of a collection version.

        Args:
            name: the collection.
            version: a collection version (or a unique prefix of one); None
                means the latest.

        Returns:
            doc_id -> Document, in doc_id string order.

        Raises:
            UnknownNameError: unknown collection or version.
        """
        with self._gateway.connection("read documents") as cur:
            v = self._resolve_version(cur, name, version)
            rows = cur.execute(
                """SELECT vd.doc_id, t.title, t.text FROM version_documents vd
                   JOIN document_texts t USING (text_hash)
                   WHERE vd.collection_version = ? ORDER BY vd.doc_id""",
                [v],
            ).fetchall()
        return {i: Document(i, ti, tx) for i, ti, tx in rows}

    def get_document(self, name: str, doc_id: str, version: str | None = None) -> Document:
        """One document of a collection version (latest when ``version`` is None).

        Raises:
            UnknownNameError: unknown collection, version or doc id.
        """
        with self._gateway.connection("read document") as cur:
            v = self._resolve_version(cur, name, version)
            rows = cur.execute(
                """SELECT t.title, t.text FROM version_documents vd JOIN document_texts t USING (text_hash)
                   WHERE vd.collection_version = ? AND vd.doc_id = ?""",
                [v, doc_id],
            ).fetchall()
            if not rows:
                sample = [r[0] for r in cur.execute(
                    "SELECT doc_id FROM version_documents WHERE collection_version = ? ORDER BY doc_id LIMIT 31", [v]
                ).fetchall()]
                raise UnknownNameError(f"document of collection {name!r}", cut_id(doc_id), sample)
        return Document(doc_id, rows[0][0], rows[0][1])

    def get_topics(self, name: str) -> dict[str, Topic]:
        """The topics of a collection.

        Returns:
            topic_id -> Topic, in natural id order (numeric ids by value).

        Raises:
            UnknownNameError: no such collection.
        """
        with self._gateway.connection("read topics") as cur:
            require_collection(cur, name)
            rows = cur.execute(
                "SELECT topic_id, title, description, narrative FROM topics WHERE collection = ?", [name]
            ).fetchall()
        rows.sort(key=lambda r: natural_key(r[0]))
        return {r[0]: Topic(r[0], r[1], r[2], r[3]) for r in rows}

    def missing_doc_ids(self, name: str, doc_ids: Iterable[str], version: str | None = None) -> set[str]:
        """The given doc ids that are not in a collection version (latest when None).

        Raises:
            UnknownNameError: unknown collection or version.
        """
        with self._gateway.connection("check doc ids") as cur:
            v = self._resolve_version(cur, name, version)
            return missing_ids(cur, v, doc_ids)

    def list_collections(self) -> list[CollectionInfo]:
        """Every collection with its latest version and counts, by name."""
        with self._gateway.connection("list collections") as cur:
            rows = cur.execute(
                "SELECT collection, description, created_at FROM collections ORDER BY collection"
            ).fetchall()
            out = []
            for name, desc, created in rows:
                latest = latest_version(cur, name)
                n_versions = count(cur, "SELECT count(*) FROM collection_versions WHERE collection = ?", [name])
                n_docs = count(
                    cur, "SELECT n_documents FROM collection_versions WHERE collection_version = ?", [latest]
                )
                n_topics = count(cur, "SELECT count(*) FROM topics WHERE collection = ?", [name])
                out.append(CollectionInfo(name, desc, latest, n_versions, n_docs, n_topics, created))
        return out

    # -- document ids and texts ----------------------------------------------------------

    def version_doc_ids(self, collection_version: str) -> list[str]:
        """Every doc id of a collection version (for near-miss detection), in no particular order.

        Raises:
            UnknownNameError: no such version.
        """
        with self._gateway.connection("read doc ids") as cur:
            if not cur.execute("SELECT 1 FROM collection_versions WHERE collection_version = ?",
                               [collection_version]).fetchall():
                known = [r[0] for r in cur.execute("SELECT collection_version FROM collection_versions").fetchall()]
                raise UnknownNameError("collection version", collection_version, known)
            return [r[0] for r in cur.execute(
                "SELECT doc_id FROM version_documents WHERE collection_version = ?", [collection_version]).fetchall()]

    def documents_by_id(self, collection: str, collection_version: str, doc_ids: Iterable[str]) -> dict[str, Document]:
        """The given documents of a collection version (ids it lacks are absent from the result).

        Raises:
            UnknownNameError: the version is not a version of ``collection``.
        """
        import pyarrow as pa

        from workbench.errors import UnknownNameError

        ids = pa.table({"doc_id": pa.array(sorted(set(doc_ids)), pa.string())})
        with self._gateway.connection("read documents") as cur:
            known = [r[0] for r in cur.execute(
                "SELECT collection_version FROM collection_versions WHERE collection = ?", [collection]).fetchall()]
            if collection_version not in known:
                raise UnknownNameError(f"version of collection {collection!r}", collection_version, known)
            cur.register("wb_miss_ids", ids)
            try:
                rows = cur.execute(
                    """SELECT vd.doc_id, t.title, t.text FROM wb_miss_ids i
                       JOIN version_documents vd ON vd.doc_id = i.doc_id AND vd.collection_version = ?
                       JOIN document_texts t USING (text_hash)""", [collection_version]).fetchall()
            finally:
                cur.unregister("wb_miss_ids")
        return {i: Document(i, ti, tx) for i, ti, tx in rows}

    def document_presence(self, collection_version: str, doc_ids: Iterable[str]) -> DocumentPresence:
        """Which of ``doc_ids`` a collection version lacks, holds with no text, or holds with a title only.

        Returns:
            ``DocumentPresence`` (absent, empty, title_only): doc_ids not in the version; in it with title and
            text both empty (blank after trimming); in it with a title and an empty text.
        """
        import pyarrow as pa

        wanted = sorted(set(doc_ids))
        if not wanted:
            return DocumentPresence(set(), set(), set())
        with self._gateway.connection("check documents") as cur:
            cur.register("wb_presence", pa.table({"doc_id": wanted}))
            try:
                rows = cur.execute(
                    "SELECT w.doc_id, vd.doc_id IS NOT NULL, coalesce(length(trim(t.title)), 0), "
                    "coalesce(length(trim(t.text)), 0) "
                    "FROM wb_presence w LEFT JOIN version_documents vd ON vd.doc_id = w.doc_id "
                    "AND vd.collection_version = ? LEFT JOIN document_texts t USING (text_hash)",
                    [collection_version]).fetchall()
            finally:
                cur.unregister("wb_presence")
        return DocumentPresence({d for d, present, _, _ in rows if not present},
                                {d for d, present, nt, nx in rows if present and nt == 0 and nx == 0},
                                {d for d, present, nt, nx in rows if present and nt > 0 and nx == 0})

    def document_text_hashes(self, collection: str, version: str | None = None) -> dict[str, str]:
        """doc_id -> text_hash of a collection version (latest when None).

        Raises:
            UnknownNameError: unknown collection or version.
        """
        with self._gateway.connection("read text hashes") as cur:
            require_collection(cur, collection)
            v = version or latest_version(cur, collection)
            rows = cur.execute("SELECT doc_id, text_hash FROM version_documents WHERE collection_version = ?",
                               [v]).fetchall()
            if not rows:
                raise UnknownNameError(f"version of collection {collection!r}", v, [])
        return dict(rows)
