"""CLI commands: ``workbench filters show|import`` (topic eligibility filters).

A topic's eligibility filter is its topic metadata ``filter`` (another key with
``--key``): an expression over document metadata such as
``year <= 1956 and source in ["naca tn", "arc r & m"]`` (grammar:
``workbench.scoring.filters``). Runs honour filters with ``--filter-mode
pre|post``; ``score`` restricts relevant sets to eligible documents, reports
ineligible judged-relevant documents and counts leaks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import app, common, options

filters_app = typer.Typer(
    help="Topic eligibility filters: show each filtered topic's eligible documents and ineligible judged-relevant "
         "documents; import a topic_id + filter side file.",
    no_args_is_help=True,
)
app.add_typer(filters_app, name="filters")

KeyOpt = Annotated[str, typer.Option(help="Topic metadata key holding each topic's filter.")]


@filters_app.command("show")
def show(
    collection: Annotated[str, typer.Option(help="The collection.")],
    key: KeyOpt = "filter",
    version: Annotated[str | None, typer.Option(
        help="Collection version (or prefix) whose document metadata decides. Default: the latest.")] = None,
    qrels: Annotated[str | None, typer.Option(
        help="A qrels version or file: also count each topic's judged-relevant documents and list the ineligible "
             "ones (ineligible gold).")] = None,
    rel: Annotated[int, typer.Option(callback=options.number(0, what="a grade"),
                                     help="Minimum grade of a relevant document (inclusive).")] = 1,
    fmt: Annotated[str, typer.Option("--format", callback=options.choice("table", "tsv", "csv", "jsonl"),
                                     help="Output format: table, tsv, csv, jsonl.")] = "table",
) -> None:
    """Each filtered topic: its filter, eligible documents (count and share) and, with --qrels, ineligible gold."""
    from workbench.cli.runs import render
    from workbench.services.vectors.eligibility import filter_rows

    store = common.STATE.store(client="workbench filters show")
    grades = None
    if qrels is not None:
        from workbench.formats import parquet, trec

        path = Path(qrels)
        if path.is_file():
            grades = parquet.read_qrels(path) if parquet.is_parquet(path) else trec.read_qrels(path)
        else:
            grades = store.qrels.get_qrels(qrels)
    rows = filter_rows(store, collection, key=key, version=version, qrels=grades, rel=rel)
    out = []
    for r in rows:
        row: dict[str, object] = {"topic": r.topic_id, "filter": r.filter, "eligible": r.n_eligible,
                                  "share": f"{r.n_eligible / r.n_documents:.1%}" if r.n_documents else "-"}
        if grades is not None:
            row.update({"relevant": r.n_relevant, "ineligible gold": len(r.ineligible_gold),
                        "ineligible gold ids": " ".join(r.ineligible_gold[:10])
                        + (f" ... {len(r.ineligible_gold) - 10} more" if len(r.ineligible_gold) > 10 else "")})
        out.append(row)
    cols = ["topic", "filter", "eligible", "share"]
    if grades is not None:
        cols += ["relevant", "ineligible gold", "ineligible gold ids"]
    render(out, cols, fmt)
    none = sum(1 for r in rows if r.n_eligible == 0)
    gold = sum(len(r.ineligible_gold) for r in rows)
    common.info(f"{len(rows):,} topic(s) of {collection!r} carry a {key!r} filter"
                + (f"; {none:,} admit no document" if none else "")
                + (f"; {gold:,} judged-relevant document(s) are ineligible (a data problem: `score` leaves them "
                   "out of |R| and reports them; --strict-eligibility fails)" if gold else ""))


@filters_app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(
        help="Side file with a topic_id column and a filter column (.csv .tsv .jsonl .parquet).")],
    collection: Annotated[str, typer.Option(help="The collection.")],
    replace: Annotated[bool, typer.Option(
        "--replace", help="Replace filters that differ from the stored ones (old ones kept in the history).")] = False,
) -> None:
    """Store each topic's filter (topic metadata 'filter'); every filter is parsed and checked first."""
    from workbench.errors import InputFormatError
    from workbench.formats.metadata import read_metadata_file
    from workbench.services.collections.metadata import import_topic_metadata

    table = read_metadata_file(file, "topic_id")
    if not any("filter" in m for m in table.values()):
        raise InputFormatError(str(file), 0, "expected a 'filter' column (topic_id, filter), found "
                                             f"{sorted({k for m in table.values() for k in m})[:12]}. Name the column 'filter'.")
    store = common.STATE.store(client="workbench filters import")
    r = import_topic_metadata(store.collections, store.metadata, collection, file, replace=replace)
    common.out(f"filters of {collection!r}: {r.n_topics:,} topics: {r.n_added:,} values added, "
               f"{r.n_unchanged:,} unchanged, {r.n_replaced:,} replaced (keys {', '.join(r.keys)})")
