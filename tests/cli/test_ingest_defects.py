"""Regression tests (QA defects): ingest refuses what later steps could not handle, and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_ingest import beir_folder, run, table_counts
from workbench.errors import ValidationError
from workbench.store.collection_rows import cut_id
from workbench.store.collections import check_collection_name
from workbench.types import Document, Topic


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "labels" / "wb.duckdb"


def _prime(capsys, db, tmp_path) -> dict[str, int]:
    """An existing collection, so 'untouched' is checked against a non-empty store."""
    code, _, err = run(capsys, "--db", db, "ingest", beir_folder(tmp_path / "base", name="base"))
    assert code == 0, err
    return table_counts(db)


def test_beir_grade_out_of_range_writes_nothing(capsys, db, tmp_path):
    before = _prime(capsys, db, tmp_path)
    folder = beir_folder(tmp_path / "x", name="big")
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t3000000000\n")
    code, out, err = run(capsys, "--db", db, "ingest", folder)
    assert code != 0 and "Traceback" not in err
    assert f"{folder / 'qrels' / 'test.tsv'}:2: grade '3000000000' is out of range (-2147483648..2147483647)" in err
    assert table_counts(db) == before


@pytest.mark.parametrize("grade", ["3000000000", "-99999999999999999999"])
def test_qrels_import_grade_out_of_range(capsys, db, tmp_path, grade):
    before = _prime(capsys, db, tmp_path)
    q = tmp_path / "q.txt"
    q.write_text(f"1 0 d1 1\n1 0 d2 {grade}\n")
    code, _, err = run(capsys, "--db", db, "qrels", "import", q, "--name", "x", "--collection", "base")
    assert code != 0 and "Traceback" not in err
    assert f"{q}:2: grade '{grade}' is out of range" in err
    assert table_counts(db) == before


@pytest.mark.parametrize("doc_id", ["d 9", "d\t9"])
def test_doc_id_with_whitespace_refused_at_ingest(capsys, db, tmp_path, doc_id):
    before = _prime(capsys, db, tmp_path)
    folder = beir_folder(tmp_path / "x", name="ws")
    with (folder / "corpus.jsonl").open("a") as f:
        f.write(json.dumps({"_id": doc_id, "text": "t"}) + "\n")
    code, _, err = run(capsys, "--db", db, "ingest", folder)
    assert code != 0
    assert f"{folder / 'corpus.jsonl'}:4: expected a non-empty '_id' without whitespace, found {doc_id!r}" in err
    assert table_counts(db) == before


def test_lone_surrogate_names_file_and_line(capsys, db, tmp_path):
    folder = beir_folder(tmp_path / "x", name="sur")
    with (folder / "corpus.jsonl").open("a") as f:
        f.write('{"_id":"d9","text":"\\ud800"}\n')
    code, _, err = run(capsys, "--db", db, "ingest", folder)
    assert code != 0 and "UnicodeEncodeError" not in err
    assert f"{folder / 'corpus.jsonl'}:4: expected 'text' to be valid Unicode text, found a lone surrogate \\ud800" in err


@pytest.mark.parametrize("name", ["my coll", "a/b", "", "x" * 65, "é"])
def test_collection_name_rule(name):
    with pytest.raises(ValidationError, match="expected a collection name of 1 to 64 characters, each a letter, digit"):
        check_collection_name(name)


@pytest.mark.parametrize("name", ["toy", "cranfield", "msmarco-v2.1", "A_b-9", "x" * 64])
def test_collection_names_accepted(name):
    assert check_collection_name(name) == name


def test_ingest_refuses_a_bad_name_before_reading(capsys, db, tmp_path):
    folder = beir_folder(tmp_path / "x", name="ok")
    code, _, err = run(capsys, "--db", db, "ingest", folder, "--name", "my coll")
    assert code != 0
    assert "expected a collection name of 1 to 64 characters, each a letter, digit, '_', '.' or '-', not starting with '-', found 'my coll'" in err
    assert "[starting] read" not in err


def test_store_refuses_whitespace_ids_and_bad_names(store):
    with pytest.raises(ValidationError, match="expected non-empty doc ids without whitespace, found 'd 9'"):
        store.collections.ingest_collection("toy", [Document("d 9", "", "x")], [])
    with pytest.raises(ValidationError, match="expected non-empty topic ids without whitespace, found 'q\\\\t1'"):
        store.collections.ingest_collection("toy", [Document("d1", "", "x")], [Topic("q\t1", "t")])
    with pytest.raises(ValidationError, match="found 'my coll'"):
        store.collections.ingest_collection("my coll", [Document("d1", "", "x")], [])
    assert store.collections.list_collections() == []


def test_long_unknown_ids_are_cut_in_messages(capsys, db, tmp_path):
    long = "z" * 2_000_000
    assert cut_id(long) == "z" * 60 + "\u2026 (2000000 characters)"
    # qrels import naming an unknown 2 MB doc id
    _prime(capsys, db, tmp_path)
    q = tmp_path / "q.txt"
    q.write_text(f"1 0 {long} 1\n")
    code, _, err = run(capsys, "--db", db, "qrels", "import", q, "--name", "x", "--collection", "base")
    assert code != 0
    assert f"found doc id {'z' * 60!r}\u2026 (2000000 characters)" in err
    assert len(err) < 2000


def test_store_cuts_long_unknown_doc_id(store):
    long = "z" * 2_000_000
    store.collections.ingest_collection("toy", [Document("d1", "", "x")], [])
    with pytest.raises(Exception) as e:
        store.collections.get_document("toy", long)
    assert len(str(e.value)) < 500 and "(2000000 characters)" in str(e.value)


# -- 6. convert cranfield: small inputs, no partial output ------------------------------------


def _small_cranfield(root: Path, n_queries: int) -> Path:
    src = root / "raw"
    src.mkdir(parents=True)
    (src / "cran.all.1400").write_text(
        ".I 1\n.T\nwings\n.A\nsmith\n.B\nj. aero 1\n.W\nlift of wings\n"
        ".I 2\n.T\ndrag\n.A\njones\n.B\nj. aero 2\n.W\ndrag at speed\n")
    (src / "cran.qry").write_text("".join(f".I {i:03d}\n.W\nquery number {i} .\n" for i in range(1, n_queries + 1)))
    (src / "cranqrel").write_text("".join(f"{i} 1 2\n" for i in range(1, n_queries + 1)))
    return src


@pytest.mark.parametrize("n_queries", [1, 3])
def test_convert_cranfield_with_few_queries(capsys, tmp_path, n_queries):
    src = _small_cranfield(tmp_path, n_queries)
    code, _, err = run(capsys, "convert", "cranfield", src, tmp_path / "out")
    assert code == 0, err
    readme = (tmp_path / "out" / "README.md").read_text()
    # every query appears once in the examples table
    for i in range(1, n_queries + 1):
        assert readme.count(f"| `.I {i:03d}` | {i} |") == 1
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        ["corpus.jsonl", "queries.jsonl", "doc_metadata.jsonl", "qrels.reference.txt", "qrels.meta.json", "README.md"])
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp folder left


def test_convert_failure_leaves_no_partial_output(capsys, tmp_path, monkeypatch):
    import workbench.services.collections.ingest as ingest

    src = _small_cranfield(tmp_path, 2)

    def boom(*args, **kwargs):
        raise ValidationError("simulated failure while writing qrels")

    monkeypatch.setattr(ingest.trec, "write_qrels", boom)
    code, _, err = run(capsys, "convert", "cranfield", src, tmp_path / "out")
    assert code != 0 and "simulated failure" in err
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
