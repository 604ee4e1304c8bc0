"""Rendering of a release gate's report: ``table`` (terminal), ``json`` (full precision), ``markdown`` (a PR).

Layout of every format: the verdict line first, the lineage (runs, qrels,
policy and their hashes, evaluator and commit), every rule with its measured
value, threshold and verdict, the gated measures with raw and corrected tests
side by side, the slice tables, then the per-topic diff list: critical topics
first, then the largest losses, each with the baseline's and the candidate's
R@K, the relevant documents lost (with their baseline ranks) and gained (with
their candidate ranks) and the documents' titles.

Numbers are compared at full precision by the rules; here they are rounded for
display only, and a value next to its threshold gets as many decimals as it
takes to show which side it is on (``reports.number_near``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import jsonout
from workbench.errors import ValidationError
from workbench.reports.format import number, number_near, table
from workbench.reports.scores import audit_lines, completion_lines
from workbench.scoring.gate import ChangeInterval, GateResult, RuleResult, TopicDiff

if TYPE_CHECKING:
    from workbench.scoring.estimate_compare import EstimatedChange
    from workbench.services.gates.gate import GateReport

GATE_FORMATS: tuple[str, ...] = ("table", "json", "markdown")
MAX_TOPICS = 25
"""Topics of the diff list shown by ``table`` and ``markdown`` (``json`` lists all)."""
TITLE_CHARS = 60

_VERDICT_MD = {"pass": "✅ pass", "fail": "❌ fail", "invalid": "⚠️ invalid", "skipped": "➖ skipped"}
_PERCENT_RULES = {"completion", "id_coverage", "run_id_coverage", "topic_share"}
_COUNT_RULES = {"topics", "leakage", "leaks", "critical"}


def check_gate_format(fmt: str) -> str:
    """``fmt`` if it is one of ``GATE_FORMATS``.

    Raises:
        ValidationError: it is not.
    """
    if fmt not in GATE_FORMATS:
        raise ValidationError(f"expected --format one of {', '.join(GATE_FORMATS)}, found {fmt!r}.")
    return fmt


def render_gate(report: GateReport, fmt: str = "table", *, max_topics: int = MAX_TOPICS) -> str:
    """Render a gate report.

    Args:
        report: the gate's report (``services.gates.gate.GateReport``).
        fmt: ``table``, ``json`` or ``markdown``.
        max_topics: topics of the diff list shown by ``table`` and ``markdown``.

    Returns:
        The text (ends with a newline).

    Raises:
        ValidationError: unknown format.
    """
    f = check_gate_format(fmt)
    if f == "json":
        return jsonout.dumps(gate_json(report), indent=2, ensure_ascii=False) + "\n"
    if f == "markdown":
        return _markdown(report, max_topics)
    return _table(report, max_topics)


# -- shared helpers -------------------------------------------------------------------------


def rule_values(r: RuleResult) -> tuple[str, str]:
    """(measured, threshold) as printed.

    Counts are integers followed by what they count (``1 flagged, excluded``), shares and means get
    the digits it takes to show which side of the threshold they are on, and ``macro_change`` shows
    the change with the interval whose lower end the rule tests (``+0.0327, Holm 97.5% CI [-0.0021,
    0.0684]`` against ``CI low >= -0.0100``): the lower end alone read as the change itself.

    Example:
        >>> from workbench.scoring.gate import ChangeInterval
        >>> c = ChangeInterval(0.0327, 0.0021, 0.0638, 0.95, -0.0021, 0.0684, 0.975, "holm", "corrected")
        >>> rule_values(RuleResult("macro_change", "R@20", "quality", "pass", -0.0021, -0.01, ">=", "",
        ...                        interval=c))
        ('+0.0327, Holm 97.5% CI [-0.0021, 0.0684]', 'CI low >= -0.0100')
        >>> rule_values(RuleResult("leakage", "queries", "validity", "pass", 1.0, None, "==", "",
        ...                        unit="flagged, excluded"))
        ('1 flagged, excluded', '-')
    """
    if r.interval is not None and r.measured is not None and r.threshold is not None:
        return _change_values(r.interval, r.threshold)
    if r.measured is None:
        return "-", _op(r, "-" if r.threshold is None else _plain(r, r.threshold))
    unit = f" {r.unit}" if r.unit else ""
    if r.threshold is None:
        return _plain(r, r.measured) + unit, "-"
    if r.rule in _COUNT_RULES:
        return f"{r.measured:,.0f}{unit}", _op(r, f"{r.threshold:,.0f}")
    if r.rule == "permutation":
        m, t = _p_near(r.measured, r.threshold)
        return m, _op(r, t)
    m, t = number_near(r.measured, r.threshold)
    return m, _op(r, t)


def _change_values(c: ChangeInterval, bound: float) -> tuple[str, str]:
    """The change and the tested interval (its lower end near the bound), and the bound on that end."""
    low, b = number_near(c.tested_low, bound)
    name = _CORRECTION_NAME.get(c.correction, c.correction)
    widened = c.decides == "corrected" and c.correction != "none" and c.corrected_confidence != c.confidence
    label = f"{name} " if widened else ""  # one gated test: the corrected interval is the raw one
    return (f"{c.change:+.4f}, {label}{_pct(c.tested_confidence)} CI [{low}, {number(c.tested_high)}]",
            f"CI low >= {b}")


_CORRECTION_NAME = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "uncorrected"}


def _p_near(p: float, alpha: float) -> tuple[str, str]:
    if p >= 1e-4:
        return number_near(p, alpha)
    return f"{p:.2e}", f"{alpha:g}"


def _plain(r: RuleResult, x: float) -> str:
    return f"{x:,.0f}" if r.rule in _COUNT_RULES else number(x)


def _op(r: RuleResult, threshold: str) -> str:
    if threshold == "-":
        return "-"
    if r.rule == "permutation":
        return f"p >= {threshold} (or not worse)"
    return f"{'=' if r.op == '==' else r.op} {threshold}"


def _short(title: str) -> str:
    t = " ".join(title.split())
    return t if len(t) <= TITLE_CHARS else t[: TITLE_CHARS - 1].rstrip() + "…"


def _rank(r: int | None) -> str:
    return "-" if r is None else str(r)


def _lost(d: TopicDiff, titles: Mapping[str, str], md: bool) -> list[str]:
    out = []
    for doc, grade, ra, rb in d.lost:
        where = f"baseline rank {ra}, candidate {'rank ' + str(rb) if rb is not None else 'not returned'}"
        out.append(_doc(doc, grade, where, titles, md))
    return out


def _gained(d: TopicDiff, titles: Mapping[str, str], md: bool) -> list[str]:
    out = []
    for doc, grade, ra, rb in d.gained:
        where = f"candidate rank {rb}, baseline {'rank ' + str(ra) if ra is not None else 'not returned'}"
        out.append(_doc(doc, grade, where, titles, md))
    return out


def _doc(doc: str, grade: int, where: str, titles: Mapping[str, str], md: bool) -> str:
    title = titles.get(doc, "")
    if md:
        text = f"`{_code(doc)}` g{grade} ({where})"
        return text + (f" — {_md(_short(title))}" if title else "")
    return f"{doc} g{grade} ({where})" + (f' "{_short(title)}"' if title else "")


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~$!])")


def _md(text: str) -> str:
    """Text made inert in Markdown: the characters that open emphasis, code, links, images, HTML,
    table cells or math are backslash-escaped (ids, run names and titles come from users)."""
    return _MD_SPECIAL.sub(r"\\\1", text.replace("\n", " "))


def _code(text: str) -> str:
    return text.replace("`", "'")


def _test_rows(report: GateReport, res: GateResult) -> tuple[list[str], list[list[str]]]:
    pol = report.policy
    name = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "raw"}[pol.correction]
    head = ["measure", report.baseline, res.candidate, "change", "CI", f"{name} CI", "p (bootstrap)",
            f"p {name}"]
    if pol.permutation is not None:
        head += ["p (permutation)", f"p perm. {name}"]
    rows = []
    for t in res.tests:
        ci = cci = pb = pbc = "-"
        if t.estimated is not None and t.estimated.topics:  # the interval of the change of the estimate
            est = t.estimated
            lo, hi = est.interval(res.corrected_level)
            ci = f"{_pct(est.confidence)} [{number(est.low)}, {number(est.high)}] (design)"
            cci = f"{_pct(res.corrected_level)} [{number(lo)}, {number(hi)}] (design)"
        elif t.bootstrap is not None and t.bootstrap_corrected is not None:
            ci = f"{_pct(t.bootstrap.confidence)} [{number(t.bootstrap.ci_low)}, {number(t.bootstrap.ci_high)}]"
            cci = (f"{_pct(t.bootstrap_corrected.confidence)} [{number(t.bootstrap_corrected.ci_low)}, "
                   f"{number(t.bootstrap_corrected.ci_high)}]")
            pb = _p(t.bootstrap.p_value)
            pbc = _p(t.p_bootstrap_corrected)
        row = [str(t.measure), number(t.mean_baseline), number(t.mean_candidate), f"{t.mean_change:+.4f}", ci, cci,
               pb, pbc]
        if pol.permutation is not None:
            row += [_p(t.permutation.p_value if t.permutation else None), _p(t.p_permutation_corrected)]
        rows.append(row)
    return head, rows


def _slice_p(res: GateResult, measure: object, row: Any) -> float | None:
    """A slice row's bootstrap p; the overall row shows the gated test's (it is not tested twice)."""
    if row.bootstrap is not None:
        return float(row.bootstrap.p_value)
    if row.value == "(all)":
        for t in res.tests:
            if t.measure == measure and t.bootstrap is not None:
                return float(t.bootstrap.p_value)
    return None


def _pct(level: float) -> str:
    x = 100 * level
    return f"{x:.0f}%" if abs(x - round(x)) < 1e-9 else f"{x:.4g}%"


def _p(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4f}" if x >= 1e-4 else f"{x:.1e}"


def _lineage(report: GateReport) -> list[str]:
    s = report.score
    h = report.header()
    out = []
    for r in s.runs:
        role = "baseline " if r.name == report.baseline else "candidate"
        where = r.location if r.origin == "file" else f"stored, collection {r.collection} version {r.collection_version[:12]}"
        out.append(f"{role}  {r.name} ({where}; sha256 {r.content_hash[:12] or '-'}"
                   + (f"; statuses from {r.status_file}" if r.status_file else "") + ")")
    q = s.qrels
    out.append(f"qrels      {q.name} ({q.origin}, sha256 {q.content_hash[:12]}; {q.n_topics:,} topics, "
               f"{q.n_entries:,} judgments); relevant = grade >= {s.rel}")
    out.append(f"policy     {report.policy.path} (sha256 {report.policy_hash[:12]}); K = {report.policy.k}; "
               f"correction {report.policy.correction}, {report.policy.decide} values decide")
    commit = f" (git {s.git_commit[:12]}{'-dirty' if s.git_commit.endswith('-dirty') else ''})" if s.git_commit else ""
    out.append(f"evaluator  {s.evaluator_version}{commit}")
    if s.topic_set is not None:
        out.append(f"topic set  {s.topic_set.ref}" + ("; protected: this use is recorded" if s.topic_set.protected
                                                      else ""))
    cov = s.coverage
    if cov is not None:
        out.append(f"topics     {len(report.results[0].topics):,} paired of {cov.n_eligible:,} eligible (|R| > 0"
                   + (f", in {cov.topic_set}" if cov.topic_set else "") + ")"
                   + (f"; {len(report.excluded_for_leakage)} excluded by the leakage check "
                      f"({', '.join(report.excluded_for_leakage[:10])})" if report.excluded_for_leakage else ""))
    out += completion_lines(h.get("completion", []))  # type: ignore[arg-type]
    out += audit_lines(h.get("id_audit", []), str(h.get("id_audit_note", "")))  # type: ignore[arg-type]
    for w in s.warnings:
        out.append(f"warning    {w}")
    return out


def _verdict_line(report: GateReport, res: GateResult) -> str:
    n_fail = sum(1 for r in res.rules if r.verdict == "fail")
    n_invalid = sum(1 for r in res.rules if r.verdict == "invalid")
    why = ""
    if res.verdict == "invalid":
        why = f": {n_invalid} validity rule(s) not met, the comparison cannot be trusted"
    elif res.verdict == "fail":
        why = f": {n_fail} rule(s) failed"
    return (f"GATE {res.verdict.upper()} (exit {res.exit_code}){why}; candidate {res.candidate} against "
            f"baseline {report.baseline}, policy {report.policy.name}")


def _overall_line(report: GateReport) -> str:
    """The first line with several candidates: the command's verdict and each candidate's."""
    each = ", ".join(f"{r.candidate} {r.verdict}" for r in report.results)
    return (f"GATE {report.verdict.upper()} (exit {report.exit_code}): the worst of {len(report.results)} candidates "
            f"against baseline {report.baseline} ({each}); policy {report.policy.name}")


# -- table -------------------------------------------------------------------------------------


def _table(report: GateReport, max_topics: int) -> str:
    several = len(report.results) > 1
    L = [_overall_line(report) if several else _verdict_line(report, report.results[0]), ""] + _lineage(report)
    for res in report.results:
        if several:
            L += ["", "=" * 8 + " " + _verdict_line(report, res)]
        L += _candidate_table(report, res, max_topics)
    return "\n".join(L) + "\n"


def _candidate_table(report: GateReport, res: GateResult, max_topics: int) -> list[str]:
    L = ["", "rules (validity first; invalid = not trusted, fail = not good enough)"]
    rows = []
    for r in res.rules:
        m, t = rule_values(r)
        rows.append([r.kind, r.rule, r.subject, m, t, r.verdict.upper() if r.verdict != "pass" else "pass"])
    L.append(table(["kind", "rule", "subject", "measured", "threshold", "verdict"], rows, left=3))
    L.append("")
    L.append("rule details")
    for r in res.rules:
        L.append(f"  {r.rule} {r.subject}: {r.detail}")
    if res.tests:
        L.append("")
        L.append(f"gated measures over {len(res.topics):,} paired topics (candidate - baseline; "
                 f"{res.family_size} test(s) in the family)")
        head, trows = _test_rows(report, res)
        L.append(table(head, trows))
    for st in res.slices:
        L.append("")
        L.append(f"{st.measure} by {st.key}; p: bootstrap, raw and {report.policy.correction}-adjusted over every "
                 "tested slice")
        srows = []
        for sr in st.rows:
            srows.append([sr.value, f"{sr.n_topics:,}", number(sr.mean_a), number(sr.mean_b), f"{sr.delta:+.4f}"
                          if not math.isnan(sr.delta) else "-",
                          _p(_slice_p(res, st.measure, sr)), _p(st.p_corrected.get(sr.value)),
                          "too small for statistics" if sr.too_small else ""])
        L.append(table(["slice", "topics", report.baseline, res.candidate, "change", "p", "p adj.", "note"], srows))
    L.append("")
    L += _diff_text(report, res, max_topics)
    return L


def _diff_text(report: GateReport, res: GateResult, max_topics: int) -> list[str]:
    k = report.policy.k
    L = [f"per-topic differences in R@{k}: critical topics first, then the largest losses "
         f"({len(res.diffs):,} listed, {res.n_unchanged:,} paired topics unchanged)"]
    rows = []
    for d in res.diffs[:max_topics]:
        rows.append([d.topic_id, "yes" if d.critical else "", number(d.baseline), number(d.candidate),
                     f"{d.delta:+.4f}", str(len(d.lost)), str(len(d.gained))])
    L.append(table(["topic", "critical", f"{report.baseline}", f"{res.candidate}", "change", "lost", "gained"],
                   rows))
    for d in res.diffs[:max_topics]:
        if d.lost or d.gained:
            L.append(f"  topic {d.topic_id}{' (critical)' if d.critical else ''}:")
            L += [f"    lost    {x}" for x in _lost(d, report.titles, False)]
            L += [f"    gained  {x}" for x in _gained(d, report.titles, False)]
    if len(res.diffs) > max_topics:
        L.append(f"  ... {len(res.diffs) - max_topics:,} more topics changed (--max-topics, or --format json)")
    return L


# -- markdown ------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


_MARK = {"pass": "✅ PASS", "fail": "❌ FAIL", "invalid": "⚠️ INVALID"}


def _markdown(report: GateReport, max_topics: int) -> str:
    s = report.score
    several = len(report.results) > 1
    names = ", ".join(f"`{_code(r.candidate)}`" for r in report.results)
    L = [f"## Release gate: {_MARK[report.verdict]} — {names} against `{_code(report.baseline)}`", ""]
    L.append(_md(_overall_line(report) if several else _verdict_line(report, report.results[0])))
    L.append("")
    L.append(f"Policy `{_code(report.policy.path)}` (sha256 `{report.policy_hash[:12]}`), K = {report.policy.k}, "
             f"qrels `{_code(s.qrels.name)}` (sha256 `{s.qrels.content_hash[:12]}`), "
             f"{len(report.results[0].topics):,} paired topics, evaluator `{_code(s.evaluator_version)}`"
             + (f" at `{s.git_commit[:12]}`" if s.git_commit else "") + ".")
    for res in report.results:
        if several:
            L += ["", f"### {_MARK[res.verdict]}: `{_code(res.candidate)}`"]
        L += _candidate_markdown(report, res, max_topics, "####" if several else "###")
    return "\n".join(L) + "\n"


def _candidate_markdown(report: GateReport, res: GateResult, max_topics: int, h: str) -> list[str]:
    L = [""]
    L.append("| kind | rule | subject | measured | threshold | verdict |")
    L.append("|---|---|---|---:|---|---|")
    for r in res.rules:
        m, t = rule_values(r)
        L.append(f"| {r.kind} | {r.rule} | {_cell(_md(r.subject))} | {m} | {_cell(t)} | {_VERDICT_MD[r.verdict]} |")
    L.append("")
    L.append("<details><summary>Rule details and lineage</summary>")
    L.append("")
    for r in res.rules:
        L.append(f"- **{r.rule}** {_md(r.subject)}: {_md(r.detail)}")
    L.append("")
    L.append("```")
    L += _lineage(report)
    L.append("```")
    L.append("")
    L.append("</details>")
    if res.tests:
        L.append("")
        L.append(f"{h} Gated measures ({res.family_size} in the family; candidate − baseline)")
        L.append("")
        head, trows = _test_rows(report, res)
        L.append("| " + " | ".join(_cell(_md(h)) for h in head) + " |")
        L.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
        for row in trows:
            L.append("| " + " | ".join(_cell(c) for c in row) + " |")
    if res.slices:
        L.append("")
        L.append(f"<details><summary>Slices ({', '.join(_md(k) for k in dict.fromkeys(st.key for st in res.slices))})"
                 "</summary>")
    for st in res.slices:
        L.append("")
        L.append(f"**{_md(str(st.measure))} by {_md(st.key)}**")
        L.append("")
        L.append(f"| slice | topics | {_cell(_md(report.baseline))} | {_cell(_md(res.candidate))} | change | "
                 f"p | p adj. |")
        L.append("|---|---:|---:|---:|---:|---:|---:|")
        for sr in st.rows:
            small = " (too small for statistics)" if sr.too_small else ""
            change = f"{sr.delta:+.4f}" if not math.isnan(sr.delta) else "-"
            L.append(f"| {_cell(_md(sr.value))}{small} | {sr.n_topics:,} | {number(sr.mean_a)} | "
                     f"{number(sr.mean_b)} | {change} | {_p(_slice_p(res, st.measure, sr))} | "
                     f"{_p(st.p_corrected.get(sr.value))} |")
    if res.slices:
        L.append("")
        L.append("</details>")
    k = report.policy.k
    L.append("")
    L.append(f"{h} Per-topic differences in R@{k}")
    L.append("")
    L.append(f"Critical topics first, then the largest losses; {len(res.diffs):,} topics changed or critical, "
             f"{res.n_unchanged:,} paired topics unchanged.")
    L.append("")
    L.append(f"| topic | {_cell(_md(report.baseline))} R@{k} | {_cell(_md(res.candidate))} R@{k} | change | "
             "lost (baseline rank) | gained (candidate rank) |")
    L.append("|---|---:|---:|---:|---|---|")
    for d in res.diffs[:max_topics]:
        topic = f"**{_md(d.topic_id)}** (critical)" if d.critical else _md(d.topic_id)
        lost = "<br>".join(_cell(x) for x in _lost(d, report.titles, True))
        gained = "<br>".join(_cell(x) for x in _gained(d, report.titles, True))
        L.append(f"| {topic} | {number(d.baseline)} | {number(d.candidate)} | {d.delta:+.4f} | {lost} | {gained} |")
    if len(res.diffs) > max_topics:
        L.append("")
        L.append(f"_… and {len(res.diffs) - max_topics:,} more topics (`--max-topics`, or `--format json`)._")
    return L


# -- json ------------------------------------------------------------------------------------------


def _finite(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def _test(t: Any) -> dict[str, Any] | None:
    if t is None:
        return None
    return {"p_value": t.p_value, "ci_low": _finite(t.ci_low), "ci_high": _finite(t.ci_high),
            "confidence": t.confidence, "n_resamples": t.n_resamples, "seed": t.seed}


def _interval_json(c: ChangeInterval | None) -> dict[str, Any] | None:
    """``macro_change``: the change, both intervals with their levels, and which lower end is tested."""
    if c is None:
        return None
    return {"change": _finite(c.change), "low": _finite(c.low), "high": _finite(c.high),
            "confidence": c.confidence, "corrected_low": _finite(c.corrected_low),
            "corrected_high": _finite(c.corrected_high), "corrected_confidence": c.corrected_confidence,
            "correction": c.correction, "decides": c.decides, "tested_low": _finite(c.tested_low)}


def _estimated_json(est: EstimatedChange | None, corrected_level: float) -> dict[str, Any] | None:
    """An estimated measure's change with its intervals (raw and at the corrected level); None for a pooled one."""
    if est is None:
        return None
    lo, hi = est.interval(corrected_level)
    return {"display": est.measure.display(), "change": _finite(est.change), "se": _finite(est.se),
            "confidence": est.confidence, "low": _finite(est.low), "high": _finite(est.high),
            "corrected_level": corrected_level, "corrected_low": _finite(lo), "corrected_high": _finite(hi),
            "n_judged": est.n_judged, "left_out_topics": list(est.left_out),
            "interval": "design variance of the difference, linearised jointly; topics fixed"}


