"""Scoring services for the CLI and the app: resolve runs and qrels, score, record, compare.

A run reference is a TREC run file path or a stored run name; a qrels
reference is a TREC qrels file path or a stored qrels version name (a path that
exists wins). Files are scored without a store. Every ``ScoreReport`` carries
the lineage a number needs: qrels version (name and content hash), collection
version, run names and where they came from, the evaluator version, the
relevance threshold and the missing-topic policy.

With several runs and ``missing="exclude"``, the topics missing from any run
are left out of every run's averages, so one report averages all runs over the
same topics (``ScoreReport.topics``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from workbench import __version__
from workbench.errors import UnknownNameError, ValidationError, WorkbenchError
from workbench.hashing import qrels_content_hash
from workbench.ranking import natural_key
from workbench.scoring.columns import QrelsColumns, RankedRun, qrels_columns_from_mapping, rank_run
from workbench.scoring.compare import Comparison, compare
from workbench.scoring.evaluate import (
    SCORER_ID,
    Evaluation,
    Evaluator,
    MissingPolicy,
    RelevantDoc,
    check_policy,
    value_rows,
)
from workbench.scoring.measures import DEFAULT_CUTOFFS, Measure, default_measures, parse_measures

if TYPE_CHECKING:
    from workbench.store import LabelStore
    from workbench.store.evaluations import EvaluationRow

EVALUATOR_VERSION = f"workbench {__version__} {SCORER_ID}"
"""Recorded with every evaluation: the package version and the scorer implementation."""

StoreOpener = Callable[[], "LabelStore"]
"""Returns the project's store; called only when a stored run or qrels version is needed."""

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunRef:
    """Where a scored run came from.

    Attributes:
        name: the run's name in reports (stored name, or the file's run tag).
        origin: ``stored`` or ``file``.
        location: the stored run name or the file path.
        collection: the collection (stored runs), else "".
        collection_version: the collection version it was produced over (stored runs), else "".
        n_lines: result lines read.
        failed_topics: topics the store marks ``empty`` or ``error``.
    """

    name: str
    origin: Literal["stored", "file"]
    location: str
    collection: str = ""
    collection_version: str = ""
    n_lines: int = 0
    failed_topics: tuple[str, ...] = ()


@dataclass(frozen=True)
class QrelsRef:
    """Which qrels were used.

    Attributes:
        name: the qrels version name, or the file path.
        origin: ``stored`` or ``file``.
        content_hash: sha256 over the sorted (topic, doc, grade) entries.
        collection: the collection (stored versions), else "".
        collection_version: the collection version (stored versions), else "".
        n_topics: topics in the qrels.
        n_entries: judged (topic, doc) entries.
    """

    name: str
    origin: Literal["stored", "file"]
    content_hash: str
    collection: str = ""
    collection_version: str = ""
    n_topics: int = 0
    n_entries: int = 0

    @property
    def recorded_name(self) -> str:
        """Name used in the ``evaluations`` table: the version name, or ``file:<path>``."""
        return self.name if self.origin == "stored" else f"file:{self.name}"


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

    def header(self) -> dict[str, object]:
        """The lineage block of every rendering (JSON-ready)."""
        return {
            "qrels": dataclasses.asdict(self.qrels),
            "runs": [dataclasses.asdict(r) | {"failed_topics": list(r.failed_topics)} for r in self.runs],
            "evaluator_version": self.evaluator_version,
            "rel": self.rel,
            "missing": self.missing,
            "trust_file_order": self.trust_file_order,
            "measures": [str(m) for m in self.measures],
            "created_at": self.created_at,
            "evaluation_ids": list(self.evaluation_ids),
            "warnings": list(self.warnings),
        }

    @property
    def topics(self) -> tuple[str, ...]:
        """Topics of the first evaluation (all runs share them under ``exclude`` and ``zero``)."""
        return self.evaluations[0].topics if self.evaluations else ()


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
    from workbench.formats import trec

    path = Path(ref)
    if path.is_file():
        qrels = trec.read_qrels(path)
        return (
            QrelsRef(ref, "file", qrels_content_hash(qrels), n_topics=len(qrels),
                     n_entries=sum(len(d) for d in qrels.values())),
            qrels_columns_from_mapping(qrels),
        )
    if open_store is None:
        raise UnknownNameError("qrels file or version", ref, [])
    store = open_store()
    try:
        info = store.get_qrels_info(ref)
    except UnknownNameError as e:
        raise _not_found(ref, "qrels version", e) from None
    qrels = store.get_qrels(ref)
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

    path = Path(ref)
    if path.is_file():
        cols = read_run_columns(path, trust_file_order=trust_file_order)
        rr = rank_run(cols, reuse=True)
        return RunRef(cols.name or path.stem, "file", ref, n_lines=cols.n_lines), rr
    if open_store is None:
        raise UnknownNameError("run file or stored run", ref, [])
    store = open_store()
    try:
        info = store.get_run_info(ref)
    except UnknownNameError as e:
        raise _not_found(ref, "run", e) from None
    statuses = store.get_run_statuses(ref)
    failed = tuple(sorted((t for t, s in statuses.items() if s != "ok"), key=natural_key))
    cols = run_columns_from_arrow(store.run_entries_arrow(ref), ref)
    rr = rank_run(cols, reuse=True)
    return RunRef(ref, "stored", ref, info.collection, info.collection_version, cols.n_lines, failed), rr


