"""`workbench run rerank`, `run import --reranks`, `stages` and `depth-sweep` through `main(argv)` (issue 10).

The bi-encoder is the stub encoder of the pooling tests (the real MiniLM and the real
CrossEncoder path are covered in tests/pooling); everything else is the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_ingest import table_counts
from tests.cli.test_pooling_cli import _Stub, run
from workbench.store import Store

DOCS = {
    "d1": "shock wave on a wedge", "d2": "boundary layer transition on a flat plate",
    "d3": "heat transfer in composite slabs", "d4": "shock wave boundary layer interaction",
    "d5": "supersonic flow past a cone", "d6": "laminar boundary layer with suction",
}
QUERIES = {"1": "shock wave boundary layer", "2": "heat transfer slabs"}
QRELS = "1 0 d4 2\n1 0 d1 1\n1 0 d6 1\n2 0 d3 2\n2 0 d5 0\n"


@pytest.fixture
def project(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("pooling.retrievers.dense.SentenceTransformerEncoder", _Stub)
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n"
                                                 for d, t in DOCS.items()))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    (folder / "qrels.reference.txt").write_text(QRELS)
    db = tmp_path / "wb.duckdb"
    assert run(capsys, "--db", db, "-q", "ingest", folder)[0] == 0
    code, _, err = run(capsys, "--db", db, "run", "bm25", "--collection", "toy", "--name", "bm25", "--depth", "6")
    assert code == 0, err
    return db


def test_run_rerank_stores_lineage_and_cost_and_run_show_prints_them(project, capsys):
    code, out, err = run(capsys, "--db", project, "run", "rerank", "--candidates", "bm25", "--depth", "3",
                         "--name", "bm25+stub", "--batch-size", "8")
    assert code == 0, err
    assert "stored run bm25+stub (rerank of the top 3 of bm25 by stub, bi-encoder stub@sha256:cli)" in out
    assert "measured cost: 2 topics, " in out and "batch 8, device cpu" in out
    store = Store(project, client="pytest")
    lin = store.runs.get_run_lineage("bm25+stub")
    assert (lin.candidate_run, lin.candidate_depth, lin.reranker_kind, lin.model_name) == ("bm25", 3, "bi-encoder",
                                                                                           "stub")
    top3 = {t: set(list(s)[:3]) for t, s in store.runs.get_run("bm25").items()}
    assert {t: set(s) for t, s in store.runs.get_run("bm25+stub").items()} == top3
    code, out, err = run(capsys, "--db", project, "run", "show", "bm25+stub")
    assert code == 0, err
    assert "lineage: reranks the top 3 of run bm25 with stub (bi-encoder, model stub@sha256:cli, produced)" in err
    assert "measured cost: 2 topics" in err
    code, _, err = run(capsys, "--db", project, "run", "rerank", "--candidates", "bm25", "--depth", "3",
                       "--name", "x", "--model", "/no/such/model", "--cross-encoder", "/no/ce")
    assert code == 1 and "choose one reranker" in err


def test_run_rerank_defaults_to_one_thread_and_shows_its_progress(project, capsys):
    # Issue 26: with torch's default (a thread per core) a rerank took 193 s at load 7 against 9.5 s
    # idle; one thread does not collapse under load (bench/results/rerank.md).
    code, out, err = run(capsys, "--db", project, "run", "rerank", "--candidates", "bm25", "--depth", "3",
                         "--name", "rr1")
    assert code == 0, err
    assert "threads 1;" in out
    store = Store(project, client="pytest")
    assert store.runs.get_run_info("rr1").params["threads"] == 1 and store.runs.get_rerank_cost("rr1").threads == 1
    # progress: the model and the document vectors first (the distinct top-3 documents of the two topics,
    # encoded now), then the topics
    n = len({d for scores in store.runs.get_run("bm25").values() for d in list(scores)[:3]})
    assert n == 4  # topics 1 and 2 share two of their top 3
    ready = err.index(f"[finished] reranker stub (bi-encoder) ready: {n} candidate documents, {n} vectors encoded "
                      "now, 0 from the cache")
    assert ready < err.index("reranking topics") and "torch threads: 1" in err[:ready]
    code, out, err = run(capsys, "--db", project, "run", "rerank", "--candidates", "bm25", "--depth", "3",
                         "--name", "rr0", "--threads", "0")
    assert code == 0, err
    assert "threads default;" in out and "torch threads: torch's choice" in err  # on request only
    assert "vectors encoded now" not in err and f"all {n} vectors from the cache" in err  # those of rr1, cached
    code, _, err = run(capsys, "--db", project, "run", "rerank", "--candidates", "bm25", "--depth", "3",
                       "--name", "rr-1", "--threads", "-1")
    assert code == 2 and "--threads" in err


def test_stages_names_every_row_by_its_stage_and_checks_the_permutation(project, capsys):
    assert run(capsys, "--db", project, "run", "rerank", "--candidates", "bm25", "--depth", "3", "--name", "rr")[0] == 0
    code, out, err = run(capsys, "--db", project, "stages", "rr", "bm25", "--qrels", "toy-reference", "--final-k", "1",
                         "--depth", "3")
    assert code == 0, err
    for label in ("R@3 [candidates: bm25]", "R@1 [candidates: bm25]", "nDCG@1 [candidates: bm25]",
                  "R@3 [final: bm25+stub]", "R@1 [final: bm25+stub]", "nDCG@1 [final: bm25+stub]"):
        assert label in out
    assert "R@3 unchanged by reranking: yes" in out and "a permutation of the candidates" in out
    assert "reranker contribution R@1 [final] - R@1 [candidates] =" in out
    assert "stock R@3 - R@1 of the candidates =" in out
    assert "run bm25: a single stage" in out and "diagnosis (high: R@3 >= 0.8, nDCG@1 >= 0.5" in out
    code, out, err = run(capsys, "--db", project, "stages", "rr", "--qrels", "toy-reference", "--final-k", "1",
                         "--format", "json")
    doc = json.loads(out)
    p = doc["pipelines"][0]
    assert p["permutation"]["is_permutation"] is True and p["candidate_run"] == "bm25" and p["depth"] == 3
    rows = {r["label"]: r for r in p["rows"]}
    assert rows["R@3 [final: bm25+stub]"]["macro"] == rows["R@3 [candidates: bm25]"]["macro"]
    assert set(p["diagnosis"][1]["counts"]) == {"ranking problem", "candidate generation problem",
                                                 "check ingestion", "stop"}
    code, _, err = run(capsys, "--db", project, "stages", "rr", "--qrels", "toy-reference", "--recall-threshold", "2")
    assert code == 2 and "'--recall-threshold': expected a share in [0, 1], found 2.0" in err


def _write_run(path: Path, rows: list[tuple[str, str, float]], tag: str = "ext") -> Path:
    path.write_text("".join(f"{t} Q0 {d} {i + 1} {s} {tag}\n" for i, (t, d, s) in enumerate(rows)))
    return path


def test_run_import_reranks_refuses_documents_that_are_not_candidates(project, capsys, tmp_path):
    store = Store(project, client="pytest")
    top2 = {t: list(s)[:2] for t, s in store.runs.get_run("bm25").items()}
    outside = next(d for d in DOCS if d not in top2["1"])
    bad = _write_run(tmp_path / "bad.trec", [("1", top2["1"][1], 2.0), ("1", outside, 1.0), ("2", top2["2"][0], 1.0)])
    before = table_counts(project)
    code, out, err = run(capsys, "--db", project, "run", "import", bad, "--name", "ext", "--reranks", "bm25",
                         "--candidate-depth", "2")
    assert code == 1
    assert "bad.trec:2: expected the top 2 of every topic to be candidates of run 'bm25'" in err
    assert f"(topic 1, document {outside}, rank 2)" in err and "--allow-new-documents" in err
    assert table_counts(project) == before  # nothing written
    code, out, err = run(capsys, "--db", project, "run", "import", bad, "--name", "ext", "--reranks", "bm25",
                         "--candidate-depth", "2", "--allow-new-documents")
    assert code == 0, err
    assert "stored as a plain run, not a rerank" in err and f"topic 1: document {outside} at rank 2" in err
    assert store.runs.get_run_info("ext").kind == "imported" and store.runs.get_run_lineage("ext") is None


def test_run_import_reranks_stores_a_permutation_with_its_lineage(project, capsys, tmp_path):
    store = Store(project, client="pytest")
    top2 = {t: list(s)[:2] for t, s in store.runs.get_run("bm25").items()}
    good = _write_run(tmp_path / "good.trec", [("1", top2["1"][1], 2.0), ("1", top2["1"][0], 1.0),
                                               ("2", top2["2"][0], 2.0)], tag="monot5")
    code, out, err = run(capsys, "--db", project, "run", "import", good, "--name", "ext", "--reranks", "bm25",
                         "--candidate-depth", "2")
    assert code == 0, err
    assert "lineage: reranks the top 2 of bm25 (pipeline bm25+monot5" in out
    lin = store.runs.get_run_lineage("ext")
    assert (lin.candidate_run, lin.candidate_depth, lin.reranker, lin.reranker_kind, lin.origin) == (
        "bm25", 2, "monot5", "external", "imported")
    assert store.runs.get_rerank_cost("ext") is None and store.runs.get_run_info("ext").kind == "rerank"
    code, out, err = run(capsys, "--db", project, "run", "import", good, "--name", "ext", "--reranks", "bm25",
                         "--candidate-depth", "2")
    assert code == 0 and "unchanged" in out  # an identical re-import is a no-op
    code, _, err = run(capsys, "--db", project, "run", "import", good, "--name", "y", "--reranks", "bm25")
    assert code == 2 and "go together" in err
    code, _, err = run(capsys, "--db", project, "run", "import", good, "--name", "y")
    assert code == 2 and "--collection is required" in err


def test_depth_sweep_prints_the_table_the_fit_and_writes_the_plot(project, capsys, tmp_path):
    plot = tmp_path / "depth.html"
    code, out, err = run(capsys, "--db", project, "depth-sweep", "--candidates", "bm25", "--depths", "2,4,6",
                         "--qrels", "toy-reference", "--final-k", "2", "--repeat", "2", "--plot", plot)
    assert code == 0, err
    assert "Depth sweep: the top D of bm25 reranked by stub (bi-encoder, stub@sha256:cli)" in out
    lines = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert [row[0] for row in lines] == ["2", "4", "6"]
    assert all(row[6] == "yes" for row in lines)  # R@D unchanged at every depth
    assert "how cost scales with depth (least squares over 6 per-topic measurements)" in out
    # the cost is reranking from text (issue 26); the cost with cached vectors is its own, labelled column
    assert ("cost per topic reranking from text (the query and the D candidates encoded, then scored, inside each "
            "topic's timed block) on all 2 topics") in out
    assert " dR@D per s dR@2 per s" in out  # the marginal recall per added second (costs are seconds from text)
    assert " cached ms " in out and "cached ms: mean ms per topic of the same rerank with the document vectors " \
        "read from the embedding cache" in out
    assert plot.is_file() and "vega" in plot.read_text() and "cached vectors" in plot.read_text()
    code, out, err = run(capsys, "--db", project, "depth-sweep", "--candidates", "bm25", "--depths", "2,6",
                         "--qrels", "toy-reference", "--format", "json", "--cost-topics", "1")
    doc = json.loads(out)
    assert [r["depth"] for r in doc["rows"]] == [2, 6] and doc["fit"]["n_points"] == 2  # 1 cost topic x 2 depths
    assert doc["cost_topics"] == ["1"] and list(doc["per_topic_ms"]["6"]) == ["1"]
    assert list(doc["cached_per_topic_ms"]["6"]) == ["1", "2"] and doc["rows"][0]["cached_mean_ms"] > 0
    assert doc["cost"].endswith("on 1 of 2 topics (evenly spaced)")
    # R@D of the candidates by hand: topic 1 |R| = 3, topic 2 |R| = 1 (d5 is judged 0).
    store = Store(project, client="pytest")
    bm25 = store.runs.get_run("bm25")
    rel = {"1": {"d4", "d1", "d6"}, "2": {"d3"}}
    want = sum(len(rel[t] & set(list(bm25.get(t, {}))[:2])) / len(rel[t]) for t in rel) / 2
    assert doc["rows"][0]["candidate_recall"] == pytest.approx(want)


def test_depth_sweep_caps_depths_deeper_than_the_candidate_run_and_says_so(project, capsys):
    # Issue 26: the default depths (10,50,100,200) failed on the workflow's depth-100 runs. Deeper
    # depths are capped at the run's depth (6 here): 99 becomes 6, merged with the 6 asked for.
    code, out, err = run(capsys, "--db", project, "depth-sweep", "--candidates", "bm25", "--depths", "2,6,99",
                         "--qrels", "toy-reference", "--final-k", "2")
    assert code == 0, err
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert [row[0] for row in rows] == ["2", "6"]
    note = "run bm25 holds at most 6 documents per topic: depth 99 capped to 6 (already in the sweep)"
    assert note in out and note in err
    assert "produce the candidate run with --depth 99 or more to sweep deeper" in err
    code, out, err = run(capsys, "--db", project, "depth-sweep", "--candidates", "bm25", "--depths", "4,50,99",
                         "--qrels", "toy-reference", "--final-k", "2", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert [r["depth"] for r in doc["rows"]] == [4, 6]
    assert (doc["run_depth"], doc["capped_depths"]) == (6, [50, 99])
    # R@6 is the whole run: topic 1 |R| = 3, topic 2 |R| = 1, recomputed by hand from the stored run.
    store = Store(project, client="pytest")
    bm25 = store.runs.get_run("bm25")
    rel = {"1": {"d4", "d1", "d6"}, "2": {"d3"}}
    assert doc["rows"][1]["candidate_recall"] == pytest.approx(
        sum(len(rel[t] & set(bm25.get(t, {}))) / len(rel[t]) for t in rel) / 2)
