"""Rendering of scores, comparisons and miss lists: the only place numbers are rounded.

Formats (``--format``):

* ``table``: for people; values with 4 decimals, a header block with the
  lineage (qrels version and hash, collection version, runs, evaluator version,
  threshold, missing-topic policy, topic counts) and one table per run.
* ``json``: one document, full precision, header included.
* ``jsonl`` / ``csv`` / ``tsv``: long form, one row per (run, measure,
  aggregate or topic) with numerator, denominator and lineage columns, full
  precision (``repr`` of floats), for scripts and spreadsheets. Exactly one of
  ``aggregate`` (``macro``, ``micro``, ..., ``KEY=VALUE``) and ``topic_id`` is
  non-empty, so a topic named ``macro`` never reads as the mean.
* ``parquet``: the same long form as a Parquet file (``write_scores_parquet``;
  binary, so written to a file, never to stdout), values as float64 with null
  where there is no value.

Charts: ``recall_curve_chart`` draws R@k for k = 1..depth per run (macro) with
the ceiling, so the elbow is visible; ``save_chart`` writes PNG (via
vl-convert, no browser or network), SVG, JSON or self-contained HTML.

Inputs are plain data (``scoring.evaluate.Evaluation``, ``scoring.compare.Comparison``
and a header mapping), so this module depends on no service.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import jsonout
from workbench.scoring.measures import RBP, R, RBPResidual
from workbench.scoring.results import Evaluation, ValueRow, aggregate_rows, topic_rows

if TYPE_CHECKING:
    from workbench.scoring.estimate_run import RunEstimate
    from workbench.scoring.slices import SliceKey, SliceRow
from workbench.reports.format import (
    _delimited,
    _ids,
    _json_number,
    _percent,
    check_format,
    number,
    share_text,
    table,
)

_MISSING_TEXT = {
    "fail": "fail (a run without results for a qrels topic stops the command)",
    "zero": "zero (qrels topics without results score 0 on every measure, Judged@k too)",
    "exclude": "exclude (qrels topics without results are left out of the averages)",
}


def _header_lines(header: Mapping[str, Any], evaluations: Sequence[Evaluation]) -> list[str]:
    q = header.get("qrels", {})
    lines = []
    if header.get("notice"):
        lines.append(str(header["notice"]))
    qdesc = f"{q.get('name', '?')} ({q.get('origin', '?')}, sha256 {str(q.get('content_hash', ''))[:12]}"
    if q.get("collection"):
        qdesc += f"; collection {q['collection']} version {str(q.get('collection_version', ''))[:12]}"
    qdesc += f"; {q.get('n_topics', 0):,} topics, {q.get('n_entries', 0):,} judgments)"
    lines.append(f"qrels      {qdesc}")
    if header.get("sample"):
        from workbench.reports.estimates import sample_header_lines

        lines += sample_header_lines(header["sample"])
    for r in header.get("runs", []):
        desc = f"{r['name']} ({r['origin']}"
        if r.get("origin") == "file":
            desc += f" {r['location']}"
        if r.get("collection_version"):
            desc += f"; collection version {str(r['collection_version'])[:12]}"
        desc += f"; {r.get('n_lines', 0):,} lines"
        if r.get("content_hash"):
            desc += f"; sha256 {str(r['content_hash'])[:12]}"
        if r.get("status_file"):
            desc += f"; statuses from {r['status_file']}"
        lines.append(f"run        {desc})")
    commit = f" (git {str(header['git_commit'])[:12]}{'-dirty' if str(header['git_commit']).endswith('-dirty') else ''})" \
        if header.get("git_commit") else ""
    lines.append(f"evaluator  {header.get('evaluator_version', '?')}{commit}")
    if header.get("topic_set"):
        protected = "; protected: this use is recorded" if header.get("topic_set_protected") else ""
        lines.append(f"topic set  {header['topic_set']}{protected}")
    rel = header.get("rel", 1)
    lines.append(f"relevant   grade >= {rel} (inclusive; negative grades never relevant; unjudged = non-relevant)")
    lines.append(f"missing    {_MISSING_TEXT.get(str(header.get('missing')), header.get('missing'))}")
    if header.get("trust_file_order"):
        lines.append("order      run files ordered by their rank column (--trust-file-order)")
    else:
        lines.append("order      score descending, ties by doc_id descending (trec_eval)")
    lines += completion_lines(header.get("completion", []))
    lines += audit_lines(header.get("id_audit", []), str(header.get("id_audit_note", "")))
    if evaluations:
        e = evaluations[0]
        lines.append(
            f"topics     {len(e.topics):,} evaluated (every measure and run averaged over the same topics); "
            f"{len(e.excluded_topics):,} excluded with |R| = 0"
            + (f" ({_ids(e.excluded_topics)})" if e.excluded_topics else "")
        )
        for ev in evaluations:
            if ev.missing_topics:
                lines.append(f"missing    run {ev.run_name}: {len(ev.missing_topics):,} topic(s) ({_ids(ev.missing_topics)})")
    if header.get("evaluation_ids"):
        lines.append(f"recorded   evaluation id(s) {', '.join(header['evaluation_ids'])}")
    for w in header.get("warnings", []):
        lines.append(f"warning    {w}")
    return lines


def completion_lines(completion: Sequence[Mapping[str, Any]]) -> list[str]:
    """``complete`` lines: per run, topics answered of the eligible ones, failures by status."""
    lines = []
    for c in completion:
        text = f"complete   {c['run']}: {share_text(c['ok'], c['n_topics'])} eligible topics answered"
        if c["error"] or c["empty"]:
            text += f"; {c['error']:,} error, {c['empty']:,} empty"
            shown = [f"{t} ({status}{': ' + msg if msg else ''})" for t, status, msg, _ in c["failures"][:3]]
            text += f" (e.g. {', '.join(shown)}{' ...' if len(c['failures']) > 3 else ''})"
        lines.append(text)
    return lines


def audit_lines(audits: Sequence[Mapping[str, Any]], note: str) -> list[str]:
    """``ID audit`` lines: coverage of the judged-relevant and the run ids, missing ids and near misses."""
    lines = []
    for a in audits:
        rel = a["relevant"]
        parts = [f"judged-relevant ids {share_text(rel['n_present'], rel['n_ids'])}"]
        parts += [f"{r['what']} ids {share_text(r['n_present'], r['n_ids'])}" for r in a["runs"]]
        lines.append(f"ID audit   collection {a['collection']} version {str(a['collection_version'])[:12]}: "
                     + "; ".join(parts))
        for c in [rel, *a["runs"]]:
            if c["missing"]:
                near = {d: (rule, matches) for d, rule, matches in c["near_misses"]}
                shown = [f"{d} (near miss, {near[d][0]}: {', '.join(near[d][1])})" if d in near else d
                         for d in c["missing"][:10]]
                more = f", ... {len(c['missing']) - 10:,} more" if len(c["missing"]) > 10 else ""
                lines.append(f"ID audit   {c['what']}: {len(c['missing']):,} id(s) not in the collection: "
                             f"{', '.join(shown)}{more}")
    if note:
        lines.append(f"ID audit   {note}")
    return lines


def _run_table(e: Evaluation, pool_depth: int = 0, eligibility: Mapping[str, Any] | None = None) -> str:
    """The run's measures; for a pool contributor (``pool_depth`` > 0) a last column marks each
    R@k with k >= the depth it was pooled at; with ``eligibility`` a column of leaks within each R@k's k."""
    rows = []
    leaks_at = (eligibility or {}).get("leaks", {}).get("at_k", {}) if eligibility else {}
    for m in e.measures:
        a = e.aggregates[m]
        novel = high = "-"
        if isinstance(m, R) and m.cutoff in e.novelty:
            nov = e.novelty[m.cutoff]
            novel = f"{nov.total_unjudged:,} ({_percent(nov.unjudged_share)})"
            high = number(nov.macro_high)
        micro = f"{a.micro:,.0f}" if m.IS_COUNT and a.micro is not None and math.isfinite(a.micro) else number(a.micro)
        row = [str(m), number(a.macro), micro, number(a.ceiling), novel, high]
        if pool_depth:
            row.append(f"pool depth {pool_depth}" if isinstance(m, R) and m.cutoff >= pool_depth else "")
        if eligibility is not None:
            row.append(str(leaks_at.get(str(m.cutoff), "-")) if isinstance(m, R) else "-")
        rows.append(row)
    head = ["measure", "macro", "micro", "ceiling", "pool-novel", "if novel relevant"]
    if pool_depth:
        head.append("pooled")
    if eligibility is not None:
        head.append("leaks@k")
    notes = _measure_notes(e)
    return table(head, rows) + ("\n" + "\n".join(notes) if notes else "")


