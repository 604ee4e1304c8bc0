"""What the judgment log holds and returns: a save (``StoredJudgment``), what a save left
(``SavedJudgment``) and what an Undo left (``UndoneJudgment``). Plain values, shared by
the log's row path (``store.judgments``) and its bulk path (``store.judgments_bulk``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class StoredJudgment:
    """A row of ``judgments`` (a save), or of the ``current_judgments`` view.

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


@dataclass(frozen=True, slots=True)
class SavedJudgment:
    """What a save left in the store (``record_judgment_outcome``).

    Attributes:
        judgment_id: the row that now holds the assessor's current judgment.
        new: True when this save appended a row; False when its save token
            was already stored and the current judgment already equals it
            (a double submit), so nothing was written.
        grade: the grade the store holds now (None when unsure).
        unsure: the unsure flag the store holds now.
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
    """What an Undo left in the store (``undo_judgment``).

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
