"""Rendering of scores, comparisons and miss lists: the only place numbers are rounded.

Formats (``--format``):

* ``table``: for people; values with 4 decimals, a header block with the
  lineage (qrels version and hash, collection version, runs, evaluator version,
  threshold, missing-topic policy, topic counts) and one table per run.
* ``json``: one document, full precision, header included.
* ``jsonl`` / ``csv`` / ``tsv``: long form, one row per (run, measure,
  aggregate) with numerator, denominator and lineage columns, full precision
  (``repr`` of floats), for scripts and spreadsheets.
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

import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench import jsonout
from workbench.errors import UsageError, ValidationError
from workbench.scoring.measures import R
from workbench.scoring.results import Evaluation, RelevantDoc, value_rows

if TYPE_CHECKING:
    from workbench.scoring.compare import Comparison
    from workbench.scoring.slices import SliceComparison, SliceKey, SliceRow

Format = Literal["table", "json", "jsonl", "csv", "tsv", "parquet"]
FORMATS: tuple[str, ...] = ("table", "json", "jsonl", "csv", "tsv", "parquet")
TEXT_FORMATS: tuple[str, ...] = ("table", "json", "jsonl", "csv", "tsv")
"""The formats rendered as text (every format but ``parquet``, which is written to a file)."""
CHART_SUFFIXES: tuple[str, ...] = (".png", ".html", ".svg", ".json")
DIGITS = 4

_MISSING_TEXT = {
    "fail": "fail (a run without results for a qrels topic stops the command)",
    "zero": "zero (qrels topics without results score 0)",
    "exclude": "exclude (qrels topics without results are left out of the averages)",
}


def check_format(fmt: str, formats: Sequence[str] = TEXT_FORMATS) -> Format:
    """``fmt`` if it is one of ``formats`` (default: the text formats; ``FORMATS`` where a file may be written).

    Raises:
        ValidationError: it is not.
    """
    if fmt not in formats:
        raise UsageError(f"expected --format one of {', '.join(formats)}, found {fmt!r}.")
    return fmt  # type: ignore[return-value]


def number(x: float | None, digits: int = DIGITS) -> str:
    """A value for people: ``digits`` decimals, ``-`` for None, nan or infinity (not a number; the
    report's warnings say why).

    Example:
        >>> number(1 / 3), number(None), number(float("nan")), number(float("inf"))
        ('0.3333', '-', '-', '-')
    """
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}f}"


def _percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def share_text(n: int, m: int) -> str:
    """``n/m (p%)`` where p never rounds up to 100% (or down to 0%) unless it is exact.

    A share below 1 is shown with its first decimal rounded down, so 1,836 of
    1,837 reads 99.9%, not 100.0%.

    Example:
        >>> share_text(1836, 1837), share_text(5, 5), share_text(1, 30000)
        ('1,836/1,837 (99.9%)', '5/5 (100%)', '1/30,000 (0.003%)')
    """
    if m == 0:
        return "0/0 (-)"
    if n == m:
        return f"{n:,}/{m:,} (100%)"
    if n == 0:
        return f"0/{m:,} (0%)"
    pct = 100 * n / m
    digits = 1
    while digits < 6 and (math.floor(pct * 10**digits) == 0 and n > 0):
        digits += 1
    shown = math.floor(pct * 10**digits) / 10**digits
    return f"{n:,}/{m:,} ({shown:.{digits}f}%)"


def number_near(x: float, threshold: float, digits: int = DIGITS) -> tuple[str, str]:
    """``x`` and ``threshold`` with enough decimals that the printed values show which side ``x`` is on.

    Starts at ``digits`` decimals and adds more (up to 17) while the two
    printed values are equal or ordered differently from the full-precision
    ones; equal values print equal.

    Example:
        >>> number_near(0.8949999, 0.895)
        ('0.8949999', '0.8950000')
        >>> number_near(0.91, 0.895)
        ('0.9100', '0.8950')
    """
    d = digits
    while d < 17:
        a, b = f"{x:.{d}f}", f"{threshold:.{d}f}"
        if x == threshold or (a != b and (float(a) < float(b)) == (x < threshold)):
            return a, b
        d += 1
    return repr(x), repr(threshold)


def _json_number(x: float | None) -> float | None:
    """JSON has no nan or infinity: None instead."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return x


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, left: int = 1) -> str:
    """A plain fixed-width table; the first ``left`` columns left-aligned, the rest right-aligned.

    Example:
        >>> print(table(["run", "R@10"], [["bm25", "0.5000"]]))
        run    R@10
        bm25 0.5000
    """
    widths = [len(h) for h in headers]
    for r in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, r, strict=True)]

    def line(cells: Sequence[str]) -> str:
        out = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return " ".join(out).rstrip()

    return "\n".join([line(headers)] + [line(r) for r in rows])


