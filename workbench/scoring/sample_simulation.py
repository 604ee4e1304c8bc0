"""Simulated sampling against known judgments: are the estimates right? (PURE)

``workbench simulate-sample`` draws the stratified sample (``pooling.sample``)
again and again against qrels taken as the truth (every sampled document is
"judged" by reading its grade there; a document the truth does not hold is
non-relevant), estimates R@k of every run each time (``scoring.estimate``) and
reports, per run, measure and budget:

* ``truth``: R@k on the truth (macro: the mean over the truth's topics with
  |R| > 0; micro: all relevant retrieved over all relevant);
* ``pooled``: R@k on the frame judged completely (the truth restricted to the
  pooled documents; the rest unjudged, hence non-relevant), what depth-D
  pooling reports;
* the estimate's mean over the repeats, its bias (mean - truth), RMSE, and the
  coverage of its 95% interval (the share of repeats whose interval holds the
  truth), for three aggregates: ``macro`` (mean of per-topic Horvitz-Thompson
  ratios), ``micro`` (the combined ratio) and ``macro-eb`` (the model-based
  empirical-Bayes macro of ``scoring.estimate_eb``, ``eb_draws`` Monte Carlo
  draws each, seeded with the repeat's seed; against the macro truth);
* Kendall's tau-b between the runs ordered by the estimate and by the truth,
  averaged over the repeats (``scipy.stats.kendalltau``).

Budgets are shares of the frame's size (``20`` = as many judgments as 20% of
the pooled documents), the design's rates scaled to meet them
(``pooling.sample.solve_budget``). Repeat i uses seed ``seed + i``.

Source:
    Bias, RMSE and interval coverage of sampling estimators: the evaluation of
    Yilmaz, Kanoulas & Aslam, SIGIR 2008, doi:10.1145/1390334.1390437.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from pooling.pool import build_pool
from pooling.sample import Sample, SampleDesign, draw_sample, solve_budget, stratify
from workbench.errors import ValidationError
from workbench.ranking import ranked_ids
from workbench.scoring.estimate import (
    MacroEstimate,
    SampledQrels,
    estimate_recall_runs,
    macro,
    micro_recall,
)
from workbench.scoring.estimate_eb import SIMULATION_DRAWS, eb_macro_recall, recall_cells

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class SimulatedEstimate:
    """One run, measure and aggregate at one budget, over the repeats.

    Attributes:
        run: the run.
        k: the cut-off of R@k.
        aggregate: ``macro`` (mean of per-topic estimates), ``micro`` (combined ratio over topics) or ``macro-eb``
            (the empirical-Bayes macro, model-based; ``scoring.estimate_eb``).
        truth: the measure on the truth.
        pooled: the measure on the frame judged completely.
        mean: the estimates' mean.
        bias: ``mean - truth``.
        rmse: root mean squared error against the truth.
        coverage: share of repeats whose 95% interval holds the truth.
        topics: mean number of topics the estimate averaged (macro: topics with an estimated |R| > 0; macro-eb:
            topics with an expected |R| > 0).
    """

    run: str
    k: int
    aggregate: str
    truth: float
    pooled: float
    mean: float
    bias: float
    rmse: float
    coverage: float
    topics: float


@dataclass(frozen=True)
class BudgetResult:
    """One budget's results.

    Attributes:
        percent: the budget as a share of the frame (percent).
        judgments: the judgments it allows.
        design: the design solved for it (rates in force).
        mean_sampled: documents drawn per repeat, on average.
        estimates: per run, k and aggregate.
        tau: k -> aggregate -> Kendall's tau-b of the run ordering against the truth's, mean over repeats.
    """

    percent: float
    judgments: int
    design: SampleDesign
    mean_sampled: float
    estimates: tuple[SimulatedEstimate, ...]
    tau: Mapping[int, Mapping[str, float]]


@dataclass(frozen=True)
class SamplingSimulation:
    """``simulate_sampling``'s result: the frame, the repeats and one ``BudgetResult`` per budget."""

    runs: tuple[str, ...]
    frame_size: int
    n_topics: int
    repeats: int
    base: SampleDesign
    budgets: tuple[BudgetResult, ...]


