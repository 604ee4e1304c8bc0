"""``LabelStore``: the workbench's single gateway to its DuckDB file.

Composed of one mixin per domain (collections, metadata, runs, pools, judging, qrels,
embeddings, evaluations) over ``StoreCore``'s leases. Methods speak domain verbs
Composed of one mixin per domain (collections, runs, pools, judging, qrels,
embeddings, evaluations, rerank lineage, vector-index stats and ANN-recall, miss lists) over ``StoreCore``'s leases. Methods speak domain verbs
(``ingest_collection``, ``record_judgment``, ``publish_qrels``); values are bound
with ``?`` parameters, never formatted into SQL.
"""

from __future__ import annotations

from workbench.store.ann import AnnMixin
from workbench.store.audit import AuditMixin
from workbench.store.collections import CollectionsMixin
from workbench.store.embeddings import EmbeddingsMixin
from workbench.store.evaluations import EvaluationsMixin
from workbench.store.group_modes import GroupModesMixin
from workbench.store.judging import JudgingMixin
from workbench.store.lineage import LineageMixin
from workbench.store.metadata import MetadataMixin
from workbench.store.misses import MissesMixin
from workbench.store.pools import PoolsMixin
from workbench.store.qrels import QrelsMixin
from workbench.store.revision import RevisionMixin
from workbench.store.runs import RunsMixin
from workbench.store.topic_sets import TopicSetsMixin
from workbench.store.units import UnitsMixin


class LabelStore(
    CollectionsMixin,
    MetadataMixin,
    RunsMixin,
    PoolsMixin,
    JudgingMixin,
    QrelsMixin,
    EmbeddingsMixin,
    EvaluationsMixin,
    TopicSetsMixin,
    AuditMixin,
    LineageMixin,
    AnnMixin,
    MissesMixin,
    RevisionMixin,
    UnitsMixin,
    GroupModesMixin,
):
    """The workbench store. See ``docs/store.md`` and ``workbench.store.core``.

    Args:
        path: the DuckDB file.
        client: this process's name, shown to processes waiting for the file.
        lock_timeout_s: seconds a lease waits for another process.
        on_wait: receives "waiting for ..." messages.
    """
