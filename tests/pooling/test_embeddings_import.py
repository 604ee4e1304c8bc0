"""``run dense --embeddings FILE.parquet``: vectors made elsewhere are checked (model, dimension, norms,
coverage of the collection version) and cached, so the dense run encodes only its queries."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from encoder_stub import StubEncoder

from workbench.errors import InputFormatError, ValidationError
from workbench.services.runs.pooling import DenseRunRequest, make_dense_run
from workbench.services.vectors.embeddings import import_embeddings
from workbench.types import Document, Topic

TEXTS = {"d1": "shock wave", "d2": "boundary layer", "d3": "heat transfer", "d4": "shock tube", "d5": "wing flutter"}


@pytest.fixture
def toy(store):
    store.collections.ingest_collection("toy", [Document(d, "", t) for d, t in TEXTS.items()],
                            [Topic("1", "shock waves"), Topic("2", "heat")])
    return store


def _write(path, doc_ids, vectors, model="stub@sha256:0000", text_hashes=None):
    cols = {"doc_id": doc_ids, "vector": pa.array([list(map(float, v)) for v in vectors], pa.list_(pa.float32())),
            "model": [model] * len(doc_ids)}
    if text_hashes is not None:
        cols["text_hash"] = text_hashes
    pq.write_table(pa.table(cols), path)
    return path


def test_imported_vectors_give_the_in_process_run_without_encoding_a_document(toy, tmp_path, store):
    enc = StubEncoder()
    vectors = enc.encode(list(TEXTS.values())) * 3.0                     # not unit length: normalised
    path = _write(tmp_path / "e.parquet", list(TEXTS), vectors)
    r = import_embeddings(toy.collections, toy.vectors, "toy", path, encoder=StubEncoder())
    assert (r.n_vectors, r.n_added, r.dimension, r.n_normalised) == (5, 5, 64, 5)
    assert r.norm_range == pytest.approx((3.0, 3.0), abs=1e-5)
    fresh = StubEncoder()
    run = make_dense_run(toy, DenseRunRequest("toy", "imported", depth=3), encoder=fresh)
    assert (run.n_encoded, run.n_cached) == (0, 5)
    assert sorted(fresh.texts_encoded) == ["heat", "shock waves"]               # the queries, no document
    store2 = type(toy)(tmp_path / "other.duckdb", client="pytest")
    store2.collections.ingest_collection("toy", [Document(d, "", t) for d, t in TEXTS.items()],
                             [Topic("1", "shock waves"), Topic("2", "heat")])
    make_dense_run(store2, DenseRunRequest("toy", "encoded", depth=3), encoder=StubEncoder())
    a, b = toy.runs.get_run("imported"), store2.runs.get_run("encoded")
    assert a.keys() == b.keys() and all(list(a[t]) == list(b[t]) for t in a)
    assert all(a[t][d] == pytest.approx(b[t][d], abs=1e-6) for t in a for d in a[t])


def test_a_folder_of_parquet_files_is_read_as_one_table(toy, tmp_path):
    enc = StubEncoder()
    folder = tmp_path / "parts"
    folder.mkdir()
    ids = list(TEXTS)
    v = enc.encode(list(TEXTS.values()))
    _write(folder / "part-000.parquet", ids[:2], v[:2])
    _write(folder / "part-001.parquet", ids[2:], v[2:])
    assert import_embeddings(toy.collections, toy.vectors, "toy", folder, encoder=StubEncoder()).n_vectors == 5


def test_a_wrong_dimension_is_a_clear_error(toy, tmp_path):
    path = _write(tmp_path / "e.parquet", list(TEXTS), np.ones((5, 32)))
    with pytest.raises(ValidationError, match=r"expected vectors of 64 dimensions \(the model stub\), found 32"):
        import_embeddings(toy.collections, toy.vectors, "toy", path, encoder=StubEncoder())
    assert toy.vectors.embedding_counts() == {}


def test_missing_documents_are_counted_and_named(toy, tmp_path):
    v = StubEncoder().encode(list(TEXTS.values()))
    path = _write(tmp_path / "e.parquet", ["d1", "d2", "d3"], v[:3])
    with pytest.raises(ValidationError, match=r"2 of the 5 documents of collection 'toy' have no vector, e\.g\. "
                                              r"'d4', 'd5'"):
        import_embeddings(toy.collections, toy.vectors, "toy", path, encoder=StubEncoder())
    assert toy.vectors.embedding_counts() == {}


@pytest.mark.parametrize(
    "doc_ids, change, row, fragment",
    [
        (["d1", "d2", "d3", "d4", "zz"], None, 5, "expected a document of collection 'toy', found 'zz'"),
        (["d1", "d2", "d3", "d2", "d5"], None, 4, "found 'd2' again (first in row 2)"),
        (list(TEXTS), "zero", 3, "all zeros"),
        (list(TEXTS), "nan", 2, "finite numbers"),
        (list(TEXTS), "stale", 1, "made from another text"),
        (["d1", "", "d3", "d4", "d5"], None, 2, "non-empty id"),
    ],
)
def test_bad_rows_name_the_file_and_row(toy, tmp_path, doc_ids, change, row, fragment):
    v = StubEncoder().encode(list(TEXTS.values()))
    hashes = None
    if change == "zero":
        v[2] = 0
    if change == "nan":
        v[1, 5] = np.nan
    if change == "stale":
        hashes = ["0" * 64] + [toy.collections.document_text_hashes("toy")[d] for d in list(TEXTS)[1:]]
    path = _write(tmp_path / "e.parquet", doc_ids, v, text_hashes=hashes)
    with pytest.raises(InputFormatError) as e:
        import_embeddings(toy.collections, toy.vectors, "toy", path, encoder=StubEncoder())
    assert e.value.line == row and fragment in str(e.value) and str(path) in str(e.value)
    assert toy.vectors.embedding_counts() == {}


def test_the_model_named_must_be_the_query_encoders(toy, tmp_path):
    v = StubEncoder().encode(list(TEXTS.values()))
    other = _write(tmp_path / "o.parquet", list(TEXTS), v, model="e5-large@sha256:1234")
    with pytest.raises(ValidationError, match="made by 'e5-large@sha256:1234', the queries would be encoded by"):
        import_embeddings(toy.collections, toy.vectors, "toy", other, encoder=StubEncoder())
    by_name = _write(tmp_path / "n.parquet", list(TEXTS), v, model="stub")
    r = import_embeddings(toy.collections, toy.vectors, "toy", by_name, encoder=StubEncoder())
    assert r.n_added == 5 and "without its weights' hash" in r.notes[0]
    no_model = tmp_path / "m.parquet"
    pq.write_table(pa.table({"doc_id": list(TEXTS), "vector": [list(x) for x in v]}), no_model)
    with pytest.raises(InputFormatError, match="expected a column 'model' or 'model_key'"):
        import_embeddings(toy.collections, toy.vectors, "toy", no_model, encoder=StubEncoder())
