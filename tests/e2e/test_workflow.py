"""Issue 6: the workflow's eight steps on a subset of the Cranfield sample.

Every expectation is recomputed here independently of the workbench: pools from
the stored runs with trec_eval's ordering written out, qrels from the reference
file, R@20 with pytrec_eval, leave-one-run-out by hand and Kendall's tau with scipy.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_corpus" / "cranfield"
sys.path.insert(0, str(ROOT / "tests" / "pooling"))
from encoder_stub import StubEncoder  # noqa: E402

TOPICS = [str(t) for t in range(1, 13)]
POOL_DEPTH = 20


def _subset(dest: Path) -> dict[str, dict[str, int]]:
    """12 topics; the documents they judge plus the first 200 of the corpus."""
    ref: dict[str, dict[str, int]] = {}
    lines = (SAMPLE / "qrels.reference.txt").read_text().splitlines()
    for line in lines:
        t, _, d, g = line.split()
        ref.setdefault(t, {})[d] = int(g)
    keep_docs = {d for t in TOPICS for d in ref.get(t, {})}
    docs = [json.loads(x) for x in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    keep_docs |= {d["_id"] for d in docs[:200]}
    dest.mkdir()
    (dest / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs if d["_id"] in keep_docs))
    queries = [json.loads(x) for x in (SAMPLE / "queries.jsonl").read_text().splitlines()]
    (dest / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries if q["_id"] in TOPICS))
    sub = [line for line in lines if line.split()[0] in TOPICS and line.split()[2] in keep_docs]
    (dest / "qrels.reference.txt").write_text("\n".join(sub) + "\n")
    (dest / "qrels.meta.json").write_text((SAMPLE / "qrels.meta.json").read_text())
    return {t: {d: g for d, g in ref[t].items() if d in keep_docs} for t in TOPICS if t in ref}


def _top(run: dict[str, float], k: int) -> list[str]:
    # trec_eval order written out: score descending, then doc id descending.
    return [d for d, _ in sorted(run.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:k]]


def _r_at_20(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> float:
    import pytrec_eval

    ev = pytrec_eval.RelevanceEvaluator({t: dict(d) for t, d in qrels.items()}, {"recall_20"})
    per = ev.evaluate({t: dict(s) for t, s in run.items()})
    topics = [t for t, d in qrels.items() if any(g >= 1 for g in d.values())]
    return sum(per[t]["recall_20"] for t in topics) / len(topics)


@pytest.fixture(scope="module")
def workflow(tmp_path_factory):
    from workbench.demo.workflow import WorkflowOptions, run_workflow
    from workbench.store import Store

    tmp = tmp_path_factory.mktemp("e2e")
    reference = _subset(tmp / "cran-subset")
    store = Store(tmp / "wb.duckdb", client="pytest")
    options = WorkflowOptions(folder=tmp / "cran-subset", collection="cransub", labels_dir=tmp / "labels",
                              encoder=StubEncoder())
    report = run_workflow(store, options)
    return store, report, reference, tmp


def test_pool_v1_is_the_depth_20_union_of_the_three_runs(workflow):
    store, report, _, _ = workflow
    runs = {n: store.runs.get_run(n) for n in ("bm25", "dense", "rrf")}
    expected = {t: set().union(*(_top(r.get(t, {}), POOL_DEPTH) for r in runs.values())) for t in TOPICS}
    assert store.pools.pool_documents(report.pool_v1.pool_version) == {t: d for t, d in expected.items() if d}
    assert report.pool_v1.n_entries == sum(len(d) for d in expected.values())
    assert report.judged_v1 == report.pool_v1.n_entries  # the reference assessor judged each pooled doc once


def test_qrels_v1_is_the_reference_grade_of_every_pooled_document_else_zero(workflow):
    store, report, reference, tmp = workflow
    pooled = store.pools.pool_documents(report.pool_v1.pool_version)
    expected = {t: {d: max(0, reference.get(t, {}).get(d, 0)) for d in docs} for t, docs in pooled.items()}
    assert store.qrels.get_qrels("cransub-v1") == expected
    lines = (tmp / "labels" / "cransub-v1.qrels").read_text().splitlines()
    assert sorted(lines) == sorted(f"{t} 0 {d} {g}" for t, ds in expected.items() for d, g in ds.items())
    assert report.qrels_v1.parent_version is None and report.qrels_v1.pool_version == report.pool_v1.pool_version


def test_pool_v2_holds_exactly_the_new_runs_novel_documents_and_qrels_v2_extends_v1(workflow):
    store, report, reference, _ = workflow
    new = store.runs.get_run("bm25-stem")
    v1 = store.pools.pool_documents(report.pool_v1.pool_version)
    delta = {t: set(_top(new.get(t, {}), POOL_DEPTH)) - v1.get(t, set()) for t in TOPICS}
    delta = {t: d for t, d in delta.items() if d}
    assert store.pools.pool_documents(report.pool_v2.pool_version, with_ancestors=False) == delta
    assert report.pool_v2.parent_version == report.pool_v1.pool_version
    assert report.delta_judged == sum(len(d) for d in delta.values()) > 0
    q1, q2 = store.qrels.get_qrels("cransub-v1"), store.qrels.get_qrels("cransub-v2")
    expected = {t: dict(q1.get(t, {})) for t in set(q1) | set(delta)}
    for t, docs in delta.items():
        expected[t].update({d: max(0, reference.get(t, {}).get(d, 0)) for d in docs})
    assert q2 == expected
    assert report.qrels_v2.parent_version == "cransub-v1"
    assert report.novel_on_v1["bm25-stem"][POOL_DEPTH] == sum(len(d) for d in delta.values())
    assert all(report.novel_on_v1[r][POOL_DEPTH] == 0 for r in ("bm25", "dense", "rrf"))


def test_scores_and_their_movement_match_pytrec_eval(workflow):
    store, report, _, _ = workflow
    q1, q2 = store.qrels.get_qrels("cransub-v1"), store.qrels.get_qrels("cransub-v2")
    for name in ("bm25", "dense", "rrf", "bm25-stem"):
        run = store.runs.get_run(name)
        a1 = report.evaluations["cransub-v1"][name].aggregates[report.headline].macro
        a2 = report.evaluations["cransub-v2"][name].aggregates[report.headline].macro
        assert a1 == pytest.approx(_r_at_20(q1, run), abs=1e-12)
        assert a2 == pytest.approx(_r_at_20(q2, run), abs=1e-12)
    # The pooled runs' documents were all judged already, so only their |R| can grow: R@20 cannot rise.
    for name in ("bm25", "dense", "rrf"):
        assert (report.evaluations["cransub-v2"][name].aggregates[report.headline].macro
                <= report.evaluations["cransub-v1"][name].aggregates[report.headline].macro + 1e-12)


def test_pool_bias_gap_is_pooled_minus_full_recall_over_the_same_topics(workflow):
    store, report, reference, _ = workflow
    q2 = store.qrels.get_qrels("cransub-v2")
    topics = [t for t, d in q2.items() if any(g >= 1 for g in d.values())]
    full = {t: reference[t] for t in topics}
    for name, (pooled, full_value) in report.bias.items():
        run = store.runs.get_run(name)
        assert pooled == pytest.approx(_r_at_20(q2, run), abs=1e-12)
        assert full_value == pytest.approx(_r_at_20(full, run), abs=1e-12)
        assert pooled >= full_value - 1e-12  # the pool can only hide relevant documents


def test_leave_one_run_out_drops_and_kendall_tau(workflow):
    from scipy.stats import kendalltau

    store, report, _, _ = workflow
    names = ["bm25", "dense", "rrf", "bm25-stem"]
    runs = {n: store.runs.get_run(n) for n in names}
    tops = {n: {t: set(_top(runs[n].get(t, {}), POOL_DEPTH)) for t in TOPICS} for n in names}
    q2 = store.qrels.get_qrels("cransub-v2")
    topics = [t for t, d in q2.items() if any(g >= 1 for g in d.values())]
    for row in report.loo:
        others = [n for n in names if n != row.run]
        unique = {t: tops[row.run][t] - set().union(*(tops[o][t] for o in others)) for t in TOPICS}
        assert row.n_unique == sum(len(u) for u in unique.values())
        reduced_q = {t: {d: g for d, g in q2[t].items() if d not in unique.get(t, set())} for t in topics}
        # A topic whose relevant documents all came from the left-out run is excluded, not scored 0.
        kept = [t for t in topics if any(g >= 1 for g in reduced_q[t].values())]
        assert sorted(row.excluded) == sorted(set(topics) - set(kept)) and len(row.topics) == len(kept)
        per = []
        for t in kept:
            rel = {d for d, g in reduced_q[t].items() if g >= 1}
            per.append(len(rel & set(_top(runs[row.run].get(t, {}), 20))) / len(rel))
        assert row.reduced == pytest.approx(sum(per) / len(kept), abs=1e-12)
        full = {n: _r_at_20({t: q2[t] for t in kept}, runs[n]) for n in names}
        assert row.full == pytest.approx(full[row.run], abs=1e-12)
        scores = dict(full, **{row.run: row.reduced})
        assert row.tau == pytest.approx(kendalltau([full[n] for n in sorted(names)],
                                                   [scores[n] for n in sorted(names)]).statistic)
        # tau_all: every run scored on the reduced qrels (pytrec_eval), ordered against the full qrels.
        reduced = {n: _r_at_20({t: reduced_q[t] for t in kept}, runs[n]) for n in names}
        assert dict(row.reduced_all) == {n: pytest.approx(v, abs=1e-12) for n, v in reduced.items()}
        assert row.tau_all == pytest.approx(kendalltau([full[n] for n in sorted(names)],
                                                       [reduced[n] for n in sorted(names)]).statistic)
        order_full = sorted(names, key=lambda n: (-round(full[n], 12), n))  # ties by name; rounded: the sums'
        order_reduced = sorted(names, key=lambda n: (-round(reduced[n], 12), n))  # order may differ in the last bit
        assert row.moved_all == tuple(n for i, n in enumerate(order_full) if order_reduced[i] != n)


def test_the_workflow_is_idempotent(workflow):
    from workbench.demo.workflow import WorkflowOptions, run_workflow

    store, report, _, tmp = workflow
    before = store.judgments.count_judgments()
    again = run_workflow(store, WorkflowOptions(folder=tmp / "cran-subset", collection="cransub",
                                                labels_dir=tmp / "labels", encoder=StubEncoder()))
    assert store.judgments.count_judgments() == before
    assert again.qrels_v2.content_hash == report.qrels_v2.content_hash
    assert again.judged_v1 == again.delta_judged == 0
    assert again.sampling is not None and again.sampling.n_new == 0             # the sample is reused, not redrawn
    assert again.sampling.pool.content_hash == report.sampling.pool.content_hash


def test_the_demo_lead_gets_the_delta_to_judge_as_a_second_assessor(workflow):
    store, report, _, _ = workflow
    queue = store.judging.assessor_queue("demo-lead")
    assert {(e.topic_id, e.doc_id) for e in queue} == {
        (t, d) for t, docs in store.pools.pool_documents(report.pool_v2.pool_version, with_ancestors=False).items()
        for d in docs}
    assert report.lead_queue == len(queue) == report.pool_v2.n_entries


def test_the_demo_categorises_bm25s_misses_at_20_against_the_full_judgments(workflow):
    from pooling.tokenize import Tokenizer

    store, report, reference, _ = workflow
    ml = report.misses.misses
    assert (ml.run_name, ml.qrels_version, ml.k) == ("bm25", "cransub-reference", 20)
    run = store.runs.get_run("bm25")
    expected = {(t, d) for t, docs in reference.items() for d, g in docs.items()
                if g >= 1 and d not in _top(run.get(t, {}), 20)}
    listed = {(r.evidence.topic_id, r.evidence.doc_id) for r in ml.rows}
    assert listed == expected and ml.counts.total == len(expected) == sum(ml.counts.per_cause.values())
    deeper = {(t, d) for t, d in expected if d in run.get(t, {})}
    assert {(r.evidence.topic_id, r.evidence.doc_id) for r in ml.with_cause("found deeper")} == deeper
    # vocabulary mismatch, recomputed with the run's analyser (no stemming, Lucene stop words)
    tok, topics, docs = Tokenizer(), store.collections.get_topics("cransub"), store.collections.get_documents("cransub")
    mismatch = {(t, d) for t, d in expected - deeper if d in docs and docs[d].content.strip()
                and not set(tok(topics[t].query)) & set(tok(docs[d].content))}
    assert {(r.evidence.topic_id, r.evidence.doc_id) for r in ml.with_cause("vocabulary mismatch")} == mismatch
    # beyond depth: not indexed or mismatched aside, every other miss shares a term and the run's list is full
    # (depth 100), and re-scoring bm25 to the whole collection ranks it below 100: the list closes
    not_indexed = {(r.evidence.topic_id, r.evidence.doc_id) for r in ml.with_cause("not indexed")}
    beyond = expected - deeper - mismatch - not_indexed
    assert all(len(run[t]) == 100 for t, _ in beyond)
    rows = ml.with_cause("beyond depth")
    assert {(r.evidence.topic_id, r.evidence.doc_id) for r in rows} == beyond
    assert all(r.evidence.deeper_rank is not None and r.evidence.deeper_rank > 100 for r in rows)
    assert ml.counts.residue == 0 and ml.counts.closed


def test_the_chunked_collection_is_scored_at_chunk_and_document_level(workflow):
    from workbench.demo.render_workflow import render_workflow
    from workbench.scoring.units import ranked_lists, ranked_run_of, to_documents

    store, report, reference, _ = workflow
    u = report.units
    assert u is not None and u.chunk_collection == "cransub-p64" and u.size == 64 and u.overlap == 16
    cmap = store.units.get_chunk_map("cransub-p64")
    assert cmap is not None and len(cmap) == u.n_chunks and set(cmap.doc_ids) == set(store.collections.get_documents("cransub"))
    doc_view = next(v for v in u.report.views if v.unit == "doc")
    # The document view is the chunk run mapped by hand (best chunk per document), scored by pytrec_eval.
    run = store.runs.get_run(u.chunk_run)
    lists = to_documents({t: list(d) for t, d in run.items()}, cmap).lists
    mapped = {t: {d: float(len(ds) - i) for i, d in enumerate(ds)} for t, ds in lists.items()}
    from workbench.scoring.measures import parse_measure

    e = doc_view.report.evaluations[0]
    assert e.aggregates[parse_measure("R@20")].macro == pytest.approx(_r_at_20(reference, mapped))
    assert ranked_lists(ranked_run_of(lists)) == lists
    text = render_workflow(report)
    assert "Retrieval units: cransub in 64-token passages (overlap 16)" in text
    line = next(x for x in text.splitlines() if x.strip().startswith("R[chunk]@5"))
    assert "R[doc]@5" in line and "R@5" in line


def test_sampled_judging_estimates_r20_from_the_sample_the_reference_judged(workflow):
    """The [sampling] section: a sample pool judged by the reference, published, scored; the estimates
    recomputed here by hand (Horvitz-Thompson over the stored inclusion probabilities)."""
    from workbench.demo.render_workflow import render_workflow

    store, report, reference, _ = workflow
    s = report.sampling
    assert s is not None and s.pool.is_sample and s.qrels.is_sample
    assert (s.design.spec(), s.design.outside_rate, s.design.seed) == ("1-20:1.0,21-100:0.02", 0.002, 7)
    # exported like every published version (a trial found the demo's sample never was: qrels verify said so)
    from workbench.services.judging.qrels_files import check_exports

    labels = store.path.parent / "labels"
    (check,) = check_exports(store.qrels, labels, [s.qrels.name])
    assert check.ok and (labels / f"{s.qrels.name}.qrels").is_file(), check.describe()
    assert s.file == labels / f"{s.qrels.name}.qrels" and s.file in report.exports  # listed under "Qrels files"
    _, sample = store.pools.read_sample(s.pool.pool_version)
    judged = store.qrels.get_qrels(s.qrels.name)
    # every sampled document of a topic the reference judged carries the reference grade, else 0
    assert {(d.topic_id, d.doc_id): judged[d.topic_id][d.doc_id] for d in sample.docs if reference.get(d.topic_id)} \
        == {(d.topic_id, d.doc_id): reference[d.topic_id].get(d.doc_id, 0) for d in sample.docs
            if reference.get(d.topic_id)}
    v2 = report.evaluations[report.qrels_v2.name]
    topics = next(iter(v2.values())).topics
    weight = {(d.topic_id, d.doc_id): 1 / d.inclusion for d in sample.docs}
    for row in s.rows:
        run = store.runs.get_run(row.run)
        r_hat = {t: sum(w for (tt, d), w in weight.items() if tt == t and judged[t].get(d, 0) >= 1) for t in topics}
        hits = {t: sum(w for (tt, d), w in weight.items() if tt == t and judged[t].get(d, 0) >= 1
                       and d in _top(run[t], 20)) for t in topics}
        used = [t for t in topics if r_hat[t] > 0]
        assert row.macro.value == pytest.approx(sum(hits[t] / r_hat[t] for t in used) / len(used), abs=1e-12)
        assert row.micro.value == pytest.approx(sum(hits.values()) / sum(r_hat.values()), abs=1e-12)
        assert row.macro.n_topics == len(used) and row.macro.low <= row.macro.value <= row.macro.high
        assert (row.pooled, row.full) == pytest.approx(report.bias[row.run])
    text = render_workflow(report)
    assert "Sampled judging: R@20 estimated from a stratified sample of" in text
    assert f"sample {s.pool.pool_version}: the depth-100 pool of bm25, dense, rrf, bm25-stem" in text
