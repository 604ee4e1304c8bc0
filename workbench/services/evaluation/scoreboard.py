"""Scoreboard services for the app: every run against one qrels version, the
score changes from a qrels version's parent to it, and per-topic drill-down.

The scoreboard binds the qrels once (``scoring.evaluate.Evaluator``) and scores
many stored runs. Measures: R@k (macro, micro and ceiling) for each cutoff k,
nDCG@10, RR@10, P@10 and Judged@k for each cutoff, plus the pool-novel
(unjudged) document counts in each run's top k.

Missing topics (a qrels topic with |R| > 0 that a run has no results for, or
that the store marks ``empty``/``error`` for that run) follow ``missing``:

* ``"exclude"``: left out of *every* run's averages, so all runs of one board
  are averaged over the same topics (as ``services.evaluation.pipeline.score``); the
  board lists, per run, the topics it lacked (``Scoreboard.missing_by_run``);
* ``"zero"``: scored 0 for the run that lacks them;
* ``"fail"``: ``MissingTopicsError`` naming the run and the topics.

Topics with |R| = 0 are excluded from every average and listed
(``Scoreboard.excluded_topics``), never scored 0 or 1.

Source:
    trec_eval ``recall_k``/``P_k``/``ndcg_cut``/``recip_rank``; ir_measures
    ``Judged@k``; pool-novel documents after Buckley & Voorhees, SIGIR 2004,
    doi:10.1145/1008992.1009000.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple

from workbench.errors import UnknownNameError, ValidationError
from workbench.ranking import natural_key
from workbench.scoring.evaluate import (
    Evaluation,
    Evaluator,
    MissingPolicy,
    RelevantDoc,
    check_policy,
)
from workbench.scoring.measures import DEFAULT_CUTOFFS, RR, Judged, Measure, P, R, nDCG
from workbench.scoring.qrels_checks import positives_only, positives_only_warning, qrels_grades
from workbench.services.runs.pool_topics import (
    PoolContributor,
    contributor_notes,
    pool_contributors,
)

if TYPE_CHECKING:
    from workbench.store import Store
    from workbench.store.qrels import QrelsVersionInfo

Statistic = Literal["macro", "micro", "ceiling", "optimistic", "pool-novel"]
"""What a ``ScoreRow`` value is (see ``ScoreRow``)."""

CEILING_ROW = "ceiling min(k,|R|)/|R|"
"""The label of the ceiling row of ``Scoreboard.compact_table``."""

FIXED_MEASURES: tuple[Measure, ...] = (nDCG(10), RR(10), P(10))
"""Measures of every scoreboard besides R@k and Judged@k at each cutoff."""


class ScoreRow(NamedTuple):
    """One number of a scoreboard in long (tidy) form.

    Attributes:
        run: the run name.
        measure: canonical measure name (``R@20``, ``nDCG@10``, ``Judged@20``).
        statistic: ``macro`` (mean over topics), ``micro`` (sum of numerators /
            sum of denominators; R@k only), ``ceiling`` (best mean a perfect
            run reaches; R@k only), ``optimistic`` (macro R@k if every
            pool-novel document in the top k were relevant), or ``pool-novel``
            (on ``Judged@k``: the number of (topic, document) pairs in the
            run's top k that the qrels never judged, summed over topics).
        value: full precision (rounded only for display).
        n_topics: topics behind the value.
    """

    run: str
    measure: str
    statistic: Statistic
    value: float
    n_topics: int


class ScoreChange(NamedTuple):
    """How one run's macro score moved from the parent qrels version to a child.

    Attributes:
        run: the run name.
        measure: canonical measure name.
        parent_value: macro value on the parent version.
        value: macro value on the child version.
        delta: ``value - parent_value``.
        parent_n_topics: topics averaged on the parent.
        n_topics: topics averaged on the child.
    """

    run: str
    measure: str
    parent_value: float
    value: float
    delta: float
    parent_n_topics: int
    n_topics: int


@dataclass(frozen=True, eq=False)
class Scoreboard:
    """Every chosen run scored against one qrels version.

    Attributes:
        qrels: metadata of the qrels version (name, collection, content hash, ...).
        runs: run names, in the order scored (oldest stored run first).
        evaluations: run name -> its ``Evaluation`` (per-topic values, curves,
            pool-novel documents).
        measures: the measures, in display order.
        cutoffs: the cutoffs k of R@k and Judged@k, ascending.
        rel: inclusive minimum grade of a relevant document.
        missing: the missing-topic policy applied.
        topics: topics every run is averaged over (natural id order).
        excluded_topics: qrels topics with |R| = 0 (excluded from every average).
        missing_by_run: run name -> qrels topics (|R| > 0) the run had no
            results for or the store marks failed; only runs that miss some.
        evaluator_version: ``services.evaluation.report.EVALUATOR_VERSION``.
        rows: the tidy ``ScoreRow`` list (see ``ScoreRow``), run by run.
        warnings: things a reader of the numbers should know (positives-only
            qrels; runs that built the pool the qrels came from).
        contributors: run -> its ``PoolContributor`` record, for the board's runs
            that were pooled into the pool lineage the qrels version judged.
    """

    qrels: QrelsVersionInfo
    runs: tuple[str, ...]
    evaluations: dict[str, Evaluation]
    measures: tuple[Measure, ...]
    cutoffs: tuple[int, ...]
    rel: int
    missing: MissingPolicy
    topics: tuple[str, ...]
    excluded_topics: tuple[str, ...]
    missing_by_run: dict[str, tuple[str, ...]]
    evaluator_version: str
    rows: tuple[ScoreRow, ...]
    warnings: tuple[str, ...] = field(default=())
    contributors: dict[str, PoolContributor] = field(default_factory=dict)

    @property
    def missing_topics(self) -> tuple[str, ...]:
        """Topics some run misses (union over runs, natural id order)."""
        return tuple(sorted({t for ts in self.missing_by_run.values() for t in ts}, key=natural_key))

    def value(self, run: str, measure: str, statistic: Statistic = "macro") -> float:
        """One number of the board.

        Raises:
            KeyError: no such (run, measure, statistic) row.
        """
        for r in self.rows:
            if r.run == run and r.measure == measure and r.statistic == statistic:
                return r.value
        raise KeyError((run, measure, statistic))

    def measure_table(self) -> list[dict[str, object]]:
        """Runs x measures (macro), each R@k followed by its ceiling.

        Returns:
            One dict per run: ``run``, then ``R@k`` and ``R@k ceiling`` per
            cutoff, then nDCG@10, RR@10, P@10 (full precision floats), then
            ``pool contributor``: ``"depth 20: R@k for k >= 20"`` for a run that
            built the pool the qrels came from, else "".
        """

        def columns(m: Measure) -> list[tuple[str, Statistic]]:
            if isinstance(m, R):
                return [(str(m), "macro"), (f"{m} ceiling", "ceiling")]
            return [] if isinstance(m, Judged) else [(str(m), "macro")]

        rows = self._table(columns)
        for row in rows:
            c = self.contributors.get(str(row["run"]))
            row["pool contributor"] = f"depth {c.depth}: R@k for k >= {c.depth}" if c else ""
        return rows

    def compact_table(self) -> list[dict[str, object]]:
        """Runs x measures (macro) narrow enough for a 1400 px screen: one column
        per measure and, for R@k, the ceiling as a last row (every run of a board
        is averaged over the same topics, so the ceiling is the same for all).

        Returns:
            One dict per run (``run``, R@k per cutoff, nDCG@10, RR@10, P@10,
            ``pool contributor`` as in ``measure_table``), then the row
            ``run = CEILING_ROW`` with the R@k ceilings (None elsewhere).
        """
        rows = self._table(lambda m: [] if isinstance(m, Judged) else [(str(m), "macro")])
        for row in rows:
            c = self.contributors.get(str(row["run"]))
            row["pool contributor"] = f"depth {c.depth}: R@k for k >= {c.depth}" if c else ""
        if self.runs:
            first = self.runs[0]
            rows.append({"run": CEILING_ROW, **{
                str(m): (self.value(first, str(m), "ceiling") if isinstance(m, R) else None)
                for m in self.measures if not isinstance(m, Judged)}})
        return rows

    def micro_table(self) -> list[dict[str, object]]:
        """Runs x R@k micro (all relevant retrieved within k / all relevant)."""
        return self._table(lambda m: [(str(m), "micro")] if isinstance(m, R) else [])

    def novelty_table(self) -> list[dict[str, object]]:
        """Runs x cutoffs: pool-novel counts and Judged@k (macro).

        Returns:
            One dict per run: ``run``, then ``pool-novel@k`` (int) per cutoff,
            then ``Judged@k`` (float) per cutoff.
        """
        out: list[dict[str, object]] = []
        for run in self.runs:
            row: dict[str, object] = {"run": run}
            for k in self.cutoffs:
                row[f"pool-novel@{k}"] = int(self.value(run, str(Judged(k)), "pool-novel"))
            for k in self.cutoffs:
                row[str(Judged(k))] = self.value(run, str(Judged(k)))
            out.append(row)
        return out

    def bounds_table(self) -> list[dict[str, object]]:
        """Runs x R@k: the point value (pool-novel documents non-relevant) and the optimistic bound.

        Returns:
            One dict per run: ``run``, then ``R@k`` and ``R@k optimistic`` per cutoff.
        """
        return self._table(lambda m: [(str(m), "macro"), (f"{m} optimistic", "optimistic")]
                           if isinstance(m, R) else [])

    def _table(self, columns_of: Callable[[Measure], list[tuple[str, Statistic]]]) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for run in self.runs:
            row: dict[str, object] = {"run": run}
            for m in self.measures:
                for column, statistic in columns_of(m):
                    row[column] = self.value(run, str(m), statistic)
            out.append(row)
        return out


class Drilldown(NamedTuple):
    """One run's results for one topic at cutoff k: what it missed and what nobody judged.

    Attributes:
        run: the run name.
        topic_id: the topic.
        k: the cutoff.
        n_relevant: |R|, relevant documents in the qrels for the topic.
        n_found: relevant documents the run ranked within k.
        misses: relevant documents not within k, grade descending, each with
            the rank where the run found it (beyond k) or None (not returned).
        unjudged: (rank, doc_id) of the documents within k that the qrels never
            judged (pool-novel), rank ascending.
    """

    run: str
    topic_id: str
    k: int
    n_relevant: int
    n_found: int
    misses: list[RelevantDoc]
    unjudged: list[tuple[int, str]]

    @property
    def recall(self) -> float:
        """R@k of the topic: n_found / n_relevant (0 when n_relevant is 0)."""
        return self.n_found / self.n_relevant if self.n_relevant else 0.0


def board_measures(cutoffs: Sequence[int]) -> tuple[Measure, ...]:
    """The measures of a scoreboard: R@k per cutoff, nDCG@10, RR@10, P@10, Judged@k per cutoff.

    Raises:
        ValidationError: no cutoff, or a cutoff < 1.

    Example:
        >>> [str(m) for m in board_measures([10, 100])]
        ['R@10', 'R@100', 'nDCG@10', 'RR@10', 'P@10', 'Judged@10', 'Judged@100']
    """
    ks = sorted(set(cutoffs))
    if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise ValidationError(f"expected cutoffs k >= 1 (e.g. 5, 10, 20, 50, 100), found {list(cutoffs)}.")
    return (*[R(k) for k in ks], *FIXED_MEASURES, *[Judged(k) for k in ks])


def _rows(name: str, e: Evaluation, cutoffs: Sequence[int]) -> list[ScoreRow]:
    rows: list[ScoreRow] = []
    for m in e.measures:
        a = e.aggregates[m]
        rows.append(ScoreRow(name, str(m), "macro", a.macro, a.n_topics))
        if isinstance(m, R):
            rows.append(ScoreRow(name, str(m), "micro", a.micro if a.micro is not None else float("nan"), a.n_topics))
            rows.append(ScoreRow(name, str(m), "ceiling", a.ceiling if a.ceiling is not None else float("nan"),
                                 a.n_topics))
            rows.append(ScoreRow(name, str(m), "optimistic", e.novelty[m.cutoff].macro_high, a.n_topics))
    for k in cutoffs:
        nov = e.novelty[k]
        rows.append(ScoreRow(name, str(Judged(k)), "pool-novel", float(nov.total_unjudged), len(e.topics)))
    return rows


def scoreboard(
    store: Store,
    qrels_version: str,
    *,
    run_names: Sequence[str] | None = None,
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    rel: int = 1,
    missing: MissingPolicy | str = "exclude",
) -> Scoreboard:
    """Score stored runs against a stored qrels version (qrels bound once).

    Args:
        store: the label store.
        qrels_version: name of a stored qrels version.
        run_names: stored runs to score, in display order; None = every stored
            run of the qrels version's collection (oldest first).
        cutoffs: the k of R@k and Judged@k and of the pool-novel counts (>= 1).
        rel: inclusive minimum grade of a relevant document (>= 0).
        missing: ``"exclude"`` (topics any run misses leave every run's
            averages; listed in ``missing_by_run``), ``"zero"`` or ``"fail"``.

    Returns:
        The ``Scoreboard`` (one ``Evaluation`` per run plus the tidy rows).

    Raises:
        UnknownNameError: unknown qrels version or run.
        ValidationError: a bad policy, cutoff or ``rel``, or a run of another collection.
        MissingTopicsError: ``missing="fail"`` and a run lacks a topic.

    Source:
        Missing-topic handling as ``services.evaluation.pipeline.score``; measures as
        ``scoring.evaluate`` (trec_eval conventions).

    Example:
        >>> board = scoreboard(store, "cranfield-v1", run_names=["bm25"])  # doctest: +SKIP
        >>> round(board.value("bm25", "R@20"), 4), board.missing  # doctest: +SKIP
        (0.7575, 'exclude')
    """
    from workbench.services.evaluation.load import load_run
    from workbench.services.evaluation.report import EVALUATOR_VERSION

    policy = check_policy(missing)
    measures = board_measures(cutoffs)
    ks = tuple(sorted(set(cutoffs)))
    info = store.qrels.get_qrels_info(qrels_version)
    names = list(run_names) if run_names is not None else [r.name for r in store.runs.list_runs(info.collection)]
    qrels = store.qrels.get_qrels(qrels_version)
    evaluator = Evaluator(qrels, measures, rel=rel, missing=policy)
    warnings: list[str] = []
    loaded = []
    for name in names:
        run_ref, ranked = load_run(name, lambda: store)
        if run_ref.collection and run_ref.collection != info.collection:
            raise ValidationError(
                f"run {name!r} is over collection {run_ref.collection!r}, qrels {qrels_version!r} over "
                f"{info.collection!r}; choose runs of {info.collection!r}."
            )
        if run_ref.collection_version and run_ref.collection_version != info.collection_version:
            warnings.append(f"run {name!r} was produced over collection version {run_ref.collection_version[:12]}, "
                            f"the qrels over {info.collection_version[:12]}: document ids may differ")
        loaded.append((run_ref, ranked))
    missing_by_run = {
        ref.name: lacked for ref, ranked in loaded if (lacked := evaluator.missing_topics(ranked, ref.failed_topics))
    }
    common: tuple[str, ...] | None = None
    if policy == "exclude":
        dropped = {t for ts in missing_by_run.values() for t in ts}
        common = tuple(t for t in evaluator.q.topic_ids if t not in dropped)
    evaluations: dict[str, Evaluation] = {}
    rows: list[ScoreRow] = []
    for ref, ranked in loaded:
        e = evaluator.evaluate(ranked, run_name=ref.name, failed_topics=ref.failed_topics, topics=common)
        evaluations[ref.name] = e
        rows.extend(_rows(ref.name, e, ks))
        if e.ignored_topics:
            warnings.append(f"run {ref.name!r} has {len(e.ignored_topics)} topic(s) not in the qrels (ignored)")
    first = next(iter(evaluations.values()), None)
    if first is not None:
        topics, excluded = first.topics, first.excluded_topics
    else:  # no run: nothing evaluated; the |R| = 0 topics still come from the qrels
        topics = ()
        excluded = tuple(sorted((t for t, docs in qrels.items() if not any(g >= rel for g in docs.values())),
                                key=natural_key))
    if positives_only(qrels_grades(qrels), rel):
        warnings.append(f"qrels {qrels_version}: {positives_only_warning(rel)}")
    contributors = {r: c for r, c in pool_contributors(store, qrels_version).items() if r in evaluations}
    warnings.extend(contributor_notes(contributors, list(evaluations), qrels_version))
    return Scoreboard(
        qrels=info, runs=tuple(evaluations), evaluations=evaluations, measures=measures, cutoffs=ks, rel=rel,
        missing=policy, topics=topics, excluded_topics=excluded, missing_by_run=missing_by_run,
        evaluator_version=EVALUATOR_VERSION, rows=tuple(rows), warnings=tuple(warnings),
        contributors=contributors,
    )


class RunCoverage(NamedTuple):
    """Which of a qrels version's evaluated topics a run has results for.

    Attributes:
        run: the run name.
        n_covered: qrels topics with |R| > 0 the run has results for.
        n_topics: qrels topics with |R| > 0.
        missing: the topics it lacks (no results, or marked empty/failed), natural order.
    """

    run: str
    n_covered: int
    n_topics: int
    missing: tuple[str, ...]

    @property
    def complete(self) -> bool:
        """True when the run covers every topic."""
        return not self.missing


def run_coverage(store: Store, qrels_version: str, run_names: Sequence[str] | None = None, *,
                 rel: int = 1) -> list[RunCoverage]:
    """Topic coverage of each run against a qrels version (the Scoreboard's
    default run selection: the complete runs; partial runs are shown apart).

    A topic is covered when the run has results for it and did not report it
    empty or failed, as ``Evaluator.missing_topics`` decides on the loaded run;
    here from the stored per-topic statuses and the qrels' relevant topics alone
    (two queries: no run entry and no judgment is read, issue 26).

    Raises:
        UnknownNameError: unknown qrels version or run.
    """
    info = store.qrels.get_qrels_info(qrels_version)
    names = list(run_names) if run_names is not None else [r.name for r in store.runs.list_runs(info.collection)]
    wanted = store.qrels.relevant_topics(qrels_version, rel)
    covered = store.runs.covered_topics(names)
    out = []
    for name in names:
        lacked = tuple(t for t in wanted if t not in covered[name])
        out.append(RunCoverage(name, len(wanted) - len(lacked), len(wanted), lacked))
    return out


class VersionCoverage(NamedTuple):
    """A run's topic coverage of two qrels versions (the score changes from one to the other).

    Attributes:
        run: the run name.
        before: its coverage of the version changed from (the parent).
        after: its coverage of the version changed to.
    """

    run: str
    before: RunCoverage
    after: RunCoverage

    @property
    def complete(self) -> bool:
        """True when the run covers every evaluated topic of both versions."""
        return self.before.complete and self.after.complete


def version_coverage(before: Sequence[RunCoverage], after: Sequence[RunCoverage]) -> list[VersionCoverage]:
    """Pair each run's coverage of two qrels versions (``run_coverage`` of each).

    The Qrels versions page scores the complete runs together and keeps the
    partial ones apart, as the Scoreboard does: under ``exclude`` one partial
    run would shrink every run's topic set on both versions to the topics it covers.

    Args:
        before: ``run_coverage`` of the version changed from.
        after: ``run_coverage`` of the version changed to (same runs).

    Returns:
        One ``VersionCoverage`` per run, in ``after``'s order; runs in only one list are left out.

    Example:
        >>> before = [RunCoverage("bm25", 2, 2, ()), RunCoverage("partial", 1, 2, ("2",))]
        >>> after = [RunCoverage("bm25", 3, 3, ()), RunCoverage("partial", 3, 3, ())]
        >>> [(c.run, c.complete) for c in version_coverage(before, after)]  # partial lacks topic 2 of before
        [('bm25', True), ('partial', False)]
    """
    by = {c.run: c for c in before}
    return [VersionCoverage(c.run, by[c.run], c) for c in after if c.run in by]


def changes_between(parent: Scoreboard, child: Scoreboard) -> list[ScoreChange]:
    """Macro score changes of every run on both boards, from ``parent`` to ``child``.

    Args:
        parent: the board of the parent qrels version.
        child: the board of the child version (same runs and measures expected;
            runs or measures on only one board are skipped).

    Returns:
        One ``ScoreChange`` per (run, measure), runs in the child's order,
        measures in board order.
    """
    wanted = [str(m) for m in child.measures if m in set(parent.measures)]
    out: list[ScoreChange] = []
    for run in child.runs:
        if run not in parent.evaluations:
            continue
        pe, ce = parent.evaluations[run], child.evaluations[run]
        for m in child.measures:
            if str(m) not in wanted:
                continue
            pa, ca = pe.aggregates[m], ce.aggregates[m]
            out.append(ScoreChange(run, str(m), pa.macro, ca.macro, ca.macro - pa.macro, pa.n_topics, ca.n_topics))
    return out


def version_changes(
    store: Store,
    qrels_version: str,
    *,
    run_names: Sequence[str] | None = None,
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    rel: int = 1,
    missing: MissingPolicy | str = "exclude",
) -> list[ScoreChange]:
    """How every run's scores moved from a qrels version's parent to the version.

    Both versions are scored as ``scoreboard`` does (each over its own topics:
    the values equal the two scoreboards'), and the macro values are subtracted.

    Args:
        store: the label store.
        qrels_version: a stored qrels version.
        run_names: runs to compare; None = every stored run of its collection.
        cutoffs, rel, missing: as ``scoreboard``.

    Returns:
        One ``ScoreChange`` per (run, measure); empty when the version has no parent.

    Raises:
        As ``scoreboard``.
    """
    info = store.qrels.get_qrels_info(qrels_version)
    if not info.parent_version:
        return []
    kwargs = {"run_names": run_names, "cutoffs": cutoffs, "rel": rel, "missing": missing}
    parent = scoreboard(store, info.parent_version, **kwargs)  # type: ignore[arg-type]
    child = scoreboard(store, qrels_version, **kwargs)  # type: ignore[arg-type]
    return changes_between(parent, child)


def topic_drilldown(evaluation: Evaluation, topic_id: str, k: int) -> Drilldown:
    """Misses and pool-novel documents of one run for one topic at cutoff k.

    Args:
        evaluation: one run's evaluation (e.g. ``Scoreboard.evaluations[run]``).
        topic_id: a topic of ``evaluation.topics``.
        k: cutoff, 1 <= k <= the evaluation's largest cutoff (the pool-novel
            lists stop there).

    Returns:
        The ``Drilldown``: relevant documents not within k (with the rank found
        beyond k, or None) and unjudged documents within k (with their ranks).

    Raises:
        ValidationError: k out of range, or the topic is not evaluated (|R| = 0,
            missing from the run under ``exclude``, or not in the qrels).

    Source:
        TREC recall at k (trec_eval ``recall_k``); pool-novel = returned within
        k with no judgment (Buckley & Voorhees, SIGIR 2004, doi:10.1145/1008992.1009000).

    Example:
        >>> from workbench.scoring.evaluate import evaluate
        >>> e = evaluate({"1": {"a": 2, "b": 1, "c": 0}}, {"1": {"x": 3.0, "a": 2.0, "c": 1.0}}, ["R@2"])
        >>> d = topic_drilldown(e, "1", 2)
        >>> d.n_found, [(m.doc_id, m.grade, m.rank) for m in d.misses], d.unjudged
        (1, [('b', 1, None)], [(1, 'x')])
    """
    kmax = evaluation.novel_documents.max_cutoff
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= kmax:
        raise ValidationError(f"expected a cutoff k in 1..{kmax}, found {k!r}. Choose k at most {kmax}.")
    if topic_id not in evaluation.topics:
        why = ("|R| = 0 in the qrels" if topic_id in evaluation.excluded_topics
               else "missing from the run" if topic_id in evaluation.missing_topics else "not in the qrels")
        raise ValidationError(
            f"expected a topic evaluated for run {evaluation.run_name!r}, found topic {topic_id!r} ({why}). "
            f"Choose one of its {len(evaluation.topics)} evaluated topics."
        )
    relevant = [d for d in evaluation.relevant if d.topic_id == topic_id]
    misses = [d for d in relevant if d.rank is None or d.rank > k]
    unjudged = evaluation.novel_documents.with_ranks(k).get(topic_id, [])
    return Drilldown(evaluation.run_name, topic_id, k, len(relevant), len(relevant) - len(misses), misses, unjudged)


def document_titles(
    store: Store, collection: str, doc_ids: Sequence[str], version: str | None = None
) -> dict[str, str]:
    """doc_id -> title (``""`` when untitled, ``"(not in the collection)"`` when unknown).

    Args:
        store: the label store.
        collection: the collection name.
        doc_ids: documents to look up (one store read each, about 10 ms: meant
            for drill-down lists, not whole runs).
        version: the collection version to read (None = the latest).

    Raises:
        UnknownNameError: unknown collection or version.
    """
    out: dict[str, str] = {}
    for doc_id in dict.fromkeys(doc_ids):
        try:
            out[doc_id] = store.collections.get_document(collection, doc_id, version).title
        except UnknownNameError:
            out[doc_id] = "(not in the collection)"
    return out


def qrels_lineage(store: Store, qrels_version: str) -> list[str]:
    """The chain of parent versions down to ``qrels_version``, root first.

    Raises:
        UnknownNameError: unknown version.
    """
    chain = [qrels_version]
    info = store.qrels.get_qrels_info(qrels_version)
    while info.parent_version and info.parent_version not in chain:
        chain.append(info.parent_version)
        info = store.qrels.get_qrels_info(info.parent_version)
    return chain[::-1]


def lineage_chains(versions: Sequence[QrelsVersionInfo]) -> list[list[str]]:
    """Every root-to-leaf chain of parent links among ``versions`` (e.g. [["v1", "v2"], ["ref"]]).

    A version whose parent is not among ``versions`` starts a chain. Chains are
    ordered by their root's position in ``versions``; siblings branch into
    separate chains.

    Example:
        >>> from types import SimpleNamespace as V
        >>> lineage_chains([V(name="v1", parent_version=None), V(name="v2", parent_version="v1"),
        ...                 V(name="ref", parent_version=None)])
        [['v1', 'v2'], ['ref']]
    """
    names = {v.name for v in versions}
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for v in versions:
        if v.parent_version and v.parent_version in names and v.parent_version != v.name:
            children.setdefault(v.parent_version, []).append(v.name)
        else:
            roots.append(v.name)
    chains: list[list[str]] = []

    def walk(path: list[str]) -> None:
        kids = [c for c in children.get(path[-1], []) if c not in path]
        if not kids:
            chains.append(path)
        for c in kids:
            walk([*path, c])

    for r in roots:
        walk([r])
    return chains
