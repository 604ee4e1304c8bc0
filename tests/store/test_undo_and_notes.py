"""Undo of a save and notes saved on their own (the judging UI's Undo and
"Save note"): append-only rows that restore the state before, never a grade
nobody gave; and the schema step that adds them to a version-1 store."""

from __future__ import annotations

import pytest
from test_judging import j, seed

from workbench.errors import UnknownNameError, ValidationError


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


def test_undo_restores_the_previous_grade_and_note(toy):
    toy.judgments.record_judgment(j("1", "d1", "ann", 1, note="first look"), collection="toy", pool_version="p1")
    second = toy.judgments.record_judgment(j("1", "d1", "ann", 3, note="on reflection"), collection="toy", pool_version="p1")
    assert _state(toy) == (3, False)
    out = toy.judgments.undo_judgment(second, "ann")
    assert (out.undone, out.grade, out.unsure, out.judged) == (second, 1, False, True)
    assert _state(toy) == (1, False)
    hist = toy.judgments.judgment_history("toy", "1", "d1", "ann")
    assert [(h.grade, h.note) for h in hist] == [(1, "first look"), (3, "on reflection"), (1, "first look")]


def test_undo_of_a_first_save_leaves_no_judgment(toy):
    first = toy.judgments.record_judgment(j("1", "d1", "ann", None, unsure=True), collection="toy", pool_version="p1")
    toy.judgments.record_judgment(j("1", "d1", "bob", 2), collection="toy", pool_version="p1")
    out = toy.judgments.undo_judgment(first, "ann")
    assert (out.grade, out.unsure, out.judged) == (None, False, False)
    assert _state(toy) is None and _state(toy, who="bob") == (2, False)
    assert toy.adjudications.item_grades("toy", "p1") == {("1", "d1"): {"bob": 2}}  # agreement no longer sees ann
    assert toy.judgments.count_judgments("toy") == 3  # the undone save stays in the history


def test_saves_are_undone_newest_first_and_only_by_their_assessor(toy):
    a = toy.judgments.record_judgment(j("1", "d1", "ann", 1), collection="toy", pool_version="p1")
    b = toy.judgments.record_judgment(j("1", "d1", "ann", 2), collection="toy", pool_version="p1")
    with pytest.raises(ValidationError, match=rf"was saved again after save {a} \(save {b}\)"):
        toy.judgments.undo_judgment(a, "ann")
    with pytest.raises(UnknownNameError):
        toy.judgments.undo_judgment(a, "bob")
    assert toy.judgments.undo_judgment(b, "ann").grade == 1  # newest first ...
    assert toy.judgments.undo_judgment(a, "ann").judged is False  # ... then the one before: no judgment
    assert _state(toy) is None
    with pytest.raises(ValidationError, match="was undone already"):
        toy.judgments.undo_judgment(a, "ann")


def test_a_note_saved_on_its_own_keeps_the_grade_or_holds_no_judgment(toy):
    out = toy.judgments.record_note("toy", "1", "d2", "ann", "check figure 3", pool_version="p1")
    assert (out.grade, out.unsure) == (None, False)
    assert _state(toy, "d2") is None  # a note is not a judgment: no grade was invented
    toy.judgments.record_judgment(j("1", "d2", "ann", 0), collection="toy", pool_version="p1")
    out = toy.judgments.record_note("toy", "1", "d2", "ann", "figure 3 is off topic", pool_version="p1")
    assert (out.grade, out.unsure) == (0, False) and _state(toy, "d2") == (0, False)
    assert [h.note for h in toy.judgments.judgment_history("toy", "1", "d2", "ann")][-1] == "figure 3 is off topic"


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
    import duckdb

    from workbench.store import Store
    from workbench.store.schema import MIGRATIONS, SCHEMA_VERSION

    path = tmp_path / "v3.duckdb"
    con = duckdb.connect(str(path))
    for step in range(3):  # the store as the schema before the undo step left it
        for stmt in MIGRATIONS[step]:
            con.execute(stmt)
    con.execute("INSERT INTO meta VALUES ('schema_version', '3')")
    con.execute("INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade) VALUES ('c', '1', 'd', 'a', 2)")
    con.close()
    store = Store(path, client="pytest")
    assert store.schema_version() == SCHEMA_VERSION
    assert [(c.doc_id, c.grade) for c in store.judgments.current_judgments("c")] == [("d", 2)]


def test_current_states_of_some_documents_equal_the_current_judgments(toy):
    """``current_states`` (the import's look-up of the documents in its file) says what the
    current-judgments view says for those documents, and nothing for the others."""
    toy.judgments.record_judgment(j("1", "d1", "ann", 1, note="first", duration_ms=40), collection="toy", pool_version="p1")
    regrade = toy.judgments.record_judgment(j("1", "d1", "ann", 3, duration_ms=7), collection="toy", pool_version="p1")
    toy.judgments.record_judgment(j("1", "d2", "ann", None, unsure=True), collection="toy", pool_version="p1")
    undone = toy.judgments.record_judgment(j("1", "d3", "ann", 2), collection="toy", pool_version="p1")
    toy.judgments.undo_judgment(undone, "ann")                          # d3: no judgment any more
    toy.judgments.record_note("toy", "2", "d4", "ann", "a note alone", pool_version="p1")  # d4: a note, no judgment
    toy.judgments.record_judgment(j("2", "d5", "ann", 0), collection="toy", pool_version="p1")
    toy.judgments.record_judgment(j("1", "d1", "bob", 2), collection="toy", pool_version="p1")  # someone else's
    asked = [("1", "d1"), ("1", "d2"), ("1", "d3"), ("2", "d4"), ("1", "d1"), ("2", "d9")]
    states = toy.judgments.current_states("toy", "ann", asked)
    assert states == {("1", "d1"): (regrade, 3, False, "", 7), ("1", "d2"): (states[("1", "d2")][0], None, True, "", 0)}
    oracle = {(r.topic_id, r.doc_id): (r.judgment_id, r.grade, bool(r.unsure), r.note, int(r.duration_ms))
              for r in toy.judgments.judgment_rows("toy", assessor="ann")}
    assert states == {k: v for k, v in oracle.items() if k in set(asked)}
    assert toy.judgments.current_states("toy", "ann", [("2", "d5")]) == {("2", "d5"): oracle[("2", "d5")]}
    assert toy.judgments.current_states("toy", "bob", [("1", "d1")])[("1", "d1")][1] == 2
    assert toy.judgments.current_states("toy", "ann", []) == {} and toy.judgments.current_states("other", "ann", asked) == {}
