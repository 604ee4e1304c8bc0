"""Publishing and diffing as set work in DuckDB (issue 17, the store at campaign size):
the same qrels versions as the Python path, to the entry, hash, count and note.

The Python path (``final_grades`` over ``item_grades``, ``create_qrels_version``,
``diff_qrels``) is the oracle: it is what a rule without SQL still runs, and the
rules' own unit tests pin it by hand.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from pooling.pool import build_pool
from workbench.errors import StoreError, ValidationError
from workbench.judging import adjudication
from workbench.judging.adjudication import diff_qrels, final_grades
from workbench.store import Store
from workbench.types import Document, RunInfo, Topic

RULES = ["median", "majority", "max", "min"]


def _python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every built-in rule one without SQL: the store then publishes in Python."""
    for name in RULES:
        monkeypatch.setitem(adjudication._RULES, name, dataclasses.replace(adjudication._RULES[name], sql=""))


def _seed(tmp_path, seed: int) -> Store:
    """Two pool versions (root and a delta child), three people, unsure marks, re-grades and adjudications, drawn at random."""
    rng = random.Random(seed)
    store = Store(tmp_path / "wb.duckdb")
    docs = [Document(f"d{i}", "", "text") for i in range(40)]
    topics = [Topic(str(t), "q") for t in (1, 2, 10)]
    store.collections.ingest_collection("c", docs, topics)
    version = store.collections.latest_collection_version("c")
    root = {t.topic_id: {f"d{i}": float(40 - i) for i in range(25)} for t in topics}
    delta = {t.topic_id: {f"d{i}": float(40 - i) for i in range(20, 40)} for t in topics}
    store.runs.save_run(RunInfo("r1", "imported", {}, 25, "c", version), root)
    store.runs.save_run(RunInfo("r2", "imported", {}, 20, "c", version), delta)
    store.pools.save_pool("p1", build_pool({"r1": root}, 25), collection="c", collection_version=version)
    store.pools.save_pool("p2", build_pool({"r2": delta}, 20), collection="c", collection_version=version,
                    parent_version="p1")
    store.users.add_user("lead", "lead", token="lead-token-1")
    for name in ("ann", "bob", "cat"):
        store.users.add_user(name, "assessor", lead="lead")
    rows, decided = [], []
    for t in topics:
        for i in range(40):
            for who in ("ann", "bob", "cat"):
                if rng.random() < 0.35:
                    continue
                for _ in range(rng.choice([1, 1, 2])):  # a re-grade: the later row is current
                    g = None if rng.random() < 0.08 else rng.choice([0, 1, 2, 3])
                    rows.append(["c", t.topic_id, f"d{i}", who, g, g is None])
                if rng.random() < 0.06:  # the last save undone: no judgment (neither grade nor unsure)
                    rows.append(["c", t.topic_id, f"d{i}", who, None, False])
            if rng.random() < 0.3:  # a model assessor's grade never decides a published grade
                rows.append(["c", t.topic_id, f"d{i}", "bot", rng.choice([0, 3]), False])
            if rng.random() < 0.1:
                decided.append((t.topic_id, f"d{i}", rng.choice([0, 1, 2, 3]), ""))
    with store.transaction("seed judgments") as cur:  # one transaction: the test stays fast
        cur.execute("INSERT INTO model_assessors (user_name, model, model_kind, weights_hash, grade_mapping, "
                    "created_by) VALUES ('bot', 'minilm', 'bi-encoder', 'h', '0:<0.5,3', 'lead')")
        cur.executemany("INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade, unsure) "
                        "VALUES (?, ?, ?, ?, ?, ?)", rows)
    if decided:
        store.adjudications.adjudicate_many("c", decided, lead="lead", pool_version="p1")
    return store


def _published(store: Store, name: str) -> tuple[dict[str, dict[str, int]], tuple[object, ...]]:
    info = store.qrels.get_qrels_info(name)
    return store.qrels.get_qrels(name), (info.n_topics, info.n_entries, info.n_relevant, info.content_hash, info.note,
                                   info.rule, info.parent_version, info.pool_version, info.origin)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("rule", RULES)
def test_sql_publish_equals_the_python_path(tmp_path, monkeypatch, rule, seed):
    store = _seed(tmp_path, seed)
    store.qrels.publish_qrels("sql-v1", "p1", rule=rule, created_by="lead", note="first")
    store.qrels.publish_qrels("sql-v2", "p2", rule=rule, parent_version="sql-v1", created_by="lead")
    with monkeypatch.context() as m:
        _python_path(m)
        store.qrels.publish_qrels("py-v1", "p1", rule=rule, created_by="lead", note="first")
        store.qrels.publish_qrels("py-v2", "p2", rule=rule, parent_version="py-v1", created_by="lead")
    for version in ("v1", "v2"):
        sql, sql_info = _published(store, f"sql-{version}")
        py, py_info = _published(store, f"py-{version}")
        assert sql == py
        assert sql_info[:6] == py_info[:6]  # counts, hash, note, rule
        assert sql_info[7:] == py_info[7:]
    # and against final_grades over the store's item grades, by hand of the pure rule
    fg = final_grades(store.adjudications.item_grades("c", "p1"),
                      {k: a.grade for k, a in store.adjudications.current_adjudications("c", "p1").items()}, rule)
    assert store.qrels.get_qrels("sql-v1") == {t: dict(sorted(d.items())) for t, d in fg.qrels.items()}


