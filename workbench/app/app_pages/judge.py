"""Judge: the assessor's queue, one document at a time (blind).

Shows the topic, the document (query terms marked, stop words not; text
escaped) and the rubric; never a run name, rank, score or another assessor's
grade. Layout, top to bottom: a status line of fixed height (the saved message
with its Undo link, or a new-topic notice), where the document sits in the
queue and in its topic, the topic, the document (it scrolls), the note, and the
grade bar, which stays at the bottom of the window while the page scrolls.

Only a grade button or its key saves a grade. The note is a plain field (no
form): Enter adds a line, Ctrl+Enter or leaving it keeps it as a draft of this
document, and it is saved with the next grade given, or on its own with "Save
note". Enter and Space never press a grade-bar button (a key guard), so
Tab+Enter from the note reaches "Save note" at most. Each save gets a save
token (shown document + grade + unsure): a double submit stores one judgment,
a quick different grade lands as a correction. Undo (Backspace, Ctrl+Z, or the
link in the saved message) restores what the store held before the last save.
``?`` opens the list of keys.
"""

from __future__ import annotations

import time
import uuid

import streamlit as st

from workbench.app import widgets
from workbench.errors import WorkbenchError
from workbench.judging.prefill import prefill_outcome
from workbench.judging.queue import JudgingView
from workbench.services.judging import assessments as svc

PREFILL_HELP = ("A lead turned pre-fill on for this pool: a model's grade is shown pre-selected. Saving that "
                "grade records that you confirmed it; another grade (or Unsure) records that you changed it.")
KEYS_EXTRA = (("U", "unsure"), ("N", "next"), ("P", "previous"), ("Backspace / Ctrl+Z", "undo the last save"),
              ("?", "this list"))


def _draft_key(view: JudgingView) -> str:
    return f"{view.topic.topic_id}\x1f{view.document.doc_id}"


def _flash(judge: dict, kind: str, text: str, *, undo: bool = False) -> None:
    judge["flash"] = {"kind": kind, "text": text, "undo": undo}


# The callbacks read the "judge" box, the note and the store handle first, write to
# the store, and then only update the box in place (see widgets.BOXES: any
# session-state access after the write could end the callback there).


def _save(view: JudgingView, grade: int | None, unsure: bool, token: str, shown_at: float) -> None:
    """Grade button callback: commit the judgment (with the note), then advance."""
    session, judge = widgets.session(), widgets.box("judge")
    note = st.session_state.get("judge_note", "") or ""
    store = widgets.store()
    if session is None:
        return
    try:
        saved = svc.save_judgment_outcome(
            store, session, view, grade=grade, unsure=unsure, note=note,
            duration_ms=int((time.monotonic() - shown_at) * 1000), save_token=f"{token}:{grade}:{unsure}",
        )
    except WorkbenchError as e:
        _flash(judge, "error", f"Not saved: {widgets.md_escape(e)}")
        return
    if saved.new:
        judge["undo"].append((saved.judgment_id, view.position))
    judge["drafts"].pop(_draft_key(view), None)
    what = "unsure" if saved.unsure else f"grade {saved.grade}"
    if view.prefill is not None:
        what += (" (the model's grade, confirmed)" if prefill_outcome(view.prefill, saved.grade, saved.unsure)
                 == "confirmed" else f" (the model's {view.prefill.grade} changed)")
    verb = "Saved" if saved.new else "Already saved"
    _flash(judge, "saved", f"{verb} {what} for document {widgets.md_escape(view.document.doc_id)} "
                           f"(#{view.position}).", undo=bool(judge["undo"]))
    if judge["position"] == view.position:  # a stale double click does not skip
        judge.update(position=view.position + 1, shown=None)


def _save_note(view: JudgingView) -> None:
    """"Save note" callback: the note on its own; the grade (if any) is kept."""
    session, judge = widgets.session(), widgets.box("judge")
    note = st.session_state.get("judge_note", "") or ""
    store = widgets.store()
    if session is None:
        return
    try:
        saved = svc.save_note(store.judgments, session, view, note)
    except WorkbenchError as e:
        _flash(judge, "error", f"Note not saved: {widgets.md_escape(e)}")
        return
    judge["drafts"].pop(_draft_key(view), None)
    held = ("unsure" if saved.unsure else f"grade {saved.grade}") if (saved.grade is not None or saved.unsure) \
        else "no grade yet"
    _flash(judge, "note", f"Note saved for document {widgets.md_escape(view.document.doc_id)} ({held}; "
                          "nothing else changed).")


