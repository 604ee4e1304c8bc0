"""AppTest: assessor A judges, assessor B judges the same documents with some
disagreements, a lead looks at agreement, adjudicates and publishes; the
published qrels file is asserted line by line."""

from __future__ import annotations

import pytest
from app_helpers import RUNS, TOKENS, button, new_app, page_text, shown, sign_in
from sklearn.metrics import cohen_kappa_score

ANN = {("1", "d1"): 2, ("1", "d3"): 0, ("1", "d4"): 1, ("1", "d6"): 0, ("2", "d2"): 3, ("2", "d5"): 1}
BOB = {("1", "d1"): 2, ("1", "d3"): 0, ("1", "d4"): 3, ("1", "d6"): 1, ("2", "d2"): 3, ("2", "d5"): 1}


def _judge_all(at, grades, *, note_on=None):
    seen = []
    while at.session_state["judge"]["shown"] is not None:
        key = shown(at)
        text = page_text(at)
        for run_name in RUNS:  # blind: no run name, and no score/rank wording
            assert run_name not in text
        assert "score" not in text.lower() and "rank" not in text.lower()
        if key == note_on:
            at.text_area(key="judge_note").input("borderline")
        at.button(key=f"judge_grade_{grades[key]}").click().run()
        assert not at.exception
        assert at.success[0].value.startswith(f"Saved grade {grades[key]} for document {key[1]}")
        seen.append(key)
    return seen


def test_wrong_token_is_refused(seeded):
    at = sign_in(new_app(), "ann", "not-the-token")
    assert at.session_state["auth"]["session"] is None
    assert "wrong token" in at.error[0].value


def test_assessor_judges_resumes_and_changes_a_grade(seeded):
    db, queues = seeded
    at = sign_in(new_app(), "ann")
    assert at.caption[0].value.startswith("Document 1 of 6 · 1 of ")
    first = shown(at)
    assert first == queues["ann"][0]
    button(at, "Unsure").click().run()  # unsure first ...
    assert shown(at) == queues["ann"][1]
    button(at, "Previous").click().run()
    assert shown(at) == first and "you judged it: unsure" in at.caption[0].value
    at.button(key=f"judge_grade_{ANN[first]}").click().run()  # ... then a grade: a second row, history kept
    assert shown(at) == queues["ann"][1]
    at.button(key=f"judge_grade_{ANN[queues['ann'][1]]}").click().run()

    # a new browser session resumes at the first unjudged document
    at2 = sign_in(new_app(), "ann")
    assert shown(at2) == queues["ann"][2]
    assert "Judged 2 · unsure 0 · of 6 (33%)" in at2.sidebar.get("progress")[0].proto.text

    from workbench.store import Store

    store = Store(db, client="test")
    hist = store.judgments.judgment_history("toy", first[0], first[1], "ann")
    assert [(h.grade, h.unsure) for h in hist] == [(None, True), (ANN[first], False)]
    assert all(h.duration_ms >= 0 for h in hist)


def test_document_markup_is_escaped(seeded):
    db, queues = seeded
    at = sign_in(new_app(), "ann")
    position = queues["ann"].index(("1", "d3")) + 1
    at.session_state["judge"]["position"] = position
    at.run()
    doc_html = next(h.proto.body for h in at.html if "wb-doc" in h.proto.body)
    assert "<script>" not in doc_html and "<b>bold</b>" not in doc_html
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in doc_html
    assert "<mark>Flow</mark>" in doc_html  # query terms still highlighted


