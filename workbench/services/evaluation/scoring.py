"""Scoring services for the CLI and the app: resolve runs and qrels, score, record, compare.

A run reference is a run file path (TREC text or Parquet) or a stored run
name; a qrels reference is a qrels file path (TREC text or Parquet) or a stored
qrels version name (a path that exists wins). Files are scored without a store. Every ``ScoreReport`` carries
the lineage a number needs: qrels version (name and content hash), collection
version, run names and where they came from, the evaluator version, the
relevance threshold and the missing-topic policy.

With several runs and ``missing="exclude"``, the topics missing from any run
are left out of every run's averages, so one report averages all runs over the
same topics (``ScoreReport.topics``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import (
    UnknownNameError,
    UnknownOptionValueError,
    UsageError,
    ValidationError,
    WorkbenchError,
)
from workbench.hashing import qrels_content_hash
from workbench.ranking import natural_key
from workbench.scoring.measures import (
    DEFAULT_CUTOFFS,
    Judged,
    Measure,
    default_measures,
    parse_measures,
)
from workbench.scoring.qrels_checks import positives_only, positives_only_warning
from workbench.scoring.results import (
    MIN_TOPICS,
    SCORER_ID,
    Evaluation,
    MissingPolicy,
    RelevantDoc,
    check_policy,
    topic_value_list,
    value_rows,
)
from workbench.scoring.small import SmallEvaluator, SmallRun
from workbench.scoring.validity import Completion, TopicCoverage
from workbench.services.evaluation.refs import Progress, QrelsRef, RunRef, RunSource, StoreOpener
from workbench.version import __version__

if TYPE_CHECKING:
    from workbench.scoring.abstention import NoAnswerResult
    from workbench.scoring.columns import QrelsColumns, RankedRun
    from workbench.scoring.compare import Comparison
    from workbench.scoring.eligibility import Eligibility, RestrictedQrels, RunEligibility
    from workbench.scoring.evaluate import Evaluator
    from workbench.scoring.idaudit import IdAudit
    from workbench.scoring.slices import SliceComparison, SliceKey, SliceRow
    from workbench.store import Store
    from workbench.store.evaluations import EvaluationRow
    from workbench.store.topic_sets import TopicSetInfo

EVALUATOR_VERSION = f"workbench {__version__} {SCORER_ID}"
"""Recorded with every evaluation: the package version and the scorer implementation."""


_DEFAULT_FILTER_KEY = "filter"
"""``scoring.eligibility.DEFAULT_FILTER_KEY`` (a test pins them equal), known here without importing that module."""


@dataclass(frozen=True)
class ScoreReport:
    """Everything one ``workbench score`` prints.

    Attributes:
        qrels: the qrels used.
        runs: the runs, in the order given.
        evaluations: one per run, same order.
        measures: the measures, in report order.
        rel: the relevance threshold (inclusive).
        missing: the missing-topic policy.
        trust_file_order: whether run files were ordered by their rank column.
        evaluator_version: ``EVALUATOR_VERSION``.
        created_at: ISO 8601 time of scoring (UTC).
        evaluation_ids: ids of the recorded evaluations (empty when not recorded).
        warnings: things a reader of the numbers should know.
        seconds: wall time of the scoring, per run.
        completion: each run's completion over the eligible topics.
        coverage: evaluated topics against the eligible ones (the subset notice).
        audits: the identifier audit, one per collection version (empty when none could be made).
        audit_note: why some or all runs were not audited ("" when all were).
        topic_set: the topic set scored (None when none).
        slices: run -> key -> slice rows (``--by``), in run and key order.
        slice_keys: key -> the partition used (what the values mean).
        git_commit: the workbench checkout's commit ("" when not a checkout, or when a
            plain ``score`` records nothing: it is looked up for recorded evaluations,
            topic-set uses, ``compare`` and ``gate``).
    """

    qrels: QrelsRef
    runs: tuple[RunRef, ...]
    evaluations: tuple[Evaluation, ...]
    measures: tuple[Measure, ...]
    rel: int
    missing: MissingPolicy
    trust_file_order: bool
    evaluator_version: str
    created_at: str
    evaluation_ids: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    seconds: tuple[float, ...] = field(default=())
    completion: tuple[Completion, ...] = ()
    coverage: TopicCoverage | None = None
    audits: tuple[IdAudit, ...] = ()
    audit_note: str = ""
    topic_set: TopicSetInfo | None = None
    slices: Mapping[str, Mapping[str, tuple[SliceRow, ...]]] = field(default_factory=dict)
    slice_keys: Mapping[str, SliceKey] = field(default_factory=dict)
    git_commit: str = ""
    eligibility: tuple[RunEligibility | None, ...] = ()
    no_answer: tuple[NoAnswerResult, ...] = ()
    no_answer_source: str = ""

    def header(self) -> dict[str, object]:
        """The lineage block of every rendering (JSON-ready)."""
        cov = self.coverage
        return {
            "notice": cov.notice() if cov else "",
            "qrels": dataclasses.asdict(self.qrels),
            "runs": [r.lineage() for r in self.runs],
            "evaluator_version": self.evaluator_version,
            "git_commit": self.git_commit,
            "topic_set": self.topic_set.ref if self.topic_set else "",
            "topic_set_protected": bool(self.topic_set and self.topic_set.protected),
            "topics_eligible": cov.n_eligible if cov else None,
            "topics_evaluated": cov.n_evaluated if cov else None,
            "completion": [{"run": c.run, "rate": c.rate, "n_topics": c.n_topics, "ok": c.n_ok, "empty": c.n_empty,
                            "error": c.n_error,
                            "failures": [[f.topic_id, f.status, f.message, f.latency_ms] for f in c.failures]}
                           for c in self.completion],
            "id_audit": [audit_json(a) for a in self.audits],
            "id_audit_note": self.audit_note,
            "rel": self.rel,
            "missing": self.missing,
            "trust_file_order": self.trust_file_order,
            "measures": [str(m) for m in self.measures],
            "created_at": self.created_at,
            "evaluation_ids": list(self.evaluation_ids),
            "warnings": list(self.warnings),
            "eligibility": self.eligibility_header(),
            "no_answer": self.no_answer_header(),
        }

    def no_answer_header(self) -> dict[str, object] | None:
        """The no-answer block (``services.evaluation.no_answer.no_answer_json``; None when no topic is marked)."""
        if not self.no_answer:
            return None
        from workbench.services.evaluation.no_answer import no_answer_json

        return no_answer_json(self.no_answer, self.no_answer_source)

    def eligibility_header(self) -> dict[str, object] | None:
        """The eligibility block: filter key and digest, and per run its leaks and ineligible gold (None: unfiltered)."""
        found = [(r, e) for r, e in zip(self.runs, self.eligibility, strict=False) if e is not None]
        if not found:
            return None
        first = found[0][1]
        return {"filter_key": first.filter_key, "filters_sha256": first.filters_digest,
                "n_filtered_topics": first.n_filtered_topics,
                "ineligible_gold": first.restricted.n_ineligible_gold,
                "leaks_total": sum(e.leaks.total for _, e in found),
                "runs": {r.name: e.as_dict() for r, e in found}}

    @property
    def topics(self) -> tuple[str, ...]:
        """Topics of the first evaluation (all runs share them under ``exclude`` and ``zero``)."""
        return self.evaluations[0].topics if self.evaluations else ()


def audit_json(a: IdAudit) -> dict[str, object]:
    """An ``IdAudit`` as JSON (shares at full precision, every missing id, near misses)."""
    def cov(c: object) -> dict[str, object]:
        from workbench.scoring.idaudit import IdCoverage

        assert isinstance(c, IdCoverage)
        return {"what": c.what, "n_ids": c.n_ids, "n_present": c.n_present, "share": c.share,
                "missing": list(c.missing), "near_misses": [[n.doc_id, n.rule, list(n.matches)] for n in c.near_misses],
                "examined": c.examined}

    return {"collection": a.collection, "collection_version": a.collection_version, "relevant": cov(a.relevant),
            "runs": [cov(r) for r in a.runs]}


def resolve_measures(measures: Sequence[str] | None, cutoffs: Sequence[int] | None) -> tuple[Measure, ...]:
    """The measures of a report.

    Args:
        measures: names; a name without ``@k`` (``R``, ``nDCG(dcg='exp-log2')``)
            is expanded to every cutoff. None or empty = the default report.
        cutoffs: the k of the default R@k rows and of expanded names
            (default 5, 10, 20, 50, 100).

    Raises:
        ValidationError, UnknownNameError: a bad name or cutoff.

    Example:
        >>> [str(m) for m in resolve_measures(["R", "nDCG@10"], [10, 100])]
        ['R@10', 'R@100', 'nDCG@10']
    """
    ks = sorted(set(cutoffs)) if cutoffs else list(DEFAULT_CUTOFFS)
    if any(k < 1 for k in ks):
        raise ValidationError(f"expected cutoffs k >= 1, found {ks}. Write e.g. --k 10,100.")
    if not measures:
        return default_measures(ks)
    names: list[str] = []
    for name in measures:
        names.extend([name] if "@" in name else [f"{name}@{k}" for k in ks])
    return parse_measures(names)


def _not_found(ref: str, kind: str, e: UnknownNameError) -> UnknownNameError:
    """Neither a file nor a stored name: say both, so a mistyped path is not read as a name."""
    known = ", ".join(e.known[:20]) + (" ..." if len(e.known) > 20 else "") or "(none)"
    err = UnknownNameError(kind, ref, e.known)
    err.args = (f"{ref}: no such file, and no stored {kind} has that name; stored: {known}",)
    return err


def load_qrels(ref: str, open_store: StoreOpener | None) -> tuple[QrelsRef, QrelsColumns]:
    """Resolve a qrels reference (file path first, then stored version name).

    Raises:
        InputFormatError: the file breaks the qrels format.
        UnknownNameError: neither a file nor a stored version (lists the stored ones).
    """
    from workbench.formats import parquet, trec
    from workbench.scoring.columns import qrels_columns_from_mapping

    path = Path(ref)
    if ref == "-" or (path.exists() and not path.is_dir()):  # '-' is stdin; a FIFO or device: the reader refuses it
        qrels = parquet.read_qrels(path) if parquet.is_parquet(path) else trec.read_qrels(ref if ref == "-" else path)
        return (
            QrelsRef(ref, "file", qrels_content_hash(qrels), n_topics=len(qrels),
                     n_entries=sum(len(d) for d in qrels.values())),
            qrels_columns_from_mapping(qrels),
        )
    if open_store is None:
        raise UnknownNameError("qrels file or version", ref, [])
    store = open_store()
    try:
        info = store.qrels.get_qrels_info(ref)
    except UnknownNameError as e:
        raise _not_found(ref, "qrels version", e) from None
    qrels = store.qrels.get_qrels(ref)
    return (
        QrelsRef(ref, "stored", info.content_hash, info.collection, info.collection_version,
                 info.n_topics, info.n_entries),
        qrels_columns_from_mapping(qrels),
    )


def load_run(ref: str, open_store: StoreOpener | None, *, trust_file_order: bool = False) -> tuple[RunRef, RankedRun]:
    """Resolve a run reference (file path first, then stored run name) into a ranked run.

    Raises:
        InputFormatError: the file breaks the run format.
        UnknownNameError: neither a file nor a stored run (lists the stored ones).
    """
    from workbench.formats.columnar import read_run_columns, run_columns_from_arrow
    from workbench.scoring.columns import rank_run

    path = Path(ref)
    if ref == "-" or (path.exists() and not path.is_dir()):  # '-' is stdin; a FIFO or device: the reader refuses it
        cols = read_run_columns(ref if ref == "-" else path, trust_file_order=trust_file_order)
        rr = rank_run(cols, reuse=True)
        return _with_status_file(RunRef(cols.name or path.stem, "file", ref, n_lines=cols.n_lines), rr), rr
    if open_store is None:
        raise UnknownNameError("run file or stored run", ref, [])
    store = open_store()
    try:
        info = store.runs.get_run_info(ref)
    except UnknownNameError as e:
        raise _not_found(ref, "run", e) from None
    rows = store.runs.get_run_topic_statuses(ref)
    failed = tuple(sorted((r.topic_id for r in rows if r.status != "ok"), key=natural_key))
    cols = run_columns_from_arrow(store.runs.run_entries_arrow(ref), ref)
    rr = rank_run(cols, reuse=True)
    return RunRef(ref, "stored", ref, info.collection, info.collection_version, cols.n_lines, failed,
                  statuses={r.topic_id: r.status for r in rows},
                  messages={r.topic_id: r.message for r in rows if r.message},
                  latencies={r.topic_id: r.latency_ms for r in rows if r.latency_ms is not None},
                  content_hash=store.runs.get_run_content_hash(ref)), rr


def _with_status_file(ref: RunRef, rr: RankedRun) -> RunRef:
    """A run file's status side file (``<file>.status.tsv``), when there is one, applied to its RunRef.

    Raises:
        InputFormatError: the status file is malformed or contradicts the run (file:line).
    """
    from workbench.formats.status import check_against_run, read_status_file, sidecar_path

    side = sidecar_path(ref.location)
    if not side.is_file():
        return ref
    rows = read_status_file(side)
    check_against_run(side, rows, rr.n_results())
    failed = tuple(sorted((t for t, r in rows.items() if r.status != "ok"), key=natural_key))
    return dataclasses.replace(
        ref, failed_topics=failed, statuses={t: r.status for t, r in rows.items()},
        messages={t: r.error for t, r in rows.items() if r.error},
        latencies={t: r.latency_ms for t, r in rows.items() if r.latency_ms is not None}, status_file=str(side))


def utc_now_seconds() -> str:
    """Now in UTC, ISO 8601 to the second (``2026-12-01T20:30:00+00:00``): what
    ``datetime.now(UTC).isoformat(timespec="seconds")`` gives, without importing datetime (start-up)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())


