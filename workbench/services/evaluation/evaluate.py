"""The audit and evaluate steps, run by run: read -> audit (ids, completion) -> evaluate (+ leaks, no-answer).

Each run is read when its turn comes, audited as it is read (its returned ids
against the collection version, its completion over the eligible topics),
scored by the scope's evaluator and let go, so memory does not grow with the
number of runs. Under ``missing="exclude"`` with several runs, every run is
read first and the topics any run misses are left out of every run's
averages: one report averages all runs over the same topics.

The scorers (``scoring.evaluate`` columnar, ``scoring.small`` for small plain
files) are chosen by the load step and built by the restrict step; this step
only calls them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.scoring.small import SmallEvaluator, SmallRun

if TYPE_CHECKING:
    from collections.abc import Sequence

    from workbench.scoring.abstention import NoAnswerResult
    from workbench.scoring.columns import RankedRun
    from workbench.scoring.eligibility import Eligibility, RestrictedQrels, RunEligibility
    from workbench.scoring.estimate_run import RunEstimate
    from workbench.scoring.results import Evaluation
    from workbench.scoring.validity import Completion
    from workbench.services.evaluation.audit import IdAuditor
    from workbench.services.evaluation.load import Loaded
    from workbench.services.evaluation.refs import RunRef, StoreOpener
    from workbench.services.evaluation.request import ScoreEnv, ScoreRequest
    from workbench.services.evaluation.restrict import Scope


@dataclass
class Scored:
    """What the evaluate step leaves: per run, in request order.

    Attributes:
        refs: where each run came from.
        evaluations: one per run.
        seconds: wall time of reading and scoring each run.
        completion: each run's completion over the eligible topics.
        eligibility: each run's leaks under the filters (None: unfiltered).
        no_answer: each run's no-answer figures (empty when no topic is marked).
        auditor: the ID audit, fed as the runs were read.
        estimates: each run's estimates from the judged sample (empty unless the qrels version is a sample's).
    """

    refs: list[RunRef] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    completion: list[Completion] = field(default_factory=list)
    eligibility: list[RunEligibility | None] = field(default_factory=list)
    no_answer: list[NoAnswerResult] = field(default_factory=list)
    auditor: IdAuditor | None = None
    estimates: list[RunEstimate] = field(default_factory=list)


def evaluate_runs(request: ScoreRequest, loaded: Loaded, scope: Scope, env: ScoreEnv) -> Scored:
    """Read, audit and score every run of the request within ``scope``.

    Raises:
        MissingTopicsError: ``missing="fail"`` and a run lacks a topic.
        InputFormatError, UnknownNameError: a run that cannot be read.
    """
    from workbench.services.evaluation.audit import IdAuditor

    evaluator = scope.evaluator
    auditor = IdAuditor(loaded.qrels, evaluator.relevant_doc_ids(scope.eligible), env.open_store,
                        collection=request.collection)
    out = Scored(auditor=auditor)
    n = len(request.runs)
    if env.run_sources is not None and len(env.run_sources) != n:
        raise ValueError("run_sources must give one loader per run reference")
    loaded_runs: list[tuple[RunRef, RankedRun | SmallRun] | None] = [None] * n
    topics = scope.topics
    if request.missing == "exclude" and n > 1:
        # One topic set for every run: drop the topics any run misses.
        dropped_any: set[str] = set()
        for i in range(n):
            loaded_runs[i] = _read_audited(request, loaded, scope, env, i, out)
            run_ref, rr = loaded_runs[i]  # type: ignore[misc]
            dropped_any.update(evaluator.missing_topics(rr, run_ref.failed_topics))  # type: ignore[arg-type]
        base = topics if topics is not None else scope.qrels_topics
        topics = tuple(t for t in base if t not in dropped_any)
    cutoffs = sorted({m.cutoff for m in loaded.measures if m.cutoff is not None})
    for i in range(n):
        t0 = time.perf_counter()
        pair = loaded_runs[i] or _read_audited(request, loaded, scope, env, i, out)
        loaded_runs[i] = None
        run_ref, rr = pair
        e = _evaluate_one(evaluator, rr, run_ref, topics, request.output.keep_documents)
        if scope.eligibility is not None and scope.restricted is not None:
            assert not isinstance(rr, SmallRun)  # eligibility is never applied on the small path
            out.eligibility.append(_run_eligibility(env.open_store, run_ref, rr, scope.eligibility, scope.restricted,
                                                    cutoffs, e.topics))
        else:
            out.eligibility.append(None)
        if scope.marks is not None and scope.marks.topics:
            out.no_answer.append(_no_answer_of(request, scope, env, i, run_ref, e))
        if scope.sample is not None:
            out.estimates.append(_estimates_of(request, loaded, scope, rr, run_ref, e, topics))
        del pair, rr
        out.refs.append(run_ref)
        out.evaluations.append(e)
        out.seconds.append(time.perf_counter() - t0)
        env.say(f"[finished] scoring {run_ref.name}: {len(e.topics):,} topics [elapsed] {out.seconds[-1]:.2f} s")
    return out


def _read(request: ScoreRequest, loaded: Loaded, env: ScoreEnv, i: int) -> tuple[RunRef, RankedRun | SmallRun]:
    """Read run ``i``: from the small reader's result, the run source, or the file or store."""
    from workbench.services.evaluation.refs import RunRef

    ref = request.runs[i]
    t0 = time.perf_counter()
    env.say(f"[starting] reading run {ref}")
    rr: RankedRun | SmallRun
    if loaded.small is not None:  # read already (to choose the scorer): report that reading's time
        rr, seconds_read = loaded.small[i]
        t0 -= seconds_read
        run_ref = RunRef(rr.name or Path(ref).stem, "file", ref, n_lines=rr.n_lines)
    elif env.run_sources is not None:
        run_ref, rr = env.run_sources[i]()
    else:
        from workbench.services.evaluation.load import load_run

        run_ref, rr = load_run(ref, env.open_store, trust_file_order=request.trust_file_order)
    env.say(f"[finished] reading run {ref}: {run_ref.n_lines:,} lines [elapsed] {time.perf_counter() - t0:.2f} s")
    return run_ref, rr


