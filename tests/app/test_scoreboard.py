"""Scoreboard and qrels-versions: the services against hand-computed values and
pytrec_eval, then the two lead pages in AppTest (the displayed numbers), and an
assessor who cannot reach them.

The store (no SQL, public API only): collection ``toy`` (documents d1-d6,
topics 1-3), runs ``bm25`` and ``dense`` (every topic) and ``partial`` (topic 1
only, so topic 2 is ``empty``), and three qrels versions::

    toy-ref (imported, no parent)
    toy-v1            t1: d1=2 d3=0 d5=1 d6=1   t2: d2=1 d6=0      t3: d6=0 (|R| = 0)
    toy-v2 (parent v1) t1: d1=2 d3=1 d4=1 d5=1 d6=1   t2: d2=1 d5=2   t3: d6=0
      -> added (t1,d4) (t2,d5); changed (t1,d3) 0->1; removed (t2,d6)

Rankings (score desc): bm25 t1 = d1 d4 d3, t2 = d2 d5; dense t1 = d4 d1 d6,
t2 = d5 d2; partial t1 = d5 d6 d2.
"""

from __future__ import annotations

import math

import pytest
from app_helpers import DOCUMENTS, TOPICS, new_app, page_text, sign_in

from workbench.types import RunInfo, Topic

COLLECTION = "toy"
TOKENS = {"lead": "lead-token-1", "ann": "ann-token-1"}
RUNS = {
    "bm25": {"1": {"d1": 3.0, "d4": 2.0, "d3": 1.0}, "2": {"d2": 3.0, "d5": 2.0}, "3": {"d6": 1.0}},
    "dense": {"1": {"d4": 0.9, "d1": 0.8, "d6": 0.1}, "2": {"d5": 0.7, "d2": 0.6}, "3": {"d1": 0.5}},
    "partial": {"1": {"d5": 1.0, "d6": 0.5, "d2": 0.1}},
}
V1 = {"1": {"d1": 2, "d3": 0, "d5": 1, "d6": 1}, "2": {"d2": 1, "d6": 0}, "3": {"d6": 0}}
V2 = {"1": {"d1": 2, "d3": 1, "d4": 1, "d5": 1, "d6": 1}, "2": {"d2": 1, "d5": 2}, "3": {"d6": 0}}
REF = {"1": {"d1": 1}, "2": {"d2": 1}}

# R@20 (= R@k for every k >= 3 here) by hand: hits / |R| per topic, mean over topics 1 and 2.
R20_V1 = {"bm25": (1 / 3 + 1 / 1) / 2, "dense": (2 / 3 + 1 / 1) / 2}
R20_V2 = {"bm25": (3 / 5 + 2 / 2) / 2, "dense": (3 / 5 + 2 / 2) / 2}


def _seed(db) -> None:
    from workbench.store import Store

    store = Store(db, client="seed", lock_timeout_s=60)
    store.collections.ingest_collection(COLLECTION, DOCUMENTS, [*TOPICS, Topic("3", "wing flutter")])
    for name, run in RUNS.items():
        store.runs.save_run(RunInfo(name, "imported", {}, 10, COLLECTION, ""), run)
    store.qrels.create_qrels_version("toy-ref", COLLECTION, REF, origin="imported", rule="test")
    store.qrels.create_qrels_version("toy-v1", COLLECTION, V1, origin="imported", rule="test")
    store.qrels.create_qrels_version("toy-v2", COLLECTION, V2, origin="imported", rule="test", parent_version="toy-v1")
    store.users.add_user("lead", "lead", token=TOKENS["lead"])
    store.users.add_user("ann", "assessor", token=TOKENS["ann"], lead="lead")


