"""`workbench score`, `compare` and `misses` end to end through `main(argv)`.

Files are scored without a store; stored runs and qrels versions are scored by
name and recorded in the evaluations table. Expected values are written as formulas.
"""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from tests.cli.helpers import cli
from workbench.store import Store
from workbench.types import Document, RunInfo, Topic

QRELS = "1 0 a 1\n1 0 d9 2\n1 0 z 1\n2 0 c 1\n3 0 q 0\n"
RUN_A = "1 Q0 a 1 3.0 bm25\n1 Q0 d10 2 2.0 bm25\n1 Q0 d9 3 2.0 bm25\n2 Q0 x 1 1.0 bm25\n2 Q0 c 2 0.5 bm25\n"
RUN_B = "1 Q0 d10 1 3.0 dense\n1 Q0 a 2 2.0 dense\n2 Q0 c 1 1.0 dense\n"
# Run A, topic 1 in trec_eval order: a (3.0), d9 and d10 tie at 2.0 -> d9 before d10 (doc_id descending).


@pytest.fixture
def files(write, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "nodb" / "wb.duckdb"))
    return write("q.txt", QRELS), write("a.run", RUN_A), write("b.run", RUN_B)


def test_score_files_json_values_and_lineage(capsys, files):
    q, a, b = files
    code, out, err = cli(capsys, "score", a, b, "--qrels", q, "-m", "R@2", "-m", "RR@10", "-m", "nDCG@3",
                         "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    h = doc["header"]
    assert h["qrels"]["origin"] == "file" and len(h["qrels"]["content_hash"]) == 64
    assert h["rel"] == 1 and h["missing"] == "fail" and h["evaluator_version"].startswith("workbench ")
    ra, rb = doc["runs"]
    assert (ra["run"], rb["run"]) == ("bm25", "dense")
    assert ra["topics"] == ["1", "2"] and ra["excluded_topics"] == ["3"]
    # R@2, run A: topic 1 {a, d9} of |R|=3 -> 2/3; topic 2 {x, c} -> 1/1.
    assert ra["measures"]["R@2"]["macro"] == pytest.approx((2 / 3 + 1) / 2)
    assert ra["measures"]["R@2"]["micro"] == pytest.approx((2 + 1) / (3 + 1))
    assert ra["measures"]["R@2"]["ceiling"] == pytest.approx((2 / 3 + 1) / 2)
    assert ra["measures"]["RR@10"]["macro"] == pytest.approx((1 + 1 / 2) / 2)
    dcg = 1 / math.log2(2) + 2 / math.log2(3)                      # a (1) at 1, d9 (2) at 2
    idcg = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert ra["per_topic"] if "per_topic" in ra else True
    assert ra["measures"]["nDCG@3"]["sum_value"] == pytest.approx(dcg / idcg + (1 / math.log2(3)) / 1)
    assert rb["measures"]["R@2"]["macro"] == pytest.approx((1 / 3 + 1) / 2)
    assert ra["pool_novel"]["2"] == {"unjudged": 1, "returned": 4, "share": 0.25,
                                     "recall_low": pytest.approx((2 / 3 + 1) / 2),
                                     "recall_high": pytest.approx((2 / 3 + 2 / 2) / 2)}
    assert "[finished]" in err


def test_qrels_content_hash_is_sha256_of_sorted_lines():
    import hashlib

    from workbench.hashing import qrels_content_hash

    q = {"2": {"b": 1, "a": -1}, "10": {"x": 0}}
    # sorted as strings: "10" < "2", then doc ids within the topic
    assert qrels_content_hash(q) == hashlib.sha256(b"10\tx\t0\n2\ta\t-1\n2\tb\t1\n").hexdigest()


def test_scoring_files_does_not_import_the_store(files):
    import subprocess
    import sys

    q, a, _ = files
    code = ("import sys; from workbench.services.evaluation.pipeline import score; "
            "from workbench.services.evaluation.request import ScoreRequest; "
            f"score(ScoreRequest(({str(a)!r},), {str(q)!r}, measures=('R@2',))); print('duckdb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_score_table_prints_header_ceiling_and_pool_novel(capsys, files):
    q, a, _ = files
    code, out, _ = cli(capsys, "score", a, "--qrels", q, "--k", "2,10", "--per-topic")
    assert code == 0
    assert "relevant   grade >= 1 (inclusive" in out
    assert "missing    fail" in out
    assert "1 excluded with |R| = 0 (3)" in out
    line = next(x for x in out.splitlines() if x.startswith("R@2 "))
    assert line.split()[1:4] == [f"{(2 / 3 + 1) / 2:.4f}", f"{3 / 4:.4f}", f"{(2 / 3 + 1) / 2:.4f}"]
    assert "pool-novel documents in the top 10" in out
    assert "1\t3:d10" in out and "2\t1:x" in out


@pytest.mark.parametrize("fmt, sep", [("csv", ","), ("tsv", "\t")])
def test_score_long_formats_keep_full_precision(capsys, files, fmt, sep):
    q, a, _ = files
    code, out, _ = cli(capsys, "score", a, "--qrels", q, "-m", "R@2", "--format", fmt, "--per-topic")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out), delimiter=sep))
    by = {(r["measure"], r["aggregate"] or f"topic {r['topic_id']}"): r for r in rows}
    assert float(by[("R@2", "macro")]["value"]) == (2 / 3 + 1) / 2
    assert by[("R@2", "topic 1")]["numerator"] == "2.0" and by[("R@2", "topic 1")]["denominator"] == "3.0"
    assert by[("R@2", "micro")]["value"] == repr(3 / 4)
    assert {r["qrels_version"] for r in rows} == {str(q)}


