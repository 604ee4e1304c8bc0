"""Simulation service: replay judging strategies on a pool against an oracle.

Feeds ``workbench.judging.simulate`` (pure) from the store: the pool's topics
(its documents with their priority, each run's pooled documents in rank
order, from the pool's provenance, over the pool version and its ancestors),
the topics' queries, the collection's tf-idf features (for ``cal``), the runs
the pool was built from (rescored at every budget), and the oracle (a TREC
qrels file, or a stored qrels version). Nothing is written to the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import UnknownNameError, ValidationError
from workbench.judging.simulate import DEFAULT_SHARES, SimulationReport, simulate
from workbench.judging.strategies import (
    DocumentFeatures,
    Strategy,
    TopicPool,
    build_topic_pools,
    parse_strategy,
    tfidf_features,
)

if TYPE_CHECKING:
    from pooling.pool import Pool
    from workbench.store import Store
    from workbench.store.collections import Collections
    from workbench.store.pools import Pools
    from workbench.store.qrels import Qrels
    from workbench.types import Document

Say = Callable[[str], None]

_FEATURES: dict[str, DocumentFeatures] = {}
"""collection version -> tf-idf features (this process; a few MB per 10k documents)."""


def document_text(doc: Document) -> str:
    """What the tf-idf features read of a document: its title and text."""
    return f"{doc.title}\n{doc.text}" if doc.title else doc.text


def text_features(texts: Mapping[str, str]) -> DocumentFeatures:
    """tf-idf features as ``cal`` reads them: Snowball-stemmed words without
    scikit-learn's English stop words (``pooling.tokenize.Tokenizer``), sublinear tf."""
    from pooling.tokenize import Tokenizer

    return tfidf_features(texts, analyzer=Tokenizer(stemmer="english", stopwords="sklearn"))


def collection_features(collections: Collections, collection: str, version: str) -> DocumentFeatures:
    """The tf-idf features of one collection version (``text_features``; cached per process)."""
    if version not in _FEATURES:
        docs = collections.get_documents(collection, version)
        if len(_FEATURES) >= 4:
            _FEATURES.pop(next(iter(_FEATURES)))
        _FEATURES[version] = text_features({d: document_text(doc) for d, doc in docs.items()})
    return _FEATURES[version]


def parse_strategies(specs: str | Sequence[str], *, seed: int | None = None) -> list[Strategy]:
    """Strategies from a comma-separated list (commas inside parentheses kept),
    each given ``seed`` when it has one.

    Raises:
        UnknownNameError, ValidationError: as ``parse_strategy``; an empty list.
    """
    parts: list[str] = []
    for text in ([specs] if isinstance(specs, str) else list(specs)):
        depth, cur = 0, ""
        for ch in text:
            depth += ch == "("
            depth -= ch == ")"
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
    out = [parse_strategy(p.strip()) for p in parts if p.strip()]
    if not out:
        raise ValidationError("expected at least one strategy, e.g. --strategies rank,mtf,bandit,cal")
    if seed is not None:
        out = [s.with_params(seed=seed) if "seed" in s.params else s for s in out]
    return out


def load_oracle(qrels: Qrels | None, ref: str) -> tuple[str, dict[str, dict[str, int]]]:
    """An oracle: a TREC qrels file (an existing path wins) or a stored qrels version (of ``qrels``,
    the store's qrels versions; None: files only).

    Returns:
        (its name, topic_id -> doc_id -> grade).

    Raises:
        InputFormatError: the file breaks the qrels format.
        UnknownNameError: neither a file nor a stored version.
    """
    from workbench.formats import trec

    path = Path(ref)
    if path.is_file():
        return ref, trec.read_qrels(path)
    if qrels is None:
        raise UnknownNameError("qrels file or version", ref, [])
    return ref, qrels.get_qrels(ref)


def stored_topic_pools(
    pools: Pools, collections: Collections, pool_version: str, *, features: bool, rel: int = 1,
    priors: Mapping[str, Mapping[str, int]] | None = None,
) -> tuple[str, list[TopicPool]]:
    """The topics of a stored pool version and its ancestors, as strategies see them.

    Documents come in lineage order (root first), each version's by priority rank.

    Returns:
        (collection, topic pools).

    Raises:
        UnknownNameError: unknown pool version.
    """
    info = pools.get_pool(pool_version)
    lineage = pools.pool_lineage(pool_version)
    entries: list[tuple[str, str, int]] = []
    contributions: list[tuple[str, str, str, int]] = []
    base = 0
    for v in lineage:
        rows = pools.pool_entries(v)
        entries += [(e.topic_id, e.doc_id, base + e.priority_rank) for e in rows]
        base += 1 + max((e.priority_rank for e in rows), default=0)
        contributions += [(c.topic_id, c.doc_id, c.run_name, c.rank) for c in pools.pool_provenance(v)]
    queries = {t: topic.query for t, topic in collections.get_topics(info.collection).items()}
    feats = collection_features(collections, info.collection, info.collection_version) if features else None
    return info.collection, build_topic_pools(entries, contributions, queries=queries, rel=rel,
                                              features=feats, priors=priors)


def memory_topic_pools(
    pool: Pool, queries: Mapping[str, str], texts: Mapping[str, str] | None, *, rel: int = 1
) -> list[TopicPool]:
    """The topics of an in-memory pool (``pooling.pool.build_pool``), e.g. the demo's depth-100 pool."""
    feats = text_features(texts) if texts else None
    return build_topic_pools(
        [(e.topic_id, e.doc_id, e.priority_rank) for e in pool.entries],
        [(c.topic_id, c.doc_id, c.run_name, c.rank) for c in pool.provenance],
        queries=queries, rel=rel, features=feats,
    )


