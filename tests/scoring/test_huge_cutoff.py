"""A huge cut-off (``nDCG@1000000000``) costs what the run's length does: no table is built to rank k.

The tester's ``score --qrels SAMPLE -m nDCG@1000000000`` exhausted memory: infNDCG@k asked
``gains.discounts(k)`` for a billion entries. Every scorer's tables are bounded by what can be
ranked (the run's length, the judged count); a spy on the shared tables refuses any request
deeper than this file's data could ever need.
"""

from __future__ import annotations

import pytest

from workbench.scoring import estimate, evaluate, gains, small
from workbench.scoring.estimate import SampledQrels, estimate_topic
from workbench.scoring.evaluate import Evaluator
from workbench.scoring.small import SmallEvaluator, SmallRun

HUGE = 1_000_000_000
BOUND = 1_000  # no table here needs more than a handful of ranks


@pytest.fixture(autouse=True)
def bounded_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    real_discounts, real_powers = gains.discounts, gains.rbp_powers

    def discounts(n: int) -> list[float]:
        assert n <= BOUND, f"discounts({n}) asked for"
        return real_discounts(n)

    def rbp_powers(p: float, n: int) -> list[float]:
        assert n <= BOUND, f"rbp_powers({p}, {n}) asked for"
        return real_powers(p, n)

    for module in (estimate, evaluate, small):
        if hasattr(module, "discounts"):
            monkeypatch.setattr(module, "discounts", discounts)
        if hasattr(module, "rbp_powers"):
            monkeypatch.setattr(module, "rbp_powers", rbp_powers)


def test_infndcg_at_a_huge_k_equals_infndcg_at_the_run_length() -> None:
    sq = SampledQrels({"t": {"a": 2, "c": 1}}, {"t": {"a": "1-1", "b": "2-3", "c": "2-3"}},
                      {"t": {"1-1": 1, "2-3": 2}})
    huge = estimate_topic(["b", "a"], sq, "t", (HUGE,))
    whole = estimate_topic(["b", "a"], sq, "t", (3,))  # the ideal's length: deeper changes nothing
    # by hand: DCG = gain 2 * weight 1 / log2(3); ideal = [2 (a, weight 1), 1, 1 (c stands for 2)]
    idcg = 2.0 + 1.0 / 1.584962500721156 + 1.0 / 2.0
    assert huge.infndcg[HUGE] == pytest.approx((2.0 / 1.584962500721156) / idcg)
    assert huge.infndcg[HUGE] == whole.infndcg[3]
    assert huge.recall[HUGE] == whole.recall[3] == 1.0 / 3.0  # a (weight 1) of R̂ = 1 + 2
    assert huge.precision[HUGE] == 1.0 / HUGE


@pytest.mark.parametrize("name", ["nDCG@1000000000", "R@1000000000", "P@1000000000", "RBP(p=0.9)@1000000000"])
def test_ordinary_scorers_at_a_huge_k(name: str) -> None:
    qrels = {"1": {"d1": 1, "d2": 2}, "2": {"d9": 1}}
    run = {"1": ["d2", "d3", "d1"]}
    ev = Evaluator(qrels, [name], missing="zero").evaluate(
        {"1": {"d2": 3.0, "d3": 2.0, "d1": 1.0}}, run_name="r")
    sm = SmallEvaluator(qrels, [name], missing="zero").evaluate(SmallRun(run))
    m = ev.measures[0]
    assert ev.aggregates[m].macro == sm.aggregates[sm.measures[0]].macro
    expected = {"nDCG@1000000000": 0.5 * (2.0 + 1.0 / 2.0) / (2.0 + 1.0 / 1.584962500721156),
                "R@1000000000": 0.5, "P@1000000000": 0.5 * 2 / HUGE}
    if name in expected:
        assert ev.aggregates[m].macro == pytest.approx(expected[name])


def test_small_scorer_with_no_evaluated_topic_at_a_huge_k() -> None:
    sm = SmallEvaluator({"1": {"d1": 1}}, ["nDCG@1000000000"], missing="exclude").evaluate(SmallRun({"9": ["x"]}))
    assert sm.aggregates[sm.measures[0]].n_topics == 0
