"""The store's runs (``store.runs``): immutable runs with provenance, and rerank lineage.

A stored run records its system ``kind`` (``bm25``, ``dense``, ``fusion``,
``imported``), its parameters (JSON), the collection version it was produced
over, the depth it was produced at, a content hash, and one status per topic of
the collection:

* ``ok``: results were produced (``n_results`` > 0);
* ``empty``: no results (blank query, only stop words, nothing matched, or the
  imported file has no line for the topic): an empty list, never a zero;
* ``error``: the retriever failed on that topic; ``message`` says how.

Entries keep the canonical rank (``workbench.ranking.ranked``: score desc,
doc_id desc) next to the score. Runs are written once, in one transaction, and
never changed (a name is never reused).

A rerank run is stored as a run of kind ``rerank`` (``save_run``)
and, in the same transaction, one ``run_lineage`` row naming its candidate run
and candidate depth, the reranker and the model's identity, plus (for a run the
workbench produced) one ``rerank_costs`` row (device, batch size, threads,
preparation time) and one ``rerank_topic_costs`` row per reranked topic with
its measured wall time. Like every run, all of it is written once and never
changed.

``read_run_tops`` is the bulk path for many run files (pooling benchmarks): one
DuckDB query parses every file and keeps each run's top ``depth`` per topic
under the same canonical rule.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from workbench.errors import (
    DuplicateNameError,
    InputFormatError,
    UnknownNameError,
    ValidationError,
    shown,
)
from workbench.lineage import RerankCost, RunLineage, TopicCost
from workbench.ranking import natural_key, ranked
from workbench.store.collection_rows import (
    latest_version,
    missing_ids,
    require_collection,
    shown_id,
)
from workbench.store.core import Gateway
from workbench.text import check_stored_name
from workbench.types import Run, RunInfo

STATUSES = ("ok", "empty", "error")


@dataclass(frozen=True)
class RunTopicStatus:
    """One ``run_topics`` row: the outcome of a run for one topic (latency in ms when known)."""

    topic_id: str
    status: str
    n_results: int
    message: str
    latency_ms: float | None = None


@dataclass(frozen=True)
class RunSummary:
    """A stored run with its counts, for listings.

    Attributes:
        info: the run's ``RunInfo``.
        n_topics: topics with a status row (all topics of the collection).
        n_ok / n_empty / n_error: topics per status.
        n_entries: result rows.
        content_hash: sha256 over the run's (topic, doc, score) rows.
        source: the imported file ("" otherwise).
        created_at: when it was stored.
    """

    info: RunInfo
    n_topics: int
    n_ok: int
    n_empty: int
    n_error: int
    n_entries: int
    content_hash: str
    source: str
    created_at: datetime


def run_content_hash(run: Run) -> str:
    """sha256 (hex) over ``topic\\tdoc\\trepr(score)`` lines sorted by topic and doc."""
    h = hashlib.sha256()
    for topic_id in sorted(run):
        for doc_id in sorted(run[topic_id]):
            h.update(f"{topic_id}\t{doc_id}\t{float(run[topic_id][doc_id])!r}\n".encode())
    return h.hexdigest()


def check_run_name(name: str) -> None:
    """Raise ``ValidationError`` unless ``name`` can be a run name (and TREC run tag)."""
    check_stored_name("run name", name, " (it is the TREC run tag)")


def _run_names(cur: Any) -> list[str]:
    return [r[0] for r in cur.execute("SELECT run_name FROM runs").fetchall()]


def _info_row(row: Sequence[Any]) -> RunInfo:
    name, kind, params, depth, collection, version, description = row
    return RunInfo(name=name, kind=kind, params=json.loads(params), depth=int(depth),
                   collection=collection, collection_version=version, description=description)


_INFO_COLS = "run_name, kind, params, depth, collection, collection_version, description"


def _lineage_row(row: tuple[Any, ...]) -> RunLineage:
    name, cand, depth, reranker, kind, model_name, model_hash, origin = row
    return RunLineage(name, cand, int(depth), reranker, kind, model_name, model_hash, origin)


class Runs:
    """Runs: saved once with a status per topic, read back, and the lineage of rerank runs (``store.runs``).

    Every multi-row change is one transaction.

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    # -- writing -------------------------------------------------------------------

    def save_run(
        self,
        info: RunInfo,
        run: Run,
        statuses: Mapping[str, str] | None = None,
        messages: Mapping[str, str] | None = None,
        *,
        source: str = "",
        latencies: Mapping[str, float] | None = None,
        extra: Callable[[Any], None] | None = None,
    ) -> RunInfo:
        """Store a run, its ranks and a status for every topic of the collection.

        Args:
            info: name, kind, params, depth and collection; an empty
                ``collection_version`` means the collection's latest version.
            run: topic_id -> doc_id -> finite score.
            statuses: topic_id -> ``ok`` | ``empty`` | ``error`` as reported by
                the retriever. Topics not given get ``ok`` when they have results
                and ``empty`` otherwise (also every collection topic the run lacks).
            messages: topic_id -> why a topic is ``empty`` or ``error``.
            source: the file a run was imported from ("" otherwise).
            latencies: topic_id -> latency of the retrieval call in milliseconds.
            extra: called with the transaction's cursor after the run's rows are
                written, for what else the store keeps about the run (a rerank
                run's lineage and cost, a dense run's index stats): all of it
                commits, or none.

        Returns:
            ``info`` with ``collection_version`` resolved.

        Raises:
            DuplicateNameError: the run name is taken (runs are immutable).
            UnknownNameError: unknown collection or collection version.
            ValidationError: bad name, depth < 1, a non-finite score, a topic or
                document not in the collection, or a status that contradicts
                the results (``ok`` without results, ``empty``/``error`` with some).
        """
        import pyarrow as pa

        check_run_name(info.name)
        if info.depth < 1:
            raise ValidationError(f"run {info.name!r}: expected depth >= 1, found {info.depth}")
        statuses = dict(statuses or {})
        messages = dict(messages or {})
        latencies = dict(latencies or {})
        topics_col: list[str] = []
        docs_col: list[str] = []
        ranks_col: list[int] = []
        scores_col: list[float] = []
        for topic_id, scores in run.items():
            for row in ranked(scores):
                if not math.isfinite(row.score):
                    raise ValidationError(
                        f"run {info.name!r}: topic {shown_id(topic_id)} document {shown_id(row.doc_id)} has score "
                        f"{row.score!r}; expected a finite number")
                topics_col.append(str(topic_id))
                docs_col.append(str(row.doc_id))
                ranks_col.append(row.rank)
                scores_col.append(row.score)
        for topic_id, status in statuses.items():
            n = len(run.get(topic_id, {}))
            if status not in STATUSES:
                raise ValidationError(
                    f"run {info.name!r}: topic {shown_id(topic_id)} status {status!r}; expected one of {', '.join(STATUSES)}")
            if (status == "ok") != (n > 0):
                raise ValidationError(
                    f"run {info.name!r}: topic {shown_id(topic_id)} has status {status!r} and {n} result(s); "
                    "'ok' needs results, 'empty' and 'error' need none")
        params = json.dumps(dict(info.params), sort_keys=True, default=str)
        content_hash = run_content_hash(run)

        with self._gateway.transaction(f"save run {info.name}") as cur:
            require_collection(cur, info.collection)
            version = info.collection_version or latest_version(cur, info.collection)
            known_versions = [r[0] for r in cur.execute(
                "SELECT collection_version FROM collection_versions WHERE collection = ?",
                [info.collection]).fetchall()]
            if version not in known_versions:
                raise UnknownNameError(f"version of collection {info.collection!r}", version, known_versions)
            if cur.execute("SELECT 1 FROM runs WHERE run_name = ?", [info.name]).fetchall():
                raise DuplicateNameError(
                    f"run {info.name!r} already exists and runs are immutable; choose another --name")
            topics = {r[0] for r in cur.execute(
                "SELECT topic_id FROM topics WHERE collection = ?", [info.collection]).fetchall()}
            unknown = sorted((set(run) | set(statuses)) - topics, key=natural_key)
            if unknown:
                raise ValidationError(
                    f"run {info.name!r}: {len(unknown)} topic(s) are not topics of collection "
                    f"{info.collection!r}, e.g. {shown_id(unknown[0])}; check the topic ids")
            absent = missing_ids(cur, version, set(docs_col))
            if absent:
                raise ValidationError(
                    f"run {info.name!r}: {len(absent)} document(s) are not in collection "
                    f"{info.collection!r} version {version[:12]}, e.g. {shown_id(sorted(absent)[0])}")
            cur.execute(
                "INSERT INTO runs (run_name, collection, collection_version, kind, params, depth, "
                "description, source, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [info.name, info.collection, version, info.kind, params, info.depth,
                 info.description, source, content_hash])
            entries = pa.table({"topic_id": topics_col, "doc_id": docs_col,
                                "rank": pa.array(ranks_col, pa.int32()),
                                "score": pa.array(scores_col, pa.float64())})
            status_topics = sorted(topics)
            status_rows = pa.table({
                "topic_id": status_topics,
                "status": [statuses.get(t) or ("ok" if run.get(t) else "empty") for t in status_topics],
                "n_results": pa.array([len(run.get(t, {})) for t in status_topics], pa.int32()),
                "message": [messages.get(t, "" if run.get(t) else
                                         ("" if t in statuses else "no results given for this topic"))
                            for t in status_topics],
                "latency_ms": pa.array([latencies.get(t) for t in status_topics], pa.float64()),
            })
            cur.register("wb_run_entries", entries)
            cur.register("wb_run_topics", status_rows)
            try:
                cur.execute("INSERT INTO run_entries SELECT ?, topic_id, doc_id, rank, score "
                            "FROM wb_run_entries", [info.name])
                cur.execute("INSERT INTO run_topics (run_name, topic_id, status, n_results, message, latency_ms) "
                            "SELECT ?, topic_id, status, n_results, message, latency_ms FROM wb_run_topics",
                            [info.name])
            finally:
                cur.unregister("wb_run_entries")
                cur.unregister("wb_run_topics")
            if extra is not None:
                extra(cur)
        return RunInfo(name=info.name, kind=info.kind, params=json.loads(params), depth=info.depth,
                       collection=info.collection, collection_version=version,
                       description=info.description)

    def import_run_file(
        self,
        path: str | Path,
        name: str,
        *,
        collection: str,
        description: str = "",
        trust_file_order: bool = False,
        status_file: str | Path | None = None,
    ) -> RunInfo:
        """Store a run file (TREC text, or Parquet: ``formats.parquet.read_run``) as a run of kind ``imported``.

        The depth recorded is the largest number of results of any topic.
        Collection topics without a line in the file get status ``empty``,
        unless a status side file (``formats.status``) says otherwise: its
        ``error`` rows (timeouts, rate limits) are stored as ``error`` with the
        message and every row's latency is kept.

        Args:
            path: the TREC run file (``topic Q0 doc rank score tag``) or a
                Parquet run (``topic_id, doc_id, score[, rank]``; errors name
                its row).
            name: the stored run's name (the file's tag, a Parquet file's stem, is kept in params).
            collection: the collection the run was produced over.
            description: free text (e.g. which system, which settings).
            trust_file_order: order by the file's rank column instead of scores.
            status_file: the run's status side file (topic_id, status, latency_ms, error), or None.

        Returns:
            The stored ``RunInfo``. Re-importing identical content (same
            content hash) under the same name over the same collection version
            is a no-op that returns the stored run's ``RunInfo``.

        Raises:
            InputFormatError: the file is malformed, or names a topic or document
                that is not in the collection (file:line of the first one); the
                status file is malformed, names a topic of no collection, or
                contradicts the run (its file:line).
            DuplicateNameError: the run name is taken by different content
                (or another collection version or kind).
            UnknownNameError: unknown collection.
        """
        from workbench.formats import parquet, trec
        from workbench.formats.status import check_against_run, read_status_file

        is_parquet = parquet.is_parquet(path)
        reader = parquet.read_run if is_parquet else trec.read_run
        rf = reader(path, trust_file_order=trust_file_order)

        def id_rows() -> Iterator[tuple[int, str, str]]:
            return parquet.scan_run_ids(path) if is_parquet else trec.scan_ids(path, "run")

        def at(lineno: int, problem: str) -> InputFormatError:
            return parquet.row_error(path, lineno, problem) if is_parquet else InputFormatError(str(path), lineno, problem)

        status_rows = read_status_file(status_file) if status_file is not None else {}
        if status_file is not None:
            check_against_run(status_file, status_rows, {t: len(d) for t, d in rf.run.items()})
        with self._gateway.connection("check run ids") as cur:
            require_collection(cur, collection)
            version = latest_version(cur, collection)
            same = cur.execute(
                f"SELECT {_INFO_COLS} FROM runs WHERE run_name = ? AND kind = 'imported' AND collection = ? "
                "AND collection_version = ? AND content_hash = ?",
                [name, collection, version, run_content_hash(rf.run)]).fetchall()
            if same:  # identical re-import: a no-op, as for collections, qrels and pools
                return _info_row(same[0])
            topics = {r[0] for r in cur.execute(
                "SELECT topic_id FROM topics WHERE collection = ?", [collection]).fetchall()}
            absent = missing_ids(cur, version, {d for docs in rf.run.values() for d in docs})
        bad_topics = set(rf.run) - topics
        if bad_topics or absent:
            for lineno, topic_id, doc_id in id_rows():
                if topic_id in bad_topics:
                    raise at(
                        lineno,
                        f"expected a topic of collection {collection!r}, found {shown_id(topic_id)} "
                        f"({len(bad_topics)} unknown topic id(s) in the file). "
                        "Check that the run belongs to this collection and uses its topic ids.")
                if doc_id in absent:
                    raise at(
                        lineno,
                        f"expected a document of collection {collection!r}, found {shown_id(doc_id)} "
                        f"({len(absent)} unknown doc id(s) in the file). "
                        "Check that the run was produced over this collection.")
        for row in status_rows.values():
            if row.topic_id not in topics:
                raise InputFormatError(
                    str(status_file), row.line,
                    f"expected a topic of collection {collection!r}, found {shown_id(row.topic_id)}.")
        params: dict[str, object] = {"tag": rf.tag, "lines": rf.n_lines, "trust_file_order": trust_file_order,
                                     "duplicates_dropped": sum(rf.duplicates.values())}
        if status_file is not None:
            params["status_file"] = str(status_file)
        if rf.odd_ranks is not None:  # the import warns (formats.trec.odd_ranks_warning); kept as provenance
            params["odd_ranks"] = dataclasses.asdict(rf.odd_ranks)
        depth = max((len(d) for d in rf.run.values()), default=1)
        messages = {t: "the file has no line for this topic" for t in topics - set(rf.run)}
        messages.update({r.topic_id: r.error or f"status file: {r.status}" for r in status_rows.values()
                         if r.status != "ok"})
        statuses = {r.topic_id: r.status for r in status_rows.values()}
        latencies = {r.topic_id: r.latency_ms for r in status_rows.values() if r.latency_ms is not None}
        info = RunInfo(name=name, kind="imported", params=params, depth=max(depth, 1),
                       collection=collection, collection_version=version, description=description)
        return self.save_run(info, rf.run, statuses, messages, source=str(path), latencies=latencies)

    # -- reading --------------------------------------------------------------------

    def _require_run(self, cur: Any, name: str) -> None:
        if not cur.execute("SELECT 1 FROM runs WHERE run_name = ?", [name]).fetchall():
            raise UnknownNameError("run", name, _run_names(cur))

    def has_run(self, name: str) -> bool:
        """Whether a run of that name is stored."""
        with self._gateway.connection("check run name") as cur:
            return bool(cur.execute("SELECT 1 FROM runs WHERE run_name = ?", [name]).fetchall())

    def get_run(self, name: str, *, depth: int | None = None) -> dict[str, dict[str, float]]:
        """A stored run as topic_id -> doc_id -> score.

        Args:
            name: the run.
            depth: keep only ranks <= depth (None = all).

        Returns:
            Only topics with results (``empty``/``error`` topics are absent; see
            ``get_run_statuses``); documents in rank order.

        Raises:
            UnknownNameError: no such run (the message lists the known ones).
        """
        with self._gateway.connection("read run") as cur:
            self._require_run(cur, name)
            rows = cur.execute(
                "SELECT topic_id, doc_id, score FROM run_entries WHERE run_name = ? "
                "AND rank <= ? ORDER BY topic_id, rank",
                [name, min(depth, 2**31 - 1) if depth is not None else 2**31 - 1]).fetchall()
        out: dict[str, dict[str, float]] = {}
        for topic_id, doc_id, score in rows:
            out.setdefault(topic_id, {})[doc_id] = score
        return out

    def get_run_info(self, name: str) -> RunInfo:
        """Provenance of a stored run.

        Raises:
            UnknownNameError: no such run.
        """
        with self._gateway.connection("read run info") as cur:
            rows = cur.execute(f"SELECT {_INFO_COLS} FROM runs WHERE run_name = ?", [name]).fetchall()
            if not rows:
                raise UnknownNameError("run", name, _run_names(cur))
        return _info_row(rows[0])

    def get_run_statuses(self, name: str) -> dict[str, str]:
        """topic_id -> ``ok`` | ``empty`` | ``error`` for every topic of the run's collection.

        Raises:
            UnknownNameError: no such run.
        """
        return {r.topic_id: r.status for r in self.get_run_topic_statuses(name)}

    def get_run_topic_statuses(self, name: str) -> list[RunTopicStatus]:
        """Per-topic status rows (with result counts and messages), topics in natural order (2 before 10).

        Raises:
            UnknownNameError: no such run.
        """
        with self._gateway.connection("read run statuses") as cur:
            self._require_run(cur, name)
            rows = cur.execute(
                "SELECT topic_id, status, n_results, message, latency_ms FROM run_topics WHERE run_name = ? "
                "ORDER BY topic_id", [name]).fetchall()
        rows.sort(key=lambda r: natural_key(r[0]))
        return [RunTopicStatus(t, s, int(n), m, None if lat is None else float(lat)) for t, s, n, m, lat in rows]

    def covered_topics(self, names: Sequence[str]) -> dict[str, set[str]]:
        """run name -> the topics it has results for (status ``ok``: one or more results), from the
        per-topic status rows alone (one query for every run; no run entry is read).

        Raises:
            UnknownNameError: an unknown run.
        """
        with self._gateway.connection("read run coverage") as cur:
            for name in dict.fromkeys(names):
                self._require_run(cur, name)
            rows = cur.execute(
                "SELECT run_name, topic_id FROM run_topics WHERE list_contains(?, run_name) AND status = 'ok' "
                "AND n_results > 0", [list(names)]).fetchall()
        out: dict[str, set[str]] = {name: set() for name in names}
        for name, topic_id in rows:
            out[name].add(topic_id)
        return out

    def list_runs(self, collection: str | None = None) -> list[RunInfo]:
        """Stored runs, oldest first (then by name); all collections when None."""
        return [s.info for s in self.run_summaries(collection)]

    def run_summaries(self, collection: str | None = None) -> list[RunSummary]:
        """Stored runs with counts, oldest first (then by name); all collections when None."""
        with self._gateway.connection("list runs") as cur:
            rows = cur.execute(
                f"""SELECT {_INFO_COLS}, r.content_hash, r.source, r.created_at,
                       count(t.topic_id), count(t.topic_id) FILTER (WHERE t.status = 'ok'),
                       count(t.topic_id) FILTER (WHERE t.status = 'empty'),
                       count(t.topic_id) FILTER (WHERE t.status = 'error'),
                       coalesce(sum(t.n_results), 0)
                    FROM runs r LEFT JOIN run_topics t USING (run_name)
                    WHERE ? IS NULL OR r.collection = ?
                    GROUP BY ALL ORDER BY r.created_at, r.run_name""",
                [collection, collection]).fetchall()
        return [RunSummary(_info_row(r[:7]), int(r[10]), int(r[11]), int(r[12]), int(r[13]),
                           int(r[14]), r[7], r[8], r[9]) for r in rows]


    # -- for scoring and the identifier audit ------------------------------------------

    def run_entries_arrow(self, run_name: str) -> Any:
        """A stored run's rows as a ``pyarrow.Table`` (topic_id, doc_id, score), by topic then rank.

        Raises:
            UnknownNameError: no such run.
        """
        with self._gateway.connection("read run for scoring") as cur:
            if not cur.execute("SELECT 1 FROM runs WHERE run_name = ?", [run_name]).fetchall():
                known = [r[0] for r in cur.execute("SELECT run_name FROM runs").fetchall()]
                raise UnknownNameError("run", run_name, known)
            return cur.sql(
                "SELECT topic_id, doc_id, score FROM run_entries WHERE run_name = ? ORDER BY topic_id, rank",
                params=[run_name],
            ).to_arrow_table()

    def run_doc_coverage(self, run_name: str, collection_version: str) -> tuple[int, set[str]]:
        """(distinct doc ids of a stored run, those not in ``collection_version``).

        Raises:
            UnknownNameError: no such run.
        """
        with self._gateway.connection("audit run ids") as cur:
            if not cur.execute("SELECT 1 FROM runs WHERE run_name = ?", [run_name]).fetchall():
                known = [r[0] for r in cur.execute("SELECT run_name FROM runs").fetchall()]
                raise UnknownNameError("run", run_name, known)
            n = cur.execute("SELECT count(DISTINCT doc_id) FROM run_entries WHERE run_name = ?",
                            [run_name]).fetchall()[0][0]
            missing = cur.execute(
                """SELECT DISTINCT e.doc_id FROM run_entries e WHERE e.run_name = ? AND NOT EXISTS (
                     SELECT 1 FROM version_documents vd WHERE vd.collection_version = ? AND vd.doc_id = e.doc_id)""",
                [run_name, collection_version]).fetchall()
        return int(n), {r[0] for r in missing}

    def get_run_content_hash(self, run_name: str) -> str:
        """A stored run's content hash (sha256 over its sorted topic, doc, score rows).

        Raises:
            UnknownNameError: no such run.
        """
        with self._gateway.connection("read run hash") as cur:
            rows = cur.execute("SELECT content_hash FROM runs WHERE run_name = ?", [run_name]).fetchall()
            if not rows:
                known = [r[0] for r in cur.execute("SELECT run_name FROM runs").fetchall()]
                raise UnknownNameError("run", run_name, known)
        return str(rows[0][0])

    def dense_runs(self, collection_version: str) -> list[tuple[str, dict[str, Any], int]]:
        """(run name, params, depth) of the dense runs over a collection version, oldest first."""
        with self._gateway.connection("list dense runs") as cur:
            rows = cur.execute("SELECT run_name, params, depth FROM runs WHERE kind = 'dense' AND "
                               "collection_version = ? ORDER BY created_at, run_name",
                               [collection_version]).fetchall()
        return [(n, json.loads(p), int(d)) for n, p, d in rows]

    # -- rerank lineage and cost -----------------------------------------------------------

    def save_rerank_run(
        self,
        info: RunInfo,
        run: Run,
        lineage: RunLineage,
        *,
        cost: RerankCost | None = None,
        statuses: Mapping[str, str] | None = None,
        messages: Mapping[str, str] | None = None,
        source: str = "",
    ) -> RunInfo:
        """Store a rerank run with its lineage (and measured cost) in one transaction.

        Args:
            info: the run's provenance (kind ``rerank``); as ``save_run``.
            run: topic_id -> doc_id -> reranker score.
            lineage: the candidate run and depth, the reranker and the model;
                ``lineage.run_name`` must equal ``info.name``.
            cost: the measured cost (None for an imported run).
            statuses, messages, source: as ``save_run``.

        Returns:
            The stored ``RunInfo``.

        Raises:
            UnknownNameError: the candidate run is not stored.
            ValidationError: the lineage names another run, a candidate depth
                < 1, a candidate run of another collection version, or as
                ``save_run``.
            DuplicateNameError: the run name is taken.
        """
        if lineage.run_name != info.name:
            raise ValidationError(f"lineage of run {lineage.run_name!r} given for run {info.name!r}")
        if lineage.candidate_depth < 1:
            raise ValidationError(f"run {info.name!r}: expected a candidate depth >= 1, found {lineage.candidate_depth}")
        candidate = self.get_run_info(lineage.candidate_run)
        if info.collection and candidate.collection != info.collection:
            raise ValidationError(f"run {info.name!r} is over collection {info.collection!r}, its candidate run "
                                  f"{candidate.name!r} over {candidate.collection!r}")

        def write(cur: Any) -> None:
            import pyarrow as pa

            cur.execute(
                "INSERT INTO run_lineage (run_name, candidate_run, candidate_depth, reranker, reranker_kind, "
                "model_name, model_hash, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [lineage.run_name, lineage.candidate_run, lineage.candidate_depth, lineage.reranker,
                 lineage.reranker_kind, lineage.model_name, lineage.model_hash, lineage.origin])
            if cost is None:
                return
            cur.execute("INSERT INTO rerank_costs (run_name, device, batch_size, threads, prepare_ms) "
                        "VALUES (?, ?, ?, ?, ?)",
                        [info.name, cost.device, cost.batch_size, cost.threads, cost.prepare_ms])
            rows = pa.table({
                "topic_id": [t.topic_id for t in cost.topics],
                "n_documents": pa.array([t.n_documents for t in cost.topics], pa.int32()),
                "wall_ms": pa.array([t.wall_ms for t in cost.topics], pa.float64()),
            })
            cur.register("wb_topic_costs", rows)
            try:
                cur.execute("INSERT INTO rerank_topic_costs SELECT ?, topic_id, n_documents, wall_ms "
                            "FROM wb_topic_costs", [info.name])
            finally:
                cur.unregister("wb_topic_costs")

        version = candidate.collection_version
        if info.collection_version and info.collection_version != version:
            raise ValidationError(
                f"run {info.name!r} is over collection version {info.collection_version[:12]}, its candidate "
                f"run {candidate.name!r} over {version[:12]}")
        stored: RunInfo = self.save_run(
            RunInfo(info.name, info.kind, info.params, info.depth, candidate.collection, version, info.description),
            run, statuses, messages, source=source, extra=write)
        return stored

    def get_run_lineage(self, name: str) -> RunLineage | None:
        """The lineage of a rerank run, or None for a run that reranks nothing.

        Raises:
            UnknownNameError: no such run.
        """
        with self._gateway.connection("read run lineage") as cur:
            if not cur.execute("SELECT 1 FROM runs WHERE run_name = ?", [name]).fetchall():
                names = [r[0] for r in cur.execute("SELECT run_name FROM runs").fetchall()]
                raise UnknownNameError("run", name, names)
            rows = cur.execute(
                "SELECT run_name, candidate_run, candidate_depth, reranker, reranker_kind, model_name, model_hash, "
                "origin FROM run_lineage WHERE run_name = ?", [name]).fetchall()
        return _lineage_row(rows[0]) if rows else None

    def get_rerank_cost(self, name: str) -> RerankCost | None:
        """The measured cost of a produced rerank run (None when not measured, e.g. imported).

        Returns:
            ``RerankCost`` with one ``TopicCost`` per reranked topic, topics in id order.
        """
        with self._gateway.connection("read rerank cost") as cur:
            head = cur.execute("SELECT device, batch_size, threads, prepare_ms FROM rerank_costs WHERE run_name = ?",
                               [name]).fetchall()
            if not head:
                return None
            topics = cur.execute("SELECT topic_id, n_documents, wall_ms FROM rerank_topic_costs WHERE run_name = ? "
                                 "ORDER BY topic_id", [name]).fetchall()
        device, batch_size, threads, prepare_ms = head[0]
        return RerankCost(name, device, int(batch_size), int(threads), float(prepare_ms),
                          tuple(TopicCost(t, int(n), float(ms)) for t, n, ms in topics))

    def rerank_runs_of(self, candidate_run: str) -> list[RunLineage]:
        """Rerank runs whose candidates came from ``candidate_run``, by name."""
        with self._gateway.connection("list rerank runs") as cur:
            rows = cur.execute(
                "SELECT run_name, candidate_run, candidate_depth, reranker, reranker_kind, model_name, model_hash, "
                "origin FROM run_lineage WHERE candidate_run = ? ORDER BY run_name", [candidate_run]).fetchall()
        return [_lineage_row(r) for r in rows]


