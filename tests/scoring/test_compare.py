"""Run comparison: deltas with lost/gained documents, paired tests checked by enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from workbench.errors import ValidationError
from workbench.scoring.compare import (
    compare,
    kendall_tau,
    paired_bootstrap,
    paired_permutation_test,
)
from workbench.scoring.evaluate import evaluate


def test_permutation_test_is_exact_for_few_topics():
    a = np.array([0.2, 0.5, 0.1, 0.4, 0.3])
    b = np.array([0.6, 0.4, 0.5, 0.9, 0.3])
    d = b - a
    observed = abs(d.mean())
    flips = [np.mean(np.array(s) * d) for s in itertools.product([1, -1], repeat=len(d))]
    expected = sum(abs(f) >= observed - 1e-12 for f in flips) / len(flips)     # 2^5 = 32 assignments
    res = paired_permutation_test(a, b, n_resamples=10_000, seed=3)
    assert res.p_value == pytest.approx(expected)
    assert res.mean_difference == pytest.approx(d.mean())


def test_bootstrap_interval_and_p_value_are_seeded_and_sensible():
    rng = np.random.default_rng(0)
    a = rng.random(40)
    b = a + 0.1 + rng.normal(0, 0.05, 40)
    r1 = paired_bootstrap(a, b, n_resamples=2_000, seed=5)
    r2 = paired_bootstrap(a, b, n_resamples=2_000, seed=5)
    assert r1 == r2
    assert r1.ci_low < r1.mean_difference < r1.ci_high
    assert r1.ci_low > 0 and r1.p_value < 0.01          # a clear improvement
    same = paired_bootstrap(a, a.copy(), n_resamples=500, seed=1)
    assert same.p_value == 1.0 and same.ci_low == same.ci_high == 0.0


def test_tests_need_two_topics_and_equal_lengths():
    with pytest.raises(ValidationError, match="at least 2 topics"):
        paired_permutation_test(np.array([1.0]), np.array([0.0]))
    with pytest.raises(ValidationError, match="equal length"):
        paired_bootstrap(np.array([1.0, 2.0]), np.array([0.0]))


def test_compare_lists_lost_and_gained_relevant_documents_with_ranks():
    qrels = {"1": {"a": 1, "b": 2, "c": 1}, "2": {"x": 1}, "3": {"y": 1}}
    run_a = {"1": {"a": 3.0, "b": 2.0, "n": 1.0}, "2": {"x": 1.0}, "3": {"z": 2.0, "y": 1.0}}
    run_b = {"1": {"n": 3.0, "c": 2.0, "a": 1.0}, "2": {"x": 1.0}, "3": {"y": 1.0}}
    ea = evaluate(qrels, run_a, ["R@2"], run_name="A")
    eb = evaluate(qrels, run_b, ["R@2"], run_name="B")
    c = compare(ea, eb, "R@2", n_resamples=200)
    first = c.deltas[0]
    assert first.topic_id == "1"
    assert first.a == pytest.approx(2 / 3) and first.b == pytest.approx(1 / 3)
    assert first.lost == (("a", 1, 1, 3), ("b", 2, 2, None))   # rank in A, rank in B (None: not returned)
    assert first.gained == (("c", 1, None, 2),)
    # deltas: topic 1: 1/3 - 2/3; topic 2: 1 - 1; topic 3: 1 - 1 (y within 2 in both) -> largest loss first
    assert [(d.topic_id, d.delta) for d in c.deltas] == [("1", pytest.approx(-1 / 3)), ("2", 0.0), ("3", 0.0)]
    assert (c.wins, c.losses, c.ties) == (0, 1, 2)
    assert c.mean_difference == pytest.approx((-1 / 3) / 3)


def test_compare_requires_the_measure_and_same_threshold():
    q = {"1": {"a": 2}, "2": {"b": 2}}
    r = {"1": {"a": 1.0}, "2": {"b": 1.0}}
    with pytest.raises(ValidationError, match="was not computed"):
        compare(evaluate(q, r, ["R@1"]), evaluate(q, r, ["R@1"]), "P@1")
    with pytest.raises(ValidationError, match="same rel"):
        compare(evaluate(q, r, ["R@1"]), evaluate(q, r, ["R@1"], rel=2), "R@1")


def test_kendall_tau_of_two_orderings():
    # 3 systems; one discordant pair of 3: tau = (2 - 1) / 3
    assert kendall_tau({"a": 0.3, "b": 0.2, "c": 0.1}, {"a": 0.3, "b": 0.1, "c": 0.2}) == pytest.approx(1 / 3)
    with pytest.raises(ValidationError):
        kendall_tau({"a": 1.0}, {"a": 1.0})
