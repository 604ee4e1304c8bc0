"""The store's retrieval units (``store.units``): chunk maps and duplicate groups.

* **Chunk maps** (``chunk_maps``, ``chunk_sources``): a chunk collection's
  version maps each of its documents (chunks) to a document of a source
  collection and character offsets in that document's text. The map is
  written with the version by ``ingest_collection`` and is part of its content
  hash (``collections.collection_version_of``), so re-chunking (another size,
  overlap or offsets) is a new version. ``chunk_sources`` records how the
  chunks were made (source collection and version, unit, size, overlap).
* **Duplicate groups** (``duplicate_groups``): rows (collection version,
  group, document, source); identical normalised texts are grouped at ingest
  (source ``identical text``), a groups file adds rows under its own source.
  Rows are only added, never changed; the groups of a version are all its rows
  merged transitively (``scoring.groups.merge_groups``).

Reading API::

    store.units.get_chunk_map("cranfield-p64")        # ChunkMap or None
    store.units.get_chunk_source("cranfield-p64")     # ChunkSource or None
    store.units.get_duplicate_groups("cranfield")     # DuplicateGroups (possibly empty)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workbench.errors import InputFormatError, ValidationError, WorkbenchError
from workbench.scoring.groups import DuplicateGroups, merge_groups
from workbench.scoring.units import ChunkMap, ChunkSpan
from workbench.store.collection_rows import (
    latest_version,
    missing_ids,
    require_collection,
    shown_id,
)
from workbench.store.core import Gateway

IDENTICAL_TEXT = "identical text"
"""The source of groups detected at ingest."""


@dataclass(frozen=True)
class ChunkSource:
    """How a chunk collection version was made.

    Attributes:
        source_collection: the document collection the chunks were cut from ("" when not known).
        source_version: its version ("" when not known).
        chunk_unit: ``tokens`` or ``chars`` ("" for an imported map).
        size: units per chunk (0 for an imported map).
        overlap: units shared by consecutive chunks.
    """

    source_collection: str = ""
    source_version: str = ""
    chunk_unit: str = ""
    size: int = 0
    overlap: int = 0

    def describe(self) -> str:
        """e.g. ``64-token chunks, overlap 16, of cranfield@1a2b3c4d5e6f``."""
        what = f"{self.size}-{self.chunk_unit[:-1]} chunks, overlap {self.overlap}" if self.size else "imported chunk map"
        src = f" of {self.source_collection}@{self.source_version[:12]}" if self.source_collection else ""
        return what + src


def check_chunk_map_covers(collection: str, chunk_map: ChunkMap, doc_ids: set[str]) -> None:
    """Raise unless the chunk map names exactly the collection's documents.

    Raises:
        ValidationError: a document without a chunk map row, or a row for a chunk that is not a document.
    """
    unmapped = sorted(doc_ids - set(chunk_map.spans))
    if unmapped:
        raise ValidationError(
            f"collection {collection!r}: {len(unmapped):,} document(s) have no chunk map row, e.g. "
            f"{shown_id(unmapped[0])}; a chunk collection maps every document to (doc_id, start, end)")
    extra = sorted(set(chunk_map.spans) - doc_ids)
    if extra:
        raise ValidationError(
            f"collection {collection!r}: the chunk map names {len(extra):,} chunk(s) that are not documents of the "
            f"corpus, e.g. {shown_id(extra[0])}; check the chunk ids")


def insert_chunk_map(cur: Any, version: str, chunk_map: ChunkMap, source: ChunkSource | None) -> None:
    """Write a version's chunk map (and its source). Inside the ingest transaction."""
    import pyarrow as pa

    rows = chunk_map.lines()
    table = pa.table({
        "chunk_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
        "start_offset": pa.array([r[2] for r in rows], pa.int32()),
        "end_offset": pa.array([r[3] for r in rows], pa.int32()),
    })
    cur.register("wb_chunk_map", table)
    try:
        cur.execute("INSERT INTO chunk_maps SELECT ?, chunk_id, doc_id, start_offset, end_offset FROM wb_chunk_map",
                    [version])
    finally:
        cur.unregister("wb_chunk_map")
    s = source or ChunkSource()
    cur.execute("INSERT INTO chunk_sources VALUES (?, ?, ?, ?, ?, ?)",
                [version, s.source_collection, s.source_version, s.chunk_unit, s.size, s.overlap])


