"""Judging with duplicate groups: once one member of a group is judged, its other members need no assessor.

For every topic, a pooled document that is unjudged and whose duplicate group
(``scoring.groups``) has a member judged for that topic is either

* **offered** to the lead with the member's grade pre-filled (``mode="offer"``):
  the lead accepts (the grade is saved as the lead's judgment, with a note
  naming the judged member) or judges it; assessors are never shown the
  offer, so judging stays blind (no assessor learns another's grade); or
* **skipped** (``mode="skip"``): nothing is recorded and nobody is asked; the
  group is judged through its judged member, which ``--dedupe groups`` scores
  for the whole group.

The pre-filled grade is the highest current grade any assessor gave a
judged member of the group for that topic (a member judged unsure has no
grade); when members were given different grades the offer is marked
``conflict`` and lists them, so the lead sees the disagreement.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from workbench.ranking import natural_key
from workbench.scoring.groups import DuplicateGroups

GroupMode = Literal["offer", "skip"]
GROUP_MODES: tuple[str, ...] = ("offer", "skip")


@dataclass(frozen=True)
class GroupOffer:
    """An unjudged pooled document whose group has a judged member for the topic.

    Attributes:
        topic_id: the topic.
        doc_id: the unjudged member.
        grade: the pre-filled grade (highest grade of the judged members).
        from_docs: the judged members, natural id order.
        grades: the judged members' grades, sorted (more than one value: ``conflict``).
        group: the group's canonical member.
    """

    topic_id: str
    doc_id: str
    grade: int
    from_docs: tuple[str, ...]
    grades: tuple[int, ...]
    group: str

    @property
    def conflict(self) -> bool:
        """True when judged members of the group were given different grades."""
        return len(set(self.grades)) > 1


def group_offers(
    groups: DuplicateGroups,
    pooled: Iterable[tuple[str, str]],
    judged: Mapping[tuple[str, str], Sequence[int]],
) -> list[GroupOffer]:
    """The offers (or, in ``skip`` mode, the skipped items) of a pool.

    Args:
        groups: the collection version's duplicate groups.
        pooled: (topic, doc) pairs of the pool.
        judged: (topic, doc) -> the grades of its current judgments (unsure ones left out).

    Returns:
        One ``GroupOffer`` per unjudged pooled member of a group with a judged member, by topic then doc.

    Example:
        >>> g = DuplicateGroups.of([["d1", "d2", "d3"]])
        >>> [(o.doc_id, o.grade, o.from_docs) for o in group_offers(g, [("1", "d1"), ("1", "d2")], {("1", "d3"): [2]})]
        [('d1', 2, ('d3',)), ('d2', 2, ('d3',))]
    """
    canon = groups.canonical
    out: list[GroupOffer] = []
    for topic, doc in pooled:
        if (topic, doc) in judged or doc not in canon:
            continue
        c = canon[doc]
        members = [m for m in groups.members[c] if m != doc and judged.get((topic, m))]
        if not members:
            continue
        grades = sorted(g for m in members for g in judged[(topic, m)])
        out.append(GroupOffer(topic, doc, grades[-1], tuple(sorted(members, key=natural_key)), tuple(grades), c))
    out.sort(key=lambda o: (natural_key(o.topic_id), natural_key(o.doc_id)))
    return out
