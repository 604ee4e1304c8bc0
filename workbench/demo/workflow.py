"""The main job, end to end: pool, judge, publish, score, re-pool, and measure pool bias.

``run_workflow`` runs the eight steps of the workbench's workflow on a collection
folder (by default the Cranfield sample) against one store, non-interactively:

1. ingest the collection (documents, topics, reference qrels);
2. produce BM25, dense and hybrid (RRF) runs at ``run_depth``;
3. build a depth-``pool_depth`` pool over the three runs (pool v1);
4. judge it: the collection's reference judgments act as one named assessor
   (``<collection>-reference``) who judges exactly the pooled documents through
   the same service call a human's save takes (``services.judging.assessments.save_judgment``,
   validated against the rubric, one committed row per document). A pooled
   document the reference left out of a topic it judged gets grade 0 (the
   reference lists that topic's relevant documents completely, as Cranfield's
   and the SMART collections' judgments are treated); a pooled document of a
   topic the reference never judged is left unjudged and reported, never given
   a grade. The pools hold only topics the reference judged (``--topics
   judged``), so with a fresh store that case does not arise;
5. publish qrels v1 from pool v1 and export it to ``labels/``;
6. a new retriever arrives (BM25 with stemming and other k1/b): score it on v1
   with its pool-novel documents flagged, extend the pool with it (pool v2 = only
   the delta), judge the delta, publish qrels v2 (parent v1) and rescore all
   four runs;
7. score every run against the full reference qrels and report the gap between
   its recall on the pooled qrels and on the full judgments (pool bias);
8. leave-one-run-out: for each run, remove from qrels v2 the documents only that
   run contributed, rescore that run, and report its drop and two Kendall's taus
   between run orderings: with only that run rescored, and with every run
   rescored on the reduced qrels (``pooling.reusability``; Zobel, SIGIR 1998); a
   topic whose relevant documents all came from that run is excluded and counted.

Steps 7 and 8 are the commands ``workbench pool bias`` and ``workbench pool
reusability`` (``services.runs.pool_quality``).

Then the two-stage pipeline step (``demo.stages``): BM25 and the hybrid
as candidates, each reranked by the MiniLM bi-encoder, scored stage by stage,
and the hybrid's depth-versus-cost table.

Then a judging simulation (``demo.simulation``): the depth-100 pool
of the four runs judged in rank, move-to-front, bandit and CAL order with the
reference judgments as the oracle, and the judgments each needs.

Then the release gate: may the new run replace bm25? (``demo.gate``,
policy ``examples/gate.toml``; the Markdown report is written next to the plots),
and bm25's categorised miss list at K = 20 against the full reference judgments
(``demo.misses``).

Then a filtered scenario (``demo.filters``): an as-of-year eligibility
filter per topic over the documents' ``year`` metadata, BM25 and dense runs
pre- and post-filtered at K = 10 and 50, scored on eligible documents, with the
topics that came back short and the leaks of the unfiltered runs.

Last, sampled judging (``demo.sampling``): a stratified sample of the depth-100
pool of the four runs and of the collection outside it, judged by the reference
assessor, published as a sample qrels version and scored: R@20 estimated with
its interval beside the pooled and full values.

Every step is idempotent: a second call on the same store reuses the stored
runs, pools, judgments and qrels versions (re-judging nothing), so the job can
be resumed after an interruption and the UI can be started on its result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from pooling.reusability import LeaveOneOut
from workbench.errors import UnknownNameError, ValidationError
from workbench.judging.queue import JudgingView
from workbench.scoring.evaluate import Evaluation, Evaluator
from workbench.scoring.measures import Measure, parse_measure

if TYPE_CHECKING:
    from pooling.retrievers.dense import Encoder
    from workbench.demo.sampling import SamplingDemo
    from workbench.demo.stages import PipelineDemo
    from workbench.demo.units import UnitsDemo
    from workbench.services.runs.pool_topics import TopicSelection
    from workbench.store import Store
    from workbench.store.pools import PoolInfo
    from workbench.store.qrels import QrelsVersionInfo

Say = Callable[[str], None]

DEMO_LEAD = "demo-lead"
DEMO_LEAD_TOKEN = "demo-lead-token"
"""The demo lead's token, printed by the demo so the UI can be signed into.
A demo store is a sandbox; create real leads with ``workbench users add``."""


def reference_assessor(collection: str) -> str:
    """The reference assessor's user name: ``<collection>-reference`` (the collection cut to fit 64 characters)."""
    return f"{collection[:54]}-reference"


