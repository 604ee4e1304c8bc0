"""A run's measures estimated from a judged stratified sample, per topic and over topics (PURE).

``estimate_run`` applies ``scoring.estimate`` to every topic of one run and
aggregates: for each cut-off k of R@k, ``Rhat@k`` (displayed R̂@k) macro (the
mean of the per-topic ratios R̂_k / R̂), micro (the combined ratio
sum R̂_k / sum R̂, ``estimate.micro_recall``) and ``macro-eb`` (the
empirical-Bayes macro of ``estimate_eb``: **model-based**, its validity rests on
a beta-binomial model of the strata's relevance rates across topics, not on
the design; it averages every topic with an expected |R| > 0, its interval is
a bootstrap percentile one); ``Phat@k`` (P̂@k) macro; and the
inferred measures ``xinfAP``, ``infNDCG@k`` and ``infAP`` (trec_eval's, on
qrels marking the frame's unjudged documents -1) macro. Each value has a 95%
interval where the design gives a variance (R̂@k macro and micro, P̂@k; the
topics held fixed, ``estimate`` module docstring); the inferred measures have
none here (NaN bounds: no design variance is implemented for them).

Topics: a topic is averaged when its estimate is defined (every non-empty
stratum has a judged document) and R̂ > 0 (as |R| = 0 topics leave R@k); the
others are listed (``undefined``, ``no_relevant``). A topic the run does not
answer is scored on an empty ranking (every value 0) unless the caller leaves it out.

Names: ``Rhat@k``, ``Rhat_micro@k``, ``Phat@k``, ``xinfAP``, ``infNDCG@k``,
``infAP`` (ASCII, as recorded and in JSON/CSV); ``display_name`` gives R̂@k.

Source:
    ``scoring.estimate`` (Horvitz-Thompson estimates, Cochran 1977; xinfAP and infNDCG, Yilmaz, Kanoulas &
    Aslam, SIGIR 2008, doi:10.1145/1390334.1390437; trec_eval ``m_infap.c``).

Example:
    >>> from workbench.scoring.estimate import SampledQrels
    >>> sq = SampledQrels({"t": {"a": 1, "b": 0, "c": 1}}, {"t": {"a": "1-3", "b": "1-3", "c": "1-3"}},
    ...                   {"t": {"1-3": 3}})
    >>> e = estimate_run("r", {"t": ["a", "b", "c"]}, sq, ["t"], recall_ks=(2,), precision_ks=(), ndcg_ks=())
    >>> [(v.name, v.aggregate, v.value) for v in e.values if v.name.startswith("Rhat")]   # all judged: exact
    [('Rhat@2', 'macro', 0.5), ('Rhat@2', 'micro', 0.5), ('Rhat@2', 'macro-eb', 0.5)]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.scoring.estimate import (
    MacroEstimate,
    SampledQrels,
    TopicEstimate,
    estimate_topic,
    infap,
    infap_qrels,
    macro,
    micro_recall,
)
from workbench.scoring.estimate_eb import DEFAULT_DRAWS, eb_recall_run

_DISPLAY = {"Rhat": "R̂", "Phat": "P̂"}


def display_name(name: str) -> str:
    """``Rhat@20`` -> ``R̂@20``, ``Rhat_micro@20`` -> ``R̂@20 (micro)``; other names unchanged.

    Example:
        >>> display_name("Rhat@20"), display_name("Phat@10"), display_name("xinfAP")
        ('R̂@20', 'P̂@10', 'xinfAP')
    """
    head, at, k = name.partition("@")
    micro = head.endswith("_micro")
    head = head.removesuffix("_micro")
    return _DISPLAY.get(head, head) + at + k + (" (micro)" if micro else "")


AGGREGATE_LABELS = {"macro": "", "micro": " (micro)", "macro-eb": " (EB, model-based)"}
"""What a report appends to a measure's display name for each aggregate (``R̂@20 (EB, model-based)``)."""


@dataclass(frozen=True)
class EstimatedValue:
    """One estimated measure over topics, with its interval and the judgments behind it.

    Attributes:
        name: ``Rhat@k``, ``Phat@k``, ``xinfAP``, ``infNDCG@k`` or ``infAP``.
        aggregate: ``macro`` (mean of per-topic estimates), ``micro`` (combined ratio; R̂@k only) or ``macro-eb``
            (the empirical-Bayes macro, model-based, ``estimate_eb``; R̂@k only; its ``n_topics`` are the topics
            with an expected |R| > 0, not ``RunEstimate.averaged``).
        value: the estimate (NaN: no topic could be averaged).
        low: the 95% interval's lower end (NaN: no interval).
        high: its upper end.
        n_topics: topics averaged.
        n_judged: judged sampled documents of those topics.
        se: its standard error (NaN: none).
        pooled: the measure on the judged documents alone (R@k, P@k, nDCG@k of the usual table), filled
            by the caller; NaN when there is none.
    """

    name: str
    aggregate: str
    value: float
    low: float
    high: float
    n_topics: int
    n_judged: int
    se: float
    pooled: float = math.nan

    @staticmethod
    def of(name: str, aggregate: str, m: MacroEstimate) -> EstimatedValue:
        """From ``estimate.macro`` / ``estimate.micro_recall``."""
        return EstimatedValue(name, aggregate, m.value, m.low, m.high, m.n_topics, m.n_judged, m.se)


