"""An in-memory judgment log: the reference second backend of ``workbench.judging.log.JudgmentLog``.

It keeps the rows in a Python list and knows just what a log checks (users and
their roles, model assessors, the topics and rubric of each collection, the pool
versions with their parents and entries), given to it when it is made. It shows
that the interface is enough for a second backend: ``test_judgment_log_contract.py``
runs the same tests against it and against the DuckDB part (``store.judgments``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from workbench.errors import PermissionDeniedError, StoreError, UnknownNameError, ValidationError
from workbench.judging.log import (
    ImportItem,
    ItemKey,
    JudgmentState,
    SavedJudgment,
    StoredJudgment,
    UndoneJudgment,
)
from workbench.judging.prefill import Prefill, prefill_outcome
from workbench.rubric import Rubric, get_rubric
from workbench.types import Judgment

PoolSpec = tuple[str | None, Mapping[str, Sequence[str]]]
"""(parent pool version or None, topic_id -> doc ids)."""


@dataclass(frozen=True)
class _Row:
    stored: StoredJudgment
    save_token: str | None = None
    undoes: int | None = None


class InMemoryJudgmentLog:
    """A ``JudgmentLog`` over a list of rows (not thread-safe; for tests and as a reference).

    Args:
        users: user name -> role (``assessor`` or ``lead``).
        topics: collection -> its topic ids.
        pools: pool version -> (parent, topic_id -> doc ids).
        models: user names that are model assessors.
        rubrics: collection -> rubric (default: ``default``, or ``cranfield`` for a
            collection whose name contains "cranfield", as the store chooses).
        clock: the time of a save (default: now, UTC).
    """

    def __init__(
        self,
        users: Mapping[str, str],
        topics: Mapping[str, Iterable[str]],
        pools: Mapping[str, PoolSpec] | None = None,
        *,
        models: Iterable[str] = (),
        rubrics: Mapping[str, Rubric] | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._users = dict(users)
        self._models = set(models)
        self._topics = {c: set(ts) for c, ts in topics.items()}
        self._pools = {p: (parent, {t: list(ds) for t, ds in entries.items()})
                       for p, (parent, entries) in (pools or {}).items()}
        self._rubrics = dict(rubrics or {})
        self._clock = clock or (lambda: datetime.now(UTC))
        self._rows: list[_Row] = []

    # -- checks (what the store checks in its save transaction) ------------------------

    def _require_user(self, name: str) -> str:
        if name not in self._users:
            raise UnknownNameError("user", name, sorted(self._users))
        return self._users[name]

    def _require_topic(self, collection: str, topic_id: str) -> None:
        known = self._topics.get(collection, set())
        if topic_id not in known:
            raise UnknownNameError(f"topic of collection {collection!r}", topic_id, sorted(known))

    def _rubric(self, collection: str) -> Rubric:
        if collection in self._rubrics:
            return self._rubrics[collection]
        return get_rubric("cranfield" if "cranfield" in collection.lower() else "default")

    def _lineage(self, pool_version: str) -> list[str]:
        chain: list[str] = []
        current: str | None = pool_version
        while current and current not in chain:
            if current not in self._pools:
                raise UnknownNameError("pool version", current, sorted(self._pools))
            chain.append(current)
            current = self._pools[current][0]
        return chain[::-1]

    def _pooled(self, versions: Iterable[str]) -> set[ItemKey]:
        return {(t, d) for v in versions for t, docs in self._pools[v][1].items() for d in docs}

    @staticmethod
    def _check(j: Judgment) -> None:
        if j.grade is None and not j.unsure:
            raise ValidationError(
                f"judgment of topic {j.topic_id!r} document {j.doc_id!r}: expected a grade, found none; "
                "give a grade or mark it unsure"
            )
        if j.duration_ms < 0:
            raise ValidationError(f"expected duration_ms >= 0, found {j.duration_ms}")

    # -- rows ----------------------------------------------------------------------------

    def _append(self, collection: str, j: Judgment, pool_version: str, *, token: str | None = None,
                undoes: int | None = None, rubric_version: str = "", saved_at: datetime | None = None,
                prefill: Prefill | None = None, outcome: str | None = None) -> int:
        jid = len(self._rows) + 1
        if token is not None and any(r.save_token == token for r in self._rows):
            raise StoreError(f"save token {token!r} is stored already")
        if outcome is None:
            outcome = "" if prefill is None else prefill_outcome(prefill, j.grade, bool(j.unsure))
        self._rows.append(_Row(StoredJudgment(
            jid, collection, j.topic_id, j.doc_id, j.assessor, j.grade, bool(j.unsure), j.note,
            int(j.duration_ms), pool_version, saved_at or self._clock(), rubric_version, prefill, outcome),
            token, undoes))
        return jid

    def _latest(self, collection: str, topic_id: str, doc_id: str, assessor: str) -> _Row | None:
        mine = [r for r in self._rows if (r.stored.collection, r.stored.topic_id, r.stored.doc_id,
                                          r.stored.assessor) == (collection, topic_id, doc_id, assessor)]
        return mine[-1] if mine else None

    def _current(self) -> list[StoredJudgment]:
        """The latest row per (collection, topic, doc, assessor) when it holds a grade or an unsure mark."""
        latest: dict[tuple[str, str, str, str], StoredJudgment] = {}
        for r in self._rows:
            s = r.stored
            latest[(s.collection, s.topic_id, s.doc_id, s.assessor)] = s
        return [s for s in latest.values() if s.grade is not None or s.unsure]

    def _save(self, j: Judgment, collection: str, pool_version: str, save_token: str | None, *,
              saved_at: datetime | None = None, skip: bool = False, prefill: Prefill | None = None) -> SavedJudgment:
        token = save_token
        if save_token is not None and any(r.save_token == save_token for r in self._rows):
            latest = self._latest(collection, j.topic_id, j.doc_id, j.assessor)
            if latest is not None:
                held = latest.stored
                if skip or (held.grade, held.unsure) == (j.grade, bool(j.unsure)):
                    return SavedJudgment(held.judgment_id, False, held.grade, held.unsure)
                token = f"{save_token}#{held.judgment_id}"  # a correction back to an earlier grade
        self._require_user(j.assessor)
        rubric = self._rubric(collection)
        if j.grade is not None:
            rubric.check(j.grade)
        self._require_topic(collection, j.topic_id)
        jid = self._append(collection, j, pool_version, token=token, rubric_version=rubric.version_id,
                           saved_at=saved_at, prefill=prefill)
        return SavedJudgment(jid, True, j.grade, bool(j.unsure))  # judging setting: unknown here (True)

    # -- JudgmentLog -----------------------------------------------------------------------

    def record_judgment(self, judgment: Judgment, *, collection: str, pool_version: str = "",
                        save_token: str | None = None) -> int:
        """See ``JudgmentLog.record_judgment``."""
        return self.record_judgment_outcome(judgment, collection=collection, pool_version=pool_version,
                                            save_token=save_token).judgment_id

    def record_judgment_outcome(self, judgment: Judgment, *, collection: str, pool_version: str = "",
                                save_token: str | None = None, prefill: Prefill | None = None) -> SavedJudgment:
        """See ``JudgmentLog.record_judgment_outcome``."""
        self._check(judgment)
        return self._save(judgment, collection, pool_version, save_token, prefill=prefill)

    def record_judgments(self, judgments: Sequence[ImportItem], *, collection: str, pool_version: str,
                         lead: str) -> list[SavedJudgment]:
        """See ``JudgmentLog.record_judgments``: all of it, or nothing (the rows are restored on an error)."""
        for j, _token, _at in judgments:
            self._check(j)
        if self._require_user(lead) != "lead":
            raise PermissionDeniedError(f"import judgments: user {lead!r} has role {self._users[lead]!r}, "
                                        "expected 'lead'")
        before = copy.copy(self._rows)
        try:
            return [self._save(j, collection, pool_version, token, saved_at=at, skip=True)
                    for j, token, at in judgments]
        except BaseException:
            self._rows = before
            raise

    def record_note(self, collection: str, topic_id: str, doc_id: str, assessor: str, note: str, *,
                    pool_version: str = "") -> SavedJudgment:
        """See ``JudgmentLog.record_note``."""
        self._require_user(assessor)
        self._require_topic(collection, topic_id)
        latest = self._latest(collection, topic_id, doc_id, assessor)
        grade = None if latest is None else latest.stored.grade
        unsure = False if latest is None else latest.stored.unsure
        jid = self._append(collection, Judgment(topic_id, doc_id, assessor, grade, unsure, note), pool_version,
                           rubric_version=self._rubric(collection).version_id,
                           prefill=None if latest is None else latest.stored.prefill,
                           outcome=None if latest is None else latest.stored.prefill_outcome)
        return SavedJudgment(jid, True, grade, unsure)

    def undo_judgment(self, judgment_id: int, assessor: str) -> UndoneJudgment:
        """See ``JudgmentLog.undo_judgment``."""
        target = next((r for r in self._rows if r.stored.judgment_id == judgment_id
                       and r.stored.assessor == assessor), None)
        if target is None:
            mine = [str(r.stored.judgment_id) for r in reversed(self._rows) if r.stored.assessor == assessor][:5]
            raise UnknownNameError(f"save of {assessor!r}", str(judgment_id), mine)
        s = target.stored
        history = [r for r in self._rows if (r.stored.collection, r.stored.topic_id, r.stored.doc_id,
                                             r.stored.assessor) == (s.collection, s.topic_id, s.doc_id, assessor)]
        undone = {r.undoes for r in history if r.undoes is not None}
        if judgment_id in undone:
            raise ValidationError(f"undo: save {judgment_id} of document {s.doc_id!r} was undone already")
        at = next(i for i, r in enumerate(history) if r.stored.judgment_id == judgment_id)
        standing = [r.stored.judgment_id for r in history[at + 1:]
                    if r.undoes is None and r.stored.judgment_id not in undone]
        if standing:
            raise ValidationError(
                f"undo: document {s.doc_id!r} of topic {s.topic_id!r} was saved again after save {judgment_id} "
                f"(save {standing[-1]}); undo the newer save first"
            )
        before = history[at - 1].stored if at > 0 else None
        grade = None if before is None else before.grade
        unsure = False if before is None else before.unsure
        note = "" if before is None else before.note
        jid = self._append(s.collection, Judgment(s.topic_id, s.doc_id, assessor, grade, unsure, note),
                           s.pool_version, undoes=judgment_id,
                           rubric_version=before.rubric_version if before is not None else "",
                           prefill=None if before is None else before.prefill,
                           outcome=None if before is None else before.prefill_outcome)
        return UndoneJudgment(jid, judgment_id, s.topic_id, s.doc_id, grade, unsure, grade is not None or unsure)

    def judgment_rows(self, collection: str, pool_version: str | None = None, *, assessor: str | None = None,
                      history: bool = False) -> list[StoredJudgment]:
        """See ``JudgmentLog.judgment_rows``."""
        rows = [r.stored for r in self._rows] if history else self._current()
        rows = [s for s in rows if s.collection == collection]
        if pool_version is not None:
            lineage = self._lineage(pool_version)
            pooled = self._pooled(lineage)
            rows = [s for s in rows if (s.topic_id, s.doc_id) in pooled or s.pool_version in lineage]
        if assessor is not None:
            rows = [s for s in rows if s.assessor == assessor]
        return sorted(rows, key=lambda s: (s.topic_id, s.doc_id, s.assessor, s.judgment_id))

    def current_states(self, collection: str, assessor: str, items: Iterable[ItemKey]) -> dict[ItemKey, JudgmentState]:
        """See ``JudgmentLog.current_states``."""
        out: dict[ItemKey, JudgmentState] = {}
        for topic_id, doc_id in sorted(set(items)):
            latest = self._latest(collection, topic_id, doc_id, assessor)
            if latest is not None and (latest.stored.grade is not None or latest.stored.unsure):
                s = latest.stored
                out[(topic_id, doc_id)] = (s.judgment_id, s.grade, s.unsure, s.note, s.duration_ms)
        return out

    def _in_lineage(self, rows: list[StoredJudgment], pool_version: str | None) -> list[StoredJudgment]:
        if pool_version is None:
            return rows
        pooled = self._pooled(self._lineage(pool_version))
        return [s for s in rows if (s.topic_id, s.doc_id) in pooled]

    def current_judgments(self, collection: str, pool_version: str | None = None, *,
                          include_model: bool = False) -> list[StoredJudgment]:
        """See ``JudgmentLog.current_judgments``."""
        rows = [s for s in self._current() if s.collection == collection
                and (include_model or s.assessor not in self._models)]
        return sorted(self._in_lineage(rows, pool_version), key=lambda s: (s.topic_id, s.doc_id, s.assessor))

    def model_judgments(self, collection: str, pool_version: str | None = None) -> list[StoredJudgment]:
        """See ``JudgmentLog.model_judgments``."""
        rows = [s for s in self._current() if s.collection == collection and s.assessor in self._models]
        return sorted(self._in_lineage(rows, pool_version), key=lambda s: (s.topic_id, s.doc_id, s.assessor))

    def first_judged(self, collection: str, pool_version: str) -> dict[str, list[str]]:
        """See ``JudgmentLog.first_judged``."""
        self._lineage(pool_version)  # raises for an unknown pool version
        pooled = self._pooled([pool_version])
        first: dict[ItemKey, int] = {}
        for r in self._rows:
            s = r.stored
            if (s.collection == collection and s.grade is not None and s.assessor not in self._models
                    and (s.topic_id, s.doc_id) in pooled):
                first.setdefault((s.topic_id, s.doc_id), s.judgment_id)
        out: dict[str, list[str]] = {}
        for (t, d), _jid in sorted(first.items(), key=lambda kv: (kv[0][0], kv[1])):
            out.setdefault(t, []).append(d)
        return out

    def judgment_history(self, collection: str, topic_id: str, doc_id: str,
                         assessor: str | None = None) -> list[StoredJudgment]:
        """See ``JudgmentLog.judgment_history``."""
        return [r.stored for r in self._rows
                if (r.stored.collection, r.stored.topic_id, r.stored.doc_id) == (collection, topic_id, doc_id)
                and (assessor is None or r.stored.assessor == assessor)]

    def count_judgments(self, collection: str | None = None) -> int:
        """See ``JudgmentLog.count_judgments``."""
        return sum(1 for r in self._rows if collection is None or r.stored.collection == collection)


__all__ = ["InMemoryJudgmentLog", "PoolSpec"]