_RUN_COLUMNS = {"topic_id": "VARCHAR", "q0": "VARCHAR", "doc_id": "VARCHAR", "rank_s": "VARCHAR",
                "score_s": "VARCHAR", "tag": "VARCHAR"}
# The strict reader's rules (workbench.formats.trec), written for DuckDB (RE2): an integer rank
# (any size: ranks are not stored), a plain decimal score that is finite, no byte-order mark
# glued to the first topic id (the strict reader removes it), one tag per file.
_RANK_RE = r"[+-]?[0-9]+"
_SCORE_RE = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_OK = ("coalesce(regexp_full_match(rank_s, '" + _RANK_RE + "') AND regexp_full_match(score_s, '" + _SCORE_RE
       + "') AND isfinite(TRY_CAST(score_s AS DOUBLE)) AND NOT starts_with(topic_id, chr(65279)), false)")


def _check_run_files(paths: Sequence[str | Path], depth: int) -> tuple[list[str], list[str]]:
    if not 1 <= depth <= 1_000_000:
        raise ValidationError(f"expected a depth between 1 and 1,000,000, found {depth}; TREC pools use 100 or less")
    if not paths:
        raise ValidationError("expected at least one run file, found none")
    from workbench.formats.trec import check_regular_file

    files = [str(p) for p in paths]
    for f in files:  # a FIFO would block DuckDB's reader; '-' (stdin) is no bulk input
        if f == "-":
            raise ValidationError("expected run files, found '-': the bulk reader reads files only; "
                                  "save standard input to a file first")
        check_regular_file(f)
    stems = [Path(p).stem for p in files]
    if len(set(stems)) != len(stems):
        dup = sorted({s for s in stems if stems.count(s) > 1})
        raise ValidationError(f"run files must have distinct names, found {shown(dup[0])} twice")
    return files, stems


