"""Final-grade rules, the disagreement queue and qrels diffs."""

from __future__ import annotations

import pytest

from workbench.errors import UnknownNameError
from workbench.judging.adjudication import (
    diff_qrels,
    disagreements,
    final_grades,
    get_rule,
    lower_median,
    majority,
    rule_names,
)
from workbench.types import Qrel

GRADES = {
    ("1", "agree"): {"a": 2, "b": 2},
    ("1", "single"): {"a": 1},
    ("1", "split"): {"a": 0, "b": 3},
    ("1", "three"): {"a": 1, "b": 1, "c": 3},
    ("1", "unsure"): {"a": None, "b": None},
    ("1", "half"): {"a": None, "b": 2},
    ("2", "adj"): {"a": 2, "b": 2},
}
ADJ = {("2", "adj"): 0, ("2", "only-adj"): 3}


def test_registry_lists_and_rejects_unknown():
    assert rule_names() == ["majority", "max", "median", "min"]
    assert get_rule("adjudicated>unanimous>max").fallback == "max"
    with pytest.raises(UnknownNameError, match="known: majority, max, median, min"):
        get_rule("mean")


def test_lower_median_and_majority():
    assert lower_median([0, 3]) == 0
    assert lower_median([1, 2, 3, 0]) == 1
    assert lower_median([3, 1, 2]) == 2
    assert majority([1, 1, 3]) == 1
    assert majority([3, 0]) == 0  # tie goes to the lower grade


@pytest.mark.parametrize(
    ("rule", "split", "three"),
    [("median", 0, 1), ("max", 3, 3), ("min", 0, 1), ("majority", 0, 1)],
)
def test_chain_adjudicated_then_unanimous_then_fallback(rule, split, three):
    fg = final_grades(GRADES, ADJ, rule)
    assert fg.rule == f"adjudicated>unanimous>{rule}"
    assert fg.qrels["1"] == {"agree": 2, "single": 1, "split": split, "three": three, "half": 2}
    assert fg.qrels["2"] == {"adj": 0, "only-adj": 3}  # adjudication beats unanimity
    assert fg.unresolved == [("1", "unsure")]
    assert fg.decisions[("1", "agree")] == "unanimous"
    assert fg.decisions[("1", "split")] == "fallback"
    assert fg.decisions[("2", "adj")] == "adjudicated"
    assert (fg.count("unanimous"), fg.count("fallback"), fg.count("adjudicated")) == (3, 2, 2)


def test_disagreement_queue_sorted_by_spread_and_includes_unsure():
    ds = disagreements({**GRADES, ("2", "alone-unsure"): {"c": None}}, ADJ)
    assert [(d.topic_id, d.doc_id, d.spread) for d in ds] == [
        ("1", "split", 3),
        ("1", "three", 2),
        ("1", "half", 0),
        ("1", "unsure", 0),
        ("2", "alone-unsure", 0),
    ]
    assert ds[0].grades == {"a": 0, "b": 3} and ds[0].adjudicated is None


def test_diff_added_changed_removed():
    old = {"1": {"a": 1, "b": 0, "c": 2}, "2": {"x": 1}}
    new = {"1": {"a": 1, "b": 2, "d": 0}, "3": {"y": 1}}
    d = diff_qrels(old, new)
    assert d.added == [Qrel("1", "d", 0), Qrel("3", "y", 1)]
    assert d.changed == [("1", "b", 0, 2)]
    assert d.removed == [Qrel("1", "c", 2), Qrel("2", "x", 1)]
    assert not d.empty and diff_qrels(new, new).empty
