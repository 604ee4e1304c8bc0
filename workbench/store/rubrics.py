"""The store's rubrics (``store.rubrics``): the grade scale of each collection,
and the versions of rubrics defined from files.

A collection's rubric is a name (``meta`` key ``rubric:<collection>``): a
built-in (``workbench.rubric.RUBRICS``) or a rubric defined with
``define_rubric``, whose **latest** version applies. Defining a rubric again
with other content stores a new version (1, 2, ...); the same content is
``unchanged``. Each judgment and adjudication records the ``version_id`` of
the rubric it was checked against (``trec-dl@2``, ``default@builtin-<hash>``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from workbench.errors import UnknownNameError, ValidationError
from workbench.rubric import RUBRICS, Rubric, get_rubric, rubric_from_definition
from workbench.store._rows import _one
from workbench.store.core import Gateway
from workbench.store.users import require_lead


@dataclass(frozen=True, slots=True)
class RubricVersion:
    """A stored version of a file-defined rubric.

    Attributes:
        rubric: the rubric, labelled with its version.
        version: 1, 2, ...
        content_hash: sha256 of its canonical definition.
        source_file: the file it was defined from.
        created_by: the lead who defined it.
        created_at: when.
    """

    rubric: Rubric
    version: int
    content_hash: str
    source_file: str
    created_by: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class RubricDefinition:
    """What ``define_rubric`` did.

    Attributes:
        status: ``created`` (version 1), ``new_version`` or ``unchanged``.
        current: the version now in force.
        previous: the version before a ``new_version`` (None otherwise).
        collections: collections judged on this rubric (they use the new version from now on).
    """

    status: Literal["created", "new_version", "unchanged"]
    current: RubricVersion
    previous: RubricVersion | None
    collections: tuple[str, ...]


def read_rubric(cur: Any, collection: str) -> Rubric:
    """The rubric a collection is judged on, inside a lease (``Rubrics.collection_rubric``)."""
    row = _one(cur.execute("SELECT value FROM meta WHERE key = ?", [f"rubric:{collection}"]))
    return rubric_named_in_meta(cur, collection, row[0] if row else None)


def rubric_named_in_meta(cur: Any, collection: str, name: str | None) -> Rubric:
    """The collection's rubric given the name stored in ``meta`` for it (None: none set)."""
    if name is not None:
        return named_rubric(cur, name)
    return get_rubric("cranfield" if "cranfield" in collection.lower() else "default")


def named_rubric(cur: Any, name: str) -> Rubric:
    """A built-in rubric, or the latest stored version of a defined one."""
    if name in RUBRICS:
        return get_rubric(name)
    latest = latest_rubric_version(cur, name)
    if latest is None:
        known = set(RUBRICS) | {r[0] for r in cur.execute("SELECT DISTINCT rubric FROM rubric_versions").fetchall()}
        raise UnknownNameError("rubric", name, known)
    return latest.rubric


def latest_rubric_version(cur: Any, name: str) -> RubricVersion | None:
    """The latest stored version of a defined rubric (None for a built-in or unknown name)."""
    row = _one(cur.execute(
        "SELECT version, content_hash, definition, source_file, created_by, created_at FROM rubric_versions "
        "WHERE rubric = ? ORDER BY version DESC LIMIT 1", [name]))
    return None if row is None else _version(row)


def _check_scale(cur: Any, collection: str, chosen: Rubric) -> None:
    """Refuse ``chosen`` while a current grade of the collection is off its scale (ValidationError)."""
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


