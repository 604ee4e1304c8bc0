"""Outputs are written before the store is changed; the gate never exits 1 on an error (issue 9, QA trial).

* ``score`` writes its report (``--out`` or standard output) before recording the
  evaluations: a full disk fails the command with nothing recorded, the message
  naming the target.
* ``gate`` exits 3 (its error code, never 1 = "fail") when its report cannot be
  written, and also for a usage error in the global options before ``gate``; a
  reader that leaves early (``| head``) does not change the verdict's code.
* ``pool build`` without ``--name`` picks the default name inside the transaction
  that stores the pool, so builds running at once each get their own version.
* ``pool build --topics`` refuses a file that lists no topic before anything is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest

from tests.cli.helpers import cli, copy_project
from tests.cli.test_gate_cli import POLICY, QRELS, run_text

FULL = Path("/dev/full")
needs_dev_full = pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full (a device that is always full)")


@pytest.fixture
def project(tiny_template, tmp_path):
    """A copy of the tiny project: (folder, store path)."""
    return copy_project(tiny_template, tmp_path / "project")


def count(db: Path, table: str) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


class _Full:
    """A standard output on a full disk: every write fails with ENOSPC, as ``> /dev/full`` does."""

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        raise OSError(28, "No space left on device")

    def isatty(self) -> bool:
        return False


class _Closed(_Full):
    """A pipe whose reader has left (``| head``)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        pass


# -- A: score ------------------------------------------------------------------------------------------


@needs_dev_full
def test_score_out_on_a_full_disk_records_no_evaluation(project, capsys):
    _, db = project
    before = count(db, "evaluations")
    code, _, err = cli(capsys, "--db", db, "score", "bm25", "--qrels", "tiny-reference", "-m", "R@3",
                       "--out", FULL)
    assert code == 1, err
    assert "workbench: error: cannot read or write /dev/full: No space left on device" in err
    assert count(db, "evaluations") == before


def test_score_to_a_full_stdout_records_no_evaluation(project, capsys, monkeypatch):
    _, db = project
    before = count(db, "evaluations")
    monkeypatch.setattr(sys, "stdout", _Full())
    code, _, err = cli(capsys, "--db", db, "score", "bm25", "--qrels", "tiny-reference", "-m", "R@3")
    assert code == 1, err
    assert "workbench: error: cannot read or write standard output: No space left on device" in err
    assert count(db, "evaluations") == before


def test_score_at_a_unit_to_a_full_stdout_records_no_evaluation(project, capsys, monkeypatch):
    _, db = project
    before = count(db, "evaluations")
    monkeypatch.setattr(sys, "stdout", _Full())
    code, _, err = cli(capsys, "--db", db, "score", "bm25", "--qrels", "tiny-reference", "-m", "R@3", "--unit", "doc")
    assert code == 1, err
    assert "cannot read or write standard output: No space left on device" in err
    assert count(db, "evaluations") == before
    monkeypatch.undo()
    code, out, err = cli(capsys, "--db", db, "score", "bm25", "--qrels", "tiny-reference", "-m", "R@3", "--unit", "doc")
    assert code == 0, err
    with duckdb.connect(str(db), read_only=True) as con:
        ids = [r[0] for r in con.execute("SELECT DISTINCT evaluation_id FROM evaluations").fetchall()]
    assert len(ids) == 1 and f"[doc] recorded evaluations: {ids[0]}" in out


def test_a_written_report_shows_the_ids_then_recorded(project, capsys):
    _, db = project
    code, out, err = cli(capsys, "--db", db, "score", "bm25", "--qrels", "tiny-reference", "-m", "R@3")
    assert code == 0, err
    with duckdb.connect(str(db), read_only=True) as con:
        ids = [r[0] for r in con.execute("SELECT DISTINCT evaluation_id FROM evaluations").fetchall()]
    assert len(ids) == 1
    assert f"recorded   evaluation id(s) {ids[0]}" in out


# -- B: gate -------------------------------------------------------------------------------------------


@pytest.fixture
def gate_files(write, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "nodb" / "wb.duckdb"))
    return [write("base.run", run_text("base")), write("same.run", run_text("same")), "--qrels",
            write("q.txt", QRELS), "--policy", write("gate.toml", POLICY)]


def test_a_passing_gate_exits_0(gate_files, capsys):  # the premise of the cases below
    code, _, err = cli(capsys, "gate", *gate_files)
    assert code == 0, err


@needs_dev_full
def test_gate_out_on_a_full_disk_is_the_gates_error_3_never_fail(gate_files, capsys):
    code, _, err = cli(capsys, "gate", *gate_files, "--out", FULL)
    assert code == 3, err
    assert "cannot write the gate's report to /dev/full: No space left on device" in err


def test_gate_to_a_full_stdout_is_the_gates_error_3_never_fail(gate_files, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _Full())
    code, _, err = cli(capsys, "gate", *gate_files)
    assert code == 3, err
    assert "cannot write the gate's report to standard output: No space left on device" in err


