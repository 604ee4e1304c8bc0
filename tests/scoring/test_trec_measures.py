"""trec_eval's summary measures: AP, Rprec, Bpref, RBP with its residual, NumRelRet, NumRel, NumRet.

Each is checked three ways: a hand-worked case whose expected values are
written as the formula, on all three scorers (columnar, small, reference);
the edge cases of STYLE rule 6 (missing topics under every policy, an empty
run, |R| = 0, unjudged documents, negative grades, the threshold) with
ir_measures' trio; and independent oracles on seeded random data with ties:
pytrec_eval (trec_eval's ``map``, ``map_cut``, ``Rprec``, ``bpref``,
``num_rel_ret``, ``num_rel``, ``num_ret``, and ``compute_aggregated_measure``
for the ``all`` line) and, for RBP, ir_measures' ``cwl_eval`` provider (and
cwl's own residual). The Cranfield sample is in ``test_sample_corpus.py``.
"""

from __future__ import annotations

import logging

import ir_measures
import pytest
import pytrec_eval

from tests.scoring.conftest import make_data
from workbench.errors import MissingTopicsError
from workbench.ranking import ranked_ids
from workbench.scoring.evaluate import Evaluation, evaluate
from workbench.scoring.measures import parse_measure as pm
from workbench.scoring.reference import reference_values
from workbench.scoring.small import SmallEvaluator, SmallRun

NEW = ["AP", "AP@4", "Rprec", "Bpref", "RBP(p=0.8)", "RBP_residual(p=0.8)", "RBP(p=0.8)@4",
       "RBP_residual(p=0.8)@4", "NumRelRet", "NumRelRet@4", "NumRel", "NumRet", "NumRet@5"]

# Topic 1, ranked x a c b f y d e (scores descending): x and y unjudged, f graded -1, g relevant and not
# retrieved. At rel = 1: R = {a, b, e, g} (|R| = 4), N = {c, d} (|N| = 2: grades 0 <= g < 1).
QRELS = {
    "1": {"a": 2, "b": 1, "c": 0, "d": 0, "e": 1, "f": -1, "g": 3},
    "2": {"p": 1},                   # a run that finds nothing relevant: its only document is unjudged
    "3": {"z": 0},                   # |R| = 0: excluded, never scored 0 or 1
    "4": {"w": 1},                   # absent from the run: the missing-topic policy decides
}
RUN = {
    "1": {"x": 8.0, "a": 7.0, "c": 6.0, "b": 5.0, "f": 4.0, "y": 3.0, "d": 2.0, "e": 1.0},
    "2": {"q": 1.0},
    "3": {"z": 1.0},
}
p = 0.8
HAND = {  # topic 1, rel = 1
    "AP": (1 / 2 + 2 / 4 + 3 / 8) / 4,                        # relevant at ranks 2, 4, 8
    "AP@4": (1 / 2 + 2 / 4) / 4,                              # still divided by |R|
    "Rprec": 2 / 4,                                           # a, b in the top |R| = 4
    "Bpref": (1 + (1 - 1 / 2) + (1 - 2 / 2)) / 4,             # a: none above; b: c above; e: c, d above
    "RBP(p=0.8)": (1 - p) * (p**1 + p**3 + p**7),
    "RBP_residual(p=0.8)": (1 - p) * (p**0 + p**5) + p**8,   # x, y unjudged (f is judged: -1); tail p^8
    "RBP(p=0.8)@4": (1 - p) * (p**1 + p**3),
    "RBP_residual(p=0.8)@4": (1 - p) * p**0 + p**4,
    "NumRelRet": 3, "NumRelRet@4": 2, "NumRel": 4, "NumRet": 8, "NumRet@5": 5,
}
HAND_2 = {  # topic 2: one unjudged document, |R| = 1
    "AP": 0.0, "AP@4": 0.0, "Rprec": 0.0, "Bpref": 0.0, "RBP(p=0.8)": 0.0, "RBP(p=0.8)@4": 0.0,
    "RBP_residual(p=0.8)": (1 - p) * p**0 + p**1, "RBP_residual(p=0.8)@4": (1 - p) * p**0 + p**1,
    "NumRelRet": 0, "NumRelRet@4": 0, "NumRel": 1, "NumRet": 1, "NumRet@5": 1,
}


def _small(qrels, run, measures, **kw) -> Evaluation:
    return SmallEvaluator(qrels, measures, **kw).evaluate(SmallRun({t: ranked_ids(d) for t, d in run.items()},
                                                                   name="r"))


