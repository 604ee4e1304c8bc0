"""`workbench gate` end to end: exit codes 0/1/2/3, formats, status side files, stored runs with an ID audit,
the leakage check, topic sets and their recorded uses, `evaluations list|show`."""

from __future__ import annotations

import json

import pytest

from tests.cli.helpers import cli
from workbench.store import Store
from workbench.types import Document, RunInfo, Topic

TOPICS = [str(t) for t in range(1, 9)]
QRELS = "".join(f"{t} 0 d{t}a 1\n{t} 0 d{t}b 2\n{t} 0 n{t} 0\n" for t in TOPICS)


def run_text(tag: str, lose: set[str] = frozenset(), skip: set[str] = frozenset()) -> str:
    """Both relevant documents at ranks 1-2 (or only a, b pushed to rank 4 for topics in ``lose``)."""
    lines = []
    for t in TOPICS:
        if t in skip:
            continue
        docs = [f"d{t}a", f"n{t}", f"x{t}", f"d{t}b"] if t in lose else [f"d{t}a", f"d{t}b", f"n{t}", f"x{t}"]
        lines += [f"{t} Q0 {d} {r} {10 - r} {tag}" for r, d in enumerate(docs, 1)]
    return "\n".join(lines) + "\n"


POLICY = """
[gate]
k = 2
measures = ["R@2"]
min_topics = 5
[macro]
min_ci_low = -0.05
resamples = 1000
[validity]
id_audit = "when-available"
"""


@pytest.fixture
def files(write, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "nodb" / "wb.duckdb"))
    return {
        "qrels": write("q.txt", QRELS),
        "base": write("base.run", run_text("base")),
        "same": write("same.run", run_text("same")),
        "worse": write("worse.run", run_text("worse", lose={"1", "2", "3", "4", "5", "6"})),
        "policy": write("gate.toml", POLICY),
    }


def gate(capsys, f, cand, *extra):
    return cli(capsys, "gate", f["base"], f[cand] if cand in f else cand, "--qrels", f["qrels"], "--policy",
               f["policy"], *extra)


def test_exit_0_when_the_candidate_holds(capsys, files):
    code, out, err = gate(capsys, files, "same")
    assert code == 0, err
    assert out.startswith("GATE PASS (exit 0)")
    assert "id_coverage" in out and "skipped" in out.lower()       # files only: audit skipped (when-available)
    assert "workbench gate: PASS (exit 0)" in err


def test_exit_1_when_a_rule_fails_with_the_rule_in_every_format(capsys, files):
    code, out, _ = gate(capsys, files, "worse", "--format", "json")
    assert code == 1
    doc = json.loads(out)
    assert doc["verdict"] == "fail" and doc["exit_code"] == 1
    macro = next(r for r in doc["candidates"][0]["rules"] if r["rule"] == "macro_change")
    # 6 of 8 topics drop from 1 to 1/2: mean change -6/16; every resample mean is <= -0.25 < -0.05.
    assert macro["verdict"] == "fail" and macro["measured"] < -0.05
    assert doc["candidates"][0]["tests"][0]["mean_candidate"] - doc["candidates"][0]["tests"][0]["mean_baseline"] == pytest.approx(-6 / 16)
    first = doc["candidates"][0]["diffs"][0]
    assert first["topic_id"] == "1" and first["lost"] == [
        {"doc_id": "d1b", "grade": 2, "baseline_rank": 2, "candidate_rank": 4, "title": ""}]
    code, md, _ = gate(capsys, files, "worse", "--format", "markdown")
    assert code == 1 and md.startswith("## Release gate: ❌ FAIL")
    assert "| quality | macro_change | R@2 |" in md and "❌ fail" in md
    assert "| 1 | 1.0000 | 0.5000 | -0.5000 | `d1b` g2 (baseline rank 2, candidate rank 4) |  |" in md


