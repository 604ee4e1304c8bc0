"""Rendering of vector-index reports: index stats, ANN-recall, the ANN sweep table and chart.

Every report that shows ANN-recall next to R@k labels both denominators:
ANN-recall@k divides by the exact top-k of the same embeddings and metric;
R@k divides by the judged-relevant documents of a qrels version. Numbers are
rounded here only, for display; JSON keeps full precision with numerators and
denominators.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench import jsonout
from workbench.reports.format import _delimited, _json_number, check_format, number, table
from workbench.scoring.ann_recall import DENOMINATOR, AnnRecall

if TYPE_CHECKING:
    from workbench.services.vectors.ann import AnnSweep
    from workbench.store.ann import AnnIndexStats


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _qps(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def stats_line(s: AnnIndexStats) -> str:
    """One line: index kind, parameters, build time, size, latency and QPS."""
    params = ", ".join(f"{k}={v}" for k, v in sorted(s.index_params.items())) or "no parameters"
    threads = f", {s.threads} build thread(s)" if s.threads is not None else ""
    faiss = f", faiss {s.faiss_version}" if s.faiss_version else ""
    return (f"index {s.index_kind} ({params}) over {s.n_vectors:,} x {s.dim}-d vectors, {s.metric}: built in "
            f"{s.build_ms / 1000:.2f} s{threads}{faiss}, {s.index_bytes / 1e6:.2f} MB; {s.n_queries:,} queries "
            f"timed one by one (query encoding excluded): p50 {_ms(s.latency_p50_ms)} ms, p95 "
            f"{_ms(s.latency_p95_ms)} ms, {_qps(s.qps)} QPS")


def stats_json(s: AnnIndexStats | None) -> dict[str, Any] | None:
    """The stats as a JSON-ready dict (None stays None)."""
    if s is None:
        return None
    return {"index": s.index_kind, "params": s.index_params, "metric": s.metric, "n_vectors": s.n_vectors,
            "dim": s.dim, "build_ms": s.build_ms, "index_bytes": s.index_bytes, "threads": s.threads,
            "faiss_version": s.faiss_version, "n_queries": s.n_queries, "latency_p50_ms": s.latency_p50_ms,
            "latency_p95_ms": s.latency_p95_ms, "qps": s.qps}


def _ann_json(a: AnnRecall, *, per_topic: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "measure": a.name, "denominator": DENOMINATOR, "k": a.k, "macro": _json_number(a.macro),
        "micro": _json_number(a.micro), "macro_with_ties": _json_number(a.macro_with_ties), "sum_numerator": a.sum_numerator, "sum_denominator": a.sum_denominator,
        "n_topics": a.n_topics, "n_boundary_ties": a.n_boundary_ties, "n_tied_outside": a.n_tied_outside,
        "n_missing": a.n_missing, "excluded": list(a.excluded), "n_extra": a.n_extra,
    }
    if per_topic:
        out["per_topic"] = [{"topic_id": t.topic_id, "value": t.value, "numerator": t.numerator,
                             "denominator": t.denominator, "boundary_tie": t.boundary_tie,
                             "tied_outside": t.tied_outside, "missing": t.missing} for t in a.topics]
    return out


def render_ann_recall(run: str, reference: str, results: list[AnnRecall], stats: AnnIndexStats | None,
                      fmt: str = "table", *, per_topic: bool = False) -> str:
    """ANN-recall@k of one run for several k: a table with its denominator spelled out, or JSON/CSV/TSV.

    Args:
        run: the approximate run; reference: the exact run.
        results: one ``AnnRecall`` per k.
        stats: the run's index stats, when stored.
        fmt: ``table`` | ``json`` | ``jsonl`` | ``csv`` | ``tsv``.
        per_topic: add the per-topic rows (table: topics with a miss or a boundary tie; JSON: all).
    """
    fmt = check_format(fmt)
    if fmt in ("json", "jsonl"):
        doc = {"run": run, "reference_run": reference, "index": stats_json(stats),
               "results": [_ann_json(a, per_topic=per_topic or fmt == "json") for a in results]}
        return jsonout.dumps(doc, indent=2 if fmt == "json" else None)
    if fmt in ("csv", "tsv"):
        flat = [{"run": run, "reference_run": reference, "measure": a.name, "macro": a.macro, "micro": a.micro,
                 "sum_numerator": a.sum_numerator, "sum_denominator": a.sum_denominator, "n_topics": a.n_topics,
                 "n_boundary_ties": a.n_boundary_ties, "n_tied_outside": a.n_tied_outside,
                 "n_missing": a.n_missing} for a in results]
        return _delimited(flat, "," if fmt == "csv" else "\t").rstrip("\n")
    lines = [f"ANN-recall of run {run} against the exact run {reference}",
             f"  denominator of ANN-recall@k: {DENOMINATOR}"]
    if stats is not None:
        lines.append("  " + stats_line(stats))
    head = ["measure", "macro", "micro", "hits/neighbours", "topics", "ties at k", "tie swaps", "macro with swaps",
            "missing"]
    body = [[a.name, number(a.macro), number(a.micro), f"{a.sum_numerator:,}/{a.sum_denominator:,}",
             str(a.n_topics), str(a.n_boundary_ties), str(a.n_tied_outside), number(a.macro_with_ties),
             str(a.n_missing)] for a in results]
    lines += ["  " + s for s in table(head, body).splitlines()]
    lines.append("  ties at k: topics whose exact k-th and (k+1)-th neighbours score the same; the exact top-k is cut "
                 "by the ordering rule (score desc, doc_id desc). tie swaps: approximate top-k documents outside the "
                 "exact top-k that score the same as its k-th (not index errors); macro with swaps counts them as found.")
    if any(a.excluded for a in results):
        lines.append(f"  excluded (the exact run has no neighbours): {', '.join(results[0].excluded)}")
    if per_topic:
        for a in results:
            shown = [t for t in a.topics if t.numerator < t.denominator or t.boundary_tie]
            if not shown:
                continue
            lines.append(f"  {a.name} per topic (topics with a miss or a tie at k):")
            rows = [[t.topic_id, f"{t.numerator}/{t.denominator}", number(t.value), "yes" if t.boundary_tie else "",
                     str(t.tied_outside) if t.tied_outside else ""] for t in shown]
            lines += ["    " + s for s in table(["topic", "hits", "value", "tie at k", "tie swaps"], rows).splitlines()]
    return "\n".join(lines)


def sweep_headers(sweep: AnnSweep) -> list[str]:
    """Column names of the sweep table, each naming its denominator."""
    k, q = sweep.k, sweep.qrels.name
    return ["setting", f"ANN-recall@{k} [vs exact top-{k}]", f"R@{k} [qrels {q}] approx", f"R@{k} exact",
            "R lost", "ties", "build s", "MB", "p50 ms", "p95 ms", "QPS", "diagnosis"]


def sweep_rows(sweep: AnnSweep) -> list[list[str]]:
    """The sweep table's cells, one row per setting then the exact reference."""
    rows = []
    for r, verdict, lost in zip(sweep.rows, sweep.diagnosis.verdicts, sweep.diagnosis.lost, strict=True):
        s = r.stats
        setting = " ".join(f"{k}={v}" for k, v in sorted(r.params.items()))
        if r.effective != r.params:
            setting += " (eff. " + " ".join(f"{k}={v}" for k, v in sorted(r.effective.items())
                                           if r.params.get(k) != v) + ")"
        rows.append([setting, number(r.ann.macro), number(r.recall), number(sweep.exact_recall), f"{lost:+.4f}",
                     str(r.ann.n_boundary_ties), "-" if s is None else f"{s.build_ms / 1000:.2f}",
                     "-" if s is None else f"{s.index_bytes / 1e6:.2f}",
                     _ms(None if s is None else s.latency_p50_ms), _ms(None if s is None else s.latency_p95_ms),
                     _qps(None if s is None else s.qps), verdict])
    e = sweep.exact_stats
    rows.append([f"exact ({sweep.reference})", "1.0000", number(sweep.exact_recall), number(sweep.exact_recall),
                 "+0.0000", "-", "-", "-" if e is None else f"{e.index_bytes / 1e6:.2f}",
                 _ms(None if e is None else e.latency_p50_ms), _ms(None if e is None else e.latency_p95_ms),
                 _qps(None if e is None else e.qps), "reference"])
    return rows


