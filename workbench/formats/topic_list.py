"""Topic list files: the topic ids of a topic set, one per line.

Format: UTF-8 text; each non-blank line's first whitespace-separated token is a
topic id; ``#`` starts a comment (whole line or after the id). So a plain id
list, a TREC qrels file or a TSV whose first column is the topic id all work
(repeats are dropped, first occurrence kept).
"""

from __future__ import annotations

from pathlib import Path

from workbench.errors import InputFormatError
from workbench.formats.trec import read_text


def read_topic_list(path: str | Path) -> list[str]:
    """The distinct topic ids of a topic list file, in file order.

    Raises:
        InputFormatError: unreadable, not UTF-8, or no topic id at all.

    Example (a file holding ``1\\n# smoke\\n7  # long one\\n1\\n``) gives ``["1", "7"]``.
    """
    return list(topic_list_lines(path))


def topic_list_lines(path: str | Path) -> dict[str, int]:
    """topic id -> the 1-based line of its first occurrence, ids in file order (``read_topic_list`` with lines).

    Raises:
        InputFormatError: unreadable, not UTF-8, or no topic id at all.
    """
    ids: dict[str, int] = {}
    for lineno, line in enumerate(read_text(path).split("\n"), 1):
        body = line.split("#", 1)[0].strip()
        if body:
            ids.setdefault(body.split()[0], lineno)
    if not ids:
        raise InputFormatError(str(path), 0, "expected topic ids, one per line, found none. Check the file.")
    return ids