def _read_audited(request: ScoreRequest, loaded: Loaded, scope: Scope, env: ScoreEnv, i: int,
                  out: Scored) -> tuple[RunRef, RankedRun | SmallRun]:
    """Read run ``i``, then audit it: its ids against the collection version, its completion."""
    from workbench.services.evaluation.audit import run_completion

    run_ref, rr = _read(request, loaded, env, i)
    assert out.auditor is not None
    out.auditor.add_run(run_ref, rr)
    out.completion.append(run_completion(run_ref, rr, scope.eligible))
    return run_ref, rr


def _evaluate_one(evaluator: object, rr: RankedRun | SmallRun, run_ref: RunRef, topics: Sequence[str] | None,
                  keep_documents: bool) -> Evaluation:
    """One run scored by the scope's evaluator (the evaluator and the run come from one side)."""
    if isinstance(evaluator, SmallEvaluator):  # makes no document list it would drop
        assert isinstance(rr, SmallRun)
        return evaluator.evaluate(rr, run_name=run_ref.name, failed_topics=run_ref.failed_topics, topics=topics,
                                  keep_documents=keep_documents)
    from workbench.scoring.evaluate import Evaluator

    assert isinstance(evaluator, Evaluator) and not isinstance(rr, SmallRun)
    e = evaluator.evaluate(rr, run_name=run_ref.name, failed_topics=run_ref.failed_topics, topics=topics)
    return e if keep_documents else e.without_documents()


def _estimates_of(request: ScoreRequest, loaded: Loaded, scope: Scope, rr: RankedRun | SmallRun, run_ref: RunRef,
                  e: Evaluation, topics: Sequence[str] | None) -> RunEstimate:
    """One run's estimates from the judged sample (``services.evaluation.sampled``), the pooled values beside them.

    The cut-offs are the report's: R̂@k for each R@k, P̂@k for each P@k, infNDCG@k for each nDCG@k; the topics
    the report's (a topic set, exclusions), else every sampled topic; under ``missing="exclude"`` the topics the
    run lacks are left out, as its pooled values leave them.
    """
    from workbench.scoring.measures import P, R, nDCG
    from workbench.services.evaluation.sampled import estimate_ranked_run, with_pooled

    assert scope.sample is not None and not isinstance(rr, SmallRun)  # a stored qrels version: never the small path

    def ks(cls: type) -> tuple[int, ...]:
        return tuple(sorted({m.cutoff for m in loaded.measures if isinstance(m, cls) and m.cutoff is not None}))

    skip = frozenset(e.missing_topics) if request.missing == "exclude" else frozenset()
    est = estimate_ranked_run(rr, run_ref.name, scope.sample, tuple(topics) if topics is not None else None,
                              recall_ks=ks(R), precision_ks=ks(P), ndcg_ks=ks(nDCG), rel=request.rel, skip=skip)
    return with_pooled(est, e)


def _no_answer_of(request: ScoreRequest, scope: Scope, env: ScoreEnv, i: int, run_ref: RunRef,
                  e: Evaluation) -> NoAnswerResult:
    """One run's no-answer figures from its own scores (a run given in memory: any result answers)."""
    from workbench.services.evaluation.no_answer import answerable_topics, evaluate_run, run_scores

    assert scope.marks is not None
    given = env.run_sources is not None
    scores = {t: [1.0] * n for t, n in e.n_results.items() if n} if given else run_scores(
        request.runs[i], run_ref, env.open_store)
    return evaluate_run(scores, scope.marks, answerable_topics(scope.answerable_qrels, scope.marks, request.rel),
                        threshold=None if given else request.no_answer.threshold, run_name=run_ref.name)


def _run_eligibility(
    open_store: StoreOpener | None,
    run_ref: RunRef,
    rr: RankedRun,
    elig: Eligibility,
    restricted: RestrictedQrels,
    cutoffs: Sequence[int],
    topics: Sequence[str],
) -> RunEligibility:
    """Leaks of one run on the evaluated ``topics`` and its filter mode / short topics (the stored run's params).

    A topic outside the evaluated ones (another topic set's, one left out) is not this report's: its leaks
    are not counted here.
    """
    from workbench.scoring.columns import unpack_ids
    from workbench.scoring.eligibility import RunEligibility, find_leaks

    ranked: dict[str, list[str]] = {}
    evaluated = set(topics)
    for code, topic_id in enumerate(rr.topic_ids):
        if topic_id in evaluated and elig.is_filtered(topic_id):
            lo, hi = int(rr.starts[code]), int(rr.starts[code + 1])
            ranked[topic_id] = unpack_ids(rr.doc_words[lo:hi]) if hi > lo else []
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
