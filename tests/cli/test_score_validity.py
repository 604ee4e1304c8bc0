"""`score` and `compare` validity: slices by hand (--by), the subset notice, the refusal of paired statistics
on too few topics, status side files (files and `run import`), and the schema migration they need."""

from __future__ import annotations

import json

import pytest

from tests.cli.helpers import cli
from tests.old_schema import store_at_schema
from workbench.store import Store
from workbench.types import Document, Topic

# 6 topics; |R| = 1, 1, 3, 3, 7, 2.
QRELS = ("1 0 a 1\n2 0 b 1\n" + "".join(f"3 0 c{i} 1\n" for i in range(3)) + "".join(f"4 0 e{i} 1\n" for i in range(3))
         + "".join(f"5 0 f{i} 1\n" for i in range(7)) + "6 0 g0 1\n6 0 g1 1\n")
RUN_A = ("1 Q0 a 1 3 A\n2 Q0 x 1 3 A\n3 Q0 c0 1 3 A\n3 Q0 c1 2 2 A\n4 Q0 e0 1 3 A\n5 Q0 f0 1 3 A\n5 Q0 f1 2 2 A\n"
         "6 Q0 g0 1 3 A\n")
RUN_B = "1 Q0 a 1 3 B\n2 Q0 b 1 3 B\n3 Q0 c0 1 3 B\n4 Q0 y 1 3 B\n5 Q0 f0 1 3 B\n6 Q0 g0 1 3 B\n6 Q0 g1 2 2 B\n"


@pytest.fixture
def files(write, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "nodb" / "wb.duckdb"))
    return write("q.txt", QRELS), write("a.run", RUN_A), write("b.run", RUN_B)


def test_score_by_n_relevant_matches_a_hand_computed_table(capsys, files):
    q, a, _ = files
    code, out, _ = cli(capsys, "score", a, "--qrels", q, "-m", "R@10", "--by", "n_relevant", "--min-topics", "2",
                       "--format", "json")
    assert code == 0
    rows = json.loads(out)["slices"]["A"]["n_relevant"]["rows"]
    # R@10 of A per topic: 1, 0, 2/3, 1/3, 2/7, 1/2.
    assert [(r["value"], r["n_topics"], r["too_small"]) for r in rows] == [
        ("(all)", 6, False), ("1", 2, False), ("2-5", 3, False), ("6-20", 1, True)]
    means = {r["value"]: r["means"]["R@10"] for r in rows}
    assert means["(all)"] == pytest.approx((1 + 0 + 2 / 3 + 1 / 3 + 2 / 7 + 1 / 2) / 6)
    assert means["1"] == pytest.approx(1 / 2)
    assert means["2-5"] == pytest.approx((2 / 3 + 1 / 3 + 1 / 2) / 3)
    assert means["6-20"] == pytest.approx(2 / 7)
    code, out, _ = cli(capsys, "score", a, "--qrels", q, "-m", "R@10", "--by", "n_relevant")
    table = out[out.index("run A by n_relevant"):].splitlines()
    assert table[1].split() == ["slice", "topics", "R@10", "note"]
    assert table[2].split() == ["(all)", "6", f"{(1 + 0 + 2 / 3 + 1 / 3 + 2 / 7 + 1 / 2) / 6:.4f}"]
    assert table[3].split() == ["1", "2", "0.5000", "too", "small", "for", "statistics"]     # 2 < 5 topics
    code, out, _ = cli(capsys, "score", a, "--qrels", q, "-m", "R@10", "--by", "n_relevant", "--format", "csv")
    line = next(x for x in out.splitlines() if ",n_relevant=2-5," in x)
    assert line.startswith("A,R@10,n_relevant=2-5,") and ",3," in line


def test_score_by_an_unknown_key_lists_the_known_ones(capsys, files):
    q, a, _ = files
    code, _, err = cli(capsys, "score", a, "--qrels", q, "--by", "intent")
    assert code == 2 and "unknown slice key" in err and "n_relevant, pool_coverage, query_length" in err


def test_a_subset_report_says_so_in_its_first_line(capsys, files, write):
    q, _, _ = files
    partial = write("p.run", "1 Q0 a 1 3 P\n")
    code, out, err = cli(capsys, "score", partial, "--qrels", q, "-m", "R@10", "--missing", "exclude")
    assert code == 0
    assert out.splitlines()[0] == ("SUBSET: 1 of 6 eligible topics evaluated (16.7%); the averages are not "
                                   "comparable with full-set scores")
    assert "SUBSET" in err
    code, out, _ = cli(capsys, "score", partial, "--qrels", q, "-m", "R@10", "--missing", "exclude", "--format", "json")
    assert json.loads(out)["header"]["notice"].startswith("SUBSET: 1 of 6")
    code, out, _ = cli(capsys, "score", files[1], "--qrels", q, "-m", "R@10")
    assert not out.startswith("SUBSET")


