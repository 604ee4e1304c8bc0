"""`workbench rubric define FILE.toml`: lead only, versions, judgments recording their rubric version,
and the schema migration (step 3) that added ``rubric_version``."""

from __future__ import annotations

import pytest

from tests.old_schema import store_at_schema
from workbench.cli import main
from workbench.store import SCHEMA_VERSION, Store
from workbench.types import Judgment

RUBRIC = """\
name = "three"
source = "a three-point scale for tests"
relevant_from = 1

[[grades]]
grade = 0
label = "no"
definition = "Not relevant."

[[grades]]
grade = 1
label = "partly"
definition = "Partly relevant."

[[grades]]
grade = 2
label = "yes"
definition = "Relevant."
"""


@pytest.fixture
def db(toy_pool):
    path = toy_pool({"1": {"d1": 3.0, "d2": 2.0}, "2": {"d3": 1.0}})
    assert main(["--db", str(path), "users", "add", "boss", "--role", "lead", "--token", "boss-token"]) == 0
    assert main(["--db", str(path), "users", "add", "ann", "--token", "ann-token-1", "--lead", "boss",
                 "--lead-token", "boss-token"]) == 0
    return path


def wb(db, *args):
    return main(["--db", str(db), *[str(a) for a in args]])


def test_define_version_and_judgments_record_it(db, tmp_path, capsys):
    f = tmp_path / "three.toml"
    f.write_text(RUBRIC)
    capsys.readouterr()
    assert wb(db, "rubric", "define", f, "--lead", "ann", "--token", "ann-token-1") == 1
    assert "define a rubric: only a lead may do this" in capsys.readouterr().err
    assert wb(db, "rubric", "define", f, "--lead", "boss", "--token", "boss-token") == 0
    out = capsys.readouterr().out
    assert out.startswith("rubric defined 'three': version 1 (three@1), 3 grades [0, 1, 2], relevant from 1")
    assert wb(db, "rubric", "define", f, "--lead", "boss", "--token", "boss-token") == 0
    assert capsys.readouterr().out.startswith("rubric unchanged: 'three': version 1 (three@1)")

    assert wb(db, "rubric", "toy", "three", "--lead", "boss", "--token", "boss-token") == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["0\tno\tNot relevant.", "1\tpartly\tPartly relevant.",
                                                        "2\tyes\tRelevant."]
    store = Store(db, client="test")
    store.judgments.record_judgment(Judgment("1", "d1", "ann", 2), collection="toy", pool_version="p1")

    f.write_text(RUBRIC.replace('definition = "Relevant."', 'definition = "Fully relevant."'))
    assert wb(db, "rubric", "define", f, "--lead", "boss", "--token", "boss-token") == 0
    out = capsys.readouterr().out
    assert out.startswith("rubric new version of 'three': version 2 (three@2)")
    assert "previous version 1 kept; judgments made under it keep three@1" in out
    assert "collections judged on it (now version 2): toy" in out
    store.judgments.record_judgment(Judgment("1", "d2", "ann", 1), collection="toy", pool_version="p1")
    rows = {(j.doc_id, j.rubric_version) for j in store.judgments.judgment_rows("toy", "p1")}
    assert rows == {("d1", "three@1"), ("d2", "three@2")}
    assert [v.version for v in store.rubrics.rubric_versions("three")] == [1, 2]

    # a version that drops grade 2, still held by a current judgment, is refused
    f.write_text(RUBRIC.split("[[grades]]\ngrade = 2")[0])
    assert wb(db, "rubric", "define", f, "--lead", "boss", "--token", "boss-token") == 1
    assert "expected every current grade in its scale [0, 1], found grade 2 in 1 current judgment(s)" in \
        capsys.readouterr().err

    assert wb(db, "rubric", "list") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "rubric\tversion\tgrades\trelevant_from\tsource"
    assert [ln.split("\t")[:3] for ln in lines[1:]][-1] == ["three", "three@2", "0,1,2"]
    assert [ln.split("\t")[0] for ln in lines[1:]] == ["binary", "cranfield", "default", "three"]


def test_define_errors_name_file_and_line(db, tmp_path, capsys):
    f = tmp_path / "bad.toml"
    f.write_text(RUBRIC.replace("grade = 2", "grade = 1"))
    assert wb(db, "rubric", "define", f, "--lead", "boss", "--token", "boss-token") == 1
    assert capsys.readouterr().err.strip() == (
        f"workbench: error: {f}:16: expected each grade once, found grade 1 again (grade entry 2). "
        "Fix the rubric file.")


def test_a_schema_1_store_is_migrated_through_every_step_and_keeps_its_judgments(tmp_path):
    path = tmp_path / "old.duckdb"
    with store_at_schema(path, 1) as con:
        con.execute("INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade) VALUES ('c', '1', 'd', 'a', 2)")
    store = Store(path, client="test")
    assert store.schema_version() == SCHEMA_VERSION  # every step ran, the rubric one included
    with store.connection() as cur:
        assert cur.execute("SELECT grade, rubric_version FROM current_judgments").fetchall() == [(2, "")]
