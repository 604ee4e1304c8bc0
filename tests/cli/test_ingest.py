"""`workbench ingest / collections / convert / qrels`: end to end through `main(argv)`.

A failed import (bad line at the end of a large file, unknown ids) must leave
the database exactly as before: every table's row count is compared.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.store import Store

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_corpus" / "cranfield"
RAW = ROOT.parent / "shared" / "data" / "cranfield"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def table_counts(db: Path) -> dict[str, int]:
    store = Store(db, client="pytest")
    with store.connection() as cur:
        tables = [r[0] for r in cur.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' ORDER BY 1").fetchall()]
        return {t: cur.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in tables}


def beir_folder(root: Path, n_docs: int = 3, qrels: str | None = None, name: str = "toy") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"text {i}"}) + "\n" for i in range(1, n_docs + 1)))
    (folder / "queries.jsonl").write_text('{"_id": "1", "text": "first"}\n{"_id": "2", "text": "second"}\n')
    if qrels is not None:
        (folder / "qrels.reference.txt").write_text(qrels)
    return folder


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "labels" / "wb.duckdb"


def test_ingest_sample_corpus_then_nothing_changes(capsys, db):
    code, out, err = run(capsys, "--db", db, "ingest", SAMPLE)
    assert code == 0, err
    assert "collection created 'cranfield': 1,400 documents" in out
    assert "topics: 225 in collection (225 added, 0 unchanged)" in out
    assert "qrels created: 'cranfield-reference' (225 topics, 1,837 entries" in out
    assert "qrels coverage: 924 of 924 doc ids (100.0%) and 225 of 225 topics" in out
    assert "[starting] read" in err and "[finished] store collection cranfield" in err
    before = table_counts(db)

    code, out, err = run(capsys, "--db", db, "ingest", SAMPLE)
    assert code == 0, err
    assert "collection unchanged: 'cranfield'" in out and "qrels unchanged" in out
    assert out.rstrip().endswith("nothing changed")
    assert table_counts(db) == before

    store = Store(db, client="pytest")
    assert len(store.collections.get_documents("cranfield")) == 1400
    topics = store.collections.get_topics("cranfield")
    assert len(topics) == 225 and topics["3"].title.startswith("what problems of heat conduction in composite slabs")
    info = store.qrels.get_qrels_info("cranfield-reference")
    assert (info.n_topics, info.n_entries, info.origin) == (225, 1837, "imported")
    assert "1->4, 2->3, 3->2, 4->1, -1 (code 5)->0" in info.rule
    assert store.qrels.qrels_grade_counts("cranfield-reference") == {0: 225, 1: 363, 2: 734, 3: 387, 4: 128}

    code, out, _ = run(capsys, "--db", db, "collections", "--format", "tsv")
    assert out.splitlines()[1].split("\t") == ["cranfield", info.collection_version[:12], "1", "1400", "225"]


@pytest.mark.skipif(not RAW.is_dir(), reason="raw Cranfield files not present")
def test_converter_reproduces_the_committed_sample_corpus(capsys, tmp_path):
    code, out, err = run(capsys, "convert", "cranfield", RAW, tmp_path / "cran")
    assert code == 0, err
    assert "1,400 documents, 225 topics, 1,837 judgments over 225 topics" in out
    for name in ("corpus.jsonl", "queries.jsonl", "doc_metadata.jsonl", "qrels.reference.txt", "qrels.meta.json",
                 "SOURCE.md"):
        assert (tmp_path / "cran" / name).read_bytes() == (SAMPLE / name).read_bytes(), name


@pytest.mark.skipif(not RAW.is_dir(), reason="raw Cranfield files not present")
def test_smart_folder_is_ingested_directly_with_the_same_content(capsys, db, tmp_path):
    assert run(capsys, "--db", db, "ingest", SAMPLE)[0] == 0
    code, out, err = run(capsys, "--db", db, "ingest", RAW, "--name", "cranfield")
    assert code == 0, err
    assert out.rstrip().endswith("nothing changed")  # same documents, topics and qrels as the converted files


def test_changed_corpus_is_reported_as_a_new_version(capsys, db, tmp_path):
    folder = beir_folder(tmp_path)
    assert run(capsys, "--db", db, "ingest", folder)[0] == 0
    beir_folder(tmp_path, n_docs=4)
    code, out, _ = run(capsys, "--db", db, "ingest", folder)
    assert code == 0
    assert "collection new version of 'toy': 4 documents" in out
    assert "documents +1 added, -0 removed, 0 changed" in out
    code, out, _ = run(capsys, "--db", db, "collections")
    assert out.splitlines()[1].split()[2:] == ["2", "4", "2"]


def test_failed_import_bad_last_line_of_a_large_file_leaves_the_db_untouched(capsys, db, tmp_path):
    assert run(capsys, "--db", db, "ingest", beir_folder(tmp_path, name="base"))[0] == 0
    before = table_counts(db)
    lines = "".join(f"{1 + i % 2} 0 d{1 + i // 2} {i % 3}\n" for i in range(4000))  # unique pairs
    folder = beir_folder(tmp_path, n_docs=2000, qrels=lines + "2 0 d7 high\n", name="big")
    code, out, err = run(capsys, "--db", db, "ingest", folder)
    assert code == 1 and out == ""
    assert err.strip().splitlines()[-1] == (
        f"workbench: error: {folder / 'qrels.reference.txt'}:4001: expected an integer grade in column 4, "
        "found 'high'. Write grades as whole numbers such as 0, 1, 2."
    )
    assert "Traceback" not in err
    assert table_counts(db) == before

    # the same through `qrels import` into an existing collection
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 d1 1\n" * 3000 + "1 0 d2\n")
    code, _, err = run(capsys, "--db", db, "qrels", "import", bad, "--name", "x", "--collection", "base")
    assert code == 1
    assert err.strip() == (
        f"workbench: error: {bad}:3001: expected 4 columns (topic iter doc grade), found 3. "
        "Write one judgment per line, columns separated by spaces or tabs."
    )
    assert table_counts(db) == before


def test_unknown_topic_id_names_file_and_line(capsys, db, tmp_path):
    folder = beir_folder(tmp_path, qrels="1 0 d1 1\n2 0 d2 0\n7 0 d3 1\n")
    code, _, err = run(capsys, "--db", db, "ingest", folder)
    assert code == 1
    assert err.strip().splitlines()[-1] == (
        f"workbench: error: {folder / 'qrels.reference.txt'}:3: expected a topic of collection 'toy', found topic '7' "
        "(1 of 3 qrels topics are unknown). Check the topic numbering, or add the topic to the collection's topics."
    )
    assert not db.exists() or table_counts(db)["collections"] == 0


def test_unknown_doc_id_names_file_and_line_and_can_be_allowed(capsys, db, tmp_path):
    folder = beir_folder(tmp_path, qrels="1 0 d1 1\n1 0 D2 1\n2 0 d3 0\n")
    code, _, err = run(capsys, "--db", db, "ingest", folder)
    assert code == 1
    assert err.strip().splitlines()[-1] == (
        f"workbench: error: {folder / 'qrels.reference.txt'}:2: expected a document of collection 'toy', found doc id "
        "'D2' (2 of 3 qrels doc ids, 66.7%, are in the collection). Check the ids' case and prefix, "
        "or pass --allow-unknown-docs to import anyway."
    )
    code, out, err = run(capsys, "--db", db, "ingest", folder, "--allow-unknown-docs")
    assert code == 0, err
    assert "qrels coverage: 2 of 3 doc ids (66.7%) and 2 of 2 topics are in collection 'toy'" in out
    assert "missing doc ids e.g. D2" in out


def test_qrels_import_list_show_export(capsys, db, tmp_path):
    assert run(capsys, "--db", db, "ingest", beir_folder(tmp_path))[0] == 0
    tsv = tmp_path / "test.tsv"
    tsv.write_text("query-id\tcorpus-id\tscore\n2\td3\t2\n1\td1\t1\n1\td2\t0\n")
    code, out, err = run(capsys, "--db", db, "qrels", "import", tsv, "--name", "toy-v1", "--collection", "toy",
                         "--rule", "graded by hand")
    assert code == 0, err
    assert out.startswith("qrels created: 'toy-v1' of collection 'toy' (2 topics, 3 entries, 2 with grade >= 1;")
    code, out, _ = run(capsys, "--db", db, "qrels", "import", tsv, "--name", "toy-v1", "--collection", "toy")
    assert out.startswith("qrels unchanged: 'toy-v1'")
    other = tmp_path / "other.qrels"
    other.write_text("1 0 d1 2\n")
    code, _, err = run(capsys, "--db", db, "qrels", "import", other, "--name", "toy-v1", "--collection", "toy")
    assert code == 1 and "already exists with different content" in err

    code, out, _ = run(capsys, "--db", db, "qrels", "list", "--format", "jsonl")
    [row] = [json.loads(x) for x in out.splitlines()]
    assert (row["name"], row["origin"], row["entries"], row["relevant"]) == ("toy-v1", "imported", 3, 2)
    code, out, _ = run(capsys, "--db", db, "qrels", "show", "toy-v1")
    assert "rule               graded by hand" in out and "grades             0: 1, 1: 1, 2: 1" in out

    code, out, err = run(capsys, "--db", db, "qrels", "export", "toy-v1")
    assert code == 0, err
    exported = db.parent / "toy-v1.qrels"
    assert exported.read_text() == "1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n"
    manifest = json.loads((db.parent / "manifest.json").read_text())
    entry = manifest["qrels_versions"]["toy-v1"]
    assert (entry["file"], entry["n_entries"], entry["rule"]) == ("toy-v1.qrels", 3, "graded by hand")
    import hashlib

    assert entry["file_sha256"] == hashlib.sha256(exported.read_bytes()).hexdigest()

    code, _, err = run(capsys, "--db", db, "qrels", "show", "nope")
    assert code == 1 and err.strip() == "workbench: error: unknown qrels version 'nope'; known: toy-v1"


def test_not_a_collection_folder(capsys, db, tmp_path):
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "--db", db, "ingest", tmp_path / "empty")
    assert code == 1
    assert err.strip().splitlines()[-1] == (
        f"workbench: error: {tmp_path / 'empty'}: expected corpus.jsonl + queries.jsonl (BEIR) or "
        "cran.all.1400, cran.qry, cranqrel (SMART), found []. Convert the collection first "
        "(e.g. `workbench convert cranfield`)."
    )


def test_trec_topic_file_can_replace_queries_jsonl(capsys, db, tmp_path):
    folder = beir_folder(tmp_path)
    (folder / "queries.jsonl").unlink()
    (folder / "topics.txt").write_text(
        "<top>\n<num> Number: 1\n<title> first\n<desc> Description:\nthe first need\n</top>\n"
        "<top>\n<num> Number: 2\n<title> second\n</top>\n")
    code, out, err = run(capsys, "--db", db, "ingest", folder)
    assert code == 0, err
    assert "topics: 2 in collection (2 added, 0 unchanged)" in out
    assert Store(db, client="pytest").collections.get_topics("toy")["1"].description == "the first need"
