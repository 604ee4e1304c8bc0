"""Store methods for topic sets (a mixin of ``LabelStore``): named, versioned lists of topics.

A topic set is a name (``smoke``, ``release``) whose content lives in immutable
versions 1, 2, ...: saving the same topics again is a no-op (``unchanged``), a
different list becomes the next version. A *protected* set (the held-out
release set) records every use (``score``, ``compare``, ``gate``) in
``topic_set_uses``, so repeated tuning against it is visible
(``workbench evaluations list``).

References: ``NAME`` is the latest version, ``NAME@N`` version N.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from workbench.errors import UnknownNameError, ValidationError
from workbench.ranking import natural_key
from workbench.store.collection_rows import require_collection, shown_id
from workbench.store.core import StoreCore

TOPIC_SET_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
SaveStatus = Literal["created", "new_version", "unchanged"]


def topic_set_hash(topic_ids: Iterable[str]) -> str:
    """sha256 (hex) over the sorted distinct topic ids, one per line.

    Example:
        >>> topic_set_hash(["2", "1", "1"]) == hashlib.sha256(b"1\\n2\\n").hexdigest()
        True
    """
    h = hashlib.sha256()
    for t in sorted(set(topic_ids)):
        h.update(f"{t}\n".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class TopicSetInfo:
    """One version of a topic set.

    Attributes:
        name: the set's name.
        version: 1, 2, ...
        collection: the collection its ids belong to ("" = not tied to one).
        protected: whether its uses are recorded.
        n_topics: topics in it.
        content_hash: sha256 over the sorted ids.
        source: the file it was read from.
        description: free text.
        created_at: when this version was saved.
    """

    name: str
    version: int
    collection: str
    protected: bool
    n_topics: int
    content_hash: str
    source: str
    description: str
    created_at: datetime

    @property
    def ref(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class TopicSetUse:
    """A recorded use of a topic set.

    Attributes:
        name / version: the set used.
        command: ``score``, ``compare`` or ``gate``.
        runs: the runs scored.
        qrels_version: the qrels scored against.
        outcome: the gate's verdict, or the evaluation ids recorded.
        evaluator_version / git_commit: what produced the numbers.
        used_at: when.
    """

    name: str
    version: int
    command: str
    runs: tuple[str, ...]
    qrels_version: str
    outcome: str
    evaluator_version: str
    git_commit: str
    used_at: datetime


_INFO = "name, version, collection, protected, n_topics, content_hash, source, description, created_at"


def parse_ref(ref: str) -> tuple[str, int | None]:
    """Split ``NAME`` or ``NAME@N`` into (name, version or None).

    Raises:
        ValidationError: a malformed reference.

    Example:
        >>> parse_ref("release@2"), parse_ref("smoke")
        (('release', 2), ('smoke', None))
    """
    name, _, version = ref.partition("@")
    if not TOPIC_SET_NAME.fullmatch(name) or (version and not version.isdigit()):
        raise ValidationError(f"expected a topic set NAME or NAME@VERSION (e.g. release@2), found {shown_id(ref)}.")
    return name, int(version) if version else None


def check_topic_set_name(name: str) -> str:
    """``name`` if it can be a topic set name (1 to 64 letters, digits, '_', '.' or '-').

    Raises:
        ValidationError: naming the value and the rule.
    """
    if not TOPIC_SET_NAME.fullmatch(name):
        raise ValidationError(
            f"expected a topic set name of 1 to 64 letters, digits, '_', '.' or '-', found {shown_id(name)}.")
    return name


class TopicSetsMixin(StoreCore):
    """Domain verbs on topic sets; every multi-row change is one ``transaction()``."""

    def save_topic_set(
        self,
        name: str,
        topic_ids: Sequence[str],
        *,
        collection: str = "",
        protected: bool = False,
        source: str = "",
        description: str = "",
    ) -> tuple[TopicSetInfo, SaveStatus]:
        """Store a topic set's content as its next version (or nothing when unchanged).

        Args:
            name: the set's name (letters, digits, ``_ . -``; 1-64 characters).
            topic_ids: its topics (repeats are dropped).
            collection: check the ids against this collection's topics ("" = no check).
            protected: record every use of this version.
            source: the file it came from.
            description: free text.

        Returns:
            (the version now current, ``created`` | ``new_version`` | ``unchanged``).
            Unchanged also when only ``protected``/``description`` differ: a
            version's content is what counts; use a new name to change them.

        Raises:
            ValidationError: a bad name, no topics, or a topic that is not a
                topic of ``collection``.
            UnknownNameError: unknown collection.
        """
        import pyarrow as pa

        check_topic_set_name(name)
        ids = sorted(set(topic_ids), key=natural_key)
        if not ids:
            raise ValidationError(f"topic set {name!r}: expected at least one topic id, found none.")
        digest = topic_set_hash(ids)
        with self.transaction(f"save topic set {name}") as cur:
            if collection:
                require_collection(cur, collection)
                known = {r[0] for r in cur.execute(
                    "SELECT topic_id FROM topics WHERE collection = ?", [collection]).fetchall()}
                unknown = [t for t in ids if t not in known]
                if unknown:
                    raise ValidationError(
                        f"topic set {name!r}: {len(unknown)} id(s) are not topics of collection {collection!r}, "
                        f"e.g. {shown_id(unknown[0])}; check the file or --collection.")
            last = cur.execute(f"SELECT {_INFO} FROM topic_sets WHERE name = ? ORDER BY version DESC LIMIT 1",
                               [name]).fetchall()
            if last and last[0][5] == digest:
                return TopicSetInfo(*last[0]), "unchanged"
            version = int(last[0][1]) + 1 if last else 1
            cur.execute("INSERT INTO topic_sets (name, version, collection, protected, n_topics, content_hash, "
                        "source, description) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [name, version, collection, protected, len(ids), digest, source, description])
            cur.register("wb_topic_set", pa.table({"topic_id": ids}))
            try:
                cur.execute("INSERT INTO topic_set_members SELECT ?, ?, topic_id FROM wb_topic_set", [name, version])
            finally:
                cur.unregister("wb_topic_set")
            row = cur.execute(f"SELECT {_INFO} FROM topic_sets WHERE name = ? AND version = ?",
                              [name, version]).fetchall()[0]
        return TopicSetInfo(*row), "new_version" if version > 1 else "created"

    def _topic_set_info(self, cur: Any, ref: str) -> TopicSetInfo:
        name, version = parse_ref(ref)
        rows = cur.execute(
            f"SELECT {_INFO} FROM topic_sets WHERE name = ? AND (? IS NULL OR version = ?) "
            "ORDER BY version DESC LIMIT 1", [name, version, version]).fetchall()
        if not rows:
            known = [f"{n}@{v}" for n, v in cur.execute("SELECT name, version FROM topic_sets").fetchall()]
            raise UnknownNameError("topic set", ref, known)
        return TopicSetInfo(*rows[0])

    def get_topic_set(self, ref: str) -> tuple[TopicSetInfo, tuple[str, ...]]:
        """A topic set version and its topics (natural order).

        Args:
            ref: ``NAME`` (latest version) or ``NAME@N``.

        Raises:
            UnknownNameError: no such set or version (lists the stored ones).
            ValidationError: a malformed reference.
        """
        with self.connection("read topic set") as cur:
            info = self._topic_set_info(cur, ref)
            ids = [r[0] for r in cur.execute(
                "SELECT topic_id FROM topic_set_members WHERE name = ? AND version = ?",
                [info.name, info.version]).fetchall()]
        return info, tuple(sorted(ids, key=natural_key))

    def list_topic_sets(self) -> list[TopicSetInfo]:
        """Every version of every topic set, by name then version."""
        with self.connection("list topic sets") as cur:
            rows = cur.execute(f"SELECT {_INFO} FROM topic_sets ORDER BY name, version").fetchall()
        return [TopicSetInfo(*r) for r in rows]

    def record_topic_set_use(
        self,
        info: TopicSetInfo,
        command: str,
        runs: Sequence[str],
        qrels_version: str,
        *,
        outcome: str = "",
        evaluator_version: str = "",
        git_commit: str = "",
    ) -> None:
        """Record one use of a topic set version (one row).

        Raises:
            StoreError: the write failed.
        """
        with self.transaction(f"record use of topic set {info.ref}") as cur:
            cur.execute("INSERT INTO topic_set_uses (name, version, command, runs, qrels_version, outcome, "
                        "evaluator_version, git_commit) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [info.name, info.version, command, json.dumps(list(runs)), qrels_version, outcome,
                         evaluator_version, git_commit])

    def list_topic_set_uses(self, name: str | None = None) -> list[TopicSetUse]:
        """Recorded uses, oldest first; of one set when ``name`` is given."""
        with self.connection("list topic set uses") as cur:
            rows = cur.execute(
                "SELECT name, version, command, runs, qrels_version, outcome, evaluator_version, git_commit, "
                "used_at FROM topic_set_uses WHERE ? IS NULL OR name = ? ORDER BY use_id", [name, name]).fetchall()
        return [TopicSetUse(r[0], int(r[1]), r[2], tuple(json.loads(r[3])), r[4], r[5], r[6], r[7], r[8])
                for r in rows]
