"""What ``make_dense_run`` stores beside a dense run: its vector index's stats (kind, parameters, build time,
size, latency p50/p95, QPS), written in the run's own transaction."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from workbench.store.ann import AnnIndexStats, write_index_stats

if TYPE_CHECKING:
    from pooling.retrievers.dense import DenseRetriever

METRIC = "inner product of unit vectors (cosine)"
"""The similarity every dense run of the workbench ranks by."""


def index_stats_writer(run_name: str, retriever: DenseRetriever,
                       latencies: Mapping[str, float]) -> Callable[[Any], None] | None:
    """A ``save_run`` ``extra`` callback that stores the retriever's index stats (None before ``index``)."""
    from pooling.retrievers.ann import latency_summary

    vi = retriever.vector_index
    if vi is None:
        return None
    lat = latency_summary(list(latencies.values()))
    stats = AnnIndexStats(run_name, vi.kind, dict(vi.params), METRIC, vi.n_vectors, vi.dim, vi.build_ms,
                          vi.index_bytes, vi.threads, vi.faiss_version, lat.n_queries,
                          lat.p50_ms, lat.p95_ms, lat.qps)

    def write(cur: Any) -> None:
        write_index_stats(cur, stats)

    return write
