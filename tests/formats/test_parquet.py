"""Parquet readers (via DuckDB): corpus, queries, qrels, and their errors naming file and row."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from workbench.errors import InputFormatError
from workbench.formats import parquet
from workbench.types import Document, Topic


@pytest.fixture
def table(tmp_path):
    def _write(name: str, columns: dict) -> str:
        path = tmp_path / name
        pq.write_table(pa.table(columns), path)
        return str(path)

    return _write


def _error(fn, path) -> InputFormatError:
    with pytest.raises(InputFormatError) as e:
        fn(path)
    return e.value


def test_corpus_columns_by_name_extra_columns_kept(table):
    p = table("c.parquet", {"_id": ["d1", "d2"], "title": ["A", None], "text": ["x", ""], "year": [1958, 1960]})
    docs, t = parquet.read_corpus(p)
    assert docs == [Document("d1", "A", "x"), Document("d2", "", "")]  # NULL title reads as ""
    assert t.extra == ("year",) and t.names == {"doc_id": "_id", "title": "title", "text": "text"}
    docs, _ = parquet.read_corpus(table("c2.parquet", {"doc_id": ["7"], "contents": ["y"]}))
    assert docs == [Document("7", "", "y")]


def test_integer_ids_are_refused_with_the_fix(table):
    e = _error(parquet.read_corpus, table("c.parquet", {"_id": [1, 2], "text": ["x", "y"]}))
    assert str(e).startswith(f"{e.path}: expected column '_id' to hold string ids, found type BIGINT. Write ids "
                             "as strings")


def test_row_errors_name_the_row(table):
    e = _error(parquet.read_corpus, table("c.parquet", {"_id": ["d1", None], "text": ["x", "y"]}))
    assert str(e) == (f"{e.path}: row 2: expected a non-empty id without whitespace in column '_id', found NULL. "
                      "TREC formats cannot carry such ids; fix the value.")
    assert e.line == 2
    e = _error(parquet.read_corpus, table("d.parquet", {"_id": ["d1", "d2", "d1"], "text": ["x", "y", "z"]}))
    assert str(e).endswith("row 3: expected each doc id once, found 'd1' again (first in row 1). Remove the repeat.")
    e = _error(parquet.read_corpus, table("e.parquet", {"_id": ["d 1"], "text": ["x"]}))
    assert "row 1: expected a non-empty id without whitespace" in str(e)
    e = _error(parquet.read_corpus, table("f.parquet", {"_id": ["d1"], "text": pa.array([None], pa.string())}))
    assert str(e).endswith("row 1: expected a string in column 'text', found NULL. Write \"\" for no text.")


def test_missing_column_lists_the_files_columns(table):
    e = _error(parquet.read_corpus, table("c.parquet", {"id": ["d1"], "text": ["x"]}))
    assert str(e) == (f"{e.path}: expected a column '_id' or 'doc_id' or 'corpus-id' in this corpus file, found "
                      "columns ['id', 'text']. Rename the column.")


def test_not_parquet_missing_and_empty(tmp_path, table):
    bad = tmp_path / "x.parquet"
    bad.write_text("hello")
    assert "expected a Parquet file, found something else" in str(_error(parquet.read_corpus, bad))
    assert str(_error(parquet.read_corpus, tmp_path / "none.parquet")).endswith(
        "expected a Parquet file, found nothing at this path. Check the path.")
    empty = table("e.parquet", {"_id": pa.array([], pa.string()), "text": pa.array([], pa.string())})
    assert "expected at least one corpus row, found an empty file" in str(_error(parquet.read_corpus, empty))


def test_queries(table):
    p = table("q.parquet", {"query_id": ["1", "10"], "text": ["wing  lift", "drag"], "narrative": ["n", None]})
    assert parquet.read_queries(p) == [Topic("1", "wing lift", "", "n"), Topic("10", "drag", "", "")]
    e = _error(parquet.read_queries, table("q2.parquet", {"_id": ["1"], "text": ["  "]}))
    assert "row 1: expected a non-empty query in column 'text'" in str(e)


def test_qrels_integer_and_whole_float_grades(table):
    p = table("r.parquet", {"query-id": ["1", "1", "2", "2"], "corpus-id": ["d1", "d2", "d1", "d1"],
                            "score": [2.0, 0.0, 1.0, 1.0]})
    assert parquet.read_qrels(p) == {"1": {"d1": 2, "d2": 0}, "2": {"d1": 1}}  # exact repeat accepted once
    e = _error(parquet.read_qrels, table("r2.parquet", {"query_id": ["1"], "doc_id": ["d1"], "grade": [0.5]}))
    assert str(e).endswith("row 1: expected a whole-number grade in column 'grade', found 0.5. Write grades such "
                           "as 0, 1, 2.")
    e = _error(parquet.read_qrels, table("r3.parquet", {"query_id": ["1", "1"], "doc_id": ["d1", "d1"],
                                                        "grade": [1, 2]}))
    assert "row 2: expected one grade for topic '1' and document 'd1', found 2 here and 1 in row 1" in str(e)
    e = _error(parquet.read_qrels, table("r4.parquet", {"query_id": ["1"], "doc_id": ["d1"], "grade": [2**40]}))
    assert "row 1: grade 1099511627776 in column 'grade' is out of range" in str(e)
    assert list(parquet.scan_qrels_ids(p))[2] == (3, "2", "d1")
