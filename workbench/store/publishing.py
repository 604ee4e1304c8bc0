"""Store methods for publishing (a mixin of ``LabelStore``).

Publishing a pool version: the final grades of every document of the pool
version **and its ancestors** (the pool lineage, root first) are derived from
the current judgments and adjudications with a named rule
(``workbench.judging.adjudication``); with a parent qrels version, the new
version is the parent's entries overlaid with those final grades. So
"qrels v2 (parent v1)" for a delta pool holds v1's judgments plus the delta's,
and a re-judged v1 document shows up as *changed* in the diff.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.errors import ValidationError
from workbench.judging.adjudication import (
    FinalGradeRule,
    FinalGrades,
    QrelsDiff,
    QrelsDiffCounts,
    get_rule,
)
from workbench.store.adjudications import AdjudicationsMixin
from workbench.store.model_assessors import PERSON_ASSESSOR
from workbench.types import Qrel

if TYPE_CHECKING:
    from workbench.store.qrels import QrelsVersionInfo

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


class PublishingMixin(AdjudicationsMixin):
    """Freezing final grades into qrels versions, and diffs between versions."""

    def proposed_qrels(
        self, pool_version: str, rule: str, parent_version: str | None = None, *, include_model: bool = False
    ) -> tuple[dict[str, dict[str, int]], FinalGrades]:
        """What ``publish_qrels`` would freeze: the parent's entries (if any)
        overlaid with the final grades of the pool lineage (with model grades
        where no person judged, when ``include_model``)."""
        fg = self.final_grades_detail(pool_version, rule, include_model=include_model)
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
        include_model: bool = False,
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

        Returns:
            The new version's ``QrelsVersionInfo`` (counts, content hash, time).

        Raises:
            PermissionDeniedError: ``created_by`` is not a lead.
            DuplicateNameError: ``name`` is taken.
            UnknownNameError: unknown pool version, rule or parent version.
            ValidationError: nothing to publish.
        """
        final_rule = get_rule(rule)
        canonical = final_rule.name
        if final_rule.sql and not include_model:
            return self._publish_in_sql(name, pool_version, final_rule, parent_version=parent_version,
                                        created_by=created_by, note=note)
        with self.connection("publish: check lead") as cur:
            self._require_lead(cur, created_by, "publish")
            collection, _v, _p = self._pool_row(cur, pool_version)
        fg, used = self._final_grades_and_models(pool_version, canonical, include_model=include_model)
        qrels: dict[str, dict[str, int]] = {}
        if parent_version is not None:
            for t, docs in self.get_qrels(parent_version).items():  # type: ignore[attr-defined]
                qrels[t] = dict(docs)
        for t, docs in fg.qrels.items():
            qrels.setdefault(t, {}).update(docs)
        if not any(qrels.values()):
            raise ValidationError(
                f"publish {name!r}: pool version {pool_version!r} has no judged documents yet; judge some first"
            )
        summary = (
            f"{fg.count('unanimous')} unanimous, {fg.count('adjudicated')} adjudicated, "
            f"{fg.count('fallback')} by fallback, {len(fg.unresolved)} unresolved (unsure only)"
        )
        if include_model:
            summary += (f"; {fg.count('model')} from model assessors where no person judged"
                        + (f" ({', '.join(f'{m}: {n}' for m, n in sorted(used.items()))})" if used else ""))
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
            model_inputs=used if include_model else None,
        )

    def _publish_in_sql(self, name: str, pool_version: str, rule: FinalGradeRule, *, parent_version: str | None,
                        created_by: str, note: str) -> QrelsVersionInfo:
        """``publish_qrels`` as set work in DuckDB, in one transaction: the final grades
        of the lineage (``_FINAL_SQL``) overlaid on the parent's entries, inserted with
        one statement each; counts and the content hash aggregated from the stored
        entries (``stored_content_hash``, equal to ``hashing.qrels_content_hash``).
        The same version, entries, hash and note as the Python path (tested)."""
        from workbench.store.qrels import check_version_name, stored_content_hash

        check_version_name(name, "published")
        with self.transaction(f"publish {name}") as cur:
            self._require_lead(cur, created_by, "publish")
            collection, _v, _p = self._pool_row(cur, pool_version)
            version = self._check_new_version(cur, name, collection, parent_version, pool_version)  # type: ignore[attr-defined]
            if parent_version is not None:
                self._check_content_hash(cur, self._qrels_info(cur, parent_version))  # type: ignore[attr-defined]
            where, params = self._lineage_filter(cur, pool_version)
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
            summary = (
                f"{decided.get('unanimous', 0)} unanimous, {decided.get('adjudicated', 0)} adjudicated, "
                f"{decided.get('fallback', 0)} by fallback, {decided.get('unresolved', 0)} unresolved (unsure only)"
            )
            cur.execute(
                "INSERT INTO qrels_versions (qrels_version, collection, collection_version, parent_version, "
                "pool_version, origin, rule, source, n_topics, n_entries, n_relevant, content_hash, created_by, note) "
                "VALUES (?, ?, ?, ?, ?, 'published', ?, '', ?, ?, ?, ?, ?, ?)",
                [name, collection, version, parent_version, pool_version, rule.name, int(n_topics), int(n_entries),
                 int(n_relevant), stored_content_hash(cur, name), created_by,
                 (note + "; " if note else "") + summary],
            )
            info: QrelsVersionInfo = self._qrels_info(cur, name)  # type: ignore[attr-defined]
        return info

    def qrels_diff(self, old_version: str | None, new_version: str) -> QrelsDiff:
        """Entries added, changed and removed from ``old_version`` (None = empty) to ``new_version``.

        One full outer join in DuckDB returns the differences only, sorted by
        (topic_id, doc_id) as ``workbench.judging.adjudication.diff_qrels`` sorts
        them; both versions' content hashes are checked first (as ``get_qrels``).

        Raises:
            UnknownNameError: unknown qrels version.
            StoreError: a version no longer matches its content hash.
        """
        with self.connection("diff qrels") as cur:
            for version in (old_version, new_version):
                if version is not None:
                    self._check_content_hash(cur, self._qrels_info(cur, version))  # type: ignore[attr-defined]
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
        with self.connection("count qrels differences") as cur:
            for version in (old_version, new_version):
                if version is not None:
                    self._check_content_hash(cur, self._qrels_info(cur, version))  # type: ignore[attr-defined]
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
        with self.connection("read pool coverage") as cur:
            lineage = self._lineage(cur, pool_version)
            self._check_content_hash(cur, self._qrels_info(cur, qrels_version))  # type: ignore[attr-defined]
            row = cur.execute(
                "WITH p AS (SELECT DISTINCT topic_id, doc_id FROM pool_entries WHERE list_contains(?, pool_version)) "
                "SELECT count(*), count(q.grade) FROM p LEFT JOIN qrels_entries q ON q.qrels_version = ? "
                "AND q.topic_id = p.topic_id AND q.doc_id = p.doc_id", [lineage, qrels_version]).fetchall()[0]
        return int(row[0]), int(row[1])


_SPACE = "".join(chr(i) for i in range(0x110000) if chr(i).isspace())
"""Every character ``str.isspace`` accepts (ASCII and Unicode white space)."""


def _check_ids(cur: Any, name: str) -> None:
    """Entries of ``wb_final`` have non-empty ids without white space (as ``create_qrels_version`` checks)."""
    from workbench.store.collection_rows import shown_id

    row = cur.execute(
        "SELECT topic_id, doc_id FROM wb_final WHERE grade IS NOT NULL AND (topic_id = '' OR doc_id = '' "
        "OR regexp_matches(topic_id || doc_id, ?)) ORDER BY topic_id, doc_id LIMIT 1",
        ["[" + _SPACE + "]"]).fetchall()
    if row:
        topic, doc = row[0]
        raise ValidationError(
            f"qrels {name!r}: expected non-empty topic and doc ids without whitespace, "
            f"found {shown_id(topic)}/{shown_id(doc)}; TREC formats cannot carry such ids"
        )
