"""Document and topic metadata in the store: part of the collection version, never overwritten silently."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

import pytest

from tests.old_schema import store_at_schema
from workbench.errors import InputFormatError, ValidationError
from workbench.metadata import metadata_hash
from workbench.services.collections.ingest import describe_ingest, ingest_folder
from workbench.services.collections.metadata import import_document_metadata, import_topic_metadata
from workbench.store.collections import collection_version_of, text_hash
from workbench.types import Document, Topic

DOCS = [Document("d2", "", "lift"), Document("d1", "Wings", "drag and lift")]
TOPICS = [Topic("1", "what is lift"), Topic("2", "drag")]


def _sha(s: str) -> str:
    return hashlib.sha256(s.encode()).hexdigest()


def test_without_metadata_the_version_hash_is_unchanged(store):
    h1, h2 = text_hash("Wings", "drag and lift"), text_hash("", "lift")
    old_rule = _sha(f"d1\t{h1}\nd2\t{h2}\n")
    assert store.collections.ingest_collection("toy", DOCS, TOPICS).collection_version == old_rule
    assert collection_version_of([("d1", h1), ("d2", h2)], {"d1": {}}) == old_rule  # empty metadata = none


def test_metadata_is_part_of_the_version_and_a_changed_value_is_a_new_version(store):
    h1, h2 = text_hash("Wings", "drag and lift"), text_hash("", "lift")
    plain = store.collections.ingest_collection("toy", DOCS, TOPICS)
    meta = {"d1": {"year": 1958, "source": "naca tn"}}
    v2 = store.collections.ingest_collection("toy", DOCS, TOPICS, metadata=meta)
    assert v2.status == "new_version" and v2.parent_version == plain.collection_version
    assert v2.collection_version == _sha(f"d1\t{h1}\t{metadata_hash(meta['d1'])}\nd2\t{h2}\n")
    assert (v2.n_docs_changed, v2.n_docs_metadata_changed, v2.n_docs_with_metadata) == (0, 1, 1)
    assert v2.metadata_keys == ("source", "year")
    again = store.collections.ingest_collection("toy", DOCS, TOPICS, metadata={"d1": {"source": "naca tn", "year": 1958.0}})
    assert again.status == "unchanged"  # same values, other order and spelling of the number
    v3 = store.collections.ingest_collection("toy", DOCS, TOPICS, metadata={"d1": {"year": 1959, "source": "naca tn"}})
    assert v3.status == "new_version" and v3.parent_version == v2.collection_version
    assert store.metadata.document_metadata("toy") == {"d1": {"source": "naca tn", "year": 1959}}
    assert store.metadata.document_metadata("toy", v2.collection_version) == {"d1": {"source": "naca tn", "year": 1958}}
    assert store.metadata.document_metadata("toy", plain.collection_version) == {}


def test_metadata_for_an_unknown_document_or_a_bad_value_writes_nothing(store):
    with pytest.raises(ValidationError, match="metadata is given for doc id 'd9', which is not in the corpus"):
        store.collections.ingest_collection("toy", DOCS, TOPICS, metadata={"d9": {"a": 1}})
    with pytest.raises(ValidationError, match="document 'd1': key 'when'"):
        store.collections.ingest_collection("toy", DOCS, TOPICS, metadata={"d1": {"when": [1]}})
    assert store.collections.list_collections() == []


def test_document_metadata_keys_describe_counts_types_and_range(store):
    store.collections.ingest_collection("toy", DOCS + [Document("d3", "", "x")], TOPICS,
                            metadata={"d1": {"year": 1958}, "d2": {"year": 1946, "d": date(2020, 1, 2)}})
    keys = store.metadata.document_metadata_keys("toy")
    assert (keys["year"].n_values, keys["year"].types, keys["year"].minimum, keys["year"].maximum) == (
        2, {"number": 2}, "1946", "1958")
    assert keys["d"].types == {"date": 1}


def test_topic_metadata_is_added_kept_and_only_replaced_on_request(store):
    store.collections.ingest_collection("toy", DOCS, TOPICS, topic_metadata={"1": {"priority": "critical"}})
    assert store.metadata.topic_metadata("toy") == store.metadata.get_topic_metadata("toy") == {"1": {"priority": "critical"}}
    r = store.metadata.set_topic_metadata("toy", {"1": {"priority": "critical", "filter": "year <= 1956"}, "2": {"n": 2}})
    assert (r.n_added, r.n_unchanged, r.n_replaced, r.keys) == (2, 1, 0, ("filter", "n", "priority"))
    with pytest.raises(ValidationError, match="topic '1' already has priority = 'critical', the new value is 'normal'"):
        store.metadata.set_topic_metadata("toy", {"1": {"priority": "normal"}, "2": {"n": 3}})
    assert store.metadata.topic_metadata("toy")["2"] == {"n": 2}  # nothing written
    r = store.metadata.set_topic_metadata("toy", {"1": {"priority": "normal"}}, source="fix.csv", replace=True)
    assert r.n_replaced == 1
    assert store.metadata.topic_metadata("toy")["1"] == {"filter": "year <= 1956", "priority": "normal"}
    history = store.metadata.topic_metadata_history("toy")
    assert [(h["topic_id"], h["key"], h["value"], h["replaced_by_source"]) for h in history] == [
        ("1", "priority", "critical", "fix.csv")]
    with pytest.raises(ValidationError, match="1 topic id\\(s\\) of the metadata are not topics of the collection, e.g. '9'"):
        store.metadata.set_topic_metadata("toy", {"9": {"a": 1}})


def _folder(root: Path) -> Path:
    f = root / "toy"
    f.mkdir()
    (f / "corpus.jsonl").write_text(
        '{"_id": "d1", "text": "supersonic flow", "metadata": {"year": 1958}}\n{"_id": "d2", "text": "heat"}\n')
    (f / "queries.jsonl").write_text('{"_id": "1", "text": "flow", "metadata": {"priority": "critical"}}\n'
                                     '{"_id": "2", "text": "heat"}\n')
    return f


def test_folder_side_files_are_merged_with_corpus_and_query_metadata(store, tmp_path):
    f = _folder(tmp_path)
    (f / "doc_metadata.csv").write_text("doc_id,source\nd1,naca tn\nd2,arc r & m\n")
    (f / "topic_metadata.jsonl").write_text('{"topic_id": "2", "filter": "year <= 1956"}\n')
    result = ingest_folder(store, f)
    assert store.metadata.document_metadata("toy") == {"d1": {"source": "naca tn", "year": 1958}, "d2": {"source": "arc r & m"}}
    assert store.metadata.topic_metadata("toy") == {"1": {"priority": "critical"}, "2": {"filter": "year <= 1956"}}
    lines = list(describe_ingest(result))
    assert "document metadata: 2 of 2 documents, keys source, year (part of the collection version)" in lines
    assert "topic metadata: 2 topics, keys filter, priority: 2 values added, 0 unchanged, 0 replaced" in lines
    assert ingest_folder(store, f).changed is False  # a second ingest writes nothing


def test_side_file_conflicts_and_unknown_ids_are_errors_naming_the_file(store, tmp_path):
    f = _folder(tmp_path)
    side = f / "doc_metadata.jsonl"
    side.write_text('{"doc_id": "d1", "year": 1957}\n')
    with pytest.raises(InputFormatError, match=r"doc_metadata.jsonl: document 'd1': key 'year' is 1958 in corpus.jsonl and 1957 here"):
        ingest_folder(store, f)
    side.write_text('{"doc_id": "D1", "year": 1958}\n')
    with pytest.raises(InputFormatError, match=r"doc_metadata.jsonl: expected doc ids of corpus.jsonl, found 'D1' \(1 of 1 ids"):
        ingest_folder(store, f)
    assert store.collections.list_collections() == []


def test_import_services_make_a_new_version_and_set_topic_metadata(store, tmp_path):
    f = _folder(tmp_path)
    v1 = ingest_folder(store, f).collection.collection_version
    dm = tmp_path / "dm.tsv"
    dm.write_text("doc_id\tyear\nd2\t1950\n")
    r = import_document_metadata(store.collections, store.metadata, "toy", dm)
    assert r.status == "new_version" and r.parent_version == v1 and r.n_docs_metadata_changed == 1
    assert store.metadata.document_metadata("toy") == {"d1": {"year": 1958}, "d2": {"year": 1950}}
    assert import_document_metadata(store.collections, store.metadata, "toy", dm).status == "unchanged"
    tm = tmp_path / "tm.jsonl"
    tm.write_text(json.dumps({"topic_id": "1", "priority": "normal"}) + "\n")
    with pytest.raises(ValidationError, match="already has priority = 'critical'"):
        import_topic_metadata(store.collections, store.metadata, "toy", tm)
    assert import_topic_metadata(store.collections, store.metadata, "toy", tm, replace=True).n_replaced == 1
    tm.write_text(json.dumps({"topic_id": "7", "priority": "normal"}) + "\n")
    with pytest.raises(InputFormatError, match="expected topic ids of collection 'toy', found '7'"):
        import_topic_metadata(store.collections, store.metadata, "toy", tm)


def test_a_store_of_schema_1_migrates_and_keeps_its_data(tmp_path):
    from workbench.store import Store

    path = tmp_path / "old.duckdb"
    with store_at_schema(path, 1) as con:
        con.execute("INSERT INTO collections (collection) VALUES ('old')")
    s = Store(path, client="pytest")
    assert s.schema_version() >= 2
    with s.connection() as cur:
        assert cur.execute("SELECT collection FROM collections").fetchall() == [("old",)]
        assert cur.execute("SELECT count(*) FROM document_metadata").fetchall() == [(0,)]


def test_corpus_parquet_extra_columns_are_document_metadata(store, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = tmp_path / "pq"
    f.mkdir()
    pq.write_table(pa.table({"_id": ["d1", "d2"], "text": ["flow", "heat"], "year": [1958, None],
                             "published": [date(1958, 1, 2), date(1960, 5, 6)]}), f / "corpus.parquet")
    (f / "queries.jsonl").write_text('{"_id": "1", "text": "flow"}\n')
    ingest_folder(store, f)
    assert store.metadata.document_metadata("pq") == {"d1": {"published": date(1958, 1, 2), "year": 1958},
                                             "d2": {"published": date(1960, 5, 6)}}
