"""The retriever contract: index documents, answer queries with a run and a status per topic.

Every retriever (BM25, dense, ...) subclasses ``Retriever`` and implements
``index`` and ``_search``; ``retrieve`` is shared and guarantees, for every
topic it is given:

* the result holds at most ``k`` documents, doc_ids are ``str`` and scores finite;
* a status: ``ok`` (results), ``empty`` (the query has no usable terms or nothing
  matched: an empty list, never a silent row of zeros) or ``error`` (the
  retriever raised for that topic; the other topics still run, and the message
  is kept);
* ties at the cutoff are broken by the canonical rule (score desc, doc_id desc),
  so the same index and query give the same top k every time.

``tests/pooling/retriever_contract.py`` checks all of this for each retriever.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from workbench.errors import ValidationError
from workbench.ranking import ranked
from workbench.types import TopicStatus


@dataclass(frozen=True)
class RetrievalResult:
    """What ``Retriever.retrieve`` returns.

    Attributes:
        run: topic_id -> doc_id -> score; topics whose status is not ``ok`` map to {}.
        statuses: topic_id -> ``ok`` | ``empty`` | ``error``, one per topic asked.
        messages: topic_id -> why a topic is ``empty`` or ``error`` (absent when ``ok``).
    """

    run: dict[str, dict[str, float]]
    statuses: dict[str, TopicStatus]
    messages: dict[str, str] = field(default_factory=dict)


class EmptyQuery(Exception):
    """A query with nothing to search with (status ``empty``), e.g. only stop words.

    ``_search`` returns (or raises) one in place of that query's results.
    """


def top_k(
    scores: np.ndarray,
    doc_ids: Sequence[str],
    k: int,
    *,
    min_score: float | None = None,
    candidates: np.ndarray | None = None,
) -> dict[str, float]:
    """The k best documents of a score vector, ties broken by the canonical rule.

    Uses ``argpartition`` to find the k-th best score, keeps every document
    scoring at least that much (so ties at the cutoff are all candidates), then
    cuts to k with ``workbench.ranking.ranked`` (score desc, doc_id desc).

    Args:
        scores: one score per document, aligned with ``doc_ids``.
        doc_ids: the documents' ids.
        k: number of documents wanted, >= 1.
        min_score: when given, documents scoring ``<= min_score`` are dropped.
        candidates: when given, only these document positions (int array) can be
            retrieved, whatever their score (BM25: the documents sharing an
            analysed term with the query, also when an idf rule scores them 0).

    Returns:
        doc_id -> score (Python float) for at most k documents.
    """
    values = np.asarray(scores)
    if candidates is not None:
        candidates = np.asarray(candidates, dtype=np.int64)
        if min_score is not None:
            candidates = candidates[values[candidates] > min_score]
    elif min_score is not None:
        candidates = np.flatnonzero(values > min_score)
    else:
        candidates = np.arange(values.shape[0])
    if candidates.size > k:
        sub = values[candidates]
        kth = sub[np.argpartition(-sub, k - 1)[k - 1]]
        candidates = candidates[sub >= kth]
    chosen = {doc_ids[i]: float(values[i]) for i in candidates.tolist()}
    if len(chosen) <= k:
        return chosen
    return {r.doc_id: r.score for r in ranked(chosen)[:k]}


class Retriever(ABC):
    """Base class of retrievers.

    Subclasses set ``kind`` (``bm25``, ``dense``), expose ``params`` (recorded with
    the run) and implement ``index`` and ``_search``.
    """

    kind: ClassVar[str] = "retriever"

    @property
    def name(self) -> str:
        """The retriever's kind, e.g. ``bm25``."""
        return self.kind

    @property
    @abstractmethod
    def params(self) -> dict[str, Any]:
        """Parameters recorded with the run (JSON-serialisable)."""

    @abstractmethod
    def index(self, documents: Mapping[str, str]) -> Retriever:
        """Index the documents (doc_id -> text); returns ``self``."""

    @property
    @abstractmethod
    def n_documents(self) -> int:
        """Number of indexed documents (0 before ``index``)."""

    @abstractmethod
    def _search(self, queries: Sequence[str], k: int) -> list[dict[str, float] | EmptyQuery]:
        """Top-k of each query, in order; an ``EmptyQuery`` (returned or raised) marks a
        query with nothing to search with. Any other exception fails the batch, and the
        queries are then retried one by one so that only the failing topics get ``error``."""

    def retrieve(self, queries: Mapping[str, str], k: int) -> RetrievalResult:
        """Run every query and return a run with per-topic statuses.

        Args:
            queries: topic_id -> query text.
            k: documents per topic (the run's depth), >= 1.

        Returns:
            ``RetrievalResult`` with exactly the topics of ``queries``.

        Raises:
            ValidationError: ``k < 1`` or nothing indexed.
        """
        if k < 1:
            raise ValidationError(f"k (depth) must be >= 1, found {k}")
        if self.n_documents == 0:
            raise ValidationError(f"{self.kind} retriever has no documents; call index() first")
        run: dict[str, dict[str, float]] = {}
        statuses: dict[str, TopicStatus] = {}
        messages: dict[str, str] = {}
        todo = []
        for topic_id, query in queries.items():
            if not query or not query.strip():
                run[topic_id], statuses[topic_id] = {}, "empty"
                messages[topic_id] = "the query text is blank"
            else:
                todo.append(topic_id)
        results: list[dict[str, float] | BaseException]
        try:
            results = list(self._search([queries[t] for t in todo], k))
        except Exception:  # isolate the failing topic(s): query one at a time
            results = []
            for t in todo:
                try:
                    results.append(self._search([queries[t]], k)[0])
                except Exception as e:  # noqa: BLE001 - a per-topic failure becomes status "error"
                    results.append(e)
        for topic_id, res in zip(todo, results, strict=True):
            if isinstance(res, EmptyQuery):
                run[topic_id], statuses[topic_id] = {}, "empty"
                messages[topic_id] = str(res) or "the query has no terms"
            elif isinstance(res, BaseException):
                run[topic_id], statuses[topic_id] = {}, "error"
                messages[topic_id] = f"{type(res).__name__}: {res}"
            elif not res:
                run[topic_id], statuses[topic_id] = {}, "empty"
                messages[topic_id] = "no document matched the query"
            else:
                bad = [d for d, s in res.items() if not math.isfinite(s)]
                if bad:
                    run[topic_id], statuses[topic_id] = {}, "error"
                    messages[topic_id] = f"non-finite score for {len(bad)} document(s), e.g. {bad[0]!r}"
                else:
                    run[topic_id], statuses[topic_id] = res, "ok"
        order = list(queries)  # report topics in the order they were asked
        return RetrievalResult({t: run[t] for t in order}, {t: statuses[t] for t in order},
                               {t: messages[t] for t in order if t in messages})