def _keep_draft(view: JudgingView) -> None:
    """Note field callback (Ctrl+Enter, or leaving the field): keep it for this document."""
    judge = widgets.box("judge")
    judge["drafts"][_draft_key(view)] = st.session_state.get("judge_note", "") or ""
    _flash(judge, "draft", "Note kept: it is saved with the grade you give, or now with Save note. "
                           "No grade was saved.")


def _undo() -> None:
    """Undo callback: restore the state before the last save of this session, and go back to it."""
    session, judge = widgets.session(), widgets.box("judge")
    store = widgets.store()
    if session is None:
        return
    if not judge["undo"]:
        _flash(judge, "error", "Nothing to undo in this session.")
        return
    judgment_id, position = judge["undo"][-1]
    try:
        out = svc.undo_save(store.judgments, session, judgment_id)
    except WorkbenchError as e:
        _flash(judge, "error", f"Not undone: {widgets.md_escape(e)}")
        return
    judge["undo"].pop()
    judge.update(position=position, shown=None)
    before = ("unsure" if out.unsure else f"grade {out.grade}") if out.judged else "not judged"
    _flash(judge, "undone", f"Undone: document {widgets.md_escape(out.doc_id)} (#{position}) is {before} again.",
           undo=bool(judge["undo"]))


def _move(to: int) -> None:
    widgets.box("judge").update(position=max(1, to), shown=None, flash=None)


def _open_help() -> None:
    widgets.box("judge")["help"] = True


@st.dialog("Keys")
def _keys_dialog(rubric_lines: list[tuple[str, str]]) -> None:
    st.table(widgets.md_cells([{"key": k, "does": what} for k, what in rubric_lines]))
    st.caption("Keys do nothing while you type in the note: press Tab to leave it. Enter and Space never "
               "press a grade. Esc closes this list.")


def _status_line(view: JudgingView | None, new_topic: bool) -> None:
    """The reserved line: the last action's message (with Undo), else a new-topic notice."""
    flash = widgets.box("judge")["flash"]
    with st.container(key="judge_status"):
        if flash:
            text, kind = flash["text"], flash["kind"]
            c1, c2 = st.columns([8, 1], vertical_alignment="center")
            {"error": c1.error, "draft": c1.info, "note": c1.info}.get(kind, c1.success)(text)
            if flash.get("undo"):
                c2.button("Undo", key="judge_undo_link", type="tertiary", on_click=_undo,
                          help="Restore what was there before the last save (Backspace or Ctrl+Z)")
        elif view is not None and new_topic:
            st.info(f"New topic: {widgets.md_escape(view.topic.topic_id)}. Read its description before you grade.")


def _selected(view: JudgingView) -> int | None:
    """The grade button shown selected: the assessor's own grade, else a pre-filled model grade."""
    if view.judged:
        return view.own_grade
    return view.prefill.grade if view.prefill is not None else None


def _key(rubric, grade: int) -> str:
    return next((g.key for g in rubric.grades if g.grade == grade), str(grade))


def _prefill_line(view: JudgingView, rubric) -> None:
    """The pre-fill notice (only when a lead turned pre-fill on and the model graded the document)."""
    p = view.prefill
    if p is None:
        return
    what = widgets.grade_text(p.grade, rubric)
    if view.judged:
        st.caption(f"Model assessor {widgets.md_escape(p.assessor)} graded it **{widgets.md_escape(what)}** "
                   "(marked *model* on its button).", help=PREFILL_HELP)
    else:
        st.caption(f"Pre-filled by model assessor {widgets.md_escape(p.assessor)}: **{widgets.md_escape(what)}** "
                   f"(selected, not saved). Press it (key {widgets.md_escape(_key(rubric, p.grade))}) to confirm, "
                   "or give another grade.", help=PREFILL_HELP)


