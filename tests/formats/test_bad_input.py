"""Bad input found by the breaker's trial (issue 26), at the readers: deep nesting, 10 MB values echoed whole,
repeated JSON keys, numbers too long for ``int()``.

Each reader refuses with an ``InputFormatError`` (never a ``RecursionError`` or ``ValueError`` traceback) whose
message names the file and line and stays short: every value it quotes is cut to ``SHOWN_MAX`` characters
with "… (N characters)", as ids always were.
"""

from __future__ import annotations

import json

import pytest

from workbench.errors import SHOWN_MAX, InputFormatError, ValidationError, shown, shown_list
from workbench.formats import beir, judgments, metadata, rubric_toml, smart, status, trec
from workbench.ranking import display_key, natural_key
from workbench.scoring import gate_policy
from workbench.scoring.filters import FilterSyntaxError, parse_filter
from workbench.text import NESTING_MAX, clip, too_deep

BIG = "x" * 10_000_000
"""A 10 MB value."""
CUT = repr("x" * SHOWN_MAX) + "\u2026 (10000000 characters)"
"""How a message quotes it."""
SHORT = 1_000
"""The longest message these tests accept."""


def _error(read, *args) -> str:
    with pytest.raises(InputFormatError) as e:
        read(*args)
    msg = str(e.value)
    assert len(msg) < SHORT, msg[:300]
    return msg


# -- 1. nesting ------------------------------------------------------------------------------------------------


def test_a_filter_of_5000_parentheses_is_refused_at_the_101st_with_the_limit():
    text = "(" * 5000 + "year <= 1956" + ")" * 5000
    with pytest.raises(FilterSyntaxError) as e:
        parse_filter(text)
    msg = str(e.value)
    assert e.value.column == NESTING_MAX + 1 == 101
    assert msg.startswith(f"filter {'(' * 100!r}\u2026 (10012 characters): column 101: expected parentheses and "
                          "'not's nested at most 100 deep, found deeper nesting here.")
    assert len(msg) < SHORT and msg.endswith("^")
    caret_line, text_line = msg.splitlines()[-1], msg.splitlines()[-2]
    assert text_line[len(caret_line) - 1] == "("  # the caret is under a parenthesis of the excerpt


def test_nesting_up_to_the_limit_is_read_and_one_more_is_not():
    assert str(parse_filter("(" * 100 + "year <= 1" + ")" * 100)) == "year <= 1"
    assert str(parse_filter("not " * 100 + "has(year)")).startswith("not not")
    for text in ("(" * 101 + "year <= 1" + ")" * 101, "not " * 101 + "has(year)",
                 "(not " * 50 + "(has(year))" + ")" * 50):
        with pytest.raises(FilterSyntaxError, match="nested at most 100 deep"):
            parse_filter(text)


def test_json_lines_nested_too_deep_are_refused_with_file_line_and_column(write):
    deep = "[" * 100_000 + "]" * 100_000
    p = write("j.jsonl", '{"topic_id": "1", "doc_id": "d1", "grade": 1}\n{"topic_id": ' + deep + "}\n")
    assert _error(judgments.read_judgments, p, "jsonl") == (
        f"{p}:2: expected arrays and objects nested at most 100 levels deep, found deeper nesting from column 113, "
        "too deep to read. Flatten the value.")
    m = write("m.jsonl", '{"topic_id": "1", "p": ' + deep + "}\n")
    assert _error(metadata.read_metadata_file, m, "topic_id").startswith(f"{m}:1: expected arrays and objects nested")
    c = write("corpus.jsonl", '{"_id": "d1", "text": "a", "x": {"y": ' + deep + "}}\n")
    assert _error(beir.read_corpus, c).startswith(f"{c}:1: expected arrays and objects nested")


def test_toml_nested_too_deep_is_refused_with_line_and_column(write):
    deep = "[" * 100_000 + "]" * 100_000
    text = 'name = "r"\nsource = "s"\nx = ' + deep + "\n"
    assert _error(rubric_toml.parse_rubric, text, "r.toml") == (
        "r.toml:3: expected arrays and inline tables nested at most 100 levels deep, found deeper nesting from "
        "column 105. Flatten the value.")
    assert _error(gate_policy.parse_policy, "[gate]\nk = 10\nx = " + "{a = " * 5000 + "1" + "}" * 5000,
                  "g.toml").startswith("g.toml:3: expected arrays and inline tables nested at most 100 levels deep")


