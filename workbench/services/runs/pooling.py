"""Pooling services: produce runs, fuse them, import them, pool them, extend pools.

Orchestration shared by the CLI (``workbench run ...``, ``workbench pool ...``) and
the app: read the collection from the store, call a retriever or a pure pooling
rule, write the result back in one transaction.

Every produced run records its kind, parameters, the collection version it ran
over, its depth and a status per topic (``ok``/``empty``/``error``). Pools are
immutable versions; building the same pool twice without ``name`` returns the
existing version instead of a copy (same content hash), so re-running a command
is harmless.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pooling.fusion import RRF, FusionMethod
from pooling.pool import Pool, PoolColumns, PoolExtension, PoolStats
from pooling.pool import build_pool as _build_pool
from pooling.pool import extend_pool as _extend_pool
from workbench.errors import DuplicateNameError, ValidationError, shown
from workbench.types import RunInfo

if TYPE_CHECKING:
    from pooling.retrievers.base import Retriever
    from pooling.retrievers.dense import Encoder
    from workbench.services.runs.pool_topics import TopicSelection
    from workbench.store import Store
    from workbench.store.collections import Collections
    from workbench.store.pools import PoolInfo, Pools
    from workbench.store.qrels import Qrels
    from workbench.store.runs import Runs

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass(frozen=True)
class RunOutcome:
    """A run that was produced and stored.

    Attributes:
        info: the stored run's provenance.
        statuses: topic_id -> ok | empty | error.
        messages: topic_id -> why a topic is empty or failed (non-ok topics only).
        n_encoded: documents encoded now (dense runs; 0 otherwise).
        n_cached: documents whose vectors came from the cache (dense runs).
        unchanged: True when an identical run was already stored under this
            name (an identical re-import writes nothing).
        filter_mode: ``pre`` or ``post`` when the topics' filters were applied, else "".
        short_topics: filtered topics that came back with fewer than depth results.
    """

    info: RunInfo
    statuses: Mapping[str, str]
    messages: Mapping[str, str] = field(default_factory=dict)
    n_encoded: int = 0
    n_cached: int = 0
    unchanged: bool = False
    filter_mode: str = ""
    short_topics: tuple[str, ...] = ()

    def count(self, status: str) -> int:
        """Number of topics with ``status``."""
        return sum(1 for s in self.statuses.values() if s == status)

    def describe(self) -> str:
        """One line: run name, kind, depth and the status counts."""
        return (f"run {self.info.name} ({self.info.kind}, depth {self.info.depth}): "
                f"{self.count('ok')} topics ok, {self.count('empty')} empty, {self.count('error')} error")


def collection_queries(collections: Collections, collection: str) -> dict[str, str]:
    """topic_id -> query text (``Topic.query``: title, else description)."""
    return {t: topic.query for t, topic in collections.get_topics(collection).items()}


MAX_DEPTH = 1_000_000
"""The largest depth accepted for runs and pools (the store keeps ranks in 32-bit INTEGER columns)."""


def check_depth(depth: int) -> None:
    """Refuse a depth outside ``1..MAX_DEPTH`` before any work is done.

    Raises:
        ValidationError: naming the value and the limit.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise ValidationError(
            f"expected a depth between 1 and {MAX_DEPTH:,}, found {depth}; 100 or 1000 is usual for runs, 10 to 100 for pools"
        )


_check_depth = check_depth


FILTER_MODES: tuple[str, ...] = ("none", "pre", "post")
"""``--filter-mode``: ignore the topics' filters, rank eligible documents only, or retrieve then drop."""


def check_filter_mode(mode: str) -> str:
    """``mode`` if it is one of ``FILTER_MODES``.

    Raises:
        ValidationError: naming the accepted modes.
    """
    if mode not in FILTER_MODES:
        raise ValidationError(f"expected --filter-mode {', '.join(FILTER_MODES)}, found {shown(mode)}")
    return mode


