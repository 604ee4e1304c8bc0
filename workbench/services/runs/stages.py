"""Two-stage pipeline services: produce and import rerank runs, and report recall stage by stage.

* ``make_rerank_run``: rerank each topic's top D of a stored run (the default
  reranker is the packaged all-MiniLM-L6-v2 bi-encoder over the store's
  embedding cache; ``cross_encoder`` loads a local CrossEncoder folder) and
  store the result as a run of kind ``rerank`` with its lineage (candidate run,
  candidate depth, reranker, model identity) and its measured cost, in one
  transaction.
* ``import_rerank_run``: an externally reranked TREC run file. Each topic's top
  D must be a permutation of a subset of the candidate run's top D; the
  (topic, document) pairs that are not are listed and the import is refused,
  unless ``allow_new_documents`` (then the file is stored as a plain imported
  run, not a rerank).
* ``stage_reports``: the stage rows, the decomposition checks and the diagnosis
  (``workbench.scoring.stages``) of stored runs against a qrels version or file.
  Every run involved (rerank runs and their candidate runs) is scored by one
  ``Evaluator`` over one topic set, as ``services.evaluation.pipeline.score``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import DuplicateNameError, InputFormatError, ValidationError, shown
from workbench.lineage import RerankCost, RunLineage
from workbench.ranking import natural_key, ranked_ids
from workbench.scoring.evaluate import Evaluation, Evaluator, MissingPolicy, check_policy
from workbench.scoring.measures import Measure
from workbench.scoring.stages import (
    StageReport,
    Thresholds,
    Violation,
    rerank_violations,
    stage_measures,
    stage_report,
    top_set_difference,
)
from workbench.types import RunInfo

if TYPE_CHECKING:
    from pooling.retrievers.dense import Encoder
    from pooling.retrievers.rerank import Reranker
    from workbench.scoring.columns import RankedRun
    from workbench.services.evaluation.refs import QrelsRef, StoreOpener
    from workbench.store.collections import Collections
    from workbench.store.runs import Runs
    from workbench.store.vectors import Vectors

Say = Callable[[str], None]

DEFAULT_PLAIN_DEPTH = 50
"""Candidate depth D assumed for a run that reranks nothing (its own top D)."""


def _quiet(_: str) -> None:
    pass


# -- rerankers ------------------------------------------------------------------------


@dataclass(frozen=True)
class RerankerSpec:
    """Which reranker to build, from CLI or app options.

    Attributes:
        model_path: a local sentence-transformers (bi-encoder) folder; None =
            the packaged all-MiniLM-L6-v2.
        cross_encoder: a local CrossEncoder folder (exclusive with ``model_path``).
        batch_size: per forward pass; None = 64 (bi-encoder) or 32 (cross-encoder).
        device: torch device.
        threads: torch CPU threads; 0 = torch's choice (a thread per core). The
            default, 1, is ``DEFAULT_RERANK_THREADS``: a topic's work is one query
            encoding (bi-encoder) or one small batch (cross-encoder), too little to
            share between threads, and with a thread per core on cores other
            processes use, the threads wait on each other: measured, 68-87 s against
            228-443 s (and a sixth of the CPU time) for the same rerank at load 9-15
            (``bench/results/rerank.md``).
        model_dir: extraction folder of the packaged model.
        encoder: an ``Encoder`` instead of a bi-encoder model (tests).
        label: the reranker's short name in stage labels (default ``minilm``
            or the model folder's name).
    """

    model_path: Path | None = None
    cross_encoder: Path | None = None
    batch_size: int | None = None
    device: str = "cpu"
    threads: int = 1
    model_dir: Path | None = None
    encoder: Encoder | None = None
    label: str | None = None


DEFAULT_RERANK_THREADS = RerankerSpec.threads
"""torch CPU threads of a rerank unless told otherwise (see ``RerankerSpec.threads``)."""


def threads_label(threads: int) -> str:
    """A thread setting for progress lines: the count, or ``torch's choice`` for 0."""
    return str(threads) if threads else "torch's choice"


