"""Rendering of simulated sampling (``workbench simulate-sample``, ``bench/results/sampling.md``): rounding only.

Per budget, one row per run, measure and aggregate: the truth, the pooled
value (the frame judged completely), the mean estimate over the repeats, its
bias, RMSE and the coverage of its 95% interval, then Kendall's tau of the
run ordering. ``json`` keeps full precision; ``markdown`` is the table of
``bench/results/sampling.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench import jsonout
from workbench.reports.format import check_format, number, table

if TYPE_CHECKING:
    from workbench.services.runs.sampling import SamplingSimulationRun

SAMPLE_SIM_FORMATS = ("table", "markdown", "json")
"""``workbench simulate-sample --format``."""

COLUMNS = ("budget", "run", "measure", "aggregate", "truth", "pooled", "mean", "bias", "rmse", "coverage", "topics")


def simulation_rows(run: SamplingSimulationRun) -> list[dict[str, Any]]:
    """One row per budget, run, measure and aggregate (full precision), runs in their given order."""
    out = []
    for b in run.simulation.budgets:
        for e in sorted(b.estimates, key=lambda e: (run.simulation.runs.index(e.run), e.k, e.aggregate)):
            out.append({"budget": b.percent, "judgments": b.judgments, "run": e.run, "measure": f"R@{e.k}",
                        "aggregate": e.aggregate, "truth": e.truth, "pooled": e.pooled, "mean": e.mean,
                        "bias": e.bias, "rmse": e.rmse, "coverage": e.coverage, "topics": e.topics})
    return out


def _head(run: SamplingSimulationRun) -> list[str]:
    sim = run.simulation
    source = f"sample pool {run.pool_version}'s runs and design" if run.pool_version else "runs and design given"
    return [f"simulated sampling ({source}): frame = the depth-{sim.base.depth} pool of {', '.join(sim.runs)}, "
            f"{sim.frame_size:,} documents over {sim.n_topics} topics; truth {run.truth}; {sim.repeats} repeats per "
            f"budget (repeat i: seed {sim.base.seed} + i)",
            f"base design (rates as relative weights, scaled to each budget): {sim.base.describe()}",
            "truth: R@k on the truth; pooled: on the frame judged completely (depth-k pooling's value); mean, bias "
            "(mean - truth), RMSE and coverage (share of repeats whose 95% interval holds the truth) of the estimate; "
            "macro = mean of per-topic R̂_k / R̂, micro = sum R̂_k / sum R̂ (design-based, Horvitz-Thompson); macro-eb = "
            "the empirical-Bayes macro (model-based: beta-binomial rates per stratum shrunk across topics, posterior "
            "mean of the mean of per-topic ratios; interval from a bootstrap of the prior over topics); topics = "
            "topics averaged (macro: R̂ > 0; macro-eb: expected |R| > 0)"]


def _rows_text(run: SamplingSimulationRun) -> tuple[list[str], list[list[str]]]:
    rows = []
    for r in simulation_rows(run):
        rows.append([f"{r['budget']:g}% ({r['judgments']:,})", r["run"], r["measure"], r["aggregate"],
                     number(r["truth"]), number(r["pooled"]), number(r["mean"]), f"{r['bias']:+.4f}",
                     number(r["rmse"]), f"{r['coverage']:.3f}", f"{r['topics']:.1f}"])
    return ["budget (judgments)", "run", "measure", "aggregate", "truth", "pooled", "mean", "bias", "RMSE",
            "coverage", "topics"], rows


def _tau_rows(run: SamplingSimulationRun) -> tuple[list[str], list[list[str]]]:
    ks = sorted({e.k for b in run.simulation.budgets for e in b.estimates})
    aggs = [a for a in ("macro", "micro", "macro-eb") if any(a in b.tau.get(k, {}) for b in run.simulation.budgets
                                                            for k in ks)]
    head = ["budget (judgments)", "drawn per repeat", *(f"tau R@{k} {agg}" for k in ks for agg in aggs)]
    rows = [[f"{b.percent:g}% ({b.judgments:,})", f"{b.mean_sampled:,.0f}",
             *(f"{b.tau[k][agg]:.3f}" for k in ks for agg in aggs)] for b in run.simulation.budgets]
    return head, rows


def render_sample_simulation(run: SamplingSimulationRun, fmt: str = "table") -> str:
    """The simulation as text (``table`` or ``markdown``) or ``json``.

    Raises:
        UsageError: an unknown format.
    """
    check_format(fmt, SAMPLE_SIM_FORMATS)
    if fmt == "json":
        sim = run.simulation
        return jsonout.dumps({
            "truth": run.truth, "pool_version": run.pool_version, "runs": list(sim.runs),
            "frame_size": sim.frame_size, "topics": sim.n_topics, "repeats": sim.repeats,
            "base_design": sim.base.as_dict(),
            "budgets": [{"percent": b.percent, "judgments": b.judgments, "design": b.design.as_dict(),
                         "mean_sampled": b.mean_sampled,
                         "tau": {str(k): dict(v) for k, v in b.tau.items()}} for b in sim.budgets],
            "rows": simulation_rows(run)}, indent=2, ensure_ascii=False) + "\n"
    head, rows = _rows_text(run)
    thead, trows = _tau_rows(run)
    if fmt == "markdown":
        return "\n".join(["\n".join(f"{line}  " for line in _head(run)), "", _markdown(head, rows), "",
                          "Kendall's tau-b of the run ordering by the estimate against the truth's, mean over the "
                          "repeats:", "", _markdown(thead, trows)]) + "\n"
    return "\n".join([*_head(run), table(head, rows), "Kendall's tau-b of the run ordering by the estimate against "
                      "the truth's, mean over the repeats:", table(thead, trows)]) + "\n"


def _markdown(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
