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


@pytest.mark.parametrize("bad", ["\x1b", "\x00", "\x7f", "\x9b", "\u202e", "\ufeff"])
def test_scoring_a_file_refuses_what_importing_it_refuses(tmp_path, bad):
    # Regression (issue 9): the small-file reader and the Parquet readers kept control characters in
    # ids, so `workbench score FILE` accepted a file that `run import` refuses with file:line.
    import pyarrow as pa

    from workbench.formats import parquet, plain_run
    from workbench.services.evaluation.pipeline import score
    from workbench.services.evaluation.request import Output, ScoreRequest

    run, qrels = tmp_path / "run.txt", tmp_path / "q.txt"
    run.write_text(f"1 Q0 d1 1 2.0 r\n1 Q0 d{bad}2 2 1.0 r\n", encoding="utf-8")
    qrels.write_text(f"1 0 d1 1\n1 0 d{bad}3 1\n", encoding="utf-8")
    clean_run, clean_qrels = tmp_path / "ok.txt", tmp_path / "okq.txt"
    clean_run.write_text("1 Q0 d1 1 2.0 r\n1 Q0 é2 2 1.0 r\n", encoding="utf-8")
    clean_qrels.write_text("1 0 d1 1\n1 0 é2 0\n", encoding="utf-8")
    assert plain_run.read_small_run(run) is None and plain_run.read_small_qrels(qrels) is None
    assert plain_run.read_small_run(clean_run) is not None and plain_run.read_small_qrels(clean_qrels) is not None
    shown = "\\ufeff" if bad == "\ufeff" else ascii(bad)[1:-1]
    with pytest.raises(InputFormatError, match=rf"run.txt:2: expected no control characters, found \{shown}"):
        score(ScoreRequest((str(run),), str(clean_qrels), missing="zero", output=Output(record=False)))
    with pytest.raises(InputFormatError, match=rf"q.txt:2: expected no control characters, found \{shown}"):
        score(ScoreRequest((str(clean_run),), str(qrels), missing="zero", output=Output(record=False)))

    prun, pq = tmp_path / "run.parquet", tmp_path / "q.parquet"
    parquet.write_table(prun, pa.table({"topic_id": ["1", "1"], "doc_id": ["d1", f"d{bad}2"], "score": [2.0, 1.0]}))
    parquet.write_table(pq, pa.table({"topic_id": ["1", f"{bad}1"], "doc_id": ["d1", "d2"], "grade": [1, 1]}))
    for read in (parquet.read_run_arrow, parquet.read_run):
        message = _refused(read, prun)
        assert message.startswith(f"{prun}: row 2: expected an id without control characters in column 'doc_id', "
                                  f"found 'd{shown}2' ({shown} at position 2)"), message
    assert _refused(parquet.read_qrels, pq).startswith(
        f"{pq}: row 2: expected an id without control characters in column 'topic_id', found '{shown}1'")


def test_the_parquet_sql_id_rule_is_the_python_rule():
    # read_run_arrow and the run import check ids in DuckDB (RE2): the class must refuse exactly
    # what _check_values refuses (whitespace or text.UNSAFE), code point by code point.
    import duckdb

    from workbench.formats.parquet import BAD_ID_RE2
    from workbench.text import UNSAFE

    chars = [chr(c) for c in [*range(1, 0x3100), 0xFEFF, 0xFFFD, 0x1F600] if not 0xD800 <= c <= 0xDFFF]
    con = duckdb.connect()
    got = [r[1] for r in con.execute(
        "SELECT i, regexp_matches(c, ?) FROM (SELECT unnest(?) AS c, generate_subscripts(?, 1) AS i) ORDER BY i",
        [BAD_ID_RE2, chars, chars]).fetchall()]
    want = [bool(UNSAFE.search(c)) or c.isspace() for c in chars]
    assert [c for c, g, w in zip(chars, got, want, strict=True) if g != w] == []
    assert sum(want) > 60