def test_score_jsonl_and_measure_expansion(capsys, files):
    q, a, _ = files
    code, out, _ = cli(capsys, "score", a, "--qrels", q, "-m", "P", "--k", "1,2", "--format", "jsonl")
    assert code == 0
    rows = [json.loads(x) for x in out.splitlines()]
    macro = {r["measure"]: r["value"] for r in rows if r["aggregate"] == "macro"}
    assert macro == {"P@1": pytest.approx((1 + 0) / 2), "P@2": pytest.approx((2 / 2 + 1 / 2) / 2)}


def test_missing_topics_fail_with_one_line_and_the_policy_options(capsys, files, write):
    q, _, b = files
    partial = write("p.run", "1 Q0 a 1 1.0 p\n")
    code, out, err = cli(capsys, "score", partial, "--qrels", q)
    assert code == 1 and out == ""
    assert err.strip().splitlines()[-1].startswith("workbench: error: run 'p' has no results for 1 qrels topic(s): 2")
    code, out, _ = cli(capsys, "score", partial, "--qrels", q, "--missing", "zero", "-m", "R@10")
    assert code == 0 and "missing    zero" in out and "missing    run p: 1 topic(s) (2)" in out
    line = next(x for x in out.splitlines() if x.startswith("R@10 "))
    assert line.split()[1] == f"{(1 / 3 + 0) / 2:.4f}"
    # exclude with two runs: the topic one run misses is left out of both.
    code, out, _ = cli(capsys, "score", partial, b, "--qrels", q, "--missing", "exclude", "-m", "R@10",
                       "--format", "json")
    doc = json.loads(out)
    assert [r["topics"] for r in doc["runs"]] == [["1"], ["1"]]


