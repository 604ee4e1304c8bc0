"""Rerankers: rescore each topic's top-D candidates of a run, timing every topic.

Two kinds, both loaded from local folders only (nothing is downloaded):

* ``BiEncoderReranker``: cosine of the query's and the document's
  sentence-transformers embeddings (default: the packaged all-MiniLM-L6-v2).
  Document vectors come from the embedding cache (the store's ``embeddings``
  table, keyed by model and text hash as ``pooling.retrievers.dense``), so
  candidates a dense run already encoded are not encoded again; vectors missing
  from the cache are encoded once in ``prepare`` and added to it. Per topic
  ``score`` is one query encoding plus D dot products (cached vectors);
  ``score_from_text`` encodes the query and the D candidates' texts, as a
  reranker without precomputed vectors does, so its cost grows with D.
* ``CrossEncoderReranker``: any ``sentence_transformers.CrossEncoder`` folder;
  per topic it reads the D (query, document) pairs in batches of
  ``batch_size``, so its cost grows with D (``score_from_text`` is ``score``:
  nothing per document can be computed ahead).

``rerank_topics`` runs a reranker over every topic and measures the wall time of
each topic's call with ``time.perf_counter`` (model loading and cache reads are
timed apart, as ``prepare_ms``); ``from_text=True`` times ``score_from_text``
instead of ``score``, every per-document step inside the timed block (what a
depth sweep measures). The new list of a topic holds exactly its
candidates, reordered: a permutation of the candidate run's top D. Ties in the
new scores are broken by the canonical rule (score desc, doc_id desc) when the
run is ranked.

Source:
    Nogueira & Cho, "Passage Re-ranking with BERT", arXiv:1901.04085 (2019),
    the candidates-then-cross-encoder pipeline; Reimers & Gurevych,
    "Sentence-BERT", EMNLP 2019, doi:10.18653/v1/D19-1410 (bi- and
    cross-encoders).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pooling.retrievers import dense
from pooling.retrievers.dense import (
    DEFAULT_MODEL_NAME,
    EmbeddingCache,
    Encoder,
    model_key_for,
    text_hash,
)
from workbench.errors import ValidationError
from workbench.lineage import RerankCost, RerankerKind, TopicCost

DEFAULT_RERANKER_LABEL = "minilm"
"""Stage-label name of the default reranker (all-MiniLM-L6-v2 cosine)."""


def split_model_key(key: str) -> tuple[str, str]:
    """``("<name>", "<hash>")`` of a model key ``<name>@sha256:<hex>`` (hash "" if absent).

    Example:
        >>> split_model_key("all-MiniLM-L6-v2@sha256:ab12")
        ('all-MiniLM-L6-v2', 'ab12')
    """
    name, sep, digest = key.partition("@sha256:")
    return name, digest if sep else ""


class Reranker(Protocol):
    """Scores a topic's candidates for its query.

    Attributes:
        kind: ``bi-encoder`` or ``cross-encoder``.
        label: short name used in stage labels (``minilm``).
        model_name / model_hash: the model's identity.
        device, batch_size, threads: what the cost was measured under
            (threads 0 = torch's default).
    """

    @property
    def kind(self) -> RerankerKind:
        """``bi-encoder`` | ``cross-encoder``."""
        ...

    @property
    def label(self) -> str:
        """Short name for stage labels."""
        ...

    @property
    def model_name(self) -> str:
        """The model's name."""
        ...

    @property
    def model_hash(self) -> str:
        """Hash of the model's files."""
        ...

    device: str
    batch_size: int
    threads: int

    def prepare(self, documents: Mapping[str, str], text_hashes: Mapping[str, str] | None = None) -> None:
        """Load the model and anything per document (vectors) before timing topics."""
        ...

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """float64 scores aligned with ``doc_ids`` (higher = more relevant)."""
        ...

    def score_from_text(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """As ``score``, with every per-document step done in the call from the prepared texts.

        A bi-encoder encodes the candidates here instead of reading the vectors
        ``prepare`` fetched; the scores equal ``score``'s up to float32 rounding.
        """
        ...


class BiEncoderReranker:
    """Cosine of query and document embeddings, document vectors from the cache.

    Args:
        model_path: local sentence-transformers folder; None = the packaged
            all-MiniLM-L6-v2 (label ``minilm``).
        encoder: an ``Encoder`` to use instead of loading a model (tests); its
            ``model_key`` names it.
        cache: the embedding cache (the store); None = encode every candidate.
        batch_size: texts per forward pass when encoding documents (>= 1).
        device: torch device (``cpu``).
        threads: torch CPU threads, or None for torch's default.
        model_dir: extraction folder of the packaged model.
        label: stage-label name; default ``minilm`` for all-MiniLM-L6-v2,
            else the model's name.
        progress: a tqdm bar on stderr while ``prepare`` encodes the documents
            the cache lacks.
    """

    kind: RerankerKind = "bi-encoder"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        encoder: Encoder | None = None,
        cache: EmbeddingCache | None = None,
        batch_size: int = 64,
        device: str = "cpu",
        threads: int | None = None,
        model_dir: str | Path | None = None,
        label: str | None = None,
        progress: bool = False,
    ) -> None:
        if batch_size < 1:
            raise ValidationError(f"batch size must be >= 1, found {batch_size}")
        self.progress = progress
        self.encoder: Encoder = encoder or dense.SentenceTransformerEncoder(
            model_path, model_dir=model_dir, device=device, batch_size=batch_size, threads=threads)
        self.cache = cache
        self.device = device
        self.batch_size = batch_size
        self.threads = threads or 0
        self._label = label or ""
        self._vectors: dict[str, np.ndarray] = {}
        self._texts: dict[str, str] = {}
        self.n_encoded = 0
        self.n_cached = 0

    @property
    def label(self) -> str:
        """Stage-label name: as given, else ``minilm`` for all-MiniLM-L6-v2, else the model's name."""
        if self._label:
            return self._label
        name = self.model_name
        return DEFAULT_RERANKER_LABEL if name == DEFAULT_MODEL_NAME else name

    @property
    def model_name(self) -> str:
        """The model key's name part."""
        return split_model_key(self.encoder.model_key)[0]

    @property
    def model_hash(self) -> str:
        """The model key's hash part."""
        return split_model_key(self.encoder.model_key)[1]

    def prepare(self, documents: Mapping[str, str], text_hashes: Mapping[str, str] | None = None) -> None:
        """Document vectors of every candidate: from the cache, encoding only what it lacks.

        The texts are kept too, for ``score_from_text``.

        Args:
            documents: doc_id -> text (title and text, as dense runs encode them).
            text_hashes: doc_id -> the store's text hash (the cache key); None =
                sha256 of the text.
        """
        doc_ids = list(documents)
        hashes = {d: (text_hashes[d] if text_hashes is not None and d in text_hashes else text_hash(documents[d]))
                  for d in doc_ids}
        key = self.encoder.model_key
        unique = list(dict.fromkeys(hashes.values()))
        found: dict[str, np.ndarray] = dict(self.cache.get_embeddings(key, unique)) if self.cache else {}
        todo = [h for h in unique if h not in found]
        self.n_cached, self.n_encoded = len(unique) - len(todo), len(todo)
        if todo:
            first = {h: d for d, h in reversed(list(hashes.items()))}
            new = _unit(self.encoder.encode([documents[first[h]] for h in todo], progress=self.progress))
            fresh = {h: new[i] for i, h in enumerate(todo)}
            if self.cache is not None:
                self.cache.put_embeddings(key, fresh)
            found.update(fresh)
        self._vectors = {d: _unit(found[hashes[d]][None, :])[0] for d in doc_ids}
        self._texts = dict(documents)
        if doc_ids:  # load the model now, so the first topic is not charged for it
            self.encoder.encode(["warm-up"])

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """Cosine of the query and each document (float64, aligned with ``doc_ids``).

        Raises:
            ValidationError: a document was not prepared, or the dimensions differ.
        """
        q = _unit(self.encoder.encode([query]))[0]
        try:
            matrix = np.stack([self._vectors[d] for d in doc_ids])
        except KeyError as e:
            raise ValidationError(f"document {e.args[0]!r} was not prepared; call prepare() with every candidate") from None
        if matrix.shape[1] != q.shape[0]:
            raise ValidationError(
                f"query vectors have {q.shape[0]} dimensions, documents {matrix.shape[1]}; "
                "the cache holds vectors of another model")
        return (matrix @ q).astype(np.float64)

    def score_from_text(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """Cosine of the query and each document, encoding the query and every candidate's text now.

        The per-topic work of a bi-encoder reranker without precomputed vectors:
        one query encoding and D document encodings (in batches of
        ``batch_size``), then D dot products. Nothing is read from or added to
        the cache. Scores equal ``score``'s up to float32 rounding (a text's
        vector can differ in the last bits with the batch it is encoded in).

        Raises:
            ValidationError: a document was not prepared (its text is unknown).
        """
        try:
            texts = [self._texts[d] for d in doc_ids]
        except KeyError as e:
            raise ValidationError(f"document {e.args[0]!r} was not prepared; call prepare() with every candidate") from None
        q = _unit(self.encoder.encode([query]))[0]
        matrix = _unit(self.encoder.encode(texts))
        return (matrix @ q).astype(np.float64)


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` from a local folder, reading (query, document) pairs.

    Args:
        model_path: the CrossEncoder folder (config, weights, tokenizer).
        batch_size: pairs per forward pass (>= 1).
        device: torch device (``cpu``).
        threads: torch CPU threads, or None for torch's default.
        max_length: tokens per pair (longer pairs are truncated); None = the
            model's own limit.
        label: stage-label name; default the folder's name.

    Raises:
        ValidationError: the folder does not exist (checked at construction).
    """

    kind: RerankerKind = "cross-encoder"

    def __init__(
        self,
        model_path: str | Path,
        *,
        batch_size: int = 32,
        device: str = "cpu",
        threads: int | None = None,
        max_length: int | None = None,
        label: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValidationError(f"batch size must be >= 1, found {batch_size}")
        self.path = Path(model_path)
        if not (self.path / "config.json").is_file():
            raise ValidationError(
                f"{self.path}: expected a CrossEncoder model folder (config.json, weights, tokenizer), "
                "found none; pass --cross-encoder with a local folder (nothing is downloaded)")
        self._key = model_key_for(self.path)
        self.device = device
        self.batch_size = batch_size
        self.threads = threads or 0
        self.max_length = max_length
        self._label = label or self.path.name
        self._model: Any = None
        self._texts: dict[str, str] = {}
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        """Stage-label name (the folder's name unless given)."""
        return self._label

    @property
    def model_name(self) -> str:
        """The folder's name."""
        return split_model_key(self._key)[0]

    @property
    def model_hash(self) -> str:
        """Hash over the folder's files."""
        return split_model_key(self._key)[1]

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                import torch  # lazy: heavy
                from sentence_transformers import CrossEncoder  # lazy: ~8 s import

                if self.threads:
                    torch.set_num_threads(self.threads)
                try:
                    self._model = CrossEncoder(str(self.path), device=self.device, max_length=self.max_length)
                except (OSError, ValueError) as e:
                    raise ValidationError(f"{self.path}: cannot load it as a CrossEncoder: {e}") from e
        return self._model

    def prepare(self, documents: Mapping[str, str], text_hashes: Mapping[str, str] | None = None) -> None:
        """Load the model and keep the candidates' texts; ``text_hashes`` is not used."""
        self._texts = dict(documents)
        model = self._load()
        if documents:  # first call pays one-off costs (allocations); not a topic's cost
            model.predict([("warm-up", "warm-up")], batch_size=1, show_progress_bar=False)

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """The model's score of each (query, document) pair (float64, aligned with ``doc_ids``)."""
        model = self._load()
        try:
            pairs = [(query, self._texts[d]) for d in doc_ids]
        except KeyError as e:
            raise ValidationError(f"document {e.args[0]!r} was not prepared; call prepare() with every candidate") from None
        scores = model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(scores, dtype=np.float64).reshape(len(doc_ids))

    def score_from_text(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """``score``: a cross-encoder reads every (query, document) pair per topic; nothing is precomputed."""
        return self.score(query, doc_ids)


def _unit(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


@dataclass(frozen=True)
class RerankResult:
    """What ``rerank_topics`` returns.

    Attributes:
        run: topic_id -> doc_id -> reranker score; exactly each topic's candidates.
        statuses: topic_id -> ``ok`` | ``empty`` | ``error``, one per topic asked.
        messages: topic_id -> why a topic is ``empty`` or ``error``.
        cost: the measured cost (one ``TopicCost`` per reranked topic).
    """

    run: dict[str, dict[str, float]]
    statuses: dict[str, str]
    messages: dict[str, str] = field(default_factory=dict)
    cost: RerankCost | None = None


def rerank_topics(
    reranker: Reranker,
    queries: Mapping[str, str],
    candidates: Mapping[str, Sequence[str]],
    documents: Mapping[str, str],
    *,
    text_hashes: Mapping[str, str] | None = None,
    run_name: str = "",
    prepare: bool = True,
    from_text: bool = False,
    on_topic: Callable[[int, int], None] | None = None,
    on_prepared: Callable[[float], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> RerankResult:
    """Rerank every topic's candidates and time each topic.

    Args:
        reranker: a ``Reranker``.
        queries: topic_id -> query text; defines the topics (and their order).
        candidates: topic_id -> the candidate doc_ids (the candidate run's top D,
            in rank order); a topic without candidates becomes ``empty``.
        documents: doc_id -> text, for every candidate.
        text_hashes: doc_id -> text hash (the embedding cache's key).
        run_name: recorded in the cost.
        prepare: call ``reranker.prepare`` with the candidates first (timed as
            ``prepare_ms``); False when the caller prepared a superset already
            (a depth sweep prepares the deepest candidates once).
        from_text: time ``reranker.score_from_text`` (every per-document step,
            e.g. a bi-encoder's document encodings, inside each topic's timed
            block) instead of ``reranker.score`` (a bi-encoder's vectors read
            in ``prepare``, outside it).
        on_topic: called with (topics done, topics total) after each topic.
        on_prepared: called with ``prepare_ms`` once the reranker is prepared,
            before the first topic (e.g. to start a per-topic progress bar).
        clock: seconds (monotonic); ``time.perf_counter`` by default.

    Returns:
        ``RerankResult``: a topic whose scoring raised is ``error`` (message
        kept) and the others still run; a topic whose scores are not all finite
        is ``error`` too.

    Raises:
        ValidationError: a candidate has no text.
    """
    needed = {d for t in queries for d in candidates.get(t, ())}
    absent = sorted(needed - set(documents))
    if absent:
        raise ValidationError(f"{len(absent)} candidate document(s) have no text, e.g. {absent[0]!r}")
    start = clock()
    if prepare:
        reranker.prepare({d: documents[d] for d in sorted(needed)},
                         {d: text_hashes[d] for d in needed if d in text_hashes} if text_hashes is not None else None)
    prepare_ms = (clock() - start) * 1000.0 if prepare else 0.0
    if on_prepared is not None:
        on_prepared(prepare_ms)
    run: dict[str, dict[str, float]] = {}
    statuses: dict[str, str] = {}
    messages: dict[str, str] = {}
    costs: list[TopicCost] = []
    score = reranker.score_from_text if from_text else reranker.score
    total = len(queries)
    for i, (topic_id, query) in enumerate(queries.items(), 1):
        docs = list(candidates.get(topic_id, ()))
        if not docs:
            run[topic_id], statuses[topic_id] = {}, "empty"
            messages[topic_id] = "the candidate run has no results for this topic"
        else:
            t0 = clock()
            try:
                scores = score(query, docs)
            except Exception as e:  # noqa: BLE001 - a per-topic failure becomes status "error"
                run[topic_id], statuses[topic_id] = {}, "error"
                messages[topic_id] = f"{type(e).__name__}: {e}"
            else:
                elapsed = (clock() - t0) * 1000.0
                values = [float(s) for s in scores]
                bad = [d for d, s in zip(docs, values, strict=True) if not math.isfinite(s)]
                if bad:
                    run[topic_id], statuses[topic_id] = {}, "error"
                    messages[topic_id] = f"non-finite reranker score for {len(bad)} document(s), e.g. {bad[0]!r}"
                else:
                    run[topic_id] = dict(zip(docs, values, strict=True))
                    statuses[topic_id] = "ok"
                    costs.append(TopicCost(topic_id, len(docs), elapsed))
        if on_topic is not None:
            on_topic(i, total)
    cost = RerankCost(run_name=run_name, device=reranker.device, batch_size=reranker.batch_size,
                      threads=reranker.threads, prepare_ms=prepare_ms, topics=tuple(costs))
    return RerankResult(run, statuses, messages, cost)