def _measure_notes(e: Evaluation) -> list[str]:
    """Lines under a run's table for the measures that need them: RBP's range with its residual; counts."""
    notes = []
    for m in e.measures:
        if isinstance(m, RBP):
            residual = e.aggregates.get(RBPResidual(m.cutoff, p=m.p))
            if residual is not None:
                low = e.aggregates[m].macro
                notes.append(f"{m}: {number(low)} over the judged documents, at most {number(low + residual.macro)} "
                             "with its residual (every unjudged document and every rank beyond the run's depth "
                             "relevant; Moffat & Zobel 2008)")
    counts = [str(m) for m in e.measures if m.IS_COUNT]
    if counts:
        notes.append(f"{', '.join(counts)}: counts per topic; macro = their mean, micro = their total over the "
                     "topics (trec_eval's 'all' line)")
    return notes


def _contributors(header: Mapping[str, Any]) -> dict[str, tuple[int, list[str]]]:
    """run name -> (pool depth, pool versions) of the runs that built the qrels' pool (from the header)."""
    return {r["name"]: (int(r["pool_depth"]), list(r.get("pools", ()))) for r in header.get("runs", [])
            if r.get("pool_depth")}


def _run_eligibility(header: Mapping[str, Any], run: str) -> Mapping[str, Any] | None:
    block = header.get("eligibility")
    if not isinstance(block, Mapping):
        return None
    runs = block.get("runs", {})
    return runs.get(run) if isinstance(runs, Mapping) else None


