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
