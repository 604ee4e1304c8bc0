"""The ``workbench`` typer app: the command registry, the root options and the full ``main``.

Structure: ``workbench <noun> [<verb>]``. Each noun lives in its own module
and is registered here. ``workbench.cli.main(argv) -> int`` (the console
script's and the tests' entry) answers ``--version`` and the root ``--help``
without importing this module; everything else arrives at ``main`` below. A
``WorkbenchError`` becomes one stderr line and exit code 1 (a traceback only
with ``--debug``); usage errors exit 2.

Command modules are imported lazily (``workbench.cli.lazy``): ``workbench
--help`` and ``--version`` import none of them, and ``workbench score ...``
imports only ``workbench.cli.score``. To add a command:

1. write it in a module under ``workbench/cli/`` as usual, on the root app:
   ``from workbench.cli import app, common`` then ``@app.command("stages")``,
   or a noun with verbs: ``stages_app = typer.Typer(help="...")`` and
   ``app.add_typer(stages_app, name="stages")``; import heavy libraries
   inside the command functions, not at module level;
2. add ONE line to ``COMMANDS`` below: the name, the module(s) that define
   it (relative to ``workbench.cli``; a noun whose verbs live in several
   modules lists them all) and the first sentence of its help, which
   ``workbench --help`` shows without importing the module.
   ``tests/cli/test_lazy.py`` fails, naming the entry, if a module registers
   a command that ``COMMANDS`` lacks or a summary differs from the help;
3. regenerate the static root help: ``python -m workbench.cli.root_help``
   (``tests/cli/test_fast_paths.py`` fails, saying so, while it is stale).

A new verb of an existing noun in a new module: append the module to that
noun's entry (e.g. ``"run": ("runs rerank", ...)``).

No ``from __future__ import annotations`` here (nor in ``cli.options`` and
``cli.score``): typer reads the root callback's signature on every run, and
string annotations would be compiled and evaluated each time.
"""

import contextlib
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click.exceptions import UsageError as UsageErrorClick

from workbench.cli import common, outcome
from workbench.cli.lazy import LazyGroup, registry
from workbench.cli.runtime import EXIT_USAGE
from workbench.version import __version__

# name: (module(s) under workbench.cli defining it, the first sentence of its help).
# `workbench --help` lists them in this order: the workflow order.
COMMANDS = registry({
    "ingest": ("ingest", "Ingest a collection: documents, topics and reference qrels, versioned by content."),
    "collections": ("ingest", "List collections with their latest version, counts and (optionally) version history."),
    "assign": ("judging", "Assign a pool version's documents to assessors (lead only)."),
    "agreement": ("judging", "Cohen's weighted kappa per assessor pair and Krippendorff's alpha per topic and "
                             "overall (TSV)."),
    "publish": ("judging", "Publish the final grades of a pool version as an immutable qrels version (lead only)."),
    "ui": ("judging", "Start the judging app (Streamlit) over this project's store."),
    "score": ("score", "Score runs against qrels: R@k with ceilings, macro and micro, nDCG, RR, P, Success, "
                       "Judged, pool-novel."),
    "compare": ("score", "Per-topic differences (relevant documents lost and gained, with ranks) and paired tests."),
    "misses": ("score", "Every (topic, relevant document) the run did not return within k, with its grade and "
                        "deeper rank."),
    "miss-cause": ("misses", "A lead sets or overrides the cause of a run's misses, each with a note (append-only), "
                             "or accepts the causes inherited from other runs' identical misses."),
    "gate": ("gate", "Release gate: pass (0), fail (1) or invalid (2) for CANDIDATE(S) against BASELINE under a policy."),
    "simulate": ("simulate", "Replay judging with an oracle's grades instead of assessors: per strategy, the judgments "
                             "needed to find 50/80/90/95% of the pool's relevant documents, the qrels it would have "
                             "published at each budget, every run rescored on them and Kendall's tau of the run "
                             "ordering against the full oracle."),
    "simulate-sample": ("simulate", "Draw a stratified sample again and again against known judgments: per "
                                    "budget, run and R@k (macro and micro), the truth, the pooled value, the mean "
                                    "estimate, its bias, RMSE and 95%-interval coverage, and Kendall's tau of the "
                                    "run ordering."),
    "strategy": ("strategy", "Show or set a pool version's judging strategy and per-topic stopping (setting is "
                             "lead only)."),
    "judge-with-model": ("model_assessor", "Grade a pool's documents with a model, through the same append-only "
                                           "save path as a person, as an assessor of kind 'model' (identity: "
                                           "model, weights hash, grade mapping)."),
    "prefill": ("model_assessor", "Show or set a pool version's pre-fill mode (setting is lead only): with --model "
                                  "NAME, assessors see that model assessor's grade pre-selected and marked as the "
                                  "model's, and confirm or change it."),
    "stages": ("stages", "Recall per pipeline stage: R@D [candidates], R@k [final], nDCG@k [final], with ceilings, "
                         "macro and micro."),
    "depth-sweep": ("stages", "Rerank the top D of a run for each D: R@D of the candidates, R@k after reranking, "
                              "measured cost."),
    "ann-recall": ("ann", "ANN-recall@k of a dense run: |approximate top-k ∩ exact top-k| / k per topic, "
                          "macro-averaged."),
    "ann-sweep": ("ann", "Sweep an approximate index: per setting ANN-recall@k, R@k of it and of exact search, "
                         "latency, diagnosis."),
    "adjudicate": ("judgments", "The lead's adjudication, as on the Adjudicate page: --list shows the disagreement "
                                "queue (grades differ, or an assessor was unsure; widest spread first); --topic T --doc "
                                "D --grade G --rationale TEXT sets a final grade (lead only, rationale required, the "
                                "document must be in the queue)."),
    "demo": ("demo", "Run the whole workflow non-interactively: ingest, BM25/dense/RRF runs, pool v1, judge it with "
                     "the reference judgments as one assessor, publish qrels v1, score; a new run arrives: pool v2 "
                     "(delta only), judge, publish v2, rescore; pool bias against the full judgments; "
                     "leave-one-run-out."),
    "qrels": ("qrels judging", "Qrels versions: import a file, list, show, export, verify."),
    "convert": ("ingest convert chunk", "Convert raw collections into the workbench's layout."),
    "groups": ("groups", "Duplicate groups: import a groups file, list a collection's groups, judging offers."),
    "run": ("runs rerank", "Runs: produce them (bm25, dense, fuse, rerank), import TREC run files, list, show and "
                           "export them."),
    "pool": ("pool pool_quality", "Pools: build a depth-k pool of runs (`workbench pool RUN..."),
    "users": ("judging", "Users: assessors and leads, each with an access token."),
    "topics": ("topics", "Topic sets: named, versioned lists of topics (a smoke set, a protected release set)."),
    "evaluations": ("evaluations", "Recorded evaluations (scoring actions) with their lineage."),
    "filters": ("filters", "Topic eligibility filters: show each filtered topic's eligible documents and ineligible "
                           "judged-relevant documents; import a topic_id + filter side file."),
    "metadata": ("metadata", "Document and topic metadata: list keys and values, import side files (CSV, TSV, JSONL, "
                             "Parquet)."),
    "rubric": ("rubric", "Rubrics (grade scales): `workbench rubric COLLECTION [NAME]` shows or sets a collection's "
                         "rubric; `define FILE.toml` stores a rubric file as a new version; `list` lists them."),
    "judgments": ("judgments", "Judgments in and out: import a file as one assessor's judgments (lead only), export "
                               "current judgments or their whole history."),
}, package="workbench.cli")


