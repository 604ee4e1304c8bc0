"""Rendering of a paired comparison of two runs (``workbench compare``): deltas, tests, moved documents; and of
the change of an estimated measure of a judged sample (``compare --measure Rhat@20``) with its interval."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench import jsonout

if TYPE_CHECKING:
    from workbench.scoring.compare import Comparison
    from workbench.scoring.estimate_compare import EstimatedChange
    from workbench.scoring.slices import SliceComparison, SliceKey
from workbench.reports.format import _delimited, _ids, _json_number, check_format, number, table
from workbench.reports.scores import WIDTH, _header_lines


def _docs(docs: Sequence[tuple[str, int, int | None, int | None]], which: int) -> str:
    def rank(r: int | None) -> str:
        return "-" if r is None else str(r)

    return " ".join(f"{d}(g{g}:{rank(ra)}->{rank(rb)})" for d, g, ra, rb in docs) if docs else ""


def render_comparison(
    header: Mapping[str, Any],
    c: Comparison,
    fmt: str = "table",
    *,
    slices: Sequence[SliceComparison] = (),
    slice_p: Sequence[float | None] = (),
    slice_keys: Mapping[str, SliceKey] | None = None,
) -> str:
    """Render a run comparison: summary, paired tests, per-topic deltas (largest losses first).

    Args:
        header: lineage (``ScoreReport.header``).
        c: the comparison (tests None when refused: the refusal is printed instead).
        fmt: one of ``FORMATS``.
        slices: per-slice comparisons (``--by``), overall rows included.
        slice_p: their Holm-adjusted p-values, aligned (None where untested).
        slice_keys: key -> partition (descriptions).

    Raises:
        ValidationError: unknown format.
    """
    f = check_format(fmt)
    tests = [t for t in (c.permutation, c.bootstrap) if t is not None]
    if f == "json":
        from workbench.reports.slices import comparison_slices_json

        doc = {
            "header": dict(header), "measure": str(c.measure), "run_a": c.run_a, "run_b": c.run_b,
            "topics": len(c.topics), "mean_a": c.mean_a, "mean_b": c.mean_b, "mean_difference": c.mean_difference,
            "wins": c.wins, "losses": c.losses, "ties": c.ties, "refused": c.refused,
            "tests": [{"method": t.method, "p_value": t.p_value, "ci_low": t.ci_low, "ci_high": t.ci_high,
                       "confidence": t.confidence, "n_resamples": t.n_resamples, "seed": t.seed} for t in tests],
            "slices": comparison_slices_json(slices, slice_p or [None] * len(slices)),
            "per_topic": [{"topic_id": d.topic_id, "a": d.a, "b": d.b, "delta": d.delta,
                           "lost": [list(x) for x in d.lost], "gained": [list(x) for x in d.gained]} for d in c.deltas],
        }
        return jsonout.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    rows: list[dict[str, Any]] = [{"topic_id": d.topic_id, "a": d.a, "b": d.b, "delta": d.delta,
                                   "lost": _docs(d.lost, 0), "gained": _docs(d.gained, 1)} for d in c.deltas]
    if f == "jsonl":
        return "".join(jsonout.dumps({"measure": str(c.measure), "run_a": c.run_a, "run_b": c.run_b, **r},
                                  ensure_ascii=False) + "\n" for r in rows)
    if f in ("csv", "tsv"):
        return _delimited([{"measure": str(c.measure), "run_a": c.run_a, "run_b": c.run_b, **r} for r in rows],
                          "," if f == "csv" else "\t")
    lines = _header_lines(header, [])
    lines.append("")
    lines.append(f"{c.measure}: A = {c.run_a}, B = {c.run_b}, over {len(c.topics):,} topics")
    lines.append(f"mean {c.run_a} {number(c.mean_a)}, {c.run_b} {number(c.mean_b)}, "
                 f"difference {number(c.mean_difference)} (B - A); B better on {c.wins}, worse on {c.losses}, "
                 f"equal on {c.ties}")
    for t in tests:
        p = f"{t.p_value:.4f}" if t.p_value >= 1e-4 else f"{t.p_value:.1e}"
        line = f"{t.method:<12} p = {p} (two-sided, {t.n_resamples:,} resamples, seed {t.seed})"
        if t.ci_low is not None:
            line += f"; {round(100 * t.confidence)}% CI of the mean difference [{number(t.ci_low)}, {number(t.ci_high)}]"
        lines.append(line)
    if c.refused:
        lines.append(f"{c.refused} (--min-topics); the per-topic differences are listed below")
    if slices:
        from workbench.reports.slices import comparison_slice_lines

        lines += comparison_slice_lines(slices, slice_p or [None] * len(slices), slice_keys or {}, c.run_a, c.run_b)
    lines.append("")
    within = f"in the top {c.measure.cutoff}" if c.measure.cutoff is not None else "in the ranking"
    lines.append(f"per topic, largest losses first; lost/gained: relevant documents {within} of only A / only B")
    lines.append(table(["topic", c.run_a, c.run_b, "delta", "lost", "gained"],
                       [[d.topic_id, number(d.a), number(d.b), number(d.delta), str(len(d.lost)), str(len(d.gained))]
                        for d in c.deltas]))
    moved = [d for d in c.deltas if d.lost or d.gained]
    if moved:
        lines.append("")
        lines.append(f"lost and gained {within}: doc(grade: rank in A -> rank in B; - = not returned)")
        lines += _moved_lines(moved)
    return "\n".join(lines) + "\n"


def _moved_lines(deltas: Sequence[Any], width: int = WIDTH) -> list[str]:
    """Each topic's lost and gained documents, wrapped to ``width`` columns under a hanging indent."""
    import textwrap

    out: list[str] = []
    for d in deltas:
        for what, docs, which in (("lost", d.lost, 0), ("gained", d.gained, 1)):
            if not docs:
                continue
            head = f"{d.topic_id:<8} {what:<7}"
            out += textwrap.wrap(_docs(docs, which), width=width, initial_indent=head + " ",
                                 subsequent_indent=" " * (len(head) + 1), break_on_hyphens=False,
                                 break_long_words=False)
    return out