def _strict_load(con: Any, files: Sequence[str]) -> None:
    """Read every file with the strict reader and put its lines in ``wb_raw``.

    Used whenever the bulk reader finds a problem or DuckDB raises: the strict
    reader's ``InputFormatError`` names file and line (a Parquet file: its row,
    ``formats.parquet.read_run``); if every file is valid
    after all (e.g. a line longer than DuckDB's limit), its result is used, so
    both readers always agree.
    """
    import pyarrow as pa

    from workbench.formats import parquet
    from workbench.formats.trec import read_run

    cols: dict[str, list[Any]] = {"filename": [], "topic_id": [], "doc_id": [], "score": []}
    for p in files:
        rf = parquet.read_run(p) if parquet.is_parquet(p) else read_run(p)
        for topic_id, scores in rf.run.items():
            for doc_id, score in scores.items():
                cols["filename"].append(p)
                cols["topic_id"].append(topic_id)
                cols["doc_id"].append(doc_id)
                cols["score"].append(score)
    table = pa.table({**cols, "score": pa.array(cols["score"], pa.float64())})
    con.register("wb_strict", table)
    con.execute("CREATE OR REPLACE TEMP TABLE wb_strict_rows AS SELECT filename, topic_id, doc_id, score, "
                "'' AS tag, true AS ok FROM wb_strict")
    con.unregister("wb_strict")
    con.execute("CREATE OR REPLACE TEMP VIEW wb_raw AS SELECT * FROM wb_strict_rows")