def _run_retriever(
    store: Store,
    retriever: Retriever,
    collection: str,
    name: str,
    kind: str,
    depth: int,
    description: str,
    say: Say,
    index: Callable[[dict[str, str], str], None],
    record: Callable[[str, Mapping[str, str]], tuple[dict[str, float], Callable[[Any], None] | None]] | None = None,
    *,
    filter_mode: str = "none",
    filter_key: str = "filter",
) -> RunOutcome:
    """Index the collection's latest version, retrieve every topic, store the run.

    ``record(name, queries)`` (after retrieval) returns the per-topic latencies and
    a writer of what else the store keeps about the run (same transaction).

    With ``filter_mode`` ``pre`` or ``post`` the topics' filters (topic metadata
    ``filter_key``) are evaluated over the version's document metadata and
    passed to the retriever (``Retriever.retrieve``); the run's params record
    ``filter``: mode, key, the filters' sha256, the number of filtered topics and
    of topics that came back with fewer than ``depth`` results. Each short
    topic's status message says how many documents the filter kept.
    """
    from workbench.store.runs import check_run_name

    _check_depth(depth)
    check_run_name(name)
    check_filter_mode(filter_mode)
    if store.runs.has_run(name):  # fail before the slow part
        raise DuplicateNameError(f"run {name!r} already exists and runs are immutable; choose another --name")
    version = store.collections.latest_collection_version(collection)
    eligible: dict[str, frozenset[str]] | None = None
    filter_params: dict[str, Any] = {}
    if filter_mode != "none":
        from workbench.services.vectors.eligibility import collection_eligibility

        elig = collection_eligibility(store, collection, version, key=filter_key, require=True)
        assert elig is not None  # require=True raises instead
        eligible = dict(elig.eligible)
        filter_params = {"mode": filter_mode, "key": filter_key, "filters_sha256": elig.filters.digest,
                         "n_filtered_topics": len(eligible)}
    documents = store.collections.get_documents(collection, version)
    queries = collection_queries(store.collections, collection)
    say(f"[starting] {kind} run {name}: {len(documents):,} documents, {len(queries):,} topics, depth {depth}"
        + (f", {filter_mode}-filtered by topic metadata {filter_key!r} ({len(eligible or {})} topics)"
           if eligible is not None else ""))
    started = time.monotonic()
    index({d: doc.content for d, doc in documents.items()}, version)
    mode: Any = filter_mode
    result = retriever.retrieve(queries, depth, eligible=eligible, filter_mode=mode)
    short = tuple(result.short_topics(depth)) if eligible is not None else ()
    params = dict(retriever.params)
    if filter_params:
        params["filter"] = {**filter_params, "topics_short": len(short)}
    info = RunInfo(name=name, kind=kind, params=params, depth=depth, collection=collection,
                   collection_version=version, description=description)
    latencies, extra = record(name, queries) if record is not None else ({}, None)
    stored = store.runs.save_run(info, result.run, result.statuses, result.messages, latencies=latencies, extra=extra)
    outcome = RunOutcome(stored, result.statuses,
                         {t: m for t, m in result.messages.items() if result.statuses.get(t) != "ok"},
                         filter_mode=filter_mode if eligible is not None else "", short_topics=short)
    tail = (f"; {len(short)} of {len(eligible)} filtered topic(s) came back with fewer than {depth} results"
            if eligible is not None else "")
    say(f"[finished] {outcome.describe()}{tail} [elapsed] {time.monotonic() - started:.1f} s")
    return outcome


