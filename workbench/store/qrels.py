"""The store's qrels versions (``store.qrels``): creating, publishing, reading and diffing them.

A *qrels version* is an immutable, named set of (topic, doc, grade) entries
of one collection, with its lineage: the collection version current when it
was created, an optional parent qrels version, an optional pool version, its
origin (``published`` from judgments, or ``imported`` from a file) and the
``rule`` that produced the grades (a final-grade policy, or an import's grade
mapping). Its content hash is::

    content_hash = sha256("".join(f"{topic}\\t{doc}\\t{grade}\\n"
                                  for (topic, doc) sorted by str))     (hex)

``n_relevant`` counts entries with grade >= 1. A version is written once, in
one transaction, and never changed; a taken name raises ``DuplicateNameError``.

Publishing a pool version: the final grades of every document of the pool
version **and its ancestors** (the pool lineage, root first) are derived from
the current judgments and adjudications with a named rule
(``workbench.judging.adjudication``); with a parent qrels version, the new
version is the parent's entries overlaid with those final grades. So
"qrels v2 (parent v1)" for a delta pool holds v1's judgments plus the delta's,
and a re-judged v1 document shows up as *changed* in the diff.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from workbench.errors import DuplicateNameError, StoreError, UnknownNameError, ValidationError
from workbench.hashing import qrels_content_hash
from workbench.judging.adjudication import (
    DecisionCounts,
    FinalGradeRule,
    FinalGrades,
    QrelsDiff,
    QrelsDiffCounts,
    get_rule,
)
from workbench.ranking import natural_key
from workbench.store.adjudications import Adjudications
from workbench.store.collection_rows import latest_version, missing_ids, require_collection
from workbench.store.collection_rows import shown_id as _shown
from workbench.store.core import Gateway
from workbench.store.model_assessors import PERSON_ASSESSOR
from workbench.store.pool_rows import lineage_filter, lineage_of, pool_row
from workbench.store.samples import sample_design_json
from workbench.store.users import require_lead
from workbench.text import check_stored_name
from workbench.types import Qrel

QrelsOrigin = Literal["published", "imported"]


@dataclass(frozen=True)
class QrelsVersionInfo:
    """Metadata of a qrels version (``qrels_versions`` row).

    Attributes:
        name: the qrels version name (unique).
        collection: the collection judged.
        collection_version: the collection's latest version when it was created.
        parent_version: the qrels version this one revises, or None.
        pool_version: the pool whose judgments it publishes, or None.
        origin: ``published`` or ``imported``.
        rule: the final-grade rule, or an import's grade mapping.
        source: the imported file, or "".
        n_topics: topics with at least one entry.
        n_entries: (topic, doc) entries.
        n_relevant: entries with grade >= 1.
        content_hash: see the module docstring.
        created_by: user or command that created it.
        note: free text.
        created_at: creation time.
        sample_design: for a version published from a sample pool (``workbench pool sample``), JSON of the
            pool version, its design, runs and collection version; "" otherwise. Its entries are the judged
            sampled documents: measures are estimated from them (``services.evaluation.sampled``).
    """

    name: str
    collection: str
    collection_version: str
    parent_version: str | None
    pool_version: str | None
    origin: str
    rule: str
    source: str
    n_topics: int
    n_entries: int
    n_relevant: int
    content_hash: str
    created_by: str
    note: str
    created_at: datetime
    sample_design: str = ""

    @property
    def is_sample(self) -> bool:
        """True for a version published from a sample pool."""
        return bool(self.sample_design)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``created_at`` as ISO 8601)."""
        d = {f: getattr(self, f) for f in self.__dataclass_fields__}
        d["created_at"] = self.created_at.isoformat()
        return d


@dataclass(frozen=True)
class QrelsCoverage:
    """How many qrels ids exist in a collection (checked before scoring).

    A low share usually means an id mismatch (case, a prefix such as
    ``doc_``), which would otherwise look like a retrieval failure.

    Attributes:
        n_found: distinct qrels doc ids present in the collection version.
        n_total: distinct doc ids in the qrels.
        share: ``n_found / n_total`` (1.0 when the qrels have no entries).
        missing_examples: up to 5 missing doc ids, sorted.
        n_topics_found: qrels topics that are topics of the collection.
        n_topics_total: topics in the qrels.
        missing_topic_examples: up to 5 qrels topic ids not in the collection, sorted.
        collection: the collection checked.
        collection_version: the version checked (the latest).
    """

    n_found: int
    n_total: int
    share: float
    missing_examples: tuple[str, ...]
    n_topics_found: int = 0
    n_topics_total: int = 0
    missing_topic_examples: tuple[str, ...] = ()
    collection: str = ""
    collection_version: str = ""

    def describe(self) -> str:
        """One line for people, e.g. ``qrels coverage: 1,837 of 1,837 doc ids (100.0%) ...``."""
        line = (
            f"qrels coverage: {self.n_found:,} of {self.n_total:,} doc ids ({100 * self.share:.1f}%) and "
            f"{self.n_topics_found:,} of {self.n_topics_total:,} topics are in collection "
            f"{self.collection!r} (version {self.collection_version[:12]})"
        )
        if self.missing_examples:
            line += f"; missing doc ids e.g. {', '.join(self.missing_examples)}"
        if self.missing_topic_examples:
            line += f"; missing topics e.g. {', '.join(self.missing_topic_examples)}"
        return line


