"""Rendering of unit-aware scores (``workbench score --unit ...``): views side by side, groups, no-answer figures.

Rendering only: numbers arrive at full precision and are rounded here. The
table puts each measure at each unit beside the other (``R[chunk]@10`` then
``R[doc]@10``), with the micro mean and the ceiling; the no-answer figures
follow in their own block, never inside the recall averages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench import jsonout
from workbench.errors import ValidationError
from workbench.scoring.abstention import NoAnswerResult
from workbench.scoring.measures import Measure
from workbench.scoring.units import unit_name
from workbench.services.evaluation.units import UnitReport, UnitView

UNIT_FORMATS = ("table", "json")


def _f(x: float | None) -> str:
    return "" if x is None or x != x else f"{x:.4f}"


def measure_label(view: UnitView, m: Measure) -> str:
    """``R[doc]@10`` when the view is labelled with its unit, else ``R@10``."""
    return unit_name(m, view.unit) if view.labelled else str(m)


def header_lines(report: UnitReport) -> list[str]:
    """The lines that say what was mapped and how (printed above every table)."""
    first = report.views[0].report
    notice = first.coverage.notice() if first.coverage else ""
    lines = [notice] if notice else []
    lines.append(f"qrels {first.qrels.name.rsplit(' [', 1)[0]} ({report.qrels_unit} level); runs at {report.run_unit} "
                 "level" + (f" over chunk collection {report.chunk_collection}" if report.chunk_collection else "")
                 + (f" ({report.chunk_source.describe()})" if report.chunk_source else ""))
    if first.topic_set is not None:
        protected = "; protected: this use is recorded" if first.topic_set.protected else ""
        lines.append(f"  topic set {first.topic_set.ref}{protected}")
    for v in report.views:
        line = f"  [{v.unit}] runs: {v.run_mapping}; qrels: {v.qrels_mapping}"
        if v.n_collapsed:
            line += "; chunk lines collapsed: " + ", ".join(f"{r} {n:,}" for r, n in v.n_collapsed.items())
        lines.append(line)
        lines.append(f"  [{v.unit}] {v.dedupe.describe()}")
    for w in report.warnings:
        lines.append(f"warning: {w}")
    for v in report.views:
        for w in v.report.warnings:
            lines.append(f"warning [{v.unit}]: {w}")
    return lines


def _run_table(report: UnitReport, run_index: int) -> list[str]:
    views = report.views
    evs = [v.report.evaluations[run_index] for v in views]
    name = evs[0].run_name
    topics = ", ".join(f"{len(e.topics):,} topics at {v.unit}" for v, e in zip(views, evs, strict=True))
    out = [f"run {name} ({topics})"]
    head: list[str] = []
    for v in views:
        head += [f"measure ({v.unit})", "macro", "micro", "ceiling"]
    rows = [head]
    for m in views[0].report.measures:
        row: list[str] = []
        for v, e in zip(views, evs, strict=True):
            a = e.aggregates[m]
            row += [measure_label(v, m), _f(a.macro), _f(a.micro), _f(a.ceiling)]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        cells = [c.ljust(w) if i % 4 == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        groups = ["  ".join(cells[i:i + 4]) for i in range(0, len(cells), 4)]
        out.append("   |   ".join(groups).rstrip())
    return out


def no_answer_lines(results: Sequence[NoAnswerResult], source: str) -> list[str]:
    """The no-answer block: accuracy and false-answer rate per run, answerable topics abstained on."""
    if not results:
        return []
    r0 = results[0]
    rule = ("returns nothing" if r0.threshold is None
            else f"returns nothing scored above {r0.threshold!r}")
    lines = [f"no-answer topics: {len(r0.no_answer):,} ({source}); a run abstains on a topic when it {rule}. "
             "Not part of any average above."]
    rows = [["run", "no-answer accuracy", "abstained", "false-answer rate", "answered", "answerable abstained"]]
    for r in results:
        rows.append([r.run_name, _f(r.accuracy), f"{len(r.abstained)}/{len(r.no_answer)}", _f(r.false_answer_rate),
                     f"{len(r.answered)}/{len(r.no_answer)}", f"{len(r.answerable_abstained)}/{len(r.answerable)}"])
    widths = [max(len(x[i]) for x in rows) for i in range(len(rows[0]))]
    lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(x, widths, strict=True)))
              for x in rows]
    for r in results:
        if r.answered:
            lines.append(f"  {r.run_name}: answered no-answer topics {', '.join(r.answered[:20])}"
                         + (" ..." if len(r.answered) > 20 else ""))
    return lines


def _num(x: float | None) -> float | None:
    return None if x is None or x != x else x


def _json(report: UnitReport) -> dict[str, Any]:
    views = []
    for v in report.views:
        runs = []
        for e in v.report.evaluations:
            runs.append({"run": e.run_name, "topics": len(e.topics), "measures": {
                measure_label(v, m): {"macro": _num(a.macro), "micro": _num(a.micro), "ceiling": _num(a.ceiling), "n_topics": a.n_topics,
                                      "sum_numerator": a.sum_numerator, "sum_denominator": a.sum_denominator}
                for m, a in e.aggregates.items()}})
        views.append({"unit": v.unit, "run_mapping": v.run_mapping, "qrels_mapping": v.qrels_mapping,
                      "chunk_lines_collapsed": dict(v.n_collapsed),
                      "duplicate_groups": {"applied": v.dedupe.applied, "groups": v.dedupe.n_groups,
                                           "grouped_documents": v.dedupe.n_grouped_documents,
                                           "relevant_merged": v.dedupe.n_relevant_merged,
                                           "topics_merged": v.dedupe.n_topics_merged,
                                           "run_lines_collapsed": v.dedupe.n_run_collapsed},
                      "header": v.report.header(), "runs": runs,
                      "evaluation_ids": list(v.report.evaluation_ids),
                      "slices": _slices_json(v)})
    return {
        "run_unit": report.run_unit, "qrels_unit": report.qrels_unit, "chunk_collection": report.chunk_collection,
        "chunk_source": report.chunk_source.__dict__ if report.chunk_source else None, "views": views,
        "no_answer": [{"run": r.run_name, "threshold": r.threshold, "no_answer_topics": list(r.no_answer),
                       "abstained": list(r.abstained), "answered": list(r.answered), "accuracy": r.accuracy,
                       "false_answer_rate": r.false_answer_rate, "answerable": len(r.answerable),
                       "answerable_abstained": list(r.answerable_abstained)} for r in report.no_answer],
        "no_answer_source": report.no_answer_source, "warnings": list(report.warnings),
    }


def _slices_json(v: UnitView) -> Any:
    if not v.report.slices:
        return None
    from workbench.reports.slices import score_slices_json

    return score_slices_json(v.report.slices, v.report.slice_keys, lambda m: measure_label(v, m))


def _view_extra_lines(v: UnitView) -> list[str]:
    """A view's eligibility block, its slices (``--by``) and its recorded evaluations (table format)."""
    from workbench.reports.scores import _eligibility_lines

    lines = _eligibility_lines(v.report.header())
    if v.report.slices:
        from workbench.reports.slices import score_slice_tables

        for e in v.report.evaluations:
            for block in score_slice_tables(e.run_name, v.report.slices.get(e.run_name, {}), v.report.slice_keys,
                                            lambda m: measure_label(v, m)):
                lines += ["", f"[{v.unit}] {block}"]
    if v.report.evaluation_ids:
        lines.append(f"[{v.unit}] recorded evaluations: {', '.join(v.report.evaluation_ids)}")
    return lines


def render_units(report: UnitReport, fmt: str = "table") -> str:
    """Render a ``UnitReport`` as ``table`` or ``json``.

    Raises:
        ValidationError: another format.
    """
    if fmt not in UNIT_FORMATS:
        raise ValidationError(f"--unit/--dedupe/--no-answer reports: expected --format {' or '.join(UNIT_FORMATS)}, "
                              f"found {fmt!r}.")
    if fmt == "json":
        return jsonout.dumps(_json(report), indent=2, ensure_ascii=False, default=str) + "\n"
    lines = header_lines(report)
    for i in range(len(report.views[0].report.evaluations)):
        lines += [""] + _run_table(report, i)
    for v in report.views:
        extra = _view_extra_lines(v)
        if extra:
            lines += [""] + extra
    na = no_answer_lines(report.no_answer, report.no_answer_source)
    if na:
        lines += [""] + na
    return "\n".join(lines) + "\n"