def make_reranker(spec: RerankerSpec, cache: Any = None, *, progress: bool = False) -> Reranker:
    """Build the reranker a ``RerankerSpec`` names (no model is loaded yet).

    Args:
        spec: the options.
        cache: the embedding cache of a bi-encoder (the store).
        progress: a bi-encoder shows a tqdm bar on stderr while it encodes the
            document vectors the cache lacks.

    Raises:
        ValidationError: both a bi-encoder model and a cross-encoder, a bad
            batch size or thread count, or a missing folder.
    """
    from pooling.retrievers.rerank import BiEncoderReranker, CrossEncoderReranker

    if spec.cross_encoder is not None and (spec.model_path is not None or spec.encoder is not None):
        raise ValidationError("choose one reranker: --model (a bi-encoder) or --cross-encoder, not both")
    if isinstance(spec.threads, bool) or not isinstance(spec.threads, int) or spec.threads < 0:
        raise ValidationError(f"threads must be >= 0 (0: torch's choice), found {spec.threads!r}")
    threads = spec.threads or None  # None: torch's own default
    if spec.cross_encoder is not None:
        return CrossEncoderReranker(spec.cross_encoder, batch_size=spec.batch_size or 32, device=spec.device,
                                    threads=threads, label=spec.label)
    return BiEncoderReranker(spec.model_path, encoder=spec.encoder, cache=cache, batch_size=spec.batch_size or 64,
                             device=spec.device, threads=threads, model_dir=spec.model_dir, label=spec.label,
                             progress=progress)


@dataclass(frozen=True)
class CandidateSet:
    """A candidate run's top D per topic, with what reranking it needs.

    Attributes:
        info: the candidate run.
        depth: D.
        lists: topic_id -> top-D doc ids in rank order (topics with results).
        statuses: topic_id -> the candidate run's status.
        messages: topic_id -> the candidate run's message (non-ok topics).
        queries: topic_id -> query text, every topic of the collection.
        documents: doc_id -> text (title and text) of every candidate.
        text_hashes: doc_id -> text hash (the embedding cache's key).
    """

    info: RunInfo
    depth: int
    lists: dict[str, list[str]]
    statuses: dict[str, str]
    messages: dict[str, str]
    queries: dict[str, str]
    documents: dict[str, str]
    text_hashes: dict[str, str]


def load_candidates(collections: Collections, runs: Runs, candidates: str, depth: int) -> CandidateSet:
    """Read a stored run's top D and the texts reranking needs.

    Raises:
        UnknownNameError: no such run.
        ValidationError: D outside 1..1,000,000, or deeper than the run.
    """
    from workbench.services.runs.pooling import check_depth, collection_queries

    check_depth(depth)
    info = runs.get_run_info(candidates)
    if depth > info.depth:
        raise ValidationError(
            f"run {candidates!r} holds at most {info.depth} documents per topic, found --depth {depth}; rerank "
            f"at most {info.depth} or produce the candidate run with --depth {depth} or more")
    run = runs.get_run(candidates, depth=depth)
    lists = {t: ranked_ids(scores, depth) for t, scores in run.items()}
    rows = runs.get_run_topic_statuses(candidates)
    docs = collections.get_documents(info.collection, info.collection_version)
    needed = {d for ds in lists.values() for d in ds}
    hashes = collections.document_text_hashes(info.collection, info.collection_version)
    return CandidateSet(
        info, depth, lists, {r.topic_id: r.status for r in rows},
        {r.topic_id: r.message for r in rows if r.status != "ok"},
        collection_queries(collections, info.collection),
        {d: docs[d].content for d in sorted(needed)}, {d: hashes[d] for d in needed if d in hashes})


# -- producing a rerank run -------------------------------------------------------------


@dataclass(frozen=True)
class RerankOutcome:
    """A rerank run that was produced and stored.

    Attributes:
        info: the stored run.
        lineage: its candidate run, depth, reranker and model.
        statuses: topic_id -> ok | empty | error.
        messages: topic_id -> why a topic is empty or failed.
        cost: the measured cost (None for an imported run).
        n_encoded / n_cached: bi-encoder document vectors encoded now / read from the cache.
    """

    info: RunInfo
    lineage: RunLineage | None
    statuses: Mapping[str, str]
    messages: Mapping[str, str] = field(default_factory=dict)
    cost: RerankCost | None = None
    n_encoded: int = 0
    n_cached: int = 0
    violations: tuple[Violation, ...] = ()
    unchanged: bool = False

    def count(self, status: str) -> int:
        """Number of topics with ``status``."""
        return sum(1 for s in self.statuses.values() if s == status)


