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


def _budgets(text: str) -> list[float]:
    """``--budgets 5,10,20,40``: percentages of the frame, each in (0, 100]."""
    from workbench.errors import ValidationError

    try:
        values = [float(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        values = []
    if not values or any(not 0 < v <= 100 for v in values):
        raise ValidationError(f"expected comma-separated percentages in (0, 100] such as 5,10,20,40, found {text!r}")
    return values


@app.command("simulate-sample")
def simulate_sample(
    truth: Annotated[str, typer.Option(help="The judgments taken as complete: a TREC qrels file or a stored "
                                            "qrels version (e.g. cranfield-reference).")],
    runs: Annotated[list[str] | None, typer.Option(
        "--runs", help="Stored runs whose depth-D pool is sampled; repeatable or comma-separated. "
                       "Or --pool.")] = None,
    depth: Annotated[int | None, typer.Option(callback=options.depth, help="Pool depth D (with --runs).")] = None,
    strata: Annotated[str | None, typer.Option(
        help="Strata by best rank with their rates, e.g. 1-10:1.0,11-30:0.3,31-100:0.1 (with --runs); the rates "
             "are relative weights, scaled to each budget.")] = None,
    outside: Annotated[float, typer.Option(
        callback=options.share, help="Rate (relative weight) of the outside stratum (with --runs; 0: none).")] = 0.0,
    pool: Annotated[str | None, typer.Option(
        help="A stored sample pool: its runs and design instead of --runs, --depth, --strata, --outside.")] = None,
    budgets: Annotated[str, typer.Option(
        callback=options.checked(_budgets),
        help="Judgment budgets as percentages of the frame's size, comma-separated.")] = "5,10,20,40",
    repeats: Annotated[int, typer.Option(callback=options.number(2, what="a number of draws"),
                                         help="Draws per budget (repeat i uses seed + i).")] = 200,
    seed: Annotated[int | None, typer.Option(min=0, help="Seed (>= 0) of the first draw (default: the design's, 0 with --runs).")
                    ] = None,
    k: Annotated[str, typer.Option("--k", callback=options.cutoffs, help="Cut-offs of R@k.")] = "20,100",
    rel: Annotated[int, typer.Option(callback=options.number(0, what="a grade"),
                                     help="Minimum grade of a relevant document.")] = 1,
    fmt: Annotated[str, typer.Option("--format", callback=options.registered(
        "workbench.reports.sample_simulation", "SAMPLE_SIM_FORMATS", "format"),
        help="table, markdown or json.")] = "table",
) -> None:
    """Draw a stratified sample again and again against known judgments: per budget, run and R@k (macro and
    micro), the truth, the pooled value, the mean estimate, its bias, RMSE and 95%-interval coverage, and
    Kendall's tau of the run ordering.

    Writes nothing to the store. Example: workbench simulate-sample --runs bm25,dense,rrf,bm25-stem --depth 100
    --strata 1-10:1.0,11-30:0.3,31-100:0.1 --outside 0.02 --truth cranfield-reference --seed 7"""
    from workbench.errors import UsageError
    from workbench.reports.sample_simulation import render_sample_simulation
    from workbench.services.runs.sampling import design_of
    from workbench.services.runs.sampling import simulate_sample as simulate

    names = [r.strip() for v in runs or [] for r in v.split(",") if r.strip()]
    design = None
    if pool is not None:
        given = [o for o, v in (("--runs", names), ("--depth", depth), ("--strata", strata)) if v]
        if given or outside:
            raise UsageError(f"--pool takes the runs and design of the sample pool: drop {', '.join(given) or '--outside'}")
    else:
        missing = [o for o, v in (("--runs", names), ("--depth", depth), ("--strata", strata)) if not v]
        if missing:
            raise UsageError(f"{', '.join(missing)}: expected --runs, --depth and --strata (or --pool SAMPLE_POOL)")
        assert depth is not None and strata is not None
        with options.usage_errors():
            design = design_of(depth, strata, seed=seed or 0, outside=outside)
    ks = options.parse_cutoffs(k)
    store = common.STATE.store(client="workbench simulate-sample")
    result = simulate(store, truth, runs=names, design=design, pool=pool, budgets=_budgets(budgets), repeats=repeats,
                      seed=seed, ks=ks, rel=rel, say=common.info)
    for w in result.warnings:
        common.info(f"[warning] {w}")
    common.out(render_sample_simulation(result, fmt).rstrip("\n"))
