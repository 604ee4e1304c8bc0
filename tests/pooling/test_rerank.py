"""Rerankers (issue 10): the bi-encoder over the embedding cache, the real CrossEncoder path on a tiny
random model, per-topic timing, and a rerank run through the store with its lineage and cost.
"""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest
from encoder_stub import StubEncoder
from test_dense import DictCache
from tiny_cross_encoder import build_tiny_cross_encoder

from pooling.retrievers.dense import model_key_for, text_hash
from pooling.retrievers.rerank import (
    BiEncoderReranker,
    CrossEncoderReranker,
    rerank_topics,
    split_model_key,
)
from workbench.errors import ValidationError
from workbench.ranking import ranked_ids
from workbench.services.runs.stages import (
    RerankerSpec,
    make_rerank_run,
    make_reranker,
    stage_reports,
)
from workbench.types import Document, RunInfo, Topic

DOCS = {"a": "shock wave on a wedge", "b": "boundary layer transition", "c": "heat transfer in slabs",
        "d": "shock wave boundary layer interaction"}


@pytest.fixture(scope="module")
def tiny_ce(tmp_path_factory):
    import torch

    torch.set_num_threads(1)
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("models") / "tiny-ce")


def _clock(step: float = 0.002):
    """A fake perf_counter: each call advances by ``step`` seconds."""
    counter = itertools.count()
    return lambda: next(counter) * step


def test_bi_encoder_scores_are_cosines_and_cached_vectors_are_not_encoded_again():
    enc, cache = StubEncoder(), DictCache()
    hashes = {d: f"H-{d}" for d in DOCS}
    r = BiEncoderReranker(encoder=enc, cache=cache, label="stub")
    r.prepare(DOCS, hashes)
    assert (r.n_encoded, r.n_cached) == (4, 0)
    assert sorted(k[1] for k in cache.rows) == sorted(hashes.values())
    scores = r.score("shock wave", ["a", "c", "d"])
    vecs = enc.encode([DOCS["a"], DOCS["c"], DOCS["d"]])
    q = enc.encode(["shock wave"])[0]
    assert scores == pytest.approx(vecs @ q)
    enc.texts_encoded.clear()
    again = BiEncoderReranker(encoder=enc, cache=cache)
    again.prepare(DOCS, hashes)
    assert (again.n_encoded, again.n_cached) == (0, 4)
    assert DOCS["a"] not in enc.texts_encoded  # only the warm-up text and no document
    assert (again.label, again.model_name, again.model_hash) == ("stub", "stub", "0000")  # stub@sha256:0000


def test_rerank_topics_returns_a_permutation_per_topic_with_measured_cost():
    r = BiEncoderReranker(encoder=StubEncoder())
    queries = {"1": "shock wave", "2": "heat", "3": "nothing here", "4": "blank"}
    cands = {"1": ["c", "a", "d"], "2": ["b", "c"], "4": []}
    res = rerank_topics(r, queries, cands, DOCS, run_name="x", clock=_clock())
    assert res.statuses == {"1": "ok", "2": "ok", "3": "empty", "4": "empty"}
    assert set(res.run["1"]) == {"a", "c", "d"} and set(res.run["2"]) == {"b", "c"}
    assert ranked_ids(res.run["1"])[0] in {"a", "d"}  # the two "shock wave" documents beat heat transfer
    assert res.messages["3"] == "the candidate run has no results for this topic"
    cost = res.cost
    # The fake clock advances 2 ms per call: prepare = one interval, each topic = one interval.
    assert cost.prepare_ms == pytest.approx(2.0)
    assert [(t.topic_id, t.n_documents, t.wall_ms) for t in cost.topics] == [
        ("1", 3, pytest.approx(2.0)), ("2", 2, pytest.approx(2.0))]
    assert (cost.n_documents, cost.ms_per_document, cost.batch_size, cost.device) == (5, pytest.approx(0.8), 64, "cpu")


def test_a_failing_or_non_finite_topic_is_an_error_and_the_others_still_run():
    class Flaky(BiEncoderReranker):
        def score(self, query, doc_ids):
            if query == "boom":
                raise RuntimeError("out of memory")
            if query == "nan":
                return np.array([np.nan] * len(doc_ids))
            return super().score(query, doc_ids)

    r = Flaky(encoder=StubEncoder())
    res = rerank_topics(r, {"1": "boom", "2": "nan", "3": "shock"}, {t: ["a", "b"] for t in "123"}, DOCS)
    assert res.statuses == {"1": "error", "2": "error", "3": "ok"}
    assert res.messages["1"] == "RuntimeError: out of memory"
    assert res.messages["2"].startswith("non-finite reranker score for 2 document(s)")
    assert [t.topic_id for t in res.cost.topics] == ["3"]
    with pytest.raises(ValidationError, match="no text"):
        rerank_topics(r, {"1": "x"}, {"1": ["zzz"]}, DOCS)


