"""Judging services: what the Streamlit pages and the CLI both call.

Every function takes the parts of the store it uses (``store.users``,
``store.judging``, the judgment log ``store.judgments``, ...), or the ``Store``
when it uses more (the save path, which re-orders queues by the pool's
strategy; assignment); neither holds more than a path, each store call takes
its own short lease and fresh cursor. Actions also take the signed-in
``Session``. Nothing here keeps a connection or a cursor between calls, and no
function calls Streamlit: a page calls a service, the service's write is one
store transaction, and the page renders afterwards.

Roles: ``sign_in`` proves an identity with the user's token once; lead-only
actions (assign, adjudicate, publish) re-check the role in the store.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import (
    DuplicateNameError,
    PermissionDeniedError,
    UnknownNameError,
    ValidationError,
    WorkbenchError,
)
from workbench.judging.adjudication import (
    DEFAULT_RULE,
    Decision,
    DecisionCounts,
    FinalGrades,
    QrelsDiff,
    QrelsDiffCounts,
    Suggestion,
    diff_qrels,
    disagreements,
    get_rule,
    suggest_grade,
)
from workbench.judging.agreement import (
    AgreementReport,
    Weights,
    agreement_from_counts,
)
from workbench.judging.queue import (
    DEFAULT_BAND_SIZE,
    JudgingView,
    QueueStatus,
    TopicPosition,
    plan_assignments,
    progress_counts,
    queue_status,
    resume_position,
    topic_position,
)
from workbench.judging.signin import SignInThrottle
from workbench.ranking import natural_key
from workbench.rubric import Rubric
from workbench.services.judging.sessions import Session, require_lead
from workbench.types import Judgment

if TYPE_CHECKING:
    from workbench.judging.log import JudgmentLog, SavedJudgment, StoredJudgment, UndoneJudgment
    from workbench.store import Store
    from workbench.store.adjudications import Adjudications, StoredAdjudication
    from workbench.store.assignments import AssignReport, QueueEntry
    from workbench.store.judging import Judging
    from workbench.store.pools import Pools
    from workbench.store.progress import AssessorProgress, PoolTopicProgress
    from workbench.store.qrels import Qrels, QrelsVersionInfo
    from workbench.store.rubrics import Rubrics
    from workbench.store.users import Users


class SignInThrottledError(PermissionDeniedError):
    """Too many failed sign-ins for a user name: the attempt was not checked.

    Attributes:
        wait_s: seconds until the next attempt for that name is checked.
    """

    def __init__(self, name: str, wait_s: float) -> None:
        self.wait_s = wait_s
        super().__init__(f"too many failed sign-ins for {name!r}: try again in {math.ceil(wait_s)} s")


def sign_in(users: Users, name: str, token: str, *, throttle: SignInThrottle | None = None,
            now: float | None = None) -> Session:
    """Check a user's token and open a session.

    Args:
        users: the store's users.
        name: user name (surrounding spaces ignored).
        token: the access token (surrounding spaces ignored).
        throttle: the serving process's per-user throttle (the UI's); None
            checks at once (the CLI, which needs the store file anyway).
        now: the time on the throttle's monotonic clock (default ``time.monotonic()``).

    Raises:
        SignInThrottledError: the name failed recently; the delay
            (``workbench.judging.signin``) has not passed, so the token is not checked.
        PermissionDeniedError: unknown user or wrong token (one message for
            both; with a throttle it says how long the next attempt waits).
    """
    name, token = name.strip(), token.strip()
    if throttle is None:
        user = users.authenticate(name, token)
        return Session(user.name, user.role)
    clock = time.monotonic() if now is None else now
    wait = throttle.begin(name, clock)
    if wait > 0:
        raise SignInThrottledError(name, wait)
    try:
        user = users.authenticate(name, token)
    except PermissionDeniedError as e:
        delay = throttle.finish(name, ok=False, now=clock)
        raise PermissionDeniedError(f"{e}; wait {math.ceil(delay)} s before the next attempt") from None
    except BaseException:
        throttle.abandon(name)  # not the user's failure (e.g. the store is busy): nothing recorded
        raise
    throttle.finish(name, ok=True, now=clock)
    return Session(user.name, user.role)


# -- assessors -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueueState:
    """An assessor's queue and progress.

    Attributes:
        entries: the queue in judging order (positions 1..n).
        resume: position to open: the first entry without a judgment (the last
            one when all are judged; 1 for an empty queue).
        progress: topic_id -> (judged, assigned), topics in queue order.
    """

    entries: list[QueueEntry]
    resume: int
    progress: dict[str, tuple[int, int]]

    @property
    def n_done(self) -> int:
        """Judged entries."""
        return sum(1 for e in self.entries if e.judged)

    @property
    def n_total(self) -> int:
        """Queue length."""
        return len(self.entries)

    @property
    def n_unsure(self) -> int:
        """Entries whose current judgment is "unsure" (counted in ``n_done``, shown apart)."""
        return sum(1 for e in self.entries if e.judged and e.unsure)

    @property
    def n_graded(self) -> int:
        """Entries with a current grade (``n_done - n_unsure``)."""
        return self.n_done - self.n_unsure

    def topic_place(self, position: int) -> TopicPosition:
        """Where a queue position sits in its topic ("2 of 5 in topic 3"; ``queue.topic_position``)."""
        return topic_position([e.topic_id for e in self.entries], position)

    def statuses(self) -> list[QueueStatus]:
        """judged / unsure / skipped / not yet per entry, in queue order (``queue.queue_status``)."""
        return queue_status([(e.grade, e.unsure and e.judged) for e in self.entries])


def queue_state(judging: Judging, session: Session) -> QueueState:
    """The signed-in user's queue, resume position and per-topic progress."""
    entries = judging.assessor_queue(session.user)
    keys = [(e.topic_id, e.doc_id) for e in entries]
    judged = {(e.topic_id, e.doc_id) for e in entries if e.judged}
    return QueueState(entries, resume_position(keys, judged), progress_counts(keys, judged))


