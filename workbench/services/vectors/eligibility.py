"""Eligibility services: a collection's topic filters evaluated over a collection version's document metadata.

Used by runs (pre/post filtering), scoring (filtered relevant sets, ineligible
gold, leaks) and anything else that needs to know which documents a topic may
be shown (e.g. a miss-cause classifier: ``collection_eligibility(...).is_eligible(topic, doc)``).
The pure rules are in ``workbench.scoring.filters`` and ``workbench.scoring.eligibility``.

Filters are stored per topic as topic metadata (key ``filter`` by default):
imported with the topics (a BEIR ``queries.jsonl`` ``metadata.filter``, a
``topic_metadata.*`` side file next to the collection) or later from a side
file (``workbench metadata import-topics FILE`` / ``workbench filters import
FILE``, a ``topic_id`` + ``filter`` file); every filter is parsed and its keys
checked against the document metadata before it is stored
(``check_filter_file``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import InputFormatError, ValidationError
from workbench.formats.metadata import id_line
from workbench.metadata import MetaValue
from workbench.scoring.eligibility import (
    DEFAULT_FILTER_KEY,
    Eligibility,
    TopicFilters,
    check_filters,
    eligibility,
    restrict_qrels,
    topic_filters,
)
from workbench.scoring.filters import MetadataColumns

if TYPE_CHECKING:
    from workbench.store import Store
    from workbench.store.collections import Collections
    from workbench.store.metadata import Metadata


def collection_filters(metadata: Metadata, collection: str, key: str = DEFAULT_FILTER_KEY) -> TopicFilters:
    """The topic filters of a collection, parsed (topics without ``key`` are unfiltered).

    Raises:
        UnknownNameError: unknown collection.
        ValidationError: a filter that does not parse (naming the topic and column).
    """
    return topic_filters(metadata.topic_metadata(collection), key)


def metadata_columns(
    collections: Collections, metadata: Metadata, collection: str, version: str | None = None,
) -> MetadataColumns:
    """Every document of a collection version with its metadata, as filter columns (doc ids in string order)."""
    doc_ids = sorted(collections.document_text_hashes(collection, version))
    return MetadataColumns(doc_ids, metadata.document_metadata(collection, version))


def collection_eligibility(
    store: Store,
    collection: str,
    version: str | None = None,
    *,
    key: str = DEFAULT_FILTER_KEY,
    require: bool = False,
) -> Eligibility | None:
    """The eligible documents of every filtered topic over one collection version.

    Args:
        store: the store.
        collection: the collection.
        version: the collection version whose document metadata decides (None = latest).
        key: the topic metadata key holding the filters.
        require: raise when no topic has a filter (instead of returning None).

    Returns:
        The ``Eligibility``, or None when no topic has ``key`` (and not ``require``).

    Raises:
        ValidationError: ``require`` and no topic has a filter; a filter that does not parse.
        UnknownMetadataKeyError: a filter names a key no document of the version has.
    """
    filters = collection_filters(store.metadata, collection, key)
    if not filters:
        if require:
            raise ValidationError(
                f"no topic of collection {collection!r} has a {key!r} metadata value (its eligibility filter); "
                f"set filters with `workbench metadata import-topics FILE --collection {collection}` "
                f"(a topic_id,{key} file), or run without --filter-mode")
        return None
    return eligibility(filters, metadata_columns(store.collections, store.metadata, collection, version))


def check_filter_file(
    collections: Collections, metadata: Metadata,
    collection: str,
    table: Mapping[str, Mapping[str, MetaValue]],
    path: str | Path,
    *,
    key: str = DEFAULT_FILTER_KEY,
) -> int:
    """Refuse a topic side file whose ``key`` column holds a filter that does not parse or names unknown keys.

    Called by ``workbench metadata import-topics`` (and ``filters import``) before
    anything is stored, so a bad filter is reported with its file and line, not
    at the next run or score.

    Args:
        collections: the store's collections.
        metadata: the store's metadata (the collection's latest version's document metadata decides the known
            keys).
        collection: the collection.
        table: topic_id -> key -> value, as read from ``path``.
        path: the side file (for the error's file:line).
        key: the column holding the filters.

    Returns:
        The number of filters checked (0 when the file has no ``key`` column).

    Raises:
        InputFormatError: ``path:line: topic T: filter ...: column C: ...`` (with a
            caret), or the unknown key with the known keys.
    """
    rows = {t: m for t, m in table.items() if key in m}
    if not rows:
        return 0
    p = Path(path)
    columns: MetadataColumns | None = None
    for topic_id, meta in rows.items():
        try:
            parsed = topic_filters({topic_id: meta}, key)
            if columns is None:
                columns = metadata_columns(collections, metadata, collection)
            check_filters(parsed, columns)
        except ValidationError as e:
            raise InputFormatError(str(p), id_line(p, "topic_id", topic_id), f"{e}. Fix the filter (grammar: "
                                   "workbench.scoring.filters; keys: workbench metadata keys --collection "
                                   f"{collection}).") from None
    return len(rows)


@dataclass(frozen=True)
class TopicFilterRow:
    """One filtered topic, as ``workbench filters show`` lists it.

    Attributes:
        topic_id: the topic.
        filter: the filter's canonical text.
        n_eligible: eligible documents of the collection version.
        n_documents: documents of the collection version.
        n_relevant: judged-relevant documents (grade >= rel) in the qrels (-1 without qrels).
        ineligible_gold: judged-relevant documents the filter excludes, doc ids in string order.
    """

    topic_id: str
    filter: str
    n_eligible: int
    n_documents: int
    n_relevant: int = -1
    ineligible_gold: tuple[str, ...] = ()


def filter_rows(
    store: Store,
    collection: str,
    *,
    key: str = DEFAULT_FILTER_KEY,
    version: str | None = None,
    qrels: Mapping[str, Mapping[str, int]] | None = None,
    rel: int = 1,
) -> list[TopicFilterRow]:
    """Every filtered topic with its eligible-document count and, given qrels, its ineligible gold.

    Raises:
        ValidationError: no topic has ``key``; a filter that does not parse.
        UnknownMetadataKeyError: a filter names a key no document has.
    """
    elig = collection_eligibility(store, collection, version, key=key, require=True)
    assert elig is not None  # require=True
    gold = restrict_qrels(qrels, elig, rel=rel).ineligible_gold if qrels is not None else {}
    out = []
    for topic_id, f in elig.filters.filters.items():
        n_rel = -1
        if qrels is not None:
            n_rel = sum(1 for g in qrels.get(topic_id, {}).values() if g >= max(rel, 0))
        out.append(TopicFilterRow(topic_id, f.canonical, elig.n_eligible(topic_id), elig.n_documents, n_rel,
                                  tuple(d for d, _ in gold.get(topic_id, ()))))
    return out
