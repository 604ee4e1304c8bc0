"""Store methods for assignments (a mixin of ``LabelStore``): a lead's
assignment plan becomes per-assessor queue entries; an assessor reads their
queue and the blind judging view of one position (no run, rank, score or
other assessor's grade)."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.errors import ValidationError
from workbench.judging.queue import JudgingView
from workbench.store._rows import ItemKey, _one
from workbench.store.judging_pools import JudgingPoolsMixin
from workbench.store.users import UsersMixin
from workbench.types import Document, Topic


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One document of an assessor's queue (no run, rank or score).

    Attributes:
        position: 1-based position in the assessor's queue.
        pool_version: the pool version it was assigned from.
        collection: collection name.
        topic_id: topic.
        doc_id: document.
        judged: the assessor has a current judgment on it (a grade or unsure).
        grade: the assessor's current grade (None when unsure or not judged).
        unsure: the current judgment is "unsure".
    """

    position: int
    pool_version: str
    collection: str
    topic_id: str
    doc_id: str
    judged: bool
    grade: int | None = None
    unsure: bool = False


@dataclass(frozen=True, slots=True)
class AssignReport:
    """What an ``assign`` call stored.

    Attributes:
        pool_version: the pool version assigned.
        batch: the batch id of this assign action.
        added: assessor -> number of new assignments.
        skipped: assessor -> number already assigned to them before (not repeated).
    """

    pool_version: str
    batch: str
    added: dict[str, int]
    skipped: dict[str, int]



VISIBLE = (
    "(NOT EXISTS (SELECT 1 FROM current_topic_orders s WHERE s.pool_version = a.pool_version "
    "AND s.topic_id = a.topic_id AND s.stopped <> '') "
    "OR EXISTS (SELECT 1 FROM judgments j WHERE j.collection = a.collection AND j.topic_id = a.topic_id "
    "AND j.doc_id = a.doc_id AND j.assessor NOT IN (SELECT user_name FROM model_assessors)))"
)
"""SQL on ``assignments a``: the entry is in the queue (its topic's judging has not
stopped, or a person judged the document)."""

GROUP_SKIPPED = (
    "(EXISTS (SELECT 1 FROM current_group_modes gm WHERE gm.pool_version = a.pool_version AND gm.mode = 'skip') "
    "AND EXISTS (SELECT 1 FROM pools p "
    "  JOIN duplicate_groups g1 ON g1.collection_version = p.collection_version AND g1.doc_id = a.doc_id "
    "  JOIN duplicate_groups g2 ON g2.collection_version = g1.collection_version AND g2.source = g1.source "
    "       AND g2.group_id = g1.group_id AND g2.doc_id <> g1.doc_id "
    "  JOIN current_judgments j ON j.collection = a.collection AND j.topic_id = a.topic_id AND j.doc_id = g2.doc_id "
    "       AND j.grade IS NOT NULL AND j.assessor NOT IN (SELECT user_name FROM model_assessors) "
    "  WHERE p.pool_version = a.pool_version) "
    "AND NOT EXISTS (SELECT 1 FROM judgments m WHERE m.collection = a.collection AND m.topic_id = a.topic_id "
    "  AND m.doc_id = a.doc_id AND m.assessor = a.assessor))"
)
"""SQL on ``assignments a``: the entry is skipped as a duplicate (``judging.groups``, mode ``skip``): its pool
version's current group mode is ``skip``, another member of the document's duplicate group (same
collection version, same group of the same source) has a person's current grade for the topic, and this
assessor has saved nothing on the document (what an assessor saved stays in their queue)."""


