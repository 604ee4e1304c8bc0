"""Plain `workbench score` leaves marked no-answer topics out of the recall averages and reports them beside.

Collection ``toy`` (documents 1, 2, 3); topic 3 is marked ``no_answer`` in its topic metadata. Run file
(document level)::

    topic 1: 1 (0.9), 2 (0.8)      topic 2: 2 (0.8), 3 (0.3)      topic 3: 3 (0.5)

Qrels: t1 {1}, t2 {1, 2, 3}, t3 {3} (a judged-relevant document on a marked topic: the mark wins).
R@2: t1 = 1/1, t2 = 2/3, so over the answerable topics macro R@2 = (1 + 2/3) / 2 = 5/6 and micro
(1 + 2) / (1 + 3) = 3/4 (t3 would add 1/1: macro 8/9 when counted). No-answer topics: {3}; with no
threshold topic 3 is answered (a result): accuracy 0/1, false-answer rate 1/1; with --answer-threshold 0.85
topic 3 (best 0.5) abstains: accuracy 1/1, and of the answerable topics t2 (best 0.8) abstains: 1/2.
"""

from __future__ import annotations

import json

import pytest

from tests.cli.helpers import cli

RUN = "1 Q0 1 1 0.9 r\n1 Q0 2 2 0.8 r\n2 Q0 2 1 0.8 r\n2 Q0 3 2 0.3 r\n3 Q0 3 1 0.5 r\n"
QRELS = "1 0 1 1\n2 0 2 1\n2 0 1 1\n2 0 3 1\n3 0 3 1\n"


@pytest.fixture
def files(tmp_path, monkeypatch):
    from workbench.store import Store
    from workbench.types import Document, Topic

    db = tmp_path / "wb.duckdb"
    store = Store(db, client="pytest")
    store.collections.ingest_collection("toy", [Document(d, "", f"text {d}") for d in ("1", "2", "3")],
                            [Topic("1", "a"), Topic("2", "b"), Topic("3", "c")])
    store.metadata.set_topic_metadata("toy", {"3": {"no_answer": True}})
    del store
    monkeypatch.setenv("WORKBENCH_DB", str(db))
    run, qrels = tmp_path / "r.run", tmp_path / "q.txt"
    run.write_text(RUN)
    qrels.write_text(QRELS)
    return run, qrels


def test_plain_score_excludes_marked_topics_and_gives_the_no_answer_figures(capsys, files):
    run, qrels = files
    code, out, err = cli(capsys, "score", run, "--qrels", qrels, "--collection", "toy", "--measure", "R",
                         "--k", "2", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    agg = doc["runs"][0]["measures"]["R@2"]
    assert agg["macro"] == pytest.approx((1 + 2 / 3) / 2) and agg["micro"] == pytest.approx(3 / 4)
    assert agg["n_topics"] == 2
    na = doc["header"]["no_answer"]
    assert na["topics"] == ["3"] and na["source"] == "topic metadata no_answer of toy"
    r = na["runs"][0]
    assert (r["run"], r["no_answer_accuracy"], r["false_answer_rate"], r["answered"], r["abstained"]) == (
        "r", 0.0, 1.0, ["3"], [])
    assert (r["n_no_answer"], r["n_answerable"], r["answerable_abstained"]) == (1, 2, [])
    assert any("marked no-answer have relevant judgments (e.g. 3)" in w for w in doc["header"]["warnings"])


def test_the_threshold_and_the_table(capsys, files):
    run, qrels = files
    code, out, err = cli(capsys, "score", run, "--qrels", qrels, "--collection", "toy", "--measure", "R",
                         "--k", "2", "--answer-threshold", "0.85")
    assert code == 0, err
    assert "no-answer topics: 1 (topic metadata no_answer of toy); a run abstains on a topic when it returns " \
           "nothing scored above 0.85. Left out of every average above." in out
    row = next(line for line in out.splitlines() if line.startswith("r ") and "1/1" in line)
    assert row.split() == ["r", "1.0000", "1/1", "0.0000", "0/1", "1/2"]