def reference_token(collection: str) -> str:
    """The reference assessor's token in a demo store (a sandbox)."""
    return f"{reference_assessor(collection)}-token"


@dataclass(frozen=True)
class ReferenceJudging:
    """What ``judge_with_reference`` did on one pool version.

    Attributes:
        saved: judgments saved by this call.
        left_unjudged: pooled documents of topics the reference never judged (no grade given).
        unjudged_topics: those topics, natural order.
    """

    saved: int = 0
    left_unjudged: int = 0
    unjudged_topics: tuple[str, ...] = ()
RULE = "median"


def _quiet(_: str) -> None:
    pass


@dataclass(frozen=True)
class WorkflowOptions:
    """What the workflow runs on and with which settings.

    Attributes:
        folder: the collection folder (BEIR layout with ``qrels.reference.txt``).
        collection: collection name (None = the folder's name).
        run_depth: documents per topic of each run (step 2), >= pool_depth.
        pool_depth: pool depth k (step 3).
        cutoffs: the k of R@k, Judged@k and pool-novel counts.
        headline_k: the k of the headline R@k (bias gaps, leave-one-run-out, moves).
        labels_dir: where qrels versions are exported.
        plot_dir: where recall-curve plots are written (None = no plots).
        encoder: an encoder to use instead of the packaged MiniLM (tests).
        model_path: a local sentence-transformers model folder (None = packaged MiniLM).
        threads: torch CPU threads for encoding (None = torch's default).
        new_run_params: BM25 parameters of the retriever that arrives in step 6.
        simulate: run the judging simulation (``demo.simulation``) at the end.
    """

    folder: Path
    collection: str | None = None
    run_depth: int = 100
    pool_depth: int = 20
    cutoffs: tuple[int, ...] = (5, 10, 20, 50, 100)
    headline_k: int = 20
    labels_dir: Path = Path("labels")
    plot_dir: Path | None = None
    encoder: Encoder | None = None
    model_path: Path | None = None
    threads: int | None = None
    new_run_params: Mapping[str, object] = field(
        default_factory=lambda: {"k1": 1.5, "b": 0.6, "stemmer": "english"}
    )
    simulate: bool = True

    def measures(self) -> list[Measure]:
        """R@k and Judged@k for every cutoff, and nDCG@10, RR@10, P@10."""
        ms = [parse_measure(f"R@{k}") for k in self.cutoffs]
        ms += [parse_measure(m) for m in ("nDCG@10", "RR@10", "P@10")]
        ms += [parse_measure(f"Judged@{k}") for k in self.cutoffs]
        return ms