@pytest.fixture
def board_db(tmp_path, monkeypatch):
    """The store above, with WORKBENCH_DB pointing at it; caches cleared around the test."""
    import streamlit as st

    db = tmp_path / "labels" / "wb.duckdb"
    db.parent.mkdir()
    _seed(db)
    monkeypatch.setenv("WORKBENCH_DB", str(db))
    monkeypatch.setenv("WORKBENCH_LOCK_TIMEOUT", "60")
    st.cache_resource.clear()
    st.cache_data.clear()
    yield db
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture
def store(board_db):
    from workbench.store import Store

    return Store(board_db, client="pytest", lock_timeout_s=60)


# -- services ---------------------------------------------------------------------

def _trec(qrels, run, measures):
    import pytrec_eval

    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


def test_scoreboard_matches_pytrec_eval_per_topic_and_macro(store):
    from workbench.services.evaluation.scoreboard import scoreboard

    board = scoreboard(store, "toy-v1", run_names=["bm25", "dense"], missing="exclude")
    assert board.runs == ("bm25", "dense") and board.missing == "exclude"
    assert board.topics == ("1", "2") and board.excluded_topics == ("3",) and board.missing_by_run == {}
    oracle_measures = {"recall_5", "recall_10", "recall_20", "recall_50", "recall_100", "P_10", "ndcg_cut_10"}
    for run in ("bm25", "dense"):
        e = board.evaluations[run]
        # topic 3 has |R| = 0: left out of the oracle's mean as it is of ours
        oracle = _trec({t: V1[t] for t in ("1", "2")}, {t: RUNS[run][t] for t in ("1", "2")}, oracle_measures)
        for ours, theirs in [("R@5", "recall_5"), ("R@10", "recall_10"), ("R@20", "recall_20"),
                             ("R@50", "recall_50"), ("R@100", "recall_100"), ("P@10", "P_10"),
                             ("nDCG@10", "ndcg_cut_10")]:
            for t in ("1", "2"):
                assert e.value(ours, t) == pytest.approx(oracle[t][theirs])
            assert board.value(run, ours) == pytest.approx((oracle["1"][theirs] + oracle["2"][theirs]) / 2)
        assert board.value(run, "R@20") == pytest.approx(R20_V1[run])
    # micro R@20 = all hits / all relevant; ceiling min(20, |R|) / |R| = 1 for both topics
    assert board.value("bm25", "R@20", "micro") == pytest.approx((1 + 1) / (3 + 1))
    assert board.value("dense", "R@20", "micro") == pytest.approx((2 + 1) / (3 + 1))
    assert board.value("bm25", "R@20", "ceiling") == pytest.approx(1.0)
    # RR@10: first relevant at rank 1 (bm25: d1, d2); dense: t1 d1 at 2, t2 d2 at 2
    assert board.value("bm25", "RR@10") == pytest.approx((1 / 1 + 1 / 1) / 2)
    assert board.value("dense", "RR@10") == pytest.approx((1 / 2 + 1 / 2) / 2)
    # pool-novel within 20: bm25 t1 d4, t2 d5; dense t1 d4, t2 d5 (topic 3 is not evaluated)
    assert board.value("bm25", "Judged@20", "pool-novel") == 2
    assert board.value("dense", "Judged@20", "pool-novel") == 2
    assert board.value("bm25", "Judged@5") == pytest.approx((2 / 3 + 1 / 2) / 2)  # judged / returned
    # the display tables carry the same full-precision numbers
    row = {r["run"]: r for r in board.measure_table()}
    assert row["dense"]["R@20"] == board.value("dense", "R@20") and row["dense"]["R@20 ceiling"] == 1.0
    assert list(row["bm25"])[:5] == ["run", "R@5", "R@5 ceiling", "R@10", "R@10 ceiling"]
    nov = {r["run"]: r for r in board.novelty_table()}
    assert nov["bm25"]["pool-novel@20"] == 2 and nov["bm25"]["Judged@5"] == board.value("bm25", "Judged@5")
    bounds = {r["run"]: r for r in board.bounds_table()}
    assert bounds["bm25"]["R@20 optimistic"] == pytest.approx(
        ((1 + 1) / (3 + 1) + (1 + 1) / (1 + 1)) / 2)  # (hits + u) / (|R| + u)