_INFO_COLUMNS = (
    "qrels_version, collection, collection_version, parent_version, pool_version, origin, rule, source, "
    "n_topics, n_entries, n_relevant, content_hash, created_by, note, created_at, coalesce(sample_design, '')"
)


def check_qrels_name(name: str) -> str:
    """``name`` if it can be a qrels version name (it becomes the export's file name), by the rule of
    run and pool names (``workbench.text.check_stored_name``): no control character, no white space,
    no '/' or '\\', no leading '-'.

    Raises:
        ValidationError: naming the value and the rule.
    """
    return check_stored_name("qrels version name", name, " (it is the export's file name)")


_FINAL_SQL = """
WITH latest AS (SELECT topic_id, doc_id, arg_max_null(grade, judgment_id) AS grade,
                       arg_max_null(grade IS NOT NULL OR unsure, judgment_id) AS held
                FROM judgments WHERE collection = ? AND {person} GROUP BY topic_id, doc_id, assessor),
per AS (SELECT topic_id, doc_id, coalesce(list_sort(list(grade) FILTER (WHERE grade IS NOT NULL)), []) AS gs
        FROM latest WHERE held{where} GROUP BY topic_id, doc_id),
adj AS (SELECT topic_id, doc_id, grade FROM current_adjudications WHERE collection = ?{where}),
items AS (SELECT coalesce(p.topic_id, a.topic_id) AS topic_id, coalesce(p.doc_id, a.doc_id) AS doc_id,
                 coalesce(p.gs, []) AS gs, a.grade AS adjudicated
          FROM per p FULL OUTER JOIN adj a ON a.topic_id = p.topic_id AND a.doc_id = p.doc_id)
SELECT topic_id, doc_id,
       CASE WHEN adjudicated IS NOT NULL THEN adjudicated WHEN gs[1] = gs[-1] THEN gs[1]
            WHEN len(gs) > 1 THEN {fallback} END AS grade,
       CASE WHEN adjudicated IS NOT NULL THEN 'adjudicated' WHEN gs[1] = gs[-1] THEN 'unanimous'
            WHEN len(gs) > 1 THEN 'fallback' ELSE 'unresolved' END AS how
FROM items
"""
"""Final grades of a pool lineage in one query (``workbench.judging.adjudication.final_grades``:
adjudicated > unanimous > the rule's ``sql`` fallback; items with only unsure judgments
are ``unresolved``, grade NULL). Each person's state is the latest row per (topic, document,
assessor), as ``current_judgments`` defines it (``held``: a grade or an unsure mark); ``gs``
is an item's current integer grades, sorted: unanimous when its first equals its last. Two
grouped aggregates and no window over the judgments (1e6 items of 2e6 judgments: about
half the time of the windowed form it replaces)."""


