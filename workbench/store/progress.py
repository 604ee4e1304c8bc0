"""Judging progress as the store reports it (``store.judging``): per-topic counts of a
pool version and per-assessor counts (lead-only)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class PoolTopicProgress:
    """Judging state of one topic of a pool version (lead's pool page).

    Attributes:
        topic_id: topic.
        n_documents: documents pooled for the topic (this version and ancestors).
        n_assigned: documents assigned to at least one assessor.
        n_judged: documents with at least one current graded or unsure judgment
            by a person (model assessors' judgments are not counted).
        n_multi_judged: documents with current judgments from two or more people.
    """

    topic_id: str
    n_documents: int
    n_assigned: int
    n_judged: int
    n_multi_judged: int



@dataclass(frozen=True, slots=True)
class AssessorProgress:
    """One user's judging so far, over everything assigned to them (lead's overview).

    Attributes:
        user: user name.
        role: ``assessor`` or ``lead``.
        n_assigned: queue entries (assignments).
        n_graded: assigned documents with a current grade.
        n_unsure: assigned documents whose current judgment is "unsure".
        n_timed: of those, judgments with a recorded time on the document (> 0 ms;
            imported judgments have none).
        median_ms: median time on a document before the save, milliseconds
            (None without timed judgments).
        p90_ms: 90th percentile of the same (linear interpolation, DuckDB ``quantile_cont``).
        last_saved_at: the latest save, or None.
    """

    user: str
    role: str
    n_assigned: int
    n_graded: int
    n_unsure: int
    n_timed: int
    median_ms: float | None
    p90_ms: float | None
    last_saved_at: datetime | None

    @property
    def n_left(self) -> int:
        """Assigned documents without a current judgment."""
        return self.n_assigned - self.n_graded - self.n_unsure
