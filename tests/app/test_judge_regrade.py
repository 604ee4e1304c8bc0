"""AppTest: a quick re-grade on the Judge page (QA defect: pressing 1 then 3
about 30 ms apart showed "Saved grade 3" while the store kept grade 1).

A fast second key press reaches the server before the page re-renders, so its
button carries the arguments of the same shown document. The test reproduces
that by putting the previous screen's state back before pressing again.
"""

from __future__ import annotations

import copy

from app_helpers import new_app, shown, sign_in


def _back_to(at, position: int, shown_state: dict):
    judge = at.session_state["judge"]  # the Judge page's state box, changed in place as a stale screen
    judge["position"] = position
    judge["shown"] = copy.deepcopy(shown_state)
    return at.run()


def test_quick_regrade_lands_and_the_message_reports_the_store(seeded):
    from workbench.store import Store

    db, queues = seeded
    at = sign_in(new_app(), "ann")
    first = shown(at)
    position = at.session_state["judge"]["position"]
    screen = copy.deepcopy(at.session_state["judge"]["shown"])

    at.button(key="judge_grade_1").click().run()
    assert at.success[0].value.startswith(f"Saved grade 1 for document {first[1]}")
    _back_to(at, position, screen)  # the stale screen: same shown token
    assert shown(at) == first
    at.button(key="judge_grade_3").click().run()
    assert not at.exception
    assert at.success[0].value.startswith(f"Saved grade 3 for document {first[1]}")

    _back_to(at, position, screen)  # a double submit of the 3
    at.button(key="judge_grade_3").click().run()
    assert at.success[0].value.startswith(f"Already saved grade 3 for document {first[1]}")

    store = Store(db, client="test")
    hist = store.judgments.judgment_history("toy", first[0], first[1], "ann")
    assert [h.grade for h in hist] == [1, 3]
    current = {(c.topic_id, c.doc_id): c.grade for c in store.judgments.current_judgments("toy") if c.assessor == "ann"}
    assert current == {first: 3}
