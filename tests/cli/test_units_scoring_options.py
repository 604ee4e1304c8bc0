"""`score --unit doc` on a chunk run honours --by, --topic-set, eligibility filters and recording, as plain score.

Collection ``docs`` (document metadata ``year``) and its chunk collection ``docs-c``::

    a "alpha beta" 1950       chunks a#0 "alpha", a#1 "beta"
    b "alpha beta gamma" 1960 chunk  b#0
    c "gamma" 1950            chunk  c#0
    e "delta" 1950            chunk  e#0
    f "alpha gamma" 1950      chunks f#0 "alpha", f#1 "gamma"

Topics: 1 (filter ``year <= 1955``, domain x), 2 (domain y). Chunk run ``chunky``: t1 = b#0 c#0 a#1 a#0
(documents b, c, a), t2 = c#0 f#1 (documents c, f). Qrels ``docs-v1``: t1 {a, b}, t2 {c, e, f}.

At document level, R[doc]@2: t1's filter makes b (1960) ineligible, so R(t1) = {a}: top 2 = b, c: 0/1, and
b at rank 1 is a leak; t2: c, f of {c, e, f}: 2/3. Macro (0 + 2/3) / 2 = 1/3 (unfiltered it would be
(1/2 + 2/3) / 2 = 7/12). Slices by domain: x = 0, y = 2/3. Topic set {2}: 2/3 over 1 topic.
"""

from __future__ import annotations

import pytest

from workbench.scoring.measures import parse_measure
from workbench.scoring.units import ChunkMap, ChunkSpan
from workbench.services.evaluation.request import (
    Filtering,
    Output,
    ScoreEnv,
    ScoreRequest,
    Slicing,
    TopicChoice,
    UnitOptions,
)
from workbench.services.evaluation.units import score_units
from workbench.store import Store
from workbench.store.units import ChunkSource
from workbench.types import Document, RunInfo, Topic

TEXTS = {"a": "alpha beta", "b": "alpha beta gamma", "c": "gamma", "e": "delta", "f": "alpha gamma"}
YEARS = {"a": 1950, "b": 1960, "c": 1950, "e": 1950, "f": 1950}
SPANS = [("a#0", "a", 0, 5), ("a#1", "a", 6, 10), ("b#0", "b", 0, 16), ("c#0", "c", 0, 5), ("e#0", "e", 0, 5),
         ("f#0", "f", 0, 5), ("f#1", "f", 6, 11)]
R2 = parse_measure("R@2")


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "wb.duckdb", client="pytest")
    topics = [Topic("1", "alpha beta"), Topic("2", "gamma")]
    s.collections.ingest_collection("docs", [Document(d, "", t) for d, t in TEXTS.items()], topics,
                        metadata={d: {"year": y} for d, y in YEARS.items()})
    s.metadata.set_topic_metadata("docs", {"1": {"filter": "year <= 1955", "domain": "x"}, "2": {"domain": "y"}})
    chunks = [Document(c, "", TEXTS[d][a:b]) for c, d, a, b in SPANS]
    s.collections.ingest_collection("docs-c", chunks, topics, chunk_map=ChunkMap.of(ChunkSpan(*x) for x in SPANS),
                        chunk_source=ChunkSource("docs", s.collections.latest_collection_version("docs"), "tokens", 1, 0))
    s.runs.save_run(RunInfo("chunky", "dense", {}, 4, "docs-c"),
               {"1": {"b#0": 4.0, "c#0": 3.0, "a#1": 2.0, "a#0": 1.0}, "2": {"c#0": 2.0, "f#1": 1.0}})
    s.qrels.create_qrels_version("docs-v1", "docs", {"1": {"a": 1, "b": 1}, "2": {"c": 1, "e": 1, "f": 1}},
                           origin="imported", rule="test")
    return s


def _score(store, **kw):
    return score_units(ScoreRequest(("chunky",), "docs-v1", measures=("R@2",), units=UnitOptions(units=("doc",)),
                                    **kw), ScoreEnv(lambda: store))


def test_eligibility_filters_apply_to_the_documents_of_a_chunk_run(store):
    view = _score(store, output=Output(record=False)).views[0]
    a = view.report.evaluations[0].aggregates[R2]
    assert (a.macro, a.n_topics) == (pytest.approx(1 / 3), 2)
    el = view.report.eligibility[0]
    assert el is not None and el.restricted.n_ineligible_gold == 1 and el.leaks.at_k[2] == 1
    assert el.leaks.per_topic["1"] == ((1, "b"),)
    off = _score(store, output=Output(record=False), filtering=Filtering("off")).views[0].report.evaluations[0].aggregates[R2]
    assert off.macro == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_slices_and_topic_sets(store):
    view = _score(store, output=Output(record=False), slicing=Slicing(("domain",), 1)).views[0]
    rows = {r.value: r for r in view.report.slices["chunky"]["domain"]}
    assert rows["x"].means[R2] == 0.0 and rows["y"].means[R2] == pytest.approx(2 / 3)
    store.evaluations.save_topic_set("s1", ["2"], collection="docs")
    view = _score(store, output=Output(record=False), topics=TopicChoice("s1")).views[0]
    a = view.report.evaluations[0].aggregates[R2]
    assert (a.macro, a.n_topics, view.report.evaluations[0].topics) == (pytest.approx(2 / 3), 1, ("2",))
    assert [u.command for u in store.evaluations.list_topic_set_uses("s1")] == ["score"]


def test_stored_run_and_qrels_are_recorded_with_the_unit(store):
    report = _score(store)
    ids = report.views[0].report.evaluation_ids
    assert len(ids) == 1
    [ev] = store.evaluations.list_evaluations("chunky", "docs-v1")
    assert ev.evaluation_id == ids[0]
    assert ev.params["unit"] == "doc" and ev.params["unit_labelled"] is True
    assert ev.params["run_mapping"].startswith("chunks -> documents")
    rows = {(r.measure, r.aggregate): r for r in store.evaluations.get_evaluation_rows(ids[0])}
    assert rows["R@2", "macro"].value == pytest.approx(1 / 3)
