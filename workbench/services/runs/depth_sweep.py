"""Depth versus recall versus cost: rerank a candidate run at several depths and measure each.

``depth_sweep`` prepares the reranker once for the deepest candidates (model
loading, cached document vectors), then for each depth D makes two passes:

* the ranking pass reranks every topic's top D with ``reranker.score`` (a
  bi-encoder reads the cached document vectors: one query encoding and D dot
  products per topic, the same scores as ``workbench run rerank`` stores); its
  run gives the recall columns, and a bi-encoder's timings are kept as the
  labelled "cached" cost (about flat in D);
* the cost pass reranks the top D of the cost topics (``cost_topics`` evenly
  spaced, or all) with ``reranker.score_from_text``: every per-document step
  inside the topic's timed block (a bi-encoder encodes the query and the D
  candidates, a cross-encoder reads the D pairs), so the cost per topic grows
  with D as it does for a reranker that has not encoded the collection ahead.
  This is the sweep's cost: p50/p95/mean, ms per document, the fit and the
  marginal recall per ms.

With ``repeat`` > 1 the depths are measured in interleaved rounds (10, 50,
100, 200, 10, 50, ...) so a change of machine load hits every depth alike, and
each topic's cost is the median of its rounds. Recall is computed once per
depth (reranking is deterministic).

Nothing is stored: the sweep's rerank runs live in memory (``workbench run
rerank`` stores one depth with its lineage).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.errors import ValidationError
from workbench.lineage import RerankCost, TopicCost
from workbench.scoring.depth import (
    CostFit,
    DepthPoint,
    SweepRow,
    cap_depths,
    cost_sample,
    fit_cost,
    sweep_rows,
)
from workbench.scoring.evaluate import Evaluator, MissingPolicy, check_policy
from workbench.scoring.measures import Measure, R, nDCG
from workbench.services.runs.stages import (
    CandidateSet,
    RerankerSpec,
    load_candidates,
    make_reranker,
    ready_line,
    threads_label,
)

if TYPE_CHECKING:
    from pooling.retrievers.rerank import Reranker
    from workbench.services.evaluation.refs import QrelsRef, StoreOpener

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass(frozen=True)
class DepthSweep:
    """The result of a depth sweep.

    Attributes:
        candidate_run: the candidate run.
        reranker: the reranker's short name; reranker_kind, model: its kind and identity.
        k: the final cutoff.
        qrels: the qrels used.
        rows: one ``SweepRow`` per depth, ascending.
        costs: depth -> the measured ``RerankCost`` of reranking from text
            (document encoding inside the timed block) on the cost topics
            (per-topic median over rounds).
        fit: how that per-topic cost scales with the number of candidates.
        repeat: measurement rounds per depth.
        prepare_ms: model loading and the cached document vectors, once (ms).
        topics: topics every recall figure is averaged over.
        missing: the missing-topic policy.
        cost_topics: the topics ``costs`` was measured on (a subset of ``topics``).
        cached_costs: depth -> the ranking pass's ``RerankCost`` with document
            vectors read from the cache, every topic (bi-encoder); empty when
            nothing is cached (a cross-encoder's ranking pass is its cost pass).
        run_depth: the candidate run's depth (documents per topic).
        capped: the depths asked for that were deeper than the run (swept at
            ``run_depth`` instead), ascending; empty when none was.
        capped_note: what capping did, one sentence ("" when nothing was capped).
    """

    candidate_run: str
    reranker: str
    reranker_kind: str
    model: str
    k: int
    qrels: QrelsRef
    rows: tuple[SweepRow, ...]
    costs: dict[int, RerankCost]
    fit: CostFit | None
    repeat: int
    prepare_ms: float
    topics: tuple[str, ...]
    missing: MissingPolicy
    cost_topics: tuple[str, ...] = ()
    cached_costs: dict[int, RerankCost] = field(default_factory=dict)
    run_depth: int = 0
    capped: tuple[int, ...] = ()
    capped_note: str = ""


def depth_sweep(
    candidates: str,
    depths: Sequence[int],
    qrels_ref: str,
    *,
    open_store: StoreOpener,
    final_k: int = 10,
    spec: RerankerSpec = RerankerSpec(),
    reranker: Reranker | None = None,
    repeat: int = 1,
    cost_topics: int = 0,
    rel: int = 1,
    missing: str = "fail",
    progress: bool = False,
    say: Say = _quiet,
    clock: Callable[[], float] = time.perf_counter,
) -> DepthSweep:
    """Rerank the top D of a stored run for each D and measure recall and cost.

    A depth deeper than the candidate run is capped at the run's depth (swept
    there once, and said so through ``say`` and in the result): a sweep asks
    how much the depth buys, and the run's full depth is the deepest answer it
    holds (``scoring.depth.cap_depths``).

    Args:
        candidates: the stored candidate run.
        depths: candidate depths, e.g. (10, 50, 100, 200).
        qrels_ref: a qrels file path or a stored qrels version name.
        open_store: returns the store (also the bi-encoder's embedding cache).
        final_k: k of R@k and nDCG@k after reranking.
        spec: which reranker (default: packaged all-MiniLM-L6-v2 bi-encoder).
        reranker: a ready ``Reranker`` instead of ``spec``.
        repeat: measurement rounds (>= 1), interleaved across depths; a topic's
            cost is the median of its rounds.
        cost_topics: how many topics (with candidates) the cost is measured on,
            evenly spaced (``scoring.depth.cost_sample``); 0 = every topic.
            Reranking from text costs about D document encodings per topic.
        rel: inclusive minimum grade of a relevant document.
        missing: ``fail`` | ``zero`` | ``exclude`` for qrels topics the run lacks.
        progress: a tqdm bar on stderr.
        say: receives ``[starting]``/``[finished]`` lines.
        clock: seconds (monotonic) for every timing; ``time.perf_counter``.

    Returns:
        The ``DepthSweep``.

    Raises:
        UnknownNameError: unknown run or qrels version.
        ValidationError: no depth, bad k, repeat or cost_topics.
        MissingTopicsError: ``missing="fail"`` and the run lacks a qrels topic.
    """
    from workbench.scoring.columns import rank_run, run_columns_from_mapping
    from workbench.services.evaluation.load import load_qrels, load_run

    if not depths:
        raise ValidationError("expected at least one depth, e.g. --depths 10,50,100,200")
    if final_k < 1 or repeat < 1:
        raise ValidationError(f"expected --final-k >= 1 and --repeat >= 1, found {final_k} and {repeat}")
    cost_sample((), cost_topics)  # refuses a negative count before anything is loaded
    policy = check_policy(missing)
    store = open_store()
    capping = cap_depths(depths, store.runs.get_run_info(candidates).depth, candidates)
    if capping.capped:
        say(f"[warning] {capping.note}; produce the candidate run with --depth {capping.capped[-1]} or more to "
            "sweep deeper")
    ds = list(capping.depths)
    cands = load_candidates(store.collections, store.runs, candidates, ds[-1])
    rr = reranker or make_reranker(spec, cache=store.vectors, progress=progress)
    measures: list[Measure] = [R(d) for d in ds] + ([R(final_k)] if final_k not in ds else []) + [nDCG(final_k)]
    qref, qcols = load_qrels(qrels_ref, open_store)
    evaluator = Evaluator(qcols, measures, rel=rel, missing=policy)
    cand_ref, cand_rr = load_run(candidates, open_store)
    cand_eval = evaluator.evaluate(cand_rr, run_name=candidates, failed_topics=cand_ref.failed_topics)
    topics = cand_eval.topics
    timed = cost_sample([t for t in topics if cands.lists.get(t) and t in cands.queries], cost_topics)
    say(f"[starting] depth sweep of {candidates}: depths {', '.join(map(str, ds))}, {rr.label} ({rr.kind}), "
        f"{repeat} round(s); cost from text on {len(timed):,} of {len(topics):,} topics; "
        f"torch threads: {threads_label(rr.threads)}")
    t0 = clock()
    rr.prepare(cands.documents, cands.text_hashes)
    prepare_ms = (clock() - t0) * 1000.0
    say(f"[finished] {ready_line(rr, len(cands.documents))} [elapsed] {prepare_ms / 1000:.1f} s")
    lists = {d: {t: docs[:d] for t, docs in cands.lists.items()} for d in ds}
    m = _measure(rr, cands, lists, {t: cands.queries[t] for t in timed}, repeat, progress, clock)
    keep = set(topics)
    points: list[DepthPoint] = []
    costs: dict[int, RerankCost] = {}
    cached_costs: dict[int, RerankCost] = {}
    n_all: list[float] = []
    ms_all: list[float] = []
    rk, nk = R(final_k), nDCG(final_k)
    for d in ds:
        cost = _cost(f"{candidates}@{d}", rr, lists[d], m.full[d], keep)
        costs[d] = cost
        if rr.kind == "bi-encoder":  # the ranking pass read cached vectors: a cost of its own, labelled so
            cached_costs[d] = _cost(f"{candidates}@{d} (cached vectors)", rr, lists[d], m.cached[d], keep)
        n_all += [float(c.n_documents) for c in cost.topics]
        ms_all += [c.wall_ms for c in cost.topics]
        final_eval = evaluator.evaluate(rank_run(run_columns_from_mapping(m.runs[d], f"{candidates}+{rr.label}@{d}")),
                                        failed_topics=cand_ref.failed_topics, topics=topics)
        a_c = cand_eval.aggregates[R(d)]
        per_c, per_f = cand_eval.per_topic[R(d)], final_eval.per_topic[R(d)]
        unchanged = all(abs(per_c[t].value - per_f[t].value) <= 1e-12 for t in topics)
        points.append(DepthPoint(
            depth=d, k=final_k, candidate_recall=a_c.macro, candidate_recall_micro=a_c.micro or 0.0,
            ceiling=a_c.ceiling if a_c.ceiling is not None else float("nan"),
            candidate_recall_k=cand_eval.aggregates[rk].macro, final_recall=final_eval.aggregates[rk].macro,
            final_ndcg=final_eval.aggregates[nk].macro, recall_unchanged=unchanged, n_topics=cost.n_topics,
            n_documents=cost.n_documents, mean_ms=cost.ms_per_topic, p50_ms=cost.p(50), p95_ms=cost.p(95),
            ms_per_document=cost.ms_per_document,
            cached_ms=cached_costs[d].ms_per_topic if d in cached_costs else None))
    fit = fit_cost(n_all, ms_all) if len(n_all) >= 2 else None
    say(f"[finished] depth sweep of {candidates} [elapsed] {clock() - t0:.1f} s")
    return DepthSweep(candidates, rr.label, rr.kind, f"{rr.model_name}@sha256:{rr.model_hash[:16]}", final_k, qref,
                      tuple(sweep_rows(points, fit)), costs, fit, repeat, prepare_ms, topics, policy, timed,
                      cached_costs, capping.run_depth, capping.capped, capping.note)


@dataclass
class _Measured:
    """What the rounds measured: the ranking pass's run per depth and the per-topic ms of both passes."""

    runs: dict[int, dict[str, dict[str, float]]]
    cached: dict[int, dict[str, list[float]]]
    full: dict[int, dict[str, list[float]]]


def _measure(rr: Reranker, cands: CandidateSet, lists: dict[int, dict[str, list[str]]], timed: dict[str, str],
             repeat: int, progress: bool, clock: Callable[[], float]) -> _Measured:
    """``repeat`` rounds over the depths; per depth the ranking pass (every topic) then the cost pass (``timed``)."""
    from pooling.retrievers.rerank import rerank_topics

    ds = sorted(lists)
    out = _Measured({}, {d: {} for d in ds}, {d: {} for d in ds})
    bar: Any = None
    if progress:
        from pooling.progress import bar as progress_bar

        bar = progress_bar(total=repeat * len(ds), desc="depth sweep", unit="depth")
    try:
        for _ in range(repeat):
            for d in ds:
                ranked = rerank_topics(rr, cands.queries, lists[d], cands.documents, text_hashes=cands.text_hashes,
                                       prepare=False, clock=clock)
                out.runs.setdefault(d, ranked.run)
                from_text = rerank_topics(rr, timed, lists[d], cands.documents, prepare=False, from_text=True,
                                          clock=clock)
                for result, into in ((ranked, out.cached[d]), (from_text, out.full[d])):
                    for tc in result.cost.topics if result.cost else ():
                        into.setdefault(tc.topic_id, []).append(tc.wall_ms)
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return out


def _cost(name: str, rr: Reranker, lists: dict[str, list[str]], timings: dict[str, list[float]],
          keep: set[str]) -> RerankCost:
    """A ``RerankCost`` of the topics in ``keep``: each topic's median over its rounds."""
    topic_costs = tuple(TopicCost(t, len(lists[t]), statistics.median(ms))
                        for t, ms in sorted(timings.items()) if t in keep)
    return RerankCost(name, rr.device, rr.batch_size, rr.threads, 0.0, topic_costs)