def _queue_filters(cur: Any) -> str:
    """The conditions a queue query on ``assignments a`` needs now (appended to its WHERE).

    ``VISIBLE`` and ``GROUP_SKIPPED`` each scan every judgment, and the second
    the latest-judgment view: the bulk of a judging screen's lease. They change
    nothing while no topic's judging has ever stopped and no pool was ever set to
    skip mode, which one look at the two (append-only) tables tells: a row there
    that is no longer current only keeps the exact, slower condition.
    """
    stopped, skip = _one(cur.execute(
        "SELECT EXISTS (SELECT 1 FROM topic_orders WHERE stopped <> ''), "
        "EXISTS (SELECT 1 FROM group_modes WHERE mode = 'skip')"))
    return (f" AND {VISIBLE}" if stopped else "") + (f" AND NOT {GROUP_SKIPPED}" if skip else "")


class AssignmentsMixin(UsersMixin, JudgingPoolsMixin):
    """Assignment plans, assessor queues and the judging view."""

    def assign(
        self,
        pool_version: str,
        plan: Mapping[str, Sequence[ItemKey]],
        *,
        lead: str,
        batch: str = "",
    ) -> AssignReport:
        """Store an assignment plan (one transaction): queue entries per assessor.

        Documents an assessor already has in their queue (from any pool
        version of the collection) are skipped, so re-assigning never makes
        anyone judge a document twice. New entries go to the end of each
        assessor's queue, in the plan's order.

        Args:
            pool_version: the pool version the documents come from.
            plan: assessor -> (topic_id, doc_id) in queue order (see
                ``workbench.judging.queue.plan_assignments``).
            lead: the lead assigning (role checked).
            batch: an id for this action (default: a random one).

        Returns:
            ``AssignReport`` with the added and skipped counts per assessor.

        Raises:
            PermissionDeniedError: ``lead`` is not a lead.
            UnknownNameError: unknown pool version or assessor.
            ValidationError: a document that is not in the pool version.
        """
        import pyarrow as pa

        batch = batch or secrets.token_hex(6)
        added: dict[str, int] = {}
        skipped: dict[str, int] = {}
        with self.transaction(f"assign {pool_version}") as cur:
            self._require_lead(cur, lead, "assign")
            collection, _v, _p = self._pool_row(cur, pool_version)
            pooled = {
                (t, d)
                for t, d in cur.execute(
                    "SELECT topic_id, doc_id FROM pool_entries WHERE pool_version = ?", [pool_version]
                ).fetchall()
            }
            cols: dict[str, list[Any]] = {"topic_id": [], "doc_id": [], "assessor": [], "position": []}
            for assessor, items in plan.items():
                self._user(cur, assessor)
                have = {
                    (t, d)
                    for t, d in cur.execute(
                        "SELECT topic_id, doc_id FROM assignments WHERE collection = ? AND assessor = ?",
                        [collection, assessor],
                    ).fetchall()
                }
                start = _one(cur.execute(
                    "SELECT coalesce(max(position), 0) FROM assignments WHERE assessor = ?", [assessor]
                ))[0]
                n_new = 0
                for key in items:
                    if key not in pooled:
                        raise ValidationError(
                            f"assign: topic {key[0]!r} document {key[1]!r} is not in pool version {pool_version!r}"
                        )
                    if key in have:
                        skipped[assessor] = skipped.get(assessor, 0) + 1
                        continue
                    have.add(key)
                    n_new += 1
                    cols["topic_id"].append(key[0])
                    cols["doc_id"].append(key[1])
                    cols["assessor"].append(assessor)
                    cols["position"].append(start + n_new)
                added[assessor] = n_new
                skipped.setdefault(assessor, 0)
            if cols["topic_id"]:
                cur.register(
                    "wb_new_assignments",
                    pa.table({**cols, "position": pa.array(cols["position"], pa.int32())}),
                )
                try:
                    cur.execute(
                        "INSERT INTO assignments (pool_version, collection, topic_id, doc_id, assessor, "
                        "position, batch, assigned_by) "
                        "SELECT ?, ?, topic_id, doc_id, assessor, position, ?, ? FROM wb_new_assignments",
                        [pool_version, collection, batch, lead],
                    )
                finally:
                    cur.unregister("wb_new_assignments")
        return AssignReport(pool_version, batch, added, skipped)

    def assessor_queue(self, assessor: str) -> list[QueueEntry]:
        """An assessor's queue in judging order, with a judged flag per entry.

        Positions are renumbered 1..n in stored order (gaps cannot occur, but
        the UI relies on a dense numbering). Documents of a topic whose judging
        stopped (a budget or stopping rule, ``topic_orders``) leave the queue
        unless a person has judged them (double judging still applies).
        """
        with self.connection("read queue") as cur:
            # The assessor's latest row per document is their state (see JudgmentsMixin).
            shown = _queue_filters(cur)
            rows = cur.execute(
                "WITH mine AS (SELECT collection, topic_id, doc_id, grade, unsure, row_number() OVER ("
                "      PARTITION BY collection, topic_id, doc_id ORDER BY judgment_id DESC) AS rn "
                "      FROM judgments WHERE assessor = ?) "
                "SELECT a.pool_version, a.collection, a.topic_id, a.doc_id, "
                "       coalesce(m.grade IS NOT NULL OR m.unsure, false), m.grade, coalesce(m.unsure, false) "
                "FROM assignments a LEFT JOIN mine m ON m.rn = 1 AND m.collection = a.collection "
                "     AND m.topic_id = a.topic_id AND m.doc_id = a.doc_id "
                f"WHERE a.assessor = ?{shown} ORDER BY a.position, a.assignment_id",
                [assessor, assessor],
            ).fetchall()
        return [QueueEntry(i, p, c, t, d, bool(j), None if g is None else int(g), bool(u))
                for i, (p, c, t, d, j, g, u) in enumerate(rows, 1)]

    def judging_view(self, assessor: str, position: int) -> JudgingView | None:
        """What the judging screen shows at a queue position (blind: no run,
        rank, score or other assessor's grade), or None past the queue's end.

        Raises:
            ValidationError: position < 1.
        """
        if position < 1:
            raise ValidationError(f"queue position must be >= 1, found {position}")
        with self.connection("read document to judge") as cur:
            shown = _queue_filters(cur)
            n = _one(cur.execute(f"SELECT count(*) FROM assignments a WHERE a.assessor = ?{shown}", [assessor]))[0]
            row = _one(cur.execute(
                "SELECT a.pool_version, a.collection, a.topic_id, a.doc_id, p.collection_version "
                "FROM assignments a JOIN pools p ON p.pool_version = a.pool_version "
                f"WHERE a.assessor = ?{shown} ORDER BY a.position, a.assignment_id LIMIT 1 OFFSET ?",
                [assessor, position - 1],
            ))
            if row is None:
                return None
            pool_version, collection, topic_id, doc_id, version = row
            t = _one(cur.execute(
                "SELECT title, description, narrative FROM topics WHERE collection = ? AND topic_id = ?",
                [collection, topic_id],
            ))
            d = _one(cur.execute(
                "SELECT t.title, t.text FROM version_documents v JOIN document_texts t USING (text_hash) "
                "WHERE v.collection_version = ? AND v.doc_id = ?",
                [version, doc_id],
            ))
            own = _one(cur.execute(
                "SELECT grade, unsure, note FROM judgments WHERE collection = ? AND topic_id = ? "
                "AND doc_id = ? AND assessor = ? ORDER BY judgment_id DESC LIMIT 1",
                [collection, topic_id, doc_id, assessor],
            ))
        topic = Topic(topic_id, *(t or ("(topic text missing)", "", "")))
        document = Document(doc_id, *(d or ("", "(document text missing from the collection version)")))
        return JudgingView(
            position=position,
            n_queue=int(n),
            collection=collection,
            pool_version=pool_version,
            topic=topic,
            document=document,
            own_grade=None if own is None or own[0] is None else int(own[0]),
            own_unsure=bool(own[1]) if own else False,
            own_note=own[2] if own else "",
        )
