"""Stored runs: ranks, per-topic status, immutability, imports with file:line errors, bulk reading."""

from __future__ import annotations

import random

import pytest

from workbench.errors import DuplicateNameError, InputFormatError, UnknownNameError, ValidationError
from workbench.formats.trec import read_run
from workbench.ranking import ranked
from workbench.store.runs import read_run_tops
from workbench.types import Document, RunInfo, Topic


@pytest.fixture
def toy(store):
    docs = [Document(f"d{i}", "", f"text {i}") for i in range(1, 8)]
    store.collections.ingest_collection("toy", docs, [Topic("1", "first"), Topic("2", "second"), Topic("3", "third")])
    return store


def counts(store) -> dict[str, int]:
    with store.connection() as cur:
        return {t: cur.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
                for t in ("runs", "run_entries", "run_topics")}


def test_saved_run_round_trips_with_canonical_ranks_and_a_status_for_every_topic(toy):
    run = {"1": {"d1": 1.0, "d2": 1.0, "d3": 2.0}, "2": {}}
    info = toy.runs.save_run(RunInfo("r", "bm25", {"k1": 1.2}, 10, "toy"), run,
                        statuses={"2": "empty"}, messages={"2": "only stop words"})
    assert info.collection_version == toy.collections.latest_collection_version("toy")
    assert toy.runs.get_run("r") == {"1": {"d3": 2.0, "d2": 1.0, "d1": 1.0}}  # empty topics are absent
    assert list(toy.runs.get_run("r")["1"]) == ["d3", "d2", "d1"]  # tie d1/d2: doc_id desc
    assert toy.runs.get_run("r", depth=2) == {"1": {"d3": 2.0, "d2": 1.0}}
    rows = {r.topic_id: r for r in toy.runs.get_run_topic_statuses("r")}
    assert (rows["1"].status, rows["1"].n_results) == ("ok", 3)
    assert (rows["2"].status, rows["2"].message) == ("empty", "only stop words")
    assert (rows["3"].status, rows["3"].message) == ("empty", "no results given for this topic")
    assert toy.runs.get_run_statuses("r") == {"1": "ok", "2": "empty", "3": "empty"}
    got = toy.runs.get_run_info("r")
    assert (got.kind, got.params, got.depth, got.collection) == ("bm25", {"k1": 1.2}, 10, "toy")
    with toy.connection() as cur:
        ranks = cur.execute("SELECT doc_id, rank FROM run_entries WHERE run_name = 'r' ORDER BY rank").fetchall()
    assert ranks == [("d3", 1), ("d2", 2), ("d1", 3)]


def test_error_status_keeps_its_message_and_summaries_count_statuses(toy):
    toy.runs.save_run(RunInfo("r", "dense", {}, 5, "toy"), {"1": {"d1": 0.5}}, statuses={"2": "error"},
                 messages={"2": "RuntimeError: boom"})
    (s,) = toy.runs.run_summaries("toy")
    assert (s.n_topics, s.n_ok, s.n_empty, s.n_error, s.n_entries) == (3, 1, 1, 1, 1)
    assert toy.runs.list_runs() == [s.info] and toy.runs.list_runs("other") == []
    assert len(s.content_hash) == 64


@pytest.mark.parametrize(
    "run,statuses,error,match",
    [
        ({"9": {"d1": 1.0}}, None, ValidationError, "not topics of collection"),
        ({"1": {"zz": 1.0}}, None, ValidationError, "not in collection"),
        ({"1": {"d1": float("nan")}}, None, ValidationError, "finite"),
        ({"1": {}}, {"1": "ok"}, ValidationError, "'ok' needs results"),
        ({"1": {"d1": 1.0}}, {"1": "error"}, ValidationError, "need none"),
        ({"1": {"d1": 1.0}}, {"1": "maybe"}, ValidationError, "expected one of ok, empty, error"),
    ],
)
def test_invalid_runs_are_refused_and_nothing_is_written(toy, run, statuses, error, match):
    before = counts(toy)
    with pytest.raises(error, match=match):
        toy.runs.save_run(RunInfo("bad", "bm25", {}, 10, "toy"), run, statuses)
    assert counts(toy) == before


