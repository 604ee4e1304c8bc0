"""``mtf``: move-to-front pooling (PURE).

Cormack, Palmer & Clarke, "Efficient construction of large test collections",
SIGIR 1998, doi:10.1145/290941.291009. Every run starts with the same priority.
The run of highest priority is judged down its ranking while it yields
relevant documents; a non-relevant document lowers that run's priority by one
and judging moves to the highest-priority other run. A run's already judged
documents are passed over at no cost (judgments are shared by every run).

Here the process is *replayed* over the judgments so far: starting from the
initial state, each run's next document is taken in turn as the rule says;
a judged document gives its grade for free, the first unjudged one is the
next to judge. Replaying makes the strategy a pure function of (pool,
judgments), so several assessors (in any order) feed the same strategy; when
the judgments are exactly those the strategy asked for (a simulation), the
replay is the original stateful procedure.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.judging.strategies.base import Grades, Strategy, TopicPool, check_n, fill


@dataclass(frozen=True)
class MoveToFront(Strategy):
    """Move-to-front (MTF) over the pooled runs.

    A batch of ``n`` continues on the current run as if each chosen document
    were relevant (no feedback inside a batch), moving on to the next run of
    highest priority when a run is exhausted; ties between runs go to the
    run listed first in ``TopicPool.runs``. Documents no run ranks come last,
    in priority order.

    Source:
        Cormack, Palmer & Clarke, SIGIR 1998, doi:10.1145/290941.291009; the
        priority bookkeeping (decrement on a non-relevant document, switch to
        the best other run) as described by Losada, Parapar & Barreiro, SAC 2016,
        doi:10.1145/2851613.2851692, section 2.

    Example:
        >>> pool = TopicPool("1", ("a1", "a2", "b1"), {"A": ("a1", "a2"), "B": ("b1",)})
        >>> MoveToFront().next_documents(pool, {"a1": 1}, 1)   # A yielded: stay on A
        ['a2']
        >>> MoveToFront().next_documents(pool, {"a1": 0}, 1)   # A failed: move to B
        ['b1']
    """

    name = "mtf"

    def next_documents(self, pool: TopicPool, judged: Grades, n: int) -> list[str]:
        """Replay MTF over ``judged``; the next ``n`` unjudged documents."""
        check_n(n)
        return fill(self._replay(pool, judged, n, None), pool, judged, n)

    def simulate_order(self, pool: TopicPool, oracle: Grades, limit: int) -> tuple[str, ...]:
        """The order MTF judges ``pool`` in when each grade comes from ``oracle``
        (absent = 0), one document at a time, up to ``limit`` judgments.

        The same replay as ``next_documents`` with each unjudged document judged
        on the spot, so it equals asking ``next_documents(pool, judged, 1)``
        after every judgment (tested), in one pass instead of one per judgment.
        """
        picked = self._replay(pool, {}, limit, oracle)
        if len(picked) < limit:
            picked = fill(picked, pool, {d: 0 for d in picked}, limit)
        return tuple(picked)

    def _replay(self, pool: TopicPool, judged: Grades, n: int, oracle: Grades | None) -> list[str]:
        wanted = set(pool.documents)
        names = list(pool.runs)
        lists = [pool.runs[r] for r in names]
        pointer = [0] * len(names)
        priority = [0] * len(names)
        seen: set[str] = set()
        picked: list[str] = []

        def head(i: int) -> str | None:
            docs = lists[i]
            p = pointer[i]
            while p < len(docs) and (docs[p] in seen or (docs[p] not in judged and docs[p] not in wanted)):
                p += 1
            pointer[i] = p
            return docs[p] if p < len(docs) else None

        def best(exclude: int | None) -> int | None:
            live = [i for i in range(len(names)) if i != exclude and head(i) is not None]
            return max(live, key=lambda i: (priority[i], -i)) if live else None

        current = best(None)
        while current is not None and len(picked) < n:
            doc = head(current)
            if doc is None:
                current = best(current)
                continue
            seen.add(doc)
            pointer[current] += 1
            if doc in judged:
                grade: int | None = judged[doc]
            elif oracle is not None:
                picked.append(doc)  # judged now, with the oracle's grade
                grade = int(oracle.get(doc, 0))
            else:
                picked.append(doc)  # unjudged: judge it; inside a batch, assume it yields
                grade = None
            if grade is not None and not pool.relevant(grade):
                priority[current] -= 1
                other = best(current)
                if other is not None:
                    current = other
        return picked
