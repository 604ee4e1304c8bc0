"""Issue 14's commands follow issue 9's rules: a failing ``strategy``, ``assign --strategy``,
``judge-with-model``, ``simulate`` or ``pool reusability`` leaves the store and its folder exactly
as they were, and a usage mistake exits 2, bad input 1."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.cli.test_failing_writes_nothing import snapshot
from tests.cli.tiny import LEAD_TOKEN
from workbench.cli import main

LEAD = ["--lead", "lead", "--token", LEAD_TOKEN]


def _cases(folder: Path) -> dict[str, tuple[int, list[str]]]:
    """case -> (expected exit code, argv)."""
    (folder / "a-file").write_text("x\n")
    return {
        "strategy unknown name": (2, ["strategy", "tiny-pool-v1", "greedy", *LEAD]),
        "strategy bad stopping rule": (2, ["strategy", "tiny-pool-v1", "mtf", "--stop", "knee(x=1)", *LEAD]),
        "strategy zero budget": (2, ["strategy", "tiny-pool-v1", "mtf", "--budget", "0", *LEAD]),
        "strategy wrong token": (1, ["strategy", "tiny-pool-v1", "mtf", "--lead", "lead", "--token", "nope-123"]),
        "strategy without --lead": (2, ["strategy", "tiny-pool-v1", "mtf"]),
        "strategy bad --topic-budget": (2, ["strategy", "tiny-pool-v1", "mtf", "--topic-budget", "3=x", *LEAD]),
        "assign --strategy unknown": (2, ["assign", "tiny-pool-v1", "--assessors", "ann", "--strategy", "greedy",
                                          *LEAD]),
        "assign --stop bad": (2, ["assign", "tiny-pool-v1", "--assessors", "ann", "--strategy", "mtf",
                                  "--stop", "nope", *LEAD]),
        "judge-with-model bad mapping": (1, ["judge-with-model", "tiny-pool-v1", "--model", "minilm", "--as", "m1",
                                             "--grades", "0:<x,1", *LEAD]),
        "judge-with-model grade off the rubric": (1, ["judge-with-model", "tiny-pool-v1", "--model", "minilm",
                                                      "--as", "m1", "--grades", "0:<0.3,9", *LEAD]),
        "judge-with-model --as a person": (1, ["judge-with-model", "tiny-pool-v1", "--model", "minilm", "--as",
                                               "ann", *LEAD]),
        "judge-with-model no such model": (1, ["judge-with-model", "tiny-pool-v1", "--model",
                                               str(folder / "no-model"), "--as", "m1", *LEAD]),
        "simulate --plot bad suffix": (1, ["simulate", "tiny-pool-v1", "--oracle", "tiny-reference",
                                           "--plot", str(folder / "curve.exe")]),
        "simulate --qrels-out onto a file": (1, ["simulate", "tiny-pool-v1", "--oracle", "tiny-reference",
                                                 "--qrels-out", str(folder / "a-file")]),
        "simulate --format xml": (2, ["simulate", "tiny-pool-v1", "--oracle", "tiny-reference", "--format", "xml"]),
        "pool reusability --format xml": (2, ["pool", "reusability", "tiny-pool-v1", "--qrels", "tiny-reference",
                                              "--format", "xml"]),
    }


def _case_names() -> list[str]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return list(_cases(Path(tmp)))


@pytest.mark.parametrize("case", _case_names())
def test_a_failing_judging_order_command_changes_nothing(tiny_template, tmp_path, case, capsys):
    folder, db = tiny_template
    work = tmp_path / "project"
    shutil.copytree(folder, work, ignore=shutil.ignore_patterns("*.waiting", "*.holder.json"))
    wdb = work / db.relative_to(folder)
    expected, argv = _cases(work)[case]
    before = snapshot(wdb)
    listing = sorted(p.name for p in work.iterdir())
    cwd = os.getcwd()
    os.chdir(work)
    try:
        code = main(["--db", str(wdb), *argv])
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert code == expected, (case, err)
    assert "Traceback" not in err and "error" in err.lower()
    assert snapshot(wdb) == before, (case, err)
    assert sorted(p.name for p in work.iterdir()) == listing, case


def test_assign_with_a_bad_strategy_assigns_nothing_and_a_good_one_assigns(tiny_template, tmp_path):
    folder, db = tiny_template
    work = tmp_path / "project"
    shutil.copytree(folder, work, ignore=shutil.ignore_patterns("*.waiting", "*.holder.json"))
    wdb = work / db.relative_to(folder)
    assert main(["--db", str(wdb), "-q", "users", "add", "cy", "--token", "cy-token-123", "--lead", "lead",
                 "--lead-token", LEAD_TOKEN]) == 0
    before = snapshot(wdb)
    assert main(["--db", str(wdb), "assign", "tiny-pool-v1", "--assessors", "cy", "--strategy", "cal(batch=0)",
                 *LEAD]) == 2  # a bad option value: usage
    assert snapshot(wdb) == before
    assert main(["--db", str(wdb), "assign", "tiny-pool-v1", "--assessors", "cy", "--strategy", "mtf",
                 *LEAD]) == 0
    assert snapshot(wdb) != before
