"""The scorer against independent oracles: pytrec_eval (trec_eval) and ir_measures.

Ties: pytrec_eval orders them as trec_eval (doc_id descending) and is the
oracle on tie-heavy data. ir-measures 0.4.3 breaks ties differently for
RR@k and Judged@k, so it is used on runs with distinct scores only.
"""

from __future__ import annotations

import ir_measures
import pytest
import pytrec_eval

from tests.scoring.conftest import make_data
from workbench.ranking import ranked_ids
from workbench.scoring.evaluate import evaluate
from workbench.scoring.measures import parse_measure as pm
from workbench.scoring.reference import reference_values

KS = (1, 3, 5, 10, 20, 50)


def _pytrec(qrels, run, names, rel=1):
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(names), relevance_level=rel)
    return ev.evaluate(run)


@pytest.mark.parametrize("seed", [7, 8, 9])
@pytest.mark.parametrize("rel", [1, 2])
def test_recall_precision_success_ndcg_match_pytrec_eval_with_ties(seed, rel):
    qrels, run = make_data(seed)
    measures = [f"{m}@{k}" for k in KS for m in ("R", "P", "Success", "nDCG")]
    e = evaluate(qrels, run, measures, rel=rel, missing="exclude")
    names = [f"{n}_{k}" for k in KS for n in ("recall", "P", "success", "ndcg_cut")]
    oracle = _pytrec(qrels, run, names, rel)
    assert len(e.topics) >= 15
    for k in KS:
        for ours, theirs in (("R", "recall"), ("P", "P"), ("Success", "success"), ("nDCG", "ndcg_cut")):
            for t in e.topics:
                assert e.value(f"{ours}@{k}", t) == pytest.approx(oracle[t][f"{theirs}_{k}"], abs=1e-12), (ours, k, t)


@pytest.mark.parametrize("seed", [7, 8])
def test_rr_at_k_matches_recip_rank_on_the_run_cut_at_k(seed):
    qrels, run = make_data(seed)
    for k in (1, 5, 10):
        cut = {t: {d: run[t][d] for d in ranked_ids(run[t], k)} for t in run}
        oracle = _pytrec(qrels, cut, ["recip_rank"])
        e = evaluate(qrels, run, [f"RR@{k}"], missing="exclude")
        for t in e.topics:
            assert e.value(f"RR@{k}", t) == pytest.approx(oracle[t]["recip_rank"], abs=1e-12), (k, t)


def test_macro_average_matches_pytrec_eval_mean():
    qrels, run = make_data(9)
    e = evaluate(qrels, run, ["R@10", "nDCG@10"], missing="exclude")
    oracle = _pytrec(qrels, run, ["recall_10", "ndcg_cut_10"])
    for ours, theirs in (("R@10", "recall_10"), ("nDCG@10", "ndcg_cut_10")):
        expected = sum(oracle[t][theirs] for t in e.topics) / len(e.topics)
        assert e.aggregates[pm(ours)].macro == pytest.approx(expected, abs=1e-12)


IRM = ["Judged@10", "R@10", "nDCG@10", "RR@10", "Success@10", "P@10", "Judged@3", "RR@3"]


def _irm(qrels, run, names):
    out: dict[tuple[str, str], float] = {}
    for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], qrels, run):
        out[(str(m.measure), m.query_id)] = m.value
    return out


@pytest.mark.parametrize("seed", [11, 12])
def test_measures_match_ir_measures_on_distinct_scores(seed):
    qrels, run = make_data(seed, tie_levels=None)
    e = evaluate(qrels, run, IRM, missing="exclude")
    oracle = _irm(qrels, run, IRM)
    for name in IRM:
        for t in e.topics:
            assert e.value(name, t) == pytest.approx(oracle[(name, t)], abs=1e-12), (name, t)


def test_judged_at_k_with_ties_follows_trec_eval_order_not_ir_measures():
    # ir-measures 0.4.3 sorts ties by doc_id ascending for Judged@k; trec_eval descending.
    qrels = {"1": {"a": 0, "z": 1}}
    run = {"1": {"a": 1.0, "b": 1.0, "c": 1.0}}
    e = evaluate(qrels, run, ["Judged@1", "Judged@2"])
    assert e.value("Judged@1", "1") == 0.0          # c first (descending), unjudged
    assert e.value("Judged@2", "1") == 0.0          # c, b
    theirs = _irm(qrels, run, ["Judged@1"])
    assert theirs[("Judged@1", "1")] == 1.0         # ir_measures puts a first: the documented difference


@pytest.mark.parametrize("seed", [7, 21])
def test_columnar_scorer_equals_the_reference_scorer(seed):
    qrels, run = make_data(seed)
    names = ["R@5", "R(rel=2)@20", "P@10", "nDCG@10", "nDCG(dcg='exp-log2')@20", "RR@10", "Success@5", "Judged@10"]
    e = evaluate(qrels, run, names, missing="exclude")
    ref = reference_values(qrels, run, names)
    for name in names:
        m = pm(name)
        assert set(ref[m]) == set(e.topics)
        for t in e.topics:
            assert e.value(m, t) == pytest.approx(ref[m][t], abs=1e-12), (name, t)


# ir_measures' trio for every measure: qrels but no run, a partial run, a run but no qrels.

ALL = ["R@5", "P@5", "nDCG@5", "RR@5", "Success@5", "Judged@5"]
TRIO_QRELS = {"1": {"a": 1, "b": 0}, "2": {"c": 2}}


@pytest.mark.parametrize("name", ALL)
def test_trio_qrels_but_no_run(name):
    z = evaluate(TRIO_QRELS, {}, [name], missing="zero")
    assert z.topics == ("1", "2") and z.missing_topics == ("1", "2")
    assert [z.value(name, t) for t in z.topics] == [0.0, 0.0]  # Judged@k too (issue 26: trec_eval -c)
    assert z.aggregates[pm(name)].n_topics == 2
    x = evaluate(TRIO_QRELS, {}, [name], missing="exclude")
    assert x.topics == () and x.aggregates[pm(name)].n_topics == 0


@pytest.mark.parametrize("name", ALL)
def test_trio_partial_run(name):
    run = {"1": {"a": 2.0, "b": 1.0}}
    z = evaluate(TRIO_QRELS, run, [name], missing="zero")
    x = evaluate(TRIO_QRELS, run, [name], missing="exclude")
    full = {"R@5": 1.0, "P@5": 1 / 5, "nDCG@5": 1.0, "RR@5": 1.0, "Success@5": 1.0, "Judged@5": 1.0}[name]
    assert z.value(name, "1") == pytest.approx(full) and z.value(name, "2") == 0.0  # Judged@k too (issue 26)
    assert z.aggregates[pm(name)].macro == pytest.approx(full / 2)
    assert x.topics == ("1",) and x.aggregates[pm(name)].macro == pytest.approx(full)


@pytest.mark.parametrize("name", ALL)
def test_trio_run_but_no_qrels(name):
    run = {"1": {"a": 2.0}, "2": {"c": 1.0}, "3": {"z": 5.0}}
    e = evaluate(TRIO_QRELS, run, [name])
    assert e.ignored_topics == ("3",) and e.topics == ("1", "2")
