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

Eligibility filters (``retrieve(..., eligible=..., filter_mode=...)``): a topic
given an eligible set is searched in one of two modes, and a topic given none
is searched unfiltered:

* ``pre``: only eligible documents are ranked (the retriever's
  ``_search_eligible`` scores the eligible documents alone, or uses the index's
  native filtered search), so the list has ``min(k, eligible matches)`` documents;
* ``post``: the top ``k`` of the whole collection are retrieved, then the
  ineligible ones dropped: the list can be shorter than ``k`` even when
  eligible matches exist deeper (``RetrievalResult.retrieved`` keeps how many
  were retrieved before the filter). A topic left with none is ``empty``.

``tests/pooling/retriever_contract.py`` checks all of this for each retriever.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from workbench.errors import ValidationError
from workbench.ranking import ranked
from workbench.types import TopicStatus

FilterMode = Literal["pre", "post"]
FILTER_MODES: tuple[str, ...] = ("pre", "post")


@dataclass(frozen=True)
class RetrievalResult:
    """What ``Retriever.retrieve`` returns.

    Attributes:
        run: topic_id -> doc_id -> score; topics whose status is not ``ok`` map to {}.
        statuses: topic_id -> ``ok`` | ``empty`` | ``error``, one per topic asked.
        messages: topic_id -> why a topic is ``empty`` or ``error`` (absent when
            ``ok``), or, for a filtered topic with fewer than k results, how many
            the filter kept.
        retrieved: filtered topics -> documents retrieved before the filter
            (post-filter: up to k; pre-filter: the eligible results, = the kept ones).
        filter_mode: ``pre`` or ``post`` when some topic was filtered, else "".
    """

    run: dict[str, dict[str, float]]
    statuses: dict[str, TopicStatus]
    messages: dict[str, str] = field(default_factory=dict)
    retrieved: dict[str, int] = field(default_factory=dict)
    filter_mode: str = ""

    def short_topics(self, k: int) -> list[str]:
        """Filtered topics that came back with fewer than ``k`` results (in the order asked)."""
        return [t for t in self.retrieved if len(self.run.get(t, {})) < k]


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
    allowed: np.ndarray | None = None,
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
        allowed: when given, a bool per document: only documents where it is
            True can be retrieved (pre-filtering by eligibility).

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
    if allowed is not None:
        candidates = candidates[np.asarray(allowed, dtype=bool)[candidates]]
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
    supports_pre_filter: ClassVar[bool] = False
    """Whether ``_search_eligible`` is implemented (pre-filtering); post-filtering works for every retriever."""

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

    def indexed_doc_ids(self) -> Sequence[str]:
        """The indexed doc ids in index order (needed for pre-filtering)."""
        raise NotImplementedError(f"{self.kind} retriever does not list its documents")

    def _search_eligible(self, queries: Sequence[str], k: int, allowed: np.ndarray) -> list[dict[str, float] | EmptyQuery]:
        """Top-k of each query among the documents where ``allowed`` (bool, index order) is True."""
        raise NotImplementedError(f"{self.kind} retriever cannot pre-filter")

    def retrieve(
        self,
        queries: Mapping[str, str],
        k: int,
        *,
        eligible: Mapping[str, AbstractSet[str]] | None = None,
        filter_mode: FilterMode = "pre",
    ) -> RetrievalResult:
        """Run every query and return a run with per-topic statuses.

        Args:
            queries: topic_id -> query text.
            k: documents per topic (the run's depth), >= 1.
            eligible: topic_id -> the doc ids its filter admits; topics absent are
                searched unfiltered. None = no filtering. Topics sharing one set
                object are pre-filtered together.
            filter_mode: ``pre`` (rank eligible documents only) or ``post``
                (retrieve k, then drop the ineligible); see the module docstring.

        Returns:
            ``RetrievalResult`` with exactly the topics of ``queries``.

        Raises:
            ValidationError: ``k < 1``, nothing indexed, an unknown filter mode, or
                ``pre`` with a retriever that cannot pre-filter.
        """
        if k < 1:
            raise ValidationError(f"k (depth) must be >= 1, found {k}")
        if self.n_documents == 0:
            raise ValidationError(f"{self.kind} retriever has no documents; call index() first")
        if eligible:
            if filter_mode not in FILTER_MODES:
                raise ValidationError(f"expected a filter mode in {', '.join(FILTER_MODES)}, found {filter_mode!r}")
            if filter_mode == "pre" and not self.supports_pre_filter:
                raise ValidationError(f"the {self.kind} retriever cannot pre-filter; use filter mode 'post'")
            return self._retrieve_filtered(queries, k, eligible, filter_mode)
        return self._retrieve(queries, k)

    def _retrieve_filtered(
        self, queries: Mapping[str, str], k: int, eligible: Mapping[str, AbstractSet[str]], mode: FilterMode
    ) -> RetrievalResult:
        plain = {t: q for t, q in queries.items() if t not in eligible}
        parts = [self._retrieve(plain, k)] if plain else []
        retrieved: dict[str, int] = {}
        notes: dict[str, str] = {}
        filtered = [t for t in queries if t in eligible]
        if mode == "post":
            res = self._retrieve({t: queries[t] for t in filtered}, k)
            run = dict(res.run)
            statuses = dict(res.statuses)
            messages = dict(res.messages)
            for t in filtered:
                got = res.run.get(t, {})
                allowed = eligible[t]
                kept = {d: s for d, s in got.items() if d in allowed}
                retrieved[t] = len(got)
                run[t] = kept
                if got and not kept:
                    statuses[t] = "empty"
                    messages[t] = f"post-filter: none of the {len(got)} retrieved documents is eligible"
                elif len(kept) < k and res.statuses.get(t) == "ok":
                    notes[t] = f"post-filter kept {len(kept)} of {len(got)} retrieved documents"
            parts.append(RetrievalResult(run, statuses, messages))
        else:
            positions = {d: i for i, d in enumerate(self.indexed_doc_ids())}
            groups: dict[int, list[str]] = {}
            for t in filtered:
                groups.setdefault(id(eligible[t]), []).append(t)
            for topics in groups.values():
                allowed_ids = eligible[topics[0]]
                mask = np.zeros(len(positions), dtype=bool)
                idx = [positions[d] for d in allowed_ids if d in positions]
                mask[idx] = True
                if not mask.any():
                    parts.append(RetrievalResult(
                        {t: {} for t in topics}, {t: "empty" for t in topics},
                        {t: "no document is eligible under the topic's filter" for t in topics}))
                    for t in topics:
                        retrieved[t] = 0
                    continue

                def search(qs: Sequence[str], kk: int, mask: np.ndarray = mask) -> list[dict[str, float] | EmptyQuery]:
                    return self._search_eligible(qs, kk, mask)

                res = self._retrieve({t: queries[t] for t in topics}, k, search=search)
                for t in topics:
                    n = len(res.run.get(t, {}))
                    retrieved[t] = n
                    if 0 < n < k:
                        notes[t] = f"pre-filter: {n} eligible document(s) matched ({int(mask.sum())} eligible)"
                parts.append(res)
        run_all: dict[str, dict[str, float]] = {}
        st_all: dict[str, TopicStatus] = {}
        msg_all: dict[str, str] = {}
        for r in parts:
            run_all.update(r.run)
            st_all.update(r.statuses)
            msg_all.update(r.messages)
        msg_all.update({t: m for t, m in notes.items() if t not in msg_all})
        order = list(queries)
        return RetrievalResult({t: run_all[t] for t in order}, {t: st_all[t] for t in order},
                               {t: msg_all[t] for t in order if t in msg_all},
                               {t: retrieved[t] for t in order if t in retrieved}, mode)

    def _retrieve(
        self,
        queries: Mapping[str, str],
        k: int,
        *,
        search: Callable[[Sequence[str], int], list[dict[str, float] | EmptyQuery]] | None = None,
    ) -> RetrievalResult:
        search = search or self._search
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
            results = list(search([queries[t] for t in todo], k)) if todo else []
        except Exception:  # isolate the failing topic(s): query one at a time
            results = []
            for t in todo:
                try:
                    results.append(search([queries[t]], k)[0])
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
