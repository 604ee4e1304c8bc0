"""Honest reports on unusual qrels: positives-only qrels, and runs scored against a pool they built.

Collection "toy": topics 1 and 2, documents d1..d6. Runs a and b are pooled at
depth 2 into p1; lead "boss" judges the pool and publishes qrels "v1" (so a
and b are pool contributors for v1); "pos" is imported with grade 1 only.
"""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.store import Store

RUN_A = "1 Q0 d1 1 3 a\n1 Q0 d2 2 2 a\n1 Q0 d3 3 1 a\n2 Q0 d4 1 3 a\n2 Q0 d5 2 2 a\n"
RUN_B = "1 Q0 d3 1 3 b\n1 Q0 d1 2 2 b\n2 Q0 d6 1 3 b\n2 Q0 d4 2 2 b\n"


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(tmp_path, capsys):
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": f"t {i}"}) + "\n"
                                                 for i in range(1, 7)))
    (folder / "queries.jsonl").write_text('{"_id": "1", "text": "q one"}\n{"_id": "2", "text": "q two"}\n')
    path = tmp_path / "labels" / "wb.duckdb"
    (tmp_path / "a.trec").write_text(RUN_A)
    (tmp_path / "b.trec").write_text(RUN_B)
    (tmp_path / "pos.qrels").write_text("1 0 d1 1\n1 0 d3 1\n2 0 d4 1\n")
    (tmp_path / "judged.qrels").write_text("1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n2 0 d4 1\n2 0 d5 0\n2 0 d6 0\n")
    for args in (["ingest", folder],
                 ["run", "import", tmp_path / "a.trec", "--name", "a", "--collection", "toy"],
                 ["run", "import", tmp_path / "b.trec", "--name", "b", "--collection", "toy"],
                 ["pool", "build", "a", "b", "--depth", "2", "--name", "p1"],
                 ["users", "add", "boss", "--role", "lead", "--token", "boss-token"],
                 ["judgments", "import", tmp_path / "judged.qrels", "--pool", "p1", "--assessor", "boss",
                  "--lead", "boss", "--token", "boss-token"],
                 ["publish", "p1", "--name", "v1", "--lead", "boss", "--token", "boss-token", "--no-export"]):
        code, _, err = run(capsys, "--db", path, *args)
        assert code == 0, (args, err)
    return path


def test_positives_only_qrels_are_said_at_import_and_in_the_score_report(db, tmp_path, capsys):
    code, out, _ = run(capsys, "--db", db, "qrels", "import", tmp_path / "pos.qrels", "--name", "pos",
                       "--collection", "toy")
    assert code == 0
    assert ("warning: the qrels hold no non-relevant judgments (every grade >= 1): Judged@k equals P@k, and every "
            "non-relevant document a run retrieves counts as unjudged (pool-novel)") in out
    code, out, _ = run(capsys, "--db", db, "score", "a", "--qrels", "pos", "-m", "Judged@2", "-m", "P@2")
    assert code == 0
    assert "warning    qrels pos: the qrels hold no non-relevant judgments (every grade >= 1)" in out
    # ... and the numbers show why: Judged@2 = P@2 on positives-only qrels
    code, out, _ = run(capsys, "--db", db, "score", "a", "--qrels", "pos", "-m", "Judged@2", "-m", "P@2",
                       "--format", "json")
    m = json.loads(out)["runs"][0]["measures"]
    assert m["Judged@2"]["macro"] == m["P@2"]["macro"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    code, out, _ = run(capsys, "--db", db, "score", "a", "--qrels", "v1", "-m", "P@2")
    assert "hold no non-relevant judgments" not in out  # v1 judged d2, d5, d6 non-relevant


def test_pool_contributors_are_marked_with_the_pool_depth_beside_r_at_k(db, tmp_path, capsys):
    code, out, err = run(capsys, "--db", db, "score", "a", "b", "--qrels", "v1", "--k", "1,2,5")
    assert code == 0, err
    assert "run a: 2 topics; pool contributor (pooled at depth 2 into p1)" in out
    block = out.split("run a:")[1].split("run b:")[0]
    rows = {line.split()[0]: line for line in block.splitlines()[2:] if line.strip()}
    assert "pool depth" not in rows["R@1"]  # k < depth: no mark
    assert rows["R@2"].rstrip().endswith("pool depth 2") and rows["R@5"].rstrip().endswith("pool depth 2")
    assert ("warning    run 'a' contributed to pool p1 (depth 2) that qrels 'v1' judged: its R@k for k >= 2 is "
            "measured against relevant documents it helped find") in out
    code, out, _ = run(capsys, "--db", db, "score", "a", "--qrels", "v1", "--format", "json")
    assert json.loads(out)["runs"][0]["pool_contributor"] == {"depth": 2, "pools": ["p1"]}
    # a file run is never taken for a stored one, and imported qrels have no pool
    code, out, _ = run(capsys, "--db", db, "score", tmp_path / "a.trec", "--qrels", "v1", "--format", "json")
    assert json.loads(out)["runs"][0]["pool_contributor"] is None
    run(capsys, "--db", db, "qrels", "import", tmp_path / "judged.qrels", "--name", "full", "--collection", "toy")
    code, out, _ = run(capsys, "--db", db, "score", "a", "--qrels", "full")
    assert "pool contributor" not in out


def test_scoreboard_marks_contributors_and_positives_only_qrels(db, tmp_path, capsys):
    from workbench.services.evaluation.scoreboard import scoreboard

    store = Store(db, client="t")
    board = scoreboard(store, "v1", run_names=["a", "b"], cutoffs=(1, 2))
    assert {r: c.depth for r, c in board.contributors.items()} == {"a": 2, "b": 2}
    assert [r["pool contributor"] for r in board.measure_table()] == ["depth 2: R@k for k >= 2"] * 2
    assert any(w.startswith("run 'b' contributed to pool p1 (depth 2)") for w in board.warnings)
    run(capsys, "--db", db, "qrels", "import", tmp_path / "pos.qrels", "--name", "pos", "--collection", "toy")
    board = scoreboard(store, "pos", run_names=["a"], cutoffs=(1, 2))
    assert board.contributors == {} and board.measure_table()[0]["pool contributor"] == ""
    assert board.warnings == ("qrels pos: the qrels hold no non-relevant judgments (every grade >= 1): Judged@k "
                              "equals P@k, and every non-relevant document a run retrieves counts as unjudged "
                              "(pool-novel)",)
