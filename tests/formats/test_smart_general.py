"""The general SMART converter's rules on small hand-made files (one rule per test).

The collection imitates a classic SMART set nobody here had seen: fields
.I/.T/.A/.W/.X, a third of the queries without judgments, qrels lines
``q d 0 0.000000``.
"""

from __future__ import annotations

import json

import pytest

from workbench.errors import InputFormatError, ValidationError
from workbench.formats import smart
from workbench.services.collections.convert import (
    SmartSpec,
    convert_smart,
    parse_fields,
    read_collection,
)

DOCS = (
    ".I 1\n.T\nwing lift\n.A\nsmith, j.\n.W\nlift of a wing\nin a slipstream .\n.X\n1 5 1\n2 5 1\n"
    ".I 2\n.T\ndrag\n.A\njones, k.\n.A\nbrown, l.\n.B\nj. aero 2, 1958\n.W\ndrag at\n  high speed .\n"
    ".I 3\n.T\nheat transfer\n.W\nheat transfer\n.W\nin slabs .\n"
)
QUERIES = ".I 1\n.W\nwing lift .\n.I 2\n.W\ndrag at speed .\n.I 3\n.W\nslabs .\n"
QRELS_SMART = "1 1 0 0.000000\n1 2 0 0.000000\n2 2 0 0.000000\n"  # query 3 has no judgments


def spec(write, docs=DOCS, queries=QUERIES, qrels=QRELS_SMART, **kw) -> SmartSpec:
    return SmartSpec(write("c.all", docs), write("c.qry", queries), write("c.rel", qrels), **kw)


def test_fields_named_unknown_markers_kept_repeated_joined_and_x_skipped(write):
    c = read_collection(spec(write, doc_fields=(("title", "T"), ("text", "W"), ("authors", "A"))))
    d1, d2, d3 = c.documents
    assert (d1.title, d1.text) == ("wing lift", "lift of a wing in a slipstream .")
    assert d3.text == "heat transfer in slabs ."  # a repeated .W is joined with a space
    # named metadata: repeated .A blocks joined with "; "; a record without .A lacks the key (not "")
    assert c.doc_metadata == {"1": {"authors": "smith, j."}, "2": {"authors": "jones, k.; brown, l."}, "3": {}}
    # .B was named by nobody: kept under its letter (for every document, "" where absent)
    assert c.unknown_metadata == {"1": {"B": ""}, "2": {"B": "j. aero 2, 1958"}, "3": {"B": ""}}
    assert c.skipped == {"X": 1}  # .X (cross-references) dropped by default


def test_unknown_markers_ignored_by_option_and_x_kept_when_named(write):
    c = read_collection(spec(write, unknown="ignore", doc_fields=(("title", "T"), ("text", "W"), ("xref", "X"))))
    assert c.unknown_metadata == {}
    assert c.skipped == {"A": 2, "B": 1}  # records holding each dropped marker
    assert c.doc_metadata["1"] == {"xref": "1 5 1 2 5 1"}


def test_text_to_end_keeps_stray_markers_inside_the_text(write):
    docs = ".I 7\n.T\nt\n.W\nfirst part\n.A\nsecond part\n.W\nthird part\n"
    c = read_collection(spec(write, docs=docs, qrels="1 7\n", text_to_end=True))
    assert c.documents[0].text == "first part second part third part"
    c = read_collection(spec(write, docs=docs, qrels="1 7\n"))
    assert c.documents[0].text == "first part third part" and c.unknown_metadata["7"] == {"A": "second part"}


def test_smart_four_columns_constant_float_grade_is_a_list_of_relevant_pairs(write):
    c = read_collection(spec(write))
    assert c.layout.roles == ("query", "doc", "ignore", "grade") and c.layout.detected
    assert c.mapping.grade_of_value == {"0.000000": 1} and c.mapping.positives_only
    assert c.qrels == {"1": {"1": 1, "2": 1}, "2": {"2": 1}}
    assert c.unjudged_topics == ["3"]
    assert c.suggested_rubric == "binary"


