"""Judging in the store: users and tokens, roles, assignments, append-only and
idempotent judgments, resume, adjudication, final grades, publishing and diffs."""

from __future__ import annotations

import threading

import pytest

from workbench.errors import (
    DuplicateNameError,
    PermissionDeniedError,
    UnknownNameError,
    ValidationError,
)
from workbench.judging.queue import plan_assignments
from workbench.types import Judgment

DOCS = {f"d{i}": (f"Title {i}", f"text of document {i} about flow") for i in range(1, 7)}
TOPICS = {"1": "laminar flow", "2": "shock waves"}


def seed(store, *, collection: str = "toy", pools: dict[str, tuple[str | None, dict[str, list[str]]]] | None = None):
    """A collection with 6 documents and 2 topics, and pool versions
    name -> (parent, topic -> doc ids in priority order), written with SQL."""
    pools = pools or {"p1": (None, {"1": ["d1", "d2", "d3"], "2": ["d4", "d5"]})}
    with store.transaction("seed") as cur:
        cur.execute("INSERT INTO collections (collection) VALUES (?)", [collection])
        cur.execute(
            "INSERT INTO collection_versions (collection_version, collection, n_documents) VALUES (?, ?, ?)",
            ["cv1", collection, len(DOCS)],
        )
        for doc_id, (title, text) in DOCS.items():
            cur.execute("INSERT INTO document_texts VALUES (?, ?, ?)", [f"h-{doc_id}", title, text])
            cur.execute("INSERT INTO version_documents VALUES (?, ?, ?)", ["cv1", doc_id, f"h-{doc_id}"])
        for topic_id, title in TOPICS.items():
            cur.execute(
                "INSERT INTO topics (collection, topic_id, title, description) VALUES (?, ?, ?, ?)",
                [collection, topic_id, title, f"Find documents on {title}."],
            )
        for name, (parent, entries) in pools.items():
            n = sum(len(v) for v in entries.values())
            cur.execute(
                "INSERT INTO pools (pool_version, collection, collection_version, parent_version, depth, "
                "strategy, n_topics, n_entries, content_hash) VALUES (?, ?, 'cv1', ?, 10, 'depth-k', ?, ?, ?)",
                [name, collection, parent, len(entries), n, f"hash-{name}"],
            )
            for topic_id, docs in entries.items():
                for r, doc_id in enumerate(docs, 1):
                    cur.execute(
                        "INSERT INTO pool_entries VALUES (?, ?, ?, ?, 1, ?, ?)",
                        [name, topic_id, doc_id, r, 1.0 / r, r],
                    )
                    cur.execute(
                        "INSERT INTO pool_provenance VALUES (?, ?, ?, 'bm25', ?)", [name, topic_id, doc_id, r]
                    )
    return collection


@pytest.fixture
def people(store):
    """lead + two assessors; returns their tokens."""
    tokens = {"lead": store.users.add_user("lead", "lead", token="lead-secret")}
    tokens["ann"] = store.users.add_user("ann", "assessor", lead="lead")
    tokens["bob"] = store.users.add_user("bob", "assessor", token="bob-secret", lead="lead")
    return tokens


def j(topic, doc, who, grade, **kw) -> Judgment:
    return Judgment(topic, doc, who, grade, **kw)


# -- users -------------------------------------------------------------------


def test_tokens_are_hashed_and_checked(store, people):
    assert store.users.authenticate("bob", "bob-secret").role == "assessor"
    assert store.users.authenticate("ann", people["ann"]).name == "ann"
    assert len(people["ann"]) >= 20
    with pytest.raises(PermissionDeniedError, match="unknown user or wrong token"):
        store.users.authenticate("bob", "wrong-secret")
    with pytest.raises(PermissionDeniedError, match="unknown user or wrong token"):
        store.users.authenticate("nobody", "bob-secret")
    with store.connection() as cur:
        stored = cur.execute("SELECT token_hash, salt FROM users WHERE user_name = 'bob'").fetchone()
    assert "bob-secret" not in stored[0] and stored[0].startswith("pbkdf2-sha256$100000$") and len(stored[1]) == 32


