"""Depth-k pooling, priority, budget, extension and statistics, computed by hand."""

from __future__ import annotations

import random

import pytest

from pooling.fusion import CombSUM
from pooling.pool import (
    Contribution,
    build_pool,
    extend_pool,
    pool_content_hash,
    pool_statistics,
)
from workbench.errors import ValidationError

# Two runs, one topic. Canonical ranks (score desc, doc_id desc):
#   A: d1(1) d2(2) d3(3) d4(4)
#   B: d3(1) d5(2) d1(3) d6(4)      (d5 and d1 tie at 0.5; "d5" > "d1" so d5 ranks first)
A = {"t1": {"d1": 0.9, "d2": 0.8, "d3": 0.7, "d4": 0.6}, "t2": {"x": 1.0}}
B = {"t1": {"d3": 3.0, "d5": 0.5, "d1": 0.5, "d6": 0.1}}


def test_depth_k_union_with_provenance_best_rank_and_rrf_priority():
    pool = build_pool({"A": A, "B": B}, depth=3)
    t1 = {e.doc_id: e for e in pool.entries if e.topic_id == "t1"}
    assert set(t1) == {"d1", "d2", "d3", "d5"}  # d4 (A rank 4) and d6 (B rank 4) are below depth
    assert t1["d1"].priority == pytest.approx(1 / (60 + 1) + 1 / (60 + 3))
    assert t1["d3"].priority == pytest.approx(1 / (60 + 3) + 1 / (60 + 1))
    assert t1["d2"].priority == pytest.approx(1 / (60 + 2))
    assert t1["d5"].priority == pytest.approx(1 / (60 + 2))
    assert (t1["d1"].best_rank, t1["d1"].n_runs) == (1, 2)
    assert (t1["d5"].best_rank, t1["d5"].n_runs) == (2, 1)
    # d1 and d3 tie on priority (same pair of ranks): doc_id desc puts d3 first; same for d5/d2.
    order = [e.doc_id for e in pool.entries if e.topic_id == "t1"]
    assert order == ["d3", "d1", "d5", "d2"]
    assert [e.priority_rank for e in pool.entries if e.topic_id == "t1"] == [1, 2, 3, 4]
    prov = [c for c in pool.provenance if c.topic_id == "t1" and c.doc_id == "d1"]
    assert prov == [Contribution("t1", "d1", "A", 1), Contribution("t1", "d1", "B", 3)]
    assert [(e.topic_id, e.doc_id) for e in pool.entries][-1] == ("t2", "x")
    assert pool.runs == ("A", "B") and pool.n_topics == 2 and pool.n_entries == 5


def test_same_inputs_in_any_order_give_the_identical_pool_and_hash():
    rng = random.Random(7)
    runs = {f"r{i}": {f"t{t}": {f"d{rng.randrange(60)}": float(rng.randrange(5)) for _ in range(40)}
                      for t in range(5)} for i in range(6)}
    first = build_pool(runs, depth=10)
    shuffled = {name: {t: dict(sorted(docs.items(), key=lambda _: rng.random()))
                       for t, docs in runs[name].items()}
                for name in sorted(runs, key=lambda _: rng.random())}
    second = build_pool(shuffled, depth=10)
    assert second.entries == first.entries
    assert second.provenance == first.provenance
    assert second.content_hash == first.content_hash == pool_content_hash(first)
    assert build_pool(runs, depth=9).content_hash != first.content_hash


def test_budget_keeps_the_highest_priority_documents_per_topic():
    pool = build_pool({"A": A, "B": B}, depth=3, budget=2)
    assert [(e.topic_id, e.doc_id) for e in pool.entries] == [("t1", "d3"), ("t1", "d1"), ("t2", "x")]
    assert {(c.topic_id, c.doc_id) for c in pool.provenance} == {("t1", "d3"), ("t1", "d1"), ("t2", "x")}
    assert pool.params["budget"] == 2


def test_priority_method_is_pluggable():
    pool = build_pool({"A": A, "B": B}, depth=2, priority=CombSUM())
    t1 = {e.doc_id: e.priority for e in pool.entries if e.topic_id == "t1"}
    # min-max over each depth-2 list: A {d1: 1, d2: 0}; B {d3: 1, d5: 0}
    assert t1 == pytest.approx({"d1": 1.0, "d2": 0.0, "d3": 1.0, "d5": 0.0})
    assert pool.params["priority"]["method"] == "combsum"


@pytest.mark.parametrize("depth,budget", [(0, None), (5, 0)])
def test_invalid_depth_or_budget_is_refused(depth, budget):
    with pytest.raises(ValidationError):
        build_pool({"A": A}, depth=depth, budget=budget)
    with pytest.raises(ValidationError, match="at least one run"):
        build_pool({}, depth=5)


def test_extension_holds_exactly_the_new_runs_novel_documents():
    parent = build_pool({"A": A, "B": B}, depth=3)  # t1: d1 d2 d3 d5; t2: x
    judged = {"t1": {"d9"}}  # judged earlier (e.g. from another pool)
    C = {"t1": {"d9": 5.0, "d6": 4.0, "d1": 3.0, "d7": 2.0, "d8": 1.0}, "t2": {"x": 1.0, "y": 0.5}}
    D = {"t1": {"d7": 1.0, "d2": 0.9}}
    ext = extend_pool(parent.documents(), judged, {"C": C, "D": D}, depth=4)
    # C's top 4 for t1: d9 (judged), d6 (new), d1 (pooled), d7 (new); t2: x (pooled), y (new)
    # D's top 4 for t1: d7 (new), d2 (pooled)
    assert sorted((e.topic_id, e.doc_id) for e in ext.pool.entries) == [
        ("t1", "d6"), ("t1", "d7"), ("t2", "y")]
    assert ext.novel == {"C": {"t1": 2, "t2": 1}, "D": {"t1": 1}}
    assert ext.novel_totals == {"C": 3, "D": 1}
    assert ext.unique_novel == {"C": 2, "D": 0}  # d6 and y are C's alone; d7 both bring
    d7 = next(e for e in ext.pool.entries if e.doc_id == "d7")
    # ranks are the runs' own (C rank 4, D rank 1), not shifted by the exclusions
    assert d7.priority == pytest.approx(1 / (60 + 4) + 1 / (60 + 1))
    assert (d7.best_rank, d7.n_runs) == (1, 2)


def test_extension_with_nothing_new_is_an_empty_delta():
    parent = build_pool({"A": A}, depth=2)
    ext = extend_pool(parent.documents(), {}, {"A2": A}, depth=2)
    assert ext.pool.entries == () and ext.novel == {"A2": {"t1": 0, "t2": 0}}


def test_statistics_sizes_unique_contributions_and_overlap():
    pool = build_pool({"A": A, "B": B, "Z": {"t1": {}}}, depth=3)
    s = pool_statistics(pool.entries, pool.provenance, pool.runs)
    assert s.size_per_topic == {"t1": 4, "t2": 1} and s.total == 5
    assert s.contributed == {"A": 4, "B": 3, "Z": 0}  # A: d1 d2 d3 x; B: d3 d5 d1
    assert s.unique == {"A": 2, "B": 1, "Z": 0}  # A: d2, x; B: d5
    assert s.overlap["A"]["B"] == s.overlap["B"]["A"] == 2  # d1, d3
    assert s.overlap["A"]["A"] == 4 and s.overlap["Z"]["A"] == 0