def test_reranker_options_are_checked():
    with pytest.raises(ValidationError, match="choose one reranker"):
        make_reranker(RerankerSpec(model_path="m", cross_encoder="c"))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="CrossEncoder model folder"):
        CrossEncoderReranker("/nonexistent/folder")
    with pytest.raises(ValidationError, match="batch size"):
        BiEncoderReranker(encoder=StubEncoder(), batch_size=0)
    assert split_model_key("m@sha256:ff") == ("m", "ff") and split_model_key("m") == ("m", "")


def test_the_real_cross_encoder_path_on_a_tiny_random_model(tiny_ce):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    r = CrossEncoderReranker(tiny_ce, batch_size=2, threads=1)
    assert (r.kind, r.label, r.model_name) == ("cross-encoder", "tiny-ce", "tiny-ce")
    assert r.model_hash == split_model_key(model_key_for(tiny_ce))[1]
    # The hash is sha256 over the folder's files (path + NUL + bytes, sorted): weights and configs.
    h = hashlib.sha256()
    for p in sorted(tiny_ce.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(tiny_ce).as_posix().encode() + b"\0" + p.read_bytes())
    assert r.model_hash == h.hexdigest()[:16]
    r.prepare(DOCS)
    got = r.score("shock wave", ["a", "b", "c"])
    # Oracle: the same folder through transformers directly, sigmoid of the single logit
    # (sentence-transformers' CrossEncoder default activation for one label).
    tok = AutoTokenizer.from_pretrained(str(tiny_ce))
    model = AutoModelForSequenceClassification.from_pretrained(str(tiny_ce)).eval()
    with torch.no_grad():
        batch = tok(["shock wave"] * 3, [DOCS[d] for d in "abc"], padding=True, truncation=True, return_tensors="pt")
        expected = torch.sigmoid(model(**batch).logits).reshape(-1).numpy()
    assert got == pytest.approx(expected.astype(np.float64), abs=1e-5)
    assert len(set(np.round(got, 7))) == 3  # random weights still tell the pairs apart


def _toy_store(store):
    docs = [Document(d, "", t) for d, t in DOCS.items()]
    store.collections.ingest_collection("toy", docs, [Topic("1", "shock wave"), Topic("2", "heat transfer"), Topic("3", "")])
    store.runs.save_run(RunInfo("bm25", "bm25", {}, 4, "toy"),
                   {"1": {"b": 4.0, "c": 3.0, "a": 2.0, "d": 1.0}, "2": {"a": 2.0, "c": 1.0}},
                   statuses={"3": "error"}, messages={"3": "the retriever failed"})
    return store


def test_a_rerank_run_through_the_store_keeps_lineage_cost_and_the_permutation(store, tiny_ce):
    _toy_store(store)
    out = make_rerank_run(store.collections, store.runs, store.vectors, "bm25", 3, "bm25+tiny", spec=RerankerSpec(cross_encoder=tiny_ce, batch_size=4,
                                                                            threads=1))
    lin = store.runs.get_run_lineage("bm25+tiny")
    assert lin == out.lineage and (lin.candidate_run, lin.candidate_depth, lin.reranker) == ("bm25", 3, "tiny-ce")
    assert (lin.reranker_kind, lin.model_name, lin.origin) == ("cross-encoder", "tiny-ce", "produced")
    assert lin.model_hash == split_model_key(model_key_for(tiny_ce))[1]
    run = store.runs.get_run("bm25+tiny")
    assert set(run["1"]) == {"b", "c", "a"} and set(run["2"]) == {"a", "c"}  # the top 3 (2), reordered
    assert store.runs.get_run_statuses("bm25+tiny") == {"1": "ok", "2": "ok", "3": "error"}
    cost = store.runs.get_rerank_cost("bm25+tiny")
    assert cost == out.cost and [(t.topic_id, t.n_documents) for t in cost.topics] == [("1", 3), ("2", 2)]
    assert (cost.batch_size, cost.device, cost.threads) == (4, "cpu", 1)
    assert all(t.wall_ms > 0 for t in cost.topics) and cost.prepare_ms > 0
    info = store.runs.get_run_info("bm25+tiny")
    assert info.params["model"] == lin.model_identity and info.depth == 3
    with pytest.raises(ValidationError, match="holds at most 4 documents per topic"):
        make_rerank_run(store.collections, store.runs, store.vectors, "bm25", 5, "deep", spec=RerankerSpec(cross_encoder=tiny_ce))


