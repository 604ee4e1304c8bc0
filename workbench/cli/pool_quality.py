"""CLI commands: ``workbench pool reusability`` and ``workbench pool bias`` (pool quality)."""

from __future__ import annotations

from typing import Annotated

import typer

from workbench.cli import common, options
from workbench.cli.pool import pool_app

FORMATS = ("table", "tsv", "json")
KOpt = Annotated[int, typer.Option(callback=options.count, help="Cutoff k of R@k.")]
RelOpt = Annotated[int, typer.Option(callback=options.number(0, what="a grade"),
                                     help="Minimum grade of a relevant document.")]
FmtOpt = Annotated[str, typer.Option("--format", callback=options.choice(*FORMATS), help="table, tsv or json.")]


@pool_app.command("reusability")
def reusability(
    pool: Annotated[str, typer.Argument(help="The pool version (its ancestors included).")],
    qrels: Annotated[str, typer.Option(help="The qrels version judged from the pool.")],
    k: KOpt = 20,
    rel: RelOpt = 1,
    fmt: FmtOpt = "table",
) -> None:
    """Leave-one-run-out: each pooled run rescored on the qrels without the documents only it contributed
    (drop, unique relevant documents, and two Kendall's taus of the run ordering: with only the left-out run
    rescored, and with every run rescored on those qrels, naming the runs that moved). A topic whose relevant
    documents all came from the left-out run is excluded, not scored 0, and counted."""
    from workbench.reports.pool_quality import render_reusability
    from workbench.services.runs.pool_quality import reusability as analyse

    store = common.STATE.store(client="workbench pool reusability")
    rep = analyse(store.pools, store.runs, store.qrels, pool, qrels, k=k, rel=rel)
    common.out(render_reusability(rep, fmt))
    if rep.missing_runs:
        common.info(f"[warning] pooled runs not stored, left out: {', '.join(rep.missing_runs)}")


@pool_app.command("bias")
def bias(
    pooled: Annotated[str, typer.Option(help="The qrels version judged from a pool.")],
    full: Annotated[str, typer.Option(help="Complete (or fuller) judgments of the same topics.")],
    k: KOpt = 20,
    rel: RelOpt = 1,
    fmt: FmtOpt = "table",
) -> None:
    """Pool bias: each run's R@k on the pooled qrels and on the full qrels, over the same topics, and the gap.
    The runs are those of the pooled version's pool (else every stored run of the collection)."""
    from workbench.reports.pool_quality import render_bias
    from workbench.services.runs.pool_quality import bias as analyse

    store = common.STATE.store(client="workbench pool bias")
    common.out(render_bias(analyse(store.pools, store.runs, store.qrels, pooled, full, k=k, rel=rel), fmt))


