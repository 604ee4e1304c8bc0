"""AppTest of the lead's desk (issue 16): Adjudicate with suggestions (accept
one with A, or many at once), Publish with the parent defaulting to the pool's
lineage and a diff that says how each grade was decided, and Progress with
every assessor's time per judgment first."""

from __future__ import annotations

from app_helpers import COLLECTION, TOKENS, new_app, page_text, sign_in

from workbench.types import Judgment

ANN = {("1", "d1"): 2, ("1", "d3"): 0, ("1", "d4"): 1, ("1", "d6"): 0, ("2", "d2"): 3, ("2", "d5"): 1}
BOB = {("1", "d1"): 2, ("1", "d3"): 0, ("1", "d4"): 3, ("1", "d6"): 1, ("2", "d2"): 3, ("2", "d5"): 1}


def _judged(db, durations: dict[str, list[int]] | None = None):
    from workbench.store import Store

    store = Store(db, client="seed judgments")
    for who, grades in (("ann", ANN), ("bob", BOB)):
        times = iter((durations or {}).get(who, []))
        for (t, d), g in grades.items():
            store.judgments.record_judgment(Judgment(t, d, who, g, duration_ms=next(times, 0)), collection=COLLECTION,
                                  pool_version="p1")
    return store


def _lead(page: str):
    at = sign_in(new_app(), "lead", TOKENS["lead"])
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def test_accept_the_suggestion_with_its_key_then_the_rest_in_a_batch(seeded):
    db, _queues = seeded
    store = _judged(db)
    at = _lead("adjudicate")
    assert "**2 pending**" in page_text(at)
    assert at.button(key="adjudicate_accept").proto.shortcut.lower() == "a"
    at.button(key="adjudicate_accept").click().run()  # d4: lower median of 1, 3
    assert at.success[0].value.startswith("Final grade 1 set for topic 1, document d4")
    assert "**1 pending**" in page_text(at) and "1 already adjudicated" in page_text(at)
    at.button(key="adjudicate_accept_all").click().run()  # d6: lower median of 0, 1
    assert at.success[0].value == "Accepted 1 suggestion(s)."
    adj = store.adjudications.current_adjudications(COLLECTION, "p1")
    assert {k: a.grade for k, a in adj.items()} == {("1", "d4"): 1, ("1", "d6"): 0}
    assert adj[("1", "d6")].rationale == "accepted the suggestion: rule 'median' (lower median of the grades) of 0, 1"
    assert "Nothing to adjudicate" in at.success[-1].value or "**0 pending**" in page_text(at)


def test_publish_defaults_to_the_pools_latest_version_and_says_how_grades_were_decided(seeded):
    from workbench.services.judging import assessments as svc

    db, _queues = seeded
    store = _judged(db)
    lead = svc.sign_in(store.users, "lead", TOKENS["lead"])
    svc.publish(store.qrels, lead, "p1", "toy-v1", rule="median")
    store.qrels.create_qrels_version("toy-imported", COLLECTION, {"1": {"d1": 1}}, origin="imported", rule="test")
    svc.adjudicate(store.adjudications, store.judgments, store.pools, lead, "p1", "1", "d4", 2, "suction matters here")
    at = _lead("publish")
    assert at.selectbox(key="publish_parent_p1").value == "toy-v1"  # not the newer imported one
    changed = at.dataframe[0].value
    assert changed.to_dict("records") == [{"topic": "1", "document": "d4", "title": "Heat transfer",
                                           "parent grade": 1, "new grade": 2, "decided by": "adjudication"}]
    assert [m.value for m in at.metric][:3] == ["0", "1", "0"]  # added, changed, removed against toy-v1
    at.selectbox(key="publish_parent_p1").set_value("(none: no lineage)").run()
    assert "starts a lineage of its own instead of revising toy-v1" in at.warning[0].value
    added = at.dataframe[0].value.set_index("document")
    assert added.loc["d1", "decided by"] == "unanimous assessors" and added.loc["d6", "decided by"] == "rule's fallback"


def test_progress_shows_every_assessor_first_with_time_per_judgment(seeded):
    db, _queues = seeded
    _judged(db, {"ann": [1000, 3000, 5000, 0, 0, 0]})
    at = _lead("progress")
    assert [s.value for s in at.subheader] == ["All assessors", "Judging strategy", "Your queue"]
    rows = at.dataframe[0].value.set_index("assessor")
    assert rows.loc["ann", "judged"] == 6 and rows.loc["ann", "timed judgments"] == 3
    assert rows.loc["ann", "time per judgment (median)"] == "3.0 s"
    assert rows.loc["ann", "(p90)"] == "4.6 s"  # 3000 + 0.8 * (5000 - 3000) ms, linear interpolation
    assert rows.loc["bob", "time per judgment (median)"] == ""  # no timed judgment
