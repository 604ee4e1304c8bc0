"""Hand-made cases: every expected value is written as its formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.errors import MissingTopicsError, ValidationError
from workbench.scoring.columns import RunColumns, pack_ids
from workbench.scoring.evaluate import Evaluator, evaluate
from workbench.scoring.measures import parse_measure as pm

# Topic 1: tied scores whose ids sort differently ascending and descending
# ("d9" > "d10" as strings), a negative grade, an unjudged top document.
QRELS = {
    "1": {"d1": 1, "d2": 0, "d3": 2, "d9": 1, "d10": -1},
    "2": {"a": 0, "b": -2},                       # |R| = 0: excluded
    "3": {f"r{i}": 1 for i in range(5)},          # |R| = 5 > k
}
RUN = {
    "1": {"x": 3.0, "d10": 2.0, "d9": 2.0, "d1": 1.0, "d2": 1.0, "d3": 0.5},
    # canonical order: x, d9, d10, d2, d1, d3 (ties by doc_id descending)
    "2": {"a": 1.0},
    "3": {"r0": 0.9, "n1": 0.8, "r1": 0.7},       # fewer than 10 results
    "9": {"z": 1.0},                               # not in the qrels: ignored
}


def ev(measures, **kw):
    return evaluate(QRELS, RUN, measures, **kw)


def test_trec_eval_tie_order_decides_recall_rr_and_success():
    e = ev(["R@2", "R@3", "R@5", "RR@10", "Success@1", "Success@2", "P@5"])
    assert e.value("R@2", "1") == pytest.approx(1 / 3)      # x, d9
    assert e.value("R@3", "1") == pytest.approx(1 / 3)      # x, d9, d10 (d10 is -1)
    assert e.value("R@5", "1") == pytest.approx(2 / 3)      # + d2 (0), d1 (1)
    assert e.value("RR@10", "1") == pytest.approx(1 / 2)    # d9 at rank 2 (ascending ties would give d10)
    assert e.value("Success@1", "1") == 0.0
    assert e.value("Success@2", "1") == 1.0
    assert e.value("P@5", "1") == pytest.approx(2 / 5)


def test_ndcg_strict_ideal_linear_and_exponential_gain():
    e = ev(["nDCG@5", "nDCG(dcg='exp-log2')@5"])
    dcg = 1 / math.log2(3) + 1 / math.log2(6)              # d9 (1) at rank 2, d1 (1) at rank 5; d10's -1 gains 0
    idcg = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)   # grades 2, 1, 1 from all judgments
    assert e.value("nDCG@5", "1") == pytest.approx(dcg / idcg)
    idcg_exp = 3 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)  # 2^2-1, 2^1-1, 2^1-1
    assert e.value("nDCG(dcg='exp-log2')@5", "1") == pytest.approx(dcg / idcg_exp)
    tm = e.per_topic[pm("nDCG@5")]["1"]
    assert (tm.numerator, tm.denominator) == (pytest.approx(dcg), pytest.approx(idcg))


def test_rel_threshold_is_inclusive_and_per_measure():
    e = ev(["R(rel=2)@5", "R(rel=2)@6", "R@6"])
    assert e.value("R(rel=2)@5", "1") == 0.0                # only d3 (grade 2) at rank 6
    assert e.value("R(rel=2)@6", "1") == 1.0
    assert e.value("R@6", "1") == 1.0
    # Topic 3 has no grade-2 document: excluded for the whole report (same topic set).
    assert e.topics == ("1",) and "3" in e.excluded_topics
    e2 = ev(["R@6"], rel=2)
    assert e2.value("R@6", "1") == 1.0 and e2.rel == 2


def test_judged_counts_negative_grades_and_uses_returned_count():
    e = ev(["Judged@3", "Judged@10"])
    assert e.value("Judged@3", "1") == pytest.approx(2 / 3)   # x unjudged; d9, d10 (-1) judged
    assert e.value("Judged@10", "1") == pytest.approx(5 / 6)  # 6 returned, 5 judged
    assert e.value("Judged@10", "3") == pytest.approx(2 / 3)  # 3 returned (< k): r0, r1 judged
    assert e.per_topic[pm("Judged@10")]["3"].denominator == 3


def test_zero_relevant_topics_are_excluded_and_listed_not_scored():
    e = ev(["R@10", "P@10"])
    assert e.topics == ("1", "3")
    assert e.excluded_topics == ("2",)
    assert "2" not in e.per_topic[pm("R@10")]
    assert e.aggregates[pm("R@10")].n_topics == 2


def test_recall_above_k_ceiling_macro_and_micro():
    e = ev(["R@2", "P@10"])
    agg = e.aggregates[pm("R@2")]
    r1, r3 = 1 / 3, 1 / 5                                   # topic 3: r0 at rank 1, n1 at 2
    assert e.value("R@2", "3") == pytest.approx(r3)
    assert agg.macro == pytest.approx((r1 + r3) / 2)
    assert agg.micro == pytest.approx((1 + 1) / (3 + 5))
    assert agg.ceiling == pytest.approx((min(2, 3) / 3 + min(2, 5) / 5) / 2)
    assert agg.sum_numerator == 2 and agg.sum_denominator == 8
    assert e.value("P@10", "3") == pytest.approx(2 / 10)    # denominator k even with 3 results
    assert e.aggregates[pm("P@10")].ceiling == pytest.approx((3 / 10 + 5 / 10) / 2)


def test_run_topics_without_qrels_are_ignored_and_listed():
    e = ev(["R@10"])
    assert e.ignored_topics == ("9",)
    assert "9" not in e.per_topic[pm("R@10")]


def test_pool_novel_documents_counts_lists_and_bounds():
    e = ev(["R@3", "R@10"])
    nov = e.novelty[3]
    assert nov.unjudged == {"1": 1, "3": 1}                 # x; n1
    assert nov.returned == {"1": 3, "3": 3}
    assert nov.recall_low["1"] == pytest.approx(1 / 3)
    assert nov.recall_high["1"] == pytest.approx((1 + 1) / (3 + 1))
    assert nov.recall_high["3"] == pytest.approx((2 + 1) / (5 + 1))
    assert nov.macro_high == pytest.approx(((2 / 4) + (3 / 6)) / 2)
    assert nov.total_unjudged == 2 and nov.unjudged_share == pytest.approx(2 / 6)
    assert e.novel_documents.with_ranks(3) == {"1": [(1, "x")], "3": [(2, "n1")]}
    assert e.novel_documents.at(10) == {"1": ["x"], "3": ["n1"]}
    assert e.novel_documents.ranks_at(10) == {"1": [1], "3": [2]}
    with pytest.raises(ValueError):
        e.novel_documents.at(11)


def test_judged_of_a_topic_with_no_results_scores_0_under_missing_zero_as_every_measure():
    # Issue 26: under --missing zero a topic with no results was left out of Judged@k's mean (0/0,
    # issue 9) while the help said "zero scores them 0" and the header said every measure is averaged
    # over the same topics. trec_eval -c, pytrec_eval (an empty result list: num_ret = 0, P_k = 0) and
    # ir_measures (Judged@k of a topic the run lacks: 0) all score it 0, and so do we.
    import ir_measures

    qrels = {t: {f"{t}a": 1, f"{t}b": 0, f"{t}c": 0} for t in "12345"}
    run = {t: {f"{t}a": 3.0, f"{t}b": 2.0, f"{t}c": 1.0} for t in "123"}
    run["4"] = {"4a": 3.0, "4b": 2.0, "4x": 1.0}  # 2 of 3 judged
    z = evaluate(qrels, run, ["Judged@3", "R@3"], missing="zero")
    assert z.missing_topics == ("5",)
    judged = z.aggregates[pm("Judged@3")]
    tm = z.per_topic[pm("Judged@3")]["5"]
    assert (tm.value, tm.numerator, tm.denominator) == (0.0, 0.0, 0.0)  # nothing returned, nothing judged
    assert judged.n_topics == 5 == z.aggregates[pm("R@3")].n_topics  # every measure over the same topics
    assert judged.macro == pytest.approx((1 + 1 + 1 + 2 / 3 + 0) / 5)
    assert judged.micro == pytest.approx(11 / 12)  # the empty topic adds 0 to both sums
    oracle = ir_measures.calc_aggregate([ir_measures.Judged @ 3], qrels, run)
    assert judged.macro == pytest.approx(oracle[ir_measures.Judged @ 3])


def test_missing_topics_fail_by_default_and_list_them():
    qrels = {"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 1}}
    run = {"1": {"a": 1.0}}
    with pytest.raises(MissingTopicsError) as err:
        evaluate(qrels, run, ["R@10"], run_name="bm25")
    assert err.value.topics == ["2", "3"] and err.value.run == "bm25"
    assert "--missing zero" in str(err.value)


def test_missing_topics_zero_and_exclude():
    qrels = {"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 0}}
    run = {"1": {"a": 1.0}}
    z = evaluate(qrels, run, ["R@10", "nDCG@10", "RR@10", "Judged@10"], missing="zero")
    assert z.topics == ("1", "2") and z.missing_topics == ("2",) and z.missing == "zero"
    assert z.value("R@10", "2") == 0.0 and z.value("Judged@10", "2") == 0.0  # every measure 0 (trec_eval -c)
    assert z.aggregates[pm("R@10")].macro == pytest.approx((1 + 0) / 2)
    x = evaluate(qrels, run, ["R@10"], missing="exclude")
    assert x.topics == ("1",) and x.missing_topics == ("2",) and x.missing == "exclude"
    assert x.aggregates[pm("R@10")].macro == 1.0
    # Topic 3 (|R| = 0) is excluded, not missing, under every policy.
    assert z.excluded_topics == ("3",) == x.excluded_topics


def test_failed_topics_count_as_missing_even_with_rows():
    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    run = {"1": {"a": 1.0}, "2": {"b": 1.0}}
    with pytest.raises(MissingTopicsError):
        evaluate(qrels, run, ["R@1"], failed_topics={"2"})
    z = evaluate(qrels, run, ["R@1"], failed_topics={"2"}, missing="zero")
    assert z.value("R@1", "2") == 0.0 and z.n_results["2"] == 0


def test_empty_run_misses_every_topic():
    with pytest.raises(MissingTopicsError):
        evaluate({"1": {"a": 1}}, {}, ["R@10"])
    x = evaluate({"1": {"a": 1}}, {}, ["R@10"], missing="exclude")
    assert x.topics == () and x.aggregates[pm("R@10")].n_topics == 0
    assert math.isnan(x.aggregates[pm("R@10")].macro)


def test_duplicates_keep_the_best_ranked_occurrence_and_are_counted():
    # Lines: d1 0.2, d2 0.5, d1 0.9 (duplicate, higher), d3 0.1, d2 0.1 (duplicate, lower)
    cols = RunColumns(
        topic_ids=("1",),
        topic_codes=np.zeros(5, dtype=np.int32),
        doc_words=pack_ids(["d1", "d2", "d1", "d3", "d2"]),
        scores=np.array([0.2, 0.5, 0.9, 0.1, 0.1]),
        name="dup",
    )
    e = Evaluator({"1": {"d1": 1, "d2": 1, "d3": 1}}, ["R@1", "R@2", "RR@10", "Judged@10"]).evaluate(cols)
    assert e.duplicates == {"1": 2} and e.n_duplicates == 2
    assert e.n_results == {"1": 3}                          # d1, d2, d3
    assert e.value("R@1", "1") == pytest.approx(1 / 3)      # d1 at rank 1 (its 0.9 line)
    assert e.value("R@2", "1") == pytest.approx(2 / 3)
    assert e.value("Judged@10", "1") == 1.0                 # 3 of 3, not 3 of 5


def test_trust_file_order_uses_the_rank_column():
    cols = RunColumns(
        topic_ids=("1",),
        topic_codes=np.zeros(3, dtype=np.int32),
        doc_words=pack_ids(["a", "b", "c"]),
        scores=np.array([0.1, 0.9, 0.5]),
        file_ranks=np.array([1, 3, 2]),
    )
    e = Evaluator({"1": {"a": 1}}, ["RR@10"]).evaluate(cols)
    assert e.value("RR@10", "1") == 1.0                     # a is rank 1 by the file (last by score)


def test_recall_curve_macro_micro_and_ceiling():
    qrels = {"1": {"a": 1, "b": 1}, "2": {"c": 1}}
    run = {"1": {"a": 3.0, "x": 2.0, "b": 1.0}, "2": {"y": 2.0, "c": 1.0}}
    c = evaluate(qrels, run, ["R@3"]).curve
    assert c.depth == 3
    assert c.macro == pytest.approx(((1 / 2 + 0) / 2, (1 / 2 + 1) / 2, (1 + 1) / 2))
    assert c.micro == pytest.approx((1 / 3, 2 / 3, 3 / 3))
    assert c.ceiling == pytest.approx(((1 / 2 + 1) / 2, (1 + 1) / 2, 1.0))


def test_relevant_ranks_and_misses():
    e = ev(["R@3"])
    assert [(d.topic_id, d.doc_id, d.grade, d.rank) for d in e.relevant] == [
        ("1", "d3", 2, 6), ("1", "d1", 1, 5), ("1", "d9", 1, 2),
        ("3", "r0", 1, 1), ("3", "r1", 1, 3), ("3", "r2", 1, None), ("3", "r3", 1, None), ("3", "r4", 1, None),
    ]
    assert [(d.doc_id, d.rank) for d in e.misses(3)] == [
        ("d3", 6), ("d1", 5), ("r2", None), ("r3", None), ("r4", None)
    ]


def test_topic_restriction_and_values_carry_evidence():
    e = ev(["R@5"], topics={"3"})
    assert e.topics == ("3",)
    tm = e.per_topic[pm("R@5")]["3"]
    assert (tm.topic_id, tm.measure, tm.numerator, tm.denominator) == ("3", "R@5", 2.0, 5.0)
    assert tm.value == tm.numerator / tm.denominator


def test_bad_policy_and_rel_are_rejected():
    with pytest.raises(ValidationError):
        Evaluator(QRELS, ["R@10"], missing="skip")
    with pytest.raises(ValidationError):
        Evaluator(QRELS, ["R@10"], rel=-1)
    with pytest.raises(ValidationError):
        Evaluator(QRELS, [])


def test_one_evaluator_scores_many_runs_and_reports_missing_topics():
    from workbench.scoring.columns import rank_run, run_columns_from_mapping

    ev = Evaluator(QRELS, ["R@5"])
    a = ev.evaluate(RUN, run_name="a")
    b = ev.evaluate({"1": {"d1": 1.0}, "3": {"r4": 1.0}}, run_name="b")
    assert a.value("R@5", "1") == pytest.approx(2 / 3) and b.value("R@5", "1") == pytest.approx(1 / 3)
    partial = rank_run(run_columns_from_mapping({"1": {"d1": 1.0}}))
    assert ev.missing_topics(partial) == ("3",)
    assert ev.missing_topics(partial, failed_topics={"1"}) == ("1", "3")


def test_per_topic_values_behave_as_read_only_mappings():
    e = ev(["R@5"])
    per = e.per_topic[pm("R@5")]
    assert list(per) == ["1", "3"] and len(per) == 2 and "2" not in per
    assert dict(per) == {t: per[t] for t in ("1", "3")}
    assert per == evaluate(QRELS, RUN, ["R@5"]).per_topic[pm("R@5")]
    assert dict(e.novelty[5].unjudged) == {"1": 1, "3": 1}
    assert isinstance(e.novelty[5].recall_high["1"], float) and isinstance(e.novelty[5].returned["1"], int)