def make_bm25_run(
    store: Store,
    collection: str,
    name: str,
    *,
    k1: float = 1.2,
    b: float = 0.75,
    variant: str = "okapi",
    backend: str = "bm25s",
    stemmer: str | None = None,
    stopwords: str = "english",
    depth: int = 100,
    description: str = "",
    filter_mode: str = "none",
    filter_key: str = "filter",
    say: Say = _quiet,
) -> RunOutcome:
    """Run BM25 over the collection's latest version and store the run.

    Args:
        store: the workbench store.
        collection: collection name.
        name: the new run's name.
        k1, b: BM25 parameters (see ``pooling.retrievers.bm25``).
        variant: ``okapi`` (default), ``okapi-epsilon`` (rank_bm25) or ``lucene`` (bm25s).
        backend: ``bm25s`` (default) or ``rank_bm25``.
        stemmer: None or ``english``.
        stopwords: ``english`` (Lucene's list), ``sklearn`` or ``none``.
        depth: documents per topic, 1 to ``MAX_DEPTH`` (1,000,000).
        description: free text stored with the run.
        filter_mode: ``none`` (ignore the topics' filters), ``pre`` (rank only
            eligible documents) or ``post`` (retrieve ``depth``, then drop the
            ineligible; a topic can come back short). Recorded with the run.
        filter_key: the topic metadata key holding each topic's filter.
        say: receives ``[starting]``/``[finished]`` lines.

    Returns:
        ``RunOutcome`` (``short_topics``: filtered topics with fewer than depth results).

    Raises:
        DuplicateNameError: the run name is taken.
        UnknownNameError: unknown collection, backend, variant, stemmer or stop list.
        ValidationError: bad parameters, a filter mode with no topic filters, a
            filter that does not parse or names a key no document has.
    """
    from pooling.retrievers.bm25 import Bm25Retriever

    check_depth(depth)
    retriever = Bm25Retriever(backend=backend, k1=k1, b=b, variant=variant,  # type: ignore[arg-type]
                              stemmer=stemmer, stopwords=stopwords)  # type: ignore[arg-type]
    def index(docs: dict[str, str], _version: str) -> None:
        retriever.index(docs)

    return _run_retriever(store, retriever, collection, name, "bm25", depth, description, say, index,
                          filter_mode=filter_mode, filter_key=filter_key)


@dataclass(frozen=True)
class DenseRunRequest:
    """A dense run to produce: over which collection, under which name, and how to encode, index and filter.

    Built once by the caller (``workbench run dense``, the demo, ANN-recall's exact
    reference, tests) and handed to ``make_dense_run``; the defaults are the
    command line's.

    Attributes:
        collection: collection name (its latest version is ranked).
        name: the new run's name.
        depth: documents per topic, 1 to ``MAX_DEPTH`` (1,000,000).
        description: free text stored with the run.
        model_path: local sentence-transformers folder; None = packaged all-MiniLM-L6-v2.
        model_dir: where the packaged model is extracted (None = ~/.cache/workbench/models).
        batch_size: texts per forward pass.
        device: torch device (``cpu``).
        threads: torch CPU threads (None = torch's default).
        progress: tqdm bar on stderr while encoding.
        index: ``exact`` (default), ``hnsw`` or ``ivf`` (``pooling.retrievers.ann``).
        index_params: the index's parameters (``M``, ``efConstruction``,
            ``efSearch``; ``nlist``, ``nprobe``); missing ones take their defaults.
        index_threads: faiss OpenMP threads while building (None: faiss's default).
        filter_mode: ``none``, ``pre`` or ``post`` (see ``make_bm25_run``).
        filter_key: the topic metadata key holding each topic's filter.

    Example:
        >>> r = DenseRunRequest("cranfield", "dense-hnsw", index="hnsw", index_params={"efSearch": 64})
        >>> r.depth, r.index, r.filter_mode
        (100, 'hnsw', 'none')
    """

    collection: str
    name: str
    depth: int = 100
    description: str = ""
    model_path: str | Path | None = None
    model_dir: str | Path | None = None
    batch_size: int = 64
    device: str = "cpu"
    threads: int | None = None
    progress: bool = False
    index: str = "exact"
    index_params: Mapping[str, int] | None = None
    index_threads: int | None = None
    filter_mode: str = "none"
    filter_key: str = "filter"


