"""CLI commands: ``workbench score``, ``workbench compare`` and ``workbench misses``.

A RUN is a run file path (TREC text, or Parquet with topic_id, doc_id, score[,
rank]) or a stored run name; ``--qrels`` is a qrels file path (TREC text, or
Parquet with topic_id, doc_id, grade) or a stored qrels version name (an
existing path wins). Files are scored without touching the store. Data goes to
stdout (or ``--out``), progress to stderr.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from workbench.cli import app, common, options
from workbench.cli.score_command import opener
from workbench.scoring.measures import measure_forms

if TYPE_CHECKING:

    from workbench.scoring.evaluate import Evaluation
    from workbench.services.evaluation.request import ScoreEnv, ScoreRequest

FORMATS = "table, json, jsonl, csv, tsv"
SCORE_FORMATS = FORMATS + ", parquet (with --out)"
MISSING = "fail, zero, exclude"

QrelsOpt = Annotated[str, typer.Option(
    "--qrels", help="Qrels: a TREC qrels file, a Parquet file (topic_id, doc_id, grade) or a stored qrels version name.")]
RelOpt = Annotated[int, typer.Option(
    callback=options.number(0, what="a grade"),
    help="Minimum grade counted as relevant (inclusive; negative grades never are).")]
MissingOpt = Annotated[str, typer.Option(
    callback=options.registered("workbench.scoring.evaluate", "MISSING_POLICIES", "missing-topic policy"),
    help=f"Qrels topics a run has no results for (or marked empty/error in the store): {MISSING}. "
         "fail stops with the list; zero scores them 0 on every measure, Judged@k too (trec_eval -c); "
         "exclude leaves them out of every run's averages.")]
FormatOpt = Annotated[str, typer.Option(
    "--format", callback=options.registered("workbench.reports.format", "TEXT_FORMATS", "format"),
    help=f"Output format: {FORMATS}.")]
TrustOpt = Annotated[bool, typer.Option(
    help="Order run files by their rank column instead of score desc, doc_id desc (trec_eval's rule).")]
ByOpt = Annotated[list[str] | None, typer.Option(
    "--by", help="Slice the topics by KEY (repeatable): a topic-metadata key, or query_length (terms, bucketed), "
                 "n_relevant (|R| in 1, 2-5, 6-20, >20) or pool_coverage (Judged@K of the first run).")]
TopicSetOpt = Annotated[str | None, typer.Option(
    "--topic-set", help="Score only the topics of a stored topic set, NAME or NAME@VERSION "
                        "(see `workbench topics set`); its use is recorded.")]
CollectionOpt = Annotated[str | None, typer.Option(
    "--collection", callback=options.nonempty("a collection NAME or NAME@VERSION-PREFIX"),
                    help="The collection (NAME or NAME@VERSION-PREFIX) run files were produced over: their ids "
                         "and the qrels' are audited against it. Default: the stored qrels' collection.")]
MinTopicsOpt = Annotated[int, typer.Option(
    "--min-topics", min=1, help="Slices (and, for compare, the comparison) with fewer topics get no statistics.")]


@app.command("score")
def score(
    runs: Annotated[list[str], typer.Argument(
        help="Run files (TREC, or Parquet with topic_id, doc_id, score[, rank]) or stored run names.")],
    qrels: QrelsOpt,
    measure: Annotated[list[str] | None, typer.Option(
        "--measure", "-m", callback=options.measure,
        help=f"Measure, repeatable: {measure_forms()} (e.g. R@100, RR(rel=2)@10, nDCG(dcg='exp-log2')@10, AP, "
             "RBP(p=0.9)). A name that needs @k and has none (R) is taken at every --k; one without @k where it "
             "is optional (AP) covers the whole ranking. RBP brings its residual. Default: R@k for each k, "
             "nDCG@10, RR@10, P@10, Success@10, Judged@10.")] = None,
    k: Annotated[str | None, typer.Option(
        "--k", callback=options.cutoffs,
               help="Cutoffs for the R@k rows (and names without @k), e.g. 5,10,20,50,100 (the default).")] = None,
    rel: RelOpt = 1,
    missing: MissingOpt = "fail",
    fmt: Annotated[str, typer.Option("--format", callback=options.registered("workbench.reports.format", "FORMATS", "format"),
                                     help=f"Output format: {SCORE_FORMATS}.")] = "table",
    per_topic: Annotated[bool, typer.Option(
        help="Add per-topic values (table and json also list the pool-novel documents).")] = False,
    trust_file_order: TrustOpt = False,
    plot: Annotated[Path | None, typer.Option(
        help="Write the recall curve R@k, k = 1..depth, to this .png, .html, .svg or .json file.")] = None,
    record: Annotated[bool | None, typer.Option(
        "--record/--no-record",
        help="Store the results in the workbench's evaluations table. Default: when the qrels and every "
             "run are stored.")] = None,
    by: ByOpt = None,
    topic_set: TopicSetOpt = None,
    collection: CollectionOpt = None,
    min_topics: MinTopicsOpt = 5,
    min_id_coverage: Annotated[float, typer.Option(
        "--min-id-coverage", callback=options.share,
                             help="Warn when fewer than this share of the judged-relevant ids are documents of the "
                                  "collection version (ID audit).")] = 1.0,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Write the report to this file (atomically) instead of stdout; needed by --format parquet.")] = None,
    filters: Annotated[str, typer.Option(
        callback=options.choice("auto", "on", "off"),
        help="Eligibility filters of the topics (topic metadata --filter-key): auto (apply them when some topic "
             "has one), on (require them), off. Filtered: relevant sets hold eligible documents only, "
             "ineligible judged-relevant documents are reported, and leaks (ineligible documents returned) "
             "are counted beside recall.")] = "auto",
    filter_key: Annotated[str, typer.Option(help="Topic metadata key holding each topic's filter.")] = "filter",
    strict_eligibility: Annotated[bool, typer.Option(
        help="Fail when a judged-relevant document is ineligible under its topic's filter.")] = False,
    unit: Annotated[list[str] | None, typer.Option(
        "--unit", callback=options.registered("workbench.scoring.units", "UNITS", "unit"),
                  help="Score at this retrieval unit, repeatable (doc, chunk): a chunk run at doc keeps each "
                       "document's best-ranked chunk before the cut-off; names carry the unit (R[doc]@10).")] = None,
    chunk_map: Annotated[Path | None, typer.Option(
        "--chunk-map", help="Chunk map file (chunk_id doc_id start end) of a chunk run file. Default: the map of "
                            "the run's (or --collection's) chunk collection.")] = None,
    spans: Annotated[bool, typer.Option(
        "--spans", help="The --qrels file holds span qrels: topic_id doc_id start end [grade].")] = False,
    span_overlap: Annotated[float, typer.Option(
        "--span-overlap", callback=options.share,
                          help="A chunk covers a span when they share at least this share of the shorter of the "
                               "two (0 = any overlap, the default).")] = 0.0,
    qrels_to_chunks: Annotated[bool, typer.Option(
        "--qrels-to-chunks", help="With --unit chunk and document qrels: every chunk of a judged document inherits "
                                  "its grade.")] = False,
    dedupe: Annotated[str, typer.Option(
        "--dedupe", callback=options.choice("none", "groups"),
                    help="none, or groups: duplicate groups scored once (any member finds the group, the "
                         "denominator counts groups).")] = "none",
    groups: Annotated[Path | None, typer.Option(
        "--groups", help="A groups file (group_id doc_id) added to the stored groups (with --dedupe groups).")] = None,
    no_answer: Annotated[Path | None, typer.Option(
        "--no-answer", help="A file of no-answer topic ids (beside topic metadata no_answer = true).")] = None,
    answer_threshold: Annotated[float | None, typer.Option(
        "--answer-threshold", callback=options.number(),
                              help="A result answers only when scored above this; a run returning nothing above "
                                   "it abstains (no-answer accuracy).")] = None,
    allow_edited_qrels: Annotated[bool, typer.Option(
        "--allow-edited-qrels", help="Score a --qrels file that the manifest.json beside it records under another "
                                     "sha256 (edited after its export; refused by default), with a warning.")] = False,
) -> None:
    """Score runs against qrels: R@k with ceilings, macro and micro, nDCG, RR, P, Success, Judged, pool-novel.

    With -m, trec_eval's and ir_measures' measures of the whole ranking too: AP (MAP), Rprec, Bpref, RBP with
    its residual, and the counts NumRelRet, NumRel, NumRet (docs/scoring.md gives each definition and source).

    Before scoring, the identifier audit (judged-relevant and run ids in the collection version) and each run's
    completion (topics answered) are printed; a subset of the eligible topics is announced in the first line."""
    from workbench.cli.score_command import run_score

    run_score(runs, qrels, measure=measure, k=k, rel=rel, missing=missing, fmt=fmt, per_topic=per_topic,
              trust_file_order=trust_file_order, plot=plot, record=record, by=by, topic_set=topic_set,
              collection=collection, min_topics=min_topics, min_id_coverage=min_id_coverage, out=out,
              filters=filters, filter_key=filter_key, strict_eligibility=strict_eligibility, unit=unit,
              chunk_map=chunk_map, spans=spans, span_overlap=span_overlap, qrels_to_chunks=qrels_to_chunks,
              dedupe=dedupe, groups=groups, no_answer=no_answer, answer_threshold=answer_threshold,
              allow_edited_qrels=allow_edited_qrels)


@app.command("compare")
def compare_cmd(
    run_a: Annotated[str, typer.Argument(help="The baseline run (file or stored name).")],
    run_b: Annotated[str, typer.Argument(help="The run compared with it (file or stored name).")],
    qrels: QrelsOpt,
    measures: Annotated[list[str] | None, typer.Option(
        "--measure", "-m", callback=options.measure,
        help="The measure compared (one; default R@100), e.g. R@100 or AP; against a sample's qrels version also an "
             "estimated one, Rhat@20 (R̂@20), Rhat_micro@20 or Phat@10: its change with the interval of the "
             "difference. For several measures at once use `gate` (it corrects for the multiple tests).")] = None,
    rel: RelOpt = 1,
    missing: MissingOpt = "fail",
    fmt: FormatOpt = "table",
    trust_file_order: TrustOpt = False,
    resamples: Annotated[int, typer.Option(callback=options.number(1, what="a count"),
                                           help="Resamples of the permutation test and the bootstrap.")] = 10_000,
    seed: Annotated[int, typer.Option(help="Random seed of both tests.")] = 0,
    confidence: Annotated[float, typer.Option(
        callback=options.number(0.0, 1.0, lo_open=True, hi_open=True, what="a confidence level"),
        help="Confidence level of the bootstrap interval (of an estimated measure's interval).")] = 0.95,
    by: ByOpt = None,
    topic_set: TopicSetOpt = None,
    collection: CollectionOpt = None,
    min_topics: Annotated[int, typer.Option(
        "--min-topics", min=2, help="Fewest common topics the paired tests are run on (and the fewest a slice "
                                    "needs); with fewer, they are refused and only the differences listed.")] = 5,
) -> None:
    """Per-topic differences (relevant documents lost and gained, with ranks) and paired tests.

    An estimated measure (Rhat@20, Rhat_micro@20, Phat@10) against a sample's qrels version gives the change of the
    estimate with the interval of the difference (design variance, linearised jointly: both runs are estimated
    from the same sampled documents); --resamples, --seed and --min-topics do not apply to it."""
    from workbench.reports.comparison import render_comparison
    from workbench.reports.format import check_format
    from workbench.scoring.slices import adjusted_p_values
    from workbench.services.evaluation.pipeline import Resampling, compare_runs, estimated_measure
    from workbench.services.evaluation.request import ScoreEnv, ScoreRequest, Slicing, TopicChoice

    check_format(fmt)
    measure = _one_measure(measures)
    request = ScoreRequest((run_a, run_b), qrels, measures=(measure,), rel=rel, missing=missing,
                           trust_file_order=trust_file_order, collection=collection, topics=TopicChoice(topic_set),
                           slicing=Slicing(tuple(by or ()), min_topics))
    env = ScoreEnv(opener("workbench compare"), common.info, labels_dir=common.STATE.config.labels_dir)
    if estimated_measure(request) is not None:
        ignored = [o for o, given in (("--resamples", resamples != 10_000), ("--seed", seed != 0),
                                      ("--min-topics", min_topics != 5)) if given]
        if ignored:
            common.info(f"workbench: {' and '.join(ignored)} ignored: an estimated measure's interval comes from the "
                        "sample's design, not from resampling topics")
        _compare_estimated(request, confidence, env, fmt)
        return
    report, comparison, slices = compare_runs(request, Resampling(resamples, seed, confidence), env)
    if comparison.refused:
        common.info(f"workbench: {comparison.refused} (--min-topics {min_topics})")
    common.out(render_comparison(report.header(), comparison, fmt, slices=slices,
                                 slice_p=adjusted_p_values(slices), slice_keys=report.slice_keys))


def _one_measure(measures: list[str] | None) -> str:
    """The one measure ``compare`` takes (R@100 when none is given).

    Raises:
        typer.BadParameter: more than one ``--measure`` (click would keep the last one silently)."""
    if not measures:
        return "R@100"
    if len(measures) > 1:
        raise typer.BadParameter(
            f"compare takes one measure, found {len(measures)} ({', '.join(measures)}): run compare once per measure, "
            "or `workbench gate` with a policy naming each (its tests are corrected for the multiple comparisons).",
            param_hint="'--measure' / '-m'")
    return measures[0]


def _compare_estimated(request: "ScoreRequest", confidence: float, env: "ScoreEnv", fmt: str) -> None:
    """``compare`` on an estimated measure: the change of the estimate with its interval."""
    from workbench.reports.comparison import render_estimated_comparison
    from workbench.services.evaluation.pipeline import compare_estimated

    report, change = compare_estimated(request, confidence, env)
    m = change.measure
    pooled = tuple(e.value(m.estimate_name, m.AGGREGATE).pooled for e in report.estimates)
    common.out(render_estimated_comparison(report.header(), change, fmt, pooled=(pooled[0], pooled[1])))


@app.command("misses")
def misses_cmd(
    run: Annotated[str, typer.Argument(help="The run (file or stored name).")],
    qrels: QrelsOpt,
    k: Annotated[int, typer.Option("--k", min=1, help="Cutoff: relevant documents not within the top k are listed.")] = 100,
    rel: RelOpt = 1,
    missing: MissingOpt = "fail",
    fmt: FormatOpt = "table",
    trust_file_order: TrustOpt = False,
    categorise: Annotated[bool, typer.Option(
        "--categorise", help="Give each miss a cause (not indexed, filtered out, chunk boundary, found deeper, "
                             "vocabulary mismatch, beyond depth, uncategorised) with its evidence, counts per cause and the "
                             "residue; the list is kept per run and qrels version, a lead's causes win.")] = False,
    cause: Annotated[str | None, typer.Option(
        "--cause", callback=options.miss_cause,
                   help="With --categorise: list only the misses of this cause (the counts stay whole).")] = None,
    collection: CollectionOpt = None,
) -> None:
    """Every (topic, relevant document) the run did not return within k, with its grade and deeper rank."""
    from workbench.reports.format import check_format

    check_format(fmt)
    if categorise or cause is not None:
        from workbench.reports.miss_causes import render_miss_list
        from workbench.scoring.misses import check_cause
        from workbench.services.evaluation.misses import categorised_misses

        wanted = check_cause(cause) if cause is not None else None
        mr = categorised_misses(run, qrels, k, open_store=opener("workbench misses"), rel=rel, missing=missing,
                                trust_file_order=trust_file_order, progress=common.info, collection=collection)
        _warn_depth(mr.score.evaluations[0], k)
        common.out(render_miss_list(mr.header(), mr.misses, fmt, cause=wanted))
        return
    from workbench.reports.misses import render_misses
    from workbench.services.evaluation.pipeline import find_misses
    from workbench.services.evaluation.request import ScoreEnv, ScoreRequest

    report, misses = find_misses(ScoreRequest((run,), qrels, rel=rel, missing=missing,
                                              trust_file_order=trust_file_order),
                                 k, ScoreEnv(opener("workbench misses"), common.info,
                                             labels_dir=common.STATE.config.labels_dir))
    e = report.evaluations[0]
    _warn_depth(e, k)
    common.out(render_misses(report.header(), e.run_name, misses, k, fmt))


def _warn_depth(e: "Evaluation", k: int) -> None:
    depth = max(e.n_results.values(), default=0)
    if k > depth:
        common.info(f"workbench: warning: --k {k} is deeper than run {e.run_name!r}, which returns at most {depth} "
                    f"document(s) per topic: no miss is 'found deeper'; every relevant document it did not "
                    f"return is listed (use --k {depth} or less to see misses the run ranked too low)")
