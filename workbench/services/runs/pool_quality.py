"""Pool quality over any stored pool and qrels: leave-one-run-out reusability
and pooled-versus-complete bias (``workbench pool reusability``, ``workbench
pool bias``, and the demo's steps 7 and 8).

The analysis is pure (``pooling.reusability``); this module gathers its inputs
from the store: the runs of a pool version's lineage (each version's runs at
that version's depth define who contributed what), and the qrels versions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pooling.reusability import (
    BiasReport,
    LeaveOneOut,
    contributors_at_depth,
    leave_one_run_out,
    pool_bias,
)
from workbench.errors import ValidationError
from workbench.scoring.measures import parse_measure

if TYPE_CHECKING:
    from workbench.store.pools import Pools
    from workbench.store.qrels import Qrels
    from workbench.store.runs import Runs as StoredRuns

Runs = Mapping[str, Mapping[str, Mapping[str, float]]]


@dataclass(frozen=True)
class ReusabilityReport:
    """Leave-one-run-out on one pool and qrels version.

    Attributes:
        pool_version: the pool version (its ancestors included).
        qrels_version: the qrels judged from it.
        measure: the measure's canonical name (``R@k``).
        rows: one per pooled run.
        missing_runs: pooled runs that are not stored (left out of the analysis).
    """

    pool_version: str
    qrels_version: str
    measure: str
    rows: tuple[LeaveOneOut, ...]
    missing_runs: tuple[str, ...] = ()


def lineage_runs(pools: Pools, stored_runs: StoredRuns, pool_version: str) -> tuple[dict[str, dict[str, dict[str, float]]],
                                                                 dict[str, dict[str, set[str]]], list[str]]:
    """The stored runs of a pool lineage, who contributed each pooled document, and the pooled runs that are
    not stored.

    A run contributed a document when it ranks it within its pool version's depth (each version's runs at
    that version's depth, ``contributors_at_depth``) and the document is in the pool: the pool's topics (a
    run's other topics, e.g. those ``pool build --topics judged`` left out, count nothing) and its documents
    (those a per-topic budget cut count nothing). So a root pool's unique documents per run are those of
    ``workbench pool stats``; for a pool with ancestors they are counted over the whole lineage (``pool
    stats`` counts one version).
    """
    runs: dict[str, dict[str, dict[str, float]]] = {}
    contributors: dict[str, dict[str, set[str]]] = {}
    missing: list[str] = []
    pooled = pools.pool_documents(pool_version)  # topic -> documents of the lineage
    for v in pools.pool_lineage(pool_version):
        info = pools.get_pool(v)
        mine = {}
        for name in info.runs:
            if not stored_runs.has_run(name):
                missing.append(name)
                continue
            runs.setdefault(name, stored_runs.get_run(name))
            mine[name] = runs[name]
        for t, docs in contributors_at_depth(mine, info.depth).items():
            in_pool = pooled.get(t, set())
            for d, who in docs.items():
                if d in in_pool:
                    contributors.setdefault(t, {}).setdefault(d, set()).update(who)
    return runs, contributors, sorted(set(missing))


def reusability(pools: Pools, stored_runs: StoredRuns, qrels_versions: Qrels, pool_version: str, qrels_version: str,
                *, k: int = 20, rel: int = 1) -> ReusabilityReport:
    """``workbench pool reusability``: each pooled run rescored without the documents only it contributed.

    Raises:
        UnknownNameError: unknown pool or qrels version.
        ValidationError: fewer than two stored runs in the pool, or k < 1.
    """
    if k < 1:
        raise ValidationError(f"expected --k >= 1, found {k}")
    measure = parse_measure(f"R@{k}")
    qrels = qrels_versions.get_qrels(qrels_version)
    runs, contributors, missing = lineage_runs(pools, stored_runs, pool_version)
    if len(runs) < 2:
        raise ValidationError(
            f"pool {pool_version}: leave-one-run-out needs at least 2 stored runs, found {len(runs)}"
            + (f" (not stored: {', '.join(missing)})" if missing else "")
        )
    rows = leave_one_run_out(qrels, contributors, runs, measure, rel=rel)
    return ReusabilityReport(pool_version, qrels_version, str(measure), tuple(rows), tuple(missing))


@dataclass(frozen=True)
class BiasResult:
    """Pooled-versus-complete bias of the runs scored.

    Attributes:
        pooled_version: the pooled qrels version.
        full_version: the complete qrels version.
        report: per run, pooled and full values and the gap, on the same topics.
    """

    pooled_version: str
    full_version: str
    report: BiasReport


def bias(pools: Pools, stored_runs: StoredRuns, qrels: Qrels, pooled_version: str, full_version: str, *,
         k: int = 20, rel: int = 1, runs: Runs | None = None) -> BiasResult:
    """``workbench pool bias``: every run's R@k on the pooled and on the full qrels, same topics.

    Args:
        pools: the store's pools.
        stored_runs: the store's runs.
        qrels: the store's qrels versions.
        pooled_version: a qrels version judged from a pool.
        full_version: complete (or fuller) judgments, e.g. a collection's reference qrels.
        k: the cutoff of R@k.
        rel: minimum grade of a relevant document.
        runs: the runs to score (default: the runs of the pooled version's pool
            lineage, else every stored run of its collection).

    Raises:
        UnknownNameError: unknown qrels version.
        ValidationError: k < 1 or no run to score.
    """
    if k < 1:
        raise ValidationError(f"expected --k >= 1, found {k}")
    pooled = qrels.get_qrels(pooled_version)
    full = qrels.get_qrels(full_version)
    if runs is None:
        info = qrels.get_qrels_info(pooled_version)
        if info.pool_version:
            runs = lineage_runs(pools, stored_runs, info.pool_version)[0]
        else:
            runs = {r.name: stored_runs.get_run(r.name) for r in stored_runs.list_runs(info.collection)}
    if not runs:
        raise ValidationError(f"no stored run to score on {pooled_version} and {full_version}")
    return BiasResult(pooled_version, full_version, pool_bias(pooled, full, runs, f"R@{k}", rel=rel))