def render_estimated_comparison(header: Mapping[str, Any], c: EstimatedChange, fmt: str = "table", *,
                                pooled: tuple[float, float] = (math.nan, math.nan)) -> str:
    """Render the change of an estimated measure between two runs (``scoring.estimate_compare``).

    Args:
        header: lineage (``ScoreReport.header``, with its ``sample`` block).
        c: the estimated change.
        fmt: one of ``FORMATS``.
        pooled: the runs' pooled (judged-only) values of the measure's counterpart (R@k, P@k), A then B.

    Raises:
        ValidationError: unknown format.
    """
    f = check_format(fmt)
    m = c.measure
    rows: list[dict[str, Any]] = [{"topic_id": d.topic_id, "a": d.a, "b": d.b, "delta": d.delta, "se": d.se,
                                   "lost": " ".join(d.lost), "gained": " ".join(d.gained)} for d in c.per_topic]
    if f == "json":
        doc = {
            "header": dict(header), "measure": str(m), "display": m.display(), "estimated": True,
            "aggregate": m.AGGREGATE, "run_a": c.run_a, "run_b": c.run_b, "topics": len(c.topics),
            "n_judged": c.n_judged, "estimate_a": _json_number(c.value_a), "estimate_b": _json_number(c.value_b),
            "change": _json_number(c.change), "se": _json_number(c.se), "confidence": c.confidence,
            "low": _json_number(c.low), "high": _json_number(c.high), "pooled_measure": str(m.pooled),
            "pooled_a": _json_number(pooled[0]), "pooled_b": _json_number(pooled[1]),
            "wins": c.wins, "losses": c.losses, "ties": c.ties, "left_out_topics": list(c.left_out),
            "per_topic": [{"topic_id": d.topic_id, "a": _json_number(d.a), "b": _json_number(d.b),
                           "delta": _json_number(d.delta), "se": _json_number(d.se), "lost": list(d.lost),
                           "gained": list(d.gained)} for d in c.per_topic],
        }
        return jsonout.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if f == "jsonl":
        return "".join(jsonout.dumps({"measure": str(m), "run_a": c.run_a, "run_b": c.run_b, **r},
                                     ensure_ascii=False) + "\n" for r in rows)
    if f in ("csv", "tsv"):
        return _delimited([{"measure": str(m), "run_a": c.run_a, "run_b": c.run_b, **r} for r in rows],
                          "," if f == "csv" else "\t")
    lines = _header_lines(header, [])
    lines.append("")
    lines.append(f"{m.display()} [{m}]: A = {c.run_a}, B = {c.run_b}, estimated over {len(c.topics):,} topics from "
                 f"{c.n_judged:,} judged sampled documents")
    pct = f"{100 * c.confidence:g}%"
    lines.append(f"estimate  {c.run_a} {number(c.value_a)}, {c.run_b} {number(c.value_b)}, change "
                 f"{_signed(c.change)} (B - A); {pct} interval of the change [{number(c.low)}, {number(c.high)}] "
                 f"(se {number(c.se)})")
    lines.append("interval  the design variance of the difference, linearised jointly (both runs are estimated "
                 "from the same sampled documents); the topics held fixed")
    lines.append(f"pooled    {m.pooled}{' (micro)' if m.AGGREGATE == 'micro' else ''} on the judged documents alone: {c.run_a} {number(pooled[0])}, {c.run_b} "
                 f"{number(pooled[1])}, change {_signed(pooled[1] - pooled[0])}")
    lines.append(f"topics    B's estimate larger on {c.wins}, smaller on {c.losses}, equal on {c.ties}")
    if c.left_out:
        lines.append(f"left out  {len(c.left_out):,} topic(s) one run's estimate averages and the other's does not: "
                     f"{_ids(c.left_out)}")
    lines.append("")
    lines.append(f"per topic, largest losses first; se: the change's design standard error; lost/gained: judged "
                 f"relevant sampled documents in the top {m.cutoff} of only A / only B")
    lines.append(table(["topic", c.run_a, c.run_b, "delta", "se", "lost", "gained"],
                       [[d.topic_id, number(d.a), number(d.b), number(d.delta), number(d.se), str(len(d.lost)),
                         str(len(d.gained))] for d in c.per_topic]))
    moved = [d for d in c.per_topic if d.lost or d.gained]
    if moved:
        import textwrap

        lines.append("")
        lines.append(f"lost and gained in the top {m.cutoff}: judged relevant sampled documents")
        for d in moved:
            for what, docs in (("lost", d.lost), ("gained", d.gained)):
                if docs:
                    head = f"{d.topic_id:<8} {what:<7}"
                    lines += textwrap.wrap(" ".join(docs), width=WIDTH, initial_indent=head + " ",
                                           subsequent_indent=" " * (len(head) + 1), break_on_hyphens=False,
                                           break_long_words=False)
    return "\n".join(lines) + "\n"


def _signed(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:+.4f}"
