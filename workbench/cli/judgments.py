"""CLI commands: ``workbench judgments import|export`` and ``workbench adjudicate``.

Lead actions take ``--lead NAME --token TOKEN`` (or ``$WORKBENCH_TOKEN``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import app, common, options
from workbench.errors import UsageError

judgments_app = typer.Typer(
    help="Judgments in and out: import a file as one assessor's judgments (lead only), export current "
         "judgments or their whole history.",
    no_args_is_help=True,
)
app.add_typer(judgments_app, name="judgments")

LeadOpt = Annotated[str, typer.Option("--lead", help="The lead doing this (user name).")]
TokenOpt = Annotated[
    str, typer.Option("--token", envvar="WORKBENCH_TOKEN", help="The lead's access token (or $WORKBENCH_TOKEN).")
]


@judgments_app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="TREC qrels (topic iter doc grade), CSV with a header, or JSON lines.")],
    pool: Annotated[str, typer.Option(help="The pool version the judgments belong to (its collection is judged).")],
    assessor: Annotated[str, typer.Option(help="The existing user whose judgments these are.")],
    lead: LeadOpt,
    token: TokenOpt,
    fmt: Annotated[str | None, typer.Option(
        "--format", callback=options.registered("workbench.formats.judgments", "IN_FORMATS", "judgments format"),
        help="trec, csv or jsonl. Default: by suffix (.csv, .jsonl), else trec.")] = None,
    allow_outside_pool: Annotated[bool, typer.Option(
        "--allow-outside-pool", help="Keep lines judging documents not pooled for their topic in --pool "
                                     "(default: refused, file:line).")] = False,
) -> None:
    """Import judgments through the UI's save path: one transaction, errors with file:line, idempotent.

    CSV/JSONL columns: topic_id, doc_id, grade (empty/null with unsure), and optionally note, unsure,
    duration_ms (or duration in seconds), timestamp (ISO 8601), assessor. A column given twice (or under two
    of its names) is refused; other columns are ignored with a warning that names them. Prints which
    documents pooled in --pool (a child pool: its delta) the file covered and which it did not, and the
    ancestors' documents apart.
    """
    from workbench.services.judging import assessments as svc
    from workbench.services.judging.judgments_io import import_judgments

    store = common.STATE.store(client="workbench judgments import")
    session = svc.sign_in(store.users, lead, token)
    r = import_judgments(store, session, file, pool_version=pool, assessor=assessor, fmt=fmt,  # type: ignore[arg-type]
                         allow_outside_pool=allow_outside_pool)
    if r.ignored_columns:
        from workbench.formats.judgments import ACCEPTED_COLUMNS

        shown = ", ".join(repr(c) if c else "an unnamed column" for c in r.ignored_columns)
        common.info(f"[warning] {file}:1: column(s) {shown} ignored: not judgment columns (accepted: "
                    f"{', '.join(ACCEPTED_COLUMNS)}). Rename a misspelt column, or drop it to silence this.")
    if r.duplicates:
        common.info(f"workbench: {r.duplicates:,} duplicate line(s) in {file} dropped (a line repeated exactly): "
                    "each was imported once")
    common.out(f"imported {r.n_lines:,} judgments of {r.assessor!r} into {r.collection!r} (pool {r.pool_version}, "
               f"rubric {r.rubric_version}): {r.n_saved:,} saved, {r.n_already:,} already stored")
    share = r.n_covered / r.n_pooled if r.n_pooled else 0.0
    own = f"documents of the delta {r.pool_version}" if r.ancestors else "pooled documents"
    common.out(f"pool coverage: {r.n_covered:,} of {r.n_pooled:,} {own} ({share:.1%}) judged by the file; "
               f"{r.n_pooled - r.n_covered:,} not covered")
    if r.not_covered:
        shown = ", ".join(f"{t}: {n}" for t, n in list(r.not_covered.items())[:20])
        more = f", ... {len(r.not_covered) - 20} more topics" if len(r.not_covered) > 20 else ""
        common.out(f"  not covered, per topic: {shown}{more}")
    if r.ancestors:
        common.out(f"  ancestors ({', '.join(r.ancestors)}): {r.n_ancestor_covered:,} of {r.n_ancestor_pooled:,} "
                   "documents pooled there judged by the file (not counted above)")
    if r.outside_pool:
        common.out(f"  {r.outside_pool:,} line(s) judge documents outside the pool (kept; they count once the "
                   "pool reaches them)")


@judgments_app.command("export")
def export(
    pool: Annotated[str, typer.Argument(help="The pool version (its ancestors' documents included).")],
    assessor: Annotated[str | None, typer.Option(help="Only this assessor's judgments.")] = None,
    history: Annotated[bool, typer.Option(help="Every save of the append-only history, not only the current judgments.")] = False,
    fmt: Annotated[str, typer.Option("--format", callback=options.registered(
        "workbench.formats.judgments", "OUT_FORMATS", "judgments format"),
        help="csv, jsonl or parquet (parquet needs --out).")] = "csv",
    out: Annotated[Path | None, typer.Option(help="Write to this file (atomically). Default: stdout.")] = None,
) -> None:
    """Export judgments as CSV, JSON lines or Parquet: topic_id, doc_id, assessor, grade, unsure, note,
    duration_ms, timestamp, pool_version, rubric_version, judgment_id."""
    from workbench.formats.io import STDOUT
    from workbench.formats.judgments import render_judgments, write_judgments
    from workbench.services.judging.judgments_io import export_rows

    if fmt == "parquet" and (out is None or str(out) == STDOUT):
        raise UsageError("--format parquet writes a binary file: give --out FILE.parquet "
                         "(standard output takes text only)")
    store = common.STATE.store(client="workbench judgments export")
    rows = export_rows(store.judgments, store.pools, store.users, pool, assessor=assessor, history=history)
    if out is None:
        sys.stdout.write(render_judgments(rows, fmt))  # type: ignore[arg-type]
        sys.stdout.flush()
    else:
        write_judgments(out, rows, fmt)  # type: ignore[arg-type]
    common.info(f"{len(rows):,} {'saves' if history else 'current judgments'} of pool {pool}"
                + (f" by {assessor}" if assessor else "") + (f" -> {out}" if out else ""))


@app.command("adjudicate")
def adjudicate(
    pool: Annotated[str, typer.Argument(help="The pool version (its ancestors included).")],
    list_: Annotated[bool, typer.Option("--list", help="List the documents that need a decision.")] = False,
    include_adjudicated: Annotated[bool, typer.Option(
        "--all", help="With --list: also documents already adjudicated.")] = False,
    topic: Annotated[str | None, typer.Option(help="The topic of the document to decide.")] = None,
    doc: Annotated[str | None, typer.Option(help="The document to decide.")] = None,
    grade: Annotated[int | None, typer.Option(help="The final grade (on the collection's rubric).")] = None,
    rationale: Annotated[str | None, typer.Option(help="Why this grade is final (required).")] = None,
    lead: Annotated[str | None, typer.Option(help="The lead (user name).")] = None,
    token: Annotated[str | None, typer.Option(envvar="WORKBENCH_TOKEN", help="The lead's token (or $WORKBENCH_TOKEN).")] = None,
    fmt: Annotated[str, typer.Option("--format", callback=options.choice("table", "tsv", "csv", "jsonl"),
                                     help="With --list: table, tsv, csv or jsonl.")] = "table",
) -> None:
    """The lead's adjudication, as on the Adjudicate page: --list shows the disagreement queue (grades differ,
    or an assessor was unsure; widest spread first); --topic T --doc D --grade G --rationale TEXT sets a
    final grade (lead only, rationale required, the document must be in the queue)."""
    from workbench.cli.runs import render
    from workbench.services.judging import assessments as svc

    store = common.STATE.store(client="workbench adjudicate")
    if list_:
        rows = svc.disagreement_queue(store.adjudications, store.judgments, store.pools, pool,
                                      include_adjudicated=include_adjudicated)
        render([{
            "topic": r.topic_id, "doc": r.doc_id, "spread": r.spread,
            "judgments": " ".join(f"{j.assessor}:{'?' if j.grade is None else j.grade}{'(unsure)' if j.unsure else ''}"
                                  for j in r.judgments),
            "adjudicated": "" if r.adjudication is None else f"{r.adjudication.grade} by {r.adjudication.lead}",
        } for r in rows], ["topic", "doc", "spread", "judgments", "adjudicated"], fmt)
        common.info(f"{len(rows):,} document(s) of pool {pool} need a decision"
                    + (" or were adjudicated" if include_adjudicated else ""))
        return
    if topic is None or doc is None or grade is None or rationale is None or lead is None:
        missing = [n for n, v in (("--topic", topic), ("--doc", doc), ("--grade", grade),
                                  ("--rationale", rationale), ("--lead", lead)) if v is None]
        raise UsageError(f"adjudicate: expected --list, or --topic, --doc, --grade, --rationale and --lead; "
                              f"missing {', '.join(missing)}")
    session = svc.sign_in(store.users, lead, token or "")
    adj_id = svc.adjudicate(store.adjudications, store.judgments, store.pools, session, pool, topic, doc, grade, rationale)
    common.out(f"adjudicated topic {topic} document {doc}: final grade {grade} (adjudication {adj_id}, pool {pool})")
