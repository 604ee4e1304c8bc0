"""Rendering of the demo's filtered scenario (as-of-year filters, pre- versus post-filtering); rounding only here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.reports.format import number, table

if TYPE_CHECKING:
    from workbench.demo.filters import FilterDemoReport


def render_filter_demo(report: FilterDemoReport) -> list[str]:
    """The scenario as text lines: the filters, then one table per K (runs x mode), then what it shows."""
    ks = sorted({r.k for r in report.rows})
    lines = [
        f"Filtered scenario (topic metadata {report.key!r}): {report.n_filtered} of {report.n_topics} topics carry an "
        f"as-of-year filter over the documents' `year` metadata, e.g. "
        + "; ".join(f"topic {t}: {f}" for t, f in report.examples) + ".",
        f"  on average {report.eligible_share:.1%} of the collection is eligible per filtered topic; "
        f"{report.ineligible_gold} judged-relevant documents are ineligible (ineligible gold).",
        "  R@K counts the eligible relevant documents only (the filtered relevant set); pre = only eligible documents "
        "are ranked; post = the top K is retrieved, then ineligible documents dropped; none = an unfiltered run cut at K.",
    ]
    for k in ks:
        rows = [r for r in report.rows if r.k == k]
        body = []
        for system in ("bm25", "dense"):
            pre = next((r for r in rows if r.system == system and r.mode == "pre"), None)
            for r in (x for x in rows if x.system == system):
                lost = f"{r.recall - pre.recall:+.4f}" if pre is not None and r.mode != "pre" else ""
                body.append([system, r.mode, r.run, number(r.recall), lost, f"{r.returned:.1f}",
                             str(r.short) if r.mode != "none" else "-", str(r.leaks)])
        lines += ["", f"  K = {k}"]
        lines += ["  " + s for s in table(
            ["system", "mode", "run", f"R@{k} (eligible)", "vs pre", f"returned@{k}", f"topics short (< {k})",
             f"leaks@{k}"], body, left=3).splitlines()]
    post = [r for r in report.rows if r.mode == "post"]
    if post:
        losses = [(r, r.recall - report.row(r.system, r.k, "pre").recall) for r in post]
        worst, drop = min(losses, key=lambda x: x[1])
        shorts = "; ".join(f"{r.system} at K = {r.k}: {r.short} of {report.n_filtered}" for r in post)
        leaks = "; ".join(f"{r.system} at K = {r.k}: {r.leaks:,}" for r in report.rows if r.mode == "none")
        lines.append("")
        if drop < 0:
            lines.append(f"  Post-filtering loses recall against pre-filtering (most: {worst.system} at K = {worst.k}, "
                         f"{drop:+.4f}; {sum(1 for _, d in losses if d < 0)} of {len(losses)} system/K pairs lose): "
                         "it keeps only the eligible documents of the unfiltered top K, while pre-filtering fills "
                         "the K slots with eligible documents from deeper down. It can never gain: every eligible "
                         "document of the unfiltered top K is also in the eligible top K.")
        else:
            lines.append("  Post-filtering lost no recall against pre-filtering here: every eligible relevant "
                         "document that pre-filtering found at K was already in the unfiltered top K.")
        lines.append(f"  Topics that came back with fewer than K documents after post-filtering: {shorts}.")
        lines.append(f"  Leaks of the unfiltered runs (ineligible documents in the top K; the release gate fails on "
                     f"any): {leaks}.")
    return lines
