"""CLI command: ``workbench demo`` (the main job, end to end)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import app, common
from workbench.errors import ValidationError

SAMPLES = {"cranfield": Path(__file__).resolve().parents[2] / "sample_corpus" / "cranfield"}


@app.command("demo")
def demo(
    corpus: Annotated[str, typer.Argument(help="'cranfield' (the bundled sample) or a collection folder with qrels.reference.txt.")] = "cranfield",
    ui: Annotated[bool, typer.Option("--ui/--no-ui", help="Start the judging UI on the same store afterwards.")] = False,
    port: Annotated[int, typer.Option(help="Port of the UI (with --ui).")] = 8501,
    run_depth: Annotated[int, typer.Option(help="Documents per topic of each run.")] = 100,
    pool_depth: Annotated[int, typer.Option(help="Pool depth k.")] = 20,
    plots: Annotated[Path, typer.Option(help="Folder for the recall-curve plots.")] = Path("out/plots"),
    threads: Annotated[int | None, typer.Option(help="torch CPU threads for encoding (default: torch's).")] = None,
    simulate: Annotated[bool, typer.Option(
        "--simulate/--no-simulate",
        help="End with the judging simulation (rank, mtf, bandit, cal on the depth-100 pool; a few minutes).",
    )] = True,
) -> None:
    """Run the whole workflow non-interactively: ingest, BM25/dense/RRF runs, pool v1, judge it with the
    reference judgments as one assessor, publish qrels v1, score; a new run arrives: pool v2 (delta only),
    judge, publish v2, rescore; pool bias against the full judgments; leave-one-run-out. Prints the report.
    Re-running it reuses everything already stored."""
    from workbench.demo.render_workflow import render_workflow
    from workbench.demo.workflow import WorkflowOptions, run_workflow
    from workbench.formats.io import check_writable_folder

    folder = SAMPLES.get(corpus, Path(corpus))
    if not folder.is_dir():
        raise ValidationError(f"{corpus}: expected 'cranfield' or a collection folder, found "
                              f"{'a file' if folder.exists() else 'no such folder'}")
    # Output folders first: a bad one must fail the demo before its first write, not after step 4.
    check_writable_folder(plots, what="--plots")
    check_writable_folder(common.STATE.config.labels_dir, what="the qrels export folder")
    store = common.STATE.store(client="workbench demo")
    options = WorkflowOptions(folder=folder, run_depth=run_depth, pool_depth=pool_depth,
                              labels_dir=common.STATE.config.labels_dir, plot_dir=plots, threads=threads,
                              simulate=simulate)
    start = time.monotonic()
    common.info(f"[starting] workbench demo on {folder} -> {common.STATE.config.db_path}")
    report = run_workflow(store, options, say=common.info)
    common.out(render_workflow(report))
    common.info(f"[finished] workbench demo [elapsed {time.monotonic() - start:.0f} s]")
    tokens = ", ".join(f"{u} / {t}" for u, t in report.tokens.items())
    common.info(f"UI sign-in (demo store): {tokens}")
    if report.lead_queue:
        common.info(f"{report.lead_queue:,} documents of {report.pool_v2.pool_version if report.pool_v2 else 'pool v2'} "
                    "still wait in demo-lead's Judge queue: your grades become a second opinion beside "
                    f"{report.reference_assessor} (see Agreement and Adjudicate).")
    if ui:
        from workbench.cli.judging import ui as start_ui

        store.release_file()
        start_ui(port=port, host="127.0.0.1")
