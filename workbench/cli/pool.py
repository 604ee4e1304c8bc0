"""CLI commands: ``workbench pool build|extend|stats|list|show``.

A pool is the depth-k union of chosen runs (the TREC method) with provenance
(which runs contributed each document, at which ranks) and a judging priority
(RRF over the contributing runs). Pool versions are immutable; ``pool extend``
makes a child version holding only the new runs' pool-novel documents.
Data goes to stdout; progress and messages go to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from workbench import jsonout
from workbench.cli import app, common, options
from workbench.cli.lazy import DefaultCommandGroup
from workbench.cli.runs import FORMATS, render
from workbench.errors import shown
from workbench.ranking import natural_key


class _BuildByDefault(DefaultCommandGroup):
    """``workbench pool RUN... --depth 20`` means ``workbench pool build RUN... --depth 20``."""

    default_command = "build"


pool_app = typer.Typer(
    cls=_BuildByDefault,
    help="Pools: build a depth-k pool of runs (`workbench pool RUN... --depth 20` is short for "
         "`workbench pool build ...`), extend it with new runs, show statistics, list versions.",
    no_args_is_help=True,
)
app.add_typer(pool_app, name="pool")

FmtOpt = Annotated[str, typer.Option("--format", callback=options.choice(*FORMATS),
                                                 help=f"Output format: {', '.join(FORMATS)}.")]
BudgetOpt = Annotated[int | None, typer.Option(
    callback=options.count, help="Per-topic cap: keep only this many documents per topic, highest priority first.")]
RrfOpt = Annotated[float, typer.Option(callback=options.rrf_k,
                                       help="k of the RRF judging priority, sum of 1/(k + rank), 0..1e6.")]
TopicsOpt = Annotated[str, typer.Option(
    help="Topics to pool: all; judged (topics with an entry in any qrels version of the collection, or a "
         "judgment); judged:QRELS (topics of that qrels version); or a file of topic ids, one per line.")]


def _topics(store: Any, runs: list[str], spec: str) -> Any:
    """The ``--topics`` selection for the collection of the first run (None for ``all``)."""
    if spec == "all":
        return None
    from workbench.services.runs.pool_topics import select_topics

    return select_topics(store.collections, store.pools, store.qrels, store.runs.get_run_info(runs[0]).collection, spec)


@pool_app.command("build")
def build(
    runs: Annotated[list[str], typer.Argument(help="Stored runs to pool (one collection version).")],
    depth: Annotated[int, typer.Option(callback=options.depth,
                                       help="Pool depth k: the top k documents of each run per topic.")] = 20,
    name: Annotated[str | None, typer.Option(
        callback=options.name("pool"),
        help="Name of the pool version. Default: <collection>-pool-v<N> (or the existing identical pool).")] = None,
    budget: BudgetOpt = None,
    rrf_k: RrfOpt = 60.0,
    topics: TopicsOpt = "all",
) -> None:
    """Build a pool version: depth-k union of the runs, with provenance and judging priority.

    Re-running the same command reuses the identical stored pool (same content
    hash) instead of writing a copy. Example: workbench pool build bm25 dense hybrid --depth 20
    """
    from workbench.services.runs.pooling import build_pool

    store = common.STATE.store(client="workbench pool build")
    selection = _topics(store, runs, topics)
    result = build_pool(store.pools, store.runs, runs, depth=depth, name=name, budget=budget, rrf_k=rrf_k, topics=selection,
                        say=common.info)
    i = result.info
    verb = "stored" if result.created else "unchanged (identical pool exists)"
    common.out(f"pool {i.pool_version} {verb}: {i.n_entries:,} documents, {i.n_topics} topics, depth {i.depth}, "
               f"runs {', '.join(i.runs)}; hash {i.content_hash[:12]}")
    if selection is not None and selection.left_out:
        shown = ", ".join(selection.left_out[:20]) + (" ..." if len(selection.left_out) > 20 else "")
        common.info(f"not pooled: {len(selection.left_out):,} topic(s) outside --topics {topics} ({shown})")


@pool_app.command("extend")
def extend(
    runs: Annotated[list[str], typer.Argument(help="New stored runs to add to the pool.")],
    from_: Annotated[str | None, typer.Option(
        "--from", help="Pool version to extend. Default: the newest version of the collection's pool lineage; "
                       "required when the collection has several (they are listed).")] = None,
    depth: Annotated[int | None, typer.Option(callback=options.depth,
                                              help="Depth k for the new runs. Default: the parent's depth.")] = None,
    name: Annotated[str | None, typer.Option(callback=options.name("pool"),
        help="Name of the child version. Default: <collection>-pool-v<N>.")] = None,
    budget: BudgetOpt = None,
    rrf_k: RrfOpt = 60.0,
    exclude_qrels: Annotated[list[str] | None, typer.Option(
        help="Qrels version whose documents count as already judged (repeatable).")] = None,
    topics: TopicsOpt = "all",
    fmt: FmtOpt = "table",
) -> None:
    """Extend a pool with new runs: a child version with only their pool-novel documents.

    Pool-novel: in a new run's top k, not in the pool (or its ancestors), not judged.
    Prints, per topic and in total, how many pool-novel documents each new run brings.
    Example: workbench pool extend bm25-k09 --from cranfield-pool-v1
    """
    from workbench.services.runs.pooling import extend_pool

    store = common.STATE.store(client="workbench pool extend")
    result = extend_pool(store.pools, store.runs, store.qrels, runs, parent=from_, depth=depth, name=name,
                         budget=budget, rrf_k=rrf_k, exclude_qrels=exclude_qrels or (),
                         topics=_topics(store, runs, topics), say=common.info)
    ext = result.extension
    names = sorted(ext.novel)
    shown_topics = sorted({t for per in ext.novel.values() for t in per}, key=natural_key)
    delta = ext.pool.documents()
    rows = [{"topic": t, **{r: ext.novel[r].get(t, 0) for r in names}, "new_in_pool": len(delta.get(t, ()))}
            for t in shown_topics]
    rows.append({"topic": "total", **ext.novel_totals, "new_in_pool": ext.pool.n_entries})
    rows.append({"topic": "unique", **ext.unique_novel, "new_in_pool": ""})
    render(rows, ["topic", *names, "new_in_pool"], fmt)
    if result.info is None:
        common.info(f"nothing new: pool {result.parent} is unchanged")
    else:
        verb = "stored" if result.created else "unchanged (identical child exists)"
        common.info(f"pool {result.info.pool_version} {verb}: child of {result.parent}, "
                    f"{result.info.n_entries:,} new documents over {result.info.n_topics} topics")


def _run_names(values: list[str]) -> list[str]:
    """``--runs a --runs b`` and ``--runs a,b`` alike: the run names in order, blanks dropped."""
    return [r.strip() for v in values for r in v.split(",") if r.strip()]


@pool_app.command("sample")
def sample(
    name: Annotated[str, typer.Argument(callback=options.name("pool"),
                                        help="Name of the sample pool version (as pool build --name).")],
    runs: Annotated[list[str], typer.Option(
        "--runs", help="Stored runs of one collection version whose depth-D pool is sampled; repeatable or "
                       "comma-separated (--runs bm25,dense --runs rrf).")],
    depth: Annotated[int, typer.Option(callback=options.depth,
                                       help="Pool depth D: the frame is the union of the runs' top D.")],
    strata: Annotated[str, typer.Option(
        help="Strata by best rank across the runs with their inclusion rates, LO-HI:RATE,... covering 1..D, "
             "e.g. 1-10:1.0,11-30:0.3,31-100:0.1.")],
    seed: Annotated[int, typer.Option(min=0, help="Random seed (>= 0): the same runs, design and seed draw the same sample.")],
    outside: Annotated[float, typer.Option(
        callback=options.share,
        help="Rate of the outside stratum: documents of the collection no run ranked within D, sampled "
             "uniformly, so that estimates see relevant documents no pooled run found (0: none).")] = 0.0,
    budget: Annotated[int | None, typer.Option(
        callback=options.count,
        help="Judgments in all: the strata rates (and --outside) are read as relative weights and scaled "
             "by one factor to draw at most this many (docs/sampling.md).")] = None,
    topics: TopicsOpt = "all",
) -> None:
    """Draw a stratified random sample of the runs' depth-D pool (and of the collection outside it) as a pool
    version of kind sample: judged like any pool (assign, the Judge page, publish); a qrels version published
    from it is scored with estimates and intervals (workbench score --qrels). Each sampled document's stratum
    and inclusion probability are stored with it, fixed before any judgment.
    Example: workbench pool sample cranfield-s1 --runs bm25,dense,rrf --depth 100
    --strata 1-10:1.0,11-30:0.3,31-100:0.1 --outside 0.02 --seed 7"""
    from workbench.errors import UsageError
    from workbench.services.runs.sampling import design_of, sample_pool

    names = _run_names(runs)
    if not names:
        raise UsageError("--runs: expected at least one stored run name, found none")
    with options.usage_errors():  # --strata against --depth: a usage error naming the option
        design = design_of(depth, strata, seed=seed, outside=outside)
    store = common.STATE.store(client="workbench pool sample")
    selection = _topics(store, names, topics)
    result = sample_pool(store.pools, store.runs, store.collections, name, names, design, budget=budget,
                         topics=selection, say=common.info)
    s, i = result.sample, result.info
    verb = "stored" if result.created else "unchanged (identical sample exists)"
    inside = sum(1 for d in s.docs if d.best_rank > 0)
    out_of = f", {s.n_sampled - inside:,} from outside the pool" if s.design.outside_rate else ""
    common.out(f"sample pool {i.pool_version} {verb}: {s.n_sampled:,} documents to judge ({inside:,} of the "
               f"{result.frame_size:,} pooled{out_of}), {i.n_topics} topics, runs {', '.join(i.runs)}; "
               f"hash {i.content_hash[:12]}")
    common.out(f"design: {s.design.describe()}")
    totals: dict[str, list[int]] = {}
    for c in s.counts:
        t = totals.setdefault(c.stratum, [0, 0])
        t[0] += c.population
        t[1] += c.sampled
    render([{"stratum": st, "population": n, "sampled": m, "share": f"{m / n:.3f}" if n else "-"}
            for st, (n, m) in totals.items()], ["stratum", "population", "sampled", "share"], "table")


@pool_app.command("stats")
def stats(
    pool: Annotated[str, typer.Argument(help="A pool version.")],
    table: Annotated[str, typer.Option(
        help="Which table: runs (contributions and unique contributions per run), topics (pool size "
             "per topic) or overlap (run-by-run shared documents).")] = "runs",
    fmt: FmtOpt = "table",
) -> None:
    """Pool statistics of one version: per-run contributions, sizes per topic, run overlap."""
    from workbench.errors import UsageError
    from workbench.services.runs.pooling import pool_stats

    store = common.STATE.store(client="workbench pool stats")
    s = pool_stats(store.pools, pool)
    info = store.pools.get_pool(pool)
    common.info(f"pool {pool}: {s.total:,} documents over {len(s.size_per_topic)} topics, depth {info.depth}"
                + (f", child of {info.parent_version}" if info.parent_version else ""))
    if table == "runs":
        render([{"run": r, "contributed": s.contributed[r], "unique": s.unique[r]} for r in s.runs],
               ["run", "contributed", "unique"], fmt)
    elif table == "topics":
        render([{"topic": t, "documents": n} for t, n in s.size_per_topic.items()], ["topic", "documents"], fmt)
    elif table == "overlap":
        render([{"run": a, **s.overlap[a]} for a in s.runs], ["run", *s.runs], fmt)
    else:
        raise UsageError(f"expected --table runs, topics or overlap, found {shown(table)}")


@pool_app.command("list")
def list_(
    collection: Annotated[str | None, typer.Option(help="Only this collection's pools.")] = None,
    fmt: FmtOpt = "table",
) -> None:
    """List pool versions, oldest first; kind: depth-k union, or sample (workbench pool sample)."""
    store = common.STATE.store(client="workbench pool list")
    rows = [{"pool": p.pool_version, "collection": p.collection, "parent": p.parent_version,
             "depth": p.depth, "topics": p.n_topics, "documents": p.n_entries, "runs": ",".join(p.runs),
             "hash": p.content_hash[:12], "created": p.created_at.isoformat(timespec="seconds"), "kind": p.kind}
            for p in store.pools.list_pools(collection)]
    render(rows, ["pool", "collection", "parent", "depth", "topics", "documents", "runs", "hash", "created", "kind"],
           fmt)


@pool_app.command("show")
def show(
    pool: Annotated[str, typer.Argument(help="A pool version.")],
    topic: Annotated[str | None, typer.Option(help="Only this topic.")] = None,
    fmt: FmtOpt = "table",
) -> None:
    """The entries of one pool version in judging order, with provenance (run:rank)."""
    store = common.STATE.store(client="workbench pool show")
    prov: dict[tuple[str, str], list[str]] = {}
    for c in store.pools.pool_provenance(pool):
        prov.setdefault((c.topic_id, c.doc_id), []).append(f"{c.run_name}:{c.rank}")
    rows = [{"topic": e.topic_id, "priority_rank": e.priority_rank, "doc": e.doc_id, "priority": e.priority,
             "best_rank": e.best_rank or None, "n_runs": e.n_runs,  # best rank 0: no run ranked it (outside stratum)
             "runs": " ".join(prov.get((e.topic_id, e.doc_id), []))}
            for e in store.pools.pool_entries(pool) if topic is None or e.topic_id == topic]
    columns = ["topic", "priority_rank", "doc", "priority", "best_rank", "n_runs", "runs"]
    if store.pools.get_pool(pool).is_sample:  # a sample's documents: their stratum and inclusion probability
        _info, drawn = store.pools.read_sample(pool)
        by = {(d.topic_id, d.doc_id): d for d in drawn.docs}
        for r in rows:
            d = by[(str(r["topic"]), str(r["doc"]))]
            r["stratum"], r["inclusion"] = d.stratum, d.inclusion
        columns += ["stratum", "inclusion"]
    render(rows, columns, fmt)


@pool_app.command("files")
def files(
    run_files: Annotated[list[Path], typer.Argument(help="TREC or Parquet run files (named by file stem).")],
    depth: Annotated[int, typer.Option(callback=options.depth, help="Pool depth k.")] = 20,
    budget: BudgetOpt = None,
    rrf_k: RrfOpt = 60.0,
    fmt: FmtOpt = "tsv",
) -> None:
    """Pool TREC or Parquet run files directly, without the store; prints entries with provenance.

    The bulk path (one DuckDB query parses all files). Nothing is stored.
    """
    from workbench.services.runs.pooling import pool_from_files

    p = pool_from_files(run_files, depth, budget=budget, rrf_k=rrf_k).to_pool()
    prov: dict[tuple[str, str], list[str]] = {}
    for c in p.provenance:
        prov.setdefault((c.topic_id, c.doc_id), []).append(f"{c.run_name}:{c.rank}")
    common.info(f"pool of {len(p.runs)} run files at depth {depth}: {p.n_entries:,} documents, "
                f"{p.n_topics} topics; hash {p.content_hash[:12]}; params {jsonout.dumps(dict(p.params))}")
    render([{"topic": e.topic_id, "priority_rank": e.priority_rank, "doc": e.doc_id, "priority": e.priority,
             "best_rank": e.best_rank, "n_runs": e.n_runs, "runs": " ".join(prov[(e.topic_id, e.doc_id)])}
            for e in p.entries], ["topic", "priority_rank", "doc", "priority", "best_rank", "n_runs", "runs"], fmt)
