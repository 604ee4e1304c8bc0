"""The gate's rules on constructed runs: each rule passes and fails; validity beats quality.

Runs are built so every expected value can be written by hand: 20 topics, two
relevant documents each (``a<t>``, ``b<t>``), K = 2.
"""

from __future__ import annotations

import pytest

from workbench.scoring.evaluate import evaluate
from workbench.scoring.gate import GateInputs, evaluate_gate
from workbench.scoring.gate_policy import parse_policy
from workbench.scoring.idaudit import IdAudit, IdCoverage
from workbench.scoring.leakage import LeakageCheck, LeakFlag
from workbench.scoring.slices import SliceKey
from workbench.scoring.validity import Completion, TopicCoverage, TopicFailure

TOPICS = [str(t) for t in range(1, 21)]
QRELS = {t: {f"a{t}": 1, f"b{t}": 1} for t in TOPICS}
BOTH = {t: {f"a{t}": 2.0, f"b{t}": 1.0} for t in TOPICS}             # R@2 = 1 everywhere
ONLY_A = {t: {f"a{t}": 2.0, f"x{t}": 1.0, f"b{t}": 0.5} for t in TOPICS}  # b at rank 3: R@2 = 1/2

BASE_POLICY = """
[gate]
k = 2
measures = ["R@2"]
min_topics = 5
[macro]
min_ci_low = -0.01
resamples = 2000
"""


def policy(extra: str = "", base: str = BASE_POLICY):
    return parse_policy(base + extra, "gate.toml")


def evals(run_a, run_b, measures=("R@2",)):
    return (evaluate(QRELS, run_a, list(measures), run_name="base"),
            evaluate(QRELS, run_b, list(measures), run_name="cand"))


def inputs(a, b, **kw):
    n = len(a.topics)
    audit = IdAudit("c", "v" * 64, IdCoverage("relevant", 2 * n, 2 * n, (), (), 0),
                    (IdCoverage("run base", 40, 40, (), (), 0), IdCoverage("run cand", 40, 40, (), (), 0)))
    args = dict(baseline=a, candidate=b, completion=(Completion("base", n, n, ()), Completion("cand", n, n, ())),
                coverage=TopicCoverage(n, n), audits=(audit,))
    args.update(kw)
    return GateInputs(**args)


def rule(result, name, subject=None):
    hits = [r for r in result.rules if r.rule == name and (subject is None or r.subject == subject)]
    assert len(hits) == 1, [(r.rule, r.subject) for r in result.rules]
    return hits[0]


def test_identical_runs_pass_every_rule_and_exit_0():
    a, b = evals(BOTH, BOTH)
    res = evaluate_gate(policy(), inputs(a, b))
    assert res.verdict == "pass" and res.exit_code == 0
    macro = rule(res, "macro_change")
    assert macro.verdict == "pass" and macro.measured == 0.0 and macro.threshold == -0.01
    assert res.diffs == () and res.n_unchanged == 20


def test_macro_change_fails_when_the_ci_lower_end_is_below_the_bound():
    a, b = evals(BOTH, ONLY_A)           # every topic drops from 1 to 1/2: every resample mean is -1/2
    res = evaluate_gate(policy(), inputs(a, b))
    macro = rule(res, "macro_change")
    assert macro.verdict == "fail" and macro.measured == pytest.approx(-0.5)
    assert res.verdict == "fail" and res.exit_code == 1
    assert res.tests[0].mean_change == pytest.approx(-0.5)


def test_macro_change_bound_is_inclusive_and_compared_at_full_precision():
    a, b = evals(BOTH, BOTH)
    at_bound = evaluate_gate(policy(base=BASE_POLICY.replace("-0.01", "0.0")), inputs(a, b))
    assert rule(at_bound, "macro_change").verdict == "pass"           # 0.0 >= 0.0
    above = evaluate_gate(policy(base=BASE_POLICY.replace("-0.01", "1e-12")), inputs(a, b))
    assert rule(above, "macro_change").verdict == "fail"              # 0.0 < 1e-12: no rounding


def test_permutation_rule_fails_only_when_the_candidate_is_significantly_worse():
    worse = {t: (ONLY_A[t] if int(t) <= 10 else BOTH[t]) for t in TOPICS}    # 10 of 20 topics lose 1/2
    a, b = evals(BOTH, worse)
    p = policy("[permutation]\nalpha = 0.05\nresamples = 5000\n")
    res = evaluate_gate(p, inputs(a, b))
    perm = rule(res, "permutation")
    # Randomization test on d = (-1/2 x 10, 0 x 10): |mean| >= 1/4 only when all ten signs are negative
    # or all positive: p = 2 / 2^10 (exact enumeration is approximated by 5,000 resamples).
    assert perm.verdict == "fail" and perm.measured == pytest.approx(2 / 2**10, abs=0.003)
    better = evaluate_gate(p, inputs(*evals(worse, BOTH)))
    assert rule(better, "permutation").verdict == "pass"              # significant, but better