@dataclass
class WorkflowReport:
    """Everything the workflow produced, with full-precision numbers.

    Attributes:
        collection, collection_version, n_documents, n_topics: the collection.
        runs: the three pooled runs, then the new run.
        pool_v1, pool_v2: the pool versions (v2 holds only the delta).
        qrels_v1, qrels_v2, reference: the qrels versions scored against.
        delta_judged: judgments the reference assessor saved for pool v2.
        judged_v1: judgments saved for pool v1 (0 when resumed).
        reference_assessor: the reference assessor's user name (``<collection>-reference``).
        pools_created: the pool versions this call created (reused ones are not listed).
        topics_not_pooled: topics of the collection without any reference judgment (not pooled).
        left_unjudged: pooled documents of topics the reference never judged, left unjudged.
        positives_only: qrels version name -> True when it holds no non-relevant judgment.
        no_delta: the new run brought no pool-novel document (pool v1 held all it ranks within
            the depth): "pool v2" is pool v1 and qrels v2 repeats v1's entries.
        evaluations: qrels version name -> run -> Evaluation.
        bias: run -> (R@headline on qrels v2, on the full reference over the same topics).
        loo: leave-one-run-out rows, measure ``headline``.
        headline: the headline measure (R@headline_k).
        exports: qrels files written.
        plots: plot files written.
        tokens: user -> token of the demo users (sandbox store).
        lead_queue: documents of pool v2 still to judge in the demo lead's UI queue,
            as a second assessor beside the reference (agreement becomes measurable).
        pipelines: the two-stage pipeline step (``demo.stages``): the
            four-run table and the depth table.
        gate: the release gate of the new run against bm25 (``demo.gate``) and
            the Markdown report written, or None.
        misses: bm25's categorised miss list at K = 20 against the full reference judgments
            (``demo.misses``), or None.
        units: the retrieval-unit step (``demo.units``): a chunked collection
            scored at chunk and document level side by side.
        sampling: the sampled-judging step (``demo.sampling``): R@20 estimated from a stratified sample,
            beside the pooled and full values.
    """

    collection: str = ""
    collection_version: str = ""
    n_documents: int = 0
    n_topics: int = 0
    runs: list[str] = field(default_factory=list)
    new_run: str = ""
    pool_v1: PoolInfo | None = None
    pool_v2: PoolInfo | None = None
    qrels_v1: QrelsVersionInfo | None = None
    qrels_v2: QrelsVersionInfo | None = None
    reference: QrelsVersionInfo | None = None
    judged_v1: int = 0
    delta_judged: int = 0
    reference_assessor: str = ""
    pools_created: list[str] = field(default_factory=list)
    topics_not_pooled: tuple[str, ...] = ()
    left_unjudged: int = 0
    positives_only: dict[str, bool] = field(default_factory=dict)
    no_delta: bool = False
    novel_on_v1: dict[str, dict[int, int]] = field(default_factory=dict)
    evaluations: dict[str, dict[str, Evaluation]] = field(default_factory=dict)
    bias: dict[str, tuple[float, float]] = field(default_factory=dict)
    loo: list[LeaveOneOut] = field(default_factory=list)
    headline: Measure | None = None
    exports: list[Path] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)
    lead_queue: int = 0
    pipelines: PipelineDemo | None = None
    simulation: object | None = None  # services.judging.simulation.SimulationRun of the judging simulation
    gate: tuple[object, Path | None] | None = None  # (services.gates.gate.GateReport, Markdown file) of the gate step
    misses: object | None = None  # services.evaluation.misses.MissReport of the miss-list step
    filters: object | None = None  # demo.filters.FilterDemoReport of the filtered scenario
    units: UnitsDemo | None = None
    sampling: SamplingDemo | None = None


# -- steps ---------------------------------------------------------------------------


def _ensure_users(store: Store, report: WorkflowReport, collection: str) -> tuple[object, object]:
    from workbench.errors import PermissionDeniedError
    from workbench.services.judging.assessments import sign_in

    existing = {u.name for u in store.users.list_users()}
    if DEMO_LEAD not in existing:
        try:
            store.users.add_user(DEMO_LEAD, "lead", token=DEMO_LEAD_TOKEN)
        except PermissionDeniedError as e:
            raise ValidationError(
                f"this store already has leads, so the demo cannot add its own ({e}); "
                "run the demo on a fresh store with --db"
            ) from e
    name, token = reference_assessor(collection), reference_token(collection)
    if name not in existing:
        store.users.add_user(name, "assessor", token=token, lead=DEMO_LEAD)
    report.reference_assessor = name
    report.tokens = {DEMO_LEAD: DEMO_LEAD_TOKEN, name: token}
    return sign_in(store.users, DEMO_LEAD, DEMO_LEAD_TOKEN), sign_in(store.users, name, token)


def _run(store: Store, name: str, make: Callable[[], object], say: Say) -> str:
    if store.runs.has_run(name):
        say(f"run {name}: already stored, reused")
    else:
        make()
    return name


