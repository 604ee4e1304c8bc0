"""The change of an estimated measure between two runs of one judged sample, and its jointly linearised interval.

Expected values are the module docstring's formulas worked by hand on a designed sample; the independent checks
are the single-run variances of ``scoring.estimate`` (a run against one that finds nothing) and the covariance
written out from per-document z values.
"""

from __future__ import annotations

import math

import pytest

from workbench.errors import ValidationError
from workbench.scoring.estimate import Z95, SampledQrels, normal_quantile
from workbench.scoring.estimate_compare import PairStratum, estimated_change, pair_variance
from workbench.scoring.estimate_run import estimate_run
from workbench.scoring.measures import Phat, R, Rhat, RhatMicro

# Topic t: stratum 1-2 judged in full (a relevant, b not); stratum 3-6 holds 4 documents, 2 judged (c relevant,
# d not): c stands for 2. Outside: 10 documents, 2 judged (o1 relevant, o2 not): o1 stands for 5.
# R̂ = 1 + 2 + 5 = 8.  Topic u: 1-1 = {p} relevant, judged in full; 2-3 holds 4, 2 judged (q relevant, r not).
SQ = SampledQrels(
    judged={"t": {"a": 1, "b": 0, "c": 1, "d": 0, "o1": 1, "o2": 0}, "u": {"p": 1, "q": 1, "r": 0}},
    frame={"t": {"a": "1-2", "b": "1-2", "c": "3-6", "d": "3-6", "e": "3-6", "f": "3-6"},
           "u": {"p": "1-1", "q": "2-3", "r": "2-3", "s": "2-3", "v": "2-3"}},
    populations={"t": {"1-2": 2, "3-6": 4, "outside": 10}, "u": {"1-1": 1, "2-3": 4, "outside": 5}},
    outside=True,
)
# Baseline A finds a and c in its top 3 of t, p in u; candidate B finds a and o1 of t, p and q in u.
RUN_A = {"t": ["a", "c", "e"], "u": ["p", "s", "v"]}
RUN_B = {"t": ["o1", "a", "f"], "u": ["q", "p", "s"]}


def _est(run: dict[str, list[str]], name: str, ks=(3,)):
    return estimate_run(name, run, SQ, ["t", "u"], recall_ks=ks, precision_ks=ks, ndcg_ks=())


def test_a_topic_undefined_in_the_sample_is_left_out_of_the_change():
    a, b = _est(RUN_A, "A"), _est(RUN_B, "B")
    assert a.undefined == {"u": "no judged document in stratum outside"}     # u's outside: 5 documents, none judged
    c = estimated_change(a, b, SQ, Rhat(3))
    # t: R̂ = a (1) + c (2) + o1 (5) = 8; A within 3: a, c -> 3/8; B: o1, a -> 6/8
    assert c.topics == ("t",) and c.left_out == ()
    assert (c.value_a, c.value_b, c.change) == pytest.approx((3 / 8, 6 / 8, 3 / 8))


# The sample above leaves u's outside stratum unjudged (u undefined). The designed sample used below judges it.
SQ2 = SampledQrels(
    judged={**SQ.judged, "u": {"p": 1, "q": 1, "r": 0, "x1": 0, "x2": 0}},
    frame=SQ.frame, populations=SQ.populations, outside=True,
)


def _est2(run: dict[str, list[str]], name: str, ks=(3,)):
    return estimate_run(name, run, SQ2, ["t", "u"], recall_ks=ks, precision_ks=ks, ndcg_ks=())


def _term(n, big_n, zs):
    """One stratum's N^2 (1 - n/N) s_z^2 / n, from the per-document z values."""
    mean = sum(zs) / n
    s2 = sum((z - mean) ** 2 for z in zs) / (n - 1)
    return big_n ** 2 * (1 - n / big_n) * s2 / n


