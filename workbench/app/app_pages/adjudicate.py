"""Adjudicate (leads): the documents that need a decision (grades differ, or an
assessor was unsure), widest grade spread first, one at a time at a desk that
works like the Judge page: the topic, each assessor's grade, note and time,
the suggestion, and the document text (query terms marked; it scrolls in the
height left) are open, and the bar with the rationale and the grade keys stays
at the bottom of the window.

The final-grade rule's decision for the document (its fallback, e.g. the lower
median) is the *suggestion*: its button is pre-selected and marked "suggested",
and A (or its grade key) accepts it with a rationale that records it; another
grade needs a rationale typed by the lead. Below the desk, the suggestions of
many documents can be accepted at once (one transaction). The counts say how
many documents are pending and how many are already adjudicated.

Corpus- and user-provided strings are shown as plain text or escaped
(``widgets.md_escape``), never as Markdown.
"""

from __future__ import annotations

import streamlit as st

from workbench.app import cached, sections, widgets
from workbench.errors import WorkbenchError
from workbench.judging.adjudication import DEFAULT_RULE, get_rule, rule_names
from workbench.judging.queue import JudgingView
from workbench.services.judging import assessments as svc

BATCH_SHOWN = 200


# The callbacks read the "adjudicate" box and the widget values first, write to the
# store, then only update the box in place (see widgets.BOXES); widget values are
# cleared at the start of the next run (``clear_why``, ``clear_pick``).


def _decide(pool_version: str, item: svc.DeskItem, grade: int) -> None:
    """Grade button callback: the suggestion is accepted with its reason; another grade needs a rationale."""
    session, desk = widgets.session(), widgets.box("adjudicate")
    typed = (st.session_state.get("adjudicate_why") or "").strip()
    store = widgets.store()
    if session is None:
        return
    if typed:
        rationale = typed
    elif item.suggestion.grade == grade:
        rationale = f"accepted the suggestion: {item.suggestion.reason}"
    else:
        desk["msg"] = ("error", f"Grade {grade} is not the suggestion ({item.suggestion.grade}): type a rationale "
                                "first, then press the grade again.")
        return
    try:
        svc.adjudicate(store.adjudications, store.judgments, store.pools, session, pool_version, item.row.topic_id,
                       item.row.doc_id, grade, rationale)
    except WorkbenchError as e:
        desk["msg"] = ("error", f"Not saved: {widgets.md_escape(e)}")
        return
    desk.update(clear_why=True, msg=("ok", f"Final grade {grade} set for topic {widgets.md_escape(item.row.topic_id)}, "
                                           f"document {widgets.md_escape(item.row.doc_id)}."))


def _accept(pool_version: str, item: svc.DeskItem) -> None:
    if item.suggestion.grade is None:
        widgets.box("adjudicate")["msg"] = ("error", "No suggestion: every judgment is unsure. Choose a grade and "
                                                     "give a rationale.")
        return
    _decide(pool_version, item, item.suggestion.grade)


def _accept_batch(pool_version: str, items: list[svc.DeskItem]) -> None:
    session, desk = widgets.session(), widgets.box("adjudicate")
    store = widgets.store()
    if session is None:
        return
    try:
        n = svc.accept_suggestions(store.adjudications, store.pools, session, pool_version, items)
    except WorkbenchError as e:
        desk["msg"] = ("error", f"Not saved: {widgets.md_escape(e)}")
        return
    skipped = len(items) - n
    desk.update(clear_pick=True, msg=("ok", f"Accepted {n} suggestion(s)" + (
        f"; {skipped} without a suggestion (only unsure) left" if skipped else "") + "."))


def _move(to: int) -> None:
    widgets.box("adjudicate").update(at=max(0, to), msg=None, clear_why=True)


def _status_line() -> None:
    kind, text = widgets.box("adjudicate")["msg"] or ("", "")
    with st.container(key="adjudicate_status"):
        if text:
            (st.success if kind == "ok" else st.error)(text)


