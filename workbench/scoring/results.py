"""What an evaluation is: the result records of scoring one run, without the scorer (no numpy).

``Evaluation`` (per-topic ``TopicMetric``s, ``Aggregate``s, novelty, the
recall curve, the relevant documents with their ranks) and its long form
(``ValueRow``, ``value_rows``), the missing-topic policies and their check.
Two scorers make them: ``scoring.evaluate.Evaluator`` (columnar, numpy) and
``scoring.small.SmallEvaluator`` (plain Python, for small runs), with the same
numbers; reports and services read them through this module so that scoring
a small run file needs no numpy import. ``scoring.evaluate`` re-exports every
name (its module docstring states the semantics).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from workbench.errors import MissingTopicsError, UsageError, ValidationError
from workbench.ranking import natural_key
from workbench.scoring.measures import Measure, R, default_measures, parse_measures
from workbench.scoring.novelty import NovelDocuments, NovelLists, NoveltyAtK

if TYPE_CHECKING:  # built on access only (ValueMetrics): a file score prints aggregates without importing the records
    from workbench.types import TopicMetric

MIN_TOPICS = 5
"""Fewest paired topics ``scoring.compare`` and the gate run paired tests on (and the
fewest topics a slice needs to get statistics); below it they are refused. Defined
here, beside the results, so that the scorer's defaults need not import ``compare``."""

MissingPolicy = Literal["fail", "zero", "exclude"]
"""What to do with qrels topics a run has no results for."""

MISSING_POLICIES: tuple[str, ...] = ("fail", "zero", "exclude")

SCORER_ID = "columnar-numpy/1"
"""Identifies the columnar scorer (``scoring.evaluate``) in reports and stored evaluations."""

MISSING_HINT = "Pass --missing zero to score them 0, or --missing exclude to leave them out of the averages."


@dataclass(frozen=True, slots=True)
class Aggregate:
    """A measure averaged over the evaluation's topics.

    Attributes:
        measure: the measure.
        n_topics: topics averaged over.
        macro: mean of the per-topic values (nan when n_topics = 0).
        micro: sum_numerator / sum_denominator, or None where not meaningful (RR, AP);
            for a count (``NumRelRet``, ``Measure.IS_COUNT``) the total, sum_numerator,
            as trec_eval's ``all`` line prints it.
        ceiling: best mean a perfect system reaches (R@k, P@k), else None.
        sum_value: sum of the per-topic values.
        sum_numerator: sum of the per-topic numerators.
        sum_denominator: sum of the per-topic denominators.
    """

    measure: Measure
    n_topics: int
    macro: float
    micro: float | None
    ceiling: float | None
    sum_value: float
    sum_numerator: float
    sum_denominator: float


@dataclass(frozen=True, slots=True)
class RecallCurve:
    """R@k for k = 1..depth, over the evaluation's topics.

    Attributes:
        macro: tuple, element k-1 is the macro R@k.
        micro: element k-1 is sum(hits@k) / sum(|R|).
        ceiling: element k-1 is mean(min(k, |R|) / |R|).
        n_topics: topics averaged over.
    """

    macro: tuple[float, ...]
    micro: tuple[float, ...]
    ceiling: tuple[float, ...]
    n_topics: int

    @property
    def depth(self) -> int:
        """The largest k of the curve."""
        return len(self.macro)


class RelevantDoc(NamedTuple):
    """A relevant (topic, document) pair of the qrels and where the run put it.

    Attributes:
        topic_id: the topic.
        doc_id: the document.
        grade: its grade (>= the threshold).
        rank: 1-based rank in the run, or None when the run did not return it.
    """

    topic_id: str
    doc_id: str
    grade: int
    rank: int | None


