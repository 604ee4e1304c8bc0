"""The body of ``workbench score``, without the CLI framework: what both command lines run.

``workbench.cli.score.score`` (the typer command: its options, help and
checks) and the fast path ``workbench.cli.fast_score`` (the plain
invocations, parsed without typer) call ``run_score`` with the same
arguments; so the two print the same bytes and exit with the same codes
(``tests/cli/test_fast_score.py`` runs both). This module imports no typer:
``run_score``'s defaults are the typer command's (the same test compares the
two signatures).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from workbench.cli import common

if TYPE_CHECKING:
    from collections.abc import Sequence

    from workbench.scoring.evaluate import Evaluation
    from workbench.scoring.measures import Measure
    from workbench.services.evaluation.refs import StoreOpener
    from workbench.services.evaluation.report import ScoreReport
    from workbench.services.evaluation.request import ScoreEnv, ScoreRequest


def opener(client: str) -> StoreOpener | None:
    """The store, if the project has one (files need none; no database is created for them)."""
    if not common.STATE.config.db_path.exists():
        return None
    return lambda: common.STATE.store(client=client)


def _cutoffs(text: str | None) -> list[int] | None:
    if text is None:
        return None
    # cli.options imports typer: only when --k was given (its value was checked at parse time).
    from workbench.cli import options

    return options.parse_cutoffs(text)


def run_score(
    runs: Sequence[str],
    qrels: str,
    *,
    measure: list[str] | None = None,
    k: str | None = None,
    rel: int = 1,
    missing: str = "fail",
    fmt: str = "table",
    per_topic: bool = False,
    trust_file_order: bool = False,
    plot: Path | None = None,
    record: bool | None = None,
    by: list[str] | None = None,
    topic_set: str | None = None,
    collection: str | None = None,
    min_topics: int = 5,
    min_id_coverage: float = 1.0,
    out: Path | None = None,
    filters: str = "auto",
    filter_key: str = "filter",
    strict_eligibility: bool = False,
    unit: list[str] | None = None,
    chunk_map: Path | None = None,
    spans: bool = False,
    span_overlap: float = 0.0,
    qrels_to_chunks: bool = False,
    dedupe: str = "none",
    groups: Path | None = None,
    no_answer: Path | None = None,
    answer_threshold: float | None = None,
    allow_edited_qrels: bool = False,
) -> None:
    """``workbench score``: the arguments as the typer command has parsed and checked them (see its help).

    Args:
        runs: run file paths or stored run names, in order (at least one).
        qrels: a qrels file path or a stored qrels version name.
        measure..answer_threshold: the command's options, each under its
            parameter name in ``workbench.cli.score.score`` (``fmt`` is
            ``--format``), with the same defaults; values already checked
            by the options' callbacks (``workbench.cli.options``).

    Raises:
        WorkbenchError: bad input or data (one line on stderr, exit 1) or a
            usage error found after parsing (``UsageError``, exit 2).
        OSError: an output could not be written (named in the message).
    """
    from workbench.cli.runtime import paused_gc

    with paused_gc():  # the scorer's modules (imported here, not at start-up)
        from workbench.errors import UsageError
        from workbench.reports.charts import CHART_SUFFIXES
        from workbench.reports.format import FORMATS as ALL_FORMATS
        from workbench.reports.format import check_format
        from workbench.services.evaluation.request import (
            Filtering,
            NoAnswer,
            Output,
            ScoreEnv,
            ScoreRequest,
            Slicing,
            TopicChoice,
            UnitOptions,
        )

    if check_format(fmt, ALL_FORMATS) == "parquet":
        from workbench.formats.io import STDOUT

        if out is None or str(out) == STDOUT:
            raise UsageError("--format parquet writes a binary file: give it with --out FILE.parquet "
                             "(standard output takes text only).")
    # Output targets before any work: a bad one must not fail the command after it recorded evaluations.
    if plot is not None or out is not None:
        from workbench.formats.io import check_writable

        if plot is not None:
            check_writable(plot, what="--plot", suffixes=CHART_SUFFIXES)
        if out is not None:
            check_writable(out, what="--out")

    # The request, built once: what both the plain score and the unit views score.
    units = UnitOptions(tuple(unit or ()), chunk_map, spans, span_overlap, qrels_to_chunks, dedupe, groups)
    request = ScoreRequest(
        tuple(runs), qrels, measures=tuple(measure or ()), cutoffs=tuple(_cutoffs(k) or ()), rel=rel,
        missing=missing, trust_file_order=trust_file_order, collection=collection, min_id_coverage=min_id_coverage,
        topics=TopicChoice(topic_set), slicing=Slicing(tuple(by or ()), min_topics),
        filtering=Filtering(filters, filter_key, strict_eligibility),
        no_answer=NoAnswer("auto", no_answer, answer_threshold), units=units,
        output=Output(record, "score", keep_documents=per_topic and fmt in ("table", "json")),  # only these list documents
        allow_edited_qrels=allow_edited_qrels,
    )
    store = opener("workbench score")
    # The unit views (services.evaluation.units) are imported only when asked for, or when a store could say a run ranks chunks.
    labels_dir = common.STATE.config.labels_dir
    if units.unit_mode():
        _score_units(request, ScoreEnv(store, common.info, labels_dir=labels_dir), fmt, out)
        return
    if store is not None:
        from workbench.services.evaluation.units import check_units

        check_units(runs, qrels, store, collection)
    with paused_gc():
        from workbench.services.evaluation.pipeline import score

    score(request, ScoreEnv(store, common.info, labels_dir=labels_dir, before_record=lambda report: _write_outputs(
        report, fmt=fmt, per_topic=per_topic, plot=plot, out=out)))


def _write_outputs(scored: ScoreReport, *, fmt: str, per_topic: bool, plot: Path | None, out: Path | None) -> None:
    """The plot and the report, after scoring and before anything is recorded: a failed write records nothing."""
    from workbench.reports.charts import recall_curve_chart, save_chart
    from workbench.reports.scores import render_scores

    if plot is not None:
        save_chart(recall_curve_chart(scored.evaluations, title=f"Recall curve against {scored.qrels.name}"), plot)
        common.info(f"wrote {plot}")
    if scored.coverage and scored.coverage.notice():
        common.info(f"workbench: {scored.coverage.notice()}")
    _warn_shallow(scored.evaluations, scored.measures)
    if fmt == "parquet" and out is not None:
        from workbench.reports.scores import write_scores_parquet

        write_scores_parquet(scored.header(), scored.evaluations, out, per_topic=per_topic, slices=scored.slices)
        common.info(f"wrote {out}")
    else:
        text = render_scores(scored.header(), scored.evaluations, fmt, per_topic=per_topic, slices=scored.slices,
                             slice_keys=scored.slice_keys, estimates=scored.estimates)
        common.emit(text, out)


def _score_units(request: ScoreRequest, env: ScoreEnv, fmt: str, out: Path | None) -> None:
    """``workbench score`` with --unit, --spans, --dedupe or --chunk-map (``services.evaluation.units``)."""
    import dataclasses

    from workbench.reports.units import render_units
    from workbench.services.evaluation.units import UnitReport, score_units

    def write_report(report: UnitReport) -> None:  # before anything is recorded: a failed write records nothing
        coverage = report.views[0].report.coverage
        if coverage and coverage.notice():
            common.info(f"workbench: {coverage.notice()}")
        common.emit(render_units(report, fmt), out)

    score_units(request, dataclasses.replace(env, before_record=write_report))


def _warn_shallow(evaluations: Sequence[Evaluation], measures: Sequence[Measure]) -> None:
    """One note per run scored at an R@k deeper than it returns: R@k for k > depth D equals R@D for it."""
    from workbench.scoring.measures import R

    recall = [m for m in measures if isinstance(m, R)]
    for e in evaluations:
        depth = max(e.n_results.values(), default=0)
        deeper = [str(m) for m in recall if m.cutoff > depth]
        if depth and deeper:
            common.info(f"workbench: note: run {e.run_name!r} returns at most {depth} document(s) per topic: R@k for "
                        f"k > {depth} equals R@{depth} for it ({', '.join(deeper)}); a deeper run is needed to "
                        "measure them")