@pytest.mark.parametrize("scorer", ["columnar", "small", "reference"])
def test_hand_worked_values_on_every_scorer(scorer):
    if scorer == "reference":
        ref = reference_values(QRELS, RUN, NEW)
        values = {str(m): ref[m] for m in ref}
    else:
        e = evaluate(QRELS, RUN, NEW, missing="exclude") if scorer == "columnar" else \
            _small(QRELS, RUN, NEW, missing="exclude")
        assert e.topics == ("1", "2") and e.excluded_topics == ("3",) and e.missing_topics == ("4",)
        values = {str(m): {t: e.value(m, t) for t in e.topics} for m in e.measures}
    for name in NEW:
        assert values[name]["1"] == pytest.approx(HAND[name], abs=1e-15), name
        assert values[name]["2"] == pytest.approx(HAND_2[name], abs=1e-15), name


def test_numerators_denominators_and_aggregates_are_the_evidence():
    e = evaluate(QRELS, RUN, NEW, missing="exclude")
    ap = e.per_topic[pm("AP")]["1"]
    assert (ap.numerator, ap.denominator) == pytest.approx((1 / 2 + 2 / 4 + 3 / 8, 4))
    bp = e.per_topic[pm("Bpref")]["1"]
    assert (bp.numerator, bp.denominator) == pytest.approx((1.5, 4))
    rp = e.per_topic[pm("Rprec")]["1"]
    assert (rp.numerator, rp.denominator) == (2, 4)
    assert (e.per_topic[pm("NumRelRet")]["1"].numerator, e.per_topic[pm("NumRelRet")]["1"].denominator) == (3, 1)
    # MAP is the macro mean; AP has no micro (a sum of precisions over a sum of |R| means nothing).
    a = e.aggregates[pm("AP")]
    assert a.macro == pytest.approx((HAND["AP"] + 0.0) / 2) and a.micro is None and a.ceiling is None
    assert e.aggregates[pm("AP@4")].ceiling == pytest.approx((4 / 4 + 1 / 1) / 2)     # min(k, |R|) / |R|
    assert e.aggregates[pm("Rprec")].micro == pytest.approx((2 + 0) / (4 + 1))
    # Counts: macro = the mean per topic, micro = the total (trec_eval's all line).
    for name in ("NumRelRet", "NumRel", "NumRet"):
        agg = e.aggregates[pm(name)]
        assert agg.macro == pytest.approx((HAND[name] + HAND_2[name]) / 2)
        assert agg.micro == HAND[name] + HAND_2[name]
    for name in ("Bpref", "RBP(p=0.8)", "RBP_residual(p=0.8)"):
        assert e.aggregates[pm(name)].micro is None


def test_the_threshold_is_inclusive_and_negative_grades_are_skipped_by_bpref():
    # rel = 2: R = {a, g}, N = {b, c, d, e} (0 <= grade < 2); f (-1) is neither.
    e = evaluate(QRELS, RUN, ["AP", "Rprec", "Bpref", "RBP(p=0.8)", "NumRelRet", "NumRel"], rel=2, missing="exclude")
    assert e.topics == ("1",)                           # topic 2 has |R| = 0 at rel = 2: excluded
    assert e.value("AP", "1") == pytest.approx((1 / 2) / 2)
    assert e.value("Rprec", "1") == pytest.approx(1 / 2)   # top 2 = x, a
    assert e.value("Bpref", "1") == pytest.approx(1 / 2)   # a: no judged non-relevant above (x is unjudged)
    assert e.value("RBP(p=0.8)", "1") == pytest.approx((1 - p) * p)
    assert (e.value("NumRelRet", "1"), e.value("NumRel", "1")) == (1, 2)
    # A measure's own threshold: Bpref(rel=2) beside the evaluation's rel = 1.
    f = evaluate(QRELS, RUN, ["Bpref(rel=2)", "Bpref"], missing="exclude")
    assert f.value("Bpref(rel=2)", "1") == pytest.approx(1 / 2) and f.value("Bpref", "1") == pytest.approx(HAND["Bpref"])
    # With a judged non-relevant document above the relevant one, f graded -1 still does not count.
    qrels = {"1": {"n": 0, "f": -1, "r": 1}}
    run = {"1": {"f": 3.0, "n": 2.0, "r": 1.0}}
    assert evaluate(qrels, run, ["Bpref"]).value("Bpref", "1") == pytest.approx(1 - min(1, 1) / min(1, 1))
    assert evaluate({"1": {"f": -1, "r": 1}}, run, ["Bpref"]).value("Bpref", "1") == 1.0


# -- ir_measures' trio, and the missing-topic policies ---------------------------------------------

