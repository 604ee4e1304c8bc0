"""Control characters in names and in text shown on a terminal.

A name (of a run, qrels version, pool version, collection, user, topic set)
with a control character would inject terminal escape sequences into listings
(``ESC [ 31 m`` turns the rest of ``run list`` red; ``CR`` overwrites the line)
and become an odd file name on export. Names are refused if they hold one
(``check_name``); any user string printed to a terminal is shown with its
control characters escaped (``printable``).

Control characters here: the C0 set U+0000-U+001F, DEL U+007F and the C1 set
U+0080-U+009F (Unicode general category Cc), as in ECMA-48 / ISO 6429.

Names and ids (``check_name``, ``formats.trec.check_id``) also refuse the
invisible format characters (category Cf) that reorder or hide text: the bidi
embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069 (the
"Trojan Source" characters, CVE-2021-42574), the marks U+200E/U+200F, the
zero-width space U+200B, word joiner U+2060 and U+FEFF (``UNSAFE``). Zero-width
(non-)joiners U+200C/U+200D are kept: scripts and emoji need them.
"""

from __future__ import annotations

import re

from workbench.errors import SHOWN_MAX as SHOWN_MAX
from workbench.errors import InputFormatError, ValidationError
from workbench.errors import cut as cut
from workbench.errors import shown as shown

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""Any control character (Unicode category Cc)."""

NAME_MAX = 200
"""The longest name (``check_name``) and run tag (``formats.trec.read_run``), in characters."""

MESSAGE_MAX = 2000
"""The longest message the CLI prints for an error (``clip``): a value a message forgot to cut must not fill the
terminal."""

NESTING_MAX = 100
"""The deepest nesting a reader accepts: a filter's parentheses and ``not``s (``scoring.filters``), JSON arrays and
objects (``formats.trec.parse_json``), TOML arrays and inline tables (rubric and gate-policy files). The parsers are
recursive and Python's stack holds about 1,000 frames; no real file nests more than a few levels."""

UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")
"""A character refused in names and ids: a control character or an invisible bidi/zero-width format character."""

CONTROL_BYTES = bytes([*range(0, 10), *range(11, 32), 127])
"""The single-byte (ASCII) control characters but LF, as bytes of UTF-8 text: a file's
other control characters (C1) and ``UNSAFE`` format characters are multi-byte."""

UNSAFE_NON_ASCII = re.compile(UNSAFE.pattern.replace("\x00-\x1f\x7f-\x9f", "\x80-\x9f"))
"""The ``UNSAFE`` characters above ASCII (C1 controls, bidi and zero-width marks): with a byte check
for ``CONTROL_BYTES``, the check of whole files whose LF, tab and CR are separators."""

NOT_CONTROL_BYTES = bytes(sorted(set(range(256)) - set(CONTROL_BYTES)))
"""Every other byte value: ``data.translate(None, NOT_CONTROL_BYTES)`` is the control bytes of ``data``
(one C pass, no regex), empty when it holds none."""

_SHOWN_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # tab and newline keep their layout role


def escape_char(char: str) -> str:
    """One character as an escape: ``\\x1b``, ``\\u202e``."""
    c = ord(char)
    return f"\\x{c:02x}" if c <= 0xFF else f"\\u{c:04x}"


def _escape(m: re.Match[str]) -> str:
    return escape_char(m.group(0))


def unsafe_char(value: str) -> str | None:
    """Where ``value`` holds an ``UNSAFE`` character, e.g. ``"\\x1b at position 2"``; None when it holds none.

    Example:
        >>> unsafe_char("g\\x1b1")
        '\\\\x1b at position 2'
    """
    m = UNSAFE.search(value)
    return None if m is None else f"{_escape(m)} at position {m.start() + 1}"


def check_name(kind: str, name: str) -> str:
    """Return ``name`` if it is at most ``NAME_MAX`` characters and holds no control character (nor another ``UNSAFE`` one).

    Args:
        kind: what the name names, for the message (``run name``, ``qrels version``).
        name: the name.

    Raises:
        ValidationError: longer than ``NAME_MAX``; a control character (the message shows it escaped
            (``\\x1b``) and where it is).

    Example:
        >>> check_name("run name", "bm25")
        'bm25'
    """
    if len(name) > NAME_MAX:
        raise ValidationError(
            f"{kind} {printable(name[:40])!r}… ({len(name):,} characters): expected at most {NAME_MAX} characters; "
            "use a shorter name (put the details in the description).")
    where = unsafe_char(name)
    if where is not None:
        raise ValidationError(
            f"{kind} {printable(name)!r}: expected no control characters, found {where}; use letters, digits "
            "and punctuation only.")
    return name