@dataclass(frozen=True, eq=False)
class Evaluation:
    """The scores of one run against one set of qrels.

    Attributes:
        run_name: the run.
        measures: the measures, in report order.
        rel: the evaluation's relevance threshold (inclusive).
        missing: the missing-topic policy applied.
        topics: topics every measure is averaged over, in natural id order.
        excluded_topics: qrels topics with |R| = 0 at the strictest threshold.
        missing_topics: qrels topics without results (or reported failed);
            scored 0 under ``"zero"``, left out under ``"exclude"``.
        ignored_topics: run topics that are not in the qrels.
        n_results: topic_id -> documents returned (after dropping duplicates).
        duplicates: topic_id -> duplicate lines dropped.
        per_topic: measure -> topic_id -> TopicMetric, one per topic of ``topics``.
        aggregates: measure -> Aggregate.
        novelty: cutoff -> NoveltyAtK, for every cutoff of the measures.
        novel_documents: the unjudged documents down to the largest cutoff.
        curve: R@k for k = 1..depth (rel = ``rel``).
        relevant: every relevant (topic, doc) of ``topics`` with its rank in the run.
        scorer: implementation id (``SCORER_ID``, ``scoring.small.SMALL_SCORER_ID`` or the reference's).
        documents_kept: False for a compact evaluation (``without_documents``):
            ``relevant`` is empty and ``novel_documents`` holds no lists; every
            number (values, aggregates, novelty counts, curve) is unchanged.
    """

    run_name: str
    measures: tuple[Measure, ...]
    rel: int
    missing: MissingPolicy
    topics: tuple[str, ...]
    excluded_topics: tuple[str, ...]
    missing_topics: tuple[str, ...]
    ignored_topics: tuple[str, ...]
    n_results: Mapping[str, int]
    duplicates: Mapping[str, int]
    per_topic: Mapping[Measure, Mapping[str, TopicMetric]]
    aggregates: Mapping[Measure, Aggregate]
    novelty: Mapping[int, NoveltyAtK]
    novel_documents: NovelDocuments | NovelLists
    curve: RecallCurve
    relevant: tuple[RelevantDoc, ...]
    scorer: str = SCORER_ID
    documents_kept: bool = True

    def without_documents(self) -> Evaluation:
        """This evaluation without its document lists (``relevant``, the pool-novel lists).

        What a report of many runs keeps per run when it prints no lists: the
        per-topic values, aggregates, novelty counts and curve, a few
        kilobytes per topic set instead of one row per relevant and per
        unjudged document (which would make memory grow with the number of runs).
        """
        return dataclasses.replace(self, relevant=(), novel_documents=self.novel_documents.dropped(),
                                   documents_kept=False)

    def value(self, measure: Measure | str, topic_id: str) -> float:
        """The per-topic value of ``measure`` (a Measure or its name) for ``topic_id``.

        Raises:
            KeyError: the measure is not in this evaluation or the topic is not evaluated.
        """
        m = _as_measure(measure)
        return self.per_topic[m][topic_id].value

    def misses(self, k: int) -> list[RelevantDoc]:
        """Relevant (topic, doc) pairs the run did not return within k, in topic then grade order.

        Each keeps the rank where the run found it (beyond k) or None.

        Raises:
            ValueError: a compact evaluation (``without_documents``).
        """
        if not self.documents_kept:
            raise ValueError("the relevant documents of this evaluation were not kept (without_documents)")
        return [d for d in self.relevant if d.rank is None or d.rank > k]

    @property
    def n_duplicates(self) -> int:
        """Total duplicate lines dropped."""
        return sum(self.duplicates.values())


class ValueMetrics(Mapping[str, "TopicMetric"]):
    """topic_id -> ``TopicMetric`` of one measure, built on access from value columns (no object per topic up front).

    The columns are indexable by a topic's position: Python lists (``scoring.small.ListMetrics``) or numpy
    arrays (``scoring.evaluate.TopicMetrics``). Topics iterate in evaluation order.
    """

    __slots__ = ("_den", "_measure", "_num", "_position", "_topics", "_values")

    def __init__(self, measure: str, topics: tuple[str, ...], position: Mapping[str, int], values: Any,
                 numerators: Any, denominators: Any) -> None:
        """``values``, ``numerators``, ``denominators``: floats by topic position (lists or float64 arrays)."""
        self._measure = measure
        self._topics = topics
        self._position = position
        self._values = values
        self._num = numerators
        self._den = denominators

    def __getitem__(self, topic_id: str) -> TopicMetric:
        from workbench.types import TopicMetric

        i = self._position[topic_id]
        return TopicMetric(topic_id, self._measure, float(self._values[i]), float(self._num[i]), float(self._den[i]))

    def __iter__(self) -> Iterator[str]:
        return iter(self._topics)

    def __len__(self) -> int:
        return len(self._topics)

    def __contains__(self, topic_id: object) -> bool:
        return topic_id in self._position

    def __repr__(self) -> str:
        return repr(dict(self))


def topic_value_list(per_topic: Mapping[str, TopicMetric], topics: tuple[str, ...]) -> list[float]:
    """The values of one measure's per-topic mapping for ``topics``, in order, as floats.

    The columnar scorer's mappings (``scoring.evaluate.TopicMetrics``) give them
    from their arrays at once (``value_list``), without a ``TopicMetric`` per
    topic; any other mapping is read topic by topic.

    Raises:
        KeyError: a topic that is not in the mapping.
    """
    fast = getattr(per_topic, "value_list", None)
    if fast is not None:
        values: list[float] = fast(topics)
        return values
    return [per_topic[t].value for t in topics]


