"""Approximate dense runs end to end: stats stored with the run, ANN-recall against an exact run, the sweep."""

from __future__ import annotations

import json

import pytest
from encoder_stub import StubEncoder

from workbench.cli import main
from workbench.errors import ValidationError
from workbench.reports.ann import render_ann_recall, render_sweep, sweep_chart
from workbench.services.runs.pooling import DenseRunRequest, make_dense_run
from workbench.services.vectors.ann import ann_recall_of_run, ann_sweep, exact_reference
from workbench.types import Document, Topic

pytest.importorskip("faiss", reason="faiss-cpu (the dense extra) is not installed")

WORDS = ["shock", "wave", "boundary", "layer", "heat", "transfer", "nozzle", "flow", "wing", "lift", "drag", "jet"]


def _collection(store):
    # 90 documents of two topic words, repeated 1-5 and 1-7 times: distinct vectors, no tied scores.
    docs = [Document(f"d{i:02d}", "", " ".join([WORDS[i % 12]] * (i % 5 + 1) + [WORDS[(i * 5 + 1) % 12]] * (i % 7 + 1)))
            for i in range(90)]
    topics = [Topic("1", "shock wave"), Topic("2", "heat transfer nozzle"), Topic("3", "wing lift drag")]
    store.collections.ingest_collection("toy", docs, topics)


def test_an_hnsw_run_stores_its_parameters_build_size_and_latency(store):
    _collection(store)
    out = make_dense_run(store, DenseRunRequest("toy", "hnsw", depth=5, index="hnsw",
                                                 index_params={"efSearch": 8, "M": 8}, index_threads=1),
                         encoder=StubEncoder())
    assert out.statuses == {"1": "ok", "2": "ok", "3": "ok"}
    info = store.runs.get_run_info("hnsw")
    assert info.params["top_k"] == "approximate" and info.params["index"] == "hnsw"
    assert info.params["index_params"] == {"M": 8, "efConstruction": 40, "efSearch": 8}
    s = store.vectors.get_index_stats("hnsw")
    assert (s.index_kind, s.index_params, s.n_vectors, s.dim, s.threads, s.n_queries) == (
        "hnsw", {"M": 8, "efConstruction": 40, "efSearch": 8}, 90, 64, 1, 3)
    assert s.build_ms > 0 and s.index_bytes > 0 and s.faiss_version
    assert s.latency_p50_ms <= s.latency_p95_ms and s.qps > 0
    latencies = [r.latency_ms for r in store.runs.get_run_topic_statuses("hnsw")]
    assert len(latencies) == 3 and all(ms is not None and ms >= 0 for ms in latencies)
    exact = make_dense_run(store, DenseRunRequest("toy", "exact", depth=5), encoder=StubEncoder())
    assert store.runs.get_run_info("exact").params["top_k"] == "exact"
    assert store.vectors.get_index_stats("exact").index_kind == "exact" and exact.count("ok") == 3


def test_ann_recall_builds_the_exact_reference_on_demand_and_stores_the_result(store):
    _collection(store)
    enc = StubEncoder()
    make_dense_run(store, DenseRunRequest("toy", "ivf", depth=5, index="ivf", index_params={"nlist": 2, "nprobe": 1}),
                   encoder=enc)
    ref, r = ann_recall_of_run(store, "ivf", 5, encoder=enc)
    assert ref == "ivf.exact" and store.runs.get_run_info(ref).depth == 6  # k + 1 deep: ties at k are visible
    exact_run, ivf_run = store.runs.get_run(ref), store.runs.get_run("ivf")
    for t in r.topics:  # the formula, recomputed from the two stored runs
        top = sorted(exact_run[t.topic_id].items(), key=lambda kv: (-kv[1], [-ord(c) for c in kv[0]]))[:5]
        assert t.numerator == len({d for d, _ in top} & set(ivf_run[t.topic_id]))
        assert t.denominator == 5
    assert store.vectors.get_ann_recall("ivf", ref, 5) == r  # stored ...
    assert ann_recall_of_run(store, "ivf", 5, encoder=enc) == (ref, r)  # ... and read back, no new run
    assert ref in [n for n, _, _ in store.runs.dense_runs(store.collections.latest_collection_version("toy"))]
    with pytest.raises(ValidationError, match="needs its top 6"):
        ann_recall_of_run(store, "ivf", 6, encoder=enc)
    with pytest.raises(ValidationError, match="model given is other"):
        exact_reference(store, "ivf", 50, encoder=StubEncoder("other"))
    text = render_ann_recall("ivf", ref, [r], store.vectors.get_index_stats("ivf"))
    assert "ANN-recall@5" in text and "not qrels" in text and "index ivf (nlist=2, nprobe=1)" in text


def test_the_cli_reports_ann_recall_with_its_denominator(store, tmp_path):
    _collection(store)
    enc = StubEncoder()
    make_dense_run(store, DenseRunRequest("toy", "hnsw", depth=10, index="hnsw", index_threads=1), encoder=enc)
    make_dense_run(store, DenseRunRequest("toy", "exact", depth=20), encoder=enc)
    db = str(store.path)
    store.release_file()
    assert main(["--db", db, "ann-recall", "hnsw", "--k", "10", "--format", "json"]) == 0


