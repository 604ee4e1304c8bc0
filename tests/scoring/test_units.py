"""Retrieval units: chunking offsets, chunk -> document mapping before the cutoff, span overlap rules, unit names."""

from __future__ import annotations

import pytest

from workbench.errors import ValidationError
from workbench.scoring.evaluate import evaluate
from workbench.scoring.measures import parse_measure
from workbench.scoring.units import (
    ChunkMap,
    ChunkSpan,
    OverlapRule,
    Span,
    chunk_document,
    missing_documents,
    parse_unit_name,
    qrels_to_chunks,
    qrels_to_documents,
    ranked_lists,
    ranked_run_of,
    spans_to_chunk_qrels,
    spans_to_doc_qrels,
    to_documents,
    unit_name,
)

TEXT = "one two  three four\nfive six seven"  # tokens at 0-3, 4-7, 9-14, 15-19, 20-24, 25-28, 29-34


def test_token_chunks_end_on_token_boundaries_and_overlap_by_the_given_tokens():
    chunks = chunk_document("d", TEXT, size=3, overlap=1)
    assert [(c.chunk_id, c.start, c.end) for c in chunks] == [("d#0", 0, 14), ("d#1", 9, 24), ("d#2", 20, 34)]
    assert [TEXT[c.start:c.end] for c in chunks] == ["one two  three", "three four\nfive", "five six seven"]


def test_token_chunks_without_overlap_and_a_short_last_chunk():
    chunks = chunk_document("d", TEXT, size=3)
    assert [TEXT[c.start:c.end] for c in chunks] == ["one two  three", "four\nfive six", "seven"]


def test_character_chunks_cut_anywhere_with_stride_size_minus_overlap():
    chunks = chunk_document("d", "abcdefghij", size=4, overlap=2, unit="chars")
    assert [(c.start, c.end) for c in chunks] == [(0, 4), (2, 6), (4, 8), (6, 10)]
    assert [(c.start, c.end) for c in chunk_document("d", "abcde", size=10, unit="chars")] == [(0, 5)]


def test_an_empty_text_gives_one_chunk_so_the_document_stays_reachable():
    assert [(c.chunk_id, c.start, c.end) for c in chunk_document("e", "   ", size=64)] == [("e#0", 0, 3)]


@pytest.mark.parametrize("size,overlap,unit", [(0, 0, "tokens"), (4, 4, "tokens"), (4, -1, "chars"), (4, 0, "words")])
def test_bad_chunkings_are_refused_with_the_value(size, overlap, unit):
    with pytest.raises(ValidationError, match="expected"):
        chunk_document("d", TEXT, size=size, overlap=overlap, unit=unit)


def test_chunk_map_rules():
    with pytest.raises(ValidationError, match="twice"):
        ChunkMap.of([ChunkSpan("c", "d", 0, 1), ChunkSpan("c", "d", 1, 2)])
    with pytest.raises(ValidationError, match="start <= end"):
        ChunkMap.of([ChunkSpan("c", "d", 5, 2)])
    m = ChunkMap.of([ChunkSpan("d#1", "d", 10, 20), ChunkSpan("d#0", "d", 0, 12), ChunkSpan("x#0", "x", 0, 3)])
    assert [c.chunk_id for c in m.chunks_of("d")] == ["d#0", "d#1"] and m.doc_of("x#0") == "x"
    assert m.chunks_of("nope") == () and m.doc_ids == ("d", "x")


def _map() -> ChunkMap:
    """Document A has chunks a0 (rank 3) and a1 (rank 12); B..K have one chunk each."""
    spans = [ChunkSpan("a0", "A", 0, 100), ChunkSpan("a1", "A", 100, 200)]
    spans += [ChunkSpan(f"{x.lower()}0", x, 0, 100) for x in "BCDEFGHIJK"]
    return ChunkMap.of(spans)


# rank:        1     2     3     4     5     6     7     8     9     10    11    12
CHUNK_RUN = ["b0", "c0", "a0", "d0", "e0", "f0", "g0", "h0", "i0", "j0", "k0", "a1"]


def test_a_document_whose_chunks_rank_3_and_12_is_found_at_doc_level_at_5_and_counted_once():
    ranking = to_documents({"1": CHUNK_RUN}, _map())
    assert ranking.lists["1"][:5] == ["B", "C", "A", "D", "E"]
    assert ranking.lists["1"].count("A") == 1 and len(ranking.lists["1"]) == 11
    assert ranking.best_chunk["1"]["A"] == ("a0", 3) and ranking.chunk_ranks["1"]["A"] == (3, 12)
    assert ranking.n_collapsed == {"1": 1}
    qrels = {"1": {"A": 1, "K": 1}}
    doc_run = ranked_run_of(ranking.lists)
    e = evaluate(qrels, doc_run, ["R@5", "R@11", "P@5"])  # type: ignore[arg-type]
    r5, r11, p5 = (e.per_topic[parse_measure(m)]["1"] for m in ("R@5", "R@11", "P@5"))
    assert (r5.numerator, r5.denominator) == (1, 2)          # A at rank 3, once
    assert (r11.numerator, r11.denominator) == (2, 2)        # K is the 11th document (the 11th chunk)
    assert (p5.numerator, p5.denominator) == (1, 5)          # A counted once within the top 5


