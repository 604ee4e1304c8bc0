"""BEIR corpus/queries/qrels readers: strict, errors with file:line."""

from __future__ import annotations

import pytest

from workbench.errors import InputFormatError
from workbench.formats.beir import (
    read_corpus,
    read_qrels_tsv,
    read_queries,
    write_corpus,
    write_queries,
)
from workbench.types import Document, Topic


def _error(reader, path) -> str:
    with pytest.raises(InputFormatError) as e:
        reader(path)
    return str(e.value)


def test_corpus_title_optional_and_extra_keys_ignored(write):
    p = write("corpus.jsonl", '{"_id": "d1", "title": "T", "text": "x"}\n\n{"_id": "d2", "text": "y", "metadata": {"a": 1}}\n')
    assert read_corpus(p) == [Document("d1", "T", "x"), Document("d2", "", "y")]


def test_corpus_invalid_json(write):
    p = write("corpus.jsonl", '{"_id": "d1", "text": "x"}\n{"_id": "d2", "text": }\n')
    assert _error(read_corpus, p) == (
        f"{p}:2: expected a JSON object, found invalid JSON (Expecting value at column 23). Fix or remove the line."
    )


def test_corpus_numeric_id_is_refused(write):
    p = write("corpus.jsonl", '{"_id": 7, "text": "x"}\n')
    assert _error(read_corpus, p) == f"{p}:1: expected '_id' to be a string, found 7 (int). Quote the id."


def test_corpus_missing_text_and_repeated_id(write):
    p = write("corpus.jsonl", '{"_id": "d1", "title": "t"}\n')
    assert _error(read_corpus, p) == f"{p}:1: expected a 'text' field, found keys ['_id', 'title']. Add the field."
    p = write("c2.jsonl", '{"_id": "d1", "text": "x"}\n{"_id": "d1", "text": "y"}\n')
    assert _error(read_corpus, p) == f"{p}:2: expected each _id once, found 'd1' again (first on line 1). Remove the repeat."


def test_corpus_empty_and_bom_crlf(write):
    p = write("corpus.jsonl", "\n")
    assert _error(read_corpus, p) == (
        f"{p}: expected at least one document line, found an empty file. Check that the right file was given."
    )
    p = write("c.jsonl", '\ufeff{"_id": "d1", "text": "x"}\r\n'.encode())
    assert read_corpus(p) == [Document("d1", "", "x")]


def test_queries_metadata_becomes_description_and_narrative(write):
    p = write("queries.jsonl", '{"_id": "1", "text": "lift", "metadata": {"description": "D", "narrative": "N", "x": 1}}\n')
    assert read_queries(p) == [Topic("1", "lift", "D", "N")]


def test_qrels_tsv_header_required(write):
    p = write("test.tsv", "1\td1\t1\n")
    assert _error(read_qrels_tsv, p) == (
        f"{p}:1: expected the header 'query-id<TAB>corpus-id<TAB>score', found '1 d1 1'. "
        "Add the header line (BEIR qrels files start with it)."
    )


def test_qrels_tsv_reads_grades_and_rejects_bad_rows(write):
    p = write("test.tsv", "query-id\tcorpus-id\tscore\n1\td1\t2\n1\td2\t0\n")
    assert read_qrels_tsv(p) == {"1": {"d1": 2, "d2": 0}}
    p = write("bad.tsv", "query-id\tcorpus-id\tscore\n1\td1\t0.5\n")
    assert _error(read_qrels_tsv, p) == (
        f"{p}:2: expected an integer score in column 3, found '0.5'. Write grades as whole numbers such as 0, 1, 2."
    )
    p = write("cols.tsv", "query-id\tcorpus-id\tscore\n1\td1\n")
    assert _error(read_qrels_tsv, p) == f"{p}:2: expected 3 columns (query-id corpus-id score), found 2. Write one judgment per line."
    p = write("empty.tsv", "query-id\tcorpus-id\tscore\n")
    assert "found an empty file" in _error(read_qrels_tsv, p)


def test_writers_round_trip(tmp_path):
    docs = [Document("d1", "T", "x é"), Document("d2", "", "y")]
    topics = [Topic("1", "q", "desc", ""), Topic("2", "r")]
    write_corpus(tmp_path / "c.jsonl", docs, {"d1": {"author": "a"}})
    write_queries(tmp_path / "q.jsonl", topics, {"2": {"smart_id": "002"}})
    assert read_corpus(tmp_path / "c.jsonl") == docs
    assert read_queries(tmp_path / "q.jsonl") == topics
    assert (tmp_path / "q.jsonl").read_text().splitlines()[1] == '{"_id": "2", "text": "r", "metadata": {"smart_id": "002"}}'
