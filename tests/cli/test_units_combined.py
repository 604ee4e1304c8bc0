"""`workbench score --unit doc` with --by, --topic-set and eligibility filters together, and `gate --unit doc`.

One request carries all of them through one pipeline, so they compose. Collection ``docs`` (document
metadata ``year``) and its chunk collection ``docs-c``::

    a "alpha beta" 1950       chunks a#0 "alpha", a#1 "beta"
    b "alpha beta gamma" 1960 chunk  b#0
    c "gamma" 1950            chunk  c#0
    e "delta" 1950            chunk  e#0
    f "alpha gamma" 1950      chunks f#0 "alpha", f#1 "gamma"

Topics: 1 (filter ``year <= 1955``, domain x), 2 (domain y), 3 (domain x, no filter).
Qrels ``docs-v1``: t1 {a, b}, t2 {c, e, f}, t3 {a, b}.

Chunk run ``chunky`` at document level (each document at its best-ranked chunk):
t1 = b, c, a; t2 = c, f; t3 = f, b, a. R[doc]@2 under the filters:

* t1: b (1960) is ineligible, so R = {a}; the top 2 = b, c: 0/1 (and b at rank 1 is a leak);
* t2: c, f of {c, e, f}: 2/3;
* t3 (no filter): f, b of {a, b}: 1/2.

Chunk run ``chunky2``: t1 = a, b (1/1; b at rank 2 a leak); t2 = e, c (2/3); t3 = a, b (2/2).
"""

from __future__ import annotations

import json

import pytest

from tests.cli.helpers import run
from workbench.scoring.units import ChunkMap, ChunkSpan
from workbench.store import Store
from workbench.store.units import ChunkSource
from workbench.types import Document, RunInfo, Topic

TEXTS = {"a": "alpha beta", "b": "alpha beta gamma", "c": "gamma", "e": "delta", "f": "alpha gamma"}
YEARS = {"a": 1950, "b": 1960, "c": 1950, "e": 1950, "f": 1950}
SPANS = [("a#0", "a", 0, 5), ("a#1", "a", 6, 10), ("b#0", "b", 0, 16), ("c#0", "c", 0, 5), ("e#0", "e", 0, 5),
         ("f#0", "f", 0, 5), ("f#1", "f", 6, 11)]
T1, T2, T3 = 0.0, 2 / 3, 1 / 2                      # chunky's R[doc]@2 per topic, filtered (module docstring)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "wb.duckdb"
    s = Store(path, client="pytest")
    topics = [Topic("1", "alpha beta"), Topic("2", "gamma"), Topic("3", "alpha")]
    s.collections.ingest_collection("docs", [Document(d, "", t) for d, t in TEXTS.items()], topics,
                        metadata={d: {"year": y} for d, y in YEARS.items()})
    s.metadata.set_topic_metadata("docs", {"1": {"filter": "year <= 1955", "domain": "x"}, "2": {"domain": "y"},
                                  "3": {"domain": "x"}})
    chunks = [Document(c, "", TEXTS[d][a:b]) for c, d, a, b in SPANS]
    s.collections.ingest_collection("docs-c", chunks, topics, chunk_map=ChunkMap.of(ChunkSpan(*x) for x in SPANS),
                        chunk_source=ChunkSource("docs", s.collections.latest_collection_version("docs"), "tokens", 1, 0))
    s.runs.save_run(RunInfo("chunky", "dense", {}, 4, "docs-c"),
               {"1": {"b#0": 4.0, "c#0": 3.0, "a#1": 2.0, "a#0": 1.0}, "2": {"c#0": 2.0, "f#1": 1.0},
                "3": {"f#0": 3.0, "b#0": 2.0, "a#0": 1.0}})
    s.runs.save_run(RunInfo("chunky2", "dense", {}, 2, "docs-c"),
               {"1": {"a#0": 2.0, "b#0": 1.0}, "2": {"e#0": 2.0, "c#0": 1.0}, "3": {"a#0": 2.0, "b#0": 1.0}})
    s.qrels.create_qrels_version("docs-v1", "docs", {"1": {"a": 1, "b": 1}, "2": {"c": 1, "e": 1, "f": 1},
                                               "3": {"a": 1, "b": 1}}, origin="imported", rule="test")
    s.evaluations.save_topic_set("x-and-y", ["2", "3"], collection="docs")
    s.release_file()
    return path


