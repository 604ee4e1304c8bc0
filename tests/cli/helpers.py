"""Helpers shared by the CLI tests."""

from __future__ import annotations

import shutil
from pathlib import Path

from workbench.cli import main


def cli(capsys, *argv: object) -> tuple[int, str, str]:
    """Run ``workbench ARGV...`` in-process: (exit code, stdout, stderr); arguments are passed as ``str``."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run(capsys, db: Path, *argv: object) -> tuple[int, str, str]:
    """``cli`` against the store ``db`` (``workbench --db DB ARGV...``)."""
    return cli(capsys, "--db", db, *argv)


def copy_project(template: tuple[Path, Path], work: Path) -> tuple[Path, Path]:
    """A private copy of a project folder (``tiny_template``) at ``work``: (folder, store path);
    lease files of the process that made it are left out."""
    folder, db = template
    shutil.copytree(folder, work, ignore=shutil.ignore_patterns("*.waiting", "*.holder.json"))
    return work, work / db.relative_to(folder)