def load_view(judging: Judging, session: Session, position: int) -> JudgingView | None:
    """The blind judging view at a position of the user's own queue (None past its end)."""
    return judging.judging_view(session.user, max(1, position))


def rubric_for(rubrics: Rubrics, collection: str) -> Rubric:
    """The rubric assessors of ``collection`` judge on."""
    return rubrics.collection_rubric(collection)


def save_judgment(
    store: Store,
    session: Session,
    view: JudgingView,
    *,
    grade: int | None,
    unsure: bool = False,
    note: str = "",
    duration_ms: int = 0,
    save_token: str | None = None,
) -> int:
    """Save the user's judgment of the document in ``view`` (one committed row).

    Same as ``save_judgment_outcome`` but returns only the judgment id.

    Args:
        store: the store.
        session: the signed-in assessor (the judgment is theirs).
        view: the view being judged (from ``load_view``).
        grade: a grade of the collection's rubric, or None with ``unsure``.
        unsure: the assessor could not decide.
        note: optional free text (stripped).
        duration_ms: time on the document, milliseconds (clamped at 0).
        save_token: idempotency key of this save action.

    Returns:
        The id of the assessor's current judgment of the document.

    Raises:
        ValidationError: grade not on the rubric, or neither grade nor unsure.
    """
    return save_judgment_outcome(
        store, session, view, grade=grade, unsure=unsure, note=note,
        duration_ms=duration_ms, save_token=save_token,
    ).judgment_id


def save_judgment_outcome(
    store: Store,
    session: Session,
    view: JudgingView,
    *,
    grade: int | None,
    unsure: bool = False,
    note: str = "",
    duration_ms: int = 0,
    save_token: str | None = None,
) -> SavedJudgment:
    """Save the user's judgment of the document in ``view`` and say what the store holds.

    Returns only after the commit, so the caller may show the next document.
    When the view carries a pre-filled model grade (``view.prefill``: the lead
    turned pre-fill on), the row records it and whether this save confirmed or
    changed it (``judging.prefill``).
    When the pool has a judging strategy, the topic's queues are re-ordered
    after the commit (``services.judging.order.after_save``), so the next
    position holds the strategy's choice.

    Args:
        store: the store.
        session: the signed-in assessor (the judgment is theirs).
        view: the view being judged (from ``load_view``).
        grade: a grade of the collection's rubric, or None with ``unsure``.
        unsure: the assessor could not decide.
        note: optional free text (stripped).
        duration_ms: time on the document, milliseconds (clamped at 0).
        save_token: idempotency key of this save *action*: the UI uses
            ``f"{shown_token}:{grade}:{unsure}"``, so a double submit of the
            same grade lands once and a different grade lands as a correction.

    Returns:
        ``SavedJudgment`` (judgment_id, new, grade, unsure): ``new`` is False
        for a duplicate save, and grade/unsure are what the store holds.

    Raises:
        ValidationError: grade not on the rubric, or neither grade nor unsure.
    """
    saved = store.judgments.record_judgment_outcome(
        Judgment(
            topic_id=view.topic.topic_id,
            doc_id=view.document.doc_id,
            assessor=session.user,
            grade=grade,
            unsure=unsure,
            note=note.strip(),
            duration_ms=max(0, int(duration_ms)),
        ),
        collection=view.collection,
        pool_version=view.pool_version,
        save_token=save_token,
        prefill=view.prefill,
    )
    if saved.new and saved.judging_setting:  # the pool's judging strategy re-orders the topic's queues now
        from workbench.services.judging.order import after_save_quietly

        after_save_quietly(store, view.pool_version, view.topic.topic_id)
    return saved


