"""What a judging strategy sees and returns (PURE).

A strategy is a small pure function over (pool, judgments so far) -> next
documents, for one topic at a time:

* ``TopicPool``: the documents of one topic still to be judged, in the pool's
  priority order (today's fused-rank order), and each contributing run's pooled
  documents in that run's rank order (the arms of the bandits, the lists of
  move-to-front), plus what content-based strategies need (the topic's query,
  the collection's tf-idf features) and, only for strategies that declare
  ``uses_prior``, a model assessor's grades;
* ``judged``: doc_id -> grade, one grade per document judged so far (several
  assessors' judgments are first reduced to one grade by the caller, e.g. the
  pool's final-grade rule). It may hold documents outside ``documents`` (an
  ancestor pool's): they are free evidence, never returned;
* the result: up to ``n`` documents of ``documents`` not in ``judged``, in
  judging order, the first one next. A batch of ``n`` is chosen without
  feedback inside it (no grade of the batch is known yet); asking again after
  the batch is judged gives the next one.

Every strategy is deterministic for its parameters (randomised ones carry a
``seed``); its parameters live on the object (``Bandit(method="thompson")``),
whose ``str`` is its canonical spec and parses back (``parse_strategy``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

from workbench.errors import ValidationError

Grades = Mapping[str, int]
"""doc_id -> grade of the documents judged so far (one grade per document)."""


@dataclass(frozen=True)
class DocumentFeatures:
    """tf-idf vectors of a collection's documents, for content-based strategies.

    Attributes:
        index: doc_id -> row of ``matrix``.
        matrix: sparse (n_documents x n_terms) L2-normalised tf-idf rows
            (``scipy.sparse.csr_matrix``).
        vectorizer: the fitted ``sklearn.feature_extraction.text.TfidfVectorizer``
            (turns a query into a row of the same space).
        doc_ids: the documents in row order.
    """

    index: Mapping[str, int]
    matrix: Any
    vectorizer: Any
    doc_ids: tuple[str, ...]
    _queries: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def rows(self, doc_ids: Sequence[str]) -> Any:
        """The sparse rows of ``doc_ids`` (each must be in ``index``)."""
        return self.matrix[[self.index[d] for d in doc_ids]]

    def query_row(self, text: str) -> Any:
        """A query's tf-idf row in the collection's space (1 x n_terms); cached per text."""
        if text not in self._queries:
            if len(self._queries) >= 10_000:
                self._queries.clear()
            self._queries[text] = self.vectorizer.transform([text])
        return self._queries[text]


def tfidf_features(
    texts: Mapping[str, str],
    *,
    sublinear_tf: bool = True,
    min_df: int = 1,
    analyzer: Callable[[str], list[str]] | None = None,
) -> DocumentFeatures:
    """tf-idf features of a collection (fitted on every document given).

    Args:
        texts: doc_id -> text (title and body joined by the caller); at least one.
        sublinear_tf: use 1 + log(tf) instead of tf.
        min_df: ignore terms in fewer documents than this.
        analyzer: text -> tokens (e.g. ``pooling.tokenize.Tokenizer(stemmer="english")``);
            None = scikit-learn's default word analyzer.

    Returns:
        ``DocumentFeatures`` with rows in ``sorted(texts)`` order.

    Raises:
        ValidationError: no text, or no term survives the vocabulary rules.

    Source:
        scikit-learn ``TfidfVectorizer`` (smooth idf, L2 rows); the feature
        choice follows Cormack & Grossman's AutoTAR, "Autonomy and reliability
        of continuous active learning for technology-assisted review",
        arXiv:1504.06868 (2015).
    """
    if not texts:
        raise ValidationError("tf-idf features need at least one document, found none")
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    doc_ids = tuple(sorted(texts))
    vectorizer = TfidfVectorizer(sublinear_tf=sublinear_tf, min_df=min_df, dtype=np.float64,
                                 **({"analyzer": analyzer} if analyzer is not None else {}))
    try:
        matrix = vectorizer.fit_transform([texts[d] for d in doc_ids]).tocsr()
    except ValueError as e:  # empty vocabulary
        raise ValidationError(f"tf-idf features: {e}; the documents hold no words") from None
    return DocumentFeatures({d: i for i, d in enumerate(doc_ids)}, matrix, vectorizer, doc_ids)


@dataclass(frozen=True)
class TopicPool:
    """One topic of a pool, as a judging strategy sees it.

    Attributes:
        topic_id: the topic.
        documents: the documents to judge, in the pool's priority order
            (priority_rank 1 first; the ``rank`` strategy's order).
        runs: run name -> the run's pooled documents in its rank order (rank 1
            first); may include documents outside ``documents`` (already judged
            in an ancestor pool). Runs are visited in this mapping's order when
            ties must be broken.
        query: the topic's query text (CAL's seed).
        rel: inclusive minimum grade of a relevant document (>= 0).
        features: the collection's tf-idf features (needed by ``cal``).
        prior: doc_id -> a model assessor's grade; read only by strategies
            with ``uses_prior`` (empty otherwise).
    """

    topic_id: str
    documents: tuple[str, ...]
    runs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    query: str = ""
    rel: int = 1
    features: DocumentFeatures | None = None
    prior: Mapping[str, int] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """Scratch space of strategies for values derived from this pool alone
    (e.g. CAL's feature matrix); never part of its meaning."""

    def relevant(self, grade: int) -> bool:
        """grade >= rel."""
        return grade >= self.rel

    def unjudged(self, judged: Grades) -> list[str]:
        """``documents`` without a grade in ``judged``, in priority order."""
        return [d for d in self.documents if d not in judged]


_SPEC_PARAM_TYPES = (int, float, str, bool)


@dataclass(frozen=True)
class Strategy:
    """Base class of judging strategies (subclasses are frozen dataclasses).

    Subclasses set ``name`` (the registry name), may override ``uses_prior``
    (the strategy reads ``TopicPool.prior``, a model assessor's grades) and
    implement ``next_documents``; ``estimate_remaining`` is optional
    (``gives_estimate`` says whether it is given).
    """

    name: ClassVar[str] = ""
    gives_estimate: ClassVar[bool] = False

    @property
    def uses_prior(self) -> bool:
        """True when the strategy reads ``TopicPool.prior`` (a model assessor's grades)."""
        return False

    def next_documents(self, pool: TopicPool, judged: Grades, n: int) -> list[str]:
        """Up to ``n`` unjudged documents of ``pool.documents``, next first.

        Args:
            pool: the topic's pool.
            judged: doc_id -> grade judged so far.
            n: how many to return (>= 1); fewer when fewer remain.

        Returns:
            Distinct doc ids of ``pool.documents`` absent from ``judged``.
        """
        raise NotImplementedError

    def estimate_remaining(self, pool: TopicPool, judged: Grades) -> float | None:
        """Estimated relevant documents among the unjudged ones of ``pool``,
        or None when the strategy gives no estimate (the default)."""
        return None

    def batch_sizes(self) -> Iterator[int]:
        """Batch sizes a simulation asks for, in turn (default: 1, 1, 1, ...:
        every judgment is seen before the next choice)."""
        while True:
            yield 1

    def simulate_order(self, pool: TopicPool, oracle: Grades, limit: int) -> tuple[str, ...]:
        """The order the strategy judges ``pool`` in when each grade comes from
        ``oracle`` (absent = 0), up to ``limit`` judgments, asking for
        ``batch_sizes()`` documents at a time. Strategies may override it with
        an equivalent single pass (``mtf`` does)."""
        judged: dict[str, int] = {}
        order: list[str] = []
        sizes = self.batch_sizes()
        while len(order) < limit:
            n = min(next(sizes), limit - len(order))
            picks = self.next_documents(pool, judged, n)
            if not picks:
                break
            for d in picks:
                if d in judged:
                    raise ValidationError(f"strategy {self} chose document {d!r} of topic {pool.topic_id!r} twice")
                judged[d] = int(oracle.get(d, 0))
                order.append(d)
        return tuple(order)

    def order(self, pool: TopicPool, judged: Grades) -> list[str]:
        """Every unjudged document of the pool in this strategy's order (one batch)."""
        remaining = len(pool.unjudged(judged))
        return self.next_documents(pool, judged, remaining) if remaining else []

    @property
    def params(self) -> dict[str, Any]:
        """The strategy's parameters (JSON-serialisable), by field name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def with_params(self, **params: Any) -> Strategy:
        """A copy with some parameters replaced.

        Raises:
            ValidationError: a parameter this strategy does not have.
        """
        known = {f.name for f in fields(self)}
        unknown = sorted(set(params) - known)
        if unknown:
            raise ValidationError(
                f"strategy {self.name!r} has no parameter {unknown[0]!r}; its parameters: "
                f"{', '.join(sorted(known)) or '(none)'}"
            )
        return replace(self, **params)

    def __str__(self) -> str:
        defaults = type(self)()
        changed = [
            f"{f.name}={_spec_value(getattr(self, f.name))}"
            for f in fields(self)
            if getattr(self, f.name) != getattr(defaults, f.name)
        ]
        return f"{self.name}({', '.join(changed)})" if changed else self.name


def _spec_value(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return f"{value:.1f}"
    return str(value)


def check_n(n: int) -> None:
    """Raise ValidationError unless n >= 1."""
    if n < 1:
        raise ValidationError(f"expected n >= 1 documents to choose, found {n}")


def fill(picked: list[str], pool: TopicPool, judged: Grades, n: int) -> list[str]:
    """``picked`` topped up to ``n`` with the remaining unjudged documents in
    priority order (documents no run ranks, or runs exhausted)."""
    if len(picked) >= n:
        return picked[:n]
    taken = set(picked)
    for d in pool.documents:
        if len(picked) >= n:
            break
        if d not in judged and d not in taken:
            picked.append(d)
            taken.add(d)
    return picked


def build_topic_pools(
    entries: Iterable[tuple[str, str, int]],
    contributions: Iterable[tuple[str, str, str, int]],
    *,
    queries: Mapping[str, str] | None = None,
    rel: int = 1,
    features: DocumentFeatures | None = None,
    priors: Mapping[str, Mapping[str, int]] | None = None,
) -> list[TopicPool]:
    """One ``TopicPool`` per topic from a pool's rows.

    Args:
        entries: (topic_id, doc_id, priority position) of the documents to
            judge; a smaller position is judged first by ``rank`` (ties by doc_id).
        contributions: (topic_id, doc_id, run_name, rank) provenance rows; each
            run's documents are ordered by rank (ties by doc_id). Runs are listed
            in name order. Rows may name documents that are not entries.
        queries: topic_id -> query text ("" when absent).
        rel: relevance threshold of the strategies.
        features: the collection's tf-idf features (``cal``).
        priors: topic_id -> doc_id -> a model assessor's grade.

    Returns:
        Topic pools sorted by ``workbench.judging.queue.topic_order`` (shorter ids first).

    Example:
        >>> [p.documents for p in build_topic_pools([("1", "b", 2), ("1", "a", 1)], [])]
        [('a', 'b')]
    """
    from workbench.judging.queue import topic_order

    docs: dict[str, list[tuple[int, str]]] = {}
    for topic_id, doc_id, position in entries:
        docs.setdefault(topic_id, []).append((int(position), doc_id))
    runs: dict[str, dict[str, list[tuple[int, str]]]] = {}
    for topic_id, doc_id, run, rank in contributions:
        runs.setdefault(topic_id, {}).setdefault(run, []).append((int(rank), doc_id))
    out = []
    for topic_id in topic_order(docs):
        ordered: dict[str, None] = dict.fromkeys(d for _p, d in sorted(docs[topic_id]))
        by_run = runs.get(topic_id, {})
        out.append(TopicPool(
            topic_id,
            tuple(ordered),
            {r: tuple(dict.fromkeys(d for _k, d in sorted(by_run[r]))) for r in sorted(by_run)},
            query=(queries or {}).get(topic_id, ""),
            rel=rel,
            features=features,
            prior=(priors or {}).get(topic_id, {}),
        ))
    return out
