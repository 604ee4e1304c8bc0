"""The ``--budget`` rule of ``pooling.sample.solve_budget`` and the sample pool's pure helpers."""

from __future__ import annotations

import pytest

from pooling.pool import build_pool
from pooling.sample import (
    SampleDesign,
    draw_sample,
    parse_strata,
    sample_as_pool,
    sample_content_hash,
    sample_problems,
    sample_size,
    solve_budget,
)
from workbench.errors import ValidationError

# Three topics, five documents each, ranked d1..d5: strata 1-2 and 3-5 are non-empty for every topic.
RUN = {t: {f"d{i}": float(10 - i) for i in range(1, 6)} for t in ("1", "2", "3")}
POOL = build_pool({"a": RUN}, depth=5)
DESIGN = SampleDesign(5, parse_strata("1-2:1.0,3-5:0.5", 5), seed=3)


def test_a_budget_below_one_document_per_non_empty_stratum_is_refused():
    # 3 topics x 2 non-empty strata: at least 6 judgments, whatever the rates
    with pytest.raises(ValidationError, match="--budget 5: .* takes 6 judgments"):
        solve_budget(POOL, DESIGN, 5)


def test_the_smallest_budget_draws_one_document_per_stratum_with_positive_rates():
    d = solve_budget(POOL, DESIGN, 6)
    assert all(s.rate > 0 for s in d.strata)                       # a rate of 0 is not a design (parse_strata)
    assert sample_size(POOL, d) == 6
    assert SampleDesign.from_dict(d.as_dict()) == d                  # what is stored reads back


def test_a_budget_scales_the_rates_by_one_factor_each_capped_at_one():
    d = solve_budget(POOL, DESIGN, 12)
    # per topic n = stratum_size(min(1, c), 2) + stratum_size(min(1, c / 2), 3): 2 + 2 = 4 up to c < 5/3, then
    # 2 + 3 = 5; the largest c drawing 12 is just under 5/3, cut to three digits: 1.66 (1-2 capped at 1)
    assert d.spec() == "1-2:1.0,3-5:0.83"
    assert sample_size(POOL, d) == 12 and d.budget == 12


def test_a_sample_as_a_pool_keeps_the_frame_entries_and_orders_by_priority():
    s = draw_sample(POOL, DESIGN)
    p = sample_as_pool(POOL, s)
    assert {(e.topic_id, e.doc_id) for e in p.entries} == {(d.topic_id, d.doc_id) for d in s.docs}
    frame = {(e.topic_id, e.doc_id): e for e in POOL.entries}
    for e in p.entries:
        assert (e.best_rank, e.n_runs, e.priority) == (frame[(e.topic_id, e.doc_id)].best_rank,
                                                       frame[(e.topic_id, e.doc_id)].n_runs,
                                                       frame[(e.topic_id, e.doc_id)].priority)
    assert [e.doc_id for e in p.entries if e.topic_id == "1"][:2] == ["d1", "d2"]   # ranks 1, 2: highest priority
    assert p.strategy == "stratified sample" and p.params == {"design": DESIGN.as_dict()}


def test_the_content_hash_is_reproducible_and_changes_with_the_seed():
    a, b = draw_sample(POOL, DESIGN), draw_sample(POOL, DESIGN)
    h = sample_as_pool(POOL, a).content_hash
    assert sample_content_hash(h, a) == sample_content_hash(sample_as_pool(POOL, b).content_hash, b)
    other = SampleDesign(5, DESIGN.strata, seed=4)
    c = draw_sample(POOL, other)
    if [d.doc_id for d in c.docs] != [d.doc_id for d in a.docs]:
        assert sample_content_hash(sample_as_pool(POOL, c).content_hash, c) != sample_content_hash(h, a)


def test_sample_problems_recompute_inclusion_from_the_counts():
    s = draw_sample(POOL, DESIGN)
    assert sample_problems(DESIGN, s.docs, s.counts) == []
    import dataclasses

    first = next(d for d in s.docs if d.stratum == "3-5")
    tampered = [dataclasses.replace(d, inclusion=0.9) if d == first else d for d in s.docs]
    problems = sample_problems(DESIGN, tampered, s.counts)
    # stratum 3-5 of a topic: N_h = 3, n_h = max(1, floor(0.5 * 3 + 1/2)) = 2: pi = 2/3
    assert problems == [f"topic {first.topic_id} document {first.doc_id} (stratum 3-5): inclusion probability 0.9 "
                        f"stored, n_h / N_h = 2/3 = {2 / 3!r}"]
    counts = [dataclasses.replace(c, sampled=3) if (c.topic_id, c.stratum) == ("1", "3-5") else c for c in s.counts]
    assert "topic 1 stratum 3-5: n_h = 3 stored, the design draws 2 of N_h = 3 at rate 0.5" in sample_problems(
        DESIGN, s.docs, counts, limit=10)
