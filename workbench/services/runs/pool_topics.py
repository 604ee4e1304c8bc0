"""Which topics a pool covers, and which runs built the pool a qrels version came from.

Topic selection (``select_topics``, ``workbench pool build --topics``):

* ``all`` (default): every topic the runs have results for;
* ``judged``: topics with at least one judgment already: an entry in any
  qrels version of the collection, or a graded judgment or adjudication in
  the store (a topic nobody ever judged is not pooled, so its documents are
  not queued for assessors who have nothing to compare them with);
* ``judged:QRELS``: topics with at least one entry in that qrels version;
* a file path: topic ids, the first column of each non-blank line (``#``
  starts a comment); an id that is not a topic of the collection is an error
  naming the line.

Pool contributors (``pool_contributors``): the runs pooled into the pool
version a published qrels version judged, and into its ancestors, with the
depth each was pooled at. Scored against those qrels, such a run meets a
denominator it helped build: every relevant document it ranked within the
depth is judged, and a fusion of the pooled runs reaches R@depth = 1 by
construction. Reports mark them and print the depth beside R@k with k >= depth.

Source:
    Zobel, How reliable are the results of large-scale information retrieval
    experiments?, SIGIR 1998, doi:10.1145/290941.291014 (pool bias towards
    contributing systems).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import InputFormatError, UnknownNameError, ValidationError, shown
from workbench.formats.trec import iter_columns, shown_id
from workbench.ranking import natural_key

if TYPE_CHECKING:
    from workbench.store import Store
    from workbench.store.collections import Collections
    from workbench.store.pools import Pools
    from workbench.store.qrels import Qrels

TOPIC_CHOICES = "all, judged, judged:QRELS or a file of topic ids"


@dataclass(frozen=True)
class TopicSelection:
    """The topics a pool is restricted to.

    Attributes:
        spec: the choice as given (``all``, ``judged``, ``judged:QRELS``, a path).
        topics: the chosen topic ids (natural order), or None for all (also when the
            choice leaves no topic out, so such a pool equals the ``all`` pool).
        left_out: topics of the collection not chosen (natural order).
        description: one line for reports and the pool's params.
    """

    spec: str
    topics: tuple[str, ...] | None
    left_out: tuple[str, ...]
    description: str

    def restrict(self, run: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """The run without the topics left out."""
        if self.topics is None:
            return {t: dict(s) for t, s in run.items()}
        keep = set(self.topics)
        return {t: dict(s) for t, s in run.items() if t in keep}


def judged_topics(pools: Pools, qrels: Qrels, collection: str, qrels_version: str | None = None) -> set[str]:
    """Topics with at least one judgment (see the module docstring).

    Raises:
        UnknownNameError: unknown collection or qrels version.
    """
    if qrels_version is not None:
        info = qrels.get_qrels_info(qrels_version)
        if info.collection != collection:
            raise ValidationError(f"qrels {qrels_version!r} belong to collection {info.collection!r}, "
                                  f"not {collection!r}")
        return {t for t, docs in qrels.get_qrels(qrels_version).items() if docs}
    topics = {t for t, docs in pools.judged_documents(collection).items() if docs}
    for v in qrels.list_qrels_versions(collection):
        topics |= {t for t, docs in qrels.get_qrels(v.name).items() if docs}
    return topics


def select_topics(
    collections: Collections, pools: Pools, qrels_versions: Qrels, collection: str, spec: str = "all",
) -> TopicSelection:
    """Resolve a ``--topics`` choice for a collection (see the module docstring).

    Raises:
        ValidationError: neither ``all``, ``judged``, ``judged:QRELS`` nor an existing file; a file
            listing no topic id (empty, or comments only); a selection that leaves no topic.
        UnknownNameError: unknown collection or qrels version.
        InputFormatError: a file naming a topic that is not in the collection (file:line).
    """
    all_topics = list(collections.get_topics(collection))
    if spec == "all":
        return TopicSelection(spec, None, (), "all topics")
    if spec == "judged" or spec.startswith("judged:"):
        qrels = spec.partition(":")[2] or None
        chosen = judged_topics(pools, qrels_versions, collection, qrels)
        where = f"qrels {qrels}" if qrels else "any qrels version or judgment of the collection"
        desc = f"judged topics ({where})"
    else:
        path = Path(spec)
        if not path.is_file():
            raise ValidationError(f"--topics: expected {TOPIC_CHOICES}, found {shown(spec)} (no such file)")
        known = set(all_topics)
        chosen = set()
        for lineno, cols in iter_columns(path):
            if cols[0].startswith("#"):
                continue
            if cols[0] not in known:
                raise InputFormatError(str(path), lineno, f"expected a topic of collection {collection!r}, found "
                                                          f"{shown_id(cols[0])}. Check the topic ids.")
            chosen.add(cols[0])
        desc = f"topics listed in {path.as_posix()}"
        if not chosen:  # an empty pool would use up the name and be judged by nobody
            raise ValidationError(f"--topics {path.as_posix()}: the file lists no topic id (one per line; '#' "
                                  "starts a comment line); nothing was pooled")
    ordered = tuple(t for t in all_topics if t in chosen)
    if not ordered:
        raise ValidationError(f"--topics {spec}: the selection leaves no topic of collection {collection!r} "
                              f"({desc}); nothing was pooled")
    left = tuple(t for t in all_topics if t not in chosen)
    if not left:  # every topic chosen: the same pool as ``all`` (same params, same content hash)
        return TopicSelection(spec, None, (), f"{desc}: {len(ordered):,} of {len(all_topics):,}")
    return TopicSelection(spec, tuple(sorted(ordered, key=natural_key)), tuple(sorted(left, key=natural_key)),
                          f"{desc}: {len(ordered):,} of {len(all_topics):,}")


@dataclass(frozen=True)
class PoolContributor:
    """A run pooled into the pool lineage a qrels version judged.

    Attributes:
        run: the run name.
        depth: the deepest cutoff it was pooled at (its top ``depth`` documents are all judged).
        pools: the pool versions it was pooled into, root first.
    """

    run: str
    depth: int
    pools: tuple[str, ...]

    def describe(self, qrels_version: str) -> str:
        """One line for reports."""
        return (f"run {self.run!r} contributed to pool {', '.join(self.pools)} (depth {self.depth}) that qrels "
                f"{qrels_version!r} judged: its R@k for k >= {self.depth} is measured against relevant documents it "
                "helped find (the pool, the union of the pooled runs' top-depth lists, holds every relevant document judged "
                "from it by construction; a run that was not pooled is measured against documents other runs found)")


def pool_contributors(store: Store, qrels_version: str) -> dict[str, PoolContributor]:
    """run name -> ``PoolContributor`` for a published qrels version; empty for imported qrels and for a
    sample's (its judged documents are a random sample of the runs' top D, not all of them: the estimates,
    not the pooled values, are the numbers to read, and they hold for every run alike).

    Raises:
        UnknownNameError: unknown qrels version.
    """
    info = store.qrels.get_qrels_info(qrels_version)
    if not info.pool_version or info.is_sample:
        return {}
    chain: list[str] = []
    current: str | None = info.pool_version
    while current and current not in chain:
        try:
            pool = store.pools.get_pool(current)
        except UnknownNameError:
            break
        chain.append(current)
        current = pool.parent_version
    out: dict[str, PoolContributor] = {}
    for name in reversed(chain):
        pool = store.pools.get_pool(name)
        for run in pool.runs:
            prev = out.get(run)
            out[run] = PoolContributor(run, max(pool.depth, prev.depth if prev else 0),
                                       (*(prev.pools if prev else ()), name))
    return out


def contributor_notes(contributors: Mapping[str, PoolContributor], runs: Sequence[str], qrels_version: str) -> list[str]:
    """The report lines of the scored runs that are pool contributors, in the runs' order."""
    return [contributors[r].describe(qrels_version) for r in runs if r in contributors]
