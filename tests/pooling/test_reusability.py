from __future__ import annotations

import pytest

from pooling.reusability import (
    kendall_tau,
    ordering,
    qrels_without,
    rank_changes,
    unique_contributions,
)


def test_unique_contributions_are_the_docs_only_that_run_brought():
    prov = {"t1": {"d1": {"a"}, "d2": {"a", "b"}, "d3": {"b"}}, "t2": {"d4": {"b"}}}
    assert unique_contributions(prov, "a") == {"t1": {"d1"}}
    assert unique_contributions(prov, "b") == {"t1": {"d3"}, "t2": {"d4"}}
    assert unique_contributions(prov, "c") == {}


def test_qrels_without_drops_pairs_and_emptied_topics():
    qrels = {"t1": {"d1": 1, "d2": 0}, "t2": {"d4": 2}}
    assert qrels_without(qrels, {"t1": {"d1"}, "t2": {"d4"}}) == {"t1": {"d2": 0}}


def test_kendall_tau_of_identical_and_reversed_orderings():
    a = {"x": 0.3, "y": 0.2, "z": 0.1}
    assert kendall_tau(a, a) == pytest.approx(1.0)
    assert kendall_tau(a, {"x": 0.1, "y": 0.2, "z": 0.3}) == pytest.approx(-1.0)
    # one swapped pair out of three: (concordant - discordant) / 3 = (2 - 1) / 3
    assert kendall_tau(a, {"x": 0.2, "y": 0.3, "z": 0.1}) == pytest.approx(1 / 3)


def test_ordering_breaks_ties_by_name_and_rank_changes_lists_movers():
    assert ordering({"b": 0.5, "a": 0.5, "c": 0.9}) == ["c", "a", "b"]
    assert list(rank_changes({"a": 0.3, "b": 0.2}, {"a": 0.1, "b": 0.2})) == ["a", "b"]
    with pytest.raises(ValueError):
        kendall_tau({"a": 1.0}, {"a": 1.0})