def load_run_tops(con: Any, paths: Sequence[str | Path], depth: int) -> list[str]:
    """Fill temp table ``wb_tops(filename, run_name, topic_id, doc_id, score, rank)`` (inside ``con``).

    The top ``depth`` of every run file and topic under the canonical rule
    (score desc, doc_id desc), a doc_id repeated within a topic counted once with
    its highest score. Fast path: DuckDB's native CSV reader with single-space
    columns, every column read as text; files with tabs or runs of spaces are
    re-read line by line and split on whitespace. The columns are then checked
    with the strict reader's rules (6 columns, integer rank, plain finite
    decimal score, one tag per file). If any check fails, or DuckDB cannot
    read a file (bytes that are not UTF-8, a line longer than its limit), every
    file goes through the strict reader (``formats.trec.read_run``): its
    ``InputFormatError`` names file and line, and when it accepts the files
    its result is used, so the two readers never disagree. Parquet runs
    (``formats.parquet``: ``topic_id, doc_id, score``, columns by name) are read
    by DuckDB's Parquet reader with that module's rules checked in SQL; a mix of
    Parquet and TREC files, or any problem, takes the strict readers.

    Args:
        con: a DuckDB connection (an in-memory one is enough).
        paths: run files, distinct stems (the run names).
        depth: cutoff k, 1 to 1,000,000.

    Returns:
        The run names (file stems) in ``paths`` order.

    Raises:
        ValidationError: a bad depth, no files, or two files with the same stem.
        InputFormatError: a malformed file (file:line).
    """
    import duckdb
    import pyarrow as pa

    files, stems = _check_run_files(paths, depth)
    con.register("wb_names", pa.table({"filename": files, "run_name": stems}))
    group = ("CREATE OR REPLACE TEMP TABLE wb_groups AS SELECT filename, topic_id, "
             "max_by(doc_id, score, $depth) AS docs, max_by(score, score, $depth + 1) AS scores, "
             "count(*) FILTER (WHERE NOT ok) AS n_bad, min(tag) AS tag_min, max(tag) AS tag_max "
             "FROM wb_raw GROUP BY ALL")
    raw = (f"CREATE OR REPLACE TEMP VIEW wb_raw AS SELECT filename, topic_id, doc_id, "
           f"TRY_CAST(score_s AS DOUBLE) AS score, tag, {_OK} AS ok FROM wb_cols")
    from workbench.formats import parquet

    strict = False
    kinds = [parquet.is_parquet(f) for f in files]
    if any(kinds):
        # Parquet runs: typed columns, checked in SQL with the Parquet reader's rules; a mix of
        # Parquet and TREC files, or any problem, goes through the strict readers.
        strict = not all(kinds) or not _parquet_raw(con, files)
        if not strict:
            try:
                con.execute(group, {"depth": depth})
            except duckdb.Error:
                strict = True
    else:
        strict = _text_fast_path(con, files, raw, group, depth)
    if not strict:
        seen = {r[0] for r in con.execute("SELECT DISTINCT filename FROM wb_groups").fetchall()}
        strict = any(f not in seen for f in files) or bool(con.execute(  # empty files, bad lines, two tags
            "SELECT filename FROM wb_groups GROUP BY filename "
            "HAVING sum(n_bad) > 0 OR min(tag_min) <> max(tag_max) LIMIT 1").fetchall())
    if strict:
        _strict_load(con, files)
        con.execute(group, {"depth": depth})
    _tops_from_groups(con, depth)
    return stems


