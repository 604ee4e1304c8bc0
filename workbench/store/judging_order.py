"""Store methods for adaptive judging order (a mixin of ``LabelStore``).

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

from workbench.errors import ValidationError
from workbench.store._rows import _one
from workbench.store.assignments import AssignmentsMixin


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


_SETTING_COLS = "pool_version, strategy, refresh_every, stopping, budget, topic_budgets, set_by, set_at"
_ORDER_COLS = "pool_version, topic_id, strategy, n_judged, n_relevant, stopped, estimate, ordered_at"


def _setting(row: Sequence[Any]) -> JudgingSetting:
    return JudgingSetting(row[0], row[1], int(row[2]), row[3], None if row[4] is None else int(row[4]),
                          {str(k): int(v) for k, v in json.loads(row[5] or "{}").items()}, row[6], row[7])


class JudgingOrderMixin(AssignmentsMixin):
    """Judging strategies per pool version; queue re-ordering and topic stops."""

    def set_judging_setting(
        self,
        pool_version: str,
        *,
        strategy: str,
        lead: str,
        refresh_every: int = 1,
        stopping: str = "",
        budget: int | None = None,
        topic_budgets: Mapping[str, int] | None = None,
    ) -> JudgingSetting:
        """Set a pool version's judging strategy and stopping settings (a lead's action).

        The spec strings are stored as given: validate them first
        (``services.judging.order`` does).

        Raises:
            PermissionDeniedError: ``lead`` is not a lead.
            UnknownNameError: unknown pool version.
            ValidationError: refresh_every < 1 or a budget < 1.
        """
        if refresh_every < 1:
            raise ValidationError(f"expected --refresh-every >= 1 saves, found {refresh_every}")
        budgets = dict(topic_budgets or {})
        if (budget is not None and budget < 1) or any(b < 1 for b in budgets.values()):
            raise ValidationError("expected budgets of at least 1 judgment per topic")
        with self.transaction(f"set judging strategy of {pool_version}") as cur:
            self._require_lead(cur, lead, "set the judging strategy")
            self._pool_row(cur, pool_version)
            cur.execute(
                "INSERT INTO judging_settings (pool_version, strategy, refresh_every, stopping, budget, "
                "topic_budgets, set_by) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [pool_version, strategy, int(refresh_every), stopping, budget, json.dumps(budgets, sort_keys=True),
                 lead],
            )
            row = _one(cur.execute(f"SELECT {_SETTING_COLS} FROM current_judging_settings WHERE pool_version = ?",
                                   [pool_version]))
        return _setting(row)

    def judging_setting(self, pool_version: str) -> JudgingSetting | None:
        """The current judging setting of a pool version, or None (today's ``rank`` order, no stopping)."""
        with self.connection("read judging strategy") as cur:
            row = _one(cur.execute(f"SELECT {_SETTING_COLS} FROM current_judging_settings WHERE pool_version = ?",
                                   [pool_version]))
        return None if row is None else _setting(row)

    def topic_orders(self, pool_version: str) -> dict[str, TopicOrderState]:
        """topic_id -> the latest re-ordering of each topic of a pool version (topics never re-ordered absent)."""
        with self.connection("read topic orders") as cur:
            rows = cur.execute(f"SELECT {_ORDER_COLS} FROM current_topic_orders WHERE pool_version = ?",
                               [pool_version]).fetchall()
        return {r[1]: TopicOrderState(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5],
                                      None if r[6] is None else float(r[6]), r[7]) for r in rows}

    def topic_assessors(self, pool_version: str, topic_id: str) -> list[str]:
        """The assessors with entries of one topic of a pool version, by name."""
        with self.connection("read topic assessors") as cur:
            rows = cur.execute("SELECT DISTINCT assessor FROM assignments WHERE pool_version = ? AND topic_id = ? "
                               "ORDER BY assessor", [pool_version, topic_id]).fetchall()
        return [r[0] for r in rows]

    def apply_topic_order(
        self,
        pool_version: str,
        topic_id: str,
        order: Sequence[str],
        *,
        strategy: str,
        n_judged: int,
        n_relevant: int,
        stopped: str = "",
        estimate: float | None = None,
    ) -> int:
        """Re-order every assessor's unjudged entries of one topic and record it (one transaction).

        Args:
            pool_version: the pool version the entries were assigned from.
            topic_id: the topic.
            order: doc ids in the wanted order; an assessor's unjudged entries
                take the positions those entries already hold, sorted, in this
                order (entries not in ``order`` keep their relative order, after).
            strategy: the strategy's canonical spec (recorded).
            n_judged: documents of the topic people have judged (recorded).
            n_relevant: of those, relevant (recorded).
            stopped: why judging of the topic stops now ("" = it goes on); a
                stopped topic's documents nobody judged leave the queues.
            estimate: the strategy's estimate of relevant documents left, or None.

        Returns:
            The number of queue entries whose position changed.

        Raises:
            UnknownNameError: unknown pool version.
        """
        import pyarrow as pa

        rank = {d: i for i, d in enumerate(order)}
        ids: list[int] = []
        positions: list[int] = []
        with self.transaction(f"re-order topic {topic_id} of {pool_version}") as cur:
            self._pool_row(cur, pool_version)
            rows = cur.execute(
                "SELECT a.assignment_id, a.assessor, a.doc_id, a.position FROM assignments a "
                "WHERE a.pool_version = ? AND a.topic_id = ? AND NOT EXISTS (SELECT 1 FROM judgments j "
                "WHERE j.collection = a.collection AND j.topic_id = a.topic_id AND j.doc_id = a.doc_id "
                "AND j.assessor = a.assessor) ORDER BY a.assessor, a.position, a.assignment_id",
                [pool_version, topic_id],
            ).fetchall()
            by_assessor: dict[str, list[tuple[int, str, int]]] = {}
            for aid, who, doc, pos in rows:
                by_assessor.setdefault(who, []).append((int(aid), doc, int(pos)))
            for entries in by_assessor.values():
                slots = sorted(p for _a, _d, p in entries)
                wanted = sorted(enumerate(entries), key=lambda ie: (rank.get(ie[1][1], len(rank)), ie[0]))
                for slot, (_i, (aid, _doc, pos)) in zip(slots, wanted, strict=True):
                    if slot != pos:
                        ids.append(aid)
                        positions.append(slot)
            if ids:
                cur.register("wb_new_positions", pa.table({"assignment_id": pa.array(ids, pa.int64()),
                                                           "position": pa.array(positions, pa.int32())}))
                try:
                    cur.execute("UPDATE assignments SET position = n.position FROM wb_new_positions n "
                                "WHERE assignments.assignment_id = n.assignment_id")
                finally:
                    cur.unregister("wb_new_positions")
            cur.execute(
                "INSERT INTO topic_orders (pool_version, topic_id, strategy, n_judged, n_relevant, stopped, estimate) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [pool_version, topic_id, strategy, int(n_judged), int(n_relevant), stopped, estimate],
            )
        return len(ids)
