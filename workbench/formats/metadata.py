"""Metadata side files: ``id`` + one column per key, as CSV, TSV, JSON lines or Parquet.

A side file gives metadata to documents (id column ``doc_id``) or topics (id
column ``topic_id``); every other column is a key (``workbench.metadata``
rules), every row one document or topic:

* ``.csv`` (comma, RFC 4180 quoting) and ``.tsv`` (tab, no quoting): a header
  line naming the columns, then one row per id. Cells are typed per column
  (``workbench.metadata.infer_column``); an empty cell is "no value".
* ``.jsonl``: one JSON object per line, e.g.
  ``{"doc_id": "1", "year": 1958, "source": "j.ae.scs"}``; values typed as
  JSON (``workbench.metadata.from_json``); a missing key or ``null`` is "no value".
* ``.parquet``: read through DuckDB (``workbench.formats.parquet.read_table``); the id
  column must be a string column, values typed by column type.

In a collection folder the side files are ``doc_metadata.<ext>`` and
``topic_metadata.<ext>`` (``DOC_METADATA_STEM``, ``TOPIC_METADATA_STEM``).

Errors are ``InputFormatError(path, line, ...)``: a missing id column, an empty
or repeated id, a bad key (column name), a row with the wrong number of
cells, a value of the wrong kind.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from workbench.errors import InputFormatError, shown, shown_list
from workbench.formats.io import atomic_write
from workbench.formats.trec import (
    csv_cell_too_long,
    iter_json_objects,
    read_text,
    shown_id,
    shown_json,
)
from workbench.metadata import (
    MetadataValueError,
    MetaValue,
    canonical,
    check_key,
    from_json,
    infer_column,
    value_type,
)

SUFFIXES: tuple[str, ...] = (".jsonl", ".csv", ".tsv", ".parquet")
DOC_METADATA_STEM = "doc_metadata"
TOPIC_METADATA_STEM = "topic_metadata"
IdColumn = Literal["doc_id", "topic_id"]

MetadataTable = dict[str, dict[str, MetaValue]]
"""id -> key -> value, ids in file order; ids with no value at all are kept (empty mapping)."""


def find_side_file(folder: str | Path, stem: str) -> Path | None:
    """The side file ``<stem>.<ext>`` of a folder, or None.

    Raises:
        InputFormatError: more than one (e.g. ``doc_metadata.csv`` and ``doc_metadata.jsonl``).
    """
    found = [Path(folder) / f"{stem}{s}" for s in SUFFIXES if (Path(folder) / f"{stem}{s}").is_file()]
    if len(found) > 1:
        raise InputFormatError(
            str(found[1]), 0,
            f"expected one {stem} file, found {', '.join(p.name for p in found)}. Keep one of them.",
        )
    return found[0] if found else None


def read_metadata_file(path: str | Path, id_column: IdColumn) -> MetadataTable:
    """Read a metadata side file (format by suffix; see the module docstring).

    Args:
        path: the file (``.csv``, ``.tsv``, ``.jsonl`` or ``.parquet``).
        id_column: ``doc_id`` or ``topic_id``.

    Returns:
        id -> key -> value, in file order.

    Raises:
        InputFormatError: an unknown suffix or any problem of the file (file:line).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".jsonl":
        return _read_jsonl(p, id_column)
    if suffix in (".csv", ".tsv"):
        return _read_delimited(p, id_column, "," if suffix == ".csv" else "\t")
    if suffix == ".parquet":
        return _read_parquet(p, id_column)
    raise InputFormatError(
        str(p), 0, f"expected a metadata file ending in {', '.join(SUFFIXES)}, found {shown(suffix or 'no suffix')}. Rename or convert it."
    )


def _check_id(path: str, line: int, value: object, id_column: str, seen: dict[str, int]) -> str:
    if not isinstance(value, str):
        raise InputFormatError(
            path, line, f"expected {id_column!r} to be a string, found {shown_json(value)}. Quote the id."
        )
    if not value or any(c.isspace() for c in value):
        raise InputFormatError(path, line, f"expected a non-empty {id_column} without whitespace, found {shown_id(value)}.")
    if value in seen:
        raise InputFormatError(
            path, line, f"expected each {id_column} once, found {shown_id(value)} again (first on line {seen[value]}). Merge the two rows."
        )
    seen[value] = line
    return value