def _parquet_raw(con: Any, files: Sequence[str]) -> bool:
    """Create view ``wb_raw`` over Parquet run files (columns found by name, per file); False if DuckDB cannot.

    ``ok`` applies ``formats.parquet``'s rules in SQL: ids non-empty without
    whitespace or control characters, finite scores (NULLs make it false).
    """
    import duckdb

    from workbench.formats import parquet

    union = None
    try:
        for f in files:
            try:
                names = parquet.run_column_names(f)
            except InputFormatError:
                return False  # the strict reader says what is wrong
            t, d, sc = (parquet.quote(names[r]) for r in ("topic_id", "doc_id", "score"))
            space = parquet.BAD_ID_RE2  # a constant of the module, not user data
            ok = (f"coalesce({t} <> '' AND NOT regexp_matches({t}, '{space}') AND {d} <> '' AND "
                  f"NOT regexp_matches({d}, '{space}') AND isfinite({sc}::DOUBLE), false)")
            rel = con.read_parquet(f, filename=True).project(
                f"filename, {t}::VARCHAR AS topic_id, {d}::VARCHAR AS doc_id, {sc}::DOUBLE AS score, '' AS tag, "
                f"{ok} AS ok")
            union = rel if union is None else union.union(rel)
        assert union is not None  # _check_run_files refused an empty list
        union.create_view("wb_raw")
    except duckdb.Error:
        return False
    return True


