"""Retriever and fusion parameters outside the range the code supports are refused before any work
(breaker's trial: ``--k1 1e308`` made every BM25 score infinite and stored a run of errors; an efSearch
beyond faiss's C int overflowed on every topic)."""

from __future__ import annotations

import math

import pytest

from pooling.fusion import RRF_K_MAX, rrf
from pooling.retrievers.ann import PARAM_MAX, resolve_params
from pooling.retrievers.bm25 import K1_MAX, Bm25Retriever
from workbench.errors import ValidationError


@pytest.mark.parametrize("k1", [math.inf, -math.inf, math.nan, 1e308, K1_MAX * 1.01, -0.1])
def test_bm25_refuses_a_k1_it_cannot_score_with(k1):
    with pytest.raises(ValidationError, match=r"expected k1 between 0 and 1000 \(a finite number\)"):
        Bm25Retriever(k1=k1)


@pytest.mark.parametrize("b", [math.nan, math.inf, -0.01, 1.01])
def test_bm25_refuses_b_outside_0_1(b):
    with pytest.raises(ValidationError, match=r"expected b in \[0, 1\]"):
        Bm25Retriever(b=b)


def test_bm25_at_the_largest_k1_scores_finitely_and_as_the_tf_idf_limit():
    # k1 = K1_MAX: tf*(k1+1)/(tf+K) with b = 0 is tf*(1001)/(tf+1000); for d1 (tf 2 of 'flow'):
    # idf = log((3 - 1 + 0.5)/(1 + 0.5)) and the score is idf * 2 * 1001 / 1002.
    docs = {"d1": "flow flow heat", "d2": "heat transfer", "d3": "heat flux"}
    for backend in ("bm25s", "rank_bm25"):
        run = Bm25Retriever(backend=backend, k1=K1_MAX, b=0.0).index(docs).retrieve({"q": "flow"}, k=10).run
        assert run["q"]["d1"] == pytest.approx(math.log(2.5 / 1.5) * 2 * 1001 / 1002, rel=1e-6)


@pytest.mark.parametrize("k", [math.inf, math.nan, 1e308, RRF_K_MAX * 2, -1.0])
def test_rrf_refuses_a_rank_constant_that_cannot_tell_ranks_apart(k):
    with pytest.raises(ValidationError, match=r"expected rrf k between 0 and 1000000"):
        rrf([{"t": {"a": 1.0, "b": 0.5}}], k=k)


def test_rrf_at_the_largest_k_still_orders_ranks():
    fused = rrf([{"t": {"a": 2.0, "b": 1.0}}], k=RRF_K_MAX)["t"]
    assert fused["a"] == 1 / (RRF_K_MAX + 1) and fused["b"] == 1 / (RRF_K_MAX + 2) and fused["a"] > fused["b"]


@pytest.mark.parametrize("name", ["efSearch", "M", "efConstruction"])
def test_an_index_parameter_beyond_faiss_int_is_refused(name):
    with pytest.raises(ValidationError, match=rf"expected {name} to be an integer in \[1, 2147483647\]"):
        resolve_params("hnsw", {name: PARAM_MAX + 1}, 100)
    assert resolve_params("hnsw", {name: PARAM_MAX}, 100)[name] == PARAM_MAX
