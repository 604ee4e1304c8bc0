"""Metadata values of documents and topics: types, keys, canonical text and hashes (base layer).

A *metadata value* is a string, a number (``int`` or finite ``float``), a date
(``datetime.date``, never a ``datetime``) or a boolean. Documents and topics
carry ``key -> value`` mappings:

* **Document metadata** belongs to a collection version and is part of its
  content hash (``workbench.store.collections.collection_version_of``): a
  changed value is a new collection version. Filters (``scoring.filters``)
  test it.
* **Topic metadata** belongs to the collection's topics (not versioned), for
  example ``filter`` (the topic's eligibility filter), ``priority``
  (``"critical"``), ``no_answer`` (``true``), ``locale``.

Keys: 1 to 64 characters, a letter or ``_`` first, then letters, digits, ``_``,
``.`` or ``-`` (``KEY_RULE``), so that a filter expression can name them.

Typing rules (one per source, so the same data gives the same values):

* JSON (BEIR ``metadata`` objects, ``*.jsonl`` side files): strings, numbers
  and booleans keep their JSON type; a string that is a full ISO date
  ``YYYY-MM-DD`` is a date (JSON has no date type); ``null`` means "no value"
  (the key is absent); arrays and objects are refused.
* Text cells (CSV/TSV side files, TREC topic tags): typed per *column*
  (``infer_column``): a column whose non-empty cells are all numbers is
  numeric, all ISO dates is dates, all ``true``/``false`` is boolean, else every
  cell is a string as written. An empty cell is "no value". A number with a
  leading zero (``007``) is not a number, so identifiers such as zip codes stay
  strings.
* Parquet: the column type decides (integer/float/decimal -> number, DATE ->
  date, BOOLEAN -> boolean, string -> string); timestamps are refused.

Canonical text (``canonical``), used in hashes and in the store: strings as
they are; booleans ``true``/``false``; integers (and integral floats below
2**53) as decimal integers; other floats as ``repr``; dates ISO ``YYYY-MM-DD``.
So ``1958`` and ``1958.0`` are the same value.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Literal

from workbench.errors import ValidationError, shown

MetaValue = str | int | float | bool | date
"""One metadata value."""

Metadata = Mapping[str, MetaValue]
"""key -> value of one document or topic."""

ValueType = Literal["string", "number", "date", "boolean"]
VALUE_TYPES: tuple[str, ...] = ("string", "number", "date", "boolean")

KEY_RULE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
KEY_RULE_TEXT = "1 to 64 characters: a letter or '_' first, then letters, digits, '_', '.' or '-'"

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_LEADING_ZERO = re.compile(r"[+-]?0[0-9]")
_EXACT_INT = 2**53


class MetadataValueError(ValidationError):
    """A metadata key or value breaks the rules of this module (readers add file and line)."""


def check_key(key: str) -> str:
    """``key`` if it is a valid metadata key.

    Raises:
        MetadataValueError: naming the key and ``KEY_RULE_TEXT``.

    Example:
        >>> check_key("year")
        'year'
    """
    if not isinstance(key, str) or not KEY_RULE.fullmatch(key):
        raise MetadataValueError(f"expected a metadata key of {KEY_RULE_TEXT}, found {shown(key)}")
    return key


def value_type(value: MetaValue) -> ValueType:
    """The type name of a value: ``string``, ``number``, ``date`` or ``boolean``.

    Raises:
        MetadataValueError: not a metadata value (e.g. a ``datetime``, a list, a nan).
    """
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "number"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise MetadataValueError(f"expected a finite number, found {value!r}")
        return "number"
    if isinstance(value, datetime):
        raise MetadataValueError(f"expected a date without a time, found {value.isoformat()!r}; store the date")
    if isinstance(value, date):
        return "date"
    if isinstance(value, str):
        return "string"
    raise MetadataValueError(
        f"expected a string, number, date or boolean, found {type(value).__name__} {shown(value)}"
    )


def parse_date(text: str) -> date | None:
    """The date of a full ISO ``YYYY-MM-DD`` text, or None when it is not one (or not a real date)."""
    if not _ISO_DATE.fullmatch(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def from_json(value: object) -> MetaValue | None:
    """A metadata value from a decoded JSON value (see the module docstring).

    Returns:
        The value; None for JSON ``null`` (no value).

    Raises:
        MetadataValueError: an array, an object, or a non-finite number.

    Example:
        >>> from_json("1958-03-01"), from_json(1958), from_json("naca tn")
        (datetime.date(1958, 3, 1), 1958, 'naca tn')
    """
    if value is None:
        return None
    if isinstance(value, str):
        d = parse_date(value)
        return d if d is not None else value
    if isinstance(value, bool | int | float):
        value_type(value)
        return value
    kind = "an array" if isinstance(value, list) else ("an object" if isinstance(value, dict) else type(value).__name__)
    raise MetadataValueError(f"expected a string, number, boolean or null, found {kind}; flatten it into scalar keys")


def _is_number(cell: str) -> bool:
    return bool(_NUMBER.fullmatch(cell)) and not _LEADING_ZERO.match(cell)


_LONGEST_INTEGER = 4000
"""Digits of the longest integer read (Python's ``int()`` refuses more than 4,300)."""


def _number(cell: str) -> int | float:
    if _INTEGER.fullmatch(cell):
        if len(cell.lstrip("+-")) > _LONGEST_INTEGER:
            raise MetadataValueError(f"expected a number of at most {_LONGEST_INTEGER:,} digits, found {shown(cell)}")
        return int(cell)
    x = float(cell)
    if not math.isfinite(x):
        raise MetadataValueError(f"expected a finite number, found {shown(cell)}")
    return x


def infer_column(cells: Sequence[str]) -> tuple[list[MetaValue | None], ValueType | None]:
    """Type a column of text cells (CSV/TSV) as a whole.

    Args:
        cells: the column's cells as written; ``""`` is "no value".

    Returns:
        (one value or None per cell, the column's type or None when every cell is empty).
        Non-empty cells are all numbers -> numbers; all ISO dates -> dates; all
        ``true``/``false`` (any case) -> booleans; otherwise strings as written.

    Example:
        >>> infer_column(["1958", "", "1960"])
        ([1958, None, 1960], 'number')
        >>> infer_column(["007", "12"])[1]
        'string'
    """
    full = [c for c in cells if c != ""]
    if not full:
        return [None] * len(cells), None
    if all(_is_number(c) for c in full):
        return [_number(c) if c != "" else None for c in cells], "number"
    dates = [parse_date(c) for c in full]
    if all(d is not None for d in dates):
        return [parse_date(c) if c != "" else None for c in cells], "date"
    if all(c.lower() in ("true", "false") for c in full):
        return [(c.lower() == "true") if c != "" else None for c in cells], "boolean"
    return [c if c != "" else None for c in cells], "string"


def infer_value(cell: str) -> MetaValue | None:
    """One text cell typed on its own (a column of one cell; see ``infer_column``)."""
    return infer_column([cell])[0][0]


def canonical(value: MetaValue) -> str:
    """The canonical text of a value (see the module docstring).

    Example:
        >>> canonical(1958.0), canonical(0.5), canonical(True), canonical(date(1958, 1, 2))
        ('1958', '0.5', 'true', '1958-01-02')
    """
    t = value_type(value)
    if t == "boolean":
        return "true" if value else "false"
    if t == "number":
        if isinstance(value, int):
            return str(value)
        x = float(value)  # type: ignore[arg-type]
        return str(int(x)) if x.is_integer() and abs(x) < _EXACT_INT else repr(x)
    if t == "date":
        return value.isoformat()  # type: ignore[union-attr]
    return str(value)


def parse_canonical(kind: str, text: str) -> MetaValue:
    """The value of a stored (type, canonical text) pair; inverse of ``canonical``.

    Raises:
        MetadataValueError: an unknown type or a text that does not parse.
    """
    if kind == "string":
        return text
    if kind == "boolean":
        if text not in ("true", "false"):
            raise MetadataValueError(f"stored boolean {text!r} is neither 'true' nor 'false'")
        return text == "true"
    if kind == "number":
        if not _NUMBER.fullmatch(text):
            raise MetadataValueError(f"stored number {text!r} does not parse")
        return _number(text)
    if kind == "date":
        d = parse_date(text)
        if d is None:
            raise MetadataValueError(f"stored date {text!r} is not YYYY-MM-DD")
        return d
    raise MetadataValueError(f"unknown metadata type {kind!r}; known: {', '.join(VALUE_TYPES)}")


def check_metadata(meta: Mapping[str, object]) -> dict[str, MetaValue]:
    """A checked copy of one key -> value mapping (valid keys, metadata values; None values dropped).

    Raises:
        MetadataValueError: a bad key or value (naming the key).
    """
    out: dict[str, MetaValue] = {}
    for key, value in meta.items():
        check_key(key)
        if value is None:
            continue
        try:
            value_type(value)  # type: ignore[arg-type]
        except MetadataValueError as e:
            raise MetadataValueError(f"key {key!r}: {e}") from None
        out[key] = value  # type: ignore[assignment]
    return out


def metadata_hash(meta: Metadata) -> str:
    """sha256 (hex) of one document's metadata.

    The hashed text is the compact JSON array ``[[key, type, canonical], ...]``
    sorted by key (``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``),
    UTF-8 encoded.

    Example:
        >>> metadata_hash({"year": 1958}) == metadata_hash({"year": 1958.0})
        True
    """
    rows = [[k, value_type(v), canonical(v)] for k, v in sorted(meta.items())]
    text = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def merge_metadata(
    base: Mapping[str, Mapping[str, MetaValue]],
    extra: Mapping[str, Mapping[str, MetaValue]],
) -> tuple[dict[str, dict[str, MetaValue]], list[tuple[str, str, MetaValue, MetaValue]]]:
    """Union of two id -> metadata mappings.

    Returns:
        (the merged mapping, the conflicts: (id, key, value in base, value in
        extra) for every key both give with different canonical values; the
        merged mapping keeps ``base``'s value there).
    """
    merged = {i: dict(m) for i, m in base.items()}
    conflicts: list[tuple[str, str, MetaValue, MetaValue]] = []
    for i, meta in extra.items():
        target = merged.setdefault(i, {})
        for k, v in meta.items():
            if k in target and (value_type(target[k]), canonical(target[k])) != (value_type(v), canonical(v)):
                conflicts.append((i, k, target[k], v))
                continue
            target[k] = v
    return {i: m for i, m in merged.items() if m}, conflicts
