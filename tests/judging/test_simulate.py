"""Judging simulation: numbers on a small pool worked out by hand, determinism,
the CLI, and the Cranfield runs at depth 20."""

from __future__ import annotations

import json
import math

import pytest

from workbench.judging.simulate import replay, share_label, simulate
from workbench.judging.strategies import CAL, Bandit, MoveToFront, Rank, TopicPool

# Topic 1: priority a, b, c, d; relevant b (1) and d (2): R = 2.  Topic 2: x (1), y: R = 1.
POOLS = [
    TopicPool("1", ("a", "b", "c", "d"), {"A": ("b", "a"), "B": ("c", "a"), "C": ("d", "b")}),
    TopicPool("2", ("x", "y"), {"A": ("x",), "B": ("y", "x"), "C": ("x",)}),
]
ORACLE = {"1": {"b": 1, "d": 2, "a": 0}, "2": {"x": 1}}
# The runs: R@2 on the full oracle is A (1/2 + 1) / 2 = 0.75, B (0 + 1) / 2 = 0.5, C (1 + 1) / 2 = 1.
RUNS = {
    "A": {"1": {"b": 2.0, "a": 1.0}, "2": {"x": 1.0}},
    "B": {"1": {"c": 2.0, "a": 1.0}, "2": {"y": 2.0, "x": 1.0}},
    "C": {"1": {"d": 2.0, "b": 1.0}, "2": {"x": 1.0}},
}


def test_rank_order_numbers_by_hand():
    rep = simulate(POOLS, ORACLE, [Rank()], shares=(0.5, 1.0), runs=RUNS, measure="R@2")
    o = rep.strategies[0]
    assert o.order == {"1": ("a", "b", "c", "d"), "2": ("x", "y")}
    # 50%: topic 1 needs ceil(0.5 * 2) = 1 relevant -> b at 2; topic 2 needs 1 -> x at 1.  Sum 3.
    # 100%: topic 1 needs d at 4, topic 2 x at 1.  Sum 5.  Ideal: 1 + 1 = 2 and 2 + 1 = 3.
    assert o.needed == {0.5: 3, 1.0: 5}
    assert rep.ideal == {0.5: 2, 1.0: 3}
    assert (rep.n_topics, rep.n_documents, rep.n_relevant) == (2, 6, 3)
    # After j = 0..4 judgments per topic (topic 2 has only 2 documents).
    assert o.curve(ORACLE) == [(0, 0), (2, 1), (4, 2), (5, 2), (6, 3)]
    assert rep.full_scores == pytest.approx({"A": 0.75, "B": 0.5, "C": 1.0})
    half, full, whole = o.budgets
    assert (half.label, half.judgments, half.relevant) == ("50%", 3, 2)
    # qrels at 50%: topic 1 {a: 0, b: 1}, topic 2 {x: 1}: R@2 A = (1 + 1)/2, B = (0 + 1)/2, C = (1 + 1)/2.
    assert half.scores == pytest.approx({"A": 1.0, "B": 0.5, "C": 1.0})
    # tau-b of (C 1, A .75, B .5) against (A 1, C 1, B .5): 2 concordant pairs, one tie on the second side:
    # (2 - 0) / sqrt(3 * (3 - 1)).
    assert half.tau == pytest.approx(2 / math.sqrt(6))
    assert (full.label, full.judgments, full.tau) == ("100%", 5, pytest.approx(1.0))
    assert whole.label == "whole pool" and whole.judgments == 6
    assert rep.full_pool_tau == pytest.approx(1.0)
    assert half.cuts == {"1": 2, "2": 1}
    assert half.qrels(o.order, ORACLE) == {"1": {"a": 0, "b": 1}, "2": {"x": 1}}