def _text_fast_path(con: Any, files: Sequence[str], raw: str, group: str, depth: int) -> bool:
    """Fill ``wb_groups`` from TREC text files with DuckDB's CSV reader; True when the strict reader must take over."""
    import duckdb

    strict = False
    try:  # fast path: single spaces between columns
        con.read_csv(files, delimiter=" ", quotechar="", escapechar="", header=False, filename=True,
                     auto_detect=False, columns=_RUN_COLUMNS).create_view("wb_cols")
        con.execute(raw)
        con.execute(group, {"depth": depth})
    except duckdb.Error:  # tabs or runs of spaces: split each line on whitespace
        try:
            con.read_csv(files, delimiter="\x1f", quotechar="", escapechar="", header=False, filename=True,
                         auto_detect=False, columns={"line": "VARCHAR"}).create_view("wb_text")
            con.execute(
                "CREATE OR REPLACE TEMP TABLE wb_lines AS SELECT filename, "
                "regexp_split_to_array(trim(line, ' \t\r\f\v'), '[ \t\r\f\v]+') AS cols "
                "FROM wb_text WHERE trim(line, ' \t\r\f\v') <> ''")
            if con.execute("SELECT count(*) FROM wb_lines WHERE len(cols) <> 6").fetchall()[0][0]:
                strict = True
            else:
                con.execute("CREATE OR REPLACE TEMP VIEW wb_cols AS SELECT filename, cols[1] AS topic_id, "
                            "cols[3] AS doc_id, cols[4] AS rank_s, cols[5] AS score_s, cols[6] AS tag FROM wb_lines")
                con.execute(raw)
                con.execute(group, {"depth": depth})
        except duckdb.Error:  # not UTF-8, a line too long, ...: the strict reader says where
            strict = True
    return strict


