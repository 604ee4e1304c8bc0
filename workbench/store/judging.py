"""Store methods for judging (a mixin of ``LabelStore``): users, assignments,
judgments, adjudications, final grades and publishing.

Facts are append-only. ``record_judgment`` inserts one ``judgments`` row per
save and never updates one; the *current* judgment of an assessor on a
document is the latest row (view ``current_judgments``). A save carries an
optional client ``save_token``: a retried or double-submitted save with the
same token lands once and returns the first row's id. Adjudications are
append-only in the same way (view ``current_adjudications``).

Roles: ``assessor`` or ``lead``. Only a lead assigns, adjudicates, sets a
collection's rubric and publishes (``PermissionDeniedError`` otherwise). Tokens
are stored as PBKDF2-HMAC-SHA256 hashes with a per-user salt and compared with
``hmac.compare_digest``. The store checks *roles*; proving an identity with
a token (``authenticate``) is done once by the edge (CLI flag, UI sign-in).

Publishing a pool version: the final grades of every document of the pool
version **and its ancestors** (the pool lineage, root first) are derived from
the current judgments and adjudications with a named rule
(``workbench.judging.adjudication``); with a parent qrels version, the new
version is the parent's entries overlaid with those final grades. So
"qrels v2 (parent v1)" for a delta pool holds v1's judgments plus the delta's,
and a re-judged v1 document shows up as *changed* in the diff.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from workbench.errors import (
    DuplicateNameError,
    PermissionDeniedError,
    StoreError,
    StoreLockedError,
    UnknownNameError,
    ValidationError,
)
from workbench.judging.adjudication import (
    FinalGrades,
    QrelsDiff,
    diff_qrels,
    final_grades,
    get_rule,
)
from workbench.judging.queue import JudgingView, PoolItem
from workbench.rubric import Rubric, get_rubric
from workbench.store.core import StoreCore
from workbench.types import Document, Judgment, Topic

if TYPE_CHECKING:
    from workbench.store.qrels import QrelsVersionInfo

Role = Literal["assessor", "lead"]
ROLES: tuple[str, ...] = ("assessor", "lead")

PBKDF2_ITERATIONS = 100_000
"""PBKDF2-HMAC-SHA256 rounds for access tokens (about 50 ms per check)."""

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")

ItemKey = tuple[str, str]


def hash_token(token: str, salt: str, iterations: int = PBKDF2_ITERATIONS) -> str:
    """The stored form of a token: ``pbkdf2-sha256$<iterations>$<hex digest>``.

    Source:
        RFC 8018 (PKCS #5 v2.1) PBKDF2, via ``hashlib.pbkdf2_hmac``.
    """
    digest = hashlib.pbkdf2_hmac("sha256", token.encode("utf-8"), bytes.fromhex(salt), iterations)
    return f"pbkdf2-sha256${iterations}${digest.hex()}"


def _token_matches(token: str, salt: str, stored: str) -> bool:
    try:
        _scheme, iterations, _hex = stored.split("$")
        candidate = hash_token(token, salt, int(iterations))
    except ValueError:
        return False
    return hmac.compare_digest(candidate.encode(), stored.encode())


@dataclass(frozen=True, slots=True)
class UserInfo:
    """A named user of the workbench (the token hash is never read out).

    Attributes:
        name: user name (letters, digits, ``_.@-``; at most 64 characters).
        role: ``assessor`` or ``lead``.
        created_by: the lead who added the user ("" for the first lead).
        created_at: when the user was added.
    """

    name: str
    role: str
    created_by: str
    created_at: datetime

    @property
    def is_lead(self) -> bool:
        """True for the lead role."""
        return self.role == "lead"


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
        saved_at: commit time.
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
    """

    judgment_id: int
    new: bool
    grade: int | None
    unsure: bool


_JUDGMENT_COLUMNS = (
    "judgment_id, collection, topic_id, doc_id, assessor, grade, unsure, note, duration_ms, "
    "pool_version, saved_at"
)


@dataclass(frozen=True, slots=True)
class StoredAdjudication:
    """A lead's final grade on a document, with the rationale.

    Attributes:
        adjudication_id: row id.
        collection: collection name.
        topic_id: topic.
        doc_id: document.
        grade: the final grade.
        rationale: why (free text).
        lead: the lead who decided.
        pool_version: pool version it was decided under ("" when none).
        created_at: commit time.
    """

    adjudication_id: int
    collection: str
    topic_id: str
    doc_id: str
    grade: int
    rationale: str
    lead: str
    pool_version: str
    created_at: datetime


_ADJ_COLUMNS = "adjudication_id, collection, topic_id, doc_id, grade, rationale, lead, pool_version, created_at"


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One document of an assessor's queue (no run, rank or score).

    Attributes:
        position: 1-based position in the assessor's queue.
        pool_version: the pool version it was assigned from.
        collection: collection name.
        topic_id: topic.
        doc_id: document.
        judged: the assessor has a current judgment on it.
    """

    position: int
    pool_version: str
    collection: str
    topic_id: str
    doc_id: str
    judged: bool


@dataclass(frozen=True, slots=True)
class AssignReport:
    """What an ``assign`` call stored.

    Attributes:
        pool_version: the pool version assigned.
        batch: the batch id of this assign action.
        added: assessor -> number of new assignments.
        skipped: assessor -> number already assigned to them before (not repeated).
    """

    pool_version: str
    batch: str
    added: dict[str, int]
    skipped: dict[str, int]


@dataclass(frozen=True, slots=True)
class PoolTopicProgress:
    """Judging state of one topic of a pool version (lead's pool page).

    Attributes:
        topic_id: topic.
        n_documents: documents pooled for the topic (this version and ancestors).
        n_assigned: documents assigned to at least one assessor.
        n_judged: documents with at least one current graded or unsure judgment.
        n_multi_judged: documents with current judgments from two or more assessors.
    """

    topic_id: str
    n_documents: int
    n_assigned: int
    n_judged: int
    n_multi_judged: int


def _one(cursor: Any) -> Any:
    """The first row of an executed statement, or None; always fetches the
    whole result (DuckDB refuses further work on a cursor with unread rows)."""
    rows = cursor.fetchall()
    return rows[0] if rows else None


def _user_from_row(row: Sequence[Any]) -> UserInfo:
    return UserInfo(row[0], row[1], row[2], row[3])


class JudgingMixin(StoreCore):
    """Domain verbs on judging; every multi-row change is one ``transaction()``."""

    # -- users ----------------------------------------------------------------

    def _user(self, cur: Any, name: str) -> UserInfo:
        row = _one(cur.execute(
            "SELECT user_name, role, created_by, created_at FROM users WHERE user_name = ?", [name]
        ))
        if row is None:
            known = [r[0] for r in cur.execute("SELECT user_name FROM users").fetchall()]
            raise UnknownNameError("user", name, known)
        return _user_from_row(row)

    def _require_lead(self, cur: Any, name: str, action: str) -> UserInfo:
        user = self._user(cur, name)
        if not user.is_lead:
            raise PermissionDeniedError(
                f"{action}: user {name!r} has role {user.role!r}, expected 'lead'. "
                "Ask a lead to do it, or to add you with --role lead"
            )
        return user

    def add_user(
        self,
        name: str,
        role: Role = "assessor",
        *,
        token: str | None = None,
        lead: str | None = None,
    ) -> str:
        """Add a user with an access token; returns the token (shown once).

        The first lead of a store may be added by anyone (bootstrap); after
        that, ``lead`` must name an existing lead (authenticated by the caller).

        Args:
            name: user name: letters, digits and ``_.@-``, 1-64 characters.
            role: ``assessor`` or ``lead``.
            token: the token to set (at least 8 characters); None generates a
                random 22-character one.
            lead: the lead adding the user; required once a lead exists.

        Returns:
            The plain token. Only its salted hash is stored.

        Raises:
            ValidationError: bad name, role or token.
            DuplicateNameError: the name is taken.
            PermissionDeniedError: a lead exists and ``lead`` is missing or not a lead.
        """
        if not _NAME_RE.match(name or ""):
            raise ValidationError(
                f"expected a user name of letters, digits and _.@- (1-64 characters), found {name!r}"
            )
        if role not in ROLES:
            raise ValidationError(f"expected role 'assessor' or 'lead', found {role!r}")
        if token is not None and (len(token) < 8 or token != token.strip()):
            raise ValidationError("expected a token of at least 8 characters without surrounding spaces")
        plain = token if token is not None else secrets.token_urlsafe(16)
        salt = secrets.token_hex(16)
        stored = hash_token(plain, salt)
        with self.transaction(f"add user {name}") as cur:
            n_leads = _one(cur.execute("SELECT count(*) FROM users WHERE role = 'lead'"))[0]
            if n_leads:
                if not lead:
                    raise PermissionDeniedError(
                        f"add user {name!r}: only a lead can add users; pass the lead's name and token"
                    )
                self._require_lead(cur, lead, f"add user {name!r}")
            if _one(cur.execute("SELECT 1 FROM users WHERE user_name = ?", [name])):
                raise DuplicateNameError(f"user {name!r} already exists; choose another name")
            cur.execute(
                "INSERT INTO users (user_name, role, token_hash, salt, created_by) VALUES (?, ?, ?, ?, ?)",
                [name, role, stored, salt, lead or ""],
            )
        return plain

    def reset_token(self, name: str, *, lead: str, token: str | None = None) -> str:
        """Give a user a new token (a lead's action); the old one stops working.

        Args:
            name: the user.
            lead: the lead doing it (role checked).
            token: the new token (>= 8 characters); None generates one.

        Returns:
            The new plain token (only its hash is stored).

        Raises:
            UnknownNameError: unknown user.
            PermissionDeniedError: ``lead`` is not a lead.
            ValidationError: a token shorter than 8 characters.
        """
        if token is not None and (len(token) < 8 or token != token.strip()):
            raise ValidationError("expected a token of at least 8 characters without surrounding spaces")
        plain = token if token is not None else secrets.token_urlsafe(16)
        salt = secrets.token_hex(16)
        with self.transaction(f"reset token of {name}") as cur:
            self._require_lead(cur, lead, f"reset the token of {name!r}")
            self._user(cur, name)
            cur.execute(
                "UPDATE users SET token_hash = ?, salt = ? WHERE user_name = ?",
                [hash_token(plain, salt), salt, name],
            )
        return plain

    def authenticate(self, name: str, token: str) -> UserInfo:
        """Check a user's token.

        Returns:
            The user.

        Raises:
            PermissionDeniedError: unknown user or wrong token (one message for
                both, so names cannot be probed).
        """
        with self.connection("sign in") as cur:
            row = _one(cur.execute(
                "SELECT user_name, role, created_by, created_at, token_hash, salt FROM users "
                "WHERE user_name = ?",
                [name],
            ))
        if row is None or not _token_matches(token or "", row[5], row[4]):
            raise PermissionDeniedError(f"sign-in failed for {name!r}: unknown user or wrong token")
        return _user_from_row(row)

    def get_user(self, name: str) -> UserInfo:
        """A user by name. Raises UnknownNameError listing the users."""
        with self.connection("read user") as cur:
            return self._user(cur, name)

    def list_users(self) -> list[UserInfo]:
        """All users, sorted by name."""
        with self.connection("list users") as cur:
            rows = cur.execute(
                "SELECT user_name, role, created_by, created_at FROM users ORDER BY user_name"
            ).fetchall()
        return [_user_from_row(r) for r in rows]

    # -- rubric -----------------------------------------------------------------

    def collection_rubric(self, collection: str) -> Rubric:
        """The grade scale judged on for a collection.

        A lead's choice (``set_collection_rubric``) wins; otherwise ``cranfield``
        for a collection whose name contains "cranfield", else ``default``.
        """
        with self.connection("read rubric") as cur:
            return self._rubric(cur, collection)

    def _rubric(self, cur: Any, collection: str) -> Rubric:
        row = _one(cur.execute("SELECT value FROM meta WHERE key = ?", [f"rubric:{collection}"]))
        if row:
            return get_rubric(row[0])
        return get_rubric("cranfield" if "cranfield" in collection.lower() else "default")

    def set_collection_rubric(self, collection: str, rubric: str, *, lead: str) -> Rubric:
        """Choose the rubric of a collection (a lead's action).

        Refused while a current judgment or adjudication of the collection has a
        grade outside the new scale (agreement and publishing would meet grades
        the rubric does not define).

        Raises:
            UnknownNameError: unknown rubric, or unknown collection (listing the known ones).
            PermissionDeniedError: ``lead`` is not a lead.
            ValidationError: current grades outside the new scale (listed with counts).
        """
        chosen = get_rubric(rubric)
        with self.transaction(f"set rubric of {collection}") as cur:
            self._require_lead(cur, lead, "set rubric")
            if not _one(cur.execute("SELECT 1 FROM collections WHERE collection = ?", [collection])):
                known = [r[0] for r in cur.execute("SELECT collection FROM collections").fetchall()]
                raise UnknownNameError("collection", collection, known)
            scale = list(chosen.values)
            marks = ", ".join("?" for _ in scale)
            off = cur.execute(
                f"SELECT what, grade, count(*) FROM ("
                f"SELECT 'judgment' AS what, grade FROM current_judgments WHERE collection = ? "
                f"AND grade IS NOT NULL AND grade NOT IN ({marks}) "
                f"UNION ALL SELECT 'adjudication' AS what, grade FROM current_adjudications WHERE collection = ? "
                f"AND grade NOT IN ({marks})) GROUP BY what, grade ORDER BY what DESC, grade",
                [collection, *scale, collection, *scale],
            ).fetchall()
            if off:
                found = ", ".join(f"grade {g} in {n} current {w}(s)" for w, g, n in off)
                raise ValidationError(
                    f"rubric {chosen.name!r} for collection {collection!r}: expected every current grade in "
                    f"its scale {scale}, found {found}; keep the rubric the documents were judged on, "
                    "or re-judge those documents first"
                )
            cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [f"rubric:{collection}", chosen.name])
        return chosen

    # -- pools as judging sees them ---------------------------------------------

    def _pool_row(self, cur: Any, pool_version: str) -> tuple[str, str, str | None]:
        row = _one(cur.execute(
            "SELECT collection, collection_version, parent_version FROM pools WHERE pool_version = ?",
            [pool_version],
        ))
        if row is None:
            known = [r[0] for r in cur.execute("SELECT pool_version FROM pools").fetchall()]
            raise UnknownNameError("pool version", pool_version, known)
        return row[0], row[1], row[2]

    def _lineage(self, cur: Any, pool_version: str) -> list[str]:
        """The pool version and its ancestors, root first."""
        chain: list[str] = []
        current: str | None = pool_version
        while current and current not in chain:
            _c, _v, parent = self._pool_row(cur, current)
            chain.append(current)
            current = parent
        return chain[::-1]

    def judging_pool_items(self, pool_version: str) -> tuple[str, list[PoolItem]]:
        """The collection and the entries of one pool version (not its ancestors)
        as assignment needs them: topic, doc and priority rank only.

        Raises:
            UnknownNameError: unknown pool version.
        """
        with self.connection("read pool for assignment") as cur:
            collection, _v, _p = self._pool_row(cur, pool_version)
            rows = cur.execute(
                "SELECT topic_id, doc_id, priority_rank FROM pool_entries WHERE pool_version = ? "
                "ORDER BY topic_id, priority_rank, doc_id",
                [pool_version],
            ).fetchall()
        return collection, [PoolItem(t, d, int(r)) for t, d, r in rows]

    def judging_pools(self) -> list[dict[str, Any]]:
        """Pool versions with their collection, parent, size and creation time, newest first."""
        with self.connection("list pools") as cur:
            rows = cur.execute(
                "SELECT pool_version, collection, parent_version, depth, n_topics, n_entries, runs, created_at "
                "FROM pools ORDER BY created_at DESC, pool_version"
            ).fetchall()
        keys = ("pool_version", "collection", "parent_version", "depth", "n_topics", "n_entries", "runs", "created_at")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    # -- assignments ------------------------------------------------------------

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
        with self.transaction(f"assign {pool_version}") as cur:
            self._require_lead(cur, lead, "assign")
            collection, _v, _p = self._pool_row(cur, pool_version)
            pooled = {
                (t, d)
                for t, d in cur.execute(
                    "SELECT topic_id, doc_id FROM pool_entries WHERE pool_version = ?", [pool_version]
                ).fetchall()
            }
            cols: dict[str, list[Any]] = {"topic_id": [], "doc_id": [], "assessor": [], "position": []}
            for assessor, items in plan.items():
                self._user(cur, assessor)
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
        """An assessor's queue in judging order, with a judged flag per entry.

        Positions are renumbered 1..n in stored order (gaps cannot occur, but
        the UI relies on a dense numbering).
        """
        with self.connection("read queue") as cur:
            rows = cur.execute(
                "SELECT a.pool_version, a.collection, a.topic_id, a.doc_id, "
                "       EXISTS (SELECT 1 FROM judgments j WHERE j.collection = a.collection "
                "               AND j.topic_id = a.topic_id AND j.doc_id = a.doc_id "
                "               AND j.assessor = a.assessor) AS judged "
                "FROM assignments a WHERE a.assessor = ? ORDER BY a.position, a.assignment_id",
                [assessor],
            ).fetchall()
        return [QueueEntry(i, p, c, t, d, bool(j)) for i, (p, c, t, d, j) in enumerate(rows, 1)]

    def judging_view(self, assessor: str, position: int) -> JudgingView | None:
        """What the judging screen shows at a queue position (blind: no run,
        rank, score or other assessor's grade), or None past the queue's end.

        Raises:
            ValidationError: position < 1.
        """
        if position < 1:
            raise ValidationError(f"queue position must be >= 1, found {position}")
        with self.connection("read document to judge") as cur:
            n = _one(cur.execute("SELECT count(*) FROM assignments WHERE assessor = ?", [assessor]))[0]
            row = _one(cur.execute(
                "SELECT a.pool_version, a.collection, a.topic_id, a.doc_id, p.collection_version "
                "FROM assignments a JOIN pools p ON p.pool_version = a.pool_version "
                "WHERE a.assessor = ? ORDER BY a.position, a.assignment_id LIMIT 1 OFFSET ?",
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
        )

    # -- judgments --------------------------------------------------------------

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
                return self._insert_judgment(j, collection, pool_version, save_token)
            except StoreLockedError:
                raise
            except StoreError:
                if save_token is None or attempt == 19:
                    raise
                time.sleep(0.005 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def _insert_judgment(
        self, j: Judgment, collection: str, pool_version: str, save_token: str | None
    ) -> SavedJudgment:
        with self.transaction("save judgment") as cur:
            token = save_token
            if save_token is not None and _one(cur.execute(
                "SELECT judgment_id FROM judgments WHERE save_token = ?", [save_token]
            )) is not None:
                latest = _one(cur.execute(
                    "SELECT judgment_id, grade, unsure FROM judgments WHERE collection = ? AND topic_id = ? "
                    "AND doc_id = ? AND assessor = ? ORDER BY judgment_id DESC LIMIT 1",
                    [collection, j.topic_id, j.doc_id, j.assessor],
                ))
                if latest is not None:
                    held_grade = None if latest[1] is None else int(latest[1])
                    if (held_grade, bool(latest[2])) == (j.grade, bool(j.unsure)):
                        return SavedJudgment(int(latest[0]), False, held_grade, bool(latest[2]))
                    token = f"{save_token}#{int(latest[0])}"  # a correction back to an earlier grade
            user = self._user(cur, j.assessor)
            if j.grade is not None:
                self._rubric(cur, collection).check(j.grade)
            if not _one(cur.execute(
                "SELECT 1 FROM topics WHERE collection = ? AND topic_id = ?", [collection, j.topic_id]
            )):
                known = [r[0] for r in cur.execute(
                    "SELECT topic_id FROM topics WHERE collection = ?", [collection]).fetchall()]
                raise UnknownNameError(f"topic of collection {collection!r}", j.topic_id, known)
            row = _one(cur.execute(
                "INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade, unsure, note, "
                "duration_ms, pool_version, save_token) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING judgment_id",
                [collection, j.topic_id, j.doc_id, user.name, j.grade, bool(j.unsure), j.note,
                 int(j.duration_ms), pool_version, token],
            ))
        return SavedJudgment(int(row[0]), True, j.grade, bool(j.unsure))

    def _lineage_filter(self, cur: Any, pool_version: str | None) -> tuple[str, list[Any]]:
        if pool_version is None:
            return "", []
        lineage = self._lineage(cur, pool_version)
        marks = ", ".join("?" for _ in lineage)
        return (
            f" AND (topic_id, doc_id) IN (SELECT topic_id, doc_id FROM pool_entries WHERE pool_version IN ({marks}))",
            list(lineage),
        )

    def current_judgments(self, collection: str, pool_version: str | None = None) -> list[StoredJudgment]:
        """Each assessor's latest judgment per document.

        Args:
            collection: collection name.
            pool_version: restrict to documents of this pool version and its
                ancestors; None for every judged document of the collection.

        Returns:
            ``StoredJudgment`` rows sorted by (topic_id, doc_id, assessor).

        Raises:
            UnknownNameError: unknown pool version.
        """
        with self.connection("read current judgments") as cur:
            where, params = self._lineage_filter(cur, pool_version)
            rows = cur.execute(
                f"SELECT {_JUDGMENT_COLUMNS} FROM current_judgments WHERE collection = ?{where} "
                "ORDER BY topic_id, doc_id, assessor",
                [collection, *params],
            ).fetchall()
        return [StoredJudgment(*r) for r in rows]

    def judgment_history(
        self, collection: str, topic_id: str, doc_id: str, assessor: str | None = None
    ) -> list[StoredJudgment]:
        """Every save on a document (optionally one assessor's), oldest first."""
        sql = f"SELECT {_JUDGMENT_COLUMNS} FROM judgments WHERE collection = ? AND topic_id = ? AND doc_id = ?"
        params: list[Any] = [collection, topic_id, doc_id]
        if assessor is not None:
            sql += " AND assessor = ?"
            params.append(assessor)
        with self.connection("read judgment history") as cur:
            rows = cur.execute(sql + " ORDER BY judgment_id", params).fetchall()
        return [StoredJudgment(*r) for r in rows]

    def count_judgments(self, collection: str | None = None) -> int:
        """Number of saves (rows of ``judgments``), all history included."""
        with self.connection("count judgments") as cur:
            if collection is None:
                return int(_one(cur.execute("SELECT count(*) FROM judgments"))[0])
            return int(
                _one(cur.execute("SELECT count(*) FROM judgments WHERE collection = ?", [collection]))[0]
            )

    # -- adjudication and final grades -----------------------------------------

    def adjudicate(
        self,
        collection: str,
        topic_id: str,
        doc_id: str,
        grade: int,
        *,
        lead: str,
        rationale: str = "",
        pool_version: str = "",
    ) -> int:
        """Record a lead's final grade for a document (append-only).

        Returns:
            The ``adjudication_id``.

        Raises:
            PermissionDeniedError: ``lead`` is not a lead.
            ValidationError: grade not on the collection's rubric.
        """
        with self.transaction("adjudicate") as cur:
            self._require_lead(cur, lead, "adjudicate")
            self._rubric(cur, collection).check(grade)
            row = _one(cur.execute(
                "INSERT INTO adjudications (collection, topic_id, doc_id, grade, rationale, lead, pool_version) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING adjudication_id",
                [collection, topic_id, doc_id, int(grade), rationale, lead, pool_version],
            ))
        return int(row[0])

    def current_adjudications(
        self, collection: str, pool_version: str | None = None
    ) -> dict[ItemKey, StoredAdjudication]:
        """The latest adjudication per document, keyed by (topic_id, doc_id)."""
        with self.connection("read adjudications") as cur:
            where, params = self._lineage_filter(cur, pool_version)
            rows = cur.execute(
                f"SELECT {_ADJ_COLUMNS} FROM current_adjudications WHERE collection = ?{where}",
                [collection, *params],
            ).fetchall()
        return {(r[2], r[3]): StoredAdjudication(*r) for r in rows}

    def item_grades(
        self, collection: str, pool_version: str | None = None
    ) -> dict[ItemKey, dict[str, int | None]]:
        """(topic_id, doc_id) -> assessor -> current grade (None = unsure)."""
        out: dict[ItemKey, dict[str, int | None]] = {}
        for j in self.current_judgments(collection, pool_version):
            out.setdefault((j.topic_id, j.doc_id), {})[j.assessor] = j.grade
        return out

    def final_grades_detail(self, pool_version: str, rule: str) -> FinalGrades:
        """Final grades of a pool version's lineage, with how each was decided.

        Raises:
            UnknownNameError: unknown pool version or rule.
        """
        get_rule(rule)
        with self.connection("read pool") as cur:
            collection, _v, _p = self._pool_row(cur, pool_version)
        grades = self.item_grades(collection, pool_version)
        adj = {k: a.grade for k, a in self.current_adjudications(collection, pool_version).items()}
        return final_grades(grades, adj, rule)

    def final_grades(self, collection: str, pool_version: str, rule: str) -> dict[str, dict[str, int]]:
        """topic_id -> doc_id -> final grade over a pool version and its ancestors.

        Args:
            collection: the pool's collection (checked).
            pool_version: the pool version.
            rule: final-grade rule name (``median``, ``majority``, ``max``, ``min``
                or the canonical ``adjudicated>unanimous>...`` form).

        Raises:
            UnknownNameError: unknown pool version or rule.
            ValidationError: the pool belongs to another collection.
        """
        with self.connection("read pool") as cur:
            actual, _v, _p = self._pool_row(cur, pool_version)
        if actual != collection:
            raise ValidationError(
                f"pool version {pool_version!r} belongs to collection {actual!r}, not {collection!r}"
            )
        return self.final_grades_detail(pool_version, rule).qrels

    def proposed_qrels(
        self, pool_version: str, rule: str, parent_version: str | None = None
    ) -> tuple[dict[str, dict[str, int]], FinalGrades]:
        """What ``publish_qrels`` would freeze: the parent's entries (if any)
        overlaid with the final grades of the pool lineage."""
        fg = self.final_grades_detail(pool_version, rule)
        merged: dict[str, dict[str, int]] = {}
        if parent_version is not None:
            for t, docs in self.get_qrels(parent_version).items():  # type: ignore[attr-defined]
                merged[t] = dict(docs)
        for t, docs in fg.qrels.items():
            merged.setdefault(t, {}).update(docs)
        return merged, fg

    def publish_qrels(
        self,
        name: str,
        pool_version: str,
        *,
        rule: str,
        parent_version: str | None = None,
        created_by: str,
        note: str = "",
    ) -> QrelsVersionInfo:
        """Freeze the final grades of a pool version into an immutable qrels version.

        The entries are the final grades (``rule``) of every document of the
        pool version and its ancestors that has a current judgment or
        adjudication; with ``parent_version``, the parent's entries overlaid
        with those grades (see the module docstring).

        Args:
            name: the new qrels version's name (unique).
            pool_version: the pool version judged.
            rule: final-grade rule; its canonical name is recorded.
            parent_version: the qrels version this one revises (same collection).
            created_by: the publishing lead (role checked).
            note: free text recorded with the version.

        Returns:
            The new version's ``QrelsVersionInfo`` (counts, content hash, time).

        Raises:
            PermissionDeniedError: ``created_by`` is not a lead.
            DuplicateNameError: ``name`` is taken.
            UnknownNameError: unknown pool version, rule or parent version.
            ValidationError: nothing to publish.
        """
        canonical = get_rule(rule).name
        with self.connection("publish: check lead") as cur:
            self._require_lead(cur, created_by, "publish")
            collection, _v, _p = self._pool_row(cur, pool_version)
        qrels, fg = self.proposed_qrels(pool_version, canonical, parent_version)
        if not any(qrels.values()):
            raise ValidationError(
                f"publish {name!r}: pool version {pool_version!r} has no judged documents yet; judge some first"
            )
        summary = (
            f"{fg.count('unanimous')} unanimous, {fg.count('adjudicated')} adjudicated, "
            f"{fg.count('fallback')} by fallback, {len(fg.unresolved)} unresolved (unsure only)"
        )
        return self.create_qrels_version(  # type: ignore[attr-defined,no-any-return]
            name,
            collection,
            qrels,
            origin="published",
            rule=canonical,
            parent_version=parent_version,
            pool_version=pool_version,
            created_by=created_by,
            note=(note + "; " if note else "") + summary,
        )

    def qrels_diff(self, old_version: str | None, new_version: str) -> QrelsDiff:
        """Entries added, changed and removed from ``old_version`` (None = empty) to ``new_version``.

        Raises:
            UnknownNameError: unknown qrels version.
        """
        new = self.get_qrels(new_version)  # type: ignore[attr-defined]
        old = self.get_qrels(old_version) if old_version else {}  # type: ignore[attr-defined]
        return diff_qrels(old, new)

    # -- overview ---------------------------------------------------------------

    def pool_judging_progress(self, pool_version: str) -> list[PoolTopicProgress]:
        """Per topic of a pool version's lineage: pooled, assigned, judged and
        multiply-judged document counts, topics sorted by id.

        Raises:
            UnknownNameError: unknown pool version.
        """
        with self.connection("read pool progress") as cur:
            collection, _v, _p = self._pool_row(cur, pool_version)
            lineage = self._lineage(cur, pool_version)
            marks = ", ".join("?" for _ in lineage)
            rows = cur.execute(
                f"""
                WITH pooled AS (
                    SELECT DISTINCT topic_id, doc_id FROM pool_entries WHERE pool_version IN ({marks})),
                assigned AS (
                    SELECT DISTINCT topic_id, doc_id FROM assignments WHERE collection = ?),
                judged AS (
                    SELECT topic_id, doc_id, count(*) AS n FROM current_judgments
                    WHERE collection = ? GROUP BY topic_id, doc_id)
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
        from workbench.judging.queue import topic_order

        by_topic = {r[0]: PoolTopicProgress(r[0], *map(int, r[1:])) for r in rows}
        return [by_topic[t] for t in topic_order(by_topic)]

    def pool_run_contributions(self, pool_version: str) -> list[tuple[str, int, int]]:
        """Per run pooled into a pool version: (run_name, documents contributed,
        documents only this run contributed), sorted by run name. Lead-only
        information: never shown to assessors."""
        with self.connection("read pool provenance") as cur:
            self._pool_row(cur, pool_version)
            rows = cur.execute(
                """
                WITH prov AS (SELECT topic_id, doc_id, run_name FROM pool_provenance WHERE pool_version = ?),
                     solo AS (SELECT topic_id, doc_id FROM prov GROUP BY topic_id, doc_id HAVING count(*) = 1)
                SELECT p.run_name, count(*),
                       count(*) FILTER (WHERE (p.topic_id, p.doc_id) IN (SELECT topic_id, doc_id FROM solo))
                FROM prov p GROUP BY p.run_name ORDER BY p.run_name
                """,
                [pool_version],
            ).fetchall()
        return [(r[0], int(r[1]), int(r[2])) for r in rows]


def users_of(rows: Iterable[UserInfo], role: str) -> list[str]:
    """Names of the users having a role, sorted."""
    return sorted(u.name for u in rows if u.role == role)