def make_rerank_run(
    collections: Collections, runs: Runs, vectors: Vectors,
    candidates: str,
    depth: int,
    name: str,
    *,
    spec: RerankerSpec = RerankerSpec(),
    reranker: Reranker | None = None,
    description: str = "",
    progress: bool = False,
    say: Say = _quiet,
) -> RerankOutcome:
    """Rerank each topic's top ``depth`` of a stored run and store it with lineage and measured cost.

    Args:
        collections: the store's collections.
        runs: the store's runs.
        vectors: the store's vectors.
        candidates: the stored candidate run.
        depth: D, candidates reranked per topic (<= the candidate run's depth).
        name: the new run's name.
        spec: which reranker (default: the packaged all-MiniLM-L6-v2 bi-encoder).
        reranker: a ready ``Reranker`` instead of ``spec`` (tests, benchmarks).
        description: free text stored with the run.
        progress: a tqdm bar on stderr, one step per topic.
        say: receives ``[starting]``/``[finished]`` lines.

    Returns:
        ``RerankOutcome``. A topic the candidate run has no results for is
        ``empty`` (``error`` when the candidate run failed on it); a topic whose
        reranking raised is ``error`` with the message.

    Raises:
        DuplicateNameError: the name is taken.
        UnknownNameError: unknown candidate run.
        ValidationError: bad depth, name or reranker options; a missing model folder.
    """
    from pooling.retrievers.rerank import rerank_topics
    from workbench.store.runs import check_run_name

    check_run_name(name)
    if runs.has_run(name):  # fail before the slow part
        raise DuplicateNameError(f"run {name!r} already exists and runs are immutable; choose another --name")
    cands = load_candidates(collections, runs, candidates, depth)
    rr = reranker or make_reranker(spec, cache=vectors, progress=progress)
    say(f"[starting] rerank run {name}: top {depth} of {candidates} over {len(cands.queries):,} topics "
        f"with {rr.label} ({rr.kind}, {rr.model_name}); device {rr.device}, torch threads: {threads_label(rr.threads)}")
    started = time.monotonic()
    bars: list[Any] = []

    def prepared(prepare_ms: float) -> None:  # the per-topic bar starts once the model and vectors are ready
        say(f"[finished] {ready_line(rr, len(cands.documents))} [elapsed] {prepare_ms / 1000:.1f} s")
        bars.append(_progress(progress, len(cands.queries)))

    def on_topic(done: int, total: int) -> None:
        if bars and bars[0] is not None:
            bars[0].update(1)

    try:
        result = rerank_topics(rr, cands.queries, cands.lists, cands.documents, text_hashes=cands.text_hashes,
                               run_name=name, on_topic=on_topic, on_prepared=prepared)
    finally:
        if bars and bars[0] is not None:
            bars[0].close()
    statuses, messages = dict(result.statuses), dict(result.messages)
    for t, status in cands.statuses.items():
        if status == "error" and t in statuses:
            statuses[t], messages[t] = "error", f"the candidate run failed on this topic: {cands.messages.get(t, '')}"
    lineage = RunLineage(name, candidates, depth, rr.label, rr.kind, rr.model_name, rr.model_hash, "produced")
    params: dict[str, Any] = {"candidates": candidates, "candidate_depth": depth, "reranker": rr.label,
                              "reranker_kind": rr.kind, "model": lineage.model_identity,
                              "batch_size": rr.batch_size, "device": rr.device, "threads": rr.threads}
    info = RunInfo(name=name, kind="rerank", params=params, depth=depth, collection=cands.info.collection,
                   collection_version=cands.info.collection_version, description=description)
    stored = runs.save_rerank_run(info, result.run, lineage, cost=result.cost, statuses=statuses, messages=messages)
    outcome = RerankOutcome(stored, lineage, statuses, {t: m for t, m in messages.items() if statuses.get(t) != "ok"},
                            result.cost, getattr(rr, "n_encoded", 0), getattr(rr, "n_cached", 0))
    say(f"[finished] rerank run {name}: {outcome.count('ok')} topics ok, {outcome.count('empty')} empty, "
        f"{outcome.count('error')} error [elapsed] {time.monotonic() - started:.1f} s")
    return outcome


