"""`workbench judgments import`: linear imports of repeated lines, conflicting and duplicate lines,
timestamps in the future, documents outside the pool.

Pool p1 of collection "toy": topic 1 pools d1, d2, d3; d9 is in the collection but never pooled.
"""

from __future__ import annotations

import pytest

from tests.judging.toy_pool import toy_store
from workbench.cli import main
from workbench.store import Store
from workbench.store.judgments import Judgments

LEAD = ("--lead", "boss", "--token", "boss-token")


@pytest.fixture
def db(tmp_path):
    return toy_store(tmp_path)


def wb(db, *args):
    return main(["--db", str(db), *[str(a) for a in args]])


def imp(db, f, *extra):
    return wb(db, "judgments", "import", f, "--pool", "p1", "--assessor", "ann", *LEAD, *extra)


def test_reimport_with_lines_added_stays_on_the_bulk_path(db, tmp_path, capsys, monkeypatch):
    # 1/d1 imported once; then a file of 2,500 lines (over BULK_MIN) whose first line is that stored one and
    # whose other lines append history of the same document (d1) and of d2: the row path (one table scan per
    # line) must not run.
    first = tmp_path / "one.csv"
    first.write_text("topic_id,doc_id,grade,timestamp\n1,d1,2,2024-01-01T00:00:00Z\n")
    assert imp(db, first) == 0
    lines = ["1,d1,2,2024-01-01T00:00:00Z"]
    lines += [f"1,{'d1' if i % 2 else 'd2'},{i % 3},2024-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
              for i in range(1, 2500)]
    big = tmp_path / "big.csv"
    big.write_text("topic_id,doc_id,grade,timestamp\n" + "\n".join(lines) + "\n")

    def no_row_path(*a, **k):
        raise AssertionError("row path used")

    monkeypatch.setattr(Judgments, "_save_in", no_row_path)
    capsys.readouterr()
    assert imp(db, big) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("): 2,499 saved, 1 already stored")
    store = Store(db, client="test")
    assert store.judgments.count_judgments("toy") == 2500
    current = {j.doc_id: j.grade for j in store.judgments.current_judgments("toy")}
    assert current == {"d1": 2499 % 3, "d2": 2498 % 3}  # last lines: i = 2499 (d1, grade 0), 2498 (d2, grade 2)


def test_conflicting_grades_for_one_document_are_refused_and_nothing_is_written(db, tmp_path, capsys):
    f = tmp_path / "j.csv"
    f.write_text("topic_id,doc_id,grade\n1,d1,2\n1,d1,3\n")
    capsys.readouterr()
    assert imp(db, f) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"workbench: error: {f}:3: expected one grade for topic '1' and document 'd1', found 3 here and 2 on line 2. "
        "Keep one of the two lines (or give both their timestamps, if the file is a history)."]
    assert Store(db, client="test").judgments.count_judgments("toy") == 0


def test_exact_duplicate_lines_are_imported_once_and_counted(db, tmp_path, capsys):
    f = tmp_path / "j.csv"
    f.write_text("topic_id,doc_id,grade\n" + "1,d1,2\n" * 5 + "1,d2,0\n")
    capsys.readouterr()
    assert imp(db, f) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].endswith("): 2 saved, 0 already stored")
    assert captured.out.splitlines()[0].startswith("imported 2 judgments of 'ann'")
    assert f"workbench: 4 duplicate line(s) in {f} dropped (a line repeated exactly): each was imported once" \
        in captured.err
    assert Store(db, client="test").judgments.count_judgments("toy") == 2


def test_a_timestamp_more_than_a_day_ahead_is_refused(db, tmp_path, capsys):
    from datetime import UTC, datetime, timedelta

    f = tmp_path / "j.csv"
    soon = (datetime.now(UTC) + timedelta(hours=12)).replace(microsecond=0).isoformat()
    f.write_text(f"topic_id,doc_id,grade,timestamp\n1,d1,2,{soon}\n1,d2,1,9999-12-31T23:59:59\n")
    capsys.readouterr()
    assert imp(db, f) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"workbench: error: {f}:3: expected a timestamp at most one day in the future (up to ")
    assert err.endswith("), found 9999-12-31T23:59:59+00:00. A judgment cannot be made later than now: check the "
                        "clock or the time zone.")
    assert Store(db, client="test").judgments.count_judgments("toy") == 0
    f.write_text(f"topic_id,doc_id,grade,timestamp\n1,d1,2,{soon}\n")  # 12 hours ahead: clock skew, accepted
    assert imp(db, f) == 0


def test_a_document_outside_the_pool_is_refused_unless_allowed(db, tmp_path, capsys):
    f = tmp_path / "j.csv"
    f.write_text("topic_id,doc_id,grade\n1,d1,2\n1,d9,1\n")  # d9: a document of the collection, never pooled
    capsys.readouterr()
    assert imp(db, f) == 1
    assert capsys.readouterr().err.strip() == (
        f"workbench: error: {f}:3: expected a document pooled for topic '1' in pool p1 (or its ancestors), found "
        "doc id 'd9' (1 line(s) of the file are outside the pool). Check --pool, or pass --allow-outside-pool to "
        "keep them.")
    assert Store(db, client="test").judgments.count_judgments("toy") == 0
    assert imp(db, f, "--allow-outside-pool") == 0
    assert "  1 line(s) judge documents outside the pool" in capsys.readouterr().out
    assert Store(db, client="test").judgments.count_judgments("toy") == 2
