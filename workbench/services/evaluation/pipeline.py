"""One evaluation path: a ``ScoreRequest`` through the steps load -> restrict -> (read -> audit -> evaluate)
per run -> assemble -> slice -> record (``docs/architecture.md``).

``score`` is what ``workbench score``, the app, ``workbench.evaluate`` and
every service that scores (compare, gate, misses, the demo) call;
``services.evaluation.units.score_units`` runs the same steps once per
retrieval unit. Each step takes and returns plain values:

* ``request.check_request``: the request is scorable;
* ``load.load``: measures, qrels (file or stored version), small-file runs;
* ``restrict.restrict``: topic set, eligibility filters, no-answer topics,
  exclusions; the evaluator over the restricted qrels;
* ``evaluate.evaluate_runs``: each run read, audited (ids, completion) and scored;
* ``assemble``: warnings, the ID audit, pool contributors, coverage -> ``ScoreReport``;
* ``slicing.slice_report``: ``--by`` slices;
* ``record.record_step``: the output hook, then the evaluations and a topic set's use.

Every ``ScoreReport`` carries the lineage a number needs: qrels version (name
and content hash), collection version, run names and where they came from,
the evaluator version, the relevance threshold and the missing-topic policy.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.errors import ValidationError
from workbench.scoring.measures import Judged, Measure
from workbench.scoring.qrels_checks import positives_only_warning
from workbench.scoring.results import Evaluation, topic_value_list
from workbench.scoring.validity import TopicCoverage
from workbench.services.evaluation.refs import QrelsRef, RunRef
from workbench.services.evaluation.report import EVALUATOR_VERSION, ScoreReport, utc_now_seconds
from workbench.services.evaluation.request import ScoreEnv, ScoreRequest, check_request

if TYPE_CHECKING:
    from workbench.scoring.compare import Comparison
    from workbench.scoring.estimate_compare import EstimatedChange
    from workbench.scoring.measures import EstimatedMeasure
    from workbench.scoring.results import RelevantDoc
    from workbench.scoring.slices import SliceComparison
    from workbench.services.evaluation.evaluate import Scored
    from workbench.services.evaluation.load import Loaded
    from workbench.services.evaluation.refs import StoreOpener
    from workbench.services.evaluation.restrict import Scope


def score(request: ScoreRequest, env: ScoreEnv | None = None) -> ScoreReport:
    """Score the request's runs against its qrels: every step in order; recorded as the request says.

    Args:
        request: what to score (``services.evaluation.request``); ``request.units.unit_mode()`` is
            ``score_units``'s.
        env: the store, progress sink, data in memory and output hook (default: none of them: files only).

    Returns:
        The ``ScoreReport``: one evaluation per run, in request order.

    Raises:
        MissingTopicsError: ``missing="fail"`` and a run lacks a topic.
        InputFormatError, UnknownNameError, ValidationError: bad input.
        StoreError: recording failed (nothing was recorded).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "q.txt").write_text("1 0 a 1\\n1 0 b 1\\n")
        >>> _ = (d / "r.txt").write_text("1 Q0 a 1 2.0 x\\n1 Q0 c 2 1.0 x\\n")
        >>> r = score(ScoreRequest((str(d / "r.txt"),), str(d / "q.txt"), measures=("R@2",)))
        >>> e = r.evaluations[0]; (e.run_name, e.aggregates[r.measures[0]].macro)
        ('x', 0.5)
    """
    env = env or ScoreEnv()
    if request.units.unit_mode():
        raise ValidationError("this request scores at retrieval units (--unit, --spans, --dedupe, --chunk-map): "
                              "use services.evaluation.units.score_units")
    from workbench.services.evaluation.evaluate import evaluate_runs
    from workbench.services.evaluation.load import load
    from workbench.services.evaluation.record import record_step
    from workbench.services.evaluation.restrict import restrict
    from workbench.services.evaluation.slicing import slice_report

    check_request(request)
    loaded = load(request, env)
    scope = restrict(request, loaded, env)
    scored = evaluate_runs(request, loaded, scope, env)
    report = assemble(request, loaded, scope, scored, env)
    report = slice_report(request, report, scope, env)
    return record_step(request, report, env)


def assemble(request: ScoreRequest, loaded: Loaded, scope: Scope, scored: Scored, env: ScoreEnv) -> ScoreReport:
    """The ``ScoreReport`` of the scored runs: warnings in order, the ID audit, pool contributors, coverage."""
    from workbench.services.evaluation.provenance import git_commit

    qref, ms = loaded.qrels, loaded.measures
    warnings = [*loaded.warnings, *scope.warnings]
    for run_ref, e in zip(scored.refs, scored.evaluations, strict=True):
        warnings.extend(run_warnings(run_ref, e, qref, trust_file_order=request.trust_file_order))
    if scope.positives:
        warnings.insert(0, f"qrels {qref.name}: "
                           f"{positives_only_warning(request.rel, _shorter_than_judged(scored.evaluations, ms))}")
    assert scored.auditor is not None
    audits, audit_note = scored.auditor.result()
    warnings.extend(_audit_warnings(audits, request.min_id_coverage))
    refs = _unique_names(scored.refs)
    refs, notes = _mark_pool_contributors(refs, qref, env.open_store)
    warnings.extend(notes)
    evaluations = [e if e.run_name == r.name else dataclasses.replace(e, run_name=r.name)
                   for e, r in zip(scored.evaluations, refs, strict=True)]
    completions = tuple(dataclasses.replace(c, run=r.name) for c, r in zip(scored.completion, refs, strict=True))
    coverage = TopicCoverage(len(scope.eligible), len(evaluations[0].topics) if evaluations else 0,
                             scope.topic_set.ref if scope.topic_set else "")
    marks = scope.marks
    # The commit costs two git calls: asked for only when something is recorded (or by the gate).
    wants_commit = request.output.command != "score" or request.output.record or scope.topic_set is not None
    return ScoreReport(
        qrels=qref, runs=tuple(refs), evaluations=tuple(evaluations), measures=ms, rel=request.rel,
        missing=request.missing, trust_file_order=request.trust_file_order,  # type: ignore[arg-type]
        evaluator_version=EVALUATOR_VERSION, created_at=utc_now_seconds(),
        warnings=tuple(warnings), seconds=tuple(scored.seconds), completion=completions, coverage=coverage,
        audits=audits, audit_note=audit_note, topic_set=scope.topic_set,
        git_commit=git_commit() if wants_commit else "",
        eligibility=tuple(scored.eligibility),
        no_answer=tuple(dataclasses.replace(r, run_name=ref.name) for r, ref in zip(scored.no_answer, refs,
                                                                                      strict=False)),
        no_answer_source=marks.source if marks is not None else "",
        estimates=tuple(dataclasses.replace(x, run=r.name) for x, r in zip(scored.estimates, refs, strict=False)),
        sample=scope.sample,
    )


def _audit_warnings(audits: Sequence[object], min_id_coverage: float) -> list[str]:
    """The ID audit's warnings: relevant ids below ``min_id_coverage``, runs returning ids the version lacks."""
    if not audits:  # files only: nothing audited (and the audit rules never imported)
        return []
    from workbench.scoring.idaudit import IdAudit

    out = []
    for a in audits:
        assert isinstance(a, IdAudit)
        if a.relevant.share < min_id_coverage:
            out.append(
                f"ID audit: {a.relevant.n_ids - a.relevant.n_present:,} of {a.relevant.n_ids:,} judged-relevant "
                f"ids are not in collection version {a.collection_version[:12]} (they count as misses; "
                f"coverage {a.relevant.share!r} < {min_id_coverage!r}); see the audit lines")
        for rc in a.runs:
            if rc.share < 1.0:
                out.append(f"ID audit: {rc.what}: {len(rc.missing):,} distinct returned ids are not in "
                           f"collection version {a.collection_version[:12]}")
    return out


