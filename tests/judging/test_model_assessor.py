"""The model assessor: the save path and identity, the fitted thresholds,
blindness (nothing of it on an assessor's screen, queue or progress), its place
on the lead's pages, and the publish rules; one test loads a real (tiny,
random) CrossEncoder from disk."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from pooling.retrievers import judge_models
from tests.judging.toy_pool import two_topic_store
from workbench.errors import DuplicateNameError, PermissionDeniedError, ValidationError
from workbench.judging.model_grades import fit_agreement, fit_grade_mapping, parse_grade_mapping
from workbench.services.judging import assessments as svc
from workbench.services.judging import model_assessor as ma
from workbench.types import Judgment

REAL_LOADER = judge_models.load_judge_model
RUN = {"1": {"d1": 4.0, "d2": 3.0, "d3": 2.0}, "2": {"d4": 2.0, "d5": 1.0}}
SCORES = {"d1": 0.9, "d2": 0.55, "d3": 0.1, "d4": 0.35, "d5": 0.75}
LEAD = svc.Session("boss", "lead")
ANN = svc.Session("ann", "assessor")


@dataclass
class StubModel:
    """Scores each document by a fixed table (the real loading path has its own test)."""

    name: str = "stub-model"
    kind: str = "bi-encoder"
    weights_hash: str = "ab" * 32

    def score(self, queries, documents, pairs, *, cache=None, text_hashes=None):
        return np.array([SCORES[d] for _t, d in pairs])


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setattr("pooling.retrievers.judge_models.load_judge_model", lambda spec, **kw: StubModel(spec))
    return two_topic_store(tmp_path / "labels" / "wb.duckdb", SCORES, RUN)


def test_model_judgments_go_through_the_save_path_with_their_identity(store):
    res = ma.judge_with_model(store, LEAD, "p1", "stub-model", "judge-bot")
    # 0:<0.3, 1:<0.5, 2:<0.7, 3: d1 0.9 -> 3, d2 0.55 -> 2, d3 0.1 -> 0, d4 0.35 -> 1, d5 0.75 -> 3.
    assert (res.n_documents, res.n_saved, res.n_kept) == (5, 5, 0)
    assert res.grades == {0: 1, 1: 1, 2: 1, 3: 2}
    rows = {j.doc_id: j for j in store.judgments.model_judgments("toy", "p1")}
    assert {d: j.grade for d, j in rows.items()} == {"d1": 3, "d2": 2, "d3": 0, "d4": 1, "d5": 3}
    assert rows["d2"].note == "bi-encoder score 0.5500" and rows["d2"].pool_version == "p1"
    info = store.users.model_assessor("judge-bot")
    assert (info.model, info.model_kind, info.weights_hash, info.grade_mapping) == (
        "stub-model", "bi-encoder", "ab" * 32, "0:<0.3,1:<0.5,2:<0.7,3")
    assert store.users.get_user("judge-bot").kind == "model"
    assert store.judgments.count_judgments() == 5                         # one append-only row per document
    again = ma.judge_with_model(store, LEAD, "p1", "stub-model", "judge-bot")
    assert (again.n_saved, again.n_kept) == (0, 5) and store.judgments.count_judgments() == 5
    with pytest.raises(DuplicateNameError, match="never changes"):
        ma.judge_with_model(store, LEAD, "p1", "stub-model", "judge-bot", grades="0:<0.5,3")
    with pytest.raises(DuplicateNameError, match="a person"):
        ma.judge_with_model(store, LEAD, "p1", "stub-model", "ann")
    with pytest.raises(PermissionDeniedError):
        ma.judge_with_model(store, ANN, "p1", "stub-model", "other-bot")
    with pytest.raises(PermissionDeniedError):  # a model assessor never signs in
        store.users.authenticate("judge-bot", "")
    with pytest.raises(ValidationError, match="never signs in"):
        store.users.reset_token("judge-bot", lead="boss")
    with pytest.raises(ValidationError, match="not on the 'default' rubric"):
        ma.judge_with_model(store, LEAD, "p1", "stub-model", "bot-9", grades="0:<0.5,9")


def test_blindness_the_assessor_sees_nothing_of_the_model(store):
    svc.assign_pool(store, LEAD, "p1", ["ann"])
    ma.judge_with_model(store, LEAD, "p1", "stub-model", "judge-bot")
    state = svc.queue_state(store.judging, ANN)
    assert state.n_done == 0 and state.resume == 1 and all(not e.judged for e in state.entries)
    for pos in range(1, state.n_total + 1):
        view = svc.load_view(store.judging, ANN, pos)
        assert view.own_grade is None and not view.judged and view.own_note == ""
    assert all(t.n_judged == 0 for t in store.judging.pool_judging_progress("p1"))
    assert store.adjudications.item_grades("toy", "p1") == {} and store.judgments.current_judgments("toy", "p1") == []
    assert store.pools.judged_documents("toy") == {}       # a pool extension would still bring them to people
    assert svc.disagreement_queue(store.adjudications, store.judgments, store.pools, "p1") == []
    assert svc.agreement(store.judging, store.rubrics, store.pools, "p1").pairs == []


def test_a_model_prior_orders_the_queue_only_under_cal_model(store):
    from workbench.services.judging import order

    svc.assign_pool(store, LEAD, "p1", ["ann"], strategy="mtf")
    before = [e.doc_id for e in store.judging.assessor_queue("ann")]
    ma.judge_with_model(store, LEAD, "p1", "stub-model", "judge-bot", grades="0:<0.5,3")
    assert [e.doc_id for e in store.judging.assessor_queue("ann")] == before     # mtf does not read model grades
    order.set_strategy(store, LEAD, "p1", "cal(prior_weight=5.0, negatives=0, rank_weight=0.0)")
    queue = [e.doc_id for e in store.judging.assessor_queue("ann")]
    # Topic 2: the model says d5 (3) is relevant and d4 (0) not, the pool says d4 first: under cal-model
    # the prior wins.
    assert queue.index("d5") < queue.index("d4")


def test_lead_pages_show_model_agreement_and_suggestions(store):
    ma.judge_with_model(store, LEAD, "p1", "stub-model", "judge-bot")
    store.users.add_user("bob", "assessor", token="bob-token-1", lead="boss")
    for who, grades in (("ann", {"d1": 3, "d2": 0, "d3": 0}), ("bob", {"d1": 3, "d2": 2, "d3": 1})):
        for d, g in grades.items():
            store.judgments.record_judgment(Judgment("1", d, who, g), collection="toy", pool_version="p1")
    found = ma.model_agreement(store.judgments, store.pools, store.rubrics, "p1")
    assert {r.subset for r in found} == {"all"}  # nothing was pre-filled: no split rows
    rows = {(r.model, r.person): r for r in found}
    assert set(rows) == {("judge-bot", "ann"), ("judge-bot", "bob")}
    assert rows[("judge-bot", "bob")].n_items == 3
    # model d1 3, d2 2, d3 0 against bob 3, 2, 1 (independent oracle: scikit-learn)
    from sklearn.metrics import cohen_kappa_score

    assert rows[("judge-bot", "bob")].kappa.value == pytest.approx(
        cohen_kappa_score([3, 2, 0], [3, 2, 1], weights="linear"))
    assert rows[("judge-bot", "bob")].same_grade == pytest.approx(2 / 3)
    queue = svc.disagreement_queue(store.adjudications, store.judgments, store.pools, "p1")
    assert [(r.doc_id, r.suggestions) for r in queue] == [("d2", (("judge-bot", 2),)), ("d3", (("judge-bot", 0),))]
    assert {j.assessor for r in queue for j in r.judgments} == {"ann", "bob"}   # the model is no judgment here


def test_publish_leaves_model_judgments_out_unless_asked(store, tmp_path):
    ma.judge_with_model(store, LEAD, "p1", "stub-model", "judge-bot")
    store.judgments.record_judgment(Judgment("1", "d1", "ann", 1), collection="toy", pool_version="p1")
    store.judgments.record_judgment(Judgment("2", "d4", "ann", None, unsure=True), collection="toy", pool_version="p1")
    plain = svc.publish(store.qrels, LEAD, "p1", "q-people", rule="median")
    assert store.qrels.get_qrels("q-people") == {"1": {"d1": 1}} and plain.info.n_entries == 1
    assert store.qrels.qrels_model_inputs("q-people") == {}
    svc.publish(store.qrels, LEAD, "p1", "q-model", rule="median", include_model=True)
    # d1: ann's 1 (not the model's 3); d4: ann was unsure (a person judged it): no model grade;
    # d2, d3, d5: nobody judged them: the model's grades.
    assert store.qrels.get_qrels("q-model") == {"1": {"d1": 1, "d2": 2, "d3": 0}, "2": {"d5": 3}}
    assert store.qrels.qrels_model_inputs("q-model") == {"judge-bot": 3}
    assert "3 from model assessors where no person judged (judge-bot: 3)" in store.qrels.get_qrels_info("q-model").note


def test_fitted_thresholds_match_the_people_and_report_agreement(store):
    store.qrels.create_qrels_version("people", "toy", {"1": {"d1": 3, "d2": 1, "d3": 0}, "2": {"d4": 0, "d5": 2}},
                               origin="imported", rule="", pool_version="p1")
    res = ma.judge_with_model(store, LEAD, "p1", "stub-model", "fit-bot", fit_on="people")
    # Scores sorted 0.1 0.35 0.55 0.75 0.9; people's grades: 0, 0, 1, 2, 3 -> shares <= 0: 2/5, <= 1: 3/5,
    # <= 2: 4/5 -> thresholds between the 2nd/3rd, 3rd/4th, 4th/5th scores: 0.45, 0.65, 0.825.
    assert store.users.model_assessor("fit-bot").grade_mapping == "0:<0.45,1:<0.65,2:<0.825,3"
    assert store.users.model_assessor("fit-bot").fitted_on == "people"
    f = res.fit
    # Mapped: d1 3, d2 1, d3 0, d4 0, d5 2: the same as the people on every document.
    assert (f.n_documents, f.exact, f.binary, f.kappa) == (5, 1.0, 1.0, pytest.approx(1.0))
    with pytest.raises(ValidationError, match="--grades or --fit-on"):
        ma.judge_with_model(store, LEAD, "p1", "stub-model", "x-bot", grades="0:<0.5,1", fit_on="people")


def test_fitting_on_positives_only_qrels_is_refused_before_the_model_scores(store, monkeypatch):
    # CACM's trial: qrels listing relevant documents only fitted a threshold below every score
    # (1,981 of 2,010 documents "relevant", "100% agreement"). Here people graded d1, d2, d5 all >= 1.
    store.qrels.create_qrels_version("pos", "toy", {"1": {"d1": 1, "d2": 1}, "2": {"d5": 2}},
                               origin="imported", rule="", pool_version="p1")
    monkeypatch.setattr("pooling.retrievers.judge_models.load_judge_model",
                        lambda spec, **kw: pytest.fail("the model was loaded for a fit that cannot be made"))
    with pytest.raises(ValidationError) as e:
        ma.judge_with_model(store, LEAD, "p1", "stub-model", "pos-bot", fit_on="pos")
    assert str(e.value) == (
        "--fit-on pos on the documents of p1: fitting grade thresholds needs judged documents on both sides of "
        "grade 1, found 3 relevant (grade >= 1) and none non-relevant: the qrels hold positives only, so a fitted "
        "threshold would call nearly every document relevant and agree 100% by construction. Fit on qrels with "
        "non-relevant judgments (judged from a pool), or give the thresholds with --grades.")
    assert store.users.model_assessor("pos-bot") is None  # nothing stored
    # with --rel 3 the same grades are all below the threshold: the mirror case is refused too
    with pytest.raises(ValidationError, match="found 3 non-relevant \\(grade < 3\\) and none relevant"):
        ma.judge_with_model(store, LEAD, "p1", "stub-model", "pos-bot", fit_on="pos", rel=3)


def test_grade_mapping_parse_fit_and_agreement_by_hand():
    m = parse_grade_mapping(" 0:<0.3 , 1:<0.5,2:<0.7, 3")
    assert str(m) == "0:<0.3,1:<0.5,2:<0.7,3" and m.grade(0.3) == 1 and m.grade(-5) == 0
    for bad in ("3", "0:0.3,1", "0:<0.5,1:<0.4,2", "1:<0.3,0"):
        with pytest.raises(ValidationError):
            parse_grade_mapping(bad)
    # Nobody gave grade 1: its band is empty (both thresholds at the same point).
    fitted = fit_grade_mapping([0.2, 0.4, 0.6, 0.8], [0, 0, 2, 2], [0, 1, 2])
    assert str(fitted) == "0:<0.5,1:<0.5,2"
    a = fit_agreement([0, 1, 2], [0, 2, 2], [0, 1, 2])
    assert (a.exact, a.binary) == (pytest.approx(2 / 3), 1.0)


def test_a_real_cross_encoder_from_a_local_folder(store, tmp_path, monkeypatch, capsys):
    """The ENVIRONMENT.md recipe: the bundled MiniLM's tokenizer and a random 2-layer BERT
    classifier saved to a folder; CrossEncoder loads it from disk (its scores mean nothing)."""
    pytest.importorskip("sentence_transformers")
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from pooling.retrievers.dense import default_model_path

    monkeypatch.setattr("pooling.retrievers.judge_models.load_judge_model", REAL_LOADER)
    tok = AutoTokenizer.from_pretrained(str(default_model_path()))
    folder = tmp_path / "tiny-ce"
    import torch

    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                                                     num_attention_heads=2, intermediate_size=64, num_labels=1))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    from workbench.cli import main

    store.release_file()
    assert main(["--db", str(store.path), "judge-with-model", "p1", "--model", str(folder), "--as", "tiny-ce",
                 "--grades", "0:<0.5,1", "--lead", "boss", "--token", "boss-token"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model_kind"] == "cross-encoder" and out["kind"] == "model" and out["saved"] == 5
    assert len(out["weights_sha256"]) == 64 and out["grades"] == "0:<0.5,1"
    assert sum(out["grade_counts"].values()) == 5
