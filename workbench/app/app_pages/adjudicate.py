"""Adjudicate (leads): the disagreement queue (grades differ, or an assessor was
unsure), widest grade spread first, with each assessor's grade, note and time;
the lead sets a final grade with a rationale.

Corpus- and user-provided strings (titles, notes, rationales, ids, names) are
shown as plain text or passed through ``widgets.md_escape``: never as Markdown.
"""

from __future__ import annotations

import streamlit as st

from workbench.app import sections, widgets
from workbench.errors import WorkbenchError
from workbench.services import judging as svc

PAGE = 10


def _adjudicate(pool_version: str, topic_id: str, doc_id: str, key: str) -> None:
    session = widgets.session()
    grade = st.session_state.get(f"{key}_grade")
    if session is None:
        return
    if grade is None:
        st.session_state["adjudicate_msg"] = ("error", "Choose a final grade first.", key)
        return
    rationale = st.session_state.get(f"{key}_why", "") or ""
    try:
        svc.adjudicate(widgets.store(), session, pool_version, topic_id, doc_id, int(grade), rationale)
    except WorkbenchError as e:
        st.session_state["adjudicate_msg"] = ("error", widgets.md_escape(e), key)
    else:
        st.session_state["adjudicate_msg"] = (
            "ok", f"Final grade {grade} set for topic {widgets.md_escape(topic_id)}, "
                  f"document {widgets.md_escape(doc_id)}.", key)


widgets.require_session(lead=True)
store = widgets.store()
st.title("Adjudicate")
pool_version = widgets.pool_picker("adjudicate")
if pool_version is None:
    widgets.stop()
kind, msg, msg_key = st.session_state.get("adjudicate_msg") or ("", "", "")
if msg and kind == "ok":
    st.success(msg)

show_done = st.checkbox("Include documents already adjudicated", value=False, key="adjudicate_show_done")
rows = svc.disagreement_queue(store, pool_version, include_adjudicated=show_done)
collection = svc.pool_collection(store, pool_version)
rubric = svc.rubric_for(store, collection)
topics = store.get_topics(collection)
st.caption(f"{len(rows)} document(s) need a decision (grades differ, or marked unsure), widest spread first.")
for row in rows[:PAGE]:
    key = f"adj_{row.topic_id}_{row.doc_id}"
    with st.container(border=True):
        doc = store.get_document(collection, row.doc_id)
        title = f" · {widgets.md_escape(doc.title)}" if doc.title else ""
        st.markdown(f"**Topic {widgets.md_escape(row.topic_id)} · document {widgets.md_escape(row.doc_id)}**"
                    f"{title} · spread {row.spread}")
        topic = topics.get(row.topic_id)
        with st.expander("Topic and document text"):
            if topic is not None:
                st.text(f"Query: {topic.query}")
            st.text(doc.text or "(no text)")
        st.dataframe(  # plain text cells: notes are never rendered as Markdown
            [
                {"assessor": j.assessor, "grade": widgets.grade_text(j.grade, rubric), "note": j.note,
                 "time on document": f"{j.duration_ms / 1000:.1f} s", "saved": f"{j.saved_at:%Y-%m-%d %H:%M}"}
                for j in row.judgments
            ],
            hide_index=True,
        )
        sections.model_suggestion(row, rubric)
        if row.adjudication is not None:
            a = row.adjudication
            st.caption(f"Adjudicated: {widgets.md_escape(widgets.grade_text(a.grade, rubric))} by "
                       f"{widgets.md_escape(a.lead)}: {widgets.md_escape(a.rationale)}")
        with st.form(f"{key}_form", border=False):
            c1, c2, c3 = st.columns([1, 3, 1])
            c1.selectbox("Final grade", rubric.values, key=f"{key}_grade", index=None,
                         placeholder="choose", format_func=lambda g: widgets.grade_text(g, rubric))
            c2.text_input("Rationale", key=f"{key}_why")
            c3.form_submit_button("Set final grade", key=f"{key}_go", on_click=_adjudicate,
                                  args=(pool_version, row.topic_id, row.doc_id, key))
        if msg and kind == "error" and msg_key == key:
            st.error(msg)
if len(rows) > PAGE:
    st.caption(f"Showing the first {PAGE}; adjudicate these to see the next.")