def run_warnings(run_ref: RunRef, e: Evaluation, qref: QrelsRef, *, trust_file_order: bool = False) -> list[str]:
    """What a reader of one run's numbers should know: ignored topics, duplicates, non-finite values, ...

    Each is one line of ``ScoreReport.warnings`` (both scorers' reports give the same lines).
    """
    out: list[str] = []
    if trust_file_order and run_ref.origin == "stored":
        out.append(f"run {run_ref.name!r} is stored: its canonical order is used, --trust-file-order applies to files")
    if run_ref.collection_version and qref.collection_version and run_ref.collection_version != qref.collection_version:
        out.append(
            f"run {run_ref.name!r} was produced over collection version {run_ref.collection_version[:12]}, "
            f"the qrels over {qref.collection_version[:12]}: document ids may differ"
        )
    if e.ignored_topics:
        out.append(f"run {run_ref.name!r} has {len(e.ignored_topics)} topic(s) not in the qrels (ignored)")
    if e.n_duplicates:
        out.append(f"run {run_ref.name!r}: {e.n_duplicates} duplicate line(s) dropped (best rank kept)")
    if run_ref.rank_warning:
        out.append(f"run {run_ref.name!r}: {run_ref.rank_warning}")
    for m, tm in e.per_topic.items():
        values = topic_value_list(tm, e.topics)
        if all(map(math.isfinite, values)):  # the usual case, checked in C
            continue
        bad = [t for t, v in zip(e.topics, values, strict=True) if not math.isfinite(v)]
        if bad:
            out.append(
                f"run {run_ref.name!r}: {m} is not a finite number for {len(bad)} topic(s) "
                f"({', '.join(bad[:10])}{' ...' if len(bad) > 10 else ''}): a grade too large for its gain "
                "(2^grade - 1 overflows); shown as - (null in JSON). Use grades on a small scale or dcg='log2'")
    return out


