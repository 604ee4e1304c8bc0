"""Store methods for agreement (a mixin of ``LabelStore``): the confusion and
coincidence counts of people's current grades, aggregated in DuckDB.

Agreement over a campaign (1,000 topics x 1,000 documents x 2 assessors: 2e6
judgments) needs no per-judgment Python object: three aggregates return at most
(pairs x grades^2) + (topics x assessor counts x grades^2) rows, and
``workbench.judging.agreement.agreement_from_counts`` computes kappa and alpha
from them (identical to ``agreement_report`` on the same judgments).
"""

from __future__ import annotations

from workbench.judging.agreement import AgreementCounts
from workbench.store.judging_pools import JudgingPoolsMixin
from workbench.store.model_assessors import PERSON_ASSESSOR


class AgreementCountsMixin(JudgingPoolsMixin):
    """Counts behind the agreement figures."""

    def agreement_counts(self, collection: str, pool_version: str | None = None) -> AgreementCounts:
        """Confusion counts per assessor pair and coincidence counts per topic of the
        people's current integer grades (unsure and model assessors left out).

        Args:
            collection: the collection.
            pool_version: only documents of this pool version and its ancestors
                (None: every judged document of the collection).

        Returns:
            ``AgreementCounts``: pairs (a < b by name) -> (grade a, grade b) -> items;
            topic -> m -> (c, k) -> sum of n_c (n_k - [c = k]) over the items graded
            by m >= 2 people; topic -> number of those items.

        Raises:
            UnknownNameError: unknown pool version.
        """
        with self.connection("read agreement counts") as cur:
            where, params = self._lineage_filter(cur, pool_version)
            graded = (f"SELECT topic_id, doc_id, assessor, grade FROM current_judgments WHERE collection = ?{where} "
                      f"AND {PERSON_ASSESSOR} AND grade IS NOT NULL")
            args = [collection, *params]
            pair_rows = cur.execute(
                f"WITH g AS ({graded}) SELECT x.assessor, y.assessor, x.grade, y.grade, count(*) FROM g x "
                "JOIN g y ON x.topic_id = y.topic_id AND x.doc_id = y.doc_id AND x.assessor < y.assessor "
                "GROUP BY ALL", args).fetchall()
            # per item and grade: how many gave it (n) and how many graded the item (m)
            values = (f"WITH g AS ({graded}), v AS (SELECT topic_id, doc_id, grade, count(*) AS n, "
                      "sum(count(*)) OVER (PARTITION BY topic_id, doc_id) AS m FROM g GROUP BY topic_id, doc_id, grade) ")
            coincidence_rows = cur.execute(
                values + "SELECT x.topic_id, x.m, x.grade, y.grade, "
                "sum(x.n * (y.n - CASE WHEN x.grade = y.grade THEN 1 ELSE 0 END)) AS c FROM v x "
                "JOIN v y ON x.topic_id = y.topic_id AND x.doc_id = y.doc_id WHERE x.m >= 2 GROUP BY ALL HAVING c > 0",
                args).fetchall()
            item_rows = cur.execute(
                values + "SELECT topic_id, count(DISTINCT doc_id) FROM v WHERE m >= 2 GROUP BY topic_id",
                args).fetchall()
        pairs: dict[tuple[str, str], dict[tuple[int, int], int]] = {}
        for a, b, ga, gb, n in pair_rows:
            pairs.setdefault((a, b), {})[(int(ga), int(gb))] = int(n)
        by_topic: dict[str, dict[int, dict[tuple[int, int], int]]] = {}
        for t, m, c, k, x in coincidence_rows:
            by_topic.setdefault(t, {}).setdefault(int(m), {})[(int(c), int(k))] = int(x)
        return AgreementCounts(pairs, by_topic, {t: int(n) for t, n in item_rows})
