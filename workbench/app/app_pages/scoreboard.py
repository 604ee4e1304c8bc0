"""Scoreboard (leads): stored runs x measures against a chosen qrels version.

Sections, top to bottom (each one function call in ``main``, so another section
is one more call): qrels version and missing-topic policy; the runs, by
default those that cover every evaluated topic of the qrels, with partial runs
shown apart with their coverage; the topic summary; runs x measures (R@k with
the ceiling as the last row, nDCG@10, RR@10, P@10); R@k micro; recall vs k;
pool-novel documents and Judged@k; the pipeline stages of rerank runs
(``stages_section``); the per-topic drill-down.

One run's gaps never silently shrink the others' topic set: a partial run is
not selected by default, and selecting one under ``exclude`` (which averages
every run over the topics all of them cover) needs an explicit confirmation.
A thin view over ``workbench.services.evaluation.scoreboard``.
"""

from __future__ import annotations

import streamlit as st

from workbench.app import cached, widgets
from workbench.app.misses_section import render_misses_section
from workbench.app.stages_section import render_stages_section
from workbench.errors import MissingTopicsError, WorkbenchError
from workbench.services.evaluation import scoreboard as svc
from workbench.store.qrels import QrelsVersionInfo


def _choose_runs(info: QrelsVersionInfo, coverage: list[svc.RunCoverage]) -> list[str]:
    """The run picker: the complete runs by default; partial ones listed with their coverage."""
    names = [c.run for c in coverage]
    complete = [c.run for c in coverage if c.complete]
    by = {c.run: c for c in coverage}
    return list(st.multiselect(
        "Runs", names, default=complete or names, key=f"scoreboard_runs_{info.collection}",
        format_func=lambda r: r if by[r].complete else f"{r} (partial: {by[r].n_covered} of {by[r].n_topics} topics)",
        help="By default the runs that have results for every evaluated topic of the qrels; partial runs are "
             "scored apart below.",
    ))


def _confirm_shrink(chosen: list[str], coverage: list[svc.RunCoverage], missing: str) -> bool:
    """Under ``exclude``, a selected partial run would shrink every run's topic set: block until confirmed."""
    partial = [c for c in coverage if c.run in chosen and not c.complete]
    if not partial or missing != "exclude":
        return True
    lacked = {t for c in partial for t in c.missing}
    n_topics = partial[0].n_topics
    names = ", ".join(f"{widgets.md_escape(c.run)} ({c.n_covered} of {c.n_topics})" for c in partial)
    st.warning(
        f"Partial run(s) selected: {names}. With **exclude**, every selected run would be averaged over the "
        f"{n_topics - len(lacked)} topics they all cover instead of {n_topics}, which changes the complete runs' "
        "averages too. Deselect the partial run(s), choose **zero** (their missing topics score 0), or confirm."
    )
    return bool(st.checkbox(f"Average every selected run over the {n_topics - len(lacked)} shared topics",
                            key="scoreboard_confirm_shrink"))


def _board(name: str, chosen: list[str], missing: str) -> svc.Scoreboard | None:
    try:
        return widgets.cached_scoreboard(name, chosen, missing=missing)
    except MissingTopicsError as e:
        st.error(f"Not scored: run {widgets.md_escape(e.run)} has no results for {len(e.topics)} evaluated topic(s) "
                 f"({widgets.topic_list(e.topics)}), and the missing-topic policy is **fail**. Choose **exclude** "
                 "or **zero** under Missing topics, or deselect the run.")
    except WorkbenchError as e:
        st.error(widgets.md_escape(e))
    return None