def small_runs(run_refs: Sequence[str], qrels_ref: str) -> list[tuple[SmallRun, float]] | None:
    """The runs as ``SmallRun``s (with each one's reading time in seconds) when every input is a small plain file.

    Small: the qrels file and the run files are regular TREC text files
    (not Parquet, no status side file), each run file read by
    ``formats.plain_run.read_small_run`` and all of them together at most
    ``SMALL_RUN_BYTES``, the qrels at most as much. Then ``score_runs`` scores
    them with ``scoring.small`` (no numpy); the numbers are the columnar
    scorer's, bit for bit.

    Returns:
        One (run, seconds) per reference, in order; None when some input is
        not small and plain (nothing is printed: the caller reads them the usual way).
    """
    from workbench.formats.plain_run import SMALL_RUN_BYTES, read_small_run, small_text_file
    from workbench.formats.status import sidecar_path

    if not run_refs or small_text_file(qrels_ref) is None:
        return None
    sizes = [small_text_file(ref) for ref in run_refs]
    if any(n is None for n in sizes) or sum(n or 0 for n in sizes) > SMALL_RUN_BYTES:
        return None
    out: list[tuple[SmallRun, float]] = []
    for ref in run_refs:
        if sidecar_path(ref).exists():
            return None
        t0 = time.perf_counter()
        run = read_small_run(ref)
        if run is None:
            return None
        out.append((run, time.perf_counter() - t0))
    return out


