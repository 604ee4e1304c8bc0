"""CLI commands: ``workbench metadata keys|topics|documents|import-topics|import-documents``.

Document metadata belongs to a collection version (changing it makes a new
version); topic metadata belongs to the collection's topics (a topic's
``filter`` is its eligibility filter). Data goes to stdout, messages to stderr.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from workbench.cli import app, common, options

metadata_app = typer.Typer(
    help="Document and topic metadata: list keys and values, import side files (CSV, TSV, JSONL, Parquet).",
    no_args_is_help=True,
)
app.add_typer(metadata_app, name="metadata")

CollectionOpt = Annotated[str, typer.Option(help="The collection.")]
FmtOpt = Annotated[str, typer.Option("--format", callback=options.choice("table", "tsv", "csv", "jsonl"),
                                                 help="Output format: table, tsv, csv, jsonl.")]


def _cell(value: Any) -> Any:
    from workbench.formats.metadata import json_value

    return "" if value is None else json_value(value)


def _render_metadata(meta: Mapping[str, Mapping[str, Any]], id_column: str, empty: str, fmt: str) -> None:
    """Every topic or document of ``meta`` (id -> key -> value) with its metadata, one column per key
    (sorted); ``empty`` is said instead when there is none."""
    from workbench.cli.runs import render

    names = sorted({k for m in meta.values() for k in m})
    rows = [{id_column: i, **{k: _cell(m.get(k)) for k in names}} for i, m in meta.items()]
    if not rows:
        common.info(empty)
        return
    render(rows, [id_column, *names], fmt)


@metadata_app.command("keys")
def keys(
    collection: CollectionOpt,
    topics: Annotated[bool, typer.Option("--topics", help="Keys of the topic metadata instead of the documents'.")] = False,
    version: Annotated[str | None, typer.Option(help="Collection version (or prefix). Default: the latest.")] = None,
    fmt: FmtOpt = "table",
) -> None:
    """The metadata keys with counts, value types and ranges (the names a filter can use)."""
    from workbench.cli.runs import render

    store = common.STATE.store(client="workbench metadata keys")
    stats = store.metadata.topic_metadata_keys(collection) if topics else store.metadata.document_metadata_keys(collection, version)
    n = len(store.collections.get_topics(collection)) if topics else len(store.collections.get_documents(collection, version))
    rows = [{"key": s.key, "values": s.n_values, "of": n, "types": ", ".join(f"{t} {c}" for t, c in s.types.items()),
             "distinct": s.n_distinct, "min": s.minimum[:40], "max": s.maximum[:40]} for s in stats.values()]
    if not rows:
        common.info(f"collection {collection!r} has no {'topic' if topics else 'document'} metadata")
        return
    render(rows, ["key", "values", "of", "types", "distinct", "min", "max"], fmt)


@metadata_app.command("topics")
def topics_cmd(collection: CollectionOpt, fmt: FmtOpt = "table") -> None:
    """Every topic with its metadata, one column per key."""
    store = common.STATE.store(client="workbench metadata topics")
    _render_metadata(store.metadata.topic_metadata(collection), "topic_id", f"collection {collection!r} has no topic metadata",
                     fmt)


@metadata_app.command("documents")
def documents_cmd(
    collection: CollectionOpt,
    version: Annotated[str | None, typer.Option(help="Collection version (or prefix). Default: the latest.")] = None,
    fmt: FmtOpt = "table",
) -> None:
    """Every document with metadata, one column per key."""
    store = common.STATE.store(client="workbench metadata documents")
    _render_metadata(store.metadata.document_metadata(collection, version), "doc_id",
                     f"collection {collection!r} has no document metadata", fmt)


@metadata_app.command("import-topics")
def import_topics(
    file: Annotated[Path, typer.Argument(help="Side file: topic_id + one column per key (.csv .tsv .jsonl .parquet).")],
    collection: CollectionOpt,
    replace: Annotated[bool, typer.Option(
        "--replace", help="Replace values that differ from the stored ones (old values are kept in the history).")] = False,
) -> None:
    """Set topic metadata (e.g. a per-topic eligibility `filter`, `priority`) from a side file."""
    from workbench.services.collections.metadata import import_topic_metadata

    store = common.STATE.store(client="workbench metadata import-topics")
    r = import_topic_metadata(store.collections, store.metadata, collection, file, replace=replace)
    common.out(f"topic metadata of {collection!r}: {r.n_topics:,} topics, keys {', '.join(r.keys)}: "
               f"{r.n_added:,} values added, {r.n_unchanged:,} unchanged, {r.n_replaced:,} replaced")


@metadata_app.command("import-documents")
def import_documents(
    file: Annotated[Path, typer.Argument(help="Side file: doc_id + one column per key (.csv .tsv .jsonl .parquet).")],
    collection: CollectionOpt,
) -> None:
    """Make a new collection version whose documents carry the file's metadata (other keys kept)."""
    from workbench.services.collections.metadata import import_document_metadata

    store = common.STATE.store(client="workbench metadata import-documents")
    r = import_document_metadata(store.collections, store.metadata, collection, file)
    if r.status == "unchanged":
        common.out(f"collection {collection!r} unchanged: version {r.collection_version[:12]} already has this metadata")
        return
    common.out(f"new version of collection {collection!r}: {r.collection_version[:12]} (parent {r.parent_version[:12]}); "
               f"{r.n_docs_metadata_changed:,} documents' metadata changed; keys {', '.join(r.metadata_keys)}. "
               "Runs of the old version keep it; new runs use this one.")
