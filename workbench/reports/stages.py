"""Rendering of stage reports (``workbench stages``) and depth sweeps (``workbench depth-sweep``).

Rendering only: numbers arrive at full precision from ``services.runs.stages`` and
``services.runs.depth_sweep`` and are rounded here, for display. ``table`` is for
people; ``json`` is one document at full precision with the lineage header;
``jsonl``/``csv``/``tsv`` are long form, one row per (pipeline, stage row) or
per depth.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from workbench import jsonout
from workbench.reports.format import _delimited, _json_number, check_format, number, table

if TYPE_CHECKING:
    from workbench.lineage import RerankCost
    from workbench.scoring.stages import StageReport
    from workbench.services.runs.depth_sweep import DepthSweep
    from workbench.services.runs.stages import Pipeline, StagesResult


def _signed(x: float | None, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:+.{digits}f}"


def _ms(x: float) -> str:
    return "-" if math.isnan(x) else (f"{x:.1f}" if x >= 10 else f"{x:.2f}")


def cost_line(cost: RerankCost) -> str:
    """One line of a measured rerank cost (ms per topic p50/p95, per document, the conditions)."""
    return (f"{cost.n_topics:,} topics, {cost.n_documents:,} documents reranked: per topic p50 {_ms(cost.p(50))} ms, "
            f"p95 {_ms(cost.p(95))} ms, mean {_ms(cost.ms_per_topic)} ms; {cost.ms_per_document:.3f} ms per document "
            f"({cost.documents_per_second:,.0f} documents/s); batch {cost.batch_size}, device {cost.device}, "
            f"threads {cost.threads or 'default'}; model load and document vectors {cost.prepare_ms:,.0f} ms apart")


def _pipeline_title(p: Pipeline, rep: StageReport) -> str:
    if p.lineage is None:
        return (f"run {p.run}: a single stage (it reranks nothing); its own top {rep.depth} are the candidates; "
                f"{len(rep.topics):,} topics")
    lin = p.lineage
    model = f", {lin.model_identity}" if lin.model_identity else ""
    return (f"pipeline {lin.final_name}: run {p.run} reranks the top {lin.candidate_depth} of {lin.candidate_run} "
            f"with {lin.reranker} ({lin.reranker_kind}{model}, {lin.origin}); {len(rep.topics):,} topics")


def check_lines(rep: StageReport) -> list[str]:
    """The decomposition checks of one pipeline as sentences."""
    d, k, dec = rep.depth, rep.k, rep.decomposition
    out = []
    if rep.check is not None:
        c = rep.check
        if c.is_permutation:
            docs = "; same documents in every top " + str(d) if c.new_documents is not None else ""
            out.append(f"R@{d} unchanged by reranking: yes ({number(c.candidate_macro)} = {number(c.final_macro)} "
                       f"on all {len(rep.topics):,} topics{docs}): a permutation of the candidates")
        else:
            what = []
            if c.differing:
                shown = ", ".join(f"{t} ({number(a)} -> {number(b)})" for t, a, b in c.differing[:8])
                more = f", ... {len(c.differing) - 8} more" if len(c.differing) > 8 else ""
                what.append(f"R@{d} differs on {len(c.differing):,} topic(s): {shown}{more}")
            if c.n_new:
                ex = "; ".join(f"topic {t}: {', '.join(ds[:5])}" for t, ds in list((c.new_documents or {}).items())[:3])
                what.append(f"{c.n_new:,} document(s) in the reranked top {d} are not candidates ({ex})")
            if c.n_dropped:
                what.append(f"{c.n_dropped:,} candidate(s) are missing from the reranked top {d}")
            out.append(f"R@{d} unchanged by reranking: NO ({number(c.candidate_macro)} -> {number(c.final_macro)}): "
                       f"not a permutation of the candidates: " + "; ".join(what))
        out.append(f"reranker contribution R@{k} [final] - R@{k} [candidates] = {_signed(dec.contribution_macro)} macro "
                   f"({_signed(dec.contribution_micro)} micro)")
    realised = dec.realised
    tail = (f"; net, the reranker moved {100 * realised:+.0f}% of it into the top {k}"
            if realised is not None and not math.isnan(realised) else "")
    out.append(f"stock R@{d} - R@{k} of the candidates = {number(dec.stock_macro)} macro ({number(dec.stock_micro)} "
               f"micro): all any reordering of the top {d} could promote into the top {k}{tail}")
    return out


def diagnosis_lines(rep: StageReport) -> list[str]:
    """The diagnosis of each run of a pipeline, with per-topic counts and what it means."""
    from workbench.scoring.stages import ADVICE, DIAGNOSES

    if not rep.diagnoses:
        return []
    t = rep.diagnoses[0].thresholds
    head = ["run", f"R@{rep.depth}", f"nDCG@{rep.k}", "diagnosis",
            "topics: ranking / candidate generation / check ingestion / stop"]
    rows = [[d.name, number(d.recall), number(d.ndcg), d.label, " / ".join(str(d.counts[lab]) for lab in DIAGNOSES)]
            for d in rep.diagnoses]
    lines = [f"diagnosis (high: R@{rep.depth} >= {t.recall:g}, nDCG@{rep.k} >= {t.ndcg:g}; the run by its macro "
             "values, each topic by its own)"]
    lines += ["  " + s for s in table(head, rows).splitlines()]
    final = rep.diagnoses[-1]
    lines.append(f"  {final.name}: {final.label}: {ADVICE[final.label]}")
    for c in rep.ingestion:
        if not c.n_topics:
            continue
        bad = c.absent + c.empty
        ex = ", ".join(f"topic {t} document {d}" for t, d in bad[:3])
        if not bad:
            verdict = ("ingestion is not the cause: the candidates miss documents the index holds (a candidate "
                       "generation problem at this depth)")
        else:
            verdict = (f"ingestion explains {len(bad):,} (e.g. {ex})"
                       + (", the rest are indexed: mostly a candidate generation problem at this depth"
                          if c.n_indexed > len(bad) else ": fix ingestion first"))
        if c.title_only:
            ex_t = ", ".join(f"topic {t} document {d}" for t, d in c.title_only[:3])
            verdict += (f"; {len(c.title_only):,} have a title only (e.g. {ex_t}): indexed by the title alone, "
                        "their text field is empty (check that the conversion kept it, or the source has none)")
        lines.append(f"  ingestion checked for {c.name}: on its {c.n_topics} 'check ingestion' topic(s), "
                     f"{c.n_missed:,} relevant documents are not in the top {c.depth}: {len(c.absent):,} not in the "
                     f"collection version, {len(c.empty):,} in it without text (no title, no text), "
                     f"{len(c.title_only):,} with a title only, {c.n_indexed:,} indexed with text; " + verdict)
    return lines


def stage_rows_table(rep: StageReport) -> str:
    """The stage rows of one pipeline: label, macro, micro, ceiling."""
    return table(["stage", "macro", "micro", "ceiling"],
                 [[r.label, number(r.macro), number(r.micro), number(r.ceiling)] for r in rep.rows])


def _header_lines(result: StagesResult) -> list[str]:
    q = result.qrels
    lines = [f"qrels      {q.name} ({q.origin}, sha256 {q.content_hash[:12]}; {q.n_topics:,} topics, "
             f"{q.n_entries:,} judgments)",
             f"evaluator  {result.evaluator_version}",
             f"relevant   grade >= {result.rel}; unjudged = non-relevant; nDCG with the strict ideal (all judged grades)",
             f"missing    {result.missing}"]
    lines += [f"warning    {w}" for w in result.warnings]
    return lines


def render_stages(result: StagesResult, fmt: str = "table") -> str:
    """Render a stage report.

    Raises:
        ValidationError: unknown format.
    """
    f = check_format(fmt)
    if f == "json":
        return jsonout.dumps(_stages_json(result), indent=2, ensure_ascii=False) + "\n"
    if f in ("jsonl", "csv", "tsv"):
        rows = [{"pipeline": rep.name, "run": r.run, "stage": r.stage, "label": r.label, "measure": str(r.measure),
                 "macro": _json_number(r.macro), "micro": _json_number(r.micro), "ceiling": _json_number(r.ceiling),
                 "n_topics": r.n_topics, "sum_numerator": r.sum_numerator, "sum_denominator": r.sum_denominator,
                 "qrels_version": result.qrels.name, "qrels_hash": result.qrels.content_hash,
                 "evaluator_version": result.evaluator_version}
                for rep in result.reports for r in rep.rows]
        if f == "jsonl":
            return "".join(jsonout.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        return _delimited(rows, "," if f == "csv" else "\t")
    parts = ["\n".join(_header_lines(result))]
    for p, rep in zip(result.pipelines, result.reports, strict=True):
        block = [_pipeline_title(p, rep), stage_rows_table(rep), ""]
        block += check_lines(rep)
        block += [""] + diagnosis_lines(rep)
        if p.cost is not None:
            block += ["", "measured cost: " + cost_line(p.cost)]
        parts.append("\n".join(block))
    return "\n\n".join(parts) + "\n"


def _stages_json(result: StagesResult) -> dict[str, Any]:
    out = []
    for p, rep in zip(result.pipelines, result.reports, strict=True):
        c = rep.check
        dec = rep.decomposition
        out.append({
            "pipeline": rep.name, "run": p.run, "candidate_run": rep.candidate_run, "depth": rep.depth, "k": rep.k,
            "topics": list(rep.topics),
            "rows": [{"label": r.label, "stage": r.stage, "measure": str(r.measure), "macro": _json_number(r.macro),
                      "micro": _json_number(r.micro), "ceiling": _json_number(r.ceiling), "n_topics": r.n_topics,
                      "sum_numerator": r.sum_numerator, "sum_denominator": r.sum_denominator} for r in rep.rows],
            "permutation": None if c is None else {
                "is_permutation": c.is_permutation, "recall_equal": c.recall_equal,
                "candidate_macro": c.candidate_macro, "final_macro": c.final_macro,
                "differing": [{"topic_id": t, "candidates": a, "final": b} for t, a, b in c.differing],
                "new_documents": {t: list(d) for t, d in (c.new_documents or {}).items()},
                "n_dropped": c.n_dropped},
            "contribution": {"macro": dec.contribution_macro, "micro": dec.contribution_micro},
            "stock": {"macro": dec.stock_macro, "micro": dec.stock_micro},
            "diagnosis": [{"name": d.name, "run": d.run, "recall": d.recall, "ndcg": d.ndcg, "label": d.label,
                           "counts": d.counts, "per_topic": dict(d.per_topic)} for d in rep.diagnoses],
            "cost": None if p.cost is None else _cost_json(p.cost),
        })
    return {"header": result.header(), "pipelines": out}


def _cost_json(cost: RerankCost) -> dict[str, Any]:
    return {"n_topics": cost.n_topics, "n_documents": cost.n_documents, "total_ms": cost.total_ms,
            "ms_per_topic": _json_number(cost.ms_per_topic), "ms_per_document": _json_number(cost.ms_per_document),
            "p50_ms": _json_number(cost.p(50)), "p95_ms": _json_number(cost.p(95)), "batch_size": cost.batch_size,
            "device": cost.device, "threads": cost.threads, "prepare_ms": cost.prepare_ms,
            "per_topic_ms": {t.topic_id: t.wall_ms for t in cost.topics}}


# -- depth sweep ------------------------------------------------------------------------------


def _per_s(per_ms: float | None) -> str:
    """A marginal recall per added millisecond, shown per added second (reranking from text costs seconds)."""
    return "-" if per_ms is None else f"{per_ms * 1000.0:+.5f}"


_TIMED_WORK = {"bi-encoder": "the query and the D candidates encoded, then scored",
               "cross-encoder": "the D (query, document) pairs read by the model"}
"""What a reranker kind does inside each topic's timed block when a sweep reranks from text."""