def evaluation_rows(e: Evaluation) -> list[EvaluationRow]:
    """The ``evaluations`` table rows of one evaluation (aggregates and per-topic values)."""
    from workbench.store.evaluations import EvaluationRow

    return [EvaluationRow(*row) for row in value_rows(e, per_topic=True)]


def _unique_names(refs: list[RunRef]) -> list[RunRef]:
    """Run names made unique: a repeated name (two files with one tag) becomes the file path."""
    counts: dict[str, int] = {}
    for r in refs:
        counts[r.name] = counts.get(r.name, 0) + 1
    return [r if counts[r.name] == 1 else dataclasses.replace(r, name=r.location) for r in refs]


def score_runs(
    run_refs: Sequence[str],
    qrels_ref: str,
    *,
    open_store: StoreOpener | None = None,
    measures: Sequence[str] | None = None,
    cutoffs: Sequence[int] | None = None,
    rel: int = 1,
    missing: str = "fail",
    trust_file_order: bool = False,
    record: bool | None = None,
    progress: Progress | None = None,
    topic_set: str | None = None,
    by: Sequence[str] = (),
    collection: str | None = None,
    slice_min_topics: int = MIN_TOPICS,
    exclude_topics: Sequence[str] = (),
    command: str = "score",
    qrels: tuple[QrelsRef, QrelsColumns] | None = None,
    min_id_coverage: float = 1.0,
    run_sources: Sequence[RunSource] | None = None,
    keep_documents: bool = True,
    before_record: Callable[[ScoreReport], None] | None = None,
    filters: str = "auto",
    filter_key: str = "filter",
    strict_eligibility: bool = False,
    no_answer: str = "off",
    no_answer_file: Path | None = None,
    answer_threshold: float | None = None,
) -> ScoreReport:
    """Score runs against qrels, optionally recording the results in the store.

    Eligibility (``scoring.eligibility``): when the collection's topics carry
    filters (topic metadata ``filter_key``), each filtered topic's relevant set
    is restricted to its eligible documents under the document metadata of the
    collection version the runs were produced over; judged-relevant documents
    that are ineligible are reported per topic (ineligible gold, an error with
    ``strict_eligibility``); every ineligible document a run returns for a
    filtered topic is a leak, counted per topic and run and within each cutoff
    (``ScoreReport.eligibility``; in the JSON output under ``header.eligibility``
    and each run's ``eligibility``).

    Before scoring, the identifier audit (``services.evaluation.validity.audit_ids``) and
    each run's completion are measured; a relevant-id coverage below 100% is a
    warning. A report of fewer than ``SUBSET_SHARE`` of the eligible topics says
    so in its first line (``ScoreReport.coverage``).

    Args:
        run_refs: run file paths or stored run names (at least one).
        qrels_ref: a qrels file path or a stored qrels version name.
        open_store: returns the store; None when only files are used.
        measures: measure names (see ``resolve_measures``); None = the default report.
        cutoffs: the k of the default R@k rows (and of names without ``@k``).
        rel: inclusive minimum grade of a relevant document.
        missing: ``fail`` | ``zero`` | ``exclude`` for qrels topics a run lacks.
        trust_file_order: order run files by their rank column (stored runs are
            always in canonical order).
        record: store the results in ``evaluations``; None = when a store is
            available and both the qrels and all runs are stored.
        progress: receives ``[starting]``/``[finished]`` lines.
        topic_set: ``NAME[@N]`` of a stored topic set: only its topics are scored
            (and the use is recorded).
        by: slice keys (``--by``): each measure per slice of each key.
        collection: ``NAME[@VERSION-PREFIX]``: the collection version run files
            were produced over (for the identifier audit and the topics' texts).
        slice_min_topics: slices with fewer topics are marked too small.
        exclude_topics: topics left out before scoring (e.g. flagged by the leakage check).
        command: what is recorded as the topic set's use (``score``, ``compare``, ``gate``); any command
            but ``score`` puts the git commit in the header even when nothing is recorded (``misses``).
        qrels: the qrels already loaded for ``qrels_ref`` (``load_qrels``), to read them once.
        min_id_coverage: below this share of judged-relevant ids in the collection
            version, the report warns (default 1.0: every one must be there).
        run_sources: one loader per entry of ``run_refs`` (which then only label the
            progress lines), for runs that are not files or stored names (the
            notebook API ``workbench.evaluate``). Each is called when its run's
            turn comes, so runs are read, scored and let go one at a time.
        keep_documents: keep each evaluation's document lists (relevant
            documents with ranks, pool-novel documents). False keeps only the
            numbers (``Evaluation.without_documents``), so memory does not grow
            with the number of runs; for reports that print no lists.
        before_record: called with the report once everything is scored and before
            anything is written to the store (the CLI writes ``--plot`` and the report,
            to ``--out`` or standard output, there), so a failure in it (a full disk)
            leaves the store unchanged. When recording, the report it receives already
            carries the evaluation ids (and git commit, file hashes) then recorded.
        filters: ``auto`` (apply the topics' filters when some topic has one),
            ``on`` (require them) or ``off`` (score unfiltered).
        filter_key: the topic metadata key holding the filters.
        strict_eligibility: fail when a judged-relevant document is ineligible.
        no_answer: ``auto`` (topics marked no-answer in the collection's topic
            metadata, or listed in ``no_answer_file``, are left out of every
            average and evaluated apart: ``ScoreReport.no_answer``) or ``off``
            (the default of the API, compare and gate: topics are scored as the qrels say).
        no_answer_file: a file of no-answer topic ids (with ``no_answer="auto"``).
        answer_threshold: a result answers only when scored above it (no-answer accuracy).

    Returns:
        The ``ScoreReport``.

    Raises:
        MissingTopicsError: ``missing="fail"`` and a run lacks a topic.
        InputFormatError, UnknownNameError, ValidationError: bad input.
        StoreError: recording failed (nothing was recorded).
    """
    from workbench.services.evaluation.provenance import git_commit
    from workbench.services.evaluation.validity import (
        IdAuditor,
        collection_of,
        resolve_topic_set,
        run_completion,
        slice_keys,
        slice_sources,
        topic_texts_and_metadata,
    )

    if not run_refs:
        raise ValidationError("expected at least one run (a run file or a stored run name), found none.")
    if not 0.0 <= min_id_coverage <= 1.0:
        raise ValidationError(f"expected --min-id-coverage between 0 and 1, found {min_id_coverage!r}.")
    policy = check_policy(missing)
    say = progress or (lambda _msg: None)
    ms = resolve_measures(measures, cutoffs)
    # Small plain files, nothing stored or looked up: the pure-Python scorer (no numpy import), same numbers.
    small = None
    if (qrels is None and run_sources is None and topic_set is None and not by and not collection
            and not exclude_topics and not trust_file_order and not record and filters != "on"):
        small = small_runs(run_refs, qrels_ref) if no_answer_file is None and answer_threshold is None else None
    evaluator: Evaluator | SmallEvaluator
    set_info: TopicSetInfo | None = None
    set_topics: tuple[str, ...] = ()
    if small is not None:
        _no_filter_key(filter_key)  # files only: no collection whose topic metadata could hold the key
        from workbench.formats.plain_run import read_small_qrels

        qrels_map = read_small_qrels(qrels_ref)
        if qrels_map is None:  # not the plain dialect: the strict reader reads it or names the bad line
            from workbench.formats import trec

            qrels_map = trec.read_qrels(qrels_ref)
        qref = QrelsRef(qrels_ref, "file", qrels_content_hash(qrels_map), n_topics=len(qrels_map),
                        n_entries=sum(len(d) for d in qrels_map.values()))
        warnings: list[str] = []
        # the positives-only warning is worded once the runs' depths are known (after scoring)
        positives = positives_only((g for docs in qrels_map.values() for g in docs.values()), rel)
        elig, restricted = None, None
        marks = None
        answerable_qrels = {}
        evaluator = SmallEvaluator(qrels_map, ms, rel=rel, missing=policy)
        qrels_topics = evaluator.topic_ids
    else:
        from workbench.scoring.columns import qrels_columns_from_mapping
        from workbench.scoring.evaluate import Evaluator

        qref, qcols = qrels if qrels is not None else load_qrels(qrels_ref, open_store)
        set_info, set_topics = resolve_topic_set(open_store, topic_set)
        warnings = []
        positives = positives_only(qcols.grades, rel)
        elig, restricted = _eligibility_for(open_store, run_refs, qref, qcols, collection, filters=filters,
                                            filter_key=filter_key, rel=rel, warnings=warnings)
        if restricted is not None:
            from workbench.scoring.eligibility import check_no_ineligible_gold

            if strict_eligibility:
                check_no_ineligible_gold(restricted, what=f"qrels {qref.name}")
            qcols = qrels_columns_from_mapping(restricted.qrels)
        marks = None
        if no_answer not in ("auto", "off"):
            raise ValidationError(f"expected no_answer auto or off, found {no_answer!r}")
        if no_answer == "auto":
            from workbench.services.evaluation.no_answer import find_marks

            marks = find_marks(open_store, _marks_collection(open_store, run_refs, qref, collection), no_answer_file,
                               _qrels_mapping(qcols), rel)
            if marks.warning():
                warnings.append(marks.warning())
            if marks.topics:
                exclude_topics = (*exclude_topics, *marks.topics)
            elif no_answer_file is not None or answer_threshold is not None:
                warnings.append("no topic is marked no-answer (topic metadata no_answer, or --no-answer FILE): "
                                "no-answer accuracy is not reported; |R| = 0 is never taken as a mark")
        answerable_qrels = _qrels_mapping(qcols) if marks is not None and marks.topics else {}
        evaluator = Evaluator(qcols, ms, rel=rel, missing=policy)
        qrels_topics = qcols.topic_ids
    eligible = evaluator.eligible_topics()
    restrict: set[str] | None = None
    if set_info is not None:
        wanted = set(set_topics)
        outside = [t for t in set_topics if t not in set(eligible)]
        if outside:
            warnings.append(f"topic set {set_info.ref}: {len(outside)} of its {len(set_topics)} topics are not "
                            f"eligible in these qrels (absent or |R| = 0), e.g. {', '.join(outside[:5])}")
        eligible = tuple(t for t in eligible if t in wanted)
        restrict = set(eligible)
    if exclude_topics:
        # Left out on purpose (e.g. leakage): neither evaluated nor counted as eligible.
        dropped = set(exclude_topics)
        eligible = tuple(t for t in eligible if t not in dropped)
        restrict = set(eligible)

    if run_sources is not None and len(run_sources) != len(run_refs):
        raise ValueError("run_sources must give one loader per run reference")

    def load(i: int) -> tuple[RunRef, RankedRun | SmallRun]:
        ref = run_refs[i]
        t0 = time.perf_counter()
        say(f"[starting] reading run {ref}")
        rr: RankedRun | SmallRun
        if small is not None:  # read already (to choose the scorer): report that reading's time
            rr, seconds_read = small[i]
            t0 -= seconds_read
            run_ref = RunRef(rr.name or Path(ref).stem, "file", ref, n_lines=rr.n_lines)
        elif run_sources is not None:
            run_ref, rr = run_sources[i]()
        else:
            run_ref, rr = load_run(ref, open_store, trust_file_order=trust_file_order)
        say(f"[finished] reading run {ref}: {run_ref.n_lines:,} lines [elapsed] {time.perf_counter() - t0:.2f} s")
        return run_ref, rr

    # Each run's ids are audited and its completion measured as it is read, before it is scored.
    auditor = IdAuditor(qref, evaluator.relevant_doc_ids(eligible), open_store, collection=collection)
    completion: list[Completion] = []

    def load_checked(i: int) -> tuple[RunRef, RankedRun | SmallRun]:
        run_ref, rr = load(i)
        auditor.add_run(run_ref, rr)
        completion.append(run_completion(run_ref, rr, eligible))
        return run_ref, rr

    loaded: list[tuple[RunRef, RankedRun | SmallRun] | None] = [None] * len(run_refs)
    topics: tuple[str, ...] | None = tuple(sorted(restrict, key=natural_key)) if restrict is not None else None
    if policy == "exclude" and len(run_refs) > 1:
        # One topic set for every run: drop the topics any run misses.
        dropped_any: set[str] = set()
        for i in range(len(run_refs)):
            loaded[i] = load_checked(i)
            run_ref, rr = loaded[i]  # type: ignore[misc]
            dropped_any.update(evaluator.missing_topics(rr, run_ref.failed_topics))  # type: ignore[arg-type]
        base = topics if topics is not None else tuple(qrels_topics)
        topics = tuple(t for t in base if t not in dropped_any)
    refs: list[RunRef] = []
    evaluations: list[Evaluation] = []
    seconds: list[float] = []
    run_elig: list[RunEligibility | None] = []
    na_results: list[NoAnswerResult] = []
    cutoffs_all = sorted({m.cutoff for m in ms})
    for i in range(len(run_refs)):
        t0 = time.perf_counter()
        pair = loaded[i] or load_checked(i)
        loaded[i] = None
        run_ref, rr = pair
        # The evaluator and the run come from one side (small_runs + SmallEvaluator, or the columnar pair).
        if isinstance(evaluator, SmallEvaluator):  # makes no document list it would drop
            assert isinstance(rr, SmallRun)
            e = evaluator.evaluate(rr, run_name=run_ref.name, failed_topics=run_ref.failed_topics, topics=topics,
                                   keep_documents=keep_documents)
        else:
            e = evaluator.evaluate(rr, run_name=run_ref.name, failed_topics=run_ref.failed_topics,  # type: ignore[arg-type]
                                   topics=topics)
            if not keep_documents:
                e = e.without_documents()
        if elig is not None and restricted is not None:
            assert not isinstance(rr, SmallRun)  # eligibility is never applied on the small path
            run_elig.append(_run_eligibility(open_store, run_ref, rr, elig, restricted, cutoffs_all))
        else:
            run_elig.append(None)
        if marks is not None and marks.topics:
            from workbench.services.evaluation.no_answer import (
                answerable_topics,
                evaluate_run,
                run_scores,
            )

            scores = run_scores(run_refs[i], run_ref, open_store) if run_sources is None else {
                t: [1.0] * n for t, n in e.n_results.items() if n}  # a loaded run: any result answers
            na_results.append(evaluate_run(scores, marks, answerable_topics(answerable_qrels, marks, rel),
                                           threshold=answer_threshold if run_sources is None else None,
                                           run_name=run_ref.name))
        del pair, rr
        refs.append(run_ref)
        evaluations.append(e)
        seconds.append(time.perf_counter() - t0)
        say(f"[finished] scoring {run_ref.name}: {len(e.topics):,} topics [elapsed] {seconds[-1]:.2f} s")
        warnings.extend(run_warnings(run_ref, e, qref, trust_file_order=trust_file_order))
    if positives:
        warnings.insert(0, f"qrels {qref.name}: {positives_only_warning(rel, _shorter_than_judged(evaluations, ms))}")
    audits, audit_note = auditor.result()
    for a in audits:
        if a.relevant.share < min_id_coverage:
            warnings.append(
                f"ID audit: {a.relevant.n_ids - a.relevant.n_present:,} of {a.relevant.n_ids:,} judged-relevant "
                f"ids are not in collection version {a.collection_version[:12]} (they count as misses; "
                f"coverage {a.relevant.share!r} < {min_id_coverage!r}); see the audit lines")
        for rc in a.runs:
            if rc.share < 1.0:
                warnings.append(f"ID audit: {rc.what}: {len(rc.missing):,} distinct returned ids are not in "
                                f"collection version {a.collection_version[:12]}")
    refs = _unique_names(refs)
    refs, notes = _mark_pool_contributors(refs, qref, open_store)
    warnings.extend(notes)
    evaluations = [
        e if e.run_name == r.name else _renamed(e, r.name) for e, r in zip(evaluations, refs, strict=True)
    ]
    completions = tuple(dataclasses.replace(c, run=r.name) for c, r in zip(completion, refs, strict=True))
    coverage = TopicCoverage(len(eligible), len(evaluations[0].topics) if evaluations else 0,
                             set_info.ref if set_info else "")
    slices: dict[str, dict[str, tuple[SliceRow, ...]]] = {}
    keys: dict[str, SliceKey] = {}
    if by:
        queries, metadata = topic_texts_and_metadata(open_store, collection_of(refs, qref, collection))
        sources = slice_sources(evaluations[0], evaluator.n_relevant(), queries, metadata)
        keys = slice_keys(by, sources, evaluations[0].topics)
        from workbench.scoring.slices import slice_table

        slices = {e.run_name: {k: slice_table(e, sk, min_topics=slice_min_topics) for k, sk in keys.items()}
                  for e in evaluations}
    created_at = utc_now_seconds()
    report = ScoreReport(
        qrels=qref, runs=tuple(refs), evaluations=tuple(evaluations), measures=ms, rel=rel, missing=policy,
        trust_file_order=trust_file_order, evaluator_version=EVALUATOR_VERSION, created_at=created_at,
        warnings=tuple(warnings), seconds=tuple(seconds), completion=completions, coverage=coverage,
        audits=audits, audit_note=audit_note, topic_set=set_info, slices=slices, slice_keys=keys,
        # The commit costs two git calls: asked for only when something is recorded (or by the gate).
        git_commit=git_commit() if command != "score" or record or set_info is not None else "",
        eligibility=tuple(run_elig),
        no_answer=tuple(dataclasses.replace(r, run_name=ref.name) for r, ref in zip(na_results, refs, strict=False)),
        no_answer_source=marks.source if marks is not None else "",
    )
    all_stored = qref.origin == "stored" and all(r.origin == "stored" for r in refs)
    if record is None:
        record = open_store is not None and all_stored
    if record:
        if open_store is None:
            raise WorkbenchError("cannot record evaluations without a workbench store; drop --record or pass --db")
        # The ids are chosen now, so that the output written before recording (before_record) can show them.
        import uuid

        report = dataclasses.replace(_with_file_hashes(report), git_commit=git_commit(),
                                     evaluation_ids=tuple(uuid.uuid4().hex for _ in refs))
    if before_record is not None:  # the plot and the report: a failure there leaves the store unchanged
        before_record(report)
    if record:
        assert open_store is not None
        ids = tuple(record_report(report, open_store()))
        report = dataclasses.replace(report, evaluation_ids=ids)
    if set_info is not None and command == "score" and open_store is not None:
        open_store().evaluations.record_topic_set_use(set_info, "score", [r.name for r in refs], qref.recorded_name,
                                          outcome=",".join(report.evaluation_ids),
                                          evaluator_version=EVALUATOR_VERSION, git_commit=report.git_commit)
    return report


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
    for m, tm in e.per_topic.items():
        if isinstance(m, Judged):
            continue
        values = topic_value_list(tm, e.topics)
        if all(map(math.isfinite, values)):  # the usual case, checked in C
            continue
        bad = [t for t, v in zip(e.topics, values, strict=True) if not math.isfinite(v)]
        if bad:
            out.append(
                f"run {run_ref.name!r}: {m} is not a finite number for {len(bad)} topic(s) "
                f"({', '.join(bad[:10])}{' ...' if len(bad) > 10 else ''}): a grade too large for its gain "
                "(2^grade - 1 overflows); shown as - (null in JSON). Use grades on a small scale or dcg='log2'")
    for jm, none in e.undefined_judged().items():
        out.append(
            f"run {run_ref.name!r}: {jm} is undefined for {len(none)} topic(s) with no returned documents "
            f"({', '.join(none[:10])}{' ...' if len(none) > 10 else ''}): left out of its mean, which is over "
            f"{e.aggregates[jm].n_topics} topic(s)")
    return out