def ready_line(rr: Reranker, n_documents: int) -> str:
    """What a prepared reranker holds, for a progress line: the model and the candidates' vectors.

    Example: ``reranker minilm (bi-encoder) ready: 4,500 candidate documents, all 4,500 vectors from the cache``.
    """
    line = f"reranker {rr.label} ({rr.kind}) ready: {n_documents:,} candidate documents"
    if rr.kind != "bi-encoder":
        return line
    encoded, cached = getattr(rr, "n_encoded", 0), getattr(rr, "n_cached", 0)
    if encoded:
        return line + f", {encoded:,} vectors encoded now, {cached:,} from the cache"
    return line + f", all {cached:,} vectors from the cache"


def _progress(enabled: bool, total: int) -> Any:
    """A tqdm bar of reranked topics on stderr, or None."""
    if not enabled:
        return None
    from pooling.progress import bar

    return bar(total=total, desc="reranking topics", unit="topic")


# -- importing a reranked run ------------------------------------------------------------


class NotARerankError(InputFormatError):
    """A reranked run file holds documents its candidates' top D did not (names the first line).

    Attributes:
        violations: every (topic, document, rank) outside the candidates.
    """

    def __init__(self, path: str, line: int, problem: str, violations: Sequence[Violation]) -> None:
        super().__init__(path, line, problem)
        self.violations = tuple(violations)


def _violation_text(violations: Sequence[Violation], limit: int = 10) -> str:
    shown = ", ".join(f"(topic {v.topic_id}, document {v.doc_id}, rank {v.rank})" for v in violations[:limit])
    return shown + (f", ... {len(violations) - limit} more" if len(violations) > limit else "")


