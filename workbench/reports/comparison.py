"""Rendering of a paired comparison of two runs (``workbench compare``): deltas, tests, moved documents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench import jsonout

if TYPE_CHECKING:
    from workbench.scoring.compare import Comparison
    from workbench.scoring.slices import SliceComparison, SliceKey
from workbench.reports.format import _delimited, check_format, number, table
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
