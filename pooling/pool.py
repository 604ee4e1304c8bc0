"""Depth-k pooling with provenance, judging priority and pool extension (PURE).

A pool is the union, per topic, of the top ``depth`` documents of each run (the
TREC method). For every (topic, document) it keeps:

* provenance: which runs contributed it and at which rank (``Contribution``);
* ``best_rank``: the smallest such rank; ``n_runs``: how many runs contributed it;
* ``priority``: the judging priority, by default the reciprocal-rank-fused score
  over the contributing runs, sum of 1 / (k + rank) with k = 60, so documents
  that many runs rank high come first;
* ``priority_rank``: 1-based position within the topic under the canonical
  ordering rule applied to the priorities (priority desc, doc_id desc).

Ranks always come from ``workbench.ranking.ranked`` (score desc, doc_id desc),
so the same runs give the same pool, in the same order, with the same content
hash, whatever order the runs are given in.

A per-topic ``budget`` keeps only the ``budget`` documents of highest priority.

``extend_pool`` builds a *delta* pool: the documents of new runs' top-k that are
neither in the parent pool (with its ancestors) nor already judged, and counts
each new run's pool-novel documents per topic.

Source:
    Depth-k pooling: Spärck Jones & van Rijsbergen (1975); Voorhees & Harman,
    "TREC: Experiment and Evaluation in Information Retrieval" (MIT Press 2005), ch. 2.
    Priority by RRF: Cormack, Clarke & Büttcher, SIGIR 2009,
    doi:10.1145/1571941.1572114 (cf. "move-to-front" pooling, Cormack, Palmer &
    Clarke, SIGIR 1998, doi:10.1145/290941.291009).

Example:
    >>> p = build_pool({"a": {"t": {"d1": 2.0, "d2": 1.0}}, "b": {"t": {"d2": 5.0}}}, depth=1)
    >>> [(e.doc_id, e.n_runs, e.priority_rank) for e in p.entries]
    [('d2', 1, 1), ('d1', 1, 2)]
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pooling.fusion import RRF, FusionMethod
from workbench.errors import ValidationError
from workbench.ranking import natural_key, ranked
from workbench.types import Run

STRATEGY = "depth-k union"
MAX_DEPTH = 1_000_000  # ranks are stored in 32-bit INTEGER columns; no pool is this deep


@dataclass(frozen=True, slots=True)
class PoolEntry:
    """One (topic, document) of a pool.

    Attributes:
        topic_id: the topic.
        doc_id: the document.
        best_rank: smallest rank (1-based) at which any contributing run retrieved it.
        n_runs: number of runs that retrieved it within the pool depth.
        priority: judging priority, higher first (default: RRF score, k = 60).
        priority_rank: 1-based position within the topic (priority desc, doc_id desc).
    """

    topic_id: str
    doc_id: str
    best_rank: int
    n_runs: int
    priority: float
    priority_rank: int


@dataclass(frozen=True, slots=True)
class Contribution:
    """Provenance: run ``run_name`` retrieved ``doc_id`` for ``topic_id`` at ``rank``."""

    topic_id: str
    doc_id: str
    run_name: str
    rank: int


@dataclass(frozen=True)
class Pool:
    """A pool (or a delta pool) in memory, before or after storing.

    Attributes:
        depth: the cutoff k applied to each run.
        runs: names of the runs pooled, sorted (runs that contributed nothing included).
        entries: ordered by topic_id, then priority_rank.
        provenance: ordered by topic_id, doc_id, run_name.
        strategy: ``"depth-k union"``.
        params: priority method and parameters, budget (JSON-serialisable).
    """

    depth: int
    runs: tuple[str, ...]
    entries: tuple[PoolEntry, ...]
    provenance: tuple[Contribution, ...]
    strategy: str = STRATEGY
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_topics(self) -> int:
        """Number of topics with at least one pooled document."""
        return len({e.topic_id for e in self.entries})

    @property
    def n_entries(self) -> int:
        """Number of (topic, document) pairs."""
        return len(self.entries)

    def documents(self) -> dict[str, set[str]]:
        """topic_id -> set of pooled doc_ids."""
        out: dict[str, set[str]] = {}
        for e in self.entries:
            out.setdefault(e.topic_id, set()).add(e.doc_id)
        return out

    def entry_rows(self) -> Iterator[tuple[str, str, int, int, float, int]]:
        """(topic_id, doc_id, best_rank, n_runs, priority, priority_rank) per entry."""
        return ((e.topic_id, e.doc_id, e.best_rank, e.n_runs, e.priority, e.priority_rank)
                for e in self.entries)

    def provenance_rows(self) -> Iterator[tuple[str, str, str, int]]:
        """(topic_id, doc_id, run_name, rank) per contribution."""
        return ((c.topic_id, c.doc_id, c.run_name, c.rank) for c in self.provenance)

    @property
    def content_hash(self) -> str:
        """sha256 (hex) of the pool's content; see ``pool_content_hash``."""
        return pool_content_hash(self)


