"""Adaptive judging order: a pool's strategy drives its assessors' queues, live.

A lead chooses a pool version's judging strategy at ``assign`` (or later,
``workbench strategy``), with an optional per-topic budget and stopping rule.
After each save (or each ``refresh_every`` saves on a topic) the topic is
re-ordered from the current judgments (``refresh_topics``):

* the judgments so far are people's, reduced to one grade per document by the
  pool's final-grade rule (lead adjudications first, then ``median``), over the
  pool version and its ancestors; several assessors feed the same strategy;
* the order given to the store is the documents already judged by someone (in
  the order they were first judged: double judging keeps them in the other
  assessors' queues) followed by the strategy's order of the rest; each
  assessor's unjudged entries take that order (``apply_topic_order``); the
  assessor sees only the next document, never why it came next;
* model assessors' judgments take no part unless the strategy ``uses_prior``
  (``cal-model``); even then the assessor sees nothing of them;
* the stopping settings decide, from the topic's judgments in the order they
  were made, whether its judging stops: a stopped topic's documents nobody
  judged leave the queues (``topic_orders``); raising the budget or changing
  the rule brings them back at the next re-ordering.

``rank`` keeps the order ``assign`` gave (priority bands, shuffled per
assessor); only its stopping settings act.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.errors import PermissionDeniedError, WorkbenchError
from workbench.judging.stopping import StoppingPlan, parse_stopping_rule
from workbench.judging.strategies import Rank, Strategy, TopicPool, parse_strategy

if TYPE_CHECKING:
    from workbench.services.judging.sessions import Session
    from workbench.store import Store
    from workbench.store.adjudications import Adjudications
    from workbench.store.collections import Collections
    from workbench.store.judging import Judging
    from workbench.store.judging_order import JudgingSetting
    from workbench.store.pools import Pools

ORDER_RULE = "median"
"""The final-grade rule that reduces several assessors' grades to the one a strategy reads."""


def _require_lead(session: Session, action: str) -> None:
    if not session.is_lead:
        raise PermissionDeniedError(f"{action}: only a lead may do this; {session.user!r} is an {session.role}")


def stopping_plan(setting: JudgingSetting) -> StoppingPlan:
    """The pure stopping plan of a stored setting."""
    rule = parse_stopping_rule(setting.stopping) if setting.stopping else None
    return StoppingPlan(rule, setting.budget, tuple(sorted(setting.topic_budgets.items())))


def check_settings(
    strategy: str,
    *,
    refresh_every: int = 1,
    stopping: str = "",
    budget: int | None = None,
    topic_budgets: Mapping[str, int] | None = None,
) -> tuple[Strategy, str]:
    """Check judging settings before anything is written (``assign --strategy`` checks them
    before it assigns, so a bad spec leaves no assignment behind).

    Returns:
        (the parsed strategy, the canonical stopping rule spec or "").

    Raises:
        UnknownNameError: unknown strategy or stopping rule.
        ValidationError: bad parameters, ``refresh_every`` < 1 or a budget < 1.
    """
    from workbench.errors import ValidationError

    chosen = parse_strategy(strategy)
    rule = parse_stopping_rule(stopping) if stopping.strip() else None
    if refresh_every < 1:
        raise ValidationError(f"expected --refresh-every >= 1 saves, found {refresh_every}")
    if (budget is not None and budget < 1) or any(b < 1 for b in (topic_budgets or {}).values()):
        raise ValidationError("expected budgets of at least 1 judgment per topic")
    return chosen, str(rule) if rule else ""


def set_strategy(
    store: Store,
    session: Session,
    pool_version: str,
    strategy: str,
    *,
    refresh_every: int = 1,
    stopping: str = "",
    budget: int | None = None,
    topic_budgets: Mapping[str, int] | None = None,
) -> JudgingSetting:
    """Set a pool version's judging strategy and stopping settings (lead only), then re-order every topic.

    Args:
        store: the store.
        session: the signed-in lead.
        pool_version: the pool version.
        strategy: a strategy spec (``rank``, ``mtf``, ``bandit``, ``cal``, ``cal-model``, ...).
        refresh_every: re-order a topic after this many saves on it.
        stopping: a stopping rule spec ("" = none).
        budget: judgments per topic (None = none).
        topic_budgets: topic_id -> budget, overriding ``budget``.

    Raises:
        PermissionDeniedError: not a lead.
        UnknownNameError: unknown pool version, strategy or stopping rule.
        ValidationError: bad parameters.
    """
    _require_lead(session, "set the judging strategy")
    chosen, rule = check_settings(strategy, refresh_every=refresh_every, stopping=stopping, budget=budget,
                                  topic_budgets=topic_budgets)
    setting = store.judging.set_judging_setting(
        pool_version, strategy=str(chosen), lead=session.user, refresh_every=refresh_every,
        stopping=rule, budget=budget, topic_budgets=topic_budgets,
    )
    refresh_topics(store, pool_version)
    return setting


