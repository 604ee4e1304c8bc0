"""Store methods for judging (a mixin of ``LabelStore``), composed of one mixin
per responsibility:

* ``users``: users, tokens, sign-in, the lead role check;
* ``rubrics``: the grade scale of each collection;
* ``judging_pools``: pool versions, their lineage and entries as judging reads them;
* ``assignments``: assignment plans, assessor queues, the blind judging view;
* ``judgments``: the append-only save path, current judgments and history;
* ``adjudications``: a lead's final grades, rule-derived final grades;
* ``publishing``: freezing final grades into qrels versions, qrels diffs;
* ``progress``: per-topic judging progress and per-run contributions.

Facts are append-only: each save is one ``judgments`` row, each adjudication
one ``adjudications`` row; the current values are views. The names these
modules define are re-exported here, so ``from workbench.store.judging import
StoredJudgment`` keeps working.
"""

from __future__ import annotations

from workbench.store._rows import ItemKey
from workbench.store.adjudications import StoredAdjudication
from workbench.store.assignments import AssignmentsMixin, AssignReport, QueueEntry
from workbench.store.judgments import SavedJudgment, StoredJudgment
from workbench.store.progress import PoolTopicProgress, ProgressMixin
from workbench.store.publishing import PublishingMixin
from workbench.store.users import PBKDF2_ITERATIONS, ROLES, Role, UserInfo, hash_token, users_of

__all__ = [
    "PBKDF2_ITERATIONS",
    "ROLES",
    "AssignReport",
    "ItemKey",
    "JudgingMixin",
    "PoolTopicProgress",
    "QueueEntry",
    "Role",
    "SavedJudgment",
    "StoredAdjudication",
    "StoredJudgment",
    "UserInfo",
    "hash_token",
    "users_of",
]


class JudgingMixin(PublishingMixin, AssignmentsMixin, ProgressMixin):
    """Domain verbs on judging; every multi-row change is one ``transaction()``.

    The method resolution order runs publishing -> adjudications -> judgments
    -> rubrics -> assignments -> users -> progress -> judging pools -> core;
    no two of these mixins define the same method.
    """
