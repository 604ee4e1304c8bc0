"""Metadata side files (CSV, TSV, JSONL, Parquet), BEIR metadata, TREC topic tags and Cranfield .B fields."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from workbench.errors import InputFormatError
from workbench.formats.beir import read_corpus_with_metadata, read_queries_with_metadata
from workbench.formats.metadata import find_side_file, read_metadata_file, write_metadata_jsonl
from workbench.formats.smart import bib_fields, read_cranfield_documents
from workbench.formats.trec import read_topics, read_topics_with_metadata

RAW = Path(__file__).resolve().parents[3] / "shared" / "data" / "cranfield"
if not RAW.is_dir():  # worktrees live one level deeper than the main checkout
    RAW = Path("/work/shared/data/cranfield")


def _error(path, id_column="doc_id") -> str:
    with pytest.raises(InputFormatError) as e:
        read_metadata_file(path, id_column)
    return str(e.value)


def test_csv_cells_are_typed_per_column_and_empty_cells_are_absent(write):
    p = write("doc_metadata.csv", 'doc_id,year,source,published,zip\n1,1958,"naca tn, 1958",1958-01-02,007\n2,,arc r & m,,12\n')
    assert read_metadata_file(p, "doc_id") == {
        "1": {"year": 1958, "source": "naca tn, 1958", "published": date(1958, 1, 2), "zip": "007"},
        "2": {"source": "arc r & m", "zip": "12"},
    }


def test_tsv_has_no_quoting(write):
    p = write("m.tsv", 'topic_id\tfilter\tpriority\n1\tsource in ["naca tn"]\tcritical\n')
    assert read_metadata_file(p, "topic_id") == {"1": {"filter": 'source in ["naca tn"]', "priority": "critical"}}


def test_jsonl_values_keep_json_types(write):
    p = write("m.jsonl", '{"doc_id": "1", "year": 1958, "d": "1958-01-02", "ok": true, "x": null}\n\n{"doc_id": "2"}\n')
    assert read_metadata_file(p, "doc_id") == {"1": {"year": 1958, "d": date(1958, 1, 2), "ok": True}, "2": {}}


def test_parquet_is_read_through_the_shared_parquet_reader_with_column_types(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "doc_metadata.parquet"
    pq.write_table(pa.table({"doc_id": ["1", "2"], "year": [1958, None], "d": [date(1958, 1, 2), None],
                             "source": ["naca tn", "1958-01-02"], "w": [0.5, 2.0], "ok": [True, False]}), p)
    assert read_metadata_file(p, "doc_id") == {
        "1": {"year": 1958, "d": date(1958, 1, 2), "source": "naca tn", "w": 0.5, "ok": True},
        "2": {"source": "1958-01-02", "w": 2.0, "ok": False},  # a Parquet string stays a string
    }


def test_parquet_numeric_ids_and_timestamps_are_refused(tmp_path):
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "a.parquet"
    pq.write_table(pa.table({"doc_id": [1, 2]}), p)
    assert "expected column 'doc_id' to hold string ids, found type BIGINT" in _error(p)  # formats.parquet's rule
    q = tmp_path / "b.parquet"
    pq.write_table(pa.table({"doc_id": ["1"], "t": [dt.datetime(2020, 1, 1, 5)]}), q)
    assert "row 1, column 't': expected a string, number, boolean or DATE column" in _error(q)


@pytest.mark.parametrize("name, text, message", [
    ("a.csv", "id,year\n1,2\n", "a.csv:1: expected a 'doc_id' column, found columns ['id', 'year']"),
    ("a.csv", "doc_id,year\n1,2\n1,3\n", "a.csv:3: expected each doc_id once, found '1' again (first on line 2)"),
    ("a.csv", "doc_id,year\n1,2,3\n", "a.csv:2: expected 2 cells (as the header on line 1), found 3"),
    ("a.csv", "doc_id,9year\n1,2\n", "a.csv:1: column '9year': expected a metadata key"),
    ("a.csv", "doc_id,year\n,2\n", "a.csv:2: expected a non-empty doc_id without whitespace"),
    ("a.csv", "doc_id,year\n", "a.csv: expected at least one row after the header"),
    ("a.jsonl", '{"doc_id": "1", "authors": ["a", "b"]}\n', "a.jsonl:1: key 'authors': expected a string, number, boolean or null, found an array"),
    ("a.jsonl", '{"doc_id": 7}\n', "a.jsonl:1: expected 'doc_id' to be a string, found 7. Quote the id."),
    ("a.jsonl", '{"id": "7"}\n', "a.jsonl:1: expected a 'doc_id' field"),
    ("a.jsonl", '{"doc_id": "1"}\n\n{"doc_id": \n', "a.jsonl:3: expected a JSON object, found invalid JSON"),
    ("a.jsonl", '["doc_id"]\n', "a.jsonl:1: expected a JSON object, found a JSON list"),
    ("a.xlsx", "x", "a.xlsx: expected a metadata file ending in .jsonl, .csv, .tsv, .parquet"),
])
def test_side_file_errors_name_file_line_and_problem(write, name, text, message):
    p = write(name, text)
    assert _error(p).startswith(f"{p.parent}/{message}")


def test_two_side_files_for_one_stem_are_refused(write, tmp_path):
    write("doc_metadata.csv", "doc_id,a\n1,2\n")
    write("doc_metadata.jsonl", '{"doc_id": "1"}\n')
    with pytest.raises(InputFormatError, match="expected one doc_metadata file, found doc_metadata.jsonl, doc_metadata.csv"):
        find_side_file(tmp_path, "doc_metadata")


def test_written_jsonl_reads_back(tmp_path):
    rows = [("1", {"year": 1958, "source": "j.ae.scs"}), ("2", {}), ("3", {"d": date(1958, 1, 2), "w": 2.5})]
    p = tmp_path / "doc_metadata.jsonl"
    assert write_metadata_jsonl(p, rows, "doc_id") == 3
    assert p.read_text().splitlines()[0] == '{"doc_id": "1", "year": 1958, "source": "j.ae.scs"}'
    assert read_metadata_file(p, "doc_id") == {i: m for i, m in rows}


def test_beir_metadata_keeps_scalars_and_counts_what_it_skips(write):
    p = write("corpus.jsonl", '{"_id": "d1", "text": "x", "metadata": {"year": 2019, "authors": ["a"], "bad key": 1}}\n'
                              '{"_id": "d2", "text": "y"}\n')
    docs, meta, skipped = read_corpus_with_metadata(p)
    assert [d.doc_id for d in docs] == ["d1", "d2"]
    assert meta == {"d1": {"year": 2019}}
    assert dict(skipped) == {"authors": 1, "bad key": 1}
    q = write("queries.jsonl", '{"_id": "1", "text": "t", "metadata": {"narrative": "n", "priority": "critical"}}\n')
    topics, tmeta, _ = read_queries_with_metadata(q)
    assert topics[0].narrative == "n" and tmeta == {"1": {"priority": "critical"}}


def test_trec_topic_tags_with_closing_tag_are_metadata(write):
    p = write("topics.txt", "<top>\n<num> Number: 401\n<title> foreign minorities\n<priority>critical</priority>\n"
                            "<filter>year &lt;= 1956</filter>\n<desc> Description:\nWhat language?\n</top>\n"
                            "<top>\n<num> 402\n<title> genetics\n<weight>2</weight>\n</top>\n")
    topics, meta = read_topics_with_metadata(p)
    assert [(t.topic_id, t.title, t.description) for t in topics] == [
        ("401", "foreign minorities", "What language?"), ("402", "genetics", "")]
    assert meta == {"401": {"priority": "critical", "filter": "year <= 1956"}, "402": {"weight": 2}}
    assert read_topics(p) == topics  # the tags never leak into the topic text


@pytest.mark.parametrize("bib, year, source", [
    ("j. ae. scs. 25, 1958, 324.", 1958, "j.ae.scs"),
    ("j.ae.scs. 1959, 360.", 1959, "j.ae.scs"),
    ("j. ae. scs.1962.", 1962, "j.ae.scs"),
    ("naca tn.1024, 1946.", 1946, "naca tn"),
    ("naca tn.1961.", None, "naca tn"),  # a report number, not a year
    ("arc r + m.1991, 1941.", 1941, "arc r & m"),
    ("arc cp.1913, 1953.", 1953, "arc cp"),
    ("nasa tn.d1494, 1962.", 1962, "nasa tn"),
    ("j. aero. sc. v. 20, february 1953 .", 1953, "j.aero.sc"),
    ("j. app. phys., 23, 1852, 1390.", None, "j.app.phys"),  # 1852 is outside 1900-1969
    ("david taylor model basin, washington, d. c.", None, "david taylor model basin"),
    ("6th a.a.aero.conf. 1957.", 1957, ""),
    ("", None, ""),
])
def test_cranfield_bib_fields(bib, year, source):
    assert bib_fields(bib) == (year, source)


@pytest.mark.skipif(not RAW.is_dir(), reason="raw Cranfield files not present")
def test_cranfield_year_and_source_counts():
    docs = read_cranfield_documents(RAW / "cran.all.1400")
    derived = [d.derived() for d in docs]
    years = [m["year"] for m in derived if "year" in m]
    assert (len(docs), len(years), min(years), max(years)) == (1400, 1198, 1922, 1963)
    assert sum(1 for m in derived if "source" in m) == 1321
    assert docs[0].metadata() == {"author": "brenckman,m.", "bib": "j. ae. scs. 25, 1958, 324.",
                                  "year": 1958, "source": "j.ae.scs"}
    assert docs[9].derived() == {"year": 1948, "source": "j.ae.scs"}  # "j. ae. scs. 15, 1948, 735."
    assert docs[-1].doc_id == "1400"