def import_rerank_run(
    collections: Collections, runs: Runs,
    path: str | Path,
    name: str,
    *,
    reranks: str,
    candidate_depth: int,
    allow_new_documents: bool = False,
    reranker: str | None = None,
    description: str = "",
    trust_file_order: bool = False,
    status_file: str | Path | None = None,
) -> RerankOutcome:
    """Import a TREC run file that reranks a stored run's top D, after checking it is one.

    For every topic of the file, its top D (canonical order) must be a
    permutation of a subset of the candidate run's top D. Documents ranked below
    D in the file are kept as they are (they are outside the rerank stage).

    Args:
        collections: the store's collections.
        runs: the store's runs.
        path: the reranked TREC run file.
        name: the stored run's name.
        reranks: the stored candidate run.
        candidate_depth: D.
        allow_new_documents: on violations, store the file as a plain imported
            run (no lineage) instead of refusing it.
        reranker: short name of the reranker in stage labels (default: the file's run tag).
        description: free text.
        trust_file_order: order by the file's rank column instead of scores.
        status_file: a status side file (``services.runs.pooling.import_run``); kept
            for a file stored as a plain run; a rerank takes its statuses from
            the file's lines (a status side file with it is refused).

    Returns:
        ``RerankOutcome``: ``lineage`` None and ``violations`` listed when the file
        was stored as a plain run; ``unchanged`` for an identical re-import.

    Raises:
        NotARerankError: violations and not ``allow_new_documents`` (names the
            line of the first and lists them; nothing is written).
        InputFormatError: the file is malformed.
        UnknownNameError: unknown candidate run.
        DuplicateNameError: the name is taken by other content.
        ValidationError: a bad depth, or D deeper than the candidate run.
    """
    from workbench.formats.trec import read_run, scan_ids
    from workbench.services.runs.pooling import check_depth, import_run
    from workbench.store.runs import check_run_name, run_content_hash

    check_depth(candidate_depth)
    check_run_name(name)
    cand = runs.get_run_info(reranks)
    if candidate_depth > cand.depth:
        raise ValidationError(f"run {reranks!r} holds at most {cand.depth} documents per topic, found "
                              f"--candidate-depth {candidate_depth}")
    rf = read_run(path, trust_file_order=trust_file_order)
    top = {t: ranked_ids(s, candidate_depth) for t, s in runs.get_run(reranks, depth=candidate_depth).items()}
    violations = rerank_violations(top, rf.run, candidate_depth)
    if violations:
        if not allow_new_documents:
            first = violations[0]
            line = next((n for n, t, d in scan_ids(path, "run") if t == first.topic_id and d == first.doc_id), 0)
            raise NotARerankError(
                str(path), line,
                f"expected the top {candidate_depth} of every topic to be candidates of run {reranks!r} (its top "
                f"{candidate_depth}), found {len(violations)} (topic, document) pair(s) that are not: "
                f"{_violation_text(violations)}. Rerank only the candidates, or pass --allow-new-documents to "
                "store the file as a plain run (not a rerank)", violations)
        outcome = import_run(runs, path, name, collection=cand.collection, description=description,
                             trust_file_order=trust_file_order, status_file=status_file)
        return RerankOutcome(outcome.info, None, outcome.statuses, outcome.messages, violations=tuple(violations),
                             unchanged=outcome.unchanged)
    if status_file is not None:
        raise ValidationError(f"{status_file}: a status side file applies to plain imports; a rerank import takes "
                              "its statuses from the candidate check (drop --status, or import without --reranks)")
    label = reranker or rf.tag or name
    lineage = RunLineage(name, reranks, candidate_depth, label, "external", origin="imported")
    if runs.has_run(name):
        summary = next((s for s in runs.run_summaries(cand.collection) if s.info.name == name), None)
        if (summary is not None and summary.content_hash == run_content_hash(rf.run)
                and runs.get_run_lineage(name) == lineage):
            rows = runs.get_run_topic_statuses(name)
            return RerankOutcome(summary.info, lineage, {r.topic_id: r.status for r in rows},
                                 {r.topic_id: r.message for r in rows if r.status != "ok"}, unchanged=True)
        raise DuplicateNameError(f"run {name!r} already exists with other content and runs are immutable; "
                                 "choose another --name")
    topics = collections.get_topics(cand.collection)
    unknown = sorted(set(rf.run) - set(topics), key=natural_key)
    if unknown:  # a topic without candidates would have been a violation; kept for a clear message
        raise ValidationError(f"{path}: topic {shown(unknown[0])} is not a topic of collection {cand.collection!r}")
    params: dict[str, object] = {"tag": rf.tag, "lines": rf.n_lines, "trust_file_order": trust_file_order,
              "duplicates_dropped": sum(rf.duplicates.values()), "candidates": reranks,
              "candidate_depth": candidate_depth, "reranker": label, "reranker_kind": "external"}
    if rf.odd_ranks is not None:  # the import warns (formats.trec.odd_ranks_warning); kept as provenance
        params["odd_ranks"] = dataclasses.asdict(rf.odd_ranks)
    depth = max((len(d) for d in rf.run.values()), default=1)
    messages = {t: "the file has no line for this topic" for t in topics if t not in rf.run}
    info = RunInfo(name=name, kind="rerank", params=params, depth=max(depth, 1), collection=cand.collection,
                   collection_version=cand.collection_version, description=description)
    stored = runs.save_rerank_run(info, rf.run, lineage, messages=messages, source=str(path))
    rows = runs.get_run_topic_statuses(name)
    return RerankOutcome(stored, lineage, {r.topic_id: r.status for r in rows},
                         {r.topic_id: r.message for r in rows if r.status != "ok"})


# -- stage reports ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Pipeline:
    """What ``stages`` reports for one requested run.

    Attributes:
        run: the requested stored run.
        lineage: its lineage (None for a run that reranks nothing).
        depth: D (the lineage's candidate depth, or the assumed one).
        cost: its measured cost (None when not measured).
    """

    run: str
    lineage: RunLineage | None
    depth: int
    cost: RerankCost | None = None

    @property
    def candidate_run(self) -> str:
        """The run whose top D are the candidates (the run itself for a single stage)."""
        return self.lineage.candidate_run if self.lineage is not None else self.run


