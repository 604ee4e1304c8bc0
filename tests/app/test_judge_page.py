"""AppTest of the Judge page (issue 16, the assessor's screen): position in the
topic and the new-topic notice, notes saved with a grade or on their own but
never as a grade, Undo, My judgments, and the sidebar's topic window.

ann's queue (seed 11, band size 2): topic 1 has 4 documents, topic 2 has 2.
"""

from __future__ import annotations

from app_helpers import COLLECTION, new_app, shown, sign_in


def _store(db):
    from workbench.store import Store

    return Store(db, client="pytest check")


def _current(db, doc, who="ann"):
    cur = {(c.doc_id, c.assessor): (c.grade, c.unsure) for c in _store(db).judgments.current_judgments(COLLECTION)}
    return cur.get((doc, who))


def test_position_in_topic_and_the_new_topic_notice(seeded):
    db, queues = seeded
    at = sign_in(new_app(), "ann")
    assert at.caption[0].value == "Document 1 of 6 · 1 of 4 in topic 1"
    assert at.info[0].value.startswith("New topic: 1.")
    assert any("new topic" in h.proto.body for h in at.html if "wb-topic" in h.proto.body)
    at.button(key="judge_grade_1").click().run()
    assert at.caption[0].value == "Document 2 of 6 · 2 of 4 in topic 1"
    assert not any("new topic" in h.proto.body for h in at.html if "wb-topic" in h.proto.body)
    for _ in range(3):
        at.button(key="judge_next").click().run()
    assert at.caption[0].value == "Document 5 of 6 · 1 of 2 in topic 2"
    assert at.info[0].value.startswith("New topic: 2.")


def test_a_note_is_kept_as_a_draft_and_saved_with_the_grade_never_as_one(seeded):
    db, queues = seeded
    at = sign_in(new_app(), "ann")
    first = shown(at)
    at.text_area(key="judge_note").input("check figure 3").run()  # Ctrl+Enter / leaving the field
    assert not at.exception
    assert at.info[0].value.startswith("Note kept: it is saved with the grade you give")
    assert _current(db, first[1]) is None  # no grade was saved
    at.button(key="judge_next").click().run()
    at.button(key="judge_prev").click().run()
    assert at.text_area(key="judge_note").value == "check figure 3"  # the draft survives moving around
    at.button(key="judge_grade_2").click().run()
    hist = _store(db).judgments.judgment_history(COLLECTION, *first, "ann")
    assert [(h.grade, h.note) for h in hist] == [(2, "check figure 3")]


def test_save_note_on_its_own_keeps_the_grade_or_saves_no_judgment(seeded):
    db, queues = seeded
    at = sign_in(new_app(), "ann")
    first = shown(at)
    at.text_area(key="judge_note").input("unsure about the scope")
    at.button(key="judge_save_note").click().run()
    assert "Note saved for document" in at.info[0].value and "no grade yet" in at.info[0].value
    assert _current(db, first[1]) is None
    assert shown(at) == first  # a note does not advance
    at.button(key="judge_grade_0").click().run()
    at.button(key="judge_prev").click().run()
    assert at.text_area(key="judge_note").value == "unsure about the scope"
    at.text_area(key="judge_note").input("off scope")
    at.button(key="judge_save_note").click().run()
    assert "(grade 0; nothing else changed)" in at.info[0].value
    assert _current(db, first[1]) == (0, False)
    assert [h.note for h in _store(db).judgments.judgment_history(COLLECTION, *first, "ann")][-1] == "off scope"


def test_undo_restores_the_previous_grade_and_goes_back(seeded):
    db, queues = seeded
    at = sign_in(new_app(), "ann")
    first = shown(at)
    at.button(key="judge_grade_1").click().run()
    assert at.button(key="judge_undo_link").label == "Undo"  # the link in the saved message
    at.button(key="judge_prev").click().run()
    at.button(key="judge_grade_3").click().run()
    assert _current(db, first[1]) == (3, False)
    at.button(key="judge_undo_btn").click().run()  # Backspace / Ctrl+Z
    assert not at.exception
    assert shown(at) == first and _current(db, first[1]) == (1, False)
    assert at.success[0].value.startswith(f"Undone: document {first[1]} (#1) is grade 1 again.")
    at.button(key="judge_undo_link").click().run()  # and the first save: no judgment at all
    assert _current(db, first[1]) is None
    assert "is not judged again" in at.success[0].value
    assert at.button(key="judge_undo_btn").disabled


def test_my_judgments_lists_statuses_filters_and_jumps(seeded):
    db, queues = seeded
    at = sign_in(new_app(), "ann")
    at.text_area(key="judge_note").input("fig. 3 answers it")
    at.button(key="judge_grade_2").click().run()
    at.button(key="judge_next").click().run()  # skip #2
    at.button(key="judge_unsure").click().run()  # #3 unsure
    at.text_area(key="judge_note").input("a note, no grade")  # #4: a note saved on its own
    at.button(key="judge_save_note").click().run()
    at.switch_page("app_pages/my_judgments.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["status"]) == ["judged", "skipped", "unsure", "not yet", "not yet", "not yet"]
    assert list(table["note"]) == ["fig. 3 answers it", "", "", "a note, no grade", "", ""]  # issue 26
    assert [m.value for m in at.metric] == ["1", "1", "1", "3"]
    at.pills(key="mine_status").set_value(["skipped"]).run()
    assert list(at.dataframe[0].value["position"]) == [2]
    at.number_input(key="mine_goto").set_value(2)
    at.button(key="mine_open").click().run()
    assert not at.exception
    assert shown(at) == queues["ann"][1]
    assert at.caption[0].value.startswith("Document 2 of 6")


def _topics_near(at) -> list[tuple[str, str]]:
    """The sidebar's "Topics near you" lines as (marker, text)."""
    import re

    (body,) = [h.proto.body for h in at.html if "data-testid='wb-topics'" in h.proto.body]
    return re.findall(r"<span class='wb-mark'>(.*?)</span><span class='wb-topic-text'>(.*?)</span>", body)


def test_sidebar_shows_the_current_topic_and_jumps_to_a_topic(seeded):
    db, queues = seeded
    at = sign_in(new_app(), "ann")
    assert _topics_near(at) == [("▶", "topic 1: 0/4"), ("", "topic 2: 0/2")]
    at.sidebar.selectbox(key="sidebar_jump").set_value("2").run()
    assert not at.exception
    assert at.caption[0].value == "Document 5 of 6 · 1 of 2 in topic 2"
    # the first line is not the current topic: its text keeps its column (issue 26; the browser test
    # tests/app/test_layout_browser.py checks the x of every line)
    assert _topics_near(at) == [("", "topic 1: 0/4"), ("▶", "topic 2: 0/2")]
