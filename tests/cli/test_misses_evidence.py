"""`misses --categorise` feeds `chunk boundary` (a chunk run's chunks and their ranks) and `beyond depth`.

Chunk collection ``docs-c`` (one-token chunks of ``docs``; query "alpha beta")::

    a "alpha beta"        chunks a#0 "alpha" (0-5)  a#1 "beta" (6-10)
    b "alpha beta gamma"  chunk  b#0 (0-16)
    c "gamma"             chunk  c#0 (0-5)
    e "delta"             chunk  e#0 (0-5)
    f "alpha gamma"       chunks f#0 "alpha" (0-5)  f#1 "gamma" (6-11)

Chunk run ``chunky`` (kind dense: not re-scored; depth 3): t1 = b#0 c#0 a#1, i.e. documents b (1), c (2), a (3).
Document qrels ``docs-v1``: t1 a=1 b=1 e=1 f=1. At k = 1 (document level, each document at its best chunk):

* b is found (rank 1);
* a: chunks a#0 (not returned) and a#1 (rank 3), neither within k, and the query terms are split
  (a#0 holds alpha, a#1 beta): ``chunk boundary`` with the chunks' ranks;
* e: no query term: ``vocabulary mismatch``;
* f: shares alpha (in f#0 alone: not split), not returned, and the run returned its full depth (3 chunks):
  ``beyond depth``.

BM25 collection ``toy`` (10 documents; "flow" in d1..d4 of growing length, so BM25 ranks d1 > d2 > d3 > d4)::

    d1 "flow"  d2 "flow wing"  d3 "flow wing drag"  d4 "flow wing drag lift"  d5 "heat"  d6 "slab" ...

Run ``bm25`` (rank_bm25, okapi, k1 1.2, b 0.75; depth 2): t1 = d1 d2, t2 ("heat") = d5 (the only match).
Qrels ``toy-v1``: t1 d2=1 d3=1 d4=2 d9=1, t2 d5=1 d6=1. At k = 2: d3 and d4 share "flow" and lie beyond
the depth: re-scored to the whole collection they rank 3 and 4 (``beyond depth``, with the rank); d9
("beam") and d6 ("slab") share no term (``vocabulary mismatch``). Residue 0.
Run ``short`` (imported, depth 2): t1 = d1 only: d3 was not returned though the list is not full:
``uncategorised`` (the residue), saying so.
"""

from __future__ import annotations

import pytest

from workbench.scoring.units import ChunkMap, ChunkSpan
from workbench.services.evaluation.misses import categorised_misses
from workbench.store import Store
from workbench.store.units import ChunkSource
from workbench.types import Document, RunInfo, Topic

TEXTS = {"a": "alpha beta", "b": "alpha beta gamma", "c": "gamma", "e": "delta", "f": "alpha gamma"}
SPANS = [("a#0", "a", 0, 5), ("a#1", "a", 6, 10), ("b#0", "b", 0, 16), ("c#0", "c", 0, 5), ("e#0", "e", 0, 5),
         ("f#0", "f", 0, 5), ("f#1", "f", 6, 11)]
BY = "bm25 (rank_bm25, k1=1.2, b=0.75, okapi) over 10 documents"


def _causes(mr):
    return {(r.evidence.topic_id, r.evidence.doc_id): (r.cause, r.categorised.detail) for r in mr.misses.rows}


@pytest.fixture
def chunk_store(tmp_path):
    s = Store(tmp_path / "wb.duckdb", client="pytest")
    s.collections.ingest_collection("docs", [Document(d, "", t) for d, t in TEXTS.items()], [Topic("1", "alpha beta")])
    version = s.collections.latest_collection_version("docs")
    chunks = [Document(c, "", TEXTS[d][a:b]) for c, d, a, b in SPANS]
    s.collections.ingest_collection("docs-c", chunks, [Topic("1", "alpha beta")],
                        chunk_map=ChunkMap.of(ChunkSpan(*x) for x in SPANS),
                        chunk_source=ChunkSource("docs", version, "tokens", 1, 0))
    s.runs.save_run(RunInfo("chunky", "dense", {}, 3, "docs-c"), {"1": {"b#0": 3.0, "c#0": 2.0, "a#1": 1.0}})
    s.qrels.create_qrels_version("docs-v1", "docs", {"1": {"a": 1, "b": 1, "e": 1, "f": 1}}, origin="imported",
                           rule="test")
    return s