def _shorter_than_judged(evaluations: Sequence[Evaluation], measures: Sequence[Measure]) -> dict[str, tuple[int, int]]:
    """run name -> (depth D, largest Judged cutoff k > D) for the runs that return fewer than k documents."""
    ks = [m.cutoff for m in measures if isinstance(m, Judged)]
    out: dict[str, tuple[int, int]] = {}
    for e in evaluations:
        depth = max(e.n_results.values(), default=0)
        deeper = [k for k in ks if k > depth]
        if deeper:
            out[e.run_name] = (depth, max(deeper))
    return out


def _unique_names(refs: list[RunRef]) -> list[RunRef]:
    """Run names made unique: a repeated name (two files with one tag) becomes the file path."""
    counts: dict[str, int] = {}
    for r in refs:
        counts[r.name] = counts.get(r.name, 0) + 1
    return [r if counts[r.name] == 1 else dataclasses.replace(r, name=r.location) for r in refs]


def _mark_pool_contributors(
    refs: list[RunRef], qref: QrelsRef, open_store: StoreOpener | None
) -> tuple[list[RunRef], list[str]]:
    """Stored runs that built the pool the (published) qrels came from get ``pool_depth``/``pools``; one note each."""
    if qref.origin != "stored" or open_store is None or not any(r.origin == "stored" for r in refs):
        return refs, []
    from workbench.services.runs.pool_topics import pool_contributors

    contributors = pool_contributors(open_store(), qref.name)
    out, notes = [], []
    for r in refs:
        c = contributors.get(r.location) if r.origin == "stored" else None
        if c is None:
            out.append(r)
            continue
        out.append(dataclasses.replace(r, pool_depth=c.depth, pools=c.pools))
        notes.append(c.describe(qref.name))
    return out, notes


@dataclass(frozen=True)
class Resampling:
    """The paired tests' resampling (``scoring.compare``).

    Attributes:
        n_resamples: resamples of the permutation test and the bootstrap (>= 1).
        seed: random seed of both.
        confidence: confidence level of the bootstrap interval (0 < c < 1).
    """

    n_resamples: int = 10_000
    seed: int = 0
    confidence: float = 0.95


def compare_runs(
    request: ScoreRequest, resampling: Resampling | None = None, env: ScoreEnv | None = None,
) -> tuple[ScoreReport, Comparison, tuple[SliceComparison, ...]]:
    """Score two runs on one measure over common topics and compare the second (B) with the first (A).

    Args:
        request: two runs (A then B) and one measure; ``request.slicing.min_topics`` is the fewest
            common topics the paired tests run on (with fewer they are refused: ``Comparison.refused``,
            the deltas still listed) and the fewest a slice needs; ``slicing.by``: the comparison per
            slice, Holm-adjusted over the slices. Nothing is recorded; a topic set's use is, as
            ``compare``.
        resampling: the tests' resampling (default ``Resampling()``).
        env: as ``score``.

    Returns:
        (the score report of both runs, the ``Comparison``, the per-slice comparisons of every ``by``
        key in order, overall rows included).

    Raises:
        As ``score`` and ``scoring.compare.compare``; ValidationError: not two runs or not one measure.
    """
    from workbench.scoring.compare import compare
    from workbench.scoring.slices import compare_slices

    rs = resampling or Resampling()
    env = env or ScoreEnv()
    _check_two_runs_one_measure(request)
    if estimated_measure(request) is not None:
        raise ValidationError(f"compare: {request.measures[0]} is an estimated measure: use compare_estimated")
    request = dataclasses.replace(request, output=dataclasses.replace(request.output, record=False, command="compare"))
    report = score(request, env)
    a, b = report.evaluations
    m = report.measures[0]
    k = request.slicing.min_topics
    comparison = compare(a, b, m, n_resamples=rs.n_resamples, seed=rs.seed, confidence=rs.confidence, min_topics=k)
    rows: list[SliceComparison] = []
    for key in report.slice_keys.values():
        rows.extend(compare_slices(a, b, m, key, min_topics=k, n_resamples=rs.n_resamples, seed=rs.seed,
                                   confidence=rs.confidence))
    if report.topic_set is not None and env.open_store is not None:
        env.open_store().evaluations.record_topic_set_use(report.topic_set, "compare", [a.run_name, b.run_name],
                                              report.qrels.recorded_name, evaluator_version=EVALUATOR_VERSION,
                                              git_commit=report.git_commit)
    return report, comparison, tuple(rows)


