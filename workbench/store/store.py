"""``Store``: the workbench's store, one gateway to its DuckDB file and the parts over it.

The store keeps a single gateway (``workbench.store.core.Gateway``: leases,
transactions, the cross-process hand-over of the file) and composes its
*parts*, one object per domain with a narrow interface of domain verbs, each
taking its leases through that gateway (after DuckDB's own connection/cursor
split and SQLAlchemy's session and repositories):

=====================  =========================================================
part                   what it keeps
=====================  =========================================================
``collections``        collections, their versions, documents, topics, doc-id checks
``metadata``           document and topic metadata
``units``              chunk maps and duplicate groups
``runs``               runs, their per-topic statuses, rerank lineage and cost
``vectors``            the embedding cache, vector-index stats, ANN-recall
``pools``              pool versions, their lineage, entries and provenance
``users``              users, tokens, sign-in, model assessors
``rubrics``            the grade scale of each collection, defined rubrics
``judging``            assignments, queues, judging strategies, group modes, progress
``judgments``          the judgment log, typed as its interface ``workbench.judging.log.JudgmentLog``
``adjudications``      a lead's final grades, rule-derived final grades
``qrels``              qrels versions: created, published, read, diffed
``evaluations``        recorded scoring actions and topic sets
``misses``             miss lists and the lead's miss causes
=====================  =========================================================

A service receives the parts it uses (``import_judgments(judgments, pools, ...)``);
an orchestrator (the CLI, the app, the demo) holds the ``Store``. Values are bound
with ``?`` parameters, never formatted into SQL; every multi-row change is one
transaction.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.judging.log import JudgmentLog
from workbench.store.adjudications import Adjudications
from workbench.store.collections import Collections
from workbench.store.core import Gateway, WaitCallback
from workbench.store.evaluations import Evaluations
from workbench.store.judging import Judging
from workbench.store.judgments import Judgments
from workbench.store.metadata import Metadata
from workbench.store.misses import Misses
from workbench.store.pools import Pools
from workbench.store.qrels import Qrels
from workbench.store.revision import store_revision
from workbench.store.rubrics import Rubrics
from workbench.store.runs import Runs
from workbench.store.units import Units
from workbench.store.users import Users
from workbench.store.vectors import Vectors

if TYPE_CHECKING:
    import duckdb


class Store:
    """The workbench store: one gateway to the DuckDB file and the parts over it.

    See ``docs/store.md`` and ``workbench.store.core``. Creating a ``Store`` opens
    nothing: the file is attached at the first lease.

    Args:
        path: the DuckDB file (created with its folder at the first lease).
        client: this process's name, shown to processes waiting for the file.
        lock_timeout_s: seconds a lease waits for another process.
        on_wait: receives "waiting for ..." messages.
        wait_report_s: seconds between two ``on_wait`` messages.
        linger_s: keep the file open this long after the last lease (0 = close at once).
        min_turn_s: keep granting leases this long before yielding to a waiting
            process (None = the default, 0.25 s).

    Example:
        >>> store = Store("labels/wb.duckdb", client="workbench score")  # doctest: +SKIP
        >>> store.runs.get_run_info("bm25").collection  # doctest: +SKIP
        'cranfield'
    """

    def __init__(
        self,
        path: str | Path,
        *,
        client: str = "workbench",
        lock_timeout_s: float = 300.0,
        on_wait: WaitCallback | None = None,
        wait_report_s: float = 2.0,
        linger_s: float = 0.0,
        min_turn_s: float | None = None,
    ) -> None:
        self.gateway = Gateway(path, client=client, lock_timeout_s=lock_timeout_s, on_wait=on_wait,
                               wait_report_s=wait_report_s, linger_s=linger_s, min_turn_s=min_turn_s)
        gateway = self.gateway
        self.collections = Collections(gateway)
        self.metadata = Metadata(gateway)
        self.units = Units(gateway)
        self.runs = Runs(gateway)
        self.vectors = Vectors(gateway)
        self.pools = Pools(gateway)
        self.users = Users(gateway)
        self.rubrics = Rubrics(gateway)
        self.judging = Judging(gateway)
        self.judgments: JudgmentLog = Judgments(gateway)
        self.adjudications = Adjudications(gateway, self.judgments)
        self.qrels = Qrels(gateway, self.adjudications)
        self.evaluations = Evaluations(gateway)
        self.misses = Misses(gateway)

    @property
    def path(self) -> Path:
        """The DuckDB file."""
        return self.gateway.path

    def connection(self, purpose: str = "") -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A lease on the store file (``Gateway.connection``): the parts' calls inside it share the open file.

        Raises:
            StoreLockedError: another process kept the file past ``lock_timeout_s``.
            StoreError: the file cannot be opened for another reason.
        """
        return self.gateway.connection(purpose)

    def transaction(self, purpose: str = "") -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A lease whose work is one transaction (``Gateway.transaction``): all of it commits, or none.

        Raises:
            StoreLockedError, StoreError: as ``connection``; driver errors roll back as ``StoreError``.
        """
        return self.gateway.transaction(purpose)

    def release_file(self) -> None:
        """Close the file now if this process has no active lease (ends a linger)."""
        self.gateway.release_file()

    def schema_version(self) -> int:
        """The store's schema version (``SCHEMA_VERSION`` once opened)."""
        return self.gateway.schema_version()

    def revision(self) -> tuple[int, ...]:
        """A tuple that differs after any write a page could show (``workbench.store.revision``)."""
        return store_revision(self.gateway)

