"""Assignment plans, per-assessor seeded order within priority bands, blind view, highlighting."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from workbench.errors import ValidationError
from workbench.judging.queue import (
    JudgingView,
    PoolItem,
    assessor_order,
    band,
    highlight_html,
    plan_assignments,
    progress_counts,
    query_terms,
    queue_status,
    resume_position,
    topic_order,
    topic_position,
    topic_window,
)
from workbench.types import Topic

ITEMS = [PoolItem(t, f"d{t}-{r:02d}", r) for t in ("1", "2", "10") for r in range(1, 26)]


def test_topic_order_is_numeric_for_numeric_ids_without_casting():
    assert topic_order(["10", "2", "1", "2"]) == ["1", "2", "10"]


def test_band_is_a_bucket_of_priority_ranks():
    assert [band(r, 10) for r in (1, 10, 11, 20, 21)] == [0, 0, 1, 1, 2]


def test_order_respects_bands_and_is_seeded_per_assessor():
    a1 = assessor_order(ITEMS, "ann", seed=7, band_size=10)
    assert a1 == assessor_order(ITEMS, "ann", seed=7, band_size=10)  # reproducible
    assert a1 != assessor_order(ITEMS, "bob", seed=7, band_size=10)  # differs per assessor
    assert a1 != assessor_order(ITEMS, "ann", seed=8, band_size=10)
    rank = {(i.topic_id, i.doc_id): i.priority_rank for i in ITEMS}
    assert [t for t, _ in a1] == ["1"] * 25 + ["2"] * 25 + ["10"] * 25
    bands = [band(rank[k], 10) for k in a1[:25]]
    assert bands == sorted(bands)  # band 0 before band 1 before band 2
    assert [rank[k] for k in a1[:10]] != list(range(1, 11))  # shuffled inside the band
    with pytest.raises(ValidationError):
        assessor_order(ITEMS, "ann", band_size=0)


def test_overlap_two_gives_every_document_to_two_distinct_assessors():
    plan = plan_assignments(ITEMS, ["ann", "bob", "cat"], overlap=2, seed=1)
    who: dict[tuple[str, str], list[str]] = {}
    for a, q in plan.items():
        assert len(q) == len(set(q))
        for key in q:
            who.setdefault(key, []).append(a)
    assert len(who) == 75 and all(len(v) == 2 for v in who.values())
    loads = sorted(len(q) for q in plan.values())
    assert sum(loads) == 150 and loads[-1] - loads[0] <= 1


def test_double_share_doubles_a_ceiling_share_per_topic():
    plan = plan_assignments(ITEMS, ["ann", "bob"], double_share=0.2, seed=1)
    count = Counter(k for q in plan.values() for k in q)
    assert len(count) == 75
    per_topic = Counter(t for (t, _), c in count.items() if c == 2)
    assert per_topic == {"1": 5, "2": 5, "10": 5}  # ceil(0.2 * 25) = 5
    assert plan == plan_assignments(ITEMS, ["ann", "bob"], double_share=0.2, seed=1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"overlap": 3},
        {"overlap": 0},
        {"overlap": 1, "double_share": 0.1},
        {"double_share": 1.5},
    ],
)
def test_invalid_policies_raise(kwargs):
    with pytest.raises(ValidationError, match="assign"):
        plan_assignments(ITEMS, ["ann", "bob"], **kwargs)
    with pytest.raises(ValidationError, match="distinct"):
        plan_assignments(ITEMS, ["ann", "ann"])


def test_view_model_has_no_run_rank_or_score_fields():
    names = {f.name for f in dataclasses.fields(JudgingView)}
    assert not names & {"run", "run_name", "rank", "score", "priority", "priority_rank", "grades"}


def test_query_terms_drop_stopwords():
    t = Topic("1", "What is the flow of a laminar boundary layer?")
    assert query_terms(t) == ["flow", "laminar", "boundary", "layer"]


def test_query_terms_skip_function_words_but_keep_technical_ones():
    """QA defect: "must", "so", "we" were highlighted (Cranfield topic 1 has "must")."""
    t = Topic("1", "what similarity laws must be obeyed when constructing aeroelastic models of heated "
                   "high speed aircraft .")
    assert query_terms(t) == ["similarity", "laws", "obeyed", "constructing", "aeroelastic", "models", "heated",
                              "high", "speed", "aircraft"]
    t = Topic("2", "so we need papers on thin airfoils, the de laval nozzle and side force systems")
    assert query_terms(t) == ["need", "thin", "airfoils", "de", "laval", "nozzle", "side", "force", "systems"]


def test_queue_status_topic_position_and_window():
    assert queue_status([(None, False), (1, False), (None, True), (None, False)]) == [
        "skipped", "judged", "unsure", "not yet"]
    assert queue_status([]) == []
    topics = ["1", "1", "2", "2", "2", "10"]
    assert [(p.index, p.size, p.new_topic) for p in (topic_position(topics, i) for i in range(1, 7))] == [
        (1, 2, True), (2, 2, False), (1, 3, True), (2, 3, False), (3, 3, False), (1, 1, True)]
    with pytest.raises(ValidationError):
        topic_position(topics, 7)
    assert topic_window(["1", "2", "3", "4", "5", "6", "7"], "5", before=1, after=1) == ["4", "5", "6"]
    assert topic_window(["1", "2"], "9") == ["1", "2"]


def test_highlight_escapes_markup_before_marking():
    text = 'Flow <script>alert("x")</script> & <b>boundary</b> flows; overflow'
    out = highlight_html(text, ["flow", "boundary"])
    assert "<script>" not in out and "<b>" not in out
    assert out == (
        '<mark>Flow</mark> &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; '
        "&lt;b&gt;<mark>boundary</mark>&lt;/b&gt; <mark>flows</mark>; overflow"
    )
    # a term that spells an entity name is never matched inside an escape sequence
    assert highlight_html("a < b", ["lt"]) == "a &lt; b"


def test_progress_and_resume():
    q = [("1", "a"), ("1", "b"), ("2", "c")]
    assert progress_counts(q, {("1", "b")}) == {"1": (1, 2), "2": (0, 1)}
    assert resume_position(q, {("1", "a")}) == 2
    assert resume_position(q, set(q)) == 3
    assert resume_position([], set()) == 1
