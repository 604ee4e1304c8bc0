"""Topic sets (saved and read by ``store.evaluations``): named, versioned lists of topics.

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
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from workbench.errors import ValidationError
from workbench.store.collection_rows import shown_id

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


TOPIC_SET_COLUMNS = "name, version, collection, protected, n_topics, content_hash, source, description, created_at"


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