def judge_with_reference(
    store: Store,
    lead: object,
    assessor: object,
    pool_version: str,
    reference: Mapping[str, Mapping[str, int]],
    say: Say = _quiet,
) -> ReferenceJudging:
    """Assign a pool version to the reference assessor and save their judgments.

    Each pooled document of a topic the reference judged gets the reference
    grade, or 0 when the reference left it out (the reference lists the
    topic's relevant documents completely). A pooled document of a topic the
    reference never judged is **left unjudged** (and counted): no grade is
    invented. Saves go through ``services.judging.assessments.save_judgment``, one
    committed judgment per document, exactly as the UI's saves do; documents
    the assessor already judged are skipped, so the call resumes after an
    interruption.

    Args:
        store: the store.
        lead: the demo lead's session (assigns the pool).
        assessor: the reference assessor's session.
        pool_version: the pool version to judge.
        reference: topic -> doc -> grade of the reference qrels.
        say: progress lines.

    Returns:
        ``ReferenceJudging``: judgments saved by this call, and the pooled
        documents (and their topics) left unjudged.
    """
    from workbench.ranking import natural_key
    from workbench.services.judging.assessments import assign_pool, queue_state, save_judgment

    name = str(getattr(assessor, "user"))  # noqa: B009 - a Session
    state = queue_state(store.judging, assessor)  # type: ignore[arg-type]
    assigned = {(e.topic_id, e.doc_id) for e in state.entries if e.pool_version == pool_version}
    if not assigned:
        assign_pool(store, lead, pool_version, [name], overlap=1)  # type: ignore[arg-type]
        state = queue_state(store.judging, assessor)  # type: ignore[arg-type]
    mine = [e for e in state.entries if e.pool_version == pool_version]
    unjudged_topics = tuple(sorted({e.topic_id for e in mine if not reference.get(e.topic_id)}, key=natural_key))
    left = sum(1 for e in mine if e.topic_id in set(unjudged_topics))
    if unjudged_topics:
        say(f"{left:,} pooled documents of {len(unjudged_topics)} topic(s) the reference never judged are left "
            f"unjudged ({', '.join(unjudged_topics[:10])}{' ...' if len(unjudged_topics) > 10 else ''})")
    todo = [e for e in mine if not e.judged and e.topic_id not in set(unjudged_topics)]
    if not todo:
        return ReferenceJudging(0, left, unjudged_topics)
    collection = store.pools.get_pool(pool_version).collection
    topics = store.collections.get_topics(collection)
    documents = store.collections.get_documents(collection)
    say(f"[starting] {name} judges {len(todo):,} documents of {pool_version}")
    saved = 0
    from pooling.progress import bar as progress_bar

    with store.connection("reference assessor judging"), \
            progress_bar(todo, desc=f"{name} judging", unit="doc", disable=say is _quiet) as bar:  # one open file
        for e in bar:
            view = JudgingView(position=e.position, n_queue=state.n_total, collection=collection,
                               pool_version=pool_version, topic=topics[e.topic_id],
                               document=documents[e.doc_id])
            grade = int(reference[e.topic_id].get(e.doc_id, 0))
            save_judgment(store, assessor, view, grade=max(grade, 0),  # type: ignore[arg-type]
                          save_token=f"{name}:{pool_version}:{e.topic_id}:{e.doc_id}")
            saved += 1
    say(f"[finished] {saved:,} judgments saved")
    return ReferenceJudging(saved, left, unjudged_topics)


def _publish(store: Store, lead: object, pool_version: str, name: str, parent: str | None,
             labels_dir: Path, say: Say) -> tuple[QrelsVersionInfo, Path]:
    from workbench.services.judging.assessments import export_qrels, publish

    try:
        info = store.qrels.get_qrels_info(name)
        say(f"qrels {name}: already published, reused")
        path = export_qrels(store.qrels, name, labels_dir)
        return info, path
    except UnknownNameError:
        pass
    result = publish(store.qrels, lead, pool_version, name, rule=RULE, parent_version=parent,  # type: ignore[arg-type]
                     labels_dir=labels_dir, note="published by the workbench demo")
    path = result.path if result.path is not None else export_qrels(store.qrels, name, labels_dir)
    say(f"published {name}: {result.info.n_entries:,} judgments over {result.info.n_topics} topics "
        f"-> {path}")
    return result.info, path


def _score(store: Store, qrels_name: str, runs: Sequence[str], measures: Sequence[Measure],
           topics: Sequence[str] | None = None) -> dict[str, Evaluation]:
    evaluator = Evaluator(store.qrels.get_qrels(qrels_name), measures, rel=1, missing="fail")
    out = {}
    for name in runs:
        failed = [t for t, s in store.runs.get_run_statuses(name).items() if s != "ok"]
        out[name] = evaluator.evaluate(store.runs.get_run(name), run_name=name, failed_topics=failed,
                                       topics=topics)
    return out


