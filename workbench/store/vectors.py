"""The store's vectors (``store.vectors``): the embedding cache of dense retrieval, the
stats of the vector indexes dense runs were searched with, and ANN-recall.

Vectors are keyed by (``model_key``, ``text_hash``): ``model_key`` names the
model and hashes its files (``pooling.retrievers.dense.model_key_for``);
``text_hash`` is the hash of the document text (``version_documents.text_hash``).
A text shared by several collection versions is encoded once; a new version
re-encodes only the texts that changed. Rows are only ever added.

``store.vectors`` implements ``pooling.retrievers.dense.EmbeddingCache``.

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
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from workbench.scoring.ann_recall import AnnRecall, AnnRecallTopic
from workbench.store.ann import STATS_COLUMNS, AnnIndexStats
from workbench.store.core import Gateway


class Vectors:
    """Cached embeddings, vector-index stats and ANN-recall (``store.vectors``).

    Every multi-row change is one transaction.

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def get_embeddings(self, model_key: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors of a model for the given text hashes.

        Args:
            model_key: the encoder's model key.
            text_hashes: the texts wanted.

        Returns:
            text_hash -> float32 vector, only for the hashes that are cached.
        """
        import pyarrow as pa

        wanted = sorted(set(text_hashes))
        if not wanted:
            return {}
        with self._gateway.connection("read embeddings") as cur:
            cur.register("wb_wanted_hashes", pa.table({"text_hash": wanted}))
            try:
                table = cur.sql(
                    "SELECT e.text_hash, e.vector FROM embeddings e JOIN wb_wanted_hashes w USING (text_hash) "
                    "WHERE e.model_key = ?", params=[model_key]).to_arrow_table()
            finally:
                cur.unregister("wb_wanted_hashes")
        if table.num_rows == 0:
            return {}
        hashes = table.column("text_hash").to_pylist()
        vectors = table.column("vector").combine_chunks()
        flat = vectors.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
        dim = len(flat) // len(hashes)
        matrix = flat.reshape(len(hashes), dim)
        return {h: matrix[i] for i, h in enumerate(hashes)}

    def put_embeddings(self, model_key: str, vectors: Mapping[str, np.ndarray]) -> int:
        """Add vectors to the cache (existing (model_key, text_hash) rows are kept).

        Args:
            model_key: the encoder's model key.
            vectors: text_hash -> vector (all the same length).

        Returns:
            The number of rows added.
        """
        import pyarrow as pa

        if not vectors:
            return 0
        hashes = list(vectors)
        matrix = np.stack([np.asarray(vectors[h], dtype=np.float32) for h in hashes])
        table = pa.table({
            "text_hash": hashes,
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel(), pa.float32()),
                                                        matrix.shape[1]).cast(pa.list_(pa.float32())),
        })
        with self._gateway.transaction("cache embeddings") as cur:
            cur.register("wb_new_vectors", table)
            try:
                before = self._n_embeddings(cur, model_key)
                cur.execute(
                    "INSERT INTO embeddings SELECT ?, n.text_hash, n.vector FROM wb_new_vectors n "
                    "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model_key = ? "
                    "AND e.text_hash = n.text_hash)", [model_key, model_key])
                after = self._n_embeddings(cur, model_key)
            finally:
                cur.unregister("wb_new_vectors")
        return after - before

    def embedding_counts(self) -> dict[str, int]:
        """model_key -> number of cached vectors."""
        with self._gateway.connection("count embeddings") as cur:
            rows = cur.execute("SELECT model_key, count(*) FROM embeddings GROUP BY ALL ORDER BY 1").fetchall()
        return {k: int(n) for k, n in rows}

    @staticmethod
    def _n_embeddings(cur: Any, model_key: str) -> int:
        return int(cur.execute("SELECT count(*) FROM embeddings WHERE model_key = ?", [model_key]).fetchall()[0][0])

    def get_index_stats(self, name: str) -> AnnIndexStats | None:
        """The index stats of a dense run the workbench produced (None for other runs)."""
        with self._gateway.connection("read index stats") as cur:
            rows = cur.execute(f"SELECT {STATS_COLUMNS} FROM ann_index_stats WHERE run_name = ?", [name]).fetchall()
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

        with self._gateway.connection("read ANN-recall") as cur:
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
        with self._gateway.transaction(f"record ANN-recall of {run_name}") as cur:
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
