"""Slices: derived keys, metadata keys, slice tables and per-slice comparisons, checked by hand."""

from __future__ import annotations

import pytest

from workbench.errors import UnknownNameError, ValidationError
from workbench.scoring.compare import paired_bootstrap
from workbench.scoring.evaluate import evaluate
from workbench.scoring.slices import (
    SliceSources,
    adjusted_p_values,
    compare_slices,
    slice_key,
    slice_table,
)

# 6 topics; |R|: t1 1, t2 1, t3 3, t4 3, t5 7, t6 25.
QRELS = {
    "1": {"a": 1}, "2": {"b": 1}, "3": {"c1": 1, "c2": 1, "c3": 2}, "4": {"d1": 1, "d2": 1, "d3": 1},
    "5": {f"e{i}": 1 for i in range(7)}, "6": {f"f{i}": 1 for i in range(25)},
}
RUN = {"1": {"a": 1.0}, "2": {"x": 1.0}, "3": {"c1": 3.0, "c2": 2.0, "z": 1.0}, "4": {"d1": 1.0},
       "5": {"e0": 2.0, "e1": 1.0}, "6": {f"f{i}": 30.0 - i for i in range(10)}}
QUERIES = {"1": "lift", "2": "wing flutter at mach two", "3": "heat transfer in a slab",
           "4": "one two three four five six seven eight nine ten eleven", "5": "a b c", "6": "x y"}
META = {"1": {"intent": "nav"}, "2": {"intent": "info"}, "3": {"intent": "info"}, "5": {"intent": "nav", "year": 1958.0}}


def sources(e):
    n_rel = {t: sum(1 for g in d.values() if g >= 1) for t, d in QRELS.items()}
    return SliceSources(QUERIES, n_rel, {t: 1.0 if t != "6" else 0.4 for t in e.topics}, 10, "run", META)


def test_derived_keys_bucket_by_hand():
    e = evaluate(QRELS, RUN, ["R@10"])
    s = sources(e)
    nrel = slice_key("n_relevant", s, e.topics)
    assert dict(nrel.values) == {"1": "1", "2": "1", "3": "2-5", "4": "2-5", "5": "6-20", "6": ">20"}
    ql = slice_key("query_length", s, e.topics)
    # terms: 1, 5, 5, 11, 3, 2
    assert dict(ql.values) == {"1": "1-2", "2": "3-5", "3": "3-5", "4": "11-20", "5": "3-5", "6": "1-2"}
    cov = slice_key("pool_coverage", s, e.topics)
    assert cov.value("6") == "<50%" and cov.value("1") == "100%"


def test_metadata_key_and_topics_without_it():
    e = evaluate(QRELS, RUN, ["R@10"])
    k = slice_key("intent", sources(e), e.topics)
    assert k.order == ("info", "nav", "(none)") and k.value("4") == "(none)"
    assert slice_key("year", sources(e), e.topics).value("5") == "1958"     # 1958.0 shown as 1958
    with pytest.raises(UnknownNameError, match="known: intent, n_relevant, pool_coverage, query_length, year"):
        slice_key("locale", sources(e), e.topics)
    with pytest.raises(ValidationError, match="query texts"):
        slice_key("query_length", SliceSources({}, {}, {}, 10, "r", {}), e.topics)


def test_slice_table_means_and_counts_by_hand():
    e = evaluate(QRELS, RUN, ["R@10", "P@2"])
    rows = slice_table(e, slice_key("n_relevant", sources(e), e.topics), min_topics=2)
    r10, p2 = e.measures
    by = {r.value: r for r in rows}
    # R@10 per topic: 1, 0, 2/3, 1/3, 2/7, 10/25
    assert by["(all)"].means[r10] == pytest.approx((1 + 0 + 2 / 3 + 1 / 3 + 2 / 7 + 10 / 25) / 6)
    assert by["1"].topics == ("1", "2") and by["1"].means[r10] == pytest.approx(0.5)
    assert by["2-5"].means[r10] == pytest.approx((2 / 3 + 1 / 3) / 2)
    # P@2 per topic: 1/2, 0, 2/2, 1/2, 2/2, 2/2 (topic 3: c1 and c2 in the top 2)
    assert by["2-5"].means[p2] == pytest.approx((1 + 0.5) / 2)
    assert [(r.value, r.n_topics, r.too_small) for r in rows] == [
        ("(all)", 6, False), ("1", 2, False), ("2-5", 2, False), ("6-20", 1, True), (">20", 1, True)]


def test_compare_slices_tests_only_big_enough_slices_and_holm_over_the_family():
    q = {str(t): {f"r{t}": 1} for t in range(1, 13)}
    a_run = {t: {f"r{t}": 1.0} for t in q}
    b_run = {t: ({"x": 1.0} if int(t) % 2 else {f"r{t}": 1.0}) for t in q}     # odd topics lost
    a = evaluate(q, a_run, ["R@1"], run_name="A")
    b = evaluate(q, b_run, ["R@1"], run_name="B")
    half = {t: ("low" if int(t) <= 6 else "high") for t in q}
    half["12"] = "tiny"
    src = SliceSources({}, {}, {}, 1, "A", {t: {"band": v} for t, v in half.items()})
    key = slice_key("band", src, a.topics)
    rows = compare_slices(a, b, a.measures[0], key, min_topics=3, n_resamples=500, seed=2)
    by = {r.value: r for r in rows}
    assert by["(all)"].delta == pytest.approx(-6 / 12)
    assert by["low"].topics == ("1", "2", "3", "4", "5", "6") and by["low"].delta == pytest.approx(-3 / 6)
    assert by["tiny"].too_small and by["tiny"].bootstrap is None and by["tiny"].delta == 0.0
    import numpy as np
    va = np.ones(6)
    vb = np.array([0, 1, 0, 1, 0, 1], dtype=float)
    assert by["low"].bootstrap == paired_bootstrap(va, vb, n_resamples=500, seed=2)
    adj = adjusted_p_values(rows)
    tested = [r for r in rows if r.value not in ("(all)",) and r.permutation is not None]
    assert len(tested) == 2 and adj[0] is None                               # overall row: not in the family
    p_low, p_high = by["low"].permutation.p_value, by["high"].permutation.p_value
    lo, hi = sorted([p_low, p_high])
    expected = {min(1.0, 2 * lo), max(min(1.0, 2 * lo), min(1.0, hi))}
    assert {p for p in adj if p is not None} == expected
