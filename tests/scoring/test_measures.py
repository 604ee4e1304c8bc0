"""Measures are values: canonical names that parse back, a registry, clear errors."""

from __future__ import annotations

import pytest

from workbench.errors import UnknownNameError, ValidationError
from workbench.scoring.measures import (
    REGISTRY,
    RR,
    Judged,
    Measure,
    P,
    Phat,
    R,
    Rhat,
    RhatMicro,
    Success,
    default_measures,
    nDCG,
    parse_measure,
    parse_measures,
    pooled_measures,
    register,
)


@pytest.mark.parametrize(
    "text",
    ["R@100", "R(rel=2)@100", "P@10", "nDCG@10", "nDCG(dcg='exp-log2')@10", "RR@10", "RR(rel=3)@1",
     "Success@10", "Judged@10", "Rhat@20", "Rhat_micro@20", "Phat@10"],
)
def test_canonical_names_round_trip(text):
    m = parse_measure(text)
    assert str(m) == text
    assert parse_measure(str(m)) == m
    assert hash(parse_measure(text)) == hash(m)


def test_parsing_normalises_spacing_and_quotes():
    assert parse_measure(' nDCG( dcg = "exp-log2" ) @ 10') == nDCG(10, dcg="exp-log2")
    assert str(parse_measure("R( rel = 2 )@5")) == "R(rel=2)@5"


def test_measures_are_dict_keys_and_classes_differ():
    table = {R(10): "recall", P(10): "precision"}
    assert table[parse_measure("R@10")] == "recall"
    assert R(10) != P(10)
    assert R(10) != R(10, rel=1)  # rel=None means "the evaluation's threshold"


def test_default_measures_in_report_order():
    assert [str(m) for m in default_measures()] == [
        "R@5", "R@10", "R@20", "R@50", "R@100", "nDCG@10", "RR@10", "P@10", "Success@10", "Judged@10"
    ]


def test_unknown_name_lists_the_registry_sorted():
    with pytest.raises(UnknownNameError) as e:
        parse_measure("recall@10")
    assert e.value.known == sorted(REGISTRY)
    assert "recall" in str(e.value) and "nDCG" in str(e.value)


@pytest.mark.parametrize(
    "text, fragment",
    [("R", "expected a measure"), ("R@0", r"cutoff k in 1\.\.1,000,000,000"), ("R(foo=1)@3", "no parameter 'foo'"),
     ("R(rel=-1)@3", "rel to be an integer >= 0"), ("nDCG(dcg='exp')@3", "'log2' or 'exp-log2'"),
     ("Judged(rel=1)@3", "no parameter 'rel'"), ("R(rel=x)@3", "integer or a quoted string")],
)
def test_bad_measures_raise_validation_errors(text, fragment):
    with pytest.raises(ValidationError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        parse_measure(text)


def test_parse_measures_keeps_order_and_drops_repeats():
    assert parse_measures(["P@10", "R@5", "P@10", R(5)]) == (P(10), R(5))


def test_registry_rejects_duplicates():
    with pytest.raises(ValueError):
        register(R)


def test_measure_flags():
    assert R.HAS_CEILING and P.HAS_CEILING and not nDCG.HAS_CEILING
    assert not RR.HAS_MICRO and Success.HAS_MICRO
    assert not Judged.USES_REL and not nDCG.USES_REL
    assert R(10, rel=2).effective_rel(1) == 2 and R(10).effective_rel(3) == 3
    assert isinstance(parse_measure("Judged@10"), Measure)


def test_a_huge_cutoff_is_a_validation_error_not_an_overflow():
    from workbench.errors import ValidationError
    from workbench.scoring.measures import parse_measure

    with pytest.raises(ValidationError, match=r"expected a cutoff k in 1\.\.1,000,000,000, found 99999999999999999999"):
        parse_measure("R@99999999999999999999")


def test_estimated_measures_name_their_estimate_display_and_pooled_counterpart():
    rhat, micro, phat = parse_measure("Rhat@20"), parse_measure("Rhat_micro@20"), parse_measure("Phat@10")
    assert (type(rhat), type(micro), type(phat)) == (Rhat, RhatMicro, Phat)
    assert all(m.ESTIMATED for m in (rhat, micro, phat)) and not R(20).ESTIMATED
    assert rhat != micro and len({rhat, micro, R(20)}) == 3            # distinct dict keys
    assert (rhat.display(), micro.display(), phat.display()) == ("R̂@20", "R̂@20 (micro)", "P̂@10")
    assert (rhat.pooled, micro.pooled, phat.pooled) == (R(20), R(20), P(10))
    assert (rhat.estimate_name, micro.estimate_name, micro.AGGREGATE) == ("Rhat@20", "Rhat@20", "micro")
    assert [str(m) for m in pooled_measures([rhat, R(20), micro, phat, nDCG(10)])] == ["R@20", "P@10", "nDCG@10"]
    with pytest.raises(ValidationError, match="Rhat has no parameter 'rel'"):
        parse_measure("Rhat(rel=2)@20")
    with pytest.raises(ValidationError, match="Rhat_micro: expected a cutoff"):
        parse_measure("Rhat_micro@0")


def test_the_pooled_scorers_refuse_an_estimated_measure():
    from workbench.scoring.evaluate import evaluate

    with pytest.raises(ValidationError, match="measure Rhat@10 is estimated from a judged sample, not computed "
                                              "from qrels"):
        evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, ["R@10", "Rhat@10"])
