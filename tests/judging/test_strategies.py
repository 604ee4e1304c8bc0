"""Judging strategies: each one's next choice on small constructed pools."""

from __future__ import annotations

import pytest

from workbench.errors import UnknownNameError, ValidationError
from workbench.judging.strategies import (
    CAL,
    STRATEGIES,
    Bandit,
    MoveToFront,
    Rank,
    TopicPool,
    build_topic_pools,
    parse_strategy,
    tfidf_features,
)
from workbench.judging.strategies.bandit import arm_states

# Two runs, A and B, with disjoint documents; the pool's priority interleaves them.
POOL = TopicPool(
    "1",
    ("a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4"),
    {"A": ("a1", "a2", "a3", "a4"), "B": ("b1", "b2", "b3", "b4")},
)


def test_rank_follows_the_pool_priority_and_skips_judged_documents():
    assert Rank().next_documents(POOL, {"a1": 3, "b1": 0}, 3) == ["a2", "b2", "a3"]
    assert Rank().order(POOL, {d: 0 for d in POOL.documents}) == []


def test_mtf_stays_on_a_run_that_keeps_yielding():
    mtf = MoveToFront()
    assert mtf.next_documents(POOL, {}, 1) == ["a1"]            # all runs equal: the first run listed
    assert mtf.next_documents(POOL, {"a1": 1}, 1) == ["a2"]     # A yielded: stay on A
    assert mtf.next_documents(POOL, {"a1": 1, "a2": 2, "a3": 1}, 1) == ["a4"]
    # A batch continues down the yielding run, then moves to the next run when A is exhausted.
    assert mtf.next_documents(POOL, {"a1": 1}, 4) == ["a2", "a3", "a4", "b1"]


def test_mtf_moves_on_after_a_non_relevant_document_and_comes_back_by_priority():
    mtf = MoveToFront()
    assert mtf.next_documents(POOL, {"a1": 0}, 1) == ["b1"]     # A failed once: B (priority 0 > -1)
    # B fails too: both at -1; the best *other* run than B is A.
    assert mtf.next_documents(POOL, {"a1": 0, "b1": 0}, 1) == ["a2"]
    # A yields a2, then fails a3 (-2): B (-1) next.
    assert mtf.next_documents(POOL, {"a1": 0, "b1": 0, "a2": 1, "a3": 0}, 1) == ["b2"]


def test_mtf_passes_over_documents_judged_from_another_run_without_penalty():
    shared = TopicPool("1", ("x", "a2", "b2"), {"A": ("x", "a2"), "B": ("x", "b2")})
    # x is non-relevant: A (first run) takes the penalty and B is next; B passes over x for free.
    assert MoveToFront().next_documents(shared, {"x": 0}, 1) == ["b2"]
    assert MoveToFront().next_documents(shared, {"x": 0, "b2": 1}, 1) == ["a2"]  # B exhausted


def test_a_bandit_arm_with_only_non_relevant_results_loses_priority():
    judged = {"a1": 0, "a2": 0, "b1": 1}
    for bandit in (Bandit(), Bandit(stationary=True), Bandit(method="thompson", stationary=True, seed=1)):
        assert bandit.next_documents(POOL, judged, 1) == ["b2"], str(bandit)
    arms = {a.run: a for a in arm_states(POOL, judged)}
    assert (arms["A"].relevant, arms["A"].non_relevant, arms["A"].next_doc) == (0.0, 2.0, "a3")
    assert arms["A"].mean == pytest.approx(1 / 4)     # Beta(1, 3)
    assert arms["B"].mean == pytest.approx(2 / 3)     # Beta(2, 1)


def test_maxmean_prefers_the_first_run_on_a_tie_and_batches_down_the_best_arm():
    assert Bandit(stationary=True).next_documents(POOL, {}, 3) == ["a1", "a2", "a3"]


def test_the_non_stationary_bandit_weighs_recent_evidence_more():
    # A: relevant, relevant, then 2 non-relevant; B: 1 relevant, 1 non-relevant.
    pool = TopicPool("1", ("a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3"),
                     {"A": ("a1", "a2", "a3", "a4", "a5"), "B": ("b1", "b2", "b3")})
    judged = {"a1": 1, "a2": 1, "a3": 0, "a4": 0, "b1": 0, "b2": 1}
    # Stationary: A = Beta(3, 3), mean 1/2; B = Beta(2, 2), mean 1/2; tie -> A (listed first).
    assert Bandit(stationary=True).next_documents(pool, judged, 1) == ["a5"]
    # decay 0.5: A = 1 + (0.125 + 0.25) vs 1 + (0.5 + 1) non-relevant -> mean 1.375/3.875;
    # B = 1 + 1 relevant vs 1 + 0.5 -> mean 2/3.5: B wins.
    a = arm_states(pool, judged, decay=0.5)
    assert a[0].mean == pytest.approx(1.375 / 3.875) and a[1].mean == pytest.approx(2 / 3.5)
    assert Bandit(decay=0.5).next_documents(pool, judged, 1) == ["b3"]


