"""Rendering of slice tables (``--by KEY``) for ``score`` and ``compare``; rounding for display only.

A slice table lists, per slice of a key, the topic count beside each measure's
macro mean (score) or the paired comparison with raw and Holm-adjusted p-values
(compare), after the overall row ``(all)``. Slices with fewer than the minimum
number of topics are marked ``too small`` (listed, no statistics).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.reports.format import number, table
from workbench.scoring.slices import ALL, SliceComparison, SliceKey, SliceRow


def _p(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4f}" if x >= 1e-4 else f"{x:.1e}"


def score_slice_tables(run: str, slices: Mapping[str, Sequence[SliceRow]],
                       keys: Mapping[str, SliceKey], label: Callable[[Any], str] = str) -> list[str]:
    """One text block per key: slice, topics, each measure's macro mean (headed ``label(measure)``), note."""
    blocks = []
    for key, rows in slices.items():
        if not rows:
            continue
        measures = list(rows[0].means)
        desc = keys[key].description if key in keys else ""
        head = ["slice", "topics", *(label(m) for m in measures), "note"]
        body = [[r.value, f"{r.n_topics:,}", *(number(r.means[m]) for m in measures),
                 "too small for statistics" if r.too_small and r.value != ALL else ""] for r in rows]
        blocks.append(f"run {run} by {key} ({desc})\n" + table(head, body, left=1))
    return blocks


def score_slices_json(slices: Mapping[str, Mapping[str, Sequence[SliceRow]]],
                      keys: Mapping[str, SliceKey], label: Callable[[Any], str] = str) -> dict[str, Any]:
    """run -> key -> {description, rows: [{value, n_topics, too_small, topics, means}]} at full precision;
    means keyed by ``label(measure)`` (``R[doc]@10`` in a unit view)."""
    out: dict[str, Any] = {}
    for run, by_key in slices.items():
        out[run] = {}
        for key, rows in by_key.items():
            out[run][key] = {
                "description": keys[key].description if key in keys else "",
                "rows": [{"value": r.value, "n_topics": r.n_topics, "too_small": r.too_small,
                          "topics": list(r.topics), "means": {label(m): v for m, v in r.means.items()}}
                         for r in rows],
            }
    return out


def comparison_slice_lines(rows: Sequence[SliceComparison], p_corrected: Sequence[float | None],
                           keys: Mapping[str, SliceKey], run_a: str, run_b: str) -> list[str]:
    """Per key and measure: slice, topics, means of A and B, delta, raw and Holm p, the bootstrap CI."""
    lines: list[str] = []
    groups: dict[tuple[str, str], list[tuple[SliceComparison, float | None]]] = {}
    for r, p in zip(rows, p_corrected, strict=True):
        groups.setdefault((r.key, str(r.measure)), []).append((r, p))
    for (key, measure), items in groups.items():
        desc = keys[key].description if key in keys else ""
        lines.append("")
        lines.append(f"{measure} by {key} ({desc}); p: permutation test, raw and Holm-adjusted over every "
                     "tested slice")
        body = []
        for r, p in items:
            ci = "-"
            if r.bootstrap is not None and r.bootstrap.ci_low is not None:
                ci = f"[{number(r.bootstrap.ci_low)}, {number(r.bootstrap.ci_high)}]"
            note = "too small for statistics" if r.too_small else ""
            body.append([r.value, f"{r.n_topics:,}", number(r.mean_a), number(r.mean_b), number(r.delta),
                         _p(r.permutation.p_value if r.permutation else None), _p(p), ci, note])
        lines.append(table(["slice", "topics", run_a, run_b, "delta", "p", "p Holm", "bootstrap CI", "note"], body))
    return lines


def comparison_slices_json(rows: Sequence[SliceComparison], p_corrected: Sequence[float | None]) -> list[dict[str, Any]]:
    """The slice comparisons at full precision (JSON)."""
    out = []
    for r, p in zip(rows, p_corrected, strict=True):
        out.append({
            "key": r.key, "value": r.value, "measure": str(r.measure), "n_topics": r.n_topics,
            "too_small": r.too_small, "mean_a": r.mean_a, "mean_b": r.mean_b, "delta": r.delta,
            "p_permutation": r.permutation.p_value if r.permutation else None, "p_holm": p,
            "ci_low": r.bootstrap.ci_low if r.bootstrap else None,
            "ci_high": r.bootstrap.ci_high if r.bootstrap else None,
            "topics": list(r.topics),
        })
    return out