def run_workflow(store: Store, options: WorkflowOptions, say: Say = _quiet) -> WorkflowReport:
    """Run steps 1-8 (see the module docstring) and return the report's numbers.

    Raises:
        WorkbenchError: any step's error (bad folder, no reference qrels, a store
            whose leads are not the demo's, ...), with nothing half-written: each
            step commits its own transaction(s) and is skipped when already done.
    """
    if options.pool_depth > options.run_depth:
        raise ValidationError(f"pool depth {options.pool_depth} exceeds the run depth {options.run_depth}")
    report = WorkflowReport()
    measures = options.measures()
    report.headline = parse_measure(f"R@{options.headline_k}")
    wf = _Workflow(store, options, report, measures, say)

    say("[step 1/8] ingest the collection")
    reference = wf.ingest()

    say(f"[step 2/8] runs at depth {options.run_depth}")
    report.runs = wf.first_runs()

    say(f"[step 3/8] pool v1: depth-{options.pool_depth} union of {', '.join(report.runs)}")
    lead, assessor = _ensure_users(store, report, report.collection)
    _set_rubric(store, options.folder, report.collection, reference)
    selection = wf.pooled_topics()
    pool_v1 = wf.pool_v1(selection)

    say(f"[step 4/8] {report.reference_assessor} judges {pool_v1}")
    judged = judge_with_reference(store, lead, assessor, pool_v1, reference, say)
    report.judged_v1, report.left_unjudged = judged.saved, judged.left_unjudged

    say("[step 5/8] publish qrels v1")
    report.qrels_v1, path = _publish(store, lead, pool_v1, wf.names.v1, None, options.labels_dir, say)
    report.exports.append(path)

    say("[step 6/8] a new retriever arrives: score on v1, extend the pool, judge the delta, publish v2")
    pool_v2 = wf.new_retriever(_Judging(lead, assessor, reference), selection, pool_v1)

    say("[step 7/8] pool bias: score against the full reference judgments (table in the report)")
    wf.pool_bias()

    say("[step 8/8] leave-one-run-out on qrels v2 (table in the report)")
    wf.leave_one_out(pool_v2)

    wf.further_steps()
    # last, so that no step before it sees the sample pool or its judgments
    wf.sampling(_Judging(lead, assessor, reference))
    return report


class _QrelsNames(NamedTuple):
    """The qrels versions the workflow scores against: the reference, v1 and v2."""

    reference: str
    v1: str
    v2: str


class _Judging(NamedTuple):
    """Who judges and publishes a pool version: the demo lead's and the reference assessor's sessions,
    and the reference qrels (topic -> doc -> grade) the assessor copies."""

    lead: object
    assessor: object
    reference: Mapping[str, Mapping[str, int]]


