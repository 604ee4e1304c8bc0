"""Sample pools in the store: one version of kind sample with strata, inclusion probabilities, counts and frame;
reproducible; written all or nothing; published qrels record the design; never extended; the migration."""

from __future__ import annotations

import json

import pytest
from test_pools import A, B, C, with_runs

from tests.old_schema import store_at_schema
from workbench.errors import ValidationError
from workbench.services.runs.pooling import build_pool as build_service
from workbench.services.runs.pooling import extend_pool as extend_service
from workbench.services.runs.sampling import design_of, sample_pool
from workbench.store import SCHEMA_VERSION, Store
from workbench.types import Document, Judgment, RunInfo, Topic

# The pool tests' runs A, B, C at depth 3. Topic 1: best ranks d1 1, d3 1, d6 1 | d2 2, d5 2, d7 3; outside d4, d8, d9.
#          Topic 2: best ranks d4 1, d6 1 | d5 2, d7 2; outside d1, d2, d3, d8, d9.
DESIGN = design_of(3, "1-1:1.0,2-3:0.5", seed=5, outside=0.5)


@pytest.fixture
def toy(store):
    return with_runs(store)


def draw(store, name="s", design=DESIGN):
    return sample_pool(store.pools, store.runs, store.collections, name, ["A", "B", "C"], design)


def test_a_sample_pool_stores_documents_strata_inclusion_counts_and_frame(toy):
    out = draw(toy)
    info = out.info
    assert (info.kind, info.is_sample, info.strategy, info.depth, info.runs) == (
        "sample", True, "stratified sample", 3, ("A", "B", "C"))
    assert info.params == {"design": DESIGN.as_dict(), "collection_size": 9}
    # n_h = max(1, floor(rate * N_h + 1/2)): topic 1: 3 of 3, floor(0.5*3+0.5) = 2 of 3, outside 2 of 3;
    # topic 2: 2 of 2, floor(0.5*2+0.5) = 1 of 2, outside floor(0.5*5+0.5) = 3 of 5
    counts = [(c.topic_id, c.stratum, c.population, c.sampled) for c in out.sample.counts]
    assert counts == [("1", "1-1", 3, 3), ("1", "2-3", 3, 2), ("1", "outside", 3, 2),
                      ("2", "1-1", 2, 2), ("2", "2-3", 2, 1), ("2", "outside", 5, 3)]
    pi = {"1-1": {"1": 1.0, "2": 1.0}, "2-3": {"1": 2 / 3, "2": 1 / 2}, "outside": {"1": 2 / 3, "2": 3 / 5}}
    assert all(d.inclusion == pi[d.stratum][d.topic_id] for d in out.sample.docs)
    assert info.n_entries == 3 + 2 + 2 + 2 + 1 + 3
    assert {(e.topic_id, e.doc_id) for e in toy.pools.pool_entries("s")} == {
        (d.topic_id, d.doc_id) for d in out.sample.docs}
    stored_info, stored = toy.pools.read_sample("s")
    assert stored_info == info
    assert stored.docs == out.sample.docs and stored.counts == out.sample.counts
    assert stored.frame == {"1": {"d1": "1-1", "d2": "2-3", "d3": "1-1", "d5": "2-3", "d6": "1-1", "d7": "2-3"},
                            "2": {"d4": "1-1", "d5": "2-3", "d6": "1-1", "d7": "2-3"}}
    assert stored.design == DESIGN and stored.collection_size == 9
    outside = [d for d in stored.docs if d.stratum == "outside"]
    assert all(d.doc_id not in stored.frame[d.topic_id] and d.best_rank == 0 for d in outside)


