"""The release gate's rules: a paired comparison of a candidate with a baseline turned into a verdict.

``evaluate_gate(policy, inputs)`` applies a ``GatePolicy`` to two evaluations
of the same qrels (and what the service measured around them) and returns every
rule with its measured value, its threshold and its verdict, then the per-topic
diff list. The verdict of the gate:

* ``invalid`` (exit 2) when any *validity* rule is not met: the comparison
  cannot be trusted, whatever the numbers say. Validity rules: each run's
  completion rate, the identifier audit (judged-relevant ids and run ids in
  the run's collection version), the number of paired topics and their share
  of the eligible topics, leakage (with ``leakage = "invalid"``);
* otherwise ``fail`` (exit 1) when any *quality* rule fails: the macro change
  of a gated measure (lower end of the paired bootstrap CI of candidate -
  baseline below its bound), the permutation test (candidate worse with p <
  alpha), a critical topic that lost a relevant document within K, a slice
  below its floor, or ineligible documents returned (leaks);
* otherwise ``pass`` (exit 0).

**Estimated measures** (``Rhat@k``, ``Rhat_micro@k``, ``Phat@k``: against a
sample's qrels version, ``scoring.estimate_compare``) are gated on their own
interval, not on a bootstrap over topics: the ``macro_change`` rule takes the
change of the estimate (candidate - baseline, both estimated from the same
sampled documents) and its normal interval from the design variance of the
difference, linearised jointly (the covariance of the two estimates is in
it); the lower end, at the policy's level or the family's corrected one as
``decide`` says, must reach the bound. That interval holds the topics fixed:
it answers "is the drop within the bound on these topics, given that only a
sample was judged?". The permutation test does not apply to an estimated
measure (skipped, said so); an estimate with no defined topic makes the rule
invalid. Slices and floors take pooled measures only.

Several candidates can be gated against one baseline at once
(``evaluate_gates``): their gated tests form one family, and the command's
verdict is the worst of theirs.

Statistics are refused (the rules are ``skipped`` and the gate is invalid)
below ``min_topics`` paired topics. With several gated measures the tests form
one family: p-values are adjusted (Holm-Bonferroni by default) and intervals
widened (Bonferroni level), raw and corrected are both kept, and
``policy.decide`` says which decides. Every comparison is made on full-precision
floats; rounding happens only when a report prints them.

Topics: the paired topics are those both runs were evaluated on (the service
scores with ``missing="exclude"``, so a topic one run failed is left out of
both and counted by the completion rule instead of being read as zero recall).

Source:
    Paired release gates, critical-query losses and slice floors: the
    recall-testing design note (../shared/seeds/004_f124302079e96b46.txt);
    Sakai, SIGIR 2006, doi:10.1145/1148170.1148261 (paired bootstrap);
    Smucker, Allan & Carterette, CIKM 2007, doi:10.1145/1321440.1321528
    (randomization test); Holm 1979 (``scoring.multiple``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np

from workbench.errors import ValidationError
from workbench.ranking import natural_key
from workbench.scoring.compare import (
    PairedTest,
    TopicDelta,
    paired_bootstrap_levels,
    paired_permutation_test,
    refusal,
    topic_deltas,
)
from workbench.scoring.estimate import SampledQrels
from workbench.scoring.estimate_compare import EstimatedChange, estimated_change
from workbench.scoring.estimate_run import RunEstimate
from workbench.scoring.evaluate import Evaluation, topic_values
from workbench.scoring.gate_policy import GatePolicy
from workbench.scoring.idaudit import IdAudit, IdCoverage
from workbench.scoring.leakage import LeakageCheck
from workbench.scoring.measures import EstimatedMeasure, Measure, R
from workbench.scoring.multiple import adjust, corrected_confidence
from workbench.scoring.slices import SliceComparison, SliceKey, adjusted_p_values, compare_slices
from workbench.scoring.validity import Completion, TopicCoverage

Verdict = Literal["pass", "fail", "invalid", "skipped"]
RuleKind = Literal["validity", "quality"]

EXIT_CODES: Mapping[str, int] = {"pass": 0, "fail": 1, "invalid": 2}
"""Exit code of each gate verdict (3 is a usage or output error of the command, never a verdict)."""


@dataclass(frozen=True)
class ChangeInterval:
    """The macro change of a gated measure with its paired bootstrap intervals, raw and corrected.

    The ``macro_change`` rule tests one number, the lower end of one of the two
    intervals (``tested_low``), against the policy's bound; reports show the
    change and that interval beside it, so the lower end is never read as the
    change itself.

    Attributes:
        change: mean candidate - mean baseline over the paired topics.
        low, high: the interval at the policy's confidence (raw).
        confidence: that level (e.g. 0.95).
        corrected_low, corrected_high: the same resamples at the corrected level.
        corrected_confidence: the corrected level (e.g. 0.975 for two tests, Bonferroni).
        correction: ``holm``, ``bonferroni`` or ``none`` (the policy's; intervals widen by Bonferroni).
        decides: ``corrected`` or ``raw``: whose lower end the rule tests.

    Example:
        >>> c = ChangeInterval(0.0327, 0.0021, 0.0638, 0.95, -0.0021, 0.0684, 0.975, "holm", "corrected")
        >>> c.tested_low, c.tested_high, c.tested_confidence
        (-0.0021, 0.0684, 0.975)
    """

    change: float
    low: float
    high: float
    confidence: float
    corrected_low: float
    corrected_high: float
    corrected_confidence: float
    correction: str
    decides: Literal["raw", "corrected"]

    @property
    def tested_low(self) -> float:
        """The lower end the rule compares with the bound."""
        return self.corrected_low if self.decides == "corrected" else self.low

    @property
    def tested_high(self) -> float:
        """The upper end of the tested interval."""
        return self.corrected_high if self.decides == "corrected" else self.high

    @property
    def tested_confidence(self) -> float:
        """The level of the tested interval."""
        return self.corrected_confidence if self.decides == "corrected" else self.confidence


@dataclass(frozen=True)
class RuleResult:
    """One rule of the gate, measured.

    Attributes:
        rule: ``completion``, ``id_coverage``, ``run_id_coverage``, ``topics``,
            ``topic_share``, ``leakage``, ``leaks``, ``macro_change``,
            ``permutation``, ``critical`` or ``floor``.
        subject: what it applies to (a run, a measure, ``key=value`` of a slice, "").
        kind: ``validity`` (not met: invalid) or ``quality`` (not met: fail).
        verdict: ``pass``, ``fail``, ``invalid`` or ``skipped``.
        measured: the value the rule tests, at full precision (None when not measured); for
            ``macro_change`` the tested lower end of the interval (``interval`` has the change).
        threshold: the policy's threshold (None when the rule has none, e.g. ``leakage`` under
            ``leakage = "exclude"``: flagged topics are excluded, not counted against a bound).
        op: how ``measured`` must relate to ``threshold`` to pass (``>=``, ``<=``, ``==``, ``>=`` ...).
        detail: what the number is and what it rests on, for people.
        raw: the uncorrected value when ``measured`` is a corrected one (else None).
        corrected: the corrected value (else None).
        line: the policy line of the rule (0 when built in).
        interval: ``macro_change``: the change and both intervals (else None).
        unit: what a count counts, printed after it (``flagged``, ``flagged, excluded``; "" for none).
    """

    rule: str
    subject: str
    kind: RuleKind
    verdict: Verdict
    measured: float | None
    threshold: float | None
    op: str
    detail: str
    raw: float | None = None
    corrected: float | None = None
    line: int = 0
    interval: ChangeInterval | None = None
    unit: str = ""


@dataclass(frozen=True)
class MeasureTest:
    """The paired tests of one gated measure, raw and corrected.

    Attributes:
        measure: the measure.
        topics: paired topics.
        mean_baseline: baseline macro mean over them.
        mean_candidate: candidate macro mean.
        bootstrap: the bootstrap at the policy's level (None: no macro rule or refused).
        bootstrap_corrected: the same resamples at the corrected level (None likewise).
        permutation: the randomization test (None: no permutation rule or refused).
        p_permutation_corrected: its adjusted p-value (None likewise).
        p_bootstrap_corrected: the bootstrap's adjusted p-value (None likewise).
        wins: topics where the candidate is better.
        losses: topics where it is worse.
        ties: topics where they are equal.
        estimated: an estimated measure's change with its interval (``scoring.estimate_compare``; then the
            means are the estimates, ``topics`` the topics both average, and there is no bootstrap or permutation
            test); None for a pooled measure.
    """

    measure: Measure
    topics: tuple[str, ...]
    mean_baseline: float
    mean_candidate: float
    bootstrap: PairedTest | None
    bootstrap_corrected: PairedTest | None
    permutation: PairedTest | None
    p_permutation_corrected: float | None
    p_bootstrap_corrected: float | None
    wins: int
    losses: int
    ties: int
    estimated: EstimatedChange | None = None

    @property
    def mean_change(self) -> float:
        """mean_candidate - mean_baseline."""
        return self.mean_candidate - self.mean_baseline


@dataclass(frozen=True)
class TopicDiff:
    """One topic of the diff list (R@K).

    Attributes:
        topic_id: the topic.
        critical: whether the policy names it critical.
        baseline: the baseline's R@K.
        candidate: the candidate's R@K.
        lost: relevant documents within K for the baseline, not for the candidate:
            (doc_id, grade, baseline rank, candidate rank or None).
        gained: the reverse: (doc_id, grade, baseline rank or None, candidate rank).
    """

    topic_id: str
    critical: bool
    baseline: float
    candidate: float
    lost: tuple[tuple[str, int, int | None, int | None], ...]
    gained: tuple[tuple[str, int, int | None, int | None], ...]

    @property
    def delta(self) -> float:
        """candidate - baseline."""
        return self.candidate - self.baseline


@dataclass(frozen=True)
class SliceTests:
    """Paired comparisons per slice of one key and measure, with adjusted p-values.

    Attributes:
        key: the slice key.
        measure: the measure.
        rows: the overall row, then one per slice.
        p_corrected: slice value -> adjusted bootstrap p-value over the family
            of every tested slice of the gate (too-small slices are not tested).
    """

    key: str
    measure: Measure
    rows: tuple[SliceComparison, ...]
    p_corrected: Mapping[str, float]


@dataclass(frozen=True)
class GateInputs:
    """What the gate's rules are applied to (measured by the service).

    Attributes:
        baseline: the baseline's evaluation (with every ``policy.scored_measures``).
        candidate: the candidate's evaluation, same qrels, threshold and topics.
        completion: each run's completion (baseline, candidate).
        coverage: evaluated topics against the eligible ones.
        audits: the identifier audit, one per collection version (empty when none could be made).
        audit_note: why some or all runs were not audited ("" when all were).
        leakage: the leakage check, or None.
        leakage_note: why there is no leakage check ("" when there is).
        excluded_for_leakage: topics left out of scoring because they were flagged.
        leak_counts: run -> ineligible documents returned, or None when the
            runs carry no eligibility information.
        metadata: topic_id -> topic metadata (critical selectors).
        slice_keys: key -> partition of the evaluated topics.
        estimates: (baseline, candidate) estimates from the judged sample, for the policy's estimated measures
            (None: the qrels are not a sample's).
        sample: that judged sample (None likewise).
    """

    baseline: Evaluation
    candidate: Evaluation
    completion: tuple[Completion, ...]
    coverage: TopicCoverage
    audits: tuple[IdAudit, ...] = ()
    audit_note: str = ""
    leakage: LeakageCheck | None = None
    leakage_note: str = ""
    excluded_for_leakage: tuple[str, ...] = ()
    leak_counts: Mapping[str, int] | None = None
    metadata: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    slice_keys: Mapping[str, SliceKey] = field(default_factory=dict)
    estimates: tuple[RunEstimate, RunEstimate] | None = None
    sample: SampledQrels | None = None


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict with the evidence.

    Attributes:
        verdict: ``pass``, ``fail`` or ``invalid``.
        rules: every rule in report order (validity first).
        tests: the paired tests of each gated measure.
        diffs: per-topic R@K differences, critical topics first, then largest losses;
            topics with no change are left out (``n_unchanged``).
        n_unchanged: paired topics with the same R@K and no lost or gained document
            (critical ones are listed in ``diffs`` all the same).
        critical_topics: topics the policy makes critical, natural order.
        critical_not_evaluated: critical topics that are not among the paired topics.
        slices: per-slice paired tests.
        topics: the paired topics.
        family_size: tests in the multiple-comparison family (gated measures x candidates).
        corrected_level: the corrected confidence level of the intervals.
        policy: the policy applied.
        candidate: the candidate's run name.
    """

    verdict: Verdict
    rules: tuple[RuleResult, ...]
    tests: tuple[MeasureTest, ...]
    diffs: tuple[TopicDiff, ...]
    n_unchanged: int
    critical_topics: tuple[str, ...]
    critical_not_evaluated: tuple[str, ...]
    slices: tuple[SliceTests, ...]
    topics: tuple[str, ...]
    family_size: int
    corrected_level: float
    policy: GatePolicy
    candidate: str = ""

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 2 invalid."""
        return EXIT_CODES[self.verdict]


def _validity_rules(policy: GatePolicy, inputs: GateInputs, paired: int) -> list[RuleResult]:
    v = policy.validity
    rules = []
    for c in inputs.completion:
        parts = [f"{c.n_ok:,} of {c.n_topics:,} evaluated topics answered"]
        if c.n_empty:
            parts.append(f"{c.n_empty:,} empty")
        if c.n_error:
            parts.append(f"{c.n_error:,} error")
        shown = [f"{f.topic_id} ({f.status}{': ' + f.message if f.message else ''})" for f in c.failures[:5]]
        if shown:
            parts.append("e.g. " + ", ".join(shown) + (" ..." if len(c.failures) > 5 else ""))
        rules.append(RuleResult("completion", c.run, "validity", _at_least(c.rate, v.completion, "invalid"),
                                c.rate, v.completion, ">=", "; ".join(parts)))
    if not inputs.audits or inputs.audit_note:
        verdict: Verdict = "invalid" if v.id_audit == "required" else "skipped"
        note = inputs.audit_note or "no collection version to audit the ids against"
        rules.append(RuleResult("id_coverage", "not audited", "validity", verdict, None, v.id_coverage, ">=",
                                note + (" (policy: id_audit = \"required\"; pass --collection or use stored "
                                        "runs or qrels)" if verdict == "invalid" else "")))
    for a in inputs.audits:
        rules.append(RuleResult("id_coverage", f"relevant, version {a.collection_version[:12]}", "validity",
                                _at_least(a.relevant.share, v.id_coverage, "invalid"), a.relevant.share,
                                v.id_coverage, ">=", _coverage_detail(a.relevant, a.collection)))
        for rc in a.runs:
            rules.append(RuleResult("run_id_coverage", rc.what.removeprefix("run "), "validity",
                                    _at_least(rc.share, v.run_id_coverage, "invalid"), rc.share, v.run_id_coverage,
                                    ">=", _coverage_detail(rc, a.collection)))
    rules.append(RuleResult("topics", "paired", "validity", _at_least(paired, policy.min_topics, "invalid"),
                            float(paired), float(policy.min_topics), ">=",
                            f"{paired:,} topics evaluated for both runs" +
                            (f"; {refusal(paired, policy.min_topics)}" if paired < policy.min_topics else "")))
    cov = inputs.coverage
    rules.append(RuleResult("topic_share", cov.topic_set or "qrels", "validity",
                            _at_least(cov.share, policy.min_topic_share, "invalid"), cov.share,
                            policy.min_topic_share, ">=",
                            f"{cov.n_evaluated:,} of {cov.n_eligible:,} eligible topics (|R| > 0"
                            + (f", in topic set {cov.topic_set}" if cov.topic_set else "") + ") evaluated"))
    lk = inputs.leakage
    if v.leakage == "off":
        rules.append(RuleResult("leakage", "queries", "validity", "skipped", None, None, "==",
                                "leakage check off (policy: leakage = \"off\")"))
    elif lk is None:
        rules.append(RuleResult("leakage", "queries", "validity", "skipped", None, 0.0, "==",
                                f"not checked: {inputs.leakage_note or 'no query texts or documents'}"))
    else:
        n = len(lk.flagged)
        flags = ", ".join(f"topic {f.topic_id} ~ document {f.doc_id} ({f.containment:.0%})" for f in lk.flagged[:5])
        # Under "exclude" the flagged topics leave the scoring: there is no bound to meet, so no threshold
        # (a "1" against "= 0" marked pass read as a contradiction, issue 26).
        excluded = v.leakage == "exclude"
        if excluded:
            verdict = "pass"
            what = f"{n} flagged and excluded from scoring" + (f": {flags}" if n else "")
        else:
            verdict = "invalid" if n else "pass"
            what = f"{n} flagged" + (f": {flags}" if n else "")
        more = " ..." if n > 5 else ""
        rules.append(RuleResult("leakage", "queries", "validity", verdict, float(n), None if excluded else 0.0, "==",
                                f"{what}{more}; {lk.n_checked:,} queries checked against {lk.n_documents:,} "
                                f"documents (word {lk.n}-gram containment >= {lk.threshold:g})",
                                unit="flagged, excluded" if excluded and n else "flagged"))
    return rules


def _coverage_detail(c: IdCoverage, collection: str) -> str:
    text = f"{c.n_present:,} of {c.n_ids:,} ids are documents of collection {collection}"
    if c.missing:
        near = {n.doc_id: n for n in c.near_misses}
        shown = []
        for d in c.missing[:5]:
            n = near.get(d)
            shown.append(f"{d} (near miss, {n.rule}: {', '.join(n.matches)})" if n else d)
        text += f"; missing {len(c.missing):,} distinct: {', '.join(shown)}" + (" ..." if len(c.missing) > 5 else "")
    return text


def _at_least(value: float, threshold: float, failing: Verdict) -> Verdict:
    return "pass" if value >= threshold else failing


def evaluate_gate(policy: GatePolicy, inputs: GateInputs) -> GateResult:
    """Apply the policy's rules (see the module docstring) to one candidate and return the verdict.

    Args:
        policy: the parsed policy.
        inputs: the evaluations and the validity measurements.

    Returns:
        The ``GateResult``.

    Raises:
        ValidationError: a measure of the policy is missing from an evaluation,
            or the evaluations use different thresholds.

    Example:
        >>> from workbench.scoring.evaluate import evaluate
        >>> from workbench.scoring.gate_policy import parse_policy
        >>> from workbench.scoring.validity import Completion, TopicCoverage
        >>> q = {str(t): {f"d{t}": 1} for t in range(6)}
        >>> a = evaluate(q, {t: {f"d{t}": 1.0} for t in q}, ["R@1"], run_name="base")
        >>> b = evaluate(q, {t: {f"d{t}": 1.0} for t in q}, ["R@1"], run_name="cand")
        >>> p = parse_policy('[gate]\\nk = 1\\n[validity]\\nid_audit = "when-available"\\n')
        >>> done = tuple(Completion(r, 6, 6, ()) for r in ("base", "cand"))
        >>> evaluate_gate(p, GateInputs(a, b, done, TopicCoverage(6, 6))).verdict
        'pass'
    """
    return evaluate_gates(policy, [inputs])[0]


def evaluate_gates(policy: GatePolicy, inputs: Sequence[GateInputs]) -> tuple[GateResult, ...]:
    """Apply the policy to several candidates against one baseline: one multiple-comparison family.

    The family of the gated tests is every (candidate, gated measure) pair, so
    with c candidates and m measures the p-values are adjusted over c x m tests
    and the intervals are widened to the level 1 - (1 - confidence) / (c x m).
    Slice tests form a family per candidate (they inform, they do not decide).

    Args:
        policy: the parsed policy.
        inputs: one ``GateInputs`` per candidate (same baseline).

    Returns:
        One ``GateResult`` per candidate, in order.

    Raises:
        ValidationError: no candidate, a measure missing from an evaluation, or different thresholds.
    """
    if not inputs:
        raise ValidationError("expected at least one candidate, found none.")
    rk = policy.recall
    for inp in inputs:
        a, b = inp.baseline, inp.candidate
        if a.rel != b.rel:
            raise ValidationError(f"expected both runs scored at the same rel, found {a.rel} and {b.rel}.")
        for m in policy.scored_measures:
            if isinstance(m, EstimatedMeasure):
                if inp.estimates is None or inp.sample is None:
                    raise ValidationError(f"measure {m} is estimated from a judged sample: the gate needs both "
                                          "runs' estimates against a sample's qrels version.")
                continue
            for e in (a, b):
                if m not in e.per_topic:
                    raise ValidationError(f"measure {m} was not computed for run {e.run_name!r}.")

    # -- statistics of the gated measures: one family over candidates and measures -------------
    m_family = len(policy.measures) * len(inputs)
    level = policy.macro.confidence if policy.macro else 0.95
    corrected_level = corrected_confidence(level, m_family, policy.correction)
    raw: list[list[_Row]] = []
    pairs: list[tuple[str, ...]] = []
    for inp in inputs:
        a, b = inp.baseline, inp.candidate
        paired = tuple(t for t in a.topics if t in b.per_topic[rk])
        pairs.append(paired)
        refused = refusal(len(paired), policy.min_topics)
        rows = []
        for m in policy.measures:
            if isinstance(m, EstimatedMeasure):  # its interval decides (module docstring): no paired test
                assert inp.estimates is not None and inp.sample is not None
                rows.append(_Row(m, None, None, None, None, None, estimated_change(
                    inp.estimates[0], inp.estimates[1], inp.sample, m, confidence=level)))
                continue
            va = topic_values(a, m, paired)
            vb = topic_values(b, m, paired)
            boot = boot_c = perm = None
            if not refused and policy.macro is not None:
                boot, boot_c = paired_bootstrap_levels(va, vb, (level, corrected_level),
                                                       n_resamples=policy.macro.resamples, seed=policy.macro.seed)
            if not refused and policy.permutation is not None:
                perm = paired_permutation_test(va, vb, n_resamples=policy.permutation.resamples,
                                               seed=policy.permutation.seed)
            rows.append(_Row(m, va, vb, boot, boot_c, perm, None))
        raw.append(rows)
    flat = [t for rows in raw for t in rows]
    p_perm = iter(_adjusted([t.perm for t in flat], policy.correction))
    p_boot = iter(_adjusted([t.boot for t in flat], policy.correction))
    results = []
    for inp, rows, paired in zip(inputs, raw, pairs, strict=True):
        tests = []
        for row in rows:
            pp, pb = next(p_perm), next(p_boot)
            if row.estimated is not None:
                est = row.estimated
                tests.append(MeasureTest(row.measure, est.topics, est.value_a, est.value_b, None, None, None, pp, pb,
                                         est.wins, est.losses, est.ties, est))
                continue
            assert row.va is not None and row.vb is not None
            d = row.vb - row.va
            tests.append(MeasureTest(
                row.measure, paired, float(row.va.mean()) if len(row.va) else float("nan"),
                float(row.vb.mean()) if len(row.vb) else float("nan"), row.boot, row.boot_c, row.perm, pp, pb,
                int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0)), int(np.count_nonzero(d == 0))))
        results.append(_result(policy, inp, paired, tests, m_family, corrected_level))
    return tuple(results)


class _Row(NamedTuple):
    """One gated measure of one candidate before the family's correction: a pooled measure's per-topic values
    and tests, or an estimated measure's change."""

    measure: Measure
    va: np.ndarray | None
    vb: np.ndarray | None
    boot: PairedTest | None
    boot_c: PairedTest | None
    perm: PairedTest | None
    estimated: EstimatedChange | None


def _result(policy: GatePolicy, inputs: GateInputs, paired: tuple[str, ...], tests: list[MeasureTest],
            m_family: int, corrected_level: float) -> GateResult:
    a, b = inputs.baseline, inputs.candidate
    rk = policy.recall
    rules = _validity_rules(policy, inputs, len(paired))
    rules += _statistics_rules(policy, tests, refusal(len(paired), policy.min_topics), corrected_level)

    # -- critical topics -----------------------------------------------------------------
    deltas = topic_deltas(a, b, rk, paired, topic_values(a, rk, paired).tolist(),
                          topic_values(b, rk, paired).tolist())
    universe = sorted(set(a.topics) | set(b.topics) | set(policy.critical.topics) | set(inputs.metadata),
                      key=natural_key)
    critical = tuple(t for t in universe if policy.critical.selects(t, inputs.metadata.get(t, {})))
    critical_set = set(critical)
    paired_set = set(paired)
    not_evaluated = tuple(t for t in critical if t not in paired_set)
    rules.append(_critical_rule(policy, deltas, critical, not_evaluated))

    # -- slice floors and slice tests ------------------------------------------------------
    slice_tests, floor_rules = _slices(policy, inputs, a, b)
    rules += floor_rules

    # -- leaks (eligibility) --------------------------------------------------------------------
    rules.append(_leak_rule(policy, inputs.leak_counts, b.run_name))

    changed = [d for d in deltas if d.delta != 0 or d.lost or d.gained]
    diffs = [TopicDiff(d.topic_id, d.topic_id in critical_set, d.a, d.b, d.lost, d.gained)
             for d in deltas if d.delta != 0 or d.lost or d.gained or d.topic_id in critical_set]
    diffs.sort(key=lambda d: (not d.critical, d.delta, -len(d.lost), natural_key(d.topic_id)))
    return GateResult(worst(r.verdict for r in rules), tuple(rules), tuple(tests), tuple(diffs),
                      len(deltas) - len(changed), critical, not_evaluated, tuple(slice_tests), paired, m_family,
                      corrected_level, policy, b.run_name)


def depth_notes(policy: GatePolicy, evaluations: Sequence[Evaluation]) -> tuple[str, ...]:
    """One note per run shallower than a cutoff of the policy (R@K, a gated measure, a floor's measure).

    A run returning at most D documents per topic has nothing below rank D: for it R@k = R@D and
    nDCG@k = nDCG@D for every k > D, and P@k counts the missing ranks as non-relevant. The comparison
    stays paired and valid (both runs are measured alike), so this is a note in the report, not an
    ``invalid`` verdict (validity is completion, identifiers, topic counts and leakage), but the gate
    then says nothing about ranks D + 1 .. k.

    Args:
        policy: the gate policy (its ``scored_measures``).
        evaluations: the baseline's and the candidates' evaluations.

    Returns:
        The notes, in run order (empty when every run reaches every cutoff).

    Example:
        A run of depth 100 gated on R@500: ``run 'bm25' returns at most 100 documents per topic, fewer
        than the cutoff of R@500: for it R@500 = R@100 (nothing below rank 100 is measured); ...``
    """
    notes = []
    for e in evaluations:
        depth = max(e.n_results.values(), default=0)
        deeper = [m for m in policy.scored_measures if m.cutoff is not None and m.cutoff > depth]
        if not depth or not deeper:
            continue
        recall = [m for m in deeper if isinstance(m, R)]
        same = (f": for it {' and '.join(f'{m} = {dataclasses.replace(m, cutoff=depth)}' for m in recall)}"
                if recall else "")
        notes.append(f"run {e.run_name!r} returns at most {depth:,} documents per topic, fewer than the cutoff of "
                     f"{', '.join(str(m) for m in deeper)}{same} (nothing below rank {depth:,} is measured); "
                     f"the gate compares the runs' top {depth:,} there: gate runs of depth >= "
                     f"{max(m.cutoff or 0 for m in deeper):,}, or lower the cutoff")
    return tuple(notes)


def worst(verdicts: Iterable[str]) -> Verdict:
    """The combined verdict: invalid if any is invalid, else fail if any fails, else pass.

    Example:
        >>> worst(["pass", "skipped", "fail"]), worst(["fail", "invalid"]), worst([])
        ('fail', 'invalid', 'pass')
    """
    vs = set(verdicts)
    if "invalid" in vs:
        return "invalid"
    if "fail" in vs:
        return "fail"
    return "pass"


def _adjusted(tests: Sequence[PairedTest | None], correction: str) -> list[float | None]:
    ps = [t.p_value for t in tests if t is not None]
    adj = iter(adjust(ps, correction)) if ps else iter(())
    return [next(adj) if t is not None else None for t in tests]


def _statistics_rules(policy: GatePolicy, tests: Sequence[MeasureTest], refused: str,
                      corrected_level: float) -> list[RuleResult]:
    rules = []
    corrected = policy.decide == "corrected"
    name = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "uncorrected"}[policy.correction]
    for t in tests:
        m = str(t.measure)
        if t.estimated is not None:
            rules += _estimated_rules(policy, t.estimated, refused, corrected_level, name, len(tests))
            continue
        change = (f"mean {t.mean_baseline:.4f} -> {t.mean_candidate:.4f} (change {t.mean_change:+.4f}); "
                  f"better on {t.wins}, worse on {t.losses}, equal on {t.ties}")
        if policy.macro is not None:
            bound = policy.macro.bound(t.measure)
            if refused or t.bootstrap is None or t.bootstrap_corrected is None:
                rules.append(RuleResult("macro_change", m, "quality", "skipped", None, bound, ">=",
                                        refused or "no bootstrap", line=policy.macro.line))
            else:
                raw, cor = t.bootstrap, t.bootstrap_corrected
                decisive = cor if corrected else raw
                assert decisive.ci_low is not None and raw.ci_low is not None and cor.ci_low is not None
                assert raw.ci_high is not None and cor.ci_high is not None
                detail = (f"{change}; {_pct(raw.confidence)} CI [{raw.ci_low:.4f}, {raw.ci_high:.4f}], "
                          f"{name} {_pct(cor.confidence)} CI [{cor.ci_low:.4f}, {cor.ci_high:.4f}] over "
                          f"{len(tests)} gated measure(s); {raw.n_resamples:,} resamples, seed {raw.seed}; "
                          f"decides: {'corrected' if corrected else 'raw'} lower end")
                interval = ChangeInterval(t.mean_change, raw.ci_low, raw.ci_high, raw.confidence, cor.ci_low,
                                          cor.ci_high, cor.confidence, policy.correction,
                                          "corrected" if corrected else "raw")
                rules.append(RuleResult("macro_change", m, "quality",
                                        "pass" if decisive.ci_low >= bound else "fail", decisive.ci_low, bound, ">=",
                                        detail, raw=raw.ci_low, corrected=cor.ci_low, line=policy.macro.line,
                                        interval=interval))
        if policy.permutation is not None:
            alpha = policy.permutation.alpha
            if refused or t.permutation is None or t.p_permutation_corrected is None:
                rules.append(RuleResult("permutation", m, "quality", "skipped", None, alpha, ">=",
                                        refused or "no test", line=policy.permutation.line))
            else:
                p_raw, p_cor = t.permutation.p_value, t.p_permutation_corrected
                p = p_cor if corrected else p_raw
                worse = t.permutation.mean_difference < 0
                verdict: Verdict = "fail" if worse and p < alpha else "pass"
                detail = (f"two-sided p = {p_raw:.4g} raw, {p_cor:.4g} {name}; candidate "
                          f"{'worse' if worse else 'not worse'} (change {t.permutation.mean_difference:+.4f}); "
                          f"fails only when worse and p < alpha; {t.permutation.n_resamples:,} resamples, "
                          f"seed {t.permutation.seed}; decides: {'corrected' if corrected else 'raw'} p")
                rules.append(RuleResult("permutation", m, "quality", verdict, p, alpha, ">=",
                                        detail, raw=p_raw, corrected=p_cor, line=policy.permutation.line))
    return rules