def save_note(judgments: JudgmentLog, session: Session, view: JudgingView, note: str) -> SavedJudgment:
    """Save the note on the document in ``view`` on its own ("Save note"): the
    assessor's current grade or unsure mark is kept; with none, the note is
    stored without a judgment. Never saves a grade the assessor did not give.

    Returns:
        ``SavedJudgment`` of the new row (grade/unsure: what the store holds).
    """
    return judgments.record_note(view.collection, view.topic.topic_id, view.document.doc_id, session.user,
                             note.strip(), pool_version=view.pool_version)


def undo_save(judgments: JudgmentLog, session: Session, judgment_id: int) -> UndoneJudgment:
    """Undo one of the user's saves (the judging UI's Undo): the state before it
    (grade, unsure mark and note, or no judgment) is restored by an appended row.

    Raises:
        UnknownNameError: not a save of this user.
        ValidationError: the document was saved again after it.
    """
    return judgments.undo_judgment(judgment_id, session.user)


@dataclass(frozen=True, slots=True)
class MyJudgment:
    """One entry of the assessor's "My judgments" list.

    Attributes:
        position: 1-based queue position.
        topic_id: topic.
        doc_id: document.
        status: ``judged``, ``unsure``, ``skipped`` or ``not yet`` (``queue.queue_status``).
        grade: the current grade (None unless judged).
        note: the assessor's current note ("" when none; kept with any status).
    """

    position: int
    topic_id: str
    doc_id: str
    status: QueueStatus
    grade: int | None
    note: str = ""


def my_judgments(state: QueueState, *, status: Sequence[str] | None = None,
                 topic_id: str | None = None) -> list[MyJudgment]:
    """The assessor's own queue with each entry's status, filtered.

    Args:
        state: the assessor's ``queue_state``.
        status: keep only these statuses (None = all).
        topic_id: keep only this topic (None = all).

    Returns:
        ``MyJudgment`` rows in queue order.
    """
    rows = [MyJudgment(e.position, e.topic_id, e.doc_id, st, e.grade, e.note)
            for e, st in zip(state.entries, state.statuses(), strict=True)]
    return [r for r in rows if (status is None or r.status in status) and (topic_id is None or r.topic_id == topic_id)]


def assessor_overview(judging: Judging) -> list[AssessorProgress]:
    """Every user with assignments: assigned, graded, unsure, left, and the time per
    judgment (median, p90) over their assigned documents (lead's Progress page)."""
    return judging.assessor_progress()


# -- leads -----------------------------------------------------------------------


