"""My judgments: the assessor's own queue with the status of every document
(judged, unsure, skipped, not yet) and their note on it, filters, and a jump to
any of them on the Judge page. Shows only the assessor's own grades and notes
(blind like Judge)."""

from __future__ import annotations

import streamlit as st

from workbench.app import widgets
from workbench.services.judging import assessments as svc

STATUSES = ("judged", "unsure", "skipped", "not yet")


def _open() -> None:
    target = int(st.session_state.get("mine_goto") or 1)
    widgets.box("judge").update(position=target, shown=None, flash=None, goto=True)


def main() -> None:
    widgets.require_session()
    state = widgets.queue_state()
    st.title("My judgments")
    if not state.n_total:
        st.info("No documents assigned to you yet.")
        return
    rows = svc.my_judgments(state)
    counts = {s: sum(1 for r in rows if r.status == s) for s in STATUSES}
    m = st.columns(4)
    for col, s in zip(m, STATUSES, strict=True):
        col.metric(s.capitalize(), counts[s])
    c1, c2 = st.columns([3, 2])
    chosen = c1.pills("Show", list(STATUSES), selection_mode="multi", default=list(STATUSES), key="mine_status")
    topic = c2.selectbox("Topic", list(state.progress), index=None, placeholder="every topic", key="mine_topic")
    shown = svc.my_judgments(state, status=chosen or None, topic_id=topic)
    widgets.signal(rows=len(shown))
    rubric = None
    if shown:
        rubric = svc.rubric_for(widgets.store().rubrics, state.entries[0].collection)
    st.dataframe(
        [{"position": r.position, "topic": r.topic_id, "document": r.doc_id, "status": r.status,
          "grade": "" if r.grade is None else widgets.grade_text(r.grade, rubric) if rubric else str(r.grade),
          "note": r.note}
         for r in shown],
        hide_index=True, height=min(600, 38 + 35 * max(1, len(shown))), key="mine_table",
        column_config={"note": st.column_config.TextColumn("note", width=250,
                                                           help="Your note (saved with a grade or on its own)")},
    )
    st.caption("Skipped: no judgment yet, but you judged a later document. Unsure documents go to a lead; "
               "they count apart from judged ones.")
    j1, j2 = st.columns([1, 3], vertical_alignment="bottom")
    j1.number_input("Open position", min_value=1, max_value=state.n_total, step=1, key="mine_goto")
    j2.button("Open on the Judge page", key="mine_open", on_click=_open, type="primary")


main()