def test_critical_topic_loss_fails_even_with_a_positive_significant_macro_change():
    # Baseline finds a<t> only; the candidate finds both on every topic but topic 3, where it ranks b3
    # first and pushes a3 to rank 3: R@2 is 1/2 for both there, but a3 is lost.
    cand = {t: BOTH[t] for t in TOPICS}
    cand["3"] = {"b3": 3.0, "x3": 2.0, "a3": 1.0}
    a, b = evals(ONLY_A, cand)
    p = policy('[critical]\ntopics = ["3"]\n[permutation]\nalpha = 0.05\n')
    res = evaluate_gate(p, inputs(a, b))
    macro = rule(res, "macro_change")
    assert macro.verdict == "pass" and macro.measured > 0                       # clearly better on average
    assert res.tests[0].permutation.p_value < 0.001
    crit = rule(res, "critical")
    assert crit.verdict == "fail" and crit.measured == 1.0
    assert "a3 (baseline rank 1)" in crit.detail
    assert res.verdict == "fail"
    first = res.diffs[0]                                                       # critical topics first
    assert (first.topic_id, first.critical, first.delta) == ("3", True, 0.0)
    assert first.lost == (("a3", 1, 1, 3),) and first.gained == (("b3", 1, 3, 1),)


def test_critical_topics_by_metadata_selector_and_no_loss_passes():
    a, b = evals(BOTH, BOTH)
    p = policy('[critical]\nwhere = { priority = "critical" }\n')
    meta = {"4": {"priority": "critical"}, "5": {"priority": "low"}}
    res = evaluate_gate(p, inputs(a, b, metadata=meta))
    assert res.critical_topics == ("4",)
    assert rule(res, "critical").verdict == "pass"
    assert res.diffs[0].topic_id == "4" and res.diffs[0].critical      # listed though unchanged


def test_critical_topics_none_evaluated_make_the_rule_invalid_not_pass():
    """A policy naming critical topics none of which is paired (not in the qrels, excluded, ...) checked nothing:
    the rule is invalid (the gate exits 2), never a pass (fresh-user finding: "0 critical evaluated ... pass")."""
    a, b = evals(BOTH, BOTH)
    res = evaluate_gate(policy('[critical]\ntopics = ["nosuch", "other"]\n'), inputs(a, b))
    crit = rule(res, "critical")
    assert (crit.verdict, crit.measured) == ("invalid", 0.0)
    assert crit.detail.startswith("0 critical topic(s) evaluated")
    assert res.critical_not_evaluated == ("nosuch", "other") and res.exit_code == 2
    some = evaluate_gate(policy('[critical]\ntopics = ["4", "nosuch"]\n'), inputs(a, b))
    assert rule(some, "critical").verdict == "pass"                 # topic 4 evaluated, nothing lost


def test_diff_list_sorts_critical_first_then_largest_losses():
    cand = dict(BOTH)
    cand["7"] = {"x7": 1.0}                                   # -1
    cand["9"] = ONLY_A["9"]                                   # -1/2
    cand["2"] = ONLY_A["2"]                                   # -1/2, critical
    a, b = evals(BOTH, cand)
    res = evaluate_gate(policy('[critical]\ntopics = ["2"]\n'), inputs(a, b))
    assert [(d.topic_id, d.delta) for d in res.diffs] == [("2", -0.5), ("7", -1.0), ("9", -0.5)]
    assert res.n_unchanged == 17


def test_slice_floor_passes_and_fails_and_small_slices_get_no_verdict():
    cand = {t: (ONLY_A[t] if int(t) <= 6 else BOTH[t]) for t in TOPICS}
    a, b = evals(BOTH, cand)
    key = SliceKey("intent", "test", {t: ("nav" if int(t) <= 6 else "info" if int(t) <= 18 else "rare")
                                      for t in TOPICS}, ("info", "nav", "rare"))
    p = policy('[[floor]]\nby = "intent"\nmin = 0.75\n')
    res = evaluate_gate(p, inputs(a, b, slice_keys={"intent": key}))
    assert rule(res, "floor", "intent=info R@2").verdict == "pass"        # 12 topics at 1.0
    nav = rule(res, "floor", "intent=nav R@2")
    assert nav.verdict == "fail" and nav.measured == 0.5                   # 6 topics at 1/2 < 0.75
    rare = rule(res, "floor", "intent=rare R@2")
    assert rare.verdict == "skipped" and rare.measured == 1.0             # 2 topics < min_topics 5
    assert res.verdict == "fail"


