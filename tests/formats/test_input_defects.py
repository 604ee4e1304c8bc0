"""Regression tests for input-handling defects found by QA (grades, ids, topics, surrogates)."""

from __future__ import annotations

import pytest

from workbench.errors import InputFormatError
from workbench.formats.beir import read_corpus, read_qrels_tsv, read_queries
from workbench.formats.trec import read_qrels, read_topics, shown_id, write_qrels, write_run


def _error(reader, path) -> str:
    with pytest.raises(InputFormatError) as e:
        reader(path)
    return str(e.value)


# -- 1. grades outside the store's 32-bit INTEGER column -----------------------------


@pytest.mark.parametrize("grade", ["3000000000", "2147483648", "-2147483649", "-99999999999999999999"])
def test_trec_qrels_grade_out_of_range(write, grade):
    p = write("q.txt", f"1 0 d1 1\n1 0 12 {grade}\n")
    assert _error(read_qrels, p) == (
        f"{p}:2: grade '{grade}' is out of range (-2147483648..2147483647); write a grade of the rubric such as 0, 1, 2."
    )


def test_trec_qrels_grade_limits_are_accepted(write):
    p = write("q.txt", "1 0 d1 2147483647\n1 0 d2 -2147483648\n")
    assert read_qrels(p) == {"1": {"d1": 2**31 - 1, "d2": -(2**31)}}


def test_beir_qrels_grade_out_of_range(write):
    p = write("t.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t3000000000\n")
    assert _error(read_qrels_tsv, p).startswith(f"{p}:2: grade '3000000000' is out of range (-2147483648..2147483647)")


# -- 2. ids with whitespace ---------------------------------------------------------------


@pytest.mark.parametrize("doc_id", ["d 9", "d\t9", " ", ""])
def test_corpus_id_with_whitespace_is_refused(write, doc_id):
    import json

    p = write("corpus.jsonl", '{"_id": "d1", "text": "a"}\n' + json.dumps({"_id": doc_id, "text": "b"}) + "\n")
    assert _error(read_corpus, p) == (
        f"{p}:2: expected a non-empty '_id' without whitespace, found {doc_id!r}. "
        "TREC formats cannot carry ids with spaces or tabs; replace them (e.g. by '_')."
    )


def test_query_id_with_whitespace_is_refused(write):
    p = write("queries.jsonl", '{"_id": "q 1", "text": "a"}\n')
    assert _error(read_queries, p).startswith(f"{p}:1: expected a non-empty '_id' without whitespace, found 'q 1'.")


def test_topic_tsv_and_trec_ids_with_whitespace_are_refused(write):
    p = write("topics.tsv", "1\tok\n2 b\tquery\n")
    assert _error(read_topics, p).startswith(f"{p}:2: expected a non-empty topic id without whitespace, found '2 b'.")
    p = write("topics.txt", "<top>\n<num> Number: 40 1\n<title> x\n</top>\n")
    assert _error(read_topics, p).startswith(f"{p}:1: expected a non-empty topic id without whitespace, found '40 1'.")


def test_writers_refuse_ids_with_whitespace(tmp_path):
    with pytest.raises(ValueError, match="doc id 'd 9' is empty or contains whitespace"):
        write_run(tmp_path / "r.trec", {"1": {"d 9": 1.0}}, "t")
    with pytest.raises(ValueError, match="doc id 'd\\\\t9' is empty or contains whitespace"):
        write_qrels(tmp_path / "q.txt", {"1": {"d\t9": 1}})
    assert not (tmp_path / "r.trec").exists() and not (tmp_path / "q.txt").exists()


# -- 3. unclosed <top> blocks ----------------------------------------------------------------

_BLOCK = "<top>\n<num> Number: {n}\n<title> t{n}\n</top>\n"


def test_unclosed_top_block_in_the_middle(write):
    text = _BLOCK.format(n=1) + "<top>\n<num> Number: 2\n<title> t2\n" + _BLOCK.format(n=3)
    p = write("topics.txt", text)
    # block 2 opens on line 5; block 3 opens on line 8
    assert _error(read_topics, p) == (
        f"{p}:5: `<top>` opened at line 5 is not closed before line 8. Add '</top>' at the end of the block."
    )


def test_single_unclosed_top_block(write):
    p = write("topics.txt", "<top>\n<num> Number: 1\n<title> t1\n")
    # text "…t1\n" has 3 newlines: the end of the file is line 4
    assert _error(read_topics, p) == (
        f"{p}:1: `<top>` opened at line 1 is not closed before line 4 (the end of the file). "
        "Add '</top>' at the end of the block."
    )


def test_stray_close_tag(write):
    p = write("topics.txt", _BLOCK.format(n=1) + "</top>\n")
    assert _error(read_topics, p).startswith(f"{p}:5: expected '<top>' before this '</top>', found none.")


def test_closed_blocks_still_read(write):
    p = write("topics.txt", _BLOCK.format(n=1) + _BLOCK.format(n=2) + _BLOCK.format(n=3))
    assert [t.topic_id for t in read_topics(p)] == ["1", "2", "3"]


# -- 5. lone surrogates in JSON -------------------------------------------------------------


def test_lone_surrogate_in_corpus_text(write):
    p = write("corpus.jsonl", '{"_id": "d0", "text": "ok"}\n{"_id":"d1","text":"ab\\ud800"}\n')
    assert _error(read_corpus, p) == (
        f"{p}:2: expected 'text' to be valid Unicode text, found a lone surrogate \\ud800 at character 3. "
        "Fix the escape (surrogates must come in pairs) or remove it."
    )


def test_paired_surrogates_are_fine(write):
    p = write("corpus.jsonl", '{"_id":"d1","text":"\\ud83d\\ude00"}\n')
    assert read_corpus(p)[0].text == "\U0001f600"


# -- 9. long ids are cut in messages ------------------------------------------------------------


def test_shown_id_cuts_long_ids():
    long = "x" * 2_000_000
    assert shown_id(long) == repr("x" * 60) + "\u2026 (2000000 characters)"
    assert shown_id("d1") == "'d1'"


def test_writer_error_is_a_workbench_error(tmp_path):
    from workbench.errors import WorkbenchError

    with pytest.raises(WorkbenchError, match="topic id 'a b' is empty or contains whitespace"):
        write_qrels(tmp_path / "q.txt", {"a b": {"d1": 1}})


def test_long_ids_are_cut_in_reader_messages(write):
    long = "y" * 100_000
    p = write("q.txt", f"1 0 {long} 1\n1 0 {long} 2\n")
    msg = _error(read_qrels, p)
    assert f"document {'y' * 60!r}\u2026 (100000 characters)" in msg and len(msg) < 500
    p = write("corpus.jsonl", f'{{"_id": "{long}", "text": "a"}}\n{{"_id": "{long}", "text": "b"}}\n')
    msg = _error(read_corpus, p)
    assert msg.startswith(f"{p}:2: expected each _id once, found {'y' * 60!r}\u2026 (100000 characters) again")
