"""The policy parser: defaults, the example policy, and errors naming file:line for syntax and semantics."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.errors import InputFormatError
from workbench.scoring.gate_policy import KeyLines, parse_policy
from workbench.scoring.measures import parse_measure

ROOT = Path(__file__).resolve().parents[2]


def test_minimal_policy_gets_documented_defaults():
    p = parse_policy("[gate]\nk = 50\n", "g.toml")
    assert p.k == 50 and [str(m) for m in p.measures] == ["R@50"]
    assert (p.rel, p.correction, p.decide, p.min_topics, p.min_topic_share) == (1, "holm", "corrected", 5, 0.9)
    assert p.macro is None and p.permutation is None and p.floors == ()
    v = p.validity
    assert (v.completion, v.id_coverage, v.run_id_coverage, v.id_audit, v.leakage, v.leaks) == (
        1.0, 1.0, 1.0, "required", "invalid", "fail")


def test_the_shipped_example_policy_parses():
    path = ROOT / "examples" / "gate.toml"
    p = parse_policy(path.read_text(), str(path))
    assert p.k == 20 and [str(m) for m in p.measures] == ["R@20", "nDCG@10"]
    assert p.macro is not None and p.macro.min_ci_low == -0.01 and p.macro.resamples == 10_000
    assert p.permutation is not None and p.permutation.alpha == 0.05
    assert p.critical.topics == ("1", "8", "50", "100")
    assert [(f.by, str(f.measure), f.minimum) for f in p.floors] == [("n_relevant", "R@20", 0.6)]
    assert p.slices == ("query_length", "n_relevant")
    assert p.validity.leakage == "exclude"
    assert p.scored_measures == (parse_measure("R@20"), parse_measure("nDCG@10"))


def test_the_shipped_example_policy_on_a_sample_parses():
    path = ROOT / "examples" / "gate-sample.toml"
    p = parse_policy(path.read_text(), str(path))
    assert [str(m) for m in p.measures] == ["Rhat_micro@20"] and p.macro is not None and p.macro.min_ci_low == -0.05
    assert p.scored_measures == (parse_measure("R@20"), parse_measure("Rhat_micro@20"))


def test_per_measure_bounds_and_selectors():
    p = parse_policy('[gate]\nk = 10\nmeasures = ["R@10", "nDCG@10"]\n[macro]\nmin_ci_low = -0.01\n'
                     '[macro.bounds]\n"nDCG@10" = -0.02\n[critical]\nwhere = { priority = ["critical", "p0"] }\n',
                     "g.toml")
    assert p.macro.bound(parse_measure("nDCG@10")) == -0.02 and p.macro.bound(parse_measure("R@10")) == -0.01
    assert p.critical.where == {"priority": ("critical", "p0")}


def test_estimated_measures_are_gated_with_their_bounds():
    p = parse_policy('[gate]\nk = 20\nmeasures = ["Rhat@20", "Rhat_micro@20", "Phat@10"]\n[macro]\nmin_ci_low = -0.01\n'
                     '[macro.bounds]\n"Rhat_micro@20" = -0.03\n', "g.toml")
    assert [str(m) for m in p.measures] == ["Rhat@20", "Rhat_micro@20", "Phat@10"]
    assert [str(m) for m in p.scored_measures] == ["R@20", "Rhat@20", "Rhat_micro@20", "Phat@10"]
    assert p.macro.bound(parse_measure("Rhat_micro@20")) == -0.03 and p.macro.bound(parse_measure("Rhat@20")) == -0.01


@pytest.mark.parametrize("text, line, fragment", [
    ("[gate]\nk = 5\nmeasures = [\"R@5\"\n", 3, "Unclosed array at the end of the file"),
    ("[gate]\nk = = 5\n", 2, "TOML syntax error"),
    ("[gate]\nk = 0\n", 2, "k: expected an integer >= 1, found 0"),
    ("[gate]\nk = \"ten\"\n", 2, "k: expected an integer, found a string"),
    ("[gate]\nmeasures = [\"R@5\"]\n", 1, "missing required key 'k'"),
    ("[macro]\nmin_ci_low = -0.01\n", 1, "missing the [gate] table"),
    ("[gate]\nk = 5\nmeasure = [\"R@5\"]\n", 3, "unknown key 'measure' in [gate]"),
    ("[gate]\nk = 5\n\n[gates]\nx = 1\n", 4, "unknown table [gates]"),
    ("[gate]\nk = 5\nmeasures = [\"Recall@5\"]\n", 3, "measure 'Recall@5'"),
    ("[gate]\nk = 5\nmeasures = [\"nDCG\"]\n", 3, "with a cutoff"),
    ("[gate]\nk = 5\nmeasures = [\"Rprec@5\"]\n", 3, "expected no cutoff (Rprec has none"),
    ("[gate]\nk = 5\ncorrection = \"sidak\"\n", 3, "expected one of bonferroni, holm, none"),
    ("[gate]\nk = 5\n[macro]\nconfidence = 0.95\n", 3, "missing required key 'min_ci_low'"),
    ("[gate]\nk = 5\n[macro]\nmin_ci_low = -0.01\nconfidence = 1.5\n", 5, "confidence: expected a number in (0, 1)"),
    ("[gate]\nk = 5\n[macro]\nmin_ci_low = -0.01\n[macro.bounds]\n\"P@5\" = -0.1\n", 6, "not a gated measure"),
    ("[gate]\nk = 5\n[permutation]\nalpha = 0\n", 4, "alpha: expected a number in (0, 1)"),
    ("[gate]\nk = 5\n[critical]\ntopics = [1, 8]\n", 4, 'Write ids as strings: ["1"]'),
    ("[gate]\nk = 5\n[critical]\n", 3, "[critical] names no topic"),
    ("[gate]\nk = 5\n[floor]\nby = \"intent\"\nmin = 0.5\n", 3, "write [[floor]] with double brackets"),
    ("[gate]\nk = 5\n[[floor]]\nby = \"a\"\nmin = 0.5\n[[floor]]\nby = \"b\"\nmin = 1.5\n", 8, "min: expected a number in [0, 1]"),
    ("[gate]\nk = 5\n[[floor]]\nmin = 0.5\n", 3, "missing required key 'by'"),
    ("[gate]\nk = 5\n[validity]\nleakage = \"warn\"\n", 4, "expected one of invalid, exclude, off"),
    ("[gate]\nk = 5\n[validity]\ncompletion = 1.01\n", 4, "completion: expected a number in [0, 1]"),
    ("[gate]\nk = 5\nmeasures = [\"R@5\", \"Rhat@5\"]\n", 3,
     "measures: Rhat@5 is estimated from a judged sample and is gated on the interval of its change, which [macro] "
     "bounds; add [macro]"),
    ("[gate]\nk = 5\n[[floor]]\nby = \"a\"\nmin = 0.5\nmeasure = \"Rhat_micro@5\"\n", 6,
     "measure: Rhat_micro@5 is estimated from a judged sample and has no per-slice estimates here; a floor takes a "
     "pooled measure such as R@5"),
    ("[gate]\nk = 5\nmeasures = [\"Rhat(rel=2)@5\"]\n", 3, "Rhat has no parameter 'rel'"),
])
def test_policy_errors_name_the_file_and_line(text, line, fragment):
    with pytest.raises(InputFormatError) as info:
        parse_policy(text, "policies/gate.toml")
    e = info.value
    assert (e.path, e.line) == ("policies/gate.toml", line), str(e)
    assert fragment in str(e)
    assert str(e).startswith(f"policies/gate.toml:{line}: ")


def test_measures_of_the_whole_ranking_are_gated_without_a_cutoff():
    p = parse_policy('[gate]\nk = 20\nmeasures = ["AP", "RBP(p=0.9)", "R@20"]\n', "g.toml")
    assert [str(m) for m in p.measures] == ["AP", "RBP(p=0.9)", "R@20"]


def test_key_lines_follow_tables_arrays_of_tables_and_multiline_arrays():
    text = ('# comment\n[gate]\nk = 5\nmeasures = [\n  "R@5",\n  "P@5",\n]\nrel = 2\n'
            '[[floor]]\nby = "x"\n[[floor]]\n"min" = 0.4\n[macro.bounds]\n"nDCG@10" = -0.1\n')
    kl = KeyLines(text)
    assert kl.line(("gate",)) == 2 and kl.line(("gate", "measures")) == 4 and kl.line(("gate", "rel")) == 8
    assert kl.line(("floor", 0, "by")) == 10 and kl.line(("floor", 1, "min")) == 12
    assert kl.line(("macro", "bounds", "nDCG@10")) == 14
    assert kl.line(("nothing",)) == 0
