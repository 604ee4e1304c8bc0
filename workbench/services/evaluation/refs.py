"""Where the scored runs and qrels came from (``RunRef``, ``QrelsRef``) and the callables a score is given.

The lowest module of ``services.evaluation``: the request, the pipeline's
steps, the validity and no-answer services and the reports all name these
values, and this module imports none of them (no import cycle).
``services.evaluation.load`` builds them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from workbench.scoring.columns import RankedRun
    from workbench.store import Store

StoreOpener = Callable[[], "Store"]
"""Returns the project's store; called only when a stored run or qrels version is needed."""

RunSource = Callable[[], "tuple[RunRef, RankedRun]"]
"""Loads one run when called (``ScoreRequest.reading.run_sources``: runs from DataFrames or mappings)."""

Progress = Callable[[str], None]
"""Receives ``[starting]`` / ``[finished]`` progress lines."""


@dataclass(frozen=True)
class RunRef:
    """Where a scored run came from.

    Attributes:
        name: the run's name in reports (stored name, the file's run tag, a
            Parquet file's stem, or the name given to ``workbench.evaluate``).
        origin: ``stored``, ``file``, or (``workbench.evaluate``) ``frame`` / ``mapping``.
        location: the stored run name, the file path, or a description of the frame or mapping.
        collection: the collection (stored runs), else "".
        collection_version: the collection version it was produced over (stored runs), else "".
        n_lines: result lines read.
        failed_topics: topics the store (or the file's status side file) marks ``empty`` or ``error``.
        statuses: topic_id -> ``ok`` | ``empty`` | ``error`` as recorded (stored runs, status files).
        messages: topic_id -> why a topic is ``empty`` or ``error``.
        latencies: topic_id -> latency in milliseconds, where recorded.
        status_file: the status side file read for a run file ("" when none).
        content_hash: the stored run's content hash, or the file's sha256 ("" until computed).
        pool_depth: for a stored run pooled into the pool lineage the (published) qrels
            judged: the deepest cutoff it was pooled at (its R@k for k >= this depth meets a
            denominator it helped build); 0 otherwise.
        pools: those pool versions, root first (empty when not a pool contributor).
        rank_warning: for a run file whose rank column is odd (negative, too large or repeated
            ranks: ``formats.trec.odd_ranks_warning``), the warning; else "".
    """

    name: str
    origin: Literal["stored", "file", "frame", "mapping"]
    location: str
    collection: str = ""
    collection_version: str = ""
    n_lines: int = 0
    failed_topics: tuple[str, ...] = ()
    statuses: Mapping[str, str] = field(default_factory=dict)
    messages: Mapping[str, str] = field(default_factory=dict)
    latencies: Mapping[str, float] = field(default_factory=dict)
    status_file: str = ""
    content_hash: str = ""
    pool_depth: int = 0
    pools: tuple[str, ...] = ()
    rank_warning: str = ""

    def lineage(self) -> dict[str, object]:
        """The JSON-ready description of the run in report headers (without per-topic statuses)."""
        return {
            "name": self.name, "origin": self.origin, "location": self.location, "collection": self.collection,
            "collection_version": self.collection_version, "n_lines": self.n_lines,
            "failed_topics": list(self.failed_topics), "status_file": self.status_file,
            "content_hash": self.content_hash, "pool_depth": self.pool_depth, "pools": list(self.pools),
        }


@dataclass(frozen=True)
class QrelsRef:
    """Which qrels were used.

    Attributes:
        name: the qrels version name, or the file path.
        origin: ``stored``, ``file``, or (``workbench.evaluate``) ``frame`` / ``mapping``.
        content_hash: sha256 over the sorted (topic, doc, grade) entries.
        collection: the collection (stored versions), else "".
        collection_version: the collection version (stored versions), else "".
        n_topics: topics in the qrels.
        n_entries: judged (topic, doc) entries.
    """

    name: str
    origin: Literal["stored", "file", "frame", "mapping"]
    content_hash: str
    collection: str = ""
    collection_version: str = ""
    n_topics: int = 0
    n_entries: int = 0

    @property
    def recorded_name(self) -> str:
        """Name used in the ``evaluations`` table: the version name, or ``<origin>:<name>`` (``file:<path>``)."""
        return self.name if self.origin == "stored" else f"{self.origin}:{self.name}"
