"""Shared seed for the judging CLI tests: a toy collection, one run and its pool ``p1``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from workbench.types import Document, RunInfo, Topic


@pytest.fixture
def toy_pool(tmp_path) -> Callable[[dict[str, dict[str, float]]], Path]:
    """toy_pool(run) -> db path: collection "toy" (the run's docs), run "r", pool "p1" at depth 10."""

    def _seed(run: dict[str, dict[str, float]]) -> Path:
        from pooling.pool import build_pool
        from workbench.store import Store

        path = tmp_path / "labels" / "wb.duckdb"
        store = Store(path, client="seed")
        docs = sorted({d for scores in run.values() for d in scores})
        store.collections.ingest_collection("toy", [Document(d, "", f"text {d[1:]}") for d in docs],
                                [Topic(t, f"topic {t}") for t in sorted(run)])
        version = store.collections.latest_collection_version("toy")
        store.runs.save_run(RunInfo("r", "imported", {}, 10, "toy", version), run)
        store.pools.save_pool("p1", build_pool({"r": run}, 10), collection="toy", collection_version=version)
        return path

    return _seed
