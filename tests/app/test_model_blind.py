"""AppTest: a model assessor's judgments are invisible on the assessor's pages
(Judge, Progress) and shown, labelled, on the lead's Agreement and Adjudicate pages."""

from __future__ import annotations

from app_helpers import new_app, page_text, shown, sign_in

from workbench.types import Judgment

MODEL = "bot-judge-7"


def _model_judges_everything(db, queues):
    from workbench.store import Store

    store = Store(db, client="seed", lock_timeout_s=60)
    store.users.add_model_assessor(MODEL, model="minilm", model_kind="bi-encoder", weights_hash="cd" * 32,
                             grade_mapping="0:<0.3,1:<0.5,2:<0.7,3", lead="lead")
    for t, d in sorted({k for q in queues.values() for k in q}):
        store.judgments.record_judgment(Judgment(t, d, MODEL, 3, note="bi-encoder score 0.9123"), collection="toy",
                              pool_version="p1")
    store.release_file()


def test_the_assessor_sees_nothing_of_the_model(seeded):
    db, queues = seeded
    _model_judges_everything(db, queues)
    at = sign_in(new_app(), "ann")
    assert shown(at) == queues["ann"][0]            # the queue starts at its first document: nothing judged
    text = page_text(at)
    for secret in (MODEL, "0.9123", "model", "you judged it"):
        assert secret not in text
    at.switch_page("app_pages/progress.py").run()
    assert MODEL not in page_text(at) and "0/" in page_text(at)


def test_the_lead_sees_the_model_labelled(seeded):
    db, queues = seeded
    _model_judges_everything(db, queues)
    from workbench.store import Store

    store = Store(db, client="seed", lock_timeout_s=60)
    t, d = queues["ann"][0]
    store.judgments.record_judgment(Judgment(t, d, "ann", 0), collection="toy", pool_version="p1")
    store.judgments.record_judgment(Judgment(t, d, "bob", 2), collection="toy", pool_version="p1")
    store.release_file()
    lead = sign_in(new_app(), "lead")
    lead.switch_page("app_pages/agreement.py").run()
    assert not lead.exception
    text = page_text(lead)
    assert "Model assessors against people" in text and MODEL in text
    lead.switch_page("app_pages/adjudicate.py").run()
    assert not lead.exception
    assert "Model suggestion (not an assessor's judgment): 3" in page_text(lead)
