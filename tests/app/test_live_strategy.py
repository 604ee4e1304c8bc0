"""AppTest: on the Judge page, the next document after a save is the pool's
strategy's choice (move-to-front here), and nothing on the page says why."""

from __future__ import annotations

import pytest
from app_helpers import DOCUMENTS, TOKENS, new_app, page_text, shown, sign_in

from workbench.types import RunInfo, Topic

# Run A ranks d1, d2, d3; run B ranks d4, d5, d6 (names that would give the game away if shown).
RUNS = {
    "run-A-secret": {"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}},
    "run-B-secret": {"1": {"d4": 3.0, "d5": 2.0, "d6": 1.0}},
}


@pytest.fixture
def mtf_store(tmp_path, monkeypatch):
    import streamlit as st

    from pooling.pool import build_pool
    from workbench.services.judging import assessments as svc
    from workbench.store import Store

    db = tmp_path / "labels" / "wb.duckdb"
    db.parent.mkdir()
    store = Store(db, client="seed", lock_timeout_s=60)
    store.collections.ingest_collection("toy", DOCUMENTS, [Topic("1", "laminar boundary layer flow")])
    version = store.collections.latest_collection_version("toy")
    for name, run in RUNS.items():
        store.runs.save_run(RunInfo(name, "imported", {}, 10, "toy", version), run)
    store.pools.save_pool("p1", build_pool(RUNS, 3), collection="toy", collection_version=version)
    store.users.add_user("lead", "lead", token=TOKENS["lead"])
    store.users.add_user("ann", "assessor", token=TOKENS["ann"], lead="lead")
    svc.assign_pool(store, svc.Session("lead", "lead"), "p1", ["ann"], strategy="mtf")
    store.release_file()
    monkeypatch.setenv("WORKBENCH_DB", str(db))
    monkeypatch.setenv("WORKBENCH_LOCK_TIMEOUT", "60")
    st.cache_resource.clear()
    yield db
    st.cache_resource.clear()


def test_the_next_document_follows_the_strategy_after_each_save(mtf_store):
    at = sign_in(new_app(), "ann")
    assert shown(at) == ("1", "d1")
    at.button(key="judge_grade_0").click().run()   # d1 not relevant: move-to-front leaves run A
    assert not at.exception
    assert shown(at) == ("1", "d4")                 # run B's first document, not A's d2
    at.button(key="judge_grade_2").click().run()   # d4 relevant: stay on run B
    assert shown(at) == ("1", "d5")
    text = page_text(at)
    for secret in ("run-A-secret", "run-B-secret", "mtf", "move-to-front", "strategy", "priority"):
        assert secret not in text
