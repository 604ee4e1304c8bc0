"""The general SMART converter on the traits of CACM, a collection it had not seen (issue 26).

CACM (3,204 documents, 64 queries) converts with these traits, each reproduced
here in a few records: qrels doc ids zero-padded (``01 0756 0 0`` against
``.I 756``) while query ids are padded too (``01`` for ``.I 1``); a trailing
query record ``.I 0`` with no ``.W``; ``.B`` written ``CACM December, 1958``;
documents with a title and no ``.W`` abstract; queries with ``.A`` (authors
the query names) only in some records.
"""

from __future__ import annotations

import json

import pytest

from workbench.errors import InputFormatError
from workbench.formats import smart
from workbench.services.collections.convert import (
    SmartSpec,
    conversion_notes,
    convert_smart,
    read_collection,
)

DOCS = (
    ".I 1\n.T\nPreliminary Report-International Algebraic Language\n.B\nCACM December, 1958\n"
    ".A\nPerlis, A. J.\nSamelson,K.\n.N\nCA581203 JB March 22, 1978  8:28 PM\n.X\n100\t5\t1\n1\t5\t1\n"
    ".I 2\n.T\nExtraction of Roots by Repeated Subtractions for Digital Computers\n.B\nCACM December, 1958\n"
    ".A\nSugai, I.\n.N\nCA581202 JB March 22, 1978  8:29 PM\n"
    ".I 756\n.T\nA time-sharing system\n.W\nThe design of a time-sharing system for a small computer.\n"
    ".B\nCACM March, 1975\n.A\nLampson, B. W.\n.N\nCA750301 JB January 5, 1978  9:13 AM\n"
    ".I 1410\n.T\nInterarrival statistics for time sharing systems\n.W\nThe optimization of time-shared "
    "system performance.\n.B\nCACM July, 1966\n.N\nCA660702 JB March 2, 1978  3:39 PM\n"
    ".I 3000\n.T\nA note without a source\n"
)
QUERIES = (
    ".I 1\n.W\n What articles exist which deal with TSS (Time Sharing System), an\noperating system for IBM "
    "computers?\n.N\n 1. Richard Alexander, Comp Serv, Langmuir Lab (TSS)\n"
    ".I 2\n.W\n I am interested in articles written either by Prieve or Udo Pooch\n.A\nPrieve, B.\nPooch, U.\n"
    ".N\n 2. Richard Alexander, Comp Serv, Langmuir Lab (TSS)\n"
    ".I 3\n.W\n Intermediate languages used in construction of multi-targeted compilers\n.N\n 3. Donna Fitzgerald\n"
    ".I 0\n"
)
QRELS = "01 0756  0 0\n01 1410  0 0\n02 0001  0 0\n02 0002  0 0\n"
PLAIN = "1 756 0 0\n1 1410 0 0\n2 1 0 0\n2 2 0 0\n"
"""The same judgments without zero padding: the tests of the other traits use it, so each fails for its own cause."""


def spec(write, docs=DOCS, queries=QUERIES, qrels=QRELS, **kw) -> SmartSpec:
    return SmartSpec(write("cacm.all", docs), write("query.text", queries), write("qrels.text", qrels), **kw)


def test_zero_padded_qrels_doc_ids_are_mapped_to_the_corpus_ids_and_said(write):
    c = read_collection(spec(write))
    assert c.layout.roles == ("query", "doc", "ignore", "grade")  # column 2 holds doc ids once padding is removed
    assert c.qrels == {"1": {"756": 1, "1410": 1}, "2": {"1": 1, "2": 1}}
    assert c.docs_matching is not None
    assert c.docs_matching.padded == (("0756", "756"), ("0001", "1"), ("0002", "2"))
    notes, _ = conversion_notes(c)
    assert ("doc ids: 3 of 4 qrels doc ids are zero-padded ('0756' -> '756', '0001' -> '1', '0002' -> '2') and "
            "were mapped to the corpus's .I values") in notes
    # --allow-unknown-docs no longer keeps them unmatchable: nothing is unknown
    allowed = read_collection(spec(write, allow_unknown_docs=True))
    assert allowed.qrels == c.qrels and allowed.unknown_docs == frozenset()


def test_zero_padding_that_fits_two_corpus_ids_is_an_error_naming_it(write):
    docs = ".I 756\n.T\na\n.I 00756\n.T\nb\n.I 1\n.T\nc\n"
    s = spec(write, docs=docs, qrels="1 1 0 0\n1 0756 0 0\n")
    with pytest.raises(InputFormatError) as e:
        read_collection(s)
    assert str(e.value) == (
        f"{s.qrels}:2: expected doc id '0756' to name one document, found 2 corpus doc ids equal to it once zero "
        "padding is removed ('756', '00756'). Write the qrels doc ids exactly as the corpus's .I values.")


