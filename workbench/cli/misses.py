"""CLI command: ``workbench miss-cause`` (a lead's causes for a run's misses).

``workbench misses RUN --qrels V --k K --categorise`` lists the misses with the
rules' causes; this command records a lead's cause for one miss, with a note
(append-only, like judgments: the latest decision wins, every earlier one is
kept), or accepts every cause suggested by another run's identical miss.
Lead actions take ``--lead NAME --token TOKEN`` (or ``$WORKBENCH_TOKEN``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from workbench.cli import app, common, options


@app.command("miss-cause")
def miss_cause(
    run: Annotated[str, typer.Argument(help="The stored run whose miss it is.")],
    qrels: Annotated[str, typer.Option("--qrels", help="The stored qrels version of the miss list.")],
    lead: Annotated[str, typer.Option("--lead", help="The lead doing this (user name).")],
    token: Annotated[str, typer.Option("--token", envvar="WORKBENCH_TOKEN",
                                       help="The lead's access token (or $WORKBENCH_TOKEN).")],
    k: Annotated[int, typer.Option("--k", min=1, help="The cutoff of the miss list.")] = 100,
    topic: Annotated[str | None, typer.Option(help="The topic of the miss.")] = None,
    doc: Annotated[str | None, typer.Option(help="The relevant document missed.")] = None,
    cause: Annotated[str | None, typer.Option(
        callback=options.miss_cause,
        help="The cause: not indexed, filtered out, chunk boundary, found deeper, vocabulary mismatch, "
             "beyond depth or uncategorised.")] = None,
    note: Annotated[str | None, typer.Option(help="Why (required with --cause).")] = None,
    accept_suggested: Annotated[bool, typer.Option(
        "--accept-suggested", help="Accept every cause a lead set on the same (topic, document) miss of another "
                                   "run of the collection.")] = False,
    rel: Annotated[int, typer.Option(callback=options.number(0, what="a grade"),
                                     help="Minimum grade counted as relevant (inclusive).")] = 1,
    missing: Annotated[str, typer.Option(callback=options.choice("fail", "zero", "exclude"),
                                         help="Missing-topic policy of the list: fail, zero, exclude.")] = "fail",
) -> None:
    """A lead sets or overrides the cause of a run's misses, each with a note (append-only), or accepts the
    causes inherited from other runs' identical misses. Prints the counts per cause and the residue after."""
    from workbench.errors import UsageError
    from workbench.reports.miss_causes import summary_lines
    from workbench.services.evaluation.misses import accept_suggestions, set_miss_causes
    from workbench.services.judging import assessments as jsvc

    store = common.STATE.store(client="workbench miss-cause")
    if accept_suggested:
        if any(v is not None for v in (topic, doc, cause, note)):
            raise UsageError("miss-cause: --accept-suggested takes no --topic, --doc, --cause or --note")
        session = jsvc.sign_in(store.users, lead, token)
        ids, after = accept_suggestions(store, session, run, qrels, k, rel=rel, missing=missing)
        common.out(f"accepted {len(ids):,} suggested cause(s) for run {run} against {qrels} at k = {k}")
    else:
        absent = [n for n, v in (("--topic", topic), ("--doc", doc), ("--cause", cause), ("--note", note))
                  if v is None]
        if absent:
            raise UsageError(f"miss-cause: expected --topic, --doc, --cause and --note (or "
                                  f"--accept-suggested); missing {', '.join(absent)}")
        item = (str(topic), str(doc), str(cause), str(note))
        session = jsvc.sign_in(store.users, lead, token)
        ids, after = set_miss_causes(store, session, run, qrels, k, [item], rel=rel, missing=missing)
        common.out(f"topic {topic} document {doc}: cause {cause!r} set by {session.user} (decision {ids[0]})")
    common.out("\n".join(summary_lines(after.misses)))
