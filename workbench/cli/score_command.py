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
        from workbench.reports.charts import CHART_SUFFIXES, recall_curve_chart, save_chart
        from workbench.reports.format import FORMATS as ALL_FORMATS
        from workbench.reports.format import check_format
        from workbench.reports.scores import render_scores
        from workbench.services.evaluation.scoring import ScoreReport, score_runs
        from workbench.services.evaluation.unit_options import UnitOptions

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

    def write_outputs(scored: ScoreReport) -> None:
        """The plot and the report, after scoring and before anything is recorded: a failed write records nothing."""
        if plot is not None:
            save_chart(recall_curve_chart(scored.evaluations, title=f"Recall curve against {scored.qrels.name}"),
                       plot)
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
                                 slice_keys=scored.slice_keys)
            common.emit(text, out)

    unit_options = UnitOptions(tuple(unit or ()), chunk_map, spans, span_overlap, qrels_to_chunks, dedupe, groups,
                               no_answer, answer_threshold)
    # The unit views (services.evaluation.units) are imported only when asked for, or when a store could say a run ranks chunks.
    if unit_options.unit_mode():
        _score_units(runs, qrels, unit_options, measure, k, rel, missing, trust_file_order, collection, fmt, out,
                     by=by or (), topic_set=topic_set, min_topics=min_topics, filters=filters, filter_key=filter_key,
                     strict_eligibility=strict_eligibility, record=record, min_id_coverage=min_id_coverage)
        return
    if opener("workbench score") is not None:
        from workbench.services.evaluation.units import check_units

        check_units(runs, qrels, opener("workbench score"), collection)
    score_runs(
        runs, qrels, open_store=opener("workbench score"), measures=measure, cutoffs=_cutoffs(k), rel=rel,
        missing=missing, trust_file_order=trust_file_order, record=record, progress=common.info,
        topic_set=topic_set, by=by or (), collection=collection, slice_min_topics=min_topics,
        min_id_coverage=min_id_coverage,
        keep_documents=per_topic and fmt in ("table", "json"),  # only these print document lists
        before_record=write_outputs,
        filters=filters, filter_key=filter_key, strict_eligibility=strict_eligibility,
        no_answer="auto", no_answer_file=no_answer, answer_threshold=answer_threshold,
    )

def _score_units(runs: Sequence[str], qrels: str, options: object, measure: list[str] | None, k: str | None, rel: int,
                 missing: str, trust_file_order: bool, collection: str | None, fmt: str, out: Path | None, *,
                 by: list[str] | tuple[str, ...], topic_set: str | None, min_topics: int, filters: str,
                 filter_key: str, strict_eligibility: bool, record: bool | None, min_id_coverage: float) -> None:
    """``workbench score`` with --unit, --spans, --dedupe or --chunk-map (``services.evaluation.units``)."""
    from workbench.reports.units import render_units
    from workbench.services.evaluation.unit_options import UnitOptions
    from workbench.services.evaluation.units import UnitReport, score_units

    assert isinstance(options, UnitOptions)
    def write_report(report: UnitReport) -> None:  # before anything is recorded: a failed write records nothing
        common.emit(render_units(report, fmt), out)

    score_units(runs, qrels, options, open_store=opener("workbench score"), measures=measure,
                cutoffs=_cutoffs(k), rel=rel, missing=missing, trust_file_order=trust_file_order,
                collection=collection, progress=common.info, topic_set=topic_set, by=by,
                slice_min_topics=min_topics, filters=filters, filter_key=filter_key,
                strict_eligibility=strict_eligibility, record=record, min_id_coverage=min_id_coverage,
                before_record=write_report)


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
