"""Chunk maps (part of the collection version), chunk map files, and duplicate groups in the store."""

from __future__ import annotations

import json

import pytest

from workbench.errors import InputFormatError, ValidationError
from workbench.formats.units import read_chunk_map, read_groups, read_spans
from workbench.scoring.units import ChunkMap, ChunkSpan
from workbench.store.collections import collection_version_of, text_hash
from workbench.store.units import ChunkSource
from workbench.types import Document, Topic

CHUNKS = [Document("d1#0", "", "lift and"), Document("d1#1", "", "and drag"), Document("d2#0", "", "wing")]
TOPICS = [Topic("1", "lift")]


def _map(end: int = 8) -> ChunkMap:
    return ChunkMap.of([ChunkSpan("d1#0", "d1", 0, end), ChunkSpan("d1#1", "d1", 5, 13), ChunkSpan("d2#0", "d2", 0, 4)])


def test_the_chunk_map_is_part_of_the_collection_version(store):
    plain = collection_version_of([(d.doc_id, text_hash(d.title, d.text)) for d in CHUNKS])
    a = store.collections.ingest_collection("p", CHUNKS, TOPICS, chunk_map=_map(), chunk_source=ChunkSource("docs", "v1", "tokens", 2, 1))
    assert a.status == "created" and a.collection_version != plain
    assert store.units.get_chunk_map("p") == _map()
    assert store.units.get_chunk_source("p") == ChunkSource("docs", "v1", "tokens", 2, 1)
    assert store.collections.ingest_collection("p", CHUNKS, TOPICS, chunk_map=_map()).status == "unchanged"
    b = store.collections.ingest_collection("p", CHUNKS, TOPICS, chunk_map=_map(end=9))  # same texts, other offsets
    assert b.status == "new_version" and b.parent_version == a.collection_version
    assert store.units.get_chunk_map("p").spans["d1#0"].end == 9
    assert store.units.get_chunk_map("p", a.collection_version[:12]).spans["d1#0"].end == 8


def test_a_collection_without_a_map_keeps_its_version_and_has_no_map(store):
    r = store.collections.ingest_collection("docs", CHUNKS, TOPICS)
    assert r.collection_version == collection_version_of([(d.doc_id, text_hash(d.title, d.text)) for d in CHUNKS])
    assert store.units.get_chunk_map("docs") is None and store.units.get_chunk_source("docs") is None


def test_a_map_must_name_exactly_the_documents(store):
    with pytest.raises(ValidationError, match="1 document.*no chunk map row.*'d2#0'"):
        store.collections.ingest_collection("p", CHUNKS, TOPICS, chunk_map=ChunkMap.of([ChunkSpan("d1#0", "d1", 0, 8),
                                                                            ChunkSpan("d1#1", "d1", 5, 13)]))
    with pytest.raises(ValidationError, match="not documents of the corpus.*'x#0'"):
        store.collections.ingest_collection("p", CHUNKS, TOPICS, chunk_map=ChunkMap.of([*_map().spans.values(),
                                                                            ChunkSpan("x#0", "x", 0, 1)]))
    assert store.collections.list_collections() == []  # nothing half-written


def test_chunk_map_files_are_read_with_file_and_line_errors(write):
    p = write("chunk_map.tsv", "chunk_id\tdoc_id\tstart\tend\nd1#0\td1\t0\t8\n# a comment\nd1#1 d1 5 13\n")
    m = read_chunk_map(p)
    assert [c.chunk_id for c in m.chunks_of("d1")] == ["d1#0", "d1#1"] and m.spans["d1#1"].start == 5
    cases = [("a\tb\t0\n", ":1: expected 4 columns"), ("a b x 3\n", ":1: expected start as a character offset"),
             ("a b 5 3\n", ":1: expected end >= start"), ("a b 0 1\na c 0 1\n", ":2: chunk id 'a' is already on line 1"),
             ("chunk_id doc_id start end\n", "found none")]
    for text, message in cases:
        with pytest.raises(InputFormatError, match=message):
            read_chunk_map(write("bad.tsv", text))


def test_span_and_groups_files(write):
    spans = read_spans(write("spans.tsv", "topic_id doc_id start end grade\n1 d1 0 5 2\n1 d2 3 9\n"))
    assert [(s.topic_id, s.doc_id, s.start, s.end, s.grade) for s in spans] == [("1", "d1", 0, 5, 2), ("1", "d2", 3, 9, 1)]
    with pytest.raises(InputFormatError, match=":1: expected end > start"):
        read_spans(write("s.tsv", "1 d1 5 5\n"))
    assert read_groups(write("g.tsv", "group_id doc_id\ng1 d1\ng1 d2\ng2 d3\ng2 d4\n")) == {
        "g1": ["d1", "d2"], "g2": ["d3", "d4"]}
    with pytest.raises(InputFormatError, match=":3: document 'd1' is already in group 'g1'"):
        read_groups(write("g.tsv", "g1 d1\ng1 d2\ng2 d1\n"))
    with pytest.raises(InputFormatError, match=":1: group 'g1' has one document"):
        read_groups(write("g.tsv", "g1 d1\n"))


def test_duplicate_groups_are_added_per_source_and_merged(store):
    store.collections.ingest_collection("c", [Document(f"d{i}", "", f"text {i}") for i in range(1, 6)], TOPICS)
    assert store.units.add_duplicate_groups("c", [["d1", "d2"]], source="identical text") == 2
    assert store.units.add_duplicate_groups("c", [["d1", "d2"]], source="identical text") == 0  # idempotent
    assert store.units.add_duplicate_groups("c", {"m": ["d2", "d3"], "n": ["d4", "d5"]}, source="mirrors.tsv") == 4
    g = store.units.get_duplicate_groups("c")
    assert dict(g.members) == {"d1": ("d1", "d2", "d3"), "d4": ("d4", "d5")}
    assert g.sources["d1"] == ("identical text", "mirrors.tsv") and g.sources["d4"] == ("mirrors.tsv",)
    with pytest.raises(ValidationError, match="expected documents of collection 'c' version .*, found doc id 'zz'"):
        store.units.add_duplicate_groups("c", [["d1", "zz"]], source="bad.tsv")


def test_ingest_folder_reads_the_chunk_map_and_groups_identical_texts(store, tmp_path):
    from workbench.services.collections.ingest import describe_ingest, ingest_folder

    folder = tmp_path / "passages"
    folder.mkdir()
    rows = [{"_id": "a#0", "title": "T", "text": "Lift,  and drag."}, {"_id": "a#1", "title": "t", "text": "lift and DRAG"},
            {"_id": "b#0", "title": "", "text": "wing"}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "lift"}) + "\n")
    (folder / "chunk_map.tsv").write_text("a#0 a 0 16\na#1 a 10 23\nb#0 b 0 4\n")
    result = ingest_folder(store, folder)
    lines = list(describe_ingest(result))
    assert "note: chunk map: 3 chunks of 2 documents (part of the collection version)" in lines
    assert any("1 group(s) of identical normalised text over 2 documents" in x for x in lines)
    assert store.units.get_chunk_map("passages").doc_of("a#1") == "a"
    assert dict(store.units.get_duplicate_groups("passages").members) == {"a#0": ("a#0", "a#1")}
    (folder / "chunk_map.tsv").write_text("a#0 a 0 16\nb#0 b 0 4\n")
    with pytest.raises(ValidationError, match="no chunk map row.*'a#1'"):
        ingest_folder(store, folder)