class Units:
    """Chunk maps and duplicate groups of collection versions (``store.units``).

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def _version_of(self, cur: Any, collection: str, version: str | None) -> str:
        require_collection(cur, collection)
        if version is None:
            return latest_version(cur, collection)
        rows = cur.execute("SELECT collection_version FROM collection_versions WHERE collection = ? "
                           "AND starts_with(collection_version, ?)", [collection, version]).fetchall()
        if len(rows) != 1:
            from workbench.errors import UnknownNameError

            known = [r[0] for r in cur.execute("SELECT collection_version FROM collection_versions WHERE collection = ?",
                                               [collection]).fetchall()]
            raise UnknownNameError(f"version of collection {collection!r}", version, known)
        return str(rows[0][0])

    def get_chunk_map(self, collection: str, version: str | None = None) -> ChunkMap | None:
        """The chunk map of a collection version (latest when None), or None when it is not a chunk collection.

        Raises:
            UnknownNameError: unknown collection or version.
        """
        with self._gateway.connection("read chunk map") as cur:
            v = self._version_of(cur, collection, version)
            rows = cur.execute("SELECT chunk_id, doc_id, start_offset, end_offset FROM chunk_maps "
                               "WHERE collection_version = ?", [v]).fetchall()
        if not rows:
            return None
        return ChunkMap.of(ChunkSpan(c, d, int(s), int(e)) for c, d, s, e in rows)

    def get_chunk_source(self, collection: str, version: str | None = None) -> ChunkSource | None:
        """How a chunk collection version was made, or None when it is not a chunk collection.

        Raises:
            UnknownNameError: unknown collection or version.
        """
        with self._gateway.connection("read chunk source") as cur:
            v = self._version_of(cur, collection, version)
            rows = cur.execute("SELECT source_collection, source_version, chunk_unit, size, overlap FROM chunk_sources "
                               "WHERE collection_version = ?", [v]).fetchall()
        if not rows:
            return None
        a, b, c, d, e = rows[0]
        return ChunkSource(a, b, c, int(d), int(e))

    def chunk_collections_of(self, source_collection: str) -> list[str]:
        """Collections whose latest version is chunked from ``source_collection``, by name."""
        with self._gateway.connection("read chunk collections") as cur:
            rows = cur.execute(
                "SELECT DISTINCT v.collection FROM chunk_sources s JOIN collection_versions v USING (collection_version) "
                "WHERE s.source_collection = ? ORDER BY 1", [source_collection]).fetchall()
        return [r[0] for r in rows]

    def add_duplicate_groups(
        self,
        collection: str,
        groups: Mapping[str, Iterable[str]] | Iterable[Iterable[str]],
        *,
        source: str,
        version: str | None = None,
        lines: tuple[str, Mapping[str, int]] | None = None,
    ) -> int:
        """Add duplicate groups to a collection version (latest when None), in one transaction.

        Checked in this order, before any row is written: every member is a
        document of the version; every group has two members or more; no
        member of a file's group (any source but ``identical text``) is already
        in another file group of the version (a document belongs to one group;
        groups found by identical text merge with file groups, ``merge_groups``).
        Rows already stored (same group id and document, from any file) are
        skipped: re-importing a group adds nothing.

        Args:
            collection: the collection.
            groups: group_id -> member doc ids, or member lists (ids then made up
                from the first member).
            source: where they came from (``identical text`` or a file's name).
            version: a collection version or unique prefix.
            lines: (the file as given, doc_id -> its line): errors then name
                file:line (``InputFormatError``).

        Returns:
            Rows added.

        Raises:
            UnknownNameError: unknown collection or version.
            ValidationError: a member that is not a document of the version, a group of
                one document, a document in another group, or an empty source
                (``InputFormatError``, with file:line, when ``lines`` is given).
        """
        import pyarrow as pa

        if not source:
            raise ValidationError("duplicate groups need a source (a file name or 'identical text')")
        named = (dict(groups.items()) if isinstance(groups, Mapping)
                 else {f"{list(g)[0]}": list(g) for g in (list(x) for x in groups) if g})
        gids = [g for g, ms in named.items() for _ in ms]
        docs = [d for ms in named.values() for d in ms]
        if not docs:
            return 0
        line_of = lines[1] if lines is not None else {}

        def refuse(doc: str | None, message: str) -> WorkbenchError:
            if lines is not None and doc is not None and doc in line_of:
                return InputFormatError(lines[0], line_of[doc], message)
            return ValidationError(f"duplicate groups ({source}): {message}")

        with self._gateway.transaction(f"add duplicate groups to {collection}") as cur:
            v = self._version_of(cur, collection, version)
            missing = missing_ids(cur, v, docs)
            if missing:
                first = min(missing, key=lambda d: (line_of.get(d, 0), d))
                raise refuse(first, f"expected documents of collection {collection!r} version {v[:12]}, found doc "
                                    f"id {shown_id(first)}" + (f" ({len(missing):,} unknown ids)" if len(missing) > 1
                                                               else "") + "; check the ids")
            for gid, ms in named.items():
                if len(set(ms)) < 2:
                    raise refuse(ms[0] if ms else None,
                                 f"group {shown_id(gid)} has one document; a group needs at least two.")
            if source != IDENTICAL_TEXT:
                held = dict(cur.execute(
                    "SELECT doc_id, group_id FROM duplicate_groups WHERE collection_version = ? AND source <> ?",
                    [v, IDENTICAL_TEXT]).fetchall())
                for gid, ms in named.items():
                    for d in ms:
                        if d in held and held[d] != gid:
                            raise refuse(d, f"document {shown_id(d)} is already in group {shown_id(held[d])} of "
                                            f"collection {collection!r} (imported before), found it here in group "
                                            f"{shown_id(gid)}; a document belongs to one group. Merge the groups "
                                            f"(use group id {shown_id(held[d])}).")
            cur.register("wb_groups", pa.table({"group_id": gids, "doc_id": docs}))
            try:
                before = int(cur.execute("SELECT count(*) FROM duplicate_groups WHERE collection_version = ?",
                                         [v]).fetchall()[0][0])
                cur.execute(
                    "INSERT INTO duplicate_groups (collection_version, group_id, doc_id, source) "
                    "SELECT DISTINCT ?, g.group_id, g.doc_id, ? FROM wb_groups g WHERE NOT EXISTS ("
                    "  SELECT 1 FROM duplicate_groups x WHERE x.collection_version = ? AND x.doc_id = g.doc_id "
                    "  AND (x.source = ? OR (x.group_id = g.group_id AND x.source <> ?)))",
                    [v, source, v, source, IDENTICAL_TEXT])
                after = int(cur.execute("SELECT count(*) FROM duplicate_groups WHERE collection_version = ?",
                                        [v]).fetchall()[0][0])
            finally:
                cur.unregister("wb_groups")
        return after - before

    def get_duplicate_groups(self, collection: str, version: str | None = None) -> DuplicateGroups:
        """The duplicate groups of a collection version (latest when None), every source merged.

        Raises:
            UnknownNameError: unknown collection or version.
        """
        with self._gateway.connection("read duplicate groups") as cur:
            v = self._version_of(cur, collection, version)
            rows = cur.execute("SELECT source, group_id, doc_id FROM duplicate_groups WHERE collection_version = ? "
                               "ORDER BY source, group_id, doc_id", [v]).fetchall()
        by: dict[tuple[str, str], list[str]] = {}
        for source, gid, doc in rows:
            by.setdefault((source, gid), []).append(doc)
        return merge_groups([(ms, src) for (src, _), ms in by.items()])
