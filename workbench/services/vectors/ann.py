"""Approximate vector indexes: index stats with the run, ANN-recall against an exact reference, the sweep.

* index stats with the run: ``services.vectors.index_stats`` (stored by
  ``make_dense_run`` beside a dense run).
* ``exact_reference``: the exact run of the same embeddings (model key),
  metric and collection version, at least a given depth deep: an existing
  stored one, or one built now and stored (``<run>.exact``), so ANN-recall is
  always computed against a run anyone can inspect.
* ``ann_recall_of_run``: ANN-recall@k (``workbench.scoring.ann_recall``) of a
  stored approximate run, computed once and stored; ``ann_recall_at`` does it
  for several k against one reference deep enough for the largest.
* ``ann_sweep``: one index kind, a grid of parameters; per setting the run is
  stored and its ANN-recall@k, semantic R@k (qrels) of it and of the exact run,
  and its latency are tabulated, with the diagnosis of the design note on
  vector-search recall (shared/seeds/004).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import UnknownNameError, ValidationError
from workbench.scoring.ann_recall import AnnRecall, SweepDiagnosis, ann_recall, diagnose_sweep
from workbench.services.vectors.index_stats import index_stats_writer
from workbench.store.ann import AnnIndexStats

if TYPE_CHECKING:
    from pooling.retrievers.dense import DenseRetriever, Encoder
    from workbench.services.evaluation.refs import QrelsRef
    from workbench.store import Store

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


_SEARCH_ONLY = frozenset({"top_k", "index", "index_params", "batch_size", "device"})
"""Run parameters that say how the top k was searched (or change no score), not what was searched."""


def _what_was_searched(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters an exact reference must share with a run: model key, similarity and any others
    (e.g. a filter), everything but how the top k was found."""
    out = {k: v for k, v in params.items() if k not in _SEARCH_ONLY}
    out.setdefault("similarity", "cosine")
    return out


def exact_reference(
    store: Store,
    run_name: str,
    min_depth: int,
    *,
    model_path: str | Path | None = None,
    encoder: Encoder | None = None,
    say: Say = _quiet,
) -> str:
    """The stored exact dense run to measure ``run_name`` against, built now when there is none.

    A reference has the same model key (same model files, so the same cached
    vectors), the same similarity, the same other settings (e.g. a filter;
    everything but how the top k was searched) and the same collection version
    as the run, ``top_k: exact``, and depth >= ``min_depth``. The oldest such run
    with measured latency is used (else the oldest);
    otherwise one is produced at depth ``min_depth`` and stored as
    ``<run>.exact`` (``<run>.exact<depth>`` if that name is taken).

    Args:
        store: the workbench store.
        run_name: a stored dense run.
        min_depth: the depth the reference needs (k + 1 for ANN-recall@k).
        model_path: the model to encode the queries with when a reference must
            be built (None: the packaged all-MiniLM-L6-v2); its key must equal the run's.
        encoder: an encoder instead of a model (tests).
        say: progress lines.

    Returns:
        The reference run's name.

    Raises:
        UnknownNameError: no such run.
        ValidationError: the run is not a dense run, or the model given is not the run's model.
    """
    from workbench.services.runs.pooling import DenseRunRequest, make_dense_run

    info = store.runs.get_run_info(run_name)
    params = dict(info.params)
    if info.kind != "dense" or "model" not in params:
        raise ValidationError(f"run {run_name!r} is a {info.kind} run; ANN-recall compares dense runs of one model")
    model, searched = str(params["model"]), _what_was_searched(params)
    candidates = [name for name, p, depth in store.runs.dense_runs(info.collection_version)
                  if p.get("top_k") == "exact" and _what_was_searched(p) == searched and depth >= min_depth]
    if candidates:  # prefer one whose latency was measured (reports put it beside the index's)
        return next((c for c in candidates if store.vectors.get_index_stats(c) is not None), candidates[0])
    if set(searched) - {"model", "similarity"}:
        extra = ", ".join(sorted(set(searched) - {"model", "similarity"}))
        raise ValidationError(
            f"run {run_name!r} was searched with {extra}; no stored exact run shares them, and an exact reference "
            "is built only for plain dense runs: produce one with the same settings and pass --reference")
    if encoder is None:
        from pooling.retrievers.dense import SentenceTransformerEncoder

        encoder = SentenceTransformerEncoder(model_path)
    if encoder.model_key != model:
        raise ValidationError(
            f"run {run_name!r} was produced with model {model}, the model given is {encoder.model_key}; "
            "pass --model with the run's model folder to build its exact reference")
    name = f"{run_name}.exact"
    if store.runs.has_run(name):
        name = f"{run_name}.exact{min_depth}"
    say(f"building the exact reference {name} (brute force, depth {min_depth}) for {run_name}")
    request = DenseRunRequest(info.collection, name, depth=min_depth,
                              description=f"exact reference of {run_name} (ANN-recall)")
    make_dense_run(store, request, encoder=encoder, say=say)
    return name


