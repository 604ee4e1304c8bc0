"""What assignments are (``QueueEntry``, ``AssignReport``) and which entries a queue shows
(``VISIBLE``, ``GROUP_SKIPPED``, ``queue_filters``); written and read by ``store.judging``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.store._rows import _one


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
        note: the assessor's current note on it ("" when none; a note saved on its own counts).
    """

    position: int
    pool_version: str
    collection: str
    topic_id: str
    doc_id: str
    judged: bool
    grade: int | None = None
    unsure: bool = False
    note: str = ""


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


def queue_filters(cur: Any) -> str:
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
