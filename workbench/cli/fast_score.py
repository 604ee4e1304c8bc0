"""``workbench score`` in its plain forms, without the CLI framework: a run scored from a script pays no typer.

Importing typer and building the ``score`` command from its signature costs
more than scoring a Cranfield-size run (``bench/scoring/bench_scoring.py``).
``parse`` recognises the invocations scripts and notebooks type most, and
only those; everything else (``--help``, any other option, a value that is
not plainly valid, a repeated option, ``--``, ``-`` for standard input)
gives None and goes to typer, which parses it, reports its usage errors and
runs the same body. The grammar::

    workbench [-q | --quiet] [--db PATH] score RUN... --qrels QRELS
              [--format table|json|jsonl|csv|tsv] [--missing fail|zero|exclude]
              [--rel N] [--per-topic | --no-per-topic] [--out PATH]

in any order after ``score``, each option at most once, as ``--opt VALUE`` or
``--opt=VALUE``; a value is non-empty, does not start with ``-`` and holds no NUL;
``N`` is decimal digits; a ``PATH`` that exists is readable (typer's check of
path options: an unreadable one is its usage error). Accepted this way, the arguments are exactly what typer
would pass (``tests/cli/test_fast_score.py`` compares the two parses and the
two runs' output and exit codes), and ``run`` calls the same body
(``workbench.cli.score_command.run_score``) under the same exit-code rules
(``workbench.cli.outcome``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMATS = ("table", "json", "jsonl", "csv", "tsv")
"""``--format`` values taken here: the text formats (``workbench.reports.format.TEXT_FORMATS``; parquet needs typer's checks)."""
MISSING = ("fail", "zero", "exclude")
"""``--missing`` values taken here: ``workbench.scoring.evaluate.MISSING_POLICIES``."""
_ROOT_FLAGS = {"-q": "quiet", "--quiet": "quiet"}
_FLAGS = {"--per-topic": ("per_topic", True), "--no-per-topic": ("per_topic", False)}
_VALUED = {"--qrels": "qrels", "--format": "fmt", "--missing": "missing", "--rel": "rel", "--out": "out"}


@dataclass(frozen=True)
class Call:
    """A parsed plain invocation: the root options and ``run_score``'s arguments (the rest at their defaults)."""

    db: Path | None
    quiet: bool
    runs: tuple[str, ...]
    qrels: str
    options: dict[str, Any] = field(default_factory=dict)


def _plain_value(v: str) -> bool:
    return bool(v) and not v.startswith("-") and "\0" not in v


def _path(v: str) -> Path | None:
    """``Path(v)`` when typer's check of a path option passes without a message: a path that does not
    exist, or one this process may read (typer refuses an unreadable one: ``readable=True``); else None."""
    try:
        os.stat(v)
    except OSError:
        return Path(v)
    return Path(v) if os.access(v, os.R_OK) else None


def parse(args: list[str]) -> Call | None:
    """The ``Call`` of ``args`` (the arguments after the program name) in the grammar above, else None.

    Never raises and never prints: a command line it does not take is typer's to parse (and to refuse).
    """
    if "score" not in args or any(k.startswith("_WORKBENCH_COMPLETE") for k in os.environ):
        return None
    at = args.index("score")
    root: dict[str, Any] = {}
    i = 0
    while i < at:
        a = args[i]
        if a in _ROOT_FLAGS and "quiet" not in root:
            root["quiet"] = True
        elif (a == "--db" or a.startswith("--db=")) and "db" not in root:
            if a == "--db":
                if i + 1 >= at:
                    return None
                i += 1
                v = args[i]
            else:
                v = a[len("--db="):]
            db = _path(v) if _plain_value(v) else None
            if db is None:
                return None
            root["db"] = db
        else:
            return None
        i += 1
    runs: list[str] = []
    given: dict[str, Any] = {}
    rest = args[at + 1:]
    i = 0
    while i < len(rest):
        a = rest[i]
        name, eq, inline = a.partition("=")
        if not a or "\0" in a:  # an empty run name, a NUL: typer's to take or refuse
            return None
        if not a.startswith("-"):
            runs.append(a)
        elif a in _FLAGS:
            key, value = _FLAGS[a]
            if key in given:
                return None
            given[key] = value
        elif name in _VALUED:
            key = _VALUED[name]
            if key in given:
                return None
            if eq:
                v = inline
            elif i + 1 < len(rest):
                i += 1
                v = rest[i]
            else:
                return None
            if not _plain_value(v):
                return None
            given[key] = v
        else:
            return None
        i += 1
    qrels = given.pop("qrels", None)
    if not runs or qrels is None:
        return None
    if given.get("fmt", "table") not in FORMATS or given.get("missing", "fail") not in MISSING:
        return None
    if "rel" in given:
        rel = given["rel"]
        if not (rel.isascii() and rel.isdigit() and len(rel) <= 9):
            return None
        given["rel"] = int(rel)
    if "out" in given:
        out = _path(given["out"])
        if out is None:
            return None
        given["out"] = out
    return Call(root.get("db"), bool(root.get("quiet")), tuple(runs), qrels, given)


def run(call: Call) -> int:
    """Run ``call`` as ``workbench score`` does; return the exit code (``workbench.cli.EXIT_*``, 130 interrupted)."""
    from workbench.cli import common, outcome
    from workbench.cli.runtime import paused_gc

    def body() -> None:
        common.configure(call.db, None, False, call.quiet)  # the root callback's work
        with paused_gc():
            from workbench.cli.score_command import run_score
        run_score(list(call.runs), call.qrels, **call.options)

    return outcome.finish(lambda: outcome.in_command(body))
