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

import shutil
import sys
from pathlib import Path

import duckdb
import pytest

from tests.cli.helpers import cli

FULL = Path("/dev/full")
needs_dev_full = pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full (a device that is always full)")


@pytest.fixture
def project(tiny_template, tmp_path):
    """A copy of the tiny project: (folder, store path)."""
    folder, db = tiny_template
    work = tmp_path / "project"
    shutil.copytree(folder, work, ignore=shutil.ignore_patterns("*.waiting", "*.holder.json"))
    return work, work / db.relative_to(folder)


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


def test_a_written_report_shows_the_ids_then_recorded(project, capsys):
    _, db = project
    code, out, err = cli(capsys, "--db", db, "score", "bm25", "--qrels", "tiny-reference", "-m", "R@3")
    assert code == 0, err
    with duckdb.connect(str(db), read_only=True) as con:
        ids = [r[0] for r in con.execute("SELECT DISTINCT evaluation_id FROM evaluations").fetchall()]
    assert len(ids) == 1
    assert f"recorded   evaluation id(s) {ids[0]}" in out