def test_a_chunk_run_misses_documents_with_their_chunks_and_ranks(chunk_store):
    mr = categorised_misses("chunky", "docs-v1", 1, open_store=lambda: chunk_store, missing="zero")
    assert _causes(mr) == {
        ("1", "a"): ("chunk boundary", "query terms split over 2 chunks, ranks a#0: -, a#1: 3"),
        ("1", "e"): ("vocabulary mismatch", "query: alpha beta; document: delta"),
        ("1", "f"): ("beyond depth", "not in the run's top 3 (the run returned its full depth); shares 1 of 2 "
                                     "query terms: alpha"),
    }
    a = next(r.evidence for r in mr.misses.rows if r.evidence.doc_id == "a")
    assert a.rank == 3  # the document's rank: its best chunk's, after b and c
    assert [(c.chunk_id, c.rank, sorted(c.terms)) for c in a.chunks] == [("a#0", None, ["alpha"]),
                                                                        ("a#1", 3, ["beta"])]
    assert mr.misses.counts.total == 3 and mr.misses.counts.closed
    assert mr.misses.extra["unit"].startswith("doc (chunk run")
    # kept and read back with the chunks
    again = categorised_misses("chunky", "docs-v1", 1, open_store=lambda: chunk_store, missing="zero")
    assert again.reused and _causes(again) == _causes(mr)


@pytest.fixture
def bm25_store(tmp_path):
    from workbench.services.runs.pooling import make_bm25_run

    docs = [Document("d1", "", "flow"), Document("d2", "", "flow wing"), Document("d3", "", "flow wing drag"),
            Document("d4", "", "flow wing drag lift"), Document("d5", "", "heat"), Document("d6", "", "slab"),
            Document("d7", "", "plate"), Document("d8", "", "shell"), Document("d9", "", "beam"),
            Document("d10", "", "strut")]
    s = Store(tmp_path / "wb.duckdb", client="pytest")
    s.collections.ingest_collection("toy", docs, [Topic("1", "flow"), Topic("2", "heat")])
    make_bm25_run(s, "toy", "bm25", backend="rank_bm25", depth=2)
    s.runs.save_run(RunInfo("short", "imported", {}, 2, "toy"), {"1": {"d1": 1.0}, "2": {"d5": 1.0}})
    s.qrels.create_qrels_version("toy-v1", "toy", {"1": {"d2": 1, "d3": 1, "d4": 2, "d9": 1}, "2": {"d5": 1, "d6": 1}},
                           origin="imported", rule="test")
    return s


def test_beyond_depth_with_the_rank_a_re_scored_bm25_run_gives(bm25_store):
    assert list(bm25_store.runs.get_run("bm25")["1"]) == ["d1", "d2"]
    mr = categorised_misses("bm25", "toy-v1", 2, open_store=lambda: bm25_store, missing="zero")
    assert _causes(mr) == {
        ("1", "d4"): ("beyond depth", f"rank 4 beyond depth 2 (re-scored by {BY}); shares 1 of 1 query terms: flow"),
        ("1", "d3"): ("beyond depth", f"rank 3 beyond depth 2 (re-scored by {BY}); shares 1 of 1 query terms: flow"),
        ("1", "d9"): ("vocabulary mismatch", "query: flow; document: beam"),
        ("2", "d6"): ("vocabulary mismatch", "query: heat; document: slab"),
    }
    c = mr.misses.counts
    assert (c.per_cause["beyond depth"], c.per_cause["vocabulary mismatch"], c.total, c.residue) == (2, 2, 4, 0)
    assert mr.misses.extra["rescored"] == {"by": BY, "topics": 1, "reproduced": 1, "not_reproduced": []}


def test_a_short_list_that_left_out_a_matching_document_is_the_residue(bm25_store):
    mr = categorised_misses("short", "toy-v1", 2, open_store=lambda: bm25_store, missing="zero")
    causes = _causes(mr)
    assert causes["1", "d3"] == ("uncategorised", "not returned within depth 2 (the run returned 1 of its depth 2 "
                                                  "for this topic); shares 1 of 1 query terms: flow")
    assert causes["1", "d2"][0] == "uncategorised" and causes["1", "d9"][0] == "vocabulary mismatch"
    assert mr.misses.counts.residue == 3 and mr.misses.extra["rescored"] is None
