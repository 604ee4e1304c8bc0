"""The bulk import path (``store.judgments_bulk``) writes exactly what the row-by-row save path writes:
same rows, same ids, same results, and declines the cases where only the row order decides."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import workbench.store.judgments_bulk as bulk
from workbench.errors import UnknownNameError, ValidationError
from workbench.store import Store
from workbench.store.rubrics import read_rubric
from workbench.types import Document, Judgment, Topic


def _store(path):
    s = Store(path, client="pytest")
    s.collections.ingest_collection("toy", [Document(f"d{i}", "", f"text {i}") for i in range(6)],
                        [Topic("1", "one"), Topic("2", "two")])
    s.users.add_user("boss", "lead", token="boss-token")
    s.users.add_user("ann", token="ann-token", lead="boss")
    s.users.add_user("bob", token="bob-token", lead="boss")
    return s


def _items(spec):
    at = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    return [(Judgment(t, d, who, g, g is None, note, 100 * i), token, at if i % 2 else None)
            for i, (t, d, who, g, note, token) in enumerate(spec)]


A = [("1", "d1", "ann", 2, "", "a1"), ("1", "d2", "ann", None, "unsure", "a2"), ("1", "d1", "ann", 3, "again", "a3"),
     ("2", "d4", "bob", 0, "", "a4"), ("2", "d5", "ann", 1, "x", "a5")]
B = [("1", "d1", "ann", 3, "again", "a3"), ("2", "d4", "bob", 1, "", "b1"), ("1", "d3", "bob", 2, "", "b2")]  # a3 stored
C = [("1", "d1", "ann", 3, "again", "a3"), ("1", "d1", "ann", 0, "changed", "c1")]  # a skipped item gets a new row
D = [("1", "d1", "ann", 1, "first", "d1"), ("1", "d1", "ann", 3, "again", "a3")]  # appended, then a stored line


def _rows(s):
    with s.connection() as cur:
        return cur.execute("SELECT judgment_id, topic_id, doc_id, assessor, grade, unsure, note, duration_ms, "
                           "pool_version, save_token, rubric_version, saved_at IS NOT NULL FROM judgments "
                           "ORDER BY judgment_id").fetchall()


def test_bulk_and_row_paths_store_the_same(tmp_path, monkeypatch):
    results = {}
    for mode, minimum in (("bulk", 1), ("row", 10**9)):
        monkeypatch.setattr(bulk, "BULK_MIN", minimum)
        s = _store(tmp_path / f"{mode}.duckdb")
        got = [s.judgments.record_judgments(_items(spec), collection="toy", pool_version="p1", lead="boss")
               for spec in (A, A, B, C, D)]
        results[mode] = (got, _rows(s), [(j.topic_id, j.doc_id, j.assessor, j.grade) for j in s.judgments.current_judgments("toy")])
    assert results["bulk"] == results["row"]
    got, rows, current = results["bulk"]
    assert [r.new for r in got[1]] == [False] * 5                                  # a second import writes nothing
    assert [r.new for r in got[2]] == [False, True, True]
    assert ("1", "d1", "ann", 1) in current and ("2", "d4", "bob", 1) in current   # the last row of an item wins
    assert [(r.new, r.grade) for r in got[4]] == [(True, 1), (False, 1)]  # a3 skipped: reports d1's row, current then


def test_bulk_declines_what_only_the_row_path_decides(tmp_path, monkeypatch):
    monkeypatch.setattr(bulk, "BULK_MIN", 1)
    s = _store(tmp_path / "wb.duckdb")
    s.judgments.record_judgments(_items(A), collection="toy", pool_version="p1", lead="boss")
    with s.transaction() as cur:
        users = {"boss", "ann", "bob"}
        assert bulk.record_bulk(cur, _items(C), collection="toy", pool_version="p1", rubric=read_rubric(cur, "toy"),
                                known_users=users) is not None     # a3 skipped, c1 appended (same item): stays bulk
        assert bulk.record_bulk(cur, _items([A[0], A[0]]), collection="toy", pool_version="p1",
                                rubric=read_rubric(cur, "toy"), known_users=users) is None   # one token twice


def test_bulk_errors_are_the_row_paths(tmp_path, monkeypatch):
    monkeypatch.setattr(bulk, "BULK_MIN", 1)
    s = _store(tmp_path / "wb.duckdb")
    before = _rows(s)
    with pytest.raises(UnknownNameError, match="unknown topic of collection 'toy' '9'"):
        s.judgments.record_judgments(_items([A[0], ("9", "d1", "ann", 1, "", "z1")]), collection="toy", pool_version="p1",
                           lead="boss")
    with pytest.raises(UnknownNameError, match="unknown user 'eve'"):
        s.judgments.record_judgments(_items([("1", "d1", "eve", 1, "", "z2")]), collection="toy", pool_version="p1",
                           lead="boss")
    with pytest.raises(ValidationError, match="grade"):
        s.judgments.record_judgments(_items([("1", "d1", "ann", 7, "", "z3")]), collection="toy", pool_version="p1",
                           lead="boss")
    assert _rows(s) == before                                                    # nothing half-written
