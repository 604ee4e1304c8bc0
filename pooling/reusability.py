"""Pool reusability: leave-one-run-out qrels and run-ordering stability (PURE).

The standard test of whether a pooled test collection can fairly score a
system that did not contribute to the pool (Zobel, SIGIR 1998,
doi:10.1145/290941.291014; Buckley & Voorhees, SIGIR 2004,
doi:10.1145/1008992.1009000): for each contributing run, remove from the qrels
the documents that *only* that run brought into the pool, rescore the run, and
see how far its score drops and whether the ordering of runs changes (Kendall's
tau between the full-pool and leave-one-out orderings; Voorhees, SIGIR 1998,
doi:10.1145/290941.291017 treats tau >= 0.9 as equivalent orderings).

Two taus per left-out run, because they answer two questions:

* ``tau``: only the left-out run is rescored on the reduced qrels, the others
  keep their full values: would the run, had it not been pooled, land in the
  same place among the runs that were? (Zobel's test of fairness to a new run.)
* ``tau_all``: every run is rescored on the reduced qrels: does the collection
  without the run's documents order the runs as the full collection does?
  Removing relevant documents changes every run's |R| (and the score of every
  run that also found them below the pool depth), so this order can change
  when the first does not.

``leave_one_run_out`` and ``pool_bias`` are the analyses behind
``workbench pool reusability`` and ``workbench pool bias`` (and the demo's
tables): a topic whose relevant documents all came from the left-out run is
excluded (|R| = 0 without them), never scored 0, and counted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from workbench.scoring.measures import Measure
from workbench.types import Qrels, Run

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


def contributors_at_depth(runs: Mapping[str, Run], depth: int) -> dict[str, dict[str, set[str]]]:
    """topic_id -> doc_id -> the runs that rank the document within ``depth``.

    This, not a pool's recorded provenance, defines "documents only this run
    contributed": a document pooled by an early run is not recorded again for a
    later run that also retrieved it (pool extension), but leaving the early run
    out would not remove it from the pool. Ranks come from ``workbench.ranking``.

    Example:
        >>> contributors_at_depth({"a": {"t": {"d1": 2.0, "d2": 1.0}}, "b": {"t": {"d2": 3.0}}}, 1)
        {'t': {'d1': {'a'}, 'd2': {'b'}}}
    """
    from workbench.ranking import ranked_ids

    out: dict[str, dict[str, set[str]]] = {}
    for name, run in runs.items():
        for topic_id, scores in run.items():
            for doc_id in ranked_ids(scores, depth):
                out.setdefault(topic_id, {}).setdefault(doc_id, set()).add(name)
    return out


@dataclass(frozen=True)
class LeaveOneOut:
    """One run left out of the pool.

    Attributes:
        run: the run left out.
        n_unique: (topic, document) pairs only this run contributed.
        n_unique_relevant: of those, relevant in the qrels.
        full: the run's macro value on the full qrels, over ``topics``.
        reduced: its macro value on the qrels without its unique documents, over ``topics``.
        tau: Kendall's tau-b between the ordering of all runs on the full qrels
            and the ordering with only this run rescored on the reduced qrels
            (the other runs keep their full values), all over ``topics``.
        order_changed: the run's place in that ordering changed.
        topics: the topics averaged over (|R| > 0 with and without the run's documents).
        excluded: topics left out because every relevant document of theirs
            came from this run alone (their |R| is 0 without it).
        tau_all: Kendall's tau-b between the ordering on the full qrels and the
            ordering with every run rescored on the reduced qrels, over ``topics``.
        moved_all: runs whose place differs between those two orderings (ties by name).
        reduced_all: run name -> its macro value on the reduced qrels, over ``topics``.
    """

    run: str
    n_unique: int
    n_unique_relevant: int
    full: float
    reduced: float
    tau: float
    order_changed: bool
    topics: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    tau_all: float = 1.0
    moved_all: tuple[str, ...] = ()
    reduced_all: Mapping[str, float] = field(default_factory=dict, hash=False)

    @property
    def drop(self) -> float:
        """full - reduced (>= 0 for recall: removing relevant documents can only lower it)."""
        return self.full - self.reduced


def _per_topic(qrels: Qrels, run: Run, name: str, measure: Measure, rel: int,
               topics: Sequence[str]) -> dict[str, float]:
    return _per_topic_all(qrels, {name: run}, measure, rel, topics)[name]


def _per_topic_all(qrels: Qrels, runs: Mapping[str, Run], measure: Measure, rel: int,
                   topics: Sequence[str]) -> dict[str, dict[str, float]]:
    """run name -> topic_id -> value of ``measure`` on ``qrels`` (bound once for every run)."""
    from workbench.scoring.evaluate import Evaluator

    if not topics:
        return {name: {} for name in runs}
    evaluator = Evaluator(qrels, [measure], rel=rel, missing="zero")
    out = {}
    for name, run in runs.items():
        per = evaluator.evaluate(run, run_name=name, topics=topics).per_topic[measure]
        out[name] = {t: float(per[t].value) for t in topics if t in per}
    return out


def _mean(values: Mapping[str, float], topics: Sequence[str]) -> float:
    return sum(values.get(t, 0.0) for t in topics) / len(topics) if topics else 0.0


def _relevant_topics(qrels: Qrels, rel: int) -> list[str]:
    from workbench.ranking import natural_key

    return sorted((t for t, docs in qrels.items() if any(g >= rel for g in docs.values())), key=natural_key)


def leave_one_run_out(
    qrels: Qrels,
    contributors: Provenance,
    runs: Mapping[str, Run],
    measure: Measure | str,
    *,
    rel: int = 1,
) -> list[LeaveOneOut]:
    """Each run rescored on the qrels without the documents only it contributed.

    For run X: remove from ``qrels`` the documents only X contributed; a topic
    left with no relevant document (all of them came from X) is *excluded* (its
    |R| is 0, so R@k is undefined), never scored 0, and counted in
    ``excluded``. Over the remaining topics, X's value on the reduced qrels is
    compared with its value on the full qrels, and the ordering of every run
    (full values over the same topics) with X's reduced value (``tau``) and
    with every run's reduced value (``tau_all``; see the module docstring).

    Args:
        qrels: topic_id -> doc_id -> grade, judged from the pool.
        contributors: topic_id -> doc_id -> runs that contributed it
            (``contributors_at_depth`` over the pooled runs at the pool depth).
        runs: run name -> run, the pooled runs (>= 2 for a tau).
        measure: the measure (e.g. ``R@20``), macro mean.
        rel: minimum grade of a relevant document.

    Returns:
        One ``LeaveOneOut`` per run, in the order of ``runs``.

    Raises:
        ValidationError: fewer than two runs.

    Source:
        Zobel, SIGIR 1998, doi:10.1145/290941.291014; Buckley & Voorhees,
        SIGIR 2004, doi:10.1145/1008992.1009000; tau of system orderings:
        Voorhees, SIGIR 1998, doi:10.1145/290941.291017.
    """
    from workbench.errors import ValidationError
    from workbench.scoring.measures import parse_measure

    if len(runs) < 2:
        raise ValidationError(f"leave-one-run-out needs at least 2 runs, found {len(runs)}")
    m = measure if isinstance(measure, Measure) else parse_measure(measure)
    base = _relevant_topics(qrels, rel)
    full_values = _per_topic_all(qrels, runs, m, rel, base)
    rows = []
    for name in runs:
        unique = unique_contributions(contributors, name)
        reduced_qrels = qrels_without(qrels, unique)
        kept = tuple(t for t in _relevant_topics(reduced_qrels, rel) if t in set(base))
        excluded = tuple(t for t in base if t not in set(kept))
        n_unique = sum(len(d) for d in unique.values())
        n_unique_rel = sum(1 for t, ds in unique.items() for d in ds if qrels.get(t, {}).get(d, 0) >= rel)
        full = {n: _mean(v, kept) for n, v in full_values.items()}
        reduced_all = {n: _mean(v, kept) for n, v in _per_topic_all(reduced_qrels, runs, m, rel, kept).items()}
        reduced = reduced_all[name]
        scores = dict(full)
        scores[name] = reduced
        tau = kendall_tau(full, scores)
        tau_all = kendall_tau(full, reduced_all)
        rows.append(LeaveOneOut(name, n_unique, n_unique_rel, full[name], reduced,
                                1.0 if math.isnan(tau) else tau,
                                ordering(full).index(name) != ordering(scores).index(name), kept, excluded,
                                1.0 if math.isnan(tau_all) else tau_all, tuple(rank_changes(full, reduced_all)),
                                reduced_all))
    return rows


@dataclass(frozen=True)
class BiasRow:
    """One run scored on pooled and on complete judgments, over the same topics.

    Attributes:
        run: the run.
        pooled: macro value on the pooled qrels.
        full: macro value on the complete (fuller) qrels.
    """

    run: str
    pooled: float
    full: float

    @property
    def gap(self) -> float:
        """pooled - full: recall the pool cannot see shows as a positive gap."""
        return self.pooled - self.full


@dataclass(frozen=True)
class BiasReport:
    """Pooled-versus-complete bias of every run.

    Attributes:
        rows: one per run, in the order given.
        topics: the topics averaged over (|R| > 0 in both qrels).
        excluded: topics with relevant documents in one qrels only.
        measure: the measure's canonical name.
    """

    rows: tuple[BiasRow, ...]
    topics: tuple[str, ...]
    excluded: tuple[str, ...]
    measure: str


def pool_bias(pooled: Qrels, full: Qrels, runs: Mapping[str, Run], measure: Measure | str, *,
              rel: int = 1) -> BiasReport:
    """Each run's value on pooled qrels against complete qrels, on the same topics.

    Args:
        pooled: the qrels judged from a pool.
        full: complete (or fuller) judgments of the same topics.
        runs: run name -> run.
        measure: e.g. ``R@20`` (macro).
        rel: minimum grade of a relevant document.

    Returns:
        ``BiasReport``; topics are those with |R| > 0 in both qrels.

    Source:
        Pool bias (Buckley, Dimmick, Soboroff & Voorhees, "Bias and the limits
        of pooling for large collections", Information Retrieval 10(6), 2007,
        doi:10.1007/s10791-007-9032-x).
    """
    from workbench.scoring.measures import parse_measure

    m = measure if isinstance(measure, Measure) else parse_measure(measure)
    a, b = _relevant_topics(pooled, rel), set(_relevant_topics(full, rel))
    topics = tuple(t for t in a if t in b)
    excluded = tuple(sorted((set(a) | b) - set(topics)))
    rows = tuple(
        BiasRow(name, _mean(_per_topic(pooled, run, name, m, rel, topics), topics),
                _mean(_per_topic(full, run, name, m, rel, topics), topics))
        for name, run in runs.items()
    )
    return BiasReport(rows, topics, excluded, str(m))