def _estimated_rules(policy: GatePolicy, est: EstimatedChange, refused: str, corrected_level: float, name: str,
                     n_tests: int) -> list[RuleResult]:
    """The rules of an estimated gated measure: ``macro_change`` on the lower end of the interval of the change of
    the estimate (module docstring); the permutation test does not apply to it (skipped, said so)."""
    rules = []
    m = str(est.measure)
    corrected = policy.decide == "corrected"
    if policy.macro is not None:
        bound = policy.macro.bound(est.measure)
        if refused:
            rules.append(RuleResult("macro_change", m, "quality", "skipped", None, bound, ">=", refused,
                                    line=policy.macro.line))
        elif not est.topics or math.isnan(est.se):
            rules.append(RuleResult("macro_change", m, "quality", "invalid", None, bound, ">=",
                                    f"no topic has a defined estimate of {est.measure.display()} for both runs "
                                    "(every topic undefined or R̂ = 0): nothing to gate on", line=policy.macro.line))
        else:
            raw_low, raw_high = est.low, est.high
            cor_low, cor_high = est.interval(corrected_level)
            decisive = cor_low if corrected else raw_low
            detail = (f"estimated {est.measure.display()} {est.value_a:.4f} -> {est.value_b:.4f} (change "
                      f"{est.change:+.4f}) over {len(est.topics):,} topics, {est.n_judged:,} judged sampled "
                      f"documents; {_pct(est.confidence)} interval of the change [{raw_low:.4f}, {raw_high:.4f}], "
                      f"{name} {_pct(corrected_level)} [{cor_low:.4f}, {cor_high:.4f}] over {n_tests} gated measure(s); "
                      f"se {est.se:.4g}: the design variance of the difference, linearised jointly (both runs "
                      f"estimated from the same sampled documents), the topics held fixed; decides: "
                      f"{'corrected' if corrected else 'raw'} lower end")
            rules.append(RuleResult("macro_change", m, "quality", "pass" if decisive >= bound else "fail", decisive,
                                    bound, ">=", detail, raw=raw_low, corrected=cor_low, line=policy.macro.line))
    if policy.permutation is not None:
        rules.append(RuleResult("permutation", m, "quality", "skipped", None, policy.permutation.alpha, ">=",
                                f"{m} is estimated from a judged sample: its interval decides (macro_change); the "
                                "permutation test is over per-topic values of pooled measures",
                                line=policy.permutation.line))
    return rules


