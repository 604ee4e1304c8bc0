"""The Scoreboard's "Pipeline stages" section (issue 10): the same table as `workbench stages`, in AppTest.

Store (public API only): the scoreboard tests' toy collection, a candidate run
``bm25`` and its top-3 rerank ``bm25+ce`` (lineage: candidates bm25, depth 3,
reranker ce), qrels ``toy-v1``::

    toy-v1   t1: d1=2 d3=0 d5=1 d6=1   t2: d2=1 d6=0
    bm25     t1 = d1 d4 d3 d5   t2 = d2 d5 d6      bm25+ce  t1 = d4 d3 d1   t2 = d5 d2 d6
"""

from __future__ import annotations

import pytest
from app_helpers import DOCUMENTS, TOPICS, new_app, page_text, sign_in

from workbench.lineage import RunLineage
from workbench.types import RunInfo

TOKENS = {"lead": "lead-token-1"}
BM25 = {"1": {"d1": 4.0, "d4": 3.0, "d3": 2.0, "d5": 1.0}, "2": {"d2": 3.0, "d5": 2.0, "d6": 1.0}}
RERANK = {"1": {"d4": 3.0, "d3": 2.0, "d1": 1.0}, "2": {"d5": 3.0, "d2": 2.0, "d6": 1.0}}
V1 = {"1": {"d1": 2, "d3": 0, "d5": 1, "d6": 1}, "2": {"d2": 1, "d6": 0}}


@pytest.fixture
def stages_db(tmp_path, monkeypatch):
    import streamlit as st

    from workbench.store import Store

    db = tmp_path / "labels" / "wb.duckdb"
    db.parent.mkdir()
    store = Store(db, client="seed", lock_timeout_s=60)
    store.collections.ingest_collection("toy", DOCUMENTS, TOPICS)
    store.runs.save_run(RunInfo("bm25", "bm25", {}, 4, "toy"), BM25)
    store.runs.save_rerank_run(RunInfo("bm25+ce", "rerank", {}, 3, "toy"), RERANK,
                          RunLineage("bm25+ce", "bm25", 3, "ce", "cross-encoder", "ce-model", "ff" * 32))
    store.qrels.create_qrels_version("toy-v1", "toy", V1, origin="imported", rule="test")
    store.users.add_user("lead", "lead", token=TOKENS["lead"])
    monkeypatch.setenv("WORKBENCH_DB", str(db))
    monkeypatch.setenv("WORKBENCH_LOCK_TIMEOUT", "60")
    st.cache_resource.clear()
    st.cache_data.clear()
    yield db
    st.cache_resource.clear()
    st.cache_data.clear()


def test_the_scoreboard_shows_the_stage_rows_and_checks_of_a_rerank_run(stages_db):
    at = sign_in(new_app(), "lead", TOKENS["lead"])
    at.switch_page("app_pages/scoreboard.py").run()
    assert not at.exception, at.exception
    assert any(e.label.startswith("Pipeline stages of the rerank runs") for e in at.expander)
    assert not any("stage" in f.value.columns for f in at.dataframe)  # computed when opened (issue 26)
    at.session_state["scoreboard_stages_open"] = True
    at.run()
    frames = [f.value for f in at.dataframe]
    stages = next(f for f in frames if "stage" in f.columns)
    rows = {r["stage"]: r for r in stages.to_dict("records")}
    # By hand, topics 1 and 2: candidates' top 3 t1 = d1 d4 d3 (1 of {d1, d5, d6}), t2 = d2 d5 d6 (1 of {d2}).
    assert rows["R@3 [candidates: bm25]"]["macro"] == pytest.approx((1 / 3 + 1) / 2)
    assert rows["R@3 [final: bm25+ce]"]["macro"] == pytest.approx((1 / 3 + 1) / 2)
    assert rows["R@3 [candidates: bm25]"]["micro"] == pytest.approx(2 / 4)
    assert rows["R@10 [final: bm25+ce]"]["ceiling"] == pytest.approx(1.0)
    # R@10 of the candidates (all 4 returned): t1 {d1, d5} of 3, t2 {d2}.
    assert rows["R@10 [candidates: bm25]"]["macro"] == pytest.approx((2 / 3 + 1) / 2)
    checks = next(f for f in frames if "contribution" in f.columns).to_dict("records")[0]
    assert checks["pipeline"] == "bm25+ce" and checks["R@D unchanged"] == "yes" and checks["D"] == 3
    # contribution R@10 [final] - R@10 [candidates]: the rerank kept only 3, dropping d5 of topic 1.
    assert checks["contribution"] == pytest.approx((1 / 3 + 1) / 2 - (2 / 3 + 1) / 2)
    # stock R@3 - R@10 of the candidates (k > D here: negative by construction).
    assert checks["stock"] == pytest.approx((1 / 3 + 1) / 2 - (2 / 3 + 1) / 2)


def test_without_a_rerank_run_the_section_says_how_to_make_one(stages_db):
    at = sign_in(new_app(), "lead", TOKENS["lead"])
    at.switch_page("app_pages/scoreboard.py").run()
    at.multiselect(key="scoreboard_runs_toy").set_value(["bm25"]).run()
    at.session_state["scoreboard_stages_open"] = True
    at.run()
    assert not at.exception
    assert "No rerank run among the chosen runs" in page_text(at)
    assert not any("stage" in f.value.columns for f in at.dataframe)