class Qrels:
    """Qrels versions: created from a file or published from judgments, read, diffed (``store.qrels``).

    Every multi-row change is one transaction.

    Args:
        gateway: the store's gateway (leases and transactions).
        adjudications: the final grades a publication freezes (``store.adjudications``).
    """

    def __init__(self, gateway: Gateway, adjudications: Adjudications) -> None:
        self._gateway = gateway
        self._adjudications = adjudications

    def create_qrels_version(
        self,
        name: str,
        collection: str,
        qrels: Mapping[str, Mapping[str, int]],
        *,
        origin: QrelsOrigin,
        rule: str,
        source: str = "",
        parent_version: str | None = None,
        pool_version: str | None = None,
        created_by: str = "",
        note: str = "",
        model_inputs: Mapping[str, int] | None = None,
        export_file: str | None = None,
    ) -> QrelsVersionInfo:
        """Create an immutable qrels version in one transaction.

        Args:
            name: the new version's name (unique across the store, non-empty,
                no surrounding spaces).
            collection: the collection judged; its latest version is recorded.
            qrels: topic_id -> doc_id -> grade (integers; at least one entry).
            origin: ``published`` (from judgments) or ``imported`` (from a file).
            rule: how the grades were obtained (final-grade policy, or grade mapping).
            source: the imported file, if any.
            parent_version: an existing qrels version of the same collection this revises.
            pool_version: the pool version whose judgments are published.
            created_by: user or command.
            note: free text.
            model_inputs: model assessor -> entries whose grade came from it
                (``publish --include-model``; an empty mapping records that model
                grades were asked for and none was used; None = not asked).
            export_file: the file name in the labels folder the version is exported to
                (``<name>.qrels``), recorded in the same transaction (``qrels_exports``),
                so a version whose export never completed is known; None = not exported.

        Returns:
            The new version's ``QrelsVersionInfo``.

        Raises:
            DuplicateNameError: ``name`` is taken.
            UnknownNameError: unknown collection, parent version or pool version.
            ValidationError: bad name or origin, no entries, a non-integer
                grade, or a parent of another collection.
        """
        import pyarrow as pa

        check_version_name(name, origin)
        topics: list[str] = []
        docs: list[str] = []
        grades: list[int] = []
        for topic, entries in qrels.items():
            for doc, grade in entries.items():
                if isinstance(grade, bool) or not isinstance(grade, int):
                    raise ValidationError(
                        f"qrels {name!r}: expected an integer grade for topic {_shown(topic)} document {_shown(doc)}, found {grade!r}"
                    )
                if not -2147483648 <= grade <= 2147483647:
                    raise ValidationError(
                        f"qrels {name!r}: grade {grade} of topic {_shown(topic)} document {_shown(doc)} is out of range "
                        "(-2147483648..2147483647); use a grade of the rubric"
                    )
                if not topic or not doc or any(c.isspace() for c in topic + doc):
                    raise ValidationError(
                        f"qrels {name!r}: expected non-empty topic and doc ids without whitespace, "
                        f"found {_shown(topic)}/{_shown(doc)}; TREC formats cannot carry such ids"
                    )
                topics.append(topic)
                docs.append(doc)
                grades.append(grade)
        if not grades:
            raise ValidationError(f"qrels {name!r}: expected at least one entry, found none")
        n_topics = sum(1 for entries in qrels.values() if entries)
        n_relevant = sum(1 for g in grades if g >= 1)
        content_hash = qrels_content_hash(qrels)

        with self._gateway.transaction(f"create qrels version {name}") as cur:
            version, design = self._check_new_version(cur, name, collection, parent_version, pool_version)
            cur.execute(
                "INSERT INTO qrels_versions (qrels_version, collection, collection_version, parent_version, "
                "pool_version, origin, rule, source, n_topics, n_entries, n_relevant, content_hash, created_by, note, "
                "sample_design) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [name, collection, version, parent_version, pool_version, origin, rule, source,
                 n_topics, len(grades), n_relevant, content_hash, created_by, note, design],
            )
            cur.register(
                "wb_new_qrels",
                pa.table({"topic_id": topics, "doc_id": docs, "grade": pa.array(grades, pa.int32())}),
            )
            try:
                cur.execute(
                    "INSERT INTO qrels_entries SELECT ?, topic_id, doc_id, grade FROM wb_new_qrels", [name]
                )
            finally:
                cur.unregister("wb_new_qrels")
            for assessor, n in sorted((model_inputs or {}).items()):
                cur.execute("INSERT INTO qrels_model_inputs VALUES (?, ?, ?)", [name, assessor, int(n)])
            info = self._qrels_info(cur, name)
            if export_file is not None:
                self._record_export(cur, name, export_file)
        return info

    def _check_new_version(self, cur: Any, name: str, collection: str, parent_version: str | None,
                           pool_version: str | None) -> tuple[str, str]:
        """Inside the creating transaction: the collection exists, the name is free, the
        parent (same collection) and the pool version exist; a sample pool's version has no parent.
        Returns (the collection version, the sample design JSON or "")."""
        require_collection(cur, collection)
        if cur.execute("SELECT 1 FROM qrels_versions WHERE qrels_version = ?", [name]).fetchall():
            raise DuplicateNameError(
                f"qrels version {name!r} already exists and qrels versions are immutable; choose a new name"
            )
        if parent_version is not None:
            rows = cur.execute(
                "SELECT collection FROM qrels_versions WHERE qrels_version = ?", [parent_version]
            ).fetchall()
            if not rows:
                raise UnknownNameError("qrels version", parent_version, self._qrels_names(cur))
            if rows[0][0] != collection:
                raise ValidationError(
                    f"parent qrels version {parent_version!r} belongs to collection {rows[0][0]!r}, not {collection!r}"
                )
        if pool_version is not None and not cur.execute(
            "SELECT 1 FROM pools WHERE pool_version = ?", [pool_version]
        ).fetchall():
            known = [r[0] for r in cur.execute("SELECT pool_version FROM pools").fetchall()]
            raise UnknownNameError("pool version", pool_version, known)
        design = sample_design_json(cur, pool_version) if pool_version is not None else ""
        if design and parent_version is not None:
            raise ValidationError(
                f"qrels {name!r}: pool version {pool_version!r} is a sample; its qrels version holds the judged "
                f"sampled documents only (measures are estimated from them), so it takes no parent "
                f"({parent_version!r}); publish it without --parent")
        return str(latest_version(cur, collection)), design

    # -- reading --------------------------------------------------------------

    def _qrels_names(self, cur: Any) -> list[str]:
        return [r[0] for r in cur.execute("SELECT qrels_version FROM qrels_versions").fetchall()]

    def _qrels_info(self, cur: Any, name: str) -> QrelsVersionInfo:
        rows = cur.execute(
            f"SELECT {_INFO_COLUMNS} FROM qrels_versions WHERE qrels_version = ?", [name]
        ).fetchall()
        if not rows:
            raise UnknownNameError("qrels version", name, self._qrels_names(cur))
        return QrelsVersionInfo(*rows[0])

    def get_qrels_info(self, name: str) -> QrelsVersionInfo:
        """Metadata of a qrels version.

        Raises:
            UnknownNameError: no such version (the message lists the known ones).
        """
        with self._gateway.connection("read qrels info") as cur:
            return self._qrels_info(cur, name)

    def qrels_model_inputs(self, name: str) -> dict[str, int]:
        """Model assessor -> entries of a qrels version whose grade came from it
        (``publish --include-model``); empty for versions without model grades.

        Raises:
            UnknownNameError: unknown qrels version.
        """
        with self._gateway.connection("read qrels model inputs") as cur:
            self._qrels_info(cur, name)
            rows = cur.execute("SELECT assessor, n_entries FROM qrels_model_inputs WHERE qrels_version = ? "
                               "ORDER BY assessor", [name]).fetchall()
        return {a: int(n) for a, n in rows}

    def get_qrels(self, name: str) -> dict[str, dict[str, int]]:
        """The entries of a qrels version, checked against its content hash.

        Every read (for scoring, export, diff, publishing on a parent) recomputes
        the version's content hash in one DuckDB aggregate (sha256 over the
        sorted ``topic\tdoc\tgrade\n`` lines, as ``hashing.qrels_content_hash``)
        and compares it with the hash recorded when the version was written:
        versions are immutable, so a difference means the store was changed
        outside the workbench (e.g. an SQL ``UPDATE`` of a grade).

        Returns:
            topic_id -> doc_id -> grade; topics and docs in natural id order.

        Raises:
            UnknownNameError: no such version.
            StoreError: the entries no longer match the recorded content hash.
        """
        with self._gateway.connection("read qrels") as cur:
            info = self._qrels_info(cur, name)
            self._check_content_hash(cur, info)
            rows = cur.execute(
                "SELECT topic_id, doc_id, grade FROM qrels_entries WHERE qrels_version = ?", [name]
            ).fetchall()
        rows.sort(key=lambda r: (natural_key(r[0]), natural_key(r[1])))
        out: dict[str, dict[str, int]] = {}
        for topic, doc, grade in rows:
            out.setdefault(topic, {})[doc] = int(grade)
        return out

    def _check_content_hash(self, cur: Any, info: QrelsVersionInfo) -> None:
        found = stored_content_hash(cur, info.name)
        if found != info.content_hash:
            raise StoreError(
                f"{self._gateway.path}: qrels version {info.name!r} no longer matches its content hash (recorded "
                f"{info.content_hash[:12]}, its entries now hash to {found[:12]}): the store was changed outside "
                "the workbench. Nothing was read; restore the store from a backup, or import or publish the "
                "qrels again under a new name.")

    def relevant_topics(self, name: str, rel: int = 1) -> list[str]:
        """The topics of a qrels version with |R| > 0 (a grade >= ``rel``, negative grades never), natural
        order; one grouped query, no entries read into Python (the Scoreboard's run coverage). The
        content hash is not checked here: scoring reads the entries through ``get_qrels``.

        Raises:
            UnknownNameError: no such version.
        """
        with self._gateway.connection("read qrels topics") as cur:
            self._qrels_info(cur, name)
            rows = cur.execute("SELECT DISTINCT topic_id FROM qrels_entries WHERE qrels_version = ? AND grade >= ?",
                               [name, max(int(rel), 0)]).fetchall()
        return sorted((r[0] for r in rows), key=natural_key)

    def qrels_grade_counts(self, name: str) -> dict[int, int]:
        """grade -> number of entries of a qrels version, grades ascending.

        Raises:
            UnknownNameError: no such version.
        """
        with self._gateway.connection("read qrels grades") as cur:
            self._qrels_info(cur, name)
            rows = cur.execute(
                "SELECT grade, count(*) FROM qrels_entries WHERE qrels_version = ? GROUP BY grade ORDER BY grade",
                [name],
            ).fetchall()
        return {int(g): int(n) for g, n in rows}

    def list_qrels_versions(self, collection: str | None = None) -> list[QrelsVersionInfo]:
        """Qrels versions, oldest first, optionally of one collection.

        Raises:
            UnknownNameError: ``collection`` is given and unknown.
        """
        with self._gateway.connection("list qrels versions") as cur:
            if collection is None:
                rows = cur.execute(
                    f"SELECT {_INFO_COLUMNS} FROM qrels_versions ORDER BY created_at, qrels_version"
                ).fetchall()
            else:
                require_collection(cur, collection)
                rows = cur.execute(
                    f"SELECT {_INFO_COLUMNS} FROM qrels_versions WHERE collection = ? "
                    "ORDER BY created_at, qrels_version",
                    [collection],
                ).fetchall()
        return [QrelsVersionInfo(*r) for r in rows]

    def qrels_doc_coverage(self, collection: str, qrels: Mapping[str, Mapping[str, int]]) -> QrelsCoverage:
        """Share of the qrels' doc ids (and topics) that exist in the collection's latest version.

        Args:
            collection: the collection.
            qrels: topic_id -> doc_id -> grade (e.g. ``get_qrels(name)`` or a file just read).

        Returns:
            A ``QrelsCoverage``; ``describe()`` gives the line the CLI prints.

        Raises:
            UnknownNameError: unknown collection.
        """
        doc_ids: set[str] = {d for entries in qrels.values() for d in entries}
        with self._gateway.connection("qrels coverage") as cur:
            require_collection(cur, collection)
            version = latest_version(cur, collection)
            missing = missing_ids(cur, version, doc_ids)
            known_topics = {
                r[0] for r in cur.execute("SELECT topic_id FROM topics WHERE collection = ?", [collection]).fetchall()
            }
        missing_topics = [t for t in qrels if t not in known_topics]
        n_total = len(doc_ids)
        n_found = n_total - len(missing)
        return QrelsCoverage(
            n_found=n_found,
            n_total=n_total,
            share=n_found / n_total if n_total else 1.0,
            missing_examples=tuple(sorted(missing, key=natural_key)[:5]),
            n_topics_found=len(qrels) - len(missing_topics),
            n_topics_total=len(qrels),
            missing_topic_examples=tuple(sorted(missing_topics, key=natural_key)[:5]),
            collection=collection,
            collection_version=version,
        )

    # -- publishing -------------------------------------------------------------

    def proposed_qrels(
        self, pool_version: str, rule: str, parent_version: str | None = None, *, include_model: bool = False
    ) -> tuple[dict[str, dict[str, int]], FinalGrades]:
        """What ``publish_qrels`` would freeze: the parent's entries (if any)
        overlaid with the final grades of the pool lineage (with model grades
        where no person judged, when ``include_model``)."""
        fg = self._adjudications.final_grades_detail(pool_version, rule, include_model=include_model)
        merged: dict[str, dict[str, int]] = {}
        if parent_version is not None:
            for t, docs in self.get_qrels(parent_version).items():
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
        include_model: bool = False,
        export_file: str | None = None,
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
            include_model: documents no person judged take model assessors'
                grades; the version records which models supplied how many
                entries (``qrels_model_inputs``) and says so in its note.
                Default: model judgments are left out.
            export_file: the file name in the labels folder the version is exported to,
                recorded with the version in its transaction (``qrels_exports``); None = not exported.

        Returns:
            The new version's ``QrelsVersionInfo`` (counts, content hash, time).

        Raises:
            PermissionDeniedError: ``created_by`` is not a lead.
            DuplicateNameError: ``name`` is taken.
            UnknownNameError: unknown pool version, rule or parent version.
            ValidationError: nothing to publish.
        """
        return self.publish_qrels_counted(name, pool_version, rule=rule, parent_version=parent_version,
                                          created_by=created_by, note=note, include_model=include_model,
                                          export_file=export_file)[0]

    def publish_qrels_counted(
        self,
        name: str,
        pool_version: str,
        *,
        rule: str,
        parent_version: str | None = None,
        created_by: str,
        note: str = "",
        include_model: bool = False,
        export_file: str | None = None,
    ) -> tuple[QrelsVersionInfo, DecisionCounts]:
        """``publish_qrels``, also returning how the final grades were decided.

        Returns:
            (the new version's ``QrelsVersionInfo``, the ``DecisionCounts`` of the
            pool's items: unanimous, adjudicated, by the fallback, unresolved, from
            models), the counts its note records.

        Raises:
            As ``publish_qrels``.
        """
        final_rule = get_rule(rule)
        canonical = final_rule.name
        if final_rule.sql and not include_model:
            return self._publish_in_sql(name, pool_version, final_rule, parent_version=parent_version,
                                        created_by=created_by, note=note, export_file=export_file)
        with self._gateway.connection("publish: check lead") as cur:
            require_lead(cur, created_by, "publish")
            collection, _v, _p = pool_row(cur, pool_version)
        fg, used = self._adjudications.final_grades_and_models(pool_version, canonical, include_model=include_model)
        qrels: dict[str, dict[str, int]] = {}
        if parent_version is not None:
            for t, docs in self.get_qrels(parent_version).items():
                qrels[t] = dict(docs)
        for t, docs in fg.qrels.items():
            qrels.setdefault(t, {}).update(docs)
        if not any(qrels.values()):
            raise ValidationError(
                f"publish {name!r}: pool version {pool_version!r} has no judged documents yet; judge some first"
            )
        decided = DecisionCounts.of(fg)
        summary = decided.summary()
        if include_model:
            summary += (f"; {fg.count('model')} from model assessors where no person judged"
                        + (f" ({', '.join(f'{m}: {n}' for m, n in sorted(used.items()))})" if used else ""))
        info = self.create_qrels_version(
            name,
            collection,
            qrels,
            origin="published",
            rule=canonical,
            parent_version=parent_version,
            pool_version=pool_version,
            created_by=created_by,
            note=(note + "; " if note else "") + summary,
            model_inputs=used if include_model else None,
            export_file=export_file,
        )
        return info, decided

    def _publish_in_sql(self, name: str, pool_version: str, rule: FinalGradeRule, *, parent_version: str | None,
                        created_by: str, note: str,
                        export_file: str | None = None) -> tuple[QrelsVersionInfo, DecisionCounts]:
        """``publish_qrels`` as set work in DuckDB, in one transaction: the final grades
        of the lineage (``_FINAL_SQL``) overlaid on the parent's entries, inserted with
        one statement each; counts and the content hash aggregated from the stored
        entries (``stored_content_hash``, equal to ``hashing.qrels_content_hash``).
        The same version, entries, hash and note as the Python path (tested)."""
        check_version_name(name, "published")
        with self._gateway.transaction(f"publish {name}") as cur:
            require_lead(cur, created_by, "publish")
            collection, _v, _p = pool_row(cur, pool_version)
            version, design = self._check_new_version(cur, name, collection, parent_version, pool_version)
            if parent_version is not None:
                self._check_content_hash(cur, self._qrels_info(cur, parent_version))
            where, params = lineage_filter(cur, pool_version)
            final = cur.sql(_FINAL_SQL.format(where=where, person=PERSON_ASSESSOR, fallback=rule.sql),
                            params=[collection, *params, collection, *params]).to_arrow_table()
            cur.register("wb_final", final)
            try:
                _check_ids(cur, name)
                decided = dict(cur.execute("SELECT how, count(*) FROM wb_final GROUP BY how").fetchall())
                # One insert in key order: the primary key's index is built 2-3x faster from sorted
                # keys than from the hash join's order (1e6 entries: 7-8 s -> 3-4 s, insert and commit).
                entries = "SELECT topic_id, doc_id, grade FROM wb_final WHERE grade IS NOT NULL"
                insert_params = [name]
                if parent_version is not None:
                    entries += (" UNION ALL SELECT p.topic_id, p.doc_id, p.grade FROM qrels_entries p "
                                "WHERE p.qrels_version = ? AND NOT EXISTS (SELECT 1 FROM wb_final f "
                                "WHERE f.grade IS NOT NULL AND f.topic_id = p.topic_id AND f.doc_id = p.doc_id)")
                    insert_params.append(parent_version)
                cur.execute(f"INSERT INTO qrels_entries SELECT ?, topic_id, doc_id, grade FROM ({entries}) "
                            "ORDER BY topic_id, doc_id", insert_params)
            finally:
                cur.unregister("wb_final")
            n_topics, n_entries, n_relevant = cur.execute(
                "SELECT count(DISTINCT topic_id), count(*), count(*) FILTER (WHERE grade >= 1) FROM qrels_entries "
                "WHERE qrels_version = ?", [name]).fetchall()[0]
            if not n_entries:
                raise ValidationError(
                    f"publish {name!r}: pool version {pool_version!r} has no judged documents yet; judge some first"
                )
            counts = DecisionCounts(rule.name, int(decided.get("unanimous", 0)), int(decided.get("adjudicated", 0)),
                                    int(decided.get("fallback", 0)), int(decided.get("unresolved", 0)))
            summary = counts.summary()
            cur.execute(
                "INSERT INTO qrels_versions (qrels_version, collection, collection_version, parent_version, "
                "pool_version, origin, rule, source, n_topics, n_entries, n_relevant, content_hash, created_by, note, "
                "sample_design) VALUES (?, ?, ?, ?, ?, 'published', ?, '', ?, ?, ?, ?, ?, ?, ?)",
                [name, collection, version, parent_version, pool_version, rule.name, int(n_topics), int(n_entries),
                 int(n_relevant), stored_content_hash(cur, name), created_by,
                 (note + "; " if note else "") + summary, design],
            )
            info = self._qrels_info(cur, name)
            if export_file is not None:
                self._record_export(cur, name, export_file)
        return info, counts

    # -- exports ----------------------------------------------------------------

    def _record_export(self, cur: Any, name: str, file: str) -> None:
        """Inside a transaction: ``name`` is exported to ``file`` in the labels folder (a first record is kept)."""
        cur.execute("INSERT INTO qrels_exports (qrels_version, file) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    [name, file])

    def record_export(self, name: str, file: str) -> None:
        """Record that a qrels version is exported to ``file`` in the labels folder, before the
        file is written (``qrels export``): a version recorded here must have its file and
        manifest entry, so an export interrupted after this is found and can be completed.
        Recording it again keeps the first record.

        Raises:
            UnknownNameError: no such version.
        """
        with self._gateway.transaction(f"record the export of {name}") as cur:
            self._qrels_info(cur, name)
            self._record_export(cur, name, file)

    def exported_files(self) -> dict[str, str]:
        """qrels version -> its file name in the labels folder, for every version recorded as exported there."""
        with self._gateway.connection("read qrels exports") as cur:
            rows = cur.execute("SELECT qrels_version, file FROM qrels_exports ORDER BY qrels_version").fetchall()
        return {str(n): str(f) for n, f in rows}

    def qrels_diff(self, old_version: str | None, new_version: str) -> QrelsDiff:
        """Entries added, changed and removed from ``old_version`` (None = empty) to ``new_version``.

        One full outer join in DuckDB returns the differences only, sorted by
        (topic_id, doc_id) as ``workbench.judging.adjudication.diff_qrels`` sorts
        them; both versions' content hashes are checked first (as ``get_qrels``).

        Raises:
            UnknownNameError: unknown qrels version.
            StoreError: a version no longer matches its content hash.
        """
        with self._gateway.connection("diff qrels") as cur:
            for version in (old_version, new_version):
                if version is not None:
                    self._check_content_hash(cur, self._qrels_info(cur, version))
            rows = cur.execute(
                "SELECT coalesce(n.topic_id, o.topic_id) AS t, coalesce(n.doc_id, o.doc_id) AS d, o.grade, n.grade "
                "FROM (SELECT * FROM qrels_entries WHERE qrels_version = ?) o "
                "FULL OUTER JOIN (SELECT * FROM qrels_entries WHERE qrels_version = ?) n "
                "ON o.topic_id = n.topic_id AND o.doc_id = n.doc_id "
                "WHERE o.grade IS DISTINCT FROM n.grade ORDER BY t, d",
                [old_version, new_version]).fetchall()
        added = [Qrel(t, d, int(g)) for t, d, o, g in rows if o is None]
        removed = [Qrel(t, d, int(o)) for t, d, o, g in rows if g is None]
        changed = [(t, d, int(o), int(g)) for t, d, o, g in rows if o is not None and g is not None]
        return QrelsDiff(added, changed, removed)

    def qrels_diff_counts(self, old_version: str | None, new_version: str) -> QrelsDiffCounts:
        """How many entries ``qrels_diff`` would list as added, changed and removed, counted
        in DuckDB (no entry leaves the store: a first version of 1e6 entries is 1e6
        "added"); both versions' content hashes are checked first.

        Raises:
            UnknownNameError: unknown qrels version.
            StoreError: a version no longer matches its content hash.
        """
        with self._gateway.connection("count qrels differences") as cur:
            for version in (old_version, new_version):
                if version is not None:
                    self._check_content_hash(cur, self._qrels_info(cur, version))
            added, changed, removed = cur.execute(
                "SELECT count(*) FILTER (WHERE o.grade IS NULL), "
                "count(*) FILTER (WHERE o.grade IS NOT NULL AND n.grade IS NOT NULL), "
                "count(*) FILTER (WHERE n.grade IS NULL) "
                "FROM (SELECT * FROM qrels_entries WHERE qrels_version = ?) o "
                "FULL OUTER JOIN (SELECT * FROM qrels_entries WHERE qrels_version = ?) n "
                "ON o.topic_id = n.topic_id AND o.doc_id = n.doc_id WHERE o.grade IS DISTINCT FROM n.grade",
                [old_version, new_version]).fetchall()[0]
        return QrelsDiffCounts(int(added), int(changed), int(removed))

    def pool_coverage(self, pool_version: str, qrels_version: str) -> tuple[int, int]:
        """(documents pooled in a pool version and its ancestors, of those with an entry
        in a qrels version), counted in DuckDB; the qrels version's hash is checked.

        Raises:
            UnknownNameError: unknown pool or qrels version.
            StoreError: the qrels version no longer matches its content hash.
        """
        with self._gateway.connection("read pool coverage") as cur:
            lineage = lineage_of(cur, pool_version)
            self._check_content_hash(cur, self._qrels_info(cur, qrels_version))
            row = cur.execute(
                "WITH p AS (SELECT DISTINCT topic_id, doc_id FROM pool_entries WHERE list_contains(?, pool_version)) "
                "SELECT count(*), count(q.grade) FROM p LEFT JOIN qrels_entries q ON q.qrels_version = ? "
                "AND q.topic_id = p.topic_id AND q.doc_id = p.doc_id", [lineage, qrels_version]).fetchall()[0]
        return int(row[0]), int(row[1])


def check_version_name(name: str, origin: str) -> None:
    """A new qrels version's name and origin are valid (ValidationError otherwise)."""
    check_qrels_name(name)
    if origin not in ("published", "imported"):
        raise ValidationError(f"expected origin 'published' or 'imported', found {_shown(origin)}")