def _pct(level: float) -> str:
    x = 100 * level
    return f"{x:.0f}%" if abs(x - round(x)) < 1e-9 else f"{x:.4g}%"


def _critical_rule(policy: GatePolicy, deltas: Sequence[TopicDelta], critical: Sequence[str],
                   not_evaluated: Sequence[str]) -> RuleResult:
    k = policy.k
    if not critical:
        return RuleResult("critical", f"R@{k}", "quality", "skipped", None, 0.0, "==",
                          "no critical topics in the policy" if not policy.critical.topics and not policy.critical.where
                          else "no topic matches the policy's critical selector", line=policy.critical.line)
    cset = set(critical)
    losing = [d for d in deltas if d.topic_id in cset and d.lost]
    n_lost = sum(len(d.lost) for d in losing)
    parts = [f"{len(critical) - len(not_evaluated)} critical topic(s) evaluated"]
    if losing:
        parts.append("lost within K: " + "; ".join(
            f"topic {d.topic_id}: " + ", ".join(f"{doc} (baseline rank {ra})" for doc, _, ra, _ in d.lost)
            for d in losing[:5]) + (" ..." if len(losing) > 5 else ""))
    if not_evaluated:
        parts.append(f"not evaluated (not in the qrels, |R| = 0, excluded or outside the topic set): "
                     f"{', '.join(not_evaluated[:10])}" + (" ..." if len(not_evaluated) > 10 else ""))
    parts.append("any lost relevant document fails, whatever the averages")
    # Critical topics named but none evaluated: the rule checked nothing, so it cannot pass (invalid, exit 2).
    verdict: Verdict = "fail" if n_lost else "invalid" if len(not_evaluated) == len(critical) else "pass"
    return RuleResult("critical", f"R@{k}", "quality", verdict, float(n_lost), 0.0, "==",
                      "; ".join(parts), line=policy.critical.line)