@dataclass
class _Workflow:
    """The steps of ``run_workflow`` that fill its report, over one store with one set of options.

    Attributes:
        store: the store.
        options: the workflow's settings.
        report: the report the steps fill.
        measures: the measures every run is scored with (``WorkflowOptions.measures``).
        say: progress lines.
    """

    store: Store
    options: WorkflowOptions
    report: WorkflowReport
    measures: list[Measure]
    say: Say

    @property
    def names(self) -> _QrelsNames:
        """``<collection>-reference``, ``<collection>-v1`` and ``<collection>-v2`` (after step 1)."""
        c = self.report.collection
        return _QrelsNames(f"{c}-reference", f"{c}-v1", f"{c}-v2")

    @property
    def all_runs(self) -> list[str]:
        """The three pooled runs, then the new run (after step 6)."""
        return [*self.report.runs, self.report.new_run]

    def ingest(self) -> Mapping[str, Mapping[str, int]]:
        """Step 1: ingest the collection folder, fill the report's collection fields; the reference qrels."""
        from workbench.services.collections.ingest import ingest_folder

        store, report = self.store, self.report
        ingested = ingest_folder(store, self.options.folder, name=self.options.collection)
        collection = ingested.collection.collection
        for line in _describe(ingested):
            self.say(line)
        report.collection = collection
        report.collection_version = store.collections.latest_collection_version(collection)
        report.n_documents = len(store.collections.get_documents(collection))
        report.n_topics = len(store.collections.get_topics(collection))
        report.reference = store.qrels.get_qrels_info(self.names.reference)
        return store.qrels.get_qrels(self.names.reference)

    def first_runs(self) -> list[str]:
        """Step 2: the BM25, dense and hybrid (RRF) runs at ``run_depth``, each reused when stored."""
        from workbench.services.runs.pooling import (
            DenseRunRequest,
            make_bm25_run,
            make_dense_run,
            make_fused_run,
        )

        store, options, collection, say = self.store, self.options, self.report.collection, self.say
        d = options.run_depth
        bm25 = _run(store, "bm25", lambda: make_bm25_run(store, collection, "bm25", depth=d, say=say,
                                                         description="BM25 (k1=1.2, b=0.75), no stemming"), say)
        request = DenseRunRequest(collection, "dense", depth=d, description="all-MiniLM-L6-v2, cosine",
                                  model_path=options.model_path, threads=options.threads, progress=True)
        dense = _run(store, "dense", lambda: make_dense_run(store, request, encoder=options.encoder, say=say), say)
        rrf = _run(store, "rrf", lambda: make_fused_run(store.collections, store.runs, "rrf", [bm25, dense], depth=d, say=say,
                                                        description="RRF(k=60) of bm25 and dense"), say)
        return [bm25, dense, rrf]

    def pooled_topics(self) -> TopicSelection:
        """Step 3: the topics the reference judged; the others are not pooled (listed in the report)."""
        from workbench.services.runs.pool_topics import select_topics

        selection = select_topics(self.store.collections, self.store.pools, self.store.qrels, self.report.collection, f"judged:{self.names.reference}")
        self.report.topics_not_pooled = selection.left_out
        if selection.left_out:
            self.say(f"topics without any reference judgment are not pooled: {len(selection.left_out)} "
                     f"({', '.join(selection.left_out[:10])}{' ...' if len(selection.left_out) > 10 else ''})")
        return selection

    def pool_v1(self, selection: TopicSelection) -> str:
        """Step 3: pool v1, the depth-``pool_depth`` union of the three runs (reused when qrels v1 exists)."""
        from workbench.services.runs.pooling import build_pool

        store, report = self.store, self.report
        try:
            pool_v1_name = store.qrels.get_qrels_info(self.names.v1).pool_version or ""
            report.pool_v1 = store.pools.get_pool(pool_v1_name)
            self.say(f"pool {pool_v1_name}: already built, reused")
        except UnknownNameError:
            outcome = build_pool(store.pools, store.runs, report.runs, depth=self.options.pool_depth, topics=selection, say=self.say)
            report.pool_v1 = outcome.info
            if outcome.created:
                report.pools_created.append(outcome.info.pool_version)
        return report.pool_v1.pool_version

    def new_retriever(self, judging: _Judging, selection: TopicSelection, pool_v1: str) -> str:
        """Step 6: the stemmed BM25 run arrives. Score the four runs on v1 (pool-novel counts), extend
        the pool (v2 = the delta), judge the delta, publish qrels v2 (parent v1), rescore on v2.

        Returns:
            Pool v2's version (pool v1's when the new run brings no pool-novel document).
        """
        from workbench.services.runs.pooling import make_bm25_run

        store, options, report, names, say = self.store, self.options, self.report, self.names, self.say
        p = dict(options.new_run_params)
        report.new_run = _run(store, "bm25-stem", lambda: make_bm25_run(
            store, report.collection, "bm25-stem", depth=options.run_depth,
            k1=float(p["k1"]), b=float(p["b"]),  # type: ignore[arg-type]
            stemmer=p.get("stemmer"), say=say,  # type: ignore[arg-type]
            description=f"BM25 (k1={p['k1']}, b={p['b']}), Snowball English stemming"), say)
        report.evaluations[names.v1] = _score(store, names.v1, self.all_runs, self.measures)
        for name, ev in report.evaluations[names.v1].items():
            report.novel_on_v1[name] = {k: sum(n.unjudged.values()) for k, n in ev.novelty.items()}
        report.pool_v2 = _pool_v2(store, names.v2, report.new_run, pool_v1, options.pool_depth, say, selection,
                                  report)
        pool_v2 = report.pool_v2.pool_version
        judged = judge_with_reference(store, judging.lead, judging.assessor, pool_v2, judging.reference, say)
        report.delta_judged = judged.saved
        report.left_unjudged += judged.left_unjudged
        report.qrels_v2, path = _publish(store, judging.lead, pool_v2, names.v2, names.v1, options.labels_dir, say)
        report.exports.append(path)
        report.evaluations[names.v2] = _score(store, names.v2, self.all_runs, self.measures)
        report.lead_queue = _second_opinion_queue(store, judging.lead, pool_v2)
        return pool_v2

    def pool_bias(self) -> None:
        """Step 7: score every run against the full reference judgments over the topics scored on v2, and
        the gap of R@headline between the two (``workbench pool bias --pooled v2 --full reference``)."""
        from workbench.scoring.qrels_checks import positives_only, qrels_grades
        from workbench.services.runs import pool_quality

        store, report, names = self.store, self.report, self.names
        v2_topics = next(iter(report.evaluations[names.v2].values())).topics
        report.evaluations[names.reference] = _score(store, names.reference, self.all_runs, self.measures,
                                                     topics=v2_topics)
        report.positives_only = {q: positives_only(qrels_grades(store.qrels.get_qrels(q))) for q in report.evaluations}
        runs = {n: store.runs.get_run(n) for n in self.all_runs}
        bias = pool_quality.bias(store.pools, store.runs, store.qrels, names.v2, names.reference, k=self.options.headline_k, runs=runs)
        report.bias = {r.run: (r.pooled, r.full) for r in bias.report.rows}

    def leave_one_out(self, pool_v2: str) -> None:
        """Step 8: leave-one-run-out on qrels v2 (``workbench pool reusability <pool v2> --qrels v2``)."""
        from workbench.services.runs import pool_quality

        self.report.loo = list(pool_quality.reusability(self.store.pools, self.store.runs, self.store.qrels, pool_v2, self.names.v2,
                                                        k=self.options.headline_k).rows)

    def further_steps(self) -> None:
        """After step 8: the two-stage pipelines, the recall-curve plots, the judging simulation, the
        release gate, bm25's miss list, the filtered scenario and the retrieval units (module docstring)."""
        store, options, report, say = self.store, self.options, self.report, self.say
        collection, reference_name = report.collection, self.names.reference
        bm25, dense = report.runs[:2]  # the pooled runs are bm25, dense and rrf
        # two-stage pipelines (issue 10): the four-run table and the depth table, on the full judgments
        say("[pipelines] BM25 and hybrid candidates, reranked: stage-named recall and the depth table (in the report)")
        from workbench.demo.stages import PipelineOptions, run_pipeline_demo

        report.pipelines = run_pipeline_demo(store, PipelineOptions(
            collection=collection, qrels=reference_name, encoder=options.encoder, model_path=options.model_path,
            threads=options.threads, plot_dir=options.plot_dir), say)

        if options.plot_dir is not None:
            report.plots = _plots(report, options.plot_dir)

        # Judging simulation: adaptive judging order on a depth-``run_depth`` pool (demo.simulation)
        if options.simulate:
            from workbench.demo.simulation import simulation_step

            report.simulation, curves = simulation_step(
                store, collection, self.all_runs, reference_name, depth=options.run_depth,
                measure=str(report.headline), plot_dir=options.plot_dir, say=say)
            report.plots += curves

        # Release gate: may the new run replace bm25? (demo.gate; examples/gate.toml)
        from workbench.demo.gate import gate_step

        report.gate = gate_step(store, bm25, report.new_run, self.names.v2, say=say,
                                out_dir=options.plot_dir.parent if options.plot_dir is not None else None)
        # Why bm25 misses what it misses at K = 20 (demo.misses; issue 13)
        from workbench.demo.misses import misses_step

        report.misses = misses_step(store, bm25, reference_name, say=say)

        # Filtered scenario: as-of-year filters, pre- vs post-filtering at K = 10 and 50 (demo.filters)
        from workbench.demo.filters import filter_step

        report.filters = filter_step(store, collection, reference_name, {"bm25": bm25, "dense": dense},
                                     encoder=options.encoder, model_path=options.model_path,
                                     threads=options.threads, say=say)

        # Retrieval units: 64-token passages scored at chunk and document level (demo.units)
        from workbench.demo.units import units_step

        report.units = units_step(store, collection, bm25, reference_name, say=say)

    def sampling(self, judging: _Judging) -> None:
        """Sampled judging: R@20 estimated from a stratified sample of the depth-``run_depth`` pool
        (demo.sampling), judged by the reference assessor; run last, so that no step before it sees
        the sample pool or its judgments."""
        from workbench.demo.sampling import sampling_step

        store, options, report, say = self.store, self.options, self.report, self.say

        def judge(pool_version: str) -> int:
            return judge_with_reference(store, judging.lead, judging.assessor, pool_version, judging.reference,
                                        say).saved

        report.sampling = sampling_step(store, judging.lead, judge, self.all_runs, report.evaluations[self.names.v2],
                                        pooled_qrels=self.names.v2, full_qrels=self.names.reference,
                                        run_depth=options.run_depth, pool_depth=options.pool_depth,
                                        k=options.headline_k, say=say, labels_dir=options.labels_dir)
        if report.sampling.file is not None:
            report.exports.append(report.sampling.file)


