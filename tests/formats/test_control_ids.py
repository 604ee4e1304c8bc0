"""Ids with control characters (and bidi/zero-width format characters) are refused at import, with file:line."""

from __future__ import annotations

import pytest

from workbench.errors import InputFormatError, ValidationError
from workbench.formats.judgments import read_judgments
from workbench.formats.trec import read_qrels, read_run, read_topics
from workbench.formats.units import read_chunk_map, read_groups
from workbench.text import check_name


def _refused(read, path):
    with pytest.raises(InputFormatError) as e:
        read(path)
    return str(e.value)


def test_column_files_refuse_a_control_character_naming_line_column_and_id(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text("1 0 d1 1\n1 0 x\x1b[2Jy 1\n")
    assert _refused(read_qrels, q) == (
        f"{q}:2: expected no control characters, found \\x1b in column 3 ('x\\x1b[2Jy'). Ids with them would act "
        "on the terminal and in every file they are written to; remove them.")
    g = tmp_path / "g.tsv"
    g.write_text("g1 d1\ng\x1b1 d2\n")
    assert _refused(read_groups, g).startswith(f"{g}:2: expected no control characters, found \\x1b in column 1 ")
    r = tmp_path / "r.trec"
    r.write_text("1 Q0 d1 1 2.0 tag\n1 Q0 d\u202e2 2 1.0 tag\n")  # a bidi override (Trojan Source)
    assert _refused(lambda p: read_run(p), r).startswith(f"{r}:2: expected no control characters, found \\u202e "
                                                        "in column 3 ('d\\u202e2')")
    c = tmp_path / "chunks.tsv"
    c.write_text("chunk_id doc_id start end\nc\x071 d1 0 10\n")
    assert ":2: expected no control characters, found \\x07 in column 1" in _refused(read_chunk_map, c)


def test_tabs_and_form_feeds_still_separate_columns(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text("1\t0\fd1\v1\r\n")
    assert read_qrels(q) == {"1": {"d1": 1}}


def test_csv_and_jsonl_ids_and_topic_files_refuse_them_too(tmp_path):
    f = tmp_path / "j.csv"
    f.write_text("topic_id,doc_id,grade\n1,d1,1\n1,\"d\x9b2\",1\n")  # a C1 CSI
    assert _refused(lambda p: read_judgments(p, "csv"), f) == (
        f"{f}:3: expected a doc id without control characters, found 'd\\x9b2' (\\x9b at position 2). They would "
        "act on the terminal and in every file the id is written to; remove them.")
    t = tmp_path / "topics.tsv"
    t.write_text("1\twing lift\n2\x00\tdrag\n")
    assert ":2:" in _refused(read_topics, t)


def test_names_share_the_rule():
    with pytest.raises(ValidationError, match=r"found \\u2066 at position 3"):
        check_name("qrels version name", "ab\u2066c")
    assert check_name("run name", "emoji\u200dok") == "emoji\u200dok"  # a zero-width joiner is kept