TRIO_QRELS = {"1": {"a": 1, "b": 0}, "2": {"c": 2}}
ZERO = {"AP": 0.0, "AP@4": 0.0, "Rprec": 0.0, "Bpref": 0.0, "RBP(p=0.8)": 0.0, "RBP(p=0.8)@4": 0.0,
        "RBP_residual(p=0.8)": 1.0, "RBP_residual(p=0.8)@4": 1.0, "NumRelRet": 0.0, "NumRelRet@4": 0.0,
        "NumRet": 0.0, "NumRet@5": 0.0}
"""What a topic with no results scores under ``missing="zero"`` (an empty ranking): 0, except the
residual (nothing seen: all of RBP's weight is unknown) and NumRel (|R|, from the qrels)."""


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("small", [False, True])
def test_trio_qrels_but_no_run(name, small):
    score = _small if small else evaluate
    z = score(TRIO_QRELS, {}, [name], missing="zero")
    assert z.topics == ("1", "2") and z.missing_topics == ("1", "2")
    expected = [1.0, 1.0] if name == "NumRel" else [ZERO[name]] * 2
    assert [z.value(name, t) for t in z.topics] == expected
    x = score(TRIO_QRELS, {}, [name], missing="exclude")
    assert x.topics == () and x.aggregates[pm(name)].n_topics == 0
    with pytest.raises(MissingTopicsError):                 # an empty run is a run missing every topic
        score(TRIO_QRELS, {}, [name])


PARTIAL = {"AP": 1.0, "AP@4": 1.0, "Rprec": 1.0, "Bpref": 1.0, "RBP(p=0.8)": 1 - p, "RBP(p=0.8)@4": 1 - p,
           "RBP_residual(p=0.8)": p**2, "RBP_residual(p=0.8)@4": p**2, "NumRelRet": 1.0, "NumRelRet@4": 1.0,
           "NumRel": 1.0, "NumRet": 2.0, "NumRet@5": 2.0}
"""Topic 1 of the trio ranked a (relevant), b (judged non-relevant): everything judged, depth 2."""


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("small", [False, True])
def test_trio_partial_run(name, small):
    score = _small if small else evaluate
    run = {"1": {"a": 2.0, "b": 1.0}}
    z = score(TRIO_QRELS, run, [name], missing="zero")
    x = score(TRIO_QRELS, run, [name], missing="exclude")
    full = PARTIAL[name]
    missing = 1.0 if name == "NumRel" else ZERO[name]
    assert z.value(name, "1") == pytest.approx(full) and z.value(name, "2") == pytest.approx(missing)
    assert z.aggregates[pm(name)].macro == pytest.approx((full + missing) / 2)
    assert x.topics == ("1",) and x.aggregates[pm(name)].macro == pytest.approx(full)


@pytest.mark.parametrize("name", NEW)
def test_trio_run_but_no_qrels(name):
    run = {"1": {"a": 2.0}, "2": {"c": 1.0}, "3": {"z": 5.0}}
    e = evaluate(TRIO_QRELS, run, [name])
    assert e.ignored_topics == ("3",) and e.topics == ("1", "2")


# -- pytrec_eval: trec_eval itself, on data with ties, graded and negative grades ---------------------

KS = (5, 10, 100)


def _pytrec(qrels, run, names, rel=1):
    return pytrec_eval.RelevanceEvaluator(qrels, set(names), relevance_level=rel).evaluate(run)


@pytest.mark.parametrize("seed", [7, 8, 9])
@pytest.mark.parametrize("rel", [1, 2])
def test_ap_rprec_bpref_and_counts_match_trec_eval_with_ties(seed, rel):
    qrels, run = make_data(seed)
    ours = ["AP", "Rprec", "Bpref", "NumRelRet", "NumRel", "NumRet", *(f"AP@{k}" for k in KS)]
    theirs = ["map", "Rprec", "bpref", "num_rel_ret", "num_rel", "num_ret", *(f"map_cut_{k}" for k in KS)]
    e = evaluate(qrels, run, ours, rel=rel, missing="exclude")
    oracle = _pytrec(qrels, run, ["map", "map_cut", "Rprec", "bpref", "num_rel_ret", "num_rel", "num_ret"], rel)
    assert len(e.topics) >= 15
    for a, b in zip(ours, theirs, strict=True):
        for t in e.topics:
            assert e.value(a, t) == pytest.approx(oracle[t][b], abs=1e-12), (a, t)
        # the summary ("all") line: the mean for map, Rprec, bpref; the sum for num_* (our micro)
        agg = e.aggregates[pm(a)]
        all_line = pytrec_eval.compute_aggregated_measure(b, [oracle[t][b] for t in e.topics])
        assert (agg.micro if b.startswith("num_") else agg.macro) == pytest.approx(all_line, abs=1e-12), a