def clip(message: str, limit: int = MESSAGE_MAX) -> str:
    """``message``, or its start and end with the middle cut out when longer than ``limit`` characters.

    The last line of defence of the CLI's error output: every message names its file and line first and says
    how to fix the problem last, so both ends are kept.

    Example:
        >>> m = clip("f.txt:3: found " + "x" * 5000 + ". Fix it.", 100)
        >>> m[:20], m[-12:], len(m) < 200
        ('f.txt:3: found xxxxx', 'xxx. Fix it.', True)
    """
    if len(message) <= limit:
        return message
    head, tail = limit * 2 // 3, limit // 3
    return f"{message[:head]}\u2026 ({len(message) - head - tail:,} characters cut) \u2026{message[-tail:]}"


_OPENERS = {"[": 1, "{": 1, "]": -1, "}": -1}
_JSON_TOKENS = r'"(?:[^"\\]|\\.)*"|[][{}]'
_TOML_TOKENS = r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[][{}]'
"""Strings (and TOML comments) or a bracket: compiled when first needed (``re`` keeps them), not at import."""


def too_deep(text: str, syntax: str = "json", limit: int = NESTING_MAX) -> int | None:
    """Where ``text`` first opens an array or object (``[`` or ``{``) nested deeper than ``limit``, or None.

    Brackets inside quoted strings (and, for TOML, comments) do not count. Cheap when the text holds at most
    ``limit`` brackets (no scan at all).

    Args:
        text: JSON or TOML text.
        syntax: ``json`` or ``toml`` (its strings: basic, literal, multi-line; ``#`` comments).
        limit: the deepest nesting accepted.

    Returns:
        The 0-based index of the bracket that opens level ``limit + 1``, or None.

    Example:
        >>> too_deep("[[1]]", limit=1), too_deep('["[[["]', limit=1)
        (1, None)
    """
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for m in re.finditer(_TOML_TOKENS if syntax == "toml" else _JSON_TOKENS, text):
        step = _OPENERS.get(m.group())
        if step is None:
            continue
        depth += step
        if depth > limit:
            return m.start()
    return None


def nesting_error(text: str, path: str, syntax: str = "json") -> InputFormatError | None:
    """The error for ``text`` (a JSON or TOML file) nesting arrays or objects deeper than ``NESTING_MAX``
    (``too_deep``), naming the line and column where it does; None when it does not.

    Example:
        >>> str(nesting_error("a = " + "[" * 101 + "]" * 101, "r.toml", "toml"))
        'r.toml:1: expected arrays and inline tables nested at most 100 levels deep, found deeper nesting from column 105. Flatten the value.'
    """
    deep = too_deep(text, syntax)
    if deep is None:
        return None
    line, column = line_and_column(text, deep)
    objects = "inline tables" if syntax == "toml" else "objects"
    return InputFormatError(path, line, f"expected arrays and {objects} nested at most {NESTING_MAX} levels deep, "
                                        f"found deeper nesting from column {column}. Flatten the value.")


def line_and_column(text: str, index: int) -> tuple[int, int]:
    """The 1-based (line, column) of ``text[index]``.

    Example:
        >>> line_and_column("ab\\ncd", 4)
        (2, 2)
    """
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def printable(text: str) -> str:
    """``text`` with control characters other than tab and newline shown as ``\\xNN``.

    Example:
        >>> printable("run\\x1b[31m red")
        'run\\\\x1b[31m red'
    """
    return _SHOWN_CONTROL.sub(_escape, text)


def check_stored_name(kind: str, name: str, why: str = "") -> str:
    """Return ``name`` if it can name a stored run, pool version or qrels version (the one rule of the three).

    The rule: ``check_name`` (length, no control character), not empty, no white space, no '/' or '\\'
    (names become TREC run tags and file names of exports), and no leading '-' (a name given later as a
    command-line argument, ``workbench score -x``, would be read as an option).

    Args:
        kind: what the name names, for the message (``run name``, ``qrels version name``).
        name: the name.
        why: said after the rule in the message (`` (it is the TREC run tag)``), or "".

    Raises:
        ValidationError: the name breaks the rule (the message gives the rule and the value).

    Example:
        >>> check_stored_name("pool version name", "cranfield-pool-v1")
        'cranfield-pool-v1'
    """
    check_name(kind, name)
    if not name or any(c.isspace() for c in name) or "/" in name or "\\" in name or name.startswith("-"):
        raise ValidationError(f"expected a {kind} without spaces, '/' or '\\', not starting with '-'{why}, "
                              f"found {name!r}")
    return name