def make_dense_run(
    store: Store,
    request: DenseRunRequest,
    *,
    encoder: Encoder | None = None,
    say: Say = _quiet,
) -> RunOutcome:
    """Dense retrieval over the collection's latest version, with the store as embedding cache.

    The top k is found by brute force (``index="exact"``) or by a faiss index
    (``hnsw``, ``ivf``) over the same cached vectors and the same metric. In every
    case the index's kind, parameters, build time, size and the latency summary
    of its queries are stored with the run (``ann_index_stats``), and each
    topic's search latency (query encoding excluded) in ``run_topics.latency_ms``.

    Args:
        store: the workbench store (also the embedding cache).
        request: the run to produce and its options (``DenseRunRequest``).
        encoder: an encoder to use instead of a sentence-transformers model (tests).
        say: receives ``[starting]``/``[finished]`` lines.

    Returns:
        ``RunOutcome`` with ``n_encoded`` (new vectors) and ``n_cached``.

    Raises:
        DuplicateNameError: the run name is taken.
        UnknownNameError: unknown collection.
        ValidationError: a missing model folder or bad options.
    """
    from pooling.retrievers.dense import DenseRetriever

    r = request
    check_depth(r.depth)
    retriever = DenseRetriever(r.model_path, encoder=encoder, cache=store.vectors, batch_size=r.batch_size,
                               device=r.device, threads=r.threads, model_dir=r.model_dir, progress=r.progress,
                               index=r.index, index_params=r.index_params, index_threads=r.index_threads)

    def build(docs: dict[str, str], version: str) -> None:
        from pooling.retrievers.ann import resolve_params

        resolve_params(r.index, r.index_params or {}, len(docs))  # before the first vector is encoded (and cached)
        retriever.index(docs, text_hashes=store.collections.document_text_hashes(r.collection, version))
        distinct = retriever.last_encoded + retriever.last_cached
        same = f" ({len(docs) - distinct:,} share another document's text: encoded once)" if distinct < len(docs) else ""
        say(f"embeddings of {len(docs):,} documents, {distinct:,} distinct texts{same}: "
            f"{retriever.last_encoded:,} encoded, {retriever.last_cached:,} from the cache "
            f"({retriever.encoder.model_key})")
        vi = retriever.vector_index
        if vi is not None and vi.kind != "exact":
            say(f"index {vi.kind} {vi.params}: built in {vi.build_ms / 1000:.1f} s, {vi.index_bytes:,} bytes")

    def record(run_name: str, queries: Mapping[str, str]) -> tuple[dict[str, float], Callable[[Any], None] | None]:
        from workbench.services.vectors.index_stats import index_stats_writer

        latencies = {t: retriever.latency_by_query[q] for t, q in queries.items() if q in retriever.latency_by_query}
        return latencies, index_stats_writer(run_name, retriever, latencies)

    outcome = _run_retriever(store, retriever, r.collection, r.name, "dense", r.depth, r.description, say, build,
                             record, filter_mode=r.filter_mode, filter_key=r.filter_key)
    return RunOutcome(outcome.info, outcome.statuses, outcome.messages,
                      retriever.last_encoded, retriever.last_cached, filter_mode=outcome.filter_mode,
                      short_topics=outcome.short_topics)


def _same_collection(runs: Runs, run_names: Sequence[str]) -> tuple[str, str, list[RunInfo]]:
    if not run_names:
        raise ValidationError("expected at least one run name, found none")
    if len(set(run_names)) != len(run_names):
        dup = sorted({r for r in run_names if list(run_names).count(r) > 1})
        raise ValidationError(f"run {shown(dup[0])} is named twice; name each run once")
    infos = [runs.get_run_info(r) for r in run_names]
    collections = sorted({i.collection for i in infos})
    if len(collections) > 1:
        raise ValidationError(f"runs belong to different collections ({', '.join(collections)}); "
                              "pool or fuse runs of one collection")
    versions = sorted({i.collection_version for i in infos})
    if len(versions) > 1:
        by = {v[:12]: [i.name for i in infos if i.collection_version == v] for v in versions}
        raise ValidationError(
            f"runs were produced over different versions of collection {collections[0]!r}: {by}; "
            "re-run the older runs over the current version")
    return collections[0], versions[0], infos


