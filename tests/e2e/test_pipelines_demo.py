"""The demo's pipeline step (issue 10) on a subset of the Cranfield sample: the four-run and the depth table.

Recall values are recomputed with pytrec_eval from the stored runs; the structure
(lineage, permutation check, the depth table's coherence with the four-run table)
is checked on the report the demo prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "pooling"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from encoder_stub import StubEncoder  # noqa: E402
from test_workflow import _subset  # noqa: E402


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from workbench.demo.stages import PipelineOptions, run_pipeline_demo
    from workbench.services.collections.ingest import ingest_folder
    from workbench.store import Store

    tmp = tmp_path_factory.mktemp("pipelines")
    reference = _subset(tmp / "cran-subset")
    store = Store(tmp / "wb.duckdb", client="pytest")
    ingest_folder(store, tmp / "cran-subset", name="cransub")
    out = run_pipeline_demo(store, PipelineOptions(collection="cransub", qrels="cransub-reference",
                                                   encoder=StubEncoder(), plot_dir=tmp / "plots"))
    return store, out, reference


def _recall(qrels, run, k):
    import pytrec_eval

    per = pytrec_eval.RelevanceEvaluator({t: dict(d) for t, d in qrels.items()}, {f"recall_{k}"}).evaluate(
        {t: dict(s) for t, s in run.items()})
    topics = [t for t, d in qrels.items() if any(g >= 1 for g in d.values())]
    return sum(per[t][f"recall_{k}"] for t in topics) / len(topics)


def test_the_four_runs_are_two_candidate_runs_and_their_reranks_with_lineage(demo):
    store, out, _ = demo
    assert out.runs == ["bm25-d200", "bm25-d200+stub", "hybrid-d200", "hybrid-d200+stub"]
    for cand in ("bm25-d200", "hybrid-d200"):
        lin = store.runs.get_run_lineage(f"{cand}+stub")
        assert (lin.candidate_run, lin.candidate_depth, lin.reranker_kind) == (cand, 50, "bi-encoder")
        assert store.runs.get_rerank_cost(f"{cand}+stub").n_topics > 0
    assert store.runs.get_run_info("hybrid-d200").params["runs"] == ["bm25-d200", "dense-d200"]


def test_the_four_run_table_matches_pytrec_eval_and_reranking_keeps_r_at_50(demo):
    store, out, reference = demo
    reports = {p.run: r for p, r in zip(out.stages.pipelines, out.stages.reports, strict=True)}
    for run in out.runs:
        rep = reports[run]
        stage = "final" if rep.two_stage else "candidates"
        stored = store.runs.get_run(run)
        assert rep.row("R@10", stage).macro == pytest.approx(_recall(reference, stored, 10))
        assert rep.row("R@50", stage).macro == pytest.approx(_recall(reference, stored, 50))
    for cand in ("bm25-d200", "hybrid-d200"):
        rep = reports[f"{cand}+stub"]
        assert rep.check.is_permutation
        assert rep.row("R@50", "final").macro == reports[cand].row("R@50", "candidates").macro


def test_the_depth_table_is_measured_and_repeats_the_hybrid_row(demo):
    from workbench.demo.render_stages import render_pipeline_demo

    store, out, reference = demo
    rows = out.sweep.rows
    assert [r.point.depth for r in rows] == [10, 50, 100, 200]
    hybrid = store.runs.get_run("hybrid-d200")
    # cost from text on 5 evenly spaced topics; recall and the labelled cached cost on every topic
    assert len(out.sweep.cost_topics) == 5 and set(out.sweep.cost_topics) < set(out.sweep.topics)
    for r in rows:
        assert r.point.candidate_recall == pytest.approx(_recall(reference, hybrid, r.point.depth))
        assert r.point.recall_unchanged and r.point.n_topics == len(out.sweep.cost_topics)
        assert r.point.p50_ms > 0 and r.point.p95_ms >= r.point.p50_ms and r.point.cached_ms > 0
        assert out.sweep.cached_costs[r.point.depth].n_topics == len(out.sweep.topics)
    assert out.sweep.fit is not None and out.sweep.fit.n_points == 4 * len(out.sweep.cost_topics)
    text = "\n".join(render_pipeline_demo(out))
    assert (f"(bi-encoder); cost per topic reranking from text (the query and the D candidates encoded, then scored, inside "
            f"each topic's timed block) on 5 of {len(out.sweep.topics)} topics (evenly spaced)") in text
    assert " cached ms " in text and "  cached ms: mean ms per topic of the same rerank" in text
    assert "R@50 unchanged by reranking" in text and "yes (" in text
    assert "the same as hybrid-d200's row of the four-run table" in text
    assert "how cost scales with depth" in text
    assert all(p.is_file() for p in out.plots) and {p.suffix for p in out.plots} == {".html", ".png"}
