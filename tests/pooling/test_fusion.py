"""Fusion formulas, written out as formulas (ranx style)."""

from __future__ import annotations

import pytest

from pooling.fusion import (
    FUSION_METHODS,
    RRF,
    CombMNZ,
    CombSUM,
    comb_mnz,
    comb_sum,
    fusion_method,
    register_fusion,
    rrf,
)
from workbench.errors import DuplicateNameError, UnknownNameError, ValidationError


def test_rrf_sums_reciprocal_ranks_and_ignores_absent_documents():
    a = {"t1": {"d1": 3.0, "d2": 2.0}}
    b = {"t1": {"d2": 9.0}}
    fused = rrf([a, b], k=60)
    assert fused["t1"]["d2"] == pytest.approx(1 / (60 + 2) + 1 / (60 + 1))
    assert fused["t1"]["d1"] == pytest.approx(1 / (60 + 1))


def test_rrf_ranks_come_from_the_canonical_rule_not_from_dict_order():
    # Tied scores: canonical rule ranks doc_id descending, so "b" is rank 1, "a" rank 2.
    run = {"t": {"a": 1.0, "b": 1.0, "c": 0.5}}
    fused = rrf([run], k=10)["t"]
    assert fused == pytest.approx({"b": 1 / 11, "a": 1 / 12, "c": 1 / 13})


def test_rrf_depth_cuts_each_run_before_fusing():
    a = {"t": {"x": 3.0, "y": 2.0, "z": 1.0}}
    b = {"t": {"z": 3.0, "y": 2.0}}
    fused = rrf([a, b], k=60, depth=1)["t"]
    assert fused == pytest.approx({"x": 1 / 61, "z": 1 / 61})


def test_rrf_unions_topics_and_keeps_a_topic_only_one_run_has():
    fused = rrf([{"t1": {"a": 1.0}}, {"t2": {"b": 1.0}}], k=0)
    assert fused == {"t1": {"a": 1.0}, "t2": {"b": 1.0}}


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_rrf_rejects_a_bad_k(bad):
    with pytest.raises(ValidationError, match="expected rrf k between 0 and 1000000"):
        rrf([{"t": {"a": 1.0}}], k=bad)


def test_rrf_rejects_no_runs_and_bad_depth():
    with pytest.raises(ValidationError, match="at least one run"):
        rrf([])
    with pytest.raises(ValidationError, match="depth must be >= 1"):
        rrf([{"t": {"a": 1.0}}], depth=0)


def test_combsum_min_max_normalises_each_run_then_sums():
    a = {"t": {"d1": 10.0, "d2": 6.0, "d3": 2.0}}
    b = {"t": {"d2": 0.9, "d4": 0.1}}
    fused = comb_sum([a, b])["t"]
    assert fused["d1"] == pytest.approx((10 - 2) / (10 - 2))
    assert fused["d2"] == pytest.approx((6 - 2) / (10 - 2) + (0.9 - 0.1) / (0.9 - 0.1))
    assert fused["d3"] == pytest.approx(0.0)
    assert fused["d4"] == pytest.approx(0.0)


def test_combsum_gives_one_to_every_document_of_a_constant_run():
    fused = comb_sum([{"t": {"a": 5.0, "b": 5.0}}])["t"]
    assert fused == {"a": 1.0, "b": 1.0}


def test_combsum_without_normalisation_adds_raw_scores():
    fused = comb_sum([{"t": {"a": 2.0}}, {"t": {"a": 0.5, "b": 3.0}}], norm="none")["t"]
    assert fused == pytest.approx({"a": 2.0 + 0.5, "b": 3.0})


def test_combmnz_multiplies_combsum_by_the_number_of_runs():
    a = {"t": {"d1": 4.0, "d2": 0.0}}
    b = {"t": {"d2": 1.0, "d3": 0.0}}
    fused = comb_mnz([a, b])["t"]
    assert fused["d2"] == pytest.approx(2 * ((0 - 0) / 4 + (1 - 0) / 1))
    assert fused["d1"] == pytest.approx(1 * 1.0)
    assert fused["d3"] == pytest.approx(1 * 0.0)


def test_methods_are_values_with_their_parameters():
    assert RRF(k=10).fuse([{"t": {"a": 1.0}}]) == {"t": {"a": 1 / 11}}
    assert RRF(k=10).params == {"method": "rrf", "k": 10, "depth": None}
    assert CombSUM().params == {"method": "combsum", "norm": "min-max", "depth": None}
    assert CombMNZ(norm="none").fuse([{"t": {"a": 2.0}}]) == {"t": {"a": 2.0}}


def test_registry_builds_known_methods_and_rejects_unknown_ones():
    assert fusion_method("rrf", k=5) == RRF(k=5)
    assert fusion_method("combsum") == CombSUM()
    with pytest.raises(UnknownNameError) as e:
        fusion_method("borda")
    assert e.value.known == sorted(FUSION_METHODS)
    with pytest.raises(ValidationError, match="does not accept"):
        fusion_method("rrf", norm="min-max")
    with pytest.raises(DuplicateNameError):
        register_fusion("rrf", RRF)


def test_unknown_normalisation_is_rejected():
    with pytest.raises(UnknownNameError, match="score normalization"):
        comb_sum([{"t": {"a": 1.0}}], norm="z-score")  # type: ignore[arg-type]
