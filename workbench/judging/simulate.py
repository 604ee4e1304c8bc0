"""Replay judging against an oracle: how many judgments a strategy needs (PURE).

``simulate`` judges every topic's pool with a strategy, taking each grade from
an oracle (a qrels version or file; a pooled document the oracle never judged
is non-relevant, grade 0) instead of an assessor, and records the order of the
judgments. From that order:

* **curve**: after j judgments per topic (j = 0, 1, ...), the relevant
  documents found summed over topics against the judgments made summed over
  topics (a topic whose pool is exhausted stops adding judgments);
* **needed(share)**: per topic t with R_t > 0 relevant pooled documents, the
  number of judgments n_t until ceil(share * R_t) of them are found; summed
  over topics (topics with R_t = 0 need none). ``None`` when some topic does
  not get there within the budget; ``ideal(share)`` is the same sum for the
  order "relevant documents first", sum of ceil(share * R_t);
* **qrels at a budget**: what publishing would freeze after the topic-wise
  budget n_t (each topic its own n_t(share), or a flat N per topic): the first
  n_t judged documents of each topic with the oracle's grades; every run is
  rescored on it and the ordering of runs is compared with their ordering on
  the full oracle (Kendall's tau-b, ``workbench.scoring.compare.kendall_tau``).

Deterministic: the strategies are (randomised ones carry their seed), and
topics are visited in a fixed order.

Source:
    The evaluation protocol (judgments needed for a share of the pool's
    relevant documents; rank correlation of systems) follows Losada, Parapar &
    Barreiro, IP&M 2017, doi:10.1016/j.ipm.2017.04.005, and Cormack, Palmer &
    Clarke, SIGIR 1998, doi:10.1145/290941.291009; tau >= 0.9 as "equivalent
    orderings": Voorhees, SIGIR 1998, doi:10.1145/290941.291017.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from workbench.errors import ValidationError
from workbench.judging.strategies import Strategy, TopicPool
from workbench.types import Qrels, Run

DEFAULT_SHARES: tuple[float, ...] = (0.5, 0.8, 0.9, 0.95)
"""Shares of the pool's relevant documents the report gives the judgments for."""

Progress = Callable[[str, int, int], None]
"""Receives (strategy, topics done, topics) while a simulation runs."""


def replay(strategy: Strategy, pool: TopicPool, oracle: Mapping[str, int], budget: int | None = None) -> tuple[str, ...]:
    """Judge one topic's pool with a strategy and an oracle.

    Args:
        strategy: the judging strategy.
        pool: the topic's pool.
        oracle: doc_id -> grade of this topic (absent = 0).
        budget: at most this many judgments (None = the whole pool).

    Returns:
        The documents in the order they were judged.
    """
    limit = len(pool.documents) if budget is None else min(budget, len(pool.documents))
    return strategy.simulate_order(pool, oracle, limit)


@dataclass(frozen=True)
class BudgetPoint:
    """The qrels a strategy would have published at one budget, and the runs on it.

    Attributes:
        label: ``"50%"`` ... for the judgments needed for a share, ``"N/topic"`` for a flat budget.
        judgments: judgments made, summed over topics.
        relevant: relevant documents found, summed over topics.
        n_entries: entries of those qrels (= judgments).
        scores: run -> macro value of the measure on those qrels.
        tau: Kendall's tau-b of the run ordering against the full oracle's (None
            with fewer than 2 runs or no scores).
        cuts: topic_id -> judgments of the topic at this budget (its qrels are
            the first ``cuts[t]`` documents judged, with the oracle's grades).
    """

    label: str
    judgments: int
    relevant: int
    n_entries: int
    scores: Mapping[str, float]
    tau: float | None
    cuts: Mapping[str, int] = field(default_factory=dict)

    def qrels(self, order: Mapping[str, Sequence[str]], oracle: Qrels) -> dict[str, dict[str, int]]:
        """The qrels published at this budget (topics with no judgment left out)."""
        out = {t: {d: int(oracle.get(t, {}).get(d, 0)) for d in order[t][: self.cuts.get(t, 0)]} for t in order}
        return {t: g for t, g in out.items() if g}