def cost_basis(sweep: DepthSweep) -> str:
    """What a sweep's cost per topic covers and on which topics (shared by the CLI and the demo).

    Example: ``cost per topic reranking from text (the query and the D candidates
    encoded, then scored, inside each topic's timed block) on 5 of 225 topics (evenly spaced)``.
    """
    what = _TIMED_WORK.get(sweep.reranker_kind, "every per-document step")
    n, of = len(sweep.cost_topics), len(sweep.topics)
    on = f"all {of:,} topics" if n == of else f"{n:,} of {of:,} topics (evenly spaced)"
    return f"cost per topic reranking from text ({what}, inside each topic's timed block) on {on}"


def cached_note(sweep: DepthSweep) -> str:
    """How to read the ``cached ms`` column ("" when the sweep has none: nothing was cached)."""
    if not sweep.cached_costs:
        return ""
    return ("cached ms: mean ms per topic of the same rerank with the document vectors read from the embedding "
            f"cache (one query encoding and D dot products, all {len(sweep.topics):,} topics; the cost "
            "`run rerank` records): the candidates' encoding is outside it, so it hardly grows with D")


def sweep_table_rows(sweep: DepthSweep) -> tuple[list[str], list[list[str]]]:
    """Header and display rows of a depth sweep (shared by the CLI and the demo).

    The ms columns are the cost from text (``cost_basis``); ``cached ms`` (a
    bi-encoder only) is the cost with cached document vectors (``cached_note``).
    """
    k = sweep.k
    cached = bool(sweep.cached_costs)
    head = ["D", "R@D [candidates]", "ceiling", f"R@{k} [candidates]", f"R@{k} [final]", f"nDCG@{k} [final]",
            "R@D unchanged", "p50 ms", "p95 ms", "mean ms", "ms/doc", *(["cached ms"] if cached else []), "+ms",
            "dR@D per s", f"dR@{k} per s"]
    rows = []
    for r in sweep.rows:
        p = r.point
        rows.append([str(p.depth), number(p.candidate_recall), number(p.ceiling), number(p.candidate_recall_k),
                     number(p.final_recall), number(p.final_ndcg), "yes" if p.recall_unchanged else "NO",
                     _ms(p.p50_ms), _ms(p.p95_ms), _ms(p.mean_ms), f"{p.ms_per_document:.3f}",
                     *([_cached_ms(p.cached_ms)] if cached else []),
                     "-" if r.added_ms is None else f"{r.added_ms:+.2f}", _per_s(r.ceiling_per_ms),
                     _per_s(r.final_per_ms)])
    return head, rows


