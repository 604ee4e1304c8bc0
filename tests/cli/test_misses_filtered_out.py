"""`misses --categorise` feeds the `filtered out` cause: ineligible judged-relevant documents are misses, not dropped.

Collection ``toy`` (document metadata ``year``)::

    d1 "flow" 1960   d2 "flow wing" 1958   d3 "flow wing drag" 1950   d4 "flow wing drag lift" 1956
    d5 "heat" 1940   d6 "slab" 1962

Topics: 1 "flow" with filter ``year <= 1956`` (eligible: d3, d4, d5), 2 "heat" unfiltered,
3 "drag" with filter ``year <= 1940`` (eligible: d5 only).

Run ``bm25`` (depth 4): t1 = d2 d3 d4 d1, t2 = d5, t3 = d4 d3.  Qrels ``toy-v1`` (relevant: grade >= 1)::

    t1: d1=1 (ineligible, rank 4)  d4=2 (eligible, rank 3)  d2=1 (ineligible, rank 1)
    t2: d5=1 (rank 1)
    t3: d3=1 (ineligible, rank 2; t3's only relevant document, so |R| = 0 after the filter)

At k = 1, filtered scoring leaves t1 with R = {d4} and t3 out (|R| = 0); the scorer's misses are t1 d4
only. The miss list adds the ineligible documents not within k: t1 d1 (rank 4) and t3 d3 (rank 2), both
``filtered out`` with their topic's filter; t1 d2 is ranked 1 (within k): a leak, not a miss.
So 3 misses: found deeper 1 (t1 d4, rank 3), filtered out 2; residue 0.
"""

from __future__ import annotations

import pytest

from workbench.services.evaluation.misses import categorised_misses
from workbench.store import Store
from workbench.types import Document, RunInfo, Topic

DOCS = [Document("d1", "", "flow"), Document("d2", "", "flow wing"), Document("d3", "", "flow wing drag"),
        Document("d4", "", "flow wing drag lift"), Document("d5", "", "heat"), Document("d6", "", "slab")]
YEARS = {"d1": 1960, "d2": 1958, "d3": 1950, "d4": 1956, "d5": 1940, "d6": 1962}
TOPICS = [Topic("1", "flow"), Topic("2", "heat"), Topic("3", "drag")]
RUN = {"1": {"d2": 4.0, "d3": 3.0, "d4": 2.0, "d1": 1.0}, "2": {"d5": 1.0}, "3": {"d4": 2.0, "d3": 1.0}}
QRELS = {"1": {"d1": 1, "d4": 2, "d2": 1}, "2": {"d5": 1}, "3": {"d3": 1}}
PARAMS = {"backend": "rank_bm25", "k1": 1.2, "b": 0.75, "stopwords": "english", "stemmer": None}


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "wb.duckdb", client="pytest")
    s.collections.ingest_collection("toy", DOCS, TOPICS, metadata={d: {"year": y} for d, y in YEARS.items()})
    s.runs.save_run(RunInfo("bm25", "bm25", PARAMS, 4, "toy"), RUN)
    s.qrels.create_qrels_version("toy-v1", "toy", QRELS, origin="imported", rule="test")
    return s


def _causes(mr):
    return {(r.evidence.topic_id, r.evidence.doc_id): (r.cause, r.categorised.detail) for r in mr.misses.rows}


def test_ineligible_relevant_documents_are_filtered_out_misses_with_the_filter(store):
    store.metadata.set_topic_metadata("toy", {"1": {"filter": "year <= 1956"}, "3": {"filter": "year <= 1940"}})
    mr = categorised_misses("bm25", "toy-v1", 1, open_store=lambda: store, missing="zero")
    assert _causes(mr) == {
        ("1", "d4"): ("found deeper", "rank 3 (depth 4)"),
        ("1", "d1"): ("filtered out", "ineligible under the topic's filter year <= 1956"),
        ("3", "d3"): ("filtered out", "ineligible under the topic's filter year <= 1940"),
    }
    rows = {(r.evidence.topic_id, r.evidence.doc_id): r.evidence for r in mr.misses.rows}
    assert (rows["1", "d1"].rank, rows["1", "d1"].eligible) == (4, False)
    assert (rows["1", "d4"].eligible, rows["3", "d3"].rank) == (True, 2)
    c = mr.misses.counts
    assert (c.per_cause["filtered out"], c.per_cause["found deeper"], c.total, c.residue) == (2, 1, 3, 0)
    # t1 d2 ranks 1 while ineligible: a leak within k, not a miss
    assert mr.misses.extra["ineligible_within_k"] == 1
    assert mr.misses.extra["eligibility"]["ineligible_gold"] == 3  # type: ignore[index]
    # the order: topic, then the scorer's misses before the filtered-out ones
    assert [(r.evidence.topic_id, r.evidence.doc_id) for r in mr.misses.rows] == [("1", "d4"), ("1", "d1"),
                                                                                   ("3", "d3")]


def test_a_filter_set_later_makes_a_new_list(store):
    before = categorised_misses("bm25", "toy-v1", 1, open_store=lambda: store, missing="zero")
    assert {c for c, _ in _causes(before).values()} == {"found deeper"} and before.misses.counts.total == 3
    store.metadata.set_topic_metadata("toy", {"1": {"filter": "year <= 1956"}})
    after = categorised_misses("bm25", "toy-v1", 1, open_store=lambda: store, missing="zero")
    assert not after.reused and after.kept != before.kept
    assert _causes(after)[("1", "d1")][0] == "filtered out"
    assert after.misses.counts.per_cause["filtered out"] == 1