def test_trec_four_columns_are_told_apart_by_where_the_doc_ids_are(write):
    c = read_collection(spec(write, qrels="1 0 1 2\n1 0 2 0\n2 Q0 3 1.000000\n"))
    assert c.layout.roles == ("query", "ignore", "doc", "grade")
    assert c.qrels == {"1": {"1": 2, "2": 0}, "2": {"3": 1}}
    assert c.mapping.grade_of_value == {"0": 0, "1.000000": 1, "2": 2} and not c.mapping.positives_only


def test_two_and_three_columns(write):
    assert read_collection(spec(write, qrels="1 1\n2 3\n")).qrels == {"1": {"1": 1}, "2": {"3": 1}}
    c = read_collection(spec(write, qrels="1 1 2\n1 3 0.0\n2 2 1\n"))
    assert c.qrels == {"1": {"1": 2, "3": 0}, "2": {"2": 1}} and c.mapping.rule == "grades as written (0.0->0)"


def test_grade_map_and_its_errors_name_the_line(write):
    c = read_collection(spec(write, qrels="1 1 1\n1 2 -1\n", grade_map=smart.parse_grade_map(["1=4", "-1=0"])))
    assert c.qrels == {"1": {"1": 4, "2": 0}}
    s = spec(write, qrels="1 1 1\n1 2 3\n", grade_map={1.0: 4})
    with pytest.raises(InputFormatError) as e:
        read_collection(s)
    assert str(e.value) == f"{s.qrels}:2: expected a value of the grade map (1), found '3'. Add it with --grade-map 3=GRADE."
    s = spec(write, qrels="1 1 1\n1 2 0.5\n")
    with pytest.raises(InputFormatError, match=r"c.rel:2: expected whole-number grades \(the file has 2 different "
                                               r"values\), found '0.5'\. Say how values become grades with --grade-map"):
        read_collection(s)


def test_qrels_defects_name_file_and_line(write):
    with pytest.raises(InputFormatError, match=r"c.rel:2: expected 3 columns as on line 1, found 2"):
        read_collection(spec(write, qrels="1 1 1\n1 2\n"))
    with pytest.raises(InputFormatError, match=r"c.rel:1: expected document ids of the corpus in column 2 .* found "
                                               r"0 of 1 lines have a corpus doc id in column 2 and 0 in column 3"):
        read_collection(spec(write, qrels="1 9 9 1\n"))
    with pytest.raises(InputFormatError, match=r"c.rel:2: expected a document of c.all, found doc id '99' "
                                               r"\(1 of 2 qrels doc ids are in the corpus\)"):
        read_collection(spec(write, qrels="1 1\n1 99\n"))
    c = read_collection(spec(write, qrels="1 1\n1 99\n", allow_unknown_docs=True))
    assert c.unknown_docs == {"99"}


def test_query_numbering_by_dot_i_value_is_detected(write):
    queries = ".I 010\n.W\nfirst .\n.I 020\n.W\nsecond .\n.I 030\n.W\nthird .\n"
    c = read_collection(spec(write, queries=queries, qrels="10 1 0 0\n30 2 0 0\n"))
    assert c.numbering.mode == "id" and c.numbering.detected
    assert [q.topic.topic_id for q in c.queries] == ["010", "020", "030"]
    assert c.qrels == {"010": {"1": 1}, "030": {"2": 1}}  # qrels "10" is .I 010 (compared as numbers)
    assert "named by .I value (detected" in c.numbering.note


def test_query_numbering_by_position_is_detected_as_in_cranfield(write):
    queries = ".I 001\n.W\nfirst .\n.I 002\n.W\nsecond .\n.I 004\n.W\nthird .\n"
    c = read_collection(spec(write, queries=queries, qrels="3 1\n1 2\n"))
    assert c.numbering.mode == "position" and c.numbering.detected
    assert [(q.topic.topic_id, q.smart_id) for q in c.queries] == [("1", "001"), ("2", "002"), ("3", "004")]
    assert c.qrels == {"3": {"1": 1}, "1": {"2": 1}}  # qrels query 3 is the third query, .I 004
    assert "1 of 2 qrels query ids are not .I values, e.g. '3'" in c.numbering.note