def _second_opinion_queue(store: Store, lead: object, pool_version: str) -> int:
    """Queue a pool version for the demo lead, so the UI has something to judge.

    The lead's grades sit beside the reference assessor's on the same documents:
    the Agreement page then measures the two, and the Adjudicate page lists where
    they differ. Idempotent: an existing queue is left as it is.

    Returns:
        The number of documents of ``pool_version`` still unjudged in the lead's queue.
    """
    from workbench.services.judging.assessments import assign_pool, queue_state

    entries = [e for e in queue_state(store.judging, lead).entries if e.pool_version == pool_version]  # type: ignore[arg-type]
    if not entries:
        assign_pool(store, lead, pool_version, [DEMO_LEAD], overlap=1)  # type: ignore[arg-type]
        entries = [e for e in queue_state(store.judging, lead).entries if e.pool_version == pool_version]  # type: ignore[arg-type]
    return sum(1 for e in entries if not e.judged)


def _set_rubric(store: Store, folder: Path, collection: str,
                reference: Mapping[str, Mapping[str, int]]) -> None:
    """Judge on the rubric the reference qrels were graded on (``qrels.meta.json``'s ``rubric``), else
    ``binary`` when the reference holds only grades 0 and 1 (``services.judging.rubrics.suggested_rubric``)."""
    import json

    from workbench.services.judging.rubrics import suggested_rubric

    rubric = None
    meta = folder / "qrels.meta.json"
    if meta.is_file():
        try:
            rubric = json.loads(meta.read_text(encoding="utf-8")).get("rubric")
        except ValueError as e:
            raise ValidationError(f"{meta}: expected a JSON object, found invalid JSON ({e})") from e
    rubric = rubric or suggested_rubric(reference)
    if rubric and store.rubrics.collection_rubric(collection).name != rubric:
        store.rubrics.set_collection_rubric(collection, str(rubric), lead=DEMO_LEAD)