def test_brackets_in_strings_and_comments_do_not_count_as_nesting():
    assert too_deep('["' + "[" * 500 + '"]') is None
    assert too_deep('a = "' + "[" * 500 + '" # ' + "{" * 500, "toml") is None
    assert too_deep("a = '''" + "[" * 500 + "'''", "toml") is None
    assert too_deep("[" * 101 + "]" * 101) == 100


def test_a_json_number_of_thousands_of_digits_is_refused_not_a_traceback(write):
    p = write("j.jsonl", '{"topic_id": "1", "doc_id": "d1", "grade": 1' + "0" * 10_000 + "}\n")
    assert _error(judgments.read_judgments, p, "jsonl") == (
        f"{p}:1: expected JSON numbers of at most 4,300 digits, found a number of more digits. Shorten the number "
        "or quote it as a string.")


def test_numbers_too_long_for_int_are_refused_or_read_never_a_traceback(write):
    digits = "1" * 10_000
    assert "out of range" in _error(trec.read_qrels, write("q.txt", f"1 0 d1 {digits}\n"))
    assert "expected a relevance code" in _error(smart.read_cranqrel, write("cranqrel", f"1 1 {digits}\n"))
    m = write("m.csv", f"topic_id,n\n1,{digits}\n")
    assert _error(metadata.read_metadata_file, m, "topic_id").startswith(
        f"{m}:1: column 'n': expected a number of at most 4,000 digits, found '111")
    with pytest.raises(FilterSyntaxError, match="expected a number of at most 4,000 digits"):
        parse_filter(f"year = {digits}")
    assert sorted([digits, "2", "10", "a"], key=natural_key) == ["2", "10", digits, "a"]
    assert sorted(["d" + digits, "d2"], key=display_key) == ["d2", "d" + digits]


# -- 2. a 10 MB value is never echoed whole ----------------------------------------------------------------------


@pytest.mark.parametrize("name, text, reader, where", [
    ("rank", f"1 Q0 d1 {BIG} 1.0 t\n", trec.read_run, 1),
    ("score", f"1 Q0 d1 1 1.0 t\n1 Q0 d2 2 {BIG} t\n", trec.read_run, 2),
    ("second tag", f"1 Q0 d1 1 1.0 t\n1 Q0 d2 2 0.5 {BIG}\n", trec.read_run, 2),
    ("grade", f"1 0 d1 {BIG}\n", trec.read_qrels, 1),
    ("repeated topic", f"{BIG}\tq\n{BIG}\tq\n", trec.read_topics, 2),
])
def test_trec_files(write, name, text, reader, where):
    p = write("f.txt", text)
    msg = _error(reader, p)
    assert msg.startswith(f"{p}:{where}: ") and CUT in msg


@pytest.mark.parametrize("line, expected", [
    ({"_id": [BIG], "text": "a"}, "expected '_id' to be a string, found [\"" + "x" * 58 + "\u2026 (10000004 characters)"),
    ({BIG: "a"}, f"expected a '_id' field, found keys [{CUT}]"),
])
def test_beir_corpus(write, line, expected):
    p = write("corpus.jsonl", json.dumps(line) + "\n")
    msg = _error(beir.read_corpus, p)
    assert msg.startswith(f"{p}:1: {expected}")


def test_beir_queries(write):
    p = write("queries.jsonl", json.dumps({"_id": "1", "text": "a", "metadata": [BIG]}) + "\n")
    assert _error(beir.read_queries, p).startswith(f"{p}:1: expected 'metadata' to be an object, found [\"xxx")
    q = write("test.tsv", f"{BIG}\tcorpus-id\tscore\n")
    assert _error(beir.read_qrels_tsv, q).startswith(f"{q}:1: expected the header 'query-id<TAB>corpus-id<TAB>score', "
                                                     "found 'xxx")


@pytest.mark.parametrize("name, text, line, expected", [
    ("csv cell", f"topic_id,doc_id,grade\n1,d1,{BIG}\n", 2, "expected cells of at most 131,072 characters (the CSV "
                                                           "reader's limit), found a longer one. Shorten the cell."),
    ("csv header", f"topic_id,doc_id,{BIG}\n1,d1,1\n", 1, "expected cells of at most 131,072 characters"),
])
def test_judgments_csv(write, name, text, line, expected):
    p = write("j.csv", text)
    assert _error(judgments.read_judgments, p, "csv").startswith(f"{p}:{line}: {expected}")


