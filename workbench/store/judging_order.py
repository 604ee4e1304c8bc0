"""What the store keeps of adaptive judging order (written and read by ``store.judging``).

A lead sets a pool version's judging strategy and stopping settings
(``judging_settings``, append-only; the latest row is current). When a
strategy re-orders a topic, ``apply_topic_order`` rewrites, in one
transaction, the queue positions of every assessor's *unjudged* entries of
that topic (the set of positions is kept, so judged entries stay where they
were and the next unjudged position holds the strategy's choice), and appends
a ``topic_orders`` row: how much was judged, whether judging of the topic
stopped and why, and the strategy's estimate of relevant documents left.
Queue positions are a derived order, not a fact: who was assigned what never
changes, and no judgment is touched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class JudgingSetting:
    """A pool version's judging strategy and stopping settings.

    Attributes:
        pool_version: the pool version.
        strategy: the strategy's canonical spec (``rank``, ``cal``, ``bandit(method='thompson')``, ...).
        refresh_every: queues follow the strategy after this many saves on a topic (>= 1).
        stopping: a stopping rule spec (``knee``, ``stop_after_nonrelevant(n=20)``), "" for none.
        budget: judgments per topic before its judging stops (None = none).
        topic_budgets: topic_id -> budget, overriding ``budget``.
        set_by: the lead.
        set_at: when.
    """

    pool_version: str
    strategy: str
    refresh_every: int = 1
    stopping: str = ""
    budget: int | None = None
    topic_budgets: Mapping[str, int] = field(default_factory=dict)
    set_by: str = ""
    set_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class TopicOrderState:
    """The latest re-ordering of one topic of a pool version.

    Attributes:
        pool_version: the pool version.
        topic_id: the topic.
        strategy: the strategy that ordered it.
        n_judged: documents of the topic people had judged then.
        n_relevant: of those, relevant (by the pool's final-grade rule).
        stopped: why judging of the topic stopped ("" = it goes on).
        estimate: estimated relevant documents still unjudged (None = the strategy gives none).
        ordered_at: when.
    """

    pool_version: str
    topic_id: str
    strategy: str
    n_judged: int
    n_relevant: int
    stopped: str
    estimate: float | None
    ordered_at: datetime


SETTING_COLUMNS = "pool_version, strategy, refresh_every, stopping, budget, topic_budgets, set_by, set_at"
ORDER_COLUMNS = "pool_version, topic_id, strategy, n_judged, n_relevant, stopped, estimate, ordered_at"


def setting_of_row(row: Sequence[Any]) -> JudgingSetting:
    """A ``judging_settings`` row (``SETTING_COLUMNS``) as ``JudgingSetting``."""
    return JudgingSetting(row[0], row[1], int(row[2]), row[3], None if row[4] is None else int(row[4]),
                          {str(k): int(v) for k, v in json.loads(row[5] or "{}").items()}, row[6], row[7])