@dataclass(frozen=True)
class StrategyOutcome:
    """One strategy's simulation.

    Attributes:
        strategy: its canonical spec.
        order: topic_id -> documents in judging order.
        relevant_in_pool: topic_id -> R_t, relevant pooled documents by the oracle.
        needed: share -> judgments needed summed over topics (None = not reached
            within the budget by every topic).
        short: share -> topics that did not reach it within the budget.
        budgets: the budget points (one per share reached, then the flat budget).
    """

    strategy: str
    order: Mapping[str, tuple[str, ...]]
    relevant_in_pool: Mapping[str, int]
    needed: Mapping[float, int | None]
    short: Mapping[float, int]
    budgets: tuple[BudgetPoint, ...] = ()

    def curve(self, oracle: Qrels, rel: int = 1) -> list[tuple[int, int]]:
        """(judgments made, relevant found), both summed over topics, after 0, 1, 2, ... judgments per topic."""
        found_at: dict[str, list[int]] = {}
        for t, docs in self.order.items():
            grades = oracle.get(t, {})
            run = [0]
            for d in docs:
                run.append(run[-1] + (grades.get(d, 0) >= rel))
            found_at[t] = run
        depth = max((len(v) for v in found_at.values()), default=1)
        points = []
        for j in range(depth):
            made = sum(min(j, len(v) - 1) for v in found_at.values())
            found = sum(v[min(j, len(v) - 1)] for v in found_at.values())
            points.append((made, found))
        return points


@dataclass(frozen=True)
class SimulationReport:
    """A simulation of several strategies on one pool against one oracle.

    Attributes:
        strategies: the outcomes, in the order asked.
        shares: the shares reported (e.g. 0.5, 0.8, 0.9, 0.95).
        n_topics: topics of the pool.
        n_documents: pooled documents.
        n_relevant: relevant pooled documents by the oracle (sum of R_t).
        ideal: share -> judgments needed when relevant documents come first.
        budget: the flat per-topic budget (None = the whole pool).
        measure: the measure runs are rescored with (its canonical name).
        full_scores: run -> macro value on the full oracle.
        full_pool_tau: tau of the ordering on the fully judged pool against the
            full oracle (the most any strategy can reach: the pool's own bias).
        rel: relevance threshold (grade >= rel).
    """

    strategies: tuple[StrategyOutcome, ...]
    shares: tuple[float, ...]
    n_topics: int
    n_documents: int
    n_relevant: int
    ideal: Mapping[float, int]
    budget: int | None
    measure: str
    full_scores: Mapping[str, float] = field(default_factory=dict)
    full_pool_tau: float | None = None
    rel: int = 1


def _needed(order: Sequence[str], grades: Mapping[str, int], target: int, rel: int) -> int | None:
    if target <= 0:
        return 0
    found = 0
    for i, d in enumerate(order, 1):
        if grades.get(d, 0) >= rel:
            found += 1
            if found >= target:
                return i
    return None


def share_label(share: float) -> str:
    """``0.9`` -> ``"90%"``."""
    pct = share * 100
    return f"{pct:.0f}%" if abs(pct - round(pct)) < 1e-9 else f"{pct:g}%"


def _check(shares: Sequence[float], budget: int | None) -> None:
    if not shares or any(not 0 < s <= 1 for s in shares):
        raise ValidationError(f"expected shares in (0, 1], found {list(shares)}")
    if budget is not None and budget < 1:
        raise ValidationError(f"expected a budget of at least 1 judgment per topic, found {budget}")


