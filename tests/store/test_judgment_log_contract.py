"""The judgment log's contract (``workbench.judging.log.JudgmentLog``), run against every implementation.

The ``log`` fixture gives each implementation over the same world: collection
``toy`` (topics 1 and 2, the ``default`` 0-3 rubric), a lead, two assessors and a
model assessor, pool ``p1`` (topic 1: d1, d2, d3; topic 2: d4, d5) and its delta
``p2`` (topic 1: d6). Implementations: the DuckDB part (``store.judgments``) and
the in-memory reference (``memory_log.InMemoryJudgmentLog``), which shows that a
second backend can satisfy the same tests. A new backend adds itself to
``BACKENDS``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from memory_log import InMemoryJudgmentLog
from test_judging import j, seed

from workbench.errors import PermissionDeniedError, UnknownNameError, ValidationError
from workbench.judging.log import JudgmentLog

MODEL = "judge-m"
POOLS = {"p1": (None, {"1": ["d1", "d2", "d3"], "2": ["d4", "d5"]}), "p2": ("p1", {"1": ["d6"]})}


def _duckdb(tmp_path) -> JudgmentLog:
    from workbench.store import Store

    store = Store(tmp_path / "wb.duckdb", client="pytest", lock_timeout_s=30)
    store.users.add_user("lead", "lead", token="lead-secret")
    store.users.add_user("ann", "assessor", token="ann-secret", lead="lead")
    store.users.add_user("bob", "assessor", token="bob-secret", lead="lead")
    store.users.add_model_assessor(MODEL, model="stub", model_kind="bi-encoder", weights_hash="0" * 64,
                                   grade_mapping="0:<0.5,1", lead="lead")
    seed(store, pools=POOLS)
    return store.judgments


def _memory(tmp_path) -> JudgmentLog:
    return InMemoryJudgmentLog({"lead": "lead", "ann": "assessor", "bob": "assessor", MODEL: "assessor"},
                               {"toy": {"1", "2"}}, POOLS, models={MODEL})


BACKENDS = {"duckdb": _duckdb, "memory": _memory}


@pytest.fixture(params=sorted(BACKENDS))
def log(request, tmp_path) -> JudgmentLog:
    return BACKENDS[request.param](tmp_path)


def _state(log: JudgmentLog, doc: str = "d1", who: str = "ann") -> tuple[int | None, bool] | None:
    """(grade, unsure) of the current judgment, or None when there is none."""
    cur = {(c.doc_id, c.assessor): (c.grade, c.unsure) for c in log.current_judgments("toy")}
    return cur.get((doc, who))


# -- saves ---------------------------------------------------------------------------------


def test_saves_append_and_the_latest_is_current(log):
    ids = [
        log.record_judgment(j("1", "d1", "ann", 1, duration_ms=1200), collection="toy"),
        log.record_judgment(j("1", "d1", "ann", 3, note="changed my mind", duration_ms=800), collection="toy"),
        log.record_judgment(j("1", "d1", "bob", None, unsure=True), collection="toy"),
    ]
    assert ids == sorted(ids) and len(set(ids)) == 3
    hist = log.judgment_history("toy", "1", "d1", "ann")
    assert [(h.grade, h.duration_ms) for h in hist] == [(1, 1200), (3, 800)]
    cur = {(c.assessor): (c.grade, c.unsure, c.note) for c in log.current_judgments("toy")}
    assert cur == {"ann": (3, False, "changed my mind"), "bob": (None, True, "")}
    assert [h.judgment_id for h in log.judgment_history("toy", "1", "d1")] == ids
    assert log.count_judgments("toy") == 3 and log.count_judgments("other") == 0


def test_save_token_makes_a_retried_save_land_once(log):
    first = log.record_judgment(j("1", "d1", "ann", 2), collection="toy", save_token="tok-1")
    again = log.record_judgment(j("1", "d1", "ann", 2), collection="toy", save_token="tok-1")
    assert first == again and log.count_judgments() == 1


def test_save_token_names_the_action_so_a_quick_regrade_lands(log):
    """QA defect: 1 then 3 on one shown document (same shown token) kept grade 1.
    Tokens are f"{shown}:{grade}:{unsure}": same grade twice -> one row; a
    different grade -> a second row and the current grade is 3; going back to 1
    on the same screen is a correction too (three rows, current 1)."""
    once = log.record_judgment_outcome(j("1", "d1", "ann", 1), collection="toy", save_token="s:1:False")
    dup = log.record_judgment_outcome(j("1", "d1", "ann", 1), collection="toy", save_token="s:1:False")
    assert once.new and not dup.new and dup.judgment_id == once.judgment_id and dup.grade == 1
    assert log.count_judgments() == 1
    three = log.record_judgment_outcome(j("1", "d1", "ann", 3), collection="toy", save_token="s:3:False")
    assert three.new and three.grade == 3 and log.count_judgments() == 2
    assert {c.assessor: c.grade for c in log.current_judgments("toy")} == {"ann": 3}
    # a double submit of the 3 reports what the store holds
    again = log.record_judgment_outcome(j("1", "d1", "ann", 3), collection="toy", save_token="s:3:False")
    assert (again.new, again.grade, again.judgment_id) == (False, 3, three.judgment_id)
    back = log.record_judgment_outcome(j("1", "d1", "ann", 1), collection="toy", save_token="s:1:False")
    assert back.new and log.count_judgments() == 3
    assert {c.assessor: c.grade for c in log.current_judgments("toy")} == {"ann": 1}
    back2 = log.record_judgment_outcome(j("1", "d1", "ann", 1), collection="toy", save_token="s:1:False")
    assert not back2.new and log.count_judgments() == 3
    assert [h.grade for h in log.judgment_history("toy", "1", "d1", "ann")] == [1, 3, 1]


def test_a_save_is_checked_and_a_refused_one_writes_nothing(log):
    with pytest.raises(ValidationError, match="not on the 'default' scale"):
        log.record_judgment(j("1", "d1", "ann", 4), collection="toy")
    with pytest.raises(ValidationError, match="mark it unsure"):
        log.record_judgment(j("1", "d1", "ann", None), collection="toy")
    with pytest.raises(ValidationError, match="duration_ms >= 0, found -5"):
        log.record_judgment(j("1", "d1", "ann", 1, duration_ms=-5), collection="toy")
    with pytest.raises(UnknownNameError, match="user 'zed'"):
        log.record_judgment(j("1", "d1", "zed", 1), collection="toy")
    with pytest.raises(UnknownNameError, match="topic of collection 'toy'"):
        log.record_judgment(j("99", "d1", "ann", 1), collection="toy")
    assert log.count_judgments() == 0 and log.current_judgments("toy") == []
    saved = log.record_judgment_outcome(j("1", "d1", "ann", None, unsure=True, note="?"), collection="toy")
    assert (saved.new, saved.grade, saved.unsure) == (True, None, True)
    (row,) = log.judgment_rows("toy")
    assert (row.judgment_id, row.topic_id, row.doc_id, row.assessor, row.grade, row.unsure, row.note) == (
        saved.judgment_id, "1", "d1", "ann", None, True, "?")
    assert row.rubric_version.startswith("default@")


def test_a_save_records_the_pre_filled_grade_and_whether_it_was_confirmed_or_changed(log):
    """Issue 26: a model's grade shown pre-selected is recorded with the save, with the outcome;
    a note saved on its own and an Undo keep the record of the grade they keep or restore."""
    from workbench.judging.prefill import Prefill

    shown = Prefill(MODEL, 2)
    log.record_judgment_outcome(j("1", "d1", "ann", 2), collection="toy", pool_version="p1", prefill=shown)
    log.record_judgment_outcome(j("1", "d2", "ann", 0), collection="toy", pool_version="p1", prefill=shown)
    log.record_judgment_outcome(j("1", "d3", "ann", None, unsure=True), collection="toy", pool_version="p1",
                                prefill=shown)
    log.record_judgment_outcome(j("2", "d4", "ann", 2), collection="toy", pool_version="p1")
    cur = {c.doc_id: (c.prefill, c.prefill_outcome) for c in log.current_judgments("toy")}
    assert cur == {"d1": (shown, "confirmed"), "d2": (shown, "changed"), "d3": (shown, "changed"),
                   "d4": (None, "")}
    log.record_note("toy", "1", "d1", "ann", "kept the model's grade", pool_version="p1")
    regrade = log.record_judgment(j("1", "d1", "ann", 3), collection="toy", pool_version="p1")
    assert {c.doc_id: c.prefill for c in log.current_judgments("toy")}["d1"] is None
    log.undo_judgment(regrade, "ann")
    (d1,) = [c for c in log.current_judgments("toy") if c.doc_id == "d1"]
    assert (d1.grade, d1.note, d1.prefill, d1.prefill_outcome) == (2, "kept the model's grade", shown, "confirmed")


# -- undo and notes ------------------------------------------------------------------------


def test_undo_restores_the_previous_grade_and_note(log):
    log.record_judgment(j("1", "d1", "ann", 1, note="first look"), collection="toy", pool_version="p1")
    second = log.record_judgment(j("1", "d1", "ann", 3, note="on reflection"), collection="toy", pool_version="p1")
    assert _state(log) == (3, False)
    out = log.undo_judgment(second, "ann")
    assert (out.undone, out.grade, out.unsure, out.judged) == (second, 1, False, True)
    assert (out.topic_id, out.doc_id) == ("1", "d1") and out.judgment_id > second
    assert _state(log) == (1, False)
    hist = log.judgment_history("toy", "1", "d1", "ann")
    assert [(h.grade, h.note) for h in hist] == [(1, "first look"), (3, "on reflection"), (1, "first look")]
    assert hist[-1].pool_version == "p1" and hist[-1].rubric_version == hist[0].rubric_version


def test_undo_of_a_first_save_leaves_no_judgment(log):
    first = log.record_judgment(j("1", "d1", "ann", None, unsure=True), collection="toy", pool_version="p1")
    log.record_judgment(j("1", "d1", "bob", 2), collection="toy", pool_version="p1")
    out = log.undo_judgment(first, "ann")
    assert (out.grade, out.unsure, out.judged) == (None, False, False)
    assert _state(log) is None and _state(log, who="bob") == (2, False)
    assert [(c.doc_id, c.assessor, c.grade) for c in log.current_judgments("toy", "p1")] == [("d1", "bob", 2)]
    assert log.count_judgments("toy") == 3  # the undone save stays in the history


def test_saves_are_undone_newest_first_and_only_by_their_assessor(log):
    a = log.record_judgment(j("1", "d1", "ann", 1), collection="toy", pool_version="p1")
    b = log.record_judgment(j("1", "d1", "ann", 2), collection="toy", pool_version="p1")
    with pytest.raises(ValidationError, match=rf"was saved again after save {a} \(save {b}\)"):
        log.undo_judgment(a, "ann")
    with pytest.raises(UnknownNameError):
        log.undo_judgment(a, "bob")
    assert log.undo_judgment(b, "ann").grade == 1  # newest first ...
    assert log.undo_judgment(a, "ann").judged is False  # ... then the one before: no judgment
    assert _state(log) is None
    with pytest.raises(ValidationError, match="was undone already"):
        log.undo_judgment(a, "ann")
    assert log.count_judgments() == 4


def test_a_note_saved_on_its_own_keeps_the_grade_or_holds_no_judgment(log):
    out = log.record_note("toy", "1", "d2", "ann", "check figure 3", pool_version="p1")
    assert (out.grade, out.unsure, out.new) == (None, False, True)
    assert _state(log, "d2") is None  # a note is not a judgment: no grade was invented
    log.record_judgment(j("1", "d2", "ann", 0), collection="toy", pool_version="p1")
    out = log.record_note("toy", "1", "d2", "ann", "figure 3 is off topic", pool_version="p1")
    assert (out.grade, out.unsure) == (0, False) and _state(log, "d2") == (0, False)
    assert [h.note for h in log.judgment_history("toy", "1", "d2", "ann")][-1] == "figure 3 is off topic"
    with pytest.raises(UnknownNameError, match="user 'zed'"):
        log.record_note("toy", "1", "d2", "zed", "x")
    with pytest.raises(UnknownNameError, match="topic of collection 'toy'"):
        log.record_note("toy", "9", "d2", "ann", "x")


def test_current_states_of_some_documents_equal_the_current_judgments(log):
    """``current_states`` (the import's look-up of the documents in its file) says what the
    current-judgments view says for those documents, and nothing for the others."""
    log.record_judgment(j("1", "d1", "ann", 1, note="first", duration_ms=40), collection="toy", pool_version="p1")
    regrade = log.record_judgment(j("1", "d1", "ann", 3, duration_ms=7), collection="toy", pool_version="p1")
    log.record_judgment(j("1", "d2", "ann", None, unsure=True), collection="toy", pool_version="p1")
    undone = log.record_judgment(j("1", "d3", "ann", 2), collection="toy", pool_version="p1")
    log.undo_judgment(undone, "ann")                          # d3: no judgment any more
    log.record_note("toy", "2", "d4", "ann", "a note alone", pool_version="p1")  # d4: a note, no judgment
    log.record_judgment(j("2", "d5", "ann", 0), collection="toy", pool_version="p1")
    log.record_judgment(j("1", "d1", "bob", 2), collection="toy", pool_version="p1")  # someone else's
    asked = [("1", "d1"), ("1", "d2"), ("1", "d3"), ("2", "d4"), ("1", "d1"), ("2", "d9")]
    states = log.current_states("toy", "ann", asked)
    assert states == {("1", "d1"): (regrade, 3, False, "", 7), ("1", "d2"): (states[("1", "d2")][0], None, True, "", 0)}
    oracle = {(r.topic_id, r.doc_id): (r.judgment_id, r.grade, bool(r.unsure), r.note, int(r.duration_ms))
              for r in log.judgment_rows("toy", assessor="ann")}
    assert states == {k: v for k, v in oracle.items() if k in set(asked)}
    assert log.current_states("toy", "ann", [("2", "d5")]) == {("2", "d5"): oracle[("2", "d5")]}
    assert log.current_states("toy", "bob", [("1", "d1")])[("1", "d1")][1] == 2
    assert log.current_states("toy", "ann", []) == {} and log.current_states("other", "ann", asked) == {}


# -- a lead's import -------------------------------------------------------------------------


def test_an_import_keeps_its_times_skips_stored_tokens_and_needs_a_lead(log):
    at = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    items = [(j("1", "d1", "ann", 2, note="imported"), "imp-1", at), (j("1", "d2", "bob", 0), "imp-2", None),
             (j("1", "d1", "ann", 3), "imp-3", at)]
    with pytest.raises(PermissionDeniedError, match="expected 'lead'"):
        log.record_judgments(items, collection="toy", pool_version="p1", lead="ann")
    with pytest.raises(UnknownNameError, match="user 'nobody'"):
        log.record_judgments(items, collection="toy", pool_version="p1", lead="nobody")
    assert log.count_judgments() == 0
    out = log.record_judgments(items, collection="toy", pool_version="p1", lead="lead")
    assert [(s.new, s.grade, s.unsure) for s in out] == [(True, 2, False), (True, 0, False), (True, 3, False)]
    assert [s.judgment_id for s in out] == sorted(s.judgment_id for s in out)
    rows = log.judgment_rows("toy", history=True)
    assert [(r.doc_id, r.assessor, r.grade, r.note, r.pool_version) for r in rows] == [
        ("d1", "ann", 2, "imported", "p1"), ("d1", "ann", 3, "", "p1"), ("d2", "bob", 0, "", "p1")]
    assert rows[0].saved_at == at and rows[1].saved_at == at
    # the same file again (one line added): the stored lines are skipped, reporting the item's current judgment
    again = log.record_judgments([*items, (j("2", "d4", "ann", 1), "imp-4", None)], collection="toy",
                                 pool_version="p1", lead="lead")
    assert [(s.new, s.judgment_id, s.grade) for s in again[:3]] == [
        (False, out[2].judgment_id, 3), (False, out[1].judgment_id, 0), (False, out[2].judgment_id, 3)]
    assert again[3].new and again[3].grade == 1 and log.count_judgments() == 4


def test_an_import_that_fails_anywhere_writes_nothing(log):
    good = (j("1", "d1", "ann", 2), "imp-1", None)
    for bad, error in [((j("1", "d2", "ann", 9), "imp-2", None), ValidationError),
                       ((j("7", "d2", "ann", 1), "imp-2", None), UnknownNameError),
                       ((j("1", "d2", "zed", 1), "imp-2", None), UnknownNameError),
                       ((j("1", "d2", "ann", None), "imp-2", None), ValidationError)]:
        with pytest.raises(error):
            log.record_judgments([good, bad], collection="toy", pool_version="p1", lead="lead")
        assert log.count_judgments() == 0 and log.judgment_rows("toy", history=True) == []


# -- reads: pool lineage, model assessors ----------------------------------------------------


def test_pool_filters_follow_the_lineage(log):
    log.record_judgment(j("1", "d3", "ann", 1), collection="toy", pool_version="p1")
    log.record_judgment(j("1", "d6", "ann", 2), collection="toy", pool_version="p2")  # pooled in the delta p2
    log.record_judgment(j("2", "d4", "bob", None, unsure=True), collection="toy", pool_version="p1")
    log.record_judgment(j("1", "d1", "bob", 0), collection="toy", pool_version="p1")
    log.record_judgment(j("2", "d9", "ann", 3), collection="toy", pool_version="p1")  # saved under p1, not pooled
    log.record_judgment(j("1", "d2", "ann", 2), collection="toy")
    log.record_judgment(j("1", "d2", "ann", 3), collection="toy")

    def keys(rows: list) -> list[tuple[str, str, str]]:
        return [(r.topic_id, r.doc_id, r.assessor) for r in rows]

    assert keys(log.current_judgments("toy")) == [
        ("1", "d1", "bob"), ("1", "d2", "ann"), ("1", "d3", "ann"), ("1", "d6", "ann"), ("2", "d4", "bob"),
        ("2", "d9", "ann")]
    assert keys(log.current_judgments("toy", "p1")) == [
        ("1", "d1", "bob"), ("1", "d2", "ann"), ("1", "d3", "ann"), ("2", "d4", "bob")]
    assert keys(log.current_judgments("toy", "p2")) == [
        ("1", "d1", "bob"), ("1", "d2", "ann"), ("1", "d3", "ann"), ("1", "d6", "ann"), ("2", "d4", "bob")]
    # for export: pooled in the lineage, or saved under one of its versions
    assert keys(log.judgment_rows("toy", "p1")) == [
        ("1", "d1", "bob"), ("1", "d2", "ann"), ("1", "d3", "ann"), ("2", "d4", "bob"), ("2", "d9", "ann")]
    assert [(r.doc_id, r.grade) for r in log.judgment_rows("toy", "p1", assessor="ann", history=True)] == [
        ("d2", 2), ("d2", 3), ("d3", 1), ("d9", 3)]
    # first graded saves of one pool version's own documents, people only, in save order per topic
    assert log.first_judged("toy", "p1") == {"1": ["d3", "d1", "d2"]}
    assert log.first_judged("toy", "p2") == {"1": ["d6"]}


def test_model_assessors_are_read_apart(log):
    log.record_judgment(j("1", "d1", MODEL, 3), collection="toy", pool_version="p1")
    log.record_judgment(j("1", "d1", "ann", 1), collection="toy", pool_version="p1")
    log.record_judgment(j("1", "d6", MODEL, 2), collection="toy", pool_version="p2")
    assert [(c.doc_id, c.assessor) for c in log.current_judgments("toy")] == [("d1", "ann")]
    assert [(c.doc_id, c.assessor, c.grade) for c in log.current_judgments("toy", include_model=True)] == [
        ("d1", "ann", 1), ("d1", MODEL, 3), ("d6", MODEL, 2)]
    assert [(c.doc_id, c.grade) for c in log.model_judgments("toy")] == [("d1", 3), ("d6", 2)]
    assert [(c.doc_id, c.grade) for c in log.model_judgments("toy", "p1")] == [("d1", 3)]
    assert log.first_judged("toy", "p1") == {"1": ["d1"]} and log.first_judged("toy", "p2") == {}
    assert [r.assessor for r in log.judgment_rows("toy", "p1")] == ["ann", MODEL]  # export: everyone's


def test_an_unknown_pool_version_is_named(log):
    for read in (lambda: log.current_judgments("toy", "p9"), lambda: log.model_judgments("toy", "p9"),
                 lambda: log.judgment_rows("toy", "p9"), lambda: log.first_judged("toy", "p9")):
        with pytest.raises(UnknownNameError, match="pool version 'p9'"):
            read()

