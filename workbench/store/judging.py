"""Store methods for judging (a mixin of ``LabelStore``), composed of one mixin
per responsibility:

* ``users``: users, tokens, sign-in, the lead role check;
* ``rubrics``: the grade scale of each collection;
* ``judging_pools``: pool versions, their lineage and entries as judging reads them;
* ``assignments``: assignment plans, assessor queues, the blind judging view;
* ``judgments``: the append-only save path, current judgments and history;
* ``adjudications``: a lead's final grades, rule-derived final grades;
* ``agreement_counts``: confusion and coincidence counts for agreement, in SQL;
* ``publishing``: freezing final grades into qrels versions, qrels diffs;
* ``progress``: per-topic judging progress and per-run contributions;
* ``judging_order``: a pool's judging strategy and stopping settings, queue
  re-ordering and topic stops;
* ``model_assessors``: users of kind model (identity: model, weights, grade mapping).

Facts are append-only: each save is one ``judgments`` row, each adjudication
one ``adjudications`` row; the current values are views. The names these
modules define are re-exported here, so ``from workbench.store.judging import
StoredJudgment`` keeps working.
"""

from __future__ import annotations

from workbench.store._rows import ItemKey
from workbench.store.adjudications import StoredAdjudication
from workbench.store.agreement_counts import AgreementCountsMixin
from workbench.store.assignments import AssignReport, QueueEntry
from workbench.store.judging_order import JudgingOrderMixin, JudgingSetting, TopicOrderState
from workbench.store.judgments import SavedJudgment, StoredJudgment
from workbench.store.model_assessors import ModelAssessorInfo, ModelAssessorsMixin
from workbench.store.progress import PoolTopicProgress, ProgressMixin
from workbench.store.publishing import PublishingMixin
from workbench.store.users import PBKDF2_ITERATIONS, ROLES, Role, UserInfo, hash_token, users_of

__all__ = [
    "PBKDF2_ITERATIONS",
    "ROLES",
    "AssignReport",
    "ItemKey",
    "JudgingMixin",
    "JudgingSetting",
    "ModelAssessorInfo",
    "PoolTopicProgress",
    "QueueEntry",
    "Role",
    "SavedJudgment",
    "StoredAdjudication",
    "StoredJudgment",
    "TopicOrderState",
    "UserInfo",
    "hash_token",
    "users_of",
]


class JudgingMixin(PublishingMixin, JudgingOrderMixin, ModelAssessorsMixin, ProgressMixin, AgreementCountsMixin):
    """Domain verbs on judging; every multi-row change is one ``transaction()``.

    No two of these mixins define the same method, so the method resolution
    order (publishing, adjudications, judgments, rubrics, judging order,
    assignments, model assessors, users, progress, judging pools, core) only
    decides who sees whom.
    """
