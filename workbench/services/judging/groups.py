"""Duplicate groups in judging (``workbench groups offers``): offers to the lead, or skips (``judging.groups``).

``pool_group_offers`` lists, for a pool version, the unjudged pooled members
of duplicate groups that have a judged member for the same topic; with
``mode="offer"`` a lead may accept them (``accept_group_offers``): each is saved
as the lead's judgment with the pre-filled grade and a note naming the judged
member, all in one transaction through the import path (rubric checked,
idempotent: accepting twice saves nothing the second time). Assessors never
see offers. With ``mode="skip"`` nothing is recorded: the members are left
unjudged and ``score --dedupe groups`` scores the group by its judged member.
The mode of a pool version is stored (``set_group_mode``, ``workbench groups
mode``): in ``skip`` mode the other members leave every assessor's queue as
soon as one member is graded for the topic (``store.judging.group_mode``), unless the
assessor had already saved something on them.
Offers whose members were graded differently (``conflict``) are never
accepted in bulk: the lead judges them one by one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.judging.groups import GroupOffer, group_offers
from workbench.types import Judgment

if TYPE_CHECKING:
    from workbench.judging.log import JudgmentLog
    from workbench.services.judging.sessions import Session
    from workbench.store.judging import Judging
    from workbench.store.pools import Pools
    from workbench.store.units import Units


def pool_group_offers(
    pools: Pools, units: Units, judgments: JudgmentLog, pool_version: str,
) -> list[GroupOffer]:
    """The group offers of a pool version (its own entries), from the current judgments of its lineage.

    Raises:
        UnknownNameError: unknown pool version.
    """
    info = pools.get_pool(pool_version)
    groups = units.get_duplicate_groups(info.collection, info.collection_version or None)
    if not len(groups):
        return []
    _, items = pools.judging_pool_items(pool_version)
    judged: dict[tuple[str, str], list[int]] = {}
    for j in judgments.current_judgments(info.collection):
        if j.grade is not None:
            judged.setdefault((j.topic_id, j.doc_id), []).append(int(j.grade))
    return group_offers(groups, [(i.topic_id, i.doc_id) for i in items], judged)


def accept_group_offers(judgments: JudgmentLog, pools: Pools, session: Session, pool_version: str,
                        offers: list[GroupOffer]) -> tuple[int, int]:
    """Save the non-conflicting offers as the lead's judgments (one transaction).

    Returns:
        (judgments saved, conflicting offers left for the lead to judge).

    Raises:
        PermissionDeniedError: the session is not a lead's.
        ValidationError: a pre-filled grade is not on the collection's rubric.
    """
    from workbench.services.judging.sessions import require_lead

    require_lead(session, "accept duplicate-group offers")
    info = pools.get_pool(pool_version)
    todo = [o for o in offers if not o.conflict]
    items = [(Judgment(topic_id=o.topic_id, doc_id=o.doc_id, assessor=session.user, grade=o.grade,
                       note=f"duplicate group of {', '.join(o.from_docs)}: grade pre-filled"),
              f"group-offer:{pool_version}:{o.topic_id}:{o.doc_id}:{o.grade}", None) for o in todo]
    saved = judgments.record_judgments(items, collection=info.collection, pool_version=pool_version,
                                   lead=session.user) if items else []
    return sum(1 for s in saved if s.new), len(offers) - len(todo)


def set_group_mode(judging: Judging, session: Session, pool_version: str, mode: str) -> int:
    """A lead sets how a pool version's duplicate groups are judged: ``offer`` or ``skip`` (append-only).

    Returns:
        The setting's id.

    Raises:
        PermissionDeniedError: the session is not a lead's.
        ValidationError: an unknown mode.
        UnknownNameError: unknown pool version.
    """
    from workbench.services.judging.sessions import require_lead

    require_lead(session, "set the duplicate-group mode")
    return judging.set_group_mode(pool_version, mode, lead=session.user)
