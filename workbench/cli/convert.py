"""CLI command: ``workbench convert smart`` (any SMART collection; ``convert cranfield`` is its preset)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import common, options
from workbench.cli.ingest import convert_app
from workbench.errors import UsageError, shown

DEFAULT_DOC_FIELDS = ("title=.T", "text=.W")
DEFAULT_QUERY_FIELDS = ("text=.W",)


def _with_defaults(given: list[str] | None, defaults: tuple[str, ...], what: str) -> tuple[tuple[str, str], ...]:
    """The given fields plus each default whose name and marker are both still free."""
    from workbench.services.collections.convert import parse_fields

    fields = list(parse_fields(given or [], what=what))
    for name, marker in parse_fields(list(defaults), what=what):
        if all(n != name and m != marker for n, m in fields):
            fields.append((name, marker))
    return tuple(fields)


@convert_app.command("smart")
def convert_smart(
    dest_dir: Annotated[Path, typer.Argument(help="Output folder (corpus.jsonl, queries.jsonl, qrels.reference.txt, ...).")],
    docs: Annotated[Path, typer.Option(help="SMART document file (.I records with .T, .W, .A, ... fields).")],
    queries: Annotated[Path, typer.Option(help="SMART query file (.I records with a .W text).")],
    qrels: Annotated[Path, typer.Option(help="Qrels: 'query doc', 'query doc grade' or 4 columns (TREC or SMART).")],
    field: Annotated[list[str] | None, typer.Option(
        "--field", help="Document field NAME=.MARKER, repeatable: title and text become the document's, other names "
                        "metadata (e.g. --field authors=.A). Default title=.T, text=.W for names not given.")] = None,
    query_field: Annotated[list[str] | None, typer.Option(
        "--query-field", help="Query field NAME=.MARKER, repeatable: text (the query), description, narrative, "
                              "other names metadata. Default text=.W.")] = None,
    unknown: Annotated[str, typer.Option(
        help="Markers no --field names: keep (as metadata under their letter) or ignore.")] = "keep",
    skip: Annotated[list[str] | None, typer.Option(
        "--skip", help="Marker dropped unless a --field names it, repeatable; 'none' drops nothing. Default .X "
                       "(cross-references).")] = None,
    text_to_end: Annotated[bool, typer.Option(
        help="The text field runs to the next .I: marker lines inside it are dropped (Cranfield's files need it).")] = False,
    query_numbering: Annotated[str, typer.Option(
        help="How the qrels name queries: auto (checked both ways, reported), id (.I value) or position (1..n in "
             "file order, as Cranfield's).")] = "auto",
    qrels_columns: Annotated[str | None, typer.Option(
        help="Column roles, e.g. query,doc,ignore,grade (roles: query, doc, grade, ignore). Default: detected.")] = None,
    grade_map: Annotated[list[str] | None, typer.Option(
        "--grade-map", help="VALUE=GRADE for the qrels' grade column, repeatable (e.g. --grade-map 1=4 --grade-map "
                            "-1=0). Default: whole numbers as written; one constant value (0.000000) = list of "
                            "relevant pairs, grade 1.")] = None,
    allow_unknown_docs: Annotated[bool, typer.Option(help="Convert even if qrels name documents not in the corpus.")] = False,
    name: Annotated[str | None, typer.Option(callback=options.name("collection"),
                                             help="The collection's name in the README. Default: DEST's name.")] = None,
) -> None:
    """Convert any SMART collection (documents, queries, qrels) into the workbench's layout.

    The query numbering and the qrels columns are checked against the files and
    reported; the grade mapping is written to qrels.meta.json. Example:
    workbench convert smart --docs CISI.ALL --queries CISI.QRY --qrels CISI.REL cisi --field authors=.A
    """
    from workbench.formats import smart
    from workbench.services.collections.convert import SmartSpec
    from workbench.services.collections.convert import convert_smart as convert

    if unknown not in ("keep", "ignore"):
        raise UsageError(f"expected --unknown keep or ignore, found {shown(unknown)}")
    if query_numbering not in ("auto", "id", "position"):
        raise UsageError(f"expected --query-numbering auto, id or position, found {shown(query_numbering)}")
    skips: tuple[str, ...] = ("X",)
    if skip is not None:
        try:
            skips = tuple(smart.marker_of(s) for s in skip if s.strip().lower() != "none")
        except ValueError as e:
            raise UsageError(f"--skip: expected a marker such as .X, found {shown(e.args[0])}") from None
    try:
        roles = smart.parse_roles(qrels_columns) if qrels_columns else None
        gmap = smart.parse_grade_map(grade_map) if grade_map else None
    except ValueError as e:
        raise UsageError(f"--qrels-columns/--grade-map: {e}") from None
    spec = SmartSpec(
        docs=docs, queries=queries, qrels=qrels,
        doc_fields=_with_defaults(field, DEFAULT_DOC_FIELDS, "--field"),
        query_fields=_with_defaults(query_field, DEFAULT_QUERY_FIELDS, "--query-field"),
        unknown=unknown,  # type: ignore[arg-type]
        skip=skips, text_to_end=text_to_end,
        query_numbering=None if query_numbering == "auto" else query_numbering,  # type: ignore[arg-type]
        qrels_columns=roles, grade_map=gmap, allow_unknown_docs=allow_unknown_docs, name=name or "",
    )
    report = convert(spec, dest_dir, progress=common.info)
    common.out(f"wrote {', '.join(report.files)} to {report.dest}: {report.n_documents:,} documents, "
               f"{report.n_topics:,} topics, {report.n_qrels:,} judgments over {report.n_qrels_topics:,} topics")
    for note in report.notes:
        common.out(note)
    for w in report.warnings:
        common.info(f"[warning] {w}")
    common.info(f"next: workbench ingest {report.dest}")
