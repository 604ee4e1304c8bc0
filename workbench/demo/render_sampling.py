"""Rendering of the demo's sampled-judging section (``demo.sampling``): rounding only."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from workbench.reports.format import number, table

if TYPE_CHECKING:
    from workbench.demo.sampling import SamplingDemo
    from workbench.scoring.estimate_run import EstimatedValue


def _interval(v: EstimatedValue) -> str:
    return "-" if math.isnan(v.low) else f"[{number(v.low)}, {number(v.high)}]"


def _holds(v: EstimatedValue, truth: float) -> bool:
    return not math.isnan(v.low) and v.low <= truth <= v.high


def sampling_demo_lines(s: SamplingDemo) -> list[str]:
    """The section: R@k of the runs on the pooled qrels, on the full judgments and estimated from the sample."""
    k = s.k
    strata = s.design.spec()
    runs = ",".join(r.run for r in s.rows)
    out = [f"Sampled judging: R@{k} estimated from a stratified sample of {s.n_sampled:,} judgments ({s.n_new:,} "
           f"judged now), beside the pooled and the full values",
           f"  sample {s.pool.pool_version}: the depth-{s.design.depth} pool of {', '.join(r.run for r in s.rows)} "
           f"({s.frame_size:,} documents) and the collection outside it; {s.design.describe()}; qrels "
           f"{s.qrels.name} ({s.qrels.n_entries:,} judgments, {s.qrels.n_relevant:,} relevant)"]
    rows = [[r.run, number(r.pooled), number(r.full), number(r.macro.value), _interval(r.macro), number(r.full_micro),
             number(r.micro.value), _interval(r.micro)] for r in s.rows]
    out += ["  " + line for line in table(
        ["run", "pooled", "full", f"R̂@{k} macro", "95% interval", "full micro", f"R̂@{k} micro", "95% interval"],
        rows).splitlines()]
    macro_in = sum(_holds(r.macro, r.full) for r in s.rows)
    micro_in = sum(_holds(r.micro, r.full_micro) for r in s.rows)
    out += [f"  {s.n_topics} topics (those scored on {s.pooled_qrels}); pooled = {s.pooled_qrels} (unjudged = "
            f"non-relevant), full = {s.full_qrels}; R̂@{k} = R̂_{k} / R̂ (Horvitz-Thompson: each judged document "
            "stands for 1 / its inclusion probability), macro = mean of per-topic ratios, micro = sum R̂_k / sum R̂",
            f"  the 95% interval holds the full value for {macro_in} of {len(s.rows)} runs (macro) and {micro_in} of "
            f"{len(s.rows)} (micro). Macro is biased up when a topic's sample holds few relevant documents from the "
            "low-rate strata (its R̂ is then usually too small); micro pools every topic's sample into one ratio: "
            "bench/results/sampling.md measures both over 200 draws",
            f"  the 1-{s.design.strata[0].hi} stratum is pools v1 and v2, judged already: only the deeper and outside "
            "documents are new judgments",
            f"  commands: workbench pool sample {s.pool.pool_version} --runs {runs} --depth {s.design.depth} "
            f"--strata {strata} --outside {s.design.outside_rate!r} --seed {s.design.seed}; judge it (assign, the "
            f"Judge page); workbench publish {s.pool.pool_version} --name {s.qrels.name}; workbench score "
            f"{' '.join(r.run for r in s.rows)} --qrels {s.qrels.name}"]
    return out