def test_run_coverage_reads_statuses_only_and_equals_the_evaluators(store, monkeypatch):
    """Issue 26: the Scoreboard's run picker knew each run's topics by loading every run whole; it
    reads the per-topic statuses now. Oracle: Evaluator.missing_topics on the loaded runs."""
    from workbench.scoring.evaluate import Evaluator
    from workbench.services.evaluation.load import load_run
    from workbench.services.evaluation.scoreboard import board_measures, run_coverage

    version = store.collections.latest_collection_version(COLLECTION)
    # topic 2 failed (an error, no results); topic 3 empty; topic 1 answered
    store.runs.save_run(RunInfo("flaky", "imported", {}, 10, COLLECTION, version), {"1": {"d2": 1.0}},
                        statuses={"2": "error", "3": "empty"}, messages={"2": "timeout"})
    store.qrels.create_qrels_version("toy-neg", COLLECTION, {"1": {"d1": -1, "d2": 0}, "2": {"d2": 1}, "3": {"d6": 2}},
                                     origin="imported", rule="test")
    names = ["bm25", "dense", "partial", "flaky"]
    expected = {}
    for version_name in ("toy-v1", "toy-v2", "toy-ref", "toy-neg"):
        evaluator = Evaluator(store.qrels.get_qrels(version_name), board_measures((5, 10)), missing="exclude")
        for name in names:
            ref, ranked = load_run(name, lambda: store)
            expected[version_name, name] = evaluator.missing_topics(ranked, ref.failed_topics)
    monkeypatch.setattr(type(store.runs), "run_entries_arrow", lambda *a, **k: pytest.fail("a run was read whole"))
    got = {}
    for version_name in ("toy-v1", "toy-v2", "toy-ref", "toy-neg"):
        for c in run_coverage(store, version_name, names):
            got[version_name, c.run] = c.missing
            assert c.n_covered == c.n_topics - len(c.missing) and c.complete == (not c.missing)
    assert got == expected
    assert got["toy-v1", "partial"] == ("2",) and got["toy-neg", "flaky"] == ("2", "3")   # t1: no grade >= 1
    assert got["toy-neg", "bm25"] == () and got["toy-v1", "flaky"] == ("2",)              # t3 of v1: |R| = 0


def test_ceiling_and_pool_novel_at_small_cutoffs(store):
    from workbench.services.evaluation.scoreboard import scoreboard

    board = scoreboard(store, "toy-v1", run_names=["bm25", "dense"], cutoffs=(1, 2))
    assert board.cutoffs == (1, 2)
    assert board.value("bm25", "R@1", "ceiling") == pytest.approx((1 / 3 + 1 / 1) / 2)  # min(1, |R|) / |R|
    assert board.value("bm25", "R@1") == pytest.approx((1 / 3 + 1) / 2)  # d1, d2 at rank 1
    assert board.value("dense", "R@1") == 0.0  # d4 unjudged, d5 unjudged
    assert board.value("dense", "Judged@1", "pool-novel") == 2
    assert board.value("bm25", "Judged@1", "pool-novel") == 0


def test_missing_topic_policies(store):
    from workbench.errors import MissingTopicsError
    from workbench.services.evaluation.scoreboard import scoreboard

    assert store.runs.get_run_statuses("partial")["2"] == "empty"
    ex = scoreboard(store, "toy-v1", missing="exclude")  # every run of the collection
    assert ex.runs == ("bm25", "dense", "partial")
    assert ex.missing_by_run == {"partial": ("2",)} and ex.missing_topics == ("2",)
    assert ex.topics == ("1",)  # one topic set for every run
    assert ex.value("bm25", "R@20") == pytest.approx(1 / 3)
    assert ex.value("partial", "R@20") == pytest.approx(2 / 3)  # d5, d6 of {d1, d5, d6}
    zero = scoreboard(store, "toy-v1", missing="zero")
    assert zero.topics == ("1", "2") and zero.missing_by_run == {"partial": ("2",)}
    assert zero.value("partial", "R@20") == pytest.approx((2 / 3 + 0) / 2)
    assert zero.value("bm25", "R@20") == pytest.approx(R20_V1["bm25"])
    with pytest.raises(MissingTopicsError, match=r"'partial' has no results for 1 qrels topic\(s\): 2"):
        scoreboard(store, "toy-v1", missing="fail")


