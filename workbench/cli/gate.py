"""CLI command: ``workbench gate BASELINE CANDIDATE --qrels VERSION --policy gate.toml``.

Exit codes (this command only; the rest of the CLI uses 2 for usage errors):
0 pass, 1 fail, 2 invalid (the comparison cannot be trusted: incomplete runs,
identifier mismatches, too few topics, leakage), 3 usage or output error (bad
options, global ones before ``gate`` included, a policy file that does not parse
or validate, an unknown name; or the report could not be written to ``--out`` or
standard output). 1 is only ever a verdict: no error exits 1.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from workbench.cli import app, common
from workbench.text import printable

EXIT_USAGE = 3


class GateCommand(TyperCommand):
    """The gate's command: its usage errors (missing or bad options) exit 3, not 2.

    Click's usage errors carry ``exit_code = 2`` and a ``show`` method; typer
    vendors click, so they are recognised by those two attributes. The root group
    reads ``usage_exit_code`` for errors in the global options before ``gate``.
    Any read or write error that escapes the command (an ``OSError``, which the
    root would turn into exit 1, "fail") exits 3 too.
    """

    usage_exit_code = EXIT_USAGE

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise
        except OSError as e:
            if common.STATE.debug:
                raise
            where = f" {e.filename}" if getattr(e, "filename", None) else ""
            _fail(f"cannot read or write{where}: {e.strerror or e}", EXIT_USAGE)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except Exception as e:
            if getattr(e, "exit_code", None) == 2 and hasattr(e, "show"):
                setattr(e, "exit_code", EXIT_USAGE)  # noqa: B010 - a class attribute, set on this instance
            raise


@app.command("gate", cls=GateCommand)
def gate(
    baseline: Annotated[str, typer.Argument(help="The baseline run (file or stored name).")],
    candidates: Annotated[list[str], typer.Argument(
        help="The candidate run (file or stored name); several are one multiple-comparison family and the exit "
             "code is the worst verdict.")],
    qrels: Annotated[str, typer.Option("--qrels", help="A TREC qrels file or a stored qrels version name.")],
    policy: Annotated[Path, typer.Option("--policy", help="The gate's policy file (TOML; see examples/gate.toml).")],
    fmt: Annotated[str, typer.Option("--format", help="Output: table, json or markdown (ready for a pull request).")]
    = "table",
    topic_set: Annotated[str | None, typer.Option(
        "--topic-set", help="Gate on the topics of a stored topic set (NAME or NAME@VERSION); its use is recorded.")]
    = None,
    by: Annotated[list[str] | None, typer.Option(
        "--by", help="Also report slices by KEY (repeatable; the policy's [slices] and floors are always reported).")]
    = None,
    collection: Annotated[str | None, typer.Option(
        "--collection", help="The collection (NAME or NAME@VERSION-PREFIX) run files were produced over, for the "
                             "ID audit and the leakage check. Default: the stored runs' or qrels' collection.")]
    = None,
    trust_file_order: Annotated[bool, typer.Option(
        help="Order run files by their rank column instead of score desc, doc_id desc.")] = False,
    unit: Annotated[str | None, typer.Option(
        "--unit", help="Gate at this retrieval unit (doc or chunk): chunk runs are taken to documents (each "
                       "document at its best-ranked chunk, before the cut-off), as `score --unit doc`.")] = None,
    qrels_to_chunks: Annotated[bool, typer.Option(
        "--qrels-to-chunks", help="With --unit chunk and document qrels: every chunk of a judged document "
                                  "inherits its grade.")] = False,
    max_topics: Annotated[int, typer.Option(
        "--max-topics", min=0, help="Topics of the diff list shown by table and markdown (json lists all).")] = 25,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Also write the report to this file (e.g. the Markdown for a PR comment).")] = None,
) -> None:
    """Release gate: pass (0), fail (1) or invalid (2) for CANDIDATE(S) against BASELINE under a policy.

    Validity first (completion, ID audit, topic count and share, leakage): any of them not met makes the gate
    invalid, never green. Then the rules: macro change as a bound on the paired bootstrap CI, an optional
    permutation test, critical topics (any lost relevant document fails), slice floors, eligibility leaks.
    With several gated measures, p-values and intervals are corrected (Holm-Bonferroni by default).

    Exit 3: a usage error (a global option before `gate` included, e.g. --lock-timeout -1) or a report that
    could not be written (--out or standard output); exit 1 is only ever the verdict fail."""
    from workbench.errors import UnknownNameError, WorkbenchError
    from workbench.formats.io import check_writable
    from workbench.reports.gate import check_gate_format, render_gate
    from workbench.services.evaluation.request import (
        ScoreEnv,
        ScoreRequest,
        Slicing,
        TopicChoice,
        UnitOptions,
    )
    from workbench.services.gates.gate import GateUsageError, run_gate

    try:
        check_gate_format(fmt)
        if out is not None:  # before the gate records a protected topic set's use
            check_writable(out, what="--out")
    except WorkbenchError as e:
        _fail(f"usage: {e}", EXIT_USAGE)
    reader_left = False

    def write_report(report: Any) -> None:
        """The report, before the topic set's use is recorded: a failed write records nothing and exits 3."""
        nonlocal reader_left
        text = render_gate(report, fmt, max_topics=max_topics)
        try:
            if out is not None:
                common.emit(text, out)
            common.out(text)
        except BrokenPipeError:  # `gate ... | head`: the reader left; the verdict still decides the exit code
            reader_left = True
        except OSError as e:
            if common.STATE.debug:
                raise
            _fail(f"cannot write the gate's report to {e.filename or 'its output'}: {e.strerror or e}; "
                  f"the verdict ({report.verdict}) was reached but its report was not written", EXIT_USAGE)

    try:
        opener = _opener()
        request = ScoreRequest((baseline, *candidates), qrels, trust_file_order=trust_file_order,
                               collection=collection, topics=TopicChoice(topic_set), slicing=Slicing(tuple(by or ())),
                               units=UnitOptions((unit,) if unit else (), qrels_to_chunks=qrels_to_chunks))
        report = run_gate(request, policy, ScoreEnv(opener, common.info, before_record=write_report))
    except (GateUsageError, UnknownNameError) as e:
        _fail(f"usage: {e}", EXIT_USAGE)
    except WorkbenchError as e:
        if common.STATE.debug:
            raise
        _fail(f"gate INVALID: the comparison could not be made: {e}", 2)
    if reader_left:
        import os
        import sys

        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - nothing more reaches a closed pipe
    common.info(f"workbench gate: {report.verdict.upper()} (exit {report.exit_code}) [elapsed] {report.seconds:.2f} s")
    raise typer.Exit(report.exit_code)


def _opener() -> Any:
    if not common.STATE.config.db_path.exists():
        return None
    return lambda: common.STATE.store(client="workbench gate")


def _fail(message: str, code: int) -> None:
    from workbench.errors import ValidationError

    if code == EXIT_USAGE and common.STATE.debug:
        raise ValidationError(message)
    typer.echo(printable(f"workbench: error: {message}"), err=True)
    raise typer.Exit(code)
