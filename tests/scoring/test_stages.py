"""Stage-named recall (issue 10): the decomposition on hand-made runs, the diagnosis on constructed cases.

Expected values are written as the formula (hits / |R|) or come from pytrec_eval.
"""

from __future__ import annotations

import math

import pytest

from workbench.errors import ValidationError
from workbench.scoring.columns import rank_run, run_columns_from_mapping
from workbench.scoring.evaluate import Evaluator
from workbench.scoring.stages import (
    DIAGNOSES,
    Thresholds,
    Violation,
    diagnose,
    diagnose_run,
    ingestion_check,
    rerank_violations,
    stage_label,
    stage_measures,
    stage_report,
    top_set_difference,
)

# Two topics. t1: relevant a, b, c (grades 2, 1, 1), d judged non-relevant. t2: relevant e, f.
QRELS = {"t1": {"a": 2, "b": 1, "c": 1, "d": 0}, "t2": {"e": 1, "f": 3, "g": 0}}

# Candidates at depth D = 4: t1 ranks x, a, y, b (then c at 5); t2 ranks g, h, e, i (f at 6).
CANDIDATES = {
    "t1": {"x": 9.0, "a": 8.0, "y": 7.0, "b": 6.0, "c": 5.0, "z": 4.0},
    "t2": {"g": 9.0, "h": 8.0, "e": 7.0, "i": 6.0, "j": 5.0, "f": 4.0},
}
D, K = 4, 2


def _top(run, depth):
    return {t: [d for d, _ in sorted(s.items(), key=lambda kv: (-kv[1], kv[0]))][:depth] for t, s in run.items()}


def _rerank(order):
    """A run whose scores put the documents in ``order`` (topic -> doc ids, best first)."""
    return {t: {d: float(len(ds) - i) for i, d in enumerate(ds)} for t, ds in order.items()}


# A permutation of the candidates' top 4: a and b first on t1, e first on t2.
PERMUTED = _rerank({"t1": ["a", "b", "x", "y"], "t2": ["e", "g", "h", "i"]})


def _evals(final):
    ev = Evaluator(QRELS, stage_measures(D, K))
    cand = ev.evaluate(CANDIDATES, run_name="bm25")
    return cand, ev.evaluate(final, run_name="bm25+ce")


def _pytrec(run, measures):
    import pytrec_eval

    ev = pytrec_eval.RelevanceEvaluator({t: dict(d) for t, d in QRELS.items()}, set(measures))
    return ev.evaluate({t: dict(s) for t, s in run.items()})


def test_stage_rows_are_named_by_stage_and_agree_with_pytrec_eval():
    cand, final = _evals(PERMUTED)
    rep = stage_report(cand, final, depth=D, k=K, candidate_name="bm25", final_name="bm25+ce", reranker="ce")
    assert [r.label for r in rep.rows] == [
        "R@4 [candidates: bm25]", "R@2 [candidates: bm25]", "nDCG@2 [candidates: bm25]",
        "R@4 [final: bm25+ce]", "R@2 [final: bm25+ce]", "nDCG@2 [final: bm25+ce]"]
    oracle_c = _pytrec(CANDIDATES, {"recall_4", "recall_2", "ndcg_cut_2"})
    oracle_f = _pytrec(PERMUTED, {"recall_4", "recall_2", "ndcg_cut_2"})
    for stage, oracle in (("candidates", oracle_c), ("final", oracle_f)):
        for m, key in (("R@4", "recall_4"), ("R@2", "recall_2"), ("nDCG@2", "ndcg_cut_2")):
            assert rep.row(m, stage).macro == pytest.approx(sum(oracle[t][key] for t in QRELS) / 2)
    # By hand: candidates R@4 = (2/3 + 1/2) / 2, micro (2 + 1) / (3 + 2); ceiling min(4,|R|)/|R| = 1.
    r4 = rep.row("R@4", "candidates")
    assert (r4.macro, r4.micro, r4.ceiling) == (pytest.approx((2 / 3 + 1 / 2) / 2), pytest.approx(3 / 5), 1.0)
    # R@2 ceiling: t1 min(2, 3)/3, t2 min(2, 2)/2.
    assert rep.row("R@2", "final").ceiling == pytest.approx((2 / 3 + 1) / 2)
    assert rep.row("nDCG@2", "final").ceiling is None


