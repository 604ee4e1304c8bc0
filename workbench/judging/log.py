"""The judgment log: its interface (``JudgmentLog``) and the values it holds and returns (pure).

Every save of an assessor is one appended row of the log; nothing is ever
updated. An assessor's *state* on a document is their latest row: a grade, an
unsure mark, or neither (a note saved on its own, or the Undo of a first
save); only the first two are *current judgments*. Model assessors' rows are
ordinary rows, kept apart by the reads (``current_judgments`` reads people,
``model_judgments`` models).

``JudgmentLog`` is the interface the services are typed against. The DuckDB
store implements it (``workbench.store.judgments.Judgments``, ``store.judgments``);
a second backend (a server database) implements the same methods with the same
results, and ``tests/store/test_judgment_log_contract.py`` runs one suite
against every implementation (the DuckDB part and an in-memory reference).

The log checks what a save needs and nothing else: the assessor is a known user
(a lead for an import), the topic is a topic of the collection, the grade is on
the collection's rubric (``workbench.rubric``), and a pool version named as a
filter exists (its ancestors count as its documents).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from workbench.judging.prefill import Prefill
from workbench.types import Judgment

ItemKey = tuple[str, str]
"""(topic_id, doc_id): one pooled document of a topic."""

JudgmentState = tuple[int, int | None, bool, str, int]
"""An assessor's current judgment of a document: (judgment_id, grade, unsure, note, duration_ms)."""

ImportItem = tuple[Judgment, str, datetime | None]
"""One line of a lead's import: (judgment, save token, saved_at or None for now)."""


@dataclass(frozen=True, slots=True)
class StoredJudgment:
    """A row of the log (a save), or an assessor's current judgment.

    Attributes:
        judgment_id: row id (increasing with save order).
        collection: collection name.
        topic_id: topic.
        doc_id: document.
        assessor: who saved it.
        grade: grade, or None when unsure.
        unsure: the assessor marked the document unsure.
        note: free text.
        duration_ms: time on the document before the save, milliseconds.
        pool_version: pool version of the assignment ("" when none).
        saved_at: commit time (or the imported judgment's timestamp).
        rubric_version: the rubric version it was checked against (``name@n``; "" before schema 2).
        prefill: the model assessor's grade shown pre-selected when it was saved
            (``judging.prefill``; None = nothing was pre-filled).
        prefill_outcome: ``confirmed`` or ``changed`` when ``prefill`` is set, else "".
    """

    judgment_id: int
    collection: str
    topic_id: str
    doc_id: str
    assessor: str
    grade: int | None
    unsure: bool
    note: str
    duration_ms: int
    pool_version: str
    saved_at: datetime
    rubric_version: str = ""
    prefill: Prefill | None = None
    prefill_outcome: str = ""


@dataclass(frozen=True, slots=True)
class SavedJudgment:
    """What a save left in the log (``record_judgment_outcome``).

    Attributes:
        judgment_id: the row that now holds the assessor's current judgment.
        new: True when this save appended a row; False when its save token
            was already stored and the current judgment already equals it
            (a double submit), so nothing was written.
        grade: the grade the log holds now (None when unsure).
        unsure: the unsure flag the log holds now.
        judging_setting: the pool version had a judging setting (a strategy)
            when the row was saved, read in the save's own transaction, so the
            save path needs no second lease to learn that there is nothing to
            re-order (True when unknown).
    """

    judgment_id: int
    new: bool
    grade: int | None
    unsure: bool
    judging_setting: bool = True


@dataclass(frozen=True, slots=True)
class UndoneJudgment:
    """What an Undo left in the log (``undo_judgment``).

    Attributes:
        judgment_id: the new row (it restores the state before the undone save).
        undone: the save that was undone.
        topic_id: topic of the document.
        doc_id: the document.
        grade: the grade the assessor holds again (None: unsure, or no judgment).
        unsure: True when the restored state is "unsure".
        judged: False when the undone save was the assessor's first on the
            document: it has no current judgment again.
    """

    judgment_id: int
    undone: int
    topic_id: str
    doc_id: str
    grade: int | None
    unsure: bool
    judged: bool


