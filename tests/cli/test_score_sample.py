"""``workbench score --qrels SAMPLE_VERSION`` end to end: pool sample -> judgments import -> publish -> score.

A toy collection of 10 documents and two topics, two imported runs, depth 4. Topic 1: A ranks d1..d6, B
ranks d2 d1 d7 d8 d3 d9; best ranks d1 1, d2 1 | d3 3, d7 3, d4 4, d8 4; outside d5, d6, d9, d10. Topic 2:
A ranks d2 d5 d6, B d5 d2 d9; best ranks d2 1, d5 1 | d6 3, d9 3; outside the other six.
Expected values are written as the Horvitz-Thompson formulas, by hand; infAP against pytrec_eval.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.cli.helpers import run
from workbench.cli import main
from workbench.scoring.estimate import INFAP_EPSILON, Z95
from workbench.store import Store

LEAD = ["--lead", "lead", "--token", "lead-token-123"]
A = {"1": ["d1", "d2", "d3", "d4", "d5", "d6"], "2": ["d2", "d5", "d6"]}
B = {"1": ["d2", "d1", "d7", "d8", "d3", "d9"], "2": ["d5", "d2", "d9"]}
GRADES = {"1": {"d1": 1, "d7": 1, "d6": 1, "d5": 1}, "2": {"d5": 1, "d6": 1}}   # every other document: 0


def _trec(name: str, run: dict[str, list[str]]) -> str:
    return "".join(f"{t} Q0 {d} {i} {10 - i} {name}\n" for t, docs in run.items() for i, d in enumerate(docs, 1))


def project(root: Path, strata: str, outside: str) -> Path:
    """The toy project with its sample pool ``s`` (seed 1) drawn; returns the store."""
    src = root / "toy"
    src.mkdir(parents=True)
    (src / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"text {i}"}) + "\n"
                                              for i in range(1, 11)))
    (src / "queries.jsonl").write_text('{"_id": "1", "text": "first"}\n{"_id": "2", "text": "second"}\n')
    (src / "qrels.reference.txt").write_text("1 0 d1 1\n2 0 d5 1\n")
    (root / "A.trec").write_text(_trec("A", A))
    (root / "B.trec").write_text(_trec("B", B))
    db = root / "wb.duckdb"
    for step in (["ingest", src], ["run", "import", root / "A.trec", "--name", "A", "--collection", "toy"],
                 ["run", "import", root / "B.trec", "--name", "B", "--collection", "toy"],
                 ["users", "add", "lead", "--role", "lead", "--token", "lead-token-123"],
                 ["users", "add", "ann", "--token", "ann-token-123", "--lead", "lead", "--lead-token", "lead-token-123"],
                 ["pool", "sample", "s", "--runs", "A,B", "--depth", "4", "--strata", strata, "--outside", outside,
                  "--seed", "1"]):
        assert main(["--db", str(db), "-q", *map(str, step)]) == 0, step
    return db


def judge_and_publish(db: Path, tmp: Path, leave_out: frozenset[tuple[str, str]] = frozenset()) -> None:
    """ann judges the sample (grades from GRADES, 0 otherwise) except ``leave_out``; the lead publishes ``s-q``."""
    drawn = [(e.topic_id, e.doc_id) for e in Store(db).pools.pool_entries("s")]
    lines = "".join(f"{t} 0 {d} {GRADES.get(t, {}).get(d, 0)}\n" for t, d in drawn if (t, d) not in leave_out)
    (tmp / "s.qrels").write_text(lines)
    assert main(["--db", str(db), "-q", "judgments", "import", str(tmp / "s.qrels"), "--pool", "s", "--assessor",
                 "ann", *LEAD]) == 0
    assert main(["--db", str(db), "-q", "publish", "s", "--name", "s-q", "--no-export", *LEAD]) == 0


def score_json(capsys, db: Path, *extra: str) -> dict:
    capsys.readouterr()                                   # what building the project printed
    code, out, err = run(capsys, db, "score", "A", "B", "--qrels", "s-q", "-m", "R@2", "-m", "R@4", "-m", "P@2",
                         "-m", "P@4", "-m", "nDCG@4", "--format", "json", *extra)
    assert code == 0, err
    return json.loads(out)


def est(doc: dict, run_name: str, name: str, aggregate: str = "macro") -> dict:
    r = next(r for r in doc["runs"] if r["run"] == run_name)
    return r["estimates"]["measures"][name][aggregate]


def test_every_stratum_at_rate_one_reproduces_the_pooled_values(capsys, tmp_path):
    db = project(tmp_path / "p", "1-2:1.0,3-4:1.0", "0")
    judge_and_publish(db, tmp_path)
    doc = score_json(capsys, db)
    assert doc["header"]["sample"]["sampled"] == doc["header"]["sample"]["judged"] == 6 + 4
    for r in doc["runs"]:
        for m, name in (("R@2", "Rhat@2"), ("R@4", "Rhat@4"), ("P@2", "Phat@2"), ("P@4", "Phat@4"),
                        ("nDCG@4", "infNDCG@4")):
            e = est(doc, r["run"], name)
            assert e["estimate"] == pytest.approx(r["measures"][m]["macro"], abs=1e-12), (r["run"], m)
            assert e["pooled"] == r["measures"][m]["macro"]
            if name.startswith(("Rhat", "Phat")):        # every document judged: no sampling error
                assert e["low"] == pytest.approx(e["estimate"]) and e["high"] == pytest.approx(e["estimate"])
        for k in (2, 4):
            assert est(doc, r["run"], f"Rhat@{k}", "micro")["estimate"] == pytest.approx(
                r["measures"][f"R@{k}"]["micro"], abs=1e-12)
            eb = est(doc, r["run"], f"Rhat@{k}", "macro-eb")      # the model-based macro: exact when all is judged
            assert (eb["estimate"], eb["low"], eb["high"]) == pytest.approx((r["measures"][f"R@{k}"]["macro"],) * 3)


def test_half_rates_double_the_sampled_documents_by_hand(capsys, tmp_path):
    db = project(tmp_path / "p", "1-2:1.0,3-4:0.5", "0.5")
    s = Store(db)
    drawn = {(d.topic_id, d.doc_id): (d.stratum, d.inclusion) for d in s.pools.read_sample("s")[1].docs}
    # seed 1 draws (pooling.sample: SRSWOR per stratum, n_h = max(1, floor(rate N_h + 1/2))):
    assert drawn == {("1", "d1"): ("1-2", 1.0), ("1", "d2"): ("1-2", 1.0), ("1", "d3"): ("3-4", 0.5),
                     ("1", "d7"): ("3-4", 0.5), ("1", "d6"): ("outside", 0.5), ("1", "d9"): ("outside", 0.5),
                     ("2", "d2"): ("1-2", 1.0), ("2", "d5"): ("1-2", 1.0), ("2", "d6"): ("3-4", 0.5),
                     ("2", "d3"): ("outside", 0.5), ("2", "d7"): ("outside", 0.5), ("2", "d10"): ("outside", 0.5)}
    judge_and_publish(db, tmp_path)
    doc = score_json(capsys, db)
    # topic 1: relevant judged d1 (w 1), d7 (w 2), d6 (w 2): R̂ = 5. topic 2: d5 (w 1), d6 (w 2): R̂ = 3.
    # A within 4: t1 d1 -> 1; t2 d5, d6 -> 3.  B within 4: t1 d1, d7 -> 3; t2 d5 -> 1.  Within 2: d1; d5.
    assert est(doc, "A", "Rhat@4")["estimate"] == pytest.approx((1 / 5 + 3 / 3) / 2)
    assert est(doc, "B", "Rhat@4")["estimate"] == pytest.approx((3 / 5 + 1 / 3) / 2)
    assert est(doc, "A", "Rhat@4", "micro")["estimate"] == pytest.approx((1 + 3) / (5 + 3))
    assert est(doc, "A", "Rhat@2")["estimate"] == pytest.approx((1 / 5 + 1 / 3) / 2)
    assert est(doc, "A", "Phat@4")["estimate"] == pytest.approx((1 / 4 + 3 / 4) / 2)
    # Var of A's R̂@4 on topic 1 (r = 1/5): strata 3-4 (d7 rel, d3) and outside (d6 rel, d9), neither within 4:
    # z = (-1/5, 0) in each, s_z^2 = 1/50, term N^2 (1 - n/N) s^2 / n = 16 * 1/2 * 1/50 / 2; over R̂^2 = 25.
    # Topic 2: 3-4 holds one judged document (no term), the outside's three are non-relevant (z = 0).
    var = (2 * 16 * 0.5 * (1 / 50) / 2 / 25 + 0.0) / 2**2
    a4 = est(doc, "A", "Rhat@4")
    assert a4["se"] == pytest.approx(math.sqrt(var))
    assert (a4["low"], a4["high"]) == pytest.approx((0.6 - Z95 * math.sqrt(var), 0.6 + Z95 * math.sqrt(var)))
    # micro (r = 1/2): topic 1's two strata, z = (-1/2, 0), s^2 = 1/8, 16 * 1/2 * 1/8 / 2 each; over (5 + 3)^2
    micro_var = 2 * 16 * 0.5 * (1 / 8) / 2 / 64
    assert est(doc, "A", "Rhat@4", "micro")["se"] == pytest.approx(math.sqrt(micro_var))
    assert a4["n_topics"] == 2 and a4["n_judged"] == 12 and a4["pooled"] == doc["runs"][0]["measures"]["R@4"]["macro"]


def test_infap_of_a_sample_is_trec_evals_on_the_minus_one_marked_qrels(capsys, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    db = project(tmp_path / "p", "1-2:1.0,3-4:0.5", "0.5")
    judge_and_publish(db, tmp_path)
    doc = score_json(capsys, db)
    # A on topic 1: d1 rel; d2, d3 judged 0; d4 pooled, unjudged (-1); d5 outside the frame, unjudged; d6 rel
    eps = INFAP_EPSILON
    at_d6 = 1 / 6 + (5 / 6) * ((2 - 1 + 2 + 1) / 5) * ((2 - 1 + eps) / (2 - 1 + 2 + 2 * eps))
    t1 = (1 + at_d6) / 3                                  # num_rel: d1, d7, d6
    qrels = {"1": {"d1": 1, "d2": 0, "d3": 0, "d7": 1, "d6": 1, "d9": 0, "d4": -1, "d8": -1},
             "2": {"d2": 0, "d5": 1, "d6": 1, "d3": 0, "d7": 0, "d10": 0, "d9": -1}}
    runs = {t: {d: float(10 - i) for i, d in enumerate(docs, 1)} for t, docs in A.items()}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {"infAP"}).evaluate(runs)
    assert oracle["1"]["infAP"] == pytest.approx(t1, abs=1e-12)
    assert est(doc, "A", "infAP")["estimate"] == pytest.approx((oracle["1"]["infAP"] + oracle["2"]["infAP"]) / 2,
                                                               abs=1e-12)


def test_a_partially_judged_sample_is_missing_at_random_never_non_relevant(capsys, tmp_path):
    db = project(tmp_path / "p", "1-2:1.0,3-4:0.5", "0.5")
    # topic 1: d3 (3-4) left unjudged: d7 alone stands for its stratum, weight 4 / 1; topic 2: its only 3-4
    # document d6 left unjudged: the stratum is unobserved, the topic undefined (listed, never 0)
    judge_and_publish(db, tmp_path, frozenset({("1", "d3"), ("2", "d6")}))
    doc = score_json(capsys, db)
    a = next(r for r in doc["runs"] if r["run"] == "A")["estimates"]
    assert a["undefined_topics"] == {"2": "no judged document in stratum 3-4"}
    # topic 1: R̂ = d1 (1) + d7 (4) + d6 (2) = 7; A within 4: d1 -> 1/7; B within 4: d1, d7 -> 5/7
    assert est(doc, "A", "Rhat@4")["estimate"] == pytest.approx(1 / 7)
    assert est(doc, "B", "Rhat@4")["estimate"] == pytest.approx(5 / 7)
    assert est(doc, "A", "Rhat@4")["n_topics"] == 1 and est(doc, "A", "Rhat@4")["n_judged"] == 5
    sample = doc["header"]["sample"]
    assert (sample["unjudged"], sample["unjudged_topics"]) == (2, 2)
    assert any("not judged" in w and "never as non-relevant" in w for w in doc["header"]["warnings"])
    capsys.readouterr()
    code, out, err = run(capsys, db, "score", "A", "--qrels", "s-q", "-m", "R@4", "--no-record")
    assert code == 0, err
    assert "undefined  1 topic(s) with a non-empty stratum that has no judged document" in out
    assert "missing at random within their stratum" in out


def test_tampered_inclusion_probabilities_are_refused_at_score_time(capsys, tmp_path):
    db = project(tmp_path / "p", "1-2:1.0,3-4:0.5", "0.5")
    judge_and_publish(db, tmp_path)
    store = Store(db)
    with store.transaction("tamper") as cur:         # through the gateway, as an outside change would be
        cur.execute("UPDATE sample_entries SET inclusion = 0.25 WHERE pool_version = 's' AND topic_id = '1' "
                    "AND doc_id = 'd7'")
    store.release_file()
    capsys.readouterr()
    code, out, err = run(capsys, db, "score", "A", "--qrels", "s-q", "-m", "R@4")
    assert code == 1 and out == "" and "Traceback" not in err
    assert ("sample pool 's': the stored inclusion probabilities do not match its design (topic 1 document d7 "
            "(stratum 3-4): inclusion probability 0.25 stored, n_h / N_h = 2/4 = 0.5)") in err
    with Store(db).connection() as cur:
        assert cur.execute("SELECT count(*) FROM evaluations").fetchall() == [(0,)]     # nothing recorded


def test_a_sample_score_is_recorded_with_its_design_and_estimates(capsys, tmp_path):
    db = project(tmp_path / "p", "1-2:1.0,3-4:0.5", "0.5")
    judge_and_publish(db, tmp_path)
    capsys.readouterr()
    code, out, err = run(capsys, db, "score", "A", "--qrels", "s-q", "-m", "R@4")
    assert code == 0, err
    assert "run A: estimated from sample s: 2 topics averaged" in out
    assert "R̂@4 (micro)" in out and "estimator  Horvitz-Thompson" in out
    assert "R̂@4 (EB, model-based)" in out and "EB         R̂@k (EB, model-based): empirical-Bayes macro" in out
    assert "pool contributor" not in out and "contributed to pool" not in out     # a sample holds a draw, not the pool
    with Store(db).connection() as cur:
        params = json.loads(cur.execute("SELECT params FROM evaluations WHERE aggregate = 'macro'").fetchall()[0][0])
    sample = params["sample"]
    assert sample["pool_version"] == "s" and sample["design"]["strata"] == "1-2:1.0,3-4:0.5"
    r4 = next(e for e in sample["estimates"] if e["measure"] == "Rhat@4" and e["aggregate"] == "macro")
    assert r4["estimate"] == pytest.approx((1 / 5 + 3 / 3) / 2) and r4["n_judged"] == 12


def test_simulate_sample_with_the_whole_frame_judged_estimates_the_pooled_values(capsys, tmp_path):
    db = project(tmp_path / "p", "1-2:1.0,3-4:0.5", "0")
    capsys.readouterr()
    truth = tmp_path / "truth.qrels"
    truth.write_text("".join(f"{t} 0 {d} {g}\n" for t, docs in GRADES.items() for d, g in docs.items()))
    code, out, err = run(capsys, db, "simulate-sample", "--truth", truth, "--runs", "A,B", "--depth", "4",
                         "--strata", "1-2:1.0,3-4:1.0", "--budgets", "100", "--repeats", "3", "--seed", "1",
                         "--k", "2,4", "--format", "json")
    assert code == 0, err
    assert "[finished] simulate-sample" in err
    doc = json.loads(out)
    assert doc["frame_size"] == 10 and doc["budgets"][0]["judgments"] == 10
    for r in doc["rows"]:                        # every pooled document judged in every repeat: no sampling error
        assert r["mean"] == pytest.approx(r["pooled"]) and r["rmse"] == pytest.approx(abs(r["bias"]))
        assert r["bias"] == pytest.approx(r["pooled"] - r["truth"])
    # the truth: topic 1's relevant d1, d7, d6, d5 (d5, d6 outside the frame); A finds d1 within 4: R@4 = 1/4
    a4 = next(r for r in doc["rows"] if (r["run"], r["measure"], r["aggregate"]) == ("A", "R@4", "macro"))
    assert a4["truth"] == pytest.approx((1 / 4 + 2 / 2) / 2) and a4["pooled"] == pytest.approx((1 / 2 + 2 / 2) / 2)


@pytest.mark.parametrize(("argv", "expected"), [
    (["--pool", "s", "--runs", "A"], "--pool takes the runs and design of the sample pool: drop --runs"),
    (["--runs", "A", "--depth", "4"], "--strata: expected --runs, --depth and --strata (or --pool SAMPLE_POOL)"),
    (["--pool", "s", "--budgets", "0,5"], "Invalid value for '--budgets'"),
    (["--pool", "s", "--repeats", "1"], "Invalid value for '--repeats'"),
    (["--runs", "A", "--depth", "4", "--strata", "1-3:1"], "--strata: the ranges end at 3, --depth is 4"),
    (["--pool", "s", "--seed", "-1"], "Invalid value for '--seed'"),
])
def test_simulate_sample_usage_errors_name_the_option(capsys, tmp_path, argv, expected):
    db = project(tmp_path / "p", "1-2:1.0,3-4:0.5", "0")
    capsys.readouterr()
    code, out, err = run(capsys, db, "simulate-sample", "--truth", "toy-reference", *argv)
    assert code == 2 and expected in err and out == "", err


@pytest.mark.parametrize(("tamper", "expected"), [
    ("UPDATE pools SET params = 'nope{' WHERE pool_version = 's'",
     "sample pool 's': its stored params or runs are not JSON (Expecting value: line 1 column 1 (char 0)): the store "
     "was changed outside the workbench. Nothing was scored;"),
    ("UPDATE qrels_versions SET sample_design = 'nope{' WHERE qrels_version = 's-q'",
     "qrels version 's-q' records a sample design that is not a JSON object (Expecting value: line 1 column 1 "
     "(char 0)): the store was changed outside the workbench. Nothing was scored;"),
    ("UPDATE qrels_versions SET sample_design = '[1]' WHERE qrels_version = 's-q'",
     "qrels version 's-q' records a sample design that is not a JSON object (found list): the store was changed "
     "outside the workbench. Nothing was scored;"),
    # not seen by the counts and inclusion probabilities: the content hash recomputed from the rows
    ("DELETE FROM sample_frame WHERE pool_version = 's' AND topic_id = '1' AND doc_id = 'd3'",
     "sample pool 's': its stored rows (sampled documents, strata, frame, entries) hash to "),
    ("UPDATE sample_entries SET doc_id = 'd10' WHERE pool_version = 's' AND topic_id = '1' AND doc_id = 'd1'",
     "sample pool 's': its stored rows (sampled documents, strata, frame, entries) hash to "),
    ("UPDATE sample_entries SET doc_id = 'd10' WHERE pool_version = 's' AND topic_id = '1' AND doc_id = 'd1'; "
     "UPDATE pool_entries SET doc_id = 'd10' WHERE pool_version = 's' AND topic_id = '1' AND doc_id = 'd1'",
     "sample pool 's': its stored rows (sampled documents, strata, frame, entries) hash to "),
])
def test_sample_rows_changed_by_hand_are_refused_at_score_time(capsys, tmp_path, tamper, expected):
    db = project(tmp_path / "p", "1-2:1.0,3-4:1.0", "0")   # every frame document drawn: d1 and d3 are in it
    judge_and_publish(db, tmp_path)
    store = Store(db)
    with store.transaction("tamper") as cur:
        for statement in tamper.split("; "):
            cur.execute(statement)
    store.release_file()
    capsys.readouterr()
    code, out, err = run(capsys, db, "score", "A", "--qrels", "s-q", "-m", "R@4")
    assert code == 1 and out == "" and "Traceback" not in err, err
    assert expected in err
    if "hash to" in expected:
        assert "but the pool records " in err and "the store was changed outside the workbench. Nothing was scored" in err
    with Store(db).connection() as cur:
        assert cur.execute("SELECT count(*) FROM evaluations").fetchall() == [(0,)]


def test_simulate_sample_refuses_a_truth_of_other_topics_and_warns_on_a_partial_one(capsys, tmp_path):
    db = project(tmp_path / "p", "1-2:1.0,3-4:0.5", "0")
    capsys.readouterr()
    argv = ["--pool", "s", "--budgets", "100", "--repeats", "2", "--k", "4", "--format", "json"]
    other = tmp_path / "other.qrels"                      # another collection's judgments: topics 7 and 8
    other.write_text("7 0 d1 1\n8 0 d2 1\n")
    code, out, err = run(capsys, db, "simulate-sample", "--truth", other, *argv)
    assert code == 1 and out == "" and "Traceback" not in err
    assert (f"--truth {other} shares no topic with the runs A, B (the truth judges 2 topic(s), e.g. 7, 8; the runs "
            "answer 2, e.g. 1, 2): it is not the judgments of the runs' collection. Nothing was simulated") in err
    partial = tmp_path / "partial.qrels"                  # topic 1 as GRADES, topic 2 missing, topic 9 unknown
    partial.write_text("".join(f"1 0 {d} {g}\n" for d, g in GRADES["1"].items()) + "9 0 d3 1\n")
    code, out, err = run(capsys, db, "simulate-sample", "--truth", partial, *argv)
    assert code == 0, err
    assert (f"[warning] --truth {partial} judges 2 topics and the runs answer 2; 1 in common: 1 truth topic(s) no "
            "run answers (e.g. 9) count R@k = 0 for every run, 1 run topic(s) the truth does not judge (e.g. 2) are "
            "left out") in err
    doc = json.loads(out)
    a4 = next(r for r in doc["rows"] if (r["run"], r["measure"], r["aggregate"]) == ("A", "R@4", "macro"))
    assert a4["truth"] == pytest.approx((1 / 4 + 0) / 2)   # topic 1: d1 of d1, d7, d6, d5; topic 9: nothing found
