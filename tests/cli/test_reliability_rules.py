"""Inputs that break numbers later, wrong results, and messages (issue 9), through ``main(argv)``.

Each test reproduces one reported defect on a tiny project (``tests.cli.tiny``).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys
import threading
from pathlib import Path

import pytest

from tests.cli.helpers import copy_project, run
from tests.cli.tiny import LEAD_TOKEN
from workbench.cli import common


@pytest.fixture
def template(tiny_template):
    return tiny_template


@pytest.fixture
def project(template, tmp_path):
    """A private copy of the tiny project: (folder, store path)."""
    return copy_project(template, tmp_path / "p")



def _sql(db: Path, *statements: str) -> None:
    import duckdb

    with duckdb.connect(str(db)) as con:
        for s in statements:
            con.execute(s)


def _strict_json(text: str) -> object:
    def refuse(name: str) -> None:
        raise AssertionError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


# -- inputs that break numbers later --------------------------------------------------------------


def test_qrels_import_refuses_a_grade_off_the_rubric_with_file_line_and_range(project, capsys):
    folder, db = project
    bad = folder / "huge.qrels"
    bad.write_text("1 0 d1 1\n2 0 d2 2147483647\n3 0 d4 7\n")
    code, _out, err = run(capsys, db, "qrels", "import", bad, "--name", "huge", "--collection", "tiny")
    assert code == 1
    assert f"{bad}:2: expected a grade of collection 'tiny''s rubric 'default' (0 to 3), found grade 2147483647" in err
    assert "2 of 3 entries are off the scale" in err and "workbench rubric tiny" in err
    code, out, _err = run(capsys, db, "qrels", "list", "--format", "jsonl")
    assert "huge" not in out


def test_ingest_warns_about_reference_grades_off_the_rubric(tmp_path, capsys):
    src = tmp_path / "wide"
    src.mkdir()
    (src / "corpus.jsonl").write_text('{"_id": "d1", "title": "a", "text": "laminar flow"}\n'
                                      '{"_id": "d2", "title": "b", "text": "heat"}\n')
    (src / "queries.jsonl").write_text('{"_id": "1", "text": "laminar"}\n')
    (src / "qrels.reference.txt").write_text("1 0 d1 2147483647\n1 0 d2 0\n")
    code, out, err = run(capsys, tmp_path / "wb.duckdb", "ingest", src)
    assert code == 0, err
    assert ("warning: 1 qrels entries hold grades off the rubric 'default' of collection 'wide' (0 to 3): "
            "2147483647.") in out + err


def test_json_output_never_holds_nan_or_infinity(project, capsys):
    folder, db = project
    huge = folder / "huge.qrels"  # a qrels *file* is not bound to a rubric: 2^grade overflows
    huge.write_text("1 0 d1 2147483647\n1 0 d3 1\n2 0 d5 1\n3 0 d4 1\n")
    code, out, err = run(capsys, db, "score", folder / "imported.trec", "--qrels", huge, "-m",
                         "nDCG(dcg='exp-log2')@10", "-m", "Judged@10", "--format", "json", "--per-topic")
    assert code == 0, err
    doc = _strict_json(out)
    run_doc = doc["runs"][0] if isinstance(doc, dict) and "runs" in doc else doc
    assert "NaN" not in out and "Infinity" not in out
    assert run_doc is not None
    for fmt in ("jsonl",):
        code, out, err = run(capsys, db, "score", folder / "imported.trec", "--qrels", huge, "-m",
                             "nDCG(dcg='exp-log2')@10", "--format", fmt, "--per-topic")
        assert code == 0, err
        rows = [_strict_json(line) for line in out.splitlines() if line.strip()]
        assert any(r.get("value", 0) is None for r in rows if isinstance(r, dict))


def test_run_import_says_how_many_duplicate_lines_it_dropped(project, capsys):
    folder, db = project
    f = folder / "dups.trec"
    f.write_text("1 Q0 d1 1 3.0 dup\n1 Q0 d1 2 2.0 dup\n1 Q0 d3 3 1.0 dup\n2 Q0 d5 1 1.0 dup\n2 Q0 d5 1 1.0 dup\n"
                 "1 Q0 d3 4 0.5 dup\n")
    code, _out, err = run(capsys, db, "run", "import", f, "--name", "dups", "--collection", "tiny")
    assert code == 0, err
    assert f"3 duplicate line(s) in {f} dropped" in err


@pytest.mark.parametrize("argv", [
    ["run", "import", "{folder}/imported.trec", "--name", "bad\x1b[31mred", "--collection", "tiny"],
    ["run", "fuse", "bm25", "bm25b", "--name", "fu\x1bsed"],
    ["qrels", "import", "{folder}/tiny/qrels.reference.txt", "--name", "q\rx", "--collection", "tiny"],
    ["pool", "build", "--depth", "2", "bm25b", "--name", "p\x1b]0;title\x07"],
])
def test_names_with_control_characters_are_refused(project, capsys, argv):
    folder, db = project
    code, _out, err = run(capsys, db, *[a.replace("{folder}", str(folder)) for a in argv])
    assert code == 2  # a bad --name is a usage error, refused while the command line is parsed
    assert "'--name'" in err and "expected no control characters" in err
    assert "\x1b" not in err and "\r" not in err and "\x07" not in err  # shown escaped, not interpreted
    assert "\\x1b" in err or "\\x0d" in err


def test_control_characters_from_an_old_store_are_escaped_on_a_terminal_only(project, capsys, monkeypatch):
    _folder, db = project
    _sql(db, "UPDATE runs SET description = 'evil \x1b[2J\x1b[31m' WHERE run_name = 'imp'")
    monkeypatch.setattr(common, "_is_terminal", lambda stream: True)
    code, out, _err = run(capsys, db, "run", "list")
    assert code == 0 and "\x1b" not in out and "evil \\x1b[2J\\x1b[31m" in out
    monkeypatch.setattr(common, "_is_terminal", lambda stream: False)
    code, out, _err = run(capsys, db, "run", "list", "--format", "tsv")  # a pipe gets the data as stored
    assert code == 0 and "evil \x1b[2J\x1b[31m" in out


@pytest.mark.parametrize("argv", [
    ["score", "bm25", "--qrels", "tiny-reference"],
    ["qrels", "export", "tiny-reference", "--out", "{folder}/ref.qrels"],
    ["qrels", "diff", "tiny-reference", "tiny-reference"],
])
def test_a_tampered_qrels_version_is_refused_when_read(project, capsys, argv):
    folder, db = project
    _sql(db, "UPDATE qrels_entries SET grade = 3 WHERE qrels_version = 'tiny-reference' AND doc_id = 'd2' "
             "AND topic_id = '1'")
    code, out, err = run(capsys, db, *[a.replace("{folder}", str(folder)) for a in argv])
    assert code == 1, (out, err)
    assert "qrels version 'tiny-reference' no longer matches its content hash" in err
    assert "changed outside the workbench" in err and err.count("\n") == 1
    assert not (folder / "ref.qrels").exists()


def test_an_untouched_qrels_version_passes_its_hash_check(project, capsys):
    _folder, db = project
    code, out, err = run(capsys, db, "score", "bm25", "--qrels", "tiny-reference", "-m", "R@5", "--format", "csv")
    assert code == 0, err


def test_a_store_with_a_missing_view_is_one_error_naming_the_store(project, capsys):
    _folder, db = project
    _sql(db, "DROP VIEW current_judgments")
    code, _out, err = run(capsys, db, "agreement", "tiny-pool-v1")
    assert code == 1
    assert err.strip() == (f"workbench: error: {db}: the store is damaged: expected the workbench's tables and "
                           "views, found 1 missing (view current_judgments); it was changed outside the "
                           "workbench. Restore it from a backup.")


def test_a_truncated_store_file_is_one_error_naming_the_store(project, capsys):
    _folder, db = project
    size = db.stat().st_size
    with open(db, "r+b") as f:
        f.truncate(size // 3)
    for cmd in (["collections"], ["run", "list"], ["qrels", "list"], ["pool", "list"]):
        code, _out, err = run(capsys, db, *cmd)
        assert "Traceback" not in err
        if code:
            assert code == 1 and err.startswith(f"workbench: error: {db}") and err.count("\n") == 1, err


# -- wrong results ---------------------------------------------------------------------------------


def test_pool_extend_without_from_requires_it_when_there_are_two_lineages(project, capsys):
    _folder, db = project
    code, out, err = run(capsys, db, "pool", "extend", "imp")  # one lineage: its newest pool
    assert code == 0, err
    assert "child of tiny-pool-v1" in err
    code, out, err = run(capsys, db, "pool", "build", "--depth", "2", "bm25b", "--name", "other-root")
    assert code == 0, err
    code, out, err = run(capsys, db, "pool", "extend", "bm25b")
    assert code == 1
    assert "collection 'tiny' has 2 pool lineages (tiny-pool-v1: tiny-pool-v1 -> tiny-pool-v2; other-root: " \
           "other-root); say which pool to extend with --from, one of the newest: tiny-pool-v2, other-root" in err
    code, out, err = run(capsys, db, "pool", "extend", "imp", "--from", "other-root")
    assert code == 0, err


def test_score_zero_scores_judged_0_for_a_topic_with_no_results_as_the_help_and_header_say(project, capsys):
    # Issue 26: help, header and behaviour say one thing: --missing zero scores every measure 0, Judged@k too.
    folder, db = project
    partial = folder / "partial.trec"
    partial.write_text("1 Q0 d1 1 2.0 part\n1 Q0 d3 2 1.0 part\n2 Q0 d5 1 1.0 part\n")  # no topic 3
    code, out, err = run(capsys, db, "score", partial, "--qrels", "tiny-reference", "-m", "Judged@2",
                         "--missing", "zero", "--format", "json", "--per-topic")
    assert code == 0, err
    text = json.dumps(_strict_json(out))
    assert "undefined" not in text
    code, out, err = run(capsys, db, "score", partial, "--qrels", "tiny-reference", "-m", "Judged@2",
                         "--missing", "zero")
    assert code == 0, err
    assert "zero (qrels topics without results score 0 on every measure, Judged@k too)" in out
    assert "3 evaluated (every measure and run averaged over the same topics)" in out
    # topic 1: d1 judged, d3 not (1/2); topic 2: d5 judged, one returned (1/1); topic 3: nothing (0)
    assert re.search(rf"^Judged@2 +{(1 / 2 + 1 / 1 + 0) / 3:.4f}", out, re.M), out
    code, out, err = run(capsys, db, "score", "--help")
    assert "Judged@k too" in " ".join(out.split())


def test_misses_warns_when_k_is_deeper_than_the_run(project, capsys):
    _folder, db = project
    code, _out, err = run(capsys, db, "misses", "bm25", "--qrels", "tiny-reference", "--k", "200")
    assert code == 0, err
    assert "--k 200 is deeper than run 'bm25', which returns at most" in err
    code, _out, err = run(capsys, db, "misses", "bm25", "--qrels", "tiny-reference", "--k", "2")
    assert "deeper than" not in err


# -- messages --------------------------------------------------------------------------------------


def test_a_fifo_as_run_file_is_refused_at_once(project, tmp_path, capsys):
    _folder, db = project
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    for argv in (["run", "import", fifo, "--name", "ff", "--collection", "tiny"],
                 ["score", fifo, "--qrels", "tiny-reference"],
                 ["score", "bm25", "--qrels", fifo],
                 ["qrels", "import", fifo, "--name", "qf", "--collection", "tiny"],
                 ["pool", "files", fifo]):
        result: list[tuple[int, str, str]] = []
        worker = threading.Thread(target=lambda argv=argv, result=result: result.append(run(capsys, db, *argv)),
                                  daemon=True)
        worker.start()
        worker.join(timeout=60)
        if worker.is_alive():  # it blocked on the FIFO: give it a writer so the thread ends, then fail
            with open(fifo, "w"):
                pass
            worker.join(timeout=60)
            pytest.fail(f"{argv}: blocked on the FIFO")
        code, _out, err = result[0]
        assert code == 1, (argv, err)
        assert f"{fifo}: expected a regular file, found a FIFO (named pipe). Pass a file, or - to read " \
               "standard input." in err, (argv, err)


def test_a_run_file_on_standard_input_is_scored(project, capsys, monkeypatch):
    folder, db = project
    from workbench.formats import trec

    monkeypatch.setattr(trec, "_STDIN", None)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((folder / "imported.trec").read_bytes())))
    code, out, err = run(capsys, db, "score", "-", "--qrels", "tiny-reference", "-m", "R@5", "--format", "csv")
    assert code == 0, err
    assert "R@5" in out and "imp" in out


def test_plot_into_an_unwritable_folder_names_the_target(project, capsys):
    _folder, db = project
    code, _out, err = run(capsys, db, "score", "bm25", "--qrels", "tiny-reference", "--plot", "/proc/x.png")
    assert code == 1
    assert err.startswith("workbench: error: --plot /proc/x.png: cannot create a file in /proc")
    assert ".tmp" not in err


def _small_cranfield(root: Path) -> Path:
    """Two documents, one query, one judgment in the SMART layout (runs without the raw Cranfield files)."""
    src = root / "raw"
    src.mkdir()
    (src / "cran.all.1400").write_text(
        ".I 1\n.T\nwings\n.A\nsmith\n.B\nj. aero 1\n.W\nlift of wings\n"
        ".I 2\n.T\ndrag\n.A\njones\n.B\nj. aero 2\n.W\ndrag at speed\n")
    (src / "cran.qry").write_text(".I 001\n.W\nlift of wings .\n")
    (src / "cranqrel").write_text("1 1 2\n")
    return src


def test_convert_cranfield_messages_say_what_was_found(tmp_path, capsys):
    raw = _small_cranfield(tmp_path)
    part = tmp_path / "part"
    part.mkdir()
    shutil.copy(raw / "cran.qry", part)
    a_file = tmp_path / "bm25.trec"
    a_file.write_text("x\n")
    db = tmp_path / "unused.duckdb"
    code, _out, err = run(capsys, db, "convert", "cranfield", part, tmp_path / "out")
    assert code == 1
    assert (f"{part}: expected cran.all.1400, cran.qry and cranqrel in this folder, found cran.qry; "
            "missing: cran.all.1400, cranqrel.") in err
    code, _out, err = run(capsys, db, "convert", "cranfield", raw, a_file)
    assert code == 1 and f"DEST {a_file}: expected a folder (new or existing), found a file" in err
    assert a_file.read_text() == "x\n"
    code, _out, err = run(capsys, db, "convert", "cranfield", a_file, tmp_path / "out")
    assert code == 1 and f"{a_file}: expected a folder with cran.all.1400, cran.qry and cranqrel, found a file" in err
    code, _out, err = run(capsys, db, "ingest", a_file)
    assert code == 1 and f"{a_file}: expected a collection folder, found a file" in err
    assert not db.exists() and not (tmp_path / "out").exists()
    code, _out, err = run(capsys, db, "convert", "cranfield", raw, tmp_path / "out")  # the same files convert
    assert code == 0, err


# -- exit codes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "expected"), [
    (["collections"], 0),
    (["score", "bm25", "--qrels", "tiny-reference", "-m", "R@5", "--format", "csv"], 0),
    (["score", "bm25", "--qrels", "tiny-reference", "--format", "xml"], 2),
    (["score", "bm25", "--qrels", "tiny-reference", "--missing", "maybe"], 2),
    (["run", "list", "--format", "xml"], 2),
    (["pool", "stats", "tiny-pool-v1", "--table", "nope"], 2),
    (["users", "add", "zed", "--role", "boss", "--lead", "lead", "--lead-token", LEAD_TOKEN], 2),
    (["score", "bm25", "--bogus-option"], 2),
    (["run", "export"], 2),
    (["no-such-command"], 2),
    (["score", "bm25", "--qrels", "tiny-reference", "--k", "x"], 2),
    (["score", "bm25", "--qrels", "tiny-reference", "--k", "0"], 2),
    (["score", "nope", "--qrels", "tiny-reference"], 1),
    (["run", "import", "/nonexistent.trec", "--name", "x", "--collection", "tiny"], 1),
    (["pool", "build", "--depth", "0", "bm25"], 2),
    (["pool", "build", "--depth", "3", "bm25", "nope"], 1),
    (["qrels", "show", "nope"], 1),
])
def test_one_exit_code_convention(project, capsys, argv, expected):
    _folder, db = project
    code, _out, err = run(capsys, db, *argv)
    assert code == expected, err


def test_stdin_dash_is_read_once_for_a_run(monkeypatch, project, capsys):
    folder, db = project
    from workbench.formats import trec

    monkeypatch.setattr(trec, "_STDIN", None)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((folder / "imported.trec").read_bytes())))
    code, _out, err = run(capsys, db, "run", "import", "-", "--name", "from-stdin", "--collection", "tiny")
    assert code == 0, err