@dataclass(frozen=True)
class StagesResult:
    """Everything ``workbench stages`` prints.

    Attributes:
        qrels: the qrels used.
        pipelines: one per requested run, in the order given.
        reports: the ``StageReport`` of each pipeline, same order.
        evaluations: run name -> ``Evaluation`` of every run involved.
        measures: the measures every run was scored with.
        rel, missing: relevance threshold and missing-topic policy.
        thresholds: of the diagnosis.
        evaluator_version: ``services.evaluation.report.EVALUATOR_VERSION``.
        created_at: ISO 8601 time (UTC).
        warnings: things a reader of the numbers should know.
    """

    qrels: QrelsRef
    pipelines: tuple[Pipeline, ...]
    reports: tuple[StageReport, ...]
    evaluations: Mapping[str, Evaluation]
    measures: tuple[Measure, ...]
    rel: int
    missing: MissingPolicy
    thresholds: Thresholds
    evaluator_version: str
    created_at: str
    warnings: tuple[str, ...] = ()

    def header(self) -> dict[str, object]:
        """The lineage block of every rendering (JSON-ready)."""
        return {
            "qrels": dataclasses.asdict(self.qrels),
            "runs": [{"run": p.run, "lineage": dataclasses.asdict(p.lineage) if p.lineage else None,
                      "candidate_depth": p.depth} for p in self.pipelines],
            "evaluator_version": self.evaluator_version,
            "rel": self.rel,
            "missing": self.missing,
            "measures": [str(m) for m in self.measures],
            "thresholds": {"recall": self.thresholds.recall, "ndcg": self.thresholds.ndcg},
            "created_at": self.created_at,
            "warnings": list(self.warnings),
        }


def stage_reports(
    run_names: Sequence[str],
    qrels_ref: str,
    *,
    open_store: StoreOpener,
    final_k: int = 10,
    depth: int | None = None,
    thresholds: Thresholds = Thresholds(),
    rel: int = 1,
    missing: str = "fail",
    progress: Say | None = None,
) -> StagesResult:
    """Score stored runs stage by stage: rows, permutation check, contribution, stock, diagnosis.

    Args:
        run_names: stored runs; a rerank run is reported with its candidate run
            (from its lineage), any other run as a single stage.
        qrels_ref: a qrels file path or a stored qrels version name.
        open_store: returns the store.
        final_k: k, the cutoff of the final stage (R@k, nDCG@k).
        depth: D for runs that rerank nothing (default 50); a rerank run always
            uses its lineage's candidate depth.
        thresholds: of the diagnosis.
        rel: inclusive minimum grade of a relevant document.
        missing: ``fail`` | ``zero`` | ``exclude`` (``exclude`` leaves the topics
            any run involved lacks out of every run's averages).
        progress: receives ``[starting]``/``[finished]`` lines.

    Returns:
        The ``StagesResult``.

    Raises:
        UnknownNameError: an unknown run or qrels version.
        MissingTopicsError: ``missing="fail"`` and a run lacks a topic.
        ValidationError: no runs, k < 1, or bad options.
    """
    from workbench.services.evaluation.load import load_qrels, load_run
    from workbench.services.evaluation.report import EVALUATOR_VERSION

    if not run_names:
        raise ValidationError("expected at least one stored run, found none")
    if final_k < 1:
        raise ValidationError(f"expected --final-k >= 1, found {final_k}")
    policy = check_policy(missing)
    say = progress or _quiet
    store = open_store()
    with store.connection("stage report"):  # one lease for the reads (lineage, cost, qrels, runs)
        pipelines = []
        for name in run_names:
            lineage = store.runs.get_run_lineage(name)
            d = lineage.candidate_depth if lineage is not None else (depth or DEFAULT_PLAIN_DEPTH)
            pipelines.append(Pipeline(name, lineage, d, store.runs.get_rerank_cost(name) if lineage else None))
        involved = list(dict.fromkeys([n for p in pipelines for n in (p.candidate_run, p.run)]))
        measures: list[Measure] = []
        for p in pipelines:
            measures += [m for m in stage_measures(p.depth, final_k) if m not in measures]
        qref, qcols = load_qrels(qrels_ref, open_store)
        evaluator = Evaluator(qcols, measures, rel=rel, missing=policy)
        loaded: dict[str, tuple[Any, RankedRun]] = {}
        for name in involved:
            t0 = time.perf_counter()
            loaded[name] = load_run(name, open_store)
            say(f"[finished] reading run {name} [elapsed] {time.perf_counter() - t0:.2f} s")
    topics: tuple[str, ...] | None = None
    if policy == "exclude":
        dropped = {t for ref, rr in loaded.values() for t in evaluator.missing_topics(rr, ref.failed_topics)}
        topics = tuple(t for t in qcols.topic_ids if t not in dropped)
    evaluations = {name: evaluator.evaluate(rr, run_name=name, failed_topics=ref.failed_topics, topics=topics)
                   for name, (ref, rr) in loaded.items()}
    warnings = []
    for name, (ref, _) in loaded.items():
        if ref.collection_version and qref.collection_version and ref.collection_version != qref.collection_version:
            warnings.append(f"run {name!r} was produced over collection version {ref.collection_version[:12]}, "
                            f"the qrels over {qref.collection_version[:12]}: document ids may differ")
    shallowest = min(p.depth for p in pipelines)  # the ingestion check only asks about missed documents
    relevant = {d.doc_id for e in evaluations.values() for d in e.relevant if d.rank is None or d.rank > shallowest}
    version = next((ref.collection_version for ref, _ in loaded.values() if ref.collection_version), "")
    presence = store.collections.document_presence(version, relevant) if version else None
    absent = presence.absent if presence is not None else None
    empty = presence.empty if presence is not None else set()
    title_only = presence.title_only if presence is not None else set()
    reports = []
    for p in pipelines:
        cand_eval = evaluations[p.candidate_run]
        if p.lineage is None:
            reports.append(stage_report(cand_eval, None, depth=p.depth, k=final_k, candidate_name=p.run,
                                        thresholds=thresholds, absent_docs=absent, empty_docs=empty,
                                        title_only_docs=title_only))
            continue
        new, dropped_n = top_set_difference(loaded[p.candidate_run][1], loaded[p.run][1], p.depth,
                                            topics=cand_eval.topics)
        reports.append(stage_report(cand_eval, evaluations[p.run], depth=p.depth, k=final_k,
                                    candidate_name=p.candidate_run, final_name=p.lineage.final_name,
                                    reranker=p.lineage.reranker, new_documents=new, n_dropped=dropped_n,
                                    thresholds=thresholds, absent_docs=absent, empty_docs=empty,
                                    title_only_docs=title_only))
    return StagesResult(qref, tuple(pipelines), tuple(reports), evaluations, tuple(measures), rel, policy,
                        thresholds, EVALUATOR_VERSION, datetime.now(UTC).isoformat(timespec="seconds"),
                        tuple(warnings))


