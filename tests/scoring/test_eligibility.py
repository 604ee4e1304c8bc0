"""Eligibility (pure): topic filters, filtered relevant sets, ineligible gold, leaks, and R@k over eligible documents."""

from __future__ import annotations

import pytest

from workbench.errors import ValidationError
from workbench.scoring.eligibility import (
    check_no_ineligible_gold,
    eligibility,
    find_leaks,
    restrict_qrels,
    topic_filters,
)
from workbench.scoring.evaluate import evaluate
from workbench.scoring.filters import MetadataColumns, UnknownMetadataKeyError

META = {"a": {"year": 1950}, "b": {"year": 1960}, "c": {"year": 1955}, "d": {}, "e": {"year": 1940}}
COLUMNS = MetadataColumns(sorted(META), META)
TOPIC_META = {"1": {"filter": "year <= 1955", "priority": "critical"}, "2": {"priority": "normal"},
              "3": {"filter": "year<=1955"}}
QRELS = {"1": {"a": 2, "b": 1, "d": 0, "c": 1}, "2": {"b": 1}, "3": {"b": 1}}


def test_filters_come_from_one_topic_metadata_key():
    tf = topic_filters(TOPIC_META)
    assert list(tf.filters) == ["1", "3"] and tf.key == "filter" and bool(tf)
    assert tf.digest == __import__("hashlib").sha256(b"1\tyear <= 1955\n3\tyear <= 1955\n").hexdigest()
    assert not topic_filters(TOPIC_META, "filter_asof")


def test_a_bad_filter_names_its_topic():
    with pytest.raises(ValidationError, match=r"topic '1': filter 'year <=': column 8"):
        topic_filters({"1": {"filter": "year <="}})
    with pytest.raises(ValidationError, match=r"topic '1': expected the 'filter' metadata to be a filter text, found 3"):
        topic_filters({"1": {"filter": 3}})
    with pytest.raises(UnknownMetadataKeyError, match=r"topic '1': filter 'yr < 1' names the metadata key 'yr'"):
        eligibility(topic_filters({"1": {"filter": "yr < 1"}}), COLUMNS)


def test_restricted_qrels_ineligible_gold_and_removed_counts():
    elig = eligibility(topic_filters(TOPIC_META), COLUMNS)
    assert elig.eligible["1"] == frozenset({"a", "c", "e"}) and elig.eligible["1"] is elig.eligible["3"]
    assert elig.is_eligible("2", "b") and not elig.is_eligible("1", "b") and elig.n_eligible("2") == 5
    r = restrict_qrels(QRELS, elig, rel=1)
    # ineligible judgments stay judged, at grade 0: b (1960) and d (no year) for topics 1 and 3
    assert r.qrels == {"1": {"a": 2, "b": 0, "d": 0, "c": 1}, "2": {"b": 1}, "3": {"b": 0}}
    assert r.ineligible_gold == {"1": (("b", 1),), "3": (("b", 1),)}  # d (grade 0) is ineligible, but not gold
    assert r.n_ineligible_judged == {"1": 2, "3": 1} and r.n_ineligible_gold == 2
    assert restrict_qrels(QRELS, elig, rel=2).ineligible_gold == {}
    with pytest.raises(ValidationError, match=r"2 judged-relevant document\(s\) in 2 topic\(s\) are ineligible .*topic 1: b; topic 3: b"):
        check_no_ineligible_gold(r)


def test_filtered_recall_counts_eligible_relevant_documents_only():
    elig = eligibility(topic_filters(TOPIC_META), COLUMNS)
    r = restrict_qrels(QRELS, elig)
    run = {"1": {"a": 3.0, "x": 2.0, "c": 1.0}, "2": {"b": 1.0}, "3": {"a": 1.0}}
    e = evaluate(r.qrels, run, ["R@2"], missing="zero")
    m = e.measures[0]
    # topic 1: R = {a, c} (b is ineligible): a within 2 -> 1/2; topic 2 unfiltered: 1/1; topic 3: |R| = 0, excluded
    assert e.per_topic[m]["1"].value == 0.5 and e.per_topic[m]["2"].value == 1.0
    assert e.excluded_topics == ("3",)
    judged = evaluate(r.qrels, {"1": {"b": 1.0}}, ["Judged@1"], missing="zero").per_topic
    assert judged[next(iter(judged))]["1"].value == 1.0  # a leaked document that was judged stays judged
    unfiltered = evaluate(QRELS, run, ["R@2"], missing="zero")
    assert unfiltered.per_topic[m]["1"].value == pytest.approx(1 / 3)  # b counted as a miss without the filter


def test_leaks_are_ineligible_documents_returned_for_filtered_topics():
    elig = eligibility(topic_filters(TOPIC_META), COLUMNS)
    ranked = {"1": ["b", "a", "d", "c"], "2": ["b"], "3": ["e"]}
    lk = find_leaks(ranked, elig, [1, 3, 10])
    assert lk.per_topic == {"1": ((1, "b"), (3, "d"))}  # topic 2 is unfiltered: b is no leak there
    assert lk.at_k == {1: 1, 3: 2, 10: 2} and lk.total == 2 and lk.n_topics == 1 and lk.n_filtered_topics == 2


def test_docstring_examples():
    import doctest

    import workbench.scoring.eligibility as mod

    result = doctest.testmod(mod)
    assert result.attempted > 0 and result.failed == 0