def _cached_ms(x: float | None) -> str:
    return "-" if x is None else _ms(x)


def render_sweep(sweep: DepthSweep, fmt: str = "table") -> str:
    """Render a depth sweep: one row per depth, then the cost fit.

    Raises:
        ValidationError: unknown format.
    """
    f = check_format(fmt)
    long = [{"depth": r.point.depth, "k": r.point.k, "candidate_recall": r.point.candidate_recall,
             "candidate_recall_micro": r.point.candidate_recall_micro, "ceiling": _json_number(r.point.ceiling),
             "candidate_recall_k": r.point.candidate_recall_k, "final_recall": r.point.final_recall,
             "final_ndcg": r.point.final_ndcg, "recall_unchanged": r.point.recall_unchanged,
             "n_topics": r.point.n_topics, "n_documents": r.point.n_documents,
             "mean_ms": _json_number(r.point.mean_ms), "p50_ms": _json_number(r.point.p50_ms),
             "p95_ms": _json_number(r.point.p95_ms), "ms_per_document": _json_number(r.point.ms_per_document),
             "cached_mean_ms": None if r.point.cached_ms is None else _json_number(r.point.cached_ms),
             "added_ms": r.added_ms, "ceiling_per_ms": r.ceiling_per_ms, "final_per_ms": r.final_per_ms,
             "candidate_run": sweep.candidate_run, "reranker": sweep.reranker, "model": sweep.model,
             "qrels_version": sweep.qrels.name} for r in sweep.rows]
    if f == "json":
        doc = {"candidate_run": sweep.candidate_run, "reranker": sweep.reranker, "reranker_kind": sweep.reranker_kind,
               "model": sweep.model, "k": sweep.k, "qrels": sweep.qrels.name, "qrels_hash": sweep.qrels.content_hash,
               "topics": len(sweep.topics), "repeat": sweep.repeat, "prepare_ms": sweep.prepare_ms,
               "missing": sweep.missing, "run_depth": sweep.run_depth, "capped_depths": list(sweep.capped),
               "cost": cost_basis(sweep), "cost_topics": list(sweep.cost_topics),
               "rows": long,
               "fit": None if sweep.fit is None else {
                   "intercept_ms": sweep.fit.intercept_ms, "slope_ms_per_document": sweep.fit.slope_ms,
                   "r2": _json_number(sweep.fit.r2), "exponent": _json_number(sweep.fit.exponent),
                   "n_points": sweep.fit.n_points, "scaling": sweep.fit.scaling},
               "per_topic_ms": {str(d): {t.topic_id: t.wall_ms for t in c.topics} for d, c in sweep.costs.items()},
               "cached_per_topic_ms": {str(d): {t.topic_id: t.wall_ms for t in c.topics}
                                       for d, c in sweep.cached_costs.items()}}
        return jsonout.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if f == "jsonl":
        return "".join(jsonout.dumps(r, ensure_ascii=False) + "\n" for r in long)
    if f in ("csv", "tsv"):
        return _delimited(long, "," if f == "csv" else "\t")
    return "\n".join(sweep_lines(sweep)) + "\n"