def sampled_qrels(sample: Sample, truth: Qrels) -> SampledQrels:
    """The sample judged by the truth: each sampled document gets its grade there (0 when the truth lacks it)."""
    judged: dict[str, dict[str, int]] = {}
    for d in sample.docs:
        judged.setdefault(d.topic_id, {})[d.doc_id] = int(truth.get(d.topic_id, {}).get(d.doc_id, 0))
    pops: dict[str, dict[str, int]] = {}
    for c in sample.counts:
        pops.setdefault(c.topic_id, {})[c.stratum] = c.population
    sampled = {t: {d.doc_id: d.stratum for d in docs} for t, docs in sample.by_topic().items()}
    return SampledQrels(judged, sample.frame, pops, sampled, outside=sample.design.outside_rate > 0)


def _recall(ranked: Mapping[str, Sequence[str]], qrels: Qrels, topics: Sequence[str], k: int,
            rel: int) -> tuple[float, float]:
    """(macro, micro) R@k of one run's ranked lists on ``qrels`` over ``topics`` with |R| > 0."""
    values, num, den = [], 0, 0
    for t in topics:
        relevant = {d for d, g in qrels.get(t, {}).items() if g >= rel}
        if not relevant:
            continue
        hit = len(relevant.intersection(ranked.get(t, ())[:k]))
        values.append(hit / len(relevant))
        num, den = num + hit, den + len(relevant)
    return (sum(values) / len(values) if values else math.nan), (num / den if den else math.nan)


def _tau(estimates: Sequence[float], truths: Sequence[float]) -> float:
    from scipy.stats import kendalltau

    if len(estimates) < 2 or any(math.isnan(x) for x in estimates):
        return math.nan
    return float(kendalltau(estimates, truths).statistic)