def _as_measure(measure: Measure | str) -> Measure:
    return measure if isinstance(measure, Measure) else parse_measures([measure])[0]



def micro_of(measure: Measure, sum_numerator: float, sum_denominator: float) -> float:
    """The micro aggregate of a measure with ``HAS_MICRO``: sum(numerators) / sum(denominators), 0 when the
    denominators sum to 0; for a count (``IS_COUNT``: ``NumRelRet``, ``NumRel``, ``NumRet``) the total.

    Example:
        >>> from workbench.scoring.measures import NumRelRet, R
        >>> micro_of(R(10), 3.0, 12.0), micro_of(NumRelRet(), 7.0, 4.0)
        (0.25, 7.0)
    """
    if measure.IS_COUNT:
        return sum_numerator
    return sum_numerator / sum_denominator if sum_denominator else 0.0


def check_policy(missing: str) -> MissingPolicy:
    """``missing`` if it is a known policy.

    Raises:
        UsageError: it is not one of ``MISSING_POLICIES``.
    """
    if missing not in MISSING_POLICIES:
        raise UsageError(
            f"expected a missing-topic policy in {', '.join(MISSING_POLICIES)}, found {missing!r}."
        )
    return missing  # type: ignore[return-value]


def check_settings(
    measures: Iterable[Measure | str] | None, rel: int, missing: str
) -> tuple[tuple[Measure, ...], int, MissingPolicy]:
    """An evaluator's settings, checked: both scorers bind them the same way.

    Args:
        measures: measures or their names; None = ``default_measures()``.
        rel: inclusive minimum grade of a relevant document, an integer >= 0.
        missing: a missing-topic policy (``MISSING_POLICIES``).

    Returns:
        (the measures, ``rel``, the policy).

    Raises:
        ValidationError: ``rel`` is not an integer >= 0, a bad measure name, no measure, or an estimated
            measure (``Rhat@k``: the pipeline estimates it from a sample's qrels version, no scorer computes it).
        UsageError: an unknown policy.
        UnknownNameError: an unknown measure name.

    Example:
        >>> check_settings(["R@10"], 1, "zero")
        ((Measure('R@10'),), 1, 'zero')
    """
    if isinstance(rel, bool) or not isinstance(rel, int) or rel < 0:
        raise ValidationError(f"expected rel to be an integer >= 0, found {rel!r}. Use --rel 1 (or 2 for graded qrels).")
    policy = check_policy(missing)
    parsed = parse_measures(measures) if measures is not None else default_measures()
    if not parsed:
        raise ValidationError("expected at least one measure, found none. Pass e.g. --measure R@100.")
    estimated = [m for m in parsed if m.ESTIMATED]
    if estimated:
        raise ValidationError(
            f"measure {estimated[0]} is estimated from a judged sample, not computed from qrels: score it against a "
            "qrels version published from a sample pool (`workbench score`, `compare` or `gate` with --qrels "
            "SAMPLE_VERSION; docs/sampling.md).")
    return parsed, rel, policy


class EvaluatedTopics(NamedTuple):
    """Which topics one evaluation averages over, and which it lists instead (``evaluated_topics``).

    A NamedTuple rather than a dataclass: it is defined when a small run file is
    scored, and a frozen dataclass costs some 4M instructions to define.

    Attributes:
        topics: the evaluated topics, natural id order (``Evaluation.topics``).
        excluded: qrels topics with |R| = 0 at the strictest threshold, natural order.
        missing: evaluated topics without results or reported failed, natural order
            (under ``"exclude"`` they are no longer in ``topics``).
        ignored: run topics with results that are not in the qrels, natural order.
        zeroed: the missing topics scored 0 (``"zero"``); empty under ``"exclude"``.
    """

    topics: tuple[str, ...]
    excluded: tuple[str, ...]
    missing: tuple[str, ...]
    ignored: tuple[str, ...]
    zeroed: frozenset[str]


