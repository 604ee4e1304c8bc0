"""Eligibility end to end: filters imported and checked, pre/post-filtered runs, filtered scoring, leaks.

A tiny collection with known BM25 results: "flow" occurs once in d1..d4 (4 of 10
documents, so its idf is positive) and the documents grow longer, so BM25 ranks
d1 > d2 > d3 > d4 for the query "flow". Topic 1 ("flow") may only see documents
of 1956 or earlier (d3, d4 and d5); topic 2 ("heat") is unfiltered.
"""

from __future__ import annotations

import json

import pytest

from tests.cli.helpers import cli
from workbench.types import Document, Topic

DOCS = [Document("d1", "", "flow"), Document("d2", "", "flow wing"), Document("d3", "", "flow wing drag"),
        Document("d4", "", "flow wing drag lift"), Document("d5", "", "heat"), Document("d6", "", "slab"),
        Document("d7", "", "plate"), Document("d8", "", "shell"), Document("d9", "", "beam"),
        Document("d10", "", "strut")]
YEARS = {"d1": 1960, "d2": 1958, "d3": 1950, "d4": 1956, "d5": 1940, "d6": 1962}
TOPICS = [Topic("1", "flow"), Topic("2", "heat")]
# Topic 1: d1 (ineligible: 1960) and d4 are relevant; topic 2: d5.
QRELS = "1 0 d1 1\n1 0 d4 2\n1 0 d2 0\n2 0 d5 1\n"


@pytest.fixture
def db(tmp_path, monkeypatch, write):
    from workbench.store import Store

    path = tmp_path / "wb.duckdb"
    store = Store(path, client="pytest", lock_timeout_s=30)
    store.collections.ingest_collection("toy", DOCS, TOPICS, metadata={d: {"year": y} for d, y in YEARS.items()})
    del store
    monkeypatch.setenv("WORKBENCH_DB", str(path))
    return path


def test_filters_import_checks_every_filter_and_show_lists_eligible_and_ineligible_gold(capsys, db, write):
    bad = write("bad.tsv", "topic_id\tfilter\n1\tyear <= 1956\n2\tyear <=\n")
    code, _, err = cli(capsys, "filters", "import", bad, "--collection", "toy")
    assert code == 1 and f"{bad}:3: topic '2': filter 'year <=': column 8: expected a value after '<='" in err
    unknown = write("unknown.csv", "topic_id,filter\n1,yaer <= 1956\n")
    code, _, err = cli(capsys, "filters", "import", unknown, "--collection", "toy")
    assert code == 1 and f"{unknown}:2: topic '1': filter 'yaer <= 1956' names the metadata key 'yaer'" in err
    assert "known keys: year" in err
    good = write("filters.tsv", "topic_id\tfilter\n1\tyear <= 1956\n")
    code, out, err = cli(capsys, "filters", "import", good, "--collection", "toy")
    assert code == 0 and "1 topics: 1 values added" in out, err
    q = write("q.txt", QRELS)
    code, out, err = cli(capsys, "filters", "show", "--collection", "toy", "--qrels", q, "--format", "jsonl")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows == [{"topic": "1", "filter": "year <= 1956", "eligible": 3, "share": "30.0%", "relevant": 2,
                     "ineligible gold": 1, "ineligible gold ids": "d1"}]
    assert "1 judged-relevant document(s) are ineligible" in err


def test_a_collection_without_filters_says_how_to_set_them(capsys, db):
    code, _, err = cli(capsys, "filters", "show", "--collection", "toy")
    assert code == 1 and "no topic of collection 'toy' has a 'filter' metadata value" in err
    assert "workbench metadata import-topics" in err


@pytest.fixture
def filtered(capsys, db, write):
    code, _, err = cli(capsys, "filters", "import", write("f.tsv", "topic_id\tfilter\n1\tyear <= 1956\n"),
                       "--collection", "toy")
    assert code == 0, err
    return write("q.txt", QRELS)