@pytest.mark.parametrize("seed", range(3))
def test_sql_diff_equals_diff_qrels(tmp_path, seed):
    store = _seed(tmp_path, seed)
    store.qrels.publish_qrels("v1", "p1", rule="median", created_by="lead")
    store.qrels.publish_qrels("v2", "p2", rule="max", created_by="lead")  # no parent: some entries removed, some added
    store.qrels.publish_qrels("v3", "p2", rule="min", parent_version="v1", created_by="lead")
    for old, new in (("v1", "v2"), ("v2", "v1"), ("v1", "v3"), (None, "v1"), ("v2", "v2")):
        expected = diff_qrels(store.qrels.get_qrels(old) if old else {}, store.qrels.get_qrels(new))
        assert store.qrels.qrels_diff(old, new) == expected
    assert store.qrels.qrels_diff("v1", "v2").changed  # the case is not trivial


@pytest.mark.parametrize("seed", range(3))
def test_sql_diff_counts_equal_the_lengths_of_diff_qrels(tmp_path, seed):
    store = _seed(tmp_path, seed)
    store.qrels.publish_qrels("v1", "p1", rule="median", created_by="lead")
    store.qrels.publish_qrels("v2", "p2", rule="max", created_by="lead")
    store.qrels.publish_qrels("v3", "p2", rule="min", parent_version="v1", created_by="lead")
    for old, new in (("v1", "v2"), ("v2", "v1"), ("v1", "v3"), (None, "v1"), ("v2", "v2")):
        d = diff_qrels(store.qrels.get_qrels(old) if old else {}, store.qrels.get_qrels(new))
        counts = store.qrels.qrels_diff_counts(old, new)
        assert (counts.added, counts.changed, counts.removed) == (len(d.added), len(d.changed), len(d.removed))
        assert counts == d.counts() and counts.empty == d.empty
    assert store.qrels.qrels_diff_counts(None, "v1").added == store.qrels.get_qrels_info("v1").n_entries
    both = store.qrels.qrels_diff_counts("v1", "v2"), store.qrels.qrels_diff_counts("v2", "v1")
    assert both[0].added and both[0].changed and both[1].removed  # every kind of difference occurs


def test_diff_counts_check_the_content_hash(tmp_path):
    store = _seed(tmp_path, 0)
    store.qrels.publish_qrels("v1", "p1", rule="median", created_by="lead")
    store.qrels.publish_qrels("v2", "p2", rule="max", parent_version="v1", created_by="lead")
    with store.transaction("tamper") as cur:
        cur.execute("UPDATE qrels_entries SET grade = grade + 1 WHERE qrels_version = 'v1' AND doc_id = 'd0'")
    with pytest.raises(StoreError, match="no longer matches its content hash"):
        store.qrels.qrels_diff_counts("v1", "v2")


def test_sql_publish_is_one_transaction_and_refuses_nothing_to_publish(tmp_path):
    store = _seed(tmp_path, 0)
    store.qrels.publish_qrels("v1", "p1", rule="median", created_by="lead")
    n_before = store.judgments.count_judgments()
    with pytest.raises(ValidationError, match="no judged documents"):
        empty = Store(tmp_path / "empty.duckdb")
        empty.collections.ingest_collection("c", [Document("d0", "", "t")], [Topic("1", "q")])
        v = empty.collections.latest_collection_version("c")
        run = {"1": {"d0": 1.0}}
        empty.runs.save_run(RunInfo("r", "imported", {}, 1, "c", v), run)
        empty.pools.save_pool("p", build_pool({"r": run}, 1), collection="c", collection_version=v)
        empty.users.add_user("lead", "lead")
        empty.qrels.publish_qrels("v1", "p", rule="median", created_by="lead")
    assert [q.name for q in empty.qrels.list_qrels_versions()] == []
    assert store.judgments.count_judgments() == n_before


def test_pool_coverage_counts_pooled_documents_with_an_entry(tmp_path):
    store = _seed(tmp_path, 1)
    store.qrels.publish_qrels("v1", "p1", rule="median", created_by="lead")
    pooled = store.pools.pool_documents("p2", with_ancestors=True)
    qrels = store.qrels.get_qrels("v1")
    expected = (sum(len(d) for d in pooled.values()),
                sum(1 for t, docs in pooled.items() for d in docs if d in qrels.get(t, {})))
    assert store.qrels.pool_coverage("p2", "v1") == expected
    assert 0 < expected[1] < expected[0]