def test_bad_input_is_one_error_line(capsys, files, write):
    q, a, _ = files
    code, _, err = cli(capsys, "score", a, "--qrels", q, "-m", "recall@10")
    assert code == 2 and "unknown measure 'recall'; known: Judged, P, Phat, R, RR, Rhat, Rhat_micro, Success, nDCG" in err
    code, _, err = cli(capsys, "score", a, "--qrels", q, "--format", "xml")
    assert code == 2 and "--format" in err  # a usage error (issue 9: one exit-code convention)
    bad = write("bad.run", "1 Q0 a 1 1.0 s\n1 Q0 b 2\n")
    code, _, err = cli(capsys, "score", bad, "--qrels", q)
    assert code == 1 and f"{bad}:2: expected 6 columns" in err and "Traceback" not in err
    code, _, err = cli(capsys, "score", "no-such-run", "--qrels", q)
    assert code == 1 and "unknown run file or stored run 'no-such-run'" in err
    code, _, err = cli(capsys, "score", a, "--qrels", q, "--k", "x")
    assert code == 2 and "'--k': expected comma-separated cutoffs k >= 1" in err


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".html", b"<!DOCTYPE html>"), (".svg", b"<svg")])
def test_recall_curve_plot(capsys, files, tmp_path, suffix, magic):
    q, a, b = files
    target = tmp_path / "out" / f"curve{suffix}"
    code, _, err = cli(capsys, "score", a, b, "--qrels", q, "--plot", target)
    assert code == 0 and f"wrote {target}" in err
    assert target.read_bytes().lstrip()[: len(magic)] == magic


def test_compare_reports_lost_and_gained_documents_and_tests(capsys, files):
    q, a, b = files
    code, out, _ = cli(capsys, "compare", a, b, "--qrels", q, "-m", "R@1", "--format", "json", "--resamples", "999",
                       "--min-topics", "2")
    assert code == 0
    doc = json.loads(out)
    assert doc["mean_a"] == pytest.approx((1 / 3 + 0) / 2) and doc["mean_b"] == pytest.approx((0 + 1) / 2)
    first, second = doc["per_topic"]
    assert first["topic_id"] == "1" and first["delta"] == pytest.approx(-1 / 3)  # largest loss first
    assert first["lost"] == [["a", 1, 1, 2]] and first["gained"] == []
    assert second["gained"] == [["c", 1, 2, 1]]
    perm, boot = doc["tests"]
    # Exact permutation test over 2 topics: all 4 sign flips give |mean| >= observed 1/3.
    assert perm["method"] == "permutation" and perm["p_value"] == 1.0
    assert boot["ci_low"] <= doc["mean_difference"] <= boot["ci_high"]
    code, out, _ = cli(capsys, "compare", a, b, "--qrels", q, "-m", "R@1", "--min-topics", "2")
    assert code == 0 and "a(g1:1->2)" in out and "permutation  p = 1.0000" in out


def test_misses_lists_relevant_documents_beyond_k(capsys, files):
    q, a, _ = files
    code, out, _ = cli(capsys, "misses", a, "--qrels", q, "--k", "1", "--format", "jsonl")
    assert code == 0
    rows = [json.loads(x) for x in out.splitlines()]
    assert [(r["topic_id"], r["doc_id"], r["grade"], r["rank"]) for r in rows] == [
        ("1", "d9", 2, 2), ("1", "z", 1, None), ("2", "c", 1, 2)
    ]


# -- stored runs and qrels --------------------------------------------------------------


@pytest.fixture
def project(tmp_path):
    db = tmp_path / "wb.duckdb"
    store = Store(db, client="pytest")
    docs = [Document(d, "", f"text {d}") for d in ("a", "c", "d9", "d10", "x", "z", "q")]
    store.collections.ingest_collection("toy", docs, [Topic("1", "one"), Topic("2", "two"), Topic("3", "three")])
    store.runs.save_run(RunInfo("bm25", "bm25", {}, 10, "toy"),
                   {"1": {"a": 3.0, "d10": 2.0, "d9": 2.0}, "2": {"x": 1.0, "c": 0.5}})
    store.runs.save_run(RunInfo("broken", "bm25", {}, 10, "toy"), {"1": {"a": 1.0}},
                   statuses={"2": "error"}, messages={"2": "timeout"})
    store.qrels.create_qrels_version("v1", "toy", {"1": {"a": 1, "d9": 2, "z": 1}, "2": {"c": 1}, "3": {"q": 0}},
                               origin="imported", rule="as is")
    return db, store