def test_pre_and_post_filtered_bm25_runs_record_the_mode_and_count_short_topics(capsys, filtered):
    code, out, err = cli(capsys, "run", "bm25", "--collection", "toy", "--name", "pre", "--depth", "2",
                         "--filter-mode", "pre")
    assert code == 0, err
    assert "pre-filtered by topic metadata 'filter' (1 topics filtered): 0 topic(s) came back with fewer than 2" in out
    code, out, err = cli(capsys, "run", "bm25", "--collection", "toy", "--name", "post", "--depth", "3",
                         "--filter-mode", "post")
    assert code == 0, err
    # post: the top 3 of "flow" are d1, d2, d3; only d3 is eligible -> 1 result, short
    assert "post-filtered by topic metadata 'filter' (1 topics filtered): 1 topic(s) came back with fewer than 3 " \
           "results (1; see `workbench run show post`)" in out
    code, out, err = cli(capsys, "run", "export", "post")
    assert [line.split()[2] for line in out.splitlines() if line.startswith("1 ")] == ["d3"]
    code, out, err = cli(capsys, "run", "show", "post", "--format", "jsonl")
    shown = {json.loads(line)["topic"]: json.loads(line) for line in out.splitlines()}
    assert shown["1"]["message"] == "post-filter kept 1 of 3 retrieved documents" and shown["1"]["results"] == 1
    assert '"filter": {"filters_sha256": "' in err and '"mode": "post"' in err and '"topics_short": 1' in err
    code, _, err = cli(capsys, "run", "bm25", "--collection", "toy", "--name", "x", "--filter-mode", "mid")
    assert code == 2 and "expected --filter-mode none, pre, post, found 'mid'" in err


