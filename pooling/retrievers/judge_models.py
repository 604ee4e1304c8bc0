"""Relevance scores of (query, document) pairs from a local model, for a model assessor.

Two kinds, both loaded from disk only (no hub download):

* ``bi-encoder``: the cosine of a sentence-transformers model's query and
  document embeddings; ``minilm`` names the bundled all-MiniLM-L6-v2
  (``dense.default_model_path``). Document vectors come from, and go to, the
  store's embedding cache, as the dense retriever's do.
* ``cross-encoder``: ``sentence_transformers.CrossEncoder`` on the pair (a
  folder whose ``config.json`` names a ``...ForSequenceClassification``
  architecture); its score is the model's output (a sigmoid for one label).

``weights_hash`` is the sha256 over the model folder's files, the identity a
model assessor records.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pooling.retrievers.dense import (
    _MARKER,
    EmbeddingCache,
    SentenceTransformerEncoder,
    _files_digest,
    _normalise,
    default_model_path,
    model_key_for,
)
from workbench.errors import ValidationError

BUNDLED = "minilm"
"""The name of the bundled bi-encoder (all-MiniLM-L6-v2)."""


def model_kind(folder: Path) -> str:
    """``cross-encoder`` or ``bi-encoder`` for a local model folder.

    Raises:
        ValidationError: not a folder, or neither kind recognisable.
    """
    if not folder.is_dir():
        raise ValidationError(f"{folder}: expected a local model folder (or 'minilm'), found no such folder")
    config = folder / "config.json"
    if config.is_file():
        try:
            arch = json.loads(config.read_text(encoding="utf-8")).get("architectures") or []
        except (ValueError, OSError) as e:
            raise ValidationError(f"{config}: expected a model configuration (JSON), found {e}") from None
        if any(str(a).endswith("ForSequenceClassification") for a in arch):
            return "cross-encoder"
    if (folder / "modules.json").is_file() or (folder / "config_sentence_transformers.json").is_file():
        return "bi-encoder"
    raise ValidationError(
        f"{folder}: expected a sentence-transformers model (modules.json) or a cross-encoder "
        "(config.json with a ...ForSequenceClassification architecture), found neither"
    )


@dataclass
class JudgeModel:
    """A loaded relevance model.

    Attributes:
        name: ``minilm`` or the folder as given.
        path: the model folder.
        kind: ``bi-encoder`` or ``cross-encoder``.
        weights_hash: sha256 (hex) over the folder's files.
    """

    name: str
    path: Path
    kind: str
    weights_hash: str
    batch_size: int = 32
    _model: Any = field(default=None, repr=False)

    def score(
        self,
        queries: Mapping[str, str],
        documents: Mapping[str, str],
        pairs: Sequence[tuple[str, str]],
        *,
        cache: EmbeddingCache | None = None,
        text_hashes: Mapping[str, str] | None = None,
    ) -> np.ndarray:
        """Scores of (topic_id, doc_id) pairs, in order.

        Args:
            queries: topic_id -> query text.
            documents: doc_id -> document text.
            pairs: (topic_id, doc_id) to score.
            cache: an embedding cache (the store) for bi-encoder document vectors.
            text_hashes: doc_id -> text hash (cache keys); needed with ``cache``.

        Returns:
            One float per pair.
        """
        if not pairs:
            return np.zeros(0)
        if self.kind == "cross-encoder":
            return self._cross(queries, documents, pairs)
        return self._cosine(queries, documents, pairs, cache, text_hashes)

    def _cross(self, queries: Mapping[str, str], documents: Mapping[str, str],
               pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if self._model is None:
            from sentence_transformers import CrossEncoder  # lazy: heavy

            self._model = CrossEncoder(str(self.path), device="cpu")
        texts = [(queries[t], documents[d]) for t, d in pairs]
        return np.asarray(self._model.predict(texts, batch_size=self.batch_size, show_progress_bar=False),
                          dtype=np.float64).ravel()

    def _cosine(self, queries: Mapping[str, str], documents: Mapping[str, str], pairs: Sequence[tuple[str, str]],
                cache: EmbeddingCache | None, text_hashes: Mapping[str, str] | None) -> np.ndarray:
        if self._model is None:
            self._model = SentenceTransformerEncoder(self.path, batch_size=self.batch_size)
        enc: SentenceTransformerEncoder = self._model
        docs = list(dict.fromkeys(d for _t, d in pairs))
        hashes = {d: (text_hashes or {}).get(d, "") for d in docs}
        vectors: dict[str, np.ndarray] = {}
        if cache is not None and text_hashes is not None:
            vectors = dict(cache.get_embeddings(enc.model_key, [h for h in hashes.values() if h]))
        todo = [d for d in docs if hashes[d] not in vectors]
        if todo:
            new = _normalise(enc.encode([documents[d] for d in todo]))
            fresh = {hashes[d] or d: new[i] for i, d in enumerate(todo)}
            if cache is not None and text_hashes is not None:
                cache.put_embeddings(enc.model_key, {h: v for h, v in fresh.items() if h in set(hashes.values())})
            vectors.update(fresh)
        topics = list(dict.fromkeys(t for t, _d in pairs))
        q = _normalise(enc.encode([queries[t] for t in topics]))
        qrow = {t: q[i] for i, t in enumerate(topics)}
        out = np.empty(len(pairs))
        for i, (t, d) in enumerate(pairs):
            v = _normalise(np.asarray(vectors[hashes[d] or d])[None, :])[0]
            out[i] = float(np.dot(qrow[t], v))
        return out


def weights_hash(folder: Path) -> str:
    """sha256 (hex) over a model folder's files (the bundled model's extraction
    marker already holds it, so its 90 MB are not read again)."""
    marker = folder / _MARKER
    if marker.is_file():
        try:
            return str(json.loads(marker.read_text())["sha256"])
        except (OSError, ValueError, KeyError):
            pass
    return _files_digest(folder)


def load_judge_model(spec: str, *, model_dir: str | Path | None = None) -> JudgeModel:
    """``minilm`` (the bundled bi-encoder) or a local model folder.

    Raises:
        ValidationError: the folder is missing or of no known kind; the
            bundled model's package is missing.
    """
    if spec == BUNDLED:
        path = default_model_path(model_dir)
        model_key_for(path)
        return JudgeModel(BUNDLED, path, "bi-encoder", weights_hash(path))
    folder = Path(spec)
    kind = model_kind(folder)
    return JudgeModel(spec, folder, kind, weights_hash(folder))