def test_incomplete_candidate_is_invalid_not_failed():
    a, b = evals(BOTH, ONLY_A)                                     # would fail the macro rule
    failures = tuple(TopicFailure(t, "error", "timeout", 30000.0) for t in ("1", "2"))
    comp = (Completion("base", 20, 20, ()), Completion("cand", 20, 18, failures))
    res = evaluate_gate(policy(), inputs(a, b, completion=comp))
    c = rule(res, "completion", "cand")
    assert c.verdict == "invalid" and c.measured == 18 / 20 and "1 (error: timeout)" in c.detail
    assert rule(res, "macro_change").verdict == "fail"
    assert res.verdict == "invalid" and res.exit_code == 2


def test_completion_threshold_from_the_policy():
    a, b = evals(BOTH, BOTH)
    comp = (Completion("base", 20, 20, ()), Completion("cand", 20, 19, (TopicFailure("1", "empty", "", None),)))
    strict = evaluate_gate(policy(), inputs(a, b, completion=comp))
    assert rule(strict, "completion", "cand").verdict == "invalid"
    lenient = evaluate_gate(policy("[validity]\ncompletion = 0.95\n"), inputs(a, b, completion=comp))
    assert rule(lenient, "completion", "cand").verdict == "pass"            # 0.95 >= 0.95


def test_id_coverage_below_threshold_is_invalid_and_names_near_misses():
    from workbench.scoring.idaudit import NearMiss

    a, b = evals(BOTH, BOTH)
    rel = IdCoverage("relevant", 40, 39, ("A1",), (NearMiss("A1", "case", ("a1",)),), 1)
    audit = IdAudit("c", "f" * 64, rel, (IdCoverage("run cand", 40, 40, (), (), 0),))
    res = evaluate_gate(policy(), inputs(a, b, audits=(audit,)))
    r = rule(res, "id_coverage")
    assert r.verdict == "invalid" and r.measured == 39 / 40 and "A1 (near miss, case: a1)" in r.detail
    assert res.verdict == "invalid"


def test_run_id_coverage_and_missing_audit():
    a, b = evals(BOTH, BOTH)
    audit = IdAudit("c", "f" * 64, IdCoverage("relevant", 40, 40, (), (), 0),
                    (IdCoverage("run cand", 50, 45, ("z",), (), 1),))
    res = evaluate_gate(policy(), inputs(a, b, audits=(audit,)))
    assert rule(res, "run_id_coverage", "cand").verdict == "invalid"
    none = evaluate_gate(policy(), inputs(a, b, audits=(), audit_note="files only"))
    assert rule(none, "id_coverage").verdict == "invalid"                  # id_audit = "required" (default)
    relaxed = evaluate_gate(policy('[validity]\nid_audit = "when-available"\n'),
                            inputs(a, b, audits=(), audit_note="files only"))
    assert rule(relaxed, "id_coverage").verdict == "skipped" and relaxed.verdict == "pass"


def test_too_few_paired_topics_refuse_statistics_and_make_the_gate_invalid():
    q = {t: QRELS[t] for t in ("1", "2", "3")}
    a = evaluate(q, {t: BOTH[t] for t in q}, ["R@2"], run_name="base")
    b = evaluate(q, {t: ONLY_A[t] for t in q}, ["R@2"], run_name="cand")
    res = evaluate_gate(policy(), inputs(a, b))
    topics = rule(res, "topics")
    assert topics.verdict == "invalid" and topics.measured == 3 and "refused" in topics.detail
    assert rule(res, "macro_change").verdict == "skipped"
    assert res.tests[0].bootstrap is None and res.verdict == "invalid"


def test_topic_share_below_the_policy_minimum_is_invalid():
    a, b = evals(BOTH, BOTH)
    res = evaluate_gate(policy(), inputs(a, b, coverage=TopicCoverage(40, 20)))
    share = rule(res, "topic_share")
    assert share.verdict == "invalid" and share.measured == 0.5 and share.threshold == 0.9


def test_leakage_invalid_or_excluded_per_policy():
    a, b = evals(BOTH, BOTH)
    check = LeakageCheck((LeakFlag("4", "d9", 1.0, 5),), 20, (), 0.8, 3, 100)
    res = evaluate_gate(policy(), inputs(a, b, leakage=check))
    assert rule(res, "leakage").verdict == "invalid" and "topic 4 ~ document d9" in rule(res, "leakage").detail
    ok = evaluate_gate(policy('[validity]\nleakage = "exclude"\n'), inputs(a, b, leakage=check))
    assert rule(ok, "leakage").verdict == "pass" and "excluded" in rule(ok, "leakage").detail
    clean = LeakageCheck((), 20, (), 0.8, 3, 100)
    assert rule(evaluate_gate(policy(), inputs(a, b, leakage=clean)), "leakage").verdict == "pass"


