"""Real-browser tests of the judging UI (issue 16, "Done when"), Debian's
chromium via Playwright against `workbench ui`:

* Ctrl+Enter, Enter and Tab+Enter in the note (and Enter/Space on a focused
  grade button) save no grade, on a new document and on one graded before;
* a reload keeps the session and the page; a deep link to a lead page works
  for a lead and is refused for an assessor;
* the grade bar is inside the window at 1400 x 900 for the longest Cranfield
  document;
* Undo (Backspace, Ctrl+Z) restores the previous grade;
* the Scoreboard with a partial run keeps the complete runs' topic set, asks
  no host but the UI's (icons, fonts) and logs no Vega warning.

Every wait is on the app's status marker (``app_helpers.status``/``sync``) or
on an element the app renders; none on elapsed time.
"""

from __future__ import annotations

import json
import re

import pytest
from app_helpers import (
    COLLECTION,
    ROOT,
    TOKENS,
    browser_sign_in,
    press_key,
    running_ui,
    status,
    sync,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
TIMEOUT = 60_000


def _stop(proc) -> None:
    import os
    import signal

    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def _history(db, doc_id, who="ann"):
    from workbench.store import Store

    store = Store(db, client="pytest check")
    topic = next(t for t, d in [(j.topic_id, j.doc_id) for j in store.judgments.current_judgments(COLLECTION)] + [("1", doc_id)]
                 if d == doc_id)
    return store.judgments.judgment_history(COLLECTION, topic, doc_id, who)


def _tab_out_of_the_note(page) -> None:
    """Tab out of the edited note: the field commits, which is one run; wait for it to finish."""
    run = int(status(page)["run"])
    page.keyboard.press("Tab")
    status(page, run=run + 1)


def test_note_keys_never_save_a_grade(ui_server, page):
    url, db, queues, log_path, proc = ui_server
    page.set_default_timeout(TIMEOUT)
    page.goto(url)
    browser_sign_in(page, "ann")
    status(page, position=1)
    note = page.get_by_label("Note (optional)")

    # a new document: Ctrl+Enter keeps the note as a draft, Enter adds a line, Tab+Enter reaches Save note
    note.click()
    note.type("first look")
    page.keyboard.press("Control+Enter")
    status(page, position=1, draft="yes")
    note.click()
    page.keyboard.press("Enter")
    note.type("second line")
    _tab_out_of_the_note(page)
    page.keyboard.press("Enter")
    marker = sync(page)
    assert (marker["position"], marker["saved"]) == ("1", "0")

    # a document graded 0 before: the same keys, then Enter and Space on a focused grade button
    press_key(page, "n")
    status(page, position=2)
    press_key(page, "0")
    status(page, position=3, saved=1)
    press_key(page, "p")
    status(page, position=2)
    note.click()
    note.type("zero, surely")
    page.keyboard.press("Control+Enter")
    status(page, position=2, draft="yes")
    note.click()
    page.keyboard.press("Enter")
    _tab_out_of_the_note(page)
    page.keyboard.press("Enter")  # Save note: the grade stays 0
    status(page, position=2, draft="no")
    page.keyboard.press("Tab")  # the first grade button of the bar
    page.keyboard.press("Enter")
    page.keyboard.press(" ")
    marker = sync(page)
    assert (marker["position"], marker["saved"]) == ("2", "1")

    _stop(proc)
    assert "Traceback" not in log_path.read_text()
    first, second = queues["ann"][0][1], queues["ann"][1][1]
    assert [(h.grade, h.unsure) for h in _history(db, first)] == [(None, False)]  # Save note only: no judgment
    assert _history(db, first)[0].note == "first look\nsecond line"
    hist = _history(db, second)
    assert [h.grade for h in hist] == [0, 0] and hist[-1].note == "zero, surely"  # only the grade pressed


def test_reload_keeps_the_session_and_the_page(ui_server, page):
    url, db, queues, log_path, proc = ui_server
    page.set_default_timeout(TIMEOUT)
    page.goto(url)
    browser_sign_in(page, "lead")
    status(page, page="judge")
    page.get_by_role("link", name="Progress").click()
    status(page, page="progress")
    assert page.url.endswith("/progress") and TOKENS["lead"] not in page.url
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    (name, sid), = [(n, v) for n, v in cookies.items() if n.startswith("wb_session_")]
    assert len(sid) >= 40 and TOKENS["lead"] not in sid
    page.reload()
    status(page, page="progress")
    expect(page.get_by_role("heading", name="Progress")).to_be_visible()
    expect(page.get_by_label("Access token")).to_have_count(0)
    page.get_by_role("button", name="Sign out").click()
    status(page, page="progress", user="")  # the address stays; the sign-in form shows
    page.reload()  # signed out: the old cookie no longer opens a session
    status(page, page="progress", user="")
    expect(page.get_by_label("Access token")).to_be_visible()


def test_deep_link_to_a_lead_page_works_for_a_lead_and_not_for_an_assessor(ui_server, browser):
    url, db, queues, log_path, proc = ui_server
    lead = browser.new_page()
    lead.set_default_timeout(TIMEOUT)
    lead.goto(f"{url}/agreement")
    expect(lead.get_by_text("Sign in to open Agreement.")).to_be_visible()
    browser_sign_in(lead, "lead")
    status(lead, page="agreement", user="lead")  # the sign-in form at this address is page "agreement" too
    expect(lead.get_by_role("heading", name="Agreement")).to_be_visible()
    assert lead.url.endswith("/agreement")

    ann = browser.new_context().new_page()  # another browser: no shared cookie
    ann.set_default_timeout(TIMEOUT)
    ann.goto(f"{url}/agreement")
    browser_sign_in(ann, "ann")
    status(ann, page="agreement", refused="yes")
    expect(ann.get_by_text("Agreement is for leads. ann is an assessor.")).to_be_visible()
    expect(ann.get_by_text("Cohen's kappa")).to_have_count(0)
    ann.goto(f"{url}/agreement")  # a reload of the address: still refused, still signed in
    status(ann, page="agreement", refused="yes")


@pytest.fixture
def longest_cranfield(tmp_path, monkeypatch):
    """A store holding the longest Cranfield document (the most text of the 1,400)
    in ann's queue, for topic 1 of the Cranfield queries."""
    from pooling.pool import build_pool
    from workbench.services.judging import assessments as svc
    from workbench.store import Store
    from workbench.types import Document, RunInfo, Topic

    folder = ROOT / "sample_corpus" / "cranfield"
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").read_text().splitlines() if line.strip()]
    longest = max(docs, key=lambda d: len(d.get("title", "")) + len(d.get("text", "")))
    query = json.loads((folder / "queries.jsonl").read_text().splitlines()[0])
    db = tmp_path / "labels" / "cran.duckdb"
    db.parent.mkdir()
    store = Store(db, client="seed", lock_timeout_s=60)
    store.collections.ingest_collection(COLLECTION, [Document(longest["_id"], longest["title"], longest["text"])],
                            [Topic(query["_id"], query["text"])])
    run = {query["_id"]: {longest["_id"]: 1.0}}
    version = store.collections.latest_collection_version(COLLECTION)
    store.runs.save_run(RunInfo("r", "imported", {}, 1, COLLECTION, version), run)
    store.pools.save_pool("p1", build_pool({"r": run}, 1), collection=COLLECTION,
                    collection_version=store.collections.latest_collection_version(COLLECTION))
    store.users.add_user("lead", "lead", token=TOKENS["lead"])
    store.users.add_user("ann", "assessor", token=TOKENS["ann"], lead="lead")
    svc.assign_pool(store, svc.sign_in(store.users, "lead", TOKENS["lead"]), "p1", ["ann"])
    return db, longest


def test_grade_bar_is_inside_the_window_for_the_longest_cranfield_document(longest_cranfield, tmp_path, browser):
    db, longest = longest_cranfield
    assert len(longest["text"]) > 4000
    with running_ui(db, tmp_path / "server.log") as (url, proc):
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(TIMEOUT)
        page.goto(url)
        browser_sign_in(page, "ann")
        status(page, position=1, doc=f"1/{longest['_id']}")
        bar = page.locator(".st-key-judge_bar")
        for button in bar.get_by_role("button").all():
            if button.is_visible():
                expect(button).to_be_in_viewport()
        box = bar.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 900, box
        page.mouse.wheel(0, 3000)  # the page scrolls; the bar stays
        expect(bar.get_by_role("button", name=re.compile("^Unsure"))).to_be_in_viewport()


def test_undo_restores_the_previous_grade(ui_server, page):
    url, db, queues, log_path, proc = ui_server
    page.set_default_timeout(TIMEOUT)
    page.goto(url)
    browser_sign_in(page, "ann")
    status(page, position=1)
    press_key(page, "1")
    status(page, position=2, saved=1)
    expect(page.get_by_role("button", name="Undo").first).to_be_visible()  # the link in the saved message
    press_key(page, "p")
    status(page, position=1)
    press_key(page, "3")
    status(page, position=2, saved=1, undo=2)
    press_key(page, "Backspace")
    status(page, position=1, saved=1, undo=1)
    expect(page.get_by_text(re.compile(r"you judged it: 1 "))).to_be_visible()
    press_key(page, "Control+z")
    status(page, position=1, saved=0, undo=0)
    _stop(proc)
    doc = queues["ann"][0][1]
    assert [h.grade for h in _history(db, doc)] == [1, 3, 1, None]  # append-only; no judgment now


def test_question_mark_lists_the_keys(ui_server, page):
    url, db, queues, log_path, proc = ui_server
    page.set_default_timeout(TIMEOUT)
    page.goto(url)
    browser_sign_in(page, "ann")
    status(page, position=1)
    press_key(page, "?")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_text("undo the last save")).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    marker = sync(page)
    assert (marker["position"], marker["saved"]) == ("1", "0")


