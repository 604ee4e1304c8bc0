"""Rendering of estimates from a judged sample (``workbench score --qrels SAMPLE_VERSION``): rounding only.

Beside each run's usual table (the pooled values: unjudged documents count as
non-relevant), a table of the estimated measures with their 95% intervals and
the judgments behind them::

    run bm25: estimated from sample cranfield-s20: 214 topics averaged ...
    measure       pooled   estimate  95% interval       topics  judged
    R̂@20         0.7300     0.5200  [0.4700, 0.5700]      214   7,923
    R̂@20 (micro) 0.7167     0.5000  [0.4600, 0.5500]      214   7,923
    R̂@20 (EB, model-based) ...

``estimate_json`` and ``estimate_long_rows`` give the same numbers at full
precision for ``--format json`` and the long formats (``jsonl``, ``csv``,
``tsv``: columns ``low``, ``high`` and ``n_judged`` are added to every row).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.reports.format import _ids, _json_number, number, table
from workbench.scoring.estimate_run import (
    AGGREGATE_LABELS,
    EstimatedValue,
    RunEstimate,
    display_name,
)

LONG_COLUMNS = ("low", "high", "n_judged")
"""The columns a long-form score report gains when its qrels are a sample's."""


def sample_header_lines(block: Mapping[str, Any] | None) -> list[str]:
    """The header's ``sample`` and ``estimator`` lines ([] when the qrels are not a sample's)."""
    if not block:
        return []
    judged = f"{block.get('judged', 0):,} of {block.get('sampled', 0):,} sampled documents judged"
    if block.get("unjudged"):
        judged += f" ({block['unjudged']:,} not yet, in {block.get('unjudged_topics', 0):,} topics)"
    return [f"sample     pool {block.get('pool_version')} of runs {', '.join(block.get('runs', []))}: "
            f"{block.get('design_text')}; {judged}",
            f"estimator  {block.get('estimator')}"]


def _interval(v: EstimatedValue) -> str:
    if math.isnan(v.low) or math.isnan(v.high):
        return "-"
    return f"[{number(v.low)}, {number(v.high)}]"


def estimate_table(est: RunEstimate, pool_version: str) -> str:
    """One run's estimates as a titled table, with its undefined and zero-R̂ topics listed."""
    title = (f"run {est.run}: estimated from sample {pool_version}: {len(est.averaged):,} topics averaged "
             f"(R̂ > 0)")
    rows = [[display_name(v.name) + AGGREGATE_LABELS.get(v.aggregate, f" ({v.aggregate})"),
             number(v.pooled), number(v.value), _interval(v), f"{v.n_topics:,}", f"{v.n_judged:,}"]
            for v in est.values]
    lines = [title, table(["measure", "pooled", "estimate", "95% interval", "topics", "judged"], rows)]
    eb = [v for v in est.values if v.aggregate == "macro-eb"]
    if eb:
        lines.append(f"EB         R̂@k (EB, model-based): empirical-Bayes macro over the {eb[0].n_topics:,} topics with an "
                     "expected |R| > 0: each stratum's relevance rate per topic shrunk toward the rate over all "
                     "topics (beta-binomial); valid if that model holds, not by the design; interval: bootstrap of "
                     "the model over topics (docs/sampling.md)")
    if est.undefined:
        lines.append(f"undefined  {len(est.undefined):,} topic(s) with a non-empty stratum that has no judged document "
                     f"(left out of the estimates): {_ids(tuple(est.undefined))}")
    if est.no_relevant:
        lines.append(f"R̂ = 0     {len(est.no_relevant):,} topic(s) whose sample holds no judged relevant document "
                     f"(left out, as |R| = 0 is for R@k): {_ids(est.no_relevant)}")
    missed = {k: n for k, n in est.unsampleable.items() if n}
    if missed:
        lines.append("unsampled  documents of the top k outside every stratum (the design has no outside stratum: "
                     "counted as non-relevant, not estimable): "
                     + ", ".join(f"@{k}: {n:,}" for k, n in sorted(missed.items())))
    return "\n".join(lines)


def estimate_json(est: RunEstimate, *, per_topic: bool = False) -> dict[str, Any]:
    """One run's estimates as JSON (full precision): measure -> aggregate -> estimate, low, high, se, n_topics,
    n_judged, pooled; the undefined and zero-R̂ topics; per topic when asked."""
    values: dict[str, dict[str, Any]] = {}
    for v in est.values:
        values.setdefault(v.name, {})[v.aggregate] = {
            "estimate": _json_number(v.value), "low": _json_number(v.low), "high": _json_number(v.high),
            "se": _json_number(v.se), "n_topics": v.n_topics, "n_judged": v.n_judged,
            "pooled": _json_number(v.pooled)}
    out: dict[str, Any] = {"measures": values, "averaged_topics": len(est.averaged),
                           "undefined_topics": dict(est.undefined), "no_relevant_topics": list(est.no_relevant),
                           "unsampleable": {str(k): n for k, n in est.unsampleable.items()}}
    if per_topic:
        out["per_topic"] = {t: _topic_json(est, t) for t in est.topics}
    return out


def _topic_json(est: RunEstimate, t: str) -> dict[str, Any]:
    e = est.topics[t]
    return {"defined": e.defined, "why": e.why, "r_hat": _json_number(e.r_hat), "n_judged": e.n_judged,
            "recall": {str(k): _json_number(v) for k, v in e.recall.items()},
            "recall_se": {str(k): _json_number(math.sqrt(v) if v >= 0 else math.nan) for k, v in e.recall_var.items()},
            "precision": {str(k): _json_number(v) for k, v in e.precision.items()},
            "xinfAP": _json_number(e.xinfap), "infNDCG": {str(k): _json_number(v) for k, v in e.infndcg.items()},
            "infAP": _json_number(est.infap.get(t, math.nan))}


def estimate_long_rows(est: RunEstimate, lineage: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One run's estimates in the long form of ``--format jsonl/csv/tsv``: one row per measure and aggregate
    (``Rhat@20`` macro, micro and macro-eb, ``Phat@10``, ``xinfAP``, ``infNDCG@10``, ``infAP``), with ``low``, ``high`` and
    ``n_judged``; ``numerator`` / ``denominator``: the sum of the topics' values / topics (macro), the summed
    R̂_k / summed R̂ (micro); macro-eb as macro, over its topics."""
    rows = []
    for v in est.values:
        if v.aggregate == "micro":
            k = int(v.name.partition("@")[2])
            num = sum(est.topics[t].hits[k] for t in est.averaged)
            den = sum(est.topics[t].r_hat for t in est.averaged)
        else:
            num = v.value * v.n_topics if v.n_topics else math.nan
            den = float(v.n_topics)
        rows.append({"run": est.run, "measure": v.name, "aggregate": v.aggregate, "value": _json_number(v.value),
                     "numerator": _json_number(num), "denominator": _json_number(den), "n_topics": v.n_topics,
                     **lineage, "low": _json_number(v.low), "high": _json_number(v.high), "n_judged": v.n_judged})
    return rows


def estimates_for(estimates: Sequence[RunEstimate], run: str) -> RunEstimate | None:
    """The estimates of ``run`` (None when there are none)."""
    return next((x for x in estimates if x.run == run), None)