def _item(item: svc.DeskItem, collection: str, rubric, index: int, n: int) -> None:
    """The document at the desk: where it is, the topic and the text, the judgments, the suggestion."""
    row = item.row
    topics = cached.topics(collection)
    doc = cached.document(collection, row.doc_id)
    topic = topics.get(row.topic_id)
    state = "adjudicated" if row.adjudication is not None else "pending"
    st.caption(f"{index + 1} of {n} · {state} · topic {widgets.md_escape(row.topic_id)} · document "
               f"{widgets.md_escape(row.doc_id)} · spread {row.spread}")
    view = JudgingView(0, 0, collection, "", topic, doc) if topic is not None else None
    if view is not None:
        widgets.render_topic(view)
    # The judgments and the suggestion come before the document, which scrolls in what is left of the
    # window: at 1400 x 900 none of them is under the bar (issue 26).
    text = st.column_config.TextColumn
    st.dataframe(  # plain text cells: notes are never rendered as Markdown; fits 1024 px, the note widens
        [{"assessor": j.assessor, "grade": widgets.grade_text(j.grade, rubric),
          "time": f"{j.duration_ms / 1000:.1f} s", "saved": f"{j.saved_at:%Y-%m-%d %H:%M}", "note": j.note}
         for j in row.judgments],
        hide_index=True, key="adjudicate_judgments", height="content",
        column_config={"assessor": text("assessor", width=140), "grade": text("grade", width=130),
                       "time": text("time", width=70, help="time on the document"),
                       "saved": text("saved", width=130), "note": text("note", width=170, help="the assessor's note")},
    )
    sections.model_suggestion(row, rubric)
    s = item.suggestion
    if s.grade is None:
        st.caption(f"No suggestion: {widgets.md_escape(s.reason)}.")
    else:
        st.caption(f"Suggested (pre-selected, not yet saved): **{widgets.md_escape(widgets.grade_text(s.grade, rubric))}**"
                   f" · {widgets.md_escape(s.reason)}. A accepts it.")
    if row.adjudication is not None:
        a = row.adjudication
        st.caption(f"Adjudicated: {widgets.md_escape(widgets.grade_text(a.grade, rubric))} by "
                   f"{widgets.md_escape(a.lead)}: {widgets.md_escape(a.rationale)}")
    if view is not None:
        with st.container(key="adjudicate_doc"):
            widgets.render_document(view)


def _grade_bar(pool_version: str, item: svc.DeskItem, rubric, index: int, n: int) -> None:
    """The rationale, Previous and Next, then the grades and Accept: kept at the bottom of the window."""
    with st.container(key="adjudicate_bar"):
        top = st.columns([6, 1, 1], vertical_alignment="bottom")
        top[0].text_input("Rationale", key="adjudicate_why", label_visibility="collapsed",
                          placeholder="Rationale: why this grade is final (needed for a grade other than the "
                                      "suggestion)")
        top[1].button("Previous", key="adjudicate_prev", shortcut="P", on_click=_move, args=(index - 1,),
                      disabled=index == 0, width="stretch")
        top[2].button("Next", key="adjudicate_next", shortcut="N", on_click=_move, args=(index + 1,),
                      disabled=index >= n - 1, width="stretch")
        cols = st.columns(len(rubric.grades) + 1)
        for col, g in zip(cols, rubric.grades, strict=False):
            suggested = item.suggestion.grade == g.grade
            col.button(f"{g.label} (suggested)" if suggested else g.label, key=f"adjudicate_grade_{g.grade}",
                       shortcut=g.key, type="primary" if suggested else "secondary", width="stretch",
                       help=f"final grade {g.grade}: {g.definition}", on_click=_decide,
                       args=(pool_version, item, g.grade))
        cols[-1].button("Accept suggestion", key="adjudicate_accept", shortcut="A", width="stretch",
                        disabled=item.suggestion.grade is None, on_click=_accept, args=(pool_version, item))


