"""Scoreboard (leads): stored runs x measures against a chosen qrels version.

R@k with its ceiling beside it, nDCG@10, RR@10, P@10, micro R@k, the
recall-vs-k curves, pool-novel counts and Judged@k per run, and a per-topic
drill-down into the relevant documents a run missed and the documents within k
that nobody judged. The missing-topic policy is chosen here and printed with
the topics it affected. A thin view over ``workbench.services.scoreboard``.
"""

from __future__ import annotations

import streamlit as st

from workbench.app import widgets
from workbench.app.misses_section import render_misses_section
from workbench.app.stages_section import render_stages_section
from workbench.errors import WorkbenchError
from workbench.reports import recall_curve_chart
from workbench.services import scoreboard as svc

widgets.require_session(lead=True)
store = widgets.store()
st.title("Scoreboard")

versions = store.list_qrels_versions()
if not versions:
    st.info("No qrels version yet: publish one on the Publish page or `workbench qrels import` a file.")
    widgets.stop()

c1, c2 = st.columns([3, 2])
with c1:
    name = widgets.qrels_version_picker(versions, key="scoreboard_qrels_pick", remember=widgets.SCOREBOARD_QRELS_KEY)
with c2:
    missing = widgets.missing_policy_picker("scoreboard_missing")
info = next(v for v in versions if v.name == name)
all_runs = [r.name for r in store.list_runs(info.collection)]
if not all_runs:
    st.info(f"No stored run of collection {widgets.md_escape(info.collection)}: make one with `workbench run` first.")
    widgets.stop()
run_names = st.multiselect("Runs", all_runs, default=all_runs, key=f"scoreboard_runs_{info.collection}")
if not run_names:
    st.info("Choose at least one run.")
    widgets.stop()

try:
    board = widgets.cached_scoreboard(name, run_names, missing=missing)
except WorkbenchError as e:
    st.error(widgets.md_escape(e))
    if missing == "fail":
        st.caption("Choose 'exclude' or 'zero' above to score runs that miss topics.")
    widgets.stop()

st.caption(
    f"Qrels **{widgets.md_escape(info.name)}** · hash `{info.content_hash[:12]}` · collection {widgets.md_escape(info.collection)} "
    f"(version `{info.collection_version[:12]}`) · relevant = grade ≥ {board.rel} · "
    f"evaluator `{board.evaluator_version}`"
)
st.markdown(
    f"**Topics:** {info.n_topics} in the qrels · **{len(board.topics)} evaluated** · "
    f"{len(board.excluded_topics)} excluded (|R| = 0) · {len(board.missing_topics)} missing from some run · "
    f"missing-topic policy: **{board.missing}**"
)
if board.excluded_topics:
    st.caption(f"Excluded (|R| = 0, never scored 0 or 1): {widgets.topic_list(board.excluded_topics)}")
if board.missing_by_run:
    effect = {"exclude": "left out of every run's averages", "zero": "scored 0 for the run that lacks them",
              "fail": "refused"}[board.missing]
    lines = [f"- **{widgets.md_escape(run)}**: {len(ts)} topic(s): {widgets.topic_list(ts)}" for run, ts in board.missing_by_run.items()]
    st.warning(f"Missing topics ({effect}):\n" + "\n".join(lines))
else:
    st.caption("No run misses a topic of the qrels.")
for w in board.warnings:
    st.warning(widgets.md_escape(w))

st.subheader("Runs × measures (macro)")
table = board.measure_table()
st.dataframe(table, hide_index=True, column_config=widgets.float_columns(table), height="content")
st.caption("R@k ceiling: the best mean a perfect run reaches, mean of min(k, |R|) / |R| over the evaluated topics.")
with st.expander("R@k micro (all relevant retrieved within k / all relevant)"):
    micro = board.micro_table()
    st.dataframe(micro, hide_index=True, column_config=widgets.float_columns(micro))

st.subheader("Recall vs k")
# theme=None: Vega's category palette, one distinct colour per run
st.altair_chart(recall_curve_chart(list(board.evaluations.values()), title=f"R@k on {info.name} (dashed: ceiling)"),
                theme=None)

st.subheader("Pool-novel documents")
novelty = board.novelty_table()
st.dataframe(novelty, hide_index=True, column_config=widgets.float_columns(novelty), height="content")
st.caption(
    "pool-novel@k: (topic, document) pairs in the run's top k that the qrels never judged; they count as "
    "non-relevant. Judged@k: judged share of the top k (macro)."
)
with st.expander("R@k optimistic: macro R@k if every pool-novel document were relevant"):
    bounds = board.bounds_table()
    st.dataframe(bounds, hide_index=True, column_config=widgets.float_columns(bounds))

render_stages_section(store, name, run_names, missing)  # issue 10: the `workbench stages` table
render_misses_section(store, name, run_names, missing)  # issue 13: misses by cause

st.subheader("Per-topic drill-down")
if not board.topics:
    st.info("No topic is evaluated.")
    widgets.stop()
topics = store.get_topics(info.collection)
d1, d2, d3 = st.columns([2, 4, 1])
run = d1.selectbox("Run", list(board.runs), key="scoreboard_drill_run")
evaluation = board.evaluations[run]
if not evaluation.topics:
    st.info(f"Run {widgets.md_escape(run)} has no evaluated topic.")
    widgets.stop()
topic_id = d2.selectbox(
    "Topic", list(evaluation.topics), key="scoreboard_drill_topic",
    format_func=lambda t: f"{t} · {topics[t].title[:90]}" if t in topics else t,
)
k = d3.selectbox("k", list(board.cutoffs), index=min(2, len(board.cutoffs) - 1), key="scoreboard_drill_k")
drill = svc.topic_drilldown(evaluation, topic_id, int(k))
titles = widgets.cached_titles(info.collection, info.collection_version,
                               [m.doc_id for m in drill.misses] + [doc for _, doc in drill.unjudged])
m1, m2, m3, m4 = st.columns(4)
m1.metric(f"R@{drill.k} (this topic)", f"{drill.recall:.4f}")
m2.metric("Relevant |R|", drill.n_relevant)
m3.metric(f"Found within {drill.k}", drill.n_found)
m4.metric(f"Pool-novel within {drill.k}", len(drill.unjudged))
st.markdown(f"**Missed: relevant documents not in {widgets.md_escape(run)}'s top {drill.k}** ({len(drill.misses)})")
if drill.misses:
    st.dataframe(
        [{"document": m.doc_id, "title": titles[m.doc_id], "grade": m.grade,
          "rank in run": "not retrieved" if m.rank is None else str(m.rank)} for m in drill.misses],
        hide_index=True,
    )
else:
    st.caption("None: every relevant document is within k.")
st.markdown(f"**Unjudged (pool-novel) documents in {widgets.md_escape(run)}'s top {drill.k}** ({len(drill.unjudged)})")
if drill.unjudged:
    st.dataframe([{"rank": r, "document": doc, "title": titles[doc]} for r, doc in drill.unjudged],
                 hide_index=True)
else:
    st.caption("None: every document within k is judged.")
