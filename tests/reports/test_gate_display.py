"""The gate's rule rows as printed (table, Markdown, the demo's summary) and in JSON: no row reads as a
contradiction (issue 26)."""

from __future__ import annotations

from workbench.reports.gate import rule_values
from workbench.scoring.gate import ChangeInterval, RuleResult

# The demo's bm25-stem against bm25 on R@20: change +0.0327, raw 95% CI [0.0021, 0.0638],
# Holm 97.5% CI [-0.0021, 0.0684]; the corrected lower end is tested against -0.01.
DEMO = ChangeInterval(0.0327, 0.0021, 0.0638, 0.95, -0.0021, 0.0684, 0.975, "holm", "corrected")


def macro(interval: ChangeInterval, bound: float = -0.01) -> RuleResult:
    return RuleResult("macro_change", "R@20", "quality", "pass" if interval.tested_low >= bound else "fail",
                      interval.tested_low, bound, ">=", "", interval=interval)


def test_macro_change_shows_the_change_and_the_tested_interval_and_says_which_end_is_bounded():
    measured, threshold = rule_values(macro(DEMO))
    assert measured == "+0.0327, Holm 97.5% CI [-0.0021, 0.0684]"
    assert threshold == "CI low >= -0.0100"


def test_macro_change_decided_on_the_raw_interval_shows_the_raw_interval():
    raw = ChangeInterval(0.0327, 0.0021, 0.0638, 0.95, -0.0021, 0.0684, 0.975, "holm", "raw")
    assert rule_values(macro(raw)) == ("+0.0327, 95% CI [0.0021, 0.0638]", "CI low >= -0.0100")
    plain = ChangeInterval(-0.02, -0.05, 0.01, 0.95, -0.05, 0.01, 0.95, "none", "corrected")
    assert rule_values(macro(plain)) == ("-0.0200, 95% CI [-0.0500, 0.0100]", "CI low >= -0.0100")


def test_the_lower_end_next_to_its_bound_gets_the_digits_that_show_its_side():
    near = ChangeInterval(0.01, -0.0100004, 0.03, 0.95, -0.0100004, 0.03, 0.95, "none", "raw")
    measured, threshold = rule_values(macro(near))
    assert measured == "+0.0100, 95% CI [-0.0100004, 0.0300]" and threshold == "CI low >= -0.0100000"


def test_a_skipped_macro_change_shows_no_number():
    skipped = RuleResult("macro_change", "R@20", "quality", "skipped", None, -0.01, ">=", "too few topics")
    assert rule_values(skipped) == ("-", ">= -0.0100")


def test_leakage_rows_say_what_the_count_counts():
    excluded = RuleResult("leakage", "queries", "validity", "pass", 1.0, None, "==", "", unit="flagged, excluded")
    assert rule_values(excluded) == ("1 flagged, excluded", "-")
    invalid = RuleResult("leakage", "queries", "validity", "invalid", 2.0, 0.0, "==", "", unit="flagged")
    assert rule_values(invalid) == ("2 flagged", "= 0")