def evaluation_rows(e: Evaluation) -> list[EvaluationRow]:
    """The ``evaluations`` table rows of one evaluation (aggregates and per-topic values)."""
    from workbench.store.evaluations import EvaluationRow

    return [EvaluationRow(*row) for row in value_rows(e, per_topic=True)]


def _unique_names(refs: list[RunRef]) -> list[RunRef]:
    """Run names made unique: a repeated name (two files with one tag) becomes the file path."""
    counts: dict[str, int] = {}
    for r in refs:
        counts[r.name] = counts.get(r.name, 0) + 1
    return [
        r if counts[r.name] == 1 else RunRef(r.location, r.origin, r.location, r.collection, r.collection_version,
                                             r.n_lines, r.failed_topics)
        for r in refs
    ]


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
) -> ScoreReport:
    """Score runs against qrels, optionally recording the results in the store.

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

    Returns:
        The ``ScoreReport``.

    Raises:
        MissingTopicsError: ``missing="fail"`` and a run lacks a topic.
        InputFormatError, UnknownNameError, ValidationError: bad input.
        StoreError: recording failed (nothing was recorded).
    """
    if not run_refs:
        raise ValidationError("expected at least one run (a run file or a stored run name), found none.")
    policy = check_policy(missing)
    say = progress or (lambda _msg: None)
    ms = resolve_measures(measures, cutoffs)
    qref, qcols = load_qrels(qrels_ref, open_store)
    evaluator = Evaluator(qcols, ms, rel=rel, missing=policy)
    warnings: list[str] = []

    def load(ref: str) -> tuple[RunRef, RankedRun]:
        t0 = time.perf_counter()
        say(f"[starting] reading run {ref}")
        run_ref, rr = load_run(ref, open_store, trust_file_order=trust_file_order)
        say(f"[finished] reading run {ref}: {run_ref.n_lines:,} lines [elapsed] {time.perf_counter() - t0:.2f} s")
        return run_ref, rr

    loaded: list[tuple[RunRef, RankedRun] | None] = [None] * len(run_refs)
    topics: tuple[str, ...] | None = None
    if policy == "exclude" and len(run_refs) > 1:
        # One topic set for every run: drop the topics any run misses.
        dropped: set[str] = set()
        for i, ref in enumerate(run_refs):
            loaded[i] = load(ref)
            run_ref, rr = loaded[i]  # type: ignore[misc]
            dropped.update(evaluator.missing_topics(rr, run_ref.failed_topics))
        topics = tuple(t for t in qcols.topic_ids if t not in dropped)
    refs: list[RunRef] = []
    evaluations: list[Evaluation] = []
    seconds: list[float] = []
    for i, ref in enumerate(run_refs):
        t0 = time.perf_counter()
        pair = loaded[i] or load(ref)
        loaded[i] = None
        run_ref, rr = pair
        e = evaluator.evaluate(rr, run_name=run_ref.name, failed_topics=run_ref.failed_topics, topics=topics)
        del pair, rr
        refs.append(run_ref)
        evaluations.append(e)
        seconds.append(time.perf_counter() - t0)
        say(f"[finished] scoring {run_ref.name}: {len(e.topics):,} topics [elapsed] {seconds[-1]:.2f} s")
        if trust_file_order and run_ref.origin == "stored":
            warnings.append(f"run {run_ref.name!r} is stored: its canonical order is used, --trust-file-order applies to files")
        if run_ref.collection_version and qref.collection_version and run_ref.collection_version != qref.collection_version:
            warnings.append(
                f"run {run_ref.name!r} was produced over collection version {run_ref.collection_version[:12]}, "
                f"the qrels over {qref.collection_version[:12]}: document ids may differ"
            )
        if e.ignored_topics:
            warnings.append(f"run {run_ref.name!r} has {len(e.ignored_topics)} topic(s) not in the qrels (ignored)")
        if e.n_duplicates:
            warnings.append(f"run {run_ref.name!r}: {e.n_duplicates} duplicate line(s) dropped (best rank kept)")
    refs = _unique_names(refs)
    evaluations = [
        e if e.run_name == r.name else _renamed(e, r.name) for e, r in zip(evaluations, refs, strict=True)
    ]
    created_at = datetime.now(UTC).isoformat(timespec="seconds")
    report = ScoreReport(
        qrels=qref, runs=tuple(refs), evaluations=tuple(evaluations), measures=ms, rel=rel, missing=policy,
        trust_file_order=trust_file_order, evaluator_version=EVALUATOR_VERSION, created_at=created_at,
        warnings=tuple(warnings), seconds=tuple(seconds),
    )
    all_stored = qref.origin == "stored" and all(r.origin == "stored" for r in refs)
    if record is None:
        record = open_store is not None and all_stored
    if record:
        if open_store is None:
            raise WorkbenchError("cannot record evaluations without a workbench store; drop --record or pass --db")
        ids = tuple(record_report(report, open_store()))
        report = dataclasses.replace(report, evaluation_ids=ids)
    return report


