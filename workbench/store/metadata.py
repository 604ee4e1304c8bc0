"""The store's document and topic metadata (``store.metadata``).

* **Document metadata** (``document_metadata`` table) belongs to one
  collection version, is written with it by ``ingest_collection`` and is part
  of its content hash (``collections.collection_version_of``): changing a value
  makes a new collection version, as changing a text does.
* **Topic metadata** (``topic_metadata``) belongs to the collection's topics.
  A value is never silently overwritten: setting a different value for a
  (topic, key) that has one is an error unless ``replace=True``, and a replaced
  value is kept in ``topic_metadata_history``.

Values are stored as (``value_type``, canonical text) and read back as Python
values (``workbench.metadata``: ``str``, ``int``/``float``, ``datetime.date``,
``bool``).

Reading API (used by slices, eligibility filters, no-answer topics)::

    store.metadata.document_metadata("cranfield")            # {doc_id: {key: value}}
    store.metadata.document_metadata_keys("cranfield")       # {key: MetadataKey}
    store.metadata.topic_metadata("cranfield")               # {topic_id: {key: value}}
    store.metadata.set_topic_metadata("cranfield", {"1": {"priority": "critical"}})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.errors import ValidationError
from workbench.metadata import MetaValue, canonical, check_metadata, parse_canonical, value_type
from workbench.ranking import natural_key
from workbench.store.collection_rows import latest_version, require_collection, shown_id
from workbench.store.core import Gateway

MetadataTable = dict[str, dict[str, MetaValue]]
"""id -> key -> value."""


@dataclass(frozen=True)
class MetadataKey:
    """What one metadata key holds across a collection version's documents (or a collection's topics).

    Attributes:
        key: the key.
        n_values: documents (topics) that have a value for it.
        types: value type -> count (``string``, ``number``, ``date``, ``boolean``).
        n_distinct: distinct values.
        minimum / maximum: smallest and largest canonical value of the key's
            most common type (numbers and dates compare as values), "" when none.
    """

    key: str
    n_values: int
    types: Mapping[str, int]
    n_distinct: int
    minimum: str
    maximum: str


@dataclass(frozen=True)
class TopicMetadataReport:
    """What ``set_topic_metadata`` did.

    Attributes:
        collection: the collection.
        n_added: (topic, key) values added.
        n_unchanged: values already stored with the same value.
        n_replaced: values replaced (``replace=True``; the old ones are in history).
        keys: the keys given, sorted.
        n_topics: topics given.
    """

    collection: str
    n_added: int
    n_unchanged: int
    n_replaced: int
    keys: tuple[str, ...]
    n_topics: int

    @property
    def changed(self) -> bool:
        """True when a value was added or replaced."""
        return bool(self.n_added or self.n_replaced)


def metadata_rows(table: Mapping[str, Mapping[str, MetaValue]]) -> dict[str, list[str]]:
    """Columns (id, key, value_type, value) of a metadata table, for an Arrow insert."""
    ids: list[str] = []
    keys: list[str] = []
    types: list[str] = []
    values: list[str] = []
    for ident in sorted(table):
        for key in sorted(table[ident]):
            v = table[ident][key]
            ids.append(ident)
            keys.append(key)
            types.append(value_type(v))
            values.append(canonical(v))
    return {"id": ids, "key": keys, "value_type": types, "value": values}


def insert_document_metadata(cur: Any, version: str, table: Mapping[str, Mapping[str, MetaValue]]) -> int:
    """Insert the metadata of a new collection version (inside its transaction); returns the row count."""
    import pyarrow as pa

    cols = metadata_rows(table)
    if not cols["id"]:
        return 0
    cur.register("wb_new_doc_metadata", pa.table(cols))
    try:
        cur.execute("INSERT INTO document_metadata SELECT ?, id, key, value_type, value FROM wb_new_doc_metadata",
                    [version])
    finally:
        cur.unregister("wb_new_doc_metadata")
    return len(cols["id"])


def read_document_metadata(cur: Any, version: str) -> MetadataTable:
    """doc_id -> key -> value of a collection version (documents without metadata absent)."""
    rows = cur.execute(
        "SELECT doc_id, key, value_type, value FROM document_metadata WHERE collection_version = ? ORDER BY doc_id, key",
        [version]).fetchall()
    out: MetadataTable = {}
    for doc_id, key, kind, text in rows:
        out.setdefault(doc_id, {})[key] = parse_canonical(kind, text)
    return out


def _read_topic_metadata(cur: Any, collection: str) -> MetadataTable:
    rows = cur.execute(
        "SELECT topic_id, key, value_type, value FROM topic_metadata WHERE collection = ? ORDER BY key",
        [collection]).fetchall()
    out: MetadataTable = {}
    for topic_id, key, kind, text in sorted(rows, key=lambda r: natural_key(r[0])):
        out.setdefault(topic_id, {})[key] = parse_canonical(kind, text)
    return out


def _key_stats(table: Mapping[str, Mapping[str, MetaValue]]) -> dict[str, MetadataKey]:
    by_key: dict[str, list[MetaValue]] = {}
    for meta in table.values():
        for k, v in meta.items():
            by_key.setdefault(k, []).append(v)
    out: dict[str, MetadataKey] = {}
    for k in sorted(by_key):
        values = by_key[k]
        types: dict[str, int] = {}
        for v in values:
            types[value_type(v)] = types.get(value_type(v), 0) + 1
        main = max(types, key=lambda t: (types[t], t))
        same = [v for v in values if value_type(v) == main]
        lo, hi = min(same), max(same)  # one type: comparable
        out[k] = MetadataKey(k, len(values), dict(sorted(types.items())),
                             len({(value_type(v), canonical(v)) for v in values}), canonical(lo), canonical(hi))
    return out


def set_topic_metadata_in(
    cur: Any,
    collection: str,
    metadata: Mapping[str, Mapping[str, object]],
    *,
    source: str,
    replace: bool,
) -> TopicMetadataReport:
    """``set_topic_metadata`` inside an open transaction (used by ingest as well)."""
    import pyarrow as pa

    checked: dict[str, dict[str, MetaValue]] = {}
    for topic_id, meta in metadata.items():
        try:
            checked[topic_id] = check_metadata(meta)
        except ValidationError as e:
            raise ValidationError(f"collection {collection!r}: topic {shown_id(topic_id)}: {e}") from None
    topics = {r[0] for r in cur.execute("SELECT topic_id FROM topics WHERE collection = ?", [collection]).fetchall()}
    unknown = sorted((t for t in checked if t not in topics), key=natural_key)
    if unknown:
        raise ValidationError(
            f"collection {collection!r}: {len(unknown)} topic id(s) of the metadata are not topics of the collection, "
            f"e.g. {shown_id(unknown[0])}; check the topic ids (topic metadata is set on existing topics)")
    stored = {(t, k): (vt, v) for t, k, vt, v in cur.execute(
        "SELECT topic_id, key, value_type, value FROM topic_metadata WHERE collection = ?", [collection]).fetchall()}
    add: list[tuple[str, str, str, str]] = []
    change: list[tuple[str, str, str, str, tuple[str, str]]] = []
    same = 0
    for topic_id in sorted(checked, key=natural_key):
        for key, value in sorted(checked[topic_id].items()):
            new = (value_type(value), canonical(value))
            old = stored.get((topic_id, key))
            if old is None:
                add.append((topic_id, key, *new))
            elif old == new:
                same += 1
            else:
                change.append((topic_id, key, *new, old))
    if change and not replace:
        t, k, _nt, nv, (_ot, ov) = change[0]
        raise ValidationError(
            f"collection {collection!r}: topic {shown_id(t)} already has {k} = {ov!r}, the new value is {nv!r} "
            f"({len(change)} value(s) differ); topic metadata is not overwritten silently. "
            "Pass --replace (workbench metadata import-topics) or --replace-topic-metadata (workbench ingest) "
            "to replace them; old values are kept in topic_metadata_history.")
    if change:
        hist = pa.table({"topic_id": [c[0] for c in change], "key": [c[1] for c in change]})
        cur.register("wb_replaced_topic_metadata", hist)
        try:
            cur.execute(
                "INSERT INTO topic_metadata_history (collection, topic_id, key, value_type, value, source, set_at, "
                "replaced_by_source) SELECT m.collection, m.topic_id, m.key, m.value_type, m.value, m.source, m.set_at, ? "
                "FROM topic_metadata m JOIN wb_replaced_topic_metadata r USING (topic_id, key) WHERE m.collection = ?",
                [source, collection])
            cur.execute(
                "DELETE FROM topic_metadata WHERE collection = ? AND (topic_id, key) IN "
                "(SELECT topic_id, key FROM wb_replaced_topic_metadata)", [collection])
        finally:
            cur.unregister("wb_replaced_topic_metadata")
    rows = add + [c[:4] for c in change]
    if rows:
        table = pa.table({"topic_id": [r[0] for r in rows], "key": [r[1] for r in rows],
                          "value_type": [r[2] for r in rows], "value": [r[3] for r in rows]})
        cur.register("wb_new_topic_metadata", table)
        try:
            cur.execute(
                "INSERT INTO topic_metadata (collection, topic_id, key, value_type, value, source) "
                "SELECT ?, topic_id, key, value_type, value, ? FROM wb_new_topic_metadata", [collection, source])
        finally:
            cur.unregister("wb_new_topic_metadata")
    keys = tuple(sorted({k for m in checked.values() for k in m}))
    return TopicMetadataReport(collection, len(add), same, len(change), keys, len(checked))


class Metadata:
    """Document and topic metadata (``store.metadata``); every multi-row change is one transaction.

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def _metadata_version(self, cur: Any, collection: str, version: str | None) -> str:
        require_collection(cur, collection)
        if version is None:
            return latest_version(cur, collection)
        known = [r[0] for r in cur.execute(
            "SELECT collection_version FROM collection_versions WHERE collection = ?", [collection]).fetchall()]
        matches = [v for v in known if v.startswith(version)] if version else []
        if len(matches) != 1:
            from workbench.errors import UnknownNameError

            raise UnknownNameError(f"version of collection {collection!r}", version, known)
        return str(matches[0])

    def document_metadata(self, collection: str, version: str | None = None) -> MetadataTable:
        """The document metadata of a collection version.

        Args:
            collection: the collection.
            version: a collection version or a unique prefix; None = the latest.

        Returns:
            doc_id -> key -> value (``str``, ``int``/``float``, ``date``, ``bool``),
            doc ids in string order; documents without metadata are absent.

        Raises:
            UnknownNameError: unknown collection or version.

        Example:
            >>> store.metadata.document_metadata("cranfield")["1"]["year"]  # doctest: +SKIP
            1958
        """
        with self._gateway.connection("read document metadata") as cur:
            v = self._metadata_version(cur, collection, version)
            return read_document_metadata(cur, v)

    def document_metadata_keys(self, collection: str, version: str | None = None) -> dict[str, MetadataKey]:
        """key -> ``MetadataKey`` (counts, types, range) over a collection version's documents.

        Raises:
            UnknownNameError: unknown collection or version.
        """
        return _key_stats(self.document_metadata(collection, version))

    def topic_metadata(self, collection: str) -> MetadataTable:
        """The topic metadata of a collection.

        Returns:
            topic_id -> key -> value, topics in natural id order; topics without
            metadata are absent.

        Raises:
            UnknownNameError: unknown collection.

        Example:
            >>> store.metadata.topic_metadata("cranfield")["3"]["smart_id"]  # doctest: +SKIP
            '004'
        """
        with self._gateway.connection("read topic metadata") as cur:
            require_collection(cur, collection)
            return _read_topic_metadata(cur, collection)

    def get_topic_metadata(self, collection: str) -> MetadataTable:
        """``topic_metadata`` under the store's ``get_*`` naming (same result)."""
        return self.topic_metadata(collection)

    def get_document_metadata(self, collection: str, version: str | None = None) -> MetadataTable:
        """``document_metadata`` under the store's ``get_*`` naming (same result)."""
        return self.document_metadata(collection, version)

    def topic_metadata_keys(self, collection: str) -> dict[str, MetadataKey]:
        """key -> ``MetadataKey`` over a collection's topics.

        Raises:
            UnknownNameError: unknown collection.
        """
        return _key_stats(self.topic_metadata(collection))

    def set_topic_metadata(
        self,
        collection: str,
        metadata: Mapping[str, Mapping[str, object]],
        *,
        source: str = "",
        replace: bool = False,
    ) -> TopicMetadataReport:
        """Add (or, with ``replace``, change) topic metadata values, in one transaction.

        Args:
            collection: the collection.
            metadata: topic_id -> key -> value (``None`` values are ignored;
                keys not given are left as they are).
            source: where the values came from (a file path), stored with them.
            replace: allow changing a stored value (the old one goes to
                ``topic_metadata_history``).

        Returns:
            A ``TopicMetadataReport``; a repeat of the same values changes nothing.

        Raises:
            UnknownNameError: unknown collection.
            ValidationError: a topic that is not in the collection, a bad key or
                value, or a changed value without ``replace`` (nothing is written).
        """
        with self._gateway.transaction(f"set topic metadata of {collection}") as cur:
            require_collection(cur, collection)
            return set_topic_metadata_in(cur, collection, metadata, source=source, replace=replace)

    def topic_metadata_history(self, collection: str) -> list[dict[str, Any]]:
        """Replaced topic metadata values, oldest first (topic_id, key, value, source, set_at, replaced_at).

        Raises:
            UnknownNameError: unknown collection.
        """
        with self._gateway.connection("read topic metadata history") as cur:
            require_collection(cur, collection)
            rows = cur.execute(
                "SELECT topic_id, key, value_type, value, source, set_at, replaced_at, replaced_by_source "
                "FROM topic_metadata_history WHERE collection = ? ORDER BY replaced_at, topic_id, key",
                [collection]).fetchall()
        return [{"topic_id": t, "key": k, "value": parse_canonical(vt, v), "source": s, "set_at": a,
                 "replaced_at": r, "replaced_by_source": rb} for t, k, vt, v, s, a, r, rb in rows]
