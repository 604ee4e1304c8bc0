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