def test_version_changes_from_parent(store):
    from workbench.services.evaluation.scoreboard import scoreboard, version_changes

    assert version_changes(store, "toy-v1") == []  # no parent
    changes = version_changes(store, "toy-v2", run_names=["bm25", "dense"])
    by = {(c.run, c.measure): c for c in changes}
    assert len(changes) == 2 * 13  # 5 R@k, nDCG@10, RR@10, P@10, 5 Judged@k
    for run in ("bm25", "dense"):
        c = by[(run, "R@20")]
        assert c.parent_value == pytest.approx(R20_V1[run]) and c.value == pytest.approx(R20_V2[run])
        assert c.delta == pytest.approx(R20_V2[run] - R20_V1[run])
        assert (c.parent_n_topics, c.n_topics) == (2, 2)
    assert by[("bm25", "R@20")].delta == pytest.approx(0.8 - 2 / 3)
    assert by[("dense", "R@20")].delta == pytest.approx(0.8 - 5 / 6)
    # Judged@20 rises for bm25: d4 and d5 were judged in v2, d6 of topic 2 removed (not returned)
    assert by[("bm25", "Judged@20")].delta == pytest.approx((3 / 3 + 2 / 2) / 2 - (2 / 3 + 1 / 2) / 2)
    # the values are the scoreboards' values
    v2 = scoreboard(store, "toy-v2", run_names=["bm25", "dense"])
    assert by[("dense", "nDCG@10")].value == v2.value("dense", "nDCG@10")


def test_topic_drilldown_misses_and_unjudged(store):
    from workbench.errors import ValidationError
    from workbench.services.evaluation.scoreboard import (
        document_titles,
        scoreboard,
        topic_drilldown,
    )

    v1 = scoreboard(store, "toy-v1", run_names=["bm25", "dense"])
    d = topic_drilldown(v1.evaluations["bm25"], "1", 5)
    assert (d.n_relevant, d.n_found, d.recall) == (3, 1, 1 / 3)
    assert sorted((m.doc_id, m.grade, m.rank) for m in d.misses) == [("d5", 1, None), ("d6", 1, None)]
    assert d.unjudged == [(2, "d4")]
    v2 = scoreboard(store, "toy-v2", run_names=["bm25", "dense"])
    d = topic_drilldown(v2.evaluations["bm25"], "1", 2)
    assert (d.n_relevant, d.n_found) == (5, 2)  # d1, d4 within 2
    assert sorted((m.doc_id, m.rank) for m in d.misses) == [("d3", 3), ("d5", None), ("d6", None)]
    assert d.unjudged == []
    assert topic_drilldown(v2.evaluations["dense"], "2", 1).unjudged == []  # d5 judged in v2
    with pytest.raises(ValidationError, match=r"topic '3' \(\|R\| = 0 in the qrels\)"):
        topic_drilldown(v1.evaluations["bm25"], "3", 5)
    for k in (0, 101):
        with pytest.raises(ValidationError, match=r"expected a cutoff k in 1\.\.100"):
            topic_drilldown(v1.evaluations["bm25"], "1", k)
    assert document_titles(store, COLLECTION, ["d4", "nope"]) == {"d4": "Heat transfer",
                                                                  "nope": "(not in the collection)"}


def test_lineage(store):
    from workbench.services.evaluation.scoreboard import lineage_chains, qrels_lineage

    assert qrels_lineage(store, "toy-v2") == ["toy-v1", "toy-v2"]
    assert lineage_chains(store.qrels.list_qrels_versions()) == [["toy-ref"], ["toy-v1", "toy-v2"]]