def gate_json(report: GateReport) -> dict[str, Any]:
    """The gate's report as a JSON object at full precision (every diff topic, every rule).

    Top level: the command's ``verdict`` and ``exit_code``, the lineage
    ``header``, the ``leakage`` check, and ``candidates``: one object per
    candidate (always a list, also for one) with its verdict, rules, tests,
    slices and diff list.
    """
    return {
        "verdict": report.verdict,
        "exit_code": report.exit_code,
        "header": report.header(),
        "leakage": None if report.leakage is None else {
            "threshold": report.leakage.threshold, "n": report.leakage.n, "checked": report.leakage.n_checked,
            "too_short": list(report.leakage.too_short),
            "flagged": [{"topic_id": f.topic_id, "doc_id": f.doc_id, "containment": f.containment}
                        for f in report.leakage.flagged]},
        "candidates": [_candidate_json(report, res) for res in report.results],
        "seconds": report.seconds,
    }


def _candidate_json(report: GateReport, res: GateResult) -> dict[str, Any]:
    test = _test
    return {
        "candidate": res.candidate,
        "verdict": res.verdict,
        "exit_code": res.exit_code,
        "rules": [{"kind": r.kind, "rule": r.rule, "subject": r.subject, "verdict": r.verdict,
                   "measured": _finite(r.measured), "threshold": _finite(r.threshold), "op": r.op,
                   "raw": _finite(r.raw), "corrected": _finite(r.corrected), "detail": r.detail,
                   "policy_line": r.line, "unit": r.unit, "interval": _interval_json(r.interval)}
                  for r in res.rules],
        "tests": [{"measure": str(t.measure), "topics": len(t.topics), "mean_baseline": _finite(t.mean_baseline),
                   "mean_candidate": _finite(t.mean_candidate), "bootstrap": test(t.bootstrap),
                   "bootstrap_corrected": test(t.bootstrap_corrected),
                   "p_bootstrap_corrected": t.p_bootstrap_corrected, "permutation": test(t.permutation),
                   "p_permutation_corrected": t.p_permutation_corrected, "wins": t.wins, "losses": t.losses,
                   "ties": t.ties, "estimated": _estimated_json(t.estimated, res.corrected_level)}
                  for t in res.tests],
        "family_size": res.family_size,
        "corrected_level": res.corrected_level,
        "critical_topics": list(res.critical_topics),
        "critical_not_evaluated": list(res.critical_not_evaluated),
        "slices": [{"key": st.key, "measure": str(st.measure), "rows": [
            {"value": r.value, "n_topics": r.n_topics, "too_small": r.too_small, "mean_baseline": _finite(r.mean_a),
             "mean_candidate": _finite(r.mean_b), "bootstrap": test(r.bootstrap),
             "p_corrected": st.p_corrected.get(r.value)} for r in st.rows]} for st in res.slices],
        "topics": list(res.topics),
        "diffs": [{"topic_id": d.topic_id, "critical": d.critical, "baseline": d.baseline, "candidate": d.candidate,
                   "delta": d.delta,
                   "lost": [{"doc_id": doc, "grade": g, "baseline_rank": ra, "candidate_rank": rb,
                             "title": report.titles.get(doc, "")} for doc, g, ra, rb in d.lost],
                   "gained": [{"doc_id": doc, "grade": g, "baseline_rank": ra, "candidate_rank": rb,
                               "title": report.titles.get(doc, "")} for doc, g, ra, rb in d.gained]}
                  for d in res.diffs],
        "n_unchanged": res.n_unchanged,
    }



def gate_summary_lines(report: GateReport | None, markdown: Path | None = None) -> list[str]:
    """A short gate section for the demo's report: the verdict, the rules, the failing rules' details."""
    if report is None:
        return []
    lines = []
    for res in report.results:
        lines.append(f"Release gate: {res.candidate} against {report.baseline} on {report.score.qrels.name}, policy "
                     f"{report.policy.path}: {res.verdict.upper()} (exit {res.exit_code})")
        rows = []
        for r in res.rules:
            m, t = rule_values(r)
            rows.append([r.rule, r.subject, m, t, r.verdict])
        lines += ["  " + s for s in table(["rule", "subject", "measured", "threshold", "verdict"], rows,
                                          left=2).splitlines()]
        for r in res.rules:
            if r.verdict in ("fail", "invalid"):
                lines.append(f"  {r.rule} {r.subject}: {r.detail}")
    if markdown is not None:
        lines.append(f"  Markdown report (for a pull request): {markdown}")
    lines.append("")
    return lines
