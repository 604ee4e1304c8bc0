"""Strict TREC run/qrels/topic parsing: every malformed case has its exact message."""

from __future__ import annotations

import pytest

from workbench.errors import InputFormatError
from workbench.formats.trec import (
    read_qrels,
    read_run,
    read_topics,
    scan_ids,
    write_qrels,
    write_run,
)
from workbench.types import Topic

RUN = "1 Q0 d1 1 3.5 bm25\n1 Q0 d2 2 2.0 bm25\n2 Q0 d9 1 -1e-3 bm25\n"
QRELS = "1 0 d1 2\n1 0 d2 0\n2 0 d9 -1\n"


def _error(path, reader=read_run) -> str:
    with pytest.raises(InputFormatError) as e:
        reader(path)
    return str(e.value)


# -- runs ------------------------------------------------------------------------


def test_run_is_read_into_topic_doc_score(write):
    rf = read_run(write("r.trec", RUN))
    assert rf.run == {"1": {"d1": 3.5, "d2": 2.0}, "2": {"d9": -0.001}}
    assert (rf.tag, rf.n_lines, rf.duplicates) == ("bm25", 3, {})
    assert rf.file_order == {"1": ["d1", "d2"], "2": ["d9"]}


def test_run_wrong_column_count(write):
    p = write("r.trec", "1 Q0 d1 1 3.5 bm25\n1 Q0 d2 2 2.0\n")
    assert _error(p) == (
        f"{p}:2: expected 6 columns (topic Q0 doc rank score tag), found 5. "
        "Write one result per line, columns separated by spaces or tabs."
    )


def test_run_non_numeric_score(write):
    p = write("r.trec", "1 Q0 d1 1 high bm25\n")
    assert _error(p) == (
        f"{p}:1: expected a numeric score in column 5, found 'high'. "
        "Write the score as a decimal number such as 12.5."
    )


@pytest.mark.parametrize("bad", ["nan", "NaN", "inf", "-Infinity", "1e999"])
def test_run_non_finite_score(write, bad):
    p = write("r.trec", f"1 Q0 d1 1 2 bm25\n1 Q0 d2 2 {bad} bm25\n")
    assert _error(p) == f"{p}:2: score '{bad}' is not a finite number; remove the line or re-export the run."


def test_run_non_integer_rank(write):
    p = write("r.trec", "1 Q0 d1 1.5 2 bm25\n")
    assert _error(p) == f"{p}:1: expected an integer rank in column 4, found '1.5'. Write the rank as a whole number."


def test_run_second_tag_is_refused(write):
    p = write("r.trec", "1 Q0 d1 1 2 a\n1 Q0 d2 2 1 b\n")
    assert _error(p) == (
        f"{p}:2: expected run tag 'a' (as on line 1), found 'b'. A run file holds one run; split the file by tag."
    )


@pytest.mark.parametrize("text", ["", "\n\n  \n", "\ufeff"])
def test_run_empty_file(write, text):
    p = write("r.trec", text)
    assert _error(p) == f"{p}: expected at least one run line, found an empty file. Check that the right file was given."


def test_run_missing_file(tmp_path):
    p = tmp_path / "nope.trec"
    assert _error(p) == f"{p}: expected a file, found nothing at this path. Check the path."


def test_run_non_utf8_bytes_name_the_line(write):
    p = write("r.trec", b"1 Q0 d1 1 2 bm25\n1 Q0 d\xff2 2 1 bm25\n")
    assert _error(p) == f"{p}:2: expected UTF-8 text, found byte 0xff at column 7. Re-save the file as UTF-8."


def test_run_bom_crlf_mixed_whitespace_and_blank_lines_are_normalised(write):
    raw = "\ufeff1 Q0\td1  1\t \t3.5 bm25\r\n\r\n  1\tQ0 d2 2 2.0 bm25  \r\n"
    rf = read_run(write("r.trec", raw.encode("utf-8")))
    assert rf.run == {"1": {"d1": 3.5, "d2": 2.0}}
    assert rf.n_lines == 2


def test_line_numbers_count_blank_lines_and_crlf(write):
    p = write("r.trec", b"1 Q0 d1 1 2 bm25\r\n\r\n1 Q0 d2 2 x bm25\r\n")
    assert _error(p).startswith(f"{p}:3: expected a numeric score")


def test_run_duplicate_doc_keeps_highest_score_and_is_counted(write):
    rf = read_run(write("r.trec", "1 Q0 d1 1 1.0 t\n1 Q0 d2 2 0.5 t\n1 Q0 d1 3 4.0 t\n"))
    assert rf.run == {"1": {"d1": 4.0, "d2": 0.5}}
    assert rf.duplicates == {"1": 1}
    # file order by rank column; the duplicate keeps its best-ranked occurrence (rank 1)
    assert rf.file_order == {"1": ["d1", "d2"]}


def test_trust_file_order_replaces_scores_by_rank_order(write):
    # the rank column disagrees with the scores: d2 is ranked first by the file
    rf = read_run(write("r.trec", "1 Q0 d1 2 9.0 t\n1 Q0 d2 1 1.0 t\n1 Q0 d3 3 5.0 t\n"), trust_file_order=True)
    assert rf.file_order["1"] == ["d2", "d1", "d3"]
    assert rf.run == {"1": {"d2": 3.0, "d1": 2.0, "d3": 1.0}}