def _summary(info: QrelsVersionInfo, board: svc.Scoreboard) -> None:
    st.caption(
        f"Qrels **{widgets.md_escape(info.name)}** · hash `{info.content_hash[:12]}` · collection "
        f"{widgets.md_escape(info.collection)} (version `{info.collection_version[:12]}`) · relevant = grade ≥ "
        f"{board.rel} · evaluator `{board.evaluator_version}`"
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
        lines = [f"- **{widgets.md_escape(run)}**: {len(ts)} topic(s): {widgets.topic_list(ts)}"
                 for run, ts in board.missing_by_run.items()]
        st.warning(f"Missing topics ({effect}):\n" + "\n".join(lines))
    else:
        st.caption("No selected run misses a topic of the qrels.")
    if len(board.warnings) == 1:
        st.warning(widgets.md_escape(board.warnings[0]))
    elif board.warnings:  # one box, so that several runs' warnings do not push the tables below the fold
        st.warning(f"{len(board.warnings)} warnings:\n" + "\n".join(f"- {widgets.md_escape(w)}" for w in board.warnings))


def _measures(board: svc.Scoreboard) -> None:
    st.subheader("Runs × measures (macro)")
    table = board.compact_table()
    st.dataframe(table, hide_index=True, column_config=widgets.measure_columns(table), height="content",
                 key="scoreboard_measures")
    st.caption(f"Last row: the R@k ceiling, the best mean a perfect run reaches: mean of min(k, |R|) / |R| over the "
               f"{len(board.topics)} evaluated topics (the same for every run of the board).")
    with st.expander("R@k micro (all relevant retrieved within k / all relevant)"):
        micro = board.micro_table()
        st.dataframe(micro, hide_index=True, column_config=widgets.measure_columns(micro))


def _partial_runs(name: str, coverage: list[svc.RunCoverage], chosen: list[str], missing: str) -> None:
    """Partial runs not selected: each scored on its own covered topics, apart from the board."""
    apart = [c for c in coverage if not c.complete and c.run not in chosen]
    if not apart:
        return
    st.subheader("Partial runs (scored apart)")
    rows: list[dict[str, object]] = []
    for c in apart:
        row: dict[str, object] = {"run": c.run, "topics covered": f"{c.n_covered} of {c.n_topics}"}
        if c.n_covered:
            try:
                own = widgets.cached_scoreboard(name, [c.run], missing="exclude")
            except WorkbenchError as e:
                row["note"] = str(e)
            else:
                row.update({k: v for k, v in own.compact_table()[0].items() if k != "run"})
        rows.append(row)
    st.dataframe(rows, hide_index=True, column_config=widgets.measure_columns(rows), height="content",
                 key="scoreboard_partial")
    st.caption("Each partial run averaged over only the topics it covers: not comparable with the board above. "
               "Select one above to score it with the others (missing topics scored 0 with **zero**).")


def _recall_curves(info: QrelsVersionInfo, board: svc.Scoreboard) -> None:
    st.subheader("Recall vs k")
    widgets.recall_chart(info.name, board.runs, missing=board.missing, rel=board.rel, cutoffs=board.cutoffs,
                         title=f"R@k on {info.name} (dashed: ceiling)")


def _novelty(board: svc.Scoreboard) -> None:
    st.subheader("Pool-novel documents")
    novelty = board.novelty_table()
    st.dataframe(novelty, hide_index=True, column_config=widgets.measure_columns(novelty), height="content")
    st.caption(
        "pool-novel@k: (topic, document) pairs in the run's top k that the qrels never judged; they count as "
        "non-relevant. Judged@k: judged share of the top k (macro)."
    )
    with st.expander("R@k optimistic: macro R@k if every pool-novel document were relevant"):
        bounds = board.bounds_table()
        st.dataframe(bounds, hide_index=True, column_config=widgets.measure_columns(bounds))


def _drilldown(info: QrelsVersionInfo, board: svc.Scoreboard) -> None:
    st.subheader("Per-topic drill-down")
    if not board.topics:
        st.info("No topic is evaluated.")
        return
    topics = cached.topics(info.collection)
    d1, d2, d3 = st.columns([2, 4, 1])
    run = d1.selectbox("Run", list(board.runs), key="scoreboard_drill_run")
    evaluation = board.evaluations[run]
    if not evaluation.topics:
        st.info(f"Run {widgets.md_escape(run)} has no evaluated topic.")
        return
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
    st.markdown(f"**Unjudged (pool-novel) documents in {widgets.md_escape(run)}'s top {drill.k}** "
                f"({len(drill.unjudged)})")
    if drill.unjudged:
        st.dataframe([{"rank": r, "document": doc, "title": titles[doc]} for r, doc in drill.unjudged],
                     hide_index=True)
    else:
        st.caption("None: every document within k is judged.")


def main() -> None:
    widgets.require_session(lead=True)
    store = widgets.store()
    st.title("Scoreboard")
    versions = widgets.qrels_versions()
    if not versions:
        return
    c1, c2 = st.columns([3, 2])
    with c1:
        name = widgets.qrels_version_picker(versions, key="scoreboard_qrels_pick",
                                            remember=widgets.SCOREBOARD_QRELS_KEY)
    with c2:
        missing = widgets.missing_policy_picker("scoreboard_missing")
    info = next(v for v in versions if v.name == name)
    all_runs = [r.name for r in store.runs.list_runs(info.collection)]
    if not all_runs:
        st.info(f"No stored run of collection {widgets.md_escape(info.collection)}: make one with `workbench run` "
                "first.")
        return
    coverage = cached.coverage(name, all_runs)
    chosen = _choose_runs(info, coverage)
    if not chosen:
        st.info("Choose at least one run.")
        _partial_runs(name, coverage, chosen, missing)
        return
    if not _confirm_shrink(chosen, coverage, missing):
        return
    board = _board(name, chosen, missing)
    if board is None:
        return
    widgets.signal(evaluated=len(board.topics), runs=len(board.runs))
    _summary(info, board)
    _measures(board)
    _partial_runs(name, coverage, chosen, missing)
    _recall_curves(info, board)
    _novelty(board)
    render_stages_section(store, name, chosen, missing)  # issue 10: the `workbench stages` table
    render_misses_section(store, name, chosen, missing)  # issue 13: misses by cause
    _drilldown(info, board)


main()