def test_thompson_sampling_is_deterministic_for_a_seed():
    t = Bandit(method="thompson", seed=7)
    assert t.next_documents(POOL, {"a1": 1}, 4) == t.next_documents(POOL, {"a1": 1}, 4)


CORPUS = {
    "d1": "supersonic flow over a swept wing at high mach number",
    "d2": "supersonic flow over swept wings at a high mach number",   # near-duplicate of d1
    "d3": "heat transfer in laminar boundary layers of flat plates",
    "d4": "buckling of thin cylindrical shells under axial compression",
    "d5": "creep of metals at elevated temperature",
    "d6": "vibration of cantilever plates",
}


def test_cal_ranks_a_near_duplicate_of_a_relevant_document_first():
    features = tfidf_features(CORPUS)
    pool = TopicPool("1", ("d3", "d4", "d5", "d6", "d2"), {}, query="structures", features=features)
    judged = {"d1": 2, "d3": 0}
    assert CAL(negatives=0).next_documents(pool, judged, 1) == ["d2"]
    assert CAL(negatives=3, seed=5).next_documents(pool, judged, 4)[0] == "d2"
    # Before any relevant judgment the query is the only positive: the best match comes first.
    assert CAL(negatives=0).next_documents(
        TopicPool("1", ("d4", "d3"), {}, query="laminar heat transfer", features=features), {}, 1) == ["d3"]


def test_cal_estimates_remaining_relevant_and_needs_features():
    features = tfidf_features(CORPUS)
    pool = TopicPool("1", ("d2", "d3", "d4"), {}, query="wing", features=features)
    est = CAL(negatives=2).estimate_remaining(pool, {"d1": 2, "d5": 0})
    assert est is not None and 0.0 < est < 3.0
    with pytest.raises(ValidationError, match="tf-idf features"):
        CAL().next_documents(TopicPool("1", ("a",)), {}, 1)


def test_cal_model_uses_the_prior_and_plain_cal_ignores_it():
    features = tfidf_features(CORPUS)
    prior = {"d4": 3, "d3": 0, "d5": 0, "d6": 0, "d2": 0}
    pool = TopicPool("1", ("d2", "d3", "d4", "d5", "d6"), {}, query="flow", features=features, prior=prior)
    assert parse_strategy("cal-model").uses_prior and not parse_strategy("cal").uses_prior
    assert parse_strategy("cal(prior_weight=5.0, negatives=0)").next_documents(pool, {}, 1) == ["d4"]
    assert CAL(negatives=0).next_documents(pool, {}, 1) == ["d2"]  # query "flow" -> d2


def test_autotar_batches_grow_by_a_tenth():
    sizes = CAL().batch_sizes()
    assert [next(sizes) for _ in range(13)] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15]
    fixed = CAL(batch=5, growth=0.0).batch_sizes()
    assert [next(fixed) for _ in range(3)] == [5, 5, 5]


def test_specs_parse_back_and_unknown_names_raise():
    for name, s in STRATEGIES.items():
        assert parse_strategy(str(s)) == s, name
    assert parse_strategy("bandit(method='thompson', seed=3)") == Bandit(method="thompson", seed=3)
    with pytest.raises(UnknownNameError, match="known: bandit, bandit-mm"):
        parse_strategy("greedy")
    with pytest.raises(ValidationError, match="no parameter 'k'"):
        parse_strategy("cal(k=1)")
    with pytest.raises(ValidationError, match="expected a int for batch"):
        parse_strategy("cal(batch=big)")
    with pytest.raises(ValidationError, match="bandit method"):
        parse_strategy("bandit(method='ucb')")


def test_build_topic_pools_orders_documents_and_runs():
    pools = build_topic_pools(
        [("10", "x", 1), ("2", "b", 2), ("2", "a", 1)],
        [("2", "a", "r2", 3), ("2", "b", "r2", 1), ("2", "a", "r1", 1), ("2", "z", "r1", 2)],
        queries={"2": "q"},
    )
    assert [p.topic_id for p in pools] == ["2", "10"]
    assert pools[0].documents == ("a", "b") and pools[0].query == "q"
    assert dict(pools[0].runs) == {"r1": ("a", "z"), "r2": ("b", "a")}


def test_mtf_single_pass_simulation_equals_asking_after_every_judgment():
    import random

    from workbench.judging.strategies import Strategy

    rng = random.Random(5)
    for trial in range(30):
        docs = [f"d{i}" for i in range(rng.randint(3, 25))]
        runs = {f"r{j}": tuple(rng.sample(docs, rng.randint(1, len(docs)))) for j in range(rng.randint(1, 4))}
        extra = [d for d in docs if not any(d in r for r in runs.values())]
        pool = TopicPool("t", tuple(rng.sample(docs, len(docs))), runs)
        oracle = {d: rng.choice([0, 0, 1, 2]) for d in docs}
        limit = rng.randint(1, len(docs))
        fast = MoveToFront().simulate_order(pool, oracle, limit)
        slow = Strategy.simulate_order(MoveToFront(), pool, oracle, limit)
        assert fast == slow, (trial, extra)
