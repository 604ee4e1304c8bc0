"""Miss causes (workbench.scoring.misses): each rule on a constructed case, precedence, counts, overrides."""

from __future__ import annotations

import pytest

from workbench.errors import UnknownNameError, ValidationError
from workbench.scoring.misses import (
    CAUSES,
    ChunkHit,
    LeadCause,
    MissEvidence,
    categorise,
    categorise_all,
    check_cause,
    count,
    resolve,
)

K = 20


def ev(**kw: object) -> MissEvidence:
    base: dict[str, object] = dict(topic_id="1", doc_id="d1", grade=2, rank=None, depth=100, indexed=True,
                                   query_terms=("shock", "wave"), doc_terms=("shock", "flow"))
    base.update(kw)
    return MissEvidence(**base)  # type: ignore[arg-type]


def test_not_indexed_absent_from_the_collection_version():
    c = categorise(ev(indexed=False, collection_version="abcdef0123456789"), K)
    assert (c.cause, c.detail) == ("not indexed", "not in the run's collection version abcdef012345")


def test_not_indexed_empty_text():
    c = categorise(ev(empty_text=True, doc_terms=()), K)
    assert (c.cause, c.detail) == ("not indexed", "the document's text is empty")


def test_filtered_out():
    c = categorise(ev(eligible=False, filter_text="year <= 1956", rank=None), K)
    assert (c.cause, c.detail) == ("filtered out", "ineligible under the topic's filter year <= 1956")
    assert categorise(ev(eligible=True, rank=30), K).cause == "found deeper"


def test_found_deeper_keeps_the_rank():
    c = categorise(ev(rank=21), K)
    assert (c.cause, c.detail) == ("found deeper", "rank 21 (depth 100)")


def test_vocabulary_mismatch_gives_both_sides_terms():
    c = categorise(ev(query_terms=("similarity", "laws"), doc_terms=("heat", "transfer", "plate")), K)
    assert c.cause == "vocabulary mismatch"
    assert c.detail == "query: similarity laws; document: heat transfer plate"
    assert c.evidence.shared_terms == ()


def test_vocabulary_mismatch_cuts_long_document_term_lists():
    terms = tuple(f"t{i:02d}" for i in range(15))
    c = categorise(ev(query_terms=("x",), doc_terms=terms), K)
    assert c.detail == "query: x; document: " + " ".join(terms[:12]) + " ... (15 terms)"


def test_a_query_without_analysed_terms_is_a_vocabulary_mismatch():
    c = categorise(ev(query_terms=()), K)
    assert (c.cause, c.detail) == ("vocabulary mismatch", "query: (no analysed term); document: shock flow")


def test_shared_terms_beyond_the_depth_are_the_residue():
    c = categorise(ev(query_terms=("shock", "wave", "flow")), K)
    assert c.cause == "uncategorised"
    assert c.detail == "not returned within depth 100; shares 2 of 3 query terms: shock flow"


def test_chunk_boundary_when_the_query_terms_are_split_over_chunks_none_within_k():
    chunks = (ChunkHit("d1#0", 25, frozenset({"shock"})), ChunkHit("d1#1", None, frozenset({"wave"})))
    c = categorise(ev(rank=25, doc_terms=("shock", "wave"), chunks=chunks), K)
    assert (c.cause, c.detail) == ("chunk boundary", "query terms split over 2 chunks, ranks d1#0: 25, d1#1: -")


def test_no_chunk_boundary_when_one_chunk_holds_every_term_or_a_chunk_is_within_k():
    whole = (ChunkHit("d1#0", 25, frozenset({"shock", "wave"})), ChunkHit("d1#1", 40, frozenset({"wave"})))
    assert categorise(ev(rank=25, doc_terms=("shock", "wave"), chunks=whole), K).cause == "found deeper"
    one = (ChunkHit("d1#0", 25, frozenset({"shock"})),)
    assert categorise(ev(rank=25, chunks=one), K).cause == "found deeper"
    # a chunk within k: the document would be found at doc level; here rank says otherwise, so not a chunk cause
    near = (ChunkHit("d1#0", 5, frozenset({"shock"})), ChunkHit("d1#1", 30, frozenset({"wave"})))
    assert categorise(ev(rank=30, doc_terms=("shock", "wave"), chunks=near), K).cause == "found deeper"


