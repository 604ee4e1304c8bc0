"""``rank``: the pool's priority order (today's fused-rank order) (PURE)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.judging.strategies.base import Grades, Strategy, TopicPool, check_n


@dataclass(frozen=True)
class Rank(Strategy):
    """Judge in the pool's priority order: documents many runs rank high first.

    The priority is the pool's (by default the RRF score over the contributing
    runs, ``pooling.pool``); judgments never change the order.

    Source:
        Depth-k pooling judged in priority order: Voorhees & Harman, TREC:
        Experiment and Evaluation in IR (MIT Press 2005), ch. 2; RRF priority:
        Cormack, Clarke & Büttcher, SIGIR 2009, doi:10.1145/1571941.1572114.

    Example:
        >>> Rank().next_documents(TopicPool("1", ("a", "b", "c")), {"a": 1}, 5)
        ['b', 'c']
    """

    name = "rank"

    def next_documents(self, pool: TopicPool, judged: Grades, n: int) -> list[str]:
        """The first ``n`` unjudged documents in priority order."""
        check_n(n)
        return pool.unjudged(judged)[:n]