def _marks_collection(open_store: StoreOpener | None, run_refs: Sequence[str], qref: QrelsRef,
                      collection: str | None) -> str:
    """The collection whose topic metadata marks no-answer topics: --collection, the stored qrels', a stored run's."""
    name = (collection or "").split("@")[0] or qref.collection
    if name or open_store is None:
        return name
    for ref in run_refs:
        if not Path(ref).is_file() and open_store().runs.has_run(ref):
            return open_store().runs.get_run_info(ref).collection
    return ""


def _qrels_mapping(q: QrelsColumns) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {t: {} for t in q.topic_ids}
    for code, doc, grade in zip(q.topic_codes.tolist(), q.doc_ids, q.grades.tolist(), strict=True):
        out[q.topic_ids[code]][doc] = int(grade)
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


def _no_filter_key(filter_key: str) -> None:
    """A --filter-key given where there is no collection whose topic metadata could hold it."""
    if filter_key == _DEFAULT_FILTER_KEY:  # the usual case, without importing the eligibility rules
        return
    from workbench.scoring.eligibility import DEFAULT_FILTER_KEY

    if filter_key != DEFAULT_FILTER_KEY:
        raise UsageError(f"--filter-key {filter_key!r}: the filters are topic metadata of a collection; score stored "
                         "runs or qrels, or pass --collection")