def test_filtered_scoring_reports_ineligible_gold_leaks_and_short_topics(capsys, filtered):
    for name, mode, depth in (("plain", "none", 4), ("pre", "pre", 2), ("post", "post", 2)):
        code, _, err = cli(capsys, "run", "bm25", "--collection", "toy", "--name", name, "--depth", depth,
                           "--filter-mode", mode)
        assert code == 0, err
    code, out, err = cli(capsys, "score", "plain", "pre", "post", "--qrels", filtered, "-m", "R@2", "-m", "R@4",
                         "--missing", "zero", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    el = doc["header"]["eligibility"]
    assert el["filter_key"] == "filter" and el["n_filtered_topics"] == 1 and el["ineligible_gold"] == 1
    runs = {r["run"]: r for r in doc["runs"]}
    # Topic 1: R = {d4} (d1 is relevant but from 1960: ineligible gold, not a miss); topic 2: R = {d5}.
    # plain (unfiltered, depth 4): topic 1 -> d1 d2 d3 d4: d4 within 4, not within 2; leaks d1, d2.
    assert runs["plain"]["measures"]["R@2"]["macro"] == pytest.approx((0 + 1) / 2)
    assert runs["plain"]["measures"]["R@4"]["macro"] == pytest.approx((1 + 1) / 2)
    lk = runs["plain"]["eligibility"]["leaks"]
    assert lk["total"] == 2 and lk["at_k"] == {"2": 2, "4": 2} and lk["topics"] == {"1": [[1, "d1"], [2, "d2"]]}
    assert runs["plain"]["eligibility"]["ineligible_gold"]["topics"] == {"1": [["d1", 1]]}
    # pre (depth 2): topic 1 -> d3 d4: R@2 = 1; no leak.
    assert runs["pre"]["measures"]["R@2"]["macro"] == pytest.approx(1.0)
    assert runs["pre"]["eligibility"]["leaks"]["total"] == 0 and runs["pre"]["eligibility"]["filter_mode"] == "pre"
    # post (depth 2): topic 1 -> d1 d2 retrieved, both dropped: empty, short; R@2 = 0 for it.
    assert runs["post"]["measures"]["R@2"]["macro"] == pytest.approx((0 + 1) / 2)
    assert runs["post"]["eligibility"]["topics_short"] == 1 and runs["post"]["eligibility"]["filter_mode"] == "post"
    assert any("ineligible gold: 1 judged-relevant document(s) in 1 topic(s)" in w for w in doc["header"]["warnings"])
    code, out, err = cli(capsys, "score", "plain", "--qrels", filtered, "-m", "R@2", "--missing", "zero")
    assert code == 0, err
    assert "ineligible gold (judged relevant, ineligible under the topic's filter; not in |R|, not a miss): " \
           "topic 1: d1" in out
    assert "run plain: leaks, ineligible documents returned for filtered topics (rank:doc_id)\n1\t1:d1 2:d2" in out
    assert "leaks: 2 ineligible document(s) returned for 1 of 1 filtered topics" in out
    assert "leaks@k" in out
    code, out, err = cli(capsys, "score", "plain", "--qrels", filtered, "-m", "R@2", "--missing", "zero",
                         "--filters", "off", "--format", "json")
    assert json.loads(out)["runs"][0]["measures"]["R@2"]["macro"] == pytest.approx((1 / 2 + 1) / 2)  # d1 counts
    code, _, err = cli(capsys, "score", "plain", "--qrels", filtered, "-m", "R@2", "--missing", "zero",
                       "--strict-eligibility")
    assert code == 1 and "1 judged-relevant document(s) in 1 topic(s) are ineligible" in err and "topic 1: d1" in err


GATE = """
[gate]
k = 2
min_topics = 2
[validity]
leakage = "off"
id_audit = "when-available"
"""


def test_the_release_gate_fails_a_candidate_that_returns_ineligible_documents(capsys, filtered, write):
    for name, mode, depth in (("plain", "none", 4), ("pre", "pre", 4)):
        code, _, err = cli(capsys, "run", "bm25", "--collection", "toy", "--name", name, "--depth", depth,
                           "--filter-mode", mode)
        assert code == 0, err
    pol = write("gate.toml", GATE)
    code, out, err = cli(capsys, "gate", "pre", "plain", "--qrels", filtered, "--policy", pol, "--format", "json")
    doc = json.loads(out)
    leaks = next(r for r in doc["candidates"][0]["rules"] if r["rule"] == "leaks")
    assert leaks["verdict"] == "fail" and leaks["measured"] == 2 and "plain: 2" in leaks["detail"], err
    assert code == 1 and doc["verdict"] == "fail"
    code, out, err = cli(capsys, "gate", "plain", "pre", "--qrels", filtered, "--policy", pol, "--format", "json")
    doc = json.loads(out)
    leaks = next(r for r in doc["candidates"][0]["rules"] if r["rule"] == "leaks")
    assert leaks["verdict"] == "pass" and leaks["measured"] == 0, err
    assert code == 0 and doc["verdict"] == "pass", [r for r in doc["candidates"][0]["rules"] if r["verdict"] != "pass"]


def test_ingest_refuses_a_topic_filter_that_names_a_key_no_document_has_and_writes_nothing(capsys, tmp_path):
    f = tmp_path / "toy"
    f.mkdir()
    (f / "corpus.jsonl").write_text('{"_id": "d1", "text": "flow", "metadata": {"year": 1958}}\n')
    (f / "queries.jsonl").write_text('{"_id": "1", "text": "flow", "metadata": {"filter": "yaer <= 1956"}}\n')
    db = tmp_path / "wb.duckdb"
    code, _, err = cli(capsys, "--db", db, "ingest", f)
    assert code == 1 and f"{f}: topic metadata 'filter': topic '1': filter 'yaer <= 1956' names the metadata key " \
                          "'yaer', which no document has; known keys: year" in err
    code, out, _ = cli(capsys, "--db", db, "collections")
    assert "toy" not in out


def test_a_run_older_than_the_document_metadata_names_its_version_and_the_way_out(capsys, tmp_path, monkeypatch,
                                                                                   write):
    """Fresh-user finding: metadata imported after a run makes a new collection version; filters name its keys, so
    scoring the older run failed with "no document has" and no hint. The error names the runs' version, says a
    later one exists, and offers --filters off (which scores it)."""
    from workbench.store import Store

    path = tmp_path / "wb.duckdb"
    Store(path, client="pytest", lock_timeout_s=30).collections.ingest_collection("toy", DOCS, TOPICS)  # no metadata
    monkeypatch.setenv("WORKBENCH_DB", str(path))
    code, _, err = cli(capsys, "run", "bm25", "--collection", "toy", "--name", "old", "--depth", "5")
    assert code == 0, err
    years = write("dm.tsv", "doc_id\tyear\n" + "".join(f"{d}\t{y}\n" for d, y in YEARS.items()))
    code, _, err = cli(capsys, "metadata", "import-documents", years, "--collection", "toy")
    assert code == 0, err
    code, _, err = cli(capsys, "filters", "import", write("f.tsv", "topic_id\tfilter\n1\tyear <= 1956\n"),
                       "--collection", "toy")
    assert code == 0, err
    q = write("q.txt", QRELS)
    code, _, err = cli(capsys, "score", "old", "--qrels", q, "-m", "R@5")
    assert code == 1
    assert "eligibility of collection 'toy' version " in err and "(the version the runs were produced over)" in err
    assert "names the metadata key 'year', which no document has" in err
    assert "came later (metadata imports make a new version)" in err and "--filters off" in err
    code, out, err = cli(capsys, "score", "old", "--qrels", q, "-m", "R@5", "--filters", "off")
    assert code == 0, err
