"""Vector indexes over a fixed embedding matrix: exact (brute force), faiss HNSW and faiss IVF-Flat.

One adapter, three kinds, the same metric: the rows of the matrix are
L2-normalised document vectors and a query's score for a document is their
inner product (cosine similarity), exactly as ``pooling.retrievers.dense``
scores them. faiss is imported inside ``build_index`` only, so importing this
module is cheap and works without faiss.

Kinds and their parameters (names as faiss spells them; every value that was
used, including the defaults, is recorded in ``VectorIndex.params``):

* ``exact``: every document is scored (numpy matrix product), top k cut by the
  canonical rule (score desc, doc_id desc; ``pooling.retrievers.base.top_k``).
  No parameters. This is the reference of ANN-recall.
* ``hnsw``: ``faiss.IndexHNSWFlat`` with ``METRIC_INNER_PRODUCT``. ``M``
  (graph degree, default 32), ``efConstruction`` (build beam, faiss default 40),
  ``efSearch`` (search beam, faiss default 16). faiss searches with a beam of
  ``max(efSearch, k)``, so an efSearch below the depth k asked for changes
  nothing; ``effective_params(k)`` says what was really used.
  Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search
  using Hierarchical Navigable Small World graphs", TPAMI 2020,
  doi:10.1109/TPAMI.2018.2889473.
* ``ivf``: ``faiss.IndexIVFFlat`` over an ``IndexFlatIP`` coarse quantizer
  (k-means, faiss's fixed seed), ``nlist`` inverted lists (default
  round(sqrt(n)), at most n // 39 so k-means has the 39 points per centroid
  faiss asks for; at least 1) and ``nprobe`` lists visited per query (faiss
  default 1, at most nlist). Vectors are stored whole (no quantization), so a
  returned score is the exact inner product; only the lists not probed are
  missed. Jégou, Douze & Schmid, "Product quantization for nearest neighbor
  search", TPAMI 2011, doi:10.1109/TPAMI.2010.57 (inverted file); faiss wiki
  "Faster search".

Eligibility (metadata filters, issue 11): ``search(..., eligible=masks)``
restricts each query to the documents whose mask entry is True, *inside* the
index (pre-filtering): the exact kind scores only eligible rows, hnsw and ivf
pass a ``faiss.IDSelectorBatch`` in ``SearchParameters`` so ineligible
documents are never returned and never take a place in the top k. Note that
HNSW still walks ineligible nodes while searching, so a very selective filter
can return fewer than k documents or miss eligible neighbours; that is the
index's real behaviour and is what ANN-recall measures. Post-filtering (search
deeper, then drop ineligible documents) needs no support here: search with a
larger k and filter the result.

Timing: ``search`` times every query on its own (one query per call, as a
service answers them) with ``time.perf_counter``, after one untimed warm-up search; ``SearchResult.latencies_ms``
holds one wall time per query, from which ``latency_summary`` gives p50, p95
and QPS (queries / summed latency). Build time and the serialised index size
are measured by ``build_index``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from pooling.retrievers.base import top_k
from workbench.errors import ValidationError

IndexKind = Literal["exact", "hnsw", "ivf"]
INDEX_KINDS: tuple[IndexKind, ...] = ("exact", "hnsw", "ivf")

PARAMS: dict[str, dict[str, int | None]] = {
    "exact": {},
    "hnsw": {"M": 32, "efConstruction": 40, "efSearch": 16},
    "ivf": {"nlist": None, "nprobe": 1},
}
"""kind -> parameter -> default (None: derived from the data, see the module docstring)."""

PARAM_MAX = 2**31 - 1
"""The largest parameter value: faiss holds every index parameter in a C ``int`` (efSearch=1e20
overflowed in ``SearchParametersHNSW_efSearch_set``, every topic of the run an error)."""

SEARCH_PARAMS: dict[str, tuple[str, ...]] = {"exact": (), "hnsw": ("efSearch",), "ivf": ("nprobe",)}
"""Parameters that change only the search, not the index (a sweep over them builds once)."""


def faiss_available() -> bool:
    """True when ``import faiss`` works (faiss-cpu, in the ``dense`` extra)."""
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as e:
        raise ValidationError(
            "approximate indexes (hnsw, ivf) need faiss, found it missing; "
            "pip install 'ir-workbench[dense]' (faiss-cpu) or use --index exact") from e
    return faiss


def resolve_params(kind: str, given: Mapping[str, int], n_vectors: int) -> dict[str, int]:
    """Every parameter of an index kind: the given ones, checked, and the defaults.

    Args:
        kind: ``exact`` | ``hnsw`` | ``ivf``.
        given: parameter name -> positive integer (names as faiss spells them:
            ``M``, ``efConstruction``, ``efSearch``, ``nlist``, ``nprobe``).
        n_vectors: number of documents indexed (for IVF's default nlist).

    Returns:
        name -> value for every parameter of the kind, sorted by name.

    Raises:
        UnknownNameError: an unknown kind.
        ValidationError: an unknown parameter for the kind, a value < 1 or > ``PARAM_MAX``,
            ``nlist`` > n_vectors, ``nprobe`` > ``nlist`` or ``M`` < 2.

    Example:
        >>> resolve_params("ivf", {"nprobe": 4}, 10_000)
        {'nlist': 100, 'nprobe': 4}
    """
    from workbench.errors import UnknownNameError

    if kind not in PARAMS:
        raise UnknownNameError("index kind", kind, sorted(PARAMS))
    known = PARAMS[kind]
    unknown = sorted(set(given) - set(known))
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise ValidationError(f"index {kind} has no parameter {unknown[0]!r}; its parameters: {allowed}")
    out: dict[str, int] = {}
    for name, default in known.items():
        value = given.get(name, default)
        if value is None:  # IVF nlist: about sqrt(n) lists, with >= 39 training points per list
            value = max(1, min(round(math.sqrt(max(n_vectors, 1))), n_vectors // 39))
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= PARAM_MAX:
            raise ValidationError(f"index {kind}: expected {name} to be an integer in [1, {PARAM_MAX}] (faiss "
                                  f"holds it in a C int), found {value!r}")
        out[name] = value
    if kind == "hnsw" and out["M"] < 2:
        raise ValidationError(f"index hnsw: expected M >= 2, found {out['M']}")
    if kind == "ivf":
        if n_vectors and out["nlist"] > n_vectors:
            raise ValidationError(f"index ivf: nlist {out['nlist']} exceeds the {n_vectors:,} documents; "
                                  "k-means needs at least one document per list")
        if out["nprobe"] > out["nlist"]:
            raise ValidationError(f"index ivf: nprobe {out['nprobe']} exceeds nlist {out['nlist']}; "
                                  f"at most nlist lists can be probed (nprobe={out['nlist']} is exhaustive)")
    return dict(sorted(out.items()))


def parse_param_values(items: Sequence[str]) -> dict[str, list[int]]:
    """``--param NAME=V[,V...]`` options -> name -> values (in the order given).

    Raises:
        ValidationError: an item without ``=``, an empty name, a repeated name or a
            value that is not an integer.

    Example:
        >>> parse_param_values(["efSearch=8,16", "M=32"])
        {'efSearch': [8, 16], 'M': [32]}
    """
    out: dict[str, list[int]] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or not name or not raw.strip():
            raise ValidationError(f"--param {item!r}: expected NAME=VALUE, e.g. efSearch=64")
        if name in out:
            raise ValidationError(f"--param {name} is given twice; list its values once, e.g. {name}=8,16,32")
        values: list[int] = []
        for part in raw.split(","):
            try:
                values.append(int(part.strip()))
            except ValueError:
                raise ValidationError(f"--param {item!r}: {part.strip()!r} is not an integer") from None
        out[name] = values
    return out


@dataclass(frozen=True)
class LatencySummary:
    """Per-query wall times summarised.

    Attributes:
        n_queries: queries timed.
        p50_ms / p95_ms: percentiles of the per-query latency (ms; numpy's
            linear interpolation). NaN when no query was timed.
        qps: queries per second = n_queries / (sum of latencies in s).
    """

    n_queries: int
    p50_ms: float
    p95_ms: float
    qps: float


def latency_summary(latencies_ms: Sequence[float]) -> LatencySummary:
    """p50, p95 and QPS of per-query latencies in milliseconds.

    Example:
        >>> latency_summary([1.0, 2.0, 3.0, 4.0]).qps
        400.0
    """
    a = np.asarray(list(latencies_ms), dtype=np.float64)
    if a.size == 0:
        return LatencySummary(0, math.nan, math.nan, math.nan)
    total_s = float(a.sum()) / 1000.0
    return LatencySummary(int(a.size), float(np.percentile(a, 50)), float(np.percentile(a, 95)),
                          a.size / total_s if total_s > 0 else math.inf)


@dataclass(frozen=True)
class SearchResult:
    """Top-k of each query.

    Attributes:
        hits: one dict doc_id -> score (inner product) per query, in query order;
            at most k entries, fewer when the index found fewer (or fewer are eligible).
        latencies_ms: one wall time per query (ms).
    """

    hits: list[dict[str, float]]
    latencies_ms: list[float] = field(default_factory=list)


@dataclass
class VectorIndex:
    """A built index over ``doc_ids`` (one row of ``matrix`` per document).

    Build one with ``build_index``; change a search-only parameter (``efSearch``,
    ``nprobe``) with ``with_search_params`` without rebuilding.

    Attributes:
        kind: ``exact`` | ``hnsw`` | ``ivf``.
        params: every parameter used (resolved defaults included).
        doc_ids: document ids by row.
        dim: vector dimensions.
        build_ms: wall time to build (train + add), ms; 0 for exact.
        index_bytes: size of the serialised faiss index (exact: the matrix, bytes).
        threads: OpenMP threads faiss used while building (None for exact).
        faiss_version: faiss's version ("" for exact).
    """

    kind: IndexKind
    params: dict[str, int]
    doc_ids: list[str]
    dim: int
    build_ms: float
    index_bytes: int
    threads: int | None
    faiss_version: str
    _matrix: np.ndarray
    _index: Any = None

    @property
    def n_vectors(self) -> int:
        """Number of indexed documents."""
        return len(self.doc_ids)

    def effective_params(self, k: int) -> dict[str, int]:
        """The parameters a search at depth k really uses (hnsw: efSearch = max(efSearch, k))."""
        p = dict(self.params)
        if self.kind == "hnsw":
            p["efSearch"] = max(p["efSearch"], k)
        return p

    def with_search_params(self, **params: int) -> VectorIndex:
        """The same built index with other search parameters (efSearch for hnsw, nprobe for ivf).

        Raises:
            ValidationError: a parameter that is not a search parameter of the kind, or a bad value.
        """
        bad = sorted(set(params) - set(SEARCH_PARAMS[self.kind]))
        if bad:
            allowed = ", ".join(SEARCH_PARAMS[self.kind]) or "none"
            raise ValidationError(f"index {self.kind}: {bad[0]} is not a search parameter (search parameters: "
                                  f"{allowed}); a build parameter needs a new index")
        merged = resolve_params(self.kind, {**self.params, **params}, self.n_vectors)
        return VectorIndex(self.kind, merged, self.doc_ids, self.dim, self.build_ms, self.index_bytes,
                           self.threads, self.faiss_version, self._matrix, self._index)

    def _faiss_params(self, sel: Any) -> Any:
        faiss = _faiss()
        if self.kind == "hnsw":
            return faiss.SearchParametersHNSW(efSearch=self.params["efSearch"], sel=sel)
        return faiss.SearchParametersIVF(nprobe=self.params["nprobe"], sel=sel)

    def search(
        self,
        queries: np.ndarray,
        k: int,
        *,
        eligible: Sequence[np.ndarray | None] | None = None,
    ) -> SearchResult:
        """Top k documents per query, each query timed on its own.

        Args:
            queries: float32 array (n_queries, dim), L2-normalised.
            k: documents per query, >= 1.
            eligible: None (every document), or one entry per query: None (no
                filter for that query) or a bool array of length ``n_vectors``
                (True = may be returned). Filtering happens inside the index.

        Returns:
            ``SearchResult`` with one hit dict and one latency per query.

        Raises:
            ValidationError: k < 1, a dimension mismatch, or an eligibility list or
                mask of the wrong length.
        """
        if k < 1:
            raise ValidationError(f"k (depth) must be >= 1, found {k}")
        q = np.ascontiguousarray(queries, dtype=np.float32)
        if q.ndim != 2 or (q.shape[0] and q.shape[1] != self.dim):
            raise ValidationError(f"query vectors have shape {q.shape}, the index holds {self.dim}-dimensional "
                                  "vectors; encode the queries with the documents' model")
        if eligible is not None and len(eligible) != q.shape[0]:
            raise ValidationError(f"expected one eligibility mask per query ({q.shape[0]}), found {len(eligible)}")
        hits: list[dict[str, float]] = []
        latencies: list[float] = []
        if q.shape[0]:  # one untimed warm-up search, so the first timed query pays no cold caches
            self._search_one(q[:1], k, None)
        for i in range(q.shape[0]):
            mask = None if eligible is None else eligible[i]
            if mask is not None:
                mask = np.asarray(mask, dtype=bool)
                if mask.shape != (self.n_vectors,):
                    raise ValidationError(f"eligibility mask of query {i} has shape {mask.shape}, "
                                          f"expected ({self.n_vectors},)")
            t0 = time.perf_counter()
            hits.append(self._search_one(q[i:i + 1], k, mask))
            latencies.append((time.perf_counter() - t0) * 1000.0)
        return SearchResult(hits, latencies)

    def _search_one(self, q: np.ndarray, k: int, mask: np.ndarray | None) -> dict[str, float]:
        if self.kind == "exact":
            scores = self._matrix @ q[0]  # one matrix-vector product (gemv)
            if mask is None:
                return top_k(scores, self.doc_ids, min(k, self.n_vectors))
            rows = np.flatnonzero(mask)
            if rows.size == 0:
                return {}
            ids = [self.doc_ids[j] for j in rows.tolist()]
            return top_k(scores[rows], ids, min(k, rows.size))
        params = None
        if mask is not None:
            faiss = _faiss()
            allowed = np.flatnonzero(mask).astype(np.int64)
            if allowed.size == 0:
                return {}
            params = self._faiss_params(faiss.IDSelectorBatch(allowed))
        else:
            params = self._faiss_params(None)
        distances, labels = self._index.search(q, min(k, self.n_vectors), params=params)
        return {self.doc_ids[int(j)]: float(s) for j, s in zip(labels[0], distances[0], strict=True) if j >= 0}


def build_index(
    matrix: np.ndarray,
    doc_ids: Sequence[str],
    kind: str,
    params: Mapping[str, int] | None = None,
    *,
    threads: int | None = None,
) -> VectorIndex:
    """Build an index of the given kind over L2-normalised document vectors.

    Args:
        matrix: float32 array (n_documents, dim), rows L2-normalised.
        doc_ids: one id per row.
        kind: ``exact`` | ``hnsw`` | ``ivf``.
        params: the kind's parameters (see the module docstring); missing ones
            take their defaults.
        threads: OpenMP threads for faiss while building (None: faiss's default,
            all cores). HNSW built with more than one thread can link the graph
            slightly differently from run to run; use 1 for a reproducible graph.

    Returns:
        The ``VectorIndex`` with its build time and size measured.

    Raises:
        ValidationError: no documents, ids and rows that differ in number, bad
            parameters (``resolve_params``), or faiss missing for hnsw/ivf.
    """
    m = np.ascontiguousarray(matrix, dtype=np.float32)
    ids = [str(d) for d in doc_ids]
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValidationError(f"expected a non-empty (documents, dim) matrix, found shape {m.shape}")
    if m.shape[0] != len(ids):
        raise ValidationError(f"{m.shape[0]:,} vectors but {len(ids):,} doc_ids; give one id per row")
    if threads is not None and threads < 1:
        raise ValidationError(f"threads must be >= 1, found {threads}")
    resolved = resolve_params(kind, dict(params or {}), m.shape[0])
    n, dim = m.shape
    if kind == "exact":
        return VectorIndex("exact", resolved, ids, dim, 0.0, int(m.nbytes), None, "", m)
    faiss = _faiss()
    before = faiss.omp_get_max_threads()
    if threads is not None:
        faiss.omp_set_num_threads(threads)
    try:
        used_threads = faiss.omp_get_max_threads()
        t0 = time.perf_counter()
        if kind == "hnsw":
            index = faiss.IndexHNSWFlat(dim, resolved["M"], faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = resolved["efConstruction"]
            index.add(m)
        else:
            quantizer = faiss.IndexFlatIP(dim)
            index = faiss.IndexIVFFlat(quantizer, dim, resolved["nlist"], faiss.METRIC_INNER_PRODUCT)
            index.train(m)  # k-means with faiss's fixed seed: the same lists every build
            index.add(m)
        build_ms = (time.perf_counter() - t0) * 1000.0
    finally:
        faiss.omp_set_num_threads(before)
    size = int(faiss.serialize_index(index).nbytes)
    return VectorIndex(kind, resolved, ids, dim, build_ms, size, used_threads,  # type: ignore[arg-type]
                       str(faiss.__version__), m, index)
