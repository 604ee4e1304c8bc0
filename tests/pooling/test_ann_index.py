"""Vector indexes (pooling.retrievers.ann): exact, faiss HNSW and IVF-Flat on hand-made vectors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pooling.retrievers.ann import (
    build_index,
    latency_summary,
    parse_param_values,
    resolve_params,
)
from workbench.errors import UnknownNameError, ValidationError
from workbench.ranking import ranked_ids
from workbench.scoring.ann_recall import ann_recall

faiss = pytest.importorskip("faiss", reason="faiss-cpu (the dense extra) is not installed")


def _circle(degrees):
    """Unit vectors in the plane at the given angles: cosine = cos(angle difference)."""
    r = np.radians(np.asarray(degrees, dtype=np.float64))
    return np.stack([np.cos(r), np.sin(r)], axis=1).astype(np.float32)


ANGLES = {"d0": 0.0, "d1": 10.0, "d2": 20.0, "d3": 45.0, "d4": 90.0, "d5": 180.0}
IDS = list(ANGLES)
MATRIX = _circle(list(ANGLES.values()))


def test_exact_index_returns_the_known_neighbours_with_cosine_scores():
    idx = build_index(MATRIX, IDS, "exact")
    hits = idx.search(_circle([12.0]), 3).hits[0]
    # By angle from 12 degrees: d1 (2), d2 (8), d0 (12); d3 is 33 away.
    assert ranked_ids(hits) == ["d1", "d2", "d0"]
    assert hits["d2"] == pytest.approx(math.cos(math.radians(8.0)), abs=1e-6)


@pytest.mark.parametrize("kind,params", [("hnsw", {"M": 4, "efSearch": 16}), ("ivf", {"nlist": 1, "nprobe": 1})])
def test_approximate_indexes_find_the_exact_neighbours_of_an_easy_case(kind, params):
    idx = build_index(MATRIX, IDS, kind, params, threads=1)
    queries = _circle([12.0, 105.0, 170.0])
    exact = build_index(MATRIX, IDS, "exact").search(queries, 4).hits
    approx = idx.search(queries, 3).hits
    run = lambda hits: {str(i): h for i, h in enumerate(hits)}  # noqa: E731
    r = ann_recall(run(approx), run(exact), 3, exact_depth=4)
    assert (r.sum_numerator, r.sum_denominator, r.macro) == (9, 9, 1.0)
    assert idx.build_ms >= 0 and idx.index_bytes > 0 and idx.threads == 1 and idx.faiss_version


def test_ivf_with_one_probe_misses_a_neighbour_in_the_other_list():
    # Two tight clusters (0-10 and 80-90 degrees) and one document at 50 degrees, closer to the
    # second cluster's centre. The query at 40 degrees is nearest to the first cluster's centre,
    # so nprobe=1 searches only that list, but its nearest document is the one at 50 degrees.
    a = np.linspace(0.0, 10.0, 40)
    b = np.linspace(80.0, 90.0, 40)
    angles = np.concatenate([a, b, [50.0]])
    ids = [f"a{i}" for i in range(40)] + [f"b{i}" for i in range(40)] + ["edge"]
    m = _circle(angles)
    q = _circle([40.0])
    ivf = build_index(m, ids, "ivf", {"nlist": 2, "nprobe": 1}, threads=1)
    centroids = ivf._index.quantizer.reconstruct_n(0, 2)
    nearest_list = int(np.argmax(centroids @ q[0]))
    edge_list = int(np.argmax(centroids @ m[-1]))
    assert nearest_list != edge_list  # the premise: the edge document lives in the list not probed
    exact = build_index(m, ids, "exact").search(q, 2).hits[0]
    assert ranked_ids(exact)[0] == "edge"
    missed = ivf.search(q, 1).hits[0]
    assert "edge" not in missed and ranked_ids(missed) == ["a39"]  # best of the probed list: 10 degrees
    r1 = ann_recall({"q": missed}, {"q": exact}, 1, exact_depth=2)
    assert (r1.topics[0].numerator, r1.macro) == (0, 0.0)
    found = ivf.with_search_params(nprobe=2).search(q, 1).hits[0]  # both lists: exhaustive
    assert list(found) == ["edge"]


@pytest.mark.parametrize("kind,params", [("exact", {}), ("hnsw", {"M": 4, "efSearch": 32}),
                                         ("ivf", {"nlist": 1, "nprobe": 1})])
def test_eligibility_masks_restrict_the_search_inside_the_index(kind, params):
    idx = build_index(MATRIX, IDS, kind, params, threads=1)
    eligible = np.array([d in {"d3", "d5"} for d in IDS])
    res = idx.search(_circle([12.0, 12.0]), 3, eligible=[eligible, None])
    assert ranked_ids(res.hits[0]) == ["d3", "d5"]  # only two are eligible: fewer than k, never ineligible ones
    assert ranked_ids(res.hits[1]) == ["d1", "d2", "d0"]  # the second query has no filter
    assert idx.search(_circle([12.0]), 3, eligible=[np.zeros(len(IDS), bool)]).hits == [{}]
    with pytest.raises(ValidationError, match="shape"):
        idx.search(_circle([12.0]), 3, eligible=[np.ones(2, bool)])
    assert len(res.latencies_ms) == 2 and all(ms >= 0 for ms in res.latencies_ms)


def test_parameters_are_resolved_checked_and_recorded():
    assert resolve_params("hnsw", {}, 100) == {"M": 32, "efConstruction": 40, "efSearch": 16}
    assert resolve_params("ivf", {}, 1400) == {"nlist": 35, "nprobe": 1}  # min(sqrt(1400) ~ 37, 1400 // 39)
    assert resolve_params("exact", {}, 5) == {}
    with pytest.raises(ValidationError, match="no parameter 'nprobe'; its parameters: M, efConstruction, efSearch"):
        resolve_params("hnsw", {"nprobe": 2}, 100)
    with pytest.raises(ValidationError, match="nprobe 9 exceeds nlist 4"):
        resolve_params("ivf", {"nlist": 4, "nprobe": 9}, 1000)
    with pytest.raises(ValidationError, match=r"efSearch to be an integer in \[1, 2147483647\]"):
        resolve_params("hnsw", {"efSearch": 0}, 100)
    with pytest.raises(UnknownNameError):
        resolve_params("annoy", {}, 100)
    idx = build_index(MATRIX, IDS, "hnsw", {"efSearch": 4}, threads=1)
    assert idx.effective_params(10)["efSearch"] == 10  # faiss searches with max(efSearch, k)
    assert idx.with_search_params(efSearch=64).params["efSearch"] == 64
    with pytest.raises(ValidationError, match="not a search parameter"):
        idx.with_search_params(M=8)


def test_param_options_and_latency_summary():
    assert parse_param_values(["efSearch=8,16", "M=32"]) == {"efSearch": [8, 16], "M": [32]}
    with pytest.raises(ValidationError, match="NAME=VALUE"):
        parse_param_values(["efSearch"])
    with pytest.raises(ValidationError, match="not an integer"):
        parse_param_values(["efSearch=8,x"])
    s = latency_summary([1.0, 2.0, 3.0, 4.0])
    assert (s.n_queries, s.p50_ms, s.qps) == (4, 2.5, 4 / 0.010)
    assert s.p95_ms == pytest.approx(3.85)
    assert math.isnan(latency_summary([]).p50_ms)
