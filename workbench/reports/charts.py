"""Recall-curve charts: R@k for k = 1..depth per run (macro) with the ceiling; PNG (vl-convert), SVG, JSON or HTML."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import ValidationError
from workbench.scoring.results import Evaluation

if TYPE_CHECKING:
    pass


CHART_SUFFIXES: tuple[str, ...] = (".png", ".html", ".svg", ".json")


def recall_curve_chart(evaluations: Sequence[Evaluation], *, title: str = "Recall curve") -> Any:
    """An altair chart of macro R@k for k = 1..depth per run, with the ceiling dashed.

    Args:
        evaluations: one per run (their curves).
        title: chart title.

    Returns:
        ``altair.LayerChart`` (x: k on a log scale over [1, depth], y: R@k over [0, 1]).
    """
    import altair as alt

    points = []
    for e in evaluations:
        for k, v in enumerate(e.curve.macro, 1):
            points.append({"k": k, "R@k": v, "run": e.run_name})
    ceiling_name = "ceiling min(k,|R|)/|R|"
    if evaluations:
        longest = max(evaluations, key=lambda e: e.curve.depth)
        points += [{"k": k, "R@k": v, "run": ceiling_name} for k, v in enumerate(longest.curve.ceiling, 1)]
    # Explicit domains: Vega otherwise derives them from the data, which is still
    # empty at the first render in the browser ("Infinite extent for field k",
    # "Log scale domain includes zero"); k starts at 1, so the log scale is defined.
    depth = max((e.curve.depth for e in evaluations), default=1)
    x = alt.X("k:Q", scale=alt.Scale(type="log", domain=[1, max(2, depth)]), title="cutoff k")
    y = alt.Y("R@k:Q", scale=alt.Scale(domain=[0, 1]), title="R@k (macro)")
    dash = alt.condition(alt.datum.run == ceiling_name, alt.value([4, 4]), alt.value([1, 0]))
    data = alt.Data(values=points)  # type: ignore[no-untyped-call]  # altair's Data has no annotations
    chart = alt.Chart(data).mark_line().encode(
        x=x, y=y, color=alt.Color("run:N", title="run"), strokeDash=dash)
    return chart.properties(title=title, width=520, height=320)


def recall_curve_spec(evaluations: Sequence[Evaluation], *, title: str = "Recall curve") -> dict[str, Any]:
    """The Vega-Lite spec of ``recall_curve_chart`` as a plain dict, built without altair.

    For the app's Scoreboard: importing altair and validating the spec against its schema cost
    about 1.8 s on a Cranfield board (issue 26); this is the same JSON (the altair chart's
    ``to_dict()`` without ``$schema`` and ``config``; ``tests/scoring/test_reports_and_records.py``
    compares the two), made directly.

    Args:
        evaluations: one per run (their curves).
        title: chart title.

    Returns:
        The spec, data inline under ``data.values`` (one ``{"k", "R@k", "run"}`` point per run and
        k = 1..depth, then the ceiling's).
    """
    ceiling_name = "ceiling min(k,|R|)/|R|"
    points: list[dict[str, Any]] = [{"k": k, "R@k": v, "run": e.run_name}
                                    for e in evaluations for k, v in enumerate(e.curve.macro, 1)]
    if evaluations:
        longest = max(evaluations, key=lambda e: e.curve.depth)
        points += [{"k": k, "R@k": v, "run": ceiling_name} for k, v in enumerate(longest.curve.ceiling, 1)]
    depth = max((e.curve.depth for e in evaluations), default=1)
    return {
        "data": {"values": points},
        "mark": {"type": "line"},
        "encoding": {
            "color": {"field": "run", "title": "run", "type": "nominal"},
            "strokeDash": {"condition": {"test": f"(datum.run === '{ceiling_name}')", "value": [4, 4]}, "value": [1, 0]},
            "x": {"field": "k", "scale": {"domain": [1, max(2, depth)], "type": "log"}, "title": "cutoff k",
                  "type": "quantitative"},
            "y": {"field": "R@k", "scale": {"domain": [0, 1]}, "title": "R@k (macro)", "type": "quantitative"},
        },
        "height": 320,
        "title": title,
        "width": 520,
    }


def save_chart(chart: Any, path: str | Path) -> Path:
    """Write a chart by suffix: ``.png`` (vl-convert, scale 2), ``.svg``, ``.json`` or ``.html`` (self-contained).

    Raises:
        ValidationError: unsupported suffix.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in CHART_SUFFIXES:
        raise ValidationError(f"{p}: expected a chart file ending in {', '.join(CHART_SUFFIXES)}, found {suffix or 'none'!r}.")
    spec = chart.to_json()
    if suffix == ".png":
        import vl_convert as vlc

        data: bytes | str = vlc.vegalite_to_png(spec, scale=2)
    elif suffix == ".svg":
        import vl_convert as vlc

        data = vlc.vegalite_to_svg(spec)
    elif suffix == ".json":
        data = spec
    else:
        data = chart.to_html(inline=True)
    from workbench.formats.io import atomic_write

    with atomic_write(p, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return p
