"""CLI commands: ``workbench ann-recall`` and ``workbench ann-sweep`` (approximate vector indexes).

``ann-recall`` measures a stored dense run against the exact run of the same
embeddings and metric (built on demand); ``ann-sweep`` builds one index kind
per setting of a parameter grid and tabulates ANN-recall@k, semantic R@k of the
approximate and the exact runs, and latency, with the diagnosis. Data goes to
stdout, progress to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import app, common, options
from workbench.cli.score import FORMATS, FormatOpt, MissingOpt, QrelsOpt, RelOpt

ModelOpt = Annotated[Path | None, typer.Option(
    help="Local sentence-transformers model folder (the runs' model). Default: the packaged all-MiniLM-L6-v2.")]


@app.command("ann-recall")
def ann_recall_cmd(
    run: Annotated[str, typer.Argument(help="A stored dense run (hnsw, ivf, or exact).")],
    k: Annotated[list[int] | None, typer.Option("--k", callback=options.count,
        help="Cutoff k of ANN-recall@k (repeatable). Default 10.")] = None,
    reference: Annotated[str | None, typer.Option(
        help="The exact run to compare with (one for every --k). Default: a stored exact run of the same model, "
             "similarity and collection version at least max(k)+1 deep, else one built now (<run>.exact).")] = None,
    model: ModelOpt = None,
    per_topic: Annotated[bool, typer.Option(help="List the topics with a missed neighbour or a tie at k.")] = False,
    fmt: FormatOpt = "table",
) -> None:
    """ANN-recall@k of a dense run: |approximate top-k ∩ exact top-k| / k per topic, macro-averaged.

    The denominator is the exact top-k of the same embeddings and metric, never qrels
    (that is R@k). Stored once per (run, reference, k). Example:
    workbench ann-recall dense-hnsw --k 10 --k 100
    """
    from workbench.reports.ann import render_ann_recall
    from workbench.reports.format import check_format
    from workbench.services.vectors.ann import ann_recall_at

    check_format(fmt)
    store = common.STATE.store(client="workbench ann-recall")
    ref, results = ann_recall_at(store, run, k or [10], reference=reference, model_path=model, say=common.info)
    common.out(render_ann_recall(run, ref, results, store.vectors.get_index_stats(run), fmt, per_topic=per_topic))


@app.command("ann-sweep")
def ann_sweep_cmd(
    collection: Annotated[str, typer.Option(help="The ingested collection to search (its latest version).")],
    qrels: QrelsOpt,
    index: Annotated[str, typer.Option(callback=options.choice("hnsw", "ivf"),
                                       help="Approximate index: hnsw or ivf.")] = "hnsw",
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="NAME=V[,V...] (repeatable): hnsw M, efConstruction, efSearch; ivf nlist, nprobe. "
                        "The product of the lists is swept; others take their defaults.")] = None,
    k: Annotated[int, typer.Option("--k", min=1, help="k of ANN-recall@k and R@k.")] = 10,
    depth: Annotated[int | None, typer.Option(
        callback=options.depth,
        help="Depth of each run (default k). HNSW searches with a beam of max(efSearch, depth).")] = None,
    model: ModelOpt = None,
    name_prefix: Annotated[str, typer.Option(callback=options.name("run"),
                                             help="Prefix of the stored runs' names.")] = "sweep",
    threads: Annotated[int | None, typer.Option(callback=options.count,
                                                help="faiss threads while building. Default: faiss's.")] = None,
    target: Annotated[float, typer.Option(callback=options.share,
                                          help="ANN-recall at which the diagnosis calls the index good.")] = 0.95,
    plot: Annotated[Path | None, typer.Option(
        help="Write the recall-against-QPS chart to this .png, .html, .svg or .json file.")] = None,
    rel: RelOpt = 1,
    missing: MissingOpt = "fail",
    fmt: FormatOpt = "table",
) -> None:
    """Sweep an approximate index: per setting ANN-recall@k, R@k of it and of exact search, latency, diagnosis.

    Every setting is stored as a run with its index stats; the exact reference is
    found or built. Example:
    workbench ann-sweep --collection cranfield --index hnsw --param efSearch=8,16,32,64,128 --qrels cranfield-v2
    """
    from pooling.retrievers.ann import parse_param_values
    from workbench.reports.ann import render_sweep, sweep_chart
    from workbench.reports.charts import save_chart
    from workbench.reports.format import check_format
    from workbench.services.vectors.ann import ann_sweep

    check_format(fmt)
    grid = parse_param_values(param or [])
    store = common.STATE.store(client="workbench ann-sweep")
    sweep = ann_sweep(store, collection, index, grid, qrels, k=k, depth=depth, name_prefix=name_prefix,
                      model_path=model, threads=threads, rel=rel, missing=missing, ann_target=target,
                      say=common.info)
    common.out(render_sweep(sweep, fmt))
    if plot is not None:
        save_chart(sweep_chart(sweep), plot)
        common.info(f"wrote {plot}")


__all__ = ["FORMATS", "ann_recall_cmd", "ann_sweep_cmd"]
