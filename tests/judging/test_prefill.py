"""Pre-fill (issue 26): a lead turns a model assessor's grades on for a pool version; assessors then
see the model's grade pre-selected, and each save records whether it was confirmed or changed; the
model-vs-person agreement is split into pre-filled and not pre-filled documents, in the service,
`workbench agreement` and (tests/app/test_prefill_pages.py) the UI."""

from __future__ import annotations

import pytest

from tests.judging.toy_pool import two_topic_store
from tests.old_schema import store_at_schema
from workbench.errors import PermissionDeniedError, UnknownNameError, ValidationError
from workbench.judging.prefill import (
    Prefill,
    PrefillItem,
    is_prefilled,
    prefill_outcome,
    prefill_splits,
)
from workbench.services.judging import assessments as svc
from workbench.services.judging import model_assessor as ma
from workbench.types import Judgment

RUN = {"1": {"d1": 4.0, "d2": 3.0, "d3": 2.0}, "2": {"d4": 2.0, "d5": 1.0}}
MODEL = {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 3}  # the model assessor's grades
LEAD = svc.Session("boss", "lead")
ANN = svc.Session("ann", "assessor")


@pytest.fixture
def store(tmp_path):
    s = two_topic_store(tmp_path / "labels" / "wb.duckdb", MODEL, RUN)
    s.users.add_model_assessor("judge-bot", model="stub", model_kind="bi-encoder", weights_hash="ab" * 32,
                               grade_mapping="0:<0.3,1:<0.5,2:<0.7,3", lead="boss")
    for t, docs in RUN.items():
        for d in docs:
            s.judgments.record_judgment(Judgment(t, d, "judge-bot", MODEL[d]), collection="toy", pool_version="p1")
    svc.assign_pool(s, LEAD, "p1", ["ann"])
    return s


def _views(store):
    state = svc.queue_state(store.judging, ANN)
    return [svc.load_view(store.judging, ANN, p) for p in range(1, state.n_total + 1)]


def test_pre_fill_is_off_until_a_lead_turns_it_on_and_each_save_records_confirmed_or_changed(store):
    assert store.judging.prefill_setting("p1").on is False
    assert all(v.prefill is None for v in _views(store))           # off: blind to the model
    with pytest.raises(PermissionDeniedError):
        ma.set_prefill(store.judging, ANN, "p1", "judge-bot")
    with pytest.raises(UnknownNameError, match="judge-bot"):         # the known model assessors are listed
        ma.set_prefill(store.judging, LEAD, "p1", "ann")
    with pytest.raises(UnknownNameError):
        ma.set_prefill(store.judging, LEAD, "p9", "judge-bot")
    with pytest.raises(ValidationError, match=r"\(0, 1\]"):
        ma.set_prefill(store.judging, LEAD, "p1", "judge-bot", share=0.0)
    assert store.judging.prefill_setting("p1").on is False          # nothing refused was written

    s = ma.set_prefill(store.judging, LEAD, "p1", "judge-bot")
    assert (s.on, s.model, s.share, s.set_by) == (True, "judge-bot", 1.0, "boss")
    views = _views(store)
    assert {v.document.doc_id: v.prefill for v in views} == {d: Prefill("judge-bot", g) for d, g in MODEL.items()}
    first, second, third = views[:3]
    svc.save_judgment(store, ANN, first, grade=MODEL[first.document.doc_id])          # confirmed
    svc.save_judgment(store, ANN, second, grade=(MODEL[second.document.doc_id] + 1) % 4)  # changed
    svc.save_judgment(store, ANN, third, grade=None, unsure=True)                     # unsure: changed
    rows = {c.doc_id: (c.prefill, c.prefill_outcome) for c in store.judgments.current_judgments("toy", "p1")}
    assert rows == {
        first.document.doc_id: (first.prefill, "confirmed"),
        second.document.doc_id: (second.prefill, "changed"),
        third.document.doc_id: (third.prefill, "changed"),
    }

    ma.set_prefill(store.judging, LEAD, "p1", None)                 # off again: the next views are blind
    assert store.judging.prefill_setting("p1").on is False
    assert all(v.prefill is None for v in _views(store))
    fourth = _views(store)[3]
    svc.save_judgment(store, ANN, fourth, grade=1)
    (row,) = [c for c in store.judgments.current_judgments("toy", "p1") if c.doc_id == fourth.document.doc_id]
    assert (row.prefill, row.prefill_outcome) == (None, "")