def _view(capsys, db, *extra):
    code, out, err = run(capsys, db, "score", "chunky", "--qrels", "docs-v1", "--unit", "doc", "-m", "R@2",
                         "--min-topics", "1", "--no-record", "--format", "json", *extra)
    assert code == 0, err
    [view] = json.loads(out)["views"]
    return view


def _macro(view, run_name="chunky"):
    [r] = [r for r in view["runs"] if r["run"] == run_name]
    m = r["measures"]["R[doc]@2"]
    return m["macro"], m["n_topics"]


def _slice_means(view):
    rows = view["slices"]["chunky"]["domain"]["rows"]
    return {r["value"]: (r["means"]["R[doc]@2"], r["n_topics"]) for r in rows if r["value"] != "(all)"}


def test_filters_alone(capsys, db):
    view = _view(capsys, db)
    assert _macro(view) == (pytest.approx((T1 + T2 + T3) / 3), 3)
    assert view["header"]["eligibility"]["ineligible_gold"] == 1
    assert view["header"]["eligibility"]["runs"]["chunky"]["leaks"]["at_k"]["2"] == 1
    off = _view(capsys, db, "--filters", "off")
    assert _macro(off) == (pytest.approx((1 / 2 + T2 + T3) / 3), 3)        # t1 unfiltered: b of {a, b}


def test_by_with_filters(capsys, db):
    view = _view(capsys, db, "--by", "domain")
    assert _slice_means(view) == {"x": (pytest.approx((T1 + T3) / 2), 2), "y": (pytest.approx(T2), 1)}


def test_topic_set_by_and_filters_together(capsys, db):
    view = _view(capsys, db, "--topic-set", "x-and-y", "--by", "domain")
    assert _macro(view) == (pytest.approx((T2 + T3) / 2), 2)
    assert view["header"]["topic_set"] == "x-and-y@1"
    assert view["header"]["topics_eligible"] == 2 and view["header"]["topics_evaluated"] == 2
    assert _slice_means(view) == {"x": (pytest.approx(T3), 1), "y": (pytest.approx(T2), 1)}
    # leaks are counted on the evaluated topics: topic 1's (b at rank 1) is outside the set
    assert view["header"]["eligibility"]["runs"]["chunky"]["leaks"]["at_k"]["2"] == 0


def test_topic_set_and_slices_in_the_table(capsys, db):
    code, out, err = run(capsys, db, "score", "chunky", "--qrels", "docs-v1", "--unit", "doc", "-m", "R@2",
                         "--min-topics", "1", "--no-record", "--topic-set", "x-and-y", "--by", "domain")
    assert code == 0, err
    assert "\n  topic set x-and-y@1\n" in out and "run chunky (2 topics at doc)" in out
    assert f"R[doc]@2       {(T2 + T3) / 2:.4f}" in out
    assert "[doc] run chunky by domain" in out and "slice topics R[doc]@2" in out
    assert f"x          1   {T3:.4f}" in out and f"y          1   {T2:.4f}" in out


def test_gate_over_unit_mapped_runs(capsys, db, tmp_path):
    policy = tmp_path / "gate.toml"
    policy.write_text('[gate]\nname = "units"\nk = 2\nmeasures = ["R@2"]\nmin_topics = 2\nmin_topic_share = 0.5\n'
                      '[macro]\nmin_ci_low = -1.0\nresamples = 200\n'
                      '[validity]\ncompletion = 1.0\nid_audit = "when-available"\nleakage = "off"\nleaks = "off"\n')
    code, out, err = run(capsys, db, "gate", "chunky", "chunky2", "--qrels", "docs-v1", "--policy", policy,
                         "--unit", "doc", "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    [test] = report["candidates"][0]["tests"]
    assert (test["measure"], test["topics"], test["wins"], test["losses"], test["ties"]) == ("R@2", 3, 2, 0, 1)
    assert test["mean_baseline"] == pytest.approx((T1 + T2 + T3) / 3)                 # 7/18
    assert test["mean_candidate"] == pytest.approx((1 + 2 / 3 + 1) / 3)              # 8/9
    assert [r["origin"] for r in report["header"]["runs"]] == ["mapping", "mapping"]
    code, out, err = run(capsys, db, "gate", "chunky", "chunky2", "--qrels", "docs-v1", "--policy", policy,
                         "--format", "json")
    assert code == 2 and "ranks chunks" in err and "--unit doc" in err   # without --unit: invalid, naming it