def test_a_permutation_keeps_recall_at_depth():
    cand, final = _evals(PERMUTED)
    new, dropped = top_set_difference(rank_run(run_columns_from_mapping(CANDIDATES)),
                                      rank_run(run_columns_from_mapping(PERMUTED)), D)
    rep = stage_report(cand, final, depth=D, k=K, candidate_name="bm25", reranker="ce",
                       new_documents=new, n_dropped=dropped)
    c = rep.check
    assert c is not None and c.recall_equal and c.is_permutation and c.differing == ()
    assert c.candidate_macro == c.final_macro == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert (new, dropped) == ({}, 0)


def test_a_non_permutation_is_caught_by_recall_and_by_the_document_sets():
    # t1's reranked top 4 holds c (relevant, ranked 5th by the candidates): R@4 rises from 2/3 to 1.
    leaky = _rerank({"t1": ["a", "c", "b", "x"], "t2": ["e", "g", "h", "i"]})
    cand, final = _evals(leaky)
    new, dropped = top_set_difference(rank_run(run_columns_from_mapping(CANDIDATES)),
                                      rank_run(run_columns_from_mapping(leaky)), D)
    rep = stage_report(cand, final, depth=D, k=K, candidate_name="bm25", reranker="ce",
                       new_documents=new, n_dropped=dropped)
    c = rep.check
    assert not c.recall_equal and not c.is_permutation
    assert c.differing == (("t1", pytest.approx(2 / 3), pytest.approx(1.0)),)
    assert (new, dropped, c.n_new) == ({"t1": ("c",)}, 1, 1)  # c came in, y fell out


def test_a_swap_of_non_relevant_documents_keeps_recall_but_not_the_document_sets():
    # z (not relevant, candidate rank 6) replaces y: R@4 is unchanged, the set check still catches it.
    swapped = _rerank({"t1": ["a", "b", "x", "z"], "t2": ["e", "g", "h", "i"]})
    cand, final = _evals(swapped)
    new, dropped = top_set_difference(rank_run(run_columns_from_mapping(CANDIDATES)),
                                      rank_run(run_columns_from_mapping(swapped)), D)
    rep = stage_report(cand, final, depth=D, k=K, candidate_name="bm25", new_documents=new, n_dropped=dropped,
                       reranker="ce")
    assert rep.check.recall_equal and not rep.check.is_permutation
    assert (new, dropped) == ({"t1": ("z",)}, 1)


def test_stock_is_recall_at_depth_minus_recall_at_k_and_contribution_is_the_final_gain():
    cand, final = _evals(PERMUTED)
    rep = stage_report(cand, final, depth=D, k=K, candidate_name="bm25", reranker="ce")
    dec = rep.decomposition
    # Candidates: t1 R@4 = 2/3 (a, b), R@2 = 1/3 (a); t2 R@4 = 1/2 (e), R@2 = 0.
    assert dec.stock_macro == pytest.approx(((2 / 3 - 1 / 3) + (1 / 2 - 0)) / 2)
    assert dec.stock_micro == pytest.approx(3 / 5 - 1 / 5)
    assert dec.stock_macro == pytest.approx(rep.row("R@4", "candidates").macro - rep.row("R@2", "candidates").macro)
    # Final: t1 R@2 = 2/3 (a, b), t2 R@2 = 1/2 (e): contribution = mean final R@2 - mean candidate R@2.
    assert dec.contribution_macro == pytest.approx((2 / 3 + 1 / 2) / 2 - (1 / 3 + 0) / 2)
    assert dec.contribution_micro == pytest.approx(3 / 5 - 1 / 5)
    # The reranker promoted every promotable relevant document: contribution == stock.
    assert dec.realised == pytest.approx(1.0)


