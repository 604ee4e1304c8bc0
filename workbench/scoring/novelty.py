"""Pool-novel documents: what a run retrieved that the qrels never judged.

A document in a run's top k with no judgment at all for the topic (not even a
negative or zero grade) is *pool-novel*: the pool that produced the qrels never
reached it. Its relevance is unknown, so R@k is an interval rather than a point:

* pessimistic (the point value, unjudged counted non-relevant):
  ``hits / |R|``;
* optimistic (every unjudged document relevant): ``(hits + u) / (|R| + u)``,
  where ``u`` is the number of unjudged documents in the top k (they would
  join R as well as the hits).

Counts and lists are per run, topic and cutoff; a new retriever with many
pool-novel documents is not necessarily worse, only less well judged (this is
the incompleteness problem of pooled qrels).

Source:
    Buckley & Voorhees, "Retrieval evaluation with incomplete information",
    SIGIR 2004, doi:10.1145/1008992.1009000 (unjudged documents, judged
    fraction); Zobel, "How reliable are the results of large-scale information
    retrieval experiments?", SIGIR 1998, doi:10.1145/290941.291014 (pool bias).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def recall_bounds(hits: int, n_relevant: int, unjudged: int) -> tuple[float, float]:
    """The interval R@k can move to once the unjudged top-k documents are judged.

    Args:
        hits: relevant documents in the top k.
        n_relevant: |R|, relevant documents known for the topic (> 0).
        unjudged: documents in the top k with no judgment.

    Returns:
        (pessimistic, optimistic) = (hits / |R|, (hits + u) / (|R| + u)).

    Example:
        >>> recall_bounds(2, 4, 3)
        (0.5, 0.7142857142857143)
    """
    if n_relevant <= 0:
        return 0.0, 0.0 if unjudged <= 0 else 1.0
    return hits / n_relevant, (hits + unjudged) / (n_relevant + unjudged)


@dataclass(frozen=True, slots=True)
class NoveltyAtK:
    """Pool-novel counts and R@k bounds at one cutoff, per topic of the evaluation.

    Attributes:
        cutoff: k.
        unjudged: topic_id -> documents in the top k without any judgment.
        returned: topic_id -> documents in the top k, min(k, documents returned).
        recall_low: topic_id -> pessimistic R@k (= the point value).
        recall_high: topic_id -> optimistic R@k, (hits + u) / (|R| + u).
        macro_low: mean of ``recall_low`` over the topics.
        macro_high: mean of ``recall_high`` over the topics.
        total_unjudged: sum of ``unjudged``.
        total_returned: sum of ``returned``.
    """

    cutoff: int
    unjudged: Mapping[str, int]
    returned: Mapping[str, int]
    recall_low: Mapping[str, float]
    recall_high: Mapping[str, float]
    macro_low: float
    macro_high: float
    total_unjudged: int
    total_returned: int

    @property
    def unjudged_share(self) -> float:
        """total_unjudged / total_returned (0 when nothing was returned)."""
        return self.total_unjudged / self.total_returned if self.total_returned else 0.0


@dataclass(frozen=True, eq=False)
class NovelDocuments:
    """The pool-novel documents of one evaluation up to the largest cutoff, as arrays.

    Attributes:
        topic_ids: the evaluation's topics; ``topic_index`` points into it.
        topic_index: int (n,), topic of each document.
        ranks: int (n,), 1-based rank in the run.
        doc_words: uint64 (n, W), packed doc ids (``columns.pack_ids``).
        max_cutoff: the largest k covered.
        kept: False when the lists were let go (``dropped``); reading them
            then raises ``ValueError`` (the counts live in ``NoveltyAtK``).
    """

    topic_ids: tuple[str, ...]
    topic_index: np.ndarray
    ranks: np.ndarray
    doc_words: np.ndarray
    max_cutoff: int
    kept: bool = True

    def dropped(self) -> NovelDocuments:
        """The same object without its lists (``kept`` False): memory for a report that never prints them."""
        import numpy as np

        return NovelDocuments(self.topic_ids, np.zeros(0, np.int64), np.zeros(0, np.int32),
                              np.zeros((0, 1), np.uint64), self.max_cutoff, kept=False)

    def _require_kept(self) -> None:
        if not self.kept:
            raise ValueError("the pool-novel document lists of this evaluation were not kept (a compact "
                             "evaluation: Evaluation.without_documents); their counts are in Evaluation.novelty")

    def at(self, k: int) -> dict[str, list[str]]:
        """topic_id -> doc ids of the unjudged documents in the top k, in rank order.

        Only topics with at least one such document appear; ``ranks_at`` gives
        their ranks, ``with_ranks`` both.

        Raises:
            ValueError: k is larger than ``max_cutoff`` (the lists stop there).
        """
        return self._grouped(k, ranks=False)  # type: ignore[return-value]

    def ranks_at(self, k: int) -> dict[str, list[int]]:
        """topic_id -> ranks of the unjudged documents in the top k (same order as ``at``)."""
        return self._grouped(k, ranks=True)  # type: ignore[return-value]

    def with_ranks(self, k: int) -> dict[str, list[tuple[int, str]]]:
        """topic_id -> [(rank, doc_id), ...] of the unjudged documents in the top k."""
        docs, ranks = self.at(k), self.ranks_at(k)
        return {t: list(zip(ranks[t], d, strict=True)) for t, d in docs.items()}

    def _grouped(self, k: int, *, ranks: bool) -> dict[str, list[str]] | dict[str, list[int]]:
        self._require_kept()
        if k > self.max_cutoff:
            raise ValueError(f"pool-novel documents were kept down to rank {self.max_cutoff}, not {k}")
        import numpy as np

        from workbench.scoring.columns import unpack_ids

        sel = np.flatnonzero(self.ranks <= k)
        values: list = self.ranks[sel].tolist() if ranks else unpack_ids(self.doc_words[sel])  # type: ignore[type-arg]
        topic_index = self.topic_index[sel]
        # Rows are grouped by topic: cut the lists at topic boundaries.
        cuts = (np.flatnonzero(topic_index[1:] != topic_index[:-1]) + 1).tolist()
        out: dict = {}  # type: ignore[type-arg]
        for lo, hi in zip([0] + cuts, cuts + [len(values)], strict=True):
            if hi > lo:
                out.setdefault(self.topic_ids[int(topic_index[lo])], []).extend(values[lo:hi])
        return out

    def count(self, k: int) -> int:
        """Number of unjudged (topic, document) pairs in the top k."""
        import numpy as np

        self._require_kept()
        return int(np.count_nonzero(self.ranks <= k))


@dataclass(frozen=True, eq=False)
class NovelLists:
    """The pool-novel documents of one evaluation up to the largest cutoff, as lists (``scoring.small``).

    The same reading methods as ``NovelDocuments`` (``at``, ``ranks_at``,
    ``with_ranks``, ``count``, ``dropped``), the same results.

    Attributes:
        topic_ids: the evaluation's topics.
        lists: topic_id -> [(rank, doc_id), ...] of the unjudged documents
            within rank ``max_cutoff``, in rank order; topics in the run's
            order (as ``NovelDocuments`` gives them); a topic may map to [].
        max_cutoff: the largest k covered.
        kept: False when the lists were let go (``dropped``).
    """

    topic_ids: tuple[str, ...]
    lists: Mapping[str, list[tuple[int, str]]]
    max_cutoff: int
    kept: bool = True

    def dropped(self) -> NovelLists:
        """The same object without its lists (``kept`` False)."""
        return NovelLists(self.topic_ids, {}, self.max_cutoff, kept=False)

    def _within(self, k: int) -> dict[str, list[tuple[int, str]]]:
        if not self.kept:
            raise ValueError("the pool-novel document lists of this evaluation were not kept (a compact "
                             "evaluation: Evaluation.without_documents); their counts are in Evaluation.novelty")
        if k > self.max_cutoff:
            raise ValueError(f"pool-novel documents were kept down to rank {self.max_cutoff}, not {k}")
        out: dict[str, list[tuple[int, str]]] = {}
        for t, docs in self.lists.items():
            within = [rd for rd in docs if rd[0] <= k]
            if within:
                out[t] = within
        return out

    def at(self, k: int) -> dict[str, list[str]]:
        """topic_id -> doc ids of the unjudged documents in the top k, in rank order (non-empty lists only).

        Raises:
            ValueError: k is larger than ``max_cutoff``, or the lists were dropped.
        """
        return {t: [d for _, d in docs] for t, docs in self._within(k).items()}

    def ranks_at(self, k: int) -> dict[str, list[int]]:
        """topic_id -> ranks of the unjudged documents in the top k (same order as ``at``)."""
        return {t: [r for r, _ in docs] for t, docs in self._within(k).items()}

    def with_ranks(self, k: int) -> dict[str, list[tuple[int, str]]]:
        """topic_id -> [(rank, doc_id), ...] of the unjudged documents in the top k."""
        return self._within(k)

    def count(self, k: int) -> int:
        """Number of unjudged (topic, document) pairs in the top k."""
        return sum(len(docs) for docs in self._within(k).values())