def _pool_v2(store: Store, v2_name: str, new: str, pool_v1: str, depth: int, say: Say,
             selection: TopicSelection, report: WorkflowReport) -> PoolInfo:
    from workbench.services.runs.pooling import extend_pool

    try:
        name = store.qrels.get_qrels_info(v2_name).pool_version or ""
    except UnknownNameError:
        name = ""
    if name:
        say(f"pool {name}: already built, reused")
        report.no_delta = name == pool_v1
        return store.pools.get_pool(name)
    ext = extend_pool(store.pools, store.runs, store.qrels, [new], parent=pool_v1, depth=depth, topics=selection, say=say)
    if ext.info is None:
        # A small collection can be pooled whole by v1: nothing is left to judge. The workflow goes on
        # with pool v1 as "pool v2", so qrels v2 repeats v1's entries (and the report says so).
        say(f"the new run {new} brings no pool-novel document to {pool_v1}: nothing to re-pool; qrels v2 repeats v1")
        report.no_delta = True
        return store.pools.get_pool(pool_v1)
    if ext.created:
        report.pools_created.append(ext.info.pool_version)
    return ext.info


def _describe(ingested: object) -> list[str]:
    from workbench.services.collections.ingest import describe_ingest

    return list(describe_ingest(ingested))  # type: ignore[arg-type]


def _plots(report: WorkflowReport, plot_dir: Path) -> list[Path]:
    from workbench.reports.charts import recall_curve_chart, save_chart

    plot_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for qname in report.evaluations:  # v1, v2, and the full judgments: the pool bias, visible
        chart = recall_curve_chart(list(report.evaluations[qname].values()), title=f"R@k on {qname}")
        for suffix in (".html", ".png"):
            path = plot_dir / f"recall-curves-{qname}{suffix}"
            save_chart(chart, path)
            paths.append(path)
    return paths