def ann_recall_of_run(
    store: Store,
    run_name: str,
    k: int,
    *,
    reference: str | None = None,
    model_path: str | Path | None = None,
    encoder: Encoder | None = None,
    say: Say = _quiet,
) -> tuple[str, AnnRecall]:
    """ANN-recall@k of a stored dense run against its exact reference; computed once, then read back.

    Args:
        store: the workbench store.
        run_name: the approximate (or any dense) run.
        k: cutoff, >= 1; at most the run's depth.
        reference: the exact run to use (default: ``exact_reference``, built on demand).
        model_path, encoder: the model to build a reference with (see ``exact_reference``).
        say: progress lines.

    Returns:
        (reference run name, ``AnnRecall``).

    Raises:
        UnknownNameError: an unknown run.
        ValidationError: k < 1 or deeper than the run, a reference that is not an exact dense
            run of the same model, similarity and collection version, or shallower than k + 1.
    """
    info = store.runs.get_run_info(run_name)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValidationError(f"expected k >= 1 for ANN-recall@k, found {k!r}")
    if k > info.depth:
        raise ValidationError(f"run {run_name!r} is {info.depth} deep; ANN-recall@{k} needs its top {k}")
    if reference is None:
        reference = exact_reference(store, run_name, k + 1, model_path=model_path, encoder=encoder, say=say)
    ref = store.runs.get_run_info(reference)
    p, rp = dict(info.params), dict(ref.params)
    if (ref.kind != "dense" or rp.get("top_k") != "exact" or _what_was_searched(rp) != _what_was_searched(p)
            or ref.collection_version != info.collection_version):
        raise ValidationError(
            f"run {reference!r} is not an exact dense run of the same model, similarity, settings and collection "
            f"version as {run_name!r}; ANN-recall needs the exact neighbours of the same embeddings and metric")
    stored = store.vectors.get_ann_recall(run_name, reference, k)
    if stored is not None:
        return reference, stored
    result = ann_recall(store.runs.get_run(run_name), store.runs.get_run(reference), k, exact_depth=ref.depth)
    store.vectors.record_ann_recall(run_name, reference, result)
    return reference, result


def ann_recall_at(
    store: Store,
    run_name: str,
    ks: Sequence[int],
    *,
    reference: str | None = None,
    model_path: str | Path | None = None,
    encoder: Encoder | None = None,
    say: Say = _quiet,
) -> tuple[str, list[AnnRecall]]:
    """ANN-recall@k of a stored dense run for several k, all against one exact reference.

    The reference is chosen (or built) once, for the largest k: at least
    ``max(ks) + 1`` deep, so it serves every smaller k too and the figures of
    one report share their denominator's run.

    Args:
        store: the workbench store.
        run_name: the approximate (or any dense) run.
        ks: cutoffs, each >= 1 and at most the run's depth; repeats are dropped.
        reference: the exact run to use (default: ``exact_reference`` at depth
            ``max(ks) + 1``, built on demand).
        model_path, encoder: the model to build a reference with (see ``exact_reference``).
        say: progress lines.

    Returns:
        (reference run name, one ``AnnRecall`` per distinct k, ascending).

    Raises:
        UnknownNameError: an unknown run.
        ValidationError: no k, a k < 1 or deeper than the run, or a reference
            that is not an exact dense run of the run's embeddings or is
            shallower than ``max(ks) + 1``.

    Example:
        ``ann_recall_at(store, "dense-hnsw", [10, 100])`` -> ("dense-hnsw.exact", [ANN-recall@10, ANN-recall@100])
    """
    wanted = sorted(set(ks))
    if not wanted:
        raise ValidationError("expected at least one k for ANN-recall@k, e.g. --k 10")
    for k in wanted:  # every k checked against the run before a reference is built
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValidationError(f"expected k >= 1 for ANN-recall@k, found {k!r}")
    depth = store.runs.get_run_info(run_name).depth
    if wanted[-1] > depth:
        raise ValidationError(f"run {run_name!r} is {depth} deep; ANN-recall@{wanted[-1]} needs its top {wanted[-1]}")
    if reference is None:
        reference = exact_reference(store, run_name, wanted[-1] + 1, model_path=model_path, encoder=encoder, say=say)
    return reference, [ann_recall_of_run(store, run_name, k, reference=reference)[1] for k in wanted]


