"""The CLI edge: exit codes and messages of ``workbench.cli.main``."""

from __future__ import annotations

from workbench.cli import main


def test_usage_error_exits_2_with_usage_and_no_traceback(capsys):
    assert main(["no-such-command"]) == 2
    err = capsys.readouterr().err
    assert "No such command 'no-such-command'" in err and "Traceback" not in err


def test_workbench_error_is_one_stderr_line_and_exit_1(tmp_path, capsys):
    assert main(["--db", str(tmp_path / "wb.duckdb"), "qrels", "show", "nope"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "workbench: error: unknown qrels version 'nope'; known: (none)"
    assert not any("Traceback" in line for line in err)


def test_help_and_version_exit_0(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == "workbench 0.1.0"
    assert main(["--help"]) == 0
