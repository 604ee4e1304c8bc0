"""The toy store of the `judgments import` tests: collection "toy" (d1, d2, d3, d9; topic 1), pool p1 of
run r (topic 1 pools d1, d2, d3), a lead "boss" (token boss-token) and an assessor "ann"; with ``child``,
also run r2 and its child (delta) pool p2 of p1, which pools d9."""

from __future__ import annotations

from pathlib import Path

from workbench.cli import main
from workbench.store import Store


def toy_store(folder: Path, *, child: bool = False) -> Path:
    """Build the toy store in ``folder``; returns its path (``folder/wb.duckdb``)."""
    from pooling.pool import build_pool
    from workbench.types import Document, RunInfo, Topic

    path = folder / "wb.duckdb"
    store = Store(path, client="seed")
    run = {"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    store.collections.ingest_collection("toy", [Document(d, "", f"text {d}") for d in ("d1", "d2", "d3", "d9")],
                            [Topic("1", "topic 1")])
    version = store.collections.latest_collection_version("toy")
    store.runs.save_run(RunInfo("r", "imported", {}, 10, "toy", version), run)
    store.pools.save_pool("p1", build_pool({"r": run}, 10), collection="toy", collection_version=version)
    if child:
        store.runs.save_run(RunInfo("r2", "imported", {}, 10, "toy", version), {"1": {"d9": 1.0}})
        store.pools.save_pool("p2", build_pool({"r2": {"1": {"d9": 1.0}}}, 10), collection="toy",
                        collection_version=version, parent_version="p1")
    for args in (["users", "add", "boss", "--role", "lead", "--token", "boss-token"],
                 ["users", "add", "ann", "--token", "ann-token-1", "--lead", "boss", "--lead-token", "boss-token"]):
        assert main(["--db", str(path), *args]) == 0
    return path


def two_topic_store(path: Path, doc_ids, run: dict[str, dict[str, float]]) -> Store:
    """The store of the model-assessor and pre-fill tests: collection "toy" (``doc_ids``; topics 1 and 2),
    run r (``run``), its pool p1, a lead "boss" (token boss-token) and an assessor "ann" (ann-token-1)."""
    from pooling.pool import build_pool
    from workbench.types import Document, RunInfo, Topic

    s = Store(path, client="test")
    s.collections.ingest_collection("toy", [Document(d, "", f"text of {d}") for d in doc_ids],
                                    [Topic("1", "topic one"), Topic("2", "topic two")])
    v = s.collections.latest_collection_version("toy")
    s.runs.save_run(RunInfo("r", "imported", {}, 10, "toy", v), run)
    s.pools.save_pool("p1", build_pool({"r": run}, 10), collection="toy", collection_version=v)
    s.users.add_user("boss", "lead", token="boss-token")
    s.users.add_user("ann", "assessor", token="ann-token-1", lead="boss")
    return s