def test_write_run_ranks_by_score_then_doc_id_desc_and_reads_back(tmp_path):
    run = {"10": {"a": 1.0, "b": 1.0, "c": 2.5}, "2": {"x": 0.1}}
    p = tmp_path / "out" / "r.trec"
    write_run(p, run, "sys")
    assert p.read_text().splitlines() == [
        "2 Q0 x 1 0.1 sys",
        "10 Q0 c 1 2.5 sys",
        "10 Q0 b 2 1.0 sys",  # tie on 1.0 broken by doc_id descending (trec_eval)
        "10 Q0 a 3 1.0 sys",
    ]
    assert read_run(p).run == run


def test_write_run_refuses_whitespace_in_ids(tmp_path):
    with pytest.raises(ValueError, match="contains whitespace"):
        write_run(tmp_path / "r.trec", {"1": {"a b": 1.0}}, "t")
    assert not (tmp_path / "r.trec").exists()


# -- qrels -----------------------------------------------------------------------------


def test_qrels_are_read_with_negative_grades(write):
    assert read_qrels(write("q.txt", QRELS)) == {"1": {"d1": 2, "d2": 0}, "2": {"d9": -1}}


def test_qrels_wrong_column_count(write):
    p = write("q.txt", "1 0 d1 2\n1 d2 1\n")
    assert _error(p, read_qrels) == (
        f"{p}:2: expected 4 columns (topic iter doc grade), found 3. "
        "Write one judgment per line, columns separated by spaces or tabs."
    )


@pytest.mark.parametrize("bad", ["1.5", "high", "nan"])
def test_qrels_non_integer_grade(write, bad):
    p = write("q.txt", f"1 0 d1 {bad}\n")
    assert _error(p, read_qrels) == (
        f"{p}:1: expected an integer grade in column 4, found '{bad}'. Write grades as whole numbers such as 0, 1, 2."
    )


def test_qrels_empty_file(write):
    p = write("q.txt", "")
    assert _error(p, read_qrels) == (
        f"{p}: expected at least one qrels line, found an empty file. Check that the right file was given."
    )


def test_qrels_conflicting_grades_are_refused_identical_repeat_accepted(write):
    assert read_qrels(write("ok.txt", "1 0 d1 2\n1 0 d1 2\n")) == {"1": {"d1": 2}}
    p = write("q.txt", "1 0 d1 2\n1 0 d2 1\n1 0 d1 0\n")
    assert _error(p, read_qrels) == (
        f"{p}:3: expected one grade for topic '1' and document 'd1', found 0 here and 2 on line 1. "
        "Keep one of the two lines."
    )


def test_qrels_bom_crlf_tabs_are_normalised(write):
    p = write("q.txt", "\ufeff1\t0\td1\t2\r\n1 0  d2\t 0\r\n".encode())
    assert read_qrels(p) == {"1": {"d1": 2, "d2": 0}}


def test_write_qrels_is_deterministic_and_round_trips(tmp_path):
    qrels = {"10": {"d2": 1, "d10": 0}, "9": {"b": 3}}
    p = tmp_path / "q.txt"
    write_qrels(p, qrels)
    assert p.read_text() == "9 0 b 3\n10 0 d10 0\n10 0 d2 1\n"
    assert read_qrels(p) == qrels


def test_scan_ids_gives_line_numbers(write):
    p = write("q.txt", "1 0 d1 2\n\n2 0 d9 1\n")
    assert list(scan_ids(p, "qrels")) == [(1, "1", "d1"), (3, "2", "d9")]


# -- topics ----------------------------------------------------------------------------

TREC_TOPICS = """<top>
<num> Number: 401
<title> foreign minorities, Germany

<desc> Description:
What language and cultural differences
impede the integration of foreign minorities in Germany?

<narr> Narrative:
A relevant document will focus on the causes.
</top>

<top>
<num> Number: 402 </num>
<title> behavioral genetics </title>
<desc> Description: What is known? </desc>
</top>
"""


def test_trec_topic_file(write):
    topics = read_topics(write("topics.txt", TREC_TOPICS))
    assert topics == [
        Topic(
            "401",
            "foreign minorities, Germany",
            "What language and cultural differences impede the integration of foreign minorities in Germany?",
            "A relevant document will focus on the causes.",
        ),
        Topic("402", "behavioral genetics", "What is known?", ""),
    ]


def test_trec_topic_without_num(write):
    p = write("topics.txt", "\n<top>\n<title> x\n</top>\n")
    assert _error(p, read_topics) == f"{p}:2: expected '<num> Number: N' in this <top> block, found none. Add the topic number."


def test_tsv_topics(write):
    p = write("topics.tsv", "1\twhat is  lift\n007\tdrag\tat mach 2\n")
    assert read_topics(p) == [Topic("1", "what is lift"), Topic("007", "drag at mach 2")]


def test_tsv_topic_without_tab(write):
    p = write("topics.tsv", "1\tok\n2 no tab here\n")
    assert _error(p, read_topics) == (
        f"{p}:2: expected 2 columns separated by a tab (topic_id<TAB>query), found no tab. "
        "Separate the id from the query with a tab."
    )


def test_repeated_topic_id(write):
    p = write("topics.tsv", "1\ta\n1\tb\n")
    assert _error(p, read_topics) == (
        f"{p}:2: expected each topic id once, found '1' again (first on line 1). Remove or renumber one of them."
    )