def test_exit_2_incomplete_candidate_is_invalid_not_failed(capsys, files, write):
    # The candidate timed out on topics 7 and 8 and also loses documents elsewhere: invalid wins over fail.
    cand = write("partial.run", run_text("partial", lose={"1", "2", "3", "4", "5", "6"}, skip={"7", "8"}))
    write("partial.run.status.tsv", "topic_id\tstatus\tlatency_ms\terror\n7\terror\t30000\ttimeout after 30 s\n"
                                    "8\terror\t30000\ttimeout after 30 s\n1\tok\t12.5\t\n")
    code, out, _ = gate(capsys, files, str(cand), "--format", "json")
    assert code == 2
    doc = json.loads(out)
    comp = next(r for r in doc["candidates"][0]["rules"] if r["rule"] == "completion" and r["subject"] == "partial")
    assert comp["verdict"] == "invalid" and comp["measured"] == 6 / 8
    assert "7 (error: timeout after 30 s)" in comp["detail"]
    assert doc["header"]["runs"][1]["status_file"].endswith("partial.run.status.tsv")
    failures = doc["header"]["completion"][1]["failures"]
    assert failures[0] == ["7", "error", "timeout after 30 s", 30000.0]
    # The failed topics are left out of both runs, never scored as zero recall.
    assert doc["candidates"][0]["topics"] == ["1", "2", "3", "4", "5", "6"]


def test_exit_2_when_no_collection_can_audit_the_ids_and_the_policy_requires_it(capsys, files, write):
    strict = write("strict.toml", POLICY.replace('id_audit = "when-available"', 'id_audit = "required"'))
    code, out, _ = cli(capsys, "gate", files["base"], files["same"], "--qrels", files["qrels"], "--policy", strict)
    assert code == 2 and out.startswith("GATE INVALID (exit 2)") and "pass --collection" in out


def test_exit_2_when_too_few_topics_for_paired_statistics(capsys, files, write):
    few = write("few.toml", POLICY.replace("min_topics = 5", "min_topics = 20"))
    code, out, _ = cli(capsys, "gate", files["base"], files["worse"], "--qrels", files["qrels"], "--policy", few,
                       "--format", "json")
    doc = json.loads(out)
    assert code == 2 and doc["verdict"] == "invalid"
    topics = next(r for r in doc["candidates"][0]["rules"] if r["rule"] == "topics")
    assert topics["verdict"] == "invalid" and "paired statistics refused: 8 topics" in topics["detail"]
    assert next(r for r in doc["candidates"][0]["rules"] if r["rule"] == "macro_change")["verdict"] == "skipped"


def test_exit_2_when_a_run_file_is_malformed(capsys, files, write):
    bad = write("bad.run", "1 Q0 d1a 1 1.0 t\n1 Q0 d1b\n")
    code, _, err = gate(capsys, files, str(bad))
    assert code == 2 and f"gate INVALID: the comparison could not be made: {bad}:2:" in err


def test_exit_3_for_usage_errors(capsys, files, write):
    code, _, err = cli(capsys, "gate", files["base"], files["same"], "--qrels", files["qrels"])
    assert code == 3 and "Missing option '--policy'" in err
    code, _, err = cli(capsys, "gate", files["base"], "--qrels", files["qrels"], "--policy", files["policy"])
    assert code == 3
    code, _, err = gate(capsys, files, "same", "--format", "xml")
    assert code == 3 and "expected --format one of table, json, markdown" in err
    broken = write("broken.toml", "[gate]\nk = 2\n[macro]\nmin_ci_lo = -0.01\n")
    code, out, err = cli(capsys, "gate", files["base"], files["same"], "--qrels", files["qrels"], "--policy", broken)
    assert code == 3 and out == "" and f"{broken}:4: unknown key 'min_ci_lo' in [macro]" in err
    code, _, err = cli(capsys, "gate", files["base"], files["same"], "--qrels", files["qrels"], "--policy",
                       write("syntax.toml", "[gate\nk = 2\n"))
    assert code == 3 and "syntax.toml:1: TOML syntax error" in err
    code, _, err = gate(capsys, files, "no-such-run")
    assert code == 3 and "no-such-run" in err
    code, _, err = cli(capsys, "gate", files["base"], files["base"], "--qrels", files["qrels"], "--policy",
                       files["policy"])
    assert code == 3 and "expected different runs" in err
    code, _, err = cli(capsys, "gate", files["base"], files["same"], files["base"], "--qrels", files["qrels"],
                       "--policy", files["policy"])
    assert code == 3 and "different runs" in err
    # Other commands keep 2 for usage errors.
    code, _, _ = cli(capsys, "score")
    assert code == 2