def test_service_doctests():
    import doctest

    import workbench.services.evaluation.scoreboard as mod

    result = doctest.testmod(mod)
    assert result.attempted >= 3 and result.failed == 0


# -- pages (AppTest) ----------------------------------------------------------------

def _lead(page: str):
    at = sign_in(new_app(), "lead", TOKENS["lead"])
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def test_the_first_visit_computes_only_what_it_shows(board_db, monkeypatch):
    """Issue 26 (first visit 6.7 s on an idle machine): each run's entries are read once (the run picker
    reads statuses only), the recall chart is made without altair, and the misses by cause and the
    pipeline stages are computed when their section is opened, not before."""
    import workbench.reports.charts as charts
    import workbench.services.evaluation.misses as misses
    import workbench.services.runs.stages as stages
    from workbench.store.runs import Runs

    calls: list[str] = []
    reads: list[str] = []
    real_misses, real_stages, real_read = misses.scoreboard_misses, stages.stage_reports, Runs.run_entries_arrow
    monkeypatch.setattr(misses, "scoreboard_misses", lambda *a, **k: calls.append("misses") or real_misses(*a, **k))
    monkeypatch.setattr(stages, "stage_reports", lambda *a, **k: calls.append("stages") or real_stages(*a, **k))
    monkeypatch.setattr(charts, "recall_curve_chart", lambda *a, **k: pytest.fail("altair chart built"))
    monkeypatch.setattr(Runs, "run_entries_arrow", lambda self, name: reads.append(name) or real_read(self, name))
    at = _lead("scoreboard")
    assert at.dataframe[0].value["run"].tolist()[:2] == ["bm25", "dense"]   # the board is shown
    assert len(at.get("vega_lite_chart")) == 1                               # and the recall chart
    assert calls == [] and sorted(reads) == ["bm25", "dense", "partial"]     # partial: scored apart, once
    labels = [e.label for e in at.expander]
    assert any(x.startswith("Why runs miss") for x in labels) and any(x.startswith("Pipeline stages") for x in labels)
    at.session_state["scoreboard_misses_open"] = True
    at.run()
    assert not at.exception and calls == ["misses"]
    at.session_state["scoreboard_stages_open"] = True
    at.run()
    assert not at.exception and calls == ["misses"]  # no rerank run among bm25, dense: nothing to compute
    assert "No rerank run among the chosen runs" in page_text(at)


