"""The store's revision (``Store.revision()``): one cheap tuple that changes
whenever anything a page shows changes, so the UI can cache derived views
(agreement, disagreement queue, publish preview, scoreboards) and recompute
them only after a write.

Facts and versions are append-only (judgments, adjudications, assignments by
increasing id; runs, pools, qrels versions and collection versions are
written once), so the largest ids and the row counts identify the content; a
token reset, a new user and a rubric change touch ``users`` and ``meta``,
counted by a content checksum of those two small tables.
"""

from __future__ import annotations

from workbench.store._rows import _one
from workbench.store.core import Gateway


def store_revision(gateway: Gateway) -> tuple[int, ...]:
    """A tuple that differs after any write a page could show (one query, about a millisecond).

    Returns:
        (max judgment id, max adjudication id, max assignment id, and the
        counts of runs, pools, qrels versions, collection versions, plus a
        hash of the users and meta tables).
    """
    queries = (
        "SELECT coalesce(max(judgment_id), 0) FROM judgments",
        "SELECT coalesce(max(adjudication_id), 0) FROM adjudications",
        "SELECT coalesce(max(assignment_id), 0) FROM assignments",
        "SELECT count(*) FROM runs",
        "SELECT count(*) FROM pools",
        "SELECT count(*) FROM qrels_versions",
        "SELECT count(*) FROM collection_versions",
        "SELECT coalesce(bit_xor(hash(user_name, role, token_hash)), 0) FROM users",
        "SELECT coalesce(bit_xor(hash(key, value)), 0) FROM meta",
    )
    with gateway.connection("read store revision") as cur:
        return tuple(int(_one(cur.execute(q))[0]) for q in queries)
