"""AppTest of pre-fill (issue 26): the lead turns it on on the Pool page; the Judge page then shows the
model's grade pre-selected and marked as the model's, and the save records confirmed or changed; the
Agreement page splits the model-vs-person rows. Off, the Judge page stays blind (test_model_blind)."""

from __future__ import annotations

from app_helpers import COLLECTION, new_app, page_text, shown, sign_in

from workbench.types import Judgment

MODEL = "bot-judge-7"
GRADES = {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 3, "d6": 0}


def _model_judges_everything(db, queues):
    from workbench.store import Store

    store = Store(db, client="seed", lock_timeout_s=60)
    store.users.add_model_assessor(MODEL, model="minilm", model_kind="bi-encoder", weights_hash="cd" * 32,
                                   grade_mapping="0:<0.3,1:<0.5,2:<0.7,3", lead="lead")
    for t, d in sorted({k for q in queues.values() for k in q}):
        store.judgments.record_judgment(Judgment(t, d, MODEL, GRADES[d]), collection=COLLECTION,
                                        pool_version="p1")
    store.release_file()


def _rows(db, who="ann"):
    from workbench.store import Store

    store = Store(db, client="pytest check")
    rows = {c.doc_id: (c.grade, c.prefill, c.prefill_outcome) for c in store.judgments.current_judgments(COLLECTION)
            if c.assessor == who}
    store.release_file()
    return rows


def test_the_lead_turns_pre_fill_on_and_the_assessor_confirms_or_changes_the_models_grade(seeded):
    from workbench.judging.prefill import Prefill

    db, queues = seeded
    _model_judges_everything(db, queues)
    lead = sign_in(new_app(), "lead")
    lead.switch_page("app_pages/pool.py").run()
    assert "Off: judging is blind to every model assessor." in page_text(lead)
    lead.selectbox(key="pool_prefill_model_p1").select(MODEL)
    lead.button(key="pool_prefill_apply").click().run()
    assert not lead.exception
    assert lead.success[0].value == f"Pre-fill on: {MODEL}, 100% of each assessor's documents."
    assert f"On: assessors see the grade of model assessor **{MODEL}**" in page_text(lead)

    at = sign_in(new_app(), "ann")
    first = shown(at)
    model = GRADES[first[1]]
    bar = {b.key: b for b in at.button if b.key and b.key.startswith("judge_grade_")}
    assert bar[f"judge_grade_{model}"].label.endswith("· model")
    assert bar[f"judge_grade_{model}"].proto.type == "primary"          # pre-selected
    assert [k for k, b in bar.items() if b.proto.type == "primary"] == [f"judge_grade_{model}"]
    assert [k for k, b in bar.items() if "model" in b.label] == [f"judge_grade_{model}"]
    assert any(f"Pre-filled by model assessor {MODEL}" in c.value for c in at.caption)
    assert _rows(db) == {}                                              # pre-selected is not saved
    at.button(key=f"judge_grade_{model}").click().run()                 # confirm
    assert "(the model's grade, confirmed)" in at.success[0].value
    second = shown(at)
    other = (GRADES[second[1]] + 1) % 4
    at.button(key=f"judge_grade_{other}").click().run()                 # change
    assert f"(the model's {GRADES[second[1]]} changed)" in at.success[0].value
    assert _rows(db) == {first[1]: (model, Prefill(MODEL, model), "confirmed"),
                         second[1]: (other, Prefill(MODEL, GRADES[second[1]]), "changed")}
    at.button(key="judge_prev").click().run()                           # own grade selected, model still marked
    bar = {b.key: b for b in at.button if b.key and b.key.startswith("judge_grade_")}
    assert [k for k, b in bar.items() if b.proto.type == "primary"] == [f"judge_grade_{other}"]
    assert bar[f"judge_grade_{GRADES[second[1]]}"].label.endswith("· model")

    lead.switch_page("app_pages/agreement.py").run()
    assert not lead.exception
    table = next(t.value for t in lead.table if "documents" in t.value.columns)
    got = [(r["person"], r["documents"], int(r["items"]), r["same grade"], str(r["confirmed"]))
           for _, r in table.iterrows()]
    assert got == [("ann", "all", 2, "50.0%", ""), ("ann", "pre-filled", 2, "50.0%", "1"),
                   ("ann", "not pre-filled", 0, "", "")]

    lead.switch_page("app_pages/pool.py").run()
    lead.selectbox(key="pool_prefill_model_p1").select("(off: assessors see no model grade)")
    lead.button(key="pool_prefill_apply").click().run()
    assert lead.success[0].value == "Pre-fill off."
    at = sign_in(new_app(), "ann")
    text = page_text(at)
    assert MODEL not in text and "model" not in text.lower().replace("model assessor", "")