@pytest.mark.parametrize("obj, expected", [
    ({"topic_id": [BIG], "doc_id": "d1", "grade": 1}, "expected topic_id as a string, found [\"xxx"),
    ({"topic_id": "1", "doc_id": "d1", "grade": BIG}, f"expected an integer grade, found {CUT}"),
    ({"topic_id": "1", "doc_id": "d1", "grade": 1, "note": [BIG]}, "expected note as a string, found [\"xxx"),
    ({"topic_id": "1", "doc_id": "d1", "grade": 1, "timestamp": BIG}, "expected an ISO 8601 timestamp"),
    ({"topic_id": "1", "doc_id": "d1", "grade": 1, "unsure": BIG}, f"expected unsure true or false, found {CUT}"),
    ({"topic_id": "1", "doc_id": f"d {BIG}", "grade": 1}, "expected a non-empty doc id without whitespace"),
])
def test_judgments_jsonl(write, obj, expected):
    p = write("j.jsonl", '{"topic_id": "1", "doc_id": "d0", "grade": 0}\n' + json.dumps(obj) + "\n")
    msg = _error(judgments.read_judgments, p, "jsonl")
    assert msg.startswith(f"{p}:2: {expected}")


@pytest.mark.parametrize("suffix, text, line, expected", [
    (".csv", f"topic_id,p\n1,{BIG}\n", 2, "expected cells of at most 131,072 characters"),
    (".tsv", f"doc_id\tp\nd1\t{BIG}\n", 2, "expected cells of at most 131,072 characters"),
    (".jsonl", json.dumps({"topic_id": "1", "x" * 1000: 1}) + "\n", 1,
     f"key {'x' * 60!r}\u2026 (1000 characters): expected a metadata key of 1 to 64 characters"),
    (".jsonl", json.dumps({BIG: 1}) + "\n", 1, f"expected a 'topic_id' field, found keys [{CUT}]"),
    (".jsonl", json.dumps({"topic_id": [BIG]}) + "\n", 1, "expected 'topic_id' to be a string, found [\"xxx"),
    (".jsonl", json.dumps({"topic_id": "1", "p": [BIG]}) + "\n", 1, "key 'p': expected a string, number, boolean"),
])
def test_metadata_files(write, suffix, text, line, expected):
    p = write("m" + suffix, text)
    assert _error(metadata.read_metadata_file, p, "doc_id" if suffix == ".tsv" else "topic_id").startswith(
        f"{p}:{line}: {expected}")


def test_status_files(write):
    p = write("r.status.tsv", f"topic_id\tstatus\n1\t{BIG}\n")
    assert _error(status.read_status_file, p) == (
        f"{p}:2: expected cells of at most 131,072 characters (the CSV reader's limit), found a longer one. "
        "Shorten the cell.")
    q = write("s.tsv", "topic_id\tstatus\n1\t" + "y" * 100_000 + "\n")
    assert _error(status.read_status_file, q).startswith(f"{q}:2: expected status ok, empty, error, found 'yyy")


@pytest.mark.parametrize("text, line, expected", [
    (f'name = "{BIG}"\nsource = "s"\n[[grades]]\ngrade = 0\nlabel = "a"\ndefinition = "b"\n', 1,
     f"expected a name of letters, digits and _ . - (1-64 characters), found {CUT}"),
    (f'name = "r"\nsource = "s"\n{"k" * 100_000} = 1\n', 3, "expected one of the keys name, source, relevant_from, "
                                                          f"grades, found {'k' * 60!r}\u2026 (100000 characters)"),
    (f'name = "r"\nsource = ["{BIG}"]\n[[grades]]\ngrade = 0\nlabel = "a"\ndefinition = "b"\n', 2,
     "expected source to be a string, found ['xxx"),
])
def test_rubric_files(text, line, expected):
    assert _error(rubric_toml.parse_rubric, text, "r.toml").startswith(f"r.toml:{line}: {expected}")