def make_fused_run(
    collections: Collections, runs: Runs,
    name: str,
    run_names: Sequence[str],
    *,
    method: FusionMethod | None = None,
    depth: int = 100,
    description: str = "",
    say: Say = _quiet,
) -> RunOutcome:
    """Fuse stored runs (RRF by default) into a new stored run of kind ``fusion``.

    A topic is ``ok`` when the fused list is non-empty; otherwise ``error`` if an
    input run failed on it, else ``empty``.

    Args:
        collections: the store's collections.
        runs: the store's runs.
        name: the new run's name.
        run_names: stored runs of one collection version (at least one).
        method: fusion method value (default ``RRF(k=60)``); see ``pooling.fusion``.
        depth: documents kept per topic in the fused run, >= 1.
        description: free text.
        say: receives ``[starting]``/``[finished]`` lines.

    Returns:
        ``RunOutcome``.

    Raises:
        UnknownNameError: an unknown run.
        ValidationError: no runs, runs of different collections or versions, depth < 1.
        DuplicateNameError: the name is taken.
    """
    _check_depth(depth)
    method = method or RRF(k=60.0)
    collection, version, _infos = _same_collection(runs, run_names)
    say(f"[starting] fusion run {name}: {method.name} over {', '.join(run_names)}")
    fused = method.fuse([runs.get_run(r) for r in run_names])
    from workbench.ranking import ranked

    cut = {t: {r.doc_id: r.score for r in ranked(scores)[:depth]} for t, scores in fused.items() if scores}
    statuses: dict[str, str] = {}
    messages: dict[str, str] = {}
    input_status = {r: runs.get_run_statuses(r) for r in run_names}
    for topic_id in collections.get_topics(collection):
        if cut.get(topic_id):
            statuses[topic_id] = "ok"
            continue
        failed = [r for r in run_names if input_status[r].get(topic_id) == "error"]
        statuses[topic_id] = "error" if failed else "empty"
        messages[topic_id] = (f"input run(s) failed on this topic: {', '.join(failed)}" if failed
                              else "no input run has results for this topic")
    params: dict[str, Any] = {**method.params, "runs": list(run_names)}
    info = RunInfo(name=name, kind="fusion", params=params, depth=depth, collection=collection,
                   collection_version=version, description=description)
    stored = runs.save_run(info, cut, statuses, messages)
    outcome = RunOutcome(stored, statuses, messages)
    say(f"[finished] {outcome.describe()}")
    return outcome


def import_run(
    runs: Runs,
    path: str | Path,
    name: str,
    *,
    collection: str,
    description: str = "",
    trust_file_order: bool = False,
    status_file: str | Path | None = None,
) -> RunOutcome:
    """Import a TREC run file as a stored run of kind ``imported``; see ``store.runs.import_run_file``.

    An identical re-import under the same name is a no-op: the outcome has ``unchanged=True``.
    ``status_file``: the run's status side file (``formats.status``); None = the
    ``<file>.status.tsv`` next to the run file if there is one.
    """
    from workbench.formats.status import sidecar_path

    if status_file is None and sidecar_path(path).is_file():
        status_file = sidecar_path(path)
    existed = any(r.name == name for r in runs.list_runs(collection))
    info = runs.import_run_file(path, name, collection=collection, description=description,
                                 trust_file_order=trust_file_order, status_file=status_file)
    rows = runs.get_run_topic_statuses(name)
    return RunOutcome(info, {r.topic_id: r.status for r in rows},
                      {r.topic_id: r.message for r in rows if r.status != "ok"}, unchanged=existed)


