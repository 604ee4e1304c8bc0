"""Per-topic stopping rules: budget, N consecutive non-relevant, the knee method."""

from __future__ import annotations

import pytest

from workbench.errors import UnknownNameError, ValidationError
from workbench.judging.stopping import (
    Budget,
    ConsecutiveNonRelevant,
    Knee,
    StoppingPlan,
    knee_point,
    parse_stopping_rule,
)


def test_budget_and_consecutive_non_relevant():
    assert not Budget(n=3).should_stop([True, False])
    assert Budget(n=3).should_stop([True, False, False])
    rule = ConsecutiveNonRelevant(n=3)
    assert not rule.should_stop([False, False, True, False, False])
    assert rule.should_stop([True, False, False, False])
    with pytest.raises(ValidationError):
        Budget(n=0)


def test_knee_point_and_slope_ratio_by_hand():
    # Gain curve 1, 2, 3, 3, 3, 3, 3, 3 (s = 8, rel(s) = 3): distances g*s - total*i are
    # 5, 10, 15, 12, 9, 6, 3, 0 -> the knee is at i = 3.
    curve = [True, True, True] + [False] * 5
    assert knee_point(curve) == 3
    # rho = (3 / 3) / ((3 - 3 + 1) / (8 - 3)) = 5; the target 156 - min(3, 150) = 153 is far: go on.
    assert not Knee(min_judged=1).should_stop(curve)
    # With 200 non-relevant after the knee: rho = 1 / (1 / 200) = 200 >= 153: stop.
    long = [True, True, True] + [False] * 200
    assert Knee(min_judged=1).should_stop(long)
    assert not Knee(min_judged=250).should_stop(long)   # never before min_judged
    assert not Knee(min_judged=1).should_stop([False] * 50)  # nothing relevant: no knee to trust


def test_plan_budget_per_topic_wins_over_the_default_and_the_rule():
    plan = StoppingPlan(rule=ConsecutiveNonRelevant(n=2), budget=10, topic_budgets=(("7", 3),))
    assert plan.budget_of("7") == 3 and plan.budget_of("8") == 10
    assert plan.stopped("7", [True, True, True]) == "budget 3"
    assert plan.stopped("8", [True, True, True]) is None
    assert plan.stopped("8", [True, False, False]) == "stop_after_nonrelevant(n=2)"


def test_rule_specs_parse_and_round_trip():
    for spec in ("knee", "knee(min_judged=30)", "stop_after_nonrelevant(n=5)", "budget(n=50)"):
        assert str(parse_stopping_rule(spec)) == spec
    with pytest.raises(UnknownNameError, match="known: budget, knee, stop_after_nonrelevant"):
        parse_stopping_rule("patience")
    with pytest.raises(ValidationError, match="expected an integer for n"):
        parse_stopping_rule("budget(n=many)")
