"""Pure validity rules: Holm-Bonferroni, ID audit near misses, completion, subset notice, leakage."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import UnknownNameError, ValidationError
from workbench.scoring.compare import paired_bootstrap, paired_bootstrap_levels, refusal
from workbench.scoring.idaudit import coverage, difference, near_misses, strip_prefix, strip_zeros
from workbench.scoring.leakage import near_copies
from workbench.scoring.multiple import adjust, bonferroni, corrected_confidence, holm
from workbench.scoring.validity import TopicCoverage, completion


def test_holm_step_down_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> max so far 0.06)
    assert holm(p) == pytest.approx((0.03, 0.06, 0.06, 0.02))
    assert bonferroni(p) == pytest.approx((0.04, 0.16, 0.12, 0.02))
    assert adjust(p, "none") == tuple(p)
    assert holm([0.6, 0.9]) == (1.0, 1.0)                   # capped at 1
    with pytest.raises(ValidationError):
        holm([1.5])
    with pytest.raises(UnknownNameError, match="bonferroni, holm, none"):
        adjust(p, "sidak")


def test_corrected_interval_level_is_bonferroni():
    assert corrected_confidence(0.95, 4, "holm") == pytest.approx(1 - 0.05 / 4)
    assert corrected_confidence(0.95, 4, "none") == 0.95
    assert corrected_confidence(0.9, 1, "holm") == 0.9


def test_bootstrap_levels_share_one_draw_and_match_single_level_calls():
    rng = np.random.default_rng(1)
    a = rng.random(50)
    b = a + rng.normal(0.02, 0.1, 50)
    raw, wide = paired_bootstrap_levels(a, b, (0.95, 0.99), n_resamples=3000, seed=7)
    assert raw == paired_bootstrap(a, b, n_resamples=3000, seed=7, confidence=0.95)
    assert wide == paired_bootstrap(a, b, n_resamples=3000, seed=7, confidence=0.99)
    assert wide.ci_low < raw.ci_low < raw.ci_high < wide.ci_high and raw.p_value == wide.p_value


def test_refusal_below_the_minimum_topics():
    assert refusal(4, 5) == "paired statistics refused: 4 topics, fewer than the 5 required"
    assert refusal(1, 1) == "paired statistics refused: 1 topic, fewer than the 2 required"
    assert refusal(5, 5) == ""


@pytest.mark.parametrize("missing, collection, rule, match", [
    # each kind alone
    ("D12", ["d12", "d13"], "case", "d12"),
    ("doc0042", ["doc42", "doc43"], "zeros", "doc42"),
    ("0007", ["7"], "zeros", "7"),
    ("msmarco_passage_31", ["31", "310"], "prefix", "31"),
    ("doc:42", ["D-42"], "prefix", "D-42"),                  # the letters go with the prefix: no case difference left
    # two kinds at once (issue 26: D007 ~ d7 was labelled prefix)
    ("D007", ["d7", "d8"], "case+zeros", "d7"),
    ("d7", ["D007"], "case+zeros", "D007"),
    ("MS_3A", ["3a"], "case+prefix", "3a"),
    ("31", ["MARCO-0031"], "zeros+prefix", "MARCO-0031"),
    ("CRAN:007", ["cran-7"], "zeros+prefix", "cran-7"),
    # all three
    ("MS_07A", ["7a"], "case+zeros+prefix", "7a"),
])
def test_near_misses_by_rule(missing, collection, rule, match):
    (nm,) = near_misses([missing], collection)
    assert (nm.doc_id, nm.rule, nm.matches) == (missing, rule, (match,))
    assert difference(missing, match) == rule


def test_a_near_miss_keeps_the_matches_of_its_fewest_kinds():
    # "D007" is d007 by case alone, d7 by case and zeros, and 7 by all three: only d007 is its near miss.
    (nm,) = near_misses(["D007"], ["7", "d7", "d007", "x1"])
    assert (nm.rule, nm.matches) == ("case", ("d007",))
    (nm,) = near_misses(["D007"], ["7", "d7"])
    assert (nm.rule, nm.matches) == ("case+zeros", ("d7",))
    assert difference("a1", "b2") is None and difference("doc1", "doc10") is None


def test_near_misses_first_rule_wins_and_unrelated_ids_have_none():
    # "A07" matches "a07" by case before "a7" by zeros would be tried.
    (nm,) = near_misses(["A07", "zzz"], ["a07", "a7", "b1"])
    assert (nm.doc_id, nm.rule, nm.matches) == ("A07", "case", ("a07",))
    assert strip_zeros("v2.010") == "v2.10" and strip_prefix("ABC") == "abc"


def test_coverage_counts_pairs_and_lists_distinct_missing_ids():
    called = []

    def ids():
        called.append(1)
        return ["d1", "d2"]

    ok = coverage("relevant", ["d1", "d2", "d1"], set(), ids)
    assert (ok.n_ids, ok.n_present, ok.share, ok.missing) == (3, 3, 1.0, ())
    assert called == []                                      # the collection is read only when something is missing
    bad = coverage("relevant", ["d1", "D2", "D2", "x9"], {"D2", "x9"}, ids)
    assert (bad.n_ids, bad.n_present, bad.share, bad.missing) == (4, 1, 1 / 4, ("D2", "x9"))
    assert [(n.doc_id, n.rule) for n in bad.near_misses] == [("D2", "case")]


def test_completion_counts_empty_and_error_apart():
    c = completion("r", ["1", "2", "3", "4"], {"1": 3, "2": 0, "4": 1},
                   {"3": "error", "4": "ok"}, {"3": "HTTP 429"}, {"3": 1200.0})
    assert (c.n_topics, c.n_ok, c.n_empty, c.n_error, c.rate) == (4, 2, 1, 1, 2 / 4)
    assert [(f.topic_id, f.status, f.message, f.latency_ms) for f in c.failures] == [
        ("2", "empty", "", None), ("3", "error", "HTTP 429", 1200.0)]


def test_subset_notice_is_the_first_line_text():
    assert TopicCoverage(225, 225).notice() == ""
    assert TopicCoverage(100, 89).is_subset() and not TopicCoverage(100, 90).is_subset()
    assert TopicCoverage(20, 10, "smoke@1").notice().startswith("SUBSET: 10 of 20 eligible topics of topic set smoke@1")


def test_leakage_flags_a_copied_title_and_not_a_paraphrase():
    docs = [("320", "comment on improved numerical solution of the blasius problem with three-point boundary "
                    "conditions . attention is drawn to a previous solution"),
            ("7", "boundary layer flow over a flat plate")]
    q = {"172": "solution of the blasius problem with three-point boundary conditions .",
         "9": "how does the boundary layer behave on a flat wing",
         "5": "flat plate"}
    c = near_copies(q, docs)
    assert [(f.topic_id, f.doc_id, f.containment) for f in c.flagged] == [("172", "320", 1.0)]
    assert c.too_short == ("5",) and c.n_checked == 2 and c.n_documents == 2
    # 3-grams of topic 9 found in document 7: ("boundary", "layer", ...) none at 3 words in a row but
    # "the boundary layer": 0 of 8 -> not flagged; lower the threshold and still nothing.
    assert near_copies(q, docs, threshold=0.1).topics == ("172",)