def test_leakage_under_exclude_has_no_threshold_and_says_flagged_excluded():
    # Issue 26: under "exclude" the row read "1" against "= 0" and passed, a contradiction on its face.
    a, b = evals(BOTH, BOTH)
    check = LeakageCheck((LeakFlag("4", "d9", 1.0, 5),), 20, (), 0.8, 3, 100)
    ok = rule(evaluate_gate(policy('[validity]\nleakage = "exclude"\n'), inputs(a, b, leakage=check)), "leakage")
    assert (ok.verdict, ok.measured, ok.threshold, ok.unit) == ("pass", 1.0, None, "flagged, excluded")
    bad = rule(evaluate_gate(policy(), inputs(a, b, leakage=check)), "leakage")
    assert (bad.verdict, bad.measured, bad.threshold, bad.unit) == ("invalid", 1.0, 0.0, "flagged")


def test_macro_change_carries_the_change_and_both_intervals_and_tests_the_decisive_lower_end():
    # Issue 26: the rule's number is the lower end of an interval; the change itself travels with it.
    worse = {t: (ONLY_A[t] if int(t) <= 4 else BOTH[t]) for t in TOPICS}   # 4 of 20 topics drop by 1/2
    a, b = evals(BOTH, worse, ("R@2", "P@2"))
    text = BASE_POLICY.replace('measures = ["R@2"]', 'measures = ["R@2", "P@2"]')
    for decide in ("corrected", "raw"):
        res = evaluate_gate(parse_policy(text.replace("[gate]", f'[gate]\ndecide = "{decide}"'), "g.toml"),
                            inputs(a, b))
        for t in res.tests:
            r = rule(res, "macro_change", str(t.measure))
            c = r.interval
            assert c.change == t.mean_change == pytest.approx(-4 * 0.5 / 20)
            assert (c.low, c.high, c.confidence) == (t.bootstrap.ci_low, t.bootstrap.ci_high, 0.95)
            assert (c.corrected_low, c.corrected_high) == (t.bootstrap_corrected.ci_low, t.bootstrap_corrected.ci_high)
            assert c.corrected_confidence == pytest.approx(1 - 0.05 / 2) and c.correction == "holm"
            assert c.decides == decide and r.measured == c.tested_low
            assert c.tested_low == (c.corrected_low if decide == "corrected" else c.low)
            assert c.low <= c.change <= c.high


def test_eligibility_leaks_fail_the_candidate_when_counted():
    a, b = evals(BOTH, BOTH)
    assert rule(evaluate_gate(policy(), inputs(a, b)), "leaks").verdict == "skipped"
    fail = evaluate_gate(policy(), inputs(a, b, leak_counts={"base": 0, "cand": 3}))
    assert rule(fail, "leaks").verdict == "fail" and rule(fail, "leaks").measured == 3
    base_only = evaluate_gate(policy(), inputs(a, b, leak_counts={"base": 2, "cand": 0}))
    assert rule(base_only, "leaks").verdict == "pass"


def test_several_measures_are_one_family_raw_and_corrected_side_by_side():
    worse = {t: (ONLY_A[t] if int(t) <= 10 else BOTH[t]) for t in TOPICS}
    a, b = evals(BOTH, worse, ("R@2", "P@2"))
    text = BASE_POLICY.replace('measures = ["R@2"]', 'measures = ["R@2", "P@2"]')
    res = evaluate_gate(parse_policy(text + "[permutation]\nalpha = 0.05\n", "g.toml"), inputs(a, b))
    assert res.family_size == 2 and res.corrected_level == pytest.approx(1 - 0.05 / 2)
    for t in res.tests:
        assert t.bootstrap.confidence == 0.95 and t.bootstrap_corrected.confidence == pytest.approx(0.975)
        assert t.bootstrap_corrected.ci_low <= t.bootstrap.ci_low                 # the wider interval
    # Holm over two equal p-values: both become min(1, 2p).
    p_r, p_p = (t.permutation.p_value for t in res.tests)
    assert res.tests[0].p_permutation_corrected == pytest.approx(min(1.0, 2 * min(p_r, p_p)))
    perm = [r for r in res.rules if r.rule == "permutation"]
    assert all(r.raw is not None and r.corrected is not None and r.measured == r.corrected for r in perm)
    raw = evaluate_gate(parse_policy(text.replace("[gate]", '[gate]\ndecide = "raw"') + "[permutation]\nalpha = 0.05\n",
                                     "g.toml"), inputs(a, b))
    assert all(r.measured == r.raw for r in raw.rules if r.rule in ("permutation", "macro_change"))