@pytest.fixture
def board_store(tmp_path):
    """test_scoreboard's store: runs bm25 and dense cover every topic, partial only topic 1."""
    from test_scoreboard import _seed

    db = tmp_path / "labels" / "wb.duckdb"
    db.parent.mkdir()
    _seed(db)
    return db


def test_scoreboard_with_a_partial_run_keeps_the_complete_runs_topics(board_store, tmp_path, browser):
    with running_ui(board_store, tmp_path / "server.log") as (url, proc):
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(TIMEOUT)
        foreign: list[str] = []
        page.on("request", lambda r: foreign.append(r.url) if not r.url.startswith(
            ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")) else None)
        console: list[str] = []
        page.on("console", lambda m: console.append(m.text))
        page.goto(url)
        browser_sign_in(page, "lead")
        status(page, page="judge")
        page.get_by_role("link", name="Scoreboard").click()
        marker = status(page, page="scoreboard", runs=2)
        assert marker["evaluated"] == "2"  # topics 1 and 2: the partial run does not shrink them
        expect(page.get_by_text("2 evaluated", exact=True)).to_be_visible()
        expect(page.get_by_text("Partial runs (scored apart)")).to_be_visible()
        page.locator("[data-testid='stVegaLiteChart'] canvas, [data-testid='stVegaLiteChart'] svg").first.wait_for()
        table = page.locator("[data-testid='stDataFrame']").first  # runs x measures: the first table
        table.wait_for()
        # the runs x measures table fits: no horizontal scrolling at 1400 px, so RR@10 and P@10 show
        overflow = table.evaluate("e => { const s = e.querySelector('.dvn-scroller');"
                                  " return s ? [s.scrollWidth, s.clientWidth] : null; }")
        assert overflow is not None and overflow[0] - overflow[1] <= 1, overflow
        for name in ("Qrels versions", "Publish", "Progress"):
            page.get_by_role("link", name=name).click()
            status(page, page=name.lower().replace(" ", "_"))
    assert foreign == []  # no fonts.gstatic.com icons, no other host
    vega = [m for m in console if "Infinite extent" in m or "Log scale domain" in m]
    assert vega == []
