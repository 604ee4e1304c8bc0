"""Store methods for two-stage pipelines (a mixin of ``LabelStore``): rerank lineage and cost.

A rerank run is stored as a run of kind ``rerank`` (``RunsMixin.save_run``)
and, in the same transaction, one ``run_lineage`` row naming its candidate run
and candidate depth, the reranker and the model's identity, plus (for a run the
workbench produced) one ``rerank_costs`` row (device, batch size, threads,
preparation time) and one ``rerank_topic_costs`` row per reranked topic with
its measured wall time. Like every run, all of it is written once and never
changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from workbench.errors import UnknownNameError, ValidationError
from workbench.lineage import RerankCost, RunLineage, TopicCost
from workbench.store.core import StoreCore
from workbench.types import Run, RunInfo


class DocumentPresence(NamedTuple):
    """``LineageMixin.document_presence``: what a collection version holds of some doc_ids.

    Attributes:
        absent: not in the version.
        empty: in it with neither title nor text.
        title_only: in it with a title and no text (CACM's documents without an abstract).
    """

    absent: set[str]
    empty: set[str]
    title_only: set[str]


def _lineage_row(row: tuple[Any, ...]) -> RunLineage:
    name, cand, depth, reranker, kind, model_name, model_hash, origin = row
    return RunLineage(name, cand, int(depth), reranker, kind, model_name, model_hash, origin)


class LineageMixin(StoreCore):
    """Domain verbs on rerank runs; every multi-row change is one ``transaction()``."""

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
        candidate = self.get_run_info(lineage.candidate_run)  # type: ignore[attr-defined]
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
        stored: RunInfo = self.save_run(  # type: ignore[attr-defined]
            RunInfo(info.name, info.kind, info.params, info.depth, candidate.collection, version, info.description),
            run, statuses, messages, source=source, extra=write)
        return stored

    def get_run_lineage(self, name: str) -> RunLineage | None:
        """The lineage of a rerank run, or None for a run that reranks nothing.

        Raises:
            UnknownNameError: no such run.
        """
        with self.connection("read run lineage") as cur:
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
        with self.connection("read rerank cost") as cur:
            head = cur.execute("SELECT device, batch_size, threads, prepare_ms FROM rerank_costs WHERE run_name = ?",
                               [name]).fetchall()
            if not head:
                return None
            topics = cur.execute("SELECT topic_id, n_documents, wall_ms FROM rerank_topic_costs WHERE run_name = ? "
                                 "ORDER BY topic_id", [name]).fetchall()
        device, batch_size, threads, prepare_ms = head[0]
        return RerankCost(name, device, int(batch_size), int(threads), float(prepare_ms),
                          tuple(TopicCost(t, int(n), float(ms)) for t, n, ms in topics))

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
        with self.connection("check documents") as cur:
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

    def rerank_runs_of(self, candidate_run: str) -> list[RunLineage]:
        """Rerank runs whose candidates came from ``candidate_run``, by name."""
        with self.connection("list rerank runs") as cur:
            rows = cur.execute(
                "SELECT run_name, candidate_run, candidate_depth, reranker, reranker_kind, model_name, model_hash, "
                "origin FROM run_lineage WHERE candidate_run = ? ORDER BY run_name", [candidate_run]).fetchall()
        return [_lineage_row(r) for r in rows]