def _check_filter_key(store: Store, collection: str, filter_key: str) -> None:
    """Refuse a --filter-key no topic of ``collection`` has (the default key may be absent: no filters).

    Raises:
        UnknownOptionValueError: listing the collection's topic metadata keys (and saying when the key is
            a document metadata key instead).
    """
    from workbench.scoring.eligibility import DEFAULT_FILTER_KEY

    if filter_key == DEFAULT_FILTER_KEY:
        return
    topic_keys = store.metadata.topic_metadata_keys(collection)
    if filter_key in topic_keys:
        return
    doc_keys = store.metadata.document_metadata_keys(collection)
    e = UnknownOptionValueError(f"topic metadata key of collection {collection!r}", filter_key, topic_keys)
    hint = (f". {filter_key!r} is a document metadata key; --filter-key names the topic metadata key that holds "
            "each topic's filter expression") if filter_key in doc_keys else ""
    e.args = (f"--filter-key: {e.args[0]}{hint}",)
    raise e


def _eligibility_for(
    open_store: StoreOpener | None,
    run_refs: Sequence[str],
    qref: QrelsRef,
    qcols: QrelsColumns,
    collection: str | None,
    *,
    filters: str,
    filter_key: str,
    rel: int,
    warnings: list[str],
) -> tuple[Eligibility | None, RestrictedQrels | None]:
    """The eligibility the report is scored under, and the restricted qrels (None, None when unfiltered).

    The collection version whose document metadata decides is the stored runs'
    (when they agree), else the qrels', else the collection's latest.
    """
    from workbench.services.vectors.eligibility import collection_eligibility

    if filters not in ("auto", "on", "off"):
        raise ValidationError(f"expected --filters auto, on or off, found {filters!r}")
    if filters == "off":
        return None, None
    if open_store is None:
        if filters == "on":
            raise ValidationError("filtered scoring needs the workbench store (topic filters and document metadata); "
                                  "pass --db, or score with --filters off")
        return None, None
    named = [ref for ref in run_refs if not Path(ref).is_file()]
    if not named and qref.origin != "stored" and not collection:
        # Files only: no collection to take filters from, and the store is not opened at all.
        if filters == "on":
            raise ValidationError("filtered scoring needs a collection: score stored runs or qrels, or pass --collection")
        _no_filter_key(filter_key)
        return None, None
    store = open_store()
    versions: list[tuple[str, str]] = []
    for ref in named:
        if store.runs.has_run(ref):
            info = store.runs.get_run_info(ref)
            versions.append((info.collection, info.collection_version))
    name = (collection or "").split("@")[0] or qref.collection or (versions[0][0] if versions else "")
    if not name:
        if filters == "on":
            raise ValidationError("filtered scoring needs a collection: score stored runs or qrels, or pass --collection")
        _no_filter_key(filter_key)
        return None, None
    _check_filter_key(store, name, filter_key)
    distinct = sorted({v for c, v in versions if c == name})
    version = distinct[0] if len(distinct) == 1 else (qref.collection_version or None)
    if len(distinct) > 1:
        warnings.append(f"runs were produced over {len(distinct)} versions of {name!r}; eligibility uses the document "
                        f"metadata of {'version ' + version[:12] if version else 'the latest version'}")
    from workbench.scoring.filters import UnknownMetadataKeyError

    try:
        elig = collection_eligibility(store, name, version, key=filter_key, require=filters == "on")
    except UnknownMetadataKeyError as e:
        # Name what was read: the runs' collection version, which may predate the document metadata.
        latest = store.collections.latest_collection_version(name)
        which = f"version {version[:12]}" if version else "the latest version"
        later = (f"; the latest version {latest[:12]} came later (metadata imports make a new version): re-run the "
                 "retrievers over it" if version and latest and latest != version else "")
        raise ValidationError(
            f"eligibility of collection {name!r} {which} (the version the runs were produced over): {e}{later}, "
            "or score with --filters off") from None
    if elig is None:
        return None, None
    from workbench.scoring.eligibility import restrict_qrels

    restricted = restrict_qrels(_qrels_mapping(qcols), elig, rel=rel)
    if restricted.ineligible_gold:
        warnings.append(
            f"ineligible gold: {restricted.n_ineligible_gold} judged-relevant document(s) in "
            f"{len(restricted.ineligible_gold)} topic(s) are ineligible under their topic's filter (topic metadata {filter_key!r}); they "
            "are left out of the relevant sets (a data problem: fix the filter, the metadata or the judgment; "
            "--strict-eligibility fails on them)")
    return elig, restricted


