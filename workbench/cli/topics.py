"""CLI commands: ``workbench topics set|list|show``: named, versioned topic sets.

A topic set (``smoke`` for fast pull-request checks, ``release`` held out for
the release gate) is stored in versions: ``topics set`` with a changed list
makes the next version, an identical one changes nothing. ``score``,
``compare`` and ``gate`` take ``--topic-set NAME[@VERSION]``; every use of a set
is recorded, and a protected set's uses are shown by ``workbench evaluations list``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import app, common, options

topics_app = typer.Typer(help="Topic sets: named, versioned lists of topics (a smoke set, a protected release set).",
                         no_args_is_help=True)
app.add_typer(topics_app, name="topics")

FORMATS = ("table", "tsv", "csv", "jsonl")


@topics_app.command("set")
def set_(
    name: Annotated[str, typer.Argument(callback=options.name("topic set"),
                                        help="The set's name (letters, digits, _ . -).")],
    source: Annotated[Path, typer.Option("--from", help="Topic ids, one per line (# comments; a qrels file works).")],
    collection: Annotated[str | None, typer.Option(callback=options.nonempty("a collection name"),
                                                   help="Check the ids against this collection's topics. Default: "
                                                        "the store's collections (the one holding every id is "
                                                        "recorded with the set).")] = None,
    protected: Annotated[bool, typer.Option(
        "--protected", help="A held-out set: its uses are listed by `workbench evaluations list`.")] = False,
    description: Annotated[str, typer.Option(help="Free text.")] = "",
) -> None:
    """Save a topic set from a file as its next version (nothing changes when the topics are the same).

    Every id must be a topic of --collection or, without it, of one of the store's collections (file:line of
    the first that is not).
    """
    from workbench.services.collections.topic_lists import check_topic_list

    store = common.STATE.store(client="workbench topics set")
    checked = check_topic_list(store, source, collection)
    if checked.note:
        common.info(f"topic set {name}: {checked.note}")
    info, status = store.evaluations.save_topic_set(name, checked.topic_ids, collection=checked.collection, protected=protected,
                                        source=str(source), description=description)
    what = {"created": "created", "new_version": "saved a new version", "unchanged": "unchanged (same topics)"}
    common.out(f"topic set {info.ref}: {what[status]}; {info.n_topics:,} topics"
               + (f" of collection {info.collection}" if info.collection else "")
               + ("; protected (uses are recorded)" if info.protected else "")
               + f"; sha256 {info.content_hash[:12]}")


@topics_app.command("list")
def list_(fmt: Annotated[str, typer.Option("--format", callback=options.choice(*FORMATS),
                                                       help=f"Output: {', '.join(FORMATS)}.")] = "table") -> None:
    """Every version of every topic set, with its use count."""
    from workbench.cli.runs import render

    store = common.STATE.store(client="workbench topics list")
    uses: dict[tuple[str, int], int] = {}
    for u in store.evaluations.list_topic_set_uses():
        uses[(u.name, u.version)] = uses.get((u.name, u.version), 0) + 1
    rows = [{"topic_set": i.ref, "topics": i.n_topics, "collection": i.collection or "-",
             "protected": "yes" if i.protected else "no", "uses": uses.get((i.name, i.version), 0),
             "sha256": i.content_hash[:12], "created": i.created_at.strftime("%Y-%m-%d %H:%M"), "source": i.source}
            for i in store.evaluations.list_topic_sets()]
    render(rows, ["topic_set", "topics", "collection", "protected", "uses", "sha256", "created", "source"],
           fmt)


@topics_app.command("show")
def show(ref: Annotated[str, typer.Argument(help="NAME (latest version) or NAME@VERSION.")]) -> None:
    """A topic set version's topics (one per line) after its description on stderr."""
    store = common.STATE.store(client="workbench topics show")
    info, ids = store.evaluations.get_topic_set(ref)
    common.info(f"topic set {info.ref}: {info.n_topics:,} topics"
                + ("; protected" if info.protected else "") + f"; from {info.source or '-'}")
    common.out("\n".join(ids))