def assign_pool(
    store: Store,
    session: Session,
    pool_version: str,
    assessors: Sequence[str],
    *,
    overlap: int | None = None,
    double_share: float | None = None,
    seed: int | str = 0,
    band_size: int = DEFAULT_BAND_SIZE,
    strategy: str | None = None,
    refresh_every: int = 1,
    stopping: str = "",
    budget: int | None = None,
    topic_budgets: Mapping[str, int] | None = None,
) -> AssignReport:
    """Assign a pool version's documents to assessors (lead only).

    Args:
        store: the store.
        session: the signed-in lead.
        pool_version: the pool version to judge.
        assessors: user names.
        overlap: assessors per document (see ``plan_assignments``).
        double_share: share of documents judged twice instead of ``overlap``.
        seed: seed of the split and of each assessor's order.
        band_size: documents per priority band.
        strategy: a judging strategy spec (``mtf``, ``bandit``, ``cal``, ...):
            the queues then follow it live (``services.judging.order``); None
            keeps the pool's current setting (by default ``rank``: the order above).
        refresh_every: with ``strategy``: re-order after this many saves on a topic.
        stopping: with ``strategy``: a stopping rule spec ("" = none).
        budget: with ``strategy``: judgments per topic (None = none).
        topic_budgets: with ``strategy``: topic_id -> budget.

    Returns:
        The store's ``AssignReport``.

    Raises:
        PermissionDeniedError: not a lead.
        ValidationError: invalid policy; UnknownNameError: unknown pool or user.
    """
    require_lead(session, "assign")
    _collection, items = store.pools.judging_pool_items(pool_version)
    plan = plan_assignments(
        items, list(assessors), overlap=overlap, double_share=double_share, seed=seed, band_size=band_size
    )
    from workbench.services.judging.order import check_settings, refresh_topics, set_strategy

    if strategy is not None:  # a bad strategy or stopping spec fails before anything is assigned
        check_settings(strategy, refresh_every=refresh_every, stopping=stopping, budget=budget,
                       topic_budgets=topic_budgets)
    report = store.judging.assign(pool_version, plan, lead=session.user)
    if strategy is not None:
        set_strategy(store, session, pool_version, strategy, refresh_every=refresh_every, stopping=stopping,
                     budget=budget, topic_budgets=topic_budgets)
    else:
        refresh_topics(store, pool_version)  # new entries follow the pool's strategy, if it has one
    return report


def pool_collection(pools: Pools, pool_version: str) -> str:
    """The collection of a pool version (UnknownNameError when unknown)."""
    return pools.get_pool(pool_version).collection


def agreement(
    judging: Judging, rubrics: Rubrics, pools: Pools, pool_version: str, *, weights: Weights = "linear",
) -> AgreementReport:
    """Kappa per assessor pair and alpha per topic and overall on a pool version's
    lineage, over the collection's rubric scale, from counts aggregated in the
    store (``store.judging.agreement_counts``; equal to ``agreement_report`` over
    ``item_grades``)."""
    collection = pool_collection(pools, pool_version)
    scale = rubrics.collection_rubric(collection).values
    return agreement_from_counts(judging.agreement_counts(collection, pool_version), scale=scale, weights=weights)


@dataclass(frozen=True, slots=True)
class DisagreementRow:
    """One document of the lead's disagreement queue.

    Attributes:
        topic_id: topic.
        doc_id: document.
        spread: max - min grade.
        judgments: each assessor's current judgment (grade, note, time), by name.
        adjudication: the current adjudication, if any.
        suggestions: (model assessor, grade) of model assessors that graded the
            document: a labelled suggestion for the lead, never an assessor's grade.
    """

    topic_id: str
    doc_id: str
    spread: int
    judgments: list[StoredJudgment]
    adjudication: StoredAdjudication | None = None
    suggestions: tuple[tuple[str, int], ...] = ()


def disagreement_queue(
    adjudications: Adjudications, judgments: JudgmentLog, pools: Pools, pool_version: str, *,
    include_adjudicated: bool = True,
) -> list[DisagreementRow]:
    """Documents needing a lead (grades differ, or a judgment is unsure), widest spread first.

    Only people's judgments decide what is listed; model assessors' grades ride
    along as ``suggestions``.

    Args:
        adjudications: the store's adjudications.
        judgments: the judgment log.
        pools: the store's pools.
        pool_version: the pool version (its ancestors included).
        include_adjudicated: also list documents already adjudicated.

    Returns:
        ``DisagreementRow`` list sorted by spread desc, topic_id, doc_id.
    """
    collection = pool_collection(pools, pool_version)
    current = judgments.current_judgments(collection, pool_version)
    adj = adjudications.current_adjudications(collection, pool_version)
    by_item: dict[tuple[str, str], list[StoredJudgment]] = {}
    for j in current:
        by_item.setdefault((j.topic_id, j.doc_id), []).append(j)
    grades = {k: {j.assessor: j.grade for j in v} for k, v in by_item.items()}
    models = adjudications.model_grades(collection, pool_version)
    rows = []
    for d in disagreements(grades, {k: a.grade for k, a in adj.items()}):
        a = adj.get((d.topic_id, d.doc_id))
        if a is not None and not include_adjudicated:
            continue
        hints = tuple(sorted(models.get((d.topic_id, d.doc_id), {}).items()))
        rows.append(DisagreementRow(d.topic_id, d.doc_id, d.spread, by_item[(d.topic_id, d.doc_id)], a, hints))
    return rows