def _eligibility_lines(header: Mapping[str, Any], limit: int | None = 5) -> list[str]:
    block = header.get("eligibility")
    if not isinstance(block, Mapping):
        return []
    lines = [f"eligible   relevant sets restricted to the documents each topic's filter admits (topic metadata "
             f"{block.get('filter_key')!r}, {block.get('n_filtered_topics', 0):,} topics filtered, filters sha256 "
             f"{str(block.get('filters_sha256', ''))[:12]}); leaks = ineligible documents a run returned"]
    runs = block.get("runs", {})
    first: Any = next(iter(runs.values()), {}) if isinstance(runs, Mapping) else {}
    topics = first.get("ineligible_gold", {}).get("topics", {}) if isinstance(first, Mapping) else {}
    if topics:
        shown = [f"topic {t}: {', '.join(d for d, _g in docs)}" for t, docs in list(topics.items())[:limit]]
        more = (f"; ... {len(topics) - limit:,} more topics (--per-topic or --format json lists all)"
                if limit is not None and len(topics) > limit else "")
        lines.append(f"ineligible gold (judged relevant, ineligible under the topic's filter; not in |R|, not a "
                     f"miss): {'; '.join(shown)}{more}")
    return lines


def _leak_lines(run: str, el: Mapping[str, Any], limit: int | None) -> list[str]:
    """The leaked documents of one run per topic (rank:doc_id), at most ``limit`` topics (None: all)."""
    topics = el.get("leaks", {}).get("topics", {})
    if not topics:
        return []
    items = list(topics.items())
    lines = [f"run {run}: leaks, ineligible documents returned for filtered topics (rank:doc_id)"]
    for t, docs in items[:limit] if limit is not None else items:
        lines.append(f"{t}\t" + " ".join(f"{r}:{d}" for r, d in docs))
    if limit is not None and len(items) > limit:
        lines.append(f"... {len(items) - limit:,} more topics with leaks (--per-topic or --format json lists all)")
    return lines


def _per_topic_table(e: Evaluation) -> str:
    kmax = max(e.novelty) if e.novelty else 0
    head = ["topic"] + [str(m) for m in e.measures] + ["|R|", "returned", f"pool-novel@{kmax}" if kmax else "pool-novel"]
    n_rel: dict[str, int] = {}
    for d in e.relevant:
        n_rel[d.topic_id] = n_rel.get(d.topic_id, 0) + 1
    rows = []
    for t in e.topics:
        rows.append(
            [t] + [number(e.per_topic[m][t].value) for m in e.measures]
            + [str(n_rel.get(t, 0)), str(e.n_results.get(t, 0)), str(e.novelty[kmax].unjudged.get(t, 0)) if kmax else "-"]
        )
    return table(head, rows)


