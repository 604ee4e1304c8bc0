"""`workbench judgments import|export` and `workbench adjudicate` through ``main(argv)``.

Pool p1 of collection "toy": topic 1 pools d1, d2, d3; topic 2 pools d4, d5.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from workbench.cli import main
from workbench.store import Store

CSV = """topic_id,doc_id,grade,note,unsure,duration_ms,timestamp
1,d1,2,"on topic, mostly",,1500,2024-05-01T10:00:00Z
1,d2,,not sure,true,800,2024-05-01T10:01:00Z
1,d1,3,second look,false,300,2024-05-01T10:05:00Z
2,d9,1,,,,
"""


@pytest.fixture
def db(tmp_path):
    from pooling.pool import build_pool
    from workbench.types import Document, RunInfo, Topic

    path = tmp_path / "labels" / "wb.duckdb"
    store = Store(path, client="seed")
    run = {"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "2": {"d4": 2.0, "d5": 1.0}}
    docs = [Document(d, "", f"text {d}") for d in ("d1", "d2", "d3", "d4", "d5", "d9")]  # d9 is never pooled
    store.collections.ingest_collection("toy", docs, [Topic("1", "topic 1"), Topic("2", "topic 2")])
    version = store.collections.latest_collection_version("toy")
    store.runs.save_run(RunInfo("r", "imported", {}, 10, "toy", version), run)
    store.pools.save_pool("p1", build_pool({"r": run}, 10), collection="toy", collection_version=version)
    for args in (["users", "add", "boss", "--role", "lead", "--token", "boss-token"],
                 ["users", "add", "ann", "--token", "ann-token-1", "--lead", "boss", "--lead-token", "boss-token"],
                 ["users", "add", "bob", "--token", "bob-token-1", "--lead", "boss", "--lead-token", "boss-token"]):
        assert main(["--db", str(path), *args]) == 0
    return path


def wb(db, *args):
    return main(["--db", str(db), *[str(a) for a in args]])


LEAD = ("--lead", "boss", "--token", "boss-token")


def test_import_csv_report_idempotent_and_history(db, tmp_path, capsys):
    f = tmp_path / "ann.csv"
    f.write_text(CSV)
    capsys.readouterr()
    assert wb(db, "judgments", "import", f, "--pool", "p1", "--assessor", "ann", *LEAD, "--allow-outside-pool") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("imported 4 judgments of 'ann' into 'toy' (pool p1, rubric default@builtin-")
    assert out[0].endswith("): 4 saved, 0 already stored")
    # pooled: 1/d1, 1/d2, 1/d3, 2/d4, 2/d5; the file judged 1/d1 and 1/d2 (d9 is not pooled)
    assert out[1] == "pool coverage: 2 of 5 pooled documents (40.0%) judged by the file; 3 not covered"
    assert out[2] == "  not covered, per topic: 1: 1, 2: 2"
    assert out[3].startswith("  1 line(s) judge documents outside the pool")

    store = Store(db, client="test")
    current = {(j.topic_id, j.doc_id): j for j in store.judgments.current_judgments("toy") if j.assessor == "ann"}
    assert (current[("1", "d1")].grade, current[("1", "d1")].note, current[("1", "d1")].duration_ms) == (3, "second look", 300)
    assert current[("1", "d1")].saved_at.isoformat() == "2024-05-01T10:05:00+00:00"
    assert (current[("1", "d2")].grade, current[("1", "d2")].unsure) == (None, True)
    n = store.judgments.count_judgments("toy")

    assert wb(db, "judgments", "import", f, "--pool", "p1", "--assessor", "ann", *LEAD, "--allow-outside-pool") == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("): 0 saved, 4 already stored")
    assert store.judgments.count_judgments("toy") == n

    assert wb(db, "judgments", "export", "p1", "--history", "--format", "jsonl") == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(r["topic_id"], r["doc_id"], r["grade"]) for r in rows] == [
        ("1", "d1", 2), ("1", "d1", 3), ("1", "d2", None), ("2", "d9", 1)]  # d9: saved under p1, not pooled
    assert rows[0]["note"] == "on topic, mostly" and rows[0]["timestamp"] == "2024-05-01T10:00:00+00:00"


def test_a_grade_changed_back_by_a_reimport_is_saved_and_published(db, tmp_path, capsys):
    # Regression (issue 9, breaker): a line without a timestamp was "already stored" when ANY earlier
    # save had the same content (its save token), so importing grade 2, then 3, then 2 again left 3
    # current and published. A timeless line is what the judgment is to be now: stored unless the
    # current judgment already says it.
    f = tmp_path / "g.txt"
    reports = []
    for grade in (2, 3, 2, 2):
        f.write_text(f"1 0 d1 {grade}\n")
        capsys.readouterr()
        assert wb(db, "judgments", "import", f, "--pool", "p1", "--assessor", "ann", *LEAD) == 0
        reports.append(capsys.readouterr().out.splitlines()[0].split("): ")[1])
    assert reports == ["1 saved, 0 already stored", "1 saved, 0 already stored", "1 saved, 0 already stored",
                       "0 saved, 1 already stored"]
    store = Store(db, client="test")
    assert [j.grade for j in store.judgments.judgment_rows("toy", assessor="ann", history=True)] == [2, 3, 2]
    assert wb(db, "publish", "p1", "--name", "v1", *LEAD, "--no-export") == 0
    capsys.readouterr()
    assert wb(db, "qrels", "export", "v1", "--out", "-") == 0
    assert capsys.readouterr().out.splitlines() == ["1 0 d1 2"]
    # a UI save in between counts as the current judgment too: re-importing the file then saves again
    from workbench.types import Judgment
    store.judgments.record_judgment(Judgment("1", "d1", "ann", 0), collection="toy", pool_version="p1")
    assert wb(db, "judgments", "import", f, "--pool", "p1", "--assessor", "ann", *LEAD) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("): 1 saved, 0 already stored")
    assert [j.grade for j in store.judgments.judgment_rows("toy", assessor="ann", history=True)] == [2, 3, 2, 0, 2]


def test_export_import_round_trip_csv_jsonl_and_parquet(db, tmp_path, capsys):
    f = tmp_path / "ann.csv"
    f.write_text(CSV)
    assert wb(db, "judgments", "import", f, "--pool", "p1", "--assessor", "ann", *LEAD, "--allow-outside-pool") == 0
    for fmt in ("csv", "jsonl"):
        out = tmp_path / f"export.{fmt}"
        assert wb(db, "judgments", "export", "p1", "--assessor", "ann", "--format", fmt, "--out", out) == 0
        # a second store with the same pool: import the export, export again: the same judgments
        other = tmp_path / fmt / "wb.duckdb"
        other.parent.mkdir()
        import shutil

        shutil.copy(db, other)
        with Store(other, client="t").transaction() as cur:
            cur.execute("DELETE FROM judgments")
        assert wb(other, "judgments", "import", out, "--pool", "p1", "--assessor", "ann", *LEAD, "--allow-outside-pool") == 0
        again = tmp_path / f"again.{fmt}"
        assert wb(other, "judgments", "export", "p1", "--assessor", "ann", "--format", fmt, "--out", again) == 0
        if fmt == "csv":
            import csv

            a, b = (list(csv.DictReader(p.open())) for p in (out, again))
        else:
            a, b = ([json.loads(x) for x in p.read_text().splitlines()] for p in (out, again))
        assert _without_ids(a) == _without_ids(b) and len(a) == 3
    pq_path = tmp_path / "export.parquet"
    assert wb(db, "judgments", "export", "p1", "--format", "parquet", "--out", pq_path) == 0
    t = pq.read_table(pq_path).to_pylist()
    assert [(r["topic_id"], r["doc_id"], r["grade"], r["unsure"]) for r in t] == [
        ("1", "d1", 3, False), ("1", "d2", None, True), ("2", "d9", 1, False)]
    capsys.readouterr()
    assert wb(db, "judgments", "export", "p1", "--format", "parquet") == 2  # needs --out: usage
    assert "--format parquet writes a binary file: give --out FILE.parquet" in capsys.readouterr().err


def _without_ids(rows):
    return [{k: v for k, v in r.items() if k != "judgment_id"} for r in rows]


@pytest.mark.parametrize("text, expected", [
    ("topic_id,doc_id,grade\n1,d1,2\n7,d1,1\n",
     ":3: expected a topic of collection 'toy', found topic '7'. Check the topic ids."),
    ("topic_id,doc_id,grade\n1,d1,2\n1,d2,5\n",
     ":3: expected a grade of rubric 'default' [0, 1, 2, 3], found 5. Map the grades to the rubric"),
    ("topic_id,doc_id,grade\n1,zz,2\n",
     ":2: expected a document of collection 'toy', found doc id 'zz' (0 of 1 doc ids of the file are in the collection)"),
    ("topic_id,doc_id,grade,assessor\n1,d1,2,ann\n1,d2,1,bob\n", ":3: expected assessor 'ann' (--assessor), found 'bob'"),
    ("topic_id,doc_id,grade,unsure\n1,d1,2,maybe\n", ":2: expected unsure true or false, found 'maybe'"),
    ("topic_id,doc_id\n1,d1\n", ":1: expected a header with columns topic_id, doc_id and grade, found ['topic_id', 'doc_id']"),
    ("topic_id,doc_id,grade,timestamp\n1,d1,2,2024-05-02T00:00:00\n1,d1,1,2024-05-01T00:00:00\n",
     ":3: expected timestamps in time order for topic '1' document 'd1', found 2024-05-01T00:00:00+00:00 after "
     "2024-05-02T00:00:00+00:00 (line 2)"),
    ("topic_id,doc_id,grade\n1,d1,\n", ":2: expected a grade for topic '1' document 'd1', found none. Give a grade or set "
                                     "unsure to true."),
])
def test_import_errors_name_the_line_and_write_nothing(db, tmp_path, capsys, text, expected):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    n = Store(db, client="t").judgments.count_judgments()
    capsys.readouterr()
    assert wb(db, "judgments", "import", f, "--pool", "p1", "--assessor", "ann", *LEAD) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"workbench: error: {f}{expected}"), err
    assert Store(db, client="t").judgments.count_judgments() == n


def test_import_trec_and_jsonl_lead_only(db, tmp_path, capsys):
    t = tmp_path / "ref.qrels"
    t.write_text("1 0 d1 1\n2 0 d4 0\n")
    assert wb(db, "judgments", "import", t, "--pool", "p1", "--assessor", "bob", "--lead", "ann",
              "--token", "ann-token-1") == 1
    assert "import judgments: only a lead may do this" in capsys.readouterr().err
    assert wb(db, "judgments", "import", t, "--pool", "p1", "--assessor", "bob", *LEAD) == 0
    j = tmp_path / "x.jsonl"
    j.write_text('{"topic_id": "2", "doc_id": "d5", "grade": 2, "note": "n", "duration": 1.5}\n')
    assert wb(db, "judgments", "import", j, "--pool", "p1", "--assessor", "bob", *LEAD) == 0
    got = {(x.topic_id, x.doc_id): (x.grade, x.duration_ms) for x in Store(db, client="t").judgments.current_judgments("toy")}
    assert got == {("1", "d1"): (1, 0), ("2", "d4"): (0, 0), ("2", "d5"): (2, 1500)}
    j.write_text('{"topic_id": 2, "doc_id": "d5", "grade": 2}\n')
    assert wb(db, "judgments", "import", j, "--pool", "p1", "--assessor", "bob", *LEAD) == 1
    assert f"{j}:1: expected topic_id as a string, found 2 (int). Quote the id." in capsys.readouterr().err


def test_adjudicate_from_the_command_line(db, tmp_path, capsys):
    for who, text in (("ann", "1 0 d1 3\n1 0 d2 1\n"), ("bob", "1 0 d1 0\n1 0 d2 1\n")):
        f = tmp_path / f"{who}.qrels"
        f.write_text(text)
        assert wb(db, "judgments", "import", f, "--pool", "p1", "--assessor", who, *LEAD) == 0
    capsys.readouterr()
    assert wb(db, "adjudicate", "p1", "--list", "--format", "tsv") == 0
    assert capsys.readouterr().out.splitlines() == ["topic\tdoc\tspread\tjudgments\tadjudicated",
                                                    "1\td1\t3\tann:3 bob:0\t"]
    assert wb(db, "adjudicate", "p1", "--topic", "1", "--doc", "d1", "--grade", "2", "--rationale", " ", *LEAD) == 1
    assert "expected a rationale, found none" in capsys.readouterr().err
    assert wb(db, "adjudicate", "p1", "--topic", "1", "--doc", "d2", "--grade", "2", "--rationale", "x", *LEAD) == 1
    assert "topic '1' document 'd2' is not in the disagreement queue of pool 'p1'" in capsys.readouterr().err
    assert wb(db, "adjudicate", "p1", "--topic", "1", "--doc", "d1", "--grade", "2", "--rationale", "x",
              "--lead", "ann", "--token", "ann-token-1") == 1
    assert "only a lead may do this" in capsys.readouterr().err
    assert wb(db, "adjudicate", "p1", "--topic", "1", "--doc", "d1", "--grade", "9", "--rationale", "x", *LEAD) == 1
    assert "grade 9 is not on the 'default' scale" in capsys.readouterr().err
    assert wb(db, "adjudicate", "p1", "--topic", "1", "--doc", "d1", "--grade", "2", "--rationale",
              "covers half of the need", *LEAD) == 0
    assert capsys.readouterr().out.startswith("adjudicated topic 1 document d1: final grade 2")
    assert wb(db, "adjudicate", "p1", "--list") == 0
    assert capsys.readouterr().out.strip() == "topic  doc  spread  judgments  adjudicated"
    assert wb(db, "adjudicate", "p1", "--list", "--all", "--format", "csv") == 0
    assert capsys.readouterr().out.splitlines()[1] == "1,d1,3,ann:3 bob:0,2 by boss"
    assert wb(db, "adjudicate", "p1", "--topic", "1") == 2  # options that go together: usage
    assert "missing --doc, --grade, --rationale, --lead" in capsys.readouterr().err