@dataclass(frozen=True, slots=True)
class DeskItem:
    """A document on the lead's Adjudicate desk.

    Attributes:
        row: the disagreement (judgments, spread, current adjudication).
        suggestion: what the final-grade rule decides without the lead.
    """

    row: DisagreementRow
    suggestion: Suggestion

    @property
    def key(self) -> tuple[str, str]:
        """(topic_id, doc_id)."""
        return self.row.topic_id, self.row.doc_id


@dataclass(frozen=True, slots=True)
class AdjudicationDesk:
    """The Adjudicate page's queue.

    Attributes:
        items: pending documents first (widest spread first), then, when asked
            for, the already adjudicated ones.
        n_pending: documents that need a decision and have none.
        n_adjudicated: documents that needed one and have an adjudication.
        rule: the canonical final-grade rule behind the suggestions.
    """

    items: list[DeskItem]
    n_pending: int
    n_adjudicated: int
    rule: str


def adjudication_desk(
    adjudications: Adjudications, judgments: JudgmentLog, pools: Pools, pool_version: str, *,
    rule: str = DEFAULT_RULE, include_adjudicated: bool = False,
) -> AdjudicationDesk:
    """The documents needing a lead (``disagreement_queue``) with the rule's
    suggested grade for each, and correct pending/adjudicated counts.

    Raises:
        UnknownNameError: unknown pool version or rule.
    """
    r = get_rule(rule)
    rows = disagreement_queue(adjudications, judgments, pools, pool_version, include_adjudicated=True)
    pending = [DeskItem(x, suggest_grade({j.assessor: j.grade for j in x.judgments}, r))
               for x in rows if x.adjudication is None]
    done = [DeskItem(x, suggest_grade({j.assessor: j.grade for j in x.judgments}, r))
            for x in rows if x.adjudication is not None]
    return AdjudicationDesk(pending + (done if include_adjudicated else []), len(pending), len(done), r.name)


def accept_suggestions(
    adjudications: Adjudications, pools: Pools, session: Session, pool_version: str, items: Sequence[DeskItem],
) -> int:
    """Adjudicate every given document with its suggested grade (lead only), in
    one transaction; the rationale records the suggestion it accepted.

    Returns:
        How many documents were adjudicated (items without a suggestion are skipped).

    Raises:
        PermissionDeniedError: not a lead.
    """
    require_lead(session, "adjudicate")
    collection = pool_collection(pools, pool_version)
    batch = [(i.row.topic_id, i.row.doc_id, int(i.suggestion.grade), f"accepted the suggestion: {i.suggestion.reason}")
             for i in items if i.suggestion.grade is not None]
    if not batch:
        return 0
    return adjudications.adjudicate_many(collection, batch, lead=session.user, pool_version=pool_version)


def adjudicate(
    adjudications: Adjudications, judgments: JudgmentLog, pools: Pools,
    session: Session,
    pool_version: str,
    topic_id: str,
    doc_id: str,
    grade: int,
    rationale: str,
) -> int:
    """Set a document's final grade with a rationale (lead only).

    The rules of the Adjudicate page, for the UI and the CLI alike: a lead, a
    rationale, a document of the pool's disagreement queue (grades differ or
    an assessor was unsure; already adjudicated ones included), a grade of the
    collection's rubric.

    Raises:
        PermissionDeniedError: not a lead.
        ValidationError: empty rationale, a document not in the disagreement
            queue, or a grade off the rubric.
    """
    require_lead(session, "adjudicate")
    if not rationale.strip():
        raise ValidationError("adjudicate: expected a rationale, found none; say why this grade is final")
    collection = pool_collection(pools, pool_version)
    queue = disagreement_queue(adjudications, judgments, pools, pool_version, include_adjudicated=True)
    if not any(r.topic_id == topic_id and r.doc_id == doc_id for r in queue):
        raise ValidationError(
            f"adjudicate: topic {topic_id!r} document {doc_id!r} is not in the disagreement queue of pool "
            f"{pool_version!r} (its grades agree, it is not judged, or it is not pooled); list the queue with "
            f"`workbench adjudicate {pool_version} --list`")
    return adjudications.adjudicate(
        collection, topic_id, doc_id, grade, lead=session.user, rationale=rationale.strip(), pool_version=pool_version
    )


