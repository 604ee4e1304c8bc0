"""Rerank runs in the store (issue 10): lineage and measured cost round trip, atomicity, the migration."""

from __future__ import annotations

import pytest

from tests.old_schema import store_at_schema
from workbench.errors import DuplicateNameError, UnknownNameError, ValidationError
from workbench.lineage import RerankCost, RunLineage, TopicCost
from workbench.store import Store
from workbench.store.schema import MIGRATIONS
from workbench.types import Document, RunInfo, Topic


@pytest.fixture
def toy(store):
    docs = [Document(f"d{i}", "", f"text {i}") for i in range(1, 6)] + [Document("blank", "", "")]
    store.collections.ingest_collection("toy", docs, [Topic("1", "first"), Topic("2", "second")])
    store.runs.save_run(RunInfo("bm25", "bm25", {}, 5, "toy"),
                   {"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "2": {"d4": 1.0}})
    return store


def counts(store) -> dict[str, int]:
    with store.connection() as cur:
        return {t: cur.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
                for t in ("runs", "run_entries", "run_topics", "run_lineage", "rerank_costs", "rerank_topic_costs")}


LINEAGE = RunLineage("bm25+ce", "bm25", 3, "ce", "cross-encoder", "tiny-ce", "ab" * 32, "produced")
COST = RerankCost("bm25+ce", "cpu", 16, 1, 250.5, (TopicCost("1", 3, 12.25), TopicCost("2", 1, 4.5)))


def test_lineage_and_cost_round_trip(toy):
    info = RunInfo("bm25+ce", "rerank", {"reranker": "ce"}, 3, "toy")
    stored = toy.runs.save_rerank_run(info, {"1": {"d3": 0.9, "d1": 0.5, "d2": 0.1}, "2": {"d4": 0.3}}, LINEAGE, cost=COST)
    assert stored.collection_version == toy.runs.get_run_info("bm25").collection_version
    assert toy.runs.get_run_lineage("bm25+ce") == LINEAGE
    assert toy.runs.get_run_lineage("bm25") is None  # a run that reranks nothing
    assert toy.runs.get_rerank_cost("bm25+ce") == COST
    assert toy.runs.get_rerank_cost("bm25") is None
    assert toy.runs.rerank_runs_of("bm25") == [LINEAGE]
    assert list(toy.runs.get_run("bm25+ce")["1"]) == ["d3", "d1", "d2"]
    assert toy.runs.get_run_info("bm25+ce").kind == "rerank"
    assert LINEAGE.final_name == "bm25+ce" and LINEAGE.model_identity == "tiny-ce@sha256:" + "ab" * 8
    with pytest.raises(UnknownNameError, match="nope"):
        toy.runs.get_run_lineage("nope")


def test_an_imported_rerank_has_lineage_and_no_cost(toy):
    lin = RunLineage("ext", "bm25", 3, "monot5", "external", origin="imported")
    toy.runs.save_rerank_run(RunInfo("ext", "rerank", {}, 3, "toy"), {"1": {"d2": 1.0}}, lin)
    assert toy.runs.get_run_lineage("ext") == lin and toy.runs.get_rerank_cost("ext") is None
    assert lin.model_identity == ""


def test_a_failing_lineage_write_leaves_no_run(toy):
    before = counts(toy)
    with pytest.raises(UnknownNameError):  # the candidate run does not exist
        toy.runs.save_rerank_run(RunInfo("x", "rerank", {}, 3, "toy"), {"1": {"d1": 1.0}},
                            RunLineage("x", "missing", 3, "ce", "cross-encoder"))
    bad_cost = RerankCost("x", "cpu", 16, 1, 1.0, (TopicCost("1", 1, 1.0), TopicCost("1", 1, 2.0)))  # duplicate topic
    with pytest.raises(Exception, match="rolled back"):
        toy.runs.save_rerank_run(RunInfo("x", "rerank", {}, 3, "toy"), {"1": {"d1": 1.0}},
                            RunLineage("x", "bm25", 3, "ce", "cross-encoder"), cost=bad_cost)
    assert counts(toy) == before
    with pytest.raises(ValidationError, match="lineage of run 'y' given for run 'x'"):
        toy.runs.save_rerank_run(RunInfo("x", "rerank", {}, 3, "toy"), {}, RunLineage("y", "bm25", 3, "ce", "cross-encoder"))
    toy.runs.save_rerank_run(RunInfo("x", "rerank", {}, 3, "toy"), {"1": {"d1": 1.0}}, RunLineage("x", "bm25", 3, "c", "cross-encoder"))
    with pytest.raises(DuplicateNameError):
        toy.runs.save_rerank_run(RunInfo("x", "rerank", {}, 3, "toy"), {"1": {"d1": 1.0}},
                            RunLineage("x", "bm25", 3, "c", "cross-encoder"))


def test_document_presence_finds_absent_empty_and_title_only_documents(store):
    docs = [Document("d1", "", "text 1"), Document("blank", " ", ""), Document("titled", "a title", " ")]
    store.collections.ingest_collection("toy", docs, [Topic("1", "first")])
    version = store.collections.latest_collection_version("toy")
    p = store.collections.document_presence(version, ["d1", "blank", "titled", "gone"])
    assert (p.absent, p.empty, p.title_only) == ({"gone"}, {"blank"}, {"titled"})
    assert store.collections.document_presence(version, []) == (set(), set(), set())


def test_a_version_1_store_is_migrated_and_keeps_its_runs(tmp_path):
    path = tmp_path / "old.duckdb"
    with store_at_schema(path, 1) as con:
        con.execute("INSERT INTO runs (run_name, collection, collection_version, kind, depth, content_hash) "
                    "VALUES ('old', 'c', 'v', 'bm25', 10, 'h')")
    store = Store(path, client="pytest")
    assert store.schema_version() == max(MIGRATIONS) + 1
    assert store.runs.get_run_lineage("old") is None
    with store.connection() as cur:
        assert cur.execute("SELECT count(*) FROM run_lineage").fetchall() == [(0,)]