def _grade_bar(view: JudgingView, rubric, token: str, shown_at: float, position: int, resume: int) -> None:
    """The grades, Unsure, Previous, Next and Undo: kept at the bottom of the window."""
    selected = _selected(view)
    model = view.prefill.grade if view.prefill is not None else None
    with st.container(key="judge_bar"):
        _prefill_line(view, rubric)
        cols = st.columns(len(rubric.grades) + 1)
        for col, g in zip(cols, rubric.grades, strict=False):
            col.button(f"{g.label} · model" if g.grade == model else g.label, key=f"judge_grade_{g.grade}",
                       shortcut=g.key, help=f"grade {g.grade}: {g.definition}"
                       + (" (the model assessor's grade)" if g.grade == model else ""),
                       type="primary" if selected == g.grade else "secondary", on_click=_save,
                       args=(view, g.grade, False, token, shown_at), width="stretch")
        cols[-1].button("Unsure", key="judge_unsure", shortcut="U", help="Cannot decide; a lead will look at it.",
                        type="primary" if view.own_unsure else "secondary", on_click=_save,
                        args=(view, None, True, token, shown_at), width="stretch")
        nav = st.columns([1, 1, 1, 1, 1])
        nav[0].button("Previous", key="judge_prev", on_click=_move, args=(position - 1,), shortcut="P",
                      disabled=position <= 1, width="stretch")
        nav[1].button("Next", key="judge_next", on_click=_move, args=(position + 1,), shortcut="N", width="stretch")
        nav[2].button("Undo", key="judge_undo_btn", on_click=_undo, shortcut="Backspace", width="stretch",
                      disabled=not widgets.box("judge")["undo"])
        nav[3].button("First unjudged", key="judge_jump", on_click=_move, args=(resume,), width="stretch",
                      disabled=resume == position)
        nav[4].button("Keys (?)", key="judge_help", on_click=_open_help, width="stretch")


def main() -> None:
    session = widgets.require_session()
    store = widgets.store()
    state = widgets.queue_state()
    judge = widgets.box("judge")
    if judge["position"] is None:
        judge["position"] = state.resume
    position = int(judge["position"])
    widgets.signal(position=position, saved=state.n_done, unsure=state.n_unsure, total=state.n_total,
                   undo=len(judge["undo"]))
    widgets.key_guard()

    if state.n_total == 0:
        _status_line(None, False)
        st.info("Your queue is empty. A lead assigns documents with `workbench assign`.")
        return
    view = svc.load_view(store.judging, session, position)
    if view is None:
        _status_line(None, False)
        st.success(f"End of your queue: {widgets.percent(state.n_done, state.n_total)} judged "
                   f"({state.n_unsure} of them unsure).")
        c = st.columns(3)
        if state.n_done < state.n_total:
            c[0].button("Go to the first unjudged document", key="judge_resume", on_click=_move, args=(state.resume,))
        c[1].button("Previous", key="judge_prev_end", on_click=_move, args=(state.n_total,), shortcut="P")
        c[2].button("Undo", key="judge_undo_btn", on_click=_undo, shortcut="Backspace", disabled=not judge["undo"])
        return

    shown = judge["shown"]
    doc_key = (view.topic.topic_id, view.document.doc_id)
    if not shown or shown.get("position") != position or shown.get("doc") != doc_key:
        shown = {"position": position, "doc": doc_key, "at": time.monotonic(), "token": uuid.uuid4().hex}
        judge["shown"] = shown
        st.session_state["judge_note"] = judge["drafts"].get(_draft_key(view), view.own_note)  # before the widget
    widgets.signal(doc=f"{doc_key[0]}/{doc_key[1]}", draft="yes" if _draft_key(view) in judge["drafts"] else "no",
                   prefill="" if view.prefill is None else view.prefill.grade)

    rubric = svc.rubric_for(store.rubrics, view.collection)
    place = state.topic_place(position)
    _status_line(view, place.new_topic)
    st.caption(
        f"Document {view.position} of {view.n_queue} · {place.index} of {place.size} in topic "
        f"{widgets.md_escape(place.topic_id)}"
        + (f" · you judged it: {widgets.grade_text(view.own_grade, rubric)}" if view.judged else "")
    )
    widgets.render_topic(view, new_topic=place.new_topic)
    widgets.render_document(view)
    c1, c2 = st.columns([6, 1], vertical_alignment="bottom")
    c1.text_area("Note (optional)", key="judge_note", height=68, on_change=_keep_draft, args=(view,),
                 placeholder="Saved with your grade, or with Save note.")
    c2.button("Save note", key="judge_save_note", on_click=_save_note, args=(view,), width="stretch",
              help="Save the note on its own; your grade (if any) stays as it is.")
    _grade_bar(view, rubric, shown["token"], shown["at"], position, state.resume)
    st.caption(widgets.keys_help(rubric, KEYS_EXTRA))
    widgets.render_rubric(rubric)
    if judge.pop("help", False):
        judge["help"] = False
        _keys_dialog([(g.key, f"grade {g.grade}: {g.label}") for g in rubric.grades] + list(KEYS_EXTRA))


main()
