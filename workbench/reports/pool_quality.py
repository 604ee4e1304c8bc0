"""Rendering of pool-quality analyses: leave-one-run-out and pool bias (rounding happens here only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench import jsonout
from workbench.reports.format import number, table

if TYPE_CHECKING:
    from pooling.reusability import LeaveOneOut
    from workbench.services.runs.pool_quality import BiasResult, ReusabilityReport


TAU_HEADERS = ("tau, it rescored", "its place changed", "tau, all rescored", "runs moved")
"""The columns of the two taus, shared with the demo's table (``tau_cells``)."""

TAU_NOTE = ("  tau, it rescored: Kendall's tau-b between the run ordering on the full qrels and the one with only "
            "the left-out run scored on the reduced qrels (had it not been pooled, would it land in the same place?)",
            "  tau, all rescored: the same with every run scored on the reduced qrels (do they order the runs as "
            "the full qrels do?); runs moved: the runs whose place differs in that ordering (ties by name)")
"""The footnote lines that say which tau is which (``pooling.reusability``)."""


def tau_cells(r: LeaveOneOut) -> list[str]:
    """The cells under ``TAU_HEADERS`` for one left-out run."""
    return [f"{r.tau:.3f}", "yes" if r.order_changed else "no", f"{r.tau_all:.3f}",
            ", ".join(r.moved_all) or "none"]


def reusability_lines(rep: ReusabilityReport) -> list[str]:
    """The leave-one-run-out table with its header lines (no trailing blank line)."""
    rows = [[r.run, f"{r.n_unique:,}", f"{r.n_unique_relevant:,}", number(r.full), number(r.reduced),
             f"{r.drop:+.4f}", *tau_cells(r), str(len(r.topics)), str(len(r.excluded))] for r in rep.rows]
    out = [f"Leave-one-run-out on {rep.qrels_version} ({rep.measure}): each run rescored without the "
           f"documents only it contributed to {rep.pool_version}"]
    out += ["  " + s for s in table(["run", "unique docs", "unique relevant", "full", "left out", "drop",
                                     *TAU_HEADERS, "topics", "excluded"], rows).splitlines()]
    out += TAU_NOTE
    n_ex = sum(1 for r in rep.rows if r.excluded)
    out.append("  excluded: topics whose relevant documents all came from the left-out run (|R| = 0 without "
               f"it), left out of that run's averages, never scored 0 ({n_ex} of {len(rep.rows)} runs had some)")
    return out


def render_reusability(rep: ReusabilityReport, fmt: str = "table") -> str:
    """Leave-one-run-out as a table, TSV or JSON (full precision in JSON).

    JSON and TSV carry both taus: ``tau`` (only the left-out run rescored) with
    ``order_changed`` (its place changed), and ``tau_all`` (every run rescored)
    with ``moved_all`` (the runs whose place changed; comma-separated in TSV);
    JSON adds ``left_out_all``, every run's value on the reduced qrels.
    """
    if fmt == "json":
        return jsonout.dumps({
            "pool": rep.pool_version, "qrels": rep.qrels_version, "measure": rep.measure,
            "missing_runs": list(rep.missing_runs),
            "runs": [{"run": r.run, "unique_documents": r.n_unique, "unique_relevant": r.n_unique_relevant,
                      "full": r.full, "left_out": r.reduced, "drop": r.drop, "tau": r.tau,
                      "order_changed": r.order_changed, "tau_all": r.tau_all, "moved_all": list(r.moved_all),
                      "left_out_all": dict(r.reduced_all), "topics": len(r.topics),
                      "excluded_topics": list(r.excluded)} for r in rep.rows],
        })
    if fmt == "tsv":
        head = ("run\tunique_documents\tunique_relevant\tfull\tleft_out\tdrop\ttau\torder_changed\ttau_all\t"
                "moved_all\ttopics\texcluded")
        return "\n".join([head] + [
            f"{r.run}\t{r.n_unique}\t{r.n_unique_relevant}\t{r.full!r}\t{r.reduced!r}\t{r.drop!r}\t{r.tau!r}\t"
            f"{str(r.order_changed).lower()}\t{r.tau_all!r}\t{','.join(r.moved_all)}\t{len(r.topics)}\t"
            f"{len(r.excluded)}" for r in rep.rows])
    return "\n".join(reusability_lines(rep))


def bias_lines(res: BiasResult) -> list[str]:
    """The pool-bias table with its header lines."""
    rep = res.report
    rows = [[r.run, number(r.pooled), number(r.full), f"{r.gap:+.4f}"] for r in rep.rows]
    out = [f"Pool bias: {rep.measure} on pooled {res.pooled_version} against {res.full_version} "
           f"(same {len(rep.topics)} topics; {len(rep.excluded)} with relevant documents in only one of them left out)"]
    out += ["  " + s for s in table(["run", "pooled", "full", "gap"], rows).splitlines()]
    out.append("  the gap is recall the pool cannot see: relevant documents no pooled run ranked within the depth")
    return out


def render_bias(res: BiasResult, fmt: str = "table") -> str:
    """Pool bias as a table, TSV or JSON."""
    rep = res.report
    if fmt == "json":
        return jsonout.dumps({"pooled": res.pooled_version, "full": res.full_version, "measure": rep.measure,
                           "topics": len(rep.topics), "excluded_topics": list(rep.excluded),
                           "runs": [{"run": r.run, "pooled": r.pooled, "full": r.full, "gap": r.gap}
                                    for r in rep.rows]})
    if fmt == "tsv":
        return "\n".join(["run\tpooled\tfull\tgap"] + [f"{r.run}\t{r.pooled!r}\t{r.full!r}\t{r.gap!r}"
                                                       for r in rep.rows])
    return "\n".join(bias_lines(res))