def test_scoreboard_page_shows_the_numbers(board_db):
    from workbench.store import Store

    at = _lead("scoreboard")
    assert [t.value for t in at.title] == ["Scoreboard"]
    assert at.selectbox(key="scoreboard_qrels_pick").value == "toy-v2"  # newest by default
    at.selectbox(key="scoreboard_qrels_pick").set_value("toy-v1").run()
    # the complete runs by default; partial (topic 1 of the evaluated 1, 2) apart, on its own topics
    assert at.multiselect(key="scoreboard_runs_toy").value == ["bm25", "dense"]
    text = page_text(at)
    assert "missing-topic policy: **exclude**" in text
    assert "**2 evaluated**" in text and "No selected run misses a topic" in text
    info = Store(board_db, client="pytest").qrels.get_qrels_info("toy-v1")
    assert info.content_hash[:12] in text and "columnar-numpy" in text  # lineage: hash and evaluator
    table = at.dataframe[0].value.set_index("run")
    for run, value in R20_V1.items():
        assert round(table.loc[run, "R@20"], 4) == round(value, 4)
    assert table.loc["ceiling min(k,|R|)/|R|", "R@20"] == 1.0  # the ceiling row
    assert list(table.columns) == ["R@5", "R@10", "R@20", "R@50", "R@100", "nDCG@10", "RR@10", "P@10",
                                   "pool contributor"]
    micro = at.dataframe[1].value.set_index("run")
    assert round(micro.loc["dense", "R@20"], 4) == round(3 / 4, 4)
    apart = at.dataframe[2].value.set_index("run")
    assert apart.loc["partial", "topics covered"] == "1 of 2"
    assert round(apart.loc["partial", "R@20"], 4) == round(2 / 3, 4)  # on topic 1 only: d5, d6 of {d1, d5, d6}
    novelty = at.dataframe[3].value.set_index("run")
    assert list(novelty.loc["bm25", [f"pool-novel@{k}" for k in (5, 10, 20, 50, 100)]]) == [2, 2, 2, 2, 2]
    (chart,) = at.get("vega_lite_chart")
    import json

    import pyarrow as pa

    data = pa.ipc.open_stream(chart.proto.data.data).read_all().to_pydict()  # the chart's rows (Arrow IPC)
    assert set(data["run"]) == {"bm25", "dense", "ceiling min(k,|R|)/|R|"}
    spec = json.loads(chart.proto.spec)
    x_scale = spec["encoding"]["x"]["scale"]  # explicit domain: no infinite extent, no zero on the log scale
    assert x_scale == {"domain": [1, 3], "type": "log"}  # k = 1 .. the deepest curve (3 documents)

    bounds = at.dataframe[4].value.set_index("run")
    assert round(bounds.loc["bm25", "R@20 optimistic"], 4) == round((2 / 4 + 2 / 2) / 2, 4)

    # drill-down: bm25, topic 1, k = 5 on v1
    at.selectbox(key="scoreboard_drill_run").set_value("bm25")
    at.selectbox(key="scoreboard_drill_topic").set_value("1")
    at.selectbox(key="scoreboard_drill_k").set_value(5).run()
    assert not at.exception
    frames = [f.value for f in at.dataframe]  # found by their columns: sections may come before the drill-down
    at_misses = next(i for i, f in enumerate(frames) if "rank in run" in f.columns)
    misses = frames[at_misses]
    assert sorted(misses["document"]) == ["d5", "d6"] and set(misses["rank in run"]) == {"not retrieved"}
    assert set(misses["title"]) == {"Wing flutter", "Unrelated"} and set(misses["grade"]) == {1}
    unjudged = frames[at_misses + 1]
    assert unjudged.to_dict("records") == [{"rank": 2, "document": "d4", "title": "Heat transfer"}]
    assert [m.value for m in at.metric][:4] == [f"{1 / 3:.4f}", "3", "1", "1"]


def test_a_partial_run_never_shrinks_the_others_topic_set_without_a_confirmation(board_db):
    at = _lead("scoreboard")
    at.selectbox(key="scoreboard_qrels_pick").set_value("toy-v1").run()
    at.multiselect(key="scoreboard_runs_toy").set_value(["bm25", "dense", "partial"]).run()
    assert not at.exception
    assert "Partial run(s) selected: partial (1 of 2)" in at.warning[0].value
    assert "over the 1 topics they all cover instead of 2" in at.warning[0].value
    assert not at.dataframe  # blocked: no table until confirmed
    at.checkbox(key="scoreboard_confirm_shrink").check().run()
    text = page_text(at)
    assert "**1 evaluated**" in text and "**partial**: 1 topic(s): 2" in text
    table = at.dataframe[0].value.set_index("run")
    assert round(table.loc["bm25", "R@20"], 4) == round(1 / 3, 4)  # topic 1 only, as asked
    at.radio(key="scoreboard_missing").set_value("zero").run()  # zero: no shrinking, no confirmation
    assert "**2 evaluated**" in page_text(at)
    table = at.dataframe[0].value.set_index("run")
    assert round(table.loc["bm25", "R@20"], 4) == round(R20_V1["bm25"], 4)
    assert round(table.loc["partial", "R@20"], 4) == round((2 / 3 + 0) / 2, 4)


def test_scoreboard_fail_policy_says_it_in_the_pages_terms(board_db):
    at = _lead("scoreboard")
    at.multiselect(key="scoreboard_runs_toy").set_value(["bm25", "partial"]).run()
    at.radio(key="scoreboard_missing").set_value("fail").run()
    assert not at.exception
    err = at.error[0].value
    assert "run partial has no results for 1 evaluated topic(s) (2)" in err
    assert "Choose **exclude** or **zero** under Missing topics" in err and "--missing" not in err


