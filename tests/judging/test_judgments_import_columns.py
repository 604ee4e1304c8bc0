"""`workbench judgments import`: the CSV header (a column given twice, two names of one column, columns
that are not judgment columns) and the pool coverage of a child (delta) pool.

Pool p1 of collection "toy": topic 1 pools d1, d2, d3. Its child p2 pools d9 (the delta).
"""

from __future__ import annotations

import pytest

from tests.judging.toy_pool import toy_store
from workbench.cli import main
from workbench.formats.judgments import ACCEPTED_COLUMNS, read_judgment_file
from workbench.store import Store

LEAD = ("--lead", "boss", "--token", "boss-token")


@pytest.fixture
def db(tmp_path):
    return toy_store(tmp_path, child=True)


def imp(db, f, pool="p1"):
    return main(["--db", str(db), "judgments", "import", str(f), "--pool", pool, "--assessor", "ann", *LEAD])


@pytest.mark.parametrize("header, message", [
    ("topic_id,doc_id,grade,grade", "expected each column once in the header, found 'grade' twice (columns 3 and 4). "
                                    "Remove or rename one of them."),
    ("topic_id,doc_id,grade,note,note", "found 'note' twice (columns 4 and 5)"),
    ("topic_id,topic,doc_id,grade", "expected one of the columns 'topic_id' or 'topic', found both: they give the "
                                    "same value. Keep one of them."),
    ("topic_id,doc_id,grade,duration_ms,duration", "expected one of the columns 'duration_ms' or 'duration'"),
])
def test_a_column_given_twice_is_refused_at_line_1_and_nothing_is_written(db, tmp_path, capsys, header, message):
    # Before: the first of the two columns won silently (a grade of 1 here, whatever the second said).
    f = tmp_path / "j.csv"
    n = header.count(",") + 1
    f.write_text(header + "\n" + ",".join(["1", "d1", "1"] + ["1"] * (n - 3)) + "\n")
    capsys.readouterr()
    assert imp(db, f) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"workbench: error: {f}:1: ") and message in err[0]
    assert Store(db, client="test").judgments.count_judgments("toy") == 0


def test_unknown_columns_are_named_with_the_accepted_ones_and_the_export_columns_pass(db, tmp_path, capsys):
    # The module docstring documents that other columns are ignored: a warning, not a refusal.
    f = tmp_path / "j.csv"
    f.write_text("topic_id,doc_id,grade,pool_version,judgment_id,grde_note,comment\n1,d1,2,p1,7,x,y\n")
    capsys.readouterr()
    assert imp(db, f) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].endswith("): 1 saved, 0 already stored")
    assert err.strip().splitlines() == [
        f"[warning] {f}:1: column(s) 'grde_note', 'comment' ignored: not judgment columns (accepted: "
        "topic_id, topic, query_id, doc_id, doc, docno, grade, relevance, note, unsure, duration_ms, duration, "
        "timestamp, assessor, pool_version, rubric_version, judgment_id). Rename a misspelt column, or drop it "
        "to silence this."]
    assert ", ".join(ACCEPTED_COLUMNS) in err
    assert read_judgment_file(f, "csv").ignored_columns == ("grde_note", "comment")


def test_an_export_reimported_gives_no_warning(db, tmp_path, capsys):
    f = tmp_path / "j.csv"
    f.write_text("topic_id,doc_id,grade\n1,d1,2\n")
    assert imp(db, f) == 0
    out = tmp_path / "export.csv"
    assert main(["--db", str(db), "judgments", "export", "p1", "--out", str(out)]) == 0
    capsys.readouterr()
    assert imp(db, out) == 0
    assert "[warning]" not in capsys.readouterr().err


def test_a_delta_import_counts_the_delta_as_covered_and_the_parents_documents_apart(db, tmp_path, capsys):
    # Before: "pool coverage: 1 of 4 pooled documents (25.0%) judged by the file; 3 not covered": the three
    # documents of the parent p1 counted as "not covered" by a file that judges the delta p2.
    f = tmp_path / "delta.csv"
    f.write_text("topic_id,doc_id,grade\n1,d9,1\n")
    capsys.readouterr()
    assert imp(db, f, pool="p2") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [
        "pool coverage: 1 of 1 documents of the delta p2 (100.0%) judged by the file; 0 not covered",
        "  ancestors (p1): 0 of 3 documents pooled there judged by the file (not counted above)"]


def test_a_delta_import_that_also_judges_parent_documents_counts_them_apart(db, tmp_path, capsys):
    f = tmp_path / "both.csv"
    f.write_text("topic_id,doc_id,grade\n1,d1,2\n1,d2,0\n")
    capsys.readouterr()
    assert imp(db, f, pool="p2") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [
        "pool coverage: 0 of 1 documents of the delta p2 (0.0%) judged by the file; 1 not covered",
        "  not covered, per topic: 1: 1",
        "  ancestors (p1): 2 of 3 documents pooled there judged by the file (not counted above)"]