def test_a_single_stage_run_reports_its_own_stock_and_no_check():
    cand, _ = _evals(PERMUTED)
    rep = stage_report(cand, None, depth=D, k=K, candidate_name="bm25")
    assert not rep.two_stage and rep.check is None and rep.decomposition.contribution_macro is None
    assert rep.decomposition.realised is None
    assert [r.label for r in rep.rows] == ["R@4 [candidates: bm25]", "R@2 [candidates: bm25]",
                                           "nDCG@2 [candidates: bm25]"]
    assert len(rep.diagnoses) == 1


def test_evaluations_over_different_topics_are_refused():
    ev = Evaluator(QRELS, stage_measures(D, K), missing="exclude")
    cand = ev.evaluate(CANDIDATES, run_name="bm25")
    final = ev.evaluate({"t1": PERMUTED["t1"]}, run_name="partial")
    with pytest.raises(ValidationError, match="different topics"):
        stage_report(cand, final, depth=D, k=K, candidate_name="bm25")


def test_a_missing_measure_is_a_clear_error():
    cand = Evaluator(QRELS, ["R@4"]).evaluate(CANDIDATES, run_name="bm25")
    with pytest.raises(ValidationError, match="not scored with R@2"):
        stage_report(cand, None, depth=D, k=K, candidate_name="bm25")


def test_stage_label_and_measures():
    assert stage_label("R@50", "candidates", "bm25") == "R@50 [candidates: bm25]"
    assert [str(m) for m in stage_measures(10, 10)] == ["R@10", "nDCG@10"]


# -- diagnosis -------------------------------------------------------------------------------


@pytest.mark.parametrize(("recall", "ndcg", "label"), [
    (0.93, 0.30, "ranking problem"),
    (0.63, 0.88, "candidate generation problem"),
    (0.20, 0.10, "check ingestion"),
    (0.95, 0.90, "stop"),
    (0.80, 0.50, "stop"),            # thresholds are inclusive
    (0.7999, 0.50, "candidate generation problem"),
    (0.80, 0.4999, "ranking problem"),
])
def test_diagnose_labels(recall, ndcg, label):
    assert diagnose(recall, ndcg) == label


def test_diagnosis_per_topic_counts_on_constructed_topics():
    # Each topic has one relevant document r; depth D = 3, k = 1.
    # q1: r at rank 2 -> R@3 = 1, nDCG@1 = 0: ranking problem.
    # q2: r at rank 1 -> R@3 = 1, nDCG@1 = 1: stop.
    # q3: r absent   -> R@3 = 0, nDCG@1 = 0: check ingestion.
    # q4: two relevant (r at rank 1, s absent) -> R@3 = 1/2, nDCG@1 = 1: candidate generation problem.
    qrels = {"q1": {"r": 1}, "q2": {"r": 1}, "q3": {"r": 1}, "q4": {"r": 1, "s": 1}}
    run = {"q1": {"x": 3.0, "r": 2.0, "y": 1.0}, "q2": {"r": 3.0, "x": 2.0}, "q3": {"x": 1.0},
           "q4": {"r": 3.0, "x": 2.0}}
    e = Evaluator(qrels, stage_measures(3, 1)).evaluate(run, run_name="bm25")
    d = diagnose_run(e, 3, 1)
    assert dict(d.per_topic) == {"q1": "ranking problem", "q2": "stop", "q3": "check ingestion",
                                 "q4": "candidate generation problem"}
    assert d.counts == {label: 1 for label in DIAGNOSES}
    # The run's own label comes from its macro values: R@3 = (1 + 1 + 0 + 1/2) / 4, nDCG@1 = (0 + 1 + 0 + 1) / 4.
    assert (d.recall, d.ndcg) == (pytest.approx(2.5 / 4), pytest.approx(0.5))
    assert d.label == "candidate generation problem"
    assert diagnose_run(e, 3, 1, thresholds=Thresholds(recall=0.6, ndcg=0.6)).label == "ranking problem"


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan])
def test_thresholds_outside_0_1_are_refused(bad):
    with pytest.raises(ValidationError, match="between 0 and 1"):
        Thresholds(recall=bad)


