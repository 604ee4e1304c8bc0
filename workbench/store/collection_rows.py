"""Look-ups every part of the store that touches collections shares (inside a lease), and how ids are quoted.

``store.collections`` ingests and reads collections; ``store.metadata`` and
``store.units`` keep what belongs to a collection version. All three find the
latest version, check a name or quote an id the same way: here, so that
neither imports the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from workbench.errors import UnknownNameError
from workbench.text import SHOWN_MAX, cut, shown

ID_SHOWN = SHOWN_MAX  # characters of an id shown in a message


def shown_id(value: str) -> str:
    """An id quoted for a message, cut to ``ID_SHOWN`` characters (a 2 MB id must not fill the terminal)."""
    return shown(value, ID_SHOWN)


def cut_id(value: str) -> str:
    """``value`` itself, or its first ``ID_SHOWN`` characters + ``"… (N characters)"`` when longer."""
    return cut(value, ID_SHOWN)



def count(cur: Any, sql: str, params: list[Any] | None = None) -> int:
    """First column of the first row as int (0 when no row). Inside a lease."""
    rows = cur.execute(sql, params or []).fetchall()
    return int(rows[0][0]) if rows else 0


def collection_names(cur: Any) -> list[str]:
    """Names of all collections. Inside a lease."""
    return [r[0] for r in cur.execute("SELECT collection FROM collections").fetchall()]


def require_collection(cur: Any, name: str) -> None:
    """Raise ``UnknownNameError`` (listing the known names) unless ``name`` is a collection."""
    if not cur.execute("SELECT 1 FROM collections WHERE collection = ?", [name]).fetchall():
        raise UnknownNameError("collection", name, collection_names(cur))


def latest_version(cur: Any, name: str) -> str:
    """The version of collection ``name`` that no other version of it names as parent."""
    rows = cur.execute(
        """SELECT v.collection_version FROM collection_versions v
           WHERE v.collection = ? AND NOT EXISTS (
               SELECT 1 FROM collection_versions c
               WHERE c.collection = v.collection AND c.parent_version = v.collection_version)
           ORDER BY v.created_at DESC, v.collection_version""",
        [name],
    ).fetchall()
    if not rows:
        raise UnknownNameError("collection", name, collection_names(cur))
    return str(rows[0][0])


def missing_ids(cur: Any, version: str, doc_ids: Iterable[str]) -> set[str]:
    """The doc ids that are not in collection version ``version``. Inside a lease."""
    import pyarrow as pa

    ids = sorted(set(doc_ids))
    if not ids:
        return set()
    cur.register("wb_check_ids", pa.table({"doc_id": ids}))
    try:
        rows = cur.execute(
            """SELECT c.doc_id FROM wb_check_ids c WHERE NOT EXISTS (
                 SELECT 1 FROM version_documents vd
                 WHERE vd.collection_version = ? AND vd.doc_id = c.doc_id)""",
            [version],
        ).fetchall()
    finally:
        cur.unregister("wb_check_ids")
    return {r[0] for r in rows}
