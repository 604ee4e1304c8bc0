"""``workbench pool reusability`` and ``workbench pool bias`` on a stored pool."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.types import Document, RunInfo, Topic

RUNS = {
    "a": {"t1": {"d1": 2.0, "d2": 1.0}, "t2": {"d4": 1.0}},
    "b": {"t1": {"d2": 2.0, "d3": 1.0}, "t2": {"d5": 2.0, "d4": 1.0}},
}


@pytest.fixture
def db(tmp_path):
    from pooling.pool import build_pool
    from workbench.store import Store

    path = tmp_path / "wb.duckdb"
    store = Store(path, client="seed")
    store.collections.ingest_collection("toy", [Document(f"d{i}", "", f"text {i}") for i in range(1, 10)],
                            [Topic("t1", "one"), Topic("t2", "two")])
    v = store.collections.latest_collection_version("toy")
    for name, run in RUNS.items():
        store.runs.save_run(RunInfo(name, "imported", {}, 2, "toy", v), run)
    store.pools.save_pool("p1", build_pool(RUNS, 2), collection="toy", collection_version=v)
    store.qrels.create_qrels_version("pooled", "toy", {"t1": {"d1": 1, "d2": 1, "d3": 0}, "t2": {"d4": 0, "d5": 2}},
                               origin="imported", rule="", pool_version="p1")
    store.qrels.create_qrels_version("full", "toy", {"t1": {"d1": 1, "d2": 1, "d3": 0, "d9": 1},
                                               "t2": {"d4": 0, "d5": 2}}, origin="imported", rule="")
    return path


def test_pool_reusability_command(db, capsys):
    assert main(["--db", str(db), "pool", "reusability", "p1", "--qrels", "pooled", "--k", "2",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["measure"] == "R@2"
    b = out["runs"][1]
    assert (b["run"], b["unique_documents"], b["excluded_topics"], b["topics"]) == ("b", 2, ["t2"], 1)
    assert main(["--db", str(db), "pool", "reusability", "p1", "--qrels", "pooled", "--k", "2"]) == 0
    text = capsys.readouterr().out
    assert "Leave-one-run-out on pooled (R@2)" in text and "excluded" in text
    assert main(["--db", str(db), "pool", "reusability", "nope", "--qrels", "pooled"]) == 1
    assert "unknown pool version 'nope'" in capsys.readouterr().err


def test_pool_bias_command(db, capsys):
    assert main(["--db", str(db), "pool", "bias", "--pooled", "pooled", "--full", "full", "--k", "2",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["topics"] == 2
    a = out["runs"][0]
    # a on t1: pooled 2/2, full 2/3; t2: 0 and 0 -> pooled 0.5, full 1/3.
    assert a["pooled"] == pytest.approx(0.5) and a["full"] == pytest.approx(1 / 3)
    assert a["gap"] == pytest.approx(0.5 - 1 / 3)


def test_reusability_counts_unique_documents_of_the_pools_topics_and_documents_as_pool_stats(tmp_path, capsys):
    # CACM's trial: the runs cover 64 topics, the pool (`--topics judged`) fewer; reusability counted the
    # runs' unique top-depth documents over every topic (571/591/228) where pool stats said 470/500/199.
    from pooling.fusion import RRF
    from pooling.pool import build_pool
    from workbench.store import Store

    runs = {
        "a": {"t1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "t2": {"d4": 2.0, "d6": 1.0}, "t3": {"d7": 2.0, "d8": 1.0}},
        "b": {"t1": {"d2": 3.0, "d9": 2.0}, "t2": {"d5": 2.0, "d4": 1.0}, "t3": {"d8": 2.0, "d9": 1.0}},
    }
    path = tmp_path / "wb.duckdb"
    store = Store(path, client="seed")
    store.collections.ingest_collection("toy", [Document(f"d{i}", "", f"text {i}") for i in range(1, 10)],
                            [Topic("t1", "one"), Topic("t2", "two"), Topic("t3", "three")])
    v = store.collections.latest_collection_version("toy")
    for name, run in runs.items():
        store.runs.save_run(RunInfo(name, "imported", {}, 3, "toy", v), run)
    # pooled at depth 2 over t1 and t2 only, at most 2 documents a topic (RRF priority, k = 60):
    # t1: d2 (a 2, b 1: 1/62 + 1/61) and d1 (a 1: 1/61) are kept, d9 (b 2: 1/62) is cut by the budget;
    # t2: d4 (a 1, b 2) and d5 (b 1: 1/61) kept, d6 (a 2: 1/62) cut.
    on_pool = {n: {t: r[t] for t in ("t1", "t2")} for n, r in runs.items()}
    store.pools.save_pool("p1", build_pool(on_pool, 2, priority=RRF(k=60), budget=2), collection="toy",
                    collection_version=v)
    assert store.pools.pool_documents("p1") == {"t1": {"d1", "d2"}, "t2": {"d4", "d5"}}
    store.qrels.create_qrels_version("q", "toy", {"t1": {"d1": 1, "d2": 1}, "t2": {"d4": 0, "d5": 2}}, origin="imported",
                               rule="", pool_version="p1")
    # unique to a: d1 (t1); unique to b: d5 (t2). Not counted: t3 (not a pool topic: a's d7, b's d9),
    # d9 of t1 and d6 of t2 (not in the pool).
    assert main(["--db", str(path), "pool", "reusability", "p1", "--qrels", "q", "--k", "2", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["runs"]
    assert {r["run"]: r["unique_documents"] for r in rows} == {"a": 1, "b": 1}
    assert {r["run"]: r["unique_relevant"] for r in rows} == {"a": 1, "b": 1}
    assert main(["--db", str(path), "pool", "stats", "p1", "--format", "jsonl"]) == 0
    stats = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {r["run"]: r["unique"] for r in stats} == {"a": 1, "b": 1}