def _tops_from_groups(con: Any, depth: int) -> None:
    """Temp table ``wb_tops`` from ``wb_groups`` and ``wb_raw`` (the canonical top ``depth``)."""
    # ``max_by`` picks the top ``depth`` by score alone. Its choice is exact unless (a) scores tie
    # across the cutoff (the canonical rule wants the largest doc_ids among them) or (b) a doc_id
    # repeats in the list (a duplicate line; its best occurrence is then in the list too, and lower
    # occurrences never matter). Those few groups are recomputed exactly, duplicates merged.
    con.execute(
        """CREATE OR REPLACE TEMP TABLE wb_fix AS SELECT filename, topic_id FROM wb_groups
           WHERE len(list_distinct(docs)) < len(docs)
              OR (len(scores) > $depth AND scores[$depth + 1] = scores[$depth])""", {"depth": depth})
    con.execute(
        """CREATE OR REPLACE TEMP TABLE wb_exact AS
           SELECT filename, topic_id, doc_id, score, rank FROM (
               SELECT *, row_number() OVER (PARTITION BY filename, topic_id
                                            ORDER BY score DESC, doc_id DESC) AS rank
               FROM (SELECT filename, topic_id, doc_id, max(score) AS score
                     FROM wb_raw SEMI JOIN wb_fix USING (filename, topic_id) GROUP BY ALL))
           WHERE rank <= $depth""", {"depth": depth})
    con.execute(
        """CREATE OR REPLACE TEMP TABLE wb_tops AS
           SELECT g.filename, n.run_name, g.topic_id, g.doc_id, g.score, g.rank FROM (
               SELECT *, row_number() OVER (PARTITION BY filename, topic_id
                                            ORDER BY score DESC, doc_id DESC) AS rank
               FROM (SELECT filename, topic_id, unnest(docs) AS doc_id, unnest(scores[1:len(docs)]) AS score
                     FROM wb_groups ANTI JOIN wb_fix USING (filename, topic_id))
               UNION ALL SELECT filename, topic_id, doc_id, score, rank FROM wb_exact) g
           JOIN wb_names n USING (filename)""")


