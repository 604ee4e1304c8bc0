"""Rendering of the end-to-end workflow report (``workbench demo``) as plain text.

Rendering only: numbers arrive at full precision from
``workbench.demo.workflow.WorkflowReport`` and are rounded here, for display.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from workbench.reports.format import number, table
from workbench.reports.pool_quality import TAU_HEADERS, TAU_NOTE, tau_cells
from workbench.scoring.qrels_checks import positives_only_warning

if TYPE_CHECKING:
    from workbench.demo.workflow import WorkflowReport
    from workbench.scoring.evaluate import Evaluation


def _f(x: float | None, digits: int = 4) -> str:
    return number(x, digits)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    return table(list(header), [list(r) for r in rows]).splitlines()


def score_table(evaluations: dict[str, Evaluation], title: str, *, warning: str = "") -> list[str]:
    """Runs x measures (macro), then micro R@k, the R@k ceiling and pool-novel counts.

    ``warning`` (e.g. positives-only qrels, ``scoring.qrels_checks``) is printed under the title.
    """
    evs = list(evaluations.values())
    if not evs:
        return []
    first = evs[0]
    ms = list(first.measures)
    out = [title, f"  averaged over {len(first.topics)} topics with |R| > 0 "
                  f"({len(first.excluded_topics)} excluded with |R| = 0"
                  + (f": {', '.join(first.excluded_topics[:12])}{' ...' if len(first.excluded_topics) > 12 else ''}" if first.excluded_topics else "")
                  + f"); relevant = grade >= {first.rel}; missing-topic policy: {first.missing}"
                  + (" (a run without results for a qrels topic is an error)" if first.missing == "fail" else "")]
    if warning:
        out.append(f"  warning: {warning}")
    header = ["run (macro)", *(str(m) for m in ms)]
    rows = [[e.run_name, *(_f(e.aggregates[m].macro) for m in ms)] for e in evs]
    rows.append(["ceiling", *(_f(first.aggregates[m].ceiling) if first.aggregates[m].ceiling is not None else "" for m in ms)])
    out += ["  " + s for s in _table(header, rows)]
    out.append("  ceiling: the best mean a perfect run reaches: min(k, |R|) / |R| for R@k, min(k, |R|) / k for P@k")
    recall = [m for m in ms if str(m).startswith("R@")]
    if recall:
        header = ["run (micro)", *(str(m) for m in recall), *(f"novel@{n.cutoff}" for n in first.novelty.values())]
        rows = [[e.run_name, *(_f(e.aggregates[m].micro) for m in recall),
                 *(str(sum(n.unjudged.values())) for n in e.novelty.values())] for e in evs]
        out += [""] + ["  " + s for s in _table(header, rows)]
        out.append("  micro = all relevant retrieved / all relevant; novel@k = retrieved documents in the top k "
                   f"the qrels never judged (pool-novel), summed over these {len(first.topics)} topics")
    return out


def render_workflow(report: WorkflowReport) -> str:
    """The workflow report as text (tables, lineage, plot paths)."""
    h = report.headline
    assert h is not None
    L: list[str] = []
    L.append(f"Collection {report.collection}: {report.n_documents:,} documents, {report.n_topics} topics, "
             f"version {report.collection_version[:12]}")
    L.append(f"Pooled runs: {', '.join(report.runs)}; new run: {report.new_run}")
    p1, p2, q1, q2, ref = report.pool_v1, report.pool_v2, report.qrels_v1, report.qrels_v2, report.reference
    if p1 and q1:
        made = "created" if p1.pool_version in report.pools_created else "reused"
        L.append(f"Pool v1 {p1.pool_version} ({made}): depth {p1.depth} over {', '.join(p1.runs)}: "
                 f"{p1.n_entries:,} documents, {p1.n_topics} topics; {report.judged_v1:,} judged now by "
                 f"{report.reference_assessor}")
        if report.topics_not_pooled:
            shown = ", ".join(report.topics_not_pooled[:12]) + (" ..." if len(report.topics_not_pooled) > 12 else "")
            L.append(f"  not pooled: {len(report.topics_not_pooled)} topic(s) without any reference judgment "
                     f"({shown}); pools cover judged topics only (pool build --topics judged)")
        L.append(f"Qrels v1 {q1.name}: {q1.n_entries:,} judgments ({q1.n_relevant:,} relevant), rule {q1.rule}, "
                 f"hash {q1.content_hash[:12]}")
    if p2 and q2 and report.no_delta:
        L.append(f"Pool v2: none: the new run {report.new_run} brings no pool-novel document to {p2.pool_version} "
                 "(nothing left to judge)")
        L.append(f"Qrels v2 {q2.name} (parent {q2.parent_version}): repeats v1's {q2.n_entries:,} judgments")
    elif p2 and q2:
        made = "created" if p2.pool_version in report.pools_created else "reused"
        L.append(f"Pool v2 {p2.pool_version} ({made}; child of {p2.parent_version}): only the delta, "
                 f"{p2.n_entries:,} documents over {p2.n_topics} topics; {report.delta_judged:,} judged now")
        L.append(f"Qrels v2 {q2.name} (parent {q2.parent_version}): {q2.n_entries:,} judgments "
                 f"({q2.n_relevant:,} relevant), hash {q2.content_hash[:12]}")
    if report.left_unjudged:
        L.append(f"Left unjudged: {report.left_unjudged:,} pooled documents of topics the reference never judged "
                 "(no grade invented)")
    if ref:
        L.append(f"Full judgments {ref.name}: {ref.n_entries:,} judgments ({ref.n_relevant:,} relevant)")
    L.append("")
    for qname, evs in report.evaluations.items():
        title = f"Scores on {qname}" + (
            f" (full judgments, restricted to the topics evaluated on {q2.name} so the two compare)"
            if ref and q2 and qname == ref.name else "")
        warn = f"{qname}: {positives_only_warning(evs[next(iter(evs))].rel)}" if report.positives_only.get(qname) else ""
        L += score_table(evs, title, warning=warn)
        L.append("")
    if q1 and q2 and q1.name in report.evaluations and q2.name in report.evaluations:
        v1, v2 = report.evaluations[q1.name], report.evaluations[q2.name]
        ms = [m for m in v1[next(iter(v1))].measures if str(m) in (str(h), "R@100", "nDCG@10")]
        header = ["run", *(f"{m} v1" for m in ms), *(f"{m} v2" for m in ms), *(f"d {m}" for m in ms)]
        rows = [[n, *(_f(v1[n].aggregates[m].macro) for m in ms), *(_f(v2[n].aggregates[m].macro) for m in ms),
                 *(f"{v2[n].aggregates[m].macro - v1[n].aggregates[m].macro:+.4f}" for m in ms)] for n in v1]
        L.append(f"How scores moved from {q1.name} to {q2.name} (judging the new run's pool-novel documents)")
        L += ["  " + s for s in _table(header, rows)]
        L.append(f"  pool-novel documents of the new run {report.new_run} on v1 (evaluated topics only): "
                 + ", ".join(f"@{k}: {c:,}" for k, c in report.novel_on_v1.get(report.new_run, {}).items()))
        L.append("")
    if report.bias:
        L.append(f"Pool bias: {h} on pooled qrels v2 against the full judgments (same topics)")
        rows = [[n, _f(p), _f(f), f"{p - f:+.4f}"] for n, (p, f) in report.bias.items()]
        L += ["  " + s for s in _table(["run", "pooled", "full", "gap"], rows)]
        L.append("  the gap is recall the pool cannot see: relevant documents no pooled run ranked within the depth")
        L.append("")
    if report.sampling is not None:
        from workbench.demo.render_sampling import sampling_demo_lines

        L += [*sampling_demo_lines(report.sampling), ""]
    if report.loo:
        L.append(f"Leave-one-run-out on qrels v2 ({h}): each run rescored without the documents only it contributed")
        rows = [[r.run, f"{r.n_unique:,}", f"{r.n_unique_relevant:,}", _f(r.full), _f(r.reduced), f"{r.drop:+.4f}",
                 *tau_cells(r), str(len(r.excluded))] for r in report.loo]
        L += ["  " + s for s in _table(["run", "unique docs", "unique relevant", "full", "left out", "drop",
                                        *TAU_HEADERS, "topics excluded"], rows)]
        L += TAU_NOTE
        L.append("  topics excluded: every relevant document of the topic came from the left-out run (|R| = 0 "
                 "without it); left out of that run's averages, never scored 0")
        L.append("")
    if report.gate is not None:
        from workbench.reports.gate import gate_summary_lines

        L += gate_summary_lines(*report.gate)  # type: ignore[arg-type]
    if report.pipelines is not None:
        from workbench.demo.render_stages import render_pipeline_demo

        L += render_pipeline_demo(report.pipelines) + [""]
    if report.misses is not None:
        from workbench.reports.miss_causes import demo_miss_lines

        L += demo_miss_lines(report.misses)  # type: ignore[arg-type]
    if report.filters is not None:
        from workbench.demo.render_filters import render_filter_demo

        L += render_filter_demo(report.filters) + [""]  # type: ignore[arg-type]
    if report.simulation is not None:
        from workbench.reports.simulation import render_simulation

        L.append(render_simulation(report.simulation))  # type: ignore[arg-type]
        L.append("")
    if report.units is not None:
        from workbench.demo.render_units import units_demo_lines

        L += [*units_demo_lines(report.units), ""]
    if report.exports:
        L.append("Qrels files: " + ", ".join(str(p) for p in report.exports))
    if report.plots:
        L.append("Recall curves: " + ", ".join(str(p) for p in report.plots))
    return "\n".join(L)
