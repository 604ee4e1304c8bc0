"""Store methods for pools (a mixin of ``LabelStore``): immutable, versioned pools.

A pool version holds the entries of a ``pooling.pool.Pool`` (one row per topic
and document: best rank, number of runs, priority, priority rank) and its
provenance (one row per contributing run and rank). A version made by
``pool extend`` is a *delta*: its ``parent_version`` names the pool it extends,
and it holds only the documents that pool (and its ancestors) lacked. The full
set to judge is the union along the lineage (``pool_documents``).

Pool versions are written once, in one transaction, with a content hash
(``pooling.pool.pool_content_hash``). Default names are
``<collection>-pool-v1``, ``-v2``, ...
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pooling.pool import Contribution, Pool, PoolEntry, PoolStats, pool_statistics
from workbench.errors import DuplicateNameError, UnknownNameError, ValidationError
from workbench.store.collections import require_collection
from workbench.store.core import StoreCore

__all__ = ["PoolEntry", "PoolInfo", "PoolsMixin", "Contribution", "PoolStats"]


@dataclass(frozen=True)
class PoolInfo:
    """A stored pool version (``pools`` row).

    Attributes:
        pool_version: the name (e.g. ``cranfield-pool-v1``).
        collection: the collection pooled.
        collection_version: the collection version the runs were produced over.
        parent_version: the pool this delta extends ("" for a root pool).
        depth: cutoff k applied to each run.
        strategy: ``depth-k union``.
        params: priority method and budget (dict).
        runs: names of the runs pooled (tuple, sorted).
        n_topics: topics with at least one document in this version.
        n_entries: (topic, document) pairs in this version (not its ancestors).
        content_hash: sha256 of the content (``pooling.pool.pool_content_hash``).
        created_at: when it was stored.
    """

    pool_version: str
    collection: str
    collection_version: str
    parent_version: str
    depth: int
    strategy: str
    params: dict[str, Any]
    runs: tuple[str, ...]
    n_topics: int
    n_entries: int
    content_hash: str
    created_at: datetime


_COLS = ("pool_version, collection, collection_version, coalesce(parent_version, ''), depth, "
         "strategy, params, runs, n_topics, n_entries, content_hash, created_at")


def _info(row: Sequence[Any]) -> PoolInfo:
    return PoolInfo(row[0], row[1], row[2], row[3], int(row[4]), row[5], json.loads(row[6]),
                    tuple(json.loads(row[7])), int(row[8]), int(row[9]), row[10], row[11])


def _pool_names(cur: Any) -> list[str]:
    return [r[0] for r in cur.execute("SELECT pool_version FROM pools").fetchall()]


class PoolsMixin(StoreCore):
    """Domain verbs on pools; every multi-row change is one ``transaction()``."""

    # -- writing -----------------------------------------------------------------

    def next_pool_name(self, collection: str) -> str:
        """The default name of the collection's next pool: ``<collection>-pool-v<N+1>``."""
        with self.connection("name pool") as cur:
            names = [r[0] for r in cur.execute(
                "SELECT pool_version FROM pools WHERE collection = ?", [collection]).fetchall()]
        pattern = re.compile(re.escape(collection) + r"-pool-v(\d+)$")
        taken = [int(m.group(1)) for n in names if (m := pattern.match(n))]
        return f"{collection}-pool-v{max(taken, default=0) + 1}"

    def find_pool_by_hash(self, collection: str, content_hash: str, parent_version: str = "") -> PoolInfo | None:
        """The oldest stored pool of ``collection`` with this content and parent, if any."""
        with self.connection("find pool") as cur:
            rows = cur.execute(
                f"SELECT {_COLS} FROM pools WHERE collection = ? AND content_hash = ? "
                "AND coalesce(parent_version, '') = ? ORDER BY created_at, pool_version LIMIT 1",
                [collection, content_hash, parent_version]).fetchall()
        return _info(rows[0]) if rows else None

    def save_pool(
        self,
        name: str,
        pool: Pool,
        *,
        collection: str,
        collection_version: str,
        parent_version: str | None = None,
    ) -> PoolInfo:
        """Store a pool version with its entries and provenance, in one transaction.

        Args:
            name: the new version's name (unique, no spaces or '/').
            pool: the pool (or delta pool) built by ``pooling.pool``.
            collection: the collection pooled.
            collection_version: the collection version of the pooled runs.
            parent_version: the pool version this delta extends (None for a root).

        Returns:
            The stored ``PoolInfo``.

        Raises:
            DuplicateNameError: the name is taken (pool versions are immutable).
            UnknownNameError: unknown collection or parent pool.
            ValidationError: a bad name, a parent of another collection, or a
                run that is not stored.
        """
        import pyarrow as pa

        if not name or any(c.isspace() for c in name) or "/" in name:
            raise ValidationError(f"expected a pool version name without spaces or '/', found {name!r}")
        entries = pa.table({
            "topic_id": [e.topic_id for e in pool.entries],
            "doc_id": [e.doc_id for e in pool.entries],
            "best_rank": pa.array([e.best_rank for e in pool.entries], pa.int32()),
            "n_runs": pa.array([e.n_runs for e in pool.entries], pa.int32()),
            "priority": pa.array([e.priority for e in pool.entries], pa.float64()),
            "priority_rank": pa.array([e.priority_rank for e in pool.entries], pa.int32()),
        })
        provenance = pa.table({
            "topic_id": [c.topic_id for c in pool.provenance],
            "doc_id": [c.doc_id for c in pool.provenance],
            "run_name": [c.run_name for c in pool.provenance],
            "rank": pa.array([c.rank for c in pool.provenance], pa.int32()),
        })
        with self.transaction(f"save pool {name}") as cur:
            require_collection(cur, collection)
            if cur.execute("SELECT 1 FROM pools WHERE pool_version = ?", [name]).fetchall():
                raise DuplicateNameError(
                    f"pool version {name!r} already exists and pool versions are immutable; choose another --name")
            if parent_version:
                rows = cur.execute("SELECT collection FROM pools WHERE pool_version = ?",
                                   [parent_version]).fetchall()
                if not rows:
                    raise UnknownNameError("pool version", parent_version, _pool_names(cur))
                if rows[0][0] != collection:
                    raise ValidationError(
                        f"parent pool {parent_version!r} belongs to collection {rows[0][0]!r}, not {collection!r}")
            stored = {r[0] for r in cur.execute(
                "SELECT run_name FROM runs WHERE collection = ?", [collection]).fetchall()}
            unknown = sorted(set(pool.runs) - stored)
            if unknown:
                raise ValidationError(
                    f"pool {name!r}: run {unknown[0]!r} is not a stored run of collection {collection!r}; "
                    "import or produce it first (workbench run ...)")
            cur.execute(
                "INSERT INTO pools (pool_version, collection, collection_version, parent_version, depth, "
                "strategy, params, runs, n_topics, n_entries, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [name, collection, collection_version, parent_version or None, pool.depth, pool.strategy,
                 json.dumps(dict(pool.params), sort_keys=True), json.dumps(list(pool.runs)),
                 pool.n_topics, pool.n_entries, pool.content_hash])
            cur.register("wb_pool_entries", entries)
            cur.register("wb_pool_provenance", provenance)
            try:
                cur.execute("INSERT INTO pool_entries SELECT ?, topic_id, doc_id, best_rank, n_runs, "
                            "priority, priority_rank FROM wb_pool_entries", [name])
                cur.execute("INSERT INTO pool_provenance SELECT ?, topic_id, doc_id, run_name, rank "
                            "FROM wb_pool_provenance", [name])
            finally:
                cur.unregister("wb_pool_entries")
                cur.unregister("wb_pool_provenance")
            row = cur.execute(f"SELECT {_COLS} FROM pools WHERE pool_version = ?", [name]).fetchall()[0]
        return _info(row)

    # -- reading -------------------------------------------------------------------

    def get_pool(self, pool_version: str) -> PoolInfo:
        """A stored pool version.

        Raises:
            UnknownNameError: no such pool version (the message lists the known ones).
        """
        with self.connection("read pool") as cur:
            rows = cur.execute(f"SELECT {_COLS} FROM pools WHERE pool_version = ?", [pool_version]).fetchall()
            if not rows:
                raise UnknownNameError("pool version", pool_version, _pool_names(cur))
        return _info(rows[0])

    def list_pools(self, collection: str | None = None) -> list[PoolInfo]:
        """Stored pool versions, oldest first (then by name); all collections when None."""
        with self.connection("list pools") as cur:
            rows = cur.execute(
                f"SELECT {_COLS} FROM pools WHERE ? IS NULL OR collection = ? "
                "ORDER BY created_at, pool_version", [collection, collection]).fetchall()
        return [_info(r) for r in rows]

    def latest_pool(self, collection: str) -> PoolInfo | None:
        """The newest pool version of a collection, or None when it has none.

        Raises:
            UnknownNameError: no such collection.
        """
        with self.connection("read latest pool") as cur:
            require_collection(cur, collection)
            rows = cur.execute(
                f"SELECT {_COLS} FROM pools WHERE collection = ? "
                "ORDER BY created_at DESC, pool_version DESC LIMIT 1", [collection]).fetchall()
        return _info(rows[0]) if rows else None

    def pool_entries(self, pool_version: str) -> list[PoolEntry]:
        """Entries of one pool version (not its ancestors), by topic_id then priority_rank.

        Raises:
            UnknownNameError: no such pool version.
        """
        with self.connection("read pool entries") as cur:
            self._require_pool(cur, pool_version)
            rows = cur.execute(
                "SELECT topic_id, doc_id, best_rank, n_runs, priority, priority_rank FROM pool_entries "
                "WHERE pool_version = ? ORDER BY topic_id, priority_rank", [pool_version]).fetchall()
        return [PoolEntry(t, d, int(b), int(n), float(p), int(r)) for t, d, b, n, p, r in rows]

    def pool_provenance(self, pool_version: str) -> list[Contribution]:
        """Contributions of one pool version, by topic_id, doc_id, run_name.

        Raises:
            UnknownNameError: no such pool version.
        """
        with self.connection("read pool provenance") as cur:
            self._require_pool(cur, pool_version)
            rows = cur.execute(
                "SELECT topic_id, doc_id, run_name, rank FROM pool_provenance WHERE pool_version = ? "
                "ORDER BY topic_id, doc_id, run_name", [pool_version]).fetchall()
        return [Contribution(t, d, r, int(k)) for t, d, r, k in rows]

    def pool_lineage(self, pool_version: str) -> list[str]:
        """The pool versions from the root to ``pool_version`` (root first).

        Raises:
            UnknownNameError: no such pool version.
        """
        chain: list[str] = []
        with self.connection("read pool lineage") as cur:
            current: str | None = pool_version
            while current:
                if current in chain:  # defensive: a cycle cannot be written, but never loop
                    break
                rows = cur.execute("SELECT coalesce(parent_version, '') FROM pools WHERE pool_version = ?",
                                   [current]).fetchall()
                if not rows:
                    raise UnknownNameError("pool version", current, _pool_names(cur))
                chain.append(current)
                current = rows[0][0]
        return chain[::-1]

    def pool_documents(self, pool_version: str, *, with_ancestors: bool = True) -> dict[str, set[str]]:
        """topic_id -> doc_ids of a pool version (and, by default, of all its ancestors).

        Raises:
            UnknownNameError: no such pool version.
        """
        versions = self.pool_lineage(pool_version) if with_ancestors else [pool_version]
        with self.connection("read pool documents") as cur:
            if not with_ancestors:
                self._require_pool(cur, pool_version)
            rows = cur.execute(
                "SELECT DISTINCT topic_id, doc_id FROM pool_entries WHERE list_contains(?, pool_version)",
                [versions]).fetchall()
        out: dict[str, set[str]] = {}
        for t, d in rows:
            out.setdefault(t, set()).add(d)
        return out

    def pool_contributors(self, pool_version: str, *, with_ancestors: bool = True) -> dict[str, dict[str, set[str]]]:
        """topic_id -> doc_id -> names of the runs that contributed it (the shape of
        ``pooling.reusability.Provenance``), over the lineage by default.

        Raises:
            UnknownNameError: no such pool version.
        """
        versions = self.pool_lineage(pool_version) if with_ancestors else [pool_version]
        with self.connection("read pool contributors") as cur:
            rows = cur.execute(
                "SELECT topic_id, doc_id, run_name FROM pool_provenance WHERE list_contains(?, pool_version)",
                [versions]).fetchall()
        out: dict[str, dict[str, set[str]]] = {}
        for t, d, r in rows:
            out.setdefault(t, {}).setdefault(d, set()).add(r)
        return out

    def pool_stats(self, pool_version: str) -> PoolStats:
        """Size per topic, contributions, unique contributions and run overlap of one version.

        Raises:
            UnknownNameError: no such pool version.
        """
        info = self.get_pool(pool_version)
        return pool_statistics(self.pool_entries(pool_version), self.pool_provenance(pool_version), info.runs)

    def judged_documents(self, collection: str) -> dict[str, set[str]]:
        """topic_id -> doc_ids with at least one judgment (grade given) or adjudication.

        Unsure-only judgments (no grade) do not count: the document still needs one.

        Raises:
            UnknownNameError: no such collection.
        """
        with self.connection("read judged documents") as cur:
            require_collection(cur, collection)
            rows = cur.execute(
                """SELECT DISTINCT topic_id, doc_id FROM judgments
                   WHERE collection = ? AND grade IS NOT NULL
                   UNION SELECT DISTINCT topic_id, doc_id FROM adjudications WHERE collection = ?""",
                [collection, collection]).fetchall()
        out: dict[str, set[str]] = {}
        for t, d in rows:
            out.setdefault(t, set()).add(d)
        return out

    def _require_pool(self, cur: Any, pool_version: str) -> None:
        if not cur.execute("SELECT 1 FROM pools WHERE pool_version = ?", [pool_version]).fetchall():
            raise UnknownNameError("pool version", pool_version, _pool_names(cur))