def _frame(at, first_column: str, having: str | None = None):
    """The page's dataframe whose first column is ``first_column`` (and that has column ``having``),
    indexed by it (None if not shown)."""
    found = [f.value for f in at.dataframe if list(f.value.columns)[:1] == [first_column]
             and (having is None or having in f.value.columns)]
    return found[0].set_index(first_column) if found else None


def _changes(at):
    """The Qrels versions page's score changes, runs x measures (Judged@k and partial runs apart), or None."""
    found = [f.value for f in at.dataframe if list(f.value.columns)[:1] == ["run"] and "R@20" in f.value.columns
             and "topics covered" not in f.value.columns]
    return found[0].set_index("run") if found else None


def _judged(at):
    """The Qrels versions page's Judged@k changes, runs x Judged@k."""
    found = [f.value for f in at.dataframe if list(f.value.columns)[:1] == ["run"] and "Judged@10" in f.value.columns
             and "R@20" not in f.value.columns and "topics covered" not in f.value.columns]
    return found[0].set_index("run")


def test_qrels_versions_page_lineage_diff_and_changes(board_db):
    at = _lead("qrels_versions")
    versions = at.dataframe[0].value
    assert list(versions["name"]) == ["toy-ref", "toy-v1", "toy-v2"]
    assert list(versions["parent"]) == ["", "", "toy-v1"] and list(versions["entries"]) == [2, 7, 8]
    details = at.table[0].value   # the long fields, in a table whose cells wrap (issue 26)
    assert list(details["name"]) == ["toy-ref", "toy-v1", "toy-v2"] and list(details["rule"]) == ["test"] * 3
    assert len(details["content hash"].iloc[0]) == 12
    text = page_text(at)
    assert "- toy-v1 → toy-v2" in text and "- toy-ref" in text
    assert at.selectbox(key="qrels_versions_pick").value == "toy-v2"
    assert [m.value for m in at.metric] == ["2", "1", "1"]  # added, changed, removed
    # exclude, the default: the runs complete on both versions, each averaged over topics 1 and 2; partial
    # (topic 1 only) is kept apart and shrinks no one's topic set (issue 26)
    assert at.multiselect(key="qrels_versions_runs_toy").value == ["bm25", "dense"]
    deltas = _changes(at)
    # runs x measures, as on the Scoreboard (issue 26: a run per row fits the page), Judged@k apart
    assert list(deltas.index) == ["bm25", "dense"]
    assert list(deltas.columns) == ["R@5", "R@10", "R@20", "R@50", "R@100", "nDCG@10", "RR@10", "P@10"]
    assert list(_judged(at).columns) == ["Judged@5", "Judged@10", "Judged@20", "Judged@50", "Judged@100"]
    for run in ("bm25", "dense"):
        assert round(deltas.loc[run, "R@20"], 4) == round(R20_V2[run] - R20_V1[run], 4)
    assert "topics missing from runs" not in page_text(at)
    apart = _frame(at, "run", having="topics covered").loc["partial"]
    assert apart["topics covered"] == "1 of 2 → 1 of 2"
    # partial on its topic 1 only: d5, d6 of v1's {d1, d5, d6}, then of v2's {d1, d3, d4, d5, d6}
    assert round(apart["R@20"], 4) == round(2 / 5 - 2 / 3, 4)

    # selecting the partial run under exclude needs a confirmation, then every run is averaged over topic 1
    at.multiselect(key="qrels_versions_runs_toy").set_value(["bm25", "dense", "partial"]).run()
    assert not at.exception
    assert "Partial run(s) selected: partial (1 of 2 topics on toy-v1, 1 of 2 on toy-v2)" in at.warning[0].value
    assert _changes(at) is None  # blocked until confirmed
    at.checkbox(key="qrels_versions_confirm_shrink").check().run()
    deltas = _changes(at)
    assert list(deltas.index) == ["bm25", "dense", "partial"]
    assert round(deltas.loc["bm25", "R@20"], 4) == round(3 / 5 - 1 / 3, 4)
    assert round(deltas.loc["dense", "R@20"], 4) == round(3 / 5 - 2 / 3, 4)
    assert "partial: 2" in page_text(at)

    at.radio(key="qrels_versions_missing").set_value("zero").run()  # zero: no shrinking, no confirmation
    assert not at.exception
    deltas = _changes(at)
    for run in ("bm25", "dense"):
        assert round(deltas.loc[run, "R@20"], 4) == round(R20_V2[run] - R20_V1[run], 4)
    assert round(deltas.loc["partial", "R@20"], 4) == round((2 / 5 + 0) / 2 - (2 / 3 + 0) / 2, 4)
    # Judged@10 of bm25 on topics 1 and 2 (zero: the same topics on both): v1 judges d1, d3 of t1's
    # top 3 (d1 d4 d3) and d2 of t2's (d2 d5); v2 judges all of them: (3/3 + 2/2)/2 - (2/3 + 1/2)/2
    assert _judged(at).loc["bm25", "Judged@10"] == pytest.approx((3 / 3 + 2 / 2) / 2 - (2 / 3 + 1 / 2) / 2)
    detail = at.dataframe[-1].value
    row = detail[(detail["run"] == "dense") & (detail["measure"] == "R@20")].iloc[0]
    assert math.isclose(row["toy-v1"], 5 / 6) and math.isclose(row["toy-v2"], 0.8)

    # another base than the parent: the full reference -> v2 (6 added, t1 d1 1 -> 2)
    assert at.selectbox(key="qrels_versions_base_toy-v2").value == "toy-v1"
    at.selectbox(key="qrels_versions_base_toy-v2").set_value("toy-ref").run()
    assert not at.exception
    assert [m.value for m in at.metric] == ["6", "1", "0"]
    assert "**toy-ref → toy-v2** (not its parent)" in page_text(at)

    at.selectbox(key="qrels_versions_pick").set_value("toy-ref").run()
    assert "toy-ref has no parent version" in at.info[0].value