@dataclass(frozen=True, slots=True)
class PublishPreview:
    """What publishing would freeze, and how it differs from the parent.

    Attributes:
        pool_version: the pool version.
        rule: canonical final-grade rule.
        parent_version: the parent qrels version, or None.
        qrels: the entries that would be frozen.
        final: how each judged document's grade was decided.
        diff: against the parent (everything is *added* without a parent).
    """

    pool_version: str
    rule: str
    parent_version: str | None
    qrels: dict[str, dict[str, int]]
    final: FinalGrades
    diff: QrelsDiff

    @property
    def n_entries(self) -> int:
        """Entries that would be frozen."""
        return sum(len(d) for d in self.qrels.values())


def default_parent(qrels: Qrels, pools: Pools, pool_version: str) -> str | None:
    """The parent a new qrels version of ``pool_version`` should name by default:
    the latest version published from the pool version or one of its ancestors
    (None when none was published yet).

    Raises:
        UnknownNameError: unknown pool version.
    """
    lineage = set(pool_overview_lineage(pools, pool_version))
    published = [v for v in qrels.list_qrels_versions(pool_collection(pools, pool_version))
                 if v.origin == "published" and v.pool_version in lineage]
    return max(published, key=lambda v: v.created_at).name if published else None


def pool_overview_lineage(pools: Pools, pool_version: str) -> list[str]:
    """The pool version and its ancestors, root first.

    Raises:
        UnknownNameError: unknown pool version.
    """
    known = {p["pool_version"]: p for p in pools.judging_pools()}
    if pool_version not in known:
        pools.judging_pool_items(pool_version)  # raises UnknownNameError listing the pools
    lineage = [pool_version]
    while known[lineage[-1]]["parent_version"] and known[lineage[-1]]["parent_version"] in known:
        lineage.append(known[lineage[-1]]["parent_version"])
    return lineage[::-1]


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One changed or added entry of a publish preview, with how it was decided.

    Attributes:
        topic_id: topic.
        doc_id: document.
        parent_grade: the grade in the parent (None when added).
        grade: the grade that would be published.
        decided_by: ``adjudicated``, ``unanimous`` or ``fallback`` (the rule's fallback).
    """

    topic_id: str
    doc_id: str
    parent_grade: int | None
    grade: int
    decided_by: Decision | None


def publish_diff_rows(preview: PublishPreview, *, added: bool = False) -> list[DiffRow]:
    """The changed entries of a preview (or the added ones) with the step that decided each."""
    d = preview.final.decisions
    if added:
        return [DiffRow(q.topic_id, q.doc_id, None, q.grade, d.get((q.topic_id, q.doc_id)))
                for q in preview.diff.added]
    return [DiffRow(t, doc, o, n, d.get((t, doc))) for t, doc, o, n in preview.diff.changed]


def preview_publish(
    qrels: Qrels, pool_version: str, *, rule: str, parent_version: str | None = None,
    include_model: bool = False,
) -> PublishPreview:
    """The qrels a publish would freeze now, with the diff against the parent
    (``include_model``: with model grades where no person judged)."""
    canonical = get_rule(rule).name
    proposed, fg = qrels.proposed_qrels(pool_version, canonical, parent_version, include_model=include_model)
    parent = qrels.get_qrels(parent_version) if parent_version else {}
    return PublishPreview(pool_version, canonical, parent_version, proposed, fg, diff_qrels(parent, proposed))


@dataclass(frozen=True, slots=True)
class PublishResult:
    """A published qrels version.

    Attributes:
        info: the stored version (name, parent, pool, rule, counts, hash, time).
        diff: how many entries were added, changed and removed against the parent
            version (all added without one); ``store.qrels.qrels_diff`` lists them.
        decided: how the final grades were decided (unanimous, adjudicated, by the
            rule's fallback, unresolved, from models).
        path: the exported TREC qrels file, or None when not exported.
    """

    info: QrelsVersionInfo
    diff: QrelsDiffCounts
    decided: DecisionCounts
    path: Path | None = None


def export_qrels(qrels: Qrels, name: str, labels_dir: Path) -> Path:
    """Write a qrels version to ``labels_dir/<name>.qrels`` (atomic; TREC format)
    and record it in ``labels_dir/manifest.json`` (the ``qrels export`` service,
    ``services.judging.qrels_files.export_qrels``).

    Returns:
        The file written.
    """
    from workbench.services.judging.qrels_files import export_qrels as export

    return export(qrels, name, labels_dir=labels_dir).path


class ExportAfterPublishError(WorkbenchError):
    """The qrels version was published (committed, immutable), but writing its
    file failed; the message names the ``workbench qrels export`` command that
    writes it once the cause is fixed.

    Attributes:
        name: the published qrels version.
    """

    def __init__(self, name: str, cause: BaseException) -> None:
        self.name = name
        super().__init__(
            f"published {name}; exporting it failed: {cause}; fix that, then export it with "
            f"`workbench qrels export {name}`"
        )


def check_export_target(labels_dir: Path, name: str) -> Path:
    """Check, before anything is committed, that ``labels_dir/<name>.qrels`` and
    ``labels_dir/manifest.json`` can be written.

    Args:
        labels_dir: the folder the qrels file and manifest go to (created on export if missing).
        name: the qrels version name.

    Returns:
        The qrels file path that the export will write.

    Raises:
        ValidationError: the .qrels path is a folder, ``labels_dir`` is a file, the
            folder (or its nearest existing parent) is not writable, or the
            manifest is not an object with ``qrels_versions``.
        InputFormatError: the manifest is not valid JSON (path and line).
    """
    from workbench.formats.manifest import manifest_of, read_manifest
    from workbench.services.judging.qrels_files import export_file_name

    labels_dir = Path(labels_dir)
    path = labels_dir / export_file_name(name)
    if labels_dir.exists() and not labels_dir.is_dir():
        raise ValidationError(f"{labels_dir}: expected a folder for exported qrels, found a file; "
                              "move it away or pass another --db folder")
    if path.is_dir():
        raise ValidationError(f"{path}: expected a file path for the exported qrels, found a folder; "
                              "remove or rename it, or choose another version name")
    existing = labels_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValidationError(f"{existing}: expected a writable folder for exported qrels, found it read-only; "
                              "fix its permissions")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValidationError(f"{path}: expected a writable file, found it read-only; fix its permissions")
    read_manifest(manifest_of(labels_dir))
    return path


def _name_taken(qrels: Qrels, name: str, labels_dir: Path | None) -> DuplicateNameError | None:
    """The refusal of a publish under a taken name, saying when that version's export is
    incomplete or changed (a publish killed after its commit) and how to complete it; None if free."""
    from workbench.services.judging.qrels_files import check_export

    try:
        qrels.get_qrels_info(name)
    except UnknownNameError:
        return None
    message = f"qrels version {name!r} already exists and qrels versions are immutable; choose a new name"
    if labels_dir is not None:
        check = check_export(qrels, labels_dir, name)
        if not check.ok:
            message += (f". Its export does not agree with the store: {'; '.join(check.problems)}. If it is the "
                        f"version you are publishing again, that publish was committed before it stopped: "
                        f"{check.remedy()}")
    return DuplicateNameError(message)


def publish(
    qrels: Qrels,
    session: Session,
    pool_version: str,
    name: str,
    *,
    rule: str,
    parent_version: str | None = None,
    labels_dir: Path | None = None,
    note: str = "",
    include_model: bool = False,
    rubric: Rubric | None = None,
) -> PublishResult:
    """Freeze the final grades of a pool version as a qrels version (lead only),
    and export it to ``labels_dir/<name>.qrels`` when a folder is given.

    With ``rubric`` (the collection's), every final grade is first checked to be one of its
    grades (``check_final_grades``): a grade edited into ``judgments`` outside the workbench
    (99 on a 0-3 scale) refuses the publish, naming the topic and document.

    Model assessors' judgments are left out, unless ``include_model``: then a
    document no person judged takes the model grade, and the version records
    which model assessors supplied how many entries.

    The export target is checked before the commit (``check_export_target``),
    so a bad target refuses the publish and leaves the store untouched. The
    export is recorded in the transaction that creates the version, then the
    file and its manifest entry are written (``services.judging.qrels_files``): a
    publish killed after its commit leaves a version whose export is incomplete,
    which a publish under the same name, ``qrels list``, scoring and
    ``qrels verify`` report, and ``workbench qrels export NAME`` completes.

    Raises:
        PermissionDeniedError: not a lead.
        DuplicateNameError: the name is taken (the message says when that version's
            export is incomplete, and how to complete it).
        UnknownNameError: unknown pool, rule or parent.
        ValidationError: nothing judged yet, the export target is unusable, or a final grade is not
            a grade of ``rubric``.
        InputFormatError: the manifest in ``labels_dir`` is not valid JSON.
        ExportAfterPublishError: the version was published but writing its file
            still failed (the message says how to export it later).
    """
    from workbench.services.judging.qrels_files import export_file_name

    require_lead(session, "publish")
    taken = _name_taken(qrels, name, labels_dir)
    if taken is not None:
        raise taken
    if labels_dir is not None:
        check_export_target(labels_dir, name)
    if rubric is not None:
        check_final_grades(qrels, pool_version, rubric, rule=rule, include_model=include_model)
    info, decided = qrels.publish_qrels_counted(
        name, pool_version, rule=rule, parent_version=parent_version, created_by=session.user, note=note,
        include_model=include_model, export_file=export_file_name(name) if labels_dir is not None else None,
    )
    diff = qrels.qrels_diff_counts(parent_version, name)  # counts only: a first version is all "added"
    path: Path | None = None
    if labels_dir is not None:
        try:
            path = export_qrels(qrels, name, labels_dir)
        except (WorkbenchError, OSError) as e:
            raise ExportAfterPublishError(name, e) from e
    return PublishResult(info, diff, decided, path)


def check_final_grades(qrels: Qrels, pool_version: str, rubric: Rubric, *, rule: str,
                       include_model: bool = False) -> None:
    """Refuse final grades that are not grades of ``rubric`` (the judgments were changed outside the workbench).

    Only the pool lineage's final grades are checked, not a parent version's entries (an imported
    reference may use another scale).

    Raises:
        ValidationError: naming the first offending topic and document (natural order), the grade and
            the rubric's grades, and how many final grades are off the scale.
    """
    allowed = {g.grade for g in rubric.grades}
    _proposed, final = qrels.proposed_qrels(pool_version, get_rule(rule).name, None, include_model=include_model)
    off = [(t, d, g) for t, docs in final.qrels.items() for d, g in docs.items() if g not in allowed]
    if off:
        t, d, g = min(off, key=lambda x: (natural_key(x[0]), natural_key(x[1])))
        raise ValidationError(
            f"pool {pool_version}: topic {t} document {d} has final grade {g}, not a grade of rubric "
            f"{rubric.name!r} ({', '.join(str(x) for x in sorted(allowed))})"
            + (f"; {len(off):,} final grades are off the scale" if len(off) > 1 else "")
            + ": the judgments were changed outside the workbench. Nothing was published; judge the document "
            "again (or adjudicate it) on the rubric's scale, then publish.")


def publish_coverage(qrels: Qrels, pool_version: str, qrels_version: str) -> tuple[int, int]:
    """How much of a pool a qrels version covers: (pooled documents, of those with an entry).

    Counts (topic, document) pairs of the pool version and its ancestors. A pooled
    document without an entry is unjudged: every run that retrieves it sees it as
    pool-novel, so publishing with low coverage deserves a warning.
    """
    return qrels.pool_coverage(pool_version, qrels_version)


@dataclass(frozen=True, slots=True)
class PoolOverview:
    """A pool version for orientation (lead's pool page).

    Attributes:
        pool_version: the pool version.
        collection: its collection.
        lineage: the pool version and its ancestors, root first.
        topics: per-topic pooled/assigned/judged counts.
        runs: (run_name, documents contributed, documents only it contributed).
    """

    pool_version: str
    collection: str
    lineage: list[str]
    topics: list[PoolTopicProgress] = field(default_factory=list)
    runs: list[tuple[str, int, int]] = field(default_factory=list)

    @property
    def judged_share(self) -> float:
        """Judged documents over pooled documents (0.0 for an empty pool)."""
        total = sum(t.n_documents for t in self.topics)
        return sum(t.n_judged for t in self.topics) / total if total else 0.0


def pool_overview(judging: Judging, pools: Pools, pool_version: str) -> PoolOverview:
    """Size per topic, judged share and contributing runs of a pool version."""
    known = {p["pool_version"]: p for p in pools.judging_pools()}
    lineage = pool_overview_lineage(pools, pool_version)
    return PoolOverview(
        pool_version,
        known[pool_version]["collection"],
        lineage,
        judging.pool_judging_progress(pool_version),
        pools.pool_run_contributions(pool_version),
    )