def pool_content_hash(pool: Pool | PoolColumns) -> str:
    """Content hash of a pool: equal content, equal hash (objects or columns alike).

    Hashes depth, strategy, params, run names, every entry (with the exact
    ``repr`` of its priority) and every contribution, in their canonical order.

    Returns:
        64 hex digits.
    """
    h = hashlib.sha256()
    head = {"depth": pool.depth, "strategy": pool.strategy, "params": dict(pool.params),
            "runs": list(pool.runs)}
    h.update(json.dumps(head, sort_keys=True).encode())
    h.update("".join(f"\ne\t{t}\t{d}\t{b}\t{n}\t{p!r}\t{r}" for t, d, b, n, p, r in pool.entry_rows()).encode())
    h.update("".join(f"\np\t{t}\t{d}\t{run}\t{k}" for t, d, run, k in pool.provenance_rows()).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class PoolColumns:
    """A pool held as columns (the bulk path's result), same content as a ``Pool``.

    Columns are parallel sequences in the canonical orders of ``Pool``: entries
    by topic_id then priority_rank, provenance by topic_id, doc_id, run_name.
    ``to_pool()`` materialises the row objects; ``content_hash`` equals that of
    the equivalent ``Pool``.

    Attributes:
        depth, runs, strategy, params: as in ``Pool``.
        entries: column name -> values for ``topic_id, doc_id, best_rank, n_runs,
            priority, priority_rank``.
        provenance: column name -> values for ``topic_id, doc_id, run_name, rank``.
    """

    depth: int
    runs: tuple[str, ...]
    entries: Mapping[str, Sequence[Any]]
    provenance: Mapping[str, Sequence[Any]]
    strategy: str = STRATEGY
    params: Mapping[str, Any] = field(default_factory=dict)

    def entry_rows(self) -> Iterator[tuple[str, str, int, int, float, int]]:
        """(topic_id, doc_id, best_rank, n_runs, priority, priority_rank) per entry."""
        e = self.entries
        return zip(e["topic_id"], e["doc_id"], e["best_rank"], e["n_runs"], e["priority"],
                   e["priority_rank"], strict=True)

    def provenance_rows(self) -> Iterator[tuple[str, str, str, int]]:
        """(topic_id, doc_id, run_name, rank) per contribution."""
        p = self.provenance
        return zip(p["topic_id"], p["doc_id"], p["run_name"], p["rank"], strict=True)

    @property
    def n_entries(self) -> int:
        """Number of (topic, document) pairs."""
        return len(self.entries["topic_id"])

    @property
    def n_topics(self) -> int:
        """Number of topics with at least one pooled document."""
        return len(set(self.entries["topic_id"]))

    def documents(self) -> dict[str, set[str]]:
        """topic_id -> set of pooled doc_ids."""
        out: dict[str, set[str]] = {}
        for t, d in zip(self.entries["topic_id"], self.entries["doc_id"], strict=True):
            out.setdefault(t, set()).add(d)
        return out

    @property
    def content_hash(self) -> str:
        """sha256 (hex) of the content; equal to the equivalent ``Pool``'s."""
        return pool_content_hash(self)

    def to_pool(self) -> Pool:
        """The same pool as row objects."""
        return Pool(self.depth, self.runs,
                    tuple(PoolEntry(*r) for r in self.entry_rows()),
                    tuple(Contribution(*r) for r in self.provenance_rows()),
                    self.strategy, self.params)


def _check(depth: int, budget: int | None, runs: Mapping[str, Run]) -> None:
    if not 1 <= depth <= MAX_DEPTH:
        raise ValidationError(
            f"expected a pool depth between 1 and {MAX_DEPTH:,}, found {depth}; TREC pools use 100 or less"
        )
    if budget is not None and budget < 1:
        raise ValidationError(f"per-topic budget must be >= 1, found {budget}; omit it for no cap")
    if not runs:
        raise ValidationError("a pool needs at least one run, found none; name the runs to pool")


def _cut(runs: Mapping[str, Run], depth: int) -> dict[str, dict[str, list[tuple[str, int, float]]]]:
    """run -> topic -> [(doc_id, rank, score)] of the top ``depth``, canonical order."""
    return {
        name: {t: [(r.doc_id, r.rank, r.score) for r in ranked(scores)[:depth]]
               for t, scores in runs[name].items()}
        for name in sorted(runs)
    }


def _assemble(
    cut: Mapping[str, Mapping[str, list[tuple[str, int, float]]]],
    depth: int,
    priority: FusionMethod,
    budget: int | None,
    exclude: Mapping[str, Set[str]],
) -> Pool:
    run_names = tuple(sorted(cut))
    contributions: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for name in run_names:  # sorted: provenance lists are in run-name order
        for topic_id, rows in cut[name].items():
            skip = exclude.get(topic_id, ())
            for doc_id, rank, _ in rows:
                if doc_id not in skip:
                    contributions.setdefault((topic_id, doc_id), []).append((name, rank))
    # Priority over the depth-cut runs (ranks are the runs' own, exclusions do not shift them).
    cut_runs = [{t: {d: s for d, _, s in rows} for t, rows in cut[name].items()} for name in run_names]
    fused = priority.fuse(cut_runs)
    by_topic: dict[str, dict[str, float]] = {}
    for topic_id, doc_id in contributions:
        by_topic.setdefault(topic_id, {})[doc_id] = float(fused[topic_id][doc_id])
    entries: list[PoolEntry] = []
    provenance: list[Contribution] = []
    for topic_id in sorted(by_topic):
        order = ranked(by_topic[topic_id])
        if budget is not None:
            order = order[:budget]
        for row in order:
            contrib = contributions[(topic_id, row.doc_id)]
            entries.append(PoolEntry(topic_id, row.doc_id, min(r for _, r in contrib), len(contrib),
                                     row.score, row.rank))
        for doc_id in sorted(r.doc_id for r in order):
            provenance.extend(Contribution(topic_id, doc_id, name, rank)
                              for name, rank in contributions[(topic_id, doc_id)])
    params: dict[str, Any] = {"priority": priority.params, "budget": budget}
    return Pool(depth, run_names, tuple(entries), tuple(provenance), STRATEGY, params)


def build_pool(
    runs: Mapping[str, Run],
    depth: int,
    *,
    priority: FusionMethod | None = None,
    budget: int | None = None,
) -> Pool:
    """Depth-k union of runs, with provenance and judging priority.

    Args:
        runs: run name -> run (topic_id -> doc_id -> score). Order does not matter.
        depth: cutoff k, >= 1: the top ``depth`` documents of every run and topic
            (canonical ranking) are pooled.
        priority: fusion method whose fused score (over the depth-cut runs) is
            the priority; default ``RRF(k=60)``.
        budget: per-topic cap (>= 1): keep only that many documents per topic,
            those of highest priority. None (default) keeps all.

    Returns:
        A ``Pool``; topics where no run retrieved anything are absent.

    Raises:
        ValidationError: no runs, ``depth < 1`` or ``budget < 1``.

    Source:
        TREC depth-k pooling (Voorhees & Harman 2005); RRF priority, Cormack et
        al. SIGIR 2009, doi:10.1145/1571941.1572114.

    Example:
        >>> build_pool({"a": {"t": {"x": 1.0, "y": 1.0}}}, depth=1).entries[0].doc_id
        'y'
    """
    _check(depth, budget, runs)
    return _assemble(_cut(runs, depth), depth, priority or RRF(k=60.0), budget, {})


@dataclass(frozen=True)
class PoolExtension:
    """Result of ``extend_pool``.

    Attributes:
        pool: the delta pool: only the new runs' pool-novel documents.
        novel: run name -> topic_id -> number of that run's top-k documents that
            are neither in the parent pool (with ancestors) nor judged. Every new
            run and every topic it has results for is present (0 included).
        unique_novel: run name -> number of pool-novel (topic, document) pairs that
            no other new run brings.
    """

    pool: Pool
    novel: Mapping[str, Mapping[str, int]]
    unique_novel: Mapping[str, int]

    @property
    def novel_totals(self) -> dict[str, int]:
        """run name -> pool-novel documents over all topics."""
        return {r: sum(per_topic.values()) for r, per_topic in self.novel.items()}


def extend_pool(
    parent_documents: Mapping[str, Set[str]],
    judged: Mapping[str, Set[str]],
    new_runs: Mapping[str, Run],
    depth: int,
    *,
    priority: FusionMethod | None = None,
    budget: int | None = None,
) -> PoolExtension:
    """Delta pool of new runs: only what neither the pool nor the judgments hold.

    A document d of topic t enters the delta pool iff some new run ranks it in its
    top ``depth`` and d is not in ``parent_documents[t]`` and not in ``judged[t]``.
    Provenance, best rank, ``n_runs`` and priority are computed over the new runs
    only (ranks are each run's own ranks, unshifted by the exclusions).

    Args:
        parent_documents: topic_id -> doc_ids already pooled (the parent pool and
            all its ancestors).
        judged: topic_id -> doc_ids that already have a judgment (from any pool).
        new_runs: run name -> run.
        depth: cutoff k, >= 1.
        priority: priority fusion method; default ``RRF(k=60)``.
        budget: optional per-topic cap on the delta.

    Returns:
        ``PoolExtension`` with the delta pool and the pool-novel counts.

    Raises:
        ValidationError: no runs, ``depth < 1`` or ``budget < 1``.

    Example:
        >>> ext = extend_pool({"t": {"a"}}, {"t": {"b"}}, {"r": {"t": {"a": 3, "b": 2, "c": 1}}}, 3)
        >>> [e.doc_id for e in ext.pool.entries], ext.novel["r"]["t"]
        (['c'], 1)
    """
    _check(depth, budget, new_runs)
    cut = _cut(new_runs, depth)
    exclude: dict[str, set[str]] = {}
    for source in (parent_documents, judged):
        for topic_id, docs in source.items():
            exclude.setdefault(topic_id, set()).update(docs)
    pool = _assemble(cut, depth, priority or RRF(k=60.0), budget, exclude)
    novel: dict[str, dict[str, int]] = {}
    bringers: dict[tuple[str, str], list[str]] = {}
    for name, per_topic in cut.items():
        counts: dict[str, int] = {}
        for topic_id, rows in per_topic.items():
            skip = exclude.get(topic_id, set())
            fresh = [d for d, _, _ in rows if d not in skip]
            counts[topic_id] = len(fresh)
            for d in fresh:
                bringers.setdefault((topic_id, d), []).append(name)
        novel[name] = dict(sorted(counts.items()))
    unique = {name: 0 for name in cut}
    for names in bringers.values():
        if len(names) == 1:
            unique[names[0]] += 1
    return PoolExtension(pool, novel, unique)


@dataclass(frozen=True)
class PoolStats:
    """Statistics of one pool, as plain data for the CLI and the UI.

    Attributes:
        size_per_topic: topic_id -> number of pooled documents.
        contributed: run name -> (topic, document) pairs it contributed.
        unique: run name -> pairs contributed by that run alone.
        overlap: run a -> run b -> pairs contributed by both (diagonal = ``contributed``).
        runs: run names, sorted (rows and columns of ``overlap``).
    """

    size_per_topic: Mapping[str, int]
    contributed: Mapping[str, int]
    unique: Mapping[str, int]
    overlap: Mapping[str, Mapping[str, int]]
    runs: tuple[str, ...]

    @property
    def total(self) -> int:
        """Pool size over all topics."""
        return sum(self.size_per_topic.values())


def pool_statistics(
    entries: tuple[PoolEntry, ...] | list[PoolEntry],
    provenance: tuple[Contribution, ...] | list[Contribution],
    runs: tuple[str, ...] | list[str] = (),
) -> PoolStats:
    """Pool size per topic, unique contributions per run and the run-by-run overlap.

    Args:
        entries: the pool's entries.
        provenance: the pool's contributions.
        runs: run names to report even if they contributed nothing.

    Returns:
        ``PoolStats``.

    Example:
        >>> p = build_pool({"a": {"t": {"x": 1.0}}, "b": {"t": {"x": 1.0, "y": 0.5}}}, depth=2)
        >>> s = pool_statistics(p.entries, p.provenance, p.runs); s.unique, s.overlap["a"]["b"]
        ({'a': 0, 'b': 1}, 1)
    """
    size: dict[str, int] = {}
    for e in entries:
        size[e.topic_id] = size.get(e.topic_id, 0) + 1
    names = sorted(set(runs) | {c.run_name for c in provenance})
    by_doc: dict[tuple[str, str], list[str]] = {}
    for c in provenance:
        by_doc.setdefault((c.topic_id, c.doc_id), []).append(c.run_name)
    index = {n: i for i, n in enumerate(names)}
    membership = np.zeros((len(by_doc), len(names)), dtype=np.float32)
    for row, contributors in enumerate(by_doc.values()):
        membership[row, [index[n] for n in contributors]] = 1.0
    # overlap[a, b] = number of pooled documents both a and b contributed (exact: counts < 2**24).
    both = (membership.T @ membership).astype(np.int64)
    alone = membership[membership.sum(axis=1) == 1].sum(axis=0).astype(np.int64)
    contributed = {n: int(both[i, i]) for n, i in index.items()}
    unique = {n: int(alone[i]) for n, i in index.items()}
    overlap = {a: {b: int(both[i, j]) for b, j in index.items()} for a, i in index.items()}
    return PoolStats(dict(sorted(size.items(), key=lambda kv: natural_key(kv[0]))), contributed, unique, overlap, tuple(names))
