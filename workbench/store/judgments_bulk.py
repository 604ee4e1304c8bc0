"""The bulk form of ``Judgments.record_judgments`` (``store.judgments``): a large import in a few statements.

``record_judgments`` appends an import row by row through the UI's save path
(a token lookup, the user, the rubric, the topic, one ``INSERT`` per row):
right for a file of a few thousand lines, hours for a campaign's two million.
``record_bulk`` gives the same rows, ids and results with set operations
inside the same transaction: every check once over all rows (assessors
exist, grades on the rubric, topics of the collection), the already stored
tokens found with one join, the new rows appended by one ``INSERT ... SELECT``
from an Arrow table in input order, their ids read back by token. It declines
(returns None, the row path then runs) whenever its result could differ from
the row path's: a token given twice or missing, or a stored token that
belongs to another item. An item (topic, document, assessor) both skipped and
appended in one import (a file re-imported with lines added) stays on the
bulk path: a skipped line reports the item's judgment current at that moment
of the input order (the stored one, or the last row this import appended
before it), as the row path does; declining there sent such a file down the
row path, whose per-row lookups scan the table (quadratic: 200,000 lines did
not finish in 13 minutes). After the insert the ids are
checked to increase with the input order (``judgment_id`` order is the save
order the ``current_judgments`` view relies on); if DuckDB ever assigned them
otherwise the error rolls the transaction back.

Source:
    DuckDB: bulk loads from registered Arrow tables, not ``executemany``
    (duckdb.org/docs/guides/python/import_arrow); ``../shared/STYLE.md`` rule 12.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from workbench.errors import StoreError, UnknownNameError, ValidationError
from workbench.types import Judgment

if TYPE_CHECKING:
    from workbench.judging.log import SavedJudgment
    from workbench.rubric import Rubric

BULK_MIN = 2_000
"""Imports with fewer rows take the row path (its per-row cost does not matter there)."""


def record_bulk(
    cur: Any,
    items: Sequence[tuple[Judgment, str, datetime | None]],
    *,
    collection: str,
    pool_version: str,
    rubric: Rubric,
    known_users: set[str],
) -> list[SavedJudgment] | None:
    """Append an import's judgments with set operations; None when the row path must decide.

    Args:
        cur: a cursor inside the import's transaction.
        items: (judgment, save token, saved_at or None) in input order.
        collection: the collection judged.
        pool_version: recorded on every row.
        rubric: the collection's rubric (grades are checked against it).
        known_users: the store's user names.

    Returns:
        One ``SavedJudgment`` per item (as the row path gives them), or None.

    Raises:
        UnknownNameError: an assessor or topic not known (the first in input order).
        ValidationError: a grade off the rubric.
        StoreError: ids not in input order (rolls the import back).
    """
    import pyarrow as pa

    from workbench.judging.log import SavedJudgment

    tokens = [t for _, t, _ in items]
    if any(not t for t in tokens) or len(set(tokens)) != len(tokens):
        return None
    topics = {r[0] for r in cur.execute("SELECT topic_id FROM topics WHERE collection = ?", [collection]).fetchall()}
    good_grades: set[int] = set()
    for j, _, _ in items:  # the row path's checks, in its order: the first failure in input order wins
        if j.assessor not in known_users:
            raise UnknownNameError("user", j.assessor, known_users)
        if j.grade is not None and j.grade not in good_grades:
            rubric.check(j.grade)
            good_grades.add(j.grade)
        if j.topic_id not in topics:
            raise UnknownNameError(f"topic of collection {collection!r}", j.topic_id, topics)
    table = pa.table({
        "pos": pa.array(range(len(items)), pa.int64()),
        "topic_id": [j.topic_id for j, _, _ in items],
        "doc_id": [j.doc_id for j, _, _ in items],
        "assessor": [j.assessor for j, _, _ in items],
        "grade": pa.array([j.grade for j, _, _ in items], pa.int32()),
        "unsure": [bool(j.unsure) for j, _, _ in items],
        "note": [j.note for j, _, _ in items],
        "duration_ms": pa.array([int(j.duration_ms) for j, _, _ in items], pa.int64()),
        "save_token": tokens,
        "saved_at": pa.array([at for _, _, at in items], pa.timestamp("us", tz="UTC")),
    })
    cur.register("wb_bulk_judgments", table)
    try:
        stored = {r[0] for r in cur.execute(
            "SELECT b.save_token FROM wb_bulk_judgments b JOIN judgments j USING (save_token)").fetchall()}
        skipped_items = {(j.topic_id, j.doc_id, j.assessor) for j, t, _ in items if t in stored}
        latest: dict[tuple[str, str, str], tuple[int, int | None, bool]] = {}
        if stored:
            for topic, doc, assessor, jid, grade, unsure in cur.execute(
                    "SELECT topic_id, doc_id, assessor, judgment_id, grade, unsure FROM current_judgments "
                    "WHERE collection = ? AND (topic_id, doc_id, assessor) IN "
                    "(SELECT topic_id, doc_id, assessor FROM wb_bulk_judgments b SEMI JOIN judgments USING "
                    "(save_token))", [collection]).fetchall():
                latest[(topic, doc, assessor)] = (int(jid), None if grade is None else int(grade), bool(unsure))
        if any(item not in latest for item in skipped_items):  # a token stored for another item
            return None
        cur.execute(
            "INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade, unsure, note, duration_ms, "
            "pool_version, save_token, rubric_version, saved_at) "
            "SELECT ?, topic_id, doc_id, assessor, grade, unsure, note, duration_ms, ?, save_token, ?, "
            "coalesce(saved_at, current_timestamp) FROM wb_bulk_judgments b "
            "WHERE NOT EXISTS (SELECT 1 FROM judgments j WHERE j.save_token = b.save_token) ORDER BY pos",
            [collection, pool_version, rubric.version_id])
        ids = dict(cur.execute(
            "SELECT b.save_token, j.judgment_id FROM wb_bulk_judgments b JOIN judgments j USING (save_token) "
            "ORDER BY b.pos").fetchall())
    finally:
        cur.unregister("wb_bulk_judgments")
    out: list[SavedJudgment] = []
    previous = -1
    for j, token, _ in items:
        item = (j.topic_id, j.doc_id, j.assessor)
        if token in stored:
            jid, grade, unsure = latest[item]
            out.append(SavedJudgment(jid, False, grade, unsure))
            continue
        jid = int(ids[token])
        if jid <= previous:
            raise StoreError("bulk judgment import: ids were not assigned in input order; nothing was imported "
                             "(run the import again)")
        previous = jid
        if item in latest:  # the current judgment a later skipped line of this item reports
            latest[item] = (jid, j.grade, bool(j.unsure))
        out.append(SavedJudgment(jid, True, j.grade, bool(j.unsure)))
    return out


def check_items(items: Sequence[tuple[Judgment, str, datetime | None]]) -> None:
    """The checks ``record_judgments`` makes before any statement (shared by both paths)."""
    for j, _token, _at in items:
        if j.grade is None and not j.unsure:
            raise ValidationError(f"judgment of topic {j.topic_id!r} document {j.doc_id!r}: expected a grade, "
                                  "found none; give a grade or mark it unsure")
        if j.duration_ms < 0:
            raise ValidationError(f"expected duration_ms >= 0, found {j.duration_ms}")
