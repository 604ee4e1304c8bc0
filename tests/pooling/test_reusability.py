from __future__ import annotations

import math

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


# -- leave-one-run-out and pool bias (pure), by hand ---------------------------------

from pooling.reusability import contributors_at_depth, leave_one_run_out, pool_bias  # noqa: E402

# Two topics, two runs at depth 2.  t1: a brings d1 (relevant) alone, d2 (relevant) is shared;
# t2: the only relevant document d5 comes from b alone.
RUNS = {
    "a": {"t1": {"d1": 2.0, "d2": 1.0}, "t2": {"d4": 1.0}},
    "b": {"t1": {"d2": 2.0, "d3": 1.0}, "t2": {"d5": 2.0, "d4": 1.0}},
}
QRELS = {"t1": {"d1": 1, "d2": 1, "d3": 0}, "t2": {"d4": 0, "d5": 2}}


def test_leave_one_run_out_excludes_a_topic_whose_relevant_documents_all_came_from_that_run():
    contributors = contributors_at_depth(RUNS, 2)
    assert contributors["t2"] == {"d4": {"a", "b"}, "d5": {"b"}}
    a, b = leave_one_run_out(QRELS, contributors, RUNS, "R@2")
    # Leave a out: remove d1 (t1).  t1's R = {d2}: a finds it -> 1.  t2 unchanged: a finds nothing -> 0.
    # Full R@2 of a: t1 2/2 = 1, t2 0/1 = 0 -> 0.5; reduced (1 + 0) / 2 = 0.5.
    assert (a.run, a.n_unique, a.n_unique_relevant, a.excluded) == ("a", 1, 1, ())
    assert (a.full, a.reduced) == (pytest.approx(0.5), pytest.approx(0.5))
    # Leave b out: remove d3 (t1) and d5 (t2): t2 has no relevant document left -> excluded, not 0.
    # Over t1 only: b full = 1/2 (d2 of d1, d2), reduced = 1/2; a full = 1.
    assert (b.run, b.n_unique, b.n_unique_relevant, b.excluded, b.topics) == ("b", 2, 1, ("t2",), ("t1",))
    assert (b.full, b.reduced, b.drop) == (pytest.approx(0.5), pytest.approx(0.5), pytest.approx(0.0))
    assert b.tau == pytest.approx(1.0) and not b.order_changed


def test_pool_bias_scores_both_qrels_on_the_same_topics():
    pooled = {"t1": {"d1": 1, "d2": 0}, "t2": {"d4": 0}}          # t2: no relevant document in the pool
    full = {"t1": {"d1": 1, "d2": 0, "d9": 1}, "t2": {"d5": 1}}
    rep = pool_bias(pooled, full, RUNS, "R@2")
    assert rep.topics == ("t1",) and rep.excluded == ("t2",)
    a, b = rep.rows
    # a on t1: pooled R = {d1} -> 1; full R = {d1, d9} -> 1/2.  b: 0 and 0.
    assert (a.pooled, a.full, a.gap) == (pytest.approx(1.0), pytest.approx(0.5), pytest.approx(0.5))
    assert (b.pooled, b.full) == (0.0, 0.0)


def test_leave_one_run_out_gives_tau_with_the_left_out_run_and_with_every_run_rescored():
    # Issue 26: tau rescored only the left-out run. Pool depth 1, R@3, one topic with relevant p, q, s:
    # a pools p (and finds q, s below the depth), b pools q, c pools s (and finds p below the depth).
    runs = {"a": {"t": {"p": 3.0, "q": 2.0, "s": 1.0}},
            "b": {"t": {"q": 3.0, "v": 2.0, "w": 1.0}},
            "c": {"t": {"s": 3.0, "p": 2.0, "u": 1.0}}}
    qrels = {"t": {"p": 1, "q": 1, "s": 1}}
    rows = {r.run: r for r in leave_one_run_out(qrels, contributors_at_depth(runs, 1), runs, "R@3")}
    full = {"a": 3 / 3, "b": 1 / 3, "c": 2 / 3}                                     # order a > c > b
    # Leave a out (p removed, R = {q, s}): a 2/2, b 1/2, c 1/2.  a alone rescored: 1, 1/3, 2/3, the same
    # order (tau 1); every run rescored: b and c tie. tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)) with
    # 3 pairs, C = 2 (a-b, a-c), D = 0, one tie in the second ordering: 2 / sqrt(3 * 2).
    a = rows["a"]
    assert (a.full, a.reduced) == (pytest.approx(full["a"]), pytest.approx(1.0))
    assert a.tau == pytest.approx(1.0) and not a.order_changed
    assert a.reduced_all == {"a": pytest.approx(1.0), "b": pytest.approx(1 / 2), "c": pytest.approx(1 / 2)}
    assert a.tau_all == pytest.approx(2 / math.sqrt(6))
    assert a.moved_all == ("c", "b")  # a, c, b -> a, b, c (the tie broken by name)
    # Leave b out (q removed, R = {p, s}): b 0, a 2/2, c 2/2: a and c tie; b alone: 0 < 1/3, same order.
    b = rows["b"]
    assert b.tau == pytest.approx(1.0) and b.reduced_all == {"a": 1.0, "b": 0.0, "c": 1.0}
    assert b.tau_all == pytest.approx(2 / math.sqrt(6)) and b.moved_all == ()  # a, c, b either way
    # Leave c out (s removed, R = {p, q}): c finds p: 1/2, a 2/2, b 1/2.
    c = rows["c"]
    assert c.reduced == pytest.approx(1 / 2) and c.tau == pytest.approx(1.0)
    assert c.reduced_all == {"a": 1.0, "b": pytest.approx(1 / 2), "c": pytest.approx(1 / 2)}
    assert c.tau_all == pytest.approx(2 / math.sqrt(6)) and c.moved_all == ("c", "b")  # b and c tie: b first