# -- scores -------------------------------------------------------------------------


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


def _ids(ids: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", ... {len(ids) - limit} more" if len(ids) > limit else "")


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
        row = [str(m), number(a.macro), number(a.micro), number(a.ceiling), novel, high]
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
    return table(head, rows)


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
    head = ["topic"] + [str(m) for m in e.measures] + ["|R|", "returned", f"pool-novel@{kmax}"]
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
) -> str:
    """Render a score report.

    Args:
        header: lineage (see ``services.scoring.ScoreReport.header``).
        evaluations: one per run.
        fmt: one of ``FORMATS``.
        per_topic: add per-topic values (and, in ``table`` and ``json``, the
            pool-novel documents at the largest cutoff).
        slices: run -> slice key -> rows (``--by``): a table per run and key;
            in the long formats, rows with aggregate ``KEY=VALUE`` (numerator =
            sum of the per-topic values, denominator = topics).
        slice_keys: key -> partition (for the descriptions).

    Returns:
        The text (ends with a newline).

    Raises:
        ValidationError: unknown format.
    """
    f = check_format(fmt)
    sl = slices or {}
    keys = slice_keys or {}
    if f == "table":
        text = _scores_table(header, evaluations, per_topic)
        na = no_answer_block_lines(header.get("no_answer"))
        if na:
            text += "\n" + "\n".join(na) + "\n"
        if sl:
            from workbench.reports_slices import score_slice_tables

            blocks = [b for e in evaluations for b in score_slice_tables(e.run_name, sl.get(e.run_name, {}), keys)]
            text += "\n" + "\n\n".join(blocks) + "\n"
        return text
    if f == "json":
        doc = _scores_json(header, evaluations, per_topic)
        if sl:
            from workbench.reports_slices import score_slices_json

            doc["slices"] = score_slices_json(sl, keys)
        return jsonout.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    rows = _long_rows(header, evaluations, per_topic)
    if sl:
        rows += _slice_long_rows(header, sl)
    if f == "jsonl":
        return "".join(jsonout.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return _delimited(rows, "," if f == "csv" else "\t")


def no_answer_block_lines(block: Mapping[str, Any] | None) -> list[str]:
    """The no-answer block of a score report (``services.no_answer.no_answer_json``): accuracy and false-answer
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


def _scores_table(header: Mapping[str, Any], evaluations: Sequence[Evaluation], per_topic: bool) -> str:
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
        for row in value_rows(e, per_topic=per_topic):
            out.append({"run": e.run_name, **row._asdict(), "value": _json_number(row.value), **lineage})
    return out


def write_scores_parquet(header: Mapping[str, Any], evaluations: Sequence[Evaluation], path: str | Path, *,
                         per_topic: bool = False,
                         slices: Mapping[str, Mapping[str, Sequence[SliceRow]]] | None = None) -> Path:
    """Write a score report in long form (the rows of ``--format jsonl``) as a Parquet file, atomically.

    Columns: run, measure, aggregate (``macro``, ``micro``, ``ceiling``,
    ``optimistic``, ``unjudged``, ``KEY=VALUE`` for a slice, or a topic_id),
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
    names = ["run", "measure", "aggregate", "value", "numerator", "denominator", "n_topics", "qrels_version",
             "qrels_hash", "collection_version", "rel", "missing", "evaluator_version"]
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
                    out.append({"run": run, "measure": str(m), "aggregate": f"{key}={r.value}",
                                "value": _json_number(v), "numerator": v * r.n_topics, "denominator": r.n_topics,
                                "n_topics": r.n_topics, **lineage})
    return out


def _delimited(rows: list[dict[str, Any]], sep: str, fieldnames: Sequence[str] | None = None) -> str:
    names = list(fieldnames) if fieldnames is not None else (list(rows[0]) if rows else [])
    if not names:
        return ""
    import csv

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=names, delimiter=sep, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: (repr(v) if isinstance(v, float) else ("" if v is None else v)) for k, v in r.items()})
    return buf.getvalue()