def test_two_assessors_then_lead_adjudicates_and_publishes(seeded):
    db, queues = seeded
    ann = sign_in(new_app(), "ann")
    assert sorted(_judge_all(ann, ANN, note_on=("1", "d4"))) == sorted(ANN)
    assert "End of your queue: 6/6 (100%) judged (0 of them unsure)." in [s.value for s in ann.success]
    bob = sign_in(new_app(), "bob")
    assert sorted(_judge_all(bob, BOB)) == sorted(BOB)

    # an assessor's navigation has no lead page at all
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        ann.switch_page("app_pages/agreement.py")

    lead = sign_in(new_app(), "lead")
    lead.switch_page("app_pages/agreement.py").run()
    assert not lead.exception
    keys = sorted(ANN)
    kappa = cohen_kappa_score([ANN[k] for k in keys], [BOB[k] for k in keys], weights="linear", labels=[0, 1, 2, 3])
    pairs = lead.table[0].value
    assert list(pairs["assessor A"]) == ["ann"] and list(pairs["assessor B"]) == ["bob"]
    assert pairs["kappa"].iloc[0] == f"{kappa:.3f}" and int(pairs["items"].iloc[0]) == 6
    assert int(pairs["same grade"].iloc[0]) == 4
    per_topic = lead.dataframe[0].value
    assert list(per_topic["topic"]) == ["1", "2"] and list(per_topic["items"].astype(int)) == [4, 2]

    lead.switch_page("app_pages/adjudicate.py").run()
    text = page_text(lead)
    assert "**2 pending**" in text and "0 already adjudicated" in text
    assert "1 of 2 · pending · topic 1 · document d4 · spread 2" in text  # spread 2 (d4) before spread 1 (d6)
    assert "borderline" in lead.dataframe[0].value.to_csv()  # ann's note is shown to the lead
    suggested = lead.button(key="adjudicate_grade_1")  # lower median of 1 and 3, pre-selected and marked
    assert suggested.label.endswith("(suggested)") and suggested.proto.type == "primary"
    assert "rule 'median' (lower median of the grades) of 1, 3" in text
    lead.button(key="adjudicate_grade_2").click().run()  # another grade needs a rationale
    assert lead.error[0].value.startswith("Grade 2 is not the suggestion (1): type a rationale first")
    lead.text_input(key="adjudicate_why").input("suction is a side topic")
    lead.button(key="adjudicate_grade_2").click().run()
    assert lead.success[0].value.startswith("Final grade 2 set for topic 1, document d4")
    text = page_text(lead)
    assert "**1 pending**" in text and "1 already adjudicated" in text and "document d6" in text

    lead.switch_page("app_pages/publish.py").run()
    assert [m.value for m in lead.metric][:3] == ["6", "0", "0"]  # all added vs no parent
    assert lead.selectbox(key="publish_parent_p1").value == "(none: no lineage)"  # nothing published yet
    lead.text_input(key="publish_name").input("toy-v1")
    lead.text_input(key="publish_note").input("first release").run()
    lead.button(key="publish_go").click().run()
    assert not lead.exception
    msg = lead.success[0].value
    assert msg.startswith("Published toy-v1 (parent none): 6 entries, 2 topics, 4 relevant")
    assert "Note: first release; 4 unanimous, 1 adjudicated, 1 by fallback" in msg  # the note is shown

    path = db.parent / "toy-v1.qrels"
    assert path.read_text().splitlines() == [
        "1 0 d1 2",  # unanimous
        "1 0 d3 0",  # unanimous
        "1 0 d4 2",  # 1 vs 3, adjudicated 2
        "1 0 d6 0",  # 0 vs 1, lower median 0
        "2 0 d2 3",
        "2 0 d5 1",
    ]
    from workbench.store import Store

    info = Store(db, client="test").qrels.get_qrels_info("toy-v1")
    assert (info.rule, info.pool_version, info.created_by) == ("adjudicated>unanimous>median", "p1", "lead")


@pytest.mark.parametrize("page", ["pool", "progress"])
def test_lead_overview_pages_render(seeded, page):
    lead = sign_in(new_app(), "lead")
    lead.switch_page(f"app_pages/{page}.py").run()
    assert not lead.exception
    text = page_text(lead)
    if page == "pool":
        assert "bm25-secret-run" in text  # run names are for leads, on this page only
        assert list(lead.dataframe[1].value["pooled"].astype(int)) == [4, 2]
    else:
        assert "ann" in text and "bob" in text
    assert TOKENS["lead"] not in text

