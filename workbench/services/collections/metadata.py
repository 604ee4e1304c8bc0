"""Metadata services: import side files into a collection, describe what the store holds.

* ``import_topic_metadata``: a ``topic_id`` + columns side file (CSV, TSV, JSON
  lines, Parquet; ``formats.metadata``) into the collection's topic metadata
  (``store.metadata.set_topic_metadata``: a changed value needs ``replace``).
* ``import_document_metadata``: a ``doc_id`` + columns side file into a **new
  collection version**: the latest version's documents and metadata, with the
  file's keys set for the file's documents (other keys kept). Document metadata
  is part of the version's content hash, so an unchanged file is a no-op and a
  changed one never alters the version runs were produced over.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import InputFormatError
from workbench.formats.metadata import id_line, read_metadata_file
from workbench.formats.trec import shown_id

if TYPE_CHECKING:
    from workbench.store.collections import Collections, IngestReport
    from workbench.store.metadata import Metadata, TopicMetadataReport


def import_topic_metadata(
    collections: Collections, metadata: Metadata, collection: str, path: str | Path, *, replace: bool = False
) -> TopicMetadataReport:
    """Set topic metadata from a side file (one transaction).

    Args:
        collections: the store's collections.
        metadata: the store's metadata.
        collection: an existing collection.
        path: ``.csv``/``.tsv``/``.jsonl``/``.parquet`` with a ``topic_id`` column.
        replace: allow changing stored values (old ones kept in the history).

    Returns:
        The ``TopicMetadataReport``.

    Raises:
        InputFormatError: a malformed file, a topic id that is not a topic of the collection,
            or a ``filter`` value that does not parse or names a key no document has (file:line).
        UnknownNameError: unknown collection.
        ValidationError: a changed value without ``replace``.
    """
    p = Path(path)
    table = read_metadata_file(p, "topic_id")
    known = set(collections.get_topics(collection))
    unknown = [t for t in table if t not in known]
    if unknown:
        raise InputFormatError(
            str(p), id_line(p, "topic_id", unknown[0]), f"expected topic ids of collection {collection!r}, found "
            f"{shown_id(unknown[0])} ({len(unknown):,} of {len(table):,} unknown). Check the topic numbering.")
    from workbench.services.vectors.eligibility import check_filter_file

    check_filter_file(collections, metadata, collection, table, p)
    return metadata.set_topic_metadata(collection, table, source=p.as_posix(), replace=replace)


def import_document_metadata(
    collections: Collections, metadata: Metadata, collection: str, path: str | Path,
) -> IngestReport:
    """Make a new collection version whose documents carry the side file's metadata.

    The new version has the latest version's documents and metadata, with each
    key of the file set (replaced) for the file's documents; keys the file does
    not name are kept. An empty cell (CSV/TSV) or ``null`` (JSON) leaves a key as it was.

    Args:
        collections: the store's collections.
        metadata: the store's metadata.
        collection: an existing collection.
        path: ``.csv``/``.tsv``/``.jsonl``/``.parquet`` with a ``doc_id`` column.

    Returns:
        The ``IngestReport`` (status ``unchanged`` when nothing differs, else
        ``new_version`` with the parent and the count of changed documents).

    Raises:
        InputFormatError: a malformed file, or a doc id that is not in the latest version.
        UnknownNameError: unknown collection.
    """
    p = Path(path)
    table = read_metadata_file(p, "doc_id")
    docs = collections.get_documents(collection)
    unknown = [d for d in table if d not in docs]
    if unknown:
        raise InputFormatError(
            str(p), id_line(p, "doc_id", unknown[0]), f"expected doc ids of collection {collection!r}, found "
            f"{shown_id(unknown[0])} ({len(unknown):,} of {len(table):,} unknown). Check the ids' case and prefix.")
    meta = {d: dict(m) for d, m in metadata.document_metadata(collection).items()}
    for doc_id, values in table.items():
        meta.setdefault(doc_id, {}).update(values)
    return collections.ingest_collection(collection, list(docs.values()), [], source=p.as_posix(), metadata=meta)
