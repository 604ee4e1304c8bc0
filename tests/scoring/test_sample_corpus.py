"""Realistic runs over the Cranfield sample, scored three ways against pytrec_eval and ir_measures.

A real BM25 run (scores rounded to 2 decimals, so ties are common) and a seeded
random run are scored from mappings and from TREC files (the columnar reader);
every measure is checked per topic against pytrec_eval (trec_eval's tie order)
and, on the tie-free random run, Judged@10 and RR@10 against ir_measures.
"""

from __future__ import annotations

import random
from pathlib import Path

import ir_measures
import pytest
import pytrec_eval

from workbench.formats import trec
from workbench.formats.columnar import read_run_columns
from workbench.ranking import ranked_ids
from workbench.scoring.evaluate import Evaluator, evaluate
from workbench.scoring.reference import reference_values

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus" / "cranfield"
pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.reference.txt").exists(), reason="sample corpus not present")

MEASURES = ["R@5", "R@10", "R@20", "R@50", "R@100", "nDCG@10", "nDCG@20", "P@10", "Success@10", "RR@10", "Judged@10"]


@pytest.fixture(scope="module")
def cranfield():
    from workbench.formats import beir

    qrels = trec.read_qrels(SAMPLE / "qrels.reference.txt")
    docs = {d.doc_id: d.content for d in beir.read_corpus(SAMPLE / "corpus.jsonl")}
    queries = {t.topic_id: t.query for t in beir.read_queries(SAMPLE / "queries.jsonl")}
    return qrels, docs, queries


@pytest.fixture(scope="module")
def bm25_run(cranfield):
    from pooling.retrievers.bm25 import Bm25Retriever

    _, docs, queries = cranfield
    run = Bm25Retriever().index(docs).retrieve(queries, k=100).run
    return {t: {d: round(s, 2) for d, s in scores.items()} for t, scores in run.items()}


@pytest.fixture(scope="module")
def random_run(cranfield):
    qrels, docs, queries = cranfield
    rng = random.Random(2024)
    ids = sorted(docs)
    run = {}
    for t in queries:
        judged = list(qrels.get(t, {}))
        picks = set(rng.sample(judged, min(len(judged), rng.randint(0, 8)))) | set(rng.sample(ids, 120))
        run[t] = {d: rng.random() for d in picks}
    return run


def _pytrec(qrels, run):
    names = {"recall_5", "recall_10", "recall_20", "recall_50", "recall_100", "ndcg_cut_10", "ndcg_cut_20",
             "P_10", "success_10"}
    full = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    cut = {t: {d: run[t][d] for d in ranked_ids(run[t], 10)} for t in run}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
    return full, rr


ORACLE = {"R@5": "recall_5", "R@10": "recall_10", "R@20": "recall_20", "R@50": "recall_50", "R@100": "recall_100",
          "nDCG@10": "ndcg_cut_10", "nDCG@20": "ndcg_cut_20", "P@10": "P_10", "Success@10": "success_10"}


@pytest.mark.parametrize("which", ["bm25_run", "random_run"])
def test_every_measure_matches_pytrec_eval_per_topic(cranfield, which, request):
    qrels = cranfield[0]
    run = request.getfixturevalue(which)
    e = evaluate(qrels, run, MEASURES, missing="exclude")
    assert len(e.topics) > 200
    full, rr = _pytrec(qrels, run)
    for name, key in ORACLE.items():
        for t in e.topics:
            assert e.value(name, t) == pytest.approx(full[t][key], abs=1e-12), (name, t)
    for t in e.topics:
        assert e.value("RR@10", t) == pytest.approx(rr[t]["recip_rank"], abs=1e-12), t
    ref = reference_values(qrels, run, MEASURES)
    for m in e.measures:
        assert {t: e.value(m, t) for t in e.topics} == pytest.approx(ref[m], abs=1e-12)


