"""Bad input found by the breaker's trial (issue 26), end to end: one short error line naming the file and
line (never a traceback, never a change to the store), and the warnings about odd rank columns and topic lists.

The readers' own cases are in ``tests/formats/test_bad_input.py`` and ``tests/formats/test_rank_column.py``.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.cli.helpers import run
from tests.cli.test_failing_writes_nothing import snapshot
from tests.cli.tiny import LEAD_TOKEN
from workbench.cli import common, outcome
from workbench.errors import WorkbenchError

BIG = "x" * 10_000_000
SHORT = 1_000


@pytest.fixture
def project(tiny_template, tmp_path):
    folder, db = tiny_template
    work = tmp_path / "project"
    shutil.copytree(folder, work, ignore=shutil.ignore_patterns("*.waiting", "*.holder.json"))
    return work, work / db.relative_to(folder)


def _refused(capsys, db, *argv) -> str:
    """The stderr of a command that must fail: exit 1, short, no traceback, the store unchanged."""
    before = snapshot(db)
    code, _, err = run(capsys, db, *argv)
    assert code == 1, err[:500]
    assert len(err) < SHORT and "Traceback" not in err, err[:500]
    assert snapshot(db) == before
    return err


# -- 1. a filter of 5,000 parentheses ---------------------------------------------------------------------------


def test_filters_import_refuses_5000_parentheses_naming_file_line_and_the_limit(project, capsys):
    work, db = project
    f = work / "f.csv"
    f.write_text("topic_id,filter\n\n2," + "(" * 5000 + "year <= 1956" + ")" * 5000 + "\n")
    err = _refused(capsys, db, "filters", "import", f, "--collection", "tiny")
    assert err.startswith(f"workbench: error: {f}:3: topic '2': filter '((((")
    assert "column 101: expected parentheses and 'not's nested at most 100 deep, found deeper nesting here" in err


def test_filters_import_of_a_10_mb_filter_names_file_and_line_and_stays_short(project, capsys):
    work, db = project
    f = work / "f.jsonl"  # JSON lines: no cell limit, the 10 MB filter reaches the parser
    f.write_text("\n" + json.dumps({"topic_id": "3", "filter": f'source = "{BIG}" and'}) + "\n")
    err = _refused(capsys, db, "filters", "import", f, "--collection", "tiny")
    assert err.startswith(f"workbench: error: {f}:2: topic '3': filter 'source = \"xxx")
    assert "(10000015 characters): column 10000016: expected a metadata key" in err


# -- 2. 10 MB values in files and options ------------------------------------------------------------------------


@pytest.mark.parametrize("argv, expected", [
    (["score", "bm25", "--qrels", "tiny-reference", "--format", BIG], "Invalid value for '--format': unknown format"),
    (["score", "bm25", "--qrels", "tiny-reference", "--k", BIG], "Invalid value for '--k': expected comma-separated"),
    (["score", "bm25", "--qrels", "tiny-reference", "-m", BIG], "unknown measure 'xxx"),
    (["run", "bm25", "--collection", BIG, "--name", "z"], "unknown collection 'xxx"),
    (["score", "bm25", "--qrels", BIG], "cannot read or write xxx"),
    (["score", "bm25", "--qrels", "tiny-reference", "--topic-set", BIG], "expected a topic set NAME or NAME@VERSION"),
])
def test_option_values_of_10_mb_are_cut(project, capsys, argv, expected):
    _, db = project
    code, _, err = run(capsys, db, *argv)
    assert code in (1, 2) and len(err) < SHORT and expected in err, err[:500]
    assert "\u2026 (10000000 characters)" in err


@pytest.mark.parametrize("name, text, argv", [
    ("r.trec", f"1 Q0 d1 1 1.0 t\n1 Q0 d2 {BIG} 1.0 t\n", ["run", "import", "{file}", "--name", "r", "--collection",
                                                            "tiny"]),
    ("r.trec", f"1 Q0 d1 1 1.0 t\n1 Q0 d2 2 {BIG} t\n", ["score", "{file}", "--qrels", "tiny-reference"]),
    ("q.txt", f"1 0 d1 1\n1 0 {BIG} 1\n", ["qrels", "import", "{file}", "--name", "q", "--collection", "tiny"]),
    ("j.jsonl", '{"topic_id": "1", "doc_id": "d1", "grade": 1}\n' + json.dumps({"topic_id": "1", "doc_id": "d2",
                                                                               "grade": 1, "note": [BIG]}) + "\n",
     ["judgments", "import", "{file}", "--pool", "tiny-pool-v1", "--assessor", "ann", "--lead", "lead", "--token",
      LEAD_TOKEN]),
    ("m.jsonl", '{"topic_id": "1", "p": 1}\n' + json.dumps({"topic_id": BIG, "p": 1}) + "\n",
     ["metadata", "import-topics", "{file}", "--collection", "tiny"]),
    ("m.csv", f"topic_id,p\n1,a\n3,{BIG}\n", ["metadata", "import-topics", "{file}", "--collection", "tiny"]),
    ("t.txt", f"1\n{BIG}\n", ["topics", "set", "smoke", "--from", "{file}", "--collection", "tiny"]),
    ("g.tsv", f"group_id\tdoc_id\ng1\td1\ng1\t{BIG}\n", ["groups", "import", "{file}", "--collection", "tiny"]),
])
def test_files_with_a_10_mb_value_are_refused_with_file_line_in_a_short_message(project, capsys, name, text, argv):
    work, db = project
    f = work / name
    f.write_text(text)
    err = _refused(capsys, db, *[a.replace("{file}", str(f)) for a in argv])
    last = err.splitlines()[-1]
    assert last.startswith(f"workbench: error: {f}:2: ") or last.startswith(f"workbench: error: {f}:3: "), err[:300]


def test_the_cli_clips_any_error_message_it_prints(capsys):
    def fails() -> int:
        raise WorkbenchError("f.txt:3: expected a value, found " + BIG + ". Fix it.")

    saved = common.STATE.debug
    common.STATE.debug = False
    try:
        assert outcome.finish(fails) == 1
    finally:
        common.STATE.debug = saved
    err = capsys.readouterr().err
    assert len(err) < 2_200 and err.startswith("workbench: error: f.txt:3: expected a value, found xxx")
    assert err.rstrip().endswith("x. Fix it.") and "characters cut)" in err


# -- 3. a JSON-lines judgment with a key given twice ----------------------------------------------------------


def test_judgments_import_refuses_a_repeated_json_key_and_stores_nothing(project, capsys):
    work, db = project
    f = work / "j.jsonl"
    f.write_text('{"topic_id": "1", "doc_id": "d1", "grade": 1}\n{"topic_id": "1", "doc_id": "d2", "grade": 0, '
                 '"grade": 2}\n')
    err = _refused(capsys, db, "judgments", "import", f, "--pool", "tiny-pool-v1", "--assessor", "ann", "--lead",
                   "lead", "--token", LEAD_TOKEN)
    assert err == (f"workbench: error: {f}:2: expected each key once in a JSON object, found 'grade' twice: which "
                   "value counts is not clear. Remove one of them.\n")


# -- 4. topic sets of ids no collection has --------------------------------------------------------------------


def test_topics_set_refuses_ids_no_collection_has_naming_the_first_ones_line(project, capsys):
    work, db = project
    f = work / "t.txt"
    f.write_text("# smoke\n1\n2\nnope\n" + "y" * 100 + "\n")
    err = _refused(capsys, db, "topics", "set", "smoke", "--from", f)
    assert err == (f"workbench: error: {f}:4: expected topic ids of collection 'tiny' (no collection holds them "
                   "all; 'tiny' holds the most, 2 of 4; pass --collection NAME to check against another), found "
                   f"'nope' and 1 other unknown id(s) (2 of 4: nope, {'y' * 60}\u2026 (100 characters)). Check the "
                   "file, or the collection.\n")
    err = _refused(capsys, db, "topics", "set", "smoke", "--from", f, "--collection", "tiny")
    assert err.startswith(f"workbench: error: {f}:4: expected topic ids of collection 'tiny', found 'nope' and 1 other")


def test_topics_set_without_collection_ties_the_set_to_the_collection_holding_its_ids(project, capsys):
    work, db = project
    f = work / "t.txt"
    f.write_text("1\n3\n")
    code, out, err = run(capsys, db, "topics", "set", "smoke", "--from", f)
    assert code == 0, err
    assert out.startswith("topic set smoke@1: created; 2 topics of collection tiny;")
    assert "topic set smoke: all 2 ids are topics of collection 'tiny'" in err


def test_topics_set_in_a_store_without_collections_is_saved_unchecked_and_says_so(tmp_path, capsys):
    f = tmp_path / "t.txt"
    f.write_text("1\n2\n")
    code, out, err = run(capsys, tmp_path / "empty.duckdb", "topics", "set", "smoke", "--from", f)
    assert code == 0 and out.startswith("topic set smoke@1: created; 2 topics;"), out + err
    assert "not checked: the store holds no collection yet" in err


# -- 5. odd rank columns, at import ---------------------------------------------------------------------------


def test_run_import_warns_about_odd_ranks_with_count_and_first_line(project, capsys):
    work, db = project
    f = work / "odd.trec"
    f.write_text("1 Q0 d1 1 2.0 t\n1 Q0 d3 1 1.0 t\n2 Q0 d5 -4 3.0 t\n3 Q0 d4 1 1.0 t\n")
    code, out, err = run(capsys, db, "run", "import", f, "--name", "odd", "--collection", "tiny")
    assert code == 0, err
    assert (f"workbench: {f}:2: 2 line(s) with a negative, too large (> 2147483647) or repeated rank within a "
            "topic; the first: rank 1 repeats line 1 of topic '1'. The ranks do not change the numbers: each topic "
            "is ordered by score (trec_eval's rule)") in err
    assert "stored run odd (imported, depth 2" in out
    plain = work / "plain.trec"
    plain.write_text("1 Q0 d1 1 2.0 t\n1 Q0 d3 2 1.0 t\n")
    code, out, err = run(capsys, db, "run", "import", plain, "--name", "plain", "--collection", "tiny")
    assert code == 0 and "rank within a topic" not in err
