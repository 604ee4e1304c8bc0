"""Store methods for the identifier audit (a mixin of ``LabelStore``): which ids a version holds.

Read-only queries behind ``services.evaluation.audit.IdAuditor``: every doc id of a
collection version (for near misses), the distinct doc ids of a stored run that
a version lacks, and a stored run's content hash.
"""

from __future__ import annotations

from workbench.errors import UnknownNameError
from workbench.store.core import StoreCore


class AuditMixin(StoreCore):
    """Read-only queries of the identifier audit."""

    def version_doc_ids(self, collection_version: str) -> list[str]:
        """Every doc id of a collection version (for near-miss detection), in no particular order.

        Raises:
            UnknownNameError: no such version.
        """
        with self.connection("read doc ids") as cur:
            if not cur.execute("SELECT 1 FROM collection_versions WHERE collection_version = ?",
                               [collection_version]).fetchall():
                known = [r[0] for r in cur.execute("SELECT collection_version FROM collection_versions").fetchall()]
                raise UnknownNameError("collection version", collection_version, known)
            return [r[0] for r in cur.execute(
                "SELECT doc_id FROM version_documents WHERE collection_version = ?", [collection_version]).fetchall()]

    def run_doc_coverage(self, run_name: str, collection_version: str) -> tuple[int, set[str]]:
        """(distinct doc ids of a stored run, those not in ``collection_version``).

        Raises:
            UnknownNameError: no such run.
        """
        with self.connection("audit run ids") as cur:
            if not cur.execute("SELECT 1 FROM runs WHERE run_name = ?", [run_name]).fetchall():
                known = [r[0] for r in cur.execute("SELECT run_name FROM runs").fetchall()]
                raise UnknownNameError("run", run_name, known)
            n = cur.execute("SELECT count(DISTINCT doc_id) FROM run_entries WHERE run_name = ?",
                            [run_name]).fetchall()[0][0]
            missing = cur.execute(
                """SELECT DISTINCT e.doc_id FROM run_entries e WHERE e.run_name = ? AND NOT EXISTS (
                     SELECT 1 FROM version_documents vd WHERE vd.collection_version = ? AND vd.doc_id = e.doc_id)""",
                [run_name, collection_version]).fetchall()
        return int(n), {r[0] for r in missing}

    def get_run_content_hash(self, run_name: str) -> str:
        """A stored run's content hash (sha256 over its sorted topic, doc, score rows).

        Raises:
            UnknownNameError: no such run.
        """
        with self.connection("read run hash") as cur:
            rows = cur.execute("SELECT content_hash FROM runs WHERE run_name = ?", [run_name]).fetchall()
            if not rows:
                known = [r[0] for r in cur.execute("SELECT run_name FROM runs").fetchall()]
                raise UnknownNameError("run", run_name, known)
        return str(rows[0][0])