def test_judged_and_rr_match_ir_measures_on_the_tie_free_run(cranfield, random_run):
    qrels = cranfield[0]
    e = evaluate(qrels, random_run, ["Judged@10", "RR@10", "nDCG@10"], missing="exclude")
    ms = [ir_measures.parse_measure(n) for n in ("Judged@10", "RR@10", "nDCG@10")]
    theirs = {(str(m.measure), m.query_id): m.value for m in ir_measures.iter_calc(ms, qrels, random_run)}
    for name in ("Judged@10", "RR@10", "nDCG@10"):
        for t in e.topics:
            assert e.value(name, t) == pytest.approx(theirs[(name, t)], abs=1e-12), (name, t)


def test_file_path_scores_like_the_mapping_path(cranfield, bm25_run, tmp_path):
    qrels = cranfield[0]
    path = tmp_path / "bm25.trec"
    trec.write_run(path, bm25_run, "bm25")
    ev = Evaluator(qrels, MEASURES, missing="zero")
    from_file = ev.evaluate(read_run_columns(path))
    from_map = ev.evaluate(bm25_run)
    assert from_file.topics == from_map.topics
    for m in ev.measures:
        assert from_file.per_topic[m] == from_map.per_topic[m]
        assert from_file.aggregates[m] == from_map.aggregates[m]
    assert from_file.novel_documents.at(100) == from_map.novel_documents.at(100)
    assert from_file.curve == from_map.curve


# -- trec_eval's summary measures (issue 26) ---------------------------------------------------------

WHOLE = ["AP", "AP@10", "AP@100", "Rprec", "Bpref", "NumRelRet", "NumRel", "NumRet"]
TREC = ["map", "map_cut_10", "map_cut_100", "Rprec", "bpref", "num_rel_ret", "num_rel", "num_ret"]


@pytest.mark.parametrize("which", ["bm25_run", "random_run"])
@pytest.mark.parametrize("rel", [1, 3])
def test_map_rprec_bpref_and_counts_match_pytrec_eval(cranfield, which, rel, request):
    qrels = cranfield[0]
    run = request.getfixturevalue(which)
    e = evaluate(qrels, run, WHOLE, rel=rel, missing="exclude")
    assert len(e.topics) > (200 if rel == 1 else 100)
    names = {"map", "map_cut", "Rprec", "bpref", "num_rel_ret", "num_rel", "num_ret"}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, names, relevance_level=rel).evaluate(run)
    for ours, theirs in zip(WHOLE, TREC, strict=True):
        for t in e.topics:
            assert e.value(ours, t) == pytest.approx(oracle[t][theirs], abs=1e-12), (ours, t)
        values = [oracle[t][theirs] for t in e.topics]
        agg = e.aggregates[e.measures[WHOLE.index(ours)]]
        all_line = pytrec_eval.compute_aggregated_measure(theirs, values)   # trec_eval's summary line
        assert (agg.micro if theirs.startswith("num_") else agg.macro) == pytest.approx(all_line, abs=1e-12), ours
    ref = reference_values(qrels, run, WHOLE, rel=rel)
    for m in e.measures:
        assert {t: e.value(m, t) for t in e.topics} == pytest.approx(ref[m], abs=1e-12)


def test_rbp_matches_ir_measures_on_the_tie_free_run(cranfield, random_run):
    qrels = cranfield[0]
    e = evaluate(qrels, random_run, ["RBP(p=0.8)", "RBP(p=0.95)"], missing="exclude")
    ms = [ir_measures.RBP(p=0.8, rel=1), ir_measures.RBP(p=0.95, rel=1)]
    theirs = {(m.measure["p"], m.query_id): m.value for m in ir_measures.iter_calc(ms, qrels, random_run)}
    for p in (0.8, 0.95):
        for t in e.topics:
            assert e.value(f"RBP(p={p})", t) == pytest.approx(theirs[(p, t)], abs=1e-12), (p, t)
