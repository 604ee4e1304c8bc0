"""Stored pools: round trip, immutability, lineage, judged documents, hand-computed extension."""

from __future__ import annotations

import pytest

from pooling.pool import build_pool, pool_statistics
from workbench.errors import DuplicateNameError, UnknownNameError, ValidationError
from workbench.services.runs.pooling import build_pool as build_service
from workbench.services.runs.pooling import extend_pool as extend_service
from workbench.types import Document, Judgment, RunInfo, Topic

A = {"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "2": {"d4": 1.0}}
B = {"1": {"d3": 5.0, "d5": 4.0, "d6": 0.5}, "2": {"d4": 2.0, "d5": 1.0}}
C = {"1": {"d6": 9.0, "d2": 8.0, "d7": 7.0, "d1": 6.0}, "2": {"d6": 3.0, "d7": 2.0, "d4": 1.0}}


def with_runs(store):
    """``store`` with collection ``toy`` (d1..d9, topics 1 and 2) and the runs A, B, C (also the sample pools' tests)."""
    docs = [Document(f"d{i}", "", f"text {i}") for i in range(1, 10)]
    store.collections.ingest_collection("toy", docs, [Topic("1", "first"), Topic("2", "second")])
    for name, run in (("A", A), ("B", B), ("C", C)):
        store.runs.save_run(RunInfo(name, "imported", {}, 10, "toy"), run)
    return store


@pytest.fixture
def toy(store):
    return with_runs(store)


def docs_of(entries) -> set[tuple[str, str]]:
    return {(e.topic_id, e.doc_id) for e in entries}


def test_stored_pool_round_trips_entries_provenance_and_hash(toy):
    pool = build_pool({"A": toy.runs.get_run("A"), "B": toy.runs.get_run("B")}, depth=2)
    info = toy.pools.save_pool("toy-pool-v1", pool, collection="toy",
                         collection_version=toy.collections.latest_collection_version("toy"))
    assert (info.depth, info.runs, info.parent_version, info.strategy) == (2, ("A", "B"), "", "depth-k union")
    assert (info.n_topics, info.n_entries, info.content_hash) == (2, 6, pool.content_hash)
    assert info.params == {"budget": None, "priority": {"method": "rrf", "k": 60.0, "depth": None}}
    assert toy.pools.pool_entries("toy-pool-v1") == list(pool.entries)
    assert toy.pools.pool_provenance("toy-pool-v1") == list(pool.provenance)
    assert toy.pools.get_pool("toy-pool-v1") == info and toy.pools.list_pools("toy") == [info]
    assert toy.pools.latest_pool("toy") == info
    s = toy.pools.pool_stats("toy-pool-v1")
    assert s == pool_statistics(pool.entries, pool.provenance, pool.runs)
    # t1: A {d1, d2}, B {d3, d5}; t2: A {d4}, B {d4, d5}
    assert docs_of(pool.entries) == {("1", "d1"), ("1", "d2"), ("1", "d3"), ("1", "d5"), ("2", "d4"), ("2", "d5")}
    assert toy.pools.pool_contributors("toy-pool-v1")["2"]["d4"] == {"A", "B"}


def test_pool_versions_are_immutable_and_validated(toy):
    version = toy.collections.latest_collection_version("toy")
    pool = build_pool({"A": toy.runs.get_run("A")}, depth=2)
    toy.pools.save_pool("p", pool, collection="toy", collection_version=version)
    with pytest.raises(DuplicateNameError, match="immutable"):
        toy.pools.save_pool("p", pool, collection="toy", collection_version=version)
    with pytest.raises(UnknownNameError, match="pool version"):
        toy.pools.save_pool("q", pool, collection="toy", collection_version=version, parent_version="nope")
    ghost = build_pool({"ghost": {"1": {"d1": 1.0}}}, depth=2)
    with pytest.raises(ValidationError, match="not a stored run"):
        toy.pools.save_pool("q", ghost, collection="toy", collection_version=version)
    with pytest.raises(UnknownNameError) as e:
        toy.pools.get_pool("nope")
    assert e.value.known == ["p"]
    assert toy.pools.list_pools() == [toy.pools.get_pool("p")]


def test_extension_child_holds_exactly_the_novel_documents(toy):
    root = build_service(toy.pools, toy.runs, ["A", "B"], depth=2)
    assert root.created and root.info.pool_version == "toy-pool-v1"
    toy.users.add_user("alice")
    toy.judgments.record_judgment(Judgment("2", "d6", "alice", 1), collection="toy")  # judged, never pooled
    ext = extend_service(toy.pools, toy.runs, toy.qrels, ["C"])  # latest pool, its depth (2)
    # C's top 2: t1 d6 (new), d2 (pooled); t2 d6 (judged), d7 (new)
    assert ext.parent == "toy-pool-v1" and ext.created
    assert ext.info is not None and ext.info.pool_version == "toy-pool-v2"
    assert ext.info.parent_version == "toy-pool-v1" and ext.info.runs == ("C",)
    assert docs_of(toy.pools.pool_entries("toy-pool-v2")) == {("1", "d6"), ("2", "d7")}
    assert ext.extension.novel == {"C": {"1": 1, "2": 1}}
    assert [(c.doc_id, c.run_name, c.rank) for c in toy.pools.pool_provenance("toy-pool-v2")] == [
        ("d6", "C", 1), ("d7", "C", 2)]
    assert toy.pools.pool_lineage("toy-pool-v2") == ["toy-pool-v1", "toy-pool-v2"]
    assert toy.pools.pool_documents("toy-pool-v2", with_ancestors=False) == {"1": {"d6"}, "2": {"d7"}}
    assert toy.pools.pool_documents("toy-pool-v2") == {"1": {"d1", "d2", "d3", "d5", "d6"}, "2": {"d4", "d5", "d7"}}
    assert toy.pools.latest_pool("toy").pool_version == "toy-pool-v2"
    # nothing left to add: no new version
    again = extend_service(toy.pools, toy.runs, toy.qrels, ["C"])
    assert again.info is None and not again.created and again.extension.novel_totals == {"C": 0}
    # deeper: C's top 3 adds t1 d7; t2's top 3 (d6 judged, d7 and d4 pooled) adds nothing
    deeper = extend_service(toy.pools, toy.runs, toy.qrels, ["C"], depth=3)
    assert deeper.info is not None and deeper.info.parent_version == "toy-pool-v2"
    assert docs_of(toy.pools.pool_entries(deeper.info.pool_version)) == {("1", "d7")}
    assert toy.pools.pool_lineage(deeper.info.pool_version) == ["toy-pool-v1", "toy-pool-v2", "toy-pool-v3"]


def test_unsure_judgments_do_not_count_as_judged_but_adjudications_do(toy):
    toy.users.add_user("alice")
    toy.judgments.record_judgment(Judgment("1", "d8", "alice", None, unsure=True), collection="toy")
    toy.judgments.record_judgment(Judgment("1", "d9", "alice", 0), collection="toy")
    assert toy.pools.judged_documents("toy") == {"1": {"d9"}}
    toy.users.add_user("lea", "lead")
    toy.adjudications.adjudicate("toy", "2", "d1", 1, lead="lea", rationale="test")
    assert toy.pools.judged_documents("toy") == {"1": {"d9"}, "2": {"d1"}}


def test_rebuilding_returns_the_stored_identical_pool(toy):
    first = build_service(toy.pools, toy.runs, ["B", "A"], depth=2)
    second = build_service(toy.pools, toy.runs, ["A", "B"], depth=2)
    assert not second.created and second.info == first.info
    named = build_service(toy.pools, toy.runs, ["A", "B"], depth=2, name="copy")
    assert named.created and named.info.content_hash == first.info.content_hash
    assert toy.pools.pool_entries("copy") == toy.pools.pool_entries(first.info.pool_version)
    assert toy.pools.next_pool_name("toy") == "toy-pool-v2"


def test_extension_needs_a_pool_and_one_collection_version(toy):
    with pytest.raises(ValidationError, match="no pool to extend"):
        extend_service(toy.pools, toy.runs, toy.qrels, ["C"])
    with pytest.raises(ValidationError, match="named twice"):
        build_service(toy.pools, toy.runs, ["A", "A"])
    with pytest.raises(UnknownNameError, match="run"):
        build_service(toy.pools, toy.runs, ["A", "nope"])


def _random_run_files(write, rng, sep_choices, n_runs=5):
    paths = []
    for r in range(n_runs):
        lines = []
        for topic in ("1", "2", "10", "t3"):
            for _ in range(rng.randrange(3, 40)):
                sep = rng.choice(sep_choices)
                score = rng.choice([1.0, 2.0, 2.5, round(rng.random(), 3)])  # ties and duplicates
                lines.append(sep.join([topic, "Q0", f"D{rng.randrange(40)}", str(rng.randrange(1, 99)),
                                       repr(score), f"run{r}"]))
        paths.append(write(f"r{r}.trec", "\n".join(lines) + "\n"))
    return paths


@pytest.mark.parametrize("seps", [(" ",), (" ", "\t", "  ")], ids=["single-space", "mixed-whitespace"])
@pytest.mark.parametrize("depth,budget", [(1, None), (5, None), (5, 3), (100, None)])
def test_bulk_file_pooling_equals_the_pure_pool_of_the_strict_reader(write, seps, depth, budget):
    import random

    from pooling.fusion import RRF
    from workbench.formats.trec import read_run
    from workbench.store.pools import pool_run_files

    paths = _random_run_files(write, random.Random(depth * 7 + len(seps)), seps)
    bulk = pool_run_files(paths, depth, budget=budget)
    pure = build_pool({p.stem: read_run(p).run for p in paths}, depth, priority=RRF(k=60.0), budget=budget)
    assert bulk.to_pool() == pure
    assert bulk.content_hash == pure.content_hash
    assert bulk.documents() == pure.documents() and bulk.n_entries == pure.n_entries


def test_bulk_file_pooling_handles_bom_and_crlf_and_reports_bad_lines(write):
    from workbench.errors import InputFormatError
    from workbench.store.pools import pool_run_files

    bom = write("bom.trec", b"\xef\xbb\xbf1 Q0 d1 1 2.0 t\r\n1 Q0 d2 2 1.0 t\r\n")
    pool = pool_run_files([bom], 10).to_pool()
    assert [(e.topic_id, e.doc_id) for e in pool.entries] == [("1", "d1"), ("1", "d2")]
    bad = write("bad.trec", "1 Q0 d1 1 2.0 t\n1 Q0 d2 x 1.0 t\n")
    with pytest.raises(InputFormatError, match=r"bad.trec:2: expected an integer rank"):
        pool_run_files([bom, bad], 10)
    empty = write("empty.trec", "")
    with pytest.raises(InputFormatError, match="empty file"):
        pool_run_files([empty], 10)


def test_stored_bulk_pool_round_trips(toy, write):
    from workbench.store.pools import pool_run_files

    a = write("A.trec", "1 Q0 d1 1 3.0 a\n1 Q0 d2 2 2.0 a\n2 Q0 d4 1 1.0 a\n")
    b = write("B.trec", "1 Q0 d3 1 5.0 b\n1 Q0 d5 2 4.0 b\n2 Q0 d4 1 2.0 b\n")
    columns = pool_run_files([a, b], 2)
    info = toy.pools.save_pool("bulk", columns, collection="toy", collection_version=toy.collections.latest_collection_version("toy"))
    assert info.content_hash == columns.content_hash
    assert toy.pools.pool_entries("bulk") == list(columns.to_pool().entries)
    assert toy.pools.pool_provenance("bulk") == list(columns.to_pool().provenance)