def test_ingestion_check_separates_absent_empty_and_indexed_documents():
    qrels = {"q1": {"r": 1, "gone": 1, "blank": 1}, "q2": {"r": 1}}
    e = Evaluator(qrels, stage_measures(2, 1)).evaluate({"q1": {"x": 1.0}, "q2": {"r": 1.0}}, run_name="bm25")
    d = diagnose_run(e, 2, 1)
    assert d.per_topic == {"q1": "check ingestion", "q2": "stop"}
    c = ingestion_check(e, d, absent_docs={"gone"}, empty_docs={"blank"})
    assert (c.n_topics, c.n_missed, c.absent, c.empty, c.n_indexed) == (1, 3, (("q1", "gone"),), (("q1", "blank"),), 1)
    # a document with a title and no text is counted apart, not as indexed with text
    c = ingestion_check(e, d, absent_docs={"gone"}, empty_docs=set(), title_only_docs={"blank"})
    assert (c.empty, c.title_only, c.n_indexed) == ((), (("q1", "blank"),), 1)


# -- import check and document sets ----------------------------------------------------------------


def test_rerank_violations_list_each_topic_document_pair_outside_the_candidates():
    top = _top(CANDIDATES, D)
    assert rerank_violations(top, PERMUTED, D) == []
    bad = {"t1": {"a": 3.0, "c": 2.0, "b": 1.0}, "t2": {"e": 1.0}, "t9": {"a": 1.0}}
    assert rerank_violations(top, bad, D) == [Violation("t1", "c", 2), Violation("t9", "a", 1)]
    # Below the depth nothing is checked: c at rank 5 of a 4-deep rerank is fine.
    tail = _rerank({"t1": ["a", "b", "x", "y", "c"]})
    assert rerank_violations(top, tail, D) == []


def test_top_set_difference_uses_the_canonical_order_and_ids_of_any_length():
    # Tied scores: the canonical rule (doc_id descending) decides who is in the top 2.
    cand = rank_run(run_columns_from_mapping({"1": {"a": 1.0, "b": 1.0, "c": 1.0}}))  # top 2: c, b
    long_id = "document-with-a-long-identifier-" + "x" * 40
    final = rank_run(run_columns_from_mapping({"1": {"b": 2.0, long_id: 1.0}, "2": {"a": 1.0}}))
    new, dropped = top_set_difference(cand, final, 2)
    assert new == {"1": (long_id,), "2": ("a",)} and dropped == 1  # c missing from the final top 2
    assert top_set_difference(cand, final, 2, topics=["1"]) == ({"1": (long_id,)}, 1)


def test_docstring_examples_of_the_pipeline_modules():
    import doctest

    import pooling.retrievers.rerank
    import workbench.lineage
    import workbench.scoring.depth
    import workbench.scoring.stages

    for module in (workbench.scoring.stages, workbench.scoring.depth, workbench.lineage, pooling.retrievers.rerank):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_top_set_difference_gives_the_same_answer_when_every_hash_collides(monkeypatch):
    import numpy as np

    import workbench.scoring.stages as stages

    cand = rank_run(run_columns_from_mapping(CANDIDATES))
    leaky = rank_run(run_columns_from_mapping(_rerank({"t1": ["a", "c", "b", "x"], "t2": ["e", "g", "h", "i"]})))
    fast = top_set_difference(cand, leaky, D)
    monkeypatch.setattr(stages, "hash_words", lambda words: np.zeros(len(words), dtype=np.uint64))
    assert top_set_difference(cand, leaky, D) == fast == ({"t1": ("c",)}, 1)