def test_a_share_pre_fills_a_fixed_draw_per_assessor_and_document(store):
    ma.set_prefill(store.judging, LEAD, "p1", "judge-bot", share=0.5)
    views = _views(store)
    expected = {v.document.doc_id for v in views if is_prefilled(0.5, "ann", v.topic.topic_id, v.document.doc_id)}
    assert {v.document.doc_id for v in views if v.prefill is not None} == expected
    assert [v.prefill for v in _views(store)] == [v.prefill for v in views]  # the same draw on every visit
    # the draw is a hash of (assessor, topic, document): about half of a large set, never all or none
    draws = [is_prefilled(0.5, "ann", "1", f"d{i}") for i in range(2000)]
    assert 900 < sum(draws) < 1100
    assert draws == [is_prefilled(0.5, "ann", "1", f"d{i}") for i in range(2000)]
    assert all(is_prefilled(1.0, "ann", "1", f"d{i}") for i in range(50))


def test_prefill_outcome_and_splits_by_hand():
    shown = Prefill("bot", 2)
    assert [prefill_outcome(shown, g, u) for g, u in ((2, False), (1, False), (None, True))] == [
        "confirmed", "changed", "changed"]
    # bot vs ann on 6 documents: 3 pre-filled from bot (2 confirmed, 1 changed), 2 not pre-filled,
    # 1 pre-filled from another model (counts in "all" only).
    items = [PrefillItem("bot", "ann", 2, 2, "bot", "confirmed"), PrefillItem("bot", "ann", 0, 0, "bot", "confirmed"),
             PrefillItem("bot", "ann", 3, 1, "bot", "changed"), PrefillItem("bot", "ann", 1, 3),
             PrefillItem("bot", "ann", 2, 0), PrefillItem("bot", "ann", 1, 1, "other", "confirmed")]
    rows = {r.subset: r for r in prefill_splits(items, scale=[0, 1, 2, 3])}
    assert [(s, rows[s].n_items, rows[s].same_grade, rows[s].n_confirmed) for s in rows] == [
        ("all", 6, 3 / 6, 2), ("pre-filled", 3, 2 / 3, 2), ("not pre-filled", 2, 0 / 2, 0)]
    from sklearn.metrics import cohen_kappa_score

    assert rows["pre-filled"].kappa.value == pytest.approx(
        cohen_kappa_score([2, 0, 3], [2, 0, 1], weights="linear"))
    assert rows["all"].kappa.value == pytest.approx(
        cohen_kappa_score([2, 0, 3, 1, 2, 1], [2, 0, 1, 3, 0, 1], weights="linear"))
    assert [r.subset for r in prefill_splits(items, scale=[0, 1, 2, 3], split=False)] == ["all"]


def test_agreement_splits_pre_filled_and_not_pre_filled_documents(store):
    views = {v.document.doc_id: v for v in _views(store)}
    # before pre-fill: ann grades d4 and d5 blind (d4 agrees with the model, d5 does not)
    svc.save_judgment(store, ANN, views["d4"], grade=1)
    svc.save_judgment(store, ANN, views["d5"], grade=0)
    rows = ma.model_agreement(store.judgments, store.pools, store.rubrics, "p1")
    assert [(r.subset, r.n_items, r.same_grade) for r in rows] == [("all", 2, 0.5)]
    ma.set_prefill(store.judging, LEAD, "p1", "judge-bot")
    views = {v.document.doc_id: v for v in _views(store)}
    svc.save_judgment(store, ANN, views["d1"], grade=3)   # confirmed
    svc.save_judgment(store, ANN, views["d2"], grade=2)   # confirmed
    svc.save_judgment(store, ANN, views["d3"], grade=1)   # changed (model 0)
    rows = {r.subset: r for r in ma.model_agreement(store.judgments, store.pools, store.rubrics, "p1")}
    assert [(s, r.model, r.person, r.n_items, r.same_grade, r.n_confirmed) for s, r in rows.items()] == [
        ("all", "judge-bot", "ann", 5, 3 / 5, 2),
        ("pre-filled", "judge-bot", "ann", 3, 2 / 3, 2),
        ("not pre-filled", "judge-bot", "ann", 2, 1 / 2, 0),
    ]
    from sklearn.metrics import cohen_kappa_score

    assert rows["pre-filled"].kappa.value == pytest.approx(cohen_kappa_score([3, 2, 0], [3, 2, 1], weights="linear"))
    assert rows["not pre-filled"].kappa.value == pytest.approx(cohen_kappa_score([1, 3], [1, 0], weights="linear"))


