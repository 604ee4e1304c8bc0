"""Immutable qrels versions: content hash, counts, lineage checks, coverage."""

from __future__ import annotations

import hashlib

import pytest

from workbench.errors import DuplicateNameError, UnknownNameError, ValidationError
from workbench.types import Document, Topic


@pytest.fixture
def toy(store):
    store.collections.ingest_collection(
        "toy", [Document(f"d{i}", "", f"text {i}") for i in range(1, 6)], [Topic("1", "a"), Topic("2", "b")]
    )
    return store


def test_create_and_read_back_with_hash_and_counts(toy):
    qrels = {"2": {"d3": 0}, "1": {"d2": 1, "d1": 2, "d5": -1}}
    info = toy.qrels.create_qrels_version("toy-ref", "toy", qrels, origin="imported", rule="code 1 -> 4", source="q.txt")
    lines = "1\td1\t2\n1\td2\t1\n1\td5\t-1\n2\td3\t0\n"
    assert info.content_hash == hashlib.sha256(lines.encode()).hexdigest()
    assert (info.n_topics, info.n_entries, info.n_relevant) == (2, 4, 2)  # grades >= 1: d1, d2
    assert info.collection_version == toy.collections.latest_collection_version("toy")
    assert (info.origin, info.rule, info.source, info.parent_version, info.pool_version) == (
        "imported", "code 1 -> 4", "q.txt", None, None)
    assert toy.qrels.get_qrels("toy-ref") == {"1": {"d1": 2, "d2": 1, "d5": -1}, "2": {"d3": 0}}
    assert list(toy.qrels.get_qrels("toy-ref")) == ["1", "2"]
    assert toy.qrels.get_qrels_info("toy-ref") == info
    assert toy.qrels.qrels_grade_counts("toy-ref") == {-1: 1, 0: 1, 1: 1, 2: 1}
    assert [v.name for v in toy.qrels.list_qrels_versions("toy")] == ["toy-ref"]


def test_versions_are_immutable_and_parents_must_exist(toy):
    toy.qrels.create_qrels_version("v1", "toy", {"1": {"d1": 1}}, origin="imported", rule="r")
    with pytest.raises(DuplicateNameError, match="'v1' already exists"):
        toy.qrels.create_qrels_version("v1", "toy", {"1": {"d2": 1}}, origin="imported", rule="r")
    with pytest.raises(UnknownNameError, match="unknown qrels version 'v0'; known: v1"):
        toy.qrels.create_qrels_version("v2", "toy", {"1": {"d2": 1}}, origin="published", rule="r", parent_version="v0")
    with pytest.raises(UnknownNameError, match="unknown pool version 'p9'"):
        toy.qrels.create_qrels_version("v2", "toy", {"1": {"d2": 1}}, origin="published", rule="r", pool_version="p9")
    v2 = toy.qrels.create_qrels_version("v2", "toy", {"1": {"d2": 1}}, origin="published", rule="r", parent_version="v1")
    assert v2.parent_version == "v1"
    assert toy.qrels.get_qrels("v1") == {"1": {"d1": 1}}


def test_bad_input_writes_nothing(toy):
    with pytest.raises(ValidationError, match="at least one entry"):
        toy.qrels.create_qrels_version("e", "toy", {"1": {}}, origin="imported", rule="r")
    with pytest.raises(ValidationError, match="integer grade"):
        toy.qrels.create_qrels_version("e", "toy", {"1": {"d1": 1.5}}, origin="imported", rule="r")  # type: ignore[dict-item]
    with pytest.raises(UnknownNameError, match="unknown collection 'nope'"):
        toy.qrels.create_qrels_version("e", "nope", {"1": {"d1": 1}}, origin="imported", rule="r")
    assert toy.qrels.list_qrels_versions() == []
    with toy.connection() as cur:
        assert cur.execute("SELECT count(*) FROM qrels_entries").fetchall() == [(0,)]


def test_coverage_reveals_an_id_mismatch(toy):
    qrels = {"1": {"d1": 1, "D2": 1, "doc_d3": 0}, "1b": {"d1": 1}}
    cov = toy.qrels.qrels_doc_coverage("toy", qrels)
    assert (cov.n_found, cov.n_total, cov.share) == (1, 3, pytest.approx(1 / 3))
    assert cov.missing_examples == ("D2", "doc_d3")
    assert (cov.n_topics_found, cov.n_topics_total, cov.missing_topic_examples) == (1, 2, ("1b",))
    assert cov.describe().startswith(
        "qrels coverage: 1 of 3 doc ids (33.3%) and 1 of 2 topics are in collection 'toy' (version "
    )


def test_an_export_is_recorded_with_the_version_in_its_transaction(toy):
    # Issue 26: the record that a version is exported to the labels folder is written in the
    # transaction that creates it, so it exists exactly when the version does.
    toy.qrels.create_qrels_version("v1", "toy", {"1": {"d1": 1}}, origin="imported", rule="r", export_file="v1.qrels")
    with pytest.raises(UnknownNameError, match="unknown qrels version 'nope'"):  # rolled back: no version, no record
        toy.qrels.create_qrels_version("v2", "toy", {"1": {"d1": 1}}, origin="imported", rule="r",
                                       parent_version="nope", export_file="v2.qrels")
    toy.qrels.create_qrels_version("v3", "toy", {"1": {"d2": 1}}, origin="imported", rule="r")  # not exported
    assert toy.qrels.exported_files() == {"v1": "v1.qrels"}
    toy.qrels.record_export("v3", "v3.qrels")
    toy.qrels.record_export("v3", "other.qrels")  # recorded once: the first record is kept
    assert toy.qrels.exported_files() == {"v1": "v1.qrels", "v3": "v3.qrels"}
    with pytest.raises(UnknownNameError, match="unknown qrels version 'v2'"):
        toy.qrels.record_export("v2", "v2.qrels")
