"""CLI commands: ``workbench stages`` and ``workbench depth-sweep`` (two-stage pipelines).

``stages`` scores stored runs stage by stage (recall named by the stage it
measures, the permutation check, the reranker's contribution, the stock, the
diagnosis); ``depth-sweep`` reranks a candidate run at several depths and
measures recall and cost at each. Data goes to stdout, progress to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import app, common, options
from workbench.cli.rerank import (
    BatchOpt,
    CrossOpt,
    DeviceOpt,
    ModelDirOpt,
    ModelOpt,
    ThreadsOpt,
    reranker_spec,
)
from workbench.cli.score import FORMATS, FormatOpt, MissingOpt, QrelsOpt, RelOpt

FinalKOpt = Annotated[int, typer.Option("--final-k", min=1, help="k of the final stage: R@k and nDCG@k.")]


@app.command("stages")
def stages(
    runs: Annotated[list[str], typer.Argument(
        help="Stored runs. A rerank run is reported with its candidate run (from its lineage); any other run "
             "as a single stage whose own top D are the candidates.")],
    qrels: QrelsOpt,
    final_k: FinalKOpt = 10,
    depth: Annotated[int | None, typer.Option(
        callback=options.depth,
        help="D for runs that rerank nothing (default 50); a rerank run uses its own candidate depth.")] = None,
    recall_threshold: Annotated[float, typer.Option(
        callback=options.share, help="Diagnosis: R@D at or above this is high (0..1).")] = 0.8,
    ndcg_threshold: Annotated[float, typer.Option(
        callback=options.share, help="Diagnosis: nDCG@k at or above this is high (0..1).")] = 0.5,
    rel: RelOpt = 1,
    missing: MissingOpt = "fail",
    fmt: FormatOpt = "table",
) -> None:
    """Recall per pipeline stage: R@D [candidates], R@k [final], nDCG@k [final], with ceilings, macro and micro.

    Checks that reranking left R@D unchanged (a permutation cannot change what is in
    the list), gives the reranker's contribution R@k(final) - R@k(candidates) and
    the stock R@D - R@k any reordering could promote, and diagnoses each run:
    ranking problem (R@D high, nDCG@k low), candidate generation problem (R@D low,
    nDCG@k high), check ingestion (both low) or stop (both high), with per-topic
    counts. Example: workbench stages bm25+minilm --qrels cranfield-v2
    """
    from workbench.reports.format import check_format
    from workbench.reports.stages import render_stages
    from workbench.scoring.stages import Thresholds
    from workbench.services.runs.stages import stage_reports

    check_format(fmt)
    result = stage_reports(runs, qrels, open_store=lambda: common.STATE.store(client="workbench stages"),
                           final_k=final_k, depth=depth, thresholds=Thresholds(recall_threshold, ndcg_threshold),
                           rel=rel, missing=missing, progress=common.info)
    common.out(render_stages(result, fmt))


@app.command("depth-sweep")
def depth_sweep_cmd(
    candidates: Annotated[str, typer.Option(
        help="The stored candidate run. A D deeper than the run is capped at its depth (and said so).")],
    qrels: QrelsOpt,
    depths: Annotated[str, typer.Option(
        help="Candidate depths D, comma-separated; those deeper than the candidate run are capped at its depth.")
    ] = "10,50,100,200",
    final_k: FinalKOpt = 10,
    model: ModelOpt = None,
    cross_encoder: CrossOpt = None,
    batch_size: BatchOpt = None,
    device: DeviceOpt = "cpu",
    threads: ThreadsOpt = 1,
    model_dir: ModelDirOpt = None,
    repeat: Annotated[int, typer.Option(
        min=1, help="Measurement rounds, interleaved across depths; a topic's cost is the median.")] = 1,
    cost_topics: Annotated[int, typer.Option(
        min=0, help="Topics the cost is measured on, evenly spaced (0 = every topic); the cost reranks from text "
                    "(a bi-encoder encodes the query and the D candidates inside each topic's timed block), so "
                    "each topic costs about D document encodings per depth and round.")] = 20,
    plot: Annotated[Path | None, typer.Option(
        help="Write the recall-and-cost chart to this .png, .html, .svg or .json file.")] = None,
    rel: RelOpt = 1,
    missing: MissingOpt = "fail",
    fmt: FormatOpt = "table",
) -> None:
    """Rerank the top D of a run for each D: R@D of the candidates, R@k after reranking, measured cost.

    The cost per topic (p50, p95, mean ms) is measured, not computed, reranking from text:
    a bi-encoder encodes the query and the D candidates inside each topic's timed block
    (the "cached ms" column is the same rerank with cached document vectors); the table
    gives the recall bought per added millisecond and a fit of how cost scales with depth.
    Recall is over every topic. Nothing is stored. Example:
    workbench depth-sweep --candidates rrf --depths 10,50,100 --qrels cranfield-v2 --plot out/depth.png
    """
    from workbench.formats.io import check_writable
    from workbench.reports.charts import CHART_SUFFIXES, save_chart
    from workbench.reports.format import check_format
    from workbench.reports.stages import depth_chart, render_sweep
    from workbench.scoring.depth import parse_depths
    from workbench.services.runs.depth_sweep import depth_sweep

    check_format(fmt)
    if plot is not None:  # before minutes of reranking, not after
        check_writable(plot, what="--plot", suffixes=CHART_SUFFIXES)
    sweep = depth_sweep(candidates, parse_depths(depths), qrels,
                        open_store=lambda: common.STATE.store(client="workbench depth-sweep"), final_k=final_k,
                        spec=reranker_spec(model, cross_encoder, batch_size, device, threads, model_dir),
                        repeat=repeat, cost_topics=cost_topics, rel=rel, missing=missing, progress=not common.STATE.quiet, say=common.info)
    common.out(render_sweep(sweep, fmt))
    if plot is not None:
        save_chart(depth_chart(sweep), plot)
        common.info(f"wrote {plot}")


__all__ = ["FORMATS", "depth_sweep_cmd", "stages"]
