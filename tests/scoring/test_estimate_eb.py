"""The empirical-Bayes macro R@k (``scoring.estimate_eb``): the beta-binomial moments, the cells and the estimate by
hand on tiny designed samples; fully judged topics exact; strata no topic has; the simulation's ``macro-eb`` rows."""

from __future__ import annotations

import math

import pytest

from pooling.sample import SampleDesign, parse_strata
from workbench.scoring.estimate import SampledQrels
from workbench.scoring.estimate_eb import (
    BetaPrior,
    Cell,
    eb_macro_recall,
    eb_recall_run,
    fit_beta_binomial,
    recall_cells,
)
from workbench.scoring.sample_simulation import simulate_sampling

# The out-of-top-k cells of three topics: (relevant, judged) = (0, 4), (1, 4), (3, 4).
# By hand (Kleinman 1973): W = 12, mu = 4/12 = 1/3; rates 0, 1/4, 3/4;
# S = 4 ((1/3)^2 + (1/12)^2 + (5/12)^2) = 4 * 42/144 = 7/6; S / (mu (1 - mu)) = (7/6) / (2/9) = 21/4;
# rho = (21/4 - (T - 1 = 2)) / (W - sum n^2 / W - (T - 1)) = (13/4) / (12 - 48/12 - 2) = 13/24;
# a + b = 1/rho - 1 = 11/13; a = 11/39, b = 22/39.
PAIRS = [(0, 4), (1, 4), (3, 4)]
A_HAND, B_HAND = 11 / 39, 22 / 39


def test_the_beta_binomial_moments_by_hand():
    p = fit_beta_binomial(PAIRS)
    assert (p.mean, p.concentration, p.topics) == (pytest.approx(1 / 3), pytest.approx(11 / 13), 3)
    assert (p.a, p.b) == (pytest.approx(A_HAND), pytest.approx(B_HAND))
    # the shrunk rates (y + a) / (n + a + b): 0 of 4 -> (11/39) / (63/13) = 11/189; 3 of 4 -> (128/39) / (63/13)
    assert p.rate(0, 4) == pytest.approx(11 / 189)
    assert p.rate(3, 4) == pytest.approx(128 / 189)
    assert p.rate(0, 0) == pytest.approx(1 / 3)              # nothing judged: the prior mean


@pytest.mark.parametrize(("pairs", "expected"), [
    ([(1, 2), (2, 4)], BetaPrior(0.5, math.inf, 2)),        # no spread beyond the binomial: complete pooling
    ([(1, 3)], BetaPrior(1 / 3, math.inf, 1)),              # one topic: its own rate
    ([(0, 3), (0, 5), (0, 0)], BetaPrior(0.0, math.inf, 2)),  # nothing relevant anywhere; n = 0 left out
    ([(0, 0)], BetaPrior(0.0, math.inf, 0)),                # nothing judged
])
def test_the_fit_pools_completely_where_no_spread_can_be_estimated(pairs, expected):
    assert fit_beta_binomial(pairs) == expected


def test_the_cells_split_each_stratum_at_the_runs_top_k():
    # frame: a, b in 1-2; c, d, e in 3-5; the collection's others are outside (N = 10). Judged: a (rel), c, d (rel),
    # x (outside, rel), y (outside). The run ranks c, a, e, b.
    sq = SampledQrels({"t": {"a": 1, "c": 0, "d": 1, "x": 1, "y": 0}},
                      {"t": {"a": "1-2", "b": "1-2", "c": "3-5", "d": "3-5", "e": "3-5"}},
                      {"t": {"1-2": 2, "3-5": 3, "outside": 10, "6-9": 0}}, outside=True)
    got = [(c.stratum, c.within, c.N, c.n, c.rel) for c in recall_cells(["c", "a", "e", "b"], sq, "t", 3)]
    assert got == [("1-2", True, 1, 1, 1), ("1-2", False, 1, 0, 0),       # a within 3; b not
                   ("3-5", True, 2, 1, 0), ("3-5", False, 1, 1, 1),       # c, e within 3; d not
                   ("outside", False, 10, 2, 1)]                          # the empty stratum 6-9: no cell


def _three_topics() -> dict[str, list[Cell]]:
    """Within-k cells fully judged; the out cells are PAIRS, topic 1's with one unjudged document."""
    return {"1": [Cell("s", True, 2, 2, 1), Cell("s", False, 5, 4, 0)],     # R@k = 1 / (1 + U), U ~ Bern(11/189)
            "2": [Cell("s", True, 2, 2, 2), Cell("s", False, 4, 4, 1)],     # exact: 2 / 3
            "3": [Cell("s", True, 1, 1, 0), Cell("s", False, 4, 4, 3)]}     # exact: 0 / 3


def test_the_estimate_by_hand_is_the_posterior_mean_of_the_mean_of_ratios():
    draws = 40_000
    e = eb_macro_recall(_three_topics(), draws=draws, seed=3, bootstrap=False, n_judged=21)
    # topic 1: its unjudged document is relevant with the posterior mean rate p = 11/189 (beta then binomial of 1);
    # E[1 / (1 + U)] = 1 - p/2. The macro: (1 - p/2 + 2/3 + 0) / 3.
    p = 11 / 189
    expected = (1 - p / 2 + 2 / 3 + 0) / 3
    mc_se = 0.5 * math.sqrt(p * (1 - p)) / 3 / math.sqrt(draws)        # the Monte Carlo error of the mean
    assert e.estimate.value == pytest.approx(expected, abs=5 * mc_se)
    assert e.topics["1"] == pytest.approx(1 - p / 2, abs=15 * mc_se)
    assert (e.topics["2"], e.topics["3"]) == (pytest.approx(2 / 3), 0.0)  # fully judged: exact in every draw
    # the draws' macro is (1 + 2/3) / 3 with probability 1 - p, (1/2 + 2/3) / 3 with p > 2.5%: the percentiles
    assert (e.estimate.low, e.estimate.high) == (pytest.approx((0.5 + 2 / 3) / 3), pytest.approx((1 + 2 / 3) / 3))
    assert (e.estimate.n_topics, e.estimate.n_judged) == (3, 21)
    prior = e.priors[("s", False)]
    assert (prior.a, prior.b) == (pytest.approx(A_HAND), pytest.approx(B_HAND))