def sweep_lines(sweep: DepthSweep) -> list[str]:
    """A depth sweep as text lines: title, table, the cost fit, how to read it."""
    any_costs = next(iter(sweep.costs.values()), None)
    cond = (f"batch {any_costs.batch_size}, device {any_costs.device}, threads {any_costs.threads or 'default'}"
            if any_costs is not None else "")
    lines = [f"Depth sweep: the top D of {sweep.candidate_run} reranked by {sweep.reranker} ({sweep.reranker_kind}, "
             f"{sweep.model}); qrels {sweep.qrels.name}; recall over {len(sweep.topics):,} topics; "
             f"{cost_basis(sweep)}, median of {sweep.repeat} round(s), {cond}; model load and cached document "
             f"vectors {sweep.prepare_ms:,.0f} ms once, apart"]
    head, rows = sweep_table_rows(sweep)
    lines += ["  " + s for s in table(head, rows).splitlines()]
    if sweep.capped_note:
        lines.append(f"  {sweep.capped_note}")
    if sweep.cached_costs:
        lines.append("  " + cached_note(sweep))
    if sweep.fit is not None:
        lines.append(f"  how cost scales with depth (least squares over {sweep.fit.n_points:,} per-topic "
                     f"measurements): {sweep.fit.describe()}")
    added = ("the fitted cost per topic added over the previous depth (slope x added candidates)"
             if sweep.fit is not None else "the measured mean ms per topic added over the previous depth")
    lines.append(f"  +ms: {added}; dR@D per s: ceiling bought per added second; dR@{sweep.k} per s: final recall "
                 "bought per added second (- where the cost does not grow)")
    return lines


