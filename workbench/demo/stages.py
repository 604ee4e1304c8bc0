"""The demo's two-stage pipeline step: the four-run table and the depth table (issue 10).

On the demo's collection, against its full reference judgments (the deep
candidate lists reach far below the depth-20 pool, so the pooled qrels would
count every relevant document the pool never saw as non-relevant):

1. BM25, dense (all-MiniLM-L6-v2) and their RRF hybrid at depth 200
   (``bm25-d200``, ``dense-d200``, ``hybrid-d200``);
2. each of BM25 and the hybrid with its top 50 reranked by the MiniLM
   bi-encoder (``workbench run rerank``; stored with lineage and measured cost);
3. the four runs stage by stage (``services.runs.stages.stage_reports``): R@10,
   R@50 of the candidate stage, nDCG@10, and the check that reranking left R@50
   unchanged;
4. a depth sweep of the hybrid at 10, 50, 100 and 200 with the measured
   rerank cost per topic (``services.runs.depth_sweep``) and the fit of cost
   against depth. The cost is that of reranking from text (the query and the D
   candidates encoded inside each topic's timed block), measured on
   ``cost_topics`` evenly spaced topics (encoding 360 candidates per topic and
   round takes seconds on one CPU thread); recall is over every topic. The cost
   with cached document vectors (flat in D) is the labelled ``cached ms`` column.

Idempotent like the rest of the demo: stored runs are reused; the sweep's
costs are measured again on every call (cost is a measurement, not a fact).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pooling.retrievers.dense import Encoder
    from workbench.services.runs.depth_sweep import DepthSweep
    from workbench.services.runs.stages import StagesResult
    from workbench.store import Store

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass(frozen=True)
class PipelineOptions:
    """Settings of the pipeline step.

    Attributes:
        collection: the collection.
        qrels: the qrels version scored against (the full reference judgments).
        run_depth: depth of the candidate runs (>= the deepest sweep depth).
        rerank_depth: D of the four-run table.
        final_k: k of R@k and nDCG@k.
        depths: the depth sweep's depths.
        repeat: measurement rounds of the sweep (interleaved; median per topic).
        cost_topics: topics the sweep's cost from text is measured on (evenly
            spaced; 0 = every topic).
        encoder: a bi-encoder to use instead of the packaged MiniLM (tests).
        model_path: a local sentence-transformers folder instead of the packaged MiniLM.
        threads: torch CPU threads of the dense run and the reranker; None = torch's
            default for the dense run and 1 for the reranker (its per-topic latency
            is what the depth table measures, and with 2 threads on shared cores
            OpenMP contention, not the model, dominates it: bench/results/rerank.md).
        plot_dir: where the depth chart is written (None = no chart).
    """

    collection: str
    qrels: str
    run_depth: int = 200
    rerank_depth: int = 50
    final_k: int = 10
    depths: tuple[int, ...] = (10, 50, 100, 200)
    repeat: int = 1
    cost_topics: int = 5
    encoder: Encoder | None = None
    model_path: Path | None = None
    threads: int | None = None
    plot_dir: Path | None = None


@dataclass
class PipelineDemo:
    """What the pipeline step produced, full precision.

    Attributes:
        runs: the four runs of the table, in table order (BM25, BM25 + rerank,
            hybrid, hybrid + rerank).
        stages: their stage reports.
        sweep: the hybrid's depth sweep.
        plots: chart files written.
    """

    runs: list[str] = field(default_factory=list)
    stages: StagesResult | None = None
    sweep: DepthSweep | None = None
    plots: list[Path] = field(default_factory=list)


def run_pipeline_demo(store: Store, options: PipelineOptions, say: Say = _quiet) -> PipelineDemo:
    """Produce (or reuse) the runs, then score the four pipelines and sweep the hybrid's depth.

    Raises:
        WorkbenchError: as the services it calls.
    """
    from workbench.services.runs.depth_sweep import depth_sweep
    from workbench.services.runs.pooling import (
        DenseRunRequest,
        make_bm25_run,
        make_dense_run,
        make_fused_run,
    )
    from workbench.services.runs.stages import (
        RerankerSpec,
        make_rerank_run,
        make_reranker,
        stage_reports,
    )

    d, c = options.run_depth, options.collection
    bm25, dense, hybrid = f"bm25-d{d}", f"dense-d{d}", f"hybrid-d{d}"

    def ensure(name: str, make: Callable[[], object]) -> None:
        if store.runs.has_run(name):
            say(f"run {name}: already stored, reused")
        else:
            make()

    ensure(bm25, lambda: make_bm25_run(store, c, bm25, depth=d, say=say,
                                       description="BM25 (k1=1.2, b=0.75), candidates of the pipeline demo"))
    request = DenseRunRequest(c, dense, depth=d, description="all-MiniLM-L6-v2 cosine, candidates of the pipeline demo",
                              model_path=options.model_path, threads=options.threads)
    ensure(dense, lambda: make_dense_run(store, request, encoder=options.encoder, say=say))
    ensure(hybrid, lambda: make_fused_run(store.collections, store.runs, hybrid, [bm25, dense], depth=d, say=say,
                                          description=f"RRF(k=60) of {bm25} and {dense}"))
    spec = RerankerSpec(model_path=options.model_path, encoder=options.encoder, threads=options.threads or 1)
    reranker = make_reranker(spec, cache=store.vectors)  # one model for every rerank of the step
    names = []
    for cand in (bm25, hybrid):
        name = f"{cand}+{reranker.label}"
        ensure(name, lambda cand=cand, name=name: make_rerank_run(  # type: ignore[misc]
            store.collections, store.runs, store.vectors, cand, options.rerank_depth, name, reranker=reranker, say=say,
            description=f"top {options.rerank_depth} of {cand} reranked by {reranker.label}"))
        names += [cand, name]
    out = PipelineDemo(runs=names)
    say(f"[pipelines] stage-named recall of {', '.join(names)} on {options.qrels}")
    out.stages = stage_reports(names, options.qrels, open_store=lambda: store, final_k=options.final_k,
                               depth=options.rerank_depth)
    say(f"[pipelines] depth sweep of {hybrid}: {', '.join(map(str, options.depths))} (rerank cost measured)")
    out.sweep = depth_sweep(hybrid, options.depths, options.qrels, open_store=lambda: store,
                            final_k=options.final_k, reranker=reranker, repeat=options.repeat,
                            cost_topics=options.cost_topics, say=say)
    if options.plot_dir is not None:
        from workbench.reports.charts import save_chart
        from workbench.reports.stages import depth_chart

        options.plot_dir.mkdir(parents=True, exist_ok=True)
        chart = depth_chart(out.sweep)
        for suffix in (".html", ".png"):
            path = options.plot_dir / f"depth-sweep-{hybrid}{suffix}"
            save_chart(chart, path)
            out.plots.append(path)
    return out
