"""Estimates from a judged stratified sample, by hand and against trec_eval (pytrec_eval) for infAP."""

from __future__ import annotations

import math
import random

import pytest

from pooling.pool import build_pool
from pooling.sample import OUTSIDE as SAMPLE_OUTSIDE
from pooling.sample import SampleDesign, draw_sample, parse_strata
from workbench.scoring.estimate import (
    INFAP_EPSILON,
    OUTSIDE,
    Z95,
    SampledQrels,
    StratumStats,
    estimate_topic,
    infap,
    infap_qrels,
    macro,
    micro_recall,
    ratio_variance,
)

# One topic, one run ranking a..f; the frame: a, b in stratum 1-2; c, d, e, f in stratum 3-6.
RANKED = ["a", "b", "c", "d", "e", "f"]
FRAME = {"t": {"a": "1-2", "b": "1-2", "c": "3-6", "d": "3-6", "e": "3-6", "f": "3-6"}}
POPS = {"t": {"1-2": 2, "3-6": 4}}
TRUTH = {"a": 1, "b": 0, "c": 1, "d": 0, "e": 1, "f": 0}          # |R| = 3


def test_the_constants_agree_with_their_sources():
    from scipy.stats import norm

    assert OUTSIDE == SAMPLE_OUTSIDE
    assert Z95 == pytest.approx(norm.ppf(0.975), abs=1e-15)
    assert INFAP_EPSILON == 0.00001                      # trec_eval.h


def test_every_stratum_at_rate_one_reproduces_the_exact_values():
    sq = SampledQrels({"t": dict(TRUTH)}, FRAME, POPS)
    e = estimate_topic(RANKED, sq, "t", (1, 2, 3, 6))
    assert e.r_hat == 3.0 and e.r_hat_var == 0.0                       # every document judged: no sampling error
    assert [e.recall[k] for k in (1, 2, 3, 6)] == [1 / 3, 1 / 3, 2 / 3, 1.0]
    assert [e.precision[k] for k in (1, 2, 3, 6)] == [1.0, 1 / 2, 2 / 3, 3 / 6]
    assert all(e.recall_var[k] == 0.0 for k in (1, 2, 3, 6))
    # xinfAP with everything judged is AP up to epsilon: (1/1 + 2/3 + 3/5) / 3
    assert e.xinfap == pytest.approx((1 + 2 / 3 + 3 / 5) / 3, abs=1e-4)
    # infNDCG with everything judged is nDCG (gain = grade, log2 discount)
    dcg = 1 / math.log2(2) + 1 / math.log2(4)                            # a at 1, c at 3
    idcg = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)         # three grade-1 documents
    assert e.infndcg[3] == pytest.approx(dcg / idcg)


def test_a_stratum_at_rate_one_half_doubles_its_counts():
    # stratum 3-6 sampled at 1/2: c (relevant) and d (non-relevant) judged; each stands for 2 documents
    sq = SampledQrels({"t": {"a": 1, "b": 0, "c": 1, "d": 0}}, FRAME, POPS)
    e = estimate_topic(RANKED, sq, "t", (1, 3, 6))
    assert e.r_hat == 1 + 2 * 1                                         # a, and c twice
    assert e.hits[3] == 1 + 2 and e.recall[3] == 1.0                    # a and c are in the top 3
    assert e.hits[1] == 1 and e.recall[1] == pytest.approx(1 / 3)
    assert e.precision[3] == pytest.approx(3 / 3) and e.precision[6] == pytest.approx(3 / 6)
    # Var(R̂): stratum 3-6, y = (1, 0), s^2 = 1/2: N^2 (1 - n/N) s^2 / n = 16 * 1/2 * 1/2 / 2
    assert e.r_hat_var == pytest.approx(16 * 0.5 * 0.5 / 2)
    # R̂@1 = 1/3: z = y_1 - r y over the judged; in 3-6: z(c) = 0 - 1/3, z(d) = 0: s_z^2 = (1/3)^2 / 2
    assert e.recall_var[1] == pytest.approx(16 * 0.5 * ((1 / 3) ** 2 / 2) / 2 / 9)


def test_xinfap_by_hand_on_a_half_sampled_stratum():
    sq = SampledQrels({"t": {"a": 1, "b": 0, "c": 1, "d": 0}}, FRAME, POPS)
    e = estimate_topic(RANKED, sq, "t", (6,))
    eps = INFAP_EPSILON
    # a at rank 1: expected precision 1, weight 1. c at rank 3: above it a, b of stratum 1-2 (1 rel, 1 nonrel)
    p_above = 2 * (1 + eps) / (1 + 1 + 2 * eps)          # stratum 1-2's two documents at its judged proportion
    at_c = 1 / 3 + (2 / 3) * (p_above / 2)
    assert e.xinfap == pytest.approx((1 * 1 + at_c * 2) / 3)