def _batch(pool_version: str, desk: svc.AdjudicationDesk, collection: str) -> None:
    """Accept the suggestions of many pending documents at once."""
    pending = [i for i in desk.items if i.row.adjudication is None]
    if not pending:
        return
    st.subheader("Accept suggestions in a batch")
    titles = widgets.cached_titles(collection, "", [i.row.doc_id for i in pending[:BATCH_SHOWN]])
    text = st.column_config.TextColumn
    st.dataframe(  # fixed widths (about 650 px: 1024 px with the sidebar open), widened to the page
        [{"topic": i.row.topic_id, "document": i.row.doc_id,
          "suggestion": "" if i.suggestion.grade is None else str(i.suggestion.grade),
          "grades": ", ".join(f"{j.assessor}: {'unsure' if j.grade is None else j.grade}" for j in i.row.judgments),
          "why": i.suggestion.reason, "title": titles[i.row.doc_id]}
         for i in pending[:BATCH_SHOWN]],
        hide_index=True, key="adjudicate_batch_table",
        column_config={"topic": text("topic", width=60), "document": text("document", width=90),
                       "suggestion": text("suggestion", width=85), "grades": text("grades", width=150),
                       "why": text("why", width=130), "title": text("title", width=130)},
    )
    labels = {f"{i.row.topic_id}\x1f{i.row.doc_id}": i for i in pending}
    picked = st.multiselect("Documents", list(labels), key="adjudicate_pick",
                            format_func=lambda k: f"topic {labels[k].row.topic_id} · {labels[k].row.doc_id} → "
                                                  f"{labels[k].suggestion.grade}")
    c1, c2 = st.columns(2)
    c1.button(f"Accept the suggestions of the {len(picked)} selected", key="adjudicate_accept_picked",
              disabled=not picked, on_click=_accept_batch, args=(pool_version, [labels[k] for k in picked]))
    with_suggestion = [i for i in pending if i.suggestion.grade is not None]
    c2.button(f"Accept all {len(with_suggestion)} pending suggestions", key="adjudicate_accept_all",
              disabled=not with_suggestion, on_click=_accept_batch, args=(pool_version, with_suggestion))


def main() -> None:
    widgets.require_session(lead=True)
    st.title("Adjudicate")
    c0, c1, c2 = st.columns([3, 3, 2], vertical_alignment="bottom")  # one row: the desk needs the height
    with c0:
        pool_version = widgets.pool_picker("adjudicate")
    if pool_version is None:
        return
    rule = c1.selectbox("Suggestions from the final-grade rule", rule_names(), index=rule_names().index(DEFAULT_RULE),
                        key="adjudicate_rule", format_func=lambda r: f"{r}: {get_rule(r).description}")
    include = c2.checkbox("Include adjudicated", value=False, key="adjudicate_show_done",
                          help="Also list the documents already adjudicated (after the pending ones).")
    box = widgets.box("adjudicate")
    if box["clear_why"]:  # set by a callback after its store write; cleared here, before the widget exists
        st.session_state["adjudicate_why"] = ""
        box["clear_why"] = False
    if box["clear_pick"]:
        st.session_state["adjudicate_pick"] = []
        box["clear_pick"] = False
    desk = cached.desk(pool_version, rule, include)
    widgets.signal(pending=desk.n_pending, adjudicated=desk.n_adjudicated)
    st.caption(f"**{desk.n_pending} pending** (grades differ, or marked unsure; widest spread first) · "
               f"{desk.n_adjudicated} already adjudicated" + (" (listed after the pending ones)" if include else ""))
    _status_line()
    if not desk.items:
        st.success("Nothing to adjudicate on this pool version.")
        return
    collection = svc.pool_collection(widgets.store().pools, pool_version)
    rubric = svc.rubric_for(widgets.store().rubrics, collection)
    index = min(int(box["at"] or 0), len(desk.items) - 1)
    item = desk.items[index]
    widgets.signal(item=f"{item.row.topic_id}/{item.row.doc_id}")
    widgets.key_guard()
    _item(item, collection, rubric, index, len(desk.items))
    _grade_bar(pool_version, item, rubric, index, len(desk.items))
    _batch(pool_version, desk, collection)


main()
