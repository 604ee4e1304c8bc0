"""The store's judging loop (``store.judging``): assignments and assessors' queues, the
blind judging view, judging strategies and topic stops, duplicate-group modes, progress,
and the counts behind agreement.

* assignments: a lead's assignment plan becomes per-assessor queue entries; an
  assessor reads their queue and the blind judging view of one position (no
  run, rank, score or other assessor's grade); values in ``store.assignments``;
* judging order: a lead sets a pool version's judging strategy and stopping
  settings; a strategy re-orders a topic's unjudged entries (``apply_topic_order``)
  and may stop the topic; values in ``store.judging_order``;
* duplicate groups: ``group_modes`` is append-only (view ``current_group_modes``: the latest row per
  pool version). ``offer`` (the default when no row exists) leaves every pooled
  document in the assessors' queues and offers the lead the unjudged members of a
  group with a judged member, grade pre-filled (``services.judging.groups``);
  ``skip`` takes those members out of the assessors' queues
  (``store.assignments.GROUP_SKIPPED``): once one member of a duplicate group is
  graded for a topic, nobody is asked to judge the others, and ``score --dedupe
  groups`` scores the group by its judged member. Judging stays blind either way:
  a queue only loses entries, it never shows a grade.
* pre-fill: ``prefill_settings`` is append-only (view ``current_prefill_settings``); when a
  lead turns it on for a pool version, the judging view of a document the chosen model
  assessor graded carries that grade (``JudgingView.prefill``; ``judging.prefill``), for the
  documents ``is_prefilled`` selects. Off (the default), the view holds no model's grade.
* progress: per-topic counts of a pool version, per-assessor counts and times
  (lead-only); values in ``store.progress``;
* agreement: over a campaign (1,000 topics x 1,000 documents x 2 assessors: 2e6
  judgments) needs no per-judgment Python object: one scan of the judgments
  returns the *grade profiles* (topic, the item's sorted (assessor, grade) list,
  number of such items): about 16 rows per topic with two assessors on a 0-3
  scale. ``workbench.judging.agreement.counts_from_profiles`` turns them into the
  confusion and coincidence counts and ``agreement_from_counts`` computes kappa
  and alpha (identical to ``agreement_report`` on the same judgments).

The saves themselves are the judgment log's (``store.judgments``); this part reads
the ``judgments`` table only in the queries that join it with assignments and pools.
Every multi-row change is one transaction.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.errors import UnknownNameError, ValidationError, shown
from workbench.judging.agreement import AgreementCounts, counts_from_profiles
from workbench.judging.groups import GROUP_MODES, GroupMode
from workbench.judging.prefill import Prefill, PrefillSetting, check_share, is_prefilled
from workbench.judging.queue import JudgingView, topic_order
from workbench.store._rows import ItemKey, _one
from workbench.store.assignments import AssignReport, QueueEntry, queue_filters
from workbench.store.core import Gateway
from workbench.store.judging_order import (
    ORDER_COLUMNS,
    SETTING_COLUMNS,
    JudgingSetting,
    TopicOrderState,
    setting_of_row,
)
from workbench.store.model_assessors import PERSON_ASSESSOR
from workbench.store.pool_rows import lineage_filter, lineage_of, pool_row
from workbench.store.progress import AssessorProgress, PoolTopicProgress
from workbench.store.users import read_user, require_lead
from workbench.types import Document, Topic

PROFILES_SQL = """
WITH latest AS (
    SELECT topic_id, doc_id, assessor, arg_max_null(grade, judgment_id) AS grade FROM judgments
    WHERE collection = ? AND {person} GROUP BY topic_id, doc_id, assessor),
items AS (
    SELECT topic_id, doc_id, list_sort(list(struct_pack(a := assessor, g := grade))) AS grades FROM latest
    WHERE grade IS NOT NULL GROUP BY topic_id, doc_id HAVING count(*) >= 2)