def evaluated_topics(
    n_relevant: Mapping[str, int],
    n_results: Mapping[str, int],
    *,
    failed: Collection[str],
    restrict: Collection[str] | None,
    missing: MissingPolicy,
    run_name: str,
) -> EvaluatedTopics:
    """The topic rule both scorers apply (``scoring.evaluate``'s module docstring: Topics, Missing topics).

    Args:
        n_relevant: qrels topic -> |R| at the strictest threshold of the measures, in qrels order.
        n_results: run topic -> documents returned (0 or absent: no results).
        failed: topics the run's producer reported empty or failed: missing even with results.
        restrict: evaluate only these qrels topics; None = all.
        missing: the missing-topic policy.
        run_name: the run, named in the error.

    Returns:
        ``EvaluatedTopics``: topics with |R| > 0 (within ``restrict``) are evaluated,
        those with |R| = 0 excluded; run topics absent from the qrels ignored; the
        missing ones zeroed (``"zero"``) or left out (``"exclude"``).

    Raises:
        MissingTopicsError: policy ``"fail"`` and some evaluated topic is missing.

    Example:
        >>> s = evaluated_topics({"2": 1, "10": 3, "5": 0}, {"10": 4, "9": 2}, failed=(), restrict=None,
        ...                      missing="zero", run_name="bm25")
        >>> s.topics, s.excluded, s.missing, s.ignored
        (('2', '10'), ('5',), ('2',), ('9',))
    """
    ignored = tuple(sorted((t for t, c in n_results.items() if c and t not in n_relevant), key=natural_key))
    base = [t for t, n in n_relevant.items() if n > 0]
    excluded = tuple(sorted((t for t, n in n_relevant.items() if n == 0), key=natural_key))
    if restrict is not None:
        wanted = set(restrict)
        base = [t for t in base if t in wanted]
    missing_list = [t for t in base if not n_results.get(t, 0) or t in failed]
    missing_ids = tuple(sorted(missing_list, key=natural_key))
    if missing_list and missing == "fail":
        raise MissingTopicsError(run_name, missing_ids, MISSING_HINT)
    zeroed = frozenset(missing_list)
    if missing == "exclude":
        base = [t for t in base if t not in zeroed]
        zeroed = frozenset()
    return EvaluatedTopics(tuple(sorted(base, key=natural_key)), excluded, missing_ids, ignored, zeroed)


class ValueRow(NamedTuple):
    """One number of an evaluation in long form (what reports and the store write).

    Attributes:
        measure: canonical measure name.
        aggregate: ``macro`` | ``micro`` | ``ceiling`` | ``optimistic`` | ``unjudged`` | a topic_id.
        value: the value.
        numerator: its numerator (for ``macro``: the sum of per-topic values).
        denominator: its denominator (for ``macro``: the number of topics).
        n_topics: topics behind it (1 for a per-topic row).
    """

    measure: str
    aggregate: str
    value: float
    numerator: float
    denominator: float
    n_topics: int


def value_rows(e: Evaluation, *, per_topic: bool = True) -> list[ValueRow]:
    """An evaluation as long-form rows: per measure its aggregates, then (optionally) per topic.

    ``optimistic`` (macro R@k if every pool-novel document were relevant) and
    ``unjudged`` (pool-novel share of the top k: total unjudged / total
    returned) accompany each R@k. A per-topic row's ``aggregate`` is its topic id
    (the stored ``evaluations`` layout); reports that must tell a topic named
    ``macro`` from the mean use ``aggregate_rows`` and ``topic_rows`` apart.
    """
    rows: list[ValueRow] = []
    for m in e.measures:
        rows.extend(aggregate_rows(e, m))
        if per_topic:
            rows.extend(topic_rows(e, m))
    return rows


def aggregate_rows(e: Evaluation, m: Measure) -> list[ValueRow]:
    """The aggregate rows of one measure: ``macro``, then ``micro`` and ``ceiling`` where defined, then
    ``optimistic`` and ``unjudged`` for an R@k with novelty counts."""
    a = e.aggregates[m]
    name = str(m)
    n = a.n_topics
    rows = [ValueRow(name, "macro", a.macro, a.sum_value, n, n)]
    if a.micro is not None:  # a count's micro is its total: numerator / 1
        rows.append(ValueRow(name, "micro", a.micro, a.sum_numerator, 1.0 if m.IS_COUNT else a.sum_denominator, n))
    if a.ceiling is not None:
        rows.append(ValueRow(name, "ceiling", a.ceiling, a.ceiling * n, n, n))
    if isinstance(m, R) and m.cutoff is not None and m.cutoff in e.novelty:
        nov = e.novelty[m.cutoff]
        rows.append(ValueRow(name, "optimistic", nov.macro_high, nov.macro_high * n, n, n))
        rows.append(ValueRow(name, "unjudged", nov.unjudged_share, nov.total_unjudged, nov.total_returned, n))
    return rows


def topic_rows(e: Evaluation, m: Measure) -> list[ValueRow]:
    """One row per topic of one measure, in evaluation order; ``aggregate`` holds the topic id."""
    name = str(m)
    return [ValueRow(name, t, tm.value, tm.numerator, tm.denominator, 1) for t, tm in e.per_topic[m].items()]