def read_run_tops(paths: Sequence[str | Path], depth: int) -> dict[str, dict[str, dict[str, float]]]:
    """Parse many TREC run files at once and keep each run's top ``depth`` per topic.

    The bulk reader of ``load_run_tops`` (one in-memory DuckDB database): a
    doc_id repeated within a topic keeps its highest score (as
    ``formats.trec.read_run``), the top ``depth`` follow the canonical rule (score
    desc, doc_id desc; the rank column is ignored). Runs are named by file stem.

    Args:
        paths: run files (``topic Q0 doc rank score tag``), distinct stems.
        depth: cutoff k, >= 1.

    Returns:
        run name (file stem) -> topic_id -> doc_id -> score, top ``depth`` only,
        documents in rank order.

    Raises:
        ValidationError: a bad depth, no files, or two files with the same stem.
        InputFormatError: a malformed file (the strict reader names file:line).
    """
    import duckdb

    con = duckdb.connect(":memory:")
    con.execute("SET enable_progress_bar = false")  # DuckDB's own bar on stderr; progress is ours to report
    try:
        stems = load_run_tops(con, paths, depth)
        rows = con.execute("SELECT run_name, topic_id, doc_id, score FROM wb_tops "
                           "ORDER BY run_name, topic_id, rank").fetchall()
    finally:
        con.close()
    out: dict[str, dict[str, dict[str, float]]] = {s: {} for s in stems}
    for run_name, topic_id, doc_id, score in rows:
        out[run_name].setdefault(topic_id, {})[doc_id] = score
    return out
