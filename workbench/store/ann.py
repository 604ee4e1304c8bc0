"""What the store keeps of vector indexes (written with a dense run, read by ``store.vectors``):
index stats and ANN-recall.

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


STATS_COLUMNS = ("run_name, index_kind, index_params, metric, n_vectors, dim, build_ms, index_bytes, threads, "
               "faiss_version, n_queries, latency_p50_ms, latency_p95_ms, qps")


__all__: Sequence[str] = ("STATS_COLUMNS", "AnnIndexStats", "write_index_stats")
