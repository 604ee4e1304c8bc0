"""AppTest: corpus- and user-provided strings are never rendered as Markdown
(QA defect: a title ``![p](http://127.0.0.1:18732/title.png) **b**`` and a note
``![n](http://127.0.0.1:18732/note.png) :red[red]`` made the lead's browser
fetch the images on the Adjudicate page)."""

from __future__ import annotations

import html
import re

import app_helpers
import pytest
from app_helpers import DOCUMENTS, TOKENS, new_app, sign_in

from workbench.app.widgets import md_escape
from workbench.types import Document, Judgment

TITLE = "![p](http://127.0.0.1:18732/title.png) **b**"
NOTE = "![n](http://127.0.0.1:18732/note.png) :red[red]"
WHY = "![w](http://127.0.0.1:18732/why.png) _x_"

# The payloads' Markdown when live (not backslash-escaped): an image or link
# opener, the bold markers of the payloads and a :red[...] directive.
LIVE = re.compile(r"(?<!\\)!\[|(?<!\\)\]\(|(?<!\\)\*\*b|:red\[|(?<!\\)\*\*:red")


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """The app test store with document d1's title replaced by Markdown."""
    import streamlit as st

    docs = [Document(d.doc_id, TITLE, d.text) if d.doc_id == "d1" else d for d in DOCUMENTS]
    monkeypatch.setattr(app_helpers, "DOCUMENTS", docs)
    db = tmp_path / "labels" / "wb.duckdb"
    db.parent.mkdir()
    queues = app_helpers.seed_store(db)
    monkeypatch.setenv("WORKBENCH_DB", str(db))
    monkeypatch.setenv("WORKBENCH_LOCK_TIMEOUT", "60")
    st.cache_resource.clear()
    yield db, queues
    st.cache_resource.clear()


def _markdown_strings(at) -> list[str]:
    out: list[str] = []
    for kind in ("markdown", "caption", "success", "error", "warning", "info", "title", "subheader"):
        out.extend(str(el.value) for el in getattr(at, kind, []))
    for t in at.table:
        out.append(t.value.to_csv())
    out.extend(str(e.label) for e in at.expander)  # expander labels render Markdown too
    out.extend(str(m.label) for m in at.metric)
    return out


def test_md_escape_makes_markdown_inert():
    assert md_escape(TITLE) == r"\!\[p\](http://127.0.0.1:18732/title.png) \*\*b\*\*"
    assert md_escape(NOTE) == r"\!\[n\](http://127.0.0.1:18732/note.png) :red\[red\]"
    assert md_escape("- a\n1. b\nplain d1 0.5") == "\\- a\n1\\. b\nplain d1 0.5"
    assert not LIVE.search(md_escape(TITLE + NOTE + WHY))
    assert LIVE.search(TITLE) and LIVE.search(NOTE)  # the check itself can fail


def test_adjudicate_page_shows_titles_notes_and_rationales_as_text(hostile):
    from workbench.store import Store

    db, _queues = hostile
    store = Store(db, client="test")
    store.judgments.record_judgment(Judgment("1", "d1", "ann", 0, note=NOTE), collection="toy", pool_version="p1")
    store.judgments.record_judgment(Judgment("1", "d1", "bob", 3, note="**bold claim**"), collection="toy", pool_version="p1")
    del store

    lead = sign_in(new_app(), "lead", TOKENS["lead"])
    lead.switch_page("app_pages/adjudicate.py").run()
    assert not lead.exception
    shown = _markdown_strings(lead)
    doc_html = "".join(h.proto.body for h in lead.html if "wb-doc" in h.proto.body)
    assert html.escape(TITLE) in doc_html  # the title is shown, HTML-escaped inside the document card
    assert not any(LIVE.search(s) for s in shown), [s for s in shown if LIVE.search(s)]
    notes = lead.dataframe[0].value["note"].tolist()  # plain-text cells: the note literally
    assert NOTE in notes and "**bold claim**" in notes
    assert TITLE in lead.dataframe[1].value["title"].tolist()  # the batch table: plain text too

    lead.text_input(key="adjudicate_why").input(WHY)
    lead.button(key="adjudicate_grade_2").click().run()
    lead.checkbox(key="adjudicate_show_done").check().run()
    assert not lead.exception
    shown = _markdown_strings(lead)
    assert any(md_escape(WHY) in s for s in shown)
    assert not any(LIVE.search(s) for s in shown), [s for s in shown if LIVE.search(s)]


def test_other_pages_escape_the_hostile_title_and_note(hostile):
    from workbench.store import Store

    db, _queues = hostile
    store = Store(db, client="test")
    store.judgments.record_judgment(Judgment("1", "d1", "ann", 0, note=NOTE), collection="toy", pool_version="p1")
    del store
    lead = sign_in(new_app(), "lead", TOKENS["lead"])
    for page in ("progress", "pool", "agreement", "publish", "judge"):
        lead.switch_page(f"app_pages/{page}.py").run()
        assert not lead.exception, page
        shown = _markdown_strings(lead)
        assert not any(LIVE.search(s) for s in shown), (page, [s for s in shown if LIVE.search(s)])


QRELS_NAME = "**:red[q]**![i](http:127.0.0.1:18732)[l](http:127.0.0.1:18732)"
CHILD_NAME = "v2**b**`tick"  # no spaces: qrels version names have none (text.check_stored_name)


def test_qrels_version_names_are_text_on_the_qrels_versions_and_scoreboard_pages(hostile):
    """QA defect: qrels version names were rendered as Markdown in 6 places
    (lineage, compare header, subheader, caption, warnings, expander label)."""
    from workbench.store import Store

    db, _queues = hostile
    store = Store(db, client="test")
    store.qrels.create_qrels_version(QRELS_NAME, "toy", {"1": {"d1": 2, "d3": 0}, "2": {"d2": 1}},
                               origin="imported", rule="test")
    store.qrels.create_qrels_version(CHILD_NAME, "toy", {"1": {"d1": 2, "d4": 1}, "2": {"d2": 1}},
                               origin="imported", rule="test", parent_version=QRELS_NAME)
    del store
    lead = sign_in(new_app(), "lead", TOKENS["lead"])
    lead.switch_page("app_pages/qrels_versions.py").run()
    assert not lead.exception
    assert lead.selectbox(key="qrels_versions_pick").value == CHILD_NAME  # compared with its parent
    shown = _markdown_strings(lead)
    assert sum(md_escape(QRELS_NAME) in s for s in shown) >= 4, shown  # lineage, header, subheader, caption, label
    assert not any(LIVE.search(s) for s in shown), [s for s in shown if LIVE.search(s)]

    lead.switch_page("app_pages/scoreboard.py").run()
    lead.selectbox(key="scoreboard_qrels_pick").set_value(QRELS_NAME).run()
    assert not lead.exception
    shown = _markdown_strings(lead)
    assert any(md_escape(QRELS_NAME) in s for s in shown)
    assert not any(LIVE.search(s) for s in shown), [s for s in shown if LIVE.search(s)]
