"""The demo's filtered scenario on a Cranfield subset with its real year metadata.

Post-filtering keeps the eligible documents of the unfiltered top K, which all
rank within the top K of the eligible documents, so per topic its list is a
subset of the pre-filtered list and its R@K can only be lower or equal: the
test checks that per topic, and recomputes the filters from the metadata.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_corpus" / "cranfield"
sys.path.insert(0, str(ROOT / "tests" / "pooling"))
from encoder_stub import StubEncoder  # noqa: E402

TOPICS = [str(t) for t in range(1, 5)]


def _subset(dest: Path) -> None:
    lines = (SAMPLE / "qrels.reference.txt").read_text().splitlines()
    keep = {line.split()[2] for line in lines if line.split()[0] in TOPICS}
    docs = [json.loads(x) for x in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    keep |= {d["_id"] for d in docs[:30]}
    dest.mkdir()
    (dest / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs if d["_id"] in keep))
    meta = [json.loads(x) for x in (SAMPLE / "doc_metadata.jsonl").read_text().splitlines()]
    (dest / "doc_metadata.jsonl").write_text("".join(json.dumps(m) + "\n" for m in meta if m["doc_id"] in keep))
    queries = [json.loads(x) for x in (SAMPLE / "queries.jsonl").read_text().splitlines()]
    (dest / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries if q["_id"] in TOPICS))
    (dest / "qrels.reference.txt").write_text(
        "\n".join(x for x in lines if x.split()[0] in TOPICS and x.split()[2] in keep) + "\n")


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    from workbench.demo.filters import run_filter_demo
    from workbench.services.collections.ingest import ingest_folder
    from workbench.services.runs.pooling import DenseRunRequest, make_bm25_run, make_dense_run
    from workbench.store import Store

    tmp = tmp_path_factory.mktemp("filters")
    _subset(tmp / "sub")
    store = Store(tmp / "wb.duckdb", client="pytest")
    enc = StubEncoder()
    with store.connection("test setup"):  # one lease: the many small store calls reuse one connection
        ingest_folder(store, tmp / "sub", name="sub")
        make_bm25_run(store, "sub", "bm25", depth=100)
        make_dense_run(store, DenseRunRequest("sub", "dense", depth=100), encoder=enc)
        report = run_filter_demo(store, "sub", "sub-reference", unfiltered_runs={"bm25": "bm25", "dense": "dense"},
                                 encoder=enc)
    return store, report


def test_filters_are_the_as_of_year_of_the_latest_relevant_document(scenario):
    store, report = scenario
    years = {d: m["year"] for d, m in store.metadata.document_metadata("sub").items() if "year" in m}
    qrels = store.qrels.get_qrels("sub-reference")
    meta = store.metadata.topic_metadata("sub")
    for t in TOPICS:
        dated = [years[d] for d, g in qrels.get(t, {}).items() if g >= 1 and d in years]
        if dated:
            assert meta[t]["filter_asof"] == f"year <= {max(dated)} or not has(year)"
        else:
            assert "filter_asof" not in meta.get(t, {})
    assert report.ineligible_gold == 0 and 0 < report.eligible_share < 1
    assert report.n_filtered == sum(1 for t in TOPICS if "filter_asof" in meta.get(t, {}))


def test_post_filtering_never_beats_pre_filtering_and_filtered_runs_never_leak(scenario):
    store, report = scenario
    assert {(r.system, r.k, r.mode) for r in report.rows} == {
        (s, k, m) for s in ("bm25", "dense") for k in (10, 50) for m in ("pre", "post", "none")}
    for r in report.rows:
        if r.mode in ("pre", "post"):
            assert r.leaks == 0, r
    for system in ("bm25", "dense"):
        for k in (10, 50):
            pre, post = store.runs.get_run(f"{system}-asof-pre-k{k}"), store.runs.get_run(f"{system}-asof-post-k{k}")
            for t, docs in post.items():
                assert set(docs) <= set(pre.get(t, {})), (system, k, t)
            assert report.row(system, k, "post").recall <= report.row(system, k, "pre").recall + 1e-12
            info = store.runs.get_run_info(f"{system}-asof-post-k{k}")
            short = sum(1 for docs in post.values() if len(docs) < k)
            assert report.row(system, k, "post").short == info.params["filter"]["topics_short"]
            assert short <= info.params["filter"]["topics_short"]  # topics emptied by the filter are short too
    assert any(r.leaks > 0 for r in report.rows if r.mode == "none")  # unfiltered runs leak


def test_the_scenario_is_idempotent_and_renders(scenario):
    from workbench.demo.filters import run_filter_demo
    from workbench.demo.render_filters import render_filter_demo

    store, report = scenario
    n_runs = len(store.runs.list_runs("sub"))
    again = run_filter_demo(store, "sub", "sub-reference", unfiltered_runs={"bm25": "bm25", "dense": "dense"},
                            encoder=StubEncoder())
    assert len(store.runs.list_runs("sub")) == n_runs and [r.recall for r in again.rows] == [r.recall for r in report.rows]
    text = "\n".join(render_filter_demo(report))
    assert "K = 10" in text and "K = 50" in text and "topics short (< 10)" in text and "leaks@50" in text