def export_run(runs: Runs, name: str, out: str | Path) -> int:
    """Write a stored run as a TREC run file (atomically); returns the number of lines.

    Raises:
        UnknownNameError: unknown run.
        UnwritableIdError: an id holds whitespace (a TREC line cannot carry it).
    """
    from workbench.formats.trec import write_run

    run = runs.get_run(name)
    write_run(out, run, name)
    return sum(len(d) for d in run.values())


def run_lines(runs: Runs, name: str) -> list[str]:
    """A stored run as TREC run-file lines (``topic Q0 doc rank score tag``), topics in natural order.

    Raises:
        UnknownNameError: unknown run.
        UnwritableIdError: an id holds whitespace (a TREC line cannot carry it).
    """
    from workbench.formats.trec import check_column, sorted_ids
    from workbench.ranking import ranked

    run = runs.get_run(name)
    check_column(name, "run tag")
    lines = []
    for t in sorted_ids(list(run)):
        check_column(t, "topic id")
        for r in ranked(run[t]):
            check_column(r.doc_id, "doc id")
            lines.append(f"{t} Q0 {r.doc_id} {r.rank} {r.score!r} {name}")
    return lines


# -- pools -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolOutcome:
    """A pool build: the stored version, and whether it is new.

    Attributes:
        info: the pool version (an existing identical one when ``created`` is False).
        created: False when an identical pool already existed (nothing written).
        pool: the pool's content.
    """

    info: PoolInfo
    created: bool
    pool: Pool


@dataclass(frozen=True)
class ExtensionOutcome:
    """A pool extension.

    Attributes:
        parent: the pool version extended.
        info: the child (delta) version, or None when the new runs brought nothing new.
        created: False when nothing was written (no novel document, or an identical
            child already existed).
        extension: the delta pool and the per-run, per-topic pool-novel counts.
    """

    parent: str
    info: PoolInfo | None
    created: bool
    extension: PoolExtension


def _with_topics(pool: Pool, topics: TopicSelection | None) -> Pool:
    """The pool with its topic choice in ``params`` (absent for all topics, so those pools keep their hash)."""
    if topics is None or topics.topics is None:
        return pool
    return dataclasses.replace(pool, params={**pool.params, "topics": topics.description})


def build_pool(
    pools: Pools, stored_runs: Runs,
    run_names: Sequence[str],
    *,
    depth: int = 20,
    name: str | None = None,
    budget: int | None = None,
    rrf_k: float = 60.0,
    topics: TopicSelection | None = None,
    say: Say = _quiet,
) -> PoolOutcome:
    """Build and store a depth-k pool of stored runs.

    Args:
        pools: the store's pools.
        stored_runs: the store's runs.
        run_names: stored runs of one collection version.
        depth: cutoff k per run, 1 to ``MAX_DEPTH`` (1,000,000).
        name: the version name; None = ``<collection>-pool-v<N>``, or the existing
            version when an identical pool is already stored.
        budget: per-topic cap (highest priority first); None = no cap.
        rrf_k: the RRF constant of the judging priority.
        topics: pool only these topics (``services.runs.pool_topics.select_topics``;
            the choice is recorded in the pool's params); None = all topics.
        say: receives ``[starting]``/``[finished]`` lines.

    Returns:
        ``PoolOutcome``.

    Raises:
        UnknownNameError: an unknown run.
        ValidationError: no runs, runs of different collections or versions, bad depth/budget.
        DuplicateNameError: ``name`` is taken.
    """
    check_depth(depth)
    collection, version, _ = _same_collection(stored_runs, run_names)
    say(f"[starting] pool of {len(run_names)} run(s) at depth {depth} ({collection})")
    runs = {r: stored_runs.get_run(r, depth=depth) for r in run_names}
    if topics is not None and topics.topics is not None:
        runs = {r: topics.restrict(run) for r, run in runs.items()}
        say(f"topics: {topics.description}")
    pool = _with_topics(_build_pool(runs, depth, priority=RRF(k=rrf_k), budget=budget), topics)
    if name is None:  # the default name is chosen inside the transaction that stores the pool
        info, created = pools.save_pool_default(pool, collection=collection, collection_version=version)
        if not created:
            say(f"[finished] identical to the stored pool {info.pool_version}; nothing written")
            return PoolOutcome(info, False, pool)
    else:
        info = pools.save_pool(name, pool, collection=collection, collection_version=version)
    say(f"[finished] pool {info.pool_version}: {info.n_entries:,} documents over {info.n_topics} topics")
    return PoolOutcome(info, True, pool)


