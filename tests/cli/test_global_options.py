"""Global options are checked like any other: a bad value is a usage error (exit 2)."""

from __future__ import annotations

import pytest

from workbench.cli import main


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_lock_timeout_must_be_a_finite_number_of_seconds(capsys, tmp_path, value):
    # found by a robustness trial: these were accepted and the command ran
    code = main(["--db", str(tmp_path / "wb.duckdb"), "--lock-timeout", value, "collections"])
    assert code == 2
    assert "expected a number of seconds >= 0" in capsys.readouterr().err
    assert not (tmp_path / "wb.duckdb").exists()


def test_lock_timeout_zero_is_accepted(capsys, tmp_path):
    assert main(["--db", str(tmp_path / "wb.duckdb"), "--lock-timeout", "0", "collections"]) == 0


@pytest.mark.parametrize("value", ["abc", "-1", "nan", "inf", "1e999", " "])
@pytest.mark.parametrize("argv", [["collections"], ["score", "r.run", "--qrels", "q.txt"]])  # typer; fast path
def test_the_lock_timeout_variable_is_checked_like_the_option(capsys, tmp_path, monkeypatch, value, argv):
    # found by a breaker's trial: WORKBENCH_LOCK_TIMEOUT=abc ended in a ValueError traceback, -1 was taken
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.txt").write_text("1 0 a 1\n")
    (tmp_path / "r.run").write_text("1 Q0 a 1 1.0 x\n")
    monkeypatch.setenv("WORKBENCH_LOCK_TIMEOUT", value)
    code = main(["--db", str(tmp_path / "wb.duckdb"), *argv])
    assert (code, capsys.readouterr().err) == (
        2, f"workbench: error: WORKBENCH_LOCK_TIMEOUT: expected a number of seconds >= 0, got {value!r}\n")
    assert not (tmp_path / "wb.duckdb").exists()


def test_the_lock_timeout_variable_gives_the_seconds():
    from workbench.config import resolve

    assert resolve("x.duckdb", env={"WORKBENCH_LOCK_TIMEOUT": "2.5"}).lock_timeout_s == 2.5
    assert resolve("x.duckdb", env={"WORKBENCH_LOCK_TIMEOUT": "0"}).lock_timeout_s == 0.0
    assert resolve("x.duckdb", env={}).lock_timeout_s == 300.0
    assert resolve("x.duckdb", env={"WORKBENCH_LOCK_TIMEOUT": "9"}, lock_timeout_s=1.0).lock_timeout_s == 1.0
