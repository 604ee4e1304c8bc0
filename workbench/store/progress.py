"""Store methods for judging progress (a mixin of ``LabelStore``): per-topic
counts of a pool version and per-run contributions (lead-only)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from workbench.store.judging_pools import JudgingPoolsMixin
from workbench.store.model_assessors import PERSON_ASSESSOR


@dataclass(frozen=True, slots=True)
class PoolTopicProgress:
    """Judging state of one topic of a pool version (lead's pool page).

    Attributes:
        topic_id: topic.
        n_documents: documents pooled for the topic (this version and ancestors).
        n_assigned: documents assigned to at least one assessor.
        n_judged: documents with at least one current graded or unsure judgment
            by a person (model assessors' judgments are not counted).
        n_multi_judged: documents with current judgments from two or more people.
    """

    topic_id: str
    n_documents: int
    n_assigned: int
    n_judged: int
    n_multi_judged: int



@dataclass(frozen=True, slots=True)
class AssessorProgress:
    """One user's judging so far, over everything assigned to them (lead's overview).

    Attributes:
        user: user name.
        role: ``assessor`` or ``lead``.
        n_assigned: queue entries (assignments).
        n_graded: assigned documents with a current grade.
        n_unsure: assigned documents whose current judgment is "unsure".
        n_timed: of those, judgments with a recorded time on the document (> 0 ms;
            imported judgments have none).
        median_ms: median time on a document before the save, milliseconds
            (None without timed judgments).
        p90_ms: 90th percentile of the same (linear interpolation, DuckDB ``quantile_cont``).
        last_saved_at: the latest save, or None.
    """

    user: str
    role: str
    n_assigned: int
    n_graded: int
    n_unsure: int
    n_timed: int
    median_ms: float | None
    p90_ms: float | None
    last_saved_at: datetime | None

    @property
    def n_left(self) -> int:
        """Assigned documents without a current judgment."""
        return self.n_assigned - self.n_graded - self.n_unsure


class ProgressMixin(JudgingPoolsMixin):
    """Judging progress of a pool version, and of every assessor."""

    def assessor_progress(self) -> list[AssessorProgress]:
        """Every user with assignments or judgments: counts over their assigned
        documents and the time they took per judgment (one query).

        Returns:
            One ``AssessorProgress`` per user, sorted by user name.
        """
        with self.connection("read assessor progress") as cur:
            rows = cur.execute(
                """
                WITH latest AS (
                    SELECT collection, topic_id, doc_id, assessor, grade, unsure, duration_ms, saved_at,
                           row_number() OVER (PARTITION BY collection, topic_id, doc_id, assessor
                                              ORDER BY judgment_id DESC) AS rn
                    FROM judgments),
                assigned AS (SELECT DISTINCT assessor, collection, topic_id, doc_id FROM assignments),
                mine AS (
                    SELECT a.assessor, l.grade, l.unsure, l.duration_ms, l.saved_at
                    FROM assigned a JOIN latest l ON l.rn = 1 AND l.assessor = a.assessor
                         AND l.collection = a.collection AND l.topic_id = a.topic_id AND l.doc_id = a.doc_id
                    WHERE l.grade IS NOT NULL OR l.unsure),
                counts AS (SELECT assessor, count(*) AS n FROM assigned GROUP BY assessor),
                stats AS (
                    SELECT assessor,
                           count(*) FILTER (WHERE grade IS NOT NULL) AS graded,
                           count(*) FILTER (WHERE grade IS NULL) AS unsure,
                           count(*) FILTER (WHERE duration_ms > 0) AS timed,
                           quantile_cont(duration_ms, 0.5) FILTER (WHERE duration_ms > 0) AS p50,
                           quantile_cont(duration_ms, 0.9) FILTER (WHERE duration_ms > 0) AS p90,
                           max(saved_at) AS last
                    FROM mine GROUP BY assessor)
                SELECT u.user_name, u.role, coalesce(c.n, 0), coalesce(s.graded, 0), coalesce(s.unsure, 0),
                       coalesce(s.timed, 0), s.p50, s.p90, s.last
                FROM users u LEFT JOIN counts c ON c.assessor = u.user_name
                             LEFT JOIN stats s ON s.assessor = u.user_name
                WHERE c.n IS NOT NULL
                ORDER BY u.user_name
                """
            ).fetchall()
        return [AssessorProgress(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5]),
                                 None if r[6] is None else float(r[6]), None if r[7] is None else float(r[7]), r[8])
                for r in rows]

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
                    WHERE collection = ? AND {PERSON_ASSESSOR} GROUP BY topic_id, doc_id)
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