def render_scores(
    header: Mapping[str, Any],
    evaluations: Sequence[Evaluation],
    fmt: str = "table",
    *,
    per_topic: bool = False,
    slices: Mapping[str, Mapping[str, Sequence[SliceRow]]] | None = None,
    slice_keys: Mapping[str, SliceKey] | None = None,
    estimates: Sequence[RunEstimate] = (),
) -> str:
    """Render a score report.

    Args:
        header: lineage (see ``services.evaluation.report.ScoreReport.header``).
        evaluations: one per run.
        fmt: one of ``FORMATS``.
        per_topic: add per-topic values (and, in ``table`` and ``json``, the
            pool-novel documents at the largest cutoff).
        slices: run -> slice key -> rows (``--by``): a table per run and key;
            in the long formats, rows with aggregate ``KEY=VALUE`` (numerator =
            sum of the per-topic values, denominator = topics).
        slice_keys: key -> partition (for the descriptions).
        estimates: per run, its measures estimated from a judged sample (``reports.estimates``: a table
            after the run's, ``estimates`` in JSON, rows with ``low``, ``high``, ``n_judged`` in the long forms).

    Returns:
        The text (ends with a newline).

    Raises:
        ValidationError: unknown format.
    """
    f = check_format(fmt)
    sl = slices or {}
    keys = slice_keys or {}
    if f == "table":
        text = _scores_table(header, evaluations, per_topic, estimates)
        na = no_answer_block_lines(header.get("no_answer"))
        if na:
            text += "\n" + "\n".join(na) + "\n"
        if sl:
            from workbench.reports.slices import score_slice_tables

            blocks = [b for e in evaluations for b in score_slice_tables(e.run_name, sl.get(e.run_name, {}), keys)]
            text += "\n" + "\n\n".join(blocks) + "\n"
        return text
    if f == "json":
        doc = _scores_json(header, evaluations, per_topic)
        if estimates:
            from workbench.reports.estimates import estimate_json, estimates_for

            for run in doc["runs"]:
                found = estimates_for(estimates, run["run"])
                run["estimates"] = estimate_json(found, per_topic=per_topic) if found is not None else None
        if sl:
            from workbench.reports.slices import score_slices_json

            doc["slices"] = score_slices_json(sl, keys)
        return jsonout.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    rows = _long_rows(header, evaluations, per_topic)
    if sl:
        rows += _slice_long_rows(header, sl)
    if estimates:
        rows = _with_estimate_rows(header, rows, estimates)
    if f == "jsonl":
        return "".join(jsonout.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return _delimited(rows, "," if f == "csv" else "\t")


def no_answer_block_lines(block: Mapping[str, Any] | None) -> list[str]:
    """The no-answer block of a score report (``services.evaluation.no_answer.no_answer_json``): accuracy and false-answer
    rate per run with their counts, beside (never inside) the recall averages; [] when no topic is marked."""
    if not block:
        return []
    threshold = block.get("threshold")
    rule = "returns nothing" if threshold is None else f"returns nothing scored above {threshold!r}"
    topics = list(block.get("topics", ()))
    lines = [f"no-answer topics: {len(topics):,} ({block.get('source', '')}); a run abstains on a topic when it "
             f"{rule}. Left out of every average above."]
    rows = []
    for r in block.get("runs", ()):
        n = int(r["n_no_answer"])
        acc, far = r["no_answer_accuracy"], r["false_answer_rate"]
        rows.append([str(r["run"]), "-" if acc is None else f"{acc:.4f}", f"{len(r['abstained'])}/{n}",
                     "-" if far is None else f"{far:.4f}", f"{len(r['answered'])}/{n}",
                     f"{len(r['answerable_abstained'])}/{r['n_answerable']}"])
    lines.append(table(["run", "no-answer accuracy", "abstained", "false-answer rate", "answered",
                        "answerable abstained"], rows))
    return lines


def _with_estimate_rows(header: Mapping[str, Any], rows: list[dict[str, Any]],
                        estimates: Sequence[RunEstimate]) -> list[dict[str, Any]]:
    """The long rows with ``low``, ``high``, ``n_judged`` on every row (empty on the pooled ones) and each run's
    estimate rows after its own."""
    from workbench.reports.estimates import LONG_COLUMNS, estimate_long_rows

    lineage = _lineage(header)
    out: list[dict[str, Any]] = []
    runs = list(dict.fromkeys(r["run"] for r in rows))
    for run in runs:
        out += [{**r, **dict.fromkeys(LONG_COLUMNS)} for r in rows if r["run"] == run]
        for est in estimates:
            if est.run == run:
                out += estimate_long_rows(est, lineage)
    return out


def _lineage(header: Mapping[str, Any]) -> dict[str, Any]:
    q = header.get("qrels", {})
    return {"qrels_version": q.get("name", ""), "qrels_hash": q.get("content_hash", ""),
            "collection_version": q.get("collection_version", ""), "rel": header.get("rel", 1),
            "missing": header.get("missing", ""), "evaluator_version": header.get("evaluator_version", "")}


def _scores_table(header: Mapping[str, Any], evaluations: Sequence[Evaluation], per_topic: bool,
                  estimates: Sequence[RunEstimate] = ()) -> str:
    parts = ["\n".join(_header_lines(header, evaluations) + _eligibility_lines(header, None if per_topic else 5))]
    contributors = _contributors(header)
    for e in evaluations:
        kmax = max(e.novelty) if e.novelty else 0
        title = f"run {e.run_name}: {len(e.topics):,} topics"
        if e.n_duplicates:
            title += f", {e.n_duplicates:,} duplicate lines dropped"
        depth, pools = contributors.get(e.run_name, (0, []))
        if depth:
            title += f"; pool contributor (pooled at depth {depth} into {', '.join(pools)})"
        el = _run_eligibility(header, e.run_name)
        if el is not None:
            lk = el.get("leaks", {})
            title += (f"; leaks: {lk.get('total', 0):,} ineligible document(s) returned for {lk.get('n_topics', 0):,} "
                      f"of {el.get('n_filtered_topics', 0):,} filtered topics")
            if el.get("filter_mode"):
                title += (f"; {el['filter_mode']}-filtered run, {el.get('topics_short', 0):,} topic(s) with fewer "
                          f"than {el.get('depth', 0):,} results")
        parts.append(title + "\n" + _run_table(e, depth, el))
        if estimates:
            from workbench.reports.estimates import estimate_table, estimates_for

            found = estimates_for(estimates, e.run_name)
            if found is not None:
                parts.append(estimate_table(found, str(header.get("sample", {}).get("pool_version", ""))))
        leak_lines = _leak_lines(e.run_name, el, None if per_topic else 5) if el is not None else []
        if leak_lines:
            parts.append("\n".join(leak_lines))
        if per_topic:
            parts.append(f"run {e.run_name}: per topic\n" + _per_topic_table(e))
            if kmax:
                novel = e.novel_documents.with_ranks(kmax)
                lines = [f"run {e.run_name}: pool-novel documents in the top {kmax} (rank:doc_id)"]
                for t in e.topics:
                    if t in novel:
                        lines.append(f"{t}\t" + " ".join(f"{r}:{d}" for r, d in novel[t]))
                parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def _scores_json(header: Mapping[str, Any], evaluations: Sequence[Evaluation], per_topic: bool) -> dict[str, Any]:
    runs = []
    for e in evaluations:
        measures = {}
        for m in e.measures:
            a = e.aggregates[m]
            measures[str(m)] = {
                "macro": _json_number(a.macro), "micro": _json_number(a.micro), "ceiling": _json_number(a.ceiling),
                "n_topics": a.n_topics, "sum_value": a.sum_value,
                "sum_numerator": a.sum_numerator, "sum_denominator": a.sum_denominator,
            }
        novelty = {
            str(k): {"unjudged": nov.total_unjudged, "returned": nov.total_returned, "share": nov.unjudged_share,
                     "recall_low": _json_number(nov.macro_low), "recall_high": _json_number(nov.macro_high)}
            for k, nov in e.novelty.items()
        }
        depth, pools = _contributors(header).get(e.run_name, (0, []))
        run: dict[str, Any] = {
            "eligibility": _run_eligibility(header, e.run_name),
            "run": e.run_name,
            "pool_contributor": {"depth": depth, "pools": pools} if depth else None,
            "topics": list(e.topics),
            "excluded_topics": list(e.excluded_topics),
            "missing_topics": list(e.missing_topics),
            "ignored_topics": list(e.ignored_topics),
            "duplicates": dict(e.duplicates),
            "measures": measures,
            "pool_novel": novelty,
            "recall_curve": {"macro": list(e.curve.macro), "micro": list(e.curve.micro),
                             "ceiling": list(e.curve.ceiling)},
        }
        if per_topic:
            run["per_topic"] = {
                t: {str(m): {"value": e.per_topic[m][t].value, "numerator": e.per_topic[m][t].numerator,
                             "denominator": e.per_topic[m][t].denominator} for m in e.measures}
                for t in e.topics
            }
            kmax = max(e.novelty) if e.novelty else 0
            if kmax:
                run["pool_novel_documents"] = {
                    "k": kmax, "topics": {t: [[r, d] for r, d in docs] for t, docs in e.novel_documents.with_ranks(kmax).items()}
                }
        runs.append(run)
    return {"header": dict(header), "runs": runs}


def _long_rows(header: Mapping[str, Any], evaluations: Sequence[Evaluation], per_topic: bool) -> list[dict[str, Any]]:
    q = header.get("qrels", {})
    lineage = {
        "qrels_version": q.get("name", ""),
        "qrels_hash": q.get("content_hash", ""),
        "collection_version": q.get("collection_version", ""),
        "rel": header.get("rel", 1),
        "missing": header.get("missing", ""),
        "evaluator_version": header.get("evaluator_version", ""),
    }
    out = []
    for e in evaluations:
        for m in e.measures:
            for row in aggregate_rows(e, m):
                out.append(_long_row(e.run_name, row, row.aggregate, "", lineage))
            if per_topic:
                for row in topic_rows(e, m):
                    out.append(_long_row(e.run_name, row, "", row.aggregate, lineage))
    return out


def _long_row(run: str, row: ValueRow, aggregate: str, topic_id: str, lineage: Mapping[str, Any]) -> dict[str, Any]:
    """One long-form row: ``aggregate`` (macro, micro, ...) or ``topic_id``, the other empty."""
    return {"run": run, "measure": row.measure, "aggregate": aggregate, "topic_id": topic_id,
            "value": _json_number(row.value), "numerator": row.numerator, "denominator": row.denominator,
            "n_topics": row.n_topics, **lineage}


def write_scores_parquet(header: Mapping[str, Any], evaluations: Sequence[Evaluation], path: str | Path, *,
                         per_topic: bool = False,
                         slices: Mapping[str, Mapping[str, Sequence[SliceRow]]] | None = None) -> Path:
    """Write a score report in long form (the rows of ``--format jsonl``) as a Parquet file, atomically.

    Columns: run, measure, aggregate (``macro``, ``micro``, ``ceiling``,
    ``optimistic``, ``unjudged``, ``KEY=VALUE`` for a slice; ``""`` on a per-topic
    row), topic_id (the topic of a per-topic row; ``""`` on an aggregate row),
    value, numerator, denominator (float64; null where there is no value),
    n_topics (int64), then the lineage: qrels_version, qrels_hash,
    collection_version, rel (int64), missing, evaluator_version.

    Returns:
        The path written.
    """
    import pyarrow as pa

    from workbench.formats.parquet import write_table

    rows = _long_rows(header, evaluations, per_topic) + (_slice_long_rows(header, slices) if slices else [])
    types = {"value": pa.float64(), "numerator": pa.float64(), "denominator": pa.float64(), "n_topics": pa.int64(),
             "rel": pa.int64()}
    names = ["run", "measure", "aggregate", "topic_id", "value", "numerator", "denominator", "n_topics",
             "qrels_version", "qrels_hash", "collection_version", "rel", "missing", "evaluator_version"]
    table = pa.table({n: pa.array([r[n] for r in rows], type=types.get(n, pa.string())) for n in names})
    return write_table(path, table)


def _slice_long_rows(header: Mapping[str, Any], slices: Mapping[str, Mapping[str, Sequence[SliceRow]]]) -> list[dict[str, Any]]:
    q = header.get("qrels", {})
    lineage = {
        "qrels_version": q.get("name", ""), "qrels_hash": q.get("content_hash", ""),
        "collection_version": q.get("collection_version", ""), "rel": header.get("rel", 1),
        "missing": header.get("missing", ""), "evaluator_version": header.get("evaluator_version", ""),
    }
    out = []
    for run, by_key in slices.items():
        for key, rows in by_key.items():
            for r in rows:
                if r.value == "(all)":
                    continue
                for m, v in r.means.items():
                    out.append({"run": run, "measure": str(m), "aggregate": f"{key}={r.value}", "topic_id": "",
                                "value": _json_number(v), "numerator": v * r.n_topics, "denominator": r.n_topics,
                                "n_topics": r.n_topics, **lineage})
    return out


WIDTH = 100
"""Columns of the text reports that wrap long lists (a 100-column terminal)."""