def default_parent(collection: str, pools: Sequence[PoolInfo]) -> str:
    """The pool version ``pool extend`` extends when no ``--from`` is given.

    Pools form lineages (a root built by ``pool build`` and the children
    extended from it). With one lineage, its newest version is extended; with
    several, the choice is the user's: guessing would extend an unrelated root.

    Args:
        collection: the collection, for the messages.
        pools: the collection's pool versions, oldest first (``list_pools``).

    Raises:
        ValidationError: no pool, or more than one lineage (listing each one's
            versions, newest last, and the --from to write).
    """
    if not pools:
        raise ValidationError(f"collection {collection!r} has no pool to extend; "
                              "build one first with `workbench pool build`")
    parent_of = {p.pool_version: p.parent_version for p in pools}

    def root(name: str) -> str:
        seen = set()
        while parent_of.get(name) and name not in seen:
            seen.add(name)
            name = parent_of[name]  # type: ignore[assignment]
        return name

    lineages: dict[str, list[str]] = {}
    for p in pools:  # oldest first, so each lineage lists its newest version last
        lineages.setdefault(root(p.pool_version), []).append(p.pool_version)
    if len(lineages) == 1:
        return next(iter(lineages.values()))[-1]
    shown = "; ".join(f"{r}: {' -> '.join(v) if len(v) <= 4 else ' -> '.join([v[0], '...', *v[-2:]])}"
                      for r, v in lineages.items())
    newest = [v[-1] for v in lineages.values()]
    raise ValidationError(
        f"collection {collection!r} has {len(lineages)} pool lineages ({shown}); say which pool to extend "
        f"with --from, one of the newest: {', '.join(newest)}")


