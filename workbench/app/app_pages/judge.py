"""Judge: the assessor's queue, one document at a time (blind).

Shows the topic, the document (query terms marked, text escaped) and the
rubric; never a run name, rank, score or another assessor's grade. A grade
button (or its key) saves and advances: the save runs in the button's
callback, i.e. it is committed before the next document renders. Each save
action gets a save token (shown document + grade + unsure), so a double submit
of the same grade stores one judgment while a quick different grade lands as a
correction; the message reports what the store holds. Widget
keys are stable (one button per grade in the page at any time), so a key
press can never hit a stale button of the previous document.
"""

from __future__ import annotations

import time
import uuid

import streamlit as st

from workbench.app import widgets
from workbench.errors import WorkbenchError
from workbench.judging.queue import JudgingView
from workbench.services import judging as svc

KEYS_EXTRA = (("U", "unsure"), ("N", "next"), ("P", "previous"))


def _save(view: JudgingView, grade: int | None, unsure: bool, token: str, shown_at: float) -> None:
    """Button callback: commit the judgment, then advance (runs before the page re-renders)."""
    session = widgets.session()
    if session is None:
        return
    note = st.session_state.get("judge_note", "") or ""
    try:
        saved = svc.save_judgment_outcome(
            widgets.store(),
            session,
            view,
            grade=grade,
            unsure=unsure,
            note=note,
            duration_ms=int((time.monotonic() - shown_at) * 1000),
            save_token=f"{token}:{grade}:{unsure}",
        )
    except WorkbenchError as e:
        st.session_state["judge_error"] = f"Not saved: {widgets.md_escape(e)}"
        return
    what = "unsure" if saved.unsure else f"grade {saved.grade}"
    verb = "Saved" if saved.new else "Already saved"
    st.session_state["judge_flash"] = f"{verb} {what} for document {widgets.md_escape(view.document.doc_id)} (#{view.position})."
    st.session_state["judge_error"] = ""
    if st.session_state.get("judge_position") == view.position:  # a stale double click does not skip
        st.session_state["judge_position"] = view.position + 1
        st.session_state["judge_shown"] = None


def _move(to: int) -> None:
    st.session_state["judge_position"] = max(1, to)
    st.session_state["judge_shown"] = None
    st.session_state["judge_flash"] = ""


session = widgets.require_session()
store = widgets.store()
state = svc.queue_state(store, session)

if st.session_state.get("judge_position") is None:
    st.session_state["judge_position"] = state.resume
position = int(st.session_state["judge_position"])
widgets.signal(position=position, saved=state.n_done, total=state.n_total)

st.title("Judge")
if st.session_state.get("judge_error"):
    st.error(st.session_state["judge_error"])
elif st.session_state.get("judge_flash"):
    st.success(st.session_state["judge_flash"])

if state.n_total == 0:
    st.info("Your queue is empty. A lead assigns documents with `workbench assign`.")
    widgets.stop()

view = svc.load_view(store, session, position)
if view is None:
    st.success(f"End of your queue: {widgets.percent(state.n_done, state.n_total)} judged.")
    if state.n_done < state.n_total:
        st.button("Go to the first unjudged document", key="judge_resume", on_click=_move, args=(state.resume,))
    st.button("Previous", key="judge_prev_end", on_click=_move, args=(state.n_total,), shortcut="P")
    widgets.stop()

shown = st.session_state.get("judge_shown")
if not shown or shown.get("position") != position or shown.get("doc") != (view.topic.topic_id, view.document.doc_id):
    shown = {
        "position": position,
        "doc": (view.topic.topic_id, view.document.doc_id),
        "at": time.monotonic(),
        "token": uuid.uuid4().hex,
    }
    st.session_state["judge_shown"] = shown
    st.session_state["judge_note"] = view.own_note  # set before the widget exists in this run
token = shown["token"]

rubric = svc.rubric_for(store, view.collection)
st.caption(
    f"Document {view.position} of {view.n_queue}"
    + (f" · you judged it: {widgets.grade_text(view.own_grade, rubric)}" if view.judged else "")
)
widgets.render_topic(view)
widgets.render_document(view)

with st.form("judge_form", clear_on_submit=False, border=False):
    st.text_area("Note (optional)", key="judge_note", height=68)
    cols = st.columns(len(rubric.grades))
    for col, g in zip(cols, rubric.grades, strict=True):
        with col:
            st.form_submit_button(
                g.label,  # the grade's key (its digit) is shown beside the label by Streamlit
                key=f"judge_grade_{g.grade}",
                shortcut=g.key,
                help=f"grade {g.grade}: {g.definition}",
                type="primary" if view.own_grade == g.grade else "secondary",
                on_click=_save,
                args=(view, g.grade, False, token, shown["at"]),
                width="stretch",
            )
    unsure_col, _ = st.columns([1, len(rubric.grades) - 1])
    with unsure_col:
        st.form_submit_button(
            "Unsure",
            key="judge_unsure",
            shortcut="U",
            help="Cannot decide; a lead will look at it.",
            on_click=_save,
            args=(view, None, True, token, shown["at"]),
            width="stretch",
        )

nav = st.columns(3)
with nav[0]:
    st.button("Previous", key="judge_prev", on_click=_move, args=(position - 1,), shortcut="P",
              disabled=position <= 1)
with nav[1]:
    st.button("Next", key="judge_next", on_click=_move, args=(position + 1,), shortcut="N")
with nav[2]:
    if state.resume != position:
        st.button("First unjudged", key="judge_jump", on_click=_move, args=(state.resume,))
st.caption(widgets.keys_help(rubric, KEYS_EXTRA))
widgets.render_rubric(rubric)
