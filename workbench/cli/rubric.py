"""CLI commands: ``workbench rubric define|list|COLLECTION [NAME]``.

``workbench rubric COLLECTION`` shows a collection's grade scale and
``workbench rubric COLLECTION NAME --lead L --token T`` sets it (as before);
``workbench rubric define FILE.toml`` stores a rubric file as a new version,
``workbench rubric list`` lists built-in and defined rubrics with versions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from workbench.cli import app, common
from workbench.cli.lazy import DefaultCommandGroup
from workbench.errors import UsageError


class _CollectionByDefault(DefaultCommandGroup):
    """``workbench rubric toy cranfield`` means ``workbench rubric collection toy cranfield``."""

    default_command = "collection"


rubric_app = typer.Typer(
    cls=_CollectionByDefault,
    help="Rubrics (grade scales): `workbench rubric COLLECTION [NAME]` shows or sets a collection's rubric; "
         "`define FILE.toml` stores a rubric file as a new version; `list` lists them.",
    no_args_is_help=True,
)
app.add_typer(rubric_app, name="rubric")

LeadOpt = Annotated[str | None, typer.Option(help="The lead (user name).")]
TokenOpt = Annotated[str | None, typer.Option(envvar="WORKBENCH_TOKEN", help="The lead's token (or $WORKBENCH_TOKEN).")]


def _lines(r: Any) -> None:
    common.out(f"rubric\t{r.name}\t{r.source}")
    for g in r.grades:
        common.out(f"{g.grade}\t{g.label}\t{g.definition}")


@rubric_app.command("collection")
def collection_rubric(
    collection: Annotated[str, typer.Argument(help="The collection.")],
    name: Annotated[str | None, typer.Argument(
        help="Rubric to judge it on (default, cranfield, binary, or one defined from a file). Omit to show.")] = None,
    lead: LeadOpt = None,
    token: TokenOpt = None,
) -> None:
    """Show a collection's grade scale, or set it (lead only). Default: 'cranfield' for
    collections named like cranfield, else 'default' (0-3)."""
    store = common.STATE.store(client="workbench rubric")
    if name is not None:
        from workbench.services.judging import assessments as svc

        if lead is None:
            raise UsageError("setting a rubric needs --lead NAME and --token TOKEN")
        session = svc.sign_in(store.users, lead, token or "")
        store.rubrics.set_collection_rubric(collection, name, lead=session.user)
    r = store.rubrics.collection_rubric(collection)
    _lines(r)
    common.info(f"version {r.version_id}; relevant from grade {r.relevant_from}")


@rubric_app.command("define")
def define(
    file: Annotated[Path, typer.Argument(help="A rubric TOML file: name, source, relevant_from, [[grades]] tables "
                                              "with grade, label, definition, key.")],
    lead: LeadOpt = None,
    token: TokenOpt = None,
) -> None:
    """Define a rubric from a TOML file (lead only): a changed file is a new version; judgments record
    the version they were made under. Errors name the file and line.

    Example file: name = "trec-dl" / source = "..." / relevant_from = 2 / [[grades]] grade = 0, label =
    "irrelevant", definition = "...", key = "0" (one [[grades]] table per grade)."""
    from workbench.services.judging import assessments as svc
    from workbench.services.judging.rubrics import define_rubric_file

    if lead is None:
        raise UsageError("defining a rubric needs --lead NAME and --token TOKEN")
    store = common.STATE.store(client="workbench rubric define")
    session = svc.sign_in(store.users, lead, token or "")
    d = define_rubric_file(store.rubrics, session, file)
    r = d.current.rubric
    verb = {"created": "defined", "new_version": "new version of", "unchanged": "unchanged:"}[d.status]
    common.out(f"rubric {verb} {r.name!r}: version {d.current.version} ({r.version_id}), {len(r.grades)} grades "
               f"{list(r.values)}, relevant from {r.relevant_from}; hash {d.current.content_hash[:12]}")
    if d.previous is not None:
        common.out(f"  previous version {d.previous.version} kept; judgments made under it keep "
                   f"{d.previous.rubric.version_id}")
    if d.collections:
        common.out(f"  collections judged on it (now version {d.current.version}): {', '.join(d.collections)}")
    elif d.status != "unchanged":
        common.info(f"judge a collection on it with `workbench rubric COLLECTION {r.name} --lead {lead}`")


@rubric_app.command("list")
def list_() -> None:
    """List the built-in rubrics and the defined ones (latest version), with their grades."""
    store = common.STATE.store(client="workbench rubric list")
    common.out("rubric\tversion\tgrades\trelevant_from\tsource")
    for r in store.rubrics.list_rubrics():
        common.out(f"{r.name}\t{r.version_id}\t{','.join(str(g) for g in r.values)}\t{r.relevant_from}\t{r.source}")
