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
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "wing lift"}) + "\n"
                                          + json.dumps({"_id": "2", "text": "speed drag"}) + "\n")
    (folder / "qrels.reference.txt").write_text("1 0 1 1\n2 0 2 1\n2 0 1 1\n")
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
    assert code == 1 and "expected an overlap between 0 and size - 1 = 3, found 4" in err
    code, _, err = run(capsys, "convert", "chunk", docs, "--size", 4, "--name", "x", "--out", docs)
    assert code == 1 and "without chunk_map.tsv" in err and not (docs / "chunk_map.tsv").exists()
