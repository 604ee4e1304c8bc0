"""Rendering of the demo's pipeline step (``demo.stages``): the four-run and the depth tables.

Rendering only: numbers arrive at full precision and are rounded here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from workbench.reports.format import number, table
from workbench.reports.stages import _cached_ms, _ms, _per_s, cached_note, cost_basis

if TYPE_CHECKING:
    from workbench.demo.stages import PipelineDemo
    from workbench.scoring.stages import Stage, StageReport


def _signed(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:+.4f}"


def four_run_lines(demo: PipelineDemo) -> list[str]:
    """The four-run table: R@k, R@D of the candidate stage, nDCG@k and the R@D-unchanged check."""
    result = demo.stages
    if result is None or not result.reports:
        return []
    reports = result.reports
    first = reports[0]
    d, k = first.depth, first.k
    rows = []
    by_run: dict[str, StageReport] = {}
    for p, rep in zip(result.pipelines, reports, strict=True):
        by_run[p.run] = rep
        stage: Stage = "final" if rep.two_stage else "candidates"
        if rep.check is None:
            check = "-"
        else:
            c = rep.check
            check = (f"yes ({number(c.candidate_macro)} = {number(c.final_macro)})" if c.is_permutation
                     else f"NO ({number(c.candidate_macro)} -> {number(c.final_macro)})")
        rows.append([p.run, number(rep.row(f"R@{k}", stage).macro), number(rep.row(f"R@{d}", stage).macro),
                     number(rep.row(f"nDCG@{k}", stage).macro), check])
    lines = [f"Two-stage pipelines on {result.qrels.name} ({len(first.topics)} topics): BM25 and the BM25+dense RRF "
             f"hybrid as candidates, each with its top {d} reranked by {next((r.reranker for r in reports if r.reranker), '-')}"]
    lines += ["  " + s for s in table(["run", f"R@{k}", f"R@{d} (candidate stage)", f"nDCG@{k}",
                                       f"R@{d} unchanged by reranking"], rows).splitlines()]
    twos = [rep for rep in reports if rep.two_stage]
    if twos:
        contrib = ", ".join(f"{rep.candidate_run} {_signed(rep.decomposition.contribution_macro)}" for rep in twos)
        stock = ", ".join(f"{rep.candidate_run} {number(rep.decomposition.stock_macro)}" for rep in twos)
        lines.append(f"  reranker contribution R@{k} [final] - R@{k} [candidates]: {contrib}")
        lines.append(f"  stock R@{d} - R@{k} of the candidates (all any reordering could promote): {stock}")
        if len(twos) == 2:
            a, b = (rep.decomposition.contribution_macro or 0.0 for rep in twos)
            same = abs(a - b) < 0.01
            lines.append("  the reranker's contribution is " + (
                "the same size on both candidate lists: the two stages do independent jobs" if same else
                f"not the same size on the two candidate lists ({_signed(a)} vs {_signed(b)}): the stages are not "
                "independent here (the hybrid already holds the dense ranking a bi-encoder reranker re-applies)"))
    diag = []
    empty_docs: set[tuple[str, str]] = set()
    for rep in reports:
        if not rep.diagnoses:
            continue
        dg = rep.diagnoses[-1]
        check = "-"
        if rep.ingestion:
            ing = rep.ingestion[-1]
            empty_docs.update(ing.absent + ing.empty)
            title_only = f"{len(ing.title_only)} title only, " if ing.title_only else ""  # none in Cranfield
            check = (f"{ing.n_missed:,} missed in the top {d}: {len(ing.absent)} not in the collection, "
                     f"{len(ing.empty)} without text, {title_only}{ing.n_indexed:,} indexed")
        diag.append([dg.name, dg.label, " / ".join(str(n) for n in dg.counts.values()), check])
    if diag:
        lines.append(f"  diagnosis (high: R@{d} >= {result.thresholds.recall:g}, nDCG@{k} >= "
                     f"{result.thresholds.ndcg:g}; the run by its macro values, each topic by its own)")
        lines += ["    " + s for s in table(
            ["run", "diagnosis", "topics: ranking / candidate gen. / check ingestion / stop",
             "ingestion check ('check ingestion' topics)"], diag, left=4).splitlines()]
        if empty_docs:
            shown = ", ".join(f"topic {t} document {doc}" for t, doc in sorted(empty_docs)[:3])
            lines.append(f"    not retrievable at all: {shown}; the other missed relevant documents are in the index "
                         "with text, so at this depth the candidates miss them (candidate generation)")
    return lines


def depth_lines(demo: PipelineDemo) -> list[str]:
    """The depth table: R@D of the candidates, R@k after reranking, measured cost, marginal recall per second."""
    sweep = demo.sweep
    if sweep is None or not sweep.rows:
        return []
    k = sweep.k
    cost = next(iter(sweep.costs.values()))
    cached = bool(sweep.cached_costs)
    lines = [f"Depth table: the top D of {sweep.candidate_run} reranked by {sweep.reranker} ({sweep.reranker_kind}); "
             f"{cost_basis(sweep)}, {cost.device}, {cost.threads or 'default'} thread(s), batch "
             f"{cost.batch_size}, median of {sweep.repeat} round(s); model load and cached document vectors apart "
             f"({sweep.prepare_ms:,.0f} ms once); recall over all {len(sweep.topics):,} topics"]
    rows = []
    for r in sweep.rows:
        p = r.point
        rows.append([str(p.depth), number(p.candidate_recall), number(p.candidate_recall_k), number(p.final_recall),
                     "yes" if p.recall_unchanged else "NO", _ms(p.p50_ms), _ms(p.p95_ms), _ms(p.mean_ms),
                     f"{p.ms_per_document:.3f}", *([_cached_ms(p.cached_ms)] if cached else []),
                     _per_s(r.ceiling_per_ms)])
    lines += ["  " + s for s in table(
        ["D", "R@D [candidates]", f"R@{k} [candidates]", f"R@{k} [final]", "R@D unchanged", "p50 ms", "p95 ms",
         "mean ms", "ms/doc", *(["cached ms"] if cached else []), "dR@D per +s"], rows).splitlines()]
    if cached:
        lines.append("  " + cached_note(sweep))
    if sweep.fit is not None:
        lines.append(f"  how cost scales with depth ({sweep.fit.n_points:,} per-topic measurements): "
                     f"{sweep.fit.describe()}")
    lines.append("  dR@D per +s: recall ceiling bought per second of fitted rerank cost per topic added over the previous "
                 "depth (- where the cost does not grow)")
    coherence = _coherence(demo)
    if coherence:
        lines.append("  " + coherence)
    return lines


def _coherence(demo: PipelineDemo) -> str:
    """Do the depth table's first rows repeat the four-run table's hybrid figures (same run, same numbers)?"""
    sweep, result = demo.sweep, demo.stages
    if sweep is None or result is None:
        return ""
    rep = next((r for p, r in zip(result.pipelines, result.reports, strict=True)
                if p.run == sweep.candidate_run), None)
    if rep is None:
        return ""
    k = sweep.k
    at = {r.point.depth: r.point for r in sweep.rows}
    parts = []
    if k in at:
        parts.append((f"R@{k} at D = {k}", at[k].candidate_recall, rep.row(f"R@{k}", "candidates").macro))
    if rep.depth in at:
        parts.append((f"R@{rep.depth} at D = {rep.depth}", at[rep.depth].candidate_recall,
                      rep.row(f"R@{rep.depth}", "candidates").macro))
    if not parts:
        return ""
    ok = all(abs(a - b) < 1e-12 for _, a, b in parts)
    shown = ", ".join(f"{name} {number(a)}" for name, a, _ in parts)
    return (f"{shown}: {'the same' if ok else 'NOT the same'} as {sweep.candidate_run}'s row of the four-run table "
            "(one run, one set of numbers)")


def render_pipeline_demo(demo: PipelineDemo | None) -> list[str]:
    """Both tables and the chart paths, as text lines (empty when the step did not run)."""
    if demo is None:
        return []
    lines = four_run_lines(demo)
    if lines:
        lines.append("")
    lines += depth_lines(demo)
    if demo.plots:
        lines.append("Depth chart: " + ", ".join(str(p) for p in demo.plots))
    return lines