def _run_eligibility(
    open_store: StoreOpener | None,
    run_ref: RunRef,
    rr: RankedRun,
    elig: Eligibility,
    restricted: RestrictedQrels,
    cutoffs: Sequence[int],
) -> RunEligibility:
    """Leaks of one run and its filter mode / short topics (from the stored run's params)."""
    from workbench.scoring.columns import unpack_ids

    ranked: dict[str, list[str]] = {}
    for code, topic_id in enumerate(rr.topic_ids):
        if elig.is_filtered(topic_id):
            lo, hi = int(rr.starts[code]), int(rr.starts[code + 1])
            ranked[topic_id] = unpack_ids(rr.doc_words[lo:hi]) if hi > lo else []
    from workbench.scoring.eligibility import RunEligibility, find_leaks

    leaks = find_leaks(ranked, elig, cutoffs)
    mode, short, depth = "", 0, 0
    if run_ref.origin == "stored" and open_store is not None:
        info = open_store().runs.get_run_info(run_ref.location)
        f = info.params.get("filter")
        depth = info.depth
        if isinstance(f, dict) and f.get("key") == elig.filters.key:
            mode, short = str(f.get("mode", "")), int(f.get("topics_short", 0))
    return RunEligibility(elig.filters.key, elig.filters.digest, run_ref.collection_version,
                          len(elig.eligible), restricted, leaks, mode, short, depth)