def _check_two_runs_one_measure(request: ScoreRequest) -> None:
    if len(request.runs) != 2 or len(request.measures) != 1:
        raise ValidationError(f"compare: expected two runs and one measure, found {len(request.runs)} run(s) and "
                              f"{len(request.measures)} measure(s)")


def estimated_measure(request: ScoreRequest) -> EstimatedMeasure | None:
    """The request's one measure when it is estimated from a judged sample (``Rhat@20``), else None.

    Raises:
        ValidationError, UnknownNameError: a bad measure name.
    """
    from workbench.scoring.measures import EstimatedMeasure, parse_measure

    if len(request.measures) != 1 or "@" not in request.measures[0]:
        return None
    m = parse_measure(request.measures[0])
    return m if isinstance(m, EstimatedMeasure) else None


def compare_estimated(request: ScoreRequest, confidence: float = 0.95,
                      env: ScoreEnv | None = None) -> tuple[ScoreReport, EstimatedChange]:
    """Compare two runs on an estimated measure (``Rhat@20``, ``Rhat_micro@20``, ``Phat@10``) of a judged sample.

    Both runs are scored against the request's qrels version, which must be a sample's; the change B - A of the
    estimate and its interval come from ``scoring.estimate_compare`` (the design variance of the difference,
    linearised jointly: both runs are estimated from the same sampled documents; the topics held fixed).
    Nothing is recorded; a topic set's use is, as ``compare_runs``'s.

    Args:
        request: two runs (A then B) and one estimated measure; no ``slicing.by``.
        confidence: the interval's level, in (0, 1).
        env: as ``score``.

    Returns:
        (the score report of both runs, with their estimates; the ``EstimatedChange``).

    Raises:
        As ``score``; NotASampleError: the qrels are not a sample's; ValidationError: not two runs, not one
        estimated measure, or slices asked for.
    """
    from workbench.errors import UsageError
    from workbench.scoring.estimate_compare import estimated_change

    env = env or ScoreEnv()
    _check_two_runs_one_measure(request)
    m = estimated_measure(request)
    if m is None:
        raise ValidationError(f"compare_estimated: expected an estimated measure such as Rhat@20, found "
                              f"{request.measures[0]}; use compare_runs")
    if request.slicing.by:
        raise UsageError(f"--by: {m} is estimated from a judged sample and has no per-slice estimates here; "
                         f"compare it without --by (or compare the pooled {m.pooled} by slice).")
    request = dataclasses.replace(request, output=dataclasses.replace(request.output, record=False, command="compare"))
    report = score(request, env)
    assert report.sample is not None and len(report.estimates) == 2  # the restrict step refused anything else
    a, b = report.estimates
    change = estimated_change(a, b, report.sample.sq, m, confidence=confidence)
    if report.topic_set is not None and env.open_store is not None:
        env.open_store().evaluations.record_topic_set_use(report.topic_set, "compare", [a.run, b.run],
                                                          report.qrels.recorded_name,
                                                          evaluator_version=EVALUATOR_VERSION,
                                                          git_commit=report.git_commit)
    return report, change


def find_misses(request: ScoreRequest, k: int, env: ScoreEnv | None = None) -> tuple[ScoreReport, list[RelevantDoc]]:
    """Every relevant (topic, document) the request's one run did not return within ``k``.

    The run is scored at R@k only (the request's measures are replaced), nothing is recorded, and the
    header carries the git commit as a recorded score's does (command ``misses``).

    Returns:
        (the R@k score report, the misses in topic then grade order, each with the rank where the run
        found it beyond k, or None).

    Raises:
        As ``score``.
    """
    request = dataclasses.replace(request, measures=(f"R@{k}",), cutoffs=(), output=dataclasses.replace(
        request.output, record=False, command="misses"))
    report = score(request, env)
    return report, report.evaluations[0].misses(k)
