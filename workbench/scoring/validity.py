"""Validity of a scoring action: run completion and topic coverage.

**Completion.** A run records one status per topic (``ok``: results;
``empty``: no results; ``error``: the retriever failed, e.g. a timeout or a
rate limit). Timeouts produce empty lists that look like valid zero recall, so
the completion rate is measured before any number is trusted:

    completion = topics with status ok / topics evaluated

over the topics the scoring action evaluates (qrels topics with |R| > 0, within
the topic set when one is given). A topic without a status counts as ``ok``
when the run has results for it and as ``empty`` otherwise. ``empty`` and
``error`` are both incomplete; they are counted apart, and errors keep their
messages, so infrastructure failures are reported separately from misses.

**Topic coverage.** With ``--missing exclude`` a partial run is scored on a
subset; ``subset_share`` = evaluated / eligible topics says how much, and a
share below ``SUBSET_SHARE`` is announced in the report's first line.

Source:
    "Reject incomplete runs" and "small-subset scoring" in the recall-testing
    design note (../shared/seeds/004_f124302079e96b46.txt).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.ranking import natural_key

SUBSET_SHARE = 0.9
"""Below this share of the eligible topics, a report says in its first line that it scores a subset."""


@dataclass(frozen=True)
class TopicFailure:
    """A topic a run did not complete.

    Attributes:
        topic_id: the topic.
        status: ``empty`` or ``error``.
        message: why (the retriever's error, a status file's ``error`` column), "" when unknown.
        latency_ms: the call's latency when known, else None.
    """

    topic_id: str
    status: str
    message: str
    latency_ms: float | None


@dataclass(frozen=True)
class Completion:
    """How completely a run answered the evaluated topics.

    Attributes:
        run: the run's name.
        n_topics: topics evaluated (the denominator).
        n_ok: topics with results (status ok).
        failures: the other topics, natural order.
    """

    run: str
    n_topics: int
    n_ok: int
    failures: tuple[TopicFailure, ...]

    @property
    def rate(self) -> float:
        """n_ok / n_topics (1.0 when there are no topics)."""
        return self.n_ok / self.n_topics if self.n_topics else 1.0

    @property
    def n_empty(self) -> int:
        """Topics with status empty."""
        return sum(1 for f in self.failures if f.status == "empty")

    @property
    def n_error(self) -> int:
        """Topics with status error."""
        return sum(1 for f in self.failures if f.status == "error")


def completion(
    run: str,
    topics: Sequence[str],
    n_results: Mapping[str, int],
    statuses: Mapping[str, str] | None = None,
    messages: Mapping[str, str] | None = None,
    latencies: Mapping[str, float] | None = None,
) -> Completion:
    """The completion of a run over ``topics``.

    Args:
        run: the run's name.
        topics: the topics evaluated (the denominator).
        n_results: topic_id -> results returned (0 or absent: none).
        statuses: topic_id -> ``ok`` | ``empty`` | ``error`` as recorded; topics
            not given are ``ok`` with results and ``empty`` without.
        messages: topic_id -> error message.
        latencies: topic_id -> latency in milliseconds.

    Returns:
        The ``Completion``. A status ``ok`` with no results is ``empty``.

    Example:
        >>> c = completion("r", ["1", "2", "3"], {"1": 10, "3": 4}, {"3": "error"}, {"3": "timeout"})
        >>> c.rate, [(f.topic_id, f.status, f.message) for f in c.failures]
        (0.3333333333333333, [('2', 'empty', ''), ('3', 'error', 'timeout')])
    """
    statuses = statuses or {}
    messages = messages or {}
    latencies = latencies or {}
    ok = 0
    failures = []
    for t in sorted(topics, key=natural_key):
        has = n_results.get(t, 0) > 0
        status = statuses.get(t, "ok" if has else "empty")
        if status == "ok" and not has:
            status = "empty"
        if status == "ok":
            ok += 1
        else:
            failures.append(TopicFailure(t, status, messages.get(t, ""), latencies.get(t)))
    return Completion(run, len(topics), ok, tuple(failures))


@dataclass(frozen=True)
class TopicCoverage:
    """How many of the eligible topics a scoring action evaluated.

    Attributes:
        n_eligible: qrels topics with |R| > 0 (within the topic set when one is given).
        n_evaluated: topics averaged over.
        topic_set: the topic set's ``name@version`` ("" when none).
    """

    n_eligible: int
    n_evaluated: int
    topic_set: str = ""

    @property
    def share(self) -> float:
        """n_evaluated / n_eligible (1.0 when nothing is eligible)."""
        return self.n_evaluated / self.n_eligible if self.n_eligible else 1.0

    def is_subset(self, share: float = SUBSET_SHARE) -> bool:
        """True when fewer than ``share`` of the eligible topics were evaluated."""
        return self.share < share

    def notice(self, share: float = SUBSET_SHARE) -> str:
        """The first-line notice of a subset report ("" when not a subset).

        Example:
            >>> TopicCoverage(225, 40).notice()
            'SUBSET: 40 of 225 eligible topics evaluated (17.8%); the averages are not comparable with full-set scores'
        """
        if not self.is_subset(share):
            return ""
        where = f" of topic set {self.topic_set}" if self.topic_set else ""
        return (f"SUBSET: {self.n_evaluated:,} of {self.n_eligible:,} eligible topics{where} evaluated "
                f"({100 * self.share:.1f}%); the averages are not comparable with full-set scores")
