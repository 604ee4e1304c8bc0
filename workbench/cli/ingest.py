"""CLI commands: ``workbench ingest``, ``workbench collections``, ``workbench convert cranfield``.

Also registers the ``workbench qrels`` group (``workbench.cli.qrels``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench import jsonout
from workbench.cli import app, common, options

convert_app = typer.Typer(help="Convert raw collections into the workbench's layout.", no_args_is_help=True)
app.add_typer(convert_app, name="convert")


@app.command()
def ingest(
    path: Annotated[
        Path,
        typer.Argument(help=(
            "Collection folder: corpus.jsonl + queries.jsonl (BEIR; optional qrels/*.tsv and qrels.reference.txt; "
            "corpus.parquet, queries.parquet, qrels.reference.parquet and qrels/*.parquet likewise), the SMART files "
            "cran.all.1400, cran.qry, cranqrel, or irds:DATASET_ID (read from the local ir_datasets cache, never "
            "downloaded)."
        )),
    ],
    name: Annotated[str | None, typer.Option(callback=options.name("collection"),
                                             help="Collection name. Default: the folder's name.")] = None,
    allow_unknown_docs: Annotated[
        bool, typer.Option(help="Import qrels even if some of their doc ids are not in the corpus.")
    ] = False,
    replace_topic_metadata: Annotated[
        bool, typer.Option(help="Let the folder's topic metadata replace stored values that differ (old ones kept in the history).")
    ] = False,
) -> None:
    """Ingest a collection: documents, topics and reference qrels, versioned by content.

    Re-running on the same files changes nothing; a changed corpus (texts or
    document metadata) becomes a new collection version (the old one is kept).
    Metadata side files: doc_metadata.{jsonl,csv,tsv,parquet} (doc_id + columns)
    and topic_metadata.{jsonl,csv,tsv,parquet} (topic_id + columns).
    """
    from workbench.services.collections.ingest import describe_ingest, ingest_folder

    store = common.STATE.store(client="workbench ingest")
    result = ingest_folder(store, path, name=name, allow_unknown_docs=allow_unknown_docs,
                           replace_topic_metadata=replace_topic_metadata, progress=common.info)
    for line in describe_ingest(result):
        common.out(line)


@app.command()
def collections(
    fmt: Annotated[str, typer.Option("--format", callback=options.choice("table", "tsv", "jsonl"),
                                     help="table, tsv or jsonl.")] = "table",
    versions: Annotated[bool, typer.Option(help="Also list every version of each collection.")] = False,
) -> None:
    """List collections with their latest version, counts and (optionally) version history."""
    store = common.STATE.store(client="workbench collections")
    infos = store.collections.list_collections()
    if not infos:
        common.info("no collections yet; ingest one with `workbench ingest sample_corpus/cranfield`")
        return
    if fmt == "jsonl":
        for c in infos:
            row = {"collection": c.collection, "latest_version": c.latest_version, "n_versions": c.n_versions,
                   "n_documents": c.n_documents, "n_topics": c.n_topics, "created_at": c.created_at.isoformat()}
            if versions:
                row["versions"] = [
                    {"collection_version": v.collection_version, "parent_version": v.parent_version,
                     "n_documents": v.n_documents, "source": v.source, "created_at": v.created_at.isoformat()}
                    for v in store.collections.collection_versions(c.collection)
                ]
            common.out(jsonout.dumps(row))
        return
    sep = "\t" if fmt == "tsv" else "  "
    header = ["collection", "latest_version", "versions", "documents", "topics"]
    rows = [[c.collection, c.latest_version[:12], str(c.n_versions), str(c.n_documents), str(c.n_topics)] for c in infos]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    common.out(sep.join(h if fmt == "tsv" else h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for r in rows:
        common.out(sep.join(x if fmt == "tsv" else x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip())
        if versions:
            for v in store.collections.collection_versions(r[0]):
                parent = v.parent_version[:12] or "-"
                common.out(f"  version {v.collection_version[:12]}  parent {parent}  {v.n_documents:,} documents  "
                           f"{v.created_at:%Y-%m-%d %H:%M}  {v.source}")


@convert_app.command("cranfield")
def convert_cranfield(
    src_dir: Annotated[Path, typer.Argument(help="Folder with the raw cran.all.1400, cran.qry and cranqrel.")],
    dest_dir: Annotated[Path, typer.Argument(help="Output folder, e.g. sample_corpus/cranfield.")],
) -> None:
    """Convert the raw Cranfield SMART files to corpus.jsonl, queries.jsonl and qrels.reference.txt (+ README).

    Topics are renumbered 1..225 in cran.qry file order (cranqrel's numbering);
    grades are 5 - code (code -1 means 5).
    """
    from workbench.services.collections.ingest import convert_cranfield as convert

    report = convert(src_dir, dest_dir, progress=common.info)
    common.out(f"wrote {', '.join(report.files)} to {report.dest}: {report.n_documents:,} documents, "
               f"{report.n_topics:,} topics, {report.n_qrels:,} judgments over {report.n_qrels_topics:,} topics")