def depth_chart(sweep: DepthSweep, *, title: str | None = None) -> Any:
    """An altair chart of a sweep: recall (left axis) and measured cost (right axis) by depth.

    Returns:
        ``altair.LayerChart``: R@D [candidates] and R@k [final] as lines with
        points; mean and p95 ms per topic (from text) and, for a bi-encoder,
        the mean with cached vectors as dashed lines on an independent axis.
    """
    import altair as alt

    k = sweep.k
    rec = []
    cost = []
    for r in sweep.rows:
        p = r.point
        rec += [{"D": p.depth, "recall": p.candidate_recall, "series": "R@D [candidates]"},
                {"D": p.depth, "recall": p.final_recall, "series": f"R@{k} [final]"}]
        cost += [{"D": p.depth, "ms": p.mean_ms, "series": "mean ms per topic"},
                 {"D": p.depth, "ms": p.p95_ms, "series": "p95 ms per topic"}]
        if p.cached_ms is not None:
            cost.append({"D": p.depth, "ms": p.cached_ms, "series": "mean ms per topic, cached vectors"})
    ds = [r.point.depth for r in sweep.rows] or [1]
    x = alt.X("D:Q", title="candidate depth D", scale=alt.Scale(type="log", domain=[min(ds), max(ds)], nice=False))
    recall = alt.Chart(alt.Data(values=rec)).mark_line(point=True).encode(
        x=x, y=alt.Y("recall:Q", title="recall (macro)", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("series:N", title=None))
    ms = alt.Chart(alt.Data(values=cost)).mark_line(point=True, strokeDash=[4, 4]).encode(
        x=x, y=alt.Y("ms:Q", title="rerank cost per topic (ms, measured)"), color=alt.Color("series:N", title=None))
    return alt.layer(recall, ms).resolve_scale(y="independent").properties(
        title=title or f"{sweep.candidate_run} reranked by {sweep.reranker}: recall and cost by depth",
        width=520, height=320)