def test_a_reader_leaving_early_keeps_the_gates_verdict(gate_files, write, capsys, monkeypatch):
    worse = write("worse.run", run_text("worse", lose={"1", "2", "3", "4", "5", "6"}))
    monkeypatch.setattr(sys, "stdout", _Closed())
    assert cli(capsys, "gate", *gate_files)[0] == 0
    monkeypatch.setattr(sys, "stdout", _Closed())
    assert cli(capsys, "gate", gate_files[0], worse, *gate_files[2:])[0] == 1


@pytest.mark.parametrize("root", [["--lock-timeout", "-1"], ["--lock-timeout", "soon"], ["--bogus"]])
def test_a_usage_error_in_the_global_options_before_gate_is_the_gates_usage_code(gate_files, capsys, root):
    code, _, err = cli(capsys, *root, "gate", *gate_files)
    assert code == 3, err
    code, _, err = cli(capsys, *root, "score", gate_files[0], "--qrels", gate_files[3])
    assert code == 2, err  # every other command: 2


@needs_dev_full
def test_gate_out_on_a_full_disk_records_no_topic_set_use(project, capsys):
    folder, db = project
    (folder / "held.txt").write_text("1\n2\n3\n")
    policy = folder / "gate.toml"
    policy.write_text('[gate]\nk = 3\nmeasures = ["R@3"]\nmin_topics = 2\nmin_topic_share = 0.1\n')
    assert cli(capsys, "--db", db, "-q", "topics", "set", "held", "--from", folder / "held.txt", "--collection",
               "tiny", "--protected")[0] == 0
    before = count(db, "topic_set_uses")
    code, _, err = cli(capsys, "--db", db, "gate", "bm25", "bm25b", "--qrels", "tiny-reference", "--policy", policy,
                       "--topic-set", "held", "--out", FULL)
    assert code == 3, err
    assert count(db, "topic_set_uses") == before


# -- C: concurrent default pool names ------------------------------------------------------------------


def test_a_pool_stored_by_another_process_meanwhile_does_not_take_the_default_name(project, capsys, monkeypatch):
    """Another build stores its pool after this one looked at the names and before it writes
    (what three `pool build` processes at once did): both succeed, each under its own number."""
    from workbench.services.runs.pooling import build_pool
    from workbench.store import Store
    from workbench.store.core import Gateway

    _, db = project
    store = Store(db)
    original = Gateway.transaction
    raced: list[str] = []

    def racing(self, purpose=""):
        if purpose.startswith("save pool") and not raced:
            raced.append(purpose)  # the other process: its whole build, in between
            raced.append(build_pool(store.pools, store.runs, ["bm25"], depth=5).info.pool_version)
        return original(self, purpose)

    monkeypatch.setattr(Gateway, "transaction", racing)
    mine = build_pool(store.pools, store.runs, ["bm25"], depth=4)
    assert mine.created and raced[1] == "tiny-pool-v2"
    assert mine.info.pool_version == "tiny-pool-v3"
    assert [p.pool_version for p in store.pools.list_pools("tiny")] == ["tiny-pool-v1", "tiny-pool-v2", "tiny-pool-v3"]
    assert {p.depth for p in store.pools.list_pools("tiny")} == {3, 4, 5}


def test_an_identical_pool_is_still_reused_and_a_taken_name_still_refused(project, capsys):
    _, db = project
    code, out, err = cli(capsys, "--db", db, "pool", "build", "--depth", "3", "bm25")
    assert code == 0 and "tiny-pool-v1 unchanged" in out, err
    code, _, err = cli(capsys, "--db", db, "pool", "build", "--depth", "4", "bm25", "--name", "tiny-pool-v1")
    assert code == 1 and "pool version 'tiny-pool-v1' already exists" in err


# -- D: empty topic selections -------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "# nothing here\n\n"])
def test_a_topics_file_listing_no_topic_is_refused_before_anything_is_written(project, capsys, text):
    folder, db = project
    empty = folder / "e.txt"
    empty.write_text(text)
    before = count(db, "pools")
    code, out, err = cli(capsys, "--db", db, "pool", "build", "bm25", "--depth", "3", "--topics", empty,
                         "--name", "py")
    assert code == 1, (out, err)
    assert f"--topics {empty.as_posix()}: the file lists no topic id" in err
    assert count(db, "pools") == before
    code, _, err = cli(capsys, "--db", db, "pool", "build", "bm25", "--depth", "3", "--name", "py")
    assert code == 0, err  # the name was not used up


def test_a_selection_that_leaves_no_topic_is_refused(project, capsys):
    import json

    from workbench.errors import ValidationError
    from workbench.services.runs.pool_topics import select_topics
    from workbench.store import Store

    folder, db = project
    bare = folder / "bare"  # a collection without qrels: no topic is judged
    bare.mkdir()
    (bare / "corpus.jsonl").write_text(json.dumps({"_id": "b1", "title": "t", "text": "x"}) + "\n")
    (bare / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "x"}) + "\n")
    assert cli(capsys, "--db", db, "-q", "ingest", bare)[0] == 0
    with pytest.raises(ValidationError, match="the selection leaves no topic of collection 'bare'"):
        store = Store(db)
        select_topics(store.collections, store.pools, store.qrels, "bare", "judged")
