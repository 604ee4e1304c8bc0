"""Layouts in a real browser (issue 26), Debian's chromium via Playwright against `workbench ui`, at
1024 x 900 and 1400 x 900, checked on element boxes (never on pixels by eye):

* no grade label, key hint or bar button is cut (Judge with the Cranfield rubric's five grades and a
  pre-filled "· model" label; Adjudicate with "(suggested)"): every label fits its box;
* Judge: the note field is not under the grade bar; the sidebar's "Topics near you" lines start at
  the same x, also when the first line is not the current topic;
* Adjudicate at 1400 x 900 (and 1024): the assessors' table and the rationale field are in the window
  and not under the sticky bar;
* wide tables fit: no horizontal scrolling of the Qrels versions list (2,290 px of table before with
  the demo's runs; here 12 columns and a long rule), its runs x measures score changes (17 runs), the
  Publish page's tables, Adjudicate's tables and My judgments.

Every wait is on the app's status marker or an element the app renders.
"""

from __future__ import annotations

import pytest
from app_helpers import (
    COLLECTION,
    TOKENS,
    browser_sign_in,
    press_key,
    running_ui,
    seed_store,
    status,
)

pytestmark = pytest.mark.browser
TIMEOUT = 60_000
MODEL = "bot-judge-7"
LONG_RULE = ("cranqrel code -> grade: 1->4, 2->3, 3->2, 4->1, -1 (code 5)->0; grade = 5 - code (Cleverdon's codes, "
             "lower = more relevant; rubric 'cranfield')")
EXTRA_RUNS = [f"bm25-variant-with-a-long-name-{i:02d}" for i in range(15)]  # 17 runs with the seeded two

CUT = """(root) => [...root.querySelectorAll("button")].filter((b) => b.offsetParent !== null).flatMap((b) =>
  [...b.querySelectorAll("[data-testid='stMarkdownContainer'], kbd")].filter((e) => e.offsetParent !== null
    && (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)).map((e) => e.innerText))"""
"""The labels and key hints of ``root``'s visible buttons whose text does not fit their box."""

WIDE = """() => [...document.querySelectorAll("[data-testid='stDataFrame']")].filter((e) => e.offsetParent !== null
  && !e.closest("[data-testid='stExpander']")).map((e) => { const s = e.querySelector('.dvn-scroller');
  return s ? s.scrollWidth - s.clientWidth : -1; })"""
"""Per visible data frame (outside expanders): how much wider its content is than its box (px)."""

TOPICS_NEAR = "[data-testid='stSidebar'] [data-testid='wb-topics'], [data-testid='stSidebar'] [data-testid='stText']"
"""The sidebar's "Topics near you" block (``st.text`` before issue 26)."""

TOPIC_X = """(root) => { const xs = []; const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT); let n;
  while ((n = walk.nextNode())) { let i = -1; while ((i = n.data.indexOf('topic ', i + 1)) >= 0) {
    const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
    xs.push(Math.round(r.getBoundingClientRect().x)); } } return xs; }"""
"""The x of the first letter of every "topic " in ``root``'s text (one per line)."""


@pytest.fixture
def layout_db(tmp_path):
    """The seeded store (tests/app/app_helpers.seed_store) judged on the Cranfield rubric: ann and bob
    disagree on every document with notes, a model assessor graded everything and pre-fill is on, 17
    runs, a published qrels version revised by a second one, an imported one with a long rule."""
    from workbench.services.judging import assessments as svc
    from workbench.services.judging.model_assessor import set_prefill
    from workbench.store import Store
    from workbench.types import Judgment, RunInfo

    db = tmp_path / "labels" / "wb.duckdb"
    db.parent.mkdir()
    queues = seed_store(db, assessors=("ann", "bob", "cy"), overlap=3)  # cy judges on screen, from position 1
    store = Store(db, client="seed", lock_timeout_s=60)
    store.rubrics.set_collection_rubric(COLLECTION, "cranfield", lead="lead")
    version = store.collections.latest_collection_version(COLLECTION)
    for i, name in enumerate(EXTRA_RUNS):
        store.runs.save_run(RunInfo(name, "imported", {}, 10, COLLECTION, version),
                            {"1": {"d1": 3.0 - i / 10, "d4": 2.0, "d6": 1.0}, "2": {"d5": 2.0, "d2": 1.0 + i / 10}})
    lead = svc.sign_in(store.users, "lead", TOKENS["lead"])
    note = "read the abstract twice: the method applies to the subsonic case only, so it is background at most"
    items = sorted({k for q in queues.values() for k in q})
    for who, grade in (("ann", 0), ("bob", 3)):
        for t, d in items:
            store.judgments.record_judgment(Judgment(t, d, who, grade, note=f"{who}: {note}"),
                                            collection=COLLECTION, pool_version="p1")
    store.qrels.create_qrels_version("toy-reference", COLLECTION, {"1": {"d1": 4}, "2": {"d2": 3}},
                                     origin="imported", rule=LONG_RULE, created_by="workbench ingest")
    svc.publish(store.qrels, lead, "p1", "toy-v1", rule="median", note="first release: " + note)
    t, d = items[0]  # agreed 4 in toy-v2 (0 in toy-v1), then 2: Publish shows a changed grade
    for who in ("ann", "bob"):
        store.judgments.record_judgment(Judgment(t, d, who, 4), collection=COLLECTION, pool_version="p1")
    svc.publish(store.qrels, lead, "p1", "toy-v2", rule="median", parent_version="toy-v1", note="second: " + note)
    for who in ("ann", "bob"):
        store.judgments.record_judgment(Judgment(t, d, who, 2), collection=COLLECTION, pool_version="p1")
    store.users.add_model_assessor(MODEL, model="minilm", model_kind="bi-encoder", weights_hash="cd" * 32,
                                   grade_mapping="0:<0.3,1:<0.5,2:<0.7,3", lead="lead")
    for t, d in items:
        store.judgments.record_judgment(Judgment(t, d, MODEL, 1), collection=COLLECTION, pool_version="p1")
    set_prefill(store.judging, lead, "p1", MODEL)
    store.release_file()
    return db