# -- comparison -----------------------------------------------------------------------


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
        from workbench.reports_slices import comparison_slices_json

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
        from workbench.reports_slices import comparison_slice_lines

        lines += comparison_slice_lines(slices, slice_p or [None] * len(slices), slice_keys or {}, c.run_a, c.run_b)
    lines.append("")
    lines.append(f"per topic, largest losses first; lost/gained: relevant documents in the top {c.measure.cutoff} "
                 "of only A / only B")
    lines.append(table(["topic", c.run_a, c.run_b, "delta", "lost", "gained"],
                       [[d.topic_id, number(d.a), number(d.b), number(d.delta), str(len(d.lost)), str(len(d.gained))]
                        for d in c.deltas]))
    moved = [d for d in c.deltas if d.lost or d.gained]
    if moved:
        lines.append("")
        lines.append(f"lost and gained in the top {c.measure.cutoff}: doc(grade: rank in A -> rank in B; "
                     "- = not returned)")
        lines += _moved_lines(moved)
    return "\n".join(lines) + "\n"


WIDTH = 100
"""Columns of the text reports that wrap long lists (a 100-column terminal)."""


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


# -- misses -----------------------------------------------------------------------------


def render_misses(header: Mapping[str, Any], run_name: str, misses: Sequence[RelevantDoc], k: int,
                  fmt: str = "table") -> str:
    """Render the relevant documents a run missed within k (with the rank beyond k, or none).

    Raises:
        ValidationError: unknown format.
    """
    f = check_format(fmt)
    rows = [{"run": run_name, "topic_id": d.topic_id, "doc_id": d.doc_id, "grade": d.grade, "rank": d.rank, "k": k}
            for d in misses]
    if f == "json":
        return jsonout.dumps({"header": dict(header), "k": k, "run": run_name, "misses": rows}, indent=2,
                          ensure_ascii=False) + "\n"
    if f == "jsonl":
        return "".join(jsonout.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if f in ("csv", "tsv"):
        return _delimited(rows, "," if f == "csv" else "\t", ["run", "topic_id", "doc_id", "grade", "rank", "k"])
    lines = _header_lines(header, [])
    n_topics = len({d.topic_id for d in misses})
    beyond = sum(1 for d in misses if d.rank is not None)
    lines.append("")
    lines.append(f"run {run_name}: {len(misses):,} relevant documents not in the top {k} "
                 f"({n_topics:,} topics; {beyond:,} found deeper, {len(misses) - beyond:,} not retrieved)")
    lines.append(table(["topic", "doc_id", "grade", "rank"],
                       [[d.topic_id, d.doc_id, str(d.grade), "-" if d.rank is None else str(d.rank)] for d in misses]))
    return "\n".join(lines) + "\n"


# -- charts -------------------------------------------------------------------------------


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