def test_the_same_runs_design_and_seed_draw_the_same_sample_and_hash(toy, tmp_path):
    first = draw(toy)
    again = draw(toy)                                  # the same command: nothing written
    assert not again.created and again.info == first.info and len(toy.pools.list_pools()) == 1
    other = Store(tmp_path / "other.duckdb", client="pytest")
    other.collections.ingest_collection("toy", [Document(f"d{i}", "", f"text {i}") for i in range(1, 10)],
                                        [Topic("1", "first"), Topic("2", "second")])
    for name, run in (("A", A), ("B", B), ("C", C)):
        other.runs.save_run(RunInfo(name, "imported", {}, 10, "toy"), run)
    elsewhere = draw(other)
    assert elsewhere.info.content_hash == first.info.content_hash
    assert other.pools.pool_entries("s") == toy.pools.pool_entries("s")
    assert other.pools.read_sample("s")[1] == toy.pools.read_sample("s")[1]
    reseeded = draw(toy, "s7", design_of(3, "1-1:1.0,2-3:0.5", seed=7, outside=0.5))
    assert reseeded.info.content_hash != first.info.content_hash     # the seed is part of the design


def test_a_sample_is_written_all_or_nothing(toy, monkeypatch):
    import workbench.store.pools as pools_module

    def broken(cur, name, sample):
        cur.execute("SELECT * FROM no_such_table")

    monkeypatch.setattr(pools_module, "insert_sample_rows", broken)
    with pytest.raises(Exception, match="no_such_table"):
        draw(toy)
    assert toy.pools.list_pools() == []
    with toy.connection() as cur:
        assert cur.execute("SELECT count(*) FROM pool_entries").fetchall() == [(0,)]


def test_a_qrels_version_of_a_sample_records_its_design_and_takes_no_parent(toy):
    out = draw(toy)
    toy.users.add_user("lead", "lead", token="lead-token")
    toy.users.add_user("ann", token="ann-token", lead="lead")
    for d in out.sample.docs[:4]:
        toy.judgments.record_judgment(Judgment(d.topic_id, d.doc_id, "ann", 1), collection="toy", pool_version="s")
    info = toy.qrels.publish_qrels("s-qrels", "s", rule="median", created_by="lead")
    assert info.is_sample and info.n_entries == 4
    recorded = json.loads(info.sample_design)
    assert recorded == {"pool_version": "s", "design": DESIGN.as_dict(), "runs": ["A", "B", "C"],
                        "collection_version": toy.collections.latest_collection_version("toy"),
                        "collection_size": 9}
    with pytest.raises(ValidationError, match="is a sample; .* takes no parent"):
        toy.qrels.publish_qrels("s-qrels-2", "s", rule="median", created_by="lead", parent_version="s-qrels")
    build_service(toy.pools, toy.runs, ["A"], depth=2)
    plain = toy.qrels.publish_qrels("plain", "toy-pool-v1", rule="median", created_by="lead")
    assert not plain.is_sample and plain.sample_design == ""


def test_a_sample_pool_is_never_extended(toy):
    root = build_service(toy.pools, toy.runs, ["A"], depth=2)
    draw(toy)
    with pytest.raises(ValidationError, match="is a sample"):
        extend_service(toy.pools, toy.runs, toy.qrels, ["C"], parent="s")
    ext = extend_service(toy.pools, toy.runs, toy.qrels, ["C"])     # the default parent: the depth-k lineage only
    assert ext.parent == root.info.pool_version


def test_a_version_11_store_is_migrated_and_its_pools_are_depth_k_unions(tmp_path):
    path = tmp_path / "v11.duckdb"
    with store_at_schema(path, 11) as con:
        con.execute("INSERT INTO pools (pool_version, collection, collection_version, depth, strategy, n_topics, "
                    "n_entries, content_hash) VALUES ('p', 'c', 'v', 10, 'depth-k union', 0, 0, 'h')")
    store = Store(path, client="pytest")
    assert store.schema_version() == SCHEMA_VERSION == 14
    p = store.pools.get_pool("p")
    assert (p.kind, p.is_sample) == ("depth-k union", False)
    with pytest.raises(ValidationError, match="not a sample"):
        store.pools.read_sample("p")