def _slices(policy: GatePolicy, inputs: GateInputs, a: Evaluation,
            b: Evaluation) -> tuple[list[SliceTests], list[RuleResult]]:
    rows_by: list[tuple[str, Measure, tuple[SliceComparison, ...]]] = []
    measures = [m for m in dict.fromkeys([policy.recall, *policy.measures]) if not isinstance(m, EstimatedMeasure)]
    resamples = policy.macro.resamples if policy.macro else 1_000
    seed = policy.macro.seed if policy.macro else 0
    level = policy.macro.confidence if policy.macro else 0.95
    for key in policy.slices:
        sk = inputs.slice_keys.get(key)
        if sk is None:
            continue
        for m in measures:
            rows_by.append((key, m, compare_slices(a, b, m, sk, min_topics=max(2, policy.slice_min_topics),
                                                   n_resamples=resamples, seed=seed, confidence=level,
                                                   permutation=False, test_overall=False)))
    # One family: every tested slice row of the gate (the overall rows are the gated tests, not slices).
    flat = [r for _, _, rows in rows_by for r in rows]
    adj = iter(adjusted_p_values(flat, policy.correction, "bootstrap"))
    slice_tests = []
    for key, m, rows in rows_by:
        ps = [next(adj) for _ in rows]
        slice_tests.append(SliceTests(key, m, rows, {r.value: p for r, p in zip(rows, ps, strict=True)
                                                      if p is not None}))

    rules = []
    for f in policy.floors:
        sk = inputs.slice_keys.get(f.by)
        if sk is None:
            rules.append(RuleResult("floor", f"{f.by}", "validity", "invalid", None, f.minimum, ">=",
                                    f"slice key {f.by!r} could not be built", line=f.line))
            continue
        groups: dict[str, list[str]] = {}
        for t in b.topics:
            groups.setdefault(sk.value(t), []).append(t)
        values = list(f.values) if f.values else [v for v in sk.order if v in groups] + sorted(
            (v for v in groups if v not in sk.order), key=natural_key)
        for value in values:
            ts = groups.get(value, [])
            subject = f"{f.by}={value} {f.measure}"
            if not ts:
                rules.append(RuleResult("floor", subject, "quality", "skipped", None, f.minimum, ">=",
                                        "no evaluated topic in this slice", line=f.line))
                continue
            mean = float(np.mean(topic_values(b, f.measure, ts)))
            if len(ts) < f.min_topics:
                rules.append(RuleResult("floor", subject, "quality", "skipped", mean, f.minimum, ">=",
                                        f"{len(ts)} topic(s): too small for a verdict (min_topics = {f.min_topics})",
                                        line=f.line))
                continue
            rules.append(RuleResult("floor", subject, "quality", "pass" if mean >= f.minimum else "fail", mean,
                                    f.minimum, ">=", f"candidate macro {f.measure} over {len(ts)} topics",
                                    line=f.line))
    return slice_tests, rules


def _leak_rule(policy: GatePolicy, counts: Mapping[str, int] | None, candidate: str) -> RuleResult:
    if policy.validity.leaks == "off":
        return RuleResult("leaks", candidate, "quality", "skipped", None, None, "==",
                          "eligibility leak check off (policy: leaks = \"off\")")
    if counts is None or candidate not in counts:
        return RuleResult("leaks", candidate, "quality", "skipped", None, 0.0, "==",
                          "the run's scores carry no eligibility leak count (no metadata filters)")
    n = counts[candidate]
    detail = ", ".join(f"{run}: {c:,}" for run, c in counts.items())
    return RuleResult("leaks", candidate, "quality", "fail" if n else "pass", float(n), 0.0, "==",
                      f"ineligible documents returned for filtered topics ({detail}); the candidate's count decides")