def test_only_a_lead_adds_users_once_a_lead_exists(store, people):
    with pytest.raises(PermissionDeniedError, match="only a lead"):
        store.users.add_user("eve", "assessor")
    with pytest.raises(PermissionDeniedError, match="expected 'lead'"):
        store.users.add_user("eve", "assessor", lead="ann")
    with pytest.raises(DuplicateNameError):
        store.users.add_user("ann", "assessor", lead="lead")
    with pytest.raises(ValidationError, match="user name"):
        store.users.add_user("a b", "assessor", lead="lead")
    with pytest.raises(ValidationError, match="role"):
        store.users.add_user("eve", "boss", lead="lead")  # type: ignore[arg-type]
    assert [u.name for u in store.users.list_users()] == ["ann", "bob", "lead"]


# -- assignments and queue -----------------------------------------------------


def test_assign_is_lead_only_skips_repeats_and_resumes(store, people):
    seed(store)
    collection, items = store.pools.judging_pool_items("p1")
    assert collection == "toy" and len(items) == 5
    plan = plan_assignments(items, ["ann", "bob"], overlap=2, seed=3)
    with pytest.raises(PermissionDeniedError):
        store.judging.assign("p1", plan, lead="ann")
    rep = store.judging.assign("p1", plan, lead="lead")
    assert rep.added == {"ann": 5, "bob": 5}
    again = store.judging.assign("p1", plan, lead="lead")
    assert again.added == {"ann": 0, "bob": 0} and again.skipped == {"ann": 5, "bob": 5}

    queue = store.judging.assessor_queue("ann")
    assert [(q.topic_id, q.doc_id) for q in queue] == plan["ann"]
    assert [q.position for q in queue] == [1, 2, 3, 4, 5] and not any(q.judged for q in queue)
    first = queue[0]
    store.judgments.record_judgment(j(first.topic_id, first.doc_id, "ann", 2), collection="toy", pool_version="p1")
    assert [q.judged for q in store.judging.assessor_queue("ann")] == [True, False, False, False, False]
    assert [q.judged for q in store.judging.assessor_queue("bob")] == [False] * 5

    with pytest.raises(ValidationError, match="not in pool version"):
        store.judging.assign("p1", {"ann": [("1", "d6")]}, lead="lead")
    with pytest.raises(UnknownNameError, match="pool version 'nope'"):
        store.judging.assign("nope", {}, lead="lead")


def test_judging_view_is_blind_and_shows_own_grade(store, people):
    seed(store)
    store.judging.assign("p1", {"ann": [("1", "d2"), ("2", "d4")], "bob": [("1", "d2")]}, lead="lead")
    store.judgments.record_judgment(j("1", "d2", "bob", 3, note="bob's note"), collection="toy", pool_version="p1")
    v = store.judging.judging_view("ann", 1)
    assert (v.position, v.n_queue, v.topic.topic_id, v.document.doc_id) == (1, 2, "1", "d2")
    assert v.topic.title == "laminar flow" and v.document.title == "Title 2"
    assert v.own_grade is None and v.own_note == "" and not v.judged  # bob's grade is not shown
    store.judgments.record_judgment(j("1", "d2", "ann", 1, note="mine"), collection="toy", pool_version="p1")
    v = store.judging.judging_view("ann", 1)
    assert (v.own_grade, v.own_note, v.judged) == (1, "mine", True)
    assert store.judging.judging_view("ann", 3) is None
    with pytest.raises(ValidationError):
        store.judging.judging_view("ann", 0)


# -- judgments -------------------------------------------------------------------


