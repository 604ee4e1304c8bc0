"""Pre- versus post-filtering on a tiny collection with known results (BM25 and exact dense)."""

from __future__ import annotations

import pytest

from pooling.retrievers.bm25 import Bm25Retriever
from pooling.retrievers.dense import DenseRetriever
from workbench.errors import ValidationError

# "flow" occurs once in each of d1..d4 (4 of 10 documents, so its idf is positive) and the documents
# grow longer, so BM25 ranks d1 > d2 > d3 > d4.
DOCS = {
    "d1": "flow",
    "d2": "flow wing",
    "d3": "flow wing drag",
    "d4": "flow wing drag lift",
    "d5": "heat",
    "d6": "slab", "d7": "plate", "d8": "shell", "d9": "beam", "d10": "strut",
}
QUERIES = {"q": "flow", "u": "heat"}
ELIGIBLE = {"q": frozenset({"d3", "d4", "d5"})}  # the two best documents for q are ineligible


@pytest.fixture(scope="module")
def bm25() -> Bm25Retriever:
    return Bm25Retriever().index(DOCS)


def test_unfiltered_order_is_known(bm25):
    assert list(bm25.retrieve(QUERIES, 2).run["q"]) == ["d1", "d2"]


def test_pre_filter_ranks_eligible_documents_only(bm25):
    res = bm25.retrieve(QUERIES, 2, eligible=ELIGIBLE, filter_mode="pre")
    assert list(res.run["q"]) == ["d3", "d4"]  # the eligible ones, in their unfiltered order
    assert res.run["q"] == {d: s for d, s in bm25.retrieve(QUERIES, 4).run["q"].items() if d in ("d3", "d4")}
    assert res.statuses == {"q": "ok", "u": "ok"} and res.retrieved == {"q": 2} and res.short_topics(2) == []
    assert list(res.run["u"]) == ["d5"]  # an unfiltered topic is searched as usual


def test_post_filter_drops_after_retrieval_and_comes_back_short(bm25):
    res = bm25.retrieve(QUERIES, 2, eligible=ELIGIBLE, filter_mode="post")
    assert res.run["q"] == {} and res.statuses["q"] == "empty"
    assert res.messages["q"] == "post-filter: none of the 2 retrieved documents is eligible"
    res3 = bm25.retrieve(QUERIES, 3, eligible=ELIGIBLE, filter_mode="post")
    assert list(res3.run["q"]) == ["d3"] and res3.retrieved == {"q": 3} and res3.short_topics(3) == ["q"]
    assert res3.messages["q"] == "post-filter kept 1 of 3 retrieved documents"
    pre3 = bm25.retrieve(QUERIES, 3, eligible=ELIGIBLE, filter_mode="pre")
    assert list(pre3.run["q"]) == ["d3", "d4"]  # BM25 matches no more eligible documents: short by nature
    assert pre3.messages["q"] == "pre-filter: 2 eligible document(s) matched (3 eligible)"


def test_no_eligible_document_is_an_empty_topic(bm25):
    res = bm25.retrieve(QUERIES, 2, eligible={"q": frozenset()}, filter_mode="pre")
    assert res.statuses["q"] == "empty" and res.messages["q"] == "no document is eligible under the topic's filter"