def _box(page, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def _inside_window(box: dict[str, float], height: int) -> bool:
    return box["y"] >= 0 and box["y"] + box["height"] <= height


def _above(box: dict[str, float], bar: dict[str, float]) -> bool:
    """``box`` ends where the bar starts or higher (not under it)."""
    return box["y"] + box["height"] <= bar["y"] + 0.5


def _buttons_drawn(page, keys: list[str]) -> None:
    """Wait until these buttons show their labels (Streamlit mounts a button's code lazily)."""
    for key in keys:
        page.locator(f".st-key-{key} button [data-testid='stMarkdownContainer']").first.wait_for(
            state="visible", timeout=TIMEOUT)


def _tables_drawn(page) -> None:
    page.locator("[data-testid='stDataFrame'] .dvn-scroller").first.wait_for(state="attached", timeout=TIMEOUT)


def _judge_page(page, width: int) -> None:
    browser_sign_in(page, "cy", "cy-token-1")
    marker = status(page, page="judge", position=1)
    assert marker["prefill"] == "1"  # the model's grade is pre-filled: its label carries "· model"
    _buttons_drawn(page, [f"judge_grade_{g}" for g in range(5)] + ["judge_unsure", "judge_undo_btn"])
    bar = page.locator(".st-key-judge_bar")
    labels = [b.inner_text() for b in bar.get_by_role("button").all() if b.is_visible()]
    assert any("minimum interest" in t and "model" in t for t in labels), labels
    assert bar.evaluate(CUT) == [], f"cut labels at {width} px"
    bar_box = _box(page, ".st-key-judge_bar")
    assert _inside_window(bar_box, 900)
    assert _above(_box(page, "textarea[aria-label='Note (optional)']"), bar_box)
    for _ in range(4):  # to topic 2: the first line of "Topics near you" is then not the current topic
        position = int(status(page)["position"])
        press_key(page, "n")
        status(page, position=position + 1)
    near = page.locator(TOPICS_NEAR).first
    lines = near.inner_text().strip().splitlines()
    assert len(lines) == 2 and "▶" not in lines[0] and "▶" in lines[1], lines
    xs = near.evaluate(TOPIC_X)
    assert len(xs) == 2 and len(set(xs)) == 1, xs  # "topic 1" and "topic 2" start at the same x
    page.get_by_role("link", name="My judgments").click()
    status(page, page="my_judgments")
    _tables_drawn(page)
    assert page.evaluate(WIDE) == [0], f"My judgments scrolls sideways at {width} px"


def _lead_pages(page, width: int) -> None:
    browser_sign_in(page, "lead")
    status(page, page="judge", user="lead")
    page.get_by_role("link", name="Adjudicate").click()
    status(page, page="adjudicate", user="lead")
    _buttons_drawn(page, [f"adjudicate_grade_{g}" for g in range(5)] + ["adjudicate_accept", "adjudicate_next"])
    _tables_drawn(page)
    bar = _box(page, ".st-key-adjudicate_bar")
    table = _box(page, "[data-testid='stDataFrame']")  # the first table: each assessor's grade, note, time
    why = _box(page, "input[aria-label='Rationale']")
    assert _inside_window(table, 900) and _above(table, bar), (table, bar)
    assert _inside_window(why, 900), why
    assert page.locator(".st-key-adjudicate_bar").evaluate(CUT) == [], f"cut labels at {width} px"
    assert [w <= 1 for w in page.evaluate(WIDE)] == [True, True], page.evaluate(WIDE)  # judgments, batch

    page.get_by_role("link", name="Publish").click()
    status(page, page="publish", user="lead")
    _tables_drawn(page)
    widths = page.evaluate(WIDE)
    assert len(widths) == 2 and max(widths) <= 1, widths  # the changed grades, the versions

    page.get_by_role("link", name="Qrels versions").click()
    marker = status(page, page="qrels_versions", user="lead")
    _tables_drawn(page)
    page.locator("[data-testid='stDataFrame']").nth(2).locator(".dvn-scroller").wait_for(state="attached")
    widths = page.evaluate(WIDE)  # the versions, the score changes (17 runs), Judged@k changes
    assert len(widths) == 3, (widths, marker)
    if width >= 1400:
        assert max(widths) <= 1, widths
    else:  # the runs x measures tables are made for 1400 px (the Scoreboard's); the versions list fits
        assert widths[0] <= 1, widths


@pytest.mark.parametrize("width", [1024, 1400])
def test_labels_are_whole_and_tables_fit(layout_db, tmp_path, browser, width):
    with running_ui(layout_db, tmp_path / "server.log") as (url, proc):
        for pages in (_judge_page, _lead_pages):
            context = browser.new_context(viewport={"width": width, "height": 900})  # its own cookie
            page = context.new_page()
            page.set_default_timeout(TIMEOUT)
            page.goto(url)
            pages(page, width)
            context.close()
    assert "Traceback" not in (tmp_path / "server.log").read_text()
