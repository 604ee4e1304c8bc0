"""CLI commands: ``workbench qrels import|list|show|export|verify``.

``qrels_app`` is registered on the root app here; other modules add verbs to it
by importing ``qrels_app`` (``qrels diff`` lives in ``workbench.cli.judging``)
and are listed with ``qrels`` in ``workbench.cli.COMMANDS``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from workbench import jsonout
from workbench.cli import app, common, options
from workbench.errors import shown

qrels_app = typer.Typer(
    help="Qrels versions: import a file, list, show, export, verify. Versions are immutable and named.",
    no_args_is_help=True,
)
app.add_typer(qrels_app, name="qrels")

Fmt = Literal["table", "tsv", "jsonl"]


def _rows(rows: list[dict[str, object]], columns: list[str], fmt: str) -> None:
    if fmt == "jsonl":
        for r in rows:
            common.out(jsonout.dumps(r, default=str))
        return
    if fmt == "tsv":
        common.out("\t".join(columns))
        for r in rows:
            common.out("\t".join(str(r[c]) for c in columns))
        return
    widths = {c: max([len(c)] + [len(str(r[c])) for r in rows]) for c in columns}
    common.out("  ".join(c.ljust(widths[c]) for c in columns).rstrip())
    for r in rows:
        common.out("  ".join(str(r[c]).ljust(widths[c]) for c in columns).rstrip())


@qrels_app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="TREC qrels (topic iter doc grade), BEIR qrels TSV with header, cranqrel, "
                                              "or Parquet (topic_id, doc_id, grade).")],
    name: Annotated[str, typer.Option(callback=options.name("qrels"),
                                      help="Name of the new qrels version (immutable).")],
    collection: Annotated[str, typer.Option(help="The collection the qrels judge (must be ingested).")],
    rule: Annotated[str, typer.Option(help="How the grades were obtained, e.g. a grade mapping. Recorded on the version.")] = "",
    fmt: Annotated[
        str | None, typer.Option("--format", callback=options.choice("trec", "beir", "cranqrel", "parquet"),
                                 help="trec, beir, cranqrel or parquet. Default: Parquet for a Parquet file, "
                                                  "BEIR if the header is present, else TREC.")
    ] = None,
    allow_unknown_docs: Annotated[
        bool, typer.Option(help="Import even if some doc ids are not in the collection (the coverage line shows how many).")
    ] = False,
) -> None:
    """Import a qrels file as a named, immutable qrels version; prints its coverage of the collection."""
    from workbench.errors import UsageError
    from workbench.services.collections.ingest import import_qrels_file

    if fmt is not None and fmt not in ("trec", "beir", "cranqrel", "parquet"):
        raise UsageError(f"expected --format trec, beir, cranqrel or parquet, found {shown(fmt)}")
    store = common.STATE.store(client="workbench qrels import")
    result = import_qrels_file(
        store.collections, store.rubrics, store.qrels, file, name=name, collection=collection, rule=rule,
        fmt=fmt,  # type: ignore[arg-type]
        allow_unknown_docs=allow_unknown_docs,
    )
    i = result.info
    common.out(f"qrels {result.status}: {i.name!r} of collection {i.collection!r} ({i.n_topics:,} topics, "
               f"{i.n_entries:,} entries, {i.n_relevant:,} with grade >= 1; hash {i.content_hash[:12]})")
    common.out(result.coverage.describe())
    for note in result.notes:
        common.out(note)


@qrels_app.command("list")
def list_(
    collection: Annotated[str | None, typer.Option(help="Only this collection's versions.")] = None,
    fmt: Annotated[str, typer.Option("--format", callback=options.choice("table", "tsv", "jsonl"),
                                     help="table, tsv or jsonl.")] = "table",
) -> None:
    """List qrels versions, oldest first, with the state of each one's exported file (``file``:
    ok, - when not exported, or what disagrees with the store; each problem is also named on
    stderr with the command that mends it)."""
    from workbench.services.judging.qrels_files import check_exports

    store = common.STATE.store(client="workbench qrels list")
    versions = store.qrels.list_qrels_versions(collection)
    checks = {c.name: c for c in check_exports(store.qrels, common.STATE.config.labels_dir, [v.name for v in versions])}
    rows: list[dict[str, object]] = [
        {
            "name": v.name, "collection": v.collection, "origin": v.origin, "parent": v.parent_version or "",
            "pool": v.pool_version or "", "topics": v.n_topics, "entries": v.n_entries, "relevant": v.n_relevant,
            "hash": v.content_hash[:12], "created_at": v.created_at.strftime("%Y-%m-%d %H:%M"),
            "file": checks[v.name].status(),
            "sample": "yes" if v.is_sample else "",
        }
        for v in versions
    ]
    if not rows and fmt == "table":
        common.info("no qrels versions yet; import one with `workbench qrels import` or `workbench ingest`")
        return
    _rows(rows, ["name", "collection", "origin", "parent", "pool", "topics", "entries", "relevant", "hash",
                 "created_at", "file", "sample"], fmt)
    for v in versions:
        if not checks[v.name].ok:
            common.info(f"[warning] {checks[v.name].describe()}")


@qrels_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="The qrels version.")],
    fmt: Annotated[str, typer.Option("--format", callback=options.choice("table", "jsonl"),
                                                 help="table or jsonl.")] = "table",
) -> None:
    """Show a qrels version's lineage, rule, counts per grade and coverage of its collection."""
    store = common.STATE.store(client="workbench qrels show")
    info = store.qrels.get_qrels_info(name)
    grades = store.qrels.qrels_grade_counts(name)
    coverage = store.qrels.qrels_doc_coverage(info.collection, store.qrels.get_qrels(name))
    if fmt == "jsonl":
        common.out(jsonout.dumps(info.as_dict() | {"grades": grades, "coverage_share": coverage.share}))
        return
    for key, value in info.as_dict().items():
        common.out(f"{key:<18} {'' if value is None else value}")
    common.out(f"{'grades':<18} " + ", ".join(f"{g}: {n:,}" for g, n in grades.items()))
    common.out(coverage.describe())


