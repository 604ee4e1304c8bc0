"""Every retriever passes the shared contract; base-class behaviour (per-topic errors, top_k)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from encoder_stub import StubEncoder
from retriever_contract import DOCS, RetrieverContract

from pooling.retrievers import RETRIEVER_KINDS, Bm25Retriever, DenseRetriever
from pooling.retrievers.base import EmptyQuery, Retriever, top_k


class TestBm25sContract(RetrieverContract):
    def make(self) -> Retriever:
        return Bm25Retriever(backend="bm25s")


class TestRankBm25Contract(RetrieverContract):
    def make(self) -> Retriever:
        return Bm25Retriever(backend="rank_bm25")


class TestBm25StemmedLuceneContract(RetrieverContract):
    def make(self) -> Retriever:
        return Bm25Retriever(backend="bm25s", variant="lucene", stemmer="english")


class TestDenseContract(RetrieverContract):
    def make(self) -> Retriever:
        return DenseRetriever(encoder=StubEncoder())


def test_registry_names_every_retriever_kind():
    assert RETRIEVER_KINDS == {"bm25": Bm25Retriever, "dense": DenseRetriever}


def test_stop_word_only_query_is_empty_for_bm25():
    result = Bm25Retriever().index(DOCS).retrieve({"s": "the of and", "x": "zeppelin"}, k=5)
    assert result.statuses == {"s": "empty", "x": "empty"}
    assert "tokenization" in result.messages["s"]
    assert "no document matched" in result.messages["x"]


class _Flaky(Retriever):
    """Fails on queries containing 'boom'; a stand-in for a retriever error on one topic."""

    kind = "flaky"

    def __init__(self) -> None:
        self.docs: list[str] = []

    @property
    def params(self) -> dict[str, object]:
        return {}

    @property
    def n_documents(self) -> int:
        return len(self.docs)

    def index(self, documents):
        self.docs = list(documents)
        return self

    def _search(self, queries: Sequence[str], k: int) -> list[dict[str, float] | EmptyQuery]:
        if any("boom" in q for q in queries):
            raise RuntimeError("backend exploded")
        return [{self.docs[0]: 1.0} if q != "nothing" else {} for q in queries]


def test_a_failing_topic_is_marked_error_and_the_others_still_run():
    result = _Flaky().index(DOCS).retrieve({"a": "fine", "b": "boom", "c": "nothing"}, k=3)
    assert result.statuses == {"a": "ok", "b": "error", "c": "empty"}
    assert result.messages["b"] == "RuntimeError: backend exploded"
    assert result.run["a"] == {"d1": 1.0} and result.run["b"] == {} and result.run["c"] == {}


def test_top_k_keeps_all_ties_as_candidates_then_applies_the_canonical_rule():
    ids = ["a", "b", "c", "d", "e"]
    scores = np.array([1.0, 3.0, 2.0, 2.0, 2.0])
    # b(3) first; c, d, e tie at 2: doc_id descending gives e, d
    assert top_k(scores, ids, 3) == {"b": 3.0, "e": 2.0, "d": 2.0}
    assert top_k(scores, ids, 10) == dict(zip(ids, scores.tolist(), strict=True))
    assert top_k(np.array([0.0, 0.5, 0.0]), ["x", "y", "z"], 3, min_score=0.0) == {"y": 0.5}
