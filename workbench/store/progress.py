"""Store methods for judging progress (a mixin of ``LabelStore``): per-topic
counts of a pool version and per-run contributions (lead-only)."""

from __future__ import annotations

from dataclasses import dataclass

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



class ProgressMixin(JudgingPoolsMixin):
    """Judging progress of a pool version."""

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