def stored_content_hash(cur: Any, name: str) -> str:
    """The content hash of a stored qrels version's entries, in one DuckDB aggregate:
    sha256 over the ``topic\tdoc\tgrade\n`` lines sorted by (topic_id, doc_id) as
    byte strings (UTF-8 order is code point order, as Python sorts ``str``), equal
    to ``hashing.qrels_content_hash`` of the same entries."""
    return str(cur.execute(
        "SELECT sha256(coalesce(string_agg(topic_id || chr(9) || doc_id || chr(9) || CAST(grade AS VARCHAR) "
        "|| chr(10), '' ORDER BY topic_id, doc_id), '')) FROM qrels_entries WHERE qrels_version = ?",
        [name]).fetchall()[0][0])


def entries_of(qrels: Mapping[str, Mapping[str, int]]) -> Iterable[tuple[str, str, int]]:
    """(topic_id, doc_id, grade) triples of a qrels mapping, in mapping order."""
    for topic, docs in qrels.items():
        for doc, grade in docs.items():
            yield topic, doc, grade


_SPACE = "".join(chr(i) for i in range(0x110000) if chr(i).isspace())
"""Every character ``str.isspace`` accepts (ASCII and Unicode white space)."""


def _check_ids(cur: Any, name: str) -> None:
    """Entries of ``wb_final`` have non-empty ids without white space (as ``create_qrels_version`` checks)."""
    row = cur.execute(
        "SELECT topic_id, doc_id FROM wb_final WHERE grade IS NOT NULL AND (topic_id = '' OR doc_id = '' "
        "OR regexp_matches(topic_id || doc_id, ?)) ORDER BY topic_id, doc_id LIMIT 1",
        ["[" + _SPACE + "]"]).fetchall()
    if row:
        topic, doc = row[0]
        raise ValidationError(
            f"qrels {name!r}: expected non-empty topic and doc ids without whitespace, "
            f"found {_shown(topic)}/{_shown(doc)}; TREC formats cannot carry such ids"
        )