class JudgmentLog(Protocol):
    """The append-only log of assessors' saves: what a judgment-log backend implements.

    Writes append rows (each write is atomic: all of it or none); reads return
    plain values. Errors are ``workbench.errors`` types: ``UnknownNameError``
    (an unknown assessor, topic, pool version or save, listing the known ones),
    ``ValidationError`` (a grade off the rubric, a missing grade without unsure,
    a negative duration, an Undo out of order) and ``PermissionDeniedError``
    (an import by a user who is not a lead).
    """

    def record_judgment(
        self, judgment: Judgment, *, collection: str, pool_version: str = "", save_token: str | None = None
    ) -> int:
        """Append one judgment; returns the ``judgment_id`` of the assessor's current judgment after the save.

        As ``record_judgment_outcome``, which says more.
        """
        ...

    def record_judgment_outcome(
        self, judgment: Judgment, *, collection: str, pool_version: str = "", save_token: str | None = None,
        prefill: Prefill | None = None,
    ) -> SavedJudgment:
        """Append one judgment and say whether it landed or was a duplicate.

        A save token names one save *action*: a save whose token is stored
        already is a duplicate (nothing written) while the assessor's current
        judgment of the document equals it, else a correction that lands under
        a derived token. None always appends. ``prefill`` is the model grade
        shown pre-selected (``judging.prefill``): the row records it and whether
        the grade saved confirmed or changed it (``prefill_outcome``).

        Raises:
            UnknownNameError: unknown assessor or topic.
            ValidationError: grade off the collection's rubric, no grade without
                ``unsure``, or a negative duration.
        """
        ...

    def record_judgments(
        self, judgments: Sequence[ImportItem], *, collection: str, pool_version: str, lead: str
    ) -> list[SavedJudgment]:
        """Append a lead's import in one atomic write; an item whose save token is stored is skipped.

        Returns:
            One ``SavedJudgment`` per item, in order (``new`` False for a skipped item,
            which reports the item's current judgment at that point of the input).

        Raises:
            PermissionDeniedError: ``lead`` is not a lead.
            UnknownNameError: unknown assessor or topic (nothing is written).
            ValidationError: as ``record_judgment_outcome`` (nothing is written).
        """
        ...

    def record_note(
        self, collection: str, topic_id: str, doc_id: str, assessor: str, note: str, *, pool_version: str = ""
    ) -> SavedJudgment:
        """Append a note on its own: the row keeps the assessor's current grade or unsure mark (with
        the pre-fill record of that grade's save), or holds none.

        Raises:
            UnknownNameError: unknown assessor or topic.
        """
        ...

    def undo_judgment(self, judgment_id: int, assessor: str) -> UndoneJudgment:
        """Append a row restoring the state held before one of the assessor's saves (newest first),
        with the pre-fill record of the restored state.

        Raises:
            UnknownNameError: no such save of this assessor.
            ValidationError: it was undone already, or a later save of the document still stands.
        """
        ...

    def judgment_rows(
        self, collection: str, pool_version: str | None = None, *, assessor: str | None = None,
        history: bool = False,
    ) -> list[StoredJudgment]:
        """Current judgments (or, with ``history``, every row) for export.

        ``pool_version`` keeps the documents pooled in it or its ancestors and the
        rows saved under one of them; ``assessor`` keeps one assessor's rows.

        Returns:
            Rows sorted by (topic_id, doc_id, assessor, judgment_id).

        Raises:
            UnknownNameError: unknown pool version.
        """
        ...

    def current_states(
        self, collection: str, assessor: str, items: Iterable[ItemKey]
    ) -> dict[ItemKey, JudgmentState]:
        """One assessor's current judgment of each of some documents; items without one are absent."""
        ...

    def current_judgments(
        self, collection: str, pool_version: str | None = None, *, include_model: bool = False
    ) -> list[StoredJudgment]:
        """Each person's (and with ``include_model`` each model's) current judgment per document.

        ``pool_version`` keeps the documents of it and its ancestors.

        Returns:
            Rows sorted by (topic_id, doc_id, assessor).

        Raises:
            UnknownNameError: unknown pool version.
        """
        ...

    def model_judgments(self, collection: str, pool_version: str | None = None) -> list[StoredJudgment]:
        """Model assessors' current judgments, sorted by (topic_id, doc_id, assessor).

        Raises:
            UnknownNameError: unknown pool version.
        """
        ...

    def first_judged(self, collection: str, pool_version: str) -> dict[str, list[str]]:
        """topic_id -> the documents of one pool version people graded, in the order of their first graded save.

        Raises:
            UnknownNameError: unknown pool version.
        """
        ...

    def judgment_history(
        self, collection: str, topic_id: str, doc_id: str, assessor: str | None = None
    ) -> list[StoredJudgment]:
        """Every row on a document (optionally one assessor's), oldest first, notes and Undo rows included."""
        ...

    def count_judgments(self, collection: str | None = None) -> int:
        """Number of rows (saves, notes, Undos), of one collection or of all."""
        ...
