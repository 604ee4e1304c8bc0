"""Store methods for pools as judging sees them (a mixin of ``LabelStore``):
a pool version's row and lineage (root first), its entries for assignment,
and the SQL filter that restricts judgments to a pool lineage."""

from __future__ import annotations

from typing import Any

from workbench.errors import UnknownNameError
from workbench.judging.queue import PoolItem
from workbench.store._rows import _one
from workbench.store.core import StoreCore


class JudgingPoolsMixin(StoreCore):
    """Pool versions, their lineage and entries, read for judging."""

    def _pool_row(self, cur: Any, pool_version: str) -> tuple[str, str, str | None]:
        row = _one(cur.execute(
            "SELECT collection, collection_version, parent_version FROM pools WHERE pool_version = ?",
            [pool_version],
        ))
        if row is None:
            known = [r[0] for r in cur.execute("SELECT pool_version FROM pools").fetchall()]
            raise UnknownNameError("pool version", pool_version, known)
        return row[0], row[1], row[2]

    def _lineage(self, cur: Any, pool_version: str) -> list[str]:
        """The pool version and its ancestors, root first."""
        chain: list[str] = []
        current: str | None = pool_version
        while current and current not in chain:
            _c, _v, parent = self._pool_row(cur, current)
            chain.append(current)
            current = parent
        return chain[::-1]

    def judging_pool_items(self, pool_version: str) -> tuple[str, list[PoolItem]]:
        """The collection and the entries of one pool version (not its ancestors)
        as assignment needs them: topic, doc and priority rank only.

        Raises:
            UnknownNameError: unknown pool version.
        """
        with self.connection("read pool for assignment") as cur:
            collection, _v, _p = self._pool_row(cur, pool_version)
            rows = cur.execute(
                "SELECT topic_id, doc_id, priority_rank FROM pool_entries WHERE pool_version = ? "
                "ORDER BY topic_id, priority_rank, doc_id",
                [pool_version],
            ).fetchall()
        return collection, [PoolItem(t, d, int(r)) for t, d, r in rows]

    def judging_pools(self) -> list[dict[str, Any]]:
        """Pool versions with their collection, parent, size and creation time, newest first."""
        with self.connection("list pools") as cur:
            rows = cur.execute(
                "SELECT pool_version, collection, parent_version, depth, n_topics, n_entries, runs, created_at "
                "FROM pools ORDER BY created_at DESC, pool_version"
            ).fetchall()
        keys = ("pool_version", "collection", "parent_version", "depth", "n_topics", "n_entries", "runs", "created_at")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def _lineage_filter(self, cur: Any, pool_version: str | None) -> tuple[str, list[Any]]:
        if pool_version is None:
            return "", []
        lineage = self._lineage(cur, pool_version)
        marks = ", ".join("?" for _ in lineage)
        return (
            f" AND (topic_id, doc_id) IN (SELECT topic_id, doc_id FROM pool_entries WHERE pool_version IN ({marks}))",
            list(lineage),
        )