def test_macro_rhat_change_with_its_joint_variance_by_hand():
    a, b = _est2(RUN_A, "A"), _est2(RUN_B, "B")
    c = estimated_change(a, b, SQ2, Rhat(3))
    # t: R̂ = a (1) + c (2) + o1 (5) = 8. A within 3: a, c -> 3/8; B: o1, a -> 6/8. D_t = 3/8.
    # u: R̂ = p (1) + q (2) = 3 (x1, x2: outside, non-relevant). A: p -> 1/3; B: q, p -> 1. D_u = 2/3.
    assert c.topics == ("t", "u")
    assert (c.value_a, c.value_b) == pytest.approx(((3 / 8 + 1 / 3) / 2, (6 / 8 + 1) / 2))
    assert c.change == pytest.approx((3 / 8 + 2 / 3) / 2)
    # z = (b - a) - D y per judged document.  t (D = 3/8): 1-2 judged in full, no term; 3-6 (2 of 4):
    # c found by A only -> -1 - D, d 0; outside (2 of 10): o1 found by B only -> 1 - D, o2 0.
    dt = 3 / 8
    var_t = (_term(2, 4, [-1 - dt, 0]) + _term(2, 10, [1 - dt, 0])) / 8 ** 2
    # u (D = 2/3): 1-1 in full; 2-3 (2 of 4): q found by B only -> 1 - D, r 0; outside (2 of 5): both 0.
    du = 2 / 3
    var_u = _term(2, 4, [1 - du, 0]) / 3 ** 2
    assert [(x.topic_id, x.delta) for x in c.per_topic] == [("t", pytest.approx(dt)), ("u", pytest.approx(du))]
    assert c.per_topic[0].se == pytest.approx(math.sqrt(var_t)) and c.per_topic[1].se == pytest.approx(math.sqrt(var_u))
    assert c.se == pytest.approx(math.sqrt(var_t + var_u) / 2)
    assert (c.low, c.high) == pytest.approx((c.change - Z95 * c.se, c.change + Z95 * c.se))
    assert c.per_topic[0].lost == ("c",) and c.per_topic[0].gained == ("o1",)
    assert c.per_topic[1].lost == () and c.per_topic[1].gained == ("q",)
    assert (c.wins, c.losses, c.ties, c.n_judged) == (2, 0, 0, 6 + 5)


def test_the_joint_variance_is_the_two_variances_less_twice_their_covariance():
    a, b = _est2(RUN_A, "A"), _est2(RUN_B, "B")
    c = estimated_change(a, b, SQ2, Rhat(3))
    # the covariance of the two linearised estimates, stratum by stratum: N^2 (1 - n/N) cov(z_A, z_B) / n with
    # z_A = a_d - r_A y_d and z_B = b_d - r_B y_d
    def cov(n, big_n, za, zb):
        ma, mb = sum(za) / n, sum(zb) / n
        return big_n ** 2 * (1 - n / big_n) * sum((x - ma) * (y - mb) for x, y in zip(za, zb, strict=True)) / (n - 1) / n

    ra, rb = 3 / 8, 6 / 8                    # topic t
    cov_t = (cov(2, 4, [1 - ra, 0], [-rb, 0]) + cov(2, 10, [-ra, 0], [1 - rb, 0])) / 64
    ra_u, rb_u = 1 / 3, 1.0                  # topic u: q (2-3) found by B only
    cov_u = cov(2, 4, [-ra_u, 0], [1 - rb_u, 0]) / 9
    var_a = sum(a.topics[t].recall_var[3] for t in ("t", "u"))
    var_b = sum(b.topics[t].recall_var[3] for t in ("t", "u"))
    assert c.se ** 2 * 4 == pytest.approx(var_a + var_b - 2 * (cov_t + cov_u))


