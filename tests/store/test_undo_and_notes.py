"""Undo of a save and notes saved on their own (the judging UI's Undo and
"Save note") as the rest of the store sees them: queue flags, agreement, and the
schema step that adds them to a version-1 store. The log's own rules (append-only
rows that restore the state before, never a grade nobody gave) are in the contract
suite every judgment-log backend passes, ``test_judgment_log_contract.py``."""

from __future__ import annotations

import pytest
from test_judging import j, seed

from tests.old_schema import store_at_schema


@pytest.fixture
def toy(store):
    store.users.add_user("lead", "lead", token="lead-secret")
    store.users.add_user("ann", "assessor", token="ann-secret", lead="lead")
    store.users.add_user("bob", "assessor", token="bob-secret", lead="lead")
    seed(store)
    return store


def _state(store, doc="d1", who="ann"):
    """(grade, unsure) of the current judgment, or None when there is none."""
    cur = {(c.doc_id, c.assessor): (c.grade, c.unsure) for c in store.judgments.current_judgments("toy")}
    return cur.get((doc, who))


def test_agreement_no_longer_sees_an_undone_first_save(toy):
    """``store.adjudications`` reads the people's grades through the judgment log: an Undo of a
    first save takes the assessor out (the log's own Undo rules: ``test_judgment_log_contract.py``)."""
    first = toy.judgments.record_judgment(j("1", "d1", "ann", None, unsure=True), collection="toy", pool_version="p1")
    toy.judgments.record_judgment(j("1", "d1", "bob", 2), collection="toy", pool_version="p1")
    assert toy.adjudications.item_grades("toy", "p1") == {("1", "d1"): {"ann": None, "bob": 2}}
    toy.judgments.undo_judgment(first, "ann")
    assert _state(toy) is None and _state(toy, who="bob") == (2, False)
    assert toy.adjudications.item_grades("toy", "p1") == {("1", "d1"): {"bob": 2}}  # agreement no longer sees ann
    assert toy.judgments.count_judgments("toy") == 3  # the undone save stays in the history


def test_queue_flags_follow_undo_and_notes(toy):
    from workbench.judging.queue import plan_assignments

    _c, items = toy.pools.judging_pool_items("p1")
    toy.judging.assign("p1", plan_assignments(items, ["ann"], seed=1), lead="lead")
    q = toy.judging.assessor_queue("ann")
    first = q[0]
    sid = toy.judgments.record_judgment(j(first.topic_id, first.doc_id, "ann", 2), collection="toy", pool_version="p1")
    toy.judgments.record_note("toy", q[1].topic_id, q[1].doc_id, "ann", "a note only")
    after = toy.judging.assessor_queue("ann")
    assert (after[0].judged, after[0].grade) == (True, 2) and not after[1].judged
    toy.judgments.undo_judgment(sid, "ann")
    assert not toy.judging.assessor_queue("ann")[0].judged
    view = toy.judging.judging_view("ann", 2)
    assert (view.own_grade, view.own_unsure, view.own_note, view.judged) == (None, False, "a note only", False)


def test_a_store_from_before_undo_migrates_and_keeps_its_judgments(tmp_path):
    from workbench.store import Store
    from workbench.store.schema import SCHEMA_VERSION

    path = tmp_path / "v3.duckdb"
    with store_at_schema(path, 3) as con:  # the store as the schema before the undo step left it
        con.execute("INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade) VALUES ('c', '1', 'd', 'a', 2)")
    store = Store(path, client="pytest")
    assert store.schema_version() == SCHEMA_VERSION
    assert [(c.doc_id, c.grade) for c in store.judgments.current_judgments("c")] == [("d", 2)]


