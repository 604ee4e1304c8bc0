"""Records of a two-stage pipeline: which run a rerank run reordered, and what reranking cost.

A *rerank run* is a run whose lists are the top ``candidate_depth`` documents of
another stored run (its *candidate run*), reordered by a reranker. Its
lineage names both, so ``workbench stages`` can score the pipeline stage by
stage. Cost is measured, never computed from a constant: the wall time of each
topic's reranking call, with the batch size, device and model identity it was
measured under.

Pure records (no I/O); ``store.runs`` (``workbench.store.runs``) stores them and
``pooling.retrievers.rerank`` produces them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

RerankerKind = Literal["bi-encoder", "cross-encoder", "external"]
"""How a rerank run was scored: cosine of two embeddings, a model reading the
(query, document) pair, or an externally produced (imported) run."""

RERANKER_KINDS: tuple[str, ...] = ("bi-encoder", "cross-encoder", "external")

LineageOrigin = Literal["produced", "imported"]
"""``produced`` by ``workbench run rerank`` or ``imported`` with ``run import --reranks``."""


@dataclass(frozen=True, slots=True)
class RunLineage:
    """Where a rerank run's candidates came from.

    Attributes:
        run_name: the rerank run.
        candidate_run: the stored run whose top ``candidate_depth`` were reranked.
        candidate_depth: D, the number of candidates per topic handed to the
            reranker (>= 1).
        reranker: a short name of the reranker for stage labels (``minilm``, a
            cross-encoder's folder name, an imported file's run tag).
        reranker_kind: ``bi-encoder`` | ``cross-encoder`` | ``external``.
        model_name: the model's name ("" for an imported run).
        model_hash: sha256 (hex) over the model folder's files, weights and
            configs ("" for an imported run).
        origin: ``produced`` | ``imported``.
    """

    run_name: str
    candidate_run: str
    candidate_depth: int
    reranker: str
    reranker_kind: RerankerKind
    model_name: str = ""
    model_hash: str = ""
    origin: LineageOrigin = "produced"

    @property
    def final_name(self) -> str:
        """The pipeline's name in stage labels: ``<candidate run>+<reranker>``.

        Example:
            >>> RunLineage("r", "bm25", 50, "minilm", "bi-encoder").final_name
            'bm25+minilm'
        """
        return f"{self.candidate_run}+{self.reranker}"

    @property
    def model_identity(self) -> str:
        """``<model name>@sha256:<first 16 hex>`` or "" when unknown."""
        if not self.model_name:
            return ""
        return f"{self.model_name}@sha256:{self.model_hash[:16]}" if self.model_hash else self.model_name


@dataclass(frozen=True, slots=True)
class TopicCost:
    """The measured cost of reranking one topic's candidates.

    Attributes:
        topic_id: the topic.
        n_documents: candidates scored (<= the candidate depth).
        wall_ms: wall-clock milliseconds of the reranking call (query encoding
            or pair scoring, batched; excludes model loading).
    """

    topic_id: str
    n_documents: int
    wall_ms: float


def percentile(values: tuple[float, ...] | list[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between order statistics.

    nan for no values. Same as ``numpy.percentile``'s default ("linear",
    Hyndman & Fan 1996 type 7, doi:10.1080/00031305.1996.10473566).

    Example:
        >>> percentile([1.0, 2.0, 3.0, 4.0], 50), percentile([10.0], 95)
        (2.5, 10.0)
    """
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass(frozen=True, slots=True)
class RerankCost:
    """What one rerank stage cost, measured, with the conditions it was measured under.

    Attributes:
        run_name: the rerank run.
        device: torch device (``cpu``, ``cuda:0``).
        batch_size: (query, document) pairs or texts per forward pass.
        threads: torch CPU threads (0 = torch's default).
        prepare_ms: wall ms before the first topic: model loading and, for a
            bi-encoder, fetching (or encoding) the candidate document vectors.
        topics: one ``TopicCost`` per reranked topic (topics with candidates).
    """

    run_name: str
    device: str
    batch_size: int
    threads: int
    prepare_ms: float
    topics: tuple[TopicCost, ...]

    @property
    def n_topics(self) -> int:
        """Topics reranked."""
        return len(self.topics)

    @property
    def n_documents(self) -> int:
        """Candidates scored, over all topics."""
        return sum(t.n_documents for t in self.topics)

    @property
    def total_ms(self) -> float:
        """Sum of the per-topic wall times (ms)."""
        return sum(t.wall_ms for t in self.topics)

    @property
    def ms_per_topic(self) -> float:
        """Mean wall ms per topic (nan when no topic was reranked)."""
        return self.total_ms / self.n_topics if self.topics else math.nan

    @property
    def ms_per_document(self) -> float:
        """total_ms / n_documents (nan when nothing was scored)."""
        n = self.n_documents
        return self.total_ms / n if n else math.nan

    @property
    def documents_per_second(self) -> float:
        """Throughput: n_documents / total seconds (nan when nothing was timed)."""
        total = self.total_ms
        return self.n_documents / (total / 1000.0) if total > 0 else math.nan

    def p(self, q: float) -> float:
        """The q-th percentile (0..100) of the per-topic wall ms (``percentile``)."""
        return percentile([t.wall_ms for t in self.topics], q)
