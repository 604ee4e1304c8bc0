"""The eligibility filter language: which documents a topic may be shown (pure).

A topic's *filter* is a small expression over document metadata
(``workbench.metadata``), e.g.::

    year <= 1956 and source in ["naca tn", "arc r & m"]
    (published >= 2020-01-01 or pinned = true) and locale != "en-GB"
    not has(year)

Grammar (keywords ``and or not in has true false`` in any case; keys are
case-sensitive metadata keys, ``KEY_RULE``)::

    filter     := or_expr
    or_expr    := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | primary
    primary    := "(" or_expr ")" | "has" "(" KEY ")" | KEY op literal
                | KEY "in" list | KEY "not" "in" list
    op         := "=" | "==" | "!=" | "<" | "<=" | ">" | ">="
    list       := "[" [literal ("," literal)*] "]"
    literal    := string | number | date | "true" | "false"
    string     := '"' ... '"' | "'" ... "'"       (backslash escapes the quote and itself)
    number     := -12, 3.5, 1e3                     (as in JSON)
    date       := YYYY-MM-DD                        (bare, e.g. 1956-06-30)

Semantics (two-valued; each pinned by ``tests/scoring/test_filters.py``):

* A comparison is true only when the document has the key **with a value of
  the literal's type** and the relation holds; so a document without ``year``
  (or with a string ``year``) matches neither ``year <= 1956`` nor
  ``year > 1956`` nor ``year != 1956``. ``has(key)`` tests presence;
  ``not has(year)`` selects the documents without a year.
* ``=``/``==``/``!=`` compare strings (exactly, case-sensitive), numbers
  (``1958 = 1958.0``), dates and booleans. ``<``, ``<=``, ``>``, ``>=`` compare
  numbers or dates only (a string literal there is an error: ranges on text
  are not defined).
* ``key in [a, b]`` is true when the value equals one of the literals (same
  rules as ``=``); ``key not in [...]`` is ``has(key) and not (key in [...])``.
* ``not``, ``and``, ``or`` as in logic; ``and`` binds tighter than ``or``.

Errors: ``FilterSyntaxError`` gives the 1-based column and a caret under the
filter text (a long filter is shown cut, around the column); parentheses and
``not``s nest at most ``text.NESTING_MAX`` (100) deep, so that no filter can
exhaust the recursive parser's stack; ``UnknownMetadataKeyError`` names the key and the known keys
(``check_keys``), and a literal whose type no value of the key has is an error too.

Two evaluators give the same answer: ``Filter.matches(metadata)`` for one
document, and ``Filter.mask(MetadataColumns)`` (numpy, vectorised) for a whole
collection version.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Literal

from workbench.errors import ValidationError, cut, shown
from workbench.metadata import KEY_RULE, MetaValue, canonical, parse_date, value_type
from workbench.text import NESTING_MAX

if TYPE_CHECKING:
    import numpy as np

Op = Literal["=", "!=", "<", "<=", ">", ">="]
_ORDER_OPS = ("<", "<=", ">", ">=")
_KEYWORDS = {"and", "or", "not", "in", "has", "true", "false"}

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2}(?![0-9A-Za-z_.-]))
      | (?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?(?![0-9A-Za-z_]))
      | (?P<name>[A-Za-z_][A-Za-z0-9_.-]*)
      | (?P<op>==|!=|<=|>=|=|<|>)
      | (?P<punct>[()\[\],])
      | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    """,
    re.VERBOSE,
)


class FilterSyntaxError(ValidationError):
    """A filter that does not parse.

    Attributes:
        text: the filter.
        column: 1-based column of the problem (len(text) + 1 = the end).
        problem: what was expected and found.
    """

    def __init__(self, text: str, column: int, problem: str) -> None:
        self.text = text
        self.column = column
        self.problem = problem
        shown_text, caret = _excerpt(text, column)
        super().__init__(f"filter {shown(text, _SHOWN_FILTER)}: column {column}: {problem}\n  {shown_text}\n  "
                         f"{' ' * caret}^")


_SHOWN_FILTER = 100
"""Characters of a filter an error message shows (a longer one is shown around the column of the problem)."""


