"""``run dense --engine ray``: Ray Data actors give the in-process vectors (cosine >= 0.9999 each) and
the same run; their Parquet output fills the embedding cache and is importable with ``--embeddings``.

Ray starts once for the module (a local instance, 3 CPU slots: 2 actors and Ray Data's own tasks) and
stops at the end. The model is a tiny random BERT built offline from the bundled MiniLM tokenizer,
loaded by the same sentence-transformers code as any model: what is tested is the path, not the model.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.services.runs.pooling import DenseRunRequest, make_dense_run
from workbench.services.vectors.embeddings import encode_on_ray, import_embeddings
from workbench.types import Document, Topic

ray = pytest.importorskip("ray")
pytest.importorskip("sentence_transformers")

WORDS = ("shock wave boundary layer heat transfer wing flutter nozzle flow supersonic laminar turbulent "
         "pressure drag lift cylinder plate jet vortex").split()


def _texts(n: int) -> dict[str, str]:
    rng = np.random.default_rng(7)
    return {f"d{i}": " ".join(rng.choice(WORDS, size=int(rng.integers(3, 12)))) + f" number {i}" for i in range(n)}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A sentence-transformers folder: BERT with 1 layer of width 32, random weights (seeded), MiniLM's tokenizer."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    from pooling.retrievers.dense import default_model_path

    root = tmp_path_factory.mktemp("tiny")
    tok = AutoTokenizer.from_pretrained(str(default_model_path(root / "minilm")))
    torch.manual_seed(0)
    bert = BertModel(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=64, max_position_embeddings=64))
    bert.save_pretrained(root / "hf")
    tok.save_pretrained(root / "hf")
    st = SentenceTransformer(modules=[models.Transformer(str(root / "hf"), max_seq_length=64),
                                      models.Pooling(32, "mean"), models.Normalize()])
    st.save(str(root / "tiny-st"))
    return root / "tiny-st"


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False, logging_level="warning",
             object_store_memory=128 << 20,
             runtime_env={"env_vars": {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}})
    yield
    ray.shutdown()


def _collection(store, texts):
    store.collections.ingest_collection("toy", [Document(d, "", t) for d, t in texts.items()],
                            [Topic("1", "shock wave in a nozzle"), Topic("2", "heat transfer to a plate"),
                             Topic("3", "wing flutter")])


def test_ray_gives_the_in_process_vectors_and_run_and_an_importable_folder(store, tmp_path, tiny_model, local_ray):
    from pooling.retrievers.dense import SentenceTransformerEncoder
    from workbench.store import Store

    texts = _texts(200)
    _collection(store, texts)
    out = tmp_path / "vectors"
    outcome = encode_on_ray(store.collections, store.vectors, "toy", model_path=tiny_model, num_workers=2, batch_size=16, out=out)
    assert outcome.encoding is not None and outcome.encoding.n_documents == 200 and outcome.encoding.n_workers == 2
    assert outcome.imported is not None and outcome.imported.n_added == 200
    ray_run = make_dense_run(store, DenseRunRequest("toy", "dense-ray", depth=20, model_path=tiny_model))
    assert ray_run.n_encoded == 0                                    # every document came from the cache

    local = Store(tmp_path / "local.duckdb", client="pytest")
    _collection(local, texts)
    local_run = make_dense_run(local, DenseRunRequest("toy", "dense-local", depth=20, model_path=tiny_model))
    assert local_run.n_encoded > 0
    key = SentenceTransformerEncoder(tiny_model).model_key
    hashes = sorted(set(store.collections.document_text_hashes("toy").values()))
    a, b = store.vectors.get_embeddings(key, hashes), local.vectors.get_embeddings(key, hashes)
    cos = [float(a[h] @ b[h] / np.linalg.norm(a[h]) / np.linalg.norm(b[h])) for h in hashes]
    assert min(cos) >= 0.9999
    ra, rb = store.runs.get_run("dense-ray"), local.runs.get_run("dense-local")
    assert ra.keys() == rb.keys() and all(list(ra[t]) == list(rb[t]) for t in ra)
    assert all(ra[t][d] == pytest.approx(rb[t][d], abs=1e-5) for t in ra for d in ra[t])

    # The workers' Parquet folder is the --embeddings layout: a third store imports it as it is.
    third = Store(tmp_path / "third.duckdb", client="pytest")
    _collection(third, texts)
    imported = import_embeddings(third.collections, third.vectors, "toy", out, encoder=SentenceTransformerEncoder(tiny_model))
    assert imported.n_vectors == 200 and imported.n_normalised == 0 and imported.model_named == key
    again = encode_on_ray(third.collections, third.vectors, "toy", model_path=tiny_model, num_workers=2)
    assert again.encoding is None and again.n_cached == 200             # nothing left to encode: no Ray job