def test_a_stratum_without_judgments_leaves_the_topic_undefined_never_zero():
    sq = SampledQrels({"t": {"a": 1, "b": 0}}, FRAME, POPS)           # no document of 3-6 judged
    e = estimate_topic(RANKED, sq, "t", (2,))
    assert not e.defined and "3-6" in e.why and math.isnan(e.recall[2]) and math.isnan(e.r_hat)
    m = macro([e.recall[2], 0.5], [e.recall_var[2], 0.01], 2)
    assert m.n_topics == 1 and m.value == 0.5                          # left out of the mean, not counted as 0


def test_sampled_but_unjudged_documents_are_missing_at_random_in_their_stratum():
    # 3-6 drew c, d, e; e is unjudged: the two judged stand for the 4 (pi = 2/4), not 3 of them with e = 0
    sq = SampledQrels({"t": {"a": 1, "b": 0, "c": 1, "d": 0}}, FRAME, POPS,
                      sampled={"t": {"a": "1-2", "b": "1-2", "c": "3-6", "d": "3-6", "e": "3-6"}})
    e = estimate_topic(RANKED, sq, "t", (3,))
    assert e.r_hat == 3.0 and e.n_judged == 4


def test_outside_documents_count_only_with_an_outside_stratum():
    ranked = ["x", "a"]
    without = SampledQrels({"t": {"a": 1, "b": 0, "c": 1, "d": 0, "e": 0, "f": 0}}, FRAME, POPS)
    assert estimate_topic(ranked, without, "t", (1,)).unsampleable[1] == 1       # x has inclusion probability 0
    pops = {"t": {**POPS["t"], OUTSIDE: 10}}
    judged = {"t": {"a": 1, "b": 0, "c": 1, "d": 0, "e": 0, "f": 0, "x": 1}}
    with_out = SampledQrels(judged, FRAME, pops, outside=True)
    e = estimate_topic(ranked, with_out, "t", (1, 2))
    assert e.r_hat == 2 + 10 and e.recall[1] == pytest.approx(10 / 12) and e.unsampleable[1] == 0


def test_infap_is_trec_evals_on_random_topics():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(3)
    for _ in range(200):
        docs = [f"d{i:02d}" for i in range(25)]
        qrels = {}
        for d in docs:
            x = rng.random()
            if x < 0.25:
                qrels[d] = rng.choice([1, 2])
            elif x < 0.55:
                qrels[d] = 0
            elif x < 0.75:
                qrels[d] = -1
        run = {d: float(rng.randint(0, 5)) for d in rng.sample(docs, 15)}   # ties: doc_id descending
        ranked = sorted(run, reverse=True)
        ranked.sort(key=lambda d: run[d], reverse=True)
        expected = pytrec_eval.RelevanceEvaluator({"q": qrels}, {"infAP"}).evaluate({"q": run})["q"]["infAP"]
        assert infap(ranked, qrels) == pytest.approx(expected, abs=1e-12)


def test_infap_by_hand():
    # a relevant at rank 1; x pooled-unjudged; n judged non-relevant; b relevant at rank 4
    eps = INFAP_EPSILON
    got = infap(["a", "x", "n", "b", "z"], {"a": 1, "b": 1, "x": -1, "n": 0})
    at_b = 1 / 4 + (3 / 4) * ((1 + 1 + 1) / 3) * ((1 + eps) / (1 + 1 + 2 * eps))
    assert got == pytest.approx((1 + at_b) / 2, abs=1e-15)


def test_infap_qrels_marks_the_unjudged_frame_with_minus_one():
    sq = SampledQrels({"t": {"a": 1, "c": 0}}, FRAME, POPS, sampled={"t": {"a": "1-2", "c": "3-6", "z": OUTSIDE}})
    q = infap_qrels(sq, "t")
    assert q == {"a": 1, "b": -1, "c": 0, "d": -1, "e": -1, "f": -1, "z": -1}


