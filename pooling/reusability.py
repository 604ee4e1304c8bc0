"""Pool reusability: leave-one-run-out qrels and run-ordering stability (PURE).

The standard test of whether a pooled test collection can fairly score a
system that did not contribute to the pool (Zobel, SIGIR 1998,
doi:10.1145/290941.291014; Buckley & Voorhees, SIGIR 2004,
doi:10.1145/1008992.1009000): for each contributing run, remove from the qrels
the documents that *only* that run brought into the pool, rescore the run, and
see how far its score drops and whether the ordering of runs changes (Kendall's
tau between the full-pool and leave-one-out orderings; Voorhees, SIGIR 1998,
doi:10.1145/290941.291017 treats tau >= 0.9 as equivalent orderings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.types import Qrels

Provenance = Mapping[str, Mapping[str, frozenset[str] | set[str]]]
"""topic_id -> doc_id -> the set of run names that contributed the document to the pool."""


def unique_contributions(provenance: Provenance, run: str) -> dict[str, set[str]]:
    """Documents that only ``run`` contributed to the pool.

    Args:
        provenance: topic_id -> doc_id -> contributing run names (all pool versions
            the qrels were judged from).
        run: the run left out.

    Returns:
        topic_id -> doc ids whose only contributor is ``run`` (topics with none omitted).

    Example:
        >>> unique_contributions({"t1": {"d1": {"a"}, "d2": {"a", "b"}}}, "a")
        {'t1': {'d1'}}
    """
    out: dict[str, set[str]] = {}
    for topic_id, docs in provenance.items():
        only = {doc_id for doc_id, runs in docs.items() if set(runs) == {run}}
        if only:
            out[topic_id] = only
    return out


def qrels_without(qrels: Qrels, removed: Mapping[str, set[str]]) -> dict[str, dict[str, int]]:
    """A copy of ``qrels`` without the (topic, doc) pairs in ``removed``.

    Topics left with no judgments are dropped (they would be unjudged, not
    non-relevant). Returns topic_id -> doc_id -> grade.
    """
    out: dict[str, dict[str, int]] = {}
    for topic_id, docs in qrels.items():
        gone = removed.get(topic_id, set())
        kept = {d: g for d, g in docs.items() if d not in gone}
        if kept:
            out[topic_id] = kept
    return out


def ordering(scores: Mapping[str, float]) -> list[str]:
    """Run names ordered by score descending, ties by name ascending (stable, documented)."""
    return [name for name, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def kendall_tau(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Kendall's tau-b between two scorings of the same runs.

    Args:
        a, b: run name -> score; must have the same keys (>= 2 of them).

    Returns:
        tau-b in [-1, 1] (scipy.stats.kendalltau, which handles ties as tau-b).

    Raises:
        ValueError: the key sets differ or fewer than two runs.

    Source:
        Kendall (1938); tau for system rankings as in Voorhees (SIGIR 1998).
    """
    if set(a) != set(b) or len(a) < 2:
        raise ValueError("kendall_tau needs the same >= 2 runs on both sides")
    from scipy.stats import kendalltau

    names = sorted(a)
    res = kendalltau([a[n] for n in names], [b[n] for n in names])
    return float(res.statistic)


def rank_changes(full: Mapping[str, float], reduced: Mapping[str, float]) -> Sequence[str]:
    """Runs whose position differs between the two orderings (by ``ordering``)."""
    fo, ro = ordering(full), ordering(reduced)
    return [n for n in fo if fo.index(n) != ro.index(n)]
