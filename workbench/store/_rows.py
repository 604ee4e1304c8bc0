"""Row helpers shared by the parts of the store."""

from __future__ import annotations

from typing import Any

ItemKey = tuple[str, str]
"""(topic_id, doc_id): one pooled document of a topic."""


def _one(cursor: Any) -> Any:
    """The first row of an executed statement, or None; always fetches the
    whole result (DuckDB refuses further work on a cursor with unread rows)."""
    rows = cursor.fetchall()
    return rows[0] if rows else None