def render_sweep(sweep: AnnSweep, fmt: str = "table") -> str:
    """The ANN sweep: a table (with both denominators labelled and the diagnosis) or JSON/CSV/TSV."""
    fmt = check_format(fmt)
    k = sweep.k
    if fmt in ("json", "jsonl"):
        doc = {
            "collection": sweep.collection, "collection_version": sweep.collection_version, "model": sweep.model,
            "index": sweep.index, "k": k, "depth": sweep.depth, "qrels": sweep.qrels.name,
            "denominators": {f"ANN-recall@{k}": DENOMINATOR,
                             f"R@{k}": f"judged-relevant documents of qrels {sweep.qrels.name}"},
            "reference_run": sweep.reference, "exact_recall": _json_number(sweep.exact_recall),
            "exact_ceiling": _json_number(sweep.exact_ceiling), "exact_index": stats_json(sweep.exact_stats),
            "n_topics": sweep.n_topics,
            "settings": [{"run": r.run, "params": r.params, "effective_params": r.effective, "reused": r.reused,
                          "ann_recall": _ann_json(r.ann, per_topic=False), "recall": _json_number(r.recall),
                          "recall_lost": lost, "index": stats_json(r.stats), "diagnosis": v}
                         for r, v, lost in zip(sweep.rows, sweep.diagnosis.verdicts, sweep.diagnosis.lost,
                                               strict=True)],
            "diagnosis": list(sweep.diagnosis.lines),
        }
        return jsonout.dumps(doc, indent=2 if fmt == "json" else None)
    heads = sweep_headers(sweep)
    cells = sweep_rows(sweep)
    if fmt in ("csv", "tsv"):
        return _delimited([dict(zip(heads, r, strict=True)) for r in cells], "," if fmt == "csv" else "\t").rstrip()
    lines = [f"ANN sweep: {sweep.index} over {sweep.collection} (version {sweep.collection_version[:12]}), model "
             f"{sweep.model}, k {k}, depth {sweep.depth}, {sweep.n_topics} topics, exact reference {sweep.reference}",
             f"  ANN-recall@{k} denominator: {DENOMINATOR}",
             f"  R@{k} denominator: the judged-relevant documents of qrels {sweep.qrels.name} (semantic recall; "
             f"mean achievable {number(sweep.exact_ceiling)})"]
    lines += ["  " + s for s in table(heads, cells).splitlines()]
    lines.append(f"  R lost = R@{k} exact - R@{k} approx; ties: topics with a tie across the k boundary in the exact "
                 "run (cut by score desc, doc_id desc); latency per query, search only; runs stored as "
                 + ", ".join(r.run for r in sweep.rows[:2]) + (", ..." if len(sweep.rows) > 2 else ""))
    if any(r.reused for r in sweep.rows):
        lines.append("  (settings already stored were reused with their stored latency)")
    lines.append("  diagnosis (shared/seeds/004):")
    lines += ["    " + s for s in sweep.diagnosis.lines]
    return "\n".join(lines)