def test_query_numbering_ambiguous_or_impossible_is_an_error_with_the_line(write):
    queries = ".I 1\n.W\nfirst .\n.I 2\n.W\nsecond .\n.I 4\n.W\nthird .\n"
    s = spec(write, queries=queries, qrels="1 1\n2 2\n")  # .I 1, 2 = positions 1, 2: both agree
    assert read_collection(s).numbering.mode == "id"
    with pytest.raises(InputFormatError) as e:  # "3" fits no .I; "4" fits no position
        read_collection(spec(write, queries=queries, qrels="1 1\n3 2\n4 3\n"))
    assert str(e.value).startswith(f"{s.qrels}:2: expected each qrels query to be a .I value or a position 1..3")
    s = spec(write, queries=".I 2\n.W\na .\n.I 1\n.W\nb .\n", qrels="1 1\n")
    with pytest.raises(InputFormatError, match=r"c.rel:1: .* fit both: query '1' is .I 1 by value but .I 2 by "
                                               r"position\. Choose with --query-numbering"):
        read_collection(s)
    assert read_collection(spec(write, queries=".I 2\n.W\na .\n.I 1\n.W\nb .\n", qrels="1 1\n",
                                query_numbering="position")).qrels == {"1": {"1": 1}}
    with pytest.raises(InputFormatError, match=r"c.rel:1: expected a query named by a .I value of the query file, "
                                               r"found query '7'"):
        read_collection(spec(write, qrels="7 1\n", query_numbering="id"))


def test_field_options_are_checked():
    assert parse_fields(["title=.T", "authors=a"]) == (("title", "T"), ("authors", "A"))
    for bad, msg in [("title", "expected NAME=.MARKER"), ("x=.I", "record id"), ("a=.T,b=.T", "")]:
        if msg:
            with pytest.raises(ValidationError, match=msg):
                parse_fields([bad])
    with pytest.raises(ValidationError, match="marker .T is given to two fields"):
        parse_fields(["a=.T", "b=.T"])


def test_conversion_writes_the_mapping_into_qrels_meta_and_a_readme(write, tmp_path):
    report = convert_smart(spec(write, doc_fields=(("title", "T"), ("text", "W"), ("authors", "A"))),
                           tmp_path / "toy")
    meta = json.loads((tmp_path / "toy" / "qrels.meta.json").read_text())
    assert meta == {
        "rule": "every line has grade 0.000000: the file lists relevant (query, doc) pairs, so 0.000000 -> grade 1",
        "grade_of_value": {"0.000000": 1}, "value_counts": {"0.000000": 3},
        "qrels_columns": "query doc ignore grade", "query_numbering": "id", "positives_only": True,
        "rubric": "binary",
        "source": "c.rel (SMART qrels), converted by `workbench convert smart`; see README.md",
    }
    corpus = [json.loads(x) for x in (tmp_path / "toy" / "corpus.jsonl").read_text().splitlines()]
    assert corpus[1] == {"_id": "2", "title": "drag", "text": "drag at high speed .",
                         "metadata": {"authors": "jones, k.; brown, l."}}
    # the marker nobody named goes to the document-metadata side file (absent where the record lacks it),
    # after the year and source derived from .B
    side = [json.loads(x) for x in (tmp_path / "toy" / "doc_metadata.jsonl").read_text().splitlines()]
    assert side == [{"doc_id": "1"}, {"doc_id": "2", "year": 1958, "source": "j.aero", "B": "j. aero 2, 1958"},
                    {"doc_id": "3"}]
    queries = (tmp_path / "toy" / "queries.jsonl").read_text().splitlines()
    assert json.loads(queries[2]) == {"_id": "3", "text": "slabs .", "metadata": {"smart_id": "3"}}
    assert (tmp_path / "toy" / "qrels.reference.txt").read_text() == "1 0 1 1\n1 0 2 1\n2 0 2 1\n"
    assert any("1 of 3 topics have no judgments (3)" in w for w in report.warnings)
    assert any("only relevant documents" in w for w in report.warnings)
    readme = (tmp_path / "toy" / "README.md").read_text()
    assert "2 of 3 topics have judgments; 1 have none (3) and stay unjudged." in readme
    assert "| `0.000000` | 1 | 3 |" in readme