def test_precedence_not_indexed_then_filtered_then_chunks_then_deeper():
    split = (ChunkHit("a", 30, frozenset({"shock"})), ChunkHit("b", 31, frozenset({"wave"})))
    everything = dict(indexed=False, eligible=False, chunks=split, rank=30, query_terms=("q",), doc_terms=("d",))
    assert categorise(ev(**everything), K).cause == "not indexed"
    assert categorise(ev(**{**everything, "indexed": True}), K).cause == "filtered out"
    assert categorise(ev(**{**everything, "indexed": True, "eligible": None}), K).cause == "chunk boundary"
    assert categorise(ev(**{**everything, "indexed": True, "eligible": None, "chunks": None}),
                      K).cause == "found deeper"


def test_a_document_within_k_is_not_a_miss():
    with pytest.raises(ValidationError, match="ranks 20, within k = 20"):
        categorise(ev(rank=20), K)
    with pytest.raises(ValidationError, match="k >= 1"):
        categorise(ev(), 0)


def test_counts_add_up_and_residue_decides_closure():
    cats = categorise_all([ev(doc_id="a", rank=30), ev(doc_id="b", indexed=False),
                           ev(doc_id="c", query_terms=("shock", "flow"))], K)
    counts = count(resolve(cats, {}))
    assert list(counts.per_cause) == list(CAUSES)
    assert counts.per_cause["found deeper"] == 1 and counts.per_cause["not indexed"] == 1
    assert counts.total == 3 == sum(counts.per_cause.values())
    assert counts.residue == 1 and not counts.closed
    assert count([]).closed and count([]).total == 0


def test_lead_decisions_override_and_close_the_list_suggestions_do_not():
    cats = categorise_all([ev(doc_id="a", query_terms=("shock",)), ev(doc_id="b", query_terms=("shock",))], K)
    assert count(resolve(cats, {})).residue == 2
    mine = LeadCause("1", "a", "vocabulary mismatch", "synonym: 'blast' for 'shock'", "lead", "bm25", "v1", 1)
    other = LeadCause("1", "b", "found deeper", "rank 140 in a deeper run", "lead", "dense", "v1", 2)
    rows = resolve(cats, {("1", "a"): mine}, {("1", "b"): other, ("1", "a"): other})
    assert (rows[0].cause, rows[0].source, rows[0].decision, rows[0].suggestion) == (
        "vocabulary mismatch", "lead", mine, None)
    assert (rows[1].cause, rows[1].source, rows[1].suggestion) == ("uncategorised", "rule", other)
    counts = count(rows)
    assert (counts.residue, counts.by_lead, counts.suggested, counts.total) == (1, 1, 1, 2)


def test_check_cause_lists_the_causes():
    assert check_cause("found deeper") == "found deeper"
    with pytest.raises(UnknownNameError, match="chunk boundary"):
        check_cause("deeper")


def test_with_ineligible_adds_the_filtered_gold_not_within_k_and_counts_the_leaks():
    from workbench.scoring.evaluate import RelevantDoc
    from workbench.scoring.misses import with_ineligible

    misses = [RelevantDoc("2", "a", 1, None), RelevantDoc("10", "b", 2, 30)]
    gold = {"2": (("c", 1), ("d", 3)), "10": (("e", 1),), "3": (("f", 1),)}
    ranks = {"2": {"c": 5, "d": 40}, "10": {"e": 1}}
    merged, within = with_ineligible(misses, gold, ranks, 20)
    # t2: the scorer's miss, then d (grade 3, rank 40) before c (grade 1, rank 5 is within k: a leak);
    # t3 (no eligible relevant document) between t2 and t10 in natural order; t10's e ranks 1: a leak
    assert merged == [RelevantDoc("2", "a", 1, None), RelevantDoc("2", "d", 3, 40), RelevantDoc("3", "f", 1, None),
                      RelevantDoc("10", "b", 2, 30)]
    assert within == 2
