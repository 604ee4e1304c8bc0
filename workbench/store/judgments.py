"""The judgment log in DuckDB (``store.judgments``): the append-only save path and
the reads of current judgments and history. ``Judgments`` implements
``workbench.judging.log.JudgmentLog``, the interface the services are typed against.

Facts are append-only. ``record_judgment`` inserts one ``judgments`` row per
save and never updates one; the *current* judgment of an assessor on a
document is the latest row (view ``current_judgments``). A save carries an
optional client ``save_token``: a retried or double-submitted save with the
same token lands once and returns the first row's id.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

from workbench.errors import StoreError, StoreLockedError, UnknownNameError, ValidationError
from workbench.judging.log import (
    ImportItem,
    ItemKey,
    JudgmentState,
    SavedJudgment,
    StoredJudgment,
    UndoneJudgment,
)
from workbench.judging.prefill import Prefill, prefill_outcome
from workbench.store._rows import _one
from workbench.store.core import Gateway
from workbench.store.model_assessors import MODEL_ASSESSOR, PERSON_ASSESSOR
from workbench.store.pool_rows import lineage_filter, lineage_of, pool_row
from workbench.store.rubrics import read_rubric, rubric_named_in_meta
from workbench.store.users import read_user, require_lead
from workbench.types import Judgment

_JUDGMENT_COLUMNS = (
    "judgment_id, collection, topic_id, doc_id, assessor, grade, unsure, note, duration_ms, "
    "pool_version, saved_at, coalesce(rubric_version, ''), prefill_assessor, prefill_grade, "
    "coalesce(prefill_outcome, '')"
)


def _stored(r: Sequence[Any]) -> StoredJudgment:
    """A ``_JUDGMENT_COLUMNS`` row as ``StoredJudgment``."""
    prefill = None if r[12] is None or r[13] is None else Prefill(r[12], int(r[13]))
    return StoredJudgment(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], prefill, r[14])

_LATEST = (
    "SELECT judgment_id, grade, unsure, note, collection, topic_id, doc_id, pool_version, prefill_assessor, "
    "prefill_grade, prefill_outcome FROM judgments "
    "WHERE collection = ? AND topic_id = ? AND doc_id = ? AND assessor = ? ORDER BY judgment_id DESC"
)


class Judgments:
    """The judgment log kept in DuckDB: the save path and reads (a ``JudgmentLog``).

    The assessor's *state* on a document is their latest row: a grade, an
    unsure mark, or neither (a note saved on its own, or an undone first save);
    only the first two are current judgments (view ``current_judgments``).

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def record_note(self, collection: str, topic_id: str, doc_id: str, assessor: str, note: str, *,
                    pool_version: str = "") -> SavedJudgment:
        """Save a note on its own (the judging UI's "Save note"): one appended row
        that keeps the assessor's current grade or unsure mark, or holds no
        judgment when there is none yet. Never invents a grade.

        Returns:
            ``SavedJudgment`` of the new row; grade/unsure are what the store holds.

        Raises:
            UnknownNameError: unknown assessor or topic.
        """
        with self._gateway.transaction("save note") as cur:
            user = read_user(cur, assessor)
            if not _one(cur.execute(
                "SELECT 1 FROM topics WHERE collection = ? AND topic_id = ?", [collection, topic_id]
            )):
                known = [r[0] for r in cur.execute(
                    "SELECT topic_id FROM topics WHERE collection = ?", [collection]).fetchall()]
                raise UnknownNameError(f"topic of collection {collection!r}", topic_id, known)
            latest = _one(cur.execute(_LATEST + " LIMIT 1", [collection, topic_id, doc_id, user.name]))
            grade = None if latest is None or latest[1] is None else int(latest[1])
            unsure = bool(latest[2]) if latest is not None else False
            kept = list(latest[8:11]) if latest is not None else [None, None, None]  # the grade's pre-fill record
            row = _one(cur.execute(
                "INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade, unsure, note, "
                "duration_ms, pool_version, rubric_version, prefill_assessor, prefill_grade, prefill_outcome) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?) RETURNING judgment_id",
                [collection, topic_id, doc_id, user.name, grade, unsure, note, pool_version,
                 read_rubric(cur, collection).version_id, *kept],
            ))
        return SavedJudgment(int(row[0]), True, grade, unsure)

    def undo_judgment(self, judgment_id: int, assessor: str) -> UndoneJudgment:
        """Undo one of the assessor's saves: append a row that restores the grade,
        unsure mark and note held just before it (or no judgment when it was the
        first). Append-only: the undone save stays in the history.

        Saves can be undone newest first, one after the other: a save can be
        undone when every later save of the document by the assessor has been
        undone already.

        Args:
            judgment_id: the save to undo.
            assessor: who undoes (must own the save).

        Returns:
            ``UndoneJudgment``: the new row and the restored state.

        Raises:
            UnknownNameError: no such save of this assessor.
            ValidationError: it was undone already, or a later save of the
                document still stands (undo that first).
        """
        with self._gateway.transaction("undo judgment") as cur:
            row = _one(cur.execute(
                "SELECT collection, topic_id, doc_id FROM judgments WHERE judgment_id = ? AND assessor = ?",
                [judgment_id, assessor],
            ))
            if row is None:
                mine = [str(r[0]) for r in cur.execute(
                    "SELECT judgment_id FROM judgments WHERE assessor = ? ORDER BY judgment_id DESC LIMIT 5",
                    [assessor]).fetchall()]
                raise UnknownNameError(f"save of {assessor!r}", str(judgment_id), mine)
            collection, topic_id, doc_id = row
            history = cur.execute(
                "SELECT judgment_id, grade, unsure, note, pool_version, undoes, coalesce(rubric_version, ''), "
                "prefill_assessor, prefill_grade, prefill_outcome FROM judgments WHERE collection = ? "
                "AND topic_id = ? AND doc_id = ? AND assessor = ? ORDER BY judgment_id",
                [collection, topic_id, doc_id, assessor],
            ).fetchall()
            undone = {int(r[5]) for r in history if r[5] is not None}
            if judgment_id in undone:
                raise ValidationError(f"undo: save {judgment_id} of document {doc_id!r} was undone already")
            at = next(i for i, r in enumerate(history) if int(r[0]) == judgment_id)
            standing = [int(r[0]) for r in history[at + 1:] if r[5] is None and int(r[0]) not in undone]
            if standing:
                raise ValidationError(
                    f"undo: document {doc_id!r} of topic {topic_id!r} was saved again after save {judgment_id} "
                    f"(save {standing[-1]}); undo the newer save first"
                )
            before = history[at - 1] if at > 0 else None
            grade = None if before is None or before[1] is None else int(before[1])
            unsure = bool(before[2]) if before is not None else False
            note = str(before[3]) if before is not None else ""
            # The restored grade keeps the rubric version it was given under, and its pre-fill record.
            new = _one(cur.execute(
                "INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade, unsure, note, "
                "duration_ms, pool_version, undoes, rubric_version, prefill_assessor, prefill_grade, "
                "prefill_outcome) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?) RETURNING judgment_id",
                [collection, topic_id, doc_id, assessor, grade, unsure, note, history[at][4], judgment_id,
                 before[6] if before is not None else "",
                 *(list(before[7:10]) if before is not None else [None, None, None])],
            ))
        return UndoneJudgment(int(new[0]), judgment_id, topic_id, doc_id, grade, unsure,
                              grade is not None or unsure)

    def record_judgment(
        self,
        judgment: Judgment,
        *,
        collection: str,
        pool_version: str = "",
        save_token: str | None = None,
    ) -> int:
        """Append one judgment (one row, one transaction); never updates a row.

        Same as ``record_judgment_outcome`` but returns only the row id.

        Args:
            judgment: topic, document, assessor, grade (None only when unsure),
                unsure flag, note and duration in milliseconds (>= 0).
            collection: the collection judged; its rubric validates the grade.
            pool_version: the pool version of the assignment ("" when none).
            save_token: client idempotency key of one save action (see
                ``record_judgment_outcome``).

        Returns:
            The ``judgment_id`` of the assessor's current judgment after the save.

        Raises:
            UnknownNameError: unknown assessor or topic.
            ValidationError: grade not on the collection's rubric, a missing
                grade without ``unsure``, or a negative duration.
        """
        return self.record_judgment_outcome(
            judgment, collection=collection, pool_version=pool_version, save_token=save_token
        ).judgment_id

    def record_judgment_outcome(
        self,
        judgment: Judgment,
        *,
        collection: str,
        pool_version: str = "",
        save_token: str | None = None,
        prefill: Prefill | None = None,
    ) -> SavedJudgment:
        """Append one judgment and say whether it landed or was a duplicate.

        A save token identifies one save *action* (shown document + grade +
        unsure), not the shown document. A save whose token is already stored
        is a duplicate (nothing written) only while the assessor's current
        judgment of the document equals it; otherwise (e.g. grade 1, then 3,
        then 1 again on the same screen) it is a correction and lands as a new
        row under a derived token, keeping the history.

        Args:
            judgment: topic, document, assessor, grade (None only when unsure),
                unsure flag, note and duration in milliseconds (>= 0).
            collection: the collection judged; its rubric validates the grade.
            pool_version: the pool version of the assignment ("" when none).
            save_token: client idempotency key of the save action; None always
                appends.
            prefill: the model assessor's grade shown pre-selected (None: none was);
                the row records it and ``prefill_outcome`` (confirmed or changed).

        Returns:
            ``SavedJudgment``: the current row id, whether a row was appended,
            and the grade/unsure the store now holds.

        Raises:
            UnknownNameError: unknown assessor or topic.
            ValidationError: grade not on the collection's rubric, a missing
                grade without ``unsure``, or a negative duration.
        """
        j = judgment
        if j.grade is None and not j.unsure:
            raise ValidationError(
                f"judgment of topic {j.topic_id!r} document {j.doc_id!r}: expected a grade, found none; "
                "give a grade or mark it unsure"
            )
        if j.duration_ms < 0:
            raise ValidationError(f"expected duration_ms >= 0, found {j.duration_ms}")
        # A concurrent save with the same token can collide on the unique key
        # before the other transaction has committed; retrying then sees the
        # committed row (or, if it rolled back, inserts this save).
        for attempt in range(20):
            try:
                return self._insert_judgment(j, collection, pool_version, save_token, prefill)
            except StoreLockedError:
                raise
            except StoreError:
                if save_token is None or attempt == 19:
                    raise
                time.sleep(0.005 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def _insert_judgment(
        self, j: Judgment, collection: str, pool_version: str, save_token: str | None, prefill: Prefill | None
    ) -> SavedJudgment:
        with self._gateway.transaction("save judgment") as cur:
            return self._save_in(cur, j, collection, pool_version, save_token, prefill=prefill)

    def _save_in(
        self,
        cur: Any,
        j: Judgment,
        collection: str,
        pool_version: str,
        save_token: str | None,
        *,
        saved_at: datetime | None = None,
        repeat: Literal["correction", "skip"] = "correction",
        prefill: Prefill | None = None,
    ) -> SavedJudgment:
        """The save path inside an open transaction: token check, rubric, topic, one appended row.

        ``repeat`` says what a stored token means: ``correction`` (the UI: a
        duplicate only while the current judgment equals it, else a correction
        under a derived token) or ``skip`` (an import: the line is already stored).
        """
        token = save_token
        # One statement for every look-up of a save (the UI's save is a few ms of DuckDB, most of
        # it per statement): token seen, assessor known, the rubric named for the collection, topic
        # known, a judging strategy set. A failed check is looked up again below to raise its error.
        seen, user_known, rubric_name, topic_known, setting = _one(cur.execute(
            "SELECT EXISTS (SELECT 1 FROM judgments WHERE save_token = ?), "
            "EXISTS (SELECT 1 FROM users WHERE user_name = ?), (SELECT value FROM meta WHERE key = ?), "
            "EXISTS (SELECT 1 FROM topics WHERE collection = ? AND topic_id = ?), "
            "EXISTS (SELECT 1 FROM current_judging_settings WHERE pool_version = ?)",
            [save_token, j.assessor, f"rubric:{collection}", collection, j.topic_id, pool_version]))
        if save_token is not None and seen:
            latest = _one(cur.execute(
                "SELECT judgment_id, grade, unsure FROM judgments WHERE collection = ? AND topic_id = ? "
                "AND doc_id = ? AND assessor = ? ORDER BY judgment_id DESC LIMIT 1",
                [collection, j.topic_id, j.doc_id, j.assessor],
            ))
            if latest is not None:
                held_grade = None if latest[1] is None else int(latest[1])
                if repeat == "skip" or (held_grade, bool(latest[2])) == (j.grade, bool(j.unsure)):
                    return SavedJudgment(int(latest[0]), False, held_grade, bool(latest[2]))
                token = f"{save_token}#{int(latest[0])}"  # a correction back to an earlier grade
        if not user_known:
            read_user(cur, j.assessor)  # raises UnknownNameError, naming the known users
        rubric = rubric_named_in_meta(cur, collection, rubric_name)
        if j.grade is not None:
            rubric.check(j.grade)
        if not topic_known:
            known = [r[0] for r in cur.execute(
                "SELECT topic_id FROM topics WHERE collection = ?", [collection]).fetchall()]
            raise UnknownNameError(f"topic of collection {collection!r}", j.topic_id, known)
        shown = [None, None, None] if prefill is None else [
            prefill.assessor, int(prefill.grade), prefill_outcome(prefill, j.grade, bool(j.unsure))]
        row = _one(cur.execute(
            "INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade, unsure, note, "
            "duration_ms, pool_version, save_token, rubric_version, saved_at, prefill_assessor, prefill_grade, "
            "prefill_outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, current_timestamp), ?, ?, ?) "
            "RETURNING judgment_id",
            [collection, j.topic_id, j.doc_id, j.assessor, j.grade, bool(j.unsure), j.note,
             int(j.duration_ms), pool_version, token, rubric.version_id, saved_at, *shown],
        ))
        # the import path reports the judging setting unknown (True), as its bulk path does
        has_setting = (bool(pool_version) and bool(setting)) if repeat == "correction" else True
        return SavedJudgment(int(row[0]), True, j.grade, bool(j.unsure), has_setting)

    def record_judgments(
        self,
        judgments: Sequence[ImportItem],
        *,
        collection: str,
        pool_version: str,
        lead: str,
    ) -> list[SavedJudgment]:
        """Append many judgments through the save path, in ONE transaction (a lead's import).

        Each item is (judgment, save token, saved_at or None for now). A token
        already stored means the judgment was imported before: it is skipped
        (``SavedJudgment.new`` False), so importing a file twice writes nothing
        the second time. Every judgment is checked as a UI save is (assessor,
        rubric grade or unsure, topic of the collection); any failure rolls
        the whole import back.

        Args:
            judgments: the judgments in the order their rows are appended (the
                last one of an item is its current judgment).
            collection: the collection judged.
            pool_version: recorded on every row.
            lead: the lead importing (role checked).

        Returns:
            One ``SavedJudgment`` per item, in order.

        Raises:
            PermissionDeniedError: ``lead`` is not a lead.
            UnknownNameError: unknown assessor or topic.
            ValidationError: a grade off the rubric, a missing grade without
                unsure, or a negative duration.
        """
        from workbench.store.judgments_bulk import BULK_MIN, check_items, record_bulk

        check_items(judgments)
        out = []
        with self._gateway.transaction(f"import {len(judgments)} judgments") as cur:
            require_lead(cur, lead, "import judgments")
            if len(judgments) >= BULK_MIN:  # same rows and results, a few statements (judgments_bulk)
                users = {r[0] for r in cur.execute("SELECT user_name FROM users").fetchall()}
                bulk = record_bulk(cur, judgments, collection=collection, pool_version=pool_version,
                                   rubric=read_rubric(cur, collection), known_users=users)
                if bulk is not None:
                    return bulk
            for j, token, at in judgments:
                out.append(self._save_in(cur, j, collection, pool_version, token, saved_at=at, repeat="skip"))
        return out

    def judgment_rows(
        self,
        collection: str,
        pool_version: str | None = None,
        *,
        assessor: str | None = None,
        history: bool = False,
    ) -> list[StoredJudgment]:
        """Judgments for export: the current ones, or every save (``history``), oldest first per item.

        Args:
            collection: the collection.
            pool_version: only judgments of documents pooled in this pool version or its
                ancestors, or saved under one of them (e.g. imported lines outside the
                pool); None: all.
            assessor: only this assessor's judgments (None: everyone's).
            history: every row of the append-only log instead of the current judgments.

        Returns:
            ``StoredJudgment`` rows sorted by (topic_id, doc_id, assessor, judgment_id).

        Raises:
            UnknownNameError: unknown pool version.
        """
        source = "judgments" if history else "current_judgments"
        with self._gateway.connection("read judgments for export") as cur:
            where, params = "", []
            if pool_version is not None:
                lineage = lineage_of(cur, pool_version)
                marks = ", ".join("?" for _ in lineage)
                where = (f" AND ((topic_id, doc_id) IN (SELECT topic_id, doc_id FROM pool_entries WHERE "
                         f"pool_version IN ({marks})) OR pool_version IN ({marks}))")
                params = [*lineage, *lineage]
            if assessor is not None:
                where += " AND assessor = ?"
                params.append(assessor)
            rows = cur.execute(
                f"SELECT {_JUDGMENT_COLUMNS} FROM {source} WHERE collection = ?{where} "
                "ORDER BY topic_id, doc_id, assessor, judgment_id",
                [collection, *params],
            ).fetchall()
        return [_stored(r) for r in rows]

    def current_states(
        self, collection: str, assessor: str, items: Iterable[ItemKey]
    ) -> dict[ItemKey, JudgmentState]:
        """One assessor's current judgment of each of some documents, read in one query
        that touches only those documents' rows (an import of 1,000 lines into a store of
        2e6 judgments reads 1,000 states, not the assessor's 1e6).

        Args:
            collection: the collection.
            assessor: the assessor.
            items: (topic_id, doc_id) pairs (repeats allowed).

        Returns:
            (topic_id, doc_id) -> (judgment_id, grade, unsure, note, duration_ms) of the
            assessor's current judgment (as ``current_judgments``: the latest row, when it
            holds a grade or an unsure mark); items without one are absent.
        """
        import pyarrow as pa

        keys = sorted(set(items))
        if not keys:
            return {}
        table = pa.table({"topic_id": pa.array([t for t, _ in keys], pa.string()),
                          "doc_id": pa.array([d for _, d in keys], pa.string())})
        with self._gateway.connection("read current judgments of some documents") as cur:
            cur.register("wb_state_keys", table)
            try:
                rows = cur.execute(
                    "SELECT topic_id, doc_id, arg_max(struct_pack(i := judgment_id, g := grade, u := unsure, "
                    "n := note, d := duration_ms), judgment_id) AS s FROM judgments "
                    "WHERE collection = ? AND assessor = ? "
                    "AND (topic_id, doc_id) IN (SELECT topic_id, doc_id FROM wb_state_keys) "
                    "GROUP BY topic_id, doc_id", [collection, assessor]).fetchall()
            finally:
                cur.unregister("wb_state_keys")
        return {(t, d): (int(s["i"]), None if s["g"] is None else int(s["g"]), bool(s["u"]), s["n"], int(s["d"]))
                for t, d, s in rows if s["g"] is not None or s["u"]}

    def current_judgments(
        self, collection: str, pool_version: str | None = None, *, include_model: bool = False
    ) -> list[StoredJudgment]:
        """Each assessor's latest judgment per document.

        Args:
            collection: collection name.
            pool_version: restrict to documents of this pool version and its
                ancestors; None for every judged document of the collection.
            include_model: also model assessors' judgments (default: people only;
                see ``model_judgments``).

        Returns:
            ``StoredJudgment`` rows sorted by (topic_id, doc_id, assessor).

        Raises:
            UnknownNameError: unknown pool version.
        """
        who = "" if include_model else f" AND {PERSON_ASSESSOR}"
        with self._gateway.connection("read current judgments") as cur:
            where, params = lineage_filter(cur, pool_version)
            rows = cur.execute(
                f"SELECT {_JUDGMENT_COLUMNS} FROM current_judgments WHERE collection = ?{where}{who} "
                "ORDER BY topic_id, doc_id, assessor",
                [collection, *params],
            ).fetchall()
        return [_stored(r) for r in rows]

    def model_judgments(self, collection: str, pool_version: str | None = None) -> list[StoredJudgment]:
        """Model assessors' current judgments (lead-only information: Agreement,
        Adjudicate, ``publish --include-model``, strategies seeded by a model).

        Returns:
            ``StoredJudgment`` rows sorted by (topic_id, doc_id, assessor).
        """
        with self._gateway.connection("read model judgments") as cur:
            where, params = lineage_filter(cur, pool_version)
            rows = cur.execute(
                f"SELECT {_JUDGMENT_COLUMNS} FROM current_judgments WHERE collection = ?{where} "
                f"AND {MODEL_ASSESSOR} ORDER BY topic_id, doc_id, assessor",
                [collection, *params],
            ).fetchall()
        return [_stored(r) for r in rows]

    def first_judged(self, collection: str, pool_version: str) -> dict[str, list[str]]:
        """topic_id -> the documents of one pool version people have graded, in the
        order of their first graded save (what stopping rules read).

        Raises:
            UnknownNameError: unknown pool version.
        """
        with self._gateway.connection("read judging order") as cur:
            pool_row(cur, pool_version)
            rows = cur.execute(
                f"""SELECT j.topic_id, j.doc_id, min(j.judgment_id) AS first FROM judgments j
                    JOIN pool_entries p ON p.pool_version = ? AND p.topic_id = j.topic_id AND p.doc_id = j.doc_id
                    WHERE j.collection = ? AND j.grade IS NOT NULL AND j.{PERSON_ASSESSOR}
                    GROUP BY j.topic_id, j.doc_id ORDER BY j.topic_id, first""",
                [pool_version, collection],
            ).fetchall()
        out: dict[str, list[str]] = {}
        for t, d, _first in rows:
            out.setdefault(t, []).append(d)
        return out

    def judgment_history(
        self, collection: str, topic_id: str, doc_id: str, assessor: str | None = None
    ) -> list[StoredJudgment]:
        """Every save on a document (optionally one assessor's), oldest first,
        including notes saved on their own and undo rows (grade None, not unsure,
        when they hold no judgment)."""
        sql = f"SELECT {_JUDGMENT_COLUMNS} FROM judgments WHERE collection = ? AND topic_id = ? AND doc_id = ?"
        params: list[Any] = [collection, topic_id, doc_id]
        if assessor is not None:
            sql += " AND assessor = ?"
            params.append(assessor)
        with self._gateway.connection("read judgment history") as cur:
            rows = cur.execute(sql + " ORDER BY judgment_id", params).fetchall()
        return [_stored(r) for r in rows]

    def count_judgments(self, collection: str | None = None) -> int:
        """Number of saves (rows of ``judgments``), all history included."""
        with self._gateway.connection("count judgments") as cur:
            if collection is None:
                return int(_one(cur.execute("SELECT count(*) FROM judgments"))[0])
            return int(
                _one(cur.execute("SELECT count(*) FROM judgments WHERE collection = ?", [collection]))[0]
            )
