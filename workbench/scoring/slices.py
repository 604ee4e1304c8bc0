"""Slices: topics grouped by a key, each measure averaged per group, paired tests per group.

A *slice key* partitions the evaluated topics; each of its *values* is a slice.
Keys are either topic-metadata keys (intent, locale, product area, any key the
topics carry; a topic without the key falls into ``(none)``) or one of the
derived keys built in:

* ``query_length``: terms in the topic's query (``\\w+`` runs of its text), in
  buckets ``1-2``, ``3-5``, ``6-10``, ``11-20``, ``>20``;
* ``n_relevant``: |R| (documents with grade >= the threshold), in buckets
  ``1``, ``2-5``, ``6-20``, ``>20``;
* ``pool_coverage``: Judged@K of the *reference run* (the first run scored; the
  baseline of a comparison): the share of its top K the qrels judged, in
  buckets ``100%``, ``90-99%``, ``50-89%``, ``<50%`` (a low share means the
  pool was shallow for that topic and its R@K is a loose lower bound).

Derived names take precedence over metadata keys of the same name.

Per slice: the topic count beside each measure's macro mean (mean of the
per-topic values over the slice's topics, full precision). A slice with fewer
than ``min_topics`` topics (default 5) is *too small for statistics*: it is
still listed with its means, but gets no paired test and no floor verdict.

Source:
    Slicing by intent, locale, query length and |R|: the recall-testing design
    note this project follows (../shared/seeds/004_f124302079e96b46.txt);
    Judged@k: ir_measures (MacAvaney et al., ECIR 2022).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from workbench.errors import UnknownOptionValueError, ValidationError
from workbench.ranking import natural_key
from workbench.scoring.compare import (
    PairedTest,
    paired_bootstrap,
    paired_permutation_test,
)
from workbench.scoring.measures import Measure
from workbench.scoring.results import MIN_TOPICS, Evaluation

NONE_VALUE = "(none)"
"""The slice of topics that lack a metadata key."""

QUERY_LENGTH_BUCKETS: tuple[tuple[int, int | None, str], ...] = (
    (1, 2, "1-2"), (3, 5, "3-5"), (6, 10, "6-10"), (11, 20, "11-20"), (21, None, ">20"))
N_RELEVANT_BUCKETS: tuple[tuple[int, int | None, str], ...] = (
    (1, 1, "1"), (2, 5, "2-5"), (6, 20, "6-20"), (21, None, ">20"))
COVERAGE_BUCKETS: tuple[str, ...] = ("100%", "90-99%", "50-89%", "<50%")

_TERM = re.compile(r"\w+")


def _bucket(n: int, buckets: Sequence[tuple[int, int | None, str]]) -> str:
    for low, high, label in buckets:
        if n >= low and (high is None or n <= high):
            return label
    return "0"


def query_terms(text: str) -> int:
    """Terms in a query: runs of word characters (``\\w+``).

    Example:
        >>> query_terms("what similarity laws must be obeyed ?")
        6
    """
    return len(_TERM.findall(text))


def query_length_bucket(n_terms: int) -> str:
    """The ``query_length`` slice of a query with ``n_terms`` terms (``0`` for an empty query).

    Example:
        >>> [query_length_bucket(n) for n in (1, 3, 10, 11, 40)]
        ['1-2', '3-5', '6-10', '11-20', '>20']
    """
    return _bucket(n_terms, QUERY_LENGTH_BUCKETS)


def n_relevant_bucket(n: int) -> str:
    """The ``n_relevant`` slice of a topic with |R| = n (>= 1 for an evaluated topic).

    Example:
        >>> [n_relevant_bucket(n) for n in (1, 2, 5, 6, 20, 21)]
        ['1', '2-5', '2-5', '6-20', '6-20', '>20']
    """
    return _bucket(n, N_RELEVANT_BUCKETS)


def coverage_bucket(share: float) -> str:
    """The ``pool_coverage`` slice of a topic whose reference run has Judged@K = ``share``.

    Full precision: 0.999 is ``90-99%``, only 1.0 is ``100%``.

    Example:
        >>> [coverage_bucket(x) for x in (1.0, 0.999, 0.9, 0.5, 0.49)]
        ['100%', '90-99%', '90-99%', '50-89%', '<50%']
    """
    if share >= 1.0:
        return "100%"
    if share >= 0.9:
        return "90-99%"
    if share >= 0.5:
        return "50-89%"
    return "<50%"


@dataclass(frozen=True)
class SliceKey:
    """A partition of topics into slices.

    Attributes:
        key: the key's name (``query_length``, ``n_relevant``, ``pool_coverage`` or a metadata key).
        description: what the values mean, for reports.
        values: topic_id -> slice value, for every topic it knows.
        order: display order of the values (buckets in order, else natural order).
    """

    key: str
    description: str
    values: Mapping[str, str]
    order: tuple[str, ...]

    def value(self, topic_id: str) -> str:
        """The slice of ``topic_id`` (``(none)`` when the key does not know it)."""
        return self.values.get(topic_id, NONE_VALUE)


DERIVED_KEYS: tuple[str, ...] = ("query_length", "n_relevant", "pool_coverage")
"""Slice keys computed from the topics, the qrels and the reference run."""


@dataclass(frozen=True)
class SliceSources:
    """What slice keys are built from.

    Attributes:
        queries: topic_id -> query text (for ``query_length``); empty when unknown.
        n_relevant: topic_id -> |R| at the evaluation's threshold.
        judged_share: topic_id -> Judged@K of the reference run (for ``pool_coverage``).
        coverage_k: the K of ``judged_share``.
        reference_run: the reference run's name (for the description).
        metadata: topic_id -> key -> value (topic metadata); empty when none.
    """

    queries: Mapping[str, str]
    n_relevant: Mapping[str, int]
    judged_share: Mapping[str, float]
    coverage_k: int
    reference_run: str
    metadata: Mapping[str, Mapping[str, object]]

    def known_keys(self) -> list[str]:
        """The derived keys and every metadata key of any topic, sorted after the derived ones."""
        meta = sorted({k for m in self.metadata.values() for k in m} - set(DERIVED_KEYS))
        return [*DERIVED_KEYS, *meta]


def slice_key(key: str, sources: SliceSources, topics: Sequence[str]) -> SliceKey:
    """Build the partition of ``topics`` by ``key``.

    Args:
        key: a derived key (``DERIVED_KEYS``) or a topic-metadata key.
        sources: what the keys are built from.
        topics: the evaluated topics (every one gets a value).

    Returns:
        The ``SliceKey`` (a metadata value is shown with ``str``; a topic without
        the key gets ``(none)``).

    Raises:
        UnknownNameError: the key is neither derived nor carried by any topic
            (lists the keys known).
        ValidationError: ``query_length`` without query texts.
    """
    builders: dict[str, Callable[[], SliceKey]] = {
        "query_length": lambda: _query_length(sources, topics),
        "n_relevant": lambda: _n_relevant(sources, topics),
        "pool_coverage": lambda: _coverage(sources, topics),
    }
    if key in builders:
        return builders[key]()
    known = sources.known_keys()
    if key not in known:
        raise UnknownOptionValueError("slice key (derived, or a topic-metadata key)", key, known)
    values = {t: _shown(sources.metadata[t][key]) for t in topics
              if t in sources.metadata and key in sources.metadata[t]}
    present = sorted(set(values.values()), key=natural_key)
    order = (*present, NONE_VALUE) if len(values) < len(topics) else tuple(present)
    return SliceKey(key, f"topic metadata {key!r} ({NONE_VALUE}: topics without it)", values, order)


def _shown(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _query_length(sources: SliceSources, topics: Sequence[str]) -> SliceKey:
    if not sources.queries:
        raise ValidationError(
            "slice key query_length needs the topics' query texts, found none; score stored runs or "
            "stored qrels (their collection has the topics), or drop --by query_length.")
    values = {t: query_length_bucket(query_terms(sources.queries[t])) for t in topics if t in sources.queries}
    order = tuple(label for *_, label in QUERY_LENGTH_BUCKETS)
    if any(v == "0" for v in values.values()):
        order = ("0", *order)
    return SliceKey("query_length", "terms in the query (\\w+ runs)", values, order)


def _n_relevant(sources: SliceSources, topics: Sequence[str]) -> SliceKey:
    values = {t: n_relevant_bucket(sources.n_relevant[t]) for t in topics if t in sources.n_relevant}
    return SliceKey("n_relevant", "|R|: relevant documents of the topic",
                    values, tuple(label for *_, label in N_RELEVANT_BUCKETS))


def _coverage(sources: SliceSources, topics: Sequence[str]) -> SliceKey:
    values = {t: coverage_bucket(sources.judged_share[t]) for t in topics if t in sources.judged_share}
    return SliceKey("pool_coverage",
                    f"Judged@{sources.coverage_k} of {sources.reference_run}: share of its top "
                    f"{sources.coverage_k} the qrels judged", values, COVERAGE_BUCKETS)


@dataclass(frozen=True)
class SliceRow:
    """One slice of one run.

    Attributes:
        key: the slice key.
        value: the slice (``"(all)"`` for the overall row).
        topics: its evaluated topics, natural order.
        too_small: fewer topics than ``min_topics`` (listed, no statistics).
        means: measure -> macro mean over ``topics`` (nan when there are none).
    """

    key: str
    value: str
    topics: tuple[str, ...]
    too_small: bool
    means: Mapping[Measure, float]

    @property
    def n_topics(self) -> int:
        """Topics in the slice."""
        return len(self.topics)


ALL = "(all)"
"""The value of the overall row of a slice table."""


def _groups(key: SliceKey, topics: Sequence[str]) -> list[tuple[str, tuple[str, ...]]]:
    members: dict[str, list[str]] = {}
    for t in topics:
        members.setdefault(key.value(t), []).append(t)
    ordered = [v for v in key.order if v in members] + sorted((v for v in members if v not in key.order),
                                                              key=natural_key)
    return [(v, tuple(sorted(members[v], key=natural_key))) for v in ordered]


def slice_table(e: Evaluation, key: SliceKey, *, min_topics: int = MIN_TOPICS) -> tuple[SliceRow, ...]:
    """Each measure of ``e`` per slice of ``key``, after an overall row.

    Args:
        e: an evaluation.
        key: the partition (topics it does not know fall into ``(none)``).
        min_topics: slices with fewer topics are marked too small.

    Returns:
        The overall row (value ``(all)``), then one row per non-empty slice in
        ``key.order``; each with its topic count and macro means.

    Example:
        >>> from workbench.scoring.evaluate import evaluate
        >>> e = evaluate({"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 1}},
        ...              {"1": {"a": 1.0}, "2": {"x": 1.0}, "3": {"c": 1.0}}, ["R@1"])
        >>> k = SliceKey("intent", "", {"1": "nav", "2": "info", "3": "nav"}, ("info", "nav"))
        >>> [(r.value, r.n_topics, r.means[e.measures[0]], r.too_small) for r in slice_table(e, k, min_topics=2)]
        [('(all)', 3, 0.6666666666666666, False), ('info', 1, 0.0, True), ('nav', 2, 1.0, False)]
    """
    rows = [_row(e, key.key, ALL, tuple(e.topics), min_topics)]
    rows += [_row(e, key.key, value, ts, min_topics) for value, ts in _groups(key, e.topics)]
    return tuple(rows)


def _row(e: Evaluation, key: str, value: str, topics: tuple[str, ...], min_topics: int) -> SliceRow:
    import numpy as np

    from workbench.scoring.evaluate import topic_values

    means = {}
    for m in e.measures:
        vals = topic_values(e, m, topics)
        vals = vals[~np.isnan(vals)]  # not a number: an nDCG whose gains overflowed (inf / inf)
        means[m] = float(vals.mean()) if len(vals) else float("nan")
    return SliceRow(key, value, topics, len(topics) < min_topics, means)


@dataclass(frozen=True)
class SliceComparison:
    """One slice of a paired comparison of run B with run A on one measure.

    Attributes:
        key: the slice key.
        value: the slice (``(all)`` for the overall row).
        measure: the measure.
        topics: the slice's paired topics.
        mean_a: A's macro mean over them.
        mean_b: B's macro mean.
        too_small: fewer topics than ``min_topics``: no tests.
        permutation: the randomization test (None when too small).
        bootstrap: the paired bootstrap (None when too small).
    """

    key: str
    value: str
    measure: Measure
    topics: tuple[str, ...]
    mean_a: float
    mean_b: float
    too_small: bool
    permutation: PairedTest | None
    bootstrap: PairedTest | None

    @property
    def delta(self) -> float:
        """mean_b - mean_a."""
        return self.mean_b - self.mean_a

    @property
    def n_topics(self) -> int:
        """Paired topics in the slice."""
        return len(self.topics)


def compare_slices(
    a: Evaluation,
    b: Evaluation,
    measure: Measure,
    key: SliceKey,
    *,
    min_topics: int = MIN_TOPICS,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    permutation: bool = True,
    test_overall: bool = True,
) -> tuple[SliceComparison, ...]:
    """Run B against run A per slice of ``key`` on one measure, over the topics both scored.

    Args:
        a: the baseline's evaluation.
        b: the other run's evaluation (same qrels and threshold).
        measure: a measure of both.
        key: the partition.
        min_topics: slices with fewer paired topics get no tests (at least 2 are needed).
        n_resamples: resamples of each test.
        seed: seed of each test (the same for every slice).
        confidence: level of the bootstrap intervals.
        permutation: also run the randomization test.
        test_overall: also test the overall ``(all)`` row (off when it is already the headline test).

    Returns:
        The overall row, then one row per non-empty slice, in ``key.order``.

    Raises:
        ValidationError: the measure is missing from an evaluation.
    """
    from workbench.scoring.evaluate import topic_values

    for e in (a, b):
        if measure not in e.per_topic:
            raise ValidationError(f"measure {measure} was not computed for run {e.run_name!r}.")
    common = tuple(t for t in a.topics if t in b.per_topic[measure])
    out = []
    for value, ts in [(ALL, common), *_groups(key, common)]:
        va = topic_values(a, measure, ts)
        vb = topic_values(b, measure, ts)
        small = len(ts) < max(2, min_topics)
        perm = boot = None
        if not small and (test_overall or value != ALL):
            boot = paired_bootstrap(va, vb, n_resamples=n_resamples, seed=seed, confidence=confidence)
            if permutation:
                perm = paired_permutation_test(va, vb, n_resamples=n_resamples, seed=seed)
        nan = float("nan")
        out.append(SliceComparison(key.key, value, measure, tuple(ts),
                                   float(va.mean()) if len(ts) else nan, float(vb.mean()) if len(ts) else nan,
                                   small, perm, boot))
    return tuple(out)


def adjusted_p_values(
    rows: Sequence[SliceComparison], correction: str = "holm", test: str = "permutation"
) -> tuple[float | None, ...]:
    """p-values of the tested slices adjusted as one family (``scoring.multiple``), aligned with ``rows``.

    The family is every row with a test that is not an overall ``(all)`` row
    (those are the headline comparison, not slices); other rows get None.

    Args:
        rows: slice comparisons (of one or several keys and measures).
        correction: ``holm`` (default), ``bonferroni`` or ``none``.
        test: ``permutation`` or ``bootstrap``: whose p-values.

    Raises:
        UnknownNameError: unknown correction.
        ValidationError: unknown test.
    """
    from workbench.scoring.multiple import adjust

    if test not in ("permutation", "bootstrap"):
        raise ValidationError(f"expected test permutation or bootstrap, found {test!r}.")
    tests = [r.permutation if test == "permutation" else r.bootstrap for r in rows]
    family = [i for i, (r, t) in enumerate(zip(rows, tests, strict=True)) if t is not None and r.value != ALL]
    adj = adjust([tests[i].p_value for i in family], correction) if family else ()  # type: ignore[union-attr]
    out: list[float | None] = [None] * len(rows)
    for i, p in zip(family, adj, strict=True):
        out[i] = p
    return tuple(out)