def sweep_chart(sweep: AnnSweep) -> Any:
    """An altair chart: ANN-recall@k and R@k of each setting against the swept parameter, exact R@k as a rule.

    The x axis is the first parameter whose value changes across the settings
    (log scale); latency is left to the table (on a shared machine it is noisy).
    """
    import altair as alt

    k = sweep.k
    names = sorted(sweep.rows[0].params) if sweep.rows else []
    varying = [n for n in names if len({r.params[n] for r in sweep.rows}) > 1] or names[:1]
    x_name = varying[0] if varying else "setting"
    pts: list[dict[str, Any]] = []
    for r in sweep.rows:
        x = r.params.get(x_name, 0)
        pts += [{"x": x, "value": r.ann.macro, "series": f"ANN-recall@{k} (vs exact top-{k})"},
                {"x": x, "value": r.recall, "series": f"R@{k} approx (qrels {sweep.qrels.name})"}]
    x_axis = alt.X("x:Q", title=f"{x_name} ({sweep.index})", scale=alt.Scale(type="log", base=2))
    lines = alt.Chart(alt.Data(values=pts)).mark_line(point=True).encode(
        x=x_axis, y=alt.Y("value:Q", title="recall (macro)", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("series:N", title=None))
    rule = alt.Chart(alt.Data(values=[{"value": sweep.exact_recall,
                                       "series": f"R@{k} exact (qrels {sweep.qrels.name})"}])).mark_rule(
        strokeDash=[4, 4]).encode(y="value:Q", color=alt.Color("series:N", title=None))
    return alt.layer(lines, rule).properties(
        title=f"{sweep.index} on {sweep.collection}: ANN-recall@{k} and R@{k} by {x_name}", width=520, height=320)
