"""Run-versus-run comparison: per-topic deltas with the documents behind them, paired tests.

``compare(a, b, measure)`` takes two evaluations of the same qrels over the
same topics and reports, per topic, ``delta = b - a`` with the relevant
documents run A found within k that run B did not (*lost*) and the reverse
(*gained*), each with its rank in both runs (relevant = grade >= the
evaluations' ``rel``; within k = the measure's cutoff); topics are sorted by
the largest loss first. Two paired tests on the per-topic values:

* randomization (permutation) test: under H0 the run names A and B are exchangeable
  within each topic; the statistic is the mean difference; two-sided p-value
  (``scipy.stats.permutation_test``, ``permutation_type="samples"``, exact when
  2^n <= n_resamples);
* paired bootstrap: resample topics with replacement; percentile confidence
  interval of the mean difference (``scipy.stats.bootstrap``) and a two-sided
  p-value from the bootstrap distribution shifted to mean 0.

Both are seeded, so the same inputs give the same p-values.

Source:
    Smucker, Allan & Carterette, "A comparison of statistical significance
    tests for information retrieval evaluation", CIKM 2007,
    doi:10.1145/1321440.1321528 (randomization test); Sakai, "Evaluating
    evaluation metrics based on the bootstrap", SIGIR 2006,
    doi:10.1145/1148170.1148261 (paired bootstrap test, shift method); Efron &
    Tibshirani, An Introduction to the Bootstrap, 1993, ch. 13 and 16.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.errors import ValidationError
from workbench.scoring.measures import Measure, parse_measure
from workbench.scoring.results import MIN_TOPICS, Evaluation

if TYPE_CHECKING:  # numpy (and scipy) are imported where the tests run: reports import this module
    import numpy as np



def refusal(n_topics: int, min_topics: int = MIN_TOPICS) -> str:
    """Why paired statistics are refused on ``n_topics`` topics, or "" when they are not.

    Example:
        >>> refusal(3, 5)
        'paired statistics refused: 3 topics, fewer than the 5 required'
        >>> refusal(5, 5)
        ''
    """
    need = max(2, min_topics)
    if n_topics >= need:
        return ""
    return f"paired statistics refused: {n_topics} topic{'s' if n_topics != 1 else ''}, fewer than the {need} required"


@dataclass(frozen=True, slots=True)
class TopicDelta:
    """One topic of a comparison.

    Attributes:
        topic_id: the topic.
        a: value of run A.
        b: value of run B.
        delta: b - a.
        lost: relevant documents A has within k and B does not:
            (doc_id, grade, rank_a, rank_b or None), by rank in A.
        gained: relevant documents B has within k and A does not:
            (doc_id, grade, rank_a or None, rank_b), by rank in B.
    """

    topic_id: str
    a: float
    b: float
    delta: float
    lost: tuple[tuple[str, int, int | None, int | None], ...]
    gained: tuple[tuple[str, int, int | None, int | None], ...]



@dataclass(frozen=True, slots=True)
class PairedTest:
    """A paired significance test on per-topic values.

    Attributes:
        method: ``"permutation"`` or ``"bootstrap"``.
        mean_difference: mean of b - a over the topics.
        p_value: two-sided p-value.
        ci_low: lower end of the confidence interval of the mean difference (bootstrap), else None.
        ci_high: upper end, else None.
        confidence: confidence level of the interval (e.g. 0.95).
        n_resamples: resamples drawn.
        seed: random seed.
    """

    method: str
    mean_difference: float
    p_value: float
    ci_low: float | None
    ci_high: float | None
    confidence: float
    n_resamples: int
    seed: int


@dataclass(frozen=True, slots=True)
class Comparison:
    """Run B against run A on one measure.

    Attributes:
        measure: the measure compared.
        run_a: name of run A (the baseline).
        run_b: name of run B.
        topics: topics compared (both evaluations' common topics).
        mean_a: macro mean of A over ``topics``.
        mean_b: macro mean of B over ``topics``.
        deltas: per-topic deltas, largest loss (most negative delta) first.
        wins: topics where B > A.
        losses: topics where B < A.
        ties: topics where B == A.
        permutation: the randomization test (None when refused).
        bootstrap: the paired bootstrap (None when refused).
        refused: why the paired tests were not run ("" when they were): fewer
            common topics than the ``min_topics`` asked for.
    """

    measure: Measure
    run_a: str
    run_b: str
    topics: tuple[str, ...]
    mean_a: float
    mean_b: float
    deltas: tuple[TopicDelta, ...]
    wins: int
    losses: int
    ties: int
    permutation: PairedTest | None
    bootstrap: PairedTest | None
    refused: str = ""

    @property
    def mean_difference(self) -> float:
        """mean_b - mean_a."""
        return self.mean_b - self.mean_a


def paired_permutation_test(a: np.ndarray, b: np.ndarray, *, n_resamples: int = 10_000, seed: int = 0) -> PairedTest:
    """Two-sided paired randomization test of mean(b - a) = 0.

    Args:
        a: per-topic values of run A.
        b: per-topic values of run B, same topics and order.
        n_resamples: random sign assignments drawn (exact test when 2^n <= n_resamples).
        seed: random seed.

    Returns:
        ``PairedTest`` with ``method="permutation"`` and no interval.

    Raises:
        ValidationError: fewer than 2 topics, or different lengths.

    Source:
        Smucker, Allan & Carterette, CIKM 2007, doi:10.1145/1321440.1321528.
    """
    import numpy as np
    from scipy import stats

    a, b = _check_pair(a, b)
    d = b - a
    if np.all(d == 0):
        return PairedTest("permutation", 0.0, 1.0, None, None, 0.0, n_resamples, seed)
    res = stats.permutation_test(
        (b, a),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        random_state=np.random.default_rng(seed),
    )
    return PairedTest("permutation", float(d.mean()), float(res.pvalue), None, None, 0.0, n_resamples, seed)


def paired_bootstrap(
    a: np.ndarray, b: np.ndarray, *, n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> PairedTest:
    """Paired bootstrap of the mean difference: percentile interval and shift-method p-value.

    Args:
        a: per-topic values of run A.
        b: per-topic values of run B, same topics and order.
        n_resamples: bootstrap samples of the topics.
        seed: random seed.
        confidence: confidence level of the interval, in (0, 1).

    Returns:
        ``PairedTest`` with ``method="bootstrap"``; p = share of bootstrap
        means, centred on 0, at least as far from 0 as the observed mean.

    Raises:
        ValidationError: fewer than 2 topics, different lengths, or a bad confidence.

    Source:
        Sakai, SIGIR 2006, doi:10.1145/1148170.1148261; Efron & Tibshirani 1993, §16.4.
    """
    return paired_bootstrap_levels(a, b, (confidence,), n_resamples=n_resamples, seed=seed)[0]


def paired_bootstrap_levels(
    a: np.ndarray, b: np.ndarray, confidences: Sequence[float], *, n_resamples: int = 10_000, seed: int = 0
) -> tuple[PairedTest, ...]:
    """``paired_bootstrap`` at several confidence levels from one bootstrap distribution.

    The first level draws the resamples; the others reuse the same bootstrap
    distribution (``scipy.stats.bootstrap(..., bootstrap_result=...)``), so a
    raw and a corrected interval (``scoring.multiple``) come from the same
    resamples and cost one draw. Each result equals ``paired_bootstrap`` at
    that level with the same seed.

    Args:
        a: per-topic values of run A.
        b: per-topic values of run B, same topics and order.
        confidences: one or more levels in (0, 1).
        n_resamples: bootstrap samples of the topics.
        seed: random seed.

    Returns:
        One ``PairedTest`` per level, in the order given (same p-value in each).

    Raises:
        ValidationError: no level, a level outside (0, 1), fewer than 2 topics or different lengths.
    """
    import numpy as np
    from scipy import stats

    if not confidences:
        raise ValidationError("expected at least one confidence level, found none.")
    for confidence in confidences:
        if not 0 < confidence < 1:
            raise ValidationError(f"expected a confidence level between 0 and 1, found {confidence!r}.")
    a, b = _check_pair(a, b)
    d = b - a
    observed = float(d.mean())
    if np.all(d == d[0]):
        p0 = 1.0 if observed == 0 else 0.0
        return tuple(PairedTest("bootstrap", observed, p0, observed, observed, c, n_resamples, seed)
                     for c in confidences)
    res = stats.bootstrap(
        (d,),
        np.mean,
        n_resamples=n_resamples,
        confidence_level=confidences[0],
        method="percentile",
        vectorized=True,
        random_state=np.random.default_rng(seed),
    )
    centred = res.bootstrap_distribution - observed
    p = min(1.0, float((np.count_nonzero(np.abs(centred) >= abs(observed)) + 1) / (len(centred) + 1)))
    out = []
    for c in confidences:
        ci = res.confidence_interval if c == confidences[0] else stats.bootstrap(
            (d,), np.mean, n_resamples=0, confidence_level=c, method="percentile", vectorized=True,
            bootstrap_result=res).confidence_interval
        out.append(PairedTest("bootstrap", observed, p, float(ci.low), float(ci.high), c, n_resamples, seed))
    return tuple(out)


def _check_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValidationError(f"expected paired values of equal length, found {len(a)} and {len(b)}.")
    if len(a) < 2:
        raise ValidationError(
            f"expected at least 2 topics for a paired test, found {len(a)}. Score more topics."
        )
    return a, b


def topic_deltas(
    a: Evaluation,
    b: Evaluation,
    measure: Measure,
    topics: Sequence[str],
    values_a: Sequence[float],
    values_b: Sequence[float],
) -> tuple[TopicDelta, ...]:
    """Per-topic deltas with the relevant documents lost and gained within the measure's cutoff.

    Args:
        a: evaluation of run A (its ``relevant`` gives A's ranks).
        b: evaluation of run B.
        measure: its cutoff k decides "within k" (a measure without one, ``AP``: returned at all).
        topics: the topics, in the order of ``values_a`` / ``values_b``.
        values_a: A's per-topic values of ``measure``.
        values_b: B's per-topic values.

    Returns:
        One ``TopicDelta`` per topic, largest loss (most negative delta) first,
        then more documents lost first; ties keep the ``topics`` order.
    """
    k = measure.cutoff
    wanted = set(topics)
    by_topic: dict[str, list[tuple[str, int, int | None]]] = {}
    for d in a.relevant:
        if d.topic_id in wanted:
            by_topic.setdefault(d.topic_id, []).append((d.doc_id, d.grade, d.rank))
    rank_b = {(d.topic_id, d.doc_id): d.rank for d in b.relevant if d.topic_id in wanted}
    deltas = []
    for t, x, y in zip(topics, values_a, values_b, strict=True):
        lost: list[tuple[str, int, int | None, int | None]] = []
        gained: list[tuple[str, int, int | None, int | None]] = []
        for doc, grade, ra in by_topic.get(t, []):
            rb = rank_b.get((t, doc))
            in_a = ra is not None and (k is None or ra <= k)  # no cutoff (AP): anywhere in the ranking
            in_b = rb is not None and (k is None or rb <= k)
            if in_a and not in_b:
                lost.append((doc, grade, ra, rb))
            elif in_b and not in_a:
                gained.append((doc, grade, ra, rb))
        lost.sort(key=lambda r: r[2] or 0)
        gained.sort(key=lambda r: r[3] or 0)
        deltas.append(TopicDelta(t, x, y, y - x, tuple(lost), tuple(gained)))
    deltas.sort(key=lambda d: (d.delta, -len(d.lost)))
    return tuple(deltas)


def compare(
    a: Evaluation,
    b: Evaluation,
    measure: Measure | str,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    min_topics: int = MIN_TOPICS,
) -> Comparison:
    """Compare run B with run A (the baseline) on one measure.

    Args:
        a: evaluation of run A.
        b: evaluation of run B, against the same qrels and threshold.
        measure: a measure present in both evaluations (or its name).
        n_resamples: resamples of each test.
        seed: random seed of both tests.
        confidence: confidence level of the bootstrap interval.
        min_topics: fewest common topics the paired tests are run on (at
            least 2); with fewer, the deltas are still listed and
            ``permutation``/``bootstrap`` are None, ``refused`` says why.

    Returns:
        ``Comparison`` over the topics both evaluations scored.

    Raises:
        ValidationError: the measure is missing from an evaluation or the
            thresholds differ.

    Example:
        >>> from workbench.scoring.evaluate import evaluate
        >>> q = {"1": {"a": 1}, "2": {"b": 1}}
        >>> ea = evaluate(q, {"1": {"a": 1.0}, "2": {"x": 1.0}}, ["R@1"], run_name="A")
        >>> eb = evaluate(q, {"1": {"x": 1.0}, "2": {"b": 1.0}}, ["R@1"], run_name="B")
        >>> c = compare(ea, eb, "R@1")
        >>> [(d.topic_id, d.delta, [x[0] for x in d.lost]) for d in c.deltas]
        [('1', -1.0, ['a']), ('2', 1.0, [])]
    """
    import numpy as np

    from workbench.scoring.evaluate import topic_values

    m = measure if isinstance(measure, Measure) else parse_measure(measure)
    for e in (a, b):
        if m not in e.per_topic:
            raise ValidationError(f"measure {m} was not computed for run {e.run_name!r}; add --measure {m}.")
    if a.rel != b.rel:
        raise ValidationError(f"expected both runs scored at the same rel, found {a.rel} and {b.rel}.")
    common = tuple(t for t in a.topics if t in b.per_topic[m])
    va = topic_values(a, m, common)
    vb = topic_values(b, m, common)
    defined = ~(np.isnan(va) | np.isnan(vb))  # not a number: an nDCG whose gains overflowed (inf / inf)
    if not defined.all():
        common = tuple(t for t, ok in zip(common, defined.tolist(), strict=True) if ok)
        va, vb = va[defined], vb[defined]
    perm: PairedTest | None = None
    boot: PairedTest | None = None
    refused = refusal(len(common), min_topics)
    if not refused:
        perm = paired_permutation_test(va, vb, n_resamples=n_resamples, seed=seed)
        boot = paired_bootstrap(va, vb, n_resamples=n_resamples, seed=seed, confidence=confidence)
    deltas = topic_deltas(a, b, m, common, va.tolist(), vb.tolist())
    diff = vb - va
    return Comparison(
        measure=m,
        run_a=a.run_name,
        run_b=b.run_name,
        topics=common,
        mean_a=float(va.mean()),
        mean_b=float(vb.mean()),
        deltas=deltas,
        wins=int(np.count_nonzero(diff > 0)),
        losses=int(np.count_nonzero(diff < 0)),
        ties=int(np.count_nonzero(diff == 0)),
        permutation=perm,
        bootstrap=boot,
        refused=refused,
    )


def kendall_tau(scores_a: dict[str, float], scores_b: dict[str, float]) -> float:
    """Kendall's tau-b between two orderings of the same systems (e.g. by two qrels versions).

    Args:
        scores_a: system -> score under one evaluation.
        scores_b: system -> score under another; same keys.

    Returns:
        tau-b in [-1, 1].

    Raises:
        ValidationError: different systems, or fewer than 2.

    Source:
        Kendall, Biometrika 1938, doi:10.1093/biomet/30.1-2.81; its use to
        compare system rankings: Voorhees, SIGIR 1998, doi:10.1145/290941.291017.
    """
    from scipy import stats

    if set(scores_a) != set(scores_b) or len(scores_a) < 2:
        raise ValidationError("expected the same 2 or more systems in both orderings.")
    keys = sorted(scores_a)
    return float(stats.kendalltau([scores_a[k] for k in keys], [scores_b[k] for k in keys]).statistic)
