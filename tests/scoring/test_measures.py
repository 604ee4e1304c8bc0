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
     ("Judged(rel=1)@3", "no parameter 'rel'"), ("R(rel=x)@3", "integer or a quoted string"),
     ("RBP(p=0.8,p=0.9)", "RBP(p=0.8,p=0.9): parameter 'p' given twice; give it once."),   # 0.9 silently won
     ("P(rel=2, rel=2)@5", "parameter 'rel' given twice")],
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


# -- measures of the whole ranking (issue 26): optional and absent cutoffs, decimal parameters --------

@pytest.mark.parametrize(
    "text",
    ["AP", "AP@100", "AP(rel=2)", "AP(rel=2)@10", "Rprec", "Rprec(rel=2)", "Bpref", "Bpref(rel=3)",
     "RBP(p=0.8)", "RBP(p=0.95)@100", "RBP(p=0.5,rel=2)", "RBP_residual(p=0.8)", "RBP_residual(p=0.9)@10",
     "NumRelRet", "NumRelRet@10", "NumRelRet(rel=2)", "NumRel", "NumRel(rel=2)", "NumRet", "NumRet@1000"],
)
def test_new_names_round_trip(text):
    m = parse_measure(text)
    assert str(m) == text and parse_measure(str(m)) == m and hash(parse_measure(text)) == hash(m)


def test_rbp_always_writes_its_persistence_and_takes_decimal_numbers():
    from workbench.scoring.measures import RBP

    assert str(parse_measure("RBP")) == "RBP(p=0.8)" and parse_measure("RBP") == RBP(p=0.8)
    assert parse_measure("RBP( p = .95 )") == RBP(p=0.95) and str(RBP(10, p=0.9)) == "RBP(p=0.9)@10"
    assert parse_measure("AP") != parse_measure("Rprec")           # same fields, different measures
    assert parse_measure("AP").cutoff is None and parse_measure("AP@10").cutoff == 10


@pytest.mark.parametrize(
    "text, fragment",
    [("Rprec@10", "expected no cutoff (Rprec has none"), ("Bpref@5", "expected no cutoff"),
     ("NumRel@5", "expected no cutoff"), ("nDCG", "nDCG needs a cutoff k"), ("RBP(p=1)", "strictly between 0 and 1"),
     ("RBP(p=0)", "strictly between 0 and 1"), ("RBP(p=1.5)", "strictly between 0 and 1"),
     ("RBP(p=nan)", "a decimal number"), ("RBP(p=1e999)", "a decimal number"), ("NumRet(rel=1)", "no parameter 'rel'"),
     ("RBP_residual(rel=1)", "no parameter 'rel'"), ("AP@0", "cutoff k in 1"), ("Bpref(rel=-1)", "rel to be an integer")],
)
def test_bad_new_measures_raise_validation_errors(text, fragment):
    with pytest.raises(ValidationError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        parse_measure(text)


def test_names_needing_a_cutoff_expand_and_the_others_are_taken_as_written():
    from workbench.scoring.measures import expand_measures, needs_cutoffs, with_residuals

    assert [needs_cutoffs(t) for t in ("R", "R(rel=2)", "R@5", "AP", "Rprec", "RBP", "bogus", "R@")] == \
        [True, True, False, False, False, False, False, False]
    assert [str(m) for m in expand_measures(["R(rel=2)", "AP", "AP@5", "NumRet", "nDCG"], [5, 10])] == \
        ["R(rel=2)@5", "R(rel=2)@10", "AP", "AP@5", "NumRet", "nDCG@5", "nDCG@10"]
    ms = with_residuals(parse_measures(["RBP(p=0.9)", "AP", "RBP(p=0.5)@10", "RBP_residual(p=0.5)@10", "RBP(p=0.9)"]))
    assert [str(m) for m in ms] == ["RBP(p=0.9)", "RBP_residual(p=0.9)", "AP", "RBP(p=0.5)@10", "RBP_residual(p=0.5)@10"]


def test_new_measure_flags():
    from workbench.scoring.measures import (
        AP,
        RBP,
        Bpref,
        NumRel,
        NumRelRet,
        NumRet,
        RBPResidual,
        Rprec,
    )

    assert AP.CUTOFF == RBP.CUTOFF == RBPResidual.CUTOFF == NumRelRet.CUTOFF == NumRet.CUTOFF == "optional"
    assert Rprec.CUTOFF == Bpref.CUTOFF == NumRel.CUTOFF == "none" and R.CUTOFF == "required"
    assert NumRelRet.IS_COUNT and NumRel.IS_COUNT and NumRet.IS_COUNT and not AP.IS_COUNT
    assert not AP.HAS_MICRO and not Bpref.HAS_MICRO and not RBP.HAS_MICRO and Rprec.HAS_MICRO
    assert not RBPResidual.USES_REL and not NumRet.USES_REL and Bpref.USES_REL


def test_the_help_list_of_measures_is_computed_from_the_registry():
    from workbench.scoring.measures import measure_forms

    forms = measure_forms().split(", ")
    assert len(forms) == len(REGISTRY)
    assert {"R@k", "AP[@k]", "Rprec", "Bpref", "RBP(p=0.8)[@k]", "RBP_residual(p=0.8)[@k]", "NumRelRet[@k]", "NumRel",
            "NumRet[@k]"} <= set(forms)


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