def test_several_candidates_are_one_family_and_the_worst_verdict_decides(capsys, files):
    code, out, _ = cli(capsys, "gate", files["base"], files["same"], files["worse"], "--qrels", files["qrels"],
                       "--policy", files["policy"], "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "fail"
    assert [(c["candidate"], c["verdict"]) for c in doc["candidates"]] == [("same", "pass"), ("worse", "fail")]
    assert all(c["family_size"] == 2 for c in doc["candidates"])          # 1 measure x 2 candidates
    boot = doc["candidates"][0]["tests"][0]["bootstrap_corrected"]
    assert boot["confidence"] == pytest.approx(1 - 0.05 / 2)
    code, out, _ = cli(capsys, "gate", files["base"], files["same"], files["worse"], "--qrels", files["qrels"],
                       "--policy", files["policy"])
    assert out.startswith("GATE FAIL (exit 1): the worst of 2 candidates against baseline base (same pass, worse fail)")
    code, md, _ = cli(capsys, "gate", files["base"], files["same"], files["worse"], "--qrels", files["qrels"],
                      "--policy", files["policy"], "--format", "markdown")
    assert "### ✅ PASS: `same`" in md and "### ❌ FAIL: `worse`" in md and "#### Per-topic differences in R@2" in md


def test_out_writes_the_report_too(capsys, files, tmp_path):
    target = tmp_path / "gate.md"
    code, out, err = gate(capsys, files, "same", "--format", "markdown", "--out", target)
    assert code == 0 and target.read_text() == out and f"wrote {target}" in err


# -- stored runs: ID audit, leakage, topic sets, evaluations --------------------------------------------------


@pytest.fixture
def project(tmp_path):
    db = tmp_path / "wb.duckdb"
    store = Store(db, client="pytest")
    docs = [Document(f"d{t}{s}", f"title {t}{s}", f"text of d{t}{s} about topic {t}") for t in TOPICS for s in "ab"]
    docs += [Document(f"n{t}", "", "noise") for t in TOPICS] + [Document(f"x{t}", "", "more noise") for t in TOPICS]
    # Topic 3's query copies document d3a's text: the leakage check flags it.
    topics = [Topic(t, f"query number {t} with enough words") for t in TOPICS if t != "3"]
    topics.append(Topic("3", "text of d3a about topic 3"))
    store.collections.ingest_collection("toy", docs, topics)

    def parse(text):
        run: dict[str, dict[str, float]] = {}
        for line in text.splitlines():
            t, _, d, _, s, _ = line.split()
            run.setdefault(t, {})[d] = float(s)
        return run

    store.runs.save_run(RunInfo("base", "bm25", {}, 10, "toy"), parse(run_text("base")))
    store.runs.save_run(RunInfo("cand", "bm25", {}, 10, "toy"), parse(run_text("cand", lose={"2"})))
    qrels = {t: {f"d{t}a": 1, f"d{t}b": 2} for t in TOPICS}
    store.qrels.create_qrels_version("v1", "toy", qrels, origin="imported", rule="as is")
    # The same judgments with ids in another case and zero padding, as after a corpus migration.
    migrated = {t: {f"D{t}A": 1, f"d0{t}b": 2} for t in TOPICS}
    store.qrels.create_qrels_version("migrated", "toy", migrated, origin="imported", rule="as is")
    return db, store


STORED_POLICY = """
[gate]
k = 2
min_topics = 5
[macro]
min_ci_low = -0.5
resamples = 1000
[critical]
topics = ["2"]
"""


def test_stored_gate_audits_ids_flags_leakage_and_fails_on_a_critical_loss(capsys, project, write):
    db, _ = project
    pol = write("stored.toml", STORED_POLICY)
    code, out, err = cli(capsys, "--db", db, "gate", "base", "cand", "--qrels", "v1", "--policy", pol,
                         "--format", "json")
    doc = json.loads(out)
    rules = {(r["rule"], r["subject"]): r for r in doc["candidates"][0]["rules"]}
    assert rules[("leakage", "queries")]["verdict"] == "invalid"          # default policy: leakage = "invalid"
    assert "topic 3 ~ document d3a (100%)" in rules[("leakage", "queries")]["detail"]
    assert code == 2 and doc["verdict"] == "invalid"
    idc = next(r for r in doc["candidates"][0]["rules"] if r["rule"] == "id_coverage")
    assert idc["verdict"] == "pass" and idc["measured"] == 1.0
    excl = write("exclude.toml", STORED_POLICY + '[validity]\nleakage = "exclude"\n')
    code, out, _ = cli(capsys, "--db", db, "gate", "base", "cand", "--qrels", "v1", "--policy", excl,
                       "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "fail" and "3" not in doc["candidates"][0]["topics"]
    crit = next(r for r in doc["candidates"][0]["rules"] if r["rule"] == "critical")
    assert crit["verdict"] == "fail" and "d2b (baseline rank 2)" in crit["detail"]
    assert doc["candidates"][0]["diffs"][0]["lost"][0]["title"] == "title 2b"
    assert next(r for r in doc["candidates"][0]["rules"] if r["rule"] == "macro_change")["verdict"] == "pass"


def test_gate_rows_show_the_change_with_its_interval_and_leakage_as_flagged_excluded(capsys, project, write):
    # Issue 26: the macro_change row showed the interval's lower end alone under "measured" (read as the
    # change), and leakage under "exclude" showed "1" against "= 0" marked pass.
    db, _ = project
    excl = write("exclude.toml", STORED_POLICY + '[validity]\nleakage = "exclude"\n')
    code, out, _ = cli(capsys, "--db", db, "gate", "base", "cand", "--qrels", "v1", "--policy", excl,
                       "--format", "json")
    doc = json.loads(out)
    cand = doc["candidates"][0]
    rules = {(r["rule"], r["subject"]): r for r in cand["rules"]}
    macro, test = rules[("macro_change", "R@2")], cand["tests"][0]
    c = macro["interval"]  # every number: the change, both intervals, which lower end is tested
    assert c["change"] == pytest.approx(test["mean_candidate"] - test["mean_baseline"])
    assert c["change"] == pytest.approx((1 / 2 - 1) / 7)  # topic 2 drops from 1 to 1/2; 7 topics (3 excluded)
    assert (c["low"], c["high"]) == (test["bootstrap"]["ci_low"], test["bootstrap"]["ci_high"])
    assert (c["corrected_low"], c["corrected_high"]) == (test["bootstrap_corrected"]["ci_low"],
                                                         test["bootstrap_corrected"]["ci_high"])
    assert c["decides"] == "corrected" and macro["measured"] == c["tested_low"] == c["corrected_low"]
    leak = rules[("leakage", "queries")]
    assert (leak["measured"], leak["threshold"], leak["unit"]) == (1, None, "flagged, excluded")
    code, out, _ = cli(capsys, "--db", db, "gate", "base", "cand", "--qrels", "v1", "--policy", excl)
    row = next(line for line in out.splitlines() if " macro_change " in line)
    assert f"{c['change']:+.4f}, 95% CI [{c['low']:.4f}, {c['high']:.4f}]" in row  # one measure: no correction
    assert "CI low >= -0.5000" in row
    leak_row = next(line for line in out.splitlines() if " leakage " in line and "queries" in line)
    assert "1 flagged, excluded" in leak_row and "= 0" not in leak_row
    code, md, _ = cli(capsys, "--db", db, "gate", "base", "cand", "--qrels", "v1", "--policy", excl,
                      "--format", "markdown")
    assert "| validity | leakage | queries | 1 flagged, excluded | - | ✅ pass |" in md
    assert f"| quality | macro_change | R@2 | {c['change']:+.4f}, 95% CI [" in md


def test_id_audit_finds_near_misses_warns_in_score_and_invalidates_the_gate(capsys, project, write):
    db, _ = project
    code, out, _ = cli(capsys, "--db", db, "score", "base", "--qrels", "migrated", "-m", "R@2", "--no-record")
    assert code == 0
    assert "judged-relevant ids 0/16 (0%)" in out
    assert "relevant: 16 id(s) not in the collection: D1A (near miss, case: d1a), D2A (near miss, case: d2a)" in out
    assert "d01b (near miss, zeros: d1b)" in out
    assert "warning    ID audit: 16 of 16 judged-relevant ids are not in collection version" in out
    code, out, _ = cli(capsys, "--db", db, "score", "base", "--qrels", "migrated", "-m", "R@2", "--no-record",
                       "--min-id-coverage", "0")
    assert code == 0 and "warning    ID audit" not in out and "D1A (near miss, case: d1a)" in out
    pol = write("p.toml", STORED_POLICY + '[validity]\nleakage = "off"\n')
    code, out, _ = cli(capsys, "--db", db, "gate", "base", "cand", "--qrels", "migrated", "--policy", pol)
    assert code == 2 and "id_coverage" in out and "INVALID" in out


def test_id_audit_of_run_files_against_a_named_collection(capsys, project, write):
    db, _ = project
    f = write("f.run", "1 Q0 d1a 1 2.0 f\n1 Q0 D1B 2 1.0 f\n1 Q0 doc-unknown 3 0.5 f\n")
    code, out, _ = cli(capsys, "--db", db, "score", f, "--qrels", "v1", "-m", "R@2", "--missing", "exclude",
                       "--collection", "toy", "--format", "json")
    assert code == 0
    audit = json.loads(out)["header"]["id_audit"][0]
    run = audit["runs"][0]
    assert (run["n_ids"], run["n_present"], run["missing"]) == (3, 1, ["D1B", "doc-unknown"])
    assert run["near_misses"] == [["D1B", "case", ["d1b"]]]


def test_topic_sets_are_versioned_and_protected_uses_are_listed(capsys, project, write):
    db, store = project
    ids = write("release.txt", "# held-out release set\n1\n2\n4\n5\n6\n7\n")
    code, out, _ = cli(capsys, "--db", db, "topics", "set", "release", "--from", ids, "--collection", "toy",
                       "--protected")
    assert code == 0 and out.startswith("topic set release@1: created; 6 topics of collection toy; protected")
    code, out, _ = cli(capsys, "--db", db, "topics", "set", "release", "--from", ids)
    assert "release@1: unchanged" in out
    code, out, _ = cli(capsys, "--db", db, "topics", "set", "release", "--from", write("r2.txt", "1\n2\n4\n5\n6\n8\n"),
                       "--protected")
    assert "release@2: saved a new version" in out
    bad = write("b.txt", "1\n99\n")
    code, _, err = cli(capsys, "--db", db, "topics", "set", "bad", "--from", bad, "--collection", "toy")
    assert code == 1 and f"{bad}:2: expected topic ids of collection 'toy', found '99', which is not one." in err
    code, out, _ = cli(capsys, "--db", db, "topics", "show", "release@1")
    assert out.split() == ["1", "2", "4", "5", "6", "7"]

    pol = write("p.toml", STORED_POLICY.replace("[critical]\ntopics = [\"2\"]\n", "").replace("-0.2", "-0.5")
                + '[validity]\nleakage = "off"\n')
    code, out, _ = cli(capsys, "--db", db, "score", "base", "--qrels", "v1", "-m", "R@2", "--topic-set", "release@1",
                       "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["runs"][0]["topics"] == ["1", "2", "4", "5", "6", "7"]
    assert doc["header"]["topic_set"] == "release@1" and doc["header"]["topic_set_protected"] is True
    code, _, _ = cli(capsys, "--db", db, "compare", "base", "cand", "--qrels", "v1", "-m", "R@2", "--topic-set",
                     "release")
    assert code == 0
    code, out, _ = cli(capsys, "--db", db, "gate", "base", "cand", "--qrels", "v1", "--policy", pol, "--topic-set",
                       "release@1")
    assert code == 0 and "topic set  release@1; protected: this use is recorded" in out
    uses = store.evaluations.list_topic_set_uses("release")
    assert [(u.version, u.command) for u in uses] == [(1, "score"), (2, "compare"), (1, "gate")]
    assert uses[2].outcome == "pass" and uses[2].runs == ("base", "cand")

    code, out, _ = cli(capsys, "--db", db, "evaluations", "list")
    assert code == 0
    lines = out.splitlines()
    assert "release@1 (protected)" in lines[1]
    assert "protected topic set release@1: used 2 time(s) (score 1, gate 1)" in out
    assert "protected topic set release@2: used 1 time(s) (compare 1)" in out
    (e,) = store.evaluations.list_evaluations()
    assert e.params["topic_set"] == "release@1" and len(e.params["run_content_hash"]) == 64
    assert e.params["git_commit"] == "" or len(e.params["git_commit"].removesuffix("-dirty")) == 40
    code, out, _ = cli(capsys, "--db", db, "evaluations", "show", e.evaluation_id[:8])
    assert code == 0 and f"evaluation  {e.evaluation_id}" in out and "run_content_hash" in out
    assert "R@2" in out and "macro" in out
    code, _, err = cli(capsys, "--db", db, "evaluations", "show", "nope")
    assert code == 1 and "unknown evaluation id 'nope'" in err


def test_topic_metadata_drives_critical_selectors_and_slices(capsys, project, write):
    db, store = project
    store.metadata.set_topic_metadata("toy", {"2": {"priority": "critical", "intent": "nav"},
                                     "4": {"priority": "low", "intent": "nav"},
                                     **{t: {"intent": "info"} for t in ("1", "5", "6", "7", "8")}})
    pol = write("meta.toml", STORED_POLICY.replace('topics = ["2"]', 'where = { priority = "critical" }')
                + '[slices]\nby = ["intent"]\nmin_topics = 2\n[validity]\nleakage = "exclude"\n')
    code, out, _ = cli(capsys, "--db", db, "gate", "base", "cand", "--qrels", "v1", "--policy", pol, "--format", "json")
    doc = json.loads(out)["candidates"][0]
    assert code == 1 and doc["critical_topics"] == ["2"]
    assert next(r for r in doc["rules"] if r["rule"] == "critical")["verdict"] == "fail"
    (sl,) = [s for s in doc["slices"] if s["measure"] == "R@2"]
    rows = {r["value"]: r for r in sl["rows"]}
    # Topic 3 is excluded by the leakage check; cand loses d2b on topic 2 (nav): nav = {2, 4}.
    assert rows["nav"]["n_topics"] == 2 and rows["nav"]["mean_candidate"] == pytest.approx((0.5 + 1) / 2)
    assert rows["info"]["n_topics"] == 5 and rows["info"]["mean_candidate"] == 1.0
    code, out, _ = cli(capsys, "--db", db, "score", "cand", "--qrels", "v1", "-m", "R@2", "--by", "intent",
                       "--min-topics", "2", "--no-record", "--format", "json")
    rows = {r["value"]: r for r in json.loads(out)["slices"]["cand"]["intent"]["rows"]}
    assert rows["(none)"]["topics"] == ["3"] and rows["nav"]["means"]["R@2"] == pytest.approx(0.75)


def test_the_demo_gate_step_writes_the_markdown_report(project, write, tmp_path):
    from workbench.demo.gate import gate_step

    _, store = project
    pol = write("demo.toml", STORED_POLICY + '[validity]\nleakage = "exclude"\n')
    report, path = gate_step(store, "base", "cand", "v1", out_dir=tmp_path / "out", policy=pol)
    assert report.verdict == "fail" and path == tmp_path / "out" / "gate-cand-vs-base.md"
    text = path.read_text()
    assert text.startswith("## Release gate: ❌ FAIL — `cand` against `base`")
    assert "| quality | critical | R@2 | 1 | = 0 | ❌ fail |" in text


def test_a_cutoff_deeper_than_the_runs_is_noted_in_every_format(capsys, files, write):
    # Breaker's finding: a policy on R@500 over runs of depth 100 said nothing about depth. Here the runs
    # return 4 documents per topic and the policy gates R@10: for them R@10 = R@4. The comparison stays
    # paired and valid (both runs measured alike): a note, the verdict unchanged (pass).
    deep = write("deep.toml", POLICY.replace("k = 2", "k = 10").replace('["R@2"]', '["R@10", "nDCG@3"]'))
    code, out, _ = cli(capsys, "gate", files["base"], files["same"], "--qrels", files["qrels"], "--policy", deep)
    assert code == 0 and out.startswith("GATE PASS (exit 0)")
    for run in ("base", "same"):
        assert (f"warning    run '{run}' returns at most 4 documents per topic, fewer than the cutoff of R@10: for "
                "it R@10 = R@4 (nothing below rank 4 is measured); the gate compares the runs' top 4 there: gate "
                "runs of depth >= 10, or lower the cutoff") in out.splitlines()
    code, out, _ = cli(capsys, "gate", files["base"], files["same"], "--qrels", files["qrels"], "--policy", deep,
                       "--format", "json")
    assert code == 0
    warnings = json.loads(out)["header"]["warnings"]
    assert sum("returns at most 4 documents per topic" in w for w in warnings) == 2
    code, out, _ = gate(capsys, files, "same")                     # R@2 on depth 4: no note
    assert code == 0 and "returns at most" not in out