def simulate_sampling(
    runs: Mapping[str, Run],
    truth: Qrels,
    collection: Sequence[str],
    base: SampleDesign,
    budgets: Sequence[float],
    repeats: int,
    *,
    ks: Sequence[int] = (20, 100),
    rel: int = 1,
    progress: Callable[[str], None] | None = None,
    eb_draws: int = SIMULATION_DRAWS,
) -> SamplingSimulation:
    """Draw the sample ``repeats`` times at each budget, estimate every run's R@k, compare with the truth.

    Args:
        runs: run name -> run (the frame is their union at ``base.depth``; each is also scored).
        truth: the judgments taken as complete.
        collection: every doc_id (the outside stratum is drawn from it when ``base.outside_rate > 0``).
        base: the design whose rates are scaled to each budget (its seed is the first repeat's).
        budgets: percentages of the frame's size (> 0).
        repeats: draws per budget (>= 2).
        ks: the cut-offs.
        rel: inclusive minimum grade of a relevant document.
        progress: receives a line per budget.
        eb_draws: Monte Carlo draws of each ``macro-eb`` estimate (0: no ``macro-eb`` rows).

    Raises:
        ValidationError: fewer than two repeats, a budget <= 0, no run.
    """
    if repeats < 2:
        raise ValidationError(f"--repeats: expected at least 2 draws, found {repeats}")
    if not runs:
        raise ValidationError("expected at least one run to simulate, found none")
    if any(b <= 0 for b in budgets):
        raise ValidationError(f"--budgets: expected percentages > 0, found {list(budgets)}")
    say = progress or (lambda _m: None)
    topics = sorted(truth)
    depth_cut = max(ks)
    pool = build_pool(runs, depth=base.depth)
    ranked = {n: {t: ranked_ids(r.get(t, {}), max(depth_cut, base.depth)) for t in topics} for n, r in runs.items()}
    frame_docs = pool.documents()
    pooled_qrels = {t: {d: g for d, g in truth.get(t, {}).items() if d in frame_docs.get(t, ())} for t in topics}
    names = tuple(runs)
    truths = {(n, k): _recall(ranked[n], truth, topics, k, rel) for n in names for k in ks}
    pooled = {(n, k): _recall(ranked[n], pooled_qrels, topics, k, rel) for n in names for k in ks}
    ranks = {n: {t: {d: i for i, d in enumerate(ranked[n][t], 1)} for t in topics} for n in names}
    frames = stratify(pool, base)          # the strata's rank ranges do not change with the budget's rates
    results = []
    for pct in budgets:
        judgments = max(1, int(pool.n_entries * pct / 100))
        try:
            design = solve_budget(pool, base, judgments, len(set(collection)), topics)
        except ValidationError as e:
            raise ValidationError(f"--budgets {pct:g}% ({judgments:,} judgments, of a frame of {pool.n_entries:,} "
                                  f"documents): {str(e).split(': ', 1)[-1]}") from None
        draws: dict[tuple[str, int, str], list[MacroEstimate]] = {}
        sizes: list[int] = []
        for i in range(repeats):
            sample = draw_sample(pool, replace(design, seed=base.seed + i), collection, topics, frames=frames)
            sizes.append(sample.n_sampled)
            sq = sampled_qrels(sample, truth)
            # per topic once for every run (estimate_recall_runs: estimate_topic's R̂@k, computed faster)
            by_topic = [estimate_recall_runs({n: ranks[n][t] for n in names}, sq, t, ks, rel=rel) for t in topics]
            if (i + 1) % 50 == 0 and i + 1 < repeats:
                say(f"budget {pct:g}%: {i + 1} of {repeats} draws")
            for n in names:
                per_topic = [e[n] for e in by_topic]
                for k in ks:
                    draws.setdefault((n, k, "macro"), []).append(macro(
                        [e.recall[k] for e in per_topic], [e.recall_var[k] for e in per_topic],
                        sum(e.n_judged for e in per_topic)))
                    draws.setdefault((n, k, "micro"), []).append(micro_recall(per_topic, k))
                    if eb_draws:
                        cells = {t: recall_cells(ranked[n][t], sq, t, k, rel=rel) for t in topics}
                        draws.setdefault((n, k, "macro-eb"), []).append(eb_macro_recall(
                            cells, draws=eb_draws, seed=base.seed + i, n_judged=sample.n_sampled).estimate)
        estimates = []
        for (n, k, agg), ms in draws.items():
            column = 1 if agg == "micro" else 0
            truth_value = truths[(n, k)][column]
            values = [m.value for m in ms]
            mean = sum(values) / len(values)
            estimates.append(SimulatedEstimate(
                n, k, agg, truth_value, pooled[(n, k)][column], mean, mean - truth_value,
                math.sqrt(sum((v - truth_value) ** 2 for v in values) / len(values)),
                sum(1 for m in ms if m.low <= truth_value <= m.high) / len(ms),
                sum(m.n_topics for m in ms) / len(ms)))
        aggs = ("macro", "micro", "macro-eb") if eb_draws else ("macro", "micro")
        tau = {k: {agg: _mean_tau(draws, names, k, agg, truths, repeats) for agg in aggs} for k in ks}
        results.append(BudgetResult(pct, judgments, design, sum(sizes) / len(sizes), tuple(estimates), tau))
        say(f"[finished] budget {pct:g}% ({judgments:,} judgments; design {design.describe()}): {repeats} draws")
    return SamplingSimulation(names, pool.n_entries, len(topics), repeats, base, tuple(results))


def _mean_tau(draws: Mapping[tuple[str, int, str], Sequence[MacroEstimate]], names: Sequence[str], k: int, agg: str,
              truths: Mapping[tuple[str, int], tuple[float, float]], repeats: int) -> float:
    column = 1 if agg == "micro" else 0
    truth_values = [truths[(n, k)][column] for n in names]
    taus = [_tau([draws[(n, k, agg)][i].value for n in names], truth_values) for i in range(repeats)]
    taus = [t for t in taus if not math.isnan(t)]
    return sum(taus) / len(taus) if taus else math.nan