def test_stages_on_a_produced_rerank_run_says_permutation(store, tiny_ce, write):
    _toy_store(store)
    qrels = write("toy.qrels", "1 0 a 1\n1 0 d 2\n2 0 c 1\n")
    make_rerank_run(store.collections, store.runs, store.vectors, "bm25", 3, "bm25+tiny", spec=RerankerSpec(cross_encoder=tiny_ce, threads=1))
    result = stage_reports(["bm25+tiny"], str(qrels), open_store=lambda: store, final_k=1)
    rep = result.reports[0]
    assert rep.name == "bm25+tiny-ce" and rep.candidate_run == "bm25" and rep.depth == 3
    assert rep.check.is_permutation and rep.check.n_dropped == 0
    # Candidates: topic 1 top 3 = b, c, a -> R@3 = 1/2 (a of a, d); topic 2 top 3 = a, c -> R@3 = 1.
    assert rep.row("R@3", "candidates").macro == pytest.approx((1 / 2 + 1) / 2) == rep.row("R@3", "final").macro
    assert result.pipelines[0].cost is not None
    assert text_hash("x") == hashlib.sha256(b"x").hexdigest()


# -- what a depth sweep times (issue 26) ---------------------------------------------------------------


class _TextsClock:
    """A fake perf_counter whose seconds are texts encoded / 1000: a timed block's ms = texts encoded inside it."""

    def __init__(self, enc: StubEncoder) -> None:
        self.enc = enc

    def __call__(self) -> float:
        return len(self.enc.texts_encoded) / 1000.0


def test_score_from_text_encodes_the_query_and_every_candidate_and_equals_score():
    enc = StubEncoder()
    r = BiEncoderReranker(encoder=enc, cache=DictCache())
    r.prepare(DOCS, {d: f"H-{d}" for d in DOCS})
    enc.texts_encoded.clear()
    cached = r.score("shock wave", ["a", "c", "d"])
    assert enc.texts_encoded == ["shock wave"]  # cached vectors: the query only
    enc.texts_encoded.clear()
    fresh = r.score_from_text("shock wave", ["a", "c", "d"])
    assert enc.texts_encoded == ["shock wave", DOCS["a"], DOCS["c"], DOCS["d"]]
    assert fresh == pytest.approx(cached)
    res = rerank_topics(r, {"1": "shock wave", "2": "heat"}, {"1": ["c", "a", "d"], "2": ["b"]}, DOCS,
                        prepare=False, from_text=True, clock=_TextsClock(enc))
    # inside each topic's timed block: one query and its D candidates
    assert [(t.topic_id, t.n_documents, t.wall_ms) for t in res.cost.topics] == [
        ("1", 3, pytest.approx(4.0)), ("2", 1, pytest.approx(2.0))]
    with pytest.raises(ValidationError, match="was not prepared"):
        r.score_from_text("x", ["zzz"])


def test_the_cross_encoders_score_from_text_is_its_score(tiny_ce):
    r = CrossEncoderReranker(tiny_ce, batch_size=2, threads=1)
    r.prepare(DOCS)
    assert r.score_from_text("shock wave", ["a", "b", "c"]) == pytest.approx(r.score("shock wave", ["a", "b", "c"]))


def _sweep_store(store):
    """Six documents, two topics; the candidate run ranks 6 documents for topic 1 and 3 for topic 2."""
    docs = {**DOCS, "e": "supersonic flow past a cone", "f": "laminar boundary layer with suction"}
    store.collections.ingest_collection("toy", [Document(d, "", t) for d, t in docs.items()],
                                        [Topic("1", "shock wave"), Topic("2", "heat transfer")])
    store.runs.save_run(RunInfo("bm25", "bm25", {}, 6, "toy"),
                        {"1": {"b": 6.0, "c": 5.0, "a": 4.0, "d": 3.0, "e": 2.0, "f": 1.0},
                         "2": {"a": 3.0, "c": 2.0, "f": 1.0}})
    return store