def test_an_unknown_doc_id_error_says_padding_was_tried(write):
    s = spec(write, queries=QUERIES.replace(".I 0\n", ""), qrels="01 0756\n01 0757\n")
    with pytest.raises(InputFormatError, match=r"qrels.text:2: expected a document of cacm.all, found doc id "
                                               r"'0757' \(1 of 2 qrels doc ids are in the corpus \(compared as "
                                               r"written and without zero padding\)\)"):
        read_collection(s)


def test_an_empty_query_record_is_skipped_with_a_warning_naming_file_and_line(write):
    c = read_collection(spec(write, qrels=PLAIN))
    assert [q.topic.topic_id for q in c.queries] == ["1", "2", "3"]
    line = QUERIES.splitlines().index(".I 0") + 1
    assert c.empty_queries == ((line, "0"),)
    _, warnings = conversion_notes(c)
    assert (f"skipped 1 query record(s) without query text (not topics): {c.spec.queries}:{line} (.I 0)"
            in warnings)


def test_qrels_naming_a_skipped_empty_record_are_refused(write):
    s = spec(write, qrels="1 756 0 0\n00 1410 0 0\n")
    with pytest.raises(InputFormatError) as e:
        read_collection(s)
    line = QUERIES.splitlines().index(".I 0") + 1
    assert str(e.value) == (f"{s.qrels}:2: expected a query with text, found query '00', which is .I 0 of "
                            f"query.text:{line}, a record without query text. Add its text, or remove its judgments.")


def test_year_and_source_are_derived_from_dot_b_in_any_smart_collection(write, tmp_path):
    queries = QUERIES.replace(".I 0\n", "")  # without the empty record, so only this trait is tested
    c = read_collection(spec(write, queries=queries, qrels=PLAIN))
    assert c.derived == {"1": {"year": 1958, "source": "cacm"}, "2": {"year": 1958, "source": "cacm"},
                         "756": {"year": 1975, "source": "cacm"}, "1410": {"year": 1966, "source": "cacm"},
                         "3000": {}}
    report = convert_smart(spec(write, queries=queries, qrels=PLAIN), tmp_path / "cacm")
    assert "derived from .B into doc_metadata.jsonl: year for 4 of 5 documents (1958-1975); source for 4 (cacm)" \
        in report.notes
    side = [json.loads(x) for x in (tmp_path / "cacm" / "doc_metadata.jsonl").read_text().splitlines()]
    assert side[2] == {"doc_id": "756", "year": 1975, "source": "cacm", "A": "Lampson, B. W.",
                       "B": "CACM March, 1975", "N": "CA750301 JB January 5, 1978 9:13 AM"}
    assert side[4] == {"doc_id": "3000"}  # no .B, no .A, no .N: no key at all, never ""
    # the Cranfield preset's reading of .B is unchanged (years 1900-1969, a month kept in the source)
    assert smart.bib_fields("CACM March, 1975") == (None, "cacm march")
    assert smart.bib_fields("CACM March, 1975", smart.SMART_BIB) == (1975, "cacm")


def test_a_field_user_named_year_is_not_overwritten_and_a_skipped_b_derives_nothing(write):
    queries = QUERIES.replace(".I 0\n", "")
    c = read_collection(spec(write, queries=queries, qrels=PLAIN, doc_fields=(("title", "T"), ("text", "W"),
                                                                              ("year", "N"))))
    assert c.derived["756"] == {"source": "cacm"}
    assert read_collection(spec(write, queries=queries, qrels=PLAIN, skip=("X", "B"))).derived == {}


def test_fields_a_record_lacks_are_absent_not_empty_strings(write, tmp_path):
    queries = QUERIES.replace(".I 0\n", "")
    convert_smart(spec(write, queries=queries, qrels=PLAIN, doc_fields=(("title", "T"), ("text", "W"),
                                                                        ("authors", "A"))), tmp_path / "cacm")
    queries = [json.loads(x) for x in (tmp_path / "cacm" / "queries.jsonl").read_text().splitlines()]
    # .A is in query 2 only: queries 1 and 3 have no "A" key (a blank "A" would make a blank --by slice)
    assert [q["metadata"] for q in queries] == [
        {"smart_id": "1", "N": "1. Richard Alexander, Comp Serv, Langmuir Lab (TSS)"},
        {"smart_id": "2", "A": "Prieve, B. Pooch, U.", "N": "2. Richard Alexander, Comp Serv, Langmuir Lab (TSS)"},
        {"smart_id": "3", "N": "3. Donna Fitzgerald"},
    ]
    corpus = [json.loads(x) for x in (tmp_path / "cacm" / "corpus.jsonl").read_text().splitlines()]
    assert "metadata" not in corpus[3]  # document 1410 has no .A
    assert corpus[4] == {"_id": "3000", "title": "A note without a source", "text": ""}