def test_the_ratio_variance_from_sufficient_statistics_equals_the_direct_formula():
    # stratum: 5 judged of 20; y = 1,1,1,0,0; y_k = 1,0,0,0,0; r = 0.4
    r = 0.4
    z = [1 - r, -r, -r, 0, 0]
    mean = sum(z) / 5
    s2 = sum((v - mean) ** 2 for v in z) / 4
    assert ratio_variance([StratumStats(5, 20, 3, 1)], r) == pytest.approx(400 * (1 - 5 / 20) * s2 / 5)


def test_micro_recall_is_the_combined_ratio():
    sq = SampledQrels({"t": {"a": 1, "b": 0, "c": 1, "d": 0}, "u": {"a": 1, "b": 1}},
                      {**FRAME, "u": {"a": "1-2", "b": "1-2"}}, {**POPS, "u": {"1-2": 2}})
    es = [estimate_topic(RANKED, sq, t, (1,)) for t in ("t", "u")]
    m = micro_recall(es, 1)
    assert m.value == pytest.approx((1 + 1) / (3 + 2)) and m.n_topics == 2


def test_macro_interval_by_hand():
    m = macro([0.2, 0.4, math.nan], [0.01, 0.03, math.nan], 9)
    se = math.sqrt(0.04) / 2
    assert (m.value, m.n_topics, m.n_judged) == (pytest.approx(0.3), 2, 9)
    assert (m.low, m.high) == (pytest.approx(0.3 - Z95 * se), pytest.approx(0.3 + Z95 * se))
    assert macro([0.99], [0.01], 1).high == 1.0                      # clipped to [0, 1]


def test_the_sample_draws_n_h_of_n_h_reproducibly_from_the_seed():
    runs = {"a": {"t": {f"d{i}": float(-i) for i in range(10)}}, "b": {"t": {f"d{i}": float(i) for i in range(10)}}}
    pool = build_pool(runs, depth=4)                                  # best ranks: d0,d9 1; d1,d8 2; ...
    design = SampleDesign(4, parse_strata("1-2:1.0,3-4:0.5", 4), outside_rate=0.5, seed=11)
    s = draw_sample(pool, design, [f"d{i}" for i in range(10)])
    counts = {c.stratum: (c.population, c.sampled) for c in s.counts}
    assert counts == {"1-2": (4, 4), "3-4": (4, 2), "outside": (2, 1)}
    assert {d.inclusion for d in s.docs if d.stratum == "3-4"} == {0.5}
    again = draw_sample(build_pool(dict(reversed(runs.items())), depth=4), design, [f"d{i}" for i in range(10)])
    assert again.docs == s.docs                                       # the runs' order does not matter
    picks = {tuple(d.doc_id for d in draw_sample(pool, SampleDesign(4, design.strata, 0.5, seed=i),
                                                   [f"d{j}" for j in range(10)]).docs if d.stratum == "3-4")
             for i in range(20)}
    assert len(picks) > 1 and all(len(p) == 2 for p in picks)         # the seed decides which 2 of the 4
    assert all(d.doc_id in {"d4", "d5"} for d in s.docs if d.stratum == "outside")


def test_the_batched_recall_estimates_equal_estimate_topic_field_by_field():
    from workbench.scoring.estimate import estimate_recall_runs

    rng = random.Random(11)
    for trial in range(60):
        docs = [f"d{i}" for i in range(40)]
        frame = {"t": {d: ("1-5" if i < 10 else "6-20") for i, d in enumerate(docs[:30])}}
        outside = trial % 2 == 0
        pops = {"t": {"1-5": 10, "6-20": 20, **({"outside": 10} if outside else {})}}
        pool = docs if outside else docs[:30]
        judged = {d: rng.choice([0, 0, 1, 2]) for d in rng.sample(pool, 18)}
        sq = SampledQrels({"t": judged}, frame, pops, outside=outside)
        runs = {f"r{j}": rng.sample(docs, 25) for j in range(3)}
        batch = estimate_recall_runs({n: {d: i for i, d in enumerate(r, 1)} for n, r in runs.items()}, sq, "t", (5, 20))
        for name, ranked in runs.items():
            one, two = estimate_topic(ranked, sq, "t", (5, 20)), batch[name]
            assert two.defined == one.defined
            if not one.defined:
                continue
            for f in ("r_hat", "r_hat_var", "hits", "precision", "n_judged", "unsampleable", "strata", "why", "found"):
                assert getattr(two, f) == getattr(one, f), f
            for f in ("recall", "recall_var"):      # NaN when R̂ = 0: equal as text
                assert repr(getattr(two, f)) == repr(getattr(one, f)), f
            assert math.isnan(two.xinfap) and two.infndcg == {} and all(map(math.isnan, two.precision_var.values()))
