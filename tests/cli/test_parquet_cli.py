"""Parquet through the command line: `score` reads Parquet runs and qrels and writes Parquet
results; `run import` and `qrels import` store Parquet files as they store TREC ones."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli.helpers import cli
from tests.cli.test_ingest import beir_folder, table_counts
from workbench.cli import main
from workbench.store import Store

QRELS = {"topic_id": ["1", "1", "1", "2", "3"], "doc_id": ["a", "d9", "z", "c", "q"], "grade": [1, 2, 1, 1, 0]}
RUN = {"topic_id": ["1", "1", "1", "2", "2"], "doc_id": ["a", "d10", "d9", "x", "c"],
       "score": [3.0, 2.0, 2.0, 1.0, 0.5], "rank": [1, 2, 3, 1, 2]}
QRELS_TEXT = "1 0 a 1\n1 0 d9 2\n1 0 z 1\n2 0 c 1\n3 0 q 0\n"
RUN_TEXT = "1 Q0 a 1 3.0 bm25\n1 Q0 d10 2 2.0 bm25\n1 Q0 d9 3 2.0 bm25\n2 Q0 x 1 1.0 bm25\n2 Q0 c 2 0.5 bm25\n"


@pytest.fixture
def files(tmp_path, write, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "nodb" / "wb.duckdb"))
    pq.write_table(pa.table(RUN), tmp_path / "bm25.parquet")
    pq.write_table(pa.table(QRELS), tmp_path / "q.parquet")
    return tmp_path / "bm25.parquet", tmp_path / "q.parquet", write("bm25.run", RUN_TEXT), write("q.txt", QRELS_TEXT)


def _values(doc):
    return {(r["run"], m): v["macro"] for r in doc["runs"] for m, v in r["measures"].items()}


def test_score_parquet_run_and_qrels_give_the_trec_files_numbers(capsys, files):
    prun, pqrels, trun, tqrels = files
    code, out, err = cli(capsys, "score", prun, "--qrels", pqrels, "--format", "json")
    assert code == 0, err
    code2, out2, err2 = cli(capsys, "score", trun, "--qrels", tqrels, "--format", "json")
    assert code2 == 0, err2
    a, b = json.loads(out), json.loads(out2)
    assert _values(a) == _values(b) and a["runs"][0]["run"] == "bm25"
    assert a["header"]["qrels"]["content_hash"] == b["header"]["qrels"]["content_hash"]     # same qrels content
    # R@2 of topic 1 in trec_eval order a, d9, d10: {a, d9} of |R| = 3.
    code, out, _ = cli(capsys, "score", prun, "--qrels", pqrels, "-m", "R@2", "--per-topic", "--format", "jsonl")
    row = next(json.loads(x) for x in out.splitlines() if json.loads(x)["topic_id"] == "1")
    assert row["value"] == pytest.approx(2 / 3) and (row["numerator"], row["denominator"]) == (2, 3)


def test_score_writes_results_as_parquet_with_the_jsonl_rows(capsys, files, tmp_path):
    prun, pqrels, _, _ = files
    target = tmp_path / "out" / "scores.parquet"
    code, out, err = cli(capsys, "score", prun, "--qrels", pqrels, "--per-topic", "--format", "parquet", "--out", target)
    assert code == 0 and out == "" and f"wrote {target}" in err
    table = pq.read_table(target)
    code, out, _ = cli(capsys, "score", prun, "--qrels", pqrels, "--per-topic", "--format", "jsonl")
    rows = [json.loads(x) for x in out.splitlines()]
    assert table.num_rows == len(rows) and table.column_names[:8] == [
        "run", "measure", "aggregate", "topic_id", "value", "numerator", "denominator", "n_topics"]
    got = {(r["measure"], r["aggregate"], r["topic_id"]): r["value"] for r in table.to_pylist()}
    assert got == {(r["measure"], r["aggregate"], r["topic_id"]): r["value"] for r in rows}


def test_score_out_writes_text_formats_and_parquet_needs_out(capsys, files, tmp_path):
    prun, pqrels, _, _ = files
    code, _, err = cli(capsys, "score", prun, "--qrels", pqrels, "--format", "parquet")
    assert code == 2 and "give it with --out FILE.parquet" in err  # usage (docs/scoring.md: exit codes)
    code, out, _ = cli(capsys, "score", prun, "--qrels", pqrels, "--format", "csv", "--out", tmp_path / "s.csv")
    assert code == 0 and out == "" and (tmp_path / "s.csv").read_text().startswith("run,measure,aggregate")
    code, _, err = cli(capsys, "misses", prun, "--qrels", pqrels, "--format", "parquet")
    assert code == 2 and "'--format': unknown format 'parquet'; known: csv, json, jsonl, table, tsv" in err


@pytest.fixture
def toy(capsys, tmp_path):
    db = tmp_path / "labels" / "wb.duckdb"
    folder = beir_folder(tmp_path, n_docs=3)
    assert main(["--db", str(db), "ingest", str(folder)]) == 0
    capsys.readouterr()
    return db


def test_run_import_parquet_stores_what_the_trec_file_stores(capsys, toy, tmp_path, write):
    pq.write_table(pa.table({"topic_id": ["1", "1", "2"], "doc_id": ["d1", "d2", "d3"], "score": [2.0, 1.0, 0.5]}),
                   tmp_path / "p.parquet")
    trec = write("t.trec", "1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n2 Q0 d3 1 0.5 t\n")
    for name, path in (("fromparquet", tmp_path / "p.parquet"), ("fromtrec", trec)):
        code, out, err = cli(capsys, "--db", toy, "run", "import", path, "--name", name, "--collection", "toy")
        assert code == 0, err
    store = Store(toy, client="pytest")
    assert store.runs.get_run("fromparquet") == store.runs.get_run("fromtrec") == {"1": {"d1": 2.0, "d2": 1.0}, "2": {"d3": 0.5}}
    assert store.runs.get_run_info("fromparquet").params["tag"] == "p"


def test_run_import_of_an_unknown_document_names_the_row_and_stores_nothing(capsys, toy, tmp_path):
    pq.write_table(pa.table({"topic_id": ["1", "1", "2"], "doc_id": ["d1", "d2", "nope"], "score": [2.0, 1.0, 0.5]}),
                   tmp_path / "bad.parquet")
    before = table_counts(toy)
    code, _, err = cli(capsys, "--db", toy, "run", "import", tmp_path / "bad.parquet", "--name", "b",
                       "--collection", "toy")
    assert code == 1 and f"{tmp_path / 'bad.parquet'}: row 3: expected a document of collection 'toy', found 'nope'" in err
    assert table_counts(toy) == before


def test_qrels_import_parquet_is_sniffed_and_named_rows_on_error(capsys, toy, tmp_path):
    pq.write_table(pa.table({"topic_id": ["1", "2"], "doc_id": ["d1", "d3"], "grade": [2, 0]}), tmp_path / "q.parquet")
    code, out, err = cli(capsys, "--db", toy, "qrels", "import", tmp_path / "q.parquet", "--name", "pq",
                         "--collection", "toy")
    assert code == 0, err
    assert Store(toy, client="pytest").qrels.get_qrels("pq") == {"1": {"d1": 2}, "2": {"d3": 0}}
    pq.write_table(pa.table({"topic_id": ["1", "9"], "doc_id": ["d1", "d3"], "grade": [2, 0]}), tmp_path / "b.parquet")
    code, _, err = cli(capsys, "--db", toy, "qrels", "import", tmp_path / "b.parquet", "--name", "bad",
                       "--collection", "toy", "--format", "parquet")
    assert code == 1 and f"{tmp_path / 'b.parquet'}: row 2:" in err
