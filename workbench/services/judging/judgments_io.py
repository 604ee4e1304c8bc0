"""Judgments in and out: import a file through the UI's save path, export current judgments or history.

Import (``import_judgments``): a lead brings existing judgments (another tool's
export, an earlier campaign, a reference set) into a pool's collection as one
assessor's judgments. Every line is checked first, naming file and line
(topic of the collection, document of the collection, grade on the
collection's rubric or unsure, the file's ``assessor`` column if any,
timestamps not going back in time for one document); then all lines go
through the store's save path (``store.judgments.record_judgments``, the checks of
a UI save) in **one transaction**: all land or none. Importing the same file
twice writes nothing the second time: a line without a timestamp is what the
assessor's judgment is to be now, so it is already stored when the assessor's
current judgment of the document says the same (grade, unsure, note, duration)
and is saved otherwise, even when an earlier save said it (a grade changed
back); a timestamped line is one event of a history, stored once (its save
token is derived from its content and time). Rows are appended in file order;
an imported timestamp becomes the row's ``saved_at``.

Repeated lines, as ``qrels import`` treats them: an exact repeat of an
earlier line (every field equal) is dropped and counted
(``ImportReport.duplicates``). Two lines giving one document different
grades (or one unsure) are refused, naming both lines, unless both carry
timestamps and they differ: then the file is a history (as ``judgments
export --history`` writes it) and the later line is the current judgment.

The report says which documents pooled in the pool version itself (for a
child pool: its delta) the file covered and which it did not; the ancestors'
documents are counted apart (a delta's judgments file rarely holds them, and
counting them as "not covered" overstated what is left to judge). A line judging a document that is not
pooled for its topic is refused unless ``allow_outside_pool`` (then it is kept
and counted: it counts once the pool reaches the document).

Export (``export_rows``): the current judgments of a pool's documents (or the
whole append-only history), optionally one assessor's, as rows for
``formats.judgments.write_judgments``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import InputFormatError, UnknownNameError
from workbench.formats import judgments as jfiles
from workbench.formats.trec import shown_id
from workbench.ranking import natural_key
from workbench.types import Judgment

if TYPE_CHECKING:
    from workbench.judging.log import JudgmentLog
    from workbench.services.judging.sessions import Session
    from workbench.store import Store
    from workbench.store.pools import Pools
    from workbench.store.users import Users


@dataclass(frozen=True)
class ImportReport:
    """What ``import_judgments`` did.

    Attributes:
        path: the file.
        pool_version: the pool version imported against.
        collection: its collection.
        assessor: whose judgments they are.
        rubric_version: the rubric version the grades were checked against.
        n_lines: judgments read.
        n_saved: rows appended.
        n_already: lines already stored (skipped): the current judgment says the same, or
            the timestamped line was imported before.
        n_pooled: (topic, doc) pairs pooled in the pool version itself (a child pool: its delta).
        n_covered: of those, pairs the file judged.
        not_covered: topic -> documents of ``n_pooled`` the file did not judge (topics with some).
        ancestors: the pool version's ancestors, root first (empty for a root pool).
        n_ancestor_pooled: (topic, doc) pairs pooled in the ancestors only (not in ``n_pooled``).
        n_ancestor_covered: of those, pairs the file judged.
        outside_pool: lines judging a document that is not pooled for its topic.
        duplicates: exact repeats of an earlier line, dropped (not in ``n_lines``).
        ignored_columns: CSV columns that are not judgment columns, ignored (``formats.judgments.JudgmentFile``).
    """

    path: str
    pool_version: str
    collection: str
    assessor: str
    rubric_version: str
    n_lines: int
    n_saved: int
    n_already: int
    n_pooled: int
    n_covered: int
    not_covered: dict[str, int] = field(default_factory=dict)
    outside_pool: int = 0
    duplicates: int = 0
    ignored_columns: tuple[str, ...] = ()
    ancestors: tuple[str, ...] = ()
    n_ancestor_pooled: int = 0
    n_ancestor_covered: int = 0


def _token(collection: str, assessor: str, line: jfiles.JudgmentLine, repeat: int) -> str:
    parts = [collection, assessor, line.topic_id, line.doc_id, str(line.grade), str(line.unsure), line.note,
             str(line.duration_ms), line.timestamp.isoformat() if line.timestamp else "", str(repeat)]
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]
    return f"import:{digest}"


def _shown_grade(ln: jfiles.JudgmentLine) -> str:
    return "unsure" if ln.grade is None else str(ln.grade) + (" (unsure)" if ln.unsure else "")


def _drop_repeats(path: str, lines: Sequence[jfiles.JudgmentLine]) -> tuple[list[jfiles.JudgmentLine], int]:
    """The lines without exact repeats, and how many were dropped; a conflicting grade is an error.

    Raises:
        InputFormatError: a document given two grades (or a grade and unsure) by lines that are not a
            history (both timestamped, at different times); names both lines, as ``qrels import`` does.
    """
    seen: set[tuple[Any, ...]] = set()
    last: dict[tuple[str, str], jfiles.JudgmentLine] = {}
    kept: list[jfiles.JudgmentLine] = []
    for ln in lines:
        key = (ln.topic_id, ln.doc_id, ln.grade, ln.unsure, ln.note, ln.duration_ms, ln.timestamp)
        if key in seen:
            continue
        seen.add(key)
        prev = last.get((ln.topic_id, ln.doc_id))
        if (prev is not None and (prev.grade, prev.unsure) != (ln.grade, ln.unsure)
                and (prev.timestamp is None or ln.timestamp is None or prev.timestamp == ln.timestamp)):
            raise InputFormatError(path, ln.line, f"expected one grade for topic {shown_id(ln.topic_id)} and document "
                                                  f"{shown_id(ln.doc_id)}, found {_shown_grade(ln)} here and "
                                                  f"{_shown_grade(prev)} on line {prev.line}. Keep one of the two "
                                                  "lines (or give both their timestamps, if the file is a history).")
        last[(ln.topic_id, ln.doc_id)] = ln
        kept.append(ln)
    return kept, len(lines) - len(kept)


def _check_lines(path: str, lines: Sequence[jfiles.JudgmentLine], assessor: str, topics: set[str],
                 missing_docs: set[str], n_docs: int, rubric: Any, collection: str) -> None:
    last_time: dict[tuple[str, str], tuple[datetime, int]] = {}
    for ln in lines:
        if ln.assessor and ln.assessor != assessor:
            raise InputFormatError(path, ln.line, f"expected assessor {assessor!r} (--assessor), found "
                                                  f"{shown_id(ln.assessor)}. Import one assessor's lines at a time "
                                                  "(export with --assessor NAME, or filter the file).")
        if ln.topic_id not in topics:
            raise InputFormatError(path, ln.line, f"expected a topic of collection {collection!r}, found topic "
                                                  f"{shown_id(ln.topic_id)}. Check the topic ids.")
        if ln.doc_id in missing_docs:
            found = n_docs - len(missing_docs)
            raise InputFormatError(path, ln.line, f"expected a document of collection {collection!r}, found doc id "
                                                  f"{shown_id(ln.doc_id)} ({found:,} of {n_docs:,} doc ids of the "
                                                  "file are in the collection). Check the doc ids.")
        if ln.grade is not None and ln.grade not in rubric.values:
            raise InputFormatError(path, ln.line, f"expected a grade of rubric {rubric.name!r} "
                                                  f"{list(rubric.values)}, found {ln.grade}. Map the grades to the "
                                                  "rubric, or choose another rubric first.")
        if ln.timestamp is not None:
            key = (ln.topic_id, ln.doc_id)
            prev = last_time.get(key)
            if prev is not None and ln.timestamp < prev[0]:
                raise InputFormatError(path, ln.line, f"expected timestamps in time order for topic "
                                                      f"{shown_id(ln.topic_id)} document {shown_id(ln.doc_id)}, found "
                                                      f"{ln.timestamp.isoformat()} after {prev[0].isoformat()} (line "
                                                      f"{prev[1]}). The last line of a document is its current "
                                                      "judgment: sort the file by time.")
            last_time[key] = (ln.timestamp, ln.line)


def import_judgments(
    store: Store,
    session: Session,
    path: str | Path,
    *,
    pool_version: str,
    assessor: str,
    fmt: jfiles.InFormat | None = None,
    allow_outside_pool: bool = False,
) -> ImportReport:
    """Import a judgment file as ``assessor``'s judgments on ``pool_version``'s collection (lead only).

    Args:
        store: the store.
        session: the signed-in lead.
        path: the file.
        pool_version: the pool version the judgments belong to (recorded on each row).
        assessor: an existing user whose judgments these are.
        fmt: ``trec``, ``csv`` or ``jsonl``; None chooses by suffix (``formats.judgments.sniff_format``).
        allow_outside_pool: keep lines judging a document of the collection that is not pooled for its
            topic in ``pool_version`` (or an ancestor); default False refuses them (file:line).

    Returns:
        The ``ImportReport``.

    Raises:
        PermissionDeniedError: the session is not a lead's.
        UnknownNameError: unknown pool version or assessor.
        InputFormatError: a malformed line, an unknown topic or document, a grade
            off the rubric, an assessor column naming someone else, timestamps
            going back, two grades for one document, a document outside the pool
            without ``allow_outside_pool`` (file:line); nothing is written.
    """
    from workbench.services.judging.sessions import require_lead

    require_lead(session, "import judgments")
    p = str(path)
    chosen = fmt or jfiles.sniff_format(path)
    read = jfiles.read_judgment_file(path, chosen)
    lines, n_repeats = _drop_repeats(p, read.lines)
    collection = store.pools.get_pool(pool_version).collection
    try:
        store.users.get_user(assessor)
    except UnknownNameError as e:
        e.args = (f"{e.args[0]}; add the assessor first with `workbench users add {assessor} --lead ...`",)
        raise
    topics = set(store.collections.get_topics(collection))
    doc_ids = {ln.doc_id for ln in lines}
    missing = store.collections.missing_doc_ids(collection, doc_ids)
    rubric = store.rubrics.collection_rubric(collection)
    _check_lines(p, lines, assessor, topics, missing, len(doc_ids), rubric, collection)
    pooled = store.pools.pool_documents(pool_version, with_ancestors=True)
    outside_lines = [ln for ln in lines if ln.doc_id not in pooled.get(ln.topic_id, set())]
    if outside_lines and not allow_outside_pool:
        ln = outside_lines[0]
        raise InputFormatError(p, ln.line, f"expected a document pooled for topic {shown_id(ln.topic_id)} in pool "
                                           f"{pool_version} (or its ancestors), found doc id {shown_id(ln.doc_id)} "
                                           f"({len(outside_lines):,} line(s) of the file are outside the pool). "
                                           "Check --pool, or pass --allow-outside-pool to keep them.")

    current = store.judgments.current_states(collection, assessor, ((ln.topic_id, ln.doc_id) for ln in lines
                                                          if ln.timestamp is None))
    items = []
    n_current = 0
    for ln in lines:  # no exact repeats left: the token's repeat count is 0 (as files imported before had it)
        token = _token(collection, assessor, ln, 0)
        if ln.timestamp is None:
            # A line without a time is what the assessor's judgment is to be now: already stored when the
            # current judgment says the same; else a new save, even if an earlier save said it (a grade
            # changed back), under a token of the state it replaces (a token alone matched any earlier save).
            state = current.get((ln.topic_id, ln.doc_id))
            if state is not None and state[1:] == (ln.grade, bool(ln.unsure), ln.note, int(ln.duration_ms)):
                n_current += 1
                continue
            if state is not None:
                token = f"{token}@{state[0]}"
        j = Judgment(ln.topic_id, ln.doc_id, assessor, ln.grade, ln.unsure, ln.note, ln.duration_ms)
        items.append((j, token, ln.timestamp))
    saved = store.judgments.record_judgments(items, collection=collection, pool_version=pool_version,
                                   lead=session.user) if items else []

    judged = {(ln.topic_id, ln.doc_id) for ln in lines}
    lineage = store.pools.pool_lineage(pool_version)
    own = store.pools.pool_documents(pool_version, with_ancestors=False) if len(lineage) > 1 else pooled
    n_pooled = sum(len(d) for d in own.values())
    not_covered = {t: sum(1 for d in docs if (t, d) not in judged) for t, docs in own.items()}
    inherited = {(t, d) for t, docs in pooled.items() for d in docs if d not in own.get(t, set())}
    outside = len(outside_lines)
    n_new = sum(1 for s in saved if s.new)
    return ImportReport(
        path=p, pool_version=pool_version, collection=collection, assessor=assessor,
        rubric_version=rubric.version_id, n_lines=len(lines), n_saved=n_new,
        n_already=len(saved) - n_new + n_current,
        n_pooled=n_pooled, n_covered=n_pooled - sum(not_covered.values()),
        not_covered={t: n for t in sorted(not_covered, key=natural_key) if (n := not_covered[t])},
        outside_pool=outside, duplicates=n_repeats, ignored_columns=read.ignored_columns,
        ancestors=tuple(lineage[:-1]), n_ancestor_pooled=len(inherited), n_ancestor_covered=len(inherited & judged),
    )


def export_rows(
    judgments: JudgmentLog, pools: Pools, users: Users, pool_version: str, *, assessor: str | None = None,
    history: bool = False,
) -> list[dict[str, Any]]:
    """Judgment rows of a pool version's documents (and its ancestors'), for ``write_judgments``.

    Args:
        judgments: the judgment log.
        pools: the store's pools.
        users: the store's users.
        pool_version: the pool version.
        assessor: only this assessor (None: everyone).
        history: every save of the append-only log, not only the current judgments.

    Returns:
        Rows keyed by ``formats.judgments.EXPORT_COLUMNS``, topics in natural
        order, then doc id, assessor, and save order.

    Raises:
        UnknownNameError: unknown pool version (or assessor, when given).
    """
    collection = pools.get_pool(pool_version).collection
    if assessor is not None:
        users.get_user(assessor)
    rows = judgments.judgment_rows(collection, pool_version, assessor=assessor, history=history)
    rows.sort(key=lambda j: (natural_key(j.topic_id), j.doc_id, j.assessor, j.judgment_id))
    return [{
        "topic_id": j.topic_id, "doc_id": j.doc_id, "assessor": j.assessor, "grade": j.grade, "unsure": j.unsure,
        "note": j.note, "duration_ms": j.duration_ms, "timestamp": j.saved_at, "pool_version": j.pool_version,
        "rubric_version": j.rubric_version, "judgment_id": j.judgment_id,
    } for j in rows]