def _renamed(e: Evaluation, name: str) -> Evaluation:
    return dataclasses.replace(e, run_name=name)


def record_report(report: ScoreReport, store: LabelStore) -> list[str]:
    """Record every evaluation of ``report`` (one transaction per run); returns the ids."""
    ids = []
    for run_ref, e in zip(report.runs, report.evaluations, strict=True):
        params = {
            "rel": report.rel,
            "missing": report.missing,
            "trust_file_order": report.trust_file_order,
            "qrels_content_hash": report.qrels.content_hash,
            "qrels_origin": report.qrels.origin,
            "collection_version": report.qrels.collection_version,
            "run_origin": run_ref.origin,
            "run_location": run_ref.location,
            "run_collection_version": run_ref.collection_version,
            "topics": len(e.topics),
            "excluded_topics": list(e.excluded_topics),
            "missing_topics": list(e.missing_topics),
            "ignored_topics": len(e.ignored_topics),
            "duplicates": e.n_duplicates,
            "measures": [str(m) for m in e.measures],
        }
        ids.append(store.record_evaluation(run_ref.name, report.qrels.recorded_name, evaluation_rows(e),
                                           evaluator_version=report.evaluator_version, params=params))
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
) -> tuple[ScoreReport, Comparison]:
    """Score two runs on one measure over common topics and compare B with A.

    Returns:
        (the score report of both runs, the ``Comparison``).

    Raises:
        As ``score_runs`` and ``scoring.compare.compare``.
    """
    report = score_runs([run_a, run_b], qrels_ref, open_store=open_store, measures=[measure], rel=rel,
                        missing=missing, trust_file_order=trust_file_order, record=False, progress=progress)
    a, b = report.evaluations
    return report, compare(a, b, report.measures[0], n_resamples=n_resamples, seed=seed, confidence=confidence)


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
    report = score_runs([run_ref], qrels_ref, open_store=open_store, measures=[f"R@{k}"], rel=rel,
                        missing=missing, trust_file_order=trust_file_order, record=False, progress=progress)
    return report, report.evaluations[0].misses(k)