def test_a_store_of_schema_11_migrates_with_no_pre_fill(tmp_path):
    from workbench.store import Store
    from workbench.store.schema import SCHEMA_VERSION

    path = tmp_path / "v11.duckdb"
    with store_at_schema(path, 11) as con:
        con.execute("INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade) VALUES ('c', '1', 'd', 'a', 2)")
    store = Store(path, client="pytest")
    assert store.schema_version() == SCHEMA_VERSION == 14
    assert [(c.doc_id, c.grade, c.prefill, c.prefill_outcome) for c in store.judgments.current_judgments("c")] == [
        ("d", 2, None, "")]
    assert store.judging.prefill_setting("any").on is False


def test_cli_prefill_sets_and_shows_it_and_agreement_prints_the_model_rows(store, capsys):
    from workbench.cli import main

    db = str(store.path)
    store.release_file()

    def wb(*args):
        return main(["--db", db, *args])

    assert wb("prefill", "p1") == 0
    assert capsys.readouterr().out.strip() == "pool p1: pre-fill off (assessors see no model grade)"
    assert wb("prefill", "p1", "--model", "judge-bot") == 2      # a change needs the lead
    assert "--lead" in capsys.readouterr().err
    assert wb("prefill", "p1", "--model", "judge-bot", "--off", "--lead", "boss", "--token", "boss-token") == 2
    assert wb("prefill", "p1", "--model", "nobody", "--lead", "boss", "--token", "boss-token") == 1
    err = capsys.readouterr().err
    assert "nobody" in err and "judge-bot" in err and "Traceback" not in err
    assert wb("prefill", "p1", "--model", "judge-bot", "--share", "1.5", "--lead", "boss", "--token", "boss-token") == 2
    capsys.readouterr()
    assert wb("prefill", "p1", "--model", "judge-bot", "--share", "0.5", "--lead", "boss", "--token",
              "boss-token") == 0
    assert capsys.readouterr().out.strip() == (
        "pool p1: pre-fill on from model assessor judge-bot (50% of each assessor's documents; set by boss)")
    assert wb("prefill", "p1", "--model", "judge-bot", "--lead", "boss", "--token", "boss-token") == 0
    capsys.readouterr()

    views = {v.document.doc_id: v for v in _views(store)}
    for d, g in (("d1", 3), ("d3", 1)):          # confirmed, changed
        svc.save_judgment(store, ANN, views[d], grade=g)
    store.release_file()
    assert wb("agreement", "p1") == 0
    lines = [ln.split("\t") for ln in capsys.readouterr().out.splitlines()]
    model = {(ln[0], ln[1]): ln[2:] for ln in lines if ln[0].startswith("model_")}
    assert model[("model_same_grade", "judge-bot|ann")] == [repr(1 / 2), "2", ""]
    assert model[("model_same_grade", "judge-bot|ann|pre-filled")] == [repr(1 / 2), "2", "1 confirmed"]
    assert model[("model_same_grade", "judge-bot|ann|not pre-filled")] == ["", "0", "no items"]
    from sklearn.metrics import cohen_kappa_score

    kappa = float(model[("model_kappa_linear", "judge-bot|ann|pre-filled")][0])
    assert kappa == pytest.approx(cohen_kappa_score([3, 0], [3, 1], weights="linear", labels=[0, 1, 2, 3]))
    # the same rows as the UI's Agreement page (the service both call)
    rows = ma.model_agreement(store.judgments, store.pools, store.rubrics, "p1")
    assert [f"{r.model}|{r.person}" + ("" if r.subset == "all" else f"|{r.subset}") for r in rows] == [
        s for f, s in model if f == "model_same_grade"]
    assert wb("prefill", "p1", "--off", "--lead", "boss", "--token", "boss-token") == 0
    assert capsys.readouterr().out.strip() == "pool p1: pre-fill off (assessors see no model grade)"
