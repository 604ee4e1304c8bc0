"""Helpers shared by the CLI tests."""

from __future__ import annotations

from workbench.cli import main


def cli(capsys, *argv: object) -> tuple[int, str, str]:
    """Run ``workbench ARGV...`` in-process: (exit code, stdout, stderr); arguments are passed as ``str``."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err
