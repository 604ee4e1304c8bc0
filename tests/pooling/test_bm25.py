"""BM25: formulas by hand, backend parity on the Cranfield sample, where the defaults differ."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pooling.retrievers.bm25 import BM25_VARIANTS, Bm25Retriever
from pooling.tokenize import Tokenizer
from workbench.errors import UnknownNameError, ValidationError
from workbench.formats import beir
from workbench.ranking import ranked

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus" / "cranfield"

# Four documents; "flow" is in 3 of 4 (n > N/2: negative Robertson idf), "wedge" in 1.
DOCS = {
    "a": "flow flow wedge",
    "b": "flow over plates",
    "c": "flow in pipes and channels",
    "d": "heat",
}


def okapi(tf: int, dl: int, avgdl: float, n: int, N: int, k1: float = 1.2, b: float = 0.75) -> float:
    idf = max(0.0, math.log((N - n + 0.5) / (n + 0.5)))
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


@pytest.mark.parametrize("backend", ["bm25s", "rank_bm25"])
def test_okapi_scores_are_the_formula(backend):
    # token lengths after stop words ("over", "in", "and" are not Lucene stop words except "in", "and")
    lengths = {d: len(Tokenizer()(t)) for d, t in DOCS.items()}
    assert lengths == {"a": 3, "b": 3, "c": 3, "d": 1}
    avgdl = (3 + 3 + 3 + 1) / 4
    run = Bm25Retriever(backend=backend).index(DOCS).retrieve({"q": "wedge flow"}, k=10).run["q"]
    # "flow": n=3 of N=4 -> log(1.5/3.5) < 0 -> idf 0; only "wedge" (n=1) scores, but b and c
    # share "flow" with the query: retrieved with score 0, below a, ties by doc_id desc.
    assert run == pytest.approx({"a": okapi(1, 3, avgdl, 1, 4), "c": 0.0, "b": 0.0})
    assert [r.doc_id for r in ranked(run)] == ["a", "c", "b"]


@pytest.mark.parametrize("backend", ["bm25s", "rank_bm25"])
def test_okapi_never_drops_a_document_that_shares_a_term_because_of_the_idf_floor(backend):
    # Regression (issue 9): every query term is in half of the documents, so its floored idf is 0
    # and every score is 0; the topic was marked empty ("no document matched the query") although
    # "l1" holds all three terms.
    docs = {"l1": "laminar boundary layer", "l2": "laminar boundary layer flow", "h1": "heat transfer",
            "h2": "supersonic wedge"}
    result = Bm25Retriever(backend=backend).index(docs).retrieve(
        {"q": "laminar boundary layer", "none": "hypersonic"}, k=10)
    assert result.statuses == {"q": "ok", "none": "empty"}
    assert result.run["q"] == {"l2": 0.0, "l1": 0.0}  # score 0 each: doc_id desc
    assert "none contains one of its terms" in result.messages["none"]


@pytest.mark.parametrize("backend", ["bm25s", "rank_bm25"])
def test_okapi_retrieves_exactly_the_cranfield_documents_sharing_a_query_term(backend):
    # Depth 1,400 (the whole collection): every topic's run is exactly the documents that share an
    # analysed term with its query. (Topic 192, "papers dealing with uniformly loaded sectors", has
    # 71 such documents: its 71 results at depth 100 are all there is, not an idf-floor loss.)
    docs, queries = _cranfield()
    tok = Tokenizer()
    terms = {d: set(tok(text)) for d, text in docs.items()}
    result = Bm25Retriever(backend=backend).index(docs).retrieve(queries, k=len(docs))
    for topic_id, query in queries.items():
        sharing = {d for d, ts in terms.items() if ts & set(tok(query))}
        assert set(result.run[topic_id]) == sharing, topic_id
    assert len(result.run["192"]) == 71


def test_okapi_epsilon_floors_negative_idf_at_a_quarter_of_the_mean_idf():
    tokens = Tokenizer().many(DOCS.values())
    vocab = {t for doc in tokens for t in doc}
    N = 4
    n = {t: sum(t in doc for doc in tokens) for t in vocab}
    idf = {t: math.log((N - n[t] + 0.5) / (n[t] + 0.5)) for t in vocab}
    eps = 0.25 * sum(idf.values()) / len(idf)
    run = Bm25Retriever(backend="rank_bm25", variant="okapi-epsilon").index(DOCS).retrieve(
        {"q": "flow"}, k=10).run["q"]
    avgdl = 2.5
    tf_part = {d: DOCS[d].split().count("flow") for d in "abc"}
    expected = {d: eps * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * 3 / avgdl)) for d, tf in tf_part.items()}
    assert run == pytest.approx(expected)


def test_lucene_variant_is_the_formula():
    run = Bm25Retriever(backend="bm25s", variant="lucene").index(DOCS).retrieve({"q": "flow"}, k=10).run["q"]
    idf = math.log(1 + (4 - 3 + 0.5) / (3 + 0.5))
    K = 1.2 * (0.25 + 0.75 * 3 / 2.5)
    assert run == pytest.approx({"a": idf * 2 / (2 + K), "b": idf * 1 / (1 + K), "c": idf * 1 / (1 + K)})


def _cranfield():
    docs = {d.doc_id: d.content for d in beir.read_corpus(SAMPLE / "corpus.jsonl")}
    queries = {t.topic_id: t.query for t in beir.read_queries(SAMPLE / "queries.jsonl")}
    return docs, queries


def _rounded_ranking(scores: dict[str, float]) -> list[str]:
    # 10 significant digits: float summation order may differ in the last bits; ties stay ties.
    return [r.doc_id for r in ranked({d: float(f"{s:.10g}") for d, s in scores.items()})]


@pytest.mark.parametrize("stemmer", [None, "english"])
def test_backends_agree_on_every_cranfield_topic_with_the_okapi_variant(stemmer):
    docs, queries = _cranfield()
    assert len(docs) == 1400 and len(queries) == 225
    a = Bm25Retriever(backend="bm25s", stemmer=stemmer).index(docs).retrieve(queries, k=100)
    b = Bm25Retriever(backend="rank_bm25", stemmer=stemmer).index(docs).retrieve(queries, k=100)
    assert a.statuses == b.statuses == {t: "ok" for t in queries}
    for topic_id in queries:
        sa, sb = a.run[topic_id], b.run[topic_id]
        assert set(sa) == set(sb), topic_id
        assert sa == pytest.approx(sb, rel=1e-9), topic_id
        assert _rounded_ranking(sa) == _rounded_ranking(sb), topic_id


def test_library_defaults_rank_differently_and_that_is_why_okapi_is_pinned():
    """rank_bm25's default (epsilon=0.25 floor) vs bm25s' default (lucene idf, no k1+1)."""
    import bm25s
    from rank_bm25 import BM25Okapi

    docs, queries = _cranfield()
    tok = Tokenizer()
    ids = list(docs)
    corpus = tok.many(docs.values())
    ref = BM25Okapi(corpus)  # k1=1.5, b=0.75, epsilon=0.25
    fast = bm25s.BM25()  # k1=1.5, b=0.75, method="lucene"
    fast.index(corpus, show_progress=False)
    differ = 0
    for q in queries.values():
        qt = tok(q)
        top_ref = [ids[i] for i in ref.get_scores(qt).argsort()[::-1][:10]]
        top_fast = [ids[i] for i in fast.get_scores(qt).argsort()[::-1][:10]]
        differ += top_ref != top_fast
    assert differ > 0  # the defaults are different formulas; only `okapi` makes them agree


def test_variants_backends_and_parameters_are_checked():
    with pytest.raises(ValidationError, match="not available in backend 'bm25s'"):
        Bm25Retriever(backend="bm25s", variant="okapi-epsilon")
    with pytest.raises(ValidationError, match="rank_bm25 supports okapi, okapi-epsilon"):
        Bm25Retriever(backend="rank_bm25", variant="lucene")
    with pytest.raises(UnknownNameError) as e:
        Bm25Retriever(variant="bm42")
    assert e.value.known == sorted(BM25_VARIANTS)
    with pytest.raises(UnknownNameError):
        Bm25Retriever(backend="pyserini")  # type: ignore[arg-type]
    with pytest.raises(UnknownNameError):
        Bm25Retriever(stemmer="klingon")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"expected b in \[0, 1\]"):
        Bm25Retriever(b=1.5)
    with pytest.raises(ValidationError, match="expected k1 between 0 and 1000"):
        Bm25Retriever(k1=-1)


def test_params_record_backend_formula_and_tokenizer():
    p = Bm25Retriever(backend="rank_bm25", k1=0.9, b=0.4, stemmer="english").params
    assert p["backend"] == "rank_bm25" and p["k1"] == 0.9 and p["b"] == 0.4
    assert p["variant"] == "okapi" and "max(0" in p["formula"]
    assert p["stemmer"] == "english" and p["stopwords"] == "english"