def test_the_sweep_tabulates_both_denominators_and_diagnoses(store, write):
    _collection(store)
    enc = StubEncoder()
    qrels = write("toy.qrels", "1 0 d00 1\n1 0 d12 1\n2 0 d04 1\n3 0 d08 1\n3 0 d09 1\n")
    sweep = ann_sweep(store, "toy", "ivf", {"nprobe": [1, 2]}, str(qrels), k=3, encoder=enc,
                      missing="zero")
    assert [r.params for r in sweep.rows] == [{"nlist": 2, "nprobe": 1}, {"nlist": 2, "nprobe": 2}]
    full = sweep.rows[1].ann  # nprobe = nlist is exhaustive: the exact neighbours, up to the order of ties
    t3 = full.topics[2]  # exact run of topic 3: d69 and d34 tie at rank 3; the rule keeps d69 (doc_id desc)
    assert (t3.numerator, t3.boundary_tie, t3.tied_outside) == (2, True, 1)  # faiss returned d34: a swap
    assert full.macro == pytest.approx((3 + 3 + 2) / 9) and full.macro_with_ties == 1.0
    assert (full.n_boundary_ties, full.n_tied_outside) == (1, 1)
    assert sweep.rows[0].ann.macro < full.macro  # one list of two probed: neighbours lost
    assert sweep.reference == "sweep-ivf-nlist2-nprobe1.exact" and store.runs.get_run_info(sweep.reference).depth == 4
    assert sweep.diagnosis.verdicts[1] == "index holds"
    assert all(r.stats is not None and r.stats.n_queries == 3 for r in sweep.rows)
    text = render_sweep(sweep)
    assert "ANN-recall@3 [vs exact top-3]" in text and "R@3 [qrels" in text and "not qrels" in text
    assert "diagnosis (shared/seeds/004)" in text
    again = ann_sweep(store, "toy", "ivf", {"nprobe": [1, 2]}, str(qrels), k=3, encoder=enc, missing="zero")
    assert all(r.reused for r in again.rows) and [r.ann for r in again.rows] == [r.ann for r in sweep.rows]
    spec = sweep_chart(sweep).to_dict()
    assert spec["layer"][0]["encoding"]["x"]["title"] == "nprobe (ivf)"
    doc = json.loads(render_sweep(sweep, "json"))
    assert doc["denominators"]["ANN-recall@3"].startswith("the exact top-k")
    with pytest.raises(ValidationError, match="--index hnsw or --index ivf"):
        ann_sweep(store, "toy", "exact", {}, str(qrels), encoder=enc)


def test_a_dense_retriever_searches_only_eligible_documents_through_its_index():
    from pooling.retrievers.dense import DenseRetriever

    docs = {f"d{i}": f"shock wave {'layer ' * i}" for i in range(6)}
    for kind in ("exact", "hnsw"):
        r = DenseRetriever(encoder=StubEncoder(), index=kind, index_threads=1).index(docs)
        mask = r.eligibility_mask({"d4", "d5", "unknown"})
        assert mask.tolist() == [False, False, False, False, True, True]
        hits = r.vector_index.search(r.encode_queries(["shock wave"]), 3, eligible=[mask]).hits[0]
        assert set(hits) == {"d4", "d5"}


def test_ann_recall_at_several_k_uses_one_reference_deep_enough_for_the_largest_k(store):
    # Issue 26: `ann-recall RUN --k 10 --k 20` chose the reference for k = 10 (11 deep) and then
    # refused k = 20 with it. One reference, at least max(k) + 1 deep, serves every k.
    _collection(store)
    enc = StubEncoder()
    make_dense_run(store, DenseRunRequest("toy", "hnsw", depth=20, index="hnsw", index_threads=1), encoder=enc)
    # the oldest: deep enough for k = 10 only
    make_dense_run(store, DenseRunRequest("toy", "exact11", depth=11), encoder=enc)
    make_dense_run(store, DenseRunRequest("toy", "exact21", depth=21), encoder=enc)
    db = str(store.path)
    store.release_file()
    code = main(["--db", db, "ann-recall", "hnsw", "--k", "20", "--k", "10", "--format", "json"])
    assert code == 0
    from workbench.store import Store

    again = Store(db, client="pytest")
    exact, hnsw = again.runs.get_run("exact21"), again.runs.get_run("hnsw")
    for k in (10, 20):  # the formula from the two stored runs: |approximate top-k ∩ exact top-k| / k
        got = again.vectors.get_ann_recall("hnsw", "exact21", k)
        assert got is not None and got.k == k
        for t in got.topics:
            top = sorted(exact[t.topic_id].items(), key=lambda kv: (-kv[1], [-ord(c) for c in kv[0]]))[:k]
            approx = sorted(hnsw[t.topic_id].items(), key=lambda kv: (-kv[1], [-ord(c) for c in kv[0]]))[:k]
            assert t.numerator == len({d for d, _ in top} & {d for d, _ in approx}) and t.denominator == k
    assert again.vectors.get_ann_recall("hnsw", "exact11", 10) is None  # the shallow one was not used
    again.release_file()


def test_ann_recall_at_several_k_builds_one_reference_for_the_largest_k(store):
    from workbench.services.vectors.ann import ann_recall_at

    _collection(store)
    enc = StubEncoder()
    make_dense_run(store, DenseRunRequest("toy", "ivf", depth=8, index="ivf", index_params={"nlist": 2, "nprobe": 1}),
                   encoder=enc)
    ref, results = ann_recall_at(store, "ivf", [8, 3, 3], encoder=enc)
    assert ref == "ivf.exact" and store.runs.get_run_info(ref).depth == 9  # max(k) + 1, built once
    assert [r.k for r in results] == [3, 8]  # ascending, each k once
    assert [r for _, r in (ann_recall_of_run(store, "ivf", k, reference=ref) for k in (3, 8))] == results
    with pytest.raises(ValidationError, match="needs its top 9"):
        ann_recall_at(store, "ivf", [3, 9], encoder=enc)
    with pytest.raises(ValidationError, match="at least one k"):
        ann_recall_at(store, "ivf", [], encoder=enc)