def _topic_pools(pools: Pools, collections: Collections, adjudications: Adjudications, pool_version: str,
                 strategy: Strategy, topics: Sequence[str] | None, collection: str) -> dict[str, TopicPool]:
    from workbench.judging.strategies import build_topic_pools
    from workbench.services.judging.simulation import collection_features

    info = pools.get_pool(pool_version)
    entries = [(e.topic_id, e.doc_id, e.priority_rank) for e in pools.pool_entries(pool_version)
               if topics is None or e.topic_id in topics]
    contributions = []
    for v in pools.pool_lineage(pool_version):
        contributions += [(c.topic_id, c.doc_id, c.run_name, c.rank) for c in pools.pool_provenance(v)
                          if topics is None or c.topic_id in topics]
    queries = {t: topic.query for t, topic in collections.get_topics(collection).items()}
    features = collection_features(collections, collection, info.collection_version) if strategy.name == "cal" else None
    priors: dict[str, dict[str, int]] = {}
    if strategy.uses_prior:
        for (t, d), by_model in adjudications.model_grades(collection, pool_version).items():
            grades = sorted(by_model.values())
            priors.setdefault(t, {})[d] = grades[(len(grades) - 1) // 2]
    built = build_topic_pools(entries, contributions, queries=queries, features=features, priors=priors)
    return {p.topic_id: p for p in built}


def refresh_topics(store: Store, pool_version: str, topics: Sequence[str] | None = None) -> int:
    """Re-order the queues of some (default: all) topics of a pool version by its strategy.

    Returns:
        The number of topics re-ordered (0 when the pool has no judging setting).

    Raises:
        UnknownNameError: unknown pool version.
    """
    setting = store.judging.judging_setting(pool_version)
    if setting is None:
        return 0
    strategy = parse_strategy(setting.strategy)
    plan = stopping_plan(setting)
    collection = store.pools.get_pool(pool_version).collection
    pools = _topic_pools(store.pools, store.collections, store.adjudications, pool_version, strategy, topics, collection)
    judged = store.adjudications.final_grades_detail(pool_version, ORDER_RULE).qrels
    sequence = store.judgments.first_judged(collection, pool_version)
    for topic_id in (list(pools) if topics is None else [t for t in topics if t in pools]):
        pool = pools[topic_id]
        grades = judged.get(topic_id, {})
        seen = [d for d in sequence.get(topic_id, []) if d in grades]
        relevant = [pool.relevant(grades[d]) for d in seen]
        stopped = plan.stopped(topic_id, relevant) or ""
        order = list(seen)
        estimate = None
        if not isinstance(strategy, Rank):
            order += strategy.order(pool, grades)
            if strategy.gives_estimate and not stopped:
                estimate = strategy.estimate_remaining(pool, grades)
        store.judging.apply_topic_order(pool_version, topic_id, order if not isinstance(strategy, Rank) else [],
                                strategy=str(strategy), n_judged=len(seen), n_relevant=sum(relevant),
                                stopped=stopped, estimate=estimate)
    return len(pools) if topics is None else sum(1 for t in topics if t in pools)


def after_save(store: Store, pool_version: str, topic_id: str) -> bool:
    """Called after a person's save: re-order the topic when its pool has a strategy
    and ``refresh_every`` saves on the topic arrived since the last re-ordering.

    Returns:
        True when the topic was re-ordered.
    """
    if not pool_version:
        return False
    setting = store.judging.judging_setting(pool_version)
    if setting is None:
        return False
    state = store.judging.topic_orders(pool_version).get(topic_id)
    collection = store.pools.get_pool(pool_version).collection
    n_now = len(store.judgments.first_judged(collection, pool_version).get(topic_id, []))
    if state is not None and n_now - state.n_judged < setting.refresh_every:
        return False
    refresh_topics(store, pool_version, [topic_id])
    return True


def after_save_quietly(store: Store, pool_version: str, topic_id: str) -> bool:
    """``after_save`` for the save path: the judgment is committed already, so a
    failure to re-order leaves the queue as it was (the next save tries again)
    instead of reporting the save as failed."""
    try:
        return after_save(store, pool_version, topic_id)
    except WorkbenchError:
        return False


@dataclass(frozen=True)
class TopicStrategyRow:
    """One topic of a pool on the lead's Progress page.

    Attributes:
        topic_id: the topic.
        n_judged: documents people judged.
        n_relevant: of those, relevant.
        estimate: estimated relevant documents still unjudged (None = the strategy gives none).
        stopped: why its judging stopped ("" = it goes on).
        budget: its budget (None = none).
    """

    topic_id: str
    n_judged: int
    n_relevant: int
    estimate: float | None
    stopped: str
    budget: int | None


@dataclass(frozen=True)
class StrategyProgress:
    """A pool's judging strategy and its topics' state (lead only).

    Attributes:
        pool_version: the pool version.
        setting: the strategy and stopping settings, or None (rank order, no stopping).
        rows: one per topic the strategy has ordered.
    """

    pool_version: str
    setting: JudgingSetting | None
    rows: tuple[TopicStrategyRow, ...] = ()

    @property
    def estimated_remaining(self) -> float | None:
        """Sum of the topics' estimates (None when no topic has one)."""
        values = [r.estimate for r in self.rows if r.estimate is not None]
        return sum(values) if values else None


def strategy_progress(judging: Judging, pools: Pools, session: Session, pool_version: str) -> StrategyProgress:
    """The Progress page's strategy section (lead only: it shows relevance counts).

    Raises:
        PermissionDeniedError: not a lead.
        UnknownNameError: unknown pool version.
    """
    from workbench.judging.queue import topic_order

    _require_lead(session, "see the judging strategy's progress")
    pools.get_pool(pool_version)
    setting = judging.judging_setting(pool_version)
    if setting is None:
        return StrategyProgress(pool_version, None)
    states = judging.topic_orders(pool_version)
    plan = stopping_plan(setting)
    rows = tuple(
        TopicStrategyRow(t, states[t].n_judged, states[t].n_relevant, states[t].estimate, states[t].stopped,
                         plan.budget_of(t))
        for t in topic_order(states)
    )
    return StrategyProgress(pool_version, setting, rows)
