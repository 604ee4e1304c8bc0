"""CLI command: ``workbench simulate`` (replay judging strategies against an oracle)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import app, common, options


@app.command("simulate")
def simulate(
    pool: Annotated[str, typer.Argument(help="The stored pool version to replay (its ancestors included).")],
    oracle: Annotated[str, typer.Option(help="Grades to replay: a TREC qrels file or a stored qrels version.")],
    strategies: Annotated[str, typer.Option(
        callback=options.strategies,
        help="Comma-separated judging strategies: rank, mtf, bandit, bandit-mm, bandit-ts, cal, cal-model, "
             "each optionally with parameters, e.g. bandit(method='thompson').")] = "rank,mtf,bandit,cal",
    budget: Annotated[int | None, typer.Option(
        callback=options.count, help="At most this many judgments per topic (default: the whole pool).")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the randomised strategies (Thompson sampling, CAL).")] = None,
    measure: Annotated[str, typer.Option(callback=options.measure,
                                         help="Measure the runs are rescored with at each budget.")] = "R@20",
    rel: Annotated[int, typer.Option(callback=options.number(0, what="a grade"),
                                     help="Minimum grade of a relevant document.")] = 1,
    plot: Annotated[list[Path] | None, typer.Option(
        help="Write the curve (relevant found against judgments made): .png, .svg, .html or .json; repeatable.")] = None,
    fmt: Annotated[str, typer.Option("--format", callback=options.registered(
        "workbench.reports.simulation", "SIM_FORMATS", "format"), help="table, tsv or json.")] = "table",
    qrels_out: Annotated[Path | None, typer.Option(
        help="Write the qrels each strategy would have published at each budget to this folder "
             "(<strategy>@<budget>.qrels, TREC format).")] = None,
) -> None:
    """Replay judging with an oracle's grades instead of assessors: per strategy, the judgments needed to find
    50/80/90/95% of the pool's relevant documents, the qrels it would have published at each budget, every run
    rescored on them and Kendall's tau of the run ordering against the full oracle. Deterministic for a seed;
    writes nothing to the store. Example: workbench simulate cranfield-pool-v1 --oracle cranfield-reference"""
    from workbench.formats.io import check_writable, check_writable_folder
    from workbench.reports.charts import CHART_SUFFIXES, save_chart
    from workbench.reports.simulation import render_simulation, simulation_chart
    from workbench.services.judging.simulation import simulate_stored_pool

    # Output targets first: a bad one fails before minutes of simulation, and nothing is written.
    for path in plot or []:
        check_writable(path, what="--plot", suffixes=CHART_SUFFIXES)
    if qrels_out is not None:
        check_writable_folder(qrels_out, what="--qrels-out")
    store = common.STATE.store(client="workbench simulate")
    run = simulate_stored_pool(store, pool, oracle, strategies, budget=budget, seed=seed, measure=measure,
                               rel=rel, say=common.info)
    common.out(render_simulation(run, fmt, detail=True))
    if qrels_out is not None:
        from workbench.services.judging.simulation import write_budget_qrels

        written = write_budget_qrels(run, qrels_out)
        common.info(f"{len(written)} qrels files written to {qrels_out}")
    for path in plot or []:
        save_chart(simulation_chart(run), path)
        common.info(f"curve written to {path}")
    common.info(f"[finished] simulate {pool}: {len(run.report.strategies)} strategies")
