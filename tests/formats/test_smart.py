"""Cranfield SMART readers: renumbering, grade mapping, text clean-up, first/tenth/last items.

Expected values were read by hand from ../shared/data/cranfield (line numbers given).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.errors import InputFormatError
from workbench.formats.smart import (
    GRADE_OF_CODE,
    read_cranfield_documents,
    read_cranfield_queries,
    read_cranqrel,
    read_smart,
)
from workbench.rubric import CRANFIELD

RAW_CRANFIELD = Path(__file__).resolve().parents[3] / "shared" / "data" / "cranfield"
raw = pytest.mark.skipif(not RAW_CRANFIELD.is_dir(), reason="raw Cranfield files not present")

DOCS = ".I 1\r\n.T\r\nwing in a\r\nslipstream .\r\n.A\r\nbrenckman,m.\r\n.B\r\nj. ae. 25.\r\n.W\r\nwing in a\r\nslipstream .\r\n  an  experimental study .\r\n.A\r\nstray line\r\n.I 2\r\n.T\r\n.A\r\n.B\r\n.W\r\n"
QUERIES = ".I 001\n.W\nwhat similarity laws\nmust be obeyed .\n.I 002\n.W\nwhat are the problems .\n.I 004\n.W\nheat conduction  in slabs .\n"


def test_grade_mapping_matches_the_cranfield_rubric():
    assert GRADE_OF_CODE == {1: 4, 2: 3, 3: 2, 4: 1, 5: 0, -1: 0}
    assert set(GRADE_OF_CODE.values()) == set(CRANFIELD.values)


def test_documents_fields_whitespace_and_stray_markers(write):
    d1, d2 = read_cranfield_documents(write("cran.all.1400", DOCS))
    assert (d1.doc_id, d1.title, d1.author, d1.bib) == ("1", "wing in a slipstream .", "brenckman,m.", "j. ae. 25.")
    # .W is kept verbatim (title repeat included); the stray .A marker is dropped, its line stays in the text
    assert d1.text == "wing in a slipstream . an experimental study . stray line"
    assert (d2.doc_id, d2.title, d2.text) == ("2", "", "")


def test_queries_are_renumbered_by_position_not_by_dot_i(write):
    qs = read_cranfield_queries(write("cran.qry", QUERIES))
    assert [(q.topic_id, q.smart_id) for q in qs] == [("1", "001"), ("2", "002"), ("3", "004")]
    assert qs[2].text == "heat conduction in slabs ."  # topic 3 is .I 004's text


def test_cranqrel_codes_become_grades(write):
    p = write("cranqrel", "1 184 2 \r\n1 29 1\r\n1 13 4\r\n2 12 3\r\n225 1188 -1")
    assert read_cranqrel(p) == {"1": {"184": 3, "29": 4, "13": 1}, "2": {"12": 2}, "225": {"1188": 0}}


def test_cranqrel_bad_code_and_columns(write):
    p = write("cranqrel", "1 184 2\n1 29 7\n")
    with pytest.raises(InputFormatError) as e:
        read_cranqrel(p)
    assert str(e.value) == f"{p}:2: expected a relevance code (-1, 1, 2, 3, 4, 5), found '7'. Use Cleverdon's codes."
    p = write("cranqrel2", "1 184\n")
    with pytest.raises(InputFormatError, match=r":1: expected 3 columns \(query doc code\), found 2"):
        read_cranqrel(p)


def test_smart_errors_name_the_line(write):
    with pytest.raises(InputFormatError) as e:
        read_smart(write("a", "text before\n.I 1\n.W\nx\n"))
    assert str(e.value).endswith(":1: expected '.I <id>' before any text, found 'text before'. Start the file with a record.")
    with pytest.raises(InputFormatError) as e:
        read_smart(write("b", ".I 1\n.W\nx\n.I 1\n.W\ny\n"))
    assert str(e.value).endswith(":4: expected each .I id once, found '1' again (first on line 1). Renumber it.")
    with pytest.raises(InputFormatError, match=r":4: expected '.W' text for query .I 2, found none"):
        read_cranfield_queries(write("c", ".I 1\n.W\nx\n.I 2\n.W\n"))


@raw
def test_raw_cranfield_counts_and_first_tenth_last_items():
    docs = read_cranfield_documents(RAW_CRANFIELD / "cran.all.1400")
    assert len(docs) == 1400 and len({d.doc_id for d in docs}) == 1400
    # cran.all.1400 lines 1-9
    assert (docs[0].doc_id, docs[0].title, docs[0].author, docs[0].bib) == (
        "1", "experimental investigation of the aerodynamics of a wing in a slipstream .", "brenckman,m.",
        "j. ae. scs. 25, 1958, 324.")
    assert docs[0].text.startswith(
        "experimental investigation of the aerodynamics of a wing in a slipstream . an experimental study of a wing")
    # lines 233-241
    assert (docs[9].doc_id, docs[9].title, docs[9].author) == (
        "10", "the theory of the impact tube at low pressure .", "chambre,p.l. and schaaf,s.a.")
    # lines 39391-39398
    assert (docs[-1].doc_id, docs[-1].title, docs[-1].bib) == (
        "1400", "the buckling shear stress of simply-supported infinitely long plates with transverse stiffeners .",
        "arc r + m.2971, 1953.")
    assert [d.doc_id for d in docs if not d.text] == ["471", "995"]

    queries = read_cranfield_queries(RAW_CRANFIELD / "cran.qry")
    assert len(queries) == 225
    assert (queries[0].topic_id, queries[0].smart_id, queries[0].text) == (
        "1", "001", "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft .")
    assert (queries[2].topic_id, queries[2].smart_id) == ("3", "004")
    assert (queries[9].topic_id, queries[9].smart_id, queries[9].text) == (
        "10", "018", "are real-gas transport properties for air available over a wide range of enthalpies and densities .")
    assert (queries[-1].topic_id, queries[-1].smart_id, queries[-1].text) == (
        "225", "365", "what design factors can be used to control lift-drag ratios at mach numbers above 5 .")

    qrels = read_cranqrel(RAW_CRANFIELD / "cranqrel")
    assert len(qrels) == 225 and sum(len(g) for g in qrels.values()) == 1837
    first, tenth = list(qrels["1"].items())[0], list(qrels["1"].items())[9]
    assert first == ("184", 3)   # line 1: "1 184 2"
    assert tenth == ("57", 3)    # line 10: "1 57 2"
    assert qrels["225"]["1188"] == 0  # last line: "225 1188 -1" (no final newline)
    codes = {}
    for grades in qrels.values():
        for g in grades.values():
            codes[g] = codes.get(g, 0) + 1
    # code counts of the raw file: 1:128, 2:387, 3:734, 4:363, -1:225
    assert codes == {4: 128, 3: 387, 2: 734, 1: 363, 0: 225}
