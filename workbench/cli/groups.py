"""CLI commands: ``workbench groups`` (duplicate groups: import a groups file, list, judging offers)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import app, common, options
from workbench.errors import shown

groups_app = typer.Typer(help="Duplicate groups: import a groups file, list a collection's groups, judging offers.",
                         no_args_is_help=True)
app.add_typer(groups_app, name="groups")


@groups_app.command("import")
def import_groups(
    path: Annotated[Path, typer.Argument(help="Groups file: group_id doc_id per line (near-duplicates, mirrors).")],
    collection: Annotated[str, typer.Option(help="The collection (its latest version, or NAME@VERSION-PREFIX).")],
) -> None:
    """Add a groups file's groups to a collection version (rows only added; re-importing adds nothing).

    Refused (file:line, nothing written): an id that is not a document of the version, a group of one
    document, a document already in another group of an earlier import."""
    from workbench.formats.units import read_group_lines

    groups, lines = read_group_lines(path)
    name, _, version = collection.partition("@")
    store = common.STATE.store(client="workbench groups import")
    added = store.units.add_duplicate_groups(name, groups, source=path.name, version=version or None,
                                     lines=(str(path), lines))
    common.out(f"{len(groups):,} group(s) from {path}: {added:,} row(s) added to collection {name}")


@groups_app.command("list")
def list_groups(
    collection: Annotated[str, typer.Argument(help="The collection (NAME or NAME@VERSION-PREFIX).")],
) -> None:
    """List a collection version's duplicate groups: canonical member, members, sources (TSV)."""
    name, _, version = collection.partition("@")
    g = common.STATE.store(client="workbench groups list").units.get_duplicate_groups(name, version or None)
    common.out("group\tmembers\tsources")
    for c, ms in g.members.items():
        common.out(f"{c}\t{','.join(ms)}\t{'; '.join(g.sources.get(c, ()))}")
    common.info(f"{len(g):,} group(s) over {g.n_documents:,} documents")


@groups_app.command("offers")
def offers(
    pool: Annotated[str, typer.Argument(help="The pool version.")],
    mode: Annotated[str | None, typer.Option(callback=options.choice("offer", "skip"), help="offer: list unjudged group members with the judged member's "
                                                  "grade pre-filled, for the lead; skip: list them as skipped "
                                                  "(nothing is recorded; score --dedupe groups scores the group "
                                                  "by its judged member). Default: the pool's mode (`workbench "
                                                  "groups mode`).")] = None,
    accept: Annotated[bool, typer.Option(help="With --mode offer: save the offers without conflict as the "
                                              "lead's judgments (lead only).")] = False,
    lead: Annotated[str | None, typer.Option(help="The lead (user name), with --accept.")] = None,
    token: Annotated[str | None, typer.Option(envvar="WORKBENCH_TOKEN",
                                              help="The lead's token (or $WORKBENCH_TOKEN).")] = None,
) -> None:
    """Once one member of a duplicate group is judged, offer the others to the lead with that grade, or skip them."""
    from workbench.errors import UsageError
    from workbench.judging.groups import GROUP_MODES
    from workbench.services.judging.groups import accept_group_offers, pool_group_offers

    store = common.STATE.store(client="workbench groups offers")
    if mode is None:
        mode = store.judging.group_mode(pool)
    if mode not in GROUP_MODES:
        raise UsageError(f"expected --mode {' or '.join(GROUP_MODES)}, found {shown(mode)}")
    if accept and mode != "offer":
        raise UsageError("--accept saves offers: use it with --mode offer")
    found = pool_group_offers(store.pools, store.units, store.judgments, pool)
    verb = "offered" if mode == "offer" else "skipped"
    common.out("topic\tdoc\tpre-filled grade\tjudged members\tgrades\tconflict")
    for o in found:
        common.out(f"{o.topic_id}\t{o.doc_id}\t{o.grade}\t{','.join(o.from_docs)}\t{','.join(map(str, o.grades))}\t"
                   f"{'yes' if o.conflict else 'no'}")
    common.info(f"{len(found):,} group member(s) {verb} in {pool}")
    if accept:
        from workbench.services.judging import assessments as svc

        session = svc.sign_in(store.users, lead or "", token or "")
        saved, left = accept_group_offers(store.judgments, store.pools, session, pool, found)
        common.out(f"saved {saved:,} judgment(s) as {session.user}; {left:,} conflicting offer(s) left to judge")


@groups_app.command("mode")
def mode_cmd(
    pool: Annotated[str, typer.Argument(help="The pool version.")],
    mode: Annotated[str, typer.Argument(help="offer (the default: the lead is offered the other members of a "
                                             "group with a judged member, grade pre-filled) or skip (they leave "
                                             "the assessors' queues once one member is graded).")],
    lead: Annotated[str, typer.Option(help="The lead (user name).")],
    token: Annotated[str | None, typer.Option(envvar="WORKBENCH_TOKEN",
                                              help="The lead's token (or $WORKBENCH_TOKEN).")] = None,
) -> None:
    """Set how a pool version's duplicate groups are judged: offer them to the lead, or skip them in queues."""
    from workbench.services.judging import assessments as svc
    from workbench.services.judging.groups import set_group_mode

    store = common.STATE.store(client="workbench groups mode")
    session = svc.sign_in(store.users, lead, token or "")
    set_group_mode(store.judging, session, pool, mode)
    what = "skipped in the assessors' queues" if mode == "skip" else "offered to the lead"
    common.out(f"pool {pool}: duplicate groups {what} (mode {mode})")
