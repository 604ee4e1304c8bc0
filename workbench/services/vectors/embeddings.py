"""Document vectors made elsewhere or on Ray, checked and put in the embedding cache of ``run dense``.

Two ways to fill the store's embedding cache (``store.vectors.put_embeddings``,
keyed by model key and text hash) before ``make_dense_run`` ranks, so that the
run encodes only its queries:

* ``import_embeddings``: a Parquet file or folder (``doc_id, vector, model[,
  text_hash]``) computed anywhere (a Spark job, a GPU box, ``encode_on_ray``).
  Checked against the collection version and the model used for the queries:
  the model named, the dimension, finite non-zero vectors (others are
  normalised, and counted), every document covered exactly once, no document
  of another collection, and (with a ``text_hash`` column) the very texts of
  this version. Any failure is an ``InputFormatError`` or ``ValidationError``
  and the cache is left as it was.
* ``encode_on_ray``: the documents the cache lacks are encoded on Ray
  (``pooling.retrievers.ray_encode``), written to Parquet by the workers, and
  imported through ``import_embeddings`` (the same checks).

Source:
    ``pooling.retrievers.dense`` (cache keys, cosine = dot product of unit vectors).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from workbench.errors import InputFormatError, ValidationError

if TYPE_CHECKING:
    from pooling.retrievers.dense import Encoder
    from pooling.retrievers.ray_encode import RayEncoding
    from workbench.store.collections import Collections
    from workbench.store.vectors import Vectors

NORM_TOLERANCE = 1e-3
"""A vector whose L2 norm differs from 1 by more is normalised (and counted in ``n_normalised``)."""

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class EmbeddingsImport:
    """What ``import_embeddings`` checked and stored.

    Attributes:
        path: the file or folder.
        model_key: the cache key the vectors were stored under.
        dimension: vector length.
        n_vectors: rows read (= documents of the collection version).
        n_added: cache rows added (texts already cached under this model are kept).
        n_normalised: vectors whose norm was not 1 (within ``NORM_TOLERANCE``), normalised.
        norm_range: (smallest, largest) L2 norm as read.
        model_named: the model column's value.
        notes: what a user should know (a model named without its weights' hash).
    """

    path: str
    model_key: str
    dimension: int
    n_vectors: int
    n_added: int
    n_normalised: int
    norm_range: tuple[float, float]
    model_named: str
    notes: tuple[str, ...] = ()


def _row_error(path: str, row: int, problem: str) -> InputFormatError:
    from workbench.formats.parquet import row_error

    return row_error(path, row, problem)


def import_embeddings(
    collections: Collections, vectors: Vectors,
    collection: str,
    path: str | Path,
    *,
    encoder: Encoder,
    version: str | None = None,
) -> EmbeddingsImport:
    """Check document vectors from a Parquet file or folder and put them in the embedding cache.

    Args:
        collections: the store's collections.
        vectors: the store's vectors (its embedding cache).
        collection: the collection whose latest version (or ``version``) the vectors cover.
        path: Parquet file or folder (``formats.parquet.read_embeddings``).
        encoder: the query encoder of the run: its ``model_key`` must be the
            model named in the file (or its name, before ``@``), and its
            dimension that of the vectors.
        version: a collection version (default: the latest).

    Returns:
        ``EmbeddingsImport``.

    Raises:
        InputFormatError: a malformed file, a document twice, a document not in
            the collection version, a zero vector, a stale text hash (the row).
        ValidationError: another model, another dimension, documents of the
            version without a vector (how many, the first ids).
        UnknownNameError: unknown collection or version.
    """
    from workbench.formats.parquet import read_embeddings
    from workbench.formats.trec import shown_id

    emb = read_embeddings(path)
    p = str(path)
    key = encoder.model_key
    name = key.split("@", 1)[0]
    if len(emb.models) != 1:
        raise ValidationError(f"{p}: expected the vectors of one model in column 'model', found "
                              f"{len(emb.models)}: {', '.join(emb.models[:5]) or 'none'}")
    named = emb.models[0]
    notes: list[str] = []
    if named != key:
        if named != name:
            raise ValidationError(f"{p}: the vectors were made by {named!r}, the queries would be encoded by {key!r} "
                                  f"({name}); pass --model with the folder of {named!r}, or re-encode the documents")
        notes.append(f"the file names the model {named!r} without its weights' hash; the queries use {key} "
                     "(make sure the weights are the same)")
    dim = int(encoder.encode(["dimension check"]).shape[1])
    if emb.vectors.shape[1] != dim:
        raise ValidationError(f"{p}: expected vectors of {dim} dimensions (the model {name}), found "
                              f"{emb.vectors.shape[1]}; these vectors come from another model or were cut")
    hashes = collections.document_text_hashes(collection, version)
    position: dict[str, int] = {}
    for row, d in enumerate(emb.doc_ids, 1):
        if d in position:
            raise _row_error(p, row, f"expected each document once, found {shown_id(d)} again (first in row "
                                     f"{position[d] + 1}). Keep one vector per document.")
        if d not in hashes:
            raise _row_error(p, row, f"expected a document of collection {collection!r}, found {shown_id(d)}. "
                                     "Check that the vectors belong to this collection.")
        position[d] = row - 1
    missing = [d for d in hashes if d not in position]
    if missing:
        shown = ", ".join(shown_id(d) for d in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise ValidationError(f"{p}: {len(missing):,} of the {len(hashes):,} documents of collection {collection!r} "
                              f"have no vector, e.g. {shown}; embed them too (or run without --embeddings to encode "
                              "what the cache lacks)")
    if emb.text_hashes is not None:
        for row, (d, h) in enumerate(zip(emb.doc_ids, emb.text_hashes, strict=True), 1):
            if h is not None and h != hashes[d]:
                raise _row_error(p, row, f"the vector of {shown_id(d)} was made from another text (text_hash "
                                         f"{str(h)[:12]}, the collection version has {hashes[d][:12]}); re-encode it")
    norms = np.linalg.norm(emb.vectors.astype(np.float64), axis=1)
    zero = np.flatnonzero(norms == 0)
    if len(zero):
        raise _row_error(p, int(zero[0]) + 1, f"the vector of {shown_id(emb.doc_ids[int(zero[0])])} is all zeros; "
                                              "it has no direction to compare by cosine. Re-encode it.")
    off = np.abs(norms - 1.0) > NORM_TOLERANCE
    unit = (emb.vectors / norms[:, None]).astype(np.float32)
    added = vectors.put_embeddings(key, {hashes[d]: unit[i] for i, d in enumerate(emb.doc_ids)})
    return EmbeddingsImport(p, key, dim, len(emb.doc_ids), added, int(off.sum()),
                            (float(norms.min()), float(norms.max())), named, tuple(notes))


@dataclass(frozen=True)
class RayOutcome:
    """``encode_on_ray``: the Ray job (None when the cache already held every vector) and the import."""

    encoding: RayEncoding | None
    imported: EmbeddingsImport | None
    n_cached: int


def encode_on_ray(
    collections: Collections, vectors: Vectors,
    collection: str,
    *,
    model_path: str | Path | None = None,
    model_dir: str | Path | None = None,
    address: str | None = None,
    num_workers: int | None = None,
    batch_size: int = 64,
    device: str = "cpu",
    out: str | Path | None = None,
    say: Say = _quiet,
) -> RayOutcome:
    """Encode, on Ray, the documents of a collection's latest version the cache has no vector for.

    The vectors are written to Parquet by the Ray workers (``out``, a folder;
    a temporary one, removed afterwards, when None) and imported with
    ``import_embeddings`` (same checks), so ``make_dense_run`` then encodes
    only the queries.

    Raises:
        ValidationError: Ray missing, bad options, an ``out`` folder with files.
        As ``import_embeddings``.
    """
    from pooling.retrievers.dense import SentenceTransformerEncoder
    from pooling.retrievers.ray_encode import encode_with_ray

    encoder = SentenceTransformerEncoder(model_path, model_dir=model_dir, device=device, batch_size=batch_size)
    key = encoder.model_key
    hashes = collections.document_text_hashes(collection)
    cached = vectors.get_embeddings(key, list(set(hashes.values())))
    docs = collections.get_documents(collection)
    todo: dict[str, tuple[str, str, str]] = {}
    for d, h in hashes.items():
        if h not in cached and h not in todo:
            todo[h] = (d, h, docs[d].content)  # the text the in-process path embeds (``_run_retriever``)
    if not todo:
        say(f"embeddings: all {len(hashes):,} documents already cached ({key}); nothing to encode on Ray")
        return RayOutcome(None, None, len(hashes))
    folder = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="workbench-ray-"))
    try:
        say(f"[starting] Ray: encoding {len(todo):,} documents ({len(hashes) - len(todo):,} cached) with {key} "
            f"on {address or 'a local Ray instance'}")
        enc = encode_with_ray(list(todo.values()), folder / "vectors" if out is None else folder,
                              model_path=encoder.path, model_key=key, address=address, num_workers=num_workers,
                              batch_size=batch_size, device=device)
        say(f"[finished] Ray: {enc.n_documents:,} documents on {enc.n_workers} worker(s) [elapsed] "
            f"{enc.seconds:.1f} s [{enc.n_documents / max(enc.seconds, 1e-9):.1f} documents/s]; Parquet in "
            f"{enc.folder}")
        imported = _import_partial(vectors, collection, enc.folder, encoder, set(todo))
    finally:
        if out is None:
            shutil.rmtree(folder, ignore_errors=True)
    return RayOutcome(enc, imported, len(hashes) - len(todo))


def _import_partial(vectors: Vectors, collection: str, folder: Path, encoder: Encoder,
                    wanted: set[str]) -> EmbeddingsImport:
    """Import the Ray folder, which covers only the texts that were missing from the cache."""
    from workbench.formats.parquet import read_embeddings

    emb = read_embeddings(folder)
    got = set(emb.text_hashes or [])
    if got != wanted:
        raise ValidationError(f"{folder}: the Ray job returned vectors for {len(got):,} texts, expected "
                              f"{len(wanted):,}; run it again")
    norms = np.linalg.norm(emb.vectors.astype(np.float64), axis=1)
    if emb.models != (encoder.model_key,) or (norms == 0).any():
        raise ValidationError(f"{folder}: the Ray job returned vectors of {emb.models} with {int((norms == 0).sum())} "
                              "zero vector(s); run it again")
    unit = (emb.vectors / norms[:, None]).astype(np.float32)
    assert emb.text_hashes is not None
    added = vectors.put_embeddings(encoder.model_key, dict(zip(emb.text_hashes, unit, strict=True)))
    return EmbeddingsImport(str(folder), encoder.model_key, int(emb.vectors.shape[1]), len(emb.doc_ids), added,
                            int((np.abs(norms - 1.0) > NORM_TOLERANCE).sum()), (float(norms.min()), float(norms.max())),
                            encoder.model_key)