@qrels_app.command("export")
def export(
    name: Annotated[str, typer.Argument(help="The qrels version.")],
    out: Annotated[Path | None, typer.Option(help="Target file ('-': stdout). Default: <NAME>.qrels in the database's folder "
                                                          "(labels/ by default).")] = None,
) -> None:
    """Write a qrels version as a TREC qrels file (atomic) and record it in manifest.json beside it.

    Written from the stored version, so it also completes an interrupted publish or export and
    restores an edited file or manifest entry (saying what it replaced).
    """
    from workbench.services.judging.qrels_files import export_qrels

    store = common.STATE.store(client="workbench qrels export")
    result = export_qrels(store.qrels, name, out=out, labels_dir=common.STATE.config.labels_dir)
    if result.manifest is None:  # --out -: the qrels went to stdout
        common.info(f"qrels {name} -> standard output, sha256 {result.sha256}")
        return
    for line in result.replaced:
        common.info(f"[warning] {line}")
    common.info(f"manifest: {result.manifest}")
    common.out(f"{result.path}\tsha256 {result.sha256}")


@qrels_app.command("verify")
def verify(
    names: Annotated[list[str] | None, typer.Argument(
        help="Qrels versions to check (each must be exported). None: the same as --all.", show_default=False)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Check every stored version and every manifest entry.")] = False,
) -> None:
    """Check the exported qrels files and manifest.json against the store: each file exists, has the
    sha256 its manifest entry records and holds the stored version's entries; each entry equals the
    stored version's metadata; each stored version's entries still hash to its recorded content hash.
    Exit 0 with a one-line summary when all agree; exit 1 naming each mismatch and how to mend it."""
    from workbench.errors import UsageError, ValidationError
    from workbench.services.judging.qrels_files import verify_exports

    if all_ and names:
        raise UsageError("give qrels version names or --all, not both")
    store = common.STATE.store(client="workbench qrels verify")
    result = verify_exports(store.qrels, common.STATE.config.labels_dir, names or None)
    for line in result.lines():
        common.out(line)
    if not result.ok:
        raise ValidationError(result.summary())
    common.out(result.summary())