def test_stored_runs_are_scored_by_name_and_recorded(capsys, project):
    db, store = project
    code, out, err = cli(capsys, "--db", db, "score", "bm25", "--qrels", "v1", "-m", "R@2", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    h = doc["header"]
    assert h["qrels"]["name"] == "v1" and h["qrels"]["collection"] == "toy" and h["qrels"]["collection_version"]
    assert h["runs"][0]["collection_version"] == h["qrels"]["collection_version"]
    assert doc["runs"][0]["measures"]["R@2"]["macro"] == pytest.approx((2 / 3 + 1) / 2)
    (eid,) = h["evaluation_ids"]
    (summary,) = store.evaluations.list_evaluations(run_name="bm25")
    assert summary.evaluation_id == eid and summary.qrels_version == "v1"
    assert summary.params["rel"] == 1 and summary.params["missing"] == "fail"
    rows = {(r.measure, r.aggregate): r for r in store.evaluations.get_evaluation_rows(eid)}
    assert rows[("R@2", "macro")].value == pytest.approx((2 / 3 + 1) / 2)
    assert (rows[("R@2", "1")].numerator, rows[("R@2", "1")].denominator) == (2.0, 3.0)
    assert rows[("R@2", "micro")].value == pytest.approx(3 / 4)
    code, out, _ = cli(capsys, "--db", db, "score", "bm25", "--qrels", "v1", "--no-record", "--format", "json")
    assert json.loads(out)["header"]["evaluation_ids"] == [] and len(store.evaluations.list_evaluations()) == 1


def test_stored_error_topics_are_missing(capsys, project):
    db, _ = project
    code, _, err = cli(capsys, "--db", db, "score", "broken", "--qrels", "v1")
    assert code == 1 and "run 'broken' has no results for 1 qrels topic(s): 2" in err
    code, out, _ = cli(capsys, "--db", db, "score", "broken", "--qrels", "v1", "--missing", "zero",
                       "-m", "R@10", "--format", "json", "--no-record")
    run = json.loads(out)["runs"][0]
    assert run["missing_topics"] == ["2"] and run["measures"]["R@10"]["macro"] == pytest.approx((1 / 3 + 0) / 2)


def test_unknown_stored_names_list_the_known_ones(capsys, project):
    db, _ = project
    code, _, err = cli(capsys, "--db", db, "score", "bm25", "--qrels", "v9")
    assert code == 1 and "v9: no such file, and no stored qrels version has that name; stored: v1" in err
    code, _, err = cli(capsys, "--db", db, "score", "bm2", "--qrels", "v1")
    assert code == 1 and "bm2: no such file, and no stored run has that name; stored: bm25, broken" in err


def test_dash_is_standard_input_even_beside_a_file_named_dash(capsys, files, tmp_path, monkeypatch):
    """`score -` reads the run from standard input; a file called '-' in the current folder (e.g. left by
    `run export --out -`) is never read instead (fresh-user finding: it was, on the small-file path)."""
    import sys

    from workbench.formats import trec

    q, a, b = files
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-").write_text(RUN_B)  # the decoy: run B's lines
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(RUN_A.encode())))
    monkeypatch.setattr(trec, "_STDIN", None)
    code, out, err = cli(capsys, "score", "-", "--qrels", q, "-m", "R@2", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    # R@2, run A (stdin): topic 1 {a, d9} of |R| = 3 -> 2/3 (d9 before d10 in the tie), topic 2 {x, c} -> 1;
    # run B (the decoy file) would give topic 1 {d10, a} -> 1/3.
    (ra,) = doc["runs"]
    assert ra["run"] == "bm25"
    assert ra["measures"]["R@2"]["macro"] == pytest.approx((2 / 3 + 1) / 2)
