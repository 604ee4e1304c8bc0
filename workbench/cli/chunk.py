"""CLI command: ``workbench convert chunk`` (a passage collection cut from a document collection)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import common, options
from workbench.cli.ingest import convert_app


@convert_app.command("chunk")
def convert_chunk(
    collection: Annotated[str, typer.Argument(
        help="The document collection: a collection folder, or a stored collection NAME[@VERSION-PREFIX].")],
    size: Annotated[int, typer.Option("--size", min=1, help="Tokens (or characters, --by chars) per chunk.")],
    name: Annotated[str, typer.Option("--name", callback=options.name("collection"),
                                                help="The chunk collection's name, e.g. cranfield-p64.")],
    overlap: Annotated[int, typer.Option("--overlap", min=0, help="Tokens (or characters) shared by consecutive "
                                                                  "chunks, 0 .. size - 1.")] = 0,
    by: Annotated[str, typer.Option("--by", callback=options.registered(
        "workbench.scoring.units", "CHUNK_UNITS", "chunk unit"),
        help="What --size and --overlap count: tokens (whitespace-delimited "
                                                 "words; chunks end on word boundaries) or chars.")] = "tokens",
    out: Annotated[Path | None, typer.Option("--out", help="Output folder. Default: ./NAME.")] = None,
) -> None:
    """Cut a collection's documents into chunks: a passage collection with a chunk map (chunk_id, doc_id, start, end).

    Each chunk is --size tokens (or characters) with --overlap shared with the next; chunk ids are
    <doc_id>#<i>; offsets are 0-based character offsets into the document's text (end exclusive).
    Writes corpus.jsonl, queries.jsonl, chunk_map.tsv, chunks.meta.json and README.md; then
    `workbench ingest DIR --name NAME` stores it (the chunk map is part of its collection version).
    An existing chunk map made elsewhere is imported the same way: put it as chunk_map.tsv next to
    the passages' corpus.jsonl and ingest the folder.
    """
    from workbench.errors import UsageError
    from workbench.services.collections.chunking import convert_chunk as convert

    if overlap >= size:
        raise UsageError(f"--overlap {overlap} with --size {size}: expected an overlap of 0 .. size - 1 = {size - 1}.")

    dest = out or Path(name)
    opener = (lambda: common.STATE.store(client="workbench convert chunk")) \
        if common.STATE.config.db_path.exists() else None
    r = convert(collection, dest, size=size, overlap=overlap, unit=by, name=name, open_store=opener,
                progress=common.info)
    common.out(f"wrote {', '.join(r.files)} to {r.dest}: {r.n_chunks:,} chunks of {r.n_documents:,} documents "
               f"({r.size} {r.chunk_unit}, overlap {r.overlap}; at most {r.max_chunks} chunks per document, "
               f"{r.n_single:,} documents in one chunk) from {r.source}@{r.source_version[:12]}")
    common.info(f"next: workbench ingest {r.dest} --name {r.name}")