def test_the_table_and_the_runs_rescored_at_each_budget():
    from workbench.reports.simulation import render_simulation
    from workbench.services.judging.simulation import SimulationRun

    rep = simulate(POOLS, ORACLE, [Rank()], shares=(0.5, 1.0), runs=RUNS, measure="R@2")
    text = render_simulation(SimulationRun("toy", "oracle", ("A", "B", "C"), rep, ORACLE), detail=True)
    lines = text.splitlines()
    assert any(ln.split() == ["rank", "3", "5", "0.816", "1.000"] for ln in lines)
    assert any(ln.split() == ["ideal", "(relevant", "first)", "2", "3"] for ln in lines)
    assert "every run rescored (R@2)" in text
    assert any(ln.split() == ["rank", "50%", "3", "2", "1.0000", "0.5000", "1.0000", "0.816"] for ln in lines)
    assert any(ln.split() == ["(full", "oracle)", "0.7500", "0.5000", "1.0000"] for ln in lines)


def test_a_flat_budget_per_topic_and_shares_not_reached():
    rep = simulate(POOLS, ORACLE, [Rank()], budget=1, shares=(0.5, 1.0), runs=RUNS, measure="R@2")
    o = rep.strategies[0]
    assert o.order == {"1": ("a",), "2": ("x",)}
    assert o.needed == {0.5: None, 1.0: None} and o.short == {0.5: 1, 1.0: 1}
    (flat,) = o.budgets
    # qrels {1: {a: 0}, 2: {x: 1}}: topic 1 has no relevant document (excluded); on topic 2 every run
    # scores 1: all tied, tau undefined.
    assert (flat.label, flat.judgments, flat.relevant, flat.tau) == ("1/topic", 2, 1, None)


def test_mtf_and_the_bandit_on_the_small_pool():
    # MTF starts on A: b (relevant) -> stays -> a (non-relevant) -> A exhausted... next best other run B: c,
    # non-relevant -> C: d.
    assert replay(MoveToFront(), POOLS[0], ORACLE["1"]) == ("b", "a", "c", "d")
    # MaxMean, stationary: A first (tie), b relevant: A = Beta(2, 1); next A's a (non-relevant): A = Beta(2, 2)
    # = 0.5 = B, C; tie -> A is exhausted -> B (listed before C): c non-relevant -> C: d.
    assert replay(Bandit(stationary=True), POOLS[0], ORACLE["1"]) == ("b", "a", "c", "d")
    rep = simulate(POOLS, ORACLE, [MoveToFront()], shares=(0.5, 1.0))
    assert rep.strategies[0].needed == {0.5: 2, 1.0: 5}


def test_simulation_is_deterministic_for_a_seed():
    texts = {"a": "wing flow", "b": "wing flow supersonic", "c": "creep metal", "d": "supersonic wing",
             "x": "heat", "y": "shell", "z": "other words here"}
    from workbench.judging.strategies import tfidf_features

    f = tfidf_features(texts)
    pools = [TopicPool(p.topic_id, p.documents, p.runs, query="supersonic wing", features=f) for p in POOLS]
    strategies = [Bandit(method="thompson", seed=3), CAL(negatives=2, seed=3)]
    a = simulate(pools, ORACLE, strategies)
    b = simulate(pools, ORACLE, strategies)
    assert [o.order for o in a.strategies] == [o.order for o in b.strategies]


def test_share_labels():
    assert [share_label(s) for s in (0.5, 0.9, 0.95, 0.333)] == ["50%", "90%", "95%", "33.3%"]


