"""Depth versus recall versus cost: rerank a candidate run at several depths and measure each.

``depth_sweep`` prepares the reranker once for the deepest candidates (model
loading, document vectors), then for each depth D reranks every topic's top D
and times each topic. With ``repeat`` > 1 the depths are measured in
interleaved rounds (10, 50, 100, 200, 10, 50, ...) so a change of machine load
hits every depth alike, and each topic's cost is the median of its rounds.
Recall is computed once per depth (reranking is deterministic).

Nothing is stored: the sweep's rerank runs live in memory (``workbench run
rerank`` stores one depth with its lineage).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.errors import ValidationError
from workbench.lineage import RerankCost, TopicCost
from workbench.scoring.depth import CostFit, DepthPoint, SweepRow, cap_depths, fit_cost, sweep_rows
from workbench.scoring.evaluate import Evaluator, MissingPolicy, check_policy
from workbench.scoring.measures import Measure, R, nDCG
from workbench.services.runs.stages import (
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
        costs: depth -> the measured ``RerankCost`` (per-topic median over rounds).
        fit: how the per-topic cost scales with the number of candidates.
        repeat: measurement rounds per depth.
        prepare_ms: model loading and document vectors, once (ms).
        topics: topics every number is averaged over.
        missing: the missing-topic policy.
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
    rel: int = 1,
    missing: str = "fail",
    progress: bool = False,
    say: Say = _quiet,
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
        rel: inclusive minimum grade of a relevant document.
        missing: ``fail`` | ``zero`` | ``exclude`` for qrels topics the run lacks.
        progress: a tqdm bar on stderr.
        say: receives ``[starting]``/``[finished]`` lines.

    Returns:
        The ``DepthSweep``.

    Raises:
        UnknownNameError: unknown run or qrels version.
        ValidationError: no depth, bad k or repeat.
        MissingTopicsError: ``missing="fail"`` and the run lacks a qrels topic.
    """
    from pooling.retrievers.rerank import rerank_topics
    from workbench.scoring.columns import rank_run, run_columns_from_mapping
    from workbench.services.evaluation.load import load_qrels, load_run

    if not depths:
        raise ValidationError("expected at least one depth, e.g. --depths 10,50,100,200")
    if final_k < 1 or repeat < 1:
        raise ValidationError(f"expected --final-k >= 1 and --repeat >= 1, found {final_k} and {repeat}")
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
    say(f"[starting] depth sweep of {candidates}: depths {', '.join(map(str, ds))}, {rr.label} ({rr.kind}), "
        f"{repeat} round(s); torch threads: {threads_label(rr.threads)}")
    t0 = time.perf_counter()
    rr.prepare(cands.documents, cands.text_hashes)
    prepare_ms = (time.perf_counter() - t0) * 1000.0
    say(f"[finished] {ready_line(rr, len(cands.documents))} [elapsed] {prepare_ms / 1000:.1f} s")
    lists = {d: {t: docs[:d] for t, docs in cands.lists.items()} for d in ds}
    timings: dict[int, dict[str, list[float]]] = {d: {} for d in ds}
    runs: dict[int, dict[str, dict[str, float]]] = {}
    bar: Any = None
    if progress:
        import sys

        from tqdm import tqdm

        bar = tqdm(total=repeat * len(ds), desc="depth sweep", unit="depth", file=sys.stderr, leave=False)
    try:
        for _ in range(repeat):
            for d in ds:
                result = rerank_topics(rr, cands.queries, lists[d], cands.documents, text_hashes=cands.text_hashes,
                                       prepare=False)
                runs.setdefault(d, result.run)
                for tc in result.cost.topics if result.cost else ():
                    timings[d].setdefault(tc.topic_id, []).append(tc.wall_ms)
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    points: list[DepthPoint] = []
    costs: dict[int, RerankCost] = {}
    n_all: list[float] = []
    ms_all: list[float] = []
    rk, nk = R(final_k), nDCG(final_k)
    for d in ds:
        topic_costs = tuple(TopicCost(t, len(lists[d][t]), statistics.median(ms))
                            for t, ms in sorted(timings[d].items()))
        cost = RerankCost(f"{candidates}@{d}", rr.device, rr.batch_size, rr.threads, 0.0, topic_costs)
        costs[d] = cost
        n_all += [float(c.n_documents) for c in topic_costs if c.topic_id in set(topics)]
        ms_all += [c.wall_ms for c in topic_costs if c.topic_id in set(topics)]
        final_eval = evaluator.evaluate(rank_run(run_columns_from_mapping(runs[d], f"{candidates}+{rr.label}@{d}")),
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
            ms_per_document=cost.ms_per_document))
    fit = fit_cost(n_all, ms_all) if len(n_all) >= 2 else None
    say(f"[finished] depth sweep of {candidates} [elapsed] {time.perf_counter() - t0:.1f} s")
    return DepthSweep(candidates, rr.label, rr.kind, f"{rr.model_name}@sha256:{rr.model_hash[:16]}", final_k, qref,
                      tuple(sweep_rows(points, fit)), costs, fit, repeat, prepare_ms, topics, policy,
                      capping.run_depth, capping.capped, capping.note)