def extend_pool(
    pools: Pools, runs: Runs, qrels: Qrels,
    run_names: Sequence[str],
    *,
    parent: str | None = None,
    depth: int | None = None,
    name: str | None = None,
    budget: int | None = None,
    rrf_k: float = 60.0,
    exclude_qrels: Sequence[str] = (),
    topics: TopicSelection | None = None,
    say: Say = _quiet,
) -> ExtensionOutcome:
    """Extend a pool with new runs: a child version holding only their pool-novel documents.

    A document is pool-novel for a topic when a new run ranks it within ``depth``
    and it is neither in the parent pool (nor any ancestor) nor judged (a grade
    or an adjudication in the store, or an entry of an ``exclude_qrels`` version).

    Args:
        pools: the store's pools.
        runs: the store's runs.
        qrels: the store's qrels versions.
        run_names: the new runs (stored, same collection version as the parent).
        parent: pool version to extend; None = the newest version of the collection's only
            pool lineage (``default_parent``; an error when it has several).
        depth: cutoff k; None = the parent's depth.
        name: the child's name; None = the next ``<collection>-pool-v<N>``.
        budget: per-topic cap on the delta.
        rrf_k: the RRF constant of the judging priority.
        exclude_qrels: qrels versions whose documents count as judged too.
        topics: extend only these topics (recorded in the child's params); None = all.
        say: receives ``[starting]``/``[finished]`` lines.

    Returns:
        ``ExtensionOutcome`` (``info`` None when nothing is new).

    Raises:
        UnknownNameError: unknown run, pool or qrels version.
        ValidationError: no pool to extend, or runs of another collection version.
        DuplicateNameError: ``name`` is taken.
    """
    if depth is not None:
        check_depth(depth)
    collection, version, _ = _same_collection(runs, run_names)
    if parent is None:  # a sample pool is not extended (it is a random draw): only depth-k unions are candidates
        parent = default_parent(collection, [p for p in pools.list_pools(collection) if not p.is_sample])
    parent_info = pools.get_pool(parent)
    if parent_info.is_sample:
        raise ValidationError(f"pool {parent!r} is a sample (workbench pool sample): a random draw is not extended; "
                              "extend a depth-k pool, or draw a new sample over the runs")
    if parent_info.collection != collection:
        raise ValidationError(f"pool {parent!r} belongs to collection {parent_info.collection!r}, "
                              f"the runs to {collection!r}")
    if parent_info.collection_version != version:
        raise ValidationError(
            f"pool {parent!r} was built over collection version {parent_info.collection_version[:12]}, "
            f"the runs over {version[:12]}; pool runs of one collection version")
    depth = depth or parent_info.depth
    say(f"[starting] extend pool {parent} with {len(run_names)} run(s) at depth {depth}")
    judged = pools.judged_documents(collection)
    for qname in exclude_qrels:
        for topic_id, grades in qrels.get_qrels(qname).items():
            judged.setdefault(topic_id, set()).update(grades)
    new_runs = {r: runs.get_run(r, depth=depth) for r in run_names}
    if topics is not None and topics.topics is not None:
        new_runs = {r: topics.restrict(run) for r, run in new_runs.items()}
        say(f"topics: {topics.description}")
    extension = _extend_pool(pools.pool_documents(parent), judged, new_runs, depth,
                             priority=RRF(k=rrf_k), budget=budget)
    extension = dataclasses.replace(extension, pool=_with_topics(extension.pool, topics))
    if not extension.pool.entries:
        say(f"[finished] the runs bring no pool-novel document; pool {parent} is unchanged")
        return ExtensionOutcome(parent, None, False, extension)
    if name is None:  # the default name is chosen inside the transaction that stores the pool
        info, created = pools.save_pool_default(extension.pool, collection=collection, collection_version=version,
                                                parent_version=parent)
        if not created:
            say(f"[finished] identical to the stored pool {info.pool_version}; nothing written")
            return ExtensionOutcome(parent, info, False, extension)
    else:
        info = pools.save_pool(name, extension.pool, collection=collection, collection_version=version,
                               parent_version=parent)
    say(f"[finished] pool {info.pool_version} (child of {parent}): {info.n_entries:,} new documents "
        f"over {info.n_topics} topics")
    return ExtensionOutcome(parent, info, True, extension)


def pool_stats(pools: Pools, pool_version: str) -> PoolStats:
    """Statistics of one pool version (size per topic, unique contributions, overlap)."""
    return pools.pool_stats(pool_version)


def pool_from_files(
    paths: Sequence[str | Path],
    depth: int,
    *,
    budget: int | None = None,
    rrf_k: float = 60.0,
) -> PoolColumns:
    """Pool TREC or Parquet run files directly (no store), with provenance: the bulk path.

    One in-memory DuckDB database parses every file and computes the pool
    (``workbench.store.pools.pool_run_files``); the result equals
    ``pooling.pool.build_pool`` over the files (same content hash). Runs are
    named by file stem.

    Raises:
        InputFormatError: a malformed file (file:line).
        ValidationError: bad depth or budget, no files, repeated file stems.
    """
    from workbench.store.pools import pool_run_files

    check_depth(depth)
    return pool_run_files(paths, depth, rrf_k=rrf_k, budget=budget)