def test_compare_refuses_paired_statistics_on_fewer_than_n_topics(capsys, files):
    q, a, b = files
    code, out, err = cli(capsys, "compare", a, b, "--qrels", q, "-m", "R@10", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["topics"] == 6 and len(doc["tests"]) == 2 and doc["refused"] == ""
    code, out, err = cli(capsys, "compare", a, b, "--qrels", q, "-m", "R@10", "--format", "json", "--min-topics", "7")
    doc = json.loads(out)
    assert code == 0 and doc["tests"] == []
    assert doc["refused"] == "paired statistics refused: 6 topics, fewer than the 7 required"
    assert len(doc["per_topic"]) == 6                                       # the differences are still listed
    code, out, err = cli(capsys, "compare", a, b, "--qrels", q, "-m", "R@10", "--min-topics", "7")
    assert "paired statistics refused: 6 topics, fewer than the 7 required (--min-topics)" in out
    assert "permutation  p" not in out


def test_compare_by_slice_lists_small_slices_without_statistics(capsys, files):
    q, a, b = files
    code, out, _ = cli(capsys, "compare", a, b, "--qrels", q, "-m", "R@10", "--by", "n_relevant", "--min-topics", "3",
                       "--format", "json")
    assert code == 0
    rows = {r["value"]: r for r in json.loads(out)["slices"]}
    # B - A per topic: 0, +1, -1/3, -1/3, -1/7, +1/2.
    assert rows["1"]["n_topics"] == 2 and rows["1"]["too_small"] and rows["1"]["p_permutation"] is None
    assert rows["2-5"]["delta"] == pytest.approx((-1 / 3 - 1 / 3 + 1 / 2) / 3) and not rows["2-5"]["too_small"]
    assert rows["2-5"]["p_holm"] == rows["2-5"]["p_permutation"]          # the only tested slice: Holm = raw
    assert rows["(all)"]["p_holm"] is None


def test_status_side_file_of_a_run_file_is_used_and_checked(capsys, files, write):
    q, a, _ = files
    run = write("s.run", RUN_A.replace("2 Q0 x 1 3 A\n", ""))
    write("s.run.status.tsv", "topic\tstatus\tlatency_ms\terror\n2\terror\t5000\tHTTP 429 rate limited\n")
    code, out, _ = cli(capsys, "score", run, "--qrels", q, "-m", "R@10", "--missing", "zero", "--format", "json")
    h = json.loads(out)["header"]
    assert code == 0 and h["runs"][0]["status_file"].endswith("s.run.status.tsv")
    assert h["completion"][0]["error"] == 1 and h["completion"][0]["rate"] == 5 / 6
    assert h["completion"][0]["failures"] == [["2", "error", "HTTP 429 rate limited", 5000.0]]
    code, out, _ = cli(capsys, "score", run, "--qrels", q, "-m", "R@10", "--missing", "zero")
    assert "complete   A: 5/6 (83.3%) eligible topics answered; 1 error, 0 empty (e.g. 2 (error: HTTP 429" in out
    write("s.run.status.tsv", "topic_id\tstatus\n1\terror\n")
    code, _, err = cli(capsys, "score", run, "--qrels", q)
    assert code == 1 and "s.run.status.tsv:2: topic '1' has status error but the run has 1 result(s)" in err
    write("s.run.status.tsv", "topic_id\tstatus\n1\tok\n1\tok\n")
    code, _, err = cli(capsys, "score", run, "--qrels", q)
    assert code == 1 and "s.run.status.tsv:3: topic '1' appears twice (first on line 2)" in err
    write("s.run.status.tsv", "topic_id\tstate\n")
    code, _, err = cli(capsys, "score", run, "--qrels", q)
    assert code == 1 and "s.run.status.tsv:1: expected a header with columns topic_id and status" in err
    write("s.run.status.tsv", "topic_id\tstatus\tlatency_ms\n1\ttimeout\t\n")
    code, _, err = cli(capsys, "score", run, "--qrels", q)
    assert code == 1 and "expected status ok, empty, error, found 'timeout'. Use error for timeouts" in err


def test_run_import_keeps_statuses_latencies_and_messages(capsys, tmp_path, write):
    db = tmp_path / "wb.duckdb"
    store = Store(db, client="pytest")
    store.collections.ingest_collection("toy", [Document(d, "", d) for d in ("a", "b", "c")],
                            [Topic("1", "one"), Topic("2", "two"), Topic("3", "three")])
    run = write("r.run", "1 Q0 a 1 2.0 r\n3 Q0 c 1 1.0 r\n")
    status = write("r.status.tsv", "topic_id\tstatus\tlatency_ms\terror\n1\tok\t12\t\n2\terror\t30000\ttimeout\n")
    code, out, err = cli(capsys, "--db", db, "run", "import", run, "--name", "r", "--collection", "toy",
                         "--status", status)
    assert code == 0, err
    assert "2 topics ok, 0 empty, 1 error" in out
    rows = {r.topic_id: r for r in store.runs.get_run_topic_statuses("r")}
    assert (rows["1"].status, rows["1"].latency_ms) == ("ok", 12.0)
    assert (rows["2"].status, rows["2"].message, rows["2"].latency_ms) == ("error", "timeout", 30000.0)
    assert (rows["3"].status, rows["3"].latency_ms) == ("ok", None)
    bad = write("bad.status.tsv", "topic_id\tstatus\n9\terror\n")
    code, _, err = cli(capsys, "--db", db, "run", "import", run, "--name", "r2", "--collection", "toy",
                       "--status", bad)
    assert code == 1 and "bad.status.tsv:2: expected a topic of collection 'toy', found '9'" in err
    assert not store.runs.has_run("r2")


def test_a_version_1_store_migrates_and_keeps_its_run_statuses(tmp_path):
    path = tmp_path / "old.duckdb"
    with store_at_schema(path, 1) as con:
        con.execute("INSERT INTO run_topics VALUES ('r', '1', 'error', 0, 'timeout')")
    store = Store(path, client="pytest")
    assert store.schema_version() >= 2
    with store.connection() as cur:
        assert cur.execute("SELECT status, message, latency_ms FROM run_topics").fetchall() == [
            ("error", "timeout", None)]
        assert cur.execute("SELECT count(*) FROM topic_sets").fetchall() == [(0,)]