def simulate(
    pools: Sequence[TopicPool],
    oracle: Qrels,
    strategies: Sequence[Strategy],
    *,
    budget: int | None = None,
    shares: Sequence[float] = DEFAULT_SHARES,
    runs: Mapping[str, Run] | None = None,
    measure: str = "R@20",
    progress: Progress | None = None,
) -> SimulationReport:
    """Simulate judging ``pools`` with each strategy against ``oracle``.

    Args:
        pools: one ``TopicPool`` per topic (topic ids distinct).
        oracle: topic_id -> doc_id -> grade; pooled documents it lacks are grade 0.
        strategies: the strategies to compare (at least one).
        budget: at most this many judgments per topic (None = whole pool).
        shares: the shares of relevant documents to report, each in (0, 1].
        runs: run name -> run, rescored on every budget's qrels (None or
            fewer than 2 runs: no scores, no tau).
        measure: the measure runs are rescored with (macro mean; topics with
            no relevant document in the qrels are excluded, as the scorer does).
        progress: called after each topic of each strategy.

    Returns:
        The ``SimulationReport``.

    Raises:
        ValidationError: no strategy, repeated topics, bad shares or budget.
    """
    _check(shares, budget)
    if not strategies:
        raise ValidationError("expected at least one judging strategy, found none")
    topics = [p.topic_id for p in pools]
    if len(set(topics)) != len(topics):
        raise ValidationError("expected one pool per topic, found repeated topics")
    rel = pools[0].rel if pools else 1
    r_t = {p.topic_id: sum(1 for d in p.documents if oracle.get(p.topic_id, {}).get(d, 0) >= rel) for p in pools}
    targets = {s: {t: math.ceil(s * r - 1e-9) for t, r in r_t.items()} for s in shares}
    scorer = _Rescorer(runs or {}, measure, rel, topics) if runs and len(runs) >= 2 else None
    full_scores = scorer.scores(oracle) if scorer else {}
    full_pool_tau = None
    if scorer:
        pooled = {p.topic_id: {d: int(oracle.get(p.topic_id, {}).get(d, 0)) for d in p.documents} for p in pools}
        full_pool_tau = scorer.tau(pooled, full_scores)
    outcomes = []
    for strategy in strategies:
        order: dict[str, tuple[str, ...]] = {}
        for i, p in enumerate(pools, 1):
            order[p.topic_id] = replay(strategy, p, oracle.get(p.topic_id, {}), budget)
            if progress:
                progress(str(strategy), i, len(pools))
        per_topic = {s: {t: _needed(order[t], oracle.get(t, {}), targets[s][t], rel) for t in topics}
                     for s in shares}
        needed: dict[float, int | None] = {}
        short: dict[float, int] = {}
        for s in shares:
            missing = [t for t, v in per_topic[s].items() if v is None]
            short[s] = len(missing)
            needed[s] = None if missing else sum(v for v in per_topic[s].values() if v is not None)
        points: list[BudgetPoint] = []
        cuts: list[tuple[str, dict[str, int]]] = []
        for s in shares:
            if needed[s] is not None:
                cuts.append((share_label(s), {t: v or 0 for t, v in per_topic[s].items()}))
        flat = budget if budget is not None else max((len(p.documents) for p in pools), default=0)
        cuts.append((f"{flat}/topic" if budget is not None else "whole pool", {t: flat for t in topics}))
        for label, cut in cuts:
            point = BudgetPoint(label, 0, 0, 0, {}, None, {t: min(cut[t], len(order[t])) for t in topics})
            qrels = point.qrels(order, oracle)
            made = sum(len(g) for g in qrels.values())
            found = sum(1 for g in qrels.values() for v in g.values() if v >= rel)
            scores = scorer.scores(qrels) if scorer else {}
            tau = scorer.tau(qrels, full_scores) if scorer else None
            points.append(BudgetPoint(label, made, found, made, scores, tau, point.cuts))
        outcomes.append(StrategyOutcome(str(strategy), order, r_t, needed, short, tuple(points)))
    ideal = {s: sum(targets[s].values()) for s in shares}
    return SimulationReport(
        tuple(outcomes), tuple(shares), len(pools), sum(len(p.documents) for p in pools),
        sum(r_t.values()), ideal, budget, measure, full_scores, full_pool_tau, rel,
    )


class _Rescorer:
    """Scores a fixed set of runs on successive qrels (macro value of one measure)."""

    def __init__(self, runs: Mapping[str, Run], measure: str, rel: int, topics: Sequence[str]) -> None:
        from workbench.scoring.columns import rank_run, run_columns_from_mapping
        from workbench.scoring.measures import parse_measure

        self.measure = parse_measure(measure)
        self.rel = rel
        self.topics = list(topics)
        self.ranked = {name: rank_run(run_columns_from_mapping(run, name)) for name, run in runs.items()}

    def scores(self, qrels: Qrels) -> dict[str, float]:
        from workbench.scoring.evaluate import Evaluator

        if not any(qrels.values()):
            return {name: 0.0 for name in self.ranked}
        ev = Evaluator(qrels, [self.measure], rel=self.rel, missing="zero")
        out = {}
        for name, rr in self.ranked.items():
            e = ev.evaluate(rr, run_name=name, topics=[t for t in self.topics if t in qrels])
            out[name] = float(e.aggregates[self.measure].macro)
        return out

    def tau(self, qrels: Qrels, full: Mapping[str, float]) -> float | None:
        from workbench.scoring.compare import kendall_tau

        mine = self.scores(qrels)
        if len(mine) < 2 or set(mine) != set(full):
            return None
        value = kendall_tau(dict(full), mine)
        return None if math.isnan(value) else value
