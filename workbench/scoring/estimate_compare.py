"""The change of an estimated measure between two runs estimated from the same judged sample, with its interval (PURE).

``workbench compare RUN_A RUN_B --measure Rhat@20 --qrels SAMPLE_VERSION`` and a
gate rule on an estimated measure read ``estimated_change``: the change
``B - A`` of ``Rhat@k`` (the mean over topics of R̂_k / R̂), ``Rhat_micro@k``
(the combined ratio sum R̂_k / sum R̂) or ``Phat@k`` (R̂_k / k), and a normal
interval from the design variance of the **difference**.

Both runs are estimated from the same sampled documents, so their estimates
are correlated (positively: one R̂ in both denominators, and the relevant
documents both runs find count in both numerators). The variance of the change
is therefore not the sum of the two variances; it is linearised jointly, as one
estimator (Cochran 1977, 6.5 and 5.6; the topics held fixed, as every interval
of ``scoring.estimate``). Per topic t, with ``y_d`` = 1 for a judged relevant
document and ``a_d``, ``b_d`` = 1 when run A, run B has it within k:

* ``Rhat@k``: ``D_t = R̂@k_B - R̂@k_A = (R̂_k,B - R̂_k,A) / R̂``, a ratio of two
  Horvitz-Thompson totals; its linearised variance is
  ``sum_h N_h^2 (1 - n_h / N_h) s_z,h^2 / n_h / R̂^2`` with
  ``z_d = (b_d - a_d) - D_t y_d``. The macro change is the mean of the ``D_t``,
  its variance the sum of theirs over T^2 (topics are sampled independently);
* ``Rhat_micro@k``: ``D = sum_t (R̂_k,B - R̂_k,A) / sum_t R̂``, with
  ``z_d = (b_d - a_d) - D y_d`` summed over every topic's strata, over
  ``(sum_t R̂_t)^2``;
* ``Phat@k``: ``D_t = (R̂_k,B - R̂_k,A) / k``, linear: ``z_d = b_d - a_d``, over
  ``k^2``; the macro mean as for R̂@k.

Only judged relevant documents have a non-zero ``z``, so per stratum the sums
need the judged count ``n_h``, the population ``N_h``, the relevant judged
``r_h`` and those within k of A only (``a_h``) and of B only (``b_h``):
``sum z = b_h - a_h - D r_h`` and
``sum z^2 = b_h (1 - D)^2 + a_h (1 + D)^2 + (r_h - a_h - b_h) D^2``. For two
identical runs the change and its variance are 0; when A finds nothing it is
run B's own ``ratio_variance``. A stratum with fewer than two judged documents,
or judged in full, contributes no term (as in ``scoring.estimate``: where
relevant documents are rare, deep and outside the pool, the interval is short).

The interval is ``change +- z * se`` (z the normal quantile of the confidence),
clipped to [-1, 1]. It holds the topics fixed: it says how far the change
could be from what judging every document of these topics would show, not how
it would generalise to other topics.

Source:
    Cochran, "Sampling Techniques", 3rd ed., Wiley 1977 (5.6 stratified variance; 6.5 and 6.11 ratio
    estimators, linearisation of a difference of ratios); Horvitz & Thompson, JASA 1952,
    doi:10.1080/01621459.1952.10483446.

Example:
    >>> from workbench.scoring.estimate import SampledQrels
    >>> from workbench.scoring.estimate_run import estimate_run
    >>> from workbench.scoring.measures import Rhat
    >>> sq = SampledQrels({"t": {"a": 1, "b": 1}}, {"t": {"a": "1-2", "b": "1-2"}}, {"t": {"1-2": 2}})
    >>> ea = estimate_run("A", {"t": ["a", "x"]}, sq, ["t"], recall_ks=(1,), precision_ks=(), ndcg_ks=())
    >>> eb = estimate_run("B", {"t": ["b", "a"]}, sq, ["t"], recall_ks=(1,), precision_ks=(), ndcg_ks=())
    >>> c = estimated_change(ea, eb, sq, Rhat(1))
    >>> (c.value_a, c.value_b, c.change, c.se)          # every document judged: no sampling error
    (0.5, 0.5, 0.0, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.errors import ValidationError
from workbench.scoring.estimate import SampledQrels, TopicEstimate, normal_quantile
from workbench.scoring.estimate_run import RunEstimate
from workbench.scoring.measures import EstimatedMeasure, Phat, RhatMicro


@dataclass(frozen=True, slots=True)
class PairStratum:
    """One stratum of one topic as the difference's variance needs it (module docstring).

    Attributes:
        n: judged documents.
        N: documents in the stratum.
        rel: judged relevant documents.
        only_a: judged relevant documents within k of run A and not of run B.
        only_b: the reverse.
    """

    n: int
    N: int  # noqa: N815 - the population size's usual letter
    rel: int
    only_a: int
    only_b: int


def pair_variance(strata: Sequence[PairStratum], d: float) -> float:
    """``sum_h N_h^2 (1 - n_h / N_h) s_z,h^2 / n_h`` with ``z = (b - a) - d y`` (the module docstring's sums).

    Divide by the squared denominator (R̂^2, (sum R̂)^2, k^2). ``d = 0`` gives the linear difference (P̂@k).

    Example:
        >>> pair_variance([PairStratum(n=4, N=8, rel=2, only_a=1, only_b=0)], 0.0)   # z = (-1, 0, 0, 0)
        2.0
    """
    total = 0.0
    for st in strata:
        if st.n < 2 or st.N <= st.n:
            continue
        both_or_neither = st.rel - st.only_a - st.only_b
        sz = st.only_b - st.only_a - d * st.rel
        sz2 = st.only_b * (1.0 - d) ** 2 + st.only_a * (1.0 + d) ** 2 + both_or_neither * d * d
        var = (sz2 - sz * sz / st.n) / (st.n - 1)
        total += st.N * st.N * (1.0 - st.n / st.N) * max(var, 0.0) / st.n
    return total


def pair_strata(ea: TopicEstimate, eb: TopicEstimate, sq: SampledQrels, k: int) -> tuple[PairStratum, ...]:
    """One topic's strata for the difference of two runs at cut-off k (``TopicEstimate.strata`` and ``.found``).

    Raises:
        ValidationError: the two estimates are not of the same topic and sample at k.
    """
    sa, sb = ea.strata.get(k), eb.strata.get(k)
    if sa is None or sb is None or [(s.stratum, s.n, s.N, s.rel) for s in sa] != [(s.stratum, s.n, s.N, s.rel)
                                                                                  for s in sb]:
        raise ValidationError(f"topic {ea.topic_id}: the two runs' estimates at k = {k} are not from the same "
                              "judged sample (strata differ); estimate both against one qrels version.")
    fa, fb = set(ea.found.get(k, ())), set(eb.found.get(k, ()))
    only_a: dict[str, int] = {}
    only_b: dict[str, int] = {}
    for d in fa - fb:
        s = sq.stratum(ea.topic_id, d) or ""
        only_a[s] = only_a.get(s, 0) + 1
    for d in fb - fa:
        s = sq.stratum(ea.topic_id, d) or ""
        only_b[s] = only_b.get(s, 0) + 1
    return tuple(PairStratum(s.n, s.N, s.rel, only_a.get(s.stratum, 0), only_b.get(s.stratum, 0)) for s in sa)


@dataclass(frozen=True)
class TopicChange:
    """One topic of an estimated comparison.

    Attributes:
        topic_id: the topic.
        a: run A's per-topic estimate (R̂@k, or P̂@k).
        b: run B's.
        delta: b - a.
        se: the design standard error of ``delta`` (joint linearisation).
        lost: judged relevant sampled documents within k of A and not of B (judged order).
        gained: the reverse.
    """

    topic_id: str
    a: float
    b: float
    delta: float
    se: float
    lost: tuple[str, ...]
    gained: tuple[str, ...]


@dataclass(frozen=True)
class EstimatedChange:
    """Run B against run A on one estimated measure, both estimated from the same judged sample.

    Attributes:
        measure: ``Rhat@k``, ``Rhat_micro@k`` or ``Phat@k``.
        run_a: run A (the baseline).
        run_b: run B.
        value_a: A's estimate over ``topics``.
        value_b: B's estimate.
        change: value_b - value_a.
        se: the design standard error of the change (joint linearisation; the topics held fixed).
        confidence: the level of ``low`` and ``high``.
        low: the interval's lower end (clipped to -1).
        high: its upper end (clipped to 1).
        topics: the topics both estimates average (defined, R̂ > 0), A's order.
        n_judged: judged sampled documents of those topics.
        per_topic: per-topic changes, largest loss first (then more documents lost; ties keep topic order).
        wins: topics where B's estimate is larger.
        losses: topics where it is smaller.
        ties: topics where they are equal.
        left_out: topics one run's estimate averages and the other's does not (not compared).
    """

    measure: EstimatedMeasure
    run_a: str
    run_b: str
    value_a: float
    value_b: float
    change: float
    se: float
    confidence: float
    low: float
    high: float
    topics: tuple[str, ...]
    n_judged: int
    per_topic: tuple[TopicChange, ...]
    wins: int
    losses: int
    ties: int
    left_out: tuple[str, ...] = ()

    def interval(self, confidence: float) -> tuple[float, float]:
        """The change's normal interval at another level (a gate's corrected one), clipped to [-1, 1].

        Raises:
            ValidationError: the level is not in (0, 1).
        """
        return _interval(self.change, self.se, confidence)


def _interval(change: float, se: float, confidence: float) -> tuple[float, float]:
    if math.isnan(change) or math.isnan(se):
        return math.nan, math.nan
    z = normal_quantile(confidence)
    return max(-1.0, change - z * se), min(1.0, change + z * se)


def estimated_change(a: RunEstimate, b: RunEstimate, sq: SampledQrels, measure: EstimatedMeasure, *,
                     confidence: float = 0.95) -> EstimatedChange:
    """The change B - A of an estimated measure with its jointly linearised interval (module docstring).

    Args:
        a: run A's estimates (``scoring.estimate_run``), with ``measure``'s cut-off among its R̂@k (or P̂@k).
        b: run B's, from the same judged sample, threshold and topics.
        sq: that judged sample.
        measure: ``Rhat(k)``, ``RhatMicro(k)`` or ``Phat(k)``.
        confidence: the interval's level, in (0, 1).

    Returns:
        The ``EstimatedChange`` over the topics both estimates average (NaN values when there is none).

    Raises:
        ValidationError: the cut-off was not estimated, the estimates are not from the same sample, or a bad
            confidence level.
    """
    k = measure.cutoff
    assert k is not None  # an estimated measure always has one (its CUTOFF is "required")
    normal_quantile(confidence)  # the level, checked before anything is computed
    for e in (a, b):
        if not any(v.name == measure.estimate_name for v in e.values):
            raise ValidationError(f"measure {measure} was not estimated for run {e.run!r}; add --measure "
                                  f"{measure.pooled} (or {measure}).")
    in_b = set(b.averaged)
    topics = tuple(t for t in a.averaged if t in in_b)
    in_both = set(topics)
    left_out = tuple(t for t in (*a.averaged, *b.averaged) if t not in in_both)
    precision = isinstance(measure, Phat)
    changes: list[TopicChange] = []
    strata: dict[str, tuple[PairStratum, ...]] = {}
    for t in topics:
        ea, eb = a.topics[t], b.topics[t]
        if ea.r_hat != eb.r_hat:
            raise ValidationError(f"topic {t}: runs {a.run!r} and {b.run!r} were estimated from different samples "
                                  f"(R̂ {ea.r_hat!r} and {eb.r_hat!r}); estimate both against one qrels version.")
        strata[t] = pair_strata(ea, eb, sq, k)
        va, vb = (ea.precision[k], eb.precision[k]) if precision else (ea.recall[k], eb.recall[k])
        d = vb - va
        var = pair_variance(strata[t], 0.0) / (k * k) if precision else \
            pair_variance(strata[t], d) / (ea.r_hat * ea.r_hat)
        fa, fb = set(ea.found.get(k, ())), set(eb.found.get(k, ()))
        changes.append(TopicChange(t, va, vb, d, math.sqrt(var), tuple(x for x in ea.found.get(k, ()) if x not in fb),
                                   tuple(x for x in eb.found.get(k, ()) if x not in fa)))
    n_judged = sum(a.topics[t].n_judged for t in topics)
    if not topics:
        nan = math.nan
        return EstimatedChange(measure, a.run, b.run, nan, nan, nan, nan, confidence, nan, nan, (), 0, (), 0, 0, 0,
                               left_out)
    if isinstance(measure, RhatMicro):
        den = sum(a.topics[t].r_hat for t in topics)
        value_a = sum(a.topics[t].hits[k] for t in topics) / den
        value_b = sum(b.topics[t].hits[k] for t in topics) / den
        change = value_b - value_a
        var = sum(pair_variance(strata[t], change) for t in topics) / (den * den)
    else:
        n = len(topics)
        value_a = sum(c.a for c in changes) / n
        value_b = sum(c.b for c in changes) / n
        change = value_b - value_a
        var = sum(c.se * c.se for c in changes) / (n * n)
    se = math.sqrt(var)
    low, high = _interval(change, se, confidence)
    ordered = sorted(changes, key=lambda c: (c.delta, -len(c.lost)))
    return EstimatedChange(measure, a.run, b.run, value_a, value_b, change, se, confidence, low, high, topics,
                           n_judged, tuple(ordered), sum(1 for c in changes if c.delta > 0),
                           sum(1 for c in changes if c.delta < 0), sum(1 for c in changes if c.delta == 0), left_out)

