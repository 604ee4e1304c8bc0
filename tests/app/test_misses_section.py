"""The Scoreboard's "Why runs miss" section (issue 13): counts per cause per run and the list filtered by cause.

Store (public API only): the app tests' toy collection (``app_helpers.DOCUMENTS``), qrels ``toy-v1``::

    t1 "laminar boundary layer flow": d1=2 d5=1 ghost=1      t2 "shock waves supersonic": d2=1 d4=1 d6=1

Runs (default analyser: Lucene stop words, no stemming)::

    bm25   t1 = d1 d4 d3 d2 d6 d5 (d5 at rank 6)   t2 = d2
    dense  t1 = d4 d1                              t2 = d5 d2

At k = 5, bm25 misses ghost (not in the collection: not indexed), d5 (rank 6: found deeper), t2's d4 and d6
(no query term: vocabulary mismatch). dense misses ghost, t1's d5 ("wing flutter ... transonic speed": no
query term), t2's d4 and d6. Both lists are closed (residue 0).
"""

from __future__ import annotations

import pytest
from app_helpers import DOCUMENTS, TOPICS, new_app, sign_in

from workbench.types import RunInfo

TOKENS = {"lead": "lead-token-1"}
BM25 = {"1": {"d1": 6.0, "d4": 5.0, "d3": 4.0, "d2": 3.0, "d6": 2.0, "d5": 1.0}, "2": {"d2": 1.0}}
DENSE = {"1": {"d4": 0.9, "d1": 0.8}, "2": {"d5": 0.7, "d2": 0.6}}
V1 = {"1": {"d1": 2, "d5": 1, "ghost": 1}, "2": {"d2": 1, "d4": 1, "d6": 1}}


@pytest.fixture
def misses_db(tmp_path, monkeypatch):
    import streamlit as st

    from workbench.store import Store

    db = tmp_path / "labels" / "wb.duckdb"
    db.parent.mkdir()
    store = Store(db, client="seed", lock_timeout_s=60)
    store.collections.ingest_collection("toy", DOCUMENTS, TOPICS)
    store.runs.save_run(RunInfo("bm25", "imported", {}, 6, "toy"), BM25)
    store.runs.save_run(RunInfo("dense", "imported", {}, 2, "toy"), DENSE)
    store.qrels.create_qrels_version("toy-v1", "toy", V1, origin="imported", rule="test")
    store.users.add_user("lead", "lead", token=TOKENS["lead"])
    store.release_file()
    monkeypatch.setenv("WORKBENCH_DB", str(db))
    monkeypatch.setenv("WORKBENCH_LOCK_TIMEOUT", "60")
    st.cache_resource.clear()
    st.cache_data.clear()
    yield db
    st.cache_resource.clear()
    st.cache_data.clear()


def _frame(at, column):
    """The section's table holding ``column`` (residue: the counts; evidence: the list)."""
    return next(f.value for f in at.dataframe if column in f.value.columns)


def test_the_scoreboard_counts_misses_by_cause_and_filters_the_list(misses_db):
    at = sign_in(new_app(), "lead", TOKENS["lead"])
    at.switch_page("app_pages/scoreboard.py").run()
    assert not at.exception, at.exception
    assert any(e.label.startswith("Why runs miss: misses by cause") for e in at.expander)
    assert not any("residue" in f.value.columns for f in at.dataframe)  # computed when opened (issue 26)
    at.session_state["scoreboard_misses_open"] = True  # the lead opens the section
    at.run()
    at.selectbox(key="scoreboard_misses_k").set_value(5).run()
    assert not at.exception, at.exception
    counts = {r["run"]: r for r in _frame(at, "residue").to_dict("records")}
    assert {c: counts["bm25"][c] for c in ("not indexed", "filtered out", "chunk boundary", "found deeper",
                                            "vocabulary mismatch", "uncategorised", "total", "residue")} == {
        "not indexed": 1, "filtered out": 0, "chunk boundary": 0, "found deeper": 1, "vocabulary mismatch": 2,
        "uncategorised": 0, "total": 4, "residue": 0}
    assert counts["bm25"]["closed"] == "yes"
    assert (counts["dense"]["not indexed"], counts["dense"]["vocabulary mismatch"], counts["dense"]["total"]) == (
        1, 3, 4)
    at.selectbox(key="scoreboard_misses_run").set_value("bm25").run()
    at.selectbox(key="scoreboard_misses_cause").set_value("vocabulary mismatch").run()
    rows = _frame(at, "evidence").to_dict("records")
    assert sorted((r["topic"], r["document"]) for r in rows) == [("2", "d4"), ("2", "d6")]
    assert rows[0]["evidence"].startswith("query: shock waves supersonic; document: ")
    at.selectbox(key="scoreboard_misses_cause").set_value("found deeper").run()
    rows = _frame(at, "evidence").to_dict("records")
    assert [(r["document"], r["rank"], r["evidence"]) for r in rows] == [("d5", "6", "rank 6 (depth 6)")]
    # at k = 20 bm25 finds d5: three misses left
    at.selectbox(key="scoreboard_misses_k").set_value(20).run()
    counts = {r["run"]: r for r in _frame(at, "residue").to_dict("records")}
    assert counts["bm25"]["total"] == 3 and counts["bm25"]["found deeper"] == 0


def test_a_lead_sets_a_cause_from_the_section_and_the_counts_follow(misses_db):
    from workbench.store import Store

    at = sign_in(new_app(), "lead", TOKENS["lead"])
    at.switch_page("app_pages/scoreboard.py").run()
    at.session_state["scoreboard_misses_open"] = True
    at.run()
    at.selectbox(key="scoreboard_misses_k").set_value(5).run()
    at.selectbox(key="scoreboard_misses_run").set_value("bm25").run()
    at.selectbox(key="scoreboard_misses_cause").set_value("vocabulary mismatch").run()
    at.selectbox(key="scoreboard_misses_pick").set_value("2 · d6")  # in a form: sent on submit
    at.selectbox(key="scoreboard_misses_new_cause").set_value("not indexed")
    at.text_input(key="scoreboard_misses_note").input("d6 is a stub record, never indexed in production")
    next(b for b in at.button if b.label == "Save cause").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    counts = {r["run"]: r for r in _frame(at, "residue").to_dict("records")}
    assert (counts["bm25"]["not indexed"], counts["bm25"]["vocabulary mismatch"], counts["bm25"]["set by lead"]) == (
        2, 1, 1)
    store = Store(misses_db, client="check")
    [(decision, _)] = store.misses.miss_cause_history("bm25", "toy-v1", "2", "d6")
    assert (decision.cause, decision.lead, decision.note) == (
        "not indexed", "lead", "d6 is a stub record, never indexed in production")
