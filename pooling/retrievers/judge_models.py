"""Relevance scores of (query, document) pairs from a local model, for a model assessor.

Two kinds, both loaded from disk only (no hub download):

* ``bi-encoder``: the cosine of a sentence-transformers model's query and
  document embeddings; ``minilm`` names the bundled all-MiniLM-L6-v2
  (``dense.default_model_path``). Document vectors come from, and go to, the
  store's embedding cache, as the dense retriever's do.
* ``cross-encoder``: ``sentence_transformers.CrossEncoder`` on the pair (a
  folder whose ``config.json`` names a ``...ForSequenceClassification``
  architecture); its score is the model's output (a sigmoid for one label).

Loading and scoring are the rerankers' (``pooling.retrievers.rerank``).

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
    _files_digest,
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
    """A relevance model for a model assessor, scoring through the rerankers of
    ``pooling.retrievers.rerank`` (their loading code: local folders only,
    document vectors from the store's embedding cache).

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
    _reranker: Any = field(default=None, repr=False)

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
            documents: doc_id -> document text (title and text, as dense runs encode them).
            pairs: (topic_id, doc_id) to score.
            cache: an embedding cache (the store) for bi-encoder document vectors.
            text_hashes: doc_id -> the store's text hash (the cache key).

        Returns:
            One float per pair.
        """
        from pooling.retrievers.rerank import BiEncoderReranker, CrossEncoderReranker

        if not pairs:
            return np.zeros(0)
        if self._reranker is None:
            self._reranker = (CrossEncoderReranker(self.path, batch_size=self.batch_size)
                              if self.kind == "cross-encoder"
                              else BiEncoderReranker(None if self.name == BUNDLED else self.path, cache=cache,
                                                     batch_size=max(self.batch_size, 64)))
        docs = list(dict.fromkeys(d for _t, d in pairs))
        self._reranker.prepare({d: documents[d] for d in docs},
                               {d: text_hashes[d] for d in docs if d in text_hashes} if text_hashes else None)
        by_topic: dict[str, list[int]] = {}
        for i, (t, _d) in enumerate(pairs):
            by_topic.setdefault(t, []).append(i)
        out = np.empty(len(pairs))
        for t, rows in by_topic.items():
            out[rows] = self._reranker.score(queries[t], [pairs[i][1] for i in rows])
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