@pytest.mark.parametrize("seed", [7, 8])
def test_counts_at_k_match_trec_eval_on_the_run_cut_at_k(seed):
    qrels, run = make_data(seed)
    for k in (1, 5, 10):
        cut = {t: {d: run[t][d] for d in ranked_ids(run[t], k)} for t in run}
        oracle = _pytrec(qrels, cut, ["num_rel_ret", "num_ret"])
        e = evaluate(qrels, run, [f"NumRelRet@{k}", f"NumRet@{k}"], missing="exclude")
        for t in e.topics:
            assert e.value(f"NumRelRet@{k}", t) == oracle[t]["num_rel_ret"], (k, t)
            assert e.value(f"NumRet@{k}", t) == oracle[t]["num_ret"], (k, t)


@pytest.mark.parametrize("seed", [7, 21])
@pytest.mark.parametrize("rel", [1, 2])
def test_columnar_scorer_equals_the_reference_scorer(seed, rel):
    qrels, run = make_data(seed)
    names = [*NEW, "AP(rel=3)@20", "Rprec(rel=2)", "RBP(p=0.5,rel=2)", "RBP_residual(p=0.95)@30", "NumRel(rel=3)"]
    e = evaluate(qrels, run, names, rel=rel, missing="exclude")
    ref = reference_values(qrels, run, names, rel=rel)
    for m in e.measures:
        assert set(ref[m]) == set(e.topics)
        for t in e.topics:
            assert e.value(m, t) == pytest.approx(ref[m][t], abs=1e-12), (str(m), t)


# -- RBP: ir_measures (cwl_eval provider) and cwl's residual --------------------------------------------

def _cwl_residuals(qrels, run, topics, p, rel):
    """topic -> (RBP, residual) from cwl itself: best case (unjudged and padding at gain 1) minus worst."""
    from cwl.cwl_eval import RankingMaker
    from cwl.ruler.measures.cwl_rbp import RBPCWLMetric
    from ir_measures.providers.cwl_eval import IrmQrelHandler

    logging.getLogger("cwl").disabled = True
    handler = IrmQrelHandler(rel, None, None)
    for t, docs in qrels.items():
        for d, g in docs.items():
            handler.put_value(t, d, max(g, 0))
    out = {}
    for t in topics:
        maker = RankingMaker(t, handler, min_gain=0.0, max_gain=1.0, cost_dict=None, max_cost=1.0, min_cost=1.0,
                             max_n=1000)
        for d in ranked_ids(run[t]):
            maker.add(d, "_")
        metric = RBPCWLMetric(p)
        metric.residuals = True
        value = metric.measure(maker.get_ranking())
        out[t] = (value, metric.residual_expected_utility)
    return out


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("p_, rel", [(0.8, 1), (0.5, 2), (0.95, 1)])
def test_rbp_matches_ir_measures_and_its_residual_matches_cwl(seed, p_, rel):
    qrels, run = make_data(seed, tie_levels=None)       # ir_measures orders ties its own way: none here
    rbp, residual = f"RBP(p={p_})", f"RBP_residual(p={p_})"
    e = evaluate(qrels, run, [rbp, residual], rel=rel, missing="exclude")
    theirs = {r.query_id: r.value for r in ir_measures.iter_calc([ir_measures.RBP(p=p_, rel=rel)], qrels, run)}
    cwl = _cwl_residuals(qrels, run, e.topics, p_, rel)
    assert len(e.topics) >= 15
    for t in e.topics:
        assert e.value(rbp, t) == pytest.approx(theirs[t], abs=1e-12), t
        assert e.value(rbp, t) == pytest.approx(cwl[t][0], abs=1e-12), t
        assert e.value(residual, t) == pytest.approx(cwl[t][1], abs=1e-12), t   # p^1000 is below 1e-12 here


def test_rbp_of_a_fully_judged_ranking_has_only_the_tail_as_residual():
    # trec_eval's rbp_resid would print 0 here (it adds the tail only when something is unjudged).
    e = evaluate({"1": {"a": 1, "b": 0}}, {"1": {"a": 2.0, "b": 1.0}}, ["RBP(p=0.5)", "RBP_residual(p=0.5)"])
    assert e.value("RBP(p=0.5)", "1") == 0.5 and e.value("RBP_residual(p=0.5)", "1") == 0.5**2
