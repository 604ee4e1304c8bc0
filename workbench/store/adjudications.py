"""The store's adjudications and final grades (``store.adjudications``).

Adjudications are append-only like judgments (view ``current_adjudications``).
The final grade of a document is derived from the current judgments and
adjudications with a named rule (``workbench.judging.adjudication``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from workbench.errors import ValidationError
from workbench.judging.adjudication import FinalGrades, add_model_grades, final_grades, get_rule
from workbench.judging.log import JudgmentLog
from workbench.store._rows import ItemKey, _one
from workbench.store.core import Gateway
from workbench.store.pool_rows import lineage_filter, pool_row
from workbench.store.rubrics import read_rubric
from workbench.store.users import require_lead


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



class Adjudications:
    """A lead's final grades and the rule-derived final grades of a pool lineage (``store.adjudications``).

    The people's and models' grades come from the judgment log, read through its
    interface (``JudgmentLog.current_judgments`` and ``model_judgments``).

    Args:
        gateway: the store's gateway (leases and transactions).
        judgments: the judgment log (``store.judgments``).
    """

    def __init__(self, gateway: Gateway, judgments: JudgmentLog) -> None:
        self._gateway = gateway
        self._judgments = judgments

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
        with self._gateway.transaction("adjudicate") as cur:
            require_lead(cur, lead, "adjudicate")
            rubric = read_rubric(cur, collection)
            rubric.check(grade)
            row = _one(cur.execute(
                "INSERT INTO adjudications (collection, topic_id, doc_id, grade, rationale, lead, pool_version, "
                "rubric_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING adjudication_id",
                [collection, topic_id, doc_id, int(grade), rationale, lead, pool_version, rubric.version_id],
            ))
        return int(row[0])

    def adjudicate_many(
        self,
        collection: str,
        items: Sequence[tuple[str, str, int, str]],
        *,
        lead: str,
        pool_version: str = "",
    ) -> int:
        """Record several final grades at once (e.g. "accept the suggestions"):
        all of them in one transaction, or none.

        Args:
            collection: the collection.
            items: (topic_id, doc_id, grade, rationale) per document.
            lead: the lead deciding (role checked).
            pool_version: the pool version decided under.

        Returns:
            The number of adjudications recorded.

        Raises:
            PermissionDeniedError: ``lead`` is not a lead.
            ValidationError: a grade not on the collection's rubric (nothing is recorded).
        """
        with self._gateway.transaction(f"adjudicate {len(items)} documents") as cur:
            require_lead(cur, lead, "adjudicate")
            rubric = read_rubric(cur, collection)
            for _t, _d, grade, _r in items:
                rubric.check(grade)
            cur.executemany(
                "INSERT INTO adjudications (collection, topic_id, doc_id, grade, rationale, lead, pool_version) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [[collection, t, d, int(g), r, lead, pool_version] for t, d, g, r in items],
            )
        return len(items)

    def current_adjudications(
        self, collection: str, pool_version: str | None = None
    ) -> dict[ItemKey, StoredAdjudication]:
        """The latest adjudication per document, keyed by (topic_id, doc_id)."""
        with self._gateway.connection("read adjudications") as cur:
            where, params = lineage_filter(cur, pool_version)
            rows = cur.execute(
                f"SELECT {_ADJ_COLUMNS} FROM current_adjudications WHERE collection = ?{where}",
                [collection, *params],
            ).fetchall()
        return {(r[2], r[3]): StoredAdjudication(*r) for r in rows}

    def item_grades(
        self, collection: str, pool_version: str | None = None
    ) -> dict[ItemKey, dict[str, int | None]]:
        """(topic_id, doc_id) -> person assessor -> current grade (None = unsure); model
        assessors are left out (``model_grades``)."""
        out: dict[ItemKey, dict[str, int | None]] = {}
        for j in self._judgments.current_judgments(collection, pool_version):
            out.setdefault((j.topic_id, j.doc_id), {})[j.assessor] = j.grade
        return out

    def model_grades(self, collection: str, pool_version: str | None = None) -> dict[ItemKey, dict[str, int]]:
        """(topic_id, doc_id) -> model assessor -> current grade."""
        out: dict[ItemKey, dict[str, int]] = {}
        for j in self._judgments.model_judgments(collection, pool_version):
            if j.grade is not None:
                out.setdefault((j.topic_id, j.doc_id), {})[j.assessor] = j.grade
        return out

    def final_grades_detail(self, pool_version: str, rule: str, *, include_model: bool = False) -> FinalGrades:
        """Final grades of a pool version's lineage, with how each was decided.

        Args:
            pool_version: the pool version (its ancestors included).
            rule: final-grade rule name.
            include_model: documents no person judged take model assessors'
                grades (decision ``model``; ``add_model_grades``).

        Raises:
            UnknownNameError: unknown pool version or rule.
        """
        return self.final_grades_and_models(pool_version, rule, include_model=include_model)[0]

    def final_grades_and_models(
        self, pool_version: str, rule: str, *, include_model: bool
    ) -> tuple[FinalGrades, dict[str, int]]:
        """``final_grades_detail`` and, with ``include_model``, model assessor -> the entries it supplied.

        Raises:
            UnknownNameError: unknown pool version or rule.
        """
        get_rule(rule)
        with self._gateway.connection("read pool") as cur:
            collection, _v, _p = pool_row(cur, pool_version)
        grades = self.item_grades(collection, pool_version)
        adj = {k: a.grade for k, a in self.current_adjudications(collection, pool_version).items()}
        fg = final_grades(grades, adj, rule)
        if not include_model:
            return fg, {}
        return add_model_grades(fg, set(grades), self.model_grades(collection, pool_version), rule)

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
        with self._gateway.connection("read pool") as cur:
            actual, _v, _p = pool_row(cur, pool_version)
        if actual != collection:
            raise ValidationError(
                f"pool version {pool_version!r} belongs to collection {actual!r}, not {collection!r}"
            )
        return self.final_grades_detail(pool_version, rule).qrels
