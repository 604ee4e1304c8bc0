"""Rendering of categorised miss lists (``workbench misses --categorise``, the demo's miss step).

Counts per cause in precedence order with their share of the misses (rounded
here, for display only), the residue and whether the list is closed, then one
row per miss: topic, document, grade, rank, cause, who decided it (rule or
lead), the evidence in words and any cause inherited from another run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench import jsonout
from workbench.reports.format import _delimited, check_format, table
from workbench.reports.scores import _header_lines
from workbench.scoring.misses import (
    CAUSES,
    Cause,
    MissCounts,
    MissList,
    MissRow,
    evidence_json,
    row_dict,
)

if TYPE_CHECKING:
    from workbench.services.evaluation.misses import MissReport

COLUMNS = ("run", "topic_id", "doc_id", "grade", "rank", "k", "cause", "source", "rule_cause", "detail", "note",
           "suggested_cause", "suggested_from")


def closure_line(counts: MissCounts) -> str:
    """``closed: residue 0 of N misses`` or ``not closed: residue R of N misses (...)``."""
    if counts.closed:
        return f"closed: residue 0 of {counts.total:,} misses"
    hint = f"; {counts.suggested:,} with a cause suggested by another run" if counts.suggested else ""
    return (f"not closed: residue {counts.residue:,} of {counts.total:,} misses are uncategorised{hint} "
            "(`workbench miss-cause` sets a cause with a note)")


def count_rows(counts: MissCounts, rows: Sequence[MissRow]) -> list[list[str]]:
    """Rows of the counts table: cause, misses, share, set by a lead; then the total."""
    lead: dict[Cause, int] = {c: 0 for c in CAUSES}
    for r in rows:
        if r.source == "lead":
            lead[r.cause] += 1
    total = counts.total
    out = [[c, f"{n:,}", f"{n / total:.1%}" if total else "-", f"{lead[c]:,}"] for c, n in counts.per_cause.items()]
    out.append(["total", f"{total:,}", "100.0%" if total else "-", f"{counts.by_lead:,}"])
    return out


def summary_lines(ml: MissList) -> list[str]:
    """The counts table and the closure line of a miss list."""
    n_topics = len({r.evidence.topic_id for r in ml.rows})
    lines = [f"run {ml.run_name} against {ml.qrels_version}: {ml.counts.total:,} relevant documents not in the "
             f"top {ml.k} ({n_topics:,} topics)",
             table(["cause", "misses", "share", "set by lead"], count_rows(ml.counts, ml.rows))]
    lines.append(closure_line(ml.counts))
    return lines


def _cut(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def render_miss_list(header: Mapping[str, Any], ml: MissList, fmt: str = "table", *,
                     cause: Cause | None = None) -> str:
    """Render a categorised miss list: counts per cause, residue, closure, then the misses.

    Args:
        header: the lineage header (``MissReport.header``).
        ml: the list.
        fmt: table, json, jsonl, csv or tsv.
        cause: list only the misses of this effective cause (counts are always of the whole list).

    Raises:
        ValidationError: unknown format.
    """
    f = check_format(fmt)
    rows = [r for r in ml.rows if cause is None or r.cause == cause]
    records = [row_dict(ml.run_name, ml.k, r) for r in rows]
    if f == "json":
        full = [{**row_dict(ml.run_name, ml.k, r), "evidence": evidence_json(r.evidence)} for r in rows]
        return jsonout.dumps({"header": dict(header), "run": ml.run_name, "qrels": ml.qrels_version, "k": ml.k,
                           "counts": dict(ml.counts.per_cause), "total": ml.counts.total,
                           "residue": ml.counts.residue, "closed": ml.counts.closed, "by_lead": ml.counts.by_lead,
                           "suggested": ml.counts.suggested, "cause_filter": cause, "misses": full},
                          indent=2, ensure_ascii=False) + "\n"
    if f == "jsonl":
        return "".join(jsonout.dumps(r, ensure_ascii=False) + "\n" for r in records)
    if f in ("csv", "tsv"):
        return _delimited(records, "," if f == "csv" else "\t", list(COLUMNS))
    lines = _header_lines(header, [])
    a = ml.analyser
    lines.append(f"analyser   stop words {a.get('stopwords', '?')}, stemmer {a.get('stemmer') or 'none'}; rules "
                 f"{ml.extra.get('rules_version', '?')}"
                 + (f"; list {ml.extra['list_id']}" + (" (stored earlier, causes read back)"
                                                       if ml.extra.get("reused") else " (kept)")
                    if ml.extra.get("list_id") is not None else "; list not kept (a file run or qrels)"))
    lines.append("")
    lines += summary_lines(ml)
    lines.append("")
    if cause is not None:
        lines.append(f"misses with cause {cause!r}: {len(rows):,}")
    body = [[r["topic_id"], r["doc_id"], str(r["grade"]), "-" if r["rank"] is None else str(r["rank"]), r["cause"],
             r["source"], _cut(r["detail"] if r["source"] == "rule" else f"{r['note']} [rule: {r['rule_cause']}]"),
             r["suggested_cause"]] for r in records]
    if body:
        lines.append(table(["topic", "doc_id", "grade", "rank", "cause", "by", "evidence", "suggested"], body))
    return "\n".join(lines) + "\n"


def demo_miss_lines(report: MissReport, examples: int = 2) -> list[str]:
    """The demo report's miss section: the counts per cause, the residue, a few misses of each cause."""
    ml = report.misses
    L = [f"Why {ml.run_name} misses what it misses: `workbench misses {ml.run_name} --qrels {ml.qrels_version} "
         f"--k {ml.k} --categorise`"]
    L += ["  " + line for s in summary_lines(ml) for line in s.splitlines()]
    shown = [r for c in CAUSES for r in ml.with_cause(c)[:examples]]
    if shown:
        L.append(f"  examples (at most {examples} per cause):")
        body = [[r.evidence.topic_id, r.evidence.doc_id, str(r.evidence.grade),
                 "-" if r.evidence.rank is None else str(r.evidence.rank), r.cause, _cut(r.categorised.detail, 160)]
                for r in shown]
        L += ["    " + line for line in table(["topic", "doc_id", "grade", "rank", "cause", "evidence"],
                                                body).splitlines()]
    L.append("")
    return L