def test_a_depth_sweep_times_the_document_encodings_and_keeps_the_cached_cost_apart(store, write):
    from workbench.services.runs.depth_sweep import depth_sweep

    _sweep_store(store)
    qrels = write("toy.qrels", "1 0 a 1\n1 0 d 2\n1 0 f 1\n2 0 c 1\n")
    enc = StubEncoder()
    sweep = depth_sweep("bm25", (1, 3, 6), str(qrels), open_store=lambda: store, final_k=1,
                        reranker=BiEncoderReranker(encoder=enc, cache=store.vectors), clock=_TextsClock(enc))
    assert sweep.cost_topics == sweep.topics == ("1", "2")
    # The cost from text: per topic the query and its D candidates are encoded inside the timed block
    # (topic 2 has 3 candidates, so D = 6 reranks 3), so the cost per topic grows with D: ms = 1 + n.
    for d in (1, 3, 6):
        n1, n2 = min(d, 6), min(d, 3)
        assert [(t.topic_id, t.n_documents, t.wall_ms) for t in sweep.costs[d].topics] == [
            ("1", n1, pytest.approx(n1 + 1.0)), ("2", n2, pytest.approx(n2 + 1.0))]
        # The ranking pass, labelled cached: document vectors from the cache, one query encoding per topic.
        assert [(t.topic_id, t.n_documents, t.wall_ms) for t in sweep.cached_costs[d].topics] == [
            ("1", n1, pytest.approx(1.0)), ("2", n2, pytest.approx(1.0))]
    points = {r.point.depth: r.point for r in sweep.rows}
    assert points[6].mean_ms == pytest.approx((7 + 4) / 2) and points[6].cached_ms == pytest.approx(1.0)
    assert points[6].ms_per_document == pytest.approx((7 + 4) / (6 + 3))
    assert (sweep.fit.slope_ms, sweep.fit.intercept_ms) == (pytest.approx(1.0), pytest.approx(1.0))
    assert sweep.fit.n_points == 6 and sweep.fit.scaling in {"sub-linear", "linear"}
    # prepare (outside every topic's block): the six uncached documents and the warm-up text
    assert sweep.prepare_ms == pytest.approx(7.0)
    # Recall comes from the ranking pass on every topic: the same when cost is measured on one topic.
    one = depth_sweep("bm25", (1, 3, 6), str(qrels), open_store=lambda: store, final_k=1, cost_topics=1,
                      reranker=BiEncoderReranker(encoder=enc, cache=store.vectors), clock=_TextsClock(enc))
    assert one.cost_topics == ("1",) and [t.topic_id for t in one.costs[6].topics] == ["1"]
    assert [t.topic_id for t in one.cached_costs[6].topics] == ["1", "2"]
    assert [(r.point.final_recall, r.point.candidate_recall) for r in one.rows] == [
        (r.point.final_recall, r.point.candidate_recall) for r in sweep.rows]
    with pytest.raises(ValidationError, match="--cost-topics"):
        depth_sweep("bm25", (1,), str(qrels), open_store=lambda: store, cost_topics=-1,
                    reranker=BiEncoderReranker(encoder=enc, cache=store.vectors))


class _PairCounter:
    """A cross-encoder stand-in that counts the (query, document) pairs it reads."""

    kind = "cross-encoder"
    label = model_name = "pairs"
    model_hash = "0000"
    device, batch_size, threads = "cpu", 8, 1

    def __init__(self) -> None:
        self.pairs = 0

    def prepare(self, documents, text_hashes=None):
        self.texts = dict(documents)

    def score(self, query, doc_ids):
        self.pairs += len(doc_ids)
        return np.array([float(len(set(query.split()) & set(self.texts[d].split()))) for d in doc_ids])

    def score_from_text(self, query, doc_ids):
        return self.score(query, doc_ids)


def test_a_depth_sweep_with_a_cross_encoder_times_every_pair_and_has_no_cached_cost(store, write):
    from workbench.reports.stages import render_sweep
    from workbench.services.runs.depth_sweep import depth_sweep

    _sweep_store(store)
    qrels = write("toy.qrels", "1 0 a 1\n1 0 d 2\n2 0 c 1\n")
    ce = _PairCounter()
    sweep = depth_sweep("bm25", (2, 6), str(qrels), open_store=lambda: store, final_k=1, reranker=ce,
                        clock=lambda: ce.pairs / 1000.0)
    assert [(t.topic_id, t.wall_ms) for t in sweep.costs[6].topics] == [("1", pytest.approx(6.0)),
                                                                       ("2", pytest.approx(3.0))]
    assert sweep.cached_costs == {} and all(r.point.cached_ms is None for r in sweep.rows)
    text = render_sweep(sweep)
    assert "the D (query, document) pairs read by the model, inside each topic's timed block) on all 2 topics" in text
    assert "cached ms" not in text
