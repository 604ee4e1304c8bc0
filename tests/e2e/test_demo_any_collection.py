"""The demo on a small non-Cranfield collection with unjudged topics: no invented grades.

A hand-made SMART collection (positives-only qrels ``q d 0 0.000000``; queries
4 and 5 have no judgments) is converted with ``convert smart`` and run through
the whole workflow with a stub encoder.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "pooling"))
from encoder_stub import StubEncoder  # noqa: E402

FILLER = ["heat", "plate", "shock", "wave", "jet", "nozzle", "blade", "stall", "boundary", "layer"]
TEXTS = {
    1: "wing lift", 2: "drag speed", 3: "flow separation", 4: "buckling plate", 5: "noise jet",
    # inflected forms only: BM25 with stemming (the new run of step 6) finds them, the other runs do not
    13: "wings lifting", 14: "dragging speeds", 15: "flows separating",
}
DOCS = "".join(
    f".I {i}\n.T\n{TEXTS.get(i, FILLER[i % 10] + ' ' + FILLER[(i + 3) % 10])}\n.A\nauthor {i}\n.W\n"
    f"{TEXTS.get(i, FILLER[(i + 1) % 10] + ' ' + FILLER[(i + 5) % 10])} study .\n"
    for i in range(1, 31)
)
QUERIES = "".join(f".I {q}\n.W\n{TEXTS[q]} .\n" for q in range(1, 6))
QRELS = "1 1 0 0.000000\n1 13 0 0.000000\n2 2 0 0.000000\n2 14 0 0.000000\n3 3 0 0.000000\n"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from workbench.demo.workflow import WorkflowOptions, run_workflow
    from workbench.services.collections.convert import SmartSpec, convert_smart
    from workbench.store import Store

    tmp = tmp_path_factory.mktemp("anydemo")
    for name, text in (("toy.all", DOCS), ("toy.qry", QUERIES), ("toy.rel", QRELS)):
        (tmp / name).write_text(text)
    convert_smart(SmartSpec(tmp / "toy.all", tmp / "toy.qry", tmp / "toy.rel"), tmp / "toy")
    store = Store(tmp / "wb.duckdb", client="pytest")
    options = WorkflowOptions(folder=tmp / "toy", run_depth=10, pool_depth=3, cutoffs=(3, 5, 10), headline_k=3,
                              labels_dir=tmp / "labels", encoder=StubEncoder())
    return store, run_workflow(store, options), tmp


def test_reference_assessor_is_named_after_the_collection(demo):
    from workbench.demo.render_workflow import render_workflow

    store, report, _ = demo
    assert report.reference_assessor == "toy-reference"
    assert {u.name for u in store.users.list_users()} == {"demo-lead", "toy-reference"}
    text = render_workflow(report)
    assert "cranfield" not in text
    assert f"Pool v1 {report.pool_v1.pool_version} (created): depth 3" in text and "judged now by toy-reference" in text
    assert report.pools_created == [report.pool_v1.pool_version, report.pool_v2.pool_version]


def test_topics_without_reference_judgments_are_not_pooled_and_nothing_is_invented(demo):
    store, report, _ = demo
    pooled = set(store.pools.pool_documents(report.pool_v1.pool_version)) | set(store.pools.pool_documents(report.pool_v2.pool_version))
    assert pooled <= {"1", "2", "3"}  # topics 4 and 5 have no reference judgment: not pooled (--topics judged)
    assert report.topics_not_pooled == ("4", "5")
    judged = store.judgments.current_judgments("toy")
    assert {j.topic_id for j in judged if j.assessor == "toy-reference"} <= {"1", "2", "3"}
    # every reference judgment is the reference grade, or 0 for a pooled document the reference left out
    # of a topic it did judge (the collection lists its relevant documents completely)
    ref = store.qrels.get_qrels("toy-reference")
    for j in judged:
        assert j.grade == ref.get(j.topic_id, {}).get(j.doc_id, 0)


def test_a_pool_with_unjudged_topics_leaves_their_documents_unjudged_and_says_so(demo):
    from workbench.demo.workflow import judge_with_reference, reference_assessor
    from workbench.services.judging.assessments import sign_in
    from workbench.services.runs.pooling import build_pool

    store, report, _ = demo
    pool = build_pool(store.pools, store.runs, ["bm25"], depth=2, name="toy-all-topics").info
    assert {"4", "5"} <= set(store.pools.pool_documents(pool.pool_version))
    lead = sign_in(store.users, "demo-lead", report.tokens["demo-lead"])
    name = reference_assessor("toy")
    assessor = sign_in(store.users, name, report.tokens[name])
    outcome = judge_with_reference(store, lead, assessor, pool.pool_version, store.qrels.get_qrels("toy-reference"))
    docs = store.pools.pool_documents(pool.pool_version)
    assert outcome.unjudged_topics == ("4", "5")
    assert outcome.left_unjudged == len(docs["4"]) + len(docs["5"])
    assert not [j for j in store.judgments.current_judgments("toy", pool.pool_version) if j.topic_id in ("4", "5")]


def test_binary_rubric_and_positives_only_warning_in_the_report(demo):
    from workbench.demo.render_workflow import render_workflow

    store, report, _ = demo
    assert store.rubrics.collection_rubric("toy").name == "binary"  # qrels.meta.json of the conversion suggests it
    assert "the qrels hold no non-relevant judgments" not in render_workflow(report).split("Scores on toy-v1")[0]
    assert "toy-reference: the qrels hold no non-relevant judgments" in render_workflow(report)


def test_a_collection_pooled_whole_by_v1_still_runs_the_demo(tmp_path):
    """Five documents, pool depth 10: v1 holds everything, the new run brings nothing to judge."""
    from workbench.demo.render_workflow import render_workflow
    from workbench.demo.workflow import WorkflowOptions, run_workflow
    from workbench.services.collections.convert import SmartSpec, convert_smart
    from workbench.store import Store

    docs = "".join(f".I {i}\n.T\n{TEXTS[i]}\n.W\n{TEXTS[i]} study .\n" for i in range(1, 6))
    for name, text in (("s.all", docs), ("s.qry", QUERIES), ("s.rel", "1 1\n2 2\n")):
        (tmp_path / name).write_text(text)
    convert_smart(SmartSpec(tmp_path / "s.all", tmp_path / "s.qry", tmp_path / "s.rel"), tmp_path / "small")
    store = Store(tmp_path / "wb.duckdb", client="pytest")
    report = run_workflow(store, WorkflowOptions(folder=tmp_path / "small", run_depth=10, pool_depth=10,
                                                 cutoffs=(5, 10), headline_k=5, labels_dir=tmp_path / "labels",
                                                 encoder=StubEncoder()))
    assert report.no_delta and report.pool_v2.pool_version == report.pool_v1.pool_version
    assert store.qrels.get_qrels("small-v2") == store.qrels.get_qrels("small-v1")
    assert "Pool v2: none: the new run bm25-stem brings no pool-novel document" in render_workflow(report)