def test_assessor_cannot_open_the_lead_pages(board_db):
    at = sign_in(new_app(), "ann", TOKENS["ann"])
    assert not at.exception
    for page in ("scoreboard", "qrels_versions"):
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            at.switch_page(f"app_pages/{page}.py")
    assert "Scoreboard" not in page_text(at)


def test_qrels_versions_page_names_an_incomplete_export_with_its_remedy(board_db):
    # Issue 26: a version whose export was recorded but never written (a publish killed after
    # its commit) is shown as such, with the command that completes it; once exported, it is ok.
    from workbench.services.judging.qrels_files import export_qrels
    from workbench.store import Store

    store = Store(board_db, client="pytest", lock_timeout_s=60)
    export_qrels(store.qrels, "toy-ref", labels_dir=board_db.parent)  # a complete export
    store.qrels.record_export("toy-v1", "toy-v1.qrels")  # recorded, then killed: no file, no manifest entry
    store.release_file()
    at = _lead("qrels_versions")
    assert list(at.table[0].value["exported file"]) == ["ok", "missing file, no manifest entry", "not exported"]
    [warning] = [w.value.replace("\\", "") for w in at.warning if w.value.startswith("qrels version")]
    assert warning.startswith(f"qrels version toy-v1: its file {board_db.parent / 'toy-v1.qrels'} is missing")
    assert warning.endswith("Mend it: `workbench qrels export toy-v1` writes the file and its manifest entry from "
                            "the stored version")

    export_qrels(store.qrels, "toy-v1", labels_dir=board_db.parent)
    store.release_file()
    at = _lead("qrels_versions")
    assert list(at.table[0].value["exported file"]) == ["ok", "ok", "not exported"]
    assert not [w for w in at.warning if w.value.startswith("qrels version")]
