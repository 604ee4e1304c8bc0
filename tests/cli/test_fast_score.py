"""``workbench score`` without typer (``workbench.cli.fast_score``): the same call, output and exit code as typer's.

The fast path must be invisible. Each accepted command line is parsed by
both (typer's parse is read from the arguments it passes to
``score_command.run_score``); each one run both ways prints the same bytes on
stdout and stderr (elapsed seconds and evaluation ids aside) and exits with
the same code, errors included; and every other form is left to typer.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import copy_project
from workbench.cli import common, fast_score, main, root, score, score_command
from workbench.cli.fast_score import Call

ROOT = Path(__file__).resolve().parents[2]
QRELS = "1 0 a 1\n1 0 b 2\n2 0 c 1\n2 0 d 0\n3 0 e 3\n"
RUN = "1 Q0 a 1 3.0 bm25\n1 Q0 x 2 2.0 bm25\n1 Q0 b 3 2.0 bm25\n2 Q0 c 1 1.0 bm25\n2 Q0 y 2 0.5 bm25\n"


@pytest.mark.parametrize(("argv", "expected"), [
    (["score", "r.run", "--qrels", "q.txt"], Call(None, False, ("r.run",), "q.txt", {})),
    (["-q", "--db", "x.duckdb", "score", "a", "--qrels=q", "b", "--format", "json", "--missing=zero", "--rel", "2",
      "--per-topic", "--out", "o.json"],
     Call(Path("x.duckdb"), True, ("a", "b"), "q", {"fmt": "json", "missing": "zero", "rel": 2, "per_topic": True,
                                                     "out": Path("o.json")})),
    (["--quiet", "--db=d", "score", "--no-per-topic", "--qrels", "q", "r", "--format=tsv"],
     Call(Path("d"), True, ("r",), "q", {"per_topic": False, "fmt": "tsv"})),
])
def test_plain_forms_are_parsed(argv, expected):
    assert fast_score.parse(argv) == expected


@pytest.mark.parametrize("argv", [
    ["score", "r", "--qrels", "q", "--k", "5"],            # an option the fast path does not take
    ["score", "r", "--qrels", "q", "-m", "R@5"],
    ["score", "--help"], ["score", "r", "--qrels", "q", "--help"],
    ["score", "r"], ["score", "--qrels", "q"], ["score", "r", "--qrels"],     # typer's usage errors
    ["score", "r", "--qrels", "q", "--qrels", "q2"],       # repeated
    ["score", "r", "--qrels", "q", "--per-topic", "--no-per-topic"],
    ["score", "-", "--qrels", "q"],                        # standard input
    ["score", "r", "--qrels", "-x"], ["score", "r", "--qrels", ""], ["score", "", "--qrels", "q"],
    ["score", "r", "--", "--qrels", "q"],
    ["score", "r", "--qrels", "q", "--format", "parquet", "--out", "o.parquet"],
    ["score", "r", "--qrels", "q", "--format", "JSON"], ["score", "r", "--qrels", "q", "--missing", "skip"],
    ["score", "r", "--qrels", "q", "--rel", "-1"], ["score", "r", "--qrels", "q", "--rel", "1.5"],
    ["score", "r", "--qrels", "q", "--rel", "+2"], ["score", "r", "--qrels", "q", "--rel", "1234567890"],
    ["score", "r", "--qrels", "q", "--out", "-"],
    ["--debug", "score", "r", "--qrels", "q"], ["--lock-timeout", "5", "score", "r", "--qrels", "q"],
    ["-q", "-q", "score", "r", "--qrels", "q"], ["--db", "score", "r", "--qrels", "q"], ["--db=", "score", "r", "--qrels", "q"],
    ["compare", "score", "r", "--qrels", "q"], ["score", "r", "--qrels", "q", "-q"],
])
def test_every_other_form_is_left_to_typer(argv):
    assert fast_score.parse(argv) is None



def test_a_nul_or_an_unreadable_path_is_left_to_typer(monkeypatch):
    # found by a breaker's trial: typer refuses an existing path it may not read (exit 2), the fast path wrote to it
    assert fast_score.parse(["--db", "x\0", "score", "r", "--qrels", "q"]) is None
    assert fast_score.parse(["score", "r\0", "--qrels", "q"]) is None
    argv = ["--db", ".", "score", "r", "--qrels", "q", "--out", "."]          # "." exists
    assert fast_score.parse(argv) is not None
    monkeypatch.setattr(fast_score.os, "access", lambda path, mode: False)  # as an unprivileged user would see it
    assert fast_score.parse(argv) is None
    assert fast_score.parse(["--db", ".", "score", "r", "--qrels", "q"]) is None
    assert fast_score.parse(["score", "r", "--qrels", "q", "--out", "."]) is None
    assert fast_score.parse(["--db", "absent.duckdb", "score", "r", "--qrels", "q", "--out", "absent"]) is not None

def test_shell_completion_is_left_to_typer(monkeypatch):
    monkeypatch.setenv("_WORKBENCH_COMPLETE", "bash_complete")
    assert fast_score.parse(["score", "r", "--qrels", "q"]) is None


def test_the_body_takes_the_typer_commands_parameters_with_its_defaults():
    typer_params = inspect.signature(score.score).parameters
    body_params = inspect.signature(score_command.run_score).parameters
    assert list(typer_params) == list(body_params)
    assert {n: p.default for n, p in typer_params.items()} == {n: p.default for n, p in body_params.items()}
    from workbench.reports.format import FORMATS, TEXT_FORMATS
    from workbench.scoring.evaluate import MISSING_POLICIES

    assert fast_score.FORMATS == TEXT_FORMATS and "parquet" in FORMATS
    assert set(fast_score.MISSING) == set(MISSING_POLICIES)


@pytest.mark.parametrize("argv", [
    ["score", "r.run", "--qrels", "q.txt"],
    ["-q", "--db", "x.duckdb", "score", "a", "--qrels=q", "b", "--format", "json", "--missing=zero", "--rel", "2",
     "--per-topic", "--out", "o.json"],
    ["--quiet", "score", "--no-per-topic", "--qrels", "q", "r", "--format=csv"],
])
def test_typer_passes_the_same_arguments(argv, monkeypatch):
    defaults = {n: p.default for n, p in inspect.signature(score_command.run_score).parameters.items()
                if p.default is not inspect.Parameter.empty}
    seen: list[tuple[tuple, dict]] = []
    monkeypatch.setattr(score_command, "run_score", lambda *a, **kw: seen.append((a, kw)))
    assert root.main(argv) == 0
    (args, kwargs), = seen
    typer_root = (common.STATE.config.db_path, common.STATE.quiet)
    call = fast_score.parse(argv)
    assert call is not None
    assert (list(args[0]), args[1]) == (list(call.runs), call.qrels)
    assert kwargs == {**defaults, **call.options}
    common.configure(call.db, None, False, call.quiet)  # what the fast path does
    assert (common.STATE.config.db_path, common.STATE.quiet) == typer_root


_ELAPSED = re.compile(r"\[elapsed\] [0-9.]+ s")
_IDS = re.compile(r"\b[0-9a-f]{32}\b")
_TIME = re.compile(r"\b[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\+00:00")  # created_at: the second may turn


def _same(text: str) -> str:
    """``text`` with what differs between two runs of one command replaced: evaluation ids, creation time."""
    return _TIME.sub("<time>", _IDS.sub("<id>", text))


def _both(capsys, argv: list[str]) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """(exit code, stdout, stderr) of ``argv`` through the fast path, then through typer (normalised)."""
    assert fast_score.parse(argv) is not None, argv
    out = []
    for runner in (main, root.main):
        code = runner(argv)
        o, e = capsys.readouterr()
        out.append((code, _same(o), _ELAPSED.sub("[elapsed] <s>", e)))
    return out[0], out[1]


@pytest.fixture
def files(write):
    return write("q.txt", QRELS), write("r.run", RUN)


@pytest.mark.parametrize("extra", [
    [], ["--format", "json", "--per-topic"], ["--format", "csv"], ["--format", "jsonl", "--rel", "2"],
    ["--format", "tsv", "--per-topic"], ["--missing", "zero", "--per-topic"], ["--missing", "exclude"],
])
def test_files_score_the_same_both_ways(capsys, files, extra, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WORKBENCH_DB", raising=False)
    qrels, run = files
    fast, slow = _both(capsys, ["score", str(run), "--qrels", str(qrels), *extra])
    assert fast == slow
    if "--missing" not in extra:  # topic 3 has no results: the default policy stops with the list
        assert fast[0] == 1 and "workbench: error:" in fast[2] and "3" in fast[2]
    else:
        assert fast[0] == 0 and fast[1]


def test_failures_are_reported_the_same_both_ways(capsys, write, files, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WORKBENCH_DB", raising=False)
    qrels, run = files
    bad = write("bad.run", "1 Q0 a 1 3.0 bm25\n1 Q0 b two 2.0 bm25\n")
    cases = [
        ["score", str(tmp_path / "absent.run"), "--qrels", str(qrels)],            # neither a file nor a store
        ["score", str(bad), "--qrels", str(qrels), "--missing", "zero"],           # a malformed line
        ["score", str(run), "--qrels", str(tmp_path / "absent.txt")],
        ["score", str(run), "--qrels", str(qrels), "--missing", "zero", "--out", str(tmp_path)],  # a folder
        ["-q", "score", str(run), "--qrels", str(qrels)],                           # missing topics, quietly
    ]
    for argv in cases:
        fast, slow = _both(capsys, argv)
        assert fast == slow, argv
        assert fast[0] == 1 and "workbench: error:" in fast[2], argv
    assert "bad.run:2" in _both(capsys, cases[1])[0][2]


def test_an_output_file_is_the_same_both_ways(capsys, files, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WORKBENCH_DB", raising=False)
    qrels, run = files
    texts = []
    for runner in (main, root.main):
        out = tmp_path / f"{runner.__module__}.json"
        assert runner(["score", str(run), "--qrels", str(qrels), "--missing", "zero", "--format", "json",
                       "--out", str(out)]) == 0
        assert f"wrote {out}" in capsys.readouterr().err
        texts.append(_same(out.read_text()))
    assert texts[0] == texts[1] and '"R@5"' in texts[0]


def test_stored_runs_and_qrels_score_and_record_the_same_both_ways(capsys, tiny_template, tmp_path):
    ends = []
    for name, runner in (("fast", main), ("typer", root.main)):
        _folder, db = copy_project(tiny_template, tmp_path / name)   # each way records into its own copy
        argv = ["--db", str(db), "score", "bm25", "imp", "--qrels", "tiny-reference"]
        assert fast_score.parse(argv) is not None
        code = runner(argv)
        o, e = capsys.readouterr()
        ends.append((code, _same(o.replace(str(db), "DB")), _ELAPSED.sub("[elapsed] <s>", e)))
    assert ends[0] == ends[1]
    assert ends[0][0] == 0 and "recorded   evaluation id(s) <id>, <id>" in ends[0][1]



def test_a_closed_stdout_is_one_error_line_both_ways(tmp_path):
    # found by a breaker's trial: `workbench score ... >&-` ended in an AttributeError traceback (sys.stdout is None)
    (tmp_path / "q.txt").write_text("1 0 a 1\n")
    (tmp_path / "r.run").write_text("1 Q0 a 1 1.0 x\n")
    code = ("import sys\nfrom workbench.cli import main, root\n"
            "sys.exit((main if sys.argv[1] == 'fast' else root.main)(sys.argv[2:]))\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    for way in ("fast", "typer"):
        p = subprocess.run([sys.executable, "-c", code, way, "-q", "score", "r.run", "--qrels", "q.txt"], cwd=tmp_path,
                           env=env, stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=lambda: os.close(1))
        assert (p.returncode, p.stderr) == (1, "workbench: error: cannot read or write standard output: standard "
                                               "output is closed (--debug shows where)\n"), way

def test_a_closed_pipe_ends_both_ways_with_the_same_code(tmp_path):
    """``workbench score ... | head -c 100``: the write fails with EPIPE; the exit code and stderr are typer's."""
    lines = [f"{t} 0 d{t}-{i} {i % 3}\n" for t in range(1, 301) for i in range(20)]
    (tmp_path / "q.txt").write_text("".join(lines))
    (tmp_path / "r.run").write_text("".join(f"{t} Q0 d{t}-{i} {i + 1} {100 - i}.5 sys\n"
                                            for t in range(1, 301) for i in range(100)))
    code = ("import sys\nfrom workbench.cli import main, root\n"
            "sys.exit((main if sys.argv[1] == 'fast' else root.main)(sys.argv[2:]))\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    ends = []
    for way in ("fast", "typer"):
        p = subprocess.Popen([sys.executable, "-c", code, way, "-q", "score", "r.run", "--qrels", "q.txt",
                              "--format", "json", "--per-topic"], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert p.stdout is not None and p.stderr is not None
        head = p.stdout.read(100)
        p.stdout.close()                                  # the reader leaves
        err = p.stderr.read()
        ends.append((p.wait(timeout=120), err, len(head)))
    assert ends[0] == ends[1]
    assert ends[0][2] == 100