def test_simulate_cli_on_a_stored_pool(toy_pool, tmp_path, capsys):
    from workbench.cli import main

    db = toy_pool({"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "2": {"d4": 2.0, "d5": 1.0}})
    qrels = tmp_path / "oracle.qrels"
    qrels.write_text("1 0 d3 1\n1 0 d1 0\n2 0 d5 2\n")
    plot = tmp_path / "curve.html"
    assert main(["--db", str(db), "simulate", "p1", "--oracle", str(qrels), "--strategies", "rank,mtf,cal",
                 "--format", "json", "--plot", str(plot), "--seed", "1"]) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    assert out["relevant"] == 2 and out["topics"] == 2 and out["documents"] == 5
    rank = out["strategies"][0]
    # rank order d1, d2, d3 and d4, d5: 100% needs d3 at 3 and d5 at 2.
    assert rank["strategy"] == "rank" and rank["needed_90%"] == 5 and rank["needed_50%"] == 5
    assert out["strategies"][-1] == {"strategy": "ideal (relevant first)", "needed_50%": 2, "needed_80%": 2,
                                     "needed_90%": 2, "needed_95%": 2}
    assert plot.is_file() and "vega" in plot.read_text()
    assert {b["budget"] for b in out["budgets"] if b["strategy"] == "rank"} == {"50%", "80%", "90%", "95%",
                                                                              "whole pool"}
    assert "[finished] simulate p1" in cap.err
    out_dir = tmp_path / "budget-qrels"
    assert main(["--db", str(db), "simulate", "p1", "--oracle", str(qrels), "--strategies", "rank",
                 "--qrels-out", str(out_dir)]) == 0
    capsys.readouterr()
    assert (out_dir / "rank@90pct.qrels").read_text() == "1 0 d1 0\n1 0 d2 0\n1 0 d3 1\n2 0 d4 0\n2 0 d5 2\n"
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "rank@50pct.qrels", "rank@80pct.qrels", "rank@90pct.qrels", "rank@95pct.qrels", "rank@whole_pool.qrels"]
    assert main(["--db", str(db), "simulate", "p1", "--oracle", str(qrels), "--strategies", "greedy"]) == 2  # an unknown strategy: a bad option value
    assert "unknown judging strategy 'greedy'" in capsys.readouterr().err


def test_cranfield_runs_at_depth_20_simulate_in_seconds():
    """Two BM25 runs over the Cranfield sample, pooled at depth 20 (about 5,900 documents):
    rank, MTF and the bandits over every topic, CAL over the first 40."""
    from pooling.pool import build_pool
    from pooling.retrievers.bm25 import Bm25Retriever
    from tests.conftest import SAMPLE
    from workbench.formats import beir, trec
    from workbench.judging.strategies import build_topic_pools
    from workbench.services.judging.simulation import document_text, text_features

    docs = beir.read_corpus(SAMPLE / "corpus.jsonl")
    topics = beir.read_queries(SAMPLE / "queries.jsonl")
    oracle = trec.read_qrels(SAMPLE / "qrels.reference.txt")
    texts = {d.doc_id: document_text(d) for d in docs}
    runs = {}
    for name, stem in (("bm25", None), ("bm25-stem", "english")):
        r = Bm25Retriever(backend="bm25s", stemmer=stem)
        r.index(texts)
        runs[name] = r.retrieve({t.topic_id: t.query for t in topics}, 20).run
    pool = build_pool(runs, depth=20)
    pools = build_topic_pools([(e.topic_id, e.doc_id, e.priority_rank) for e in pool.entries],
                              [(c.topic_id, c.doc_id, c.run_name, c.rank) for c in pool.provenance],
                              queries={t.topic_id: t.query for t in topics}, features=text_features(texts))
    rep = simulate(pools, oracle, [Rank(), MoveToFront(), Bandit(), Bandit(method="thompson")], runs=runs)
    assert rep.n_topics == 225 and rep.n_relevant > 500
    for o in rep.strategies:
        needed = [o.needed[s] for s in rep.shares]
        assert all(n is not None for n in needed)
        assert needed == sorted(needed)  # more of the relevant documents never needs fewer judgments
        assert all(rep.ideal[s] <= o.needed[s] <= rep.n_documents for s in rep.shares)  # type: ignore[operator]
    few = simulate(pools[:40], oracle, [Rank(), CAL()])
    rank, cal = few.strategies
    assert cal.needed[0.9] is not None and rank.needed[0.9] is not None
    assert few.ideal[0.9] <= cal.needed[0.9]
