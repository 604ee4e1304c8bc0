"""The store's pools (``store.pools``): immutable, versioned pools.

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
from pathlib import Path
from typing import Any

from pooling.pool import (
    STRATEGY,
    Contribution,
    Pool,
    PoolColumns,
    PoolEntry,
    PoolStats,
    pool_statistics,
)
from pooling.sample import Sample, sample_content_hash
from workbench.errors import DuplicateNameError, StoreError, UnknownNameError, ValidationError
from workbench.judging.queue import PoolItem
from workbench.ranking import natural_key
from workbench.store.collection_rows import require_collection
from workbench.store.core import Gateway
from workbench.store.pool_rows import pool_row
from workbench.store.samples import SAMPLE_KIND, insert_sample_rows, read_sample_rows
from workbench.text import check_stored_name

__all__ = ["PoolEntry", "PoolInfo", "Pools", "Contribution", "PoolStats"]


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
        content_hash: sha256 of the content (``pooling.pool.pool_content_hash``; a sample pool's:
            ``pooling.sample.sample_content_hash``).
        created_at: when it was stored.
        kind: ``depth-k union``, or ``sample`` (a stratified sample of the runs' top ``depth``:
            ``read_sample``).
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
    kind: str = STRATEGY

    @property
    def is_sample(self) -> bool:
        """True for a pool version of kind ``sample``."""
        return self.kind == SAMPLE_KIND


_COLS = ("pool_version, collection, collection_version, coalesce(parent_version, ''), depth, "
         "strategy, params, runs, n_topics, n_entries, content_hash, created_at, coalesce(kind, 'depth-k union')")


def check_pool_name(name: str) -> str:
    """``name`` if it can be a pool version name (``workbench.text.check_stored_name``: no control
    character, no white space, no '/' or '\\', no leading '-').

    Raises:
        ValidationError: naming the value and the rule.
    """
    return check_stored_name("pool version name", name)


def _info(row: Sequence[Any]) -> PoolInfo:
    return PoolInfo(row[0], row[1], row[2], row[3], int(row[4]), row[5], json.loads(row[6]),
                    tuple(json.loads(row[7])), int(row[8]), int(row[9]), row[10], row[11], row[12])


def _pool_names(cur: Any) -> list[str]:
    return [r[0] for r in cur.execute("SELECT pool_version FROM pools").fetchall()]


class Pools:
    """Pool versions: saved once, read with their lineage, entries and provenance (``store.pools``).

    Every multi-row change is one transaction.

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    # -- writing -----------------------------------------------------------------

    def next_pool_name(self, collection: str) -> str:
        """The default name of the collection's next pool: ``<collection>-pool-v<N+1>``.

        Only a hint: another process may take it before this one saves; ``save_pool_default``
        chooses it inside the transaction that stores the pool.
        """
        with self._gateway.connection("name pool") as cur:
            return _next_pool_name(cur, collection)

    def find_pool_by_hash(self, collection: str, content_hash: str, parent_version: str = "") -> PoolInfo | None:
        """The oldest stored pool of ``collection`` with this content and parent, if any."""
        with self._gateway.connection("find pool") as cur:
            rows = cur.execute(
                f"SELECT {_COLS} FROM pools WHERE collection = ? AND content_hash = ? "
                "AND coalesce(parent_version, '') = ? ORDER BY created_at, pool_version LIMIT 1",
                [collection, content_hash, parent_version]).fetchall()
        return _info(rows[0]) if rows else None

    def save_pool(
        self,
        name: str,
        pool: Pool | PoolColumns,
        *,
        collection: str,
        collection_version: str,
        parent_version: str | None = None,
    ) -> PoolInfo:
        """Store a pool version with its entries and provenance, in one transaction.

        Args:
            name: the new version's name (unique, no spaces or '/').
            pool: the pool (or delta pool) built by ``pooling.pool``, or the columns of
                ``pool_run_files``.
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
        check_pool_name(name)
        tables = _pool_tables(pool)
        with self._gateway.transaction(f"save pool {name}") as cur:
            row = _insert_pool(cur, name, pool, tables, collection=collection, collection_version=collection_version,
                               parent_version=parent_version)
        return _info(row)

    def save_pool_default(
        self,
        pool: Pool | PoolColumns,
        *,
        collection: str,
        collection_version: str,
        parent_version: str | None = None,
    ) -> tuple[PoolInfo, bool]:
        """Store a pool under the default name ``<collection>-pool-v<N+1>``, chosen in the same transaction.

        Several processes building pools at once each get their own number (the
        store's file lease makes the transaction exclusive), instead of all but one
        failing on a name chosen before the write. An identical pool (same content
        hash and parent) already stored is returned instead, nothing written.

        Args:
            pool, collection, collection_version, parent_version: as ``save_pool``.

        Returns:
            (the ``PoolInfo``, True when it was stored now; False: the identical stored pool).

        Raises:
            As ``save_pool`` (but never ``DuplicateNameError``).
        """
        tables = _pool_tables(pool)
        with self._gateway.transaction(f"save pool of {collection}") as cur:
            rows = cur.execute(
                f"SELECT {_COLS} FROM pools WHERE collection = ? AND content_hash = ? "
                "AND coalesce(parent_version, '') = ? ORDER BY created_at, pool_version LIMIT 1",
                [collection, pool.content_hash, parent_version or ""]).fetchall()
            if rows:
                return _info(rows[0]), False
            name = _next_pool_name(cur, collection)
            check_pool_name(name)
            row = _insert_pool(cur, name, pool, tables, collection=collection, collection_version=collection_version,
                               parent_version=parent_version)
        return _info(row), True

    def save_sample_pool(
        self,
        name: str,
        pool: Pool,
        sample: Sample,
        *,
        collection: str,
        collection_version: str,
    ) -> tuple[PoolInfo, bool]:
        """Store a sample pool version, in one transaction: its entries and provenance (the sampled documents,
        ``pooling.sample.sample_as_pool``), each entry's stratum and inclusion probability, the strata
        counts and the frame (``store.samples``). Fixed before any judgment; never changed.

        Args:
            name: the new version's name.
            pool: the sampled documents as a pool (its ``params`` hold the design).
            sample: the drawn sample.
            collection: the collection pooled.
            collection_version: the collection version of the runs.

        Returns:
            (the ``PoolInfo``, True when stored now; False: a sample pool of this name with the same content
            hash was stored already, nothing written).

        Raises:
            DuplicateNameError: the name is taken by another pool version.
            UnknownNameError: unknown collection.
            ValidationError: a bad name, a run that is not stored.
        """
        check_pool_name(name)
        content_hash = sample_content_hash(pool.content_hash, sample)
        tables = _pool_tables(pool)
        with self._gateway.transaction(f"save sample pool {name}") as cur:
            rows = cur.execute(f"SELECT {_COLS} FROM pools WHERE pool_version = ?", [name]).fetchall()
            if rows and rows[0][10] == content_hash and rows[0][12] == SAMPLE_KIND:
                return _info(rows[0]), False
            row = _insert_pool(cur, name, pool, tables, collection=collection, collection_version=collection_version,
                               parent_version=None, kind=SAMPLE_KIND, content_hash=content_hash)
            insert_sample_rows(cur, name, sample)
        return _info(row), True

    def read_sample(self, pool_version: str) -> tuple[PoolInfo, Sample]:
        """A sample pool version and its sample (design, sampled documents with strata and inclusion
        probabilities, strata counts, frame), as stored: ``pooling.sample.sample_problems`` checks it.

        Raises:
            UnknownNameError: no such pool version.
            ValidationError: the pool version is not a sample.
            StoreError: its design cannot be read.
        """
        with self._gateway.connection("read sample") as cur:
            rows = cur.execute(f"SELECT {_COLS} FROM pools WHERE pool_version = ?", [pool_version]).fetchall()
            if not rows:
                raise UnknownNameError("pool version", pool_version, _pool_names(cur))
            info = _info(rows[0])
            if not info.is_sample:
                raise ValidationError(f"pool version {pool_version!r} is a {info.kind} pool, not a sample "
                                      "(draw one with `workbench pool sample`)")
            sample = read_sample_rows(cur, pool_version, info.params, self._gateway.path)
        return info, sample

    # -- reading -------------------------------------------------------------------

    def get_pool(self, pool_version: str) -> PoolInfo:
        """A stored pool version.

        Raises:
            UnknownNameError: no such pool version (the message lists the known ones).
        """
        with self._gateway.connection("read pool") as cur:
            rows = cur.execute(f"SELECT {_COLS} FROM pools WHERE pool_version = ?", [pool_version]).fetchall()
            if not rows:
                raise UnknownNameError("pool version", pool_version, _pool_names(cur))
        return _info(rows[0])

    def list_pools(self, collection: str | None = None) -> list[PoolInfo]:
        """Stored pool versions, oldest first (then by name); all collections when None."""
        with self._gateway.connection("list pools") as cur:
            rows = cur.execute(
                f"SELECT {_COLS} FROM pools WHERE ? IS NULL OR collection = ? "
                "ORDER BY created_at, pool_version", [collection, collection]).fetchall()
        return [_info(r) for r in rows]

    def latest_pool(self, collection: str) -> PoolInfo | None:
        """The newest pool version of a collection, or None when it has none.

        Raises:
            UnknownNameError: no such collection.
        """
        with self._gateway.connection("read latest pool") as cur:
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
        with self._gateway.connection("read pool entries") as cur:
            self._require_pool(cur, pool_version)
            rows = cur.execute(
                "SELECT topic_id, doc_id, best_rank, n_runs, priority, priority_rank FROM pool_entries "
                "WHERE pool_version = ? ORDER BY topic_id, priority_rank", [pool_version]).fetchall()
        rows.sort(key=lambda r: (natural_key(r[0]), r[5]))  # topics in natural order (2 before 10)
        return [PoolEntry(t, d, int(b), int(n), float(p), int(r)) for t, d, b, n, p, r in rows]

    def pool_provenance(self, pool_version: str) -> list[Contribution]:
        """Contributions of one pool version, by topic_id, doc_id, run_name.

        Raises:
            UnknownNameError: no such pool version.
        """
        with self._gateway.connection("read pool provenance") as cur:
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
        with self._gateway.connection("read pool lineage") as cur:
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
        with self._gateway.connection("read pool documents") as cur:
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
        with self._gateway.connection("read pool contributors") as cur:
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

        Unsure-only judgments (no grade) do not count: the document still needs one;
        nor do model assessors' judgments (a person still has to judge it).

        Raises:
            UnknownNameError: no such collection.
        """
        with self._gateway.connection("read judged documents") as cur:
            require_collection(cur, collection)
            rows = cur.execute(
                """SELECT DISTINCT topic_id, doc_id FROM judgments
                   WHERE collection = ? AND grade IS NOT NULL
                   AND assessor NOT IN (SELECT user_name FROM model_assessors)
                   UNION SELECT DISTINCT topic_id, doc_id FROM adjudications WHERE collection = ?""",
                [collection, collection]).fetchall()
        out: dict[str, set[str]] = {}
        for t, d in rows:
            out.setdefault(t, set()).add(d)
        return out

    # -- as judging reads them ------------------------------------------------------

    def judging_pool_items(self, pool_version: str) -> tuple[str, list[PoolItem]]:
        """The collection and the entries of one pool version (not its ancestors)
        as assignment needs them: topic, doc and priority rank only.

        Raises:
            UnknownNameError: unknown pool version.
        """
        with self._gateway.connection("read pool for assignment") as cur:
            collection, _v, _p = pool_row(cur, pool_version)
            rows = cur.execute(
                "SELECT topic_id, doc_id, priority_rank FROM pool_entries WHERE pool_version = ? "
                "ORDER BY topic_id, priority_rank, doc_id",
                [pool_version],
            ).fetchall()
        return collection, [PoolItem(t, d, int(r)) for t, d, r in rows]

    def judging_pools(self) -> list[dict[str, Any]]:
        """Pool versions with their collection, parent, size and creation time, newest first."""
        with self._gateway.connection("list pools") as cur:
            rows = cur.execute(
                "SELECT pool_version, collection, parent_version, depth, n_topics, n_entries, runs, created_at "
                "FROM pools ORDER BY created_at DESC, pool_version"
            ).fetchall()
        keys = ("pool_version", "collection", "parent_version", "depth", "n_topics", "n_entries", "runs", "created_at")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def pool_run_contributions(self, pool_version: str) -> list[tuple[str, int, int]]:
        """Per run pooled into a pool version: (run_name, documents contributed,
        documents only this run contributed), sorted by run name. Lead-only
        information: never shown to assessors."""
        with self._gateway.connection("read pool provenance") as cur:
            pool_row(cur, pool_version)
            rows = cur.execute(
                """
                WITH prov AS (SELECT topic_id, doc_id, run_name FROM pool_provenance WHERE pool_version = ?),
                     solo AS (SELECT topic_id, doc_id FROM prov GROUP BY topic_id, doc_id HAVING count(*) = 1)
                SELECT p.run_name, count(*),
                       count(*) FILTER (WHERE (p.topic_id, p.doc_id) IN (SELECT topic_id, doc_id FROM solo))
                FROM prov p GROUP BY p.run_name ORDER BY p.run_name
                """,
                [pool_version],
            ).fetchall()
        return [(r[0], int(r[1]), int(r[2])) for r in rows]

    def _require_pool(self, cur: Any, pool_version: str) -> None:
        if not cur.execute("SELECT 1 FROM pools WHERE pool_version = ?", [pool_version]).fetchall():
            raise UnknownNameError("pool version", pool_version, _pool_names(cur))


def pool_run_files(
    paths: Sequence[str | Path],
    depth: int,
    *,
    rrf_k: float = 60.0,
    budget: int | None = None,
) -> PoolColumns:
    """Depth-k pool of TREC run files with provenance and RRF priority, all in DuckDB.

    The bulk path: parses every file in one in-memory DuckDB database
    (``workbench.store.runs.load_run_tops``) and computes entries, provenance,
    priority (sum of 1 / (k + rank), summed in run-name order) and priority rank
    (priority desc, doc_id desc) in SQL. The result equals
    ``pooling.pool.build_pool(runs, depth, priority=RRF(k=rrf_k), budget=budget)``
    over the same files read by ``formats.trec.read_run``: same entries, same
    provenance, same content hash (tested), at a fraction of the time.

    Args:
        paths: run files, named by file stem (distinct stems).
        depth: cutoff k, >= 1.
        rrf_k: the RRF constant of the priority, >= 0.
        budget: per-topic cap (highest priority first), >= 1; None = no cap.

    Returns:
        ``PoolColumns`` (``.to_pool()`` gives the row objects).

    Raises:
        ValidationError: bad depth, budget or k; no files; repeated stems.
        InputFormatError: a malformed file (file:line).

    Source:
        TREC depth-k pooling; RRF priority (Cormack et al., SIGIR 2009,
        doi:10.1145/1571941.1572114), as ``pooling.pool.build_pool``.
    """
    import duckdb

    from pooling.fusion import RRF
    from workbench.store.runs import load_run_tops

    if budget is not None and budget < 1:
        raise ValidationError(f"per-topic budget must be >= 1, found {budget}; omit it for no cap")
    if not (rrf_k >= 0):
        raise ValidationError(f"rrf k must be a finite number >= 0, found {rrf_k}")
    con = duckdb.connect(":memory:")
    con.execute("SET enable_progress_bar = false")  # DuckDB's own bar on stderr; progress is ours to report
    try:
        stems = load_run_tops(con, paths, depth)
        con.execute(
            """CREATE TEMP TABLE wb_entries AS
               WITH e AS (
                   SELECT topic_id, doc_id, min(rank) AS best_rank, count(*) AS n_runs,
                          list_sum(list(1.0::DOUBLE / ($k + rank) ORDER BY run_name)) AS priority
                   FROM wb_tops GROUP BY ALL)
               SELECT *, row_number() OVER (PARTITION BY topic_id ORDER BY priority DESC, doc_id DESC)
                         AS priority_rank
               FROM e""", {"k": float(rrf_k)})
        cap = budget if budget is not None else 2**62
        entries = con.execute(
            "SELECT topic_id, doc_id, best_rank, n_runs, priority, priority_rank FROM wb_entries "
            "WHERE priority_rank <= $cap ORDER BY topic_id, priority_rank", {"cap": cap}).fetchnumpy()
        provenance = con.execute(
            """SELECT t.topic_id, t.doc_id, t.run_name, t.rank FROM wb_tops t
               SEMI JOIN (SELECT topic_id, doc_id FROM wb_entries WHERE priority_rank <= $cap) USING (topic_id, doc_id)
               ORDER BY t.topic_id, t.doc_id, t.run_name""", {"cap": cap}).fetchnumpy()
    except duckdb.Error as e:
        raise StoreError(f"could not pool the run files: {e}") from e
    finally:
        con.close()
    params: dict[str, Any] = {"priority": RRF(k=float(rrf_k)).params, "budget": budget}
    return PoolColumns(
        depth, tuple(sorted(stems)),
        {c: entries[c].tolist() for c in ("topic_id", "doc_id", "best_rank", "n_runs", "priority", "priority_rank")},
        {c: provenance[c].tolist() for c in ("topic_id", "doc_id", "run_name", "rank")},
        params=params)


def _next_pool_name(cur: Any, collection: str) -> str:
    names = [r[0] for r in cur.execute("SELECT pool_version FROM pools WHERE collection = ?", [collection]).fetchall()]
    pattern = re.compile(re.escape(collection) + r"-pool-v(\d+)$")
    taken = [int(m.group(1)) for n in names if (m := pattern.match(n))]
    return f"{collection}-pool-v{max(taken, default=0) + 1}"


def _pool_tables(pool: Pool | PoolColumns) -> tuple[Any, Any]:
    """(entries, provenance) of a pool as Arrow tables."""
    import pyarrow as pa

    if isinstance(pool, PoolColumns):
        ecols, pcols = pool.entries, pool.provenance
    else:
        ecols = dict(zip(("topic_id", "doc_id", "best_rank", "n_runs", "priority", "priority_rank"),
                         map(list, zip(*pool.entry_rows(), strict=True)), strict=True)) if pool.entries else {}
        pcols = dict(zip(("topic_id", "doc_id", "run_name", "rank"),
                         map(list, zip(*pool.provenance_rows(), strict=True)), strict=True)) if pool.provenance else {}
    entries = pa.table({
        "topic_id": pa.array(ecols.get("topic_id", []), pa.string()),
        "doc_id": pa.array(ecols.get("doc_id", []), pa.string()),
        "best_rank": pa.array(ecols.get("best_rank", []), pa.int32()),
        "n_runs": pa.array(ecols.get("n_runs", []), pa.int32()),
        "priority": pa.array(ecols.get("priority", []), pa.float64()),
        "priority_rank": pa.array(ecols.get("priority_rank", []), pa.int32()),
    })
    provenance = pa.table({
        "topic_id": pa.array(pcols.get("topic_id", []), pa.string()),
        "doc_id": pa.array(pcols.get("doc_id", []), pa.string()),
        "run_name": pa.array(pcols.get("run_name", []), pa.string()),
        "rank": pa.array(pcols.get("rank", []), pa.int32()),
    })
    return entries, provenance


def _insert_pool(cur: Any, name: str, pool: Pool | PoolColumns, tables: tuple[Any, Any], *, collection: str,
                 collection_version: str, parent_version: str | None, kind: str = STRATEGY,
                 content_hash: str | None = None) -> Any:
    """Insert one pool version inside the caller's transaction; returns its ``pools`` row.

    ``kind`` is ``depth-k union`` or ``sample``; ``content_hash`` defaults to the pool's."""
    entries, provenance = tables
    require_collection(cur, collection)
    if cur.execute("SELECT 1 FROM pools WHERE pool_version = ?", [name]).fetchall():
        raise DuplicateNameError(
            f"pool version {name!r} already exists and pool versions are immutable; choose another name")
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
        "strategy, params, runs, n_topics, n_entries, content_hash, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [name, collection, collection_version, parent_version or None, pool.depth, pool.strategy,
         json.dumps(dict(pool.params), sort_keys=True), json.dumps(list(pool.runs)),
         pool.n_topics, pool.n_entries, content_hash or pool.content_hash, kind])
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
    return row