def test_dedupe_happens_before_the_cutoff_not_after():
    # Cutting the chunk run at 5 and then mapping would leave 5 chunks = 5 documents;
    # mapping first makes the 12th chunk's document (A, already at 3) not take a rank.
    ranking = to_documents({"1": ["a0", "a1", "b0", "c0"]}, _map())
    assert ranking.lists["1"] == ["A", "B", "C"]
    e = evaluate({"1": {"C": 1}}, ranked_run_of(ranking.lists), ["R@3"])  # type: ignore[arg-type]
    assert e.aggregates[parse_measure("R@3")].macro == 1.0   # C is the 3rd document although the 4th chunk


def test_ranked_run_of_keeps_the_exact_order_and_round_trips_through_ranked_lists():
    lists = {"2": ["z", "a", "m"], "10": ["b"]}
    assert ranked_lists(ranked_run_of(lists)) == lists


def test_unknown_chunk_ids_are_refused_with_a_count_and_the_option():
    with pytest.raises(ValidationError, match=r"1 run id\(s\).*'zz'.*--unit doc"):
        to_documents({"1": ["a0", "zz"]}, _map())
    assert to_documents({"1": ["a0", "zz"]}, _map(), strict=False).unknown == ("zz",)


def test_chunk_qrels_to_documents_take_the_highest_grade_and_documents_to_chunks_inherit():
    m = _map()
    assert qrels_to_documents({"1": {"a0": 0, "a1": 2, "b0": 1}}, m) == {"1": {"A": 2, "B": 1}}
    assert qrels_to_chunks({"1": {"A": 2, "Z": 1}}, m) == {"1": {"a0": 2, "a1": 2}}
    assert missing_documents({"1": {"A": 2, "Z": 1}}, m) == [("1", "Z")]
    with pytest.raises(ValidationError, match="already at document level"):
        qrels_to_documents({"1": {"A": 1}}, m)


SPAN_MAP = ChunkMap.of([ChunkSpan("d#0", "d", 0, 100), ChunkSpan("d#1", "d", 80, 180), ChunkSpan("d#2", "d", 160, 260)])


def test_any_overlap_is_the_default_rule():
    spans = [Span("1", "d", 95, 105, 2)]  # 5 characters in d#0, 10 in d#1, none in d#2
    assert spans_to_chunk_qrels(spans, SPAN_MAP) == {"1": {"d#0": 2, "d#1": 2, "d#2": 0}}
    assert spans_to_doc_qrels(spans) == {"1": {"d": 2}}


def test_touching_is_not_overlapping():
    assert spans_to_chunk_qrels([Span("1", "d", 100, 160)], SPAN_MAP) == {"1": {"d#0": 0, "d#1": 1, "d#2": 0}}


def test_minimum_share_is_of_the_shorter_of_span_and_chunk():
    spans = [Span("1", "d", 95, 105, 1)]  # span of 10: d#0 holds 5 (share 0.5), d#1 holds 10 (share 1.0)
    assert spans_to_chunk_qrels(spans, SPAN_MAP, OverlapRule(0.6)) == {"1": {"d#0": 0, "d#1": 1, "d#2": 0}}
    assert spans_to_chunk_qrels(spans, SPAN_MAP, OverlapRule(0.5)) == {"1": {"d#0": 1, "d#1": 1, "d#2": 0}}
    # a long span (0-260) holds every chunk whole: share 1 for each (the chunk is the shorter)
    assert spans_to_chunk_qrels([Span("1", "d", 0, 260)], SPAN_MAP, OverlapRule(1.0)) == {
        "1": {"d#0": 1, "d#1": 1, "d#2": 1}}
    with pytest.raises(ValidationError, match="between 0 and 1"):
        OverlapRule(1.5)


def test_a_chunk_covering_two_spans_takes_the_higher_grade():
    spans = [Span("1", "d", 10, 20, 1), Span("1", "d", 90, 95, 3)]
    assert spans_to_chunk_qrels(spans, SPAN_MAP) == {"1": {"d#0": 3, "d#1": 3, "d#2": 0}}


def test_measure_names_carry_the_unit_and_parse_back():
    r10 = parse_measure("R@10")
    assert unit_name(r10, "doc") == "R[doc]@10" and unit_name(r10, "chunk") == "R[chunk]@10"
    assert unit_name(parse_measure("nDCG(dcg='exp-log2')@10"), "doc") == "nDCG[doc](dcg='exp-log2')@10"
    assert parse_unit_name("R[doc]@10") == (r10, "doc") and parse_unit_name("R@10") == (r10, "")
    with pytest.raises(ValidationError, match="unit"):
        parse_unit_name("R[page]@10")