def test_run_names_are_immutable_and_collections_must_exist(toy):
    toy.runs.save_run(RunInfo("r", "bm25", {}, 10, "toy"), {"1": {"d1": 1.0}})
    with pytest.raises(DuplicateNameError, match="immutable"):
        toy.runs.save_run(RunInfo("r", "bm25", {}, 10, "toy"), {"1": {"d2": 1.0}})
    with pytest.raises(UnknownNameError, match="collection"):
        toy.runs.save_run(RunInfo("s", "bm25", {}, 10, "nope"), {"1": {"d1": 1.0}})
    with pytest.raises(ValidationError, match="run name"):
        toy.runs.save_run(RunInfo("has space", "bm25", {}, 10, "toy"), {})
    with pytest.raises(UnknownNameError) as e:
        toy.runs.get_run("missing")
    assert e.value.known == ["r"]


RUN_TEXT = """1 Q0 d3 1 9.5 sysA
1 Q0 d1 2 9.5 sysA
1 Q0 d2 3 3.0 sysA
1 Q0 d2 4 7.0 sysA
2 Q0 d7 1 1.0 sysA
"""


def test_import_keeps_name_description_tag_depth_and_empty_topics(toy, write):
    path = write("a.trec", RUN_TEXT)
    info = toy.runs.import_run_file(path, "systemA", collection="toy", description="their best run")
    assert (info.kind, info.description, info.depth) == ("imported", "their best run", 3)
    assert info.params == {"tag": "sysA", "lines": 5, "trust_file_order": False, "duplicates_dropped": 1}
    assert toy.runs.get_run("systemA") == {"1": {"d3": 9.5, "d1": 9.5, "d2": 7.0}, "2": {"d7": 1.0}}
    assert list(toy.runs.get_run("systemA")["1"]) == ["d3", "d1", "d2"]
    rows = {r.topic_id: r for r in toy.runs.get_run_topic_statuses("systemA")}
    assert rows["3"].status == "empty" and "no line" in rows["3"].message
    (s,) = toy.runs.run_summaries()
    assert s.source == str(path)


@pytest.mark.parametrize(
    "text,line,match",
    [
        ("1 Q0 d1 1 2.0 t\n9 Q0 d2 2 1.0 t\n", 2, "expected a topic of collection 'toy', found '9'"),
        ("1 Q0 d1 1 2.0 t\n1 Q0 d1 2 1.0 t\n2 Q0 nope 1 1.0 t\n", 3, "expected a document of collection"),
        ("1 Q0 d1 1 2.0\n", 1, "expected 6 columns"),
    ],
)
def test_import_errors_name_the_file_and_line_and_write_nothing(toy, write, text, line, match):
    path = write("bad.trec", text)
    before = counts(toy)
    with pytest.raises(InputFormatError, match=match) as e:
        toy.runs.import_run_file(path, "bad", collection="toy")
    assert e.value.line == line and e.value.path == str(path)
    assert str(e.value).startswith(f"{path}:{line}: ")
    assert counts(toy) == before


def _random_run_file(write, name: str, rng: random.Random) -> str:
    lines = []
    for topic in ("1", "2", "10"):
        for _ in range(rng.randrange(5, 40)):
            doc = f"D{rng.randrange(30)}"
            score = rng.choice([1.0, 2.0, 2.5, rng.random()])  # many ties, some duplicates
            sep = rng.choice([" ", "\t", "  "])
            lines.append(sep.join([topic, "Q0", doc, str(rng.randrange(1, 99)), repr(score), name]))
    return str(write(f"{name}.trec", "\n".join(lines) + "\n"))


def test_bulk_reader_equals_the_strict_reader_cut_by_the_canonical_rule(write):
    rng = random.Random(3)
    paths = [_random_run_file(write, f"run{i}", rng) for i in range(4)]
    for depth in (1, 5, 1000):
        bulk = read_run_tops(paths, depth)
        for p in paths:
            strict = read_run(p).run
            name = p.rsplit("/", 1)[1][:-5]
            expected = {t: {r.doc_id: r.score for r in ranked(docs)[:depth]} for t, docs in strict.items()}
            assert bulk[name] == expected
            assert {t: list(d) for t, d in bulk[name].items()} == {t: list(d) for t, d in expected.items()}


def test_bulk_reader_defers_to_the_strict_reader_for_errors(write):
    good = write("good.trec", "1 Q0 d1 1 1.0 t\n")
    bad = write("bad.trec", "1 Q0 d1 1 1.0 t\n1 Q0 d2 2 nan t\n")
    with pytest.raises(InputFormatError, match="bad.trec:2: score 'nan' is not a finite number"):
        read_run_tops([good, bad], 10)
    with pytest.raises(ValidationError, match="distinct names"):
        read_run_tops([good, good], 10)
    with pytest.raises(ValidationError, match="depth"):
        read_run_tops([good], 0)
