"""Parquet runs: the same content and rules as TREC run files (and as the other Parquet readers),
errors that name the row, the columnar reader for scoring, and the atomic writer."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.scoring.conftest import make_data
from workbench.errors import InputFormatError
from workbench.formats import parquet, trec
from workbench.formats.columnar import read_qrels_columns, read_run_columns
from workbench.scoring.evaluate import Evaluator

NAMES = ["R@5", "R@20", "P@10", "nDCG@10", "RR@10", "Judged@10"]


def _pq(path, **columns):
    pq.write_table(pa.table(columns), path)
    return path


def _run_table(run):
    rows = [(t, d, s, i) for t, docs in run.items() for i, (d, s) in enumerate(docs.items(), 1)]
    return {"topic_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows], "score": [r[2] for r in rows],
            "rank": [r[3] for r in rows]}


def _trec_text(run, tag):
    return "".join(f"{t} Q0 {d} {i} {s!r} {tag}\n" for t, docs in run.items() for i, (d, s) in enumerate(docs.items(), 1))


def test_is_parquet_reads_the_magic_bytes_whatever_the_suffix(tmp_path, write):
    assert parquet.is_parquet(_pq(tmp_path / "r.bin", topic_id=["1"], doc_id=["a"], score=[1.0]))
    assert not parquet.is_parquet(write("r.parquet", "1 Q0 a 1 1.0 s\n"))
    assert not parquet.is_parquet(tmp_path / "absent.parquet")


def test_a_parquet_run_scores_exactly_as_the_same_trec_run(tmp_path, write):
    qrels, run = make_data(5)
    p = _pq(tmp_path / "sys.parquet", **_run_table(run))
    t = write("sys.trec", _trec_text(run, "sys"))
    ev = Evaluator(qrels, NAMES, missing="exclude")
    a, b = ev.evaluate(read_run_columns(p)), ev.evaluate(read_run_columns(t))
    assert read_run_columns(p).name == "sys"                        # no tag column: the file's stem
    for m in a.measures:
        assert a.per_topic[m] == b.per_topic[m]
    assert a.novel_documents.at(10) == b.novel_documents.at(10)
    rf, tf = parquet.read_run(p), trec.read_run(t)
    assert (rf.run, rf.file_order, rf.n_lines) == (tf.run, tf.file_order, tf.n_lines)


def test_parquet_qrels_score_as_the_same_trec_qrels(tmp_path, write):
    q = _pq(tmp_path / "q.parquet", topic_id=["1", "1", "2", "1"], doc_id=["a", "b", "c", "a"], grade=[2, -1, 0, 2])
    qt = read_qrels_columns(write("q.txt", "1 0 a 2\n1 0 b -1\n2 0 c 0\n"))
    qp = read_qrels_columns(q)
    assert (qp.topic_ids, qp.doc_ids, qp.grades.tolist()) == (qt.topic_ids, qt.doc_ids, qt.grades.tolist())


def test_trust_file_order_uses_the_rank_column(tmp_path):
    p = _pq(tmp_path / "r.parquet", topic_id=["1"] * 3, doc_id=["a", "b", "c"], score=[9.0, 1.0, 5.0], rank=[2, 1, 3])
    qrels = {"1": {"b": 1}}
    assert Evaluator(qrels, ["RR@10"]).evaluate(read_run_columns(p)).value("RR@10", "1") == pytest.approx(1 / 3)
    by_file = Evaluator(qrels, ["RR@10"]).evaluate(read_run_columns(p, trust_file_order=True))
    assert by_file.value("RR@10", "1") == 1.0
    assert parquet.read_run(p, trust_file_order=True).file_order["1"] == ["b", "a", "c"]
    no_rank = _pq(tmp_path / "n.parquet", topic_id=["1"], doc_id=["a"], score=[1.0])
    for read in (read_run_columns, parquet.read_run):
        with pytest.raises(InputFormatError, match="'rank' column"):
            read(no_rank, trust_file_order=True)


def test_a_repeated_document_keeps_its_best_score_as_in_a_trec_file(tmp_path, write):
    p = _pq(tmp_path / "d.parquet", topic_id=["1", "1", "1"], doc_id=["a", "b", "a"], score=[1.0, 2.0, 3.0])
    rf, tf = parquet.read_run(p), trec.read_run(write("d.trec", "1 Q0 a 1 1.0 d\n1 Q0 b 2 2.0 d\n1 Q0 a 3 3.0 d\n"))
    assert rf.run == tf.run and rf.duplicates == tf.duplicates == {"1": 1} and rf.n_lines == 3
    e = Evaluator({"1": {"a": 1}}, ["RR@10"]).evaluate(read_run_columns(p))
    assert e.value("RR@10", "1") == 1.0 and e.n_duplicates == 1


@pytest.mark.parametrize(
    "columns, row, fragment",
    [
        ({"topic_id": ["1"], "doc": ["a"], "score": [1.0]}, 0, "expected a column 'doc_id' or 'docno'"),
        ({"topic_id": ["1"], "doc_id": ["a"], "score": ["high"]}, 0, "'score' to hold numbers"),
        ({"topic_id": [1], "doc_id": ["a"], "score": [1.0]}, 0, "'topic_id' to hold string ids"),
        ({"topic_id": ["1", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]}, 2, "found NULL"),
        ({"topic_id": ["1", "1"], "doc_id": ["a", "b c"], "score": [1.0, 2.0]}, 2, "without whitespace"),
        ({"topic_id": ["1", "1"], "doc_id": ["a", "b\u00a0c"], "score": [1.0, 2.0]}, 2, "without whitespace"),
        ({"topic_id": ["1", "1"], "doc_id": ["a", ""], "score": [1.0, 2.0]}, 2, "non-empty id"),
        ({"topic_id": ["1", "1", "1"], "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, float("nan")]}, 3,
         "not a finite number"),
        ({"topic_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string()),
          "score": pa.array([], pa.float64())}, 0, "empty file"),
    ],
)
def test_run_errors_name_the_file_and_row_alike_in_both_readers(tmp_path, columns, row, fragment):
    p = _pq(tmp_path / "bad.parquet", **columns)
    messages = []
    for read in (read_run_columns, parquet.read_run):
        with pytest.raises(InputFormatError) as e:
            read(p)
        assert e.value.line == row and fragment in str(e.value) and str(p) in str(e.value)
        messages.append(str(e.value))
    assert messages[0] == messages[1]                      # the columnar check says what read_table says
    if row:
        assert f"row {row}:" in messages[0]


def test_not_parquet_or_missing(tmp_path, write):
    with pytest.raises(InputFormatError, match="found nothing"):
        read_run_columns(tmp_path / "none.parquet")          # not a file: the TREC reader says so
    fake = write("fake.parquet", b"PAR1 not really")
    for read in (parquet.read_run_arrow, parquet.read_run):
        with pytest.raises(InputFormatError, match="expected a Parquet file, found something else"):
            read(fake)


def test_scan_run_ids_counts_rows_from_one(tmp_path):
    p = _pq(tmp_path / "s.parquet", topic_id=["1", "2"], doc_id=["a", "b"], score=[1.0, 2.0])
    assert list(parquet.scan_run_ids(p)) == [(1, "1", "a"), (2, "2", "b")]


def test_write_table_is_atomic(tmp_path, monkeypatch):
    target = tmp_path / "out" / "r.parquet"
    parquet.write_table(target, pa.table({"x": [1, 2]}))
    assert pq.read_table(target).column("x").to_pylist() == [1, 2]

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", boom)
    with pytest.raises(OSError, match="disk full"):
        parquet.write_table(target, pa.table({"x": [3]}))
    assert pq.read_table(target).column("x").to_pylist() == [1, 2]          # the old file is intact
    assert sorted(p.name for p in target.parent.iterdir()) == ["r.parquet"]  # no temporary left