SELECT topic_id, grades, count(*) FROM items WHERE true{where} GROUP BY topic_id, grades
"""
"""Grade profiles of the people's current integer grades in one scan. The latest row
per (topic, document, assessor) is the assessor's state, as ``current_judgments``
defines it (``arg_max_null``: its grade, NULL when it is unsure or no judgment);
items graded by fewer than two are left out before the lineage filter (it keeps
only items of the pool versions)."""


_PREFILL_COLUMNS = "pool_version, model_assessor, share, set_by, set_at"


def _prefill_of(cur: Any, pool_version: str, collection: str, topic_id: str, doc_id: str,
                assessor: str) -> Prefill | None:
    """The model grade to pre-fill for one document of an assessor's queue, or None (pre-fill off,
    the document not among the ``share`` drawn, or the model has no current grade of it)."""
    row = _one(cur.execute(
        "SELECT s.model_assessor, s.share, (SELECT grade FROM current_judgments j WHERE j.collection = ? "
        "AND j.topic_id = ? AND j.doc_id = ? AND j.assessor = s.model_assessor) "
        "FROM current_prefill_settings s WHERE s.pool_version = ? AND s.model_assessor IS NOT NULL",
        [collection, topic_id, doc_id, pool_version]))
    if row is None or row[2] is None or not is_prefilled(float(row[1]), assessor, topic_id, doc_id):
        return None
    return Prefill(row[0], int(row[2]))


class Judging:
    """Assignments, queues, judging strategies, duplicate-group modes, progress and agreement counts
    (``store.judging``).

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    # -- assignments and queues ------------------------------------------------------

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
        with self._gateway.transaction(f"assign {pool_version}") as cur:
            require_lead(cur, lead, "assign")
            collection, _v, _p = pool_row(cur, pool_version)
            pooled = {
                (t, d)
                for t, d in cur.execute(
                    "SELECT topic_id, doc_id FROM pool_entries WHERE pool_version = ?", [pool_version]
                ).fetchall()
            }
            cols: dict[str, list[Any]] = {"topic_id": [], "doc_id": [], "assessor": [], "position": []}
            for assessor, items in plan.items():
                read_user(cur, assessor)
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
        """An assessor's queue in judging order, with a judged flag, the current grade and note per entry.

        Positions are renumbered 1..n in stored order (gaps cannot occur, but
        the UI relies on a dense numbering). Documents of a topic whose judging
        stopped (a budget or stopping rule, ``topic_orders``) leave the queue
        unless a person has judged them (double judging still applies).
        """
        with self._gateway.connection("read queue") as cur:
            # The assessor's latest row per document is their state (see store.judgments).
            shown = queue_filters(cur)
            rows = cur.execute(
                "WITH mine AS (SELECT collection, topic_id, doc_id, grade, unsure, note, row_number() OVER ("
                "      PARTITION BY collection, topic_id, doc_id ORDER BY judgment_id DESC) AS rn "
                "      FROM judgments WHERE assessor = ?) "
                "SELECT a.pool_version, a.collection, a.topic_id, a.doc_id, "
                "       coalesce(m.grade IS NOT NULL OR m.unsure, false), m.grade, coalesce(m.unsure, false), "
                "       coalesce(m.note, '') "
                "FROM assignments a LEFT JOIN mine m ON m.rn = 1 AND m.collection = a.collection "
                "     AND m.topic_id = a.topic_id AND m.doc_id = a.doc_id "
                f"WHERE a.assessor = ?{shown} ORDER BY a.position, a.assignment_id",
                [assessor, assessor],
            ).fetchall()
        return [QueueEntry(i, p, c, t, d, bool(j), None if g is None else int(g), bool(u), str(n))
                for i, (p, c, t, d, j, g, u, n) in enumerate(rows, 1)]

    def judging_view(self, assessor: str, position: int) -> JudgingView | None:
        """What the judging screen shows at a queue position (blind: no run,
        rank, score or other assessor's grade), or None past the queue's end.

        Raises:
            ValidationError: position < 1.
        """
        if position < 1:
            raise ValidationError(f"queue position must be >= 1, found {position}")
        with self._gateway.connection("read document to judge") as cur:
            shown = queue_filters(cur)
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
            prefill = _prefill_of(cur, pool_version, collection, topic_id, doc_id, assessor)
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
            prefill=prefill,
        )

    # -- judging order: strategies, re-ordering, topic stops ---------------------------

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
        with self._gateway.transaction(f"set judging strategy of {pool_version}") as cur:
            require_lead(cur, lead, "set the judging strategy")
            pool_row(cur, pool_version)
            cur.execute(
                "INSERT INTO judging_settings (pool_version, strategy, refresh_every, stopping, budget, "
                "topic_budgets, set_by) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [pool_version, strategy, int(refresh_every), stopping, budget, json.dumps(budgets, sort_keys=True),
                 lead],
            )
            row = _one(cur.execute(f"SELECT {SETTING_COLUMNS} FROM current_judging_settings WHERE pool_version = ?",
                                   [pool_version]))
        return setting_of_row(row)

    def judging_setting(self, pool_version: str) -> JudgingSetting | None:
        """The current judging setting of a pool version, or None (today's ``rank`` order, no stopping)."""
        with self._gateway.connection("read judging strategy") as cur:
            row = _one(cur.execute(f"SELECT {SETTING_COLUMNS} FROM current_judging_settings WHERE pool_version = ?",
                                   [pool_version]))
        return None if row is None else setting_of_row(row)

    def topic_orders(self, pool_version: str) -> dict[str, TopicOrderState]:
        """topic_id -> the latest re-ordering of each topic of a pool version (topics never re-ordered absent)."""
        with self._gateway.connection("read topic orders") as cur:
            rows = cur.execute(f"SELECT {ORDER_COLUMNS} FROM current_topic_orders WHERE pool_version = ?",
                               [pool_version]).fetchall()
        return {r[1]: TopicOrderState(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5],
                                      None if r[6] is None else float(r[6]), r[7]) for r in rows}

    def topic_assessors(self, pool_version: str, topic_id: str) -> list[str]:
        """The assessors with entries of one topic of a pool version, by name."""
        with self._gateway.connection("read topic assessors") as cur:
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
        with self._gateway.transaction(f"re-order topic {topic_id} of {pool_version}") as cur:
            pool_row(cur, pool_version)
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

    # -- duplicate groups ---------------------------------------------------------------

    def set_group_mode(self, pool_version: str, mode: str, *, lead: str) -> int:
        """Set a pool version's duplicate-group mode (one append-only row); returns its id.

        Raises:
            ValidationError: a mode that is not one of ``GROUP_MODES``.
            UnknownNameError: unknown pool version.
            PermissionDeniedError: ``lead`` is not a lead.
        """
        if mode not in GROUP_MODES:
            raise ValidationError(f"expected a duplicate-group mode {' or '.join(GROUP_MODES)}, found {shown(mode)}")
        with self._gateway.transaction("set duplicate-group mode") as cur:
            require_lead(cur, lead, "set the duplicate-group mode")
            if _one(cur.execute("SELECT count(*) FROM pools WHERE pool_version = ?", [pool_version]))[0] == 0:
                known = [r[0] for r in cur.execute("SELECT pool_version FROM pools ORDER BY 1").fetchall()]
                raise UnknownNameError("pool version", pool_version, known)
            return int(_one(cur.execute(
                "INSERT INTO group_modes (pool_version, mode, set_by) VALUES (?, ?, ?) RETURNING setting_id",
                [pool_version, mode, lead]))[0])

    def group_mode(self, pool_version: str) -> GroupMode:
        """A pool version's current duplicate-group mode (``offer`` when none was set)."""
        with self._gateway.connection("read duplicate-group mode") as cur:
            row = cur.execute("SELECT mode FROM current_group_modes WHERE pool_version = ?",
                              [pool_version]).fetchone()
        return "skip" if row is not None and row[0] == "skip" else "offer"

    # -- pre-fill ------------------------------------------------------------------------------

    def set_prefill(self, pool_version: str, model: str | None, *, lead: str, share: float = 1.0) -> PrefillSetting:
        """Turn pre-fill on (``model``: a model assessor) or off (None) for a pool version (one
        append-only row).

        Raises:
            PermissionDeniedError: ``lead`` is not a lead.
            UnknownNameError: unknown pool version, or ``model`` is not a model assessor
                (the known ones are listed).
            ValidationError: ``share`` outside (0, 1].
        """
        share = check_share(share)
        with self._gateway.transaction(f"set pre-fill of {pool_version}") as cur:
            require_lead(cur, lead, "set pre-fill")
            pool_row(cur, pool_version)
            if model is not None and not _one(cur.execute(
                    "SELECT count(*) FROM model_assessors WHERE user_name = ?", [model]))[0]:
                known = [r[0] for r in cur.execute("SELECT user_name FROM model_assessors ORDER BY 1").fetchall()]
                raise UnknownNameError("model assessor", model, known)
            cur.execute("INSERT INTO prefill_settings (pool_version, model_assessor, share, set_by) "
                        "VALUES (?, ?, ?, ?)", [pool_version, model, share, lead])
            row = _one(cur.execute(f"SELECT {_PREFILL_COLUMNS} FROM current_prefill_settings WHERE pool_version = ?",
                                   [pool_version]))
        return PrefillSetting(*row)

    def prefill_setting(self, pool_version: str) -> PrefillSetting:
        """A pool version's current pre-fill setting (off when none was set)."""
        with self._gateway.connection("read pre-fill setting") as cur:
            row = _one(cur.execute(f"SELECT {_PREFILL_COLUMNS} FROM current_prefill_settings WHERE pool_version = ?",
                                   [pool_version]))
        return PrefillSetting(pool_version, None) if row is None else PrefillSetting(*row)

    def prefill_used(self, collection: str) -> bool:
        """True when any save of the collection was shown a pre-filled grade."""
        with self._gateway.connection("read pre-fill use") as cur:
            return bool(_one(cur.execute("SELECT EXISTS (SELECT 1 FROM judgments WHERE collection = ? "
                                         "AND prefill_assessor IS NOT NULL)", [collection]))[0])

    # -- progress and agreement ------------------------------------------------------------

    def assessor_progress(self) -> list[AssessorProgress]:
        """Every user with assignments or judgments: counts over their assigned
        documents and the time they took per judgment (one query).

        Returns:
            One ``AssessorProgress`` per user, sorted by user name.
        """
        with self._gateway.connection("read assessor progress") as cur:
            rows = cur.execute(
                """
                WITH latest AS (
                    SELECT collection, topic_id, doc_id, assessor, grade, unsure, duration_ms, saved_at,
                           row_number() OVER (PARTITION BY collection, topic_id, doc_id, assessor
                                              ORDER BY judgment_id DESC) AS rn
                    FROM judgments),
                assigned AS (SELECT DISTINCT assessor, collection, topic_id, doc_id FROM assignments),
                mine AS (
                    SELECT a.assessor, l.grade, l.unsure, l.duration_ms, l.saved_at
                    FROM assigned a JOIN latest l ON l.rn = 1 AND l.assessor = a.assessor
                         AND l.collection = a.collection AND l.topic_id = a.topic_id AND l.doc_id = a.doc_id
                    WHERE l.grade IS NOT NULL OR l.unsure),
                counts AS (SELECT assessor, count(*) AS n FROM assigned GROUP BY assessor),
                stats AS (
                    SELECT assessor,
                           count(*) FILTER (WHERE grade IS NOT NULL) AS graded,
                           count(*) FILTER (WHERE grade IS NULL) AS unsure,
                           count(*) FILTER (WHERE duration_ms > 0) AS timed,
                           quantile_cont(duration_ms, 0.5) FILTER (WHERE duration_ms > 0) AS p50,
                           quantile_cont(duration_ms, 0.9) FILTER (WHERE duration_ms > 0) AS p90,
                           max(saved_at) AS last
                    FROM mine GROUP BY assessor)
                SELECT u.user_name, u.role, coalesce(c.n, 0), coalesce(s.graded, 0), coalesce(s.unsure, 0),
                       coalesce(s.timed, 0), s.p50, s.p90, s.last
                FROM users u LEFT JOIN counts c ON c.assessor = u.user_name
                             LEFT JOIN stats s ON s.assessor = u.user_name
                WHERE c.n IS NOT NULL
                ORDER BY u.user_name
                """
            ).fetchall()
        return [AssessorProgress(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5]),
                                 None if r[6] is None else float(r[6]), None if r[7] is None else float(r[7]), r[8])
                for r in rows]

    def pool_judging_progress(self, pool_version: str) -> list[PoolTopicProgress]:
        """Per topic of a pool version's lineage: pooled, assigned, judged and
        multiply-judged document counts, topics sorted by id.

        Raises:
            UnknownNameError: unknown pool version.
        """
        with self._gateway.connection("read pool progress") as cur:
            collection, _v, _p = pool_row(cur, pool_version)
            lineage = lineage_of(cur, pool_version)
            marks = ", ".join("?" for _ in lineage)
            rows = cur.execute(
                f"""
                WITH pooled AS (
                    SELECT DISTINCT topic_id, doc_id FROM pool_entries WHERE pool_version IN ({marks})),
                assigned AS (
                    SELECT DISTINCT topic_id, doc_id FROM assignments WHERE collection = ?),
                judged AS (
                    SELECT topic_id, doc_id, count(*) AS n FROM current_judgments
                    WHERE collection = ? AND {PERSON_ASSESSOR} GROUP BY topic_id, doc_id)
                SELECT p.topic_id, count(*),
                       count(a.doc_id),
                       count(j.doc_id),
                       count(*) FILTER (WHERE j.n >= 2)
                FROM pooled p
                LEFT JOIN assigned a ON a.topic_id = p.topic_id AND a.doc_id = p.doc_id
                LEFT JOIN judged j ON j.topic_id = p.topic_id AND j.doc_id = p.doc_id
                GROUP BY p.topic_id
                """,
                [*lineage, collection, collection],
            ).fetchall()
        by_topic = {r[0]: PoolTopicProgress(r[0], *map(int, r[1:])) for r in rows}
        return [by_topic[t] for t in topic_order(by_topic)]

    def agreement_counts(self, collection: str, pool_version: str | None = None) -> AgreementCounts:
        """Confusion counts per assessor pair and coincidence counts per topic of the
        people's current integer grades (unsure and model assessors left out).

        Args:
            collection: the collection.
            pool_version: only documents of this pool version and its ancestors
                (None: every judged document of the collection).

        Returns:
            ``AgreementCounts``: pairs (a < b by name) -> (grade a, grade b) -> items;
            topic -> m -> (c, k) -> sum of n_c (n_k - [c = k]) over the items graded
            by m >= 2 people; topic -> number of those items.

        Raises:
            UnknownNameError: unknown pool version.
        """
        with self._gateway.connection("read agreement counts") as cur:
            where, params = lineage_filter(cur, pool_version)
            rows = cur.execute(PROFILES_SQL.format(person=PERSON_ASSESSOR, where=where),
                               [collection, *params]).fetchall()
        return counts_from_profiles((t, [(x["a"], int(x["g"])) for x in grades], int(n)) for t, grades, n in rows)
