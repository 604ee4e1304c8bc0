"""`workbench convert chunk`, ingest of a chunk collection, and scoring at a unit, end to end on a toy collection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main

TEXTS = {
    "1": "wing lift in a slipstream of a propeller at low speed",
    "2": "drag of slender bodies at high speed in a wind tunnel",
    "3": "heat transfer in a laminar boundary layer on a flat plate",
}


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def docs(tmp_path) -> Path:
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n"
                                                 for i, t in TEXTS.items()))
    (folder / "queries.jsonl").write_text(
        json.dumps({"_id": "1", "text": "wing lift"}) + "\n" + json.dumps({"_id": "2", "text": "speed drag"}) + "\n"
        + json.dumps({"_id": "3", "text": "rotor noise", "metadata": {"no_answer": True}}) + "\n")
    (folder / "qrels.reference.txt").write_text("1 0 1 1\n2 0 2 1\n2 0 1 1\n2 0 3 1\n")
    return folder


def test_convert_chunk_writes_a_passage_collection_whose_map_points_into_the_documents(capsys, tmp_path, docs):
    db = tmp_path / "wb.duckdb"
    out = tmp_path / "toy-p4"
    code, text, err = run(capsys, "--db", db, "convert", "chunk", docs, "--size", 4, "--overlap", 1,
                          "--name", "toy-p4", "--out", out)
    assert code == 0, err
    assert "12 chunks of 3 documents (4 tokens, overlap 1; at most 4 chunks per document" in text
    assert "next: workbench ingest" in err
    corpus = {json.loads(x)["_id"]: json.loads(x)["text"] for x in (out / "corpus.jsonl").read_text().splitlines()}
    rows = [line.split("\t") for line in (out / "chunk_map.tsv").read_text().splitlines()[1:]]
    assert len(rows) == len(corpus) == 12
    for chunk_id, doc_id, start, end in rows:
        assert TEXTS[doc_id][int(start):int(end)] == corpus[chunk_id]
    assert corpus["1#0"] == "wing lift in a" and corpus["1#1"] == "a slipstream of a"
    meta = json.loads((out / "chunks.meta.json").read_text())
    assert (meta["chunk_unit"], meta["size"], meta["overlap"], meta["n_chunks"]) == ("tokens", 4, 1, 12)
    code, text, err = run(capsys, "--db", db, "ingest", out)
    assert code == 0, err
    assert "note: chunk map: 12 chunks of 3 documents (part of the collection version)" in text


def test_convert_chunk_refuses_a_bad_overlap_and_a_foreign_folder(capsys, tmp_path, docs):
    code, _, err = run(capsys, "convert", "chunk", docs, "--size", 4, "--overlap", 4, "--name", "x",
                       "--out", tmp_path / "x")
    assert code == 2 and "--overlap 4 with --size 4: expected an overlap of 0 .. size - 1 = 3" in err
    code, _, err = run(capsys, "convert", "chunk", docs, "--size", 4, "--name", "x", "--out", docs)
    assert code == 1 and "without chunk_map.tsv" in err and not (docs / "chunk_map.tsv").exists()


# Chunk run: topic 1 -> documents 2, 1, 3 (1's chunks at ranks 2 and 3); topic 2 -> 1, 3, 2 (1's chunks at 1 and 2);
# topic 3 (no-answer) returns one chunk scored 0.5.
CHUNK_RUN = """1 Q0 2#0 1 9 r
1 Q0 1#2 2 8 r
1 Q0 1#0 3 7 r
1 Q0 3#1 4 6 r
2 Q0 1#1 1 9 r
2 Q0 1#3 2 8 r
2 Q0 3#0 3 7 r
2 Q0 2#2 4 6 r
3 Q0 3#2 1 0.5 r
"""


@pytest.fixture
def chunked(capsys, tmp_path, docs) -> tuple[Path, Path]:
    db = tmp_path / "wb.duckdb"
    out = tmp_path / "toy-p4"
    assert run(capsys, "--db", db, "ingest", docs)[0] == 0
    assert run(capsys, "--db", db, "convert", "chunk", "toy", "--size", 4, "--overlap", 1, "--name", "toy-p4",
               "--out", out)[0] == 0  # from the stored collection
    assert run(capsys, "--db", db, "ingest", out)[0] == 0
    runfile = tmp_path / "chunks.run"
    runfile.write_text(CHUNK_RUN)
    return db, runfile


def _measures(doc: dict, unit: str) -> dict:
    view = next(v for v in doc["views"] if v["unit"] == unit)
    return {k: (m["sum_numerator"], m["sum_denominator"], m["macro"]) for k, m in view["runs"][0]["measures"].items()}


def test_a_chunk_run_against_document_qrels_is_refused_naming_the_option(capsys, chunked):
    db, runfile = chunked
    code, _, err = run(capsys, "--db", db, "score", runfile, "--qrels", "toy-reference", "--collection", "toy-p4")
    assert code == 1 and "ranks chunks (collection 'toy-p4')" in err and "pass --unit doc" in err
    code, _, err = run(capsys, "--db", db, "score", runfile, "--qrels", "toy-reference", "--collection", "toy-p4",
                       "--unit", "chunk")
    assert code == 1 and "pass --qrels-to-chunks" in err


def test_chunk_and_document_level_side_by_side(capsys, chunked):
    db, runfile = chunked
    code, out, err = run(capsys, "--db", db, "score", runfile, "--qrels", "toy-reference", "--collection", "toy-p4",
                         "--unit", "chunk", "--unit", "doc", "--qrels-to-chunks", "--measure", "R", "--k", "1,2,3",
                         "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["run_unit"] == "chunk" and doc["qrels_unit"] == "doc"
    d = _measures(doc, "doc")
    # topic 1: documents 2, 1, 3 (|R| = 1); topic 2: 1, 3, 2 (|R| = 3)
    assert d["R[doc]@1"][:2] == (1, 4) and d["R[doc]@2"][:2] == (3, 4) and d["R[doc]@3"][:2] == (4, 4)
    assert d["R[doc]@2"][2] == (1 / 1 + 2 / 3) / 2
    c = _measures(doc, "chunk")
    # every chunk of a relevant document inherits: topic 1 has 4 relevant chunks, topic 2 has 12
    assert c["R[chunk]@2"][:2] == (1 + 2, 4 + 12) and c["R[chunk]@3"][:2] == (2 + 3, 16)
    view = next(v for v in doc["views"] if v["unit"] == "doc")
    assert view["chunk_lines_collapsed"] == {"r": 2}
    code, table, _ = run(capsys, "--db", db, "score", runfile, "--qrels", "toy-reference", "--collection", "toy-p4",
                         "--unit", "chunk", "--unit", "doc", "--qrels-to-chunks", "--measure", "R", "--k", "2")
    assert code == 0
    line = next(x for x in table.splitlines() if x.startswith("R[chunk]@2"))
    assert "|   R[doc]@2" in line


def test_dedupe_groups_and_no_answer_topics(capsys, chunked, tmp_path):
    db, runfile = chunked
    groups = tmp_path / "mirrors.tsv"
    groups.write_text("group_id doc_id\ng 2\ng 3\n")  # documents 2 and 3 are mirrors
    code, out, err = run(capsys, "--db", db, "score", runfile, "--qrels", "toy-reference", "--collection", "toy-p4",
                         "--unit", "doc", "--dedupe", "groups", "--groups", groups, "--measure", "R", "--k", "2",
                         "--answer-threshold", "0.6", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    view = doc["views"][0]
    assert view["duplicate_groups"]["applied"] and view["duplicate_groups"]["relevant_merged"] == 1
    assert view["duplicate_groups"]["run_lines_collapsed"] == 2  # topic 1: 3 after 2; topic 2: 2 after 3
    # topic 1: groups 2, 1 -> found at 2 (1/1); topic 2: 1, {2,3} -> 2 of 2 groups
    assert _measures(doc, "doc")["R[doc]@2"][:2] == (1 + 2, 1 + 2)
    na = doc["no_answer"][0]
    assert na["no_answer_topics"] == ["3"] and na["abstained"] == ["3"] and na["accuracy"] == 1.0
    assert na["false_answer_rate"] == 0.0 and na["answerable"] == 2 and na["answerable_abstained"] == []
    code, table, _ = run(capsys, "--db", db, "score", runfile, "--qrels", "toy-reference", "--collection", "toy-p4",
                         "--unit", "doc", "--measure", "R", "--k", "2")
    assert "duplicate groups: not applied" in table and "no-answer topics: 1 (topic metadata no_answer of toy)" in table
    assert "answered 1/1" not in table and "false-answer rate" in table


def test_span_qrels_with_any_overlap_and_a_minimum_share(capsys, chunked, tmp_path):
    db, runfile = chunked
    # document 1's chunks: #0 0-14, #1 13-30, #2 29-47, #3 44-53; the span 26-35 ("of a prop") shares 4 characters
    # with #1 (share 4/9) and 6 with #2 (6/9)
    spans = tmp_path / "spans.tsv"
    spans.write_text("topic_id doc_id start end grade\n1 1 26 35 1\n")
    args = ["--db", db, "score", runfile, "--qrels", spans, "--spans", "--collection", "toy-p4", "--unit", "chunk",
            "--unit", "doc", "--measure", "R", "--k", "2", "--format", "json"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["qrels_unit"] == "span"
    assert _measures(doc, "chunk")["R[chunk]@2"][:2] == (1, 2)    # 1#1 and 1#2 are relevant; 1#2 is at rank 2
    assert _measures(doc, "doc")["R[doc]@2"][:2] == (1, 1)        # document 1 is the 2nd document
    code, out, err = run(capsys, *args, "--span-overlap", 0.5)
    assert code == 0, err
    assert _measures(json.loads(out), "chunk")["R[chunk]@2"][:2] == (1, 1)  # only 1#2 holds half the span
