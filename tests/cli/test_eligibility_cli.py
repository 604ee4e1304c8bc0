"""Eligibility end to end: filters imported and checked, pre/post-filtered runs, filtered scoring, leaks.

A tiny collection with known BM25 results: "flow" occurs once in d1..d4 (4 of 10
documents, so its idf is positive) and the documents grow longer, so BM25 ranks
d1 > d2 > d3 > d4 for the query "flow". Topic 1 ("flow") may only see documents
of 1956 or earlier (d3, d4 and d5); topic 2 ("heat") is unfiltered.
"""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.types import Document, Topic

DOCS = [Document("d1", "", "flow"), Document("d2", "", "flow wing"), Document("d3", "", "flow wing drag"),
        Document("d4", "", "flow wing drag lift"), Document("d5", "", "heat"), Document("d6", "", "slab"),
        Document("d7", "", "plate"), Document("d8", "", "shell"), Document("d9", "", "beam"),
        Document("d10", "", "strut")]
YEARS = {"d1": 1960, "d2": 1958, "d3": 1950, "d4": 1956, "d5": 1940, "d6": 1962}
TOPICS = [Topic("1", "flow"), Topic("2", "heat")]
# Topic 1: d1 (ineligible: 1960) and d4 are relevant; topic 2: d5.
QRELS = "1 0 d1 1\n1 0 d4 2\n1 0 d2 0\n2 0 d5 1\n"


def cli(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(tmp_path, monkeypatch, write):
    from workbench.store import LabelStore

    path = tmp_path / "wb.duckdb"
    store = LabelStore(path, client="pytest", lock_timeout_s=30)
    store.ingest_collection("toy", DOCS, TOPICS, metadata={d: {"year": y} for d, y in YEARS.items()})
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
