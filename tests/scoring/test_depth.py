"""Depth sweep rules (issue 10): the cost fit, marginal recall per added millisecond, depth parsing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.errors import ValidationError
from workbench.lineage import RerankCost, TopicCost, percentile
from workbench.scoring.depth import (
    CostFit,
    DepthPoint,
    cap_depths,
    cost_sample,
    fit_cost,
    parse_depths,
    sweep_rows,
)


def test_a_linear_cost_fits_exactly_with_exponent_one():
    # The seed's cross-encoder: 3.1 ms per candidate, nothing fixed.
    f = fit_cost([10, 50, 100, 200], [31.0, 155.0, 310.0, 620.0])
    assert (f.slope_ms, f.intercept_ms, f.r2, f.exponent) == (
        pytest.approx(3.1), pytest.approx(0.0, abs=1e-9), pytest.approx(1.0), pytest.approx(1.0))
    assert f.scaling == "linear" and f.predict(400) == pytest.approx(1240.0)


def test_the_fit_agrees_with_numpy_least_squares_on_noisy_points():
    rng = np.random.default_rng(0)
    n = np.repeat([10, 50, 100, 200], 25).astype(float)
    ms = 40.0 + 0.05 * n + rng.normal(0, 3, len(n))
    f = fit_cost(n.tolist(), ms.tolist())
    slope, intercept = np.polyfit(n, ms, 1)
    r2 = 1 - ((ms - (intercept + slope * n)) ** 2).sum() / ((ms - ms.mean()) ** 2).sum()
    alpha = np.polyfit(np.log(n), np.log(ms), 1)[0]
    assert (f.slope_ms, f.intercept_ms, f.r2, f.exponent) == (
        pytest.approx(slope), pytest.approx(intercept), pytest.approx(r2), pytest.approx(alpha))
    assert f.scaling == "flat"  # a fixed 40 ms per topic dominates: alpha ~ 0.1


def test_a_constant_cost_has_no_r2_and_one_depth_has_no_exponent():
    f = fit_cost([10, 10, 10], [5.0, 5.0, 5.0])
    assert f.slope_ms == 0.0 and f.intercept_ms == 5.0 and math.isnan(f.r2) and math.isnan(f.exponent)
    assert f.scaling == "unknown"
    with pytest.raises(ValidationError, match="at least two"):
        fit_cost([10], [1.0])
    with pytest.raises(ValidationError, match="as many"):
        fit_cost([10, 20], [1.0])


def _point(d: int, recall: float, final: float, ms: float, topics: int = 2) -> DepthPoint:
    return DepthPoint(depth=d, k=10, candidate_recall=recall, candidate_recall_micro=recall, ceiling=1.0,
                      candidate_recall_k=0.5, final_recall=final, final_ndcg=0.4, recall_unchanged=True,
                      n_topics=topics, n_documents=d * topics, mean_ms=ms, p50_ms=ms, p95_ms=ms,
                      ms_per_document=ms / d)


def test_marginal_recall_per_added_ms_from_the_measured_means_and_from_the_fit():
    # The seed's hybrid: R@10 .74, R@50 .93, R@100 .95, R@200 .96 at 31, 155, 310, 620 ms.
    pts = [_point(200, 0.96, 0.85, 620.0), _point(10, 0.74, 0.74, 31.0), _point(50, 0.93, 0.83, 155.0),
           _point(100, 0.95, 0.84, 310.0)]
    rows = sweep_rows(pts)
    assert [r.point.depth for r in rows] == [10, 50, 100, 200]
    assert rows[0].added_ms is None and rows[0].ceiling_per_ms is None
    assert rows[1].added_ms == pytest.approx(124.0)
    assert rows[1].ceiling_per_ms == pytest.approx((0.93 - 0.74) / 124.0)
    assert rows[3].final_per_ms == pytest.approx((0.85 - 0.84) / 310.0)
    fitted = sweep_rows(pts, CostFit(1.0, 3.1, 1.0, 1.0, 8))
    assert fitted[2].added_ms == pytest.approx(3.1 * 50)  # slope x added candidates per topic


def test_no_marginal_where_the_cost_did_not_grow():
    rows = sweep_rows([_point(10, 0.4, 0.4, 50.0), _point(50, 0.7, 0.45, 48.0)])
    assert rows[1].added_ms == pytest.approx(-2.0) and rows[1].ceiling_per_ms is None and rows[1].final_per_ms is None
    assert sweep_rows([_point(10, 0.4, 0.4, 50.0), _point(50, 0.7, 0.45, 48.0)], CostFit(50, 0.0, 0, 0, 2))[1] \
        .ceiling_per_ms is None
    with pytest.raises(ValidationError, match="distinct depths"):
        sweep_rows([_point(10, 0.4, 0.4, 1.0), _point(10, 0.4, 0.4, 1.0)])


def test_parse_depths():
    assert parse_depths("200,10, 50,50") == (10, 50, 200)
    for bad in ("", "10,x", "0,10", "-5"):
        with pytest.raises(ValidationError, match="--depths"):
            parse_depths(bad)


def test_depths_deeper_than_the_run_are_capped_at_its_depth_once():
    # Issue 26: the sweep's default depths on the workflow's depth-100 runs.
    c = cap_depths((10, 50, 100, 200), 100, "rrf")
    assert (c.depths, c.capped, c.run_depth) == ((10, 50, 100), (200,), 100)
    assert c.note == "run rrf holds at most 100 documents per topic: depth 200 capped to 100 (already in the sweep)"
    c = cap_depths((200, 10, 300), 150, "r")  # the run's depth was not asked for: it becomes the deepest row
    assert (c.depths, c.capped) == ((10, 150), (200, 300))
    assert c.note == "run r holds at most 150 documents per topic: depths 200, 300 capped to 150"
    c = cap_depths((500,), 20, "r")
    assert (c.depths, c.capped) == ((20,), (500,))
    c = cap_depths((10, 50), 100, "r")
    assert (c.depths, c.capped, c.note) == ((10, 50), (), "")
    with pytest.raises(ValidationError, match="at least one depth"):
        cap_depths((), 100, "r")


def test_cost_record_aggregates_and_percentiles_match_numpy():
    ms = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0]
    cost = RerankCost("r", "cpu", 32, 1, 100.0, tuple(TopicCost(str(i), 10 + i, m) for i, m in enumerate(ms)))
    assert (cost.n_topics, cost.n_documents, cost.total_ms) == (6, 75, 27.0)
    assert cost.ms_per_topic == pytest.approx(4.5) and cost.ms_per_document == pytest.approx(27.0 / 75)
    assert cost.documents_per_second == pytest.approx(75 / 0.027)
    for q in (0, 50, 95, 100):
        assert cost.p(q) == pytest.approx(float(np.percentile(ms, q)))
    assert math.isnan(percentile([], 50))


def test_cost_sample_spaces_the_cost_topics_evenly_and_zero_means_every_topic():
    topics = [str(t) for t in range(1, 226)]  # the demo's 225 topics
    assert cost_sample(topics, 5) == ("1", "46", "91", "136", "181")  # floor(i * 225 / 5) + 1
    assert cost_sample(topics, 0) == cost_sample(topics, 225) == cost_sample(topics, 999) == tuple(topics)
    assert cost_sample(["b", "a"], 1) == ("b",)  # the order given, never re-sorted
    with pytest.raises(ValidationError, match="--cost-topics: expected a number of topics >= 0"):
        cost_sample(topics, -1)
