"""Store methods for embeddings (a mixin of ``LabelStore``): the dense-retrieval cache.

Vectors are keyed by (``model_key``, ``text_hash``): ``model_key`` names the
model and hashes its files (``pooling.retrievers.dense.model_key_for``);
``text_hash`` is the hash of the document text (``version_documents.text_hash``).
A text shared by several collection versions is encoded once; a new version
re-encodes only the texts that changed. Rows are only ever added.

Implements ``pooling.retrievers.dense.EmbeddingCache``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from workbench.errors import UnknownNameError
from workbench.store.core import StoreCore


class EmbeddingsMixin(StoreCore):
    """Domain verbs on embeddings; every multi-row change is one ``transaction()``."""

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
        with self.connection("read embeddings") as cur:
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
        with self.transaction("cache embeddings") as cur:
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
        with self.connection("count embeddings") as cur:
            rows = cur.execute("SELECT model_key, count(*) FROM embeddings GROUP BY ALL ORDER BY 1").fetchall()
        return {k: int(n) for k, n in rows}

    def document_text_hashes(self, collection: str, version: str | None = None) -> dict[str, str]:
        """doc_id -> text_hash of a collection version (latest when None).

        Raises:
            UnknownNameError: unknown collection or version.
        """
        from workbench.store.collection_rows import latest_version, require_collection

        with self.connection("read text hashes") as cur:
            require_collection(cur, collection)
            v = version or latest_version(cur, collection)
            rows = cur.execute("SELECT doc_id, text_hash FROM version_documents WHERE collection_version = ?",
                               [v]).fetchall()
            if not rows:
                raise UnknownNameError(f"version of collection {collection!r}", v, [])
        return dict(rows)

    @staticmethod
    def _n_embeddings(cur: Any, model_key: str) -> int:
        return int(cur.execute("SELECT count(*) FROM embeddings WHERE model_key = ?", [model_key]).fetchall()[0][0])