def test_dense_pre_and_post(stub_encoder):
    from workbench.ranking import ranked

    dense = DenseRetriever(encoder=stub_encoder).index(DOCS)
    full = dense.retrieve(QUERIES, len(DOCS)).run["q"]
    order = [r.doc_id for r in ranked(full)]  # the whole collection, canonical order
    eligible_order = [d for d in order if d in ELIGIBLE["q"]]
    pre = dense.retrieve(QUERIES, 2, eligible=ELIGIBLE, filter_mode="pre")
    assert list(pre.run["q"]) == eligible_order[:2]  # the best eligible documents, wherever they rank
    assert pre.run["q"] == {d: full[d] for d in eligible_order[:2]}  # with their unfiltered scores
    assert order[:4] == ["d1", "d2", "d3", "d4"]  # the stub encoder: cosine of hashed bags of words
    post = dense.retrieve(QUERIES, 2, eligible=ELIGIBLE, filter_mode="post")
    assert post.run["q"] == {} and post.statuses["q"] == "empty"  # d1, d2 retrieved, both ineligible
    assert post.retrieved == {"q": 2} and post.filter_mode == "post" and post.short_topics(2) == ["q"]
    post3 = dense.retrieve(QUERIES, 3, eligible=ELIGIBLE, filter_mode="post")
    assert list(post3.run["q"]) == ["d3"] and post3.short_topics(3) == ["q"]


def test_bad_mode_and_a_retriever_that_cannot_pre_filter(bm25):
    with pytest.raises(ValidationError, match="expected a filter mode in pre, post"):
        bm25.retrieve(QUERIES, 2, eligible=ELIGIBLE, filter_mode="mid")  # type: ignore[arg-type]

    class NoPre(Bm25Retriever):
        supports_pre_filter = False

    with pytest.raises(ValidationError, match="cannot pre-filter; use filter mode 'post'"):
        NoPre().index(DOCS).retrieve(QUERIES, 2, eligible=ELIGIBLE, filter_mode="pre")


def test_dense_pre_filter_is_the_vector_index_own_filtered_search(stub_encoder):
    """The retriever's ``vector_index`` (exact, hnsw or ivf: ``pooling.retrievers.ann``) filters inside the index."""
    import numpy as np

    class FakeIndex:
        kind = "hnsw"

        def __init__(self):
            self.calls = []

        def search(self, q, k, *, eligible=None):
            self.calls.append((q.shape, k, [np.flatnonzero(m).tolist() for m in eligible]))

            class Result:
                hits = [{"d4": 0.5}] * q.shape[0]
                latencies_ms = [0.1] * q.shape[0]

            return Result()

    dense = DenseRetriever(encoder=stub_encoder).index(DOCS)
    dense.vector_index = FakeIndex()  # type: ignore[assignment]
    res = dense.retrieve({"q": "flow"}, 2, eligible=ELIGIBLE, filter_mode="pre")
    assert res.run["q"] == {"d4": 0.5}
    rows = sorted(i for i, d in enumerate(dense.indexed_doc_ids()) if d in ELIGIBLE["q"])
    assert dense.vector_index.calls == [((1, 64), 2, [rows])]  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_approximate_dense_pre_and_post_filtering(stub_encoder, kind):
    """faiss indexes over 10 documents: HNSW and IVF with nprobe = nlist search every vector, so the
    filtered lists equal the exact ones (pre: the best eligible; post: a subset of the top k)."""
    pytest.importorskip("faiss")
    params = {"efSearch": 64} if kind == "hnsw" else {"nlist": 2, "nprobe": 2}
    exact = DenseRetriever(encoder=stub_encoder).index(DOCS)
    approx = DenseRetriever(encoder=stub_encoder, index=kind, index_params=params, index_threads=1).index(DOCS)
    for mode in ("pre", "post"):
        a = approx.retrieve(QUERIES, 3, eligible=ELIGIBLE, filter_mode=mode)
        e = exact.retrieve(QUERIES, 3, eligible=ELIGIBLE, filter_mode=mode)
        assert list(a.run["q"]) == list(e.run["q"]) and set(a.run["q"]) <= ELIGIBLE["q"], mode
        assert a.run["q"] == pytest.approx(e.run["q"], abs=1e-5)
    assert list(approx.retrieve(QUERIES, 3, eligible=ELIGIBLE, filter_mode="pre").run["q"]) == ["d3", "d4", "d5"]
    assert list(approx.retrieve(QUERIES, 3, eligible=ELIGIBLE, filter_mode="post").run["q"]) == ["d3"]
