"""bench/ui_loop.py: a passing run's temporary folder is removed, a failing run's is kept (the loop
once filled the shared disk at about 0.4 GB per run). pytest itself is replaced by a stand-in that
fills the folder the loop gives it and exits 0 or 1."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ui_loop():
    spec = importlib.util.spec_from_file_location("ui_loop_under_test", ROOT / "bench" / "ui_loop.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_pytest(codes):
    """A stand-in for the pytest process: writes into --basetemp and --output, returns the next code."""
    it = iter(codes)

    def call(cmd, **kwargs):
        base = Path(cmd[cmd.index("--basetemp") + 1])
        (base / "store").mkdir(parents=True)
        (base / "store" / "wb.duckdb").write_bytes(b"x" * 1000)
        Path(cmd[cmd.index("--output") + 1]).mkdir(parents=True)
        code = next(it)
        kwargs["stdout"].write(f"{'1 passed' if code == 0 else '1 failed'}\n")
        return code

    return call


def test_a_passing_runs_folder_is_removed_and_a_failing_runs_kept(ui_loop, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(subprocess, "call", fake_pytest([0, 0, 1]))
    code = ui_loop.main(["--runs", "3", "--no-stress", "--log-dir", str(tmp_path)])
    assert code == 1
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["run-1.log", "run-2.log", "run-3-artifacts", "run-3-tmp", "run-3.log"]
    assert (tmp_path / "run-3-tmp" / "store" / "wb.duckdb").stat().st_size == 1000
    assert capsys.readouterr().out.startswith("2 of 3 runs passed, 2 in a row, without extra load")


def test_keep_tmp_keeps_every_runs_folder(ui_loop, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(subprocess, "call", fake_pytest([0, 0]))
    assert ui_loop.main(["--runs", "2", "--no-stress", "--keep-tmp", "--log-dir", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "run-1-artifacts", "run-1-tmp", "run-1.log", "run-2-artifacts", "run-2-tmp", "run-2.log"]