def _excerpt(text: str, column: int) -> tuple[str, int]:
    """(the filter as shown under an error, the caret's offset in it): the whole text when short, else
    ``_SHOWN_FILTER`` characters around ``column`` with ``…`` where it is cut."""
    if len(text) <= _SHOWN_FILTER:
        return text, column - 1
    start = max(0, min(column - 1 - _SHOWN_FILTER // 2, len(text) - _SHOWN_FILTER))
    end = start + _SHOWN_FILTER
    head = "\u2026" if start else ""
    return head + text[start:end] + ("\u2026" if end < len(text) else ""), column - 1 - start + len(head)


class UnknownMetadataKeyError(ValidationError):
    """A filter names a key no document has (or compares it with a literal of a type it never has).

    Attributes:
        key: the key.
        known: the known keys, sorted.
    """

    def __init__(self, key: str, known: Iterable[str], message: str) -> None:
        self.key = key
        self.known = sorted(known)
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str
    text: str
    column: int


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            hint = " (close the string with its quote)" if ch in "\"'" else ""
            raise FilterSyntaxError(text, pos + 1, f"expected a key, value, operator or parenthesis, found {ch!r}{hint}")
        kind = m.lastgroup or ""
        if kind != "ws":
            out.append(_Tok(kind, m.group(0), pos + 1))
        pos = m.end()
    out.append(_Tok("end", "", len(text) + 1))
    return out


# -- the expression tree ------------------------------------------------------------------


class MetadataColumns:
    """The metadata of many documents as typed columns, for ``Filter.mask``.

    Args:
        doc_ids: the documents, in the order the masks use.
        metadata: doc_id -> key -> value (documents without metadata may be absent).

    Attributes:
        doc_ids: as given (tuple).
        key_types: key -> the value types present for it (what ``check_keys`` needs).
    """

    def __init__(self, doc_ids: Sequence[str], metadata: Mapping[str, Mapping[str, MetaValue]]) -> None:
        import numpy as np

        self.doc_ids = tuple(doc_ids)
        n = len(self.doc_ids)
        raw: dict[tuple[str, str], tuple[list[int], list[object]]] = {}
        for i, d in enumerate(self.doc_ids):
            for k, v in metadata.get(d, {}).items():
                t = value_type(v)
                rows, vals = raw.setdefault((k, t), ([], []))
                rows.append(i)
                vals.append(v.toordinal() if t == "date" else v)  # type: ignore[union-attr]
        self._cols: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        for (k, kind), (rows, vals) in raw.items():
            present = np.zeros(n, dtype=bool)
            present[rows] = True
            dtype: type = {"number": np.float64, "date": np.int64, "boolean": np.bool_}.get(kind, object)
            values = np.zeros(n, dtype=dtype) if dtype is not object else np.full(n, "", dtype=object)
            values[rows] = np.asarray(vals, dtype=dtype) if dtype is not object else np.array(vals, dtype=object)
            self._cols[(k, kind)] = (present, values)
        types: dict[str, set[str]] = {}
        for k, kind in self._cols:
            types.setdefault(k, set()).add(kind)
        self.key_types: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in sorted(types.items())}

    def __len__(self) -> int:
        return len(self.doc_ids)

    def column(self, key: str, kind: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(present mask, values) of a key's values of one type, or None."""
        return self._cols.get((key, kind))

    def present(self, key: str) -> np.ndarray:
        """Documents that have any value for ``key``."""
        import numpy as np

        out = np.zeros(len(self.doc_ids), dtype=bool)
        for (k, _t), (p, _v) in self._cols.items():
            if k == key:
                out |= p
        return out


def _same(a: MetaValue, b: MetaValue) -> bool:
    return value_type(a) == value_type(b) and canonical(a) == canonical(b)


def _literal_text(v: MetaValue) -> str:
    t = value_type(v)
    if t == "string":
        s = str(v)
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return canonical(v)


class Filter:
    """A parsed filter (``parse_filter``); evaluate it with ``matches`` or ``mask``.

    Attributes:
        text: the text it was parsed from ("" for a built node).
    """

    text: str = ""

    def matches(self, metadata: Mapping[str, MetaValue]) -> bool:
        """Whether one document (key -> value) is eligible."""
        raise NotImplementedError

    def mask(self, columns: MetadataColumns) -> np.ndarray:
        """Eligibility of every document of ``columns`` (bool array, ``columns.doc_ids`` order)."""
        raise NotImplementedError

    def keys(self) -> frozenset[str]:
        """The metadata keys the filter names."""
        raise NotImplementedError

    def comparisons(self) -> list[tuple[str, MetaValue]]:
        """(key, literal) of every comparison, for type checks."""
        raise NotImplementedError

    @property
    def canonical(self) -> str:
        """The normalised text (fully parenthesised, ``=``, double quotes); equal filters print equal."""
        raise NotImplementedError

    def eligible(self, columns: MetadataColumns) -> frozenset[str]:
        """The doc ids of ``columns`` the filter admits."""
        m = self.mask(columns)
        return frozenset(d for d, ok in zip(columns.doc_ids, m.tolist(), strict=True) if ok)

    def __str__(self) -> str:
        return self.canonical

    def __repr__(self) -> str:
        return f"Filter({self.canonical!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Filter) and other.canonical == self.canonical

    def __hash__(self) -> int:
        return hash(self.canonical)


class _Compare(Filter):
    def __init__(self, key: str, op: Op, value: MetaValue) -> None:
        self.key, self.op, self.value = key, op, value
        self.kind = value_type(value)

    def matches(self, metadata: Mapping[str, MetaValue]) -> bool:
        if self.key not in metadata:
            return False
        v = metadata[self.key]
        if value_type(v) != self.kind:
            return False
        if self.op == "=":
            return _same(v, self.value)
        if self.op == "!=":
            return not _same(v, self.value)
        a = v.toordinal() if self.kind == "date" else float(v)  # type: ignore[union-attr,arg-type]
        b = self.value.toordinal() if self.kind == "date" else float(self.value)  # type: ignore[union-attr,arg-type]
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[self.op]

    def mask(self, columns: MetadataColumns) -> np.ndarray:
        import numpy as np

        col = columns.column(self.key, self.kind)
        if col is None:
            return np.zeros(len(columns), dtype=bool)
        present, values = col
        lit: object = self.value
        if self.kind == "date":
            lit = self.value.toordinal()  # type: ignore[union-attr]
        elif self.kind == "number":
            lit = float(self.value)  # type: ignore[arg-type]
        if self.op == "=":
            hit = values == lit
        elif self.op == "!=":
            hit = values != lit
        elif self.op == "<":
            hit = values < lit
        elif self.op == "<=":
            hit = values <= lit
        elif self.op == ">":
            hit = values > lit
        else:
            hit = values >= lit
        out: np.ndarray = present & np.asarray(hit, dtype=bool)
        return out

    def keys(self) -> frozenset[str]:
        return frozenset({self.key})

    def comparisons(self) -> list[tuple[str, MetaValue]]:
        return [(self.key, self.value)]

    @property
    def canonical(self) -> str:
        return f"{self.key} {self.op} {_literal_text(self.value)}"


class _In(Filter):
    def __init__(self, key: str, values: Sequence[MetaValue], negated: bool) -> None:
        self.key, self.values, self.negated = key, tuple(values), negated

    def matches(self, metadata: Mapping[str, MetaValue]) -> bool:
        if self.key not in metadata:
            return False
        found = any(_same(metadata[self.key], v) for v in self.values)
        return not found if self.negated else found

    def mask(self, columns: MetadataColumns) -> np.ndarray:
        import numpy as np

        out = np.zeros(len(columns), dtype=bool)
        for v in self.values:
            out |= _Compare(self.key, "=", v).mask(columns)
        return (columns.present(self.key) & ~out) if self.negated else out

    def keys(self) -> frozenset[str]:
        return frozenset({self.key})

    def comparisons(self) -> list[tuple[str, MetaValue]]:
        return [(self.key, v) for v in self.values]

    @property
    def canonical(self) -> str:
        items = ", ".join(_literal_text(v) for v in self.values)
        return f"{self.key} {'not in' if self.negated else 'in'} [{items}]"


class _Has(Filter):
    def __init__(self, key: str) -> None:
        self.key = key

    def matches(self, metadata: Mapping[str, MetaValue]) -> bool:
        return self.key in metadata

    def mask(self, columns: MetadataColumns) -> np.ndarray:
        return columns.present(self.key)

    def keys(self) -> frozenset[str]:
        return frozenset({self.key})

    def comparisons(self) -> list[tuple[str, MetaValue]]:
        return []

    @property
    def canonical(self) -> str:
        return f"has({self.key})"


class _Not(Filter):
    def __init__(self, inner: Filter) -> None:
        self.inner = inner

    def matches(self, metadata: Mapping[str, MetaValue]) -> bool:
        return not self.inner.matches(metadata)

    def mask(self, columns: MetadataColumns) -> np.ndarray:
        return ~self.inner.mask(columns)

    def keys(self) -> frozenset[str]:
        return self.inner.keys()

    def comparisons(self) -> list[tuple[str, MetaValue]]:
        return self.inner.comparisons()

    @property
    def canonical(self) -> str:
        return f"not {self.inner.canonical}" if isinstance(self.inner, _Has | _Not) else f"not ({self.inner.canonical})"


class _Bool(Filter):
    def __init__(self, op: Literal["and", "or"], parts: Sequence[Filter]) -> None:
        self.op, self.parts = op, tuple(parts)

    def matches(self, metadata: Mapping[str, MetaValue]) -> bool:
        if self.op == "and":
            return all(p.matches(metadata) for p in self.parts)
        return any(p.matches(metadata) for p in self.parts)

    def mask(self, columns: MetadataColumns) -> np.ndarray:
        masks = [p.mask(columns) for p in self.parts]
        out = masks[0].copy()
        for m in masks[1:]:
            out = (out & m) if self.op == "and" else (out | m)
        return out

    def keys(self) -> frozenset[str]:
        return frozenset().union(*(p.keys() for p in self.parts))

    def comparisons(self) -> list[tuple[str, MetaValue]]:
        return [c for p in self.parts for c in p.comparisons()]

    @property
    def canonical(self) -> str:
        return "(" + f" {self.op} ".join(p.canonical for p in self.parts) + ")"


# -- the parser ----------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def next(self) -> _Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def word(self, t: _Tok) -> str:
        return t.text.lower() if t.kind == "name" else ""

    def fail(self, t: _Tok, expected: str) -> FilterSyntaxError:
        found = "the end of the filter" if t.kind == "end" else shown(t.text)
        return FilterSyntaxError(self.text, t.column, f"expected {expected}, found {found}")

    def enter(self, t: _Tok) -> None:
        """One more level of nesting (a '(' or a 'not' at ``t``); more than ``NESTING_MAX`` is refused."""
        self.depth += 1
        if self.depth > NESTING_MAX:
            raise FilterSyntaxError(self.text, t.column, f"expected parentheses and 'not's nested at most "
                                                         f"{NESTING_MAX} deep, found deeper nesting here. Simplify "
                                                         "the filter (e.g. drop parentheses around a single test)")

    def parse(self) -> Filter:
        if self.peek().kind == "end":
            raise self.fail(self.peek(), "a filter such as year <= 1956")
        node = self.or_expr()
        t = self.peek()
        if t.kind != "end":
            raise self.fail(t, "'and', 'or' or the end of the filter")
        return node

    def or_expr(self) -> Filter:
        parts = [self.and_expr()]
        while self.word(self.peek()) == "or":
            self.next()
            parts.append(self.and_expr())
        return parts[0] if len(parts) == 1 else _Bool("or", parts)

    def and_expr(self) -> Filter:
        parts = [self.not_expr()]
        while self.word(self.peek()) == "and":
            self.next()
            parts.append(self.not_expr())
        return parts[0] if len(parts) == 1 else _Bool("and", parts)

    def not_expr(self) -> Filter:
        if self.word(self.peek()) == "not":
            self.enter(self.next())
            node = _Not(self.not_expr())
            self.depth -= 1
            return node
        return self.primary()

    def primary(self) -> Filter:
        t = self.next()
        if t.kind == "punct" and t.text == "(":
            self.enter(t)
            node = self.or_expr()
            close = self.next()
            if close.text != ")":
                raise self.fail(close, f"')' to close the '(' at column {t.column}")
            self.depth -= 1
            return node
        if self.word(t) == "has":
            if self.next().text != "(":
                raise self.fail(self.toks[self.i - 1], "'(' after 'has'")
            key = self.key(self.next())
            if self.next().text != ")":
                raise self.fail(self.toks[self.i - 1], "')' after the key of has(...)")
            return _Has(key)
        key = self.key(t)
        op = self.next()
        if op.kind == "op":
            value = self.literal(self.next(), f"a value after {op.text!r}")
            canon: Op = "=" if op.text == "==" else op.text  # type: ignore[assignment]
            if canon in _ORDER_OPS and value_type(value) not in ("number", "date"):
                raise FilterSyntaxError(
                    self.text, op.column,
                    f"expected a number or a date after {op.text!r} (ranges compare numbers or dates), "
                    f"found {value_type(value)} {cut(_literal_text(value))}")
            return _Compare(key, canon, value)
        if self.word(op) == "in":
            return _In(key, self.list(), False)
        if self.word(op) == "not" and self.word(self.peek()) == "in":
            self.next()
            return _In(key, self.list(), True)
        raise self.fail(op, f"an operator (= != < <= > >= in, not in) after the key {shown(key)}")

    def key(self, t: _Tok) -> str:
        if t.kind != "name" or t.text.lower() in _KEYWORDS:
            raise self.fail(t, "a metadata key (e.g. year), 'has(key)', 'not' or '('")
        if not KEY_RULE.fullmatch(t.text):
            raise FilterSyntaxError(self.text, t.column, f"expected a metadata key of at most 64 characters, found {t.text[:70]!r}")
        return t.text

    def list(self) -> list[MetaValue]:
        t = self.next()
        if t.text != "[":
            raise self.fail(t, "'[' to start the list of values")
        values: list[MetaValue] = []
        if self.peek().text == "]":
            self.next()
            return values
        while True:
            values.append(self.literal(self.next(), "a value in the list"))
            sep = self.next()
            if sep.text == "]":
                return values
            if sep.text != ",":
                raise self.fail(sep, "',' or ']' in the list")

    def literal(self, t: _Tok, expected: str) -> MetaValue:
        if t.kind == "string":
            return re.sub(r"\\(.)", r"\1", t.text[1:-1])
        if t.kind == "number":
            if re.fullmatch(r"[+-]?[0-9]+", t.text):
                if len(t.text) > 4000:  # int() refuses more than 4,300 digits
                    raise FilterSyntaxError(self.text, t.column, f"expected a number of at most 4,000 digits, "
                                                                 f"found {shown(t.text)}")
                return int(t.text)
            x = float(t.text)
            if not math.isfinite(x):
                raise FilterSyntaxError(self.text, t.column, f"expected a finite number, found {shown(t.text)}")
            return x
        if t.kind == "date":
            d = parse_date(t.text)
            if d is None:
                raise FilterSyntaxError(self.text, t.column, f"expected a real date YYYY-MM-DD, found {t.text!r}")
            return d
        if self.word(t) in ("true", "false"):
            return self.word(t) == "true"
        if t.kind == "name":
            raise self.fail(t, f"{expected} (quote text: \"{cut(t.text)}\")")
        raise self.fail(t, expected)


def parse_filter(text: str) -> Filter:
    """Parse a filter expression (grammar in the module docstring).

    Args:
        text: the filter, e.g. ``'year <= 1956 and source in ["naca tn", "arc r & m"]'``.

    Returns:
        The ``Filter``; ``str(f)`` is its canonical text.

    Raises:
        FilterSyntaxError: the text does not parse (with the column and a caret).

    Example:
        >>> f = parse_filter('year <= 1956 and source in ["naca tn"]')
        >>> f.matches({"year": 1950, "source": "naca tn"}), f.matches({"source": "naca tn"})
        (True, False)
        >>> str(f)
        '(year <= 1956 and source in ["naca tn"])'
    """
    if not isinstance(text, str):
        raise FilterSyntaxError(str(text), 1, f"expected the filter as text, found {type(text).__name__}")
    f = _Parser(text).parse()
    f.text = text
    return f


def check_keys(f: Filter, key_types: Mapping[str, Collection[str]]) -> None:
    """Refuse a filter that names a key no document has, or a literal of a type the key never has.

    Args:
        f: the filter.
        key_types: key -> value types present (``MetadataColumns.key_types``).

    Raises:
        UnknownMetadataKeyError: naming the key, the known keys, or the key's types.

    Example:
        >>> check_keys(parse_filter("yaer <= 1956"), {"year": {"number"}})  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        ...
        workbench.scoring.filters.UnknownMetadataKeyError: filter 'yaer <= 1956' names the metadata key 'yaer', which no document has; known keys: year
    """
    known = sorted(key_types)
    for key in sorted(f.keys()):
        if key not in key_types:
            listed = ", ".join(known[:30]) or "(none: the collection version has no document metadata)"
            raise UnknownMetadataKeyError(
                key, known, f"filter {shown(f.text or f.canonical, _SHOWN_FILTER)} names the metadata key {key!r}, "
                f"which no document has; known keys: {listed}")
    for key, value in f.comparisons():
        t = value_type(value)
        if t not in key_types[key]:
            has = ", ".join(sorted(key_types[key]))
            raise UnknownMetadataKeyError(
                key, known, f"filter {shown(f.text or f.canonical, _SHOWN_FILTER)} compares {key!r} with the {t} "
                f"{cut(_literal_text(value))}, "
                f"but {key!r} holds {has} values; write the value as a {has.split(', ')[0]}")


def eligible_by_filter(
    filters: Mapping[str, Filter], columns: MetadataColumns
) -> dict[str, frozenset[str]]:
    """topic_id -> eligible doc ids, evaluating each distinct filter once.

    Topics with equal filters (same canonical text) share one frozenset object.
    """
    cache: dict[str, frozenset[str]] = {}
    out: dict[str, frozenset[str]] = {}
    for topic_id, f in filters.items():
        key = f.canonical
        if key not in cache:
            cache[key] = f.eligible(columns)
        out[topic_id] = cache[key]
    return out


def date_literal(d: date) -> str:
    """A date as the filter language writes it (``YYYY-MM-DD``)."""
    return d.isoformat()
