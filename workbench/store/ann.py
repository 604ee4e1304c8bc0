"""Store methods for vector indexes (a mixin of ``LabelStore``): index stats and ANN-recall.

* ``ann_index_stats``: one row per dense run the workbench produced, written in
  the run's own transaction (``save_run(..., extra=...)``): the index kind and
  every parameter used, build time, serialised size, and the latency summary
  of its queries (the per-query wall times are the run's
  ``run_topics.latency_ms``).
* ``ann_recall_topics``: ANN-recall@k per topic of an approximate run against
  an exact reference run. Both runs are immutable, so the rows are written
  once per (run, reference, k) and read back afterwards.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.scoring.ann_recall import AnnRecall, AnnRecallTopic
from workbench.store.core import StoreCore


@dataclass(frozen=True)
class AnnIndexStats:
    """How a dense run's index was built and how fast it answered.

    Attributes:
        run_name: the run.
        index_kind: ``exact`` | ``hnsw`` | ``ivf``.
        index_params: every parameter used (defaults resolved).
        metric: the similarity (inner product of unit vectors, i.e. cosine).
        n_vectors / dim: documents indexed and their dimensions.
        build_ms: wall ms to build (train + add); 0 for exact.
        index_bytes: serialised index size (exact: the float32 matrix).
        threads: faiss OpenMP threads while building (None for exact).
        faiss_version: faiss's version ("" for exact).
        n_queries: queries timed.
        latency_p50_ms / latency_p95_ms: per-query search latency (query
            encoding excluded), ms; None when nothing was timed.
        qps: n_queries / summed latency (s); None when nothing was timed.
    """

    run_name: str
    index_kind: str
    index_params: dict[str, int]
    metric: str
    n_vectors: int
    dim: int
    build_ms: float
    index_bytes: int
    threads: int | None
    faiss_version: str
    n_queries: int
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    qps: float | None


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def write_index_stats(cur: Any, s: AnnIndexStats) -> None:
    """Insert an ``ann_index_stats`` row inside the caller's transaction (``save_run``'s ``extra``)."""
    cur.execute(
        "INSERT INTO ann_index_stats (run_name, index_kind, index_params, metric, n_vectors, dim, build_ms, "
        "index_bytes, threads, faiss_version, n_queries, latency_p50_ms, latency_p95_ms, qps) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [s.run_name, s.index_kind, json.dumps(s.index_params, sort_keys=True), s.metric, s.n_vectors, s.dim,
         s.build_ms, s.index_bytes, s.threads, s.faiss_version, s.n_queries, _num(s.latency_p50_ms),
         _num(s.latency_p95_ms), _num(s.qps)])


_STATS_COLS = ("run_name, index_kind, index_params, metric, n_vectors, dim, build_ms, index_bytes, threads, "
               "faiss_version, n_queries, latency_p50_ms, latency_p95_ms, qps")


class AnnMixin(StoreCore):
    """Domain verbs on index stats and ANN-recall; every multi-row change is one ``transaction()``."""

    def get_index_stats(self, name: str) -> AnnIndexStats | None:
        """The index stats of a dense run the workbench produced (None for other runs)."""
        with self.connection("read index stats") as cur:
            rows = cur.execute(f"SELECT {_STATS_COLS} FROM ann_index_stats WHERE run_name = ?", [name]).fetchall()
        if not rows:
            return None
        r = rows[0]
        return AnnIndexStats(r[0], r[1], json.loads(r[2]), r[3], int(r[4]), int(r[5]), float(r[6]), int(r[7]),
                             None if r[8] is None else int(r[8]), r[9], int(r[10]),
                             None if r[11] is None else float(r[11]), None if r[12] is None else float(r[12]),
                             None if r[13] is None else float(r[13]))

    def get_ann_recall(self, run_name: str, reference_run: str, k: int) -> AnnRecall | None:
        """A stored ANN-recall@k of ``run_name`` against ``reference_run`` (None when not computed yet)."""
        from workbench.ranking import natural_key

        with self.connection("read ANN-recall") as cur:
            rows = cur.execute(
                "SELECT topic_id, numerator, denominator, boundary_tie, tied_outside, missing FROM ann_recall_topics "
                "WHERE run_name = ? AND reference_run = ? AND k = ?", [run_name, reference_run, k]).fetchall()
            head = cur.execute("SELECT excluded, n_extra FROM ann_recalls WHERE run_name = ? AND reference_run = ? "
                               "AND k = ?", [run_name, reference_run, k]).fetchall()
        if not head:
            return None
        topics = tuple(sorted((AnnRecallTopic(t, k, int(n), int(d), bool(b), int(o), bool(m))
                               for t, n, d, b, o, m in rows), key=lambda x: natural_key(x.topic_id)))
        return AnnRecall(k, topics, tuple(json.loads(head[0][0])), int(head[0][1]))

    def record_ann_recall(self, run_name: str, reference_run: str, result: AnnRecall) -> bool:
        """Store ANN-recall@k per topic once (both runs are immutable, so the value never changes).

        Returns:
            True when written now, False when it was already stored.
        """
        import pyarrow as pa

        table = pa.table({
            "topic_id": [t.topic_id for t in result.topics],
            "numerator": pa.array([t.numerator for t in result.topics], pa.int32()),
            "denominator": pa.array([t.denominator for t in result.topics], pa.int32()),
            "boundary_tie": pa.array([t.boundary_tie for t in result.topics], pa.bool_()),
            "tied_outside": pa.array([t.tied_outside for t in result.topics], pa.int32()),
            "missing": pa.array([t.missing for t in result.topics], pa.bool_()),
        })
        with self.transaction(f"record ANN-recall of {run_name}") as cur:
            if cur.execute("SELECT 1 FROM ann_recalls WHERE run_name = ? AND reference_run = ? AND k = ?",
                           [run_name, reference_run, result.k]).fetchall():
                return False
            cur.execute("INSERT INTO ann_recalls (run_name, reference_run, k, excluded, n_extra) VALUES (?, ?, ?, ?, ?)",
                        [run_name, reference_run, result.k, json.dumps(list(result.excluded)), result.n_extra])
            cur.register("wb_ann_recall", table)
            try:
                cur.execute("INSERT INTO ann_recall_topics (run_name, reference_run, k, topic_id, numerator, "
                            "denominator, boundary_tie, tied_outside, missing) SELECT ?, ?, ?, topic_id, numerator, "
                            "denominator, boundary_tie, tied_outside, missing FROM wb_ann_recall",
                            [run_name, reference_run, result.k])
            finally:
                cur.unregister("wb_ann_recall")
        return True

    def dense_runs(self, collection_version: str) -> list[tuple[str, dict[str, Any], int]]:
        """(run name, params, depth) of the dense runs over a collection version, oldest first."""
        with self.connection("list dense runs") as cur:
            rows = cur.execute("SELECT run_name, params, depth FROM runs WHERE kind = 'dense' AND "
                               "collection_version = ? ORDER BY created_at, run_name",
                               [collection_version]).fetchall()
        return [(n, json.loads(p), int(d)) for n, p, d in rows]


__all__: Sequence[str] = ("AnnIndexStats", "AnnMixin", "write_index_stats")