@dataclass(frozen=True)
class SweepRow:
    """One setting of an ANN sweep.

    Attributes:
        run: the stored run of this setting.
        params: every index parameter used (defaults resolved).
        effective: what the search really used at this depth (hnsw: efSearch = max(efSearch, depth)).
        ann: ANN-recall@k against the exact reference.
        recall: semantic R@k (macro, qrels) of this run.
        stats: build time, size, latency p50/p95, QPS.
        reused: the run was already stored with these parameters (its stored numbers are shown).
    """

    run: str
    params: dict[str, int]
    effective: dict[str, int]
    ann: AnnRecall
    recall: float
    stats: AnnIndexStats | None
    reused: bool


@dataclass(frozen=True)
class AnnSweep:
    """An ANN sweep's result.

    Attributes:
        collection / collection_version: what was searched.
        model: the model key.
        index: the index kind.
        k: the cutoff of ANN-recall@k and R@k; depth: the runs' depth.
        qrels: the qrels version R@k was scored against.
        reference: the exact run; exact_recall: its R@k (macro); exact_stats: its latency.
        rows: one ``SweepRow`` per setting, in grid order.
        n_topics: topics R@k was averaged over.
        diagnosis: the sweep's reading (``scoring.ann_recall.diagnose_sweep``).
    """

    collection: str
    collection_version: str
    model: str
    index: str
    k: int
    depth: int
    qrels: QrelsRef
    reference: str
    exact_recall: float
    exact_ceiling: float
    exact_stats: AnnIndexStats | None
    rows: tuple[SweepRow, ...]
    n_topics: int
    diagnosis: SweepDiagnosis


def _store_prepared_run(store: Store, retriever: DenseRetriever, collection: str, name: str, depth: int,
                        description: str, say: Say) -> None:
    """Retrieve with an already indexed retriever and store the run with its index stats."""
    from workbench.services.runs.pooling import _run_retriever

    def no_index(_docs: dict[str, str], _version: str) -> None:
        pass

    def record(run_name: str, queries: Mapping[str, str]) -> tuple[dict[str, float], Callable[[Any], None] | None]:
        latencies = {t: retriever.latency_by_query[q] for t, q in queries.items() if q in retriever.latency_by_query}
        return latencies, index_stats_writer(run_name, retriever, latencies)

    _run_retriever(store, retriever, collection, name, "dense", depth, description, say, no_index, record)


def _setting_name(prefix: str, index: str, params: Mapping[str, int]) -> str:
    return f"{prefix}-{index}-" + "-".join(f"{k}{v}" for k, v in sorted(params.items()))