_ROOT_VALUED = ("--db", "--lock-timeout")  # the root options that take a value


def _command_name(args: list[str]) -> str | None:
    """The command named in ``args`` (the first word after the root options), if any."""
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in _ROOT_VALUED:
            skip = True
        elif a == "--":
            return None
        elif not a.startswith("-"):
            return a
    return None


class _Root(LazyGroup):
    """The root group. A usage error in the root options takes the usage exit code of the
    command they precede: ``workbench --lock-timeout -1 gate ...`` exits as the gate's usage
    error (3; its ``usage_exit_code``), not 2, so a CI job never reads it as a verdict."""

    commands_registry = COMMANDS

    @staticmethod
    def source() -> typer.Typer:
        return app

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        name = _command_name(args)
        try:
            return super().parse_args(ctx, args)
        except UsageErrorClick as e:
            self._recode(ctx, e, name)
            raise

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except UsageErrorClick as e:  # the root callback's checks (--lock-timeout)
            self._recode(ctx, e, ctx.invoked_subcommand)
            raise

    def _recode(self, ctx: Any, e: Any, name: str | None) -> None:
        if e.exit_code != EXIT_USAGE or not name or name not in self.commands_registry:
            return
        code = getattr(self.get_command(ctx, name), "usage_exit_code", EXIT_USAGE)
        e.exit_code = code


app = typer.Typer(
    cls=_Root,
    name="workbench",
    help=(
        "Relevance-judgment and pooling workbench: ingest a collection, produce runs, pool them, "
        "judge the pool, publish versioned qrels and score runs against them."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"workbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    db: Annotated[
        Path | None,
        typer.Option(help="The workbench's DuckDB file. Default: $WORKBENCH_DB, else labels/workbench.duckdb."),
    ] = None,
    lock_timeout: Annotated[
        float | None,
        typer.Option(help="Seconds to wait while another process (e.g. the UI) uses the store. Default 300."),
    ] = None,
    debug: Annotated[bool, typer.Option(help="Show tracebacks.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or messages on stderr.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    if lock_timeout is not None and not (lock_timeout >= 0 and lock_timeout != float("inf")):
        raise typer.BadParameter(f"expected a number of seconds >= 0, got {lock_timeout}",
                                 param_hint="'--lock-timeout'")
    common.configure(db, lock_timeout, debug, quiet)


def main(args: list[str]) -> int:
    """Run the CLI through typer; return the exit code (0 ok, 1 workbench error, 2 usage error, 130 interrupted).

    Usage errors (unknown command, missing argument) are reported by typer/click
    with the command's usage line; a ``WorkbenchError`` becomes one
    ``workbench: error: ...`` line on stderr (``workbench.cli.outcome.finish``:
    the rules the fast path of ``workbench score`` shares). ``workbench.cli.main``
    calls it for everything but its fast paths.
    """
    def call() -> int:
        try:
            app(args=args, prog_name="workbench", standalone_mode=True)
        except SystemExit as e:  # standalone mode always ends in SystemExit
            code = e.code
            return code if isinstance(code, int) else (0 if code is None else 1)
        return 0

    return outcome.finish(call)


def render_root_help(columns: int = 80) -> str:
    """``workbench --help`` as typer prints it on a terminal ``columns`` wide (no fast path).

    What ``workbench.cli.root_help`` holds (for 80 columns: the width of 78
    click formats at); ``python -m workbench.cli.root_help`` rewrites that file
    from it.
    """
    import io

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            code = main(["--help"])
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    if code != 0:
        raise RuntimeError(f"workbench --help exited with {code}")
    return buffer.getvalue()