@dataclass(frozen=True)
class SimulationRun:
    """A simulation with what it ran on.

    Attributes:
        pool: the pool version name (or a description of an in-memory pool).
        oracle: the oracle's name (file path or qrels version).
        runs: the runs rescored.
        report: the pure layer's ``SimulationReport``.
        oracle_qrels: the oracle (for curves).
        seed: the seed given to the strategies (None = their own).
    """

    pool: str
    oracle: str
    runs: tuple[str, ...]
    report: SimulationReport
    oracle_qrels: Mapping[str, Mapping[str, int]]
    seed: int | None = None


def simulate_stored_pool(
    store: Store,
    pool_version: str,
    oracle: str,
    strategies: str | Sequence[str],
    *,
    budget: int | None = None,
    seed: int | None = None,
    measure: str = "R@20",
    shares: Sequence[float] = DEFAULT_SHARES,
    rel: int = 1,
    say: Say | None = None,
) -> SimulationRun:
    """``workbench simulate``: replay strategies on a stored pool version against an oracle.

    Args:
        store: the store.
        pool_version: the pool version (its ancestors included).
        oracle: a TREC qrels file or a stored qrels version name.
        strategies: comma-separated specs (``rank,mtf,bandit,cal``).
        budget: at most this many judgments per topic (None = whole pool).
        seed: seed of every randomised strategy (None = their default 0).
        measure: measure the runs are rescored with.
        shares: shares of the pool's relevant documents to report.
        rel: relevance threshold.
        say: progress lines (stderr at the CLI).

    Returns:
        The ``SimulationRun``.

    Raises:
        UnknownNameError: unknown pool, oracle or strategy.
        ValidationError: bad strategy parameters, budget or shares.
    """
    chosen = parse_strategies(strategies, seed=seed)
    info = store.pools.get_pool(pool_version)
    oracle_name, qrels = load_oracle(store.qrels, oracle)
    needs_features = any(s.name == "cal" for s in chosen)
    _c, pools = stored_topic_pools(store.pools, store.collections, pool_version, features=needs_features, rel=rel)
    run_names = sorted({r for v in store.pools.pool_lineage(pool_version) for r in store.pools.get_pool(v).runs})
    runs = {n: store.runs.get_run(n) for n in run_names if store.runs.has_run(n)}
    if say:
        say(f"[starting] simulate {len(chosen)} strategies on {pool_version} ({info.n_entries:,} documents in "
            f"this version, {len(pools)} topics) against {oracle_name}")
    report = _simulate(pools, qrels, chosen, budget=budget, shares=shares, runs=runs, measure=measure, say=say)
    return SimulationRun(pool_version, oracle_name, tuple(sorted(runs)), report, qrels, seed)


def _simulate(pools: Sequence[TopicPool], qrels: Mapping[str, Mapping[str, int]], chosen: Sequence[Strategy], *,
              budget: int | None, shares: Sequence[float], runs: Mapping[str, Mapping[str, Mapping[str, float]]],
              measure: str, say: Say | None) -> SimulationReport:
    import time

    started = {"t": time.monotonic()}

    def progress(strategy: str, done: int, total: int) -> None:
        if say and done == total:
            say(f"  {strategy}: {total} topics [elapsed {time.monotonic() - started['t']:.1f} s]")
            started["t"] = time.monotonic()

    return simulate(pools, qrels, chosen, budget=budget, shares=shares, runs=runs, measure=measure,
                    progress=progress)


def simulate_memory_pool(
    pool: Pool,
    runs: Mapping[str, Mapping[str, Mapping[str, float]]],
    oracle_name: str,
    oracle: Mapping[str, Mapping[str, int]],
    queries: Mapping[str, str],
    texts: Mapping[str, str],
    strategies: str | Sequence[str],
    *,
    label: str,
    budget: int | None = None,
    seed: int | None = None,
    measure: str = "R@20",
    rel: int = 1,
    say: Say | None = None,
) -> SimulationRun:
    """Replay strategies on an in-memory pool (the demo's depth-100 pool, never stored)."""
    chosen = parse_strategies(strategies, seed=seed)
    pools = memory_topic_pools(pool, queries, texts if any(s.name == "cal" for s in chosen) else None, rel=rel)
    report = _simulate(pools, oracle, chosen, budget=budget, shares=DEFAULT_SHARES, runs=runs,
                       measure=measure, say=say)
    return SimulationRun(label, oracle_name, tuple(sorted(runs)), report, oracle, seed)


def budget_qrels(run: SimulationRun) -> dict[tuple[str, str], dict[str, dict[str, int]]]:
    """(strategy, budget label) -> the qrels that strategy would have published at that budget:
    each topic's first n_t judged documents with the oracle's grades (``BudgetPoint.qrels``)."""
    return {(o.strategy, b.label): b.qrels(o.order, run.oracle_qrels)
            for o in run.report.strategies for b in o.budgets}


def write_budget_qrels(run: SimulationRun, folder: Path) -> list[Path]:
    """Write ``budget_qrels`` as TREC files ``<strategy>@<budget>.qrels`` (atomic writes;
    ``cal@90pct.qrels``, ``rank@whole_pool.qrels``).

    Returns:
        The files written.
    """
    import re

    from workbench.formats import trec

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for (strategy, label), qrels in budget_qrels(run).items():
        stem = f"{re.sub(r'[^A-Za-z0-9_.=-]+', '_', strategy).strip('_')}@{label.replace('%', 'pct')}"
        name = re.sub(r"[^A-Za-z0-9_.=@-]+", "_", stem) + ".qrels"
        path = folder / name
        trec.write_qrels(path, qrels)
        paths.append(path)
    return paths
