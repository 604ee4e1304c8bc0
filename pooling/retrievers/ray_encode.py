"""Encode documents on Ray (adapter): Ray Data ``map_batches`` over actors that each hold the model.

The wall past one machine in dense retrieval is encoding the corpus (15-25
documents a second on 2 CPU cores: ten million documents would take a week).
``encode_with_ray`` spreads it over a Ray cluster: the documents become a Ray
Dataset of (doc_id, text_hash, text) rows, ``map_batches`` runs them through
a pool of actors (``EmbedActor``), each loading the sentence-transformers
model once (the same ``SentenceTransformerEncoder`` as the in-process path,
so the vectors agree), on CPU or with one GPU per actor, and the workers write
the vectors to Parquet themselves (``Dataset.write_parquet``: a folder of files,
nothing funnelled through the driver). The folder has the layout
``workbench run dense --embeddings`` imports: ``doc_id, text_hash, vector,
model``, which checks and caches the vectors (``services.vectors.embeddings``).

Without an address a local Ray instance is started with ``num_workers`` CPUs
(and stopped afterwards); with ``address`` (``ray://host:10001`` or
``host:6379``, as ``ray.init`` takes it) the existing cluster is used; its
nodes need the workbench and the model folder at the same path (or a shared
file system for the output folder). The hub is never contacted: the actors
get ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1``.

Ray is the optional extra ``[scale]`` (``pip install 'ir-workbench[scale]'``);
it is imported only here, inside the functions.

Source:
    Ray Data, "Batch inference" (docs.ray.io/en/latest/data/batch_inference.html):
    callable-class UDFs in ``map_batches`` with ``concurrency`` actors.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.errors import ValidationError

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


class EmbedActor:
    """A Ray Data actor: loads the model once, then encodes batches of rows.

    Args:
        model_path: the local sentence-transformers folder (the same on every node).
        model_key: written to the ``model`` column of every row.
        batch_size: texts per forward pass.
        device: torch device of this actor (``cpu``, ``cuda``).
        threads: torch CPU threads per actor.
    """

    def __init__(self, model_path: str, model_key: str, batch_size: int, device: str, threads: int | None) -> None:
        for k, v in OFFLINE_ENV.items():
            os.environ.setdefault(k, v)
        from pooling.retrievers.dense import SentenceTransformerEncoder

        self.encoder = SentenceTransformerEncoder(model_path, device=device, batch_size=batch_size, threads=threads)
        self.model_key = model_key

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        """Rows in, rows out: ``doc_id``, ``text_hash``, ``vector`` (float32 list), ``model``."""
        vectors = self.encoder.encode([str(t) for t in batch["text"]])
        return {
            "doc_id": batch["doc_id"],
            "text_hash": batch["text_hash"],
            "vector": list(vectors.astype(np.float32)),
            "model": np.full(len(vectors), self.model_key, dtype=object),
        }


@dataclass(frozen=True)
class RayEncoding:
    """What ``encode_with_ray`` did.

    Attributes:
        folder: the Parquet folder written (one or more files).
        n_documents: rows encoded.
        n_workers: actors used.
        address: the cluster address, or ``"local"``.
        seconds: wall time of the Ray job (start-up included for a local instance).
    """

    folder: Path
    n_documents: int
    n_workers: int
    address: str
    seconds: float


def _ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise ValidationError("--engine ray needs Ray Data: pip install 'ir-workbench[scale]' (ray[data])") from None
    return ray


def encode_with_ray(
    rows: Sequence[tuple[str, str, str]],
    folder: str | Path,
    *,
    model_path: str | Path,
    model_key: str,
    address: str | None = None,
    num_workers: int | None = None,
    batch_size: int = 64,
    device: str = "cpu",
    threads_per_worker: int | None = 1,
    rows_per_block: int = 256,
) -> RayEncoding:
    """Encode (doc_id, text_hash, text) rows with Ray Data actors and write them to a Parquet folder.

    Args:
        rows: the documents to encode, each (doc_id, text_hash, text).
        folder: where the workers write the Parquet files (must not exist or be empty).
        model_path: local sentence-transformers folder, reachable at this path on every node.
        model_key: the model's cache key (``dense.model_key_for``), written with every vector.
        address: a Ray cluster (``ray.init(address=...)``); None = start a local instance.
        num_workers: actors (>= 1). Default: the local CPUs, or the cluster's CPUs / 1.
        batch_size: texts per forward pass inside an actor.
        device: ``cpu`` or a CUDA device: ``cuda...`` gives each actor one GPU.
        threads_per_worker: torch threads (and CPUs requested) per CPU actor.
        rows_per_block: rows per Ray Data block (smaller: more even spread over actors).

    Returns:
        ``RayEncoding``.

    Raises:
        ValidationError: Ray is not installed, bad numbers, a non-empty ``folder``.
    """
    if num_workers is not None and num_workers < 1:
        raise ValidationError(f"--num-workers must be >= 1, found {num_workers}")
    if threads_per_worker is not None and threads_per_worker < 1:
        raise ValidationError(f"threads per worker must be >= 1, found {threads_per_worker}")
    out = Path(folder)
    if out.exists() and any(out.iterdir()):
        raise ValidationError(f"{out}: expected a new or empty folder for the embeddings, found files in it")
    ray = _ray()
    import pyarrow as pa

    t0 = time.perf_counter()
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "warning",
                                  "runtime_env": {"env_vars": dict(OFFLINE_ENV)}}
        if address:
            ray.init(address=address, **kwargs)
        else:
            # One CPU slot per actor thread, plus one for Ray Data's own read and write tasks (an
            # actor pool holding every slot would leave them none).
            workers = num_workers or os.cpu_count() or 1
            ray.init(num_cpus=workers * (threads_per_worker or 1) + 1, object_store_memory=256 << 20, **kwargs)
            num_workers = workers
        started = True
    try:
        import logging

        ctx = ray.data.DataContext.get_current()  # the workbench reports progress itself (stderr lines)
        ctx.enable_progress_bars = False
        ctx.enable_auto_log_stats = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        gpu = device.startswith("cuda")
        if num_workers is None:
            total = ray.cluster_resources().get("GPU" if gpu else "CPU", 1)
            num_workers = max(1, int(total // (1 if gpu else (threads_per_worker or 1))))
        table = pa.table({"doc_id": [r[0] for r in rows], "text_hash": [r[1] for r in rows],
                          "text": [r[2] for r in rows]})
        n_blocks = max(num_workers, -(-len(rows) // rows_per_block))
        ds = ray.data.from_arrow(table).repartition(n_blocks)
        encoded = ds.map_batches(
            EmbedActor,
            fn_constructor_kwargs={"model_path": str(model_path), "model_key": model_key, "batch_size": batch_size,
                                   "device": device, "threads": None if gpu else threads_per_worker},
            batch_size=batch_size * 4, concurrency=num_workers, batch_format="numpy",
            num_cpus=0 if gpu else (threads_per_worker or 1), num_gpus=1 if gpu else 0,
        )
        out.mkdir(parents=True, exist_ok=True)
        encoded.write_parquet(str(out))
    finally:
        if started:
            ray.shutdown()
    return RayEncoding(out, len(rows), num_workers, address or "local", time.perf_counter() - t0)
