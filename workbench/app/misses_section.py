"""The Scoreboard's "Why runs miss" section: each chosen run's misses at k, counted by cause.

A self-contained section (ui16 owns the page layout): the page calls
``render_misses_section`` once. It shows, per run, the misses per cause
(``workbench misses --categorise``: not indexed, filtered out, chunk boundary,
found deeper, vocabulary mismatch, beyond depth, uncategorised), the total, how many a lead
set, the residue and whether the list is closed; then one run's misses,
filtered by cause. Everything comes from ``services.evaluation.misses`` (no scoring here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from workbench.app import widgets
from workbench.errors import WorkbenchError
from workbench.scoring.misses import CAUSES

CUTOFFS = (5, 10, 20, 50, 100)
ALL = "all causes"


@st.cache_data(max_entries=32, show_spinner="Scoring and categorising each run's misses ...")
def _misses(db_path: str, qrels_version: str, content_hash: str, runs: tuple[str, ...], k: int, missing: str,
            revision: int) -> tuple[list[dict[str, object]], dict[str, list[dict[str, object]]]]:
    from workbench.services.evaluation.misses import cause_count_rows, miss_rows, scoreboard_misses

    reports = scoreboard_misses(list(runs), qrels_version, k, open_store=widgets.store, missing=missing)
    return cause_count_rows(reports), {r.misses.run_name: miss_rows(r) for r in reports}


EXPANDER_KEY = "scoreboard_misses_open"
"""Session key of the section's expander (True = open: the section is computed)."""


def render_misses_section(store: Any, qrels_version: str, run_names: Sequence[str], missing: str) -> None:
    """Show the misses per cause of ``run_names`` at a chosen k, and one run's misses filtered by cause.

    In an expander that computes its content only when open (it scores and categorises every run's
    misses: about 5 s for the demo's 17 Cranfield runs, the most of the Scoreboard's first visit
    before issue 26); once computed, the lists are cached."""
    section = st.expander(f"Why runs miss: misses by cause ({len(run_names)} runs; computed when opened)",
                          key=EXPANDER_KEY, on_change="rerun")
    if not section.open:
        return
    with section:
        _render(store, qrels_version, run_names, missing)


def _render(store: Any, qrels_version: str, run_names: Sequence[str], missing: str) -> None:
    c1, c2, c3 = st.columns([1, 2, 2])
    k = int(c1.selectbox("k", CUTOFFS, index=CUTOFFS.index(20), key="scoreboard_misses_k"))
    info = store.qrels.get_qrels_info(qrels_version)
    try:
        counts, rows = _misses(str(widgets.config().db_path), qrels_version, info.content_hash, tuple(run_names),
                               k, missing, store.misses.miss_causes_revision())
    except WorkbenchError as e:
        st.error(widgets.md_escape(e))
        return
    st.dataframe(counts, hide_index=True, key="scoreboard_misses_counts")
    st.caption(
        "A miss is a relevant document not in the run's top k. Causes, first rule that holds: not indexed (not "
        "in the run's collection version, or empty text), filtered out (ineligible under the topic's filter), "
        "chunk boundary, found deeper (rank > k within the run's depth), vocabulary mismatch (no analysed query "
        "term in the document), beyond depth (shares query terms, cut off by the run's depth; a BM25 run is "
        "re-scored for the rank), else uncategorised: the residue. A list is closed when its residue is 0; a "
        "lead sets a cause with `workbench miss-cause`.")
    run = c2.selectbox("Run", list(rows), key="scoreboard_misses_run")
    cause = c3.selectbox("Cause", [ALL, *CAUSES], key="scoreboard_misses_cause")
    shown = [r for r in rows.get(run, []) if cause == ALL or r["cause"] == cause]
    st.markdown(f"**{len(shown)} miss(es)** of run {widgets.md_escape(run)}"
                + ("" if cause == ALL else f" with cause *{cause}*"))
    if shown:
        st.dataframe([{"topic": r["topic_id"], "document": r["doc_id"], "grade": r["grade"],
                       "rank": "-" if r["rank"] is None else str(r["rank"]), "cause": r["cause"], "by": r["source"],
                       "evidence": r["detail"] if r["source"] == "rule" else r["note"],
                       "suggested": r["suggested_cause"]} for r in shown],
                     hide_index=True, key="scoreboard_misses_rows")
    else:
        st.caption("None.")
    if shown:
        _cause_form(store, qrels_version, run, k, missing, shown)


def _cause_form(store: Any, qrels_version: str, run: str, k: int, missing: str,
                shown: Sequence[dict[str, object]]) -> None:
    """A lead sets the cause of one listed miss, with a note (append-only; the latest decision wins)."""
    from workbench.services.evaluation.misses import set_miss_causes

    st.markdown("**Set the cause of a miss (lead)**")  # no expander here: the section is one
    with st.form("scoreboard_misses_form", clear_on_submit=True):
        choices = [f"{r['topic_id']} · {r['doc_id']}" for r in shown]
        picked = st.selectbox("Miss (topic · document)", choices, key="scoreboard_misses_pick")
        cause = st.selectbox("Cause", list(CAUSES), key="scoreboard_misses_new_cause")
        note = st.text_input("Note (why; required)", key="scoreboard_misses_note")
        if not st.form_submit_button("Save cause"):
            return
    session = widgets.session()
    row = shown[choices.index(picked)]
    try:
        if session is None:
            raise WorkbenchError("sign in as a lead to set a miss cause")
        set_miss_causes(store, session, run, qrels_version, k,
                        [(str(row["topic_id"]), str(row["doc_id"]), str(cause), note)], missing=missing)
    except WorkbenchError as e:
        st.error(widgets.md_escape(e))
        return
    st.success(f"Cause of topic {widgets.md_escape(row['topic_id'])} document {widgets.md_escape(row['doc_id'])} "
               f"set to *{cause}*.")
    st.rerun()
