"""Checks on qrels that change what the numbers mean (pure).

Positives-only qrels: many classic collections and click logs list only the
relevant documents. With no judged non-relevant document, Judged@k counts the
same documents as P@k (every judged document is relevant), and every
non-relevant document a run retrieves is unjudged, so it is counted as
pool-novel. Reports that show Judged@k or pool-novel counts say so
(``POSITIVES_ONLY``).

Source:
    Buckley & Voorhees, Retrieval evaluation with incomplete information,
    SIGIR 2004, doi:10.1145/1008992.1009000 (judged vs unjudged documents).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

POSITIVES_ONLY = (
    "the qrels hold no non-relevant judgments (every grade >= {rel}): Judged@k equals P@k, and every "
    "non-relevant document a run retrieves counts as unjudged (pool-novel)"
)
"""The warning printed beside Judged@k and pool-novel counts of positives-only qrels (format with ``rel``)."""


def positives_only(grades: Iterable[int], rel: int = 1) -> bool:
    """True when there is at least one judgment and every grade is >= ``rel`` (none is non-relevant).

    Example:
        >>> positives_only([1, 1, 2]), positives_only([0, 1]), positives_only([1, 2], rel=2), positives_only([])
        (True, False, False, False)
    """
    seen = False
    for g in grades:
        if int(g) < rel:
            return False
        seen = True
    return seen


def qrels_grades(qrels: Mapping[str, Mapping[str, int]]) -> list[int]:
    """Every grade of a qrels mapping (topic -> doc -> grade), in mapping order."""
    return [g for docs in qrels.values() for g in docs.values()]


def positives_only_warning(rel: int = 1, short: Mapping[str, tuple[int, int]] | None = None) -> str:
    """``POSITIVES_ONLY`` for threshold ``rel``, its Judged@k clause limited to where it holds.

    Judged@k divides by the documents a run returned in the top k (min(k, returned)), P@k by k;
    with positives-only qrels they are equal only where a run returns at least k documents. A run
    that returns fewer (a depth-100 run scored at Judged@1000, or a short run) is named instead of
    being told that its Judged@k equals P@k.

    Args:
        rel: the relevance threshold.
        short: run name -> (its depth D: most documents it returns for a topic, the largest Judged
            cutoff k > D) for the runs shorter than a Judged cutoff of the report; None or empty when
            every run returns at least k documents per topic (or no Judged measure is reported).

    Example:
        >>> positives_only_warning(1, {"bm25": (5, 10)}).split(": ", 1)[1][:60]
        'every non-relevant document a run retrieves counts as unjudg'
    """
    if not short:
        return POSITIVES_ONLY.format(rel=rel)
    shown = ", ".join(f"{name} returns at most {d} (Judged@{k})" for name, (d, k) in sorted(short.items()))
    return (f"the qrels hold no non-relevant judgments (every grade >= {rel}): every non-relevant document a run "
            "retrieves counts as unjudged (pool-novel); Judged@k equals P@k only where a run returns at least k "
            f"documents, and {shown}: there Judged@k = P@k * k / documents returned")