def test_the_draws_are_reproducible_from_the_seed_and_the_bootstrap_interval_holds_the_estimate():
    a = eb_macro_recall(_three_topics(), draws=500, seed=11)
    b = eb_macro_recall(_three_topics(), draws=500, seed=11)
    assert a == b
    assert a.estimate.low <= a.estimate.value <= a.estimate.high


def test_topics_fully_judged_reproduce_the_exact_recall():
    # two topics, strata 1-2 and 3-4 every document judged; the run ranks a, c, b, d (topic 1) and e, f (topic 2)
    frame = {"1": {"a": "1-2", "b": "1-2", "c": "3-4", "d": "3-4"}, "2": {"e": "1-2", "f": "1-2", "g": "3-4"}}
    judged = {"1": {"a": 1, "b": 0, "c": 1, "d": 1}, "2": {"e": 0, "f": 1, "g": 1}}
    sq = SampledQrels(judged, frame, {"1": {"1-2": 2, "3-4": 2}, "2": {"1-2": 2, "3-4": 1}})
    got = eb_recall_run({"1": ["a", "c", "b", "d"], "2": ["e", "f"]}, sq, ["1", "2"], (2,), draws=50)[2]
    # R@2: topic 1 a, c of a, c, d = 2/3; topic 2 f of f, g = 1/2
    exact = (2 / 3 + 1 / 2) / 2
    assert got.estimate.value == pytest.approx(exact)
    assert (got.estimate.low, got.estimate.high, got.estimate.se) == (pytest.approx(exact), pytest.approx(exact),
                                                                      pytest.approx(0.0, abs=1e-12))
    assert got.topics == {"1": pytest.approx(2 / 3), "2": pytest.approx(1 / 2)}


def test_a_stratum_no_topic_has_changes_nothing_and_a_topic_without_relevant_documents_is_left_out():
    frame = {"1": {"a": "1-2", "b": "1-2"}, "2": {"c": "1-2", "d": "1-2"}, "3": {"e": "1-2"}}
    judged = {"1": {"a": 1, "b": 0}, "2": {"c": 1, "d": 1}, "3": {"e": 0}}
    with_empty = SampledQrels(judged, frame, {"1": {"1-2": 2, "3-4": 0}, "2": {"1-2": 2, "3-4": 0},
                                              "3": {"1-2": 1, "3-4": 0}})
    without = SampledQrels(judged, frame, {"1": {"1-2": 2}, "2": {"1-2": 2}, "3": {"1-2": 1}})
    ranked = {"1": ["b", "a"], "2": ["c"], "3": ["e"]}
    got = eb_recall_run(ranked, with_empty, ["1", "2", "3"], (1,), draws=20)[1]
    assert got == eb_recall_run(ranked, without, ["1", "2", "3"], (1,), draws=20)[1]
    assert {kind[0] for kind in got.priors} == {"1-2"}
    # R@1: topic 1 b (not relevant) of a: 0; topic 2 c of c, d: 1/2; topic 3 has no relevant document: left out
    assert math.isnan(got.topics["3"]) and got.estimate.n_topics == 2
    assert got.estimate.value == pytest.approx((0 + 1 / 2) / 2)


def test_no_topic_with_a_frame_gives_no_estimate():
    got = eb_macro_recall({"1": []}, draws=10)
    assert math.isnan(got.estimate.value) and got.estimate.n_topics == 0 and math.isnan(got.topics["1"])
    with pytest.raises(ValueError, match="draws >= 1"):
        eb_macro_recall({"1": []}, draws=0)


def test_the_simulation_reports_macro_eb_rows_exact_when_the_frame_is_judged_whole():
    runs = {"A": {"1": {"a": 3.0, "b": 2.0, "c": 1.0}, "2": {"d": 2.0, "e": 1.0}},
            "B": {"1": {"c": 3.0, "a": 2.0}, "2": {"e": 2.0, "f": 1.0}}}
    truth = {"1": {"a": 1, "c": 1}, "2": {"e": 1, "f": 1, "d": 0}}
    design = SampleDesign(3, parse_strata("1-1:1.0,2-3:1.0", 3), seed=5)
    sim = simulate_sampling(runs, truth, [], design, [100], 2, ks=(1,), eb_draws=20)
    rows = {(e.run, e.aggregate): e for e in sim.budgets[0].estimates}
    assert {agg for _, agg in rows} == {"macro", "micro", "macro-eb"}
    # R@1 on the truth: A: topic 1 a (1/2), topic 2 d (0): 1/4; B: c (1/2), e (1/2): 1/2
    for run, truth_value in (("A", 1 / 4), ("B", 1 / 2)):
        eb = rows[(run, "macro-eb")]
        assert (eb.truth, eb.mean, eb.bias, eb.coverage, eb.topics) == (
            pytest.approx(truth_value), pytest.approx(truth_value), pytest.approx(0.0), 1.0, 2.0)
    assert sim.budgets[0].tau[1]["macro-eb"] == pytest.approx(1.0)