def test_concurrent_double_submit_lands_once(store, people):
    seed(store)
    got: list[int] = []
    barrier = threading.Barrier(6)

    def save() -> None:
        barrier.wait()
        got.append(store.judgments.record_judgment(j("2", "d4", "bob", 1), collection="toy", save_token="same"))

    threads = [threading.Thread(target=save) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 6 and len(set(got)) == 1 and store.judgments.count_judgments() == 1


def test_grade_is_validated_against_the_rubric_a_lead_sets(store, people):
    """The judgment log checks a save against the collection's rubric as ``store.rubrics`` sets it
    (the log's own checks, for every backend: ``test_judgment_log_contract.py``)."""
    seed(store)
    assert store.rubrics.collection_rubric("toy").name == "default"
    with pytest.raises(ValidationError, match="not on the 'default' scale"):
        store.judgments.record_judgment(j("1", "d1", "ann", 4), collection="toy")
    with pytest.raises(PermissionDeniedError):
        store.rubrics.set_collection_rubric("toy", "cranfield", lead="ann")
    store.rubrics.set_collection_rubric("toy", "cranfield", lead="lead")
    store.judgments.record_judgment(j("1", "d1", "ann", 4), collection="toy")  # on the Cranfield 0-4 scale
    assert store.judgments.count_judgments() == 1
    assert store.judgments.judgment_rows("toy")[0].rubric_version.startswith("cranfield@")


def test_rubric_change_is_refused_while_current_grades_fall_outside_it(store, people):
    """QA defect: `workbench rubric cranfield default` after grade-4 judgments
    was allowed and agreement then crashed on the off-scale grades."""
    seed(store)
    store.rubrics.set_collection_rubric("toy", "cranfield", lead="lead")
    store.judgments.record_judgment(j("1", "d1", "ann", 4), collection="toy")
    store.judgments.record_judgment(j("1", "d2", "bob", 4), collection="toy")
    store.judgments.record_judgment(j("1", "d2", "ann", 1), collection="toy")
    with pytest.raises(ValidationError, match=r"expected every current grade in its scale \[0, 1, 2, 3\], "
                                              r"found grade 4 in 2 current judgment\(s\)"):
        store.rubrics.set_collection_rubric("toy", "default", lead="lead")
    assert store.rubrics.collection_rubric("toy").name == "cranfield"  # unchanged
    # once the current grades fit (a later save of 3 supersedes each 4), the change is allowed
    store.judgments.record_judgment(j("1", "d1", "ann", 3), collection="toy")
    store.judgments.record_judgment(j("1", "d2", "bob", 2), collection="toy")
    assert store.rubrics.set_collection_rubric("toy", "default", lead="lead").name == "default"


def test_rubric_change_is_refused_while_an_adjudication_falls_outside_it(store, people):
    seed(store)
    store.rubrics.set_collection_rubric("toy", "cranfield", lead="lead")
    store.judgments.record_judgment(j("1", "d1", "ann", 1), collection="toy", pool_version="p1")
    store.adjudications.adjudicate("toy", "1", "d1", 4, lead="lead", rationale="r", pool_version="p1")
    with pytest.raises(ValidationError, match=r"found grade 4 in 1 current adjudication\(s\)"):
        store.rubrics.set_collection_rubric("toy", "default", lead="lead")


def test_rubric_of_an_unknown_collection_is_refused(store, people):
    seed(store)
    with pytest.raises(UnknownNameError, match="nosuch") as e:
        store.rubrics.set_collection_rubric("nosuch", "default", lead="lead")
    assert "toy" in str(e.value)  # lists the known collections
    with store.connection() as cur:
        assert cur.execute("SELECT count(*) FROM meta WHERE key = 'rubric:nosuch'").fetchone()[0] == 0


def test_cranfield_collections_default_to_the_cranfield_rubric(store):
    assert store.rubrics.collection_rubric("cranfield-1400").name == "cranfield"
    assert store.rubrics.collection_rubric("robust04").name == "default"


# -- adjudication, final grades, publish ---------------------------------------------


def test_adjudication_is_lead_only_and_wins(store, people):
    seed(store)
    store.judgments.record_judgment(j("1", "d1", "ann", 0), collection="toy")
    store.judgments.record_judgment(j("1", "d1", "bob", 3), collection="toy")
    store.judgments.record_judgment(j("1", "d2", "ann", 2), collection="toy")
    store.judgments.record_judgment(j("1", "d2", "bob", 2), collection="toy")
    store.judgments.record_judgment(j("2", "d4", "ann", 1), collection="toy")
    store.judgments.record_judgment(j("2", "d4", "bob", 2), collection="toy")
    with pytest.raises(PermissionDeniedError):
        store.adjudications.adjudicate("toy", "1", "d1", 2, lead="ann", rationale="x")
    store.adjudications.adjudicate("toy", "1", "d1", 2, lead="lead", rationale="partly about flow")
    assert store.adjudications.final_grades("toy", "p1", "median") == {"1": {"d1": 2, "d2": 2}, "2": {"d4": 1}}
    assert store.adjudications.final_grades("toy", "p1", "max") == {"1": {"d1": 2, "d2": 2}, "2": {"d4": 2}}
    adj = store.adjudications.current_adjudications("toy")[("1", "d1")]
    assert (adj.grade, adj.lead, adj.rationale) == (2, "lead", "partly about flow")


def test_publish_freezes_final_grades_with_lineage_and_parent(store, people):
    seed(
        store,
        pools={
            "p1": (None, {"1": ["d1", "d2"], "2": ["d4"]}),
            "p2": ("p1", {"1": ["d3"], "2": ["d5"]}),  # delta pool extending p1
        },
    )
    for topic, doc, a, b in [("1", "d1", 1, 1), ("1", "d2", 0, 2), ("2", "d4", 3, 3)]:
        store.judgments.record_judgment(j(topic, doc, "ann", a), collection="toy", pool_version="p1")
        store.judgments.record_judgment(j(topic, doc, "bob", b), collection="toy", pool_version="p1")
    with pytest.raises(PermissionDeniedError):
        store.qrels.publish_qrels("v1", "p1", rule="median", created_by="ann")
    v1 = store.qrels.publish_qrels("v1", "p1", rule="median", created_by="lead")
    assert (v1.n_topics, v1.n_entries, v1.n_relevant) == (2, 3, 2)
    assert (v1.rule, v1.pool_version, v1.parent_version, v1.origin) == (
        "adjudicated>unanimous>median", "p1", None, "published")
    assert store.qrels.get_qrels("v1") == {"1": {"d1": 1, "d2": 0}, "2": {"d4": 3}}

    # delta judged, one v1 document re-judged by both assessors
    store.judgments.record_judgment(j("1", "d3", "ann", 2), collection="toy", pool_version="p2")
    store.judgments.record_judgment(j("2", "d5", "bob", 0), collection="toy", pool_version="p2")
    store.judgments.record_judgment(j("1", "d2", "ann", 2), collection="toy", pool_version="p2")
    v2 = store.qrels.publish_qrels("v2", "p2", rule="median", parent_version="v1", created_by="lead")
    assert v2.parent_version == "v1" and v2.pool_version == "p2"
    assert store.qrels.get_qrels("v2") == {"1": {"d1": 1, "d2": 2, "d3": 2}, "2": {"d4": 3, "d5": 0}}
    d = store.qrels.qrels_diff("v1", "v2")
    assert [(q.topic_id, q.doc_id, q.grade) for q in d.added] == [("1", "d3", 2), ("2", "d5", 0)]
    assert d.changed == [("1", "d2", 0, 2)] and d.removed == []
    assert store.qrels.qrels_diff(None, "v1").added and store.qrels.qrels_diff("v2", "v2").empty

    with pytest.raises(DuplicateNameError):
        store.qrels.publish_qrels("v1", "p1", rule="median", created_by="lead")
    with pytest.raises(UnknownNameError, match="final-grade rule"):
        store.qrels.publish_qrels("v3", "p1", rule="mean", created_by="lead")


def test_publish_with_an_imported_parent_keeps_its_entries(store, people):
    seed(store)
    store.qrels.create_qrels_version("official", "toy", {"1": {"d1": 2, "d6": 1}}, origin="imported", rule="as-is")
    store.judgments.record_judgment(j("1", "d2", "ann", 3), collection="toy", pool_version="p1")
    store.judgments.record_judgment(j("1", "d1", "ann", 0), collection="toy", pool_version="p1")
    store.qrels.publish_qrels("v1", "p1", rule="median", parent_version="official", created_by="lead")
    assert store.qrels.get_qrels("v1") == {"1": {"d1": 0, "d2": 3, "d6": 1}}


def test_publish_with_nothing_judged_is_refused(store, people):
    seed(store)
    with pytest.raises(ValidationError, match="no judged documents"):
        store.qrels.publish_qrels("v1", "p1", rule="median", created_by="lead")


def test_pool_progress_and_run_contributions(store, people):
    seed(store)
    store.judging.assign("p1", {"ann": [("1", "d1"), ("1", "d2")], "bob": [("1", "d1")]}, lead="lead")
    store.judgments.record_judgment(j("1", "d1", "ann", 1), collection="toy")
    store.judgments.record_judgment(j("1", "d1", "bob", 1), collection="toy")
    store.judgments.record_judgment(j("1", "d2", "ann", 0), collection="toy")
    rows = {r.topic_id: r for r in store.judging.pool_judging_progress("p1")}
    assert (rows["1"].n_documents, rows["1"].n_assigned, rows["1"].n_judged, rows["1"].n_multi_judged) == (3, 2, 2, 1)
    assert (rows["2"].n_documents, rows["2"].n_judged) == (2, 0)
    assert store.pools.pool_run_contributions("p1") == [("bm25", 5, 5)]