def _with_file_hashes(report: ScoreReport) -> ScoreReport:
    """The report with each run file's sha256 filled in (stored runs carry their content hash)."""
    from workbench.services.evaluation.provenance import file_sha256

    runs = tuple(r if r.content_hash or r.origin != "file" else dataclasses.replace(r, content_hash=file_sha256(r.location))
                 for r in report.runs)
    return dataclasses.replace(report, runs=runs)


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


def _renamed(e: Evaluation, name: str) -> Evaluation:
    return dataclasses.replace(e, run_name=name)


def record_report(report: ScoreReport, store: Store, extra_params: Mapping[str, object] | None = None,
                  ) -> list[str]:
    """Record every evaluation of ``report`` (one transaction per run); returns the ids.

    The ids are ``report.evaluation_ids`` when given (one per run, chosen before the
    output was written), else new random ones.

    Each evaluation's params keep the lineage: threshold, policy, qrels hash,
    collection versions, the run's origin, location and content hash, the
    evaluator's git commit, the topic set and the topic counts; ``extra_params``
    are added (e.g. the retrieval unit and the mappings of ``services.evaluation.units``).
    """
    ids: list[str] = []
    for run_ref, e in zip(report.runs, report.evaluations, strict=True):
        params: dict[str, object] = {**(extra_params or {}),
            "rel": report.rel,
            "missing": report.missing,
            "trust_file_order": report.trust_file_order,
            "qrels_content_hash": report.qrels.content_hash,
            "qrels_origin": report.qrels.origin,
            "collection_version": report.qrels.collection_version,
            "run_origin": run_ref.origin,
            "run_location": run_ref.location,
            "run_collection_version": run_ref.collection_version,
            "run_content_hash": run_ref.content_hash,
            "git_commit": report.git_commit,
            "topic_set": report.topic_set.ref if report.topic_set else "",
            "topic_set_protected": bool(report.topic_set and report.topic_set.protected),
            "topics": len(e.topics),
            "topics_eligible": report.coverage.n_eligible if report.coverage else len(e.topics),
            "excluded_topics": list(e.excluded_topics),
            "missing_topics": list(e.missing_topics),
            "ignored_topics": len(e.ignored_topics),
            "duplicates": e.n_duplicates,
            "measures": [str(m) for m in e.measures],
        }
        na = next((r for r in report.no_answer if r.run_name == run_ref.name), None)
        if na is not None:
            params["no_answer"] = {"source": report.no_answer_source, "threshold": na.threshold,
                                   "topics": list(na.no_answer), "abstained": list(na.abstained),
                                   "answered": list(na.answered), "no_answer_accuracy": na.accuracy,
                                   "false_answer_rate": na.false_answer_rate,
                                   "answerable_abstained": list(na.answerable_abstained),
                                   "n_answerable": len(na.answerable)}
        el = report.eligibility[len(ids)] if len(report.eligibility) > len(ids) else None
        if el is not None:
            params["eligibility"] = {"filter_key": el.filter_key, "filters_sha256": el.filters_digest,
                                     "n_filtered_topics": el.n_filtered_topics,
                                     "ineligible_gold": el.restricted.n_ineligible_gold,
                                     "leaks": el.leaks.total, "leaks_at_k": {str(k): n for k, n in el.leaks.at_k.items()},
                                     "filter_mode": el.filter_mode, "topics_short": el.n_short}
        given = report.evaluation_ids[len(ids)] if len(report.evaluation_ids) > len(ids) else None
        ids.append(store.evaluations.record_evaluation(run_ref.name, report.qrels.recorded_name, evaluation_rows(e),
                                           evaluator_version=report.evaluator_version, params=params,
                                           evaluation_id=given))
    return ids