def _check_column_names(path: str, line: int, names: list[str], id_column: str) -> list[str]:
    if id_column not in names:
        raise InputFormatError(
            path, line, f"expected a {id_column!r} column, found columns {shown_list(names)}. Name the id column {id_column!r}."
        )
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputFormatError(path, line, f"expected each column once, found {shown(name)} twice. Rename one of them.")
        seen.add(name)
        if name != id_column:
            try:
                check_key(name)
            except MetadataValueError as e:
                raise InputFormatError(path, line, f"column {shown(name)}: {e}. Rename the column.") from None
    return names


def _read_jsonl(p: Path, id_column: IdColumn) -> MetadataTable:
    path = str(p)
    out: MetadataTable = {}
    seen: dict[str, int] = {}
    for lineno, obj in iter_json_objects(p):
        if id_column not in obj:
            raise InputFormatError(path, lineno, f"expected a {id_column!r} field, found keys {shown_list(sorted(obj))}. Add the id.")
        ident = _check_id(path, lineno, obj[id_column], id_column, seen)
        out[ident] = _json_values(path, lineno, obj, id_column)
    if not out:
        raise InputFormatError(path, 0, f"expected at least one row, found none. Add one JSON object per {id_column}.")
    return out


def _json_values(path: str, lineno: int, obj: Mapping[str, Any], id_column: str) -> dict[str, MetaValue]:
    meta: dict[str, MetaValue] = {}
    for key, raw in obj.items():
        if key == id_column:
            continue
        try:
            check_key(key)
            value = from_json(raw)
        except MetadataValueError as e:
            raise InputFormatError(path, lineno, f"key {shown(key)}: {e}.") from None
        if value is not None:
            meta[key] = value
    return meta


def json_metadata(path: str, lineno: int, obj: object, *, skip: Iterable[str] = ()) -> dict[str, MetaValue]:
    """The metadata of a BEIR ``metadata`` object (keys in ``skip`` left out).

    Raises:
        InputFormatError: not an object, a bad key or a non-scalar value (file:line).
    """
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise InputFormatError(path, lineno, f"expected 'metadata' to be an object, found {shown_json(obj)}. Make it an object.")
    skipped = set(skip)
    return _json_values(path, lineno, {k: v for k, v in obj.items() if k not in skipped}, "")


def _read_delimited(p: Path, id_column: IdColumn, sep: str) -> MetadataTable:
    path = str(p)
    text = read_text(p)
    if sep == ",":
        reader = csv.reader(io.StringIO(text), delimiter=sep, quoting=csv.QUOTE_MINIMAL, strict=True)
    else:
        reader = csv.reader(io.StringIO(text), delimiter=sep, quoting=csv.QUOTE_NONE, strict=True)
    header: list[str] | None = None
    header_line = 0
    rows: list[tuple[int, list[str]]] = []
    try:
        for cells in reader:
            line = reader.line_num
            if not any(c.strip() for c in cells):
                continue
            if header is None:
                header = _check_column_names(path, line, [c.strip() for c in cells], id_column)
                header_line = line
                continue
            if len(cells) != len(header):
                raise InputFormatError(
                    path, line, f"expected {len(header)} cells (as the header on line {header_line}), found {len(cells)}. "
                    "Fix the row (quote cells that hold the separator)."
                )
            rows.append((line, cells))
    except csv.Error as e:
        raise csv_cell_too_long(path, reader.line_num, e) or InputFormatError(
            path, reader.line_num, f"expected CSV, found a quoting problem ({e}). Fix the quotes.") from None
    if header is None:
        raise InputFormatError(path, 0, f"expected a header line naming the {id_column!r} column, found an empty file.")
    if not rows:
        raise InputFormatError(path, 0, f"expected at least one row after the header, found none. Add one row per {id_column}.")
    id_index = header.index(id_column)
    seen: dict[str, int] = {}
    ids = [_check_id(path, line, cells[id_index], id_column, seen) for line, cells in rows]
    out: MetadataTable = {i: {} for i in ids}
    for j, key in enumerate(header):
        if j == id_index:
            continue
        try:
            values, _ = infer_column([cells[j] for _, cells in rows])
        except MetadataValueError as e:
            raise InputFormatError(path, header_line, f"column {shown(key)}: {e}.") from None
        for ident, value in zip(ids, values, strict=True):
            if value is not None:
                out[ident][key] = value
    return out


