"""Rendering of judging simulations (``workbench simulate``, the demo's table) and their curve.

Rendering only: numbers arrive at full precision from
``workbench.services.judging.simulation.SimulationRun`` and are rounded here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench import jsonout
from workbench.judging.simulate import share_label
from workbench.reports.format import table

if TYPE_CHECKING:
    from workbench.services.judging.simulation import SimulationRun

SIM_FORMATS = ("table", "tsv", "json")


def _tau(x: float | None) -> str:
    return "" if x is None else f"{x:.3f}"


def _count(x: int | None) -> str:
    return "not reached" if x is None else f"{x:,}"


def simulation_rows(run: SimulationRun) -> list[dict[str, Any]]:
    """One row per strategy (and the ideal order): judgments needed per share, tau at those budgets."""
    rep = run.report
    rank = next((o for o in rep.strategies if o.strategy == "rank"), None)
    rows: list[dict[str, Any]] = []
    for o in rep.strategies:
        row: dict[str, Any] = {"strategy": o.strategy}
        taus = {b.label: b.tau for b in o.budgets}
        for s in rep.shares:
            row[f"needed_{share_label(s)}"] = o.needed[s]
            row[f"tau_{share_label(s)}"] = taus.get(share_label(s))
        if rank is not None:
            for s in rep.shares:
                mine, base = o.needed[s], rank.needed[s]
                row[f"vs_rank_{share_label(s)}"] = mine / base if mine is not None and base else None
        last = o.budgets[-1] if o.budgets else None
        if last is not None:
            row["budget"] = last.label
            row["budget_judgments"] = last.judgments
            row["budget_relevant"] = last.relevant
            row["budget_tau"] = last.tau
        rows.append(row)
    ideal: dict[str, Any] = {"strategy": "ideal (relevant first)"}
    for s in rep.shares:
        ideal[f"needed_{share_label(s)}"] = rep.ideal[s]
    rows.append(ideal)
    return rows


def budget_rows(run: SimulationRun) -> list[dict[str, Any]]:
    """One row per strategy and budget: judgments, relevant found, each run's value on that budget's qrels, tau."""
    out = []
    for o in run.report.strategies:
        for b in o.budgets:
            out.append({"strategy": o.strategy, "budget": b.label, "judgments": b.judgments,
                        "relevant": b.relevant, "scores": dict(b.scores), "tau": b.tau})
    return out


def render_simulation(run: SimulationRun, fmt: str = "table", *, detail: bool = False) -> str:
    """The simulation table: strategies x judgments needed for each share, tau at those budgets.

    Args:
        run: the simulation.
        fmt: ``table`` (aligned text with a header), ``tsv`` or ``json`` (always with the budgets).
        detail: (table) also the runs rescored on each budget's qrels.
    """
    rep = run.report
    rows = simulation_rows(run)
    if fmt == "json":
        return jsonout.dumps({
            "pool": run.pool, "oracle": run.oracle, "runs": list(run.runs), "measure": rep.measure,
            "seed": run.seed, "budget_per_topic": rep.budget, "topics": rep.n_topics,
            "documents": rep.n_documents, "relevant": rep.n_relevant, "rel": rep.rel,
            "full_oracle_scores": dict(rep.full_scores), "full_pool_tau": rep.full_pool_tau,
            "strategies": rows, "budgets": budget_rows(run),
        }, indent=None)
    labels = [share_label(s) for s in rep.shares]
    header = ["strategy", *(f"n@{x}" for x in labels), *(f"tau@{x}" for x in labels)]
    body = []
    for r in rows:
        body.append([r["strategy"], *(_count(r.get(f"needed_{x}")) for x in labels),
                     *(_tau(r.get(f"tau_{x}")) for x in labels)])
    if fmt == "tsv":
        return "\n".join("\t".join(c.replace(",", "") if c[:1].isdigit() else c for c in line)
                         for line in [header, *body])
    out = [
        f"Judging simulation on {run.pool} against {run.oracle}: {rep.n_topics} topics, "
        f"{rep.n_documents:,} pooled documents, {rep.n_relevant:,} of them relevant (grade >= {rep.rel})",
        f"  n@x: judgments needed until every topic has found x of its pooled relevant documents, summed over "
        f"topics{'' if rep.budget is None else f' (at most {rep.budget} per topic)'}",
        f"  tau@x: Kendall's tau-b between the ordering of the runs ({', '.join(run.runs) or 'none'}) by "
        f"{rep.measure} on the qrels published at that budget and on the full oracle",
    ]
    out += ["  " + line for line in table(header, body).splitlines()]
    rank = next((r for r in rows if r["strategy"] == "rank"), None)
    if rank is not None:
        ratios = [f"{r['strategy']} {r['vs_rank_90%']:.2f}" for r in rows
                  if r.get("vs_rank_90%") is not None and r["strategy"] != "rank"]
        if ratios:
            out.append("  judgments for 90% relative to rank: " + ", ".join(ratios))
    if rep.full_pool_tau is not None:
        out.append(f"  tau of the fully judged pool against the full oracle (the pool's own bias): "
                   f"{rep.full_pool_tau:.3f}")
    if rep.budget is not None:
        out.append(f"  at {rep.budget} judgments per topic: " + "; ".join(
            f"{o.strategy} {o.budgets[-1].relevant:,} relevant found, tau {_tau(o.budgets[-1].tau)}"
            for o in rep.strategies if o.budgets))
    for o in rep.strategies:
        shorts = [f"{share_label(s)}: {n}" for s, n in o.short.items() if n]
        if shorts:
            out.append(f"  {o.strategy}: topics that did not reach the share within the budget: {', '.join(shorts)}")
    if detail and rep.full_scores:
        names = sorted(rep.full_scores)
        header2 = ["strategy", "budget", "judgments", "relevant", *names, "tau"]
        body2 = [["(full oracle)", "", "", "", *(f"{rep.full_scores[n]:.4f}" for n in names), ""]]
        for r in budget_rows(run):
            body2.append([r["strategy"], r["budget"], f"{r['judgments']:,}", f"{r['relevant']:,}",
                          *(f"{r['scores'].get(n, 0.0):.4f}" for n in names), _tau(r["tau"])])
        out.append("")
        out.append(f"The qrels each strategy would have published at each budget, every run rescored ({rep.measure}):")
        out += ["  " + line for line in table(header2, body2).splitlines()]
    return "\n".join(out)


def simulation_chart(run: SimulationRun, *, title: str | None = None) -> Any:
    """An altair chart: relevant documents found against judgments made, one line per strategy.

    Returns:
        ``altair.Chart`` (x: judgments made, summed over topics; y: relevant found).
    """
    import altair as alt

    rep = run.report
    points = []
    for o in rep.strategies:
        for made, found in o.curve(run.oracle_qrels, rep.rel):
            points.append({"judgments": made, "relevant found": found, "strategy": o.strategy})
    x = alt.X("judgments:Q", title="judgments made (summed over topics)")
    y = alt.Y("relevant found:Q", scale=alt.Scale(domain=[0, max(1, rep.n_relevant)]),
              title="relevant documents found")
    chart = alt.Chart(alt.Data(values=points)).mark_line().encode(
        x=x, y=y, color=alt.Color("strategy:N", title="strategy"))
    return chart.properties(title=title or f"Judging order on {run.pool} against {run.oracle}",
                            width=520, height=320)