def compare_runs(
    run_a: str,
    run_b: str,
    qrels_ref: str,
    measure: str = "R@100",
    *,
    open_store: StoreOpener | None = None,
    rel: int = 1,
    missing: str = "fail",
    trust_file_order: bool = False,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    progress: Progress | None = None,
    min_topics: int = MIN_TOPICS,
    topic_set: str | None = None,
    by: Sequence[str] = (),
    collection: str | None = None,
) -> tuple[ScoreReport, Comparison, tuple[SliceComparison, ...]]:
    """Score two runs on one measure over common topics and compare B with A.

    Args:
        min_topics: fewest common topics the paired tests run on; with fewer
            they are refused (``Comparison.refused``), the deltas still listed.
        topic_set: ``NAME[@N]``: only its topics (the use is recorded).
        by: slice keys: the comparison per slice (slices with fewer than
            ``min_topics`` topics get no tests), Holm-adjusted over the slices.
        collection: the collection version run files were produced over.
        (the others as ``score_runs`` and ``scoring.compare.compare``)

    Returns:
        (the score report of both runs, the ``Comparison``, the per-slice
        comparisons of every ``by`` key in order, overall rows included).

    Raises:
        As ``score_runs`` and ``scoring.compare.compare``.
    """
    from workbench.scoring.compare import compare
    from workbench.scoring.slices import compare_slices

    report = score_runs([run_a, run_b], qrels_ref, open_store=open_store, measures=[measure], rel=rel,
                        missing=missing, trust_file_order=trust_file_order, record=False, progress=progress,
                        topic_set=topic_set, by=by, collection=collection, slice_min_topics=min_topics,
                        command="compare")
    a, b = report.evaluations
    m = report.measures[0]
    comparison = compare(a, b, m, n_resamples=n_resamples, seed=seed, confidence=confidence, min_topics=min_topics)
    rows: list[SliceComparison] = []
    for key in report.slice_keys.values():
        rows.extend(compare_slices(a, b, m, key, min_topics=min_topics, n_resamples=n_resamples, seed=seed,
                                   confidence=confidence))
    if report.topic_set is not None and open_store is not None:
        open_store().evaluations.record_topic_set_use(report.topic_set, "compare", [a.run_name, b.run_name],
                                          report.qrels.recorded_name, evaluator_version=EVALUATOR_VERSION,
                                          git_commit=report.git_commit)
    return report, comparison, tuple(rows)


def find_misses(
    run_ref: str,
    qrels_ref: str,
    k: int = 100,
    *,
    open_store: StoreOpener | None = None,
    rel: int = 1,
    missing: str = "fail",
    trust_file_order: bool = False,
    progress: Progress | None = None,
) -> tuple[ScoreReport, list[RelevantDoc]]:
    """Every relevant (topic, document) the run did not return within k.

    Returns:
        (the R@k score report, the misses in topic then grade order, each with
        the rank where the run found it beyond k, or None).
    """
    # command="misses": the header carries the git commit as a recorded score's does (same provenance lines).
    report = score_runs([run_ref], qrels_ref, open_store=open_store, measures=[f"R@{k}"], rel=rel,
                        missing=missing, trust_file_order=trust_file_order, record=False, progress=progress,
                        command="misses")
    return report, report.evaluations[0].misses(k)
