"""What to score: the request value every evaluation starts from, built once by the CLI, the app and the API.

``ScoreRequest`` says *what* is scored (runs, qrels, measures and cut-offs,
the relevance threshold, the missing-topic policy, which topics, slices,
the retrieval unit, eligibility filters, no-answer topics, what is kept and
recorded); ``ScoreEnv`` says *with what* (the store, where progress goes,
runs and qrels already in memory, the hook that writes output before
anything is recorded). The pipeline (``services.evaluation.pipeline``) takes
both and runs its steps: load -> audit -> restrict -> evaluate -> slice ->
record (``docs/architecture.md``).

Values only: building a request checks nothing and imports no rule (the
first step, ``check_request``, checks it), so ``workbench score`` on two
small files pays for a few dataclasses and nothing more.

Example:
    >>> r = ScoreRequest(("bm25.run",), "qrels.txt", measures=("R@100",), missing="zero")
    >>> (r.runs, r.rel, r.units.unit_mode(), r.slicing.by)
    (('bm25.run',), 1, False, ())
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import ValidationError, shown

if TYPE_CHECKING:
    from workbench.scoring.columns import QrelsColumns
    from workbench.services.evaluation.refs import Progress, QrelsRef, RunSource, StoreOpener

MIN_SLICE_TOPICS = 5
"""Slices (and comparisons) with fewer topics get no statistics: ``scoring.results.MIN_TOPICS`` (a test pins them
equal), known here without importing the rules."""


@dataclass(frozen=True)
class TopicChoice:
    """Which of the qrels' topics are scored, beyond |R| > 0 and the missing-topic policy.

    Attributes:
        topic_set: ``NAME[@N]`` of a stored topic set: only its topics are scored (the use is recorded).
        exclude: topics left out on purpose before scoring (e.g. flagged by the gate's leakage check):
            neither evaluated nor counted as eligible.
    """

    topic_set: str | None = None
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True)
class Slicing:
    """``--by``: each measure per slice of each key.

    Attributes:
        by: slice keys (topic metadata keys, or ``query_length``, ``n_relevant``, ``pool_coverage``).
        min_topics: slices with fewer topics are marked too small for statistics (>= 1).
    """

    by: tuple[str, ...] = ()
    min_topics: int = MIN_SLICE_TOPICS


@dataclass(frozen=True)
class Filtering:
    """Eligibility filters of the topics (``scoring.eligibility``).

    Attributes:
        mode: ``auto`` (apply the topics' filters when some topic has one), ``on`` (require them) or
            ``off`` (score unfiltered).
        key: the topic metadata key holding each topic's filter expression.
        strict: fail when a judged-relevant document is ineligible under its topic's filter.
    """

    mode: str = "auto"
    key: str = "filter"
    strict: bool = False


@dataclass(frozen=True)
class NoAnswer:
    """No-answer topics (``scoring.abstention``): marked, never inferred from |R| = 0.

    Attributes:
        mode: ``auto`` (topics marked in the collection's topic metadata ``no_answer``, or listed in
            ``file``, leave every average and are evaluated apart) or ``off`` (scored as the qrels say:
            the API's, compare's and the gate's default).
        file: a file of no-answer topic ids (with ``auto``).
        threshold: a result answers only when scored above it (no-answer accuracy).
    """

    mode: str = "off"
    file: Path | None = None
    threshold: float | None = None


@dataclass(frozen=True)
class UnitOptions:
    """Retrieval units, span qrels and duplicate groups (``services.evaluation.units``).

    Attributes:
        units: the views, e.g. ``("doc",)`` or ``("chunk", "doc")`` (empty: the run's own unit only).
        chunk_map: a chunk map file for run files (default: the run's chunk collection's map).
        spans: the qrels file holds span qrels (topic doc start end [grade]).
        min_share: the span overlap rule's minimum share (0 = any overlap).
        qrels_to_chunks: take document qrels down to chunks (every chunk inherits the grade).
        dedupe: ``none`` or ``groups``.
        groups_file: a groups file added to the stored groups.
    """

    units: tuple[str, ...] = ()
    chunk_map: Path | None = None
    spans: bool = False
    min_share: float = 0.0
    qrels_to_chunks: bool = False
    dedupe: str = "none"
    groups_file: Path | None = None

    def unit_mode(self) -> bool:
        """True when the score needs unit views (units, spans, duplicate groups, a chunk map)."""
        return bool(self.units or self.spans or self.dedupe != "none" or self.chunk_map)


@dataclass(frozen=True)
class Output:
    """What a score keeps and leaves behind.

    Attributes:
        record: store the results in ``evaluations``; None = when a store is available and the qrels
            and every run are stored.
        command: the command recorded as a topic set's use (``score``, ``compare``, ``gate``,
            ``misses``); any command but ``score`` puts the git commit in the header even when nothing
            is recorded.
        keep_documents: keep each evaluation's document lists (relevant documents with ranks,
            pool-novel documents); False keeps the numbers only (memory does not grow with the runs).
    """

    record: bool | None = None
    command: str = "score"
    keep_documents: bool = True


@dataclass(frozen=True)
class ScoreRequest:
    """What to score: one value from the command line, the app or the Python API to the report.

    Attributes:
        runs: run file paths or stored run names, in report order (with ``ScoreEnv.run_sources``, the
            labels of the runs given in memory).
        qrels: a qrels file path or a stored qrels version name (a path that exists wins).
        measures: measure names (``R@100``, ``nDCG(dcg='exp-log2')@10``); a name without ``@k`` is taken
            at every cut-off; empty = the default report.
        cutoffs: the k of the default R@k rows and of names without ``@k`` (empty = 5, 10, 20, 50, 100).
        rel: inclusive minimum grade of a relevant document (>= 0).
        missing: ``fail`` | ``zero`` | ``exclude`` for qrels topics a run lacks (trec_eval's default
            is ``exclude`` without ``-c``, ``zero`` with it).
        trust_file_order: order run files by their rank column (stored runs are always canonical).
        collection: ``NAME[@VERSION-PREFIX]``: the collection version run files were produced over (the
            ID audit, the topics' texts and metadata, filters, no-answer marks).
        min_id_coverage: below this share (0..1) of judged-relevant ids in the collection version, warn.
        topics: which topics (a topic set, exclusions).
        slicing: ``--by`` slices.
        filtering: eligibility filters.
        no_answer: no-answer topics.
        units: retrieval units, span qrels and duplicate groups (``units.unit_mode()`` needs
            ``pipeline.score_units``).
        output: what is recorded and kept.
        allow_edited_qrels: score a qrels file that a ``manifest.json`` beside it records under
            another sha256 (edited after its export), with a warning; by default it is refused
            (``load.qrels_warnings``).

    Source:
        Measures and their names: ``scoring.measures`` (trec_eval / ir_measures conventions).
    """

    runs: tuple[str, ...]
    qrels: str
    measures: tuple[str, ...] = ()
    cutoffs: tuple[int, ...] = ()
    rel: int = 1
    missing: str = "fail"
    trust_file_order: bool = False
    collection: str | None = None
    min_id_coverage: float = 1.0
    topics: TopicChoice = field(default_factory=TopicChoice)
    slicing: Slicing = field(default_factory=Slicing)
    filtering: Filtering = field(default_factory=Filtering)
    no_answer: NoAnswer = field(default_factory=NoAnswer)
    units: UnitOptions = field(default_factory=UnitOptions)
    output: Output = field(default_factory=Output)
    allow_edited_qrels: bool = False


@dataclass(frozen=True)
class ScoreEnv:
    """With what a request is scored: the store, the progress sink, data already in memory, the output hook.

    Attributes:
        open_store: returns the store; called only when a stored run or qrels version (or a collection)
            is needed; None when only files are used.
        progress: receives ``[starting]``/``[finished]`` lines.
        run_sources: one loader per entry of ``ScoreRequest.runs`` (which then only label progress), for
            runs that are not files or stored names (DataFrames, mappings, mapped unit views); each is
            called when its run's turn comes, so runs are read, scored and let go one at a time.
        qrels: the qrels already loaded for ``ScoreRequest.qrels`` (read once by the gate, mapped by a
            unit view).
        before_record: called with the report once everything is scored and before anything is written
            to the store (the CLI writes ``--plot`` and the report there), so a failure in it (a full
            disk) leaves the store unchanged.
        labels_dir: the labels folder of the store's exported qrels: a stored qrels version whose
            export there is incomplete or changed is scored with a warning saying so (None: not checked).
    """

    open_store: StoreOpener | None = None
    progress: Progress | None = None
    run_sources: tuple[RunSource, ...] | None = None
    qrels: tuple[QrelsRef, QrelsColumns] | None = None
    before_record: Callable[[Any], None] | None = None
    labels_dir: Path | None = None

    def say(self, message: str) -> None:
        """Send one progress line (nowhere when there is no sink)."""
        if self.progress is not None:
            self.progress(message)


def check_request(request: ScoreRequest) -> None:
    """The first step: refuse a request no step could score, before anything is read.

    Raises:
        ValidationError: no run, a share outside 0..1, an unknown filter or no-answer mode, a
            missing-topic policy not among ``fail``, ``zero``, ``exclude`` (message from
            ``scoring.results.check_policy``).
        UnknownOptionValueError: an unknown missing-topic policy.
    """
    from workbench.scoring.results import check_policy

    if not request.runs:
        raise ValidationError("expected at least one run (a run file or a stored run name), found none.")
    if not 0.0 <= request.min_id_coverage <= 1.0:
        raise ValidationError(f"expected --min-id-coverage between 0 and 1, found {request.min_id_coverage!r}.")
    check_policy(request.missing)
    if request.filtering.mode not in ("auto", "on", "off"):
        raise ValidationError(f"expected --filters auto, on or off, found {shown(request.filtering.mode)}")
    if request.no_answer.mode not in ("auto", "off"):
        raise ValidationError(f"expected no_answer auto or off, found {shown(request.no_answer.mode)}")


def request_for(runs: Sequence[str], qrels: str, **fields: Any) -> ScoreRequest:
    """A ``ScoreRequest`` with ``runs`` as a tuple and sequences given as lists turned into tuples.

    For callers that hold lists (the CLI's repeatable options): ``measures``, ``cutoffs`` as sequences.
    Raises ``TypeError`` for an unknown field, as the dataclass does.
    """
    for name in ("measures", "cutoffs"):
        if name in fields and fields[name] is not None:
            fields[name] = tuple(fields[name])
        elif name in fields:
            fields[name] = ()
    return ScoreRequest(tuple(runs), qrels, **fields)
