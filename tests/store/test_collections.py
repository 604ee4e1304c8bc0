"""Versioned ingestion of collections: content-hash versions, no-op re-imports, lineage."""

from __future__ import annotations

import hashlib

import pytest

from workbench.errors import DuplicateNameError, UnknownNameError, ValidationError
from workbench.store.collections import collection_version_of, text_hash
from workbench.types import Document, Topic

DOCS = [Document("d2", "", "lift"), Document("d1", "Wings", "drag and lift")]
TOPICS = [Topic("1", "what is lift"), Topic("2", "drag")]


def _sha(s: str) -> str:
    return hashlib.sha256(s.encode()).hexdigest()


def test_version_is_the_hash_of_sorted_doc_ids_and_text_hashes(store):
    report = store.collections.ingest_collection("toy", DOCS, TOPICS, source="inline")
    h1, h2 = _sha("Wings\x1fdrag and lift"), _sha("\x1flift")
    assert text_hash("Wings", "drag and lift") == h1
    assert report.collection_version == _sha(f"d1\t{h1}\nd2\t{h2}\n") == collection_version_of([("d2", h2), ("d1", h1)])
    assert report.status == "created"
    assert (report.n_documents, report.n_new_texts, report.topics_created, report.n_topics) == (2, 2, ("1", "2"), 2)
    assert store.collections.get_documents("toy") == {"d1": DOCS[1], "d2": DOCS[0]}
    assert store.collections.get_topics("toy") == {"1": TOPICS[0], "2": TOPICS[1]}
    assert store.collections.latest_collection_version("toy") == report.collection_version


def test_reimporting_identical_content_is_a_no_op(store):
    first = store.collections.ingest_collection("toy", DOCS, TOPICS)
    with store.connection() as cur:
        before = cur.execute("SELECT (SELECT count(*) FROM collection_versions), (SELECT count(*) FROM version_documents), "
                             "(SELECT count(*) FROM document_texts), (SELECT count(*) FROM topics)").fetchall()
    again = store.collections.ingest_collection("toy", list(reversed(DOCS)), TOPICS)
    assert again.status == "unchanged" and not again.changed
    assert again.collection_version == first.collection_version
    assert again.n_topics_unchanged == 2 and again.topics_created == ()
    with store.connection() as cur:
        after = cur.execute("SELECT (SELECT count(*) FROM collection_versions), (SELECT count(*) FROM version_documents), "
                            "(SELECT count(*) FROM document_texts), (SELECT count(*) FROM topics)").fetchall()
    assert before == after == [(1, 2, 2, 2)]


def test_changed_corpus_is_a_new_version_with_parent_and_the_old_one_is_kept(store):
    v1 = store.collections.ingest_collection("toy", DOCS, TOPICS).collection_version
    changed = [Document("d1", "Wings", "drag and lift, revised"), Document("d2", "", "lift"), Document("d3", "", "new")]
    report = store.collections.ingest_collection("toy", changed, TOPICS + [Topic("3", "new topic")])
    assert report.status == "new_version"
    assert report.parent_version == v1 != report.collection_version
    assert (report.n_docs_added, report.n_docs_removed, report.n_docs_changed) == (1, 0, 1)
    assert report.n_new_texts == 2  # "lift" is shared with v1 and stored once
    assert report.topics_created == ("3",)
    assert store.collections.latest_collection_version("toy") == report.collection_version
    assert store.collections.get_documents("toy", v1)["d1"].text == "drag and lift"
    assert store.collections.get_documents("toy", v1[:10])["d1"].text == "drag and lift"  # unique prefix
    assert store.collections.get_document("toy", "d1").text == "drag and lift, revised"
    assert [v.parent_version for v in store.collections.collection_versions("toy")] == ["", v1]
    with store.connection() as cur:
        assert cur.execute("SELECT count(*) FROM document_texts").fetchall() == [(4,)]
    [info] = store.collections.list_collections()
    assert (info.collection, info.n_versions, info.n_documents, info.n_topics) == ("toy", 2, 3, 3)


def test_changed_topic_text_is_an_error_naming_the_topic_and_nothing_is_written(store):
    store.collections.ingest_collection("toy", DOCS, TOPICS)
    with pytest.raises(ValidationError) as e:
        store.collections.ingest_collection("toy", DOCS + [Document("d9", "", "x")], [Topic("2", "drag coefficient")])
    assert str(e.value) == (
        "collection 'toy': topic '2' is already stored with a different title (stored title 'drag', "
        "new 'drag coefficient'); topics are not overwritten. Use a new topic id or a new collection name."
    )
    # the new corpus version was rolled back with the topic error
    assert len(store.collections.collection_versions("toy")) == 1
    assert store.collections.get_topics("toy")["2"].title == "drag"


def test_duplicate_doc_ids_and_empty_corpus_are_refused(store):
    with pytest.raises(ValidationError, match="expected each doc id once, found 'd1' twice"):
        store.collections.ingest_collection("toy", [Document("d1", "", "a"), Document("d1", "", "b")], [])
    with pytest.raises(ValidationError, match="expected at least one document"):
        store.collections.ingest_collection("toy", [], TOPICS)
    assert store.collections.list_collections() == []


def test_same_content_under_another_name_and_reverting_are_refused(store):
    v1 = store.collections.ingest_collection("toy", DOCS, []).collection_version
    with pytest.raises(DuplicateNameError, match="already collection 'toy'"):
        store.collections.ingest_collection("copy", DOCS, [])
    store.collections.ingest_collection("toy", DOCS + [Document("d3", "", "x")], [])
    with pytest.raises(ValidationError, match=f"identical to its older version {v1[:12]}"):
        store.collections.ingest_collection("toy", DOCS, [])


def test_unknown_names_list_the_known_ones(store):
    store.collections.ingest_collection("toy", DOCS, TOPICS)
    with pytest.raises(UnknownNameError, match=r"unknown collection 'nope'; known: toy"):
        store.collections.get_topics("nope")
    with pytest.raises(UnknownNameError, match=r"'d7'; known: d1, d2"):
        store.collections.get_document("toy", "d7")
    assert store.collections.missing_doc_ids("toy", ["d1", "D1", "x"]) == {"D1", "x"}
