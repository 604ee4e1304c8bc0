"""Store methods for agreement (a mixin of ``LabelStore``): the confusion and
coincidence counts of people's current grades, aggregated in DuckDB.

Agreement over a campaign (1,000 topics x 1,000 documents x 2 assessors: 2e6
judgments) needs no per-judgment Python object: one scan of the judgments
returns the *grade profiles* (topic, the item's sorted (assessor, grade) list,
number of such items): about 16 rows per topic with two assessors on a 0-3
scale. ``workbench.judging.agreement.counts_from_profiles`` turns them into the
confusion and coincidence counts and ``agreement_from_counts`` computes kappa
and alpha (identical to ``agreement_report`` on the same judgments).
"""

from __future__ import annotations

from workbench.judging.agreement import AgreementCounts, counts_from_profiles
from workbench.store.judging_pools import JudgingPoolsMixin
from workbench.store.model_assessors import PERSON_ASSESSOR

_PROFILES_SQL = """
WITH latest AS (
    SELECT topic_id, doc_id, assessor, arg_max_null(grade, judgment_id) AS grade FROM judgments
    WHERE collection = ? AND {person} GROUP BY topic_id, doc_id, assessor),
items AS (
    SELECT topic_id, doc_id, list_sort(list(struct_pack(a := assessor, g := grade))) AS grades FROM latest
    WHERE grade IS NOT NULL GROUP BY topic_id, doc_id HAVING count(*) >= 2)
SELECT topic_id, grades, count(*) FROM items WHERE true{where} GROUP BY topic_id, grades
"""
"""Grade profiles of the people's current integer grades in one scan. The latest row
per (topic, document, assessor) is the assessor's state, as ``current_judgments``
defines it (``arg_max_null``: its grade, NULL when it is unsure or no judgment);
items graded by fewer than two are left out before the lineage filter (it keeps
only items of the pool versions)."""


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
            rows = cur.execute(_PROFILES_SQL.format(person=PERSON_ASSESSOR, where=where),
                               [collection, *params]).fetchall()
        return counts_from_profiles((t, [(x["a"], int(x["g"])) for x in grades], int(n)) for t, grades, n in rows)
