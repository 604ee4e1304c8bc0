"""Control characters in names and in text shown on a terminal.

A name (of a run, qrels version, pool version, collection, user, topic set)
with a control character would inject terminal escape sequences into listings
(``ESC [ 31 m`` turns the rest of ``run list`` red; ``CR`` overwrites the line)
and become an odd file name on export. Names are refused if they hold one
(``check_name``); any user string printed to a terminal is shown with its
control characters escaped (``printable``).

Control characters here: the C0 set U+0000-U+001F, DEL U+007F and the C1 set
U+0080-U+009F (Unicode general category Cc), as in ECMA-48 / ISO 6429.
"""

from __future__ import annotations

import re

from workbench.errors import ValidationError

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""Any control character (Unicode category Cc)."""

_SHOWN_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # tab and newline keep their layout role


def _escape(m: re.Match[str]) -> str:
    return f"\\x{ord(m.group(0)):02x}"


def check_name(kind: str, name: str) -> str:
    """Return ``name`` if it holds no control character.

    Args:
        kind: what the name names, for the message (``run name``, ``qrels version``).
        name: the name.

    Raises:
        ValidationError: a control character; the message shows it escaped
            (``\\x1b``) and where it is.

    Example:
        >>> check_name("run name", "bm25")
        'bm25'
    """
    m = CONTROL.search(name)
    if m is not None:
        raise ValidationError(
            f"{kind} {printable(name)!r}: expected no control characters, found {_escape(m)} at position "
            f"{m.start() + 1}; use letters, digits and punctuation only.")
    return name


def printable(text: str) -> str:
    """``text`` with control characters other than tab and newline shown as ``\\xNN``.

    Example:
        >>> printable("run\\x1b[31m red")
        'run\\\\x1b[31m red'
    """
    return _SHOWN_CONTROL.sub(_escape, text)