def ann_sweep(
    store: Store,
    collection: str,
    index: str,
    grid: Mapping[str, Sequence[int]],
    qrels_ref: str,
    *,
    k: int = 10,
    depth: int | None = None,
    name_prefix: str = "sweep",
    model_path: str | Path | None = None,
    encoder: Encoder | None = None,
    threads: int | None = None,
    rel: int = 1,
    missing: str = "fail",
    ann_target: float = 0.95,
    say: Say = _quiet,
) -> AnnSweep:
    """Build one index kind over the cached embeddings for each setting of a grid and measure it.

    Every setting is stored as a run named ``<prefix>-<index>-<param><value>...``
    with its index stats (an existing run of that name with the same parameters
    is reused, with its stored numbers); the exact reference is found or built
    (``exact_reference``) at depth ``depth + 1``.

    Args:
        store: the workbench store.
        collection: the collection (its latest version).
        index: ``hnsw`` or ``ivf``.
        grid: parameter -> values (e.g. ``{"efSearch": [8, 16, 32]}``); the
            product of all lists is swept, other parameters take their defaults.
        qrels_ref: the qrels version (or file) semantic R@k is scored against.
        k: cutoff of ANN-recall@k and R@k (>= 1).
        depth: the runs' depth (default k). HNSW searches with max(efSearch, depth).
        name_prefix: prefix of the stored runs' names.
        model_path, encoder: the model (default: the packaged all-MiniLM-L6-v2).
        threads: faiss OpenMP threads while building.
        rel: inclusive minimum grade of a relevant document.
        missing: ``fail`` | ``zero`` | ``exclude`` for qrels topics a run lacks.
        ann_target: the ANN-recall the diagnosis calls "holds" (inclusive).
        say: progress lines.

    Returns:
        The ``AnnSweep``.

    Raises:
        UnknownNameError: unknown collection, qrels version or index kind.
        ValidationError: an empty grid or value list, bad parameters, ``index`` exact.
        MissingTopicsError: ``missing="fail"`` and a run lacks a qrels topic.
    """
    from pooling.retrievers.ann import PARAMS, SEARCH_PARAMS, resolve_params
    from pooling.retrievers.dense import DenseRetriever, SentenceTransformerEncoder
    from workbench.scoring.evaluate import Evaluator
    from workbench.scoring.measures import R
    from workbench.services.evaluation.load import load_qrels, load_run
    from workbench.services.runs.pooling import check_depth

    if index not in PARAMS or index == "exact":
        if index == "exact":
            raise ValidationError("ann-sweep sweeps an approximate index: --index hnsw or --index ivf")
        raise UnknownNameError("index kind", index, sorted(k_ for k_ in PARAMS if k_ != "exact"))
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValidationError(f"expected k >= 1, found {k!r}")
    depth = k if depth is None else depth
    check_depth(depth)
    if depth < k:
        raise ValidationError(f"--depth {depth} is shallower than k = {k}")
    if any(not values for values in grid.values()):
        raise ValidationError("every --param needs at least one value, e.g. efSearch=8,16,32")
    version = store.collections.latest_collection_version(collection)
    n_docs = len(store.collections.document_text_hashes(collection, version))
    reference: str | None = None
    names = sorted(grid)
    settings = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(grid[n] for n in names))]
    for s in settings:  # every setting checked before any work
        resolve_params(index, s, n_docs)
    enc = encoder or SentenceTransformerEncoder(model_path)
    open_store = lambda: store  # noqa: E731
    qref, qcols = load_qrels(qrels_ref, open_store)
    evaluator = Evaluator(qcols, [R(k)], rel=rel, missing=missing)
    rows: list[SweepRow] = []
    say(f"[starting] ann-sweep {index} over {collection}: {len(settings)} setting(s), k {k}, depth {depth}")
    built: dict[str, DenseRetriever] = {}  # build parameters -> retriever with that index (built once)
    search_names = set(SEARCH_PARAMS[index])
    for s in settings:
        used = resolve_params(index, s, n_docs)
        name = _setting_name(name_prefix, index, used)
        reused = False
        if store.runs.has_run(name):
            info = store.runs.get_run_info(name)
            p = dict(info.params)
            if (p.get("index") != index or p.get("index_params") != used or p.get("model") != enc.model_key
                    or info.depth != depth or info.collection_version != version):
                raise ValidationError(f"run {name!r} exists with other settings; pass another --name-prefix")
            reused = True
            say(f"{name}: already stored with these settings; its stored numbers are shown")
        else:
            build_key = json.dumps({n: v for n, v in used.items() if n not in search_names}, sort_keys=True)
            if build_key not in built:
                r = DenseRetriever(encoder=enc, cache=store.vectors, index=index, index_params=used, index_threads=threads)
                r.index({d: doc.content for d, doc in store.collections.get_documents(collection, version).items()},
                        text_hashes=store.collections.document_text_hashes(collection, version))
                vi = r.vector_index
                assert vi is not None
                say(f"index {index} {vi.params}: built in {vi.build_ms / 1000:.1f} s, {vi.index_bytes:,} bytes")
                built[build_key] = r
            r = built[build_key]
            assert r.vector_index is not None
            r.vector_index = r.vector_index.with_search_params(**{n: used[n] for n in search_names})
            r.latency_by_query = {}
            _store_prepared_run(store, r, collection, name, depth, f"ann-sweep {index} {used}", say)
        if reference is None:
            reference = exact_reference(store, name, depth + 1, encoder=enc, say=say)
        _, ann = ann_recall_of_run(store, name, k, reference=reference)
        ref_, rr = load_run(name, open_store)
        e = evaluator.evaluate(rr, run_name=name, failed_topics=ref_.failed_topics)
        eff = dict(used)
        if index == "hnsw":
            eff["efSearch"] = max(used["efSearch"], depth)
        rows.append(SweepRow(name, used, eff, ann, e.aggregates[R(k)].macro, store.vectors.get_index_stats(name), reused))
    assert reference is not None  # settings is non-empty
    ref_, rr = load_run(reference, open_store)
    e = evaluator.evaluate(rr, run_name=reference, failed_topics=ref_.failed_topics)
    agg = e.aggregates[R(k)]
    varying = [n for n in names if len(set(grid[n])) > 1] or names
    # The verdict reads ANN-recall with tie-order swaps counted as found: a swap is not an index error.
    diagnosis = diagnose_sweep([(" ".join(f"{n}={r.params[n]}" for n in varying), r.ann.macro_with_ties, r.recall)
                                for r in rows],
                               agg.macro, agg.ceiling if agg.ceiling is not None else 1.0, target=ann_target)
    say(f"[finished] ann-sweep {index}: {len(rows)} setting(s) against {reference}")
    return AnnSweep(collection, version, enc.model_key, index, k, depth, qref, reference, agg.macro,
                    agg.ceiling if agg.ceiling is not None else float("nan"), store.vectors.get_index_stats(reference),
                    tuple(rows), agg.n_topics, diagnosis)