def rerank_run_names(runs: Runs, run_names: Sequence[str]) -> list[str]:
    """The runs among ``run_names`` that are rerank runs (have a lineage), in the order given."""
    return [n for n in run_names if runs.get_run_lineage(n) is not None]


def stage_table(result: StagesResult) -> list[dict[str, object]]:
    """The stage rows of every pipeline as one table (what the Scoreboard page shows).

    Returns:
        One dict per (pipeline, stage row): ``pipeline``, ``stage`` (the label,
        e.g. ``R@50 [candidates: bm25]``), ``macro``, ``micro``, ``ceiling``
        (full precision; None where not meaningful), ``topics``.
    """
    return [{"pipeline": rep.name, "stage": r.label, "macro": r.macro, "micro": r.micro, "ceiling": r.ceiling,
             "topics": r.n_topics} for rep in result.reports for r in rep.rows]


def check_table(result: StagesResult) -> list[dict[str, object]]:
    """Per pipeline: the permutation check, the reranker's contribution, the stock and the diagnosis.

    Returns:
        One dict per pipeline: ``pipeline``, ``R@D unchanged`` (yes/no/-),
        ``contribution`` and ``stock`` (macro, full precision), ``diagnosis``
        (the final run's label) and the per-topic counts of each label.
    """
    rows: list[dict[str, object]] = []
    for rep in result.reports:
        d = rep.diagnoses[-1]
        row: dict[str, object] = {
            "pipeline": rep.name,
            "R@D unchanged": "-" if rep.check is None else ("yes" if rep.check.is_permutation else "NO"),
            "D": rep.depth,
            "contribution": rep.decomposition.contribution_macro,
            "stock": rep.decomposition.stock_macro,
            "diagnosis": d.label,
        }
        row.update({f"topics: {label}": n for label, n in d.counts.items()})
        rows.append(row)
    return rows