def test_gate_policy_files():
    assert _error(gate_policy.parse_policy, f"[{'t' * 100_000}]\n", "g.toml").startswith(
        f"g.toml:1: unknown table [{'t' * 60}\u2026 (100000 characters)]; expected [gate]")
    message = _error(gate_policy.parse_policy, f'[gate]\nk = 10\nmeasures = ["{BIG}"]\n', "g.toml")
    assert message.startswith(f"g.toml:3: measure {'x' * 60!r}\u2026 (10000000 characters): unknown measure")
    assert len(message) < 1_000  # the 10 MB name is cut wherever it is echoed


def test_filter_expressions():
    for text, expected in ((f'year <= "{BIG}"', "expected a number or a date after '<='"),
                           (f"{BIG} = 1", "expected a metadata key of at most 64 characters"),
                           (f"year = 1 and {BIG}", "expected a metadata key of at most 64 characters"),
                           (f"year = 1 {BIG}", f"expected 'and', 'or' or the end of the filter, found {CUT}")):
        with pytest.raises(FilterSyntaxError) as e:
            parse_filter(text)
        msg = str(e.value)
        assert len(msg) < SHORT and expected in msg, msg[:300]
        assert "\u2026 (100" in msg  # the filter itself is shown cut


def test_smart_files(write):
    p = write("cran.qry", f".I 1\n.W\nq\n.I {BIG} x\n")
    assert _error(smart.read_cranfield_queries, p).startswith(f"{p}:4: expected '.I <id>', found '.I xxx")


def test_messages_quote_values_cut_and_the_cli_clips_any_message():
    assert shown(BIG) == CUT and shown("d1") == "'d1'" and shown(12) == "12"
    assert shown_list([BIG, "a"]) == f"[{CUT}, 'a']"
    clipped = clip("f.txt:3: expected x, found " + BIG + ". Fix it.")
    assert len(clipped) < 2_100 and clipped.startswith("f.txt:3: expected x, found xxx") and clipped.endswith(
        "x. Fix it.")
    with pytest.raises(ValidationError, match=r"found 'xxx.*\(10000000 characters\)"):
        from workbench.cli.options import parse_cutoffs

        parse_cutoffs(BIG)


# -- 3. a JSON key given twice -----------------------------------------------------------------------------------


def test_a_json_lines_judgment_with_a_repeated_key_is_refused_as_a_csv_header_is(write):
    p = write("j.jsonl", '{"topic_id": "1", "doc_id": "d1", "grade": 1}\n'
                         '{"topic_id": "1", "doc_id": "d2", "grade": 0, "grade": 2}\n')
    assert _error(judgments.read_judgments, p, "jsonl") == (
        f"{p}:2: expected each key once in a JSON object, found 'grade' twice: which value counts is not clear. "
        "Remove one of them.")
    q = write("j.csv", "topic_id,doc_id,grade,grade\n1,d1,1,2\n")
    assert _error(judgments.read_judgments, q, "csv").startswith(
        f"{q}:1: expected each column once in the header, found 'grade' twice")


def test_two_names_of_one_judgment_key_are_refused_in_json_lines_too(write):
    p = write("j.jsonl", '{"topic_id": "1", "topic": "2", "doc_id": "d1", "grade": 1}\n')
    assert _error(judgments.read_judgments, p, "jsonl") == (
        f"{p}:1: expected one of the keys 'topic_id' or 'topic', found both: they give the same value. Keep one of "
        "them.")
    q = write("k.jsonl", '{"topic_id": "1", "doc_id": "d1", "grade": 1, "duration_ms": 5, "duration": 1}\n')
    assert "expected one of the keys 'duration_ms' or 'duration', found both" in _error(
        judgments.read_judgments, q, "jsonl")


def test_repeated_keys_are_refused_in_every_json_lines_reader_and_nested_objects(write):
    m = write("m.jsonl", '{"topic_id": "1", "p": 1, "p": 2}\n')
    assert "found 'p' twice" in _error(metadata.read_metadata_file, m, "topic_id")
    c = write("corpus.jsonl", '{"_id": "d1", "text": "a", "metadata": {"year": 1, "year": 2}}\n')
    assert _error(beir.read_corpus, c).startswith(f"{c}:1: expected each key once in a JSON object, found 'year'")
    ok = write("ok.jsonl", '{"topic_id": "1", "doc_id": "d1", "grade": 1, "note": "grade grade"}\n')
    assert [j.grade for j in judgments.read_judgments(ok, "jsonl")] == [1]