@dataclass(frozen=True)
class RunEstimate:
    """One run's estimates.

    Attributes:
        run: the run name.
        values: in report order: per R@k cut-off its macro, micro and macro-eb R̂@k; P̂@k; xinfAP; infNDCG@k;
            infAP.
        topics: topic_id -> its ``TopicEstimate`` (every topic asked for).
        infap: topic_id -> trec_eval's infAP (defined topics).
        averaged: the topics the means are over (defined, R̂ > 0), natural order as given.
        undefined: topic_id -> why its estimates are undefined (a non-empty stratum without a judged document).
        no_relevant: defined topics whose sample holds no judged relevant document (R̂ = 0).
        unsampleable: k -> documents of the run's top k no stratum holds (no outside stratum: not estimable,
            counted as non-relevant), summed over the averaged topics.
    """

    run: str
    values: tuple[EstimatedValue, ...]
    topics: Mapping[str, TopicEstimate]
    infap: Mapping[str, float]
    averaged: tuple[str, ...]
    undefined: Mapping[str, str]
    no_relevant: tuple[str, ...]
    unsampleable: Mapping[int, int]

    def value(self, name: str, aggregate: str = "macro") -> EstimatedValue:
        """The estimate of ``name`` (``Rhat@20``) and ``aggregate``.

        Raises:
            KeyError: not estimated in this report.
        """
        for v in self.values:
            if v.name == name and v.aggregate == aggregate:
                return v
        raise KeyError(f"{name} ({aggregate})")


def estimate_run(
    run: str,
    ranked: Mapping[str, Sequence[str]],
    sq: SampledQrels,
    topics: Sequence[str],
    *,
    recall_ks: Sequence[int],
    precision_ks: Sequence[int],
    ndcg_ks: Sequence[int],
    rel: int = 1,
    eb_draws: int = DEFAULT_DRAWS,
    eb_seed: int = 0,
) -> RunEstimate:
    """Estimate one run's measures over ``topics`` from the judged sample.

    Args:
        run: the run's name.
        ranked: topic_id -> the run's documents in rank order (``ranking.ranked``); a topic absent is an empty
            ranking.
        sq: the judged sample.
        topics: the topics estimated (e.g. every sampled topic, or a topic set's).
        recall_ks: the k of R̂@k (macro and micro).
        precision_ks: the k of P̂@k.
        ndcg_ks: the k of infNDCG@k.
        rel: inclusive minimum grade of a relevant document.
        eb_draws: Monte Carlo draws of the ``macro-eb`` R̂@k (0: none).
        eb_seed: their seed (the same for every run: common random numbers).

    Returns:
        The ``RunEstimate``.
    """
    ks = sorted(set(recall_ks) | set(precision_ks) | set(ndcg_ks))
    per: dict[str, TopicEstimate] = {}
    inf: dict[str, float] = {}
    for t in topics:
        docs = ranked.get(t, ())
        per[t] = estimate_topic(docs, sq, t, ks, rel=rel)
        if per[t].defined:
            inf[t] = infap(docs, infap_qrels(sq, t), rel=rel)
    undefined = {t: e.why for t, e in per.items() if not e.defined}
    averaged = tuple(t for t in topics if per[t].defined and per[t].r_hat > 0)
    no_relevant = tuple(t for t in topics if per[t].defined and not per[t].r_hat > 0)
    used = [per[t] for t in averaged]
    judged = sum(e.n_judged for e in used)
    values: list[EstimatedValue] = []
    eb = eb_recall_run(ranked, sq, topics, recall_ks, rel=rel, draws=eb_draws, seed=eb_seed) if eb_draws else {}
    for k in recall_ks:
        values.append(EstimatedValue.of(f"Rhat@{k}", "macro", macro(
            [e.recall[k] for e in used], [e.recall_var[k] for e in used], judged)))
        values.append(EstimatedValue.of(f"Rhat@{k}", "micro", micro_recall(used, k)))
        if k in eb:
            values.append(EstimatedValue.of(f"Rhat@{k}", "macro-eb", eb[k].estimate))
    for k in precision_ks:
        values.append(EstimatedValue.of(f"Phat@{k}", "macro", macro(
            [e.precision[k] for e in used], [e.precision_var[k] for e in used], judged)))
    values.append(EstimatedValue.of("xinfAP", "macro", macro([e.xinfap for e in used], None, judged)))
    for k in ndcg_ks:
        values.append(EstimatedValue.of(f"infNDCG@{k}", "macro", macro([e.infndcg[k] for e in used], None, judged)))
    values.append(EstimatedValue.of("infAP", "macro", macro([inf[t] for t in averaged], None, judged)))
    unsampleable = {k: sum(e.unsampleable.get(k, 0) for e in used) for k in ks}
    return RunEstimate(run, tuple(values), per, inf, averaged, undefined, no_relevant, unsampleable)
