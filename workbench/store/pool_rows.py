"""Look-ups of a pool version every part of the store that reads judgments shares (inside a lease).

A pool version's row, its lineage (the version and its ancestors, root first)
and the SQL filter that restricts judgments to the documents of a lineage:
``store.judgments``, ``store.adjudications``, ``store.judging``, ``store.qrels``
and ``store.pools`` read them the same way, so that none imports another.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import UnknownNameError
from workbench.store._rows import _one


def pool_row(cur: Any, pool_version: str) -> tuple[str, str, str | None]:
    """(collection, collection version, parent version or None) of a pool version.

    Raises:
        UnknownNameError: unknown pool version (listing the known ones).
    """
    row = _one(cur.execute(
        "SELECT collection, collection_version, parent_version FROM pools WHERE pool_version = ?",
        [pool_version],
    ))
    if row is None:
        known = [r[0] for r in cur.execute("SELECT pool_version FROM pools").fetchall()]
        raise UnknownNameError("pool version", pool_version, known)
    return row[0], row[1], row[2]


def lineage_of(cur: Any, pool_version: str) -> list[str]:
    """The pool version and its ancestors, root first.

    Raises:
        UnknownNameError: unknown pool version.
    """
    chain: list[str] = []
    current: str | None = pool_version
    while current and current not in chain:
        _c, _v, parent = pool_row(cur, current)
        chain.append(current)
        current = parent
    return chain[::-1]


def lineage_filter(cur: Any, pool_version: str | None) -> tuple[str, list[Any]]:
    """SQL appended to a WHERE on judgments (or a view of them): only documents pooled in the
    lineage of ``pool_version`` (``""`` and no parameters when None), with its parameters.

    Raises:
        UnknownNameError: unknown pool version.
    """
    if pool_version is None:
        return "", []
    lineage = lineage_of(cur, pool_version)
    marks = ", ".join("?" for _ in lineage)
    return (
        f" AND (topic_id, doc_id) IN (SELECT topic_id, doc_id FROM pool_entries WHERE pool_version IN ({marks}))",
        list(lineage),
    )