def test_identical_runs_change_nothing_and_a_run_that_finds_nothing_has_the_other_runs_variance():
    a = _est2(RUN_A, "A")
    same = estimated_change(a, _est2(RUN_A, "A2"), SQ2, Rhat(3))
    assert (same.change, same.se, same.low, same.high) == (0.0, 0.0, 0.0, 0.0)
    assert same.ties == 2 and all(not x.lost and not x.gained for x in same.per_topic)
    nothing = _est2({"t": ["zz"], "u": ["zz"]}, "none")
    c = estimated_change(nothing, a, SQ2, Rhat(3))
    for x in c.per_topic:        # z = a_d - R̂@k y_d: the run's own ratio variance
        assert x.se ** 2 == pytest.approx(a.topics[x.topic_id].recall_var[3])
    assert c.se == pytest.approx(a.value("Rhat@3").se)
    assert c.change == pytest.approx(a.value("Rhat@3").value)


def test_micro_change_is_the_difference_of_combined_ratios_with_one_linearisation():
    a, b = _est2(RUN_A, "A"), _est2(RUN_B, "B")
    c = estimated_change(a, b, SQ2, RhatMicro(3))
    # sum R̂ = 8 + 3 = 11; A: 3 + 1 = 4; B: 6 + 3 = 9; D = 5/11, z = (b - a) - D y over every topic's strata
    d = 5 / 11
    assert (c.value_a, c.value_b, c.change) == pytest.approx((4 / 11, 9 / 11, d))
    var = (_term(2, 4, [-1 - d, 0]) + _term(2, 10, [1 - d, 0]) + _term(2, 4, [1 - d, 0])) / 11 ** 2
    assert c.se == pytest.approx(math.sqrt(var))
    assert c.value_a == pytest.approx(a.value("Rhat@3", "micro").value)


def test_phat_change_is_linear():
    a, b = _est2(RUN_A, "A"), _est2(RUN_B, "B")
    c = estimated_change(a, b, SQ2, Phat(3))
    # P̂@3 = R̂_3 / 3: t 3/3 -> 6/3, u 1/3 -> 3/3; z = b - a
    assert (c.value_a, c.value_b) == pytest.approx(((1 + 1 / 3) / 2, (2 + 1) / 2))
    var_t = (_term(2, 4, [-1, 0]) + _term(2, 10, [1, 0])) / 9
    var_u = _term(2, 4, [1, 0]) / 9
    assert c.se == pytest.approx(math.sqrt(var_t + var_u) / 2)


def test_pair_variance_skips_strata_judged_in_full_or_once():
    assert pair_variance([PairStratum(2, 2, 1, 1, 0), PairStratum(1, 9, 1, 0, 1)], 0.5) == 0.0
    # z = (-1, 0, 0, 0): s^2 = (1 - 1/4) / 3 = 1/4; 8^2 (1 - 4/8) (1/4) / 4 = 2
    assert pair_variance([PairStratum(n=4, N=8, rel=2, only_a=1, only_b=0)], 0.0) == pytest.approx(2.0)


def test_the_interval_at_another_level_and_bad_input():
    a, b = _est2(RUN_A, "A"), _est2(RUN_B, "B")
    c = estimated_change(a, b, SQ2, Rhat(3), confidence=0.9)
    assert (c.low, c.high) == pytest.approx((c.change - normal_quantile(0.9) * c.se, c.change + normal_quantile(0.9) * c.se))
    lo, hi = c.interval(0.975)
    assert lo == pytest.approx(max(-1.0, c.change - 2.241402727604947 * c.se))
    with pytest.raises(ValidationError, match="Rhat@5 was not estimated for run 'A'"):
        estimated_change(a, b, SQ2, Rhat(5))
    with pytest.raises(ValidationError, match="confidence level"):
        estimated_change(a, b, SQ2, Rhat(3), confidence=1.0)
    assert Rhat(3).pooled == R(3)


def test_runs_estimated_from_different_samples_are_refused():
    a = _est2(RUN_A, "A")
    b = estimate_run("B", RUN_B, SQ2.__class__(judged={**SQ2.judged, "t": {**SQ2.judged["t"], "b": 1}},
                                                    frame=SQ2.frame, populations=SQ2.populations, outside=True),
                     ["t", "u"], recall_ks=(3,), precision_ks=(), ndcg_ks=())
    with pytest.raises(ValidationError, match="different samples"):
        estimated_change(a, b, SQ2, Rhat(3))