def _read_parquet(p: Path, id_column: IdColumn) -> MetadataTable:
    from workbench.formats import parquet

    col = parquet.Column(id_column, (id_column,), "id")
    table = parquet.read_table(p, [col], what=f"{id_column} metadata", keep_extra=True)
    for name in table.extra:
        try:
            check_key(name)
        except MetadataValueError as e:
            raise InputFormatError(str(p), 0, f"column {shown(name)}: {e}. Rename the column.") from None
    out = metadata_from_parquet_columns(str(p), table.values[id_column], table.extra_values)
    return out


def metadata_from_parquet_columns(
    path: str, ids: list[str], columns: Mapping[str, list[Any]]
) -> MetadataTable:
    """id -> key -> value from Parquet columns as DuckDB returns them (NULL = no value).

    Numbers (integers, floats, decimals), DATE, BOOLEAN and strings are values;
    a timestamp, list or struct column is refused naming the row.

    Raises:
        InputFormatError: a repeated id, a bad key, or a value of another type (file and row).
    """
    from datetime import date, datetime
    from decimal import Decimal

    seen: dict[str, int] = {}
    for row, ident in enumerate(ids, 1):
        if ident in seen:
            raise InputFormatError(path, row, f"row {row}: expected each id once, found {shown_id(ident)} again "
                                              f"(first in row {seen[ident]}). Merge the two rows.")
        seen[ident] = row
    out: MetadataTable = {i: {} for i in ids}
    for key, values in columns.items():
        try:
            check_key(key)
        except MetadataValueError as e:
            raise InputFormatError(path, 0, f"column {shown(key)}: {e}. Rename the column.") from None
        for row, (ident, value) in enumerate(zip(ids, values, strict=True), 1):
            if value is None:
                continue
            if isinstance(value, Decimal):
                value = int(value) if value == value.to_integral_value() else float(value)
            if isinstance(value, datetime) or not isinstance(value, str | int | float | bool | date):
                raise InputFormatError(
                    path, row, f"row {row}, column {key!r}: expected a string, number, boolean or DATE column, "
                    f"found {type(value).__name__} {shown(str(value))}. Convert the column (timestamps: cast to DATE).")
            try:
                value_type(value)
            except MetadataValueError as e:
                raise InputFormatError(path, row, f"row {row}, column {shown(key)}: {e}.") from None
            out[ident][key] = value
    return out


def id_line(path: str | Path, id_column: str, ident: str) -> int:
    """The line of ``ident`` in a ``.csv``/``.tsv``/``.jsonl`` metadata side file, 0 when not found (or Parquet).

    For error messages only: the file is read again, after ``read_metadata_file`` accepted it.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return 0
    if suffix == ".jsonl":
        for lineno, line in enumerate(text.split("\n"), 1):
            try:
                obj = json.loads(line) if line.strip() else None
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict) and obj.get(id_column) == ident:
                return lineno
        return 0
    if suffix in (".csv", ".tsv"):
        reader = csv.reader(io.StringIO(text), delimiter="," if suffix == ".csv" else "\t",
                            quoting=csv.QUOTE_MINIMAL if suffix == ".csv" else csv.QUOTE_NONE)
        header: list[str] | None = None
        try:
            for cells in reader:
                if header is None:
                    header = [c.strip() for c in cells]
                    continue
                if id_column in header and len(cells) == len(header) and cells[header.index(id_column)] == ident:
                    return reader.line_num
        except csv.Error:  # the reader of the file refused it first; no line to add
            return 0
    return 0


def json_value(value: MetaValue) -> object:
    """A metadata value as a JSON value (dates as ``YYYY-MM-DD`` strings, integral numbers as ints)."""
    t = value_type(value)
    if t == "date":
        return canonical(value)
    if t == "number" and isinstance(value, int | float):
        text = canonical(value)
        return int(text) if text.lstrip("-").isdigit() else float(value)
    return value


def write_metadata_jsonl(
    path: str | Path, rows: Iterable[tuple[str, Mapping[str, MetaValue]]], id_column: IdColumn
) -> int:
    """Write a ``.jsonl`` side file atomically: one ``{id_column: id, key: value, ...}`` per row, in the given order.

    Keys keep the order given; ids with no metadata are written with the id alone.

    Returns:
        The number of rows written.
    """
    n = 0
    with atomic_write(path) as f:
        for ident, meta in rows:
            obj: dict[str, object] = {id_column: ident}
            obj.update({k: json_value(v) for k, v in meta.items()})
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")
            n += 1
    return n
