"""ANN-recall@k (workbench.scoring.ann_recall): hand-computed values, ties at the k boundary, edge topics."""

from __future__ import annotations

import math

import pytest

from workbench.errors import ValidationError
from workbench.scoring.ann_recall import (
    ann_recall,
    ann_recall_name,
    ann_recall_topic,
    diagnose_sweep,
    parse_ann_recall_name,
)


def test_value_is_shared_top_k_over_k_and_ignores_order_within_k():
    exact = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}
    approx = {"c": 0.7, "a": 0.9, "z": 0.1}  # a and c of the exact top 3; order within k is irrelevant
    t = ann_recall_topic("1", approx, exact, 3)
    assert (t.numerator, t.denominator, t.value) == (2, 3, 2 / 3)
    assert not t.boundary_tie and t.tied_outside == 0


def test_approximate_documents_below_k_do_not_count():
    exact = {"a": 0.9, "b": 0.8, "c": 0.7}
    approx = {"x": 0.99, "y": 0.98, "a": 0.9}  # a is the approximate run's 3rd: outside its top 2
    assert ann_recall_topic("1", approx, exact, 2).numerator == 0


def test_a_tie_across_k_is_cut_by_doc_id_descending_and_counted():
    # b and c tie at the boundary of k = 2: the ordering rule keeps c (doc_id desc), not b.
    exact = {"a": 0.9, "b": 0.5, "c": 0.5, "d": 0.1}
    approx_b = {"a": 0.9, "b": 0.5}
    t = ann_recall_topic("1", approx_b, exact, 2)
    assert (t.numerator, t.denominator) == (1, 2)  # b is outside the exact top 2 by the rule ...
    assert t.boundary_tie and t.tied_outside == 1  # ... and the report says it is a tie-order swap
    assert t.with_ties == 2 / 2
    t_c = ann_recall_topic("1", {"a": 0.9, "c": 0.5}, exact, 2)
    assert (t_c.numerator, t_c.boundary_tie, t_c.tied_outside) == (2, True, 0)
    # A tie group deeper than the exact run: the index's own score (equal up to float32 rounding) decides.
    shallow = {"a": 0.9, "c": 0.5, "b": 0.5}  # exact run 3 deep; e also scores 0.5 but lies deeper
    deep = ann_recall_topic("1", {"a": 0.9, "e": 0.5 + 1e-8}, shallow, 2)
    assert (deep.numerator, deep.boundary_tie, deep.tied_outside) == (1, True, 1)
    assert ann_recall_topic("1", {"a": 0.9, "e": 0.49}, shallow, 2).tied_outside == 0
    # A tie inside the top k (ranks 1 and 2) is not a boundary tie.
    assert not ann_recall_topic("1", {}, {"a": 0.5, "b": 0.5, "c": 0.1}, 2).boundary_tie


def test_macro_micro_missing_excluded_and_extra_topics():
    exact = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}, "2": {"d": 3.0, "e": 2.0, "f": 1.0}, "3": {}}
    approx = {"1": {"a": 3.0, "b": 2.0}, "9": {"a": 1.0}}  # topic 2 missing, topic 9 unknown
    r = ann_recall(approx, exact, 2, exact_depth=3)
    assert r.name == "ANN-recall@2"
    assert [t.topic_id for t in r.topics] == ["1", "2"]
    assert r.macro == pytest.approx((2 / 2 + 0 / 2) / 2)
    assert (r.sum_numerator, r.sum_denominator, r.micro) == (2, 4, 0.5)
    assert (r.n_missing, r.excluded, r.n_extra) == (1, ("3",), 1)


def test_a_collection_smaller_than_k_divides_by_what_exists():
    r = ann_recall({"1": {"a": 1.0}}, {"1": {"a": 1.0, "b": 0.5}}, 10)
    assert (r.topics[0].numerator, r.topics[0].denominator, r.macro) == (1, 2, 0.5)


def test_an_exact_run_too_shallow_to_see_boundary_ties_is_refused():
    with pytest.raises(ValidationError, match="at least 11 deep"):
        ann_recall({}, {"1": {"a": 1.0}}, 10, exact_depth=10)
    with pytest.raises(ValidationError, match="k >= 1"):
        ann_recall({}, {}, 0)
    assert math.isnan(ann_recall({}, {}, 1).macro)


def test_the_name_is_not_r_at_k_and_parses_back():
    assert ann_recall_name(10) == "ANN-recall@10"
    assert parse_ann_recall_name("ANN-recall@10") == 10
    with pytest.raises(ValidationError, match="ANN-recall@k"):
        parse_ann_recall_name("R@10")


def test_diagnosis_tunes_the_index_when_ann_recall_falls_and_blames_the_representation_when_exact_is_low():
    d = diagnose_sweep([("nprobe=1", 0.60, 0.40), ("nprobe=8", 0.97, 0.55)], 0.56, 1.0)
    assert d.verdicts == ("tune the index", "index holds")
    assert d.lost == pytest.approx((0.56 - 0.40, 0.56 - 0.55))
    assert "tune the index there" in d.lines[0] and "nprobe=1" in d.lines[0]
    assert not d.representation_low
    low = diagnose_sweep([("efSearch=64", 0.99, 0.20)], 0.21, 0.9)
    assert low.representation_low and any("embeddings, preprocessing, labels or the query" in s for s in low.lines)