class Rubrics:
    """The rubric of each collection; setting one is a lead's action (``store.rubrics``).

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def collection_rubric(self, collection: str) -> Rubric:
        """The grade scale judged on for a collection.

        A lead's choice (``set_collection_rubric``) wins (a defined rubric in its
        latest version); otherwise ``cranfield`` for a collection whose name
        contains "cranfield", else ``default``.
        """
        with self._gateway.connection("read rubric") as cur:
            return read_rubric(cur, collection)

    def rubric_versions(self, name: str) -> list[RubricVersion]:
        """Every stored version of a defined rubric, oldest first (empty for a built-in or unknown name)."""
        with self._gateway.connection("read rubric versions") as cur:
            rows = cur.execute(
                "SELECT version, content_hash, definition, source_file, created_by, created_at FROM rubric_versions "
                "WHERE rubric = ? ORDER BY version", [name]).fetchall()
        return [_version(r) for r in rows]

    def list_rubrics(self) -> list[Rubric]:
        """The built-in rubrics, then the latest version of every defined rubric, by name."""
        with self._gateway.connection("list rubrics") as cur:
            names = [r[0] for r in cur.execute("SELECT DISTINCT rubric FROM rubric_versions ORDER BY 1").fetchall()]
            defined = [named_rubric(cur, n) for n in names]
        return [RUBRICS[n] for n in sorted(RUBRICS)] + defined

    def rubric_collections(self, name: str) -> list[str]:
        """Collections whose chosen rubric is ``name``, sorted."""
        with self._gateway.connection("read rubric use") as cur:
            rows = cur.execute("SELECT key FROM meta WHERE key LIKE 'rubric:%' AND value = ? ORDER BY key",
                               [name]).fetchall()
        return [r[0][len("rubric:"):] for r in rows]

    def define_rubric(self, rubric: Rubric, *, lead: str, source_file: str = "") -> RubricDefinition:
        """Store a rubric defined from a file (a lead's action; one transaction).

        Args:
            rubric: the validated rubric (``formats.rubric_toml``); its ``version`` is ignored.
            lead: the lead defining it (role checked).
            source_file: the file it came from (recorded).

        Returns:
            ``RubricDefinition``: ``created``, ``new_version`` (the content
            changed) or ``unchanged`` (same content hash as the latest version).

        Raises:
            PermissionDeniedError: ``lead`` is not a lead.
            ValidationError: a built-in rubric's name, or a new version whose
                scale leaves out a grade that current judgments or
                adjudications of a collection judged on this rubric still hold.
        """
        if rubric.name in RUBRICS:
            raise ValidationError(f"rubric {rubric.name!r} is built in; give the file another name")
        digest = rubric.content_hash()
        with self._gateway.transaction(f"define rubric {rubric.name}") as cur:
            require_lead(cur, lead, "define a rubric")
            latest = latest_rubric_version(cur, rubric.name)
            collections = tuple(r[0][len("rubric:"):] for r in cur.execute(
                "SELECT key FROM meta WHERE key LIKE 'rubric:%' AND value = ? ORDER BY key", [rubric.name]).fetchall())
            if latest is not None and latest.content_hash == digest:
                return RubricDefinition("unchanged", latest, None, collections)
            for collection in collections:
                _check_scale(cur, collection, rubric)
            version = 1 if latest is None else latest.version + 1
            cur.execute(
                "INSERT INTO rubric_versions (rubric, version, content_hash, definition, source_file, created_by) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [rubric.name, version, digest, json.dumps(rubric.definition(), ensure_ascii=False), source_file, lead])
            current = latest_rubric_version(cur, rubric.name)
        assert current is not None
        return RubricDefinition("created" if latest is None else "new_version", current, latest, collections)

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
        with self._gateway.transaction(f"set rubric of {collection}") as cur:
            chosen = named_rubric(cur, rubric)
            require_lead(cur, lead, "set rubric")
            if not _one(cur.execute("SELECT 1 FROM collections WHERE collection = ?", [collection])):
                known = [r[0] for r in cur.execute("SELECT collection FROM collections").fetchall()]
                raise UnknownNameError("collection", collection, known)
            _check_scale(cur, collection, chosen)
            cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [f"rubric:{collection}", chosen.name])
        return chosen


def _version(row: Any) -> RubricVersion:
    version, digest, definition, source_file, created_by, created_at = row
    rubric = rubric_from_definition(json.loads(definition), str(version))
    return RubricVersion(rubric, int(version), digest, source_file, created_by, created_at)
